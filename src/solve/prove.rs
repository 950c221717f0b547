//! `chomp verify --full`: a proof that a table directory holds what its
//! plan decides, re-derived level by level from its own smaller levels.
//!
//! Level `n`'s stored losses must be exactly the positions that no stored
//! loss of a smaller level is a child of: the sieve runs again, each level
//! pushing its losses (equal to the stored ones, or the proof stops) into
//! the pending levels, and a window that opens gets the stored losses of
//! every decided level. A stored loss with a losing child and a stored
//! win without one are both found, at the level where they are. Where the
//! run has Grundy values, each level's values are computed again from the
//! stored values of the smaller levels and must equal the stored ones. By
//! induction from level 1 (the poisoned square alone, a loss) every
//! stored level is then the one the rules decide. The cost is about that
//! of the run that wrote the tables, on every core of this process, or
//! split among the processes of a cluster as a run is ([`prove_on`]).

use super::grundy;
use super::memory::holding;
use super::sieve::Frontier;
use crate::cluster::{Comm, Solo};
use crate::index::Ranking;
use crate::store::{LossSet, SortedRanks, TableDir};
use std::path::Path;
use std::sync::atomic::AtomicU8;
use std::time::Instant;

/// One level proven.
#[derive(Clone, Debug)]
pub struct ProvenLevel {
    /// The level.
    pub tiles: u32,
    /// The last level to prove.
    pub of: u32,
    /// Its positions.
    pub positions: u64,
    /// Its losses, derived and stored alike.
    pub losses: u64,
    /// Whether its Grundy values were derived and compared too.
    pub grundy: bool,
    /// Seconds it took.
    pub seconds: f64,
}

/// Proves the completed levels of the table directory `dir` (see the module
/// documentation), calling `on_level` after each; `max_memory` bounds the
/// mark bits as for a run (windows). Returns the levels proven.
///
/// # Errors
/// One line: the first level whose stored losses or Grundy values differ
/// from those its smaller levels decide (naming a position), or why the
/// tables could not be read or the marks mapped.
pub fn prove(dir: &Path, max_memory: Option<u64>, on_level: impl FnMut(&ProvenLevel)) -> Result<u32, String> {
    prove_on(dir, max_memory, &Solo, on_level)
}

/// A cell no process computed: each process computes its share of a
/// level's Grundy values and compares those alone. A computed value is at
/// most `n − 2`, so below this for every level up to 256 tiles.
const NOT_MINE: u8 = u8::MAX;

/// [`prove`] on the processes of `comm`, split as a run splits its work:
/// the sieve's marks by shares (each process ends each level with all its
/// losses, and compares them with the stored ones), the Grundy values by
/// shares (each process compares its own). Every process calls it; after
/// each level they agree on the first failure (one collective), so all
/// return the same result. `on_level` is called on every process.
///
/// # Errors
/// As [`prove`]; with several processes also when a Grundy level exceeds
/// 256 tiles.
pub fn prove_on(dir: &Path, max_memory: Option<u64>, comm: &dyn Comm, mut on_level: impl FnMut(&ProvenLevel)) -> Result<u32, String> {
    let dir = TableDir::new(dir);
    let m = dir.read_manifest().map_err(|e| e.to_string())?;
    let ranking = Ranking::new(&m.universe).map_err(|e| e.to_string())?;
    let top = m.levels_complete;
    let hold = holding(max_memory, false, comm);
    let mut frontier = Frontier::new(&ranking, 0, comm, hold).map_err(|e| format!("cannot map the mark bits: {e}"))?;
    let several = comm.processes() > 1;
    // The stored Grundy values of the levels below (index = tiles).
    let mut values: Vec<Vec<u8>> = vec![Vec::new()];
    for n in 1..=top {
        let t0 = Instant::now();
        let derived = frontier.sieve_level(&ranking, n, comm).ranks;
        let grundy = n <= m.grundy_max_tiles;
        let mine = (|| {
            let stored = dir.read_losses(&m, n).map_err(|e| e.to_string())?;
            if let Some(r) = first_difference(&derived, &stored, ranking.size(n)) {
                let p = ranking.unrank(n, r).expect("a rank of the level");
                let what = if stored.holds(r) {
                    "is stored as a loss, but a stored loss of a smaller level is its child"
                } else {
                    "is stored as a win, but no stored loss of a smaller level is its child"
                };
                return Err(format!("level {n}: {p} {what} ({} stored losses, {} derived)", stored.count(), derived.len()));
            }
            if !grundy {
                return Ok(());
            }
            if several && n > 256 {
                return Err(format!("level {n}: several processes prove Grundy values of levels up to 256 tiles only"));
            }
            let stored = dir.read_grundy_values(&m, n).map_err(|e| e.to_string())?;
            let unset = if several { NOT_MINE } else { 0 };
            let out: Vec<AtomicU8> = (0..ranking.size(n)).map(|_| AtomicU8::new(unset)).collect();
            let lower: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            grundy::grundy_level(&ranking, n, &lower, &out, comm, false).map_err(|e| e.to_string())?;
            let computed = out.into_iter().map(AtomicU8::into_inner);
            if let Some((r, (d, s))) = computed.zip(&stored).enumerate().find(|(_, (d, s))| d != *s && !(several && *d == NOT_MINE)) {
                let p = ranking.unrank(n, r as u64).expect("a rank of the level");
                return Err(format!("level {n}: {p} is stored with Grundy value {s}, but the stored values of its children give {d}"));
            }
            values.push(stored);
            Ok(())
        })();
        agree(comm, mine)?;
        on_level(&ProvenLevel {
            tiles: n,
            of: top,
            positions: ranking.size(n),
            losses: derived.len(),
            grundy,
            seconds: t0.elapsed().as_secs_f64(),
        });
        if n == frontier.horizon() && n < top {
            // The next window: every stored loss decided so far, pushed into it.
            frontier.open_epoch(&ranking, comm).map_err(|e| format!("cannot map the mark bits: {e}"))?;
            super::driver::push_from_tables(&ranking, &dir, &m, &mut frontier, n, comm).map_err(|e| e.to_string())?;
        }
    }
    Ok(top)
}

/// The first failure of any process (in process order), on every process;
/// with one process, its own.
fn agree(comm: &dyn Comm, mine: Result<(), String>) -> Result<(), String> {
    if comm.processes() == 1 {
        return mine;
    }
    let said = mine.err().unwrap_or_default();
    match comm.all_gather(said.as_bytes()).into_iter().find(|e| !e.is_empty()) {
        Some(e) => Err(String::from_utf8_lossy(&e).into_owned()),
        None => Ok(()),
    }
}

/// The first rank below `size` in one set and not the other (one pass
/// over both, in rank order).
fn first_difference(derived: &roaring::RoaringTreemap, stored: &LossSet, size: u64) -> Option<u64> {
    let mut a = derived.iter().peekable();
    let mut b = stored.ranks_in(0..size).peekable();
    loop {
        match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x == y => {
                a.next();
                b.next();
            }
            (Some(&x), Some(&y)) => return Some(x.min(y)),
            (Some(&x), None) => return Some(x),
            (None, Some(&y)) => return Some(y),
            (None, None) => return None,
        }
    }
}
