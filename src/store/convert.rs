//! Rewriting a table directory of any format as format 3 (block-addressable
//! tables), level by level: every source file is checked (its SHA-256 and
//! its structure) before its contents are written again, the result is
//! byte-identical to what a format-3 run of the same job writes, and a
//! conversion stopped at any moment resumes after its last written level.

use super::blocked::VERSION_BLOCKED;
use super::dir::{DirError, TableContent, TableDir, SUMMARIES};
use super::format::Kind;
use super::manifest::{LevelCheck, Manifest};
use std::path::Path;

/// What [`convert`] reports after each level.
#[derive(Clone, Copy, Debug)]
pub struct Converted {
    /// The level written.
    pub tiles: u32,
    /// The last level to write.
    pub levels: u32,
    /// Bytes of the level's source tables.
    pub source_bytes: u64,
    /// Bytes of its new tables.
    pub bytes: u64,
    /// Positions of it checked (0: none).
    pub checked: u64,
}

/// A check of each level converted, as a run makes it: given the new
/// manifest listing the level, the level and its losses, what the manifest
/// records of the check, or why the level fails it
/// (`crate::solve::check::Checker` in the binary).
pub type LevelChecker<'a> = dyn FnMut(&Manifest, u32, &[u64]) -> Result<Option<LevelCheck>, String> + 'a;

/// Converts table directory `src` (format 1, 2 or 3) into `out` in format 3,
/// checking each level written with `check`. `out` must be new, empty, or a
/// conversion of the same directory stopped earlier (which is resumed).
/// Returns the new manifest.
///
/// # Errors
/// [`DirError`] when `src` is damaged (naming the file), when a level fails
/// its check, when `out` holds something else or is in use, and for I/O errors.
pub fn convert(src: &Path, out: &Path, mut on_level: impl FnMut(Converted), check: &mut LevelChecker) -> Result<Manifest, DirError> {
    let from = TableDir::new(src);
    let source = from.read_manifest()?;
    let dir = TableDir::new(out).deferring();
    if from.path().canonicalize().ok().is_some_and(|a| dir.path().canonicalize().ok() == Some(a)) {
        return Err(DirError::Refused(format!("{}: the output directory is the source directory", out.display())));
    }
    let _lock = dir.lock()?;
    let mut fresh = source.clone();
    fresh.format_version = VERSION_BLOCKED;
    fresh.tool_version = env!("CARGO_PKG_VERSION").to_string();
    fresh.levels_complete = 0;
    fresh.complete = false;
    fresh.levels.clear();
    fresh.shards.clear();
    fresh.checks.clear();
    fresh.files.clear();
    if let Ok(held) = dir.read_manifest() {
        if !held.same_job(&fresh) {
            return Err(DirError::Refused(format!(
                "{}: holds another job ({}); choose a new or empty directory",
                out.display(),
                held.universe.describe()
            )));
        }
    }
    let mut m = dir.open_run(fresh, false)?;
    let prefix = m.levels_complete as usize;
    let resumable = m.format_version == VERSION_BLOCKED
        && prefix <= source.levels.len()
        && m.levels[..] == source.levels[..prefix]
        && m.shards[..] == source.shards[..m.shards.len().min(source.shards.len())];
    if !resumable {
        return Err(DirError::Refused(format!(
            "{}: holds another conversion or run (not a format-3 copy of {}); choose a new or empty directory",
            out.display(),
            src.display()
        )));
    }
    dir.remove_leftovers()?;
    dir.create_table_dirs()?;
    for n in m.levels_complete + 1..=source.levels_complete {
        let i = n as usize - 1;
        m.levels.push(source.levels[i].clone());
        if source.shard_positions.is_some() {
            m.shards.push(source.shards[i].clone());
        }
        m.levels_complete = n;
        let mut entries = Vec::new();
        let mut source_bytes = 0;
        let mut losses = Vec::new();
        for (s, shard) in source.level_shards(n).iter().enumerate() {
            let bits = from.read_loss_shard(&source, n, s)?;
            let ranks: Vec<u64> = bits.iter().map(|r| shard.first + r as u64).collect();
            drop(bits);
            entries.push(dir.write_table(&m, n, s, TableContent::Losses(&ranks))?);
            losses.extend(ranks);
            if n <= source.grundy_max_tiles {
                let values = from.read_grundy_shard_values(&source, n, s)?;
                entries.push(dir.write_table(&m, n, s, TableContent::Grundy(&values))?);
            }
        }
        for kind in [Kind::Losses, Kind::Grundy] {
            if kind == Kind::Losses || n <= source.grundy_max_tiles {
                source_bytes += TableDir::table_names(&source, kind, n).iter().map(|f| source.files[f].bytes).sum::<u64>();
            }
        }
        let bytes = entries.iter().map(|(_, e)| e.bytes).sum();
        m.add_entries(entries);
        let record = check(&m, n, &losses).map_err(|what| DirError::Refused(format!("{}: {what}", out.display())))?;
        let checked = record.map_or(0, |c| c.positions);
        m.checks.extend(record);
        drop(losses);
        dir.sync_written()?;
        m.write(dir.path())?;
        on_level(Converted { tiles: n, levels: source.levels_complete, source_bytes, bytes, checked });
    }
    if source.complete && !m.complete {
        // The summaries derive from the level statistics: the same bytes as
        // the source's, which must match them.
        for name in SUMMARIES {
            if source.files.contains_key(name) {
                source.read_listed(from.path(), name)?;
            }
        }
        dir.finish(&mut m)?;
        for name in SUMMARIES {
            if m.files.get(name).map(|e| &e.sha256) != source.files.get(name).map(|e| &e.sha256) {
                return Err(DirError::Refused(format!("{}: differs from the summary of its level statistics", src.join(name).display())));
            }
        }
    }
    Ok(m)
}
