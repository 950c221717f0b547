//! The computing commands: solve and run (with progress, preflight and
//! Ctrl-C), and the engine bench.

use crate::args::RunFlags;
use anyhow::{bail, Context};
use chomp_tables::cluster::Comm;
use chomp_tables::solve::memory::{self, human_bytes, LevelEstimate};
use chomp_tables::solve::{self, Event, Options, Plan, ProcessWork};
use chomp_tables::Universe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// A run whose estimate exceeds this prints its preflight before starting.
const PREFLIGHT_SECONDS: f64 = 60.0;

/// The level in progress and the levels the manifest lists, for the Ctrl-C message.
static CURRENT_LEVEL: AtomicU32 = AtomicU32::new(0);
static SAVED_LEVELS: AtomicU32 = AtomicU32::new(0);

/// The exit status of a run stopped on request after a checkpoint (75,
/// `EX_TEMPFAIL`: run it again): a batch script requeues the job on it.
pub const STOPPED_STATUS: u8 = 75;

/// Set by `SIGTERM` and `SIGUSR1`: the run stops at the end of the level in
/// progress, after a checkpoint ([`solve::Options::stop`]).
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

extern "C" fn request_stop(_: libc::c_int) {
    if let Some(stop) = STOP.get() {
        if stop.swap(true, Ordering::Relaxed) {
            // A second signal: end at once (the last checkpoint is kept).
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(128 + libc::SIGTERM) };
        }
    }
}

/// Makes `SIGTERM` and `SIGUSR1` ask the run to stop at the next level's
/// end (the few-row engine: its next wavefront's), with a checkpoint
/// (Slurm sends them before a time limit or a preemption); returns the
/// flag they set.
pub fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = STOP.get_or_init(Default::default).clone();
    for signal in [libc::SIGTERM, libc::SIGUSR1] {
        // SAFETY: the handler only stores to an atomic (or calls _exit).
        unsafe { libc::signal(signal, request_stop as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    stop
}

pub fn solve(plan: &Plan, out: PathBuf, flags: &RunFlags, comm: &dyn Comm) -> anyhow::Result<ExitCode> {
    let quiet = flags.quiet || !comm.is_root();
    let ranking = plan.validate()?;
    if flags.dry_run {
        // Nothing is written: the estimate starts after the levels a resumable directory holds.
        let mut hold = memory::holding(flags.max_memory, plan.count_moves, comm); // a collective: every process
        let (mut processes, mut per_process) = (comm.processes(), rayon::current_num_threads());
        if let Some(k) = flags.processes {
            if comm.processes() > 1 {
                bail!("--processes prices a plan without MPI processes; under mpiexec the dry run prices the processes it runs on");
            }
            // As many processes, each with --max-memory (else this machine's available memory).
            processes = k as usize;
            per_process = flags.threads.map_or(per_process, |t| t as usize);
            let room = flags.max_memory.or_else(memory::available_memory);
            hold = memory::Holding { processes, window: room.map(|r| r / 2), ..hold };
        }
        if comm.is_root() {
            let fresh = plan.manifest(&ranking);
            let known = chomp_tables::TableDir::new(&out).read_manifest().ok().filter(|m| !flags.force && m.same_job(&fresh));
            let resumed = known.unwrap_or(fresh);
            let threads = per_process * processes;
            let first = resumed.levels_complete + 1;
            let est = memory::preflight(&ranking, plan, first, threads, hold);
            print_preflight(&est, threads, true);
            let peaks = memory::process_peaks(&ranking, plan, first, per_process, hold);
            if processes > 1 {
                let list: Vec<String> = peaks.iter().map(|&b| human_bytes(b)).collect();
                progress!("  peak memory of each of the {processes} processes ({per_process} threads each): {}", list.join(", "));
            }
            if let Some(path) = &flags.report_json {
                let json = dry_run_json(plan, &est, &peaks, per_process, hold);
                chomp_tables::store::write_atomic(path, json.as_bytes())?;
            }
            // The run's own checks before it starts, so that the dry run tells
            // (a plan priced for other machines is not held to this one's).
            let refused = beyond_machine(&est, flags.max_memory, &out, first > 1);
            if let (Some(why), None, false) = (refused, flags.processes, flags.force || flags.ignore_estimate) {
                bail!("the run would be refused: {why}");
            }
            if let Some(why) = memory::first_shortfall(&ranking, plan, &resumed, flags.max_memory, hold) {
                bail!("the run would stop before it starts: {why}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !flags.force && !flags.ignore_estimate {
        // An absurd job (a typo in max_tiles) is refused in one line before anything is written.
        let hold = memory::holding(flags.max_memory, plan.count_moves, comm); // a collective: every process
        if comm.is_root() {
            let fresh = plan.manifest(&ranking);
            let known = chomp_tables::TableDir::new(&out).read_manifest().ok().filter(|m| !flags.force && m.same_job(&fresh));
            let first = known.map_or(1, |m| m.levels_complete + 1);
            let threads = rayon::current_num_threads() * comm.processes();
            if let Some(why) = beyond_machine(&memory::preflight(&ranking, plan, first, threads, hold), flags.max_memory, &out, first > 1) {
                bail!("{why}");
            }
        }
    }
    if comm.processes() == 1 {
        // Ctrl-C ends the run at once; the levels of its last checkpoint
        // are kept and resume. What is saved is what the manifest on disk
        // lists: a checkpoint is written before its event reaches
        // SAVED_LEVELS, so a Ctrl-C between the two reads the disk. Before
        // the run has opened its directory (no level started, nothing
        // resumed) a manifest there may still be one --force clears.
        let (dir, fresh) = (chomp_tables::TableDir::new(&out), plan.manifest(&ranking));
        let _ = ctrlc::set_handler(move || {
            let n = CURRENT_LEVEL.load(Ordering::Relaxed);
            let counted = SAVED_LEVELS.load(Ordering::Relaxed);
            let opened = n > 0 || counted > 0;
            let on_disk = dir.read_manifest().ok().filter(|m| opened && m.same_job(&fresh)).map(|m| m.levels_complete);
            let saved = on_disk.unwrap_or(counted).max(counted);
            // A Ctrl-C between a level's checkpoint and the start of the
            // next finds the level just saved still current: it is after it.
            let at = match n {
                0 => String::new(),
                n if saved >= n => format!(" after level {saved}"),
                n => format!(" in level {n}"),
            };
            match saved {
                0 => progress!("interrupted{at}, before the first checkpoint; run the same command again to start over"),
                saved => progress!("interrupted{at}; levels 1-{saved} are saved: run the same command again to resume"),
            }
            std::process::exit(130);
        });
    }
    if !quiet && !flags.force {
        let held = chomp_tables::TableDir::new(&out).read_manifest().ok();
        if held.is_some_and(|m| m.complete && m.same_job(&plan.manifest(&ranking))) {
            progress!("{}: this job is already complete (`chomp verify` checks its tables; --force computes it again)", out.display());
        }
    }
    let t0 = Instant::now();
    let opts = Options {
        out: out.clone(),
        force: flags.force,
        max_memory: flags.max_memory,
        work_dir: flags.work_dir.clone(),
        check_samples: flags.check_samples,
        stop: Some(stop_on_signals()),
        ..Options::new(out.clone())
    };
    // What the JSON report needs: the levels computed and every process's work.
    let (mut levels, mut processes) = (Vec::new(), Vec::new());
    let manifest = solve::run_on(plan, &opts, comm, |e| {
        match e {
            Event::Level(r) if flags.report_json.is_some() => levels.push(r.clone()),
            Event::Processes(w) => processes = w.clone(),
            Event::Started { tiles } => CURRENT_LEVEL.store(*tiles, Ordering::Relaxed),
            Event::Resumed { levels_complete } | Event::Checkpointed { levels_complete } => {
                SAVED_LEVELS.store(*levels_complete, Ordering::Relaxed)
            }
            _ => {}
        }
        if !quiet {
            print_event(e);
        }
    })?;
    if let (Some(path), true) = (&flags.report_json, comm.is_root()) {
        let json = report_json(plan, &out, t0.elapsed().as_secs_f64(), &levels, &processes);
        chomp_tables::store::write_atomic(path, json.as_bytes())?;
    }
    if !quiet {
        let positions: u64 = manifest.levels.iter().map(|l| l.positions).sum();
        let losses: u64 = manifest.levels.iter().map(|l| l.losses).sum();
        progress!(
            "done: {} levels ({}), {positions} positions, {losses} losses, {:.1} s; tables in {}",
            manifest.levels_complete,
            plan.universe.describe(),
            t0.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The end-of-run report as JSON (`--report-json`).
fn report_json(plan: &Plan, out: &std::path::Path, wall_seconds: f64, levels: &[solve::LevelReport], processes: &[ProcessWork]) -> String {
    let levels: Vec<_> = levels
        .iter()
        .map(|r| {
            serde_json::json!({
                "tiles": r.stats.tiles,
                "positions": r.stats.positions,
                "losses": r.stats.losses,
                "sieve_seconds": r.sieve_seconds,
                "grundy_seconds": r.grundy_seconds,
                "marks": r.marks,
                "lookups": r.lookups,
                "checked": r.checked,
                "check_seconds": r.check_seconds,
                "largest_gather_bytes": r.largest_gather_bytes,
                "gather_rounds": r.gather_rounds,
            })
        })
        .collect();
    let report = serde_json::json!({
        "universe": plan.universe.describe(),
        "max_tiles": plan.universe.tiles,
        "grundy_max_tiles": plan.grundy_max_tiles,
        "out": out.display().to_string(),
        "wall_seconds": wall_seconds,
        "threads_per_process": rayon::current_num_threads(),
        "levels": levels,
        "processes": processes,
    });
    serde_json::to_string_pretty(&report).expect("a JSON value") + "\n"
}

/// The dry run's plan as JSON (`--dry-run --report-json`): the levels'
/// estimates, the windows, and each process's estimated peak.
fn dry_run_json(plan: &Plan, est: &[LevelEstimate], peaks: &[u64], per_process: usize, hold: memory::Holding) -> String {
    let levels: Vec<_> = est
        .iter()
        .map(|e| {
            serde_json::json!({
                "tiles": e.tiles,
                "positions": e.positions,
                "seconds": e.seconds,
                "memory_bytes": e.memory,
                "disk_bytes": e.disk,
                "repush_seconds": e.repush_seconds,
                "window_end": e.window_end,
            })
        })
        .collect();
    let windows: Vec<_> = est.iter().filter_map(|e| e.window_end.map(|end| serde_json::json!([e.tiles, end]))).collect();
    let processes: Vec<_> =
        peaks.iter().enumerate().map(|(i, &b)| serde_json::json!({ "process": i, "estimated_peak_kib": b.div_ceil(1024) })).collect();
    let report = serde_json::json!({
        "dry_run": true,
        "universe": plan.universe.describe(),
        "max_tiles": plan.universe.tiles,
        "grundy_max_tiles": plan.grundy_max_tiles,
        "processes_count": peaks.len(),
        "threads_per_process": per_process,
        "window_bytes": hold.window,
        "estimated_seconds": est.iter().map(|e| e.seconds).sum::<f64>(),
        "repush_seconds": est.iter().map(|e| e.repush_seconds).sum::<f64>(),
        "disk_bytes": est.iter().map(|e| e.disk).sum::<u64>(),
        "windows": windows,
        "levels": levels,
        "processes": processes,
    });
    serde_json::to_string_pretty(&report).expect("a JSON value") + "\n"
}

fn print_preflight(est: &[LevelEstimate], threads: usize, every_level: bool) {
    let Some(last) = est.last() else {
        progress!("estimate: nothing left to compute");
        return;
    };
    let total: f64 = est.iter().map(|e| e.seconds).sum();
    let peak = est.iter().map(|e| e.memory).max().unwrap_or(0);
    let disk: u64 = est.iter().map(|e| e.disk).sum();
    let line = |e: &LevelEstimate| {
        format!(
            "  level {:>3}: {:>14} positions {:>9.1} s {:>12} memory {:>12} disk",
            e.tiles,
            e.positions,
            e.seconds,
            human_bytes(e.memory),
            human_bytes(e.disk)
        )
    };
    progress!(
        "estimate for levels {} to {} on {threads} threads: {}, peak memory {}, disk {} (rough: from the conjectured loss density and this engine's measured speed)",
        est[0].tiles,
        last.tiles,
        human_duration(total),
        human_bytes(peak),
        human_bytes(disk)
    );
    let windows: Vec<_> = est.iter().filter_map(|e| e.window_end.map(|end| (e.tiles, end, e.repush_seconds))).collect();
    if windows.len() > 1 || windows.iter().any(|w| w.2 > 0.0) {
        let repush: f64 = windows.iter().map(|w| w.2).sum();
        let list: Vec<String> = windows.iter().map(|&(from, to, _)| format!("{from}-{to}")).collect();
        progress!(
            "  in {} window{} of mark bits (levels {}); opening {} pushes every decided loss into it again: {} of the estimate",
            windows.len(),
            if windows.len() == 1 { "" } else { "s" },
            list.join(", "),
            if windows.len() == 1 { "it" } else { "each after level 1" },
            human_duration(repush)
        );
    }
    for e in est {
        if every_level || e.tiles % 10 == 0 || e.tiles == last.tiles {
            progress!("{}", line(e));
        }
    }
}

/// Longest estimate a run (or `chomp openings` of a box) starts without
/// `--force`: 30 days.
pub(crate) const FAR_SECONDS: f64 = 30.0 * 86400.0;

/// Why a job's estimate is far beyond this machine, in one line naming what
/// it needs and what the machine has: more than [`FAR_SECONDS`], more than
/// four times the memory it may use (`--max-memory`, else what is
/// available), or more than twice the disk free where `out` will be (the
/// margins leave room for the estimate's roughness). `None` for any job
/// this machine could finish. The line ends with the flag that starts it
/// anyway: `--force`, or where the run would resume levels already
/// computed, `--ignore-estimate` (`--force` would start it over).
pub(crate) fn beyond_machine(est: &[LevelEstimate], max_memory: Option<u64>, out: &Path, resuming: bool) -> Option<String> {
    let seconds: f64 = est.iter().map(|e| e.seconds).sum();
    let peak = est.iter().map(|e| e.memory).max().unwrap_or(0);
    let disk: u64 = est.iter().map(|e| e.disk).sum();
    let room = memory::available_memory();
    let free = free_disk(out);
    let mut short = Vec::new();
    if seconds > FAR_SECONDS {
        short.push("more than 30 days".to_string());
    }
    // (With --max-memory the run's own check holds it to that limit, in
    // windows where the levels allow: a small limit is a choice, not a typo.)
    if let Some(room) = room.filter(|&r| peak / 4 > r && max_memory.is_none()) {
        short.push(format!("{} of memory where this machine has {} available", human_bytes(peak), human_bytes(room)));
    }
    if let Some(free) = free.filter(|&f| disk / 2 > f) {
        short.push(format!("{} of disk where {} has {} free", human_bytes(disk), out.display(), human_bytes(free)));
    }
    (!short.is_empty()).then(|| {
        format!(
            "this job is far beyond this machine: it needs about {}, peak memory {} and {} of disk ({}); \
             it was not started ({})",
            human_duration(seconds),
            human_bytes(peak),
            human_bytes(disk),
            short.join("; "),
            if resuming { "--ignore-estimate resumes it anyway; --force starts it over" } else { "--force starts it anyway" }
        )
    })
}

/// Bytes free to this user on the file system that holds `path`, or the
/// nearest folder above it that exists (`None` if none answers).
fn free_disk(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).ok()?;
    let there = abs.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(there.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statvfs.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

pub(crate) fn human_duration(s: f64) -> String {
    if !s.is_finite() {
        "longer than can be counted".into()
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn print_event(e: &Event) {
    match e {
        Event::Estimate { levels, threads } => {
            if levels.iter().map(|e| e.seconds).sum::<f64>() > PREFLIGHT_SECONDS {
                print_preflight(levels, *threads, false);
            }
        }
        Event::Resumed { levels_complete } => progress!("resuming after level {levels_complete}"),
        Event::Window { from, to, bytes } => {
            progress!("window: the marks of levels {from}-{to} ({}), then the decided losses pushed into them", memory::human_bytes(*bytes))
        }
        Event::WordSieve { bytes, seconds, losses } => {
            progress!(
                "box sieve over boundary words ({} held): {losses} losses in {seconds:.2} s; writing the levels' tables",
                memory::human_bytes(*bytes)
            )
        }
        Event::Unchecked { samples: 0, .. } => {
            progress!("levels not checked as they are written (--check-samples 0): run `chomp verify` after")
        }
        Event::Unchecked { format, .. } => {
            progress!("levels not checked as they are written: the check reads format-3 tables, these are format {format}; run `chomp verify` after")
        }
        Event::Started { .. } | Event::Checkpointed { .. } => {}
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
            if r.checked > 0 {
                line.push_str(&format!("  checked {} ({:.2} s)", r.checked, r.check_seconds));
            }
            progress!("{line}");
        }
        Event::Processes(work) if work.len() > 1 => {
            for w in work {
                progress!(
                    "process {} (node {}): {} marks pushed, {} parents enumerated, {} positions scanned, {} Grundy values computed, {} child look-ups, {:.1} s working ({:.1} s of CPU), {:.1} s in collectives, {:.1} s CPU, peak memory {} MiB; at the end {} MiB resident, {} MiB its share",
                    w.process,
                    w.node,
                    w.marks,
                    w.enumeration_steps,
                    w.scanned,
                    w.evaluated,
                    w.lookups,
                    w.compute_seconds,
                    w.compute_cpu_seconds,
                    w.wait_seconds,
                    w.cpu_seconds,
                    w.peak_kib / 1024,
                    w.rss_kib / 1024,
                    w.pss_kib / 1024
                );
            }
            progress!(
                "memory at the end: {} MiB resident in all (each node's Grundy files counted once), {} MiB summed over processes",
                work.iter().map(|w| w.pss_kib).sum::<u64>() / 1024,
                work.iter().map(|w| w.rss_kib).sum::<u64>() / 1024
            );
            let busiest = |f: fn(&ProcessWork) -> u64| {
                let total: u64 = work.iter().map(f).sum();
                let max = work.iter().map(f).max().unwrap_or(0);
                if total == 0 {
                    1.0
                } else {
                    max as f64 * work.len() as f64 / total as f64
                }
            };
            progress!(
                "balance (busiest process / mean): marks {:.3}, enumeration {:.3}, scan {:.3}, Grundy look-ups {:.3}",
                busiest(|w| w.marks),
                busiest(|w| w.enumeration_steps),
                busiest(|w| w.scanned),
                busiest(|w| w.lookups)
            );
        }
        Event::Processes(_) => {}
    }
}

pub fn bench(max_tiles: u32, grundy_max_tiles: u32, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let base = dir.unwrap_or_else(std::env::temp_dir);
    if !base.is_dir() {
        bail!("{}: no such directory (--dir must exist)", base.display());
    }
    let out = base.join(format!("chomp-bench-{}", std::process::id()));
    let plan = Plan::new(Universe::tiles(max_tiles), grundy_max_tiles);
    let threads = rayon::current_num_threads();
    // The estimate first, then progress weighted by each level's estimated
    // seconds (not by levels: the last ones take most of the time).
    let ranking = plan.validate()?;
    let hold = memory::holding(None, false, &chomp_tables::cluster::Solo);
    let weights: Vec<u64> =
        memory::preflight(&ranking, &plan, 1, threads, hold).iter().map(|e| (e.seconds * 1e6).max(1.0) as u64).collect();
    let (done, total) = (AtomicU64::new(0), AtomicU64::new(weights.iter().sum()));
    progress!(
        "bench: losses to {max_tiles} tiles, Grundy to {grundy_max_tiles}, {threads} threads: about {} (the dry run's estimate); the figures follow when it ends",
        human_duration(total.load(Ordering::Relaxed) as f64 / 1e6)
    );
    let (mut sieve_s, mut grundy_s, mut positions, mut grundy_positions, mut lookups, mut marks) = (0.0, 0.0, 0u64, 0u64, 0u64, 0u64);
    let (mut check_s, mut checked) = (0.0, 0u64);
    let t0 = Instant::now();
    let result = crate::progress::watch("bench", crate::progress::Unit::Share, &done, &total, false, || {
        solve::run(&plan, &Options::new(out.clone()), |e| {
            if let Event::Level(r) = e {
                done.fetch_add(weights.get(r.stats.tiles as usize - 1).copied().unwrap_or(0), Ordering::Relaxed);
                sieve_s += r.sieve_seconds;
                grundy_s += r.grundy_seconds;
                positions += r.stats.positions;
                marks += r.marks;
                lookups += r.lookups;
                check_s += r.check_seconds;
                checked += r.checked;
                if r.stats.grundy_histogram.is_some() {
                    grundy_positions += r.stats.positions;
                }
            }
        })
    });
    let wall = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    result?;
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
    println!(
        "check:         {check_s:.2} s, {checked} positions checked against their children, {:.2} % of the wall time",
        100.0 * check_s / wall
    );
    println!("peak memory:   {} MiB (VmHWM)", memory::peak_rss_kib() / 1024);
    Ok(ExitCode::SUCCESS)
}

/// `chomp bench --rows R --cols C`: times solving a box in memory (the
/// library call behind `chomp openings --rows R --cols C`, the player and
/// the front ends), `repeat` times; says first about how long that takes
/// and then each solve's time on standard error, and prints the min and median.
pub fn bench_box(rows: u32, cols: u32, repeat: u32) -> anyhow::Result<ExitCode> {
    let universe = Universe::boxed(rows, cols);
    let threads = rayon::current_num_threads();
    let sieve = if solve::uses_word_sieve(&universe) { "the word sieve" } else { "the level sieve" };
    // How long first: the dry run's price of the box (as `chomp solve
    // --rows R --cols C --dry-run` prints it) for each solve.
    let plan = Plan::new(universe, 0);
    let ranking = plan.validate().with_context(|| format!("solving the {rows}x{cols} box"))?;
    let hold = memory::holding(None, false, &chomp_tables::cluster::Solo);
    let each: f64 = memory::preflight(&ranking, &plan, 1, threads, hold).iter().map(|e| e.seconds).sum();
    let seconds = |s: f64| {
        if s < 1.0 {
            format!("{:.1} ms", s * 1e3)
        } else if s < 10.0 {
            format!("{s:.2} s")
        } else {
            human_duration(s)
        }
    };
    progress!(
        "bench: the {rows}x{cols} box in memory ({sieve}), {threads} threads, {repeat} solves: about {} ({} a solve, the dry run's estimate); the figures follow when it ends",
        seconds(each * repeat as f64),
        seconds(each)
    );
    let (mut times, mut last) = (Vec::new(), None);
    for i in 1..=repeat {
        let t0 = Instant::now();
        let solved = solve::solve_in_memory(&universe).with_context(|| format!("solving the {rows}x{cols} box"))?;
        let took = t0.elapsed().as_secs_f64();
        times.push(took);
        progress!("bench: solve {i} of {repeat}, {}", seconds(took));
        last = Some(solved);
    }
    let solved = last.expect("at least one solve");
    let top = solved.ranking().max_tiles();
    let positions: u64 = (1..=top).map(|n| solved.ranking().size(n)).sum();
    let losses: u64 = (1..=top).map(|n| solved.losses(n).len() as u64).sum();
    times.sort_by(f64::total_cmp);
    let (min, median) = (times[0], times[times.len() / 2]);
    println!("bench: the {rows}x{cols} box in memory ({sieve}), {threads} threads, {repeat} solves");
    println!(
        "solve:         min {:.2} ms, median {:.2} ms; {positions} positions, {losses} losses, {:.1} M positions/s/core (min)",
        min * 1e3,
        median * 1e3,
        positions as f64 / min / threads as f64 / 1e6
    );
    println!("peak memory:   {} MiB (VmHWM)", memory::peak_rss_kib() / 1024);
    Ok(ExitCode::SUCCESS)
}
