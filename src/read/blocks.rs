//! Reading format-3 tables a block at a time: positioned reads of the head,
//! one index page and one block, each checked along the chain manifest →
//! head → page → block (`FORMAT.md` section 10), and a cache of decoded
//! pages and blocks bounded in bytes.

use crate::store::blocked::{self, BlockEntry, Head};
use crate::store::{sha256_hex, Header, Kind, Manifest, TableDir, TableError};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// The default bound of a reader's cache of decoded pages and blocks.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// Most table files of one directory held open at once ([`BlockReader`]'s
/// pool of descriptors): a server answering over the frontier tables would
/// otherwise hold one descriptor per table file (340 of them), leaving too
/// few for its connections under a low `ulimit -n`.
pub const OPEN_FILES: usize = 64;

/// A format-3 table whose head has been checked against the manifest. Its
/// descriptor is lent by the reader's pool ([`BlockReader::descriptor`]):
/// closed when the pool needs room, opened again (and its length checked
/// again) on the next read; every page and block read through it is checked
/// against the head, so a file replaced in between is refused.
pub(crate) struct BlockFile {
    path: PathBuf,
    /// The length the manifest gives (checked at every open).
    bytes: u64,
    /// The open descriptor, if the pool holds one for this file.
    file: RwLock<Option<Arc<File>>>,
    /// Used since the pool's hand last passed (a second chance before closing).
    used: AtomicBool,
    head: Head,
}

/// Opens `path` and checks its length against the manifest's.
fn open_checked(path: &Path, bytes: u64) -> Result<File, TableError> {
    let file = File::open(path).map_err(|e| TableError::io(path, e))?;
    let len = file.metadata().map_err(|e| TableError::io(path, e))?.len();
    if len != bytes {
        return Err(TableError::Corrupt {
            path: path.to_path_buf(),
            what: format!("truncated or padded: {len} bytes, manifest.json says {bytes}"),
        });
    }
    Ok(file)
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
        let file = open_checked(&path, entry.bytes)?;
        let bytes = read_at(&file, &path, 0, head_len as usize)?;
        if &sha256_hex(&bytes) != head_sha {
            return Err(corrupt("head SHA-256 differs from manifest.json".into()));
        }
        let head = Head::decode(&path, &bytes)?;
        if head.len() as u64 != head_len || head.file_len != entry.bytes {
            return Err(corrupt("head length or file length differs from manifest.json".into()));
        }
        blocked::expect(&path, &head, want)?;
        Ok(BlockFile { path, bytes: entry.bytes, file: RwLock::new(Some(Arc::new(file))), used: AtomicBool::new(true), head })
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
enum Unit {
    Page(Vec<BlockEntry>),
    Losses(Vec<u16>),
    Values(Vec<u8>),
}

impl Unit {
    /// What the unit costs the process: its data as allocated, and
    /// [`ENTRY_BYTES`] for its place in the cache.
    fn bytes(&self) -> usize {
        ENTRY_BYTES
            + match self {
                Unit::Page(p) => p.capacity() * std::mem::size_of::<BlockEntry>(),
                Unit::Losses(l) => l.capacity() * 2,
                Unit::Values(v) => v.capacity(),
            }
    }
}

/// A cache entry's own cost: its slot and its map entry, each counted twice
/// (vectors and maps grow by doubling), and the allocator's header of its
/// data. Counted at 64 bytes, caches holding 3.5 GB by that count over the
/// frontier tables left the process 123 MB over it.
const ENTRY_BYTES: usize = 2 * (std::mem::size_of::<Option<Slot>>() + std::mem::size_of::<(Key, u32)>() + 1) + 16;

/// (kind, level, shard, [`PAGE`] or [`BLOCK`], its index).
type Key = (u8, u32, u32, u8, u32);
/// Key of an index page.
const PAGE: u8 = 0;
/// Key of a block.
const BLOCK: u8 = 1;

/// One cached unit, and whether it was used since the clock hand last passed.
struct Slot {
    key: Key,
    unit: Unit,
    used: AtomicBool,
}

/// A cache bounded by the bytes of what it holds, evicting by the clock
/// (second chance) algorithm: a hit only sets its slot's `used` flag, under
/// a shared lock, where a least-recently-used list relinks entries under an
/// exclusive one (the list's `get` was 11 % of the server's CPU).
///
/// Invariants: `map` and the occupied `slots` hold the same keys, each
/// key's index is its slot's; `bytes` is the sum of the occupied slots'
/// [`Unit::bytes`] and at most `limit` after every `put`.
struct ByteClock {
    map: HashMap<Key, u32>,
    slots: Vec<Option<Slot>>,
    /// Indices of empty slots.
    free: Vec<u32>,
    /// The clock hand: the next slot eviction looks at.
    hand: usize,
    bytes: usize,
    limit: usize,
}

impl ByteClock {
    fn new(limit: usize) -> Self {
        ByteClock { map: HashMap::new(), slots: Vec::new(), free: Vec::new(), hand: 0, bytes: 0, limit }
    }

    /// `f` of the unit under `k`, marking it used; `None` when absent.
    fn with<R>(&self, k: &Key, f: impl FnOnce(&Unit) -> R) -> Option<R> {
        let slot = self.slots[*self.map.get(k)? as usize].as_ref().expect("a mapped slot is occupied");
        // A relaxed flag: a hit that races the hand only changes which entry goes first.
        if !slot.used.load(Ordering::Relaxed) {
            slot.used.store(true, Ordering::Relaxed);
        }
        Some(f(&slot.unit))
    }

    /// Inserts `u` under `k` (unless there: another thread read it too),
    /// evicting until the bound holds.
    fn put(&mut self, k: Key, u: Unit) {
        let size = u.bytes();
        if size > self.limit || self.map.contains_key(&k) {
            return;
        }
        self.bytes += size;
        self.evict();
        let slot = Some(Slot { key: k, unit: u, used: AtomicBool::new(false) });
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.map.insert(k, i);
    }

    /// Drops entries not used since the hand last passed them until the
    /// cache fits its bound. Each step clears a flag or empties a slot, so
    /// two turns of the hand empty every slot if need be.
    fn evict(&mut self) {
        let mut steps = 2 * self.slots.len();
        while self.bytes > self.limit && steps > 0 {
            steps -= 1;
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let i = self.hand;
            self.hand += 1;
            let Some(slot) = &mut self.slots[i] else { continue };
            if std::mem::replace(slot.used.get_mut(), false) {
                continue;
            }
            let old = self.slots[i].take().expect("occupied");
            self.map.remove(&old.key);
            self.bytes -= old.unit.bytes();
            self.free.push(i as u32);
        }
        debug_assert!(self.bytes <= self.limit || self.map.is_empty());
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
    /// [`SHARDS`] caches; a key's shard is [`BlockReader::shard`]'s.
    cache: Vec<RwLock<ByteClock>>,
    /// The files holding a descriptor, in the order they got it (at most [`OPEN_FILES`]).
    open: std::sync::Mutex<std::collections::VecDeque<Arc<BlockFile>>>,
}

/// Shard `i`'s share of a bound of `limit` bytes (the shares add up to it).
fn share(limit: usize, i: usize) -> usize {
    limit / SHARDS + usize::from(i < limit % SHARDS)
}

/// A lock, used as is after a panic elsewhere: entries are inserted whole,
/// and one failed request must not fail every later one.
fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// See [`read`].
fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl BlockReader {
    pub(crate) fn new(root: &Path, cache_bytes: usize) -> Self {
        let shard = |i| RwLock::new(ByteClock::new(share(cache_bytes, i)));
        BlockReader {
            root: root.to_path_buf(),
            files: RwLock::default(),
            cache: (0..SHARDS).map(shard).collect(),
            open: Default::default(),
        }
    }

    /// The descriptor of `f`, opened again if the pool closed it. At most
    /// [`OPEN_FILES`] files hold one; to make room the pool closes the one
    /// that got its descriptor first among those not used since the hand
    /// last passed (a clock). A descriptor lent to a read in progress stays
    /// open until that read ends, so the bound is exceeded by at most the
    /// reads in progress.
    fn descriptor(&self, f: &Arc<BlockFile>) -> Result<Arc<File>, TableError> {
        if let Some(file) = read(&f.file).as_ref() {
            f.used.store(true, Ordering::Relaxed);
            return Ok(file.clone());
        }
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(file) = read(&f.file).as_ref() {
            return Ok(file.clone());
        }
        let file = Arc::new(open_checked(&f.path, f.bytes)?);
        *write(&f.file) = Some(file.clone());
        f.used.store(true, Ordering::Relaxed);
        open.push_back(f.clone());
        self.close_extra(&mut open);
        Ok(file)
    }

    /// Closes descriptors until at most [`OPEN_FILES`] are held.
    fn close_extra(&self, open: &mut std::collections::VecDeque<Arc<BlockFile>>) {
        while open.len() > OPEN_FILES {
            let Some(old) = open.pop_front() else { break };
            if old.used.swap(false, Ordering::Relaxed) {
                open.push_back(old);
            } else {
                *write(&old.file) = None;
            }
        }
    }

    /// Descriptors held by the pool (for tests and `GET /health`).
    pub(crate) fn open_files(&self) -> usize {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// The cache shard of key `k`: neighbouring blocks of one table fall in different shards.
    fn shard(&self, k: &Key) -> &RwLock<ByteClock> {
        let spread = (k.1 as usize).wrapping_mul(31) ^ (k.2 as usize).wrapping_mul(7) ^ k.4 as usize;
        &self.cache[spread % SHARDS]
    }

    /// Bytes held by the cache, and its bound.
    pub(crate) fn cache_usage(&self) -> (usize, usize) {
        self.cache
            .iter()
            .map(|c| {
                let c = read(c);
                (c.bytes, c.limit)
            })
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    }

    /// Changes the cache's bound (dropping what no longer fits).
    pub(crate) fn set_cache_limit(&self, limit: usize) {
        for (i, c) in self.cache.iter().enumerate() {
            let mut c = write(c);
            c.limit = share(limit, i);
            c.evict();
        }
    }

    fn file(&self, m: &Manifest, kind: Kind, tiles: u32, shard: usize) -> Result<Arc<BlockFile>, TableError> {
        let key = (kind as u8, tiles, shard as u32);
        if let Some(f) = read(&self.files).get(&key) {
            return Ok(f.clone());
        }
        let rel = &TableDir::table_names(m, kind, tiles)[shard];
        let want = TableDir::expected_header(m, kind, tiles, shard);
        // Opened and its head checked outside the lock: other tables stay
        // readable meanwhile. Of two threads opening one table, the first
        // to insert it wins and the other's copy (and descriptor) is dropped.
        let opened = Arc::new(BlockFile::open(&self.root, m, rel, &want)?);
        let f = write(&self.files).entry(key).or_insert_with(|| opened.clone()).clone();
        if !Arc::ptr_eq(&f, &opened) {
            return Ok(f);
        }
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        open.push_back(f.clone());
        self.close_extra(&mut open);
        Ok(f)
    }

    /// The entry of block `b` of table `f`, read through its index page.
    fn entry(&self, f: &Arc<BlockFile>, kind: Kind, tiles: u32, shard: usize, b: u32) -> Result<BlockEntry, TableError> {
        let (p, i) = f.head.page_of(b);
        let key = (kind as u8, tiles, shard as u32, PAGE, p);
        let page_entry = |u: &Unit| match u {
            Unit::Page(page) => page[i],
            _ => unreachable!("a page key holds a page"),
        };
        if let Some(e) = read(self.shard(&key)).with(&key, page_entry) {
            return Ok(e);
        }
        let (off, len) = f.head.page_span(p);
        let bytes = read_at(&*self.descriptor(f)?, &f.path, off, len)?;
        let page = Unit::Page(f.head.decode_page(&f.path, p, &bytes)?);
        let e = page_entry(&page);
        write(self.shard(&key)).put(key, page);
        Ok(e)
    }

    /// `look` of the decoded block holding `rank` of a table of `kind`
    /// (cached, or read through its index page and checked by `decode`) and
    /// of the rank within it. A cached block is found without its page: one
    /// look-up per answer, under a shared lock.
    fn with_block<R>(
        &self,
        m: &Manifest,
        (kind, tiles, shard): (Kind, u32, usize),
        rank: u64,
        decode: impl FnOnce(&BlockFile, u32, &BlockEntry, &[u8]) -> Result<Unit, TableError>,
        look: impl Fn(&Unit, u32) -> R,
    ) -> Result<R, TableError> {
        let f = self.file(m, kind, tiles, shard)?;
        if rank >= f.head.header.positions {
            return Err(TableError::Corrupt {
                path: f.path.clone(),
                what: format!("rank {rank} beyond the table's {} positions", f.head.header.positions),
            });
        }
        let (b, within) = f.head.block_of(rank);
        let key = (kind as u8, tiles, shard as u32, BLOCK, b);
        if let Some(r) = read(self.shard(&key)).with(&key, |u| look(u, within)) {
            return Ok(r);
        }
        let entry = self.entry(&f, kind, tiles, shard, b)?;
        let bytes = read_at(&*self.descriptor(&f)?, &f.path, entry.offset, entry.len as usize)?;
        let unit = decode(&f, b, &entry, &bytes)?;
        let r = look(&unit, within);
        write(self.shard(&key)).put(key, unit);
        Ok(r)
    }

    /// Whether rank `rank` of shard `shard` of level `tiles` is a loss.
    pub(crate) fn is_loss(&self, m: &Manifest, tiles: u32, shard: usize, rank: u64) -> Result<bool, TableError> {
        let decode =
            |f: &BlockFile, b, e: &BlockEntry, bytes: &[u8]| Ok(Unit::Losses(blocked::decode_loss_block(&f.path, &f.head, b, e, bytes)?));
        self.with_block(m, (Kind::Losses, tiles, shard), rank, decode, |u, within| match u {
            Unit::Losses(l) => contains(l, within as u16),
            _ => unreachable!("loss blocks are cached under the loss kind"),
        })
    }

    /// The Grundy value of rank `rank` of shard `shard` of level `tiles`.
    pub(crate) fn grundy(&self, m: &Manifest, tiles: u32, shard: usize, rank: u64) -> Result<u8, TableError> {
        let decode =
            |f: &BlockFile, b, e: &BlockEntry, bytes: &[u8]| Ok(Unit::Values(blocked::decode_grundy_block(&f.path, &f.head, b, e, bytes)?));
        self.with_block(m, (Kind::Grundy, tiles, shard), rank, decode, |u, within| match u {
            Unit::Values(v) => v[within as usize],
            _ => unreachable!("Grundy blocks are cached under the Grundy kind"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{contains, ByteClock, Key, Unit, BLOCK, ENTRY_BYTES};
    use proptest::prelude::*;

    fn key(i: u32) -> Key {
        (2, 7, 0, BLOCK, i)
    }

    fn values(len: usize) -> Unit {
        Unit::Values(vec![0; len])
    }

    /// The cache's invariants: map and slots agree, `bytes` adds up, the bound holds.
    fn check(c: &ByteClock) {
        let mut sum = 0;
        for (i, slot) in c.slots.iter().enumerate() {
            if let Some(slot) = slot {
                assert_eq!(c.map.get(&slot.key), Some(&(i as u32)));
                sum += slot.unit.bytes();
            } else {
                assert!(c.free.contains(&(i as u32)));
            }
        }
        assert_eq!(c.map.len() + c.free.len(), c.slots.len());
        assert_eq!(c.bytes, sum);
        assert!(c.bytes <= c.limit);
    }

    #[test]
    fn the_clock_keeps_what_was_used_since_the_hand_passed() {
        // Room for three units of 36 bytes.
        let mut c = ByteClock::new(3 * (ENTRY_BYTES + 36) + 10);
        for i in 0..3 {
            c.put(key(i), values(36));
        }
        assert_eq!(c.with(&key(0), |_| ()), Some(()));
        c.put(key(3), values(36));
        check(&c);
        // Unit 0 was used: it had a second chance, and unit 1 went.
        assert!(c.with(&key(0), |_| ()).is_some() && c.with(&key(1), |_| ()).is_none());
        assert!(c.with(&key(2), |_| ()).is_some() && c.with(&key(3), |_| ()).is_some());
        // A unit larger than the bound is not kept; one already there is not replaced.
        c.put(key(9), values(400 + 3 * ENTRY_BYTES));
        c.put(key(2), values(1));
        check(&c);
        assert!(c.with(&key(9), |_| ()).is_none());
        assert_eq!(c.with(&key(2), |u| u.bytes()), Some(ENTRY_BYTES + 36));
    }

    proptest! {
        #[test]
        fn the_clock_holds_its_invariants(ops in proptest::collection::vec((0u32..40, 0usize..300, any::<bool>()), 1..400), limit in 0usize..6000) {
            let mut c = ByteClock::new(limit);
            for (k, len, get) in ops {
                if get {
                    if let Some(ok) = c.with(&key(k), |u| matches!(u, Unit::Values(_))) {
                        prop_assert!(ok);
                    }
                } else {
                    c.put(key(k), values(len));
                    // What was put is there afterwards, unless it alone exceeds the bound.
                    if ENTRY_BYTES + len <= c.limit {
                        prop_assert!(c.with(&key(k), |_| ()).is_some());
                    }
                }
                check(&c);
            }
            c.limit /= 2;
            c.evict();
            check(&c);
        }
    }

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
