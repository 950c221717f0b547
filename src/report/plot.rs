//! Plots of a run's level statistics (PNG and SVG, drawn with plotters):
//! the share of losing positions, the conjecture ratio
//! `losses · ln(positions) / positions` against 0.283…, and a heat map of
//! the Grundy value distribution by tile count.

use super::summary::{LevelStats, CONJECTURED_RATIO};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Errors while drawing or writing a plot.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {what}")]
pub struct PlotError {
    /// The file being written.
    pub path: PathBuf,
    /// What went wrong.
    pub what: String,
}

fn register_fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An embedded font: the PNGs do not depend on the machine's fonts.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn loss_share<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, levels: &[LevelStats]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let pts: Vec<(f64, f64)> = levels.iter().filter(|l| l.tiles >= 10).map(|l| (l.tiles as f64, l.loss_percent())).collect();
    let x_max = levels.last().map_or(10.0, |l| l.tiles as f64);
    let y_max = pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption("Share of losing positions by tile count", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(10.0..x_max, 0.0..y_max)?;
    chart.configure_mesh().x_desc("tiles").y_desc("losing positions (%)").draw()?;
    chart.draw_series(LineSeries::new(pts.iter().copied(), BLUE.stroke_width(2)))?;
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 2, BLUE.filled())))?;
    Ok(())
}

fn conjecture_ratio<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, levels: &[LevelStats]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let pts: Vec<(f64, f64)> = levels.iter().filter(|l| l.tiles >= 10).map(|l| (l.tiles as f64, l.conjecture_ratio())).collect();
    let x_max = levels.last().map_or(10.0, |l| l.tiles as f64);
    let y_max = pts.iter().map(|p| p.1).fold(CONJECTURED_RATIO, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption("losses · ln(positions) / positions", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(10.0..x_max, 0.0..y_max)?;
    chart.configure_mesh().x_desc("tiles").y_desc("ratio").draw()?;
    chart
        .draw_series(LineSeries::new(pts.iter().copied(), BLUE.stroke_width(2)))?
        .label("measured")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(vec![(10.0, CONJECTURED_RATIO), (x_max, CONJECTURED_RATIO)], RED.stroke_width(2)))?
        .label("conjectured limit 0.283…")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}

fn grundy_heatmap<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, levels: &[LevelStats]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let with: Vec<(&LevelStats, &Vec<u64>)> = levels.iter().filter_map(|l| l.grundy_histogram.as_ref().map(|h| (l, h))).collect();
    let x_max = with.last().map_or(1, |(l, _)| l.tiles) + 1;
    let y_max = with.iter().map(|(_, h)| h.len() as u32).max().unwrap_or(1);
    let mut chart = ChartBuilder::on(area)
        .caption("Grundy values by tile count (share of the level, log scale)", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(1u32..x_max, 0u32..y_max)?;
    chart.configure_mesh().disable_mesh().x_desc("tiles").y_desc("misère Grundy value").draw()?;
    // Colour by log10 of the share, from 1e-6 (pale) to 1 (dark).
    let cells = with.iter().flat_map(|(l, h)| {
        let total = l.positions as f64;
        h.iter().enumerate().filter(|(_, &c)| c > 0).map(move |(g, &c)| {
            let t = ((c as f64 / total).log10() + 6.0).clamp(0.0, 6.0) / 6.0;
            let colour = ViridisRGB::get_color(t);
            Rectangle::new([(l.tiles, g as u32), (l.tiles + 1, g as u32 + 1)], colour.filled())
        })
    });
    chart.draw_series(cells)?;
    Ok(())
}

/// Draws the three plots of `levels` into `dir` as PNG and SVG; returns the files written.
///
/// # Errors
/// [`PlotError`] when a file cannot be drawn or written.
pub fn plot_all(levels: &[LevelStats], dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_fonts();
    fn render(levels: &[LevelStats], path: &Path, svg: bool, f: ChartFn) -> DrawResult {
        let size = (960, 600);
        if svg {
            let area = SVGBackend::new(path, size).into_drawing_area();
            dispatch(f, &area, levels)?;
            area.present()?;
        } else {
            let area = BitMapBackend::new(path, size).into_drawing_area();
            dispatch(f, &area, levels)?;
            area.present()?;
        }
        Ok(())
    }
    let charts: [(&str, ChartFn); 3] =
        [("loss-share", ChartFn::LossShare), ("conjecture-ratio", ChartFn::Ratio), ("grundy-heatmap", ChartFn::Heatmap)];
    let mut written = Vec::new();
    for (name, f) in charts {
        if f == ChartFn::Heatmap && levels.iter().all(|l| l.grundy_histogram.is_none()) {
            continue;
        }
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{name}.{ext}"));
            // Drawn under a temporary name, then renamed: no half-written plot.
            let tmp = dir.join(format!(".{name}.tmp.{ext}"));
            render(levels, &tmp, ext == "svg", f).map_err(|e| PlotError { path: path.clone(), what: e.to_string() })?;
            std::fs::rename(&tmp, &path).map_err(|e| PlotError { path: path.clone(), what: e.to_string() })?;
            written.push(path);
        }
    }
    Ok(written)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ChartFn {
    LossShare,
    Ratio,
    Heatmap,
}

fn dispatch<DB: DrawingBackend>(f: ChartFn, area: &DrawingArea<DB, Shift>, levels: &[LevelStats]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match f {
        ChartFn::LossShare => loss_share(area, levels),
        ChartFn::Ratio => conjecture_ratio(area, levels),
        ChartFn::Heatmap => grundy_heatmap(area, levels),
    }
}
