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

/// The cells of the README's table of the main jobs in the row whose text
/// holds `command`: | job | command | wall | CPU | peak memory | disk | measured |.
fn readme_job_cells<'r>(readme: &'r str, command: &str) -> Vec<&'r str> {
    let row = readme.lines().find(|l| l.starts_with("| ") && l.contains(command)).unwrap_or_else(|| panic!("no README row runs {command}"));
    row.split('|').map(str::trim).collect()
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
        let disk = readme_job_cells(&readme, command)[6];
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

/// The table of levels of the README and of `results/README.md` is
/// `results/summary.csv`'s rows.
#[test]
fn readme_table_of_levels_is_the_published_summary() {
    let summary = std::fs::read_to_string(results().join("summary.csv")).unwrap();
    let rows: HashMap<&str, Vec<&str>> = summary.lines().skip(1).map(|l| (l.split(',').next().unwrap(), l.split(',').collect())).collect();
    for path in ["README.md", "results/README.md"] {
        let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
        let table =
            readme.split("| tiles | positions | losses | losses (%) |").nth(1).unwrap_or_else(|| panic!("{path}'s table of levels"));
        let mut seen = 0;
        for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let cells: Vec<String> = line.split('|').map(|c| c.trim().replace(',', "")).filter(|c| !c.is_empty()).collect();
            let row = rows.get(cells[0].as_str()).unwrap_or_else(|| panic!("{path}: level {} is not in results/summary.csv", cells[0]));
            assert_eq!(&cells[1..3], &row[1..3], "{path}, level {}: positions and losses", cells[0]);
            let percent: f64 = row[3].parse().unwrap();
            let ratio: f64 = row[4].parse().unwrap();
            assert_eq!(cells[3], format!("{percent:.3}"), "{path}, level {}: losses (%)", cells[0]);
            assert_eq!(cells[4], format!("{ratio:.4}"), "{path}, level {}: the ratio", cells[0]);
            seen += 1;
        }
        assert!(seen >= 15, "{seen} rows in {path}'s table of levels");
    }
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

/// A document of the repository with every run of whitespace made one
/// space, so that a figure's sentence may wrap anywhere.
fn doc_text(path: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A figure as the documents write it, parsed: the digits of its mantissa
/// (`"5.38"`, `"-1.00"`, `"1825627339"`), their decimals and the power of
/// ten (`5.38·10¹¹`, `−1.00·10⁻⁴`); a whole number's thousands separators
/// must be every three digits. `None` for a word that is no figure.
fn doc_number(word: &str) -> Option<(String, usize, i32)> {
    let word = word.replace('−', "-");
    let (mantissa, exponent) = match word.split_once("·10") {
        Some((m, e)) => {
            let sup = |c: char| "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|d| d == c).map(|d| char::from(b'0' + d as u8));
            let e: String = e.chars().map(|c| if c == '⁻' { Some('-') } else { sup(c) }).collect::<Option<_>>()?;
            (m.to_string(), e.parse().ok()?)
        }
        None => (word.clone(), 0),
    };
    let (whole, decimals) = mantissa.split_once('.').unwrap_or((&mantissa, "0"));
    let digits = whole.trim_start_matches('-');
    let groups: Vec<&str> = digits.split(',').collect();
    let grouped = groups.len() == 1 || (!groups[0].is_empty() && groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !grouped || !groups.iter().all(|g| all_digits(g)) || !all_digits(decimals) {
        return None;
    }
    Some((mantissa.replace(',', ""), if mantissa.contains('.') { decimals.len() } else { 0 }, exponent))
}

/// The first `n` figures of `doc` (a [`doc_text`]) after `anchor`, the
/// words around them skipped (`20×20`, `losses`; a range `90–150` is two).
fn doc_figures<'a>(doc: &'a str, path: &str, anchor: &str, n: usize) -> Vec<&'a str> {
    let at = doc
        .find(anchor)
        .unwrap_or_else(|| panic!("{path} no longer says {anchor:?}: say the figure there again, or point this test at its new words"));
    let figures: Vec<&str> = doc[at + anchor.len()..]
        .split([' ', '–'])
        .map(|w| w.trim_matches(|c: char| "()*,;:%.".contains(c)))
        .filter(|w| doc_number(w).is_some())
        .take(n)
        .collect();
    assert_eq!(figures.len(), n, "{path}: {n} figures after {anchor:?}");
    figures
}

/// Checks that `quoted` is `value` as written: exactly for a whole number,
/// else rounded to the digits of its mantissa.
fn assert_doc_figure(path: &str, quoted: &str, value: f64, what: &str) {
    let (mantissa, decimals, exponent) = doc_number(quoted).unwrap_or_else(|| panic!("{path}: {quoted:?} is not a figure"));
    let written = format!("{:.*}", decimals, value / 10f64.powi(exponent));
    assert_eq!(written, mantissa, "{path} says {quoted} for {what}, which is {value} in results/");
}

/// `results/summary.csv`'s levels (positions, losses, the two ratios written there).
fn published_levels() -> Vec<chomp_tables::report::LevelStats> {
    counts_in_order(&std::fs::read_to_string(results().join("summary.csv")).unwrap())
        .into_iter()
        .map(|(tiles, positions, losses)| chomp_tables::report::LevelStats { tiles, positions, losses, ..Default::default() })
        .collect()
}

/// (tiles, positions, losses) of a CSV whose first three columns are those, in its order.
fn counts_in_order(text: &str) -> Vec<(u32, u64, u64)> {
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

/// The totals the README, `results/README.md` and `docs/cluster.md` quote
/// from `results/summary.csv`: its last level, the positions and losses of
/// all levels and of the last, its share of losses and ratio, the trend of
/// the ratio from 90 tiles on (what `chomp summary` prints).
#[test]
fn documented_totals_are_the_published_summary() {
    use chomp_tables::report::summary::ratio_trend;
    let levels = published_levels();
    assert!(levels.iter().enumerate().all(|(i, l)| l.tiles == i as u32 + 1), "levels 1, 2, 3 … in results/summary.csv");
    let last = levels.last().unwrap();
    let top = last.tiles;
    let level = |n: u32| &levels[n as usize - 1];
    let positions = |to: u32| levels.iter().take(to as usize).map(|l| l.positions).sum::<u64>() as f64;
    let losses: u64 = levels.iter().map(|l| l.losses).sum();
    let trend = ratio_trend(&levels, 90).unwrap();

    let path = "README.md";
    let readme = doc_text(path);
    let figures = doc_figures(&readme, path, "- every loss to **", 5);
    assert_eq!([figures[0], figures[3]], [top.to_string(), top.to_string()], "{path}: the last level, {figures:?}");
    assert_doc_figure(path, figures[1], positions(top), "the positions of all levels");
    assert!(readme.contains(&format!("{} billion in level {top}, ", figures[2])), "{path}: {} billion in level {top}", figures[2]);
    assert_doc_figure(path, figures[2], last.positions as f64 / 1e9, &format!("billions of positions in level {top}"));
    assert_doc_figure(path, figures[4], losses as f64, "the losses of all levels");
    let ratio = doc_figures(&readme, path, "keeps falling past 90 tiles (", 2);
    assert_eq!(ratio[1], top.to_string(), "{path}: the ratio at the last level");
    assert_doc_figure(path, ratio[0], last.conjecture_ratio(), &format!("the ratio at {top} tiles"));
    let rare = doc_figures(&readme, path, "Losses are rare (", 2);
    let at: u32 = rare[1].parse().unwrap();
    assert_doc_figure(path, rare[0], level(at).loss_percent(), &format!("the share of losses at {at} tiles"));
    let slope = doc_figures(&readme, path, "a least-squares line through levels ", 4);
    assert_eq!(slope[..2], ["90", &top.to_string()][..], "{path}: {slope:?}");
    assert_doc_figure(path, slope[2], trend.slope, "the slope of the ratio's trend");
    assert_doc_figure(path, slope[3], trend.slope_error, "the standard error of that slope");

    let path = "results/README.md";
    let results_readme = doc_text(path);
    let share = doc_figures(&results_readme, path, "The share of losing positions keeps falling slowly (", 2);
    assert_eq!(share[1], top.to_string(), "{path}: {share:?}");
    assert_doc_figure(path, share[0], last.loss_percent(), &format!("the share of losses at {top} tiles"));
    let ratio = doc_figures(&results_readme, path, "past about 90 tiles it falls steadily, ", 2);
    assert_eq!(ratio[1], top.to_string(), "{path}: {ratio:?}");
    assert_doc_figure(path, ratio[0], last.conjecture_ratio(), &format!("the ratio at {top} tiles"));
    let fit = doc_figures(&results_readme, path, "A least-squares line through levels ", 6);
    assert_eq!(fit[..2], ["90", &top.to_string()][..], "{path}: {fit:?}");
    assert_doc_figure(path, fit[2], trend.slope, "the slope of the ratio's trend");
    assert_doc_figure(path, fit[3], trend.slope_error, "the standard error of that slope");
    assert_eq!(fit[5], top.to_string(), "{path}: {fit:?}");
    assert_doc_figure(path, fit[4], trend.at(top as f64), &format!("the trend's line at {top} tiles"));

    // The marks of a run to N tiles: about Σ p(m), m ≤ N; past the levels
    // published, p(m) by Euler's recurrence.
    let path = "docs/cluster.md";
    let cluster = doc_text(path);
    let sums = doc_figures(&cluster, path, "about one per position of all levels (`Σ p(m)`): ", 12);
    let mut p = vec![1u64];
    for n in 1..=sums.chunks(2).map(|pair| pair[1].parse::<i64>().unwrap()).max().unwrap() {
        let (mut sum, mut k) = (0i64, 1i64);
        while k * (3 * k - 1) / 2 <= n {
            let sign = if k % 2 == 1 { 1 } else { -1 };
            for g in [k * (3 * k - 1) / 2, k * (3 * k + 1) / 2].into_iter().filter(|&g| g <= n) {
                sum += sign * p[(n - g) as usize] as i64;
            }
            k += 1;
        }
        p.push(sum as u64);
    }
    assert!(levels.iter().all(|l| l.positions == p[l.tiles as usize]), "results/summary.csv's positions are p(n)");
    for pair in sums.chunks(2) {
        let to: usize = pair[1].parse().unwrap();
        assert_doc_figure(path, pair[0], p[1..=to].iter().sum::<u64>() as f64, &format!("the positions to {to} tiles"));
    }
}

/// The boxes the documents quote from `results/boxes.csv`: the README's
/// 21×21 and 20×20, `docs/math.md`'s 21×21, the guide's 10×42 (its
/// estimate line) and `results/README.md`'s 21×21 and table of boxes.
#[test]
fn documented_boxes_are_boxes_csv() {
    let text = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let boxes: HashMap<(u32, u32), (u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            ((f[0] as u32, f[1] as u32), (f[2], f[3]))
        })
        .collect();
    let row = |r: u32, c: u32| boxes.get(&(r, c)).copied().unwrap_or_else(|| panic!("no {r}x{c} row in results/boxes.csv"));
    let ((p21, l21), (_, l20), (p10x42, _)) = (row(21, 21), row(20, 20), row(10, 42));

    let path = "README.md";
    let readme = doc_text(path);
    let figures = doc_figures(&readme, path, "the **21×21 box** solved for the first time (", 2);
    assert!(readme.contains(&format!("({} losses among {} positions)", figures[0], figures[1])), "{path}: {figures:?}");
    assert_doc_figure(path, figures[0], l21 as f64, "the 21×21 box's losses");
    assert_doc_figure(path, figures[1], p21 as f64, "the 21×21 box's positions");
    let figures = doc_figures(&readme, path, "the 20×20 box (", 1);
    assert_doc_figure(path, figures[0], l20 as f64, "the 20×20 box's losses");

    let path = "docs/math.md";
    assert_doc_figure(path, doc_figures(&doc_text(path), path, "21×21 box (", 1)[0], l21 as f64, "the 21×21 box's losses");

    let path = "docs/guide.md";
    let guide = doc_text(path);
    let figures = doc_figures(&guide, path, "(`solving the 10x42 box: ", 1);
    assert_doc_figure(path, figures[0], p10x42 as f64, "the 10×42 box's positions");

    let path = "results/README.md";
    let results_readme = doc_text(path);
    let figures = doc_figures(&results_readme, path, "the **21×21** box, losses (", 1);
    assert_doc_figure(path, figures[0], p21 as f64, "the 21×21 box's positions");
    let raw = std::fs::read_to_string(results().join("README.md")).unwrap();
    let table = raw.split("| box | positions | losses | losses (%) |\n").nth(1).expect("results/README.md's table of boxes");
    let mut seen = 0;
    for line in table.lines().skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(|c| c.trim().trim_matches('*')).filter(|c| !c.is_empty()).collect();
        let (r, c) = cells[0].split_once('×').unwrap_or_else(|| panic!("{path}: {line}"));
        let (positions, losses) = row(r.parse().unwrap(), c.parse().unwrap());
        assert_doc_figure(path, cells[1], positions as f64, &format!("the {r}×{c} box's positions"));
        assert_doc_figure(path, cells[2], losses as f64, &format!("the {r}×{c} box's losses"));
        assert_doc_figure(path, cells[3], 100.0 * losses as f64 / positions as f64, &format!("the {r}×{c} box's share of losses"));
        seen += 1;
    }
    assert!(seen >= 13, "{path}: {seen} rows in the table of boxes");
}

/// A count written as a word (`one`) or in digits (`21`).
fn doc_count(word: &str) -> Option<usize> {
    let words = ["none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    words.iter().position(|w| *w == word).or_else(|| word.replace(',', "").parse().ok())
}

/// The census as `results/README.md` counts it (its rectangles, and how
/// many have one, two and three winning moves) and as the README names
/// 10×42's: the data rows of `results/rectangle-openings-census.csv`, so
/// that the file and the words grow together.
#[test]
fn documented_census_counts_are_the_census_file() {
    use chomp_tables::read::openings::parse_openings_csv;
    let text = std::fs::read_to_string(results().join("rectangle-openings-census.csv")).unwrap();
    let rows = text.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
    let census = parse_openings_csv(&text).unwrap();
    assert_eq!(census.len(), rows, "every data row a rectangle");
    let with = |k: usize| census.iter().filter(|o| o.winning_moves.len() == k).collect::<Vec<_>>();

    let path = "results/README.md";
    let doc = doc_text(path);
    let anchor = "(a taller rectangle's moves are its transpose's, turned): ";
    let figures = doc_figures(&doc, path, anchor, 1);
    assert!(doc.contains(&format!("{anchor}{} rectangles,", figures[0])), "{path}: {figures:?}");
    assert_doc_figure(path, figures[0], rows as f64, "the rectangles of the census (its data rows)");
    // "N of its M rectangles have one winning move, K two, one three (10×42), and 1×1 none."
    let anchor = " rectangles have one winning move, ";
    let at = doc.find(anchor).unwrap_or_else(|| panic!("{path} no longer says {anchor:?}"));
    let before: Vec<&str> = doc[..at].rsplit(' ').take(4).collect();
    assert_eq!(before[1..3], ["its", "of"], "{path}: {before:?}");
    assert_doc_figure(path, before[0], rows as f64, "the rectangles of the census (its data rows)");
    assert_doc_figure(path, before[3], with(1).len() as f64, "the rectangles with one winning move");
    let after: Vec<&str> = doc[at + anchor.len()..].split(['.', ';']).next().unwrap().split(", ").collect();
    for part in &after {
        let part = part.trim_start_matches("and ");
        let (count, rest) = part.split_once(' ').unwrap_or_else(|| panic!("{path}: {after:?}"));
        let (how_many, named) = rest.split_once(" (").map_or((rest, None), |(w, n)| (w, Some(n.trim_end_matches(')'))));
        let moves = doc_count(how_many).unwrap_or_else(|| panic!("{path}: {part:?}"));
        let those = with(moves);
        let names: Vec<String> = those.iter().map(|o| format!("{}×{}", o.rows, o.cols)).collect();
        match doc_count(count) {
            Some(n) => assert_eq!(n, those.len(), "{path}: {part:?}; the census has {} rectangles with {moves} winning moves", those.len()),
            // `1×1 none`: the rectangles named instead of counted.
            None => assert_eq!(count.split('/').collect::<Vec<_>>(), names, "{path}: {part:?}"),
        }
        if let Some(named) = named {
            assert_eq!(named.split(", ").collect::<Vec<_>>(), names, "{path}: {part:?}");
        }
    }
    let listed: usize = after.len() + 1;
    assert!((0..=10).filter(|&k| !with(k).is_empty()).count() <= listed, "{path}: {after:?} leaves out some counts of winning moves");

    let path = "README.md";
    let readme = doc_text(path);
    let anchor = "10×42 (exactly ";
    let at = readme.find(anchor).unwrap_or_else(|| panic!("{path} no longer says {anchor:?}")) + anchor.len();
    let moves = doc_count(readme[at..].split(' ').next().unwrap()).unwrap();
    let ten = census.iter().find(|o| (o.rows, o.cols) == (10, 42)).unwrap();
    assert_eq!(moves, ten.winning_moves.len(), "{path}: 10×42's winning first moves");
}

/// The guide's sample progress line of the default job (level 70 of 90)
/// is that level's row of `results/summary.csv`.
#[test]
fn guide_progress_line_is_the_published_summary() {
    let path = "docs/guide.md";
    let doc = doc_text(path);
    let figures = doc_figures(&doc, path, "level 70/90: ", 4);
    let row: Vec<String> = std::fs::read_to_string(results().join("summary.csv"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("70,"))
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    // tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy
    assert_doc_figure(path, figures[0], row[1].parse().unwrap(), "the positions of level 70");
    assert_doc_figure(path, figures[1], row[2].parse().unwrap(), "the losses of level 70");
    assert_doc_figure(path, figures[2], row[3].parse().unwrap(), "the share of losses of level 70");
    assert_eq!(figures[3], row[5], "{path}: the largest Grundy value of level 70");
    assert!(doc.contains(&format!("grundy max {} (", figures[3])), "{path}: {figures:?}");
}

/// The default job's time is said alike wherever it is said: the range of
/// the README's table of the main jobs (its wall on 2 cores, and with the
/// cores shared, in whole seconds) in the README's first lines, the guide's
/// list of jobs and the job file's comment.
#[test]
fn default_job_time_is_said_alike() {
    let readme = readme();
    let wall = readme_job_cells(&readme, "`chomp run` (`jobs/default.toml`)")[3];
    let seconds: Vec<f64> = wall.split(' ').filter_map(|w| w.parse().ok()).collect();
    assert_eq!(seconds.len(), 2, "the README's wall of the default job: {wall:?}");
    let range = format!("{:.0}–{:.0} s on 2 cores", seconds[0], seconds[1]);
    for (path, context) in [
        ("README.md", "the main job, built in: losses to 90 tiles, Grundy values to 70, into out/default ("),
        ("docs/guide.md", "| `jobs/default.toml` | losses to 90 tiles, Grundy values to 70 ("),
        ("jobs/default.toml", "# The default job: every losing position to 90 tiles and Grundy values to # 70 tiles, "),
    ] {
        let doc = doc_text(path);
        assert!(doc.contains(&format!("{context}{range}")), "{path} should say {range:?} after {context:?} (the README's table: {wall})");
    }
}

/// The README's estimate of `chomp run jobs/frontier.toml` (its time and
/// peak memory) is what that dry run prints, on the project's machine: 2
/// threads, and memory enough for the plan to need no window.
#[test]
fn readme_frontier_estimate_is_the_dry_run() {
    let readme = readme();
    let cells = readme_job_cells(&readme, "| `chomp run jobs/frontier.toml` |");
    let (wall, memory) = (cells[3], cells[5]);
    // The job file in a folder of its own, so that its out/ holds no earlier run.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("jobs")).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/frontier.toml"), tmp.path().join("jobs/frontier.toml")).unwrap();
    let out = std::process::Command::new(crate::common::binary::BIN)
        .args(["run", "jobs/frontier.toml", "--dry-run", "--max-memory", "24G"])
        .current_dir(tmp.path())
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .unwrap();
    crate::common::assert_ok(&out, "chomp run jobs/frontier.toml --dry-run");
    assert!(!tmp.path().join("out").exists(), "the dry run wrote out/");
    let stderr = crate::common::text(&out.stderr);
    let first = stderr.lines().next().unwrap_or("");
    // estimate for levels 1 to 110 on 2 threads: 2 min, peak memory 1.50 GiB, disk 329.0 MiB (rough: ...)
    let (time, rest) = first
        .strip_prefix("estimate for levels 1 to 110 on 2 threads: ")
        .and_then(|r| r.split_once(", peak memory "))
        .unwrap_or_else(|| panic!("the dry run's first line: {first}"));
    let peak = rest.split_once(", disk ").unwrap().0;
    assert!(!stderr.contains("windows of mark bits"), "the plan opens windows: {stderr}");
    assert!(wall.starts_with(&format!("about {time} (estimate")), "README says {wall:?} for jobs/frontier.toml; its dry run: {time}");
    assert!(memory.starts_with(&format!("{peak} (estimate")), "README says {memory:?} for jobs/frontier.toml; its dry run: {peak}");
}

/// Checks the published levels of the `r × c` box (`box-RxC-levels.csv`,
/// the few-row engine's `levels.csv`): a line for every level, sums that
/// are `boxes.csv`'s row (`boxes`), positions that count every position
/// of the box and are symmetric under the complement (level n and r·c − n),
/// losses at most half of a level. Returns the losses.
fn published_box_levels(boxes: &str, r: u32, c: u32) -> u64 {
    let top = r * c;
    let levels = counts(&std::fs::read_to_string(results().join(format!("box-{r}x{c}-levels.csv"))).unwrap());
    assert!((1..=top).all(|n| levels.contains_key(&n)) && levels.len() == top as usize, "{r}x{c}: levels 1 to {top}");
    let (positions, losses): (u64, u64) = levels.values().fold((0, 0), |(p, l), &(pn, ln)| (p + pn, l + ln));
    assert!(
        boxes.lines().any(|l| l == format!("{r},{c},{positions},{losses}")),
        "boxes.csv's {r}x{c} row: {positions} positions, {losses} losses"
    );
    assert_eq!(Some(positions), chomp_tables::read::openings::binomial(r + c, r).map(|b| b - 1), "{r}x{c} positions");
    assert!(levels.values().all(|&(p, l)| l * 2 <= p + 1), "{r}x{c}: losses at most half of a level");
    assert!((1..top).all(|n| levels[&n].0 == levels[&(top - n)].0), "{r}x{c}: positions of n and {top} − n");
    losses
}

/// The 4×3000 and 4×3500 boxes' losses level by level agree with
/// `boxes.csv` ([`published_box_levels`]), and 4×3000's are Garg's
/// 961,619,972 in all.
#[test]
fn published_four_row_levels_agree_with_boxes_csv() {
    let boxes = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let losses = published_box_levels(&boxes, 4, 3000);
    assert_eq!(losses, 961_619_972, "Garg's count of P-positions with four rows of at most 3000");
    published_box_levels(&boxes, 4, 3500);
}

/// The thin rectangles the census covers beyond 21×21: (rows, largest cols).
const CENSUS: [(u32, u32); 8] = [(3, 20000), (4, 3000), (5, 500), (6, 200), (7, 130), (8, 90), (9, 70), (10, 55)];

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
    // The census's boxes: their levels, as the census run wrote them.
    for (r, c) in [(5, 500), (6, 200), (8, 60), (4, 300), (7, 110), (7, 130)] {
        published_box_levels(&boxes, r, c);
    }
    // 3x20000: the count of the earlier engine's run (bench/runs/2026-12-07-kvm-2core/fewrow.md).
    let positions = chomp_tables::read::openings::binomial(20003, 3).unwrap() - 1;
    assert!(boxes.lines().any(|l| l == format!("3,20000,{positions},68653702")), "boxes.csv's 3x20000 row");
}

/// The published few-row manifests of the 4×3000 and 4×3500 boxes read as
/// ones (format, checksum, counts), list the tables README names, and agree
/// with `boxes.csv`'s rows and their levels files.
#[test]
fn the_published_few_row_manifest_agrees_with_boxes_csv() {
    let text = std::fs::read_to_string(results().join("boxes.csv")).unwrap();
    let readme = std::fs::read_to_string(results().join("README.md")).unwrap();
    for c in [3000u32, 3500] {
        let m = chomp_tables::fewrow::FewRowManifest::read_file(&results().join(format!("fewrow-4x{c}-manifest.json"))).unwrap();
        assert_eq!((m.universe.rows, m.universe.cols), (4, c));
        let row = text.lines().find(|l| l.starts_with(&format!("4,{c},"))).unwrap_or_else(|| panic!("boxes.csv's 4x{c} row"));
        assert_eq!(row, format!("4,{c},{},{}", m.positions, m.losses));
        let levels = std::fs::read(results().join(format!("box-4x{c}-levels.csv"))).unwrap();
        let entry = &m.files["levels.csv"];
        assert_eq!((levels.len() as u64, sha256_hex(&levels)), (entry.bytes, entry.sha256.clone()), "4x{c}: the levels file is the run's");
        let table = &m.files[chomp_tables::fewrow::files::TABLE];
        assert!(readme.contains(&table.sha256), "README names the 4x{c} table's SHA-256");
    }
}
