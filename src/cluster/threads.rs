//! An in-process cluster: `K` processes run as threads of this process,
//! each with its own rayon pool, its own frontier share and its own
//! [`Comm`], on the same code path as MPI processes. What MPI moves
//! between processes goes through shared memory here: every collective is
//! one exchange in which each process leaves its bytes and takes every
//! process's. `cargo test` runs the cluster's exchange this way, with no
//! MPI library installed.
//!
//! Processes are grouped into nodes of [`ThreadCluster::per_node`]: a node
//! of several shares its Grundy files as MPI processes on one machine do,
//! and nodes of one merge their values through
//! [`Comm::leaders_or_bytes`], as separate machines do.
//!
//! A process that fails (an error, a panic, [`Comm::abort`]) or finishes
//! leaves the job: a process waiting in a collective the other will never
//! join stops with a message naming it, instead of waiting forever.

use super::pieces::{gather_in_pieces, PIECE_BYTES};
use super::Comm;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a process waits in one collective before it gives up.
const PATIENCE: Duration = Duration::from_secs(600);

/// The shape of an in-process cluster.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCluster {
    /// Processes (threads of this process), at least 1.
    pub processes: usize,
    /// Processes per node (the last node may hold fewer).
    pub per_node: usize,
    /// Rayon threads of each process.
    pub threads: usize,
    /// The most bytes one process sends per exchange (gathers go in pieces).
    pub piece_bytes: usize,
}

impl ThreadCluster {
    /// `processes` processes, each its own node, one rayon thread each,
    /// gathers in pieces of the default size.
    pub fn new(processes: usize) -> Self {
        ThreadCluster { processes, per_node: 1, threads: 1, piece_bytes: PIECE_BYTES }
    }

    /// Runs `job` on every process, each on its own thread inside its own
    /// rayon pool, and returns what each returned, in process order; a
    /// process that panicked, aborted or stopped at a failed collective
    /// gives `Err` with its message.
    ///
    /// # Panics
    /// If a rayon pool cannot be built.
    pub fn run<R: Send>(&self, job: impl Fn(&dyn Comm) -> R + Sync) -> Vec<Result<R, String>> {
        assert!(self.processes > 0 && self.per_node > 0 && self.piece_bytes > 0);
        let k = self.processes;
        let world = Arc::new(Group::new(k));
        let nodes: Vec<Arc<Group>> =
            (0..k.div_ceil(self.per_node)).map(|i| Arc::new(Group::new(self.per_node.min(k - i * self.per_node)))).collect();
        let leaders = Arc::new(Group::new(nodes.len()));
        let mut every: Vec<Arc<Group>> = vec![world.clone(), leaders.clone()];
        every.extend(nodes.iter().cloned());
        let every = Arc::new(every);
        let comms: Vec<ThreadComm> = (0..k)
            .map(|p| ThreadComm {
                process: p,
                processes: k,
                per_node: self.per_node,
                piece: self.piece_bytes,
                world: world.clone(),
                node: nodes[p / self.per_node].clone(),
                leaders: leaders.clone(),
                every: every.clone(),
            })
            .collect();
        let job = &job;
        std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .into_iter()
                .map(|comm| {
                    let threads = self.threads;
                    std::thread::Builder::new()
                        .name(format!("process {}", comm.process))
                        .spawn_scoped(s, move || {
                            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a rayon pool");
                            let got = std::panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| job(&comm))));
                            let got = got.map_err(|e| panic_text(&*e));
                            // Whatever the outcome, this process joins no
                            // more collectives: the others must not wait.
                            match &got {
                                Ok(_) => comm.leave(format!("process {} has finished its run", comm.process), false),
                                Err(why) => comm.leave(format!("process {} failed: {why}", comm.process), true),
                            }
                            got
                        })
                        .expect("a thread for a process")
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| Err(panic_text(&*e)))).collect()
        })
    }
}

/// A panic's message.
fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "a panic".into())
}

/// Processes that exchange bytes: each exchange completes once every
/// member has left its part.
struct Group {
    size: usize,
    state: Mutex<Exchange>,
    wake: Condvar,
}

#[derive(Default)]
struct Exchange {
    /// Completed exchanges.
    generation: u64,
    /// This exchange's parts so far, by member.
    parts: Vec<Option<Vec<u8>>>,
    /// The last completed exchange's parts.
    done: Arc<Vec<Vec<u8>>>,
    /// Why a member will never join another exchange.
    gone: Option<String>,
}

impl Group {
    fn new(size: usize) -> Self {
        Group { size, state: Mutex::new(Exchange { parts: vec![None; size], ..Default::default() }), wake: Condvar::new() }
    }

    /// Leaves `mine` as member `member`'s part and returns every member's
    /// part once all have left theirs.
    ///
    /// Invariant: a member waits only for the exchange it joined; the next
    /// exchange cannot complete without it, so `done` is still this
    /// exchange's when it wakes to a new generation.
    fn exchange(&self, member: usize, mine: Vec<u8>, what: &str) -> Arc<Vec<Vec<u8>>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &st.gone {
            let why = why.clone();
            drop(st);
            std::panic::panic_any(format!("{what}: {why}"));
        }
        assert!(st.parts[member].is_none(), "member {member} joined one exchange twice");
        st.parts[member] = Some(mine);
        if st.parts.iter().all(Option::is_some) {
            let parts = st.parts.iter_mut().map(|p| p.take().expect("every part")).collect();
            st.done = Arc::new(parts);
            st.generation += 1;
            self.wake.notify_all();
            return st.done.clone();
        }
        let joined = st.generation;
        let started = std::time::Instant::now();
        loop {
            if st.generation != joined {
                return st.done.clone();
            }
            if let Some(why) = &st.gone {
                let why = why.clone();
                drop(st);
                std::panic::panic_any(format!("{what}: {why}, and will never join it"));
            }
            if started.elapsed() > PATIENCE {
                drop(st);
                std::panic::panic_any(format!("{what}: no answer from the other processes in {} s", PATIENCE.as_secs()));
            }
            st = self.wake.wait_timeout(st, Duration::from_secs(1)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn poison(&self, why: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.gone.get_or_insert_with(|| why.to_string());
        self.wake.notify_all();
    }
}

/// One process of a [`ThreadCluster`].
struct ThreadComm {
    process: usize,
    processes: usize,
    per_node: usize,
    piece: usize,
    world: Arc<Group>,
    node: Arc<Group>,
    leaders: Arc<Group>,
    every: Arc<Vec<Arc<Group>>>,
}

impl ThreadComm {
    /// This process joins no more exchanges: those of its groups (or, when
    /// the job fails, of every group, as `MPI_Abort` ends every process)
    /// stop their waiting members with `why`.
    fn leave(&self, why: String, job_fails: bool) {
        if job_fails {
            self.every.iter().for_each(|g| g.poison(&why));
        } else {
            self.world.poison(&why);
            self.node.poison(&why);
            if self.is_node_leader() {
                self.leaders.poison(&why);
            }
        }
    }

    fn what(&self, collective: &str) -> String {
        format!("process {} in {collective}", self.process)
    }

    /// Bitwise OR of `bytes` over `group`, in pieces.
    fn or_over(&self, group: &Group, member: usize, bytes: &mut [u8], collective: &str) {
        for chunk in bytes.chunks_mut(self.piece) {
            let all = group.exchange(member, chunk.to_vec(), &self.what(collective));
            for part in all.iter() {
                assert_eq!(part.len(), chunk.len(), "{collective}: every process ORs as many bytes");
                chunk.iter_mut().zip(part).for_each(|(c, p)| *c |= p);
            }
        }
    }
}

impl Comm for ThreadComm {
    fn process(&self) -> usize {
        self.process
    }
    fn processes(&self) -> usize {
        self.processes
    }
    fn barrier(&self) {
        self.world.exchange(self.process, Vec::new(), &self.what("barrier"));
    }
    fn node_leader(&self) -> usize {
        self.process / self.per_node * self.per_node
    }
    fn node_processes(&self) -> usize {
        self.node.size
    }
    fn piece_bytes(&self) -> usize {
        self.piece
    }
    fn node_barrier(&self) {
        self.node.exchange(self.process % self.per_node, Vec::new(), &self.what("node_barrier"));
    }
    fn node_or_bytes(&self, bytes: &mut [u8]) {
        self.or_over(&self.node, self.process % self.per_node, bytes, "node_or_bytes");
    }
    fn leaders_or_bytes(&self, bytes: &mut [u8]) {
        assert!(self.is_node_leader(), "leaders_or_bytes is called by the nodes' first processes only");
        self.or_over(&self.leaders, self.process / self.per_node, bytes, "leaders_or_bytes");
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let what = self.what("all_gather");
        gather_in_pieces(
            mine,
            self.piece,
            |len| {
                let all = self.world.exchange(self.process, len.to_le_bytes().to_vec(), &what);
                all.iter().map(|b| u64::from_le_bytes(b[..8].try_into().expect("a length is 8 bytes"))).collect()
            },
            |piece, counts| {
                let all = self.world.exchange(self.process, piece.to_vec(), &what);
                assert!(all.iter().zip(counts).all(|(a, &c)| a.len() == c), "{what}: a piece of another length than announced");
                all.concat()
            },
        )
    }
    fn abort(&self, code: i32) -> ! {
        let why = format!("process {} aborted the job (exit code {code})", self.process);
        self.leave(why.clone(), true);
        std::panic::panic_any(why)
    }
    fn fail(&self, message: &str) -> ! {
        self.leave(format!("process {} stopped: {message}", self.process), true);
        std::panic::panic_any(message.to_string())
    }
    fn fail_alone(&self, message: &str) -> ! {
        self.leave(format!("process {} failed: {message}", self.process), true);
        std::panic::panic_any(message.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_barriers_and_ors_meet_on_every_process() {
        for (k, per_node, piece) in [(1, 1, 3), (3, 1, 1), (4, 2, 5), (3, 2, 1 << 20)] {
            let got = ThreadCluster { processes: k, per_node, threads: 2, piece_bytes: piece }.run(|comm| {
                let p = comm.process();
                assert_eq!(rayon::current_num_threads(), 2);
                let mine: Vec<u8> = (0..p * 7).map(|i| (i + p) as u8).collect();
                let all = comm.all_gather(&mine);
                comm.barrier();
                comm.node_barrier();
                let mut bits = vec![0u8; 9];
                bits[p] = 1 << (p % 8);
                comm.node_or_bytes(&mut bits);
                let node_bits = bits.clone();
                if comm.is_node_leader() {
                    comm.leaders_or_bytes(&mut bits);
                }
                (all, node_bits, bits, comm.node_leader(), comm.node_processes())
            });
            for (p, r) in got.into_iter().enumerate() {
                let (all, node_bits, bits, leader, on_node) = r.unwrap();
                assert_eq!(all.len(), k);
                for (q, m) in all.iter().enumerate() {
                    assert_eq!(*m, (0..q * 7).map(|i| (i + q) as u8).collect::<Vec<u8>>());
                }
                assert_eq!(leader, p / per_node * per_node);
                let node: Vec<usize> = (leader..(leader + per_node).min(k)).collect();
                assert_eq!(on_node, node.len());
                assert!((0..k).all(|q| (node_bits[q] != 0) == node.contains(&q)));
                if p == leader {
                    // Every node's leader ORs its node's bits: every process's bit.
                    assert!((0..k).all(|q| bits[q] == 1 << (q % 8)), "{bits:?}");
                }
            }
        }
    }

    #[test]
    fn a_process_that_leaves_ends_the_waiting_ones() {
        let got = ThreadCluster::new(3).run(|comm| {
            if comm.process() == 1 {
                panic!("deliberate failure");
            }
            comm.barrier();
        });
        assert_eq!(got[1].as_ref().unwrap_err(), "deliberate failure");
        for p in [0, 2] {
            let e = got[p].as_ref().unwrap_err();
            assert!(e.contains(&format!("process {p} in barrier")) && e.contains("process 1 failed: deliberate failure"), "{e}");
        }
        // A process that finishes early: the others' next collective fails.
        let got = ThreadCluster::new(2).run(|comm| {
            if comm.process() == 0 {
                comm.all_gather(b"x");
            }
        });
        assert!(got[0].as_ref().unwrap_err().contains("process 1 has finished its run"), "{:?}", got[0]);
        assert!(got[1].is_ok());
    }
}
