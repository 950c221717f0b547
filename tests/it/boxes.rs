//! Boxes: the in-memory solve, rectangle openings and box counts, checked
//! against the brute-force solver (`common::game`) and against table runs.

use chomp_tables::read::openings::{self, rectangle_openings, table_box_counts};
use chomp_tables::solve::solve_in_memory;
use chomp_tables::Universe;

use crate::common::{assert_ok, chomp, data, partitions, solve, text, Brute, Rows};
use std::collections::BTreeSet;

/// The losses of level `n` of an in-memory solve, as row lists.
fn memory_losses(s: &chomp_tables::solve::Solved, n: u32) -> BTreeSet<Rows> {
    s.losses(n).iter().map(|&r| s.ranking().unrank(n, r).unwrap().rows().iter().map(|&x| x as u32).collect()).collect()
}

#[test]
fn in_memory_boxes_agree_with_brute_force() {
    let mut brute = Brute::default();
    for rows in 1..=5 {
        for cols in 1..=6 {
            let s = solve_in_memory(&Universe::boxed(rows, cols)).unwrap();
            for n in 1..=rows * cols {
                let want: BTreeSet<Rows> = partitions(n, rows, cols).into_iter().filter(|p| brute.is_loss(p)).collect();
                assert_eq!(memory_losses(&s, n), want, "{rows}x{cols} box, level {n}");
                assert!(s.losses(n).windows(2).all(|w| w[0] < w[1]), "ranks increase");
            }
        }
    }
}

#[test]
fn in_memory_boxes_agree_with_table_runs() {
    for (rows, cols) in [(7, 7), (6, 9), (9, 5)] {
        let u = Universe::boxed(rows, cols);
        let s = solve_in_memory(&u).unwrap();
        let run = solve(u, 0);
        for n in 1..=rows * cols {
            let table: Vec<u64> = run.tables.level_losses(n).unwrap().iter().collect();
            assert_eq!(s.losses(n), &table[..], "{rows}x{cols}, level {n}");
        }
        assert_eq!(s.rectangle_openings(), rectangle_openings(&run.tables).unwrap(), "{rows}x{cols} openings");
        assert_eq!(s.box_counts(), table_box_counts(&run.tables).unwrap(), "{rows}x{cols} box counts");
    }
}

#[test]
fn rectangle_openings_agree_with_brute_force() {
    let mut brute = Brute::default();
    let s = solve_in_memory(&Universe::boxed(6, 7)).unwrap();
    let all = s.rectangle_openings();
    assert_eq!(all.len(), 6 * 7);
    for o in &all {
        let rect: Rows = vec![o.cols; o.rows as usize];
        let mut want = brute.winning_moves(&rect);
        want.sort();
        assert_eq!(o.winning_moves, want, "{}x{}", o.rows, o.cols);
    }
    // A symmetric universe answers a rectangle by its transpose too.
    let sq = solve_in_memory(&Universe::boxed(5, 5)).unwrap();
    assert!(sq.rectangle_opening(6, 1).is_none(), "outside the box");
    assert_eq!(sq.rectangle_opening(3, 5).unwrap().winning_moves, {
        let mut w = brute.winning_moves(&[5, 5, 5]);
        w.sort();
        w
    });
}

#[test]
fn box_counts_match_the_squares_reference() {
    let s = solve_in_memory(&Universe::boxed(8, 8)).unwrap();
    let counts = s.box_counts();
    assert_eq!(counts.len(), 64);
    let reference = data("box-square-losses-1-8.csv");
    let mut squares = 0;
    for line in reference.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let (n, losses) = line.split_once(',').unwrap();
        let (n, losses): (u32, u64) = (n.parse().unwrap(), losses.parse().unwrap());
        let b = counts.iter().find(|b| b.rows == n && b.cols == n).unwrap();
        assert_eq!(b.losses, losses, "{n}x{n}");
        assert_eq!(b.positions, openings::binomial(2 * n, n).unwrap() - 1, "{n}x{n}");
        squares += 1;
    }
    assert_eq!(squares, 8);
    // A rectangle and its transpose have as many losses.
    for b in &counts {
        let t = counts.iter().find(|t| t.rows == b.cols && t.cols == b.rows).unwrap();
        assert_eq!(b.losses, t.losses, "{}x{}", b.rows, b.cols);
    }
    // Positions of the published boxes: 10x42 and 20x20.
    assert_eq!(openings::binomial(52, 10), Some(15_820_024_220));
    assert_eq!(openings::binomial(40, 20), Some(137_846_528_820));
    assert_eq!(openings::binomial(200, 100), None);
}

#[test]
fn bench_times_a_box_solved_in_memory() {
    let o = chomp(&["bench", "--rows", "5", "--cols", "7", "--repeat", "3"]);
    assert_ok(&o, "bench --rows 5 --cols 7");
    let out = text(&o.stdout);
    // The counts it prints are the box's own (positions without the empty box).
    let s = solve_in_memory(&Universe::boxed(5, 7)).unwrap();
    let losses: usize = (1..=35).map(|n| s.losses(n).len()).sum();
    assert!(out.contains("the 5x7 box in memory (the word sieve)") && out.contains("3 solves"), "{out}");
    assert!(out.contains(&format!("{} positions, {losses} losses", openings::binomial(12, 5).unwrap() - 1)), "{out}");
    // Bad boxes are one-line errors; a box needs both sides.
    crate::common::assert_one_line_error(&chomp(&["bench", "--rows", "0", "--cols", "3"]), "a box without rows");
    assert_eq!(chomp(&["bench", "--rows", "3"]).status.code(), Some(2));
    assert_eq!(chomp(&["bench", "--rows", "3", "--cols", "3", "--repeat", "0"]).status.code(), Some(2));
}

#[test]
fn openings_cli_solves_the_box_it_is_asked_about() {
    let o = chomp(&["openings", "--rows", "2", "--cols", "9"]);
    assert_ok(&o, "openings --rows 2 --cols 9");
    assert_eq!(text(&o.stdout), "rows,cols,winning_moves\n2,9,1:8\n");
    let o = chomp(&["openings", "--rows", "4", "--cols", "6", "--all"]);
    assert_ok(&o, "openings --all");
    let s = solve_in_memory(&Universe::boxed(4, 6)).unwrap();
    assert_eq!(text(&o.stdout), openings::openings_csv(&s.rectangle_openings()));

    // The same from tables, whole or one rectangle; and the box counts.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("b");
    crate::common::chomp_solve(&d, &["--rows", "4", "--cols", "6", "--quiet"]);
    let d = d.to_str().unwrap();
    assert_eq!(text(&chomp(&["openings", "--tables", d]).stdout), text(&o.stdout));
    assert_eq!(text(&chomp(&["openings", "--tables", d, "--rows", "3", "--cols", "5"]).stdout), {
        let one = s.rectangle_opening(3, 5).unwrap();
        openings::openings_csv(&[one])
    });
    let b = chomp(&["boxes", "--tables", d]);
    assert_ok(&b, "boxes");
    assert_eq!(text(&b.stdout), openings::boxes_csv(&s.box_counts()));

    // Errors are one line.
    for args in [&["openings"][..], &["openings", "--rows", "3"], &["openings", "--rows", "0", "--cols", "3"]] {
        let o = chomp(args);
        assert!(!o.status.success(), "{args:?}");
    }
    let o = chomp(&["openings", "--rows", "200", "--cols", "200"]);
    crate::common::assert_one_line_error(&o, "a box too large to rank");
    // A box far beyond any machine (10^17 bytes of mark bits) is refused in
    // one line naming what it needs and what the machine has, before
    // anything is mapped; --force cannot make the memory.
    for force in [&[][..], &["--force"]] {
        let o = chomp(&[&["openings", "--rows", "25", "--cols", "40"][..], force].concat());
        let line = crate::common::assert_one_line_error(&o, "a box far beyond this machine");
        assert!(line.starts_with("error: solving the 25x40 box: far beyond this machine: it needs "), "{line}");
        assert!(
            line.contains(" of mark bits (")
                && line.contains(" threads, where this machine has ")
                && line.ends_with(" available; not started"),
            "{line}"
        );
    }
}

/// `chomp solve` of a box with its mark bits held in two epochs (the
/// threshold lowered by `CHOMP_EPOCH_BYTES`).
fn solve_in_epochs(out: &std::path::Path, rows: u32, cols: u32) {
    let o = std::process::Command::new(crate::common::binary::BIN)
        .args(["solve", "--rows", &rows.to_string(), "--cols", &cols.to_string(), "--quiet", "--out", out.to_str().unwrap()])
        .env("CHOMP_EPOCH_BYTES", "1000")
        .output()
        .unwrap();
    assert_ok(&o, "solve in two epochs");
}

#[test]
fn two_epochs_give_the_same_tables_and_resume_in_either() {
    use chomp_tables::Manifest;
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    crate::common::chomp_solve(&one, &["--rows", "9", "--cols", "9", "--quiet"]);
    solve_in_epochs(&two, 9, 9);
    assert!(crate::common::contents(&one) == crate::common::contents(&two), "same bytes in one epoch or two");
    // Killed in the first epoch (level 20) or the second (level 60): the rerun resumes to the same bytes.
    for k in [20, 60] {
        let mut m = Manifest::read(&two).unwrap();
        m.complete = false;
        m.keep_levels(k);
        m.write(&two).unwrap();
        solve_in_epochs(&two, 9, 9);
        assert!(crate::common::contents(&one) == crate::common::contents(&two), "resumed after level {k}");
    }
}

/// A loss with many parents (in a box the L shape `[c, c − 1]`, by tile
/// count the hook with equal arms) has its parents pushed by every thread:
/// with the threshold at 1 every run (and in a box every set of new rows)
/// is shared that way, and the tables are the same.
#[test]
fn parents_shared_among_threads_give_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, job) in [("box", &["--rows", "8", "--cols", "9"][..]), ("tiles", &["--max-tiles", "42", "--grundy-max-tiles", "30"][..])] {
        let (one, shared) = (tmp.path().join(format!("{name}-one")), tmp.path().join(format!("{name}-shared")));
        crate::common::chomp_solve(&one, &[job, &["--quiet"]].concat());
        let o = std::process::Command::new(crate::common::binary::BIN)
            .args([&["solve", "--quiet", "--out", shared.to_str().unwrap()], job].concat())
            .env("CHOMP_PARALLEL_PARENTS", "1")
            .env("RAYON_NUM_THREADS", "3")
            .output()
            .unwrap();
        assert_ok(&o, "solve with every loss's parents shared");
        assert!(crate::common::contents(&one) == crate::common::contents(&shared), "{name}: same bytes");
    }
}

/// Tile-count runs whose pending mark bits exceed half of `--max-memory` are
/// sieved in windows: the same tables as one window, and a run cut inside
/// any window resumes to the same bytes.
#[test]
fn windows_give_the_same_tables_and_resume_in_any() {
    use chomp_tables::Manifest;
    let tmp = tempfile::tempdir().unwrap();
    let (one, windows) = (tmp.path().join("one"), tmp.path().join("windows"));
    crate::common::chomp_solve(&one, &["--max-tiles", "66", "--quiet"]);
    let args = ["--max-tiles", "66", "--max-memory", "2M"];
    let o = crate::common::chomp(&[&["solve", "--out", windows.to_str().unwrap()], &args[..]].concat());
    assert_ok(&o, "solve in windows");
    let log = crate::common::text(&o.stderr);
    let opened = log.lines().filter(|l| l.starts_with("window: the marks of levels")).count();
    assert!(opened >= 3, "several windows: {log}");
    assert!(crate::common::contents(&one) == crate::common::contents(&windows), "same bytes in one window or several");
    for k in [10, 61, 64] {
        let mut m = Manifest::read(&windows).unwrap();
        m.complete = false;
        m.keep_levels(k);
        m.write(&windows).unwrap();
        assert_ok(&crate::common::chomp(&[&["solve", "--out", windows.to_str().unwrap()], &args[..]].concat()), "resume in windows");
        assert!(crate::common::contents(&one) == crate::common::contents(&windows), "resumed after level {k}");
    }
}

#[test]
fn a_box_solved_in_memory_serves_as_tables() {
    let u = Universe::boxed(6, 8);
    let t = solve_in_memory(&u).unwrap().tables();
    let run = solve(u, 0);
    for (rows, cols) in [(6, 8), (5, 5), (3, 7), (8, 2)] {
        let p = crate::common::pos(&vec![cols; rows as usize]);
        assert_eq!(t.winning_moves(&p).unwrap(), run.tables.winning_moves(&p).unwrap(), "{rows}x{cols}");
        assert_eq!(t.outcome(&p).unwrap(), run.tables.outcome(&p).unwrap());
    }
    assert!(t.outcome(&crate::common::pos(&[9])).is_err(), "outside the box");
    // chomp play --rows/--cols plays as from the published tables.
    let box815 = concat!(env!("CARGO_MANIFEST_DIR"), "/results/box-8x15");
    for (position, level) in [("8 8 8 8 8 8 8 8 8 8 8 8 8 8 8", "very-hard"), ("15 15 15 9 3", "hard"), ("6 6 5 2", "medium")] {
        let mem = chomp(&["play", position, "--rows", "8", "--cols", "15", "--level", level, "--seed", "3", "--json"]);
        assert_ok(&mem, "play --rows 8 --cols 15");
        let tables = chomp(&["play", position, "--tables", box815, "--level", level, "--seed", "3", "--json"]);
        assert_eq!(text(&mem.stdout), text(&tables.stdout), "{position} at {level}");
    }
}
