//! Openings: the winning first moves of every rectangle a table directory
//! (or a universe solved in memory) covers, and the losses of every box.

use super::{ProbeError, Tables};
use crate::game::Position;
use crate::index::Ranking;
pub use crate::report::openings::{openings_csv, parse_openings_csv, Opening};
use serde::Serialize;

/// Every rectangle `rows × cols` inside the tables (within their bounds and
/// completed levels) with its winning first moves, by rows then columns.
///
/// # Errors
/// [`ProbeError`] for damaged tables.
pub fn rectangle_openings(t: &Tables) -> Result<Vec<Opening>, ProbeError> {
    let m = t.manifest();
    let top = m.levels_complete;
    let max_rows = m.universe.rows.unwrap_or(top).min(top);
    let max_cols = m.universe.cols.unwrap_or(top).min(top);
    let mut out = Vec::new();
    for rows in 1..=max_rows {
        for cols in 1..=max_cols {
            if rows * cols > top {
                break;
            }
            out.push(rectangle_opening(t, rows, cols)?);
        }
    }
    Ok(out)
}

/// The winning first moves of the rectangle `rows × cols` (both at least 1).
///
/// # Errors
/// [`ProbeError`] for a rectangle outside the tables, or damaged tables.
pub fn rectangle_opening(t: &Tables, rows: u32, cols: u32) -> Result<Opening, ProbeError> {
    let p = Position::new(&vec![cols; rows as usize]).map_err(|_| ProbeError::Outside {
        position: format!("{rows}x{cols} rectangle"),
        size: format!("{rows} rows, {cols} columns"),
        universe: t.manifest().universe.bounds(),
    })?;
    Ok(Opening { rows, cols, winning_moves: t.winning_moves(&p)? })
}

/// The winning first moves of the rectangle `rows × cols` (both at least 1)
/// with `is_loss` answering whether a position (inside the universe) loses:
/// its moves to a loss, row-major.
pub fn rectangle_opening_with(rows: u32, cols: u32, mut is_loss: impl FnMut(&Position) -> bool) -> Opening {
    let p = Position::new(&vec![cols; rows as usize]).expect("a rectangle of at least 1x1");
    let mut winning_moves: Vec<[u32; 2]> = p.moves().into_iter().filter(|(_, child)| is_loss(child)).map(|((r, c), _)| [r, c]).collect();
    winning_moves.sort();
    Opening { rows, cols, winning_moves }
}

/// Positions and losses of one box `rows × cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BoxCount {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// Non-empty positions inside it (`C(rows + cols, rows) − 1`: the
    /// poisoned square alone included).
    pub positions: u64,
    /// Losses among them.
    pub losses: u64,
}

/// `C(n, k)`, or `None` past `u64`.
pub fn binomial(n: u32, k: u32) -> Option<u64> {
    let k = k.min(n.saturating_sub(k));
    let mut c: u128 = 1;
    for i in 1..=k as u128 {
        c = c * (n as u128 - k as u128 + i) / i;
        if c > u64::MAX as u128 {
            return None;
        }
    }
    Some(c as u64)
}

/// Counts the losses of every box inside a universe bounded by `max_rows ×
/// max_cols`: `levels` yields each level's loss ranks (of `ranking`); a
/// loss of height `h` and width `w` lies in every box of at least `h` rows
/// and `w` columns (whether a position loses does not depend on the box).
/// Returns every box `rows × cols` with `rows ≤ max_rows`, `cols ≤
/// max_cols`, by rows then columns.
pub fn box_counts<E>(
    ranking: &Ranking,
    max_rows: u32,
    max_cols: u32,
    levels: impl IntoIterator<Item = Result<(u32, Vec<u64>), E>>,
) -> Result<Vec<BoxCount>, E> {
    let (h, w) = (max_rows as usize, max_cols as usize);
    // by_shape[a][b]: losses of height a + 1 and width b + 1.
    let mut by_shape = vec![vec![0u64; w]; h];
    let mut rows = Vec::new();
    for level in levels {
        let (n, ranks) = level?;
        for r in ranks {
            ranking.unrank_into(n, r, &mut rows);
            by_shape[rows.len() - 1][rows[0] as usize - 1] += 1;
        }
    }
    let mut out = Vec::with_capacity(h * w);
    let mut within = vec![vec![0u64; w + 1]; h + 1]; // 2-D prefix sums
    for a in 1..=h {
        for b in 1..=w {
            within[a][b] = by_shape[a - 1][b - 1] + within[a - 1][b] + within[a][b - 1] - within[a - 1][b - 1];
        }
    }
    for (a, row) in within.iter().enumerate().skip(1) {
        for (b, &losses) in row.iter().enumerate().skip(1) {
            let positions = binomial((a + b) as u32, a as u32).map_or(u64::MAX, |c| c - 1);
            out.push(BoxCount { rows: a as u32, cols: b as u32, positions, losses });
        }
    }
    Ok(out)
}

/// The losses of every box inside complete tables of a box universe (see
/// [`box_counts`]).
///
/// # Errors
/// [`ProbeError`] for tables that are not a complete box, or damaged tables.
pub fn table_box_counts(t: &Tables) -> Result<Vec<BoxCount>, ProbeError> {
    table_box_counts_with(t, |_| {})
}

/// [`table_box_counts`], calling `read(n)` once level `n`'s losses are read
/// (for progress: the levels are read in order, the largest in the middle).
///
/// # Errors
/// As [`table_box_counts`].
pub fn table_box_counts_with(t: &Tables, mut read: impl FnMut(u32)) -> Result<Vec<BoxCount>, ProbeError> {
    let m = t.manifest();
    let (Some(rows), Some(cols)) = (m.universe.rows, m.universe.cols) else {
        return Err(ProbeError::NotABox { universe: m.universe.describe() });
    };
    if m.levels_complete < rows * cols {
        return Err(ProbeError::MissingLevel { tiles: m.levels_complete + 1, complete: m.levels_complete });
    }
    let levels = (1..=m.levels_complete).map(|n| {
        let level = t.level_losses(n).map(|l| (n, l.iter().collect()));
        read(n);
        level
    });
    box_counts(t.ranking(), rows, cols, levels)
}

/// Box counts as CSV: `rows,cols,positions,losses`.
pub fn boxes_csv(boxes: &[BoxCount]) -> String {
    let mut s = String::from("rows,cols,positions,losses\n");
    for b in boxes {
        s.push_str(&format!("{},{},{},{}\n", b.rows, b.cols, b.positions, b.losses));
    }
    s
}

impl Opening {
    /// The same rectangle turned (`cols × rows`), its moves turned with it.
    pub fn transposed(&self) -> Opening {
        let mut winning_moves: Vec<[u32; 2]> = self.winning_moves.iter().map(|&[r, c]| [c, r]).collect();
        winning_moves.sort();
        Opening { rows: self.cols, cols: self.rows, winning_moves }
    }
}

/// Merges openings from several sources into one list of the rectangles
/// with `rows ≤ cols` (a taller one is listed as its transpose, its moves
/// transposed), by rows then columns.
///
/// # Errors
/// A message naming the rectangle and the two sources when two sources (or
/// a rectangle and its transpose) disagree.
pub fn merge_openings<'a>(sources: impl IntoIterator<Item = (&'a str, &'a [Opening])>) -> Result<Vec<Opening>, String> {
    let mut seen: std::collections::BTreeMap<(u32, u32), (Opening, &'a str)> = Default::default();
    for (name, openings) in sources {
        for o in openings {
            let o = if o.rows > o.cols { o.transposed() } else { o.clone() };
            match seen.get(&(o.rows, o.cols)) {
                Some((known, from)) if known.winning_moves != o.winning_moves => {
                    let show = |o: &Opening| o.winning_moves.iter().map(|[r, c]| format!("{r}:{c}")).collect::<Vec<_>>().join(" ");
                    return Err(format!(
                        "the {}x{} rectangle: {from} has the winning moves [{}], {name} [{}]",
                        o.rows,
                        o.cols,
                        show(known),
                        show(&o)
                    ));
                }
                Some(_) => {}
                None => {
                    seen.insert((o.rows, o.cols), (o, name));
                }
            }
        }
    }
    Ok(seen.into_values().map(|(o, _)| o).collect())
}
