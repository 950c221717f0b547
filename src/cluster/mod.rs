//! Cluster: the executors a run can use. [`Solo`] is one process (rayon
//! threads, no MPI); with the `mpi` cargo feature, `MpiComm` runs the same
//! engine on `K` MPI processes. The engine only needs the few collectives of
//! [`Comm`].
//!
//! How a level is split (see README, "Running on a cluster"):
//! - sieve: an epoch's levels are cut into `3K` shares of about equal
//!   positions (contiguous runs of work units, top-row/second-row blocks),
//!   dealt to the processes back and forth (`index::split::Layout`); each
//!   process holds the mark bits of its shares only (memory about 1/K)
//!   and scans them. The losses of a decided level are
//!   all-gathered as roaring bitmaps, and every process pushes every loss,
//!   marking the parents it owns: no mark bits travel;
//! - Grundy values: the same runs. The processes of one node write their
//!   cells into one node-local file (each cell is written by exactly one
//!   process); the nodes' first processes merge those files by a bitwise-OR
//!   all-reduce, and every process maps the node's file read-only: the
//!   values of smaller levels are resident once per node, not once per
//!   process.
//!
//! (A "process" is one MPI process, numbered `0..K`; a "rank" is always a
//! position's index within its level.)
//!
//! Around those: [`ThreadCluster`] runs `K` processes as threads of one
//! process (the tests' cluster, no MPI needed); [`Ordered`] checks that
//! every process calls the same collective from the same place
//! (`CHOMP_CHECK_COLLECTIVES=1`); [`Timed`] adds up the time spent in
//! them. Both are a [`Watched`] communicator, the one adapter that
//! forwards a [`Comm`]'s calls, with their own [`Watch`]; [`pieces`] cuts every gather into pieces of bounded size, so that
//! no count or displacement of an MPI call can overflow.

#[cfg(feature = "mpi")]
mod mpi;
mod order;
pub mod pieces;
mod threads;
mod watch;

pub use order::{CallOrder, Ordered};
pub use pieces::PIECE_BYTES;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
pub use threads::ThreadCluster;
pub use watch::{Collective, Watch, Watched};

/// The collectives the engine uses. Every process calls them in the same
/// order (checked by [`Ordered`]); they are called from the thread that
/// runs the job, never from inside a parallel section. Collectives are
/// `#[track_caller]`: a wrapper learns the place in the code that called it.
pub trait Comm: Sync {
    /// This process, `0..processes()`.
    fn process(&self) -> usize;
    /// Number of processes.
    fn processes(&self) -> usize;
    /// Whether this process coordinates (writes the published files).
    fn is_root(&self) -> bool {
        self.process() == 0
    }
    /// Waits for every process.
    #[track_caller]
    fn barrier(&self);
    /// The first process of this process's node (processes sharing memory):
    /// it creates and merges the node's shared files.
    fn node_leader(&self) -> usize {
        self.process()
    }
    /// Whether this process is its node's first process.
    fn is_node_leader(&self) -> bool {
        self.node_leader() == self.process()
    }
    /// Number of processes on this node (sharing memory), this one included.
    fn node_processes(&self) -> usize {
        1
    }
    /// Waits for every process of this node.
    #[track_caller]
    fn node_barrier(&self) {}
    /// Bitwise-OR all-reduce among the processes of this node, in place.
    #[track_caller]
    fn node_or_bytes(&self, _bytes: &mut [u8]) {}
    /// Bitwise-OR all-reduce among the nodes' first processes, in place;
    /// called by those processes only.
    #[track_caller]
    fn leaders_or_bytes(&self, bytes: &mut [u8]);
    /// The most bytes this process sends in one round of a gather among
    /// all processes ([`pieces`]): a gather whose longest message has `m`
    /// bytes takes `⌈m / piece_bytes⌉` rounds.
    fn piece_bytes(&self) -> usize {
        PIECE_BYTES
    }
    /// Every process's bytes, indexed by process. Messages of any size: the
    /// exchange goes in pieces of bounded size ([`pieces`]).
    #[track_caller]
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Ends every process of the job with this exit code.
    fn abort(&self, code: i32) -> !;
    /// Stops the job with a one-line error that every process found at
    /// once (e.g. [`Ordered`]'s divergence): process 0 prints it, then the
    /// job is aborted.
    fn fail(&self, message: &str) -> ! {
        if self.is_root() {
            eprintln!("error: {message}");
            // Let mpiexec forward the line before the abort tears the job down.
            std::thread::sleep(std::time::Duration::from_millis(300));
        } else {
            // Process 0's abort ends this one; abort anyway should it not.
            std::thread::sleep(std::time::Duration::from_secs(5));
        }
        self.abort(1)
    }
    /// Stops the job with an error this process found alone (a returned
    /// error, a panic): prints `error: process P: …`, then ends every
    /// process, which may be waiting in a collective this one will never
    /// join.
    fn fail_alone(&self, message: &str) -> ! {
        eprintln!("error: process {}: {message}", self.process());
        // Let mpiexec forward the line before the abort tears the job down.
        std::thread::sleep(std::time::Duration::from_millis(300));
        self.abort(1)
    }
}

/// A [`Comm`] that adds up the time its collectives take: the time a
/// process waits for the others (and exchanges data with them), in wall
/// seconds and in the CPU seconds the process spent meanwhile (an MPI
/// library may poll while it waits).
/// It also keeps the largest gather since [`Timed::take_largest_gather`]
/// (every process's bytes together) and the most rounds one gather takes
/// in pieces of [`Comm::piece_bytes`], for the report.
pub type Timed<'a> = Watched<'a, Timing>;

/// The watch of [`Timed`].
pub struct Timing {
    nanos: AtomicU64,
    cpu_nanos: AtomicU64,
    largest_gather: AtomicU64,
    gather_rounds: AtomicU64,
    cpu: fn() -> f64,
}

impl<'a> Timed<'a> {
    /// Times the collectives of `inner`; `cpu` reads the process's CPU
    /// seconds so far.
    pub fn new(inner: &'a dyn Comm, cpu: fn() -> f64) -> Self {
        let zero = || AtomicU64::new(0);
        Watched::with(inner, Timing { nanos: zero(), cpu_nanos: zero(), largest_gather: zero(), gather_rounds: zero(), cpu })
    }

    /// Seconds spent in collectives so far.
    pub fn seconds(&self) -> f64 {
        self.watch().nanos.load(Relaxed) as f64 * 1e-9
    }

    /// CPU seconds the process spent while in collectives so far.
    pub fn cpu_seconds(&self) -> f64 {
        self.watch().cpu_nanos.load(Relaxed) as f64 * 1e-9
    }

    /// The most bytes one gather brought together (every process's part)
    /// and the most rounds one gather took, since the last call; resets
    /// both.
    pub fn take_largest_gather(&self) -> (u64, u64) {
        (self.watch().largest_gather.swap(0, Relaxed), self.watch().gather_rounds.swap(0, Relaxed))
    }
}

impl Watch for Timing {
    /// The wall and CPU clocks when the collective started.
    type Started = (std::time::Instant, f64);
    fn before(&self, _: &dyn Comm, _: Collective, _: &'static std::panic::Location<'static>) -> Self::Started {
        (std::time::Instant::now(), (self.cpu)())
    }
    fn after(&self, inner: &dyn Comm, (t0, c0): Self::Started, gathered: Option<&[Vec<u8>]>) {
        let cpu = ((self.cpu)() - c0).max(0.0);
        self.nanos.fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
        self.cpu_nanos.fetch_add((cpu * 1e9) as u64, Relaxed);
        // On one process nothing travels.
        if let Some(all) = gathered.filter(|all| all.len() > 1) {
            self.largest_gather.fetch_max(all.iter().map(|p| p.len() as u64).sum(), Relaxed);
            // The rounds of `pieces::gather_in_pieces`: the longest part in pieces.
            let longest = all.iter().map(Vec::len).max().unwrap_or(0);
            self.gather_rounds.fetch_max(longest.div_ceil(inner.piece_bytes()) as u64, Relaxed);
        }
    }
}

/// One process: every collective is the identity.
pub struct Solo;

impl Comm for Solo {
    fn process(&self) -> usize {
        0
    }
    fn processes(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn leaders_or_bytes(&self, _: &mut [u8]) {}
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

#[cfg(feature = "mpi")]
pub use self::mpi::MpiComm;
