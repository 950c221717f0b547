//! The reading commands: query, ichomp, openings, verify, plot, probe bench.

use anyhow::{bail, Context};
use chomp_tables::cluster::Solo;
use chomp_tables::read::ichomp;
use chomp_tables::read::{openings as rect, verify as check};
use chomp_tables::report::{plot, summary};
use chomp_tables::rng::SplitMix;
use chomp_tables::solve::check::{Checker, CHECK_SAMPLES};
use chomp_tables::store::convert::Converted;
use chomp_tables::store::write_atomic;
use chomp_tables::Manifest;
use chomp_tables::{Outcome, Position, Tables};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

fn open(dir: &Path) -> anyhow::Result<Tables> {
    Ok(Tables::open(dir)?)
}

fn plural(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn query(position: &str, dir: &Path, json: bool, against: Option<&Path>) -> anyhow::Result<ExitCode> {
    if chomp_tables::fewrow::is_few_row_dir(dir) || against.is_some_and(chomp_tables::fewrow::is_few_row_manifest) {
        return crate::fewrow::query(position, dir, json, against);
    }
    let p: Position = position.parse().with_context(|| format!("invalid position {position:?}"))?;
    let tables = match against {
        Some(pinned) => Tables::open_against(dir, pinned, chomp_tables::read::DEFAULT_CACHE_BYTES)?,
        None => open(dir)?,
    };
    let answer = tables.answer(&p)?;
    if json {
        println!("{}", serde_json::to_string(&answer).expect("plain data"));
    } else {
        println!("position: {p} ({})", plural(p.tiles(), "tile"));
        println!("outcome:  {} for the player to move", answer.outcome.as_str());
        match answer.grundy {
            Some(g) => println!("grundy:   {g} (misère), {} (normal play)", g as u32 + 1),
            None => println!("grundy:   not computed at this level"),
        }
        let list: Vec<String> = answer.winning_moves.iter().map(|[r, c]| format!("({r},{c})")).collect();
        println!("winning moves: {}", if list.is_empty() { "none".to_string() } else { list.join(" ") });
    }
    Ok(ExitCode::SUCCESS)
}

pub fn convert(src: &Path, out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let (mut read, mut written) = (0u64, 0u64);
    // Each level written is checked as a run checks it (the same record in the manifest).
    let mut checker = Checker::new(CHECK_SAMPLES);
    let mut check = |m: &Manifest, n: u32, losses: &[u64]| checker.check(out, m, n, losses, &Solo).record(n);
    let on_level = |c: Converted| {
        read += c.source_bytes;
        written += c.bytes;
        if !quiet {
            eprintln!(
                "level {:>4}/{}: {:>14} bytes -> {:>14} bytes ({:.3}x)  checked {}  {:.1} s",
                c.tiles,
                c.levels,
                c.source_bytes,
                c.bytes,
                c.bytes as f64 / c.source_bytes.max(1) as f64,
                c.checked,
                t0.elapsed().as_secs_f64()
            );
        }
    };
    let m = chomp_tables::store::convert::convert(src, out, on_level, &mut check)?;
    if !quiet {
        eprintln!(
            "converted {} levels of {} to format 3 in {}: {} files, tables {} -> {} bytes this run ({:.1} s)",
            m.levels_complete,
            src.display(),
            out.display(),
            m.files.len(),
            read,
            written,
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn fetch(manifest: &Path, from: &str, out: &Path, opts: &chomp_tables::fetch::FetchOptions, quiet: bool) -> anyhow::Result<ExitCode> {
    use chomp_tables::fetch as get;
    use chomp_tables::report::Progress;
    let t0 = Instant::now();
    // Ctrl-C ends the fetch at once and says what stays: the manifest is
    // not written, verified files keep their names, partial files (`NAME.chomp-fetch.part`) resume.
    let shown = out.display().to_string();
    let _ = ctrlc::set_handler(move || {
        eprintln!("interrupted: {shown} keeps the files verified so far and the partial ones (*.chomp-fetch.part), but no manifest: run the same command again to resume");
        std::process::exit(130);
    });
    let progress = Progress::default();
    let result = crate::progress::watch("fetched", crate::progress::Unit::Bytes, &progress.done, &progress.total, quiet, || {
        get::fetch(manifest, from, out, opts, &progress)
    });
    let r = result?;
    println!(
        "fetched {} into {}: {} files ({} already there), {} bytes transferred, every file's SHA-256 equal to the manifest ({:.1} s)",
        manifest.display(),
        out.display(),
        r.files,
        r.present,
        r.transferred,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn ichomp(quadrants: &[String], dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut qs: [Option<Position>; 4] = Default::default();
    for (i, q) in quadrants.iter().enumerate() {
        if q.trim() != "-" {
            qs[i] = Some(q.parse().with_context(|| format!("invalid quadrant {} {q:?}", i + 1))?);
        }
    }
    let tables = open(dir)?;
    let a = ichomp::analyze(&tables, &qs)?;
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

/// `chomp openings`: every rectangle of a table directory, one rectangle
/// from it, or (no directory) one box solved in memory (with `all`, every
/// rectangle inside it; a box far beyond this machine is refused unless
/// `force`, see [`box_estimate`]).
pub fn openings(dir: Option<&Path>, rect: Option<(u32, u32)>, all: bool, force: bool, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let openings = match (dir, rect) {
        (Some(dir), None) => rect::rectangle_openings(&open(dir)?)?,
        (Some(dir), Some((r, c))) if all => {
            let t = open(dir)?;
            let mut v = Vec::new();
            for (a, b) in (1..=r).flat_map(|a| (1..=c).map(move |b| (a, b))) {
                v.push(rect::rectangle_opening(&t, a, b)?);
            }
            v
        }
        (Some(dir), Some((r, c))) => vec![rect::rectangle_opening(&open(dir)?, r, c)?],
        (None, Some((r, c))) => {
            let universe = chomp_tables::Universe::boxed(r, c);
            let progress = chomp_tables::report::Progress::default();
            let label = format!("solving the {r}x{c} box");
            let words = chomp_tables::solve::uses_word_sieve(&universe);
            box_estimate(&label, &universe, words, force)?;
            let unit = if words { crate::progress::Unit::Scan } else { crate::progress::Unit::Share };
            let solved = crate::progress::watch(&label, unit, &progress.done, &progress.total, false, || {
                chomp_tables::solve::solve_in_memory_watched(&universe, &progress)
            })
            .with_context(|| label.clone())?;
            if all {
                solved.rectangle_openings()
            } else {
                vec![solved.rectangle_opening(r, c).expect("the box itself")]
            }
        }
        (None, None) => bail!("openings needs --tables or --rows and --cols"),
    };
    write_or_print(&rect::openings_csv(&openings), out)
}

/// Positions per second and thread of a box solved in memory by the word
/// sieve, measured on the project's machine (10x42, 1.58e10 positions, in
/// about 4 min on 2 threads; 10x30 and 8x44 agree within 25 %).
const BOX_POSITIONS_PER_THREAD_SECOND: f64 = 3.4e7;

/// Says, before a box that takes more than a few seconds is solved in
/// memory, how long it will take and how much memory it holds; refuses, in
/// one line naming what it needs and what this machine has, a box whose
/// mark bits exceed the memory available (the solve would stop there) or,
/// unless `force`, whose estimate is more than 30 days.
fn box_estimate(label: &str, universe: &chomp_tables::Universe, words: bool, force: bool) -> anyhow::Result<()> {
    use chomp_tables::solve::memory::{available_memory, human_bytes};
    let Ok(ranking) = chomp_tables::Ranking::new(universe) else { return Ok(()) };
    let positions: u64 = (1..=ranking.max_tiles()).map(|n| ranking.size(n)).sum();
    let threads = rayon::current_num_threads();
    // The level sieve (a box too large for the word sieve's bit set) is at least as slow.
    let seconds = positions as f64 / BOX_POSITIONS_PER_THREAD_SECOND / threads as f64;
    let (sieve, bytes) = if words {
        ("the word sieve", positions / 8)
    } else {
        ("the level sieve, slower", chomp_tables::solve::in_memory::mark_bytes(&ranking))
    };
    let (bits, about) = (human_bytes(bytes), crate::solve::human_duration(seconds));
    // One line that names what the box needs, before anything is mapped.
    let beyond = |why: String| {
        format!("{label}: far beyond this machine: it needs {bits} of mark bits ({positions} positions, {sieve}) and about {about} on {threads} threads, {why}")
    };
    if let Some(room) = available_memory().filter(|&room| bytes > room) {
        bail!(beyond(format!("where this machine has {} available; not started", human_bytes(room))));
    }
    if seconds > crate::solve::FAR_SECONDS && !force {
        bail!(beyond("more than 30 days; not started (--force starts it anyway)".into()));
    }
    if seconds >= 10.0 {
        progress!("{label}: {positions} positions, {bits} of mark bits ({sieve}): about {about} on {threads} threads");
    }
    Ok(())
}

/// `chomp boxes`: positions and losses of every box inside a box's tables.
pub fn boxes(dir: &Path, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let t = open(dir)?;
    let ranking = t.ranking();
    let top = t.manifest().levels_complete;
    let (done, total) = (AtomicU64::new(0), AtomicU64::new((1..=top).map(|n| ranking.size(n)).sum()));
    let counts = crate::progress::watch("reading the levels", crate::progress::Unit::Share, &done, &total, false, || {
        rect::table_box_counts_with(&t, |n| {
            done.fetch_add(ranking.size(n), Ordering::Relaxed);
        })
    })?;
    write_or_print(&rect::boxes_csv(&counts), out)
}

fn write_or_print(csv: &str, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    match out {
        Some(path) => write_atomic(path, csv.as_bytes())?,
        None => print!("{csv}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn verify_against(dir: &Path, manifest: &Path) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let r = if chomp_tables::fewrow::is_few_row_manifest(manifest) {
        chomp_tables::fewrow::against(dir, manifest)?
    } else {
        check::against(dir, manifest)?
    };
    for (what, list) in [("missing", &r.missing), ("changed", &r.changed), ("extra", &r.extra)] {
        for f in list {
            eprintln!("{what}: {}", dir.join(f).display());
        }
    }
    if r.identical() {
        println!(
            "identical: {} holds exactly the {} files ({} bytes) of {} ({:.1} s)",
            dir.display(),
            r.equal,
            r.bytes,
            manifest.display(),
            t0.elapsed().as_secs_f64()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "DIFFERENT: {} of {}: {} missing, {} changed, {} extra; {} files equal ({:.1} s)",
            dir.display(),
            manifest.display(),
            r.missing.len(),
            r.changed.len(),
            r.extra.len(),
            r.equal,
            t0.elapsed().as_secs_f64()
        );
        Ok(ExitCode::from(1))
    }
}

/// `verify --full --dry-run`: what the proof will cost (the estimate of a
/// run of the directory's plan, which it repeats, without the disk).
pub fn verify_dry_run(dir: &Path, max_memory: Option<u64>) -> anyhow::Result<ExitCode> {
    use chomp_tables::solve::memory;
    let m = chomp_tables::TableDir::new(dir).read_manifest()?;
    let plan = chomp_tables::Plan::new(m.universe, m.grundy_max_tiles);
    let ranking = chomp_tables::Ranking::new(&m.universe)?;
    let hold = memory::holding(max_memory, false, &chomp_tables::cluster::Solo);
    let threads = rayon::current_num_threads();
    let est: Vec<_> = memory::preflight(&ranking, &plan, 1, threads, hold).into_iter().filter(|e| e.tiles <= m.levels_complete).collect();
    let seconds: f64 = est.iter().map(|e| e.seconds).sum();
    let peak = est.iter().map(|e| e.memory).max().unwrap_or(0);
    println!(
        "the proof of levels 1 to {} on {threads} threads: about {}, peak memory {} (rough: the estimate of the run it repeats)",
        m.levels_complete,
        crate::solve::human_duration(seconds),
        memory::human_bytes(peak)
    );
    Ok(ExitCode::SUCCESS)
}

/// `verify --full`: prove every completed level from the smaller ones.
pub struct Proof {
    /// Most bytes of mark bits (windows beyond).
    pub max_memory: Option<u64>,
}

/// Under MPI, process 0 checks and reports; with `--full` every process
/// takes its share of the proof (process 0 says whether it starts: the
/// checks found nothing).
pub fn verify(
    dir: &Path,
    samples: u64,
    seed: u64,
    levels: RangeInclusive<u32>,
    allow_incomplete: bool,
    proof: Option<Proof>,
    comm: &dyn chomp_tables::cluster::Comm,
) -> anyhow::Result<ExitCode> {
    use chomp_tables::solve::prove::prove_on;
    let t0 = Instant::now();
    let several = comm.processes() > 1;
    // Process 0's word to the others: whether the proof starts.
    let start_proof = |go: bool| comm.all_gather(&[go as u8])[0] == [1];
    if several && comm.process() != 0 {
        if let Some(proof) = &proof {
            if start_proof(false) {
                // Process 0 reports the outcome, which every process shares.
                let _ = prove_on(dir, proof.max_memory, comm, |_| {});
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let checked = check::verify_with(dir, samples, seed, levels.clone(), false);
    if several && proof.is_some() {
        // Tells the others whether the proof starts; if not, they stop, and the report below says why.
        let _ = start_proof(checked.as_ref().is_ok_and(|r| r.failures.is_empty()));
    }
    let mut report = checked?;
    let mut proven = None;
    if let (Some(proof), true) = (&proof, report.failures.is_empty()) {
        let started = Instant::now();
        let result = prove_on(dir, proof.max_memory, comm, |l| {
            let values = if l.grundy { " and Grundy values" } else { "" };
            eprintln!(
                "proof: level {:>3}/{}: {} positions, {} losses{values} as the smaller levels decide ({:.2} s)",
                l.tiles, l.of, l.positions, l.losses, l.seconds
            );
        });
        match result {
            Ok(levels) => proven = Some((levels, started.elapsed().as_secs_f64())),
            Err(e) => report.failures.push(e),
        }
    }
    for f in &report.failures {
        eprintln!("FAIL {f}");
    }
    let incomplete = !report.complete && !allow_incomplete;
    let unsampled = samples > 0 && report.sampled_levels.is_none();
    let verdict = if !report.failures.is_empty() {
        "FAILED"
    } else if incomplete {
        "INCOMPLETE"
    } else if unsampled {
        "NOTHING SAMPLED"
    } else {
        "ok"
    };
    let mut sampled = match (&report.sampled_levels, report.full_losses) {
        (_, Some(losses)) => format!(
            "{} positions checked against their children (every loss: {losses}; every Grundy value: {})",
            report.samples, report.full_values
        ),
        (Some(levels), None) => format!(
            "{} positions checked against their children ({} in each of levels {} to {})",
            report.samples,
            report.per_level,
            levels.start(),
            levels.end()
        ),
        (None, None) => format!("{} positions checked against their children", report.samples),
    };
    if let Some((levels, seconds)) = proven {
        sampled.push_str(&format!(", levels 1 to {levels} proven from the smaller ones ({seconds:.1} s)"));
    }
    println!(
        "{verdict}: {} files checksummed, {} tables decoded, {sampled}, {} problem{} ({:.1} s)",
        report.files,
        report.tables,
        report.failures.len(),
        if report.failures.len() == 1 { "" } else { "s" },
        t0.elapsed().as_secs_f64()
    );
    if !report.failures.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if unsampled {
        let range = match *levels.end() {
            u32::MAX => format!("at or above {} tiles", levels.start()),
            end => format!("between {} and {end} tiles", levels.start()),
        };
        bail!("no completed level lies {range} ({}): nothing was sampled", chomp_tables::read::completed_levels(report.levels_complete));
    }
    if incomplete {
        bail!(
            "{}: the run is incomplete ({} of {} levels done); run the same command again to finish it, or pass --allow-incomplete to accept the levels done",
            dir.display(),
            report.levels_complete,
            report.levels_planned
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The level statistics of several runs, merged, and the universe that names them.
fn merged_levels(dirs: &[PathBuf]) -> anyhow::Result<(Vec<chomp_tables::report::LevelStats>, chomp_tables::Universe)> {
    let mut runs = Vec::new();
    let mut universe = None;
    for dir in dirs {
        let m = chomp_tables::TableDir::new(dir).read_manifest()?;
        let tile_run = m.universe.rows.is_none() && m.universe.cols.is_none();
        if dirs.len() > 1 && !tile_run {
            bail!("{}: only tile-count runs (no row or column bound) can be merged", dir.display());
        }
        universe.get_or_insert(m.universe);
        runs.push((dir.display().to_string(), m.levels));
    }
    let levels = summary::merge_levels(&runs).map_err(anyhow::Error::msg)?;
    let universe = if dirs.len() > 1 { chomp_tables::Universe::tiles(levels.len() as u32) } else { universe.expect("one directory") };
    Ok((levels, universe))
}

pub fn plot(dirs: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    let (levels, universe) = merged_levels(dirs)?;
    out_dir(out)?;
    for path in plot::plot_all(&levels, &universe, out)? {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `chomp plot --openings FILE`: the openings map of a CSV.
pub fn plot_openings(csv: &Path, out: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(csv).with_context(|| csv.display().to_string())?;
    let openings = rect::parse_openings_csv(&text).map_err(anyhow::Error::msg).with_context(|| csv.display().to_string())?;
    if openings.is_empty() {
        bail!("{}: no rectangles", csv.display());
    }
    let (r, c) = (openings.iter().map(|o| o.rows).max().unwrap_or(1), openings.iter().map(|o| o.cols).max().unwrap_or(1));
    for path in plot::plot_openings(&openings, &format!("to {r}×{c}"), out)? {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `chomp plot --census FILE`: the thin rectangles' first winning moves.
pub fn plot_census(csv: &Path, out: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(csv).with_context(|| csv.display().to_string())?;
    let openings = rect::parse_openings_csv(&text).map_err(anyhow::Error::msg).with_context(|| csv.display().to_string())?;
    if !openings.iter().any(|o| (3..=10).contains(&o.rows.min(o.cols)) && o.rows.max(o.cols) > 10) {
        bail!("{}: no rectangle of 3 to 10 rows and more than 10 columns", csv.display());
    }
    let openings: Vec<_> = openings.into_iter().map(|o| if o.rows > o.cols { o.transposed() } else { o }).collect();
    for path in plot::plot_census(&openings, out)? {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn summary(dirs: &[PathBuf], out: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let (levels, _) = merged_levels(dirs)?;
    let grundy = levels.iter().any(|l| l.grundy_histogram.is_some());
    let files = chomp_tables::TableDir::summary_files(&levels, grundy);
    if !force {
        refuse_to_shrink(out, files.iter().map(|(n, t)| (*n, t.as_str())), summary_tiles, "levels the runs read")?;
    }
    out_dir(out)?;
    for (name, text) in files {
        let path = out.join(name);
        write_atomic(&path, text.as_bytes())?;
        println!("wrote {} ({} levels)", path.display(), levels.len());
    }
    if let Some(t) = summary::ratio_trend(&levels, plot::TREND_FROM) {
        println!(
            "conjecture ratio, least-squares line over levels {} to {}: slope {:.3e} ± {:.1e} per tile (1 s.e.), {:.5} at {} tiles",
            t.from,
            t.to,
            t.slope,
            t.slope_error,
            t.at(t.to as f64),
            t.to
        );
    } else if !levels.is_empty() {
        println!("conjecture ratio: no trend line (it is fitted from {} tiles on, with 3 levels at least)", plot::TREND_FROM);
    }
    Ok(ExitCode::SUCCESS)
}

/// Creates the output folder `out` (and its parents), with a one-line
/// error that says what is wrong: a file where the folder should be, or
/// the system's reason.
pub fn out_dir(out: &Path) -> anyhow::Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {}: a file, not a directory", out.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create the directory {}", out.display()))
}

/// `chomp oeis`: the b-files of merged summary.csv files.
pub fn oeis(files: &[PathBuf], out: &Path, force: bool) -> anyhow::Result<ExitCode> {
    use chomp_tables::report::oeis;
    let mut runs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).with_context(|| f.display().to_string())?;
        let levels = oeis::parse_summary_csv(&text).map_err(anyhow::Error::msg).with_context(|| f.display().to_string())?;
        runs.push((f.display().to_string(), levels));
    }
    let levels = summary::merge_levels(&runs).map_err(anyhow::Error::msg)?;
    let bfiles = oeis::bfiles(&levels).map_err(anyhow::Error::msg)?;
    if !force {
        refuse_to_shrink(out, bfiles.iter().map(|(n, t)| (*n, t.as_str())), bfile_terms, "terms the summaries read")?;
    }
    out_dir(out)?;
    for (name, text) in &bfiles {
        let path = out.join(name);
        write_atomic(&path, text.as_bytes())?;
        let n = bfile_terms(text);
        println!("wrote {} (n = {}…{})", path.display(), n.first().unwrap_or(&0), n.last().unwrap_or(&0));
    }
    Ok(ExitCode::SUCCESS)
}

/// The `n` of a b-file's terms (`n a(n)` lines).
fn bfile_terms(text: &str) -> std::collections::BTreeSet<u32> {
    text.lines().filter_map(|l| l.split_whitespace().next()?.parse().ok()).collect()
}

/// Refuses, before any file is written, to replace a file in `out` whose
/// keys (`keys`: its levels, its terms) the new text lacks: a summary of
/// shorter runs would silently drop published figures.
fn refuse_to_shrink<'t>(
    out: &Path,
    files: impl Iterator<Item = (&'t str, &'t str)>,
    keys: fn(&str) -> std::collections::BTreeSet<u32>,
    what: &str,
) -> anyhow::Result<()> {
    for (name, text) in files {
        let path = out.join(name);
        let Ok(old) = std::fs::read_to_string(&path) else { continue };
        let (old, new) = (keys(&old), keys(text));
        let lost = old.difference(&new).count();
        if lost > 0 {
            bail!(
                "{}: holds {lost} {what} do not (it has {}, the new one {}): refusing to shrink it (--force overwrites)",
                path.display(),
                old.len(),
                new.len()
            );
        }
    }
    Ok(())
}

/// The tile counts (first column) of a summary file: CSV rows, or the
/// `"tiles"` fields of summary.json.
fn summary_tiles(text: &str) -> std::collections::BTreeSet<u32> {
    // summary.json: an array of levels, each with its "tiles".
    if let Ok(serde_json::Value::Array(levels)) = serde_json::from_str::<serde_json::Value>(text) {
        return levels.iter().filter_map(|l| l.get("tiles")?.as_u64()?.try_into().ok()).collect();
    }
    // The CSV files: a header line, then the tile count first on every row.
    text.lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect()
}

pub fn bench_probe(dir: &Path) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let tables = open(dir)?;
    let m = tables.manifest();
    if m.levels_complete == 0 {
        bail!("{}: no completed level to probe", dir.display());
    }
    let top = m.levels_complete;
    let mut rng = SplitMix(42);
    let at_top = |rng: &mut SplitMix, n: u32| tables.ranking().unrank(n, rng.below(tables.ranking().size(n))).expect("rank below size");
    // 1. One-shot queries, as a user runs them: a fresh `chomp query` process
    //    per top-level position (its winning moves included), cold or warm
    //    page cache as the machine has it; wall time and peak RSS.
    let exe = std::env::current_exe()?;
    let mut walls = Vec::new();
    for _ in 0..10 {
        let p = at_top(&mut rng, top);
        let t = Instant::now();
        let out = std::process::Command::new(&exe)
            .args(["query", &p.to_string(), "--tables"])
            .arg(dir)
            .arg("--json")
            .output()
            .with_context(|| format!("cannot run {}", exe.display()))?;
        walls.push(t.elapsed().as_secs_f64());
        if !out.status.success() {
            bail!("chomp query {p}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
    }
    let peak_kib = children_peak_kib();
    walls.sort_by(f64::total_cmp);
    println!(
        "probe: {} ({top} levels, format {}): one-shot `chomp query` of a {top}-tile position with its moves: median {:.1} ms, max {:.1} ms, peak RSS {} KiB (10 processes)",
        dir.display(),
        m.format_version,
        walls[walls.len() / 2] * 1e3,
        walls[walls.len() - 1] * 1e3,
        peak_kib.map_or("?".into(), |k| k.to_string())
    );
    // 2. Full answers (outcome, value and every move, checked against each
    //    other) in this process, what the server does per request.
    let t1 = Instant::now();
    let mut lat = Vec::new();
    for _ in 0..2000 {
        let p = at_top(&mut rng, top);
        let t = Instant::now();
        tables.answer(&p)?;
        lat.push(t.elapsed().as_secs_f64());
    }
    lat.sort_by(f64::total_cmp);
    let (cache, limit) = tables.cache_usage();
    println!(
        "probe: full answers of {} random {top}-tile positions: p50 {:.2} ms, p99 {:.2} ms, {:.0} answers/s on one thread; block cache {} of {} bytes",
        lat.len(),
        lat[lat.len() / 2] * 1e3,
        lat[lat.len() * 99 / 100] * 1e3,
        lat.len() as f64 / t1.elapsed().as_secs_f64(),
        cache,
        limit
    );
    // 3. Single look-ups of random positions of every level.
    let sample: Vec<Position> = (0..100_000)
        .map(|_| {
            let n = 1 + rng.below(top as u64) as u32;
            at_top(&mut rng, n)
        })
        .collect();
    // First pass loads and checks what it touches (the cost of opening); the second is the steady state.
    let t2 = Instant::now();
    for p in &sample {
        tables.outcome(p)?;
        tables.grundy(p)?;
    }
    let load = t2.elapsed().as_secs_f64();
    let t3 = Instant::now();
    let mut losses = 0;
    for p in &sample {
        losses += (tables.outcome(p)? == Outcome::Loss) as u32;
        tables.grundy(p)?;
    }
    let per = t3.elapsed().as_secs_f64() / sample.len() as f64;
    println!("probe: first touch of {} random positions of every level {:.3} s", sample.len(), load);
    println!("probe: {:.2} µs per position (outcome + Grundy value, {} positions, {losses} losses)", per * 1e6, sample.len());
    println!("probe: {:.1} s in all", t0.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

/// The largest peak RSS of the child processes waited for so far, in KiB.
fn children_peak_kib() -> Option<u64> {
    // SAFETY: getrusage fills the struct we pass it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } == 0).then_some(usage.ru_maxrss as u64)
}
