//! The losses a level's scan finds, held compactly while the scan runs.
//!
//! A scan finds canonical losses in rank order (a run of increasing ranks
//! per thread) and, in a symmetric universe, their conjugates anywhere in
//! the level. The increasing runs are packed into roaring sets as they
//! grow (dense: about 2 bytes a loss at the frontier's density); scattered
//! ranks wait as 32-bit offsets in buckets of 2^32 ranks (4 bytes). At the
//! end each bucket is sorted with the packed ranks that fall in it and
//! becomes one bitmap of the level's set. Today's alternative, one `u64`
//! per loss sorted at the end, holds 8 bytes a loss: 3.7 GB at 150 tiles.

use rayon::prelude::*;
use roaring::{RoaringBitmap, RoaringTreemap};

/// Increasing ranks packed into a roaring set at a time (64 Ki ranks, a
/// few containers: dense enough to cost 2 bytes a rank).
const RUN: usize = 1 << 16;
/// Scattered offsets per bucket chunk (chunks keep growth slack small).
const CHUNK: usize = 1 << 16;

/// Losses found by one part of a scan, mergeable with another's.
#[derive(Default)]
pub(super) struct Found {
    /// The current increasing run, not yet packed.
    run: Vec<u64>,
    /// Packed runs.
    packed: Vec<RoaringTreemap>,
    /// Scattered ranks by bucket (`rank >> 32`): chunks of low 32 bits.
    scattered: Vec<Vec<Vec<u32>>>,
}

impl Found {
    /// A rank, usually larger than the last one pushed here.
    pub(super) fn push_in_order(&mut self, rank: u64) {
        if self.run.last().is_some_and(|&last| rank <= last) {
            return self.push_any(rank);
        }
        self.run.push(rank);
        if self.run.len() == RUN {
            self.pack();
        }
    }

    /// A rank anywhere in the level.
    pub(super) fn push_any(&mut self, rank: u64) {
        let bucket = (rank >> 32) as usize;
        if self.scattered.len() <= bucket {
            self.scattered.resize_with(bucket + 1, Vec::new);
        }
        let chunks = &mut self.scattered[bucket];
        if chunks.last().is_none_or(|c| c.len() == CHUNK) {
            // Grown as it fills: a scan's piece (one unit) finds a few
            // conjugates, and a full chunk for each held memory for nothing.
            chunks.push(Vec::new());
        }
        chunks.last_mut().expect("a chunk with room").push(rank as u32);
    }

    fn pack(&mut self) {
        if !self.run.is_empty() {
            self.packed.push(RoaringTreemap::from_sorted_iter(self.run.drain(..)).expect("an increasing run"));
        }
    }

    /// Both parts' ranks.
    pub(super) fn merge(mut self, mut other: Found) -> Found {
        self.pack();
        other.pack();
        self.packed.append(&mut other.packed);
        if self.scattered.len() < other.scattered.len() {
            self.scattered.resize_with(other.scattered.len(), Vec::new);
        }
        for (mine, theirs) in self.scattered.iter_mut().zip(other.scattered) {
            mine.extend(theirs);
        }
        self
    }

    /// The set of every rank pushed (each rank is pushed once). Bucket by
    /// bucket: its scattered offsets, sorted, become bitmaps in pieces built
    /// in parallel, united with the packed runs' bitmaps in it (container by
    /// container: the runs are never unpacked and sorted again); each
    /// bucket's inputs are freed before the next. This runs at every level's
    /// end, while no other work is ready for the threads.
    pub(super) fn finish(mut self) -> RoaringTreemap {
        /// Sorted offsets per bitmap built on one thread.
        const PIECE: usize = 1 << 18;
        use roaring::MultiOps;
        self.pack();
        let buckets = self.packed.iter().filter_map(RoaringTreemap::max).map(|m| (m >> 32) as usize + 1).max().unwrap_or(0);
        let mut bitmaps = Vec::new();
        for bucket in 0..buckets.max(self.scattered.len()) {
            let chunks = self.scattered.get_mut(bucket).map(std::mem::take).unwrap_or_default();
            let mut values = Vec::with_capacity(chunks.iter().map(Vec::len).sum::<usize>());
            for chunk in chunks {
                values.extend_from_slice(&chunk);
            }
            values.par_sort_unstable();
            debug_assert!(values.windows(2).all(|w| w[0] < w[1]), "a rank pushed twice");
            let mut parts: Vec<RoaringBitmap> = values
                .par_chunks(PIECE)
                .map(|piece| RoaringBitmap::from_sorted_iter(piece.iter().copied()).expect("sorted offsets"))
                .collect();
            drop(values);
            parts.extend(self.packed.iter().filter_map(|p| in_bucket(p, bucket)).cloned());
            let (lo, hi) = ((bucket as u64) << 32, (bucket as u64 + 1) << 32);
            for p in &mut self.packed {
                p.remove_range(lo..hi);
            }
            self.packed.retain(|p| !p.is_empty());
            let pushed: u64 = parts.iter().map(RoaringBitmap::len).sum();
            let set = parts.union();
            debug_assert_eq!(set.len(), pushed, "a rank pushed twice");
            if !set.is_empty() {
                bitmaps.push((bucket as u32, set));
            }
        }
        RoaringTreemap::from_bitmaps(bitmaps)
    }
}

/// The bitmap of `set` in bucket `bucket` (its ranks `bucket << 32 ..`), if any.
fn in_bucket(set: &RoaringTreemap, bucket: usize) -> Option<&RoaringBitmap> {
    set.bitmaps().find(|&(key, _)| key as usize == bucket).map(|(_, bits)| bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks pushed in any mix of order, across buckets and merged parts,
    /// give the sorted set.
    #[test]
    fn found_ranks_finish_as_the_sorted_set() {
        let mut rng = crate::rng::SplitMix(0x2545_F491_4F6C_DD1D);
        let mut next = move || rng.next_u64();
        let span = 5u64 << 31;
        let mut all: Vec<u64> = (0..300_000).map(|_| next() % span).collect();
        all.extend([0, (1 << 32) - 1, 1 << 32, span - 1]);
        all.sort_unstable();
        all.dedup();
        // Four parts; each gets an increasing run of the even-indexed ranks
        // of its quarter and scattered odd-indexed ranks from everywhere.
        let mut parts: Vec<Found> = (0..4).map(|_| Found::default()).collect();
        let quarter = all.len().div_ceil(4);
        for (i, &r) in all.iter().enumerate() {
            if i % 2 == 0 {
                parts[i / quarter].push_in_order(r);
            }
        }
        let mut odd: Vec<u64> = all.iter().skip(1).step_by(2).copied().collect();
        odd.sort_by_key(|&r| r.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for (i, &r) in odd.iter().enumerate() {
            // Some through push_in_order out of order: it must divert them.
            if i % 3 == 0 {
                parts[i % 4].push_in_order(r);
            } else {
                parts[i % 4].push_any(r);
            }
        }
        let found = parts.into_iter().reduce(Found::merge).unwrap().finish();
        assert_eq!(found.len(), all.len() as u64);
        assert!(found.iter().eq(all.iter().copied()));
        assert!(Found::default().finish().is_empty());
    }
}
