//! OEIS b-files of the levels of the tile-count universe: the losing
//! positions by tile count and the sequences beside it.
//!
//! | file | sequence | a(n) |
//! |---|---|---|
//! | `b112470.txt` | A112470 | losing positions with `n` tiles |
//! | `b112471.txt` | A112471 | winning positions: `p(n)` − A112470 |
//! | `b112472.txt` | A112472 | wins with exactly one winning move |
//! | `b112473.txt` | A112473 | wins with two or more winning moves |
//!
//! A b-file holds one `n a(n)` line per term, `n` increasing without gaps.
//! `n` counts every tile, the poisoned one included. A112470 starts at
//! `n = 0`: the empty board is what the player to move faces once the
//! opponent has eaten the poison, a win, so a(0) = 0. The others start at
//! `n = 1` (the poisoned square alone: a loss, no winning move).

use super::summary::LevelStats;

/// The b-files (file name, text) of `levels` (tiles `1, 2, …` in order,
/// as `chomp summary` or a run writes them): A112470 and A112471 for every
/// level, A112472 and A112473 for the levels from 1 whose winning moves
/// were counted (none when level 1's were not).
///
/// # Errors
/// When the levels skip a tile count, are not those of the tile-count
/// universe (a level's positions differ from `p(n)`, computed here), or
/// their counts do not add up (one + several ≠ wins).
pub fn bfiles(levels: &[LevelStats]) -> Result<Vec<(&'static str, String)>, String> {
    let p = partition_counts(levels.len());
    let (mut losses, mut wins, mut one, mut several) = (String::from("0 0\n"), String::new(), String::new(), String::new());
    let mut counted = true;
    for (i, l) in levels.iter().enumerate() {
        let n = i as u32 + 1;
        if l.tiles != n {
            return Err(format!("level {n} is missing (the levels go from 1 without a gap)"));
        }
        if u128::from(l.positions) != p[n as usize] {
            return Err(format!("level {n} has {} positions, not p({n}) = {}: not the tile-count universe", l.positions, p[n as usize]));
        }
        let w = l.positions.checked_sub(l.losses).ok_or_else(|| format!("level {n}: more losses than positions"))?;
        losses.push_str(&format!("{n} {}\n", l.losses));
        wins.push_str(&format!("{n} {w}\n"));
        counted &= l.wins_one_move.is_some() && l.wins_several_moves.is_some();
        if let (true, Some(a), Some(b)) = (counted, l.wins_one_move, l.wins_several_moves) {
            if a.checked_add(b) != Some(w) {
                return Err(format!("level {n}: {a} wins with one winning move and {b} with several, but {w} wins"));
            }
            one.push_str(&format!("{n} {a}\n"));
            several.push_str(&format!("{n} {b}\n"));
        }
    }
    let mut files = vec![("b112470.txt", losses), ("b112471.txt", wins)];
    if !one.is_empty() {
        files.extend([("b112472.txt", one), ("b112473.txt", several)]);
    }
    Ok(files)
}

/// `p(0..=top)`, the partition numbers, by Euler's recurrence over the
/// generalised pentagonal numbers (independent of the engine's ranking).
pub fn partition_counts(top: usize) -> Vec<u128> {
    let mut p = vec![0i128; top + 1];
    p[0] = 1;
    for n in 1..=top {
        let mut sum = 0i128;
        for k in 1.. {
            let k = k as i64;
            let sign = if k % 2 == 1 { 1 } else { -1 };
            let mut any = false;
            for g in [k * (3 * k - 1) / 2, k * (3 * k + 1) / 2] {
                if g as usize <= n {
                    sum += sign * p[n - g as usize];
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        p[n] = sum;
    }
    p.into_iter().map(|x| x as u128).collect()
}

/// The levels of a `summary.csv` (its columns found by the header: tiles,
/// positions, losses, and the winning-move counts when present; empty
/// cells are absent values).
///
/// # Errors
/// A line that lacks a column or holds a malformed number.
pub fn parse_summary_csv(text: &str) -> Result<Vec<LevelStats>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().ok_or("an empty file")?.split(',').collect();
    let col = |name: &str| header.iter().position(|&h| h == name);
    let need = |name: &str| col(name).ok_or_else(|| format!("no column {name} in the header"));
    let (tiles, positions, losses) = (need("tiles")?, need("positions")?, need("losses")?);
    let (one, several) = (col("wins_one_move"), col("wins_several_moves"));
    lines
        .enumerate()
        .map(|(i, line)| {
            let f: Vec<&str> = line.split(',').collect();
            let at = |c: usize| -> Result<Option<u64>, String> {
                let cell = f.get(c).ok_or_else(|| format!("line {}: too few columns", i + 2))?;
                if cell.is_empty() {
                    return Ok(None);
                }
                cell.parse().map(Some).map_err(|_| format!("line {}: {cell:?} is not a count", i + 2))
            };
            let must = |c: usize| at(c)?.ok_or_else(|| format!("line {}: an empty cell", i + 2));
            Ok(LevelStats {
                tiles: must(tiles)? as u32,
                positions: must(positions)?,
                losses: must(losses)?,
                grundy_histogram: None,
                wins_one_move: one.map(at).transpose()?.flatten(),
                wins_several_moves: several.map(at).transpose()?.flatten(),
                winning_moves_histogram: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_numbers() {
        let p = partition_counts(100);
        assert_eq!(&p[..11], &[1, 1, 2, 3, 5, 7, 11, 15, 22, 30, 42]);
        assert_eq!(p[100], 190_569_292);
    }

    #[test]
    fn bfiles_of_the_first_levels() {
        let csv = "tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy,wins_one_move,wins_several_moves\n\
                   1,1,1,100.0,0.0,0,0,0\n2,2,0,0.0,0.0,1,2,0\n3,3,1,33.3,0.0,2,2,0\n4,5,0,0,0,3,,\n";
        let levels = parse_summary_csv(csv).unwrap();
        let files = bfiles(&levels).unwrap();
        assert_eq!(files[0], ("b112470.txt", "0 0\n1 1\n2 0\n3 1\n4 0\n".to_string()));
        assert_eq!(files[1], ("b112471.txt", "1 0\n2 2\n3 2\n4 5\n".to_string()));
        // Counts stop where the levels' counts stop.
        assert_eq!(files[2], ("b112472.txt", "1 0\n2 2\n3 2\n".to_string()));
        assert_eq!(files[3], ("b112473.txt", "1 0\n2 0\n3 0\n".to_string()));
        // A box's levels, a gap, counts that do not add up: refused.
        let mut bad = levels.clone();
        bad[1].positions = 3;
        assert!(bfiles(&bad).unwrap_err().contains("p(2)"));
        assert!(bfiles(&levels[1..]).unwrap_err().contains("level 1 is missing"));
        let mut bad = levels;
        bad[2].wins_one_move = Some(1);
        assert!(bfiles(&bad).unwrap_err().contains("level 3"));
        assert!(parse_summary_csv("tiles,positions\n1,1\n").unwrap_err().contains("losses"));
    }
}
