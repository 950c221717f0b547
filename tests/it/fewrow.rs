//! The few-row engine: checked against brute force, against the box
//! engine's level counts (both orientations), at the edges of its types,
//! and against the published count of the 4×500 box.

use chomp_tables::fewrow::{self, FewRowBox, FewRowError, FewRowPosition, FewRowTable, LevelCount, Progress, SolveOptions};
use chomp_tables::solve::solve_in_memory;
use chomp_tables::Universe;
use std::path::Path;

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
    for (rows, cols) in [(3, 300), (300, 3), (3, 130), (4, 90), (90, 4), (4, 1), (3, 1), (3, 2), (5, 1), (5, 2)] {
        let shape = FewRowBox::new(rows, cols).unwrap();
        let carried = solve(rows, cols);
        let read = fewrow::solve(shape, &plain, &Progress::default()).unwrap();
        assert!((0..read.len()).all(|r| carried.entry(r) == read.entry(r)), "{rows}x{cols}");
    }
    // Five to eight rows with every number of rows carried, the rest read.
    for (rows, cols) in [(5, 40), (6, 18), (7, 11), (8, 9), (9, 8), (5, 70)] {
        let shape = FewRowBox::new(rows, cols).unwrap();
        let read = fewrow::solve(shape, &plain, &Progress::default()).unwrap();
        for carry in 0..shape.k() as usize - 1 {
            let opts = SolveOptions { carry: Some(carry), ..Default::default() };
            let carried = fewrow::solve(shape, &opts, &Progress::default()).unwrap();
            assert!((0..read.len()).all(|r| carried.entry(r) == read.entry(r)), "{rows}x{cols} carrying {carry} rows");
        }
    }
}

#[test]
fn the_rows_carried_are_those_that_fit() {
    let shape = FewRowBox::new(6, 60).unwrap();
    let (all, need) = fewrow::carried_rows(shape, None);
    assert_eq!(all, 4, "every prefix row but the last");
    let table = shape.table_bytes().unwrap();
    let need = need.unwrap();
    assert!(need > table, "the sets take memory");
    // With room for the table and a little more, fewer rows.
    let (some, less) = fewrow::carried_rows(shape, Some(table + (need - table) / 2));
    assert!(some < all && less.unwrap() <= table + (need - table) / 2, "{some} rows in {less:?}");
    assert_eq!(fewrow::carried_rows(shape, Some(table)), (0, Some(table)));
    // The plain reads shrink with every row carried.
    let reads: Vec<u64> = (0..=4).map(|c| fewrow::reads(shape, c)).collect();
    assert!(reads.windows(2).all(|w| w[0] > w[1]), "{reads:?}");
}

#[test]
fn boxes_outside_the_engine_are_refused() {
    assert_eq!(FewRowBox::new(0, 5), Err(FewRowError::Empty));
    assert!(matches!(FewRowBox::new(9, 9), Err(FewRowError::TooLarge { .. })));
    assert!(matches!(FewRowBox::new(2, 65_536), Err(FewRowError::TooLarge { .. })));
    let opts = SolveOptions { max_memory: Some(1 << 20), ..Default::default() };
    let err = fewrow::solve(FewRowBox::new(4, 500).unwrap(), &opts, &Progress::default()).err().unwrap();
    assert!(err.to_string().contains("needs 40.2 MiB for the 4x500 box (its prefix table), more than the 1.0 MiB allowed"), "{err}");
    let t = solve(3, 5);
    assert!(t.is_loss(&FewRowPosition::new(&[6]).unwrap()).is_err(), "outside the box");
    assert!(t.is_loss(&FewRowPosition::new(&[1, 1, 1, 1]).unwrap()).is_err(), "outside the box");
    assert!(t.is_loss(&FewRowPosition::new(&[]).unwrap()).is_err(), "the empty board");
}

#[test]
fn a_checkpoint_resumes_to_the_same_table() {
    for (rows, cols, from) in [
        (4, 60, 60),
        (4, 60, 1),
        (4, 60, 119),
        (3, 700, 77),
        (3, 700, 301),
        (3, 1100, 1500),
        (5, 12, 10),
        (6, 10, 7),
        (5, 20, 31),
        (7, 8, 20),
    ] {
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
    // Three rows go by anti-diagonals a + c of their prefixes (a, c).
    let three = shape.k() == 3;
    if three {
        // Blocks of prefixes: the last checkpoint is the anti-diagonal its last block starts.
        assert!(last <= 2 * shape.n() && (shape.n() < 256 || last > 0), "{last}");
    } else {
        assert_eq!(last, (shape.k() - 2) * shape.n(), "the last checkpoint is before the last wavefront");
    }
    // Every prefix whose rows but the last two (three rows: all its rows) have `from` tiles or more.
    let m = shape.k() as usize - 1;
    let mut p = vec![0u16; m];
    loop {
        if p[..if three { m } else { m - 1 }].iter().map(|&v| u32::from(v)).sum::<u32>() >= from {
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

/// A run asked to stop (a batch system's signal) writes its checkpoint at
/// the end of the wavefront in progress and says how far it got; the same
/// run, resumed, gives the table of a run at once. Three rows (blocks by
/// anti-diagonals), four (carried sets) and six (read rows).
#[test]
fn a_stopped_run_checkpoints_and_resumes() {
    for (rows, cols) in [(3, 600), (4, 40), (6, 9)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ckpt");
        let shape = FewRowBox::new(rows, cols).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let opts = SolveOptions { checkpoint: Some(path.clone()), stop: Some(stop.clone()), ..Default::default() };
        let err = fewrow::solve(shape, &opts, &Progress::default()).err().expect("a stopped run returns no table");
        let FewRowError::Stopped { done, total } = err else { panic!("{rows}x{cols}: {err}") };
        assert!(done > 0 && done < total, "{rows}x{cols}: {done} of {total}");
        assert!(err.to_string().contains("run the same command again to resume"), "{err}");
        assert!(path.is_file(), "{rows}x{cols}: the checkpoint is written");
        let (_, next) = fewrow::read_checkpoint(&path, shape).unwrap();
        assert!(next > 0, "{rows}x{cols}: the checkpoint holds the first wavefront");
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        let resumed = fewrow::solve(shape, &opts, &Progress::default()).unwrap();
        let whole = solve(rows, cols);
        assert!((0..whole.len()).all(|r| resumed.entry(r) == whole.entry(r)), "{rows}x{cols} resumed");
    }
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
        // The in-run check: its samples against their children, said in the report.
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("few.json")).unwrap()).unwrap();
        assert_eq!(report["checked_positions"], chomp_tables::fewrow::CHECK_SAMPLES, "{rows}x{cols}");
    }
    let shown = chomp(&["solve", "--engine", "few-row", "--rows", "5", "--cols", "12", "--out", &d("shown")]);
    assert_ok(&shown, "few-row solve, not quiet");
    let line = String::from_utf8_lossy(&shown.stderr).lines().find(|l| l.starts_with("checked ")).map(str::to_owned);
    assert!(
        line.as_deref().is_some_and(
            |l| l.starts_with(&format!("checked {} positions (the fullest first) against their ", chomp_tables::fewrow::CHECK_SAMPLES))
        ),
        "{line:?}"
    );
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

/// The losses of the 4×`n` box by `scripts/fewrow-reference.c` (its own
/// ranking, every bite of every prefix read, nothing shared with the engine).
fn reference_losses(n: u32) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("fewrow-reference");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fewrow-reference.c");
    let built = std::process::Command::new("cc").args(["-O2", "-o"]).arg(&exe).arg(src).status().expect("no C compiler: `apt install gcc`");
    assert!(built.success(), "cc {src}");
    let out = std::process::Command::new(&exe).arg(n.to_string()).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().split(',').next().unwrap().parse().unwrap()
}

#[test]
fn solve_picks_the_few_row_engine_past_the_box_engines_sides() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let want = reference_losses(300);
    for (rows, cols) in [("4", "300"), ("300", "4")] {
        let dry = chomp(&["solve", "--rows", rows, "--cols", cols, "--dry-run", "--out", &d("dry")]);
        assert_ok(&dry, "dry run");
        let err = String::from_utf8_lossy(&dry.stderr);
        assert!(err.contains("engine: the few-row engine") && err.contains("the box engine cannot"), "{err}");
        let run = chomp(&["solve", "--rows", rows, "--cols", cols, "--out", &d("run"), "--force", "--report-json", &d("run.json")]);
        assert_ok(&run, "solve");
        assert!(String::from_utf8_lossy(&run.stderr).contains("engine: the few-row engine"));
        let losses: u64 = report_levels(&dir.path().join("run.json")).iter().map(|l| l.2).sum();
        assert_eq!(losses, want, "{rows}x{cols} against the reference");
        assert!(
            dir.path().join("run").join(chomp_tables::fewrow::files::TABLE).is_file() && dir.path().join("run/manifest.json").is_file()
        );
        std::fs::remove_dir_all(dir.path().join("run")).unwrap();
    }
    // A small box keeps the box engine, and says so in its dry run.
    let dry = chomp(&["solve", "--rows", "4", "--cols", "60", "--dry-run", "--out", &d("dry")]);
    assert_ok(&dry, "dry run");
    let err = String::from_utf8_lossy(&dry.stderr);
    assert!(err.contains("engine: the box engine"), "{err}");
    // So does anything but a box's losses.
    let dry = chomp(&["solve", "--rows", "4", "--cols", "300", "--grundy-max-tiles", "5", "--dry-run", "--out", &d("dry")]);
    assert!(String::from_utf8_lossy(&dry.stderr).contains("engine: the box engine"));
    // A box neither engine takes in the memory allowed: one line naming what
    // the few-row table needs (not the box engine's side), and no directory.
    let run = chomp(&["solve", "--rows", "4", "--cols", "4000", "--max-memory", "2G", "--out", &d("big")]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("needs 19.90 GiB for the 4x4000 box (its prefix table), more than the 2.00 GiB allowed"), "{err}");
    assert!(!dir.path().join("big").exists(), "nothing left behind");
    // A directory that holds a run keeps its engine.
    assert_ok(&chomp(&["solve", "--engine", "few-row", "--rows", "3", "--cols", "5", "--out", &d("few"), "-q"]), "few-row");
    let dry = chomp(&["solve", "--rows", "3", "--cols", "5", "--dry-run", "--out", &d("few")]);
    assert!(String::from_utf8_lossy(&dry.stderr).contains("engine: the few-row engine"), "{}", String::from_utf8_lossy(&dry.stderr));
}

#[test]
fn both_engines_give_the_same_levels() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    for (rows, cols) in [("4", "60"), ("60", "4"), ("5", "20"), ("3", "100"), ("7", "9")] {
        let mut levels = Vec::new();
        for engine in ["box", "few-row"] {
            let json = d(&format!("{engine}.json"));
            let out = chomp(&[
                "solve",
                "--engine",
                engine,
                "--rows",
                rows,
                "--cols",
                cols,
                "--out",
                &d(engine),
                "--force",
                "-q",
                "--report-json",
                &json,
            ]);
            assert_ok(&out, engine);
            levels.push(report_levels(Path::new(&json)));
        }
        let tiles: u64 = rows.parse::<u64>().unwrap() * cols.parse::<u64>().unwrap();
        assert_eq!(levels[0].len() as u64, tiles, "{rows}x{cols}: a level a tile count");
        assert_eq!(levels[0], levels[1], "{rows}x{cols}");
    }
}

#[test]
fn the_census_lists_the_openings_of_its_boxes() {
    use chomp_tables::read::openings::{merge_openings, parse_openings_csv, Opening};
    // Every rectangle of a few-row box against the box engine's openings of the same box.
    for (rows, cols) in [(4, 13), (13, 4), (6, 13), (3, 30), (7, 9)] {
        let boxed = solve_in_memory(&Universe::boxed(rows, cols)).unwrap();
        assert_eq!(solve(rows, cols).rectangle_openings(), boxed.rectangle_openings(), "{rows}x{cols}");
    }
    // The command: boxes merged with a file, rows <= cols, a disagreement refused.
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let boxed = solve_in_memory(&Universe::boxed(9, 9)).unwrap();
    std::fs::write(dir.path().join("9x9.csv"), chomp_tables::read::openings::openings_csv(&boxed.rectangle_openings())).unwrap();
    let run = chomp(&["census", "--box", "3x40,5x12", "--include", &d("9x9.csv"), "--work", &d("work"), "--out", &d("census.csv")]);
    assert_ok(&run, "census");
    let got = parse_openings_csv(&std::fs::read_to_string(dir.path().join("census.csv")).unwrap()).unwrap();
    assert!(got.iter().all(|o| o.rows <= o.cols));
    let mut want: Vec<(u32, u32)> = (1..=9).flat_map(|r| (r..=9).map(move |c| (r, c))).collect();
    want.extend((1..=3).flat_map(|r| (10..=40).map(move |c| (r, c))));
    want.extend((4..=5).flat_map(|r| (10..=12).map(move |c| (r, c))));
    want.sort();
    assert_eq!(got.iter().map(|o| (o.rows, o.cols)).collect::<Vec<_>>(), want);
    let big = solve_in_memory(&Universe::boxed(5, 40)).unwrap().rectangle_openings();
    for o in &got {
        if o.rows <= 5 {
            let b = big.iter().find(|b| (b.rows, b.cols) == (o.rows, o.cols)).unwrap();
            assert_eq!(o, b, "{}x{}", o.rows, o.cols);
        }
    }
    assert!(dir.path().join("work/openings-3x40.csv").is_file() && !dir.path().join("work/3x40.checkpoint").exists());
    // Run again: the boxes are read from the work directory, the same bytes.
    let first = std::fs::read(dir.path().join("census.csv")).unwrap();
    assert_ok(
        &chomp(&["census", "--box", "3x40,5x12", "--include", &d("9x9.csv"), "--work", &d("work"), "--out", &d("again.csv")]),
        "again",
    );
    assert_eq!(std::fs::read(dir.path().join("again.csv")).unwrap(), first);
    // A source that disagrees is named.
    let mut wrong = boxed.rectangle_openings();
    let six = wrong.iter_mut().find(|o| (o.rows, o.cols) == (3, 6)).unwrap();
    six.winning_moves = vec![[0, 5]];
    let turned = wrong.iter_mut().find(|o| (o.rows, o.cols) == (6, 3)).unwrap();
    turned.winning_moves = vec![[5, 0]];
    std::fs::write(dir.path().join("wrong.csv"), chomp_tables::read::openings::openings_csv(&wrong)).unwrap();
    let err = assert_one_line_error(
        &chomp(&["census", "--box", "3x40", "--include", &d("wrong.csv"), "--work", &d("work"), "--out", &d("x.csv")]),
        "disagreement",
    );
    assert!(err.contains("3x6 rectangle") && err.contains("the 3x40 box"), "{err}");
    assert_one_line_error(&chomp(&["census", "--box", "3y40", "--work", &d("work"), "--out", &d("x.csv")]), "bad box");
    assert_one_line_error(&chomp(&["census", "--box", "9x40", "--work", &d("work"), "--out", &d("x.csv")]), "too many rows");
    // Transposes merge: a rectangle and its transpose with turned moves.
    let a = [Opening { rows: 2, cols: 3, winning_moves: vec![[1, 2]] }];
    let b = [Opening { rows: 3, cols: 2, winning_moves: vec![[2, 1]] }];
    assert_eq!(merge_openings([("a", &a[..]), ("b", &b[..])]).unwrap(), a.to_vec());
    let c = [Opening { rows: 3, cols: 2, winning_moves: vec![[1, 2]] }];
    assert!(merge_openings([("a", &a[..]), ("c", &c[..])]).is_err());
}
