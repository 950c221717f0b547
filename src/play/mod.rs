//! A computer player with four levels of explicit knowledge.
//!
//! Every level but the last plays from a small, documented [`Knowledge`] of
//! losing positions, computed on the fly (a tiny brute-force solver over all
//! shapes up to a few tiles, shared by every player of the process) and
//! independent of any table directory; the last level reads the tables.
//!
//! | level | knows as losses | plays |
//! |---|---|---|
//! | [`Level::Easy`] | the closed-form families only: the single tile, hooks with equal arms (`2 1`, `3 1 1`, …), two rows `(a, a−1)` and two columns (their conjugates) | a move to a loss it recognises, else a random move |
//! | [`Level::Medium`] | the families, and every loss of at most 12 tiles | a move to a recognised loss; else a random move among those that do not hand the opponent a recognised winning reply |
//! | [`Level::Hard`] | the families, every loss of at most 25 tiles, and what a 2-ply search proves from them | a move to a recognised loss, else to a position it proves lost (each reply allows it a recognised winning answer); else like medium |
//! | [`Level::VeryHard`] | the tables | a winning move whenever one exists; from a loss, the move that leaves the opponent the fewest winning replies (then the most tiles) |
//!
//! Choices among equals are drawn from a [`SplitMix`] generator, so a level
//! with a seed always plays the same game. The position `1` (only the
//! poisoned tile) has no move but eating the poison, which ends the game:
//! [`Player::play`] answers it with [`PlayError::GameOver`].

use crate::game::Position;
use crate::read::{Outcome, ProbeError, Tables};
use crate::rng::SplitMix;
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// How well the computer plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Random moves, except a move to a loss of the closed-form families.
    Easy,
    /// Knows the losses up to 12 tiles and avoids handing over an obvious win.
    Medium,
    /// Knows the losses up to 25 tiles and searches two plies.
    Hard,
    /// Perfect play from the tables.
    VeryHard,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 4] = [Level::Easy, Level::Medium, Level::Hard, Level::VeryHard];

    /// `easy`, `medium`, `hard` or `very-hard`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::VeryHard => "very-hard",
        }
    }

    /// The knowledge of losses the level plays from (`None` for
    /// [`Level::VeryHard`], which reads the tables).
    pub fn knowledge(&self) -> Option<&'static Knowledge> {
        static MEDIUM: OnceLock<Knowledge> = OnceLock::new();
        static HARD: OnceLock<Knowledge> = OnceLock::new();
        static EASY: OnceLock<Knowledge> = OnceLock::new();
        match self {
            Level::Easy => Some(EASY.get_or_init(|| Knowledge::new(0))),
            Level::Medium => Some(MEDIUM.get_or_init(|| Knowledge::new(MEDIUM_TILES))),
            Level::Hard => Some(HARD.get_or_init(|| Knowledge::new(HARD_TILES))),
            Level::VeryHard => None,
        }
    }
}

/// Tiles up to which [`Level::Medium`] knows every loss.
pub const MEDIUM_TILES: u32 = 12;
/// Tiles up to which [`Level::Hard`] knows every loss.
pub const HARD_TILES: u32 = 25;

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level name that is not one of `easy`, `medium`, `hard`, `very-hard`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level {0:?}: use easy, medium, hard or very-hard")]
pub struct LevelError(pub String);

impl FromStr for Level {
    type Err = LevelError;

    /// Parses `easy`, `medium`, `hard`, `very-hard` (also `very_hard`, `veryhard`), any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "easy" => Ok(Level::Easy),
            "medium" => Ok(Level::Medium),
            "hard" => Ok(Level::Hard),
            "very-hard" | "very_hard" | "veryhard" => Ok(Level::VeryHard),
            _ => Err(LevelError(s.to_string())),
        }
    }
}

/// What a level knows: a set of positions it recognises as losses.
///
/// A position is recognised when it has at most `max_tiles` tiles and is a
/// loss (every loss of that size is known, found by brute force over all
/// shapes), or when it belongs to a closed-form family of losses of any
/// size (`docs/math.md`, sections 2 and 7): the single tile `1`, a hook with
/// equal arms (`a, 1^(a−1)`), two rows `(a, a−1)`, two columns (the
/// conjugate of two rows).
pub struct Knowledge {
    max_tiles: u32,
    losses: HashSet<Vec<u8>>,
}

impl Knowledge {
    /// The families, and every loss of at most `max_tiles` tiles (brute
    /// force over all partitions; milliseconds for 25 tiles).
    pub fn new(max_tiles: u32) -> Self {
        let mut losses: HashSet<Vec<u8>> = HashSet::new();
        for n in 1..=max_tiles {
            for rows in partitions(n) {
                let p = Position::from_valid_rows(&rows);
                // Children have fewer tiles, already decided.
                if !p.moves().iter().any(|(_, c)| losses.contains(c.rows())) {
                    losses.insert(rows);
                }
            }
        }
        Knowledge { max_tiles, losses }
    }

    /// Every loss up to this many tiles is known.
    pub fn max_tiles(&self) -> u32 {
        self.max_tiles
    }

    /// Losses known by brute force (those of at most [`Self::max_tiles`] tiles).
    pub fn small_losses(&self) -> usize {
        self.losses.len()
    }

    /// Whether `p` is a loss this knowledge recognises.
    pub fn knows_loss(&self, p: &Position) -> bool {
        if p.tiles() <= self.max_tiles {
            return self.losses.contains(p.rows());
        }
        in_family(p.rows())
    }

    /// Whether `p` has a move to a recognised loss (the player to move
    /// would see a winning reply there).
    pub fn knows_win(&self, p: &Position) -> bool {
        p.moves().iter().any(|(_, c)| self.knows_loss(c))
    }

    /// Whether a 2-ply search proves `p` lost: every move from `p` leads to
    /// a position with a recognised winning reply.
    pub fn proves_loss(&self, p: &Position) -> bool {
        self.knows_loss(p) || p.moves().iter().all(|(_, c)| self.knows_win(c))
    }
}

/// Whether `rows` is one of the closed-form families of losses.
fn in_family(rows: &[u8]) -> bool {
    let h = rows.len();
    let w = rows[0] as usize;
    // The single tile, and hooks with equal arms: top row a, first column a.
    let hook = rows[1..].iter().all(|&r| r == 1) && w == h;
    // Two rows (a, a-1), a >= 2.
    let two_rows = h == 2 && rows[1] + 1 == rows[0];
    // Two columns: lengths a and a-1, i.e. rows 2,2,...,2,1 (a-1 twos then a one).
    let two_cols = w == 2 && h >= 2 && rows[h - 1] == 1 && rows[..h - 1].iter().all(|&r| r == 2);
    hook || two_rows || two_cols
}

/// Every partition of `n` (non-increasing positive parts), as byte rows.
fn partitions(n: u32) -> Vec<Vec<u8>> {
    fn go(left: u32, max: u32, cur: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if left == 0 {
            out.push(cur.clone());
            return;
        }
        for part in (1..=max.min(left)).rev() {
            cur.push(part as u8);
            go(left - part, part, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(n, n.min(crate::game::MAX_SIDE), &mut Vec::new(), &mut out);
    out
}

/// Why the computer chose its move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// A move to a position the player knows to be a loss (a winning move).
    Winning,
    /// A move to a position a 2-ply search proves lost.
    Forcing,
    /// A move chosen not to hand the opponent a recognised winning reply.
    Safe,
    /// A random move: nothing better was recognised.
    Random,
    /// Perfect play from a lost position: the opponent is left the fewest
    /// winning replies.
    Delaying,
}

/// A move chosen by the computer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Move {
    /// The bitten cell, `[row, col]`, 0-based.
    #[serde(rename = "move")]
    pub cell: [u32; 2],
    /// The position after the move.
    pub position: Vec<u8>,
    /// The level that chose it.
    pub level: Level,
    /// Why it was chosen.
    pub reason: Reason,
}

/// Why no move was chosen.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// Only the poisoned tile is left: the player to move must eat it and loses.
    #[error("game over: only the poisoned tile is left; the player to move must eat it and loses")]
    GameOver,
    /// [`Level::VeryHard`] needs tables.
    #[error("level very-hard needs tables")]
    NoTables,
    /// The tables could not answer (position outside them, damaged tables).
    #[error("{0}")]
    Probe(#[from] ProbeError),
}

/// A computer player: a level and its random generator.
pub struct Player {
    level: Level,
    rng: SplitMix,
}

impl Player {
    /// A player of `level`; the same seed plays the same moves.
    pub fn new(level: Level, seed: u64) -> Self {
        Player { level, rng: SplitMix(seed ^ 0x6368_6f6d_7020_706c) }
    }

    /// The level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Chooses a move from `p`. `tables` are needed for [`Level::VeryHard`]
    /// only (the other levels ignore them).
    ///
    /// # Errors
    /// [`PlayError::GameOver`] for the position `1`; [`PlayError::NoTables`]
    /// or [`PlayError::Probe`] when very-hard cannot read the position.
    pub fn play(&mut self, p: &Position, tables: Option<&Tables>) -> Result<Move, PlayError> {
        let moves = p.moves();
        if moves.is_empty() {
            return Err(PlayError::GameOver);
        }
        let (index, reason) = match self.level.knowledge() {
            Some(k) => self.choose_known(k, &moves),
            None => self.choose_perfect(p, &moves, tables.ok_or(PlayError::NoTables)?)?,
        };
        let ((r, c), child) = &moves[index];
        Ok(Move { cell: [*r, *c], position: child.rows().to_vec(), level: self.level, reason })
    }

    /// A uniformly drawn element of `candidates` (not empty).
    fn pick(&mut self, candidates: &[usize]) -> usize {
        candidates[self.rng.below(candidates.len() as u64) as usize]
    }

    fn choose_known(&mut self, k: &Knowledge, moves: &[((u32, u32), Position)]) -> (usize, Reason) {
        let all: Vec<usize> = (0..moves.len()).collect();
        let winning: Vec<usize> = all.iter().copied().filter(|&i| k.knows_loss(&moves[i].1)).collect();
        if !winning.is_empty() {
            return (self.pick(&winning), Reason::Winning);
        }
        if self.level == Level::Easy {
            return (self.pick(&all), Reason::Random);
        }
        if self.level == Level::Hard {
            let forcing: Vec<usize> = all.iter().copied().filter(|&i| k.proves_loss(&moves[i].1)).collect();
            if !forcing.is_empty() {
                return (self.pick(&forcing), Reason::Forcing);
            }
        }
        let safe: Vec<usize> = all.iter().copied().filter(|&i| !k.knows_win(&moves[i].1)).collect();
        if !safe.is_empty() {
            return (self.pick(&safe), Reason::Safe);
        }
        (self.pick(&all), Reason::Random)
    }

    fn choose_perfect(&mut self, p: &Position, moves: &[((u32, u32), Position)], t: &Tables) -> Result<(usize, Reason), PlayError> {
        t.outcome(p)?;
        let mut winning = Vec::new();
        for (i, (_, child)) in moves.iter().enumerate() {
            if t.outcome(child)? == Outcome::Loss {
                winning.push(i);
            }
        }
        if !winning.is_empty() {
            return Ok((self.pick(&winning), Reason::Winning));
        }
        // Every move loses against perfect play: leave the fewest winning
        // replies (the hardest win to find), then the most tiles to err in.
        let mut best: Vec<usize> = Vec::new();
        let mut best_key = (usize::MAX, 0u32);
        for (i, (_, child)) in moves.iter().enumerate() {
            let mut replies = 0;
            for (_, grandchild) in child.moves() {
                if t.outcome(&grandchild)? == Outcome::Loss {
                    replies += 1;
                }
            }
            let key = (replies, child.tiles());
            if key.0 < best_key.0 || (key.0 == best_key.0 && key.1 > best_key.1) {
                best_key = key;
                best.clear();
            }
            if key == best_key {
                best.push(i);
            }
        }
        Ok((self.pick(&best), Reason::Delaying))
    }
}

/// One move of `level` from `p` with a fresh generator seeded by `seed`
/// (what `chomp play` and the server's `/v1/play` answer).
///
/// # Errors
/// As [`Player::play`].
pub fn play(level: Level, p: &Position, seed: u64, tables: Option<&Tables>) -> Result<Move, PlayError> {
    Player::new(level, seed).play(p, tables)
}

/// The result of one game between two players.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// The moves, in order (the first by the starting player).
    pub moves: Vec<Move>,
    /// Whether the starting player won (the other one was left the poisoned tile).
    pub first_wins: bool,
}

/// Plays a whole game from `start`: `first` moves first, then `second`, and
/// so on until one of them is left only the poisoned tile (and loses).
///
/// # Errors
/// As [`Player::play`] (but for the end of the game).
pub fn play_game(start: &Position, first: &mut Player, second: &mut Player, tables: Option<&Tables>) -> Result<Game, PlayError> {
    let mut p = start.clone();
    let mut moves = Vec::new();
    loop {
        let mover = if moves.len() % 2 == 0 { &mut *first } else { &mut *second };
        match mover.play(&p, tables) {
            Ok(m) => {
                p = Position::from_valid_rows(&m.position);
                moves.push(m);
            }
            Err(PlayError::GameOver) => return Ok(Game { first_wins: moves.len() % 2 == 1, moves }),
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(s: &str) -> Position {
        s.parse().unwrap()
    }

    #[test]
    fn families_are_losses_known_by_brute_force() {
        let k = Knowledge::new(14);
        for s in ["1", "2 1", "3 1 1", "4 1 1 1", "3 2", "5 4", "2 2 1", "2 2 2 1", "2 2 2 2 2 1"] {
            assert!(in_family(pos(s).rows()), "{s}");
            assert!(k.knows_loss(&pos(s)), "{s}");
        }
        for s in ["2", "1 1", "3 1", "2 2", "3 3", "4 2", "2 2 2"] {
            assert!(!in_family(pos(s).rows()), "{s}");
            assert!(!k.knows_loss(&pos(s)), "{s}");
        }
        // Counts of losses of docs/math.md: 3 of 5 tiles.
        assert_eq!(Knowledge::new(5).small_losses(), 1 + 1 + 3);
    }

    #[test]
    fn levels_parse_and_print() {
        for l in Level::ALL {
            assert_eq!(l.as_str().parse::<Level>().unwrap(), l);
        }
        assert!("expert".parse::<Level>().is_err());
    }

    #[test]
    fn the_poisoned_tile_alone_is_game_over() {
        assert!(matches!(play(Level::Easy, &pos("1"), 0, None), Err(PlayError::GameOver)));
        assert!(matches!(play(Level::VeryHard, &pos("2"), 0, None), Err(PlayError::NoTables)));
    }

    #[test]
    fn every_level_takes_a_family_win() {
        // 3 3 → (1,1) leaves the hook 3 1 1.
        for l in [Level::Easy, Level::Medium, Level::Hard] {
            let m = play(l, &pos("3 3 3"), 7, None).unwrap();
            assert_eq!((m.cell, m.reason), ([1, 1], Reason::Winning));
        }
    }
}
