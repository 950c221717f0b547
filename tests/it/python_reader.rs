//! The independent Python reader (the package `chomp_tables` in `python/`,
//! written from `FORMAT.md` alone) against the real binary: both must give
//! the same answers (the whole JSON of `chomp query --json`) on real table
//! directories, the published ones included, and the same errors for bad
//! input; the reader must refuse damaged tables, and it must decode every
//! roaring container kind the format allows.
//!
//! The package runs from this checkout (`python -m chomp_tables` with
//! `PYTHONPATH=python/src`), so these tests check the code next to them
//! whatever is installed; `.ci/run` also installs it with pip and runs its
//! unit tests against the installed copy.
//!
//! Needs `python3`. Where it cannot import the reader's one dependency,
//! `zstandard`, the tests make their own virtual environment under
//! `target/` (once) and install it there from the package registry (pip);
//! where that fails too (no `venv` module, no network) they fail, saying
//! the one command that installs what is missing: a test that could not
//! run never counts as passed.

use crate::common::{chomp, chomp_solve, copy_dir, partitions, Range, SplitMix};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Where the package's source lies (`python/src`).
fn package_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python").join("src")
}

/// The Python interpreter the tests run: `python3` itself when it can
/// import `zstandard` (resolved once: a version-manager shim such as pyenv's
/// costs more than the reader itself), else the tests' own virtual
/// environment (see [`own_venv`]).
static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// What the interpreter `exe` prints for `import sys, zstandard;
/// print(sys.executable)`: its own path, or why it failed.
fn probe(exe: &Path) -> Result<PathBuf, String> {
    match Command::new(exe).args(["-c", "import sys, zstandard; print(sys.executable)"]).output() {
        Ok(o) if o.status.success() => {
            let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
            Ok(if path.is_empty() { exe.to_path_buf() } else { PathBuf::from(path) })
        }
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().lines().last().unwrap_or("").to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn find_python() -> Result<PathBuf, String> {
    match probe(Path::new("python3")) {
        Ok(exe) => Ok(exe),
        Err(_) if Command::new("python3").arg("--version").output().is_err() => {
            Err("python3 is not runnable: install Python 3 (Debian: `apt install python3`)".into())
        }
        Err(_) => own_venv(),
    }
}

/// A virtual environment under `target/` holding `zstandard` (the reader's
/// dependency, as python/pyproject.toml names it), made once from `python3`
/// and reused: built in a folder of its own, then renamed into place, so
/// that a test run stopped half-way leaves none that looks ready.
fn own_venv() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-reader-venv");
    let python = venv.join("bin").join("python3");
    if let Ok(exe) = probe(&python) {
        return Ok(exe);
    }
    let building = venv.with_extension(format!("building-{}", std::process::id()));
    let _ = fs::remove_dir_all(&building);
    let run = |cmd: &mut Command| -> Result<(), String> {
        match cmd.output() {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().lines().last().unwrap_or("").to_string()),
            Err(e) => Err(e.to_string()),
        }
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(&building)).map_err(|why| {
        format!(
            "python3 cannot import zstandard, nor make a virtual environment to install it in ({why}): \
             install it (Debian: `apt install python3-zstandard`; elsewhere `python3 -m pip install zstandard`)"
        )
    })?;
    let pip = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", "zstandard>=0.22"];
    if let Err(why) = run(Command::new(building.join("bin").join("python3")).args(pip)) {
        let _ = fs::remove_dir_all(&building);
        return Err(format!(
            "python3 cannot import zstandard, and pip could not install it in {} ({why}): \
             install it (Debian: `apt install python3-zstandard`; elsewhere `python3 -m pip install zstandard`)",
            venv.display()
        ));
    }
    // One that cannot import zstandard (a broken or older copy) makes way.
    let _ = fs::remove_dir_all(&venv);
    if fs::rename(&building, &venv).is_err() {
        let _ = fs::remove_dir_all(&building);
    }
    probe(&python)
        .map_err(|why| format!("{}: the tests' virtual environment cannot import zstandard ({why}); delete it and rerun", venv.display()))
}

/// `python3` with `zstandard` (or the tests' own environment), or the test
/// fails saying how to install it: a reader test that cannot run must not
/// count as passed.
fn python_available() -> bool {
    if let Err(why) = PYTHON.get_or_init(find_python) {
        panic!("{why}: the Python reader cannot be tested");
    }
    true
}

/// A temporary directory, in memory where possible: the writer syncs every
/// file and directory it writes, which costs seconds on some disks.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(dir) = tempfile::Builder::new().prefix("chomp-python-reader").tempdir_in(shm) {
            return dir;
        }
    }
    tempfile::tempdir().unwrap()
}

/// `f` over `items` on a few threads (most of the time goes to starting processes), results in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return done };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// `python -m chomp_tables ARGS` with the package of this checkout.
fn python(args: &[&str]) -> Output {
    let exe = PYTHON.get().and_then(|p| p.as_ref().ok()).expect("python_available() was checked");
    let mut cmd = Command::new(exe);
    let mut path = std::ffi::OsString::from(package_src());
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        path.push(":");
        path.push(old);
    }
    cmd.env("PYTHONPATH", path).args(["-m", "chomp_tables"]).args(args);
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// `python -m chomp_tables query POS --tables DIR --json`.
fn python_query(dir: &Path, pos: &str) -> Output {
    python(&["query", pos, "--tables", dir.to_str().unwrap(), "--json"])
}

/// A pseudo-random partition of `n` with at most `rows` parts, each at most `cols` (`None` if it got stuck).
fn random_partition(rng: &mut SplitMix, n: u32, rows: u32, cols: u32) -> Option<Vec<u32>> {
    let mut parts = Vec::new();
    let (mut left, mut max) = (n, cols);
    while left > 0 {
        let rows_left = rows - parts.len() as u32;
        if rows_left == 0 {
            return None;
        }
        // The part must leave at most (rows_left - 1) parts of at most itself.
        let lo = left.div_ceil(rows_left).max(1);
        let hi = max.min(left);
        if lo > hi {
            return None;
        }
        let v = rng.range(lo, hi);
        parts.push(v);
        left -= v;
        max = v;
    }
    Some(parts)
}

/// A position as `chomp query` and the reader take it: `3 2 1`.
fn rows_text(rows: &[u32]) -> String {
    rows.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" ")
}

/// Compares `chomp query --json` with the Python reader's batch answers for
/// every sample; returns how many samples are losses and how many have no
/// Grundy value.
fn compare(dir: &Path, samples: &[String], outside: &[&str]) -> (usize, usize) {
    // Not in `dir`: the published directories are part of the repository.
    let scratch_dir = scratch();
    let batch = scratch_dir.path().join("positions.txt");
    let mut lines: Vec<String> = samples.to_vec();
    lines.extend(outside.iter().map(|s| s.to_string()));
    fs::write(&batch, lines.join("\n") + "\n").unwrap();
    let out = python(&["batch", batch.to_str().unwrap(), "--tables", dir.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let texts: Vec<&str> = stdout.lines().collect();
    let answers: Vec<Value> = texts.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), lines.len(), "one answer per position; stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.success(), outside.is_empty(), "batch exit status reflects positions outside the tables");
    let rust_answers = par_map(samples, |pos| chomp(&["query", pos, "--tables", dir.to_str().unwrap(), "--json"]));
    for ((pos, py), rust) in samples.iter().zip(&texts).zip(rust_answers) {
        assert!(rust.status.success(), "chomp query {pos:?} failed: {}", String::from_utf8_lossy(&rust.stderr));
        // The same JSON text: same fields, same order, moves best first.
        let rust_text = String::from_utf8(rust.stdout).unwrap();
        assert_eq!(*py, rust_text.trim_end(), "{pos} in {}", dir.display());
    }
    for (pos, py) in outside.iter().zip(&answers[samples.len()..]) {
        assert!(py["error"].as_str().is_some_and(|e| !e.is_empty()), "Python answers {py} for {pos}, outside the tables");
        let rust = chomp(&["query", pos, "--tables", dir.to_str().unwrap(), "--json"]);
        assert!(!rust.status.success(), "chomp query accepts {pos}, outside the tables");
        let single = python_query(dir, pos);
        let stderr = String::from_utf8_lossy(&single.stderr);
        assert!(!single.status.success() && stderr.trim().lines().count() == 1, "Python must refuse {pos} in one line: {stderr}");
        // The same message as chomp's, in the batch answer and on stderr.
        let rust_err = String::from_utf8_lossy(&rust.stderr);
        assert_eq!(stderr.trim(), rust_err.trim(), "{pos}");
        assert_eq!(format!("error: {}", py["error"].as_str().unwrap()), rust_err.trim(), "{pos}");
    }
    let answers = &answers[..samples.len()];
    (answers.iter().filter(|a| a["outcome"] == "loss").count(), answers.iter().filter(|a| a["grundy"].is_null()).count())
}

#[test]
fn agrees_with_chomp_query_on_an_8x15_box() {
    if !python_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path().join("box");
    chomp_solve(&dir, &["--rows", "8", "--cols", "15", "--grundy", "--quiet"]);
    let mut samples: BTreeSet<Vec<u32>> = (1..=9).flat_map(|n| partitions(n, 8, 15)).collect();
    let mut rng = SplitMix(0x8015);
    let wanted = samples.len() + 40;
    while samples.len() < wanted {
        let rows = rng.range(1, 8) as usize;
        let mut p: Vec<u32> = (0..rows).map(|_| rng.range(1, 15)).collect();
        p.sort_unstable_by(|a, b| b.cmp(a));
        samples.insert(p);
    }
    // The last three have more than 8 rows: answered by their transposes.
    for fixed in [
        vec![15; 8],
        vec![15],
        vec![1; 8],
        vec![15, 14, 13, 12, 11, 10, 9, 8],
        vec![8, 7, 6, 5, 4, 3, 2, 1],
        vec![1; 9],
        vec![2, 2, 2, 2, 2, 2, 2, 2, 2, 1],
        vec![8; 15],
    ] {
        samples.insert(fixed);
    }
    let samples: Vec<String> = samples.iter().map(|p| rows_text(p)).collect();
    let (losses, no_grundy) = compare(&dir, &samples, &["16", "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "16 1", "9 9 9 9 9 9 9 9 9"]);
    assert!(losses >= 10 && no_grundy == 0, "{losses} losses, {no_grundy} without Grundy value");
}

#[test]
fn agrees_with_chomp_query_on_a_tile_run() {
    if !python_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path().join("t25");
    // Counting winning moves: the manifest has count_moves and two more fields a level.
    chomp_solve(&dir, &["--max-tiles", "25", "--grundy-max-tiles", "20", "--count-moves", "--quiet"]);
    let mut samples: BTreeSet<Vec<u32>> = (1..=9).flat_map(|n| partitions(n, 9, 9)).collect();
    let mut rng = SplitMix(0x2520);
    let wanted = samples.len() + 40;
    // Half of the random ones above the Grundy levels (grundy null), half below.
    while samples.len() < wanted {
        let n = if samples.len().is_multiple_of(2) { rng.range(21, 25) } else { rng.range(10, 20) };
        if let Some(p) = random_partition(&mut rng, n, n, n) {
            samples.insert(p);
        }
    }
    samples.extend([vec![25], vec![1; 25], vec![5; 5], vec![7, 6, 5, 4, 3]]);
    let samples: Vec<String> = samples.iter().map(|p| rows_text(p)).collect();
    let (losses, no_grundy) = compare(&dir, &samples, &["26", "13 13", "3 3 3 3 3 3 3 3 3"]);
    assert!(losses >= 10 && no_grundy >= 20, "{losses} losses, {no_grundy} without Grundy value");
}

#[test]
fn agrees_with_chomp_query_on_sharded_tables() {
    if !python_available() {
        return;
    }
    // Levels in shards (FORMAT.md sections 14 and 17): small shards, so that most levels hold several.
    let tmp = scratch();
    for (name, args, limit) in [
        ("t26", vec!["--max-tiles", "26", "--grundy-max-tiles", "22"], "150"),
        ("box", vec!["--rows", "6", "--cols", "9", "--grundy"], "97"),
    ] {
        let dir = tmp.path().join(name);
        let mut args = args.clone();
        args.extend(["--shard-positions", limit, "--quiet"]);
        chomp_solve(&dir, &args);
        let manifest: Value = serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["format_version"], 3);
        assert!(manifest["shard_positions"].is_u64());
        let mut samples: BTreeSet<Vec<u32>> = (1..=8).flat_map(|n| partitions(n, 6, 9)).collect();
        let mut rng = SplitMix(0x5a4d);
        let top = if name == "box" { 54 } else { 26 };
        while samples.len() < 160 {
            let n = rng.range(9, top);
            if let Some(p) = random_partition(&mut rng, n, if name == "box" { 6 } else { n }, if name == "box" { 9 } else { n }) {
                samples.insert(p);
            }
        }
        let samples: Vec<String> = samples.iter().map(|p| rows_text(p)).collect();
        let (losses, _) = compare(&dir, &samples, &["27 1 1 1 1 1 1 1 1 1 1"]);
        assert!(losses >= 5, "{name}: {losses} losses among the samples");
    }
}

/// The published table directories of `results/` (in the repository).
fn published(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(name)
}

#[test]
fn agrees_with_chomp_query_on_the_published_tables() {
    if !python_available() {
        return;
    }
    // The 8x15 box, Grundy values everywhere: random positions of every height.
    let mut rng = SplitMix(0x0815_2026);
    let mut samples: BTreeSet<Vec<u32>> = BTreeSet::new();
    while samples.len() < 40 {
        let rows = rng.range(1, 8) as usize;
        let mut p: Vec<u32> = (0..rows).map(|_| rng.range(1, 15)).collect();
        p.sort_unstable_by(|a, b| b.cmp(a));
        samples.insert(p);
    }
    samples.extend([vec![15; 8], vec![1; 15], vec![3, 2, 1]]);
    let samples: Vec<String> = samples.iter().map(|p| rows_text(p)).collect();
    let (losses, no_grundy) = compare(&published("box-8x15"), &samples, &["16"]);
    assert!(no_grundy == 0, "{losses} losses, {no_grundy} without Grundy value");

    // Losses to 100 tiles (no Grundy values): large positions, whose children
    // fall on dozens of levels, and a few losses.
    let dir = published("losses-100");
    let mut samples: BTreeSet<Vec<u32>> = BTreeSet::new();
    while samples.len() < 24 {
        let n = rng.range(60, 100);
        if let Some(p) = random_partition(&mut rng, n, n, n) {
            samples.insert(p);
        }
    }
    samples.extend([vec![100], vec![1; 100], vec![20, 18, 15, 12, 10, 8, 5, 2], vec![10; 10], vec![2, 2, 1]]);
    let tables = chomp_tables::Tables::open(&dir).unwrap();
    for n in [70u32, 85, 99] {
        let losses = tables.level_losses(n).unwrap();
        let rank = losses.iter().nth((losses.len() / 2) as usize).unwrap();
        let p = tables.ranking().unrank(n, rank).unwrap();
        samples.insert(p.rows().iter().map(|&r| r as u32).collect());
    }
    let samples: Vec<String> = samples.iter().map(|p| rows_text(p)).collect();
    let (losses, no_grundy) = compare(&dir, &samples, &["101", "50 50 1"]);
    assert!(losses >= 4 && no_grundy == samples.len(), "{losses} losses, {no_grundy} without Grundy value");
}

/// Malformed positions: the package raises, and its command line prints
/// chomp's own one-line message.
#[test]
fn same_errors_as_chomp_query_for_bad_input() {
    if !python_available() {
        return;
    }
    let dir = published("box-8x15");
    for bad in ["", "  ", "3 x", "2 3", "3 0", "0", "3,,1", ",3", "256", "99999999999", "3.5", "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"] {
        let py = python_query(&dir, bad);
        let rust = chomp(&["query", bad, "--tables", dir.to_str().unwrap(), "--json"]);
        assert!(!py.status.success() && !rust.status.success(), "{bad:?} accepted");
        assert!(py.stdout.is_empty(), "{bad:?}: Python printed {}", String::from_utf8_lossy(&py.stdout));
        let (py_err, rust_err) = (String::from_utf8_lossy(&py.stderr), String::from_utf8_lossy(&rust.stderr));
        assert_eq!(py_err.lines().count(), 1, "{bad:?}: {py_err}");
        assert_eq!(py_err.trim(), rust_err.trim(), "{bad:?}");
    }
    // A directory that is not one.
    let tmp = scratch();
    let py = python_query(tmp.path(), "3 2 1");
    let err = String::from_utf8_lossy(&py.stderr);
    assert!(!py.status.success() && err.trim().lines().count() == 1 && err.contains("no manifest.json"), "{err}");
}

/// `scripts/chomp_reader.py`, the old command line, is a wrapper over the package.
#[test]
fn the_old_script_is_a_wrapper_over_the_package() {
    if !python_available() {
        return;
    }
    let exe = PYTHON.get().unwrap().as_ref().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts").join("chomp_reader.py");
    let dir = published("box-8x15");
    let old = Command::new(exe).arg(&script).args([dir.to_str().unwrap(), "3 2 1", "--json"]).output().unwrap();
    assert!(old.status.success(), "{}", String::from_utf8_lossy(&old.stderr));
    assert_eq!(old.stdout, python_query(&dir, "3 2 1").stdout);
}

/// Expects the Python reader to refuse `pos` in `dir` with a one-line message containing `needle`.
fn expect_refusal(dir: &Path, pos: &str, needle: &str, what: &str) {
    let out = python_query(dir, pos);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: the Python reader answered {}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty(), "{what}: printed an answer: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(stderr.trim().lines().count(), 1, "{what}: want one line, got {stderr:?}");
    assert!(stderr.contains(needle), "{what}: {stderr:?} does not mention {needle:?}");
}

#[test]
fn refuses_damaged_tables() {
    if !python_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path().join("t12");
    // Table format 1 (header offsets below); format 3: `refuses_damaged_blocked_tables`.
    chomp_solve(&dir, &["--max-tiles", "12", "--grundy-max-tiles", "12", "--table-format", "1", "--quiet"]);
    let ok = python_query(&dir, "3 2 1");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));

    // Each case damages its own copy of the directory; "3 2 1" reads L0006
    // and G0006, and its children's loss tables (L0003..L0005). A flipped
    // byte must be reported against the damaged file.
    let mut cases: Vec<(String, Damage, &str)> = Vec::new();
    for (rel, every_field) in [("losses/L0006.cht", true), ("grundy/G0006.cht", false), ("losses/L0005.cht", false)] {
        let len = fs::metadata(dir.join(rel)).unwrap().len() as usize;
        // Every header field (or a few), the zstd magic, and the payload's middle and end.
        let header: &[usize] = if every_field { &[0, 7, 8, 10, 12, 16, 20, 24, 28, 32, 40, 48, 56, 60, 63] } else { &[0, 8, 32, 56, 60] };
        for &offset in header.iter().chain(&[64, 64 + (len - 64) / 2, len - 1]) {
            cases.push((format!("{rel} with byte {offset} flipped"), Damage::Flip(rel, offset), rel));
        }
        cases.push((format!("{rel} truncated"), Damage::Truncate(rel), "truncated"));
    }
    cases.push(("table version 4 with a valid header checksum".into(), Damage::TableVersion("losses/L0006.cht"), "version"));
    cases.push(("a table that is intact but not the one the manifest lists".into(), Damage::ManifestSha("losses/L0006.cht"), "SHA-256"));
    cases.push(("manifest format_version 4".into(), Damage::ManifestVersion, "version"));
    cases.push(("manifest value edited, checksum kept".into(), Damage::ManifestEdited, "checksum"));
    cases.push(("manifest re-spaced".into(), Damage::ManifestRespaced, "canonical"));
    let cases: Vec<(usize, (String, Damage, &str))> = cases.into_iter().enumerate().collect();
    par_map(&cases, |(i, (what, damage, needle))| {
        let copy = tmp.path().join(format!("case{i}"));
        copy_dir(&dir, &copy);
        damage.apply(&copy);
        expect_refusal(&copy, "3 2 1", needle, what);
    });

    // The undamaged directory still gives the same answer.
    let again = python_query(&dir, "3 2 1");
    assert_eq!(again.stdout, ok.stdout);
}

/// Manifests that are valid JSON with a valid checksum, yet not what the
/// format allows: CRLF line endings, listed names that are not
/// plain relative names, top-level fields out of order. Both readers refuse
/// each (the Rust one also where Python is missing).
#[test]
fn both_readers_refuse_non_canonical_manifests() {
    let python = python_available();
    let tmp = scratch();
    let dir = tmp.path().join("t12");
    chomp_solve(&dir, &["--max-tiles", "12", "--grundy-max-tiles", "12", "--count-moves", "--quiet"]);
    // (what, damage, Python's message, chomp query's message)
    let mut cases: Vec<(String, Damage, &str, &str)> =
        vec![("CRLF line endings".into(), Damage::ManifestCrlf, "carriage return", "not in canonical form")];
    for name in ["../summary.csv", "losses/../summary.csv", "/etc/passwd", "./summary.csv", "losses//L0001.cht"] {
        cases.push((
            format!("files lists {name:?}"),
            Damage::ManifestFileName(name),
            "not a plain relative name",
            "not a plain relative name",
        ));
    }
    cases.push(("format and format_version swapped".into(), Damage::ManifestFieldsSwapped, "fields out of order", ""));
    cases.push(("a level check counting more losses than positions".into(), Damage::ManifestCheck, "checks: level 7", "checks: level 7"));
    let disagrees = "histogram of winning moves disagrees with its counts";
    cases.push(("a histogram of winning moves that disagrees with its level".into(), Damage::ManifestMoves, disagrees, disagrees));
    let cases: Vec<_> = cases.into_iter().enumerate().collect();
    par_map(&cases, |(i, (what, damage, py_needle, rust_needle))| {
        let copy = tmp.path().join(format!("case{i}"));
        copy_dir(&dir, &copy);
        damage.apply(&copy);
        if python {
            expect_refusal(&copy, "3 2 1", py_needle, what);
        }
        let o = chomp(&["query", "3 2 1", "--tables", copy.to_str().unwrap(), "--json"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && o.stdout.is_empty(), "{what}: chomp query answered {}", String::from_utf8_lossy(&o.stdout));
        assert!(stderr.trim().lines().count() == 1 && stderr.starts_with("error:"), "{what}: want one error line, got {stderr:?}");
        assert!(stderr.contains(rust_needle), "{what}: {stderr:?} does not mention {rust_needle:?}");
    });
}

/// One way of damaging a table directory.
enum Damage {
    /// Flip the lowest bit of one byte of a file.
    Flip(&'static str, usize),
    /// Drop a file's last byte.
    Truncate(&'static str),
    /// Set a table's version to 2 and fix its header checksum.
    TableVersion(&'static str),
    /// Replace a file's SHA-256 in the manifest (with a valid manifest checksum).
    ManifestSha(&'static str),
    /// Set the manifest's format_version to 2.
    ManifestVersion,
    /// Change a level's loss count, keeping the manifest's old checksum.
    ManifestEdited,
    /// Add a space to the manifest: the same values, not the canonical text.
    ManifestRespaced,
    /// CRLF line endings in the manifest (as a Windows copy may leave them).
    ManifestCrlf,
    /// List `summary.csv` under another name (`files` kept sorted, checksum recomputed).
    ManifestFileName(&'static str),
    /// Swap `format` and `format_version` (checksum recomputed in the new order).
    ManifestFieldsSwapped,
    /// Level 7's check counts more losses than positions (checksum recomputed).
    ManifestCheck,
    /// Level 7's histogram of winning moves counts one loss more (checksum recomputed).
    ManifestMoves,
}

impl Damage {
    fn apply(&self, dir: &Path) {
        let edit = |rel: &str, f: &dyn Fn(&mut Vec<u8>)| {
            let path = dir.join(rel);
            let mut bytes = fs::read(&path).unwrap();
            f(&mut bytes);
            fs::write(&path, bytes).unwrap();
        };
        // Rewrites the manifest in canonical form (FORMAT.md), with its checksum updated or not.
        let edit_manifest = |f: &dyn Fn(&mut Value), update_checksum: bool| {
            let path = dir.join("manifest.json");
            let mut m: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            f(&mut m);
            if update_checksum {
                m["checksum"] = Value::String(String::new());
                let digest = Sha256::digest(canonical(&m).as_bytes());
                m["checksum"] = Value::String(digest.iter().map(|b| format!("{b:02x}")).collect());
            }
            fs::write(&path, canonical(&m)).unwrap();
        };
        match *self {
            Damage::Flip(rel, offset) => edit(rel, &|b| b[offset] ^= 0x01),
            Damage::Truncate(rel) => edit(rel, &|b| {
                b.pop();
            }),
            Damage::TableVersion(rel) => edit(rel, &|b| {
                b[8..10].copy_from_slice(&4u16.to_le_bytes());
                let crc = crc32fast::hash(&b[..60]);
                b[60..64].copy_from_slice(&crc.to_le_bytes());
            }),
            Damage::ManifestSha(rel) => edit_manifest(&|m| m["files"][rel]["sha256"] = Value::String("0".repeat(64)), true),
            Damage::ManifestVersion => edit_manifest(&|m| m["format_version"] = Value::from(4), false),
            Damage::ManifestEdited => edit_manifest(&|m| m["levels"][5]["losses"] = Value::from(1), false),
            Damage::ManifestRespaced => edit("manifest.json", &|b| {
                let at = b.iter().position(|&c| c == b':').unwrap() + 1;
                b.insert(at, b' ');
            }),
            Damage::ManifestCrlf => edit("manifest.json", &|b| {
                *b = String::from_utf8(b.clone()).unwrap().replace('\n', "\r\n").into_bytes();
            }),
            Damage::ManifestFileName(name) => edit_manifest(
                &|m| {
                    let mut files: Vec<(String, Value)> = m["files"].as_object().unwrap().clone().into_iter().collect();
                    files.iter_mut().find(|(k, _)| k == "summary.csv").expect("summary.csv listed").0 = name.to_string();
                    files.sort_by(|a, b| a.0.cmp(&b.0));
                    m["files"] = Value::Object(files.into_iter().collect());
                },
                true,
            ),
            Damage::ManifestCheck => edit_manifest(&|m| m["checks"][6]["losses"] = Value::from(1000), true),
            Damage::ManifestMoves => edit_manifest(
                &|m| {
                    let h = &mut m["levels"][6]["winning_moves_histogram"][0];
                    *h = Value::from(h.as_u64().expect("level 7's histogram of winning moves") + 1);
                },
                true,
            ),
            Damage::ManifestFieldsSwapped => edit_manifest(
                &|m| {
                    let mut fields: Vec<(String, Value)> = m.as_object().unwrap().clone().into_iter().collect();
                    assert_eq!((fields[0].0.as_str(), fields[1].0.as_str()), ("format", "format_version"));
                    fields.swap(0, 1);
                    *m = Value::Object(fields.into_iter().collect());
                },
                true,
            ),
        }
    }
}

/// The canonical text of a manifest: pretty-printed, fields in order, final newline.
fn canonical(m: &Value) -> String {
    serde_json::to_string_pretty(m).unwrap() + "\n"
}

/// A version-1 table image built from FORMAT.md's header layout.
fn table_image(kind: u16, tiles: u32, block_size: u32, positions: u64, losses: u64, payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(64 + payload.len());
    h.extend_from_slice(b"CHOMPTBL");
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&kind.to_le_bytes());
    h.extend_from_slice(&tiles.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes()); // max_rows
    h.extend_from_slice(&0u32.to_le_bytes()); // max_cols
    h.extend_from_slice(&tiles.to_le_bytes()); // max_tiles
    h.extend_from_slice(&block_size.to_le_bytes());
    h.extend_from_slice(&positions.to_le_bytes());
    h.extend_from_slice(&losses.to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(h.len(), 64);
    h.extend_from_slice(payload);
    h
}

fn dump(path: &Path) -> Value {
    let out = python(&["dump", path.to_str().unwrap()]);
    assert!(out.status.success(), "--dump {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn decodes_every_roaring_container_kind() {
    if !python_available() {
        return;
    }
    let tmp = scratch();

    // Array and bitmap containers, as the roaring crate (the writer's) serializes them.
    let mut ranks: Vec<u32> = vec![0, 3, 65_535];
    ranks.extend((70_000..76_000).step_by(1)); // 6000 values in one container: a bitmap
    ranks.extend((140_000..200_000).step_by(17)); // an array near the limit of 4096
    ranks.push(299_999);
    let bitmap: roaring::RoaringBitmap = ranks.iter().copied().collect();
    let mut raw = Vec::new();
    bitmap.serialize_into(&mut raw).unwrap();
    let payload = zstd::bulk::compress(&raw, 3).unwrap();
    let path = tmp.path().join("arrays_and_bitmaps.cht");
    fs::write(&path, table_image(1, 40, 0, 300_000, ranks.len() as u64, &payload)).unwrap();
    let v = dump(&path);
    let got: Vec<u64> = v["loss_ranks"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert_eq!(got, ranks.iter().map(|&r| r as u64).collect::<Vec<_>>());

    // Run containers (cookie 12347), which other roaring writers produce: a
    // run container, an array and a bitmap, with four containers so that the
    // offset header is present.
    let mut raw = Vec::new();
    let size: u32 = 4;
    raw.extend_from_slice(&(12347u32 | ((size - 1) << 16)).to_le_bytes());
    raw.push(0b0101); // containers 0 and 2 are runs
    let runs0: [(u16, u16); 2] = [(10, 4), (100, 0)]; // 10..=14, 100
    let array1: [u16; 3] = [1, 2, 65_535];
    let runs2: [(u16, u16); 1] = [(0, 9999)]; // 0..=9999: more than 4096 values
    let bitmap3: Vec<u16> = (0..5000).map(|i| i * 13).collect();
    let cards = [6u16, 3, 10_000, 5000];
    for (key, card) in [0u16, 1, 2, 4].iter().zip(cards) {
        raw.extend_from_slice(&key.to_le_bytes());
        raw.extend_from_slice(&(card - 1).to_le_bytes());
    }
    let header_len = raw.len() as u32 + 4 * size;
    let sizes = [2 + 4 * runs0.len() as u32, 2 * array1.len() as u32, 2 + 4 * runs2.len() as u32, 8192];
    let mut offset = header_len;
    for s in sizes {
        raw.extend_from_slice(&offset.to_le_bytes());
        offset += s;
    }
    for runs in [&runs0[..]] {
        raw.extend_from_slice(&(runs.len() as u16).to_le_bytes());
        for (start, len_minus_one) in runs {
            raw.extend_from_slice(&start.to_le_bytes());
            raw.extend_from_slice(&len_minus_one.to_le_bytes());
        }
    }
    for v in array1 {
        raw.extend_from_slice(&v.to_le_bytes());
    }
    raw.extend_from_slice(&(runs2.len() as u16).to_le_bytes());
    for (start, len_minus_one) in runs2 {
        raw.extend_from_slice(&start.to_le_bytes());
        raw.extend_from_slice(&len_minus_one.to_le_bytes());
    }
    let mut words = [0u64; 1024];
    for v in &bitmap3 {
        words[*v as usize / 64] |= 1 << (v % 64);
    }
    for w in words {
        raw.extend_from_slice(&w.to_le_bytes());
    }
    assert_eq!(raw.len() as u32, offset);
    let mut want: Vec<u64> = vec![10, 11, 12, 13, 14, 100];
    want.extend(array1.iter().map(|&v| 65_536 + v as u64));
    want.extend((0..10_000).map(|v| 2 * 65_536 + v));
    want.extend(bitmap3.iter().map(|&v| 4 * 65_536 + v as u64));
    // The roaring crate reads the same bytes to the same set.
    let check: Vec<u64> = roaring::RoaringBitmap::deserialize_from(&raw[..]).unwrap().iter().map(u64::from).collect();
    assert_eq!(check, want);
    let payload = zstd::bulk::compress(&raw, 3).unwrap();
    let path = tmp.path().join("runs.cht");
    fs::write(&path, table_image(1, 40, 0, 5 * 65_536, want.len() as u64, &payload)).unwrap();
    let v = dump(&path);
    let got: Vec<u64> = v["loss_ranks"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert_eq!(got, want);

    // A Grundy table with several blocks of a block size other than the writer's.
    let values: Vec<u8> = (0..2500u32).map(|i| (i * 7 % 11) as u8).collect();
    let block = 1000usize;
    let frames: Vec<Vec<u8>> = values.chunks(block).map(|c| zstd::bulk::compress(c, 3).unwrap()).collect();
    let mut payload = Vec::new();
    let mut offset = 8 * (frames.len() as u64 + 1);
    payload.extend_from_slice(&offset.to_le_bytes());
    for f in &frames {
        offset += f.len() as u64;
        payload.extend_from_slice(&offset.to_le_bytes());
    }
    for f in &frames {
        payload.extend_from_slice(f);
    }
    let zeros = values.iter().filter(|&&g| g == 0).count() as u64;
    let path = tmp.path().join("grundy.cht");
    fs::write(&path, table_image(2, 40, block as u32, values.len() as u64, zeros, &payload)).unwrap();
    let v = dump(&path);
    let got: Vec<u8> = v["values"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect();
    assert_eq!(got, values);
}

#[test]
fn refuses_a_table_damaged_consistently() {
    if !python_available() {
        return;
    }
    let tmp = scratch();
    for n in [34, 27] {
        let dir = tmp.path().join(format!("t{n}"));
        let (lost, gained) = crate::damage::damaged_run(&dir, n);
        for pos in [&lost, &gained] {
            let out = python_query(&dir, pos);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && out.stdout.is_empty(), "level {n}, {pos}: answered");
            assert!(err.contains("damaged tables") && err.contains(&format!("L{n:04}.cht")), "level {n}, {pos}: {err}");
        }
    }
    // Pinned to the published manifest, the damaged copy is refused whole
    // (any position, e.g. a parent it would answer wrongly); the published
    // directory pinned to its own manifest answers.
    let published = tmp.path().join("published");
    chomp_solve(&published, &["--max-tiles", "36", "--grundy-max-tiles", "30", "--quiet"]);
    let pin = published.join("manifest.json");
    for (dir, pos) in [(tmp.path().join("t34"), "3 3 3 3 3 3 3 3 3 3 3 3 1 1"), (tmp.path().join("t27"), "5 4 3 2 1")] {
        let out = python(&["query", pos, "--tables", dir.to_str().unwrap(), "--against", pin.to_str().unwrap(), "--json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && out.stdout.is_empty() && err.trim().lines().count() == 1, "{err}");
        assert!(err.contains("not the published tables"), "{err}");
    }
    let out = python(&["query", "5 4 3 2 1", "--tables", published.to_str().unwrap(), "--against", pin.to_str().unwrap(), "--json"]);
    let want = chomp(&["query", "5 4 3 2 1", "--tables", published.to_str().unwrap(), "--json"]);
    assert!(out.status.success() && out.stdout == want.stdout, "{}", String::from_utf8_lossy(&out.stderr));
}

/// Format 3 (FORMAT.md section 17): a flipped byte in the head, the index
/// page or the block of a table "3 2 1" reads, or a truncated table, is
/// refused by both readers, naming the file.
#[test]
fn refuses_damaged_blocked_tables() {
    let python = python_available();
    let tmp = scratch();
    let dir = tmp.path().join("t12");
    chomp_solve(&dir, &["--max-tiles", "12", "--grundy-max-tiles", "12", "--quiet"]);
    let manifest: Value = serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format_version"], 3);
    let mut cases: Vec<(String, Damage, &str)> = Vec::new();
    for rel in ["losses/L0006.cht", "grundy/G0006.cht", "losses/L0005.cht"] {
        let len = fs::metadata(dir.join(rel)).unwrap().len() as usize;
        let head = manifest["files"][rel]["head_bytes"].as_u64().unwrap() as usize;
        // Header fields, the page digest, the block entry (offset, length, count,
        // digest), the block's first, middle and last bytes.
        let offsets = [
            0,
            8,
            10,
            12,
            16,
            28,
            32,
            40,
            48,
            56,
            60,
            64,
            68,
            72,
            80,
            84,
            88,
            head,
            head + 8,
            head + 12,
            head + 16,
            head + 32,
            (head + 32 + len) / 2,
            len - 1,
        ];
        for offset in offsets {
            cases.push((format!("{rel} with byte {offset} flipped"), Damage::Flip(rel, offset), rel));
        }
        cases.push((format!("{rel} truncated"), Damage::Truncate(rel), rel));
    }
    let cases: Vec<(usize, (String, Damage, &str))> = cases.into_iter().enumerate().collect();
    par_map(&cases, |(i, (what, damage, needle))| {
        let copy = tmp.path().join(format!("case{i}"));
        copy_dir(&dir, &copy);
        damage.apply(&copy);
        if python {
            expect_refusal(&copy, "3 2 1", needle, what);
        }
        let o = chomp(&["query", "3 2 1", "--tables", copy.to_str().unwrap(), "--json"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && o.stdout.is_empty(), "{what}: chomp query answered");
        assert!(stderr.trim().lines().count() == 1 && stderr.contains(needle), "{what}: {stderr:?}");
    });
}

/// Few-row directories (FORMAT.md section 18): the package's answers, in
/// batch, equal `chomp query --json` and brute force in both orientations,
/// for the current layout and the older one; a damaged block is refused.
#[test]
fn the_package_reads_few_row_directories() {
    assert!(python_available());
    let dir = scratch();
    let mut brute = crate::common::Brute::default();
    for (rows, cols) in [(4u32, 9u32), (9, 4), (3, 7)] {
        let few = dir.path().join(format!("few-{rows}x{cols}"));
        let out = crate::common::chomp(&[
            "solve",
            "--engine",
            "few-row",
            "--rows",
            &rows.to_string(),
            "--cols",
            &cols.to_string(),
            "--out",
            few.to_str().unwrap(),
            "-q",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The older layout: the engine's table written as the solver's checkpoint file.
        let old = dir.path().join(format!("old-{rows}x{cols}"));
        fs::create_dir_all(&old).unwrap();
        let shape = chomp_tables::fewrow::FewRowBox::new(rows, cols).unwrap();
        let t = chomp_tables::fewrow::solve(shape, &Default::default(), &Default::default()).unwrap();
        t.save(&old.join("fewrow.prefixes")).unwrap();
        let mut all: Vec<Vec<u32>> = (1..=rows * cols)
            .flat_map(|n| crate::common::partitions(n, rows, cols).into_iter().chain(crate::common::partitions(n, cols, rows)))
            .collect();
        all.sort();
        all.dedup();
        let list = dir.path().join(format!("positions-{rows}x{cols}.txt"));
        fs::write(&list, all.iter().map(|p| rows_text(p) + "\n").collect::<String>()).unwrap();
        for d in [&few, &old] {
            let out = python(&["batch", list.to_str().unwrap(), "--tables", d.to_str().unwrap()]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let lines: Vec<serde_json::Value> =
                String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            assert_eq!(lines.len(), all.len());
            for (p, got) in all.iter().zip(&lines) {
                assert_eq!(got["outcome"], if brute.is_loss(p) { "loss" } else { "win" }, "{p:?} in {}", d.display());
                assert_eq!(got["winning_moves"], serde_json::json!(brute.winning_moves(p)), "{p:?}");
            }
            // The same JSON as chomp query, for a few positions.
            for p in all.iter().step_by(11) {
                let cli = crate::common::chomp(&["query", &rows_text(p), "--tables", d.to_str().unwrap(), "--json"]);
                let want: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
                let got: serde_json::Value = serde_json::from_slice(&python_query(d, &rows_text(p)).stdout).unwrap();
                assert_eq!(got, want, "{p:?}");
            }
        }
        // A flipped byte in a block: refused with one line naming it.
        let table = few.join("fewrow.table");
        let mut bytes = fs::read(&table).unwrap();
        bytes[4096 + 10] ^= 1;
        fs::write(&table, bytes).unwrap();
        let out = python_query(&few, "1 1");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success() && err.lines().count() == 1 && err.contains("damaged block 0"), "{err}");
    }
}
