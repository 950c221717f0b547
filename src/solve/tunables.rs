//! The engine's tunables: the `CHOMP_*` environment variables that change
//! how (never what) the engine computes, for tests, measurements and tuning.
//!
//! They are read once per process, here, the first time any is needed
//! ([`get`]); a run checks them first ([`check_env`]: a value that does not
//! parse, or a `CHOMP_*` name that is none of them, is an error before
//! anything is computed), and MPI processes compare them (every tunable is
//! part of the run's identity, `super::identity`): some change a
//! level's windows or epochs, hence the order of the collectives, and
//! processes with different values would wait forever at different
//! barriers. docs/architecture.md lists them.

use std::sync::OnceLock;

/// Every tunable, with its value in this process (the default when unset).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Tunables {
    /// `CHOMP_PARALLEL_PARENTS`: a loss with more parents than this has
    /// them marked by every thread together.
    pub parallel_parents: u64,
    /// `CHOMP_COPY_SHARE`: the most that thread copies of the next levels'
    /// mark bits may hold, as a share of the bytes of the marks held.
    pub copy_share: f64,
    /// `CHOMP_EPOCH_BYTES`: boxes whose mark bits exceed this are sieved in
    /// two epochs.
    pub epoch_bytes: u64,
    /// `CHOMP_WORD_SIEVE`: `false` (the value `0`) turns the word sieve of
    /// boxes off, to compare with the level sieve.
    pub word_sieve: bool,
    /// `CHOMP_WORDS_DIRECT`: boxes of at most this many bits index their
    /// words directly.
    pub words_direct: u32,
    /// `CHOMP_WORDS_LOW`: the low bits ranked by one look-up in the word
    /// sieve's compact index (unset: chosen from the box).
    pub words_low: Option<u32>,
    /// `CHOMP_WORDS_FAR`: the word sieve's stretches whose top bit is at
    /// least this go to the helper threads (unset: chosen from the box).
    pub words_far: Option<u32>,
    /// `CHOMP_COLLECTIVE_BYTES`: the most bytes one process sends in one
    /// collective call; larger gathers go in pieces (unset:
    /// [`crate::cluster::PIECE_BYTES`]). Small values run the many-piece
    /// path in tests.
    pub collective_bytes: Option<u64>,
    /// `CHOMP_CHECK_COLLECTIVES`: `true` (the value `1`) checks before
    /// every collective that every process calls the same one from the
    /// same place, and stops the run with one line naming the first
    /// divergence ([`crate::cluster::Ordered`]).
    pub check_collectives: bool,
    /// `CHOMP_TEST_PANIC=PROCESS:LEVEL`: that process panics as that level
    /// starts (a test of the path that ends the whole job on one failure).
    pub test_panic: Option<(usize, u32)>,
    /// `CHOMP_TEST_ERROR=PROCESS:LEVEL`: that process stops with an error
    /// as that level starts (the same, for a returned error).
    pub test_error: Option<(usize, u32)>,
    /// `CHOMP_TEST_NODE_PROCESSES=N`: MPI processes are grouped as nodes
    /// of `N` consecutive processes instead of by the machine they run on
    /// (a rehearsal of several nodes on one machine: each group shares its
    /// own node-local scratch and Grundy files, and its first process
    /// joins the leaders' collectives).
    pub test_node_processes: Option<usize>,
}

/// A loss whose run (or, in a box, new rows below it) leads to at least
/// this many parents pushes them from every thread (the environment
/// variable `CHOMP_PARALLEL_PARENTS` overrides it, for tests): the L shape
/// `[c, c − 1]` of a box, the hook with equal arms `[a, 1^(a−1)]` of a tile
/// count (its arm's growths fill an `(a − 1)`-square: on one thread it held
/// up its level, see docs/performance.md, section "The level sieve"). New rows
/// below a loss are estimated in boxes only: where rows are unbounded the
/// estimate (one partition count per pending level, for every loss) would
/// cost more than it saves.
pub const PARALLEL_PARENTS: u64 = 1 << 18;

/// Thread copies of the mark bits of the next pending levels may hold at
/// most this share of the bytes of the marks held (the environment
/// variable `CHOMP_COPY_SHARE` overrides it, for tests and measurements).
pub const COPY_SHARE: f64 = 0.75;

/// Boxes whose mark bits exceed this are sieved in two epochs (the
/// environment variable `CHOMP_EPOCH_BYTES` overrides it, for tests).
pub const EPOCH_BYTES: u64 = 256 << 20;

/// Boxes of at most this many `rows + cols` index their bit set by the
/// word itself (`2^bits` bits: 8 MiB at 13×13), sparing the index's
/// look-ups; larger ones use the compact index, whose bits fit the caches
/// better (14×14: 5 MiB instead of 32). The environment variable
/// `CHOMP_WORDS_DIRECT` overrides it (tests, tuning).
pub const DIRECT_BITS: u32 = 26;

/// The defaults (what every published table was computed with); the
/// measurements behind them are in docs/performance.md.
pub const DEFAULT: Tunables = Tunables {
    parallel_parents: PARALLEL_PARENTS,
    copy_share: COPY_SHARE,
    epoch_bytes: EPOCH_BYTES,
    word_sieve: true,
    words_direct: DIRECT_BITS,
    words_low: None,
    words_far: None,
    collective_bytes: None,
    check_collectives: false,
    test_panic: None,
    test_error: None,
    test_node_processes: None,
};

/// The names a run accepts; `CHOMP_LOG` (the server's log filter) is not a tunable.
pub const NAMES: [&str; 12] = [
    "CHOMP_PARALLEL_PARENTS",
    "CHOMP_COPY_SHARE",
    "CHOMP_EPOCH_BYTES",
    "CHOMP_WORD_SIEVE",
    "CHOMP_WORDS_DIRECT",
    "CHOMP_WORDS_LOW",
    "CHOMP_WORDS_FAR",
    "CHOMP_COLLECTIVE_BYTES",
    "CHOMP_CHECK_COLLECTIVES",
    "CHOMP_TEST_PANIC",
    "CHOMP_TEST_ERROR",
    "CHOMP_TEST_NODE_PROCESSES",
];

/// Other `CHOMP_*` variables, read elsewhere, that are not tunables: the
/// server's log filter and the interval of progress lines.
const NOT_TUNABLES: [&str; 2] = ["CHOMP_LOG", PROGRESS_SECONDS];

/// The interval of progress lines of long commands on standard error
/// (seconds; a display setting, not a tunable: nothing computed depends on it).
pub const PROGRESS_SECONDS: &str = "CHOMP_PROGRESS_SECONDS";

impl Tunables {
    /// Reads the variables from `var` (name → value, `None` when unset).
    ///
    /// # Errors
    /// The first value that does not parse, as a one-line message.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        fn parse<T: std::str::FromStr>(
            var: &impl Fn(&str) -> Option<String>,
            name: &str,
            ok: impl Fn(&T) -> bool,
        ) -> Result<Option<T>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<T>() {
                    Ok(x) if ok(&x) => Ok(Some(x)),
                    _ => Err(format!("{name}={v:?}: not a valid value (see docs/architecture.md, \"Tunables\"; unset it for the default)")),
                },
            }
        }
        /// A switch: `0` (off) or `1` (on), `unset` when not set.
        fn switch(var: &impl Fn(&str) -> Option<String>, name: &str, unset: bool) -> Result<bool, String> {
            match var(name).as_deref().map(str::trim) {
                None => Ok(unset),
                Some("0") => Ok(false),
                Some("1") => Ok(true),
                Some(v) => Err(format!("{name}={v:?}: use 0 (off) or 1 (on)")),
            }
        }
        /// `PROCESS:LEVEL`, e.g. `1:40`.
        fn at(var: &impl Fn(&str) -> Option<String>, name: &str) -> Result<Option<(usize, u32)>, String> {
            let Some(v) = var(name) else { return Ok(None) };
            let parsed = v.trim().split_once(':').and_then(|(p, n)| Some((p.trim().parse().ok()?, n.trim().parse().ok()?)));
            match parsed {
                Some((p, n)) if n > 0 => Ok(Some((p, n))),
                _ => Err(format!("{name}={v:?}: use PROCESS:LEVEL, e.g. 1:40 (process 1 at the start of level 40)")),
            }
        }
        Ok(Tunables {
            parallel_parents: parse(&var, "CHOMP_PARALLEL_PARENTS", |&x: &u64| x > 0)?.unwrap_or(DEFAULT.parallel_parents),
            copy_share: parse(&var, "CHOMP_COPY_SHARE", |&x: &f64| (0.0..=16.0).contains(&x))?.unwrap_or(DEFAULT.copy_share),
            epoch_bytes: parse(&var, "CHOMP_EPOCH_BYTES", |&x: &u64| x > 0)?.unwrap_or(DEFAULT.epoch_bytes),
            word_sieve: switch(&var, "CHOMP_WORD_SIEVE", DEFAULT.word_sieve)?,
            words_direct: parse(&var, "CHOMP_WORDS_DIRECT", |&x: &u32| x <= 64)?.unwrap_or(DEFAULT.words_direct),
            words_low: parse(&var, "CHOMP_WORDS_LOW", |&x: &u32| (1..=16).contains(&x))?,
            words_far: parse(&var, "CHOMP_WORDS_FAR", |&x: &u32| x <= 64)?,
            collective_bytes: parse(&var, "CHOMP_COLLECTIVE_BYTES", |&x: &u64| x > 0)?,
            check_collectives: switch(&var, "CHOMP_CHECK_COLLECTIVES", DEFAULT.check_collectives)?,
            test_panic: at(&var, "CHOMP_TEST_PANIC")?,
            test_error: at(&var, "CHOMP_TEST_ERROR")?,
            test_node_processes: parse(&var, "CHOMP_TEST_NODE_PROCESSES", |&x: &usize| x > 0)?,
        })
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Checks the environment's `CHOMP_*` variables: every one a tunable (or
/// one of the others: `CHOMP_LOG`, `CHOMP_PROGRESS_SECONDS`), every value
/// valid.
///
/// # Errors
/// A one-line message naming the variable.
pub fn check_env() -> Result<(), String> {
    for (name, _) in std::env::vars() {
        if name.starts_with("CHOMP_") && !NAMES.contains(&name.as_str()) && !NOT_TUNABLES.contains(&name.as_str()) {
            return Err(format!("{name}: not a variable chomp knows (its tunables: {})", NAMES.join(", ")));
        }
    }
    if let Some(v) = env(PROGRESS_SECONDS) {
        if progress_seconds(&v).is_none() {
            return Err(format!("{PROGRESS_SECONDS}={v:?}: not a number of seconds above 0"));
        }
    }
    Tunables::from_vars(env).map(|_| ())
}

/// The value of [`PROGRESS_SECONDS`] in seconds, if valid (above 0).
pub fn progress_seconds(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s > 0.0)
}

/// This process's tunables, read from the environment the first time
/// (values that do not parse count as unset here; a run refuses them first,
/// with [`check_env`]).
pub fn get() -> &'static Tunables {
    static TUNABLES: OnceLock<Tunables> = OnceLock::new();
    TUNABLES.get_or_init(|| Tunables::from_vars(env).unwrap_or(DEFAULT))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Tunables, String> {
        Tunables::from_vars(|name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn unset_gives_the_defaults() {
        assert_eq!(from(&[]).unwrap(), DEFAULT);
    }

    #[test]
    fn values_are_read_and_checked() {
        let t = from(&[("CHOMP_EPOCH_BYTES", "4096"), ("CHOMP_WORD_SIEVE", "0"), ("CHOMP_WORDS_FAR", "21")]).unwrap();
        assert_eq!((t.epoch_bytes, t.word_sieve, t.words_far), (4096, false, Some(21)));
        assert_eq!(t.copy_share, DEFAULT.copy_share);
        let t = from(&[("CHOMP_COLLECTIVE_BYTES", "65536"), ("CHOMP_CHECK_COLLECTIVES", "1")]).unwrap();
        assert_eq!((t.collective_bytes, t.check_collectives), (Some(65536), true));
        let t = from(&[("CHOMP_TEST_PANIC", "1:40"), ("CHOMP_TEST_ERROR", " 2 : 7 ")]).unwrap();
        assert_eq!((t.test_panic, t.test_error), (Some((1, 40)), Some((2, 7))));
        for bad in [
            ("CHOMP_EPOCH_BYTES", "lots"),
            ("CHOMP_EPOCH_BYTES", "0"),
            ("CHOMP_WORD_SIEVE", "no"),
            ("CHOMP_WORDS_LOW", "17"),
            ("CHOMP_COLLECTIVE_BYTES", "0"),
            ("CHOMP_CHECK_COLLECTIVES", "yes"),
            ("CHOMP_TEST_PANIC", "1"),
            ("CHOMP_TEST_PANIC", "1:0"),
            ("CHOMP_TEST_ERROR", "x:40"),
        ] {
            let e = from(&[bad]).unwrap_err();
            assert!(e.starts_with(bad.0), "{e}");
        }
    }
}
