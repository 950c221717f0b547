//! A node's scratch directory on `--work-dir`, `chomp-{pid}-node{leader}`
//! (the node's first process's pid and index): the mark bits and Grundy
//! values of smaller levels. The node's first process owns it while the
//! run lasts and removes it at the end. A run killed before its end leaves
//! it behind, so every run first removes the scratch of runs that are gone
//! from its node's `--work-dir`.
//!
//! Ownership is a `flock` on `DIR/.owner`, a file that names the host: a
//! directory is removed only if its owner file names this host and nobody
//! holds its lock (the lock of a killed process is released by the kernel).
//! Another host's scratch on a shared `--work-dir` is never touched, nor a
//! directory without an owner file.

use super::error::io_err;
use super::JobError;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The start of a scratch directory's name.
pub const PREFIX: &str = "chomp-";

/// The owner file inside a scratch directory.
const OWNER: &str = ".owner";

/// A scratch directory this process owns; removed when dropped.
pub struct Scratch {
    path: PathBuf,
    /// The owner file, locked (`None` where the file system has no `flock`:
    /// the directory is still removed at the end, but not after a kill).
    _owner: Option<File>,
}

impl Scratch {
    /// Creates directory `path` (if missing) and takes its ownership.
    ///
    /// # Errors
    /// I/O errors creating it.
    pub fn create(path: &Path) -> Result<Self, JobError> {
        fs::create_dir_all(path).map_err(io_err(path))?;
        // Locked under another name, then renamed (the lock stays with the
        // file): a run cleaning up never sees an owner file not yet locked.
        let new = path.join(".owner-new");
        let mut file = File::create(&new).map_err(io_err(&new))?;
        file.write_all(crate::store::host_name().as_bytes()).map_err(io_err(&new))?;
        let owner = match file.try_lock() {
            Ok(()) => {
                fs::rename(&new, path.join(OWNER)).map_err(io_err(&new))?;
                Some(file)
            }
            Err(_) => None,
        };
        Ok(Scratch { path: path.to_path_buf(), _owner: owner })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Whether `name` is a scratch directory's: `chomp-{pid}-node{leader}`.
fn is_scratch_name(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix(PREFIX).and_then(|rest| rest.split_once("-node")).is_some_and(|(pid, leader)| digits(pid) && digits(leader))
}

/// Removes the scratch directories in `work_dir` of runs of this host that
/// are gone (their owner file names this host and is not locked); returns
/// how many. Best effort: what cannot be read or removed stays.
pub fn remove_stale(work_dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(work_dir) else { return 0 };
    let host = crate::store::host_name();
    let mut removed = 0;
    for entry in entries.flatten() {
        if !is_scratch_name(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let Ok(mut owner) = OpenOptions::new().read(true).write(true).open(entry.path().join(OWNER)) else { continue };
        let mut named = String::new();
        if owner.read_to_string(&mut named).is_err() || named != host || owner.try_lock().is_err() {
            continue;
        }
        if fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_of_a_gone_run_is_removed_and_a_live_one_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path();
        let live = Scratch::create(&w.join("chomp-11-node0")).unwrap();
        // A killed run's: its owner file names this host, and nobody holds its lock.
        let gone = w.join("chomp-13-node2");
        fs::create_dir_all(&gone).unwrap();
        fs::write(gone.join(OWNER), crate::store::host_name()).unwrap();
        fs::write(gone.join("g0001.bin"), b"values").unwrap();
        // Another host's, and directories that are no scratch of chomp's.
        let theirs = w.join("chomp-14-node0");
        fs::create_dir_all(&theirs).unwrap();
        fs::write(theirs.join(OWNER), "another-host").unwrap();
        for other in ["chomp-x-node0", "mine"] {
            fs::create_dir_all(w.join(other)).unwrap();
            fs::write(w.join(other).join(OWNER), crate::store::host_name()).unwrap();
        }
        assert_eq!(remove_stale(w), 1);
        assert!(!gone.exists());
        for kept in ["chomp-11-node0", "chomp-14-node0", "chomp-x-node0", "mine"] {
            assert!(w.join(kept).exists(), "{kept}");
        }
        drop(live);
        assert!(!w.join("chomp-11-node0").exists());
    }
}
