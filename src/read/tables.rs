//! Probing a table directory: outcome, Grundy value, winning moves and all
//! moves of a position, read lazily from the published tables.

use super::answer::{write_answer_json, Answer, CheckedAnswer, CheckedMove, MoveInfo, Outcome};
use super::blocks::{BlockReader, DEFAULT_CACHE_BYTES};
use crate::game::position::{child_rows_into, conjugate_rows_into};
use crate::game::Position;
use crate::index::Ranking;
use crate::store::{GrundyTable, Kind, LossSet, Manifest, ManifestError, TableDir, TableError};
use roaring::RoaringBitmap;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Errors of a probe: about the question, or about the tables.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The position is not covered by the tables' universe (nor is its transpose).
    #[error("position {position} ({size}) is outside the tables ({universe})")]
    Outside {
        /// The position asked about.
        position: String,
        /// Its size: rows, columns and tiles.
        size: String,
        /// The tables' bounds.
        universe: String,
    },
    /// The question needs the tables of a box; these hold another universe.
    #[error("box counts need the tables of a box (a run with --rows and --cols); these hold {universe}")]
    NotABox {
        /// The tables' universe.
        universe: String,
    },
    /// The level is beyond what the run has completed.
    #[error("level {tiles} is not in the tables ({})", missing_level_reason(*complete))]
    MissingLevel {
        /// The level asked about.
        tiles: u32,
        /// Levels completed.
        complete: u32,
    },
    /// The tables are damaged or unreadable.
    #[error("{0}")]
    Table(#[from] TableError),
    /// The manifest is missing or damaged.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// The directory's manifest is not the pinned (published) one
    /// ([`Tables::open_against`]): no answer is given from it.
    #[error("{dir}: manifest.json differs from the published manifest {against}: these are not the published tables (refused whole; `chomp verify --tables {dir} --against {against}` names the files that differ)")]
    NotPublished {
        /// The table directory.
        dir: String,
        /// The published manifest it was pinned to.
        against: String,
    },
    /// The tables contradict the rules of the game at a position: they are
    /// damaged (every checksum may still hold), and no answer is given.
    #[error("{dir}: damaged tables: {what}")]
    Contradiction {
        /// The table directory.
        dir: String,
        /// What the tables say, naming the tables that say it.
        what: String,
    },
}

/// The levels a run has completed, in words: "levels 1-12 are complete",
/// "only level 1 is complete", or "no level is complete yet" (how every
/// message names a manifest's `levels_complete`).
pub fn completed_levels(complete: u32) -> String {
    match complete {
        0 => "no level is complete yet".to_string(),
        1 => "only level 1 is complete".to_string(),
        n => format!("levels 1-{n} are complete"),
    }
}

/// Why a level is missing: the levels completed, and for none what such
/// a directory is.
fn missing_level_reason(complete: u32) -> String {
    match complete {
        0 => format!("{}: a run that has just started, or was stopped before its first checkpoint", completed_levels(0)),
        n => completed_levels(n),
    }
}

/// Decoded Grundy blocks by (level, shard, block index).
type BlockCache = HashMap<(u32, usize, usize), Arc<Vec<u8>>>;

/// An open table directory.
pub struct Tables {
    dir: TableDir,
    manifest: Manifest,
    ranking: Ranking,
    /// Loaded tables by (level, shard): a probe reads only the shard it needs.
    losses: Mutex<HashMap<(u32, usize), Arc<RoaringBitmap>>>,
    grundy: Mutex<HashMap<(u32, usize), Arc<GrundyTable>>>,
    /// First rank of every shard, by level.
    firsts: Vec<Vec<u64>>,
    blocks: Mutex<BlockCache>,
    /// Format 3: pages and blocks read on demand, cached within a byte bound.
    blocked: Option<BlockReader>,
}

impl Tables {
    /// Opens a table directory (reads only its manifest; levels load on
    /// first use). Format 3 tables are read a block at a time, with a cache
    /// of decoded blocks of at most [`DEFAULT_CACHE_BYTES`]; formats 1 and 2
    /// a table at a time.
    ///
    /// # Errors
    /// [`ProbeError`] when the manifest is missing or invalid.
    pub fn open(dir: &Path) -> Result<Self, ProbeError> {
        Self::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Like [`Tables::open`], with a cache of at most `cache_bytes` of decoded
    /// pages and blocks (format 3).
    ///
    /// # Errors
    /// [`ProbeError`] when the manifest is missing or invalid.
    pub fn open_with_cache(dir: &Path, cache_bytes: usize) -> Result<Self, ProbeError> {
        let manifest = TableDir::new(dir).read_manifest()?;
        Self::with_manifest(dir, manifest, cache_bytes)
    }

    /// Like [`Tables::open_with_cache`], pinned to a published manifest:
    /// the directory's `manifest.json` must equal the file `against` (e.g.
    /// `results/frontier-140-manifest.json`) byte for byte, else the
    /// directory is refused whole ([`ProbeError::NotPublished`]). Every byte
    /// an answer reads is then checked against that manifest's digests (as
    /// always), so every answer comes from the published bytes: a copy
    /// damaged consistently (a loss moved, every checksum recomputed) is
    /// refused at opening instead of answering some positions wrongly.
    ///
    /// # Errors
    /// [`ProbeError`] when either manifest is missing or invalid, or they differ.
    pub fn open_against(dir: &Path, against: &Path, cache_bytes: usize) -> Result<Self, ProbeError> {
        let published = Manifest::read_file(against)?;
        let want = std::fs::read(against).map_err(|e| TableError::io(against, e))?;
        let held_path = TableDir::new(dir).manifest_path();
        let held = std::fs::read(&held_path).map_err(|e| TableError::io(&held_path, e))?;
        if held != want {
            return Err(ProbeError::NotPublished { dir: dir.display().to_string(), against: against.display().to_string() });
        }
        Self::with_manifest(dir, published, cache_bytes)
    }

    /// The tables of directory `dir` as `manifest` lists them (a run's own,
    /// in memory, before it is written: the check inside every level).
    ///
    /// # Errors
    /// [`ProbeError`] when the manifest does not fit its universe.
    pub(crate) fn with_manifest(dir: &Path, manifest: Manifest, cache_bytes: usize) -> Result<Self, ProbeError> {
        let dir = TableDir::new(dir);
        let invalid = |what: String| ManifestError::Invalid { path: dir.manifest_path().display().to_string(), what };
        let ranking = Ranking::new(&manifest.universe).map_err(|e| invalid(e.to_string()))?;
        // The manifest's levels against this reader's own ranking (FORMAT.md section 10).
        let top = ranking.max_tiles();
        if manifest.levels_complete > top || manifest.grundy_max_tiles > top {
            return Err(invalid(format!("levels beyond the universe's largest level {top}")).into());
        }
        if let Some(l) = manifest.levels.iter().find(|l| l.positions != ranking.size(l.tiles)) {
            return Err(
                invalid(format!("level {} has {} positions, the ranking counts {}", l.tiles, l.positions, ranking.size(l.tiles))).into()
            );
        }
        let firsts = shard_firsts(&manifest);
        let blocked = manifest.is_blocked().then(|| BlockReader::new(dir.path(), cache_bytes));
        Ok(Tables {
            dir,
            manifest,
            ranking,
            losses: Default::default(),
            grundy: Default::default(),
            firsts,
            blocks: Default::default(),
            blocked,
        })
    }

    /// Takes a later manifest of the same run (more levels complete): what
    /// is cached of the levels both list stays valid (the check inside
    /// every level's reader, which follows its run).
    #[cfg(feature = "tool")]
    pub(crate) fn advance(&mut self, manifest: Manifest) {
        debug_assert!(manifest.same_job(&self.manifest) && manifest.levels_complete >= self.manifest.levels_complete);
        self.firsts = shard_firsts(&manifest);
        self.manifest = manifest;
    }

    /// Bytes held by the cache of decoded pages and blocks, and its bound
    /// (`(0, 0)` for formats 1 and 2, which hold whole tables).
    pub fn cache_usage(&self) -> (usize, usize) {
        self.blocked.as_ref().map_or((0, 0), |b| b.cache_usage())
    }

    /// Table files held open (format 3: at most [`OPEN_FILES`](crate::read::OPEN_FILES) per
    /// directory, plus any being read at this moment; formats 1 and 2 read
    /// or map whole tables and hold none).
    pub fn open_files(&self) -> usize {
        self.blocked.as_ref().map_or(0, |b| b.open_files())
    }

    /// Changes the bound of the cache of decoded pages and blocks.
    pub fn set_cache_bytes(&self, bytes: usize) {
        if let Some(b) = &self.blocked {
            b.set_cache_limit(bytes);
        }
    }

    /// Tables held in memory, with no directory: `levels[n − 1]` holds the
    /// loss ranks of level `n` (each level below 2³² positions, one shard),
    /// for `manifest`'s levels (format 1, no Grundy values). What a universe
    /// solved in memory answers with (`solve::Solved::tables`).
    ///
    /// # Errors
    /// [`ProbeError`] when the manifest's universe cannot be ranked, its
    /// levels are sharded, or a level's losses do not match it.
    pub fn in_memory(manifest: Manifest, levels: Vec<RoaringBitmap>) -> Result<Self, ProbeError> {
        let invalid = |what: String| ManifestError::Invalid { path: "(in memory)".into(), what };
        let ranking = Ranking::new(&manifest.universe).map_err(|e| invalid(e.to_string()))?;
        if manifest.shard_positions.is_some() || manifest.grundy_max_tiles > 0 || levels.len() != manifest.levels_complete as usize {
            return Err(invalid("in-memory tables hold one loss table per level and no Grundy values".into()).into());
        }
        let mut losses = HashMap::new();
        for (i, bits) in levels.into_iter().enumerate() {
            if bits.len() != manifest.levels[i].losses {
                return Err(
                    invalid(format!("level {}: {} losses, the manifest says {}", i + 1, bits.len(), manifest.levels[i].losses)).into()
                );
            }
            losses.insert((i as u32 + 1, 0), Arc::new(bits));
        }
        let firsts = vec![vec![0]; manifest.levels_complete as usize];
        Ok(Tables {
            dir: TableDir::new(""),
            manifest,
            ranking,
            losses: Mutex::new(losses),
            grundy: Default::default(),
            firsts,
            blocks: Default::default(),
            blocked: None,
        })
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The ranking of the tables' universe.
    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    /// The directory.
    pub fn dir(&self) -> &TableDir {
        &self.dir
    }

    /// Level and rank of a position; a position outside a box whose
    /// transpose is inside (15 rows of the 8×15 box) is found by its
    /// transpose, which has the same outcome and value.
    fn locate(&self, p: &Position) -> Result<(u32, u64), ProbeError> {
        self.locate_rows(p.rows(), &mut Vec::new())
    }

    /// [`Tables::locate`] of the position of valid rows `rows`, with `buf`
    /// for its transpose: what ranks a child without making a [`Position`].
    fn locate_rows(&self, rows: &[u8], buf: &mut Vec<u8>) -> Result<(u32, u64), ProbeError> {
        let universe = &self.manifest.universe;
        let rank = if universe.contains_rows(rows) {
            self.ranking.rank_rows(rows)
        } else {
            conjugate_rows_into(rows, buf);
            if !universe.contains_rows(buf) {
                let p = Position::from_valid_rows(rows);
                let plural = |n: u32, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                return Err(ProbeError::Outside {
                    position: p.to_string(),
                    size: format!("{}, {}, {}", plural(p.height(), "row"), plural(p.width(), "column"), plural(p.tiles(), "tile")),
                    universe: universe.bounds(),
                });
            }
            self.ranking.rank_rows(buf)
        };
        let tiles = rows.iter().map(|&r| r as u32).sum();
        if tiles > self.manifest.levels_complete {
            return Err(ProbeError::MissingLevel { tiles, complete: self.manifest.levels_complete });
        }
        Ok((tiles, rank))
    }

    /// Whether the tables answer for `p`: it (or its transpose) lies in their
    /// universe and its level is complete.
    pub fn covers(&self, p: &Position) -> bool {
        self.locate(p).is_ok()
    }

    /// Whether the tables also hold the Grundy value of `p`.
    pub fn covers_grundy(&self, p: &Position) -> bool {
        self.covers(p) && p.tiles() <= self.manifest.grundy_max_tiles
    }

    /// The shard of level `tiles` holding rank `rank`, and the rank within it.
    fn shard_of(&self, tiles: u32, rank: u64) -> (usize, u64) {
        let firsts = &self.firsts[tiles as usize - 1];
        let i = firsts.partition_point(|&f| f <= rank) - 1;
        (i, rank - firsts[i])
    }

    /// The losses of one shard (loaded and checked on first use).
    fn loss_shard(&self, tiles: u32, shard: usize) -> Result<Arc<RoaringBitmap>, ProbeError> {
        if let Some(b) = held(&self.losses).get(&(tiles, shard)) {
            return Ok(b.clone());
        }
        let b = Arc::new(self.dir.read_loss_shard(&self.manifest, tiles, shard)?);
        held(&self.losses).insert((tiles, shard), b.clone());
        Ok(b)
    }

    /// The loss set of a level, every shard (loaded and checked on first use).
    ///
    /// # Errors
    /// [`ProbeError`] for missing or damaged tables.
    pub fn level_losses(&self, tiles: u32) -> Result<LossSet, ProbeError> {
        let firsts = &self.firsts[tiles as usize - 1];
        let parts =
            firsts.iter().enumerate().map(|(i, &first)| Ok((first, self.loss_shard(tiles, i)?))).collect::<Result<_, ProbeError>>()?;
        Ok(LossSet { parts })
    }

    fn grundy_value(&self, tiles: u32, rank: u64) -> Result<Option<u8>, ProbeError> {
        if tiles > self.manifest.grundy_max_tiles.min(self.manifest.levels_complete) {
            return Ok(None);
        }
        let (shard, rank) = self.shard_of(tiles, rank);
        if let Some(b) = &self.blocked {
            return Ok(Some(b.grundy(&self.manifest, tiles, shard, rank)?));
        }
        let table = {
            let cached = held(&self.grundy).get(&(tiles, shard)).cloned();
            match cached {
                Some(t) => t,
                None => {
                    let t = Arc::new(self.dir.read_grundy_shard(&self.manifest, tiles, shard)?);
                    held(&self.grundy).insert((tiles, shard), t.clone());
                    t
                }
            }
        };
        let bs = table.header().block_size as u64;
        let key = (tiles, shard, (rank / bs) as usize);
        let cached = held(&self.blocks).get(&key).cloned();
        let block = match cached {
            Some(b) => b,
            None => {
                let b = Arc::new(table.block(key.2)?);
                held(&self.blocks).insert(key, b.clone());
                b
            }
        };
        Ok(Some(block[(rank % bs) as usize]))
    }

    /// Outcome of a position for the player to move.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn outcome(&self, p: &Position) -> Result<Outcome, ProbeError> {
        let (tiles, rank) = self.locate(p)?;
        self.outcome_at(tiles, rank)
    }

    /// Outcome of the position of rank `rank` in level `tiles`.
    fn outcome_at(&self, tiles: u32, rank: u64) -> Result<Outcome, ProbeError> {
        let (shard, rank) = self.shard_of(tiles, rank);
        let loss = match &self.blocked {
            Some(b) => b.is_loss(&self.manifest, tiles, shard, rank)?,
            None => self.loss_shard(tiles, shard)?.contains(u32::try_from(rank).expect("a shard holds at most 2^32 positions")),
        };
        Ok(if loss { Outcome::Loss } else { Outcome::Win })
    }

    /// The table (name relative to the directory) that holds `p`'s entry of `kind`.
    fn table_of(&self, kind: Kind, p: &Position) -> String {
        match self.locate(p) {
            Ok((tiles, rank)) => TableDir::table_names(&self.manifest, kind, tiles)[self.shard_of(tiles, rank).0].clone(),
            Err(_) => "?".into(),
        }
    }

    /// Checks what the tables say of `p` against what they say of its
    /// children: a loss has no losing child, a win has one, a Grundy value
    /// is the mex of the children's and is 0 exactly for losses. A
    /// contradiction means damaged tables (`FORMAT.md` section 10).
    fn check_rules(&self, p: &Position, a: &CheckedAnswer) -> Result<(), ProbeError> {
        let fail = |what: String| ProbeError::Contradiction { dir: self.dir.path().display().to_string(), what };
        // The tables are named only when something fails: this runs for every answer.
        let losses = |p: &Position| self.table_of(Kind::Losses, p);
        let values = |p: &Position| self.table_of(Kind::Grundy, p);
        let child = |m: &CheckedMove| p.child(m.cell[0], m.cell[1]).expect("a move is a cell of the position");
        match (a.outcome, a.moves.iter().find(|m| m.outcome == Outcome::Loss)) {
            (Outcome::Loss, Some(m)) => {
                let c = child(m);
                return Err(fail(format!(
                    "position {p} is a loss in {}, but its move ({},{}) leads to {c}, a loss in {}",
                    losses(p),
                    m.cell[0],
                    m.cell[1],
                    losses(&c)
                )));
            }
            (Outcome::Win, None) => {
                return Err(fail(format!("position {p} is a win in {}, but none of its moves leads to a loss", losses(p))));
            }
            _ => {}
        }
        if let Some(g) = a.grundy {
            if (g == 0) != (a.outcome == Outcome::Loss) {
                return Err(fail(format!(
                    "position {p} has Grundy value {g} in {} but is a {} in {}",
                    values(p),
                    a.outcome.as_str(),
                    losses(p)
                )));
            }
            let mut seen = [false; 257];
            for m in &a.moves {
                match m.grundy {
                    Some(v) => seen[v as usize] = true,
                    None => return Err(fail(format!("position {p} has a Grundy value in {}, a child of it none", values(p)))),
                }
            }
            let mex = seen.iter().position(|&s| !s).unwrap_or(256);
            if mex != g as usize {
                return Err(fail(format!("position {p} has Grundy value {g} in {}, the mex of its children's values is {mex}", values(p))));
            }
        }
        for m in &a.moves {
            if let Some(v) = m.grundy.filter(|&v| (v == 0) != (m.outcome == Outcome::Loss)) {
                let c = child(m);
                return Err(fail(format!(
                    "position {c} has Grundy value {v} in {} but is a {} in {}",
                    values(&c),
                    m.outcome.as_str(),
                    losses(&c)
                )));
            }
        }
        Ok(())
    }

    /// Outcome, value and every move (best first) of `p`, checked against
    /// each other ([`Tables::check_rules`]). Children are ranked from their
    /// rows in one buffer: a [`Position`] each would be an allocation per
    /// move, and the allocator was a tenth of a server's answer.
    pub(super) fn checked(&self, p: &Position) -> Result<CheckedAnswer, ProbeError> {
        let (tiles, rank) = self.locate(p)?;
        let outcome = self.outcome_at(tiles, rank)?;
        let grundy = self.grundy_value(tiles, rank)?;
        let rows = p.rows();
        let (mut child, mut buf) = (Vec::with_capacity(rows.len()), Vec::new());
        let mut moves = Vec::with_capacity(tiles as usize - 1);
        for (r, &len) in rows.iter().enumerate() {
            for c in (if r == 0 { 1 } else { 0 })..len as u32 {
                // Each child is ranked once, for its outcome and its value.
                child_rows_into(rows, r as u32, c, &mut child);
                let (tiles, rank) = self.locate_rows(&child, &mut buf)?;
                moves.push(CheckedMove {
                    cell: [r as u32, c],
                    tiles,
                    outcome: self.outcome_at(tiles, rank)?,
                    grundy: self.grundy_value(tiles, rank)?,
                });
            }
        }
        let mut checked = CheckedAnswer { outcome, grundy, moves };
        self.check_rules(p, &checked)?;
        // A move to a loss wins; a larger remaining position gives the opponent more to err in.
        checked.moves.sort_unstable_by_key(|m| (m.outcome != Outcome::Loss, std::cmp::Reverse(m.tiles), m.cell));
        Ok(checked)
    }

    /// Misère Grundy value, or `None` where the tables hold none for this level.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn grundy(&self, p: &Position) -> Result<Option<u8>, ProbeError> {
        let (tiles, rank) = self.locate(p)?;
        self.grundy_value(tiles, rank)
    }

    /// Every move with the outcome and value it leads to, best first: winning
    /// moves first; among losing ones, the reply leaving the opponent the
    /// largest position; ties in row-major cell order. What the tables say
    /// of `p` is checked against its children first.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables
    /// ([`ProbeError::Contradiction`] when they contradict the game).
    pub fn moves(&self, p: &Position) -> Result<Vec<MoveInfo>, ProbeError> {
        Ok(self.checked(p)?.moves.iter().map(|m| m.info(p)).collect())
    }

    /// The winning moves (moves to a loss), row-major.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn winning_moves(&self, p: &Position) -> Result<Vec<[u32; 2]>, ProbeError> {
        Ok(self.checked(p)?.winning_moves())
    }

    /// The full answer for one position: outcome, values, winning moves and
    /// every move best first (what `chomp query --json` prints).
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn answer(&self, p: &Position) -> Result<Answer, ProbeError> {
        let a = self.checked(p)?;
        Ok(Answer {
            position: p.rows().to_vec(),
            tiles: p.tiles(),
            outcome: a.outcome,
            grundy: a.grundy,
            grundy_normal: a.grundy.map(|g| g as u32 + 1),
            winning_moves: a.winning_moves(),
            moves: a.moves.iter().map(|m| m.info(p)).collect(),
        })
    }

    /// [`Tables::answer`] as JSON, appended to `out`: the bytes
    /// `serde_json::to_vec(&answer)` gives, written without building the
    /// answer's positions (what `chomp serve` sends).
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn answer_json(&self, p: &Position, out: &mut Vec<u8>) -> Result<(), ProbeError> {
        let a = self.checked(p)?;
        write_answer_json(p, &a, out);
        Ok(())
    }
}

/// The first rank of every shard of every complete level.
fn shard_firsts(manifest: &Manifest) -> Vec<Vec<u64>> {
    (1..=manifest.levels_complete).map(|n| manifest.level_shards(n).iter().map(|s| s.first).collect()).collect()
}

/// A cache's lock. A panic elsewhere while it was held cannot have left it
/// half-updated (entries are inserted whole), so a poisoned lock is used as
/// it is: one failed request must not fail every later one.
fn held<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::ProbeError;

    #[test]
    fn a_missing_level_names_the_complete_ones_in_words() {
        let say = |complete| ProbeError::MissingLevel { tiles: 6, complete }.to_string();
        assert_eq!(
            say(0),
            "level 6 is not in the tables (no level is complete yet: a run that has just started, or was stopped before its first checkpoint)"
        );
        assert_eq!(say(1), "level 6 is not in the tables (only level 1 is complete)");
        assert_eq!(say(5), "level 6 is not in the tables (levels 1-5 are complete)");
        // The short form other messages use (the server's 404, export, verify).
        assert_eq!(super::completed_levels(0), "no level is complete yet");
        assert_eq!(super::completed_levels(5), "levels 1-5 are complete");
    }
}
