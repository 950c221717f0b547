//! `chomp serve`: the binary started on a free port, spoken to in raw HTTP/1.1
//! over `TcpStream`, compared with `chomp query --json` and `chomp play --json`.

use crate::common::binary::BIN;
use crate::common::{assert_ok, chomp, text, Range, SplitMix};
use crate::play::{random_position, BOX};
use chomp_tables::{Position, Tables};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LOSSES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/results/losses-100");

/// A running `chomp serve`, stopped when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_with(args, Stdio::null())
    }

    /// A server whose log (standard error) goes to `log`.
    fn start_logged(args: &[&str], log: &Path) -> Server {
        Server::start_with(args, std::fs::File::create(log).unwrap().into())
    }

    fn start_with(args: &[&str], stderr: Stdio) -> Server {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start chomp serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line.trim().strip_prefix("chomp serve: listening on http://").unwrap_or_else(|| panic!("{line:?}")).parse().unwrap();
        let server = Server { child, addr };
        let t0 = Instant::now();
        while server.get("/health").0 != 200 {
            assert!(t0.elapsed() < Duration::from_secs(30), "no /health");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// Sends raw bytes on a fresh connection; returns what came back (until the server closes).
    fn raw(&self, bytes: &[u8]) -> Vec<u8> {
        let mut s = self.connect();
        // The server may answer (and close) before it has read everything.
        let _ = s.write_all(bytes);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        out
    }

    /// `GET path`: status and body.
    /// `GET path` answers `status` with a JSON body whose `error` is a non-empty message.
    fn assert_error(&self, path: &str, status: u16) {
        let (got, body) = self.get(path);
        assert_eq!(got, status, "{path}: {body}");
        assert!(json(&body)["error"].as_str().is_some_and(|e| !e.is_empty()), "{path}: {body}");
    }

    fn get(&self, path: &str) -> (u16, String) {
        let Ok(mut s) = TcpStream::connect(self.addr) else { return (0, String::new()) };
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        parse(&out)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Status code and body of an HTTP/1.1 response (with a content length).
fn parse(response: &[u8]) -> (u16, String) {
    let text = text(response);
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

fn param(p: &Position) -> String {
    p.rows().iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",")
}

fn query_cli(p: &Position, dir: &str) -> String {
    let out = chomp(&["query", &p.to_string(), "--tables", dir, "--json"]);
    assert_ok(&out, "chomp query");
    text(&out.stdout).trim().to_string()
}

#[test]
fn answers_as_the_command_line_does() {
    let server = Server::start(&["--tables", BOX, "--tables", LOSSES]);
    let (boxed, losses) = (Tables::open(Path::new(BOX)).unwrap(), Tables::open(Path::new(LOSSES)).unwrap());
    let mut rng = SplitMix(99);
    for _ in 0..25 {
        let p = random_position(&boxed, &mut rng, 1);
        let (status, body) = server.get(&format!("/v1/query?position={}", param(&p)));
        assert_eq!(status, 200, "{p}: {body}");
        assert_eq!(body, query_cli(&p, BOX), "{p}");
    }
    // Positions only losses-100 covers: more than 8 rows and 8 columns, or more than 15 of both.
    let mut n = 0;
    while n < 15 {
        let p = random_position(&losses, &mut rng, 20);
        if boxed.covers(&p) {
            continue;
        }
        n += 1;
        let (status, body) = server.get(&format!("/v1/query?position={}", p.to_string().replace(' ', "%20")));
        assert_eq!(status, 200, "{p}: {body}");
        assert_eq!(body, query_cli(&p, LOSSES), "{p}");
        assert!(json(&body)["grundy"].is_null());
    }
    // Computer moves as `chomp play --json` prints them.
    for level in ["easy", "medium", "hard", "very-hard"] {
        let p = random_position(&boxed, &mut rng, 2);
        let seed = rng.range(0, 1000).to_string();
        let (status, body) = server.get(&format!("/v1/play?position={}&level={level}&seed={seed}", param(&p)));
        assert_eq!(status, 200, "{p}: {body}");
        let out = chomp(&["play", &p.to_string(), "--tables", BOX, "--level", level, "--seed", &seed, "--json"]);
        assert_ok(&out, "chomp play");
        assert_eq!(body, text(&out.stdout).trim());
    }
    // Openings of a rectangle, as the library lists them.
    let (status, body) = server.get("/v1/openings?rows=4&cols=7");
    assert_eq!(status, 200, "{body}");
    let want = chomp_tables::read::openings::rectangle_opening(&boxed, 4, 7).unwrap();
    assert_eq!(body, serde_json::to_string(&want).unwrap());
    // The tables served, the page and its assets.
    let tables = json(&server.get("/v1/tables").1);
    assert_eq!(tables["tables"][0]["rows"], 8);
    assert_eq!(tables["tables"][1]["name"], "losses-100");
    let (status, page) = server.get("/");
    assert!(status == 200 && page.contains("<script src=\"app.js\">") && !page.contains("data-site"), "{status}");
    let (status, js) = server.get("/app.js");
    assert!(status == 200 && js.contains("dataset.row") && js.contains("v1/play?position="), "{status}");
    assert_eq!(server.get("/style.css").0, 200);
    // The icon a browser asks for, whatever the page links.
    for icon in ["/favicon.ico", "/favicon.svg"] {
        let (status, svg) = server.get(icon);
        assert!(status == 200 && svg.starts_with("<svg"), "{icon}: {status}");
    }
}

#[test]
fn bad_input_is_a_400_and_outside_a_404() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    for path in [
        "/v1/query",
        "/v1/query?position=",
        "/v1/query?position=abc",
        "/v1/query?position=3,5",
        "/v1/query?position=3,,2",
        "/v1/query?position=0",
        "/v1/query?position=99999999999999999999999",
        "/v1/play?position=3,2",
        "/v1/play?position=3,2&level=expert",
        "/v1/play?position=3,2&level=hard&seed=-1",
        "/v1/play?position=1&level=easy",
        "/v1/openings?rows=0&cols=3",
        "/v1/openings?rows=3",
        "/v1/openings?rows=x&cols=3",
    ] {
        server.assert_error(path, 400);
    }
    assert!(json(&server.get("/v1/play?position=1&level=easy").1)["error"].as_str().unwrap().contains("game over"));
    let long = format!("/v1/query?position={}", "1,".repeat(1500));
    assert_eq!(server.get(&long).0, 400);
    for path in [
        "/v1/query?position=16",
        "/v1/query?position=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
        "/v1/play?position=20,20&level=easy",
        "/v1/openings?rows=9&cols=16",
        "/nothing",
    ] {
        server.assert_error(path, 404);
    }
    assert!(json(&server.get("/v1/query?position=16").1)["error"].as_str().unwrap().contains("outside every table"));
}

#[test]
fn garbage_and_huge_requests_do_not_crash_it() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    let mut rng = SplitMix(5);
    for n in [1usize, 10, 100, 5000, 100_000] {
        let bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
        server.raw(&bytes);
    }
    // A request line of a megabyte, and a header block past the limit.
    let huge = format!("GET /v1/query?position={} HTTP/1.1\r\nHost: x\r\n\r\n", "1,".repeat(500_000));
    let (status, _) = parse(&server.raw(huge.as_bytes()));
    assert!(status == 0 || status >= 400, "{status}");
    let headers = format!("GET /health HTTP/1.1\r\nHost: x\r\n{}\r\n", "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(2000));
    let (status, _) = parse(&server.raw(headers.as_bytes()));
    assert!(status == 0 || status >= 400, "{status}");
    server.raw(b"POST /v1/query?position=3 HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nabc");
    server.raw(b"GET /v1/query?position=%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let (status, body) = server.get("/health");
    assert_eq!(status, 200);
    assert!(body.starts_with("{\"status\":\"ok\",\"cache_bytes\":"), "{body}");
}

#[test]
fn idle_connections_do_not_block_a_request() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    let idle: Vec<TcpStream> = (0..300).map(|_| server.connect()).collect();
    let t0 = Instant::now();
    assert_eq!(server.get("/v1/query?position=3,2,1").0, 200);
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    drop(idle);

    // At the connection cap, idle connections are closed after the idle timeout and make room.
    let small = Server::start(&["--tables", BOX, "--lazy", "--max-connections", "4", "--idle-timeout", "1"]);
    let idle: Vec<TcpStream> = (0..4).map(|_| small.connect()).collect();
    let t0 = Instant::now();
    assert_eq!(small.get("/health").0, 200);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // The idle connections were closed by the server.
    for mut s in idle {
        let mut buf = [0u8; 16];
        assert_eq!(s.read(&mut buf).unwrap_or(0), 0);
    }
}

#[test]
fn sigterm_stops_it_gracefully() {
    let mut server = Server::start(&["--tables", BOX, "--lazy"]);
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let t0 = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_table_damaged_consistently_is_refused_not_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (lost, gained) = crate::damage::damaged_run(&dir, 34);
    let log = tmp.path().join("log");
    let server = Server::start_logged(&["--tables", dir.to_str().unwrap()], &log);
    for pos in [&lost, &gained] {
        let (status, body) = server.get(&format!("/v1/query?position={}", pos.replace(' ', ",")));
        assert_eq!(status, 500, "{pos}: {body}");
        assert!(body.contains("damaged tables") && body.contains("L0034.cht"), "{pos}: {body}");
        assert!(!body.contains(tmp.path().to_str().unwrap()), "{pos}: {body}");
    }
    // The log says which table, which position and why, one line each.
    let logged = std::fs::read_to_string(&log).unwrap();
    for pos in [&lost, &gained] {
        let line = format!("table t: answered 500 to position {}: ", pos.replace(' ', ","));
        let found = logged.lines().find(|l| l.contains(&line)).unwrap_or_else(|| panic!("no {line:?} in:\n{logged}"));
        assert!(found.contains("damaged tables") && found.contains("L0034.cht") && found.contains("ERROR"), "{found}");
    }
    let (status, body) = server.get("/health");
    assert!(status == 200 && body.contains("\"cache_limit\":268435456"), "{body}");
    drop(server);
    // A table file gone: the error names the directory, not the server's path to it.
    std::fs::remove_file(dir.join("losses/L0034.cht")).unwrap();
    let server = Server::start(&["--tables", dir.to_str().unwrap(), "--lazy"]);
    let (status, body) = server.get(&format!("/v1/query?position={}", lost.replace(' ', ",")));
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("t/losses/L0034.cht") && !body.contains(tmp.path().to_str().unwrap()), "{body}");
}

#[test]
fn one_worker_answers_many_clients_in_turn() {
    assert_error_exit(&["serve", "--tables", BOX, "--workers", "0"], "--workers must be at least 1");
    let server = Server::start(&["--tables", LOSSES, "--workers", "1", "--cache-mib", "1"]);
    let losses = Tables::open(Path::new(LOSSES)).unwrap();
    let mut rng = SplitMix(7);
    let positions: Vec<Position> = (0..24).map(|_| random_position(&losses, &mut rng, 60)).collect();
    let want: Vec<String> = positions.iter().map(|p| query_cli(p, LOSSES)).collect();
    // Eight clients at once, three queries each: the one worker answers every one, none mixed up.
    std::thread::scope(|s| {
        for (ps, ws) in positions.chunks(3).zip(want.chunks(3)) {
            let server = &server;
            s.spawn(move || {
                for (p, w) in ps.iter().zip(ws) {
                    let (status, body) = server.get(&format!("/v1/query?position={}", p.to_string().replace(' ', "%20")));
                    assert_eq!(status, 200, "{p}: {body}");
                    assert_eq!(&body, w, "{p}");
                }
            });
        }
    });
}

/// `chomp args` fails with a one-line error containing `what`.
fn assert_error_exit(args: &[&str], what: &str) {
    let out = chomp(args);
    let err = text(&out.stderr);
    assert!(!out.status.success() && err.contains(what) && err.trim().lines().count() == 1, "{:?}: {err}", out.status);
}

/// Sends `bytes` on a fresh non-blocking connection, as much as the socket
/// takes now, and never reads: a client that stopped reading its answers.
fn never_reads(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nonblocking(true).unwrap();
    let mut sent = 0;
    while sent < bytes.len() {
        match s.write(&bytes[sent..]) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    s
}

fn health_field(server: &Server, field: &str) -> u64 {
    let (status, body) = server.get("/health");
    assert_eq!(status, 200, "{body}");
    json(&body)[field].as_u64().unwrap_or_else(|| panic!("{field} in {body}"))
}

#[test]
fn clients_that_never_read_are_closed_and_others_are_answered_past_the_cap() {
    let server = Server::start(&["--tables", BOX, "--lazy", "--max-connections", "16", "--write-timeout", "2"]);
    // Pipelined queries of a large position (a few KB each), never read: the
    // answers fill the socket's buffers and the server's writes wait.
    let big = "15,15,15,15,14,12,9,4";
    let one = format!("GET /v1/query?position={big} HTTP/1.1\r\nHost: x\r\n\r\n");
    let flood = one.repeat(3000);
    let stalled: Vec<TcpStream> = (0..24).map(|_| never_reads(server.addr, flood.as_bytes())).collect();
    std::thread::sleep(Duration::from_millis(1500));
    // Every slot is held by a client that reads nothing: a probe still gets
    // an answer, a stalled connection closed to make room.
    let mut slow = 0;
    for _ in 0..10 {
        let t0 = Instant::now();
        assert_eq!(server.get("/health").0, 200);
        if t0.elapsed() > Duration::from_secs(2) {
            slow += 1;
        }
    }
    assert!(slow <= 1, "{slow} of 10 probes took over 2 s");
    // Past the write timeout every stalled connection has been closed.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(health_field(&server, "connections"), 1, "only the probe's connection is held");
    for mut s in stalled {
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // What was sent before the close, then the end (or a reset).
        let mut sink = Vec::new();
        match s.read_to_end(&mut sink) {
            Ok(_) => {}
            Err(e) => assert!(e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut, "{e}"),
        }
    }
}

#[test]
fn hypers_own_errors_are_json_and_show_no_server_path() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    for bad in [&b"GARBAGE\r\n\r\n"[..], b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"] {
        let (status, body) = parse(&server.raw(bad));
        assert_eq!(status, 400, "{body}");
        assert!(json(&body)["error"].as_str().unwrap().starts_with("bad request"), "{body}");
    }
    let headers = format!("GET /health HTTP/1.1\r\nHost: x\r\n{}\r\n", "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(1000));
    let (status, body) = parse(&server.raw(headers.as_bytes()));
    assert_eq!(status, 431, "{body}");
    assert!(json(&body)["error"].as_str().unwrap().contains("request head too large"), "{body}");
}

#[test]
fn a_busy_port_is_refused_before_the_tables_load() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    // A directory that does not exist: were it opened first, that would be the error.
    let out = chomp(&["serve", "--tables", "/nonexistent/tables", "--addr", &addr]);
    let err = text(&out.stderr);
    assert!(!out.status.success() && err.contains(&format!("cannot listen on {addr}")), "{err}");
    let port = taken.local_addr().unwrap().port();
    assert!(err.contains(&format!("port {port} is in use")) && err.contains("choose another with --addr"), "{err}");
    assert!(!err.contains("os error") && err.trim().lines().count() == 1, "{err}");
}

#[test]
fn table_files_are_pooled_and_a_low_descriptor_limit_lowers_the_cap() {
    // Queries over all 100 levels of a format-3 directory: at most 64 table files held open.
    let server = Server::start(&["--tables", LOSSES, "--lazy"]);
    let losses = Tables::open(Path::new(LOSSES)).unwrap();
    let mut rng = SplitMix(11);
    for n in (1..=100).rev() {
        let p = losses.ranking().unrank(n, rng.below(losses.ranking().size(n))).unwrap();
        assert_eq!(server.get(&format!("/v1/query?position={}", param(&p))).0, 200, "{p}");
    }
    let open = health_field(&server, "open_files");
    assert!((1..=chomp_tables::read::OPEN_FILES as u64).contains(&open), "{open}");
    drop(server);

    // ulimit -n 300: room for 300 - 64 (table files) - 64 (waiting) - 64 (spare) connections.
    let mut child = Command::new("sh")
        .args(["-c", &format!("ulimit -n 300 && exec {BIN} serve --tables {LOSSES} --lazy --addr 127.0.0.1:0")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr: SocketAddr = line.trim().strip_prefix("chomp serve: listening on http://").unwrap().parse().unwrap();
    let server = Server { child, addr };
    let idle: Vec<TcpStream> = (0..200).filter_map(|_| TcpStream::connect(addr).ok()).collect();
    std::thread::sleep(Duration::from_millis(1200));
    let t0 = Instant::now();
    assert_eq!(server.get("/health").0, 200);
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    drop(idle);
    let mut server = server;
    let _ = server.child.kill();
    let mut err = String::new();
    server.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("ulimit -n is 300: serving at most 108 connections at once"), "{err}");
    assert!(err.matches("accept:").count() <= 2, "{err}");
}

#[test]
fn a_server_pinned_to_published_manifests_refuses_a_damaged_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (published, dir) = (tmp.path().join("published"), tmp.path().join("t"));
    crate::common::chomp_solve(&published, &["--max-tiles", "36", "--grundy-max-tiles", "30", "--quiet"]);
    crate::damage::damaged_run(&dir, 34);
    let pin = published.join("manifest.json");
    let (d, p) = (dir.to_str().unwrap(), pin.to_str().unwrap());
    assert_error_exit(&["serve", "--tables", d, "--against", p, "--addr", "127.0.0.1:0"], "not the published tables");
    assert_error_exit(
        &["serve", "--tables", d, "--tables", BOX, "--against", p, "--addr", "127.0.0.1:0"],
        "one published manifest per --tables",
    );
    let server = Server::start(&["--tables", published.to_str().unwrap(), "--against", p]);
    let (status, body) = server.get("/v1/tables");
    assert!(status == 200 && body.contains("\"pinned\":true"), "{body}");
}

/// `chomp serve args` (on a free port): its exit status and standard
/// error, or `None` if it was still running after 30 s (then killed).
fn serve_exit(args: &[&str]) -> Option<(std::process::ExitStatus, String)> {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return Some((status, err));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn the_start_up_check_reads_the_head_of_every_shard() {
    use chomp_tables::store::Kind;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    crate::common::chomp_solve(&dir, &["--max-tiles", "34", "--grundy-max-tiles", "26", "--shard-positions", "300", "--quiet"]);
    let m = chomp_tables::Manifest::read(&dir).unwrap();
    let n = (1..=26).rev().find(|&n| m.level_shards(n).len() >= 3).expect("a level of three shards");
    // The head of a shard after the first, of the losses and then of the Grundy values.
    for kind in [Kind::Losses, Kind::Grundy] {
        let name = chomp_tables::TableDir::table_names(&m, kind, n)[2].clone();
        let path = dir.join(&name);
        let good = std::fs::read(&path).unwrap();
        let mut bad = good.clone();
        bad[0] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let (status, err) = serve_exit(&["--tables", dir.to_str().unwrap()]).expect("chomp serve started over a damaged shard head");
        assert!(!status.success() && err.contains(name.as_str()) && err.contains("head"), "{status:?}: {err}");
        assert_eq!(err.trim().lines().filter(|l| l.starts_with("error")).count(), 1, "{err}");
        std::fs::write(&path, &good).unwrap();
    }
    // Whole again, it starts and answers.
    let server = Server::start(&["--tables", dir.to_str().unwrap()]);
    assert_eq!(server.get("/v1/query?position=3,2,1").0, 200);
}

#[test]
fn an_http2_preface_gets_a_json_400() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    // What an HTTP/2 client with prior knowledge sends first: the preface and a SETTINGS frame.
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let t0 = Instant::now();
    let (status, body) = parse(&server.raw(&hello));
    assert_eq!(status, 400, "{body}");
    assert!(json(&body)["error"].as_str().unwrap().contains("HTTP/2 is not served: this server speaks HTTP/1.1"), "{body}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // The preface alone, in two writes: the same.
    let mut s = server.connect();
    s.write_all(b"PRI * HT").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let _ = s.write_all(b"TP/2.0\r\n\r\nSM\r\n\r\n");
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert_eq!(parse(&out).0, 400, "{}", text(&out));
    assert_eq!(server.get("/health").0, 200);
}

#[test]
fn errors_quote_what_the_client_sent_as_json_does() {
    let server = Server::start(&["--tables", BOX, "--lazy"]);
    let error = |path: &str| {
        let (status, body) = server.get(path);
        assert_eq!(status, 400, "{path}: {body}");
        json(&body)["error"].as_str().unwrap().to_string()
    };
    // A NUL in a row: quoted as JSON quotes it, not as Rust's debug format does.
    let e = error("/v1/query?position=3%00");
    assert_eq!(e, "invalid position \"3\\u0000\": row 0 is \"3\\u0000\", not a positive integer");
    // An em space (U+2003) stays itself.
    for path in ["/v1/query?position=3%E2%80%83x", "/v1/play?position=3,2&level=%E2%80%83", "/v1/openings?rows=%E2%80%83&cols=3"] {
        let e = error(path);
        assert!(e.contains('\u{2003}') && !e.contains("\\u{") && !e.contains("\\0"), "{path}: {e}");
    }
    let e = error("/v1/play?position=3,2&level=hard&seed=x%00");
    assert!(e.contains("invalid seed \"x\\u0000\"") && !e.contains("\\0"), "{e}");
    let e = error("/v1/query?position=3&position=2");
    assert_eq!(e, "parameter \"position\" given more than once");
}

#[test]
fn a_reconnect_storm_at_the_cap_gets_an_answer_within_5_s() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let server = Server::start(&["--tables", BOX, "--lazy", "--max-connections", "64"]);
    let addr = server.addr;
    let stop = AtomicBool::new(false);
    let request = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    let probes = std::thread::scope(|s| {
        let stop = &stop;
        let small = || std::thread::Builder::new().stack_size(128 << 10);
        // 64 keep-alive clients that ask every 50 ms: every place is in use.
        for _ in 0..64 {
            small()
                .spawn_scoped(s, move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(c) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else { continue };
                        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                        let mut r = BufReader::new(c.try_clone().unwrap());
                        let mut c = c;
                        while !stop.load(Ordering::Relaxed) && c.write_all(request).is_ok() && read_answer(&mut r).is_some() {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                })
                .unwrap();
        }
        // 536 clients that connect, ask, read the answer and connect again.
        for _ in 0..536 {
            small()
                .spawn_scoped(s, move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Ok(mut c) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                            let _ = c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                            let _ = c.read_to_end(&mut Vec::new());
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                })
                .unwrap();
        }
        std::thread::sleep(Duration::from_secs(3));
        // Newcomers in the storm, 300 ms apart: each gets an answer (a 200 or a JSON 503) within 5 s.
        let probes: Vec<_> = (0..10)
            .map(|i| {
                std::thread::sleep(Duration::from_millis(300 * (i > 0) as u64));
                s.spawn(move || {
                    let t0 = Instant::now();
                    let mut out = Vec::new();
                    // Bounded: a connection left in the listen queue is not waited for past 10 s.
                    if let Ok(mut c) = TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
                        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                        let _ = c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                        let _ = c.read_to_end(&mut out);
                    }
                    (t0.elapsed(), parse(&out))
                })
            })
            .collect();
        let probes: Vec<_> = probes.into_iter().map(|p| p.join().unwrap()).collect();
        stop.store(true, Ordering::Relaxed);
        probes
    });
    let busy = probes.iter().filter(|(_, (status, _))| *status == 503).count();
    for (took, (status, body)) in &probes {
        assert!(*status == 200 || (*status == 503 && body.contains("\"error\":\"server busy")), "{status}: {body}");
        assert!(*took < Duration::from_secs(5), "an answer after {took:?} ({status})");
    }
    assert!(busy > 0, "the storm never filled the server: {probes:?}");
    assert_eq!(server.get("/health").0, 200);
}

/// Reads one answer (head and a body of its `content-length`) of a keep-alive connection.
fn read_answer(r: &mut BufReader<TcpStream>) -> Option<u16> {
    let mut status = 0;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if status == 0 {
            status = line.split(' ').nth(1)?.parse().ok()?;
        } else if line == "\r\n" {
            break;
        } else if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).ok()?;
    (status == 200).then_some(status)
}

/// A few-row directory served beside level tables: its positions (beyond
/// the level tables' 255 columns too) answered as `chomp query --json`
/// answers them, listed in /v1/tables, outside both a 404.
#[test]
fn serves_a_few_row_directory() {
    let dir = tempfile::tempdir().unwrap();
    let few = dir.path().join("few-3x300");
    assert_ok(&chomp(&["solve", "--engine", "few-row", "--rows", "3", "--cols", "300", "--out", few.to_str().unwrap(), "-q"]), "solve");
    let server = Server::start(&["--tables", LOSSES, "--tables", few.to_str().unwrap()]);
    for p in ["300,299,7", "3 2", "280,1", "2,2,2,2,1", "5,5,5"] {
        let cli = chomp(&["query", p, "--tables", few.to_str().unwrap(), "--json"]);
        assert_ok(&cli, p);
        let (status, body) = server.get(&format!("/v1/query?position={}", p.replace(' ', ",")));
        assert_eq!(status, 200, "{p}: {body}");
        let got = json(&body);
        if ["3 2", "2,2,2,2,1", "5,5,5"].contains(&p) {
            // Within the level tables: their answer, with Grundy values.
            assert_eq!(got["outcome"], json(&text(&cli.stdout))["outcome"]);
            continue;
        }
        assert_eq!(got, json(&text(&cli.stdout)), "{p}");
    }
    let (_, body) = server.get("/v1/tables");
    let list = json(&body);
    assert!(list["tables"].as_array().unwrap().iter().any(|t| t["engine"] == "few-row" && t["cols"] == 300), "{body}");
    server.assert_error("/v1/query?position=301,1", 404);
    server.assert_error("/v1/query?position=200,200,200,200", 404);
    server.assert_error("/v1/query?position=abc", 400);
}

/// A directory whose run has no level complete yet is served (a run that
/// has just started), and a position past it is a 404 that says so in
/// words, with no empty range of levels.
#[test]
fn a_directory_with_no_complete_level_is_named_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh");
    crate::common::chomp_solve(&fresh, &["--max-tiles", "8", "--quiet"]);
    // As a run stopped before its first checkpoint leaves it.
    let mut m = chomp_tables::Manifest::read(&fresh).unwrap();
    m.complete = false;
    m.keep_levels(0);
    m.files.retain(|name, _| !name.ends_with(".cht"));
    m.write(&fresh).unwrap();
    let server = Server::start(&["--tables", fresh.to_str().unwrap()]);
    for path in ["/v1/query?position=3,2", "/v1/play?position=3,2&level=easy"] {
        let (status, body) = server.get(path);
        assert_eq!(status, 404, "{path}: {body}");
        let error = json(&body)["error"].as_str().unwrap().to_string();
        assert!(error.contains("fresh: ") && error.contains("no level is complete yet"), "{path}: {error}");
        assert!(!error.contains("1..="), "{path}: {error}");
    }
}
