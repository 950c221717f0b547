//! The few-row engine: checked against brute force, against the box
//! engine's level counts (both orientations), at the edges of its types,
//! and against the published count of the 4×500 box.

use chomp_tables::fewrow::{self, FewRowBox, FewRowError, FewRowPosition, FewRowTable, LevelCount, Progress, SolveOptions};
use chomp_tables::solve::solve_in_memory;
use chomp_tables::Universe;

use crate::common::{assert_ok, assert_one_line_error, chomp, partitions, Brute};

fn solve(rows: u32, cols: u32) -> FewRowTable {
    fewrow::solve(FewRowBox::new(rows, cols).unwrap(), &SolveOptions::default(), &Progress::default()).unwrap()
}

fn total_losses(t: &FewRowTable) -> u64 {
    t.level_counts().iter().map(|l| l.losses).sum()
}

#[test]
fn few_row_boxes_agree_with_brute_force() {
    let mut brute = Brute::default();
    for rows in 1..=5 {
        for cols in 1..=6 {
            let t = solve(rows, cols);
            for n in 1..=rows * cols {
                for p in partitions(n, rows, cols) {
                    let got = t.is_loss(&FewRowPosition::new(&p).unwrap()).unwrap();
                    assert_eq!(got, brute.is_loss(&p), "{rows}x{cols}: {p:?}");
                }
            }
        }
    }
}

#[test]
fn few_row_level_counts_equal_the_box_engines() {
    let mut shapes: Vec<(u32, u32)> = (1..=5).flat_map(|r| (1..=12).flat_map(move |c| [(r, c), (c, r)])).collect();
    shapes.extend([(6, 10), (7, 9), (8, 8), (8, 10), (10, 8), (6, 13)]);
    for (rows, cols) in shapes {
        let boxed = solve_in_memory(&Universe::boxed(rows, cols)).unwrap();
        let want: Vec<LevelCount> = (1..=rows * cols)
            .map(|n| LevelCount { tiles: n, positions: boxed.ranking().size(n), losses: boxed.losses(n).len() as u64 })
            .collect();
        assert_eq!(solve(rows, cols).level_counts(), want, "{rows}x{cols}");
    }
}

#[test]
fn two_rows_at_the_widest() {
    // Two-row losses are exactly (a, a − 1): one at every odd level.
    for (rows, cols) in [(2, fewrow::MAX_COLS), (fewrow::MAX_COLS, 2)] {
        let t = solve(rows, cols);
        for l in t.level_counts() {
            assert_eq!(l.losses, u64::from(l.tiles % 2 == 1), "{rows}x{cols}, level {}", l.tiles);
        }
    }
    let t = solve(2, fewrow::MAX_COLS);
    assert!(t.is_loss(&FewRowPosition::new(&[65_535, 65_534]).unwrap()).unwrap());
    assert!(!t.is_loss(&FewRowPosition::new(&[65_535, 65_535]).unwrap()).unwrap());
    assert!(!t.is_loss(&FewRowPosition::new(&[65_535]).unwrap()).unwrap());
    assert!(t.is_loss(&FewRowPosition::new(&[1]).unwrap()).unwrap());
    // The transposed box answers by transposing: (2^(a−1), 1) is (a, a − 1) turned.
    let tt = solve(fewrow::MAX_COLS, 2);
    assert!(tt.is_loss(&FewRowPosition::new(&[2, 2, 2, 1]).unwrap()).unwrap());
    assert!(tt.is_loss(&FewRowPosition::new(&[2, 1]).unwrap()).unwrap());
    assert!(!tt.is_loss(&FewRowPosition::new(&[2, 2, 1, 1]).unwrap()).unwrap());
}

#[test]
fn three_rows_of_a_thousand_transpose() {
    let a = solve(3, 1000).level_counts();
    assert_eq!(a, solve(1000, 3).level_counts());
    assert_eq!(a.iter().map(|l| l.positions).sum::<u64>(), 1002 * 1001 * 1003 / 6 - 1);
}

#[test]
fn four_rows_of_five_hundred_give_the_published_count() {
    // Garg 2026 (v1): 4,316,097 losses with four rows of at most 500.
    assert_eq!(total_losses(&solve(4, 500)), 4_316_097);
}

#[test]
fn carried_sets_give_the_plain_reads_table() {
    let plain = SolveOptions { plain_reads: true, ..Default::default() };
    for (rows, cols) in [(3, 300), (4, 90), (90, 4), (4, 1), (3, 1)] {
        let shape = FewRowBox::new(rows, cols).unwrap();
        let carried = solve(rows, cols);
        let read = fewrow::solve(shape, &plain, &Progress::default()).unwrap();
        assert!((0..read.len()).all(|r| carried.entry(r) == read.entry(r)), "{rows}x{cols}");
    }
}

#[test]
fn boxes_outside_the_engine_are_refused() {
    assert_eq!(FewRowBox::new(0, 5), Err(FewRowError::Empty));
    assert!(matches!(FewRowBox::new(9, 9), Err(FewRowError::TooLarge { .. })));
    assert!(matches!(FewRowBox::new(2, 65_536), Err(FewRowError::TooLarge { .. })));
    let opts = SolveOptions { max_memory: Some(1 << 20), ..Default::default() };
    let err = fewrow::solve(FewRowBox::new(4, 500).unwrap(), &opts, &Progress::default()).err().unwrap();
    assert!(err.to_string().contains("needs 46.2 MiB for the 4x500 box (its prefix table), more than the 1.0 MiB allowed"), "{err}");
    let t = solve(3, 5);
    assert!(t.is_loss(&FewRowPosition::new(&[6]).unwrap()).is_err(), "outside the box");
    assert!(t.is_loss(&FewRowPosition::new(&[1, 1, 1, 1]).unwrap()).is_err(), "outside the box");
    assert!(t.is_loss(&FewRowPosition::new(&[]).unwrap()).is_err(), "the empty board");
}

#[test]
fn a_checkpoint_resumes_to_the_same_table() {
    for (rows, cols, from) in [(4, 60, 60), (4, 60, 1), (4, 60, 119), (3, 200, 77), (5, 12, 10)] {
        resume_case(rows, cols, from);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("4x60.ckpt");
    let shape = FewRowBox::new(4, 60).unwrap();
    let opts = SolveOptions { checkpoint: Some(path.clone()), checkpoint_every: Some(std::time::Duration::ZERO), ..Default::default() };
    fewrow::solve(shape, &opts, &Progress::default()).unwrap();
    // A damaged checkpoint is refused, not used.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = fewrow::solve(shape, &opts, &Progress::default()).err().unwrap();
    assert!(err.to_string().contains("damaged"), "{err}");
    // So is one of another box.
    std::fs::remove_file(&path).unwrap();
    fewrow::solve(FewRowBox::new(4, 10).unwrap(), &opts, &Progress::default()).unwrap();
    let err = fewrow::solve(shape, &opts, &Progress::default()).err().unwrap();
    assert!(err.to_string().contains("not of this box"), "{err}");
}

/// Solves `rows × cols` with a checkpoint after every wavefront, then
/// resumes it at wavefront `from` with every later prefix garbage (as a
/// run killed there leaves its table): the same table as a run at once.
fn resume_case(rows: u32, cols: u32, from: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.ckpt");
    let shape = FewRowBox::new(rows, cols).unwrap();
    let whole = solve(rows, cols);
    let opts = SolveOptions { checkpoint: Some(path.clone()), checkpoint_every: Some(std::time::Duration::ZERO), ..Default::default() };
    fewrow::solve(shape, &opts, &Progress::default()).unwrap();
    assert!(!path.with_extension("tmp").exists(), "no temporary file left");
    let (mut entries, last) = fewrow::read_checkpoint(&path, shape).unwrap();
    assert_eq!(last, (shape.k() - 2) * shape.n(), "the last checkpoint is before the last wavefront");
    // Every prefix whose rows but the last two have `from` tiles or more.
    let m = shape.k() as usize - 1;
    let mut p = vec![0u16; m];
    loop {
        if p[..m - 1].iter().map(|&v| u32::from(v)).sum::<u32>() >= from {
            entries[whole.ranking().rank(&p) as usize] = 7;
        }
        // The next non-increasing prefix bounded by the side, or stop.
        let Some(i) = (0..m).rev().find(|&i| p[i] < if i == 0 { shape.n() as u16 } else { p[i - 1] }) else { break };
        p[i] += 1;
        p[i + 1..].iter_mut().for_each(|v| *v = 0);
    }
    write_raw(&path, shape, &entries, from);
    let resumed = fewrow::solve(shape, &opts, &Progress::default()).unwrap();
    assert!((0..whole.len()).all(|r| resumed.entry(r) == whole.entry(r)), "{rows}x{cols} resumed at {from}");
    assert_eq!(resumed.level_counts(), whole.level_counts());
}

/// Writes a checkpoint holding `entries`, to resume at wavefront `next`.
fn write_raw(path: &std::path::Path, shape: FewRowBox, entries: &[u16], next: u32) {
    let table: Vec<std::sync::atomic::AtomicU16> = entries.iter().map(|&e| e.into()).collect();
    fewrow::write_checkpoint(path, shape, &table, next).unwrap();
}

/// `levels` of a `--report-json` file, as (tiles, positions, losses).
fn report_levels(path: &std::path::Path) -> Vec<(u64, u64, u64)> {
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let level = |l: &serde_json::Value| (l["tiles"].as_u64().unwrap(), l["positions"].as_u64().unwrap(), l["losses"].as_u64().unwrap());
    json["levels"].as_array().unwrap().iter().map(level).collect()
}

#[test]
fn the_command_reports_the_box_engines_levels() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    for (rows, cols) in [("4", "30"), ("30", "4")] {
        let few = chomp(&[
            "solve",
            "--engine",
            "few-row",
            "--rows",
            rows,
            "--cols",
            cols,
            "--out",
            &d("few"),
            "--force",
            "-q",
            "--report-json",
            &d("few.json"),
        ]);
        assert_ok(&few, "few-row solve");
        let boxed = chomp(&["solve", "--rows", rows, "--cols", cols, "--out", &d("box"), "--force", "-q", "--report-json", &d("box.json")]);
        assert_ok(&boxed, "box solve");
        let levels = report_levels(&dir.path().join("few.json"));
        assert_eq!(levels.len(), 120);
        assert_eq!(levels, report_levels(&dir.path().join("box.json")), "{rows}x{cols}");
        let csv = std::fs::read_to_string(dir.path().join("few/levels.csv")).unwrap();
        assert_eq!(csv.lines().count(), 121, "a header and a line a level");
        assert!(!dir.path().join("few/fewrow.checkpoint").exists(), "the checkpoint goes once the table is written");
    }
    let err = assert_one_line_error(&chomp(&["solve", "--engine", "few-row", "--max-tiles", "9", "--out", &d("x")]), "tile count");
    assert!(err.contains("--max-tiles needs --engine box"), "{err}");
    let err = assert_one_line_error(&chomp(&["solve", "--engine", "few-row", "--rows", "9", "--cols", "9", "--out", &d("x")]), "9x9");
    assert!(err.contains("at most 8 rows"), "{err}");
    let err = assert_one_line_error(
        &chomp(&["solve", "--engine", "few-row", "--rows", "4", "--cols", "500", "--max-memory", "1M", "--out", &d("x")]),
        "memory",
    );
    assert!(err.contains("more than the 1.0 MiB allowed"), "{err}");
}

#[test]
fn query_reads_a_few_row_table_as_the_box_tables_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    assert_ok(&chomp(&["solve", "--engine", "few-row", "--rows", "6", "--cols", "3", "--out", &d("few"), "-q"]), "few-row solve");
    assert_ok(&chomp(&["solve", "--rows", "6", "--cols", "3", "--out", &d("box"), "-q"]), "box solve");
    let answer = |dir: &str, p: &str| {
        let out = chomp(&["query", p, "--tables", dir, "--json"]);
        assert_ok(&out, p);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v["outcome"].as_str().unwrap().to_string(), v["winning_moves"].clone())
    };
    let mut seen = 0;
    for n in 1..=18 {
        for p in partitions(n, 6, 3) {
            let p: Vec<String> = p.iter().map(|v| v.to_string()).collect();
            let p = p.join(" ");
            assert_eq!(answer(&d("few"), &p), answer(&d("box"), &p), "{p}");
            seen += 1;
        }
    }
    assert_eq!(seen, 83);
    // The table answers the transposed box too (3 rows of up to 6), not beyond.
    assert_eq!(answer(&d("few"), "4 4 1").0, answer(&d("box"), "3 2 2 2").0);
    let err = assert_one_line_error(&chomp(&["query", "7", "--tables", &d("few")]), "outside");
    assert!(err.contains("does not fit"), "{err}");
}
