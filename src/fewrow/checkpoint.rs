//! The few-row solver's checkpoint: the prefix table and the first
//! wavefront it has not decided, in one checked file.
//!
//! Layout (little-endian): the magic `CHOMPFR1`, then `u32` rows `k`, `u32`
//! columns `n` (the box as the engine solves it, shorter side first), `u32`
//! the next wavefront, `u64` the number of entries, the entries (`u16`
//! each, by prefix rank), and a CRC-32 of everything before it. It is
//! written to `PATH.tmp`, synced and renamed: the file is whole or absent.

use super::{FewRowBox, FewRowError};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};

const MAGIC: &[u8; 8] = b"CHOMPFR1";
/// Entries converted at a time.
const CHUNK: usize = 1 << 20;

/// A checkpoint that cannot be used.
pub type CheckpointError = FewRowError;

fn io(path: &Path, e: std::io::Error) -> FewRowError {
    FewRowError::Io(format!("{}: {e}", path.display()))
}

/// Writes `table` and the wavefront to resume from, atomically.
///
/// # Errors
/// [`FewRowError::Io`] when the file cannot be written.
pub fn write_checkpoint(path: &Path, shape: FewRowBox, table: &[AtomicU16], next: u32) -> Result<(), FewRowError> {
    let tmp = path.with_extension("tmp");
    let file = File::create(&tmp).map_err(|e| io(&tmp, e))?;
    let mut w = BufWriter::with_capacity(1 << 22, file);
    let mut crc = crc32fast::Hasher::new();
    let mut put = |w: &mut BufWriter<File>, b: &[u8]| -> std::io::Result<()> {
        crc.update(b);
        w.write_all(b)
    };
    let mut header = Vec::with_capacity(28);
    header.extend_from_slice(MAGIC);
    for v in [shape.k(), shape.n(), next] {
        header.extend_from_slice(&v.to_le_bytes());
    }
    header.extend_from_slice(&(table.len() as u64).to_le_bytes());
    put(&mut w, &header).map_err(|e| io(&tmp, e))?;
    let mut buf = Vec::with_capacity(2 * CHUNK);
    for chunk in table.chunks(CHUNK) {
        buf.clear();
        buf.extend(chunk.iter().flat_map(|e| e.load(Relaxed).to_le_bytes()));
        put(&mut w, &buf).map_err(|e| io(&tmp, e))?;
    }
    let sum = crc.finalize();
    w.write_all(&sum.to_le_bytes()).map_err(|e| io(&tmp, e))?;
    let file = w.into_inner().map_err(|e| io(&tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Reads a checkpoint of `shape`: its entries and the wavefront to resume
/// from.
///
/// # Errors
/// [`FewRowError::Io`] when the file cannot be read, is of another box, or
/// fails its checksum.
pub fn read_checkpoint(path: &Path, shape: FewRowBox) -> Result<(Vec<u16>, u32), FewRowError> {
    let bad = |why: &str| FewRowError::Io(format!("{}: {why}", path.display()));
    let mut r = BufReader::with_capacity(1 << 22, File::open(path).map_err(|e| io(path, e))?);
    let mut header = [0u8; 28];
    r.read_exact(&mut header).map_err(|_| bad("too short for a few-row checkpoint"))?;
    if &header[..8] != MAGIC {
        return Err(bad("not a few-row checkpoint"));
    }
    let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
    let (k, n, next) = (word(8), word(12), word(16));
    let len = u64::from_le_bytes(header[20..28].try_into().expect("8 bytes"));
    if (k, n) != (shape.k(), shape.n()) || Some(len) != shape.prefixes() {
        return Err(bad(&format!("a checkpoint of {k} rows of {n}, not of this box (delete it to start over)")));
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    let mut entries = Vec::with_capacity(len as usize);
    let mut buf = vec![0u8; 2 * CHUNK];
    let mut left = len as usize;
    while left > 0 {
        let take = left.min(CHUNK);
        r.read_exact(&mut buf[..2 * take]).map_err(|_| bad("cut short"))?;
        crc.update(&buf[..2 * take]);
        entries.extend(buf[..2 * take].chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])));
        left -= take;
    }
    let mut sum = [0u8; 4];
    r.read_exact(&mut sum).map_err(|_| bad("cut short"))?;
    if u32::from_le_bytes(sum) != crc.finalize() || r.read(&mut [0u8; 1]).map_err(|e| io(path, e))? != 0 {
        return Err(bad("damaged (its checksum does not match; delete it to start over)"));
    }
    Ok((entries, next))
}
