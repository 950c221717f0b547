//! The playing commands: one computer move (`play`) and a match of every level against every other (`match`).

use anyhow::{bail, Context};
use chomp_tables::play::{self as player, Level, Player};
use chomp_tables::rng::SplitMix;
use chomp_tables::{Position, Tables};
use rayon::prelude::*;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// `chomp play`: one computer move, from a table directory or from a box
/// solved in memory first.
pub fn play(
    position: &str,
    dir: Option<&Path>,
    boxed: Option<(u32, u32)>,
    level: Level,
    seed: u64,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let p: Position = position.parse().with_context(|| format!("invalid position {position:?}"))?;
    let tables = match (dir, boxed) {
        (Some(dir), _) => Tables::open(dir)?,
        (None, Some((r, c))) => chomp_tables::solve::solve_in_memory(&chomp_tables::Universe::boxed(r, c))
            .with_context(|| format!("solving the {r}x{c} box"))?
            .tables(),
        (None, None) => bail!("play needs --tables or --rows and --cols"),
    };
    if !tables.covers(&p) {
        // The probe's own message says why (outside the universe, or a level not computed).
        tables.outcome(&p)?;
    }
    let m = player::play(level, &p, seed, Some(&tables))?;
    if json {
        println!("{}", serde_json::to_string(&m).expect("plain data"));
    } else {
        let after: Vec<String> = m.position.iter().map(|r| r.to_string()).collect();
        println!(
            "{level} bites ({},{}) -> {} ({})",
            m.cell[0],
            m.cell[1],
            after.join(" "),
            serde_json::to_value(m.reason).expect("plain data").as_str().unwrap_or("?")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One game of a match: the two levels, who starts, the rectangle and the seed.
struct Job {
    first: usize,
    second: usize,
    rows: u32,
    cols: u32,
    seed: u64,
}

pub fn tournament(
    dir: &Path,
    games: u32,
    seed: u64,
    min_side: u32,
    max_rows: Option<u32>,
    max_cols: Option<u32>,
) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let tables = Tables::open(dir)?;
    let m = tables.manifest();
    let top = m.levels_complete;
    let rows = max_rows.or(m.universe.rows).unwrap_or(top).min(top / 2);
    let cols = max_cols.or(m.universe.cols).unwrap_or(top).min(top / 2);
    if rows < min_side || cols < min_side || min_side * min_side > top {
        bail!("no rectangle of {min_side}x{min_side} to {rows}x{cols} lies in the tables ({} levels)", top);
    }
    let mut rng = SplitMix(seed);
    let levels = Level::ALL;
    let mut jobs = Vec::new();
    for a in 0..levels.len() {
        for b in a + 1..levels.len() {
            for _ in 0..games {
                // A random rectangle the tables cover, played once with each side starting.
                let mut attempts = 0;
                let (r, c) = loop {
                    attempts += 1;
                    if attempts > 100_000 {
                        bail!("no rectangle of {min_side}x{min_side} to {rows}x{cols} found in the tables");
                    }
                    let r = min_side + rng.below((rows - min_side + 1) as u64) as u32;
                    let c = min_side + rng.below((cols - min_side + 1) as u64) as u32;
                    let p = Position::new(&vec![c; r as usize])?;
                    if tables.covers(&p) {
                        break (r, c);
                    }
                };
                let s = rng.next_u64();
                jobs.push(Job { first: a, second: b, rows: r, cols: c, seed: s });
                jobs.push(Job { first: b, second: a, rows: r, cols: c, seed: s });
            }
        }
    }
    let results: Vec<anyhow::Result<bool>> = jobs
        .par_iter()
        .map(|j| {
            let start = Position::new(&vec![j.cols; j.rows as usize])?;
            let mut first = Player::new(levels[j.first], j.seed);
            let mut second = Player::new(levels[j.second], j.seed.rotate_left(17) ^ 1);
            let game = player::play_game(&start, &mut first, &mut second, Some(&tables))?;
            Ok(game.first_wins)
        })
        .collect();
    // wins[a][b]: games level a won against level b.
    let n = levels.len();
    let mut wins = vec![vec![0u32; n]; n];
    let mut starter_wins = 0u32;
    for (j, r) in jobs.iter().zip(results) {
        let first_wins = r?;
        starter_wins += first_wins as u32;
        if first_wins {
            wins[j.first][j.second] += 1;
        } else {
            wins[j.second][j.first] += 1;
        }
    }
    let per_pair = 2 * games;
    println!(
        "win rate of the row level against the column level: {per_pair} games a pair ({games} with each side starting), \
         rectangles {min_side}x{min_side}..{rows}x{cols} from {}, seed {seed}",
        dir.display()
    );
    // A Markdown table (it pastes into the README as it is).
    let names: Vec<&str> = levels.iter().map(|l| l.as_str()).collect();
    println!("| level | {} | overall |", names.join(" | "));
    println!("|---|{}---|", "---|".repeat(n));
    for (a, row) in wins.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(b, &w)| if a == b { "-".to_string() } else { format!("{:.1}%", 100.0 * w as f64 / per_pair as f64) })
            .collect();
        let total: u32 = row.iter().sum();
        println!("| {} | {} | {:.1}% |", names[a], cells.join(" | "), 100.0 * total as f64 / (per_pair * (n as u32 - 1)) as f64);
    }
    println!(
        "{} games in {:.1} s; the starting player won {:.1}% (every rectangle is a win for the player to move)",
        jobs.len(),
        t0.elapsed().as_secs_f64(),
        100.0 * starter_wins as f64 / jobs.len().max(1) as f64
    );
    Ok(ExitCode::SUCCESS)
}
