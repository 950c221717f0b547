//! [`Watched`]: the one [`Comm`] that forwards to another, with a
//! [`Watch`] called around each collective. The collective-order check
//! ([`super::Ordered`]) and the time spent in collectives
//! ([`super::Timed`]) are watches; neither forwards anything itself.

use super::Comm;
use std::panic::Location;

/// A collective about to run, as a [`Watch`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// [`Comm::barrier`].
    Barrier,
    /// [`Comm::node_barrier`].
    NodeBarrier,
    /// [`Comm::node_or_bytes`] of this many bytes.
    NodeOr(usize),
    /// [`Comm::leaders_or_bytes`] of this many bytes.
    LeadersOr(usize),
    /// [`Comm::all_gather`].
    AllGather,
}

/// What a [`Watched`] communicator does around each collective.
pub trait Watch: Sync {
    /// What [`Watch::before`] hands to [`Watch::after`] (a start time, say).
    type Started;
    /// Before `what`, called from `at`; `inner` is the watched
    /// communicator (a watch may run collectives of its own on it).
    fn before(&self, inner: &dyn Comm, what: Collective, at: &'static Location<'static>) -> Self::Started;
    /// After it; `gathered` is what an [`Collective::AllGather`] brought.
    fn after(&self, inner: &dyn Comm, started: Self::Started, gathered: Option<&[Vec<u8>]>);
}

/// `inner`, with `watch` called around each of its collectives. Everything
/// else is forwarded as it is. Collectives are `#[track_caller]`, so the
/// place a watch sees is the engine's call, through any stack of watches.
pub struct Watched<'a, W> {
    inner: &'a dyn Comm,
    watch: W,
}

impl<'a, W: Watch> Watched<'a, W> {
    /// Watches the collectives of `inner`.
    pub fn with(inner: &'a dyn Comm, watch: W) -> Self {
        Watched { inner, watch }
    }

    /// The watch.
    pub fn watch(&self) -> &W {
        &self.watch
    }
}

impl<W: Watch> Comm for Watched<'_, W> {
    fn process(&self) -> usize {
        self.inner.process()
    }
    fn processes(&self) -> usize {
        self.inner.processes()
    }
    fn is_root(&self) -> bool {
        self.inner.is_root()
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
    fn piece_bytes(&self) -> usize {
        self.inner.piece_bytes()
    }
    #[track_caller]
    fn barrier(&self) {
        let s = self.watch.before(self.inner, Collective::Barrier, Location::caller());
        self.inner.barrier();
        self.watch.after(self.inner, s, None)
    }
    #[track_caller]
    fn node_barrier(&self) {
        let s = self.watch.before(self.inner, Collective::NodeBarrier, Location::caller());
        self.inner.node_barrier();
        self.watch.after(self.inner, s, None)
    }
    #[track_caller]
    fn node_or_bytes(&self, bytes: &mut [u8]) {
        let s = self.watch.before(self.inner, Collective::NodeOr(bytes.len()), Location::caller());
        self.inner.node_or_bytes(bytes);
        self.watch.after(self.inner, s, None)
    }
    #[track_caller]
    fn leaders_or_bytes(&self, bytes: &mut [u8]) {
        let s = self.watch.before(self.inner, Collective::LeadersOr(bytes.len()), Location::caller());
        self.inner.leaders_or_bytes(bytes);
        self.watch.after(self.inner, s, None)
    }
    #[track_caller]
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let s = self.watch.before(self.inner, Collective::AllGather, Location::caller());
        let all = self.inner.all_gather(mine);
        self.watch.after(self.inner, s, Some(&all));
        all
    }
    fn abort(&self, code: i32) -> ! {
        self.inner.abort(code)
    }
    fn fail(&self, message: &str) -> ! {
        self.inner.fail(message)
    }
    fn fail_alone(&self, message: &str) -> ! {
        self.inner.fail_alone(message)
    }
}
