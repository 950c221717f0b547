//! The closed forms of `docs/math.md` (section 7) and the iChomp rule (section 8) against computed values.

use chomp_tables::game::closed_form::{hook, single_row, two_rows};
use chomp_tables::read::ichomp::analyze;
use chomp_tables::{Position, Universe};

use crate::common::{pos, solve, Range, SplitMix};

/// Every test here solves the tile universe to `N` tiles, Grundy values included.
const N: u32 = 40;

#[test]
fn closed_forms_match_every_position_in_range() {
    let run = solve(Universe::tiles(N), N);
    let t = &run.tables;
    let mut checked = 0;
    for n in 1..=N {
        assert_eq!(t.grundy(&pos(&[n])).unwrap(), Some(single_row(n) as u8));
        for m in 1..=n.min(N - n) {
            assert_eq!(t.grundy(&pos(&[n, m])).unwrap(), Some(two_rows(n, m) as u8), "two rows {n} {m}");
            checked += 1;
        }
        for b in 1..=N + 1 - n {
            let mut rows = vec![n];
            rows.extend(std::iter::repeat_n(1, b as usize - 1));
            assert_eq!(t.grundy(&pos(&rows)).unwrap(), Some(hook(n, b) as u8), "hook {n} {b}");
            checked += 1;
        }
    }
    assert!(checked > 700);
}

fn quadrant(s: &str) -> Option<Position> {
    (s != "-").then(|| s.parse().unwrap())
}

#[test]
fn ichomp_winning_moves_reach_zero_and_losses_have_none() {
    let run = solve(Universe::tiles(N), N);
    let t = &run.tables;
    let pool = ["-", "1", "2", "2 1", "3 2", "3 1 1", "4", "2 2", "3 2 1", "4 3 1", "5 2 2 1", "6 3"];
    let mut rng = SplitMix(12345);
    let mut next = |k: usize| rng.range(0, k as u32 - 1) as usize;
    let (mut wins, mut losses) = (0, 0);
    for _ in 0..300 {
        let qs: [Option<Position>; 4] = std::array::from_fn(|_| quadrant(pool[next(pool.len())]));
        let a = analyze(t, &qs).unwrap();
        let value = |qs: &[Option<Position>; 4]| {
            qs.iter().map(|q| q.as_ref().map_or(0, |p| t.grundy(p).unwrap().unwrap() as u32 + 1)).fold(0, |x, v| x ^ v)
        };
        assert_eq!(a.value, value(&qs));
        if a.loss {
            losses += 1;
            // Every move of every quadrant leads to a non-zero value.
            for i in 0..4 {
                if let Some(p) = &qs[i] {
                    let mut after = qs.clone();
                    after[i] = None;
                    assert_ne!(value(&after), 0);
                    for (_, c) in p.moves() {
                        after[i] = Some(c);
                        assert_ne!(value(&after), 0);
                    }
                }
            }
        } else {
            wins += 1;
            let m = a.winning_move.unwrap();
            let mut after = qs.clone();
            after[m.quadrant - 1] = m.position.map(|rows| Position::new(&rows.iter().map(|&r| r as u32).collect::<Vec<_>>()).unwrap());
            if let Some(child) = &after[m.quadrant - 1] {
                assert_eq!(qs[m.quadrant - 1].as_ref().unwrap().child(m.cell[0], m.cell[1]).as_ref(), Some(child));
            }
            assert_eq!(value(&after), 0);
        }
    }
    assert!(wins > 0 && losses > 0);
}
