//! Closed forms (`docs/math.md`) for Grundy values of special positions:
//! single rows, hooks and two-row positions. Tested against the engine.

/// Misère Grundy value of the single row of `n ≥ 1` tiles: `n − 1`.
pub fn single_row(n: u32) -> u32 {
    n - 1
}

/// Misère Grundy value of the hook `(a, 1^(b−1))`: a top row of `a` tiles and
/// a first column of `b` tiles (`a, b ≥ 1`): `(a − 1) XOR (b − 1)`.
pub fn hook(a: u32, b: u32) -> u32 {
    (a - 1) ^ (b - 1)
}

/// Misère Grundy value of the two-row position with top row `n ≥ 1` and
/// second row `m` (`0 ≤ m ≤ n`; `m = 0` is the single row).
pub fn two_rows(n: u32, m: u32) -> u32 {
    assert!(n >= 1 && m <= n, "two_rows needs 0 <= m <= n, n >= 1");
    let k = if n.is_multiple_of(2) { (n - 2) / 2 } else { (n - 1) / 2 };
    // Whether the (n, m) parities put the position on the "2k + a + 1" branch.
    let rising = n.is_multiple_of(2) == m.is_multiple_of(2);
    let a = m / 2; // m/2 for even m, (m-1)/2 for odd m
    if rising {
        2 * k + a + 1
    } else if 2 * a <= k {
        2 * k - a
    } else {
        3 * (k - a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_from_the_rules() {
        assert_eq!(two_rows(1, 0), 0); // the poison alone
        assert_eq!(two_rows(2, 1), 0); // (a, a-1) is a loss
        assert_eq!(two_rows(5, 4), 0);
        assert_eq!(two_rows(7, 0), single_row(7));
        assert_eq!(hook(3, 1), single_row(3));
        assert_eq!(hook(4, 4), 0);
    }
}
