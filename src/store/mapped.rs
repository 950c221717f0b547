//! Dense per-level data of a running job in memory-mapped files.
//!
//! Marks of the loss sieve (one bit per position, anonymous memory) and
//! Grundy values (one byte per position, files under the node's work
//! directory, mapped so that the processes of one node share one copy in
//! the page cache and a level larger than RAM still works). A node's only
//! process computes a level, and keeps its values, in anonymous memory
//! instead: there the values must fit in RAM. Threads update them through atomics.

use memmap2::{Mmap, MmapMut, MmapOptions};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// A zero-initialised bit set of `len` bits in anonymous memory (the
/// sieve's marks of one pending level).
pub struct MappedBits {
    map: MmapMut,
    len: u64,
}

impl MappedBits {
    /// A set of `len` bits in anonymous memory, all zero (pages are only
    /// committed when first written; huge pages where the system offers them).
    ///
    /// # Errors
    /// When the memory cannot be mapped.
    pub fn anonymous(len: u64) -> io::Result<Self> {
        Self::anonymous_dense_from(len, 0)
    }

    /// [`MappedBits::anonymous`], on huge pages only from bit `dense` on
    /// (the bits marked densely: a huge page is committed whole at its
    /// first mark, and where marks are sparse most of it stays unused).
    ///
    /// # Errors
    /// When the memory cannot be mapped.
    pub fn anonymous_dense_from(len: u64, dense: u64) -> io::Result<Self> {
        let words = len.div_ceil(64).max(1);
        let map = MmapOptions::new().len((words * 8) as usize).map_anon()?;
        #[cfg(target_os = "linux")]
        {
            // The whole huge pages from there on (the map is page aligned;
            // the kernel aligns huge pages to their size in the address space).
            const HUGE: usize = 2 << 20;
            let at = map.as_ptr() as usize;
            let start = (at + (dense.min(len) / 8) as usize).next_multiple_of(HUGE) - at;
            if start < map.len() {
                let _ = map.advise_range(memmap2::Advice::HugePage, start, map.len() - start);
            }
        }
        Ok(MappedBits { map, len })
    }

    /// The words, for atomic updates from several threads.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: the map is page aligned, its length a multiple of 8, and
        // AtomicU64 has the layout of u64; we only hand out shared references.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr() as *const AtomicU64, self.map.len() / 8) }
    }

    /// The words, for exclusive access (merging the threads' copies of the marks).
    pub fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: page aligned, length a multiple of 8; exclusive borrow.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr() as *mut u64, self.map.len() / 8) }
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the set has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets bit `i`; returns whether it was clear before.
    #[inline(always)]
    pub fn set(&self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let w = &self.words()[(i >> 6) as usize];
        let bit = 1u64 << (i & 63);
        // A plain load first: most targets are already marked or hot in cache,
        // and it avoids the locked instruction then.
        if w.load(Ordering::Relaxed) & bit != 0 {
            return false;
        }
        w.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// Whether bit `i` is set.
    #[inline(always)]
    pub fn get(&self, i: u64) -> bool {
        self.words()[(i >> 6) as usize].load(Ordering::Relaxed) >> (i & 63) & 1 != 0
    }

    /// Calls `f` for every clear bit in `start..end`, in order (word at a time).
    pub fn for_each_clear(&self, start: u64, end: u64, mut f: impl FnMut(u64)) {
        let words = self.words();
        let mut i = start;
        while i < end {
            let w = i >> 6;
            let mut clear = !words[w as usize].load(Ordering::Relaxed) & (u64::MAX << (i & 63));
            let word_end = ((w + 1) << 6).min(end);
            if word_end < (w + 1) << 6 {
                clear &= (1u64 << (word_end & 63)) - 1;
            }
            while clear != 0 {
                f((w << 6) + clear.trailing_zeros() as u64);
                clear &= clear - 1;
            }
            i = word_end;
        }
    }
}

/// A byte per position, backed by a memory-mapped file, writable from several threads.
pub struct MappedBytes {
    map: MmapMut,
}

impl MappedBytes {
    /// Creates (truncating) `path` with `len` zero bytes.
    ///
    /// # Errors
    /// I/O errors creating, sizing or mapping the file.
    pub fn create(path: &Path, len: u64) -> io::Result<Self> {
        let file = create_sized(path, len.max(1))?;
        // SAFETY: private file in the run's work directory, sized above.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(MappedBytes { map })
    }

    /// `len` zero bytes in anonymous memory (huge pages where the system
    /// offers them), for a node's only process: no file to write back while
    /// the level is computed.
    ///
    /// # Errors
    /// When the memory cannot be mapped.
    pub fn anonymous(len: u64) -> io::Result<Self> {
        Ok(MappedBytes { map: anonymous_map(len.max(1))? })
    }

    /// Maps an existing file of `len` bytes (created by another process of
    /// the node with [`MappedBytes::create`]) for writing, shared.
    ///
    /// # Errors
    /// I/O errors opening or mapping it, or a file of another length.
    pub fn open(path: &Path, len: u64) -> io::Result<Self> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        if file.metadata()?.len() != len.max(1) {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected {} bytes", len.max(1))));
        }
        // SAFETY: the node's work file, sized by its creator; processes write disjoint cells.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(MappedBytes { map })
    }

    /// The bytes, for relaxed atomic stores from several threads.
    pub fn cells(&self) -> &[AtomicU8] {
        // SAFETY: AtomicU8 has the layout of u8; shared references only.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr() as *const AtomicU8, self.map.len()) }
    }

    /// The bytes, for exclusive access (merging the processes' values).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[..]
    }

    /// Reopens read-only (the pages stay in the page cache, shared by every
    /// process that maps the file).
    ///
    /// # Errors
    /// I/O errors from `mprotect`.
    pub fn into_read_only(self) -> io::Result<Mmap> {
        self.map.make_read_only()
    }
}

/// `bytes` zero bytes of anonymous memory, committed when first written,
/// on huge pages where the system offers them.
fn anonymous_map(bytes: u64) -> io::Result<MmapMut> {
    let map = MmapOptions::new().len(bytes as usize).map_anon()?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

/// Maps an existing file read-only.
///
/// # Errors
/// I/O errors opening or mapping it.
pub fn map_read_only(path: &Path) -> io::Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: the work files are written once, completely, before being mapped.
    unsafe { Mmap::map(&file) }
}

fn create_sized(path: &Path, bytes: u64) -> io::Result<File> {
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
    file.set_len(bytes)?;
    reserve(&file, bytes)?;
    Ok(file)
}

/// Reserves the file's blocks now, so that a full disk is an error here and
/// not a SIGBUS when a mapped page is first written.
#[cfg(unix)]
fn reserve(file: &File, bytes: u64) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a valid open descriptor and a non-negative range.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, bytes as libc::off_t) };
    match rc {
        0 => Ok(()),
        // Filesystems without fallocate: fall back to sparse files.
        libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(not(unix))]
fn reserve(_: &File, _: u64) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_cells_read_back_what_was_stored() {
        let len = 3_000_000u64;
        let cells = MappedBytes::anonymous(len).unwrap();
        let at = |i: u64| i * 2_999; // distinct, spread over the whole map
        for i in 0..1000 {
            cells.cells()[at(i) as usize].store((i % 251) as u8 + 1, Ordering::Relaxed);
        }
        let map = cells.into_read_only().unwrap();
        assert_eq!(map.len() as u64, len);
        for i in 0..1000 {
            assert_eq!(map[at(i) as usize], (i % 251) as u8 + 1);
        }
        assert_eq!(map.iter().filter(|&&b| b != 0).count(), 1000, "the rest stays zero");
    }

    #[test]
    fn bits_partly_on_huge_pages_read_back_what_was_set() {
        // 64 MiB of bits, huge pages advised from an unaligned bit on, the
        // rest on the system's default pages; and none at all.
        let len = 1u64 << 29;
        for dense in [(40 << 23) + 5, len + 1] {
            let bits = MappedBits::anonymous_dense_from(len, dense).unwrap();
            let at = |i: u64| i * 536_869 % len;
            for i in 0..2000 {
                assert!(bits.set(at(i)), "bit {} was clear", at(i));
            }
            assert!(!bits.set(at(7)), "set twice");
            assert!((0..2000).all(|i| bits.get(at(i))));
            let set: u64 = bits.words().iter().map(|w| w.load(Ordering::Relaxed).count_ones() as u64).sum();
            assert_eq!(set, 2000, "the rest stays clear");
        }
    }
}
