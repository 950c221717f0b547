//! Per-level statistics and the summary files built from them.

use serde::{Deserialize, Serialize};

/// The conjectured limit of `losses · ln(positions) / positions` (reference text).
pub const CONJECTURED_RATIO: f64 = 0.283;

/// What a run found at one level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// `summary.csv`: one row per level.
pub fn summary_csv(levels: &[LevelStats]) -> String {
    let mut s = String::from(SUMMARY_CSV_HEADER);
    s.push('\n');
    for l in levels {
        let g = l.max_grundy().map(|g| g.to_string()).unwrap_or_default();
        s.push_str(&format!("{},{},{},{:.6},{:.6},{}\n", l.tiles, l.positions, l.losses, l.loss_percent(), l.conjecture_ratio(), g));
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
    }
    let rows: Vec<Row> = levels
        .iter()
        .map(|l| Row {
            tiles: l.tiles,
            positions: l.positions,
            losses: l.losses,
            loss_percent: round6(l.loss_percent()),
            conjecture_ratio: round6(l.conjecture_ratio()),
            max_grundy: l.max_grundy(),
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
