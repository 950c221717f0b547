//! The sieve's tests: the exchange's framing, plain and shared marks,
//! thread views, and pushes against the parents found by every bite.

use super::parents::Sizes;
use super::*;
use crate::game::{Position, Universe};
use std::collections::BTreeSet;

/// The exchange's framing: every non-empty set comes back at its index
/// (empty ones as empty sets, none past the last non-empty one).
#[test]
fn gathered_sets_come_back_at_their_indices() {
    let set = |ranks: &[u64]| ranks.iter().copied().collect::<RoaringTreemap>();
    let mine = [set(&[0, 5, 1 << 40]), set(&[]), set(&[7]), set(&[3, (1 << 33) + 1]), set(&[])];
    let got = all_gather_sets(&crate::cluster::Solo, &mine);
    assert_eq!(got, mine[..4].to_vec());
    assert!(all_gather_sets(&crate::cluster::Solo, &[set(&[]), set(&[])]).is_empty());
}

/// Solves every level of `ranking` (`in_memory::sieve_levels`) on a
/// pool of `threads` threads with thread copies of at most `share` of
/// the marks: the losses, the most bytes the copies held, and whether
/// every level's first view marked without atomics.
fn solve_on(ranking: &Ranking, threads: usize, share: f64) -> (Vec<Vec<u64>>, u64, bool) {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
        let mut f = Frontier::new(ranking, 0, &crate::cluster::Solo, Holding::SOLO).unwrap();
        f.copy_share = share;
        let plain = f.stripes[0].parents(ranking, &f.by_suffix).views[0].iter().all(|o| o.is_plain());
        let mut copied = 0;
        let losses = super::super::in_memory::sieve_levels(ranking, f, |f| {
            copied = copied.max(f.stripes.iter().map(|s| bit_bytes(s.copies.iter().flatten())).sum::<u64>())
        })
        .unwrap();
        (losses, copied, plain)
    })
}

/// A pool of one thread marks with plain loads and stores; two threads
/// with atomic ORs, or in thread copies of the levels (some or all of
/// them) ORed together before the scan: the same losses every way (a
/// tile count, a box, a column bound).
#[test]
fn one_thread_or_thread_copies_find_the_losses_of_shared_atomics() {
    for u in [Universe::tiles(45), Universe::boxed(8, 11), Universe { rows: None, cols: Some(6), tiles: Some(40) }] {
        let ranking = Ranking::new(&u).unwrap();
        let (one, copied_1, plain_1) = solve_on(&ranking, 1, 1.0);
        assert!(plain_1 && copied_1 == 0, "{u:?}");
        assert!(one.iter().map(Vec::len).sum::<usize>() > 100, "{u:?}");
        let (shared, copied_0, plain_0) = solve_on(&ranking, 2, 0.0);
        assert!(!plain_0 && copied_0 == 0, "{u:?}");
        assert_eq!(one, shared, "{u:?}");
        let mut made = Vec::new();
        for share in [0.3, 4.0] {
            let (copies, copied, _) = solve_on(&ranking, 2, share);
            assert_eq!(one, copies, "{u:?} share {share}");
            made.push(copied);
        }
        assert!(0 < made[0] && made[0] < made[1], "{u:?}: copies of {made:?} bytes");
    }
}

/// Pushes every position of every level (as if each were a loss) with
/// the levels held whole, or cut in two shares, and checks the marks
/// against the parents found by trying every bite of every position:
/// the enumeration by rows, by columns, by blocks and by ranges at once.
/// A context whose marks depend on the thread (here plain marks, made
/// in a pool of one) refuses to mark from a thread outside that pool,
/// or from a worker of another pool; the same context marks on its
/// own worker.
#[test]
fn marks_through_thread_views_only_on_the_pool_they_were_made_for() {
    let ranking = Ranking::new(&Universe::tiles(20)).unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let f = one.install(|| Frontier::new(&ranking, 0, &crate::cluster::Solo, Holding::SOLO).unwrap());
    let ctx = one.install(|| f.stripes[0].parents(&ranking, &f.by_suffix));
    assert!(ctx.bound && ctx.views[0].iter().all(|o| o.is_plain()));
    let loss = ranking.unrank(2, 1).unwrap();
    let push = || {
        let mut scratch = PushScratch::<Plain>::new(ranking.max_tiles());
        ctx.push_parents(loss.rows(), 2, 1, Sizes::all(1, 18), &mut scratch);
        scratch.marker.flush();
    };
    let outside = std::panic::catch_unwind(std::panic::AssertUnwindSafe(push));
    assert!(outside.is_err(), "marked from a thread outside the pool");
    let other = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| two.install(push)));
    assert!(other.is_err(), "marked from another pool's worker");
    one.install(push);
}

/// Marks of a mode that does not fit the levels are refused: plain marks
/// into levels with second bits would drop the counts; counting marks
/// into levels without them would index bits that are not there.
#[test]
fn marks_count_if_and_only_if_the_levels_hold_second_bits() {
    let ranking = Ranking::new(&Universe::tiles(20)).unwrap();
    for count_moves in [false, true] {
        let f = Frontier::new(&ranking, 0, &crate::cluster::Solo, Holding { count_moves, ..Holding::SOLO }).unwrap();
        let ctx = f.stripes[0].parents(&ranking, &f.by_suffix);
        let plain = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ctx.check_mode::<Plain>()));
        let counting = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ctx.check_mode::<Counting>()));
        assert_eq!((plain.is_ok(), counting.is_ok()), (!count_moves, count_moves), "count_moves {count_moves}");
    }
}

#[test]
fn pushes_mark_exactly_the_parents() {
    // In a pool of one: the marks are plain, on the pool's worker.
    rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(pushes_mark_exactly_the_parents_here);
}

fn pushes_mark_exactly_the_parents_here() {
    let universes = [
        Universe::tiles(16),                                     // symmetric: canonical parents only
        Universe { rows: None, cols: Some(5), tiles: Some(15) }, // one plane, not symmetric
        Universe { rows: Some(4), cols: None, tiles: Some(15) }, // rows bounded: by rows only
        Universe::boxed(5, 6),
    ];
    for u in universes {
        let ranking = Ranking::new(&u).unwrap();
        let top = ranking.max_tiles();
        let by_suffix = BySuffix::new(&ranking);
        let positions: Vec<Vec<Position>> =
            (0..=top).map(|n| (0..ranking.size(n)).map(|r| ranking.unrank(n, r).unwrap()).collect()).collect();
        // Shares: every level whole; the second half of every level; or
        // (as a process sees the small levels of a box late in a run)
        // odd levels whole and nothing of the even ones; the second or
        // the last quarter of every level; its middle half (most top
        // rows strictly inside: parents owned without a test).
        for split in [0, 1, 2, 3, 4, 5] {
            for n in 1..top {
                for (lrank, l) in positions[n as usize].iter().enumerate() {
                    // Pushed as an unknown loss (a table read back), and as
                    // a scanned one or the conjugate of one.
                    let known =
                        if u.is_symmetric() && l.height() > l.width() { Losses::Conjugates { rows: l.height() } } else { Losses::Scanned };
                    // Runs marked by growths at every level at once, or level by level.
                    for (kind, by_levels_min) in [Losses::Any, known].into_iter().flat_map(|k| [(k, u64::MAX), (k, 0)]) {
                        // The shares: the first or the second half of every level.
                        let mut marks = Vec::new();
                        let mut base = Vec::new();
                        for m in 0..=top {
                            let size = ranking.size(m);
                            let (b, len) = match split {
                                0 => (0, size),
                                1 => (size / 2, size - size / 2),
                                3 => (size / 4, size / 2 - size / 4),
                                4 => (size - size / 4, size / 4),
                                5 => (size / 4, size - size / 4 - size / 4),
                                _ => {
                                    if m % 2 == 1 {
                                        (0, size)
                                    } else {
                                        (size, 0)
                                    }
                                }
                            };
                            marks.push((m > n).then(|| MappedBits::anonymous(len).unwrap()));
                            base.push(b);
                        }
                        let mut ctx = Parents::new(&ranking, &by_suffix, &marks, &[], &base, &[]);
                        ctx.by_levels_min = by_levels_min;
                        let whole =
                            (n + 1..=top).all(|m| base[m as usize] == 0 && marks[m as usize].as_ref().unwrap().len() == ranking.size(m));
                        assert_eq!(ctx.whole, whole, "{u:?} split {split}");
                        // Pushed as `push_decided` pushes it: only if a span of
                        // losses holds it, with that span's sizes.
                        let spans = ctx.loss_spans(n, 1, top - n);
                        let mut scratch = PushScratch::<Plain>::new(top);
                        if let Some(span) = spans.iter().find(|s| s.range.contains(&(lrank as u64))) {
                            let push = ctx.push_of(span, kind, n);
                            assert!(!whole || push == Push::Unranked);
                            ctx.push_loss(push, span, n, lrank as u64, &mut Vec::new(), &mut scratch);
                        }
                        scratch.marker.flush();
                        let mut got = BTreeSet::new();
                        for m in n + 1..=top {
                            let bits = marks[m as usize].as_ref().unwrap();
                            for i in 0..bits.len() {
                                if bits.get(i) {
                                    got.insert((m, i + base[m as usize]));
                                }
                            }
                            let owned = got.iter().filter(|&&(level, _)| level == m).count() as u64;
                            assert_eq!(scratch.counts[m as usize], owned, "{u:?} {l:?}: marks counted at level {m}");
                        }
                        let want: BTreeSet<(u32, u64)> = (n + 1..=top)
                            .flat_map(|m| positions[m as usize].iter().enumerate().map(move |(r, p)| (m, r as u64, p)))
                            .filter(|(m, r, p)| {
                                (!u.is_symmetric() || p.height() <= p.width())
                                    && *r >= base[*m as usize]
                                    && *r < base[*m as usize] + marks[*m as usize].as_ref().unwrap().len()
                                    && p.moves().iter().any(|(_, child)| child == l)
                            })
                            .map(|(m, r, _)| (m, r))
                            .collect();
                        assert_eq!(got, want, "{u:?}, split {split}, {kind:?}, runs by levels from {by_levels_min}: the parents of {l:?}");
                    }
                }
            }
        }
    }
}
