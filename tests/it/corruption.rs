//! Damaged tables and manifests: every flipped byte and every truncation of a
//! table or of the manifest is detected by `verify` and by the probe (which
//! `query` uses): an error, never a panic, never a wrong answer.

use chomp_tables::read::verify;
use chomp_tables::solve::{run, Options, Plan};
use chomp_tables::{Position, Ranking, Tables, Universe};
use rand::{Rng, SeedableRng};
use std::path::Path;

fn positions_of_level(r: &Ranking, n: u32, count: u64) -> Vec<Position> {
    let size = r.size(n);
    (0..count.min(size)).map(|i| r.unrank(n, i * size / count.min(size)).unwrap()).collect()
}

/// Whether probing the level `n` (or the manifest) now fails.
fn probe_detects(dir: &Path, n: Option<u32>) -> bool {
    let Ok(t) = Tables::open(dir) else { return true };
    let Some(n) = n else { return false };
    let r = t.ranking().clone();
    positions_of_level(&r, n, 3).iter().any(|p| t.outcome(p).is_err() || t.grundy(p).is_err())
}

fn verify_detects(dir: &Path) -> bool {
    match verify::verify(dir, 50, 7) {
        Err(_) => true,
        Ok(report) => !report.failures.is_empty(),
    }
}

#[test]
fn every_flipped_byte_and_truncation_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    run(&Plan::new(Universe::tiles(28), 22), &Options::new(&dir), |_| {}).unwrap();
    // (relative path, level it holds) for the manifest and a spread of tables.
    let mut files: Vec<(String, Option<u32>)> = vec![("manifest.json".into(), None)];
    for n in [1, 9, 17, 22, 28] {
        files.push((format!("losses/L{n:04}.cht"), Some(n)));
        if n <= 22 {
            files.push((format!("grundy/G{n:04}.cht"), Some(n)));
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let (mut tried, mut by_verify, mut by_probe) = (0, 0, 0);
    for (rel, level) in &files {
        let path = dir.join(rel);
        let original = std::fs::read(&path).unwrap();
        for trial in 0..40 {
            let mut damaged = original.clone();
            if trial % 4 == 3 {
                damaged.truncate(rng.gen_range(0..original.len()));
            } else {
                let at = rng.gen_range(0..original.len());
                damaged[at] ^= rng.gen_range(1..=255u8);
            }
            std::fs::write(&path, &damaged).unwrap();
            tried += 1;
            by_verify += verify_detects(&dir) as u32;
            by_probe += probe_detects(&dir, *level) as u32;
            std::fs::write(&path, &original).unwrap();
        }
    }
    println!("corruption: {tried} damaged files, {by_verify} detected by verify, {by_probe} by the probe");
    assert_eq!(by_verify, tried, "verify missed some damage");
    assert_eq!(by_probe, tried, "the probe missed some damage");
    // And the restored directory is whole again.
    assert!(!verify_detects(&dir));
}

#[test]
fn garbage_tables_error_out() {
    use chomp_tables::store::format::{decode_losses, GrundyTable};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for len in [0usize, 10, 63, 64, 65, 100, 1000] {
        for _ in 0..50 {
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            if len >= 8 && rng.gen_bool(0.5) {
                bytes[..8].copy_from_slice(b"CHOMPTBL");
            }
            assert!(decode_losses(Path::new("g"), &bytes, None).is_err());
            assert!(GrundyTable::from_bytes(Path::new("g"), bytes, None).is_err());
        }
    }
}

/// Re-seals a table image after its payload was replaced: correct lengths and
/// CRCs, so only the decoders stand between garbage and an answer.
fn reseal(header: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut h = header[..64].to_vec();
    h[48..56].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[56..60].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let crc = crc32fast::hash(&h[..60]);
    h[60..64].copy_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(payload);
    h
}

#[test]
fn well_sealed_garbage_payloads_error_out() {
    use chomp_tables::store::format::{decode_losses, GrundyTable};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    run(&Plan::new(Universe::tiles(26), 26), &Options::new(&dir), |_| {}).unwrap();
    let loss = std::fs::read(dir.join("losses/L0026.cht")).unwrap();
    let grundy = std::fs::read(dir.join("grundy/G0026.cht")).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let p = Path::new("x");
    for _ in 0..300 {
        // Random bytes, or the real payload with a few bytes changed.
        let mutate = |orig: &[u8], rng: &mut rand::rngs::StdRng| -> Vec<u8> {
            if rng.gen_bool(0.3) {
                (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect()
            } else {
                let mut v = orig[64..].to_vec();
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..v.len());
                    v[at] ^= rng.gen_range(1..=255u8);
                }
                v
            }
        };
        let bad = reseal(&loss, &mutate(&loss, &mut rng));
        // Either an error, or (if the change kept a valid encoding) a consistent set.
        if let Ok((h, bitmap)) = decode_losses(p, &bad, None) {
            assert_eq!(bitmap.len(), h.losses);
        }
        let bad = reseal(&grundy, &mutate(&grundy, &mut rng));
        if let Ok(t) = GrundyTable::from_bytes(p, bad, None) {
            if let Ok(values) = t.decode_all() {
                assert_eq!(values.len() as u64, t.header().positions);
            }
        }
    }
}

/// Format 3: a flipped byte in a table's head, an index page or a block is
/// refused by the query that reads it, naming the file, and by nothing
/// else: a query of another block of an intact index page still answers.
#[test]
fn format_3_damage_is_refused_by_the_query_that_touches_it() {
    use chomp_tables::store::blocked::Head;
    use chomp_tables::Manifest;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    run(&Plan::new(Universe::tiles(52), 42), &Options::new(&dir), |_| {}).unwrap();
    let m = Manifest::read(&dir).unwrap();
    for (rel, n) in [("losses/L0052.cht", 52u32), ("grundy/G0042.cht", 42)] {
        let path = dir.join(rel);
        let original = std::fs::read(&path).unwrap();
        let head = Head::decode(&path, &original).unwrap();
        assert_eq!(head.len() as u64, m.files[rel].head_bytes.unwrap());
        assert!(head.blocks >= 4, "{rel}: {} blocks", head.blocks);
        let (page_at, page_len) = head.page_span(0);
        let entries = head.decode_page(&path, 0, &original[page_at as usize..page_at as usize + page_len]).unwrap();
        let bs = head.block_size() as u64;
        // (what, byte offset, whether a query of block 0 must fail too)
        let damage = [
            ("header", 30usize, true),
            ("page digest", 88, true),
            ("entry of block 2", page_at as usize + 2 * 32 + 20, true),
            ("block 2", entries[2].offset as usize + entries[2].len as usize / 2, false),
            ("last byte of block 2", entries[2].offset as usize + entries[2].len as usize - 1, false),
        ];
        for (what, at, block0_too) in damage {
            let mut bad = original.clone();
            bad[at] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            let t = Tables::open(&dir).unwrap();
            let ask = |rank: u64| {
                let p = t.ranking().unrank(n, rank).unwrap();
                if rel.starts_with("losses") {
                    t.outcome(&p).map(|_| ())
                } else {
                    t.grundy(&p).map(|_| ())
                }
            };
            let err = ask(2 * bs + 1).expect_err(what).to_string();
            assert!(err.contains(rel), "{rel}, {what}: {err}");
            assert_eq!(ask(0).is_err(), block0_too, "{rel}, {what}: a query of block 0");
            std::fs::write(&path, &original).unwrap();
        }
    }
}
