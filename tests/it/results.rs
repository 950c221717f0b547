//! The published results in `results/`: checksums, table directories that
//! verify, and figures that agree with the verified data.

use chomp_tables::read::verify;
use chomp_tables::store::sha256_hex;

use crate::common::data;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// (tiles -> (positions, losses)) from a CSV whose first three columns are those.
fn counts(text: &str) -> HashMap<u32, (u64, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("tiles"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), (f[1].parse().unwrap(), f[2].parse().unwrap()))
        })
        .collect()
}

#[test]
fn every_published_file_matches_its_checksum() {
    let text = std::fs::read_to_string(results().join("CHECKSUMS")).unwrap();
    let mut listed = 0;
    for line in text.lines() {
        let (sum, name) = line.split_once("  ").unwrap();
        let bytes = std::fs::read(results().join(name.trim_start_matches("./"))).unwrap();
        assert_eq!(sha256_hex(&bytes), sum, "{name}");
        listed += 1;
    }
    assert!(listed > 200, "CHECKSUMS lists every published file");
}

/// Every published level to 130 tiles against Timothy Herchen's
/// independent computation, whose losses are OEIS A112470 (b-file to 129).
#[test]
fn published_summary_agrees_with_herchens_counts_and_oeis_a112470() {
    let ours = counts(&std::fs::read_to_string(results().join("summary.csv")).unwrap());
    let theirs = counts(&data("a112470-herchen-1-130.csv"));
    assert_eq!(theirs.len(), 130);
    for n in 1..=130 {
        assert_eq!(ours[&n], theirs[&n], "level {n}: ours (positions, losses) against Herchen's");
    }
}

#[test]
fn published_summary_agrees_with_verified_figures() {
    let ours = counts(&std::fs::read_to_string(results().join("summary.csv")).unwrap());
    for name in ["losses-by-tiles-1-40.csv", "reference-table-20-50.csv"] {
        for (tiles, want) in counts(&data(name)) {
            assert_eq!(ours[&tiles], want, "{name} at {tiles} tiles");
        }
    }
    assert!(ours.len() >= 100, "losses to at least 100 tiles");
    // Every level's positions are p(n), by Euler's recurrence over partitions
    // into parts of each size (independent of the engine's ranking).
    let top = *ours.keys().max().unwrap() as usize;
    let mut p = vec![0u64; top + 1];
    p[0] = 1;
    for part in 1..=top {
        for n in part..=top {
            p[n] += p[n - part];
        }
    }
    for n in 1..=top as u32 {
        let (positions, losses) = ours[&n];
        assert_eq!(positions, p[n as usize], "positions of level {n}");
        // The conjectured ratio keeps every level's losses near 0.28·p/ln p.
        let ratio = losses as f64 * (positions as f64).ln() / positions as f64;
        assert!(n < 50 || (0.27..0.30).contains(&ratio), "level {n}: ratio {ratio}");
    }
    // The histogram's zero values are the losses, level by level.
    let hist = std::fs::read_to_string(results().join("grundy_histogram.csv")).unwrap();
    let mut zeros: HashMap<u32, u64> = HashMap::new();
    for line in hist.lines().skip(1) {
        let f: Vec<u64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let z = zeros.entry(f[0] as u32).or_insert(0);
        if f[1] == 0 {
            *z = f[2];
        }
    }
    for (&tiles, &z) in &zeros {
        assert_eq!(ours[&tiles].1, z, "zero values at {tiles} tiles");
    }
    let grundy_levels = zeros.len();
    assert!(grundy_levels >= 88, "Grundy values to at least 88 tiles");
}

#[test]
fn published_table_directories_verify() {
    for (dir, samples) in [("box-8x15", 500), ("losses-100", 100)] {
        let report = verify::verify(&results().join(dir), samples, 3).unwrap();
        assert!(report.failures.is_empty(), "{dir}: {:?}", report.failures);
        // Spread evenly: the same share in every level, at least `samples` in all.
        let levels = report.levels_complete as u64;
        assert_eq!((report.per_level, report.samples), (samples.div_ceil(levels), samples.div_ceil(levels) * levels));
    }
}

/// The rows of a published `rows,cols,winning_moves` file, in order.
fn openings(name: &str) -> Vec<((u32, u32), String)> {
    let text = std::fs::read_to_string(results().join(name)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            ((f[0].parse().unwrap(), f[1].parse().unwrap()), f[2].to_string())
        })
        .collect()
}

/// The rules every rectangle's openings follow: a square is won by (1,1),
/// two rows `2 × c` by leaving `(c, c − 1)`, and every rectangle but the
/// poison alone is a win.
fn follows_the_known_rules(r: u32, c: u32, moves: &str) {
    if r == c && r > 1 {
        assert_eq!(moves, "1:1", "{r}x{c}");
    }
    if r == 2 && c > 1 {
        assert_eq!(moves, format!("1:{}", c - 1), "2x{c}");
    }
    if r * c > 1 {
        assert!(!moves.is_empty(), "{r}x{c} is a win");
    }
}

#[test]
fn published_openings_follow_the_known_rules() {
    let rows = openings("rectangle-openings-8x15.csv");
    for ((r, c), moves) in &rows {
        follows_the_known_rules(*r, *c, moves);
    }
    assert_eq!(rows.len(), 8 * 15);
}

/// The largest square of the published rectangle openings (`rectangle-openings-NxN.csv`).
fn openings_square() -> u32 {
    (8..=30).rev().find(|n| results().join(format!("rectangle-openings-{n}x{n}.csv")).is_file()).expect("published square openings")
}

#[test]
fn published_boxes_agree_with_the_reference_and_with_each_other() {
    let text = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("rows,cols,positions,losses"));
    let mut boxes = HashMap::new();
    for line in lines {
        let f: Vec<u64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (r, c) = (f[0] as u32, f[1] as u32);
        assert_eq!(Some(f[2]), chomp_tables::read::openings::binomial(r + c, r).map(|b| b - 1), "{r}x{c} positions");
        assert!(f[3] >= 1 && f[3] * 2 <= f[2] + 1, "{r}x{c}: {} losses", f[3]);
        boxes.insert((r, c), f[3]);
    }
    let side = openings_square();
    for n in 1..=side {
        assert!(boxes.contains_key(&(n, n)), "{n}x{n} is published");
        if n > 1 {
            assert!(boxes[&(n, n)] > boxes[&(n - 1, n - 1)], "losses grow with the square");
        }
    }
    for b in [(10, 20), (11, 20), (10, 42)] {
        assert!(boxes.contains_key(&b), "{b:?} is published");
    }
    assert!(boxes[&(10, 20)] < boxes[&(11, 20)] && boxes[&(10, 20)] < boxes[&(10, 42)]);
    let reference = data("box-square-losses-1-8.csv");
    for line in reference.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let (n, losses) = line.split_once(',').unwrap();
        let n: u32 = n.parse().unwrap();
        assert_eq!(boxes[&(n, n)], losses.parse::<u64>().unwrap(), "{n}x{n}");
    }
}

/// Every published box manifest (`box-RxC-manifest.json`) is a complete run
/// of that box, valid (canonical, checksum), whose levels count every
/// position of the box, and whose losses are `boxes.csv`'s row.
#[test]
fn published_box_manifests_agree_with_boxes_csv() {
    let text = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let boxes: HashMap<(u32, u32), u64> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            ((f[0] as u32, f[1] as u32), f[3])
        })
        .collect();
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(results()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(shape) = name.strip_prefix("box-").and_then(|n| n.strip_suffix("-manifest.json")) else { continue };
        let (r, c) = shape.split_once('x').unwrap();
        let (r, c): (u32, u32) = (r.parse().unwrap(), c.parse().unwrap());
        let m = chomp_tables::store::Manifest::read_file(&results().join(&name)).unwrap();
        assert_eq!((m.universe.rows, m.universe.cols, m.universe.tiles), (Some(r), Some(c), None), "{name}");
        assert!(m.complete && m.levels_complete == r * c && m.levels.len() as u32 == r * c, "{name} is complete");
        let positions: u64 = m.levels.iter().map(|l| l.positions).sum();
        assert_eq!(Some(positions), chomp_tables::read::openings::binomial(r + c, r).map(|b| b - 1), "{name}: positions");
        let losses: u64 = m.levels.iter().map(|l| l.losses).sum();
        assert_eq!(Some(&losses), boxes.get(&(r, c)), "{name}: losses against boxes.csv");
        // Its published summary, where there is one, is the run's own file, byte
        // for byte, and lists the manifest's losses level by level.
        let summary = results().join(format!("box-{r}x{c}-summary.csv"));
        if summary.is_file() {
            let bytes = std::fs::read(&summary).unwrap();
            let entry = &m.files["summary.csv"];
            assert_eq!((bytes.len() as u64, sha256_hex(&bytes)), (entry.bytes, entry.sha256.clone()), "{name}: its summary");
            let rows: Vec<(u32, u64, u64)> = String::from_utf8(bytes)
                .unwrap()
                .lines()
                .skip(1)
                .map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap())
                })
                .collect();
            let levels: Vec<(u32, u64, u64)> = m.levels.iter().map(|l| (l.tiles, l.positions, l.losses)).collect();
            assert_eq!(rows, levels, "{name}: its summary's levels");
        }
        seen.push((r, c));
    }
    let side = openings_square();
    assert!(seen.contains(&(side, side)), "the largest square's manifest is published");
    assert!(seen.contains(&(10, 42)) && seen.contains(&(11, 20)), "{seen:?}");
}

#[test]
fn published_box_openings_follow_the_known_rules() {
    let side = openings_square();
    let rows = openings(&format!("rectangle-openings-{side}x{side}.csv"));
    let small: HashMap<(u32, u32), String> = openings("rectangle-openings-8x15.csv").into_iter().collect();
    for ((r, c), moves) in &rows {
        follows_the_known_rules(*r, *c, moves);
        if let Some(want) = small.get(&(*r, *c)) {
            assert_eq!(moves, want, "{r}x{c} as in the 8x15 box");
        }
    }
    assert_eq!(rows.len() as u32, side * side);
    // Every smaller published square box's openings are the same rectangles' here.
    for n in 18..side {
        let name = format!("rectangle-openings-{n}x{n}.csv");
        if results().join(&name).is_file() {
            let all: HashMap<(u32, u32), String> = rows.iter().cloned().collect();
            for ((r, c), moves) in openings(&name) {
                assert_eq!(all[&(r, c)], moves, "{r}x{c}: {name} against the {side}x{side} box");
            }
        }
    }
    // 10x42: exactly three winning first moves (Padhi).
    let text = std::fs::read_to_string(results().join("rectangle-openings-10x42.csv")).unwrap();
    let line = text.lines().find(|l| l.starts_with("10,42,")).expect("the 10x42 row");
    assert_eq!(line.split(',').nth(2).unwrap().split_whitespace().count(), 3, "{line}");
    assert_eq!(text.lines().count(), 1 + 10 * 42);
}

/// The terms `n a(n)` of a published b-file, in order.
fn bfile(name: &str) -> Vec<(u32, u64)> {
    let text = std::fs::read_to_string(results().join("oeis").join(name)).unwrap();
    text.lines()
        .map(|l| {
            let (n, a) = l.split_once(' ').unwrap_or_else(|| panic!("{name}: {l:?} is not `n a(n)`"));
            (n.parse().unwrap(), a.parse().unwrap())
        })
        .collect()
}

/// The OEIS b-files: A112470 from n = 0 to 150 equals the published
/// summary; A112471 = p(n) − A112470; A112472 + A112473 = A112471 to at
/// least 130 tiles; and to 40 tiles the counts of winning moves equal
/// brute force's (`common::game`, sharing no code with the engine).
#[test]
fn published_bfiles_agree_with_the_summary_each_other_and_brute_force() {
    let ours = counts(&std::fs::read_to_string(results().join("summary.csv")).unwrap());
    let (losses, wins, one, several) = (bfile("b112470.txt"), bfile("b112471.txt"), bfile("b112472.txt"), bfile("b112473.txt"));
    assert_eq!(losses.iter().map(|t| t.0).collect::<Vec<_>>(), (0..=150).collect::<Vec<_>>(), "A112470: n = 0 … 150");
    assert_eq!(losses[0], (0, 0), "the empty board is no loss");
    for &(n, a) in &losses[1..] {
        assert_eq!(a, ours[&n].1, "A112470({n}) against summary.csv");
    }
    // p(n) by partitions into parts of each size.
    let mut p = vec![0u64; 151];
    p[0] = 1;
    for part in 1..=150 {
        for n in part..=150 {
            p[n] += p[n - part];
        }
    }
    assert_eq!(wins.len(), 150);
    for (i, &(n, a)) in wins.iter().enumerate() {
        assert_eq!((n, a), (i as u32 + 1, p[n as usize] - losses[n as usize].1), "A112471({n}) = p(n) − A112470(n)");
    }
    assert!(one.len() >= 130 && one.len() == several.len(), "A112472 and A112473 reach 130 tiles together");
    for ((i, &(n, a)), &(m, b)) in one.iter().enumerate().zip(&several) {
        assert_eq!((n, m), (i as u32 + 1, i as u32 + 1), "A112472 and A112473 from n = 1 without a gap");
        assert_eq!(a + b, wins[i].1, "A112472({n}) + A112473({n}) = A112471({n})");
    }
    let mut brute = crate::common::Brute::default();
    for n in 1..=40u32 {
        let h = brute_winning_moves(n, &mut brute);
        let want = (h.get(1).copied().unwrap_or(0), h.iter().skip(2).sum());
        assert_eq!((one[n as usize - 1].1, several[n as usize - 1].1), want, "A112472/A112473({n}) against brute force");
    }
}

/// Brute force's positions of `n` tiles by their number of winning moves.
fn brute_winning_moves(n: u32, brute: &mut crate::common::Brute) -> Vec<u64> {
    let mut h = vec![0u64];
    for rows in crate::common::partitions(n, n, n) {
        let k = crate::common::children(&rows).into_iter().filter(|(_, c)| brute.is_loss(c)).count();
        if h.len() <= k {
            h.resize(k + 1, 0);
        }
        h[k] += 1;
    }
    h
}

/// `winning_moves.csv`, the positions of each level by their number of
/// winning moves: equal to its run's published manifest, adding up to the
/// summary's positions, losses and the b-files' one and several winning
/// moves, and to brute force's histogram to 30 tiles.
#[test]
fn published_winning_moves_agree_with_their_manifest_the_summary_bfiles_and_brute_force() {
    let text = std::fs::read_to_string(results().join("winning_moves.csv")).unwrap();
    assert!(text.starts_with("tiles,winning_moves,positions\n"), "header");
    let mut levels: Vec<Vec<u64>> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<u64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (n, k, c) = (f[0] as usize, f[1] as usize, f[2]);
        assert!(n >= levels.len() && n <= levels.len() + 1 && c > 0, "{line}: levels in order, no zero counts");
        if n > levels.len() {
            levels.push(Vec::new());
        }
        let h = levels.last_mut().unwrap();
        assert!(k >= h.len(), "{line}: counts in order");
        h.resize(k, 0);
        h.push(c);
    }
    let m = chomp_tables::store::Manifest::read_file(&results().join("moves-grundy-100-manifest.json")).unwrap();
    assert!(m.complete && m.count_moves && m.grundy_max_tiles == m.levels_complete, "a complete run with Grundy values on every level");
    let from_manifest: Vec<Vec<u64>> =
        m.levels.iter().map(|l| l.winning_moves_histogram.clone().expect("every level's histogram")).collect();
    assert_eq!(levels, from_manifest, "winning_moves.csv against its manifest");
    assert!(levels.len() >= 100, "the histogram reaches 100 tiles");
    let ours = counts(&std::fs::read_to_string(results().join("summary.csv")).unwrap());
    let (one, several) = (bfile("b112472.txt"), bfile("b112473.txt"));
    for (i, h) in levels.iter().enumerate() {
        let n = i as u32 + 1;
        let got = (h.iter().sum::<u64>(), h[0], h.get(1).copied().unwrap_or(0), h.iter().skip(2).sum::<u64>());
        assert_eq!(got, (ours[&n].0, ours[&n].1, one[i].1, several[i].1), "level {n}: positions, losses, one and several winning moves");
    }
    let mut brute = crate::common::Brute::default();
    for n in 1..=30u32 {
        assert_eq!(levels[n as usize - 1], brute_winning_moves(n, &mut brute), "level {n} against brute force");
    }
}

/// The README, read as text.
fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// Bytes of every file a published manifest lists.
fn manifest_bytes(path: &Path) -> u64 {
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    m["files"].as_object().unwrap().values().map(|f| f["bytes"].as_u64().unwrap()).sum()
}

/// The README's table of the main jobs: the disk of every job whose tables
/// are published (a manifest in `results/`) is its manifest's bytes, as
/// rounded there (`5.5 GB`, `77 MB`: decimal units).
#[test]
fn readme_disk_figures_are_the_published_manifests() {
    let readme = readme();
    for (command, manifest) in [
        ("`chomp run jobs/losses-100.toml`", "losses-100/manifest.json"),
        ("`chomp run jobs/frontier.toml`", "frontier-manifest.json"),
        ("`chomp run jobs/grundy-100.toml`", "grundy-100-manifest.json"),
        ("`chomp run jobs/grundy-110.toml`", "grundy-110-manifest.json"),
        ("`chomp run jobs/grundy-120.toml`", "grundy-120-manifest.json"),
        ("`chomp run jobs/frontier-140.toml`", "frontier-140-manifest.json"),
        ("`chomp run jobs/frontier-150.toml`", "frontier-150-manifest.json"),
        ("`chomp run jobs/box-8x15.toml`", "box-8x15/manifest.json"),
        ("`chomp solve --rows 18 --cols 18", "box-18x18-manifest.json"),
        ("`scripts/boxes.sh 20`", "box-20x20-manifest.json"),
        ("`chomp solve --rows 21 --cols 21", "box-21x21-manifest.json"),
        ("`chomp run jobs/moves-grundy-100.toml`", "moves-grundy-100-manifest.json"),
    ] {
        let row =
            readme.lines().find(|l| l.starts_with("| ") && l.contains(command)).unwrap_or_else(|| panic!("no README row runs {command}"));
        // | job | command | wall | CPU | peak memory | disk | measured |
        let disk = row.split('|').map(str::trim).nth(6).unwrap();
        let (number, unit) = disk.split_once(' ').unwrap_or_else(|| panic!("{command}: disk {disk:?}"));
        let scale = match unit {
            "GB" => 1e9,
            "MB" => 1e6,
            _ => panic!("{command}: disk {disk:?} is not in GB or MB"),
        };
        let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
        let bytes = manifest_bytes(&results().join(manifest));
        assert_eq!(format!("{:.*}", decimals, bytes as f64 / scale), number, "{command}: {bytes} bytes in results/{manifest}");
    }
}

/// The README's table of every 10 tiles is `results/summary.csv`'s rows.
#[test]
fn readme_table_of_levels_is_the_published_summary() {
    let summary = std::fs::read_to_string(results().join("summary.csv")).unwrap();
    let rows: HashMap<&str, Vec<&str>> = summary.lines().skip(1).map(|l| (l.split(',').next().unwrap(), l.split(',').collect())).collect();
    let readme = readme();
    let table = readme.split("| tiles | positions | losses | losses (%) |").nth(1).expect("the README's table of levels");
    let mut seen = 0;
    for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<String> = line.split('|').map(|c| c.trim().replace(',', "")).filter(|c| !c.is_empty()).collect();
        let row = rows.get(cells[0].as_str()).unwrap_or_else(|| panic!("level {} is not in results/summary.csv", cells[0]));
        assert_eq!(&cells[1..3], &row[1..3], "level {}: positions and losses", cells[0]);
        let percent: f64 = row[3].parse().unwrap();
        let ratio: f64 = row[4].parse().unwrap();
        assert_eq!(cells[3], format!("{percent:.3}"), "level {}: losses (%)", cells[0]);
        assert_eq!(cells[4], format!("{ratio:.4}"), "level {}: the ratio", cells[0]);
        seen += 1;
    }
    assert!(seen >= 15, "{seen} rows in the README's table of levels");
}

/// The README's list of what the main job writes names every file a run
/// with Grundy values writes at its top (the published 8×15 box is one).
#[test]
fn readme_names_every_file_of_a_run() {
    let readme = readme();
    let at = readme.find("writes `out/default/` under the current folder").expect("the README's list of the main job's files");
    let list = &readme[at..at + readme[at..].find("\n\n").unwrap()];
    for entry in std::fs::read_dir(results().join("box-8x15")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let named = match name.as_str() {
            "losses" => list.contains("one loss table"),
            "grundy" => list.contains("one Grundy table"),
            _ => list.contains(&format!("`{name}`")),
        };
        assert!(named, "the README's list of the files in out/default does not name {name}: {list}");
    }
}

/// The 4×3000 box's losses level by level (the few-row engine's
/// `levels.csv`): its sums are `boxes.csv`'s row, its positions add up to
/// the box's and are symmetric under the complement (level n and
/// 12000 − n), and its losses are Garg's 961,619,972 in all.
#[test]
fn published_four_row_levels_agree_with_boxes_csv() {
    let levels = counts(&std::fs::read_to_string(results().join("box-4x3000-levels.csv")).unwrap());
    assert!((1..=12000).all(|n| levels.contains_key(&n)) && levels.len() == 12000, "levels 1..=12000");
    let (positions, losses): (u64, u64) = levels.values().fold((0, 0), |(p, l), &(pn, ln)| (p + pn, l + ln));
    let boxes = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    assert!(
        boxes.lines().any(|l| l == format!("4,3000,{positions},{losses}")),
        "boxes.csv's 4x3000 row: {positions} positions, {losses} losses"
    );
    assert_eq!(losses, 961_619_972, "Garg's count of P-positions with four rows of at most 3000");
    assert_eq!(Some(positions), chomp_tables::read::openings::binomial(3004, 4).map(|b| b - 1));
    assert!(levels.values().all(|&(p, l)| l * 2 <= p + 1), "losses at most half of a level");
    // The box is symmetric under complement (n ↔ 12000 − n positions).
    assert!((1..12000).all(|n| levels[&n].0 == levels[&(12000 - n)].0), "positions of n and 12000 − n");
}

/// The thin rectangles the census covers beyond 21×21: (rows, largest cols).
const CENSUS: [(u32, u32); 8] = [(3, 20000), (4, 3000), (5, 500), (6, 200), (7, 110), (8, 60), (9, 55), (10, 55)];

/// Padhi's search: every bar `a × b` with `a ≤ b ≤ 19`, and these rows to
/// these lengths.
const PADHI: [(u32, u32); 7] = [(4, 300), (5, 150), (6, 110), (7, 110), (8, 60), (9, 55), (10, 45)];

/// The 18 bars `a × b` (`a ≤ b`) with two winning first moves that Padhi
/// (2026) found in his region.
const PADHI_TWO: [(u32, u32); 18] = [
    (6, 13),
    (6, 93),
    (7, 29),
    (7, 30),
    (7, 57),
    (8, 10),
    (8, 22),
    (8, 23),
    (9, 10),
    (9, 26),
    (10, 14),
    (10, 29),
    (10, 33),
    (10, 35),
    (11, 18),
    (12, 13),
    (13, 16),
    (14, 16),
];

fn in_padhis_region(a: u32, b: u32) -> bool {
    a <= b && (b <= 19 || PADHI.iter().any(|&(r, most)| r == a && b <= most))
}

#[test]
fn published_census_agrees_with_the_openings_files_and_the_few_row_tables() {
    use chomp_tables::fewrow::{self, FewRowBox, Progress, SolveOptions};
    use chomp_tables::read::openings::{parse_openings_csv, Opening};
    let census = parse_openings_csv(&std::fs::read_to_string(results().join("rectangle-openings-census.csv")).unwrap()).unwrap();
    let at: HashMap<(u32, u32), &Opening> = census.iter().map(|o| ((o.rows, o.cols), o)).collect();
    assert_eq!(at.len(), census.len(), "each rectangle once");
    assert!(census.windows(2).all(|w| (w[0].rows, w[0].cols) < (w[1].rows, w[1].cols)), "by rows then columns");
    assert!(census.iter().all(|o| o.rows <= o.cols), "rows <= cols");
    // What it covers.
    assert!((1..=21).all(|r| (r..=21).all(|c| at.contains_key(&(r, c)))), "every rectangle to 21x21");
    for (r, most) in CENSUS {
        assert!((r..=most).all(|c| at.contains_key(&(r, c))), "{r}x{r}..{r}x{most}");
    }
    // Every published openings file, turned where it lists rows > cols.
    let mut files = 0;
    for entry in std::fs::read_dir(results()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.starts_with("rectangle-openings-") || name.contains("census") {
            continue;
        }
        files += 1;
        for o in parse_openings_csv(&std::fs::read_to_string(results().join(&name)).unwrap()).unwrap() {
            let o = if o.rows > o.cols { o.transposed() } else { o };
            assert_eq!(at[&(o.rows, o.cols)], &o, "{}x{} against {name}", o.rows, o.cols);
        }
    }
    assert!(files >= 4);
    // The rules: squares by 1:1, 2×c by 1:(c−1), every 3×n by one move (Sheiner 2026).
    for o in &census {
        let moves: Vec<String> = o.winning_moves.iter().map(|[r, c]| format!("{r}:{c}")).collect();
        follows_the_known_rules(o.rows, o.cols, &moves.join(" "));
        if o.rows == 3 {
            assert_eq!(o.winning_moves.len(), 1, "3x{}: {moves:?}", o.cols);
        }
    }
    // The rows agree with the few-row tables of boxes solved here.
    for (r, c) in [(4, 300), (5, 60), (3, 3000), (6, 25)] {
        let t = fewrow::solve(FewRowBox::new(r, c).unwrap(), &SolveOptions::default(), &Progress::default()).unwrap();
        for o in t.rectangle_openings() {
            let o = if o.rows > o.cols { o.transposed() } else { o };
            assert_eq!(at[&(o.rows, o.cols)], &o, "{}x{} against the {r}x{c} box", o.rows, o.cols);
        }
    }
}

#[test]
fn published_census_finds_padhis_bars() {
    use chomp_tables::read::openings::parse_openings_csv;
    let census = parse_openings_csv(&std::fs::read_to_string(results().join("rectangle-openings-census.csv")).unwrap()).unwrap();
    let several: Vec<_> = census.iter().filter(|o| in_padhis_region(o.rows, o.cols) && o.winning_moves.len() > 1).collect();
    // The bars with several winning moves the project published before (the
    // square and 10x42 openings files), inside Padhi's region: all found, the same moves.
    let mut before = 0;
    for name in ["rectangle-openings-21x21.csv", "rectangle-openings-10x42.csv"] {
        for o in parse_openings_csv(&std::fs::read_to_string(results().join(name)).unwrap()).unwrap() {
            if o.rows <= o.cols && in_padhis_region(o.rows, o.cols) && o.winning_moves.len() > 1 {
                assert!(several.iter().any(|s| **s == o), "{}x{} from {name}", o.rows, o.cols);
                before += 1;
            }
        }
    }
    assert_eq!(before, 17 + 4, "16 bars with two moves and 10x42 (and 6x13, 8x10, 9x10, 10x14 in both files)");
    // Padhi found 18 bars with two winning moves and one with three (10x42).
    let two = several.iter().filter(|o| o.winning_moves.len() == 2).count();
    let three: Vec<_> = several.iter().filter(|o| o.winning_moves.len() >= 3).map(|o| (o.rows, o.cols, o.winning_moves.clone())).collect();
    assert_eq!(three, vec![(10, 42, vec![[4, 35], [6, 29], [7, 25]])]);
    // The census covers his whole region, and its bars with two winning
    // moves there are exactly his 18 (Padhi 2026, by their sides).
    let outside: Vec<(u32, u32)> = PADHI
        .iter()
        .flat_map(|&(r, most)| (20..=most).map(move |c| (r, c)))
        .filter(|&(r, c)| !census.iter().any(|o| (o.rows, o.cols) == (r, c)))
        .collect();
    assert!(outside.is_empty(), "Padhi's region not covered: {outside:?}");
    assert_eq!(two, 18, "Padhi's 18 bars with two winning moves");
    let mut sides: Vec<(u32, u32)> = several.iter().filter(|o| o.winning_moves.len() == 2).map(|o| (o.rows, o.cols)).collect();
    sides.sort_unstable();
    assert_eq!(sides, PADHI_TWO.to_vec(), "the bars with two winning moves in Padhi's region");
    for (r, c, moves) in [(6, 93, vec![[1, 51], [2, 38]]), (7, 57, vec![[2, 41], [3, 25]])] {
        assert!(several.iter().any(|o| (o.rows, o.cols, &o.winning_moves) == (r, c, &moves)), "{r}x{c}: {moves:?}");
    }
}

#[test]
fn published_thin_boxes_agree_with_boxes_csv() {
    let boxes = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    // The census's boxes: their levels, as the census run wrote them, sum to
    // their rows, count every position of the box, and are symmetric under
    // the complement (level n and r·c − n).
    for (r, c) in [(5, 500), (6, 200), (8, 60), (4, 300), (7, 110)] {
        let top = r * c;
        let levels = counts(&std::fs::read_to_string(results().join(format!("box-{r}x{c}-levels.csv"))).unwrap());
        assert!((1..=top).all(|n| levels.contains_key(&n)) && levels.len() == top as usize, "{r}x{c}: levels 1..={top}");
        let (positions, losses): (u64, u64) = levels.values().fold((0, 0), |(p, l), &(pn, ln)| (p + pn, l + ln));
        assert!(boxes.lines().any(|l| l == format!("{r},{c},{positions},{losses}")), "boxes.csv's {r}x{c} row: {positions}, {losses}");
        assert_eq!(Some(positions), chomp_tables::read::openings::binomial(r + c, r).map(|b| b - 1), "{r}x{c} positions");
        assert!(levels.values().all(|&(p, l)| l * 2 <= p + 1), "{r}x{c}: losses at most half of a level");
        assert!((1..top).all(|n| levels[&n].0 == levels[&(top - n)].0), "{r}x{c}: positions of n and {top} − n");
    }
    // 3x20000: the count of the earlier engine's run (bench/runs/2026-12-07-kvm-2core/fewrow.md).
    let positions = chomp_tables::read::openings::binomial(20003, 3).unwrap() - 1;
    assert!(boxes.lines().any(|l| l == format!("3,20000,{positions},68653702")), "boxes.csv's 3x20000 row");
}

/// The published few-row manifest of the 4×3000 box reads as one (format,
/// checksum, counts), lists the table README names, and agrees with
/// `boxes.csv`'s row and `box-4x3000-levels.csv`.
#[test]
fn the_published_few_row_manifest_agrees_with_boxes_csv() {
    let m = chomp_tables::fewrow::FewRowManifest::read_file(&results().join("fewrow-4x3000-manifest.json")).unwrap();
    assert_eq!((m.universe.rows, m.universe.cols), (4, 3000));
    let text = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let row = text.lines().find(|l| l.starts_with("4,3000,")).expect("boxes.csv's 4x3000 row");
    assert_eq!(row, format!("4,3000,{},{}", m.positions, m.losses));
    let levels = std::fs::read(results().join("box-4x3000-levels.csv")).unwrap();
    let entry = &m.files["levels.csv"];
    assert_eq!((levels.len() as u64, sha256_hex(&levels)), (entry.bytes, entry.sha256.clone()), "the levels file is the run's");
    let table = &m.files[chomp_tables::fewrow::files::TABLE];
    let readme = std::fs::read_to_string(results().join("README.md")).unwrap();
    assert!(readme.contains(&table.sha256), "README names the table's SHA-256");
}
