//! The loss sieve, pushed forward: one mark bit set per pending level; when
//! level `n` is decided, each of its losses marks its parents at *every*
//! higher level at once and is then forgotten. The unmarked positions of a
//! level, once every smaller level has been pushed, are its losses. Memory is
//! the pending mark bits (`Σ p(m)/8` over the levels `m > n`), not the losses.
//!
//! Parents are enumerated by the addable-corner rule (`docs/math.md`): for a
//! corner `(a, b)` of a loss `L` with `t` rows of length `b` below it and room
//! `w`, every non-empty partition `μ` (at most `t` parts, parts at most `w`)
//! added to those rows gives a parent with `|L| + |μ|` tiles. The parent's
//! rank is computed incrementally: rows above the corner keep their value
//! (their suffix grows by `|μ|`), rows below the run keep their contribution
//! to `rank(L)`. Parents that add rows below `L` whose completions the row
//! bound does not cut are one contiguous rank range: set a word at a time.
//! An inner run taller than its room (`t > w`) is grown by columns instead
//! of rows (far fewer partial growths); where contributions do not depend
//! on the row (no row bound), a block of equal rows contributes two look-ups
//! of a table of sums ([`BySuffix::blocks`]). The marks of one process
//! holding every level are counted per top row's loop, not per mark.
//!
//! In a universe that conjugation maps onto itself only *canonical* parents
//! (no more rows than columns) are marked and scanned; the losses of the
//! other half are the conjugates of canonical losses. This halves the work.

//!
//! One file per concept:
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the [`Frontier`]: the pending levels' mark bits, their windows and epochs, one level sieved |
//! | `exchange.rs` | what travels between processes: the gathered loss sets, united by shares, and how gathered losses are pushed |
//! | `scan.rs` | the scan of a level's unmarked positions |
//! | `parents.rs` | the parent enumeration: every parent of a loss that this process owns, by runs, columns and new rows |
//! | `by_levels.rs` | the parents that grow a run, when they are many (the equal-armed hook's): level by level, in rank order, the last rows laid down as bit patterns |
//! | `marks.rs` | setting mark bits: per-thread views, the ring of prefetched marks, the rule of plain (non-atomic) marks, and the two marking modes ([`marks::Plain`], [`marks::Counting`]) |
//! | `suffix.rs` | the ranking's contributions laid out by suffix |
//!
//! Words: a process **owns** the ranks of its share of a level (and a
//! parent whose rank it owns); a thread marks through its **view** of the
//! held bits ([`marks::MarkView`]).

mod by_levels;
mod counts;
mod exchange;
mod marks;
mod parents;
mod scan;
mod suffix;
#[cfg(test)]
mod tests;

pub(crate) use marks::{for_words, prefetch};
use marks::{Counting, Mode, Plain};

use exchange::{all_gather_sets, unite_by_shares, Losses, Push};
use parents::{Parents, PushScratch};
use scan::{Acc, Unmarked};
use suffix::BySuffix;

use super::found::Found;
use crate::cluster::Comm;
use crate::game::position::conjugate_rows_into;
use crate::index::{split, Ranking};
use crate::store::mapped::MappedBits;
use crate::store::SortedRanks;
use rayon::prelude::*;
use roaring::{MultiOps, RoaringTreemap};
use std::io;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};

fn parallel_parents() -> u64 {
    super::tunables::get().parallel_parents
}

/// Decided losses pushed per rayon task (on average: tasks are cut by rank).
const TASK_LOSSES: u64 = 256;

/// What one level of the sieve found.
pub struct LevelLosses {
    /// Ranks of the losses of the level (a roaring set: about 2 bytes a
    /// loss where 8 would hold them in a vector).
    pub ranks: RoaringTreemap,
    /// Marks pushed into the level by this process (canonical parent, losing child pairs).
    pub marks: u64,
    /// Positions this process scanned for marks.
    pub scanned: u64,
    /// When counting moves ([`Holding::count_moves`]): the positions of
    /// this process's share of the level with two or more losing children
    /// (a canonical position counts for its conjugate too).
    pub several: Option<u64>,
}

/// The pending levels: one mark bit per position of every level not yet
/// decided, holding the marks pushed by the losses of the decided levels.
///
/// With several processes each owns some rank ranges of every level (its
/// shares of the scan, [`split::Layout`]) and holds the marks of those
/// ranges only. The shares of an epoch's levels are cut at the same units
/// (top row, second row) at every level: the parents that keep a loss's
/// top row are then, at every pending level, the share's that found the
/// loss, which pushes them from its rows, where cuts made level by level
/// rose with the level and left other processes to unrank and walk the
/// loss again. Shares hold equal positions (equal mark bits), and each
/// process holds [`split::STRIPES`] of them, dealt back and forth so that
/// the work balances too: the first shares are mostly tall positions,
/// rarely canonical (rarely marked or scanned), the last are dense. A
/// process sieves each of its shares as one [`Stripe`] (its own mark bits,
/// scan and pushes: the parent enumeration is per share, unchanged). Bits
/// are on huge pages only where canonical positions are dense
/// ([`split::dense_from`]). Each share pushes the losses its scan finds at
/// once, from their rows, marking only the parents it owns; the other
/// losses (other processes', and this process's other shares') are
/// gathered (as roaring sets, and held as one while they are pushed) and
/// pushed from their ranks: unranked where the share may own a parent that
/// keeps a loss's top row, else only its top run's growths, read off the
/// rank (the conjugates of scanned losses are exchanged by number of rows,
/// which bounds those growths).
pub struct Frontier {
    /// Largest level.
    top: u32,
    /// Largest level whose marks are held (the end of the current epoch).
    horizon: u32,
    /// The share and window of the mark bits held.
    hold: Holding,
    /// Who owns which ranks of the current epoch's levels.
    layout: split::Layout,
    /// This process's shares of the current epoch, in rank order.
    stripes: Vec<Stripe>,
    /// Marks pushed into each level by this process.
    pushed: Vec<u64>,
    /// Parents this process enumerated (ranks computed, owned or not).
    enumerated: u64,
    /// The ranking's contributions, by suffix.
    by_suffix: BySuffix,
    /// Thread copies hold at most this share of the bytes of the marks held.
    copy_share: f64,
    /// The most bytes of mark bits and copies held at once so far.
    peak_held: u64,
}

/// One share of the current epoch held by this process: the mark bits of
/// its rank range of each pending level.
struct Stripe {
    /// Its index among the layout's shares.
    share: usize,
    /// Mark bits of the share's range of each level (`None` for decided levels).
    marks: Vec<Option<MappedBits>>,
    /// When counting moves: the second mark bits of the same ranges, set by
    /// a position's second push and later ones ([`marks::MarkView::twice`]).
    twice: Vec<Option<MappedBits>>,
    /// First rank of the share's range of each level.
    base: Vec<u64>,
    /// Each thread's own copy of a level's mark bits but the first thread's
    /// (empty: the threads share the level's bits), ORed into them before
    /// the level is scanned: see [`Frontier::copy_levels`].
    copies: Vec<Vec<MappedBits>>,
}

impl Stripe {
    fn new(share: usize, top: u32) -> Self {
        let none = || (0..=top).map(|_| None).collect();
        Stripe { share, marks: none(), twice: none(), base: vec![0; top as usize + 1], copies: (0..=top).map(|_| Vec::new()).collect() }
    }

    /// The rank range held at level `n`.
    fn held(&self, n: u32, len: u64) -> std::ops::Range<u64> {
        self.base[n as usize]..self.base[n as usize] + len
    }

    /// ORs the threads' copies of level `n` into its marks (every push into
    /// the level is done), freeing them.
    fn merge_copies(&mut self, n: u32, marks: &mut MappedBits) {
        const CHUNK: usize = 1 << 12;
        for copy in std::mem::take(&mut self.copies[n as usize]) {
            marks.words_mut().par_chunks_mut(CHUNK).zip(copy.words().par_chunks(CHUNK)).for_each(|(into, from)| {
                for (x, y) in into.iter_mut().zip(from) {
                    *x |= y.load(Ordering::Relaxed);
                }
            });
        }
    }

    /// The parent enumeration into this share's bits.
    fn parents<'a>(&'a self, ranking: &'a Ranking, by_suffix: &'a BySuffix) -> Parents<'a> {
        Parents::new(ranking, by_suffix, &self.marks, &self.twice, &self.base, &self.copies)
    }
}

fn copy_share() -> f64 {
    super::tunables::get().copy_share
}

/// The bytes of the words of the bit sets `sets`.
fn bit_bytes<'b>(sets: impl Iterator<Item = &'b MappedBits>) -> u64 {
    sets.map(|m| m.len().div_ceil(64) * 8).sum()
}

/// The most bytes the thread copies of a process holding `marks` bytes of
/// mark bits may take ([`Frontier::copy_levels`]): `share` of them, within
/// the window; none on one thread.
fn copy_budget(marks: u64, share: f64, hold: Holding, threads: usize) -> u64 {
    if threads < 2 || share <= 0.0 || hold.count_moves {
        return 0;
    }
    let budget = (share * marks as f64) as u64;
    hold.window.map_or(budget, |window| budget.min(window.saturating_sub(marks)))
}

fn epoch_bytes() -> u64 {
    super::tunables::get().epoch_bytes
}

/// How a process holds mark bits: its share of each level (one of
/// `processes` shares) and at most `window` bytes of them at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holding {
    /// Processes sharing each level.
    pub processes: usize,
    /// Most bytes of mark bits held at once (`None`: every pending level's).
    /// Levels are then sieved in windows: the mark bits of a window's levels
    /// are held together, and when the next window opens every decided
    /// loss is read back from its table and pushed into it. The tables do
    /// not depend on the windows.
    pub window: Option<u64>,
    /// Two bits per pending position instead of one: the first push and
    /// the second ([`Plan::count_moves`](crate::solve::Plan::count_moves)).
    /// Thread copies are not made then.
    pub count_moves: bool,
}

impl Holding {
    /// One process, no window.
    pub const SOLO: Holding = Holding { processes: 1, window: None, count_moves: false };

    /// Mark bits per pending position.
    pub fn bits(&self) -> u64 {
        1 + u64::from(self.count_moves)
    }
}

impl Frontier {
    /// Empty mark sets (anonymous memory) of this process's range of the
    /// levels `decided + 1 ..=` the end of their epoch ([`Frontier::epoch_end`]).
    ///
    /// # Errors
    /// When the memory cannot be mapped.
    pub fn new(ranking: &Ranking, decided: u32, comm: &dyn Comm, hold: Holding) -> io::Result<Self> {
        let top = ranking.max_tiles();
        let (layout, stripes) = (split::Layout::whole(), Vec::new());
        let by_suffix = BySuffix::new(ranking);
        let (pushed, copy_share) = (vec![0; top as usize + 1], copy_share());
        let mut f = Frontier { top, horizon: decided, layout, stripes, pushed, enumerated: 0, by_suffix, hold, copy_share, peak_held: 0 };
        if decided < top {
            f.open_epoch(ranking, comm)?;
        }
        Ok(f)
    }

    /// The last level of the epoch starting at level `n` (an upper bound
    /// for a level inside an epoch). The mark bits of one epoch's levels are
    /// held at once. A universe is one epoch, except that a box whose bits
    /// exceed 256 MiB (`CHOMP_EPOCH_BYTES`) is split where half its
    /// positions are reached, and that with a window ([`Holding`]) an epoch
    /// ends before its bits would exceed the window (it holds level `n` at
    /// least). The losses decided before an epoch are pushed again into it
    /// when it opens: peak memory drops, the pushes cost a little time.
    pub fn epoch_end(ranking: &Ranking, n: u32, hold: Holding) -> u32 {
        let mut end = Self::box_epoch_end(ranking, n);
        if let Some(window) = hold.window {
            let mut held = 0;
            for m in n..=end {
                held += Self::bytes(ranking, m, m, hold);
                if held > window && m > n {
                    end = m - 1;
                    break;
                }
            }
        }
        end
    }

    fn box_epoch_end(ranking: &Ranking, n: u32) -> u32 {
        let top = ranking.max_tiles();
        let u = ranking.universe();
        if u.rows.is_none() || u.cols.is_none() {
            return top;
        }
        let total = Self::bytes(ranking, 1, top, Holding::SOLO);
        if total <= epoch_bytes() {
            return top;
        }
        let mut acc = 0;
        let mut split = top;
        for m in 1..=top {
            acc += ranking.size(m).div_ceil(64) * 8;
            if acc * 2 >= total {
                split = m;
                break;
            }
        }
        if n <= split {
            split
        } else {
            top
        }
    }

    /// Allocates the mark bits of the next epoch (the levels after the
    /// horizon, all smaller levels decided). The caller then pushes every
    /// decided loss into it ([`Frontier::push_decided`] from the old horizon + 1).
    ///
    /// # Errors
    /// When the memory cannot be mapped.
    pub fn open_epoch(&mut self, ranking: &Ranking, comm: &dyn Comm) -> io::Result<()> {
        let from = self.horizon + 1;
        let end = Self::epoch_end(ranking, from, self.hold);
        // Every level of the previous epoch is decided: its shares hold nothing.
        debug_assert!(self.stripes.iter().all(|s| s.marks.iter().all(Option::is_none)));
        self.layout = split::Layout::new(ranking, from..=end, comm.processes());
        self.stripes = self.layout.shares_of(comm.process()).into_iter().map(|share| Stripe::new(share, self.top)).collect();
        for stripe in &mut self.stripes {
            for n in from..=end {
                let range = self.layout.range(ranking, n, stripe.share);
                stripe.base[n as usize] = range.start;
                let dense = split::dense_from(ranking, n).saturating_sub(range.start);
                stripe.marks[n as usize] = Some(MappedBits::anonymous_dense_from(range.end - range.start, dense)?);
                if self.hold.count_moves {
                    stripe.twice[n as usize] = Some(MappedBits::anonymous_dense_from(range.end - range.start, dense)?);
                }
            }
        }
        self.horizon = end;
        self.peak_held = self.peak_held.max(self.held_bytes());
        Ok(())
    }

    /// The last level whose marks are held.
    pub fn horizon(&self) -> u32 {
        self.horizon
    }

    /// Parents this process has enumerated so far (a rank computed for
    /// each, whether it owns the rank or not): the sieve's work besides the
    /// marks, which dividing the enumeration among processes shrinks.
    pub fn enumerated(&self) -> u64 {
        self.enumerated
    }

    /// Bytes of the mark sets held now (with the second bits and the threads' copies).
    pub fn held_bytes(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| bit_bytes(s.marks.iter().flatten().chain(s.twice.iter().flatten()).chain(s.copies.iter().flatten())))
            .sum()
    }

    /// The most bytes of mark sets (with the threads' copies) held at once so far.
    pub fn peak_held_bytes(&self) -> u64 {
        self.peak_held
    }

    /// The layout of the current epoch: who owns which ranks.
    pub fn layout(&self) -> &split::Layout {
        &self.layout
    }

    /// Bytes of the mark sets a process holds while level `n` is pending
    /// (its share of levels `n ..=` the end of their epoch; at most).
    pub fn pending_bytes(ranking: &Ranking, n: u32, hold: Holding) -> u64 {
        Self::bytes(ranking, n, Self::epoch_end(ranking, n, hold), hold)
    }

    /// [`Frontier::pending_bytes`] with the most the thread copies of this
    /// pool may add to them (copies of the levels above `n`).
    pub fn pending_bytes_with_copies(ranking: &Ranking, n: u32, hold: Holding) -> u64 {
        let (end, threads) = (Self::epoch_end(ranking, n, hold), rayon::current_num_threads());
        let marks = Self::bytes(ranking, n, end, hold);
        let above = if n < end { Self::bytes(ranking, n + 1, end, hold) } else { 0 };
        Self::with_copies(marks, above, hold, threads)
    }

    /// The bytes of the mark bits of the largest process's shares of
    /// levels `from..=to`: an even share, times the largest process's share
    /// of the universe's positions over an even share ([`layout_slack`]).
    fn bytes(ranking: &Ranking, from: u32, to: u32, hold: Holding) -> u64 {
        let even = Self::even_bytes(ranking, from, to, hold);
        if hold.processes == 1 {
            return even;
        }
        (even as f64 * layout_slack(ranking, hold.processes)).ceil() as u64
    }

    /// The bytes of the mark bits of an even share of levels `from..=to`.
    fn even_bytes(ranking: &Ranking, from: u32, to: u32, hold: Holding) -> u64 {
        (from..=to).map(|m| ranking.size(m).div_ceil(hold.processes as u64).div_ceil(64) * 8 * hold.bits()).sum()
    }

    /// The bytes of the mark bits each process holds of `levels` in
    /// `layout`, level by level (each share's range in whole words, as
    /// [`Frontier::open_epoch`] maps them): `[process][level − first]`.
    pub fn share_bytes(ranking: &Ranking, layout: &split::Layout, levels: RangeInclusive<u32>, hold: Holding) -> Vec<Vec<u64>> {
        let processes = layout.processes();
        let mut out = vec![Vec::new(); processes];
        for m in levels {
            let mut level = vec![0; processes];
            for (s, len) in layout.share_positions(ranking, m).into_iter().enumerate() {
                level[layout.owner(s)] += len.div_ceil(64) * 8 * hold.bits();
            }
            for (o, b) in out.iter_mut().zip(level) {
                o.push(b);
            }
        }
        out
    }

    /// The bytes of mark bits and (at most) thread copies of `threads`
    /// threads a process holds while level `n` is pending, of `marks` bytes
    /// of its shares of levels `n..=end` of which `above` are above `n`.
    pub fn with_copies(marks: u64, above: u64, hold: Holding, threads: usize) -> u64 {
        marks + copy_budget(marks, copy_share(), hold, threads).min(above * (threads as u64).saturating_sub(1))
    }

    /// Gives every thread but the first its own copy of the mark bits of
    /// the pending levels above `n`, farthest first, while the copies hold
    /// at most `copy_share` ([`super::tunables::COPY_SHARE`]) of the bytes of the marks held,
    /// and marks and copies fit in the window. Farthest first because the
    /// largest levels take most marks and their bits miss the cache: to 100
    /// tiles three marks in four land in levels 90 and up, and with
    /// `copy_share` 0.75 about 72 % of all marks land in copies (nearest
    /// first copied as many but saved less time). Each thread then marks
    /// the levels copied in bits no other thread writes: a plain load and
    /// store, without the locked instruction (which waits for every store
    /// before it) and the branch that avoids it when the bit is set (a coin
    /// toss). A level's copies stay until it is scanned; as levels are
    /// decided and freed, more are copied. Best effort: a copy that cannot
    /// be mapped is not made.
    fn copy_levels(&mut self, n: u32) {
        let threads = rayon::current_num_threads();
        let marks: u64 = self.stripes.iter().map(|s| bit_bytes(s.marks.iter().flatten())).sum();
        let mut copies: u64 = self.stripes.iter().map(|s| bit_bytes(s.copies.iter().flatten())).sum();
        let budget = copy_budget(marks, self.copy_share, self.hold, threads);
        if budget == 0 {
            return;
        }
        // A level is copied in every share or in none.
        for m in (n + 1..=self.horizon).rev() {
            let levels: Vec<&MappedBits> = self.stripes.iter().filter_map(|s| s.marks[m as usize].as_ref()).collect();
            if levels.is_empty() || self.stripes.iter().any(|s| !s.copies[m as usize].is_empty()) {
                continue;
            }
            let cost = (threads as u64 - 1) * bit_bytes(levels.into_iter());
            if copies + cost > budget {
                break;
            }
            let made: io::Result<Vec<Vec<MappedBits>>> = self
                .stripes
                .iter()
                .map(|s| {
                    let len = s.marks[m as usize].as_ref().map_or(0, MappedBits::len);
                    (1..threads).map(|_| MappedBits::anonymous(len)).collect()
                })
                .collect();
            let Ok(made) = made else { break };
            for (stripe, made) in self.stripes.iter_mut().zip(made) {
                stripe.copies[m as usize] = made;
            }
            copies += cost;
        }
        self.peak_held = self.peak_held.max(self.held_bytes());
    }

    /// Pushes the losses `ranks` of the decided level `n` (gathered from
    /// every process, or read back from its table on resume or when an
    /// epoch opens) into this process's ranges of the held levels above `from − 1`.
    pub fn push_decided(&mut self, ranking: &Ranking, n: u32, ranks: &(impl SortedRanks + ?Sized), from: u32) {
        for s in 0..self.stripes.len() {
            self.push_losses(s, ranking, n, ranks, from, Losses::Any, 0..0);
        }
    }

    /// [`Frontier::push_decided`] into share `s` (of [`Frontier::stripes`])
    /// for losses of a known `kind`: those of which the share owns only
    /// parents that grow the top run are pushed from their ranks, without
    /// unranking them ([`Parents::push_top_run`]). The ranks in `skip` are
    /// not pushed.
    #[allow(clippy::too_many_arguments)]
    fn push_losses(
        &mut self,
        s: usize,
        ranking: &Ranking,
        n: u32,
        ranks: &(impl SortedRanks + ?Sized),
        from: u32,
        kind: Losses,
        skip: std::ops::Range<u64>,
    ) {
        if self.hold.count_moves {
            self.push_losses_as::<Counting>(s, ranking, n, ranks, from, kind, skip)
        } else {
            self.push_losses_as::<Plain>(s, ranking, n, ranks, from, kind, skip)
        }
    }

    /// [`Frontier::push_losses`] with marks of mode `M` (the run's).
    #[allow(clippy::too_many_arguments)]
    fn push_losses_as<M: Mode>(
        &mut self,
        s: usize,
        ranking: &Ranking,
        n: u32,
        ranks: &(impl SortedRanks + ?Sized),
        from: u32,
        kind: Losses,
        skip: std::ops::Range<u64>,
    ) {
        if from > self.horizon {
            return;
        }
        let (dmin, dmax) = (from - n, self.horizon - n);
        let ctx = self.stripes[s].parents(ranking, &self.by_suffix);
        ctx.check_mode::<M>();
        let top = self.top;
        // Tasks cut by rank (a compact set is not indexed by position):
        // TASK_LOSSES losses each on average, uneven ones stolen.
        let size = ranking.size(n);
        let tasks = ranks.count().div_ceil(TASK_LOSSES).max(1);
        let width = size.div_ceil(tasks).max(1);
        // Only the losses that may have a parent this share owns, each
        // with the sizes of those parents.
        let spans = ctx.loss_spans(n, dmin, dmax);
        let counts = on_worker(|| {
            (0..tasks as usize)
                .into_par_iter()
                .with_max_len(piece_len(tasks as usize)) // as the scan's units: uneven along the ranks
                .map(|task| task as u64)
                .fold(
                    || (PushScratch::<M>::new(top), Vec::new()),
                    |(mut scratch, mut rows), task| {
                        let (start, end) = ((task * width).min(size), ((task + 1) * width).min(size));
                        let first = spans.partition_point(|s| s.range.end <= start);
                        for span in spans[first..].iter().take_while(|s| s.range.start < end) {
                            let push = ctx.push_of(span, kind, n);
                            let (lo, hi) = (span.range.start.max(start), span.range.end.min(end));
                            for piece in [lo..hi.min(skip.start), lo.max(skip.end)..hi] {
                                for r in ranks.ranks_in(piece) {
                                    ctx.push_loss(push, span, n, r, &mut rows, &mut scratch);
                                }
                            }
                        }
                        ctx.flush(&mut scratch.marker);
                        (scratch, rows)
                    },
                )
                .map(|(scratch, _)| scratch.counts)
                .reduce(|| vec![0; top as usize + 1], add_counts)
        });
        let enumerated = ctx.enumerated.load(Ordering::Relaxed);
        self.pushed = add_counts(std::mem::take(&mut self.pushed), counts);
        self.enumerated += enumerated;
    }

    /// Decides level `n` (every smaller level decided and pushed): collects
    /// the unmarked positions of this process's ranges of the level, gathers
    /// every process's, and pushes each loss to the parents this process
    /// owns at every pending level. Every process ends with the same losses.
    pub fn sieve_level(&mut self, ranking: &Ranking, n: u32, comm: &dyn Comm) -> LevelLosses {
        if self.hold.count_moves {
            self.sieve_level_as::<Counting>(ranking, n, comm)
        } else {
            self.sieve_level_as::<Plain>(ranking, n, comm)
        }
    }

    /// [`Frontier::sieve_level`] with marks of mode `M` (the run's).
    fn sieve_level_as<M: Mode>(&mut self, ranking: &Ranking, n: u32, comm: &dyn Comm) -> LevelLosses {
        let processes = comm.processes();
        // Every share's bits of level n, with its threads' copies ORed in.
        let mut levels = Vec::with_capacity(self.stripes.len());
        for stripe in &mut self.stripes {
            let mut marks = stripe.marks[n as usize].take().expect("level n is pending");
            let twice = stripe.twice[n as usize].take();
            stripe.merge_copies(n, &mut marks);
            levels.push((marks, twice));
        }
        self.copy_levels(n);
        // Each share's scan: its losses (pushed at once into the share),
        // and their conjugates by rows.
        let (mut scanned, mut several) = (0, None::<u64>);
        let mut found: Vec<Vec<RoaringTreemap>> = Vec::with_capacity(self.stripes.len());
        let mut held = Vec::with_capacity(self.stripes.len());
        for (s, (marks, twice)) in levels.into_iter().enumerate() {
            held.push(self.stripes[s].held(n, marks.len()));
            let (mine, count, twice_count) = self.scan_share::<M>(s, ranking, n, processes, &marks, twice.as_ref());
            drop((marks, twice));
            scanned += count;
            several = twice_count.map(|c| several.unwrap_or(0) + c);
            found.push(mine);
        }
        // The scanned losses, then their conjugates with 1, 2, … rows (none
        // has 0), of all this process's shares.
        let mine: Vec<RoaringTreemap> = if found.len() == 1 {
            std::mem::take(&mut found[0])
        } else {
            let width = found.iter().map(Vec::len).max().unwrap_or(1);
            (0..width).map(|i| found.iter().filter_map(|sets| sets.get(i)).union()).collect()
        };
        // The level's losses: one union of the sets, which turns a container
        // held by several into a bitmap once (ORing the sets in one by one
        // copied an array container at every set that shares it: the
        // conjugates by rows share many, and every process unites them all).
        let all = if processes == 1 {
            // The scan's one set (its conjugates pushed into it).
            debug_assert_eq!(mine.len(), 1, "one set with one process");
            mine.into_iter().next().unwrap_or_default()
        } else {
            // Exchange the losses, and push into each share the losses it
            // did not find. Every parent is owned by one share, which marks
            // it once: from its scan's rows when it found the loss, from the
            // gathered ranks when another did (unranked, one look-up a tile,
            // unless only its top run's growths are owned there).
            let sets = all_gather_sets(comm, &mine);
            for s in 0..self.stripes.len() {
                for (i, set) in sets.iter().enumerate() {
                    if i == 0 {
                        // The scanned losses in this share's ranks are its own.
                        self.push_losses(s, ranking, n, set, n + 1, Losses::Scanned, held[s].clone());
                        continue;
                    }
                    // (None of them is this share's when it has no set of this index.)
                    let others = found[s].get(i).map(|m| set - m);
                    let kind = Losses::Conjugates { rows: i as u32 };
                    self.push_losses(s, ranking, n, others.as_ref().unwrap_or(set), n + 1, kind, 0..0);
                }
            }
            unite_by_shares(comm, sets, &held)
        };
        LevelLosses { ranks: all, marks: self.pushed[n as usize], scanned, several }
    }

    /// Scans share `s`'s bits `marks` of level `n` for unmarked positions
    /// (and, for a canonical loss with fewer rows than columns, adds its
    /// conjugate, which the scan skips), pushing each loss at once, from
    /// the rows the scan found, to the parents the share owns. Returns the
    /// losses scanned then their conjugates by rows (all in one set with
    /// one process), the positions scanned and, when counting moves, the
    /// positions with two or more losing children.
    fn scan_share<M: Mode>(
        &mut self,
        s: usize,
        ranking: &Ranking,
        n: u32,
        processes: usize,
        marks: &MappedBits,
        twice: Option<&MappedBits>,
    ) -> (Vec<RoaringTreemap>, u64, Option<u64>) {
        let sym = ranking.universe().is_symmetric();
        let stripe = &self.stripes[s];
        let base = stripe.base[n as usize];
        let top = self.top;
        let ctx = stripe.parents(ranking, &self.by_suffix);
        ctx.check_mode::<M>();
        let dmax = self.horizon - n;
        let spans = ctx.loss_spans(n, 1, dmax);
        let sizes_of = |rank: u64| {
            let at = spans.partition_point(|s| s.range.end <= rank);
            spans.get(at).filter(|s| s.range.contains(&rank)).map(|s| s.sizes)
        };
        let units = self.layout.units(ranking, n, stripe.share);
        let (found, conjugates, scanned, counts) = on_worker(|| {
            // Many small pieces: rayon's adaptive split stops cutting a piece
            // no thread steals (about four pieces on two threads), and the
            // work is not spread along the units (tall positions first, rarely
            // canonical): one thread scanned most of each level while the
            // other waited (docs/performance.md, "The scan's pieces").
            units
                .par_iter()
                .with_max_len(piece_len(units.len()))
                .fold(Acc::<M>::new(top), |mut acc, prefix| {
                    let Acc { scratch, found, conjugates, scanned, conj } = &mut acc;
                    let mut scan = Unmarked {
                        ranking,
                        marks,
                        base,
                        buf: Vec::new(),
                        f: |rank: u64, rows: &[u8]| {
                            found.push_in_order(rank);
                            if let Some(sizes) = sizes_of(rank) {
                                ctx.push_parents(rows, n, rank, sizes, scratch);
                            }
                            if sym && rows.len() < rows[0] as usize {
                                conjugate_rows_into(rows, conj);
                                let crank = ranking.rank_rows(conj);
                                if processes == 1 {
                                    // One set of the level's losses: no exchange, and
                                    // no union of two sets at the level's end.
                                    found.push_any(crank);
                                } else {
                                    // By number of rows, for the exchange.
                                    let rows = rows[0] as usize;
                                    if conjugates.len() <= rows {
                                        conjugates.resize_with(rows + 1, Found::default);
                                    }
                                    conjugates[rows].push_any(crank);
                                }
                                if let Some(sizes) = sizes_of(crank) {
                                    ctx.push_parents(conj, n, crank, sizes, scratch);
                                }
                            }
                        },
                    };
                    *scanned += ranking.walk(n, prefix, sym, &mut scan);
                    ctx.flush(&mut scratch.marker);
                    acc
                })
                .reduce(Acc::new(top), Acc::merge)
                .into_parts()
        });
        // Every losing child of the level's positions has pushed them.
        let several = twice.map(|t| counts::several(ranking, n, t, base, sym));
        let enumerated = ctx.enumerated.load(Ordering::Relaxed);
        self.enumerated += enumerated;
        self.pushed = add_counts(std::mem::take(&mut self.pushed), counts);
        let mine = std::iter::once(found).chain(conjugates.into_iter().skip(1)).map(Found::finish).collect();
        (mine, scanned, several)
    }
}

/// The largest process's positions of a universe's levels over an even
/// share, with `processes` processes cut as one epoch
/// ([`split::Layout`]): what the windows and the memory check add to an
/// even share (about 1.01–1.04 for 4–8 processes at 110 tiles). Computed
/// once per universe and number of processes.
fn layout_slack(ranking: &Ranking, processes: usize) -> f64 {
    static SLACK: std::sync::Mutex<Vec<(crate::game::Universe, usize, f64)>> = std::sync::Mutex::new(Vec::new());
    let u = *ranking.universe();
    if let Some(&(_, _, s)) = SLACK.lock().expect("not poisoned").iter().find(|e| e.0 == u && e.1 == processes) {
        return s;
    }
    let top = ranking.max_tiles();
    let held = split::Layout::new(ranking, 1..=top, processes).positions(ranking, 1..=top);
    let total: u64 = held.iter().sum();
    let slack = (held.iter().copied().max().unwrap_or(0) as f64 * processes as f64 / total.max(1) as f64).max(1.0);
    SLACK.lock().expect("not poisoned").push((u, processes, slack));
    slack
}

/// Runs `f` on a worker of the current pool (the global pool outside any),
/// so that the marks of its parallel iterators are made on the pool's
/// workers only, as [`Workers`] requires: called from outside the pool,
/// rayon runs an iterator of one piece on the calling thread itself. (The
/// collectives stay on the calling thread: MPI may require its main thread.)
fn on_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// Pieces per thread of a level's scan or pushes: enough that the dense
/// part of a level is spread over the threads, few enough that each
/// piece's scratch (its counts by level: a thin box has a thousand levels
/// and tens of thousands of units a level) costs nothing beside its work.
const PIECES_PER_THREAD: usize = 64;

/// The most items of a parallel section per piece ([`PIECES_PER_THREAD`]).
fn piece_len(items: usize) -> usize {
    items.div_ceil(rayon::current_num_threads() * PIECES_PER_THREAD).max(1)
}

/// Adds per-level counts (`b` into `a`, the longer kept).
fn add_counts(mut a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    if a.len() < b.len() {
        return add_counts(b, a);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.wrapping_add(y); // wrapping: also adds differences
    }
    a
}
