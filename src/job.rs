//! Jobs: what to compute (a [`Plan`]), where, and the level-by-level driver
//! that computes it, checkpointing after every level.

use crate::cluster::{Comm, Solo};
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
    /// The next level would not fit in memory.
    #[error("{0}")]
    Memory(String),
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
    /// Refuse to start a level whose estimated memory exceeds this many bytes
    /// (default: what the system reports available).
    pub max_memory: Option<u64>,
}

impl Options {
    /// Options for a run into `out`: no overwrite, memory limited by what is available.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Options { out: out.into(), force: false, max_memory: None }
    }
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
    /// The run ended; the work of every rank (root only).
    Ranks(Vec<RankWork>),
}

/// What one rank did during a run (for balance and memory reports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankWork {
    /// The rank.
    pub rank: usize,
    /// Marks pushed by its share of the sieve.
    pub marks: u64,
    /// Positions it scanned for marks.
    pub scanned: u64,
    /// Positions whose Grundy value it computed.
    pub evaluated: u64,
    /// Child look-ups of its Grundy work.
    pub lookups: u64,
    /// Its peak resident memory in KiB (0 where unknown).
    pub peak_kib: u64,
}

impl RankWork {
    fn to_bytes(&self) -> Vec<u8> {
        [self.rank as u64, self.marks, self.scanned, self.evaluated, self.lookups, self.peak_kib]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }
    fn from_bytes(b: &[u8]) -> Self {
        let v: Vec<u64> = b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        RankWork { rank: v[0] as usize, marks: v[1], scanned: v[2], evaluated: v[3], lookups: v[4], peak_kib: v[5] }
    }
}

/// Peak resident set size of this process in KiB, from /proc (0 where unavailable).
pub fn peak_rss_kib() -> u64 {
    proc_status_kib("VmHWM:")
}

/// Current resident set size of this process in KiB (0 where unavailable).
fn current_rss_kib() -> u64 {
    proc_status_kib("VmRSS:")
}

fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

/// Runs a plan into `opts.out` in this process, resuming a previous run of
/// the same plan. Returns the final manifest.
///
/// # Errors
/// [`JobError`] for invalid plans, foreign directories, I/O failures and
/// damaged checkpoints. Completed levels stay intact on error.
pub fn run(plan: &Plan, opts: &Options, on_event: impl FnMut(&Event)) -> Result<Manifest, JobError> {
    run_on(plan, opts, &Solo, on_event)
}

/// Runs a plan on the ranks of `comm`. Every rank computes its share of each
/// level and ends with the same data; rank 0 alone writes the table
/// directory (which must be on a file system every rank can read, for
/// resuming). Returns the final manifest (on every rank).
///
/// # Errors
/// As [`run`]; also when ranks run different binaries or jobs. With several
/// ranks an error on one rank leaves the others waiting: the caller aborts
/// the job ([`Comm::abort`]).
pub fn run_on(plan: &Plan, opts: &Options, comm: &dyn Comm, mut on_event: impl FnMut(&Event)) -> Result<Manifest, JobError> {
    let ranking = plan.validate()?;
    let dir = &opts.out;
    let root = comm.is_root();
    if comm.size() > 1 {
        check_same_job(plan, dir, comm)?;
    }
    let mut manifest = if root {
        let m = prepare_dir(dir, plan, opts.force)?;
        // A run killed after its last checkpoint may have left shard files or
        // temporary files behind: never part of the result. (Before the
        // barrier: the other ranks create their shard directories after it.)
        remove_leftovers(dir)?;
        m
    } else {
        fresh_manifest(plan)
    };
    comm.barrier();
    if !root {
        manifest = Manifest::read(dir)?;
    }
    let top = ranking.max_tiles();
    if manifest.complete {
        return Ok(manifest);
    }
    let work = dir.join(".work").join(format!("rank{}", comm.rank()));
    if root {
        for sub in ["losses", "grundy"] {
            fs::create_dir_all(dir.join(sub)).map_err(io_err(&dir.join(sub)))?;
        }
    }
    fs::create_dir_all(&work).map_err(io_err(&work))?;
    let mut sources = LossSources::for_rank(comm.rank(), comm.size());
    let mut grundy_maps: Vec<Option<Mmap>> = vec![None];
    if manifest.levels_complete > 0 {
        on_event(&Event::Resumed { levels_complete: manifest.levels_complete });
        reload(&ranking, plan, dir, &work, &manifest, &mut sources, &mut grundy_maps)?;
    }
    let universe = plan.universe;
    let mut mine = RankWork { rank: comm.rank(), ..Default::default() };
    for n in manifest.levels_complete + 1..=top {
        let size = ranking.size(n);
        check_memory(&ranking, plan, n, &sources, &manifest, opts.max_memory)?;
        let t0 = Instant::now();
        let marks_path = work.join("marks.bin");
        let mut marks = MappedBits::create(&marks_path, size).map_err(io_err(&marks_path))?;
        let found = sieve_level(&ranking, n, &mut sources, &mut marks, comm);
        marks.remove().map_err(io_err(&marks_path))?;
        mine.marks += found.marks;
        mine.scanned += found.scanned;
        let losses = found.ranks.len() as u64;
        if root {
            let header = Header::new(Kind::Losses, &universe, n, size, losses);
            let bytes = table::encode_losses(&header, &found.ranks);
            write_atomic(&level_path(dir, Kind::Losses, n), &bytes)?;
            manifest.add_file(&level_name(Kind::Losses, n), &bytes);
        }
        let sieve_seconds = t0.elapsed().as_secs_f64();

        let mut stats = LevelStats { tiles: n, positions: size, losses, grundy_histogram: None };
        let (mut grundy_seconds, mut lookups) = (0.0, 0);
        if n <= plan.grundy_max_tiles {
            let t1 = Instant::now();
            let raw_path = work.join(format!("g{n:04}.bin"));
            let mut cells = MappedBytes::create(&raw_path, size).map_err(io_err(&raw_path))?;
            let lower: Vec<&[u8]> = grundy_maps.iter().map(|m| m.as_deref().unwrap_or(&[])).collect();
            let level = grundy::grundy_level(&ranking, n, &lower, cells.cells(), comm)?;
            comm.or_bytes(&mut cells.bytes_mut()[..size as usize]);
            let map = cells.into_read_only().map_err(io_err(&raw_path))?;
            let values = &map[..size as usize];
            let histogram = grundy::histogram(values);
            // Two independent computations must agree on the losses.
            if histogram[0] != losses || !found.ranks.iter().all(|&r| values[r as usize] == 0) {
                return Err(JobError::SelfCheck(format!("level {n}: the sieve finds {losses} losses, the Grundy pass {}", histogram[0])));
            }
            if root {
                let header = Header::new(Kind::Grundy, &universe, n, size, losses);
                let bytes = table::encode_grundy(&header, values);
                write_atomic(&level_path(dir, Kind::Grundy, n), &bytes)?;
                manifest.add_file(&level_name(Kind::Grundy, n), &bytes);
            }
            grundy_maps.push(Some(map));
            stats.grundy_histogram = Some(histogram);
            grundy_seconds = t1.elapsed().as_secs_f64();
            lookups = level.lookups;
            mine.evaluated += level.evaluated;
            mine.lookups += level.lookups;
        }
        manifest.levels.push(stats.clone());
        manifest.levels_complete = n;
        if root {
            manifest.write(dir)?;
        }
        on_event(&Event::Level(LevelReport { stats, max_tiles: top, sieve_seconds, grundy_seconds, marks: found.marks, lookups }));
    }
    if root {
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
    }
    drop(grundy_maps);
    let _ = fs::remove_dir_all(&work);
    mine.peak_kib = peak_rss_kib();
    let work_all: Vec<RankWork> = comm.all_gather(&mine.to_bytes()).iter().map(|b| RankWork::from_bytes(b)).collect();
    if root {
        let _ = fs::remove_dir_all(dir.join(".work"));
        on_event(&Event::Ranks(work_all));
    }
    Ok(manifest)
}

/// Estimated bytes a rank holds while computing level `n`: the loss sources
/// (growing by about the previous level's loss share), the level's mark bits,
/// and for Grundy levels every smaller level's values (mapped) plus this
/// level's values and their compressed copy.
pub fn estimate_level_bytes(ranking: &Ranking, plan: &Plan, n: u32, sources: &LossSources, manifest: &Manifest) -> u64 {
    let size = ranking.size(n);
    let share = manifest.levels.last().map_or(0.05, |l| l.losses as f64 / l.positions as f64);
    let new_losses = (share * 1.5 * size as f64) as u64;
    let mut bytes = sources.heap_bytes() as u64 + new_losses * (n as u64 / 2 + 32) + size / 8;
    if n <= plan.grundy_max_tiles {
        bytes += (1..n).map(|m| ranking.size(m)).sum::<u64>() + 2 * size;
    }
    bytes
}

/// Bytes the system reports available (MemAvailable), if known.
fn available_memory() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn check_memory(
    ranking: &Ranking,
    plan: &Plan,
    n: u32,
    sources: &LossSources,
    manifest: &Manifest,
    limit: Option<u64>,
) -> Result<(), JobError> {
    let need = estimate_level_bytes(ranking, plan, n, sources, manifest);
    let gib = |b: u64| {
        if b >= 1 << 30 {
            format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
        } else {
            format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
        }
    };
    let kept = if n > 1 { format!("levels 1..={} are complete and kept", n - 1) } else { "no level is complete yet".to_string() };
    if let Some(limit) = limit {
        if need > limit {
            return Err(JobError::Memory(format!(
                "level {n} needs about {}, more than --max-memory ({}); {kept}: rerun with a larger limit to resume",
                gib(need),
                gib(limit)
            )));
        }
    } else if let Some(avail) = available_memory() {
        let held = current_rss_kib() * 1024;
        if need.saturating_sub(held) > avail {
            return Err(JobError::Memory(format!(
                "level {n} needs about {}, only {} is available; {kept}: rerun on a larger machine (or more ranks) to resume",
                gib(need),
                gib(avail + held)
            )));
        }
    }
    Ok(())
}

/// Refuses to run when the ranks disagree on the binary, the plan or the directory.
fn check_same_job(plan: &Plan, dir: &Path, comm: &dyn Comm) -> Result<(), JobError> {
    let exe = std::env::current_exe().and_then(fs::read).map(|b| sha256_hex(&b)).unwrap_or_default();
    let mine = format!("{TOOL_VERSION} {exe} {plan:?} {}", dir.display());
    let all = comm.all_gather(mine.as_bytes());
    if let Some(r) = all.iter().position(|f| f != &all[0]) {
        return Err(JobError::Refused(format!(
            "rank {r} runs another binary or job than rank 0; every rank must run the same build and job"
        )));
    }
    Ok(())
}

fn fresh_manifest(plan: &Plan) -> Manifest {
    Manifest {
        format: FORMAT_NAME.to_string(),
        format_version: table::VERSION,
        tool_version: TOOL_VERSION.to_string(),
        universe: plan.universe,
        grundy_max_tiles: plan.grundy_max_tiles,
        levels_complete: 0,
        complete: false,
        levels: Vec::new(),
        files: Default::default(),
        checksum: String::new(),
    }
}

/// Creates, resumes or (with `force`) resets the table directory.
fn prepare_dir(dir: &Path, plan: &Plan, force: bool) -> Result<Manifest, JobError> {
    let mut fresh = fresh_manifest(plan);
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
                clear_tables(dir)?;
            }
            Err(ManifestError::Missing(_)) => {
                // A run killed between creating the directory and its first
                // manifest leaves at most the manifest's temporary file.
                let mut entries = fs::read_dir(dir).map_err(io_err(dir))?;
                if entries.any(|e| e.map_or(true, |e| e.file_name() != "manifest.json.tmp")) {
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
                clear_tables(dir)?;
            }
        }
    } else {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    fresh.write(dir)?;
    Ok(fresh)
}

/// Removes the work directory and temporary files (`*.tmp`) a killed run
/// may have left in a table directory.
fn remove_leftovers(dir: &Path) -> Result<(), JobError> {
    let work = dir.join(".work");
    if work.exists() {
        fs::remove_dir_all(&work).map_err(io_err(&work))?;
    }
    for sub in [dir.to_path_buf(), dir.join("losses"), dir.join("grundy")] {
        let Ok(entries) = fs::read_dir(&sub) else { continue };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                fs::remove_file(entry.path()).map_err(io_err(&entry.path()))?;
            }
        }
    }
    Ok(())
}

/// Removes what a run writes into a table directory (and nothing else).
fn clear_tables(dir: &Path) -> Result<(), JobError> {
    for sub in ["losses", "grundy", ".work"] {
        let p = dir.join(sub);
        if p.exists() {
            fs::remove_dir_all(&p).map_err(io_err(&p))?;
        }
    }
    for f in ["summary.csv", "summary.json", "grundy_histogram.csv", MANIFEST] {
        let _ = fs::remove_file(dir.join(f));
    }
    Ok(())
}

/// Rebuilds the in-memory state of completed levels from their tables.
fn reload(
    ranking: &Ranking,
    plan: &Plan,
    dir: &Path,
    work: &Path,
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
        let bytes = manifest.read_listed(dir, &level_name(Kind::Losses, n))?;
        let (_, bitmap) = table::decode_losses(&path, &bytes, Some(&header))?;
        for rank in bitmap.iter() {
            sources.push_with(rank as u64, || {
                ranking.unrank_into(n, rank as u64, &mut rows);
                std::borrow::Cow::Borrowed(&rows[..])
            });
        }
        if n <= plan.grundy_max_tiles {
            let header = Header::new(Kind::Grundy, &plan.universe, n, size, stats.losses);
            let path = level_path(dir, Kind::Grundy, n);
            let bytes = manifest.read_listed(dir, &level_name(Kind::Grundy, n))?;
            let values = table::GrundyTable::from_bytes(&path, bytes, Some(&header))?.decode_all()?;
            let raw = work.join(format!("g{n:04}.bin"));
            fs::write(&raw, &values).map_err(io_err(&raw))?;
            grundy_maps.push(Some(map_read_only(&raw).map_err(io_err(&raw))?));
        }
    }
    Ok(())
}
