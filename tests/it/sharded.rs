//! Levels split into shards (table formats 2 and 3). A sharded run holds
//! exactly the losses and values of a one-table-per-level run, answers every
//! query the same, verifies, resumes to the same bytes and names a damaged
//! shard.

use chomp_tables::read::verify::verify;
use chomp_tables::solve::{run, Options, Plan};
use chomp_tables::store::Kind;
use chomp_tables::{Manifest, TableDir, Tables, Universe};

use crate::common::contents;
use std::path::Path;

fn solve(out: &Path, universe: Universe, grundy: u32, shard_positions: Option<u64>) -> Manifest {
    solve_format(out, universe, grundy, shard_positions, 3)
}

fn solve_format(out: &Path, universe: Universe, grundy: u32, shard_positions: Option<u64>, table_format: u16) -> Manifest {
    let plan = Plan { universe, grundy_max_tiles: grundy, shard_positions, table_format, count_moves: false };
    run(&plan, &Options::new(out), |_| {}).expect("engine run")
}

#[test]
fn sharded_tables_hold_what_one_table_per_level_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [(Universe::tiles(34), 26, 300, (1, 2)), (Universe::boxed(6, 9), 54, 97, (1, 2)), (Universe::tiles(34), 26, 300, (3, 3))];
    for (universe, grundy, limit, (f1, f2)) in cases {
        let (one, many) = (tmp.path().join("one"), tmp.path().join("many"));
        let _ = std::fs::remove_dir_all(&one);
        let _ = std::fs::remove_dir_all(&many);
        let m1 = solve_format(&one, universe, grundy, None, f1);
        let m2 = solve_format(&many, universe, grundy, Some(limit), f2);
        assert_eq!((m1.format_version, m2.format_version), (f1, f2));
        assert_eq!(m2.shard_positions, Some(limit));
        assert_eq!(m1.levels, m2.levels, "same statistics");
        for f in ["summary.csv", "summary.json"] {
            assert_eq!(std::fs::read(one.join(f)).unwrap(), std::fs::read(many.join(f)).unwrap(), "{f}");
        }
        let (t1, t2) = (Tables::open(&one).unwrap(), Tables::open(&many).unwrap());
        let mut sharded_levels = 0;
        for n in 1..=m2.levels_complete {
            let shards = m2.level_shards(n);
            assert!(shards.iter().all(|s| s.positions <= limit));
            sharded_levels += (shards.len() > 1) as u32;
            assert_eq!(TableDir::table_names(&m2, Kind::Losses, n).len(), shards.len());
            let (a, b) = (t1.level_losses(n).unwrap(), t2.level_losses(n).unwrap());
            assert!(a.iter().eq(b.iter()), "level {n}: same losses");
            if n <= grundy {
                let dir1 = TableDir::new(&one);
                let dir2 = TableDir::new(&many);
                assert_eq!(dir1.read_grundy_values(&m1, n).unwrap(), dir2.read_grundy_values(&m2, n).unwrap(), "level {n}");
            }
        }
        assert!(sharded_levels > 5, "the limit splits many levels ({sharded_levels})");
        // Every position of a few levels answers the same, moves and values included.
        for n in [m2.levels_complete / 2, m2.levels_complete.min(grundy), m2.levels_complete] {
            for r in 0..t1.ranking().size(n) {
                let p = t1.ranking().unrank(n, r).unwrap();
                let (x, y) = (t1.answer(&p).unwrap(), t2.answer(&p).unwrap());
                assert_eq!(serde_json::to_string(&x).unwrap(), serde_json::to_string(&y).unwrap());
            }
        }
        let report = verify(&many, 2000, 7).unwrap();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
    }
}

#[test]
fn a_sharded_run_resumes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (clean, killed) = (tmp.path().join("clean"), tmp.path().join("killed"));
    let universe = Universe::tiles(32);
    solve(&clean, universe, 24, Some(200));
    solve(&killed, universe, 24, Some(200));
    // As if killed right after level 27's checkpoint, with a shard of level 28 written.
    let mut m = Manifest::read(&killed).unwrap();
    m.complete = false;
    m.keep_levels(27);
    m.write(&killed).unwrap();
    std::fs::write(killed.join("losses/L0029-0001.cht.tmp"), b"half").unwrap();
    solve(&killed, universe, 24, Some(200));
    assert!(contents(&clean) == contents(&killed), "same bytes as a clean run");
    // Another shard size is another job: refused, not mixed.
    let plan = Plan { universe, grundy_max_tiles: 24, shard_positions: Some(100), table_format: 3, count_moves: false };
    let err = run(&plan, &Options::new(&killed), |_| {}).unwrap_err().to_string();
    assert!(err.contains("another job") || err.contains("--force"), "{err}");
}

#[test]
fn a_damaged_shard_is_named() {
    for table_format in [2, 3] {
        a_damaged_shard_is_named_in(table_format);
    }
}

fn a_damaged_shard_is_named_in(table_format: u16) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let m = solve_format(&out, Universe::tiles(30), 20, Some(250), table_format);
    let n = 30;
    let shards = m.level_shards(n);
    assert!(shards.len() >= 3);
    let victim = TableDir::table_name(Kind::Losses, n, Some(1));
    let path = out.join(&victim);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let t = Tables::open(&out).unwrap();
    // A position of shard 0 still answers; the last one of shard 1 (its
    // last block holds the damaged byte) names the file.
    let p0 = t.ranking().unrank(n, shards[0].first).unwrap();
    assert!(t.outcome(&p0).is_ok());
    let p1 = t.ranking().unrank(n, shards[1].first + shards[1].positions - 1).unwrap();
    let err = t.outcome(&p1).unwrap_err().to_string();
    assert!(err.contains(&victim), "{err}");
    let report = verify(&out, 100, 1).unwrap();
    assert!(report.failures.iter().any(|f| f.contains(&victim)), "{:?}", report.failures);
}
