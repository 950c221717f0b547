//! Getting a published table directory from a mirror: every file a
//! manifest lists, downloaded (several at once, partial files resumed with
//! HTTP Range requests), checked against the manifest's size and SHA-256,
//! and only then renamed to its final name; the manifest last.
//!
//! A mirror is any static HTTP(S) server serving a table directory (or a
//! `file://` path). Files in progress are `NAME.chomp-fetch.part` (a name
//! of fetch's own: any other file in the directory, a `NAME.part` included,
//! is someone else's and is never touched); a transfer that fails on the
//! way (a dropped connection, a 5xx, a mirror silent for the idle timeout,
//! a `file://` read that blocks) is tried again after a back-off, resuming
//! where it stopped, and a rerun after an interruption continues them. A
//! mirror that never serves a file, or a run of failures in a row, stops
//! the fetch at once. A file whose bytes differ from the manifest is
//! removed and named in the error (a partial file kept from an earlier run
//! is first fetched again whole, so that the mirror is blamed only for its
//! own bytes): nothing unverified ever lies under a final name, and a
//! directory with a `manifest.json` holds exactly the published bytes.

use crate::report::Progress;
use crate::store::{file_sha256, write_atomic, DirError, FileEntry, Manifest, ManifestError, TableDir, TableError};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// Errors of a fetch.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The manifest to fetch is missing or invalid.
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    /// The output directory is unusable.
    #[error("{0}")]
    Dir(#[from] DirError),
    /// Files could not be fetched or did not match the manifest: how many,
    /// and the first reason (one short line whatever their number).
    #[error("{} file{} not fetched: {}", .0.len(), if .0.len() == 1 { "" } else { "s" }, first_reason(.0))]
    Files(Vec<String>),
    /// The mirror address is not one this tool reads.
    #[error("{0}")]
    Source(String),
    /// The mirror served no file in this run, or failed many times in a
    /// row: the fetch stopped early.
    #[error("{}: {fetched} of {files} files fetched; run the same command again to resume", cut(.reason))]
    Stopped {
        /// Why, in a few words (the mirror, what it did).
        reason: String,
        /// Files verified in place (present before or fetched now).
        fetched: usize,
        /// Files the manifest lists.
        files: usize,
    },
}

/// `s` cut to 300 characters.
fn cut(s: &str) -> String {
    let mut line: String = s.chars().take(300).collect();
    if line.len() < s.len() {
        line.push('…');
    }
    line
}

/// How a fetch goes about its transfers.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// Files downloaded at once.
    pub jobs: usize,
    /// How long the mirror may send nothing before a transfer fails (and is retried).
    pub idle_timeout: Duration,
    /// Further tries of a file whose transfer failed on the way, after 1, 2,
    /// 4, … s (at most 30 s), each resuming where the last stopped.
    pub retries: u32,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions { jobs: 4, idle_timeout: Duration::from_secs(60), retries: 5 }
    }
}

/// Tries of a file while the mirror has served nothing in this run: a
/// mirror that is down, or that fails every request, stops the fetch after
/// these (1 + 2 s of back-off).
const TRIES_UNANSWERED: u32 = 3;

/// Failed tries in a row, over all files (a file whose bytes do not
/// verify counts as one), with nothing received between them, after which the fetch stops: a
/// mirror that goes down or answers 5xx to everything in the middle of a
/// fetch stops it in seconds, not after every file's retries.
const FAILURES_IN_A_ROW: usize = 16;

/// Why a transfer failed.
struct Failure {
    message: String,
    /// Worth another try (the connection, a timeout, a 5xx), not a fact about the file.
    again: bool,
    /// What the failure says of the mirror, should it fail this way every
    /// time (the reason the fetch stops).
    mirror: Option<String>,
}

impl Failure {
    fn again(message: String) -> Self {
        Failure { message, again: true, mirror: None }
    }
    fn last(message: String) -> Self {
        Failure { message, again: false, mirror: None }
    }
    fn mirror(mut self, mirror: String) -> Self {
        self.mirror = Some(mirror);
        self
    }
}

/// A transport error in plain words: what happened, not the library's name
/// for it (`connection refused`, not `io: Connection refused (os error 111)`).
fn plain(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => plain_io(io),
        ureq::Error::Timeout(_) => "no answer within the time limit (--idle-timeout)".to_string(),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "the connection failed".to_string(),
        e => e.to_string(),
    }
}

/// An I/O error in plain words, without the OS's error number.
fn plain_io(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => "connection refused".to_string(),
        K::ConnectionReset => "connection reset".to_string(),
        K::ConnectionAborted => "connection aborted".to_string(),
        K::TimedOut => "no answer within the time limit (--idle-timeout)".to_string(),
        K::UnexpectedEof => "the connection closed early".to_string(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error ") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

/// The first of `reasons`, cut to 300 characters, and how many others.
fn first_reason(reasons: &[String]) -> String {
    let mut line = cut(reasons.first().map_or("", String::as_str));
    if reasons.len() > 1 {
        line.push_str(&format!(" (and {} more)", reasons.len() - 1));
    }
    line
}

/// What a fetch did.
#[derive(Clone, Debug, Default)]
pub struct Fetched {
    /// Files the manifest lists (besides itself).
    pub files: usize,
    /// Of those, already present and verified before this run.
    pub present: usize,
    /// Bytes transferred by this run.
    pub transferred: u64,
}

/// Where files come from.
enum Source {
    Http { base: String, agent: ureq::Agent },
    Files { root: PathBuf, idle: Duration },
}

impl Source {
    fn new(from: &str, idle: Duration) -> Result<Self, FetchError> {
        if let Some(path) = from.strip_prefix("file://") {
            if !Path::new(path).is_dir() {
                return Err(FetchError::Source(format!("--from {from}: no such directory")));
            }
            return Ok(Source::Files { root: PathBuf::from(path), idle });
        }
        if from.starts_with("http://") || from.starts_with("https://") {
            // Idle, not total, time limits: a large table on a slow link
            // arrives as long as bytes keep coming.
            let config = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_connect(Some(Duration::from_secs(30)))
                .timeout_recv_response(Some(idle))
                .timeout_per_read(Some(idle))
                .build();
            return Ok(Source::Http { base: from.trim_end_matches('/').to_string(), agent: config.into() });
        }
        Err(FetchError::Source(format!("--from {from:?}: a mirror is an http://, https:// or file:// address")))
    }

    /// Appends the bytes of `rel` from offset `have` on to `out` (which holds
    /// `have` bytes); returns the length written after the call, which may
    /// restart from 0 when the server ignores the range.
    /// Sets `served` once the mirror has served a file's bytes.
    fn append(&self, rel: &str, have: u64, size: u64, out: &mut File, progress: &Progress, served: &AtomicBool) -> Result<u64, Failure> {
        match self {
            Source::Files { root, idle } => {
                let path = root.join(rel);
                let shown = path.display().to_string();
                let mut f = Watched::open(path, have, *idle).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::TimedOut {
                        Failure::again(format!("{shown}: {e}"))
                            .mirror(format!("the mirror {} does not open its files ({e})", root.display()))
                    } else {
                        Failure::last(format!("{shown}: {}", plain_io(&e)))
                    }
                })?;
                served.store(true, Ordering::Relaxed);
                copy(&mut f, out, size - have, progress).map(|n| have + n).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::TimedOut {
                        Failure::again(format!("{shown}: {e}")).mirror(format!("the mirror {} stops sending ({e})", root.display()))
                    } else if e.kind() == std::io::ErrorKind::Other {
                        Failure::last(format!("{shown}: {e}"))
                    } else {
                        Failure::last(format!("{shown}: {}", plain_io(&e)))
                    }
                })
            }
            Source::Http { base, agent } => {
                let url = format!("{base}/{}", url_path(rel));
                let mut req = agent.get(&url);
                if have > 0 {
                    req = req.header("Range", &format!("bytes={have}-"));
                }
                let mut resp = req.call().map_err(|e| {
                    let what = plain(&e);
                    Failure::again(format!("{url}: {what}")).mirror(format!("cannot reach the mirror {base} ({what}; check --from)"))
                })?;
                let status = resp.status().as_u16();
                let start: u64 = match status {
                    206 => have,
                    200 => {
                        // A server that ignores ranges sends it all again.
                        out.set_len(0).and_then(|()| out.seek(SeekFrom::Start(0)).map(|_| ())).map_err(|e| Failure::last(e.to_string()))?;
                        progress.done.fetch_sub(have, Ordering::Relaxed);
                        0
                    }
                    416 => return Ok(have),
                    _ => {
                        let answer = format!("{} {}", status, resp.status().canonical_reason().unwrap_or(""));
                        let answer = answer.trim_end();
                        let message = format!("{url}: the mirror answered {answer}");
                        // Overloaded or failing now, maybe not in a moment; a 404 is a fact.
                        let again = status >= 500 || status == 408 || status == 429;
                        return Err(Failure {
                            message,
                            again,
                            mirror: Some(format!("the mirror {base} answers {answer} to every request")),
                        });
                    }
                };
                served.store(true, Ordering::Relaxed);
                let mut body = resp.body_mut().as_reader();
                copy(&mut body, out, size - start, progress).map(|n| start + n).map_err(|e| {
                    let again = !e.to_string().contains("more than the manifest's");
                    let what = if e.kind() == std::io::ErrorKind::Other { e.to_string() } else { plain_io(&e) };
                    Failure { message: format!("{url}: {what}"), again, mirror: None }
                })
            }
        }
    }
}

/// A file of a `file://` mirror read by a thread of its own, so that an
/// open or a read that never returns (a FIFO with no writer, a hung network
/// file system) fails after the idle timeout instead of holding the fetch
/// for ever. The thread, blocked, is left behind; it ends when its read
/// returns or with the process.
struct Watched {
    rx: Receiver<std::io::Result<Vec<u8>>>,
    idle: Duration,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
}

impl Watched {
    /// Opens `path` at offset `from`, waiting at most `idle`.
    fn open(path: PathBuf, from: u64, idle: Duration) -> std::io::Result<Self> {
        // Two chunks ahead at most: the thread stops when the reader drops.
        let (tx, rx) = sync_channel(2);
        std::thread::Builder::new().name("fetch-file".into()).spawn(move || {
            let mut f = match File::open(&path).and_then(|mut f| f.seek(SeekFrom::Start(from)).map(|_| f)) {
                Ok(f) => f,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            // An empty chunk first says the file is open; one later, that it ended.
            if tx.send(Ok(Vec::new())).is_err() {
                return;
            }
            loop {
                let mut buf = vec![0u8; 1 << 16];
                match f.read(&mut buf) {
                    Ok(n) => {
                        buf.truncate(n);
                        if tx.send(Ok(buf)).is_err() || n == 0 {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        })?;
        let mut w = Watched { rx, idle, chunk: Vec::new(), at: 0, ended: false };
        match w.next("did not open")? {
            Some(_) => Ok(w),
            None => Err(std::io::Error::other("the reading thread ended")),
        }
    }

    /// The next chunk, or a timed-out error saying what the file `did`.
    fn next(&mut self, did: &str) -> std::io::Result<Option<Vec<u8>>> {
        match self.rx.recv_timeout(self.idle) {
            Ok(Ok(c)) => Ok(Some(c)),
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Timeout) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("{did} within {} s (--idle-timeout)", self.idle.as_secs_f64()),
            )),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
        }
    }
}

impl Read for Watched {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            if self.ended {
                return Ok(0);
            }
            match self.next("sent nothing")? {
                Some(c) if !c.is_empty() => (self.chunk, self.at) = (c, 0),
                _ => {
                    self.ended = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.chunk.len() - self.at);
        out[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Copies `from` to the end of `to`, at most `limit` bytes (the rest of
/// the file's size in the manifest: a source that sends more is cut there
/// and is an error), counting the bytes in `progress`.
fn copy(from: &mut impl Read, to: &mut File, limit: u64, progress: &Progress) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        if n == limit {
            // One byte more would be past the manifest's size.
            let mut one = [0u8; 1];
            return match from.read(&mut one) {
                Ok(0) => Ok(n),
                Ok(_) => Err(std::io::Error::other(format!("the mirror sends more than the manifest's {limit} bytes (cut there)"))),
                Err(e) => Err(e),
            };
        }
        let want = buf.len().min(usize::try_from(limit - n).unwrap_or(usize::MAX));
        let k = match from.read(&mut buf[..want]) {
            Ok(0) => return Ok(n),
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..k])?;
        n += k as u64;
        progress.done.fetch_add(k as u64, Ordering::Relaxed);
    }
}

/// `rel` as the path of a URL: each `/`-separated name percent-encoded
/// but for the characters RFC 3986 leaves unreserved.
fn url_path(rel: &str) -> String {
    let mut out = String::with_capacity(rel.len());
    for (i, name) in rel.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in name.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Names a manifest may not list: what fetch and the writer keep beside the
/// tables (the manifest itself, the lock, partial and temporary files, the
/// scratch folder).
fn reserved(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel == "manifest.json" || name == ".lock" || name.ends_with(".part") || name.ends_with(".tmp") || rel.starts_with(".work/")
}

/// Files under `out` that a fetch of `m` did not write and must not touch:
/// anything but a listed file with its published bytes, a listed file's
/// partial file ([`part_path`]: a plain `NAME.part` is someone else's), and
/// the lock. At most three, as relative paths.
fn foreign_files(out: &Path, m: &Listing) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(out.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((e.path(), rel));
                continue;
            }
            let published =
                |entry: &crate::store::FileEntry| file_sha256(&e.path()).is_ok_and(|(len, sha)| len == entry.bytes && sha == entry.sha256);
            let ours = rel == ".lock"
                || rel.strip_suffix(PART).is_some_and(|base| m.files.contains_key(base))
                || m.files.get(&rel).is_some_and(published);
            if !ours {
                found.push(rel);
                if found.len() >= 3 {
                    return found;
                }
            }
        }
    }
    found
}

/// The suffix of fetch's partial files: a name of its own, so that a
/// user's `NAME.part` is never taken for one, resumed or removed.
pub const PART: &str = ".chomp-fetch.part";

/// The name a file is downloaded under before it is verified: `NAME.chomp-fetch.part`.
pub fn part_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(PART);
    path.with_file_name(name)
}

/// What a fetch needs of a published manifest: the files it lists, and the
/// level tables' manifest itself (`None` for a few-row directory's).
struct Listing {
    files: BTreeMap<String, FileEntry>,
    levels: Option<Manifest>,
}

/// The manifest at `path` (of level tables or of a few-row directory,
/// checked), or why it is none: a file that is not JSON at all (a README
/// given by mistake) is said to be no manifest.
fn read_manifest(path: &Path) -> Result<(Listing, Vec<u8>), FetchError> {
    let text = fs::read(path).map_err(|e| ManifestError::Table(TableError::io(path, e)))?;
    if serde_json::from_slice::<serde_json::Value>(&text).is_err() {
        return Err(FetchError::Source(format!(
            "--manifest {}: not a manifest (a published manifest is a JSON file, e.g. results/box-8x15/manifest.json)",
            path.display()
        )));
    }
    if crate::fewrow::manifest_format(&text).as_deref() == Some(crate::fewrow::files::FORMAT_NAME) {
        let m = crate::fewrow::FewRowManifest::parse(path, std::str::from_utf8(&text).unwrap_or(""))
            .map_err(|e| FetchError::Source(format!("--manifest {e}")))?;
        return Ok((Listing { files: m.files, levels: None }, text));
    }
    let m = Manifest::read_file(path)?;
    Ok((Listing { files: m.files.clone(), levels: Some(m) }, text))
}

/// Removes the folders under `out` that this fetch made and left empty
/// (every file of theirs failed), and `out` itself if it made it.
fn remove_empty_folders(out: &Path, m: &Listing, before: &HashSet<PathBuf>, existed: bool) {
    let mut dirs: Vec<PathBuf> =
        m.files.keys().flat_map(|rel| out.join(rel).ancestors().skip(1).map(Path::to_path_buf).collect::<Vec<_>>()).collect();
    // Deepest first: a folder empties once its own folders are gone.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for d in dirs {
        if d.starts_with(out) && d != out && !before.contains(&d) {
            let _ = fs::remove_dir(d);
        }
    }
    if !existed {
        let _ = fs::remove_dir(out);
    }
}

/// Fetches every file `manifest` (a published manifest file) lists from
/// mirror `from` into `out`, `jobs` files at a time, then writes the
/// manifest. Rerun after an interruption, it keeps verified files and
/// resumes partial ones.
///
/// # Errors
/// [`FetchError`]: an invalid manifest, an unusable directory, the files
/// that could not be fetched or did not match (each named), or a mirror
/// that served nothing or failed many times in a row (the fetch stopped);
/// the manifest is then not written, and no folder it made is left empty.
pub fn fetch(manifest: &Path, from: &str, out: &Path, opts: &FetchOptions, progress: &Progress) -> Result<Fetched, FetchError> {
    let (m, text) = read_manifest(manifest)?;
    if let Some(rel) = m.files.keys().find(|rel| reserved(rel)) {
        return Err(FetchError::Source(format!(
            "{}: lists {rel}, a name reserved for the directory's own files: refused",
            manifest.display()
        )));
    }
    let source = Source::new(from, opts.idle_timeout)?;
    let dir = TableDir::new(out);
    let held = match &m.levels {
        Some(levels) => dir.read_manifest().ok().map(|held| held.same_job(levels) && held.checksum == levels.checksum),
        None => fs::read(dir.manifest_path()).ok().map(|held| held == text),
    };
    if let Some(same) = held {
        if !same {
            return Err(DirError::Refused(format!("{}: holds another table directory; choose a new or empty one", out.display())).into());
        }
    } else {
        // No manifest of these tables: only what an interrupted fetch of
        // them leaves may be there; anything else is someone else's.
        let foreign = foreign_files(out, &m);
        if !foreign.is_empty() {
            let more = if foreign.len() >= 3 { ", …" } else { "" };
            return Err(DirError::Refused(format!(
                "{}: holds files this fetch did not write ({}{more}); choose a new or empty directory",
                out.display(),
                foreign.join(", ")
            ))
            .into());
        }
    }
    let existed = out.exists();
    let folders: HashSet<PathBuf> = m
        .files
        .keys()
        .flat_map(|rel| out.join(rel).ancestors().skip(1).map(Path::to_path_buf).collect::<Vec<_>>())
        .filter(|d| d.is_dir())
        .collect();
    let lock = dir.lock()?;
    let result = fetch_files(&m, &source, out, opts, progress);
    let result = result.and_then(|report| {
        write_atomic(&dir.manifest_path(), &text).map_err(|e| FetchError::Files(vec![e.to_string()]))?;
        Ok(report)
    });
    if result.is_err() {
        // Folders made for files that never came are not left behind.
        drop(lock);
        remove_empty_folders(out, &m, &folders, existed);
    }
    result
}

/// Fetches the files of `m` that `out` lacks (the lock held).
fn fetch_files(m: &Listing, source: &Source, out: &Path, opts: &FetchOptions, progress: &Progress) -> Result<Fetched, FetchError> {
    progress.total.store(m.files.values().map(|e| e.bytes).sum(), Ordering::Relaxed);
    let mut report = Fetched { files: m.files.len(), ..Default::default() };
    let mut todo = Vec::new();
    for (rel, entry) in &m.files {
        let path = out.join(rel);
        match file_sha256(&path) {
            Ok((len, sha)) if len == entry.bytes && sha == entry.sha256 => {
                report.present += 1;
                progress.done.fetch_add(len, Ordering::Relaxed);
            }
            Ok(_) => {
                // A file under its final name that is not the published one
                // (an older run's, a damaged copy) goes before anything is fetched.
                fs::remove_file(&path).map_err(|e| FetchError::Files(vec![format!("{}: {e}", path.display())]))?;
                todo.push(rel.clone());
            }
            Err(_) => todo.push(rel.clone()),
        }
    }
    // Largest first: the long transfers start at once.
    todo.sort_by_key(|rel| std::cmp::Reverse(m.files[rel].bytes));
    let queue = Mutex::new(todo.into_iter());
    let failures = Mutex::new(Vec::new());
    let transferred = AtomicU64::new(0);
    let fetched = AtomicUsize::new(report.present);
    let run = Run {
        source,
        manifest: m,
        out,
        opts,
        progress,
        served: AtomicBool::new(false),
        in_a_row: AtomicUsize::new(0),
        stop: Mutex::new(None),
    };
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                if run.stopped() {
                    return;
                }
                let Some(rel) = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next() else { return };
                match run.fetch_one(&rel) {
                    Ok(n) => {
                        transferred.fetch_add(n, Ordering::Relaxed);
                        fetched.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(e),
                }
            });
        }
    });
    report.transferred = transferred.into_inner();
    if let Some(reason) = run.stop.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        return Err(FetchError::Stopped { reason, fetched: fetched.into_inner(), files: report.files });
    }
    let mut failures = failures.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !failures.is_empty() {
        failures.sort();
        return Err(FetchError::Files(failures));
    }
    Ok(report)
}

/// One fetch's shared state.
struct Run<'a> {
    source: &'a Source,
    manifest: &'a Listing,
    out: &'a Path,
    opts: &'a FetchOptions,
    progress: &'a Progress,
    /// The mirror has served a file's bytes in this run.
    served: AtomicBool,
    /// Failures since bytes last arrived ([`FAILURES_IN_A_ROW`]).
    in_a_row: AtomicUsize,
    /// Why the fetch stops, once it does: the workers take no more files.
    stop: Mutex<Option<String>>,
}

impl Run<'_> {
    fn stopped(&self) -> bool {
        self.stop.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some()
    }

    fn stop(&self, reason: String) {
        self.stop.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(reason);
    }

    /// Waits 1, 2, 4, … s (at most 30) before try `tries + 1`; false if
    /// the fetch stops meanwhile.
    fn back_off(&self, tries: u32) -> bool {
        let end = std::time::Instant::now() + Duration::from_secs((1u64 << (tries - 1).min(5)).min(30));
        while !self.stopped() {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
        false
    }

    /// Counts a failure; stops the fetch at [`FAILURES_IN_A_ROW`].
    fn failed(&self, message: &str) {
        let n = self.in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= FAILURES_IN_A_ROW {
            self.stop(format!("stopped after {n} failures in a row with nothing received (the last: {})", cut(message)));
        }
    }

    /// Downloads one listed file, resuming its partial file and trying
    /// again after a back-off while failures are worth it, and verifies it
    /// before renaming it; returns the bytes transferred. A partial file
    /// kept from before that does not verify is fetched again whole before
    /// the mirror is blamed.
    fn fetch_one(&self, rel: &str) -> Result<u64, String> {
        let entry = &self.manifest.files[rel];
        let path = self.out.join(rel);
        let part = part_path(&path);
        let shown = path.display().to_string();
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let mut transferred = 0;
        let mut whole = false;
        loop {
            let (before, len) = self.transfer(rel, &part)?;
            transferred += len.saturating_sub(before);
            let verified = file_sha256(&part).map_err(|e| format!("{shown}: {e}"))?;
            if verified.0 == entry.bytes && verified.1 == entry.sha256 {
                fs::rename(&part, &path).map_err(|e| format!("{shown}: {e}"))?;
                return Ok(transferred);
            }
            let _ = fs::remove_file(&part);
            self.progress.done.fetch_sub(len.min(self.progress.done.load(Ordering::Relaxed)), Ordering::Relaxed);
            if before > 0 && !whole {
                // The bytes kept from before may be the wrong ones, not the mirror's.
                whole = true;
                continue;
            }
            let message = if verified.0 != entry.bytes {
                format!("{rel}: the mirror sent {} bytes, the manifest lists {} (removed; run again to retry)", verified.0, entry.bytes)
            } else {
                format!("{rel}: SHA-256 differs from the manifest: the mirror serves other bytes (removed)")
            };
            self.failed(&message);
            return Err(message);
        }
    }

    /// Brings `part` to the file's size in the manifest, resuming what it
    /// holds (a partial file longer than that is started again); returns
    /// its length before and after.
    fn transfer(&self, rel: &str, part: &Path) -> Result<(u64, u64), String> {
        let entry = &self.manifest.files[rel];
        let shown = self.out.join(rel).display().to_string();
        let mut file = OpenOptions::new()
            .create(true)
            .append(false)
            .read(true)
            .write(true)
            .truncate(false)
            .open(part)
            .map_err(|e| format!("{shown}: {e}"))?;
        let mut have = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
        if have > entry.bytes {
            file.set_len(0).map_err(|e| format!("{shown}: {e}"))?;
            have = 0;
        }
        self.progress.done.fetch_add(have, Ordering::Relaxed);
        let before = have;
        let mut tries = 0;
        let len = loop {
            file.seek(SeekFrom::Start(have)).map_err(|e| format!("{shown}: {e}"))?;
            if have >= entry.bytes {
                break have;
            }
            tries += 1;
            match self.source.append(rel, have, entry.bytes, &mut file, self.progress, &self.served) {
                Ok(len) => {
                    self.in_a_row.store(0, Ordering::Relaxed);
                    break len;
                }
                Err(f) => {
                    let had = have;
                    have = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
                    if have > had {
                        self.in_a_row.store(0, Ordering::Relaxed);
                    }
                    self.failed(&f.message);
                    let served = self.served.load(Ordering::Relaxed);
                    let most = if served { self.opts.retries + 1 } else { TRIES_UNANSWERED.min(self.opts.retries + 1) };
                    if f.again && tries < most && self.back_off(tries) {
                        continue;
                    }
                    // A partial file with nothing in it resumes nothing: not left behind.
                    if have == 0 {
                        drop(file);
                        let _ = fs::remove_file(part);
                    }
                    if f.again && !served {
                        self.stop(f.mirror.unwrap_or_else(|| f.message.clone()));
                    }
                    return Err(f.message);
                }
            }
        };
        file.sync_all().map_err(|e| format!("{shown}: {e}"))?;
        Ok((before, len))
    }
}
