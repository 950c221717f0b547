//! `chomp solve --engine few-row`: a box with at most eight rows (or
//! columns) solved one entry per prefix, with progress, checkpoints and
//! the level counts of `--report-json`.

use crate::args::RunFlags;
use crate::progress::{watch, Unit};
use anyhow::Context;
use chomp_tables::fewrow::{self, FewRowBox, FewRowDir, FewRowError, Progress, SolveOptions};
use chomp_tables::solve::memory::human_bytes;
use chomp_tables::Universe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The checkpoint a run keeps in its directory (removed once the table is written).
const CHECKPOINT: &str = "fewrow.checkpoint";

/// Table reads a second per thread of the prefix rows not carried, measured
/// at 5×100 and 6×50 (bench/runs/2026-12-07-kvm-2core/fewrow.md) and again
/// at 4×1000 carrying one of its two rows (123 s of CPU against 18.8 s
/// carrying both, about 4.2·10¹⁰ reads more; 2026-12-08-kvm-2core/fewrow-price.md):
/// the dry run's rate.
const READS_PER_SECOND: f64 = 4.0e8;
/// CPU seconds per prefix of three and four rows (which carry their
/// exclusion sets): 22 ns at 4×250, 33 ns at 4×500, 96 ns at 4×1000 (the
/// sets outgrow the caches), about `33 ns · (n / 500)^1.5` that far; then
/// slower growth, 145 ns at 4×3000 (652 s of user CPU for 4.5·10⁹
/// prefixes), about `96 ns · (n / 1000)^0.37`; 33 ns at 3×3000.
fn seconds_per_prefix(k: u32, n: u32) -> f64 {
    let n = f64::from(n);
    if k == 3 {
        33e-9 * (n / 3000.0).max(1.0)
    } else {
        (33e-9 * (n / 500.0).powf(1.5).max(0.66)).min(96e-9 * (n / 1000.0).powf(0.37))
    }
}

/// CPU seconds per prefix and carried row of five to eight rows (the word
/// scans of the carried sets and the copies of their diagonal starts).
const SECONDS_PER_CARRIED_ROW: f64 = 10e-9;

/// What the few-row engine needs for a box: its estimate on `threads`
/// threads, the memory of its table and carried sets, and how many prefix
/// rows it carries within `allowed` bytes.
pub struct Price {
    /// Estimated wall seconds.
    pub seconds: f64,
    /// Bytes of the table and the carried sets (`None`: beyond `u64`).
    pub bytes: Option<u64>,
    /// Prefix rows whose exclusion sets are carried, and the box's prefix rows.
    pub carried: (usize, usize),
}

/// The few-row engine's price of `shape` (rough: from its measured rates).
pub fn price(shape: FewRowBox, threads: usize, allowed: Option<u64>) -> Price {
    let (carry, bytes) = fewrow::carried_rows(shape, allowed);
    let Some(prefixes) = shape.prefixes().map(|p| p as f64) else {
        // Beyond counting (more than 2^64 prefixes): beyond any machine.
        return Price { seconds: f64::INFINITY, bytes, carried: (carry, shape.k().saturating_sub(2) as usize) };
    };
    let cpu = match shape.k() {
        1 | 2 => 0.0,
        3 => prefixes * seconds_per_prefix(3, shape.n()),
        // The curve is of boxes that carry both prefix rows; a row not
        // carried (a box too large for its sets) is read entry by entry.
        4 if carry >= 2 => prefixes * seconds_per_prefix(4, shape.n()),
        4 => {
            prefixes * seconds_per_prefix(4, shape.n())
                + (estimated_reads(shape, carry) - estimated_reads(shape, 2)).max(0.0) / READS_PER_SECOND
        }
        _ => estimated_reads(shape, carry) / READS_PER_SECOND + prefixes * carry as f64 * SECONDS_PER_CARRIED_ROW,
    };
    Price { seconds: cpu / threads as f64, bytes, carried: (carry, shape.k().saturating_sub(2) as usize) }
}

pub fn solve(rows: u32, cols: u32, out: PathBuf, flags: &RunFlags) -> anyhow::Result<ExitCode> {
    let shape = FewRowBox::new(rows, cols)?;
    let universe = Universe::boxed(rows, cols).describe();
    let bytes = shape.table_bytes();
    if flags.dry_run {
        let threads = rayon::current_num_threads();
        let allowed = flags.max_memory.or_else(chomp_tables::solve::memory::available_memory);
        let p = price(shape, threads, allowed);
        progress!(
            "estimate for the {universe} with the few-row engine on {threads} threads: {}, {} prefixes, table {} (memory and disk), {} in memory with the exclusion sets of {} of its {} prefix rows (rough: from this engine's measured rates)",
            crate::solve::human_duration(p.seconds),
            shape.prefixes().map_or_else(|| "more than 2^64".into(), |p| p.to_string()),
            bytes.map_or_else(|| "more than 2^64 bytes".into(), human_bytes),
            p.bytes.map_or_else(|| "more than 2^64 bytes".into(), human_bytes),
            p.carried.0,
            p.carried.1,
        );
        if let Some(allowed) = allowed.filter(|&a| p.bytes.is_none_or(|b| b > a)) {
            anyhow::bail!("the run would stop before it starts: the few-row table needs more than the {} allowed", human_bytes(allowed));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let created = !out.exists();
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let result = solve_into(shape, &universe, &out, flags);
    if result.is_err() && created {
        // Nothing half-written: a refused run (memory, a signal before the
        // first checkpoint) leaves no empty directory behind.
        let _ = std::fs::remove_dir(&out);
    }
    result
}

/// [`solve`] into the directory `out`, made.
fn solve_into(shape: FewRowBox, universe: &str, out: &Path, flags: &RunFlags) -> anyhow::Result<ExitCode> {
    let (rows, cols) = (shape.rows, shape.cols);
    let bytes = shape.table_bytes();
    let checkpoint = out.join(CHECKPOINT);
    if flags.force {
        remove_if_present(&checkpoint)?;
    } else if checkpoint.exists() && !flags.quiet {
        progress!("resuming from {}", checkpoint.display());
    }
    let t0 = Instant::now();
    let stop = Some(crate::solve::stop_on_signals());
    let opts = SolveOptions { max_memory: flags.max_memory, checkpoint: Some(checkpoint.clone()), stop, ..Default::default() };
    let p = Progress::default();
    let label = format!("few-row {rows}x{cols}");
    let table = watch(&label, Unit::Share, &p.done, &p.total, flags.quiet, || fewrow::solve(shape, &opts, &p))?;
    let checked = self_check(&table, flags.quiet)?;
    let seconds = t0.elapsed().as_secs_f64();
    let written = fewrow::write_dir(out, shape, (0..table.len()).map(|r| table.entry(r)))?;
    let levels = written.levels;
    remove_if_present(&checkpoint)?;
    if let Some(path) = &flags.report_json {
        let json = serde_json::json!({
            "universe": universe,
            "engine": "few-row",
            "out": out.display().to_string(),
            "wall_seconds": seconds,
            "threads_per_process": rayon::current_num_threads(),
            "prefixes": table.len(),
            "table_bytes": bytes,
            "checked_positions": checked.positions,
            "levels": levels,
        });
        chomp_tables::store::write_atomic(path, (serde_json::to_string_pretty(&json)? + "\n").as_bytes())?;
    }
    if !flags.quiet {
        let positions: u64 = levels.iter().map(|l| l.positions).sum();
        let losses: u64 = levels.iter().map(|l| l.losses).sum();
        progress!(
            "done: {} levels ({universe}, few-row engine), {positions} positions, {losses} losses, {seconds:.1} s; prefix table, levels.csv and manifest.json in {}",
            levels.len(),
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The in-run check of a solved table ([`fewrow::check_samples`]): its
/// fullest positions and [`fewrow::CHECK_SAMPLES`] in all against their
/// children, with a line saying so (unless `quiet`). The same box draws the
/// same positions.
pub fn self_check(table: &fewrow::FewRowTable, quiet: bool) -> anyhow::Result<fewrow::FewRowChecked> {
    let t0 = Instant::now();
    let shape = table.shape();
    let checked = fewrow::check_samples(table, fewrow::CHECK_SAMPLES, (u64::from(shape.rows) << 32) | u64::from(shape.cols))?;
    if !quiet {
        progress!(
            "checked {} positions (the fullest first) against their {} children ({:.1} s)",
            checked.positions,
            checked.children,
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(checked)
}

/// Whether `dir` holds a few-row run: its checkpoint, its table, or a
/// finished few-row directory (its manifest, or the older layout).
pub fn holds_run(dir: &Path) -> bool {
    dir.join(CHECKPOINT).is_file() || dir.join(fewrow::files::TABLE).is_file() || fewrow::is_few_row_dir(dir)
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| format!("cannot remove {}", path.display())),
        _ => Ok(()),
    }
}

/// Table reads of the whole solve: about `Σ_i (h_i − c)` for every prefix
/// `(h, c)`, counted exactly over the heads of a box of the same rows and
/// at most 200 columns and scaled by the prefixes' ratio and the row length.
fn estimated_reads(shape: FewRowBox, carry: usize) -> f64 {
    let (k, n) = (shape.k(), shape.n());
    if k <= 2 {
        return (n as f64) * f64::from(k); // a line: next to nothing
    }
    // The largest side up to 200 with at most about a million heads.
    let small =
        (1..=n.min(200)).rev().find(|&s| FewRowBox::new(k, s).ok().and_then(|b| b.heads()).is_some_and(|h| h <= 1 << 20)).unwrap_or(1);
    let sample = FewRowBox::new(k, small).expect("a smaller box");
    let reads = fewrow::reads(sample, carry) as f64;
    let scale = shape.prefixes().map_or(f64::INFINITY, |p| p as f64) / sample.prefixes().expect("small") as f64;
    reads * scale * f64::from(n) / f64::from(small)
}

/// `chomp query` on a few-row directory: the position's outcome and winning
/// moves, from the blocks of the prefix table they need (each checked).
pub fn query(position: &str, dir: &Path, json: bool, against: Option<&Path>) -> anyhow::Result<ExitCode> {
    let p = parse_position(position)?;
    let table = match against {
        Some(pinned) => FewRowDir::open_against(dir, pinned)?,
        None => FewRowDir::open(dir)?,
    };
    let answer = table.answer_rows(&p).map_err(|e| match e {
        FewRowError::Position(why) => anyhow::anyhow!("the position {position:?} is not in the tables of {}: {why}", dir.display()),
        e => e.into(),
    })?;
    let shape = table.shape();
    let outcome = if answer.loss { "loss" } else { "win" };
    let shown: Vec<String> = p.iter().map(|v| v.to_string()).collect();
    let tiles: u64 = p.iter().map(|&r| u64::from(r)).sum();
    if json {
        let v = serde_json::json!({ "position": p, "tiles": tiles, "outcome": outcome, "grundy": null, "grundy_normal": null, "winning_moves": answer.winning_moves, "engine": "few-row", "box": format!("{}x{}", shape.rows, shape.cols) });
        println!("{v}");
    } else {
        println!("position: {} ({tiles} tiles)", shown.join(" "));
        println!("outcome:  {outcome} for the player to move");
        let list: Vec<String> = answer.winning_moves.iter().map(|[a, b]| format!("({a},{b})")).collect();
        println!("winning moves: {}", if list.is_empty() { "none".to_string() } else { list.join(" ") });
    }
    Ok(ExitCode::SUCCESS)
}

/// A position as the command line gives it: row lengths separated by
/// spaces or commas, non-increasing, not the empty board (trailing zero
/// rows dropped).
pub fn parse_position(position: &str) -> anyhow::Result<Vec<u32>> {
    let rows: Vec<u32> = position
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().with_context(|| format!("invalid position {position:?}: {s:?} is not a row length")))
        .collect::<Result<_, _>>()?;
    let mut rows = rows;
    while rows.last() == Some(&0) {
        rows.pop();
    }
    anyhow::ensure!(!rows.is_empty(), "invalid position {position:?}: the empty board is not a position");
    anyhow::ensure!(rows.windows(2).all(|w| w[0] >= w[1]), "invalid position {position:?}: rows must not increase from top to bottom");
    Ok(rows)
}

/// `chomp convert` of a few-row directory: its entries (every block, or
/// the older layout's whole CRC-32, checked) rewritten in the current layout.
pub fn convert(src: &Path, out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let written = fewrow::convert(src, out)?;
    if !quiet {
        let m = &written.manifest;
        eprintln!(
            "converted the few-row table of {} ({}x{} box, {} prefixes, {} losses) into {}: {} ({:.1} s)",
            src.display(),
            m.universe.rows,
            m.universe.cols,
            m.prefixes,
            m.losses,
            out.display(),
            m.files.keys().cloned().collect::<Vec<_>>().join(", "),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `chomp verify` of a few-row directory: manifest, every file's SHA-256,
/// every block, the level counts and sampled positions against their
/// children; with `--full`, the box solved again and compared entry by entry.
pub fn verify(dir: &Path, samples: u64, seed: u64, full: bool, max_memory: Option<u64>, dry_run: bool) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let table = FewRowDir::open(dir)?;
    let shape = table.shape();
    if dry_run {
        let threads = rayon::current_num_threads();
        // The plain method reads every child prefix: with three or four rows
        // 5.2 µs a prefix per thread at 4×500 (54.6 s on 2 threads), growing
        // with the row length; beyond, its table reads at the measured rate.
        let seconds = match shape.k() {
            3 | 4 => shape.prefixes().map_or(f64::INFINITY, |p| p as f64) * 5.2e-6 * f64::from(shape.n()) / 500.0,
            _ => estimated_reads(shape, 0) / READS_PER_SECOND,
        } / threads as f64;
        println!(
            "the proof of the {}x{} box (a new solve with the plain method, compared entry by entry) on {threads} threads: about {}, memory {} (rough: the engine's measured rates)",
            shape.rows,
            shape.cols,
            crate::solve::human_duration(seconds),
            shape.table_bytes().map_or_else(|| "more than 2^64 bytes".into(), human_bytes)
        );
        return Ok(ExitCode::SUCCESS);
    }
    drop(table);
    let opts = full.then(|| SolveOptions { max_memory, plain_reads: true, ..Default::default() });
    let r = fewrow::verify(dir, samples, seed, opts.as_ref()).map_err(|e| anyhow::anyhow!("FAILED: {e}"))?;
    let proven = match r.resolved {
        Some(n) => format!(", the box solved again and all {n} entries equal"),
        None => String::new(),
    };
    println!(
        "ok: few-row {}x{} box, {} files checksummed, {} blocks checked, {} losses counted (levels.csv and manifest.json agree), {} positions checked against their children{proven} ({:.1} s)",
        shape.rows,
        shape.cols,
        r.files,
        r.blocks,
        r.losses,
        r.samples,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 4×3000 box took 6 min 35 s on 2 threads (652 s of user CPU):
    /// priced within 2× of that (the steeper curve of 4×500 to 4×1000
    /// priced it 18 min).
    #[test]
    fn a_wide_four_row_box_is_priced_within_twice_its_run() {
        let p = price(FewRowBox::new(4, 3000).unwrap(), 2, None).seconds;
        assert!((395.0 / 2.0..=395.0 * 2.0).contains(&p), "4x3000 priced {p:.0} s");
        // The curve is continuous where its two pieces meet.
        let (below, above) = (seconds_per_prefix(4, 990), seconds_per_prefix(4, 1010));
        assert!(below < above && above < below * 1.1, "{below} {above}");
    }

    /// A four-row box that carries one of its two prefix rows reads the
    /// other entry by entry: 4×1000 within 350 MiB took 123 s of CPU on one
    /// core (18.8 s carrying both), and 4×4000 within 22 GiB was 4 % done
    /// after 210 s (it was priced 14 min before).
    #[test]
    fn a_four_row_box_carrying_one_row_is_priced_with_its_reads() {
        let mib = |m: u64| Some(m << 20);
        let one = price(FewRowBox::new(4, 1000).unwrap(), 2, mib(350));
        let both = price(FewRowBox::new(4, 1000).unwrap(), 2, mib(1024));
        assert_eq!((one.carried, both.carried), ((1, 2), (2, 2)));
        assert!((123.0 / 2.0 / 2.0..=123.0 / 2.0 * 2.0).contains(&one.seconds), "4x1000 carrying one row priced {:.0} s", one.seconds);
        assert!((18.8 / 2.0 / 2.0..=18.8 / 2.0 * 2.0).contains(&both.seconds), "4x1000 carrying both priced {:.0} s", both.seconds);
        let wide = price(FewRowBox::new(4, 4000).unwrap(), 2, mib(22 << 10));
        assert_eq!(wide.carried, (1, 2));
        assert!(wide.seconds > 2.0 * 3600.0, "4x4000 within 22 GiB priced {:.0} s", wide.seconds);
    }

    /// A box of more prefixes than can be counted is priced beyond any
    /// machine, in words (it printed "NaN h").
    #[test]
    fn a_box_beyond_counting_is_priced_beyond_any_machine() {
        let p = price(FewRowBox::new(8, 65_535).unwrap(), 2, None);
        assert!(p.seconds.is_infinite(), "{}", p.seconds);
        assert_eq!(crate::solve::human_duration(p.seconds), "longer than can be counted");
    }
}
