//! Reading table directories: the probe ([`Tables`]) with its typed
//! answers, rectangle openings, iChomp (four quadrants at once), flat
//! exports, and verification of a whole directory.

mod answer;
mod blocks;
pub mod export;
pub mod ichomp;
pub mod openings;
mod tables;
pub mod verify;

pub use answer::{Answer, MoveInfo, Outcome};
pub use blocks::{DEFAULT_CACHE_BYTES, OPEN_FILES};
pub use tables::{completed_levels, ProbeError, Tables};
