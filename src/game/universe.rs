//! Universes: the family of positions a run covers.
//!
//! A universe holds every position with at most `rows` rows, at most `cols`
//! columns and at most `tiles` tiles (each bound optional). Every such family
//! is closed under moves, so one engine serves tile-count runs, boxes and
//! few-row families.

use super::position::{Position, MAX_SIDE};
use serde::{Deserialize, Serialize};

/// Bounds of a run. `None` means unbounded; at least the tile count must be
/// finite, directly or through `rows × cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Universe {
    /// Largest number of rows, or `None` for no bound.
    pub rows: Option<u32>,
    /// Largest number of columns, or `None` for no bound.
    pub cols: Option<u32>,
    /// Largest number of tiles, or `None` for `rows × cols`.
    pub tiles: Option<u32>,
}

/// Why a universe cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UniverseError {
    /// Neither a tile bound nor both sides are given.
    #[error("the universe is infinite: give max_tiles, or both rows and cols (--max-tiles, or --rows and --cols)")]
    Infinite,
    /// A bound of zero.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// A side beyond [`MAX_SIDE`].
    #[error("{0} must be at most {MAX_SIDE}")]
    TooWide(&'static str),
    /// No bound on a side, and more tiles than a side may hold.
    #[error("max_tiles must be at most {MAX_SIDE} when {0} are unbounded (a position has at most {MAX_SIDE} rows and columns): bound {0} too (--{0})")]
    UnboundedSide(&'static str),
    /// More tiles than a universe may have.
    #[error("{tiles} tiles are more than the {max} a universe may have (its level sizes would not fit in 64 bits)")]
    TooManyTiles {
        /// The universe's largest level.
        tiles: u32,
        /// The most it may have.
        max: u32,
    },
    /// Level sizes beyond what the ranking supports.
    #[error("level {tiles} of this universe has more positions than fit in 64 bits")]
    Overflow {
        /// First level that overflows.
        tiles: u32,
    },
}

impl Universe {
    /// All positions with at most `n` tiles.
    pub fn tiles(n: u32) -> Self {
        Universe { rows: None, cols: None, tiles: Some(n) }
    }

    /// All positions fitting an `r × c` box.
    pub fn boxed(r: u32, c: u32) -> Self {
        Universe { rows: Some(r), cols: Some(c), tiles: None }
    }

    /// Checks the bounds (not the level sizes; see [`crate::Ranking::new`]).
    ///
    /// # Errors
    /// [`UniverseError`] for infinite, empty or too wide universes.
    pub fn validate(&self) -> Result<(), UniverseError> {
        for (name, v) in [("rows", self.rows), ("cols", self.cols), ("max_tiles", self.tiles)] {
            if v == Some(0) {
                return Err(UniverseError::Zero(name));
            }
        }
        if self.rows.is_some_and(|r| r > MAX_SIDE) {
            return Err(UniverseError::TooWide("rows"));
        }
        if self.cols.is_some_and(|c| c > MAX_SIDE) {
            return Err(UniverseError::TooWide("cols"));
        }
        if self.tiles.is_none() && (self.rows.is_none() || self.cols.is_none()) {
            return Err(UniverseError::Infinite);
        }
        // A side left unbounded is bounded by the tiles: a row (or column)
        // of them all must still fit a position.
        for (name, side) in [("cols", self.cols), ("rows", self.rows)] {
            if side.is_none() && self.max_tiles() > MAX_SIDE {
                return Err(UniverseError::UnboundedSide(name));
            }
        }
        Ok(())
    }

    /// Largest tile count of the universe (its top level).
    pub fn max_tiles(&self) -> u32 {
        let area = match (self.rows, self.cols) {
            (Some(r), Some(c)) => r * c,
            _ => u32::MAX,
        };
        self.tiles.unwrap_or(u32::MAX).min(area)
    }

    /// Whether both sides are bounded: the positions that fit an `r × c`
    /// box (a tile bound may cut them further).
    pub fn is_box(&self) -> bool {
        self.rows.is_some() && self.cols.is_some()
    }

    /// Whether conjugation maps the universe onto itself (equal row and column bounds).
    pub fn is_symmetric(&self) -> bool {
        self.rows == self.cols
    }

    /// Whether a position belongs to the universe.
    pub fn contains(&self, p: &Position) -> bool {
        self.contains_rows(p.rows())
    }

    /// Whether the position of valid rows `rows` (top row first) belongs to the universe.
    pub fn contains_rows(&self, rows: &[u8]) -> bool {
        let tiles: u32 = rows.iter().map(|&r| r as u32).sum();
        self.rows.is_none_or(|r| rows.len() as u32 <= r)
            && self.cols.is_none_or(|c| rows.first().map_or(0, |&w| w as u32) <= c)
            && tiles <= self.max_tiles()
    }

    /// Its bounds in words, e.g. `at most 8 rows and 15 columns` or
    /// `at most 90 tiles`.
    pub fn bounds(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.rows {
            parts.push(format!("{r} row{}", if r == 1 { "" } else { "s" }));
        }
        if let Some(c) = self.cols {
            parts.push(format!("{c} column{}", if c == 1 { "" } else { "s" }));
        }
        if let Some(n) = self.tiles {
            parts.push(format!("{n} tile{}", if n == 1 { "" } else { "s" }));
        }
        let last = parts.pop().unwrap_or_default();
        if parts.is_empty() {
            format!("at most {last}")
        } else {
            format!("at most {} and {last}", parts.join(", "))
        }
    }

    /// A short human description, e.g. `tiles <= 60` or `8x15 box`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match (self.rows, self.cols) {
            (Some(r), Some(c)) => parts.push(format!("{r}x{c} box")),
            (Some(r), None) => parts.push(format!("rows <= {r}")),
            (None, Some(c)) => parts.push(format!("cols <= {c}")),
            (None, None) => {}
        }
        if let Some(n) = self.tiles {
            parts.push(format!("tiles <= {n}"));
        }
        parts.join(", ")
    }
}
