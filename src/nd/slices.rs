//! Positions as sequences of **slices**: the tables behind the fast child
//! ranking and the sieve.
//!
//! A position of the box `d1 × D` (`D = d2 × … × dk`) is the sequence of its
//! `d1` slices along the first axis: slice `i` is the heights
//! `h[i·W .. (i+1)·W]`, a down-set of `D` (maybe empty), each slice
//! contained in the one before. Slices are numbered by their index in the
//! box `D` ([`NdRanking`] of `D`), which orders them as heights arrays are
//! ordered, so the index of a position is
//!
//! ```text
//! index(h) = Σ_i B[i][r_{i−1}][r_i],   B[i][p][c] = Σ_{r < c, r ⊆ p} C[i + 1][r]
//! ```
//!
//! with `r_{−1}` the full slice and `C[i][p]` the completions of slices
//! `i ..` below `p`: the same index as the automaton's.
//!
//! - **Children**: a move at `(i, c′)` clears the cells `≥ c′` of slices
//!   `i, i+1, …` until one is unchanged (`clamp`, a table look-up each);
//!   only the terms of the changed slices and the next one change.
//! - **Parents** (for the sieve): `P` is a parent of `L` by the move at
//!   `c = (i, c′)` exactly when `P ⊋ L`, `P ∖ L ⊆ {≥ c}` (then `c ∈ P`, and
//!   `c ∉ L`). Slice by slice from `i`: `P`'s slice `j` is `L`'s slice `s`
//!   plus cells `≥ c′` of `D` (the list `G(s, c′)`, `s` itself included,
//!   precomputed), contained in `P`'s slice `j − 1`, and not `s` itself at
//!   `j = i`.

use super::rank::NdRanking;
use super::NdError;
use crate::solve::sieve::prefetch;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most entries of the slice tables (`B`, and a quarter of the parent lists).
const MAX_SLICE_ENTRIES: usize = 1 << 23;
/// Most (slice, cell) pairs (parent lists and `clamp` entries).
const MAX_SLICE_LISTS: usize = 1 << 20;

/// The slice tables of a box.
#[derive(Clone, Debug)]
pub struct Slices {
    /// Slices per position, `d1`.
    pub(crate) d1: usize,
    /// Heights per slice, `W`.
    pub(crate) w: usize,
    /// Number of slices (positions of `D`, the empty one included).
    pub(crate) r: usize,
    /// Largest height.
    top: usize,
    /// The box `D`.
    pub(crate) rest: NdRanking,
    /// `B[i][p][c]` at `(i·r + p)·r + c`.
    b: Vec<u64>,
    /// `clamp[(s·W + y)·top + z]`: slice `s` less its cells `≥ (y, z)`.
    clamp: Vec<u32>,
    /// Heights of slice `s`: `heights[s·W ..][..W]`.
    heights: Vec<u8>,
    /// Cells of each slice.
    cells: Vec<u32>,
    /// Bit `p·r + c`: slice `c` is contained in slice `p`.
    sub: Vec<u64>,
    /// Per slice `p`: the slices contained in it, by cell count (`below[p][k]`).
    below: Vec<Vec<Vec<u32>>>,
    /// Parent lists `G(s, c′)` at `g[g_off[s·cells(D) + c′] ..]` (`c′ = y·top + z`).
    g: Vec<u32>,
    g_off: Vec<u32>,
    /// All positions of the box, the empty one included.
    arrays: u64,
}

/// A piece of a level: the positions whose first slices are `ids`.
#[derive(Clone, Debug)]
pub struct SliceUnit {
    ids: Vec<u32>,
    acc: u64,
    rem: u32,
}

impl Slices {
    /// The slice tables of a box with at least two sides (`full` its
    /// automaton), or `None` where they would exceed their limit.
    ///
    /// # Errors
    /// Those of [`NdRanking::new`] for the box `D`.
    pub(crate) fn new(full: &NdRanking) -> Result<Option<Self>, NdError> {
        let dims = full.dims();
        if dims.len() < 2 {
            return Ok(None);
        }
        let d1 = dims[0] as usize;
        let rest = NdRanking::new(&dims[1..])?;
        let r = rest.positions() as usize + 1;
        let w = rest.grid_cells();
        let top = full.top() as usize;
        let rc = w * top;
        if d1.saturating_mul(r).saturating_mul(r) > MAX_SLICE_ENTRIES || r * rc > MAX_SLICE_LISTS {
            return Ok(None);
        }
        let mut heights = Vec::with_capacity(r * w);
        for i in 0..r as u64 {
            heights.extend(rest.unindex(i).expect("index below the count"));
        }
        let hs = |s: usize| &heights[s * w..(s + 1) * w];
        let cells: Vec<u32> = (0..r).map(|s| hs(s).iter().map(|&v| v as u32).sum()).collect();
        let mut sub = vec![0u64; (r * r).div_ceil(64)];
        let mut below_flat: Vec<Vec<u32>> = vec![Vec::new(); r];
        for (p, list) in below_flat.iter_mut().enumerate() {
            for c in 0..r {
                if hs(c).iter().zip(hs(p)).all(|(a, b)| a <= b) {
                    sub[(p * r + c) / 64] |= 1 << ((p * r + c) % 64);
                    list.push(c as u32);
                }
            }
        }
        // B, from the last slice back.
        let mut completions = vec![1u64; r];
        let mut b = vec![0u64; d1 * r * r];
        for i in (0..d1).rev() {
            let mut next = vec![0u64; r];
            for p in 0..r {
                let row = &mut b[(i * r + p) * r..(i * r + p + 1) * r];
                let mut acc = 0u64;
                let mut k = 0;
                for (c, slot) in row.iter_mut().enumerate() {
                    *slot = acc;
                    if k < below_flat[p].len() && below_flat[p][k] as usize == c {
                        acc = acc.saturating_add(completions[c]);
                        k += 1;
                    }
                }
                next[p] = acc;
            }
            completions = next;
        }
        let ge = |t: usize, y: usize| rest.coords(t).iter().zip(rest.coords(y)).all(|(p, q)| p >= q);
        let mut clamp = vec![0u32; r * rc];
        let mut arr = vec![0u8; w];
        for s in 0..r {
            for y in 0..w {
                for z in 0..top {
                    arr.copy_from_slice(hs(s));
                    for (t, v) in arr.iter_mut().enumerate() {
                        if *v as usize > z && ge(t, y) {
                            *v = z as u8;
                        }
                    }
                    clamp[(s * w + y) * top + z] = rest.index(&arr).expect("a smaller slice") as u32;
                }
            }
        }
        // Parent lists: s' ∈ G(s, c') when s ⊆ s' and every cell of s' ∖ s is
        // ≥ c', i.e. c' lies below the meet of s' ∖ s; s ∈ G(s, c') always.
        // Only c' ∉ s is ever asked for.
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); r * rc];
        let mut total = 0usize;
        for s in 0..r {
            for y in 0..w {
                for z in hs(s)[y] as usize..top {
                    lists[s * rc + y * top + z].push(s as u32);
                }
            }
        }
        let g_dims = rest.dims().len() - 1;
        for (sp, list) in below_flat.iter().enumerate() {
            for &s in list {
                let s = s as usize;
                if s == sp {
                    continue;
                }
                let mut meet_grid = vec![u8::MAX; g_dims];
                let mut meet_z = usize::MAX;
                for y in 0..w {
                    if hs(sp)[y] > hs(s)[y] {
                        for (m, &c) in meet_grid.iter_mut().zip(rest.coords(y)) {
                            *m = (*m).min(c);
                        }
                        meet_z = meet_z.min(hs(s)[y] as usize);
                    }
                }
                for y in 0..w {
                    if !rest.coords(y).iter().zip(&meet_grid).all(|(a, m)| a <= m) {
                        continue;
                    }
                    for z in hs(s)[y] as usize..=meet_z.min(top - 1) {
                        lists[s * rc + y * top + z].push(sp as u32);
                        total += 1;
                    }
                }
                if total > 4 * MAX_SLICE_ENTRIES {
                    return Ok(None);
                }
            }
        }
        let mut g = Vec::with_capacity(total + r * rc);
        let mut g_off = Vec::with_capacity(r * rc + 1);
        for l in &lists {
            g_off.push(g.len() as u32);
            g.extend_from_slice(l);
        }
        g_off.push(g.len() as u32);
        let below = below_flat
            .iter()
            .enumerate()
            .map(|(p, list)| {
                let mut by = vec![Vec::new(); cells[p] as usize + 1];
                for &c in list {
                    by[cells[c as usize] as usize].push(c);
                }
                by
            })
            .collect();
        Ok(Some(Slices { d1, w, r, top, rest, b, clamp, heights, cells, sub, below, g, g_off, arrays: completions[r - 1] }))
    }

    /// All positions of the box by this count, the empty one included.
    pub(crate) fn arrays(&self) -> u64 {
        self.arrays
    }

    #[inline(always)]
    fn b(&self, i: usize, p: usize, c: usize) -> u64 {
        self.b[(i * self.r + p) * self.r + c]
    }

    #[inline(always)]
    fn contains(&self, p: usize, c: usize) -> bool {
        let bit = p * self.r + c;
        self.sub[bit / 64] >> (bit % 64) & 1 == 1
    }

    #[inline(always)]
    fn g(&self, s: usize, cell: usize) -> &[u32] {
        let k = s * self.w * self.top + cell;
        &self.g[self.g_off[k] as usize..self.g_off[k + 1] as usize]
    }

    /// Index of the child of a position (index `index`, slice numbers `ids`)
    /// by the move at grid cell `x`, height `z`.
    #[inline]
    pub(crate) fn child_index(&self, index: u64, ids: &[u32], x: usize, z: u8) -> u64 {
        let (r, w, top) = (self.r, self.w, self.top);
        let (i, y) = (x / w, x % w);
        let mut new = index;
        let mut prev_old = if i == 0 { r - 1 } else { ids[i - 1] as usize };
        let mut prev_new = prev_old;
        for (j, &old) in ids.iter().enumerate().skip(i) {
            let old = old as usize;
            let nw = self.clamp[(old * w + y) * top + z as usize] as usize;
            new = new.wrapping_sub(self.b(j, prev_old, old)).wrapping_add(self.b(j, prev_new, nw));
            if nw == old {
                break;
            }
            prev_old = old;
            prev_new = nw;
        }
        new
    }

    /// Cell counts `k` a slice `j` below `prev` may have with `rem` cells
    /// left for slices `j ..`.
    fn cell_range(&self, j: usize, prev: usize, rem: u32) -> std::ops::RangeInclusive<u32> {
        let slots = (self.d1 - j) as u32;
        rem.div_ceil(slots)..=rem.min(self.cells[prev])
    }

    /// The work units of level `n`: prefixes of one or two slices (at least
    /// `target` where the level allows), covering the level.
    pub(crate) fn level_units(&self, n: u32, target: usize) -> Vec<SliceUnit> {
        let mut units = vec![SliceUnit { ids: Vec::new(), acc: 0, rem: n }];
        while units.len() < target && units.first().is_some_and(|u| u.ids.len() < self.d1.min(2)) {
            let mut out = Vec::new();
            for u in &units {
                let j = u.ids.len();
                let prev = u.ids.last().map_or(self.r - 1, |&p| p as usize);
                for k in self.cell_range(j, prev, u.rem) {
                    for &c in &self.below[prev][k as usize] {
                        let mut ids = u.ids.clone();
                        ids.push(c);
                        out.push(SliceUnit { ids, acc: u.acc + self.b(j, prev, c as usize), rem: u.rem - k });
                    }
                }
            }
            units = out;
        }
        units
    }

    /// Calls `f(index, slice numbers)` for every position of a unit.
    pub(crate) fn for_each_in_unit(&self, u: &SliceUnit, ids: &mut Vec<u32>, f: &mut impl FnMut(u64, &[u32])) {
        ids.clear();
        ids.extend_from_slice(&u.ids);
        ids.resize(self.d1, 0);
        let j = u.ids.len();
        let prev = u.ids.last().map_or(self.r - 1, |&p| p as usize);
        self.dfs(j, prev, u.rem, u.acc, ids, f);
    }

    fn dfs(&self, j: usize, prev: usize, rem: u32, acc: u64, ids: &mut [u32], f: &mut impl FnMut(u64, &[u32])) {
        if j == self.d1 {
            if rem == 0 {
                f(acc, ids);
            }
            return;
        }
        for k in self.cell_range(j, prev, rem) {
            for &c in &self.below[prev][k as usize] {
                ids[j] = c;
                self.dfs(j + 1, c as usize, rem - k, acc + self.b(j, prev, c as usize), ids, f);
            }
        }
    }

    /// Marks every parent of the loss with slice numbers `ids` and index
    /// `index`. Returns the marks pushed.
    pub(crate) fn push_parents(&self, ids: &[u32], index: u64, marks: &mut Marks<'_>) -> u64 {
        let (w, top, full) = (self.w, self.top, self.r - 1);
        let mut pushed = 0;
        for i in 0..self.d1 {
            let prev = if i == 0 { full } else { ids[i - 1] as usize };
            let cur = ids[i] as usize;
            if cur == prev {
                continue;
            }
            let (hp, hc) = (&self.heights[prev * w..(prev + 1) * w], &self.heights[cur * w..(cur + 1) * w]);
            for y in 0..w {
                // c' = (y, z) must be missing from slice i and present in slice i - 1.
                for z in hc[y] as usize..hp[y] as usize {
                    let cell = y * top + z;
                    let base = index.wrapping_sub(self.b(i, prev, cur));
                    for &s in self.g(cur, cell) {
                        let s = s as usize;
                        if s != cur && self.contains(prev, s) {
                            pushed += self.extend(ids, i + 1, s, cell, base.wrapping_add(self.b(i, prev, s)), marks);
                        }
                    }
                }
            }
        }
        pushed
    }

    /// Completes a parent from slice `j` on (`prev_new` its slice `j − 1`,
    /// `acc` its index so far with `L`'s terms for slices `j ..`).
    fn extend(&self, ids: &[u32], j: usize, prev_new: usize, cell: usize, acc: u64, marks: &mut Marks<'_>) -> u64 {
        if j == self.d1 {
            marks.push(acc);
            return 1;
        }
        let old = ids[j] as usize;
        let base = acc.wrapping_sub(self.b(j, ids[j - 1] as usize, old));
        let (y, z) = (cell / self.top, cell % self.top);
        if self.heights[prev_new * self.w + y] as usize <= z {
            // c' is not in slice j − 1 of the parent: no later slice can grow
            // (each would hold c'), so the rest is L's.
            marks.push(base.wrapping_add(self.b(j, prev_new, old)));
            return 1;
        }
        let mut pushed = 0;
        for &s in self.g(old, cell) {
            let s = s as usize;
            if self.contains(prev_new, s) {
                pushed += self.extend(ids, j + 1, s, cell, base.wrapping_add(self.b(j, prev_new, s)), marks);
            }
        }
        pushed
    }
}

/// Marks waiting to be set, in batches: the word of each mark is prefetched
/// a few marks ahead, because a locked write stalls until its cache line
/// arrives and a prefetch does not (the marks land all over the bit set).
pub(crate) struct Marks<'a> {
    bits: &'a [AtomicU64],
    pending: Vec<u64>,
}

impl<'a> Marks<'a> {
    const BATCH: usize = 2048;
    const AHEAD: usize = 16;

    /// Marks for a bit set (bit `i` of word `i / 64`).
    pub(crate) fn new(bits: &'a [AtomicU64]) -> Self {
        Marks { bits, pending: Vec::with_capacity(Self::BATCH) }
    }

    #[inline(always)]
    fn push(&mut self, i: u64) {
        self.pending.push(i);
        if self.pending.len() >= Self::BATCH {
            self.flush();
        }
    }

    /// Sets every pending mark.
    pub(crate) fn flush(&mut self) {
        for &i in self.pending.iter().take(Self::AHEAD) {
            prefetch(&self.bits[(i / 64) as usize]);
        }
        for k in 0..self.pending.len() {
            if let Some(&ahead) = self.pending.get(k + Self::AHEAD) {
                prefetch(&self.bits[(ahead / 64) as usize]);
            }
            let i = self.pending[k];
            let (word, bit) = (&self.bits[(i / 64) as usize], 1u64 << (i % 64));
            if word.load(Ordering::Relaxed) & bit == 0 {
                word.fetch_or(bit, Ordering::Relaxed);
            }
        }
        self.pending.clear();
    }
}
