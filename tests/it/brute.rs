//! An independent brute-force Chomp solver, compared with the engine.
//!
//! Nothing here uses the engine's sieve, Grundy pass or ranking to decide a
//! position: positions are plain `Vec<u32>` row lengths, partitions are
//! generated here, children follow the move definition of `chomp.md`
//! literally, and outcomes and misère Grundy values are memoised in a
//! `HashMap`. The engine is only driven (`job::run`) and probed
//! (`probe::Tables`), and its answers are compared position by position.

use chomp_tables::job::{self, Options, Plan};
use chomp_tables::probe::{Outcome, Tables};
use chomp_tables::{Position, Universe};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;
use tempfile::TempDir;

type Rows = Vec<u32>;

/// Every partition of `n` with parts at most `max_part` and at most `max_rows` parts.
fn partitions(n: u32, max_part: u32, max_rows: u32) -> Vec<Rows> {
    fn rec(rem: u32, max_part: u32, rows_left: u32, cur: &mut Rows, out: &mut Vec<Rows>) {
        if rem == 0 {
            out.push(cur.clone());
            return;
        }
        if rows_left == 0 {
            return;
        }
        for v in 1..=max_part.min(rem) {
            cur.push(v);
            rec(rem - v, v, rows_left - 1, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(n, max_part, max_rows, &mut Vec::new(), &mut out);
    out
}

/// The position after biting at `(a, b)`: every cell `(i, j)` with `i >= a`
/// and `j >= b` is removed. Row `i` keeps `j < b` cells when `i >= a`.
fn bite(p: &[u32], a: usize, b: u32) -> Rows {
    let mut child = Vec::with_capacity(p.len());
    for (i, &len) in p.iter().enumerate() {
        let kept = if i >= a { (0..len).filter(|&j| j < b).count() as u32 } else { len };
        if kept > 0 {
            child.push(kept);
        }
    }
    child
}

/// Every move `(a, b)` (poison excluded) with its child.
fn children(p: &[u32]) -> Vec<((u32, u32), Rows)> {
    let mut out = Vec::new();
    for (a, &len) in p.iter().enumerate() {
        for b in 0..len {
            if (a, b) != (0, 0) {
                out.push(((a as u32, b), bite(p, a, b)));
            }
        }
    }
    out
}

fn tiles(p: &[u32]) -> u32 {
    p.iter().sum()
}

/// Memoised outcome (by the win/loss recursion) and Grundy value (by mex),
/// computed separately so that each checks the other.
#[derive(Default)]
struct Brute {
    memo: HashMap<Rows, (bool, u32)>,
}

impl Brute {
    /// `(is_loss, grundy)` of a position.
    fn eval(&mut self, p: &[u32]) -> (bool, u32) {
        if let Some(&v) = self.memo.get(p) {
            return v;
        }
        let mut has_losing_child = false;
        let mut seen = vec![false; tiles(p) as usize + 1];
        for (_, child) in children(p) {
            let (loss, g) = self.eval(&child);
            has_losing_child |= loss;
            seen[g as usize] = true;
        }
        let g = seen.iter().position(|&s| !s).unwrap() as u32;
        let loss = !has_losing_child;
        assert_eq!(loss, g == 0, "brute force itself: outcome and Grundy value disagree at {p:?}");
        self.memo.insert(p.to_vec(), (loss, g));
        (loss, g)
    }

    fn is_loss(&mut self, p: &[u32]) -> bool {
        self.eval(p).0
    }

    fn winning_moves(&mut self, p: &[u32]) -> Vec<[u32; 2]> {
        children(p).into_iter().filter(|(_, c)| self.is_loss(c)).map(|((a, b), _)| [a, b]).collect()
    }
}

/// Runs the engine on a plan into a fresh temporary directory.
fn solve(universe: Universe, grundy_max_tiles: u32) -> (Tables, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let plan = Plan { universe, grundy_max_tiles };
    let manifest = job::run(&plan, &Options::new(out.clone()), |_| {}).expect("engine run");
    assert!(manifest.complete);
    (Tables::open(&out).expect("open tables"), dir)
}

fn position(rows: &[u32]) -> Position {
    Position::new(rows).unwrap()
}

fn rows_of(p: &Position) -> Rows {
    p.rows().iter().map(|&r| r as u32).collect()
}

/// Compares every position of every level of `universe` with brute force:
/// outcome, loss set (decoded from the loss table), counts, and Grundy values
/// up to `grundy_max_tiles` (none above).
fn compare_universe(universe: Universe, grundy_max_tiles: u32, brute: &mut Brute) {
    let (t, _dir) = solve(universe, grundy_max_tiles);
    let top = universe.max_tiles();
    let max_rows = universe.rows.unwrap_or(top);
    let max_cols = universe.cols.unwrap_or(top);
    let m = t.manifest();
    assert_eq!(m.levels_complete, top, "{universe:?}");
    assert_eq!(m.levels.len(), top as usize);
    for n in 1..=top {
        let level = partitions(n, max_cols, max_rows);
        assert_eq!(t.ranking().size(n), level.len() as u64, "{universe:?}: size of level {n}");
        let mut losses = BTreeSet::new();
        let mut histogram: Vec<u64> = Vec::new();
        for rows in &level {
            let p = position(rows);
            let (loss, g) = brute.eval(rows);
            let want = if loss { Outcome::Loss } else { Outcome::Win };
            assert_eq!(t.outcome(&p).unwrap(), want, "{universe:?}: outcome of {p}");
            let got_g = t.grundy(&p).unwrap();
            if n <= grundy_max_tiles {
                assert_eq!(got_g, Some(g as u8), "{universe:?}: Grundy value of {p}");
            } else {
                assert_eq!(got_g, None, "{universe:?}: no Grundy value expected above level {grundy_max_tiles}");
            }
            if histogram.len() <= g as usize {
                histogram.resize(g as usize + 1, 0);
            }
            histogram[g as usize] += 1;
            if loss {
                losses.insert(rows.clone());
            }
        }
        // The loss set itself, read from the level's table.
        let table: BTreeSet<Rows> =
            t.level_losses(n).unwrap().iter().map(|r| rows_of(&t.ranking().unrank(n, r as u64).expect("loss rank in range"))).collect();
        assert_eq!(table, losses, "{universe:?}: loss set of level {n}");
        let stats = &m.levels[n as usize - 1];
        assert_eq!((stats.tiles, stats.positions, stats.losses), (n, level.len() as u64, losses.len() as u64), "{universe:?}");
        if n <= grundy_max_tiles {
            assert_eq!(stats.grundy_histogram.as_ref(), Some(&histogram), "{universe:?}: histogram of level {n}");
        } else {
            assert_eq!(stats.grundy_histogram, None);
        }
    }
    // Positions just outside the universe are refused, not answered.
    if let Some(c) = universe.cols {
        if c < top {
            assert!(t.outcome(&position(&[c + 1])).is_err(), "{universe:?}: a row longer than {c} is outside");
        }
    }
    if let Some(r) = universe.rows {
        if r < top {
            assert!(t.outcome(&position(&vec![1; r as usize + 1])).is_err(), "{universe:?}: {} rows are outside", r + 1);
        }
    }
    assert!(t.outcome(&position(&vec![1; top as usize + 1])).is_err(), "{universe:?}: level {} is outside", top + 1);
}

#[test]
fn brute_force_matches_the_documented_facts() {
    // Sanity of the brute force itself against chomp.md.
    let mut b = Brute::default();
    assert_eq!(b.eval(&[1]), (true, 0));
    let five: BTreeSet<Rows> = partitions(5, 5, 5).into_iter().filter(|p| b.is_loss(p)).collect();
    assert_eq!(five, [vec![3, 2], vec![3, 1, 1], vec![2, 2, 1]].into_iter().collect());
    for (n, want) in [(20, 42), (30, 220)] {
        assert_eq!(partitions(n, n, n).iter().filter(|p| b.is_loss(p)).count(), want, "losses with {n} tiles");
    }
    assert_eq!(partitions(20, 20, 20).len(), 627);
    assert_eq!(b.winning_moves(&[3, 2, 1]), vec![[0, 2], [1, 1], [2, 0]]);
    for n in 1..=12 {
        assert_eq!(b.eval(&[n]).1, n - 1, "single row of {n}");
    }
}

#[test]
fn tile_universe_to_30_loss_sets() {
    let mut b = Brute::default();
    compare_universe(Universe::tiles(30), 0, &mut b);
}

#[test]
fn tile_universe_grundy_values_to_25() {
    let mut b = Brute::default();
    compare_universe(Universe::tiles(30), 25, &mut b);
}

#[test]
fn boxes_with_grundy_values() {
    let mut b = Brute::default();
    for (r, c) in [(1, 1), (1, 6), (6, 1), (2, 2), (2, 6), (3, 3), (3, 5), (5, 3), (4, 4), (4, 6), (6, 4), (5, 5), (5, 6), (6, 6)] {
        let u = Universe::boxed(r, c);
        compare_universe(u, r * c, &mut b);
        // Count check independent of the engine: C(r+c, r) positions with the empty one.
        let total: usize = (1..=r * c).map(|n| partitions(n, c, r).len()).sum();
        let binom = (1..=r as u64).fold(1u64, |acc, i| acc * (c as u64 + i) / i);
        assert_eq!(total as u64 + 1, binom, "{r}x{c}");
    }
}

#[test]
fn boxes_without_grundy_values() {
    let mut b = Brute::default();
    for (r, c) in [(3, 5), (6, 6), (4, 6)] {
        compare_universe(Universe::boxed(r, c), 0, &mut b);
    }
}

#[test]
fn three_row_universe() {
    let mut b = Brute::default();
    compare_universe(Universe { rows: Some(3), cols: None, tiles: Some(24) }, 24, &mut b);
}

#[test]
fn column_bounded_universe() {
    let mut b = Brute::default();
    compare_universe(Universe { rows: None, cols: Some(4), tiles: Some(22) }, 16, &mut b);
    compare_universe(Universe { rows: Some(5), cols: Some(7), tiles: Some(20) }, 20, &mut b);
    // Symmetric (equal sides) but cut by a tile bound.
    compare_universe(Universe { rows: Some(5), cols: Some(5), tiles: Some(14) }, 14, &mut b);
    compare_universe(Universe { rows: Some(7), cols: Some(7), tiles: Some(20) }, 0, &mut b);
}

#[test]
fn winning_moves_match_brute_force() {
    let mut b = Brute::default();
    let (t, _dir) = solve(Universe::tiles(16), 0);
    for n in 1..=16 {
        for rows in partitions(n, n, n) {
            let want = b.winning_moves(&rows);
            assert_eq!(t.winning_moves(&position(&rows)).unwrap(), want, "winning moves of {rows:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// The addable-corner rule of chomp.md, implemented from its text.

/// Parents of `l` with at most `max_tiles` tiles given by the addable-corner
/// rule, with the move `(a, b)` that leads from each back to `l`.
fn corner_parents(l: &[u32], max_tiles: u32) -> Vec<(Rows, (u32, u32))> {
    let size = tiles(l);
    let mut out = Vec::new();
    if max_tiles <= size {
        return out;
    }
    let budget = max_tiles - size;
    let k = l.len();
    for a in 0..=k {
        let b = if a < k { l[a] } else { 0 };
        if !(a == 0 || l[a - 1] > b) {
            continue;
        }
        if b > 0 {
            let t = l[a..].iter().take_while(|&&x| x == b).count() as u32;
            let w = if a == 0 { budget } else { l[a - 1] - b };
            for extra in 1..=budget {
                for mu in partitions(extra, w, t) {
                    let mut p = l.to_vec();
                    for (i, m) in mu.iter().enumerate() {
                        p[a + i] = b + m;
                    }
                    out.push((p, (a as u32, b)));
                }
            }
        } else {
            let last = l[k - 1];
            for extra in 1..=budget {
                for mu in partitions(extra, last, extra) {
                    let mut p = l.to_vec();
                    p.extend_from_slice(&mu);
                    out.push((p, (a as u32, 0)));
                }
            }
        }
    }
    out
}

const PARENT_MAX_TILES: u32 = 20;

/// Brute-force parents: for every position `P` with at most
/// `PARENT_MAX_TILES` tiles and every move of `P`, the child maps to `P`
/// (once per move, so a parent reached by two moves would appear twice).
fn brute_parents() -> &'static HashMap<Rows, Vec<Rows>> {
    static INDEX: OnceLock<HashMap<Rows, Vec<Rows>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index: HashMap<Rows, Vec<Rows>> = HashMap::new();
        for n in 1..=PARENT_MAX_TILES {
            for p in partitions(n, n, n) {
                for (_, child) in children(&p) {
                    index.entry(child).or_default().push(p.clone());
                }
            }
        }
        index
    })
}

fn check_corner_rule(l: &[u32]) -> Result<(), TestCaseError> {
    let corner = corner_parents(l, PARENT_MAX_TILES);
    for (p, (a, b)) in &corner {
        prop_assert!(p.windows(2).all(|w| w[0] >= w[1]), "parent {p:?} of {l:?} is not a diagram");
        prop_assert!((*a, *b) != (0, 0));
        prop_assert_eq!(&bite(p, *a as usize, *b), l, "move ({}, {}) from {:?} does not lead to {:?}", a, b, p, l);
    }
    let mut got: Vec<Rows> = corner.into_iter().map(|(p, _)| p).collect();
    got.sort();
    let distinct = got.iter().collect::<BTreeSet<_>>().len();
    prop_assert_eq!(distinct, got.len(), "the corner rule lists a parent of {:?} twice", l);
    let mut want = brute_parents().get(l).cloned().unwrap_or_default();
    want.sort();
    prop_assert_eq!(got, want, "parents of {:?}", l);
    Ok(())
}

#[test]
fn corner_rule_all_positions_to_12_tiles() {
    for n in 1..=12 {
        for l in partitions(n, n, n) {
            check_corner_rule(&l).unwrap();
        }
    }
}

#[test]
fn corner_rule_all_losses_to_18_tiles() {
    let mut b = Brute::default();
    let mut count = 0;
    for n in 1..=18 {
        for l in partitions(n, n, n) {
            if b.is_loss(&l) {
                check_corner_rule(&l).unwrap();
                count += 1;
            }
        }
    }
    assert!(count > 100);
}

/// A uniformly random position of a random level up to 14 tiles.
fn small_position() -> impl Strategy<Value = Rows> {
    (1u32..=14, any::<prop::sample::Index>()).prop_map(|(n, i)| {
        let level = partitions(n, n, n);
        level[i.index(level.len())].clone()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn corner_rule_matches_brute_force_parents(l in small_position()) {
        check_corner_rule(&l)?;
    }

    #[test]
    fn every_parent_of_a_loss_is_a_win(l in small_position()) {
        let mut b = Brute::default();
        if b.is_loss(&l) {
            for (p, _) in corner_parents(&l, tiles(&l) + 4) {
                prop_assert!(!b.is_loss(&p), "{:?} is a parent of the loss {:?}", p, l);
            }
        }
    }
}
