//! Tables damaged consistently: a loss moved to the next rank and every
//! checksum (block digests, page digests, head, file SHA-256, manifest)
//! recomputed, so that no checksum can tell. Every reader must still refuse
//! to answer for the positions involved (their answers would contradict the
//! children they looked up), and `chomp verify --full` must find it
//! (FORMAT.md section 10). The server and the Python package are checked in
//! their own modules with [`move_a_loss`].

use crate::common::{chomp, chomp_solve};
use chomp_tables::read::verify::verify_with;
use chomp_tables::store::{TableContent, TableDir};
use chomp_tables::{Manifest, Position, ProbeError, Tables};
use std::path::Path;

/// Moves one loss of level `n` (a one-table-per-level directory) to the next
/// rank, which is a win, and with Grundy values swaps the two values too;
/// rewrites the tables and the manifest with every checksum recomputed.
/// Returns the position that lost its loss and the one that gained it.
pub fn move_a_loss(dir: &Path, n: u32) -> (String, String) {
    let mut m = Manifest::read(dir).unwrap();
    let t = TableDir::new(dir);
    let bits = t.read_loss_shard(&m, n, 0).unwrap();
    let size = m.levels[n as usize - 1].positions;
    let r = bits.iter().map(u64::from).find(|&r| r + 1 < size && !bits.contains(r as u32 + 1)).expect("a loss followed by a win");
    let moved: Vec<u64> = bits.iter().map(|x| if x as u64 == r { r + 1 } else { x as u64 }).collect();
    let (name, entry) = t.write_table(&m, n, 0, TableContent::Losses(&moved)).unwrap();
    m.files.insert(name, entry);
    if n <= m.grundy_max_tiles {
        let mut values = t.read_grundy_shard_values(&m, n, 0).unwrap();
        values.swap(r as usize, r as usize + 1);
        let (name, entry) = t.write_table(&m, n, 0, TableContent::Grundy(&values)).unwrap();
        m.files.insert(name, entry);
    }
    m.write(dir).unwrap();
    let tables = Tables::open(dir).unwrap();
    let at = |rank| tables.ranking().unrank(n, rank).unwrap().to_string();
    (at(r), at(r + 1))
}

/// A format-3 run to 36 tiles with Grundy values to 30, one loss moved in
/// level `n`.
pub fn damaged_run(dir: &Path, n: u32) -> (String, String) {
    chomp_solve(dir, &["--max-tiles", "36", "--grundy-max-tiles", "30", "--quiet"]);
    move_a_loss(dir, n)
}

#[test]
fn a_moved_loss_is_refused_by_the_probe_and_the_cli() {
    for n in [34, 27] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        let (lost, gained) = damaged_run(&dir, n);
        // Every checksum holds: verify's file and table checks pass.
        let report = verify_with(&dir, 0, 1, 1..=u32::MAX, false).unwrap();
        assert!(report.failures.is_empty(), "level {n}: checksums hold: {:?}", report.failures);
        let tables = Tables::open(&dir).unwrap();
        for pos in [&lost, &gained] {
            let p: Position = pos.parse().unwrap();
            match tables.answer(&p) {
                Err(ProbeError::Contradiction { what, .. }) => assert!(what.contains(&format!("L{n:04}.cht")), "{what}"),
                other => panic!("level {n}, {pos}: expected a contradiction, got {other:?}"),
            }
            let out = chomp(&["query", pos, "--tables", dir.to_str().unwrap(), "--json"]);
            assert_eq!(out.status.code(), Some(1), "level {n}, {pos}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("damaged tables") && out.stdout.is_empty(), "level {n}, {pos}: {err}");
        }
        // The other positions of the level still answer.
        let fine = tables.ranking().unrank(n, 0).unwrap();
        if fine.to_string() != lost && fine.to_string() != gained {
            assert!(tables.answer(&fine).is_ok());
        }
    }
}

/// Swaps two different non-zero Grundy values of level `n` (a
/// one-table-per-level directory) and recomputes every checksum: the losses
/// stay right, the values do not.
pub fn swap_two_values(dir: &Path, n: u32) -> String {
    let mut m = Manifest::read(dir).unwrap();
    let t = TableDir::new(dir);
    let mut values = t.read_grundy_shard_values(&m, n, 0).unwrap();
    let a = values.iter().position(|&g| g > 0).unwrap();
    let b = values.iter().position(|&g| g > 0 && g != values[a]).unwrap();
    values.swap(a, b);
    let (name, entry) = t.write_table(&m, n, 0, TableContent::Grundy(&values)).unwrap();
    m.files.insert(name, entry);
    m.write(dir).unwrap();
    Tables::open(dir).unwrap().ranking().unrank(n, a.min(b) as u64).unwrap().to_string()
}

/// `verify --full` proves every level from the smaller ones: a moved loss
/// (with Grundy values and without, low and high in the run) and swapped
/// Grundy values are found, naming the position, although every checksum
/// holds; an undamaged run passes and says what it proved.
#[test]
fn verify_full_proves_the_levels_and_finds_consistent_damage() {
    let tmp = tempfile::tempdir().unwrap();
    for (n, grundy) in [(35, "30"), (28, "30"), (33, "0")] {
        let dir = tmp.path().join(format!("moved-{n}-{grundy}"));
        chomp_solve(&dir, &["--max-tiles", "36", "--grundy-max-tiles", grundy, "--quiet"]);
        let (lost, gained) = move_a_loss(&dir, n);
        // No samples: the proof alone finds it.
        let out = chomp(&["verify", "--tables", dir.to_str().unwrap(), "--full", "--samples", "0"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("FAILED"));
        let err = String::from_utf8_lossy(&out.stderr);
        let fail = err.lines().find(|l| l.starts_with("FAIL ")).unwrap_or_else(|| panic!("{err}"));
        assert!(fail.contains(&format!("level {n}: ")) && (fail.contains(&lost) || fail.contains(&gained)), "{fail}");
    }
    let dir = tmp.path().join("values");
    chomp_solve(&dir, &["--max-tiles", "30", "--grundy-max-tiles", "30", "--quiet"]);
    let pos = swap_two_values(&dir, 26);
    let out = chomp(&["verify", "--tables", dir.to_str().unwrap(), "--full", "--samples", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(&format!("FAIL level 26: {pos} is stored with Grundy value")), "{err}");
    // An undamaged run passes, and says what it proved, level by level.
    let clean = tmp.path().join("clean");
    chomp_solve(&clean, &["--max-tiles", "36", "--grundy-max-tiles", "30", "--quiet"]);
    let out = chomp(&["verify", "--tables", clean.to_str().unwrap(), "--full"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("ok:") && text.contains("levels 1 to 36 proven from the smaller ones"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().filter(|l| l.starts_with("proof: level")).count(), 36, "{err}");
    // Its dry run says what it will cost, and proves nothing.
    let out = chomp(&["verify", "--tables", clean.to_str().unwrap(), "--full", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("the proof of levels 1 to 36 on ") && out.stderr.is_empty(), "{text}");
    // In windows (the marks of a few levels at a time, the stored losses
    // pushed into each window as it opens): the same proof.
    let out = chomp(&["verify", "--tables", clean.to_str().unwrap(), "--full", "--samples", "0", "--max-memory", "12K"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let moved = tmp.path().join("moved-33-0");
    let out = chomp(&["verify", "--tables", moved.to_str().unwrap(), "--full", "--samples", "0", "--max-memory", "12K"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("FAIL level 33: "));
}

/// The positions of levels `from..` that `damaged` answers without an error
/// but otherwise than `good` does.
fn wrong_answers(good: &Tables, damaged: &Tables, from: u32) -> Vec<Position> {
    let mut wrong = Vec::new();
    for n in from..=good.manifest().levels_complete {
        for rank in 0..good.ranking().size(n) {
            let p = good.ranking().unrank(n, rank).unwrap();
            if let Ok(a) = damaged.answer(&p) {
                if serde_json::to_string(&a).unwrap() != serde_json::to_string(&good.answer(&p).unwrap()).unwrap() {
                    wrong.push(p);
                }
            }
        }
    }
    wrong
}

#[test]
fn a_reader_pinned_to_the_published_manifest_refuses_a_consistently_damaged_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (published, dir) = (tmp.path().join("published"), tmp.path().join("t"));
    chomp_solve(&published, &["--max-tiles", "36", "--grundy-max-tiles", "30", "--quiet"]);
    damaged_run(&dir, 34);
    let pin = published.join("manifest.json");
    // Unpinned, the copy answers some parents of the moved loss wrongly, plausibly.
    let wrong = wrong_answers(&Tables::open(&published).unwrap(), &Tables::open(&dir).unwrap(), 35);
    assert!(!wrong.is_empty(), "the damage shows in no parent's answer: the test damages nothing");
    // Pinned, every one of them is refused (the directory is refused whole).
    for p in &wrong {
        let out = chomp(&["query", &p.to_string(), "--tables", dir.to_str().unwrap(), "--against", pin.to_str().unwrap(), "--json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(1) && out.stdout.is_empty(), "{p}: {err}");
        assert!(err.contains("not the published tables") && err.trim().lines().count() == 1, "{p}: {err}");
    }
    assert!(matches!(Tables::open_against(&dir, &pin, 1 << 20), Err(ProbeError::NotPublished { .. })));
    // The published directory pinned to its own manifest answers as unpinned.
    let pinned = Tables::open_against(&published, &pin, 1 << 20).unwrap();
    let plain = Tables::open(&published).unwrap();
    for p in wrong.iter().take(20) {
        assert_eq!(serde_json::to_string(&pinned.answer(p).unwrap()).unwrap(), serde_json::to_string(&plain.answer(p).unwrap()).unwrap());
    }
    let out = chomp(&["query", &wrong[0].to_string(), "--tables", published.to_str().unwrap(), "--against", pin.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Swaps the contents of the first two loss blocks (2^16 ranks each) of
/// level `n`, and with Grundy values the same two blocks of values, and
/// recomputes every checksum: each block is intact, in the other's place.
fn swap_two_blocks(dir: &Path, n: u32) {
    const BLOCK: u64 = 1 << 16;
    let mut m = Manifest::read(dir).unwrap();
    let t = TableDir::new(dir);
    let size = m.levels[n as usize - 1].positions;
    assert!(size >= 2 * BLOCK, "level {n} has fewer than two blocks");
    let bits = t.read_loss_shard(&m, n, 0).unwrap();
    let mut moved: Vec<u64> = bits
        .iter()
        .map(u64::from)
        .map(|r| match r / BLOCK {
            0 => r + BLOCK,
            1 => r - BLOCK,
            _ => r,
        })
        .collect();
    moved.sort_unstable();
    assert_ne!(moved, bits.iter().map(u64::from).collect::<Vec<_>>(), "the two blocks hold the same losses");
    let (name, entry) = t.write_table(&m, n, 0, TableContent::Losses(&moved)).unwrap();
    m.files.insert(name, entry);
    if n <= m.grundy_max_tiles {
        let mut values = t.read_grundy_shard_values(&m, n, 0).unwrap();
        let (first, second) = values.split_at_mut(BLOCK as usize);
        first.swap_with_slice(&mut second[..BLOCK as usize]);
        let (name, entry) = t.write_table(&m, n, 0, TableContent::Grundy(&values)).unwrap();
        m.files.insert(name, entry);
    }
    m.write(dir).unwrap();
}

#[test]
fn verify_full_finds_two_swapped_blocks_with_and_without_grundy_values() {
    let tmp = tempfile::tempdir().unwrap();
    for grundy in ["50", "0"] {
        let dir = tmp.path().join(format!("swapped-{grundy}"));
        chomp_solve(&dir, &["--max-tiles", "50", "--grundy-max-tiles", grundy, "--quiet"]);
        swap_two_blocks(&dir, 49);
        // Every checksum holds: the files and the tables pass their checks.
        let report = verify_with(&dir, 0, 1, 1..=u32::MAX, false).unwrap();
        assert!(report.failures.is_empty(), "checksums hold: {:?}", report.failures);
        let out = chomp(&["verify", "--tables", dir.to_str().unwrap(), "--full", "--samples", "0"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "grundy to {grundy}: {err}");
        assert!(err.lines().any(|l| l.starts_with("FAIL level 49: ")), "grundy to {grundy}: {err}");
    }
}
