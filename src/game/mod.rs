//! The game itself: positions and their moves, universes (the families of
//! positions a run covers), the closed forms of a few families, and iChomp.
//! See `docs/math.md`.

pub mod closed_form;
pub mod position;
pub mod universe;

pub use position::{conjugate_rows, Position, PositionError, MAX_SIDE};
pub use universe::{Universe, UniverseError};
