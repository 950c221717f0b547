//! Typed answers: what a probe says about a position, serialised the same
//! way by the CLI, the library's users and any server.

use crate::game::position::child_rows_into;
use crate::game::Position;
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

/// One move of a checked answer: what [`MoveInfo`] says, with the child's
/// tiles in place of its rows (which follow from the parent's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckedMove {
    pub cell: [u32; 2],
    pub tiles: u32,
    pub outcome: Outcome,
    pub grundy: Option<u8>,
}

impl CheckedMove {
    /// The move as [`MoveInfo`], for a move of `p`.
    pub(crate) fn info(&self, p: &Position) -> MoveInfo {
        let mut position = Vec::new();
        child_rows_into(p.rows(), self.cell[0], self.cell[1], &mut position);
        MoveInfo { cell: self.cell, position, outcome: self.outcome, grundy: self.grundy }
    }
}

/// What the tables say of a position and of every move, checked against
/// each other (`Tables::checked`), moves best first.
#[derive(Debug)]
pub(crate) struct CheckedAnswer {
    pub outcome: Outcome,
    pub grundy: Option<u8>,
    pub moves: Vec<CheckedMove>,
}

impl CheckedAnswer {
    /// The winning moves (to a loss), row-major.
    pub(crate) fn winning_moves(&self) -> Vec<[u32; 2]> {
        let mut w: Vec<[u32; 2]> = self.moves.iter().filter(|m| m.outcome == Outcome::Loss).map(|m| m.cell).collect();
        w.sort_unstable();
        w
    }
}

/// Appends the JSON of `p`'s [`Answer`] to `out`, byte for byte what
/// serde_json writes for it (a test holds the two together).
pub(crate) fn write_answer_json(p: &Position, a: &CheckedAnswer, out: &mut Vec<u8>) {
    let mut w = JsonOut { out, num: itoa::Buffer::new() };
    let rows = p.rows();
    w.raw(b"{\"position\":");
    w.list(rows.iter().map(|&r| r as u32));
    w.raw(b",\"tiles\":");
    w.opt(Some(p.tiles()));
    w.raw(b",\"outcome\":");
    w.outcome(a.outcome);
    w.raw(b",\"grundy\":");
    w.opt(a.grundy.map(u32::from));
    w.raw(b",\"grundy_normal\":");
    w.opt(a.grundy.map(|g| g as u32 + 1));
    w.raw(b",\"winning_moves\":[");
    for (i, cell) in a.winning_moves().into_iter().enumerate() {
        w.raw(if i > 0 { b"," } else { b"" });
        w.list(cell.into_iter());
    }
    w.raw(b"],\"moves\":[");
    let mut child = Vec::with_capacity(rows.len());
    for (i, m) in a.moves.iter().enumerate() {
        w.raw(if i > 0 { b",{\"move\":" } else { b"{\"move\":" });
        w.list(m.cell.into_iter());
        w.raw(b",\"position\":");
        child_rows_into(rows, m.cell[0], m.cell[1], &mut child);
        w.list(child.iter().map(|&len| len as u32));
        w.raw(b",\"outcome\":");
        w.outcome(m.outcome);
        w.raw(b",\"grundy\":");
        w.opt(m.grundy.map(u32::from));
        w.raw(b"}");
    }
    w.raw(b"]}");
}

/// Compact JSON written straight into a buffer.
struct JsonOut<'o> {
    out: &'o mut Vec<u8>,
    num: itoa::Buffer,
}

impl JsonOut<'_> {
    fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// A number, or `null`.
    fn opt(&mut self, v: Option<u32>) {
        match v {
            Some(v) => self.out.extend_from_slice(self.num.format(v).as_bytes()),
            None => self.out.extend_from_slice(b"null"),
        }
    }

    fn list(&mut self, items: impl Iterator<Item = u32>) {
        self.out.push(b'[');
        for (i, v) in items.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.opt(Some(v));
        }
        self.out.push(b']');
    }

    fn outcome(&mut self, o: Outcome) {
        self.out.push(b'"');
        self.out.extend_from_slice(o.as_str().as_bytes());
        self.out.push(b'"');
    }
}
