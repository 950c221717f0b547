//! Flat exports of a table directory (`chomp export`): every loss, or every
//! position with its outcome and Grundy value, as CSV or JSON, in one file
//! for front ends that want no table reader. The formats are documented in
//! FORMAT.md (section 15); entries come level by level, by rank within a
//! level.

use super::answer::Outcome;
use super::tables::{ProbeError, Tables};
use crate::store::{TableDir, TableError};
use std::io::{self, Write};

/// The default cap on the entries of one export (`--max-entries`).
pub const DEFAULT_MAX_ENTRIES: u64 = 100_000_000;

/// What an export lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportWhat {
    /// Every losing position.
    Losses,
    /// Every position, with its outcome and Grundy value.
    Positions,
}

impl ExportWhat {
    /// `"losses"` or `"positions"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ExportWhat::Losses => "losses",
            ExportWhat::Positions => "positions",
        }
    }
}

/// The file format of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// A header line, then one line per entry.
    Csv,
    /// One JSON object: what was exported, then `entries`, one object per line.
    Json,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// More entries than the cap allows.
    #[error(
        "the export would hold {entries} {what} (levels 1 to {levels}), more than the cap of {cap}; \
         pass --max-entries {entries} to write it anyway{hint}"
    )]
    TooLarge {
        /// Entries the export would hold.
        entries: u64,
        /// The cap.
        cap: u64,
        /// `losses` or `positions`.
        what: &'static str,
        /// Levels exported.
        levels: u32,
        /// A suggestion, or empty.
        hint: &'static str,
    },
    /// The tables are damaged or unreadable.
    #[error("{0}")]
    Probe(#[from] ProbeError),
    /// Writing the export failed (a closed pipe included: [`io::ErrorKind::BrokenPipe`]).
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl From<TableError> for ExportError {
    fn from(e: TableError) -> Self {
        ExportError::Probe(e.into())
    }
}

/// How many entries an export of `what` holds: the manifest's losses or
/// positions over the complete levels.
pub fn export_entries(tables: &Tables, what: ExportWhat) -> u64 {
    tables.manifest().levels.iter().map(|l| if what == ExportWhat::Losses { l.losses } else { l.positions }).sum()
}

/// The number of entries of an export of `what`, or [`ExportError::TooLarge`]
/// when it exceeds `max_entries`.
///
/// # Errors
/// [`ExportError::TooLarge`].
pub fn check_size(tables: &Tables, what: ExportWhat, max_entries: u64) -> Result<u64, ExportError> {
    let entries = export_entries(tables, what);
    if entries > max_entries {
        let hint = if what == ExportWhat::Positions { ", or export only the losses (--what losses)" } else { "" };
        let levels = tables.manifest().levels_complete;
        return Err(ExportError::TooLarge { entries, cap: max_entries, what: what.as_str(), levels, hint });
    }
    Ok(entries)
}

/// Writes the export of `what` in `format` to `out` and returns the number
/// of entries written. Refuses, before writing anything, an export of more
/// than `max_entries` entries ([`check_size`]).
///
/// # Errors
/// [`ExportError`] for too large an export, damaged tables and write errors.
pub fn export(tables: &Tables, what: ExportWhat, format: ExportFormat, max_entries: u64, out: &mut dyn Write) -> Result<u64, ExportError> {
    let m = tables.manifest();
    let entries = check_size(tables, what, max_entries)?;
    match format {
        ExportFormat::Csv => {
            let columns = if what == ExportWhat::Losses { "tiles,rank,position" } else { "tiles,rank,position,outcome,grundy" };
            writeln!(out, "{columns}")?;
        }
        ExportFormat::Json => {
            let universe = serde_json::to_string(&m.universe).expect("plain data");
            write!(
                out,
                "{{\"format\":\"chomp-tables-export\",\"export_version\":1,\"what\":\"{}\",\"universe\":{universe},\
                 \"levels_complete\":{},\"grundy_max_tiles\":{},\"count\":{entries},\"entries\":[",
                what.as_str(),
                m.levels_complete,
                m.grundy_max_tiles.min(m.levels_complete)
            )?;
        }
    }
    let mut written = 0u64;
    let mut line = String::new();
    let mut rows = Vec::new();
    let ranking = tables.ranking();
    for n in 1..=m.levels_complete {
        let losses = tables.level_losses(n)?;
        // Positions exports are capped (see `max_entries`): a level's values fit in memory.
        let grundy =
            if what == ExportWhat::Positions && n <= m.grundy_max_tiles { Some(tables.dir().read_grundy_values(m, n)?) } else { None };
        let mut emit = |rank: u64, outcome: Option<Outcome>, g: Option<u8>| -> io::Result<()> {
            ranking.unrank_into(n, rank, &mut rows);
            line.clear();
            entry(&mut line, format, written == 0, n, rank, &rows, outcome, g);
            written += 1;
            out.write_all(line.as_bytes())
        };
        match what {
            ExportWhat::Losses => {
                for rank in losses.iter() {
                    emit(rank, None, None)?;
                }
            }
            ExportWhat::Positions => {
                let size = ranking.size(n);
                let mut next_loss = losses.iter().peekable();
                for rank in 0..size {
                    let loss = next_loss.next_if_eq(&rank).is_some();
                    let g = match &grundy {
                        Some(values) => {
                            let g = values[rank as usize];
                            if (g == 0) != loss {
                                let file = tables.dir().path().join(TableDir::table_names(m, crate::store::Kind::Grundy, n).join(", "));
                                return Err(TableError::Corrupt {
                                    path: file,
                                    what: format!("Grundy value {g} of rank {rank} contradicts the loss table"),
                                }
                                .into());
                            }
                            Some(g)
                        }
                        None => None,
                    };
                    emit(rank, Some(if loss { Outcome::Loss } else { Outcome::Win }), g)?;
                }
            }
        }
    }
    if format == ExportFormat::Json {
        writeln!(out, "{}]}}", if written == 0 { "" } else { "\n" })?;
    }
    out.flush()?;
    Ok(written)
}

/// Appends one entry (with its line break, or JSON separator) to `line`.
#[allow(clippy::too_many_arguments)]
fn entry(
    line: &mut String,
    format: ExportFormat,
    first: bool,
    tiles: u32,
    rank: u64,
    rows: &[u8],
    outcome: Option<Outcome>,
    g: Option<u8>,
) {
    use std::fmt::Write as _;
    let sep = match format {
        ExportFormat::Csv => ' ',
        ExportFormat::Json => ',',
    };
    let mut position = String::with_capacity(3 * rows.len());
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            position.push(sep);
        }
        let _ = write!(position, "{r}");
    }
    match format {
        ExportFormat::Csv => {
            let _ = write!(line, "{tiles},{rank},{position}");
            if let Some(o) = outcome {
                let _ = write!(line, ",{},", o.as_str());
                if let Some(g) = g {
                    let _ = write!(line, "{g}");
                }
            }
            line.push('\n');
        }
        ExportFormat::Json => {
            line.push_str(if first { "\n" } else { ",\n" });
            let _ = write!(line, "{{\"tiles\":{tiles},\"rank\":{rank},\"position\":[{position}]");
            if let Some(o) = outcome {
                let _ = write!(line, ",\"outcome\":\"{}\",\"grundy\":", o.as_str());
                match g {
                    Some(g) => {
                        let _ = write!(line, "{g}");
                    }
                    None => line.push_str("null"),
                }
            }
            line.push('}');
        }
    }
}
