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
                    out[conjugate_rank(ranking, rows) as usize].store(g as u8, Ordering::Relaxed);
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

/// Rank of the conjugate (transpose) of `rows`, without allocating.
fn conjugate_rank(rk: &Ranking, rows: &[u8]) -> u64 {
    let mut conj = [0u8; 256];
    let width = rows[0] as usize;
    for &len in rows {
        for c in &mut conj[..len as usize] {
            *c += 1;
        }
    }
    rk.rank_rows(&conj[..width])
}

/// Per-task state of the child-rank computation, kept across the positions
/// of one walk (consecutive positions share their top rows).
#[derive(Default)]
struct Scratch {
    /// The level and the row count the tables below are sized for.
    n: u32,
    /// Rows of the previous position (the prefix `head` was built for).
    prev: Vec<u8>,
    /// `pre[i]`: tiles in rows `0..i`.
    pre: Vec<u32>,
    /// `suf[i]`: tiles in rows `i..`.
    suf: Vec<u32>,
    /// `tail[i]`: contribution of rows `i..` to the rank (unchanged rows).
    tail: Vec<u64>,
    /// `head[a * (n + 1) + m]`: contribution of rows `0..a` (unchanged) to the
    /// rank of a child with `m` tiles, `Σ_{i<a} contribution(m − pre_i, i, p_i)`.
    /// Depends on rows `0..a` only, so it survives from one position to the
    /// next down to their first differing row.
    head: Vec<u64>,
}

impl Scratch {
    /// Brings `pre`, `suf`, `tail` and `head` up to date for the position `p` of level `n`.
    fn prepare(&mut self, rk: &Ranking, n: u32, p: &[u8]) {
        let k = p.len();
        let stride = n as usize + 1;
        if self.n != n {
            self.n = n;
            self.prev.clear();
            self.pre.clear();
            self.pre.push(0);
            // Row a < n exists only when n > a, so a < n rows of heads suffice.
            self.head.clear();
            self.head.resize(stride * stride, 0);
        }
        // Rows 0..same agree with the previous position: heads 0..=same stay.
        let same = self.prev.iter().zip(p).take_while(|(x, y)| x == y).count();
        self.prev.clear();
        self.prev.extend_from_slice(p);
        self.pre.truncate(same + 1);
        for a in same..k {
            let next = self.pre[a] + p[a] as u32;
            self.pre.push(next);
        }
        // head[a] is needed for a < k; head[a] for a <= same is already valid.
        for a in same + 1..k {
            let (done, rest) = self.head.split_at_mut(a * stride);
            let from = &done[(a - 1) * stride..];
            let to = &mut rest[..stride];
            let (pa, len) = (self.pre[a - 1], p[a - 1] as u32);
            // Children keeping rows 0..a have at least pre[a] tiles.
            for m in self.pre[a] as usize..n as usize {
                to[m] = from[m] + rk.contribution(m as u32 - pa, a as u32 - 1, len);
            }
        }
        self.suf.clear();
        self.suf.resize(k + 1, 0);
        self.tail.clear();
        self.tail.resize(k + 1, 0);
        for i in (0..k).rev() {
            self.suf[i] = self.suf[i + 1] + p[i] as u32;
            self.tail[i] = self.tail[i + 1] + rk.contribution(self.suf[i], i as u32, p[i] as u32);
        }
    }
}

/// Value of one position from the values of its children; returns (value, children looked up).
///
/// The moves are taken by column `b` of the bite, then by row `a` upwards:
/// for a fixed `b` the rows `a..j` that become `b` grow by one as `a`
/// decreases, so their contribution is one more term per move; the rows
/// above `a` come from `head`, the rows from `j` on from `tail`.
fn value_of(rk: &Ranking, p: &[u8], rank: u64, lower: &[&[u8]], s: &mut Scratch) -> (u32, u64) {
    let k = p.len();
    let n: u32 = p.iter().map(|&v| v as u32).sum();
    if k == 1 && p[0] == 1 {
        return (0, 0);
    }
    s.prepare(rk, n, p);
    debug_assert_eq!(s.tail[0], rank);
    let stride = n as usize + 1;
    let mut seen = [0u64; 5];
    let mut looked = 0;
    let mut j = k;
    for b in 0..p[0] as u32 {
        // j: first row with p_j <= b.
        while j > 0 && p[j - 1] as u32 <= b {
            j -= 1;
        }
        let (suf_j, tail_j) = (s.suf[j], s.tail[j]);
        let mut mid = 0u64;
        for a in (0..j).rev() {
            let rows = (j - a) as u32;
            if b > 0 {
                mid += rk.contribution(suf_j + rows * b, a as u32, b);
            } else if a == 0 {
                break; // eating the poison
            }
            let removed = s.suf[a] - suf_j - rows * b;
            let m = n - removed;
            let r = s.head[a * stride + m as usize] + mid + tail_j;
            let g = lower[m as usize][r as usize];
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
