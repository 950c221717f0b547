//! Dense ranking of the positions of a box.
//!
//! A position is its array of heights `h[0..m]` over the grid
//! `d1 × … × d(k−1)` in row-major order (`m` grid cells, each height in
//! `0..=dk`), non-increasing along every grid axis. With the row-major
//! strides `s1 > … > s(k−1) = 1`, the predecessors of grid cell `t` along the
//! axes are the cells `t − s_i` (where that coordinate is not 0), so whether
//! a value may be written at `t` depends only on the last `W = s1` values:
//! the **window**. The arrays are the words accepted by an automaton whose
//! state at step `t` is the window; the states reachable at each step are
//! found breadth first and numbered.
//!
//! With `count(s)` the number of completions from state `s`, the **index**
//! of an array (its position in lexicographic order among all arrays, the
//! all-zero one, the empty set, being 0) is
//!
//! ```text
//! index(h) = Σ_t before(s_t, h[t]),   before(s, v) = Σ_{u < v} count(next(s, u))
//! ```
//!
//! A child (a move lowers some heights) is lexicographically smaller than
//! its parent, so every child has a smaller index. The **rank** of a
//! nonempty position, as stored in tables, is `index − 1`.

use super::slices::Slices;
use super::{check_dims, dims_text, NdError, MAX_POSITIONS};
use std::collections::HashMap;

/// Most states (times values per state) the automaton may have.
const MAX_ENTRIES: u64 = 1 << 25;
/// Most bytes of windows held while a step's states are found.
const MAX_WINDOW_BYTES: u64 = 1 << 28;

/// The automaton of a box, with rank, unrank and level enumeration.
#[derive(Clone, Debug)]
pub struct NdRanking {
    dims: Vec<u32>,
    /// Number of grid axes, `k − 1`.
    g: usize,
    /// Largest height, `dk`.
    top: u32,
    /// Grid cells.
    m: usize,
    /// Window length `W` (0 for `k = 1`).
    width: usize,
    /// Grid coordinates of cell `t`: `coords[t·g ..][..g]`.
    coords: Vec<u8>,
    /// Predecessor offsets of cell `t`: `pred[pred_start[t]..pred_start[t + 1]]`.
    pred_start: Vec<u32>,
    pred: Vec<u32>,
    /// Per state: largest value allowed.
    cap: Vec<u8>,
    /// Per state: completions (saturating).
    count: Vec<u64>,
    /// Per state: largest sum of the values of a completion.
    maxrem: Vec<u32>,
    /// Per state and value (`top + 1` entries a state): the next state.
    next: Vec<u32>,
    /// Per state and value: completions that sort before that value.
    before: Vec<u64>,
    /// The index by slices, where its tables fit ([`Slices`]).
    slices: Option<Box<Slices>>,
}

/// One step of a walk through the automaton: enough to rank the children of
/// the position walked without starting over.
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// Heights written so far.
    pub h: Vec<u8>,
    /// State before writing `h[t]` (`st[m]` is the final state).
    pub st: Vec<u32>,
    /// Index contribution of `h[..t]`.
    pub pr: Vec<u64>,
    /// Cells still to place (level enumeration only).
    pub rem: Vec<u32>,
}

impl Walk {
    /// The index of the complete position walked.
    pub fn index(&self) -> u64 {
        self.pr[self.pr.len() - 1]
    }
}

/// A piece of a level: the positions whose first `depth` heights are `h`.
#[derive(Clone, Debug)]
pub struct Piece {
    depth: usize,
    h: Vec<u8>,
    st: u32,
    pr: u64,
    rem: u32,
}

impl NdRanking {
    /// Builds the automaton of a box.
    ///
    /// # Errors
    /// [`NdError::Dims`] for bad sides, [`NdError::TooLarge`] for a box with
    /// more than [`MAX_POSITIONS`] positions or an automaton beyond the
    /// memory limits.
    pub fn new(dims: &[u32]) -> Result<Self, NdError> {
        check_dims(dims)?;
        let name = dims_text(dims);
        let too_large = || {
            NdError::TooLarge(format!(
                "the {name} box has more than {MAX_POSITIONS} nonempty positions (the limit of this solver and its tables)"
            ))
        };
        // Any subset of an antichain generates its own down-set: a middle
        // layer of more than 32 cells means more than 2^32 positions. This
        // refuses huge boxes before any allocation.
        if widest_layer(dims) > 32 {
            return Err(too_large());
        }
        let k = dims.len();
        let g = k - 1;
        let grid = &dims[..g];
        let top = dims[g];
        let m: usize = grid.iter().map(|&d| d as usize).product();
        let mut strides = vec![1usize; g];
        for i in (0..g.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * grid[i + 1] as usize;
        }
        let width = if g == 0 { 0 } else { strides[0] };
        let mut coords = Vec::with_capacity(m * g);
        let mut pred_start = Vec::with_capacity(m + 1);
        let mut pred = Vec::new();
        for t in 0..m {
            pred_start.push(pred.len() as u32);
            for i in 0..g {
                let c = (t / strides[i]) % grid[i] as usize;
                coords.push(c as u8);
                if c > 0 {
                    pred.push(strides[i] as u32);
                }
            }
        }
        pred_start.push(pred.len() as u32);

        let vals = top as usize + 1;
        let mut layer = vec![0u32];
        let mut cap = Vec::new();
        let mut next_local: Vec<u32> = Vec::new();
        let mut windows: Vec<Vec<u8>> = vec![vec![top as u8; width]];
        for t in 0..m {
            let last = t + 1 == m;
            let mut index: HashMap<Vec<u8>, u32> = HashMap::new();
            let mut new_windows: Vec<Vec<u8>> = Vec::new();
            for w in &windows {
                let mut c = top;
                for &s in &pred[pred_start[t] as usize..pred_start[t + 1] as usize] {
                    c = c.min(w[width - s as usize] as u32);
                }
                cap.push(c as u8);
                for v in 0..vals as u32 {
                    if v > c {
                        next_local.push(u32::MAX);
                        continue;
                    }
                    if last {
                        next_local.push(0);
                        continue;
                    }
                    let mut nw = Vec::with_capacity(width);
                    if width > 0 {
                        nw.extend_from_slice(&w[1..]);
                        nw.push(v as u8);
                    }
                    let id = *index.entry(nw).or_insert_with_key(|key| {
                        new_windows.push(key.clone());
                        new_windows.len() as u32 - 1
                    });
                    next_local.push(id);
                }
                if new_windows.len() as u64 * (width as u64 + 48) > MAX_WINDOW_BYTES {
                    return Err(NdError::TooLarge(format!(
                        "the {name} box needs a ranking automaton beyond the limit of {MAX_WINDOW_BYTES} bytes (too many positions to solve)"
                    )));
                }
            }
            let states = *layer.last().unwrap() as u64 + windows.len() as u64;
            if states * vals as u64 > MAX_ENTRIES {
                return Err(NdError::TooLarge(format!(
                    "the {name} box needs a ranking automaton beyond the limit of {MAX_ENTRIES} entries (too many positions to solve)"
                )));
            }
            layer.push(states as u32);
            windows = if last { vec![Vec::new()] } else { new_windows };
        }
        // Step m: one final state (its window no longer matters).
        let total_states = *layer.last().unwrap() as usize + 1;
        layer.push(total_states as u32);
        cap.push(0);
        next_local.extend(std::iter::repeat_n(u32::MAX, vals));
        // Local ids of the next step to global ids.
        let mut next = next_local;
        for t in 0..m {
            let base = layer[t + 1];
            for e in &mut next[layer[t] as usize * vals..layer[t + 1] as usize * vals] {
                if *e != u32::MAX {
                    *e += base;
                }
            }
        }
        let mut count = vec![0u64; total_states];
        let mut maxrem = vec![0u32; total_states];
        let mut before = vec![0u64; total_states * vals];
        count[total_states - 1] = 1;
        for s in (0..total_states - 1).rev() {
            let mut acc = 0u64;
            let mut best = 0u32;
            for v in 0..=cap[s] as usize {
                before[s * vals + v] = acc;
                let n = next[s * vals + v] as usize;
                acc = acc.saturating_add(count[n]);
                best = best.max(v as u32 + maxrem[n]);
            }
            for v in cap[s] as usize + 1..vals {
                before[s * vals + v] = acc;
            }
            count[s] = acc;
            maxrem[s] = best;
        }
        if count[0] - 1 > MAX_POSITIONS {
            return Err(too_large());
        }
        let mut ranking =
            NdRanking { dims: dims.to_vec(), g, top, m, width, coords, pred_start, pred, cap, count, maxrem, next, before, slices: None };
        ranking.slices = Slices::new(&ranking)?.map(Box::new);
        debug_assert!(ranking.slices.as_ref().is_none_or(|sl| sl.arrays() == ranking.count[0]));
        Ok(ranking)
    }

    /// Whether children are ranked by slices (else by the automaton).
    pub fn by_slices(&self) -> bool {
        self.slices.is_some()
    }

    /// The slice numbers of the walked position (when ranking by slices).
    pub fn slice_ids(&self, h: &[u8], ids: &mut Vec<u32>) {
        ids.clear();
        if let Some(sl) = &self.slices {
            ids.extend(h.chunks(sl.w).map(|c| sl.rest.index(c).expect("a slice of a position") as u32));
        }
    }

    /// Index of the child of the walked position (`ids` its slice numbers
    /// from [`NdRanking::slice_ids`]) reached by removing every cell
    /// `≥ (x, z)`: by slices when their tables exist, else by the automaton
    /// ([`NdRanking::child_index`]).
    #[inline]
    pub fn child_index_fast(&self, walk: &Walk, ids: &[u32], x: usize, z: u8) -> u64 {
        match &self.slices {
            Some(sl) => sl.child_index(walk.index(), ids, x, z),
            None => self.child_index(walk, x, z),
        }
    }

    /// The slice tables, where they fit.
    pub(crate) fn slices(&self) -> Option<&Slices> {
        self.slices.as_deref()
    }

    /// The sides of the box.
    pub fn dims(&self) -> &[u32] {
        &self.dims
    }

    /// Number of heights of a position (the grid cells, `d1 · … · d(k−1)`).
    pub fn grid_cells(&self) -> usize {
        self.m
    }

    /// Largest height, `dk`.
    pub fn top(&self) -> u32 {
        self.top
    }

    /// Cells of the box.
    pub fn box_cells(&self) -> u32 {
        self.m as u32 * self.top
    }

    /// Nonempty positions of the box (the poisoned origin alone included).
    pub fn positions(&self) -> u64 {
        self.count[0] - 1
    }

    /// States of the automaton (a measure of its size).
    pub fn states(&self) -> usize {
        self.count.len()
    }

    /// Window length of the automaton.
    pub fn window(&self) -> usize {
        self.width
    }

    /// Grid coordinates of grid cell `t`.
    #[inline(always)]
    pub fn coords(&self, t: usize) -> &[u8] {
        &self.coords[t * self.g..(t + 1) * self.g]
    }

    /// The grid cell with these coordinates.
    pub fn grid_index(&self, coords: &[u8]) -> usize {
        coords.iter().zip(&self.dims).fold(0, |acc, (&c, &d)| acc * d as usize + c as usize)
    }

    /// Largest value allowed at cell `t` after the heights `h[..t]`
    /// (the smallest predecessor, or `top`).
    pub fn cap_at(&self, h: &[u8], t: usize) -> u32 {
        let mut c = self.top;
        for &s in &self.pred[self.pred_start[t] as usize..self.pred_start[t + 1] as usize] {
            c = c.min(h[t - s as usize] as u32);
        }
        c
    }

    #[inline(always)]
    pub(crate) fn vals(&self) -> usize {
        self.top as usize + 1
    }

    /// Index of a heights array (0 for the empty position), or `None` when
    /// it is not a position of the box (wrong length, a height above `dk`,
    /// or increasing along an axis).
    pub fn index(&self, h: &[u8]) -> Option<u64> {
        if h.len() != self.m {
            return None;
        }
        let vals = self.vals();
        let (mut s, mut r) = (0usize, 0u64);
        for &v in h {
            if v > self.cap[s] {
                return None;
            }
            r += self.before[s * vals + v as usize];
            s = self.next[s * vals + v as usize] as usize;
        }
        Some(r)
    }

    /// Rank of a nonempty position (`index − 1`), or `None` when it is not a
    /// nonempty position of the box.
    pub fn rank(&self, h: &[u8]) -> Option<u64> {
        self.index(h).filter(|&i| i > 0).map(|i| i - 1)
    }

    /// The heights array of an index, or `None` beyond the last.
    pub fn unindex(&self, mut index: u64) -> Option<Vec<u8>> {
        if index >= self.count[0] {
            return None;
        }
        let vals = self.vals();
        let mut h = Vec::with_capacity(self.m);
        let mut s = 0usize;
        for _ in 0..self.m {
            let mut v = self.cap[s] as usize;
            while self.before[s * vals + v] > index {
                v -= 1;
            }
            index -= self.before[s * vals + v];
            h.push(v as u8);
            s = self.next[s * vals + v] as usize;
        }
        Some(h)
    }

    /// The position of a rank (`0..positions()`).
    pub fn unrank(&self, rank: u64) -> Option<Vec<u8>> {
        self.unindex(rank.checked_add(1)?)
    }

    /// The work units of level `n` (positions of `n` cells): prefixes, in
    /// index order, each covering a run of the level; at least `target` of
    /// them where the level allows.
    pub fn level_units(&self, n: u32, target: usize) -> Vec<Piece> {
        if n > self.maxrem[0] {
            return Vec::new();
        }
        let mut units = vec![Piece { depth: 0, h: Vec::new(), st: 0, pr: 0, rem: n }];
        let vals = self.vals();
        while units.len() < target && units.first().is_some_and(|u| u.depth < self.m) {
            let mut out = Vec::with_capacity(units.len() * vals);
            for u in &units {
                let s = u.st as usize;
                for v in 0..=(self.cap[s] as u32).min(u.rem) {
                    let ns = self.next[s * vals + v as usize];
                    if u.rem - v > self.maxrem[ns as usize] {
                        continue;
                    }
                    let mut h = u.h.clone();
                    h.push(v as u8);
                    out.push(Piece { depth: u.depth + 1, h, st: ns, pr: u.pr + self.before[s * vals + v as usize], rem: u.rem - v });
                }
            }
            units = out;
        }
        units
    }

    /// Calls `f` on every position of a unit in index order, with the walk
    /// that reached it (`walk.h` its heights).
    pub fn for_each_in_unit(&self, unit: &Piece, walk: &mut Walk, mut f: impl FnMut(&Walk)) {
        let m = self.m;
        let vals = self.vals();
        walk.h.clear();
        walk.h.extend_from_slice(&unit.h);
        walk.h.resize(m, 0);
        walk.st.resize(m + 1, 0);
        walk.pr.resize(m + 1, 0);
        walk.rem.resize(m + 1, 0);
        let base = unit.depth;
        walk.st[base] = unit.st;
        walk.pr[base] = unit.pr;
        walk.rem[base] = unit.rem;
        // Rebuild the states and contributions of the prefix, for child ranking.
        let mut s = 0usize;
        let mut r = 0u64;
        for t in 0..base {
            walk.st[t] = s as u32;
            walk.pr[t] = r;
            let v = walk.h[t] as usize;
            r += self.before[s * vals + v];
            s = self.next[s * vals + v] as usize;
        }
        let mut cand = vec![0u32; m + 1];
        let mut t = base;
        loop {
            if t == m {
                f(walk);
                if t == base {
                    return;
                }
                t -= 1;
                continue;
            }
            let s = walk.st[t] as usize;
            let rem = walk.rem[t];
            let cap = (self.cap[s] as u32).min(rem);
            let mut v = cand[t];
            while v <= cap && rem - v > self.maxrem[self.next[s * vals + v as usize] as usize] {
                v += 1;
            }
            if v > cap {
                if t == base {
                    return;
                }
                t -= 1;
                continue;
            }
            walk.h[t] = v as u8;
            cand[t] = v + 1;
            walk.st[t + 1] = self.next[s * vals + v as usize];
            walk.pr[t + 1] = walk.pr[t] + self.before[s * vals + v as usize];
            walk.rem[t + 1] = rem - v;
            t += 1;
            cand[t] = 0;
        }
    }

    /// Index of the child of the walked position reached by removing every
    /// cell `≥ (x, z)` (`x` a grid cell, `z < h[x]`): only heights from `x`
    /// on change, and once the window agrees again with the parent's, past
    /// `x`'s own hyper-row, no later height changes, so the parent's tail of
    /// the index is reused.
    #[inline]
    pub fn child_index(&self, walk: &Walk, x: usize, z: u8) -> u64 {
        let vals = self.vals();
        let xc = self.coords(x);
        let mut r = walk.pr[x];
        let mut s = walk.st[x] as usize;
        let parent = walk.index();
        for t in x..self.m {
            let mut v = walk.h[t];
            if v > z && self.coords(t).iter().zip(xc).all(|(a, b)| a >= b) {
                v = z;
            }
            r += self.before[s * vals + v as usize];
            s = self.next[s * vals + v as usize] as usize;
            if t + 1 >= x + self.width && s == walk.st[t + 1] as usize {
                return r + (parent - walk.pr[t + 1]);
            }
        }
        r
    }
}

/// Size of the largest layer (cells of equal coordinate sum) of a box,
/// saturating at `u64::MAX`.
pub fn widest_layer(dims: &[u32]) -> u64 {
    let mut poly = vec![1u64];
    for &d in dims {
        let mut out = vec![0u64; poly.len() + d as usize - 1];
        for (i, &a) in poly.iter().enumerate() {
            for j in 0..d as usize {
                out[i + j] = out[i + j].saturating_add(a);
            }
        }
        poly = out;
    }
    poly.into_iter().max().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_small_boxes() {
        assert_eq!(NdRanking::new(&[2, 2, 2]).unwrap().positions(), 19);
        assert_eq!(NdRanking::new(&[4, 4, 4]).unwrap().positions(), 232_847);
        assert_eq!(NdRanking::new(&[5]).unwrap().positions(), 5);
        assert_eq!(NdRanking::new(&[3, 5]).unwrap().positions(), 55); // C(8,3) - 1
        assert_eq!(NdRanking::new(&[1, 1, 1]).unwrap().positions(), 1);
    }

    #[test]
    fn index_unindex_roundtrip() {
        for dims in [vec![3, 3, 3], vec![2, 3, 2, 2], vec![4, 2], vec![6], vec![2, 1, 3]] {
            let r = NdRanking::new(&dims).unwrap();
            for i in 0..=r.positions() {
                let h = r.unindex(i).unwrap();
                assert_eq!(r.index(&h), Some(i), "{dims:?} {h:?}");
            }
            assert!(r.unindex(r.positions() + 1).is_none());
        }
    }

    #[test]
    fn levels_cover_the_box_in_order() {
        let r = NdRanking::new(&[3, 2, 3]).unwrap();
        let mut walk = Walk::default();
        let mut seen = vec![false; r.positions() as usize + 1];
        for n in 0..=r.box_cells() {
            let mut last = None;
            for target in [1, 7] {
                for u in r.level_units(n, target) {
                    r.for_each_in_unit(&u, &mut walk, |w| {
                        assert_eq!(w.h.iter().map(|&v| v as u32).sum::<u32>(), n);
                        assert_eq!(r.index(&w.h), Some(w.index()));
                        if target == 1 {
                            assert!(last < Some(w.index()));
                            last = Some(w.index());
                            assert!(!seen[w.index() as usize]);
                            seen[w.index() as usize] = true;
                        }
                    });
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn huge_boxes_are_refused() {
        for dims in [vec![6, 6, 6], vec![2; 15], vec![255, 255, 255], vec![4, 4, 4, 4]] {
            assert!(matches!(NdRanking::new(&dims), Err(NdError::TooLarge(_))), "{dims:?}");
        }
    }
}
