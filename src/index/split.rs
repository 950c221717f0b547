//! Splitting a level into work: units (prefixes of one or two top rows whose
//! rank ranges tile the level in order) and balanced contiguous shares of
//! them, for threads and for MPI processes.

use super::Ranking;
use std::ops::Range;

/// The work units of a level: prefixes of one or two rows whose ranges
/// tile the level in rank order (finer than top-row blocks, for balance).
pub fn level_units(ranking: &Ranking, n: u32) -> Vec<Vec<u8>> {
    let mut units = Vec::new();
    for c in 1..=n.min(ranking.max_part()) {
        if c == n || ranking.universe().rows == Some(1) {
            units.push(vec![c as u8]);
            continue;
        }
        for second in 1..=c.min(n - c) {
            units.push(vec![c as u8, second as u8]);
        }
    }
    units
}

/// Number of positions of level `n` whose top rows are `prefix`.
pub fn prefix_size(ranking: &Ranking, n: u32, prefix: &[u8]) -> u64 {
    let used: u32 = prefix.iter().map(|&r| r as u32).sum();
    let Some(&last) = prefix.last() else { return 0 };
    if used > n {
        return 0;
    }
    let rows_left = ranking.universe().rows.map_or(u32::MAX, |r| r.saturating_sub(prefix.len() as u32));
    if rows_left == 0 {
        return (used == n) as u64;
    }
    ranking.q(n - used, rows_left, last as u32)
}

/// Positions each unit of level `n` visits (only canonical ones, with no
/// more rows than columns, with `canonical`): the weights that balance a
/// split of the level. Counted from a table, without visiting them.
pub fn unit_weights(ranking: &Ranking, n: u32, units: &[Vec<u8>], canonical: bool) -> Vec<u64> {
    if !canonical {
        return units.iter().map(|u| prefix_size(ranking, n, u)).collect();
    }
    let all_rows = ranking.row_bounded();
    units
        .iter()
        .map(|u| {
            let used: u32 = u.iter().map(|&r| r as u32).sum();
            let rows = ranking.universe().rows.unwrap_or(n).min(n).min(u[0] as u32);
            if used > n || (u.len() as u32) > rows {
                return 0;
            }
            let rest = n - used;
            if rest == 0 {
                return 1;
            }
            all_rows.q(rest, rows - u.len() as u32, u[u.len() - 1] as u32)
        })
        .collect()
}

/// Share `part` of `parts` of level `n`: a contiguous run of its work
/// units, balanced by the positions they visit (canonical ones only with
/// `canonical`). One part is the whole level.
pub fn level_share(ranking: &Ranking, n: u32, canonical: bool, part: usize, parts: usize) -> Vec<Vec<u8>> {
    let mut units = level_units(ranking, n);
    if parts == 1 {
        return units;
    }
    let weights = unit_weights(ranking, n, &units, canonical);
    let mine = split_weighted(&weights, parts, part);
    units.drain(mine).collect()
}

/// Cuts weighted units into `parts` contiguous runs of about equal total
/// weight; returns the unit range of `part`.
pub fn split_weighted(weights: &[u64], parts: usize, part: usize) -> Range<usize> {
    let total: u64 = weights.iter().sum();
    // Unit i goes to the part in which its weight's midpoint falls.
    let mut start = weights.len();
    let mut end = weights.len();
    let mut acc = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let mid = acc as u128 * 2 + w as u128;
        let owner = if total == 0 { i * parts / weights.len().max(1) } else { ((mid * parts as u128) / (2 * total as u128)) as usize };
        let owner = owner.min(parts - 1);
        if owner == part && start == weights.len() {
            start = i;
        }
        if owner > part {
            end = i;
            break;
        }
        acc += w;
    }
    if start == weights.len() {
        return start..start;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_split_tiles_the_units() {
        let w = [5u64, 1, 1, 1, 10, 2, 2, 2, 2, 0, 3];
        for parts in 1..6 {
            let mut next = 0;
            for p in 0..parts {
                let r = split_weighted(&w, parts, p);
                if !r.is_empty() {
                    assert_eq!(r.start, next);
                    next = r.end;
                }
            }
            assert_eq!(next, w.len());
        }
    }
}
