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
}

/// What a running [`solve`] has done, for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    /// Prefixes decided (those of a resumed checkpoint included).
    pub done: AtomicU64,
    /// Prefixes in all.
    pub total: AtomicU64,
}

/// Scratch of one thread: generation stamps of the excluded lengths.
struct Scratch {
    /// `incremental[x] == line` when a bite at `j < c` excludes `x`.
    incremental: Vec<u64>,
    /// `single[x] == stamp` when a bite at `j ≥ c` excludes `x`.
    single: Vec<u64>,
    stamp: u64,
}

impl Scratch {
    fn new(n: u32) -> Self {
        Scratch { incremental: vec![0; n as usize + 2], single: vec![0; n as usize + 2], stamp: 0 }
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
    let bytes = shape.table_bytes();
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
        for s in first..=last {
            let heads = heads_with_tiles(m - 1, n, s);
            heads.par_iter().for_each_init(
                || Scratch::new(n),
                |scratch, head| {
                    solve_line(&ranking, &table, head, scratch);
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
            for i in 0..m {
                if i == 0 && j == 0 {
                    continue; // (0, 0) is not a bite
                }
                match load(below[i] + r.tail(i)[j as usize]) {
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
