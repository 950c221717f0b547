//! The few-row engine: every position of a box with few rows (at most
//! [`MAX_ROWS`], up to [`MAX_COLS`] columns), stored as one entry per
//! *prefix* instead of one bit per position.
//!
//! A position of a `k`-row box is a prefix `p = (a_1, …, a_{k−1})` (its first
//! `k − 1` rows, zero rows allowed) and a last row `x ≤ a_{k−1}`. By *unique
//! extension* at most one `x` makes `(p, x)` a loss: from `(p, x)` the bites
//! in the last row reach `(p, x')` for every `x' < x`, so two losses with the
//! same prefix would have a move between them. The engine stores, for every
//! prefix, that losing length or [`NONE`]: `C(n + k − 1, k − 1)` entries of
//! two bytes for a `k × n` box, where the box's bits need `C(n + k, k) / 8`
//! bytes. The mathematics and the order of computation are in [`solve`]; the
//! prefixes' dense ranking is [`PrefixRanking`].
//!
//! A box with more rows than columns is solved as its transpose: transposing
//! (conjugating) a position keeps its tile count and its outcome, so the
//! level counts of `r × c` and `c × r` are equal.

mod check;
mod checkpoint;
mod dir;
mod openings;
mod solve;

pub use check::{check_samples, FewRowChecked, CHECK_SAMPLES};
pub use checkpoint::{read_checkpoint, write_checkpoint, CheckpointError};
pub use dir::{
    against, convert, is_few_row_dir, is_few_row_manifest, levels_csv, manifest_format, verify, write_dir, write_dir_blocks, FewRowAnswer,
    FewRowDir, FewRowManifest, FewRowUniverse, FewRowVerified, Written,
};
/// File names and constants of a few-row directory (FORMAT.md, section 18).
pub mod files {
    pub use super::dir::{BLOCK_BYTES, ENGINE, FORMAT_NAME, LEGACY_MAGIC, LEGACY_TABLE, LEVELS, MAGIC, MANIFEST, TABLE, VERSION};
}
pub use solve::{carried_rows, reads, solve, Progress, SolveOptions};

use std::sync::atomic::{AtomicU16, Ordering::Relaxed};

/// Most rows of a few-row box (its prefixes have up to seven rows).
pub const MAX_ROWS: u32 = 8;
/// Most columns of a few-row box: a row length is a `u16`.
pub const MAX_COLS: u32 = u16::MAX as u32;
/// The table entry of a prefix that no last row makes a loss.
///
/// No prefix has `u16::MAX` as its losing length: a prefix whose last row
/// is 65,535 long has every row 65,535 long (the box has at most that many
/// columns), and its extension by a row of 65,535 is a rectangle, a win.
pub const NONE: u16 = u16::MAX;

/// Why a few-row box cannot be solved or a position not placed in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FewRowError {
    /// A side of zero.
    #[error("a few-row box needs at least one row and one column")]
    Empty,
    /// Both sides longer than the engine takes.
    #[error("the few-row engine takes boxes with at most {MAX_ROWS} rows (or {MAX_ROWS} columns) and at most {MAX_COLS} on the other side, not {rows}x{cols}")]
    TooLarge {
        /// Rows asked for.
        rows: u32,
        /// Columns asked for.
        cols: u32,
    },
    /// The prefix table (and the sets carried with it) would not fit in the
    /// memory allowed.
    #[error("the few-row engine needs {need} for the {rows}x{cols} box (its prefix table), more than the {allowed} allowed")]
    Memory {
        /// Rows of the box.
        rows: u32,
        /// Columns of the box.
        cols: u32,
        /// The table's size, in words.
        need: String,
        /// The limit, in words.
        allowed: String,
    },
    /// A position that is not a non-increasing list of rows in the box.
    #[error("{0}")]
    Position(String),
    /// A checkpoint that cannot be read, written or used.
    #[error("{0}")]
    Io(String),
    /// A table, block or manifest that fails a check, or a table that
    /// contradicts itself: nothing is answered from it.
    #[error("{0}")]
    Damaged(String),
    /// The run was asked to stop ([`SolveOptions::stop`]) and wrote its
    /// checkpoint: the same run resumes from it.
    #[error("stopped on request with {done} of {total} prefixes decided, saved in the checkpoint: run the same command again to resume")]
    Stopped {
        /// Prefixes decided.
        done: u64,
        /// Prefixes of the box.
        total: u64,
    },
}

/// A position of at most [`MAX_ROWS`] rows of up to [`MAX_COLS`] tiles,
/// top row first, without zero rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FewRowPosition {
    len: u8,
    rows: [u16; MAX_ROWS as usize],
}

impl FewRowPosition {
    /// The position with these row lengths (trailing zero rows dropped).
    ///
    /// # Errors
    /// [`FewRowError::Position`] for rows that increase, more than
    /// [`MAX_ROWS`] non-zero rows or a row longer than [`MAX_COLS`].
    pub fn new(rows: &[u32]) -> Result<Self, FewRowError> {
        let rows = &rows[..rows.iter().rposition(|&r| r > 0).map_or(0, |i| i + 1)];
        if rows.len() > MAX_ROWS as usize {
            return Err(FewRowError::Position(format!("{} rows are more than the {MAX_ROWS} a few-row position may have", rows.len())));
        }
        if let Some(&r) = rows.iter().find(|&&r| r > MAX_COLS) {
            return Err(FewRowError::Position(format!("a row of {r} is longer than the {MAX_COLS} a few-row position may have")));
        }
        if rows.windows(2).any(|w| w[0] < w[1]) {
            return Err(FewRowError::Position("rows must not increase from top to bottom".into()));
        }
        let mut p = FewRowPosition { len: rows.len() as u8, ..Default::default() };
        for (d, &r) in p.rows.iter_mut().zip(rows) {
            *d = r as u16;
        }
        Ok(p)
    }

    /// The row lengths, top row first (no zero rows).
    pub fn rows(&self) -> &[u16] {
        &self.rows[..self.len as usize]
    }

    /// The number of tiles.
    pub fn tiles(&self) -> u64 {
        self.rows().iter().map(|&r| u64::from(r)).sum()
    }

    /// The transposed position: column lengths become row lengths.
    /// `None` when it would have more than [`MAX_ROWS`] rows.
    pub fn transposed(&self) -> Option<Self> {
        let first = *self.rows().first().unwrap_or(&0) as usize;
        if first > MAX_ROWS as usize {
            return None;
        }
        let mut t = FewRowPosition { len: first as u8, ..Default::default() };
        for (j, d) in t.rows[..first].iter_mut().enumerate() {
            *d = self.rows().iter().filter(|&&r| r as usize > j).count() as u16;
        }
        Some(t)
    }
}

/// A box of `rows × cols` as the few-row engine solves it: `k` rows of up
/// to `n` tiles, with `k = min(rows, cols) ≤ MAX_ROWS` (the transpose when
/// `rows > cols`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FewRowBox {
    /// Rows of the box asked for.
    pub rows: u32,
    /// Columns of the box asked for.
    pub cols: u32,
}

impl FewRowBox {
    /// The box `rows × cols`.
    ///
    /// # Errors
    /// [`FewRowError`] for an empty box, or one whose shorter side exceeds
    /// [`MAX_ROWS`] or whose longer side exceeds [`MAX_COLS`].
    pub fn new(rows: u32, cols: u32) -> Result<Self, FewRowError> {
        if rows == 0 || cols == 0 {
            return Err(FewRowError::Empty);
        }
        if rows.min(cols) > MAX_ROWS || rows.max(cols) > MAX_COLS {
            return Err(FewRowError::TooLarge { rows, cols });
        }
        Ok(FewRowBox { rows, cols })
    }

    /// Whether the engine solves the transpose (more rows than columns).
    pub fn transposed(&self) -> bool {
        self.rows > self.cols
    }

    /// Rows the engine works with: `min(rows, cols)`.
    pub fn k(&self) -> u32 {
        self.rows.min(self.cols)
    }

    /// Row length the engine works with: `max(rows, cols)`.
    pub fn n(&self) -> u32 {
        self.rows.max(self.cols)
    }

    /// Number of prefixes, `C(n + k − 1, k − 1)`; `None` beyond `u64`.
    pub fn prefixes(&self) -> Option<u64> {
        binomial(u64::from(self.n() + self.k() - 1), u64::from(self.k() - 1))
    }

    /// Number of heads (prefixes without their last entry), `C(n + k − 2, k − 2)`
    /// (one for `k ≤ 2`); `None` beyond `u64`.
    pub fn heads(&self) -> Option<u64> {
        let k = self.k().max(2);
        binomial(u64::from(self.n() + k - 2), u64::from(k - 2))
    }

    /// Bytes of the prefix table (two per prefix); `None` beyond `u64`.
    pub fn table_bytes(&self) -> Option<u64> {
        self.prefixes()?.checked_mul(2)
    }

    /// Number of positions with `t` tiles for `t = 0..=rows·cols` (index 0
    /// is the empty board, which no universe holds): the coefficients of
    /// the Gaussian binomial `[n + k choose k]_q`.
    pub fn level_sizes(&self) -> Vec<u64> {
        let (k, n) = (self.k() as usize, self.n() as usize);
        // Step i turns [n + i − 1 choose i − 1]_q into [n + i choose i]_q:
        // times (1 − q^(n+i)), divided by (1 − q^i).
        let mut poly: Vec<i128> = vec![0; k * n + 1];
        poly[0] = 1;
        for i in 1..=k {
            let deg = (i - 1) * n;
            for t in (0..=deg).rev() {
                if t + n + i <= k * n {
                    poly[t + n + i] -= poly[t];
                }
            }
            for t in i..=i * n {
                poly[t] += poly[t - i];
            }
            // The quotient has degree i·n: what lies above is the dividend's.
            for c in poly.iter_mut().take(k * n + 1).skip(i * n + 1) {
                *c = 0;
            }
        }
        poly.into_iter().map(|c| u64::try_from(c).expect("a level size fits in 64 bits")).collect()
    }
}

/// `C(n, k)`, or `None` when it exceeds `u64`.
pub(crate) fn binomial(n: u64, k: u64) -> Option<u64> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * u128::from(n - i) / u128::from(i + 1);
        if r > u128::from(u64::MAX) {
            return None;
        }
    }
    Some(r as u64)
}

/// The dense ranking of prefixes: non-increasing `m`-tuples
/// `(p_0, …, p_{m−1})` of values `0..=n`, in lexicographic order.
///
/// The rank is `Σ_i C(p_i + m − i − 1, m − i)`: the tuples before `p` that
/// first differ at entry `i` have a smaller value `v < p_i` there and any
/// non-increasing tail bounded by `v`, `C(v + m − i − 1, m − i − 1)` of them,
/// which sums to that binomial. The last entry counts one, so the prefixes
/// that share their first `m − 1` entries are consecutive.
#[derive(Clone, Debug)]
pub struct PrefixRanking {
    m: usize,
    n: u32,
    /// `terms[i][v] = C(v + m − i − 1, m − i)`.
    terms: Vec<Vec<u64>>,
    /// `tails[i][v] = Σ_{l ≥ i} terms[l][v]`: the rank's share of `v`
    /// repeated from entry `i` to the end (`tails[m]` is zero).
    tails: Vec<Vec<u64>>,
}

impl PrefixRanking {
    /// The ranking of `m`-tuples bounded by `n`; `None` if there are more
    /// than `u64` can count.
    pub fn new(m: usize, n: u32) -> Option<Self> {
        binomial(u64::from(n) + m as u64, m as u64)?;
        let terms: Vec<Vec<u64>> = (0..m)
            .map(|i| (0..=u64::from(n)).map(|v| binomial(v + (m - i - 1) as u64, (m - i) as u64).expect("bounded by the count")).collect())
            .collect();
        let mut tails = vec![vec![0u64; n as usize + 1]; m + 1];
        for i in (0..m).rev() {
            for v in 0..=n as usize {
                tails[i][v] = tails[i + 1][v] + terms[i][v];
            }
        }
        Some(PrefixRanking { m, n, terms, tails })
    }

    /// Entries of a prefix.
    pub fn width(&self) -> usize {
        self.m
    }

    /// Largest entry.
    pub fn bound(&self) -> u32 {
        self.n
    }

    /// Number of prefixes, `C(n + m, m)`.
    pub fn len(&self) -> u64 {
        binomial(u64::from(self.n) + self.m as u64, self.m as u64).expect("checked by new")
    }

    /// Whether there are no prefixes (never: the all-zero prefix exists).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The rank of a non-increasing prefix of `width()` entries `≤ bound()`.
    pub fn rank(&self, p: &[u16]) -> u64 {
        debug_assert_eq!(p.len(), self.m);
        p.iter().zip(&self.terms).map(|(&v, t)| t[v as usize]).sum()
    }

    /// `terms[i][v]`, the share of entry `i` being `v`.
    #[inline]
    pub(crate) fn term(&self, i: usize, v: u32) -> u64 {
        self.terms[i][v as usize]
    }

    /// `tails[i]`: the share of every entry from `i` on being `v`, by `v`.
    #[inline]
    pub(crate) fn tail(&self, i: usize) -> &[u64] {
        &self.tails[i]
    }
}

/// A solved few-row box: the losing length of every prefix.
pub struct FewRowTable {
    shape: FewRowBox,
    ranking: PrefixRanking,
    table: Vec<AtomicU16>,
}

/// One level of a solved box, as `--report-json` lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LevelCount {
    /// Tile count.
    pub tiles: u32,
    /// Positions with that many tiles.
    pub positions: u64,
    /// Losses among them.
    pub losses: u64,
}

impl FewRowTable {
    /// The box.
    pub fn shape(&self) -> FewRowBox {
        self.shape
    }

    /// The prefixes' ranking.
    pub fn ranking(&self) -> &PrefixRanking {
        &self.ranking
    }

    /// The losing length of the prefix of rank `rank` ([`NONE`]: no loss).
    pub fn entry(&self, rank: u64) -> u16 {
        self.table[rank as usize].load(Relaxed)
    }

    /// Number of entries (prefixes).
    pub fn len(&self) -> u64 {
        self.table.len() as u64
    }

    /// Whether the table has no entries (never: a box has the all-zero prefix).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Writes the table as a complete checkpoint (see [`write_checkpoint`]).
    ///
    /// # Errors
    /// [`FewRowError::Io`] when the file cannot be written.
    pub fn save(&self, path: &std::path::Path) -> Result<(), FewRowError> {
        let done = (self.ranking.width().saturating_sub(1) as u32) * self.ranking.bound() + 1;
        write_checkpoint(path, self.shape, &self.table, done)
    }

    /// Whether `p` (in the box as asked, not transposed) is a loss.
    ///
    /// # Errors
    /// [`FewRowError::Position`] when `p` is empty or does not fit the box.
    pub fn is_loss(&self, p: &FewRowPosition) -> Result<bool, FewRowError> {
        let q = if self.shape.transposed() {
            p.transposed().ok_or_else(|| FewRowError::Position(format!("the position has more than {} columns", self.shape.cols)))?
        } else {
            *p
        };
        let (k, n) = (self.shape.k() as usize, self.shape.n());
        if q.rows().is_empty() {
            return Err(FewRowError::Position("the empty board is not a position (the poisoned tile is always there)".into()));
        }
        if q.rows().len() > k || u32::from(q.rows()[0]) > n {
            return Err(FewRowError::Position(format!("the position does not fit the {}x{} box", self.shape.rows, self.shape.cols)));
        }
        let mut all = [0u16; MAX_ROWS as usize];
        all[..q.rows().len()].copy_from_slice(q.rows());
        Ok(self.loses(&all))
    }

    /// The losing length of the last row after the first `k − 1` rows of
    /// `rows` (the engine's orientation: `k` rows of up to `n`, zero rows at
    /// the end); `None` when no last row makes a loss. One row: the single tile.
    pub(crate) fn losing_last(&self, rows: &[u16]) -> Option<u16> {
        let m = self.ranking.width();
        if m == 0 {
            return Some(1);
        }
        let e = self.entry(self.ranking.rank(&rows[..m]));
        (e != NONE).then_some(e)
    }

    /// Whether `rows` (the engine's orientation, as [`FewRowTable::losing_last`]) is a loss.
    pub(crate) fn loses(&self, rows: &[u16]) -> bool {
        self.losing_last(rows) == Some(rows[self.ranking.width()])
    }

    /// Positions and losses of every level `1..=rows·cols`.
    pub fn level_counts(&self) -> Vec<LevelCount> {
        let sizes = self.shape.level_sizes();
        let mut losses = vec![0u64; sizes.len()];
        let m = self.ranking.width();
        if m == 0 {
            losses[1] = 1;
        } else {
            // Every prefix in rank order with its tile count.
            let mut p = vec![0u16; m];
            let n = self.ranking.bound() as u16;
            for e in &self.table {
                let e = e.load(Relaxed);
                if e != NONE {
                    losses[p.iter().map(|&v| v as usize).sum::<usize>() + e as usize] += 1;
                }
                next_prefix(&mut p, n);
            }
        }
        (1..sizes.len()).map(|t| LevelCount { tiles: t as u32, positions: sizes[t], losses: losses[t] }).collect()
    }
}

/// A random position of `k` rows of up to `n` (the first at least 1, zero
/// rows at the end), drawn as `verify` and the in-run check sample them:
/// `k` lengths, sorted.
pub(crate) fn random_rows(rng: &mut crate::rng::SplitMix, k: usize, n: u32) -> [u16; MAX_ROWS as usize] {
    let mut rows = [0u16; MAX_ROWS as usize];
    for r in &mut rows[..k] {
        *r = rng.below(u64::from(n) + 1) as u16;
    }
    rows[..k].sort_unstable_by(|a, b| b.cmp(a));
    rows[0] = rows[0].max(1);
    rows
}

/// Steps `p` to the next non-increasing tuple bounded by `n` in
/// lexicographic order (wraps to zeros after the last).
pub(crate) fn next_prefix(p: &mut [u16], n: u16) {
    for i in (0..p.len()).rev() {
        let cap = if i == 0 { n } else { p[i - 1] };
        if p[i] < cap {
            p[i] += 1;
            for v in &mut p[i + 1..] {
                *v = 0;
            }
            return;
        }
    }
    p.iter_mut().for_each(|v| *v = 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_is_dense_and_lexicographic() {
        for m in 1..=4 {
            for n in 0..=6u16 {
                let r = PrefixRanking::new(m, n.into()).unwrap();
                let mut p = vec![0u16; m];
                for want in 0..r.len() {
                    assert_eq!(r.rank(&p), want, "m={m} n={n} {p:?}");
                    next_prefix(&mut p, n);
                }
                assert!(p.iter().all(|&v| v == 0), "wrapped after the last");
            }
        }
    }

    #[test]
    fn level_sizes_are_gaussian_binomials() {
        // 2x3: positions by tiles 1,1,2,2,2,1,1 after the empty board.
        assert_eq!(FewRowBox::new(2, 3).unwrap().level_sizes(), vec![1, 1, 2, 2, 2, 1, 1]);
        let b = FewRowBox::new(4, 500).unwrap();
        assert_eq!(b.level_sizes().iter().sum::<u64>(), binomial(504, 4).unwrap());
    }

    #[test]
    fn positions_transpose() {
        let p = FewRowPosition::new(&[3, 1, 1, 0]).unwrap();
        assert_eq!(p.rows(), &[3, 1, 1]);
        assert_eq!(p.transposed().unwrap().rows(), &[3, 1, 1]);
        assert_eq!(FewRowPosition::new(&[4, 2]).unwrap().transposed().unwrap().rows(), &[2, 2, 1, 1]);
        assert!(FewRowPosition::new(&[1, 2]).is_err());
        assert!(FewRowPosition::new(&[1; 9]).is_err());
        assert!(FewRowPosition::new(&[65_536]).is_err());
    }
}
