//! Splitting a level into work: units (prefixes of one or two top rows whose
//! rank ranges tile the level in order) and balanced contiguous shares of
//! them, for threads and for MPI processes: a level's own ([`level_share`]),
//! or one cut for a run of levels ([`Cuts`], the sieve's).

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

/// The weight of the work in a [`Balance::Both`] split (the memory weighs
/// the rest). The work of a share is its canonical positions, each weighing
/// [`work_of_top_row`]; its memory is its positions (mark bits). 0.9 keeps
/// process 0's peak memory under half of one process's with the work
/// still balanced: process 0's share, mostly tall positions whose bits are
/// touched but rarely marked, is what the memory limits (figures:
/// docs/performance.md, section "The cluster's shares").
pub const WORK_WEIGHT: f64 = 0.9;

/// How a canonical position's work falls with its top row up to
/// [`WORK_TILT_KNEE`] (see [`work_of_top_row`]).
pub const WORK_TILT: f64 = 0.35;

/// How it falls past [`WORK_TILT_KNEE`]: faster.
pub const WORK_TILT_LONG: f64 = 1.15;

/// Where the fall steepens: top rows `c` with `c / √n` above this.
pub const WORK_TILT_KNEE: f64 = 3.0;

/// The work of a canonical position of level `n` with top row `c`, relative
/// to others: `x^−WORK_TILT` for `x = c / √n` up to [`WORK_TILT_KNEE`] `k`,
/// then `k^−WORK_TILT (x / k)^−WORK_TILT_LONG` (continuous). A long top row
/// costs less per position, a very long one much less. Fitted to the
/// compute of 4 processes' shares: one tilt left the shares of long top
/// rows off the model (figures: docs/performance.md, section "The
/// cluster's shares").
pub fn work_of_top_row(n: u32, c: u32) -> f64 {
    let x = c as f64 / (n as f64).sqrt();
    if x <= WORK_TILT_KNEE {
        x.powf(-WORK_TILT)
    } else {
        WORK_TILT_KNEE.powf(-WORK_TILT) * (x / WORK_TILT_KNEE).powf(-WORK_TILT_LONG)
    }
}

/// What a split of a level into shares balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balance {
    /// Every position (e.g. the memory of one bit or byte per position).
    All,
    /// Canonical positions only (work that visits one of each conjugate pair).
    Canonical,
    /// Both at once, the work weighing [`WORK_WEIGHT`]: the sieve's
    /// shares, whose mark bits cost memory for every position while its
    /// work falls on canonical ones (denser where top rows are long), each
    /// weighing [`work_of_top_row`].
    Both,
}

/// The weights of `units` for a split balancing `balance`.
fn balance_weights(ranking: &Ranking, n: u32, units: &[Vec<u8>], balance: Balance) -> Vec<u64> {
    match balance {
        Balance::All => unit_weights(ranking, n, units, false),
        Balance::Canonical => unit_weights(ranking, n, units, true),
        Balance::Both => {
            let (all, canonical) = (unit_weights(ranking, n, units, false), unit_weights(ranking, n, units, true));
            let work: Vec<f64> = canonical.iter().zip(units).map(|(&c, u)| unit_work(n, u, c, balance)).collect();
            let totals = (all.iter().sum::<u64>().max(1) as f64, work.iter().sum::<f64>().max(1.0));
            all.iter().zip(&work).map(|(&a, &w)| mixed_weight(a as f64, w, totals, WORK_WEIGHT)).collect()
        }
    }
}

/// The work of a unit of level `n` with `canonical` canonical positions,
/// as `balance` counts it (weighed by [`work_of_top_row`] for [`Balance::Both`]).
fn unit_work(n: u32, unit: &[u8], canonical: u64, balance: Balance) -> f64 {
    if balance == Balance::Both {
        canonical as f64 * work_of_top_row(n, unit[0] as u32)
    } else {
        canonical as f64
    }
}

/// The weight of a unit of `all` positions and `work` (of `totals` in
/// all) that balances both, the work weighing `work_weight`: each as a
/// share of its total, scaled to 2^41 (exact enough for balance, no overflow).
fn mixed_weight(all: f64, work: f64, totals: (f64, f64), work_weight: f64) -> u64 {
    (((1.0 - work_weight) * all / totals.0 + work_weight * work / totals.1) * (1u64 << 41) as f64) as u64
}

/// Share `part` of `parts` of level `n`: a contiguous run of its work
/// units, balanced as `balance` says. One part is the whole level.
pub fn level_share(ranking: &Ranking, n: u32, balance: Balance, part: usize, parts: usize) -> Vec<Vec<u8>> {
    let mut units = level_units(ranking, n);
    if parts == 1 {
        return units;
    }
    let mine = split_weighted(&balance_weights(ranking, n, &units, balance), parts, part);
    units.drain(mine).collect()
}

/// One split of a run of levels (an epoch of the sieve) into shares, cut
/// at the same units at every level: a share is the units from one key
/// (top row, second row) to the next, whatever the level. Its weights are
/// summed over the levels, so that the shares balance the run, not each
/// level. The sieve marks a loss's parents at every pending level: when
/// each level was cut on its own, the cuts rose with the level (top rows
/// grow as `√n`), a top row fell to different processes at different
/// levels, and each of them unranked and walked the losses of that top
/// row. With one cut, the parents that keep a loss's top row are its
/// scanner's (but at the cut's own top rows), and the processes do less
/// work in all and the largest less too (figures: docs/performance.md,
/// section "The cluster's shares").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cuts {
    /// `starts[p]`: the key of share `p`'s first unit; `starts[parts]` past every key.
    starts: Vec<(u32, u32)>,
}

/// A unit's key: its top row and second row (0 for a single row), in rank
/// order at every level.
fn unit_key(unit: &[u8]) -> (u32, u32) {
    (unit[0] as u32, unit.get(1).map_or(0, |&r| r as u32))
}

/// A key past every unit's: rows are bytes, so no unit reaches it (the
/// largest, two full rows of 255, must still fall before it).
const PAST_EVERY_KEY: (u32, u32) = (u32::MAX, u32::MAX);

impl Cuts {
    /// One share, every unit of every level.
    pub fn whole() -> Self {
        Cuts { starts: vec![(0, 0), PAST_EVERY_KEY] }
    }

    /// The split of `levels` into `parts` shares balancing `balance`
    /// summed over the levels (each level's positions and work counted
    /// as they are, not as shares of the level).
    pub fn new(ranking: &Ranking, levels: std::ops::RangeInclusive<u32>, balance: Balance, parts: usize) -> Self {
        let end = PAST_EVERY_KEY;
        if parts <= 1 {
            return Self::whole();
        }
        // Per key: all positions, and work (canonical positions weighed by their top row).
        let mut by_key = std::collections::BTreeMap::<(u32, u32), (f64, f64)>::new();
        let (mut all, mut work) = (0.0, 0.0);
        for n in levels {
            let units = level_units(ranking, n);
            let a = unit_weights(ranking, n, &units, false);
            let c = unit_weights(ranking, n, &units, balance != Balance::All);
            for ((u, &a), &c) in units.iter().zip(&a).zip(&c) {
                let w = unit_work(n, u, c, balance);
                let e = by_key.entry(unit_key(u)).or_default();
                (e.0, e.1) = (e.0 + a as f64, e.1 + w);
                (all, work) = (all + a as f64, work + w);
            }
        }
        let ww = if balance == Balance::Both { WORK_WEIGHT } else { 1.0 };
        let totals = (all.max(1.0), work.max(1.0));
        let weights: Vec<u64> = by_key.values().map(|&(a, w)| mixed_weight(a, w, totals, ww)).collect();
        let keys: Vec<(u32, u32)> = by_key.into_keys().collect();
        // A share with no unit starts where the next one does.
        let mut starts = vec![end; parts + 1];
        let mut next = keys.len();
        for p in (0..parts).rev() {
            let mine = split_weighted(&weights, parts, p);
            if !mine.is_empty() {
                next = mine.start;
            }
            starts[p] = keys.get(next).copied().unwrap_or(end);
        }
        Cuts { starts }
    }

    /// Which of a level's `units` (in rank order) are share `part`'s.
    fn mine(&self, units: &[Vec<u8>], part: usize) -> Range<usize> {
        let (lo, hi) = (self.starts[part], self.starts[part + 1]);
        let start = units.partition_point(|u| unit_key(u) < lo);
        start..units.partition_point(|u| unit_key(u) < hi).max(start)
    }

    /// The units of share `part` at level `n` (of the levels split), in rank order.
    pub fn units(&self, ranking: &Ranking, n: u32, part: usize) -> Vec<Vec<u8>> {
        let mut units = level_units(ranking, n);
        let mine = self.mine(&units, part);
        units.drain(mine).collect()
    }

    /// The rank range of share `part` at level `n`: the positions whose marks that part owns.
    pub fn range(&self, ranking: &Ranking, n: u32, part: usize) -> Range<u64> {
        let units = level_units(ranking, n);
        let mine = self.mine(&units, part);
        let size = |u: &[Vec<u8>]| u.iter().map(|u| prefix_size(ranking, n, u)).sum::<u64>();
        let first = size(&units[..mine.start]);
        first..first + size(&units[mine])
    }
}

/// Shares of an epoch each process holds with several processes: the
/// epoch's levels are cut into `processes × STRIPES` shares of equal
/// positions (so equal mark bits), dealt to the processes back and forth
/// ([`Layout::owner`]). The positions' work grows along the ranks (tall
/// positions first, rarely canonical); dealt back and forth, a process that
/// gets one of the first shares gets one of the last as well. Three
/// balance the work (model work: [`work_of_top_row`]) about as well as
/// four while each share more adds to every process's enumeration
/// (figures: docs/performance.md, section "The cluster's shares").
pub const STRIPES: usize = 3;

/// Which ranks of an epoch's levels each process owns: one [`Cuts`] into
/// shares of equal positions, and each share's process. Everything that
/// depends on who holds what (the sieve's mark bits and scans, the memory
/// model, the dry run, the report) reads it from here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    cuts: Cuts,
    processes: usize,
}

impl Layout {
    /// One process holding every rank.
    pub fn whole() -> Self {
        Layout { cuts: Cuts::whole(), processes: 1 }
    }

    /// The layout of `levels` among `processes` processes ([`STRIPES`] shares each).
    pub fn new(ranking: &Ranking, levels: std::ops::RangeInclusive<u32>, processes: usize) -> Self {
        if processes <= 1 {
            return Self::whole();
        }
        Layout { cuts: Cuts::new(ranking, levels, Balance::All, processes * STRIPES), processes }
    }

    /// Number of shares.
    pub fn shares(&self) -> usize {
        self.cuts.starts.len() - 1
    }

    /// The process owning share `share`: shares are dealt to processes
    /// `0, 1, …, K − 1`, then `K − 1, …, 0`, and so on.
    pub fn owner(&self, share: usize) -> usize {
        let (round, i) = (share / self.processes, share % self.processes);
        if round % 2 == 0 {
            i
        } else {
            self.processes - 1 - i
        }
    }

    /// The shares of `process`, in rank order.
    pub fn shares_of(&self, process: usize) -> Vec<usize> {
        (0..self.shares()).filter(|&s| self.owner(s) == process).collect()
    }

    /// The units of share `share` at level `n`, in rank order.
    pub fn units(&self, ranking: &Ranking, n: u32, share: usize) -> Vec<Vec<u8>> {
        self.cuts.units(ranking, n, share)
    }

    /// The rank range of share `share` at level `n`.
    pub fn range(&self, ranking: &Ranking, n: u32, share: usize) -> Range<u64> {
        self.cuts.range(ranking, n, share)
    }

    /// The positions of each share at level `n` (one pass over the level's units).
    pub fn share_positions(&self, ranking: &Ranking, n: u32) -> Vec<u64> {
        let units = level_units(ranking, n);
        let sizes: Vec<u64> = units.iter().map(|u| prefix_size(ranking, n, u)).collect();
        (0..self.shares()).map(|s| sizes[self.cuts.mine(&units, s)].iter().sum()).collect()
    }

    /// Number of processes.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// The positions each process owns at each of `levels`, summed.
    pub fn positions(&self, ranking: &Ranking, levels: std::ops::RangeInclusive<u32>) -> Vec<u64> {
        let mut out = vec![0; self.processes];
        for n in levels {
            for (s, len) in self.share_positions(ranking, n).into_iter().enumerate() {
                out[self.owner(s)] += len;
            }
        }
        out
    }
}

/// The shards of level `n` (table format 2): contiguous rank ranges in rank
/// order covering the level, each of at most `limit` positions. Shards are
/// cut between blocks of positions sharing a top row, packed greedily; a
/// top row with more than `limit` positions is cut between blocks sharing
/// its first two rows, and so on.
///
/// # Panics
/// When `limit` is 0.
pub fn shard_ranges(ranking: &Ranking, n: u32, limit: u64) -> Vec<Range<u64>> {
    assert!(limit > 0, "a shard holds at least one position");
    // The blocks in rank order, each at most `limit` positions.
    fn blocks(ranking: &Ranking, n: u32, prefix: &mut Vec<u8>, size: u64, limit: u64, out: &mut Vec<u64>) {
        let used: u32 = prefix.iter().map(|&r| r as u32).sum();
        if size <= limit || used == n {
            out.push(size);
            return;
        }
        let last = *prefix.last().expect("a non-empty prefix") as u32;
        for v in 1..=last.min(n - used) {
            prefix.push(v as u8);
            let size = prefix_size(ranking, n, prefix);
            if size > 0 {
                blocks(ranking, n, prefix, size, limit, out);
            }
            prefix.pop();
        }
    }
    let mut sizes = Vec::new();
    for c in 1..=n.min(ranking.max_part()) {
        let size = prefix_size(ranking, n, &[c as u8]);
        if size > 0 {
            blocks(ranking, n, &mut vec![c as u8], size, limit, &mut sizes);
        }
    }
    let mut shards = Vec::new();
    let (mut start, mut end) = (0u64, 0u64);
    for size in sizes {
        if end - start + size > limit {
            shards.push(start..end);
            start = end;
        }
        end += size;
    }
    shards.push(start..end);
    debug_assert_eq!(end, ranking.size(n));
    shards
}

/// Canonical positions per position below which a top row's mark bits are
/// sparse: [`dense_from`] leaves them off huge pages.
pub const DENSE: f64 = 1.0 / 8.0;

/// The first rank of level `n` whose mark bits are dense: that of the
/// first top row at least [`DENSE`] of whose positions are canonical (a
/// symmetric universe marks only those; elsewhere every position is, and
/// this is 0). The canonical share grows with the top row: at 110 tiles the
/// positions with top rows up to 16 are 22 % of the level and 1.4 % of its
/// canonical positions, and those from 17 on are held on huge pages. (The
/// first units of each top row, with many rows, are sparse too, but small:
/// leaving them off huge pages as well would cut the dense bits into pieces
/// shorter than a huge page, which was slower; figures: docs/performance.md,
/// section "The cluster's shares".)
pub fn dense_from(ranking: &Ranking, n: u32) -> u64 {
    if !ranking.universe().is_symmetric() {
        return 0;
    }
    let mut start = 0;
    for c in 1..=n.min(ranking.max_part()) {
        let top = [vec![c as u8]];
        let size = prefix_size(ranking, n, &top[0]);
        if unit_weights(ranking, n, &top, true)[0] as f64 >= DENSE * size as f64 {
            return start;
        }
        start += size;
    }
    start
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

    #[test]
    fn work_falls_with_the_top_row_without_a_jump() {
        for n in [16u32, 110, 150] {
            let work: Vec<f64> = (1..=n).map(|c| work_of_top_row(n, c)).collect();
            assert!(work.windows(2).all(|w| w[1] < w[0]), "level {n}: a longer top row never costs more");
            // Continuous at the knee: just below and just above it agree.
            let knee = WORK_TILT_KNEE * (n as f64).sqrt();
            let (below, above) = (work_of_top_row(n, knee.floor() as u32), work_of_top_row(n, knee.ceil() as u32 + 1));
            assert!(above < below && below / above < 1.5, "level {n}: {below} then {above}");
        }
    }

    #[test]
    fn level_shares_tile_every_level_in_order() {
        use crate::game::Universe;
        for u in [Universe::tiles(40), Universe::boxed(6, 9), Universe::boxed(7, 7)] {
            let ranking = Ranking::new(&u).unwrap();
            for n in 1..=u.max_tiles() {
                for balance in [Balance::All, Balance::Canonical, Balance::Both] {
                    for parts in 1..=5 {
                        let shares: Vec<Vec<u8>> = (0..parts).flat_map(|part| level_share(&ranking, n, balance, part, parts)).collect();
                        assert_eq!(shares, level_units(&ranking, n), "{u:?} level {n}, {parts} shares of {balance:?}");
                    }
                }
            }
        }
    }

    /// One cut of a run of levels: at every level the shares tile it in
    /// order and agree with their units, and a top row (but the few the
    /// cuts fall in, shared by second rows) is one share's at every level
    /// that has it; the shares of the run balance it.
    #[test]
    fn epoch_cuts_tile_every_level_at_the_same_top_rows() {
        use crate::game::Universe;
        for u in
            [Universe::tiles(40), Universe::boxed(6, 9), Universe::boxed(7, 7), Universe { rows: Some(1), cols: None, tiles: Some(12) }]
        {
            let ranking = Ranking::new(&u).unwrap();
            let top = u.max_tiles();
            for (from, to) in [(1, top), (top / 2, top), (top, top)] {
                for parts in 1..=5 {
                    let cuts = Cuts::new(&ranking, from..=to, Balance::Both, parts);
                    // owner[c]: the shares holding top row c at some level.
                    let mut owners = vec![std::collections::BTreeSet::new(); 256];
                    let mut positions = vec![0u64; parts];
                    for n in from..=to {
                        let mut next = 0;
                        for (part, held) in positions.iter_mut().enumerate() {
                            let range = cuts.range(&ranking, n, part);
                            let units = cuts.units(&ranking, n, part);
                            assert_eq!(units.iter().map(|p| prefix_size(&ranking, n, p)).sum::<u64>(), range.end - range.start);
                            if !range.is_empty() {
                                assert_eq!(range.start, next, "{u:?} level {n}, share {part} of {parts}");
                                next = range.end;
                            }
                            for unit in &units {
                                owners[unit[0] as usize].insert(part);
                            }
                            *held += range.end - range.start;
                        }
                        assert_eq!(next, ranking.size(n), "{u:?} level {n}: the shares cover it");
                    }
                    let shared = owners.iter().filter(|o| o.len() > 1).count();
                    assert!(shared < parts, "{u:?} {from}..={to}, {parts} shares: {shared} top rows in several");
                    // Every share holds some of a run of many positions.
                    let total: u64 = positions.iter().sum();
                    if total >= 1000 * parts as u64 && from < to {
                        assert!(positions.iter().all(|&p| p > 0), "{u:?} {from}..={to}: {positions:?}");
                    }
                }
            }
        }
    }

    /// The layout of an epoch: each process owns STRIPES shares, dealt back
    /// and forth; the shares tile every level; each process's positions
    /// are within a few percent of an even share, and its canonical
    /// positions (the work) within 20 %, where one share each leaves the
    /// first process with far more positions than the last.
    #[test]
    fn layouts_balance_positions_and_canonical_positions() {
        use crate::game::Universe;
        let ranking = Ranking::new(&Universe::tiles(70)).unwrap();
        for k in [2, 3, 4, 8] {
            let layout = Layout::new(&ranking, 1..=70, k);
            assert_eq!(layout.shares(), k * STRIPES);
            for p in 0..k {
                assert_eq!(layout.shares_of(p).len(), STRIPES, "{k} processes, process {p}");
            }
            let mut canonical = vec![0u64; k];
            for n in 1..=70 {
                let lens = layout.share_positions(&ranking, n);
                let mut next = 0;
                for (s, &len) in lens.iter().enumerate() {
                    let r = layout.range(&ranking, n, s);
                    assert_eq!(r.end - r.start, len, "level {n} share {s}");
                    if len > 0 {
                        assert_eq!(r.start, next, "level {n} share {s}");
                        next = r.end;
                    }
                    let units = layout.units(&ranking, n, s);
                    canonical[layout.owner(s)] += unit_weights(&ranking, n, &units, true).iter().sum::<u64>();
                }
                assert_eq!(next, ranking.size(n), "level {n}: the shares cover it");
            }
            let held = layout.positions(&ranking, 1..=70);
            let ratio = |xs: &[u64]| *xs.iter().max().unwrap() as f64 * k as f64 / xs.iter().sum::<u64>() as f64;
            // (At 70 tiles 24 shares are cut from few units: a coarser fit.)
            let bound = if k <= 4 { 1.06 } else { 1.10 };
            assert!(ratio(&held) < bound, "{k} processes: positions {held:?}");
            assert!(ratio(&canonical) < 1.2, "{k} processes: canonical positions {canonical:?}");
        }
        let one_each = Cuts::new(&ranking, 1..=70, Balance::All, 4);
        let canonical: Vec<u64> = (0..4)
            .map(|p| (1..=70).map(|n| unit_weights(&ranking, n, &one_each.units(&ranking, n, p), true).iter().sum::<u64>()).sum())
            .collect();
        assert!(canonical[3] > 2 * canonical[0], "one share each: canonical positions {canonical:?}");
    }

    /// Rows are bytes: the last unit of a level can be two full rows of
    /// 255, and the key past every unit must still lie beyond it.
    #[test]
    fn cuts_hold_the_units_of_two_full_rows_of_255() {
        use crate::game::Universe;
        let ranking = Ranking::new(&Universe::boxed(3, 255)).unwrap();
        for n in [510, 600, 765] {
            let units = level_units(&ranking, n);
            assert_eq!(units.last().unwrap(), &vec![255, 255], "level {n}");
            assert_eq!(Cuts::whole().units(&ranking, n, 0), units, "level {n}");
            assert_eq!(Cuts::whole().range(&ranking, n, 0), 0..ranking.size(n), "level {n}");
            for parts in [2, 3] {
                let cuts = Cuts::new(&ranking, n..=n, Balance::Both, parts);
                let all: Vec<Vec<u8>> = (0..parts).flat_map(|p| cuts.units(&ranking, n, p)).collect();
                assert_eq!(all, units, "level {n}, {parts} shares");
                assert_eq!(cuts.range(&ranking, n, parts - 1).end, ranking.size(n), "level {n}, {parts} shares");
            }
        }
    }

    #[test]
    fn dense_bits_start_at_the_first_top_row_mostly_canonical() {
        use crate::game::Universe;
        let ranking = Ranking::new(&Universe::tiles(36)).unwrap();
        for n in [1, 2, 9, 20, 36] {
            let from = dense_from(&ranking, n);
            // Top row by top row, counted position by position.
            let (mut start, mut canonical, mut before) = (0, 0, 0);
            for c in 1..=n {
                let size = prefix_size(&ranking, n, &[c as u8]);
                let can = (start..start + size)
                    .filter(|&r| {
                        let p = ranking.unrank(n, r).unwrap();
                        p.rows().len() <= p.rows()[0] as usize
                    })
                    .count() as u64;
                if start < from {
                    assert!(start + size <= from, "level {n}: top rows are not cut");
                    assert!((can as f64) < DENSE * size as f64, "level {n} top row {c}: {can} of {size} canonical, sparse");
                    before += can;
                } else if start == from && size > 0 {
                    assert!(can as f64 >= DENSE * size as f64, "level {n} top row {c}: {can} of {size} canonical, dense");
                }
                canonical += can;
                start += size;
            }
            assert!(before * 20 <= canonical, "level {n}: {before} of {canonical} canonical positions off huge pages");
        }
        // Where every position is marked, every bit is dense.
        assert_eq!(dense_from(&Ranking::new(&Universe::boxed(5, 8)).unwrap(), 20), 0);
    }

    #[test]
    fn shards_tile_the_level_within_the_limit() {
        use crate::game::Universe;
        for u in [Universe::tiles(30), Universe::boxed(5, 9)] {
            let ranking = Ranking::new(&u).unwrap();
            for n in 1..=u.max_tiles() {
                let size = ranking.size(n);
                for limit in [1, 7, 100, 1000, size.max(1)] {
                    let shards = shard_ranges(&ranking, n, limit);
                    assert_eq!(shards[0].start, 0);
                    assert_eq!(shards.last().unwrap().end, size);
                    assert!(shards.windows(2).all(|w| w[0].end == w[1].start && !w[1].is_empty()));
                    assert!(shards.iter().all(|s| s.end - s.start <= limit));
                    // Where every top row fits, shards are cut between top rows.
                    let widest = (1..=n).map(|c| prefix_size(&ranking, n, &[c.min(255) as u8])).max().unwrap();
                    if limit >= widest {
                        for s in &shards[1..] {
                            let (a, b) = (ranking.unrank(n, s.start - 1).unwrap(), ranking.unrank(n, s.start).unwrap());
                            assert_ne!(a.rows()[0], b.rows()[0], "level {n} limit {limit}");
                        }
                    }
                }
            }
        }
    }
}
