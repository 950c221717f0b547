//! `chomp`: command-line glue over the `chomp_tables` library.

use chomp_tables::cluster::{Comm, Solo};
use chomp_tables::job::{self, Event, JobFile, Options, Plan};
use chomp_tables::probe::{Outcome, Tables};
use chomp_tables::{verify, Position, Universe};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "chomp",
    version,
    about = "Solve the game of Chomp: losing positions, Grundy values and perfect-play tables",
    long_about = "Solve the game of Chomp level by level (a level is a tile count).\n\n\
        Positions are written as row lengths, top row first: \"5 3 3 1 1\" or \"5,3,3,1,1\".\n\
        Cells are 0-based (row, col); (0,0) is the poisoned tile. A position is a loss when\n\
        the player to move loses with perfect play.\n\n\
        Typical use:\n  chomp run jobs/default.toml\n  chomp solve --max-tiles 60 --out out/t60\n  \
        chomp query \"3 2 1\" --tables out/t60 --json\n  chomp verify --tables out/t60"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compute every level of a universe into a table directory (resumes an interrupted run).
    Solve {
        /// Largest tile count (levels 1..=N).
        #[arg(long, value_name = "N")]
        max_tiles: Option<u32>,
        /// Only positions with at most R rows (with --cols: a box).
        #[arg(long, value_name = "R")]
        rows: Option<u32>,
        /// Only positions with at most C columns.
        #[arg(long, value_name = "C")]
        cols: Option<u32>,
        /// Also compute Grundy values for levels 1..=M (M <= N).
        #[arg(long, value_name = "M")]
        grundy_max_tiles: Option<u32>,
        /// Grundy values for every level of the universe.
        #[arg(long, conflicts_with = "grundy_max_tiles")]
        grundy: bool,
        /// Output table directory.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Run a job file (TOML, see jobs/): the same engine as `solve`.
    Run {
        /// The job file, e.g. jobs/default.toml.
        job: PathBuf,
        /// Override the job's output directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Answer for one position: outcome, Grundy value and winning moves.
    Query {
        /// Row lengths, top row first: "3 2 1" or "3,2,1".
        position: String,
        /// The table directory to read.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Print JSON: position, tiles, outcome, grundy, grundy_normal, winning_moves, moves.
        #[arg(long)]
        json: bool,
    },
    /// Value an iChomp position (four quadrants, normal play) and find a winning move.
    Ichomp {
        /// The four quadrant positions, e.g. "3 2" "-" "4" "2 2"; "-" is an empty quadrant.
        #[arg(num_args = 4, value_names = ["Q1", "Q2", "Q3", "Q4"], required = true)]
        quadrants: Vec<String>,
        /// The table directory to read (Grundy values needed for every quadrant's level).
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Print JSON: quadrants, quadrant_values, value, outcome, winning_move.
        #[arg(long)]
        json: bool,
    },
    /// List the winning first moves of every rectangle in the tables, as CSV (rows,cols,winning_moves).
    Openings {
        /// The table directory to read.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Write the CSV to this file (atomically) instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Draw the plots of a table directory (PNG and SVG): loss share, conjecture ratio, Grundy heat map.
    Plot {
        /// The table directory to read (its manifest's level statistics).
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Where to write loss-share, conjecture-ratio and grundy-heatmap .png/.svg (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Re-check a table directory: checksums, tables and sampled game invariants.
    Verify {
        /// The table directory to check.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Random positions to check against their children.
        #[arg(long, default_value_t = 2000)]
        samples: u64,
        /// Seed of the sampler (the same seed checks the same positions).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Sample only levels of at least this many tiles (e.g. the top of a frontier run).
        #[arg(long, value_name = "N", default_value_t = 1)]
        min_tiles: u32,
        /// Sample only levels of at most this many tiles.
        #[arg(long, value_name = "N", default_value_t = u32::MAX)]
        max_tiles: u32,
    },
    /// Time the engine on real levels (in a temporary directory) and report throughput and memory.
    Bench {
        /// Losses for levels 1..=N.
        #[arg(long, value_name = "N", default_value_t = 80)]
        max_tiles: u32,
        /// Grundy values for levels 1..=M.
        #[arg(long, value_name = "M", default_value_t = 0)]
        grundy_max_tiles: u32,
        /// Working directory for the temporary tables (default: the system temp dir).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Instead, time probes (outcome and Grundy value) of random positions on this table directory.
        #[arg(long, value_name = "DIR")]
        probe: Option<PathBuf>,
    },
    /// n-dimensional Chomp in a box d1 x ... x dk: positions, losses, winning first moves, tables.
    Nd(chomp_tables::nd::cli::NdArgs),
    /// The divisor game on N (n-D Chomp in the box of N's exponents + 1): the numbers that win when named first.
    Divisors(chomp_tables::nd::cli::DivisorsArgs),
}

#[derive(clap::Args)]
struct RunFlags {
    /// Overwrite a table directory written for another job.
    #[arg(long)]
    force: bool,
    /// No progress lines.
    #[arg(long, short)]
    quiet: bool,
    /// Stop before a level whose estimated memory exceeds SIZE (bytes, or with K, M, G, T;
    /// default: the memory the system reports available).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
}

/// Parses `4G`, `512M`, `1T`, `100000` (bytes; binary units).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("unknown unit {c:?} (use K, M, G or T)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a size like 4G or 512M"))?;
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return Err(format!("{s:?} is not a positive size"));
    }
    Ok((v * mult as f64) as u64)
}

fn main() -> ExitCode {
    // MPI first: a rank that fails before MPI_Init would hang mpiexec.
    #[cfg(feature = "mpi")]
    let comm: Box<dyn Comm> = match chomp_tables::cluster::MpiComm::init() {
        Some(c) => Box::new(c),
        None => Box::new(Solo),
    };
    #[cfg(not(feature = "mpi"))]
    let comm: Box<dyn Comm> = Box::new(Solo);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => e.exit(),
        Err(e) => {
            // One line, like every other error; `--help` has the details.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            eprintln!("error: {first} (see chomp --help)");
            return ExitCode::from(2);
        }
    };
    match dispatch(cli.command, &*comm) {
        Ok(code) => code,
        Err(msg) => {
            if comm.size() > 1 {
                eprintln!("error: rank {}: {msg}", comm.rank());
                // Let mpiexec forward the message before the abort tears the job down.
                std::thread::sleep(std::time::Duration::from_millis(300));
                // The other ranks may wait in a collective: end them all.
                comm.abort(1);
            }
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cmd: Command, comm: &dyn Comm) -> Result<ExitCode, String> {
    match cmd {
        Command::Solve { max_tiles, rows, cols, grundy_max_tiles, grundy, out, run } => {
            let universe = Universe { rows, cols, tiles: max_tiles };
            let grundy_max_tiles = if grundy { universe.max_tiles() } else { grundy_max_tiles.unwrap_or(0) };
            solve(&Plan { universe, grundy_max_tiles }, out, &run, comm)
        }
        Command::Run { job, out, run } => {
            let file = JobFile::read(&job).map_err(|e| e.to_string())?;
            let out = out.unwrap_or_else(|| file.out.clone());
            solve(&file.plan(), out, &run, comm)
        }
        Command::Query { position, tables, json } => query(&position, &tables, json),
        Command::Ichomp { quadrants, tables, json } => ichomp(&quadrants, &tables, json),
        Command::Openings { tables, out } => {
            let t = Tables::open(&tables).map_err(|e| e.to_string())?;
            let csv = chomp_tables::probe::openings_csv(&chomp_tables::probe::rectangle_openings(&t).map_err(|e| e.to_string())?);
            match out {
                Some(path) => chomp_tables::table::write_atomic(&path, csv.as_bytes()).map_err(|e| e.to_string())?,
                None => print!("{csv}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { tables, samples, seed, min_tiles, max_tiles } => {
            let t0 = Instant::now();
            let report = verify::verify_levels(&tables, samples, seed, min_tiles..=max_tiles).map_err(|e| e.to_string())?;
            for f in &report.failures {
                eprintln!("FAIL {f}");
            }
            let verdict = if report.failures.is_empty() { "ok" } else { "FAILED" };
            println!(
                "{verdict}: {} files checksummed, {} tables decoded, {} positions sampled, {} problems ({:.1} s)",
                report.files,
                report.tables,
                report.samples,
                report.failures.len(),
                t0.elapsed().as_secs_f64()
            );
            Ok(if report.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Plot { tables, out } => {
            let manifest = chomp_tables::manifest::Manifest::read(&tables).map_err(|e| e.to_string())?;
            std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            for path in chomp_tables::plot::plot_all(&manifest.levels, &out).map_err(|e| e.to_string())? {
                println!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench { probe: Some(tables), .. } => bench_probe(&tables),
        Command::Bench { max_tiles, grundy_max_tiles, dir, probe: None } => bench(max_tiles, grundy_max_tiles, dir),
        Command::Nd(args) => print_nd(chomp_tables::nd::cli::nd(&args)),
        Command::Divisors(args) => print_nd(chomp_tables::nd::cli::divisors(&args)),
    }
}

fn solve(plan: &Plan, out: PathBuf, flags: &RunFlags, comm: &dyn Comm) -> Result<ExitCode, String> {
    let quiet = flags.quiet || !comm.is_root();
    let t0 = Instant::now();
    let manifest = job::run_on(plan, &Options { out: out.clone(), force: flags.force, max_memory: flags.max_memory }, comm, |e| {
        if !quiet {
            print_event(e);
        }
    })
    .map_err(|e| e.to_string())?;
    if !quiet {
        let positions: u64 = manifest.levels.iter().map(|l| l.positions).sum();
        let losses: u64 = manifest.levels.iter().map(|l| l.losses).sum();
        eprintln!(
            "done: {} levels ({}), {positions} positions, {losses} losses, {:.1} s; tables in {}",
            manifest.levels_complete,
            plan.universe.describe(),
            t0.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_event(e: &Event) {
    match e {
        Event::Resumed { levels_complete } => eprintln!("resuming after level {levels_complete}"),
        Event::Level(r) => {
            let s = &r.stats;
            let secs = r.sieve_seconds + r.grundy_seconds;
            let mut line = format!(
                "level {:>3}/{}: {:>11} positions {:>9} losses ({:.3}%) {:>7.2} s {:>8.1} M pos/s",
                s.tiles,
                r.max_tiles,
                s.positions,
                s.losses,
                s.loss_percent(),
                secs,
                s.positions as f64 / secs.max(1e-9) / 1e6
            );
            if let Some(g) = s.max_grundy() {
                line.push_str(&format!(
                    "  grundy max {g} ({:.2} s, {:.0} M look-ups/s)",
                    r.grundy_seconds,
                    r.lookups as f64 / r.grundy_seconds.max(1e-9) / 1e6
                ));
            }
            eprintln!("{line}");
        }
        Event::Ranks(work) if work.len() > 1 => {
            for w in work {
                eprintln!(
                    "rank {}: {} marks pushed, {} positions scanned, {} Grundy values computed, {} child look-ups, peak memory {} MiB",
                    w.rank,
                    w.marks,
                    w.scanned,
                    w.evaluated,
                    w.lookups,
                    w.peak_kib / 1024
                );
            }
            let busiest = |f: fn(&job::RankWork) -> u64| {
                let total: u64 = work.iter().map(f).sum();
                let max = work.iter().map(f).max().unwrap_or(0);
                if total == 0 {
                    1.0
                } else {
                    max as f64 * work.len() as f64 / total as f64
                }
            };
            eprintln!(
                "balance (busiest rank / mean): marks {:.3}, scan {:.3}, Grundy look-ups {:.3}",
                busiest(|w| w.marks),
                busiest(|w| w.scanned),
                busiest(|w| w.lookups)
            );
        }
        Event::Ranks(_) => {}
    }
}

fn query(position: &str, dir: &Path, json: bool) -> Result<ExitCode, String> {
    let p: Position = position.parse().map_err(|e| format!("invalid position {position:?}: {e}"))?;
    let tables = Tables::open(dir).map_err(|e| e.to_string())?;
    let outcome = tables.outcome(&p).map_err(|e| e.to_string())?;
    let grundy = tables.grundy(&p).map_err(|e| e.to_string())?;
    let moves = tables.moves(&p).map_err(|e| e.to_string())?;
    let mut winning: Vec<[u32; 2]> = moves.iter().filter(|m| m.outcome == Outcome::Loss).map(|m| m.cell).collect();
    winning.sort();
    if json {
        let v = serde_json::json!({
            "position": p.rows(),
            "tiles": p.tiles(),
            "outcome": outcome,
            "grundy": grundy,
            "grundy_normal": grundy.map(|g| g as u32 + 1),
            "winning_moves": winning,
            "moves": moves,
        });
        println!("{v}");
    } else {
        println!("position: {p} ({} tiles)", p.tiles());
        println!("outcome:  {} for the player to move", outcome.as_str());
        match grundy {
            Some(g) => println!("grundy:   {g} (misère), {} (normal play)", g as u32 + 1),
            None => println!("grundy:   not computed at this level"),
        }
        let list: Vec<String> = winning.iter().map(|[r, c]| format!("({r},{c})")).collect();
        println!("winning moves: {}", if list.is_empty() { "none".to_string() } else { list.join(" ") });
    }
    Ok(ExitCode::SUCCESS)
}

fn ichomp(quadrants: &[String], dir: &Path, json: bool) -> Result<ExitCode, String> {
    let mut qs: [Option<Position>; 4] = Default::default();
    for (i, q) in quadrants.iter().enumerate() {
        if q.trim() != "-" {
            qs[i] = Some(q.parse().map_err(|e| format!("invalid quadrant {} {q:?}: {e}", i + 1))?);
        }
    }
    let tables = Tables::open(dir).map_err(|e| e.to_string())?;
    let a = chomp_tables::ichomp::analyze(&tables, &qs).map_err(|e| e.to_string())?;
    let outcome = if a.loss { "loss" } else { "win" };
    if json {
        let quads: Vec<Option<&[u8]>> = qs.iter().map(|q| q.as_ref().map(|p| p.rows())).collect();
        let v = serde_json::json!({
            "quadrants": quads,
            "quadrant_values": a.quadrant_values,
            "value": a.value,
            "outcome": outcome,
            "winning_move": a.winning_move,
        });
        println!("{v}");
    } else {
        println!("quadrant values (normal play): {:?}", a.quadrant_values);
        println!("value: {} ({outcome} for the player to move)", a.value);
        match &a.winning_move {
            Some(m) => {
                let after = m.position.as_ref().map(|p| p.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" "));
                println!("winning move: quadrant {} cell ({},{}) -> {}", m.quadrant, m.cell[0], m.cell[1], after.unwrap_or("empty".into()));
            }
            None => println!("winning move: none"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_probe(dir: &Path) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let tables = Tables::open(dir).map_err(|e| e.to_string())?;
    let m = tables.manifest();
    if m.levels_complete == 0 {
        return Err(format!("{}: no completed level to probe", dir.display()));
    }
    let mut rng = verify::SplitMix(42);
    let sample: Vec<Position> = (0..100_000)
        .map(|_| {
            let n = 1 + rng.below(m.levels_complete as u64) as u32;
            tables.ranking().unrank(n, rng.below(tables.ranking().size(n))).expect("rank below size")
        })
        .collect();
    // First pass loads and checks every level (the cost of opening); the second is the steady state.
    for p in &sample {
        tables.outcome(p).map_err(|e| e.to_string())?;
        tables.grundy(p).map_err(|e| e.to_string())?;
    }
    let load = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mut losses = 0;
    for p in &sample {
        losses += (tables.outcome(p).map_err(|e| e.to_string())? == Outcome::Loss) as u32;
        tables.grundy(p).map_err(|e| e.to_string())?;
    }
    let per = t1.elapsed().as_secs_f64() / sample.len() as f64;
    println!("probe: {} ({} levels): open and first touch of every level {:.3} s", dir.display(), m.levels_complete, load);
    println!("probe: {:.2} µs per position (outcome + Grundy value, {} positions, {losses} losses)", per * 1e6, sample.len());
    Ok(ExitCode::SUCCESS)
}

fn bench(max_tiles: u32, grundy_max_tiles: u32, dir: Option<PathBuf>) -> Result<ExitCode, String> {
    let base = dir.unwrap_or_else(std::env::temp_dir);
    let out = base.join(format!("chomp-bench-{}", std::process::id()));
    let plan = Plan { universe: Universe::tiles(max_tiles), grundy_max_tiles };
    let threads = rayon::current_num_threads();
    let (mut sieve_s, mut grundy_s, mut positions, mut grundy_positions, mut lookups, mut marks) = (0.0, 0.0, 0u64, 0u64, 0u64, 0u64);
    let t0 = Instant::now();
    let result = job::run(&plan, &Options { out: out.clone(), force: false, max_memory: None }, |e| {
        if let Event::Level(r) = e {
            sieve_s += r.sieve_seconds;
            grundy_s += r.grundy_seconds;
            positions += r.stats.positions;
            marks += r.marks;
            lookups += r.lookups;
            if r.stats.grundy_histogram.is_some() {
                grundy_positions += r.stats.positions;
            }
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    result.map_err(|e| e.to_string())?;
    println!("bench: losses to {max_tiles} tiles, Grundy to {grundy_max_tiles}, {threads} threads");
    println!("wall:          {wall:.2} s");
    println!(
        "sieve:         {sieve_s:.2} s, {positions} positions, {marks} marks, {:.2} M positions/s/core",
        positions as f64 / sieve_s / threads as f64 / 1e6
    );
    if grundy_max_tiles > 0 {
        println!(
            "grundy:        {grundy_s:.2} s, {grundy_positions} positions, {lookups} child look-ups, {:.1} M look-ups/s/core",
            lookups as f64 / grundy_s / threads as f64 / 1e6
        );
    }
    println!("peak memory:   {} MiB (VmHWM)", job::peak_rss_kib() / 1024);
    Ok(ExitCode::SUCCESS)
}

/// Prints what `chomp nd` or `chomp divisors` returned.
fn print_nd(result: Result<chomp_tables::nd::cli::Output, chomp_tables::nd::NdError>) -> Result<ExitCode, String> {
    let out = result.map_err(|e| e.to_string())?;
    for line in &out.stderr {
        eprintln!("{line}");
    }
    print!("{}", out.stdout);
    Ok(if out.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
