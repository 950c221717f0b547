//! Reading format-3 tables a block at a time: positioned reads of the head,
//! one index page and one block, each checked along the chain manifest →
//! head → page → block (`FORMAT.md` section 10), and a cache of decoded
//! pages and blocks bounded in bytes.

use crate::store::blocked::{self, BlockEntry, Head};
use crate::store::{sha256_hex, Header, Kind, Manifest, TableDir, TableError};
use lru::LruCache;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// The default bound of a reader's cache of decoded pages and blocks.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// An open format-3 table whose head has been checked against the manifest.
pub(crate) struct BlockFile {
    path: PathBuf,
    file: File,
    head: Head,
}

impl BlockFile {
    /// Opens listed table `rel` and checks its head: size and head digest
    /// from the manifest, then the head's own structure and the header the
    /// run expects at this place.
    fn open(root: &Path, m: &Manifest, rel: &str, want: &Header) -> Result<Self, TableError> {
        let path = root.join(rel);
        let corrupt = |what: String| TableError::Corrupt { path: path.clone(), what };
        let entry = m.files.get(rel).ok_or_else(|| corrupt("not listed in manifest.json".into()))?;
        let (Some(head_len), Some(head_sha)) = (entry.head_bytes, &entry.head_sha256) else {
            return Err(corrupt("manifest.json lists no head for this table".into()));
        };
        let file = File::open(&path).map_err(|e| TableError::io(&path, e))?;
        let len = file.metadata().map_err(|e| TableError::io(&path, e))?.len();
        if len != entry.bytes {
            return Err(corrupt(format!("truncated or padded: {len} bytes, manifest.json says {}", entry.bytes)));
        }
        let bytes = read_at(&file, &path, 0, head_len as usize)?;
        if &sha256_hex(&bytes) != head_sha {
            return Err(corrupt("head SHA-256 differs from manifest.json".into()));
        }
        let head = Head::decode(&path, &bytes)?;
        if head.len() as u64 != head_len || head.file_len != entry.bytes {
            return Err(corrupt("head length or file length differs from manifest.json".into()));
        }
        blocked::expect(&path, &head, want)?;
        Ok(BlockFile { path, file, head })
    }
}

/// Whether the increasing offsets `l` (of a block of 2^16 ranks) hold `x`.
/// Losses spread fairly evenly over a block: the search starts where `x`
/// would be if they were even and widens from there, touching a cache line
/// or two where a binary search over a block's ~900 offsets touches five.
fn contains(l: &[u16], x: u16) -> bool {
    let n = l.len();
    if n == 0 {
        return false;
    }
    let guess = ((x as usize * n) >> 16).min(n - 1);
    // Bracket x in l[lo..hi] by steps doubling away from the guess.
    let (lo, hi) = if l[guess] <= x {
        let mut step = 1;
        let mut lo = guess;
        while lo + step < n && l[lo + step] <= x {
            lo += step;
            step *= 2;
        }
        (lo, (lo + step + 1).min(n))
    } else {
        let mut step = 1;
        let mut hi = guess;
        while hi >= step && l[hi - step] > x {
            hi -= step;
            step *= 2;
        }
        (hi.saturating_sub(step), hi)
    };
    l[lo..hi].binary_search(&x).is_ok()
}

fn read_at(file: &File, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>, TableError> {
    let mut buf = vec![0u8; len];
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut buf, offset).map_err(|e| TableError::io(path, e))?;
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file.try_clone().map_err(|e| TableError::io(path, e))?;
        f.seek(SeekFrom::Start(offset)).and_then(|_| f.read_exact(&mut buf)).map_err(|e| TableError::io(path, e))?;
    }
    Ok(buf)
}

/// What a cache entry holds.
#[derive(Clone)]
enum Unit {
    Page(Arc<Vec<BlockEntry>>),
    Losses(Arc<Vec<u16>>),
    Values(Arc<Vec<u8>>),
}

impl Unit {
    fn bytes(&self) -> usize {
        // The decoded data and a fixed allowance for the entry itself.
        64 + match self {
            Unit::Page(p) => p.len() * std::mem::size_of::<BlockEntry>(),
            Unit::Losses(l) => l.len() * 2,
            Unit::Values(v) => v.len(),
        }
    }
}

/// (kind, level, shard, [`PAGE`] or [`BLOCK`], its index).
type Key = (u8, u32, u32, u8, u32);
/// Key of an index page.
const PAGE: u8 = 0;
/// Key of a block.
const BLOCK: u8 = 1;

/// A least-recently-used cache bounded by the bytes of what it holds.
struct ByteLru {
    map: LruCache<Key, Unit>,
    bytes: usize,
    limit: usize,
}

impl ByteLru {
    fn get(&mut self, k: &Key) -> Option<Unit> {
        self.map.get(k).cloned()
    }

    fn put(&mut self, k: Key, u: Unit) {
        let size = u.bytes();
        if size > self.limit {
            return;
        }
        if let Some(old) = self.map.put(k, u) {
            self.bytes -= old.bytes();
        }
        self.bytes += size;
        self.evict();
    }

    /// Drops the least recently used entries until the cache fits its bound.
    fn evict(&mut self) {
        while self.bytes > self.limit {
            match self.map.pop_lru() {
                Some((_, old)) => self.bytes -= old.bytes(),
                None => break,
            }
        }
    }
}

/// The cache is split in shards, each with its share of the bound, so that
/// threads answering different questions rarely wait for one lock.
const SHARDS: usize = 8;

/// The block reader of one format-3 table directory.
pub(crate) struct BlockReader {
    root: PathBuf,
    /// Open tables; read-mostly (a table is opened once, then only looked up).
    files: RwLock<HashMap<(u8, u32, u32), Arc<BlockFile>>>,
    /// [`SHARDS`] caches; a key's shard is [`BlockReader::cache`]'s.
    cache: Vec<Mutex<ByteLru>>,
}

/// Shard `i`'s share of a bound of `limit` bytes (the shares add up to it).
fn share(limit: usize, i: usize) -> usize {
    limit / SHARDS + usize::from(i < limit % SHARDS)
}

/// A lock, used as is after a panic elsewhere (entries are inserted whole).
fn held<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl BlockReader {
    pub(crate) fn new(root: &Path, cache_bytes: usize) -> Self {
        let shard = |i| Mutex::new(ByteLru { map: LruCache::unbounded(), bytes: 0, limit: share(cache_bytes, i) });
        BlockReader { root: root.to_path_buf(), files: RwLock::default(), cache: (0..SHARDS).map(shard).collect() }
    }

    /// The cache shard of key `k`: neighbouring blocks of one table fall in different shards.
    fn cache(&self, k: &Key) -> std::sync::MutexGuard<'_, ByteLru> {
        let spread = (k.1 as usize).wrapping_mul(31) ^ (k.2 as usize).wrapping_mul(7) ^ k.4 as usize;
        held(&self.cache[spread % SHARDS])
    }

    /// Bytes held by the cache, and its bound.
    pub(crate) fn cache_usage(&self) -> (usize, usize) {
        self.cache
            .iter()
            .map(|c| {
                let c = held(c);
                (c.bytes, c.limit)
            })
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    }

    /// Changes the cache's bound (dropping what no longer fits).
    pub(crate) fn set_cache_limit(&self, limit: usize) {
        for (i, c) in self.cache.iter().enumerate() {
            let mut c = held(c);
            c.limit = share(limit, i);
            c.evict();
        }
    }

    fn file(&self, m: &Manifest, kind: Kind, tiles: u32, shard: usize) -> Result<Arc<BlockFile>, TableError> {
        let key = (kind as u8, tiles, shard as u32);
        if let Some(f) = self.files.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
            return Ok(f.clone());
        }
        let rel = &TableDir::table_names(m, kind, tiles)[shard];
        let want = TableDir::expected_header(m, kind, tiles, shard);
        let f = Arc::new(BlockFile::open(&self.root, m, rel, &want)?);
        self.files.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, f.clone());
        Ok(f)
    }

    /// The entry of block `b` of table `f`, read through its index page.
    fn entry(&self, f: &BlockFile, kind: Kind, tiles: u32, shard: usize, b: u32) -> Result<BlockEntry, TableError> {
        let (p, i) = f.head.page_of(b);
        let key = (kind as u8, tiles, shard as u32, PAGE, p);
        let cached = self.cache(&key).get(&key);
        let page = match cached {
            Some(Unit::Page(page)) => page,
            Some(_) => unreachable!("a page key holds a page"),
            None => {
                let (off, len) = f.head.page_span(p);
                let bytes = read_at(&f.file, &f.path, off, len)?;
                let page = Arc::new(f.head.decode_page(&f.path, p, &bytes)?);
                self.cache(&key).put(key, Unit::Page(page.clone()));
                page
            }
        };
        Ok(page[i])
    }

    /// The decoded block holding `rank` of a table of `kind` (cached, or read
    /// through its index page and checked by `decode`), and the rank within it.
    /// A cached block is found without its page: one look-up per answer.
    fn block(
        &self,
        m: &Manifest,
        kind: Kind,
        tiles: u32,
        shard: usize,
        rank: u64,
        decode: impl FnOnce(&BlockFile, u32, &BlockEntry, &[u8]) -> Result<Unit, TableError>,
    ) -> Result<(Unit, u32), TableError> {
        let f = self.file(m, kind, tiles, shard)?;
        if rank >= f.head.header.positions {
            return Err(TableError::Corrupt {
                path: f.path.clone(),
                what: format!("rank {rank} beyond the table's {} positions", f.head.header.positions),
            });
        }
        let (b, within) = f.head.block_of(rank);
        let key = (kind as u8, tiles, shard as u32, BLOCK, b);
        let cached = self.cache(&key).get(&key);
        let unit = match cached {
            Some(unit) => unit,
            None => {
                let entry = self.entry(&f, kind, tiles, shard, b)?;
                let bytes = read_at(&f.file, &f.path, entry.offset, entry.len as usize)?;
                let unit = decode(&f, b, &entry, &bytes)?;
                self.cache(&key).put(key, unit.clone());
                unit
            }
        };
        Ok((unit, within))
    }

    /// Whether rank `rank` of shard `shard` of level `tiles` is a loss.
    pub(crate) fn is_loss(&self, m: &Manifest, tiles: u32, shard: usize, rank: u64) -> Result<bool, TableError> {
        let decode = |f: &BlockFile, b, e: &BlockEntry, bytes: &[u8]| {
            Ok(Unit::Losses(Arc::new(blocked::decode_loss_block(&f.path, &f.head, b, e, bytes)?)))
        };
        match self.block(m, Kind::Losses, tiles, shard, rank, decode)? {
            (Unit::Losses(l), within) => Ok(contains(&l, within as u16)),
            _ => unreachable!("loss blocks are cached under the loss kind"),
        }
    }

    /// The Grundy value of rank `rank` of shard `shard` of level `tiles`.
    pub(crate) fn grundy(&self, m: &Manifest, tiles: u32, shard: usize, rank: u64) -> Result<u8, TableError> {
        let decode = |f: &BlockFile, b, e: &BlockEntry, bytes: &[u8]| {
            Ok(Unit::Values(Arc::new(blocked::decode_grundy_block(&f.path, &f.head, b, e, bytes)?)))
        };
        match self.block(m, Kind::Grundy, tiles, shard, rank, decode)? {
            (Unit::Values(v), within) => Ok(v[within as usize]),
            _ => unreachable!("Grundy blocks are cached under the Grundy kind"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::contains;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn contains_agrees_with_a_binary_search(mut l in proptest::collection::vec(any::<u16>(), 0..2000), x in any::<u16>()) {
            l.sort_unstable();
            l.dedup();
            prop_assert_eq!(contains(&l, x), l.binary_search(&x).is_ok());
            for &y in l.iter().step_by(7) {
                prop_assert!(contains(&l, y));
            }
        }
    }
}
