//! Boxes at the edge of the position type: rows and columns of 255. Their
//! losses, level by level, against an independent count that shares no
//! code with the engine (one losing last row per prefix of the other rows),
//! and an `r × c` box against its transpose.

use chomp_tables::cluster::ThreadCluster;
use chomp_tables::solve::{run_on, solve_in_memory, Options, Plan};
use chomp_tables::Universe;

/// Losses by level (`[0]` for the empty level) of every position of at
/// most `k` rows of at most `cols` columns, counted prefix by prefix: the
/// first `k − 1` rows `p` (some of them 0) lose with at most one last row,
/// `last[p]` (Unique Extension: a longer last row moves to it).
///
/// A move bites row `i < k − 1` at column `j`: the prefix becomes `p'`
/// (row `i` and those below it cut to `j`) and the last row `d` becomes
/// `min(d, j)`. With `x = last[p']`, it reaches a loss for `d = x` (as
/// `x <= j`), and for every `d > j` when `x = j`. The last row of `p` is
/// the shortest that no such move reaches a loss from.
pub fn few_row_losses(k: usize, cols: u32) -> Vec<u64> {
    assert!(k >= 2);
    let base = cols as usize + 1;
    let digits = k - 1;
    let size = base.pow(digits as u32);
    const NONE: u16 = u16::MAX;
    let mut last = vec![NONE; size];
    let mut losses = vec![0u64; k * cols as usize + 1];
    let mut p = vec![0u32; digits];
    let mut child = vec![0u32; digits];
    let index = |rows: &[u32]| rows.iter().fold(0usize, |acc, &r| acc * base + r as usize);
    let mut killed = vec![false; base];
    for at in 0..size {
        // The rows of prefix `at`, top row first; in increasing index order
        // every prefix a move reaches comes first (it is lexicographically smaller).
        let mut rest = at;
        for d in (0..digits).rev() {
            p[d] = (rest % base) as u32;
            rest /= base;
        }
        if p[0] == 0 || p.windows(2).any(|w| w[1] > w[0]) {
            continue;
        }
        let below = p[digits - 1] as usize;
        killed[..=below].iter_mut().for_each(|x| *x = false);
        let mut above = usize::MAX; // every last row beyond this reaches a loss
        for i in 0..digits {
            for j in u32::from(i == 0)..p[i] {
                child.copy_from_slice(&p);
                for r in child[i..].iter_mut() {
                    *r = (*r).min(j);
                }
                let x = last[index(&child)];
                if x != NONE {
                    killed[x as usize] = true;
                    if x as u32 == j {
                        above = above.min(j as usize);
                    }
                }
            }
        }
        if let Some(d) = (0..=below.min(above)).find(|&d| !killed[d]) {
            last[at] = d as u16;
            losses[p.iter().sum::<u32>() as usize + d] += 1;
        }
    }
    losses
}

/// Losses by level of an in-memory solve of the `rows × cols` box.
fn engine_losses(rows: u32, cols: u32) -> Vec<u64> {
    let s = solve_in_memory(&Universe::boxed(rows, cols)).unwrap();
    (0..=rows * cols).map(|n| if n == 0 { 0 } else { s.losses(n).len() as u64 }).collect()
}

#[test]
fn the_independent_count_agrees_with_brute_force_on_small_boxes() {
    use crate::common::{partitions, Brute};
    let mut brute = Brute::default();
    for (k, cols) in [(2, 7), (3, 6), (4, 5)] {
        let want: Vec<u64> = (0..=k * cols)
            .map(|n| if n == 0 { 0 } else { partitions(n, k, cols).iter().filter(|p| brute.is_loss(p)).count() as u64 })
            .collect();
        assert_eq!(few_row_losses(k as usize, cols), want, "{k}x{cols}");
    }
}

#[test]
fn boxes_of_255_columns_and_rows_lose_as_counted() {
    for k in [2u32, 3] {
        let want = few_row_losses(k as usize, 255);
        assert_eq!(engine_losses(k, 255), want, "{k}x255 box, level by level");
        assert_eq!(engine_losses(255, k), want, "255x{k} box, level by level");
    }
}

#[test]
fn a_box_and_its_transpose_lose_alike_at_254_and_255() {
    for (rows, cols) in [(2, 254), (3, 254), (4, 40)] {
        let (a, b) = (engine_losses(rows, cols), engine_losses(cols, rows));
        assert_eq!(a, b, "{rows}x{cols} against {cols}x{rows}, level by level");
        assert_eq!(a, few_row_losses(rows as usize, cols), "{rows}x{cols}");
    }
}

/// A table run of 3×255 on three processes checks itself at every level
/// (its sample holds the level's longest rows), the processes splitting
/// the levels at keys up to two full rows.
#[test]
fn a_run_of_three_rows_of_255_on_three_processes_passes_its_checks() {
    let want = few_row_losses(3, 255);
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::boxed(3, 255), 0);
    let cluster = ThreadCluster { processes: 3, per_node: 3, threads: 1, piece_bytes: 1 << 20 };
    let out = tmp.path().join("three");
    for (p, r) in cluster.run(|comm| run_on(&plan, &Options::new(&out), comm, |_| {}).map_err(|e| e.to_string())).into_iter().enumerate() {
        let m = r.unwrap().unwrap_or_else(|e| panic!("process {p}: {e}"));
        let got: Vec<u64> = std::iter::once(0).chain(m.levels.iter().map(|l| l.losses)).collect();
        assert_eq!(got, want, "process {p}");
        assert_eq!(m.checks.len(), 765, "every level checked");
    }
}

/// 4×255 and 255×4 (1.9·10⁸ positions each) in memory, both with the box
/// engine: a few minutes on two cores (the tall one most of them), run by
/// `cargo test --release --test it box_edge -- --ignored`.
#[test]
#[ignore]
fn four_rows_of_255_lose_as_counted() {
    let want = few_row_losses(4, 255);
    assert_eq!(engine_losses(4, 255), want, "4x255 box, level by level");
    assert_eq!(engine_losses(255, 4), want, "255x4 box, level by level");
}

/// 4×255 through `chomp solve` (the box engine, its check on a small
/// sample) and 255×4 (the few-row engine, which `solve` picks: the box
/// engine prices a tall box several times its transpose), level by level
/// against the independent count.
#[test]
fn four_rows_of_255_solve_as_counted_both_ways() {
    let want = few_row_losses(4, 255);
    let dir = tempfile::tempdir().unwrap();
    for (rows, cols, few_row) in [(4u32, 255u32, false), (255, 4, true)] {
        let (out, json) = (dir.path().join(format!("{rows}x{cols}")), dir.path().join(format!("{rows}x{cols}.json")));
        let (r, c) = (rows.to_string(), cols.to_string());
        let args = [
            "solve",
            "--rows",
            &r,
            "--cols",
            &c,
            "--check-samples",
            "8",
            "--out",
            out.to_str().unwrap(),
            "--report-json",
            json.to_str().unwrap(),
        ];
        let run = crate::common::chomp(&args);
        crate::common::assert_ok(&run, &format!("{rows}x{cols}"));
        // The engine that wrote it: its prefix table, or the box engine's level tables.
        assert_eq!(out.join(chomp_tables::fewrow::files::TABLE).is_file(), few_row, "{rows}x{cols}");
        assert_eq!(out.join("losses").is_dir(), !few_row, "{rows}x{cols}");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let mut got = vec![0u64];
        got.extend(report["levels"].as_array().unwrap().iter().map(|l| l["losses"].as_u64().unwrap()));
        assert_eq!(got, want, "{rows}x{cols}, level by level");
    }
}

/// Past the box engine's sides: `solve` without `--engine` takes 2×256,
/// 3×256 and their transposes to the few-row engine, and each gives the
/// independent count level by level (`r × c` and `c × r` alike).
#[test]
fn boxes_of_256_lose_as_counted_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    for k in [2u32, 3] {
        let want = few_row_losses(k as usize, 256);
        for (rows, cols) in [(k, 256), (256, k)] {
            let (out, json) = (dir.path().join(format!("{rows}x{cols}")), dir.path().join(format!("{rows}x{cols}.json")));
            let args = [
                "solve",
                "--rows",
                &rows.to_string(),
                "--cols",
                &cols.to_string(),
                "--quiet",
                "--out",
                out.to_str().unwrap(),
                "--report-json",
                json.to_str().unwrap(),
            ];
            crate::common::assert_ok(&crate::common::chomp(&args), &format!("{rows}x{cols}"));
            let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let mut got = vec![0u64];
            got.extend(report["levels"].as_array().unwrap().iter().map(|l| l["losses"].as_u64().unwrap()));
            assert_eq!(got, want, "{rows}x{cols}, level by level");
        }
    }
}
