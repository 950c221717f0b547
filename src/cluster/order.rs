//! [`Ordered`]: the order of the collectives, checked instead of hoped.
//!
//! MPI processes that call different collectives (or the same collective
//! from different places, or one more than the others) wait forever, or
//! worse, exchange the wrong data. `Ordered` wraps a [`Comm`] and, before
//! each collective, exchanges what every process is about to call: its
//! kind and its place in the code (`#[track_caller]`). Where they differ
//! the job stops with one line naming the first divergence (the call's
//! number, the processes, the collectives and their places), instead of
//! hanging. Every in-process cluster test runs under it; MPI runs turn it
//! on with `CHOMP_CHECK_COLLECTIVES=1` (one small gather more per
//! collective).
//!
//! Where each check runs: among the processes that call the collective.
//! `barrier` and `all_gather` are called by every process and checked by
//! a gather over every process. `node_barrier` and `node_or_bytes` are
//! called by the processes of a node among themselves (a node of one
//! process skips some: it shares no files), and `leaders_or_bytes` by the
//! nodes' first processes only: those are checked within their group, by
//! an OR of fixed-size slots, one per process, each filled by its own
//! process.

use super::watch::{Collective, Watch, Watched};
use super::Comm;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Bytes of a process's slot in a group's check (its call's description).
const SLOT: usize = 160;

/// A [`Comm`] that checks every process calls the same collectives in the
/// same order, and records this process's sequence.
pub type Ordered<'a> = Watched<'a, CallOrder>;

/// The watch of [`Ordered`]: this process's collectives so far.
#[derive(Default)]
pub struct CallOrder {
    calls: AtomicU64,
    log: Mutex<Vec<String>>,
}

impl<'a> Ordered<'a> {
    /// Checks the collectives of `inner`.
    pub fn new(inner: &'a dyn Comm) -> Self {
        Watched::with(inner, CallOrder::default())
    }

    /// This process's collectives so far, in order: `kind at file:line`.
    pub fn calls(&self) -> Vec<String> {
        self.watch().log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl CallOrder {
    /// Records the next call; returns its number and description, as
    /// exchanged: `"7 all_gather at src/solve/driver.rs:218"`.
    fn record(&self, kind: &str, at: &Location<'_>) -> String {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call = format!("{kind} at {}:{}", at.file(), at.line());
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(call.clone());
        format!("{n} {call}")
    }

    /// Compares the call every process is about to make (`calls[p]` is
    /// process `p`'s number and call, `None`: not taking part) and stops
    /// the job at the first difference.
    fn compare(inner: &dyn Comm, calls: &[Option<String>]) {
        let split = |c: &str| c.split_once(' ').map(|(n, call)| (n.to_string(), call.to_string())).unwrap_or_default();
        let mut taking = calls.iter().enumerate().filter_map(|(p, c)| c.as_ref().map(|c| (p, split(c))));
        let Some((first, (n0, want))) = taking.next() else { return };
        if let Some((p, (n, got))) = taking.find(|(_, (_, c))| c != &want) {
            inner.fail(&format!(
                "the processes' collectives diverge: process {first} calls {want} (its collective {n0}), process {p} calls {got} (its collective {n}); every process must call the same collectives in the same order"
            ));
        }
    }

    /// Checks a collective of a group of processes (a node, the nodes'
    /// leaders): `or` ORs bytes over the group. One slot per process; each
    /// member fills its own with its call.
    fn check_in_group(&self, inner: &dyn Comm, kind: &str, at: &Location<'_>, or: impl FnOnce(&mut [u8])) {
        let call = self.record(kind, at);
        let mut slots = vec![0u8; SLOT * inner.processes()];
        let mine = &mut slots[SLOT * inner.process()..][..SLOT];
        let text = call.as_bytes();
        let len = text.len().min(SLOT - 1);
        mine[0] = 1;
        mine[1..1 + len].copy_from_slice(&text[..len]);
        or(&mut slots);
        let calls: Vec<Option<String>> =
            slots.chunks(SLOT).map(|s| (s[0] == 1).then(|| String::from_utf8_lossy(&s[1..]).trim_end_matches('\0').to_string())).collect();
        Self::compare(inner, &calls);
    }

    /// Checks a collective every process calls.
    fn check_everywhere(&self, inner: &dyn Comm, kind: &str, at: &Location<'_>) {
        let call = self.record(kind, at);
        let all = inner.all_gather(call.as_bytes());
        let calls: Vec<Option<String>> = all.into_iter().map(|b| Some(String::from_utf8_lossy(&b).into_owned())).collect();
        Self::compare(inner, &calls);
    }
}

impl Watch for CallOrder {
    type Started = ();
    fn before(&self, inner: &dyn Comm, what: Collective, at: &'static Location<'static>) {
        match what {
            Collective::Barrier => self.check_everywhere(inner, "barrier", at),
            Collective::AllGather => self.check_everywhere(inner, "all_gather", at),
            Collective::NodeBarrier => self.check_in_group(inner, "node_barrier", at, |slots| inner.node_or_bytes(slots)),
            Collective::NodeOr(n) => {
                self.check_in_group(inner, &format!("node_or_bytes of {n} bytes"), at, |slots| inner.node_or_bytes(slots))
            }
            Collective::LeadersOr(n) => {
                self.check_in_group(inner, &format!("leaders_or_bytes of {n} bytes"), at, |slots| inner.leaders_or_bytes(slots))
            }
        }
    }
    fn after(&self, _: &dyn Comm, (): (), _: Option<&[Vec<u8>]>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ThreadCluster;

    #[test]
    fn the_same_order_passes_and_is_recorded() {
        let got = ThreadCluster { per_node: 2, ..ThreadCluster::new(4) }.run(|comm| {
            let ordered = Ordered::new(comm);
            let comm: &dyn Comm = &ordered;
            for _ in 0..2 {
                comm.all_gather(&[comm.process() as u8]);
                comm.barrier();
            }
            comm.node_barrier();
            let mut bits = [0u8; 4];
            bits[comm.process()] = 1;
            comm.node_or_bytes(&mut bits);
            if comm.is_node_leader() {
                comm.leaders_or_bytes(&mut bits);
            }
            (ordered.calls(), bits)
        });
        let calls: Vec<_> = got.into_iter().map(Result::unwrap).collect();
        // Two gathers and barriers, the node's two, and the leaders' OR on
        // the nodes' first processes (0 and 2).
        let lens: Vec<usize> = calls.iter().map(|c| c.0.len()).collect();
        assert_eq!(lens, [7, 6, 7, 6]);
        assert!(calls[0].0[0].starts_with("all_gather at src/cluster/order.rs:"), "{:?}", calls[0].0);
        assert!(calls[0].0[6].starts_with("leaders_or_bytes of 4 bytes at src/cluster/order.rs:"), "{:?}", calls[0].0);
        assert!(calls.iter().all(|c| c.0[..6] == calls[0].0[..6]));
        assert_eq!(calls[0].1, [1; 4]);
    }

    #[test]
    fn a_reordered_collective_stops_with_one_line_naming_it() {
        let got = ThreadCluster::new(3).run(|comm| {
            let ordered = Ordered::new(comm);
            let comm: &dyn Comm = &ordered;
            comm.all_gather(b"same");
            // Process 2 swaps its next two collectives.
            if comm.process() == 2 {
                comm.barrier();
                comm.all_gather(b"swapped");
            } else {
                comm.all_gather(b"in order");
                comm.barrier();
            }
        });
        for r in &got {
            let e = r.as_ref().unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.starts_with("the processes' collectives diverge: process 0 calls all_gather at src/cluster/order.rs:"), "{e}");
            assert!(e.contains("(its collective 2), process 2 calls barrier at src/cluster/order.rs:"), "{e}");
        }
    }
}
