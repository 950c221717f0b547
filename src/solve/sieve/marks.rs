//! Setting mark bits: each thread's view of the held bits, the ring of
//! prefetched marks, and the rule of plain marks (a load and a store
//! instead of an atomic OR), decided here only.

use crate::store::mapped::MappedBits;
use std::sync::atomic::{AtomicU64, Ordering};

/// The marks of the ranks `base .. base + len` of one level.
#[derive(Clone, Copy)]
pub(super) struct MarkView<'a> {
    pub(super) words: &'a [AtomicU64],
    /// Counting winning moves ([`super::Holding::count_moves`]): the second bits,
    /// set by a push into a position already marked (empty otherwise).
    pub(super) twice: &'a [AtomicU64],
    pub(super) base: u64,
    pub(super) len: u64,
    /// No other thread writes these bits while this one marks them (one
    /// thread, or its own copy): marks need no atomic read-modify-write.
    /// Decided in [`views`] only (see [`Workers`]): private to this file.
    plain: bool,
}

impl MarkView<'_> {
    /// Whether marks through this view are plain loads and stores.
    #[cfg(test)]
    pub(super) fn is_plain(&self) -> bool {
        self.plain
    }
}

/// Each thread's views of the marks of each level (`marks[n]`, held from
/// rank `base[n]`; `copies[n]`: level `n`'s thread copies, for every
/// worker but the first, or none), the workers of the current pool, and
/// whether marks depend on the thread: the rule of [`Workers`], applied.
pub(super) fn views<'a>(
    marks: &'a [Option<MappedBits>],
    twice: &'a [Option<MappedBits>],
    base: &[u64],
    copies: &'a [Vec<MappedBits>],
) -> (Vec<Vec<MarkView<'a>>>, Workers, bool) {
    let workers = Workers::of_current_pool();
    let threads = workers.0.len();
    // A pool of one thread: no other thread writes these bits meanwhile
    // (each process of a cluster job holds its own). A copied level: one
    // writer per view.
    let alone = threads == 1;
    let copied = |n: usize| copies.get(n).is_some_and(|c| !c.is_empty());
    for c in copies.iter().filter(|c| !c.is_empty()) {
        assert_eq!(c.len() + 1, threads, "thread copies made for another pool");
    }
    // A count is two bits a position: thread copies would need both, and
    // a merge that adds instead of ORs; counting runs make none.
    assert!(twice.iter().all(Option::is_none) || copies.iter().all(Vec::is_empty), "thread copies while counting moves");
    let twice_of = |n: usize| twice.get(n).and_then(Option::as_ref).map_or(&[][..], MappedBits::words);
    let levels: Vec<MarkView<'a>> = marks
        .iter()
        .zip(base)
        .enumerate()
        .map(|(n, (m, &base))| match m {
            Some(b) => MarkView { words: b.words(), twice: twice_of(n), base, len: b.len(), plain: alone || copied(n) },
            None => MarkView { words: &[], twice: &[], base, len: 0, plain: alone },
        })
        .collect();
    let views = if (0..levels.len()).any(copied) {
        (0..threads)
            .map(|t| {
                let view = levels.iter().enumerate();
                view.map(|(n, &level)| if t > 0 && copied(n) { MarkView { words: copies[n][t - 1].words(), ..level } } else { level })
                    .collect()
            })
            .collect()
    } else {
        vec![levels]
    };
    let bound = views.len() > 1 || views[0].iter().any(|o| o.plain);
    (views, workers, bound)
}

/// The worker threads of a rayon pool, by index, and the rule of plain marks.
///
/// A mark is a plain load and store ([`MarkView::plain`]) only where the bits
/// have one writer for as long as the context lives, so [`Parents::new`] decides
/// it in one place, from the pool it is made in:
/// - a level with thread copies ([`Frontier::copy_levels`], one per worker
///   but the first): worker `t > 0` writes its copy `t − 1`, worker 0 the
///   level's own bits: one writer each, plain;
/// - a level without copies: written by every worker, plain only when the
///   pool has one worker.
///
/// Checked, not assumed: the copies must number the workers less one, and
/// a scratch ([`Marker::thread`]) binds to the worker it first marks on,
/// which must be the pool's worker of that index (its thread id recorded
/// here), and stays there. Marking from another pool, from a thread outside
/// the pool or from a scratch handed between threads panics instead of
/// losing marks.
pub(super) struct Workers(pub(super) Vec<std::thread::ThreadId>);

/// [`Marker::thread`] of a thread that is no worker of the current pool.
pub(super) const NOT_A_WORKER: usize = usize::MAX - 1;

impl Workers {
    /// The workers of the current pool (the global pool outside any).
    pub(super) fn of_current_pool() -> Self {
        // `broadcast` runs once on every worker and returns by thread index.
        Workers(rayon::broadcast(|_| std::thread::current().id()))
    }

    /// Panics unless the calling thread is worker `t` of the pool.
    pub(super) fn check(&self, t: usize) {
        let id = std::thread::current().id();
        assert!(
            self.0.get(t) == Some(&id),
            "the sieve marks through per-thread views on the workers of the pool it was set up in only (thread index {t} of {})",
            self.0.len()
        );
    }
}

impl MarkView<'_> {
    /// The bit of rank `r`, if owned.
    #[inline(always)]
    pub(super) fn bit(&self, r: u64) -> Option<u64> {
        let i = r.wrapping_sub(self.base);
        (i < self.len).then_some(i)
    }
}

/// How a mark is written, a type parameter of the enumeration so that each
/// mode is compiled apart: [`Plain`] sets one bit; [`Counting`] also sets
/// the position's second bit when the first was set already
/// ([`MarkView::twice`]). A plain run's ring slot carries no second word
/// (24 bytes, not 32) and no test of one: the slot that carried an optional
/// second word cost the plain sieve 2–4 % (bench/runs, count-moves.md).
///
/// Invariant, checked where a frontier picks the mode
/// ([`Parents::check_mode`](super::parents::Parents::check_mode)): the
/// levels carry second bits if and only if the mode is [`Counting`] (else
/// a plain mode would drop the counts, or a counting one index bits that
/// are not there).
pub(super) trait Mode: Send + 'static {
    /// Whether marks count (the held levels carry second bits).
    const COUNTS: bool;
    /// The second word of a mark in flight: none ([`Plain`]) or a reference.
    type Twice<'a>: Copy + Send;
    /// The second word of an empty slot of the ring.
    fn none<'a>() -> Self::Twice<'a>;
    /// The second word of word `k` of `level`.
    fn twice<'a>(level: &MarkView<'a>, k: usize) -> Self::Twice<'a>;
    /// Asks the CPU to bring the second word into the cache.
    fn prefetch(twice: Self::Twice<'_>);
    /// Writes a mark: `word |= mask`, and the count into `twice`.
    fn write(word: &AtomicU64, twice: Self::Twice<'_>, mask: u64, plain: bool);
}

/// Marks that set one bit a position.
pub(super) enum Plain {}

/// Marks that count a position's winning moves (one, several).
pub(super) enum Counting {}

impl Mode for Plain {
    const COUNTS: bool = false;
    type Twice<'a> = ();
    #[inline(always)]
    fn none<'a>() -> Self::Twice<'a> {}
    #[inline(always)]
    fn twice<'a>(_: &MarkView<'a>, _: usize) -> Self::Twice<'a> {}
    #[inline(always)]
    fn prefetch(_: ()) {}
    #[inline(always)]
    fn write(word: &AtomicU64, _: (), mask: u64, plain: bool) {
        or_word(word, mask, plain)
    }
}

impl Mode for Counting {
    const COUNTS: bool = true;
    type Twice<'a> = &'a AtomicU64;
    #[inline(always)]
    fn none<'a>() -> &'a AtomicU64 {
        &NOWHERE
    }
    #[inline(always)]
    fn twice<'a>(level: &MarkView<'a>, k: usize) -> &'a AtomicU64 {
        &level.twice[k]
    }
    #[inline(always)]
    fn prefetch(twice: &AtomicU64) {
        prefetch(twice)
    }
    #[inline(always)]
    fn write(word: &AtomicU64, twice: &AtomicU64, mask: u64, plain: bool) {
        count_word(word, twice, mask, plain)
    }
}

/// A mark in flight: the word, its second word in mode `M`, the bits to
/// set and whether no other thread writes the word ([`MarkView::plain`]).
pub(super) type InFlight<'a, M> = (&'a AtomicU64, <M as Mode>::Twice<'a>, u64, bool);

/// Marks in flight: each word to mark is prefetched when queued and written
/// `RING` marks later, so that the cache misses of the (random) marks overlap.
pub(super) struct Marker<'a, M: Mode> {
    pub(super) ring: [InFlight<'a, M>; RING],
    pub(super) pos: usize,
    /// The thread whose view of the levels ([`Parents::views`]) the marks queued
    /// are in ([`UNBOUND`]: none yet).
    pub(super) thread: usize,
    /// Parents enumerated since the last [`Parents::flush`].
    pub(super) steps: u64,
}

/// Marks in flight per thread: 32 was faster than 16 and 64 (measured:
/// docs/performance.md, "The loss sieve").
pub(super) const RING: usize = 32;
pub(super) const UNBOUND: usize = usize::MAX;
pub(super) static NOWHERE: AtomicU64 = AtomicU64::new(0);

impl<'a, M: Mode> Marker<'a, M> {
    pub(super) fn new(thread: usize) -> Self {
        Marker { ring: [Self::empty(); RING], pos: 0, thread, steps: 0 }
    }

    /// A slot that writes nothing (mask 0).
    #[inline(always)]
    fn empty() -> InFlight<'a, M> {
        (&NOWHERE, M::none(), 0, false)
    }

    /// Queues `word |= mask` (and the count of `twice`, when counting).
    #[inline(always)]
    pub(super) fn or(&mut self, word: &'a AtomicU64, twice: M::Twice<'a>, mask: u64, plain: bool) {
        Self::queue(&mut self.ring, &mut self.pos, (word, twice, mask, plain));
    }

    /// Queues `slot` in slot `pos` of `ring`, writing the mark it held.
    #[inline(always)]
    pub(super) fn queue(ring: &mut [InFlight<'a, M>; RING], pos: &mut usize, slot: InFlight<'a, M>) {
        prefetch(slot.0);
        M::prefetch(slot.1);
        let (word, twice, mask, plain) = std::mem::replace(&mut ring[*pos % RING], slot);
        M::write(word, twice, mask, plain);
        *pos = (*pos + 1) % RING;
    }

    /// Queues setting bit `i` of `level`.
    #[inline(always)]
    pub(super) fn set_word(&mut self, level: &MarkView<'a>, i: u64) {
        let k = (i >> 6) as usize;
        self.or(&level.words[k], M::twice(level, k), 1 << (i & 63), level.plain);
    }

    /// Queues setting bit `i` of `level` for each `(level, i)` (the ring's
    /// position held in a register throughout).
    #[inline(always)]
    pub(super) fn set_words<'l>(&mut self, marks: impl Iterator<Item = (&'l MarkView<'a>, u64)>)
    where
        'a: 'l,
    {
        let mut pos = self.pos;
        for (level, i) in marks {
            let k = (i >> 6) as usize;
            Self::queue(&mut self.ring, &mut pos, (&level.words[k], M::twice(level, k), 1 << (i & 63), level.plain));
        }
        self.pos = pos;
    }

    /// Queues setting bits `start..end` of `level`.
    pub(super) fn set_range(&mut self, level: &MarkView<'a>, start: u64, end: u64) {
        if start < end {
            for_words(start, end, |k, mask| self.or(&level.words[k as usize], M::twice(level, k as usize), mask, level.plain));
        }
    }

    /// Writes every queued mark.
    pub(super) fn flush(&mut self) {
        for slot in &mut self.ring {
            let (word, twice, mask, plain) = std::mem::replace(slot, Self::empty());
            M::write(word, twice, mask, plain);
        }
    }
}

/// Marks of one level given by rank in ascending order, gathered a word
/// at a time (one queued write a word, not one a bit); ranks this process
/// does not own are skipped.
pub(super) struct Ascending<'v, 'a> {
    level: &'v MarkView<'a>,
    /// The word gathered, and its bits to set (none: `mask == 0`).
    word: u64,
    mask: u64,
    /// Ranks set (owned).
    pub(super) count: u64,
}

impl<'v, 'a> Ascending<'v, 'a> {
    pub(super) fn new(level: &'v MarkView<'a>) -> Self {
        Ascending { level, word: 0, mask: 0, count: 0 }
    }

    /// Sets the owned ranks of `first .. first + len` (`len > 0`, none
    /// smaller than a rank set before).
    #[inline(always)]
    pub(super) fn set_ranks<M: Mode>(&mut self, first: u64, len: u64, marker: &mut Marker<'a, M>) {
        let level = self.level;
        let (start, end) = (first.max(level.base), (first + len).min(level.base + level.len));
        if start >= end {
            return;
        }
        self.count += end - start;
        for_words(start - level.base, end - level.base, |k, mask| self.or_word(k, mask, marker));
    }

    /// Sets the owned ranks `first + j` for the bits `j` of `bits` (`ones`
    /// of them, all below `span`; none smaller than a rank set before).
    pub(super) fn set_pattern<M: Mode>(&mut self, first: u64, bits: &[u64], span: u64, ones: u64, marker: &mut Marker<'a, M>) {
        let level = self.level;
        if first < level.base || first + span > level.base + level.len {
            // Not owned whole: bit by bit.
            for (j, &w) in bits.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    self.set_ranks(first + 64 * j as u64 + u64::from(w.trailing_zeros()), 1, marker);
                    w &= w - 1;
                }
            }
            return;
        }
        self.count += ones;
        let start = first - level.base;
        let (k0, shift) = (start >> 6, start & 63);
        for (j, &w) in bits.iter().enumerate().filter(|(_, &w)| w != 0) {
            let k = k0 + j as u64;
            self.or_word(k, w << shift, marker);
            if shift > 0 && w >> (64 - shift) != 0 {
                self.or_word(k + 1, w >> (64 - shift), marker);
            }
        }
    }

    /// Gathers `mask` into word `k` (no smaller than the word gathered).
    #[inline(always)]
    fn or_word<M: Mode>(&mut self, k: u64, mask: u64, marker: &mut Marker<'a, M>) {
        if k != self.word {
            debug_assert!(k > self.word || self.mask == 0, "ranks in ascending order");
            self.flush(marker);
            self.word = k;
        }
        self.mask |= mask;
    }

    /// Queues the word gathered.
    #[inline(always)]
    pub(super) fn flush<M: Mode>(&mut self, marker: &mut Marker<'a, M>) {
        if self.mask != 0 {
            let (level, k) = (self.level, self.word as usize);
            marker.or(&level.words[k], M::twice(level, k), std::mem::take(&mut self.mask), level.plain);
        }
    }
}

/// Writes a mark `word |= mask`.
#[inline(always)]
fn or_word(word: &AtomicU64, mask: u64, plain: bool) {
    if plain {
        // No other thread writes these bits: a plain load and store, with
        // no branch (whether the bit is already set is a coin toss for the
        // predictor) and no locked instruction (it stalls the prefetches
        // behind it); faster as measured in docs/performance.md, "The level sieve".
        word.store(word.load(Ordering::Relaxed) | mask, Ordering::Relaxed);
        return;
    }
    // A plain load first: it avoids the locked instruction when already set.
    // (An empty slot of the ring has mask 0: nothing to write.)
    if word.load(Ordering::Relaxed) & mask != mask {
        word.fetch_or(mask, Ordering::Relaxed);
    }
}

/// A mark that counts: the bits of `mask` set in `word` before it are
/// pushed a second time (or more): they go into `twice`.
///
/// Invariant: every (position, losing child) pair is pushed exactly once
/// while the position is pending, so after every push a bit of `word` is
/// set iff the position has a losing child, and its bit of `twice` iff it
/// has two or more. Bits are only ever set here, never cleared: a bit seen
/// set by a plain load was set by another push. Atomic marks take the
/// previous bits from the `fetch_or` itself, so of two pushes racing on a
/// clear bit exactly one sees it set.
#[inline(always)]
fn count_word(word: &AtomicU64, twice: &AtomicU64, mask: u64, plain: bool) {
    let before = if plain {
        let before = word.load(Ordering::Relaxed);
        word.store(before | mask, Ordering::Relaxed);
        before
    } else {
        let seen = word.load(Ordering::Relaxed);
        if seen & mask == mask {
            seen
        } else {
            word.fetch_or(mask, Ordering::Relaxed)
        }
    };
    let again = before & mask;
    if again == 0 {
        return;
    }
    if plain {
        twice.store(twice.load(Ordering::Relaxed) | again, Ordering::Relaxed);
    } else if twice.load(Ordering::Relaxed) & again != again {
        twice.fetch_or(again, Ordering::Relaxed);
    }
}

/// Calls `f(k, mask)` for the words `k` of a bit set that its bits
/// `start..end` (`start < end`) touch, with those bits, in order.
#[inline(always)]
pub(crate) fn for_words(start: u64, end: u64, mut f: impl FnMut(u64, u64)) {
    let (first, last) = (start >> 6, (end - 1) >> 6);
    let head = u64::MAX << (start & 63);
    let tail = u64::MAX >> (63 - ((end - 1) & 63));
    if first == last {
        return f(first, head & tail);
    }
    f(first, head);
    for k in first + 1..last {
        f(k, u64::MAX);
    }
    f(last, tail);
}

/// Asks the CPU to bring `word` into the cache (a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; the address is that of a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(word as *const AtomicU64 as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}
