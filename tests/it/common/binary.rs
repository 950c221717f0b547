//! The `chomp` binary, run as a user would, and the checks on what it prints.

use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_chomp");

/// Runs `chomp ARGS`.
pub fn chomp(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("start chomp")
}

/// Runs `chomp ARGS` in the working directory `cwd`.
pub fn chomp_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).output().expect("start chomp")
}

/// Runs `chomp solve ARGS --out OUT` and checks that it succeeded.
pub fn chomp_solve(out: &Path, args: &[&str]) {
    let mut all = vec!["solve"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    assert_ok(&chomp(&all), &format!("chomp solve {args:?}"));
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A success: exit code 0 (otherwise the failure shows both outputs).
pub fn assert_ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status, text(&out.stdout), text(&out.stderr));
}

/// A failure: non-zero exit and exactly one stderr line, starting with `error:`. Returns the line.
pub fn assert_one_line_error(out: &Output, what: &str) -> String {
    assert!(!out.status.success(), "{what}: should fail; stdout:\n{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one stderr line expected, got:\n{stderr}");
    assert!(lines[0].starts_with("error:"), "{what}: {:?}", lines[0]);
    lines[0].to_string()
}
