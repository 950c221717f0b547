//! The memory (and disk and time) model of a run: what a level needs, what
//! the machine or the container allows, and the preflight estimate printed
//! before a long run starts.

use super::sieve::Frontier;
pub use super::sieve::Holding;
use super::{JobError, Plan};
use crate::cluster::Comm;
use crate::index::Ranking;
use crate::store::Manifest;
use std::fs;

/// Sieve throughput per core used by the preflight (positions per second),
/// measured with `chomp bench` on the reference machine.
const SIEVE_POSITIONS_PER_CORE: f64 = 30e6;

/// A box's sieve throughput per core (positions per second) with its
/// shorter side `s`: `BOX_RATE_AT_4 · (s / 4)^BOX_RATE_GROWTH`. Fitted on 2
/// cores to three boxes' level time (the in-run check priced apart):
/// 4×254, 2.6·10⁷ a core (6.9 s of CPU with `--check-samples 0`); 10×30,
/// about 4.2·10⁷; 21×21, 8.0·10⁷ (levels 56.2 min of its 1 h 50 min; the
/// rest re-pushes, priced apart). A thin box has many short levels cut into
/// many short tasks; a square one, few long levels whose largest runs of
/// parents are marked level by level
/// (`bench/runs/2026-12-07-kvm-2core/thin-boxes.md`). A tall box (more
/// rows than columns) is slower by [`BOX_TALL_SLOWDOWN`].
fn box_positions_per_core(rows: u32, cols: u32) -> f64 {
    let tall = (rows.max(1) as f64 / cols.max(1) as f64).max(1.0).powf(BOX_TALL_SLOWDOWN);
    BOX_RATE_AT_4 * (rows.min(cols).max(1) as f64 / 4.0).powf(BOX_RATE_GROWTH) / tall
}

/// A tall box's sieve is slower than its wide transpose's by about
/// `(rows / cols)^0.55`: its positions have up to `rows` rows, and the runs
/// of equal rows whose growths are enumerated are long. Measured (user CPU,
/// `chomp solve --engine box`, tall against wide, 2026-12-07): with
/// `--check-samples 0` 40×6 3.3×, 120×4 2.5×, 200×4 6.2×; with the check
/// 255×4 123.6 s against 18.5 s (its sieve about 12×); 20×10 about 1.0×
/// (bench/runs/2026-12-07-kvm-2core/thin-boxes.md).
const BOX_TALL_SLOWDOWN: f64 = 0.55;

/// [`box_positions_per_core`] of a box whose shorter side is 4.
const BOX_RATE_AT_4: f64 = 2.6e7;

/// How [`box_positions_per_core`] grows with the shorter side: 0.68 through
/// the 4×254 and 21×21 boxes (10×30 falls within 15 % of it).
const BOX_RATE_GROWTH: f64 = 0.68;

/// The sieve's throughput per core in `universe`: a box's by its shape,
/// else the tile runs' [`SIEVE_POSITIONS_PER_CORE`].
fn sieve_positions_per_core(universe: &crate::Universe) -> f64 {
    match (universe.rows, universe.cols, universe.tiles) {
        (Some(r), Some(c), None) => box_positions_per_core(r, c),
        _ => SIEVE_POSITIONS_PER_CORE,
    }
}

/// The sieve's time when it counts winning moves ([`Plan::count_moves`]),
/// relative to one that does not: measured 1.5 (`chomp solve --max-tiles 88`,
/// user CPU 9.0–9.8 s against 5.9–6.2 s, `bench/runs/2026-12-06-kvm-2core/count-moves.md`).
const COUNT_MOVES_COST: f64 = 1.5;
/// The cost of opening a window (every decided loss pushed again into its
/// levels: a window after the first, or the first window of a resumed
/// run): the window's positions at this rate per core, plus the decided
/// losses walked at [`REPUSH_LOSSES_PER_CORE`]. Fitted on 2 cores to the
/// run to 150 tiles' windows 147–148 and 149–150 (6.4·10¹⁰ and 7.8·10¹⁰
/// positions, 3.4·10⁹ and 4.1·10⁹ losses below: about 40 min each).
const REPUSH_POSITIONS_PER_CORE: f64 = 23e6;
/// Decided losses walked per second per core when a window opens (see
/// [`REPUSH_POSITIONS_PER_CORE`]).
const REPUSH_LOSSES_PER_CORE: f64 = 1.9e6;
/// The same two rates in a box, where the runs with billions of parents
/// are marked level by level (`sieve::by_levels`): a least-squares fit on
/// 2 cores to the 21×21 box's three re-pushes of 2026-12-07 (windows
/// 196–221, 222–251 and 252–441: 1.31·10¹¹, 1.46·10¹¹ and 1.18·10¹¹
/// positions, about 13.5, 17.6 and 22 min; the fit gives 13.0, 18.3 and
/// 21.7). The losses are those the estimate expects ([`expected_losses`]:
/// 2.0·10⁹, 3.8·10⁹ and 5.7·10⁹ below the windows), about three times the
/// box's own (its losses are sparser than a tile run's), so the rate is
/// fitted to them.
const BOX_REPUSH_POSITIONS_PER_CORE: f64 = 140e6;
/// Decided losses walked per second per core when a box's window opens
/// (see [`BOX_REPUSH_POSITIONS_PER_CORE`]).
const BOX_REPUSH_LOSSES_PER_CORE: f64 = 3.25e6;

/// The re-push rates of a universe, positions and losses per second per
/// core: a box's, or a tile run's.
fn repush_rates(universe: &crate::Universe) -> (f64, f64) {
    if universe.is_box() {
        (BOX_REPUSH_POSITIONS_PER_CORE, BOX_REPUSH_LOSSES_PER_CORE)
    } else {
        (REPUSH_POSITIONS_PER_CORE, REPUSH_LOSSES_PER_CORE)
    }
}
/// Children read per second per core by the in-run check ([`super::check`]:
/// each position checked reads its `n − 1` children back through the
/// tables). Measured on 2 cores: 4×254 with the default check and with
/// `--check-samples 0`, 8.7 s of CPU apart for 3.2·10⁷ children
/// (`bench/runs/2026-12-07-kvm-2core/thin-boxes.md`). A thin box has
/// many levels of few positions, each checked on at least 64: the check
/// is most of its time; a large level's children fall in cold blocks and
/// cost more, but its check is a small part of its time.
const CHECK_CHILDREN_PER_CORE: f64 = 3.7e6;

/// The seconds of the in-run check of level `n` on `threads` threads, at
/// the default sample ([`super::CHECK_SAMPLES`]).
fn check_seconds(ranking: &Ranking, n: u32, threads: f64) -> f64 {
    let checked = super::check::checked_positions(ranking, n, super::CHECK_SAMPLES);
    (checked * (n as u64).saturating_sub(1)) as f64 / CHECK_CHILDREN_PER_CORE / threads
}

/// Grundy child look-ups per second per core, measured likewise (the run
/// to 120 tiles: 175–210 M at levels 100–120).
const GRUNDY_LOOKUPS_PER_CORE: f64 = 170e6;
/// Bytes per loss of a loss table (format 3, compressed) and per position
/// of a Grundy table, as measured on the published tables: the run to 150
/// tiles wrote 5,510,647,503 bytes of tables for 5.0·10⁹ losses (1.1 a
/// loss; the estimate expects about 8 % more losses than there are).
const LOSS_TABLE_BYTES_PER_LOSS: f64 = 1.1;
const GRUNDY_TABLE_BYTES_PER_POSITION: f64 = 0.7;

/// Peak resident set size of this process in KiB, from /proc (0 where unavailable).
pub fn peak_rss_kib() -> u64 {
    proc_status_kib("VmHWM:")
}

/// CPU time of this process so far (user and system, every thread), in
/// seconds, at nanosecond resolution (`CLOCK_PROCESS_CPUTIME_ID`; 0 where
/// unavailable).
pub fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Current resident set size of this process in KiB (0 where unavailable).
pub fn current_rss_kib() -> u64 {
    proc_status_kib("VmRSS:")
}

/// Resident memory of this process now, in KiB: `(rss, pss)`, where the
/// proportional share `pss` divides each page shared with other processes
/// (a node's Grundy files) among them, so the processes' `pss` add up to
/// what they hold together (0 where unavailable).
pub fn resident_kib() -> (u64, u64) {
    (proc_kib("/proc/self/smaps_rollup", "Rss:"), proc_kib("/proc/self/smaps_rollup", "Pss:"))
}

fn proc_status_kib(field: &str) -> u64 {
    proc_kib("/proc/self/status", field)
}

fn proc_kib(file: &str, field: &str) -> u64 {
    fs::read_to_string(file)
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

/// Expected losses of a level of `positions` positions: the conjectured
/// ratio losses·ln(positions)/positions ≈ 0.28 (see docs/math.md), at least 1.
fn expected_losses(positions: u64) -> u64 {
    if positions < 3 {
        return 1;
    }
    ((0.3 * positions as f64 / (positions as f64).ln()) as u64).max(1)
}

/// Bytes per loss of a level's losses held as a roaring set: about 2.1 at
/// 150 tiles (4.62·10⁸ losses in 0.9 GiB) and 2.2 at 130 (the exchanged
/// sets, `largest_gather_bytes` of the run's report).
const LOSS_SET_BYTES_PER_LOSS: f64 = 2.2;

/// The level's loss set counted this many times in one process: the
/// scan's sets and their union; with several processes, while they are
/// exchanged, the gathered bytes, the decoded sets and their union.
fn loss_set_copies(processes: usize) -> f64 {
    if processes > 1 {
        3.0
    } else {
        2.0
    }
}

/// The losses the model expects of level `n`: after the last level of
/// `manifest`, its loss share with a margin of 1.5 (shares fall slowly
/// with the level); else the conjectured density.
fn level_losses(ranking: &Ranking, n: u32, manifest: &Manifest) -> u64 {
    let size = ranking.size(n);
    match manifest.levels.last() {
        Some(l) if n == manifest.levels_complete + 1 && l.positions > 0 => {
            (l.losses as f64 / l.positions as f64 * 1.5 * size as f64) as u64
        }
        _ => expected_losses(size),
    }
}

/// The bytes a process asks to send per collective call:
/// `CHOMP_COLLECTIVE_BYTES`, else [`crate::cluster::PIECE_BYTES`] (the
/// transport caps it for the number of processes,
/// [`crate::cluster::pieces::piece_bytes`]).
pub fn collective_bytes() -> u64 {
    super::tunables::get().collective_bytes.unwrap_or(crate::cluster::PIECE_BYTES as u64)
}

/// What a process holds of level `n`'s `losses` while it is decided: the
/// copies of its loss set ([`loss_set_copies`]) and, with several
/// processes, the receive buffer of one round of a gather (every
/// process's piece, `CHOMP_COLLECTIVE_BYTES` capped by
/// [`crate::cluster::pieces::piece_bytes`]).
fn loss_bytes(losses: u64, hold: Holding) -> u64 {
    let sets = (losses as f64 * LOSS_SET_BYTES_PER_LOSS * loss_set_copies(hold.processes)) as u64;
    let round =
        if hold.processes > 1 { crate::cluster::pieces::piece_bytes(collective_bytes(), hold.processes) * hold.processes } else { 0 };
    sets + (round as u64).min(sets)
}

/// Estimated bytes a process holds while computing level `n` (the largest
/// process's, with several): the mark bits of its shares of the pending
/// levels and their thread copies (at most), the level's losses
/// ([`loss_bytes`]), and for Grundy levels every smaller level's values
/// (mapped) plus this level's values and their compressed copy. What
/// `--max-memory` bounds; the dry run's peak adds the program and the
/// check's cache ([`preflight`]).
pub fn estimate_level_bytes(ranking: &Ranking, plan: &Plan, n: u32, manifest: &Manifest, hold: Holding) -> u64 {
    sieve_bytes(ranking, n, hold) + loss_bytes(level_losses(ranking, n, manifest), hold) + grundy_bytes(ranking, plan, n)
}

/// What a run holds besides its levels: the program, the threads' stacks
/// and the allocator's pools (a run of 5 tiles peaks at 7.6 MiB). Counted,
/// with [`check_bytes`], in the dry run's peak ([`preflight`]), not in what
/// `--max-memory` bounds (the levels' data, [`estimate_level_bytes`]).
const BASE_BYTES: u64 = 8 << 20;

/// The in-run check's cache of decoded blocks at level `n`: the decoded
/// tables written so far (a byte per position of a Grundy level, two per
/// loss), at most its bound.
fn check_bytes(ranking: &Ranking, plan: &Plan, n: u32) -> u64 {
    let decoded: u64 =
        (1..n).map(|m| if m <= plan.grundy_max_tiles { ranking.size(m) } else { 0 } + 2 * expected_losses(ranking.size(m))).sum();
    decoded.min(super::check::CHECK_CACHE_BYTES as u64)
}

/// Bytes the sieve holds while level `n` is pending: the word sieve's bit
/// set where a run uses it (a small box, one process), else the mark bits
/// of the pending levels and the most their thread copies may add.
fn sieve_bytes(ranking: &Ranking, n: u32, hold: Holding) -> u64 {
    super::words::chosen(ranking.universe(), hold).unwrap_or_else(|| Frontier::pending_bytes_with_copies(ranking, n, hold))
}

/// How each process of a run holds its mark bits: its share of each level,
/// and a window of half the memory it may use (`limit`, else what the
/// system and the cgroup report available, divided among the processes of
/// its node), the same on every process (the smallest). Levels whose bits
/// fit in half of that are sieved in one window, as without one.
pub fn holding(limit: Option<u64>, count_moves: bool, comm: &dyn Comm) -> Holding {
    let room = limit.or_else(available_memory).unwrap_or(u64::MAX);
    let mine = [room.to_le_bytes(), (comm.node_leader() as u64).to_le_bytes()].concat();
    let all: Vec<(u64, u64)> = comm
        .all_gather(&mine)
        .iter()
        .map(|b| (u64::from_le_bytes(b[..8].try_into().unwrap()), u64::from_le_bytes(b[8..16].try_into().unwrap())))
        .collect();
    let window = all
        .iter()
        .map(|&(room, node)| {
            // With --max-memory the limit is per process; available memory is the node's.
            let sharing = if limit.is_some() { 1 } else { all.iter().filter(|&&(_, n)| n == node).count() as u64 };
            room / sharing / 2
        })
        .min()
        .filter(|&w| w < u64::MAX / 4);
    Holding { processes: comm.processes(), window, count_moves }
}

fn grundy_bytes(ranking: &Ranking, plan: &Plan, n: u32) -> u64 {
    if n <= plan.grundy_max_tiles {
        (1..n).map(|m| ranking.size(m)).sum::<u64>() + 2 * ranking.size(n)
    } else {
        0
    }
}

/// The estimate of one level, before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelEstimate {
    /// The level.
    pub tiles: u32,
    /// Its positions.
    pub positions: u64,
    /// Seconds on `threads` threads.
    pub seconds: f64,
    /// Peak bytes held while computing it.
    pub memory: u64,
    /// Bytes its tables add on disk.
    pub disk: u64,
    /// Of `seconds`, those that open a window at this level (every decided
    /// loss pushed into its levels): 0 where no window opens, or at level 1.
    pub repush_seconds: f64,
    /// The last level of the window that opens here (`None` where none
    /// opens: inside a window, or a box solved by the word sieve).
    pub window_end: Option<u32>,
}

/// The preflight: an estimate of every level of a plan from level
/// `first` on (time on `threads` threads, peak memory, disk), from the
/// conjectured loss density and the throughput measured on the reference
/// machine. Rough by design: it tells minutes from hours, MiB from GiB.
///
/// The windows are those the run will open from `first` on
/// ([`Frontier::epoch_end`]); each one opened after level 1 (a later window,
/// or the first of a resumed run) costs the re-push of every decided loss
/// into its levels, counted at its first level ([`LevelEstimate::repush_seconds`]).
pub fn preflight(ranking: &Ranking, plan: &Plan, first: u32, threads: usize, hold: Holding) -> Vec<LevelEstimate> {
    let sym = ranking.universe().is_symmetric();
    let threads = threads.max(1) as f64;
    // The word sieve solves a box in one bit set: no windows.
    let windowed = super::words::chosen(ranking.universe(), hold).is_none();
    let (repush_positions, repush_losses) = repush_rates(ranking.universe());
    let sieve_rate = sieve_positions_per_core(ranking.universe());
    let mut open_until = 0;
    let mut out = Vec::new();
    for n in first..=ranking.max_tiles() {
        let positions = ranking.size(n);
        let losses = expected_losses(positions);
        let canonical = if sym { positions / 2 + 1 } else { positions };
        let mut seconds = positions as f64 / sieve_rate / threads + check_seconds(ranking, n, threads);
        let (mut repush_seconds, mut window_end) = (0.0, None);
        if windowed && n > open_until {
            open_until = Frontier::epoch_end(ranking, n, hold);
            window_end = Some(open_until);
            if n > 1 {
                let held: u64 = (n..=open_until).map(|m| ranking.size(m)).sum();
                let decided: u64 = (1..n).map(|m| expected_losses(ranking.size(m))).sum();
                repush_seconds = (held as f64 / repush_positions + decided as f64 / repush_losses) / threads;
            }
        }
        seconds += repush_seconds;
        if plan.count_moves {
            seconds *= COUNT_MOVES_COST;
            repush_seconds *= COUNT_MOVES_COST;
        }
        let mut disk = (losses as f64 * LOSS_TABLE_BYTES_PER_LOSS) as u64;
        if n <= plan.grundy_max_tiles {
            seconds += (canonical * (n as u64 - 1)) as f64 / GRUNDY_LOOKUPS_PER_CORE / threads;
            disk += (positions as f64 * GRUNDY_TABLE_BYTES_PER_POSITION) as u64;
        }
        let memory = sieve_bytes(ranking, n, hold) + level_bytes(ranking, plan, n, hold);
        out.push(LevelEstimate { tiles: n, positions, seconds, memory, disk, repush_seconds, window_end });
    }
    out
}

/// What the dry run counts a process holding at level `n` besides its mark
/// bits: the level's expected losses ([`loss_bytes`]), Grundy values, the
/// check's cache and the program ([`BASE_BYTES`]).
fn level_bytes(ranking: &Ranking, plan: &Plan, n: u32, hold: Holding) -> u64 {
    loss_bytes(expected_losses(ranking.size(n)), hold) + grundy_bytes(ranking, plan, n) + check_bytes(ranking, plan, n) + BASE_BYTES
}

/// Each process's estimated peak, in bytes, over the levels of a plan from
/// `first` on, run with `threads` threads per process: the windows the run
/// opens ([`Frontier::epoch_end`]), each cut among the processes as the
/// run cuts it ([`crate::index::split::Layout`]), every process's shares
/// of the pending levels with their thread copies, plus what every
/// process holds of a level (its losses, Grundy values, the check's cache,
/// the program). One value with one process.
pub fn process_peaks(ranking: &Ranking, plan: &Plan, first: u32, threads: usize, hold: Holding) -> Vec<u64> {
    let top = ranking.max_tiles();
    let mut peaks = vec![0u64; hold.processes];
    let common = |n: u32| level_bytes(ranking, plan, n, hold);
    if let Some(words) = super::words::chosen(ranking.universe(), hold) {
        let most = (first..=top).map(common).max().unwrap_or(0);
        return vec![words + most; hold.processes];
    }
    let mut from = first;
    while from <= top {
        let end = Frontier::epoch_end(ranking, from, hold);
        let layout = crate::index::split::Layout::new(ranking, from..=end, hold.processes);
        let bytes = Frontier::share_bytes(ranking, &layout, from..=end, hold);
        for (peak, level) in peaks.iter_mut().zip(&bytes) {
            // Bytes of each level of the window this process holds.
            for n in from..=end {
                let i = (n - from) as usize;
                let (marks, above) = (level[i..].iter().sum::<u64>(), level[i + 1..].iter().sum::<u64>());
                *peak = (*peak).max(Frontier::with_copies(marks, above, hold, threads) + common(n));
            }
        }
        from = end + 1;
    }
    peaks
}

/// Bytes the system reports available: `MemAvailable`, capped by the
/// memory limit of this process's cgroup (Slurm `--mem`, containers).
pub fn available_memory() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse().ok()?;
    let system = kib * 1024;
    Some(match cgroup_room() {
        Some(room) => system.min(room),
        None => system,
    })
}

/// Room left under this process's cgroup memory limit (v2 or v1), if it has one.
fn cgroup_room() -> Option<u64> {
    let membership = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let (v2, v1) = cgroup_paths(&membership);
    let read = |p: &str| fs::read_to_string(p).ok();
    let candidates = [
        (format!("/sys/fs/cgroup{v2}/memory.max"), format!("/sys/fs/cgroup{v2}/memory.current")),
        ("/sys/fs/cgroup/memory.max".into(), "/sys/fs/cgroup/memory.current".into()),
        (format!("/sys/fs/cgroup/memory{v1}/memory.limit_in_bytes"), format!("/sys/fs/cgroup/memory{v1}/memory.usage_in_bytes")),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes".into(), "/sys/fs/cgroup/memory/memory.usage_in_bytes".into()),
    ];
    for (limit, usage) in candidates {
        if let Some(text) = read(&limit) {
            let limit = parse_cgroup_limit(&text)?;
            let used = read(&usage).and_then(|u| u.trim().parse::<u64>().ok()).unwrap_or(0);
            // The process's own memory counts against the limit but is held already.
            return Some(limit.saturating_sub(used) + current_rss_kib() * 1024);
        }
    }
    None
}

/// The cgroup paths of this process (v2 unified, v1 memory controller)
/// from the text of `/proc/self/cgroup`; `""` where absent.
fn cgroup_paths(membership: &str) -> (String, String) {
    let mut v2 = String::new();
    let mut v1 = String::new();
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let path = if path == "/" { "" } else { path };
        if controllers.is_empty() {
            v2 = path.to_string();
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = path.to_string();
        }
    }
    (v2, v1)
}

/// A cgroup memory limit file's value: `None` for "max" or a value so
/// large it means no limit.
fn parse_cgroup_limit(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "max" {
        return None;
    }
    t.parse::<u64>().ok().filter(|&v| v < 1 << 60)
}

/// Human-readable bytes: MiB below a GiB, GiB above.
pub fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b < 100 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// Refuses a run, before it starts, with a level after those `resumed`
/// holds that would not fit ([`check_memory`] for every level left).
///
/// # Errors
/// [`JobError::Memory`] for the first level that would not fit.
pub fn check_run_memory(ranking: &Ranking, plan: &Plan, resumed: &Manifest, limit: Option<u64>, hold: Holding) -> Result<(), JobError> {
    for n in resumed.levels_complete + 1..=ranking.max_tiles() {
        check_memory(ranking, plan, n, resumed, limit, hold)?;
    }
    Ok(())
}

/// What a dry run reports: the first level after those `resumed` holds
/// that would not fit, and why (the check of [`check_run_memory`], without
/// its advice on resuming).
pub fn first_shortfall(ranking: &Ranking, plan: &Plan, resumed: &Manifest, limit: Option<u64>, hold: Holding) -> Option<String> {
    (resumed.levels_complete + 1..=ranking.max_tiles()).find_map(|n| shortfall(ranking, plan, n, resumed, limit, hold).map(|(why, _)| why))
}

/// Why level `n` would not fit, with the advice for a run stopped there.
fn shortfall(
    ranking: &Ranking,
    plan: &Plan,
    n: u32,
    manifest: &Manifest,
    limit: Option<u64>,
    hold: Holding,
) -> Option<(String, &'static str)> {
    let need = estimate_level_bytes(ranking, plan, n, manifest, hold);
    if let Some(limit) = limit {
        (need > limit).then(|| {
            (
                format!("level {n} needs about {}, more than --max-memory ({})", human_bytes(need), human_bytes(limit)),
                "rerun with a larger limit",
            )
        })
    } else {
        let avail = available_memory()?;
        let held = current_rss_kib() * 1024;
        (need.saturating_sub(held) > avail).then(|| {
            (
                format!("level {n} needs about {}, only {} is available", human_bytes(need), human_bytes(avail + held)),
                "rerun on a larger machine (or more processes)",
            )
        })
    }
}

/// Refuses to start level `n` when its estimate exceeds `limit` (or, with
/// none, what the system and the cgroup leave available).
///
/// # Errors
/// [`JobError::Memory`] saying what the level needs and how to resume.
pub fn check_memory(
    ranking: &Ranking,
    plan: &Plan,
    n: u32,
    manifest: &Manifest,
    limit: Option<u64>,
    hold: Holding,
) -> Result<(), JobError> {
    let Some((why, advice)) = shortfall(ranking, plan, n, manifest, limit, hold) else { return Ok(()) };
    let done = manifest.levels_complete;
    let kept = crate::read::completed_levels(done);
    let kept = if done > 0 { format!("{kept} and kept") } else { kept };
    let then = if done > 0 { "to resume" } else { "to start" };
    Err(JobError::Memory(format!("{why}; {kept}: {advice} {then}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_limits_parse() {
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit("4294967296\n"), Some(4 << 30));
        assert_eq!(parse_cgroup_limit("garbage"), None);
    }

    #[test]
    fn cgroup_membership_parses() {
        let v2 = "0::/slurm/uid_1000/job_42/step_0\n";
        assert_eq!(cgroup_paths(v2), ("/slurm/uid_1000/job_42/step_0".to_string(), String::new()));
        let v1 = "9:name=systemd:/\n4:memory:/slurm/job_7\n3:cpu,cpuacct:/\n";
        assert_eq!(cgroup_paths(v1), (String::new(), "/slurm/job_7".to_string()));
        assert_eq!(cgroup_paths("0::/\n"), (String::new(), String::new()));
    }

    #[test]
    fn preflight_covers_every_level_and_grows() {
        let ranking = Ranking::new(&crate::Universe::tiles(60)).unwrap();
        let plan = Plan::new(crate::Universe::tiles(60), 40);
        let est = preflight(&ranking, &plan, 1, 2, Holding::SOLO);
        assert_eq!(est.len(), 60);
        assert_eq!(est[59].positions, ranking.size(60));
        assert!(est[39].seconds > est[9].seconds);
        // Memory is the pending mark bits: every level's at the start, shrinking as levels are decided.
        let all_marks: u64 = (1..=60).map(|n| ranking.size(n).div_ceil(64) * 8).sum();
        assert!(est[0].memory >= all_marks && est[59].memory < est[50].memory);
        assert!(est.iter().all(|e| e.disk > 0 && e.memory > 0));
        assert_eq!(preflight(&ranking, &plan, 51, 2, Holding::SOLO).len(), 10);
    }

    #[test]
    fn windows_opened_after_level_1_cost_their_repush() {
        let ranking = Ranking::new(&crate::Universe::tiles(60)).unwrap();
        let plan = Plan::new(crate::Universe::tiles(60), 0);
        let repush = |est: &[LevelEstimate]| est.iter().map(|e| e.repush_seconds).sum::<f64>();
        // A fresh run in one window: nothing re-pushed.
        let fresh = preflight(&ranking, &plan, 1, 2, Holding::SOLO);
        assert_eq!(fresh.iter().filter_map(|e| e.window_end).collect::<Vec<_>>(), [60]);
        assert_eq!(repush(&fresh), 0.0);
        // A resumed run opens its window at the first level left: the
        // positions held and the losses decided below them, priced.
        let resumed = preflight(&ranking, &plan, 41, 2, Holding::SOLO);
        let held: u64 = (41..=60).map(|m| ranking.size(m)).sum();
        let decided: u64 = (1..41).map(|m| expected_losses(ranking.size(m))).sum();
        let want = (held as f64 / REPUSH_POSITIONS_PER_CORE + decided as f64 / REPUSH_LOSSES_PER_CORE) / 2.0;
        assert!((resumed[0].repush_seconds - want).abs() <= 1e-9 * want && want > 0.0);
        assert!(resumed[1..].iter().all(|e| e.repush_seconds == 0.0 && e.window_end.is_none()));
        for (a, b) in resumed.iter().zip(&fresh[40..]) {
            assert!((a.seconds - a.repush_seconds - b.seconds).abs() <= 1e-9 * b.seconds, "level {}", a.tiles);
        }
        // In windows: each opens where the last ended, and each after level 1 costs its re-push.
        let hold = Holding { window: Some(Frontier::pending_bytes(&ranking, 50, Holding::SOLO) / 3), ..Holding::SOLO };
        let est = preflight(&ranking, &plan, 1, 2, hold);
        let mut from = 1;
        for e in est.iter().filter(|e| e.window_end.is_some()) {
            assert_eq!(e.tiles, from);
            assert_eq!(e.window_end, Some(Frontier::epoch_end(&ranking, from, hold)));
            assert_eq!(e.repush_seconds > 0.0, from > 1, "window from {from}");
            from = e.window_end.unwrap() + 1;
        }
        assert_eq!(from, 61);
        assert!(est.iter().filter(|e| e.window_end.is_some()).count() > 2);
        assert!(repush(&est) > 0.0);
    }

    #[test]
    fn a_box_of_the_word_sieve_opens_no_window() {
        let ranking = Ranking::new(&crate::Universe::boxed(8, 8)).unwrap();
        let plan = Plan::new(crate::Universe::boxed(8, 8), 0);
        if crate::solve::words::chosen(ranking.universe(), Holding::SOLO).is_none() {
            panic!("an 8x8 box is solved by the word sieve");
        }
        let est = preflight(&ranking, &plan, 30, 2, Holding::SOLO);
        assert!(est.iter().all(|e| e.window_end.is_none() && e.repush_seconds == 0.0));
    }

    #[test]
    fn a_box_window_is_priced_at_the_box_rates() {
        // 10x42 is past the word sieve: a resumed run opens a window.
        let universe = crate::Universe::boxed(10, 42);
        let ranking = Ranking::new(&universe).unwrap();
        assert!(crate::solve::words::chosen(&universe, Holding::SOLO).is_none());
        let est = preflight(&ranking, &Plan::new(universe, 0), 200, 2, Holding::SOLO);
        let end = est[0].window_end.expect("a window opens at the first level left");
        let held: u64 = (200..=end).map(|m| ranking.size(m)).sum();
        let decided: u64 = (1..200).map(|m| expected_losses(ranking.size(m))).sum();
        let want = (held as f64 / BOX_REPUSH_POSITIONS_PER_CORE + decided as f64 / BOX_REPUSH_LOSSES_PER_CORE) / 2.0;
        assert!((est[0].repush_seconds - want).abs() <= 1e-9 * want && want > 0.0);
        // A tile run's rates would price it otherwise.
        let tiles = (held as f64 / REPUSH_POSITIONS_PER_CORE + decided as f64 / REPUSH_LOSSES_PER_CORE) / 2.0;
        assert!((tiles - want).abs() > 0.01 * want);
    }

    /// The dry run's levels of the `rows × cols` box, losses only, on 2
    /// threads holding `hold`.
    fn box_price(rows: u32, cols: u32, hold: Holding) -> (Ranking, Vec<LevelEstimate>) {
        let universe = crate::Universe::boxed(rows, cols);
        let ranking = Ranking::new(&universe).unwrap();
        let levels = preflight(&ranking, &Plan::new(universe, 0), 1, 2, hold);
        (ranking, levels)
    }

    /// A thin box has many levels of few positions, each checked on at
    /// least 64 positions of `n − 1` children: the check is most of its
    /// time. 4×254 took 13.7 s on 2 quiet cores (its check 8.7 s of CPU
    /// of 15.4); priced within 2× of that, where the sieve alone gave 3 s.
    #[test]
    fn a_thin_box_is_priced_with_its_check() {
        let (ranking, levels) = box_price(4, 254, Holding::SOLO);
        let seconds: f64 = levels.iter().map(|l| l.seconds).sum();
        assert!((13.7 / 2.0..=13.7 * 2.0).contains(&seconds), "4x254 priced {seconds:.1} s");
        let check: f64 = (1..=ranking.max_tiles()).map(|n| check_seconds(&ranking, n, 2.0)).sum();
        assert!(check > seconds / 2.0, "the check {check:.1} s of {seconds:.1} s");
    }

    /// The 21×21 box took 1 h 49 min 40 s with three re-pushes (with
    /// `--max-memory 34G`, four windows): priced within 2× of that, and its
    /// levels (56.2 min) within 20 %.
    #[test]
    fn a_square_box_is_priced_at_its_own_rate() {
        let (_, levels) = box_price(21, 21, holding(Some(34 << 30), false, &crate::cluster::Solo));
        let repush: f64 = levels.iter().map(|l| l.repush_seconds).sum();
        let seconds: f64 = levels.iter().map(|l| l.seconds).sum();
        let measured = 6580.0;
        assert!((measured / 2.0..=measured * 2.0).contains(&seconds), "21x21 priced {seconds:.0} s");
        let sieved = seconds - repush;
        assert!((0.8 * 3372.0..=1.2 * 3372.0).contains(&sieved), "21x21 levels priced {sieved:.0} s");
    }

    /// The 10×45 box took 7 min 6 s (426 s) on 2 threads with the memory
    /// of this machine (24 GiB; two windows): priced within 2× of that.
    #[test]
    fn a_thin_tall_box_is_priced_within_twice_its_run() {
        let (_, levels) = box_price(10, 45, holding(Some(22 << 30), false, &crate::cluster::Solo));
        let seconds: f64 = levels.iter().map(|l| l.seconds).sum();
        let measured = 426.0;
        assert!((measured / 2.0..=measured * 2.0).contains(&seconds), "10x45 priced {seconds:.0} s");
    }

    /// 255×4, the transpose of 4×255, took 123.6 s of user CPU on 2
    /// threads (18.5 s for 4×255): priced within 2× of half that, and
    /// above the wide box's price.
    #[test]
    fn a_tall_box_is_priced_above_its_wide_transpose() {
        let price = |r, c| box_price(r, c, Holding::SOLO).1.iter().map(|l| l.seconds).sum::<f64>();
        let (tall, wide) = (price(255, 4), price(4, 255));
        let measured = 123.6 / 2.0;
        assert!((measured / 2.0..=measured * 2.0).contains(&tall), "255x4 priced {tall:.0} s");
        assert!(tall > 2.0 * wide, "255x4 {tall:.0} s against 4x255 {wide:.0} s");
    }

    #[test]
    fn counting_moves_doubles_the_marks_and_costs_time() {
        let ranking = Ranking::new(&crate::Universe::tiles(70)).unwrap();
        let plain = Plan::new(crate::Universe::tiles(70), 0);
        let counting = Plan { count_moves: true, ..plain };
        // A pool of one thread: no thread copies either way.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let one = pool.install(|| preflight(&ranking, &plain, 1, 1, Holding::SOLO));
        let two = pool.install(|| preflight(&ranking, &counting, 1, 1, Holding { count_moves: true, ..Holding::SOLO }));
        let marks = |n: u32| Frontier::pending_bytes(&ranking, n, Holding::SOLO);
        for (a, b) in one.iter().zip(&two) {
            // The second bits double the marks.
            assert_eq!(b.memory - a.memory, marks(a.tiles), "level {}", a.tiles);
            assert!((b.seconds - a.seconds * COUNT_MOVES_COST).abs() <= 1e-9 * b.seconds, "level {}", a.tiles);
        }
    }
}
