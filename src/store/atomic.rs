//! Files written whole or not at all: a temporary name in the same
//! directory, then a rename.

use super::format::TableError;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, flushed to disk, then renamed over `path`.
///
/// # Errors
/// I/O errors; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TableError> {
    let tmp = tmp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            // Make the rename itself durable; not every filesystem allows this.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        TableError::io(path, e)
    })
}

/// The temporary name a file is written under before its rename.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}
