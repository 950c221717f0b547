//! Reports of a run: per-level statistics and the summary files derived
//! from them, the OEIS b-files, and (feature `tool`) the plots.

pub mod oeis;
#[cfg(feature = "tool")]
pub mod plot;
pub mod summary;

pub use summary::LevelStats;
