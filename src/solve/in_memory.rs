//! A universe solved into memory, with no table directory: the box sieve
//! over boundary words ([`super::words`]) where it fits, else the loss
//! sieve level by level (the same [`Frontier`] a run uses), its losses kept as
//! sorted ranks. No thread pool set-up beyond rayon's, no files, no lock, no
//! checkpoints: what `chomp openings --rows R --cols C` and a front end
//! solving a small board on demand need (a 12×12 box takes milliseconds).

use super::sieve::Frontier;
use super::Plan;
use crate::cluster::Solo;
use crate::game::{Position, Universe};
use crate::index::Ranking;
use crate::read::openings::{box_counts, rectangle_opening_with, BoxCount, Opening};
use crate::read::Tables;
use crate::report::summary::LevelStats;
use crate::report::Progress;
use roaring::RoaringBitmap;
use std::convert::Infallible;

/// Every loss of a universe, by level.
pub struct Solved {
    ranking: Ranking,
    /// `losses[n]`: the ranks of the losses with `n` tiles, increasing (`losses[0]` empty).
    losses: Vec<Vec<u64>>,
}

/// Errors of [`solve_in_memory`].
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// The universe is invalid or too large to rank.
    #[error("{0}")]
    Universe(#[from] crate::game::UniverseError),
    /// The mark bits could not be mapped.
    #[error("cannot map memory for the mark bits: {0}")]
    Memory(#[from] std::io::Error),
    /// The mark bits alone would not fit in the memory available.
    #[error("the mark bits need {need}, more than the {available} available")]
    TooLarge {
        /// The mark bits' size, in words.
        need: String,
        /// The memory available, in words.
        available: String,
    },
}

/// Bytes of the mark bits [`solve_in_memory`] holds at its start (one bit
/// per position of the first epoch's levels); the losses add 8 bytes each.
pub fn mark_bytes(ranking: &Ranking) -> u64 {
    super::sieve::Frontier::pending_bytes(ranking, 1, super::sieve::Holding::SOLO)
}

/// Whether [`solve_in_memory`] takes the word sieve for `universe`: where a
/// run of one process would (a small box whose bits fit in half the
/// memory available).
pub fn uses_word_sieve(universe: &Universe) -> bool {
    super::words::chosen(universe, super::memory::holding(None, false, &Solo)).is_some()
}

/// Solves every level of `universe` into memory (the loss sieve; no Grundy
/// values). Memory: the mark bits of the pending levels (one bit per
/// position, released level by level) and the losses (8 bytes each).
///
/// # Errors
/// [`SolveError`] for an invalid universe or when memory cannot be mapped.
pub fn solve_in_memory(universe: &Universe) -> Result<Solved, SolveError> {
    solve_in_memory_watched(universe, &Progress::default())
}

/// [`solve_in_memory`], reporting how far it has gone in `progress`
/// (positions decided, or the word sieve's place in its scan).
///
/// # Errors
/// As [`solve_in_memory`].
pub fn solve_in_memory_watched(universe: &Universe, progress: &Progress) -> Result<Solved, SolveError> {
    let ranking = Ranking::new(universe)?;
    if uses_word_sieve(universe) {
        let losses = super::words::box_losses_watched(&ranking, rayon::current_num_threads(), progress)?.ranks;
        return Ok(Solved { ranking, losses });
    }
    let need = mark_bytes(&ranking);
    if let Some(available) = super::memory::available_memory() {
        if need > available {
            let h = super::memory::human_bytes;
            return Err(SolveError::TooLarge { need: h(need), available: h(available) });
        }
    }
    let total: u64 = (1..=ranking.max_tiles()).map(|n| ranking.size(n)).sum();
    progress.total.store(total, std::sync::atomic::Ordering::Relaxed);
    let mut done = 0;
    let mut n = 0;
    let losses = sieve_levels(&ranking, Frontier::new(&ranking, 0, &Solo, super::sieve::Holding::SOLO)?, |_| {
        n += 1;
        done += ranking.size(n);
        progress.done.store(done, std::sync::atomic::Ordering::Relaxed);
    })?;
    Ok(Solved { ranking, losses })
}

/// Every loss of a universe by the level sieve, in memory (the word
/// sieve's tests compare with it).
#[cfg(test)]
pub(super) fn level_losses(ranking: &Ranking) -> std::io::Result<Vec<Vec<u64>>> {
    sieve_levels(ranking, Frontier::new(ranking, 0, &Solo, super::sieve::Holding::SOLO)?, |_| {})
}

/// Every loss of a universe by the level sieve, in memory: `losses[n]`,
/// the ranks of level `n` (`losses[0]` empty), from a `frontier` of no
/// decided level, calling `after_level` once each level is sieved. A box's
/// second epoch gets the losses of the first pushed again when it opens.
///
/// # Errors
/// When the mark bits of a later epoch cannot be mapped.
pub(super) fn sieve_levels(
    ranking: &Ranking,
    mut frontier: Frontier,
    mut after_level: impl FnMut(&Frontier),
) -> std::io::Result<Vec<Vec<u64>>> {
    let mut losses = vec![Vec::new()];
    for n in 1..=ranking.max_tiles() {
        losses.push(frontier.sieve_level(ranking, n, &Solo).ranks.iter().collect());
        after_level(&frontier);
        if n == frontier.horizon() && n < ranking.max_tiles() {
            frontier.open_epoch(ranking, &Solo)?;
            for (l, ranks) in losses.iter().enumerate().skip(1) {
                frontier.push_decided(ranking, l as u32, ranks, n + 1);
            }
        }
    }
    Ok(losses)
}

impl Solved {
    /// The ranking of the universe.
    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    /// The universe solved.
    pub fn universe(&self) -> &Universe {
        self.ranking.universe()
    }

    /// The loss ranks of level `n`, increasing (empty outside `1..=max_tiles`).
    pub fn losses(&self, n: u32) -> &[u64] {
        self.losses.get(n as usize).map_or(&[], |v| v.as_slice())
    }

    /// Whether `p` loses for the player to move; `None` when `p` lies
    /// outside the universe (its transpose is tried in a symmetric one).
    pub fn is_loss(&self, p: &Position) -> Option<bool> {
        let u = self.universe();
        let rows = if u.contains(p) {
            p.rows().to_vec()
        } else {
            let t = p.conjugate();
            if !u.contains(&t) {
                return None;
            }
            t.rows().to_vec()
        };
        let n = p.tiles();
        let rank = self.ranking.rank_rows(&rows);
        Some(self.losses(n).binary_search(&rank).is_ok())
    }

    /// The winning first moves of the rectangle `rows × cols`, or `None`
    /// when it is not inside the universe (nor its transpose).
    pub fn rectangle_opening(&self, rows: u32, cols: u32) -> Option<Opening> {
        let p = Position::new(&vec![cols; rows as usize]).ok()?;
        self.is_loss(&p)?;
        Some(rectangle_opening_with(rows, cols, |c| self.is_loss(c).expect("a child of a position inside")))
    }

    /// The winning first moves of every rectangle inside the universe, by
    /// rows then columns.
    pub fn rectangle_openings(&self) -> Vec<Opening> {
        let (rows, cols) = self.bounds();
        let top = self.ranking.max_tiles();
        let mut out = Vec::new();
        for r in 1..=rows {
            for c in 1..=cols {
                if r * c <= top {
                    out.extend(self.rectangle_opening(r, c));
                }
            }
        }
        out
    }

    /// The losses as [`Tables`] (in memory, no Grundy values): what the
    /// computer player and every probe take.
    ///
    /// # Panics
    /// When a level holds 2³² positions or more (boxes beyond anything
    /// solvable in memory).
    pub fn tables(&self) -> Tables {
        let mut manifest = Plan::new(*self.universe(), 0).manifest(&self.ranking);
        let mut levels = Vec::new();
        for n in 1..=self.ranking.max_tiles() {
            let ranks = self.losses(n);
            let bits = RoaringBitmap::from_sorted_iter(ranks.iter().map(|&r| u32::try_from(r).expect("a level below 2^32 positions")))
                .expect("increasing ranks");
            manifest.levels.push(LevelStats {
                tiles: n,
                positions: self.ranking.size(n),
                losses: ranks.len() as u64,
                ..Default::default()
            });
            levels.push(bits);
        }
        manifest.levels_complete = self.ranking.max_tiles();
        manifest.complete = true;
        Tables::in_memory(manifest, levels).expect("a manifest made for these levels")
    }

    /// Positions and losses of every box inside a box universe, by rows then columns.
    pub fn box_counts(&self) -> Vec<BoxCount> {
        let (rows, cols) = self.bounds();
        let levels = (1..=self.ranking.max_tiles()).map(|n| Ok::<_, Infallible>((n, self.losses(n).to_vec())));
        match box_counts(&self.ranking, rows, cols, levels) {
            Ok(b) => b,
            Err(e) => match e {},
        }
    }

    /// Largest row count and row length (bounded by the tile count).
    fn bounds(&self) -> (u32, u32) {
        let u = self.universe();
        let top = self.ranking.max_tiles();
        (u.rows.unwrap_or(top).min(top), u.cols.unwrap_or(top).min(top))
    }
}
