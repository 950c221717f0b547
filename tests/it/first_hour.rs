//! The defects a new user hit in their first hour (issue 10), one test per
//! defect, each driving the real binary: usage errors, two runs on one
//! directory, verify on an unfinished run, Ctrl-C, job files, positions,
//! iChomp without Grundy values, and the solve limits, estimate and scratch
//! directory. (The Python reader's part is in `python_reader`.)

use crate::common::binary::BIN;
use crate::common::{assert_ok, assert_one_line_error, chomp, chomp_in, chomp_solve, text};
use chomp_tables::JobFile;
use serde_json::Value;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A `chomp solve` running in the background, its stderr going to a file;
/// killed when dropped (so that a failing test leaves no process behind).
struct Background {
    child: Child,
    log: PathBuf,
}

impl Background {
    /// Starts `chomp solve ARGS --out OUT`, logging stderr to `log`.
    fn solve(out: &Path, args: &[&str], log: &Path) -> Self {
        let child = Command::new(BIN)
            .arg("solve")
            .args(args)
            .arg("--out")
            .arg(out)
            .stdout(Stdio::null())
            .stderr(File::create(log).unwrap())
            .spawn()
            .expect("start chomp solve");
        Background { child, log: log.to_path_buf() }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stderr(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most `limit`) for the process to end.
    fn wait(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < limit, "chomp solve still running after {limit:?}; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `done` until it holds; fails after two minutes, saying what it waited for.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(120), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The completed levels of a table directory (0 while it has no manifest).
fn levels_complete(dir: &Path) -> u32 {
    fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|m| m["levels_complete"].as_u64())
        .map_or(0, |n| n as u32)
}

fn query_json(dir: &Path, position: &str) -> Value {
    let o = chomp(&["query", position, "--tables", dir.to_str().unwrap(), "--json"]);
    assert_ok(&o, position);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Defect 1: Usage errors print clap's whole message (the missing argument, the
/// suggestion) and exit 2; plain `chomp` prints the help.
#[test]
fn usage_errors_keep_clap_messages() {
    for (args, needle) in [(&["query", "3 2 1"][..], "--tables"), (&["solve", "--max-tiles", "10"], "--out"), (&["quer"], "query")] {
        let o = chomp(args);
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "chomp {args:?}: {stderr}");
        assert!(stderr.contains(needle), "chomp {args:?} does not name {needle}:\n{stderr}");
    }
    let stderr = text(&chomp(&["quer"]).stderr);
    assert!(stderr.contains("similar") || stderr.contains("tip"), "no suggestion:\n{stderr}");

    let o = chomp(&[]);
    assert_eq!(o.status.code(), Some(2));
    let help = text(&o.stderr);
    assert!(!help.starts_with("error:"), "plain chomp prints the help, not an error:\n{help}");
    assert!(help.contains("Usage:") && help.contains("Commands:"), "{help}");
    for command in ["solve", "run", "query", "ichomp", "verify"] {
        assert!(help.contains(command), "help lists {command}:\n{help}");
    }
}

/// A run the tests below stop or hold while it goes on: long enough (Grundy
/// values to 85 tiles: about 15 s in a debug build on 2 idle cores) that it
/// cannot end first on a fast machine (losses alone to 80 took 1.2 s, and a
/// check once found the run finished).
const SLOW_RUN: &[&str] = &["--max-tiles", "85", "--grundy-max-tiles", "85"];

/// Defect 2: A second run on a directory a running solve holds is refused at once,
/// naming the holder; a finished run leaves no lock file.
#[test]
fn second_run_on_a_held_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let d = dir.to_str().unwrap();
    let mut first = Background::solve(&dir, SLOW_RUN, &tmp.path().join("first.log"));
    wait_until("the first run's manifest", || dir.join("manifest.json").exists());
    let o = chomp(&[&["solve"], SLOW_RUN, &["--out", d, "--quiet"]].concat());
    assert_eq!(o.status.code(), Some(1), "second run: {}", text(&o.stderr));
    let line = assert_one_line_error(&o, "second run on a held directory");
    assert!(line.contains(&format!("in use by process {}", first.pid())), "{line}");
    assert!(first.child.try_wait().unwrap().is_none(), "the first run goes on");
    drop(first);

    let done = tmp.path().join("done");
    chomp_solve(&done, &["--max-tiles", "12", "--quiet"]);
    assert!(!done.join(".lock").exists(), "a finished run leaves no .lock");
}

/// Defect 3: verify refuses an unfinished run (unless --allow-incomplete) and a
/// level range that samples nothing.
#[test]
fn verify_refuses_an_incomplete_run_and_an_empty_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let d = dir.to_str().unwrap();
    let mut run = Background::solve(&dir, SLOW_RUN, &tmp.path().join("run.log"));
    wait_until("a few levels", || levels_complete(&dir) >= 5);
    let _ = run.child.kill();
    run.wait(Duration::from_secs(30));
    let done = levels_complete(&dir);
    assert!((5..85).contains(&done), "{done} levels");

    let o = chomp(&["verify", "--tables", d]);
    assert!(!o.status.success(), "verify accepts an unfinished run: {}", text(&o.stdout));
    let stderr = text(&o.stderr);
    assert!(stderr.contains("incomplete") && stderr.contains(&format!("{done} of 85 levels")), "{stderr}");
    assert_ok(&chomp(&["verify", "--tables", d, "--allow-incomplete"]), "verify --allow-incomplete");
    // export reads an unfinished run too, with a warning.
    let o = chomp(&["export", "--tables", d, "--format", "csv", "--max-entries", "100000000"]);
    assert_ok(&o, "export of an unfinished run");
    let warning = format!("an unfinished run of 85 levels (levels 1-{done} are complete): exporting those");
    assert!(text(&o.stderr).starts_with("warning: ") && text(&o.stderr).contains(&warning), "{}", text(&o.stderr));

    let small = tmp.path().join("small");
    chomp_solve(&small, &["--max-tiles", "12", "--quiet"]);
    let o = chomp(&["verify", "--tables", small.to_str().unwrap(), "--min-tiles", "200"]);
    assert!(!o.status.success(), "verify --min-tiles 200 sampled nothing yet passed: {}", text(&o.stdout));
    assert!(text(&o.stderr).contains("nothing was sampled"), "{}", text(&o.stderr));
}

/// Defect 4: Ctrl-C ends a run with exit code 130 and says how to resume; the same
/// command resumes it.
#[test]
fn ctrl_c_exits_130_and_the_rerun_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let mut run = Background::solve(&dir, SLOW_RUN, &tmp.path().join("run.log"));
    wait_until("the first levels", || levels_complete(&dir) >= 3);
    let kill = Command::new("kill").args(["-INT", &run.pid().to_string()]).status().expect("run kill");
    assert!(kill.success());
    let status = run.wait(Duration::from_secs(30));
    let stderr = run.stderr();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let line = stderr.lines().find(|l| l.starts_with("interrupted")).unwrap_or_else(|| panic!("no interrupted line:\n{stderr}"));
    // "interrupted in level N; levels 1-S are saved: run the same command again to resume",
    // or "interrupted after level S; …" when the signal came between a checkpoint and the next level.
    let (after, level, saved) = ["interrupted in level ", "interrupted after level "]
        .iter()
        .enumerate()
        .find_map(|(after, prefix)| line.strip_prefix(prefix).map(|rest| (after == 1, rest)))
        .and_then(|(after, rest)| Some((after, rest.split_once("; levels 1-")?)))
        .and_then(|(after, (n, rest))| Some((after, n.parse::<u32>().ok()?, rest.split_once(' ')?.0.parse::<u32>().ok()?)))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(line.ends_with(" are saved: run the same command again to resume"), "{line}");
    drop(run);

    // The run goes on while the handler speaks: a checkpoint may land between
    // its reading the manifest and the exit, so the manifest may hold one
    // level more than the message says (what it says is saved still is).
    let done = levels_complete(&dir);
    let consistent = if after { level == saved } else { saved < level };
    assert!(saved <= done && done <= saved + 1 && consistent, "{line}: the manifest says levels 1-{done}");
    let rerun = Background::solve(&dir, SLOW_RUN, &tmp.path().join("rerun.log"));
    wait_until("the rerun to resume", || rerun.stderr().contains("resuming after level"));
    assert!(rerun.stderr().contains(&format!("resuming after level {done}")), "{}", rerun.stderr());
}

/// `SIGTERM` and `SIGUSR1` (a batch system's warning) stop a run at the end
/// of the level in progress, with a checkpoint of it, status 75 and a line
/// that says so; the lock is released and the same command resumes there.
#[test]
fn sigterm_and_sigusr1_stop_after_the_level_with_a_checkpoint() {
    for signal in ["-TERM", "-USR1"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        let mut run = Background::solve(&dir, SLOW_RUN, &tmp.path().join("run.log"));
        wait_until("the first levels", || levels_complete(&dir) >= 3);
        assert!(Command::new("kill").args([signal, &run.pid().to_string()]).status().unwrap().success());
        let status = run.wait(Duration::from_secs(60));
        let stderr = run.stderr();
        assert_eq!(status.code(), Some(75), "{signal}: {stderr}");
        let line = stderr.lines().find(|l| l.starts_with("stopped on request")).unwrap_or_else(|| panic!("{signal}: {stderr}"));
        let done = levels_complete(&dir);
        assert_eq!(line, format!("stopped on request after level {done}; levels 1-{done} are saved: run the same command again to resume"));
        assert!(!dir.join(".lock").exists(), "{signal}: the lock is released");
        drop(run);
        let rerun = Background::solve(&dir, SLOW_RUN, &tmp.path().join("rerun.log"));
        wait_until("the rerun to resume", || rerun.stderr().contains("resuming after level"));
        assert!(rerun.stderr().contains(&format!("resuming after level {done}")), "{signal}: {}", rerun.stderr());
    }
}

/// Defect 5: Job files: a relative `out` is relative to the job file's folder;
/// errors name the field, line and column; the shipped jobs hold no
/// absolute output path.
#[test]
fn job_files_resolve_out_and_name_their_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = tmp.path().join("jobs/sub");
    let cwd = tmp.path().join("elsewhere");
    fs::create_dir_all(&jobs).unwrap();
    fs::create_dir_all(&cwd).unwrap();
    fs::write(jobs.join("job.toml"), "name = \"t\"\nout = \"tables\"\nmax_tiles = 8\n").unwrap();
    assert_ok(&chomp_in(&cwd, &["run", "../jobs/sub/job.toml", "--quiet"]), "run from another folder");
    assert!(jobs.join("tables/manifest.json").is_file(), "tables next to the job file");
    assert!(!cwd.join("tables").exists(), "nothing in the working directory");

    let job = jobs.join("bad.toml");
    let out = jobs.join("bad-out");
    for (what, body, needles) in [
        ("missing name", "out = \"bad-out\"\nmax_tiles = 8\n", &["`name`"][..]),
        ("string max_tiles", "name = \"t\"\nout = \"bad-out\"\nmax_tiles = \"30\"\n", &["max_tiles", "line 3, column"]),
        ("syntax error", "name = \"t\"\nout = \"bad-out\"\nmax_tiles = = 3\n", &["line 3, column"]),
    ] {
        fs::write(&job, body).unwrap();
        let line = assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), what);
        for needle in needles {
            assert!(line.contains(needle), "{what}: {line} does not name {needle}");
        }
        assert!(!out.exists(), "{what}: nothing written");
    }

    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs");
    let mut seen = 0;
    for entry in fs::read_dir(&shipped).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let file = JobFile::parse(&fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(file.out.is_relative(), "{}: absolute out {}", path.display(), file.out.display());
            seen += 1;
        }
    }
    assert!(seen >= 3, "{seen} job files in {}", shipped.display());
}

/// Defect 6: Positions: too large, an empty row, "1 tile", a position outside the
/// tables named with its size and the tables' bounds, and a box answering
/// the transpose of a position with more rows than the box.
#[test]
fn positions_errors_and_transposed_box_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("box");
    let d = dir.to_str().unwrap();
    chomp_solve(&dir, &["--rows", "3", "--cols", "4", "--grundy", "--quiet"]);

    let line = assert_one_line_error(&chomp(&["query", "99999999999999999999", "--tables", d]), "huge row");
    assert!(line.contains("too large") && !line.contains("not a positive integer"), "{line}");
    assert_one_line_error(&chomp(&["query", "3,,2", "--tables", d]), "an empty row between commas");

    let o = chomp(&["query", "1", "--tables", d]);
    assert_ok(&o, "query 1");
    let out = text(&o.stdout);
    assert!(out.contains("(1 tile)") && !out.contains("(1 tiles)"), "{out}");

    let line = assert_one_line_error(&chomp(&["query", "2 2 2 2 2", "--tables", d]), "5 rows in a 3x4 box");
    for needle in ["5 rows", "2 columns", "10 tiles", "at most 3 rows", "4 columns"] {
        assert!(line.contains(needle), "{line} does not say {needle}");
    }
    let tiles = tmp.path().join("t12");
    chomp_solve(&tiles, &["--max-tiles", "12", "--quiet"]);
    let line = assert_one_line_error(&chomp(&["query", "13", "--tables", tiles.to_str().unwrap()]), "13 tiles");
    assert!(line.contains("13 tiles") && line.contains("at most 12 tiles"), "{line}");

    // 4 rows of 2 in a 3x4 box: answered by its transpose, 2 rows of 4.
    let (tall, wide) = (query_json(&dir, "2 2 2 2"), query_json(&dir, "4 4"));
    assert_eq!(tall["position"], serde_json::json!([2, 2, 2, 2]));
    for field in ["tiles", "outcome", "grundy"] {
        assert_eq!(tall[field], wide[field], "{field}");
    }
    assert_eq!(tall["winning_moves"].as_array().unwrap().len(), wide["winning_moves"].as_array().unwrap().len());
}

/// Defect 7: iChomp on tables without Grundy values says so; its usage shows four quadrants.
#[test]
fn ichomp_without_grundy_values_and_its_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t12");
    chomp_solve(&dir, &["--max-tiles", "12", "--quiet"]);
    let o = chomp(&["ichomp", "1", "-", "-", "-", "--tables", dir.to_str().unwrap()]);
    let line = assert_one_line_error(&o, "ichomp without Grundy values");
    assert!(line.contains("no Grundy values") && !line.contains("computed to 0 tiles"), "{line}");

    let o = chomp(&["ichomp", "--help"]);
    assert_ok(&o, "ichomp --help");
    let help = text(&o.stdout);
    let usage = help.lines().find(|l| l.starts_with("Usage:")).unwrap_or_else(|| panic!("no usage line:\n{help}"));
    assert!(usage.contains("<Q1> <Q2> <Q3> <Q4>"), "{usage}");
    assert_eq!(usage.matches("<Q").count(), 4, "{usage}");
    assert!(!usage.contains("..."), "exactly four quadrants: {usage}");
}

/// Defect 8: The largest tile count is refused naming today's limit; --dry-run
/// estimates every level and writes nothing; --work-dir holds the scratch
/// and is left clean.
#[test]
fn solve_limits_dry_run_and_work_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let d = dir.to_str().unwrap();
    let o = chomp(&["solve", "--max-tiles", "200", "--out", d]);
    let line = assert_one_line_error(&o, "solve beyond the memory");
    // The first level that cannot fit even in a window of its own is named.
    assert!(line.contains(" needs about ") && line.contains("available"), "{line}");
    assert!(!dir.exists());

    let o = chomp(&["solve", "--max-tiles", "95", "--out", d, "--dry-run"]);
    assert_ok(&o, "--dry-run");
    let stderr = text(&o.stderr);
    let levels: Vec<&str> = stderr.lines().filter(|l| l.trim_start().starts_with("level ")).collect();
    assert_eq!(levels.len(), 95, "one line per level:\n{stderr}");
    assert!(levels.iter().any(|l| l.contains("level  95")), "{stderr}");
    for l in &levels {
        assert!(l.contains(" s ") && l.contains("memory") && l.contains("disk"), "time, memory and disk: {l}");
    }
    assert!(!dir.exists(), "--dry-run writes nothing");

    // In windows, the dry run names the windows the run then opens, and
    // counts the re-push that opens each after the first.
    let args = ["solve", "--max-tiles", "80", "--max-memory", "20M", "--out", d];
    let o = chomp(&[&args[..], &["--dry-run"]].concat());
    assert_ok(&o, "--dry-run in windows");
    let planned: Vec<String> = text(&o.stderr)
        .lines()
        .find_map(|l| l.trim().strip_prefix("in ").and_then(|l| l.split_once("(levels ")).map(|(_, w)| w.to_string()))
        .expect("the windows listed")
        .split(')')
        .next()
        .unwrap()
        .split(", ")
        .map(str::to_string)
        .collect();
    assert!(planned.len() > 1, "{planned:?}");
    let o = chomp(&args);
    assert_ok(&o, "the run in windows, shown");
    let opened: Vec<String> = text(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("window: the marks of levels ").and_then(|w| w.split_once(' ')).map(|(w, _)| w.to_string()))
        .collect();
    assert_eq!(opened, planned, "the windows the dry run planned are those the run opened");
    fs::remove_dir_all(&dir).unwrap();

    let work = tmp.path().join("scratch");
    fs::create_dir(&work).unwrap();
    let o = chomp(&["solve", "--max-tiles", "30", "--grundy-max-tiles", "20", "--out", d, "--work-dir", work.to_str().unwrap(), "--quiet"]);
    assert_ok(&o, "solve --work-dir");
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after --work-dir");
    let left: Vec<String> = fs::read_dir(&work).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.iter().all(|name| !name.starts_with("chomp-")), "scratch left in the work dir: {left:?}");
    assert!(!dir.join(".work").exists() && !dir.join(".lock").exists());
}

/// Found by a new user's review: output that cannot be written is one line
/// (not a panic), a run whose progress goes into a closed pipe carries on,
/// `--force` recomputes a damaged table of the same job, and nonsense
/// ranges and counts are refused.
#[test]
fn unwritable_output_force_and_nonsense_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    let d = dir.to_str().unwrap();
    // Progress lines into a pipe closed at once: the run still finishes.
    let mut child = Command::new(BIN)
        .args(["solve", "--max-tiles", "50", "--grundy-max-tiles", "30", "--out", d])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert!(child.wait().unwrap().success(), "a run whose progress goes into a closed pipe");
    assert_ok(&chomp(&["verify", "--tables", d, "--samples", "20"]), "verify the run");

    // Output into a pipe closed at once: status 0, nothing on standard error.
    let mut child =
        Command::new(BIN).args(["boxes", "--tables", "results/box-8x15"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "output into a closed pipe: {:?} {}", o.status, text(&o.stderr));

    if Path::new("/dev/full").exists() {
        let o = Command::new(BIN).args(["query", "3 2 1", "--tables", d]).stdout(File::create("/dev/full").unwrap()).output().unwrap();
        let line = assert_one_line_error(&o, "query onto a full disk");
        assert!(line.contains("writing to standard output") && !line.contains("panicked"), "{line}");
    }

    // A damaged table: verify names it, a rerun says the job is complete,
    // --force computes it again.
    let table = dir.join("losses/L0040.cht");
    let mut bytes = fs::read(&table).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&table, bytes).unwrap();
    assert!(!chomp(&["verify", "--tables", d]).status.success(), "verify finds the damage");
    let o = chomp(&["solve", "--max-tiles", "50", "--grundy-max-tiles", "30", "--out", d]);
    assert_ok(&o, "rerun of a complete job");
    assert!(text(&o.stderr).contains("already complete"), "{}", text(&o.stderr));
    assert_ok(&chomp(&["solve", "--max-tiles", "50", "--grundy-max-tiles", "30", "--out", d, "--force", "--quiet"]), "--force");
    assert_ok(&chomp(&["verify", "--tables", d]), "verify after --force");

    let line = assert_one_line_error(&chomp(&["verify", "--tables", d, "--min-tiles", "40", "--max-tiles", "30"]), "an inverted range");
    assert!(line.contains("--min-tiles 40 is above --max-tiles 30"), "{line}");
    let line = assert_one_line_error(&chomp(&["verify", "--tables", d, "--min-tiles", "95"]), "a range above the run");
    assert!(line.contains("at or above 95 tiles") && !line.contains("4294967295"), "{line}");
    let o = chomp(&["match", "--tables", d, "--games", "0"]);
    assert_eq!(o.status.code(), Some(2), "--games 0 is a usage error: {}", text(&o.stdout));
    let line = assert_one_line_error(&chomp(&["boxes", "--tables", d]), "box counts of a tile-count run");
    assert!(line.contains("need the tables of a box"), "{line}");

    // A dry run tells when the run would stop for memory (and writes nothing).
    let small = tmp.path().join("small");
    let o = chomp(&["solve", "--max-tiles", "85", "--max-memory", "5M", "--dry-run", "--out", small.to_str().unwrap()]);
    assert!(!o.status.success(), "a dry run over --max-memory");
    let last = text(&o.stderr).lines().last().unwrap_or_default().to_string();
    assert!(
        last.starts_with("error: the run would stop before it starts: level ") && last.contains("more than --max-memory (5.0 MiB)"),
        "{last}"
    );
    assert!(!small.exists(), "a dry run writes nothing");
    assert!(!last.contains("resume"), "a dry run has nothing to resume: {last}");
    // The run itself refuses before it starts, saying so.
    let line = assert_one_line_error(
        &chomp(&["solve", "--max-tiles", "85", "--max-memory", "5M", "--out", small.to_str().unwrap()]),
        "a run over --max-memory",
    );
    assert!(line.ends_with("no level is complete yet: rerun with a larger limit to start"), "{line}");

    // --work-dir naming a file is refused before anything is written.
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let line = assert_one_line_error(
        &chomp(&["solve", "--max-tiles", "20", "--work-dir", file.to_str().unwrap(), "--out", small.to_str().unwrap()]),
        "--work-dir naming a file",
    );
    assert!(line.contains("a file, not a directory") && !small.exists(), "{line}");

    // verify on n-dimensional tables names the command that reads them.
    let nd = tmp.path().join("nd");
    assert_ok(&chomp(&["nd", "--dims", "2,2,2", "--out", nd.to_str().unwrap()]), "3-D tables");
    let line = assert_one_line_error(&chomp(&["verify", "--tables", nd.to_str().unwrap()]), "verify on 3-D tables");
    assert!(line.contains("chomp nd --tables DIR"), "{line}");

    // The bench's --dir must exist (it was created, and left behind).
    let nowhere = tmp.path().join("nowhere");
    let line =
        assert_one_line_error(&chomp(&["bench", "--max-tiles", "10", "--dir", nowhere.to_str().unwrap()]), "bench into a missing --dir");
    assert!(line.contains("no such directory") && !nowhere.exists(), "{line}");
}

/// A position that starts with a minus is bad input for the position (one
/// line, exit 1), not an unknown flag; a negative seed is an invalid
/// number, not a flag to escape with `--`.
#[test]
fn hyphen_values_are_bad_input_not_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    assert_ok(&chomp(&["solve", "--max-tiles", "8", "--quiet", "--out", dir.to_str().unwrap()]), "solve");
    for pos in ["-3", "-3 2"] {
        let o = chomp(&["query", pos, "--tables", dir.to_str().unwrap()]);
        let line = assert_one_line_error(&o, pos);
        assert!(!line.contains("unexpected argument"), "{line}");
    }
    let o = chomp(&["verify", "--tables", dir.to_str().unwrap(), "--seed", "-1"]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("invalid value '-1'") && !stderr.contains("-- -1"), "{stderr}");
}

/// Messages that name what is wrong: a file that is no job file, an export
/// into a missing folder (not its temporary file), an output folder that is
/// a file; and job paths printed without `..`.
#[test]
fn errors_name_what_is_wrong_and_paths_print_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let line = assert_one_line_error(&chomp(&["run", readme.to_str().unwrap()]), "run README.md");
    assert!(line.contains("not a valid job file (TOML)"), "{line}");
    let missing = tmp.path().join("missing/dir/x.csv");
    let box8 = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/box-8x15");
    let o = chomp(&[
        "export",
        "--tables",
        box8.to_str().unwrap(),
        "--format",
        "csv",
        "--what",
        "positions",
        "--out",
        missing.to_str().unwrap(),
    ]);
    let line = assert_one_line_error(&o, "export into a missing folder");
    assert!(line.contains("does not exist") && !line.contains("x.csv.tmp"), "{line}");
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let losses = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/losses-100");
    for args in [&["plot", "--tables", losses.to_str().unwrap()][..], &["summary", "--tables", losses.to_str().unwrap()]] {
        let o = chomp(&[args, &["--out", file.to_str().unwrap()]].concat());
        let line = assert_one_line_error(&o, "--out a file");
        assert!(line.contains("a file, not a directory"), "{line}");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    // A site's --tables that is a file or nothing: what it is, not an OS error.
    let site = tmp.path().join("site");
    let line =
        assert_one_line_error(&chomp(&["site", "--tables", file.to_str().unwrap(), "--out", site.to_str().unwrap()]), "site --tables FILE");
    assert!(line.contains("a file, not a table directory") && !line.contains("os error"), "{line}");
    let none = tmp.path().join("none");
    let line = assert_one_line_error(
        &chomp(&["site", "--tables", none.to_str().unwrap(), "--out", site.to_str().unwrap()]),
        "site --tables missing",
    );
    assert!(line.contains("no such directory") && !line.contains("os error") && !site.exists(), "{line}");
    let jobs = tmp.path().join("jobs");
    fs::create_dir_all(&jobs).unwrap();
    fs::write(jobs.join("j.toml"), "name = \"j\"\nout = \"../out/j\"\nmax_tiles = 6\n").unwrap();
    let job = JobFile::read(&jobs.join("j.toml")).unwrap();
    assert_eq!(job.out, tmp.path().join("out/j"));
}

/// Every document a command's help points to exists, with the section named.
#[test]
fn help_points_to_documents_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let help = text(&chomp(&["--help"]).stdout);
    assert!(!help.contains("see README"), "{help}");
    for (cmd, doc, section) in [("play", "docs/guide.md", "## Play against the computer"), ("serve", "docs/server.md", "## Routes")] {
        let out = text(&chomp(&[cmd, "--help"]).stdout);
        assert!(out.contains(doc), "chomp {cmd} --help does not point to {doc}:\n{out}");
        assert!(fs::read_to_string(root.join(doc)).unwrap().contains(section), "{doc} has no {section}");
    }
}

/// The dry run's peak memory is what the run then takes (within a quarter),
/// Grundy values, the in-run check's cache and the program included.
#[test]
fn the_dry_runs_memory_estimate_is_the_runs_peak() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let job = ["solve", "--max-tiles", "80", "--grundy-max-tiles", "66", "--out", out.to_str().unwrap()];
    let dry = chomp(&[&job[..], &["--dry-run"]].concat());
    let text = String::from_utf8_lossy(&dry.stderr).into_owned() + &String::from_utf8_lossy(&dry.stdout);
    let line = text.lines().find(|l| l.starts_with("estimate for")).unwrap_or_else(|| panic!("{text}"));
    let mib: f64 = line
        .split("peak memory ")
        .nth(1)
        .and_then(|s| s.split(" MiB").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let report = tmp.path().join("report.json");
    let run = chomp(&[&job[..], &["--quiet", "--report-json", report.to_str().unwrap()]].concat());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let r: serde_json::Value = serde_json::from_str(&fs::read_to_string(&report).unwrap()).unwrap();
    let peak = r["processes"][0]["peak_kib"].as_f64().unwrap() / 1024.0;
    assert!((0.8..=1.25).contains(&(mib / peak)), "estimated {mib} MiB, the run peaked at {peak:.1} MiB");
}

/// A box solved in memory says how far it has gone, on standard error, while
/// standard output carries the CSV alone.
#[test]
fn a_long_solve_in_memory_shows_its_progress() {
    let out = Command::new(BIN).args(["openings", "--rows", "10", "--cols", "26"]).env("CHOMP_PROGRESS_SECONDS", "0.2").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().next(), Some("rows,cols,winning_moves"));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("solving the 10x26 box: ")).collect();
    assert!(!lines.is_empty() && lines.iter().all(|l| l.contains(" % after ")), "{err}");
}

/// The messages a new user met raw (an OS error, serde's words, Rust's
/// range syntax) are said in the project's words, each on one line: a job
/// file that is not there, a value of the wrong type, a busy port, an absurd
/// job; and `chomp run` with no file runs the default job built into the
/// binary, from any folder.
#[test]
fn messages_in_the_projects_words() {
    let tmp = tempfile::tempdir().unwrap();
    let line = assert_one_line_error(&chomp_in(tmp.path(), &["run", "jobs/default.toml"]), "a job file that is not there");
    assert!(line.contains("jobs/default.toml: no such job file") && line.contains("`chomp run` with no file"), "{line}");
    assert!(!line.contains("os error"), "{line}");

    // The built-in default job, from a folder outside the checkout: its estimate, nothing written.
    let dry = chomp_in(tmp.path(), &["run", "--dry-run"]);
    assert_ok(&dry, "chomp run --dry-run with no job file");
    assert!(text(&dry.stderr).contains("estimate for levels 1 to 90 "), "{}", text(&dry.stderr));
    assert!(!tmp.path().join("out").exists(), "a dry run wrote out/");
    let shipped = JobFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/default.toml")).unwrap();
    assert_eq!((shipped.max_tiles, shipped.grundy_max_tiles, shipped.name.as_str()), (Some(90), Some(70), "default"));

    let job = tmp.path().join("ninety.toml");
    fs::write(&job, "name = \"t\"\nout = \"o\"\nmax_tiles = \"ninety\"\n").unwrap();
    let line = assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "max_tiles = \"ninety\"");
    assert!(
        line.ends_with("line 3, column 13: max_tiles: expected a whole number (0 or more, no quotes), found the string \"ninety\""),
        "{line}"
    );

    // A job far beyond any machine: refused before anything is written, naming what it needs.
    let job = tmp.path().join("huge.toml");
    fs::write(&job, "name = \"huge\"\nout = \"huge\"\nmax_tiles = 250\n").unwrap();
    let line = assert_one_line_error(&chomp(&["run", job.to_str().unwrap()]), "max_tiles = 250");
    assert!(
        line.contains("far beyond this machine") && line.contains("more than 30 days") && line.ends_with("(--force starts it anyway)"),
        "{line}"
    );
    assert!(!tmp.path().join("huge").exists(), "the refused job wrote its directory");
    let dry = chomp(&["run", job.to_str().unwrap(), "--dry-run"]);
    assert!(
        !dry.status.success() && text(&dry.stderr).contains("error: the run would be refused: this job is far beyond"),
        "{}",
        text(&dry.stderr)
    );
    // --force (and its older name for this, --ignore-estimate) would start
    // it: its dry run says no more (given the memory its levels need).
    for flag in ["--force", "--ignore-estimate"] {
        let dry = chomp(&["run", job.to_str().unwrap(), "--dry-run", "--max-memory", "100T", flag]);
        assert_ok(&dry, &format!("the dry run of a job far beyond this machine, with {flag}"));
        assert!(text(&dry.stderr).starts_with("estimate for levels 1 to 250 "), "{}", text(&dry.stderr));
    }
    assert!(!tmp.path().join("huge").exists(), "a dry run wrote the job's directory");

    // A busy port, before any table loads.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let tables = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/box-8x15");
    let line = assert_one_line_error(&chomp(&["serve", "--addr", &addr, "--tables", tables.to_str().unwrap()]), "a busy port");
    assert!(line.contains(&format!("cannot listen on {addr}: port")) && line.contains("is in use") && line.contains("--addr"), "{line}");
    assert!(!line.contains("os error"), "{line}");
}

/// `chomp bench` says about how long it will take before it starts, shows
/// its progress on standard error, and keeps standard output for its figures.
#[test]
fn bench_says_how_long_before_it_starts() {
    let out = Command::new(BIN).args(["bench", "--max-tiles", "45"]).env("CHOMP_PROGRESS_SECONDS", "0.01").output().unwrap();
    assert_ok(&out, "chomp bench --max-tiles 45");
    let err = text(&out.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("bench: losses to 45 tiles, Grundy to 0, ") && first.contains(": about "), "{err}");
    assert!(text(&out.stdout).starts_with("bench: losses to 45 tiles"), "{}", text(&out.stdout));
}

/// `chomp bench --rows R --cols C` says how long its solves will take (the
/// box's dry-run price times --repeat) before the first, then one line as
/// each solve ends.
#[test]
fn bench_of_a_box_says_how_long_and_how_far() {
    let out = chomp(&["bench", "--rows", "6", "--cols", "9", "--repeat", "3"]);
    assert_ok(&out, "chomp bench --rows 6 --cols 9 --repeat 3");
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(lines[0].starts_with("bench: the 6x9 box in memory (") && lines[0].contains("3 solves: about "), "{err}");
    assert!(lines[0].contains(" a solve, the dry run's estimate)"), "{err}");
    for (i, line) in lines[1..].iter().enumerate() {
        let took = line.strip_prefix(&format!("bench: solve {} of 3, ", i + 1)).unwrap_or_else(|| panic!("{err}"));
        assert!(took.ends_with(" ms") || took.ends_with(" s"), "{err}");
    }
    assert!(text(&out.stdout).starts_with("bench: the 6x9 box in memory"), "{}", text(&out.stdout));
}
