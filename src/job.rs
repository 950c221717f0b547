//! Jobs: what to compute (a [`Plan`]), where, and the level-by-level driver
//! that computes it, checkpointing after every level.

use crate::grundy::{self, GrundyOverflow, MAX_GRUNDY_TILES};
use crate::manifest::{sha256_hex, Manifest, ManifestError, FORMAT_NAME, MANIFEST};
use crate::rank::Ranking;
use crate::shard::{map_read_only, MappedBits, MappedBytes};
use crate::sieve::{sieve_level, LossSources};
use crate::summary::{grundy_histogram_csv, summary_csv, summary_json, LevelStats};
use crate::table::{self, level_name, level_path, write_atomic, Header, Kind, TableError};
use crate::universe::{Universe, UniverseError};
use memmap2::Mmap;
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Version of this tool, recorded in manifests.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a run computes: its universe and how far Grundy values go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The positions covered.
    pub universe: Universe,
    /// Grundy values for levels `1..=grundy_max_tiles` (0: none).
    pub grundy_max_tiles: u32,
}

impl Plan {
    /// Checks the plan against what the engine and the table format support.
    ///
    /// # Errors
    /// [`JobError::Invalid`] naming the offending field.
    pub fn validate(&self) -> Result<Ranking, JobError> {
        let ranking = Ranking::new(&self.universe)?;
        let top = ranking.max_tiles();
        if self.grundy_max_tiles > top {
            return Err(JobError::Invalid(format!(
                "grundy_max_tiles ({}) exceeds the universe's largest level ({top})",
                self.grundy_max_tiles
            )));
        }
        if self.grundy_max_tiles > MAX_GRUNDY_TILES {
            return Err(JobError::Invalid(format!(
                "grundy_max_tiles ({}) exceeds {MAX_GRUNDY_TILES}, the one-byte table limit",
                self.grundy_max_tiles
            )));
        }
        if let Some(n) = (1..=top).find(|&n| ranking.size(n) > u32::MAX as u64) {
            return Err(JobError::Invalid(format!("level {n} has {} positions; tables hold at most 2^32 per level", ranking.size(n))));
        }
        Ok(ranking)
    }
}

/// A job file (TOML), as kept in `jobs/`.
///
/// ```toml
/// name = "default"
/// out = "out/default"
/// max_tiles = 80
/// grundy_max_tiles = 60
/// # rows = 8    # optional bounds: a box or a few-row family
/// # cols = 15
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// A label for logs.
    #[serde(default)]
    pub name: Option<String>,
    /// Output directory (relative paths are relative to the working directory).
    pub out: PathBuf,
    /// Tile bound.
    #[serde(default)]
    pub max_tiles: Option<u32>,
    /// Row bound.
    #[serde(default)]
    pub rows: Option<u32>,
    /// Column bound.
    #[serde(default)]
    pub cols: Option<u32>,
    /// Grundy values up to this level (0 or absent: none).
    #[serde(default)]
    pub grundy_max_tiles: Option<u32>,
}

impl JobFile {
    /// Parses a job file's text.
    ///
    /// # Errors
    /// [`JobError::Invalid`] naming the field at fault.
    pub fn parse(text: &str) -> Result<Self, JobError> {
        toml::from_str(text).map_err(|e| JobError::Invalid(e.message().to_string()))
    }

    /// Reads and parses a job file.
    ///
    /// # Errors
    /// [`JobError`] when unreadable or invalid.
    pub fn read(path: &Path) -> Result<Self, JobError> {
        let text = fs::read_to_string(path).map_err(|e| JobError::Io { path: path.to_path_buf(), source: e })?;
        Self::parse(&text).map_err(|e| JobError::Invalid(format!("{}: {e}", path.display())))
    }

    /// The plan this job describes.
    pub fn plan(&self) -> Plan {
        Plan {
            universe: Universe { rows: self.rows, cols: self.cols, tiles: self.max_tiles },
            grundy_max_tiles: self.grundy_max_tiles.unwrap_or(0),
        }
    }
}

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A bound of the universe is unusable.
    #[error("{0}")]
    Universe(#[from] UniverseError),
    /// A job or argument is invalid.
    #[error("{0}")]
    Invalid(String),
    /// The output directory holds something else.
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
    /// An internal self-check failed (a bug: please report).
    #[error("self-check failed: {0}")]
    SelfCheck(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> JobError + '_ {
    move |source| JobError::Io { path: path.to_path_buf(), source }
}

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct Options {
    /// The table directory (created if missing; resumed if it holds this plan).
    pub out: PathBuf,
    /// Overwrite a table directory of another plan.
    pub force: bool,
}

/// What the driver reports after each level.
#[derive(Clone, Debug)]
pub struct LevelReport {
    /// The level's statistics.
    pub stats: LevelStats,
    /// Last level of the run.
    pub max_tiles: u32,
    /// Seconds spent in the sieve.
    pub sieve_seconds: f64,
    /// Seconds spent on Grundy values (0 when none).
    pub grundy_seconds: f64,
    /// Marks pushed by the sieve.
    pub marks: u64,
    /// Child look-ups of the Grundy pass.
    pub lookups: u64,
}

/// Events of a run, for progress display.
#[derive(Clone, Debug)]
pub enum Event {
    /// Resuming after `levels_complete` levels of an earlier run.
    Resumed {
        /// Levels already done.
        levels_complete: u32,
    },
    /// A level is finished and checkpointed.
    Level(LevelReport),
}

/// Runs a plan into `opts.out`, resuming a previous run of the same plan.
/// Returns the final manifest.
///
/// # Errors
/// [`JobError`] for invalid plans, foreign directories, I/O failures and
/// damaged checkpoints. Completed levels stay intact on error.
pub fn run(plan: &Plan, opts: &Options, mut on_event: impl FnMut(&Event)) -> Result<Manifest, JobError> {
    let ranking = plan.validate()?;
    let dir = &opts.out;
    let mut manifest = prepare_dir(dir, plan, opts.force)?;
    let top = ranking.max_tiles();
    if manifest.complete {
        return Ok(manifest);
    }
    for sub in ["losses", "grundy", ".work"] {
        fs::create_dir_all(dir.join(sub)).map_err(io_err(&dir.join(sub)))?;
    }
    let work = dir.join(".work");
    let mut sources = LossSources::default();
    let mut grundy_maps: Vec<Option<Mmap>> = vec![None];
    if manifest.levels_complete > 0 {
        on_event(&Event::Resumed { levels_complete: manifest.levels_complete });
        reload(&ranking, plan, dir, &manifest, &mut sources, &mut grundy_maps)?;
    }
    let universe = plan.universe;
    for n in manifest.levels_complete + 1..=top {
        let size = ranking.size(n);
        let t0 = Instant::now();
        let marks_path = work.join("marks.bin");
        let marks = MappedBits::create(&marks_path, size).map_err(io_err(&marks_path))?;
        let found = sieve_level(&ranking, n, &mut sources, &marks);
        marks.remove().map_err(io_err(&marks_path))?;
        let losses = found.ranks.len() as u64;
        let header = Header::new(Kind::Losses, &universe, n, size, losses);
        let bytes = table::encode_losses(&header, &found.ranks);
        write_atomic(&level_path(dir, Kind::Losses, n), &bytes)?;
        manifest.add_file(&level_name(Kind::Losses, n), &bytes);
        let sieve_seconds = t0.elapsed().as_secs_f64();

        let mut stats = LevelStats { tiles: n, positions: size, losses, grundy_histogram: None };
        let (mut grundy_seconds, mut lookups) = (0.0, 0);
        if n <= plan.grundy_max_tiles {
            let t1 = Instant::now();
            let raw_path = work.join(format!("g{n:04}.bin"));
            let cells = MappedBytes::create(&raw_path, size).map_err(io_err(&raw_path))?;
            let lower: Vec<&[u8]> = grundy_maps.iter().map(|m| m.as_deref().unwrap_or(&[])).collect();
            let level = grundy::grundy_level(&ranking, n, &lower, cells.cells())?;
            let map = cells.into_read_only().map_err(io_err(&raw_path))?;
            let values = &map[..size as usize];
            // Two independent computations must agree on the losses.
            let zeros = level.histogram[0];
            if zeros != losses || !found.ranks.iter().all(|&r| values[r as usize] == 0) {
                return Err(JobError::SelfCheck(format!("level {n}: the sieve finds {losses} losses, the Grundy pass {zeros}")));
            }
            let header = Header::new(Kind::Grundy, &universe, n, size, losses);
            let bytes = table::encode_grundy(&header, values);
            write_atomic(&level_path(dir, Kind::Grundy, n), &bytes)?;
            manifest.add_file(&level_name(Kind::Grundy, n), &bytes);
            grundy_maps.push(Some(map));
            stats.grundy_histogram = Some(level.histogram);
            grundy_seconds = t1.elapsed().as_secs_f64();
            lookups = level.lookups;
        }
        manifest.levels.push(stats.clone());
        manifest.levels_complete = n;
        manifest.write(dir)?;
        on_event(&Event::Level(LevelReport { stats, max_tiles: top, sieve_seconds, grundy_seconds, marks: found.marks, lookups }));
    }
    let mut outputs = vec![("summary.csv", summary_csv(&manifest.levels)), ("summary.json", summary_json(&manifest.levels))];
    if plan.grundy_max_tiles > 0 {
        outputs.push(("grundy_histogram.csv", grundy_histogram_csv(&manifest.levels)));
    }
    for (name, text) in outputs {
        write_atomic(&dir.join(name), text.as_bytes())?;
        manifest.add_file(name, text.as_bytes());
    }
    manifest.complete = true;
    manifest.write(dir)?;
    drop(grundy_maps);
    let _ = fs::remove_dir_all(&work);
    Ok(manifest)
}

/// Creates, resumes or (with `force`) resets the table directory.
fn prepare_dir(dir: &Path, plan: &Plan, force: bool) -> Result<Manifest, JobError> {
    let fresh = Manifest {
        format: FORMAT_NAME.to_string(),
        format_version: table::VERSION,
        tool_version: TOOL_VERSION.to_string(),
        universe: plan.universe,
        grundy_max_tiles: plan.grundy_max_tiles,
        levels_complete: 0,
        complete: false,
        levels: Vec::new(),
        files: Default::default(),
    };
    if dir.exists() {
        if !dir.is_dir() {
            return Err(JobError::Refused(format!("{}: exists and is not a directory", dir.display())));
        }
        match Manifest::read(dir) {
            Ok(m) => {
                let same = m.universe == plan.universe && m.grundy_max_tiles == plan.grundy_max_tiles;
                if same && m.tool_version == TOOL_VERSION {
                    return Ok(m);
                }
                if !force {
                    let why = if same {
                        format!("was written by chomp-tables {}, this is {TOOL_VERSION}", m.tool_version)
                    } else {
                        format!(
                            "holds another job ({}, Grundy to {}); this job is {}, Grundy to {}",
                            m.universe.describe(),
                            m.grundy_max_tiles,
                            plan.universe.describe(),
                            plan.grundy_max_tiles
                        )
                    };
                    return Err(JobError::Refused(format!("{}: {why}; use --force to overwrite it", dir.display())));
                }
                for sub in ["losses", "grundy", ".work"] {
                    let p = dir.join(sub);
                    if p.exists() {
                        fs::remove_dir_all(&p).map_err(io_err(&p))?;
                    }
                }
                for f in ["summary.csv", "summary.json", "grundy_histogram.csv", MANIFEST] {
                    let _ = fs::remove_file(dir.join(f));
                }
            }
            Err(ManifestError::Missing(_)) => {
                let mut entries = fs::read_dir(dir).map_err(io_err(dir))?;
                if entries.next().is_some() {
                    return Err(JobError::Refused(format!(
                        "{}: not empty and holds no manifest.json; not a chomp table directory (choose a new or empty one)",
                        dir.display()
                    )));
                }
            }
            Err(e) => {
                if !force {
                    return Err(JobError::Refused(format!("{e}; use --force to overwrite the directory")));
                }
            }
        }
    } else {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    fresh.write(dir)?;
    Ok(fresh)
}

/// Rebuilds the in-memory state of completed levels from their tables.
fn reload(
    ranking: &Ranking,
    plan: &Plan,
    dir: &Path,
    manifest: &Manifest,
    sources: &mut LossSources,
    grundy_maps: &mut Vec<Option<Mmap>>,
) -> Result<(), JobError> {
    let mut rows = Vec::new();
    for n in 1..=manifest.levels_complete {
        let size = ranking.size(n);
        let stats = &manifest.levels[n as usize - 1];
        let header = Header::new(Kind::Losses, &plan.universe, n, size, stats.losses);
        let path = level_path(dir, Kind::Losses, n);
        check_listed(manifest, dir, &level_name(Kind::Losses, n))?;
        let bitmap = table::read_losses(&path, &header)?;
        for rank in bitmap.iter() {
            ranking.unrank_into(n, rank as u64, &mut rows);
            sources.push(&rows, rank as u64);
        }
        if n <= plan.grundy_max_tiles {
            let header = Header::new(Kind::Grundy, &plan.universe, n, size, stats.losses);
            let path = level_path(dir, Kind::Grundy, n);
            check_listed(manifest, dir, &level_name(Kind::Grundy, n))?;
            let values = table::GrundyTable::read(&path, Some(&header))?.decode_all()?;
            let raw = dir.join(".work").join(format!("g{n:04}.bin"));
            fs::write(&raw, &values).map_err(io_err(&raw))?;
            grundy_maps.push(Some(map_read_only(&raw).map_err(io_err(&raw))?));
        }
    }
    Ok(())
}

/// Checks a completed level's file against its manifest checksum.
fn check_listed(manifest: &Manifest, dir: &Path, rel: &str) -> Result<(), JobError> {
    let entry = manifest.files.get(rel).ok_or_else(|| JobError::Refused(format!("{}: manifest does not list {rel}", dir.display())))?;
    let path = dir.join(rel);
    let bytes = fs::read(&path).map_err(io_err(&path))?;
    if sha256_hex(&bytes) != entry.sha256 {
        return Err(JobError::Table(TableError::Corrupt { path, what: "checksum differs from manifest.json".into() }));
    }
    Ok(())
}
