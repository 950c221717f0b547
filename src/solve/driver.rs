//! The level driver: computes a plan level by level into a table
//! directory, checkpointing (the manifest) after a level once
//! [`Options::checkpoint_seconds`] have passed since the last checkpoint,
//! resuming after the last checkpointed level.

use super::check::Checker;
use super::error::io_err;
use super::events::{Event, LevelReport, ProcessWork};
use super::grundy;
use super::identity::{self, Identity};
use super::memory::{check_memory, check_run_memory, holding, peak_rss_kib, preflight, resident_kib};
use super::options::Options;
use super::plan::Plan;
use super::sieve::{Frontier, Holding, LevelLosses};
use super::JobError;
use crate::cluster::{self, Comm, Solo};
use crate::index::split;
use crate::index::Ranking;
use crate::report::summary::LevelStats;
use crate::store::manifest::SelfChecked;
use crate::store::mapped::{map_read_only, MappedBytes};
use crate::store::{shards_of, FileEntry, Manifest, TableDir};
use memmap2::Mmap;
use roaring::{MultiOps, RoaringTreemap};
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Runs a plan into `opts.out` in this process, resuming a previous run of
/// the same plan. Returns the final manifest.
///
/// # Errors
/// [`JobError`] for invalid plans, foreign or busy directories, I/O
/// failures and damaged checkpoints. Completed levels stay intact on error.
pub fn run(plan: &Plan, opts: &Options, on_event: impl FnMut(&Event)) -> Result<Manifest, JobError> {
    run_on(plan, opts, &Solo, on_event)
}

/// Runs a plan on the processes of `comm`. Every process computes its share
/// of each level and ends with the same data; the level's tables are dealt
/// to the processes, each writing its own, and process 0 (the coordinator)
/// writes the manifest and the summaries. The table directory must be on a
/// file system every process reads and writes. Returns the final manifest
/// (on every process).
///
/// # Errors
/// As [`run`]; also when processes run different binaries or jobs. With
/// several processes an error on one leaves the others waiting: the caller
/// aborts the job ([`Comm::abort`]).
pub fn run_on(plan: &Plan, opts: &Options, comm: &dyn Comm, mut on_event: impl FnMut(&Event)) -> Result<Manifest, JobError> {
    let ranking = plan.validate()?;
    super::tunables::check_env().map_err(JobError::Invalid)?;
    // One process flushes its table files at each checkpoint at once; with
    // several, each flushes its own as it writes them (process 0's flush
    // could not reach another node's cache).
    let dir = if comm.processes() == 1 { TableDir::new(&opts.out).deferring() } else { TableDir::new(&opts.out) };
    let root = comm.is_root();
    if comm.processes() > 1 {
        identity::check_same(&Identity::of_this_process(plan, opts), comm).map_err(JobError::Mismatch)?;
    }
    // Every process has the same tunables now: all check, or none.
    let ordered = super::tunables::get().check_collectives.then(|| cluster::Ordered::new(comm));
    let comm: &dyn Comm = match &ordered {
        Some(o) => o,
        None => comm,
    };
    // Refuse at once, before the directory is created, a run with a level
    // that would not fit even in a window of its own.
    let hold = holding(opts.max_memory, plan.count_moves, comm);
    if let Some(w) = opts.work_dir.as_ref().filter(|w| w.exists() && !w.is_dir()) {
        return Err(JobError::Invalid(format!("--work-dir {}: a file, not a directory", w.display())));
    }
    let fresh = plan.manifest(&ranking);
    let known = dir.read_manifest().ok().filter(|m| !opts.force && m.same_job(&fresh));
    check_run_memory(&ranking, plan, known.as_ref().unwrap_or(&fresh), opts.max_memory, hold)?;
    let mut lock = None;
    let mut manifest = if root {
        lock = Some(dir.lock()?);
        let m = dir.open_run(fresh, opts.force)?;
        // A run killed after its last checkpoint may have left scratch or
        // temporary files behind: never part of the result. (Before the
        // barrier: the other processes create their scratch after it.)
        dir.remove_leftovers()?;
        m
    } else {
        fresh
    };
    // Process 0's manifest, sent (also the point where every process knows
    // the directory is ready: scratch is created after it).
    manifest = from_root(&manifest, dir.path(), comm)?;
    if manifest.complete {
        return Ok(manifest);
    }
    if root {
        let threads = rayon::current_num_threads() * comm.processes();
        on_event(&Event::Estimate { levels: preflight(&ranking, plan, manifest.levels_complete + 1, threads, hold), threads });
    }
    // One scratch directory per node, named after its first process (and,
    // on a shared --work-dir, that process's pid), shared by the node's
    // processes: the Grundy values of smaller levels are mapped once per node.
    let leader = comm.node_leader();
    let work = match &opts.work_dir {
        Some(w) => {
            let pids = comm.all_gather(&std::process::id().to_le_bytes());
            let pid = u32::from_le_bytes(pids[leader][..4].try_into().expect("a pid is 4 bytes"));
            w.join(format!("{}{pid}-node{leader}", super::scratch::PREFIX))
        }
        None => dir.node_work_dir(leader),
    };
    if root {
        dir.create_table_dirs()?;
    }
    // The node's first process owns its scratch while the run lasts (and
    // removes the scratch of killed runs on this node's --work-dir first).
    let mut scratch = None;
    if comm.is_node_leader() {
        if let Some(w) = &opts.work_dir {
            super::scratch::remove_stale(w);
        }
        scratch = Some(super::scratch::Scratch::create(&work)?);
    }
    comm.node_barrier();
    let result = run_levels(plan, &ranking, &dir, &work, &mut manifest, comm, opts, hold, &mut on_event);
    // Unlinking is safe while the node's other processes still map the files.
    drop(scratch);
    let stopped = matches!(result, Err(JobError::Stopped { .. }));
    if result.is_err() && !stopped && root && manifest.levels_complete > 0 {
        // Checkpoints are batched: keep the levels completed before the
        // failure (after the scratch files are gone, which may be what
        // filled the disk), as many as the disk has room for.
        let durable = dir.read_manifest().map_or(0, |m| m.levels_complete);
        dir.checkpoint_after_failure(&mut manifest, durable);
    }
    result?;
    if root {
        // Every process has passed the final gather: their scratch is gone.
        let _ = dir.remove_leftovers();
    }
    drop(lock);
    Ok(manifest)
}

/// Runs the levels after the last checkpoint, one [`Levels::level`] at a
/// time: decide its losses, write them, its Grundy values, then check and
/// commit it; at a window's end, open the next window.
#[allow(clippy::too_many_arguments)]
fn run_levels(
    plan: &Plan,
    ranking: &Ranking,
    dir: &TableDir,
    work: &Path,
    manifest: &mut Manifest,
    comm: &dyn Comm,
    opts: &Options,
    hold: Holding,
    on_event: &mut impl FnMut(&Event),
) -> Result<(), JobError> {
    // The time spent in collectives, for the end-of-run report.
    let timed = crate::cluster::Timed::new(comm, super::memory::cpu_seconds);
    let comm: &dyn Comm = &timed;
    let mut run = Levels::start(Ctx { plan, ranking, dir, work, comm, timed: &timed, opts, hold }, manifest, on_event)?;
    let (levels_started, waited_before) = (Instant::now(), timed.seconds());
    let (cpu_before, cpu_waited_before) = (super::memory::cpu_seconds(), timed.cpu_seconds());
    for n in manifest.levels_complete + 1..=run.top {
        run.level(n, manifest, on_event)?;
        if n < run.top && run.stop_agreed() {
            run.checkpoint_now(n, manifest, on_event)?;
            // Every process exits once the checkpoint is written.
            comm.barrier();
            return Err(JobError::Stopped { levels_complete: n });
        }
    }
    if comm.is_root() {
        dir.finish(manifest)?;
    }
    let mut mine = std::mem::take(&mut run.mine);
    mine.enumeration_steps = run.frontier.enumerated();
    mine.mark_bytes = run.frontier.peak_held_bytes();
    mine.wait_seconds = timed.seconds() - waited_before;
    mine.compute_seconds = levels_started.elapsed().as_secs_f64() - mine.wait_seconds;
    let cpu_waited = timed.cpu_seconds() - cpu_waited_before;
    mine.compute_cpu_seconds = (super::memory::cpu_seconds() - cpu_before - cpu_waited).max(0.0);
    mine.cpu_seconds = super::memory::cpu_seconds();
    // Resident memory while every level's values are still mapped.
    (mine.rss_kib, mine.pss_kib) = resident_kib();
    mine.node = comm.node_leader();
    drop(run);
    mine.peak_kib = peak_rss_kib();
    let all: Vec<ProcessWork> = comm.all_gather(&mine.to_bytes()).iter().map(|b| ProcessWork::from_bytes(b)).collect();
    if comm.is_root() {
        on_event(&Event::Processes(all));
    }
    Ok(())
}

/// What every step of a run reads and never changes.
struct Ctx<'a> {
    plan: &'a Plan,
    ranking: &'a Ranking,
    dir: &'a TableDir,
    /// The node's scratch directory.
    work: &'a Path,
    comm: &'a dyn Comm,
    /// `comm`'s clock and gathered bytes.
    timed: &'a crate::cluster::Timed<'a>,
    opts: &'a Options,
    hold: Holding,
}

/// The state a run carries from level to level.
struct Levels<'a> {
    cx: Ctx<'a>,
    top: u32,
    /// A small box of one process: every loss, found at once by the word sieve.
    words: Option<super::words::BoxLosses>,
    /// The level sieve's marks of the pending levels (none when `words`).
    frontier: Frontier,
    /// The Grundy values of the levels below, mapped (index = tiles).
    grundy_maps: Vec<Option<Mmap>>,
    checker: Checker,
    shard_limit: Option<u64>,
    /// This process's work, for the end-of-run report.
    mine: ProcessWork,
    checkpointed: Instant,
}

/// A level's losses, written.
struct Decided {
    found: LevelLosses,
    stats: LevelStats,
    /// Each table's first rank, positions and losses.
    shards: Vec<crate::store::Shard>,
    /// The shards' rank ranges, where the level is sharded.
    ranges: Option<Vec<std::ops::Range<u64>>>,
    /// The files this process wrote (name, size and digests).
    written: Vec<(String, FileEntry)>,
    sieve_seconds: f64,
}

impl<'a> Levels<'a> {
    /// Before the first level: the word sieve (a small box on one process),
    /// the first window of the level sieve, and on a resumed run the levels
    /// already decided (their losses pushed, their values mapped).
    fn start(cx: Ctx<'a>, manifest: &Manifest, on_event: &mut impl FnMut(&Event)) -> Result<Self, JobError> {
        let Ctx { plan, ranking, dir, work, comm, opts, hold, .. } = cx;
        let top = ranking.max_tiles();
        let mut words = None;
        if let Some(bytes) = super::words::chosen(ranking.universe(), hold).filter(|_| manifest.levels_complete < top) {
            let t0 = Instant::now();
            let solved = super::words::box_losses(ranking, rayon::current_num_threads()).map_err(io_err(work))?;
            let losses = solved.ranks.iter().map(|r| r.len() as u64).sum();
            on_event(&Event::WordSieve { bytes, seconds: t0.elapsed().as_secs_f64(), losses });
            words = Some(solved);
        }
        let decided = if words.is_some() { top } else { manifest.levels_complete };
        let mut frontier = Frontier::new(ranking, decided, comm, hold).map_err(io_err(work))?;
        if frontier.horizon() < top {
            on_event(&window(&frontier, manifest.levels_complete + 1));
        }
        let mut grundy_maps: Vec<Option<Mmap>> = vec![None];
        let mut table_bytes_read = 0;
        if manifest.levels_complete > 0 {
            on_event(&Event::Resumed { levels_complete: manifest.levels_complete });
            table_bytes_read =
                reload(ranking, plan, dir, work, manifest, words.is_none().then_some(&mut frontier), &mut grundy_maps, comm)?;
        }
        let checker = Checker::new(opts.check_samples);
        if comm.is_root() && !checker.active(manifest) && manifest.levels_complete < top {
            on_event(&Event::Unchecked { samples: opts.check_samples, format: manifest.format_version });
        }
        Ok(Levels {
            top,
            words,
            frontier,
            grundy_maps,
            checker,
            shard_limit: plan.shard_limit(ranking),
            mine: ProcessWork { process: comm.process(), table_bytes_read, ..Default::default() },
            checkpointed: Instant::now(),
            cx,
        })
    }

    /// Level `n`, from its losses to its commit in the manifest.
    fn level(&mut self, n: u32, manifest: &mut Manifest, on_event: &mut impl FnMut(&Event)) -> Result<(), JobError> {
        on_event(&Event::Started { tiles: n });
        injected_failure(self.cx.comm.process(), n)?;
        let Ctx { plan, ranking, opts, hold, timed, .. } = self.cx;
        check_memory(ranking, plan, n, manifest, opts.max_memory, hold)?;
        timed.take_largest_gather();
        let mut level = self.decide(n, manifest)?;
        let (mut grundy_seconds, mut lookups) = (0.0, 0);
        if n <= plan.grundy_max_tiles {
            (grundy_seconds, lookups) = self.grundy(n, manifest, &mut level)?;
        }
        let (checked, check_seconds) = self.commit(n, manifest, &level)?;
        let (largest_gather_bytes, gather_rounds) = timed.take_largest_gather();
        self.checkpoint_after(n, manifest, on_event)?;
        on_event(&Event::Level(LevelReport {
            stats: level.stats,
            max_tiles: self.top,
            sieve_seconds: level.sieve_seconds,
            grundy_seconds,
            marks: level.found.marks,
            lookups,
            checked,
            check_seconds,
            largest_gather_bytes,
            gather_rounds,
        }));
        if n == self.frontier.horizon() && n < self.top {
            self.next_window(n, manifest, on_event)?;
        }
        Ok(())
    }

    /// Whether this process writes table `shard` of level `n`. Every
    /// process holds the level's losses (and, after the merge, its values),
    /// so the tables are dealt round robin: each process encodes and writes
    /// its own, and a level of one table rotates.
    fn ours(&self, n: u32) -> impl Fn(usize) -> bool + Copy {
        let (process, processes) = (self.cx.comm.process(), self.cx.comm.processes());
        move |shard: usize| (shard + n as usize) % processes == process
    }

    /// The sieve (or the word sieve's result) decides level `n`'s losses;
    /// this process writes its loss tables.
    fn decide(&mut self, n: u32, manifest: &Manifest) -> Result<Decided, JobError> {
        let Ctx { ranking, dir, comm, .. } = self.cx;
        let size = ranking.size(n);
        let t0 = Instant::now();
        let found = match &mut self.words {
            Some(w) => {
                let ranks =
                    RoaringTreemap::from_sorted_iter(std::mem::take(&mut w.ranks[n as usize])).expect("the word sieve's increasing ranks");
                LevelLosses { ranks, marks: w.marks[n as usize], scanned: size, several: None }
            }
            None => self.frontier.sieve_level(ranking, n, comm),
        };
        self.mine.marks += found.marks;
        self.mine.scanned += found.scanned;
        let losses = found.ranks.len();
        let ranges = self.shard_limit.map(|limit| split::shard_ranges(ranking, n, limit));
        let shards = shards_of(size, &found.ranks, ranges.as_deref());
        let written = dir.write_losses(manifest, n, size, &found.ranks, ranges.as_deref(), self.ours(n))?;
        let mut stats = LevelStats { tiles: n, positions: size, losses, ..Default::default() };
        if let Some(mine) = found.several {
            let [several] = sum_over(comm, [mine]);
            let wins = size - losses;
            let one = wins.checked_sub(several).ok_or_else(|| {
                JobError::SelfCheck(format!("level {n}: {several} positions with several winning moves, but only {wins} wins"))
            })?;
            (stats.wins_one_move, stats.wins_several_moves) = (Some(one), Some(several));
        }
        Ok(Decided { found, stats, shards, ranges, written, sieve_seconds: t0.elapsed().as_secs_f64() })
    }

    /// Level `n`'s Grundy values, checked against the sieve's losses, and
    /// this process's Grundy tables. Returns the seconds and look-ups.
    fn grundy(&mut self, n: u32, manifest: &Manifest, level: &mut Decided) -> Result<(f64, u64), JobError> {
        let Ctx { plan, ranking, dir, work, comm, .. } = self.cx;
        let size = ranking.size(n);
        let t1 = Instant::now();
        let raw_path = work.join(format!("g{n:04}.bin"));
        let lower: Vec<&[u8]> = self.grundy_maps.iter().map(|m| m.as_deref().unwrap_or(&[])).collect();
        // The node's processes write their cells into one file; the
        // nodes' first processes then merge the nodes' files.
        let mut cells = node_shared_cells(&raw_path, size, comm)?;
        let computed = grundy::grundy_level(ranking, n, &lower, cells.cells(), comm, plan.count_moves)?;
        comm.node_barrier();
        if comm.is_node_leader() {
            comm.leaders_or_bytes(&mut cells.bytes_mut()[..size as usize]);
        }
        comm.node_barrier();
        let map = cells.into_read_only().map_err(io_err(&raw_path))?;
        let values = &map[..size as usize];
        let histogram = grundy::histogram(values);
        // Two independent computations must agree on the losses.
        let losses = level.stats.losses;
        if histogram[0] != losses || !level.found.ranks.iter().all(|r| values[r as usize] == 0) {
            return Err(JobError::SelfCheck(format!("level {n}: the sieve finds {losses} losses, the Grundy pass {}", histogram[0])));
        }
        // And on the winning moves: a position's losing children are its
        // children of value 0, so the positions without one are the losses.
        if let Some(mine) = computed.moves {
            let moves = sum_slices(comm, &mine);
            let grundy = (moves[0], moves.get(1).copied().unwrap_or(0), moves.iter().skip(2).sum::<u64>());
            let sieve = (losses, level.stats.wins_one_move.unwrap_or(0), level.stats.wins_several_moves.unwrap_or(0));
            if grundy != sieve {
                return Err(JobError::SelfCheck(format!(
                    "level {n}: the sieve finds {} losses, {} wins with one winning move and {} with several, the Grundy pass {}, {} and {}",
                    sieve.0, sieve.1, sieve.2, grundy.0, grundy.1, grundy.2
                )));
            }
            level.stats.winning_moves_histogram = Some(grundy::without_trailing_zeros(moves));
        }
        let sharded = level.ranges.is_some();
        level.written.extend(dir.write_grundy(manifest, n, values, &level.shards, sharded, self.ours(n))?);
        self.grundy_maps.push(Some(map));
        level.stats.grundy_histogram = Some(histogram);
        self.mine.evaluated += computed.evaluated;
        self.mine.lookups += computed.lookups;
        Ok((t1.elapsed().as_secs_f64(), computed.lookups))
    }

    /// Every process's files are written once this is called: the manifest
    /// may list them. The level joins the run's manifest once its check
    /// passes (a failure leaves it out of every checkpoint). Returns the
    /// positions checked and the seconds.
    fn commit(&mut self, n: u32, manifest: &mut Manifest, level: &Decided) -> Result<(u64, f64), JobError> {
        let Ctx { dir, comm, .. } = self.cx;
        let mut next = manifest.clone();
        next.add_entries(gather_entries(&level.written, comm));
        next.levels.push(level.stats.clone());
        if level.ranges.is_some() {
            next.shards.push(level.shards.clone());
        }
        next.levels_complete = n;
        let t2 = Instant::now();
        let checked = self.checker.check(dir.path(), &next, n, &level.found.ranks, comm);
        next.checks.extend(checked.record(n).map_err(JobError::SelfCheck)?);
        let check_seconds = t2.elapsed().as_secs_f64();
        *manifest = next;
        Ok((checked.positions, check_seconds))
    }

    /// Whether any process was asked to stop ([`Options::stop`]): a
    /// collective at every level's end, so that all stop after the same level.
    fn stop_agreed(&self) -> bool {
        let Ctx { comm, opts, .. } = self.cx;
        let mine = opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let [asked] = sum_over(comm, [u64::from(mine)]);
        asked > 0
    }

    /// A checkpoint of the levels to `n` now (process 0 writes it).
    fn checkpoint_now(&mut self, n: u32, manifest: &mut Manifest, on_event: &mut impl FnMut(&Event)) -> Result<(), JobError> {
        let Ctx { dir, comm, .. } = self.cx;
        if comm.is_root() {
            dir.sync_written()?;
            manifest.write(dir.path())?;
            self.checkpointed = Instant::now();
            on_event(&Event::Checkpointed { levels_complete: n });
        }
        Ok(())
    }

    /// A checkpoint once `checkpoint_seconds` have passed since the last
    /// (the last level's checkpoint is the finished manifest).
    fn checkpoint_after(&mut self, n: u32, manifest: &mut Manifest, on_event: &mut impl FnMut(&Event)) -> Result<(), JobError> {
        let Ctx { comm, opts, .. } = self.cx;
        if comm.is_root() && n < self.top && self.checkpointed.elapsed().as_secs_f64() >= opts.checkpoint_seconds {
            self.checkpoint_now(n, manifest, on_event)?;
        }
        Ok(())
    }

    /// The next window (epoch) after level `n`: checkpoint (process 0
    /// sends the manifest it wrote to every process), hold its marks, push
    /// every decided loss into it.
    fn next_window(&mut self, n: u32, manifest: &mut Manifest, on_event: &mut impl FnMut(&Event)) -> Result<(), JobError> {
        let Ctx { ranking, dir, work, comm, .. } = self.cx;
        self.checkpoint_now(n, manifest, on_event)?;
        *manifest = from_root(manifest, dir.path(), comm)?;
        self.frontier.open_epoch(ranking, comm).map_err(io_err(work))?;
        on_event(&window(&self.frontier, n + 1));
        self.mine.table_bytes_read += push_from_tables(ranking, dir, manifest, &mut self.frontier, n, comm)?;
        Ok(())
    }
}

/// The test knobs `CHOMP_TEST_PANIC` and `CHOMP_TEST_ERROR`: `process`
/// panics, or stops with an error, as level `n` starts.
fn injected_failure(process: usize, n: u32) -> Result<(), JobError> {
    let t = super::tunables::get();
    if t.test_panic == Some((process, n)) {
        panic!("CHOMP_TEST_PANIC: process {process} panics at the start of level {n}");
    }
    if t.test_error == Some((process, n)) {
        return Err(JobError::Invalid(format!("CHOMP_TEST_ERROR: process {process} stops at the start of level {n}")));
    }
    Ok(())
}

/// Process 0's manifest on every process (one gather, to which the others
/// send nothing): they learn of a checkpoint from it rather than from the
/// file, which a shared file system's caches may still show them as it was.
fn from_root(manifest: &Manifest, dir: &Path, comm: &dyn Comm) -> Result<Manifest, JobError> {
    if comm.processes() == 1 {
        return Ok(manifest.clone());
    }
    let mine = if comm.is_root() { manifest.canonical().into_bytes() } else { Vec::new() };
    let all = comm.all_gather(&mine);
    let text = String::from_utf8_lossy(&all[0]);
    Ok(Manifest::parse(&dir.join(crate::store::MANIFEST), &text)?)
}

/// The event that announces a window of the level sieve from level `from`.
fn window(frontier: &Frontier, from: u32) -> Event {
    Event::Window { from, to: frontier.horizon(), bytes: frontier.held_bytes() }
}

/// The sums of every process's counts `xs`, on every process (one gather).
fn sum_over<const N: usize>(comm: &dyn Comm, xs: [u64; N]) -> [u64; N] {
    sum_slices(comm, &xs).try_into().expect("N sums")
}

/// Every process's `xs` added up element by element (the same length on
/// every process).
fn sum_slices(comm: &dyn Comm, xs: &[u64]) -> Vec<u64> {
    if comm.processes() == 1 {
        return xs.to_vec();
    }
    let mine: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut sums = vec![0u64; xs.len()];
    for theirs in comm.all_gather(&mine) {
        assert_eq!(theirs.len(), mine.len(), "every process sums as many counts");
        for (sum, b) in sums.iter_mut().zip(theirs.chunks_exact(8)) {
            *sum += u64::from_le_bytes(b.try_into().expect("8 bytes a count"));
        }
    }
    sums
}

/// Every process's written files, on every process.
fn gather_entries(written: &[(String, FileEntry)], comm: &dyn Comm) -> Vec<(String, FileEntry)> {
    if comm.processes() == 1 {
        return written.to_vec();
    }
    let mine = serde_json::to_vec(written).expect("serializing file entries");
    comm.all_gather(&mine)
        .iter()
        .flat_map(|b| serde_json::from_slice::<Vec<(String, FileEntry)>>(b).expect("file entries from a process of this job"))
        .collect()
}

/// Pushes the losses of levels `1..=decided`, read back from their tables,
/// into the pending levels held (after a resume, or when a window opens).
/// Returns the bytes of tables this process read.
///
/// With several processes each table is read, checked and decoded by one
/// process (table `s` of level `n` by process `(s + n) mod K`, its
/// writer's rule), and the level's losses are gathered as roaring sets: K
/// processes read the tables once between them, not K times. A process
/// that cannot read its table says so in the gather, and every process
/// returns the first such error (in process order): none is left waiting
/// in a collective.
pub(super) fn push_from_tables(
    ranking: &Ranking,
    dir: &TableDir,
    manifest: &Manifest,
    frontier: &mut Frontier,
    decided: u32,
    comm: &dyn Comm,
) -> Result<u64, JobError> {
    let mut read = 0;
    let size_of = |tiles: u32, shard: usize| {
        let names = TableDir::table_names(manifest, crate::store::Kind::Losses, tiles);
        names.get(shard).and_then(|name| manifest.files.get(name)).map_or(0, |e| e.bytes)
    };
    for n in 1..=decided {
        if comm.processes() == 1 {
            read += (0..manifest.level_shards(n).len()).map(|s| size_of(n, s)).sum::<u64>();
            frontier.push_decided(ranking, n, &dir.read_losses(manifest, n)?, decided + 1);
            continue;
        }
        let (me, k) = (comm.process(), comm.processes());
        let mine = (|| {
            let mut set = RoaringTreemap::new();
            for (s, shard) in manifest.level_shards(n).iter().enumerate() {
                if (s + n as usize) % k != me {
                    continue;
                }
                let ranks = dir.read_loss_shard(manifest, n, s)?;
                read += size_of(n, s);
                set.append(ranks.iter().map(|r| shard.first + u64::from(r)))
                    .expect("a shard's ranks, increasing, after the shards before it");
            }
            Ok::<_, JobError>(set)
        })();
        let all = gather_read(comm, mine)?;
        frontier.push_decided(ranking, n, &all, decided + 1);
    }
    Ok(read)
}

/// Every process's part of a level read back from its tables, united, on
/// every process; or the first process's error, on every process.
fn gather_read(comm: &dyn Comm, mine: Result<RoaringTreemap, JobError>) -> Result<RoaringTreemap, JobError> {
    let bytes = match &mine {
        Ok(set) => {
            let mut b = vec![0u8];
            set.serialize_into(&mut b).expect("writing to memory");
            b
        }
        Err(e) => [&[1u8][..], e.to_string().as_bytes()].concat(),
    };
    let mut sets = Vec::new();
    for (process, part) in comm.all_gather(&bytes).into_iter().enumerate() {
        match part.split_first() {
            Some((0, set)) => sets.push(RoaringTreemap::deserialize_from(set).expect("a bitmap serialized by a peer process")),
            Some((_, why)) => {
                return Err(match mine {
                    Err(e) if process == comm.process() => e,
                    _ => JobError::Refused(format!("process {process}: {}", String::from_utf8_lossy(why))),
                })
            }
            None => unreachable!("every process sends a tag"),
        }
    }
    Ok(sets.union())
}

/// A level's Grundy cells in the node's shared file `path`, zero: the
/// node's first process creates it, the others map it once it exists. A
/// node's only process keeps them in anonymous memory instead (and reads
/// them from there at later levels).
fn node_shared_cells(path: &Path, size: u64, comm: &dyn Comm) -> Result<MappedBytes, JobError> {
    // Alone on its node, a process needs no file: a mapped file's pages,
    // written back while the level runs, fault again at the next store
    // (the conjugates' stores land all over the level).
    if comm.node_processes() == 1 {
        return MappedBytes::anonymous(size).map_err(io_err(path));
    }
    let created = if comm.is_node_leader() { Some(MappedBytes::create(path, size).map_err(io_err(path))?) } else { None };
    comm.node_barrier();
    match created {
        Some(cells) => Ok(cells),
        None => MappedBytes::open(path, size).map_err(io_err(path)),
    }
}

/// Rebuilds the in-memory state of completed levels from their tables:
/// their losses are pushed again into the pending levels (each process into
/// the ranks it owns; not when the word sieve found every loss: `frontier`
/// is `None`), their Grundy values mapped (written once per node; a node's
/// only process holds them in anonymous memory).
#[allow(clippy::too_many_arguments)]
fn reload(
    ranking: &Ranking,
    plan: &Plan,
    dir: &TableDir,
    work: &Path,
    manifest: &Manifest,
    frontier: Option<&mut Frontier>,
    grundy_maps: &mut Vec<Option<Mmap>>,
    comm: &dyn Comm,
) -> Result<u64, JobError> {
    let decided = manifest.levels_complete;
    let read = match frontier {
        Some(frontier) => push_from_tables(ranking, dir, manifest, frontier, decided, comm)?,
        None => 0,
    };
    for n in 1..=decided.min(plan.grundy_max_tiles) {
        if comm.node_processes() == 1 {
            // Alone on its node, as for the levels it computes: anonymous
            // memory on huge pages, no work file written (15 GB when a run
            // to 120 tiles resumes late) and mapped in 4 KiB pages.
            let values = dir.read_grundy_values(manifest, n)?;
            let mut cells = MappedBytes::anonymous(values.len() as u64).map_err(io_err(dir.path()))?;
            cells.bytes_mut()[..values.len()].copy_from_slice(&values);
            drop(values);
            grundy_maps.push(Some(cells.into_read_only().map_err(io_err(dir.path()))?));
            continue;
        }
        let raw = work.join(format!("g{n:04}.bin"));
        if comm.is_node_leader() {
            let values = dir.read_grundy_values(manifest, n)?;
            fs::write(&raw, &values).map_err(io_err(&raw))?;
        }
        comm.node_barrier();
        grundy_maps.push(Some(map_read_only(&raw).map_err(io_err(&raw))?));
    }
    Ok(read)
}
