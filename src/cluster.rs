//! Cluster: the executors a run can use. [`Solo`] is one process (rayon
//! threads, no MPI); with the `mpi` cargo feature, [`MpiComm`] runs the same
//! engine on `K` MPI ranks. The engine only needs the few collectives of
//! [`Comm`].
//!
//! How a level is split (see README, "Running on a cluster"):
//! - sieve: the *sources* (losses of smaller levels) are dealt to ranks in
//!   chunks; each rank marks a private copy of the level's mark bits, and a
//!   bitwise-OR all-reduce merges them (option (a) of the architecture);
//! - scan and Grundy values: the level's rank range is cut into contiguous
//!   runs of work units (top-row/second-row blocks) of about equal size; the
//!   values are merged by a bitwise-OR all-reduce (each cell is written by
//!   exactly one rank), the losses found by an all-gather of roaring bitmaps.

/// The collectives the engine uses. Every rank calls them in the same order.
pub trait Comm: Sync {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Whether this rank coordinates (writes the published files).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    /// Waits for every rank.
    fn barrier(&self);
    /// Bitwise-OR all-reduce, in place.
    fn or_words(&self, words: &mut [u64]);
    /// Bitwise-OR all-reduce, in place.
    fn or_bytes(&self, bytes: &mut [u8]);
    /// Every rank's bytes, indexed by rank.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Ends every rank of the job with this exit code.
    fn abort(&self, code: i32) -> !;
}

/// One process: every collective is the identity.
pub struct Solo;

impl Comm for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn or_words(&self, _: &mut [u64]) {}
    fn or_bytes(&self, _: &mut [u8]) {}
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// The contiguous slice `part` of `0..len` when cut into `parts` near-equal pieces.
pub fn split_range(len: usize, parts: usize, part: usize) -> std::ops::Range<usize> {
    let lo = len * part / parts;
    let hi = len * (part + 1) / parts;
    lo..hi
}

/// Cuts weighted units into `parts` contiguous runs of about equal total
/// weight; returns the unit range of `part`.
pub fn split_weighted(weights: &[u64], parts: usize, part: usize) -> std::ops::Range<usize> {
    let total: u64 = weights.iter().sum();
    // Unit i goes to the part in which its weight's midpoint falls.
    let mut start = weights.len();
    let mut end = weights.len();
    let mut acc = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let mid = acc as u128 * 2 + w as u128;
        let owner = if total == 0 { i * parts / weights.len().max(1) } else { ((mid * parts as u128) / (2 * total as u128)) as usize };
        let owner = owner.min(parts - 1);
        if owner == part && start == weights.len() {
            start = i;
        }
        if owner > part {
            end = i;
            break;
        }
        acc += w;
    }
    if start == weights.len() {
        return start..start;
    }
    start..end
}

#[cfg(feature = "mpi")]
pub use self::mpi_impl::MpiComm;

#[cfg(feature = "mpi")]
mod mpi_impl {
    use super::Comm;
    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;

    /// Elements per collective call: MPI counts are `int`.
    const CHUNK: usize = 1 << 24;

    /// MPI ranks of `MPI_COMM_WORLD`.
    pub struct MpiComm {
        _universe: mpi::environment::Universe,
        world: SimpleCommunicator,
    }

    // The engine calls collectives from the main thread only; rayon workers
    // never touch the communicator.
    unsafe impl Sync for MpiComm {}

    impl MpiComm {
        /// Initialises MPI (call first thing in `main`); `None` if MPI was already initialised.
        pub fn init() -> Option<Self> {
            let universe = mpi::initialize()?;
            let world = universe.world();
            Some(MpiComm { _universe: universe, world })
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
        fn rank(&self) -> usize {
            self.world.rank() as usize
        }
        fn size(&self) -> usize {
            self.world.size() as usize
        }
        fn barrier(&self) {
            self.world.barrier();
        }
        fn or_words(&self, words: &mut [u64]) {
            or_chunks(&self.world, words);
        }
        fn or_bytes(&self, bytes: &mut [u8]) {
            or_chunks(&self.world, bytes);
        }
        fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
            let k = self.size();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_split_tiles_the_units() {
        let w = [5u64, 1, 1, 1, 10, 2, 2, 2, 2, 0, 3];
        for parts in 1..6 {
            let mut next = 0;
            for p in 0..parts {
                let r = split_weighted(&w, parts, p);
                if !r.is_empty() {
                    assert_eq!(r.start, next);
                    next = r.end;
                }
            }
            assert_eq!(next, w.len());
        }
    }
}
