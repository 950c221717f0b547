//! Positions of 2-D Chomp: Young diagrams given by their row lengths.
//!
//! A position is a non-increasing sequence of positive row lengths, top row
//! first; cell `(0, 0)` is the poisoned tile. See `docs/math.md` for the rules.

use std::fmt;
use std::str::FromStr;

/// Largest row length and largest number of rows a position may have.
///
/// Rows are stored as bytes in the hot loops of the engine.
pub const MAX_SIDE: u32 = 255;

/// A Chomp position: row lengths, top row first, non-increasing and positive.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Position {
    rows: Vec<u8>,
}

/// Why a string or a row list is not a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// No rows at all (a position holds at least the poisoned tile).
    #[error("empty position: a position has at least the poisoned tile, e.g. \"1\"")]
    Empty,
    /// A token that is not a positive integer.
    #[error("row {index} is {token:?}, not a positive integer")]
    BadToken {
        /// 0-based row index.
        index: usize,
        /// The offending text.
        token: String,
    },
    /// Two commas with no row between them (or a comma at either end).
    #[error("row {index} is missing: two commas with nothing between them, or a comma at an end")]
    MissingRow {
        /// 0-based row index.
        index: usize,
    },
    /// A row of length zero.
    #[error("row {index} has length 0; list only non-empty rows")]
    ZeroRow {
        /// 0-based row index.
        index: usize,
    },
    /// A row longer than the row above it.
    #[error("row {index} ({len}) is longer than the row above it ({above}); rows must not increase")]
    Increasing {
        /// 0-based row index.
        index: usize,
        /// Its length.
        len: u32,
        /// Length of the row above.
        above: u32,
    },
    /// A side longer than [`MAX_SIDE`].
    #[error("position too large: more than {MAX_SIDE} rows or columns")]
    TooLarge,
}

impl Position {
    /// Builds a position from row lengths, checking that they are positive and non-increasing.
    ///
    /// # Errors
    /// [`PositionError`] when the rows do not form a Young diagram.
    pub fn new(rows: &[u32]) -> Result<Self, PositionError> {
        if rows.is_empty() {
            return Err(PositionError::Empty);
        }
        if rows.len() > MAX_SIDE as usize {
            return Err(PositionError::TooLarge);
        }
        for (index, &len) in rows.iter().enumerate() {
            if len == 0 {
                return Err(PositionError::ZeroRow { index });
            }
            if len > MAX_SIDE {
                return Err(PositionError::TooLarge);
            }
            if index > 0 && len > rows[index - 1] {
                return Err(PositionError::Increasing { index, len, above: rows[index - 1] });
            }
        }
        Ok(Position { rows: rows.iter().map(|&r| r as u8).collect() })
    }

    /// Builds a position from byte rows already known to be valid (non-increasing, positive).
    ///
    /// Used by the engine, which only produces valid diagrams; checked in debug builds.
    pub fn from_valid_rows(rows: &[u8]) -> Self {
        debug_assert!(!rows.is_empty() && rows.windows(2).all(|w| w[0] >= w[1]) && rows[rows.len() - 1] > 0);
        Position { rows: rows.to_vec() }
    }

    /// Row lengths, top row first.
    pub fn rows(&self) -> &[u8] {
        &self.rows
    }

    /// Row lengths, top row first, taken out of the position.
    pub fn into_rows(self) -> Vec<u8> {
        self.rows
    }

    /// Number of tiles (the level of the position).
    pub fn tiles(&self) -> u32 {
        self.rows.iter().map(|&r| r as u32).sum()
    }

    /// Number of rows.
    pub fn height(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Length of the top row.
    pub fn width(&self) -> u32 {
        self.rows[0] as u32
    }

    /// Whether the cell `(row, col)` belongs to the diagram.
    pub fn contains(&self, row: u32, col: u32) -> bool {
        (row as usize) < self.rows.len() && col < self.rows[row as usize] as u32
    }

    /// The transposed diagram (rows become columns). Preserves outcome and Grundy value.
    pub fn conjugate(&self) -> Position {
        Position { rows: conjugate_rows(&self.rows) }
    }

    /// The position after biting at `(row, col)`, or `None` if the cell is
    /// outside the diagram or is the poisoned tile `(0, 0)`.
    pub fn child(&self, row: u32, col: u32) -> Option<Position> {
        if (row, col) == (0, 0) || !self.contains(row, col) {
            return None;
        }
        let mut rows = Vec::with_capacity(self.rows.len());
        child_rows_into(&self.rows, row, col, &mut rows);
        Some(Position { rows })
    }

    /// Every legal move `(row, col)` with its child, rows top to bottom, columns left to right.
    pub fn moves(&self) -> Vec<((u32, u32), Position)> {
        let mut out = Vec::with_capacity(self.tiles() as usize - 1);
        for (r, &len) in self.rows.iter().enumerate() {
            for c in 0..len as u32 {
                if let Some(child) = self.child(r as u32, c) {
                    out.push(((r as u32, c), child));
                }
            }
        }
        out
    }
}

/// Writes into `out` (cleared first) the rows left by biting valid rows
/// `rows` at `(row, col)`, a cell of the diagram: rows from `row` down keep
/// at most `col` tiles, and empty rows go.
pub fn child_rows_into(rows: &[u8], row: u32, col: u32, out: &mut Vec<u8>) {
    out.clear();
    for (i, &len) in rows.iter().enumerate() {
        let len = if i as u32 >= row { len.min(col as u8) } else { len };
        if len == 0 {
            break;
        }
        out.push(len);
    }
}

/// Transposes byte rows (the conjugate partition).
pub fn conjugate_rows(rows: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    conjugate_rows_into(rows, &mut out);
    out
}

/// Transposes byte rows into `out` (cleared first): one write per column.
pub fn conjugate_rows_into(rows: &[u8], out: &mut Vec<u8>) {
    out.clear();
    // Columns `rows[i + 1] .. rows[i]` have exactly `i + 1` tiles.
    let mut below = 0;
    for (i, &len) in rows.iter().enumerate().rev() {
        out.extend(std::iter::repeat_n(i as u8 + 1, len.saturating_sub(below) as usize));
        below = below.max(len);
    }
}

impl FromStr for Position {
    type Err = PositionError;

    /// Parses `"5 3 3 1 1"` or `"5,3,3,1,1"` (spaces may surround commas;
    /// an empty row between two commas is an error).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut rows = Vec::new();
        let pieces: Vec<&str> = s.split(',').collect();
        for piece in &pieces {
            let before = rows.len();
            for token in piece.split_whitespace() {
                let index = rows.len();
                let len = match token.parse::<u32>() {
                    Ok(len) => len,
                    // Digits only, yet no u32: a number, just far too large.
                    Err(_) if token.bytes().all(|b| b.is_ascii_digit()) => return Err(PositionError::TooLarge),
                    Err(_) => return Err(PositionError::BadToken { index, token: token.to_string() }),
                };
                rows.push(len);
            }
            if pieces.len() > 1 && rows.len() == before {
                return Err(PositionError::MissingRow { index: rows.len() });
            }
        }
        Position::new(&rows)
    }
}

impl fmt::Display for Position {
    /// Row lengths separated by single spaces, e.g. `3 2 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.rows.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_separators() {
        let a: Position = "5 3 3 1 1".parse().unwrap();
        let b: Position = "5,3,3,1,1".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.tiles(), 13);
        assert_eq!(a.to_string(), "5 3 3 1 1");
    }

    #[test]
    fn rejects_malformed() {
        assert!(matches!("3 5".parse::<Position>(), Err(PositionError::Increasing { .. })));
        assert!(matches!("0".parse::<Position>(), Err(PositionError::ZeroRow { .. })));
        assert!(matches!("a b".parse::<Position>(), Err(PositionError::BadToken { .. })));
        assert!(matches!("".parse::<Position>(), Err(PositionError::Empty)));
        assert!(matches!("-1".parse::<Position>(), Err(PositionError::BadToken { .. })));
        assert!(matches!("256".parse::<Position>(), Err(PositionError::TooLarge)));
        assert!(matches!("99999999999999999999".parse::<Position>(), Err(PositionError::TooLarge)));
        assert!(matches!("3,,2".parse::<Position>(), Err(PositionError::MissingRow { index: 1 })));
        assert!(matches!(",3".parse::<Position>(), Err(PositionError::MissingRow { index: 0 })));
        assert!(matches!("3,".parse::<Position>(), Err(PositionError::MissingRow { index: 1 })));
        assert_eq!("3, 2 ,1".parse::<Position>().unwrap().to_string(), "3 2 1");
    }

    #[test]
    fn moves_and_children() {
        let p: Position = "3 2 1".parse().unwrap();
        let moves = p.moves();
        assert_eq!(moves.len(), 5);
        assert_eq!(p.child(1, 1).unwrap().to_string(), "3 1 1");
        assert_eq!(p.child(0, 1).unwrap().to_string(), "1 1 1");
        assert_eq!(p.child(2, 0).unwrap().to_string(), "3 2");
        assert!(p.child(0, 0).is_none());
        assert!(p.child(1, 2).is_none());
    }

    #[test]
    fn conjugate_is_involution() {
        let p: Position = "5 3 3 1 1".parse().unwrap();
        assert_eq!(p.conjugate().to_string(), "5 3 3 1 1".parse::<Position>().unwrap().conjugate().to_string());
        assert_eq!(p.conjugate().conjugate(), p);
        assert_eq!("4 1".parse::<Position>().unwrap().conjugate().to_string(), "2 1 1 1");
        assert_eq!(conjugate_rows(&[5, 3, 3, 1]), [4, 3, 3, 1, 1]);
        // Every partition of 12 (77 of them): column c of the conjugate counts the rows longer than c.
        fn partitions(left: u8, most: u8, rows: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
            if left == 0 {
                return out.push(rows.clone());
            }
            for r in (1..=most.min(left)).rev() {
                rows.push(r);
                partitions(left - r, r, rows, out);
                rows.pop();
            }
        }
        let mut all = Vec::new();
        partitions(12, 12, &mut Vec::new(), &mut all);
        assert_eq!(all.len(), 77);
        for rows in all {
            let want: Vec<u8> = (0..rows[0]).map(|c| rows.iter().filter(|&&len| len > c).count() as u8).collect();
            assert_eq!(conjugate_rows(&rows), want, "{rows:?}");
        }
    }
}
