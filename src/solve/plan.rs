//! What a run computes: a [`Plan`] (universe and Grundy bound), read from a
//! job file ([`JobFile`], TOML) or built from command-line flags.

use super::grundy::MAX_GRUNDY_TILES;
use super::JobError;
use crate::game::Universe;
use crate::index::Ranking;
use crate::store::blocked::VERSION_BLOCKED;
use crate::store::format::{VERSION, VERSION_SHARDED};
use crate::store::{Manifest, FORMAT_NAME};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};

/// Version of this tool, recorded in manifests.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a run computes: its universe and how far Grundy values go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The positions covered.
    pub universe: Universe,
    /// Grundy values for levels `1..=grundy_max_tiles` (0: none).
    pub grundy_max_tiles: u32,
    /// Table format 2 with shards of at most this many positions. `None`:
    /// format 1 (one table per level) where every level fits in 2^32
    /// positions, else format 2 with shards of up to 2^32.
    pub shard_positions: Option<u64>,
    /// The table format written: 3 (block-addressable, the default), or 1
    /// and 2 for readers that know no other (`FORMAT.md`).
    pub table_format: u16,
    /// Count every win's winning moves, saturating at two: each level's
    /// summary then gives the wins with exactly one winning move and those
    /// with several (the sieve holds a second mark bit per pending position).
    pub count_moves: bool,
}

/// The most positions one table can hold (a roaring bitmap's range).
pub const MAX_SHARD_POSITIONS: u64 = 1 << 32;

impl Plan {
    /// A plan with the default table layout.
    pub fn new(universe: Universe, grundy_max_tiles: u32) -> Self {
        Plan { universe, grundy_max_tiles, shard_positions: None, table_format: VERSION_BLOCKED, count_moves: false }
    }

    /// The shard size of the plan's tables: `None` for one table per level.
    /// Format 2 always has shards.
    pub fn shard_limit(&self, ranking: &Ranking) -> Option<u64> {
        let needed = (1..=ranking.max_tiles()).any(|n| ranking.size(n) > MAX_SHARD_POSITIONS) || self.table_format == VERSION_SHARDED;
        self.shard_positions.or_else(|| needed.then_some(MAX_SHARD_POSITIONS))
    }

    /// The manifest of a run of this plan before its first level.
    pub fn manifest(&self, ranking: &Ranking) -> Manifest {
        let shard_positions = self.shard_limit(ranking);
        Manifest {
            format: FORMAT_NAME.to_string(),
            format_version: self.table_format,
            tool_version: TOOL_VERSION.to_string(),
            universe: self.universe,
            grundy_max_tiles: self.grundy_max_tiles,
            shard_positions,
            count_moves: self.count_moves,
            levels_complete: 0,
            complete: false,
            levels: Vec::new(),
            shards: Vec::new(),
            checks: Vec::new(),
            files: Default::default(),
            checksum: String::new(),
        }
    }

    /// Checks the plan against what the engine and the table format support.
    ///
    /// # Errors
    /// [`JobError::Invalid`] naming the offending field.
    pub fn validate(&self) -> Result<Ranking, JobError> {
        let ranking = Ranking::new(&self.universe)?;
        let top = ranking.max_tiles();
        if self.grundy_max_tiles > top {
            return Err(JobError::Invalid(format!(
                "grundy_max_tiles ({}, --grundy-max-tiles) exceeds the universe's largest level ({top})",
                self.grundy_max_tiles
            )));
        }
        if self.grundy_max_tiles > MAX_GRUNDY_TILES {
            return Err(JobError::Invalid(format!(
                "grundy_max_tiles ({}, --grundy-max-tiles) exceeds {MAX_GRUNDY_TILES}, the one-byte table limit",
                self.grundy_max_tiles
            )));
        }
        if let Some(s) = self.shard_positions.filter(|&s| s == 0 || s > MAX_SHARD_POSITIONS) {
            return Err(JobError::Invalid(format!("shard_positions ({s}) must be in 1..=2^32 ({MAX_SHARD_POSITIONS})")));
        }
        if ![VERSION, VERSION_SHARDED, VERSION_BLOCKED].contains(&self.table_format) {
            return Err(JobError::Invalid(format!("table_format ({}, --table-format) must be 1, 2 or 3", self.table_format)));
        }
        if self.table_format == VERSION && self.shard_limit(&ranking).is_some() {
            return Err(JobError::Invalid(
                "table_format 1 (--table-format) holds one table per level of at most 2^32 positions: shards need format 2 or 3".into(),
            ));
        }
        if let Some(n) = (1..=self.grundy_max_tiles).find(|&n| ranking.size(n) > MAX_SHARD_POSITIONS) {
            return Err(JobError::Invalid(format!(
                "Grundy values of level {n} ({} positions): the Grundy pass handles at most 2^32 positions per level",
                ranking.size(n)
            )));
        }
        Ok(ranking)
    }
}

/// A job file (TOML), as kept in `jobs/`.
///
/// ```toml
/// name = "default"
/// out = "../out/default"   # relative to this file's folder
/// max_tiles = 80
/// grundy_max_tiles = 60
/// # rows = 8    # optional bounds: a box or a few-row family
/// # cols = 15
/// # shard_positions = 1000000   # levels in shards this large
/// # table_format = 3            # 3 (default), or 2 / 1 for older readers
/// # count_moves = true          # wins with one winning move, with several
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// A label for logs.
    pub name: String,
    /// Output directory. Relative paths are relative to the folder of the
    /// job file (see [`JobFile::read`]).
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
    /// Levels in shards of at most this many positions (absent: one table
    /// per level where levels fit in 2^32 positions; see [`Plan`]).
    #[serde(default)]
    pub shard_positions: Option<u64>,
    /// The table format written (absent: 3; see [`Plan`]).
    #[serde(default)]
    pub table_format: Option<u16>,
    /// Count the wins with one winning move and with several (absent:
    /// false; see [`Plan::count_moves`]).
    #[serde(default)]
    pub count_moves: Option<bool>,
}

/// `path` with `.` components dropped and each `..` cancelling the folder
/// before it where there is one (`jobs/../out/default` → `out/default`),
/// without touching the file system: what messages print.
fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// serde's "invalid type: string \"ninety\", expected u32" in the job
/// file's words: "expected a whole number, found the string \"ninety\"".
/// Other messages are returned as they are.
fn plain_type_error(message: &str) -> String {
    let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|m| m.split_once(", expected "))
    else {
        return message.to_string();
    };
    let expected = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more, no quotes)",
        "a boolean" => "true or false",
        other => other,
    };
    let found = match found.split_once(' ') {
        Some(("string" | "integer" | "floating" | "boolean" | "sequence" | "map", _)) => format!("the {found}"),
        _ => found.to_string(),
    };
    format!("expected {expected}, found {found}")
}

impl JobFile {
    /// Parses a job file's text. Errors name the line, the column and the
    /// field at fault, on one line.
    ///
    /// # Errors
    /// [`JobError::Invalid`].
    pub fn parse(text: &str) -> Result<Self, JobError> {
        toml::from_str(text).map_err(|e| {
            let message = plain_type_error(&e.message().trim().replace('\n', " "));
            let Some(span) = e.span() else { return JobError::Invalid(message) };
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before.len() - line_start + 1;
            // Name the field when the error points at the value of a `key = value` line.
            let this_line = text[line_start..].lines().next().unwrap_or("");
            let key = this_line
                .split_once('=')
                .filter(|(k, _)| span.start > line_start + k.len() && span.end <= line_start + this_line.len())
                .map(|(k, _)| k.trim())
                .filter(|k| !k.is_empty());
            match key {
                Some(k) => JobError::Invalid(format!("line {line}, column {column}: {k}: {message}")),
                None => JobError::Invalid(format!("line {line}, column {column}: {message}")),
            }
        })
    }

    /// Reads and parses a job file; a relative `out` is resolved against the
    /// folder that holds the job file, so a job runs the same from anywhere.
    ///
    /// # Errors
    /// [`JobError`] when unreadable or invalid (naming the file).
    pub fn read(path: &Path) -> Result<Self, JobError> {
        let text = fs::read_to_string(path).map_err(|e| JobError::Io { path: path.to_path_buf(), source: e })?;
        let mut job = Self::parse(&text).map_err(|e| JobError::Invalid(format!("{}: not a valid job file (TOML): {e}", path.display())))?;
        if job.out.is_relative() {
            job.out = lexically_normal(&path.parent().unwrap_or(Path::new("")).join(&job.out));
        }
        Ok(job)
    }

    /// The plan this job describes.
    pub fn plan(&self) -> Plan {
        Plan {
            universe: Universe { rows: self.rows, cols: self.cols, tiles: self.max_tiles },
            grundy_max_tiles: self.grundy_max_tiles.unwrap_or(0),
            shard_positions: self.shard_positions,
            table_format: self.table_format.unwrap_or(VERSION_BLOCKED),
            count_moves: self.count_moves.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_paths_print_without_dot_dot() {
        for (path, want) in [
            ("jobs/../out/default", "out/default"),
            ("./jobs/x/../../out", "out"),
            ("../out/default", "../out/default"),
            ("/a/b/../c", "/a/c"),
            ("jobs/..", "."),
        ] {
            assert_eq!(lexically_normal(Path::new(path)), Path::new(want), "{path}");
        }
    }

    #[test]
    fn a_wrong_type_is_named_in_the_job_files_words() {
        let e = JobFile::parse("name = \"x\"\nout = \"o\"\nmax_tiles = \"ninety\"\n").unwrap_err().to_string();
        assert_eq!(e, "line 3, column 13: max_tiles: expected a whole number (0 or more, no quotes), found the string \"ninety\"");
        let e = JobFile::parse("name = \"x\"\nout = \"o\"\ncount_moves = 1\n").unwrap_err().to_string();
        assert!(e.ends_with("count_moves: expected true or false, found the integer `1`"), "{e}");
        let e = JobFile::parse("name = \"x\"\nout = \"o\"\nmax_tiles = -5\n").unwrap_err().to_string();
        assert!(e.ends_with("max_tiles: expected a whole number (0 or more, no quotes), found the integer `-5`"), "{e}");
        assert_eq!(plain_type_error("missing field `out`"), "missing field `out`");
    }
}
