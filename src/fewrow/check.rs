//! The in-run check of a solved few-row table: sampled positions against
//! their children, read from the table itself. A loss must have no losing
//! child and a win at least one; the box's fullest positions are always
//! among the samples (where a bound or a type is at its edge).

use super::{random_rows, FewRowError, FewRowTable, MAX_ROWS};
use crate::rng::SplitMix;
use rayon::prelude::*;

/// Positions the in-run check of a few-row solve samples: about a second
/// of the two cores here for 4×4000 (16,000 children a position at most),
/// nothing beside the solve.
pub const CHECK_SAMPLES: u64 = 512;

/// What [`check_samples`] checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FewRowChecked {
    /// Positions checked.
    pub positions: u64,
    /// Their children looked up.
    pub children: u64,
}

/// Rows of a position in the table's own orientation (`k` rows of up to
/// `n`, zero rows at the end).
type Rows = [u16; MAX_ROWS as usize];

/// Checks `samples` positions of `table` against their children: the full
/// box, the loss of the full prefix (if it has one), then positions drawn
/// with `seed`, every second one the loss of its prefix.
///
/// # Errors
/// [`FewRowError::Damaged`] naming the first position whose outcome the
/// table's own look-ups of its children contradict.
pub fn check_samples(table: &FewRowTable, samples: u64, seed: u64) -> Result<FewRowChecked, FewRowError> {
    let positions = sample_positions(table, samples, seed);
    let children = positions.par_iter().map(|rows| check_one(table, rows)).collect::<Result<Vec<u64>, FewRowError>>()?;
    Ok(FewRowChecked { positions: positions.len() as u64, children: children.iter().sum() })
}

/// The positions [`check_samples`] checks, in the table's orientation.
fn sample_positions(table: &FewRowTable, samples: u64, seed: u64) -> Vec<Rows> {
    let (k, n) = (table.shape.k() as usize, table.shape.n() as u16);
    let mut out = Vec::with_capacity(samples as usize);
    let mut full = [0u16; MAX_ROWS as usize];
    full[..k].fill(n);
    // The prefix's loss, where it has one (and is no empty board).
    let with_loss = |rows: &Rows| -> Option<Rows> {
        let e = table.losing_last(rows)?;
        let mut q = *rows;
        q[k - 1] = e;
        (q[0] > 0).then_some(q)
    };
    out.push(full);
    out.extend(with_loss(&full));
    let mut rng = SplitMix(seed);
    while (out.len() as u64) < samples {
        let rows = random_rows(&mut rng, k, u32::from(n));
        out.push(rows);
        if (out.len() as u64) < samples {
            out.extend(with_loss(&rows));
        }
    }
    out.truncate(samples.max(1) as usize);
    out
}

/// Checks one position against its children; returns the children looked up.
fn check_one(table: &FewRowTable, rows: &Rows) -> Result<u64, FewRowError> {
    let k = table.shape.k() as usize;
    let shown = |r: &Rows| r[..k].iter().filter(|&&v| v > 0).map(u16::to_string).collect::<Vec<_>>().join(" ");
    let loss = table.loses(rows);
    let mut looked = 0;
    for a in 0..k {
        for b in 0..rows[a] {
            if a == 0 && b == 0 {
                continue; // the poisoned tile
            }
            let mut child = *rows;
            for v in &mut child[a..k] {
                *v = (*v).min(b);
            }
            looked += 1;
            if table.loses(&child) {
                if loss {
                    return Err(FewRowError::Damaged(format!(
                        "the in-run check failed: {} is a loss in the table, and so is its child {}",
                        shown(rows),
                        shown(&child)
                    )));
                }
                return Ok(looked);
            }
        }
    }
    if !loss {
        return Err(FewRowError::Damaged(format!(
            "the in-run check failed: {} is a win in the table, but none of its {looked} children is a loss",
            shown(rows)
        )));
    }
    Ok(looked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fewrow::{solve, FewRowBox, Progress, SolveOptions, NONE};
    use std::sync::atomic::Ordering::Relaxed;

    fn solved(rows: u32, cols: u32) -> FewRowTable {
        solve(FewRowBox::new(rows, cols).unwrap(), &SolveOptions::default(), &Progress::default()).unwrap()
    }

    #[test]
    fn a_solved_table_passes_with_its_fullest_positions_first() {
        for (rows, cols) in [(1, 7), (2, 9), (3, 8), (4, 9), (9, 4), (5, 6), (8, 3)] {
            let t = solved(rows, cols);
            let (k, n) = (t.shape.k() as usize, t.shape.n() as u16);
            let sampled = sample_positions(&t, 40, 7);
            assert_eq!(sampled.len(), 40);
            assert!(sampled[0][..k].iter().all(|&v| v == n), "{rows}x{cols}: the full box first");
            let got = check_samples(&t, 40, 7).unwrap();
            assert_eq!(got.positions, 40);
            assert!(got.children > 0);
        }
    }

    /// Any one entry changed, checking every position of the box finds it.
    #[test]
    fn every_changed_entry_is_found() {
        let t = solved(4, 5);
        let mut everything = Vec::new();
        let mut rows = [0u16; MAX_ROWS as usize];
        loop {
            if rows[0] > 0 {
                everything.push(rows);
            }
            // The next non-increasing 4-tuple of 0..=5 (the last row fastest).
            let Some(i) = (0..4).rev().find(|&i| rows[i] < if i == 0 { 5 } else { rows[i - 1] }) else { break };
            rows[i] += 1;
            rows[i + 1..4].fill(0);
        }
        assert_eq!(everything.len(), 125, "C(9, 4) − 1 positions");
        let check_all = |t: &FewRowTable| everything.iter().try_for_each(|r| check_one(t, r).map(|_| ()));
        check_all(&t).unwrap();
        let mut found = 0;
        let mut prefix = vec![0u16; t.ranking.width()];
        for r in 0..t.len() {
            let before = t.entry(r);
            // Every other entry a position of this prefix can have (a last
            // row up to the prefix's, no empty board), or none.
            let last = *prefix.last().unwrap();
            let empty = prefix.iter().all(|&v| v == 0);
            for e in (u16::from(empty)..=last).chain([NONE]).filter(|&e| e != before) {
                t.table[r as usize].store(e, Relaxed);
                let err = check_all(&t).expect_err(&format!("the entry of {prefix:?} changed from {before} to {e} passed"));
                assert!(err.to_string().starts_with("the in-run check failed: "), "{err}");
                found += 1;
            }
            t.table[r as usize].store(before, Relaxed);
            crate::fewrow::next_prefix(&mut prefix, 5);
        }
        assert!(found > 100, "{found}");
    }
}
