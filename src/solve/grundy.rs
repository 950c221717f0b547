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
    // A child of a level-n position has at most n − 2 moves, so a value of at most n − 2.
    if n <= 65 {
        level_with::<Seen64>(ranking, n, lower, out, comm)
    } else if n <= 129 {
        level_with::<Seen128>(ranking, n, lower, out, comm)
    } else {
        level_with::<Seen256>(ranking, n, lower, out, comm)
    }
}

fn level_with<S: Seen>(
    ranking: &Ranking,
    n: u32,
    lower: &[&[u8]],
    out: &[AtomicU8],
    comm: &dyn Comm,
) -> Result<LevelGrundy, GrundyOverflow> {
    let sym = ranking.universe().is_symmetric();
    let results: Vec<Result<(u64, u64), GrundyOverflow>> =
        split::level_share(ranking, n, if sym { split::Balance::Canonical } else { split::Balance::All }, comm.process(), comm.processes())
            .par_iter()
            .map_init(Scratch::default, |scratch, prefix| {
                let (mut evaluated, mut lookups) = (0u64, 0u64);
                let mut overflow = false;
                ranking.for_each_with_prefix(n, prefix, sym, |rank, rows| {
                    let (g, looked) = value_of::<S>(ranking, rows, rank, lower, scratch);
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

/// Rank of the conjugate (transpose) of `rows`, from its columns directly
/// (no buffer to clear: this runs once per canonical position).
fn conjugate_rank(rk: &Ranking, rows: &[u8]) -> u64 {
    // Columns p_{i+1}..p_i (p_k = 0) have exactly i + 1 tiles; column c is
    // row c of the conjugate, with `suffix` tiles in it and the columns after.
    let mut suffix: u32 = rows.iter().map(|&v| v as u32).sum();
    let (mut rank, mut c, mut below) = (0, 0u32, 0u32);
    for (i, &len) in rows.iter().enumerate().rev() {
        let height = i as u32 + 1;
        for _ in below..len as u32 {
            rank += rk.contribution(suffix, c, height);
            suffix -= height;
            c += 1;
        }
        below = len as u32;
    }
    rank
}

/// Per-task state of the child-rank computation, kept across the positions
/// of one walk (consecutive positions share their top rows).
#[derive(Default)]
struct Scratch {
    /// The level the tables below are sized for.
    n: u32,
    /// Rows of the previous position (the prefix `head` was built for).
    prev: Vec<u8>,
    /// `pre[i]`: tiles in rows `0..i`.
    pre: Vec<u32>,
    /// `head[a * (n + 1) + m]`: contribution of rows `0..a` (unchanged) to the
    /// rank of a position with `m` tiles, `Σ_{i<a} contribution(m − pre_i, i, p_i)`,
    /// for `pre_a <= m <= n`. It depends on rows `0..a` only, so it survives
    /// from one position to the next down to their first differing row. At
    /// `m = n` it is the parent's own rank less the contribution of rows `a..`.
    head: Vec<u64>,
}

impl Scratch {
    /// Brings `pre` and `head` up to date for the position `p` of level `n`.
    fn prepare(&mut self, rk: &Ranking, n: u32, p: &[u8]) {
        let k = p.len();
        let stride = n as usize + 1;
        if self.n != n {
            self.n = n;
            self.prev.clear();
            self.pre.clear();
            self.pre.push(0);
            // A row a exists only when n > a: n rows of heads suffice.
            self.head.clear();
            self.head.resize(stride * stride, 0);
        }
        // Rows 0..same agree with the previous position: heads 0..=same stay.
        let same = self.prev.iter().zip(p).take_while(|(x, y)| x == y).count();
        self.prev.clear();
        self.prev.extend_from_slice(p);
        self.pre.truncate(same + 1);
        for &len in &p[same..k] {
            let next = self.pre[self.pre.len() - 1] + len as u32;
            self.pre.push(next);
        }
        // head[a] is needed for a < k.
        for a in same + 1..k {
            let (done, rest) = self.head.split_at_mut(a * stride);
            let from = &done[(a - 1) * stride..];
            let to = &mut rest[..stride];
            let (pa, len) = (self.pre[a - 1], p[a - 1] as u32);
            for m in self.pre[a] as usize..=n as usize {
                to[m] = from[m] + rk.contribution(m as u32 - pa, a as u32 - 1, len);
            }
        }
    }
}

/// The set of values seen among a position's children, sized for a level.
trait Seen: Default {
    fn insert(&mut self, g: u8);
    fn mex(&self) -> u32;
}

/// Values below 64 (levels to 65).
#[derive(Default)]
struct Seen64(u64);

impl Seen for Seen64 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        debug_assert!(g < 64);
        self.0 |= 1 << (g & 63);
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        self.0.trailing_ones()
    }
}

/// Values below 128 (levels to 129), in two registers without branches.
#[derive(Default)]
struct Seen128(u64, u64);

impl Seen for Seen128 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        debug_assert!(g < 128);
        let bit = 1u64 << (g & 63);
        let upper = (g >> 6) as u64 & 1;
        self.0 |= bit & upper.wrapping_sub(1);
        self.1 |= bit & upper.wrapping_neg();
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        if self.0 != u64::MAX {
            self.0.trailing_ones()
        } else {
            64 + self.1.trailing_ones()
        }
    }
}

/// Any byte value.
#[derive(Default)]
struct Seen256([u64; 4]);

impl Seen for Seen256 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        self.0[(g >> 6) as usize] |= 1 << (g & 63);
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        let mut mex = 0;
        for w in self.0 {
            mex += w.trailing_ones();
            if w != u64::MAX {
                break;
            }
        }
        mex
    }
}

/// Value of one position from the values of its children; returns (value, children looked up).
///
/// The moves are taken by column `b` of the bite, then by row `a` upwards.
/// Columns `p_j..p_{j−1}` (`p_k = 0`) share `j`, the first row that a bite
/// there leaves whole: rows `j..` are unchanged (their contribution to the
/// parent's rank is `rank − head[j][n]`). For a fixed `b` the rows `a..j`
/// that become `b` grow by one as `a` decreases, so their contribution is one
/// more term per move; the rows above `a` come from `head`.
fn value_of<S: Seen>(rk: &Ranking, p: &[u8], rank: u64, lower: &[&[u8]], s: &mut Scratch) -> (u32, u64) {
    let k = p.len();
    let n: u32 = p.iter().map(|&v| v as u32).sum();
    if k == 1 && p[0] == 1 {
        return (0, 0);
    }
    s.prepare(rk, n, p);
    let (pre, head) = (&s.pre[..], &s.head[..]);
    let stride = n as usize + 1;
    let mut seen = S::default();
    // b = 0: the child is rows 0..a (a ≥ 1; a = 0 eats the poison).
    for a in 1..k {
        let m = pre[a] as usize;
        seen.insert(lower[m][head[a * stride + m] as usize]);
    }
    for j in (1..=k).rev() {
        let suf_j = n - pre[j];
        let (tail_j, first) = if j == k { (0, 1) } else { (rank - head[j * stride + n as usize], p[j] as u32) };
        for b in first..p[j - 1] as u32 {
            let mut mid = 0u64;
            let mut m = suf_j;
            for a in (0..j).rev() {
                // The child keeps rows 0..a and j.., with j − a rows of b between.
                mid += rk.contribution(m + b, a as u32, b);
                m += b;
                let child = pre[a] + m;
                let r = head[a * stride + child as usize] + mid + tail_j;
                seen.insert(lower[child as usize][r as usize]);
            }
        }
    }
    (seen.mex(), n as u64 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{position::conjugate_rows, Universe};

    #[test]
    fn conjugate_rank_is_the_rank_of_the_conjugate() {
        for universe in [Universe::tiles(24), Universe::boxed(7, 7)] {
            let rk = Ranking::new(&universe).unwrap();
            for n in 1..=rk.max_tiles() {
                let mut rows = Vec::new();
                for rank in 0..rk.size(n) {
                    rk.unrank_into(n, rank, &mut rows);
                    assert_eq!(conjugate_rank(&rk, &rows), rk.rank_rows(&conjugate_rows(&rows)), "{rows:?}");
                }
            }
        }
    }
}
