//! The hand-off between the word sieve's scanning thread and its helper
//! threads ([`super::words`]): the scan finds the losses in word order and
//! marks their near parents itself; helper `h` of `H` marks the far parents
//! of losses `h, h + H, …`. The scan may read a set word only once every far
//! mark that can land in it is written.
//!
//! # The protocol
//!
//! | field | written by | read by | what it says |
//! |---|---|---|---|
//! | `queue[n % len]` | scan (Relaxed) | helpers (Relaxed, after `published`) | loss `n`'s word (bit 63: lent) |
//! | `published` | scan (Release) | helpers (Acquire) | losses `0..published` are queued |
//! | `done[h]` | helper `h` (Release) | scan (Acquire) | helper `h` has gone through losses `0..done[h]` (its own: every far mark written) |
//! | `ahead[h]` | helper `h` (Release) | scan (Acquire, only while `done[h]` names the loss) | helper `h`'s far marks still to write for loss `done[h]` lie at `ahead[h]` or above (0: unknown) |
//! | `finished` | scan (Release) | helpers (Acquire) | no loss will be queued after `published` |
//!
//! Which orderings pair, and why that is enough:
//!
//! 1. **A queued loss is seen whole.** The scan stores the entry, then
//!    `published = n + 1` (Release); a helper that loads `published > n`
//!    (Acquire) then loads the entry: it sees the stored word.
//! 2. **A slot is reused only once read.** Before storing loss `n` in slot
//!    `n % len` the scan waits until every helper's `done > n − len`
//!    (Acquire, `is_done`); a helper stores `done` (Release) only after it
//!    has read the entry of that loss.
//! 3. **The scan reads a word only after the far marks below it.** A helper
//!    writes its far marks (atomic ORs, or plain stores when it is the only
//!    helper and the scan never writes the set), then stores `ahead` or
//!    `done` (Release). The scan's [`Shared::bound`] loads them (Acquire): every
//!    mark written before them is visible, so the words below the bound
//!    have their final far marks when the scan reloads them.
//! 4. **`ahead` is reset before `done`.** The scan reads `ahead[h]` only
//!    while `done[h]` names the loss in progress; a stale 0 is the
//!    conservative "unknown" (the loss's own reach bounds it).
//! 5. **The end.** The scan stores `finished` (Release) after its last
//!    `published`; a helper that sees `finished` (Acquire) loads
//!    `published` once more before it stops, so no queued loss is left.
//!
//! Nothing here waits with a lock: the scan and the helpers spin, then
//! yield ([`pause`]). The test build can shake the interleavings: with
//! [`chaos`] on, every hand-off point yields the core at random.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What the scanning thread and the helpers share.
pub(super) struct Shared {
    /// Loss `i` at `queue[i % queue.len()]`.
    pub(super) queue: Vec<AtomicU64>,
    /// Losses queued so far.
    pub(super) published: AtomicU64,
    /// `done[h]`: losses that helper `h` has gone through (it marks the far
    /// parents of losses `i` with `i % helpers == h`).
    pub(super) done: Vec<AtomicU64>,
    /// `ahead[h]`: while helper `h` marks loss `done[h]`, the parents it has
    /// still to mark lie at `ahead[h]` or above (0: no such word said).
    pub(super) ahead: Vec<AtomicU64>,
    /// No more losses will be queued.
    pub(super) finished: AtomicBool,
}

impl Shared {
    /// The hand-off of `helpers` helpers through a ring of `queue.len()` losses.
    pub(super) fn new(queue: Vec<AtomicU64>, helpers: usize) -> Self {
        Shared {
            queue,
            published: AtomicU64::new(0),
            done: (0..helpers).map(|_| AtomicU64::new(0)).collect(),
            ahead: (0..helpers).map(|_| AtomicU64::new(0)).collect(),
            finished: AtomicBool::new(false),
        }
    }

    /// Whether every helper has gone through loss `i`.
    pub(super) fn is_done(&self, i: u64) -> bool {
        self.done.iter().all(|d| d.load(Ordering::Acquire) > i)
    }

    /// Every word below the bound may be read, as far as the losses
    /// `oldest..` (`losses`: every loss queued) are concerned: the far
    /// parents still to mark lie above it. Moves `oldest` past the losses
    /// whose helper is done with them.
    pub(super) fn bound(&self, losses: &[u64], lent: &[bool], oldest: &mut u64, reach: u64) -> u64 {
        let helpers = self.done.len() as u64;
        let done = |j: u64| self.done[(j % helpers) as usize].load(Ordering::Acquire);
        while (*oldest as usize) < losses.len() && done(*oldest) > *oldest {
            *oldest += 1;
        }
        let mut bound = u64::MAX;
        for (j, &l) in losses.iter().enumerate().skip(*oldest as usize) {
            // The losses' own bounds (their far parents' least distance,
            // `reach` or, lent a bit more, half of it) are at least `l + reach / 2`.
            if l + reach / 2 >= bound {
                break;
            }
            let (j, h) = (j as u64, (j as u64 % helpers) as usize);
            let d = self.done[h].load(Ordering::Acquire);
            if d > j {
                continue;
            }
            // Its helper at work on it: how far it has come.
            let ahead = if d == j { self.ahead[h].load(Ordering::Acquire) } else { 0 };
            let own = if lent[j as usize] { reach / 2 } else { reach };
            bound = bound.min((l + own).max(ahead));
        }
        bound
    }
}

/// Waits a little (spinning first, then yielding the core).
pub(super) fn pause(spins: &mut u32) {
    shake();
    if *spins < 1 << 12 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    *spins += 1;
}

/// A hand-off point: in test builds with [`chaos`] on, the thread yields
/// the core at random (a no-op otherwise).
#[inline(always)]
pub(super) fn shake() {
    #[cfg(test)]
    chaos::maybe_yield();
}

/// Random yields at the hand-off points, for the stress test.
#[cfg(test)]
pub(super) mod chaos {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// On: every hand-off point yields with probability 1/4.
    pub static ON: AtomicBool = AtomicBool::new(false);

    /// Each thread's generator, seeded apart.
    static SEEDS: AtomicU64 = AtomicU64::new(1);
    thread_local!(static STATE: Cell<u64> = Cell::new(SEEDS.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) | 1));

    pub(super) fn maybe_yield() {
        if !ON.load(Ordering::Relaxed) {
            return;
        }
        let r = STATE.with(|s| {
            let mut x = s.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.set(x);
            x
        });
        if r & 3 == 0 {
            std::thread::yield_now();
        }
    }
}
