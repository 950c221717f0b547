//! `chomp`: command-line glue over the `chomp_tables` library.

/// `eprintln!` that ignores a failed write: a run's progress going into a
/// closed pipe (`chomp solve … 2>&1 | head`) must not stop the run.
macro_rules! progress {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` and `print!` for the whole binary: standard output written
/// through [`out::write`], which ends the command with a status instead of
/// std's panic when the output cannot be written (these shadow std's macros
/// in every module declared below).
macro_rules! println {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! print {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

mod out {
    use std::io::Write;

    /// Writes to standard output. Output that cannot be written ends the
    /// command: into a closed pipe (`chomp query … | head`) quietly with
    /// status 0, as `chomp export` does; anywhere else (`> /dev/full`) with
    /// `error: writing to standard output: …` and status 1. (A run's
    /// progress on standard error is written by `progress!`, which carries on.)
    pub fn write(args: std::fmt::Arguments) {
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            progress!("error: writing to standard output: {e}");
            std::process::exit(1);
        }
    }
}

mod args;
mod census;
mod engine;
mod export;
mod fewrow;
mod nd;
mod play;
mod progress;
mod read;
mod serve;
mod site;
mod solve;

use anyhow::bail;
use args::{Cli, Command, Engine};
use chomp_tables::cluster::{Comm, Solo};
use chomp_tables::solve::{JobError, JobFile, Plan};
use chomp_tables::Universe;
use clap::Parser;
use std::process::ExitCode;

/// MPI, with the transport's settings from the tunables (a bad value is
/// reported by the command's own check, after MPI is up); `None` if MPI was
/// already initialised.
#[cfg(feature = "mpi")]
fn mpi_comm() -> Option<chomp_tables::cluster::MpiComm> {
    let node_processes = chomp_tables::solve::tunables::get().test_node_processes;
    chomp_tables::cluster::MpiComm::init(chomp_tables::solve::memory::collective_bytes(), node_processes)
}

/// How many processes an MPI launcher started (MPICH's and Slurm's PMI,
/// Open MPI), as its environment says; `None` outside a launcher.
fn launched_processes() -> Option<usize> {
    ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE"].iter().find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

fn main() -> ExitCode {
    // MPI first: a process that fails before MPI_Init would hang mpiexec.
    #[cfg(feature = "mpi")]
    let comm: Box<dyn Comm> = match mpi_comm() {
        Some(c) => {
            // A panic on one process ends every process, before it unwinds.
            if c.processes() > 1 {
                c.abort_on_panic();
            }
            Box::new(c)
        }
        None => Box::new(Solo),
    };
    #[cfg(not(feature = "mpi"))]
    let comm: Box<dyn Comm> = Box::new(Solo);
    // A build without MPI started by mpiexec would run K lone copies of the
    // job, each writing the same directory: refuse before doing anything.
    if let Some(k) = launched_processes().filter(|&k| k > 1 && comm.processes() == 1) {
        eprintln!("error: this chomp was built without MPI, but mpiexec started {k} processes of it; build it with `cargo build --release --features mpi` (docs/cluster.md)");
        return ExitCode::from(2);
    }
    // Usage errors print clap's whole message (with its suggestions) and exit 2.
    let cli = Cli::parse();
    match dispatch(cli.command, &*comm) {
        Ok(code) => code,
        Err(e) => {
            let msg = one_line(&e);
            if comm.processes() > 1 && e.downcast_ref::<JobError>().is_some_and(|j| matches!(j, JobError::Mismatch(_))) {
                // Every process found it at once: process 0 says it once.
                comm.fail(&msg);
            }
            if e.downcast_ref::<chomp_tables::fewrow::FewRowError>()
                .is_some_and(|f| matches!(f, chomp_tables::fewrow::FewRowError::Stopped { .. }))
            {
                // A few-row run (one process) stopped on a signal after its checkpoint.
                eprintln!("{msg}");
                return ExitCode::from(solve::STOPPED_STATUS);
            }
            if e.downcast_ref::<JobError>().is_some_and(|j| matches!(j, JobError::Stopped { .. })) {
                // Every process agreed to stop after a checkpoint: each
                // exits with the status that asks for a rerun; process 0 says so.
                if comm.is_root() {
                    eprintln!("{msg}");
                }
                return ExitCode::from(solve::STOPPED_STATUS);
            }
            if comm.processes() > 1 {
                // The other processes may wait in a collective: end them all.
                comm.fail_alone(&msg);
            }
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

/// An error as the one line `error: …` prints: anyhow's `{:#}` ("outer:
/// inner", each context before what it wraps), except that a cause the line
/// already ends with is not repeated. The library's errors print their
/// source themselves (`#[error("{path}: {source}")]`, `#[error("{0}")]` over
/// a `#[from]`) and also return it from `source()`; `{:#}` alone would print
/// it twice.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for (i, cause) in e.chain().enumerate() {
        let text = cause.to_string();
        if i == 0 {
            line = text;
        } else if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

fn dispatch(cmd: Command, comm: &dyn Comm) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Solve {
            engine,
            max_tiles,
            rows,
            cols,
            grundy_max_tiles,
            grundy,
            shard_positions,
            table_format,
            count_moves,
            out,
            run,
        } => {
            let universe = Universe { rows, cols, tiles: max_tiles };
            let grundy_max_tiles = if grundy { universe.max_tiles() } else { grundy_max_tiles.unwrap_or(0) };
            let plan = Plan { universe, grundy_max_tiles, shard_positions, table_format, count_moves };
            let engine = match engine {
                Some(e) => e,
                None => {
                    let (e, why) = engine::pick_engine(&plan, &out, &run, comm);
                    if comm.is_root() && (run.dry_run || (e == Engine::FewRow && !run.quiet)) {
                        progress!("engine: {why}");
                    }
                    e
                }
            };
            if engine == Engine::Box {
                return solve::solve(&plan, out, &run, comm);
            }
            let other = [
                (max_tiles.is_some(), "--max-tiles"),
                (grundy || grundy_max_tiles > 0, "Grundy values"),
                (shard_positions.is_some(), "--shard-positions"),
                (table_format != 3, "--table-format"),
                (count_moves, "--count-moves"),
            ];
            if let Some((_, what)) = other.iter().find(|o| o.0) {
                bail!("the few-row engine solves boxes (--rows and --cols) for their losses only: {what} needs --engine box");
            }
            let (Some(rows), Some(cols)) = (rows, cols) else {
                bail!("the few-row engine solves boxes: give --rows and --cols");
            };
            if comm.processes() > 1 {
                bail!("the few-row engine runs in one process (with every thread of its machine)");
            }
            fewrow::solve(rows, cols, out, &run)
        }
        Command::Run { job, out, run } => {
            let file = match job {
                Some(path) => read_job(&path)?,
                None => default_job()?,
            };
            let out = out.unwrap_or_else(|| file.out.clone());
            solve::solve(&file.plan(), out, &run, comm)
        }
        Command::Query { position, tables, json, against } => read::query(&position, &tables, json, against.as_deref()),
        Command::Convert { tables, out, quiet } if chomp_tables::fewrow::is_few_row_dir(&tables) => fewrow::convert(&tables, &out, quiet),
        Command::Convert { tables, out, quiet } => read::convert(&tables, &out, quiet),
        Command::Site { tables, out, mirror, pack, force, quiet } => site::site(&tables, &out, mirror.as_deref(), pack, force, quiet),
        Command::Fetch { manifest, from, out, jobs, idle_timeout, retries, quiet } => {
            let opts = chomp_tables::fetch::FetchOptions {
                jobs: jobs as usize,
                idle_timeout: std::time::Duration::from_secs(idle_timeout),
                retries,
            };
            read::fetch(&manifest, &from, &out, &opts, quiet)
        }
        Command::Ichomp { quadrants, tables, json } => read::ichomp(&quadrants, &tables, json),
        Command::Openings { tables, rows, cols, all, force, out } => {
            read::openings(tables.as_deref(), rows.zip(cols), all, force, out.as_deref())
        }
        Command::Census { boxes, include, work, out, max_memory, dry_run } => {
            census::census(&boxes, &include, &work, &out, max_memory, dry_run)
        }
        Command::Boxes { tables, out } => read::boxes(&tables, out.as_deref()),
        Command::Verify { against: Some(manifest), tables, .. } => read::verify_against(&tables, &manifest),
        Command::Verify { tables, samples, seed, full, max_memory, dry_run, against: None, .. }
            if chomp_tables::fewrow::is_few_row_dir(&tables) =>
        {
            fewrow::verify(&tables, samples, seed, full, max_memory, dry_run)
        }
        Command::Verify { tables, max_memory, dry_run: true, .. } => read::verify_dry_run(&tables, max_memory),
        Command::Verify { tables, samples, seed, min_tiles, max_tiles, allow_incomplete, full, max_memory, against: None, .. } => {
            if let Some(max) = max_tiles.filter(|&max| max < min_tiles) {
                bail!("--min-tiles {min_tiles} is above --max-tiles {max}: no level to sample");
            }
            let proof = full.then_some(read::Proof { max_memory });
            read::verify(&tables, samples, seed, min_tiles..=max_tiles.unwrap_or(u32::MAX), allow_incomplete, proof, comm)
        }
        Command::Export(args) => export::export(&args),
        Command::Plot { census: Some(csv), out, .. } => read::plot_census(&csv, &out),
        Command::Plot { openings: Some(csv), out, .. } => read::plot_openings(&csv, &out),
        Command::Plot { tables, out, openings: None, census: None } => read::plot(&tables, &out),
        Command::Summary { tables, out, force } => read::summary(&tables, &out, force),
        Command::Oeis { summary, out, force } => read::oeis(&summary, &out, force),
        Command::Bench { probe: Some(tables), .. } => read::bench_probe(&tables),
        Command::Bench { rows: Some(r), cols: Some(c), repeat, .. } => solve::bench_box(r, c, repeat),
        Command::Bench { max_tiles, grundy_max_tiles, dir, probe: None, .. } => solve::bench(max_tiles, grundy_max_tiles, dir),
        Command::Play { position, tables, rows, cols, level, seed, json } => {
            play::play(&position, tables.as_deref(), rows.zip(cols), level, seed, json)
        }
        Command::Match { tables, games, seed, min_side, max_rows, max_cols } => {
            play::tournament(&tables, games, seed, min_side, max_rows, max_cols)
        }
        Command::Serve(args) => serve::serve(args),
        Command::Nd(args) => print_nd(nd::nd(&args)),
        Command::Divisors(args) => print_nd(nd::divisors(&args)),
    }
}

/// The default job (`jobs/default.toml`), built into the binary: what
/// `chomp run` with no job file runs, wherever the binary was installed.
const DEFAULT_JOB: &str = include_str!("../../../jobs/default.toml");

/// The built-in default job, writing `out/default` under the current folder.
fn default_job() -> anyhow::Result<JobFile> {
    let mut file = JobFile::parse(DEFAULT_JOB)?;
    file.out = std::path::Path::new("out").join(&file.name);
    Ok(file)
}

/// A job file; one that is not there is named with where the job files are.
fn read_job(path: &std::path::Path) -> anyhow::Result<JobFile> {
    match JobFile::read(path) {
        Err(JobError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => bail!(
            "{}: no such job file (the job files are in jobs/ of the chomp-tables checkout; \
             `chomp run` with no file runs the default job, built in)",
            path.display()
        ),
        other => Ok(other?),
    }
}

/// Prints what `chomp nd` or `chomp divisors` returned.
fn print_nd(result: Result<nd::Output, chomp_tables::nd::NdError>) -> anyhow::Result<ExitCode> {
    let out = result?;
    for line in &out.stderr {
        eprintln!("{line}");
    }
    print!("{}", out.stdout);
    Ok(if out.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use anyhow::Context;
    use chomp_tables::store::{ManifestError, TableError};
    use chomp_tables::JobError;
    use std::io;
    use std::path::Path;

    fn table_error() -> TableError {
        TableError::io(Path::new("t/L0005.cht"), io::Error::from(io::ErrorKind::NotFound))
    }

    #[test]
    fn a_context_prints_before_its_error() {
        let io = io::Error::from(io::ErrorKind::NotFound);
        let text = format!("out/x: {io}");
        let e = Err::<(), _>(io).context("out/x").unwrap_err();
        assert_eq!(one_line(&e), text);
        assert_eq!(one_line(&anyhow::anyhow!("plain")), "plain");
    }

    #[test]
    fn a_source_the_message_holds_is_not_repeated() {
        // Each wraps the one before and prints it: the line is the outermost's message.
        let table = anyhow::Error::new(table_error());
        let text = table.to_string();
        assert_eq!(one_line(&table), text);
        assert_ne!(format!("{table:#}"), text, "anyhow's own chain repeats the source");
        let job = JobError::Manifest(ManifestError::Table(table_error()));
        assert_eq!(job.to_string(), text);
        assert_eq!(one_line(&job.into()), text);
        let e = Err::<(), _>(JobError::Table(table_error())).context("solving the 3x3 box").unwrap_err();
        assert_eq!(one_line(&e), format!("solving the 3x3 box: {text}"));
    }
}
