//! The parents that grow one run of a loss, level by level in rank order,
//! for the few losses whose runs have billions of parents.
//!
//! A run (rows `a .. a + t` of a loss, all of length `b`, under a row of
//! length `cap`) has as parents every position that keeps the other rows
//! and has the run's rows between `b` and `cap`, non-increasing, grown by
//! `d ≥ 1` tiles in all. Three losses of a square box's largest odd levels
//! make most of them: the equal-armed hook `[c, 1^(c−1)]`, whose parents
//! through the bite at `(1, 1)` are every position with first row and first
//! column `c` long (`C(2c − 2, c − 1)`, a quarter of the 21×21 box), and in
//! a symmetric universe the tall `[2^(c−1), 1]`, whose canonical parents
//! grow its top run to the box's width.
//!
//! [`Parents::up`] enumerates growths bottom up and marks each growth of the
//! run's first row at every pending level at once: one mark a level, in
//! levels gigabytes apart (a cache miss a mark, about 10 M marks a second a
//! core on the 21×21 box). Here each level is enumerated on its own, rows
//! top down, shorter rows first, so the ranks come in ascending order
//! ([`crate::index::Ranking`]) and are set a word at a time; and the last
//! rows (up to [`PATTERN_ROWS`]) are not enumerated at all: their parents'
//! offsets from the rank of the rows above depend only on the tiles left,
//! the row above and the rows left, so each such subtree is one bit
//! pattern, made once per run and ORed in ([`Patterns`]).
//!
//! Invariant: a run is marked here or by the enumeration of
//! [`Parents::push_parents_of_runs`], never both ([`Parents::by_levels`]
//! decides), so every (parent, loss) pair is pushed once; the tests mark
//! every run both ways (`pushes_mark_exactly_the_parents`).

use super::marks::{Ascending, Marker, Mode};
use super::parents::{Parents, Run};
use rayon::prelude::*;

impl<'a> Parents<'a> {
    /// Whether the run `r` is marked level by level
    /// ([`Parents::push_run_by_levels`]): in a box, its parents number at least
    /// [`Parents::by_levels_min`] and eight times the rows enumerated to
    /// make its patterns (or `by_levels_min` is 0: every run, in tests).
    pub(super) fn by_levels(&self, r: &Run<'_>) -> bool {
        if self.by_levels_min == 0 {
            return true;
        }
        // Boxes only: where rows or columns are unbounded the patterns are
        // long and few are kept, and the levels small enough that the
        // generic enumeration was faster (docs/performance.md, "The level
        // sieve").
        if !self.boxed {
            return false;
        }
        // Most runs stop at this test (cheap for a small run).
        if !Self::many_than(r, r.t - 1, 0, 0, self.by_levels_min) {
            return false;
        }
        // The patterns' rows: about C(cap − b + rows + 1, rows + 1), times 1.5 for the shorter ones.
        // (A top run's room is the universe's width, unbounded: the sizes bound it.)
        let making = 1.5 * Self::growths_bound(r.w.min(r.dmax) + 1, PATTERN_ROWS.min(r.t) + 1);
        Self::many_than(r, r.t - 1, 0, 0, (8.0 * making) as u64)
    }

    /// Marks every parent that grows the run `r` of a loss (see the module
    /// documentation; the rows below the run contribute `below` to every
    /// parent's rank), level by level, the levels shared among threads, and
    /// counts the marks by level.
    pub(super) fn push_run_by_levels<M: Mode>(&self, r: &Run<'_>, below: u64, counts: &mut [u64]) {
        let (end, sb) = (r.a + r.t, r.suffix_below);
        // `tail[i − a]`: the contribution of rows `i .. end` all of length `b`.
        let mut tail = vec![0u64; r.t as usize + 1];
        for i in (r.a..end).rev() {
            tail[(i - r.a) as usize] = tail[(i - r.a + 1) as usize] + self.ranking.contribution(r.b * (end - i) + sb, i, r.b);
        }
        // (A top run's room is the universe's width: unbounded, bounded here by the sizes.)
        let cap = r.b + r.w.min(r.dmax);
        let mut rows =
            RunRows { ranking: self.ranking, a: r.a, end, b: r.b, first_min: r.first_min, below: sb, tail: &tail, patterns: None };
        rows.patterns = Some(Patterns::new(&rows, cap));
        let found: Vec<(usize, u64)> = (r.dmin..r.dmax.min(r.t.saturating_mul(r.w)) + 1)
            .into_par_iter()
            // One level a task: the levels' parents differ by orders of
            // magnitude, and a range split in two only (one per thread)
            // left one thread with nearly all of them.
            .with_max_len(1)
            .map(|d| {
                let n = (r.lt + d) as usize;
                let mut marker = Marker::<M>::new(self.thread());
                let level = self.views[marker.thread][n];
                let mut marks = Ascending::new(&level);
                if level.len > 0 {
                    rows.walk(r.a, r.t * r.b + d, cap, r.pre[d as usize] + below, &mut |hit| match hit {
                        Hit::Ranks(first, len) => marks.set_ranks(first, len, &mut marker),
                        Hit::Pattern(first, p) => marks.set_pattern(first, p.bits, p.span, p.ones, &mut marker),
                    });
                    marks.flush(&mut marker);
                }
                marker.steps += marks.count;
                self.flush(&mut marker);
                (n, marks.count)
            })
            .collect();
        for (n, count) in found {
            counts[n] = counts[n].wrapping_add(count);
        }
    }
}

/// The most last rows whose parents are laid down as bit patterns
/// ([`Patterns`]): longer patterns marked the 18×18 box's equal-armed hook
/// faster, 9 rows fastest (figures: docs/performance.md, section "The
/// level sieve").
const PATTERN_ROWS: u32 = 9;

/// The longest pattern kept, in bits (4 KiB; the parents below a node
/// without one are enumerated, down to the rows that have one).
const PATTERN_BITS: u64 = 1 << 15;

/// What [`RunRows::walk`] finds: consecutive ranks, or a pattern at a rank.
enum Hit<'p> {
    /// The ranks `first .. first + len`.
    Ranks(u64, u64),
    /// The ranks `first + j` for the bits `j` of the pattern.
    Pattern(u64, Pattern<'p>),
}

/// The offsets of the parents below one node of [`RunRows::walk`].
#[derive(Clone, Copy)]
struct Pattern<'p> {
    bits: &'p [u64],
    /// The bits' span: one past the last set.
    span: u64,
    ones: u64,
}

/// The parents' last `left` rows (`2 ..= PATTERN_ROWS`), for every `s`
/// and `prev`: the offsets of their ranks from the rank contributed by the
/// rows above, which depend on nothing else (a row's contribution depends
/// on its length, its suffix and the rows left below it,
/// [`crate::index::Ranking`]), as a bit set. One pattern ORed a word at a
/// time stands for the many calls of the rows' enumeration (two or three
/// a parent) that would find them.
struct Patterns {
    /// `(left, s, prev)` at `((left − 2) · (cap − b + 1) + prev − b) · stride + s`:
    /// the pattern's words in `words` and its ones (`None`: longer than
    /// [`PATTERN_BITS`], or not made).
    at: Vec<Option<(std::ops::Range<usize>, u64, u64)>>,
    stride: usize,
    prevs: usize,
    words: Vec<u64>,
}

impl Patterns {
    fn new(rows: &RunRows<'_>, cap: u32) -> Self {
        let b = rows.b;
        let most = PATTERN_ROWS.min(rows.end - rows.a);
        let (stride, prevs) = ((most * cap) as usize + 1, (cap - b + 1) as usize);
        let mut p = Patterns { at: vec![None; (most as usize).saturating_sub(1) * prevs * stride], stride, prevs, words: Vec::new() };
        let mut offsets = Vec::new();
        for left in 2..=most {
            for prev in b..=cap {
                // (No suffix beyond the universe's tiles.)
                for s in left * b..=(left * prev).min(rows.ranking.max_tiles() - rows.below) {
                    // The completions of the suffix at this row bound the
                    // pattern's span: skip the long ones unmade.
                    let i = rows.end - left;
                    if rows.ranking.q(s + rows.below, rows.ranking.universe().rows.map_or(u32::MAX, |r| r - i), prev) > PATTERN_BITS {
                        continue;
                    }
                    offsets.clear();
                    rows.walk(i, s, prev, 0, &mut |hit| match hit {
                        Hit::Ranks(first, len) => offsets.extend(first..first + len),
                        Hit::Pattern(..) => unreachable!("no patterns while patterns are made"),
                    });
                    let span = offsets.last().map_or(0, |&o| o + 1);
                    if span > PATTERN_BITS {
                        continue;
                    }
                    let start = p.words.len();
                    p.words.resize(start + span.div_ceil(64) as usize, 0);
                    for &o in &offsets {
                        p.words[start + (o >> 6) as usize] |= 1 << (o & 63);
                    }
                    let at = p.index(left, b, s, prev);
                    p.at[at] = Some((start..p.words.len(), span, offsets.len() as u64));
                }
            }
        }
        p
    }

    #[inline(always)]
    fn index(&self, left: u32, b: u32, s: u32, prev: u32) -> usize {
        ((left as usize - 2) * self.prevs + (prev - b) as usize) * self.stride + s as usize
    }

    /// The pattern of `s` tiles in the last `left` rows under a row of `prev`, if kept.
    #[inline(always)]
    fn get(&self, left: u32, b: u32, s: u32, prev: u32) -> Option<Pattern<'_>> {
        if left < 2 || s as usize >= self.stride {
            return None;
        }
        let (words, span, ones) = self.at.get(self.index(left, b, s, prev))?.as_ref()?;
        Some(Pattern { bits: &self.words[words.clone()], span: *span, ones: *ones })
    }
}

/// The rows `a .. end` of the parents of one level in
/// [`Parents::push_run_by_levels`]: each between `b` and the row above.
struct RunRows<'r> {
    ranking: &'r crate::index::Ranking,
    a: u32,
    end: u32,
    b: u32,
    /// Row `a` grows by this much at least.
    first_min: u32,
    /// Tiles in the rows below `end` (unchanged).
    below: u32,
    /// `tail[i − a]`: the contribution of rows `i .. end` all of length `b`.
    tail: &'r [u64],
    /// The last rows' patterns, for a run with many parents.
    patterns: Option<Patterns>,
}

impl RunRows<'_> {
    /// Finds the parents whose rows `i .. end` hold `s` tiles, each row at
    /// least `b` and at most `prev` (and the row above it), the rows above
    /// contributing `acc` to the rank, in ascending rank order.
    fn walk<'p>(&'p self, i: u32, s: u32, prev: u32, acc: u64, hit: &mut impl FnMut(Hit<'p>)) {
        let (rk, b, sb) = (self.ranking, self.b, self.below);
        let left = self.end - i; // rows to fill, this one included
        if s == left * b {
            // Every row left is `b`: one parent (no chain of calls down to
            // it). (Not row `a`: the run grows.)
            return hit(Hit::Ranks(acc + self.tail[(i - self.a) as usize], 1));
        }
        if let Some(p) = self.patterns.as_ref().and_then(|p| p.get(left, b, s, prev)) {
            return hit(Hit::Pattern(acc, p));
        }
        // Row i is v: at least its share of s (and row `a` grown by
        // `first_min`), and the rows below need at least b each and at
        // most v each.
        let least = if i == self.a { b + self.first_min } else { b };
        let lo = least.max(s.div_ceil(left));
        let Some(hi) = s.checked_sub((left - 1) * b).map(|h| h.min(prev)) else { return };
        if lo > hi {
            return;
        }
        if left == 1 {
            return hit(Hit::Ranks(acc + rk.contribution(s + sb, i, s), 1));
        }
        if left == 2 {
            // The last row is s − v: one parent for each v, in ascending
            // rank order.
            for v in lo..=hi {
                hit(Hit::Ranks(acc + rk.contribution(s + sb, i, v) + rk.contribution(s - v + sb, i + 1, s - v), 1));
            }
            return;
        }
        for v in lo..=hi {
            self.walk(i + 1, s - v, v, acc + rk.contribution(s + sb, i, v), hit);
        }
    }
}
