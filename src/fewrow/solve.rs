//! The few-row solver: the losing length of every prefix, wavefront by
//! wavefront.
//!
//! Write a prefix as a *head* `h = (h_0, …, h_{m−2})` and a last entry
//! `c ≤ h_{m−2}` (`m = k − 1` entries in all), and a position as the prefix
//! and a last row `x ≤ c`. The bites of `(h, c, x)`:
//!
//! - in the last row, at column `j < x`: `(h, c, j)`. Hence unique
//!   extension, and `L(p)` is the least `x` no other bite rules out;
//! - in prefix row `i`, at column `j < p_i` (not `(0, 0)`): every row from
//!   `i` on is cut to `min(·, j)`, giving the prefix `q` and the last row
//!   `min(x, j)`. Since `L(q) ≤ q_{m−1} ≤ j`, `q` rules out the one length
//!   `x = L(q)` when `L(q) < j`, and every `x ≥ j` when `L(q) = j`.
//!
//! For `j < c` the child prefix is `(h_0, …, h_{i−1}, j, …, j)`, the same
//! for every `c > j`: going from `c` to `c + 1` adds the `m` bites at
//! `j = c` (one per prefix row), so these *incremental* exclusions are kept
//! across the line `c = 0, 1, …` of one head (a set of excluded lengths,
//! its least gap, and the least `j` that excludes everything from `j` on).
//! For `j ≥ c` the child prefix ends in `c` (and its last row is `x`): these
//! exclude single lengths and are looked up for each `c`, about
//! `Σ_i (h_i − c)` table reads. The last row of a head reads its own line
//! only at smaller `c`.
//!
//! Every child prefix outside the line has a head of fewer tiles (a bite in
//! row `i < m − 1` lowers entry `i` to `j < h_i` and raises no entry), so
//! the heads with the same tile count, a *wavefront*, are independent: they
//! are solved in parallel, wavefront after wavefront.
//!
//! The single exclusions of prefix row `i` are those of the prefix with
//! entry `i` one lower, plus that prefix's own losing length: [`Carried`]
//! keeps them as bit sets from prefix to prefix instead of reading them
//! again, for as many rows as the memory allows. Three rows have one head
//! entry and so one head per wavefront; they are solved by anti-diagonals
//! `a + c` of their prefixes `(a, c)` instead ([`Three`]), in parallel.

use super::checkpoint::{read_checkpoint, write_checkpoint};
use super::{FewRowBox, FewRowError, FewRowTable, PrefixRanking, MAX_ROWS, NONE};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// How [`solve`] runs.
#[derive(Clone, Debug, Default)]
pub struct SolveOptions {
    /// Refuse to start when the prefix table needs more bytes than this
    /// (`None`: what the system leaves available).
    pub max_memory: Option<u64>,
    /// Keep the table here (written as a temporary file and renamed) every
    /// `checkpoint_every`, and resume from it when it holds the same box.
    pub checkpoint: Option<PathBuf>,
    /// Time between checkpoints (default 10 min).
    pub checkpoint_every: Option<Duration>,
    /// Read every child prefix for every prefix, also with three or four
    /// rows (where the exclusion sets are otherwise carried from prefix to
    /// prefix): the plain method, to check the other against.
    pub plain_reads: bool,
    /// From four rows on, carry the exclusion sets of this many prefix
    /// rows (the first ones) and read the others (`None`: as many as fit
    /// in the memory allowed; see [`carried_rows`]).
    pub carry: Option<usize>,
    /// Once set (by a signal handler: a batch system's warning), the run
    /// writes its checkpoint at the end of the wavefront in progress and
    /// returns [`FewRowError::Stopped`]. Without a checkpoint path it is
    /// not looked at.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What a running [`solve`] has done, for a progress display: prefixes
/// decided (those of a resumed checkpoint included) of all the prefixes.
pub use crate::report::Progress;

/// Scratch of one thread: generation stamps of the excluded lengths.
struct Scratch {
    /// `incremental[x] == line` when a bite at `j < c` excludes `x`.
    incremental: Vec<u64>,
    /// The same as bits, for the carried sets.
    bits: Vec<u64>,
    /// The lengths the rows not carried exclude, as bits.
    excl: Vec<u64>,
    /// `single[x] == stamp` when a bite at `j ≥ c` excludes `x`.
    single: Vec<u64>,
    stamp: u64,
}

impl Scratch {
    fn new(n: u32) -> Self {
        Scratch { incremental: vec![0; n as usize + 2], bits: Vec::new(), excl: Vec::new(), single: vec![0; n as usize + 2], stamp: 0 }
    }

    fn next(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }
}

/// Prefix rows whose exclusion sets [`solve`] carries for `shape` within
/// `allowed` bytes (all of them when `None`), and the bytes it then needs
/// in all (table and sets); `None` beyond `u64`.
///
/// Three rows carry their one row of sets, four rows both; from five rows
/// on, each row carried takes [`Carried::family_bytes`], and as many rows
/// as fit next to the table are carried (the first rows first: their
/// bites are the most to read).
pub fn carried_rows(shape: FewRowBox, allowed: Option<u64>) -> (usize, Option<u64>) {
    let m = shape.k().saturating_sub(1) as usize;
    if shape.k() <= 3 {
        return (m.saturating_sub(1), bytes_carrying(shape, 1));
    }
    let carry = (1..m).rev().find(|&c| allowed.is_none_or(|a| bytes_carrying(shape, c).is_some_and(|b| b <= a))).unwrap_or(0);
    (carry, bytes_carrying(shape, carry))
}

/// Bytes of the table and of the sets of `carry` prefix rows.
fn bytes_carrying(shape: FewRowBox, carry: usize) -> Option<u64> {
    let table = shape.table_bytes()?;
    match shape.k() {
        0..=2 => Some(table),
        3 => table.checked_add(Three::bytes(shape.n())),
        _ if carry == 0 => Some(table),
        _ => {
            let (family, offsets) = Carried::family_bytes(shape)?;
            table.checked_add(offsets)?.checked_add(family.checked_mul(carry as u64)?)
        }
    }
}

/// Solves the box: the losing length of every prefix.
///
/// # Errors
/// [`FewRowError::Memory`] when the table would not fit in
/// `opts.max_memory` (or in the memory available), [`FewRowError::Io`]
/// when a checkpoint cannot be read or written.
pub fn solve(shape: FewRowBox, opts: &SolveOptions, progress: &Progress) -> Result<FewRowTable, FewRowError> {
    let (k, n) = (shape.k(), shape.n());
    let m = (k - 1) as usize;
    let allowed = opts.max_memory.or_else(crate::solve::memory::available_memory);
    let (carry, bytes) = match (opts.plain_reads, opts.carry) {
        (true, _) => (0, shape.table_bytes()),
        (false, Some(c)) if k > 3 => (c.min(m - 1), bytes_carrying(shape, c.min(m - 1))),
        _ => carried_rows(shape, allowed),
    };
    if let (Some(allowed), need) = (allowed, bytes) {
        if need.is_none_or(|b| b > allowed) {
            return Err(FewRowError::Memory {
                rows: shape.rows,
                cols: shape.cols,
                need: need.map_or_else(|| "more than 2^64 bytes".into(), crate::solve::memory::human_bytes),
                allowed: crate::solve::memory::human_bytes(allowed),
            });
        }
    }
    let ranking = PrefixRanking::new(m, n).ok_or(FewRowError::TooLarge { rows: shape.rows, cols: shape.cols })?;
    let len = ranking.len();
    progress.total.store(len, Relaxed);
    let resumed = match &opts.checkpoint {
        Some(path) if path.exists() => Some(read_checkpoint(path, shape)?),
        _ => None,
    };
    let (table, first): (Vec<AtomicU16>, u32) = match resumed {
        Some((entries, next)) => (entries.into_iter().map(AtomicU16::new).collect(), next),
        None => (std::iter::repeat_with(|| AtomicU16::new(NONE)).take(len as usize).collect(), 0),
    };
    let every = opts.checkpoint_every.unwrap_or(Duration::from_secs(600));
    let mut saved = Instant::now();
    let stopping = || opts.stop.as_ref().is_some_and(|s| s.load(Relaxed));
    let mut checkpoint = |next: u32, last: bool| -> Result<(), FewRowError> {
        if let Some(path) = &opts.checkpoint {
            if !last && (saved.elapsed() >= every || stopping()) {
                write_checkpoint(path, shape, &table, next)?;
                saved = Instant::now();
                if stopping() {
                    return Err(FewRowError::Stopped { done: progress.done.load(Relaxed), total: len });
                }
            }
        }
        Ok(())
    };
    if m == 0 {
        // One row: the single tile is the only loss.
        table[0].store(1, Relaxed);
    } else if m == 1 {
        solve_line(&ranking, &table, &[], &mut Scratch::new(n));
    } else if m == 2 && !opts.plain_reads {
        // Three rows: blocks of prefixes by block anti-diagonals.
        let three = Three::new(n);
        let last = 2 * (n / BLOCK);
        // The checkpoint's anti-diagonal `first` (every prefix (a, c) with
        // a + c < first decided) holds every block of an anti-diagonal t with
        // (t + 2)·BLOCK − 2 < first.
        let t0 = (first + 2).div_ceil(BLOCK).saturating_sub(2);
        progress.done.store((0..t0).map(|t| three.blocks(t).map(|a| three.block_len(t, a)).sum::<u64>()).sum(), Relaxed);
        if t0 > 0 {
            three.rebuild(&table, t0);
        }
        for t in t0..=last {
            three.blocks(t).into_par_iter().for_each(|a| {
                three.block(&table, a, t - a);
                progress.done.fetch_add(three.block_len(t, a), Relaxed);
            });
            // Every prefix with a + c < (t + 1)·BLOCK is in a block of t or before.
            checkpoint((t + 1) * BLOCK, t == last)?;
        }
    } else {
        // A three-row checkpoint's anti-diagonal s has decided the heads a < ⌈s/2⌉.
        let first = if m == 2 { first.div_ceil(2) } else { first };
        let last = (m as u32 - 1) * n;
        progress.done.store(prefixes_before(&ranking, first), Relaxed);
        let carried = (carry > 0).then(|| Carried::new(m, n, carry));
        for s in first..=last {
            let heads = heads_with_tiles(m - 1, n, s);
            if let Some(ch) = &carried {
                if s == first && first > 0 {
                    ch.rebuild(&table, &ranking, s);
                }
            }
            heads.par_iter().for_each_init(
                || Scratch::new(n),
                |scratch, head| {
                    match &carried {
                        Some(ch) => ch.solve_line(&ranking, &table, head, scratch),
                        None => solve_line(&ranking, &table, head, scratch),
                    }
                    progress.done.fetch_add(u64::from(head[m - 2]) + 1, Relaxed);
                },
            );
            // (Three rows: the heads a ≤ s hold the anti-diagonals to s.)
            checkpoint(s + 1, s == last)?;
        }
    }
    progress.done.store(len, Relaxed);
    Ok(FewRowTable { shape, ranking, table })
}

/// Prefixes whose heads have fewer than `tiles` tiles (what the wavefronts
/// before `tiles` decided).
fn prefixes_before(r: &PrefixRanking, tiles: u32) -> u64 {
    let m = r.width();
    (0..tiles).flat_map(|s| heads_with_tiles(m - 1, r.bound(), s)).map(|h| u64::from(h[m - 2]) + 1).sum()
}

/// The non-increasing `len`-tuples of entries `≤ n` summing to `tiles`.
fn heads_with_tiles(len: usize, n: u32, tiles: u32) -> Vec<Vec<u16>> {
    fn go(out: &mut Vec<Vec<u16>>, cur: &mut Vec<u16>, left: usize, max: u32, tiles: u32) {
        if left == 0 {
            if tiles == 0 {
                out.push(cur.clone());
            }
            return;
        }
        // The rest must fit under `max` in the slots left.
        if u64::from(tiles) > u64::from(max) * left as u64 {
            return;
        }
        let lo = tiles.div_ceil(left as u32);
        for v in lo..=max.min(tiles) {
            cur.push(v as u16);
            go(out, cur, left - 1, v, tiles - v);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(&mut out, &mut Vec::with_capacity(len), len, n, tiles);
    out
}

/// The lengths the bites at `j ≥ c` of prefix rows `rows` (each below
/// `m − 1`) exclude for the prefix `(head, c)`, one call of `f` per losing
/// child read (`below` as in [`solve_line`]). The child prefix of a bite at
/// `j` in row `i` takes `j` from entry `i` on while the head's entries
/// exceed `j`, then the head's own entries, then `c`: for `j` in
/// `[head[t], head[t − 1])` its entries `i..t` are `j` and entries `t..`
/// the head's (`t = m − 1`: only `c`, the lower end then).
#[inline(always)]
fn single_exclusions(
    r: &PrefixRanking,
    head: &[u16],
    below: &[u64],
    c: u32,
    rows: std::ops::Range<usize>,
    load: &impl Fn(u64) -> u16,
    mut f: impl FnMut(u16),
) {
    let m = r.width();
    let base = below[m - 1];
    for i in rows {
        let from = c.max(u32::from(i == 0));
        for t in (i + 1..m).rev() {
            let lower = if t == m - 1 { c } else { u32::from(head[t]) };
            let (lo, hi) = (from.max(lower), u32::from(head[t - 1]));
            if lo < hi {
                let fixed = below[i] + (base - below[t]) + u64::from(c);
                let (ti, tt) = (r.tail(i), r.tail(t));
                for j in lo..hi {
                    let l = load(fixed + ti[j as usize] - tt[j as usize]);
                    if l != NONE {
                        f(l);
                    }
                }
            }
        }
    }
}

/// Decides the prefixes `(head, c)` for `c = 0..=head's last entry` (for a
/// one-entry prefix, `head` is empty and `c` runs to the box's side).
fn solve_line(r: &PrefixRanking, table: &[AtomicU16], head: &[u16], scratch: &mut Scratch) {
    let m = r.width();
    let last = if m == 1 { r.bound() } else { u32::from(head[m - 2]) };
    // below[i]: the rank's share of head entries 0..i; below[m − 1] is the
    // rank of (head, 0).
    let mut below = [0u64; super::MAX_ROWS as usize];
    for i in 0..m - 1 {
        below[i + 1] = below[i] + r.term(i, head[i].into());
    }
    let base = below[m - 1];
    let zero_head = head.iter().all(|&h| h == 0);
    let line = scratch.next();
    // The least j whose bite (at j < c) excludes every length from j on.
    let mut cap = u32::MAX;
    // The least length no incremental bite excludes.
    let mut gap = 0u32;
    let load = |rank: u64| table[rank as usize].load(Relaxed);
    for c in 0..=last {
        if c > 0 {
            let j = c - 1;
            for (i, &below) in below.iter().enumerate().take(m) {
                if i == 0 && j == 0 {
                    continue; // (0, 0) is not a bite
                }
                match load(below + r.tail(i)[j as usize]) {
                    NONE => {}
                    l if u32::from(l) == j => cap = cap.min(j),
                    l => scratch.incremental[l as usize] = line,
                }
            }
            while scratch.incremental[gap as usize] == line {
                gap += 1;
            }
        }
        let top = c.min(cap.saturating_sub(1));
        let entry = if (zero_head && c == 0) || cap == 0 || gap > top {
            NONE // the empty board, or every length excluded
        } else {
            let stamp = scratch.next();
            single_exclusions(r, head, &below, c, 0..m - 1, &load, |l| scratch.single[l as usize] = stamp);
            let mut x = gap;
            while x <= top && (scratch.incremental[x as usize] == line || scratch.single[x as usize] == stamp) {
                x += 1;
            }
            if x <= top {
                x as u16
            } else {
                NONE
            }
        };
        table[(base + u64::from(c)) as usize].store(entry, Relaxed);
    }
}

/// Table reads [`solve`] makes for `shape` when it carries the sets of the
/// first `carry` prefix rows (the bites at `j ≥ c` of the other rows and
/// the `m` at `j = c − 1`, for every prefix): the work its time is about
/// proportional to, for pricing a run. Enumerates every head: meant for
/// boxes of at most a few million heads.
pub fn reads(shape: FewRowBox, carry: usize) -> u64 {
    let m = (shape.k() - 1) as usize;
    if m < 2 {
        return u64::from(shape.n()) * m as u64;
    }
    let carry = carry.min(m - 1);
    // `sum`: Σ of the head's entries from `carry` on, but its last.
    fn go(at: usize, left: usize, max: u32, sum: u64, out: &mut u64, m: u64, carry: usize) {
        if left == 1 {
            // The head's last entry h; the line c = 0..=h.
            let read = m - 1 - carry as u64; // rows read one by one
            for h in 0..=u64::from(max) {
                let s = sum + if at >= carry { h } else { 0 };
                *out += (h + 1) * s - read * h * (h + 1) / 2 + (h + 1) * m;
            }
            return;
        }
        for v in 0..=max {
            let s = sum + if at >= carry { u64::from(v) } else { 0 };
            go(at + 1, left - 1, v, s, out, m, carry);
        }
    }
    let mut out = 0;
    go(0, m - 1, shape.n(), 0, &mut out, m as u64, carry);
    out
}

/// Words of a set of lengths `0..=c`.
fn words(c: u32) -> u64 {
    u64::from(c) / 64 + 1
}

/// `by_c[c]`: words of the sets of lengths `0..=c'` for every `c' < c`
/// (`c = 0..=n + 1`).
fn offsets_by_c(n: u32) -> Vec<u64> {
    let mut by_c = vec![0u64; n as usize + 2];
    for c in 0..=n {
        by_c[c as usize + 1] = by_c[c as usize] + words(c);
    }
    by_c
}

fn clear(set: &[AtomicU64]) {
    set.iter().for_each(|w| w.store(0, Relaxed));
}

fn insert(set: &[AtomicU64], l: u16) {
    if l != NONE {
        let w = &set[l as usize / 64];
        w.store(w.load(Relaxed) | 1 << (l % 64), Relaxed);
    }
}

/// The least `x` in `gap..=top` that no word of `used(wi)` excludes (bit
/// `x % 64` of word `x / 64`), or [`NONE`].
#[inline]
fn least_free(gap: u32, top: u32, mut used: impl FnMut(usize) -> u64) -> u16 {
    let mut wi = gap as usize / 64;
    while wi * 64 <= top as usize {
        let mut u = used(wi);
        if wi == gap as usize / 64 {
            u |= (1u64 << (gap % 64)) - 1;
        }
        if u != u64::MAX {
            let x = wi * 64 + (!u).trailing_zeros() as usize;
            return if x <= top as usize { x as u16 } else { NONE };
        }
        wi += 1;
    }
    NONE
}

/// The exclusion sets of the bites at `j ≥ c`, carried from prefix to
/// prefix instead of read again, for the prefix rows `0..carry` (four
/// rows and more; three rows are [`Three`]).
///
/// The bites in prefix row `i` at `j ≥ c` of the prefix `(h, c)` exclude
/// `S_i(h, c) = { L(h_0, …, h_{i−1}, min(h_i, j), …, min(h_{m−2}, j), c) :
/// max(c, [i = 0]) ≤ j < h_i }`. Its *key* is `h` without entry `i`, with
/// `c`: a non-increasing `(m − 1)`-tuple. Going from `h_i − 1` to `h_i`
/// adds the child at `j = h_i − 1`:
///
/// - when `h_i > h_{i+1}` (or `i = m − 2`, `h_i > c`) that child is
///   `(h − e_i, c)`, of the same key: the set is carried in place and
///   gains `L(h − e_i, c)` once that is decided;
/// - when `h_i = … = h_t = v > h_{t+1}` (`t > i`), the child is `(h', c)`
///   with entries `i..=t` lowered to `v − 1`, of another key: `h'` copies
///   its set, with its own `L(h', c)`, to the key of `h` once decided (the
///   *diagonal* start; `h'` has fewer tiles, so it comes first);
/// - when `h_i = c` the range is empty: the set starts empty.
///
/// Each key of each row is written by one head of a wavefront (two heads
/// with the same key and tile count are equal), so the heads of a
/// wavefront still run in parallel; the words are read and written with
/// relaxed atomics. Rows `carry..m − 1` are read entry by entry, as in
/// [`solve_line`]: the sets of all `m − 1` rows take `m − 1` times
/// [`Carried::family_bytes`], and a large box carries the rows that fit.
struct Carried {
    m: usize,
    carry: usize,
    /// The ranking of keys without their `c`: `(m − 2)`-tuples.
    keys: PrefixRanking,
    /// `goff[rank(g)]`: first word of the key `(g, 0)`.
    goff: Vec<u64>,
    by_c: Vec<u64>,
    sets: Vec<Vec<AtomicU64>>,
}

impl Carried {
    /// Words of one row's sets and the offsets of the keys, for `m ≥ 3`.
    fn layout(m: usize, n: u32) -> (PrefixRanking, Vec<u64>, Vec<u64>) {
        let keys = PrefixRanking::new(m - 2, n).expect("fewer keys than prefixes");
        let by_c = offsets_by_c(n);
        let mut goff = Vec::with_capacity(keys.len() as usize + 1);
        goff.push(0);
        let mut g = vec![0u16; m - 2];
        for _ in 0..keys.len() {
            let last = *goff.last().expect("one");
            goff.push(last + by_c[g[m - 3] as usize + 1]);
            super::next_prefix(&mut g, n as u16);
        }
        (keys, goff, by_c)
    }

    /// Bytes of the sets of one prefix row, and of the keys' offsets, for
    /// the box `shape` (four rows or more; `None` beyond `u64`).
    fn family_bytes(shape: FewRowBox) -> Option<(u64, u64)> {
        let (k, n) = (shape.k(), shape.n());
        if k < 4 {
            return Some((0, 0));
        }
        let m = (k - 1) as u64;
        // Σ over keys (g, c) of words(c): the keys with a given c ≤ n are
        // the (m − 2)-tuples bounded by n with entries ≥ c, C(n − c + m − 2, m − 2).
        let mut w: u64 = 0;
        for c in 0..=u64::from(n) {
            w = w.checked_add(super::binomial(u64::from(n) - c + m - 2, m - 2)?.checked_mul(c / 64 + 1)?)?;
        }
        let offsets = super::binomial(u64::from(n) + m - 2, m - 2)?.checked_add(1)?.checked_mul(8)?;
        Some((w.checked_mul(8)?, offsets))
    }

    fn new(m: usize, n: u32, carry: usize) -> Self {
        let (keys, goff, by_c) = Self::layout(m, n);
        let len = *goff.last().expect("one") as usize;
        let sets = (0..carry).map(|_| std::iter::repeat_with(|| AtomicU64::new(0)).take(len).collect()).collect();
        Carried { m, carry, keys, goff, by_c, sets }
    }

    /// The first word of the key `(g, 0)`.
    fn key(&self, g: &[u16]) -> u64 {
        self.goff[self.keys.rank(g) as usize]
    }

    /// `head` without entry `i`.
    fn without(head: &[u16], i: usize) -> ([u16; MAX_M], usize) {
        let mut g = [0u16; MAX_M];
        let mut len = 0;
        for (t, &v) in head.iter().enumerate() {
            if t != i {
                g[len] = v;
                len += 1;
            }
        }
        (g, len)
    }

    /// Sets the sets as the heads of wavefront `s` expect them, from the
    /// table of the wavefronts before (after resuming a checkpoint): every
    /// key's set as its next head `h*` (the least with at least `s` tiles)
    /// reads it, by reading its children.
    fn rebuild(&self, table: &[AtomicU16], r: &PrefixRanking, s: u32) {
        let (m, n) = (self.m, r.bound());
        let load = |p: &[u16]| table[r.rank(p) as usize].load(Relaxed);
        (0..=n as u16).into_par_iter().for_each(|g0| {
            let mut g = vec![0u16; m - 2];
            g[0] = g0;
            loop {
                let last = u32::from(g[m - 3]);
                let sum: u32 = g.iter().map(|&v| u32::from(v)).sum();
                let base = self.key(&g);
                for (i, sets) in self.sets.iter().enumerate() {
                    let hi = if i == 0 { n } else { u32::from(g[i - 1]) };
                    for c in 0..=last {
                        let set = &sets[(base + self.by_c[c as usize]) as usize..][..words(c) as usize];
                        clear(set);
                        let lo = if i == m - 2 { c } else { u32::from(g[i]) };
                        let x = lo.max(s.saturating_sub(sum));
                        if x > hi {
                            continue; // no head reads it again
                        }
                        let mut child = [0u16; MAX_M + 1];
                        for j in c.max(u32::from(i == 0))..x {
                            // h* = g with x at i; the child at j.
                            child[..i].copy_from_slice(&g[..i]);
                            child[i] = j as u16;
                            for t in i + 1..m - 1 {
                                child[t] = g[t - 1].min(j as u16);
                            }
                            child[m - 1] = c as u16;
                            insert(set, load(&child[..m]));
                        }
                    }
                }
                // The next tuple with the same first entry, or stop.
                let Some(i) = (1..m - 2).rev().find(|&i| g[i] < g[i - 1]) else { break };
                g[i] += 1;
                g[i + 1..].iter_mut().for_each(|v| *v = 0);
            }
        });
    }

    /// [`solve_line`] with the sets of rows `0..carry` carried: the same entries.
    fn solve_line(&self, r: &PrefixRanking, table: &[AtomicU16], head: &[u16], scratch: &mut Scratch) {
        let (m, n) = (self.m, r.bound());
        let last = u32::from(head[m - 2]);
        let mut below = [0u64; MAX_M + 1];
        for i in 0..m - 1 {
            below[i + 1] = below[i] + r.term(i, head[i].into());
        }
        let base = below[m - 1];
        let zero_head = head.iter().all(|&h| h == 0);
        // The key of each carried row, and the diagonal starts this head
        // passes its sets on to: (row, first word of the target's key).
        let mut key = [0u64; MAX_M];
        let mut targets = [(0usize, 0u64); MAX_M * MAX_M];
        let mut count = 0;
        for (i, k) in key.iter_mut().enumerate().take(self.carry) {
            let (g, len) = Self::without(head, i);
            *k = self.key(&g[..len]);
            let u = head[i];
            let room = if i == 0 { n } else { u32::from(head[i - 1]) };
            if u32::from(u) + 1 > room {
                continue;
            }
            let mut t = i + 1;
            while t < m - 1 && head[t] == u {
                // The head with entries i..=t raised to u + 1, without entry i.
                let mut raised = [0u16; MAX_M];
                raised[..m - 1].copy_from_slice(head);
                raised[i..=t].iter_mut().for_each(|v| *v = u + 1);
                let (g, len) = Self::without(&raised[..m - 1], i);
                targets[count] = (i, self.key(&g[..len]));
                count += 1;
                t += 1;
            }
        }
        let inc = &mut scratch.bits;
        inc.clear();
        inc.resize(words(last) as usize + 1, 0);
        let excl = &mut scratch.excl;
        excl.clear();
        excl.resize(words(last) as usize + 1, 0);
        let mut cap = u32::MAX;
        let mut gap = 0u32;
        let load = |rank: u64| table[rank as usize].load(Relaxed);
        let mut sets: [&[AtomicU64]; MAX_M] = [&[]; MAX_M];
        for c in 0..=last {
            if c > 0 {
                let j = c - 1;
                for (i, &below) in below.iter().enumerate().take(m) {
                    if i == 0 && j == 0 {
                        continue;
                    }
                    match load(below + r.tail(i)[j as usize]) {
                        NONE => {}
                        l if u32::from(l) == j => cap = cap.min(j),
                        l => inc[l as usize / 64] |= 1 << (l % 64),
                    }
                }
                while inc[gap as usize / 64] >> (gap % 64) & 1 == 1 {
                    gap += 1;
                }
            }
            let w = words(c) as usize;
            let at = self.by_c[c as usize];
            for i in 0..self.carry {
                sets[i] = &self.sets[i][(key[i] + at) as usize..][..w];
                if u32::from(head[i]) == c {
                    clear(sets[i]); // no bite at j ≥ c in row i yet
                }
            }
            let top = c.min(cap.saturating_sub(1));
            let entry = if (zero_head && c == 0) || cap == 0 || gap > top {
                NONE
            } else {
                excl[..w].iter_mut().for_each(|e| *e = 0);
                // The rows not carried: their bites at j ≥ c read one by one.
                single_exclusions(r, head, &below, c, self.carry..m - 1, &load, |l| excl[l as usize / 64] |= 1 << (l % 64));
                least_free(gap, top, |wi| {
                    let mut used = inc[wi] | excl[wi];
                    for set in &sets[..self.carry] {
                        used |= set[wi].load(Relaxed);
                    }
                    used
                })
            };
            table[(base + u64::from(c)) as usize].store(entry, Relaxed);
            for set in &sets[..self.carry] {
                insert(set, entry);
            }
            for &(i, to) in &targets[..count] {
                let next = &self.sets[i][(to + at) as usize..][..w];
                for (d, s) in next.iter().zip(sets[i]) {
                    d.store(s.load(Relaxed), Relaxed);
                }
            }
        }
    }
}

/// Most entries of a prefix.
const MAX_M: usize = MAX_ROWS as usize - 1;

/// Lines and columns of a block of the three-row solver.
const BLOCK: u32 = 256;

/// The three-row solver, in parallel: the prefixes `(a, c)` in blocks of
/// [`BLOCK`] lines and columns, by block anti-diagonals.
///
/// The bites of `(a, c, x)` reach the prefixes `(a, j)` and `(j, j)` for
/// `j < c` (kept per line `a` as a bit set with its least gap and cap, as
/// in [`solve_line`]) and `(j, c)` for `max(c, 1) ≤ j < a` (kept per column
/// `c` as a bit set, which gains `L(a, c)` for `a + 1`). Each has a
/// smaller `a + c`, and each line and each column has one prefix on an
/// anti-diagonal: the prefixes of an anti-diagonal are independent. So are
/// the blocks of a block anti-diagonal (each holds its own lines and
/// columns); a block is taken line by line, which keeps its reads of the
/// table and of its sets close together.
struct Three {
    n: u32,
    by_c: Vec<u64>,
    /// The line sets (`a`'s at `by_c[a]`) and the column sets (`c`'s at `by_c[c]`).
    line: Vec<AtomicU64>,
    col: Vec<AtomicU64>,
    gap: Vec<AtomicU32>,
    cap: Vec<AtomicU32>,
}

impl Three {
    /// Bytes of the sets of a three-row box of side `n`.
    fn bytes(n: u32) -> u64 {
        16 * offsets_by_c(n)[n as usize + 1] + 8 * (u64::from(n) + 1)
    }

    fn new(n: u32) -> Self {
        let by_c = offsets_by_c(n);
        let len = by_c[n as usize + 1] as usize;
        let zeros = |len: usize| std::iter::repeat_with(|| AtomicU64::new(0)).take(len).collect::<Vec<_>>();
        let words = |v: u32| std::iter::repeat_with(|| AtomicU32::new(v)).take(n as usize + 1).collect::<Vec<_>>();
        Three { n, line: zeros(len), col: zeros(len), gap: words(0), cap: words(u32::MAX), by_c }
    }

    fn rank(a: u32, c: u32) -> u64 {
        u64::from(a) * (u64::from(a) + 1) / 2 + u64::from(c)
    }

    /// The block rows `A` of block anti-diagonal `t`: the blocks `(A, t − A)`
    /// with `t − A ≤ A ≤ n / BLOCK`.
    fn blocks(&self, t: u32) -> std::ops::Range<u32> {
        t.div_ceil(2)..t.min(self.n / BLOCK) + 1
    }

    /// The lines of block row `a`.
    fn block_lines(&self, a: u32) -> std::ops::RangeInclusive<u32> {
        a * BLOCK..=((a + 1) * BLOCK - 1).min(self.n)
    }

    /// Prefixes in the block `(a, t − a)`.
    fn block_len(&self, t: u32, a: u32) -> u64 {
        let c = t - a;
        self.block_lines(a).map(|line| u64::from((line + 1).min((c + 1) * BLOCK).saturating_sub(c * BLOCK))).sum()
    }

    /// Decides the block `(a, c)`: its lines in order, each from left to
    /// right. Its prefixes read the blocks `(a, c' < c)`, `(a' < a, c)` and
    /// the diagonal ones `(j, j)` for `j ≤ c`, all on earlier block
    /// anti-diagonals (or in this block, before).
    fn block(&self, table: &[AtomicU16], a: u32, c: u32) {
        for line in self.block_lines(a) {
            for col in c * BLOCK..(line + 1).min((c + 1) * BLOCK) {
                self.cell(table, line, col);
            }
        }
    }

    /// Decides `(a, c)`.
    fn cell(&self, table: &[AtomicU16], a: u32, c: u32) {
        let load = |a: u32, c: u32| table[Self::rank(a, c) as usize].load(Relaxed);
        let line = &self.line[self.by_c[a as usize] as usize..][..words(a) as usize];
        let (mut cap, mut gap) = (self.cap[a as usize].load(Relaxed), self.gap[a as usize].load(Relaxed));
        if c == 0 {
            clear(line);
            (cap, gap) = (u32::MAX, 0);
        } else {
            let j = c - 1;
            for l in [if j > 0 { load(j, j) } else { NONE }, load(a, j)] {
                match l {
                    NONE => {}
                    l if u32::from(l) == j => cap = cap.min(j),
                    l => insert(line, l),
                }
            }
            while line[gap as usize / 64].load(Relaxed) >> (gap % 64) & 1 == 1 {
                gap += 1;
            }
        }
        let col = &self.col[self.by_c[c as usize] as usize..][..words(c) as usize];
        if a == c {
            clear(col);
        }
        let top = c.min(cap.saturating_sub(1));
        let entry = if (a == 0 && c == 0) || cap == 0 || gap > top {
            NONE
        } else {
            least_free(gap, top, |wi| line[wi].load(Relaxed) | col[wi].load(Relaxed))
        };
        table[Self::rank(a, c) as usize].store(entry, Relaxed);
        insert(col, entry);
        self.cap[a as usize].store(cap, Relaxed);
        self.gap[a as usize].store(gap, Relaxed);
    }

    /// Sets the lines and columns as block anti-diagonal `t` expects them,
    /// from the table of the blocks before (after resuming).
    fn rebuild(&self, table: &[AtomicU16], t: u32) {
        let load = |a: u32, c: u32| table[Self::rank(a, c) as usize].load(Relaxed);
        (0..=self.n).into_par_iter().for_each(|a| {
            // Line a before its first prefix not decided: the bites at j < c.
            let c = (t.saturating_sub(a / BLOCK) * BLOCK).min(a + 1);
            let line = &self.line[self.by_c[a as usize] as usize..][..words(a) as usize];
            clear(line);
            let (mut cap, mut gap) = (u32::MAX, 0);
            for j in 0..c {
                for l in [if j > 0 { load(j, j) } else { NONE }, load(a, j)] {
                    match l {
                        NONE => {}
                        l if u32::from(l) == j => cap = cap.min(j),
                        l => insert(line, l),
                    }
                }
            }
            while c > 0 && gap <= a && line[gap as usize / 64].load(Relaxed) >> (gap % 64) & 1 == 1 {
                gap += 1;
            }
            self.cap[a as usize].store(cap, Relaxed);
            self.gap[a as usize].store(gap, Relaxed);
            // Column a (as c) before its first prefix not decided, (next, a):
            // L(j, a) for max(a, 1) ≤ j < next.
            let next = (t.saturating_sub(a / BLOCK) * BLOCK).max(a);
            let col = &self.col[self.by_c[a as usize] as usize..][..words(a) as usize];
            clear(col);
            for j in a.max(1)..next.min(self.n + 1) {
                insert(col, load(j, a));
            }
        });
    }
}
