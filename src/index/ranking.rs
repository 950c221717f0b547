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
//! `Q(n, R, c − 1)`: the unit for sharding a level. See `docs/math.md`,
//! "Ranking".

use crate::game::{Position, Universe, UniverseError};

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
    /// The same counts as `(plane, m, s)`: each part bound's counts by
    /// suffix in a row (see [`Ranking::contributions`]).
    by_part: Vec<u64>,
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
        const MAX_TILES: u32 = 1024;
        universe.validate()?;
        let max_tiles = universe.max_tiles();
        // Unbounded levels overflow 64 bits past 405 tiles; boxes this large are
        // far beyond anything computable. Refuse before allocating the table.
        if max_tiles > MAX_TILES {
            return Err(UniverseError::TooManyTiles { tiles: max_tiles, max: MAX_TILES });
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
        let mut by_part = vec![0u64; table.len()];
        for p in 0..planes {
            for s in 0..sdim {
                for m in 0..mdim {
                    by_part[(p * mdim + m) * sdim + s] = table[idx(p, s, m)];
                }
            }
        }
        Ok(Ranking { universe: *universe, max_rows, max_tiles, max_part, table, by_part, bounded: Default::default() })
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

    /// The contributions of row `row` of value `v` for every suffix:
    /// `contributions(row, v)[suffix] == contribution(suffix, row, v)`, in
    /// one slice (loops over suffixes read it in order).
    #[inline(always)]
    pub fn contributions(&self, row: u32, v: u32) -> &[u64] {
        let plane = match self.max_rows {
            Some(max) => (max - row) as usize,
            None => 0,
        };
        debug_assert!(v >= 1 && v <= self.max_part);
        let sdim = self.max_tiles as usize + 1;
        let at = (plane * (self.max_part as usize + 1) + v as usize - 1) * sdim;
        &self.by_part[at..at + sdim]
    }

    /// Number of positions with `n` tiles in the universe (0 outside `1..=max_tiles`).
    pub fn size(&self, n: u32) -> u64 {
        if n == 0 || n > self.max_tiles {
            return 0;
        }
        self.q(n, self.universe.rows.unwrap_or(n), self.max_part)
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

    /// Largest part (row length) the count table holds.
    pub(crate) fn max_part(&self) -> u32 {
        self.max_part
    }

    /// The same counts with a plane for every row bound (built on first
    /// use; the split of a level counts canonical positions with it).
    pub(crate) fn row_bounded(&self) -> &Ranking {
        self.bounded.get_or_init(|| {
            // No position has more rows than the universe allows (a box's
            // rows), nor more than its tiles.
            let rows = self.universe.rows.unwrap_or(u32::MAX).min(self.max_tiles.saturating_sub(1)).max(1);
            let u = Universe { rows: Some(rows), cols: self.universe.cols, tiles: Some(self.max_tiles) };
            Ranking::new(&u).expect("a smaller table than this one")
        })
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
                    r.for_each_with_prefix(n, &[first as u8], false, |rank, rows| {
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
                let units = crate::index::split::level_units(&r, n);
                let weights = crate::index::split::unit_weights(&r, n, &units, true);
                for (unit, w) in units.iter().zip(weights) {
                    let mut count = 0;
                    r.for_each_with_prefix(n, unit, true, |_, _| count += 1);
                    assert_eq!(w, count, "{u:?} level {n} unit {unit:?}");
                }
            }
        }
    }

    #[test]
    fn row_bounded_counts_of_a_large_box() {
        // A box's levels exceed 255 tiles while its rows stay few: the
        // counts under every row bound are the box's own.
        let r = Ranking::new(&Universe::boxed(20, 20)).unwrap();
        let b = r.row_bounded();
        for (s, rows, m) in [(200, 20, 20), (37, 5, 9), (399, 20, 20), (1, 1, 1)] {
            assert_eq!(b.q(s, rows, m), r.q(s, rows, m), "Q({s}, {rows}, {m})");
        }
    }

    #[test]
    fn contributions_by_suffix_are_the_contributions() {
        for u in [Universe::tiles(30), Universe::boxed(5, 8), Universe { rows: Some(4), cols: None, tiles: Some(16) }] {
            let r = Ranking::new(&u).unwrap();
            let rows = u.rows.unwrap_or(r.max_tiles()).min(r.max_tiles());
            for row in 0..rows {
                for v in 1..=r.max_part() {
                    let by_suffix = r.contributions(row, v);
                    assert_eq!(by_suffix.len(), r.max_tiles() as usize + 1);
                    for suffix in 0..=r.max_tiles() {
                        assert_eq!(by_suffix[suffix as usize], r.contribution(suffix, row, v), "{u:?} ({suffix}, {row}, {v})");
                    }
                }
            }
        }
    }

    #[test]
    fn overflow_is_an_error() {
        let wide = Universe { rows: Some(50), cols: Some(50), tiles: Some(1000) };
        assert!(matches!(Ranking::new(&wide), Err(UniverseError::Overflow { .. })));
        // Past 255 tiles every side must be bounded: a row of them all would not fit a position.
        assert_eq!(Ranking::new(&Universe::tiles(500)).unwrap_err(), UniverseError::UnboundedSide("cols"));
        let row = Universe { rows: Some(1), cols: None, tiles: Some(256) };
        assert_eq!(Ranking::new(&row).unwrap_err(), UniverseError::UnboundedSide("cols"));
        let column = Universe { rows: None, cols: Some(1), tiles: Some(256) };
        assert_eq!(Ranking::new(&column).unwrap_err(), UniverseError::UnboundedSide("rows"));
        assert!(Ranking::new(&Universe { rows: Some(1), cols: None, tiles: Some(255) }).is_ok());
    }
}
