//! Level tables: the files the pipeline publishes, one per level and kind
//! (format 1) or one per shard of a level (format 2).
//!
//! The byte layout is documented in `FORMAT.md`; this module is its
//! reference implementation.
//!
//! ```text
//! offset size field
//!      0    8 magic          b"CHOMPTBL"
//!      8    2 version        1 or 2
//!     10    2 kind           1 = loss set, 2 = Grundy values
//!     12    4 tiles          the level (tile count)
//!     16    4 max_rows       universe row bound, 0 = unbounded
//!     20    4 max_cols       universe column bound, 0 = unbounded
//!     24    4 max_tiles      universe tile bound, 0 = unbounded
//!     28    4 block_size     Grundy: positions per block; losses: 0
//!     32    8 positions      positions in the table (level or shard)
//!     40    8 losses         losing positions in the table
//!     48    8 payload_len    bytes after the header
//!     56    4 payload_crc32  CRC-32 (IEEE) of the payload
//!     60    4 header_crc32   CRC-32 (IEEE) of bytes 0..60          (version 1)
//!     64    … payload                                              (version 1)
//!
//!     60    4 shard          index of the shard in its level        (version 2)
//!     64    8 first          rank of the shard's first position
//!     72    4 shards         shards of the level
//!     76    4 header_crc32   CRC-32 (IEEE) of bytes 0..76
//!     80    … payload
//! ```
//!
//! Loss payload: one zstd frame holding the loss ranks (less `first` in
//! version 2) as a roaring bitmap in the portable serialization. Grundy
//! payload: `blocks + 1` little-endian `u64` offsets (relative to the payload
//! start), then one zstd frame per block of `block_size` values, one byte per
//! position in rank order.
//!
//! # Stability
//! Versions 1 and 2 are frozen: a change to any field or encoding bumps the
//! version, and readers refuse versions they do not know.

use crate::game::Universe;
use roaring::RoaringBitmap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Magic bytes at offset 0 of every table.
pub const MAGIC: [u8; 8] = *b"CHOMPTBL";
/// Format version of a directory with one table per level.
pub const VERSION: u16 = 1;
/// Format version of a directory whose levels are split into shards.
pub const VERSION_SHARDED: u16 = 2;
/// Header length in bytes (version 1).
pub const HEADER_LEN: usize = 64;
/// Header length in bytes (version 2).
pub const HEADER_LEN_SHARDED: usize = 80;
/// Positions per compressed block of a Grundy table.
pub const GRUNDY_BLOCK: u32 = 1 << 16;
/// zstd level used for every payload.
pub(crate) const ZSTD_LEVEL: i32 = 9;

/// `raw` compressed at [`ZSTD_LEVEL`] with this thread's context: making a
/// context for each table (its tables zeroed each time) took about 1 % of a
/// run's CPU, on the thread the others wait for between levels. The bytes
/// are those of a fresh context: its parameters are the level's only.
pub(crate) fn compress(raw: &[u8]) -> Vec<u8> {
    thread_local! {
        static CCTX: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    CCTX.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Compressor::new(ZSTD_LEVEL).expect("a zstd context"));
        }
        c.as_mut().expect("made above").compress(raw).expect("zstd compression in memory")
    })
}

/// What a table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The set of losing positions of a level.
    Losses = 1,
    /// One Grundy value per position of a level.
    Grundy = 2,
}

/// Errors reading or writing a table.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The file's bytes are not a valid table of the expected shape.
    #[error("{path}: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, e.g. "payload checksum mismatch".
        what: String,
    },
}

impl TableError {
    fn corrupt(path: &Path, what: impl Into<String>) -> Self {
        TableError::Corrupt { path: path.to_path_buf(), what: what.into() }
    }
    /// Wraps an I/O error with its path.
    pub fn io(path: &Path, source: io::Error) -> Self {
        TableError::Io { path: path.to_path_buf(), source }
    }
}

/// The fixed-size header of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What the payload holds.
    pub kind: Kind,
    /// The level.
    pub tiles: u32,
    /// Universe bounds, 0 for unbounded.
    pub max_rows: u32,
    /// Universe bounds, 0 for unbounded.
    pub max_cols: u32,
    /// Universe bounds, 0 for unbounded.
    pub max_tiles: u32,
    /// Positions per block (Grundy), 0 for losses.
    pub block_size: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Losing positions in the level (shard).
    pub losses: u64,
    /// Where the table lies in its level (version 2), or `None` (version 1:
    /// the table is the whole level).
    pub shard: Option<ShardPlace>,
}

/// Where a shard's table lies in its level (format 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardPlace {
    /// Index of the shard in its level.
    pub index: u32,
    /// Number of shards of the level.
    pub count: u32,
    /// Rank (in the level) of the shard's first position.
    pub first: u64,
}

impl Header {
    /// A header for level `tiles` of a universe.
    pub fn new(kind: Kind, universe: &Universe, tiles: u32, positions: u64, losses: u64) -> Self {
        Header {
            kind,
            tiles,
            max_rows: universe.rows.unwrap_or(0),
            max_cols: universe.cols.unwrap_or(0),
            max_tiles: universe.tiles.unwrap_or(0),
            block_size: if kind == Kind::Grundy { GRUNDY_BLOCK } else { 0 },
            positions,
            losses,
            shard: None,
        }
    }

    /// The header of shard `place` of level `tiles`, holding `positions`
    /// positions of which `losses` lose.
    pub fn shard(kind: Kind, universe: &Universe, tiles: u32, place: ShardPlace, positions: u64, losses: u64) -> Self {
        Header { shard: Some(place), ..Header::new(kind, universe, tiles, positions, losses) }
    }

    /// The header's length in bytes: 64 (version 1) or 80 (version 2).
    pub fn encoded_len(&self) -> usize {
        if self.shard.is_some() {
            HEADER_LEN_SHARDED
        } else {
            HEADER_LEN
        }
    }

    fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; self.encoded_len()];
        h[0..8].copy_from_slice(&MAGIC);
        let version = if self.shard.is_some() { VERSION_SHARDED } else { VERSION };
        h[8..10].copy_from_slice(&version.to_le_bytes());
        h[10..12].copy_from_slice(&(self.kind as u16).to_le_bytes());
        h[12..16].copy_from_slice(&self.tiles.to_le_bytes());
        h[16..20].copy_from_slice(&self.max_rows.to_le_bytes());
        h[20..24].copy_from_slice(&self.max_cols.to_le_bytes());
        h[24..28].copy_from_slice(&self.max_tiles.to_le_bytes());
        h[28..32].copy_from_slice(&self.block_size.to_le_bytes());
        h[32..40].copy_from_slice(&self.positions.to_le_bytes());
        h[40..48].copy_from_slice(&self.losses.to_le_bytes());
        h[48..56].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        h[56..60].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
        if let Some(place) = self.shard {
            h[60..64].copy_from_slice(&place.index.to_le_bytes());
            h[64..72].copy_from_slice(&place.first.to_le_bytes());
            h[72..76].copy_from_slice(&place.count.to_le_bytes());
        }
        let end = h.len() - 4;
        let crc = crc32fast::hash(&h[0..end]);
        h[end..].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parses and checks a whole table file image; returns the header and the payload.
    fn decode<'a>(path: &Path, bytes: &'a [u8]) -> Result<(Header, &'a [u8]), TableError> {
        if bytes.len() < HEADER_LEN {
            return Err(TableError::corrupt(path, format!("truncated: {} bytes, shorter than the 64-byte header", bytes.len())));
        }
        if bytes[0..8] != MAGIC {
            return Err(TableError::corrupt(path, "not a chomp table (wrong magic bytes)"));
        }
        let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let version = u16_at(8);
        let len = match version {
            VERSION => HEADER_LEN,
            VERSION_SHARDED => HEADER_LEN_SHARDED,
            _ => {
                return Err(TableError::corrupt(
                    path,
                    format!("table format version {version}, this reader knows versions {VERSION} and {VERSION_SHARDED}"),
                ))
            }
        };
        if bytes.len() < len {
            return Err(TableError::corrupt(path, format!("truncated: {} bytes, shorter than the {len}-byte header", bytes.len())));
        }
        if crc32fast::hash(&bytes[0..len - 4]) != u32_at(len - 4) {
            return Err(TableError::corrupt(path, "header checksum mismatch"));
        }
        let kind = match u16_at(10) {
            1 => Kind::Losses,
            2 => Kind::Grundy,
            k => return Err(TableError::corrupt(path, format!("unknown table kind {k}"))),
        };
        let payload_len = u64_at(48);
        if payload_len != (bytes.len() - len) as u64 {
            return Err(TableError::corrupt(
                path,
                format!("truncated or padded: header announces {payload_len} payload bytes, file has {}", bytes.len() - len),
            ));
        }
        let payload = &bytes[len..];
        if crc32fast::hash(payload) != u32_at(56) {
            return Err(TableError::corrupt(path, "payload checksum mismatch"));
        }
        let header = Header {
            kind,
            tiles: u32_at(12),
            max_rows: u32_at(16),
            max_cols: u32_at(20),
            max_tiles: u32_at(24),
            block_size: u32_at(28),
            positions: u64_at(32),
            losses: u64_at(40),
            shard: (version == VERSION_SHARDED).then(|| ShardPlace { index: u32_at(60), first: u64_at(64), count: u32_at(72) }),
        };
        if header.shard.is_some_and(|p| p.index >= p.count) {
            return Err(TableError::corrupt(path, "shard index beyond the level's shard count"));
        }
        if header.positions > 1 << 32 {
            return Err(TableError::corrupt(path, format!("{} positions in one table: more than 2^32", header.positions)));
        }
        Ok((header, payload))
    }

    /// Checks that a table is the one expected at this place of a run.
    /// (The block size is the table's own choice: any non-zero value is read.)
    fn expect(&self, path: &Path, want: &Header) -> Result<(), TableError> {
        if (Header { block_size: want.block_size, ..*self }) != *want {
            return Err(TableError::corrupt(path, format!("header {self:?} does not match the run's {want:?}")));
        }
        Ok(())
    }
}

/// Encodes a loss table from the ranks (in the level) that lie in the
/// table (`first .. first + positions` of a shard).
pub fn encode_losses(header: &Header, ranks: &(impl super::SortedRanks + ?Sized)) -> Vec<u8> {
    let first = header.shard.map_or(0, |p| p.first);
    // Appended in order: far cheaper than inserting each rank (this runs
    // between levels, while the other threads wait).
    let bitmap = RoaringBitmap::from_sorted_iter(
        ranks.ranks_in(first..first + header.positions).map(|r| u32::try_from(r - first).expect("a table of at most 2^32 positions")),
    )
    .expect("loss ranks in increasing order");
    assert_eq!(bitmap.len(), header.losses, "the losses in the table's ranks and its header disagree");
    let mut raw = Vec::with_capacity(bitmap.serialized_size());
    bitmap.serialize_into(&mut raw).expect("writing to memory");
    let payload = compress(&raw);
    let mut out = header.encode(&payload).to_vec();
    out.extend_from_slice(&payload);
    out
}

/// Decodes a loss table image; checks it against `want` when given. The
/// bitmap holds ranks relative to the table's first position (its shard's
/// `first`; 0 in version 1).
///
/// # Errors
/// [`TableError::Corrupt`] for anything but a valid loss table.
pub fn decode_losses(path: &Path, bytes: &[u8], want: Option<&Header>) -> Result<(Header, RoaringBitmap), TableError> {
    let (header, payload) = Header::decode(path, bytes)?;
    if let Some(want) = want {
        header.expect(path, want)?;
    }
    if header.kind != Kind::Losses {
        return Err(TableError::corrupt(path, "expected a loss table"));
    }
    // A roaring bitmap over [0, positions) serializes to at most 8 KiB per
    // 2^16 positions plus small headers: bound the decompression by that.
    let bound = (header.positions / 65536 + 1) * (8192 + 16) + 64;
    single_frame(path, payload, "payload")?;
    let raw = zstd::bulk::decompress(payload, bound as usize).map_err(|e| TableError::corrupt(path, format!("bad zstd payload: {e}")))?;
    let mut rest = &raw[..];
    let bitmap = RoaringBitmap::deserialize_from(&mut rest).map_err(|e| TableError::corrupt(path, format!("bad roaring bitmap: {e}")))?;
    if !rest.is_empty() {
        return Err(TableError::corrupt(path, format!("{} bytes after the roaring bitmap", rest.len())));
    }
    if bitmap.len() != header.losses {
        return Err(TableError::corrupt(path, format!("holds {} losses, header says {}", bitmap.len(), header.losses)));
    }
    if bitmap.max().is_some_and(|m| m as u64 >= header.positions) {
        return Err(TableError::corrupt(path, "a loss rank lies beyond the level"));
    }
    Ok((header, bitmap))
}

/// Checks that `data` is exactly one zstd frame (the format allows no more).
fn single_frame(path: &Path, data: &[u8], what: &str) -> Result<(), TableError> {
    match zstd::zstd_safe::find_frame_compressed_size(data) {
        Ok(len) if len == data.len() => Ok(()),
        Ok(_) => Err(TableError::corrupt(path, format!("{what}: not exactly one zstd frame"))),
        Err(_) => Err(TableError::corrupt(path, format!("{what}: not a zstd frame"))),
    }
}

/// Encodes a Grundy table from one value byte per position.
pub fn encode_grundy(header: &Header, values: &[u8]) -> Vec<u8> {
    assert_eq!(values.len() as u64, header.positions);
    // Blocks compress in parallel in the full tool; a reader-only build writes serially.
    #[cfg(feature = "tool")]
    let blocks: Vec<Vec<u8>> = {
        use rayon::prelude::*;
        values.par_chunks(GRUNDY_BLOCK as usize).map(compress).collect()
    };
    #[cfg(not(feature = "tool"))]
    let blocks: Vec<Vec<u8>> = values.chunks(GRUNDY_BLOCK as usize).map(compress).collect();
    // The file is assembled in place, each block freed once copied: one
    // copy of the compressed level (1.4 GB at 120 tiles), not three.
    let start = header.encoded_len();
    let index = 8 * (blocks.len() + 1);
    let mut out = Vec::with_capacity(start + index + blocks.iter().map(Vec::len).sum::<usize>());
    out.resize(start, 0);
    let mut offset = index as u64;
    out.extend_from_slice(&offset.to_le_bytes());
    for b in &blocks {
        offset += b.len() as u64;
        out.extend_from_slice(&offset.to_le_bytes());
    }
    for b in blocks {
        out.extend_from_slice(&b);
    }
    let head = header.encode(&out[start..]);
    out[..start].copy_from_slice(&head);
    out
}

/// A checked Grundy table, decoded block by block on demand.
pub struct GrundyTable {
    path: PathBuf,
    header: Header,
    bytes: Vec<u8>,
    offsets: Vec<u64>,
}

impl GrundyTable {
    /// Reads and checks a Grundy table (checksums and block index; blocks are
    /// decoded when probed, or all at once by [`GrundyTable::decode_all`]).
    ///
    /// # Errors
    /// [`TableError`] for I/O errors and damaged files.
    pub fn read(path: &Path, want: Option<&Header>) -> Result<Self, TableError> {
        Self::from_bytes(path, fs::read(path).map_err(|e| TableError::io(path, e))?, want)
    }

    /// Checks a Grundy table image already in memory (`path` names it in errors).
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for damaged images and tables of another run.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>, want: Option<&Header>) -> Result<Self, TableError> {
        let (header, payload) = Header::decode(path, &bytes)?;
        if let Some(want) = want {
            header.expect(path, want)?;
        }
        if header.kind != Kind::Grundy || header.block_size == 0 {
            return Err(TableError::corrupt(path, "expected a Grundy table"));
        }
        let blocks = header.positions.div_ceil(header.block_size as u64);
        let index_len = 8 * (blocks + 1);
        if (payload.len() as u64) < index_len {
            return Err(TableError::corrupt(path, "block index truncated"));
        }
        let offsets: Vec<u64> = (0..=blocks as usize).map(|i| u64::from_le_bytes(payload[8 * i..8 * i + 8].try_into().unwrap())).collect();
        if offsets[0] != index_len || offsets.windows(2).any(|w| w[0] > w[1]) || offsets[blocks as usize] != payload.len() as u64 {
            return Err(TableError::corrupt(path, "inconsistent block index"));
        }
        Ok(GrundyTable { path: path.to_path_buf(), header, bytes, offsets })
    }

    /// The table's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Decodes block `b` (values of ranks `b·block_size ..`).
    ///
    /// # Errors
    /// [`TableError::Corrupt`] when the block does not decode to its length.
    pub fn block(&self, b: usize) -> Result<Vec<u8>, TableError> {
        let payload = &self.bytes[self.header.encoded_len()..];
        let bs = self.header.block_size as u64;
        let want = bs.min(self.header.positions - b as u64 * bs) as usize;
        let frame = &payload[self.offsets[b] as usize..self.offsets[b + 1] as usize];
        single_frame(&self.path, frame, &format!("block {b}"))?;
        let raw =
            zstd::bulk::decompress(frame, want).map_err(|e| TableError::corrupt(&self.path, format!("block {b}: bad zstd frame: {e}")))?;
        if raw.len() != want {
            return Err(TableError::corrupt(&self.path, format!("block {b} decodes to {} bytes, expected {want}", raw.len())));
        }
        Ok(raw)
    }

    /// Decodes every block: one value per position in rank order.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] when a block is damaged or the loss count disagrees.
    pub fn decode_all(&self) -> Result<Vec<u8>, TableError> {
        let mut out = Vec::with_capacity(self.header.positions as usize);
        for b in 0..self.offsets.len() - 1 {
            out.extend_from_slice(&self.block(b)?);
        }
        let zeros = out.iter().filter(|&&g| g == 0).count() as u64;
        if zeros != self.header.losses {
            return Err(TableError::corrupt(&self.path, format!("holds {zeros} zero values, header says {} losses", self.header.losses)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_table_roundtrip_and_damage() {
        let u = Universe::tiles(20);
        let h = Header::new(Kind::Losses, &u, 20, 627, 3);
        let bytes = encode_losses(&h, &[1, 50, 600][..]);
        let p = Path::new("x.cht");
        let (h2, b) = decode_losses(p, &bytes, Some(&h)).unwrap();
        assert_eq!(h2, h);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![1, 50, 600]);
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode_losses(p, &bad, Some(&h)).is_err(), "flip at {i} undetected");
        }
        for len in 0..bytes.len() {
            assert!(decode_losses(p, &bytes[..len], Some(&h)).is_err());
        }
    }

    /// The thread's reused context gives the bytes of a fresh one, whatever
    /// it compressed before (a large input, then small and empty ones).
    #[test]
    fn a_reused_context_gives_a_fresh_contexts_bytes() {
        let mut rng = crate::rng::SplitMix(7);
        let big: Vec<u8> = (0..3 << 20).map(|i| if i % 7 == 0 { rng.next_u64() as u8 } else { (i / 1000) as u8 }).collect();
        let inputs: [&[u8]; 5] = [&big, b"chomp", &[], &big[..70_000], &big[1..]];
        for (i, raw) in inputs.iter().enumerate() {
            assert_eq!(compress(raw), zstd::bulk::compress(raw, ZSTD_LEVEL).unwrap(), "input {i}");
        }
    }

    #[test]
    fn bytes_after_the_bitmap_are_refused() {
        // FORMAT.md section 10, check 8: no bytes left over.
        let u = Universe::tiles(20);
        let h = Header::new(Kind::Losses, &u, 20, 627, 3);
        let bitmap: RoaringBitmap = [1u32, 50, 600].into_iter().collect();
        let mut raw = Vec::new();
        bitmap.serialize_into(&mut raw).unwrap();
        raw.push(0);
        let payload = zstd::bulk::compress(&raw, ZSTD_LEVEL).unwrap();
        let mut bytes = h.encode(&payload).to_vec();
        bytes.extend_from_slice(&payload);
        let e = decode_losses(Path::new("x.cht"), &bytes, Some(&h)).unwrap_err().to_string();
        assert!(e.contains("1 bytes after the roaring bitmap"), "{e}");
    }

    #[test]
    fn shard_table_roundtrip_and_damage() {
        let u = Universe::tiles(40);
        let place = ShardPlace { index: 2, count: 5, first: 1000 };
        let h = Header::shard(Kind::Losses, &u, 40, place, 700, 3);
        let bytes = encode_losses(&h, &[1000, 1050, 1699][..]);
        assert_eq!((u16::from_le_bytes([bytes[8], bytes[9]]), h.encoded_len()), (VERSION_SHARDED, HEADER_LEN_SHARDED));
        let p = Path::new("s.cht");
        let (h2, b) = decode_losses(p, &bytes, Some(&h)).unwrap();
        assert_eq!(h2, h);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 50, 699], "ranks relative to the shard");
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode_losses(p, &bad, Some(&h)).is_err(), "flip at {i} undetected");
        }
        // Another shard of the same level is not this one.
        let other = Header::shard(Kind::Losses, &u, 40, ShardPlace { index: 3, ..place }, 700, 3);
        assert!(decode_losses(p, &bytes, Some(&other)).is_err());
        let values: Vec<u8> = (0..70_000u32).map(|i| (i % 5) as u8 + 1).collect();
        let g = Header::shard(Kind::Grundy, &u, 40, place, values.len() as u64, 0);
        let t = GrundyTable::from_bytes(p, encode_grundy(&g, &values), Some(&g)).unwrap();
        assert_eq!(t.decode_all().unwrap(), values);
    }

    #[test]
    fn grundy_table_roundtrip() {
        let u = Universe::tiles(30);
        let values: Vec<u8> = (0..200_000u32).map(|i| (i % 7) as u8 + 1).collect();
        let h = Header::new(Kind::Grundy, &u, 30, values.len() as u64, 0);
        let bytes = encode_grundy(&h, &values);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.cht");
        std::fs::write(&p, &bytes).unwrap();
        let t = GrundyTable::read(&p, Some(&h)).unwrap();
        assert_eq!(t.decode_all().unwrap(), values);
    }
}
