//! The connections `chomp serve` holds: each one's activity, the cap on how
//! many are served at once, and the guard on each socket.
//!
//! - A connection whose writes make no progress for the write timeout (a
//!   client that sends requests and never reads the answers) is closed. What
//!   it can leave unsent is bounded by hyper's write buffer
//!   ([`super::MAX_HEAD`]) and the kernel's socket buffer.
//! - At the cap, a newcomer does not wait in the listen queue behind the
//!   connections that hold every slot: the server closes the connection that
//!   has been stalled longest (its writes waiting at least [`GRACE`]) or, if
//!   none is, the one idle longest (no request being answered, no byte for at
//!   least [`GRACE`]), and serves the newcomer in its place. A connection
//!   answering a request is never closed to make room.
//! - hyper answers a request it cannot parse with an empty 400 (or 414,
//!   431); the guard writes those with the API's JSON error body instead.
//! - hyper closes a connection that opens with HTTP/2's preface without a
//!   word; the guard answers it with a JSON 400 saying the server speaks
//!   HTTP/1.1, then ends it.

use serde_json::json;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio::time::Sleep;

/// How long a connection must have been stalled or idle before a newcomer
/// at the cap may take its place.
pub const GRACE: Duration = Duration::from_secs(1);

/// No time recorded (e.g. no write waiting).
const NEVER: u64 = u64::MAX;

/// What one connection is doing, read by [`Registry::evict_one`].
pub struct Activity {
    /// Milliseconds since the registry's start of the last byte read or written.
    last: AtomicU64,
    /// When a write began to wait for the client ([`NEVER`]: none waits).
    stalled_since: AtomicU64,
    /// Requests being answered.
    answering: AtomicU32,
    /// Chosen to be closed (not chosen twice).
    closing: AtomicBool,
    /// Wakes the connection's task to close it (a stored permit: no lost wake-up).
    close: Notify,
}

impl Activity {
    /// Resolves when the server has chosen to close this connection.
    pub async fn closed(&self) {
        self.close.notified().await
    }

    /// Counts a request being answered until the guard is dropped.
    pub fn answering(self: &Arc<Self>) -> Answering {
        self.answering.fetch_add(1, Ordering::Relaxed);
        Answering(self.clone())
    }
}

/// A request being answered ([`Activity::answering`]).
pub struct Answering(Arc<Activity>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connections served, at most `cap` at once.
pub struct Registry {
    start: Instant,
    cap: usize,
    next: AtomicU64,
    conns: Mutex<HashMap<u64, Arc<Activity>>>,
    /// Woken when a connection ends.
    freed: Notify,
}

/// A connection's place in the registry; dropping it frees the place.
pub struct Slot {
    registry: Arc<Registry>,
    id: u64,
    pub activity: Arc<Activity>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
        self.registry.freed.notify_waiters();
    }
}

impl Registry {
    pub fn new(cap: usize) -> Arc<Self> {
        Arc::new(Registry { start: Instant::now(), cap, next: AtomicU64::new(0), conns: Mutex::default(), freed: Notify::new() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        // A panic elsewhere leaves the map whole (every change is one insert or remove).
        self.conns.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Connections held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// A place if one is free.
    fn try_take(self: &Arc<Self>) -> Option<Slot> {
        let mut conns = self.lock();
        if conns.len() >= self.cap {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            last: AtomicU64::new(self.now()),
            stalled_since: AtomicU64::new(NEVER),
            answering: AtomicU32::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        conns.insert(id, activity.clone());
        Some(Slot { registry: self.clone(), id, activity })
    }

    /// Chooses the connection stalled longest (at least [`GRACE`]), else the
    /// one idle longest (at least [`GRACE`], nothing being answered), and
    /// tells it to close. Whether one was chosen.
    pub fn evict_one(&self) -> bool {
        let now = self.now();
        let grace = GRACE.as_millis() as u64;
        let conns = self.lock();
        let open = || conns.values().filter(|a| !a.closing.load(Ordering::Relaxed));
        let stalled = open()
            .filter_map(|a| {
                let since = a.stalled_since.load(Ordering::Relaxed);
                (since != NEVER && now.saturating_sub(since) >= grace).then_some((since, a))
            })
            .min_by_key(|(since, _)| *since);
        let idle = || {
            open()
                .filter_map(|a| {
                    let last = a.last.load(Ordering::Relaxed);
                    let quiet = a.answering.load(Ordering::Relaxed) == 0 && a.stalled_since.load(Ordering::Relaxed) == NEVER;
                    (quiet && now.saturating_sub(last) >= grace).then_some((last, a))
                })
                .min_by_key(|(last, _)| *last)
        };
        match stalled.or_else(idle) {
            Some((_, a)) => {
                a.closing.store(true, Ordering::Relaxed);
                a.close.notify_one();
                true
            }
            None => false,
        }
    }

    /// A place, waiting at most `wait`: at the cap, a stalled or idle
    /// connection is closed to make room ([`Registry::evict_one`]); `None`
    /// if every connection kept answering for the whole wait.
    pub async fn admit(self: &Arc<Self>, wait: Duration) -> Option<Slot> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(slot) = self.try_take() {
                return Some(slot);
            }
            self.evict_one();
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            // Woken when a place frees; looked at again every 100 ms for a newly stalled or idle connection.
            let _ = tokio::time::timeout((deadline - now).min(Duration::from_millis(100)), freed).await;
        }
    }
}

/// A socket whose progress is recorded in its [`Activity`], whose writes
/// fail once they have waited `write_timeout` without progress, and whose
/// bare error answers from hyper get a JSON body ([`json_error_head`]).
pub struct Guarded<T> {
    io: T,
    slot: Arc<Activity>,
    registry: Arc<Registry>,
    write_timeout: Duration,
    /// Armed while a write waits for the client.
    stall: Option<Pin<Box<Sleep>>>,
    /// A rewritten answer still to send, and how much of it is sent.
    pending: Vec<u8>,
    sent: usize,
    /// The connection's first bytes have been looked at ([`is_h2_preface`]).
    looked: bool,
    /// It opened with HTTP/2's preface: the 400 is sent, then reads end.
    refusing: bool,
}

impl<T> Guarded<T> {
    pub fn new(io: T, slot: &Slot, write_timeout: Duration) -> Self {
        Guarded {
            io,
            slot: slot.activity.clone(),
            registry: slot.registry.clone(),
            write_timeout,
            stall: None,
            pending: Vec::new(),
            sent: 0,
            looked: false,
            refusing: false,
        }
    }

    fn progress(&mut self) {
        self.stall = None;
        self.slot.stalled_since.store(NEVER, Ordering::Relaxed);
        self.slot.last.store(self.registry.now(), Ordering::Relaxed);
    }

    /// A write waits: arms the timer at the first wait; an error once it has run out.
    fn waiting(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if self.stall.is_none() {
            self.slot.stalled_since.store(self.registry.now(), Ordering::Relaxed);
            self.stall = Some(Box::pin(tokio::time::sleep(self.write_timeout)));
        }
        match self.stall.as_mut().map(|s| s.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client read nothing for {} s", self.write_timeout.as_secs_f64()),
            )),
            _ => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> Guarded<T> {
    /// Records what a write of the socket did: progress, or a wait (an
    /// error once it has lasted the write timeout).
    fn wrote(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match r {
            Poll::Ready(Ok(n)) => {
                self.progress();
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx).map(Err),
        }
    }

    /// Sends what is left of a rewritten answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.pending.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.pending[self.sent..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.sent += n;
                    self.progress();
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return self.waiting(cx).map(Err),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.refusing {
            // The 400 first; then the end of the reads, and hyper closes the connection.
            ready!(this.poll_pending(cx))?;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let r = ready!(Pin::new(&mut this.io).poll_read(cx, buf));
        if buf.filled().len() > before {
            let now = this.registry.now();
            this.slot.last.store(now, Ordering::Relaxed);
            if !std::mem::replace(&mut this.looked, true) && is_h2_preface(&buf.filled()[before..]) {
                // hyper would close it without a word: say why instead, and read no further.
                buf.set_filled(before);
                this.pending = json_answer("400 Bad Request", "HTTP/2 is not served: this server speaks HTTP/1.1 (e.g. curl --http1.1)");
                this.sent = 0;
                this.refusing = true;
                ready!(this.poll_pending(cx))?;
                return Poll::Ready(Ok(()));
            }
        }
        Poll::Ready(r)
    }
}

/// HTTP/2's connection preface (RFC 9113, 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Whether a connection's first bytes are (the start of) HTTP/2's preface.
fn is_h2_preface(first: &[u8]) -> bool {
    let n = first.len().min(H2_PREFACE.len());
    n >= 3 && first[..n] == H2_PREFACE[..n]
}

/// A whole answer, `status` (e.g. `400 Bad Request`) with the API's JSON
/// error body, that closes the connection.
fn json_answer(status: &str, error: &str) -> Vec<u8> {
    let body = json!({ "error": error }).to_string();
    format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
        .into_bytes()
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        if let Some(json) = json_error_head(buf) {
            // hyper closes the connection after these answers: nothing follows them.
            this.pending = json;
            this.sent = 0;
            return match this.poll_pending(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                _ => Poll::Ready(Ok(buf.len())),
            };
        }
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.wrote(cx, r)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        let mut non_empty = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (non_empty.next(), non_empty.next()) {
            if json_error_head(only).is_some() {
                return Pin::new(this).poll_write(cx, only);
            }
        }
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.wrote(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        match Pin::new(&mut this.io).poll_flush(cx) {
            Poll::Pending => this.waiting(cx).map(Err),
            r => r,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// hyper's own answer to a request it could not parse (a 4xx or 5xx head
/// with `content-length: 0` and nothing after it; the API's own errors
/// always have a JSON body) rewritten with the API's JSON error body.
pub fn json_error_head(buf: &[u8]) -> Option<Vec<u8>> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    if end + 4 != buf.len() {
        return None;
    }
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    if !(400..600).contains(&status) {
        return None;
    }
    let headers: Vec<&str> = lines.collect();
    if !headers.iter().any(|h| h.eq_ignore_ascii_case("content-length: 0")) {
        return None;
    }
    let error = match status {
        400 => "bad request: not a valid HTTP/1.1 request (request line or headers)".to_string(),
        414 => "request line too long".to_string(),
        431 => format!("request head too large (at most {} KiB)", super::MAX_HEAD >> 10),
        s => format!("error {s}"),
    };
    let body = json!({ "error": error }).to_string();
    let mut out = head.split("\r\n").next()?.to_string();
    for h in headers {
        if h.eq_ignore_ascii_case("content-length: 0") {
            out.push_str(&format!("\r\ncontent-type: application/json\r\ncontent-length: {}", body.len()));
        } else {
            out.push_str("\r\n");
            out.push_str(h);
        }
    }
    out.push_str("\r\n\r\n");
    out.push_str(&body);
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bare_errors_get_a_json_body_and_nothing_else_changes() {
        let bare = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Sun, 06 Dec 2026 10:00:00 GMT\r\n\r\n";
        let got = String::from_utf8(json_error_head(bare).unwrap()).unwrap();
        let (head, body) = got.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n") && head.contains("content-type: application/json"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())) && head.contains("date: Sun"), "{head}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().starts_with("bad request"), "{body}");
        assert!(String::from_utf8(json_error_head(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n").unwrap())
            .unwrap()
            .contains("request head too large (at most 16 KiB)"));
        assert!(is_h2_preface(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04") && is_h2_preface(b"PRI * HT"));
        assert!(!is_h2_preface(b"GET / HTTP/1.1\r\n") && !is_h2_preface(b"PR") && !is_h2_preface(b"PRIX"));
        // Answers with a body, successes and partial heads are left alone.
        assert!(json_error_head(b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\n").is_none());
        assert!(json_error_head(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(json_error_head(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
        assert!(json_error_head(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}").is_none());
    }

    #[test]
    fn at_the_cap_a_stalled_connection_goes_first_then_an_idle_one_never_a_busy_one() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let r = Registry::new(3);
            let (busy, idle, stalled) = (r.try_take().unwrap(), r.try_take().unwrap(), r.try_take().unwrap());
            assert!(r.try_take().is_none());
            let _answering = busy.activity.answering();
            // Nobody has been quiet for the grace yet.
            assert!(!r.evict_one());
            // Stalled and idle for longer than the grace.
            stalled.activity.stalled_since.store(r.now(), Ordering::Relaxed);
            tokio::time::sleep(GRACE + Duration::from_millis(100)).await;
            assert!(r.evict_one());
            assert!(stalled.activity.closing.load(Ordering::Relaxed) && !idle.activity.closing.load(Ordering::Relaxed));
            assert!(r.evict_one());
            assert!(idle.activity.closing.load(Ordering::Relaxed));
            // The busy one is never chosen.
            assert!(!r.evict_one() && !busy.activity.closing.load(Ordering::Relaxed));
            // Once the stalled one's task ends, a newcomer gets its place.
            let newcomer = {
                let r = r.clone();
                tokio::spawn(async move { r.admit(Duration::from_secs(5)).await.is_some() })
            };
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(stalled);
            assert!(newcomer.await.unwrap());
            assert_eq!(r.len(), 2);
            drop(idle);
            assert_eq!(r.len(), 1);
        });
    }
}
