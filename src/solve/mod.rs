//! Solving: the level driver and the two computations it runs per level,
//! the loss sieve and the Grundy pass, with the plan, the memory model and
//! the events a run reports. See `docs/math.md` for the mathematics.

pub mod check;
mod driver;
mod error;
mod events;
mod found;
pub mod grundy;
mod handoff;
pub mod identity;
pub mod in_memory;
pub mod memory;
mod options;
mod plan;
pub mod prove;
mod scratch;
pub mod sieve;
pub mod tunables;
pub mod words;

pub use check::CHECK_SAMPLES;
pub use driver::{run, run_on};
pub use error::JobError;
pub use events::{Event, LevelReport, ProcessWork};
pub use in_memory::{solve_in_memory, solve_in_memory_watched, uses_word_sieve, SolveError, Solved};
pub use options::{Options, CHECKPOINT_SECONDS};
pub use plan::{JobFile, Plan, TOOL_VERSION};
