//! Cluster: the executors a run can use. [`Solo`] is one process (rayon
//! threads, no MPI); with the `mpi` cargo feature, `MpiComm` runs the same
//! engine on `K` MPI processes. The engine only needs the few collectives of
//! [`Comm`].
//!
//! How a level is split (see README, "Running on a cluster"):
//! - sieve: each level's rank range is cut into contiguous runs of work
//!   units (top-row/second-row blocks) of about equal size; each process
//!   owns one run of every level, holds the mark bits of its runs only
//!   (memory about 1/K) and scans them. The losses of a decided level are
//!   all-gathered as roaring bitmaps, and every process pushes every loss,
//!   marking the parents it owns: no mark bits travel;
//! - Grundy values: the same runs. The processes of one node write their
//!   cells into one node-local file (each cell is written by exactly one
//!   process); the nodes' first processes merge those files by a bitwise-OR
//!   all-reduce, and every process maps the node's file read-only: the
//!   values of smaller levels are resident once per node, not once per
//!   process.
//!
//! ("Process" is an MPI rank; "rank" elsewhere is a position's index.)

/// The collectives the engine uses. Every process calls them in the same order.
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
    fn node_barrier(&self) {}
    /// Bitwise-OR all-reduce among the nodes' first processes, in place;
    /// called by those processes only.
    fn leaders_or_bytes(&self, bytes: &mut [u8]);
    /// Every process's bytes, indexed by process.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Ends every process of the job with this exit code.
    fn abort(&self, code: i32) -> !;
}

/// A [`Comm`] that adds up the time its collectives take: the time a
/// process waits for the others (and exchanges data with them), in wall
/// seconds and in the CPU seconds the process spent meanwhile (an MPI
/// library may poll while it waits).
pub struct Timed<'a> {
    inner: &'a dyn Comm,
    nanos: std::sync::atomic::AtomicU64,
    cpu_nanos: std::sync::atomic::AtomicU64,
    cpu: fn() -> f64,
}

impl<'a> Timed<'a> {
    /// Times the collectives of `inner`; `cpu` reads the process's CPU
    /// seconds so far.
    pub fn new(inner: &'a dyn Comm, cpu: fn() -> f64) -> Self {
        Timed { inner, nanos: Default::default(), cpu_nanos: Default::default(), cpu }
    }

    /// Seconds spent in collectives so far.
    pub fn seconds(&self) -> f64 {
        self.nanos.load(std::sync::atomic::Ordering::Relaxed) as f64 * 1e-9
    }

    /// CPU seconds the process spent while in collectives so far.
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_nanos.load(std::sync::atomic::Ordering::Relaxed) as f64 * 1e-9
    }

    fn time<T>(&self, f: impl FnOnce() -> T) -> T {
        let (t0, c0) = (std::time::Instant::now(), (self.cpu)());
        let out = f();
        let cpu = ((self.cpu)() - c0).max(0.0);
        self.nanos.fetch_add(t0.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
        self.cpu_nanos.fetch_add((cpu * 1e9) as u64, std::sync::atomic::Ordering::Relaxed);
        out
    }
}

impl Comm for Timed<'_> {
    fn process(&self) -> usize {
        self.inner.process()
    }
    fn processes(&self) -> usize {
        self.inner.processes()
    }
    fn is_root(&self) -> bool {
        self.inner.is_root()
    }
    fn barrier(&self) {
        self.time(|| self.inner.barrier())
    }
    fn node_leader(&self) -> usize {
        self.inner.node_leader()
    }
    fn is_node_leader(&self) -> bool {
        self.inner.is_node_leader()
    }
    fn node_processes(&self) -> usize {
        self.inner.node_processes()
    }
    fn node_barrier(&self) {
        self.time(|| self.inner.node_barrier())
    }
    fn leaders_or_bytes(&self, bytes: &mut [u8]) {
        self.time(|| self.inner.leaders_or_bytes(bytes))
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.time(|| self.inner.all_gather(mine))
    }
    fn abort(&self, code: i32) -> ! {
        self.inner.abort(code)
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

/// Refuses to run when the processes disagree on `fingerprint` (binary,
/// job and directory): every process must run the same build and job.
///
/// # Errors
/// A message naming the first process that differs from process 0.
pub fn check_same(fingerprint: &str, comm: &dyn Comm) -> Result<(), String> {
    let all = comm.all_gather(fingerprint.as_bytes());
    match all.iter().position(|f| f != &all[0]) {
        Some(p) => Err(format!(
            "process {p} runs another binary, job, output directory or CHOMP_* settings than process 0; every process must run the same build and job"
        )),
        None => Ok(()),
    }
}

#[cfg(feature = "mpi")]
pub use self::mpi_impl::MpiComm;

#[cfg(feature = "mpi")]
mod mpi_impl {
    use super::Comm;
    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::topology::{Color, SimpleCommunicator};
    use mpi::traits::*;

    /// Elements per collective call: MPI counts are `int`.
    const CHUNK: usize = 1 << 24;

    /// The MPI processes of `MPI_COMM_WORLD`.
    pub struct MpiComm {
        world: SimpleCommunicator,
        /// The processes of this node (sharing memory).
        node: SimpleCommunicator,
        /// The world index of this node's first process.
        leader: usize,
        /// The nodes' first processes (`Some` on those only).
        leaders: Option<SimpleCommunicator>,
        /// Last: fields drop in order, and the communicators must be freed
        /// before MPI is finalised.
        _universe: mpi::environment::Universe,
    }

    // The engine calls collectives from the main thread only; rayon workers
    // never touch the communicator.
    unsafe impl Sync for MpiComm {}

    impl MpiComm {
        /// Initialises MPI (call first thing in `main`); `None` if MPI was already initialised.
        pub fn init() -> Option<Self> {
            let universe = mpi::initialize()?;
            let world = universe.world();
            let node = world.split_shared(world.rank());
            let mut leader = world.rank();
            node.process_at_rank(0).broadcast_into(&mut leader);
            let color = if node.rank() == 0 { Color::with_value(0) } else { Color::undefined() };
            let leaders = world.split_by_color(color);
            Some(MpiComm { world, node, leader: leader as usize, leaders, _universe: universe })
        }
    }

    fn or_chunks<T: Equivalence + Copy + Default>(world: &SimpleCommunicator, data: &mut [T]) {
        let mut recv = vec![T::default(); CHUNK.min(data.len())];
        for chunk in data.chunks_mut(CHUNK) {
            let recv = &mut recv[..chunk.len()];
            world.all_reduce_into(&chunk[..], recv, SystemOperation::bitwise_or());
            chunk.copy_from_slice(recv);
        }
    }

    impl Comm for MpiComm {
        fn process(&self) -> usize {
            self.world.rank() as usize
        }
        fn processes(&self) -> usize {
            self.world.size() as usize
        }
        fn barrier(&self) {
            self.world.barrier();
        }
        fn node_leader(&self) -> usize {
            self.leader
        }
        fn node_processes(&self) -> usize {
            self.node.size() as usize
        }
        fn node_barrier(&self) {
            self.node.barrier();
        }
        fn leaders_or_bytes(&self, bytes: &mut [u8]) {
            let leaders = self.leaders.as_ref().expect("leaders_or_bytes is called by the nodes' first processes only");
            or_chunks(leaders, bytes);
        }
        fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
            let k = self.processes();
            let len = mine.len() as u64;
            let mut lens = vec![0u64; k];
            self.world.all_gather_into(&len, &mut lens[..]);
            let counts: Vec<i32> = lens.iter().map(|&l| i32::try_from(l).expect("all_gather message below 2 GiB")).collect();
            let displs: Vec<i32> = counts.iter().scan(0i32, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
            let total: usize = lens.iter().sum::<u64>() as usize;
            let mut buf = vec![0u8; total];
            {
                let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                self.world.all_gather_varcount_into(mine, &mut part);
            }
            let mut out = Vec::with_capacity(k);
            for r in 0..k {
                out.push(buf[displs[r] as usize..(displs[r] + counts[r]) as usize].to_vec());
            }
            out
        }
        fn abort(&self, code: i32) -> ! {
            self.world.abort(code)
        }
    }
}
