//! The reading commands: query, ichomp, openings, verify, plot, probe bench.

use chomp_tables::game::ichomp;
use chomp_tables::read::{openings as rect, verify as check};
use chomp_tables::report::{plot, summary};
use chomp_tables::store::write_atomic;
use chomp_tables::{Outcome, Position, Tables};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

fn open(dir: &Path) -> Result<Tables, String> {
    Tables::open(dir).map_err(|e| e.to_string())
}

fn plural(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn query(position: &str, dir: &Path, json: bool) -> Result<ExitCode, String> {
    let p: Position = position.parse().map_err(|e| format!("invalid position {position:?}: {e}"))?;
    let answer = open(dir)?.answer(&p).map_err(|e| e.to_string())?;
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

pub fn ichomp(quadrants: &[String], dir: &Path, json: bool) -> Result<ExitCode, String> {
    let mut qs: [Option<Position>; 4] = Default::default();
    for (i, q) in quadrants.iter().enumerate() {
        if q.trim() != "-" {
            qs[i] = Some(q.parse().map_err(|e| format!("invalid quadrant {} {q:?}: {e}", i + 1))?);
        }
    }
    let tables = open(dir)?;
    let a = ichomp::analyze(&tables, &qs).map_err(|e| e.to_string())?;
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
/// rectangle inside it).
pub fn openings(dir: Option<&Path>, rect: Option<(u32, u32)>, all: bool, out: Option<&Path>) -> Result<ExitCode, String> {
    let openings = match (dir, rect) {
        (Some(dir), None) => rect::rectangle_openings(&open(dir)?).map_err(|e| e.to_string())?,
        (Some(dir), Some((r, c))) if all => {
            let t = open(dir)?;
            let mut v = Vec::new();
            for (a, b) in (1..=r).flat_map(|a| (1..=c).map(move |b| (a, b))) {
                v.push(rect::rectangle_opening(&t, a, b).map_err(|e| e.to_string())?);
            }
            v
        }
        (Some(dir), Some((r, c))) => vec![rect::rectangle_opening(&open(dir)?, r, c).map_err(|e| e.to_string())?],
        (None, Some((r, c))) => {
            let universe = chomp_tables::Universe::boxed(r, c);
            let solved = chomp_tables::solve::solve_in_memory(&universe).map_err(|e| format!("solving the {r}x{c} box: {e}"))?;
            if all {
                solved.rectangle_openings()
            } else {
                vec![solved.rectangle_opening(r, c).expect("the box itself")]
            }
        }
        (None, None) => return Err("openings needs --tables or --rows and --cols".into()),
    };
    write_or_print(&rect::openings_csv(&openings), out)
}

/// `chomp boxes`: positions and losses of every box inside a box's tables.
pub fn boxes(dir: &Path, out: Option<&Path>) -> Result<ExitCode, String> {
    let counts = rect::table_box_counts(&open(dir)?).map_err(|e| e.to_string())?;
    write_or_print(&rect::boxes_csv(&counts), out)
}

fn write_or_print(csv: &str, out: Option<&Path>) -> Result<ExitCode, String> {
    match out {
        Some(path) => write_atomic(path, csv.as_bytes()).map_err(|e| e.to_string())?,
        None => print!("{csv}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn verify(dir: &Path, samples: u64, seed: u64, levels: RangeInclusive<u32>, allow_incomplete: bool) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let report = check::verify_levels(dir, samples, seed, levels.clone()).map_err(|e| e.to_string())?;
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
    println!(
        "{verdict}: {} files checksummed, {} tables decoded, {} positions sampled, {} problem{} ({:.1} s)",
        report.files,
        report.tables,
        report.samples,
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
            end => format!("in {}..={end} tiles", levels.start()),
        };
        return Err(format!("no completed level lies {range} (levels 1..={} are complete): nothing was sampled", report.levels_complete));
    }
    if incomplete {
        return Err(format!(
            "{}: the run is incomplete ({} of {} levels done); run the same command again to finish it, or pass --allow-incomplete to accept the levels done",
            dir.display(),
            report.levels_complete,
            report.levels_planned
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The level statistics of several runs, merged, and the universe that names them.
fn merged_levels(dirs: &[PathBuf]) -> Result<(Vec<chomp_tables::report::LevelStats>, chomp_tables::Universe), String> {
    let mut runs = Vec::new();
    let mut universe = None;
    for dir in dirs {
        let m = chomp_tables::TableDir::new(dir).read_manifest().map_err(|e| e.to_string())?;
        let tile_run = m.universe.rows.is_none() && m.universe.cols.is_none();
        if dirs.len() > 1 && !tile_run {
            return Err(format!("{}: only tile-count runs (no row or column bound) can be merged", dir.display()));
        }
        universe.get_or_insert(m.universe);
        runs.push((dir.display().to_string(), m.levels));
    }
    let levels = summary::merge_levels(&runs)?;
    let universe = if dirs.len() > 1 { chomp_tables::Universe::tiles(levels.len() as u32) } else { universe.expect("one directory") };
    Ok((levels, universe))
}

pub fn plot(dirs: &[PathBuf], out: &Path) -> Result<ExitCode, String> {
    let (levels, universe) = merged_levels(dirs)?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for path in plot::plot_all(&levels, &universe, out).map_err(|e| e.to_string())? {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `chomp plot --openings FILE`: the openings map of a CSV.
pub fn plot_openings(csv: &Path, out: &Path) -> Result<ExitCode, String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    let openings = rect::parse_openings_csv(&text).map_err(|e| format!("{}: {e}", csv.display()))?;
    if openings.is_empty() {
        return Err(format!("{}: no rectangles", csv.display()));
    }
    let (r, c) = (openings.iter().map(|o| o.rows).max().unwrap_or(1), openings.iter().map(|o| o.cols).max().unwrap_or(1));
    for path in plot::plot_openings(&openings, &format!("to {r}×{c}"), out).map_err(|e| e.to_string())? {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn summary(dirs: &[PathBuf], out: &Path) -> Result<ExitCode, String> {
    let (levels, _) = merged_levels(dirs)?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let grundy = levels.iter().any(|l| l.grundy_histogram.is_some());
    for (name, text) in chomp_tables::TableDir::summary_files(&levels, grundy) {
        let path = out.join(name);
        write_atomic(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        println!("wrote {} ({} levels)", path.display(), levels.len());
    }
    if let Some(t) = summary::ratio_trend(&levels, plot::TREND_FROM) {
        println!(
            "conjecture ratio, least-squares line over levels {}..={}: slope {:.3e} ± {:.1e} per tile (1 s.e.), {:.5} at {} tiles",
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

pub fn bench_probe(dir: &Path) -> Result<ExitCode, String> {
    let t0 = Instant::now();
    let tables = open(dir)?;
    let m = tables.manifest();
    if m.levels_complete == 0 {
        return Err(format!("{}: no completed level to probe", dir.display()));
    }
    let mut rng = check::SplitMix(42);
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
