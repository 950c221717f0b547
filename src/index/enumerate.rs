//! The one enumeration of a level's positions: a depth-first walk over row
//! lengths in rank order, starting from a fixed prefix of top rows.
//!
//! The sieve's scan, the Grundy pass and the ranking's own iteration all use
//! it. A visitor may take a whole subtree at once when no row bound can cut
//! it: its positions then form one contiguous rank range (the scan reads
//! such ranges a word of mark bits at a time).

use super::Ranking;

/// What the walk calls. [`Visit::position`] is called for every position in
/// rank order, unless [`Visit::range`] took the subtree that holds it.
pub trait Visit {
    /// Called for each position: its rank in the level and its rows.
    fn position(&mut self, rank: u64, rows: &[u8]);

    /// [`Visit::position`], told also that rows `0..same` are those of the
    /// position this walk visited before (`same` may be smaller than the
    /// rows they truly share; it is 0 for a walk's first position). The
    /// Grundy pass keeps per-prefix sums and rebuilds only those below `same`.
    #[inline(always)]
    fn position_from(&mut self, rank: u64, rows: &[u8], _same: usize) {
        self.position(rank, rows)
    }

    /// Offered a subtree whose positions are exactly the ranks
    /// `first + skip..first + count`: the rows `rows` followed by the
    /// completions of `rest` tiles with parts at most `max_part` (the rank
    /// `first + j` holds the `j`-th, counted from 0; a row bound that
    /// leaves one or two rows fewer than `rest` cuts only the first `skip`
    /// of them). Return `true` to take it whole (then [`Visit::position`]
    /// is not called for it).
    #[inline(always)]
    fn range(&mut self, _first: u64, _count: u64, _skip: u64, _rows: &[u8], _rest: u32, _max_part: u32) -> bool {
        false
    }
}

/// A closure is a visitor of positions only.
impl<F: FnMut(u64, &[u8])> Visit for F {
    #[inline(always)]
    fn position(&mut self, rank: u64, rows: &[u8]) {
        self(rank, rows)
    }
}

/// A closure told, with each position, how many top rows it shares with the
/// last one (see [`Visit::position_from`]).
pub struct Changes<F>(pub F);

impl<F: FnMut(u64, &[u8], usize)> Visit for Changes<F> {
    #[inline(always)]
    fn position(&mut self, rank: u64, rows: &[u8]) {
        (self.0)(rank, rows, 0)
    }
    #[inline(always)]
    fn position_from(&mut self, rank: u64, rows: &[u8], same: usize) {
        (self.0)(rank, rows, same)
    }
}

/// What a walk counts as it goes.
struct Tally {
    /// Positions covered (visited one by one or taken as ranges).
    covered: u64,
    /// The lowest row written since the last position visited.
    same: usize,
}

/// The fixed parameters of one walk.
struct Walk {
    /// Most rows a visited position may have.
    max_rows: u32,
    /// Whether that is the universe's row bound (every subtree is then a rank range).
    uncut: bool,
}

impl Ranking {
    /// Walks the positions of level `n` whose top rows are `prefix`, in rank
    /// order (they form a contiguous rank range). With `canonical`, only
    /// positions with no more rows than columns are visited (one of each
    /// conjugate pair, for symmetric universes). Returns the number of
    /// positions covered (visited one by one or taken as ranges).
    pub fn walk(&self, n: u32, prefix: &[u8], canonical: bool, visit: &mut impl Visit) -> u64 {
        let Some(&first) = prefix.first() else { return 0 };
        let first = first as u32;
        let max_rows = self.universe().rows.unwrap_or(n).min(n);
        let max_rows = if canonical { max_rows.min(first) } else { max_rows };
        let used: u32 = prefix.iter().map(|&r| r as u32).sum();
        if first == 0
            || used > n
            || first > self.max_part()
            || prefix.len() as u32 > max_rows
            || prefix.windows(2).any(|w| w[0] < w[1])
            || prefix.contains(&0)
        {
            return 0;
        }
        let mut rows = [0u8; 256];
        let mut rank = 0;
        let mut s = n;
        for (i, &v) in prefix.iter().enumerate() {
            rows[i] = v;
            rank += self.contribution(s, i as u32, v as u32);
            s -= v as u32;
        }
        let last = prefix[prefix.len() - 1] as u32;
        let mut tally = Tally { covered: 0, same: 0 };
        // When only the universe's own row bound limits the rows (no
        // canonical cut), every subtree is a contiguous rank range that the
        // ranking counts: offer each one whole.
        let uncut = self.universe().rows == Some(max_rows);
        let walk = Walk { max_rows, uncut };
        self.dfs(&walk, s, prefix.len() as u32, last, rank, &mut rows, visit, &mut tally);
        tally.covered
    }

    /// Calls `f(rank, rows)` for every position of level `n` whose top rows
    /// are `prefix`, in rank order (see [`Ranking::walk`]).
    pub fn for_each_with_prefix(&self, n: u32, prefix: &[u8], canonical: bool, mut f: impl FnMut(u64, &[u8])) {
        self.walk(n, prefix, canonical, &mut f);
    }

    #[allow(clippy::too_many_arguments)]
    fn dfs(&self, w: &Walk, s: u32, i: u32, prev: u32, rank: u64, rows: &mut [u8; 256], visit: &mut impl Visit, tally: &mut Tally) {
        if s == 0 {
            tally.covered += 1;
            visit.position_from(rank, &rows[..i as usize], tally.same);
            tally.same = i as usize;
            return;
        }
        let rows_after = w.max_rows - i; // rows still allowed, this one included
        if rows_after == 0 {
            return;
        }
        if rows_after >= s || w.uncut {
            // No row bound can bind (s tiles fill at most s rows), or only
            // the universe's, which the counts know: every completion with
            // parts <= prev (and at most rows_after rows) is in, as one
            // contiguous range.
            let count = self.q(s, rows_after.min(s), prev);
            if count == 0 {
                return;
            }
            if visit.range(rank, count, 0, &rows[..i as usize], s, prev) {
                tally.covered += count;
                return;
            }
        } else if s - rows_after <= 2 && self.universe().rows.is_none() {
            // Rows unbounded, a bound of the walk's own (the canonical cut)
            // one or two rows short: the completions with too many rows are
            // `1^s` and `2 1^(s−2)`, the first two in rank order, so the rest
            // is a range too.
            let count = self.q(s, s, prev);
            let skip = (s - rows_after).min(prev) as u64;
            if count > skip && visit.range(rank, count, skip, &rows[..i as usize], s, prev) {
                tally.covered += count - skip;
                return;
            }
        }
        // v must leave s - v for rows_after - 1 rows of length <= v.
        let lo = s.div_ceil(rows_after).max(1);
        for v in lo..=prev.min(s) {
            rows[i as usize] = v as u8;
            tally.same = tally.same.min(i as usize);
            let r = rank + self.contribution(s, i, v);
            self.dfs(w, s - v, i + 1, v, r, rows, visit, tally);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Universe;

    /// Takes every range offered and lists its positions.
    struct Ranges<'a>(&'a Ranking, Vec<(u64, Vec<u8>)>);

    impl Visit for Ranges<'_> {
        fn position(&mut self, rank: u64, rows: &[u8]) {
            self.1.push((rank, rows.to_vec()));
        }

        fn range(&mut self, first: u64, count: u64, skip: u64, rows: &[u8], rest: u32, max_part: u32) -> bool {
            for j in skip..count {
                let mut r = rows.to_vec();
                self.0.unrank_suffix(rest, max_part, j, &mut r);
                self.1.push((first + j, r));
            }
            true
        }
    }

    /// A walk taking ranges (also those the canonical cut trims by one or
    /// two ranks) visits exactly the positions of the walk without ranges,
    /// in rank order, each with its rank.
    #[test]
    fn ranges_cover_exactly_the_walk() {
        for u in [Universe::tiles(22), Universe::boxed(6, 7), Universe { rows: None, cols: Some(5), tiles: Some(20) }] {
            let rk = Ranking::new(&u).unwrap();
            for n in 1..=rk.max_tiles() {
                for canonical in [false, true] {
                    for top in 1..=n.min(rk.max_part()) {
                        let mut one = Vec::new();
                        rk.for_each_with_prefix(n, &[top as u8], canonical, |r, rows| one.push((r, rows.to_vec())));
                        let mut ranges = Ranges(&rk, Vec::new());
                        let covered = rk.walk(n, &[top as u8], canonical, &mut ranges);
                        assert_eq!(ranges.1, one, "{u:?} level {n}, top row {top}, canonical {canonical}");
                        assert_eq!(covered, one.len() as u64);
                        for (r, rows) in &one {
                            assert_eq!(rk.rank_rows(rows), *r);
                            assert!(!canonical || rows.len() <= top as usize);
                        }
                    }
                }
            }
        }
    }

    /// The rows a walk says a position shares with the previous one are
    /// exactly the rows they share (0 for a walk's first), in every universe
    /// kind, canonical or not, from prefixes of one and two rows.
    #[test]
    fn walks_tell_the_rows_unchanged() {
        for u in [Universe::tiles(20), Universe::boxed(6, 7), Universe { rows: None, cols: Some(5), tiles: Some(18) }] {
            let rk = Ranking::new(&u).unwrap();
            for n in 1..=rk.max_tiles() {
                for canonical in [false, true] {
                    for top in 1..=n.min(rk.max_part()) {
                        for second in 0..=top.min(n - top) {
                            let prefix: Vec<u8> = [top, second].into_iter().filter(|&r| r > 0).map(|r| r as u8).collect();
                            let mut last: Option<Vec<u8>> = None;
                            rk.walk(
                                n,
                                &prefix,
                                canonical,
                                &mut Changes(|_, rows: &[u8], same| {
                                    let shared = last.as_ref().map_or(0, |l| l.iter().zip(rows).take_while(|(x, y)| x == y).count());
                                    assert_eq!(same, shared, "{u:?} level {n} prefix {prefix:?}: {last:?} then {rows:?}");
                                    last = Some(rows.to_vec());
                                }),
                            );
                        }
                    }
                }
            }
        }
    }
}
