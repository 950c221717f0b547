//! Rectangle openings as a report: the winning first moves of each
//! rectangle, and their CSV (`rows,cols,winning_moves`). They are computed
//! from tables by [`crate::read::openings`].

use serde::Serialize;

/// Winning first moves of one rectangle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Opening {
    /// Rows of the rectangle.
    pub rows: u32,
    /// Columns of the rectangle.
    pub cols: u32,
    /// Its winning moves, row-major.
    pub winning_moves: Vec<[u32; 2]>,
}

/// Reads openings CSV (`rows,cols,winning_moves`, as [`openings_csv`] writes).
///
/// # Errors
/// A message naming the line that does not parse.
pub fn parse_openings_csv(text: &str) -> Result<Vec<Opening>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("line {}: expected rows,cols,row:col row:col ..., found {line:?}", i + 1);
        let mut f = line.split(',');
        let (Some(r), Some(c), Some(m), None) = (f.next(), f.next(), f.next(), f.next()) else { return Err(bad()) };
        let rows = r.trim().parse().map_err(|_| bad())?;
        let cols = c.trim().parse().map_err(|_| bad())?;
        let winning_moves = m
            .split_whitespace()
            .map(|mv| {
                let (a, b) = mv.split_once(':').ok_or_else(bad)?;
                Ok([a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?])
            })
            .collect::<Result<_, String>>()?;
        out.push(Opening { rows, cols, winning_moves });
    }
    Ok(out)
}

/// The openings as CSV: `rows,cols,winning_moves` with moves as space-separated `row:col`.
pub fn openings_csv(openings: &[Opening]) -> String {
    let mut s = String::from("rows,cols,winning_moves\n");
    for o in openings {
        let moves: Vec<String> = o.winning_moves.iter().map(|[r, c]| format!("{r}:{c}")).collect();
        s.push_str(&format!("{},{},{}\n", o.rows, o.cols, moves.join(" ")));
    }
    s
}
