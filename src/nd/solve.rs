//! The solver: every position of a box, level by level.
//!
//! A level is a cell count. A move removes at least one cell, so the
//! children of a level lie in smaller levels, all decided before it: the
//! positions of a level are decided independently of each other, in
//! parallel (the level is cut into units of positions sharing their first
//! heights or slices). One bit per position holds the outcome. Two methods
//! ([`Method`]):
//!
//! - **Sieve** (where the slice tables exist): every loss marks its parents
//!   ([`super::slices`]); the unmarked positions of a level are its losses.
//! - **Search**: a position is a loss when no child is one; the check stops
//!   at the first losing child, trying first the move that won for the
//!   previous position (consecutive positions differ in their last heights,
//!   so it often wins again). Children are ranked incrementally
//!   ([`NdRanking::child_index_fast`]).

use super::position::format_position;
use super::rank::{NdRanking, Walk};
use super::slices::Marks;
use super::NdError;
use crate::read::Outcome;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Positions and losses of one level (cell count) of an n-D box (named
/// apart from [`crate::report::LevelStats`], the statistics of a 2-D run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdLevelCount {
    /// Cells of the positions of the level.
    pub cells: u32,
    /// Positions with that many cells.
    pub positions: u64,
    /// Losing positions among them.
    pub losses: u64,
}

/// Every position of a box decided.
pub struct Solution {
    ranking: NdRanking,
    /// Bit `i`: the position of index `i` is a loss.
    bits: Vec<u64>,
    levels: Vec<NdLevelCount>,
    lookups: u64,
    method: Method,
    view: Option<View>,
}

/// Solves a box.
///
/// # Errors
/// [`NdError`] for bad sides and boxes beyond the limits.
pub fn solve(dims: &[u32]) -> Result<Solution, NdError> {
    solve_with_progress(dims, |_| {})
}

/// Solves a box, calling `on_level` after each level. The game does not
/// change when the axes are renamed, and the slice tables are smallest with
/// the largest side first: the box is solved with its sides in decreasing
/// order, and answers are translated back ([`LossOracle`] speaks the order
/// given).
///
/// # Errors
/// [`NdError`] for bad sides and boxes beyond the limits.
pub fn solve_with_progress(dims: &[u32], on_level: impl FnMut(&NdLevelCount)) -> Result<Solution, NdError> {
    let ranking = NdRanking::new(dims)?;
    let mut perm: Vec<usize> = (0..dims.len()).collect();
    perm.sort_by_key(|&a| std::cmp::Reverse(dims[a]));
    let sorted: Vec<u32> = perm.iter().map(|&a| dims[a]).collect();
    if sorted == dims {
        return Ok(Solution::new_with_progress(ranking, on_level));
    }
    let inner = NdRanking::new(&sorted)?;
    if inner.slices().is_none() && ranking.slices().is_some() {
        return Ok(Solution::new_with_progress(ranking, on_level));
    }
    let mut s = Solution::new_with_progress(inner, on_level);
    s.view = Some(View { ranking, perm });
    Ok(s)
}

/// The box as given, when it was solved with its axes reordered.
struct View {
    /// The ranking of the box as given.
    ranking: NdRanking,
    /// Axis `a` of the solved box is axis `perm[a]` of the given one.
    perm: Vec<usize>,
}

/// The heights, in the box of `to`, of the position with heights `h` in the
/// box of `from`, where axis `a` of `to` is axis `perm[a]` of `from`.
fn permute(h: &[u8], from: &NdRanking, to: &NdRanking, perm: &[usize]) -> Vec<u8> {
    let k = perm.len();
    let mut out = vec![0u8; to.grid_cells()];
    let mut c = vec![0u8; k];
    for (g, &height) in h.iter().enumerate() {
        c[..k - 1].copy_from_slice(from.coords(g));
        for z in 0..height {
            c[k - 1] = z;
            let inner: Vec<u8> = perm[..k - 1].iter().map(|&a| c[a]).collect();
            out[to.grid_index(&inner)] += 1;
        }
    }
    out
}

/// How the positions are decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Push from losses: every loss marks its parents (by slices); the
    /// unmarked positions of a level are its losses. Needs the slice tables.
    Sieve,
    /// Look for a losing child, stopping at the first.
    Search,
}

impl Solution {
    /// Decides every position of a ranked box, its axes as given (the sieve
    /// where the slice tables exist, else the search).
    pub fn new(ranking: NdRanking) -> Self {
        Self::new_with_progress(ranking, |_| {})
    }

    /// Like [`Solution::new`], calling `on_level` after each level.
    pub fn new_with_progress(ranking: NdRanking, on_level: impl FnMut(&NdLevelCount)) -> Self {
        let method = if ranking.slices().is_some() { Method::Sieve } else { Method::Search };
        Self::with_method(ranking, method, on_level)
    }

    /// Decides every position with the given method (the sieve falls back
    /// to the search where the box has no slice tables).
    pub fn with_method(ranking: NdRanking, method: Method, mut on_level: impl FnMut(&NdLevelCount)) -> Self {
        let indices = ranking.positions() + 1;
        let bits: Vec<AtomicU64> = (0..indices.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        let target = 16 * rayon::current_num_threads();
        let mut levels = Vec::new();
        let mut lookups = 0;
        let method = if ranking.slices().is_none() { Method::Search } else { method };
        let orders: Vec<Mutex<Order>> = (0..rayon::current_num_threads()).map(|_| Mutex::new(Order::new(&ranking))).collect();
        for n in 1..=ranking.box_cells() {
            let (positions, losses, looked) = match (method, ranking.slices()) {
                (Method::Sieve, Some(sl)) => sl
                    .level_units(n, target)
                    .par_iter()
                    .map_init(Vec::new, |ids, unit| {
                        // `bits` marks the positions with a losing child (all
                        // in higher levels: a level's bits do not change while
                        // it is scanned).
                        let mut c = (0u64, 0u64, 0u64);
                        let mut marks = Marks::new(&bits);
                        sl.for_each_in_unit(unit, ids, &mut |index, ids| {
                            c.0 += 1;
                            if bits[(index / 64) as usize].load(Ordering::Relaxed) >> (index % 64) & 1 == 0 {
                                c.1 += 1;
                                c.2 += sl.push_parents(ids, index, &mut marks);
                            }
                        });
                        marks.flush();
                        c
                    })
                    .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2)),
                _ => ranking
                    .level_units(n, target)
                    .par_iter()
                    .map_init(
                        || (Walk::default(), Vec::new()),
                        |(walk, ids), unit| {
                            let mut order = orders[rayon::current_thread_index().unwrap_or(0) % orders.len()].lock().unwrap();
                            let mut c = (0u64, 0u64, 0u64);
                            ranking.for_each_in_unit(unit, walk, |w| {
                                c.0 += 1;
                                if decide(&ranking, &bits, w, ids, &mut order, &mut c.2) {
                                    let i = w.index();
                                    bits[(i / 64) as usize].fetch_or(1 << (i % 64), Ordering::Relaxed);
                                    c.1 += 1;
                                }
                            });
                            c
                        },
                    )
                    .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2)),
            };
            lookups += looked;
            let stats = NdLevelCount { cells: n, positions, losses };
            on_level(&stats);
            levels.push(stats);
        }
        let mut bits: Vec<u64> = bits.into_iter().map(AtomicU64::into_inner).collect();
        if method == Method::Sieve {
            // Marked = has a losing child = win: the losses are the other indices 1..=positions.
            for word in &mut bits {
                *word = !*word;
            }
            bits[0] &= !1;
            let tail = indices % 64;
            if tail != 0 {
                *bits.last_mut().unwrap() &= (1u64 << tail) - 1;
            }
        }
        Solution { ranking, bits, levels, lookups, method, view: None }
    }

    /// The method that decided the positions.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Positions and losses by cell count, `1..=` the box's cells.
    pub fn levels(&self) -> &[NdLevelCount] {
        &self.levels
    }

    /// Children looked up (search) or parents marked (sieve) while solving.
    pub fn lookups(&self) -> u64 {
        self.lookups
    }

    /// The sides as solved (decreasing when [`solve`] reordered them).
    pub fn solved_dims(&self) -> &[u32] {
        self.ranking.dims()
    }

    /// Ranks (`index − 1`) of the losing positions in the box as given,
    /// increasing.
    pub fn loss_ranks(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        let Some(v) = &self.view else { return Box::new(self.solved_loss_ranks()) };
        // Ranks are below 2^32 (MAX_POSITIONS): 4 bytes each.
        let back: Vec<usize> = (0..v.perm.len()).map(|a| v.perm.iter().position(|&p| p == a).unwrap()).collect();
        let mut ranks: Vec<u32> = self.solved_loss_ranks().map(|k| k as u32).collect();
        ranks.par_iter_mut().for_each(|k| {
            let h = self.ranking.unrank(*k as u64).expect("a rank of the box");
            *k = v.ranking.rank(&permute(&h, &self.ranking, &v.ranking, &back)).expect("a position of the box") as u32;
        });
        ranks.par_sort_unstable();
        Box::new(ranks.into_iter().map(u64::from))
    }

    fn solved_loss_ranks(&self) -> impl Iterator<Item = u64> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let b = word.trailing_zeros() as u64;
                word &= word - 1;
                Some(w as u64 * 64 + b - 1)
            })
        })
    }
}

/// Per-worker memory of the search: the move that won last (consecutive
/// positions differ in their last heights, so it often wins again).
struct Order {
    killer: Option<(usize, u8)>,
}

impl Order {
    fn new(_: &NdRanking) -> Self {
        Order { killer: None }
    }
}

/// Whether the walked position is a loss: no child is one. Tries the last
/// winning move first, then every move, grid cells and heights increasing.
#[inline]
fn decide(r: &NdRanking, bits: &[AtomicU64], w: &Walk, ids: &mut Vec<u32>, o: &mut Order, lookups: &mut u64) -> bool {
    r.slice_ids(&w.h, ids);
    let loss = |i: u64| bits[(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64) & 1 == 1;
    if let Some((x, z)) = o.killer {
        if z < w.h[x] {
            *lookups += 1;
            if loss(r.child_index_fast(w, ids, x, z)) {
                return false;
            }
        }
    }
    for x in 0..r.grid_cells() {
        for z in (x == 0) as u8..w.h[x] {
            if Some((x, z)) == o.killer {
                continue;
            }
            *lookups += 1;
            if loss(r.child_index_fast(w, ids, x, z)) {
                o.killer = Some((x, z));
                return false;
            }
        }
    }
    true
}

/// Something that knows the outcome of every position of a box: a
/// [`Solution`] or tables read from disk ([`super::table::NdTables`]).
pub trait LossOracle {
    /// The ranking of the box.
    fn ranking(&self) -> &NdRanking;

    /// Whether the position of this index is a loss (the empty position,
    /// index 0, is not).
    fn is_loss_index(&self, index: u64) -> bool;

    /// Losing positions of the box.
    fn losses(&self) -> u64;

    /// Outcome of a position, `None` when it is not a nonempty position of the box.
    fn outcome(&self, h: &[u8]) -> Option<Outcome> {
        let i = self.ranking().index(h).filter(|&i| i > 0)?;
        Some(if self.is_loss_index(i) { Outcome::Loss } else { Outcome::Win })
    }

    /// The winning moves of a position (moves to a loss), sorted cells.
    fn winning_moves(&self, h: &[u8]) -> Vec<Vec<u32>> {
        moves(self.ranking(), h).into_iter().filter(|(_, child)| self.outcome(child) == Some(Outcome::Loss)).map(|(cell, _)| cell).collect()
    }

    /// Everything about one position.
    fn analyse(&self, h: &[u8]) -> Option<Analysis> {
        let outcome = self.outcome(h)?;
        Some(Analysis {
            position: format_position(self.ranking(), h),
            cells: h.iter().map(|&v| v as u32).sum(),
            outcome,
            moves: moves(self.ranking(), h).len(),
            winning_moves: self.winning_moves(h),
        })
    }

    /// Checks the game's rule on one position: a loss has no losing child, a
    /// win has one. Returns a description of the fault.
    fn check(&self, h: &[u8]) -> Option<String> {
        let outcome = self.outcome(h)?;
        let winning = self.winning_moves(h).len();
        match (outcome, winning) {
            (Outcome::Loss, 0) | (Outcome::Win, 1..) => None,
            (Outcome::Loss, n) => {
                Some(format!("position {} is marked a loss but has {n} winning moves", format_position(self.ranking(), h)))
            }
            (Outcome::Win, _) => Some(format!("position {} is marked a win but has no winning move", format_position(self.ranking(), h))),
        }
    }
}

impl LossOracle for Solution {
    fn ranking(&self) -> &NdRanking {
        self.view.as_ref().map_or(&self.ranking, |v| &v.ranking)
    }

    fn is_loss_index(&self, index: u64) -> bool {
        let index = match &self.view {
            None => index,
            Some(v) => match v.ranking.unindex(index) {
                Some(h) if index > 0 => {
                    self.ranking.index(&permute(&h, &v.ranking, &self.ranking, &v.perm)).expect("a position of the box")
                }
                _ => return false,
            },
        };
        self.bits.get((index / 64) as usize).is_some_and(|w| w >> (index % 64) & 1 == 1)
    }

    fn losses(&self) -> u64 {
        self.levels.iter().map(|l| l.losses).sum()
    }
}

/// What [`LossOracle::analyse`] tells about a position.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The position in the syntax of [`super::position`].
    pub position: String,
    /// Its cells.
    pub cells: u32,
    /// Win or loss for the player to move.
    pub outcome: Outcome,
    /// Number of moves.
    pub moves: usize,
    /// The moves to a loss, sorted cells.
    pub winning_moves: Vec<Vec<u32>>,
}

/// Every move of a position: the cell (grid coordinates, then the height
/// level) and the heights after it, cells in lexicographic order. Computed
/// directly (not with the solver's incremental ranking).
pub fn moves(r: &NdRanking, h: &[u8]) -> Vec<(Vec<u32>, Vec<u8>)> {
    let m = r.grid_cells();
    let mut out = Vec::new();
    for x in 0..m.min(h.len()) {
        for z in (x == 0) as u8..h[x] {
            let mut child = h.to_vec();
            for (t, c) in child.iter_mut().enumerate().skip(x) {
                if r.coords(t).iter().zip(r.coords(x)).all(|(a, b)| a >= b) {
                    *c = (*c).min(z);
                }
            }
            let mut cell: Vec<u32> = r.coords(x).iter().map(|&c| c as u32).collect();
            cell.push(z as u32);
            out.push((cell, child));
        }
    }
    out
}

/// The full box as heights.
pub fn full_box(r: &NdRanking) -> Vec<u8> {
    vec![r.top() as u8; r.grid_cells()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cube() {
        let s = solve(&[2, 2, 2]).unwrap();
        assert_eq!(s.ranking().positions(), 19);
        assert_eq!(s.losses(), 5);
        assert_eq!(s.winning_moves(&full_box(s.ranking())), vec![vec![1, 1, 1]]);
        assert_eq!(s.loss_ranks().count(), 5);
    }

    #[test]
    fn engines_agree() {
        for dims in [vec![3, 3, 3], vec![2, 3, 2, 2], vec![3, 5], vec![1, 4, 2], vec![4, 1], vec![2, 2, 2, 2, 2], vec![3, 2, 4]] {
            let a = Solution::with_method(NdRanking::new(&dims).unwrap(), Method::Sieve, |_| {});
            let b = Solution::with_method(NdRanking::new(&dims).unwrap(), Method::Search, |_| {});
            assert_eq!((a.method(), b.method()), (Method::Sieve, Method::Search));
            assert_eq!(a.bits, b.bits, "{dims:?}");
            assert_eq!(a.levels, b.levels, "{dims:?}");
        }
    }

    #[test]
    fn one_dimension() {
        let s = solve(&[6]).unwrap();
        assert_eq!((s.ranking().positions(), s.losses()), (6, 1));
        assert_eq!(s.winning_moves(&[6]), vec![vec![1]]);
        assert_eq!(s.outcome(&[1]), Some(Outcome::Loss));
        assert_eq!(s.outcome(&[0]), None);
    }

    #[test]
    fn incremental_child_ranks_agree_with_direct_ones() {
        for dims in [vec![3, 3, 3], vec![2, 3, 2, 2], vec![3, 4], vec![2, 2, 1, 3], vec![4, 2, 3], vec![1, 3, 2]] {
            let r = NdRanking::new(&dims).unwrap();
            assert!(r.by_slices());
            let mut walk = Walk::default();
            let mut ids = Vec::new();
            for n in 1..=r.box_cells() {
                for u in r.level_units(n, 4) {
                    r.for_each_in_unit(&u, &mut walk, |w| {
                        r.slice_ids(&w.h, &mut ids);
                        for (cell, child) in moves(&r, &w.h) {
                            let x = r.grid_index(&cell[..cell.len() - 1].iter().map(|&c| c as u8).collect::<Vec<_>>());
                            let z = cell[cell.len() - 1] as u8;
                            let want = r.index(&child).unwrap();
                            assert_eq!(r.child_index(w, x, z), want, "{dims:?} {:?} {cell:?}", w.h);
                            assert_eq!(r.child_index_fast(w, &ids, x, z), want, "{dims:?} {:?} {cell:?}", w.h);
                        }
                    });
                }
            }
        }
    }
}
