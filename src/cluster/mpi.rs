//! [`MpiComm`]: the engine on `K` MPI processes (rsmpi over MPICH).

use super::pieces::{gather_in_pieces, int_counts_and_displacements, piece_bytes};
use super::Comm;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

/// The MPI processes of `MPI_COMM_WORLD`.
pub struct MpiComm {
    world: SimpleCommunicator,
    /// The processes of this node (sharing memory).
    node: SimpleCommunicator,
    /// The world index of this node's first process.
    leader: usize,
    /// The nodes' first processes (`Some` on those only).
    leaders: Option<SimpleCommunicator>,
    /// The most bytes asked for a process's piece of one collective call.
    piece: u64,
    /// Last: fields drop in order, and the communicators must be freed
    /// before MPI is finalised.
    _universe: mpi::environment::Universe,
}

// SAFETY: `Sync` lets `&MpiComm` (as `&dyn Comm`) reach code that rayon
// may run on other threads, but only the thread that initialised MPI calls
// its methods: every collective is called by the driver, the sieve's and
// the Grundy pass's level functions on the main thread, between their
// parallel sections, never from inside a rayon closure (workers read only
// `process()` and `processes()`, which MPI answers from what the
// communicator cached: its number of processes and this one's number). MPI
// is initialised at `MPI_THREAD_FUNNELED`, the level that promises exactly
// this, and `init` refuses a library that grants less. The order of the
// collectives is checked apart: `Ordered` (`CHOMP_CHECK_COLLECTIVES=1`),
// and the in-process cluster's tests.
unsafe impl Sync for MpiComm {}

impl MpiComm {
    /// Initialises MPI (call first thing in `main`) at `MPI_THREAD_FUNNELED`
    /// (only the main thread calls MPI); `None` if MPI was already initialised.
    /// Every collective sends at most `piece` bytes a process per call
    /// (capped by [`piece_bytes`]); `node_processes`, if given, groups the
    /// processes as nodes of that many consecutive processes instead of by
    /// machine (a rehearsal of several nodes on one machine).
    ///
    /// # Panics
    /// If the MPI library cannot give that thread level.
    pub fn init(piece: u64, node_processes: Option<usize>) -> Option<Self> {
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
        assert!(level != mpi::Threading::Single, "the MPI library offers thread level {level:?}; chomp needs Funneled");
        let world = universe.world();
        // The processes of a node: those sharing memory, or groups of
        // `node_processes` consecutive processes.
        let node = match node_processes {
            Some(n) => world.split_by_color(Color::with_value((world.rank() as usize / n) as i32)).expect("every process has a color"),
            None => world.split_shared(world.rank()),
        };
        let mut leader = world.rank();
        node.process_at_rank(0).broadcast_into(&mut leader);
        let color = if node.rank() == 0 { Color::with_value(0) } else { Color::undefined() };
        let leaders = world.split_by_color(color);
        Some(MpiComm { world, node, leader: leader as usize, leaders, piece, _universe: universe })
    }

    /// Makes a panic on any thread of this process end the whole job: the
    /// hook prints one line naming the process and the panic, then calls
    /// `MPI_Abort` before anything unwinds. (Unwinding would drop this
    /// value, whose `MPI_Finalize` waits for the other processes, which
    /// wait in a collective this one never joins: the job would hang.)
    pub fn abort_on_panic(&self) {
        let process = self.process();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let what = payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
            eprintln!("error: process {process} panicked{at}: {}", what.unwrap_or("a panic"));
            // Let mpiexec forward the line before the abort tears the job down.
            std::thread::sleep(std::time::Duration::from_millis(300));
            // From whichever thread panicked: MPI_Abort is the one call a
            // process that cannot go on must make, and MPICH takes it from
            // any thread.
            // SAFETY: MPI is initialised: the hook is installed by an
            // `MpiComm`, which `main` keeps (MPI not finalised) until it returns.
            unsafe {
                mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 1);
            }
            std::process::abort()
        }));
    }
}

/// Bitwise OR of `data` over `comm`'s processes, in place, in pieces of at
/// `piece` bytes (an MPI count is an `int`).
fn or_in_pieces(comm: &SimpleCommunicator, data: &mut [u8], piece: usize) {
    let mut recv = vec![0u8; piece.min(data.len())];
    for chunk in data.chunks_mut(piece) {
        let recv = &mut recv[..chunk.len()];
        comm.all_reduce_into(&chunk[..], recv, SystemOperation::bitwise_or());
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
    fn piece_bytes(&self) -> usize {
        piece_bytes(self.piece, self.processes())
    }
    fn node_or_bytes(&self, bytes: &mut [u8]) {
        or_in_pieces(&self.node, bytes, piece_bytes(self.piece, self.node_processes()));
    }
    fn leaders_or_bytes(&self, bytes: &mut [u8]) {
        let leaders = self.leaders.as_ref().expect("leaders_or_bytes is called by the nodes' first processes only");
        or_in_pieces(leaders, bytes, piece_bytes(self.piece, leaders.size() as usize));
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let k = self.processes();
        gather_in_pieces(
            mine,
            self.piece_bytes(),
            |len| {
                let mut lens = vec![0u64; k];
                self.world.all_gather_into(&len, &mut lens[..]);
                lens
            },
            |piece, counts| {
                let (counts, displs) = int_counts_and_displacements(counts);
                let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
                let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                self.world.all_gather_varcount_into(piece, &mut part);
                buf
            },
        )
    }
    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
