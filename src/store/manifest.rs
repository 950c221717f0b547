//! `manifest.json`: what a table directory holds and the checksum of every file.
//!
//! The manifest is rewritten (atomically) after every completed level, so it
//! is also the run's checkpoint: a restarted run continues after
//! `levels_complete`.

use super::atomic::write_atomic;
use super::blocked::VERSION_BLOCKED;
use super::format::{TableError, VERSION, VERSION_SHARDED};
use crate::game::Universe;
use crate::report::summary::LevelStats;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Name of the manifest inside a table directory.
pub const MANIFEST: &str = "manifest.json";
/// Value of the `format` field.
pub const FORMAT_NAME: &str = "chomp-tables";

/// One file listed in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
    /// Format 3 tables: the length of the head (header and index page
    /// digests), which a reader checks without reading the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_bytes: Option<u64>,
    /// Format 3 tables: SHA-256 of the head, lowercase hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha256: Option<String>,
}

impl FileEntry {
    /// The entry of a file with these contents.
    pub fn of(contents: &[u8]) -> Self {
        FileEntry { bytes: contents.len() as u64, sha256: sha256_hex(contents), head_bytes: None, head_sha256: None }
    }

    /// The entry of a format-3 table whose head is its first `head_len` bytes.
    pub fn table(contents: &[u8], head_len: usize) -> Self {
        FileEntry { head_bytes: Some(head_len as u64), head_sha256: Some(sha256_hex(&contents[..head_len])), ..Self::of(contents) }
    }
}

/// One shard of a level (table format 2): a contiguous range of ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// Rank of its first position in the level.
    pub first: u64,
    /// Its positions (at most the manifest's `shard_positions`).
    pub positions: u64,
    /// Its losing positions.
    pub losses: u64,
}

/// The check of one level while a run wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelCheck {
    /// The level.
    pub tiles: u32,
    /// Positions checked (every position of a level smaller than the sample).
    pub positions: u64,
    /// Of them, losses.
    pub losses: u64,
}

/// The manifest of a table directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// Table format version ([`VERSION`]).
    pub format_version: u16,
    /// Version of the tool that wrote the directory.
    pub tool_version: String,
    /// The universe computed.
    pub universe: Universe,
    /// Last level with Grundy values (0 for none).
    pub grundy_max_tiles: u32,
    /// Format 2: the most positions one table (shard) holds. Absent in
    /// format 1, where each level is one table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_positions: Option<u64>,
    /// Whether each level's statistics count the wins with one winning
    /// move and with several (absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_moves: bool,
    /// Levels `1..=levels_complete` are finished.
    pub levels_complete: u32,
    /// Whether the run reached its last level and wrote its summary files.
    pub complete: bool,
    /// Statistics per completed level.
    pub levels: Vec<LevelStats>,
    /// Format 2: the shards of every completed level, in level order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<Vec<Shard>>,
    /// The check inside every level (format 3): how many positions of each
    /// level the run checked against the rules of the game after writing
    /// it, in level order; absent for levels written unchecked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<LevelCheck>,
    /// Every file of the directory but the manifest, by relative path.
    pub files: BTreeMap<String, FileEntry>,
    /// SHA-256 of the manifest's canonical text with this field empty (see [`Manifest::canonical`]).
    #[serde(default)]
    pub checksum: String,
}

/// Errors about the manifest.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// No manifest: the directory holds none, is missing, or is a file
    /// (the message says which).
    #[error("{0}")]
    Missing(String),
    /// Could not read it.
    #[error("{0}")]
    Table(#[from] TableError),
    /// Not valid JSON of the expected shape.
    #[error("{path}: invalid manifest: {what}")]
    Invalid {
        /// The manifest path.
        path: String,
        /// Parser message.
        what: String,
    },
}

impl Manifest {
    /// Reads `DIR/manifest.json`.
    ///
    /// # Errors
    /// [`ManifestError`] when missing, unreadable or malformed.
    pub fn read(dir: &Path) -> Result<Self, ManifestError> {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(_) if dir.is_file() => return Err(ManifestError::Missing(format!("{}: a file, not a table directory", dir.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let why =
                    if dir.exists() { "no manifest.json; not a chomp table directory" } else { "no such directory (no manifest.json)" };
                return Err(ManifestError::Missing(format!("{}: {why}", dir.display())));
            }
            Err(e) => return Err(TableError::io(&path, e).into()),
        };
        Self::parse(&path, &text)
    }

    /// Reads a manifest file by its own path (a published manifest such as
    /// `results/frontier-140-manifest.json`), with every check of [`Manifest::read`].
    ///
    /// # Errors
    /// [`ManifestError`] when missing, unreadable or malformed.
    pub fn read_file(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ManifestError::Missing(format!("{}: no such manifest file", path.display())),
            _ => TableError::io(path, e).into(),
        })?;
        Self::parse(path, &text)
    }

    /// Parses and checks a manifest's text (`path` names it in errors).
    ///
    /// # Errors
    /// [`ManifestError::Invalid`] for anything but a canonical, self-consistent manifest.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let text = text.to_string();
        // Format and version first, so that a newer manifest is reported as such.
        let loose: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ManifestError::Invalid { path: path.display().to_string(), what: e.to_string() })?;
        match loose.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT_NAME) => {}
            // The n-dimensional tables (`crate::nd`) name their own reader.
            Some(nd @ "chomp-nd-tables") => {
                return Err(ManifestError::Invalid {
                    path: path.display().to_string(),
                    what: format!("format is {nd:?}, n-dimensional tables: `chomp nd --tables DIR` reads them, `--verify` checks them"),
                })
            }
            _ => return Err(ManifestError::Invalid { path: path.display().to_string(), what: format!("format is not {FORMAT_NAME:?}") }),
        }
        if !matches!(loose.get("format_version").and_then(|v| v.as_u64()), Some(v) if [VERSION, VERSION_SHARDED, VERSION_BLOCKED].contains(&(v as u16)) && v < 1 << 16)
        {
            return Err(ManifestError::Invalid {
                path: path.display().to_string(),
                what: format!(
                    "format version {} is not a version this tool reads ({VERSION}, {VERSION_SHARDED} or {VERSION_BLOCKED})",
                    loose["format_version"]
                ),
            });
        }
        let m: Manifest =
            serde_json::from_str(&text).map_err(|e| ManifestError::Invalid { path: path.display().to_string(), what: e.to_string() })?;
        if let Some(why) = m.damage(&text) {
            return Err(ManifestError::Invalid { path: path.display().to_string(), what: why.into() });
        }
        if m.format != FORMAT_NAME {
            return Err(ManifestError::Invalid {
                path: path.display().to_string(),
                what: format!("format is {:?}, not {FORMAT_NAME:?}", m.format),
            });
        }
        if m.levels.len() != m.levels_complete as usize || m.levels.iter().enumerate().any(|(i, l)| l.tiles != i as u32 + 1) {
            return Err(ManifestError::Invalid {
                path: path.display().to_string(),
                what: format!("level statistics do not cover levels 1 to {}", m.levels_complete),
            });
        }
        if let Err(what) = m.check_shards() {
            return Err(ManifestError::Invalid { path: path.display().to_string(), what });
        }
        // Listed names are joined to the directory: none may leave it.
        if let Some(name) = m.files.keys().find(|name| !plain_relative_name(name)) {
            return Err(ManifestError::Invalid {
                path: path.display().to_string(),
                what: format!("files lists {name:?}, not a plain relative name (absolute, or with an empty, `.` or `..` component)"),
            });
        }
        if let Err(what) = m.check_heads().and_then(|()| m.check_checks()).and_then(|()| m.check_winning_moves()) {
            return Err(ManifestError::Invalid { path: path.display().to_string(), what });
        }
        Ok(m)
    }

    /// Whether `other` describes the same job (universe, Grundy bound and
    /// table layout): a run of one may resume a directory of the other.
    pub fn same_job(&self, other: &Manifest) -> bool {
        self.universe == other.universe
            && self.grundy_max_tiles == other.grundy_max_tiles
            && self.shard_positions == other.shard_positions
            && self.count_moves == other.count_moves
    }

    /// Keeps levels `1..=n` only (of `levels_complete ≥ n`): their
    /// statistics, shards and checks; the files are left as they are.
    pub fn keep_levels(&mut self, n: u32) {
        self.levels_complete = n;
        self.levels.truncate(n as usize);
        self.shards.truncate(n as usize);
        self.checks.retain(|c| c.tiles <= n);
    }

    /// Whether the tables are block-addressable (format 3).
    pub fn is_blocked(&self) -> bool {
        self.format_version == VERSION_BLOCKED
    }

    /// Checks each level's histogram of winning moves: only in a run that
    /// counted them, on a level with Grundy values; no trailing zero count;
    /// its sum the level's positions, its first count the losses, then the
    /// wins with one winning move, then (summed) those with several.
    fn check_winning_moves(&self) -> Result<(), String> {
        for l in &self.levels {
            let Some(h) = &l.winning_moves_histogram else { continue };
            if !self.count_moves || l.grundy_histogram.is_none() {
                return Err(format!("level {}: a histogram of winning moves, but no counted moves or Grundy values", l.tiles));
            }
            if h.is_empty() || (h.len() > 1 && h.last() == Some(&0)) {
                return Err(format!("level {}: its histogram of winning moves is not a list of counts ending in a non-zero one", l.tiles));
            }
            let sum = h.iter().try_fold(0u64, |a, &c| a.checked_add(c));
            let got = (sum, h[0], h.get(1).copied().unwrap_or(0), h.iter().skip(2).try_fold(0u64, |a, &c| a.checked_add(c)));
            if got != (Some(l.positions), l.losses, l.wins_one_move.unwrap_or(0), l.wins_several_moves) {
                return Err(format!("level {}: its histogram of winning moves disagrees with its counts", l.tiles));
            }
        }
        Ok(())
    }

    /// Checks the record of the check inside every level: format 3 only,
    /// complete levels in increasing order, no more positions than a level
    /// has, no more losses than positions checked (a sample is drawn with
    /// replacement: a loss may be counted twice).
    fn check_checks(&self) -> Result<(), String> {
        if !self.checks.is_empty() && !self.is_blocked() {
            return Err("checks are recorded in format 3 only".into());
        }
        let mut last = 0;
        for c in &self.checks {
            let level = self.levels.get((c.tiles as usize).wrapping_sub(1));
            if c.tiles <= last || level.is_none_or(|l| c.positions > l.positions || c.losses > c.positions) {
                return Err(format!("checks: level {} out of order, not complete, or more positions or losses than it has", c.tiles));
            }
            last = c.tiles;
        }
        Ok(())
    }

    /// Checks that exactly the tables of a format-3 directory carry a head
    /// (`head_bytes` and `head_sha256`, the head shorter than the file).
    fn check_heads(&self) -> Result<(), String> {
        for (name, e) in &self.files {
            let table = self.is_blocked() && (name.starts_with("losses/") || name.starts_with("grundy/"));
            let ok = match (&e.head_bytes, &e.head_sha256) {
                (Some(len), Some(sha)) => table && *len < e.bytes && sha.len() == 64,
                (None, None) => !table,
                _ => false,
            };
            if !ok {
                let want = if table { "with" } else { "without" };
                return Err(format!(
                    "files lists {name:?} {} head_bytes and head_sha256: format {} lists it {want} them",
                    if e.head_bytes.is_some() { "with" } else { "without" },
                    self.format_version
                ));
            }
        }
        Ok(())
    }

    /// Checks the shard fields against the format version and the level statistics.
    fn check_shards(&self) -> Result<(), String> {
        let sharded = self.shard_positions.is_some();
        let allowed = match self.format_version {
            VERSION => !sharded,
            VERSION_SHARDED => sharded,
            _ => true,
        };
        if !allowed || (!sharded && !self.shards.is_empty()) {
            return Err(format!("format version {} with{} shard_positions", self.format_version, if sharded { "" } else { "out" }));
        }
        let Some(limit) = self.shard_positions else { return Ok(()) };
        if limit == 0 || limit > 1 << 32 {
            return Err(format!("shard_positions {limit} is not in 1..=2^32"));
        }
        if self.shards.len() != self.levels.len() {
            return Err(format!("shards listed for {} levels, {} levels complete", self.shards.len(), self.levels.len()));
        }
        for (level, shards) in self.levels.iter().zip(&self.shards) {
            let mut next = 0u64;
            for s in shards {
                if s.first != next || s.positions == 0 || s.positions > limit || s.losses > s.positions {
                    return Err(format!("level {}: shards do not tile the level in order", level.tiles));
                }
                next += s.positions;
            }
            if next != level.positions || shards.iter().map(|s| s.losses).sum::<u64>() != level.losses {
                return Err(format!("level {}: shards do not add up to the level's positions and losses", level.tiles));
            }
        }
        Ok(())
    }

    /// The shards of completed level `tiles`: one covering the level in format 1.
    ///
    /// # Panics
    /// When the level is not complete.
    pub fn level_shards(&self, tiles: u32) -> Vec<Shard> {
        let stats = &self.levels[tiles as usize - 1];
        match self.shard_positions {
            Some(_) => self.shards[tiles as usize - 1].clone(),
            None => vec![Shard { first: 0, positions: stats.positions, losses: stats.losses }],
        }
    }

    /// Sets the checksum and writes `DIR/manifest.json` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(&mut self, dir: &Path) -> Result<(), TableError> {
        write_atomic(&dir.join(MANIFEST), self.seal().as_bytes())
    }

    /// Reads the listed file `rel` of table directory `dir`, checking its
    /// size and SHA-256 against this manifest.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] when unlisted or different; I/O errors.
    pub fn read_listed(&self, dir: &Path, rel: &str) -> Result<Vec<u8>, TableError> {
        let path = dir.join(rel);
        let corrupt = |what: String| TableError::Corrupt { path: path.clone(), what };
        let entry = self.files.get(rel).ok_or_else(|| corrupt("not listed in manifest.json".into()))?;
        let bytes = std::fs::read(&path).map_err(|e| TableError::io(&path, e))?;
        if bytes.len() as u64 != entry.bytes {
            return Err(corrupt(format!("{} bytes, manifest.json says {}", bytes.len(), entry.bytes)));
        }
        if sha256_hex(&bytes) != entry.sha256 {
            return Err(corrupt("SHA-256 differs from manifest.json".into()));
        }
        Ok(bytes)
    }

    /// Records a file written with these contents.
    pub fn add_file(&mut self, rel: &str, contents: &[u8]) {
        self.files.insert(rel.to_string(), FileEntry::of(contents));
    }

    /// Lists files written elsewhere (by [`crate::store::TableDir::write_losses`] and
    /// [`crate::store::TableDir::write_grundy`], possibly on other processes).
    pub fn add_entries(&mut self, entries: impl IntoIterator<Item = (String, FileEntry)>) {
        self.files.extend(entries);
    }
}

/// Whether a name listed in a manifest stays inside the table directory
/// (`FORMAT.md` section 2): components separated by `/`, none of them empty,
/// `.` or `..`, and no `\` or `:` anywhere (not absolute on any system).
pub fn plain_relative_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['\\', ':', '\0']) && name.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// A manifest that checks itself: its canonical text ([`canonical_json`])
/// holds a `checksum` field, the SHA-256 of that text with the field empty.
/// The tables' manifest, the few-row and the n-dimensional directories'
/// are all written and checked this way.
pub trait SelfChecked: Serialize + Clone {
    /// The `checksum` field.
    fn checksum_mut(&mut self) -> &mut String;

    /// The canonical text: pretty-printed JSON (two-space indent, fields in
    /// declaration order, maps sorted by key) and a final newline.
    fn canonical(&self) -> String {
        canonical_json(self)
    }

    /// SHA-256 of the canonical text with the checksum set to the empty string.
    fn canonical_checksum(&self) -> String {
        let mut m = self.clone();
        m.checksum_mut().clear();
        sha256_hex(m.canonical().as_bytes())
    }

    /// Sets the checksum; returns the canonical text to write.
    fn seal(&mut self) -> String {
        *self.checksum_mut() = self.canonical_checksum();
        self.canonical()
    }

    /// Why `text`, parsed as this manifest, is not what was written, if it
    /// is not. Every change to the file, even one that keeps valid JSON,
    /// must show: the checksum covers the values, byte equality with the
    /// canonical text covers the rest.
    fn damage(&self, text: &str) -> Option<&'static str> {
        let mut unsealed = self.clone();
        let stored = std::mem::take(unsealed.checksum_mut());
        if sha256_hex(unsealed.canonical().as_bytes()) != stored {
            Some("checksum mismatch (damaged or edited)")
        } else if self.canonical() != text {
            Some("not in canonical form (damaged or edited)")
        } else {
            None
        }
    }
}

impl SelfChecked for Manifest {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

/// The canonical text of a manifest-like value: pretty-printed JSON
/// (two-space indent, fields in declaration order) and a final newline.
pub fn canonical_json(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("serializing plain data");
    text.push('\n');
    text
}

/// The size and SHA-256 (lowercase hex) of a file, read in pieces.
///
/// # Errors
/// I/O errors.
pub fn file_sha256(path: &Path) -> std::io::Result<(u64, String)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}

/// SHA-256 of bytes as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest_listing(names: &[&str]) -> Manifest {
        let mut m = Manifest {
            format: FORMAT_NAME.into(),
            format_version: VERSION,
            tool_version: "0.1.0".into(),
            universe: Universe::tiles(4),
            grundy_max_tiles: 0,
            levels_complete: 0,
            complete: false,
            shard_positions: None,
            count_moves: false,
            levels: Vec::new(),
            shards: Vec::new(),
            checks: Vec::new(),
            files: BTreeMap::new(),
            checksum: String::new(),
        };
        for name in names {
            m.add_file(name, b"x");
        }
        m
    }

    #[test]
    fn listed_names_stay_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        manifest_listing(&["losses/L0001.cht", "grundy/G0001.cht", "summary.csv"]).write(dir.path()).unwrap();
        assert!(Manifest::read(dir.path()).is_ok());
        for bad in
            ["../x.cht", "losses/../../x.cht", "/etc/passwd", "losses//L0001.cht", "./summary.csv", "losses/", "", "C:x", "losses\\..\\x"]
        {
            manifest_listing(&["summary.csv", bad]).write(dir.path()).unwrap();
            let err = Manifest::read(dir.path()).expect_err(bad).to_string();
            assert!(err.contains("not a plain relative name"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn crlf_copy_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        manifest_listing(&["summary.csv"]).write(dir.path()).unwrap();
        let path = dir.path().join(MANIFEST);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace('\n', "\r\n")).unwrap();
        let err = Manifest::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("canonical"), "{err}");
    }
}
