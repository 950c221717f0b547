//! n-dimensional Chomp in a box, and the divisor game.
//!
//! A box has sides `d1 × … × dk` (`k ≥ 1`). A position is a set of cells
//! closed downwards (with every cell, every cell with smaller or equal
//! coordinates) that holds the poisoned origin; a move picks a present cell
//! `c` other than the origin and removes every cell `≥ c` componentwise. The
//! origin alone is a loss for the player to move. `k = 2` is ordinary Chomp;
//! the divisor game on `N = p1^e1 · … · pk^ek` is this game in the box
//! `(e1+1) × … × (ek+1)` ([`divisors`]).
//!
//! A position is stored as its **heights**: for every cell of the grid
//! `d1 × … × d(k−1)` (row-major), the height of its stack along the last
//! axis, a value in `0..=dk`, non-increasing along every grid axis
//! ([`position`]). [`rank::NdRanking`] numbers these arrays densely in
//! lexicographic order with a finite automaton whose states are the last
//! values written; [`slices`] sees a position as its slices along the first
//! axis, for children and parents by table look-ups; [`mod@solve`] decides every
//! position level by level (a level is a cell count, children have fewer
//! cells), the levels' positions in parallel, by the sieve (losses mark their
//! parents) or by search; [`table`] writes and verifies the checksummed table directory
//! (format in `FORMAT.md`, section 13). The binary formats the answers of
//! `chomp nd` and `chomp divisors` (`src/bin/chomp/nd.rs`).

pub mod divisors;
pub mod position;
pub mod rank;
pub mod slices;
pub mod solve;
pub mod table;

pub use divisors::DivisorGame;
pub use rank::NdRanking;
pub use solve::{solve, solve_with_progress, LossOracle, Method, NdLevelCount, Solution};

/// Largest side of a box (heights and coordinates are bytes).
pub const MAX_SIDE: u32 = 255;

/// Most nonempty positions a box may have: loss tables store ranks as 32-bit
/// integers.
pub const MAX_POSITIONS: u64 = u32::MAX as u64;

/// Errors of the n-dimensional game: bad input, boxes beyond the limits,
/// damaged tables.
#[derive(Debug, thiserror::Error)]
pub enum NdError {
    /// Box dimensions that do not describe a box.
    #[error("invalid box dimensions {text:?}: {why}")]
    Dims {
        /// What was given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A position that is not one of the box.
    #[error("invalid position {text:?}: {why}")]
    Position {
        /// What was given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A number that cannot start a divisor game.
    #[error("invalid N {text:?}: {why}")]
    Number {
        /// What was given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// Arguments that do not go together, or a missing one.
    #[error("{0}")]
    Usage(String),
    /// A box beyond what the solver or the tables support.
    #[error("{0}")]
    TooLarge(String),
    /// A table directory that is missing, damaged or of another box.
    #[error("{0}")]
    Tables(String),
}

impl From<crate::store::TableError> for NdError {
    fn from(e: crate::store::TableError) -> Self {
        NdError::Tables(e.to_string())
    }
}

/// Parses box dimensions such as `3,3,3` (commas, `x` or spaces between the
/// sides; each side `1..=255`).
///
/// # Errors
/// [`NdError::Dims`] naming the fault.
pub fn parse_dims(text: &str) -> Result<Vec<u32>, NdError> {
    let bad = |why: String| NdError::Dims { text: text.to_string(), why };
    if text.trim().is_empty() {
        return Err(bad("no sides given (write them like 3,3,3)".into()));
    }
    let t = text.trim();
    let parts: Vec<&str> =
        if t.contains(',') { t.split(',').collect() } else { t.split(|c: char| c == 'x' || c.is_whitespace()).collect() };
    let mut dims = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let p = p.trim();
        if p.is_empty() {
            return Err(bad(format!("side {} is empty", i + 1)));
        }
        let d: u32 = p.parse().map_err(|_| bad(format!("side {} ({p:?}) is not a whole number", i + 1)))?;
        dims.push(d);
    }
    check_dims(&dims).map_err(|e| match e {
        NdError::Dims { why, .. } => bad(why),
        other => other,
    })?;
    Ok(dims)
}

/// Checks that every side lies in `1..=MAX_SIDE` and that there is one.
///
/// # Errors
/// [`NdError::Dims`] naming the fault.
pub fn check_dims(dims: &[u32]) -> Result<(), NdError> {
    let bad = |why: String| NdError::Dims { text: dims_text(dims), why };
    if dims.is_empty() {
        return Err(bad("a box needs at least one side".into()));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d == 0 {
            return Err(bad(format!("side {} is 0; every side must be at least 1", i + 1)));
        }
        if d > MAX_SIDE {
            return Err(bad(format!("side {} is {d}; sides are at most {MAX_SIDE}", i + 1)));
        }
    }
    Ok(())
}

/// `3x3x3` for `[3, 3, 3]`.
pub fn dims_text(dims: &[u32]) -> String {
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_parse() {
        assert_eq!(parse_dims("3,3,3").unwrap(), vec![3, 3, 3]);
        assert_eq!(parse_dims("2x3x4").unwrap(), vec![2, 3, 4]);
        assert_eq!(parse_dims(" 5 ").unwrap(), vec![5]);
        for bad in ["", " ", "0,3", "3,,3", "3,", "a,2", "256", "-1", "3,-2"] {
            assert!(parse_dims(bad).is_err(), "{bad:?}");
        }
    }
}
