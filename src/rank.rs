//! Ranking: a bijection between the positions of one level (tile count) of a
//! universe and `0..size`.
//!
//! Positions of a level are ordered lexicographically by row lengths, top row
//! first, shorter rows first. With `Q(s, r, m)` the number of partitions of
//! `s` into at most `r` parts, each at most `m`, the rank of `λ` is
//!
//! ```text
//! rank(λ) = Σ_i Q(suf_i, R − i, λ_i − 1),   suf_i = λ_i + λ_{i+1} + …
//! ```
//!
//! (the positions sharing rows `0..i` and with a shorter row `i`). Positions
//! sharing a top-row length form a contiguous range starting at
//! `Q(n, R, c − 1)`: the unit for sharding a level.

use crate::position::Position;
use crate::universe::{Universe, UniverseError};

/// Count table `Q(s, r, m)` of a universe, with rank and unrank.
#[derive(Clone, Debug)]
pub struct Ranking {
    universe: Universe,
    /// Row bound, or `None` (one plane of the table stands for all row counts).
    max_rows: Option<u32>,
    /// Largest level.
    max_tiles: u32,
    /// Largest part stored in the table (`min(cols, max_tiles)`).
    max_part: u32,
    /// `(plane, s, m)` flattened; plane = rows left when bounded, else 0.
    table: Vec<u64>,
    /// The same counts with a plane for every row bound (built on first use,
    /// for balancing work by canonical positions).
    bounded: std::sync::Arc<std::sync::OnceLock<Ranking>>,
}

impl Ranking {
    /// Builds the count table of a universe.
    ///
    /// # Errors
    /// [`UniverseError`] for an invalid universe or level sizes beyond `u64`.
    pub fn new(universe: &Universe) -> Result<Self, UniverseError> {
        universe.validate()?;
        let max_tiles = universe.max_tiles();
        // Unbounded levels overflow 64 bits past 405 tiles; boxes this large are
        // far beyond anything computable. Refuse before allocating the table.
        if max_tiles > 1024 {
            return Err(UniverseError::Overflow { tiles: max_tiles });
        }
        let max_part = universe.cols.unwrap_or(max_tiles).min(max_tiles);
        let max_rows = universe.rows.filter(|&r| r < max_tiles);
        let planes = max_rows.map_or(1, |r| r as usize + 1);
        let (sdim, mdim) = (max_tiles as usize + 1, max_part as usize + 1);
        let mut table = vec![0u64; planes * sdim * mdim];
        let idx = |p: usize, s: usize, m: usize| (p * sdim + s) * mdim + m;
        for p in 0..planes {
            for s in 0..sdim {
                for m in 0..mdim {
                    let v = if s == 0 {
                        1
                    } else if m == 0 || (max_rows.is_some() && p == 0) {
                        0
                    } else {
                        let without = table[idx(p, s, m - 1)];
                        let with = if s >= m {
                            let below = if max_rows.is_some() { p - 1 } else { 0 };
                            table[idx(below, s - m, m)]
                        } else {
                            0
                        };
                        without.checked_add(with).ok_or(UniverseError::Overflow { tiles: s as u32 })?
                    };
                    table[idx(p, s, m)] = v;
                }
            }
        }
        Ok(Ranking { universe: *universe, max_rows, max_tiles, max_part, table, bounded: Default::default() })
    }

    /// The universe this ranking covers.
    pub fn universe(&self) -> &Universe {
        &self.universe
    }

    /// Largest level.
    pub fn max_tiles(&self) -> u32 {
        self.max_tiles
    }

    #[inline(always)]
    fn index(&self, s: u32, rows_left: u32, m: u32) -> usize {
        let plane = match self.max_rows {
            Some(_) => rows_left as usize,
            None => 0,
        };
        (plane * (self.max_tiles as usize + 1) + s as usize) * (self.max_part as usize + 1) + m as usize
    }

    /// `Q(s, r, m)`: partitions of `s` into at most `r` parts, each at most `m`
    /// (`r` is ignored when rows are unbounded; `m` is clamped to the table).
    #[inline(always)]
    pub fn q(&self, s: u32, rows_left: u32, m: u32) -> u64 {
        let r = match self.max_rows {
            Some(max) => rows_left.min(max),
            None => 0,
        };
        self.table[self.index(s, r, m.min(self.max_part))]
    }

    /// Contribution of row `row` of value `v` with `suffix` tiles in rows `row..`:
    /// the number of completions that rank before it.
    #[inline(always)]
    pub fn contribution(&self, suffix: u32, row: u32, v: u32) -> u64 {
        let rows_left = match self.max_rows {
            Some(max) => max - row,
            None => 0,
        };
        debug_assert!(v >= 1 && v <= self.max_part && suffix <= self.max_tiles);
        // SAFETY-free fast path: bounds are guaranteed by the universe, checked in debug.
        self.table[self.index(suffix, rows_left, v - 1)]
    }

    /// Rows left below row `row` (inclusive) under the row bound, or `u32::MAX`.
    pub fn rows_left(&self, row: u32) -> u32 {
        match self.universe.rows {
            Some(r) => r.saturating_sub(row),
            None => u32::MAX,
        }
    }

    /// Number of positions with `n` tiles in the universe (0 outside `1..=max_tiles`).
    pub fn size(&self, n: u32) -> u64 {
        if n == 0 || n > self.max_tiles {
            return 0;
        }
        self.q(n, self.universe.rows.unwrap_or(n), self.max_part)
    }

    /// First rank of the positions with `n` tiles whose top row has length `c`.
    pub fn block_start(&self, n: u32, c: u32) -> u64 {
        self.q(n, self.universe.rows.unwrap_or(n), c - 1)
    }

    /// Rank of a position of the universe within its level.
    ///
    /// The caller guarantees membership ([`Universe::contains`]).
    pub fn rank_rows(&self, rows: &[u8]) -> u64 {
        let mut suffix: u32 = rows.iter().map(|&r| r as u32).sum();
        let mut rank = 0;
        for (i, &v) in rows.iter().enumerate() {
            rank += self.contribution(suffix, i as u32, v as u32);
            suffix -= v as u32;
        }
        rank
    }

    /// Rank of a position, or `None` when it lies outside the universe.
    pub fn rank(&self, p: &Position) -> Option<u64> {
        self.universe.contains(p).then(|| self.rank_rows(p.rows()))
    }

    /// The position of level `n` with the given rank, or `None` when out of range.
    pub fn unrank(&self, n: u32, rank: u64) -> Option<Position> {
        if rank >= self.size(n) {
            return None;
        }
        let mut rows = Vec::new();
        self.unrank_into(n, rank, &mut rows);
        Some(Position::from_valid_rows(&rows))
    }

    /// Unranks into a byte buffer (cleared first). `rank` must be below `size(n)`.
    pub fn unrank_into(&self, n: u32, rank: u64, rows: &mut Vec<u8>) {
        rows.clear();
        self.unrank_suffix(n, self.max_part, rank, rows);
    }

    /// Appends to `rows` (the top rows of a position) the completion of `s`
    /// more tiles, parts at most `prev`, whose rank among all such
    /// completions is `offset` (the sum of the contributions of its rows).
    pub fn unrank_suffix(&self, mut s: u32, mut prev: u32, mut offset: u64, rows: &mut Vec<u8>) {
        while s > 0 {
            let i = rows.len() as u32;
            let mut v = 1;
            // Largest v with contribution(v) <= offset; contributions grow with v.
            while v < prev.min(s) && self.contribution(s, i, v + 1) <= offset {
                v += 1;
            }
            offset -= self.contribution(s, i, v);
            rows.push(v as u8);
            s -= v;
            prev = v;
        }
    }

    /// Calls `f(rank, rows)` for every position of level `n` whose top row is
    /// `first`, in rank order. With `canonical`, only positions with no more
    /// rows than columns are visited (one of each conjugate pair, for
    /// symmetric universes).
    pub fn for_each_in_block(&self, n: u32, first: u32, canonical: bool, f: impl FnMut(u64, &[u8])) {
        self.for_each_with_prefix(n, &[first as u8], canonical, f)
    }

    /// Like [`Ranking::for_each_in_block`], for the positions of level `n`
    /// whose top rows are `prefix` (a contiguous rank range too).
    pub fn for_each_with_prefix(&self, n: u32, prefix: &[u8], canonical: bool, mut f: impl FnMut(u64, &[u8])) {
        let Some(&first) = prefix.first() else { return };
        let first = first as u32;
        let max_rows = self.universe.rows.unwrap_or(n).min(n);
        let max_rows = if canonical { max_rows.min(first) } else { max_rows };
        let used: u32 = prefix.iter().map(|&r| r as u32).sum();
        if first == 0 || used > n || first > self.max_part || prefix.len() as u32 > max_rows || prefix.windows(2).any(|w| w[0] < w[1]) {
            return;
        }
        let mut rows = [0u8; 256];
        let mut rank = 0;
        let mut s = n;
        for (i, &v) in prefix.iter().enumerate() {
            if v == 0 {
                return;
            }
            rows[i] = v;
            rank += self.contribution(s, i as u32, v as u32);
            s -= v as u32;
        }
        let last = prefix[prefix.len() - 1] as u32;
        self.block_dfs(s, prefix.len() as u32, last, max_rows, rank, &mut rows, &mut f);
    }

    /// Number of positions of level `n` whose top rows are `prefix`.
    pub fn prefix_size(&self, n: u32, prefix: &[u8]) -> u64 {
        let used: u32 = prefix.iter().map(|&r| r as u32).sum();
        let Some(&last) = prefix.last() else { return 0 };
        if used > n {
            return 0;
        }
        let rows_left = self.universe.rows.map_or(u32::MAX, |r| r.saturating_sub(prefix.len() as u32));
        if rows_left == 0 {
            return (used == n) as u64;
        }
        self.q(n - used, rows_left, last as u32)
    }

    /// Positions each unit of level `n` visits (only canonical ones, with no
    /// more rows than columns, with `canonical`): the weights that balance a
    /// split of the level. Counted from a table, without visiting them.
    pub fn unit_weights(&self, n: u32, units: &[Vec<u8>], canonical: bool) -> Vec<u64> {
        if !canonical {
            return units.iter().map(|u| self.prefix_size(n, u)).collect();
        }
        let all_rows = self.bounded.get_or_init(|| {
            let u = Universe { rows: Some(self.max_tiles.saturating_sub(1).max(1)), cols: self.universe.cols, tiles: Some(self.max_tiles) };
            Ranking::new(&u).expect("a smaller table than this one")
        });
        units
            .iter()
            .map(|u| {
                let used: u32 = u.iter().map(|&r| r as u32).sum();
                let rows = self.universe.rows.unwrap_or(n).min(n).min(u[0] as u32);
                if used > n || (u.len() as u32) > rows {
                    return 0;
                }
                let rest = n - used;
                if rest == 0 {
                    return 1;
                }
                all_rows.q(rest, rows - u.len() as u32, u[u.len() - 1] as u32)
            })
            .collect()
    }

    /// Share `part` of `parts` of level `n`: a contiguous run of its work
    /// units, balanced by the positions they visit (canonical ones only with
    /// `canonical`). One part is the whole level.
    pub fn level_share(&self, n: u32, canonical: bool, part: usize, parts: usize) -> Vec<Vec<u8>> {
        let mut units = self.level_units(n);
        if parts == 1 {
            return units;
        }
        let weights = self.unit_weights(n, &units, canonical);
        let mine = crate::cluster::split_weighted(&weights, parts, part);
        units.drain(mine).collect()
    }

    /// The work units of a level: prefixes of one or two rows whose ranges
    /// tile the level in rank order (finer than top-row blocks, for balance).
    pub fn level_units(&self, n: u32) -> Vec<Vec<u8>> {
        let mut units = Vec::new();
        for c in 1..=n.min(self.max_part) {
            if c == n || self.universe.rows == Some(1) {
                units.push(vec![c as u8]);
                continue;
            }
            for second in 1..=c.min(n - c) {
                units.push(vec![c as u8, second as u8]);
            }
        }
        units
    }

    #[allow(clippy::too_many_arguments)]
    fn block_dfs(&self, s: u32, i: u32, prev: u32, max_rows: u32, rank: u64, rows: &mut [u8; 256], f: &mut impl FnMut(u64, &[u8])) {
        if s == 0 {
            f(rank, &rows[..i as usize]);
            return;
        }
        let rows_after = max_rows - i; // rows still allowed, this one included
        if rows_after == 0 {
            return;
        }
        // v must leave s - v for rows_after - 1 rows of length <= v.
        let lo = s.div_ceil(rows_after).max(1);
        for v in lo..=prev.min(s) {
            rows[i as usize] = v as u8;
            let r = rank + self.contribution(s, i, v);
            self.block_dfs(s - v, i + 1, v, max_rows, r, rows, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_numbers() {
        let r = Ranking::new(&Universe::tiles(100)).unwrap();
        assert_eq!(r.size(5), 7);
        assert_eq!(r.size(20), 627);
        assert_eq!(r.size(90), 56_634_173);
        assert_eq!(r.size(93), 82_010_177);
        assert_eq!(r.size(100), 190_569_292);
    }

    #[test]
    fn box_sizes_sum_to_binomial() {
        let u = Universe::boxed(8, 15);
        let r = Ranking::new(&u).unwrap();
        let total: u64 = (1..=120).map(|n| r.size(n)).sum();
        assert_eq!(total + 1, 490_314); // C(23, 8), empty position included
    }

    #[test]
    fn rank_unrank_roundtrip_small() {
        for u in [Universe::tiles(14), Universe::boxed(3, 5), Universe { rows: Some(4), cols: None, tiles: Some(12) }] {
            let r = Ranking::new(&u).unwrap();
            for n in 1..=r.max_tiles() {
                let mut seen = 0;
                for first in 1..=n {
                    r.for_each_in_block(n, first, false, |rank, rows| {
                        assert_eq!(rank, seen, "block order is rank order");
                        assert_eq!(r.rank_rows(rows), rank);
                        assert_eq!(r.unrank(n, rank).unwrap().rows(), rows);
                        seen += 1;
                    });
                }
                assert_eq!(seen, r.size(n));
            }
        }
    }

    #[test]
    fn canonical_weights_count_canonical_positions() {
        for u in [Universe::tiles(40), Universe::boxed(7, 7), Universe { rows: Some(5), cols: Some(5), tiles: Some(18) }] {
            let r = Ranking::new(&u).unwrap();
            for n in 1..=r.max_tiles() {
                let units = r.level_units(n);
                let weights = r.unit_weights(n, &units, true);
                for (unit, w) in units.iter().zip(weights) {
                    let mut count = 0;
                    r.for_each_with_prefix(n, unit, true, |_, _| count += 1);
                    assert_eq!(w, count, "{u:?} level {n} unit {unit:?}");
                }
            }
        }
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(matches!(Ranking::new(&Universe::tiles(500)), Err(UniverseError::Overflow { .. })));
    }
}
