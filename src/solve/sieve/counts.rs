//! Counting winning moves: a decided level's positions with two or more
//! losing children, read off its second mark bits
//! ([`super::marks::MarkView::twice`]).

use crate::index::Ranking;
use crate::store::mapped::MappedBits;
use rayon::prelude::*;
use std::sync::atomic::Ordering;

/// The positions of level `n` with two or more losing children among the
/// ranks `base ..` of `twice` (this process's share). In a symmetric
/// universe only canonical positions (no more rows than columns) are
/// marked: one with fewer rows than columns counts for its conjugate too,
/// one with as many stands for itself (its conjugate, if another position,
/// is canonical and marked on its own).
pub(super) fn several(ranking: &Ranking, n: u32, twice: &MappedBits, base: u64, sym: bool) -> u64 {
    let marked: u64 = twice.words().par_iter().map(|w| u64::from(w.load(Ordering::Relaxed).count_ones())).sum();
    if !sym {
        return marked;
    }
    2 * marked - squares(ranking, n, twice, base)
}

/// The positions of level `n` with as many rows as columns (`c` rows, the
/// first of length `c`) whose bit of `twice` (ranks `base ..`) is set.
/// About 3 % of a level's positions (2.7 % at 150 tiles), enumerated in
/// rank order, their ranks built row by row.
fn squares(ranking: &Ranking, n: u32, twice: &MappedBits, base: u64) -> u64 {
    let cols = ranking.max_part();
    // c rows, the first c long, the others 1 ..= c: 2c − 1 ≤ n ≤ c².
    let widths: Vec<u32> = (1..=n.min(cols)).filter(|&c| 2 * c - 1 <= n && c * c >= n).collect();
    widths
        .into_par_iter()
        .map(|c| {
            let mut count = 0;
            let top = ranking.contribution(n, 0, c);
            below(ranking, twice, base, c, 1, n - c, c, top, &mut count);
            count
        })
        .sum()
}

/// Rows `i .. c` of a square position: `left` tiles, each row at most
/// `prev` and at least 1; `acc` the rank so far.
#[allow(clippy::too_many_arguments)]
fn below(ranking: &Ranking, twice: &MappedBits, base: u64, c: u32, i: u32, left: u32, prev: u32, acc: u64, count: &mut u64) {
    if i == c {
        if left == 0 {
            let at = acc.wrapping_sub(base);
            if at < twice.len() && twice.get(at) {
                *count += 1;
            }
        }
        return;
    }
    let after = c - 1 - i; // rows after this one, each at least 1 and at most this one
    if left < after + 1 {
        return;
    }
    let (lo, hi) = (left.div_ceil(c - i), prev.min(left - after));
    for v in lo..=hi {
        below(ranking, twice, base, c, i + 1, left - v, v, acc + ranking.contribution(left, i, v), count);
    }
}
