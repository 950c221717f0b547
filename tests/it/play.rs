//! The computer player (`chomp_tables::play`) on the published tables, and `chomp play`.

use crate::common::{assert_ok, assert_one_line_error, chomp, text, Range, SplitMix};
use chomp_tables::play::{self as player, Knowledge, Level, Player, Reason};
use chomp_tables::{Outcome, Position, Tables};

pub const BOX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/results/box-8x15");

fn open_box() -> Tables {
    Tables::open(std::path::Path::new(BOX)).unwrap()
}

/// A random position of the tables with at least `min_tiles` tiles.
pub fn random_position(t: &Tables, rng: &mut SplitMix, min_tiles: u32) -> Position {
    let top = t.manifest().levels_complete;
    let n = rng.range(min_tiles, top);
    t.ranking().unrank(n, rng.below(t.ranking().size(n))).unwrap()
}

#[test]
fn very_hard_always_leaves_a_loss_from_a_win() {
    let t = open_box();
    let mut rng = SplitMix(2024);
    let (mut wins, mut losses) = (0, 0);
    for i in 0..400 {
        let p = random_position(&t, &mut rng, 2);
        let m = player::play(Level::VeryHard, &p, i, Some(&t)).unwrap();
        let after = Position::new(&m.position.iter().map(|&r| r as u32).collect::<Vec<_>>()).unwrap();
        assert_eq!(p.child(m.cell[0], m.cell[1]), Some(after.clone()), "{p}: the move and the position agree");
        if t.outcome(&p).unwrap() == Outcome::Win {
            wins += 1;
            assert_eq!(t.outcome(&after).unwrap(), Outcome::Loss, "{p}: very-hard played {:?}", m.cell);
            assert_eq!(m.reason, Reason::Winning);
        } else {
            losses += 1;
            assert_eq!(m.reason, Reason::Delaying);
        }
    }
    assert!(wins > 100 && losses > 10, "{wins} wins, {losses} losses sampled");
}

#[test]
fn medium_and_hard_know_exactly_the_small_losses() {
    let t = open_box();
    for (level, tiles) in [(Level::Medium, player::MEDIUM_TILES), (Level::Hard, player::HARD_TILES)] {
        let k: &Knowledge = level.knowledge().unwrap();
        assert_eq!(k.max_tiles(), tiles);
        for n in 1..=tiles {
            for r in 0..t.ranking().size(n) {
                let p = t.ranking().unrank(n, r).unwrap();
                assert_eq!(k.knows_loss(&p), t.outcome(&p).unwrap() == Outcome::Loss, "{level} on {p}");
            }
        }
    }
    // The families are losses at every size the box holds.
    let easy = Level::Easy.knowledge().unwrap();
    for a in 2..=8u32 {
        let mut hook = vec![a];
        hook.extend(std::iter::repeat_n(1, a as usize - 1));
        let two_rows = [a + 7, a + 6];
        let mut two_cols = vec![2; a as usize - 1];
        two_cols.push(1);
        for rows in [hook, two_rows.to_vec(), two_cols] {
            let p = Position::new(&rows).unwrap();
            assert!(easy.knows_loss(&p), "{p}");
            assert_eq!(t.outcome(&p).unwrap(), Outcome::Loss, "{p}");
        }
    }
}

#[test]
fn a_seed_plays_the_same_moves() {
    let t = open_box();
    let mut rng = SplitMix(7);
    for _ in 0..40 {
        let p = random_position(&t, &mut rng, 2);
        for level in Level::ALL {
            let seed = rng.next_u64();
            let a = player::play(level, &p, seed, Some(&t)).unwrap();
            let b = player::play(level, &p, seed, Some(&t)).unwrap();
            assert_eq!(a, b, "{level} on {p}");
        }
    }
    // Different seeds do differ where the choice is free (easy on a large rectangle).
    let rect = Position::new(&[12; 7]).unwrap();
    let moves: std::collections::BTreeSet<[u32; 2]> = (0..20).map(|s| player::play(Level::Easy, &rect, s, None).unwrap().cell).collect();
    assert!(moves.len() > 5, "{moves:?}");
    // Whole games repeat too.
    let start = Position::new(&[9; 6]).unwrap();
    let game =
        |s: u64| player::play_game(&start, &mut Player::new(Level::Medium, s), &mut Player::new(Level::Hard, s + 1), Some(&t)).unwrap();
    assert_eq!(game(3), game(3));
}

/// Share of games `a` wins against `b` from random rectangles of at least 3
/// rows and more columns than rows (no family move wins them), `games` with
/// each side starting.
fn score(t: &Tables, a: Level, b: Level, games: u64, seed: u64) -> f64 {
    let mut rng = SplitMix(seed);
    let mut won = 0;
    for g in 0..games {
        let rows = rng.range(3, 8);
        let start = Position::new(&vec![rng.range(rows + 1, 15); rows as usize]).unwrap();
        let first = player::play_game(&start, &mut Player::new(a, seed + g), &mut Player::new(b, !g), Some(t)).unwrap();
        let second = player::play_game(&start, &mut Player::new(b, !g), &mut Player::new(a, seed + g), Some(t)).unwrap();
        won += first.first_wins as u32 + !second.first_wins as u32;
    }
    won as f64 / (2 * games) as f64
}

#[test]
fn levels_are_ordered() {
    let t = open_box();
    let vh_easy = score(&t, Level::VeryHard, Level::Easy, 20, 1);
    assert!(vh_easy >= 0.95, "very-hard beats easy in {vh_easy}");
    for (a, b) in [(Level::Medium, Level::Easy), (Level::Hard, Level::Medium), (Level::VeryHard, Level::Hard)] {
        let s = score(&t, a, b, 30, 5);
        assert!(s > 0.5, "{a} against {b}: {s}");
    }
    // Each level's overall score against the three others rises with the level.
    let mut overall = [0.0; 4];
    for (i, &a) in Level::ALL.iter().enumerate() {
        for (j, &b) in Level::ALL.iter().enumerate().skip(i + 1) {
            let s = score(&t, a, b, 20, 11 + (4 * i + j) as u64);
            overall[i] += s;
            overall[j] += 1.0 - s;
        }
    }
    assert!(overall.windows(2).all(|w| w[0] < w[1]), "overall scores {overall:?}");
}

#[test]
fn chomp_play_prints_the_libraries_move() {
    let t = open_box();
    for level in Level::ALL {
        let out = chomp(&["play", "5 3 3 1 1", "--tables", BOX, "--level", level.as_str(), "--seed", "9", "--json"]);
        assert_ok(&out, "chomp play");
        let m = player::play(level, &"5 3 3 1 1".parse().unwrap(), 9, Some(&t)).unwrap();
        assert_eq!(text(&out.stdout).trim(), serde_json::to_string(&m).unwrap());
        assert!(text(&out.stdout).contains(&format!("\"level\":\"{level}\"")));
    }
    let out = chomp(&["play", "4 4 4 4", "--tables", BOX, "--level", "very-hard"]);
    assert_ok(&out, "chomp play (text)");
    assert!(text(&out.stdout).contains("bites (1,1)"), "{}", text(&out.stdout));

    let e = assert_one_line_error(&chomp(&["play", "1", "--tables", BOX, "--level", "easy"]), "the poisoned tile alone");
    assert!(e.contains("game over"), "{e}");
    let e = assert_one_line_error(&chomp(&["play", "3 5", "--tables", BOX]), "a bad position");
    assert!(e.contains("invalid position"), "{e}");
    let e = assert_one_line_error(&chomp(&["play", "16", "--tables", BOX, "--level", "hard"]), "outside the box");
    assert!(e.contains("outside"), "{e}");
    let out = chomp(&["play", "3 2", "--tables", BOX, "--level", "expert"]);
    assert!(!out.status.success() && text(&out.stderr).contains("easy, medium, hard or very-hard"), "{}", text(&out.stderr));
}
