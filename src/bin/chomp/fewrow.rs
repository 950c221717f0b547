//! `chomp solve --engine few-row`: a box with at most eight rows (or
//! columns) solved one entry per prefix, with progress, checkpoints and
//! the level counts of `--report-json`.

use crate::args::RunFlags;
use crate::progress::{watch, Unit};
use anyhow::Context;
use chomp_tables::fewrow::{self, FewRowBox, LevelCount, Progress, SolveOptions};
use chomp_tables::solve::memory::human_bytes;
use chomp_tables::Universe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The checkpoint a run keeps in its directory (removed once the table is written).
const CHECKPOINT: &str = "fewrow.checkpoint";
/// The solved prefix table (the checkpoint's format, complete).
const TABLE: &str = "fewrow.prefixes";
/// Tiles, positions and losses of every level.
const LEVELS: &str = "levels.csv";

/// Table reads a second per thread of five to eight rows, measured at 5×100
/// and 6×50 (bench/runs/2026-12-07-kvm-2core/fewrow.md): the dry run's rate.
const READS_PER_SECOND: f64 = 4.0e8;
/// CPU seconds per prefix of three and four rows (which carry their
/// exclusion sets): 22 ns at 4×250, 33 ns at 4×500, 96 ns at 4×1000 (the
/// sets outgrow the caches), about `33 ns · (n / 500)^1.5`; 33 ns at 3×3000.
fn seconds_per_prefix(k: u32, n: u32) -> f64 {
    let n = f64::from(n);
    if k == 3 {
        33e-9 * (n / 3000.0).max(1.0)
    } else {
        33e-9 * (n / 500.0).powf(1.5).max(0.66)
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
    let prefixes = shape.prefixes().map_or(f64::INFINITY, |p| p as f64);
    let cpu = match shape.k() {
        1 | 2 => 0.0,
        3 | 4 => prefixes * seconds_per_prefix(shape.k(), shape.n()),
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
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let checkpoint = out.join(CHECKPOINT);
    if flags.force {
        remove_if_present(&checkpoint)?;
    } else if checkpoint.exists() && !flags.quiet {
        progress!("resuming from {}", checkpoint.display());
    }
    let t0 = Instant::now();
    let opts = SolveOptions { max_memory: flags.max_memory, checkpoint: Some(checkpoint.clone()), ..Default::default() };
    let p = Progress::default();
    let label = format!("few-row {rows}x{cols}");
    let table = watch(&label, Unit::Share, &p.done, &p.total, flags.quiet, || fewrow::solve(shape, &opts, &p))?;
    let seconds = t0.elapsed().as_secs_f64();
    let levels = table.level_counts();
    table.save(&out.join(TABLE))?;
    chomp_tables::store::write_atomic(&out.join(LEVELS), levels_csv(&levels).as_bytes())?;
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
            "levels": levels,
        });
        chomp_tables::store::write_atomic(path, (serde_json::to_string_pretty(&json)? + "\n").as_bytes())?;
    }
    if !flags.quiet {
        let positions: u64 = levels.iter().map(|l| l.positions).sum();
        let losses: u64 = levels.iter().map(|l| l.losses).sum();
        progress!(
            "done: {} levels ({universe}, few-row engine), {positions} positions, {losses} losses, {seconds:.1} s; prefix table and {LEVELS} in {}",
            levels.len(),
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `dir` holds a few-row run: its checkpoint or its table.
pub fn holds_run(dir: &Path) -> bool {
    dir.join(CHECKPOINT).is_file() || dir.join(TABLE).is_file()
}

/// Whether `dir` holds a few-row table and no level tables.
pub fn is_few_row_dir(dir: &Path) -> bool {
    dir.join(TABLE).is_file() && !dir.join("manifest.json").exists()
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| format!("cannot remove {}", path.display())),
        _ => Ok(()),
    }
}

pub fn levels_csv(levels: &[LevelCount]) -> String {
    let mut s = String::from("tiles,positions,losses\n");
    for l in levels {
        s.push_str(&format!("{},{},{}\n", l.tiles, l.positions, l.losses));
    }
    s
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
/// moves, reading from `fewrow.prefixes` only the entries they need (the
/// position's and its children's prefixes; the file's checksum covers the
/// whole table and is not checked here).
pub fn query(position: &str, dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use std::io::{Read, Seek, SeekFrom};
    let rows: Vec<u32> = position
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().with_context(|| format!("invalid position {position:?}: {s:?} is not a row length")))
        .collect::<Result<_, _>>()?;
    let p = fewrow::FewRowPosition::new(&rows).with_context(|| format!("invalid position {position:?}"))?;
    anyhow::ensure!(!p.rows().is_empty(), "invalid position {position:?}: the empty board is not a position");
    let path = dir.join(TABLE);
    let mut file = std::fs::File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut header = [0u8; 28];
    file.read_exact(&mut header).with_context(|| format!("{}: too short for a few-row table", path.display()))?;
    anyhow::ensure!(&header[..8] == b"CHOMPFR1", "{}: not a few-row table", path.display());
    let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
    let (k, n) = (word(8), word(12));
    let shape = FewRowBox::new(k, n)?;
    let ranking = fewrow::PrefixRanking::new(k as usize - 1, n).context("a few-row table of an impossible box")?;
    // Outcomes are the same for a position and its transpose.
    let fits = |q: &fewrow::FewRowPosition| q.rows().len() as u32 <= k && q.rows().first().is_none_or(|&r| u32::from(r) <= n);
    let oriented = |q: fewrow::FewRowPosition| if fits(&q) { Some(q) } else { q.transposed().filter(|t| fits(t)) };
    anyhow::ensure!(oriented(p).is_some(), "the position {position:?} does not fit the {k}x{n} box of {}", dir.display());
    let mut is_loss = |q: fewrow::FewRowPosition| -> anyhow::Result<bool> {
        let q = oriented(q).expect("a child fits where its parent does");
        let mut all = [0u16; fewrow::MAX_ROWS as usize];
        all[..q.rows().len()].copy_from_slice(q.rows());
        if k == 1 {
            return Ok(all[0] == 1);
        }
        let rank = ranking.rank(&all[..k as usize - 1]);
        let mut e = [0u8; 2];
        file.seek(SeekFrom::Start(28 + 2 * rank))?;
        file.read_exact(&mut e)?;
        let e = u16::from_le_bytes(e);
        Ok(e != fewrow::NONE && e == all[k as usize - 1])
    };
    let loss = is_loss(p)?;
    let mut winning = Vec::new();
    let r = p.rows();
    for (a, &len) in r.iter().enumerate() {
        for b in 0..u32::from(len) {
            if a == 0 && b == 0 {
                continue;
            }
            let child: Vec<u32> = r.iter().enumerate().map(|(i, &v)| if i >= a { u32::from(v).min(b) } else { u32::from(v) }).collect();
            if is_loss(fewrow::FewRowPosition::new(&child)?)? {
                winning.push([a as u32, b]);
            }
        }
    }
    anyhow::ensure!(loss == winning.is_empty() || r == [1], "the table of {} contradicts itself at {position:?}", dir.display());
    let outcome = if loss { "loss" } else { "win" };
    let shown: Vec<String> = r.iter().map(|v| v.to_string()).collect();
    if json {
        let v = serde_json::json!({ "position": shown.join(" "), "tiles": p.tiles(), "outcome": outcome, "winning_moves": winning, "engine": "few-row", "box": format!("{}x{}", shape.rows, shape.cols) });
        println!("{v}");
    } else {
        println!("position: {} ({} tiles)", shown.join(" "), p.tiles());
        println!("outcome:  {outcome} for the player to move");
        let list: Vec<String> = winning.iter().map(|[a, b]| format!("({a},{b})")).collect();
        println!("winning moves: {}", if list.is_empty() { "none".to_string() } else { list.join(" ") });
    }
    Ok(ExitCode::SUCCESS)
}
