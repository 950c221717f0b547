//! Chomp from its definition (`docs/math.md`, section 1) alone, to check the engine against.
//!
//! Nothing here uses `chomp_tables`: positions are plain `Vec<u32>` row
//! lengths, partitions are generated here, children follow the move
//! definition literally, and outcomes and misère Grundy values come from a
//! plain memoised recursion. Keep it that way: this module must share no code
//! with the library's engine.

use std::collections::HashMap;

/// A position: row lengths, top to bottom, non-increasing and positive.
pub type Rows = Vec<u32>;

/// Every partition of `n` into at most `max_rows` parts, each at most
/// `max_cols` (the positions of `n` tiles that fit a `max_rows` × `max_cols`
/// box), in decreasing lexicographic order.
pub fn partitions(n: u32, max_rows: u32, max_cols: u32) -> Vec<Rows> {
    fn rec(rem: u32, max_part: u32, rows_left: u32, cur: &mut Rows, out: &mut Vec<Rows>) {
        if rem == 0 {
            out.push(cur.clone());
            return;
        }
        if rows_left == 0 {
            return;
        }
        for v in (1..=max_part.min(rem)).rev() {
            cur.push(v);
            rec(rem - v, v, rows_left - 1, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(n, max_cols, max_rows, &mut Vec::new(), &mut out);
    out
}

/// The number of tiles of a position.
pub fn tiles(p: &[u32]) -> u32 {
    p.iter().sum()
}

/// The position after biting at `(a, b)`: every cell `(i, j)` with `i >= a`
/// and `j >= b` is removed. Row `i` keeps `j < b` cells when `i >= a`.
pub fn bite(p: &[u32], a: usize, b: u32) -> Rows {
    let mut child = Vec::with_capacity(p.len());
    for (i, &len) in p.iter().enumerate() {
        let kept = if i >= a { (0..len).filter(|&j| j < b).count() as u32 } else { len };
        if kept > 0 {
            child.push(kept);
        }
    }
    child
}

/// Every move `(a, b)` (poison excluded) with its child.
pub fn children(p: &[u32]) -> Vec<((u32, u32), Rows)> {
    let mut out = Vec::new();
    for (a, &len) in p.iter().enumerate() {
        for b in 0..len {
            if (a, b) != (0, 0) {
                out.push(((a as u32, b), bite(p, a, b)));
            }
        }
    }
    out
}

/// The brute-force solver: memoised outcome (by the win/loss recursion) and
/// Grundy value (by mex), computed separately so that each checks the other.
#[derive(Default)]
pub struct Brute {
    memo: HashMap<Rows, (bool, u32)>,
}

impl Brute {
    /// `(is_loss, grundy)` of a position.
    pub fn eval(&mut self, p: &[u32]) -> (bool, u32) {
        if let Some(&v) = self.memo.get(p) {
            return v;
        }
        let mut has_losing_child = false;
        let mut seen = vec![false; tiles(p) as usize + 1];
        for (_, child) in children(p) {
            let (loss, g) = self.eval(&child);
            has_losing_child |= loss;
            seen[g as usize] = true;
        }
        let g = seen.iter().position(|&s| !s).unwrap() as u32;
        let loss = !has_losing_child;
        assert_eq!(loss, g == 0, "brute force itself: outcome and Grundy value disagree at {p:?}");
        self.memo.insert(p.to_vec(), (loss, g));
        (loss, g)
    }

    pub fn is_loss(&mut self, p: &[u32]) -> bool {
        self.eval(p).0
    }

    /// The moves `[a, b]` to a losing child, in the order of [`children`].
    pub fn winning_moves(&mut self, p: &[u32]) -> Vec<[u32; 2]> {
        children(p).into_iter().filter(|(_, c)| self.is_loss(c)).map(|((a, b), _)| [a, b]).collect()
    }
}
