//! The table directory: one type owns its layout (every file name), atomic
//! writes, the run's lifecycle (create, resume, reset, leftovers of a killed
//! run), the lock against concurrent runs, and reading a listed level back.
//!
//! ```text
//! DIR/manifest.json            what the directory holds (the checkpoint)
//! DIR/losses/L0001.cht …       one loss table per level (format 1)
//! DIR/losses/L0130-0002.cht …  or one per shard of a level (format 2)
//! DIR/grundy/G0001.cht …       one Grundy table per level or shard (if computed)
//! DIR/summary.csv, summary.json, grundy_histogram.csv   when complete
//! DIR/winning_moves.csv       when complete, if winning moves were counted with Grundy values
//! DIR/.lock                    held by the run writing the directory
//! DIR/.work/                   scratch of a running job (or --work-dir)
//! ```

use super::atomic::{tmp_path, write_atomic};
use super::blocked::{self, TableImage};
use super::format::{self, GrundyTable, Header, Kind, ShardPlace, TableError};
use super::manifest::{FileEntry, Manifest, ManifestError, Shard, MANIFEST};
use super::{LossSet, SortedRanks};
use crate::report::summary::{grundy_histogram_csv, summary_csv, summary_json, winning_moves_csv, LevelStats};
use roaring::RoaringBitmap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Name of the per-level summary (CSV).
pub const SUMMARY_CSV: &str = "summary.csv";
/// Name of the per-level summary (JSON).
pub const SUMMARY_JSON: &str = "summary.json";
/// Name of the Grundy value histogram (CSV).
pub const GRUNDY_HISTOGRAM_CSV: &str = "grundy_histogram.csv";
/// Name of the histogram of winning moves (CSV).
pub const WINNING_MOVES_CSV: &str = "winning_moves.csv";
/// Every summary file a complete run may hold ([`TableDir::summary_files`]).
pub const SUMMARIES: [&str; 4] = [SUMMARY_CSV, SUMMARY_JSON, GRUNDY_HISTOGRAM_CSV, WINNING_MOVES_CSV];
/// The lock file of a running job (never listed in the manifest).
const LOCK: &str = ".lock";
/// The default scratch directory of a running job.
const WORK: &str = ".work";
/// Sub-directories holding level tables.
const TABLE_DIRS: [&str; 2] = ["losses", "grundy"];

/// Errors preparing a table directory for a run.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The directory holds something else, or another run holds it.
    #[error("{0}")]
    Refused(String),
    /// The manifest is unusable.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// A file could not be written or removed.
    #[error("{0}")]
    Table(#[from] TableError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TableError + '_ {
    move |e| TableError::io(path, e)
}

/// A table directory (it need not exist yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDir {
    root: PathBuf,
    /// Table and summary files are renamed into place without being flushed
    /// one by one; [`TableDir::sync_written`] flushes them all at the next
    /// checkpoint (the manifest itself is always written durably).
    deferred: bool,
}

impl TableDir {
    /// The table directory at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TableDir { root: path.into(), deferred: false }
    }

    /// The same directory, writing table files without flushing each one:
    /// a run then calls [`TableDir::sync_written`] before every checkpoint
    /// ([`Manifest::write`] and [`TableDir::finish`]), so that a manifest
    /// never lists a file that a crash could lose. One flush per checkpoint
    /// instead of two per file: a 12×12 box has 144 levels.
    pub fn deferring(mut self) -> Self {
        self.deferred = true;
        self
    }

    /// Makes every file written so far durable (one `syncfs` of the
    /// directory's file system where available, else a flush of each table
    /// file and sub-directory).
    ///
    /// # Errors
    /// I/O errors.
    pub fn sync_written(&self) -> Result<(), TableError> {
        if !self.deferred {
            return Ok(());
        }
        #[cfg(all(feature = "tool", target_os = "linux"))]
        {
            use std::os::fd::AsRawFd;
            let d = File::open(&self.root).map_err(io(&self.root))?;
            // SAFETY: syncfs on a file descriptor we own, open for the call.
            if unsafe { libc::syncfs(d.as_raw_fd()) } == 0 {
                return Ok(());
            }
        }
        let subs = TABLE_DIRS.iter().map(|s| self.root.join(s)).chain(std::iter::once(self.root.clone()));
        for sub in subs {
            let Ok(entries) = fs::read_dir(&sub) else { continue };
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_file() {
                    File::open(&p).and_then(|f| f.sync_all()).map_err(io(&p))?;
                }
            }
            if let Ok(d) = File::open(&sub) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Path of `manifest.json`.
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join(MANIFEST)
    }

    /// A level table's name relative to the directory, as the manifest lists
    /// it: `losses/L0042.cht` (format 1), or for shard `shard` of a sharded
    /// level `losses/L0042-0003.cht` (format 2).
    pub fn table_name(kind: Kind, tiles: u32, shard: Option<u32>) -> String {
        let letter = match kind {
            Kind::Losses => "losses/L",
            Kind::Grundy => "grundy/G",
        };
        match shard {
            None => format!("{letter}{tiles:04}.cht"),
            Some(i) => format!("{letter}{tiles:04}-{i:04}.cht"),
        }
    }

    /// The names of the tables of one kind of completed level `tiles`, in shard order.
    pub fn table_names(m: &Manifest, kind: Kind, tiles: u32) -> Vec<String> {
        match m.shard_positions {
            None => vec![Self::table_name(kind, tiles, None)],
            Some(_) => (0..m.shards[tiles as usize - 1].len() as u32).map(|i| Self::table_name(kind, tiles, Some(i))).collect(),
        }
    }

    /// A level table's path (see [`TableDir::table_name`]).
    pub fn table_path(&self, kind: Kind, tiles: u32, shard: Option<u32>) -> PathBuf {
        self.root.join(Self::table_name(kind, tiles, shard))
    }

    /// The summary files of a complete run, with their contents derived from
    /// the level statistics (the Grundy histogram only with Grundy values,
    /// the histogram of winning moves only where a level has one).
    pub fn summary_files(levels: &[LevelStats], grundy: bool) -> Vec<(&'static str, String)> {
        let mut files = vec![(SUMMARY_CSV, summary_csv(levels)), (SUMMARY_JSON, summary_json(levels))];
        if grundy {
            files.push((GRUNDY_HISTOGRAM_CSV, grundy_histogram_csv(levels)));
        }
        if levels.iter().any(|l| l.winning_moves_histogram.is_some()) {
            files.push((WINNING_MOVES_CSV, winning_moves_csv(levels)));
        }
        files
    }

    /// Every file a manifest must list: the tables of its completed levels
    /// and, once complete, the summaries.
    pub fn expected_files(m: &Manifest) -> Vec<String> {
        let mut names = Vec::new();
        for n in 1..=m.levels_complete {
            names.extend(Self::table_names(m, Kind::Losses, n));
            if n <= m.grundy_max_tiles {
                names.extend(Self::table_names(m, Kind::Grundy, n));
            }
        }
        if m.complete {
            names.extend(Self::summary_files(&m.levels, m.grundy_max_tiles > 0).into_iter().map(|(name, _)| name.to_string()));
        }
        names
    }

    /// Reads and checks the manifest.
    ///
    /// # Errors
    /// [`ManifestError`] when missing, unreadable or malformed.
    pub fn read_manifest(&self) -> Result<Manifest, ManifestError> {
        Manifest::read(&self.root)
    }

    /// The header table `shard` (of [`Manifest::level_shards`]) of completed
    /// level `tiles` must carry.
    pub fn expected_header(m: &Manifest, kind: Kind, tiles: u32, shard: usize) -> Header {
        let shards = m.level_shards(tiles);
        let s = shards[shard];
        match m.shard_positions {
            None => Header::new(kind, &m.universe, tiles, s.positions, s.losses),
            Some(_) => {
                let place = ShardPlace { index: shard as u32, count: shards.len() as u32, first: s.first };
                Header::shard(kind, &m.universe, tiles, place, s.positions, s.losses)
            }
        }
    }

    fn shard_name(m: &Manifest, kind: Kind, tiles: u32, shard: usize) -> String {
        Self::table_name(kind, tiles, m.shard_positions.map(|_| shard as u32))
    }

    /// Reads the losses of shard `shard` of completed level `tiles` (the
    /// whole level in format 1), checked against the manifest (size,
    /// SHA-256) and the expected header. Ranks are relative to the shard's
    /// `first`.
    ///
    /// # Errors
    /// [`TableError`] when missing, unlisted, damaged or another run's.
    pub fn read_loss_shard(&self, m: &Manifest, tiles: u32, shard: usize) -> Result<RoaringBitmap, TableError> {
        let name = Self::shard_name(m, Kind::Losses, tiles, shard);
        let bytes = m.read_listed(&self.root, &name)?;
        let want = Self::expected_header(m, Kind::Losses, tiles, shard);
        let path = self.root.join(name);
        if m.is_blocked() {
            let ranks = TableImage::new(&path, &bytes, Some(&want))?.losses()?;
            return Ok(RoaringBitmap::from_sorted_iter(ranks).expect("ranks decoded in increasing order"));
        }
        Ok(format::decode_losses(&path, &bytes, Some(&want))?.1)
    }

    /// Reads every loss of completed level `tiles` (see [`TableDir::read_loss_shard`]).
    ///
    /// # Errors
    /// [`TableError`] when missing, unlisted, damaged or another run's.
    pub fn read_losses(&self, m: &Manifest, tiles: u32) -> Result<LossSet, TableError> {
        let shards = m.level_shards(tiles);
        let mut parts = Vec::with_capacity(shards.len());
        for (i, s) in shards.iter().enumerate() {
            parts.push((s.first, std::sync::Arc::new(self.read_loss_shard(m, tiles, i)?)));
        }
        Ok(LossSet { parts })
    }

    /// Reads the Grundy table of shard `shard` of completed level `tiles`
    /// (the whole level in format 1; blocks decode on demand), checked like
    /// [`TableDir::read_loss_shard`].
    ///
    /// # Errors
    /// [`TableError`] when missing, unlisted, damaged or another run's.
    pub fn read_grundy_shard(&self, m: &Manifest, tiles: u32, shard: usize) -> Result<GrundyTable, TableError> {
        let name = Self::shard_name(m, Kind::Grundy, tiles, shard);
        let bytes = m.read_listed(&self.root, &name)?;
        let want = Self::expected_header(m, Kind::Grundy, tiles, shard);
        GrundyTable::from_bytes(&self.root.join(name), bytes, Some(&want))
    }

    /// Reads and decodes every Grundy value of completed level `tiles`, in rank order.
    ///
    /// # Errors
    /// [`TableError`] when missing, unlisted, damaged or another run's.
    pub fn read_grundy_values(&self, m: &Manifest, tiles: u32) -> Result<Vec<u8>, TableError> {
        let mut values = Vec::new();
        for i in 0..m.level_shards(tiles).len() {
            values.extend(self.read_grundy_shard_values(m, tiles, i)?);
        }
        Ok(values)
    }

    /// Reads and decodes every Grundy value of shard `shard` of completed
    /// level `tiles` (any format), checked like [`TableDir::read_loss_shard`].
    ///
    /// # Errors
    /// [`TableError`] when missing, unlisted, damaged or another run's.
    pub fn read_grundy_shard_values(&self, m: &Manifest, tiles: u32, shard: usize) -> Result<Vec<u8>, TableError> {
        if !m.is_blocked() {
            return self.read_grundy_shard(m, tiles, shard)?.decode_all();
        }
        let name = Self::shard_name(m, Kind::Grundy, tiles, shard);
        let bytes = m.read_listed(&self.root, &name)?;
        let want = Self::expected_header(m, Kind::Grundy, tiles, shard);
        TableImage::new(&self.root.join(name), &bytes, Some(&want))?.grundy_values()
    }

    /// Writes the loss tables of level `tiles` (`positions` positions, loss
    /// ranks `ranks` increasing) whose shard index `mine` accepts: one table
    /// (`shards` is `None`, format 1, index 0) or one per rank range of
    /// `shards`. Returns the files written, for the manifest
    /// ([`Manifest::add_entries`]); every process of a run can write any
    /// shard, as each holds the level's losses.
    ///
    /// # Errors
    /// I/O errors; nothing half-written is left.
    pub fn write_losses(
        &self,
        m: &Manifest,
        tiles: u32,
        positions: u64,
        ranks: &dyn SortedRanks,
        shards: Option<&[Range<u64>]>,
        mine: impl Fn(usize) -> bool,
    ) -> Result<Vec<(String, FileEntry)>, TableError> {
        let out = shards_of(positions, ranks, shards);
        let count = out.len() as u32;
        let mut written = Vec::new();
        for (i, s) in out.iter().enumerate() {
            if !mine(i) {
                continue;
            }
            let (header, index) = match shards {
                None => (Header::new(Kind::Losses, &m.universe, tiles, positions, s.losses), None),
                Some(_) => {
                    let place = ShardPlace { index: i as u32, count, first: s.first };
                    (Header::shard(Kind::Losses, &m.universe, tiles, place, s.positions, s.losses), Some(i as u32))
                }
            };
            written.push(self.encode_and_write(m, &Self::table_name(Kind::Losses, tiles, index), &header, TableContent::Losses(ranks))?);
        }
        Ok(written)
    }

    /// Writes the Grundy tables of level `tiles` whose shard index `mine`
    /// accepts, one per shard of `shards` (as [`shards_of`] returns them;
    /// `sharded` false: format 1). Returns the files written.
    ///
    /// # Errors
    /// I/O errors; nothing half-written is left.
    pub fn write_grundy(
        &self,
        m: &Manifest,
        tiles: u32,
        values: &[u8],
        shards: &[Shard],
        sharded: bool,
        mine: impl Fn(usize) -> bool,
    ) -> Result<Vec<(String, FileEntry)>, TableError> {
        let mut written = Vec::new();
        for (i, s) in shards.iter().enumerate().filter(|(i, _)| mine(*i)) {
            let slice = &values[s.first as usize..(s.first + s.positions) as usize];
            let (header, shard) = if sharded {
                let place = ShardPlace { index: i as u32, count: shards.len() as u32, first: s.first };
                (Header::shard(Kind::Grundy, &m.universe, tiles, place, s.positions, s.losses), Some(i as u32))
            } else {
                (Header::new(Kind::Grundy, &m.universe, tiles, s.positions, s.losses), None)
            };
            written.push(self.encode_and_write(m, &Self::table_name(Kind::Grundy, tiles, shard), &header, TableContent::Grundy(slice))?);
        }
        Ok(written)
    }

    /// Writes file `rel` atomically; returns its manifest entry.
    fn write_entry(&self, rel: &str, bytes: &[u8]) -> Result<(String, FileEntry), TableError> {
        self.put(&self.root.join(rel), bytes)?;
        Ok((rel.to_string(), FileEntry::of(bytes)))
    }

    /// Writes table `shard` (of [`Manifest::level_shards`]) of kind `kind` of
    /// level `tiles`, which `m` already describes: the shard's loss ranks (in
    /// the level, increasing) or its values, in `m`'s format. Returns its
    /// manifest entry.
    ///
    /// # Errors
    /// I/O errors; nothing half-written is left.
    pub fn write_table(
        &self,
        m: &Manifest,
        tiles: u32,
        shard: usize,
        content: TableContent<'_>,
    ) -> Result<(String, FileEntry), TableError> {
        let kind = match content {
            TableContent::Losses(_) => Kind::Losses,
            TableContent::Grundy(_) => Kind::Grundy,
        };
        let header = Self::expected_header(m, kind, tiles, shard);
        self.encode_and_write(m, &Self::shard_name(m, kind, tiles, shard), &header, content)
    }

    /// Encodes a table with `header` in `m`'s format and writes it as `rel`
    /// atomically; returns its manifest entry (with its head in format 3).
    fn encode_and_write(
        &self,
        m: &Manifest,
        rel: &str,
        header: &Header,
        content: TableContent<'_>,
    ) -> Result<(String, FileEntry), TableError> {
        let (bytes, head_len) = match (content, m.is_blocked()) {
            (TableContent::Losses(ranks), true) => blocked::encode_losses(header, ranks),
            (TableContent::Grundy(values), true) => blocked::encode_grundy(header, values),
            (TableContent::Losses(ranks), false) => return self.write_entry(rel, &format::encode_losses(header, ranks)),
            (TableContent::Grundy(values), false) => return self.write_entry(rel, &format::encode_grundy(header, values)),
        };
        self.put(&self.root.join(rel), &bytes)?;
        Ok((rel.to_string(), FileEntry::table(&bytes, head_len)))
    }

    /// Writes `path` under a temporary name and renames it: flushed now, or
    /// at the next checkpoint when deferring.
    fn put(&self, path: &Path, bytes: &[u8]) -> Result<(), TableError> {
        if self.deferred {
            write_renamed(path, bytes)
        } else {
            write_atomic(path, bytes)
        }
    }

    /// Writes file `rel` atomically and lists it in the manifest (in memory;
    /// [`Manifest::write`] makes it the checkpoint).
    ///
    /// # Errors
    /// I/O errors; nothing half-written is left.
    pub fn write_file(&self, m: &mut Manifest, rel: &str, bytes: &[u8]) -> Result<(), TableError> {
        self.put(&self.root.join(rel), bytes)?;
        m.add_file(rel, bytes);
        Ok(())
    }

    /// Writes the summary files, marks the run complete and writes the manifest.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(&self, m: &mut Manifest) -> Result<(), TableError> {
        for (name, text) in Self::summary_files(&m.levels, m.grundy_max_tiles > 0) {
            self.write_file(m, name, text.as_bytes())?;
        }
        m.complete = true;
        self.sync_written()?;
        m.write(&self.root)
    }

    /// Writes the checkpoint of a run that failed, best effort: the
    /// manifest `m` of its completed levels (not marked complete). Files that
    /// `m` does not list are removed first (the failed level's tables, a
    /// summary); while the disk is too full for the manifest, the last
    /// levels after `durable` (the levels of the manifest already on disk)
    /// are given back, their tables removed, until it fits. Returns the
    /// levels the directory's manifest holds afterwards.
    pub fn checkpoint_after_failure(&self, m: &mut Manifest, durable: u32) -> u32 {
        m.complete = false;
        loop {
            let listed: std::collections::BTreeSet<String> = Self::expected_files(m).into_iter().collect();
            m.files.retain(|name, _| listed.contains(name));
            self.remove_unlisted(m);
            match self.sync_written().and_then(|()| m.write(&self.root)) {
                Ok(()) => return m.levels_complete,
                Err(e) if is_disk_full(&e) && m.levels_complete > durable => {
                    m.keep_levels(m.levels_complete - 1);
                }
                Err(_) => return durable,
            }
        }
    }

    /// Removes the tables and summaries that manifest `m` does not list.
    fn remove_unlisted(&self, m: &Manifest) {
        let summaries = SUMMARIES.map(String::from);
        let tables = TABLE_DIRS.iter().flat_map(|sub| {
            let names = fs::read_dir(self.root.join(sub)).into_iter().flatten().flatten();
            names.map(move |e| format!("{sub}/{}", e.file_name().to_string_lossy()))
        });
        for name in summaries.into_iter().chain(tables.collect::<Vec<_>>()) {
            if !m.files.contains_key(&name) {
                let _ = fs::remove_file(self.root.join(&name));
            }
        }
    }

    /// The default scratch directory of the node whose first process is
    /// `leader` (its processes share the files in it).
    pub fn node_work_dir(&self, leader: usize) -> PathBuf {
        self.root.join(WORK).join(format!("node{leader}"))
    }

    /// Takes the directory's lock (creating the directory if missing): a
    /// second run on the same directory is refused at once, naming the
    /// process that holds it. The lock ends when the returned value drops
    /// (or the process dies).
    ///
    /// The lock is a `flock` on `DIR/.lock`, which names its holder (host,
    /// pid, Slurm job) and is touched every [`HEARTBEAT`]. Where the file
    /// system has no `flock` (ENOSYS, EOPNOTSUPP or ENOLCK, as on a Lustre
    /// mount without it), the file itself is the lock: created exclusively
    /// (`O_EXCL`), and taken over when its holder is gone ([`Holder::is_gone`]:
    /// a dead process of this host, an earlier run of this requeued Slurm
    /// job, or no heartbeat for [`STALE_AFTER`]).
    ///
    /// # Errors
    /// [`DirError::Refused`] when another run holds it; I/O errors.
    pub fn lock(&self) -> Result<DirLock, DirError> {
        self.lock_with(true)
    }

    /// [`TableDir::lock`]; without `flock` the lock file alone, as on a file
    /// system that has none.
    fn lock_with(&self, use_flock: bool) -> Result<DirLock, DirError> {
        if self.root.exists() && !self.root.is_dir() {
            return Err(DirError::Refused(format!("{}: exists and is not a directory", self.root.display())));
        }
        fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        let path = self.root.join(LOCK);
        let me = Holder::this_process();
        for attempt in 0..2 {
            let (mut file, created) = match OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                Ok(f) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    (OpenOptions::new().read(true).write(true).open(&path).map_err(io(&path))?, false)
                }
                Err(e) => return Err(TableError::io(&path, e).into()),
            };
            let flocked = match use_flock.then(|| file.try_lock()) {
                Some(Ok(())) => true,
                Some(Err(fs::TryLockError::WouldBlock)) => return Err(self.refused(&mut file)),
                Some(Err(fs::TryLockError::Error(e))) if !no_flock(&e) => return Err(TableError::io(&path, e).into()),
                // No flock here: the exclusive creation is the lock.
                _ => false,
            };
            if !flocked && !created {
                let theirs = Holder::read(&mut file);
                let age = file.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).unwrap_or_default();
                if attempt > 0 || !theirs.as_ref().map_or(age > STALE_AFTER, |h| h.is_gone(&me, age)) {
                    return Err(self.refused(&mut file));
                }
                // Left by a run that is gone: remove it, and create it anew
                // (exclusively: of two runs that both found it stale, one wins).
                drop(file);
                fs::remove_file(&path).map_err(io(&path))?;
                continue;
            }
            let written = file.set_len(0).and_then(|_| file.rewind()).and_then(|_| file.write_all(me.to_text().as_bytes()));
            written.map_err(io(&path))?;
            return Ok(DirLock::holding(file, path));
        }
        unreachable!("the second attempt returns")
    }

    /// The refusal naming the holder of lock file `file`.
    fn refused(&self, file: &mut File) -> DirError {
        let age = file.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        let who = match Holder::read(file) {
            Some(h) => h.describe(),
            None => "another process".to_string(),
        };
        let seen = age.map(|a| format!(", its lock touched {} s ago", a.as_secs())).unwrap_or_default();
        DirError::Refused(format!(
            "{}: in use by {who}{seen} (another chomp run writes it); wait for it to end or choose another directory",
            self.root.display()
        ))
    }

    /// Opens the directory for a run whose fresh manifest is `fresh`: an
    /// empty or new directory starts it, one of the same job (same
    /// universe, Grundy bound and tool version) resumes it, anything else is
    /// refused. With `force` every run starts over (it clears what runs
    /// write, nothing else).
    /// Returns the manifest to continue from. Call with the lock held.
    ///
    /// # Errors
    /// [`DirError::Refused`] explaining what the directory holds; I/O errors.
    pub fn open_run(&self, fresh: Manifest, force: bool) -> Result<Manifest, DirError> {
        let dir = &self.root;
        match self.read_manifest() {
            Ok(m) => {
                let same = m.same_job(&fresh);
                if same && m.tool_version == fresh.tool_version && !force {
                    return Ok(m);
                }
                if !force {
                    let why = if same {
                        format!("was written by chomp-tables {}, this is {}", m.tool_version, fresh.tool_version)
                    } else {
                        format!(
                            "holds another job ({}, Grundy to {}); this job is {}, Grundy to {}",
                            m.universe.describe(),
                            m.grundy_max_tiles,
                            fresh.universe.describe(),
                            fresh.grundy_max_tiles
                        )
                    };
                    return Err(DirError::Refused(format!("{}: {why}; use --force to overwrite it", dir.display())));
                }
                self.clear()?;
            }
            Err(ManifestError::Missing(_)) => {
                // A run killed between creating the directory and its first
                // manifest leaves at most the manifest's temporary file.
                let manifest_tmp = tmp_path(Path::new(MANIFEST));
                let mut entries = fs::read_dir(dir).map_err(io(dir))?;
                let foreign = entries.any(|e| e.map_or(true, |e| e.file_name() != manifest_tmp.as_os_str() && e.file_name() != LOCK));
                if foreign {
                    return Err(DirError::Refused(format!(
                        "{}: not empty and holds no {MANIFEST}; not a chomp table directory (choose a new or empty one)",
                        dir.display()
                    )));
                }
            }
            Err(e) => {
                if !force {
                    return Err(DirError::Refused(format!("{e}; use --force to overwrite the directory")));
                }
                self.clear()?;
            }
        }
        let mut fresh = fresh;
        fresh.write(dir)?;
        Ok(fresh)
    }

    /// Removes the scratch directory and temporary files (`*.tmp`) a killed
    /// run may have left.
    ///
    /// # Errors
    /// I/O errors.
    pub fn remove_leftovers(&self) -> Result<(), TableError> {
        let work = self.root.join(WORK);
        if work.exists() {
            fs::remove_dir_all(&work).map_err(io(&work))?;
        }
        let subs = std::iter::once(self.root.clone()).chain(TABLE_DIRS.iter().map(|s| self.root.join(s)));
        for sub in subs {
            let Ok(entries) = fs::read_dir(&sub) else { continue };
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().ends_with(".tmp") {
                    fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
                }
            }
        }
        Ok(())
    }

    /// Creates the sub-directories that hold level tables.
    ///
    /// # Errors
    /// I/O errors.
    pub fn create_table_dirs(&self) -> Result<(), TableError> {
        for sub in TABLE_DIRS {
            let p = self.root.join(sub);
            fs::create_dir_all(&p).map_err(io(&p))?;
        }
        Ok(())
    }

    /// Removes what a run writes into the directory (and nothing else).
    fn clear(&self) -> Result<(), TableError> {
        for sub in TABLE_DIRS.iter().chain(&[WORK]) {
            let p = self.root.join(sub);
            if p.exists() {
                fs::remove_dir_all(&p).map_err(io(&p))?;
            }
        }
        for f in SUMMARIES.iter().chain(&[MANIFEST]) {
            let _ = fs::remove_file(self.root.join(f));
        }
        Ok(())
    }
}

/// The shards of a level of `positions` positions with loss ranks `ranks`:
/// one per rank range of `ranges`, or one for the whole level.
pub fn shards_of(positions: u64, ranks: &(impl SortedRanks + ?Sized), ranges: Option<&[Range<u64>]>) -> Vec<Shard> {
    let whole = 0..positions;
    let ranges = ranges.unwrap_or(std::slice::from_ref(&whole));
    let mut before = 0;
    ranges
        .iter()
        .map(|r| {
            let upto = ranks.count_below(r.end);
            let losses = upto - before;
            before = upto;
            Shard { first: r.start, positions: r.end - r.start, losses }
        })
        .collect()
}

/// What one table holds, for [`TableDir::write_table`].
#[derive(Clone, Copy)]
pub enum TableContent<'a> {
    /// The loss ranks of the table's level (those in the table are written).
    Losses(&'a dyn SortedRanks),
    /// One Grundy value per position of the table.
    Grundy(&'a [u8]),
}

/// How often the holder of a directory's lock touches its file.
pub const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(30);

/// A lock file untouched for this long, on a file system without `flock`,
/// is taken to be left by a run that is gone (ten missed heartbeats).
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(300);

/// Whether `e` says the file system has no `flock`.
fn no_flock(e: &std::io::Error) -> bool {
    /// `ENOLCK` on Linux: an NFS mount without its lock manager.
    const ENOLCK: i32 = 37;
    e.kind() == std::io::ErrorKind::Unsupported || (cfg!(target_os = "linux") && e.raw_os_error() == Some(ENOLCK))
}

/// Who holds a directory's lock, as its lock file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Holder {
    /// The host name.
    pub(crate) host: String,
    /// The process id on that host.
    pub(crate) pid: u32,
    /// `SLURM_JOB_ID`, under Slurm.
    pub(crate) job: Option<String>,
    /// `SLURM_RESTART_COUNT`: how often Slurm has requeued the job.
    pub(crate) restart: Option<String>,
}

impl Holder {
    /// This process.
    pub(crate) fn this_process() -> Self {
        Holder {
            host: host_name(),
            pid: std::process::id(),
            job: std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty()),
            restart: std::env::var("SLURM_RESTART_COUNT").ok().filter(|r| !r.is_empty()),
        }
    }

    /// The lock file's text: `key=value` lines.
    pub(crate) fn to_text(&self) -> String {
        let mut t = format!("host={}\npid={}\n", self.host, self.pid);
        if let Some(j) = &self.job {
            t.push_str(&format!("slurm_job={j}\n"));
        }
        if let Some(r) = &self.restart {
            t.push_str(&format!("slurm_restart={r}\n"));
        }
        t
    }

    /// Parses [`Holder::to_text`]; `None` for anything else (an empty file,
    /// or one written by an older version: a bare pid).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=')).map(|v| v.trim().to_string());
        Some(Holder { host: field("host")?, pid: field("pid")?.parse().ok()?, job: field("slurm_job"), restart: field("slurm_restart") })
    }

    fn read(file: &mut File) -> Option<Self> {
        let mut text = String::new();
        file.rewind().ok()?;
        file.read_to_string(&mut text).ok()?;
        Holder::parse(&text)
    }

    /// The holder in words, for a refusal.
    fn describe(&self) -> String {
        let job = self.job.as_ref().map(|j| format!(", Slurm job {j}")).unwrap_or_default();
        format!("process {} on {}{job}", self.pid, self.host)
    }

    /// Whether this holder, whose lock file was last touched `age` ago, is
    /// gone, as seen from `me`: a process of this host that no longer
    /// exists; an earlier run of this same Slurm job (requeued: another
    /// restart count); or, on another host, a lock not touched for
    /// [`STALE_AFTER`].
    pub(crate) fn is_gone(&self, me: &Holder, age: std::time::Duration) -> bool {
        if self.host == me.host {
            if let Some(alive) = pid_alive(self.pid) {
                return !alive;
            }
        }
        if self.job.is_some() && self.job == me.job && self.restart != me.restart {
            return true;
        }
        age > STALE_AFTER
    }
}

/// This host's name (empty where it cannot be read).
pub(crate) fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

/// Whether process `pid` of this host exists; `None` where this cannot be
/// told (no `/proc`).
pub(crate) fn pid_alive(pid: u32) -> Option<bool> {
    Path::new("/proc/self").exists().then(|| Path::new(&format!("/proc/{pid}")).exists())
}

/// The held lock of a table directory; released (and its file removed) on
/// drop. A thread touches the file every [`HEARTBEAT`] meanwhile.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
    /// Dropped to stop the heartbeat.
    stop: Option<std::sync::mpsc::Sender<()>>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
}

impl DirLock {
    fn holding(file: File, path: PathBuf) -> Self {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let heartbeat = file.try_clone().ok().map(|f| {
            std::thread::spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
                    let _ = f.set_modified(std::time::SystemTime::now());
                }
            })
        });
        DirLock { file, path, stop: Some(stop), heartbeat }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        // Remove the file while still holding the lock, so that a finished
        // directory holds only its tables.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `e` says the file system (or the user's quota) is full.
fn is_disk_full(e: &TableError) -> bool {
    matches!(e, TableError::Io { source, .. } if matches!(source.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded))
}

/// Writes `bytes` to `path` through a temporary file and a rename, without
/// flushing: readers never see a half-written file, and a later
/// [`TableDir::sync_written`] makes it durable.
///
/// # Errors
/// I/O errors; the temporary file is removed on failure.
fn write_renamed(path: &Path, bytes: &[u8]) -> Result<(), TableError> {
    let tmp = tmp_path(path);
    let result = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        TableError::io(path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid that no process of this host has (a child that has exited).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn leave_lock(dir: &Path, holder: &Holder, age: std::time::Duration) {
        fs::create_dir_all(dir).unwrap();
        let f = File::create(dir.join(LOCK)).unwrap();
        (&f).write_all(holder.to_text().as_bytes()).unwrap();
        f.set_modified(std::time::SystemTime::now() - age).unwrap();
    }

    #[test]
    fn without_flock_a_lock_left_by_a_gone_run_is_taken_over_and_a_live_one_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let me = Holder::this_process();
        let fresh = std::time::Duration::from_secs(5);
        let old = STALE_AFTER * 2;
        let other = |host: &str, job: Option<&str>, restart: Option<&str>| Holder {
            host: host.into(),
            pid: 1,
            job: job.map(String::from),
            restart: restart.map(String::from),
        };
        let job =
            |j: Option<&str>, r: Option<&str>| Holder { job: j.map(String::from), restart: r.map(String::from), ..Holder::this_process() };
        let cases = [
            // This host: the process decides, whatever the heartbeat.
            (Holder { pid: dead_pid(), ..me.clone() }, fresh, true),
            (me.clone(), old, false),
            // Another host: the heartbeat decides...
            (other("gone-node", Some("17"), None), old, true),
            (other("live-node", Some("17"), None), fresh, false),
            (other("live-node", None, None), fresh, false),
        ];
        for (i, (holder, age, taken)) in cases.into_iter().enumerate() {
            let dir = TableDir::new(tmp.path().join(format!("d{i}")));
            leave_lock(dir.path(), &holder, age);
            let got = dir.lock_with(false);
            assert_eq!(got.is_ok(), taken, "{holder:?} touched {age:?} ago: {got:?}");
            if let Err(e) = got {
                assert!(e.to_string().contains(&format!("in use by process {} on {}", holder.pid, holder.host)), "{e}");
            } else {
                // The lock file now names this process, until it is released.
                assert_eq!(Holder::parse(&fs::read_to_string(dir.path().join(LOCK)).unwrap()), Some(me.clone()));
                let again = dir.lock_with(false).unwrap_err().to_string();
                assert!(again.contains("in use by process"), "{again}");
            }
        }
        // ...unless it is an earlier run of this requeued job (another restart count).
        let requeued = Holder { host: "old-node".into(), ..job(Some("4242"), Some("0")) };
        let now = job(Some("4242"), Some("1"));
        assert!(requeued.is_gone(&now, fresh));
        assert!(!requeued.is_gone(&Holder { restart: Some("0".into()), ..now.clone() }, fresh));
        assert!(!requeued.is_gone(&Holder { job: Some("4243".into()), ..now }, fresh));
    }

    #[test]
    fn with_flock_a_lock_file_left_by_a_killed_run_does_not_refuse() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = TableDir::new(tmp.path().join("d"));
        // A live holder's record, but no process holds the flock: it was killed.
        leave_lock(dir.path(), &Holder::this_process(), std::time::Duration::ZERO);
        let lock = dir.lock().unwrap();
        let e = dir.lock().unwrap_err().to_string();
        assert!(e.contains(&format!("in use by process {} on ", std::process::id())), "{e}");
        drop(lock);
        assert!(!dir.path().join(LOCK).exists());
    }
}
