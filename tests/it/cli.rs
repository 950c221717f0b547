//! The `chomp` binary driven as a user would: solve, run, query, verify, and
//! how it refuses bad input (exit code, a single `error:` line, no partial
//! or stray files).

use crate::common::{assert_ok, assert_one_line_error, chomp, chomp_in, chomp_solve, files, snapshot, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn assert_no_tmp_files(dir: &Path) {
    let stray: Vec<String> = files(dir).into_iter().filter(|f| f.ends_with(".tmp")).collect();
    assert!(stray.is_empty(), "temporary files left in {}: {stray:?}", dir.display());
}

/// Every file of a table directory is listed in its manifest, and the other way round.
fn assert_files_match_manifest(dir: &Path) {
    let manifest = read_json(&dir.join("manifest.json"));
    let listed: BTreeSet<String> = manifest["files"].as_object().unwrap().keys().cloned().collect();
    let mut present = files(dir);
    assert!(present.remove("manifest.json"));
    assert_eq!(present, listed, "{}: files on disk vs manifest.json", dir.display());
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// A temporary directory holding `t20`: `solve --max-tiles 20 --grundy-max-tiles 12`.
fn solved_t20() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t20");
    chomp_solve(&out, &["--max-tiles", "20", "--grundy-max-tiles", "12"]);
    (tmp, out)
}

fn query_json(dir: &Path, position: &str) -> Value {
    let o = chomp(&["query", position, "--tables", dir.to_str().unwrap(), "--json"]);
    assert_ok(&o, position);
    serde_json::from_str(&text(&o.stdout)).unwrap_or_else(|e| panic!("query {position}: {e}: {}", text(&o.stdout)))
}

#[test]
fn solve_writes_the_documented_files() {
    let (_tmp, dir) = solved_t20();
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    assert!(lines.next().unwrap().starts_with("tiles,positions,losses,loss_percent,conjecture_ratio"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 20);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], (i + 1).to_string());
    }
    // docs/math.md, sections 1 and 2: p(20) = 627 positions and 42 losses at 20 tiles.
    assert_eq!(&rows[19][..3], &["20", "627", "42"]);

    let json = read_json(&dir.join("summary.json"));
    assert_eq!(json.as_array().unwrap().len(), 20);
    assert_eq!(json[19]["losses"], 42);

    let manifest = read_json(&dir.join("manifest.json"));
    assert_eq!(manifest["levels_complete"], 20);
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["grundy_max_tiles"], 12);
    for n in 1..=20 {
        assert!(dir.join(format!("losses/L{n:04}.cht")).is_file(), "L{n:04}.cht");
    }
    assert!(!dir.join("losses/L0021.cht").exists());
    assert_files_match_manifest(&dir);
    assert_no_tmp_files(&dir);
}

#[test]
fn query_answers() {
    let (_tmp, dir) = solved_t20();
    let v = query_json(&dir, "3 2 1");
    assert_eq!(v["outcome"], "win");
    assert_eq!(v["tiles"], 6);
    assert_eq!(v["position"], serde_json::json!([3, 2, 1]));
    assert_eq!(v["winning_moves"], serde_json::json!([[0, 2], [1, 1], [2, 0]]));
    let g = v["grundy"].as_u64().expect("Grundy value at 6 tiles");
    assert_ne!(g, 0);
    assert_eq!(v["grundy_normal"].as_u64(), Some(g + 1), "normal-play value is g + 1");
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 5, "n - 1 moves");
    let losing: BTreeSet<String> = moves.iter().filter(|m| m["outcome"] == "loss").map(|m| m["move"].to_string()).collect();
    let winning: BTreeSet<String> = v["winning_moves"].as_array().unwrap().iter().map(|m| m.to_string()).collect();
    assert_eq!(losing, winning);
    // Best first: moves to a loss, then larger remaining positions, then row-major cells.
    let key = |m: &Value| {
        let size: u64 = m["position"].as_array().unwrap().iter().map(|r| r.as_u64().unwrap()).sum();
        let cell: Vec<u64> = m["move"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        (m["outcome"] != "loss", std::cmp::Reverse(size), cell)
    };
    assert!(moves.windows(2).all(|w| key(&w[0]) < key(&w[1])), "move order: {moves:?}");

    for loss in ["3 2", "3,1,1", "2 2 1"] {
        let v = query_json(&dir, loss);
        assert_eq!(v["outcome"], "loss", "{loss}");
        assert_eq!(v["winning_moves"], serde_json::json!([]), "{loss}");
        assert_eq!(v["grundy"], 0, "{loss}");
        assert_eq!(v["tiles"], 5);
    }

    // Above the Grundy levels: an outcome but no value.
    let v = query_json(&dir, "5 4 3 2 1");
    assert_eq!(v["tiles"], 15);
    assert!(v["grundy"].is_null() && v["grundy_normal"].is_null(), "{v}");
    assert!(v["outcome"] == "win" || v["outcome"] == "loss");

    // The text form.
    let o = chomp(&["query", "3 2 1", "--tables", dir.to_str().unwrap()]);
    assert_ok(&o, "text query");
    let out = text(&o.stdout);
    assert!(out.contains("win") && out.contains("(1,1)"), "{out}");
}

#[test]
fn verify_accepts_a_fresh_directory() {
    let (_tmp, dir) = solved_t20();
    let before = snapshot(&dir);
    let o = chomp(&["verify", "--tables", dir.to_str().unwrap()]);
    assert_ok(&o, "verify");
    assert_eq!(snapshot(&dir), before, "verify must not write");
}

#[test]
fn bad_positions_are_refused() {
    let (_tmp, dir) = solved_t20();
    let before = snapshot(&dir);
    let twenty_one_rows = vec!["1"; 21].join(" ");
    for position in ["3 5", "0", "a b", "", "2 0", "1.5", "256", "21", "11 10", twenty_one_rows.as_str()] {
        let o = chomp(&["query", position, "--tables", dir.to_str().unwrap(), "--json"]);
        assert_one_line_error(&o, &format!("query {position:?}"));
        assert!(o.stdout.is_empty(), "query {position:?}: nothing on stdout");
    }
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn missing_tables_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere");
    assert_one_line_error(&chomp(&["query", "3 2 1", "--tables", missing.to_str().unwrap()]), "query");
    assert_one_line_error(&chomp(&["verify", "--tables", missing.to_str().unwrap()]), "verify");
    assert!(!missing.exists());
    // An existing directory that is not a table directory.
    let o = chomp(&["query", "3 2 1", "--tables", tmp.path().to_str().unwrap()]);
    assert_one_line_error(&o, "query in an empty directory");
    assert!(files(tmp.path()).is_empty());
}

#[test]
fn foreign_output_directory_is_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("notes.txt"), "precious").unwrap();
    fs::write(dir.join("sub/data.bin"), [1u8, 2, 3]).unwrap();
    let before = snapshot(&dir);
    let o = chomp(&["solve", "--max-tiles", "12", "--out", dir.to_str().unwrap()]);
    assert_one_line_error(&o, "solve into a foreign directory");
    assert_eq!(snapshot(&dir), before);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "nothing added");
}

#[test]
fn another_jobs_directory_needs_force() {
    let (_tmp, dir) = solved_t20();
    let d = dir.to_str().unwrap();
    let before = snapshot(&dir);
    let o = chomp(&["solve", "--max-tiles", "15", "--out", d]);
    let line = assert_one_line_error(&o, "solve over another job");
    assert!(line.contains("--force"), "{line}");
    assert_eq!(snapshot(&dir), before, "refused run must not touch the directory");
    let o = chomp(&["solve", "--max-tiles", "20", "--grundy-max-tiles", "10", "--out", d]);
    assert_one_line_error(&o, "solve with other Grundy levels");
    assert_eq!(snapshot(&dir), before);

    let o = chomp(&["solve", "--max-tiles", "15", "--out", d, "--force"]);
    assert_ok(&o, "solve --force");
    let manifest = read_json(&dir.join("manifest.json"));
    assert_eq!(manifest["levels_complete"], 15);
    assert_eq!(manifest["universe"]["tiles"], 15);
    assert_eq!(manifest["grundy_max_tiles"], 0);
    assert!(!dir.join("losses/L0016.cht").exists(), "tables of the old job removed");
    assert!(!dir.join("grundy/G0001.cht").exists(), "Grundy tables of the old job removed");
    assert!(!dir.join("grundy_histogram.csv").exists());
    assert_files_match_manifest(&dir);
    assert_no_tmp_files(&dir);
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after --force");
    let v = query_json(&dir, "3 2 1");
    assert!(v["grundy"].is_null());
    assert_one_line_error(&chomp(&["query", "4 4 4 4", "--tables", d]), "16 tiles after the rerun");
}

#[test]
fn invalid_jobs_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let job = tmp.path().join("job.toml");
    let o_str = out.to_str().unwrap().replace('\\', "/");

    fs::write(&job, format!("name = \"t\"\nout = \"{o_str}\"\nmax_tile = 20\n")).unwrap();
    let line = assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "unknown field");
    assert!(line.contains("max_tile"), "the error names the field: {line}");

    fs::write(&job, format!("name = \"t\"\nout = \"{o_str}\"\nmax_tiles = 20\ngrundy_max_tiles = 25\n")).unwrap();
    let line = assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "grundy beyond max_tiles");
    assert!(line.contains("grundy_max_tiles"), "{line}");

    fs::write(&job, format!("name = \"t\"\nout = \"{o_str}\"\nmax_tiles = \"twenty\"\n")).unwrap();
    assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "wrong type");

    fs::write(&job, format!("name = \"t\"\nout = \"{o_str}\"\nrows = 3\n")).unwrap();
    assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "infinite universe");

    let o = chomp(&["solve", "--max-tiles", "20", "--grundy-max-tiles", "25", "--out", out.to_str().unwrap()]);
    let line = assert_one_line_error(&o, "solve with grundy beyond max-tiles");
    assert!(line.contains("grundy_max_tiles") || line.contains("grundy-max-tiles"), "{line}");

    assert_one_line_error(&chomp(&["run", tmp.path().join("absent.toml").to_str().unwrap()]), "missing job file");
    assert!(!out.exists(), "no output directory for a refused job");
    assert_eq!(files(tmp.path()), BTreeSet::from(["job.toml".to_string()]));
}

#[test]
fn rerunning_a_complete_job_is_a_no_op() {
    let (_tmp, dir) = solved_t20();
    let before = snapshot(&dir);
    let o = chomp(&["solve", "--max-tiles", "20", "--grundy-max-tiles", "12", "--out", dir.to_str().unwrap(), "--quiet"]);
    assert_ok(&o, "second solve");
    assert_eq!(snapshot(&dir), before, "files and modification times unchanged");
}

#[test]
fn corrupted_table_is_detected() {
    let (_tmp, dir) = solved_t20();
    let d = dir.to_str().unwrap();
    let file = dir.join("losses/L0010.cht");
    let good = fs::read(&file).unwrap();
    let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
    for offset in [0, 13, 33, 57, 62, 64, good.len() / 2 + 32, good.len() - 1] {
        let mut bytes = good.clone();
        bytes[offset] ^= 0x01;
        damaged.push((format!("byte {offset} flipped"), bytes));
    }
    damaged.push(("truncated".into(), good[..good.len() - 3].to_vec()));
    for (what, bytes) in damaged {
        fs::write(&file, &bytes).unwrap();
        let o = chomp(&["verify", "--tables", d]);
        assert!(!o.status.success(), "verify, {what}");
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(all.contains("L0010.cht"), "verify, {what}: names the file:\n{all}");

        let o = chomp(&["query", "4 3 2 1", "--tables", d]);
        let line = assert_one_line_error(&o, &format!("query at 10 tiles, {what}"));
        assert!(line.contains("L0010"), "{what}: {line}");
        let o = chomp(&["query", "4 3 2 1 1", "--tables", d, "--json"]);
        assert_one_line_error(&o, &format!("query at 11 tiles reads level 10 for its moves, {what}"));
    }
    fs::write(&file, &good).unwrap();
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after repair");
    assert_no_tmp_files(&dir);
}

#[test]
fn damaged_directories() {
    let (_tmp, dir) = solved_t20();
    let d = dir.to_str().unwrap();
    // A table listed in the manifest is missing.
    let l5 = dir.join("losses/L0005.cht");
    let saved = fs::read(&l5).unwrap();
    fs::remove_file(&l5).unwrap();
    let o = chomp(&["verify", "--tables", d]);
    assert!(!o.status.success());
    assert!(format!("{}{}", text(&o.stdout), text(&o.stderr)).contains("L0005.cht"));
    assert_one_line_error(&chomp(&["query", "3 2", "--tables", d]), "query at a missing level");
    fs::write(&l5, saved).unwrap();
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after restoring");

    // A damaged manifest.
    let manifest = dir.join("manifest.json");
    let saved = fs::read(&manifest).unwrap();
    fs::write(&manifest, &saved[..saved.len() / 2]).unwrap();
    assert_one_line_error(&chomp(&["verify", "--tables", d]), "verify with a damaged manifest");
    assert_one_line_error(&chomp(&["query", "3 2", "--tables", d]), "query with a damaged manifest");
    let before = snapshot(&dir);
    assert_one_line_error(&chomp(&["solve", "--max-tiles", "20", "--grundy-max-tiles", "12", "--out", d]), "solve over a damaged manifest");
    assert_eq!(snapshot(&dir), before);
    fs::write(&manifest, saved).unwrap();
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after restoring the manifest");

    // An output path that is a file.
    let file = dir.join("summary.csv");
    let before = fs::read(&file).unwrap();
    assert_one_line_error(&chomp(&["solve", "--max-tiles", "5", "--out", file.to_str().unwrap()]), "solve into a file");
    assert_eq!(fs::read(&file).unwrap(), before);
}

#[test]
fn solve_a_box_with_all_grundy_levels() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("box");
    let o = chomp(&["solve", "--rows", "2", "--cols", "5", "--grundy", "--out", dir.to_str().unwrap(), "--quiet"]);
    assert_ok(&o, "solve a box");
    let manifest = read_json(&dir.join("manifest.json"));
    assert_eq!(manifest["universe"], serde_json::json!({"rows": 2, "cols": 5, "tiles": null}));
    assert_eq!(manifest["grundy_max_tiles"], 10);
    assert_eq!(manifest["levels_complete"], 10);
    // docs/math.md, section 2: (a, a-1) is a loss, so a 2 x n rectangle is won by (1, n-1).
    let v = query_json(&dir, "5 5");
    assert_eq!(v["winning_moves"], serde_json::json!([[1, 4]]));
    assert!(v["grundy"].as_u64().unwrap() > 0);
    let v = query_json(&dir, "5 4");
    assert_eq!((v["outcome"].as_str(), v["grundy"].as_u64()), (Some("loss"), Some(0)));
    assert_one_line_error(&chomp(&["query", "3 2 1", "--tables", dir.to_str().unwrap()]), "three rows in a 2-row box");
    assert_ok(&chomp(&["verify", "--tables", dir.to_str().unwrap()]), "verify the box");
}

#[test]
fn unusable_bounds_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    for args in [
        vec!["solve", "--out", o],
        vec!["solve", "--rows", "3", "--out", o],
        vec!["solve", "--max-tiles", "0", "--out", o],
        vec!["solve", "--max-tiles", "2000", "--out", o],
        vec!["solve", "--rows", "0", "--cols", "4", "--out", o],
        vec!["solve", "--rows", "300", "--cols", "300", "--out", o],
        vec!["solve", "--rows", "2", "--max-tiles", "300", "--out", o],
        vec!["solve", "--cols", "2", "--max-tiles", "256", "--out", o],
    ] {
        let line = assert_one_line_error(&chomp(&args), &args.join(" "));
        // No row or column beyond what a position holds, whichever bound is absent.
        if args.contains(&"--max-tiles") && args.contains(&"2") {
            assert!(line.contains("at most 255"), "{line}");
        }
        // The bounds a level may have, not the integer type's.
        assert!(!line.contains("4294967295"), "{line}");
        assert!(!out.exists(), "{}: no output directory", args.join(" "));
    }
}

#[test]
fn inconsistent_manifest_is_an_error_not_a_panic() {
    let (_tmp, dir) = solved_t20();
    let path = dir.join("manifest.json");
    let mut manifest = read_json(&path);
    manifest["levels"].as_array_mut().unwrap().truncate(5);
    fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let d = dir.to_str().unwrap();
    assert_one_line_error(&chomp(&["query", "4 3 2 1", "--tables", d]), "query with a manifest missing level statistics");
    assert_one_line_error(&chomp(&["solve", "--max-tiles", "20", "--grundy-max-tiles", "12", "--out", d]), "solve (resume) over it");
    assert!(!chomp(&["verify", "--tables", d]).status.success());
}

#[test]
fn run_a_job_file() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("box.toml");
    fs::write(&job, "name = \"box 3x4\"\nout = \"tables/box\"\nmax_tiles = 10\ngrundy_max_tiles = 8\nrows = 3\ncols = 4\n").unwrap();

    // A relative `out` is relative to the job file's folder (here also the working directory;
    // first_hour::job_files_resolve_out_and_name_their_errors runs one from elsewhere).
    let o = chomp_in(tmp.path(), &["run", "box.toml", "--quiet"]);
    assert_ok(&o, "run");
    let dir = tmp.path().join("tables/box");
    let manifest = read_json(&dir.join("manifest.json"));
    assert_eq!(manifest["universe"], serde_json::json!({"rows": 3, "cols": 4, "tiles": 10}));
    assert_eq!(manifest["grundy_max_tiles"], 8);
    assert_eq!(manifest["levels_complete"], 10);
    assert_eq!(manifest["complete"], true);
    assert_files_match_manifest(&dir);

    let v = query_json(&dir, "3 2 1");
    assert_eq!(v["outcome"], "win");
    assert_eq!(v["winning_moves"], serde_json::json!([[0, 2], [1, 1], [2, 0]]));
    assert!(v["grundy"].is_u64());
    assert_one_line_error(&chomp(&["query", "5", "--tables", dir.to_str().unwrap()]), "5 columns in a 3x4 box");
    // 4 rows do not fit a 3x4 box, but the transpose (one row of 4) does: same answer.
    let column = query_json(&dir, "1 1 1 1");
    assert_eq!(column["outcome"], query_json(&dir, "4")["outcome"], "4 rows in a 3x4 box, answered by the transpose");
    assert_eq!(column["position"], serde_json::json!([1, 1, 1, 1]));
    assert_one_line_error(&chomp(&["query", "1 1 1 1 1", "--tables", dir.to_str().unwrap()]), "5 rows in a 3x4 box");
    assert_one_line_error(&chomp(&["query", "4 4 3", "--tables", dir.to_str().unwrap()]), "11 tiles");
    assert_ok(&chomp(&["verify", "--tables", dir.to_str().unwrap()]), "verify the job's tables");

    // --out overrides the job's directory.
    let other = tmp.path().join("other");
    let o = chomp(&["run", job.to_str().unwrap(), "--out", other.to_str().unwrap()]);
    assert_ok(&o, "run --out");
    let m2 = read_json(&other.join("manifest.json"));
    assert_eq!(m2["universe"], manifest["universe"]);
    assert_eq!(m2["levels"], manifest["levels"]);
    assert_eq!(fs::read(other.join("summary.csv")).unwrap(), fs::read(dir.join("summary.csv")).unwrap());
    assert_no_tmp_files(tmp.path());
}

#[test]
fn summary_and_plot_merge_runs() {
    // A loss run and a Grundy run of fewer levels: merged level by level.
    let tmp = tempfile::tempdir().unwrap();
    let (losses, grundy, other) = (tmp.path().join("losses"), tmp.path().join("grundy"), tmp.path().join("other"));
    chomp_solve(&losses, &["--max-tiles", "24", "--quiet"]);
    chomp_solve(&grundy, &["--max-tiles", "16", "--grundy-max-tiles", "16", "--quiet"]);
    let out = tmp.path().join("merged");
    let (l, g, o) = (losses.to_str().unwrap(), grundy.to_str().unwrap(), out.to_str().unwrap());
    let o2 = chomp(&["summary", "--tables", l, "--tables", g, "--out", o]);
    assert_ok(&o2, "summary of two runs");
    // A run this short has no trend line, and says so.
    assert!(text(&o2.stdout).contains("no trend line (it is fitted from 90 tiles on"), "{}", text(&o2.stdout));
    let csv = fs::read_to_string(out.join("summary.csv")).unwrap();
    let want = fs::read_to_string(losses.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 25);
    for (got, base) in csv.lines().zip(want.lines()).skip(1) {
        let tiles: u32 = got.split(',').next().unwrap().parse().unwrap();
        // Same statistics; the largest Grundy value only where the Grundy run has it.
        assert!(got.starts_with(base.trim_end_matches(',')), "{got} vs {base}");
        assert_eq!(got.ends_with(','), tiles > 16, "{got}");
    }
    let hist = fs::read_to_string(out.join("grundy_histogram.csv")).unwrap();
    assert_eq!(hist, fs::read_to_string(grundy.join("grundy_histogram.csv")).unwrap());
    assert_ok(&chomp(&["plot", "--tables", l, "--tables", g, "--out", o]), "plot of two runs");
    assert!(out.join("conjecture-ratio.png").exists() && out.join("grundy-heatmap.svg").exists());
    // A summary of fewer levels does not replace a longer one unless forced,
    // and nothing is written when it is refused.
    let before = snapshot(&out);
    let line = assert_one_line_error(&chomp(&["summary", "--tables", g, "--out", o]), "shrinking summary");
    assert!(line.contains("summary.csv: holds 8 levels the runs read do not") && line.contains("--force"), "{line}");
    assert_eq!(snapshot(&out), before, "a refused summary writes nothing");
    assert_ok(&chomp(&["summary", "--tables", g, "--out", o, "--force"]), "forced summary");
    assert_eq!(fs::read_to_string(out.join("summary.csv")).unwrap(), fs::read_to_string(grundy.join("summary.csv")).unwrap());
    // Runs that disagree, or are not tile runs, are refused in one line.
    chomp_solve(&other, &["--rows", "4", "--cols", "6", "--quiet"]);
    let line = assert_one_line_error(&chomp(&["summary", "--tables", l, "--tables", other.to_str().unwrap(), "--out", o]), "box");
    assert!(line.contains("tile-count runs"), "{line}");
}

#[test]
fn every_level_is_checked_as_it_is_written_and_the_manifest_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let o = chomp(&["solve", "--max-tiles", "16", "--grundy-max-tiles", "10", "--out", out.to_str().unwrap()]);
    assert_ok(&o, "solve");
    let log = text(&o.stderr);
    // Level 16 has 231 positions: 64 of them checked, and its edge (its
    // first and last positions, 8 drawn among those with a full top row).
    assert!(log.lines().any(|l| l.starts_with("level  16/16") && l.contains("checked 74 (")), "{log}");
    let checks = read_json(&out.join("manifest.json"))["checks"].as_array().unwrap().clone();
    assert_eq!(checks.len(), 16);
    assert_eq!(checks[15]["tiles"], 16);
    assert_eq!(checks[15]["positions"], 74);
    assert_eq!(checks[9]["positions"], 42); // level 10 whole
                                            // Not checked: asked for none, or tables not in format 3; each run says so.
    for (flags, says) in [(&["--check-samples", "0"][..], "--check-samples 0"), (&["--table-format", "2"][..], "these are format 2")] {
        let out = tmp.path().join(flags[1]);
        let o = chomp(&[&["solve", "--max-tiles", "12", "--out", out.to_str().unwrap()][..], flags].concat());
        assert_ok(&o, "solve");
        assert!(text(&o.stderr).contains(says) && !text(&o.stderr).contains("  checked "), "{}", text(&o.stderr));
        assert!(read_json(&out.join("manifest.json")).get("checks").is_none());
    }
}

/// `--report-json` writes the end-of-run report: the run, every level and
/// every process's work, with the marks the levels report.
#[test]
fn report_json_lists_the_levels_and_the_process() {
    let tmp = TempDir::new().unwrap();
    let (out, report) = (tmp.path().join("t30"), tmp.path().join("report.json"));
    let o = chomp(&["solve", "--max-tiles", "30", "--out", out.to_str().unwrap(), "--quiet", "--report-json", report.to_str().unwrap()]);
    assert_ok(&o, "solve --report-json");
    let v = read_json(&report);
    assert_eq!(v["max_tiles"], 30);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 30);
    let processes = v["processes"].as_array().unwrap();
    assert_eq!(processes.len(), 1);
    let p = &processes[0];
    let marks: u64 = levels.iter().map(|l| l["marks"].as_u64().unwrap()).sum();
    assert_eq!(p["marks"].as_u64().unwrap(), marks);
    assert!(p["enumeration_steps"].as_u64().unwrap() >= marks);
    for key in ["compute_seconds", "compute_cpu_seconds", "wait_seconds", "cpu_seconds"] {
        assert!(p[key].as_f64().unwrap() >= 0.0, "{key}");
    }
    // The work's CPU time is part of the process's.
    assert!(p["compute_cpu_seconds"].as_f64().unwrap() <= p["cpu_seconds"].as_f64().unwrap() + 0.05);
    assert_no_tmp_files(tmp.path());
}

#[test]
fn tunables_are_checked_before_a_run() {
    let tmp = TempDir::new().unwrap();
    for (var, value) in
        [("CHOMP_EPOCH_BYTES", "lots"), ("CHOMP_EPOCH_BITES", "1000"), ("CHOMP_WORD_SIEVE", "off"), ("CHOMP_PROGRESS_SECONDS", "0")]
    {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chomp"))
            .args(["solve", "--max-tiles", "12", "--quiet", "--out"])
            .arg(tmp.path().join("t"))
            .env(var, value)
            .output()
            .unwrap();
        let line = assert_one_line_error(&out, var);
        assert!(line.contains(var), "{line}");
        assert!(!tmp.path().join("t").exists(), "{var}: the refused run wrote a directory");
    }
    // The interval of progress lines is no tunable, but a variable chomp knows.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chomp"))
        .args(["solve", "--max-tiles", "12", "--quiet", "--out"])
        .arg(tmp.path().join("p"))
        .env("CHOMP_PROGRESS_SECONDS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--count-moves` adds the two counts to the summary; `chomp oeis` turns
/// summaries into b-files, and refuses another universe's summary (one
/// line, nothing written) or to shrink a b-file.
#[test]
fn count_moves_summaries_become_oeis_bfiles() {
    let tmp = TempDir::new().unwrap();
    let (t20, t12, out) = (tmp.path().join("t20"), tmp.path().join("t12"), tmp.path().join("oeis"));
    for (dir, n) in [(&t20, "20"), (&t12, "12")] {
        let o = chomp(&["solve", "--max-tiles", n, "--grundy-max-tiles", "9", "--count-moves", "--quiet", "--out", dir.to_str().unwrap()]);
        assert_ok(&o, "solve --count-moves");
    }
    let summary = std::fs::read_to_string(t20.join("summary.csv")).unwrap();
    assert!(
        summary.starts_with("tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy,wins_one_move,wins_several_moves\n"),
        "{summary}"
    );
    // With Grundy values the levels also have the whole histogram of winning
    // moves: it adds up to each level's row of summary.csv, and `chomp summary` rewrites it.
    let histogram = std::fs::read_to_string(t20.join("winning_moves.csv")).unwrap();
    assert!(histogram.starts_with("tiles,winning_moves,positions\n"), "{histogram}");
    let mut by_level = std::collections::BTreeMap::<u64, [u64; 3]>::new();
    for line in histogram.lines().skip(1) {
        let [tiles, k, positions] = <[u64; 3]>::try_from(line.split(',').map(|c| c.parse().unwrap()).collect::<Vec<u64>>()).unwrap();
        by_level.entry(tiles).or_default()[k.min(2) as usize] += positions;
    }
    assert_eq!(by_level.keys().copied().collect::<Vec<_>>(), (1..=9).collect::<Vec<_>>(), "{histogram}");
    for line in summary.lines().skip(1).take(9) {
        let c: Vec<&str> = line.split(',').collect();
        let want = [c[2], c[6], c[7]].map(|x| x.parse::<u64>().unwrap());
        assert_eq!(by_level[&c[0].parse::<u64>().unwrap()], want, "level {}: losses, one winning move, several", c[0]);
    }
    let merged = tmp.path().join("merged");
    assert_ok(&chomp(&["summary", "--tables", t20.to_str().unwrap(), "--out", merged.to_str().unwrap()]), "chomp summary");
    assert_eq!(std::fs::read_to_string(merged.join("winning_moves.csv")).unwrap(), histogram);
    let o = chomp(&["oeis", "--summary", t20.join("summary.csv").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_ok(&o, "chomp oeis");
    let b = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    assert_eq!(b("b112470.txt").lines().count(), 21);
    assert!(b("b112470.txt").starts_with("0 0\n1 1\n2 0\n3 1\n"));
    assert_eq!(b("b112472.txt").lines().count(), 20);
    for (one, (several, wins)) in b("b112472.txt").lines().zip(b("b112473.txt").lines().zip(b("b112471.txt").lines())) {
        let a = |l: &str| l.split_once(' ').unwrap().1.parse::<u64>().unwrap();
        assert_eq!(a(one) + a(several), a(wins), "{one} + {several} = {wins}");
    }
    // A shorter summary would drop terms: refused, the files unchanged.
    let before = b("b112470.txt");
    let o = chomp(&["oeis", "--summary", t12.join("summary.csv").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let line = assert_one_line_error(&o, "a shrinking b-file");
    assert!(line.contains("refusing to shrink"), "{line}");
    assert_eq!(b("b112470.txt"), before);
    // A box's summary is not the tile-count universe.
    let boxed = tmp.path().join("box");
    assert_ok(&chomp(&["solve", "--rows", "4", "--cols", "5", "--quiet", "--out", boxed.to_str().unwrap()]), "a box");
    let elsewhere = tmp.path().join("elsewhere");
    let o = chomp(&["oeis", "--summary", boxed.join("summary.csv").to_str().unwrap(), "--out", elsewhere.to_str().unwrap()]);
    let line = assert_one_line_error(&o, "a box's summary");
    assert!(line.contains("not the tile-count universe"), "{line}");
    assert!(!elsewhere.exists(), "nothing written");
}

/// docs/cluster.md's cluster plan is what the dry runs print now
/// (`scripts/cluster-plan.sh --check` runs them with this build).
#[test]
fn the_cluster_plan_in_the_docs_is_the_dry_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/cluster-plan.sh"))
        .arg("--check")
        .env("BIN", crate::common::binary::BIN)
        .output()
        .expect("bash runs scripts/cluster-plan.sh");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("is the dry runs'"), "{text}");
}

/// A dry run priced for several processes: one plan, each process's
/// estimated peak in the JSON report, windows sized from the processes'
/// shares within --max-memory.
#[test]
fn a_dry_run_prices_each_of_several_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("plan.json");
    let out = chomp(&[
        "solve",
        "--max-tiles",
        "120",
        "--out",
        tmp.path().join("none").to_str().unwrap(),
        "--dry-run",
        "--processes",
        "4",
        "--threads",
        "8",
        "--max-memory",
        "1G",
        "--report-json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(text.matches("estimate for levels").count(), 1, "{text}");
    assert!(text.contains("peak memory of each of the 4 processes (8 threads each)"), "{text}");
    let plan: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let peaks: Vec<u64> = plan["processes"].as_array().unwrap().iter().map(|p| p["estimated_peak_kib"].as_u64().unwrap()).collect();
    assert_eq!(peaks.len(), 4);
    let (max, min) = (*peaks.iter().max().unwrap(), *peaks.iter().min().unwrap());
    assert!(max <= 1 << 20, "every process within --max-memory: {peaks:?} KiB");
    assert!(max as f64 <= 1.2 * min as f64, "balanced: {peaks:?} KiB");
    assert!(plan["windows"].as_array().unwrap().len() >= 2, "1 GiB a process cuts 120 tiles into windows: {plan}");
    assert!(!tmp.path().join("none").exists(), "a dry run writes no table directory");
}

/// A build without MPI started by an MPI launcher (PMI_SIZE, as MPICH's
/// mpiexec and Slurm set it) refuses in one line before doing anything,
/// instead of running K lone copies of the job into one directory.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_under_mpiexec_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    for var in ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE"] {
        let o = std::process::Command::new(crate::common::binary::BIN)
            .args(["solve", "--max-tiles", "10", "--out", out.to_str().unwrap()])
            .env(var, "3")
            .output()
            .unwrap();
        let line = crate::common::assert_one_line_error(&o, var);
        assert!(line.contains("built without MPI") && line.contains("3 processes"), "{line}");
        assert_eq!(o.status.code(), Some(2));
        assert!(!out.exists(), "nothing written");
    }
    // One process under a launcher is the build's own run.
    let o = std::process::Command::new(crate::common::binary::BIN)
        .args(["solve", "--max-tiles", "10", "--out", out.to_str().unwrap(), "--quiet"])
        .env("PMI_SIZE", "1")
        .output()
        .unwrap();
    crate::common::assert_ok(&o, "PMI_SIZE=1");
}
