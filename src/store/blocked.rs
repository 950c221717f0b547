//! Format 3: block-addressable tables. A table's positions are cut into
//! blocks of `block_size` consecutive ranks, each compressed on its own; a
//! two-level index (a short head listing the digest of every index page,
//! index pages listing every block's place and digest) lets a reader check
//! and decode exactly the block a question touches. `FORMAT.md` section 17
//! is the byte layout; this module is its reference implementation.
//!
//! ```text
//! offset size field
//!      0    8 magic          b"CHOMPTBL"
//!      8    2 version        3
//!     10    2 kind           1 = losses, 2 = Grundy values
//!     12    4 tiles          the level
//!     16   12 max_rows, max_cols, max_tiles (0 = unbounded)
//!     28    4 block_size     positions per block (1 ..= 65536)
//!     32    8 positions      positions of the table
//!     40    8 losses         losses of the table
//!     48    8 first          rank in the level of the table's first position
//!     56    4 shard          index of the table in its level
//!     60    4 shards         tables of the level
//!     64    4 blocks         ceil(positions / block_size)
//!     68    4 page_entries   block entries per index page
//!     72    8 file_len       bytes of the whole file
//!     80    4 digests_crc32  CRC-32 of the page digests
//!     84    4 header_crc32   CRC-32 of bytes 0..84
//!     88 16·P page digests   P = ceil(blocks / page_entries)
//!          … index pages     32 bytes per block: offset u64, len u32, count u32, digest [16]
//!          … blocks          one zstd frame each
//! ```
//!
//! The **head** is bytes `0 .. 88 + 16·P`; the manifest records its length
//! and SHA-256, so the chain manifest → head → page → block checks every
//! byte an answer comes from. A digest is the first 16 bytes of the SHA-256
//! of the bytes it covers.

use super::format::{Header, Kind, ShardPlace, TableError, MAGIC};
use super::SortedRanks;
use sha2::{Digest as _, Sha256};
use std::path::Path;

/// The table format version of block-addressable tables.
pub const VERSION_BLOCKED: u16 = 3;
/// Length of the fixed part of the head.
pub const FIXED_LEN: usize = 88;
/// Positions per block of a loss table (a block of 1.2 % losses is about
/// 1 KB compressed; `FORMAT.md` section 17 has the measurements).
pub const LOSS_BLOCK: u32 = 1 << 16;
/// Positions per block of a Grundy table (about 6 KB compressed).
pub const GRUNDY_BLOCK: u32 = 1 << 13;
/// The most block entries per index page the writer puts in a page (8 KiB pages).
pub const PAGE_ENTRIES: u32 = 256;
/// The fewest block entries per index page the writer puts in a page (512 B).
pub const MIN_PAGE_ENTRIES: u32 = 16;
/// Bytes of one block entry.
pub const ENTRY_LEN: usize = 32;
/// Bytes of one digest (a truncated SHA-256).
pub const DIGEST_LEN: usize = 16;
/// The largest block size a reader accepts (loss ranks in a block fit 16 bits).
pub const MAX_BLOCK: u32 = 1 << 16;
/// The largest number of entries per index page a reader accepts.
pub const MAX_PAGE_ENTRIES: u32 = 1 << 16;

/// A block or page digest: the first 16 bytes of the SHA-256 of its bytes.
pub type Digest = [u8; DIGEST_LEN];

/// The digest of `bytes`.
pub fn digest(bytes: &[u8]) -> Digest {
    let full = Sha256::digest(bytes);
    full[..DIGEST_LEN].try_into().expect("SHA-256 is 32 bytes")
}

/// Where a block lies in its file, and what it must decode to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Offset of its zstd frame from the start of the file.
    pub offset: u64,
    /// Length of the frame.
    pub len: u32,
    /// Losses among its positions (loss tables: members; Grundy tables: zero values).
    pub count: u32,
    /// Digest of the frame.
    pub digest: Digest,
}

/// The checked head of a format-3 table: its header and the digests of its index pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The header fields; `shard` is always set (a whole level is shard 0 of 1).
    pub header: Header,
    /// Number of blocks.
    pub blocks: u32,
    /// Block entries per index page.
    pub page_entries: u32,
    /// Bytes of the whole file.
    pub file_len: u64,
    /// The digest of every index page.
    pub page_digests: Vec<Digest>,
}

fn corrupt(path: &Path, what: impl Into<String>) -> TableError {
    TableError::Corrupt { path: path.to_path_buf(), what: what.into() }
}

impl Head {
    /// Bytes of the head (fixed part and page digests).
    pub fn len(&self) -> usize {
        FIXED_LEN + DIGEST_LEN * self.page_digests.len()
    }

    /// Whether the table has no index page (never: a table holds a position).
    pub fn is_empty(&self) -> bool {
        self.page_digests.is_empty()
    }

    /// Positions per block.
    pub fn block_size(&self) -> u32 {
        self.header.block_size
    }

    /// Where the table lies in its level.
    pub fn place(&self) -> ShardPlace {
        self.header.shard.expect("a format-3 head always has its place")
    }

    /// Number of index pages.
    pub fn pages(&self) -> u32 {
        self.page_digests.len() as u32
    }

    /// Offset of the first block (after the head and every index page).
    pub fn data_start(&self) -> u64 {
        self.len() as u64 + self.blocks as u64 * ENTRY_LEN as u64
    }

    /// Positions of block `b`.
    pub fn block_positions(&self, b: u32) -> u32 {
        let bs = self.header.block_size as u64;
        (self.header.positions - b as u64 * bs).min(bs) as u32
    }

    /// Block of a rank in the table, and the rank within the block.
    pub fn block_of(&self, rank: u64) -> (u32, u32) {
        let bs = self.header.block_size as u64;
        ((rank / bs) as u32, (rank % bs) as u32)
    }

    /// Page holding block `b`'s entry, and the entry's index in it.
    pub fn page_of(&self, b: u32) -> (u32, usize) {
        (b / self.page_entries, (b % self.page_entries) as usize)
    }

    /// Byte range of index page `p` in the file.
    pub fn page_span(&self, p: u32) -> (u64, usize) {
        let first = p as u64 * self.page_entries as u64;
        let entries = (self.blocks as u64 - first).min(self.page_entries as u64);
        (self.len() as u64 + first * ENTRY_LEN as u64, entries as usize * ENTRY_LEN)
    }

    /// Encodes the head (the writer's side of [`Head::decode`]).
    fn encode(&self) -> Vec<u8> {
        let h = &self.header;
        let place = self.place();
        let mut b = Vec::with_capacity(self.len());
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION_BLOCKED.to_le_bytes());
        b.extend_from_slice(&(h.kind as u16).to_le_bytes());
        for v in [h.tiles, h.max_rows, h.max_cols, h.max_tiles, h.block_size] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in [h.positions, h.losses, place.first] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in [place.index, place.count, self.blocks, self.page_entries] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.file_len.to_le_bytes());
        let digests: Vec<u8> = self.page_digests.concat();
        b.extend_from_slice(&crc32fast::hash(&digests).to_le_bytes());
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(b.len(), FIXED_LEN);
        b.extend_from_slice(&digests);
        b
    }

    /// The length of the head whose fixed part starts `bytes` (at least
    /// [`FIXED_LEN`] bytes), after checking that fixed part: what a reader
    /// reads next when the manifest does not say.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for anything but a format-3 table's header.
    pub fn len_from_fixed(path: &Path, bytes: &[u8]) -> Result<usize, TableError> {
        let (_, blocks, page_entries, _) = Self::decode_fixed(path, bytes)?;
        Ok(FIXED_LEN + DIGEST_LEN * blocks.div_ceil(page_entries) as usize)
    }

    /// Checks the fixed part: returns the header, the block count, the
    /// entries per page and the file length.
    fn decode_fixed(path: &Path, bytes: &[u8]) -> Result<(Header, u32, u32, u64), TableError> {
        if bytes.len() < FIXED_LEN {
            return Err(corrupt(path, format!("truncated: {} bytes, shorter than the {FIXED_LEN}-byte header", bytes.len())));
        }
        if bytes[0..8] != MAGIC {
            return Err(corrupt(path, "not a chomp table (wrong magic bytes)"));
        }
        let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        if u16_at(8) != VERSION_BLOCKED {
            return Err(corrupt(path, format!("table format version {}, expected {VERSION_BLOCKED}", u16_at(8))));
        }
        if crc32fast::hash(&bytes[0..FIXED_LEN - 4]) != u32_at(FIXED_LEN - 4) {
            return Err(corrupt(path, "header checksum mismatch"));
        }
        let kind = match u16_at(10) {
            1 => Kind::Losses,
            2 => Kind::Grundy,
            k => return Err(corrupt(path, format!("unknown table kind {k}"))),
        };
        let place = ShardPlace { index: u32_at(56), count: u32_at(60), first: u64_at(48) };
        let header = Header {
            kind,
            tiles: u32_at(12),
            max_rows: u32_at(16),
            max_cols: u32_at(20),
            max_tiles: u32_at(24),
            block_size: u32_at(28),
            positions: u64_at(32),
            losses: u64_at(40),
            shard: Some(place),
        };
        let (blocks, page_entries, file_len) = (u32_at(64), u32_at(68), u64_at(72));
        let bad = |what: &str| Err(corrupt(path, what));
        if place.index >= place.count {
            return bad("shard index beyond the level's shard count");
        }
        if header.block_size == 0 || header.block_size > MAX_BLOCK {
            return bad("block size not in 1 ..= 65536");
        }
        if header.positions == 0 || header.positions > 1 << 32 {
            return bad("positions not in 1 ..= 2^32");
        }
        if header.losses > header.positions {
            return bad("more losses than positions");
        }
        if blocks as u64 != header.positions.div_ceil(header.block_size as u64) {
            return bad("block count does not match positions and block size");
        }
        if page_entries == 0 || page_entries > MAX_PAGE_ENTRIES {
            return bad("entries per index page not in 1 ..= 65536");
        }
        let pages = blocks.div_ceil(page_entries) as u64;
        let data_start = FIXED_LEN as u64 + DIGEST_LEN as u64 * pages + ENTRY_LEN as u64 * blocks as u64;
        if file_len < data_start {
            return bad("file length shorter than its head and index");
        }
        Ok((header, blocks, page_entries, file_len))
    }

    /// Parses and checks a head: `bytes` holds at least the whole head
    /// ([`Head::len_from_fixed`]); bytes after it are ignored.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for anything but a well-formed format-3 head.
    pub fn decode(path: &Path, bytes: &[u8]) -> Result<Head, TableError> {
        let (header, blocks, page_entries, file_len) = Self::decode_fixed(path, bytes)?;
        let len = FIXED_LEN + DIGEST_LEN * blocks.div_ceil(page_entries) as usize;
        if bytes.len() < len {
            return Err(corrupt(path, format!("truncated: {} bytes, shorter than the {len}-byte head", bytes.len())));
        }
        let digests = &bytes[FIXED_LEN..len];
        if crc32fast::hash(digests) != u32::from_le_bytes(bytes[80..84].try_into().unwrap()) {
            return Err(corrupt(path, "index page digests checksum mismatch"));
        }
        let page_digests = digests.chunks_exact(DIGEST_LEN).map(|d| d.try_into().unwrap()).collect();
        Ok(Head { header, blocks, page_entries, file_len, page_digests })
    }

    /// Checks index page `p` (its bytes, [`Head::page_span`]) and returns its entries.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] when the page does not match its digest or
    /// its entries do not fit the file.
    pub fn decode_page(&self, path: &Path, p: u32, bytes: &[u8]) -> Result<Vec<BlockEntry>, TableError> {
        let (_, len) = self.page_span(p);
        if bytes.len() != len || digest(bytes) != self.page_digests[p as usize] {
            return Err(corrupt(path, format!("index page {p}: digest mismatch")));
        }
        let first_block = p * self.page_entries;
        let mut entries = Vec::with_capacity(len / ENTRY_LEN);
        for (i, e) in bytes.chunks_exact(ENTRY_LEN).enumerate() {
            let entry = BlockEntry {
                offset: u64::from_le_bytes(e[0..8].try_into().unwrap()),
                len: u32::from_le_bytes(e[8..12].try_into().unwrap()),
                count: u32::from_le_bytes(e[12..16].try_into().unwrap()),
                digest: e[16..32].try_into().unwrap(),
            };
            let b = first_block + i as u32;
            let follows = match entries.last() {
                Some(prev @ BlockEntry { .. }) => entry.offset == prev.offset + prev.len as u64,
                None => b > 0 || entry.offset == self.data_start(),
            };
            let last = b + 1 == self.blocks;
            if !follows
                || entry.offset < self.data_start()
                || entry.offset + entry.len as u64 > self.file_len
                || (last && entry.offset + entry.len as u64 != self.file_len)
                || entry.count > self.block_positions(b)
            {
                return Err(corrupt(path, format!("index page {p}: entry of block {b} does not fit the file")));
            }
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// Decompresses one frame into at most `capacity` bytes with this thread's
/// decompression context (made once: a fresh context per block costs more
/// than decoding a small block).
fn decompress(bytes: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    DCTX.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        d.as_mut().expect("made above").decompress(bytes, capacity)
    })
}

/// Checks a block's frame against its entry: length, digest, one zstd frame.
fn check_frame(path: &Path, b: u32, entry: &BlockEntry, bytes: &[u8]) -> Result<(), TableError> {
    if bytes.len() != entry.len as usize || digest(bytes) != entry.digest {
        return Err(corrupt(path, format!("block {b}: digest mismatch")));
    }
    // A zstd data frame, not a skippable one (which would decode to nothing).
    if !bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        return Err(corrupt(path, format!("block {b}: not a zstd frame")));
    }
    match zstd::zstd_safe::find_frame_compressed_size(bytes) {
        Ok(len) if len == bytes.len() => Ok(()),
        _ => Err(corrupt(path, format!("block {b}: not exactly one zstd frame"))),
    }
}

/// Decodes loss block `b` (its frame `bytes`, checked against `entry`):
/// the ranks of its losses, relative to the block's first rank, increasing.
///
/// # Errors
/// [`TableError::Corrupt`] for a block that does not match its entry or
/// does not decode to `count` increasing ranks inside the block.
pub fn decode_loss_block(path: &Path, head: &Head, b: u32, entry: &BlockEntry, bytes: &[u8]) -> Result<Vec<u16>, TableError> {
    check_frame(path, b, entry, bytes)?;
    let positions = head.block_positions(b);
    // A gap below 2^16 takes at most 3 bytes.
    let raw = decompress(bytes, 3 * entry.count as usize).map_err(|e| corrupt(path, format!("block {b}: bad zstd frame: {e}")))?;
    let mut out = Vec::with_capacity(entry.count as usize);
    let (mut next, mut i) = (0u64, 0usize);
    while i < raw.len() {
        let mut gap = 0u64;
        let mut shift = 0;
        loop {
            let Some(&byte) = raw.get(i) else { return Err(corrupt(path, format!("block {b}: truncated gap"))) };
            i += 1;
            if shift > 14 {
                return Err(corrupt(path, format!("block {b}: gap longer than 3 bytes")));
            }
            gap |= ((byte & 0x7f) as u64) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        let rank = next + gap;
        if rank >= positions as u64 {
            return Err(corrupt(path, format!("block {b}: a loss rank lies beyond the block")));
        }
        out.push(rank as u16);
        next = rank + 1;
    }
    if out.len() != entry.count as usize {
        return Err(corrupt(path, format!("block {b}: holds {} losses, its entry says {}", out.len(), entry.count)));
    }
    Ok(out)
}

/// Decodes Grundy block `b`: one value per position of the block.
///
/// # Errors
/// [`TableError::Corrupt`] for a block that does not match its entry or
/// does not decode to its positions' values with `count` zeros.
pub fn decode_grundy_block(path: &Path, head: &Head, b: u32, entry: &BlockEntry, bytes: &[u8]) -> Result<Vec<u8>, TableError> {
    check_frame(path, b, entry, bytes)?;
    let want = head.block_positions(b) as usize;
    let raw = decompress(bytes, want).map_err(|e| corrupt(path, format!("block {b}: bad zstd frame: {e}")))?;
    if raw.len() != want {
        return Err(corrupt(path, format!("block {b}: decodes to {} values, expected {want}", raw.len())));
    }
    // Counted in runs of 255 with byte-wide sums, which vectorise 16 or 32
    // lanes wide (a plain count widens every byte to 64 bits, two a step).
    let zeros: usize = raw.chunks(255).map(|c| c.iter().map(|&g| u8::from(g == 0)).sum::<u8>() as usize).sum();
    if zeros != entry.count as usize {
        return Err(corrupt(path, format!("block {b}: holds {zeros} zero values, its entry says {}", entry.count)));
    }
    Ok(raw)
}

/// The gap encoding of a block's loss ranks (relative to the block, increasing).
fn encode_gaps(ranks: impl Iterator<Item = u32>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for r in ranks {
        let mut gap = r - next;
        next = r + 1;
        while gap >= 0x80 {
            out.push((gap as u8 & 0x7f) | 0x80);
            gap >>= 7;
        }
        out.push(gap as u8);
    }
    out
}

use super::format::compress;

/// Maps `f` over `items`, in parallel in the full tool (the order of the
/// results, and so the bytes, do not depend on it).
fn map_blocks<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "tool")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "tool"))]
    {
        items.iter().map(f).collect()
    }
}

/// Block entries per index page of a table of `blocks` blocks, as the writer
/// chooses them: the power of two within 16 … 256 nearest above √(blocks / 2).
///
/// A cold look-up reads the table's head (16 bytes per page) and one page
/// (32 bytes per entry): `16 · blocks / e + 32 · e` bytes, least at
/// `e = √(blocks / 2)`. Losses to 110 tiles (`FORMAT.md` section 17):
/// level 109 (8,270 blocks) gets pages of 128 entries, level 80 (241
/// blocks) of 16, and a 110-tile question reads 183 KiB instead of 407 KiB
/// with 256 everywhere; tables of 2^17 blocks and more keep 256.
pub fn page_entries(blocks: u32) -> u32 {
    let mut e = MIN_PAGE_ENTRIES;
    while e < PAGE_ENTRIES && 2 * u64::from(e) * u64::from(e) < u64::from(blocks) {
        e *= 2;
    }
    e
}

/// Assembles a table from its header (with `block_size` set) and its
/// compressed blocks with their loss counts. Returns the file and the
/// length of its head.
fn assemble(header: &Header, blocks: Vec<(Vec<u8>, u32)>) -> (Vec<u8>, usize) {
    let mut head = Head {
        header: Header { shard: Some(header.shard.unwrap_or(ShardPlace { index: 0, count: 1, first: 0 })), ..*header },
        blocks: blocks.len() as u32,
        page_entries: page_entries(blocks.len() as u32),
        file_len: 0,
        page_digests: vec![[0; DIGEST_LEN]; blocks.len().div_ceil(page_entries(blocks.len() as u32) as usize)],
    };
    debug_assert_eq!(head.blocks as u64, header.positions.div_ceil(header.block_size as u64));
    let data_start = head.data_start();
    head.file_len = data_start + blocks.iter().map(|(b, _)| b.len() as u64).sum::<u64>();
    let mut index = Vec::with_capacity(blocks.len() * ENTRY_LEN);
    let mut offset = data_start;
    for (frame, count) in &blocks {
        index.extend_from_slice(&offset.to_le_bytes());
        index.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        index.extend_from_slice(&count.to_le_bytes());
        index.extend_from_slice(&digest(frame));
        offset += frame.len() as u64;
    }
    for (p, page) in index.chunks(head.page_entries as usize * ENTRY_LEN).enumerate() {
        head.page_digests[p] = digest(page);
    }
    let mut out = head.encode();
    let head_len = out.len();
    out.reserve_exact(head.file_len as usize - head_len);
    out.extend_from_slice(&index);
    drop(index);
    for (frame, _) in blocks {
        out.extend_from_slice(&frame);
    }
    debug_assert_eq!(out.len() as u64, head.file_len);
    (out, head_len)
}

/// Encodes a format-3 loss table: `ranks` are ranks in the level,
/// increasing, inside the table (`first .. first + positions`). Returns the
/// file and the length of its head.
pub fn encode_losses(header: &Header, ranks: &(impl SortedRanks + ?Sized)) -> (Vec<u8>, usize) {
    let header = Header { block_size: LOSS_BLOCK, ..*header };
    let first = header.shard.map_or(0, |p| p.first);
    let bs = LOSS_BLOCK as u64;
    let starts: Vec<u64> = (0..header.positions.div_ceil(bs)).map(|b| b * bs).collect();
    let frames = map_blocks(&starts, |&start| {
        let end = (start + bs).min(header.positions);
        let mut count = 0u32;
        let raw = encode_gaps(ranks.ranks_in(first + start..first + end).map(|r| {
            count += 1;
            (r - first - start) as u32
        }));
        (compress(&raw), count)
    });
    let losses: u64 = frames.iter().map(|&(_, count)| u64::from(count)).sum();
    assert_eq!(losses, header.losses, "the losses in the table's ranks and its header disagree");
    assemble(&header, frames)
}

/// Encodes a format-3 Grundy table from one value per position of the table.
/// Returns the file and the length of its head.
pub fn encode_grundy(header: &Header, values: &[u8]) -> (Vec<u8>, usize) {
    assert_eq!(values.len() as u64, header.positions);
    let header = Header { block_size: GRUNDY_BLOCK, ..*header };
    let chunks: Vec<&[u8]> = values.chunks(GRUNDY_BLOCK as usize).collect();
    let frames = map_blocks(&chunks, |c| (compress(c), c.iter().filter(|&&g| g == 0).count() as u32));
    assemble(&header, frames)
}

/// A whole format-3 table in memory, checked: head, every page and every block.
pub struct TableImage<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    /// The table's head.
    pub head: Head,
    entries: Vec<BlockEntry>,
}

impl<'a> TableImage<'a> {
    /// Checks the head and index of a whole table image; `want` is the
    /// header expected at this place of a run (block size aside).
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for a damaged or foreign table.
    pub fn new(path: &'a Path, bytes: &'a [u8], want: Option<&Header>) -> Result<Self, TableError> {
        let head = Head::decode(path, bytes)?;
        if let Some(want) = want {
            expect(path, &head, want)?;
        }
        if head.file_len != bytes.len() as u64 {
            return Err(corrupt(path, format!("truncated or padded: header announces {} bytes, file has {}", head.file_len, bytes.len())));
        }
        let mut entries = Vec::with_capacity(head.blocks as usize);
        for p in 0..head.pages() {
            let (off, len) = head.page_span(p);
            entries.extend(head.decode_page(path, p, &bytes[off as usize..off as usize + len])?);
        }
        // Pages are checked one by one; a whole image is also contiguous across them.
        if entries.windows(2).any(|w| w[1].offset != w[0].offset + w[0].len as u64) {
            return Err(corrupt(path, "blocks are not contiguous across index pages"));
        }
        let total: u64 = entries.iter().map(|e| e.count as u64).sum();
        if total != head.header.losses {
            return Err(corrupt(path, format!("blocks hold {total} losses, header says {}", head.header.losses)));
        }
        Ok(TableImage { path, bytes, head, entries })
    }

    fn frame(&self, b: u32) -> &[u8] {
        let e = &self.entries[b as usize];
        &self.bytes[e.offset as usize..e.offset as usize + e.len as usize]
    }

    /// Every loss rank of the table, relative to its first position.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for a damaged block or a Grundy table.
    pub fn losses(&self) -> Result<Vec<u32>, TableError> {
        if self.head.header.kind != Kind::Losses {
            return Err(corrupt(self.path, "expected a loss table"));
        }
        let mut out = Vec::with_capacity(self.head.header.losses as usize);
        for b in 0..self.head.blocks {
            let start = b as u64 * self.head.block_size() as u64;
            let block = decode_loss_block(self.path, &self.head, b, &self.entries[b as usize], self.frame(b))?;
            out.extend(block.into_iter().map(|r| (start + r as u64) as u32));
        }
        Ok(out)
    }

    /// Every value of the table, in rank order.
    ///
    /// # Errors
    /// [`TableError::Corrupt`] for a damaged block or a loss table.
    pub fn grundy_values(&self) -> Result<Vec<u8>, TableError> {
        if self.head.header.kind != Kind::Grundy {
            return Err(corrupt(self.path, "expected a Grundy table"));
        }
        let mut out = Vec::with_capacity(self.head.header.positions as usize);
        for b in 0..self.head.blocks {
            out.extend(decode_grundy_block(self.path, &self.head, b, &self.entries[b as usize], self.frame(b))?);
        }
        Ok(out)
    }
}

/// Checks that a head is the table expected at this place of a run (the
/// block size is the table's own choice).
pub fn expect(path: &Path, head: &Head, want: &Header) -> Result<(), TableError> {
    let want_place = want.shard.unwrap_or(ShardPlace { index: 0, count: 1, first: 0 });
    let have = Header { block_size: want.block_size, shard: Some(want_place), ..head.header };
    if have != (Header { shard: Some(want_place), ..*want }) {
        return Err(corrupt(path, format!("header {:?} does not match the run's {want:?}", head.header)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Universe;

    fn place(index: u32, count: u32, first: u64) -> ShardPlace {
        ShardPlace { index, count, first }
    }

    #[test]
    fn loss_table_roundtrip_every_byte_checked() {
        let u = Universe::tiles(40);
        let positions = 3 * LOSS_BLOCK as u64 + 17;
        let ranks: Vec<u64> = (0..positions).filter(|r| r % 97 == 3 || *r == positions - 1).map(|r| r + 1000).collect();
        let h = Header::shard(Kind::Losses, &u, 40, place(1, 3, 1000), positions, ranks.len() as u64);
        let (bytes, head_len) = encode_losses(&h, &ranks);
        let p = Path::new("t.cht");
        let img = TableImage::new(p, &bytes, Some(&h)).unwrap();
        assert_eq!(img.head.len(), head_len);
        assert_eq!(img.losses().unwrap(), ranks.iter().map(|&r| (r - 1000) as u32).collect::<Vec<_>>());
        // Every flipped byte is refused by whole-image decoding.
        for i in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[i] ^= 0x04;
            let ok = TableImage::new(p, &bad, Some(&h)).and_then(|t| t.losses());
            assert!(ok.is_err(), "flip at {i} undetected");
        }
    }

    #[test]
    fn grundy_table_roundtrip() {
        let u = Universe::tiles(30);
        let values: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 13) as u8).collect();
        let zeros = values.iter().filter(|&&g| g == 0).count() as u64;
        let h = Header::new(Kind::Grundy, &u, 30, values.len() as u64, zeros);
        let (bytes, _) = encode_grundy(&h, &values);
        let img = TableImage::new(Path::new("g"), &bytes, Some(&h)).unwrap();
        assert_eq!(img.grundy_values().unwrap(), values);
        assert_eq!(img.head.place(), place(0, 1, 0));
    }

    #[test]
    fn pages_grow_with_the_table() {
        assert_eq!(page_entries(1), 16);
        assert_eq!(page_entries(512), 16);
        assert_eq!(page_entries(513), 32);
        assert_eq!(page_entries(8_270), 128);
        assert_eq!(page_entries(65_536), 256);
        assert_eq!(page_entries(1 << 19), 256);
        for b in 1..20_000 {
            let e = page_entries(b);
            assert!((MIN_PAGE_ENTRIES..=PAGE_ENTRIES).contains(&e) && e.is_power_of_two());
            assert!(e == PAGE_ENTRIES || 2 * e * e >= b, "{b} blocks: {e}");
        }
    }

    #[test]
    fn gaps_cover_the_whole_block() {
        let raw = encode_gaps([0u32, 1, 127, 128, 65535].into_iter());
        // The example of FORMAT.md section 17.
        assert_eq!(raw, [0x00, 0x00, 0x7d, 0x00, 0xfe, 0xfe, 0x03]);
        let frame = compress(&raw);
        let head = Head {
            header: Header {
                block_size: LOSS_BLOCK,
                shard: Some(place(0, 1, 0)),
                ..Header::new(Kind::Losses, &Universe::tiles(99), 99, 65536, 5)
            },
            blocks: 1,
            page_entries: PAGE_ENTRIES,
            file_len: 1 << 20,
            page_digests: vec![[0; 16]],
        };
        let e = BlockEntry { offset: 0, len: frame.len() as u32, count: 5, digest: digest(&frame) };
        assert_eq!(decode_loss_block(Path::new("x"), &head, 0, &e, &frame).unwrap(), vec![0, 1, 127, 128, 65535]);
    }
}
