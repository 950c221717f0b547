//! Openings: the winning first moves of every rectangle a table directory covers.

use super::{ProbeError, Tables};
use crate::game::Position;
use serde::Serialize;

/// Winning first moves of one rectangle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Opening {
    /// Rows of the rectangle.
    pub rows: u32,
    /// Columns of the rectangle.
    pub cols: u32,
    /// Its winning moves, row-major.
    pub winning_moves: Vec<[u32; 2]>,
}

/// Every rectangle `rows × cols` inside the tables (within their bounds and
/// completed levels) with its winning first moves, by rows then columns.
///
/// # Errors
/// [`ProbeError`] for damaged tables.
pub fn rectangle_openings(t: &Tables) -> Result<Vec<Opening>, ProbeError> {
    let m = t.manifest();
    let top = m.levels_complete;
    let max_rows = m.universe.rows.unwrap_or(top).min(top);
    let max_cols = m.universe.cols.unwrap_or(top).min(top);
    let mut out = Vec::new();
    for rows in 1..=max_rows {
        for cols in 1..=max_cols {
            if rows * cols > top {
                break;
            }
            out.push(rectangle_opening(t, rows, cols)?);
        }
    }
    Ok(out)
}

/// The winning first moves of the rectangle `rows × cols` (both at least 1).
///
/// # Errors
/// [`ProbeError`] for a rectangle outside the tables, or damaged tables.
pub fn rectangle_opening(t: &Tables, rows: u32, cols: u32) -> Result<Opening, ProbeError> {
    let p = Position::new(&vec![cols; rows as usize]).map_err(|_| ProbeError::Outside {
        position: format!("{rows}x{cols} rectangle"),
        size: format!("{rows} rows, {cols} columns"),
        universe: t.manifest().universe.bounds(),
    })?;
    Ok(Opening { rows, cols, winning_moves: t.winning_moves(&p)? })
}

/// The openings as CSV: `rows,cols,winning_moves` with moves as space-separated `row:col`.
pub fn openings_csv(openings: &[Opening]) -> String {
    let mut s = String::from("rows,cols,winning_moves\n");
    for o in openings {
        let moves: Vec<String> = o.winning_moves.iter().map(|[r, c]| format!("{r}:{c}")).collect();
        s.push_str(&format!("{},{},{}\n", o.rows, o.cols, moves.join(" ")));
    }
    s
}
