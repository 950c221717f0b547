//! The n-D table directory: `losses.cht` (the ranks of the losing positions
//! as a zstd-compressed roaring bitmap, with a checksummed header) and
//! `manifest.json` (the box, its figures and the SHA-256 of the table, in
//! canonical form with its own checksum). Both are written atomically.
//! The format is FORMAT.md, section 13.

use super::rank::NdRanking;
use super::solve::{full_box, LossOracle, NdLevelCount, Solution};
use super::{dims_text, NdError};
use crate::rng::SplitMix;
use crate::store::manifest::SelfChecked;
use crate::store::write_atomic;
use crate::store::{sha256_hex, FileEntry};
use rayon::prelude::*;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Magic bytes of an n-D loss table.
pub const MAGIC: [u8; 8] = *b"CHOMPNDT";
/// Table and manifest format version.
pub const VERSION: u16 = 1;
/// Value of the manifest's `format` field.
pub const FORMAT_NAME: &str = "chomp-nd-tables";
/// The loss table inside a directory.
pub const LOSSES_FILE: &str = "losses.cht";
/// The manifest inside a directory.
pub const MANIFEST: &str = "manifest.json";
const KIND_LOSSES: u16 = 1;
/// Boxes with at most this many positions are verified position by position.
pub const FULL_CHECK: u64 = 1 << 20;

/// `manifest.json` of an n-D table directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdManifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// [`VERSION`].
    pub format_version: u16,
    /// Version of the tool that wrote it.
    pub tool_version: String,
    /// Sides of the box.
    pub dims: Vec<u32>,
    /// Nonempty positions.
    pub positions: u64,
    /// Losing positions.
    pub losses: u64,
    /// Winning moves of the full box, sorted cells.
    pub winning_moves: Vec<Vec<u32>>,
    /// Positions and losses per cell count `1..=` cells of the box.
    pub levels: Vec<NdLevelCount>,
    /// Every other file, by name.
    pub files: BTreeMap<String, FileEntry>,
    /// SHA-256 of the canonical text with this field empty.
    #[serde(default)]
    pub checksum: String,
}

impl SelfChecked for NdManifest {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl NdManifest {
    /// Reads and checks `DIR/manifest.json` (format, version, checksum,
    /// canonical form, levels).
    ///
    /// # Errors
    /// [`NdError::Tables`] naming the fault.
    pub fn read(dir: &Path) -> Result<Self, NdError> {
        let path = dir.join(MANIFEST);
        let invalid = |what: String| NdError::Tables(format!("{}: invalid n-D manifest: {what}", path.display()));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(NdError::Tables(format!("{}: no manifest.json; not an n-D table directory", dir.display())))
            }
            Err(e) => return Err(NdError::Tables(format!("{}: {e}", path.display()))),
        };
        let loose: serde_json::Value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if loose.get("format").and_then(|f| f.as_str()) != Some(FORMAT_NAME) {
            return Err(invalid(format!("format is not {FORMAT_NAME:?} (2-D tables are read by chomp query)")));
        }
        if loose.get("format_version").and_then(|v| v.as_u64()) != Some(VERSION as u64) {
            return Err(invalid(format!("format version {} is not the version this tool reads ({VERSION})", loose["format_version"])));
        }
        let m: NdManifest = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if let Some(why) = m.damage(&text) {
            return Err(invalid(why.into()));
        }
        super::check_dims(&m.dims).map_err(|e| invalid(e.to_string()))?;
        let cells: u64 = m.dims.iter().map(|&d| d as u64).product();
        if m.levels.len() as u64 != cells || m.levels.iter().enumerate().any(|(i, l)| l.cells != i as u32 + 1) {
            return Err(invalid(format!("levels do not cover cell counts 1..={cells}")));
        }
        if m.levels.iter().map(|l| l.positions).sum::<u64>() != m.positions || m.levels.iter().map(|l| l.losses).sum::<u64>() != m.losses {
            return Err(invalid("levels do not add up to positions and losses".into()));
        }
        Ok(m)
    }

    /// Reads a listed file, checking its size and SHA-256.
    ///
    /// # Errors
    /// [`NdError::Tables`] when unlisted, unreadable or different.
    pub fn read_listed(&self, dir: &Path, name: &str) -> Result<Vec<u8>, NdError> {
        let path = dir.join(name);
        let entry = self.files.get(name).ok_or_else(|| NdError::Tables(format!("{}: not listed in manifest.json", path.display())))?;
        let bytes = std::fs::read(&path).map_err(|e| NdError::Tables(format!("{}: {e}", path.display())))?;
        if bytes.len() as u64 != entry.bytes {
            return Err(NdError::Tables(format!("{}: {} bytes, manifest.json says {}", path.display(), bytes.len(), entry.bytes)));
        }
        if sha256_hex(&bytes) != entry.sha256 {
            return Err(NdError::Tables(format!("{}: SHA-256 differs from manifest.json", path.display())));
        }
        Ok(bytes)
    }
}

/// Encodes the loss table of a box: `ranks` increasing, below `positions`.
pub fn encode_losses(dims: &[u32], positions: u64, ranks: impl Iterator<Item = u64>) -> Vec<u8> {
    let bitmap = RoaringBitmap::from_sorted_iter(ranks.map(|r| u32::try_from(r).expect("ranks below 2^32"))).expect("increasing ranks");
    let mut raw = Vec::with_capacity(bitmap.serialized_size());
    bitmap.serialize_into(&mut raw).expect("writing to memory");
    let payload = crate::store::format::compress(&raw);
    let mut h = Vec::with_capacity(48 + 4 * dims.len() + payload.len());
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&KIND_LOSSES.to_le_bytes());
    h.extend_from_slice(&(dims.len() as u32).to_le_bytes());
    h.extend_from_slice(&positions.to_le_bytes());
    h.extend_from_slice(&bitmap.len().to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    for d in dims {
        h.extend_from_slice(&d.to_le_bytes());
    }
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&payload);
    h
}

/// Decodes a loss table, checking it against the box, its positions and
/// losses.
///
/// # Errors
/// [`NdError::Tables`] for anything but that table.
pub fn decode_losses(path: &Path, bytes: &[u8], dims: &[u32], positions: u64, losses: u64) -> Result<RoaringBitmap, NdError> {
    let corrupt = |what: String| NdError::Tables(format!("{}: {what}", path.display()));
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    if bytes.len() < 48 {
        return Err(corrupt(format!("truncated: {} bytes, shorter than the smallest header", bytes.len())));
    }
    if bytes[0..8] != MAGIC {
        return Err(corrupt("not an n-D chomp table (wrong magic bytes)".into()));
    }
    if u16_at(8) != VERSION {
        return Err(corrupt(format!("table format version {}, this reader knows version {VERSION}", u16_at(8))));
    }
    let k = u32_at(12) as usize;
    if k != dims.len() {
        return Err(corrupt(format!("a table of a {k}-dimensional box, expected {}", dims.len())));
    }
    let header_len = 44 + 4 * k + 4;
    if bytes.len() < header_len {
        return Err(corrupt("truncated header".into()));
    }
    if crc32fast::hash(&bytes[..header_len - 4]) != u32_at(header_len - 4) {
        return Err(corrupt("header checksum mismatch".into()));
    }
    if u16_at(10) != KIND_LOSSES {
        return Err(corrupt(format!("unknown table kind {}", u16_at(10))));
    }
    let table_dims: Vec<u32> = (0..k).map(|i| u32_at(44 + 4 * i)).collect();
    if table_dims != dims || u64_at(16) != positions || u64_at(24) != losses {
        return Err(corrupt(format!(
            "the table of the {} box with {} positions and {} losses, expected {} with {positions} and {losses}",
            dims_text(&table_dims),
            u64_at(16),
            u64_at(24),
            dims_text(dims)
        )));
    }
    let payload = &bytes[header_len..];
    if u64_at(32) != payload.len() as u64 {
        return Err(corrupt(format!("truncated or padded: header announces {} payload bytes, file has {}", u64_at(32), payload.len())));
    }
    if crc32fast::hash(payload) != u32_at(40) {
        return Err(corrupt("payload checksum mismatch".into()));
    }
    match zstd::zstd_safe::find_frame_compressed_size(payload) {
        Ok(len) if len == payload.len() => {}
        _ => return Err(corrupt("payload is not exactly one zstd frame".into())),
    }
    let bound = (positions / 65536 + 1) * (8192 + 16) + 64;
    let raw = zstd::bulk::decompress(payload, bound as usize).map_err(|e| corrupt(format!("bad zstd payload: {e}")))?;
    let mut rest = &raw[..];
    let bitmap = RoaringBitmap::deserialize_from(&mut rest).map_err(|e| corrupt(format!("bad roaring bitmap: {e}")))?;
    if !rest.is_empty() {
        return Err(corrupt(format!("{} bytes after the roaring bitmap", rest.len())));
    }
    if bitmap.len() != losses {
        return Err(corrupt(format!("holds {} losses, header says {losses}", bitmap.len())));
    }
    if bitmap.max().is_some_and(|m| m as u64 >= positions) {
        return Err(corrupt("a loss rank lies beyond the box".into()));
    }
    Ok(bitmap)
}

/// Writes the table directory of a solved box (creating `dir`; a directory
/// holding anything but tables of the same box is refused).
///
/// # Errors
/// [`NdError::Tables`] for I/O errors and directories of something else.
pub fn write_tables(dir: &Path, s: &Solution) -> Result<NdManifest, NdError> {
    let r = s.ranking();
    let io = |p: &Path, e: std::io::Error| NdError::Tables(format!("{}: {e}", p.display()));
    if dir.exists() {
        let busy = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .filter_map(|e| e.ok())
            .any(|e| ![MANIFEST, LOSSES_FILE].contains(&e.file_name().to_string_lossy().trim_end_matches(".tmp")));
        let theirs = match NdManifest::read(dir) {
            Ok(m) => (m.dims != r.dims()).then(|| format!("tables of the {} box", dims_text(&m.dims))),
            Err(_) if dir.join(MANIFEST).exists() => Some("another manifest.json".to_string()),
            Err(_) => None,
        };
        if let Some(what) = theirs.or(busy.then(|| "other files".to_string())) {
            return Err(NdError::Tables(format!("{} holds {what}; choose an empty or new directory", dir.display())));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let table = encode_losses(r.dims(), r.positions(), s.loss_ranks());
    write_atomic(&dir.join(LOSSES_FILE), &table)?;
    let mut m = NdManifest {
        format: FORMAT_NAME.into(),
        format_version: VERSION,
        tool_version: crate::solve::TOOL_VERSION.into(),
        dims: r.dims().to_vec(),
        positions: r.positions(),
        losses: s.losses(),
        winning_moves: s.winning_moves(&full_box(r)),
        levels: s.levels().to_vec(),
        files: BTreeMap::from([(LOSSES_FILE.to_string(), FileEntry::of(&table))]),
        checksum: String::new(),
    };
    write_atomic(&dir.join(MANIFEST), m.seal().as_bytes())?;
    Ok(m)
}

/// An n-D table directory, read and checked.
pub struct NdTables {
    dir: PathBuf,
    manifest: NdManifest,
    ranking: NdRanking,
    losses: RoaringBitmap,
}

impl NdTables {
    /// Opens a table directory: the manifest, the ranking of its box, and
    /// the loss table (size, SHA-256, header and payload checked).
    ///
    /// # Errors
    /// [`NdError::Tables`] naming the fault.
    pub fn open(dir: &Path) -> Result<Self, NdError> {
        let manifest = NdManifest::read(dir)?;
        let ranking = NdRanking::new(&manifest.dims)?;
        if ranking.positions() != manifest.positions {
            return Err(NdError::Tables(format!(
                "{}: manifest.json says {} positions, the {} box has {}",
                dir.join(MANIFEST).display(),
                manifest.positions,
                dims_text(&manifest.dims),
                ranking.positions()
            )));
        }
        let bytes = manifest.read_listed(dir, LOSSES_FILE)?;
        let losses = decode_losses(&dir.join(LOSSES_FILE), &bytes, &manifest.dims, manifest.positions, manifest.losses)?;
        Ok(NdTables { dir: dir.to_path_buf(), manifest, ranking, losses })
    }

    /// The manifest.
    pub fn manifest(&self) -> &NdManifest {
        &self.manifest
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Re-checks the tables against the game: the losses by cell count
    /// against the manifest's levels, the winning moves of the full box, and
    /// the rule "a loss has no losing child, a win has one" on every position
    /// (boxes of at most [`FULL_CHECK`] positions) or on `samples` random
    /// positions and `samples` random losses. In parallel. Returns the
    /// positions checked and the faults found.
    pub fn verify(&self, samples: u64, seed: u64) -> (u64, Vec<String>) {
        let r = &self.ranking;
        let cells = r.box_cells() as usize;
        let chunk = 1u64 << 20;
        let by_level = (0..r.positions().div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let mut counts = vec![0u64; cells];
                let hi = ((c + 1) * chunk).min(r.positions()) - 1;
                for rank in self.losses.range((c * chunk) as u32..=hi as u32) {
                    let h = r.unrank(rank as u64).expect("rank below positions");
                    counts[h.iter().map(|&v| v as usize).sum::<usize>() - 1] += 1;
                }
                counts
            })
            .reduce(|| vec![0u64; cells], |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect());
        let mut faults = Vec::new();
        for (l, &found) in self.manifest.levels.iter().zip(&by_level) {
            if l.losses != found {
                faults.push(format!("level {}: the table holds {found} losses, manifest.json says {}", l.cells, l.losses));
            }
        }
        let wm = self.winning_moves(&full_box(r));
        if wm != self.manifest.winning_moves {
            faults.push(format!("winning moves of the full box are {wm:?}, manifest.json says {:?}", self.manifest.winning_moves));
        }
        let ranks: Vec<u64> = if r.positions() <= FULL_CHECK {
            (0..r.positions()).collect()
        } else {
            let mut rng = SplitMix(seed);
            let mut ranks: Vec<u64> = (0..samples).map(|_| rng.below(r.positions())).collect();
            if !self.losses.is_empty() {
                ranks
                    .extend((0..samples).map(|_| self.losses.select(rng.below(self.losses.len()) as u32).expect("below the count") as u64));
            }
            ranks
        };
        let mut found: Vec<String> = ranks.par_iter().filter_map(|&k| self.check(&r.unrank(k).expect("rank below positions"))).collect();
        faults.append(&mut found);
        (ranks.len() as u64, faults)
    }
}

impl LossOracle for NdTables {
    fn ranking(&self) -> &NdRanking {
        &self.ranking
    }

    fn is_loss_index(&self, index: u64) -> bool {
        index > 0 && self.losses.contains((index - 1) as u32)
    }

    fn losses(&self) -> u64 {
        self.losses.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_damage() {
        let s = super::super::solve(&[2, 3, 2]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let m = write_tables(dir.path(), &s).unwrap();
        let t = NdTables::open(dir.path()).unwrap();
        assert_eq!(t.manifest(), &m);
        let (checked, faults) = t.verify(10, 1);
        assert_eq!((checked, faults.len()), (s.ranking().positions(), 0));
        let bytes = std::fs::read(dir.path().join(LOSSES_FILE)).unwrap();
        let p = Path::new("x");
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 4;
            assert!(decode_losses(p, &bad, &m.dims, m.positions, m.losses).is_err(), "flip at {i}");
        }
        for len in 0..bytes.len() {
            assert!(decode_losses(p, &bytes[..len], &m.dims, m.positions, m.losses).is_err());
        }
        // Another box is refused in the same directory; the same box is rewritten identically.
        assert!(write_tables(dir.path(), &super::super::solve(&[2, 2]).unwrap()).is_err());
        write_tables(dir.path(), &s).unwrap();
        assert_eq!(std::fs::read(dir.path().join(LOSSES_FILE)).unwrap(), bytes);
    }
}
