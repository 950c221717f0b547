//! n-dimensional Chomp and the divisor game: the solver against an
//! independent brute force (plain recursion over down-sets as bit masks, no
//! code shared with the solver), against the 2-D engine on rectangles,
//! against MacMahon's formula, and the `chomp nd` / `chomp divisors`
//! commands as a user runs them.

use chomp_tables::nd::table::NdTables;
use chomp_tables::nd::{solve, LossOracle, Method, NdError, NdRanking, Solution, MAX_POSITIONS};
use chomp_tables::solve::{self as job, Options, Plan};
use chomp_tables::store::manifest::SelfChecked;
use chomp_tables::{Outcome, Tables};
use chomp_tables::{Position, Universe};
use serde_json::Value;
use std::collections::HashMap;
use std::process::Output;

use crate::common::{assert_ok, assert_one_line_error, chomp};

// ---------------------------------------------------------------------------
// The brute force: a position is the set of its cells as a bit mask (cells
// numbered row-major over the whole box, last coordinate fastest); a move at
// cell c clears every cell >= c. Every nonempty down-set is reached from the
// full box, so the memo ends up holding every position of the box.

struct Brute {
    dims: Vec<u32>,
    /// `up[c]`: the cells >= c.
    up: Vec<u128>,
    /// Loss for the player to move, by mask.
    memo: HashMap<u128, bool>,
}

impl Brute {
    fn new(dims: &[u32]) -> Self {
        let cells: usize = dims.iter().map(|&d| d as usize).product();
        assert!(cells <= 128, "the brute force holds at most 128 cells");
        let coords: Vec<Vec<u32>> = (0..cells).map(|i| Self::coords(dims, i)).collect();
        let up = (0..cells)
            .map(|c| (0..cells).filter(|&d| coords[d].iter().zip(&coords[c]).all(|(a, b)| a >= b)).fold(0u128, |m, d| m | 1 << d))
            .collect();
        Brute { dims: dims.to_vec(), up, memo: HashMap::new() }
    }

    fn coords(dims: &[u32], mut i: usize) -> Vec<u32> {
        let mut c = vec![0; dims.len()];
        for a in (0..dims.len()).rev() {
            c[a] = (i % dims[a] as usize) as u32;
            i /= dims[a] as usize;
        }
        c
    }

    fn full(&self) -> u128 {
        let cells = self.up.len();
        if cells == 128 {
            u128::MAX
        } else {
            (1u128 << cells) - 1
        }
    }

    /// Whether the player to move loses; visits every child (no early stop),
    /// so that every position gets into the memo.
    fn loss(&mut self, mask: u128) -> bool {
        if let Some(&l) = self.memo.get(&mask) {
            return l;
        }
        let mut loss = true;
        for c in 1..self.up.len() {
            if mask >> c & 1 == 1 && self.loss(mask & !self.up[c]) {
                loss = false;
            }
        }
        self.memo.insert(mask, loss);
        loss
    }

    /// The winning cells of a position.
    fn winning(&mut self, mask: u128) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        for c in 1..self.up.len() {
            if mask >> c & 1 == 1 && self.loss(mask & !self.up[c]) {
                out.push(Self::coords(&self.dims, c));
            }
        }
        out
    }

    /// The heights along the last axis of a mask (the solver's form).
    fn heights(&self, mask: u128) -> Vec<u8> {
        let top = *self.dims.last().unwrap() as usize;
        let grid = self.up.len() / top;
        (0..grid).map(|g| (0..top).filter(|z| mask >> (g * top + z) & 1 == 1).count() as u8).collect()
    }
}

/// Solver and brute force agree on every position of a box; returns
/// (positions, losses). Both engines: [`solve`] (the sieve, sides reordered
/// largest first) and the search with the sides as given.
fn agree(dims: &[u32]) -> (u64, u64) {
    let mut b = Brute::new(dims);
    b.loss(b.full());
    let search = Solution::with_method(NdRanking::new(dims).unwrap(), Method::Search, |_| {});
    agree_with(&mut b, &search, dims);
    agree_with(&mut b, &solve(dims).unwrap(), dims)
}

fn agree_with(b: &mut Brute, s: &Solution, dims: &[u32]) -> (u64, u64) {
    let full = b.full();
    assert_eq!(b.memo.len() as u64, s.ranking().positions(), "{dims:?}: number of positions");
    let mut losses = 0;
    for (&mask, &loss) in &b.memo {
        let h = b.heights(mask);
        let want = if loss { Outcome::Loss } else { Outcome::Win };
        assert_eq!(s.outcome(&h), Some(want), "{dims:?}: position {h:?}");
        losses += loss as u64;
    }
    assert_eq!(losses, s.losses(), "{dims:?}");
    // The table ranks of the losses (translated back when the sides were reordered).
    let ranks: Vec<u64> = s.loss_ranks().collect();
    assert_eq!(ranks.len() as u64, losses);
    assert!(ranks.windows(2).all(|w| w[0] < w[1]));
    assert!(ranks.iter().all(|&k| s.outcome(&s.ranking().unrank(k).unwrap()) == Some(Outcome::Loss)));
    let h = b.heights(full);
    assert_eq!(s.winning_moves(&h), b.winning(full), "{dims:?}: winning first moves");
    (s.ranking().positions(), losses)
}

#[test]
fn brute_force_agrees_in_one_and_two_dimensions() {
    for dims in [vec![1], vec![2], vec![9], vec![1, 1], vec![1, 6], vec![6, 1], vec![2, 2], vec![3, 5], vec![5, 3], vec![6, 7], vec![8, 9]]
    {
        agree(&dims);
    }
}

#[test]
fn brute_force_agrees_in_three_dimensions() {
    assert_eq!(agree(&[2, 2, 2]), (19, 5));
    for dims in
        [[1, 1, 1], [1, 2, 3], [3, 1, 2], [2, 2, 3], [3, 3, 3], [2, 3, 4], [4, 3, 2], [3, 3, 4], [2, 5, 3], [3, 4, 5], [5, 4, 3], [4, 4, 4]]
    {
        agree(&dims);
    }
}

#[test]
fn brute_force_agrees_in_four_and_five_dimensions() {
    for dims in
        [vec![2, 2, 2, 2], vec![3, 2, 2, 2], vec![2, 2, 2, 3], vec![3, 3, 2, 2], vec![2, 3, 2, 3], vec![2, 1, 3, 2], vec![2, 2, 2, 2, 2]]
    {
        agree(&dims);
    }
}

#[test]
fn two_dimensions_agree_with_the_2d_engine() {
    for (r, c) in [(1, 1), (1, 7), (7, 1), (2, 9), (4, 4), (5, 8), (8, 5), (7, 7)] {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::new(Universe::boxed(r, c), 0);
        job::run(&plan, &Options::new(dir.path()), |_| {}).unwrap();
        let tables = Tables::open(dir.path()).unwrap();
        let s = solve(&[r, c]).unwrap();
        let ranking = s.ranking();
        for rank in 0..ranking.positions() {
            let h = ranking.unrank(rank).unwrap();
            let rows: Vec<u32> = h.iter().map(|&v| v as u32).filter(|&v| v > 0).collect();
            let p = Position::new(&rows).unwrap();
            assert_eq!(s.outcome(&h), Some(tables.outcome(&p).unwrap()), "{r}x{c} box, position {rows:?}");
        }
        let full = vec![c as u8; r as usize];
        let cells: Vec<Vec<u32>> =
            tables.winning_moves(&Position::new(&vec![c; r as usize]).unwrap()).unwrap().iter().map(|m| m.to_vec()).collect();
        assert_eq!(s.winning_moves(&full), cells, "{r}x{c}");
    }
}

/// MacMahon's count of plane partitions in an a × b × c box, the empty one
/// included: the product of (i+j+k−1)/(i+j+k−2), by prime exponents.
fn macmahon(a: u32, b: u32, c: u32) -> u128 {
    let mut exp = vec![0i64; (a + b + c) as usize + 1];
    let mut add = |mut n: u32, sign: i64| {
        let mut p = 2;
        while n > 1 {
            while n.is_multiple_of(p) {
                exp[p as usize] += sign;
                n /= p;
            }
            p += 1;
        }
    };
    for i in 1..=a {
        for j in 1..=b {
            for k in 1..=c {
                add(i + j + k - 1, 1);
                add(i + j + k - 2, -1);
            }
        }
    }
    exp.iter().enumerate().fold(1u128, |acc, (p, &e)| {
        assert!(e >= 0);
        acc * (p as u128).pow(e as u32)
    })
}

#[test]
fn three_dimensional_counts_follow_macmahon() {
    assert_eq!(macmahon(2, 2, 2), 20);
    assert_eq!(macmahon(5, 5, 5), 267_227_532);
    for a in 1..=6 {
        for b in 1..=6 {
            for c in 1..=6 {
                let want = macmahon(a, b, c) - 1;
                match NdRanking::new(&[a, b, c]) {
                    Ok(r) => assert_eq!(r.positions() as u128, want, "{a}x{b}x{c}"),
                    Err(NdError::TooLarge(_)) => assert!(want > MAX_POSITIONS as u128, "{a}x{b}x{c}: {want} positions refused"),
                    Err(e) => panic!("{a}x{b}x{c}: {e}"),
                }
            }
        }
    }
    assert_eq!(NdRanking::new(&[4, 4, 4]).unwrap().positions(), 232_847);
}

/// Every position the solver ranks, ranked back (rank and unrank are inverse).
#[test]
fn rank_and_unrank_are_inverse() {
    for dims in [vec![3, 3, 3], vec![2, 3, 2, 2], vec![7], vec![4, 6]] {
        let r = NdRanking::new(&dims).unwrap();
        for k in 0..r.positions() {
            assert_eq!(r.rank(&r.unrank(k).unwrap()), Some(k));
        }
        assert_eq!(r.unrank(r.positions()), None);
    }
}

// ---------------------------------------------------------------------------
// The divisor game by brute force on the numbers themselves.

/// (positions, losses, winning first numbers) of the divisor game on `n`:
/// a position is the set of divisors not yet removed (as a mask over the
/// sorted divisors); naming `d` removes `d` and its divisors.
fn divisor_brute(n: u64) -> (u64, u64, Vec<u64>) {
    let divs: Vec<u64> = (1..=n).filter(|d| n.is_multiple_of(*d)).collect();
    assert!(divs.len() <= 128);
    let last = divs.len() - 1; // n itself
    let removes: Vec<u128> =
        divs.iter().map(|&d| divs.iter().enumerate().filter(|(_, &e)| d % e == 0).fold(0u128, |m, (i, _)| m | 1 << i)).collect();
    fn loss(mask: u128, last: usize, removes: &[u128], memo: &mut HashMap<u128, bool>) -> bool {
        if let Some(&l) = memo.get(&mask) {
            return l;
        }
        let mut l = true;
        for (i, rm) in removes.iter().enumerate().take(last) {
            if mask >> i & 1 == 1 && loss(mask & !rm, last, removes, memo) {
                l = false;
            }
        }
        memo.insert(mask, l);
        l
    }
    let mut memo = HashMap::new();
    let full = if divs.len() == 128 { u128::MAX } else { (1u128 << divs.len()) - 1 };
    loss(full, last, &removes, &mut memo);
    let winning = (0..last).filter(|&i| loss(full & !removes[i], last, &removes, &mut memo)).map(|i| divs[i]).collect();
    (memo.len() as u64, memo.values().filter(|&&l| l).count() as u64, winning)
}

fn json_of(out: &Output) -> Value {
    assert_ok(out, "chomp");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn divisor_game_agrees_with_a_brute_force_on_the_numbers() {
    for n in [2u64, 4, 6, 12, 16, 18, 30, 36, 48, 60, 72, 90, 96, 120, 144, 180, 210, 240, 360] {
        let (positions, losses, winning) = divisor_brute(n);
        let v = json_of(&chomp(&["divisors", &n.to_string(), "--json"]));
        assert_eq!(v["n"], n, "{n}");
        assert_eq!(v["positions"], positions, "{n}");
        assert_eq!(v["losses"], losses, "{n}");
        assert_eq!(v["winning_moves"], serde_json::json!(winning), "{n}");
    }
}

#[test]
fn examples_of_the_issue() {
    let v = json_of(&chomp(&["nd", "--dims", "2,2,2", "--json"]));
    assert_eq!(v["dims"], serde_json::json!([2, 2, 2]));
    assert_eq!(v["positions"], 19);
    assert_eq!(v["losses"], 5);
    assert_eq!(v["winning_moves"], serde_json::json!([[1, 1, 1]]));
    let v = json_of(&chomp(&["divisors", "12", "--json"]));
    assert_eq!((v["n"].as_u64(), v["positions"].as_u64(), v["losses"].as_u64()), (Some(12), Some(9), Some(3)));
    assert_eq!(v["winning_moves"], serde_json::json!([1]));
    let v = json_of(&chomp(&["nd", "--dims", "4,4,4", "--json"]));
    assert_eq!(v["positions"], 232_847);
    // A prime: naming 1 leaves the poison alone.
    let v = json_of(&chomp(&["divisors", "18446744073709551557", "--json"]));
    assert_eq!((v["positions"].as_u64(), v["losses"].as_u64()), (Some(2), Some(1)));
    assert_eq!(v["winning_moves"], serde_json::json!([1]));
}

#[test]
fn positions_answer_like_the_brute_force() {
    let mut b = Brute::new(&[3, 3, 3]);
    b.loss(b.full());
    // "3 2 1 / 2 1 / 1": stacks (0,0) (0,1) (0,2) of heights 3 2 1, (1,0) (1,1) of 2 1, (2,0) of 1.
    let heights = [3u32, 2, 1, 2, 1, 0, 1, 0, 0];
    let mut mask = 0u128;
    for (g, &hgt) in heights.iter().enumerate() {
        for z in 0..hgt as usize {
            mask |= 1 << (g * 3 + z);
        }
    }
    let want_loss = b.loss(mask);
    let want_moves = b.winning(mask);
    let v = json_of(&chomp(&["nd", "--dims", "3,3,3", "--position", "3 2 1 / 2 1 / 1", "--json"]));
    assert_eq!(v["position"], "3 2 1 / 2 1 / 1");
    assert_eq!(v["cells"], 10);
    assert_eq!(v["outcome"], if want_loss { "loss" } else { "win" });
    assert_eq!(v["winning_moves"], serde_json::json!(want_moves));
    // The origin alone loses; in 4-D planes are separated by "//".
    let v = json_of(&chomp(&["nd", "--dims", "3,3,3", "--position", "1", "--json"]));
    assert_eq!((v["outcome"].as_str(), v["moves"].as_u64()), (Some("loss"), Some(0)));
    let v = json_of(&chomp(&["nd", "--dims", "2,2,2,2", "--position", "2 2 / 2 1 // 1", "--json"]));
    assert_eq!(v["cells"], 8);
}

#[test]
fn tables_are_written_read_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t333");
    let o = out.to_str().unwrap();
    let solved = json_of(&chomp(&["nd", "--dims", "3,3,3", "--out", o, "--json"]));
    let read = json_of(&chomp(&["nd", "--tables", o, "--json"]));
    for key in ["dims", "positions", "losses", "winning_moves"] {
        assert_eq!(solved[key], read[key], "{key}");
    }
    let verified = chomp(&["nd", "--tables", o, "--verify"]);
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
    assert!(String::from_utf8_lossy(&verified.stdout).starts_with("ok: 3x3x3 box, 979 positions"));
    let a = json_of(&chomp(&["nd", "--tables", o, "--position", "3 3 / 3 1 / 2", "--json"]));
    let b = json_of(&chomp(&["nd", "--dims", "3,3,3", "--position", "3 3 / 3 1 / 2", "--json"]));
    assert_eq!(a, b);
    // Every position of the tables agrees with the brute force.
    let t = NdTables::open(&out).unwrap();
    let mut brute = Brute::new(&[3, 3, 3]);
    brute.loss(brute.full());
    for (&mask, &loss) in &brute.memo {
        assert_eq!(t.outcome(&brute.heights(mask)), Some(if loss { Outcome::Loss } else { Outcome::Win }));
    }
    // Another box's dims are refused; a damaged table is refused by every reader.
    assert_one_line_error(&chomp(&["nd", "--tables", o, "--dims", "2,2,2"]), "dims differ");
    assert_one_line_error(&chomp(&["nd", "--dims", "2,2,2", "--out", o]), "directory of another box");
    let table = out.join("losses.cht");
    let mut bytes = std::fs::read(&table).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let e = assert_one_line_error(&chomp(&["nd", "--tables", o, "--verify"]), "damaged table");
    assert!(e.contains("losses.cht"), "{e}");
    assert_one_line_error(&chomp(&["nd", "--tables", o, "--json"]), "damaged table");
    assert_one_line_error(&chomp(&["nd", "--tables", dir.path().join("missing").to_str().unwrap()]), "missing directory");
    // A box above 2^20 positions is verified on samples.
    let out = dir.path().join("t445");
    let verified = chomp(&["nd", "--dims", "4,4,5", "--out", out.to_str().unwrap(), "--verify", "--samples", "300"]);
    let text = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success() && text.starts_with("ok: 4x4x5 box, 1646567 positions"), "{verified:?}");
    assert!(text.contains("600 positions checked"), "{text}");
    // A box solved with its sides reordered (largest first) writes the tables of the box as given.
    let out = dir.path().join("t234");
    let o = out.to_str().unwrap();
    let verified = chomp(&["nd", "--dims", "2,3,4", "--out", o, "--verify"]);
    assert!(String::from_utf8_lossy(&verified.stdout).starts_with("ok: 2x3x4 box"), "{verified:?}");
    let t = NdTables::open(&out).unwrap();
    let mut brute = Brute::new(&[2, 3, 4]);
    brute.loss(brute.full());
    for (&mask, &loss) in &brute.memo {
        assert_eq!(t.outcome(&brute.heights(mask)), Some(if loss { Outcome::Loss } else { Outcome::Win }));
    }
}

#[test]
fn bad_input_is_one_error_line() {
    for (args, what) in [
        (vec!["divisors", "0"], "N = 0"),
        (vec!["divisors", "1"], "N = 1"),
        (vec!["divisors", "abc"], "not a number"),
        (vec!["divisors", "-12"], "negative"),
        (vec!["divisors", "18446744073709551616"], "beyond 64 bits"),
        (vec!["divisors", "614889782588491410"], "the product of the first 15 primes: a box too large"),
        (vec!["divisors", "232792560"], "2^4·3^2·5·7·11·13·17·19: a box too large"),
        (vec!["nd", "--dims", "0,3"], "a side 0"),
        (vec!["nd", "--dims", ""], "no sides"),
        (vec!["nd", "--dims", "3,,3"], "an empty side"),
        (vec!["nd", "--dims", "3,x"], "not a number"),
        (vec!["nd", "--dims", "300"], "a side beyond 255"),
        (vec!["nd", "--dims", "6,6,6"], "too many positions"),
        (vec!["nd", "--dims", "2,2,2,2,2,2,2,2"], "too many positions"),
        (vec!["nd"], "no box"),
        (vec!["nd", "--dims", "3,3,3", "--position", "1 2"], "not closed downwards"),
        (vec!["nd", "--dims", "3,3,3", "--position", "4"], "too high"),
        (vec!["nd", "--dims", "3,3,3", "--position", "0"], "no origin"),
        (vec!["nd", "--dims", "3,3,3", "--position", "1 // 1"], "too many slashes"),
        (vec!["nd", "--dims", "3,3,3", "--position", "1 1 1 1"], "too many heights"),
        (vec!["nd", "--dims", "3,3,3", "--verify"], "nothing to verify"),
    ] {
        let line = assert_one_line_error(&chomp(&args), what);
        assert!(line.len() < 300, "{what}: {line}");
    }
    let e = assert_one_line_error(&chomp(&["divisors", "614889782588491410"]), "too large");
    assert!(e.contains("4294967295"), "the limit is named: {e}");
}

/// Tables whose checksums are all right but whose content is wrong (a loss
/// left out, the manifest rewritten to match) fail the game check.
#[test]
fn wrong_tables_with_good_checksums_fail_verification() {
    use chomp_tables::nd::table::{encode_losses, NdManifest, LOSSES_FILE, MANIFEST};
    use chomp_tables::store::FileEntry;
    let dir = tempfile::tempdir().unwrap();
    let s = solve(&[3, 3, 3]).unwrap();
    let mut m = chomp_tables::nd::table::write_tables(dir.path(), &s).unwrap();
    // Drop a loss of three cells and fix every checksum.
    let ranks: Vec<u64> = s.loss_ranks().collect();
    let dropped = ranks.iter().copied().find(|&k| s.ranking().unrank(k).unwrap().iter().map(|&v| v as u32).sum::<u32>() == 3).unwrap();
    let table = encode_losses(&m.dims, m.positions, ranks.iter().copied().filter(|&k| k != dropped));
    std::fs::write(dir.path().join(LOSSES_FILE), &table).unwrap();
    m.losses -= 1;
    m.levels[2].losses -= 1;
    m.files.insert(LOSSES_FILE.into(), FileEntry::of(&table));
    std::fs::write(dir.path().join(MANIFEST), m.seal()).unwrap();
    assert_eq!(NdManifest::read(dir.path()).unwrap(), m);
    let out = chomp(&["nd", "--tables", dir.path().to_str().unwrap(), "--verify"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("FAILED"), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().all(|l| l.starts_with("FAIL ")) && stderr.contains("marked a win but has no winning move"), "{stderr}");
}
