//! The loss sieve: level `n` is decided by pushing a mark from every loss of
//! a smaller level to each of its parents with exactly `n` tiles; the
//! unmarked positions of level `n` are its losses.
//!
//! Parents are enumerated by the addable-corner rule (`docs/math.md`): for a
//! corner `(a, b)` of a loss `L` with `t` rows of length `b` below it and room
//! `w`, every non-empty partition `μ` (at most `t` parts, parts at most `w`)
//! added to those rows gives a parent. The parent's rank is computed
//! incrementally: rows above the corner keep their value (their suffix grows
//! by `|μ|`), rows below the run keep their contribution to `rank(L)`.
//!
//! In a universe that conjugation maps onto itself only *canonical* parents
//! (no more rows than columns) are marked and scanned; the losses of the
//! other half are the conjugates of canonical losses. This halves the work.

use crate::cluster::Comm;
use crate::game::conjugate_rows;
use crate::index::{split, Ranking, Visit};
use crate::store::mapped::MappedBits;
use rayon::prelude::*;
use roaring::RoaringBitmap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Sources are dealt to processes one at a time, round robin (finer dealing
/// balances the marks best; measured against chunks of 16 and 64).
const SOURCE_CHUNK: usize = 1;
/// Sources per rayon task.
const TASK_SOURCES: usize = 256;

/// The losses found so far, as explicit rows: the sources of the sieve.
///
/// Losses are numbered in the order they are found (level, then rank). With
/// several processes, loss `i` belongs to process `i % processes`, and a
/// process keeps the rows of its own losses only: each holds about
/// `1/processes` of them.
#[derive(Clone)]
pub struct LossSources {
    rows: Vec<u8>,
    refs: Vec<SourceRef>,
    /// Losses numbered so far, kept or not.
    total: u64,
    me: usize,
    processes: usize,
}

impl Default for LossSources {
    fn default() -> Self {
        Self::for_process(0, 1)
    }
}

#[derive(Clone, Copy)]
struct SourceRef {
    start: u64,
    len: u16,
    tiles: u16,
    rank: u64,
}

impl LossSources {
    /// An empty set for process `me` of `processes`.
    pub fn for_process(me: usize, processes: usize) -> Self {
        LossSources { rows: Vec::new(), refs: Vec::new(), total: 0, me, processes }
    }

    /// Whether the next loss numbered belongs to this process.
    pub fn owns_next(&self) -> bool {
        (self.total / SOURCE_CHUNK as u64) % self.processes as u64 == self.me as u64
    }

    /// Numbers the next loss (rank `rank` in its level); keeps its rows if
    /// this process owns it, calling `rows` only then.
    pub fn push_with<'r>(&mut self, rank: u64, rows: impl FnOnce() -> std::borrow::Cow<'r, [u8]>) {
        if self.owns_next() {
            let rows = rows();
            let tiles: u32 = rows.iter().map(|&r| r as u32).sum();
            self.refs.push(SourceRef { start: self.rows.len() as u64, len: rows.len() as u16, tiles: tiles as u16, rank });
            self.rows.extend_from_slice(&rows);
        }
        self.total += 1;
    }

    /// Numbers the next loss and keeps its rows if owned.
    pub fn push(&mut self, rows: &[u8], rank: u64) {
        self.push_with(rank, || std::borrow::Cow::Borrowed(rows));
    }

    /// Number of losses held by this process.
    pub fn len(&self) -> usize {
        self.refs.len()
    }

    /// Whether no loss is held.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }

    /// Bytes used by the explicit rows and the index.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() + self.refs.capacity() * std::mem::size_of::<SourceRef>()
    }

    fn rows_of(&self, r: &SourceRef) -> &[u8] {
        &self.rows[r.start as usize..r.start as usize + r.len as usize]
    }
}

/// What one level of the sieve found.
pub struct LevelLosses {
    /// Ranks of the losses of the level, increasing.
    pub ranks: Vec<u64>,
    /// Marks pushed into the level by this process (canonical parent, losing child pairs).
    pub marks: u64,
    /// Positions this process scanned for marks.
    pub scanned: u64,
}

/// Decides level `n`: marks every parent of every source, then collects the
/// unmarked positions. `marks` must be a fresh, zeroed set of `ranking.size(n)`
/// bits. With several processes, each marks the parents of its share of the
/// sources and scans its share of the level; marks and losses are merged, so
/// every process ends with the same result. The level's losses are appended to
/// `sources`.
pub fn sieve_level(ranking: &Ranking, n: u32, sources: &mut LossSources, marks: &mut MappedBits, comm: &dyn Comm) -> LevelLosses {
    let universe = ranking.universe();
    let sym = universe.is_symmetric();
    let (me, processes) = (comm.process(), comm.processes());
    let marks_pushed: u64 = {
        let ctx = Ctx { ranking, sym, max_rows: universe.rows.unwrap_or(u32::MAX), max_cols: universe.cols.unwrap_or(u32::MAX), marks };
        let src = &*sources;
        src.refs
            .par_chunks(TASK_SOURCES)
            .map_init(Scratch::default, |scratch, chunk| {
                chunk
                    .iter()
                    .map(|r| if (r.tiles as u32) < n { ctx.push_parents(src.rows_of(r), r.tiles as u32, r.rank, n, scratch) } else { 0 })
                    .sum::<u64>()
            })
            .sum()
    };
    comm.or_words(marks.words_mut());
    let marks = &*marks;

    // Scan this process's contiguous share of the level for unmarked positions.
    let scanned = AtomicU64::new(0);
    let found: Vec<Vec<(u64, Vec<u8>)>> = split::level_share(ranking, n, sym, me, processes)
        .par_iter()
        .map(|prefix| {
            let mut scan = Unmarked { ranking, marks, out: Vec::new() };
            let visited = ranking.walk(n, prefix, sym, &mut scan);
            scanned.fetch_add(visited, Ordering::Relaxed);
            scan.out
        })
        .collect();
    // Add the conjugates: a canonical loss with fewer rows than columns has one
    // with more rows than columns, which the scan skipped; square-framed ones
    // (as many rows as columns) have square-framed conjugates, scanned too.
    let mut local: Vec<(u64, Vec<u8>)> = Vec::new();
    for (rank, rows) in found.into_iter().flatten() {
        if sym && rows.len() < rows[0] as usize {
            let conj = conjugate_rows(&rows);
            local.push((ranking.rank_rows(&conj), conj));
        }
        local.push((rank, rows));
    }
    local.sort_unstable_by_key(|l| l.0);
    let all: Vec<u64> = if processes == 1 {
        local.iter().map(|l| l.0).collect()
    } else {
        // Exchange the losses as serialized roaring bitmaps.
        let bitmap: RoaringBitmap = local.iter().map(|l| u32::try_from(l.0).expect("level below 2^32 positions")).collect();
        let mut bytes = Vec::new();
        bitmap.serialize_into(&mut bytes).expect("writing to memory");
        let mut all = RoaringBitmap::new();
        for part in comm.all_gather(&bytes) {
            all |= RoaringBitmap::deserialize_from(&part[..]).expect("a bitmap serialized by a peer process");
        }
        all.iter().map(|r| r as u64).collect()
    };
    // Keep the rows of the losses this process owns (unranking those another one found).
    let mut local = local.into_iter().peekable();
    for &r in &all {
        let mine = local.next_if(|l| l.0 == r);
        sources.push_with(r, || match mine {
            Some((_, rows)) => std::borrow::Cow::Owned(rows),
            None => std::borrow::Cow::Owned(ranking.unrank(n, r).expect("rank within the level").rows().to_vec()),
        });
    }
    LevelLosses { ranks: all, marks: marks_pushed, scanned: scanned.into_inner() }
}

/// The scan: collects the unmarked positions of a share of the level in
/// rank order. Subtrees that no row bound cuts are contiguous rank ranges:
/// their clear bits are found a word at a time and only those positions
/// are unranked.
struct Unmarked<'a> {
    ranking: &'a Ranking,
    marks: &'a MappedBits,
    out: Vec<(u64, Vec<u8>)>,
}

impl Visit for Unmarked<'_> {
    fn position(&mut self, rank: u64, rows: &[u8]) {
        if !self.marks.get(rank) {
            self.out.push((rank, rows.to_vec()));
        }
    }

    fn range(&mut self, first: u64, count: u64, rows: &[u8], rest: u32, max_part: u32) -> bool {
        let (ranking, out) = (self.ranking, &mut self.out);
        self.marks.for_each_clear(first, first + count, |r| {
            let mut full = rows.to_vec();
            ranking.unrank_suffix(rest, max_part, r - first, &mut full);
            out.push((r, full));
        });
        true
    }
}

struct Ctx<'a> {
    ranking: &'a Ranking,
    sym: bool,
    max_rows: u32,
    max_cols: u32,
    marks: &'a MappedBits,
}

/// Per-thread buffers of [`Ctx::push_parents`] (kept to avoid zeroing arrays per loss).
#[derive(Default)]
struct Scratch {
    suf: Vec<u32>,
    run_old: Vec<u64>,
}

/// One corner of a loss and the rows its parents change.
struct Corner<'s> {
    /// First changed row.
    a: u32,
    /// Current length of the changed rows (0 for new rows below).
    b: u32,
    /// Number of rows that may grow.
    t: u32,
    /// Largest growth of a row.
    w: u32,
    /// Smallest growth of the first row (canonical parents only).
    first_min: u32,
    /// Tiles of `L` below the changed rows.
    suffix_below: u32,
    /// Rank contribution of the rows above, with their suffix grown by `d`.
    prefix: u64,
    /// Rank contribution of rows `a ..` of `L`; rows `a + j ..` contribute
    /// `tail_base − run_old[j]` (0 for new rows below `L`).
    tail_base: u64,
    /// Cumulative contributions of the first `j` run rows in `L`.
    run_old: &'s [u64],
}

impl Corner<'_> {
    /// Rank contribution of the unchanged rows `a + j ..`.
    #[inline(always)]
    fn tail(&self, j: u32) -> u64 {
        if self.b == 0 {
            0
        } else {
            self.tail_base - self.run_old[j as usize]
        }
    }
}

impl Ctx<'_> {
    /// Marks every parent of loss `l` (of `lt` tiles, rank `lrank`) with `n` tiles.
    /// Returns the number of marks pushed.
    fn push_parents(&self, l: &[u8], lt: u32, lrank: u64, n: u32, scratch: &mut Scratch) -> u64 {
        let rk = self.ranking;
        let d = n - lt;
        let k = l.len() as u32;
        let l0 = l[0] as u32;
        let tall = self.sym && k > l0;
        let Scratch { suf, run_old } = scratch;
        suf.clear();
        suf.resize(k as usize + 1, 0);
        for i in (0..k as usize).rev() {
            suf[i] = suf[i + 1] + l[i] as u32;
        }
        let mut pushed = 0;
        let mut pre_new = 0u64; // Σ_{i<a} contribution(suf_i + d, i, l_i)
        let mut pre_old = 0u64; // Σ_{i<a} contribution(suf_i, i, l_i)
        let mut a = 0u32;
        while a <= k {
            if a == k {
                // New rows below L, each at most l_last, up to the row bound.
                let mut t = self.max_rows.saturating_sub(k).min(d);
                if self.sym {
                    if tall {
                        break;
                    }
                    t = t.min(l0 - k);
                }
                let w = l[k as usize - 1] as u32;
                if t == 0 || (t as u64) * (w as u64) < d as u64 {
                    break;
                }
                let corner = Corner { a, b: 0, t, w, first_min: 1, suffix_below: 0, prefix: pre_new, tail_base: 0, run_old: &[] };
                pushed += self.emit(&corner, d);
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
            let fits = (t as u64) * (w.min(d) as u64) >= d as u64 && first_min <= w.min(d);
            // Old contributions of the run, needed for the tails and the prefixes.
            run_old.clear();
            run_old.push(0);
            let mut acc = 0;
            for j in 0..t {
                let i = a + j;
                acc += rk.contribution(suf[i as usize], i, b);
                run_old.push(acc);
            }
            if canonical_ok && fits {
                let corner = Corner {
                    a,
                    b,
                    t,
                    w: w.min(d),
                    first_min,
                    suffix_below: suf[(a + t) as usize],
                    prefix: pre_new,
                    // rank(L) = pre_old + run_old[t] + (contribution of rows a + t ..)
                    tail_base: lrank - pre_old,
                    run_old,
                };
                pushed += self.emit(&corner, d);
            }
            // Advance the prefixes over the run.
            if self.sym && tall && a == 0 {
                // No later corner of a tall loss has canonical parents.
                break;
            }
            for j in 0..t {
                let i = a + j;
                pre_new += rk.contribution(suf[i as usize] + d, i, b);
            }
            pre_old += acc;
            a += t;
        }
        pushed
    }

    /// Enumerates the growths `μ` (|μ| = d) of a corner, top row first, and marks each parent.
    fn emit(&self, c: &Corner<'_>, d: u32) -> u64 {
        let mut count = 0;
        self.grow(c, 0, d, c.w, c.prefix, &mut count);
        count
    }

    fn grow(&self, c: &Corner<'_>, j: u32, left: u32, prev: u32, acc: u64, count: &mut u64) {
        let rows_here = c.t - j; // rows that may still grow, this one included
        let lo = left.div_ceil(rows_here).max(if j == 0 { c.first_min } else { 1 });
        let hi = prev.min(left);
        let i = c.a + j;
        for m in lo..=hi {
            // Suffix of row i in the parent: unchanged rows below the run,
            // b for each remaining run row, and the growth still to place.
            let suffix = c.suffix_below + rows_here * c.b + left;
            let r = acc + self.ranking.contribution(suffix, i, c.b + m);
            let rest = left - m;
            if rest == 0 {
                let rank = r + c.tail(j + 1);
                self.marks.set(rank);
                *count += 1;
            } else {
                self.grow(c, j + 1, rest, m, r, count);
            }
        }
    }
}
