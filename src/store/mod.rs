//! Storage: the table format (header, loss and Grundy payloads), the
//! manifest (every file's SHA-256, the run's checkpoint), the table
//! directory that owns names, writes, lifecycle and locking, and (for runs)
//! dense per-level data in memory-mapped files. Byte layouts: `FORMAT.md`.

mod atomic;
pub mod blocked;
pub mod convert;
mod dir;
pub mod format;
pub mod manifest;
#[cfg(feature = "tool")]
pub mod mapped;
mod ranks;

pub use atomic::{tmp_path, write_atomic};
#[cfg(feature = "tool")]
pub(crate) use dir::host_name;
pub use dir::{
    shards_of, DirError, DirLock, TableContent, TableDir, GRUNDY_HISTOGRAM_CSV, SUMMARIES, SUMMARY_CSV, SUMMARY_JSON, WINNING_MOVES_CSV,
};
pub use format::{GrundyTable, Header, Kind, ShardPlace, TableError};
pub use manifest::{file_sha256, sha256_hex, FileEntry, LevelCheck, Manifest, ManifestError, Shard, FORMAT_NAME, MANIFEST};
pub use ranks::{LossSet, SortedRanks};

/// Decodes `bytes` as a file of a table directory of unknown kind, checking
/// everything the format allows a reader to check without the rest of the
/// directory: a table of any version (header, index, every block or the
/// whole payload) or a manifest. Returns what it was, or why it is not one.
/// For fuzzing the decoders: it must return, never panic, whatever the bytes.
///
/// # Errors
/// [`TableError::Corrupt`] naming what is wrong.
pub fn decode_any(path: &std::path::Path, bytes: &[u8]) -> Result<String, TableError> {
    if bytes.starts_with(&format::MAGIC) && bytes.len() >= 10 {
        return match u16::from_le_bytes([bytes[8], bytes[9]]) {
            blocked::VERSION_BLOCKED => {
                let img = blocked::TableImage::new(path, bytes, None)?;
                match img.head.header.kind {
                    Kind::Losses => img.losses().map(|l| format!("format 3 loss table, {} losses", l.len())),
                    Kind::Grundy => img.grundy_values().map(|v| format!("format 3 Grundy table, {} values", v.len())),
                }
            }
            _ => match format::decode_losses(path, bytes, None) {
                Ok((_, b)) => Ok(format!("loss table, {} losses", b.len())),
                Err(_) => {
                    GrundyTable::from_bytes(path, bytes.to_vec(), None)?.decode_all().map(|v| format!("Grundy table, {} values", v.len()))
                }
            },
        };
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| TableError::Corrupt { path: path.to_path_buf(), what: "neither a table nor UTF-8".into() })?;
    match Manifest::parse(path, text) {
        Ok(m) => Ok(format!("manifest, {} levels, {} files", m.levels_complete, m.files.len())),
        Err(e) => Err(TableError::Corrupt { path: path.to_path_buf(), what: e.to_string() }),
    }
}
