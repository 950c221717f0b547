//! `chomp fetch` from a `file://` mirror and from a small HTTP mirror on
//! 127.0.0.1 that fails on purpose: it never touches a file it did not
//! write, never writes past a file's size in the manifest, refuses
//! manifests that list its own names, tries failed transfers again and
//! resumes them in one run, stops at once when the mirror does not answer
//! or fails every request, gives up on a `file://` read that blocks, never
//! keeps a partial file's wrong bytes nor touches a user's `.part`, and says
//! in one short line why, leaving nothing empty behind.

use crate::common::{assert_ok, assert_one_line_error, chomp, text};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the test mirror does with one request.
#[derive(Clone, Copy)]
enum Serve {
    /// The bytes asked for (a Range `bytes=N-` is honoured).
    Whole,
    /// `503 Service Unavailable`.
    Unavailable,
    /// The head, then this many bytes of the body, then the connection closed.
    Cut(usize),
    /// The head, then this many bytes, then silence for the duration.
    Stall(usize, Duration),
}

/// The test mirror's counts: requests, and body bytes sent.
#[derive(Default)]
struct Counts {
    requests: AtomicUsize,
    sent: AtomicU64,
}

/// An HTTP mirror of `root` on 127.0.0.1 whose `n`-th request (from 0) is
/// served as `how(n)` says; its address and counts.
fn http_mirror(root: PathBuf, how: impl Fn(usize) -> Serve + Send + Sync + 'static) -> (String, Arc<Counts>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let counts = Arc::new(Counts::default());
    let (how, c) = (Arc::new(how), counts.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (root, how, c) = (root.clone(), how.clone(), c.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push(line);
                }
                let Some(path) = head.first().and_then(|l| l.split(' ').nth(1)) else { return };
                let from: usize = head
                    .iter()
                    .find_map(|h| h.to_ascii_lowercase().strip_prefix("range: bytes=").map(|r| r.trim().trim_end_matches('-').to_string()))
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let n = c.requests.fetch_add(1, Ordering::SeqCst);
                let mut out = stream;
                let Ok(bytes) = fs::read(root.join(path.trim_start_matches('/'))) else {
                    let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                };
                let body = &bytes[from.min(bytes.len())..];
                let status = if from > 0 { "206 Partial Content" } else { "200 OK" };
                let head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                let send = |out: &mut std::net::TcpStream, k: usize| {
                    let k = k.min(body.len());
                    let _ = out.write_all(head.as_bytes()).and_then(|()| out.write_all(&body[..k]));
                    c.sent.fetch_add(k as u64, Ordering::SeqCst);
                };
                match how(n) {
                    Serve::Whole => send(&mut out, body.len()),
                    Serve::Unavailable => {
                        let _ = out.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    }
                    Serve::Cut(k) => send(&mut out, k),
                    Serve::Stall(k, d) => {
                        send(&mut out, k);
                        let _ = out.flush();
                        std::thread::sleep(d);
                    }
                }
            });
        }
    });
    (url, counts)
}

fn published(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join(name)
}

fn fetch(manifest: &Path, from: &str, out: &Path) -> std::process::Output {
    chomp(&["fetch", "--manifest", manifest.to_str().unwrap(), "--from", from, "--out", out.to_str().unwrap(), "--quiet"])
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                all.push((e.path(), fs::read(e.path()).unwrap()));
            }
        }
    }
    all.sort();
    all
}

fn copy_dir(from: &Path, to: &Path) {
    for e in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_dir(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A copy of the published directory `name` in `dir/mirror`, to damage.
fn mirror_of(dir: &Path, name: &str) -> PathBuf {
    let mirror = dir.join("mirror");
    fs::create_dir_all(&mirror).unwrap();
    copy_dir(&published(name), &mirror);
    mirror
}

#[test]
fn a_foreign_directory_is_refused_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    // Another table directory without its manifest (a copy, say).
    let out = tmp.path().join("other");
    fs::create_dir_all(&out).unwrap();
    copy_dir(&published("box-8x15"), &out);
    fs::remove_file(out.join("manifest.json")).unwrap();
    let before = snapshot(&out);
    let mirror = format!("file://{}", published("losses-100").display());
    let line = assert_one_line_error(&fetch(&published("losses-100/manifest.json"), &mirror, &out), "a foreign directory");
    assert!(line.contains("did not write"), "{line}");
    assert_eq!(snapshot(&out), before, "every file unchanged");
    // A directory that an interrupted fetch of these tables left is resumed.
    let resumed = tmp.path().join("resumed");
    fs::create_dir_all(resumed.join("losses")).unwrap();
    fs::copy(published("box-8x15/losses/L0005.cht"), resumed.join("losses/L0005.cht")).unwrap();
    let part = resumed.join("losses/L0006.cht.chomp-fetch.part");
    fs::write(&part, &fs::read(published("box-8x15/losses/L0006.cht")).unwrap()[..10]).unwrap();
    let mirror = format!("file://{}", published("box-8x15").display());
    assert_ok(&fetch(&published("box-8x15/manifest.json"), &mirror, &resumed), "resume");
    assert_ok(
        &chomp(&["verify", "--tables", resumed.to_str().unwrap(), "--against", published("box-8x15/manifest.json").to_str().unwrap()]),
        "identical",
    );
}

#[test]
fn a_never_ending_file_is_cut_at_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = mirror_of(tmp.path(), "box-8x15");
    // The mirror's largest table never ends.
    let m: serde_json::Value = serde_json::from_slice(&fs::read(published("box-8x15/manifest.json")).unwrap()).unwrap();
    let (rel, bytes) =
        m["files"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v["bytes"].as_u64().unwrap())).max_by_key(|x| x.1).unwrap();
    fs::remove_file(mirror.join(&rel)).unwrap();
    std::os::unix::fs::symlink("/dev/zero", mirror.join(&rel)).unwrap();
    let out = tmp.path().join("got");
    let t0 = std::time::Instant::now();
    let line =
        assert_one_line_error(&fetch(&published("box-8x15/manifest.json"), &format!("file://{}", mirror.display()), &out), "never ending");
    assert!(t0.elapsed().as_secs() < 60 && line.contains("more than the manifest's"), "{line}");
    let part = out.join(format!("{rel}.chomp-fetch.part"));
    assert!(fs::metadata(&part).map_or(0, |m| m.len()) <= bytes, "written past the manifest's size");
    assert!(!out.join("manifest.json").exists());
}

#[test]
fn reserved_names_and_a_missing_mirror() {
    let tmp = tempfile::tempdir().unwrap();
    // A manifest that lists the lock: refused before anything is written.
    let mut m = chomp_tables::Manifest::read(&published("box-8x15")).unwrap();
    let entry = m.files.remove("summary.csv").unwrap();
    m.files.insert(".lock".into(), entry);
    let held = tmp.path().join("bad-manifest");
    fs::create_dir_all(&held).unwrap();
    m.write(&held).unwrap();
    let bad = held.join("manifest.json");
    let out = tmp.path().join("a");
    let line = assert_one_line_error(&fetch(&bad, &format!("file://{}", published("box-8x15").display()), &out), "a reserved name");
    assert!(line.contains("reserved"), "{line}");
    assert!(!out.exists() || fs::read_dir(&out).unwrap().next().is_none(), "nothing written");
    // A mirror that is not there: one short line, no partial file left.
    let out = tmp.path().join("b");
    let line = assert_one_line_error(&fetch(&published("box-8x15/manifest.json"), "file:///nonexistent/mirror", &out), "no mirror");
    assert!(line.len() <= 400 && line.contains("no such directory"), "{} characters: {line}", line.len());
    assert!(walk(&out).is_empty(), "nothing written");
}

/// Ctrl-C in the middle of a transfer (a mirror file that never sends
/// anything: a FIFO) ends the fetch with 130 and one line saying what is
/// kept; no manifest is written.
#[test]
fn ctrl_c_says_what_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = mirror_of(tmp.path(), "box-8x15");
    let rel = "losses/L0060.cht";
    fs::remove_file(mirror.join(rel)).unwrap();
    let fifo = mirror.join(rel);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = tmp.path().join("got");
    let manifest = published("box-8x15/manifest.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_chomp"))
        .args(["fetch", "--manifest", manifest.to_str().unwrap(), "--from", &format!("file://{}", mirror.display()), "--out"])
        .arg(&out)
        .arg("--quiet")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the smallest files (fetched last) are verified: the FIFO
    // holds its reader meanwhile.
    let t0 = std::time::Instant::now();
    while !out.join("losses/L0001.cht").exists() && t0.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.trim().lines().count() == 1 && stderr.contains("run the same command again"), "{stderr}");
    assert!(!out.join("manifest.json").exists());
    assert!(out.join("losses/L0001.cht").exists(), "verified files kept");
    // The same command, the mirror whole again, resumes and finishes.
    fs::remove_file(&fifo).unwrap();
    fs::copy(published("box-8x15").join(rel), &fifo).unwrap();
    assert_ok(&fetch(&manifest, &format!("file://{}", mirror.display()), &out), "the rerun");
    assert_ok(&chomp(&["verify", "--tables", out.to_str().unwrap(), "--against", manifest.to_str().unwrap()]), "identical");
}

#[test]
fn a_flaky_mirror_is_tried_again_and_resumed_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("losses-100/manifest.json");
    let total: u64 = chomp_tables::Manifest::read(&published("losses-100")).unwrap().files.values().map(|e| e.bytes).sum();
    // One request in ten fails with a 503, one in ten is cut after 1,000 bytes of its body.
    let (url, counts) = http_mirror(published("losses-100"), |n| match n % 10 {
        3 => Serve::Unavailable,
        7 => Serve::Cut(1000),
        _ => Serve::Whole,
    });
    let out = tmp.path().join("out");
    assert_ok(&fetch(&manifest, &url, &out), "a fetch from a mirror failing one request in five, in one run");
    assert_ok(&chomp(&["verify", "--tables", out.to_str().unwrap(), "--against", manifest.to_str().unwrap()]), "identical");
    let (requests, sent) = (counts.requests.load(Ordering::SeqCst), counts.sent.load(Ordering::SeqCst));
    assert!(requests > 102, "{requests} requests for 102 files");
    // A cut transfer resumes where it stopped: no byte is sent twice.
    assert_eq!(sent, total, "bytes sent for the files' {total}");
}

#[test]
fn a_silent_mirror_times_out_and_the_transfer_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("box-8x15/manifest.json");
    // The first request sends 1,000 bytes and then nothing for a minute.
    let (url, counts) =
        http_mirror(published("box-8x15"), |n| if n == 0 { Serve::Stall(1000, Duration::from_secs(60)) } else { Serve::Whole });
    let out = tmp.path().join("out");
    let t0 = Instant::now();
    let o = chomp(&[
        "fetch",
        "--manifest",
        manifest.to_str().unwrap(),
        "--from",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--idle-timeout",
        "2",
    ]);
    assert_ok(&o, "a fetch whose first transfer stalls");
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(counts.requests.load(Ordering::SeqCst) > 243);
    assert_ok(&chomp(&["verify", "--tables", out.to_str().unwrap(), "--against", manifest.to_str().unwrap()]), "identical");
}

#[test]
fn a_mirror_that_is_down_stops_the_fetch_in_one_line_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = tmp.path().join("out");
    let t0 = Instant::now();
    let o = fetch(&published("losses-100/manifest.json"), &format!("http://127.0.0.1:{port}"), &out);
    let line = assert_one_line_error(&o, "a mirror that is down");
    let mirror = format!("cannot reach the mirror http://127.0.0.1:{port} (connection refused");
    assert!(line.len() <= 400 && line.contains(&mirror) && line.contains("0 of 102 files"), "{line}");
    assert!(!line.contains("os error") && !line.contains("io:"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(!out.exists(), "nothing left: {:?}", walk(&out));
    assert!(text(&o.stdout).is_empty());
}

#[test]
fn a_mirror_failing_every_request_stops_in_one_line_even_when_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("losses-100/manifest.json");
    // A 503 for everything from the start: three tries of the first files.
    let (url, counts) = http_mirror(published("losses-100"), |_| Serve::Unavailable);
    let out = tmp.path().join("out");
    let t0 = Instant::now();
    let o = fetch(&manifest, &url, &out);
    let line = assert_one_line_error(&o, "a mirror answering 503 to everything");
    assert!(line.contains(&format!("the mirror {url} answers 503 Service Unavailable to every request")), "{line}");
    assert!(line.contains("0 of 102 files fetched"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(counts.requests.load(Ordering::SeqCst) <= 16, "{} requests", counts.requests.load(Ordering::SeqCst));
    assert!(!out.exists(), "nothing left: {:?}", walk(&out));
    // A mirror that serves some files, then fails every request: stopped after a run of failures.
    let (url, counts) = http_mirror(published("losses-100"), |n| if n < 10 { Serve::Whole } else { Serve::Unavailable });
    let t0 = Instant::now();
    let line = assert_one_line_error(&fetch(&manifest, &url, &out), "a mirror that starts failing");
    assert!(line.contains("stopped after 16 failures in a row") && line.contains("503 Service Unavailable"), "{line}");
    assert!(line.contains("10 of 102 files fetched"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(40), "{:?}", t0.elapsed());
    assert!(counts.requests.load(Ordering::SeqCst) < 40, "{} requests", counts.requests.load(Ordering::SeqCst));
    assert!(!out.join("manifest.json").exists());
}

#[test]
fn a_mirror_missing_every_file_leaves_no_empty_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("box-8x15/manifest.json");
    // Every file a 404.
    let (url, _) = http_mirror(tmp.path().join("empty"), |_| Serve::Whole);
    let out = tmp.path().join("out");
    let line = assert_one_line_error(&fetch(&manifest, &url, &out), "every file a 404");
    assert!(line.contains("404 Not Found") && line.contains("failures in a row"), "{line}");
    assert!(!out.exists(), "left behind: {:?}", walk(&out));
    // An existing --out stays, without the folders made in it; one made
    // before the fetch stays too.
    fs::create_dir_all(out.join("grundy")).unwrap();
    assert_one_line_error(&fetch(&manifest, &url, &out), "every file a 404");
    let mut left: Vec<String> = fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["grundy"]);
    // A mirror that lacks only the loss tables: the Grundy tables are kept, no empty losses folder.
    let mirror = mirror_of(tmp.path(), "box-8x15");
    fs::remove_dir_all(mirror.join("losses")).unwrap();
    let other = tmp.path().join("other");
    let line = assert_one_line_error(&fetch(&manifest, &format!("file://{}", mirror.display()), &other), "no loss tables");
    assert!(line.contains("losses/") && line.contains("No such file or directory") && !line.contains("os error"), "{line}");
    assert!(other.join("grundy/G0061.cht").exists() && !other.join("losses").exists(), "{:?}", walk(&other));
}

#[test]
fn a_file_mirror_that_blocks_times_out() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = mirror_of(tmp.path(), "box-8x15");
    // A FIFO with no writer: its open never returns (a hung network file system).
    let rel = "losses/L0060.cht";
    fs::remove_file(mirror.join(rel)).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(mirror.join(rel)).status().unwrap().success());
    let out = tmp.path().join("got");
    let manifest = published("box-8x15/manifest.json");
    let from = format!("file://{}", mirror.display());
    let t0 = Instant::now();
    let o = chomp(&[
        "fetch",
        "--manifest",
        manifest.to_str().unwrap(),
        "--from",
        &from,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--idle-timeout",
        "1",
        "--retries",
        "1",
    ]);
    let line = assert_one_line_error(&o, "a blocking file");
    assert!(line.contains(rel) && line.contains("within 1 s (--idle-timeout)"), "{line}");
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(out.join("losses/L0001.cht").exists() && !out.join("manifest.json").exists());
}

#[test]
fn a_partial_file_at_full_size_with_wrong_bytes_is_fetched_again() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("box-8x15/manifest.json");
    let rel = "losses/L0060.cht";
    let good = fs::read(published("box-8x15").join(rel)).unwrap();
    // An earlier run's partial file, cut at exactly the manifest's size, holding other bytes.
    let out = tmp.path().join("out");
    fs::create_dir_all(out.join("losses")).unwrap();
    let part = out.join(format!("{rel}.chomp-fetch.part"));
    fs::write(&part, vec![0u8; good.len()]).unwrap();
    // A healthy mirror is not blamed: the file is fetched again whole.
    let o = fetch(&manifest, &format!("file://{}", published("box-8x15").display()), &out);
    assert_ok(&o, "a healthy mirror");
    assert_eq!(fs::read(out.join(rel)).unwrap(), good);
    assert!(!part.exists());
    assert_ok(&chomp(&["verify", "--tables", out.to_str().unwrap(), "--against", manifest.to_str().unwrap()]), "identical");
    // A mirror serving wrong bytes of that file is blamed, and nothing of it is kept.
    let mirror = mirror_of(tmp.path(), "box-8x15");
    // Its last byte differs: the one byte a resumed transfer asks for.
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    fs::write(mirror.join(rel), &bad).unwrap();
    let again = tmp.path().join("again");
    fs::create_dir_all(again.join("losses")).unwrap();
    fs::write(again.join(format!("{rel}.chomp-fetch.part")), &good[..good.len() - 1]).unwrap();
    let line = assert_one_line_error(&fetch(&manifest, &format!("file://{}", mirror.display()), &again), "a damaged mirror");
    assert!(line.contains(rel) && line.contains("the mirror serves other bytes"), "{line}");
    assert!(!again.join(rel).exists() && !again.join(format!("{rel}.chomp-fetch.part")).exists());
}

/// A partial file of fetch's own longer than the file's size in the
/// manifest (another manifest's, say) is started again, not resumed past
/// its end: the fetch asks for the file once, whole, and ends with the
/// manifest's bytes.
#[test]
fn a_partial_file_longer_than_the_file_is_fetched_again_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("box-8x15/manifest.json");
    let files = chomp_tables::Manifest::read(&published("box-8x15")).unwrap().files;
    let total: u64 = files.values().map(|e| e.bytes).sum();
    let rel = "losses/L0060.cht";
    let good = fs::read(published("box-8x15").join(rel)).unwrap();
    // An earlier fetch's partial file: the right bytes, then 1,000 more.
    let out = tmp.path().join("out");
    fs::create_dir_all(out.join("losses")).unwrap();
    let part = out.join(format!("{rel}.chomp-fetch.part"));
    let mut long = good.clone();
    long.extend(std::iter::repeat_n(7u8, 1000));
    fs::write(&part, &long).unwrap();
    let (url, counts) = http_mirror(published("box-8x15"), |_| Serve::Whole);
    assert_ok(&fetch(&manifest, &url, &out), "a fetch over a partial file longer than the file");
    assert_eq!(fs::read(out.join(rel)).unwrap(), good);
    assert!(!part.exists());
    assert_ok(&chomp(&["verify", "--tables", out.to_str().unwrap(), "--against", manifest.to_str().unwrap()]), "identical");
    // One request a file, each file sent once and whole.
    assert_eq!(counts.requests.load(Ordering::SeqCst), files.len());
    assert_eq!(counts.sent.load(Ordering::SeqCst), total);
}

#[test]
fn a_users_own_part_file_is_never_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = published("box-8x15/manifest.json");
    let out = tmp.path().join("out");
    fs::create_dir_all(out.join("losses")).unwrap();
    // A file of the user's that happens to be named like a listed file's partial one.
    fs::write(out.join("losses/L0006.cht.part"), b"my notes").unwrap();
    let before = snapshot(&out);
    let line = assert_one_line_error(&fetch(&manifest, &format!("file://{}", published("box-8x15").display()), &out), "a user's .part");
    assert!(line.contains("did not write") && line.contains("losses/L0006.cht.part"), "{line}");
    assert_eq!(snapshot(&out), before, "every file unchanged");
}

#[test]
fn a_file_that_is_not_a_manifest_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let out = tmp.path().join("out");
    let line =
        assert_one_line_error(&fetch(&readme, &format!("file://{}", published("box-8x15").display()), &out), "a README as the manifest");
    assert!(line.contains("README.md") && line.contains("not a manifest"), "{line}");
    assert!(!line.contains("line 1 column 1"), "{line}");
    assert!(!out.exists());
}

/// Every file name under `dir` (none if it does not exist).
fn walk(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    snapshot(dir).into_iter().map(|(p, _)| p.display().to_string()).collect()
}
