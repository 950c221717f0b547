//! The parent enumeration: every parent of a loss that this process owns,
//! at every pending level at once (the addable-corner rule of the module
//! documentation), marked through this thread's view.

use super::marks::{MarkView, Marker, Mode, Workers, NOT_A_WORKER, UNBOUND};
use super::suffix::BySuffix;
use super::*;

pub(super) struct Parents<'a> {
    pub(super) ranking: &'a Ranking,
    pub(super) sym: bool,
    pub(super) max_rows: u32,
    pub(super) max_cols: u32,
    /// Rows and columns bounded: a box.
    pub(super) boxed: bool,
    pub(super) by_suffix: &'a BySuffix,
    /// Each thread's view of this process's marks of each level (empty for
    /// decided levels): the level's bits, or for a level with thread copies
    /// ([`Frontier::copy_levels`]) the thread's own. One view, the levels'
    /// bits, when there are no copies. A thread marks through its view.
    pub(super) views: Vec<Vec<MarkView<'a>>>,
    /// The workers of the pool the context was made in: the threads that
    /// may mark through [`Parents::views`] when [`Parents::bound`].
    pub(super) workers: Workers,
    /// Some marks depend on the thread (a view per thread, or plain marks
    /// on a pool of one): only the pool's workers may mark, each through
    /// its own view.
    pub(super) bound: bool,
    /// Parents enumerated by the markers flushed ([`Parents::flush`]).
    pub(super) enumerated: AtomicU64,
    /// By level, unless [`Parents::whole`]: the top rows of the first and the
    /// last rank this process owns (`(1, 0)`: none). Ranks are ordered by
    /// the top row first, so a parent whose top row lies outside is not
    /// owned ([`Parents::top_row`] skips it). The top rows of [`Parents::two_rows`],
    /// apart: half the bytes in the enumeration's innermost test.
    pub(super) top_rows: Vec<(u32, u32)>,
    /// By level, unless [`Parents::whole`]: the first two rows (the second 0
    /// where there is none) of the first and the last rank this process
    /// owns ([`Parents::keeps_owned`]).
    pub(super) two_rows: Vec<((u32, u32), (u32, u32))>,
    /// By top row `v`, unless [`Parents::whole`]: the first and the last level
    /// (`(1, 0)`: none) whose owned top rows ([`Parents::top_rows`]) include `v`;
    /// no parent with top row `v` is owned outside them.
    pub(super) levels_of_top_row: Vec<(u32, u32)>,
    /// Every held level is held whole (one process): no parent needs the
    /// test of ownership, and the marks of a top row's loop are counted at
    /// once ([`PushScratch::diff`]).
    pub(super) whole: bool,
    /// A run with at least about this many parents has them marked level
    /// by level, in rank order ([`Parents::by_levels`]; 0: every run, for
    /// tests).
    pub(super) by_levels_min: u64,
}

/// A run with at least about this many parents is marked level by level
/// ([`Parents::by_levels`]): in a square box, the equal-armed hooks, the
/// tall `[2^(c−1), 1]` and a few others. Not tuned: it only keeps the
/// patterns' making (a tenth of a second at most) to runs that repay it.
const BY_LEVELS_FROM: u64 = 1 << 24;

/// Per-task buffers of [`Parents::push_parents`] (kept to avoid allocating per
/// loss) and the marks it pushed into each level.
pub(super) struct PushScratch<'a, M: Mode> {
    pub(super) marker: Marker<'a, M>,
    pub(super) suf: Vec<u32>,
    /// `pre[d]`: rank contribution of the rows above the current corner in a
    /// parent with `d` more tiles.
    pub(super) pre: Vec<u64>,
    /// Marks pushed, by level.
    pub(super) counts: Vec<u64>,
    /// The marks of the runs of one loss as differences (`diff[n] −
    /// diff[n − 1]`, wrapping) where every parent is owned (levels held
    /// whole, or [`Parents::keeps_owned`]): a top row's loop adds one mark to
    /// each of a range of levels.
    pub(super) diff: Vec<u64>,
    /// The prefix contributions above the top run: none.
    pub(super) zeros: Vec<u64>,
    /// [`Parents::top_run_growths`] of the top runs pushed last, by their rows.
    pub(super) growths: GrowthsMemo,
}

/// The growths of top runs ([`Parents::top_run_growths`]) of one top row,
/// level, smallest growth and sizes (`key`), by the run's number of rows:
/// the losses of a span share all but the last, and the loop over the
/// growths takes one step a pending level.
#[derive(Default)]
pub(super) struct GrowthsMemo {
    pub(super) key: (u32, u32, u32, u32, u32),
    pub(super) by_rows: Vec<Option<TopRunGrowths>>,
}

/// [`Parents::top_run_growths`]: the growths `g0 ..= g1` and sizes `lo ..= hi`,
/// if any.
pub(super) type TopRunGrowths = Option<(u32, u32, u32, u32)>;

impl<M: Mode> PushScratch<'_, M> {
    pub(super) fn new(top: u32) -> Self {
        PushScratch {
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

/// A run of rows of equal length `b > 0` of a loss, whose parents grow them.
#[derive(Clone, Copy)]
pub(super) struct Run<'p> {
    /// First row of the run.
    pub(super) a: u32,
    /// Length of its rows.
    pub(super) b: u32,
    /// Number of rows.
    pub(super) t: u32,
    /// Largest growth of a row.
    pub(super) w: u32,
    /// Smallest growth of the first row (canonical parents only).
    pub(super) first_min: u32,
    /// Tiles of `L` below the run.
    pub(super) suffix_below: u32,
    /// Tiles of `L`.
    pub(super) lt: u32,
    /// Growths covered: the pending levels.
    pub(super) dmin: u32,
    pub(super) dmax: u32,
    /// `pre[d]`: contribution of the rows above in a parent with `d` more tiles.
    pub(super) pre: &'p [u64],
}

/// New rows below a loss `L` (its last corner) and the parents of one size.
pub(super) struct Below {
    /// Rows of `L`: the first new row.
    pub(super) k: u32,
    /// Number of rows that may be added.
    pub(super) t: u32,
    /// Largest length of a new row.
    pub(super) w: u32,
    /// Rank contribution of the rows of `L` in the parent.
    pub(super) prefix: u64,
}

/// The sizes `d` of the parents of a loss to push (`d` tiles more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sizes {
    /// Every parent: `dmin ..= dmax`.
    pub(super) dmin: u32,
    pub(super) dmax: u32,
    /// The parents that keep the loss's top row (those of every corner
    /// below its top run): only these sizes, within the others (none when
    /// `keep.0 > keep.1`). A process owns such a parent only at a level
    /// whose owned top rows include the loss's.
    pub(super) keep: (u32, u32),
}

impl Sizes {
    /// Every parent with `dmin ..= dmax` more tiles.
    pub(super) fn all(dmin: u32, dmax: u32) -> Self {
        Sizes { dmin, dmax, keep: (dmin, dmax) }
    }
}

/// A span of the losses of a level to push ([`Parents::loss_spans`]): a rank
/// range (one top row) and the sizes of the parents to push.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) range: std::ops::Range<u64>,
    /// The losses' top row (0 for a whole level).
    pub(super) top_row: u32,
    pub(super) sizes: Sizes,
}

impl Span {
    /// Whether this process owns only parents that grow the top row.
    pub(super) fn top_run_only(&self) -> bool {
        self.sizes.keep.0 > self.sizes.keep.1
    }
}

impl<'a> Parents<'a> {
    /// `copies[n]`: the thread copies of level `n` (for every thread but
    /// the first, or none; missing levels have none).
    pub(super) fn new(
        ranking: &'a Ranking,
        by_suffix: &'a BySuffix,
        marks: &'a [Option<MappedBits>],
        twice: &'a [Option<MappedBits>],
        base: &[u64],
        copies: &'a [Vec<MappedBits>],
    ) -> Self {
        let universe = ranking.universe();
        let (views, workers, bound) = super::marks::views(marks, twice, base, copies);
        // A held level of which this process owns nothing is not whole either.
        let whole = marks
            .iter()
            .zip(base)
            .enumerate()
            .all(|(n, (m, &base))| m.as_ref().is_none_or(|b| base == 0 && b.len() == ranking.size(n as u32)));
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
        Parents {
            top_rows,
            two_rows,
            levels_of_top_row,
            whole,
            by_levels_min: BY_LEVELS_FROM,
            workers,
            bound,
            enumerated: AtomicU64::new(0),
            ranking,
            sym: universe.is_symmetric(),
            max_rows: universe.rows.unwrap_or(u32::MAX),
            max_cols: universe.cols.unwrap_or(u32::MAX),
            boxed: universe.is_box(),
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
    /// [`Parents::top_rows`] at its level: the sizes of the parents that keep
    /// the top row ([`Sizes::keep`]) are those whose levels own top row `c`.
    /// One range of every size when every level is held whole.
    pub(super) fn loss_spans(&self, n: u32, dmin: u32, dmax: u32) -> Vec<Span> {
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

    /// Panics unless marks of mode `M` fit the levels held: second bits
    /// beside every level's bits if and only if `M` counts ([`Mode`]).
    pub(super) fn check_mode<M: Mode>(&self) {
        for v in self.views.iter().flatten().filter(|v| !v.words.is_empty()) {
            assert_eq!(v.twice.len() == v.words.len(), M::COUNTS, "marks that count moves if and only if the levels hold second bits");
        }
    }

    /// Writes the marks `marker` holds and counts the parents it enumerated.
    pub(super) fn flush<M: Mode>(&self, marker: &mut Marker<'a, M>) {
        marker.flush();
        self.enumerated.fetch_add(std::mem::take(&mut marker.steps), Ordering::Relaxed);
    }

    /// The view of the levels the current thread marks through: its index
    /// in the pool when [`Parents::bound`] (checked once per scratch in
    /// [`Parents::push_parents`]), else the one view, from any thread.
    #[inline]
    pub(super) fn thread(&self) -> usize {
        if !self.bound {
            return 0;
        }
        rayon::current_thread_index().unwrap_or(NOT_A_WORKER)
    }

    /// Marks every parent of loss `l` (of `lt` tiles, rank `lrank`) of the
    /// sizes `sizes` (pending levels), counting the marks by level in `scratch`.
    pub(super) fn push_parents<M: Mode>(&self, l: &[u8], lt: u32, lrank: u64, sizes: Sizes, scratch: &mut PushScratch<'a, M>) {
        let Sizes { dmin, dmax, .. } = sizes;
        if dmin > dmax {
            return;
        }
        self.bind(scratch);
        self.push_parents_of_runs(l, lt, lrank, sizes, scratch);
        // Differences back to counts (the marks of owned runs).
        let PushScratch { counts, diff, .. } = scratch;
        let mut run = 0u64;
        for n in (lt + dmin) as usize..=(lt + dmax) as usize {
            run = run.wrapping_add(std::mem::take(&mut diff[n]));
            counts[n] = counts[n].wrapping_add(run);
        }
        diff[(lt + dmax) as usize + 1] = 0;
    }

    /// How the losses of a `kind` in `span` (of level `n`) are pushed.
    pub(super) fn push_of(&self, span: &Span, kind: Losses, n: u32) -> Push {
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
    /// ([`Parents::push_of`]), unranking it into `rows` if need be.
    pub(super) fn push_loss<M: Mode>(&self, push: Push, span: &Span, n: u32, r: u64, rows: &mut Vec<u8>, scratch: &mut PushScratch<'a, M>) {
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
    /// last rank owned, in rank order (lexicographic, [`Parents::two_rows`];
    /// the owned ranks are contiguous). Their marks then need no test of
    /// ownership (the test and per-level count cost the 4 processes of a
    /// 110-tile run about a quarter more time a mark). Parents that keep
    /// the top row `c` lie between `(c, 0)` and `(c, u32::MAX)`: most
    /// losses of a share of many top rows; those that keep rows `(c, s)`
    /// at `(c, s)`: a top row the process owns only in part (at either end
    /// of its range) still has most of its parents' runs owned whole.
    pub(super) fn keeps_owned(&self, lo: (u32, u32), hi: (u32, u32), lt: u32, dmin: u32, dmax: u32) -> bool {
        (dmin..=dmax).all(|d| {
            let (first, last) = self.two_rows[(lt + d) as usize];
            first < lo && hi < last
        })
    }

    /// Binds `scratch` to the current thread's view of the levels.
    pub(super) fn bind<M: Mode>(&self, scratch: &mut PushScratch<'a, M>) {
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

    /// [`Parents::push_parents`] for a loss with top row `c` of which this
    /// process owns only parents that grow the top run, by `first_min` or
    /// more ([`Losses`]): from its rank alone. The run's rows are read off
    /// the rank (row `j` is `c` exactly when its contribution at `c` fits
    /// in what is left of the rank), one look-up a row of the run, where
    /// unranking takes about one a tile.
    pub(super) fn push_top_run<M: Mode>(
        &self,
        c: u32,
        first_min: u32,
        lt: u32,
        lrank: u64,
        sizes: Sizes,
        scratch: &mut PushScratch<'a, M>,
    ) {
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
        let PushScratch { marker, counts, zeros, growths, .. } = scratch;
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
    pub(super) fn push_parents_of_runs<M: Mode>(&self, l: &[u8], lt: u32, lrank: u64, sizes: Sizes, scratch: &mut PushScratch<'a, M>) {
        // The sizes still to enumerate: below the top run, sizes whose
        // parents all fall outside this process's ranks are dropped.
        let Sizes { mut dmin, mut dmax, keep } = sizes;
        let rk = self.ranking;
        let k = l.len() as u32;
        let l0 = l[0] as u32;
        let tall = self.sym && k > l0;
        let PushScratch { marker, suf, pre, counts, diff, zeros, growths } = scratch;
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
                trim_ends(&mut dmin, &mut dmax, outside);
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
                } else if self.by_levels(&run) {
                    self.push_run_by_levels::<M>(&run, below, counts);
                } else {
                    match (by_columns, owned) {
                        (true, true) => self.columns::<_, true>(&run, 0, t, run.suffix_below, below, 0, marker, diff),
                        (true, false) => self.columns::<_, false>(&run, 0, t, run.suffix_below, below, 0, marker, counts),
                        (false, true) => self.up_par::<_, true>(&run, t - 1, 0, 0, below, marker, diff),
                        (false, false) => self.up_par::<_, false>(&run, t - 1, 0, 0, below, marker, counts),
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
    pub(super) fn push_rows_below<M: Mode>(
        &self,
        l: &[u8],
        lt: u32,
        dmin: u32,
        dmax: u32,
        pre: &[u64],
        marker: &mut Marker<'a, M>,
        counts: &mut [u64],
    ) {
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
                let mut marker = Marker::<M>::new(self.thread());
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
    /// include `b + g` ([`Parents::levels_of_top_row`]). The growths `g` and
    /// sizes that pass bound the enumeration: the rows below the top are
    /// not grown for parents all outside this process's ranks.
    pub(super) fn top_run_owned<M: Mode>(
        &self,
        r: &Run<'_>,
        below: u64,
        memo: &mut GrowthsMemo,
        marker: &mut Marker<'a, M>,
        counts: &mut [u64],
    ) {
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
        self.up_par::<_, false>(&run, r.t - 1, 0, 0, below, marker, counts);
    }

    /// The growths `g0 ..= g1` of a top run (`t` rows of length `b`, of a
    /// loss of `lt` tiles; growths by `first_min` or more, at most the
    /// column bound) whose parents with `dmin ..= dmax` more tiles this
    /// process may own, and the sizes of those parents, `lo ..= hi`
    /// ([`Parents::top_run_owned`]); `None` when there are none.
    pub(super) fn top_run_growths(&self, b: u32, t: u32, first_min: u32, lt: u32, dmin: u32, dmax: u32) -> TopRunGrowths {
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
    pub(super) fn up<M: Mode, const OWNED: bool>(
        &self,
        r: &Run<'_>,
        j: u32,
        sum: u32,
        low: u32,
        acc: u64,
        marker: &mut Marker<'a, M>,
        counts: &mut [u64],
    ) {
        if j == 0 {
            return self.top_row::<_, OWNED>(r, sum, low, acc, marker, counts);
        }
        let Some((lo, hi, base)) = Self::growths(r, j, sum, low) else { return };
        // Row j's contribution, its suffix and length growing with m.
        let mut own = self.by_suffix.diagonal(r.a + j, r.b + lo.max(1), base + lo.max(1));
        for m in lo..=hi {
            let c = if m == 0 { self.ranking.contribution(base, r.a + j, r.b) } else { *own.next().expect("within the table") };
            if j == 1 {
                // The last row before the top: inlined, most calls end here.
                self.top_row::<_, OWNED>(r, sum + m, m, acc + c, marker, counts);
            } else {
                self.up::<_, OWNED>(r, j - 1, sum + m, m, acc + c, marker, counts);
            }
        }
    }

    /// The growths `lo..=hi` of row `j > 0` of a run in [`Parents::up`] (rows
    /// below it grew `sum` in all, the row below `low`), and the row's
    /// suffix less its growth; `None` when there are none. Rows `0 ..= j`
    /// all grow by at least `m`, and the run's first row by at least
    /// `first_min` as well; rows above `j` by at most `w` each, and the
    /// parent must reach the first level held (the levels below it are
    /// decided when an epoch or window opens).
    #[inline(always)]
    pub(super) fn growths(r: &Run<'_>, j: u32, sum: u32, low: u32) -> Option<(u32, u32, u32)> {
        let room = (r.dmax - sum).checked_sub(r.first_min)?;
        let hi = r.w.min((r.dmax - sum) / (j + 1)).min(room / j);
        let lo = low.max(r.dmin.saturating_sub(sum.saturating_add(j.saturating_mul(r.w))));
        (lo <= hi).then_some((lo, hi, r.suffix_below + (r.t - j) * r.b + sum))
    }

    /// The top row of a run in [`Parents::up`]: its growth runs over the levels.
    #[inline(always)]
    pub(super) fn top_row<M: Mode, const OWNED: bool>(
        &self,
        r: &Run<'_>,
        sum: u32,
        low: u32,
        acc: u64,
        marker: &mut Marker<'a, M>,
        counts: &mut [u64],
    ) {
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
            trim_ends(&mut lo, &mut hi, outside);
        }
        if lo > hi {
            return;
        }
        let base = r.suffix_below + r.t * r.b + sum; // suffix of the top row, less its growth
        let (len, d0, n0) = ((hi - lo + 1) as usize, (sum + lo) as usize, (r.lt + sum + lo) as usize);
        let grown = self.by_suffix.diagonal(r.a, r.b + lo, base + lo);
        let ranks = r.pre[d0..d0 + len].iter().zip(grown).map(|(pre, own)| pre + own + acc);
        self.mark_levels::<_, OWNED>(n0, len, ranks, marker, counts);
    }

    /// Marks one parent in each of the levels `n0 .. n0 + len`, of the
    /// given ranks, and counts them (in `counts`, as differences when
    /// `OWNED`: every rank given is owned, none to test; see
    /// [`Parents::keeps_owned`]).
    #[inline(always)]
    pub(super) fn mark_levels<M: Mode, const OWNED: bool>(
        &self,
        n0: usize,
        len: usize,
        ranks: impl Iterator<Item = u64>,
        marker: &mut Marker<'a, M>,
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

    /// [`Parents::up`], with the growths of row `j` shared among threads when
    /// they lead to many parents (the run of an L-shaped loss in a box, or
    /// the arm of an equal-armed hook, has about `C(2w, w)`: one thread
    /// alone would hold up its level).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn up_par<M: Mode, const OWNED: bool>(
        &self,
        r: &Run<'_>,
        j: u32,
        sum: u32,
        low: u32,
        acc: u64,
        marker: &mut Marker<'a, M>,
        counts: &mut [u64],
    ) {
        if !Self::many(r, j, sum, low) {
            return self.up::<_, OWNED>(r, j, sum, low, acc, marker, counts);
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
                let (mut marker, mut counts) = (Marker::<M>::new(self.thread()), vec![0; counts.len()]);
                self.up_par::<_, OWNED>(r, j - 1, sum + m, m, acc + c, &mut marker, &mut counts);
                self.flush(&mut marker);
                counts
            })
            .reduce(Vec::new, add_counts);
        for (x, y) in counts.iter_mut().zip(found) {
            *x = x.wrapping_add(y);
        }
    }

    /// Whether the growths of rows `0 ..= j` of a run in [`Parents::up`] (each
    /// between `low` and `w`: at most `C(j + 1 + w − low, j + 1)`) are many
    /// enough to share among threads.
    pub(super) fn many(r: &Run<'_>, j: u32, sum: u32, low: u32) -> bool {
        Self::many_than(r, j, sum, low, parallel_parents())
    }

    /// [`Parents::many`], with the threshold given: the growths of rows
    /// `0 ..= j` number at least about `threshold`.
    pub(super) fn many_than(r: &Run<'_>, j: u32, sum: u32, low: u32, threshold: u64) -> bool {
        let room = r.w.min(r.dmax - sum).saturating_sub(low);
        // C(j + 1 + room, j + 1) < 2^(j + 1 + room): most runs stop at this test.
        if j == 0 || (j + 1 + room < 64 && 1u64 << (j + 1 + room) < threshold) {
            return false;
        }
        Self::growths_bound(room, j + 1) >= threshold as f64
    }

    /// `C(room + rows, rows)`, in floating point: the partitions with at
    /// most `rows` parts, each at most `room`, number at most this.
    pub(super) fn growths_bound(room: u32, rows: u32) -> f64 {
        (1..=rows).map(|i| (room as f64 + i as f64) / i as f64).product()
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
    pub(super) fn columns<M: Mode, const OWNED: bool>(
        &self,
        r: &Run<'_>,
        c: u32,
        prev: u32,
        sy: u32,
        fixed: u64,
        sum: u32,
        marker: &mut Marker<'a, M>,
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
                self.columns::<_, OWNED>(r, c + 1, h, sh, fixed, sum + h, marker, counts);
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
        self.mark_levels::<_, OWNED>(n0, len, ranks, marker, counts);
    }

    /// Enumerates the new rows `μ` (|μ| = d) below a loss, top row first,
    /// and marks each parent in level `n`; returns the number of marks.
    pub(super) fn below<M: Mode>(&self, c: &Below, d: u32, n: u32, marker: &mut Marker<'a, M>) -> u64 {
        let level = self.views[marker.thread][n as usize];
        let mut count = 0;
        if level.len > 0 {
            self.grow(c, level, marker, 0, d, c.w, c.prefix, &mut count);
        }
        count
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn grow<M: Mode>(
        &self,
        c: &Below,
        level: MarkView<'a>,
        marker: &mut Marker<'a, M>,
        j: u32,
        left: u32,
        prev: u32,
        acc: u64,
        count: &mut u64,
    ) {
        // Rows that may still be added, this one included.
        let rows_here = c.t - j;
        // No bound cuts the completions of `left` tiles with parts <= prev:
        // they are one contiguous rank range (clipped to the owned ranks).
        // Nor when the bound (rows unbounded: the canonical cut) leaves one
        // or two rows too few: the completions with too many rows are then
        // `1^left` and `2 1^(left−2)`, the first two ranks (as in `Ranking::walk`).
        // Nor in a box when the rows left are all the box's: the completions
        // are the ranks the ranking counts there (the L shape `[c, c − 1]`
        // of a `c`-square box: one range a level, not one mark a parent).
        let i = c.k + j;
        let skip = if rows_here >= left || i + rows_here == self.max_rows {
            Some(0)
        } else if left - rows_here <= 2 && self.by_suffix.planes == 1 {
            Some((left - rows_here).min(prev) as u64)
        } else {
            None
        };
        if let Some(skip) = skip {
            let n = if rows_here >= left { self.ranking.q(left, left, prev) } else { self.ranking.q(left, rows_here, prev) };
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

/// Narrows `lo ..= hi` from both ends past the values `outside` holds for
/// (empty, `lo > hi`, when it holds for all).
#[inline(always)]
fn trim_ends(lo: &mut u32, hi: &mut u32, outside: impl Fn(u32) -> bool) {
    while *lo <= *hi && outside(*lo) {
        *lo += 1;
    }
    while *lo <= *hi && outside(*hi) {
        *hi -= 1;
    }
}
