//! Runs of the engine compared with the published figures in `tests/data/`
//! and with the facts stated in `docs/math.md` (section 2).

use chomp_tables::solve::{self as job, Options, Plan};
use chomp_tables::Universe;
use chomp_tables::{Outcome, Tables};

use crate::common::{data, loss_set, partitions, pos, solve};
use std::collections::{BTreeMap, BTreeSet};

/// Rows of a CSV file as fields (comment lines starting with `#` skipped),
/// after checking its header.
fn csv(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    assert_eq!(lines.next(), Some(header));
    lines.map(|l| l.split(',').map(|f| f.trim().to_string()).collect()).collect()
}

/// Integer rows of a CSV file.
fn csv_u64(text: &str, header: &str) -> Vec<Vec<u64>> {
    csv(text, header).into_iter().map(|r| r.iter().map(|f| f.parse().unwrap()).collect()).collect()
}

/// `(tiles, positions, losses)` of every level, from the manifest.
fn manifest_counts(t: &Tables) -> Vec<Vec<u64>> {
    t.manifest().levels.iter().map(|l| vec![l.tiles as u64, l.positions, l.losses]).collect()
}

#[test]
fn losses_by_tiles_to_40() {
    let published = csv_u64(&data("losses-by-tiles-1-40.csv"), "tiles,positions,losses");
    assert_eq!(published.len(), 40);
    let run = solve(Universe::tiles(40), 0);
    assert_eq!(manifest_counts(&run.tables), published);
    for row in &published {
        assert_eq!(run.tables.ranking().size(row[0] as u32), row[1]);
    }

    // summary.csv carries the same figures, and consistent derived columns.
    let summary = std::fs::read_to_string(run.out.join("summary.csv")).unwrap();
    let rows = csv(&summary, "tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy");
    assert_eq!(rows.len(), 40);
    for (row, want) in rows.iter().zip(&published) {
        let ints: Vec<u64> = row[..3].iter().map(|f| f.parse().unwrap()).collect();
        assert_eq!(&ints, want);
        let (positions, losses) = (want[1] as f64, want[2] as f64);
        let percent: f64 = row[3].parse().unwrap();
        assert!((percent - 100.0 * losses / positions).abs() < 1e-5, "loss_percent {row:?}");
        let ratio: f64 = row[4].parse().unwrap();
        assert!((ratio - losses * positions.ln() / positions).abs() < 1e-5, "conjecture_ratio {row:?}");
        assert_eq!(row[5], "", "no Grundy values were computed");
    }

    // summary.json too.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.out.join("summary.json")).unwrap()).unwrap();
    let levels = json.as_array().unwrap();
    assert_eq!(levels.len(), 40);
    for (l, want) in levels.iter().zip(&published) {
        let got: Vec<u64> = ["tiles", "positions", "losses"].iter().map(|k| l[k].as_u64().unwrap()).collect();
        assert_eq!(&got, want);
    }
}

#[test]
fn explicit_losses_to_12() {
    let mut published: BTreeMap<u32, BTreeSet<Vec<u32>>> = BTreeMap::new();
    for line in data("losing-positions-1-12.txt").lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let rows: Vec<u32> = line.split_whitespace().map(|t| t.parse().unwrap()).collect();
        let fresh = published.entry(rows.iter().sum()).or_default().insert(rows);
        assert!(fresh, "duplicate line {line:?}");
    }
    let run = solve(Universe::tiles(12), 0);
    for n in 1..=12 {
        let want = published.get(&n).cloned().unwrap_or_default();
        assert_eq!(loss_set(&run.tables, n), want, "losses with {n} tiles");
        for rows in &want {
            assert_eq!(run.tables.outcome(&pos(rows)).unwrap(), Outcome::Loss);
        }
    }
    // docs/math.md, section 2: the three losses with 5 tiles.
    let five: BTreeSet<Vec<u32>> = [vec![3, 2], vec![3, 1, 1], vec![2, 2, 1]].into_iter().collect();
    assert_eq!(loss_set(&run.tables, 5), five);
}

#[test]
fn grundy_histogram_to_20() {
    let header = "tiles,grundy,positions";
    let mut published = csv_u64(&data("grundy-histogram-1-20.csv"), header);
    let run = solve(Universe::tiles(20), 20);
    let mut got = csv_u64(&std::fs::read_to_string(run.out.join("grundy_histogram.csv")).unwrap(), header);
    published.sort();
    got.sort();
    assert_eq!(got, published);

    // The manifest's histograms say the same, and each level's largest value is n - 1.
    let from_manifest: Vec<Vec<u64>> = run
        .tables
        .manifest()
        .levels
        .iter()
        .flat_map(|l| {
            let h = l.grundy_histogram.clone().unwrap();
            assert_eq!(l.max_grundy(), Some(l.tiles - 1), "largest value at {} tiles", l.tiles);
            assert_eq!(h[0], l.losses);
            let tiles = l.tiles as u64;
            h.into_iter().enumerate().filter(|&(_, c)| c > 0).map(move |(g, c)| vec![tiles, g as u64, c])
        })
        .collect();
    let mut from_manifest = from_manifest;
    from_manifest.sort();
    assert_eq!(from_manifest, published);
    let summary = std::fs::read_to_string(run.out.join("summary.csv")).unwrap();
    for row in csv(&summary, "tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy") {
        let n: u32 = row[0].parse().unwrap();
        assert_eq!(row[5], (n - 1).to_string(), "max_grundy at {n} tiles");
    }
}

#[test]
fn reference_table_to_50() {
    let published = csv_u64(&data("reference-table-20-50.csv"), "tiles,positions,losses");
    assert!(!published.is_empty());
    let run = solve(Universe::tiles(50), 0);
    let counts = manifest_counts(&run.tables);
    for row in &published {
        assert_eq!(counts[row[0] as usize - 1], *row);
    }
    // docs/math.md, section 2: 42, 220, 1022 and 4976 losses at 20, 30, 40 and 50 tiles.
    let losses: Vec<u64> = [20, 30, 40, 50].iter().map(|&n| counts[n - 1][2]).collect();
    assert_eq!(losses, [42, 220, 1022, 4976]);
}

#[test]
fn square_boxes_losses_and_winning_move() {
    let published = csv_u64(&data("box-square-losses-1-8.csv"), "n,losses");
    assert_eq!(published.iter().map(|r| r[0]).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
    for row in &published {
        let n = row[0] as u32;
        let run = solve(Universe::boxed(n, n), 0);
        let m = run.tables.manifest();
        let losses: u64 = m.levels.iter().map(|l| l.losses).sum();
        assert_eq!(losses, row[1], "losses in the {n}x{n} box");
        let positions: u64 = m.levels.iter().map(|l| l.positions).sum();
        let binom = (1..=n as u64).fold(1u64, |acc, i| acc * (n as u64 + i) / i);
        assert_eq!(positions + 1, binom, "C(2n, n) positions in the {n}x{n} box, the empty one included");
        if n >= 2 {
            let square = pos(&vec![n; n as usize]);
            assert_eq!(run.tables.outcome(&square).unwrap(), Outcome::Win);
            assert_eq!(run.tables.winning_moves(&square).unwrap(), vec![[1, 1]], "{n}x{n} square");
        }
    }
}

#[test]
fn two_row_rectangles_and_losses() {
    let run = solve(Universe::boxed(2, 12), 0);
    for n in 2..=12u32 {
        assert_eq!(run.tables.winning_moves(&pos(&[n, n])).unwrap(), vec![[1, n - 1]], "2x{n}");
    }
    for a in 1..=12u32 {
        let p = if a == 1 { pos(&[1]) } else { pos(&[a, a - 1]) };
        assert_eq!(run.tables.outcome(&p).unwrap(), Outcome::Loss, "{p}");
    }
    let run = solve(Universe::tiles(40), 0);
    for a in 2..=20u32 {
        assert_eq!(run.tables.outcome(&pos(&[a, a - 1])).unwrap(), Outcome::Loss, "({a}, {})", a - 1);
    }
}

#[test]
fn documented_game_facts_to_40_tiles() {
    let run = solve(Universe::tiles(40), 0);
    let t = &run.tables;
    // `3 2 1` has three winning moves.
    assert_eq!(t.winning_moves(&pos(&[3, 2, 1])).unwrap(), vec![[0, 2], [1, 1], [2, 0]]);
    for n in 1..=40 {
        for rows in partitions(n, n, n) {
            let p = pos(&rows);
            let height = rows.len() as u32;
            // Rectangles other than 1x1 are wins.
            if rows.iter().all(|&r| r == rows[0]) {
                let want = if n == 1 { Outcome::Loss } else { Outcome::Win };
                assert_eq!(t.outcome(&p).unwrap(), want, "rectangle {p}");
            }
            // First row as long as the first column: (1, 1) wins (when
            // (1, 1) is a cell: the hook `2 1` is a loss).
            if rows.len() >= 2 && rows[1] >= 2 && rows[0] == height {
                assert!(t.winning_moves(&p).unwrap().contains(&[1, 1]), "{p}: (1,1) should win");
            }
        }
    }
}

#[test]
fn conjugates_agree_to_20_tiles() {
    let run = solve(Universe::tiles(20), 20);
    let t = &run.tables;
    for n in 1..=20 {
        for rows in partitions(n, n, n) {
            let p = pos(&rows);
            let c = p.conjugate();
            assert_eq!(t.outcome(&p).unwrap(), t.outcome(&c).unwrap(), "{p} / {c}");
            assert_eq!(t.grundy(&p).unwrap(), t.grundy(&c).unwrap(), "{p} / {c}");
            let mut transposed: Vec<[u32; 2]> = t.winning_moves(&p).unwrap().into_iter().map(|[a, b]| [b, a]).collect();
            transposed.sort();
            assert_eq!(transposed, t.winning_moves(&c).unwrap(), "{p} / {c}");
        }
    }
}

#[test]
fn single_rows_and_hooks() {
    let run = solve(Universe::tiles(24), 24);
    let t = &run.tables;
    for n in 1..=24u32 {
        assert_eq!(t.grundy(&pos(&[n])).unwrap(), Some((n - 1) as u8), "single row {n}");
    }
    // Hook (a, 1^(b-1)): g = (a-1) XOR (b-1).
    for a in 1..=24u32 {
        for b in 1..=25 - a {
            let mut rows = vec![a];
            rows.resize(b as usize, 1);
            let want = ((a - 1) ^ (b - 1)) as u8;
            assert_eq!(t.grundy(&pos(&rows)).unwrap(), Some(want), "hook {rows:?}");
        }
    }
}

#[test]
fn two_row_closed_form_below_60() {
    // A 2 x 59 box holds every two-row position with a top row below 60.
    let run = solve(Universe::boxed(2, 59), 2 * 59);
    let t = &run.tables;
    for n in 1..60u32 {
        for m in 0..=n {
            let p = if m == 0 { pos(&[n]) } else { pos(&[n, m]) };
            let want = chomp_tables::game::closed_form::two_rows(n, m);
            assert_eq!(t.grundy(&p).unwrap(), Some(want as u8), "({n}, {m})");
            let want_outcome = if want == 0 { Outcome::Loss } else { Outcome::Win };
            assert_eq!(t.outcome(&p).unwrap(), want_outcome, "({n}, {m})");
        }
    }
}

#[test]
fn row_bounded_runs_agree_with_the_tile_run() {
    // Few-row families and boxes are sub-families closed under moves: their
    // positions must have the same outcome as in the unbounded run.
    let full = solve(Universe::tiles(32), 0);
    for u in [Universe { rows: Some(3), cols: None, tiles: Some(32) }, Universe { rows: Some(4), cols: Some(9), tiles: Some(32) }] {
        let run = solve(u, 0);
        let mut checked = 0;
        for n in 1..=32 {
            let losses = loss_set(&run.tables, n);
            let mut want = BTreeSet::new();
            for rows in loss_set(&full.tables, n) {
                if rows.len() as u32 <= u.rows.unwrap_or(u32::MAX) && rows[0] <= u.cols.unwrap_or(u32::MAX) {
                    want.insert(rows);
                }
            }
            checked += want.len();
            assert_eq!(losses, want, "{u:?}, level {n}");
        }
        assert!(checked > 40, "{u:?}: only {checked} losses");
    }
}

#[test]
fn interrupted_run_resumes_to_the_same_tables() {
    let universe = Universe::tiles(24);
    let plan = Plan::new(universe, 18);
    let fresh = solve(universe, 18);
    for stop_after in [1, 18, 21] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("tables");
        // Checkpoint every level, so that each level's report follows its checkpoint.
        let opts = Options { checkpoint_seconds: 0.0, ..Options::new(out.clone()) };
        // Abort the run (as a crash would) right after level `stop_after` is checkpointed.
        let aborted = std::panic::catch_unwind(|| {
            let _ = job::run(&plan, &opts, |e| {
                if let job::Event::Level(r) = e {
                    if r.stats.tiles == stop_after {
                        panic!("simulated crash");
                    }
                }
            });
        });
        assert!(aborted.is_err());
        // The checkpointed levels can already be probed; later ones are refused.
        let partial = Tables::open(&out).unwrap();
        assert_eq!(partial.manifest().levels_complete, stop_after);
        assert!(!partial.manifest().complete);
        assert_eq!(
            partial.outcome(&pos(&vec![1; stop_after as usize])).unwrap(),
            fresh.tables.outcome(&pos(&vec![1; stop_after as usize])).unwrap()
        );
        assert!(partial.outcome(&pos(&vec![1; stop_after as usize + 1])).is_err(), "level {} is not complete", stop_after + 1);
        let mut resumed_from = None;
        let manifest = job::run(&plan, &opts, |e| {
            if let job::Event::Resumed { levels_complete } = e {
                resumed_from = Some(*levels_complete);
            }
        })
        .expect("resumed run");
        assert_eq!(resumed_from, Some(stop_after), "the run resumes after the last checkpoint");
        assert_eq!(&manifest, fresh.tables.manifest(), "stopped after level {stop_after}");
        for (rel, entry) in &manifest.files {
            assert_eq!(std::fs::read(out.join(rel)).unwrap(), std::fs::read(fresh.out.join(rel)).unwrap(), "{rel}");
            assert_eq!(entry, &fresh.tables.manifest().files[rel]);
        }
    }
}

#[test]
fn grundy_values_are_the_mex_of_their_children_across_blocks() {
    use rand::{Rng, SeedableRng};
    let n = 46;
    let run = solve(Universe::tiles(n), n);
    let t = &run.tables;
    let size = t.ranking().size(n);
    let block = chomp_tables::store::format::GRUNDY_BLOCK as u64;
    assert!(size > block, "level {n} spans several Grundy blocks");
    let losses = t.level_losses(n).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(46);
    let mut ranks: Vec<u64> = (0..1500).map(|_| rng.gen_range(0..size)).collect();
    ranks.extend((0..4).chain(block - 4..block + 4).chain(size - 4..size));
    for rank in ranks {
        let p = t.ranking().unrank(n, rank).unwrap();
        let g = t.grundy(&p).unwrap().expect("value computed");
        let mut seen = [false; 64];
        for (_, child) in p.moves() {
            seen[t.grundy(&child).unwrap().expect("value computed") as usize] = true;
        }
        let mex = seen.iter().position(|&s| !s).unwrap() as u8;
        assert_eq!(g, mex, "{p}");
        assert_eq!(g == 0, losses.contains(rank), "{p}");
    }
}
