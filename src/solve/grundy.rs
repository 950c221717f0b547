//! Sprague–Grundy values (misère convention, `docs/math.md`): the mex of the
//! values of all children, eating the poison excluded.
//!
//! Level `n` is computed from the value files of smaller levels, read in
//! place through memory maps. Every child's rank is derived from its
//! parent's row data: for the move `(a, b)` the rows above `a` keep their
//! value (their suffix shrinks by the tiles removed), rows `a..j` become `b`
//! and rows from `j` on keep their contribution to the parent's rank.
//! In symmetric universes only canonical positions are evaluated; the value
//! is stored for the conjugate too.

use crate::cluster::Comm;
use crate::game::conjugate_rows;
use crate::index::{split, Ranking};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// Largest level whose values are guaranteed to fit a byte (the single row of
/// `n` tiles has value `n − 1`).
pub const MAX_GRUNDY_TILES: u32 = 256;

/// A value of 256 or more appeared: the one-byte encoding cannot hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a Grundy value at {tiles} tiles reached 256, beyond the one-byte table encoding")]
pub struct GrundyOverflow {
    /// The level.
    pub tiles: u32,
}

/// This process's work on a level.
pub struct LevelGrundy {
    /// Positions whose value this process computed from their children.
    pub evaluated: u64,
    /// Child look-ups performed.
    pub lookups: u64,
}

/// Computes this process's share of level `n` into `out` (one cell per rank
/// of the level, zero-initialised); other cells stay zero, so OR-merging the
/// processes' arrays assembles the level. `lower[m]` holds the values of level
/// `m` for every `m < n` (index 0 unused).
///
/// # Errors
/// [`GrundyOverflow`] if a value does not fit a byte.
pub fn grundy_level(ranking: &Ranking, n: u32, lower: &[&[u8]], out: &[AtomicU8], comm: &dyn Comm) -> Result<LevelGrundy, GrundyOverflow> {
    let sym = ranking.universe().is_symmetric();
    let results: Vec<Result<(u64, u64), GrundyOverflow>> = split::level_share(ranking, n, sym, comm.process(), comm.processes())
        .par_iter()
        .map(|prefix| {
            let (mut evaluated, mut lookups) = (0u64, 0u64);
            let mut overflow = false;
            let mut scratch = Scratch::default();
            ranking.for_each_with_prefix(n, prefix, sym, |rank, rows| {
                let (g, looked) = value_of(ranking, rows, rank, lower, &mut scratch);
                lookups += looked;
                evaluated += 1;
                if g > 255 {
                    overflow = true;
                    return;
                }
                out[rank as usize].store(g as u8, Ordering::Relaxed);
                if sym && rows.len() < rows[0] as usize {
                    let conj = conjugate_rows(rows);
                    out[ranking.rank_rows(&conj) as usize].store(g as u8, Ordering::Relaxed);
                }
            });
            if overflow {
                Err(GrundyOverflow { tiles: n })
            } else {
                Ok((evaluated, lookups))
            }
        })
        .collect();
    let mut total = LevelGrundy { evaluated: 0, lookups: 0 };
    for r in results {
        let (e, l) = r?;
        total.evaluated += e;
        total.lookups += l;
    }
    Ok(total)
}

/// `histogram[g]` = number of values `g`, without trailing zero counts.
pub fn histogram(values: &[u8]) -> Vec<u64> {
    let mut h = vec![0u64; 256];
    for &g in values {
        h[g as usize] += 1;
    }
    while h.len() > 1 && h[h.len() - 1] == 0 {
        h.pop();
    }
    h
}

#[derive(Default)]
struct Scratch {
    suf: Vec<u32>,
    /// `tail[i]`: contribution of rows `i..` to the rank (unchanged rows).
    tail: Vec<u64>,
}

/// Value of one position from the values of its children; returns (value, children looked up).
fn value_of(rk: &Ranking, p: &[u8], rank: u64, lower: &[&[u8]], s: &mut Scratch) -> (u32, u64) {
    let k = p.len();
    if k == 1 && p[0] == 1 {
        return (0, 0);
    }
    s.suf.clear();
    s.suf.resize(k + 1, 0);
    for i in (0..k).rev() {
        s.suf[i] = s.suf[i + 1] + p[i] as u32;
    }
    s.tail.clear();
    s.tail.resize(k + 1, 0);
    for i in (0..k).rev() {
        s.tail[i] = s.tail[i + 1] + rk.contribution(s.suf[i], i as u32, p[i] as u32);
    }
    debug_assert_eq!(s.tail[0], rank);
    let n = s.suf[0];
    let mut seen = [0u64; 5];
    let mut looked = 0;
    for a in 0..k {
        let lowest_b = if a == 0 { 1 } else { 0 };
        // j: first row at or below a with p_j <= b; moves right as b shrinks.
        let mut j = a;
        for b in (lowest_b..p[a] as u32).rev() {
            while j < k && p[j] as u32 > b {
                j += 1;
            }
            let removed = (s.suf[a] - s.suf[j]) - (j - a) as u32 * b;
            let mut r = s.tail[j];
            if b > 0 {
                for i in a..j {
                    r += rk.contribution(s.suf[j] + (j - i) as u32 * b, i as u32, b);
                }
            }
            for (i, (&suf, &len)) in s.suf[..a].iter().zip(&p[..a]).enumerate() {
                r += rk.contribution(suf - removed, i as u32, len as u32);
            }
            let g = lower[(n - removed) as usize][r as usize];
            seen[(g >> 6) as usize] |= 1 << (g & 63);
            looked += 1;
        }
    }
    let mut mex = 0;
    for w in seen {
        if w == u64::MAX {
            mex += 64;
        } else {
            mex += w.trailing_ones();
            break;
        }
    }
    (mex, looked)
}
