//! Property tests of the ranking (a bijection per level), of conjugation and
//! of the position syntax.

use chomp_tables::{Position, Ranking, Universe};
use proptest::prelude::*;
use std::collections::HashMap;

/// Partitions of `s` into at most `r` parts, each at most `m` (own recursion,
/// independent of the engine's count table).
fn count(s: u32, r: u32, m: u32, memo: &mut HashMap<(u32, u32, u32), u64>) -> u64 {
    if s == 0 {
        return 1;
    }
    if r == 0 || m == 0 {
        return 0;
    }
    let m = m.min(s);
    if let Some(&v) = memo.get(&(s, r, m)) {
        return v;
    }
    // Either no part equals m, or one part equals m and the rest are at most m.
    let v = count(s, r, m - 1, memo) + count(s - m, r - 1, m, memo);
    memo.insert((s, r, m), v);
    v
}

/// Universes: tile universes up to 60 tiles, boxes, row- and column-bounded families.
fn universe() -> impl Strategy<Value = Universe> {
    prop_oneof![
        (1u32..=60).prop_map(Universe::tiles),
        (1u32..=9, 1u32..=12).prop_map(|(r, c)| Universe::boxed(r, c)),
        (1u32..=6, 1u32..=60).prop_map(|(r, n)| Universe { rows: Some(r), cols: None, tiles: Some(n) }),
        (1u32..=6, 1u32..=60).prop_map(|(c, n)| Universe { rows: None, cols: Some(c), tiles: Some(n) }),
        (1u32..=8, 1u32..=8, 1u32..=40).prop_map(|(r, c, n)| Universe { rows: Some(r), cols: Some(c), tiles: Some(n) }),
    ]
}

fn in_universe(u: &Universe, p: &Position) -> bool {
    u.rows.is_none_or(|r| p.rows().len() as u32 <= r)
        && u.cols.is_none_or(|c| p.rows()[0] as u32 <= c)
        && u.tiles.is_none_or(|n| p.tiles() <= n)
}

/// Row lengths (non-increasing, positive) from arbitrary parts.
fn diagram(mut parts: Vec<u32>) -> Vec<u32> {
    parts.sort_unstable_by(|a, b| b.cmp(a));
    parts
}

/// A random position of up to 12 rows and columns.
fn position() -> impl Strategy<Value = Position> {
    prop::collection::vec(1u32..=12, 1..=12).prop_map(|parts| Position::new(&diagram(parts)).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// unrank then rank is the identity on a random rank of a random level,
    /// the position belongs to the universe and level, and ranks follow the
    /// documented lexicographic order.
    #[test]
    fn unrank_rank_round_trip(u in universe(), level in any::<prop::sample::Index>(), pick in any::<u64>()) {
        let ranking = Ranking::new(&u).unwrap();
        let top = ranking.max_tiles();
        prop_assert_eq!(top, u.tiles.unwrap_or(u32::MAX).min(u.rows.zip(u.cols).map_or(u32::MAX, |(r, c)| r * c)));
        let n = 1 + level.index(top as usize) as u32;
        let size = ranking.size(n);
        let mut memo = HashMap::new();
        prop_assert_eq!(size, count(n, u.rows.unwrap_or(n), u.cols.unwrap_or(n), &mut memo), "size of level {} of {:?}", n, u);
        prop_assert!(size > 0);
        let rank = pick % size;
        let p = ranking.unrank(n, rank).unwrap();
        prop_assert_eq!(p.tiles(), n);
        prop_assert!(in_universe(&u, &p), "{} outside {:?}", p, u);
        prop_assert_eq!(ranking.rank(&p), Some(rank));
        if rank + 1 < size {
            let next = ranking.unrank(n, rank + 1).unwrap();
            prop_assert!(p.rows() < next.rows(), "rank order: {} then {}", p, next);
            prop_assert_eq!(ranking.rank(&next), Some(rank + 1));
        }
        prop_assert_eq!(ranking.unrank(n, size), None);
        prop_assert_eq!(ranking.size(0), 0);
        prop_assert_eq!(ranking.size(top + 1), 0);
    }

    /// rank then unrank is the identity on random positions; positions
    /// outside the universe have no rank.
    #[test]
    fn rank_unrank_round_trip(u in universe(), parts in prop::collection::vec(1u32..=14, 1..=14)) {
        let ranking = Ranking::new(&u).unwrap();
        let p = Position::new(&diagram(parts)).unwrap();
        match ranking.rank(&p) {
            Some(rank) => {
                prop_assert!(in_universe(&u, &p));
                prop_assert!(rank < ranking.size(p.tiles()));
                prop_assert_eq!(ranking.unrank(p.tiles(), rank), Some(p));
            }
            None => prop_assert!(!in_universe(&u, &p), "{} is in {:?} but has no rank", p, u),
        }
    }

    /// Conjugation is an involution that transposes cells.
    #[test]
    fn conjugate_involution(p in position()) {
        let c = p.conjugate();
        prop_assert_eq!(c.conjugate(), p.clone());
        prop_assert_eq!(c.tiles(), p.tiles());
        prop_assert_eq!(c.height(), p.width());
        prop_assert_eq!(c.width(), p.height());
        for i in 0..=13 {
            for j in 0..=13 {
                prop_assert_eq!(p.contains(i, j), c.contains(j, i));
            }
        }
    }

    /// Moves commute with conjugation: the bite (a, b) of the conjugate is
    /// the conjugate of the bite (b, a).
    #[test]
    fn moves_commute_with_conjugation(p in position()) {
        let c = p.conjugate();
        let moves = p.moves();
        prop_assert_eq!(moves.len() as u32, p.tiles() - 1);
        for ((a, b), child) in moves {
            prop_assert!(child.tiles() < p.tiles());
            prop_assert_eq!(c.child(b, a).unwrap(), child.conjugate());
        }
    }

    /// Display then parse is the identity; commas and extra blanks are accepted.
    #[test]
    fn parse_display_round_trip(p in position()) {
        let text = p.to_string();
        prop_assert_eq!(text.parse::<Position>().unwrap(), p.clone());
        let rows: Vec<String> = p.rows().iter().map(|r| r.to_string()).collect();
        prop_assert_eq!(rows.join(",").parse::<Position>().unwrap(), p.clone());
        prop_assert_eq!(format!("  {}  ", rows.join(" ,  ")).parse::<Position>().unwrap(), p.clone());
        prop_assert_eq!(Position::new(&rows.iter().map(|r| r.parse().unwrap()).collect::<Vec<u32>>()).unwrap(), p);
    }

    /// Row lists that increase somewhere are refused.
    #[test]
    fn increasing_rows_are_refused(parts in prop::collection::vec(1u32..=12, 2..=8)) {
        let sorted = diagram(parts.clone());
        let valid = parts == sorted;
        prop_assert_eq!(Position::new(&parts).is_ok(), valid);
        let text = parts.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" ");
        prop_assert_eq!(text.parse::<Position>().is_ok(), valid);
    }

    /// Parsing arbitrary text never panics, and what it accepts displays back
    /// to an equivalent text.
    #[test]
    fn parsing_arbitrary_text(s in "[0-9 ,a-z-]{0,16}") {
        if let Ok(p) = s.parse::<Position>() {
            prop_assert_eq!(p.to_string().parse::<Position>().unwrap(), p);
        }
    }
}

#[test]
fn every_rank_of_small_universes() {
    // Exhaustive: each level's ranks unrank to distinct positions, in
    // increasing order, that rank back.
    for u in [Universe::tiles(16), Universe::boxed(4, 7), Universe { rows: Some(3), cols: None, tiles: Some(30) }] {
        let ranking = Ranking::new(&u).unwrap();
        for n in 1..=ranking.max_tiles() {
            let mut prev: Option<Position> = None;
            for rank in 0..ranking.size(n) {
                let p = ranking.unrank(n, rank).unwrap();
                assert_eq!(ranking.rank(&p), Some(rank));
                if let Some(q) = prev {
                    assert!(q.rows() < p.rows(), "{u:?}: {q} before {p}");
                }
                prev = Some(p);
            }
        }
    }
}

#[test]
fn documented_level_sizes() {
    let ranking = Ranking::new(&Universe::tiles(100)).unwrap();
    for (n, p) in [(20, 627), (90, 56_634_173), (93, 82_010_177), (100, 190_569_292)] {
        assert_eq!(ranking.size(n), p, "p({n})");
    }
    let ranking = Ranking::new(&Universe::boxed(8, 15)).unwrap();
    assert_eq!((1..=120).map(|n| ranking.size(n)).sum::<u64>() + 1, 490_314);
}
