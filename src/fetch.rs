//! Getting a published table directory from a mirror: every file a
//! manifest lists, downloaded (several at once, partial files resumed with
//! HTTP Range requests), checked against the manifest's size and SHA-256,
//! and only then renamed to its final name; the manifest last.
//!
//! A mirror is any static HTTP(S) server serving a table directory (or a
//! `file://` path). Files in progress are `NAME.part`; a transfer that
//! fails on the way (a dropped connection, a 5xx, a mirror silent for the
//! idle timeout) is tried again after a back-off, resuming where it
//! stopped, and a rerun after an interruption continues them. A mirror that
//! never answers stops the fetch at once. A file whose bytes differ from the
//! manifest is removed and named in the error: nothing unverified ever lies
//! under a final name, and a directory with a `manifest.json` holds exactly
//! the published bytes.

use crate::store::{file_sha256, write_atomic, DirError, Manifest, ManifestError, TableDir, TableError};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// The mirror never answered in this run: the fetch stopped early.
    #[error("the mirror does not answer ({}): {fetched} of {files} files fetched; run the same command again to resume", cut(.reason))]
    Unreachable {
        /// The last failure.
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

/// Tries of a file while the mirror has not answered once in this run: a
/// mirror that is down stops the fetch after these (1 + 2 s of back-off).
const TRIES_UNANSWERED: u32 = 3;

/// Why a transfer failed.
struct Failure {
    message: String,
    /// Worth another try (the connection, a timeout, a 5xx), not a fact about the file.
    again: bool,
}

impl Failure {
    fn again(message: String) -> Self {
        Failure { message, again: true }
    }
    fn last(message: String) -> Self {
        Failure { message, again: false }
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

/// Progress shared with the caller while files download.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of every listed file.
    pub total: AtomicU64,
    /// Bytes on disk so far (present, resumed and transferred).
    pub done: AtomicU64,
}

/// Where files come from.
enum Source {
    Http { base: String, agent: ureq::Agent },
    Files(PathBuf),
}

impl Source {
    fn new(from: &str, idle: Duration) -> Result<Self, FetchError> {
        if let Some(path) = from.strip_prefix("file://") {
            if !Path::new(path).is_dir() {
                return Err(FetchError::Source(format!("--from {from}: no such directory")));
            }
            return Ok(Source::Files(PathBuf::from(path)));
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
    /// Sets `answered` once the mirror has answered a request.
    fn append(&self, rel: &str, have: u64, size: u64, out: &mut File, progress: &Progress, answered: &AtomicBool) -> Result<u64, Failure> {
        match self {
            Source::Files(root) => {
                let path = root.join(rel);
                let local = |e: std::io::Error| Failure::last(format!("{}: {e}", path.display()));
                let mut f = File::open(&path).map_err(local)?;
                answered.store(true, Ordering::Relaxed);
                f.seek(SeekFrom::Start(have)).map_err(local)?;
                copy(&mut f, out, size - have, progress).map(|n| have + n).map_err(|e| Failure::last(format!("{}: {e}", path.display())))
            }
            Source::Http { base, agent } => {
                let url = format!("{base}/{}", url_path(rel));
                let mut req = agent.get(&url);
                if have > 0 {
                    req = req.header("Range", &format!("bytes={have}-"));
                }
                let mut resp = req.call().map_err(|e| Failure::again(format!("{url}: {e}")))?;
                answered.store(true, Ordering::Relaxed);
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
                        let message = format!("{url}: the mirror answered {} {}", status, resp.status().canonical_reason().unwrap_or(""));
                        // Overloaded or failing now, maybe not in a moment; a 404 is a fact.
                        let again = status >= 500 || status == 408 || status == 429;
                        return Err(Failure { message, again });
                    }
                };
                let mut body = resp.body_mut().as_reader();
                copy(&mut body, out, size - start, progress).map(|n| start + n).map_err(|e| {
                    let again = !e.to_string().contains("more than the manifest's");
                    Failure { message: format!("{url}: {e}"), again }
                })
            }
        }
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
/// `.part`, and the lock. At most three, as relative paths.
fn foreign_files(out: &Path, m: &Manifest) -> Vec<String> {
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
                || rel.strip_suffix(".part").is_some_and(|base| m.files.contains_key(base))
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

/// The name a file is downloaded under before it is verified.
pub fn part_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    path.with_file_name(name)
}

/// Fetches every file `manifest` (a published manifest file) lists from
/// mirror `from` into `out`, `jobs` files at a time, then writes the
/// manifest. Rerun after an interruption, it keeps verified files and
/// resumes partial ones.
///
/// # Errors
/// [`FetchError`]: an invalid manifest, an unusable directory, or the files
/// that could not be fetched or did not match (each named); the manifest is
/// then not written.
pub fn fetch(manifest: &Path, from: &str, out: &Path, opts: &FetchOptions, progress: &Progress) -> Result<Fetched, FetchError> {
    let m = Manifest::read_file(manifest)?;
    let text = fs::read(manifest).map_err(|e| ManifestError::Table(TableError::io(manifest, e)))?;
    if let Some(rel) = m.files.keys().find(|rel| reserved(rel)) {
        return Err(FetchError::Source(format!(
            "{}: lists {rel}, a name reserved for the directory's own files: refused",
            manifest.display()
        )));
    }
    let source = Source::new(from, opts.idle_timeout)?;
    let dir = TableDir::new(out);
    if let Ok(held) = dir.read_manifest() {
        if !held.same_job(&m) || held.checksum != m.checksum {
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
    let lock = dir.lock()?;
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
    let run = Run { source: &source, manifest: &m, out, opts, progress, answered: AtomicBool::new(false), down: Mutex::new(None) };
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                if run.down.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_some() {
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
    if let Some(reason) = run.down.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        // Folders made for files that never came are not left behind.
        drop(lock);
        for rel in m.files.keys() {
            if let Some(parent) = out.join(rel).parent().filter(|p| *p != out) {
                let _ = fs::remove_dir(parent);
            }
        }
        if !existed {
            let _ = fs::remove_dir(out);
        }
        return Err(FetchError::Unreachable { reason, fetched: fetched.into_inner(), files: report.files });
    }
    let mut failures = failures.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !failures.is_empty() {
        failures.sort();
        return Err(FetchError::Files(failures));
    }
    write_atomic(&dir.manifest_path(), &text).map_err(|e| FetchError::Files(vec![e.to_string()]))?;
    Ok(report)
}

/// One fetch's shared state.
struct Run<'a> {
    source: &'a Source,
    manifest: &'a Manifest,
    out: &'a Path,
    opts: &'a FetchOptions,
    progress: &'a Progress,
    /// The mirror has answered a request in this run.
    answered: AtomicBool,
    /// Set when the mirror never answered: the workers take no more files.
    down: Mutex<Option<String>>,
}

impl Run<'_> {
    /// Downloads one listed file, resuming its `.part` and trying again
    /// after a back-off while failures are worth it, and verifies it before
    /// renaming it; returns the bytes transferred.
    fn fetch_one(&self, rel: &str) -> Result<u64, String> {
        let entry = &self.manifest.files[rel];
        let path = self.out.join(rel);
        let part = part_path(&path);
        let shown = path.display().to_string();
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(false)
            .read(true)
            .write(true)
            .truncate(false)
            .open(&part)
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
            match self.source.append(rel, have, entry.bytes, &mut file, self.progress, &self.answered) {
                Ok(len) => break len,
                Err(f) => {
                    have = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
                    let answered = self.answered.load(Ordering::Relaxed);
                    let most = if answered { self.opts.retries + 1 } else { TRIES_UNANSWERED.min(self.opts.retries + 1) };
                    if f.again && tries < most && self.down.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_none() {
                        std::thread::sleep(Duration::from_secs((1u64 << (tries - 1).min(5)).min(30)));
                        continue;
                    }
                    // A partial file with nothing in it resumes nothing: not left behind.
                    if have == 0 {
                        drop(file);
                        let _ = fs::remove_file(&part);
                    }
                    if f.again && !answered {
                        self.down.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(f.message.clone());
                    }
                    return Err(f.message);
                }
            }
        };
        file.sync_all().map_err(|e| format!("{shown}: {e}"))?;
        drop(file);
        let transferred = len.saturating_sub(before);
        let verified = file_sha256(&part).map_err(|e| format!("{shown}: {e}"))?;
        if verified.0 != entry.bytes || verified.1 != entry.sha256 {
            let _ = fs::remove_file(&part);
            self.progress.done.fetch_sub(len.min(self.progress.done.load(Ordering::Relaxed)), Ordering::Relaxed);
            return Err(if verified.0 != entry.bytes {
                format!("{rel}: the mirror sent {} bytes, the manifest lists {} (removed; run again to retry)", verified.0, entry.bytes)
            } else {
                format!("{rel}: SHA-256 differs from the manifest: the mirror serves other bytes (removed)")
            });
        }
        fs::rename(&part, &path).map_err(|e| format!("{shown}: {e}"))?;
        Ok(transferred)
    }
}
