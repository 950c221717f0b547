//! Helpers shared by the test modules, each defined once:
//!
//! - [`game`]: Chomp from its definition alone (partitions, moves, a
//!   brute-force solver), sharing no code with the library;
//! - [`binary`]: the `chomp` binary run as a user would, with the checks on
//!   its output;
//! - [`engine`]: runs of the library's engine into a temporary directory;
//! - here: the reference figures in `tests/data/`, directory listings and a
//!   small deterministic random generator.

pub mod binary;
pub mod engine;
pub mod game;

pub use binary::{assert_ok, assert_one_line_error, chomp, chomp_in, chomp_solve, text};
pub use engine::{loss_set, pos, solve, solve_plan};
pub use game::{bite, children, partitions, tiles, Brute, Rows};

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The reference figures, copied into the repository (see `tests/data/README.md`).
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");

/// The text of a file of `tests/data/`.
pub fn data(name: &str) -> String {
    let path = Path::new(DATA).join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` with its contents and modification time (nothing
/// when `dir` is not a directory).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    if dir.is_dir() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(snapshot(&path));
            } else {
                let meta = fs::metadata(&path).unwrap();
                out.insert(path.clone(), (fs::read(&path).unwrap(), meta.modified().unwrap()));
            }
        }
    }
    out
}

/// Every file under `dir` (relative path) with its contents.
pub fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(dir).into_iter().map(|(path, (bytes, _))| (relative(dir, &path), bytes)).collect()
}

/// Copies directory `from` (recursively) to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Files (relative paths) under `dir`.
pub fn files(dir: &Path) -> BTreeSet<String> {
    snapshot(dir).keys().map(|path| relative(dir, path)).collect()
}

fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap().to_string_lossy().into_owned()
}

/// The library's small deterministic generator (SplitMix64), for samples.
pub use chomp_tables::rng::SplitMix;

/// Uniform integers in a closed range, for the samples of the tests.
pub trait Range {
    /// Uniform-ish in `lo..=hi`.
    fn range(&mut self, lo: u32, hi: u32) -> u32;
}

impl Range for SplitMix {
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below((hi - lo + 1) as u64) as u32
    }
}
