//! Re-checking a table directory: checksums, table structure, and sampled
//! game invariants (a loss has no losing child, a win has one, conjugates
//! agree, a Grundy value is the mex of its children's, rank and unrank are
//! inverse).

use super::{Outcome, ProbeError, Tables};
use crate::game::Position;
use crate::store::{sha256_hex, Kind, LossSet, Manifest, TableDir};
use std::ops::RangeInclusive;
use std::path::Path;

/// What `verify` found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Files whose checksum was compared.
    pub files: usize,
    /// Tables fully decoded.
    pub tables: usize,
    /// Positions checked against their children (samples, and with `full` every loss).
    pub samples: u64,
    /// Positions sampled in each sampled level.
    pub per_level: u64,
    /// Losses checked against their children by the full check (`None`: not run).
    pub full_losses: Option<u64>,
    /// Grundy values checked against their children by the full check.
    pub full_values: u64,
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

/// The generator of the samples, at its older address.
pub use crate::rng::SplitMix;

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
    verify_with(dir, samples, seed, levels, false)
}

/// Like [`verify_levels`]; with `full`, also checks every loss of every
/// level against its children (a loss has no losing child) and every Grundy
/// value against its children's (the mex), which finds a loss moved to
/// another rank even when every checksum was recomputed.
///
/// # Errors
/// As [`verify`].
pub fn verify_with(dir: &Path, samples: u64, seed: u64, levels: RangeInclusive<u32>, full: bool) -> Result<VerifyReport, ProbeError> {
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
    if full && report.failures.is_empty() {
        check_full(&tables, &mut report);
    }
    Ok(report)
}

/// The most problems a full check lists before it stops.
const FULL_FAILURES: usize = 100;

fn check_full(t: &Tables, report: &mut VerifyReport) {
    let m = t.manifest();
    let sym = m.universe.is_symmetric();
    let (mut losses, mut values) = (0u64, 0u64);
    for n in 1..=m.levels_complete {
        let level = match t.level_losses(n) {
            Ok(l) => l,
            Err(e) => {
                report.failures.push(e.to_string());
                return;
            }
        };
        // Levels with values: every position (its value against the mex of its
        // children's, its outcome against theirs); levels without: every loss.
        let every = n <= m.grundy_max_tiles;
        let mut ranks: Box<dyn Iterator<Item = u64>> = if every { Box::new(0..t.ranking().size(n)) } else { Box::new(level.iter()) };
        loop {
            let chunk: Vec<u64> = ranks.by_ref().take(1 << 16).collect();
            if chunk.is_empty() {
                break;
            }
            losses += chunk.iter().filter(|&&r| level.contains(r)).count() as u64;
            values += if every { chunk.len() as u64 } else { 0 };
            report.samples += chunk.len() as u64;
            report.failures.extend(check_in_parallel(t, n, &chunk, sym));
            if report.failures.len() >= FULL_FAILURES {
                report.failures.truncate(FULL_FAILURES);
                report.failures.push(format!("(the full check stopped after {FULL_FAILURES} problems, in level {n})"));
                return;
            }
        }
    }
    report.full_losses = Some(losses);
    report.full_values = values;
}

/// Checks the positions of level `n` at `ranks` on every core; returns the problems found.
fn check_in_parallel(t: &Tables, n: u32, ranks: &[u64], sym: bool) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .chunks(ranks.len().div_ceil(threads))
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|&rank| {
                            let p = t.ranking().unrank(n, rank).expect("rank below size");
                            check_position(t, &p, rank, sym).err()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a check thread panicked")).collect()
    })
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
        report.failures.push(format!("{}: level statistics do not cover levels 1 to {}", manifest_path.display(), m.levels_complete));
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

/// Checks `samples` positions spread evenly over `levels` (at least one per
/// level), each against its children: half of each level's share drawn from
/// all its positions, half from its losses (rare, and what a damaged table
/// gets wrong first).
fn check_samples(t: &Tables, samples: u64, seed: u64, levels: RangeInclusive<u32>, report: &mut VerifyReport) {
    let m = t.manifest();
    let (lo, hi) = (*levels.start(), *levels.end());
    let mut rng = SplitMix(seed);
    let sym = m.universe.is_symmetric();
    if samples == 0 {
        return;
    }
    let per_level = samples.div_ceil((hi - lo + 1) as u64);
    report.per_level = per_level;
    for n in lo..=hi {
        let size = t.ranking().size(n);
        let stats = &m.levels[n as usize - 1];
        let level = match t.level_losses(n) {
            Ok(l) => l,
            Err(e) => {
                report.failures.push(e.to_string());
                return;
            }
        };
        for i in 0..per_level {
            let rank = if i % 2 == 1 && stats.losses > 0 { loss_rank(&level, rng.below(stats.losses)) } else { rng.below(size) };
            let p = t.ranking().unrank(n, rank).expect("rank below size");
            report.samples += 1;
            if let Err(e) = check_position(t, &p, rank, sym) {
                report.failures.push(e);
            }
        }
    }
}

/// The rank of the `k`-th loss (0-based) of a level.
fn loss_rank(level: &LossSet, k: u64) -> u64 {
    let mut k = k;
    for (first, bits) in &level.parts {
        if k < bits.len() {
            return first + bits.select(k as u32).expect("k below the shard's losses") as u64;
        }
        k -= bits.len();
    }
    unreachable!("k below the level's losses")
}

/// Checks position `p` (of rank `rank`) against the rules of the game
/// through its children, and against its conjugate in a symmetric
/// universe; returns its outcome, or what is wrong.
pub(crate) fn check_position(t: &Tables, p: &Position, rank: u64, sym: bool) -> Result<Outcome, String> {
    let fail = |what: &str| format!("position {p}: {what}");
    let e = |err: ProbeError| fail(&err.to_string());
    if t.ranking().rank(p) != Some(rank) {
        return Err(fail("rank(unrank(r)) != r"));
    }
    // The rules of the game (a loss has no losing child, a win has one, a
    // value is the mex of its children's): the checks every answer makes.
    let a = t.checked(p).map_err(e)?;
    let (outcome, grundy) = (a.outcome, a.grundy);
    if sym {
        let c = p.conjugate();
        if t.outcome(&c).map_err(e)? != outcome || t.grundy(&c).map_err(e)? != grundy {
            return Err(fail("its conjugate has another outcome or value"));
        }
    }
    Ok(outcome)
}

/// How a directory compares with a published manifest ([`against`]).
#[derive(Debug, Default)]
pub struct Against {
    /// Files compared and found equal (the manifest itself included).
    pub equal: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Listed files the directory lacks.
    pub missing: Vec<String>,
    /// Listed files whose size or SHA-256 differs.
    pub changed: Vec<String>,
    /// Files of the directory the manifest does not list.
    pub extra: Vec<String>,
}

impl Against {
    /// Whether the directory holds exactly the published bytes.
    pub fn identical(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.extra.is_empty()
    }
}

/// Compares table directory `dir` with the published manifest file
/// `published` (e.g. `results/frontier-140-manifest.json`): every listed
/// file must be present with its size and SHA-256, `manifest.json` must
/// equal the published manifest byte for byte, and nothing else may be
/// there.
///
/// # Errors
/// [`ProbeError`] when the published manifest cannot be read or is invalid.
pub fn against(dir: &Path, published: &Path) -> Result<Against, ProbeError> {
    let want_manifest = std::fs::read(published).map_err(|e| crate::store::TableError::io(published, e))?;
    let files = Manifest::read_file(published)?.files;
    Ok(against_files(dir, &want_manifest, &files))
}

/// Compares table directory `dir` with a published manifest, given as its
/// bytes and the files it lists (of level tables or of any other kind of
/// directory, e.g. a few-row one): see [`against`].
pub fn against_files(dir: &Path, want_manifest: &[u8], files: &std::collections::BTreeMap<String, crate::store::FileEntry>) -> Against {
    let mut report = Against::default();
    match std::fs::read(dir.join(crate::store::MANIFEST)) {
        Err(_) => report.missing.push(crate::store::MANIFEST.to_string()),
        Ok(b) if b != want_manifest => report.changed.push(crate::store::MANIFEST.to_string()),
        Ok(b) => {
            report.equal += 1;
            report.bytes += b.len() as u64;
        }
    }
    for (rel, entry) in files {
        match crate::store::file_sha256(&dir.join(rel)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => report.missing.push(rel.clone()),
            Err(_) => report.changed.push(format!("{rel} (unreadable)")),
            Ok((len, sha)) if len != entry.bytes || sha != entry.sha256 => report.changed.push(rel.clone()),
            Ok((len, _)) => {
                report.equal += 1;
                report.bytes += len;
            }
        }
    }
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, prefix)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else { continue };
        for e in entries.flatten() {
            let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((e.path(), format!("{rel}/")));
            } else if rel != crate::store::MANIFEST && !files.contains_key(&rel) {
                report.extra.push(rel);
            }
        }
    }
    report.extra.sort();
    report
}
