//! `chomp export`: a table directory as one flat CSV or JSON file.

use anyhow::Context;
use chomp_tables::read::export::{self as flat, ExportError, ExportFormat, ExportWhat, DEFAULT_MAX_ENTRIES};
use chomp_tables::store::tmp_path;
use chomp_tables::Tables;
use clap::ValueEnum;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The flags of `chomp export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The table directory to read.
    #[arg(long, value_name = "DIR")]
    tables: PathBuf,
    /// Output format (columns and shape in FORMAT.md, section 15).
    #[arg(long, value_enum)]
    format: Format,
    /// Every loss (tiles, rank, position), or every position with its outcome and Grundy value.
    #[arg(long, value_enum, default_value_t = What::Losses)]
    what: What,
    /// Write to this file (atomically: a temporary file renamed at the end) instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Refuse an export of more than N entries (losses or positions).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ENTRIES)]
    max_entries: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum What {
    Losses,
    Positions,
}

pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let tables = Tables::open(&args.tables)?;
    let m = tables.manifest();
    if !m.complete {
        // Still exported (a run may be read while it runs), but not silently.
        eprintln!(
            "warning: {}: an unfinished run of {} levels ({}): exporting those",
            args.tables.display(),
            m.universe.max_tiles(),
            chomp_tables::read::completed_levels(m.levels_complete)
        );
    }
    let what = match args.what {
        What::Losses => ExportWhat::Losses,
        What::Positions => ExportWhat::Positions,
    };
    let format = match args.format {
        Format::Json => ExportFormat::Json,
        Format::Csv => ExportFormat::Csv,
    };
    // Refused before anything is written: no temporary file, no partial output.
    flat::check_size(&tables, what, args.max_entries)?;
    let run = |out: &mut dyn Write| flat::export(&tables, what, format, args.max_entries, out);
    match &args.out {
        Some(path) => to_file(path, run).map(|_| ExitCode::SUCCESS),
        None => {
            let stdout = io::stdout();
            let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
            match run(&mut out) {
                Ok(_) => Ok(ExitCode::SUCCESS),
                // `chomp export ... | head`: the reader has what it wanted.
                Err(ExportError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                    std::mem::forget(out); // its drop would flush into the closed pipe again
                    Ok(ExitCode::SUCCESS)
                }
                Err(ExportError::Io(e)) => Err(anyhow::Error::new(e).context("writing to standard output")),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// Runs `write` into `PATH.tmp`, then syncs it and renames it to `path`;
/// on any error the temporary file is removed and `path` left as it was.
fn to_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<u64, ExportError>) -> anyhow::Result<u64> {
    // Name the missing folder, not the temporary file that could not be made there.
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty() && !p.is_dir()) {
        anyhow::bail!("cannot write {}: the directory {} does not exist", path.display(), parent.display());
    }
    let tmp = tmp_path(path);
    let in_tmp = || tmp.display().to_string();
    let result = (|| -> anyhow::Result<u64> {
        let file = File::create(&tmp).with_context(in_tmp)?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let n = write(&mut out).map_err(|e| match e {
            ExportError::Io(e) => anyhow::Error::new(e).context(in_tmp()),
            e => e.into(),
        })?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error).with_context(in_tmp)?;
        file.sync_all().with_context(in_tmp)?;
        fs::rename(&tmp, path).with_context(|| path.display().to_string())?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
