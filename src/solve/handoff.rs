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
//!
//! Every ordering of the protocol is written in this file only, in the
//! methods of [`Shared`] that the scan and the helpers call. The model
//! test at the end (`model`, built with the feature `loom`) runs a
//! scan and a helper through those same methods under the loom model
//! checker, which explores every interleaving and every value the C11
//! memory model lets a load see (not only what x86-64 shows): an entry
//! read whole, a slot reused only once read, a word read below the bound
//! only with its far marks, and the end. `scripts/loom-test.sh` runs it.

#[cfg(all(test, feature = "loom"))]
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[cfg(not(all(test, feature = "loom")))]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What the scanning thread and the helpers share. Its fields are private:
/// the scan and the helpers reach them through the methods below, where
/// every ordering of the protocol is written.
pub(super) struct Shared {
    /// Loss `i` at `queue[i % queue.len()]`.
    queue: Vec<AtomicU64>,
    /// Losses queued so far.
    published: AtomicU64,
    /// `done[h]`: losses that helper `h` has gone through (it marks the far
    /// parents of losses `i` with `i % helpers == h`).
    done: Vec<AtomicU64>,
    /// `ahead[h]`: while helper `h` marks loss `done[h]`, the parents it has
    /// still to mark lie at `ahead[h]` or above (0: no such word said).
    ahead: Vec<AtomicU64>,
    /// No more losses will be queued.
    finished: AtomicBool,
}

impl Shared {
    /// The hand-off of `helpers` helpers through a ring of `slots` losses.
    pub(super) fn new(slots: usize, helpers: usize) -> Self {
        Shared {
            queue: (0..slots).map(|_| AtomicU64::new(0)).collect(),
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

    /// Scan: waits until loss `n`'s slot is free (rule 2: every helper has
    /// gone through the loss that held it), moving `oldest` (the first loss
    /// some helper may still read) on.
    pub(super) fn wait_for_slot(&self, n: u64, oldest: &mut u64) {
        let mut spins = 0;
        while n - *oldest >= self.queue.len() as u64 {
            if self.is_done(*oldest) {
                *oldest += 1;
            } else {
                pause(&mut spins);
            }
        }
    }

    /// Scan: queues loss `n` (its slot free: [`Shared::wait_for_slot`]) as
    /// `entry` (rule 1: the entry, then `published`, Release).
    pub(super) fn publish(&self, n: u64, entry: u64) {
        self.queue[(n % self.queue.len() as u64) as usize].store(entry, Ordering::Relaxed);
        shake();
        self.published.store(n + 1, Ordering::Release);
        shake();
    }

    /// Scan: no loss will be queued after the last published (rule 5).
    pub(super) fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// The fewest losses a helper has gone through (a hint for lending:
    /// any value will do).
    pub(super) fn least_done(&self) -> u64 {
        self.done.iter().map(|d| d.load(Ordering::Relaxed)).min().unwrap_or(0)
    }

    /// Helper: loss `i`'s entry once it is queued (rule 1: `published`,
    /// Acquire, then the entry), `None` before.
    pub(super) fn entry(&self, i: u64) -> Option<u64> {
        (self.published.load(Ordering::Acquire) > i).then(|| self.queue[(i % self.queue.len() as u64) as usize].load(Ordering::Relaxed))
    }

    /// Helper `h`: the far marks of the loss it works on still to write lie
    /// at word `d` or above (rule 3: after the marks below, Release).
    pub(super) fn ahead(&self, h: usize, d: u64) {
        self.ahead[h].store(d, Ordering::Release);
        shake();
    }

    /// Helper `h` has gone through loss `i` (rules 2–4): after marking its
    /// far parents when `marked`, `ahead` reset first, then `done`
    /// (Release).
    pub(super) fn done_with(&self, h: usize, i: u64, marked: bool) {
        if marked {
            // Before `done`: the scan reads `ahead` only for the loss `done` names.
            self.ahead[h].store(0, Ordering::Relaxed);
            shake();
        }
        self.done[h].store(i + 1, Ordering::Release);
        shake();
    }

    /// Helper: every queued loss is gone through and none will follow
    /// (rule 5: `finished`, then `published` once more).
    pub(super) fn drained(&self, i: u64) -> bool {
        self.finished.load(Ordering::Acquire) && self.published.load(Ordering::Acquire) <= i
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

/// Waits a little (spinning first, then yielding the core; under loom,
/// yielding to the model's other threads).
pub(super) fn pause(spins: &mut u32) {
    shake();
    #[cfg(all(test, feature = "loom"))]
    {
        *spins += 1;
        loom::thread::yield_now();
    }
    #[cfg(not(all(test, feature = "loom")))]
    {
        if *spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
        *spins += 1;
    }
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

/// The protocol under the loom model checker: a scan and one helper, a ring
/// of one slot (so the second loss reuses the first's), far marks in a
/// small set of words. Run with `scripts/loom-test.sh`.
#[cfg(all(test, feature = "loom"))]
mod model {
    use super::*;
    use loom::sync::Arc;

    /// Loss `j` lies at word `LOSSES[j]` (not 0: a slot's first value),
    /// its far parent at `+ REACH`.
    const LOSSES: [u64; 2] = [1, 2];
    const REACH: u64 = 2;

    #[test]
    fn the_scan_reads_a_word_below_the_bound_only_with_its_far_marks() {
        loom::model(|| {
            let shared = Arc::new(Shared::new(1, 1));
            let set: Arc<Vec<AtomicU64>> = Arc::new((0..5).map(|_| AtomicU64::new(0)).collect());
            let helper = {
                let (shared, set) = (shared.clone(), set.clone());
                loom::thread::spawn(move || {
                    let (mut i, mut spins) = (0, 0);
                    loop {
                        if let Some(entry) = shared.entry(i) {
                            // Rule 1: the entry is the loss queued in its slot.
                            assert_eq!(entry, LOSSES[i as usize], "a queued loss seen whole");
                            let far = entry + REACH;
                            shared.ahead(0, far);
                            set[far as usize].fetch_or(1, Ordering::Relaxed);
                            shared.done_with(0, i, true);
                            i += 1;
                        } else if shared.drained(i) {
                            return i;
                        } else {
                            pause(&mut spins);
                        }
                    }
                })
            };
            // The scan: queue both losses (the second waits for the slot),
            // then read every far word once the bound passes it.
            let mut oldest = 0;
            for (n, &l) in LOSSES.iter().enumerate() {
                shared.wait_for_slot(n as u64, &mut oldest);
                shared.publish(n as u64, l);
            }
            shared.finish();
            let lent = [false; 2];
            let mut spins = 0;
            for &l in &LOSSES {
                let far = l + REACH;
                while shared.bound(&LOSSES, &lent, &mut oldest, REACH) <= far {
                    pause(&mut spins);
                }
                // Rule 3: below the bound, the word has its far mark.
                assert_eq!(set[far as usize].load(Ordering::Relaxed), 1, "word {far} read before its far mark");
            }
            // Rule 5: the helper went through every queued loss.
            assert_eq!(helper.join().unwrap(), LOSSES.len() as u64);
        });
    }
}
