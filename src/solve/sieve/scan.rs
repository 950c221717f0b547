//! The scan of a level's share: its unmarked positions are its losses.

use super::add_counts;
use super::marks::Mode;
use super::parents::PushScratch;
use crate::index::{Ranking, Visit};
use crate::solve::found::Found;
use crate::store::mapped::MappedBits;

/// A scan task's results.
pub(super) struct Acc<'a, M: Mode> {
    pub(super) scratch: PushScratch<'a, M>,
    /// The losses scanned (canonical, in a symmetric universe).
    pub(super) found: Found,
    /// Their conjugates (none is canonical), by their number of rows, for
    /// the exchange between processes (one process pushes them into `found`).
    pub(super) conjugates: Vec<Found>,
    pub(super) scanned: u64,
    /// A buffer for conjugates.
    pub(super) conj: Vec<u8>,
}

impl<'a, M: Mode> Acc<'a, M> {
    pub(super) fn new(top: u32) -> impl Fn() -> Acc<'a, M> + Sync + Send {
        move || Acc { scratch: PushScratch::new(top), found: Found::default(), conjugates: Vec::new(), scanned: 0, conj: Vec::new() }
    }

    /// The losses scanned, their conjugates by rows, the positions scanned
    /// and the marks pushed by level.
    pub(super) fn into_parts(self) -> (Found, Vec<Found>, u64, Vec<u64>) {
        (self.found, self.conjugates, self.scanned, self.scratch.counts)
    }

    pub(super) fn merge(mut a: Acc<'a, M>, b: Acc<'a, M>) -> Acc<'a, M> {
        a.found = std::mem::take(&mut a.found).merge(b.found);
        if a.conjugates.len() < b.conjugates.len() {
            a.conjugates.resize_with(b.conjugates.len(), Found::default);
        }
        for (mine, theirs) in a.conjugates.iter_mut().zip(b.conjugates) {
            *mine = std::mem::take(mine).merge(theirs);
        }
        a.scanned += b.scanned;
        a.scratch.counts = add_counts(std::mem::take(&mut a.scratch.counts), b.scratch.counts);
        a
    }
}

/// The scan: calls `f(rank, rows)` for the unmarked positions of a share of
/// the level, in rank order. Subtrees that no row bound cuts are contiguous
/// rank ranges: their clear bits are found a word at a time and only those
/// positions are unranked.
pub(super) struct Unmarked<'a, F> {
    pub(super) ranking: &'a Ranking,
    /// Marks of the ranks `base ..`.
    pub(super) marks: &'a MappedBits,
    pub(super) base: u64,
    /// Rows of the positions unranked from a range.
    pub(super) buf: Vec<u8>,
    pub(super) f: F,
}

impl<F: FnMut(u64, &[u8])> Visit for Unmarked<'_, F> {
    fn position(&mut self, rank: u64, rows: &[u8]) {
        if !self.marks.get(rank - self.base) {
            (self.f)(rank, rows);
        }
    }

    fn range(&mut self, first: u64, count: u64, skip: u64, rows: &[u8], rest: u32, max_part: u32) -> bool {
        let (ranking, buf, f, base) = (self.ranking, &mut self.buf, &mut self.f, self.base);
        self.marks.for_each_clear(first + skip - base, first + count - base, |i| {
            let r = i + base;
            buf.clear();
            buf.extend_from_slice(rows);
            ranking.unrank_suffix(rest, max_part, r - first, buf);
            f(r, buf);
        });
        true
    }
}
