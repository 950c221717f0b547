//! Few-row table directories (FORMAT.md, section 18): the library's reader
//! and every command that reads them (query, verify, convert, fetch,
//! `--against`) against brute force and the engine's own table, a damaged
//! block refused, and a directory of the older layout still answering.

use chomp_tables::fewrow::{self, files, FewRowBox, FewRowDir, FewRowError, FewRowPosition, FewRowTable, Progress, SolveOptions};
use std::path::Path;

use crate::common::{assert_ok, assert_one_line_error, chomp, partitions, text, Brute};

/// The boxes checked against brute force: both orientations, one row and one column.
const BOXES: [(u32, u32); 9] = [(3, 7), (7, 3), (4, 9), (9, 4), (5, 6), (6, 5), (1, 5), (5, 1), (2, 6)];

fn solve(rows: u32, cols: u32) -> FewRowTable {
    fewrow::solve(FewRowBox::new(rows, cols).unwrap(), &SolveOptions::default(), &Progress::default()).unwrap()
}

/// Writes the directory of `rows × cols` in blocks of `block_bytes`.
fn write(dir: &Path, rows: u32, cols: u32, block_bytes: u32) -> FewRowTable {
    let t = solve(rows, cols);
    fewrow::write_dir_blocks(dir, t.shape(), (0..t.len()).map(|r| t.entry(r)), block_bytes).unwrap();
    t
}

/// Every position of the box in both orientations, as rows.
fn positions(rows: u32, cols: u32) -> Vec<Vec<u32>> {
    let mut all: Vec<Vec<u32>> = (1..=rows * cols).flat_map(|n| partitions(n, rows, cols)).collect();
    all.extend((1..=rows * cols).flat_map(|n| partitions(n, cols, rows)));
    all.sort();
    all.dedup();
    all
}

fn pos(rows: &[u32]) -> FewRowPosition {
    FewRowPosition::new(rows).unwrap()
}

#[test]
fn the_reader_answers_as_brute_force_in_both_orientations() {
    let mut brute = Brute::default();
    let dir = tempfile::tempdir().unwrap();
    for (rows, cols) in BOXES {
        // Blocks of 26 entries (several blocks, a short last one) and the writer's own.
        for block_bytes in [56, files::BLOCK_BYTES] {
            let d = dir.path().join(format!("{rows}x{cols}-{block_bytes}"));
            let t = write(&d, rows, cols, block_bytes);
            let r = FewRowDir::open(&d).unwrap();
            assert_eq!((r.shape().rows, r.shape().cols), (rows, cols));
            let mut seen = 0;
            for p in positions(rows, cols) {
                let a = r.answer_rows(&p).unwrap();
                assert_eq!(a.loss, brute.is_loss(&p), "{rows}x{cols}: {p:?}");
                assert_eq!(a.winning_moves, brute.winning_moves(&p), "{rows}x{cols}: {p:?}");
                if p.len() <= 8 {
                    assert_eq!(r.is_loss(&pos(&p)).unwrap(), a.loss);
                    assert_eq!(t.is_loss(&pos(&p)).ok().unwrap_or(a.loss), a.loss, "the engine's own answer");
                }
                seen += 1;
            }
            assert!(seen >= 9, "{rows}x{cols}: {seen} positions");
            // Outside the box in both orientations, and the empty board.
            let wide = vec![rows.max(cols) + 1];
            assert!(matches!(r.answer(&pos(&wide)), Err(FewRowError::Position(_))));
            if rows.min(cols) < 8 {
                let tall = vec![1; (rows.min(cols) as usize + 1).min(8)];
                let fat = vec![rows.min(cols) + 1; rows.min(cols) as usize + 1];
                assert!(r.answer(&pos(&tall)).is_ok() == (rows.max(cols) >= tall.len() as u32), "{rows}x{cols}: {tall:?}");
                assert!(matches!(r.answer(&pos(&fat)), Err(FewRowError::Position(_))), "{rows}x{cols}: {fat:?}");
            }
            assert!(matches!(r.answer(&pos(&[])), Err(FewRowError::Position(_))));
        }
    }
}

/// A position whose children fall in hundreds of blocks (blocks of 26
/// entries) has them read on several threads: the answers of the engine's
/// own table.
#[test]
fn children_in_many_blocks_answer_as_the_engines_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("4x200");
    let t = write(&d, 4, 200, 56);
    let r = FewRowDir::open(&d).unwrap();
    for p in [[200u32, 200, 200, 200], [200, 199, 130, 7], [145, 20, 20, 1], [200, 200, 1, 1]] {
        let mut want = Vec::new();
        for (a, &len) in p.iter().enumerate() {
            for b in u32::from(a == 0)..len {
                let child: Vec<u32> = p.iter().enumerate().map(|(i, &v)| if i >= a { v.min(b) } else { v }).filter(|&v| v > 0).collect();
                if t.is_loss(&pos(&child)).unwrap() {
                    want.push([a as u32, b]);
                }
            }
        }
        let got = r.answer_rows(&p).unwrap();
        assert_eq!(got.winning_moves, want, "{p:?}");
        assert_eq!(got.loss, t.is_loss(&pos(&p)).unwrap(), "{p:?}");
        assert_eq!(got.loss, want.is_empty(), "{p:?}");
    }
}

#[test]
fn the_directory_holds_the_engines_entries_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (rows, cols, block_bytes) in [(4, 60, 56), (4, 60, 4096), (60, 4, 200), (3, 1, 56), (1, 1, 4096), (6, 9, 64)] {
        let d = dir.path().join(format!("{rows}x{cols}-{block_bytes}"));
        let t = write(&d, rows, cols, block_bytes);
        let r = FewRowDir::open(&d).unwrap();
        assert_eq!(r.prefixes(), t.len());
        let mut got = Vec::new();
        r.for_each_block(|first, entries| {
            assert_eq!(first, got.len() as u64);
            got.extend_from_slice(entries);
            Ok(())
        })
        .unwrap();
        assert!(got.iter().enumerate().all(|(i, &e)| e == t.entry(i as u64)), "{rows}x{cols}");
        assert_eq!(got.len() as u64, t.len());
        let m = r.manifest().unwrap();
        assert_eq!((m.engine.as_str(), m.universe.rows, m.universe.cols), ("few-row", rows, cols));
        let levels = t.level_counts();
        assert_eq!(m.losses, levels.iter().map(|l| l.losses).sum::<u64>());
        assert_eq!(m.positions, levels.iter().map(|l| l.positions).sum::<u64>());
        assert_eq!(std::fs::read_to_string(d.join(files::LEVELS)).unwrap(), fewrow::levels_csv(&levels));
        let v = fewrow::verify(&d, 50, 7, Some(&SolveOptions::default())).unwrap();
        assert_eq!((v.files, v.losses, v.resolved), (2, m.losses, Some(t.len())));
        assert!(!d.join(format!("{}.tmp", files::TABLE)).exists());
    }
}

/// Flips one bit of `path` at `offset`.
fn flip(path: &Path, offset: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_block_is_refused_with_one_line_and_the_others_still_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("4x60");
    let t = write(&d, 4, 60, 64);
    let table = d.join(files::TABLE);
    // Block 5 holds prefix ranks 150..180 (30 entries a block of 64 bytes).
    flip(&table, 64 * 6 + 7);
    let r = FewRowDir::open(&d).unwrap();
    let ranking = t.ranking();
    let in_block = |p: &[u32]| {
        let q: Vec<u16> = p.iter().map(|&v| v as u16).chain(std::iter::repeat(0)).take(3).collect();
        (150..180).contains(&ranking.rank(&q))
    };
    let (mut refused, mut answered) = (0, 0);
    for p in partitions(30, 4, 60).into_iter().chain(partitions(12, 4, 60)) {
        let got = r.is_loss(&pos(&p));
        if in_block(&p) {
            let e = got.unwrap_err();
            assert!(matches!(e, FewRowError::Damaged(_)) && e.to_string().contains("damaged block 5"), "{e}");
            refused += 1;
        } else {
            assert_eq!(got.unwrap(), t.is_loss(&pos(&p)).unwrap());
            answered += 1;
        }
    }
    assert!(refused > 0 && answered > 0, "{refused} {answered}");
    // The command line: one line, non-zero exit; verify names the block.
    let d = d.display().to_string();
    let p = partitions(30, 4, 60).into_iter().find(|p| in_block(p)).unwrap();
    let p: Vec<String> = p.iter().map(u32::to_string).collect();
    let err = assert_one_line_error(&chomp(&["query", &p.join(" "), "--tables", &d]), "damaged block");
    assert!(err.contains("damaged block 5"), "{err}");
    let err = assert_one_line_error(&chomp(&["verify", "--tables", &d]), "damaged table");
    assert!(err.contains("FAILED") && err.contains("damaged block 5"), "{err}");
    // A damaged header, or an edited manifest, refuses the whole directory.
    flip(&table, 64 * 6 + 7);
    assert_ok(&chomp(&["verify", "--tables", &d]), "repaired");
    flip(&table, 13);
    let err = assert_one_line_error(&chomp(&["query", "3 2 1", "--tables", &d]), "damaged header");
    assert!(err.contains("SHA-256 differs"), "{err}");
    flip(&table, 13);
    let manifest = Path::new(&d).join(files::MANIFEST);
    let edited = std::fs::read_to_string(&manifest).unwrap().replace("\"losses\": ", "\"losses\": 1");
    std::fs::write(&manifest, edited).unwrap();
    let err = assert_one_line_error(&chomp(&["query", "3 2 1", "--tables", &d]), "edited manifest");
    assert!(err.contains("checksum mismatch"), "{err}");
}

#[test]
fn a_directory_of_the_older_layout_still_answers_and_converts() {
    let dir = tempfile::tempdir().unwrap();
    let mut brute = Brute::default();
    for (rows, cols) in [(4, 9), (9, 4), (3, 7)] {
        let old = dir.path().join(format!("old-{rows}x{cols}"));
        std::fs::create_dir_all(&old).unwrap();
        // The older writer: the solver's checkpoint layout, complete, as `fewrow.prefixes`.
        let t = solve(rows, cols);
        t.save(&old.join(files::LEGACY_TABLE)).unwrap();
        std::fs::write(old.join(files::LEVELS), fewrow::levels_csv(&t.level_counts())).unwrap();
        assert_eq!(&std::fs::read(old.join(files::LEGACY_TABLE)).unwrap()[..8], &files::LEGACY_MAGIC);
        let r = FewRowDir::open(&old).unwrap();
        assert!(r.is_legacy() && r.manifest().is_none());
        for p in positions(rows, cols) {
            let a = r.answer_rows(&p).unwrap();
            assert_eq!((a.loss, a.winning_moves), (brute.is_loss(&p), brute.winning_moves(&p)), "{p:?}");
        }
        let o = old.display().to_string();
        let out = chomp(&["query", "3 2 1", "--tables", &o, "--json"]);
        assert_ok(&out, "query of the older layout");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["outcome"], if brute.is_loss(&[3, 2, 1]) { "loss" } else { "win" });
        assert_ok(&chomp(&["verify", "--tables", &o]), "verify of the older layout");
        // Converted: the bytes of a new solve of the box (as the engine saw it, k rows of n).
        let new = dir.path().join(format!("new-{rows}x{cols}"));
        assert_ok(&chomp(&["convert", "--tables", &o, "--out", &new.display().to_string(), "--quiet"]), "convert");
        let fresh = dir.path().join(format!("fresh-{rows}x{cols}"));
        let k = rows.min(cols);
        let n = rows.max(cols);
        let t2 = solve(k, n);
        fewrow::write_dir(&fresh, t2.shape(), (0..t2.len()).map(|r| t2.entry(r))).unwrap();
        for f in [files::TABLE, files::LEVELS, files::MANIFEST] {
            assert_eq!(std::fs::read(new.join(f)).unwrap(), std::fs::read(fresh.join(f)).unwrap(), "{f}");
        }
        // A damaged older file is refused at opening.
        flip(&old.join(files::LEGACY_TABLE), 40);
        let err = assert_one_line_error(&chomp(&["query", "1", "--tables", &o]), "damaged older table");
        assert!(err.contains("CRC-32 does not match"), "{err}");
    }
}

#[test]
fn the_commands_read_a_solved_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let mut brute = Brute::default();
    for (rows, cols) in [("5", "6"), ("9", "4")] {
        let few = d(&format!("few-{rows}x{cols}"));
        assert_ok(&chomp(&["solve", "--engine", "few-row", "--rows", rows, "--cols", cols, "--out", &few, "-q"]), "few-row solve");
        let names: Vec<String> = std::fs::read_dir(&few).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, ["fewrow.table", "levels.csv", "manifest.json"]);
        let (r, c) = (rows.parse().unwrap(), cols.parse().unwrap());
        for p in positions(r, c).into_iter().step_by(7) {
            let shown: Vec<String> = p.iter().map(u32::to_string).collect();
            let out = chomp(&["query", &shown.join(","), "--tables", &few, "--json"]);
            assert_ok(&out, "query");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["outcome"], if brute.is_loss(&p) { "loss" } else { "win" }, "{p:?}");
            assert_eq!(v["winning_moves"], serde_json::json!(brute.winning_moves(&p)), "{p:?}");
        }
        let out = chomp(&["verify", "--tables", &few, "--full", "--samples", "100"]);
        assert_ok(&out, "verify --full");
        assert!(text(&out.stdout).contains("entries equal"), "{}", text(&out.stdout));
        // Pinned to its own manifest as published: verify --against, query --against, fetch.
        let published = d(&format!("published-{rows}x{cols}.json"));
        std::fs::copy(Path::new(&few).join("manifest.json"), &published).unwrap();
        let out = chomp(&["verify", "--tables", &few, "--against", &published]);
        assert_ok(&out, "verify --against");
        assert!(text(&out.stdout).starts_with("identical: "), "{}", text(&out.stdout));
        assert_ok(&chomp(&["query", "2 1", "--tables", &few, "--against", &published]), "query --against");
        let copy = d(&format!("fetched-{rows}x{cols}"));
        let out = chomp(&["fetch", "--manifest", &published, "--from", &format!("file://{few}"), "--out", &copy]);
        assert_ok(&out, "fetch");
        for f in ["fewrow.table", "levels.csv", "manifest.json"] {
            assert_eq!(std::fs::read(Path::new(&copy).join(f)).unwrap(), std::fs::read(Path::new(&few).join(f)).unwrap(), "{f}");
        }
        // A changed copy: --against names it, and the pinned query refuses it.
        flip(&Path::new(&copy).join("levels.csv"), 3);
        let out = chomp(&["verify", "--tables", &copy, "--against", &published]);
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).contains("changed: ") && text(&out.stderr).contains("levels.csv"), "{}", text(&out.stderr));
        std::fs::write(Path::new(&copy).join("manifest.json"), "{}").unwrap();
        let err = assert_one_line_error(&chomp(&["query", "2 1", "--tables", &copy, "--against", &published]), "not published");
        assert!(err.contains("differs from the published manifest"), "{err}");
    }
    let few = d("few-5x6");
    let err = assert_one_line_error(&chomp(&["query", "7 1", "--tables", &few]), "outside");
    assert!(err.contains("does not fit the 5x6 box in either orientation"), "{err}");
    let err = assert_one_line_error(&chomp(&["query", "2 x", "--tables", &few]), "not a number");
    assert!(err.contains("not a row length"), "{err}");
}
