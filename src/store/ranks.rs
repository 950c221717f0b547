//! A level's loss ranks as writers, pushes and checks read them: a sorted
//! slice (small levels, tests) or a compact set (a run's levels, 2 bytes a
//! loss at the frontier's density instead of 8).

use roaring::{RoaringBitmap, RoaringTreemap};
use std::ops::Range;

/// The losses of one level, shard by shard: `(first rank, ranks − first)`.
#[derive(Clone, Debug, Default)]
pub struct LossSet {
    /// The shards in rank order.
    pub parts: Vec<(u64, std::sync::Arc<RoaringBitmap>)>,
}

impl LossSet {
    /// Whether the position of rank `rank` loses.
    pub fn contains(&self, rank: u64) -> bool {
        let i = self.parts.partition_point(|(first, _)| *first <= rank);
        i > 0 && {
            let (first, bits) = &self.parts[i - 1];
            u32::try_from(rank - first).is_ok_and(|r| bits.contains(r))
        }
    }

    /// Number of losses.
    pub fn len(&self) -> u64 {
        self.parts.iter().map(|(_, b)| b.len()).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The loss ranks, increasing.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.parts.iter().flat_map(|(first, b)| b.iter().map(move |r| first + r as u64))
    }
}

/// Increasing, distinct ranks of one level.
pub trait SortedRanks: Sync {
    /// How many ranks.
    fn count(&self) -> u64;
    /// How many ranks are below `rank`.
    fn count_below(&self, rank: u64) -> u64;
    /// Whether `rank` is one of them.
    fn holds(&self, rank: u64) -> bool;
    /// The `i`-th rank (from 0), if there are more than `i`.
    fn nth_rank(&self, i: u64) -> Option<u64>;
    /// The ranks in `range`, increasing.
    fn ranks_in(&self, range: Range<u64>) -> Box<dyn Iterator<Item = u64> + Send + '_>;
}

impl SortedRanks for [u64] {
    fn count(&self) -> u64 {
        self.len() as u64
    }
    fn count_below(&self, rank: u64) -> u64 {
        self.partition_point(|&r| r < rank) as u64
    }
    fn holds(&self, rank: u64) -> bool {
        self.binary_search(&rank).is_ok()
    }
    fn nth_rank(&self, i: u64) -> Option<u64> {
        usize::try_from(i).ok().and_then(|i| self.get(i).copied())
    }
    fn ranks_in(&self, range: Range<u64>) -> Box<dyn Iterator<Item = u64> + Send + '_> {
        let (lo, hi) = (self.count_below(range.start) as usize, self.count_below(range.end) as usize);
        Box::new(self[lo..hi.max(lo)].iter().copied())
    }
}

impl SortedRanks for Vec<u64> {
    fn count(&self) -> u64 {
        self.as_slice().count()
    }
    fn count_below(&self, rank: u64) -> u64 {
        self.as_slice().count_below(rank)
    }
    fn holds(&self, rank: u64) -> bool {
        self.as_slice().holds(rank)
    }
    fn nth_rank(&self, i: u64) -> Option<u64> {
        self.as_slice().nth_rank(i)
    }
    fn ranks_in(&self, range: Range<u64>) -> Box<dyn Iterator<Item = u64> + Send + '_> {
        self.as_slice().ranks_in(range)
    }
}

/// The values of `bits` (offsets from `base`) within `range`.
fn bitmap_range(base: u64, bits: &RoaringBitmap, range: &Range<u64>) -> Option<std::ops::RangeInclusive<u32>> {
    let lo = range.start.saturating_sub(base);
    let hi = range.end.checked_sub(base)?.min(1 << 32);
    (lo < hi).then(|| lo as u32..=(hi - 1) as u32).filter(|_| !bits.is_empty())
}

impl SortedRanks for RoaringTreemap {
    fn count(&self) -> u64 {
        self.len()
    }
    fn count_below(&self, rank: u64) -> u64 {
        rank.checked_sub(1).map_or(0, |r| self.rank(r))
    }
    fn holds(&self, rank: u64) -> bool {
        self.contains(rank)
    }
    fn nth_rank(&self, i: u64) -> Option<u64> {
        self.select(i)
    }
    fn ranks_in(&self, range: Range<u64>) -> Box<dyn Iterator<Item = u64> + Send + '_> {
        Box::new(self.bitmaps().flat_map(move |(key, bits)| {
            let base = u64::from(key) << 32;
            bitmap_range(base, bits, &range).into_iter().flat_map(move |r| bits.range(r).map(move |v| base + u64::from(v)))
        }))
    }
}

impl SortedRanks for LossSet {
    fn count(&self) -> u64 {
        self.len()
    }
    fn count_below(&self, rank: u64) -> u64 {
        self.parts
            .iter()
            .filter(|(first, _)| *first < rank)
            .map(|(first, bits)| bits.rank(u32::try_from(rank - 1 - first).unwrap_or(u32::MAX)))
            .sum()
    }
    fn holds(&self, rank: u64) -> bool {
        self.contains(rank)
    }
    fn nth_rank(&self, mut i: u64) -> Option<u64> {
        for (first, bits) in &self.parts {
            if i < bits.len() {
                return bits.select(i as u32).map(|v| first + u64::from(v));
            }
            i -= bits.len();
        }
        None
    }
    fn ranks_in(&self, range: Range<u64>) -> Box<dyn Iterator<Item = u64> + Send + '_> {
        Box::new(self.parts.iter().flat_map(move |(first, bits)| {
            let first = *first;
            bitmap_range(first, bits, &range).into_iter().flat_map(move |r| bits.range(r).map(move |v| first + u64::from(v)))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Every implementation answers as the sorted slice does, across keys
    /// of the treemap and parts of the loss set.
    #[test]
    fn the_compact_sets_answer_as_the_slice() {
        let mut rng = crate::rng::SplitMix(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        let span = 3 << 32; // three treemap keys
        let mut ranks: Vec<u64> = (0..20_000).map(|_| next() % span).collect();
        ranks.extend([0, (1 << 32) - 1, 1 << 32, span - 1]);
        ranks.sort_unstable();
        ranks.dedup();
        let tree = RoaringTreemap::from_sorted_iter(ranks.iter().copied()).unwrap();
        // Parts of 2^31 ranks each, as shards would be.
        let set = LossSet {
            parts: (0..6u64)
                .map(|p| {
                    let first = p << 31;
                    let bits = ranks.iter().filter(|&&r| r >> 31 == p).map(|&r| (r - first) as u32);
                    (first, Arc::new(RoaringBitmap::from_sorted_iter(bits).unwrap()))
                })
                .collect(),
        };
        let slice: &[u64] = &ranks;
        let impls: [&dyn SortedRanks; 2] = [&tree, &set];
        let mut probes: Vec<u64> = (0..500).map(|_| next() % (span + 10)).collect();
        probes.extend([0, 1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, span - 1, span, u64::MAX]);
        for s in impls {
            assert_eq!(s.count(), slice.count());
            for &p in &probes {
                assert_eq!(s.count_below(p), slice.count_below(p), "count below {p}");
                assert_eq!(s.holds(p), slice.holds(p), "holds {p}");
            }
            for &r in &ranks {
                assert!(s.holds(r));
            }
            for i in [0, 1, 777, slice.count() - 1, slice.count(), slice.count() + 5] {
                assert_eq!(s.nth_rank(i), slice.nth_rank(i), "rank number {i}");
            }
            for w in probes.windows(2) {
                let (a, b) = (w[0].min(w[1]), w[0].max(w[1]));
                assert!(s.ranks_in(a..b).eq(slice.ranks_in(a..b)), "ranks in {a}..{b}");
                assert_eq!(s.ranks_in(b..a).count(), 0);
            }
            assert!(s.ranks_in(0..u64::MAX).eq(ranks.iter().copied()));
            assert!(s.ranks_in((1 << 32) - 1..(1 << 32) + 1).eq(slice.ranks_in((1 << 32) - 1..(1 << 32) + 1)));
        }
    }
}
