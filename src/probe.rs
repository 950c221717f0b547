//! Probing a table directory: outcome, Grundy value, winning moves and all
//! moves of a position, read lazily from the published tables.

use crate::manifest::{Manifest, ManifestError};
use crate::position::Position;
use crate::rank::Ranking;
use crate::table::{self, level_path, GrundyTable, Header, Kind, TableError};
use roaring::RoaringBitmap;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Win or loss for the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The player to move can force a win.
    Win,
    /// Every move leads to a win for the opponent.
    Loss,
}

impl Outcome {
    /// `"win"` or `"loss"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Loss => "loss",
        }
    }
}

/// Errors of a probe: about the question, or about the tables.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The position is not covered by the tables' universe.
    #[error("position {position} is outside the tables ({universe})")]
    Outside {
        /// The position asked about.
        position: String,
        /// The tables' universe.
        universe: String,
    },
    /// The level is beyond what the run has completed.
    #[error("level {tiles} is not in the tables (levels 1..={complete} are complete)")]
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
}

/// One move with what it leads to.
#[derive(Clone, Debug, Serialize)]
pub struct MoveInfo {
    /// The bitten cell, `[row, col]`, 0-based.
    #[serde(rename = "move")]
    pub cell: [u32; 2],
    /// The position after the move.
    pub position: Vec<u8>,
    /// Outcome of that position for the player then to move.
    pub outcome: Outcome,
    /// Its misère Grundy value, when computed.
    pub grundy: Option<u8>,
}

/// Decoded Grundy blocks by (level, block index).
type BlockCache = HashMap<(u32, usize), Arc<Vec<u8>>>;

/// An open table directory.
pub struct Tables {
    dir: PathBuf,
    manifest: Manifest,
    ranking: Ranking,
    losses: Mutex<HashMap<u32, Arc<RoaringBitmap>>>,
    grundy: Mutex<HashMap<u32, Arc<GrundyTable>>>,
    blocks: Mutex<BlockCache>,
}

impl Tables {
    /// Opens a table directory (reads only its manifest; levels load on first use).
    ///
    /// # Errors
    /// [`ProbeError`] when the manifest is missing or invalid.
    pub fn open(dir: &Path) -> Result<Self, ProbeError> {
        let manifest = Manifest::read(dir)?;
        let ranking = Ranking::new(&manifest.universe)
            .map_err(|e| ManifestError::Invalid { path: dir.join("manifest.json").display().to_string(), what: e.to_string() })?;
        Ok(Tables {
            dir: dir.to_path_buf(),
            manifest,
            ranking,
            losses: Default::default(),
            grundy: Default::default(),
            blocks: Default::default(),
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

    fn locate(&self, p: &Position) -> Result<(u32, u64), ProbeError> {
        let rank = self
            .ranking
            .rank(p)
            .ok_or_else(|| ProbeError::Outside { position: p.to_string(), universe: self.manifest.universe.describe() })?;
        let tiles = p.tiles();
        if tiles > self.manifest.levels_complete {
            return Err(ProbeError::MissingLevel { tiles, complete: self.manifest.levels_complete });
        }
        Ok((tiles, rank))
    }

    fn header(&self, kind: Kind, tiles: u32) -> Header {
        let losses = self.manifest.levels[tiles as usize - 1].losses;
        Header::new(kind, &self.manifest.universe, tiles, self.ranking.size(tiles), losses)
    }

    /// The loss set of a level (loaded and checked on first use).
    ///
    /// # Errors
    /// [`ProbeError`] for missing or damaged tables.
    pub fn level_losses(&self, tiles: u32) -> Result<Arc<RoaringBitmap>, ProbeError> {
        if let Some(b) = self.losses.lock().unwrap().get(&tiles) {
            return Ok(b.clone());
        }
        let path = level_path(&self.dir, Kind::Losses, tiles);
        let bytes = self.manifest.read_listed(&self.dir, &table::level_name(Kind::Losses, tiles))?;
        let b = Arc::new(table::decode_losses(&path, &bytes, Some(&self.header(Kind::Losses, tiles)))?.1);
        self.losses.lock().unwrap().insert(tiles, b.clone());
        Ok(b)
    }

    fn grundy_value(&self, tiles: u32, rank: u64) -> Result<Option<u8>, ProbeError> {
        if tiles > self.manifest.grundy_max_tiles.min(self.manifest.levels_complete) {
            return Ok(None);
        }
        let table = {
            let cached = self.grundy.lock().unwrap().get(&tiles).cloned();
            match cached {
                Some(t) => t,
                None => {
                    let path = level_path(&self.dir, Kind::Grundy, tiles);
                    let bytes = self.manifest.read_listed(&self.dir, &table::level_name(Kind::Grundy, tiles))?;
                    let t = Arc::new(GrundyTable::from_bytes(&path, bytes, Some(&self.header(Kind::Grundy, tiles)))?);
                    self.grundy.lock().unwrap().insert(tiles, t.clone());
                    t
                }
            }
        };
        let bs = table.header().block_size as u64;
        let key = (tiles, (rank / bs) as usize);
        let cached = self.blocks.lock().unwrap().get(&key).cloned();
        let block = match cached {
            Some(b) => b,
            None => {
                let b = Arc::new(table.block(key.1)?);
                self.blocks.lock().unwrap().insert(key, b.clone());
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
        let loss = self.level_losses(tiles)?.contains(rank as u32);
        Ok(if loss { Outcome::Loss } else { Outcome::Win })
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
    /// largest position; ties in row-major cell order.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn moves(&self, p: &Position) -> Result<Vec<MoveInfo>, ProbeError> {
        self.locate(p)?;
        let mut out = Vec::new();
        for ((r, c), child) in p.moves() {
            out.push(MoveInfo {
                cell: [r, c],
                outcome: self.outcome(&child)?,
                grundy: self.grundy(&child)?,
                position: child.rows().to_vec(),
            });
        }
        // A move to a loss wins; a larger remaining position gives the opponent more to err in.
        out.sort_by_key(|m| (m.outcome != Outcome::Loss, std::cmp::Reverse(m.position.iter().map(|&x| x as u32).sum::<u32>()), m.cell));
        Ok(out)
    }

    /// The winning moves (moves to a loss), row-major.
    ///
    /// # Errors
    /// [`ProbeError`] for positions outside the tables and damaged tables.
    pub fn winning_moves(&self, p: &Position) -> Result<Vec<[u32; 2]>, ProbeError> {
        let mut w: Vec<[u32; 2]> = self.moves(p)?.into_iter().filter(|m| m.outcome == Outcome::Loss).map(|m| m.cell).collect();
        w.sort();
        Ok(w)
    }
}

/// Winning first moves of one rectangle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// Rows of the rectangle.
    pub rows: u32,
    /// Columns of the rectangle.
    pub cols: u32,
    /// Its winning moves, row-major.
    pub winning_moves: Vec<[u32; 2]>,
}

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
            let p = Position::new(&vec![cols; rows as usize]).expect("a rectangle is a position");
            out.push(Opening { rows, cols, winning_moves: t.winning_moves(&p)? });
        }
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
