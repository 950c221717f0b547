//! Sprague–Grundy values (misère convention, `docs/math.md`): the mex of the
//! values of all children, eating the poison excluded.
//!
//! Level `n` is computed from the value files of smaller levels, read in
//! place through memory maps. Every child's rank is derived from its
//! parent's row data: for the move `(a, b)` the rows above `a` keep their
//! value (their suffix shrinks by the tiles removed), rows `a..j` become `b`
//! and rows from `j` on keep their contribution to the parent's rank.
//! In symmetric universes only canonical positions are evaluated; the value
//! is stored for the conjugate too.

use crate::cluster::Comm;
use crate::index::{split, Changes, Ranking};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// Largest level whose values are guaranteed to fit a byte (the single row of
/// `n` tiles has value `n − 1`).
pub const MAX_GRUNDY_TILES: u32 = 256;

/// A value of 256 or more appeared: the one-byte encoding cannot hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a Grundy value at {tiles} tiles reached 256, beyond the one-byte table encoding")]
pub struct GrundyOverflow {
    /// The level.
    pub tiles: u32,
}

/// This process's work on a level.
pub struct LevelGrundy {
    /// Positions whose value this process computed from their children.
    pub evaluated: u64,
    /// Child look-ups performed.
    pub lookups: u64,
    /// When asked to count: the positions of this process's share by their
    /// number of children of value 0, their winning moves (`moves[k]`: the
    /// positions with `k`; `n` entries, since a position of `n` tiles has at
    /// most `n − 1` moves; a canonical position counts for its conjugate too).
    pub moves: Option<Vec<u64>>,
}

/// Computes this process's share of level `n` into `out` (one cell per rank
/// of the level, zero-initialised); other cells stay zero, so OR-merging the
/// processes' arrays assembles the level. `lower[m]` holds the values of level
/// `m` for every `m < n` (index 0 unused).
///
/// # Errors
/// [`GrundyOverflow`] if a value does not fit a byte.
/// With `count_moves`, also counts the positions by their children of value
/// 0 ([`LevelGrundy::moves`]).
pub fn grundy_level(
    ranking: &Ranking,
    n: u32,
    lower: &[&[u8]],
    out: &[AtomicU8],
    comm: &dyn Comm,
    count_moves: bool,
) -> Result<LevelGrundy, GrundyOverflow> {
    // A child of a level-n position has at most n − 2 moves, so a value of at most n − 2.
    match (n, count_moves) {
        (..=65, false) => level_with::<Seen64>(ranking, n, lower, out, comm),
        (..=129, false) => level_with::<Seen128>(ranking, n, lower, out, comm),
        (_, false) => level_with::<Seen256>(ranking, n, lower, out, comm),
        (..=65, true) => level_with::<Zeros<Seen64>>(ranking, n, lower, out, comm),
        (..=129, true) => level_with::<Zeros<Seen128>>(ranking, n, lower, out, comm),
        (_, true) => level_with::<Zeros<Seen256>>(ranking, n, lower, out, comm),
    }
}

/// A task's positions evaluated, look-ups, and positions by their number of
/// children of value 0 (empty unless counting).
type Share = (u64, u64, Vec<u64>);

fn level_with<S: Seen>(
    ranking: &Ranking,
    n: u32,
    lower: &[&[u8]],
    out: &[AtomicU8],
    comm: &dyn Comm,
) -> Result<LevelGrundy, GrundyOverflow> {
    let sym = ranking.universe().is_symmetric();
    // Where each smaller level's values start, for the child addresses of `Scratch::moves`.
    let bases: Vec<usize> = lower.iter().map(|l| l.as_ptr().expose_provenance()).collect();
    let lens: Vec<usize> = lower.iter().map(|l| l.len()).collect();
    let lower = Lower { bases: &bases, lens: &lens };
    let results: Vec<Result<Share, GrundyOverflow>> =
        split::level_share(ranking, n, if sym { split::Balance::Canonical } else { split::Balance::All }, comm.process(), comm.processes())
            .par_iter()
            .map_init(
                || Scratch::new(sym),
                |scratch, prefix| {
                    let (mut evaluated, mut lookups) = (0u64, 0u64);
                    // Positions by their number of children of value 0.
                    let mut zeros = vec![0u64; if S::COUNTS { n.max(1) as usize } else { 0 }];
                    let mut overflow = false;
                    let mut visit = Changes(|rank, rows: &[u8], same| {
                        let (g, looked, z) = value_of::<S>(ranking, n, rows, rank, same, &lower, scratch);
                        lookups += looked;
                        evaluated += 1;
                        if S::COUNTS {
                            zeros[z as usize] += if sym && rows.len() < rows[0] as usize { 2 } else { 1 };
                        }
                        if g > 255 {
                            overflow = true;
                            return;
                        }
                        out[rank as usize].store(g as u8, Ordering::Relaxed);
                        if sym && rows.len() < rows[0] as usize {
                            out[scratch.conjugate as usize].store(g as u8, Ordering::Relaxed);
                        }
                    });
                    ranking.walk(n, prefix, sym, &mut visit);
                    if overflow {
                        Err(GrundyOverflow { tiles: n })
                    } else {
                        Ok((evaluated, lookups, zeros))
                    }
                },
            )
            .collect();
    let mut total = LevelGrundy { evaluated: 0, lookups: 0, moves: S::COUNTS.then(|| vec![0; n.max(1) as usize]) };
    for r in results {
        let (e, l, z) = r?;
        total.evaluated += e;
        total.lookups += l;
        if let Some(moves) = &mut total.moves {
            moves.iter_mut().zip(z).for_each(|(m, z)| *m += z);
        }
    }
    Ok(total)
}

/// `histogram[g]` = number of values `g`, without trailing zero counts.
pub fn histogram(values: &[u8]) -> Vec<u64> {
    let mut h = vec![0u64; 256];
    for &g in values {
        h[g as usize] += 1;
    }
    without_trailing_zeros(h)
}

/// `counts` without its trailing zero counts (one count kept).
pub fn without_trailing_zeros(mut counts: Vec<u64>) -> Vec<u64> {
    while counts.len() > 1 && counts.last() == Some(&0) {
        counts.pop();
    }
    counts
}

/// Most rows of a position whose value is computed (one per tile).
const ROWS: usize = MAX_GRUNDY_TILES as usize;

/// Per-task state of the child-rank computation, kept across the positions
/// of one walk (consecutive positions share their top rows; the walk says
/// how many, so a position rebuilds only what lies below them).
struct Scratch {
    /// The level the tables below are sized for.
    n: u32,
    /// `pre[i]`: tiles in rows `0..i`.
    pre: [u32; ROWS + 1],
    /// `head[a * (n + 1) + m]`: contribution of rows `0..a` (unchanged) to the
    /// rank of a position with `m` tiles, `Σ_{i<a} contribution(m − pre_i, i, p_i)`,
    /// for `pre_a <= m <= n`. It depends on rows `0..a` only, so it survives
    /// from one position to the next down to their first differing row. At
    /// `m = n` it is the parent's own rank less the contribution of rows `a..`.
    head: Vec<u64>,
    /// `moves[off[j] + (b − 1) * j + a]`, for `1 <= j < k`, `1 <= b < p_{j−1}`
    /// and `a < j`: the address of the value of the child `(a, b)` less the
    /// parent's rank, for every parent whose rows `0..j` are these and whose
    /// rows `j..` are at most `b` (so they stay). Such a child keeps the
    /// parent's rows `j..` at the same rows with the same tiles below them,
    /// so their contribution is the parent's and cancels: the entry depends
    /// on rows `0..j` only and survives like `head`. A parent then reads the
    /// moves of rows `j..k` as one run of entries per `j`.
    moves: Vec<usize>,
    /// The level of each entry of `moves` (debug builds: every read is
    /// checked against that level's values).
    #[cfg(debug_assertions)]
    moves_level: Vec<usize>,
    /// `off[j]`: where the entries of `j` start (`off[1] = 0`; `off[j + 1]`
    /// depends on rows `0..j`).
    off: [usize; ROWS + 2],
    /// Whether to keep the conjugate's rank (symmetric universes).
    sym: bool,
    /// `columns[coff[i] + x]`, for `1 <= i <= k` and `x <= p_{i−1}`: the
    /// contribution to the conjugate's rank of columns `x..p_{i−1}`, read as
    /// columns of height `i` (as they are for `x >= p_i`). The tiles right of
    /// them are in rows `0..i−1`, so an entry depends on rows `0..i` only and
    /// survives like `head`.
    columns: Vec<u64>,
    /// `coff[i]`: where the entries of `i` start (`coff[1] = 0`; `coff[i + 1]`
    /// depends on rows `0..i`).
    coff: [usize; ROWS + 2],
    /// `part[i]`: the contribution of the columns `p_i..` (height at most `i`).
    part: [u64; ROWS + 1],
    /// The rank of the conjugate of the last prepared position (when `sym`).
    conjugate: u64,
}

impl Scratch {
    fn new(sym: bool) -> Scratch {
        Scratch {
            n: 0,
            pre: [0; ROWS + 1],
            head: Vec::new(),
            moves: Vec::new(),
            #[cfg(debug_assertions)]
            moves_level: Vec::new(),
            off: [0; ROWS + 2],
            sym,
            columns: Vec::new(),
            coff: [0; ROWS + 2],
            part: [0; ROWS + 1],
            conjugate: 0,
        }
    }

    /// Brings `pre`, `head` and `moves` up to date for the position `p` of
    /// level `n`, whose rows `0..same` are those of the position prepared
    /// last; `bases[m]` is the address of level `m`'s values.
    fn prepare(&mut self, rk: &Ranking, n: u32, p: &[u8], same: usize, bases: &[usize]) {
        let k = p.len();
        let stride = n as usize + 1;
        let same = if self.n == n {
            same
        } else {
            self.n = n;
            // A row a exists only when n > a: n rows of heads suffice.
            self.head.clear();
            self.head.resize(stride * stride, 0);
            0
        };
        for (i, &len) in p.iter().enumerate().skip(same) {
            self.pre[i + 1] = self.pre[i] + len as u32;
        }
        // head[a] is needed for a < k; those of a <= same stay.
        for a in same + 1..k {
            let (pa, lo) = (self.pre[a - 1] as usize, self.pre[a] as usize);
            let row = &rk.contributions(a as u32 - 1, p[a - 1] as u32)[lo - pa..stride - pa];
            let (done, rest) = self.head.split_at_mut(a * stride);
            let from = &done[(a - 1) * stride + lo..a * stride];
            for ((to, &from), &c) in rest[lo..stride].iter_mut().zip(from).zip(row) {
                *to = from + c;
            }
        }
        // The entries of j depend on rows 0..j: those of j <= same stay, and
        // so do their offsets up to off[same + 1].
        for j in (same + 2).max(2)..=k {
            self.off[j] = self.off[j - 1] + (j - 1) * (p[j - 2] as usize - 1);
        }
        if self.moves.len() < self.off[k] {
            self.moves.resize(self.off[k], 0);
            #[cfg(debug_assertions)]
            self.moves_level.resize(self.off[k], 0);
        }
        let (pre, head) = (&self.pre[..], &self.head[..]);
        for j in (same + 1).max(1)..k {
            let own = head[j * stride + n as usize];
            let suf_j = n - pre[j];
            let entries = &mut self.moves[self.off[j]..self.off[j + 1]];
            for (b, row) in (1..p[j - 1] as u32).zip(entries.chunks_exact_mut(j)) {
                let mut mid = 0u64;
                let mut m = suf_j;
                for a in (0..j).rev() {
                    mid += rk.contribution(m + b, a as u32, b);
                    m += b;
                    let child = (pre[a] + m) as usize;
                    let rank = head[a * stride + child] + mid;
                    row[a] = bases[child].wrapping_add(rank.wrapping_sub(own) as usize);
                    #[cfg(debug_assertions)]
                    {
                        self.moves_level[self.off[j] + (b as usize - 1) * j + a] = child;
                    }
                }
            }
        }
        if self.sym {
            self.conjugate_from(rk, p, same);
        }
    }

    /// The conjugate's rank, summed over its rows (the columns of `p`) from
    /// the last: columns `p_i..p_{i−1}` have height `i` and the tiles right of
    /// column `x` number `S_x`, so each adds `contribution(S_x, x, i)`. Only
    /// the groups below the first changed row are summed again.
    fn conjugate_from(&mut self, rk: &Ranking, p: &[u8], same: usize) {
        let k = p.len();
        for i in (same + 2).max(2)..=k + 1 {
            self.coff[i] = self.coff[i - 1] + p[i - 2] as usize + 1;
        }
        if self.columns.len() < self.coff[k + 1] {
            self.columns.resize(self.coff[k + 1], 0);
        }
        for i in (same + 1).max(1)..=k {
            let (top, h) = (p[i - 1] as u32, i as u32);
            let right = self.pre[i - 1] - (h - 1) * top;
            let group = &mut self.columns[self.coff[i]..=self.coff[i] + top as usize];
            group[top as usize] = 0;
            let mut acc = 0;
            for x in (0..top).rev() {
                acc += rk.contribution(right + (top - x) * h, x, h);
                group[x as usize] = acc;
            }
        }
        // part[i] depends on rows 0..=i; part[0] = 0 always.
        for (i, &row) in p.iter().enumerate().skip(same.max(1)) {
            self.part[i] = self.part[i - 1] + self.columns[self.coff[i] + row as usize];
        }
        self.conjugate = self.part[k - 1] + self.columns[self.coff[k]];
    }
}

/// The set of values seen among a position's children, sized for a level.
trait Seen: Default {
    /// Whether [`Seen::zeros`] counts.
    const COUNTS: bool = false;
    fn insert(&mut self, g: u8);
    fn mex(&self) -> u32;
    /// The children of value 0 inserted (0 unless [`Seen::COUNTS`]).
    fn zeros(&self) -> u32 {
        0
    }
}

/// A [`Seen`] that also counts the children of value 0: the position's
/// winning moves, for the check of the sieve's counts.
#[derive(Default)]
struct Zeros<S>(S, u32);

impl<S: Seen> Seen for Zeros<S> {
    const COUNTS: bool = true;
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        self.1 += u32::from(g == 0);
        self.0.insert(g);
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        self.0.mex()
    }
    fn zeros(&self) -> u32 {
        self.1
    }
}

/// Values below 64 (levels to 65).
#[derive(Default)]
struct Seen64(u64);

impl Seen for Seen64 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        debug_assert!(g < 64);
        self.0 |= 1 << (g & 63);
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        self.0.trailing_ones()
    }
}

/// Values below 128 (levels to 129), in two registers without branches.
#[derive(Default)]
struct Seen128(u64, u64);

impl Seen for Seen128 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        debug_assert!(g < 128);
        let bit = 1u64 << (g & 63);
        let upper = (g >> 6) as u64 & 1;
        self.0 |= bit & upper.wrapping_sub(1);
        self.1 |= bit & upper.wrapping_neg();
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        if self.0 != u64::MAX {
            self.0.trailing_ones()
        } else {
            64 + self.1.trailing_ones()
        }
    }
}

/// Any byte value.
#[derive(Default)]
struct Seen256([u64; 4]);

impl Seen for Seen256 {
    #[inline(always)]
    fn insert(&mut self, g: u8) {
        self.0[(g >> 6) as usize] |= 1 << (g & 63);
    }
    #[inline(always)]
    fn mex(&self) -> u32 {
        let mut mex = 0;
        for w in self.0 {
            mex += w.trailing_ones();
            if w != u64::MAX {
                break;
            }
        }
        mex
    }
}

/// The values of the smaller levels, read by address in the hot loop.
struct Lower<'a> {
    /// `bases[m]`: the address of level `m`'s first value.
    bases: &'a [usize],
    /// `lens[m]`: level `m`'s values.
    lens: &'a [usize],
}

impl Lower<'_> {
    /// The value at address `at`, a value of level `level`. Debug builds
    /// (and tests) assert that `at` lies inside that level's values;
    /// release builds read unchecked (`level` is not even kept there).
    #[inline(always)]
    fn value(&self, level: usize, at: usize) -> u8 {
        debug_assert!(
            at.wrapping_sub(self.bases[level]) < self.lens[level],
            "a child's value read outside level {level}'s values (offset {} of {})",
            at.wrapping_sub(self.bases[level]) as isize,
            self.lens[level]
        );
        // SAFETY: `at` is the address of a child's value: the start of its
        // level's slice (`bases`, from `lower`, alive for the whole level
        // pass) plus the child's rank within that level, which is below the
        // level's size since the child is a position of that level (checked
        // in debug builds and tests above).
        unsafe { *std::ptr::with_exposed_provenance::<u8>(at) }
    }
}

/// Value of one position from the values of its children; returns (value,
/// children looked up, children of value 0 when `S` counts them).
///
/// The moves are taken by column `b` of the bite, then by row `a` upwards.
/// Columns `p_j..p_{j−1}` (`p_k = 0`) share `j`, the first row that a bite
/// there leaves whole. For `j < k` the children's addresses less the rank
/// are in `Scratch::moves`. For `j = k` (bites into the last row) the rows
/// `a..k` that become `b` grow by one as `a` decreases, so their contribution
/// is one more term per move; the rows above `a` come from `head`.
fn value_of<S: Seen>(rk: &Ranking, n: u32, p: &[u8], rank: u64, same: usize, lower: &Lower<'_>, s: &mut Scratch) -> (u32, u64, u32) {
    let k = p.len();
    if n == 1 {
        return (0, 0, 0);
    }
    let bases = lower.bases;
    s.prepare(rk, n, p, same, bases);
    let (pre, head) = (&s.pre[..], &s.head[..]);
    let stride = n as usize + 1;
    let mut seen = S::default();
    // b = 0: the child is rows 0..a (a ≥ 1; a = 0 eats the poison).
    for a in 1..k {
        let m = pre[a] as usize;
        seen.insert(lower.value(m, bases[m] + head[a * stride + m] as usize));
    }
    for b in 1..p[k - 1] as u32 {
        let mut mid = 0u64;
        let mut m = 0;
        for a in (0..k).rev() {
            // The child keeps rows 0..a, with k − a rows of b below.
            mid += rk.contribution(m + b, a as u32, b);
            m += b;
            let child = (pre[a] + m) as usize;
            seen.insert(lower.value(child, bases[child] + (head[a * stride + child] + mid) as usize));
        }
    }
    for j in 1..k {
        let at = s.off[j];
        let run = at + (p[j] as usize - 1) * j..at + (p[j - 1] as usize - 1) * j;
        // Debug builds check each read against its child's level; release
        // builds read as before the checks (the level is not kept there).
        #[cfg(debug_assertions)]
        for (&e, &level) in s.moves[run.clone()].iter().zip(&s.moves_level[run]) {
            seen.insert(lower.value(level, e.wrapping_add(rank as usize)));
        }
        #[cfg(not(debug_assertions))]
        for &e in &s.moves[run] {
            seen.insert(lower.value(0, e.wrapping_add(rank as usize)));
        }
    }
    (seen.mex(), n as u64 - 1, seen.zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{position::conjugate_rows, Universe};

    /// Debug builds and tests check every child read against its level's
    /// values: one past the end, or one before the start, panics.
    #[test]
    #[cfg(debug_assertions)]
    fn a_child_read_outside_its_level_is_caught() {
        let (a, b) = (vec![1u8, 2, 3, 4], vec![9u8; 2]);
        let bases = [a.as_ptr().expose_provenance(), b.as_ptr().expose_provenance()];
        let lower = Lower { bases: &bases, lens: &[4, 2] };
        assert_eq!((lower.value(0, bases[0] + 3), lower.value(1, bases[1])), (4, 9));
        for (level, at) in [(0, bases[0] + 4), (1, bases[1].wrapping_sub(1)), (1, bases[0])] {
            let e = std::panic::catch_unwind(|| lower.value(level, at)).unwrap_err();
            assert!(e.downcast_ref::<String>().unwrap().contains(&format!("outside level {level}")));
        }
    }

    /// The conjugate's rank kept across a walk is the rank of the conjugate,
    /// for every position visited in walk order (prefix by prefix, as the
    /// level pass visits them).
    #[test]
    fn conjugate_rank_is_the_rank_of_the_conjugate() {
        for universe in [Universe::tiles(24), Universe::boxed(7, 7)] {
            let rk = Ranking::new(&universe).unwrap();
            for n in 1..=rk.max_tiles() {
                let bases = vec![0usize; n as usize];
                let mut scratch = Scratch::new(true);
                let mut seen = 0;
                for top in 1..=n.min(rk.max_part()) {
                    rk.walk(
                        n,
                        &[top as u8],
                        true,
                        &mut Changes(|_, rows: &[u8], same| {
                            scratch.prepare(&rk, n, rows, same, &bases);
                            assert_eq!(scratch.conjugate, rk.rank_rows(&conjugate_rows(rows)), "{rows:?}");
                            seen += 1;
                        }),
                    );
                }
                assert!(seen > 0 || rk.size(n) == 0);
            }
        }
    }
}
