//! The divisor game: players name divisors of `N` in turn; naming `d`
//! removes `d` and all its divisors; whoever must name `N` loses.
//!
//! With `N = p1^e1 · … · pk^ek` (primes increasing) it is Chomp in the box
//! `(e1+1) × … × (ek+1)`: cell `(c1, …, ck)` stands for
//! `N / (p1^c1 · … · pk^ck)`, so the origin is `N` (the poison) and the cells
//! `≥ c` are the divisors of the number of `c`.

use super::NdError;

/// A number `N ≥ 2` and its factorisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DivisorGame {
    /// The number.
    pub n: u64,
    /// Its prime factors, increasing, with their exponents.
    pub factors: Vec<(u64, u32)>,
}

impl DivisorGame {
    /// Parses `N` (decimal digits, at least 2, at most 2^64 − 1).
    ///
    /// # Errors
    /// [`NdError::Number`] naming the fault.
    pub fn parse(text: &str) -> Result<Self, NdError> {
        let bad = |why: &str| NdError::Number { text: text.to_string(), why: why.to_string() };
        let t = text.trim();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("not a whole number (write N in decimal digits, e.g. 72)"));
        }
        let n: u64 = t.parse().map_err(|_| bad("larger than 18446744073709551615 (2^64 - 1), the largest N supported"))?;
        Self::new(n).map_err(|e| match e {
            NdError::Number { why, .. } => NdError::Number { text: text.to_string(), why },
            other => other,
        })
    }

    /// The game on `n`.
    ///
    /// # Errors
    /// [`NdError::Number`] for 0 and 1.
    pub fn new(n: u64) -> Result<Self, NdError> {
        let bad = |why: &str| NdError::Number { text: n.to_string(), why: why.to_string() };
        match n {
            0 => Err(bad("0 has infinitely many divisors; N must be at least 2")),
            1 => Err(bad("1 has no divisor but itself, so there is no game; N must be at least 2")),
            _ => Ok(DivisorGame { n, factors: factorise(n) }),
        }
    }

    /// The sides of the box: `e_i + 1`.
    pub fn dims(&self) -> Vec<u32> {
        self.factors.iter().map(|&(_, e)| e + 1).collect()
    }

    /// The number a cell stands for.
    pub fn number(&self, cell: &[u32]) -> u64 {
        self.factors.iter().zip(cell).fold(self.n, |n, (&(p, _), &c)| n / p.pow(c))
    }

    /// The cell of a divisor of `N`, or `None` for a number that does not divide `N`.
    pub fn cell(&self, d: u64) -> Option<Vec<u32>> {
        if d == 0 || !self.n.is_multiple_of(d) {
            return None;
        }
        Some(
            self.factors
                .iter()
                .map(|&(p, e)| {
                    let mut v = 0;
                    let mut x = d;
                    while x.is_multiple_of(p) {
                        x /= p;
                        v += 1;
                    }
                    e - v
                })
                .collect(),
        )
    }

    /// `2^3 · 3^2` for 72.
    pub fn factorisation_text(&self) -> String {
        self.factors.iter().map(|&(p, e)| if e == 1 { p.to_string() } else { format!("{p}^{e}") }).collect::<Vec<_>>().join(" · ")
    }
}

/// Prime factorisation of `n ≥ 1`, primes increasing (trial division by
/// small primes, then Miller–Rabin and Pollard's rho).
pub fn factorise(mut n: u64) -> Vec<(u64, u32)> {
    let mut primes: Vec<u64> = Vec::new();
    for p in 2..1000u64 {
        if p * p > n {
            break;
        }
        while n.is_multiple_of(p) {
            primes.push(p);
            n /= p;
        }
    }
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x == 1 {
            continue;
        }
        if is_prime(x) {
            primes.push(x);
            continue;
        }
        let d = rho(x);
        stack.push(d);
        stack.push(x / d);
    }
    primes.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::new();
    for p in primes {
        match out.last_mut() {
            Some((q, e)) if *q == p => *e += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

fn pow_mod(mut a: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1 % m;
    a %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, a, m);
        }
        a = mul_mod(a, a, m);
        e >>= 1;
    }
    r
}

/// Deterministic Miller–Rabin for 64-bit numbers.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A nontrivial factor of an odd composite `n` (Pollard's rho, Floyd cycles).
fn rho(n: u64) -> u64 {
    if n.is_multiple_of(2) {
        return 2;
    }
    for c in 1u64.. {
        let f = |x: u64| (mul_mod(x, x, n) + c) % n;
        let (mut x, mut y, mut d) = (2u64, 2u64, 1u64);
        while d == 1 {
            x = f(x);
            y = f(f(y));
            d = gcd(x.abs_diff(y), n);
        }
        if d != n {
            return d;
        }
    }
    unreachable!("rho finds a factor of every odd composite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factorisations() {
        assert_eq!(factorise(72), vec![(2, 3), (3, 2)]);
        assert_eq!(factorise(2), vec![(2, 1)]);
        assert_eq!(factorise(1 << 63), vec![(2, 63)]);
        assert_eq!(factorise(u64::MAX), vec![(3, 1), (5, 1), (17, 1), (257, 1), (641, 1), (65537, 1), (6_700_417, 1)]);
        assert_eq!(factorise(18_446_744_073_709_551_557), vec![(18_446_744_073_709_551_557, 1)]); // largest 64-bit prime
        assert_eq!(factorise(4_294_967_291 * 4_294_967_279), vec![(4_294_967_279, 1), (4_294_967_291, 1)]);
        for n in 2..3000u64 {
            let f = factorise(n);
            assert_eq!(f.iter().fold(1, |a, &(p, e)| a * p.pow(e)), n);
            assert!(f.iter().all(|&(p, _)| is_prime(p)));
        }
    }

    #[test]
    fn cells_and_numbers() {
        let g = DivisorGame::new(72).unwrap();
        assert_eq!(g.dims(), vec![4, 3]);
        assert_eq!(g.number(&[0, 0]), 72);
        assert_eq!(g.number(&[3, 2]), 1);
        assert_eq!(g.number(&[1, 2]), 4);
        assert_eq!(g.cell(4), Some(vec![1, 2]));
        assert_eq!(g.cell(5), None);
        assert_eq!(g.factorisation_text(), "2^3 · 3^2");
        assert!(DivisorGame::parse("0").is_err());
        assert!(DivisorGame::parse("1").is_err());
        assert!(DivisorGame::parse("abc").is_err());
        assert!(DivisorGame::parse("-5").is_err());
        assert!(DivisorGame::parse("18446744073709551616").is_err());
    }
}
