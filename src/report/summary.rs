//! Per-level statistics and the summary files built from them.

use serde::{Deserialize, Serialize};

/// The conjectured limit of `losses · ln(positions) / positions` (reference text).
pub const CONJECTURED_RATIO: f64 = 0.283;

/// What a run found at one level.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelStats {
    /// Tile count.
    pub tiles: u32,
    /// Positions in the level.
    pub positions: u64,
    /// Losing positions.
    pub losses: u64,
    /// `histogram[g]` = positions of Grundy value `g`, when computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grundy_histogram: Option<Vec<u64>>,
    /// Wins with exactly one winning move (one losing child), when counted
    /// ([`crate::solve::Plan::count_moves`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wins_one_move: Option<u64>,
    /// Wins with two or more winning moves, when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wins_several_moves: Option<u64>,
    /// `histogram[k]` = positions with exactly `k` winning moves (losing
    /// children; `k = 0`: the losses), without trailing zero counts: where
    /// winning moves were counted at a level with Grundy values (their
    /// children of value 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winning_moves_histogram: Option<Vec<u64>>,
}

impl LevelStats {
    /// Share of losing positions, in percent.
    pub fn loss_percent(&self) -> f64 {
        100.0 * self.losses as f64 / self.positions as f64
    }

    /// `losses · ln(positions) / positions`, the quantity conjectured to tend to 0.283….
    pub fn conjecture_ratio(&self) -> f64 {
        self.losses as f64 * (self.positions as f64).ln() / self.positions as f64
    }

    /// Largest Grundy value of the level, when computed.
    pub fn max_grundy(&self) -> Option<u32> {
        self.grundy_histogram.as_ref().map(|h| h.len().saturating_sub(1) as u32)
    }
}

/// Header line of `summary.csv`.
pub const SUMMARY_CSV_HEADER: &str = "tiles,positions,losses,loss_percent,conjecture_ratio,max_grundy";

/// The two columns `summary.csv` appends when winning moves were counted.
pub const SUMMARY_CSV_MOVES: &str = ",wins_one_move,wins_several_moves";

/// Whether any level counts its winning moves (the summaries then carry them).
fn counted(levels: &[LevelStats]) -> bool {
    levels.iter().any(|l| l.wins_one_move.is_some())
}

/// `summary.csv`: one row per level; with two more columns when winning
/// moves were counted ([`SUMMARY_CSV_MOVES`], empty for a level without).
pub fn summary_csv(levels: &[LevelStats]) -> String {
    let moves = counted(levels);
    let mut s = String::from(SUMMARY_CSV_HEADER);
    if moves {
        s.push_str(SUMMARY_CSV_MOVES);
    }
    s.push('\n');
    let cell = |x: Option<u64>| x.map(|x| x.to_string()).unwrap_or_default();
    for l in levels {
        let g = l.max_grundy().map(|g| g.to_string()).unwrap_or_default();
        s.push_str(&format!("{},{},{},{:.6},{:.6},{}", l.tiles, l.positions, l.losses, l.loss_percent(), l.conjecture_ratio(), g));
        if moves {
            s.push_str(&format!(",{},{}", cell(l.wins_one_move), cell(l.wins_several_moves)));
        }
        s.push('\n');
    }
    s
}

/// `summary.json`: the same rows as `summary.csv`, as an array of objects.
pub fn summary_json(levels: &[LevelStats]) -> String {
    #[derive(Serialize)]
    struct Row {
        tiles: u32,
        positions: u64,
        losses: u64,
        loss_percent: f64,
        conjecture_ratio: f64,
        max_grundy: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        wins_one_move: Option<Option<u64>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        wins_several_moves: Option<Option<u64>>,
    }
    let moves = counted(levels);
    let rows: Vec<Row> = levels
        .iter()
        .map(|l| Row {
            tiles: l.tiles,
            positions: l.positions,
            losses: l.losses,
            loss_percent: round6(l.loss_percent()),
            conjecture_ratio: round6(l.conjecture_ratio()),
            max_grundy: l.max_grundy(),
            wins_one_move: moves.then_some(l.wins_one_move),
            wins_several_moves: moves.then_some(l.wins_several_moves),
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&rows).expect("serializing plain data");
    s.push('\n');
    s
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// `grundy_histogram.csv`: `tiles,grundy,positions` for every non-zero count.
pub fn grundy_histogram_csv(levels: &[LevelStats]) -> String {
    let mut s = String::from("tiles,grundy,positions\n");
    for l in levels {
        if let Some(h) = &l.grundy_histogram {
            for (g, &c) in h.iter().enumerate() {
                if c > 0 {
                    s.push_str(&format!("{},{},{}\n", l.tiles, g, c));
                }
            }
        }
    }
    s
}

/// `winning_moves.csv`: `tiles,winning_moves,positions` for every non-zero
/// count of the levels with a [`LevelStats::winning_moves_histogram`]
/// (`winning_moves` 0: the losses).
pub fn winning_moves_csv(levels: &[LevelStats]) -> String {
    let mut s = String::from("tiles,winning_moves,positions\n");
    for l in levels {
        if let Some(h) = &l.winning_moves_histogram {
            for (k, &c) in h.iter().enumerate().filter(|(_, &c)| c > 0) {
                s.push_str(&format!("{},{},{}\n", l.tiles, k, c));
            }
        }
    }
    s
}

/// Merges the level statistics of several runs of tile-count universes
/// (e.g. a loss frontier and a Grundy run) into levels `1..=top`: where runs
/// overlap their positions and losses must agree; a level's Grundy
/// histogram comes from whichever run has it (and must agree where several do).
///
/// # Errors
/// A one-line description of the first disagreement or gap.
pub fn merge_levels(runs: &[(String, Vec<LevelStats>)]) -> Result<Vec<LevelStats>, String> {
    let top = runs.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
    let mut out: Vec<LevelStats> = Vec::with_capacity(top);
    for i in 0..top {
        let mut merged: Option<LevelStats> = None;
        for (name, levels) in runs {
            let Some(l) = levels.get(i) else { continue };
            let Some(m) = merged.as_mut() else {
                merged = Some(l.clone());
                continue;
            };
            if (m.tiles, m.positions, m.losses) != (l.tiles, l.positions, l.losses) {
                return Err(format!(
                    "level {}: {name} has {} positions and {} losses, another run {} and {}",
                    l.tiles, l.positions, l.losses, m.positions, m.losses
                ));
            }
            match (&m.grundy_histogram, &l.grundy_histogram) {
                (Some(a), Some(b)) if a != b => {
                    return Err(format!("level {}: {name}'s Grundy histogram differs from another run's", l.tiles))
                }
                (None, Some(b)) => m.grundy_histogram = Some(b.clone()),
                _ => {}
            }
            match (m.wins_one_move.zip(m.wins_several_moves), l.wins_one_move.zip(l.wins_several_moves)) {
                (Some(a), Some(b)) if a != b => {
                    return Err(format!("level {}: {name}'s winning-move counts differ from another run's", l.tiles))
                }
                (None, Some((one, several))) => (m.wins_one_move, m.wins_several_moves) = (Some(one), Some(several)),
                _ => {}
            }
            match (&m.winning_moves_histogram, &l.winning_moves_histogram) {
                (Some(a), Some(b)) if a != b => {
                    return Err(format!("level {}: {name}'s histogram of winning moves differs from another run's", l.tiles))
                }
                (None, Some(b)) => m.winning_moves_histogram = Some(b.clone()),
                _ => {}
            }
        }
        out.push(merged.expect("some run holds level i"));
    }
    Ok(out)
}

/// A least-squares line through the conjecture ratio (`y = a + b·tiles`)
/// over the levels `from..`, with the standard error of its slope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioTrend {
    /// First level of the fit.
    pub from: u32,
    /// Last level of the fit.
    pub to: u32,
    /// Value of the line at 0 tiles.
    pub intercept: f64,
    /// Change of the ratio per tile.
    pub slope: f64,
    /// Standard error of `slope`.
    pub slope_error: f64,
}

impl RatioTrend {
    /// The line's value at `tiles`.
    pub fn at(&self, tiles: f64) -> f64 {
        self.intercept + self.slope * tiles
    }
}

/// The trend of the conjecture ratio from level `from` on (at least 3 levels).
pub fn ratio_trend(levels: &[LevelStats], from: u32) -> Option<RatioTrend> {
    let pts: Vec<(f64, f64)> = levels.iter().filter(|l| l.tiles >= from).map(|l| (l.tiles as f64, l.conjecture_ratio())).collect();
    let n = pts.len() as f64;
    if pts.len() < 3 {
        return None;
    }
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let rss: f64 = pts.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum();
    let slope_error = (rss / (n - 2.0) / sxx).sqrt();
    Some(RatioTrend { from, to: levels.last()?.tiles, intercept, slope, slope_error })
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    fn level(tiles: u32, losses: u64, grundy: bool) -> LevelStats {
        LevelStats {
            tiles,
            positions: 100 + tiles as u64,
            losses,
            grundy_histogram: grundy.then(|| vec![losses, 100 + tiles as u64 - losses]),
            ..Default::default()
        }
    }

    #[test]
    fn runs_merge_and_disagreements_are_refused() {
        let losses: Vec<_> = (1..=6).map(|n| level(n, n as u64, false)).collect();
        let grundy: Vec<_> = (1..=3).map(|n| level(n, n as u64, true)).collect();
        let m = merge_levels(&[("a".into(), losses.clone()), ("b".into(), grundy)]).unwrap();
        assert_eq!(m.len(), 6);
        assert!(m[..3].iter().all(|l| l.grundy_histogram.is_some()) && m[3..].iter().all(|l| l.grundy_histogram.is_none()));
        let bad = vec![level(1, 1, false), level(2, 3, false)];
        let err = merge_levels(&[("a".into(), losses), ("b".into(), bad)]).unwrap_err();
        assert!(err.starts_with("level 2: b has"), "{err}");
    }

    #[test]
    fn histograms_of_winning_moves_merge_and_are_written_by_level() {
        let with = |n: u32, h: Vec<u64>| LevelStats { winning_moves_histogram: Some(h), ..level(n, n as u64, true) };
        let counted: Vec<_> = vec![with(1, vec![1, 100]), with(2, vec![2, 0, 100])];
        let plain: Vec<_> = (1..=3).map(|n| level(n, n as u64, true)).collect();
        let m = merge_levels(&[("plain".into(), plain.clone()), ("counted".into(), counted)]).unwrap();
        assert_eq!(
            m.iter().map(|l| l.winning_moves_histogram.clone()).collect::<Vec<_>>(),
            [Some(vec![1, 100]), Some(vec![2, 0, 100]), None]
        );
        assert_eq!(winning_moves_csv(&m), "tiles,winning_moves,positions\n1,0,1\n1,1,100\n2,0,2\n2,2,100\n");
        let other = vec![with(1, vec![1, 99, 1])];
        let err = merge_levels(&[("a".into(), m), ("b".into(), other)]).unwrap_err();
        assert_eq!(err, "level 1: b's histogram of winning moves differs from another run's");
        assert_eq!(winning_moves_csv(&plain), "tiles,winning_moves,positions\n");
    }

    #[test]
    fn trend_of_a_line_is_exact() {
        // losses chosen so that the ratio is close to a line; the fit recovers a small error.
        let levels: Vec<_> = (1..=20)
            .map(|n| {
                let positions = 1_000_000u64 + n as u64;
                let ratio = 0.3 - 0.001 * n as f64;
                LevelStats {
                    tiles: n,
                    positions,
                    losses: (ratio * positions as f64 / (positions as f64).ln()).round() as u64,
                    ..Default::default()
                }
            })
            .collect();
        let t = ratio_trend(&levels, 5).unwrap();
        assert!((t.slope + 0.001).abs() < 1e-5 && t.slope_error < 1e-5, "{t:?}");
        assert_eq!((t.from, t.to), (5, 20));
        assert!(ratio_trend(&levels[..4], 1).is_some() && ratio_trend(&levels, 19).is_none());
    }
}
