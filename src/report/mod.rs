//! Reports of a run: per-level statistics and the summary files derived
//! from them, the OEIS b-files, rectangle openings, and (feature `tool`)
//! the plots.

pub mod oeis;
pub mod openings;
#[cfg(feature = "tool")]
pub mod plot;
pub mod summary;

pub use summary::LevelStats;

use std::sync::atomic::AtomicU64;

/// How far a long piece of work has gone: `done` of `total` (bytes,
/// positions, index slots, prefixes: the worker says which), shared with
/// the thread that shows it.
#[derive(Debug, Default)]
pub struct Progress {
    /// Done so far.
    pub done: AtomicU64,
    /// Of this many.
    pub total: AtomicU64,
}
