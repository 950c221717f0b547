//! The ranking's contributions laid out by suffix.

use crate::index::Ranking;

/// The contributions of the ranking laid out with the suffix innermost:
/// `row(i, v)[s] = contribution(s, i, v)`, so that one row's contribution to
/// the parents of every size is one contiguous slice.
pub(super) struct BySuffix {
    /// Rows with distinct contributions (1 when rows are unbounded).
    pub(super) planes: u32,
    pub(super) max_part: u32,
    pub(super) stride: usize,
    pub(super) table: Vec<u64>,
    /// With one plane, the sums of a row's contributions down a block of
    /// rows of equal length: `blocks[v·stride + s] = Σ_{i ≥ 0, s − iv ≥ 0}
    /// contribution(s − iv, ·, v)`. The rows `x..y` of length `v` above a
    /// suffix of `S` tiles contribute `F(v, S + (y − x)v) − F(v, S)` in all.
    pub(super) blocks: Vec<u64>,
}

impl BySuffix {
    pub(super) fn new(ranking: &Ranking) -> Self {
        let top = ranking.max_tiles();
        let u = ranking.universe();
        let max_part = u.cols.unwrap_or(top).min(top);
        // Contributions depend on the row only through the rows left under a row bound.
        let planes = u.rows.filter(|&r| r < top).unwrap_or(1);
        let stride = top as usize + 1;
        let mut table = vec![0; planes as usize * max_part as usize * stride];
        for i in 0..planes {
            for v in 1..=max_part {
                let at = ((i * max_part + v - 1) as usize) * stride;
                for (s, q) in table[at..at + stride].iter_mut().enumerate() {
                    *q = ranking.contribution(s as u32, i, v);
                }
            }
        }
        let mut blocks = Vec::new();
        if planes == 1 {
            blocks = vec![0; (max_part as usize + 1) * stride];
            for v in 1..=max_part as usize {
                for s in 0..stride {
                    let below = if s >= v { blocks[v * stride + s - v] } else { 0 };
                    blocks[v * stride + s] = below + table[(v - 1) * stride + s];
                }
            }
        }
        BySuffix { planes, max_part, stride, table, blocks }
    }

    /// `F(v, ·)` of [`BySuffix::blocks`] (one plane only).
    #[inline(always)]
    pub(super) fn block(&self, v: u32) -> &[u64] {
        &self.blocks[v as usize * self.stride..(v as usize + 1) * self.stride]
    }

    /// `contribution(s + m, i, v + m)` for `m = 0, 1, …` (`v >= 1`).
    #[inline(always)]
    pub(super) fn diagonal(&self, i: u32, v: u32, s: u32) -> impl Iterator<Item = &u64> {
        let plane = if self.planes == 1 { 0 } else { i };
        let at = ((plane * self.max_part + v - 1) as usize) * self.stride + s as usize;
        self.table[at..].iter().step_by(self.stride + 1)
    }

    /// `contribution(s, i, v)` for every suffix `s`.
    #[inline(always)]
    pub(super) fn row(&self, i: u32, v: u32) -> &[u64] {
        let plane = if self.planes == 1 { 0 } else { i };
        debug_assert!(plane < self.planes && v >= 1 && v <= self.max_part);
        let at = ((plane * self.max_part + v - 1) as usize) * self.stride;
        &self.table[at..at + self.stride]
    }
}
