//! Generic figures for reports: line/scatter plots of several series and bar charts, written as
//! PNG and SVG. The run plots of [`crate::plots`] are specific; these serve `wsn reproduce`.

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The size of every figure, in pixels.
pub(crate) const SIZE: (u32, u32) = (1000, 560);

/// One series of a line figure.
pub struct Series {
    /// Legend label (empty: no legend entry).
    pub label: String,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
    /// Draw markers only (a scatter), not a line.
    pub scatter: bool,
    /// Draw as a step function (value held until the next point).
    pub step: bool,
    /// Events to stand out over many other series: large black crosses, always in the legend.
    pub marker: bool,
    /// Series of one group share a colour (and, labelled once, one legend entry): e.g. the
    /// flows of one demand class. `None`: a colour of its own.
    pub group: Option<usize>,
    /// A step series ends here (e.g. when its flow closed) instead of at the figure's right edge.
    pub end_x: Option<f64>,
    /// Not drawn: its points only widen the axes ([`Series::span`]).
    pub hidden: bool,
    /// A reference, not data (e.g. "offered = goodput"): dashed and grey, drawn under the data.
    pub reference: bool,
}

impl Series {
    /// A line series.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
            scatter: false,
            step: false,
            marker: false,
            group: None,
            end_x: None,
            hidden: false,
            reference: false,
        }
    }
    /// A step series (a rate held until it changes).
    pub fn step(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
            scatter: false,
            step: true,
            marker: false,
            group: None,
            end_x: None,
            hidden: false,
            reference: false,
        }
    }
    /// A scatter series.
    pub fn scatter(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
            scatter: true,
            step: false,
            marker: false,
            group: None,
            end_x: None,
            hidden: false,
            reference: false,
        }
    }
    /// Event markers (large black crosses, always in the legend) drawn over the other series.
    pub fn markers(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
            scatter: true,
            step: false,
            marker: true,
            group: None,
            end_x: None,
            hidden: false,
            reference: false,
        }
    }
    /// A reference line through `points` (dashed, grey, under the data), not a data series.
    pub fn reference(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { reference: true, ..Series::line(label, points) }
    }
    /// An x range the axes must cover (e.g. a whole run, when the data stop earlier), not drawn.
    pub fn span(x0: f64, x1: f64) -> Series {
        Series { hidden: true, ..Series::line("", vec![(x0, 0.0), (x1, 0.0)]) }
    }
    /// This series in group `g` (shared colour).
    pub fn in_group(mut self, g: usize) -> Series {
        self.group = Some(g);
        self
    }
    /// End a step series at `x` (ignored when not finite or before its last point).
    pub fn ending_at(mut self, x: Option<f64>) -> Series {
        self.end_x = x;
        self
    }
}

/// Colour slot of every series and the number of slots: one per group, one per ungrouped series,
/// in order of first appearance.
fn colour_slots(series: &[Series]) -> (Vec<usize>, usize) {
    let mut keys: Vec<(bool, usize)> = Vec::new();
    let slots = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if s.hidden || s.reference {
                return 0; // never drawn in a colour of its own
            }
            let key = s.group.map_or((false, i), |g| (true, g));
            keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            })
        })
        .collect();
    (slots, keys.len())
}

fn colour(i: usize, n: usize) -> RGBColor {
    // Evenly spaced hues, fixed saturation/value: readable for up to a few dozen series.
    let h = (i as f64 / n.max(1) as f64) * 0.85;
    let (r, g, b) = hsv(h, 0.75, 0.85);
    RGBColor((r * 255.0) as u8, (g * 255.0) as u8, (b * 255.0) as u8)
}

fn hsv(h: f64, s: f64, v: f64) -> (f64, f64, f64) {
    let i = (h * 6.0).floor();
    let f = h * 6.0 - i;
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - f * s), v * (1.0 - (1.0 - f) * s));
    match i as i32 % 6 {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    }
}

fn bounds(series: &[Series], hline: Option<f64>) -> (f64, f64, f64, f64) {
    let pts = series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if let Some(h) = hline {
        y1 = y1.max(h);
    }
    if !x0.is_finite() || x1 <= x0 {
        x0 = 0.0;
        x1 = x1.max(1.0);
    }
    (x0, x1, 0.0, if y1 > 0.0 { y1 * 1.08 } else { 1.0 })
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    hline: Option<(f64, &str)>,
    y_max: Option<f64>,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    // A non-finite reference line or cap would make the axis infinite (and plotters loop):
    // left out.
    let hline = hline.filter(|h| h.0.is_finite());
    let (x0, x1, y0, y1) = bounds(series, hline.map(|h| h.0));
    let y1 = match y_max {
        Some(m) if m.is_finite() && m > y0 => y1.min(m),
        _ => y1,
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, crate::plots::font(crate::plots::caption_size(title, 20.0)))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&crate::plots::tick)
        .y_label_formatter(&crate::plots::tick)
        .label_style(crate::plots::font(13.0))
        .axis_desc_style(crate::plots::font(15.0))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    let n = series.len();
    let (slots, n_colours) = colour_slots(series);
    // A legend for up to 12 labelled entries (many unlabelled series of a few labelled groups
    // still get one).
    let labelled = series.iter().filter(|s| !s.label.is_empty() && !s.marker && !s.reference).count();
    let legend = (1..=12).contains(&labelled);
    // The reference line first, dashed and grey, so that no data series hides under it and it
    // does not read as one.
    let grey = RGBColor(110, 110, 110);
    if let Some((h, label)) = hline {
        let a = chart
            .draw_series(DashedLineSeries::new(vec![(x0, h), (x1, h)], 8, 5, grey.stroke_width(2)))
            .map_err(|e| e.to_string())?;
        a.label(label.to_string()).legend(move |(x, y)| {
            plotters::element::DashedPathElement::new(vec![(x, y), (x + 18, y)], 5, 3, grey.stroke_width(2))
        });
    }
    if labelled > 12 {
        // Too many for a legend of one entry each: one entry says what the lines are.
        let entry = format!("{labelled} series, one colour each, the last drawn on top");
        let last = series.iter().rposition(|s| !s.hidden && !s.marker && !s.reference && !s.points.is_empty());
        let c = colour(last.and_then(|i| slots.get(i).copied()).unwrap_or(0), n_colours);
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| e.to_string())?
            .label(entry)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(1)));
    }
    for s in series.iter().filter(|s| s.reference && !s.hidden) {
        let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        let a = chart.draw_series(DashedLineSeries::new(pts, 8, 5, grey.stroke_width(2))).map_err(|e| e.to_string())?;
        if !s.label.is_empty() {
            a.label(s.label.clone()).legend(move |(x, y)| {
                plotters::element::DashedPathElement::new(vec![(x, y), (x + 18, y)], 5, 3, grey.stroke_width(2))
            });
        }
    }
    for (i, s) in series.iter().enumerate() {
        if s.hidden || s.reference {
            continue;
        }
        let c = colour(slots[i], n_colours);
        let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        if pts.is_empty() {
            continue;
        }
        if s.marker {
            let a = chart
                .draw_series(pts.iter().map(|&p| Cross::new(p, 4, BLACK.stroke_width(2))))
                .map_err(|e| e.to_string())?;
            if !s.label.is_empty() {
                a.label(s.label.clone()).legend(|(x, y)| Cross::new((x + 9, y), 4, BLACK.stroke_width(2)));
            }
            continue;
        }
        let anno = if s.scatter {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 1, c.filled()))).map_err(|e| e.to_string())?
        } else {
            let pts = if s.step {
                let mut v = Vec::with_capacity(pts.len() * 2 + 1);
                for w in pts.windows(2) {
                    v.push(w[0]);
                    v.push((w[1].0, w[0].1));
                }
                let last = *pts.last().expect("non-empty");
                v.push(last);
                let end = s.end_x.filter(|e| e.is_finite() && *e >= last.0).map_or(x1, |e| e.min(x1));
                v.push((end, last.1));
                v
            } else {
                pts
            };
            let style = c.stroke_width(if n > 12 { 1 } else { 2 });
            let mut pieces = split_at_reversals(&chart, pts).into_iter();
            let first = pieces.next().unwrap_or_default();
            for piece in pieces {
                chart.draw_series(LineSeries::new(piece, style)).map_err(|e| e.to_string())?;
            }
            chart.draw_series(LineSeries::new(first, style)).map_err(|e| e.to_string())?
        };
        if legend && !s.label.is_empty() {
            anno.label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
        }
    }
    let extra_entries = series.iter().any(|s| (s.marker || s.reference) && !s.label.is_empty());
    if legend || labelled > 12 || hline.is_some() || extra_entries {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(crate::plots::font(13.0))
            .position(legend_corner(series, (x0, x1), (y0, y1)))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The length of a move, in pixels, over which [`split_at_reversals`] judges a line's direction:
/// the width of the widest line the figures draw.
const TURN_MOVE_PX: f64 = 2.0;

/// `pts` as one or more polylines, split where the line turns back on itself in pixel space
/// (by more than about 140°; the vertex ends one piece and starts the next). Plotters draws a
/// line wider than one pixel as one polygon with a join at every vertex, and at such a turn the
/// polygon folds over and loses segments in the bitmap: a step series' drop from a rate's peak
/// that it had climbed almost vertically went missing from the PNG while the SVG had it
/// (`wsn compare`'s Fig. 15, session 31). The direction is judged over moves of at least
/// [`TURN_MOVE_PX`].
fn split_at_reversals<DB: DrawingBackend>(
    chart: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    pts: Vec<(f64, f64)>,
) -> Vec<Vec<(f64, f64)>> {
    let mut pieces = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    // The pixel where the last judged move ended, and that move's direction. A move is judged
    // once it reaches the stroke's width from there, so that neither points on one pixel nor a
    // one-pixel step sideways between an ascent and a descent hide the turn.
    let mut anchor: Option<(i32, i32)> = None;
    let mut dir: Option<(f64, f64)> = None;
    for p in pts {
        let px = chart.backend_coord(&p);
        match anchor {
            None => anchor = Some(px),
            Some(a) => {
                // (In f64: a point far off the axes maps to a saturated pixel coordinate.)
                let d = (f64::from(px.0) - f64::from(a.0), f64::from(px.1) - f64::from(a.1));
                if d.0.hypot(d.1) >= TURN_MOVE_PX {
                    if let Some(o) = dir {
                        let norms = o.0.hypot(o.1) * d.0.hypot(d.1);
                        if o.0 * d.0 + o.1 * d.1 < -0.77 * norms {
                            // Turned back: the last vertex ends this piece and starts the next.
                            let corner = *cur.last().expect("a vertex before a move");
                            pieces.push(std::mem::replace(&mut cur, vec![corner]));
                        }
                    }
                    dir = Some(d);
                    anchor = Some(px);
                }
            }
        }
        cur.push(p);
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    pieces
}

/// The upper corner for the legend of a line figure: the right one (the default), unless more
/// of the data's points lie under the upper right than under the upper left (curves rising to
/// the right, e.g. the bench's cost per frame against network size).
fn legend_corner(series: &[Series], (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> SeriesLabelPosition {
    let (w, h) = (x1 - x0, y1 - y0);
    let (mut left, mut right) = (0usize, 0usize);
    if w > 0.0 && h > 0.0 {
        let top = series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (y - y0) / h >= 0.55);
        for &(x, _) in top {
            let u = (x - x0) / w;
            if u <= 0.45 {
                left += 1;
            } else if u >= 0.55 {
                right += 1;
            }
        }
    }
    if right > left {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
}

/// A line (or scatter/step) figure `name.png` / `name.svg` in `dir`, with an optional
/// horizontal reference line.
pub fn lines(
    dir: &Path,
    name: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    hline: Option<(f64, &str)>,
) -> Result<(), String> {
    lines_clipped(dir, name, title, x_label, y_label, series, hline, None)
}

/// [`lines`] with the y axis ending at `y_max` at most (points above it are cut off at the top
/// of the plot; the title should say so).
#[allow(clippy::too_many_arguments)]
pub fn lines_clipped(
    dir: &Path,
    name: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    hline: Option<(f64, &str)>,
    y_max: Option<f64>,
) -> Result<(), String> {
    crate::plots::ensure_font()?;
    let png = dir.join(format!("{name}.png"));
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw_lines(&root, title, x_label, y_label, series, hline, y_max)?;
        root.present().map_err(|e| format!("{}: {e}", png.display()))?;
    }
    let svg = dir.join(format!("{name}.svg"));
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    draw_lines(&root, title, x_label, y_label, series, hline, y_max)?;
    root.present().map_err(|e| format!("{}: {e}", svg.display()))
}

/// A bar chart `name.png` / `name.svg`: one bar per (label, value); bars of several stacked
/// layers when `layers` has more than one entry (each layer: legend label and one value per
/// category).
pub fn bars(
    dir: &Path,
    name: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    layers: &[(String, Vec<f64>)],
) -> Result<(), String> {
    crate::plots::ensure_font()?;
    let draw = |root: &DrawingArea<_, Shift>| -> Result<(), String> {
        draw_bars(root, title, x_label, y_label, categories, layers)
    };
    let png = dir.join(format!("{name}.png"));
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw(&root)?;
        root.present().map_err(|e| format!("{}: {e}", png.display()))?;
    }
    let svg = dir.join(format!("{name}.svg"));
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    draw_bars(&root, title, x_label, y_label, categories, layers)?;
    root.present().map_err(|e| format!("{}: {e}", svg.display()))
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    layers: &[(String, Vec<f64>)],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let n = categories.len().max(1);
    let top = (0..n)
        .map(|i| layers.iter().map(|(_, v)| v.get(i).copied().filter(|x| x.is_finite()).unwrap_or(0.0)).sum::<f64>())
        .fold(0.0f64, f64::max);
    // Headroom above the tallest bar for the legend of a stacked chart, in the upper right.
    let top = if top > 0.0 { top * if layers.len() > 1 { 1.35 } else { 1.1 } } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption(title, crate::plots::font(crate::plots::caption_size(title, 20.0)))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        // Category i is centred on x = i, so that the axis' integer ticks fall on the bars.
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..top)
        .map_err(|e| e.to_string())?;
    let cats = categories.to_vec();
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(n.min(40))
        .x_label_formatter(&|x| {
            let r = x.round();
            if (x - r).abs() < 1e-6 && r >= 0.0 {
                cats.get(r as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&crate::plots::tick)
        .disable_x_mesh()
        .label_style(crate::plots::font(12.0))
        .axis_desc_style(crate::plots::font(15.0))
        .draw()
        .map_err(|e| e.to_string())?;
    let mut base = vec![0.0; n];
    for (li, (label, values)) in layers.iter().enumerate() {
        let c = colour(li, layers.len().max(2));
        let rects: Vec<Rectangle<(f64, f64)>> = (0..n)
            .map(|i| {
                let v = values.get(i).copied().filter(|x| x.is_finite()).unwrap_or(0.0);
                let r = Rectangle::new([(i as f64 - 0.35, base[i]), (i as f64 + 0.35, base[i] + v)], c.filled());
                base[i] += v;
                r
            })
            .collect();
        let a = chart.draw_series(rects).map_err(|e| e.to_string())?;
        if layers.len() > 1 {
            a.label(label.clone()).legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
        }
    }
    if layers.len() > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(crate::plots::font(13.0))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg_test::{svg_elements, svg_lines, svg_texts};

    /// Every point of every series is drawn: a line through its points, a step series with a
    /// corner per point (held up to its end), a dot per scatter point; each named in the legend.
    #[test]
    fn lines_draw_every_point() {
        let d = std::env::temp_dir().join(format!("wsn-figures-points-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let line = Series::line("a line", (0..5).map(|i| (i as f64, 1.0 + i as f64)).collect());
        // Three values, each held until the next and the last up to x = 8: six corners.
        let step = Series::step("a step", vec![(1.0, 2.0), (3.0, 4.0), (5.0, 3.0)]).ending_at(Some(8.0));
        let scatter = Series::scatter("a scatter", (0..7).map(|i| (i as f64, 6.0 - i as f64 / 2.0)).collect());
        let series = [line, step, scatter, Series::span(0.0, 10.0)];
        lines(&d, "points", "t", "x", "y", &series, Some((5.0, "U"))).unwrap();
        let svg = d.join("points.svg");
        let t = svg_texts(&svg);
        for want in ["a line", "a step", "a scatter", "U"] {
            assert!(t.iter().any(|t| t == want), "no {want:?} in {t:?}");
        }
        // Vertex counts of the lines.
        let lines: Vec<usize> = svg_lines(&svg).iter().map(Vec::len).collect();
        let circles = svg_elements(&svg, "circle").len();
        assert_eq!(lines.iter().filter(|&&n| n == 5).count(), 1, "the line: {lines:?}");
        assert_eq!(lines.iter().filter(|&&n| n == 6).count(), 1, "the step: {lines:?}");
        assert!(lines.iter().all(|&n| n <= 6), "{lines:?}");
        assert_eq!(circles, 7, "the scatter");
        std::fs::remove_dir_all(&d).ok();
    }

    /// A rate that climbs steeply to a peak, is halved and climbs again, as an IFRC node's rate
    /// seen over a whole run, keeps its drop in the bitmap: plotters' wide-line polygon folded
    /// over at the peak and lost the drop from the PNG while the SVG had it (session 31, Fig. 15
    /// of `wsn compare`). The figure is drawn into a pixel buffer; below the peak's pixel every
    /// row has a pixel of the line within two columns of it (mutation-checked: drawn as one
    /// polyline, 60 rows of the drop are missing).
    #[test]
    fn a_drop_after_a_steep_climb_is_drawn() {
        crate::plots::ensure_font().unwrap();
        // IFRC's slow start: the rate grows by 0.0025 pkt/s at every packet (1/r s) from 0.02 to
        // 2.3 pkt/s, over about 1,900 s; it is halved, and climbs again by 0.025 every 0.8 s.
        let (mut t, mut r) = (0.0, 0.02f64);
        let mut pts = Vec::new();
        while r < 2.3 {
            pts.push((t, r));
            t += 1.0 / r;
            r += 0.0025 * r.max(0.1);
        }
        for k in 0..25 {
            pts.push((t + 0.17 + 0.8 * k as f64, 1.0557 + 0.025 * k as f64));
        }
        let (w, h) = SIZE;
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            draw_lines(&root, "t", "x", "y", &[Series::step("", pts)], None, None).unwrap();
            root.present().unwrap();
        }
        // The line is the only coloured thing (no legend: the series has no label).
        let coloured = |x: u32, y: u32| {
            let i = ((y * w + x) * 3) as usize;
            let (r, g, b) = (buf[i], buf[i + 1], buf[i + 2]);
            r.abs_diff(g) > 40 || g.abs_diff(b) > 40 || r.abs_diff(b) > 40
        };
        let mut peaks = Vec::new();
        let top = (0..h).find(|&y| (0..w).any(|x| coloured(x, y))).expect("a line");
        for x in 0..w {
            if coloured(x, top) && !peaks.iter().any(|&p: &u32| p + 3 > x) {
                peaks.push(x);
            }
        }
        assert!(!peaks.is_empty());
        let bottom = (0..h).rev().find(|&y| (0..w).any(|x| coloured(x, y))).unwrap();
        for &p in &peaks {
            let missing: Vec<u32> = (top..bottom.min(top + 120))
                .filter(|&y| !(p.saturating_sub(2)..(p + 3).min(w)).any(|x| coloured(x, y)))
                .collect();
            assert!(missing.is_empty(), "the drop at column {p} misses rows {missing:?}");
        }
    }

    /// A line that climbs, steps one pixel sideways and falls back has turned back as much as one
    /// that falls from its peak at once (a review's case: judged move by move, the two right
    /// angles hid the turn, and the even-odd fill hollowed out the spike); a step line's right
    /// angles are no turn back; and a piece's last vertex starts the next.
    #[test]
    fn split_at_reversals_sees_a_turn_behind_a_sideways_pixel() {
        let (w, h) = SIZE;
        let mut buf = vec![255u8; (w * h * 3) as usize];
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        // About one pixel per x unit and 200 pixels per y unit.
        let chart = ChartBuilder::on(&root).build_cartesian_2d(0f64..1000.0, 0f64..2.5).unwrap();
        let spike = vec![(500.0, 0.1), (500.0, 2.0), (500.8, 2.0025), (501.1, 0.1)];
        let pieces = split_at_reversals(&chart, spike.clone());
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(pieces[0].last(), pieces[1].first());
        assert_eq!(pieces.iter().map(Vec::len).sum::<usize>(), spike.len() + 1);
        let steps = vec![(100.0, 1.0), (300.0, 1.0), (300.0, 2.0), (500.0, 2.0), (500.0, 1.5), (800.0, 1.5)];
        assert_eq!(split_at_reversals(&chart, steps.clone()), vec![steps]);
        assert_eq!(split_at_reversals(&chart, vec![(1.0, 1.0)]), vec![vec![(1.0, 1.0)]]);
        assert!(split_at_reversals(&chart, vec![]).is_empty());
    }

    /// The legend goes to the upper left when the curves rise to the right, and stays at the
    /// upper right otherwise.
    #[test]
    fn legend_avoids_the_data() {
        let rising = [Series::line("a", vec![(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)])];
        let falling = [Series::line("a", vec![(0.0, 4.0), (1.0, 3.0), (2.0, 2.0), (3.0, 1.0)])];
        let flat = [Series::line("a", vec![(0.0, 4.0), (3.0, 4.0)])];
        let b = |s: &[Series]| {
            let (x0, x1, y0, y1) = bounds(s, None);
            legend_corner(s, (x0, x1), (y0, y1))
        };
        assert!(matches!(b(&rising), SeriesLabelPosition::UpperLeft));
        assert!(matches!(b(&falling), SeriesLabelPosition::UpperRight));
        assert!(matches!(b(&flat), SeriesLabelPosition::UpperRight));
        assert!(matches!(b(&[]), SeriesLabelPosition::UpperRight));
    }

    /// An infinite or NaN reference line or axis cap (the reliable baseline's U = ∞) is left
    /// out instead of stretching the axis to infinity (plotters would never finish).
    #[test]
    fn non_finite_reference_line_and_cap_are_ignored() {
        let d = std::env::temp_dir().join(format!("wsn-figures-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let s = vec![Series::step("", vec![(0.0, 1.0), (10.0, 3.0)]), Series::markers("cuts", vec![(5.0, 2.0)])];
        for (h, cap) in
            [(f64::INFINITY, Some(f64::INFINITY)), (f64::NAN, Some(f64::NAN)), (f64::INFINITY, None), (2.0, Some(-1.0))]
        {
            lines_clipped(&d, "f", "t", "x", "y", &s, Some((h, "U")), cap).unwrap();
            assert!(std::fs::metadata(d.join("f.png")).unwrap().len() > 1000);
        }
        std::fs::remove_dir_all(&d).ok();
    }

    /// Grouped series share a colour slot; ungrouped ones get their own, in order of appearance.
    #[test]
    fn groups_share_colours() {
        let s = vec![
            Series::step("A", vec![]).in_group(7),
            Series::step("", vec![]).in_group(7),
            Series::line("alone", vec![]),
            Series::step("B", vec![]).in_group(2),
            Series::step("", vec![]).in_group(7),
        ];
        assert_eq!(colour_slots(&s), (vec![0, 0, 1, 2, 0], 3));
        assert_eq!(colour_slots(&[]), (vec![], 0));
        // A span takes no colour.
        let s = vec![Series::line("a", vec![]), Series::span(0.0, 1.0), Series::line("b", vec![])];
        assert_eq!(colour_slots(&s).1, 2);
    }

    /// A span widens the time axis to the whole run (data from 300 to 500 s of a 3,600-s run)
    /// and draws nothing, not even a legend entry.
    #[test]
    fn a_span_widens_the_axis_only() {
        let d = std::env::temp_dir().join(format!("wsn-figures-span-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let data = Series::step("rate", vec![(300.0, 1.0), (500.0, 2.0)]);
        let texts = |name: &str| svg_texts(&d.join(format!("{name}.svg")));
        lines(&d, "cut", "t", "time (s)", "y", &[data], None).unwrap();
        assert!(!texts("cut").iter().any(|t| t == "3000"), "{:?}", texts("cut"));
        let data = Series::step("rate", vec![(300.0, 1.0), (500.0, 2.0)]);
        lines(&d, "whole", "t", "time (s)", "y", &[data, Series::span(0.0, 3600.0)], None).unwrap();
        let t = texts("whole");
        assert!(t.iter().any(|t| t == "0") && t.iter().any(|t| t == "3000"), "{t:?}");
        assert_eq!(t.iter().filter(|t| t.is_empty()).count(), 0, "{t:?}");
        std::fs::remove_dir_all(&d).ok();
    }

    /// The legend: more than 12 labelled series get one entry saying how many there are; a
    /// reference line gets its own entry, takes no colour of a data series and is not counted
    /// among them; a stacked bar chart names its layers. Ticks print without ".0".
    #[test]
    fn legends_name_many_series_references_and_layers() {
        let d = std::env::temp_dir().join(format!("wsn-figures-legend-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let texts = |name: &str| svg_texts(&d.join(format!("{name}.svg")));
        let mut many: Vec<Series> =
            (0..13).map(|i| Series::line(format!("node {i}"), vec![(0.0, i as f64), (1.0, i as f64)])).collect();
        many.push(Series::reference("offered = goodput", vec![(0.0, 0.0), (1.0, 12.0)]));
        assert_eq!(colour_slots(&many).1, 13, "the reference takes no colour");
        lines(&d, "many", "t", "x", "y", &many, None).unwrap();
        let t = texts("many");
        assert!(t.iter().any(|t| t == "13 series, one colour each, the last drawn on top"), "{t:?}");
        assert!(t.iter().any(|t| t == "offered = goodput"), "{t:?}");
        assert!(!t.iter().any(|t| t == "node 3"), "{t:?}");
        bars(
            &d,
            "stack",
            "t",
            "x",
            "y",
            &["a".into(), "b".into()],
            &[("got".into(), vec![1.0, 2.0]), ("lost".into(), vec![0.5, 0.0])],
        )
        .unwrap();
        let t = texts("stack");
        assert!(t.iter().any(|t| t == "got") && t.iter().any(|t| t == "lost"), "{t:?}");
        assert!(t.iter().any(|t| t == "1") && !t.iter().any(|t| t.ends_with(".0")), "{t:?}");
        std::fs::remove_dir_all(&d).ok();
    }

    /// Mutation audit (session 36): what the generic line figures decide, each as documented.
    mod audit36 {
        use super::*;
        use crate::svg_test::svg_attr;

        fn temp(tag: &str) -> std::path::PathBuf {
            let d = std::env::temp_dir().join(format!("wsn-figures-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            d
        }

        /// The axes of a line figure (`bounds`) cover the data and the horizontal reference line
        /// (it is drawn across the figure: above the axis it would be lost), ignore points that
        /// are not finite, and are never empty: one x value alone, or only zeros, still give an
        /// axis with a width and a height.
        #[test]
        fn bounds_cover_data_and_reference_line_and_are_never_empty() {
            let s = [Series::line("", vec![(1.0, 2.0), (4.0, 3.0), (f64::INFINITY, 50.0), (2.0, f64::NAN)])];
            let (x0, x1, y0, y1) = bounds(&s, None);
            assert!(x0 <= 1.0 && x1 >= 4.0 && x1.is_finite() && y0 == 0.0 && (3.0..50.0).contains(&y1), "{x1} {y1}");
            let (_, _, _, y1) = bounds(&s, Some(10.0));
            assert!(y1 >= 10.0, "{y1}");
            let (x0, x1, _, _) = bounds(&[Series::line("", vec![(5.0, 1.0)])], None);
            assert!(x0 < x1 && x0 <= 5.0 && x1 >= 5.0, "{x0}..{x1}");
            let (_, _, y0, y1) = bounds(&[Series::line("", vec![(0.0, 0.0), (3.0, 0.0)])], None);
            assert!(y1 > y0, "{y0}..{y1}");
        }

        /// `hsv` converts hue, saturation and value to RGB: a quarter into each sixth of the hue
        /// circle (15°, 75°, …) at full saturation and value.
        #[test]
        fn hsv_converts_each_sixth_of_the_hue_circle() {
            let want = [
                (1.0, 0.25, 0.0),
                (0.75, 1.0, 0.0),
                (0.0, 1.0, 0.25),
                (0.0, 0.75, 1.0),
                (0.25, 0.0, 1.0),
                (1.0, 0.0, 0.75),
            ];
            for (k, w) in want.into_iter().enumerate() {
                let (r, g, b) = hsv((k as f64 + 0.25) / 6.0, 1.0, 1.0);
                assert!(
                    (r - w.0).abs() < 1e-9 && (g - w.1).abs() < 1e-9 && (b - w.2).abs() < 1e-9,
                    "{k}: {:?}",
                    (r, g, b)
                );
            }
            assert_eq!(hsv(0.3, 0.0, 0.5), (0.5, 0.5, 0.5));
        }

        /// `lines_clipped`: "the y axis ending at `y_max` at most (points above it are cut off at
        /// the top of the plot)": data up to 100 with `y_max` 5 get y ticks up to 5, no further.
        #[test]
        fn lines_clipped_ends_the_y_axis_at_y_max() {
            let d = temp("audit36-clip");
            let s = [Series::line("a", vec![(0.0, 1.0), (1.0, 100.0), (2.0, 2.0)])];
            lines_clipped(&d, "c", "t", "x", "y", &s, None, Some(5.0)).unwrap();
            let svg = d.join("c.svg");
            let y_ticks: Vec<f64> = crate::svg_test::svg_elements(&svg, "text")
                .iter()
                .zip(svg_texts(&svg))
                .filter(|(e, _)| svg_attr(e, "text-anchor").as_deref() == Some("end"))
                .filter_map(|(_, t)| t.parse().ok())
                .collect();
            let top = y_ticks.iter().copied().fold(0.0, f64::max);
            assert!((4.0..=5.0).contains(&top), "{y_ticks:?}");
            std::fs::remove_dir_all(&d).ok();
        }

        /// "A legend for up to 12 labelled entries": 12 labelled series are each named, with no
        /// entry counting them (README: named in the legend up to 12 lines).
        #[test]
        fn twelve_series_are_each_named() {
            let d = temp("audit36-twelve");
            let s: Vec<Series> =
                (0..12).map(|i| Series::line(format!("node {i}"), vec![(0.0, i as f64), (1.0, i as f64)])).collect();
            lines(&d, "twelve", "t", "x", "y", &s, None).unwrap();
            let t = svg_texts(&d.join("twelve.svg"));
            for i in 0..12 {
                assert!(t.iter().any(|t| *t == format!("node {i}")), "no node {i}: {t:?}");
            }
            assert!(!t.iter().any(|t| t.contains(" series, one colour each")), "{t:?}");
            std::fs::remove_dir_all(&d).ok();
        }

        /// `split_at_reversals` splits where the line "turns back on itself … (by more than about
        /// 140°)": a turn of 125° keeps one piece, a turn of 160° makes two.
        #[test]
        fn split_at_reversals_splits_at_turns_beyond_about_140_degrees() {
            let (w, h) = SIZE;
            let mut buf = vec![255u8; (w * h * 3) as usize];
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            // One unit per pixel in both directions.
            let chart = ChartBuilder::on(&root).build_cartesian_2d(0f64..w as f64, 0f64..h as f64).unwrap();
            let turn = |deg: f64| {
                let a = (180.0 - deg).to_radians();
                vec![(300.0, 200.0), (500.0, 200.0), (500.0 - 200.0 * a.cos(), 200.0 + 200.0 * a.sin())]
            };
            assert_eq!(split_at_reversals(&chart, turn(125.0)).len(), 1);
            assert_eq!(split_at_reversals(&chart, turn(160.0)).len(), 2);
        }

        /// `legend_corner`: the upper right "unless more of the data's points lie under the upper
        /// right than under the upper left": points high in the middle lie under neither corner.
        #[test]
        fn legend_corner_counts_only_points_under_the_corners() {
            let s = [Series::line("a", vec![(0.0, 4.0), (4.9, 4.0), (5.0, 4.0), (5.1, 4.0), (10.0, 0.0)])];
            let (x0, x1, y0, y1) = bounds(&s, None);
            assert!(matches!(legend_corner(&s, (x0, x1), (y0, y1)), SeriesLabelPosition::UpperRight));
        }

        /// `Series::ending_at`: a step series' end is "ignored when not finite or before its last
        /// point": the last value is then held to the figure's right edge.
        #[test]
        fn a_step_end_before_its_last_point_is_ignored() {
            let d = temp("audit36-end");
            let s = [Series::step("", vec![(2.0, 1.0), (5.0, 2.0)]).ending_at(Some(1.0)), Series::span(0.0, 10.0)];
            lines(&d, "end", "t", "x", "y", &s, None).unwrap();
            let steps = crate::svg_test::lines_with(&d.join("end.svg"), 4);
            assert_eq!(steps.len(), 1, "{steps:?}");
            let v = &steps[0];
            assert!(v[3].0 > v[2].0 && (v[3].1 - v[2].1).abs() < 1e-9, "held to the right: {v:?}");
            std::fs::remove_dir_all(&d).ok();
        }
    }
}
