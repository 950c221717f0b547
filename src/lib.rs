//! # chomp-tables
//!
//! Solves 2-D Chomp level by level (a level is a tile count): the loss
//! [`sieve`] decides which positions are losses for the player to move, the
//! [`grundy`] pass computes Sprague–Grundy values, and the results are
//! written as checksummed, compressed [`table`]s that [`probe`] reads back.
//!
//! Modules follow the concepts of `chomp.md`: [`position`], [`rank`],
//! [`universe`], [`sieve`], [`grundy`], [`closed_form`], [`ichomp`], [`shard`], [`table`], [`summary`],
//! [`manifest`], [`job`], [`probe`], [`verify`], [`plot`], [`cluster`].

pub mod closed_form;
pub mod cluster;
pub mod grundy;
pub mod ichomp;
pub mod job;
pub mod manifest;
pub mod nd;
pub mod plot;
pub mod position;
pub mod probe;
pub mod rank;
pub mod shard;
pub mod sieve;
pub mod summary;
pub mod table;
pub mod universe;
pub mod verify;

pub use job::{JobFile, Plan};
pub use position::{Position, PositionError};
pub use probe::{Outcome, Tables};
pub use rank::Ranking;
pub use universe::{Universe, UniverseError};
