//! The check inside every level. Once a level is decided and its tables are
//! written, a seeded sample of its positions is read back through the
//! tables (the reader users have, on the run's own manifest) and checked
//! against the rules of the game with the levels below: a loss has no
//! losing child, a win has one, a Grundy value is the mex of its children's
//! and 0 exactly for a loss, a position and its conjugate agree. Each
//! sampled position's outcome in the tables must also be the sieve's. Half
//! the sample is drawn among the level's losses: a mark lost by the sieve
//! makes a win look like a loss, and losses are rare (about 1.4 % at 100
//! tiles). A failure stops the run before the level is checkpointed.
//!
//! The check reads block-addressable tables (format 3, the default): a run
//! writing formats 1 or 2 is not checked inside its levels (the run says
//! so; `chomp verify` checks it afterwards).

use crate::cluster::Comm;
use crate::read::verify::check_position;
use crate::read::{Outcome, Tables};
use crate::rng::SplitMix;
use crate::store::{LevelCheck, Manifest, SortedRanks};
use rayon::prelude::*;
use std::path::Path;

/// The most positions checked per level by default.
pub const CHECK_SAMPLES: u64 = 10_000;

/// A level's sample is one position in this many (2^23), within
/// [`MIN_SAMPLES`]..=the most asked for. A sampled position costs a full
/// answer read back through the tables, the sieve a few nanoseconds a
/// position: at this rate the check stays within about 2 % of a large
/// level's time, and far less where Grundy values are computed (figures:
/// docs/performance.md, section "The in-run check's sample"). Small
/// levels get [`MIN_SAMPLES`].
const SAMPLE_EVERY: u64 = 1 << 23;

/// The fewest positions checked per level (every position of a smaller one).
const MIN_SAMPLES: u64 = 64;

/// The positions checked at a level of `size` positions when at most `most` are asked for.
pub(super) fn sample_size(size: u64, most: u64) -> u64 {
    (size / SAMPLE_EVERY).clamp(MIN_SAMPLES.min(most), most).min(size)
}

/// Positions drawn at random among a level's positions with a full top row
/// (as long as the universe allows), beside [`edge_ranks`]' fixed ones.
const EDGE_SAMPLES: u64 = 8;

/// The positions of level `n` at the edge of the universe, which a sample
/// drawn at random rarely meets and where a bound is most easily handled
/// wrong: the first (the most rows), the last (the most full rows), and for
/// `j` of 1, 2 and the most full rows there are room for, less one, the
/// first position with `j` full top rows (its other rows as even as they
/// go, so as many as the universe allows). Ranks, increasing, distinct.
pub(super) fn edge_ranks(ranking: &crate::index::Ranking, n: u32) -> Vec<u64> {
    let size = ranking.size(n);
    if size == 0 {
        return Vec::new();
    }
    let universe = ranking.universe();
    let rows = universe.rows.unwrap_or(n).min(n);
    let cols = universe.cols.unwrap_or(n).min(n);
    let most_full = n / cols;
    let mut ranks = vec![0, size - 1];
    for j in [1, 2, most_full.saturating_sub(1), most_full] {
        if j == 0 || j > rows || j * cols > n {
            continue;
        }
        // The rest, `n − j·cols` tiles, in at most `rows − j` rows of at most `cols`, each as short as it goes.
        let (mut left, mut k) = (n - j * cols, rows - j);
        if left as u64 > k as u64 * cols as u64 {
            continue;
        }
        let mut p: Vec<u8> = vec![cols as u8; j as usize];
        while left > 0 {
            let r = left.div_ceil(k);
            p.push(r as u8);
            (left, k) = (left - r, k - 1);
        }
        ranks.push(ranking.rank_rows(&p));
    }
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// The positions the check of level `n` takes when at most `most` are
/// asked for: its sample ([`sample_size`]), and beside a sample of part of
/// the level its edge ([`edge_ranks`], and [`EDGE_SAMPLES`] with a full top row).
pub(super) fn checked_positions(ranking: &crate::index::Ranking, n: u32, most: u64) -> u64 {
    let size = ranking.size(n);
    let count = sample_size(size, most);
    if count == size || count == 0 {
        return count;
    }
    let drawn = if full_top_rows(ranking, n) > 0 { EDGE_SAMPLES } else { 0 };
    // Never more than the level: one that small is checked whole.
    (count + edge_ranks(ranking, n).len() as u64 + drawn).min(size)
}

/// How many positions of level `n` have a full top row (the universe's
/// widest, or all `n` tiles in one row): the last ranks of the level.
fn full_top_rows(ranking: &crate::index::Ranking, n: u32) -> u64 {
    let cols = ranking.universe().cols.unwrap_or(n).min(n);
    crate::index::split::prefix_size(ranking, n, &[cols as u8])
}

/// Bytes of decoded blocks the check's reader caches: the small levels its
/// children fall in most often stay cached.
pub(super) const CHECK_CACHE_BYTES: usize = 64 << 20;

/// Problems reported at most per level (the count is always given).
const SHOWN: usize = 5;

/// The check's reader of the run's tables, opened at the first level
/// checked and advanced to each manifest (its cache kept).
pub struct Checker {
    tables: Option<Tables>,
    samples: u64,
}

/// What the check of one level found, over every process.
#[derive(Debug, Default)]
pub struct Checked {
    /// Positions checked.
    pub positions: u64,
    /// Of them, losses.
    pub losses: u64,
    /// Problems found.
    pub failed: u64,
    /// The first few of them ([`SHOWN`]), described.
    pub failures: Vec<String>,
}

impl Checked {
    /// What the manifest records of the check of level `n` (`None` when
    /// nothing was checked), or why the level fails it.
    ///
    /// # Errors
    /// One line naming the level and the first problems.
    pub fn record(&self, n: u32) -> Result<Option<LevelCheck>, String> {
        if self.failed > 0 {
            return Err(format!(
                "level {n}: {} of the {} positions checked break the rules of the game in the tables written: {}",
                self.failed,
                self.positions,
                self.failures.join("; ")
            ));
        }
        Ok((self.positions > 0).then_some(LevelCheck { tiles: n, positions: self.positions, losses: self.losses }))
    }

    fn to_bytes(&self) -> Vec<u8> {
        let head = [self.positions, self.losses, self.failed].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
        [head, self.failures.join("\n").into_bytes()].concat()
    }

    fn from_bytes(b: &[u8]) -> Self {
        let v = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let text = String::from_utf8_lossy(&b[24..]);
        Checked { positions: v(0), losses: v(1), failed: v(2), failures: text.lines().map(str::to_owned).collect() }
    }

    fn add(mut self, other: Checked) -> Checked {
        self.positions += other.positions;
        self.losses += other.losses;
        self.failed += other.failed;
        self.failures.extend(other.failures);
        self.failures.truncate(SHOWN);
        self
    }
}

impl Checker {
    /// A check of at most `samples` positions per level (0: none).
    pub fn new(samples: u64) -> Self {
        Checker { tables: None, samples }
    }

    /// Whether levels of `manifest`'s run are checked (format 3, a sample asked for).
    pub fn active(&self, manifest: &Manifest) -> bool {
        self.samples > 0 && manifest.is_blocked()
    }

    /// Checks level `n`, the last `manifest` lists (its tables written,
    /// `losses` its losses, increasing), on every process of `comm` (each
    /// checks every `processes`-th sample position); every process returns
    /// the same counts.
    ///
    /// A collective: every process calls it at every level, in the same
    /// order as the driver's other collectives, whatever it checks.
    pub fn check(&mut self, dir: &Path, manifest: &Manifest, n: u32, losses: &(impl SortedRanks + ?Sized), comm: &dyn Comm) -> Checked {
        let mine = if self.active(manifest) { self.check_share(dir, manifest, n, losses, comm) } else { Checked::default() };
        if comm.processes() == 1 {
            return mine;
        }
        comm.all_gather(&mine.to_bytes()).iter().map(|b| Checked::from_bytes(b)).fold(Checked::default(), Checked::add)
    }

    fn check_share(&mut self, dir: &Path, manifest: &Manifest, n: u32, losses: &(impl SortedRanks + ?Sized), comm: &dyn Comm) -> Checked {
        let tables = match self.tables.take() {
            Some(mut t) => {
                t.advance(manifest.clone());
                t
            }
            None => match Tables::with_manifest(dir, manifest.clone(), CHECK_CACHE_BYTES) {
                Ok(t) => t,
                Err(e) => return Checked { failed: 1, failures: vec![e.to_string()], ..Default::default() },
            },
        };
        let size = tables.ranking().size(n);
        let sym = manifest.universe.is_symmetric();
        // A level no larger than its sample is checked whole; a larger one
        // also at its edge: fixed positions, and some with a full top row.
        let count = sample_size(size, self.samples);
        let total = checked_positions(tables.ranking(), n, self.samples);
        let whole = total == size;
        let edges = if whole || count == 0 { Vec::new() } else { edge_ranks(tables.ranking(), n) };
        let full = full_top_rows(tables.ranking(), n);
        let (process, processes) = (comm.process(), comm.processes());
        let t = &tables;
        // Once: a compact set counts its losses container by container.
        let loss_count = losses.count();
        let found = (0..total)
            .into_par_iter()
            .filter(|i| i % processes as u64 == process as u64)
            .map(|i| {
                let rank = if whole {
                    i
                } else if let Some(&edge) = i.checked_sub(count).and_then(|e| edges.get(e as usize)) {
                    edge
                } else if i >= count {
                    let mut rng = SplitMix((n as u64) << 40 ^ i);
                    size - full + rng.below(full)
                } else {
                    // The same positions on every rerun, however the work is split.
                    let mut rng = SplitMix((n as u64) << 40 ^ i);
                    if i % 2 == 1 && loss_count > 0 {
                        losses.nth_rank(rng.below(loss_count)).expect("a rank below the count")
                    } else {
                        rng.below(size)
                    }
                };
                let loss = losses.holds(rank);
                let p = t.ranking().unrank(n, rank).expect("a rank below the level's size");
                let mut failures = Vec::new();
                match check_position(t, &p, rank, sym) {
                    Err(e) => failures.push(e),
                    Ok(outcome) if (outcome == Outcome::Loss) != loss => failures.push(format!(
                        "position {p}: a {} in the tables written, the sieve found a {}",
                        outcome.as_str(),
                        if loss { "loss" } else { "win" }
                    )),
                    Ok(_) => {}
                }
                Checked { positions: 1, losses: loss as u64, failed: failures.len() as u64, failures }
            })
            .reduce(Checked::default, Checked::add);
        self.tables = Some(tables);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Solo;
    use crate::game::Universe;
    use crate::index::Ranking;
    use crate::solve::{run, Options, Plan};
    use crate::store::{Manifest, TableDir};

    /// A run to `top` tiles (Grundy values to `grundy`) in a fresh directory.
    fn solved(top: u32, grundy: u32) -> (tempfile::TempDir, Manifest) {
        let tmp = tempfile::tempdir().unwrap();
        let m = run(&Plan::new(Universe::tiles(top), grundy), &Options::new(tmp.path()), |_| {}).unwrap();
        (tmp, m)
    }

    /// `m` with level `n`'s loss table rewritten to hold `ranks`.
    fn rewritten(dir: &Path, m: &Manifest, n: u32, ranks: &[u64]) -> Manifest {
        let mut m = m.clone();
        let size = m.levels[n as usize - 1].positions;
        let written = TableDir::new(dir).write_losses(&m, n, size, &ranks.to_vec(), None, |_| true).unwrap();
        m.add_entries(written);
        m.levels[n as usize - 1].losses = ranks.len() as u64;
        m
    }

    #[test]
    fn a_run_records_a_passing_check_of_every_level() {
        let (tmp, m) = solved(40, 20);
        assert_eq!(m.checks.len(), 40);
        for (c, l) in m.checks.iter().zip(&m.levels) {
            assert_eq!(c.tiles, l.tiles);
            let sample = sample_size(l.positions, CHECK_SAMPLES);
            // Small levels whole (their losses all counted), larger ones at
            // least half losses, and their edge besides.
            if c.positions == l.positions {
                assert_eq!(c.positions, sample);
                assert_eq!(c.losses, l.losses, "level {}", c.tiles);
            } else {
                let edge = edge_ranks(&Ranking::new(&Universe::tiles(40)).unwrap(), l.tiles).len() as u64 + EDGE_SAMPLES;
                assert_eq!(c.positions, sample + edge, "level {}", c.tiles);
                assert_eq!(c.positions, checked_positions(&Ranking::new(&Universe::tiles(40)).unwrap(), l.tiles, CHECK_SAMPLES));
                assert!(c.losses >= sample / 2 && c.losses <= c.positions, "level {}: {c:?}", c.tiles);
            }
        }
        // The manifest written lists them and reads back.
        assert_eq!(TableDir::new(tmp.path()).read_manifest().unwrap().checks, m.checks);
    }

    #[test]
    fn a_lost_mark_is_found_in_the_level_that_loses_it() {
        let (tmp, m) = solved(12, 0);
        let n = 10; // 42 positions: checked whole
        let mut losses: Vec<u64> = TableDir::new(tmp.path()).read_losses(&m, n).unwrap().iter().collect();
        // Tables that differ from the sieve's losses are found.
        let dropped = losses.pop().unwrap();
        let found = Checker::new(CHECK_SAMPLES).check(tmp.path(), &m, n, &losses, &Solo);
        assert_eq!(found.positions, 42);
        assert_eq!(found.failed, 1, "{found:?}");
        assert!(found.failures[0].contains("the sieve found a win"), "{found:?}");
        losses.push(dropped);
        let win = (0..m.levels[n as usize - 1].positions).find(|r| !losses.contains(r)).unwrap();
        // The sieve missed one mark of `win`: it looks like a loss, in the table and to the sieve.
        losses.push(win);
        losses.sort();
        let bad = rewritten(tmp.path(), &m, n, &losses);
        let found = Checker::new(CHECK_SAMPLES).check(tmp.path(), &bad, n, &losses, &Solo);
        assert_eq!(found.positions, 42);
        assert!(found.failed >= 1, "{found:?}");
        assert!(found.failures[0].contains("is a loss in"), "{found:?}");
    }

    /// The edge of a box: its first and last positions, and the first with
    /// one, two, and the most full top rows, the rest as many rows as fit.
    #[test]
    fn the_edge_of_a_level_is_its_fullest_rows_and_columns() {
        let ranking = Ranking::new(&Universe::boxed(3, 255)).unwrap();
        let edge =
            |n: u32| -> Vec<Vec<u8>> { edge_ranks(&ranking, n).iter().map(|&r| ranking.unrank(n, r).unwrap().into_rows()).collect() };
        assert_eq!(edge(713), [vec![238, 238, 237], vec![255, 229, 229], vec![255, 255, 203]]);
        assert_eq!(edge(300), [vec![100, 100, 100], vec![255, 23, 22], vec![255, 45]]);
        assert_eq!(edge(765), [vec![255, 255, 255]]);
        assert_eq!(edge(2), [vec![1, 1], vec![2]]);
        assert_eq!(full_top_rows(&ranking, 713), 27, "255 a b with a + b = 458");
        assert_eq!(full_top_rows(&ranking, 300), 23);
        let tall = Ranking::new(&Universe::boxed(255, 3)).unwrap();
        let n = 600;
        let rows: Vec<Vec<u8>> = edge_ranks(&tall, n).iter().map(|&r| tall.unrank(n, r).unwrap().into_rows()).collect();
        assert_eq!(rows[0], [vec![3u8; 90], vec![2; 165]].concat(), "the most rows first");
        assert_eq!(rows.last().unwrap(), &vec![3u8; 200], "the most full rows last");
    }

    #[test]
    fn the_sample_is_a_share_of_the_level_within_bounds() {
        // The edge on top of a sample never takes more than the level.
        let ranking = Ranking::new(&Universe::tiles(16)).unwrap();
        assert_eq!(ranking.size(13), 101);
        assert_eq!(checked_positions(&ranking, 13, CHECK_SAMPLES), 64 + 2 + EDGE_SAMPLES);
        assert_eq!(ranking.size(12), 77);
        assert_eq!(checked_positions(&ranking, 12, CHECK_SAMPLES), 74, "64, its first and last, 8 with a full top row");
        assert_eq!(ranking.size(11), 56);
        assert_eq!(checked_positions(&ranking, 11, CHECK_SAMPLES), 56, "whole");
        assert_eq!(checked_positions(&ranking, 16, 0), 0);
        assert_eq!(sample_size(42, 10_000), 42);
        assert_eq!(sample_size(5_604, 10_000), 64);
        assert_eq!(sample_size(607_163_746, 10_000), 72);
        assert_eq!(sample_size(1_844_349_560, 10_000), 219);
        assert_eq!(sample_size(1_844_349_560, 100), 100);
        assert_eq!(sample_size(1 << 40, 10_000), 10_000);
        assert_eq!(sample_size(1_000, 0), 0);
    }
}
