//! Re-checking a table directory: checksums, table structure, and sampled
//! game invariants (a loss has no losing child, a win has one, conjugates
//! agree, a Grundy value is the mex of its children's, rank and unrank are
//! inverse).

use super::{Outcome, ProbeError, Tables};
use crate::game::Position;
use crate::store::{sha256_hex, Kind, Manifest, TableDir};
use std::ops::RangeInclusive;
use std::path::Path;

/// What `verify` found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Files whose checksum was compared.
    pub files: usize,
    /// Tables fully decoded.
    pub tables: usize,
    /// Positions sampled for game invariants.
    pub samples: u64,
    /// The levels sampled (the requested range clipped to the completed
    /// levels), or `None` when that range holds no completed level.
    pub sampled_levels: Option<RangeInclusive<u32>>,
    /// Levels completed by the run (from the manifest).
    pub levels_complete: u32,
    /// The run's last planned level.
    pub levels_planned: u32,
    /// Whether the run finished (every level and the summaries written).
    pub complete: bool,
    /// One line per problem found; empty when all is well.
    pub failures: Vec<String>,
}

/// A small deterministic generator (SplitMix64) for reproducible samples.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), close enough for sampling.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Verifies a table directory.
///
/// # Errors
/// [`ProbeError`] when the manifest itself cannot be read; every other
/// problem is listed in the report's failures.
pub fn verify(dir: &Path, samples: u64, seed: u64) -> Result<VerifyReport, ProbeError> {
    verify_levels(dir, samples, seed, 1..=u32::MAX)
}

/// Like [`verify`], sampling positions only from the levels in `levels`
/// (e.g. the top levels of a frontier run).
///
/// # Errors
/// As [`verify`].
pub fn verify_levels(dir: &Path, samples: u64, seed: u64, levels: RangeInclusive<u32>) -> Result<VerifyReport, ProbeError> {
    let dir = TableDir::new(dir);
    let manifest = dir.read_manifest()?;
    let mut report = VerifyReport {
        levels_complete: manifest.levels_complete,
        levels_planned: manifest.universe.max_tiles(),
        complete: manifest.complete,
        ..Default::default()
    };
    let (lo, hi) = ((*levels.start()).max(1), (*levels.end()).min(manifest.levels_complete));
    report.sampled_levels = (lo <= hi).then_some(lo..=hi);
    check_files(&dir, &manifest, &mut report);
    if !report.failures.is_empty() {
        return Ok(report);
    }
    let tables = Tables::open(dir.path())?;
    check_tables(&tables, &mut report);
    if !report.failures.is_empty() {
        return Ok(report);
    }
    if let Some(levels) = report.sampled_levels.clone() {
        check_samples(&tables, samples, seed, levels, &mut report);
    }
    Ok(report)
}

fn check_files(dir: &TableDir, m: &Manifest, report: &mut VerifyReport) {
    for rel in m.files.keys() {
        match m.read_listed(dir.path(), rel) {
            Err(e) => report.failures.push(e.to_string()),
            Ok(_) => report.files += 1,
        }
    }
    let manifest_path = dir.manifest_path();
    for rel in TableDir::expected_files(m) {
        if !m.files.contains_key(&rel) {
            report.failures.push(format!("{}: manifest does not list {rel}", manifest_path.display()));
        }
    }
    if m.levels.len() != m.levels_complete as usize || m.levels.iter().enumerate().any(|(i, l)| l.tiles != i as u32 + 1) {
        report.failures.push(format!("{}: level statistics do not cover levels 1..={}", manifest_path.display(), m.levels_complete));
    }
    if m.complete {
        for (name, text) in TableDir::summary_files(&m.levels, m.grundy_max_tiles > 0) {
            if m.files.get(name).is_some_and(|e| e.sha256 != sha256_hex(text.as_bytes())) {
                report.failures.push(format!("{}: disagrees with the level statistics in manifest.json", dir.path().join(name).display()));
            }
        }
    }
}

fn check_tables(t: &Tables, report: &mut VerifyReport) {
    let m = t.manifest();
    for n in 1..=m.levels_complete {
        let stats = &m.levels[n as usize - 1];
        let size = t.ranking().size(n);
        if stats.positions != size {
            report.failures.push(format!("manifest.json: level {n} has {size} positions, manifest says {}", stats.positions));
            continue;
        }
        let losses = match t.level_losses(n) {
            Ok(b) => b,
            Err(e) => {
                report.failures.push(e.to_string());
                continue;
            }
        };
        report.tables += 1;
        if n <= m.grundy_max_tiles {
            let names = TableDir::table_names(m, Kind::Grundy, n);
            let path = t.dir().path().join(if names.len() == 1 {
                names[0].clone()
            } else {
                format!("{} … {}", names[0], names[names.len() - 1])
            });
            match t.dir().read_grundy_values(m, n) {
                Err(e) => report.failures.push(e.to_string()),
                Ok(values) => {
                    report.tables += 1;
                    let mut hist = vec![0u64; values.iter().copied().max().unwrap_or(0) as usize + 1];
                    for &g in &values {
                        hist[g as usize] += 1;
                    }
                    if stats.grundy_histogram.as_ref() != Some(&hist) {
                        report.failures.push(format!("{}: value histogram differs from manifest.json", path.display()));
                    }
                    if losses.iter().any(|r| values[r as usize] != 0) {
                        report.failures.push(format!("{}: a loss of the loss table has a non-zero Grundy value", path.display()));
                    }
                }
            }
        }
    }
}

fn check_samples(t: &Tables, samples: u64, seed: u64, levels: RangeInclusive<u32>, report: &mut VerifyReport) {
    let m = t.manifest();
    let (lo, hi) = (*levels.start(), *levels.end());
    let mut rng = SplitMix(seed);
    let sym = m.universe.is_symmetric();
    for _ in 0..samples {
        let n = lo + rng.below((hi - lo + 1) as u64) as u32;
        let rank = rng.below(t.ranking().size(n));
        let p = t.ranking().unrank(n, rank).expect("rank below size");
        report.samples += 1;
        if let Err(e) = check_position(t, &p, rank, sym) {
            report.failures.push(e);
        }
    }
}

fn check_position(t: &Tables, p: &Position, rank: u64, sym: bool) -> Result<(), String> {
    let fail = |what: &str| format!("position {p}: {what}");
    let e = |err: ProbeError| fail(&err.to_string());
    if t.ranking().rank(p) != Some(rank) {
        return Err(fail("rank(unrank(r)) != r"));
    }
    let outcome = t.outcome(p).map_err(e)?;
    let grundy = t.grundy(p).map_err(e)?;
    let mut losing_children = 0;
    let mut seen = [false; 257];
    for (_, child) in p.moves() {
        if t.outcome(&child).map_err(e)? == Outcome::Loss {
            losing_children += 1;
        }
        if grundy.is_some() {
            if let Some(g) = t.grundy(&child).map_err(e)? {
                seen[g as usize] = true;
            }
        }
    }
    match outcome {
        Outcome::Loss if losing_children > 0 => return Err(fail("a loss with a losing child")),
        Outcome::Win if losing_children == 0 => return Err(fail("a win with no losing child")),
        _ => {}
    }
    if let Some(g) = grundy {
        let mex = seen.iter().position(|&s| !s).unwrap_or(256);
        if mex != g as usize {
            return Err(fail(&format!("Grundy value {g}, mex of the children is {mex}")));
        }
    }
    if sym {
        let c = p.conjugate();
        if t.outcome(&c).map_err(e)? != outcome || t.grundy(&c).map_err(e)? != grundy {
            return Err(fail("its conjugate has another outcome or value"));
        }
    }
    Ok(())
}
