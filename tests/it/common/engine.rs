//! Runs of the library's engine, and conversions between its positions and
//! plain row lists.

use chomp_tables::read::Tables;
use chomp_tables::solve::{self as job, Options, Plan};
use chomp_tables::{Position, Universe};

use super::Rows;
use std::collections::BTreeSet;
use std::path::PathBuf;
use tempfile::TempDir;

/// A complete run of the engine in a temporary directory (removed on drop).
pub struct Solved {
    pub tables: Tables,
    /// The table directory.
    pub out: PathBuf,
    _dir: TempDir,
}

/// Runs the engine on `universe` (Grundy values up to `grundy_max_tiles`
/// tiles) into a fresh temporary directory, and opens the tables.
pub fn solve(universe: Universe, grundy_max_tiles: u32) -> Solved {
    solve_plan(&Plan::new(universe, grundy_max_tiles))
}

/// Runs the engine on `plan` into a fresh temporary directory, and opens
/// the tables.
pub fn solve_plan(plan: &Plan) -> Solved {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let manifest = job::run(plan, &Options::new(out.clone()), |_| {}).expect("engine run");
    assert!(manifest.complete);
    Solved { tables: Tables::open(&out).expect("open tables"), out, _dir: dir }
}

pub fn pos(rows: &[u32]) -> Position {
    Position::new(rows).unwrap()
}

pub fn rows_of(p: &Position) -> Rows {
    p.rows().iter().map(|&r| r as u32).collect()
}

/// The losses of level `n`, decoded from the loss table.
pub fn loss_set(t: &Tables, n: u32) -> BTreeSet<Rows> {
    t.level_losses(n).unwrap().iter().map(|r| rows_of(&t.ranking().unrank(n, r).expect("loss rank in range"))).collect()
}
