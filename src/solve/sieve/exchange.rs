//! What travels between processes: each level's losses, gathered as roaring
//! sets and united by shares, and what is known of the gathered losses
//! when this process pushes them ([`Losses`], [`Push`]).

use crate::cluster::Comm;
use roaring::{MultiOps, RoaringBitmap, RoaringTreemap};
use std::ops::Range;

/// What is known of the losses [`Frontier::push_losses`] pushes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Losses {
    /// Nothing: each is unranked.
    Any,
    /// Found by a scan: canonical in a symmetric universe, so that every
    /// growth of a loss's top run gives a parent to mark.
    Scanned,
    /// The conjugates of scanned losses, each with `rows` rows (the top row
    /// of the loss it conjugates, longer than its own): only the parents
    /// that grow its top row by `rows − top row` or more are canonical.
    Conjugates { rows: u32 },
}

/// How [`Frontier::push_losses`] pushes the losses of a span ([`Parents::push_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Push {
    /// Not at all: this process owns none of their parents.
    Skip,
    /// Unranked, every parent this process owns.
    Unranked,
    /// From the rank, only the growths of the top run by `first_min` or more.
    TopRun { first_min: u32 },
}

/// Every process's sets `mine` (the same number on each, some empty),
/// united index by index, in one collective: each set is sent as its
/// index, its length and its serialized roaring bitmap (64-bit ranks).
pub(super) fn all_gather_sets(comm: &dyn Comm, mine: &[RoaringTreemap]) -> Vec<RoaringTreemap> {
    let mut bytes = Vec::new();
    for (i, set) in mine.iter().enumerate().filter(|(_, set)| !set.is_empty()) {
        bytes.extend_from_slice(&(i as u32).to_le_bytes());
        bytes.extend_from_slice(&set.serialized_size().to_le_bytes());
        set.serialize_into(&mut bytes).expect("writing to memory");
    }
    let mut parts: Vec<Vec<RoaringTreemap>> = Vec::new();
    for part in comm.all_gather(&bytes) {
        let mut part = &part[..];
        while !part.is_empty() {
            let (head, rest) = part.split_at(12);
            let i = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
            let len = u64::from_le_bytes(head[4..].try_into().expect("8 bytes")) as usize;
            let set = RoaringTreemap::deserialize_from(&rest[..len]).expect("a bitmap serialized by a peer process");
            if parts.len() <= i {
                parts.resize_with(i + 1, Vec::new);
            }
            parts[i].push(set);
            part = &rest[len..];
        }
    }
    parts.into_iter().map(MultiOps::union).collect()
}

/// The union of the level's sets `sets` (disjoint, the same on every
/// process), each process uniting them within its own ranks `held` (the
/// shares tile the level) and the pieces gathered: uniting many sets turns
/// each container they share into a bitmap and back, which, done by every
/// process for the whole level, cost each of 4 processes about 3–5 % of
/// its compute at 100 tiles. The pieces lie in disjoint rank ranges: their
/// union places containers side by side (but for one at each boundary).
pub(super) fn unite_by_shares(comm: &dyn Comm, sets: Vec<RoaringTreemap>, held: &[Range<u64>]) -> RoaringTreemap {
    let expected: u64 = sets.iter().map(RoaringTreemap::len).sum();
    let piece = sets.iter().map(|set| within(set, held)).union();
    drop(sets);
    let all = all_gather_sets(comm, &[piece]).pop().unwrap_or_default();
    // Disjoint sets, and shares that tile the level: every loss once.
    assert_eq!(all.len(), expected, "the pieces of the level's losses add up to its sets");
    all
}

/// The members of `set` within `ranges` (disjoint), copying only the
/// bitmaps (of 2³² ranks each) that meet them.
fn within(set: &RoaringTreemap, ranges: &[Range<u64>]) -> RoaringTreemap {
    let mut out = Vec::new();
    for (high, bitmap) in set.bitmaps() {
        // The bitmap's ranks, lo .. hi (2^64 for the last, in u128).
        let (lo, hi) = (u128::from(high) << 32, (u128::from(high) + 1) << 32);
        let mut piece: Option<RoaringBitmap> = None;
        for r in ranges {
            let (a, b) = (u128::from(r.start).max(lo), u128::from(r.end).min(hi));
            if a >= b {
                continue;
            }
            let mut part = bitmap.clone();
            if a > lo {
                part.remove_range(..(a - lo) as u32);
            }
            if b < hi {
                part.remove_range((b - lo) as u32..);
            }
            piece = Some(match piece {
                None => part,
                Some(p) => p | part,
            });
        }
        if let Some(p) = piece.filter(|p| !p.is_empty()) {
            out.push((high, p));
        }
    }
    RoaringTreemap::from_bitmaps(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_keeps_exactly_the_members_in_the_ranges() {
        let set: RoaringTreemap = [0u64, 5, 9, 1 << 32, (1 << 32) + 7, 3 << 32, (3 << 32) + 1, u64::MAX - 1].into_iter().collect();
        for ranges in
            [vec![], vec![0..10, 20..20], vec![1..6, 9..(1 << 32) + 1], vec![(1 << 32) + 1..(3 << 32) + 1, (3 << 32) + 1..u64::MAX]]
        {
            let want: RoaringTreemap = set.iter().filter(|r| ranges.iter().any(|g| g.contains(r))).collect();
            assert_eq!(within(&set, &ranges), want, "{ranges:?}");
        }
    }
}
