//! Typed answers: what a probe says about a position, serialised the same
//! way by the CLI, the library's users and any server.

use serde::Serialize;

/// Win or loss for the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The player to move can force a win.
    Win,
    /// Every move leads to a win for the opponent.
    Loss,
}

impl Outcome {
    /// `"win"` or `"loss"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Loss => "loss",
        }
    }
}

/// One move with what it leads to.
#[derive(Clone, Debug, Serialize)]
pub struct MoveInfo {
    /// The bitten cell, `[row, col]`, 0-based.
    #[serde(rename = "move")]
    pub cell: [u32; 2],
    /// The position after the move.
    pub position: Vec<u8>,
    /// Outcome of that position for the player then to move.
    pub outcome: Outcome,
    /// Its misère Grundy value, when computed.
    pub grundy: Option<u8>,
}

/// Everything the tables say about one position (the JSON of `chomp query --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// Row lengths, top row first.
    pub position: Vec<u8>,
    /// Its tiles (its level).
    pub tiles: u32,
    /// Win or loss for the player to move.
    pub outcome: Outcome,
    /// Misère Grundy value, when computed for this level.
    pub grundy: Option<u8>,
    /// Normal-play value (`grundy + 1`), when computed.
    pub grundy_normal: Option<u32>,
    /// The winning moves (to a loss), row-major, `[row, col]` 0-based.
    pub winning_moves: Vec<[u32; 2]>,
    /// Every move, best first (see [`crate::Tables::moves`]).
    pub moves: Vec<MoveInfo>,
}
