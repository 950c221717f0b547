//! How to run a plan: the table directory, memory and scratch places,
//! checkpoints and the in-run check ([`Options`]), apart from the driver
//! that follows them so that the run's identity can name them too.

use super::check::CHECK_SAMPLES;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct Options {
    /// The table directory (created if missing; resumed if it holds this plan).
    pub out: PathBuf,
    /// Start over: clear a table directory of another plan, or of this one
    /// (instead of resuming it).
    pub force: bool,
    /// Refuse to start a level whose estimated memory exceeds this many bytes
    /// (default: what the system and the cgroup report available).
    pub max_memory: Option<u64>,
    /// Where scratch files go (e.g. node-local disk); default `OUT/.work`.
    pub work_dir: Option<PathBuf>,
    /// Seconds of work between checkpoints (the manifest, after one flush of
    /// the tables written since the last): levels that take less are
    /// checkpointed together, so that small runs do not pay two flushes per
    /// level. 0 checkpoints every level. A crash loses at most this much work.
    pub checkpoint_seconds: f64,
    /// Positions of each level checked against the rules of the game once
    /// its tables are written (format 3; 0: none). See [`super::check`].
    pub check_samples: u64,
    /// Set (by a signal handler, say) to stop the run at the end of the
    /// level in progress: the processes agree on it at every level's end,
    /// checkpoint the levels done and return [`super::JobError::Stopped`]. Not
    /// part of the run's identity: processes may be asked apart.
    pub stop: Option<Arc<AtomicBool>>,
}

/// The default [`Options::checkpoint_seconds`].
pub const CHECKPOINT_SECONDS: f64 = 2.0;

impl Options {
    /// Options for a run into `out`: no overwrite, memory limited by what is
    /// available, scratch files inside `out`.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Options {
            out: out.into(),
            force: false,
            max_memory: None,
            work_dir: None,
            checkpoint_seconds: CHECKPOINT_SECONDS,
            check_samples: CHECK_SAMPLES,
            stop: None,
        }
    }
}
