//! `chomp serve`: the tables, the computer player and a page to play, over HTTP.
//!
//! One accept loop on tokio with hyper's HTTP/1 connections (bounded header
//! size, a timeout for headers and idle keep-alive), a registry capping the
//! connections served at once and guarding each socket ([`conn`]: stalled
//! writers closed, a stalled or idle connection closed at the cap to serve a
//! newcomer, JSON bodies on hyper's own errors), axum for routing, and
//! tower-http layers for panics, request timeouts, CORS, body limits and
//! request logs.

mod conn;

use anyhow::{bail, Context};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chomp_tables::fewrow::{FewRowDir, FewRowError};
use chomp_tables::play::{self as player, Level, PlayError};
use chomp_tables::read::{completed_levels, openings, OPEN_FILES};
use chomp_tables::{Position, PositionError, ProbeError, Tables};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level as LogLevel;

pub use crate::args::ServeArgs as Config;

/// Largest request head (request line and headers), in bytes; also the
/// most hyper buffers of a connection's unsent answers.
const MAX_HEAD: usize = 16 * 1024;
/// Connections accepted beyond the cap while they wait for a place.
const WAITING: usize = 64;
/// How long a connection accepted at the cap waits for a place before a
/// 503: with the time to accept it, well within the 5 s the docs promise.
const ADMIT_WAIT: Duration = Duration::from_secs(3);
/// How long newcomers are left in the listen queue while every waiting
/// place is taken (places free as stalled and idle connections are closed)
/// before each gets a 503 at once, until a place frees.
const FULL_WAIT: Duration = Duration::from_millis(250);
/// Connections beyond those waiting whose 503 is being written (and their
/// requests read, so that the close does not reset them); further ones get
/// the 503 written at once and are closed.
const BUSY_ANSWERS: usize = 32;
/// Descriptors kept for everything but connections and table files (stdio, the runtime, logs).
const SPARE_FILES: usize = 32;
/// Largest position accepted in a query string, in characters.
const MAX_POSITION_CHARS: usize = 2048;

/// One table directory served.
struct Source {
    name: String,
    /// The directory as given and as resolved, longest first: replaced by
    /// `name` in error messages, which show no server path.
    roots: Vec<String>,
    tables: Tables,
    /// Opened against a published manifest (`--against`).
    pinned: bool,
}

/// One few-row table directory served.
struct FewRowSource {
    name: String,
    roots: Vec<String>,
    table: FewRowDir,
    pinned: bool,
}

/// The shared state: every table directory, opened at start.
struct Served {
    sources: Vec<Source>,
    /// The few-row directories, asked after the level tables.
    fewrow: Vec<FewRowSource>,
    /// A permit per answer computed at once ([`compute`], `--workers`).
    compute: Semaphore,
    /// The connections held.
    connections: Arc<conn::Registry>,
}

type Shared = Arc<Served>;

/// An error answer: a status and `{"error": message}`.
#[derive(Clone)]
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, msg.into())
}

/// `text` in double quotes as JSON writes a string (`"3\u0000"`, an em
/// space as itself), not as Rust's debug format (`"3\0"`, `"\u{2003}"`):
/// how an error message quotes what the client sent.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

impl Served {
    /// The directory answering for `p`: the first holding its Grundy value, else the first covering it.
    fn source(&self, p: &Position) -> Result<&Source, ApiError> {
        self.sources.iter().find(|s| s.tables.covers_grundy(p)).or_else(|| self.sources.iter().find(|s| s.tables.covers(p))).ok_or_else(
            || {
                let bounds: Vec<String> = self
                    .sources
                    .iter()
                    .map(|s| {
                        format!(
                            "{}: {}, {}",
                            s.name,
                            s.tables.manifest().universe.bounds(),
                            completed_levels(s.tables.manifest().levels_complete)
                        )
                    })
                    .collect();
                ApiError(
                    StatusCode::NOT_FOUND,
                    format!("position {p} ({} tiles) is outside every table ({})", p.tiles(), bounds.join("; ")),
                )
            },
        )
    }
}

impl Served {
    /// A reader's error as an answer: 404 outside the tables, else 500,
    /// with each directory's path replaced by its name. A 500 (damaged or
    /// unreadable tables) is logged with the table's name, the position and
    /// the reason, for the operator.
    fn probe_error(&self, source: &Source, p: &Position, e: ProbeError) -> ApiError {
        let status = match e {
            ProbeError::Outside { .. } | ProbeError::NotABox { .. } | ProbeError::MissingLevel { .. } => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("table {}: answered 500 to position {}: {e}", source.name, param(p));
        }
        let mut msg = e.to_string();
        for s in &self.sources {
            for root in &s.roots {
                msg = msg.replace(root.as_str(), &s.name);
            }
        }
        ApiError(status, msg)
    }
}

impl Served {
    /// The answer of the first few-row directory whose box holds the
    /// position (in either orientation), in the JSON of the level tables'
    /// answers without Grundy values and moves; `level_error` is the level
    /// tables' reason, given when no few-row directory holds it either.
    fn fewrow_answer(&self, text: &str, level_error: Option<ApiError>) -> Result<Response, ApiError> {
        if text.len() > MAX_POSITION_CHARS {
            return Err(bad(format!("position too long ({} characters; at most {MAX_POSITION_CHARS})", text.len())));
        }
        let p = crate::fewrow::parse_position(text).map_err(|e| level_error.clone().unwrap_or_else(|| bad(format!("{e:#}"))))?;
        let mut outside = Vec::new();
        for src in &self.fewrow {
            match src.table.answer_rows(&p) {
                Ok(a) => {
                    let body = json!({
                        "position": p,
                        "tiles": p.iter().map(|&r| u64::from(r)).sum::<u64>(),
                        "outcome": if a.loss { "loss" } else { "win" },
                        "grundy": null,
                        "grundy_normal": null,
                        "winning_moves": a.winning_moves,
                        "engine": "few-row",
                        "box": format!("{}x{}", src.table.shape().rows, src.table.shape().cols),
                    });
                    return Ok(Json(body).into_response());
                }
                Err(FewRowError::Position(_)) => {
                    let shape = src.table.shape();
                    outside.push(format!("{}: few-row {}x{} box", src.name, shape.rows, shape.cols));
                }
                Err(e) => {
                    tracing::error!("table {}: answered 500 to position {text}: {e}", src.name);
                    let mut msg = e.to_string();
                    for root in &src.roots {
                        msg = msg.replace(root.as_str(), &src.name);
                    }
                    return Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, msg));
                }
            }
        }
        let mut within: Vec<String> = self
            .sources
            .iter()
            .map(|s| {
                format!("{}: {}, {}", s.name, s.tables.manifest().universe.bounds(), completed_levels(s.tables.manifest().levels_complete))
            })
            .collect();
        within.extend(outside);
        Err(ApiError(
            StatusCode::NOT_FOUND,
            format!(
                "position {} ({} tiles) is outside every table ({})",
                text.trim(),
                p.iter().map(|&r| u64::from(r)).sum::<u64>(),
                within.join("; ")
            ),
        ))
    }
}

/// The query string as a map, or a 400.
fn params(q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Result<HashMap<String, String>, ApiError> {
    let Query(pairs) = q.map_err(|e| bad(format!("invalid query string: {e}")))?;
    let mut m = HashMap::new();
    for (key, value) in pairs {
        // A repeated parameter is ambiguous: refused rather than one of them taken.
        if m.contains_key(&key) {
            return Err(bad(format!("parameter {} given more than once", quote(&key))));
        }
        m.insert(key, value);
    }
    Ok(m)
}

fn required<'a>(m: &'a HashMap<String, String>, key: &str, example: &str) -> Result<&'a str, ApiError> {
    m.get(key).map(|s| s.as_str()).ok_or_else(|| bad(format!("missing parameter {}, e.g. {key}={example}", quote(key))))
}

fn position(m: &HashMap<String, String>) -> Result<Position, ApiError> {
    let text = required(m, "position", "5,3,3,1,1")?;
    if text.len() > MAX_POSITION_CHARS {
        return Err(bad(format!("position too long ({} characters; at most {MAX_POSITION_CHARS})", text.len())));
    }
    text.parse().map_err(|e: PositionError| {
        let why = match e {
            PositionError::BadToken { index, token } => format!("row {index} is {}, not a positive integer", quote(&token)),
            e => e.to_string(),
        };
        bad(format!("invalid position {}: {why}", quote(text)))
    })
}

/// A position as the API's `position=` parameter writes it (`3,2,1`).
fn param(p: &Position) -> String {
    p.rows().iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",")
}

/// Computes an answer on the runtime's worker thread that holds the request.
///
/// At most `slots` answers are computed at once (`--workers`); further ones
/// wait for a permit in the order they arrived (tokio's semaphore is fair).
/// An answer is a fraction of a millisecond of CPU, so it runs where the
/// request is, without a hand-off to tokio's blocking pool: that hand-off
/// (two thread wake-ups and more threads sharing malloc's arenas) cost 13 %
/// of the CPU of an answer over the frontier tables, and a third of the
/// answers per second (bench/runs/2026-12-04-kvm-2core/server-inline.md).
/// A panic in it is caught by the router's panic layer and becomes a 500.
async fn compute<T>(slots: &Semaphore, f: impl FnOnce() -> Result<T, ApiError>) -> Result<T, ApiError> {
    let _slot = slots.acquire().await.map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {e}")))?;
    f()
}

async fn query(State(s): State<Shared>, q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Result<Response, ApiError> {
    let m = params(q)?;
    let parsed = position(&m);
    if !s.fewrow.is_empty() && parsed.as_ref().map_or(true, |p| s.source(p).is_err()) {
        let text = required(&m, "position", "5,3,3,1,1")?.to_string();
        return compute(&s.compute, || s.fewrow_answer(&text, parsed.err())).await;
    }
    let p = parsed?;
    compute(&s.compute, || {
        let mut body = Vec::with_capacity(16 << 10);
        let source = s.source(&p)?;
        source.tables.answer_json(&p, &mut body).map_err(|e| s.probe_error(source, &p, e))?;
        Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
    })
    .await
}

async fn play(State(s): State<Shared>, q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Result<Response, ApiError> {
    let m = params(q)?;
    let p = position(&m)?;
    let level: Level = required(&m, "level", "hard")?
        .parse()
        .map_err(|e: player::LevelError| bad(format!("unknown level {}: use easy, medium, hard or very-hard", quote(&e.0))))?;
    let seed: u64 = match m.get("seed") {
        Some(t) => t.trim().parse().map_err(|_| bad(format!("invalid seed {}: use an integer 0..={}", quote(t), u64::MAX)))?,
        None => 0,
    };
    compute(&s.compute, || {
        let source = s.source(&p)?;
        let mv = player::play(level, &p, seed, Some(&source.tables)).map_err(|e| match e {
            PlayError::Probe(e) => s.probe_error(source, &p, e),
            e => bad(e.to_string()),
        })?;
        Ok(Json(mv).into_response())
    })
    .await
}

fn side(m: &HashMap<String, String>, key: &str) -> Result<u32, ApiError> {
    let t = required(m, key, "8")?;
    match t.trim().parse::<u32>() {
        Ok(n) if (1..=255).contains(&n) => Ok(n),
        _ => Err(bad(format!("invalid {key} {}: use an integer 1..=255", quote(t)))),
    }
}

async fn opening(State(s): State<Shared>, q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Result<Response, ApiError> {
    let m = params(q)?;
    let (rows, cols) = (side(&m, "rows")?, side(&m, "cols")?);
    compute(&s.compute, || {
        let rect = Position::new(&vec![cols; rows as usize]).map_err(|e| bad(e.to_string()))?;
        let source = s.source(&rect)?;
        let o = openings::rectangle_opening(&source.tables, rows, cols).map_err(|e| s.probe_error(source, &rect, e))?;
        Ok(Json(o).into_response())
    })
    .await
}

async fn list(State(s): State<Shared>) -> Json<serde_json::Value> {
    let list: Vec<serde_json::Value> = s
        .sources
        .iter()
        .map(|src| {
            let m = src.tables.manifest();
            json!({
                "name": src.name,
                "rows": m.universe.rows,
                "cols": m.universe.cols,
                "tiles": m.universe.tiles,
                "levels_complete": m.levels_complete,
                "grundy_max_tiles": m.grundy_max_tiles.min(m.levels_complete),
                "pinned": src.pinned,
            })
        })
        .chain(s.fewrow.iter().map(|src| {
            let shape = src.table.shape();
            json!({
                "name": src.name,
                "rows": shape.rows,
                "cols": shape.cols,
                "engine": "few-row",
                "pinned": src.pinned,
            })
        }))
        .collect();
    Json(json!({ "tables": list }))
}

/// Liveness, the memory the block caches hold (format 3 directories;
/// formats 1 and 2 hold whole tables and report 0), the connections held and
/// the table files open.
async fn health(State(state): State<Shared>) -> Json<serde_json::Value> {
    let (bytes, limit) = state.sources.iter().map(|s| s.tables.cache_usage()).fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    let open_files: usize = state.sources.iter().map(|s| s.tables.open_files()).sum();
    Json(json!({
        "status": "ok",
        "cache_bytes": bytes,
        "cache_limit": limit,
        "connections": state.connections.len(),
        "open_files": open_files,
    }))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static(content_type)), (header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))], body)
        .into_response()
}

async fn page() -> Response {
    asset("text/html; charset=utf-8", include_str!("../page/index.html"))
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", include_str!("../page/app.js"))
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", include_str!("../page/style.css"))
}

/// The page's icon (browsers ask for /favicon.ico whatever the page links).
async fn icon() -> Response {
    asset("image/svg+xml", include_str!("../page/favicon.svg"))
}

async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no such endpoint: see GET /v1/query, /v1/play, /v1/openings, /v1/tables, /health".into())
}

/// Error answers made by the layers (405 for a method other than GET, 413
/// for a body, 503 for a timeout) get the API's JSON body too.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let what = match status {
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed: the API answers GET only".to_string(),
        StatusCode::PAYLOAD_TOO_LARGE => "request body too large: the API takes no body".to_string(),
        StatusCode::SERVICE_UNAVAILABLE => {
            tracing::warn!("a request took longer than --request-timeout; answered 503");
            "the request took too long (see chomp serve --request-timeout)".to_string()
        }
        s => s.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    let mut json = ApiError(status, what).into_response();
    if let Some(allow) = response.headers().get(header::ALLOW) {
        json.headers_mut().insert(header::ALLOW, allow.clone());
    }
    json
}

/// A panic in a handler becomes a JSON 500, logged with the panic's
/// message; the server carries on.
fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str)).unwrap_or("no message");
    tracing::error!("a handler panicked: {what}; answered 500");
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal error".into()).into_response()
}

/// The routes and their layers.
fn router(state: Shared, request_timeout: Duration) -> Router {
    let routes = Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/style.css", get(style))
        .route("/favicon.svg", get(icon))
        .route("/favicon.ico", get(icon))
        .route("/health", get(health))
        .route("/v1/query", get(query))
        .route("/v1/play", get(play))
        .route("/v1/openings", get(opening))
        .route("/v1/tables", get(list))
        .fallback(not_found)
        .with_state(state);
    layers(routes, request_timeout)
}

/// Panics caught, request timeout, body limit, CORS for GET, a debug log line per request.
fn layers(routes: Router, request_timeout: Duration) -> Router {
    routes
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, request_timeout))
        .layer(RequestBodyLimitLayer::new(4096))
        .layer(axum::middleware::map_response(json_errors))
        .layer(CorsLayer::new().allow_origin(Any).allow_methods([Method::GET]))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(LogLevel::DEBUG))
                .on_request(())
                .on_eos(())
                // A 5xx is logged where it is made, with its reason
                // ([`Served::probe_error`], [`panic_response`], [`json_errors`]).
                .on_failure(())
                .on_response(DefaultOnResponse::new().level(LogLevel::DEBUG)),
        )
}

/// Opens every directory (pinned to its published manifest where `against`
/// names one), and unless `lazy` loads every level (formats 1
/// and 2: losses and Grundy tables; format 3: the head of every table, the
/// blocks then load on demand within `cache_bytes`).
fn open_all(dirs: &[PathBuf], against: &[PathBuf], lazy: bool, cache_bytes: usize) -> anyhow::Result<(Vec<Source>, Vec<FewRowSource>)> {
    let mut out = Vec::new();
    let mut fewrow = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let t0 = Instant::now();
        if chomp_tables::fewrow::is_few_row_dir(dir) || against.get(i).is_some_and(|a| chomp_tables::fewrow::is_few_row_manifest(a)) {
            let table = match against.get(i) {
                Some(pinned) => FewRowDir::open_against(dir, pinned)?,
                None => FewRowDir::open(dir)?,
            };
            let shape = table.shape();
            tracing::info!(
                "{}: few-row {}x{} box, {} prefixes, in {:.1} s",
                dir.display(),
                shape.rows,
                shape.cols,
                table.prefixes(),
                t0.elapsed().as_secs_f64()
            );
            fewrow.push(FewRowSource { name: source_name(dir), roots: source_roots(dir), table, pinned: against.get(i).is_some() });
            continue;
        }
        let tables = match against.get(i) {
            Some(pinned) => Tables::open_against(dir, pinned, cache_bytes)?,
            None => Tables::open_with_cache(dir, cache_bytes)?,
        };
        if !lazy {
            let m = tables.manifest();
            for n in 1..=m.levels_complete {
                if !m.is_blocked() {
                    tables.level_losses(n)?;
                }
                // The first position of every shard: each shard's files
                // (losses and Grundy values) are read, their heads checked.
                for shard in m.level_shards(n) {
                    if let Some(p) = tables.ranking().unrank(n, shard.first) {
                        tables.outcome(&p)?;
                        tables.grundy(&p)?;
                    }
                }
            }
        }
        let (name, roots) = (source_name(dir), source_roots(dir));
        tracing::info!(
            "{}: {} levels{} in {:.1} s",
            dir.display(),
            tables.manifest().levels_complete,
            if lazy { " (lazy)" } else { " loaded" },
            t0.elapsed().as_secs_f64()
        );
        out.push(Source { name, roots, tables, pinned: against.get(i).is_some() });
    }
    Ok((out, fewrow))
}

/// A directory's name in answers.
fn source_name(dir: &std::path::Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "tables".to_string())
}

/// The directory as given and as resolved, longest first, replaced by its
/// name in error messages. Only absolute paths are replaced: a relative one
/// ("results") may be a word of the message.
fn source_roots(dir: &std::path::Path) -> Vec<String> {
    let mut roots: Vec<String> = [Some(dir.to_path_buf()), dir.canonicalize().ok()]
        .into_iter()
        .flatten()
        .filter(|d| d.is_absolute() && d.parent().is_some())
        .map(|d| d.display().to_string())
        .collect();
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    roots.dedup();
    roots
}

/// Caps glibc's malloc at two arenas (unless `MALLOC_ARENA_MAX` chooses),
/// before any thread starts. By default every thread that allocates may get
/// its own arena, and blocks evicted from the cache leave free memory in
/// each: over the frontier tables, with both caches full (512 MiB), the
/// process held 128 MB beyond them with the default and 47 MB with two
/// arenas, for the same CPU per answer (bench/runs/2026-12-03-kvm-2core).
fn fewer_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: sets one allocator parameter; no memory is touched.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

pub fn serve(mut cfg: Config) -> anyhow::Result<ExitCode> {
    fewer_arenas();
    let filter = tracing_subscriber::EnvFilter::try_from_env("CHOMP_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
    if cfg.max_connections == 0 {
        bail!("--max-connections must be at least 1");
    }
    // One per core by default: an answer is computed on the runtime thread that read its request.
    let workers = cfg.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if workers == 0 {
        bail!("--workers must be at least 1");
    }
    // The address first: a busy port is reported before any table loads.
    let listener = std::net::TcpListener::bind(&cfg.addr).map_err(|e| listen_error(&cfg.addr, &e))?;
    listener.set_nonblocking(true)?;
    limit_send_buffer(&listener);
    cfg.max_connections = fit_descriptors(cfg.max_connections, cfg.tables.len())?;
    if !cfg.against.is_empty() && cfg.against.len() != cfg.tables.len() {
        bail!(
            "--against: give one published manifest per --tables, in the same order ({} for {} directories)",
            cfg.against.len(),
            cfg.tables.len()
        );
    }
    let (sources, fewrow) = open_all(&cfg.tables, &cfg.against, cfg.lazy, cfg.cache_mib.saturating_mul(1 << 20))?;
    let connections = conn::Registry::new(cfg.max_connections);
    let state: Shared = Arc::new(Served { sources, fewrow, compute: Semaphore::new(workers), connections });
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the runtime")?;
    rt.block_on(run(cfg, state, listener))?;
    Ok(ExitCode::SUCCESS)
}

/// Why the server cannot listen on `addr`, in words: a port in use says
/// how to choose another.
fn listen_error(addr: &str, e: &std::io::Error) -> anyhow::Error {
    let what = match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            let port = addr.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok()).unwrap_or(8080);
            let host = addr.rsplit_once(':').map_or("127.0.0.1", |(h, _)| h);
            format!(
                "port {port} is in use (another server, or another chomp serve); choose another with --addr, e.g. --addr {host}:{} (port 0 picks a free one)",
                port.wrapping_add(1).max(1024)
            )
        }
        std::io::ErrorKind::AddrNotAvailable => "no such address on this machine (--addr takes HOST:PORT, e.g. 127.0.0.1:8080)".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied (ports below 1024 need privileges: choose one above)".to_string(),
        _ => {
            let s = e.to_string();
            s.find(" (os error ").map_or(s.clone(), |i| s[..i].to_string())
        }
    };
    anyhow::anyhow!("cannot listen on {addr}: {what}")
}

/// The kernel's send buffer of every connection (inherited from the
/// listening socket): with hyper's buffer of [`MAX_HEAD`], it bounds what
/// a client that reads nothing leaves unsent. Linux reserves twice this.
const SEND_BUFFER: usize = 128 << 10;

fn limit_send_buffer(listener: &std::net::TcpListener) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let size = SEND_BUFFER as libc::c_int;
        // SAFETY: sets one integer option of a socket this process owns.
        let r = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r != 0 {
            tracing::warn!("cannot bound the send buffer: {}", std::io::Error::last_os_error());
        }
    }
}

/// The connections the descriptors allow: raises the soft limit on open
/// files to the hard one, then keeps room for every table directory's
/// [`OPEN_FILES`], [`WAITING`] connections, [`BUSY_ANSWERS`] and [`SPARE_FILES`]; lowers
/// `cap` (saying so) if the limit leaves less.
fn fit_descriptors(cap: usize, dirs: usize) -> anyhow::Result<usize> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit and setrlimit read and write the one struct passed.
        let soft = unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return Ok(cap);
            }
            if lim.rlim_cur < lim.rlim_max {
                let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    lim.rlim_cur = lim.rlim_max;
                }
            }
            lim.rlim_cur
        };
        let kept = dirs * OPEN_FILES + WAITING + BUSY_ANSWERS + SPARE_FILES;
        let room = usize::try_from(soft).unwrap_or(usize::MAX).saturating_sub(kept);
        if room == 0 {
            bail!("too few file descriptors (ulimit -n is {soft}): at least {} are needed", kept + 1);
        }
        if room < cap {
            tracing::warn!("ulimit -n is {soft}: serving at most {room} connections at once (--max-connections {cap})");
            return Ok(room);
        }
    }
    Ok(cap)
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed by the call,
/// not when the future is first polled: [`run`] calls it before printing
/// the line that says the server listens, so a signal sent as soon as the
/// server answers stops it gracefully instead of by the default action.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (mut term, mut int) = {
        use tokio::signal::unix::{signal, SignalKind};
        (signal(SignalKind::terminate()).ok(), signal(SignalKind::interrupt()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let term = async {
                match term.as_mut() {
                    Some(s) => drop(s.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            let int = async {
                match int.as_mut() {
                    Some(s) => drop(s.recv().await),
                    None => drop(tokio::signal::ctrl_c().await),
                }
            };
            tokio::select! {
                _ = term => {},
                _ = int => {},
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The answer to a connection that finds no place: a 503 with the API's JSON body.
fn busy_answer() -> String {
    let body = json!({ "error": "server busy: every connection is being answered; try again" }).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A connection that found no place (within [`ADMIT_WAIT`], or at once
/// when every waiting place is taken too): the 503, then the client's
/// request read until it closes (1 s at most), so that the close is not a
/// reset that could lose the answer.
async fn busy(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let limit = Duration::from_secs(1);
    if tokio::time::timeout(limit, stream.write_all(busy_answer().as_bytes())).await.is_err() {
        return;
    }
    let _ = tokio::time::timeout(limit, stream.shutdown()).await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(limit, async { while let Ok(1..) = stream.read(&mut sink).await {} }).await;
}

/// A 503 written at once, without waiting, to a connection beyond every
/// waiting place and [`BUSY_ANSWERS`] (a storm of connections): a fresh
/// socket's buffer takes it whole.
fn busy_now(stream: tokio::net::TcpStream) {
    let mut sink = [0u8; 4096];
    while let Ok(1..) = stream.try_read(&mut sink) {}
    let _ = stream.try_write(busy_answer().as_bytes());
}

/// Failed accepts (e.g. too many open files), logged at most once in 10 s.
struct AcceptErrors {
    last: Option<Instant>,
    since: u64,
}

impl AcceptErrors {
    fn log(&mut self, e: &std::io::Error) {
        self.since += 1;
        if self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
            tracing::warn!("accept: {e} ({} failed accepts since the last such line)", self.since);
            self.last = Some(Instant::now());
            self.since = 0;
        }
    }
}

async fn run(cfg: Config, state: Shared, listener: std::net::TcpListener) -> anyhow::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let local = listener.local_addr()?;
    // Before the line below: a signal from then on stops the server gracefully.
    let signal = shutdown_signal();
    tokio::pin!(signal);
    // The tests and scripts read this line to find the port: the tables are loaded by now.
    println!("chomp serve: listening on http://{local}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let registry = state.connections.clone();
    let app = router(state, Duration::from_secs(cfg.request_timeout.max(1)));
    // Connections accepted: those served and at most WAITING waiting for a
    // place; while these are all taken, newcomers wait in the listen queue,
    // for FULL_WAIT at most, then get a 503 at once.
    let accepted = Arc::new(Semaphore::new(cfg.max_connections + WAITING));
    let answering_busy = Arc::new(Semaphore::new(BUSY_ANSWERS));
    let graceful = GracefulShutdown::new();
    let idle = Duration::from_secs(cfg.idle_timeout.max(1));
    let write_timeout = Duration::from_secs(cfg.write_timeout.max(1));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(idle).max_buf_size(MAX_HEAD.max(8192)).keep_alive(true);
    let mut errors = AcceptErrors { last: None, since: 0 };
    // Since when no waiting place has been free.
    let mut full_since: Option<Instant> = None;
    loop {
        // A waiting place, or none when none has freed for FULL_WAIT: the
        // next connection then gets its 503 at once.
        let permit = match accepted.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                let left = FULL_WAIT.saturating_sub(full_since.get_or_insert_with(Instant::now).elapsed());
                tokio::select! {
                    p = accepted.clone().acquire_owned(), if !left.is_zero() => match p { Ok(p) => Some(p), Err(_) => break },
                    _ = tokio::time::sleep(left) => None,
                    _ = &mut signal => break,
                }
            }
        };
        if permit.is_some() {
            full_since = None;
        }
        let (stream, _peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // E.g. too many open files: make room by closing a stalled or idle connection, and wait a little rather than spin.
                    errors.log(&e);
                    registry.evict_one();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut signal => break,
        };
        let _ = stream.set_nodelay(true);
        // A place may have freed while no one was connecting.
        let Some(permit) = permit.or_else(|| accepted.clone().try_acquire_owned().ok()) else {
            if let Ok(p) = answering_busy.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    busy(stream).await;
                    drop(p);
                });
            } else {
                busy_now(stream);
            }
            continue;
        };
        let (registry, builder, app, watcher) = (registry.clone(), builder.clone(), app.clone(), graceful.watcher());
        tokio::spawn(async move {
            let Some(slot) = registry.admit(ADMIT_WAIT).await else {
                busy(stream).await;
                drop(permit);
                return;
            };
            let svc = TowerToHyperService::new(app);
            let activity = slot.activity.clone();
            let svc = hyper::service::service_fn(move |req| {
                let answering = activity.answering();
                let answer = hyper::service::Service::call(&svc, req);
                async move {
                    let r = answer.await;
                    drop(answering);
                    r
                }
            });
            let io = TokioIo::new(conn::Guarded::new(stream, &slot, write_timeout));
            let conn = watcher.watch(builder.serve_connection(io, svc));
            tokio::select! {
                r = conn => if let Err(e) = r {
                    tracing::debug!("connection: {e}");
                },
                _ = slot.activity.closed() => tracing::debug!("connection closed to make room"),
            }
            drop(slot);
            drop(permit);
        });
    }
    tracing::info!("shutting down: finishing the requests in flight");
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await.is_err() {
        tracing::warn!("some connections did not finish within 5 s");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;

    /// Status and body of `GET path` on `app`.
    async fn fetch(app: Router, path: &str) -> (StatusCode, String) {
        send(app, Request::get(path).body(Body::empty()).unwrap()).await
    }

    /// Status and body of the answer to `request`.
    async fn send(app: Router, request: Request<Body>) -> (StatusCode, String) {
        let svc = TowerToHyperService::new(app);
        let response = hyper::service::Service::call(&svc, request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[test]
    fn a_panicking_handler_answers_500_and_the_server_carries_on() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let routes = Router::new()
                .route("/panic", get(|| async { panic!("a handler panicked") as &'static str }))
                .route(
                    "/compute",
                    get(|| async {
                        compute(&Semaphore::new(1), || -> Result<String, ApiError> { panic!("a computation panicked") }).await
                    }),
                )
                .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(5)).await }))
                .route("/health", get(|| async { "ok" }));
            let app = layers(routes, Duration::from_millis(200));
            for path in ["/panic", "/compute"] {
                let (status, body) = fetch(app.clone(), path).await;
                assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
                assert!(body.contains("\"error\":\"internal error"), "{path}: {body}");
            }
            let (status, body) = fetch(app.clone(), "/slow").await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
            assert!(body.contains("\"error\":\"the request took too long"), "{body}");
            assert_eq!(fetch(app, "/health").await, (StatusCode::OK, "ok".to_string()));
        });
    }

    #[test]
    fn the_layers_errors_are_json_and_a_repeated_parameter_is_refused() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let echo = |q: Result<Query<Vec<(String, String)>>, QueryRejection>| async move {
                params(q).map(|m| m.get("position").cloned().unwrap_or_default())
            };
            let app = layers(Router::new().route("/echo", get(echo)), Duration::from_secs(5));
            assert_eq!(fetch(app.clone(), "/echo?position=3,1").await, (StatusCode::OK, "3,1".to_string()));
            let (status, body) = fetch(app.clone(), "/echo?position=3,1&position=2").await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert!(body.contains("\"error\":\"parameter \\\"position\\\" given more than once"), "{body}");
            let (status, body) = send(app.clone(), Request::post("/echo").body(Body::empty()).unwrap()).await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
            assert!(body.contains("\"error\":\"method not allowed"), "{body}");
            let big = Request::get("/echo").header(header::CONTENT_LENGTH, "10000").body(Body::from(vec![b'x'; 10000])).unwrap();
            let (status, body) = send(app, big).await;
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
            assert!(body.contains("\"error\":\"request body too large"), "{body}");
        });
    }
}
