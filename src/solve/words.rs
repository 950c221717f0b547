//! The box sieve over boundary words: every loss of a small box at once.
//!
//! A position of an `R × C` box is its boundary, a lattice path from the
//! box's bottom-left corner to its top-right corner: `C` steps right and `R`
//! steps up. Written as an `R + C`-bit word, first step in the highest bit,
//! 1 = right, a bite `(i, j)` takes the stretch of the path from just after
//! its `j`-th right step to its up step of row `i` and moves that stretch's
//! right steps to its end: the word's bits in that stretch are *sorted*,
//! zeros first. A child's word is therefore smaller than its parent's, and
//! the parents of a word `L` are found by undoing one sort: wherever `L`
//! reads `0^u 1^v` (`u, v ≥ 1`, inside a run of zeros followed by a run of
//! ones), every arrangement of those bits that starts with a 1 and ends
//! with a 0 is a parent (`C(u + v − 2, u − 1)` of them). See `docs/math.md`,
//! "Boxes as words".
//!
//! The sieve visits the words in increasing order; an unmarked word is a
//! loss and marks its parents. Its bit set holds one bit per position, in
//! word order: a word's index is the offset of its high bits (the words
//! with smaller high bits and the right number of ones before it) plus the
//! rank of its low 12 to 16 bits among the values with as many ones, two
//! table look-ups (`C(32, 16)` bits, 72 MiB, for 16×16); a box of at most
//! 26 `rows + cols` indexes it by the word itself (`2^bits` bits, 8 MiB at
//! 13×13) and looks nothing up. The arrangements of a stretch are read
//! from a table of the 16-bit values by number of ones; those of a stretch
//! that ends at bit 0 are consecutive indices of the compact index (the
//! words of the same high bits and as many ones below), set a word at a
//! time.
//!
//! The work is shared by position in the word: a parent from a stretch
//! whose top bit is `s` lies at least `2^(s−1)` words above its loss, so
//! the other threads mark the parents of the high stretches (`s ≥ FAR`) of
//! each loss while the scanning thread goes on, waiting only when it comes
//! within `2^(FAR−1)` words of a loss whose far parents are still being
//! marked. A helper marks a loss's stretches by increasing top bit and,
//! for a loss with many, says after each how far the scan may go (`l +
//! 2^s`): the scan waits for the stretches it is about to reach, not for
//! the whole loss. While the helpers are idle, the scan lends them the
//! stretches of top bit `FAR − 1` too.
//!
//! The level sieve ([`super::sieve`]) computes the same losses; the driver
//! uses this one for a box of one process whose bit set fits in memory
//! ([`bytes`]), the level sieve otherwise (larger boxes, clusters).

use super::handoff::{pause, Shared};
use super::sieve::{for_words, prefetch};
use crate::game::Universe;
use crate::index::Ranking;
use crate::report::Progress;
use crate::store::mapped::MappedBits;
use rayon::prelude::*;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest `rows + cols` this sieve takes (its bit set is `C(rows + cols,
/// cols)` bits: 278 MiB at 17×17; larger boxes keep the level sieve,
/// whose epochs hold less).
pub const MAX_BITS: u32 = 34;

/// Bits of the arrangement table ([`Combos`]): the 16-bit values by number of ones.
const LOW_BITS: u32 = 16;

/// Low bits of a word that the compact index ranks by one look-up; the
/// high bits select an offset. `bits − 16` within `12..=16` keeps both
/// tables small (14×14: 2^16 offsets, 512 KiB, and 2^12 ranks; 16×16:
/// 2^16 of each), and was faster than the direct index at 14×14 and than
/// 16 bits at 15×15 (figures: docs/performance.md, section "The word
/// sieve's index"). `CHOMP_WORDS_LOW` overrides it.
fn index_low(bits: u32) -> u32 {
    let low = super::tunables::get().words_low.unwrap_or(bits.saturating_sub(16).clamp(12, 16));
    low.min(LOW_BITS).min(bits)
}

fn direct_bits() -> u32 {
    super::tunables::get().words_direct
}

/// `SIX_BITS[j]`: the 64-bit mask of the six-bit values with `j` ones.
const SIX_BITS: [u64; 7] = {
    let mut masks = [0u64; 7];
    let mut x = 0;
    while x < 64 {
        masks[(x as u64).count_ones() as usize] |= 1 << x;
        x += 1;
    }
    masks
};

/// Bytes that [`box_losses`] holds for `universe` (its bit set, the scan's
/// ring, the index tables), or `None`
/// when it is not a box this sieve takes (both bounds, no tile bound below
/// the box's area, `rows + cols <= MAX_BITS`) or the environment variable
/// `CHOMP_WORD_SIEVE` is `0`.
pub fn bytes(universe: &Universe) -> Option<u64> {
    // CHOMP_WORD_SIEVE=0 turns it off (to compare with the level sieve).
    if !super::tunables::get().word_sieve {
        return None;
    }
    let (r, c) = (universe.rows?, universe.cols?);
    let bits = r + c;
    let whole = universe.tiles.is_none_or(|t| t >= r * c);
    (whole && r >= 1 && c >= 1 && bits <= MAX_BITS).then(|| {
        // The table of the 16-bit values and their ranks ([`Combos`]), in both indices.
        let table = 6 << LOW_BITS;
        let index = Index::new(bits, c, bits <= direct_bits());
        index.total.div_ceil(64) * 8 + index.ring_bits(far_bit(bits)) / 8 + index.off.len() as u64 * 8 + table
    })
}

/// The bytes of the word sieve's bit set when a run with this holding uses
/// it for `universe`: a box it takes ([`bytes`]), one process, and a bit set
/// that fits in the window the holding allows (half the memory available
/// or half of `--max-memory`). `None`: the run uses the level sieve.
pub fn chosen(universe: &Universe, hold: super::sieve::Holding) -> Option<u64> {
    // It marks one bit a position: it cannot count moves.
    bytes(universe).filter(|&b| hold.processes == 1 && !hold.count_moves && hold.window.is_none_or(|w| b <= w))
}

/// Every loss of a box, by level.
pub struct BoxLosses {
    /// `ranks[n]`: the ranks of the losses with `n` tiles, increasing (`ranks[0]` empty).
    pub ranks: Vec<Vec<u64>>,
    /// `marks[n]`: parents marked by the losses with `n` tiles.
    pub marks: Vec<u64>,
}

/// The stretches whose top bit is at least this far up go to the helper
/// threads (the environment variable `CHOMP_WORDS_FAR` overrides it, for
/// tests and tuning). The top three bits: at 16×16 they hold about two
/// fifths of the marks, and the scan may run `2^28` words ahead of the
/// helpers. Boxes to 28 bits give the helper the top two bits only: each
/// was the fastest `far` measured (figures: docs/performance.md, section
/// "The word sieve's far bit").
fn far_bit(bits: u32) -> u32 {
    let default = bits.saturating_sub(if bits <= 28 { 2 } else { 3 }).max(8);
    usable_far(super::tunables::get().words_far.unwrap_or(default), bits)
}

/// `far` within what the sieve takes: at most the word's bits (no far
/// stretch then), at least 7 (far parents at least a set word ahead).
fn usable_far(far: u32, bits: u32) -> u32 {
    far.min(bits).max(7)
}

/// Losses queued for the helpers at most (a ring, smaller for small boxes;
/// the scan waits when it is full).
const QUEUE: usize = 1 << 20;

/// The bit of a queued word that says the loss was lent its stretches of
/// top bit `far − 1` (words have at most [`MAX_BITS`] bits).
const LENT: u32 = 63;

/// The scan lends a loss's stretches of top bit `far − 1` to the helpers
/// when at most this many queued losses wait for them.
const LEND_BELOW: u64 = 2;

/// Solves the box `ranking` describes ([`bytes`] must accept its universe)
/// on `threads` threads: every loss, as ranks of their levels.
///
/// # Errors
/// When the bit set cannot be mapped.
pub fn box_losses(ranking: &Ranking, threads: usize) -> io::Result<BoxLosses> {
    box_losses_watched(ranking, threads, &Progress::default())
}

/// [`box_losses`], reporting the scan's place in `progress`.
///
/// # Errors
/// When the bit set cannot be mapped.
pub fn box_losses_watched(ranking: &Ranking, threads: usize, progress: &Progress) -> io::Result<BoxLosses> {
    let u = ranking.universe();
    let bits = u.rows.expect("a box") + u.cols.expect("a box");
    box_losses_with(ranking, threads, far_bit(bits), bits <= direct_bits(), progress)
}

/// [`box_losses`] with the far stretches from bit `far` and a direct or compact index.
fn box_losses_with(ranking: &Ranking, threads: usize, far: u32, direct: bool, progress: &Progress) -> io::Result<BoxLosses> {
    let u = ranking.universe();
    let (r, c) = (u.rows.expect("a box"), u.cols.expect("a box"));
    let far = usable_far(far, r + c);
    let index = Index::new(r + c, c, direct);
    let set = MappedBits::anonymous(index.total)?;
    let helpers = threads.max(1) - 1;
    progress.total.store(index.total, Ordering::Relaxed);
    let sieve = Sieve { index: &index, set: set.words(), one_writer: helpers <= 1, far, progress };
    let shared = Shared::new(QUEUE.min(index.total as usize / 64 + 1024), helpers);
    let top = (r * c) as usize;
    // The helpers also rank the losses they take (off the scan's path).
    let (mut ranks, mut marks) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .map(|h| {
                scope.spawn({
                    let (sieve, shared) = (&sieve, &shared);
                    move || sieve.help(h, helpers, shared, ranking)
                })
            })
            .collect();
        let (words, mut marks) = sieve.scan(helpers, &shared, top);
        let mut ranks = vec![Vec::new(); top + 1];
        if helpers == 0 {
            for &w in &words {
                let (n, rank) = word_level_rank(w, r + c, ranking);
                ranks[n as usize].push(rank);
            }
        }
        for h in handles {
            let (their_marks, their_ranks) = h.join().expect("a helper thread");
            for (m, x) in marks.iter_mut().zip(their_marks) {
                *m += x;
            }
            for (level, theirs) in ranks.iter_mut().zip(their_ranks) {
                level.extend(theirs);
            }
        }
        (ranks, marks)
    });
    drop(set);
    ranks.par_iter_mut().for_each(|level| level.sort_unstable());
    marks.resize(top + 1, 0);
    Ok(BoxLosses { ranks, marks })
}

/// The rows of the position of word `w` of an `r × c` box (non-empty rows, top first).
#[cfg(test)]
fn word_rows(w: u64, r: u32, c: u32, rows: &mut Vec<u8>) {
    rows.clear();
    let mut x = 0u8;
    // Bottom row first: right steps extend the current row, an up step ends it.
    for i in (0..r + c).rev() {
        if w >> i & 1 == 1 {
            x += 1;
        } else if x > 0 {
            rows.push(x);
        }
    }
    rows.reverse();
}

/// The level and rank of the position of word `w` (`bits` bits): its up
/// steps, last first, close its rows top first (each as long as the right
/// steps before it), as [`Ranking::rank_rows`] reads them.
fn word_level_rank(w: u64, bits: u32, ranking: &Ranking) -> (u32, u64) {
    let tiles = word_tiles(w, bits) as u32;
    let (mut zeros, mut suffix, mut rank, mut row) = (!w & ((1u64 << bits) - 1), tiles, 0, 0);
    while suffix > 0 {
        let len = (w >> zeros.trailing_zeros()).count_ones();
        rank += ranking.contribution(suffix, row, len);
        suffix -= len;
        row += 1;
        zeros &= zeros - 1;
    }
    (tiles, rank)
}

/// Tiles of the position of word `w`: each up step closes a row as long as
/// the right steps before it.
fn word_tiles(w: u64, bits: u32) -> usize {
    let mut zeros = !w & ((1u64 << bits) - 1);
    let mut tiles = 0;
    while zeros != 0 {
        let z = zeros.trailing_zeros();
        tiles += (w >> z).count_ones() as usize;
        zeros &= zeros - 1;
    }
    tiles
}

/// `C(n, k)` (`n <= 64`).
fn choose(n: u32, k: u32) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k) as u64;
    (0..k).fold(1u64, |acc, i| acc * (n as u64 - i) / (i + 1))
}

/// The index of a box's words in its bit set: one bit per word with `cols`
/// ones, in word order.
struct Index {
    /// Bits of a word.
    bits: u32,
    /// Ones of a word.
    cols: u32,
    /// Low bits ranked by one look-up in [`Combos`] ([`index_low`];
    /// the values below `2^low` come first among the 16-bit values of as
    /// many ones, so the 16-bit table ranks them too).
    low: u32,
    combos: &'static Combos,
    /// `combos.rank`, held here: the hot path looks it up once per mark.
    rank: &'static [u32],
    /// `off[h]`: the index of the first word with high bits `h` (and `off[2^high]`, the total).
    off: Vec<u64>,
    /// Indices of the bit set: the words with `cols` ones, or with `direct`
    /// every word below `2^bits`.
    total: u64,
    /// Whether a word is its own index (small boxes: the set has `2^bits`
    /// bits, some of them no position, and no table is looked up).
    direct: bool,
}

impl Index {
    fn new(bits: u32, cols: u32, direct: bool) -> Self {
        let combos = combos();
        if direct {
            return Index { bits, cols, low: bits, combos, rank: &combos.rank, off: Vec::new(), total: 1 << bits, direct: true };
        }
        let low = index_low(bits);
        let mut off = Vec::with_capacity((1 << (bits - low)) + 1);
        let mut total = 0u64;
        for h in 0..1u64 << (bits - low) {
            off.push(total);
            total += cols.checked_sub(h.count_ones()).map_or(0, |j| choose(low, j));
        }
        off.push(total);
        Index { bits, cols, low, combos, rank: &combos.rank, off, total, direct: false }
    }

    /// Bits of the scan's ring for the near stretches' marks. A near parent
    /// lies less than `2^far` words above its loss, so less than `2^far`
    /// indices in the direct index, and in the compact one less than the
    /// words of `cols` ones whose high bits are among the `2^(far − low) +
    /// 1` values that such a window reaches (14×14: 2 MiB instead of 8).
    /// The scan clears a ring word once past it, so the ring holds the span
    /// and a word more.
    fn ring_bits(&self, far: u32) -> u64 {
        (self.near_span(far) + 128).next_power_of_two().min(self.total.next_power_of_two()).max(64)
    }

    /// How many indices above its loss a near parent may lie (at most).
    fn near_span(&self, far: u32) -> u64 {
        if self.direct || far < self.low {
            return 1u64 << far;
        }
        let (blocks, high) = (1usize << (far - self.low), self.off.len() - 1);
        (0..high).map(|h| self.off[(h + blocks + 1).min(high)] - self.off[h]).max().unwrap_or(0)
    }

    /// The index of word `w` (with `cols` ones).
    #[inline(always)]
    fn of(&self, w: u64) -> u64 {
        if self.direct {
            return w;
        }
        self.off[(w >> self.low) as usize] + self.rank[(w & ((1 << self.low) - 1)) as usize] as u64
    }

    /// The indices `64 k .. 64 k + 64` that are positions other than the
    /// empty box, as a mask.
    #[inline(always)]
    fn valid(&self, k: u64) -> u64 {
        if self.direct {
            // Words of `cols` ones: the low six bits must hold what the high ones lack.
            let mut valid = (self.cols as usize).checked_sub(k.count_ones() as usize).and_then(|j| SIX_BITS.get(j)).copied().unwrap_or(0);
            if self.bits < 6 {
                valid &= (1 << (1 << self.bits)) - 1;
            }
            let empty = (1u64 << self.cols) - 1;
            if empty >> 6 == k {
                valid &= !(1 << (empty & 63));
            }
            return valid;
        }
        // Index 0 is the empty box; indices past the total are no words.
        let mut valid = if k == 0 { !1 } else { u64::MAX };
        if (k + 1) * 64 > self.total {
            valid &= u64::MAX >> ((k + 1) * 64 - self.total);
        }
        valid
    }

    /// The word of index `i`, for increasing `i` (`high` follows the high
    /// bits of the compact index).
    #[inline(always)]
    fn word_at(&self, i: u64, high: &mut u64) -> u64 {
        if self.direct {
            return i;
        }
        while self.off[*high as usize + 1] <= i {
            *high += 1;
        }
        self.word(*high, i)
    }

    /// The word of index `i`, its high bits `h` (`off[h] <= i < off[h + 1]`).
    #[inline(always)]
    fn word(&self, h: u64, i: u64) -> u64 {
        let j = self.cols - h.count_ones();
        h << self.low | self.combos.values[self.combos.start[j as usize] + (i - self.off[h as usize]) as usize] as u64
    }
}

struct Sieve<'a> {
    index: &'a Index,
    /// The marks of the far stretches, one bit per word of the box.
    set: &'a [AtomicU64],
    /// Whether one thread alone writes `set` (plain stores suffice).
    one_writer: bool,
    far: u32,
    /// The scan's place, stored every 2^20 slots (off the hot path).
    progress: &'a Progress,
}

impl Sieve<'_> {
    /// Marks bit `i` of the far set.
    #[inline(always)]
    fn mark_far(&self, i: u64, atomic: bool) {
        self.mark_far_word((i >> 6) as usize, 1 << (i & 63), atomic);
    }

    /// Marks the bits `mask` of word `k` of the far set.
    #[inline(always)]
    fn mark_far_word(&self, k: usize, mask: u64, atomic: bool) {
        let word = &self.set[k];
        let old = word.load(Ordering::Relaxed);
        if !atomic {
            // No other thread writes the set: a plain store, unconditional
            // (a branch on a missed load would stall when mispredicted).
            word.store(old | mask, Ordering::Relaxed);
        } else if old & mask != mask {
            word.fetch_or(mask, Ordering::Relaxed);
        }
    }

    /// The scan, in increasing word order; returns the loss words and the
    /// marks it made by level. The near stretches' marks go to a ring of
    /// bits that follows the scan ([`Index::ring_bits`]); with helpers, each loss is queued for
    /// them (its far stretches), else this thread marks those too.
    fn scan(&self, helpers: usize, shared: &Shared, top: usize) -> (Vec<u64>, Vec<u64>) {
        let index = self.index;
        let reach = 1u64 << (self.far - 1);
        let ring_mask = index.ring_bits(self.far) / 64 - 1;
        let mut ring = vec![0u64; ring_mask as usize + 1];
        let mut losses = Vec::new();
        let mut marks = vec![0u64; top + 1];
        // Losses before `oldest` have all their parents marked.
        let mut oldest = 0u64;
        // Every word below `safe` has its far marks (a bound known, renewed when reached).
        let mut safe = 0u64;
        // `lent[j]`: loss `j`'s stretches of top bit `far − 1` went to the
        // helpers too (they had little to do), its far parents lie at
        // least `reach / 2` above it.
        let (mut lent, mut lend) = (Vec::new(), false);
        let lending = helpers > 0 && self.far > 8;
        let mut high = 0u64; // the high bits of the index looked at
        for k in 0..index.total.div_ceil(64) {
            if k & 0x3FFF == 0 {
                self.progress.done.store(k * 64, Ordering::Relaxed);
            }
            let slot = (k & ring_mask) as usize;
            let far_word = &self.set[k as usize];
            let valid = index.valid(k);
            let mut from = 0u64; // bits of this set word still to look at
            loop {
                let clear = !(far_word.load(Ordering::Relaxed) | ring[slot]) & valid & (u64::MAX << from);
                if clear == 0 {
                    break;
                }
                let b = clear.trailing_zeros() as u64;
                let i = k * 64 + b;
                let w = index.word_at(i, &mut high);
                if helpers > 0 && w >= safe && oldest < losses.len() as u64 && losses[oldest as usize] + reach / 2 <= w {
                    // Far parents of a loss at least `reach` below may still
                    // land here: a new bound (waiting until it passes this
                    // word), then look at the set word again (`clear` was
                    // read before the marks the bound vouches for).
                    let mut spins = 0;
                    loop {
                        safe = shared.bound(&losses, &lent, &mut oldest, reach);
                        if w < safe {
                            break;
                        }
                        pause(&mut spins);
                    }
                    continue;
                }
                from = b + 1;
                // A loss: its near parents now, its far ones by a helper
                // (with the next bit down when the helpers are idle: one
                // read of their counters every few losses).
                if lending && losses.len() % 8 == 0 {
                    let done = shared.least_done();
                    lend = losses.len() as u64 <= done + LEND_BELOW;
                }
                let near_top = self.far - (lending && lend) as u32;
                let mut count = if index.direct {
                    self.push_near(w, near_top, &mut |i, _| ring[((i >> 6) & ring_mask) as usize] |= 1 << (i & 63))
                } else {
                    // Consecutive marks often share a ring word: they are
                    // gathered in a register (a chain of read-modify-writes
                    // of one word waits on each store, and the ring exceeds
                    // the L2 cache).
                    let (mut at, mut bits) = (slot, 0u64);
                    let count = self.push_near(w, near_top, &mut |i, n| {
                        if n == 1 {
                            let word = ((i >> 6) & ring_mask) as usize;
                            if word != at {
                                ring[at] |= bits;
                                (at, bits) = (word, 0);
                            }
                            bits |= 1 << (i & 63);
                        } else {
                            set_range(&mut ring, ring_mask, i, i + n);
                        }
                    });
                    ring[at] |= bits;
                    count
                };
                if helpers == 0 {
                    count += self.push_far(w, self.far, &mut |_| {});
                } else {
                    let n = losses.len() as u64;
                    shared.wait_for_slot(n, &mut oldest);
                    let lent_it = near_top < self.far;
                    shared.publish(n, w | (lent_it as u64) << LENT);
                    // Its far parents lie at least `reach` (lent: half of it) above it.
                    safe = safe.min(w + if lent_it { reach / 2 } else { reach });
                    lent.push(lent_it);
                }
                marks[word_tiles(w, self.index.bits)] += count;
                losses.push(w);
                if from == 64 {
                    break;
                }
            }
            ring[slot] = 0;
        }
        shared.finish();
        (losses, marks)
    }

    /// Helper `h` of `helpers`: marks the far parents of losses `h`, `h +
    /// helpers`, … (and goes through the others, so that one counter says
    /// how far it is); returns the marks by level and the ranks of those
    /// losses by level (unsorted).
    fn help(&self, h: usize, helpers: usize, shared: &Shared, ranking: &Ranking) -> (Vec<u64>, Vec<Vec<u64>>) {
        let top = ranking.max_tiles() as usize;
        let (mut marks, mut ranks) = (vec![0u64; top + 1], vec![Vec::new(); top + 1]);
        let mut i = 0;
        let mut spins = 0;
        loop {
            if let Some(entry) = shared.entry(i) {
                if i % helpers as u64 == h as u64 {
                    let (w, from) = (entry & !(1 << LENT), self.far - (entry >> LENT) as u32);
                    let count = self.push_far(w, from, &mut |d| shared.ahead(h, d));
                    shared.done_with(h, i, true);
                    let (n, rank) = word_level_rank(w, self.index.bits, ranking);
                    marks[n as usize] += count;
                    ranks[n as usize].push(rank);
                } else {
                    shared.done_with(h, i, false);
                }
                i += 1;
                spins = 0;
            } else if shared.drained(i) {
                return (marks, ranks);
            } else {
                pause(&mut spins);
            }
        }
    }

    /// Marks the parents of loss `l` from its near stretches (top bit below
    /// `far`: the sieve's, or one less when the helpers take the next bit
    /// down) through `near(index, n)` (the `n` indices from `index` on);
    /// returns their number.
    fn push_near(&self, l: u64, far: u32, near: &mut impl FnMut(u64, u64)) -> u64 {
        let mut count = 0;
        valleys(l, self.index.bits, |zlo, zhi, olo, ohi| {
            // The stretches whose top bit is `s`, of every length: their
            // parents are the words with `s` set and any arrangement below
            // it, down to `olo`, of the valley's other bits (the lowest
            // zero of the arrangement ends the stretch it undoes). Every
            // near `s` at once: any arrangement of the valley's bits up to
            // `top − 1`. One of them is the loss itself, not a parent: its
            // mark lands on a word the scan has passed (its own bit, which
            // the scan no longer reads), and it is not counted.
            let top = (far as i32).min(zhi + 1);
            if zlo >= top {
                return;
            }
            let ones = (ohi - olo + 1) as u32;
            if olo == 0 && !self.index.direct {
                // The stretch ends at bit 0: its arrangements are the words
                // of their high bits and as many ones below, consecutive in
                // the compact index from the loss's own (the smallest) on.
                let n = self.index.combos.binomial[top as usize][ones as usize];
                near(self.index.of(l), n);
                count += n - 1;
            } else {
                let stretch = ((1u64 << (top - olo)) - 1) << olo;
                let base = l & !stretch;
                count += self.stretch(base, olo as u32, (top - olo) as u32, ones, &mut |w| near(self.index.of(w), 1)) - 1;
            }
        });
        count
    }

    /// Marks the parents of loss `l` from its far stretches (top bit `s` at
    /// least `far`, as in [`Sieve::push_near`]) in the far set, by
    /// increasing `s`. Once more than [`PROGRESS`] are marked,
    /// `progress(d)` after each `s` says that the parents still to mark lie
    /// at `d = l + 2^s` or above. Returns their number.
    fn push_far(&self, l: u64, far: u32, progress: &mut impl FnMut(u64)) -> u64 {
        let mut count = 0;
        // Several threads may write the same set words.
        let atomic = !self.one_writer;
        // Far marks go through a short queue: each set word is prefetched
        // when queued and written `BATCH` marks later, so that the cache
        // misses overlap.
        let mut queued = [0u64; BATCH];
        let mut len = 0;
        for s in far..self.index.bits {
            // The valley of `s`: a zero of `l` with a run of ones below its run of zeros.
            let below = l & ((1u64 << s) - 1);
            if l >> s & 1 == 1 || below == 0 {
                continue;
            }
            let ohi = 63 - below.leading_zeros();
            let zeros = !l & ((1u64 << ohi) - 1);
            let olo = if zeros == 0 { 0 } else { 64 - zeros.leading_zeros() };
            let (stretch, ones) = (((1u64 << (s - olo + 1)) - 1) << olo, ohi - olo);
            let base = (l & !stretch) | 1 << s;
            if olo == 0 && !self.index.direct {
                // Consecutive indices, as for the near stretches.
                let n = self.index.combos.binomial[s as usize][ones as usize];
                let start = self.index.of(base | ((1 << ones) - 1));
                for_words(start, start + n, |k, mask| self.mark_far_word(k as usize, mask, atomic));
                count += n;
            } else {
                count += self.stretch(base, olo, s - olo, ones, &mut |w| {
                    let i = self.index.of(w);
                    prefetch(&self.set[(i >> 6) as usize]);
                    queued[len] = i;
                    len += 1;
                    if len == BATCH {
                        for &i in &queued {
                            self.mark_far(i, atomic);
                        }
                        len = 0;
                    }
                });
            }
            if count > PROGRESS {
                for &i in &queued[..len] {
                    self.mark_far(i, atomic);
                }
                len = 0;
                progress(l + (1u64 << s));
            }
        }
        for &i in &queued[..len] {
            self.mark_far(i, atomic);
        }
        count
    }

    /// Marks every word `base | x << lo` with `x < 2^m` of `k` ones (the
    /// arrangements inside a stretch) through `mark(word)`; returns their
    /// number.
    #[inline(always)]
    fn stretch(&self, base: u64, lo: u32, m: u32, k: u32, mark: &mut impl FnMut(u64)) -> u64 {
        combinations(k, m, |x| mark(base | x << lo))
    }
}

/// Sets the bits `start..end` of the ring `ring` (`ring_mask + 1` words; `end − start` less than its bits).
fn set_range(ring: &mut [u64], ring_mask: u64, start: u64, end: u64) {
    for_words(start, end, |k, mask| ring[(k & ring_mask) as usize] |= mask);
}

/// Calls `f(zlo, zhi, olo, ohi)` for every run of zeros `zhi..=zlo` of the
/// word `l` (`bits` bits, high to low) followed by a run of ones `ohi..=olo`
/// (`ohi = zlo − 1`): where the stretches of its parents lie.
#[inline(always)]
fn valleys(l: u64, bits: u32, mut f: impl FnMut(i32, i32, i32, i32)) {
    let mut i = bits as i32 - 1;
    let bit = |i: i32| l >> i & 1 == 1;
    while i >= 0 {
        while i >= 0 && bit(i) {
            i -= 1;
        }
        if i < 0 {
            break;
        }
        let zhi = i;
        while i >= 0 && !bit(i) {
            i -= 1;
        }
        let zlo = i + 1;
        if i < 0 {
            break;
        }
        let ohi = i;
        while i >= 0 && bit(i) {
            i -= 1;
        }
        f(zlo, zhi, i + 1, ohi);
    }
}

/// Far marks queued before they are written.
const BATCH: usize = 16;

/// Far marks of a loss after which its helper says how far the scan may
/// read (fewer are done before the scan could wait for them; tests say it
/// after every top bit).
const PROGRESS: u64 = if cfg!(test) { 0 } else { 1024 };

/// Calls `f(x)` for every `x < 2^len` with `ones` ones; returns their
/// number. The low 16 bits come from a table of the 16-bit values by
/// number of ones (a plain loop over a slice per mark), the bits above
/// by Gosper's hack.
#[inline(always)]
fn combinations(ones: u32, len: u32, mut f: impl FnMut(u64)) -> u64 {
    if ones > len {
        return 0;
    }
    let t = combos();
    if len <= 16 {
        for &y in t.with(ones, len) {
            f(y as u64);
        }
        return t.count[len as usize][ones as usize] as u64;
    }
    let high = len - 16;
    let mut count = 0;
    for hk in ones.saturating_sub(16)..=ones.min(high) {
        let lows = t.with(ones - hk, 16);
        count += gosper(hk, high, |h| {
            for &y in lows {
                f(h << 16 | y as u64);
            }
        }) * lows.len() as u64;
    }
    count
}

/// Calls `f(x)` for every `x < 2^len` with `ones` ones, in increasing
/// order (Gosper's hack); returns their number.
#[inline(always)]
fn gosper(ones: u32, len: u32, mut f: impl FnMut(u64)) -> u64 {
    if ones == 0 {
        f(0);
        return 1;
    }
    let (mut x, end, mut count) = ((1u64 << ones) - 1, 1u64 << len, 0);
    while x < end {
        f(x);
        count += 1;
        // The next number with as many ones.
        let t = x | (x - 1);
        x = (t + 1) | (((!t & (t + 1)) - 1) >> (x.trailing_zeros() + 1));
    }
    count
}

/// The 16-bit values by number of ones, increasing within each: the
/// arrangements of a stretch's low bits, and the compact index's ranks.
struct Combos {
    values: Vec<u16>,
    /// `rank[x]`: the place of `x` among the values of as many ones.
    rank: Vec<u32>,
    /// `values[start[j]..]`: the values with `j` ones.
    start: [usize; 18],
    /// `count[m][j]`: `C(m, j)`, the values below `2^m` with `j` ones.
    count: [[u32; 17]; 17],
    /// `binomial[n][k]`: `C(n, k)` for words of up to [`MAX_BITS`] bits.
    binomial: [[u64; MAX_BITS as usize + 1]; MAX_BITS as usize + 1],
}

impl Combos {
    /// The values below `2^len` (`len <= 16`) with `ones` ones.
    #[inline(always)]
    fn with(&self, ones: u32, len: u32) -> &[u16] {
        let at = self.start[ones as usize];
        &self.values[at..at + self.count[len as usize][ones as usize] as usize]
    }
}

fn combos() -> &'static Combos {
    static TABLE: std::sync::OnceLock<Combos> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut start = [0usize; 18];
        for j in 1..18 {
            start[j] = start[j - 1] + choose(16, j as u32 - 1) as usize;
        }
        let (mut values, mut rank, mut next) = (vec![0u16; 1 << 16], vec![0u32; 1 << 16], start);
        for x in 0..=u16::MAX {
            let j = x.count_ones() as usize;
            values[next[j]] = x;
            rank[x as usize] = (next[j] - start[j]) as u32;
            next[j] += 1;
        }
        let mut count = [[0u32; 17]; 17];
        for (m, row) in count.iter_mut().enumerate() {
            for (j, c) in row.iter_mut().enumerate() {
                *c = choose(m as u32, j as u32) as u32;
            }
        }
        let mut binomial = [[0u64; MAX_BITS as usize + 1]; MAX_BITS as usize + 1];
        for (n, row) in binomial.iter_mut().enumerate() {
            for (k, c) in row.iter_mut().enumerate() {
                *c = choose(n as u32, k as u32);
            }
        }
        Combos { values, rank, start, count, binomial }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::solve::in_memory::level_losses;

    #[test]
    fn the_word_sieve_finds_the_level_sieves_losses() {
        // Every split of the work: one thread, one helper (plain writes),
        // two helpers (atomic writes); far stretches from bit 7 (most work
        // shared) up to none; both indices.
        let small = [(1, 1), (1, 6), (6, 1), (2, 2), (2, 9), (3, 3), (5, 5), (4, 7), (8, 8), (9, 11)];
        for (r, c) in small.into_iter().chain([(12, 12)]) {
            let ranking = Ranking::new(&Universe::boxed(r, c)).unwrap();
            let expected = level_losses(&ranking).unwrap();
            let (threads, fars) = if r < 12 { (&[1, 2, 3][..], &[7, 9, 12, 64][..]) } else { (&[2][..], &[7, 16][..]) };
            let parents = (r * c <= 40).then(|| parents_by_level(r, c, &ranking, &expected));
            for &threads in threads {
                for &far in fars {
                    for direct in [false, true] {
                        let got = box_losses_with(&ranking, threads, far, direct, &Progress::default()).unwrap();
                        let at = format!("{r}x{c} box, {threads} threads, far stretches from bit {far}, direct {direct}");
                        assert_eq!(got.ranks, expected, "{at}");
                        if let Some(parents) = &parents {
                            assert_eq!(&got.marks, parents, "{at}: the parents of the losses, by the losses' level");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_hand_off_survives_adversarial_interleavings() {
        // Many helpers on few cores, each hand-off point yielding the core at
        // random (docs in handoff.rs): a far mark read before it is written,
        // or a queue slot reused before it is read, would change the losses.
        super::super::handoff::chaos::ON.store(true, Ordering::Relaxed);
        for (r, c) in [(5, 5), (6, 8), (8, 8), (7, 10)] {
            let ranking = Ranking::new(&Universe::boxed(r, c)).unwrap();
            let expected = level_losses(&ranking).unwrap();
            for threads in [3, 5, 8] {
                for far in [7, 9] {
                    for direct in [false, true] {
                        let got = box_losses_with(&ranking, threads, far, direct, &Progress::default()).unwrap();
                        assert_eq!(got.ranks, expected, "{r}x{c} box, {threads} threads, far from bit {far}, direct {direct}");
                    }
                }
            }
        }
        super::super::handoff::chaos::ON.store(false, Ordering::Relaxed);
    }

    /// The parents of the losses `ranks` by the losses' level, by brute
    /// force: every bite of every position of the box (a one bit `s` above
    /// a zero bit `q` of its word), whose child (the stretch `q..=s`
    /// sorted, zeros first) is a loss.
    fn parents_by_level(r: u32, c: u32, ranking: &Ranking, ranks: &[Vec<u64>]) -> Vec<u64> {
        let bits = r + c;
        let losses: std::collections::HashSet<(u32, u64)> =
            ranks.iter().enumerate().flat_map(|(n, level)| level.iter().map(move |&rank| (n as u32, rank))).collect();
        let empty = (1u64 << c) - 1;
        let mut parents = vec![0u64; (r * c) as usize + 1];
        for w in (0..1u64 << bits).filter(|&w| w.count_ones() == c && w != empty) {
            for s in 0..bits {
                for q in (0..s).filter(|&q| w >> s & 1 == 1 && w >> q & 1 == 0) {
                    let stretch = ((1u64 << (s - q + 1)) - 1) << q;
                    let ones = (w & stretch).count_ones();
                    let child = (w & !stretch) | ((1u64 << ones) - 1) << q;
                    if child != empty {
                        let (n, rank) = word_level_rank(child, bits, ranking);
                        if losses.contains(&(n, rank)) {
                            parents[n as usize] += 1;
                        }
                    }
                }
            }
        }
        parents
    }

    #[test]
    fn the_ring_holds_every_near_parents_index() {
        // A near parent lies less than 2^far words above its loss: the
        // valid words in that window must fit the ring with a word to spare
        // (or the ring covers every index).
        for (r, c) in [(6, 8), (7, 9), (9, 11), (8, 5)] {
            let bits = r + c;
            let mut before = vec![0u64; (1 << bits) + 1];
            for w in 0..1u64 << bits {
                before[w as usize + 1] = before[w as usize] + (w.count_ones() == c) as u64;
            }
            for direct in [false, true] {
                let index = Index::new(bits, c, direct);
                assert!(direct || index.low < bits, "{r}x{c}: the compact index has high bits");
                for far in 7..=bits {
                    let (ring, bound) = (index.ring_bits(far), index.near_span(far));
                    for l in (0..1u64 << bits).filter(|w| w.count_ones() == c) {
                        let end = (l + (1 << far)).min(1 << bits) as usize;
                        let span = if direct { end as u64 - l - 1 } else { before[end] - before[l as usize + 1] };
                        assert!(span < bound, "{r}x{c}, far {far}, direct {direct}: {span} indices ahead, {bound} allowed");
                        assert!(
                            span + 64 <= ring || ring >= index.total,
                            "{r}x{c}, far {far}, direct {direct}: {span} indices ahead, a ring of {ring}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn for_words_touches_exactly_the_bits_of_a_range() {
        for start in 0..200u64 {
            for end in start + 1..start + 200 {
                let mut got = vec![0u64; 7];
                for_words(start, end, |k, mask| {
                    assert_eq!(got[k as usize] & mask, 0, "{start}..{end}: word {k} twice");
                    got[k as usize] |= mask;
                });
                let mut expected = vec![0u64; 7];
                for i in start..end {
                    expected[(i >> 6) as usize] |= 1 << (i & 63);
                }
                assert_eq!(got, expected, "{start}..{end}");
            }
        }
    }

    #[test]
    fn combinations_give_every_value_with_so_many_ones_once() {
        for len in 0..=20u32 {
            for ones in 0..=len + 1 {
                let mut got = Vec::new();
                let count = combinations(ones, len, |x| got.push(x));
                got.sort_unstable();
                let expected: Vec<u64> = (0..1u64 << len).filter(|x| x.count_ones() == ones).collect();
                assert_eq!(got, expected, "{ones} ones in {len} bits");
                assert_eq!(count, expected.len() as u64);
            }
        }
    }

    #[test]
    fn words_and_rows_agree() {
        // 3x3 box: the word of [2, 1] reads, from the bottom-left corner:
        // up (empty bottom row), right, up, right, up, right.
        let w = 0b010101;
        let mut rows = Vec::new();
        word_rows(w, 3, 3, &mut rows);
        assert_eq!(rows, vec![2, 1]);
        assert_eq!(word_tiles(w, 6), 3);
        let ranking = Ranking::new(&Universe::boxed(3, 3)).unwrap();
        for w in 0..1u64 << 6 {
            if w.count_ones() == 3 {
                word_rows(w, 3, 3, &mut rows);
                let tiles = rows.iter().map(|&x| x as u32).sum();
                assert_eq!(word_level_rank(w, 6, &ranking), (tiles, ranking.rank_rows(&rows)), "word {w:06b}");
            }
        }
        word_rows(0b111000, 3, 3, &mut rows);
        assert_eq!(rows, vec![3, 3, 3]);
        assert_eq!(word_tiles(0b111000, 6), 9);
    }
}
