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

use super::checkpoint::{read_checkpoint, write_checkpoint};
use super::{FewRowBox, FewRowError, FewRowTable, PrefixRanking, NONE};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};
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
    /// `single[x] == stamp` when a bite at `j ≥ c` excludes `x`.
    single: Vec<u64>,
    stamp: u64,
}

impl Scratch {
    fn new(n: u32) -> Self {
        Scratch { incremental: vec![0; n as usize + 2], bits: Vec::new(), single: vec![0; n as usize + 2], stamp: 0 }
    }

    fn next(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
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
    let bytes = shape.table_bytes().map(|b| b + Chains::bytes(shape));
    let allowed = opts.max_memory.or_else(crate::solve::memory::available_memory);
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
    if m == 0 {
        // One row: the single tile is the only loss.
        table[0].store(1, Relaxed);
    } else if m == 1 {
        solve_line(&ranking, &table, &[], &mut Scratch::new(n));
    } else {
        let last = (m as u32 - 1) * n;
        let every = opts.checkpoint_every.unwrap_or(Duration::from_secs(600));
        let mut saved = Instant::now();
        progress.done.store(prefixes_before(&ranking, first), Relaxed);
        let chains = (m <= 3 && !opts.plain_reads).then(|| Chains::new(m, n));
        for s in first..=last {
            let heads = heads_with_tiles(m - 1, n, s);
            if let Some(ch) = &chains {
                if s == first && first > 0 {
                    ch.rebuild(&table, &ranking, s);
                }
            }
            heads.par_iter().for_each_init(
                || Scratch::new(n),
                |scratch, head| {
                    match &chains {
                        Some(ch) => ch.solve_line(&ranking, &table, head, scratch),
                        None => solve_line(&ranking, &table, head, scratch),
                    }
                    progress.done.fetch_add(u64::from(head[m - 2]) + 1, Relaxed);
                },
            );
            if let Some(path) = &opts.checkpoint {
                if s < last && saved.elapsed() >= every {
                    write_checkpoint(path, shape, &table, s + 1)?;
                    saved = Instant::now();
                }
            }
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
            // Bites at j ≥ c in prefix row i < m − 1: the child prefix takes
            // j from entry i on while head entries exceed j, then the head's
            // own entries, then c.
            for i in 0..m - 1 {
                let from = c.max(u32::from(i == 0));
                for t in (i + 1..m).rev() {
                    // For j in [head[t], head[t − 1]) the child's entries
                    // i..t−1 are j and entries t.. the head's (t = m − 1:
                    // only c, the lower end then).
                    let lower = if t == m - 1 { c } else { u32::from(head[t]) };
                    let (lo, hi) = (from.max(lower), u32::from(head[t - 1]));
                    if lo < hi {
                        let fixed = below[i] + (base - below[t]) + u64::from(c);
                        let (ti, tt) = (r.tail(i), r.tail(t));
                        for j in lo..hi {
                            let l = load(fixed + ti[j as usize] - tt[j as usize]);
                            if l != NONE {
                                scratch.single[l as usize] = stamp;
                            }
                        }
                    }
                }
            }
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

/// Table reads [`solve`] makes for `shape`, about (the bites at `j ≥ c`
/// and the `m` at `j = c − 1`, for every prefix): the work its time is
/// proportional to, for pricing a run. Enumerates every head: meant for
/// boxes of at most a few million heads.
pub fn reads(shape: FewRowBox) -> u64 {
    let m = (shape.k() - 1) as usize;
    if m < 2 {
        return u64::from(shape.n()) * m as u64;
    }
    fn go(left: usize, max: u32, sum: u64, out: &mut u64, m: u64) {
        if left == 1 {
            // The head's last entry h; the line c = 0..=h.
            for h in 0..=u64::from(max) {
                let s = sum + h; // Σ of the head's entries
                *out += (h + 1) * s - (m - 1) * h * (h + 1) / 2 + (h + 1) * m;
            }
            return;
        }
        for v in 0..=max {
            go(left - 1, v, sum + u64::from(v), out, m);
        }
    }
    let mut out = 0;
    go(m - 1, shape.n(), 0, &mut out, m as u64);
    out
}

/// The exclusion sets of three- and four-row boxes, carried from prefix to
/// prefix instead of read again: one bit set of lengths `0..=c` per key.
///
/// With four rows (prefix `(a, b, c)`), the bites at `j ≥ c` exclude
/// - in row 1, `L(a, j, c)` for `c ≤ j < b`: the set `rows1[(a, c)]`,
///   which gains `L(a, b, c)` once that is decided (for `b + 1`);
/// - in row 0, `L(j, j, c)` for `max(c, 1) ≤ j < b` and `L(j, b, c)` for
///   `b ≤ j < a`: the set `rows0[(b, c)]`, which gains `L(a, b, c)` (for
///   `a + 1`); the line `a = b` starts it from the one of `b − 1` and
///   passes it on to `b + 1` (the diagonal part).
///
/// With three rows (prefix `(a, c)`), row 0 excludes `L(j, c)` for
/// `max(c, 1) ≤ j < a`: `rows0[c]`, which gains `L(a, c)`.
///
/// Each key is touched by one head of a wavefront, so the heads of a
/// wavefront still run in parallel; its words are read and written with
/// plain (relaxed) loads and stores.
struct Chains {
    m: usize,
    /// Words of the set of key `(x, c)` start at `by_x[x] + by_c[c]`
    /// (with three rows the key is `c` alone: `by_c[c]`).
    by_x: Vec<u64>,
    by_c: Vec<u64>,
    rows0: Vec<AtomicU64>,
    rows1: Vec<AtomicU64>,
}

/// Words of a set of lengths `0..=c`.
fn words(c: u32) -> u64 {
    u64::from(c) / 64 + 1
}

impl Chains {
    fn offsets(n: u32) -> (Vec<u64>, Vec<u64>) {
        let mut by_c = vec![0u64; n as usize + 2];
        for c in 0..=n {
            by_c[c as usize + 1] = by_c[c as usize] + words(c);
        }
        let mut by_x = vec![0u64; n as usize + 2];
        for x in 0..=n as usize {
            by_x[x + 1] = by_x[x] + by_c[x + 1];
        }
        (by_x, by_c)
    }

    /// Bytes the sets of `shape` take (none beyond four rows).
    fn bytes(shape: FewRowBox) -> u64 {
        let n = shape.n();
        match shape.k() {
            3 => 8 * Self::offsets(n).1[n as usize + 1],
            4 => 16 * Self::offsets(n).0[n as usize + 1],
            _ => 0,
        }
    }

    fn new(m: usize, n: u32) -> Self {
        let (by_x, by_c) = Self::offsets(n);
        let len = if m == 2 { by_c[n as usize + 1] } else { by_x[n as usize + 1] };
        let zeros = |len: u64| std::iter::repeat_with(|| AtomicU64::new(0)).take(len as usize).collect::<Vec<_>>();
        let rows1 = if m == 3 { zeros(len) } else { Vec::new() };
        Chains { m, by_x, by_c, rows0: zeros(len), rows1 }
    }

    fn at(&self, x: u32, c: u32) -> usize {
        if self.m == 2 {
            self.by_c[c as usize] as usize
        } else {
            (self.by_x[x as usize] + self.by_c[c as usize]) as usize
        }
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

    /// Sets the chains as the heads of wavefront `s` expect them, from the
    /// table of the wavefronts before (after resuming a checkpoint).
    fn rebuild(&self, table: &[AtomicU16], r: &PrefixRanking, s: u32) {
        let n = r.bound();
        let load = |p: &[u16]| table[r.rank(p) as usize].load(Relaxed);
        if self.m == 2 {
            // rows0[c] before the head a = s: L(j, c) for max(c, 1) ≤ j < s.
            (0..=n.min(s)).into_par_iter().for_each(|c| {
                let set = &self.rows0[self.at(0, c)..][..words(c) as usize];
                Self::clear(set);
                for j in c.max(1)..s {
                    Self::insert(set, load(&[j as u16, c as u16]));
                }
            });
            return;
        }
        // rows0[(b, c)] before the head (s − b, b) (or, past the diagonal,
        // as the last head a = b left it); rows1[(a, c)] before (a, s − a).
        (0..=n).into_par_iter().for_each(|x| {
            for c in 0..=x {
                let w = words(c) as usize;
                let set0 = &self.rows0[self.at(x, c)..][..w];
                Self::clear(set0);
                let b = x;
                let a_next = s.saturating_sub(b).max(b).min(n + 1);
                if b == 0 || 2 * (b - 1) < s {
                    // The diagonal part, once the head (b − 1, b − 1) has passed it on.
                    for j in c.max(1)..b {
                        Self::insert(set0, load(&[j as u16, j as u16, c as u16]));
                    }
                }
                if s >= 2 * b {
                    for j in b..a_next {
                        Self::insert(set0, load(&[j as u16, b as u16, c as u16]));
                    }
                }
                let set1 = &self.rows1[self.at(x, c)..][..w];
                Self::clear(set1);
                let a = x;
                let b_next = s.saturating_sub(a).min(a + 1);
                for j in c..b_next {
                    Self::insert(set1, load(&[a as u16, j as u16, c as u16]));
                }
            }
        });
    }

    /// [`solve_line`] with the sets carried: the same entries.
    fn solve_line(&self, r: &PrefixRanking, table: &[AtomicU16], head: &[u16], scratch: &mut Scratch) {
        let m = self.m;
        let (a, b) = if m == 2 { (u32::from(head[0]), u32::from(head[0])) } else { (u32::from(head[0]), u32::from(head[1])) };
        let last = b;
        let mut below = [0u64; 3];
        for i in 0..m - 1 {
            below[i + 1] = below[i] + r.term(i, head[i].into());
        }
        let base = below[m - 1];
        // The lengths the bites at j < c exclude, as bits.
        let inc = &mut scratch.bits;
        inc.clear();
        inc.resize(words(last) as usize + 1, 0);
        let mut cap = u32::MAX;
        let mut gap = 0u32;
        let load = |rank: u64| table[rank as usize].load(Relaxed);
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
            let key0 = if m == 2 { c } else { b };
            let set0 = &self.rows0[self.at(key0, c)..][..w];
            let first0 = if m == 2 { a == c } else { a == b && b == c };
            if first0 {
                Self::clear(set0); // no bite at j ≥ c in row 0 yet
            }
            let set1: &[AtomicU64] = if m == 3 { &self.rows1[self.at(a, c)..][..w] } else { &[] };
            if m == 3 && b == c {
                Self::clear(set1);
            }
            let top = c.min(cap.saturating_sub(1));
            let entry = if (a == 0 && c == 0) || cap == 0 || gap > top {
                NONE
            } else {
                // The least x ≥ gap in none of the sets.
                let mut found = NONE;
                let mut wi = gap as usize / 64;
                while wi * 64 <= top as usize {
                    let mut used = inc[wi] | set0[wi].load(Relaxed);
                    if m == 3 {
                        used |= set1[wi].load(Relaxed);
                    }
                    if wi == gap as usize / 64 {
                        used |= (1u64 << (gap % 64)) - 1;
                    }
                    if used != u64::MAX {
                        let x = wi * 64 + (!used).trailing_zeros() as usize;
                        if x <= top as usize {
                            found = x as u16;
                        }
                        break;
                    }
                    wi += 1;
                }
                found
            };
            table[(base + u64::from(c)) as usize].store(entry, Relaxed);
            Self::insert(set0, entry);
            if m == 3 {
                Self::insert(set1, entry);
                if a == b && b < r.bound() {
                    // The diagonal part of row 0 for b + 1: this set as it now is.
                    let next = &self.rows0[self.at(b + 1, c)..][..w];
                    for (d, s) in next.iter().zip(set0) {
                        d.store(s.load(Relaxed), Relaxed);
                    }
                }
            }
        }
    }
}
