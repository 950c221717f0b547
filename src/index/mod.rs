//! Indexing the positions of a level: the counts behind level sizes, the
//! ranking (a bijection between a level's positions and `0..size`), one
//! enumeration of a level's positions in rank order, and the split of a
//! level into balanced contiguous shares. See `docs/math.md`, "Ranking".

mod enumerate;
mod ranking;
pub mod split;

pub use enumerate::{Changes, Visit};
pub use ranking::Ranking;
