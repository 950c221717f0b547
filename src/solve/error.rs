//! The error of a run.

use super::grundy::GrundyOverflow;
use crate::game::UniverseError;
use crate::store::{DirError, ManifestError, TableError};
use std::path::PathBuf;

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A bound of the universe is unusable.
    #[error("{0}")]
    Universe(#[from] UniverseError),
    /// A job or argument is invalid.
    #[error("{0}")]
    Invalid(String),
    /// The output directory holds something else, or another run holds it.
    #[error("{0}")]
    Refused(String),
    /// A table could not be written or read back.
    #[error("{0}")]
    Table(#[from] TableError),
    /// The manifest could not be read.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// A Grundy value beyond a byte.
    #[error("{0}")]
    Grundy(#[from] GrundyOverflow),
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The next level would not fit in memory.
    #[error("{0}")]
    Memory(String),
    /// The processes of a job were started with different options or
    /// builds: every process finds it at once, process 0 reports it.
    #[error("{0}")]
    Mismatch(String),
    /// The run stopped on request (`SIGTERM`, `SIGUSR1`: [`super::Options::stop`])
    /// at the end of a level, after a checkpoint of every level completed;
    /// running it again resumes there.
    #[error("{}", stopped_text(*levels_complete))]
    Stopped {
        /// The levels the checkpoint holds.
        levels_complete: u32,
    },
    /// An internal self-check failed (a bug: please report).
    #[error("self-check failed: {0}")]
    SelfCheck(String),
}

fn stopped_text(levels_complete: u32) -> String {
    match levels_complete {
        0 => "stopped on request before the first level was complete; run the same command again to start".to_string(),
        n => format!("stopped on request after level {n}; levels 1-{n} are saved: run the same command again to resume"),
    }
}

impl From<DirError> for JobError {
    fn from(e: DirError) -> Self {
        match e {
            DirError::Refused(why) => JobError::Refused(why),
            DirError::Manifest(e) => JobError::Manifest(e),
            DirError::Table(e) => JobError::Table(e),
        }
    }
}

/// Maps an I/O error on `path` to [`JobError::Io`].
pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io { path: path.to_path_buf(), source }
}
