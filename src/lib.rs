//! # chomp-tables
//!
//! Solves 2-D Chomp level by level (a level is a tile count): the loss sieve
//! decides which positions are losses for the player to move, the Grundy
//! pass computes Sprague–Grundy values, and the results are written as
//! checksummed, compressed tables that a [`Tables`] reader answers from.
//! The mathematics is in `docs/math.md`, the file formats in `FORMAT.md`.
//!
//! One module per concept:
//!
//! | module | what it holds |
//! |---|---|
//! | [`game`] | positions, universes, closed forms, iChomp |
//! | [`index`] | level sizes, ranking (position ↔ index), enumeration, work splitting |
//! | [`store`] | the table format, the manifest, the table directory ([`TableDir`]) |
//! | [`read`] | opening tables: outcomes, values, moves, openings, verification |
//! | [`play`] | a computer player with four levels of explicit knowledge |
//! | `solve` | the level driver, sieve, Grundy pass, memory model (feature `tool`) |
//! | `cluster` | one process or MPI processes (feature `tool`; MPI with `mpi`) |
//! | `fetch` | downloading a published table directory from a mirror, checked (feature `tool`) |
//! | [`report`] | summaries (and plots, feature `tool`) |
//! | [`rng`] | the seeded generator of every sample and random choice |
//! | `nd` | Chomp in a k-dimensional box and the divisor game (feature `tool`) |
//! | `fewrow` | boxes of few rows (or columns), one entry per prefix of all rows but the last (feature `tool`) |
//!
//! With `default-features = false` the crate is a reader only: positions,
//! ranking, table decoding, the manifest, the probe and the computer
//! player, without rayon, memmap2, plotters, clap, MPI or the HTTP server's
//! dependencies (the server is part of the `chomp` binary, feature `tool`).
#![warn(missing_docs)]

pub mod game;
pub mod index;
pub mod play;
pub mod read;
pub mod report;
pub mod rng;
pub mod store;

#[cfg(feature = "tool")]
pub mod cluster;
#[cfg(feature = "tool")]
pub mod fetch;
#[cfg(feature = "tool")]
pub mod fewrow;
#[cfg(feature = "tool")]
pub mod nd;
#[cfg(feature = "tool")]
pub mod solve;

pub use game::{Position, PositionError, Universe, UniverseError};
pub use index::Ranking;
pub use read::{Answer, MoveInfo, Outcome, ProbeError, Tables};
pub use store::{Manifest, TableDir};

#[cfg(feature = "tool")]
pub use solve::{JobError, JobFile, Options, Plan};
