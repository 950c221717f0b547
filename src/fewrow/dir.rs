//! A few-row table directory (FORMAT.md, section 18): the prefix table in
//! checked blocks (`fewrow.table`), the level counts (`levels.csv`) and a
//! manifest naming the engine, the box and every file's SHA-256. The writer
//! ([`write_dir`]) and the reader ([`FewRowDir`]), which checks every block
//! it answers from, and reads directories of the older layout (one
//! `fewrow.prefixes` under a single CRC-32, no manifest) after checking that
//! CRC over the whole file.

use super::{next_prefix, FewRowBox, FewRowError, FewRowPosition, LevelCount, PrefixRanking, MAX_ROWS, NONE};
use crate::rng::SplitMix;
use crate::store::manifest::SelfChecked;
use crate::store::{file_sha256, sha256_hex, write_atomic, FileEntry};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Value of the manifest's `format` field.
pub const FORMAT_NAME: &str = "chomp-fewrow-tables";
/// Manifest and table format version.
pub const VERSION: u16 = 1;
/// Value of the manifest's `engine` field.
pub const ENGINE: &str = "few-row";
/// The manifest inside a directory.
pub const MANIFEST: &str = "manifest.json";
/// The prefix table in checked blocks.
pub const TABLE: &str = "fewrow.table";
/// The prefix table of the older layout (one CRC-32 over the whole file).
pub const LEGACY_TABLE: &str = "fewrow.prefixes";
/// Tiles, positions and losses of every level.
pub const LEVELS: &str = "levels.csv";
/// Magic bytes of [`TABLE`].
pub const MAGIC: [u8; 8] = *b"CHOMPFR2";
/// Magic bytes of [`LEGACY_TABLE`] (and of the solver's checkpoint).
pub const LEGACY_MAGIC: [u8; 8] = *b"CHOMPFR1";
/// Bytes of a block the writer uses (the header is one block too).
pub const BLOCK_BYTES: u32 = 4096;
/// Bytes of the header's fields (the rest of its block is zeros and its CRC).
const FIELDS: usize = 52;
/// Bytes of the older layout's header.
const LEGACY_HEADER: u64 = 28;

/// The box of a few-row directory, as asked (`rows × cols`, not transposed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FewRowUniverse {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
}

/// `manifest.json` of a few-row directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FewRowManifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// [`VERSION`].
    pub format_version: u16,
    /// Version of the tool that wrote it.
    pub tool_version: String,
    /// The engine that wrote it, [`ENGINE`].
    pub engine: String,
    /// The box.
    pub universe: FewRowUniverse,
    /// Entries of the prefix table, `C(n + k − 1, k − 1)`.
    pub prefixes: u64,
    /// Positions of the box (the empty board not counted).
    pub positions: u64,
    /// Losing positions of the box.
    pub losses: u64,
    /// Every other file, by name: [`TABLE`] with its head, [`LEVELS`].
    pub files: BTreeMap<String, FileEntry>,
    /// SHA-256 of the canonical text with this field empty.
    #[serde(default)]
    pub checksum: String,
}

impl SelfChecked for FewRowManifest {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl FewRowManifest {
    /// Reads and checks a few-row manifest file: format, version, engine,
    /// checksum, canonical form, the box, its counts and its file list.
    ///
    /// # Errors
    /// [`FewRowError::Damaged`] naming the fault, [`FewRowError::Io`].
    pub fn read_file(path: &Path) -> Result<Self, FewRowError> {
        let text = std::fs::read_to_string(path).map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?;
        Self::parse(path, &text)
    }

    /// Parses and checks a manifest's text (`path` names it in errors).
    ///
    /// # Errors
    /// [`FewRowError::Damaged`] naming the fault.
    pub fn parse(path: &Path, text: &str) -> Result<Self, FewRowError> {
        let invalid = |what: String| FewRowError::Damaged(format!("{}: invalid few-row manifest: {what}", path.display()));
        let loose: serde_json::Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if loose.get("format").and_then(|f| f.as_str()) != Some(FORMAT_NAME) {
            return Err(invalid(format!("format is not {FORMAT_NAME:?}")));
        }
        if loose.get("format_version").and_then(|v| v.as_u64()) != Some(u64::from(VERSION)) {
            return Err(invalid(format!("format version {} is not the version this tool reads ({VERSION})", loose["format_version"])));
        }
        let m: FewRowManifest = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if let Some(why) = m.damage(text) {
            return Err(invalid(why.into()));
        }
        if m.engine != ENGINE {
            return Err(invalid(format!("engine is {:?}, not {ENGINE:?}", m.engine)));
        }
        let shape = FewRowBox::new(m.universe.rows, m.universe.cols).map_err(|e| invalid(e.to_string()))?;
        if Some(m.prefixes) != shape.prefixes() {
            return Err(invalid(format!(
                "{} prefixes, the {}x{} box has {:?}",
                m.prefixes,
                m.universe.rows,
                m.universe.cols,
                shape.prefixes()
            )));
        }
        let positions = shape.level_sizes().iter().skip(1).try_fold(0u64, |a, &s| a.checked_add(s));
        if Some(m.positions) != positions || m.losses > m.positions {
            return Err(invalid("positions or losses do not fit the box".into()));
        }
        let names: Vec<&str> = m.files.keys().map(String::as_str).collect();
        if names != [TABLE, LEVELS] {
            return Err(invalid(format!("files must be exactly {TABLE:?} and {LEVELS:?}, not {names:?}")));
        }
        let t = &m.files[TABLE];
        if t.head_bytes.is_none_or(|h| h >= t.bytes || h < FIELDS as u64 + 4) || t.head_sha256.as_ref().is_none_or(|s| s.len() != 64) {
            return Err(invalid(format!("{TABLE} is listed without a head shorter than the file")));
        }
        if m.files[LEVELS].head_bytes.is_some() || m.files[LEVELS].head_sha256.is_some() {
            return Err(invalid(format!("{LEVELS} is listed with a head")));
        }
        Ok(m)
    }

    /// Sets the checksum and writes `DIR/manifest.json` atomically.
    ///
    /// # Errors
    /// [`FewRowError::Io`].
    pub fn write(&mut self, dir: &Path) -> Result<(), FewRowError> {
        write_atomic(&dir.join(MANIFEST), self.seal().as_bytes()).map_err(|e| FewRowError::Io(e.to_string()))
    }
}

/// Whether `dir` is a few-row directory: a manifest of [`FORMAT_NAME`], or
/// the older layout ([`LEGACY_TABLE`] and no manifest).
pub fn is_few_row_dir(dir: &Path) -> bool {
    match std::fs::read(dir.join(MANIFEST)) {
        Ok(bytes) => manifest_format(&bytes).as_deref() == Some(FORMAT_NAME),
        Err(_) => dir.join(LEGACY_TABLE).is_file(),
    }
}

/// Whether the manifest file at `path` is a few-row directory's (by its
/// `format` field; not checked further).
pub fn is_few_row_manifest(path: &Path) -> bool {
    std::fs::read(path).ok().and_then(|b| manifest_format(&b)).as_deref() == Some(FORMAT_NAME)
}

/// Compares directory `dir` with the published few-row manifest file
/// `published`: every file it lists present with its size and SHA-256,
/// `manifest.json` equal to it byte for byte, nothing else there.
///
/// # Errors
/// When the published manifest cannot be read or is not a few-row one.
pub fn against(dir: &Path, published: &Path) -> Result<crate::read::verify::Against, FewRowError> {
    let text = std::fs::read(published).map_err(|e| FewRowError::Io(format!("{}: {e}", published.display())))?;
    let m = FewRowManifest::parse(published, std::str::from_utf8(&text).unwrap_or(""))?;
    Ok(crate::read::verify::against_files(dir, &text, &m.files))
}

/// The `format` field of a manifest's bytes, if it has one.
pub fn manifest_format(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    Some(v.get("format")?.as_str()?.to_string())
}

/// The header of [`TABLE`]: its first block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    k: u32,
    n: u32,
    entries: u64,
    block_bytes: u32,
    block_entries: u32,
    blocks: u64,
    file_len: u64,
}

impl Header {
    fn new(shape: FewRowBox, block_bytes: u32) -> Self {
        let entries = shape.prefixes().expect("a table that fits in memory");
        let block_entries = (block_bytes - 4) / 2;
        let blocks = entries.div_ceil(u64::from(block_entries));
        let last = entries - (blocks - 1) * u64::from(block_entries);
        let file_len = u64::from(block_bytes) * blocks + 2 * last + 4;
        Header { k: shape.k(), n: shape.n(), entries, block_bytes, block_entries, blocks, file_len }
    }

    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.block_bytes as usize);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        for v in [self.k, self.n] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.entries.to_le_bytes());
        for v in [self.block_bytes, self.block_entries] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.blocks.to_le_bytes());
        b.extend_from_slice(&self.file_len.to_le_bytes());
        debug_assert_eq!(b.len(), FIELDS);
        b.resize(self.block_bytes as usize - 4, 0);
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks a header block (`bytes`: at least the block).
    fn decode(path: &Path, bytes: &[u8]) -> Result<Self, FewRowError> {
        let bad = |what: &str| FewRowError::Damaged(format!("{}: {what}", path.display()));
        if bytes.len() < FIELDS + 4 || bytes[..8] != MAGIC {
            return Err(bad("not a few-row table (no CHOMPFR2 header)"));
        }
        let u16_at = |i: usize| u16::from_le_bytes(bytes[i..i + 2].try_into().expect("2 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let block_bytes = u32_at(28);
        if !(FIELDS as u32 + 4..=1 << 24).contains(&block_bytes) || block_bytes % 2 != 0 || bytes.len() < block_bytes as usize {
            return Err(bad(&format!("a header of {block_bytes} bytes a block, not an even number in {}..=2^24", FIELDS + 4)));
        }
        let head = &bytes[..block_bytes as usize];
        let (body, crc) = head.split_at(head.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad("damaged header (its CRC-32 does not match)"));
        }
        if u16_at(8) != VERSION || u16_at(10) != 0 || body[FIELDS..].iter().any(|&b| b != 0) {
            return Err(bad(&format!("table version {} is not the version this tool reads ({VERSION})", u16_at(8))));
        }
        let h = Header {
            k: u32_at(12),
            n: u32_at(16),
            entries: u64_at(20),
            block_bytes,
            block_entries: u32_at(32),
            blocks: u64_at(36),
            file_len: u64_at(44),
        };
        let shape = FewRowBox::new(h.k, h.n).map_err(|e| bad(&e.to_string()))?;
        if Header::new(shape, block_bytes) != h {
            return Err(bad("header fields that do not describe one table of their box"));
        }
        Ok(h)
    }

    /// Offset and entries of data block `b`.
    fn block(&self, b: u64) -> (u64, usize) {
        let first = b * u64::from(self.block_entries);
        let count = (self.entries - first).min(u64::from(self.block_entries)) as usize;
        (u64::from(self.block_bytes) * (1 + b), count)
    }
}

/// The CRC-32 of data block `b`: over its index (`u64`) and its entries.
fn block_crc(b: u64, entries: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b.to_le_bytes());
    h.update(entries);
    h.finalize()
}

/// What [`write_dir`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// Positions and losses of every level `1..=rows·cols`.
    pub levels: Vec<LevelCount>,
    /// The manifest written.
    pub manifest: FewRowManifest,
}

/// Writes the few-row directory of `shape` into `dir` from its prefix
/// table's entries in rank order: [`TABLE`] (as `NAME.tmp`, synced and
/// renamed), [`LEVELS`] and, last, the manifest. The level counts are
/// counted from the entries on the way.
///
/// # Errors
/// [`FewRowError::Io`]; [`FewRowError::Position`] when `entries` yields
/// another number of entries than the box has prefixes.
pub fn write_dir(dir: &Path, shape: FewRowBox, entries: impl IntoIterator<Item = u16>) -> Result<Written, FewRowError> {
    write_dir_blocks(dir, shape, entries, BLOCK_BYTES)
}

/// [`write_dir`] with blocks of `block_bytes` (tests: many small blocks).
#[doc(hidden)]
pub fn write_dir_blocks(
    dir: &Path,
    shape: FewRowBox,
    entries: impl IntoIterator<Item = u16>,
    block_bytes: u32,
) -> Result<Written, FewRowError> {
    let io = |p: &Path, e: std::io::Error| FewRowError::Io(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let header = Header::new(shape, block_bytes);
    let path = dir.join(TABLE);
    let tmp = crate::store::tmp_path(&path);
    let file = File::create(&tmp).map_err(|e| io(&tmp, e))?;
    let mut w = BufWriter::with_capacity(1 << 22, file);
    let mut sha = Sha256::new();
    let head = header.encode();
    let head_sha = sha256_hex(&head);
    sha.update(&head);
    w.write_all(&head).map_err(|e| io(&tmp, e))?;
    // Level counts from the prefixes, walked in rank order.
    let (k, n) = (shape.k() as usize, shape.n());
    let sizes = shape.level_sizes();
    let mut losses_at = vec![0u64; sizes.len()];
    let mut prefix = vec![0u16; k - 1];
    let mut entries = entries.into_iter();
    let mut buf = Vec::with_capacity(block_bytes as usize);
    for b in 0..header.blocks {
        let (_, count) = header.block(b);
        buf.clear();
        for _ in 0..count {
            let e = entries.next().ok_or_else(|| FewRowError::Position(format!("fewer entries than the {} prefixes", header.entries)))?;
            if e != NONE {
                losses_at[prefix.iter().map(|&v| v as usize).sum::<usize>() + e as usize] += 1;
            }
            next_prefix(&mut prefix, n as u16);
            buf.extend_from_slice(&e.to_le_bytes());
        }
        let crc = block_crc(b, &buf);
        buf.extend_from_slice(&crc.to_le_bytes());
        if b + 1 < header.blocks {
            buf.resize(block_bytes as usize, 0);
        }
        sha.update(&buf);
        w.write_all(&buf).map_err(|e| io(&tmp, e))?;
    }
    if entries.next().is_some() {
        return Err(FewRowError::Position(format!("more entries than the {} prefixes", header.entries)));
    }
    let file = w.into_inner().map_err(|e| io(&tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))?;
    let levels: Vec<LevelCount> =
        (1..sizes.len()).map(|t| LevelCount { tiles: t as u32, positions: sizes[t], losses: losses_at[t] }).collect();
    let csv = levels_csv(&levels);
    write_atomic(&dir.join(LEVELS), csv.as_bytes()).map_err(|e| FewRowError::Io(e.to_string()))?;
    let table_entry = FileEntry {
        bytes: header.file_len,
        sha256: sha.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        head_bytes: Some(u64::from(block_bytes).min(header.file_len)),
        head_sha256: Some(head_sha),
    };
    let mut manifest = FewRowManifest {
        format: FORMAT_NAME.into(),
        format_version: VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        engine: ENGINE.into(),
        universe: FewRowUniverse { rows: shape.rows, cols: shape.cols },
        prefixes: header.entries,
        positions: levels.iter().map(|l| l.positions).sum(),
        losses: levels.iter().map(|l| l.losses).sum(),
        files: BTreeMap::from([(TABLE.to_string(), table_entry), (LEVELS.to_string(), FileEntry::of(csv.as_bytes()))]),
        checksum: String::new(),
    };
    manifest.write(dir)?;
    Ok(Written { levels, manifest })
}

/// `levels.csv`: `tiles,positions,losses`, one line a level.
pub fn levels_csv(levels: &[LevelCount]) -> String {
    let mut s = String::from("tiles,positions,losses\n");
    for l in levels {
        s.push_str(&format!("{},{},{}\n", l.tiles, l.positions, l.losses));
    }
    s
}

/// Where the entries are.
#[derive(Debug)]
enum Layout {
    /// [`TABLE`]: every block checked as it is read.
    Blocked(Header),
    /// [`LEGACY_TABLE`], its CRC-32 checked over the whole file at opening.
    Legacy { entries: u64 },
}

/// A position's outcome and its winning moves, as a few-row table gives them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FewRowAnswer {
    /// Whether the player to move loses.
    pub loss: bool,
    /// The bites `[row, column]` (0-based, in the position as given) that
    /// leave a loss, in row then column order.
    pub winning_moves: Vec<[u32; 2]>,
}

/// An open few-row directory: answers outcomes and winning moves, reading
/// and checking only the blocks they need.
#[derive(Debug)]
pub struct FewRowDir {
    dir: PathBuf,
    shape: FewRowBox,
    ranking: PrefixRanking,
    manifest: Option<FewRowManifest>,
    file: File,
    layout: Layout,
}

/// A position placed in the table: the rank of its prefix and its last row.
#[derive(Clone, Copy, Debug)]
struct Placed {
    rank: u64,
    last: u16,
}

/// Blocks a reader thread takes at least when a look-up needs many
/// ([`FewRowDir::entries`]): fewer are read on the calling thread.
const BLOCKS_PER_READER: usize = 64;
/// The most reader threads of one look-up: reads in flight at once.
const MAX_READERS: usize = 32;

impl FewRowDir {
    /// Opens a few-row directory: its manifest (checked), the table's
    /// length and header (against the manifest's head SHA-256). A directory
    /// of the older layout (no manifest) is read after checking the CRC-32
    /// of its whole [`LEGACY_TABLE`].
    ///
    /// # Errors
    /// [`FewRowError::Damaged`] for anything that fails a check,
    /// [`FewRowError::Io`] when a file cannot be read.
    pub fn open(dir: &Path) -> Result<Self, FewRowError> {
        let mpath = dir.join(MANIFEST);
        match std::fs::read_to_string(&mpath) {
            Ok(text) => Self::with_manifest(dir, FewRowManifest::parse(&mpath, &text)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.join(LEGACY_TABLE).is_file() => Self::open_legacy(dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(FewRowError::Io(format!("{}: no manifest.json and no {LEGACY_TABLE}; not a few-row directory", dir.display())))
            }
            Err(e) => Err(FewRowError::Io(format!("{}: {e}", mpath.display()))),
        }
    }

    /// Opens `dir` pinned to a published manifest: its own manifest must be
    /// that file byte for byte, or nothing is answered from it.
    ///
    /// # Errors
    /// As [`FewRowDir::open`], and [`FewRowError::Damaged`] when the
    /// manifests differ.
    pub fn open_against(dir: &Path, against: &Path) -> Result<Self, FewRowError> {
        let want = std::fs::read(against).map_err(|e| FewRowError::Io(format!("{}: {e}", against.display())))?;
        let m = FewRowManifest::parse(against, std::str::from_utf8(&want).unwrap_or(""))?;
        let held = std::fs::read(dir.join(MANIFEST)).map_err(|e| FewRowError::Io(format!("{}: {e}", dir.join(MANIFEST).display())))?;
        if held != want {
            return Err(FewRowError::Damaged(format!(
                "{}: manifest.json differs from the published manifest {}: these are not the published tables",
                dir.display(),
                against.display()
            )));
        }
        Self::with_manifest(dir, m)
    }

    fn with_manifest(dir: &Path, m: FewRowManifest) -> Result<Self, FewRowError> {
        let path = dir.join(TABLE);
        let bad = |what: String| FewRowError::Damaged(format!("{}: {what}", path.display()));
        let entry = &m.files[TABLE];
        let file = File::open(&path).map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?;
        let len = file.metadata().map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?.len();
        if len != entry.bytes {
            return Err(bad(format!("{len} bytes, manifest.json says {}", entry.bytes)));
        }
        let head_len = entry.head_bytes.expect("checked with the manifest") as usize;
        let mut head = vec![0u8; head_len];
        file.read_exact_at(&mut head, 0).map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?;
        if Some(sha256_hex(&head)) != entry.head_sha256 {
            return Err(bad("damaged header (its SHA-256 differs from manifest.json)".into()));
        }
        let h = Header::decode(&path, &head)?;
        let shape = FewRowBox::new(m.universe.rows, m.universe.cols).expect("checked with the manifest");
        if (h.k, h.n) != (shape.k(), shape.n()) || h.file_len != len || h.block_bytes as usize != head_len {
            return Err(bad(format!("a table of {} rows of {}, not of the {}x{} box of manifest.json", h.k, h.n, shape.rows, shape.cols)));
        }
        let ranking = PrefixRanking::new(h.k as usize - 1, h.n).ok_or_else(|| bad("an impossible box".into()))?;
        Ok(FewRowDir { dir: dir.to_path_buf(), shape, ranking, manifest: Some(m), file, layout: Layout::Blocked(h) })
    }

    fn open_legacy(dir: &Path) -> Result<Self, FewRowError> {
        let path = dir.join(LEGACY_TABLE);
        let bad = |what: &str| FewRowError::Damaged(format!("{}: {what}", path.display()));
        let io = |e: std::io::Error| FewRowError::Io(format!("{}: {e}", path.display()));
        let mut file = File::open(&path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut header = [0u8; LEGACY_HEADER as usize];
        file.read_exact(&mut header).map_err(|_| bad("too short for a few-row table"))?;
        if header[..8] != LEGACY_MAGIC {
            return Err(bad("not a few-row table"));
        }
        let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
        let (k, n, next) = (word(8), word(12), word(16));
        let entries = u64::from_le_bytes(header[20..28].try_into().expect("8 bytes"));
        let shape = FewRowBox::new(k, n).map_err(|e| bad(&e.to_string()))?;
        if k > n && k > 1 || Some(entries) != shape.prefixes() || len != LEGACY_HEADER + 2 * entries + 4 {
            return Err(bad("a header that does not describe a table of its box, or a file of another length"));
        }
        if next != (k.saturating_sub(2)) * n + 1 {
            return Err(bad("an unfinished table (a checkpoint: its run has not ended)"));
        }
        // The one CRC-32 covers everything before it: the whole file is read once.
        let mut crc = crc32fast::Hasher::new();
        crc.update(&header);
        let mut buf = vec![0u8; 1 << 20];
        let mut left = len - LEGACY_HEADER - 4;
        while left > 0 {
            let take = left.min(buf.len() as u64) as usize;
            file.read_exact(&mut buf[..take]).map_err(io)?;
            crc.update(&buf[..take]);
            left -= take as u64;
        }
        let mut sum = [0u8; 4];
        file.read_exact(&mut sum).map_err(io)?;
        if u32::from_le_bytes(sum) != crc.finalize() {
            return Err(bad("damaged (its CRC-32 does not match)"));
        }
        let ranking = PrefixRanking::new(k as usize - 1, n).ok_or_else(|| bad("an impossible box"))?;
        Ok(FewRowDir { dir: dir.to_path_buf(), shape, ranking, manifest: None, file, layout: Layout::Legacy { entries } })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The box (as the manifest names it; a directory of the older layout
    /// knows only `k` rows of `n`).
    pub fn shape(&self) -> FewRowBox {
        self.shape
    }

    /// The manifest (`None` for a directory of the older layout).
    pub fn manifest(&self) -> Option<&FewRowManifest> {
        self.manifest.as_ref()
    }

    /// Whether the directory has the older layout (no manifest).
    pub fn is_legacy(&self) -> bool {
        matches!(self.layout, Layout::Legacy { .. })
    }

    /// Entries of the prefix table.
    pub fn prefixes(&self) -> u64 {
        match &self.layout {
            Layout::Blocked(h) => h.entries,
            Layout::Legacy { entries } => *entries,
        }
    }

    /// The position as the table holds it, in either orientation.
    ///
    /// # Errors
    /// [`FewRowError::Position`] for the empty board or a position that
    /// fits the box in neither orientation.
    fn place(&self, p: &FewRowPosition) -> Result<Placed, FewRowError> {
        let (k, n) = (self.shape.k() as usize, self.shape.n());
        if p.rows().is_empty() {
            return Err(FewRowError::Position("the empty board is not a position (the poisoned tile is always there)".into()));
        }
        let fits = |q: &FewRowPosition| q.rows().len() <= k && q.rows().first().is_none_or(|&r| u32::from(r) <= n);
        let q = if fits(p) { Some(*p) } else { p.transposed().filter(|t| fits(t)) };
        let q = q.ok_or_else(|| {
            FewRowError::Position(format!(
                "the position does not fit the {}x{} box in either orientation",
                self.shape.rows, self.shape.cols
            ))
        })?;
        let mut all = [0u16; MAX_ROWS as usize];
        all[..q.rows().len()].copy_from_slice(q.rows());
        Ok(Placed { rank: self.ranking.rank(&all[..k - 1]), last: all[k - 1] })
    }

    /// The entries of prefix ranks `ranks`, each block read once (many
    /// blocks on up to [`MAX_READERS`] threads) and
    /// checked before any entry of it is used.
    ///
    /// # Errors
    /// [`FewRowError::Damaged`] for a block that fails its CRC-32,
    /// [`FewRowError::Io`].
    pub fn entries(&self, ranks: &[u64]) -> Result<Vec<u16>, FewRowError> {
        let path = || match self.layout {
            Layout::Blocked(_) => self.dir.join(TABLE),
            Layout::Legacy { .. } => self.dir.join(LEGACY_TABLE),
        };
        let io = |e: std::io::Error| FewRowError::Io(format!("{}: {e}", path().display()));
        let mut order: Vec<usize> = (0..ranks.len()).collect();
        order.sort_unstable_by_key(|&i| ranks[i]);
        let mut out = vec![NONE; ranks.len()];
        if let Some(&i) = order.last() {
            if ranks[i] >= self.prefixes() {
                return Err(FewRowError::Position(format!("prefix rank {} beyond the table's {}", ranks[i], self.prefixes())));
            }
        }
        match &self.layout {
            Layout::Legacy { .. } => {
                for (i, &r) in ranks.iter().enumerate() {
                    let mut e = [0u8; 2];
                    self.file.read_exact_at(&mut e, LEGACY_HEADER + 2 * r).map_err(io)?;
                    out[i] = u16::from_le_bytes(e);
                }
            }
            Layout::Blocked(h) => {
                // The distinct blocks in order: the runs of `order` in one block.
                let per = u64::from(h.block_entries);
                let groups: Vec<&[usize]> = order.chunk_by(|&x, &y| ranks[x] / per == ranks[y] / per).collect();
                // Many blocks (a position's children spread over a large
                // table) are read on several threads at once, which keeps
                // the disk's queue full: read one by one, the 5,000 blocks
                // of a full 4×3000 position not in the page cache took 0.6 s.
                let threads = (groups.len() / BLOCKS_PER_READER).clamp(1, MAX_READERS);
                let read = |part: &[&[usize]]| -> Result<Vec<(usize, u16)>, FewRowError> {
                    if threads > 1 {
                        // Every reader queues all its reads first.
                        self.will_need(h, part.iter().map(|places| ranks[places[0]] / per));
                    }
                    let mut buf = vec![0u8; h.block_bytes as usize];
                    let mut got = Vec::new();
                    for places in part {
                        self.read_block(h, ranks[places[0]] / per, &mut buf)?;
                        for &i in *places {
                            let at = 2 * (ranks[i] % per) as usize;
                            got.push((i, u16::from_le_bytes([buf[at], buf[at + 1]])));
                        }
                    }
                    Ok(got)
                };
                let parts: Vec<Result<Vec<(usize, u16)>, FewRowError>> = if threads == 1 {
                    vec![read(&groups)]
                } else {
                    std::thread::scope(|s| {
                        let running: Vec<_> =
                            groups.chunks(groups.len().div_ceil(threads)).map(|part| s.spawn(move || read(part))).collect();
                        running.into_iter().map(|t| t.join().expect("a block reader")).collect()
                    })
                };
                for part in parts {
                    for (i, e) in part? {
                        out[i] = e;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Asks the kernel to start reading the data blocks `blocks` (in
    /// order) at once, adjacent ones as one range: the readers of
    /// [`FewRowDir::entries`] then wait on reads already queued instead of
    /// issuing them one after another. A hint: it changes no answer, and
    /// its failure nothing.
    fn will_need(&self, h: &Header, blocks: impl Iterator<Item = u64>) {
        use std::os::fd::AsRawFd;
        let advise = |(start, end): (u64, u64)| {
            // SAFETY: posix_fadvise reads no memory of ours; the descriptor is open.
            unsafe {
                libc::posix_fadvise(self.file.as_raw_fd(), start as libc::off_t, (end - start) as libc::off_t, libc::POSIX_FADV_WILLNEED)
            };
        };
        let mut range: Option<(u64, u64)> = None;
        for b in blocks {
            let (offset, count) = h.block(b);
            let end = offset + 2 * count as u64 + 4;
            range = match range {
                Some((start, last)) if last == offset => Some((start, end)),
                Some(done) => {
                    advise(done);
                    Some((offset, end))
                }
                None => Some((offset, end)),
            };
        }
        if let Some(last) = range {
            advise(last);
        }
    }

    /// Reads data block `b` into `buf` and checks its CRC-32.
    fn read_block(&self, h: &Header, b: u64, buf: &mut Vec<u8>) -> Result<usize, FewRowError> {
        let path = self.dir.join(TABLE);
        let (offset, count) = h.block(b);
        buf.resize(2 * count + 4, 0);
        self.file.read_exact_at(buf, offset).map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?;
        let (data, crc) = buf.split_at(2 * count);
        if block_crc(b, data) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(FewRowError::Damaged(format!(
                "{}: damaged block {b} of {} (its CRC-32 does not match; prefix ranks {}..{}): nothing is answered from it",
                path.display(),
                h.blocks,
                b * u64::from(h.block_entries),
                b * u64::from(h.block_entries) + count as u64
            )));
        }
        Ok(count)
    }

    /// Calls `f(first_rank, entries)` for every block in order, each checked
    /// (a directory of the older layout in pieces of a million entries,
    /// checked at opening).
    ///
    /// # Errors
    /// The first block that fails, or `f`'s error.
    pub fn for_each_block(&self, mut f: impl FnMut(u64, &[u16]) -> Result<(), FewRowError>) -> Result<(), FewRowError> {
        let mut entries = Vec::new();
        match &self.layout {
            Layout::Blocked(h) => {
                let mut buf = Vec::with_capacity(h.block_bytes as usize);
                for b in 0..h.blocks {
                    let count = self.read_block(h, b, &mut buf)?;
                    entries.clear();
                    entries.extend(buf[..2 * count].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
                    f(b * u64::from(h.block_entries), &entries)?;
                }
            }
            Layout::Legacy { entries: total } => {
                let piece = 1u64 << 20;
                let mut buf = vec![0u8; 2 * piece as usize];
                let mut first = 0;
                while first < *total {
                    let count = (total - first).min(piece) as usize;
                    self.file
                        .read_exact_at(&mut buf[..2 * count], LEGACY_HEADER + 2 * first)
                        .map_err(|e| FewRowError::Io(format!("{}: {e}", self.dir.join(LEGACY_TABLE).display())))?;
                    entries.clear();
                    entries.extend(buf[..2 * count].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])));
                    f(first, &entries)?;
                    first += count as u64;
                }
            }
        }
        Ok(())
    }

    /// Whether `p` (in either orientation) is a loss for the player to move.
    ///
    /// # Errors
    /// [`FewRowError::Position`] when `p` is empty or outside the box;
    /// [`FewRowError::Damaged`] when its block fails its check.
    pub fn is_loss(&self, p: &FewRowPosition) -> Result<bool, FewRowError> {
        let at = self.place(p)?;
        let e = self.entries(&[at.rank])?[0];
        Ok(e != NONE && e == at.last)
    }

    /// The winning moves of `p`: its bites `[row, column]` that leave a
    /// loss (none for a loss).
    ///
    /// # Errors
    /// As [`FewRowDir::answer`].
    pub fn winning_moves(&self, p: &FewRowPosition) -> Result<Vec<[u32; 2]>, FewRowError> {
        Ok(self.answer(p)?.winning_moves)
    }

    /// The outcome of `p` and its winning moves, from one read of every
    /// block they need. A table that calls `p` a loss and one of its children
    /// a loss too (or `p` a win and no child a loss) contradicts itself:
    /// no answer is given.
    ///
    /// # Errors
    /// [`FewRowError::Position`] when `p` is empty or outside the box;
    /// [`FewRowError::Damaged`] when a block fails its check or the table
    /// contradicts itself at `p`.
    pub fn answer(&self, p: &FewRowPosition) -> Result<FewRowAnswer, FewRowError> {
        let me = self.place(p)?;
        let rows = p.rows();
        let mut moves = Vec::new();
        let mut placed = vec![me];
        for (a, &len) in rows.iter().enumerate() {
            for b in 0..len {
                if a == 0 && b == 0 {
                    continue;
                }
                let mut child = [0u32; MAX_ROWS as usize];
                for (i, (&v, c)) in rows.iter().zip(child.iter_mut()).enumerate() {
                    *c = if i >= a { u32::from(v.min(b)) } else { u32::from(v) };
                }
                let child = FewRowPosition::new(&child[..rows.len()])?;
                placed.push(self.place(&child)?);
                moves.push([a as u32, u32::from(b)]);
            }
        }
        let ranks: Vec<u64> = placed.iter().map(|q| q.rank).collect();
        let entries = self.entries(&ranks)?;
        let lost = |i: usize| entries[i] != NONE && entries[i] == placed[i].last;
        let loss = lost(0);
        let winning_moves: Vec<[u32; 2]> = moves.iter().enumerate().filter(|&(i, _)| lost(i + 1)).map(|(_, &m)| m).collect();
        if loss != winning_moves.is_empty() {
            let shown: Vec<String> = rows.iter().map(u16::to_string).collect();
            return Err(FewRowError::Damaged(format!(
                "{}: the table contradicts itself at {}: it calls the position a {} and {} of its children losses",
                self.dir.display(),
                shown.join(" "),
                if loss { "loss" } else { "win" },
                winning_moves.len()
            )));
        }
        Ok(FewRowAnswer { loss, winning_moves })
    }
}

impl FewRowDir {
    /// [`FewRowDir::answer`] of a position given by its rows, of which
    /// there may be more than [`MAX_ROWS`] when its columns are fewer (a
    /// box with more rows than columns): such a position is answered as its
    /// transpose and the moves turned back.
    ///
    /// # Errors
    /// As [`FewRowDir::answer`]; [`FewRowError::Position`] for rows that
    /// are no position of at most eight rows or eight columns.
    pub fn answer_rows(&self, rows: &[u32]) -> Result<FewRowAnswer, FewRowError> {
        let rows = &rows[..rows.iter().rposition(|&r| r > 0).map_or(0, |i| i + 1)];
        if rows.len() <= MAX_ROWS as usize {
            return self.answer(&FewRowPosition::new(rows)?);
        }
        if rows.windows(2).any(|w| w[0] < w[1]) {
            return Err(FewRowError::Position("rows must not increase from top to bottom".into()));
        }
        if rows.len() > super::MAX_COLS as usize || rows[0] > MAX_ROWS {
            return Err(FewRowError::Position(format!(
                "{} rows of up to {} are more than a few-row position may have",
                rows.len(),
                rows[0]
            )));
        }
        let turned: Vec<u32> = (0..rows[0]).map(|j| rows.iter().filter(|&&r| r > j).count() as u32).collect();
        let mut a = self.answer(&FewRowPosition::new(&turned)?)?;
        a.winning_moves.iter_mut().for_each(|m| m.swap(0, 1));
        a.winning_moves.sort_unstable();
        Ok(a)
    }
}

/// What [`verify`] found.
#[derive(Clone, Debug, Default)]
pub struct FewRowVerified {
    /// Files whose size and SHA-256 equal the manifest's.
    pub files: usize,
    /// Blocks read and checked (pieces, for the older layout).
    pub blocks: u64,
    /// Losses counted in the table.
    pub losses: u64,
    /// Positions checked against their children.
    pub samples: u64,
    /// Entries compared with a new solve (`--full`).
    pub resolved: Option<u64>,
}

/// Checks a few-row directory: the manifest, every listed file's size and
/// SHA-256, every block's CRC-32, the losses and level counts counted from
/// the table against the manifest and `levels.csv`, and `samples` positions
/// (drawn with `seed`, every second one a loss) against their children.
/// With `full`, the box is solved again (with the plain method: every
/// child prefix read, no carried sets) and every entry compared.
///
/// # Errors
/// [`FewRowError`] naming the first fault found.
pub fn verify(dir: &Path, samples: u64, seed: u64, full: Option<&super::SolveOptions>) -> Result<FewRowVerified, FewRowError> {
    let t = FewRowDir::open(dir)?;
    let mut report = FewRowVerified::default();
    // Every block, and the level counts from the entries.
    let shape = t.shape();
    let (k, n) = (shape.k() as usize, shape.n());
    let sizes = shape.level_sizes();
    let mut losses_at = vec![0u64; sizes.len()];
    let mut prefix = vec![0u16; k - 1];
    t.for_each_block(|_, entries| {
        report.blocks += 1;
        for &e in entries {
            if e != NONE {
                let last = prefix.last().copied().unwrap_or(n as u16);
                if e > last {
                    return Err(FewRowError::Damaged(format!(
                        "{}: the entry of prefix {prefix:?} is {e}, longer than its last row",
                        dir.display()
                    )));
                }
                losses_at[prefix.iter().map(|&v| v as usize).sum::<usize>() + e as usize] += 1;
            }
            next_prefix(&mut prefix, n as u16);
        }
        Ok(())
    })?;
    let levels: Vec<LevelCount> =
        (1..sizes.len()).map(|t| LevelCount { tiles: t as u32, positions: sizes[t], losses: losses_at[t] }).collect();
    report.losses = levels.iter().map(|l| l.losses).sum();
    if let Some(m) = t.manifest() {
        for (name, e) in &m.files {
            let path = dir.join(name);
            let (len, sha) = file_sha256(&path).map_err(|e| FewRowError::Io(format!("{}: {e}", path.display())))?;
            if len != e.bytes || sha != e.sha256 {
                return Err(FewRowError::Damaged(format!("{}: its size or SHA-256 differs from manifest.json", path.display())));
            }
            report.files += 1;
        }
    }
    if let Some(m) = t.manifest() {
        if report.losses != m.losses {
            return Err(FewRowError::Damaged(format!(
                "{}: the table holds {} losses, manifest.json says {}",
                dir.display(),
                report.losses,
                m.losses
            )));
        }
        let csv = std::fs::read(dir.join(LEVELS)).map_err(|e| FewRowError::Io(format!("{}: {e}", dir.join(LEVELS).display())))?;
        if csv != levels_csv(&levels).as_bytes() {
            return Err(FewRowError::Damaged(format!("{}: its counts differ from the table's", dir.join(LEVELS).display())));
        }
    }
    // Samples: random positions (top rows drawn, sorted) and the loss of each one's prefix.
    let mut rng = SplitMix(seed);
    let mut i = 0;
    while i < samples {
        let mut rows: Vec<u32> = super::random_rows(&mut rng, k, n)[..k].iter().map(|&r| u32::from(r)).collect();
        let p = FewRowPosition::new(&rows)?;
        t.answer(&p)?;
        i += 1;
        if i < samples {
            let at = t.place(&p)?;
            let e = t.entries(&[at.rank])?[0];
            if e != NONE && (e > 0 || rows[..k - 1].iter().any(|&r| r > 0)) {
                rows[k - 1] = u32::from(e);
                let q = FewRowPosition::new(&rows)?;
                if !t.answer(&q)?.loss {
                    return Err(FewRowError::Damaged(format!("{}: the loss of prefix {:?} is a win", dir.display(), &rows[..k - 1])));
                }
                i += 1;
            }
        }
    }
    report.samples = samples;
    if let Some(opts) = full {
        let solved = super::solve(shape, opts, &super::Progress::default())?;
        let mut compared = 0u64;
        t.for_each_block(|first, entries| {
            for (j, &e) in entries.iter().enumerate() {
                let r = first + j as u64;
                if solved.entry(r) != e {
                    return Err(FewRowError::Damaged(format!(
                        "{}: prefix rank {r} holds {e}, a new solve gives {}",
                        dir.display(),
                        solved.entry(r)
                    )));
                }
            }
            compared += entries.len() as u64;
            Ok(())
        })?;
        report.resolved = Some(compared);
    }
    Ok(report)
}

/// Rewrites a directory of the older layout (or any few-row directory) as
/// the current one in `out`, from its checked entries.
///
/// # Errors
/// [`FewRowError`] when the source fails a check or `out` cannot be written.
pub fn convert(src: &Path, out: &Path) -> Result<Written, FewRowError> {
    let t = FewRowDir::open(src)?;
    if out.join(MANIFEST).exists() {
        return Err(FewRowError::Io(format!("{}: holds a manifest.json already; give a new directory", out.display())));
    }
    // Entries read block by block (each checked) on a thread of their own,
    // streamed to the writer; an error stops the stream and is reported.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u16>>(16);
    let source = &t;
    let (written, read) = std::thread::scope(|s| {
        let reader = s.spawn(move || {
            source.for_each_block(|_, entries| tx.send(entries.to_vec()).map_err(|_| FewRowError::Io("the writer stopped".into())))
        });
        let written = write_dir(out, t.shape(), rx.iter().flatten());
        (written, reader.join().expect("the reading thread"))
    });
    if let Err(e) = read {
        let _ = std::fs::remove_file(out.join(MANIFEST));
        return Err(e);
    }
    written
}
