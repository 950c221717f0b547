//! `chomp export`: the flat CSV and JSON exports of a table directory
//! (FORMAT.md section 14) against the manifest, the probe and `chomp query`;
//! the cap, atomic `--out`, a closed pipe and bad input.

use crate::common::{assert_ok, assert_one_line_error, chomp, chomp_solve, files, text, Brute};
use chomp_tables::{Outcome, Position, Tables};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// One entry of an export: tiles, rank, rows, and (positions only) outcome and Grundy value.
#[derive(Debug, PartialEq)]
struct Entry {
    tiles: u32,
    rank: u64,
    rows: Vec<u32>,
    outcome: Option<String>,
    grundy: Option<u8>,
}

fn export(dir: &Path, format: &str, what: &str) -> String {
    let out = chomp(&["export", "--tables", dir.to_str().unwrap(), "--format", format, "--what", what]);
    assert_ok(&out, &format!("chomp export --format {format} --what {what}"));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn parse_csv(csv: &str, what: &str) -> Vec<Entry> {
    let mut lines = csv.lines();
    let header = if what == "losses" { "tiles,rank,position" } else { "tiles,rank,position,outcome,grundy" };
    assert_eq!(lines.next(), Some(header));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), header.split(',').count(), "{l}");
            Entry {
                tiles: f[0].parse().unwrap(),
                rank: f[1].parse().unwrap(),
                rows: f[2].split(' ').map(|r| r.parse().unwrap()).collect(),
                outcome: f.get(3).map(|s| s.to_string()),
                grundy: f.get(4).and_then(|s| if s.is_empty() { None } else { Some(s.parse().unwrap()) }),
            }
        })
        .collect()
}

/// Parses a JSON export, checks its header fields, returns its entries.
fn parse_json(json: &str, what: &str, dir: &Path) -> Vec<Entry> {
    let v: Value = serde_json::from_str(json).unwrap();
    let m: Value = serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["format", "export_version", "what", "universe", "levels_complete", "grundy_max_tiles", "count", "entries"]);
    assert_eq!(v["format"], "chomp-tables-export");
    assert_eq!(v["export_version"], 1);
    assert_eq!(v["what"], what);
    assert_eq!(v["universe"], m["universe"]);
    assert_eq!(v["levels_complete"], m["levels_complete"]);
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(v["count"].as_u64().unwrap(), entries.len() as u64);
    entries
        .iter()
        .map(|e| {
            let keys: Vec<&str> = e.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            let want: &[&str] =
                if what == "losses" { &["tiles", "rank", "position"] } else { &["tiles", "rank", "position", "outcome", "grundy"] };
            assert_eq!(keys, want);
            Entry {
                tiles: e["tiles"].as_u64().unwrap() as u32,
                rank: e["rank"].as_u64().unwrap(),
                rows: e["position"].as_array().unwrap().iter().map(|r| r.as_u64().unwrap() as u32).collect(),
                outcome: e.get("outcome").map(|o| o.as_str().unwrap().to_string()),
                grundy: e.get("grundy").and_then(|g| g.as_u64()).map(|g| g as u8),
            }
        })
        .collect()
}

/// Entries in order (level, then rank), ranks and rows consistent with the ranking.
fn check_order_and_ranks(entries: &[Entry], tables: &Tables) {
    for w in entries.windows(2) {
        assert!((w[0].tiles, w[0].rank) < (w[1].tiles, w[1].rank), "order: {:?} then {:?}", w[0], w[1]);
    }
    for e in entries {
        let p = Position::new(&e.rows).unwrap();
        assert_eq!(p.tiles(), e.tiles);
        assert_eq!(tables.ranking().rank(&p), Some(e.rank), "{:?}", e.rows);
    }
}

fn per_level(entries: &[Entry], pred: impl Fn(&Entry) -> bool) -> BTreeMap<u32, u64> {
    let mut m = BTreeMap::new();
    for e in entries.iter().filter(|e| pred(e)) {
        *m.entry(e.tiles).or_insert(0) += 1;
    }
    m
}

/// Losses per level from the manifest (levels without losses left out).
fn manifest_losses(tables: &Tables) -> BTreeMap<u32, u64> {
    tables.manifest().levels.iter().filter(|l| l.losses > 0).map(|l| (l.tiles, l.losses)).collect()
}

#[test]
fn losses_match_the_summary_and_chomp_query() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t24");
    chomp_solve(&dir, &["--max-tiles", "24", "--grundy-max-tiles", "10", "--quiet"]);
    let tables = Tables::open(&dir).unwrap();
    let csv = parse_csv(&export(&dir, "csv", "losses"), "losses");
    let json = parse_json(&export(&dir, "json", "losses"), "losses", &dir);
    assert_eq!(csv, json, "CSV and JSON list the same losses");
    check_order_and_ranks(&csv, &tables);
    assert_eq!(per_level(&csv, |_| true), manifest_losses(&tables));
    // summary.csv says the same.
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let from_summary: BTreeMap<u32, u64> = summary
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[2] != "0")
        .map(|f| (f[0].parse().unwrap(), f[2].parse().unwrap()))
        .collect();
    assert_eq!(per_level(&csv, |_| true), from_summary);
    // Every loss is one by the definition, and `chomp query` says so for a sample.
    let mut brute = Brute::default();
    for e in &csv {
        assert!(brute.is_loss(&e.rows), "{:?} exported as a loss", e.rows);
    }
    for e in csv.iter().step_by(7) {
        let text_rows: Vec<String> = e.rows.iter().map(|r| r.to_string()).collect();
        let out = chomp(&["query", &text_rows.join(" "), "--tables", dir.to_str().unwrap(), "--json"]);
        assert_ok(&out, "chomp query");
        let a: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(a["outcome"], "loss", "{:?}", e.rows);
    }
}

#[test]
fn positions_with_outcomes_and_grundy_values() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t16");
    // Grundy values for levels 1..=12 only: levels 13..=16 export an empty value / null.
    chomp_solve(&dir, &["--max-tiles", "16", "--grundy-max-tiles", "12", "--quiet"]);
    let tables = Tables::open(&dir).unwrap();
    let csv = parse_csv(&export(&dir, "csv", "positions"), "positions");
    let json = parse_json(&export(&dir, "json", "positions"), "positions", &dir);
    assert_eq!(csv, json);
    check_order_and_ranks(&csv, &tables);
    let sizes: BTreeMap<u32, u64> = tables.manifest().levels.iter().map(|l| (l.tiles, l.positions)).collect();
    assert_eq!(per_level(&csv, |_| true), sizes, "every position of every level");
    assert_eq!(per_level(&csv, |e| e.outcome.as_deref() == Some("loss")), manifest_losses(&tables));
    for e in &csv {
        let p = Position::new(&e.rows).unwrap();
        let outcome = tables.outcome(&p).unwrap();
        assert_eq!(e.outcome.as_deref(), Some(outcome.as_str()), "{:?}", e.rows);
        assert_eq!(e.grundy, tables.grundy(&p).unwrap(), "{:?}", e.rows);
        assert_eq!(e.grundy.is_some(), e.tiles <= 12, "{:?}", e.rows);
        if let Some(g) = e.grundy {
            assert_eq!(g == 0, outcome == Outcome::Loss);
        }
    }
    // `chomp query` agrees on a sample.
    for e in csv.iter().step_by(61) {
        let text_rows: Vec<String> = e.rows.iter().map(|r| r.to_string()).collect();
        let out = chomp(&["query", &text_rows.join(","), "--tables", dir.to_str().unwrap(), "--json"]);
        let a: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(a["outcome"].as_str(), e.outcome.as_deref());
        assert_eq!(a["grundy"].as_u64().map(|g| g as u8), e.grundy);
    }
}

#[test]
fn published_box_exports_every_position() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join("box-8x15");
    let tables = Tables::open(&dir).unwrap();
    let csv = export(&dir, "csv", "positions");
    let total: u64 = tables.manifest().levels.iter().map(|l| l.positions).sum();
    assert_eq!(csv.lines().count() as u64, total + 1);
    let losses: u64 = tables.manifest().levels.iter().map(|l| l.losses).sum();
    assert_eq!(csv.lines().filter(|l| l.contains(",loss,")).count() as u64, losses);
    assert_eq!(csv.lines().last(), Some("120,0,15 15 15 15 15 15 15 15,win,76"));
}

#[test]
fn out_file_is_written_atomically() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t12");
    chomp_solve(&dir, &["--max-tiles", "12", "--grundy-max-tiles", "12", "--quiet"]);
    let out_dir = tmp.path().join("exports");
    fs::create_dir(&out_dir).unwrap();
    let file = out_dir.join("all.json");
    fs::write(&file, "old contents").unwrap();
    let o =
        chomp(&["export", "--tables", dir.to_str().unwrap(), "--format", "json", "--what", "positions", "--out", file.to_str().unwrap()]);
    assert_ok(&o, "export --out");
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    assert_eq!(fs::read_to_string(&file).unwrap(), export(&dir, "json", "positions"));
    assert_eq!(files(&out_dir).into_iter().collect::<Vec<_>>(), ["all.json"]);

    // Refused by the cap: one line, the old file untouched, nothing else written.
    let o = chomp(&[
        "export",
        "--tables",
        dir.to_str().unwrap(),
        "--format",
        "csv",
        "--what",
        "positions",
        "--max-entries",
        "10",
        "--out",
        file.to_str().unwrap(),
    ]);
    let line = assert_one_line_error(&o, "export over the cap");
    assert!(line.contains("more than the cap of 10") && line.contains("--max-entries") && line.contains("--what losses"), "{line}");
    assert_eq!(fs::read_to_string(&file).unwrap(), export(&dir, "json", "positions"));
    assert_eq!(files(&out_dir).len(), 1);
    // The same on standard output: nothing printed.
    let o = chomp(&["export", "--tables", dir.to_str().unwrap(), "--format", "csv", "--what", "positions", "--max-entries", "10"]);
    assert_one_line_error(&o, "export over the cap");
    assert!(o.stdout.is_empty());
    // Raising the cap lets it through.
    let o = chomp(&["export", "--tables", dir.to_str().unwrap(), "--format", "csv", "--what", "losses", "--max-entries", "100"]);
    assert_ok(&o, "export under the cap");
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("none");
    let line = assert_one_line_error(&chomp(&["export", "--tables", missing.to_str().unwrap(), "--format", "csv"]), "missing directory");
    assert!(line.contains("no manifest.json"), "{line}");
    // Usage errors: clap's message, exit status 2.
    for args in [
        &["export", "--tables", ".", "--format", "xml"][..],
        &["export", "--tables", ".", "--format", "csv", "--what", "wins"],
        &["export", "--tables", "."],
        &["export", "--tables", ".", "--format", "csv", "--max-entries", "-1"],
    ] {
        let o = chomp(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty());
    }
    // A directory into which --out cannot write.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join("box-8x15");
    let o = chomp(&["export", "--tables", dir.to_str().unwrap(), "--format", "csv", "--out", missing.join("x.csv").to_str().unwrap()]);
    assert_one_line_error(&o, "unwritable --out");
}

/// `chomp export ... | head`: the reader closes the pipe early; chomp stops
/// quietly (no panic, no message) and exits with status 0.
#[test]
fn a_closed_pipe_ends_the_export_quietly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join("box-8x15");
    let mut child = Command::new(env!("CARGO_BIN_EXE_chomp"))
        .args(["export", "--tables", dir.to_str().unwrap(), "--format", "json", "--what", "positions"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4096];
    stdout.read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"{\"format\":\"chomp-tables-export\""));
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}: {}", out.status, text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// `chomp plot | head`, `chomp summary | head`: every command that prints
/// ends quietly with status 0 when its reader has gone (no panic message).
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let tables = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join("box-8x15");
    let out = tempfile::tempdir().unwrap();
    for cmd in ["plot", "summary"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chomp"))
            .args([cmd, "--tables", tables.to_str().unwrap(), "--out", out.path().join(cmd).to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first line
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "chomp {cmd}: exit {:?}: {}", o.status, text(&o.stderr));
        assert!(o.stderr.is_empty(), "chomp {cmd}: {}", text(&o.stderr));
    }
}
