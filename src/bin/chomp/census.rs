//! `chomp census`: the winning first moves of every rectangle inside thin
//! boxes solved with the few-row engine, merged with openings files.

use crate::progress::{watch, Unit};
use anyhow::{bail, Context};
use chomp_tables::fewrow::{self, FewRowBox, Progress, SolveOptions};
use chomp_tables::read::openings::{self as rect, Opening};
use chomp_tables::solve::memory::human_bytes;
use chomp_tables::store::write_atomic;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// A box as `RxC`.
fn parse_box(s: &str) -> anyhow::Result<FewRowBox> {
    let bad = || format!("invalid box {s:?}: expected RxC, e.g. 4x3000");
    let (r, c) = s.trim().split_once(['x', 'X']).with_context(bad)?;
    let (r, c) = (r.parse::<u32>().with_context(bad)?, c.parse::<u32>().with_context(bad)?);
    FewRowBox::new(r, c).with_context(|| format!("the box {s}"))
}

pub fn census(
    boxes: &[String],
    include: &[PathBuf],
    work: &Path,
    out: &Path,
    max_memory: Option<u64>,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    if boxes.is_empty() && include.is_empty() {
        bail!("census needs boxes (--box RxC) or openings files (--include FILE)");
    }
    let shapes: Vec<FewRowBox> = boxes.iter().map(|b| parse_box(b)).collect::<Result<_, _>>()?;
    let threads = rayon::current_num_threads();
    let allowed = max_memory.or_else(chomp_tables::solve::memory::available_memory);
    if dry_run {
        for s in &shapes {
            let p = crate::fewrow::price(*s, threads, allowed);
            let done = work.join(format!("openings-{}x{}.csv", s.rows, s.cols)).is_file();
            progress!(
                "{}x{}: {}about {} on {threads} threads, {} in memory (rough: the few-row engine's measured rates)",
                s.rows,
                s.cols,
                if done { "done (its openings are in the work directory); " } else { "" },
                crate::solve::human_duration(p.seconds),
                p.bytes.map_or_else(|| "more than 2^64 bytes".into(), human_bytes)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut sources: Vec<(String, Vec<Opening>)> = Vec::new();
    for path in include {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let o = rect::parse_openings_csv(&text).map_err(anyhow::Error::msg).with_context(|| path.display().to_string())?;
        sources.push((path.display().to_string(), o));
    }
    for s in &shapes {
        let name = format!("{}x{}", s.rows, s.cols);
        let file = work.join(format!("openings-{name}.csv"));
        if !file.is_file() {
            let t0 = Instant::now();
            let checkpoint = work.join(format!("{name}.checkpoint"));
            let stop = Some(crate::solve::stop_on_signals());
            let opts = SolveOptions { max_memory, checkpoint: Some(checkpoint.clone()), stop, ..Default::default() };
            let p = Progress::default();
            let table = watch(&format!("few-row {name}"), Unit::Share, &p.done, &p.total, false, || fewrow::solve(*s, &opts, &p))?;
            crate::fewrow::self_check(&table, false)?;
            let solved = t0.elapsed().as_secs_f64();
            // The box's own counts, level by level (as `chomp solve` writes them).
            let levels = table.level_counts();
            write_atomic(&work.join(format!("levels-{name}.csv")), chomp_tables::fewrow::levels_csv(&levels).as_bytes())?;
            let losses: u64 = levels.iter().map(|l| l.losses).sum();
            let openings = table.rectangle_openings();
            drop(table);
            write_atomic(&file, rect::openings_csv(&openings).as_bytes())?;
            if checkpoint.exists() {
                std::fs::remove_file(&checkpoint).with_context(|| format!("cannot remove {}", checkpoint.display()))?;
            }
            progress!(
                "{name}: {losses} losses, solved in {solved:.1} s; the openings of its {} rectangles in {:.1} s; {}",
                openings.len(),
                t0.elapsed().as_secs_f64() - solved,
                file.display()
            );
        }
        let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let o = rect::parse_openings_csv(&text).map_err(anyhow::Error::msg).with_context(|| file.display().to_string())?;
        sources.push((format!("the {name} box"), o));
    }
    let merged = rect::merge_openings(sources.iter().map(|(n, o)| (n.as_str(), o.as_slice()))).map_err(anyhow::Error::msg)?;
    write_atomic(out, rect::openings_csv(&merged).as_bytes())?;
    let mut by_moves = std::collections::BTreeMap::<usize, u64>::new();
    for o in &merged {
        *by_moves.entry(o.winning_moves.len()).or_default() += 1;
    }
    let counts: Vec<String> = by_moves.iter().map(|(m, n)| format!("{n} with {m}")).collect();
    progress!("census: {} rectangles (rows <= cols) in {}; winning first moves: {}", merged.len(), out.display(), counts.join(", "));
    for o in merged.iter().filter(|o| o.winning_moves.len() > 1) {
        let moves: Vec<String> = o.winning_moves.iter().map(|[r, c]| format!("{r}:{c}")).collect();
        progress!("  {}x{}: {}", o.rows, o.cols, moves.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}
