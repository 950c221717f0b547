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
use std::sync::atomic::{AtomicU64, Ordering};

/// How processes share an epoch's levels: the bits of a share cost memory
/// for all its positions, its work falls on canonical ones; balance both,
/// the work first.
const SHARES: split::Balance = split::Balance::Both;

/// A loss whose run (or, in a box, new rows below it) leads to at least
/// this many parents pushes them from every thread (the environment
/// variable `CHOMP_PARALLEL_PARENTS` overrides it, for tests): the L shape
/// `[c, c − 1]` of a box, the hook with equal arms `[a, 1^(a−1)]` of a tile
/// count (its arm's growths fill an `(a − 1)`-square; at levels 21–45 of a
/// run to 100 tiles one thread held up the level for 0.2–0.4 s). New rows
/// below a loss are estimated in boxes only: where rows are unbounded the
/// estimate (one partition count per pending level, for every loss) would
/// cost more than it saves.
pub(super) const PARALLEL_PARENTS: u64 = 1 << 16;

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
    /// Marks pushed into the level by this rank (canonical parent, losing child pairs).
    pub marks: u64,
    /// Positions this rank scanned for marks.
    pub scanned: u64,
    /// When counting moves ([`Holding::count_moves`]): the positions of
    /// this process's share of the level with two or more losing children
    /// (a canonical position counts for its conjugate too).
    pub several: Option<u64>,
}

/// The pending levels: one mark bit per position of every level not yet
/// decided, holding the marks pushed by the losses of the decided levels.
///
/// With several processes each owns a contiguous rank range of every level
/// (its share of the scan) and holds the marks of that range only. The
/// ranges of an epoch's levels are cut at the same units (top row, second
/// row) at every level ([`split::Cuts`]): the parents that keep a loss's
/// top row are then, at every pending level, the process's that found the
/// loss, which pushes them from its rows, where cuts made level by level
/// rose with the level and left other processes to unrank and walk the
/// loss again. Shares balance, summed over the epoch, all positions (the
/// memory of their bits) and canonical ones (the work of marks and scan,
/// denser where top rows are long, and cheaper) at once, the work weighing
/// more ([`split::WORK_WEIGHT`]): with 4 processes the largest enumerates
/// 0.31 of one process's parents, computes about a third of its time and
/// peaks under half its memory. Bits are on huge
/// pages only where canonical positions are dense ([`split::dense_from`]):
/// the first share is mostly tall positions, rarely marked. Each process
/// pushes the losses its scan finds at once, from their rows, marking only
/// the parents it owns; the others' losses are gathered (as roaring sets,
/// and held as one while they are pushed) and pushed from their ranks:
/// unranked where this process may own a parent that keeps a loss's top
/// row, else only its top run's growths, read off the rank (the conjugates
/// of scanned losses are exchanged by number of rows, which bounds those
/// growths).
pub struct Frontier {
    /// Largest level.
    top: u32,
    /// Largest level whose marks are held (the end of the current epoch).
    horizon: u32,
    /// The share and window of the mark bits held.
    hold: Holding,
    /// Mark bits of this process's range of each level (`None` for decided levels).
    marks: Vec<Option<MappedBits>>,
    /// When counting moves: the second mark bits of the same ranges, set by
    /// a position's second push and later ones ([`marks::MarkView::twice`]).
    twice: Vec<Option<MappedBits>>,
    /// First rank of this process's range of each level (of the current epoch).
    base: Vec<u64>,
    /// The processes' shares of the current epoch's levels: one cut for all of them.
    cuts: split::Cuts,
    /// Marks pushed into each level by this process.
    pushed: Vec<u64>,
    /// Parents this process enumerated (ranks computed, owned or not).
    enumerated: u64,
    /// The ranking's contributions, by suffix.
    by_suffix: BySuffix,
    /// Each thread's own copy of a level's mark bits but the first thread's
    /// (empty: the threads share the level's bits), ORed into them before
    /// the level is scanned: see [`Frontier::copy_levels`].
    copies: Vec<Vec<MappedBits>>,
    /// Thread copies hold at most this share of the bytes of the marks held.
    copy_share: f64,
}

/// Thread copies of the mark bits of the next pending levels may hold at
/// most this share of the bytes of the marks held (the environment
/// variable `CHOMP_COPY_SHARE` overrides it, for tests and measurements).
pub(super) const COPY_SHARE: f64 = 0.75;

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

/// Boxes whose mark bits exceed this are sieved in two epochs (the
/// environment variable `CHOMP_EPOCH_BYTES` overrides it, for tests).
pub(super) const EPOCH_BYTES: u64 = 256 << 20;

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
        let (marks, base) = ((0..=top).map(|_| None).collect(), vec![0; top as usize + 1]);
        let twice = (0..=top).map(|_| None).collect();
        let cuts = split::Cuts::whole();
        let by_suffix = BySuffix::new(ranking);
        let copies = (0..=top).map(|_| Vec::new()).collect();
        let (pushed, copy_share) = (vec![0; top as usize + 1], copy_share());
        let mut f =
            Frontier { top, horizon: decided, marks, twice, base, cuts, pushed, enumerated: 0, by_suffix, hold, copies, copy_share };
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
        self.cuts = split::Cuts::new(ranking, from..=end, SHARES, comm.processes());
        for n in from..=end {
            let range = self.cuts.range(ranking, n, comm.process());
            self.base[n as usize] = range.start;
            let dense = split::dense_from(ranking, n).saturating_sub(range.start);
            self.marks[n as usize] = Some(MappedBits::anonymous_dense_from(range.end - range.start, dense)?);
            if self.hold.count_moves {
                self.twice[n as usize] = Some(MappedBits::anonymous_dense_from(range.end - range.start, dense)?);
            }
        }
        self.horizon = end;
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
        bit_bytes(self.marks.iter().flatten().chain(self.twice.iter().flatten()).chain(self.copies.iter().flatten()))
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
        marks + copy_budget(marks, copy_share(), hold, threads).min(above * (threads as u64).saturating_sub(1))
    }

    /// The bytes of the mark bits of a process's share of levels `from..=to`.
    fn bytes(ranking: &Ranking, from: u32, to: u32, hold: Holding) -> u64 {
        (from..=to).map(|m| ranking.size(m).div_ceil(hold.processes as u64).div_ceil(64) * 8 * hold.bits()).sum()
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

    /// Gives every thread but the first its own copy of the mark bits of
    /// the pending levels above `n`, farthest first, while the copies hold
    /// at most `copy_share` ([`COPY_SHARE`]) of the bytes of the marks held,
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
        let marks = bit_bytes(self.marks.iter().flatten());
        let mut copies = bit_bytes(self.copies.iter().flatten());
        let budget = copy_budget(marks, self.copy_share, self.hold, threads);
        if budget == 0 {
            return;
        }
        for m in (n + 1..=self.horizon).rev() {
            let Some(level) = &self.marks[m as usize] else { continue };
            if !self.copies[m as usize].is_empty() {
                continue;
            }
            let cost = (threads as u64 - 1) * bit_bytes(std::iter::once(level));
            if copies + cost > budget {
                break;
            }
            let Ok(made) = (1..threads).map(|_| MappedBits::anonymous(level.len())).collect::<io::Result<Vec<_>>>() else { break };
            self.copies[m as usize] = made;
            copies += cost;
        }
    }

    /// Pushes the losses `ranks` of the decided level `n` (gathered from
    /// every process, or read back from its table on resume or when an
    /// epoch opens) into this process's range of the held levels above `from − 1`.
    pub fn push_decided(&mut self, ranking: &Ranking, n: u32, ranks: &(impl SortedRanks + ?Sized), from: u32) {
        self.push_losses(ranking, n, ranks, from, Losses::Any, 0..0);
    }

    /// [`Frontier::push_decided`] for losses of a known `kind`: those of
    /// which this process owns only parents that grow the top run are
    /// pushed from their ranks, without unranking them ([`Parents::push_top_run`]).
    /// The ranks in `skip` are not pushed.
    #[allow(clippy::too_many_arguments)]
    fn push_losses(
        &mut self,
        ranking: &Ranking,
        n: u32,
        ranks: &(impl SortedRanks + ?Sized),
        from: u32,
        kind: Losses,
        skip: std::ops::Range<u64>,
    ) {
        if self.hold.count_moves {
            self.push_losses_as::<Counting>(ranking, n, ranks, from, kind, skip)
        } else {
            self.push_losses_as::<Plain>(ranking, n, ranks, from, kind, skip)
        }
    }

    /// [`Frontier::push_losses`] with marks of mode `M` (the run's).
    #[allow(clippy::too_many_arguments)]
    fn push_losses_as<M: Mode>(
        &mut self,
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
        let ctx = Parents::new(ranking, &self.by_suffix, &self.marks, &self.twice, &self.base, &self.copies);
        ctx.check_mode::<M>();
        let top = self.top;
        // Tasks cut by rank (a compact set is not indexed by position):
        // TASK_LOSSES losses each on average, uneven ones stolen.
        let size = ranking.size(n);
        let tasks = ranks.count().div_ceil(TASK_LOSSES).max(1);
        let width = size.div_ceil(tasks).max(1);
        // Only the losses that may have a parent this process owns, each
        // with the sizes of those parents.
        let spans = ctx.loss_spans(n, dmin, dmax);
        let counts = on_worker(|| {
            (0..tasks)
                .into_par_iter()
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
        self.pushed = add_counts(std::mem::take(&mut self.pushed), counts);
        self.enumerated += ctx.enumerated.load(Ordering::Relaxed);
    }

    /// Decides level `n` (every smaller level decided and pushed): collects
    /// the unmarked positions of this process's range of the level, gathers
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
        let sym = ranking.universe().is_symmetric();
        let (me, ranks) = (comm.process(), comm.processes());
        let mut marks = self.marks[n as usize].take().expect("level n is pending");
        let twice = self.twice[n as usize].take();
        self.merge_copies(n, &mut marks);
        self.copy_levels(n);
        let base = self.base[n as usize];
        let held = base..base + marks.len();
        let top = self.top;
        let ctx = Parents::new(ranking, &self.by_suffix, &self.marks, &self.twice, &self.base, &self.copies);
        ctx.check_mode::<M>();
        let dmax = self.horizon - n;
        // Scan this process's range of the level for unmarked positions
        // (and, for a canonical loss with fewer rows than columns, add its
        // conjugate, which the scan skips). Each loss is pushed at once, from
        // the rows the scan found, to the parents this process owns; with
        // several processes the others push it once all are known (below).
        let spans = ctx.loss_spans(n, 1, dmax);
        let sizes_of = |rank: u64| {
            let at = spans.partition_point(|s| s.range.end <= rank);
            spans.get(at).filter(|s| s.range.contains(&rank)).map(|s| s.sizes)
        };
        let shares = self.cuts.units(ranking, n, me);
        let (found, conjugates, scanned, counts) = on_worker(|| {
            shares
                .par_iter()
                .fold(Acc::<M>::new(top), |mut acc, prefix| {
                    let Acc { scratch, found, conjugates, scanned, conj } = &mut acc;
                    let mut scan = Unmarked {
                        ranking,
                        marks: &marks,
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
                                // By number of rows, for the exchange (one process, one set).
                                let rows = if ranks == 1 { 1 } else { rows[0] as usize };
                                if conjugates.len() <= rows {
                                    conjugates.resize_with(rows + 1, Found::default);
                                }
                                conjugates[rows].push_any(crank);
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
        drop(marks);
        // Every losing child of the level's positions has pushed them.
        let several = twice.map(|t| counts::several(ranking, n, &t, base, sym));
        self.enumerated += ctx.enumerated.load(Ordering::Relaxed);
        self.pushed = add_counts(std::mem::take(&mut self.pushed), counts);
        // The scanned losses, then their conjugates with 1, 2, … rows (none has 0).
        let mine: Vec<RoaringTreemap> = std::iter::once(found).chain(conjugates.into_iter().skip(1)).map(Found::finish).collect();
        // The level's losses: one union of the sets, which turns a container
        // held by several into a bitmap once (ORing the sets in one by one
        // copied an array container at every set that shares it: the
        // conjugates by rows share many, and every process unites them all).
        let all = if ranks == 1 {
            mine.union()
        } else {
            // Exchange the losses, and push the others' losses to the
            // parents this process owns. Every parent is owned by one
            // process, which marks it once: from its scan's rows when it
            // found the loss, from the gathered ranks when another did
            // (unranked, one look-up a tile, unless only its top run's
            // growths are owned here).
            let sets = all_gather_sets(comm, &mine);
            for (i, set) in sets.iter().enumerate() {
                if i == 0 {
                    // The scanned losses in this process's ranks are its own.
                    self.push_losses(ranking, n, set, n + 1, Losses::Scanned, held.clone());
                    continue;
                }
                // (None of them is this process's when it has no set of this index.)
                let others = mine.get(i).map(|m| set - m);
                let kind = Losses::Conjugates { rows: i as u32 };
                self.push_losses(ranking, n, others.as_ref().unwrap_or(set), n + 1, kind, 0..0);
            }
            unite_by_shares(comm, sets, held)
        };
        LevelLosses { ranks: all, marks: self.pushed[n as usize], scanned, several }
    }
}

/// Runs `f` on a worker of the current pool (the global pool outside any),
/// so that the marks of its parallel iterators are made on the pool's
/// workers only, as [`Workers`] requires: called from outside the pool,
/// rayon runs an iterator of one piece on the calling thread itself. (The
/// collectives stay on the calling thread: MPI may require its main thread.)
fn on_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
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
