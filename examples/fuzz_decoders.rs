//! A mutation fuzzer for the table and manifest decoders (stable Rust, no
//! instrumentation): every input is a file of `fuzz/corpus/` mutated (bits
//! flipped, bytes and fields overwritten with edge values, truncated,
//! extended, spliced with another file), half of them **resealed** (the
//! CRCs and digests recomputed, so that the decoders behind the checksums,
//! zstd, roaring, the gap and index decoders, see the damage), and handed to
//! `chomp_tables::store::decode_any`, which must return, never panic, and
//! allocate within bounds.
//!
//! ```text
//! cargo run --release --example fuzz_decoders -- [INPUTS] [SEED]   # default 10^6 inputs, seed 1
//! ```
//!
//! Prints how many inputs each outcome had, the peak RSS, and exits 1 on the
//! first panic (after writing the input to `fuzz/crash-SEED-N.bin`).

use chomp_tables::store::{blocked, decode_any};
use std::path::{Path, PathBuf};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const EDGES: [u64; 10] = [0, 1, 2, 0x7f, 0x80, 0xff, 0xffff, 0x1_0000, 0xffff_ffff, u64::MAX];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = EDGES[rng.below(EDGES.len())] as u8;
            }
            2 if len >= 8 => {
                // An edge value over a 4- or 8-byte field.
                let w = if rng.below(2) == 0 { 4 } else { 8 };
                let i = rng.below(len - w + 1);
                let v = EDGES[rng.below(EDGES.len())].to_le_bytes();
                input[i..i + w].copy_from_slice(&v[..w]);
            }
            3 => input.truncate(rng.below(len + 1)),
            4 => {
                let extra = rng.below(64);
                input.extend((0..extra).map(|_| rng.next() as u8));
            }
            5 if len > 0 => {
                let (a, b) = (rng.below(len), rng.below(len));
                let (a, b) = (a.min(b), a.max(b));
                let piece = input[a..b].to_vec();
                let at = rng.below(input.len() + 1);
                input.splice(at..at, piece);
            }
            6 => {
                let other = &corpus[rng.below(corpus.len())];
                let at = rng.below(len + 1);
                let from = rng.below(other.len());
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            _ => {}
        }
    }
}

/// Recomputes what checksums it can find, so the damage reaches the decoders behind them.
fn reseal(b: &mut [u8]) {
    if b.len() < 10 || b[0..8] != *b"CHOMPTBL" {
        return;
    }
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    match u16::from_le_bytes([b[8], b[9]]) {
        3 if b.len() >= blocked::FIXED_LEN => {
            let (blocks, per_page) = (u32_at(b, 64), u32_at(b, 68).max(1));
            let pages = blocks.div_ceil(per_page);
            let head = blocked::FIXED_LEN + 16 * pages;
            if head + 32 * blocks > b.len() {
                return;
            }
            for e in 0..blocks {
                let at = head + 32 * e;
                let (off, len) = (u64_at(b, at), u32_at(b, at + 8));
                if off <= b.len() && len <= b.len() - off {
                    let d = blocked::digest(&b[off..off + len]);
                    b[at + 16..at + 32].copy_from_slice(&d);
                }
            }
            for p in 0..pages {
                let start = head + 32 * p * per_page;
                let end = (start + 32 * per_page).min(head + 32 * blocks);
                let d = blocked::digest(&b[start..end]);
                b[blocked::FIXED_LEN + 16 * p..blocked::FIXED_LEN + 16 * (p + 1)].copy_from_slice(&d);
            }
            let crc = crc32fast::hash(&b[blocked::FIXED_LEN..head]);
            b[80..84].copy_from_slice(&crc.to_le_bytes());
            let crc = crc32fast::hash(&b[..84]);
            b[84..88].copy_from_slice(&crc.to_le_bytes());
        }
        v @ (1 | 2) => {
            let len = if v == 1 { 64 } else { 80 };
            if b.len() < len {
                return;
            }
            let crc = crc32fast::hash(&b[len..]);
            b[56..60].copy_from_slice(&crc.to_le_bytes());
            let crc = crc32fast::hash(&b[..len - 4]);
            b[len - 4..len].copy_from_slice(&crc.to_le_bytes());
        }
        _ => {}
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let inputs: u64 = args.next().map_or(1_000_000, |a| a.parse().expect("INPUTS: a number"));
    let seed: u64 = args.next().map_or(1, |a| a.parse().expect("SEED: a number"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(root.join("corpus")).expect("fuzz/corpus").map(|e| e.unwrap().path()).collect();
    names.sort();
    for p in &names {
        corpus.push(std::fs::read(p).unwrap());
    }
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (mut ok, mut refused) = (0u64, 0u64);
    let t0 = std::time::Instant::now();
    let path = Path::new("fuzz-input");
    for i in 0..inputs {
        let mut input = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut input, &corpus);
        if rng.below(2) == 0 {
            reseal(&mut input);
        }
        match std::panic::catch_unwind(|| decode_any(path, &input)) {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(_)) => refused += 1,
            Err(_) => {
                let crash = root.join(format!("crash-{seed}-{i}.bin"));
                std::fs::write(&crash, &input).unwrap();
                eprintln!("PANIC on input {i} (seed {seed}), written to {}", crash.display());
                std::process::exit(1);
            }
        }
    }
    println!(
        "fuzz_decoders: {inputs} inputs (seed {seed}, {} corpus files): {ok} decoded, {refused} refused, 0 panics; {:.1} s, peak RSS {} KiB",
        corpus.len(),
        t0.elapsed().as_secs_f64(),
        peak_rss_kib()
    );
}
