//! The rectangle openings of a solved few-row box.

use super::{FewRowTable, MAX_ROWS};
use crate::report::openings::Opening;
use rayon::prelude::*;

impl FewRowTable {
    /// The winning first moves of every rectangle inside a solved few-row box
    /// (`r × c` for `r ≤` its rows and `c ≤` its columns, as asked), by rows
    /// then columns: its moves to a loss, row-major. Each rectangle's children
    /// are read from the prefix table (in the engine's orientation, at most
    /// eight rows; a transposed box's rectangles are turned back); rectangles
    /// are taken in parallel.
    pub fn rectangle_openings(&self) -> Vec<Opening> {
        let shape = self.shape();
        let (k, n) = (shape.k(), shape.n());
        let all: Vec<(u32, u32)> = (1..=shape.rows).flat_map(|r| (1..=shape.cols).map(move |c| (r, c))).collect();
        all.par_iter()
            .with_min_len(16)
            .map(|&(rows, cols)| {
                // The rectangle in the engine's orientation.
                let (er, ec) = if shape.transposed() { (cols, rows) } else { (rows, cols) };
                debug_assert!(er <= k && ec <= n);
                let mut winning_moves = Vec::new();
                let mut child = [0u16; MAX_ROWS as usize];
                for i in 0..er {
                    for j in 0..ec {
                        if i == 0 && j == 0 {
                            continue;
                        }
                        child[..i as usize].iter_mut().for_each(|v| *v = ec as u16);
                        child[i as usize..er as usize].iter_mut().for_each(|v| *v = j as u16);
                        // (Rows from `er` on stay zero.)
                        if self.loses(&child) {
                            winning_moves.push(if shape.transposed() { [j, i] } else { [i, j] });
                        }
                    }
                }
                winning_moves.sort();
                Opening { rows, cols, winning_moves }
            })
            .collect()
    }
}
