//! The cluster path in `cargo test`: K processes as threads of this process
//! ([`ThreadCluster`], each with its own rayon pool and frontier share, on
//! the same code as MPI processes), every collective checked for order
//! ([`Ordered`]) and every gather cut into small pieces. Each run must write
//! exactly the bytes of one process.

use super::common::contents;
use chomp_tables::cluster::{Comm, Ordered, ThreadCluster};
use chomp_tables::solve::{run, run_on, Event, JobError, Options, Plan, ProcessWork};
use chomp_tables::{Manifest, TableDir, Universe};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One process's bytes for `plan`.
fn one_process(plan: &Plan, out: &Path) -> BTreeMap<String, Vec<u8>> {
    run(plan, &Options::new(out), |_| {}).unwrap();
    contents(out)
}

/// Runs `plan` on `cluster`, every process's collectives checked for
/// order; `events` sees each process's events. Returns each process's
/// outcome (an error or a panic as its message). As `chomp` does, a
/// process that returns an error of its own ends the job.
fn on_cluster(cluster: ThreadCluster, plan: &Plan, opts: &Options, events: impl Fn(usize, &Event) + Sync) -> Vec<Result<Manifest, String>> {
    let got = cluster.run(|comm| {
        let ordered = Ordered::new(comm);
        let p = comm.process();
        run_on(plan, opts, &ordered, |e| events(p, e)).map_err(|e| match e {
            // Found by every process at once: each returns it.
            JobError::Mismatch(_) | JobError::Stopped { .. } => e.to_string(),
            e if comm.processes() > 1 => ordered.fail_alone(&e.to_string()),
            e => e.to_string(),
        })
    });
    got.into_iter().map(|r| r.and_then(|run| run)).collect()
}

fn all_ok(got: Vec<Result<Manifest, String>>) -> Vec<Manifest> {
    got.into_iter().enumerate().map(|(p, r)| r.unwrap_or_else(|e| panic!("process {p}: {e}"))).collect()
}

fn cluster(processes: usize, per_node: usize, piece_bytes: usize) -> ThreadCluster {
    ThreadCluster { processes, per_node, threads: 1, piece_bytes }
}

/// Runs `plan` on `cluster` and on one process: the same bytes. Returns
/// process 0's manifest.
fn writes_one_process_bytes(cluster: ThreadCluster, plan: &Plan) -> Manifest {
    let tmp = tempfile::tempdir().unwrap();
    let want = one_process(plan, &tmp.path().join("one"));
    let out = tmp.path().join("cluster");
    let manifests = all_ok(on_cluster(cluster, plan, &Options::new(&out), |_, _| {}));
    assert_eq!(contents(&out), want, "{} processes, {} a node", cluster.processes, cluster.per_node);
    manifests.into_iter().next().unwrap()
}

#[test]
fn two_processes_write_one_process_bytes_with_grundy_values() {
    let manifest = writes_one_process_bytes(cluster(2, 1, 1 << 20), &Plan::new(Universe::tiles(50), 36));
    assert!(manifest.complete && manifest.levels_complete == 50);
}

#[test]
fn three_processes_on_two_nodes_share_their_grundy_files_in_small_pieces() {
    // Nodes of 2 and 1: the first node's two processes write one Grundy
    // file; the two nodes merge their values by the leaders' OR. Gathers
    // go in pieces of 1 KiB: the level's losses take many pieces.
    writes_one_process_bytes(cluster(3, 2, 1024), &Plan::new(Universe::tiles(48), 40));
}

#[test]
fn four_processes_write_one_process_bytes_for_losses_only() {
    writes_one_process_bytes(cluster(4, 2, 4096), &Plan::new(Universe::tiles(64), 0));
}

#[test]
fn three_processes_count_winning_moves_as_one_does() {
    // Each process counts the second pushes into its share; the counts are
    // summed, checked against the Grundy pass to 40, and written.
    let m = writes_one_process_bytes(cluster(3, 2, 2048), &Plan { count_moves: true, ..Plan::new(Universe::tiles(52), 40) });
    assert!(m.levels.iter().all(|l| l.wins_one_move.is_some() && l.wins_several_moves.is_some()));
    let m = writes_one_process_bytes(cluster(2, 1, 4096), &Plan { count_moves: true, ..Plan::new(Universe::boxed(8, 9), 0) });
    assert!(m.levels.iter().all(|l| l.wins_one_move.is_some()));
}

#[test]
fn a_box_with_grundy_values_on_three_processes() {
    writes_one_process_bytes(cluster(3, 1, 512), &Plan::new(Universe::boxed(7, 12), 84));
}

#[test]
fn windows_cut_by_a_memory_limit_on_two_and_three_processes() {
    let tmp = tempfile::tempdir().unwrap();
    // Limits that cut each run into two windows (the marks of the last
    // levels held after the first window's levels are decided).
    for (k, tiles, limit) in [(2, 70, 3 << 20), (3, 76, 5 << 20)] {
        let plan = Plan::new(Universe::tiles(tiles), 30);
        let want = one_process(&plan, &tmp.path().join(format!("one-{tiles}")));
        let out = tmp.path().join(format!("k{k}"));
        let windows = std::sync::atomic::AtomicUsize::new(0);
        let opts = Options { max_memory: Some(limit), ..Options::new(&out) };
        all_ok(on_cluster(cluster(k, 2, 2048), &plan, &opts, |p, e| {
            if p == 0 && matches!(e, Event::Window { .. }) {
                windows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }));
        let windows = windows.into_inner();
        assert!(windows >= 2, "{k} processes: {windows} windows");
        assert_eq!(contents(&out), want, "{k} processes in {windows} windows");
    }
}

#[test]
fn a_run_killed_in_the_middle_of_a_level_resumes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(56), 40);
    let want = one_process(&plan, &tmp.path().join("one"));
    let out = tmp.path().join("three");
    let opts = Options { checkpoint_seconds: 0.0, ..Options::new(&out) };
    // Process 1 dies as level 45 starts; the others are inside level 45.
    let got = on_cluster(cluster(3, 1, 1 << 20), &plan, &opts, |p, e| {
        if p == 1 && matches!(e, Event::Started { tiles: 45 }) {
            panic!("killed in level 45");
        }
    });
    assert_eq!(got[1].as_ref().unwrap_err(), "killed in level 45");
    for p in [0, 2] {
        let e = got[p].as_ref().unwrap_err();
        assert!(e.contains("process 1 failed: killed in level 45"), "process {p}: {e}");
    }
    let saved = TableDir::new(&out).read_manifest().unwrap();
    assert!(!saved.complete && (40..45).contains(&saved.levels_complete), "levels saved: {}", saved.levels_complete);
    // The same job on other processes resumes after the checkpoint.
    let resumed = std::sync::atomic::AtomicU32::new(0);
    all_ok(on_cluster(cluster(3, 1, 1 << 20), &plan, &opts, |p, e| {
        if let (0, Event::Resumed { levels_complete }) = (p, e) {
            resumed.store(*levels_complete, std::sync::atomic::Ordering::Relaxed);
        }
    }));
    assert_eq!(resumed.into_inner(), saved.levels_complete);
    assert_eq!(contents(&out), want);
}

#[test]
fn a_reordered_collective_stops_every_process_with_one_line() {
    // Process 1 takes a barrier before the gather the others make: checked
    // by the recorder, every process stops at once with one line naming
    // the first divergence (a plain exchange would wait forever).
    let got = cluster(3, 1, 1 << 20).run(|comm| {
        let ordered = Ordered::new(comm);
        let comm: &dyn Comm = &ordered;
        comm.barrier();
        if comm.process() == 1 {
            comm.barrier();
        }
        comm.all_gather(b"losses");
    });
    for r in got {
        let e = r.unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("the processes' collectives diverge: process 0 calls all_gather at tests/it/cluster.rs:"), "{e}");
        assert!(e.contains("(its collective 2), process 1 calls barrier at tests/it/cluster.rs:"), "{e}");
    }
}

#[test]
fn processes_started_with_another_memory_limit_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(30), 0);
    let out = tmp.path().join("out");
    let got = cluster(2, 1, 1 << 20).run(|comm| {
        let ordered = Ordered::new(comm);
        let limit = (comm.process() == 1).then_some(64 << 20);
        run_on(&plan, &Options { max_memory: limit, ..Options::new(&out) }, &ordered, |_| {}).map_err(|e| e.to_string())
    });
    for r in got {
        let e = r.unwrap().unwrap_err();
        assert!(e.starts_with("process 1 was started with another --max-memory than process 0 (67108864 against unset)"), "{e}");
    }
    assert!(!out.exists(), "a refused job writes nothing");
}

/// `verify --full`'s proof on 2 and 3 processes (shares of the marks and of
/// the Grundy values, the order of collectives checked): the same verdict
/// as one process, on clean tables and on a consistently damaged copy.
#[test]
fn the_proof_on_several_processes_finds_what_one_finds() {
    use chomp_tables::solve::prove::{prove, prove_on};
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    run(&Plan::new(Universe::tiles(36), 30), &Options::new(&clean), |_| {}).unwrap();
    let damaged = tmp.path().join("t");
    let (lost, gained) = crate::damage::damaged_run(&damaged, 29);
    // Two Grundy values swapped, the losses right: each process compares its share of the values.
    let values = tmp.path().join("values");
    run(&Plan::new(Universe::tiles(30), 30), &Options::new(&values), |_| {}).unwrap();
    crate::damage::swap_two_values(&values, 26);
    for processes in [2, 3] {
        for (dir, windowed) in [(&clean, None), (&clean, Some(12 << 10)), (&damaged, None), (&values, None)] {
            let want = prove(dir, windowed, |_| {});
            let got = cluster(processes, 1, 4096).run(|comm| prove_on(dir, windowed, &Ordered::new(comm), |_| {}));
            for (p, r) in got.into_iter().enumerate() {
                assert_eq!(r.unwrap_or_else(|e| panic!("process {p}: {e}")), want, "{processes} processes, {dir:?}");
            }
        }
    }
    let err = prove(&damaged, None, |_| {}).unwrap_err();
    assert!(err.starts_with("level 29: ") && (err.contains(&lost) || err.contains(&gained)), "{err}");
    assert!(prove(&values, None, |_| {}).unwrap_err().starts_with("level 26: "));
}

/// Every process's report (`Event::Processes`, on process 0) of a run of
/// `plan` on `cluster`, after checking its bytes against one process's;
/// and one process's report.
fn reports(cluster: ThreadCluster, plan: &Plan, opts: impl Fn(&Path) -> Options) -> (Vec<ProcessWork>, ProcessWork) {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    let mut alone = Vec::new();
    run(plan, &opts(&one), |e| {
        if let Event::Processes(w) = e {
            alone = w.clone();
        }
    })
    .unwrap();
    let out = tmp.path().join("cluster");
    let got = std::sync::Mutex::new(Vec::new());
    all_ok(on_cluster(cluster, plan, &opts(&out), |p, e| {
        if let (0, Event::Processes(w)) = (p, e) {
            *got.lock().unwrap() = w.clone();
        }
    }));
    assert_eq!(contents(&out), contents(&one), "{} processes", cluster.processes);
    (got.into_inner().unwrap(), alone.remove(0))
}

/// The largest of `xs` over their mean.
fn max_over_mean(xs: impl Iterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.collect();
    xs.iter().cloned().fold(0.0, f64::max) / (xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The division itself: with 4 processes each holds about a quarter of the
/// mark bits (its shares of equal positions), pushes about a quarter of
/// the marks, scans about a quarter of the positions, and enumerates well
/// under half of one process's parents.
#[test]
fn four_processes_divide_the_marks_and_the_work() {
    let (k, plan) = (4, Plan::new(Universe::tiles(72), 0));
    let (all, one) = reports(cluster(k, 2, 1 << 20), &plan, |out| Options::new(out));
    assert_eq!(all.len(), k);
    let bytes = max_over_mean(all.iter().map(|w| w.mark_bytes as f64));
    assert!(bytes <= 1.15, "mark bytes max/mean {bytes:.3}: {:?}", all.iter().map(|w| w.mark_bytes).collect::<Vec<_>>());
    let total_bytes: u64 = all.iter().map(|w| w.mark_bytes).sum();
    assert!(total_bytes <= one.mark_bytes + one.mark_bytes / 10, "{total_bytes} bytes of marks in all, one process {}", one.mark_bytes);
    let marks: u64 = all.iter().map(|w| w.marks).sum();
    assert_eq!(marks, one.marks, "every mark pushed once, by its owner");
    for w in &all {
        let (m, s, e) = (
            w.marks as f64 / one.marks as f64,
            w.scanned as f64 / one.scanned as f64,
            w.enumeration_steps as f64 / one.enumeration_steps as f64,
        );
        assert!((0.15..=0.35).contains(&m), "process {}: {m:.3} of the marks", w.process);
        assert!((0.10..=0.40).contains(&s), "process {}: {s:.3} of the positions scanned", w.process);
        assert!(e <= 0.5, "process {}: {e:.3} of one process's enumeration", w.process);
    }
}

/// Sharded levels on three processes (tables dealt round robin), every
/// gather in so small pieces that a level's losses take several rounds.
#[test]
fn three_processes_write_sharded_levels_in_several_rounds_of_pieces() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan { shard_positions: Some(5000), ..Plan::new(Universe::tiles(48), 30) };
    let want = one_process(&plan, &tmp.path().join("one"));
    assert!(want.keys().any(|f| f.ends_with("-0003.cht")), "levels in several shards");
    let out = tmp.path().join("three");
    let (piece, k) = (256, 3);
    let largest = std::sync::atomic::AtomicU64::new(0);
    let rounds = std::sync::atomic::AtomicU64::new(0);
    all_ok(on_cluster(cluster(k, 2, piece), &plan, &Options::new(&out), |p, e| {
        if let (0, Event::Level(r)) = (p, e) {
            largest.fetch_max(r.largest_gather_bytes, std::sync::atomic::Ordering::Relaxed);
            rounds.fetch_max(r.gather_rounds, std::sync::atomic::Ordering::Relaxed);
        }
    }));
    assert_eq!(contents(&out), want);
    // A gather of this many bytes in all took more than four rounds of `piece` bytes a process,
    // and the report's rounds say as much: at least the bytes over a round's most bytes.
    let (largest, rounds) = (largest.into_inner(), rounds.into_inner());
    assert!(largest > (4 * k * piece) as u64, "the largest gather: {largest} bytes");
    assert!(rounds > 4 && rounds >= largest.div_ceil((k * piece) as u64), "{rounds} rounds for {largest} bytes");
}

/// A resume on 4 processes reads each decided table once between them.
#[test]
fn a_resume_on_four_processes_reads_the_tables_once() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(60), 0);
    let out = tmp.path().join("four");
    let opts = Options { checkpoint_seconds: 0.0, ..Options::new(&out) };
    let got = on_cluster(cluster(4, 2, 1 << 20), &plan, &opts, |p, e| {
        if p == 2 && matches!(e, Event::Started { tiles: 50 }) {
            panic!("stopped in level 50");
        }
    });
    assert!(got.iter().all(Result::is_err));
    let saved = TableDir::new(&out).read_manifest().unwrap();
    let decided = saved.levels_complete;
    assert!(decided >= 40, "levels saved: {decided}");
    let table_bytes: u64 = (1..=decided).map(|n| saved.files[&format!("losses/L{n:04}.cht")].bytes).sum();
    let read = std::sync::Mutex::new(Vec::new());
    all_ok(on_cluster(cluster(4, 2, 1 << 20), &plan, &opts, |p, e| {
        if let (0, Event::Processes(w)) = (p, e) {
            *read.lock().unwrap() = w.iter().map(|w| w.table_bytes_read).collect();
        }
    }));
    let read = read.into_inner().unwrap();
    let sum: u64 = read.iter().sum();
    assert!(sum >= table_bytes && sum * 5 <= table_bytes * 6, "{read:?} bytes read, the tables hold {table_bytes}");
    assert!(read.iter().all(|&r| r > 0), "every process reads some tables: {read:?}");
}

/// A panic, and a returned error, on process 1 of 3 as level 40 starts
/// (`CHOMP_TEST_PANIC=1:40`, `CHOMP_TEST_ERROR=1:40`) stop every process
/// with an error naming process 1, within seconds. The knobs are read once
/// per process: each case runs [`one_failure_stops_every_process`] in a
/// process of its own (this test binary, with the knob set).
#[test]
fn a_panic_or_an_error_on_one_process_stops_every_process() {
    for knob in ["CHOMP_TEST_PANIC", "CHOMP_TEST_ERROR"] {
        let t0 = Instant::now();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "cluster::one_failure_stops_every_process", "--include-ignored", "--test-threads", "1"])
            .env(knob, "1:40")
            .output()
            .unwrap();
        let took = t0.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{knob}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("test result: ok. 1 passed"), "{knob}: the case did not run: {stdout}");
        assert!(took < Duration::from_secs(30), "{knob}: {took:?}");
    }
}

/// Run by [`a_panic_or_an_error_on_one_process_stops_every_process`] with
/// one of its knobs set.
#[test]
#[ignore = "run by a_panic_or_an_error_on_one_process_stops_every_process, with CHOMP_TEST_PANIC or CHOMP_TEST_ERROR set"]
fn one_failure_stops_every_process() {
    let own = if std::env::var("CHOMP_TEST_PANIC").as_deref() == Ok("1:40") {
        "CHOMP_TEST_PANIC: process 1 panics at the start of level 40"
    } else if std::env::var("CHOMP_TEST_ERROR").as_deref() == Ok("1:40") {
        "CHOMP_TEST_ERROR: process 1 stops at the start of level 40"
    } else {
        panic!("set CHOMP_TEST_PANIC=1:40 or CHOMP_TEST_ERROR=1:40 (run by a_panic_or_an_error_on_one_process_stops_every_process)");
    };
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(56), 40);
    let got = on_cluster(cluster(3, 1, 4096), &plan, &Options::new(tmp.path().join("out")), |_, _| {});
    assert_eq!(got[1].as_ref().unwrap_err(), own);
    for p in [0, 2] {
        let e = got[p].as_ref().unwrap_err();
        assert!(e.starts_with(&format!("process {p} in ")) && e.contains(&format!("process 1 failed: {own}")), "process {p}: {e}");
    }
}

/// Process 1 of 3 is asked to stop (as `SIGTERM` or `SIGUSR1` asks `chomp`)
/// in the middle of level 45: every process stops after that level, which
/// the checkpoint holds (the only one: the interval is never reached), and
/// their scratch is gone. A lock file left by a killed run on this host
/// does not refuse the resume, which ends with one process's bytes.
#[test]
fn three_processes_asked_to_stop_in_a_level_checkpoint_it_and_resume_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = Plan::new(Universe::tiles(56), 40);
    let want = one_process(&plan, &tmp.path().join("one"));
    let out = tmp.path().join("three");
    let work = tmp.path().join("scratch");
    std::fs::create_dir_all(&work).unwrap();
    let opts = Options { checkpoint_seconds: 1e9, work_dir: Some(work.clone()), ..Options::new(&out) };
    let asked: Vec<Arc<AtomicBool>> = (0..3).map(|_| Arc::default()).collect();
    let got = cluster(3, 1, 4096).run(|comm| {
        let p = comm.process();
        let opts = Options { stop: Some(asked[p].clone()), ..opts.clone() };
        run_on(&plan, &opts, &Ordered::new(comm), |e| {
            if p == 1 && matches!(e, Event::Started { tiles: 45 }) {
                asked[1].store(true, Ordering::Relaxed);
            }
        })
        .map_err(|e| e.to_string())
    });
    for (p, r) in got.into_iter().enumerate() {
        let e = r.unwrap_or_else(|e| panic!("process {p} failed: {e}")).unwrap_err();
        assert_eq!(e, "stopped on request after level 45; levels 1-45 are saved: run the same command again to resume", "process {p}");
    }
    let saved = TableDir::new(&out).read_manifest().unwrap();
    assert_eq!((saved.levels_complete, saved.complete), (45, false));
    assert!(!out.join(".lock").exists());
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "the nodes' scratch is removed");
    // As a run killed on this host leaves its lock file: a process that is gone.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    std::fs::write(out.join(".lock"), format!("host={}\npid={dead}\nslurm_job=17\n", host.trim())).unwrap();
    let resumed = AtomicU32::new(0);
    all_ok(on_cluster(cluster(3, 1, 4096), &plan, &Options { checkpoint_seconds: 0.0, ..opts }, |p, e| {
        if let (0, Event::Resumed { levels_complete }) = (p, e) {
            resumed.store(*levels_complete, Ordering::Relaxed);
        }
    }));
    assert_eq!(resumed.into_inner(), 45);
    assert_eq!(contents(&out), want);
}
