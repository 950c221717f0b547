//! iChomp: four Chomp quadrants played at once under normal play (the last
//! tile wins). A quadrant of misère value `g` is worth `g + 1` in normal
//! play, an empty quadrant 0; the game's value is the XOR of the four.

use super::{ProbeError, Tables};
use crate::game::Position;
use serde::Serialize;

/// A winning move of an iChomp position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IchompMove {
    /// Quadrant 1..=4.
    pub quadrant: usize,
    /// The cell bitten in that quadrant, `[row, col]`; `[0, 0]` takes the whole quadrant.
    pub cell: [u32; 2],
    /// The quadrant after the move (`None` when emptied).
    pub position: Option<Vec<u8>>,
}

/// The analysis of an iChomp position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ichomp {
    /// Normal-play value of each quadrant (`g + 1`, 0 when empty).
    pub quadrant_values: [u32; 4],
    /// XOR of the quadrant values.
    pub value: u32,
    /// Whether the player to move loses (value 0).
    pub loss: bool,
    /// A winning move, when there is one.
    pub winning_move: Option<IchompMove>,
}

/// Why an iChomp question cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum IchompError {
    /// The tables hold no Grundy values at all.
    #[error("these tables hold no Grundy values (solve with --grundy-max-tiles or --grundy); iChomp needs them")]
    NoGrundyTables,
    /// A quadrant's level has no Grundy values in the tables.
    #[error("quadrant {quadrant} ({tiles} tiles) has no Grundy value in these tables (they hold values for 1..={max} tiles)")]
    NoGrundy {
        /// Quadrant 1..=4.
        quadrant: usize,
        /// Its tiles.
        tiles: u32,
        /// The tables' Grundy range.
        max: u32,
    },
    /// The probe failed.
    #[error("quadrant {quadrant}: {source}")]
    Probe {
        /// Quadrant 1..=4.
        quadrant: usize,
        /// The probe error.
        source: ProbeError,
    },
}

/// Values an iChomp position and finds a winning move: a quadrant whose value
/// has the highest set bit of the total `u` is moved to value `v XOR u`.
///
/// # Errors
/// [`IchompError`] when a quadrant is outside the tables or lacks Grundy values.
pub fn analyze(tables: &Tables, quadrants: &[Option<Position>; 4]) -> Result<Ichomp, IchompError> {
    let m = tables.manifest();
    if m.grundy_max_tiles == 0 {
        return Err(IchompError::NoGrundyTables);
    }
    let mut values = [0u32; 4];
    for (i, q) in quadrants.iter().enumerate() {
        if let Some(p) = q {
            let g = tables.grundy(p).map_err(|source| IchompError::Probe { quadrant: i + 1, source })?;
            let g = g.ok_or(IchompError::NoGrundy { quadrant: i + 1, tiles: p.tiles(), max: m.grundy_max_tiles.min(m.levels_complete) })?;
            values[i] = g as u32 + 1;
        }
    }
    let value = values.iter().fold(0, |a, &v| a ^ v);
    let mut winning_move = None;
    if value != 0 {
        let top = 1 << (31 - value.leading_zeros());
        let i = values.iter().position(|&v| v & top != 0).expect("some quadrant holds the top bit");
        let target = values[i] ^ value; // < values[i]
        let p = quadrants[i].as_ref().expect("a non-empty quadrant");
        winning_move = Some(if target == 0 {
            IchompMove { quadrant: i + 1, cell: [0, 0], position: None }
        } else {
            let moves = tables.moves(p).map_err(|source| IchompError::Probe { quadrant: i + 1, source })?;
            let m = moves
                .into_iter()
                .filter(|m| m.grundy == Some((target - 1) as u8))
                .min_by_key(|m| m.cell)
                .expect("mex guarantees a child of every smaller value");
            IchompMove { quadrant: i + 1, cell: m.cell, position: Some(m.position) }
        });
    }
    Ok(Ichomp { quadrant_values: values, value, loss: value == 0, winning_move })
}
