//! Storage: the table format (header, loss and Grundy payloads), the
//! manifest (every file's SHA-256, the run's checkpoint), the table
//! directory that owns names, writes, lifecycle and locking, and (for runs)
//! dense per-level data in memory-mapped files. Byte layouts: `FORMAT.md`.

pub mod blocked;
pub mod convert;
mod dir;
pub mod format;
pub mod manifest;
#[cfg(feature = "tool")]
pub mod mapped;

pub use dir::{
    shards_of, tmp_path, write_atomic, DirError, DirLock, LossSet, TableContent, TableDir, GRUNDY_HISTOGRAM_CSV, SUMMARY_CSV, SUMMARY_JSON,
};
pub use format::{GrundyTable, Header, Kind, ShardPlace, TableError};
pub use manifest::{file_sha256, sha256_hex, FileEntry, Manifest, ManifestError, Shard, FORMAT_NAME, MANIFEST};
