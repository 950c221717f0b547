//! Plots of a run's level statistics (PNG and SVG, drawn with plotters):
//! the share of losing positions, the conjecture ratio
//! `losses · ln(positions) / positions` against 0.283…, and a heat map of
//! the Grundy value distribution by tile count, with a colour bar. Titles
//! name the run (`8×15 box: …`, `tile counts to 110: …`); tile counts are
//! integer ticks. The openings map shows the winning first move of every
//! rectangle ([`plot_openings`]).

use super::openings::Opening;
use super::summary::{ratio_trend, LevelStats, RatioTrend, CONJECTURED_RATIO};
use crate::game::Universe;
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

/// What the plots of a run show, and what their titles call the run.
struct Run<'a> {
    levels: &'a [LevelStats],
    /// e.g. `8×15 box` or `tile counts to 110`.
    label: String,
    /// Whether rows or columns are bounded (the 0.283… limit is conjectured
    /// for unbounded levels: all partitions of `n`).
    bounded: bool,
    /// The fitted trend of the ratio past [`TREND_FROM`] tiles, for long tile runs.
    trend: Option<RatioTrend>,
}

/// First level of the conjecture ratio's fitted trend (drawn when the run
/// reaches at least 10 levels past it).
pub const TREND_FROM: u32 = 90;

/// How plot titles name a run: `8×15 box`, `tile counts to 110`,
/// `at most 3 rows, tile counts to 200`, …
pub fn run_label(universe: &Universe) -> String {
    let top = universe.max_tiles();
    match (universe.rows, universe.cols) {
        (Some(r), Some(c)) if top >= r * c => format!("{r}×{c} box"),
        (Some(r), Some(c)) => format!("{r}×{c} box, tile counts to {top}"),
        (Some(r), None) => format!("at most {r} rows, tile counts to {top}"),
        (None, Some(c)) => format!("at most {c} columns, tile counts to {top}"),
        (None, None) => format!("tile counts to {top}"),
    }
}

/// The levels shown by the line plots (tile counts as integers): from 10 tiles
/// on (the smallest levels are tiny and noisy), or all of them in a short run.
fn line_range(levels: &[LevelStats]) -> (u32, u32) {
    let last = levels.last().map_or(1, |l| l.tiles);
    let first = if last >= 20 { 10 } else { 1 };
    (first, last.max(first + 1))
}

fn loss_share<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, run: &Run) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let (x_min, x_max) = line_range(run.levels);
    let pts: Vec<(u32, f64)> = run.levels.iter().filter(|l| l.tiles >= x_min).map(|l| (l.tiles, l.loss_percent())).collect();
    let y_max = positive(pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.1);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: share of losing positions by tile count", run.label), ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x_min..x_max, 0.0..y_max)?;
    chart.configure_mesh().x_desc("tiles").y_desc("losing positions (%)").draw()?;
    chart.draw_series(LineSeries::new(pts.iter().copied(), BLUE.stroke_width(2)))?;
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 2, BLUE.filled())))?;
    Ok(())
}

/// `v` if positive, else 1 (an axis needs a non-empty range).
fn positive(v: f64) -> f64 {
    if v > 0.0 {
        v
    } else {
        1.0
    }
}

fn conjecture_ratio<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, run: &Run) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let (mut x_min, x_max) = line_range(run.levels);
    if run.trend.is_some() {
        // Long runs: from 40 tiles on, where the ratio has settled, so that the trend shows.
        x_min = x_min.max(40);
    }
    let pts: Vec<(u32, f64)> = run.levels.iter().filter(|l| l.tiles >= x_min).map(|l| (l.tiles, l.conjecture_ratio())).collect();
    let y_max = pts.iter().map(|p| p.1).fold(CONJECTURED_RATIO, f64::max);
    let y_range = if run.trend.is_some() {
        let y_min = pts.iter().map(|p| p.1).fold(CONJECTURED_RATIO, f64::min);
        (y_min - 0.2 * (y_max - y_min))..(y_max + 0.2 * (y_max - y_min))
    } else {
        0.0..y_max * 1.1
    };
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: losses · ln(positions) / positions", run.label), ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x_min..x_max, y_range)?;
    chart.configure_mesh().x_desc("tiles").y_desc("ratio").draw()?;
    chart
        .draw_series(LineSeries::new(pts.iter().copied(), BLUE.stroke_width(2)))?
        .label("measured")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    let limit = if run.bounded { "limit 0.283… conjectured for unbounded levels" } else { "conjectured limit 0.283…" };
    chart
        .draw_series(LineSeries::new(vec![(x_min, CONJECTURED_RATIO), (x_max, CONJECTURED_RATIO)], RED.stroke_width(2)))?
        .label(limit)
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    if let Some(t) = run.trend {
        let green = RGBColor(0, 150, 0);
        chart
            .draw_series(LineSeries::new(vec![(t.from, t.at(t.from as f64)), (t.to, t.at(t.to as f64))], green.stroke_width(3)))?
            .label(format!("fit {}–{}: slope {:.2e} ± {:.1e} per tile", t.from, t.to, t.slope, t.slope_error))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], green.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}

/// Shares below this power of ten get the colour of the lowest one.
const LOG_SHARE_MIN: f64 = -6.0;

/// Colour of a share of the level (log scale, viridis: dark = rare, yellow = common).
fn share_colour(log10_share: f64) -> RGBColor {
    ViridisRGB::get_color((log10_share.clamp(LOG_SHARE_MIN, 0.0) - LOG_SHARE_MIN) / -LOG_SHARE_MIN)
}

fn grundy_heatmap<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, run: &Run) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let with: Vec<(&LevelStats, &Vec<u64>)> = run.levels.iter().filter_map(|l| l.grundy_histogram.as_ref().map(|h| (l, h))).collect();
    let x_max = with.last().map_or(1, |(l, _)| l.tiles);
    let y_max = with.iter().map(|(_, h)| h.len() as u32).max().unwrap_or(1).saturating_sub(1);
    let area = area.titled(&format!("{}: Grundy values by tile count", run.label), ("sans-serif", 24))?;
    let width = area.dim_in_pixel().0;
    let (main, bar) = area.split_horizontally(width.saturating_sub(130));
    // One column per tile count and one row per value; ticks at the centres.
    let mut chart = ChartBuilder::on(&main)
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d((1u32..x_max).into_segmented(), (0u32..y_max).into_segmented())?;
    chart.configure_mesh().disable_mesh().x_desc("tiles").y_desc("misère Grundy value").draw()?;
    let cells = with.iter().flat_map(|(l, h)| {
        let total = l.positions as f64;
        h.iter().enumerate().filter(|(_, &c)| c > 0).map(move |(g, &c)| {
            let g = g as u32;
            let colour = share_colour((c as f64 / total).log10());
            Rectangle::new(
                [(SegmentValue::Exact(l.tiles), SegmentValue::Exact(g)), (SegmentValue::Exact(l.tiles + 1), SegmentValue::Exact(g + 1))],
                colour.filled(),
            )
        })
    });
    chart.draw_series(cells)?;

    // The colour bar: share of the level's positions, log scale.
    let mut scale = ChartBuilder::on(&bar)
        .margin_top(16)
        .margin_bottom(16)
        .margin_right(30)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..1.0, LOG_SHARE_MIN..0.0)?;
    let label = |v: &f64| {
        let e = v.round() as i32;
        let sup: String =
            (-e).to_string().chars().map(|d| ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'][d as usize - '0' as usize]).collect();
        match e {
            0 => "1".to_string(),
            _ if e as f64 <= LOG_SHARE_MIN => format!("≤ 10⁻{sup}"),
            _ => format!("10⁻{sup}"),
        }
    };
    scale
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 12))
        .y_labels(7)
        .y_label_formatter(&label)
        .y_desc("share of the level")
        .draw()?;
    let steps = 120;
    let step = -LOG_SHARE_MIN / steps as f64;
    scale.draw_series((0..steps).map(|i| {
        let lo = LOG_SHARE_MIN + i as f64 * step;
        Rectangle::new([(0.0, lo), (1.0, lo + step)], share_colour(lo + step / 2.0).filled())
    }))?;
    Ok(())
}

/// Draws the three plots of `levels` into `dir` as PNG and SVG; returns the
/// files written. Titles name the run by its `universe` ([`run_label`]).
///
/// # Errors
/// [`PlotError`] when a file cannot be drawn or written.
pub fn plot_all(levels: &[LevelStats], universe: &Universe, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_fonts();
    let bounded = universe.rows.is_some() || universe.cols.is_some();
    let long = levels.last().is_some_and(|l| l.tiles >= TREND_FROM + 10);
    let trend = if long && !bounded { ratio_trend(levels, TREND_FROM) } else { None };
    let run = Run { levels, label: run_label(universe), bounded, trend };
    struct Of<'r>(ChartFn, &'r Run<'r>);
    impl Chart for Of<'_> {
        fn draw_on<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
        where
            DB::ErrorType: 'static,
        {
            dispatch(self.0, area, self.1)
        }
    }
    let charts: [(&str, ChartFn); 3] =
        [("loss-share", ChartFn::LossShare), ("conjecture-ratio", ChartFn::Ratio), ("grundy-heatmap", ChartFn::Heatmap)];
    let mut written = Vec::new();
    for (name, f) in charts {
        if f == ChartFn::Heatmap && levels.iter().all(|l| l.grundy_histogram.is_none()) {
            continue;
        }
        written.extend(write_chart(&Of(f, &run), dir, name, (960, 600))?);
    }
    Ok(written)
}

/// Kinds of winning first move in a rectangle, as the openings map colours them.
const MOVE_KINDS: [(&str, RGBColor); 5] = [
    ("1:1, the square move", RGBColor(68, 1, 84)),
    ("in row 1", RGBColor(33, 145, 140)),
    ("in column 1", RGBColor(253, 231, 37)),
    ("elsewhere", RGBColor(230, 97, 1)),
    ("in row 0 or column 0 (1-wide)", RGBColor(160, 160, 160)),
];

/// The kind of a winning move `[row, col]` ([`MOVE_KINDS`]).
fn move_kind(m: [u32; 2]) -> usize {
    match m {
        [1, 1] => 0,
        [0, _] | [_, 0] => 4,
        [1, _] => 1,
        [_, 1] => 2,
        _ => 3,
    }
}

/// Draws the openings map of the rectangles `openings` (every rectangle up
/// to its largest rows and columns): one cell per `rows × cols` rectangle,
/// coloured by the kind of its first winning move (row-major), labelled
/// with that move `row:col` and, when there are several, their number
/// (`+2`: two more). Written to `dir/openings.png` and `.svg`; returns the
/// files written. `label` names the source in the title.
///
/// # Errors
/// [`PlotError`] when a file cannot be drawn or written.
pub fn plot_openings(openings: &[Opening], label: &str, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_fonts();
    fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, openings: &[Opening], label: &str) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        area.fill(&WHITE)?;
        let rows = openings.iter().map(|o| o.rows).max().unwrap_or(1);
        let cols = openings.iter().map(|o| o.cols).max().unwrap_or(1);
        let area = area.titled(&format!("Winning first moves of every rectangle, {label}"), ("sans-serif", 24))?;
        let (w, _) = area.dim_in_pixel();
        let (main, legend) = area.split_horizontally(w.saturating_sub(250));
        let mut chart = ChartBuilder::on(&main)
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(48)
            .build_cartesian_2d((1u32..cols).into_segmented(), (1u32..rows).into_segmented())?;
        chart.configure_mesh().disable_mesh().x_desc("columns").y_desc("rows").x_labels(cols as usize).y_labels(rows as usize).draw()?;
        let cell = |r: u32, c: u32, r1: u32, c1: u32| {
            [(SegmentValue::Exact(c), SegmentValue::Exact(r)), (SegmentValue::Exact(c1), SegmentValue::Exact(r1))]
        };
        chart.draw_series(openings.iter().filter_map(|o| {
            let first = *o.winning_moves.first()?;
            Some(Rectangle::new(cell(o.rows, o.cols, o.rows + 1, o.cols + 1), MOVE_KINDS[move_kind(first)].1.filled()))
        }))?;
        chart.draw_series(openings.iter().map(|o| Rectangle::new(cell(o.rows, o.cols, o.rows + 1, o.cols + 1), WHITE.stroke_width(1))))?;
        let (pw, ph) = main.dim_in_pixel();
        let size = ((pw.min(ph) as f64 / cols.max(rows) as f64) * 0.26).clamp(7.0, 14.0);
        let texts = openings.iter().filter_map(|o| {
            let first = *o.winning_moves.first()?;
            let more = o.winning_moves.len() - 1;
            let text = if more > 0 { format!("{}:{} +{more}", first[0], first[1]) } else { format!("{}:{}", first[0], first[1]) };
            let colour: &'static RGBColor = if move_kind(first) == 2 { &BLACK } else { &WHITE };
            let at = (SegmentValue::CenterOf(o.cols), SegmentValue::CenterOf(o.rows));
            let style = TextStyle::from(("sans-serif", size).into_font()).color(colour).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ));
            Some(Text::new(text, at, style))
        });
        chart.draw_series(texts)?;
        // The legend: one swatch per kind of move.
        let legend = legend.margin(60, 10, 10, 10);
        for (i, (name, colour)) in MOVE_KINDS.iter().enumerate() {
            let y = i as i32 * 34;
            legend.draw(&Rectangle::new([(0, y), (22, y + 22)], colour.filled()))?;
            legend.draw(&Text::new(name.to_string(), (30, y + 4), ("sans-serif", 14)))?;
        }
        legend.draw(&Text::new("label: first winning move".to_string(), (0, 5 * 34 + 10), ("sans-serif", 13)))?;
        legend.draw(&Text::new("row:col (0-based), +k more".to_string(), (0, 5 * 34 + 28), ("sans-serif", 13)))?;
        Ok(())
    }
    struct Map<'o>(&'o [Opening], &'o str);
    impl Chart for Map<'_> {
        fn draw_on<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
        where
            DB::ErrorType: 'static,
        {
            draw(area, self.0, self.1)
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| PlotError { path: dir.to_path_buf(), what: e.to_string() })?;
    write_chart(&Map(openings, label), dir, "openings", (1100, 900))
}

/// Draws the rectangle census: for every thin rectangle `rows × cols`
/// (`3 ≤ rows ≤ 10 < cols`; the census lists `rows ≤ cols`), the column of
/// its first winning move as a share of `cols`, against `cols` on a log
/// scale, one colour per number of rows; the rectangles with several
/// winning moves ringed. Written to `dir/census.png` and `.svg`; returns
/// the files written.
///
/// # Errors
/// [`PlotError`] when a file cannot be drawn or written.
pub fn plot_census(openings: &[Opening], dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_fonts();
    const COLOURS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    let thin: Vec<&Opening> =
        openings.iter().filter(|o| (3..=10).contains(&o.rows) && o.cols > 10 && !o.winning_moves.is_empty()).collect();
    fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, thin: &[&Opening]) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        area.fill(&WHITE)?;
        let most = thin.iter().map(|o| o.cols).max().unwrap_or(11) as f64;
        let mut chart = ChartBuilder::on(area)
            .caption("Winning first moves of thin rectangles: the move's column / cols", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d((10f64..most * 1.1).log_scale(), 0f64..1f64)?;
        chart.configure_mesh().x_desc("cols (log scale)").y_desc("column of the first winning move / cols").draw()?;
        for rows in 3..=10u32 {
            let colour = COLOURS[(rows - 3) as usize % COLOURS.len()];
            let points: Vec<(f64, f64)> = thin
                .iter()
                .filter(|o| o.rows == rows)
                .map(|o| (f64::from(o.cols), f64::from(o.winning_moves[0][1]) / f64::from(o.cols)))
                .collect();
            if points.is_empty() {
                continue;
            }
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 1, colour.filled())))?
                .label(format!("{rows} rows"))
                .legend(move |(x, y)| Circle::new((x, y), 4, colour.filled()));
        }
        let several = thin.iter().filter(|o| o.winning_moves.len() > 1);
        chart
            .draw_series(
                several.map(|o| {
                    Circle::new((f64::from(o.cols), f64::from(o.winning_moves[0][1]) / f64::from(o.cols)), 6, BLACK.stroke_width(2))
                }),
            )?
            .label("several winning moves")
            .legend(|(x, y)| Circle::new((x, y), 5, BLACK.stroke_width(2)));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerLeft)
            .draw()?;
        Ok(())
    }
    struct Thin<'o>(&'o [&'o Opening]);
    impl Chart for Thin<'_> {
        fn draw_on<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
        where
            DB::ErrorType: 'static,
        {
            draw(area, self.0)
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| PlotError { path: dir.to_path_buf(), what: e.to_string() })?;
    write_chart(&Thin(&thin), dir, "census", (1100, 700))
}

/// A chart drawn alike on any backend (PNG and SVG).
trait Chart {
    fn draw_on<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

/// Writes `chart` as `dir/name.png` and `dir/name.svg` at `size`, each
/// drawn under a temporary name, then renamed (no half-written plot);
/// returns the two files.
fn write_chart(chart: &impl Chart, dir: &Path, name: &str, size: (u32, u32)) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{name}.{ext}"));
        let tmp = dir.join(format!(".{name}.tmp.{ext}"));
        let result = if ext == "svg" {
            let area = SVGBackend::new(&tmp, size).into_drawing_area();
            chart.draw_on(&area).and_then(|()| Ok(area.present()?))
        } else {
            let area = BitMapBackend::new(&tmp, size).into_drawing_area();
            chart.draw_on(&area).and_then(|()| Ok(area.present()?))
        };
        result.map_err(|e| PlotError { path: path.clone(), what: e.to_string() })?;
        std::fs::rename(&tmp, &path).map_err(|e| PlotError { path: path.clone(), what: e.to_string() })?;
        written.push(path);
    }
    Ok(written)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ChartFn {
    LossShare,
    Ratio,
    Heatmap,
}

fn dispatch<DB: DrawingBackend>(f: ChartFn, area: &DrawingArea<DB, Shift>, run: &Run) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match f {
        ChartFn::LossShare => loss_share(area, run),
        ChartFn::Ratio => conjecture_ratio(area, run),
        ChartFn::Heatmap => grundy_heatmap(area, run),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_the_run() {
        assert_eq!(run_label(&Universe::boxed(8, 15)), "8×15 box");
        assert_eq!(run_label(&Universe::tiles(110)), "tile counts to 110");
        assert_eq!(run_label(&Universe { rows: Some(3), cols: None, tiles: Some(200) }), "at most 3 rows, tile counts to 200");
        assert_eq!(run_label(&Universe { rows: Some(4), cols: Some(5), tiles: Some(12) }), "4×5 box, tile counts to 12");
        assert_eq!(run_label(&Universe { rows: Some(4), cols: Some(5), tiles: Some(30) }), "4×5 box");
    }

    #[test]
    fn line_plots_use_whole_tile_counts() {
        let level = |tiles| LevelStats { tiles, positions: 1, losses: 0, ..Default::default() };
        let long: Vec<_> = (1..=110).map(level).collect();
        assert_eq!(line_range(&long), (10, 110));
        let short: Vec<_> = (1..=5).map(level).collect();
        assert_eq!(line_range(&short), (1, 5));
        assert_eq!(line_range(&[level(1)]), (1, 2));
    }
}
