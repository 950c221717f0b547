//! Gathers of any size, in pieces of bounded size.
//!
//! MPI counts and displacements are C `int`s: one `MPI_Allgatherv` can
//! move at most 2 GiB in all. A level's gathered losses pass that around
//! 158 tiles. So every gather goes in rounds: in round `r` each process
//! sends bytes `r·piece .. (r+1)·piece` of its message (fewer, or none,
//! once its message is sent), and every process appends what it receives
//! to each sender's message. A round moves at most `processes · piece`
//! bytes, and `piece` is capped so that this fits an `int`: no count or
//! displacement of any call can overflow, whatever the messages' sizes.
//!
//! The piece size is an argument of the transport ([`super::Comm::piece_bytes`]):
//! the binary passes `CHOMP_COLLECTIVE_BYTES` (a tunable, part of the run's
//! identity) or [`PIECE_BYTES`], capped by [`piece_bytes`]. Tests set it
//! small so that the many-piece path runs at small sizes.

/// The default most bytes one process sends in one collective call.
pub const PIECE_BYTES: usize = 256 << 20;

/// The most bytes one process sends per collective call among `processes`
/// when `wanted` are asked for, capped so that one round of every
/// process's piece stays below 2³¹ bytes.
pub fn piece_bytes(wanted: u64, processes: usize) -> usize {
    let cap = i32::MAX as usize / processes.max(1);
    usize::try_from(wanted).unwrap_or(usize::MAX).clamp(1, cap)
}

/// Every process's message, gathered in rounds of at most `piece` bytes
/// per process. `lens` gathers one `u64` from every process (the lengths,
/// so that every process knows the rounds); `round` gathers one round:
/// this process's piece and every process's piece length, in process
/// order, returning the pieces concatenated.
///
/// Every process calls `lens` once and `round` the same number of times
/// (`⌈longest message / piece⌉`, computed from the same lengths): the
/// collectives' order is the same on every process.
pub fn gather_in_pieces(
    mine: &[u8],
    piece: usize,
    lens: impl FnOnce(u64) -> Vec<u64>,
    mut round: impl FnMut(&[u8], &[usize]) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    assert!(piece > 0, "a piece holds at least one byte");
    let lens: Vec<usize> = lens(mine.len() as u64).into_iter().map(|l| usize::try_from(l).expect("a message fits in memory")).collect();
    let longest = lens.iter().copied().max().unwrap_or(0);
    let mut out: Vec<Vec<u8>> = lens.iter().map(|&l| Vec::with_capacity(l)).collect();
    let mut at = 0;
    while at < longest {
        let counts: Vec<usize> = lens.iter().map(|&l| l.saturating_sub(at).min(piece)).collect();
        let got = round(&mine[at.min(mine.len())..(at + piece).min(mine.len())], &counts);
        assert_eq!(got.len(), counts.iter().sum::<usize>(), "a round returns every piece");
        let mut from = 0;
        for (o, &c) in out.iter_mut().zip(&counts) {
            o.extend_from_slice(&got[from..from + c]);
            from += c;
        }
        at += piece;
    }
    debug_assert!(out.iter().zip(&lens).all(|(o, &l)| o.len() == l));
    out
}

/// The displacements of `counts` as MPI's `int`s, checked: the sum of a
/// round's counts must fit (it does when every count is at most
/// [`piece_bytes`]).
///
/// # Panics
/// If a count or a displacement does not fit an `i32`.
pub fn int_counts_and_displacements(counts: &[usize]) -> (Vec<i32>, Vec<i32>) {
    let mut displs = Vec::with_capacity(counts.len());
    let mut at: i64 = 0;
    for &c in counts {
        displs.push(i32::try_from(at).expect("a round of pieces stays below 2 GiB"));
        at += c as i64;
    }
    i32::try_from(at).expect("a round of pieces stays below 2 GiB");
    (counts.iter().map(|&c| i32::try_from(c).expect("a piece stays below 2 GiB")).collect(), displs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gathers `messages` (one per process) as every process would, with a
    /// fake exchange that sees every process's call of the same round.
    fn gather_all(messages: &[Vec<u8>], piece: usize) -> (Vec<Vec<Vec<u8>>>, usize) {
        let lens: Vec<u64> = messages.iter().map(|m| m.len() as u64).collect();
        let mut rounds = 0;
        let outs = (0..messages.len())
            .map(|p| {
                let mut r = 0;
                let got = gather_in_pieces(
                    &messages[p],
                    piece,
                    |len| {
                        assert_eq!(len, lens[p]);
                        lens.clone()
                    },
                    |mine, counts| {
                        // What each process sends in round r.
                        let at = r * piece;
                        r += 1;
                        let mut all = Vec::new();
                        for (q, m) in messages.iter().enumerate() {
                            let part = &m[at.min(m.len())..(at + piece).min(m.len())];
                            assert_eq!(part.len(), counts[q]);
                            if q == p {
                                assert_eq!(part, mine);
                            }
                            all.extend_from_slice(part);
                        }
                        all
                    },
                );
                rounds = r;
                got
            })
            .collect();
        (outs, rounds)
    }

    #[test]
    fn pieces_rebuild_every_message_in_the_fewest_rounds() {
        let messages: Vec<Vec<u8>> =
            vec![(0..1000).map(|i| i as u8).collect(), vec![], (0..37).map(|i| 255 - i as u8).collect(), vec![7; 64]];
        for piece in [1, 7, 64, 999, 1000, 1 << 20] {
            let (outs, rounds) = gather_all(&messages, piece);
            assert_eq!(rounds, 1000usize.div_ceil(piece), "piece {piece}");
            for out in outs {
                assert_eq!(out, messages, "piece {piece}");
            }
        }
        let (outs, rounds) = gather_all(&[vec![], vec![]], 5);
        assert_eq!((rounds, outs), (0, vec![vec![vec![], vec![]]; 2]));
    }

    #[test]
    fn displacements_are_checked_not_wrapped() {
        assert_eq!(int_counts_and_displacements(&[3, 0, 5]), (vec![3, 0, 5], vec![0, 3, 3]));
        let max = i32::MAX as usize;
        assert!(std::panic::catch_unwind(|| int_counts_and_displacements(&[max, 1])).is_err());
        assert!(std::panic::catch_unwind(|| int_counts_and_displacements(&[max / 2 + 1, max / 2 + 1])).is_err());
        // 4 processes' pieces never overflow a round.
        let piece = i32::MAX as usize / 4;
        let (_, displs) = int_counts_and_displacements(&[piece; 4]);
        assert_eq!(displs[3] as usize, 3 * piece);
    }
}
