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

use super::found::Found;
use crate::cluster::Comm;
use crate::game::position::conjugate_rows_into;
use crate::index::{split, Ranking, Visit};
use crate::store::mapped::MappedBits;
use crate::store::SortedRanks;
use rayon::prelude::*;
use roaring::{MultiOps, RoaringTreemap};
use std::io;
use std::ops::Range;
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

/// What is known of the losses [`Frontier::push_losses`] pushes.
#[derive(Clone, Copy, Debug)]
enum Losses {
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

/// How [`Frontier::push_losses`] pushes the losses of a span ([`Ctx::push_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Push {
    /// Not at all: this process owns none of their parents.
    Skip,
    /// Unranked, every parent this process owns.
    Unranked,
    /// From the rank, only the growths of the top run by `first_min` or more.
    TopRun { first_min: u32 },
}

/// What one level of the sieve found.
pub struct LevelLosses {
    /// Ranks of the losses of the level (a roaring set: about 2 bytes a
    /// loss where 8 would hold them in a vector).
    pub ranks: RoaringTreemap,
    /// Marks pushed into the level by this rank (canonical parent, losing child pairs).
    pub marks: u64,
    /// Positions this rank scanned for marks.
    pub scanned: u64,
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
    if threads < 2 || share <= 0.0 {
        return 0;
    }
    let budget = (share * marks as f64) as u64;
    hold.window.map_or(budget, |window| budget.min(window.saturating_sub(marks)))
}

/// The contributions of the ranking laid out with the suffix innermost:
/// `row(i, v)[s] = contribution(s, i, v)`, so that one row's contribution to
/// the parents of every size is one contiguous slice.
struct BySuffix {
    /// Rows with distinct contributions (1 when rows are unbounded).
    planes: u32,
    max_part: u32,
    stride: usize,
    table: Vec<u64>,
    /// With one plane, the sums of a row's contributions down a block of
    /// rows of equal length: `blocks[v·stride + s] = Σ_{i ≥ 0, s − iv ≥ 0}
    /// contribution(s − iv, ·, v)`. The rows `x..y` of length `v` above a
    /// suffix of `S` tiles contribute `F(v, S + (y − x)v) − F(v, S)` in all.
    blocks: Vec<u64>,
}

impl BySuffix {
    fn new(ranking: &Ranking) -> Self {
        let top = ranking.max_tiles();
        let u = ranking.universe();
        let max_part = u.cols.unwrap_or(top).min(top);
        // Contributions depend on the row only through the rows left under a row bound.
        let planes = u.rows.filter(|&r| r < top).unwrap_or(1);
        let stride = top as usize + 1;
        let mut table = vec![0; planes as usize * max_part as usize * stride];
        for i in 0..planes {
            for v in 1..=max_part {
                let at = ((i * max_part + v - 1) as usize) * stride;
                for (s, q) in table[at..at + stride].iter_mut().enumerate() {
                    *q = ranking.contribution(s as u32, i, v);
                }
            }
        }
        let mut blocks = Vec::new();
        if planes == 1 {
            blocks = vec![0; (max_part as usize + 1) * stride];
            for v in 1..=max_part as usize {
                for s in 0..stride {
                    let below = if s >= v { blocks[v * stride + s - v] } else { 0 };
                    blocks[v * stride + s] = below + table[(v - 1) * stride + s];
                }
            }
        }
        BySuffix { planes, max_part, stride, table, blocks }
    }

    /// `F(v, ·)` of [`BySuffix::blocks`] (one plane only).
    #[inline(always)]
    fn block(&self, v: u32) -> &[u64] {
        &self.blocks[v as usize * self.stride..(v as usize + 1) * self.stride]
    }

    /// `contribution(s + m, i, v + m)` for `m = 0, 1, …` (`v >= 1`).
    #[inline(always)]
    fn diagonal(&self, i: u32, v: u32, s: u32) -> impl Iterator<Item = &u64> {
        let plane = if self.planes == 1 { 0 } else { i };
        let at = ((plane * self.max_part + v - 1) as usize) * self.stride + s as usize;
        self.table[at..].iter().step_by(self.stride + 1)
    }

    /// `contribution(s, i, v)` for every suffix `s`.
    #[inline(always)]
    fn row(&self, i: u32, v: u32) -> &[u64] {
        let plane = if self.planes == 1 { 0 } else { i };
        debug_assert!(plane < self.planes && v >= 1 && v <= self.max_part);
        let at = ((plane * self.max_part + v - 1) as usize) * self.stride;
        &self.table[at..at + self.stride]
    }
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
}

impl Holding {
    /// One process, no window.
    pub const SOLO: Holding = Holding { processes: 1, window: None };
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
        let cuts = split::Cuts::whole();
        let by_suffix = BySuffix::new(ranking);
        let copies = (0..=top).map(|_| Vec::new()).collect();
        let (pushed, copy_share) = (vec![0; top as usize + 1], copy_share());
        let mut f = Frontier { top, horizon: decided, marks, base, cuts, pushed, enumerated: 0, by_suffix, hold, copies, copy_share };
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
                held += Self::bytes(ranking, m, m, hold.processes);
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
        let total = Self::bytes(ranking, 1, top, 1);
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

    /// Bytes of the mark sets held now (with the threads' copies).
    pub fn held_bytes(&self) -> u64 {
        bit_bytes(self.marks.iter().flatten().chain(self.copies.iter().flatten()))
    }

    /// Bytes of the mark sets a process holds while level `n` is pending
    /// (its share of levels `n ..=` the end of their epoch; at most).
    pub fn pending_bytes(ranking: &Ranking, n: u32, hold: Holding) -> u64 {
        Self::bytes(ranking, n, Self::epoch_end(ranking, n, hold), hold.processes)
    }

    /// [`Frontier::pending_bytes`] with the most the thread copies of this
    /// pool may add to them (copies of the levels above `n`).
    pub fn pending_bytes_with_copies(ranking: &Ranking, n: u32, hold: Holding) -> u64 {
        let (end, threads) = (Self::epoch_end(ranking, n, hold), rayon::current_num_threads());
        let marks = Self::bytes(ranking, n, end, hold.processes);
        let above = if n < end { Self::bytes(ranking, n + 1, end, hold.processes) } else { 0 };
        marks + copy_budget(marks, copy_share(), hold, threads).min(above * (threads as u64).saturating_sub(1))
    }

    fn bytes(ranking: &Ranking, from: u32, to: u32, processes: usize) -> u64 {
        (from..=to).map(|m| ranking.size(m).div_ceil(processes as u64).div_ceil(64) * 8).sum()
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
    /// pushed from their ranks, without unranking them ([`Ctx::push_top_run`]).
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
        if from > self.horizon {
            return;
        }
        let (dmin, dmax) = (from - n, self.horizon - n);
        let ctx = Ctx::new(ranking, &self.by_suffix, &self.marks, &self.base, &self.copies);
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
                    || (Scratch::new(top), Vec::new()),
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
        let sym = ranking.universe().is_symmetric();
        let (me, ranks) = (comm.process(), comm.processes());
        let mut marks = self.marks[n as usize].take().expect("level n is pending");
        self.merge_copies(n, &mut marks);
        self.copy_levels(n);
        let base = self.base[n as usize];
        let held = base..base + marks.len();
        let top = self.top;
        let ctx = Ctx::new(ranking, &self.by_suffix, &self.marks, &self.base, &self.copies);
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
        let acc = on_worker(|| {
            shares
                .par_iter()
                .fold(Acc::new(top), |mut acc, prefix| {
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
        });
        drop(marks);
        let Acc { scratch, found, conjugates, scanned, .. } = acc;
        self.enumerated += ctx.enumerated.load(Ordering::Relaxed);
        self.pushed = add_counts(std::mem::take(&mut self.pushed), scratch.counts);
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
        LevelLosses { ranks: all, marks: self.pushed[n as usize], scanned }
    }
}

/// Every process's sets `mine` (the same number on each, some empty),
/// united index by index, in one collective: each set is sent as its
/// index, its length and its serialized roaring bitmap (64-bit ranks).
fn all_gather_sets(comm: &dyn Comm, mine: &[RoaringTreemap]) -> Vec<RoaringTreemap> {
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
fn unite_by_shares(comm: &dyn Comm, sets: Vec<RoaringTreemap>, held: Range<u64>) -> RoaringTreemap {
    let expected: u64 = sets.iter().map(RoaringTreemap::len).sum();
    let piece = sets
        .into_iter()
        .map(|mut set| {
            set.remove_range(..held.start);
            set.remove_range(held.end..);
            set
        })
        .union();
    let all = all_gather_sets(comm, &[piece]).pop().unwrap_or_default();
    // Disjoint sets, and shares that tile the level: every loss once.
    assert_eq!(all.len(), expected, "the pieces of the level's losses add up to its sets");
    all
}

/// Runs `f` on a worker of the current pool (the global pool outside any),
/// so that the marks of its parallel iterators are made on the pool's
/// workers only, as [`Workers`] requires: called from outside the pool,
/// rayon runs an iterator of one piece on the calling thread itself. (The
/// collectives stay on the calling thread: MPI may require its main thread.)
fn on_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

fn add_counts(mut a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    if a.len() < b.len() {
        return add_counts(b, a);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.wrapping_add(y); // wrapping: also adds differences
    }
    a
}

/// A scan task's results.
struct Acc<'a> {
    scratch: Scratch<'a>,
    /// The losses scanned (canonical, in a symmetric universe).
    found: Found,
    /// Their conjugates (none is canonical), by their number of rows.
    conjugates: Vec<Found>,
    scanned: u64,
    /// A buffer for conjugates.
    conj: Vec<u8>,
}

impl<'a> Acc<'a> {
    fn new(top: u32) -> impl Fn() -> Acc<'a> + Sync + Send {
        move || Acc { scratch: Scratch::new(top), found: Found::default(), conjugates: Vec::new(), scanned: 0, conj: Vec::new() }
    }

    fn merge(mut a: Acc<'a>, b: Acc<'a>) -> Acc<'a> {
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
struct Unmarked<'a, F> {
    ranking: &'a Ranking,
    /// Marks of the ranks `base ..`.
    marks: &'a MappedBits,
    base: u64,
    /// Rows of the positions unranked from a range.
    buf: Vec<u8>,
    f: F,
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

struct Ctx<'a> {
    ranking: &'a Ranking,
    sym: bool,
    max_rows: u32,
    max_cols: u32,
    /// Rows and columns bounded: a box.
    boxed: bool,
    by_suffix: &'a BySuffix,
    /// Each thread's view of this process's marks of each level (empty for
    /// decided levels): the level's bits, or for a level with thread copies
    /// ([`Frontier::copy_levels`]) the thread's own. One view, the levels'
    /// bits, when there are no copies. A thread marks through its view.
    views: Vec<Vec<Owned<'a>>>,
    /// The workers of the pool the context was made in: the threads that
    /// may mark through [`Ctx::views`] when [`Ctx::bound`].
    workers: Workers,
    /// Some marks depend on the thread (a view per thread, or plain marks
    /// on a pool of one): only the pool's workers may mark, each through
    /// its own view.
    bound: bool,
    /// Parents enumerated by the markers flushed ([`Ctx::flush`]).
    enumerated: AtomicU64,
    /// By level, unless [`Ctx::whole`]: the top rows of the first and the
    /// last rank this process owns (`(1, 0)`: none). Ranks are ordered by
    /// the top row first, so a parent whose top row lies outside is not
    /// owned ([`Ctx::top_row`] skips it). The top rows of [`Ctx::two_rows`],
    /// apart: half the bytes in the enumeration's innermost test.
    top_rows: Vec<(u32, u32)>,
    /// By level, unless [`Ctx::whole`]: the first two rows (the second 0
    /// where there is none) of the first and the last rank this process
    /// owns ([`Ctx::keeps_owned`]).
    two_rows: Vec<((u32, u32), (u32, u32))>,
    /// By top row `v`, unless [`Ctx::whole`]: the first and the last level
    /// (`(1, 0)`: none) whose owned top rows ([`Ctx::top_rows`]) include `v`;
    /// no parent with top row `v` is owned outside them.
    levels_of_top_row: Vec<(u32, u32)>,
    /// Every held level is held whole (one process): no parent needs the
    /// test of ownership, and the marks of a top row's loop are counted at
    /// once ([`Scratch::diff`]).
    whole: bool,
}

/// The marks of the ranks `base .. base + len` of one level.
#[derive(Clone, Copy)]
struct Owned<'a> {
    words: &'a [AtomicU64],
    base: u64,
    len: u64,
    /// No other thread writes these bits while this one marks them (one
    /// thread, or its own copy): marks need no atomic read-modify-write.
    /// Decided in [`Ctx::new`] only (see [`Workers`]).
    plain: bool,
}

/// The worker threads of a rayon pool, by index, and the rule of plain marks.
///
/// A mark is a plain load and store ([`Owned::plain`]) only where the bits
/// have one writer for as long as the context lives, so [`Ctx::new`] decides
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
struct Workers(Vec<std::thread::ThreadId>);

/// [`Marker::thread`] of a thread that is no worker of the current pool.
const NOT_A_WORKER: usize = usize::MAX - 1;

impl Workers {
    /// The workers of the current pool (the global pool outside any).
    fn of_current_pool() -> Self {
        // `broadcast` runs once on every worker and returns by thread index.
        Workers(rayon::broadcast(|_| std::thread::current().id()))
    }

    /// Panics unless the calling thread is worker `t` of the pool.
    fn check(&self, t: usize) {
        let id = std::thread::current().id();
        assert!(
            self.0.get(t) == Some(&id),
            "the sieve marks through per-thread views on the workers of the pool it was set up in only (thread index {t} of {})",
            self.0.len()
        );
    }
}

impl Owned<'_> {
    /// The bit of rank `r`, if owned.
    #[inline(always)]
    fn bit(&self, r: u64) -> Option<u64> {
        let i = r.wrapping_sub(self.base);
        (i < self.len).then_some(i)
    }
}

/// Per-task buffers of [`Ctx::push_parents`] (kept to avoid allocating per
/// loss) and the marks it pushed into each level.
struct Scratch<'a> {
    marker: Marker<'a>,
    suf: Vec<u32>,
    /// `pre[d]`: rank contribution of the rows above the current corner in a
    /// parent with `d` more tiles.
    pre: Vec<u64>,
    /// Marks pushed, by level.
    counts: Vec<u64>,
    /// The marks of the runs of one loss as differences (`diff[n] −
    /// diff[n − 1]`, wrapping) where every parent is owned (levels held
    /// whole, or [`Ctx::keeps_owned`]): a top row's loop adds one mark to
    /// each of a range of levels.
    diff: Vec<u64>,
    /// The prefix contributions above the top run: none.
    zeros: Vec<u64>,
    /// [`Ctx::top_run_growths`] of the top runs pushed last, by their rows.
    growths: GrowthsMemo,
}

/// The growths of top runs ([`Ctx::top_run_growths`]) of one top row,
/// level, smallest growth and sizes (`key`), by the run's number of rows:
/// the losses of a span share all but the last, and the loop over the
/// growths takes one step a pending level.
#[derive(Default)]
struct GrowthsMemo {
    key: (u32, u32, u32, u32, u32),
    by_rows: Vec<Option<TopRunGrowths>>,
}

/// [`Ctx::top_run_growths`]: the growths `g0 ..= g1` and sizes `lo ..= hi`,
/// if any.
type TopRunGrowths = Option<(u32, u32, u32, u32)>;

impl Scratch<'_> {
    fn new(top: u32) -> Self {
        Scratch {
            marker: Marker::new(UNBOUND),
            suf: Vec::new(),
            pre: Vec::new(),
            counts: vec![0; top as usize + 1],
            diff: vec![0; top as usize + 2],
            zeros: vec![0; top as usize + 1],
            growths: GrowthsMemo::default(),
        }
    }
}

/// Marks in flight: each word to mark is prefetched when queued and written
/// `RING` marks later, so that the cache misses of the (random) marks overlap.
/// A slot holds the word, the bits to set and whether no other thread writes
/// the word ([`Owned::plain`]).
struct Marker<'a> {
    ring: [(&'a AtomicU64, u64, bool); RING],
    pos: usize,
    /// The thread whose view of the levels ([`Ctx::views`]) the marks queued
    /// are in ([`UNBOUND`]: none yet).
    thread: usize,
    /// Parents enumerated since the last [`Ctx::flush`].
    steps: u64,
}

const RING: usize = 16;
const UNBOUND: usize = usize::MAX;
static NOWHERE: AtomicU64 = AtomicU64::new(0);

impl<'a> Marker<'a> {
    fn new(thread: usize) -> Self {
        Marker { ring: [(&NOWHERE, 0, false); RING], pos: 0, thread, steps: 0 }
    }

    /// Queues `word |= mask`.
    #[inline(always)]
    fn or(&mut self, word: &'a AtomicU64, mask: u64, plain: bool) {
        Self::queue(&mut self.ring, &mut self.pos, word, mask, plain);
    }

    /// Queues `word |= mask` in slot `pos` of `ring`, writing the mark it held.
    #[inline(always)]
    fn queue(ring: &mut [(&'a AtomicU64, u64, bool); RING], pos: &mut usize, word: &'a AtomicU64, mask: u64, plain: bool) {
        prefetch(word);
        let (w, m, p) = std::mem::replace(&mut ring[*pos % RING], (word, mask, plain));
        or_word(w, m, p);
        *pos = (*pos + 1) % RING;
    }

    /// Queues setting bit `i` of `level`.
    #[inline(always)]
    fn set_word(&mut self, level: &Owned<'a>, i: u64) {
        self.or(&level.words[(i >> 6) as usize], 1 << (i & 63), level.plain);
    }

    /// Queues setting bit `i` of `level` for each `(level, i)` (the ring's
    /// position held in a register throughout).
    #[inline(always)]
    fn set_words<'l>(&mut self, marks: impl Iterator<Item = (&'l Owned<'a>, u64)>)
    where
        'a: 'l,
    {
        let mut pos = self.pos;
        for (level, i) in marks {
            Self::queue(&mut self.ring, &mut pos, &level.words[(i >> 6) as usize], 1 << (i & 63), level.plain);
        }
        self.pos = pos;
    }

    /// Queues setting bits `start..end` of `level`.
    fn set_range(&mut self, level: &Owned<'a>, start: u64, end: u64) {
        if start < end {
            for_words(start, end, |k, mask| self.or(&level.words[k as usize], mask, level.plain));
        }
    }

    /// Writes every queued mark.
    fn flush(&mut self) {
        for slot in &mut self.ring {
            let (w, m, p) = std::mem::replace(slot, (&NOWHERE, 0, false));
            or_word(w, m, p);
        }
    }
}

#[inline(always)]
fn or_word(word: &AtomicU64, mask: u64, plain: bool) {
    if plain {
        // No other thread writes these bits: a plain load and store, with
        // no branch (whether the bit is already set is a coin toss for the
        // predictor) and no locked instruction (it stalls the prefetches
        // behind it). One thread, one bench to 100 tiles: 23.7 s → 19.0 s.
        word.store(word.load(Ordering::Relaxed) | mask, Ordering::Relaxed);
        return;
    }
    // A plain load first: it avoids the locked instruction when already set.
    // (An empty slot of the ring has mask 0: nothing to write.)
    if word.load(Ordering::Relaxed) & mask != mask {
        word.fetch_or(mask, Ordering::Relaxed);
    }
}

/// Calls `f(k, mask)` for the words `k` of a bit set that its bits
/// `start..end` (`start < end`) touch, with those bits, in order.
#[inline(always)]
pub(super) fn for_words(start: u64, end: u64, mut f: impl FnMut(u64, u64)) {
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

/// A run of rows of equal length `b > 0` of a loss, whose parents grow them.
#[derive(Clone, Copy)]
struct Run<'p> {
    /// First row of the run.
    a: u32,
    /// Length of its rows.
    b: u32,
    /// Number of rows.
    t: u32,
    /// Largest growth of a row.
    w: u32,
    /// Smallest growth of the first row (canonical parents only).
    first_min: u32,
    /// Tiles of `L` below the run.
    suffix_below: u32,
    /// Tiles of `L`.
    lt: u32,
    /// Growths covered: the pending levels.
    dmin: u32,
    dmax: u32,
    /// `pre[d]`: contribution of the rows above in a parent with `d` more tiles.
    pre: &'p [u64],
}

/// New rows below a loss `L` (its last corner) and the parents of one size.
struct Below {
    /// Rows of `L`: the first new row.
    k: u32,
    /// Number of rows that may be added.
    t: u32,
    /// Largest length of a new row.
    w: u32,
    /// Rank contribution of the rows of `L` in the parent.
    prefix: u64,
}

/// The sizes `d` of the parents of a loss to push (`d` tiles more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sizes {
    /// Every parent: `dmin ..= dmax`.
    dmin: u32,
    dmax: u32,
    /// The parents that keep the loss's top row (those of every corner
    /// below its top run): only these sizes, within the others (none when
    /// `keep.0 > keep.1`). A process owns such a parent only at a level
    /// whose owned top rows include the loss's.
    keep: (u32, u32),
}

impl Sizes {
    /// Every parent with `dmin ..= dmax` more tiles.
    fn all(dmin: u32, dmax: u32) -> Self {
        Sizes { dmin, dmax, keep: (dmin, dmax) }
    }
}

/// A span of the losses of a level to push ([`Ctx::loss_spans`]): a rank
/// range (one top row) and the sizes of the parents to push.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Span {
    range: std::ops::Range<u64>,
    /// The losses' top row (0 for a whole level).
    top_row: u32,
    sizes: Sizes,
}

impl Span {
    /// Whether this process owns only parents that grow the top row.
    fn top_run_only(&self) -> bool {
        self.sizes.keep.0 > self.sizes.keep.1
    }
}

impl<'a> Ctx<'a> {
    /// `copies[n]`: the thread copies of level `n` (for every thread but
    /// the first, or none; missing levels have none).
    fn new(
        ranking: &'a Ranking,
        by_suffix: &'a BySuffix,
        marks: &'a [Option<MappedBits>],
        base: &[u64],
        copies: &'a [Vec<MappedBits>],
    ) -> Self {
        let universe = ranking.universe();
        let workers = Workers::of_current_pool();
        let threads = workers.0.len();
        // The rule of [`Workers`]. A pool of one thread: no other thread
        // writes these bits meanwhile (each process of a cluster job holds
        // its own). A copied level: one writer per view.
        let alone = threads == 1;
        let copied = |n: usize| copies.get(n).is_some_and(|c| !c.is_empty());
        for c in copies.iter().filter(|c| !c.is_empty()) {
            assert_eq!(c.len() + 1, threads, "thread copies made for another pool");
        }
        let levels: Vec<Owned<'a>> = marks
            .iter()
            .zip(base)
            .enumerate()
            .map(|(n, (m, &base))| match m {
                Some(b) => Owned { words: b.words(), base, len: b.len(), plain: alone || copied(n) },
                None => Owned { words: &[], base, len: 0, plain: alone },
            })
            .collect();
        let views = if (0..levels.len()).any(copied) {
            (0..threads)
                .map(|t| {
                    let view = levels.iter().enumerate();
                    view.map(|(n, &level)| if t > 0 && copied(n) { Owned { words: copies[n][t - 1].words(), ..level } } else { level })
                        .collect()
                })
                .collect()
        } else {
            vec![levels]
        };
        // A held level of which this process owns nothing is not whole either.
        let whole = marks
            .iter()
            .zip(base)
            .enumerate()
            .all(|(n, (m, &base))| m.as_ref().is_none_or(|b| base == 0 && b.len() == ranking.size(n as u32)));
        let bound = views.len() > 1 || views[0].iter().any(|o| o.plain);
        // The first two rows of the first and the last rank owned of each level.
        let two_rows: Vec<((u32, u32), (u32, u32))> = if whole {
            Vec::new()
        } else {
            let mut rows = Vec::new();
            let mut two = |n: u32, r: u64| {
                ranking.unrank_into(n, r, &mut rows);
                (rows[0] as u32, rows.get(1).map_or(0, |&v| v as u32))
            };
            views[0]
                .iter()
                .enumerate()
                .map(|(n, o)| if o.len == 0 { ((1, 0), (0, 0)) } else { (two(n as u32, o.base), two(n as u32, o.base + o.len - 1)) })
                .collect()
        };
        // Their top rows.
        let top_rows: Vec<(u32, u32)> = two_rows.iter().map(|&((first, _), (last, _))| (first, last)).collect();
        let mut levels_of_top_row = Vec::new();
        for (m, &(first, last)) in top_rows.iter().enumerate() {
            let m = m as u32;
            if levels_of_top_row.len() <= last as usize {
                levels_of_top_row.resize(last as usize + 1, (1, 0));
            }
            for v in first..=last {
                let e = &mut levels_of_top_row[v as usize];
                *e = if e.0 > e.1 { (m, m) } else { (e.0.min(m), e.1.max(m)) };
            }
        }
        Ctx {
            top_rows,
            two_rows,
            levels_of_top_row,
            whole,
            workers,
            bound,
            enumerated: AtomicU64::new(0),
            ranking,
            sym: universe.is_symmetric(),
            max_rows: universe.rows.unwrap_or(u32::MAX),
            max_cols: universe.cols.unwrap_or(u32::MAX),
            boxed: universe.rows.is_some() && universe.cols.is_some(),
            by_suffix,
            views,
        }
    }

    /// The losses of level `n` that may have a parent this process owns
    /// with `n + dmin ..= n + dmax` tiles: rank ranges of level `n` (top
    /// rows, in order), each with the sizes `d` of the parents to push.
    /// A parent of a loss with top row `c` keeps that top row (every corner
    /// below the top run) or grows it by `1 ..= d` (the top run's corner),
    /// and this process owns no parent whose top row lies outside
    /// [`Ctx::top_rows`] at its level: the sizes of the parents that keep
    /// the top row ([`Sizes::keep`]) are those whose levels own top row `c`.
    /// One range of every size when every level is held whole.
    fn loss_spans(&self, n: u32, dmin: u32, dmax: u32) -> Vec<Span> {
        let size = self.ranking.size(n);
        if self.whole {
            return vec![Span { range: 0..size, top_row: 0, sizes: Sizes::all(dmin, dmax) }];
        }
        let mut spans = Vec::new();
        let mut start = 0;
        for c in 1..=n.min(self.ranking.max_part()) {
            let len = split::prefix_size(self.ranking, n, &[c as u8]);
            let range = start..start + len;
            start += len;
            if len == 0 {
                continue;
            }
            // A loss with top row `c` has at least ⌈n / c⌉ rows, and so
            // has each of its parents. In a symmetric universe only
            // canonical parents are marked (no more rows than the top row
            // is long): one that keeps the top row needs c ≥ ⌈(n + d) / c⌉
            // (c² ≥ n + d), one that grows it a top row of at least ⌈n / c⌉.
            let grow_min = if self.sym { n.div_ceil(c) } else { 0 };
            let keeps = |d: u32| {
                let (first, last) = self.top_rows[(n + d) as usize];
                (first..=last).contains(&c) && (!self.sym || c * c >= n + d)
            };
            let owns = |d: u32| {
                let (first, last) = self.top_rows[(n + d) as usize];
                let grown = ((c + 1).max(grow_min).max(first), (c + d).min(self.max_cols).min(last));
                keeps(d) || grown.0 <= grown.1
            };
            if let Some(lo) = (dmin..=dmax).find(|&d| owns(d)) {
                let hi = (lo..=dmax).rev().find(|&d| owns(d)).unwrap_or(lo);
                let keep = match (lo..=hi).find(|&d| keeps(d)) {
                    Some(klo) => (klo, (klo..=hi).rev().find(|&d| keeps(d)).unwrap_or(klo)),
                    None => (1, 0),
                };
                spans.push(Span { range, top_row: c, sizes: Sizes { dmin: lo, dmax: hi, keep } });
            }
        }
        debug_assert_eq!(start, size, "the top rows tile the level");
        spans
    }

    /// Writes the marks `marker` holds and counts the parents it enumerated.
    fn flush(&self, marker: &mut Marker<'a>) {
        marker.flush();
        self.enumerated.fetch_add(std::mem::take(&mut marker.steps), Ordering::Relaxed);
    }

    /// The view of the levels the current thread marks through: its index
    /// in the pool when [`Ctx::bound`] (checked once per scratch in
    /// [`Ctx::push_parents`]), else the one view, from any thread.
    #[inline]
    fn thread(&self) -> usize {
        if !self.bound {
            return 0;
        }
        rayon::current_thread_index().unwrap_or(NOT_A_WORKER)
    }

    /// Marks every parent of loss `l` (of `lt` tiles, rank `lrank`) of the
    /// sizes `sizes` (pending levels), counting the marks by level in `scratch`.
    fn push_parents(&self, l: &[u8], lt: u32, lrank: u64, sizes: Sizes, scratch: &mut Scratch<'a>) {
        let Sizes { dmin, dmax, .. } = sizes;
        if dmin > dmax {
            return;
        }
        self.bind(scratch);
        self.push_parents_of_runs(l, lt, lrank, sizes, scratch);
        // Differences back to counts (the marks of owned runs).
        let Scratch { counts, diff, .. } = scratch;
        let mut run = 0u64;
        for n in (lt + dmin) as usize..=(lt + dmax) as usize {
            run = run.wrapping_add(std::mem::take(&mut diff[n]));
            counts[n] = counts[n].wrapping_add(run);
        }
        diff[(lt + dmax) as usize + 1] = 0;
    }

    /// How the losses of a `kind` in `span` (of level `n`) are pushed.
    fn push_of(&self, span: &Span, kind: Losses, n: u32) -> Push {
        match kind {
            _ if self.whole => Push::Unranked,
            Losses::Any => Push::Unranked,
            Losses::Scanned if span.top_run_only() => Push::TopRun { first_min: 1 },
            Losses::Scanned => Push::Unranked,
            // (Its top row is shorter than its rows are many.)
            Losses::Conjugates { rows } if span.top_row < rows => {
                let first_min = rows - span.top_row;
                match self.top_run_growths(span.top_row, u32::MAX, first_min, n, span.sizes.dmin, span.sizes.dmax) {
                    Some(_) => Push::TopRun { first_min },
                    None => Push::Skip,
                }
            }
            Losses::Conjugates { .. } => Push::Skip,
        }
    }

    /// Pushes the loss of rank `r` in `span` of level `n` as `push` says
    /// ([`Ctx::push_of`]), unranking it into `rows` if need be.
    fn push_loss(&self, push: Push, span: &Span, n: u32, r: u64, rows: &mut Vec<u8>, scratch: &mut Scratch<'a>) {
        match push {
            Push::Skip => {}
            Push::TopRun { first_min } => self.push_top_run(span.top_row, first_min, n, r, span.sizes, scratch),
            Push::Unranked => {
                self.ranking.unrank_into(n, r, rows);
                self.push_parents(rows, n, r, span.sizes, scratch);
            }
        }
    }

    /// Whether this process owns every parent of a loss of `lt` tiles that
    /// keeps its first rows and adds `dmin ..= dmax` tiles, where the first
    /// two rows of those parents lie between `lo` and `hi`: at each of their
    /// levels, strictly between the first two rows of the first and the
    /// last rank owned, in rank order (lexicographic, [`Ctx::two_rows`];
    /// the owned ranks are contiguous). Their marks then need no test of
    /// ownership (the test and per-level count cost the 4 processes of a
    /// 110-tile run about a quarter more time a mark). Parents that keep
    /// the top row `c` lie between `(c, 0)` and `(c, u32::MAX)`: most
    /// losses of a share of many top rows; those that keep rows `(c, s)`
    /// at `(c, s)`: a top row the process owns only in part (at either end
    /// of its range) still has most of its parents' runs owned whole.
    fn keeps_owned(&self, lo: (u32, u32), hi: (u32, u32), lt: u32, dmin: u32, dmax: u32) -> bool {
        (dmin..=dmax).all(|d| {
            let (first, last) = self.two_rows[(lt + d) as usize];
            first < lo && hi < last
        })
    }

    /// Binds `scratch` to the current thread's view of the levels.
    fn bind(&self, scratch: &mut Scratch<'a>) {
        let thread = self.thread();
        if scratch.marker.thread != thread {
            // A scratch is made and used inside one rayon task, which runs
            // on one thread: it binds once. (Handed to another thread, its
            // queued plain marks would be written from there.)
            assert_eq!(scratch.marker.thread, UNBOUND, "a scratch marks from one thread only");
            if self.bound {
                self.workers.check(thread);
            }
            scratch.marker.thread = thread;
        }
    }

    /// [`Ctx::push_parents`] for a loss with top row `c` of which this
    /// process owns only parents that grow the top run, by `first_min` or
    /// more ([`Losses`]): from its rank alone. The run's rows are read off
    /// the rank (row `j` is `c` exactly when its contribution at `c` fits
    /// in what is left of the rank), one look-up a row of the run, where
    /// unranking takes about one a tile.
    fn push_top_run(&self, c: u32, first_min: u32, lt: u32, lrank: u64, sizes: Sizes, scratch: &mut Scratch<'a>) {
        let Sizes { dmin, dmax, .. } = sizes;
        debug_assert!(!self.whole && dmin >= 1);
        if dmin > dmax {
            return;
        }
        self.bind(scratch);
        let rk = self.ranking;
        // `acc`: the run's contribution to `lrank`; `s`: the tiles below it.
        let (mut acc, mut s, mut t) = (rk.contribution(lt, 0, c), lt - c, 1);
        while s >= c {
            let q = rk.contribution(s, t, c);
            if q > lrank - acc {
                break;
            }
            (acc, s, t) = (acc + q, s - c, t + 1);
        }
        let Scratch { marker, counts, zeros, growths, .. } = scratch;
        let w = self.max_cols.saturating_sub(c);
        let run = Run { a: 0, b: c, t, w, first_min, suffix_below: s, lt, dmin, dmax, pre: &zeros[..] };
        self.top_run_owned(&run, lrank - acc, growths, marker, counts);
    }

    /// The parents of loss `l` by its addable corners (docs/math.md section
    /// 4), corner by corner from the top: each run of equal rows, then the
    /// rows added below. Notation (the math's, and the locals'):
    ///
    /// | name | meaning |
    /// |---|---|
    /// | `l`, `lt`, `lrank` | the loss: its rows (top first), tiles and rank |
    /// | `k` | rows of `l` (`l_k = 0` below them) |
    /// | `d`, `dmin..=dmax` | tiles a parent adds; the pending levels are `lt + d` |
    /// | `a`, `b`, `t` | a run: its first row, its rows' length, its number of rows |
    /// | `w` | room right of the run under row `a − 1` (the column bound at `a = 0`) |
    /// | `μ` | the growths of the run's rows (a partition, at most `t` parts, each ≤ `w`) |
    /// | `suf[i]` | tiles of `l` in rows `i..` (a row's suffix, which its contribution depends on) |
    /// | `pre[d]` | Σ_{i<a} contribution(suf[i] + d, i, l[i]): the rows above the run, in a parent with `d` more tiles |
    /// | `pre_old`, `acc` | the same for `l` itself (`d = 0`), and the run's own contribution to `lrank` |
    /// | `tall` | a symmetric universe and `k > l[0]`: only growths of the top run are canonical |
    ///
    /// A parent's rank is `pre[d]` + the run's rows grown + the rows below
    /// the run (unchanged: their contribution is `lrank − pre_old − acc`).
    fn push_parents_of_runs(&self, l: &[u8], lt: u32, lrank: u64, sizes: Sizes, scratch: &mut Scratch<'a>) {
        // The sizes still to enumerate: below the top run, sizes whose
        // parents all fall outside this process's ranks are dropped.
        let Sizes { mut dmin, mut dmax, keep } = sizes;
        let rk = self.ranking;
        let k = l.len() as u32;
        let l0 = l[0] as u32;
        let tall = self.sym && k > l0;
        let Scratch { marker, suf, pre, counts, diff, zeros, growths } = scratch;
        suf.clear();
        suf.resize(k as usize + 1, 0);
        // A running sum: through `suf` itself each step would wait for the last store.
        let mut below = 0;
        for (s, &v) in suf.iter_mut().zip(l).rev() {
            below += v as u32;
            *s = below;
        }
        // Σ_{i<a} contribution(suf_i + d, i, l_i): zero above the top run (then
        // `zeros` stands in; a tall loss needs no more), set when advanced past it.
        if pre.len() <= dmax as usize {
            pre.resize(dmax as usize + 1, 0);
        }
        let mut pre_old = 0u64; // Σ_{i<a} contribution(suf_i, i, l_i)
        let mut a = 0u32;
        // Every parent of the runs enumerated is owned: no rank to test.
        let mut owned = self.whole;
        while a <= k {
            if a > 0 && !owned {
                // The parents that keep rows `0..a` of `l` and add `d` tiles
                // are the ranks `pre[d] ..` + the completions of the rows
                // below (ranks are lexicographic, top row first): one range
                // of level `lt + d`, nested in the range of every run above.
                // A size whose range misses the ranks this process owns
                // has no parent to mark here or at any corner below.
                let (cap, rows_left, s) = (l[a as usize - 1] as u32, self.max_rows.saturating_sub(a), suf[a as usize]);
                let outside = |d: u32| {
                    let level = &self.views[0][(lt + d) as usize];
                    let start = pre[d as usize];
                    let end = start + rk.q(s + d, rows_left, cap);
                    end <= level.base || start >= level.base + level.len
                };
                while dmin <= dmax && outside(dmin) {
                    dmin += 1;
                }
                while dmin <= dmax && outside(dmax) {
                    dmax -= 1;
                }
                if dmin > dmax {
                    break;
                }
            }
            if a == k {
                // The corner below the last row (`b = 0`): rows added below L.
                if !tall {
                    self.push_rows_below(l, lt, dmin, dmax, pre, marker, counts);
                }
                break;
            }
            let b = l[a as usize] as u32;
            let mut t = 1;
            while a + t < k && l[(a + t) as usize] as u32 == b {
                t += 1;
            }
            let w = if a == 0 { self.max_cols.saturating_sub(b) } else { l[a as usize - 1] as u32 - b };
            let first_min = if a == 0 && tall { (k - l0).max(1) } else { 1 };
            let canonical_ok = !(self.sym && a > 0 && tall);
            // Contribution of the run to rank(L).
            let mut acc = 0;
            for j in 0..t {
                let i = a + j;
                acc += rk.contribution(suf[i as usize], i, b);
            }
            if canonical_ok && first_min <= w.min(dmax) {
                let pre = if a == 0 { &zeros[..] } else { &pre[..] };
                let run = Run { a, b, t, w, first_min, suffix_below: suf[(a + t) as usize], lt, dmin, dmax, pre };
                // Rows below the run keep their contribution to rank(L).
                let below = lrank - pre_old - acc;
                // A run taller than its room, inside (its rows' contributions
                // then depend on their lengths and suffixes only), has far fewer
                // growths by columns than by rows.
                let by_columns = a > 0 && t > w && self.by_suffix.planes == 1 && !Self::many(&run, t - 1, 0, 0);
                if a == 0 && !self.whole {
                    self.top_run_owned(&run, below, growths, marker, counts);
                } else {
                    match (by_columns, owned) {
                        (true, true) => self.columns::<true>(&run, 0, t, run.suffix_below, below, 0, marker, diff),
                        (true, false) => self.columns::<false>(&run, 0, t, run.suffix_below, below, 0, marker, counts),
                        (false, true) => self.up_par::<true>(&run, t - 1, 0, 0, below, marker, diff),
                        (false, false) => self.up_par::<false>(&run, t - 1, 0, 0, below, marker, counts),
                    }
                }
            }
            if tall && a == 0 {
                // No later corner of a tall loss has canonical parents.
                break;
            }
            if a == 0 {
                // Every later corner keeps the top row.
                (dmin, dmax) = (dmin.max(keep.0), dmax.min(keep.1));
                if dmin > dmax {
                    break;
                }
                owned = owned || self.keeps_owned((l0, 0), (l0, u32::MAX), lt, dmin, dmax);
            }
            // Advance the prefixes over the run: row by row, or (one plane, a
            // run of three rows or more) as one block.
            let (top, bottom) = (suf[a as usize] as usize, suf[(a + t) as usize] as usize);
            if a == 0 {
                pre[dmin as usize..=dmax as usize].fill(0);
            }
            if self.by_suffix.planes == 1 && t >= 3 {
                let f = self.by_suffix.block(b);
                let (d0, d1) = (dmin as usize, dmax as usize);
                for (p, (hi, lo)) in pre[d0..].iter_mut().zip(f[top + d0..=top + d1].iter().zip(&f[bottom + d0..=bottom + d1])) {
                    *p += hi - lo;
                }
            } else {
                for j in 0..t {
                    let i = a + j;
                    let s = suf[i as usize] as usize;
                    let row = &self.by_suffix.row(i, b)[s + dmin as usize..=s + dmax as usize];
                    for (p, q) in pre[dmin as usize..].iter_mut().zip(row) {
                        *p += q;
                    }
                }
            }
            pre_old += acc;
            if !owned && a + t >= 2 && k >= 2 {
                // Every later corner keeps the first two rows.
                let rows = (l0, l[1] as u32);
                owned = self.keeps_owned(rows, rows, lt, dmin, dmax);
            }
            a += t;
        }
    }

    /// The parents of loss `l` (of `lt` tiles) made by adding rows below it
    /// (the corner `(k, 0)` of docs/math.md section 4: `μ` a partition of `d`
    /// with parts at most the last row, for every `d` in `dmin..=dmax`), up
    /// to the row bound (and, in a symmetric universe, to the canonical cut
    /// `rows ≤ l[0]`). `pre[d]` is the rank contribution of the rows of `l`
    /// in a parent with `d` more tiles.
    #[allow(clippy::too_many_arguments)]
    fn push_rows_below(&self, l: &[u8], lt: u32, dmin: u32, dmax: u32, pre: &[u64], marker: &mut Marker<'a>, counts: &mut [u64]) {
        let rk = self.ranking;
        let k = l.len() as u32;
        let mut room = self.max_rows.saturating_sub(k);
        if self.sym {
            room = room.min(l[0] as u32 - k);
        }
        let w = l[k as usize - 1] as u32;
        if room == 0 {
            return;
        }
        // The parents of size d, while there are any.
        let sizes = (dmin..=dmax).take_while(|&d| (room.min(d) as u64) * (w as u64) >= d as u64);
        let below = |d: u32| Below { k, t: room.min(d), w: w.min(d), prefix: pre[d as usize] };
        // (In a box the ranking counts partitions under every row bound.)
        let many = self.boxed && sizes.clone().map(|d| rk.q(d, room.min(d), w)).sum::<u64>() >= parallel_parents();
        if !many {
            for d in sizes {
                counts[(lt + d) as usize] += self.below(&below(d), d, lt + d, marker);
            }
            return;
        }
        // A loss with this many parents (a short, wide loss in a box) would
        // keep one thread busy while the others wait for the level to end:
        // its sizes go to every thread.
        let found: Vec<(u32, u64)> = sizes
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|d| {
                let mut marker = Marker::new(self.thread());
                let count = self.below(&below(d), d, lt + d, &mut marker);
                self.flush(&mut marker);
                (d, count)
            })
            .collect();
        for (d, count) in found {
            counts[(lt + d) as usize] += count;
        }
    }

    /// The growths of the top run (`a = 0`) when this process owns part of
    /// the levels. A parent that grows its top row by `g` has top row
    /// `b + g` and `g ..= t·g` more tiles (no other row of the run grows
    /// more than `g`); it may be owned only at a level whose owned top rows
    /// include `b + g` ([`Ctx::levels_of_top_row`]). The growths `g` and
    /// sizes that pass bound the enumeration: the rows below the top are
    /// not grown for parents all outside this process's ranks.
    fn top_run_owned(&self, r: &Run<'_>, below: u64, memo: &mut GrowthsMemo, marker: &mut Marker<'a>, counts: &mut [u64]) {
        let key = (r.b, r.first_min, r.lt, r.dmin, r.dmax);
        if memo.key != key {
            memo.key = key;
            memo.by_rows.clear();
        }
        let t = r.t as usize;
        if memo.by_rows.len() <= t {
            memo.by_rows.resize(t + 1, None);
        }
        let growths = *memo.by_rows[t].get_or_insert_with(|| self.top_run_growths(r.b, r.t, r.first_min, r.lt, r.dmin, r.dmax));
        let Some((g0, g1, dmin, dmax)) = growths else { return };
        let run = Run { w: g1.min(r.w), first_min: g0, dmin, dmax, ..*r };
        self.up_par::<false>(&run, r.t - 1, 0, 0, below, marker, counts);
    }

    /// The growths `g0 ..= g1` of a top run (`t` rows of length `b`, of a
    /// loss of `lt` tiles; growths by `first_min` or more, at most the
    /// column bound) whose parents with `dmin ..= dmax` more tiles this
    /// process may own, and the sizes of those parents, `lo ..= hi`
    /// ([`Ctx::top_run_owned`]); `None` when there are none.
    fn top_run_growths(&self, b: u32, t: u32, first_min: u32, lt: u32, dmin: u32, dmax: u32) -> TopRunGrowths {
        let (mut g0, mut g1, mut lo, mut hi) = (u32::MAX, 0, u32::MAX, 0);
        for g in first_min.max(1)..=self.max_cols.saturating_sub(b).min(dmax) {
            let Some(&(first, last)) = self.levels_of_top_row.get((b + g) as usize) else { break };
            // Sizes of the parents with this growth at the levels that own their top row.
            let from = dmin.max(g).max(first.saturating_sub(lt));
            let to = dmax.min(t.saturating_mul(g)).min(last.saturating_sub(lt));
            if first <= last && from <= to {
                (g0, g1, lo, hi) = (g0.min(g), g, lo.min(from), hi.max(to));
            }
        }
        (g0 <= g1).then_some((g0, g1, lo, hi))
    }

    /// Enumerates the growths `μ` of the rows of a run (`b > 0`) of every size
    /// `dmin ..= dmax` at once: rows `j ..= 1` of the run are chosen bottom up
    /// (their suffix, hence their contribution, is known then: it does not
    /// depend on the rows above), then the top row's growth runs over the
    /// levels. `sum` is the growth of the rows below `j`, `low` the growth
    /// of the row below, `acc` the contribution of every row below `j`.
    #[allow(clippy::too_many_arguments)]
    fn up<const OWNED: bool>(&self, r: &Run<'_>, j: u32, sum: u32, low: u32, acc: u64, marker: &mut Marker<'a>, counts: &mut [u64]) {
        if j == 0 {
            return self.top_row::<OWNED>(r, sum, low, acc, marker, counts);
        }
        let Some((lo, hi, base)) = Self::growths(r, j, sum, low) else { return };
        // Row j's contribution, its suffix and length growing with m.
        let mut own = self.by_suffix.diagonal(r.a + j, r.b + lo.max(1), base + lo.max(1));
        for m in lo..=hi {
            let c = if m == 0 { self.ranking.contribution(base, r.a + j, r.b) } else { *own.next().expect("within the table") };
            if j == 1 {
                // The last row before the top: inlined, most calls end here.
                self.top_row::<OWNED>(r, sum + m, m, acc + c, marker, counts);
            } else {
                self.up::<OWNED>(r, j - 1, sum + m, m, acc + c, marker, counts);
            }
        }
    }

    /// The growths `lo..=hi` of row `j > 0` of a run in [`Ctx::up`] (rows
    /// below it grew `sum` in all, the row below `low`), and the row's
    /// suffix less its growth; `None` when there are none. Rows `0 ..= j`
    /// all grow by at least `m`, and the run's first row by at least
    /// `first_min` as well; rows above `j` by at most `w` each, and the
    /// parent must reach the first level held (the levels below it are
    /// decided when an epoch or window opens).
    #[inline(always)]
    fn growths(r: &Run<'_>, j: u32, sum: u32, low: u32) -> Option<(u32, u32, u32)> {
        let room = (r.dmax - sum).checked_sub(r.first_min)?;
        let hi = r.w.min((r.dmax - sum) / (j + 1)).min(room / j);
        let lo = low.max(r.dmin.saturating_sub(sum.saturating_add(j.saturating_mul(r.w))));
        (lo <= hi).then_some((lo, hi, r.suffix_below + (r.t - j) * r.b + sum))
    }

    /// The top row of a run in [`Ctx::up`]: its growth runs over the levels.
    #[inline(always)]
    fn top_row<const OWNED: bool>(&self, r: &Run<'_>, sum: u32, low: u32, acc: u64, marker: &mut Marker<'a>, counts: &mut [u64]) {
        let mut lo = low.max(r.first_min).max(1).max(r.dmin.saturating_sub(sum));
        let mut hi = r.w.min(r.dmax - sum);
        if !OWNED && r.a == 0 {
            // The top row of the parent that grows it by `g` is `b + g`, at
            // level `lt + sum + g`: drop the growths at either end whose top
            // row lies outside the top rows this process owns there.
            let outside = |g: u32| {
                let (first, last) = self.top_rows[(r.lt + sum + g) as usize];
                !(first..=last).contains(&(r.b + g))
            };
            while lo <= hi && outside(lo) {
                lo += 1;
            }
            while lo <= hi && outside(hi) {
                hi -= 1;
            }
        }
        if lo > hi {
            return;
        }
        let base = r.suffix_below + r.t * r.b + sum; // suffix of the top row, less its growth
        let (len, d0, n0) = ((hi - lo + 1) as usize, (sum + lo) as usize, (r.lt + sum + lo) as usize);
        let grown = self.by_suffix.diagonal(r.a, r.b + lo, base + lo);
        let ranks = r.pre[d0..d0 + len].iter().zip(grown).map(|(pre, own)| pre + own + acc);
        self.mark_levels::<OWNED>(n0, len, ranks, marker, counts);
    }

    /// Marks one parent in each of the levels `n0 .. n0 + len`, of the
    /// given ranks, and counts them (in `counts`, as differences when
    /// `OWNED`: every rank given is owned, none to test; see
    /// [`Ctx::keeps_owned`]).
    #[inline(always)]
    fn mark_levels<const OWNED: bool>(
        &self,
        n0: usize,
        len: usize,
        ranks: impl Iterator<Item = u64>,
        marker: &mut Marker<'a>,
        counts: &mut [u64],
    ) {
        let levels = &self.views[marker.thread][n0..n0 + len];
        marker.steps += len as u64;
        if OWNED {
            counts[n0] = counts[n0].wrapping_add(1);
            counts[n0 + len] = counts[n0 + len].wrapping_sub(1);
            marker.set_words(levels.iter().zip(ranks).map(|(level, rank)| {
                debug_assert!(level.bit(rank).is_some(), "an owned parent");
                (level, rank - level.base)
            }));
            return;
        }
        for ((rank, level), count) in ranks.zip(levels).zip(&mut counts[n0..n0 + len]) {
            if let Some(i) = level.bit(rank) {
                marker.set_word(level, i);
                *count += 1;
            }
        }
    }

    /// [`Ctx::up`], with the growths of row `j` shared among threads when
    /// they lead to many parents (the run of an L-shaped loss in a box, or
    /// the arm of an equal-armed hook, has about `C(2w, w)`: one thread
    /// alone would hold up its level).
    #[allow(clippy::too_many_arguments)]
    fn up_par<const OWNED: bool>(&self, r: &Run<'_>, j: u32, sum: u32, low: u32, acc: u64, marker: &mut Marker<'a>, counts: &mut [u64]) {
        if !Self::many(r, j, sum, low) {
            return self.up::<OWNED>(r, j, sum, low, acc, marker, counts);
        }
        let Some((lo, hi, base)) = Self::growths(r, j, sum, low) else { return };
        let found = (lo..=hi)
            .into_par_iter()
            .map(|m| {
                let c = if m == 0 {
                    self.ranking.contribution(base, r.a + j, r.b)
                } else {
                    self.ranking.contribution(base + m, r.a + j, r.b + m)
                };
                let (mut marker, mut counts) = (Marker::new(self.thread()), vec![0; counts.len()]);
                self.up_par::<OWNED>(r, j - 1, sum + m, m, acc + c, &mut marker, &mut counts);
                self.flush(&mut marker);
                counts
            })
            .reduce(Vec::new, add_counts);
        for (x, y) in counts.iter_mut().zip(found) {
            *x = x.wrapping_add(y);
        }
    }

    /// Whether the growths of rows `0 ..= j` of a run in [`Ctx::up`] (each
    /// between `low` and `w`: at most `C(j + 1 + w − low, j + 1)`) are many
    /// enough to share among threads.
    fn many(r: &Run<'_>, j: u32, sum: u32, low: u32) -> bool {
        let room = r.w.min(r.dmax - sum).saturating_sub(low);
        // C(j + 1 + room, j + 1) < 2^(j + 1 + room): most runs stop at this test.
        if j == 0 || (j + 1 + room < 64 && 1u64 << (j + 1 + room) < parallel_parents()) {
            return false;
        }
        (1..=j + 1).map(|i| (room as f64 + i as f64) / i as f64).product::<f64>() >= parallel_parents() as f64
    }

    /// The growths `μ` of an inner run (`a > 0`, one plane), enumerated by
    /// columns: `ν_c`, the number of its rows grown by more than `c`, for
    /// `c = 0, 1, …, w − 1` (non-increasing, `ν_0 ≥ 1`). Once `ν_0 ..= ν_{c−1}`
    /// are chosen, the rows `ν_{c−1} ..` of the run are known; those grown
    /// by exactly `c` are a block whose contributions are two look-ups of
    /// [`BySuffix::blocks`]. `prev = ν_{c−1}` (`t` for `c = 0`), `sy` the
    /// suffix at row `prev` of the run, `fixed` the contribution of every
    /// row from there down, `sum = Σ ν` so far (the tiles added).
    #[allow(clippy::too_many_arguments)]
    fn columns<const OWNED: bool>(
        &self,
        r: &Run<'_>,
        c: u32,
        prev: u32,
        sy: u32,
        fixed: u64,
        sum: u32,
        marker: &mut Marker<'a>,
        counts: &mut [u64],
    ) {
        let first = u32::from(c == 0);
        let v = r.b + c; // the length of rows grown by exactly c
        let f = self.by_suffix.block(v);
        let hi = prev.min(r.dmax - sum);
        if c + 1 < r.w {
            for h in first..=hi {
                let sh = sy + (prev - h) * v;
                let fixed = fixed + f[sh as usize] - f[sy as usize];
                self.columns::<OWNED>(r, c + 1, h, sh, fixed, sum + h, marker, counts);
            }
            return;
        }
        // The last column: `h = ν_{w−1}` rows grown by `w` on top of `prev − h`
        // rows grown by `w − 1`; the parent has `sum + h` more tiles.
        let lo = first.max(r.dmin.saturating_sub(sum));
        if lo > hi {
            return;
        }
        let top = self.by_suffix.block(v + 1);
        let k = fixed.wrapping_sub(f[sy as usize]); // the rank is exact modulo 2^64
        let (len, n0) = ((hi - lo + 1) as usize, (r.lt + sum + lo) as usize);
        let pre = &r.pre[(sum + lo) as usize..(sum + hi) as usize + 1];
        let (mut sh, mut s0) = (sy + (prev - lo) * v, sy + prev * v + lo);
        let ranks = pre.iter().map(|p| {
            let rank = (p + f[sh as usize] + top[s0 as usize] - top[sh as usize]).wrapping_add(k);
            sh = sh.wrapping_sub(v);
            s0 += 1;
            rank
        });
        self.mark_levels::<OWNED>(n0, len, ranks, marker, counts);
    }

    /// Enumerates the new rows `μ` (|μ| = d) below a loss, top row first,
    /// and marks each parent in level `n`; returns the number of marks.
    fn below(&self, c: &Below, d: u32, n: u32, marker: &mut Marker<'a>) -> u64 {
        let level = self.views[marker.thread][n as usize];
        let mut count = 0;
        if level.len > 0 {
            self.grow(c, level, marker, 0, d, c.w, c.prefix, &mut count);
        }
        count
    }

    #[allow(clippy::too_many_arguments)]
    fn grow(&self, c: &Below, level: Owned<'a>, marker: &mut Marker<'a>, j: u32, left: u32, prev: u32, acc: u64, count: &mut u64) {
        let rows_here = c.t - j; // rows that may still be added, this one included
                                 // No bound cuts the completions of `left` tiles with parts <= prev:
                                 // they are one contiguous rank range (clipped to the owned ranks).
                                 // Nor when the bound (rows unbounded: the canonical cut) leaves one
                                 // or two rows too few: the completions with too many rows are then
                                 // `1^left` and `2 1^(left−2)`, the first two ranks (as in `Ranking::walk`).
        let skip = if rows_here >= left {
            Some(0)
        } else if left - rows_here <= 2 && self.by_suffix.planes == 1 {
            Some((left - rows_here).min(prev) as u64)
        } else {
            None
        };
        if let Some(skip) = skip {
            let n = self.ranking.q(left, left, prev);
            let (start, end) = ((acc + skip).max(level.base), (acc + n).min(level.base + level.len));
            if start < end {
                marker.steps += end - start;
                marker.set_range(&level, start - level.base, end - level.base);
                *count += end - start;
            }
            return;
        }
        let lo = left.div_ceil(rows_here);
        let hi = prev.min(left);
        let i = c.k + j;
        for m in lo..=hi {
            let r = acc + self.ranking.contribution(left, i, m);
            let rest = left - m;
            if rest == 0 || rows_here == 2 {
                // With one row left to add, the `rest` tiles are that row
                // (no longer than this one: `m >= left / 2 >= rest`).
                let r = if rest == 0 { r } else { r + self.ranking.contribution(rest, i + 1, rest) };
                marker.steps += 1;
                if let Some(i) = level.bit(r) {
                    marker.set_word(&level, i);
                    *count += 1;
                }
            } else {
                self.grow(c, level, marker, j + 1, rest, m, r, count);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Position, Universe};
    use std::collections::BTreeSet;

    /// The exchange's framing: every non-empty set comes back at its index
    /// (empty ones as empty sets, none past the last non-empty one).
    #[test]
    fn gathered_sets_come_back_at_their_indices() {
        let set = |ranks: &[u64]| ranks.iter().copied().collect::<RoaringTreemap>();
        let mine = [set(&[0, 5, 1 << 40]), set(&[]), set(&[7]), set(&[3, (1 << 33) + 1]), set(&[])];
        let got = all_gather_sets(&crate::cluster::Solo, &mine);
        assert_eq!(got, mine[..4].to_vec());
        assert!(all_gather_sets(&crate::cluster::Solo, &[set(&[]), set(&[])]).is_empty());
    }

    /// Solves every level of `ranking` (`in_memory::sieve_levels`) on a
    /// pool of `threads` threads with thread copies of at most `share` of
    /// the marks: the losses, the most bytes the copies held, and whether
    /// every level's first view marked without atomics.
    fn solve_on(ranking: &Ranking, threads: usize, share: f64) -> (Vec<Vec<u64>>, u64, bool) {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
            let mut f = Frontier::new(ranking, 0, &crate::cluster::Solo, Holding::SOLO).unwrap();
            f.copy_share = share;
            let plain = Ctx::new(ranking, &f.by_suffix, &f.marks, &f.base, &f.copies).views[0].iter().all(|o| o.plain);
            let mut copied = 0;
            let losses =
                super::super::in_memory::sieve_levels(ranking, f, |f| copied = copied.max(bit_bytes(f.copies.iter().flatten()))).unwrap();
            (losses, copied, plain)
        })
    }

    /// A pool of one thread marks with plain loads and stores; two threads
    /// with atomic ORs, or in thread copies of the levels (some or all of
    /// them) ORed together before the scan: the same losses every way (a
    /// tile count, a box, a column bound).
    #[test]
    fn one_thread_or_thread_copies_find_the_losses_of_shared_atomics() {
        for u in [Universe::tiles(45), Universe::boxed(8, 11), Universe { rows: None, cols: Some(6), tiles: Some(40) }] {
            let ranking = Ranking::new(&u).unwrap();
            let (one, copied_1, plain_1) = solve_on(&ranking, 1, 1.0);
            assert!(plain_1 && copied_1 == 0, "{u:?}");
            assert!(one.iter().map(Vec::len).sum::<usize>() > 100, "{u:?}");
            let (shared, copied_0, plain_0) = solve_on(&ranking, 2, 0.0);
            assert!(!plain_0 && copied_0 == 0, "{u:?}");
            assert_eq!(one, shared, "{u:?}");
            let mut made = Vec::new();
            for share in [0.3, 4.0] {
                let (copies, copied, _) = solve_on(&ranking, 2, share);
                assert_eq!(one, copies, "{u:?} share {share}");
                made.push(copied);
            }
            assert!(0 < made[0] && made[0] < made[1], "{u:?}: copies of {made:?} bytes");
        }
    }

    /// Pushes every position of every level (as if each were a loss) with
    /// the levels held whole, or cut in two shares, and checks the marks
    /// against the parents found by trying every bite of every position:
    /// the enumeration by rows, by columns, by blocks and by ranges at once.
    /// A context whose marks depend on the thread (here plain marks, made
    /// in a pool of one) refuses to mark from a thread outside that pool,
    /// or from a worker of another pool; the same context marks on its
    /// own worker.
    #[test]
    fn marks_through_thread_views_only_on_the_pool_they_were_made_for() {
        let ranking = Ranking::new(&Universe::tiles(20)).unwrap();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let f = one.install(|| Frontier::new(&ranking, 0, &crate::cluster::Solo, Holding::SOLO).unwrap());
        let ctx = one.install(|| Ctx::new(&ranking, &f.by_suffix, &f.marks, &f.base, &f.copies));
        assert!(ctx.bound && ctx.views[0].iter().all(|o| o.plain));
        let loss = ranking.unrank(2, 1).unwrap();
        let push = || {
            let mut scratch = Scratch::new(ranking.max_tiles());
            ctx.push_parents(loss.rows(), 2, 1, Sizes::all(1, 18), &mut scratch);
            scratch.marker.flush();
        };
        let outside = std::panic::catch_unwind(std::panic::AssertUnwindSafe(push));
        assert!(outside.is_err(), "marked from a thread outside the pool");
        let other = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| two.install(push)));
        assert!(other.is_err(), "marked from another pool's worker");
        one.install(push);
    }

    #[test]
    fn pushes_mark_exactly_the_parents() {
        // In a pool of one: the marks are plain, on the pool's worker.
        rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(pushes_mark_exactly_the_parents_here);
    }

    fn pushes_mark_exactly_the_parents_here() {
        let universes = [
            Universe::tiles(16),                                     // symmetric: canonical parents only
            Universe { rows: None, cols: Some(5), tiles: Some(15) }, // one plane, not symmetric
            Universe { rows: Some(4), cols: None, tiles: Some(15) }, // rows bounded: by rows only
            Universe::boxed(5, 6),
        ];
        for u in universes {
            let ranking = Ranking::new(&u).unwrap();
            let top = ranking.max_tiles();
            let by_suffix = BySuffix::new(&ranking);
            let positions: Vec<Vec<Position>> =
                (0..=top).map(|n| (0..ranking.size(n)).map(|r| ranking.unrank(n, r).unwrap()).collect()).collect();
            // Shares: every level whole; the second half of every level; or
            // (as a process sees the small levels of a box late in a run)
            // odd levels whole and nothing of the even ones; the second or
            // the last quarter of every level; its middle half (most top
            // rows strictly inside: parents owned without a test).
            for split in [0, 1, 2, 3, 4, 5] {
                for n in 1..top {
                    for (lrank, l) in positions[n as usize].iter().enumerate() {
                        // Pushed as an unknown loss (a table read back), and as
                        // a scanned one or the conjugate of one.
                        let known = if u.is_symmetric() && l.height() > l.width() {
                            Losses::Conjugates { rows: l.height() }
                        } else {
                            Losses::Scanned
                        };
                        for kind in [Losses::Any, known] {
                            // The shares: the first or the second half of every level.
                            let mut marks = Vec::new();
                            let mut base = Vec::new();
                            for m in 0..=top {
                                let size = ranking.size(m);
                                let (b, len) = match split {
                                    0 => (0, size),
                                    1 => (size / 2, size - size / 2),
                                    3 => (size / 4, size / 2 - size / 4),
                                    4 => (size - size / 4, size / 4),
                                    5 => (size / 4, size - size / 4 - size / 4),
                                    _ => {
                                        if m % 2 == 1 {
                                            (0, size)
                                        } else {
                                            (size, 0)
                                        }
                                    }
                                };
                                marks.push((m > n).then(|| MappedBits::anonymous(len).unwrap()));
                                base.push(b);
                            }
                            let ctx = Ctx::new(&ranking, &by_suffix, &marks, &base, &[]);
                            let whole = (n + 1..=top)
                                .all(|m| base[m as usize] == 0 && marks[m as usize].as_ref().unwrap().len() == ranking.size(m));
                            assert_eq!(ctx.whole, whole, "{u:?} split {split}");
                            // Pushed as `push_decided` pushes it: only if a span of
                            // losses holds it, with that span's sizes.
                            let spans = ctx.loss_spans(n, 1, top - n);
                            let mut scratch = Scratch::new(top);
                            if let Some(span) = spans.iter().find(|s| s.range.contains(&(lrank as u64))) {
                                let push = ctx.push_of(span, kind, n);
                                assert!(!whole || push == Push::Unranked);
                                ctx.push_loss(push, span, n, lrank as u64, &mut Vec::new(), &mut scratch);
                            }
                            scratch.marker.flush();
                            let mut got = BTreeSet::new();
                            for m in n + 1..=top {
                                let bits = marks[m as usize].as_ref().unwrap();
                                for i in 0..bits.len() {
                                    if bits.get(i) {
                                        got.insert((m, i + base[m as usize]));
                                    }
                                }
                                let owned = got.iter().filter(|&&(level, _)| level == m).count() as u64;
                                assert_eq!(scratch.counts[m as usize], owned, "{u:?} {l:?}: marks counted at level {m}");
                            }
                            let want: BTreeSet<(u32, u64)> = (n + 1..=top)
                                .flat_map(|m| positions[m as usize].iter().enumerate().map(move |(r, p)| (m, r as u64, p)))
                                .filter(|(m, r, p)| {
                                    (!u.is_symmetric() || p.height() <= p.width())
                                        && *r >= base[*m as usize]
                                        && *r < base[*m as usize] + marks[*m as usize].as_ref().unwrap().len()
                                        && p.moves().iter().any(|(_, child)| child == l)
                                })
                                .map(|(m, r, _)| (m, r))
                                .collect();
                            assert_eq!(got, want, "{u:?}, split {split}, {kind:?}: the parents of {l:?}");
                        }
                    }
                }
            }
        }
    }
}
