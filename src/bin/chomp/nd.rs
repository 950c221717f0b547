//! `chomp nd` and `chomp divisors`: arguments and answers (the binary only
//! prints what these return).

use chomp_tables::nd::divisors::DivisorGame;
use chomp_tables::nd::position::parse_position;
use chomp_tables::nd::rank::NdRanking;
use chomp_tables::nd::solve::{full_box, solve, LossOracle};
use chomp_tables::nd::table::{write_tables, NdTables};
use chomp_tables::nd::{dims_text, parse_dims, NdError};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `chomp nd`.
#[derive(clap::Args, Debug, Clone)]
pub struct NdArgs {
    /// Sides of the box, e.g. 3,3,3 (each 1..=255).
    #[arg(long, value_name = "D1,D2,...")]
    pub dims: Option<String>,
    /// Print JSON: dims, positions, losses, winning_moves (or the answer for --position).
    #[arg(long)]
    pub json: bool,
    /// Write the tables (losses.cht and manifest.json) to this directory.
    #[arg(long, value_name = "DIR", conflicts_with = "tables")]
    pub out: Option<PathBuf>,
    /// Answer for one position: heights of the stacks along the last axis, row by row,
    /// e.g. "3 2 1 / 2 1 / 1" in 3-D ("//" between planes in 4-D).
    #[arg(long, value_name = "POS")]
    pub position: Option<String>,
    /// Read the tables of this directory instead of solving.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Re-check the table directory (--tables, or the one --out writes).
    #[arg(long)]
    pub verify: bool,
    /// With --verify on boxes of more than 2^20 positions: random positions, and random losses, to check.
    #[arg(long, default_value_t = 100_000)]
    pub samples: u64,
    /// Seed of the sampler.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Arguments of `chomp divisors`.
#[derive(clap::Args, Debug, Clone)]
pub struct DivisorsArgs {
    /// The number N (at least 2).
    #[arg(allow_hyphen_values = true)]
    pub n: String,
    /// Print JSON: n, primes, exponents, dims, positions, losses, winning_moves.
    #[arg(long)]
    pub json: bool,
}

/// What a command prints, and whether it succeeded.
#[derive(Debug, Default)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Lines for standard error.
    pub stderr: Vec<String>,
    /// Exit status 0.
    pub ok: bool,
}

impl Output {
    fn ok(stdout: String) -> Self {
        Output { stdout, stderr: Vec::new(), ok: true }
    }
}

fn cell_text(c: &[u32]) -> String {
    format!("({})", c.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
}

fn moves_text(moves: &[Vec<u32>]) -> String {
    if moves.is_empty() {
        "none".into()
    } else {
        moves.iter().map(|c| cell_text(c)).collect::<Vec<_>>().join(" ")
    }
}

/// Runs `chomp nd`.
///
/// # Errors
/// [`NdError`] for bad arguments, boxes beyond the limits and bad tables.
pub fn nd(a: &NdArgs) -> Result<Output, NdError> {
    let dims = a.dims.as_deref().map(parse_dims).transpose()?;
    if let Some(dir) = &a.tables {
        let t = NdTables::open(dir)?;
        if let Some(d) = &dims {
            if d != &t.manifest().dims {
                return Err(NdError::Tables(format!(
                    "{} holds the {} box, not {}",
                    dir.display(),
                    dims_text(&t.manifest().dims),
                    dims_text(d)
                )));
            }
        }
        if a.verify {
            return Ok(verify(&t, a));
        }
        return answer(&t, a, None);
    }
    let Some(dims) = dims else {
        return Err(NdError::Usage("give the box with --dims, e.g. --dims 3,3,3 (or read tables with --tables DIR)".into()));
    };
    if a.verify && a.out.is_none() {
        return Err(NdError::Usage("--verify checks a table directory: give --tables DIR, or --out DIR to verify what it writes".into()));
    }
    let t0 = Instant::now();
    let ranking = NdRanking::new(&dims)?;
    // Parse the position before the work.
    if let Some(p) = &a.position {
        parse_position(&ranking, p)?;
    }
    drop(ranking);
    let s = solve(&dims)?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(dir) = &a.out {
        write_tables(dir, &s)?;
        if a.verify {
            return Ok(verify(&NdTables::open(dir)?, a));
        }
    }
    answer(&s, a, Some(seconds))
}

fn verify(t: &NdTables, a: &NdArgs) -> Output {
    let t0 = Instant::now();
    let (checked, faults) = t.verify(a.samples, a.seed);
    let verdict = if faults.is_empty() { "ok" } else { "FAILED" };
    let stdout = format!(
        "{verdict}: {} box, {} positions, {} losses; table checksummed and decoded, {checked} positions checked against their children, {} problems ({:.1} s)\n",
        dims_text(&t.manifest().dims),
        t.manifest().positions,
        t.manifest().losses,
        faults.len(),
        t0.elapsed().as_secs_f64()
    );
    Output { stdout, ok: faults.is_empty(), stderr: faults.into_iter().map(|f| format!("FAIL {f}")).collect() }
}

fn answer(o: &dyn LossOracle, a: &NdArgs, seconds: Option<f64>) -> Result<Output, NdError> {
    let r = o.ranking();
    let dims = r.dims();
    if let Some(p) = &a.position {
        let h = parse_position(r, p)?;
        let an = o.analyse(&h).expect("a parsed position is in the box");
        let text = if a.json {
            json!({
                "dims": dims,
                "position": an.position,
                "cells": an.cells,
                "outcome": an.outcome,
                "moves": an.moves,
                "winning_moves": an.winning_moves,
            })
            .to_string()
                + "\n"
        } else {
            format!(
                "box:      {}\nposition: {} ({} cells)\noutcome:  {} for the player to move\nwinning moves: {}\n",
                dims_text(dims),
                an.position,
                an.cells,
                an.outcome.as_str(),
                moves_text(&an.winning_moves)
            )
        };
        return Ok(Output::ok(text));
    }
    let full = full_box(r);
    let losses = o.losses();
    let winning = o.winning_moves(&full);
    let text = if a.json {
        let mut v = json!({
            "dims": dims,
            "positions": r.positions(),
            "losses": losses,
            "winning_moves": winning,
            "cells": r.box_cells(),
        });
        if let Some(s) = seconds {
            v["seconds"] = json!((s * 1000.0).round() / 1000.0);
        }
        v.to_string() + "\n"
    } else {
        let mut t = format!(
            "box {} ({} cells): {} positions, {} losses\nwinning first moves: {}\n",
            dims_text(dims),
            r.box_cells(),
            r.positions(),
            losses,
            moves_text(&winning)
        );
        if let Some(s) = seconds {
            t.push_str(&format!("solved in {s:.3} s\n"));
        }
        t
    };
    Ok(Output::ok(text))
}

/// Runs `chomp divisors`.
///
/// # Errors
/// [`NdError`] for a bad `N` or a box beyond the limits.
pub fn divisors(a: &DivisorsArgs) -> Result<Output, NdError> {
    let g = DivisorGame::parse(&a.n)?;
    let dims = g.dims();
    let t0 = Instant::now();
    let s = solve(&dims).map_err(|e| match e {
        NdError::TooLarge(msg) => NdError::TooLarge(format!("N = {} = {}: {msg}", g.n, g.factorisation_text())),
        other => other,
    })?;
    let seconds = t0.elapsed().as_secs_f64();
    let mut winning: Vec<u64> = s.winning_moves(&full_box(s.ranking())).iter().map(|c| g.number(c)).collect();
    winning.sort_unstable();
    let text = if a.json {
        json!({
            "n": g.n,
            "primes": g.factors.iter().map(|f| f.0).collect::<Vec<_>>(),
            "exponents": g.factors.iter().map(|f| f.1).collect::<Vec<_>>(),
            "dims": dims,
            "positions": s.ranking().positions(),
            "losses": s.losses(),
            "winning_moves": winning,
            "seconds": (seconds * 1000.0).round() / 1000.0,
        })
        .to_string()
            + "\n"
    } else {
        let names: Vec<String> = winning.iter().map(|n| n.to_string()).collect();
        format!(
            "N = {} = {}: Chomp in the {} box\n{} positions, {} losses\nwinning first numbers: {}\nsolved in {seconds:.3} s\n",
            g.n,
            g.factorisation_text(),
            dims_text(&dims),
            s.ranking().positions(),
            s.losses(),
            if names.is_empty() { "none".into() } else { names.join(" ") }
        )
    };
    Ok(Output::ok(text))
}
