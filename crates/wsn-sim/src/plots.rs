//! Plots (PNG and SVG) of a run and of a sweep.
//!
//! Every plot is drawn by one function generic over the plotters backend, called once with a
//! bitmap backend (PNG) and once with an SVG backend. Text uses DejaVu Sans embedded from
//! `assets/DejaVuSans.ttf` and registered as the family `sans-serif`, so rendering needs no system
//! fonts. Degenerate inputs (no flows, an empty time series, one node, NaN) give an empty but
//! valid plot, never a panic.

use std::fmt::Display;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::runner::RunResult;

/// Size of every plot, pixels.
const SIZE: (u32, u32) = (1000, 600);
/// Font family the embedded font is registered under.
const FONT: &str = "sans-serif";
/// Flows drawn individually in `goodput_time`.
const MAX_THIN_FLOWS: usize = 60;

static FONT_ONCE: Once = Once::new();
static FONT_OK: AtomicBool = AtomicBool::new(false);

/// Register the embedded font once per process.
pub(crate) fn ensure_font() -> Result<(), String> {
    FONT_ONCE.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        let ok = plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok();
        FONT_OK.store(ok, Ordering::SeqCst);
    });
    if FONT_OK.load(Ordering::SeqCst) {
        Ok(())
    } else {
        Err("the embedded font assets/DejaVuSans.ttf could not be loaded".into())
    }
}

/// Turn any displayable error into a `String`.
trait StrErr<T> {
    fn s(self) -> Result<T, String>;
}

impl<T, E: Display> StrErr<T> for Result<T, E> {
    fn s(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

type Area<DB> = DrawingArea<DB, Shift>;

/// Draw `$draw(&root, args…)` into `$dir/$name.png` and `$dir/$name.svg`.
/// (`render!(dir, name, size, draw(…))` draws at `size` pixels instead of [`SIZE`].)
macro_rules! render {
    ($dir:expr, $name:expr, $draw:ident ( $($arg:expr),* )) => {
        render!($dir, $name, SIZE, $draw($($arg),*))
    };
    ($dir:expr, $name:expr, $size:expr, $draw:ident ( $($arg:expr),* )) => {{
        let png = $dir.join(format!("{}.png", $name));
        {
            let root = BitMapBackend::new(&png, $size).into_drawing_area();
            $draw(&root, $($arg),*).map_err(|e| format!("{}: {e}", png.display()))?;
            root.present().map_err(|e| format!("{}: {e}", png.display()))?;
        }
        let svg = $dir.join(format!("{}.svg", $name));
        {
            let root = SVGBackend::new(&svg, $size).into_drawing_area();
            $draw(&root, $($arg),*).map_err(|e| format!("{}: {e}", svg.display()))?;
            root.present().map_err(|e| format!("{}: {e}", svg.display()))?;
        }
    }};
}

/// The font size for a figure title of `title` on a 1000-pixel-wide figure: `base`, or smaller
/// for a long title (long scenario names, several sinks), so that it fits the width, but never
/// below 11 px (a still longer title is cut at its ends). [`font`] draws it at the even size
/// at or below this one (10 px at the least).
pub(crate) fn caption_size(title: &str, base: f64) -> f64 {
    // DejaVu Sans averages about 0.55 em per character; 960 of the 1000 pixels are usable.
    let fits = 960.0 / (0.55 * title.chars().count().max(1) as f64);
    base.min(fits).max(11.0)
}

/// The figures' text style at `size` pixels, taken down to a whole even number of pixels (at
/// least 2). plotters' font renderer (`ab_glyph`) places each glyph at half the size plus the
/// glyph's top and cuts that toward zero, so at an odd or fractional size glyphs whose tops lie
/// above and below that point land a pixel apart: a decimal point or comma sat a pixel above
/// the digits' baseline in the PNGs ("4·5"). At an even size the sum is whole and every glyph
/// keeps the baseline. The SVGs, whose text the viewer draws, get the same sizes.
pub(crate) fn font(size: f64) -> TextStyle<'static> {
    TextStyle::from((FONT, even_px(size)).into_font())
}

/// `size` down to a whole even number of pixels, at least 2 (see [`font`]).
fn even_px(size: f64) -> f64 {
    (2.0 * (size / 2.0).floor()).max(2.0)
}

/// `v` if finite, else 0.
fn fin(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// A finite, non-empty range `[lo, hi]` for data that spans `lo..hi` (padding a single value).
fn span(lo: f64, hi: f64, min_width: f64) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    if hi - lo >= min_width {
        (lo, hi)
    } else {
        let mid = (lo + hi) / 2.0;
        (mid - min_width / 2.0, mid + min_width / 2.0)
    }
}

/// The top of a y axis whose legend sits in the upper-left corner over the data: room for the
/// legend box above the highest value (about a third of the height).
fn y_top_under_legend(max: f64) -> f64 {
    y_top(max) * 1.35
}

/// Upper end of a y axis starting at 0 that shows `max` with some head room.
fn y_top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.15
    } else {
        1.0
    }
}

/// Write a centred grey note (e.g. "no data") in the middle of `area`.
fn note<DB: DrawingBackend>(area: &Area<DB>, text: &str) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let style = font(20.0).color(&RGBColor(120, 120, 120)).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(text, &style, (w as i32 / 2, h as i32 / 2)).s()
}

/// A chart with `f64` axes, as every chart of this module has.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The grid every chart here shares: light grey lines, [`tick`] labels on both axes, 13-point
/// labels and `desc`-point axis titles. The caller adds the titles and anything of its own.
fn mesh<'a, 'b, DB: DrawingBackend>(
    chart: &'b mut Chart<'a, DB>,
    desc: f64,
) -> MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, DB> {
    let mut style = chart.configure_mesh();
    style
        .light_line_style(RGBColor(240, 240, 240))
        .y_label_formatter(&tick)
        .x_label_formatter(&tick)
        .label_style(font(13.0))
        .axis_desc_style(font(desc));
    style
}

/// Draw the legend of `chart`'s labelled series at `position`, in the style every chart shares.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>, position: SeriesLabelPosition) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.5))
        .label_font(font(14.0))
        .draw()
        .s()
}

fn run_title(r: &RunResult) -> String {
    format!("{} (preset {}, seed {})", r.summary.scenario, r.summary.preset, r.summary.seed)
}

/// Write the plots of `r` into `dir`: each as PNG (1000×600) and SVG.
///
/// Always `goodput_per_flow`, `goodput_time` (a last bin shorter than half a bin left out),
/// `tree` (and `tree_sink<id>` per further sink) and `network_time`; `queues_time` when any
/// queue held a packet; with rate-controlled agents (IFRC) and at most 200 nodes `rates_time`;
/// with RCRT endpoints, each once there is something to draw, `congestion_time`,
/// `allocations_time`, `repairs_per_flow` and `reception_time`.
pub fn write_all(dir: &Path, r: &RunResult) -> Result<(), String> {
    ensure_font()?;
    render!(dir, "goodput_per_flow", draw_goodput_per_flow(r));
    render!(dir, "goodput_time", draw_goodput_time(r));
    render!(dir, "tree", draw_tree(r, 0));
    // One more figure per further sink, up to `MAX_TREE_FIGURES` trees in all.
    for (k, s) in r.network.sinks().iter().enumerate().skip(1).take(MAX_TREE_FIGURES - 1) {
        render!(dir, crate::output::tree_figure_stem(*s), draw_tree(r, k));
    }
    render!(dir, "network_time", draw_network_time(r));
    let net = &r.network;
    let end = r.summary.sim_seconds;
    if net.len() <= 200 && (0..net.len()).any(|i| !net.rate_trace(i).is_empty()) {
        // One step line per node (the sink's pseudo-rate is left out: it starts near the
        // channel's capacity and would flatten every other line).
        let nodes: Vec<usize> = (0..net.len())
            .filter(|&i| !net.sinks().contains(&wsn_wire::NodeId(i as u16)))
            .filter(|&i| !net.rate_trace(i).is_empty())
            .collect();
        let sinks = if net.sinks().len() == 1 { "the sink" } else { "the sinks" };
        let labels = node_labels(&nodes, format!("one line per node ({} nodes; {sinks} left out)", nodes.len()));
        let series: Vec<crate::figures::Series> = nodes
            .iter()
            .zip(labels)
            .map(|(&i, label)| {
                let mut pts: Vec<(f64, f64)> = net.rate_trace(i).iter().map(|&(t, v, _)| (t, v)).collect();
                if let Some(&(_, v)) = pts.last() {
                    pts.push((end, v));
                }
                crate::figures::Series::step(label, pts)
            })
            .collect();
        crate::figures::lines(
            dir,
            "rates_time",
            &format!("Node rates r_i(t) — {}", run_title(r)),
            "time (s)",
            "rate (pkt/s)",
            &series,
            None,
        )?;
    }
    if net.flows().iter().any(|f| !f.rcrt.levels.is_empty()) {
        congestion_figure(dir, "congestion_time", &format!("C_i per flow — {}", run_title(r)), net)?;
    }
    if net.flows().iter().any(|f| !f.rcrt.rates.is_empty()) {
        let mean = r.summary.totals.mean_goodput_pps;
        allocation_figure(
            dir,
            "allocations_time",
            &format!("Allocated rate r_i(t) per flow — {}", run_title(r)),
            net,
            mean,
        )?;
    }
    if r.summary.flows.iter().any(|f| f.e2e_repaired.is_some()) {
        repairs_figure(
            dir,
            "repairs_per_flow",
            &format!("Packets repaired end to end — {}", run_title(r)),
            &r.summary,
        )?;
    }
    if net.flows().iter().any(|f| !f.rcrt.deliveries.is_empty()) {
        reception_figure(
            dir,
            "reception_time",
            &format!("Packet reception (sequence number vs time) — {}", run_title(r)),
            net,
        )?;
    }
    let bin_s = r.bin.as_secs_f64();
    let end_s = net.end().as_secs_f64();
    let queued: Vec<usize> = (0..net.len()).filter(|&i| net.queue_bins(i).iter().any(|&q| q > 0)).collect();
    let many = format!("one line per node that queued a packet ({} of {} nodes)", queued.len(), net.len());
    let series: Vec<crate::figures::Series> = queued
        .iter()
        .zip(node_labels(&queued, many))
        .map(|(&i, label)| {
            // Each bin at its end, as in queues.csv.
            let pts = net
                .queue_bins(i)
                .iter()
                .enumerate()
                .map(|(b, &q)| (((b + 1) as f64 * bin_s).min(end_s), q as f64))
                .collect();
            crate::figures::Series::line(label, pts)
        })
        .collect();
    // Per-node lines stop being readable (and cheap) beyond a few hundred nodes.
    if !series.is_empty() && series.len() <= 200 {
        let cap = (0..net.len()).map(|i| net.queue_capacity(i)).max().unwrap_or(0) as f64;
        // The time axis from 0, as the other time plots (the first bin ends at one bin).
        let mut series = series;
        series.push(crate::figures::Series::span(0.0, end_s));
        crate::figures::lines(
            dir,
            "queues_time",
            &format!("Largest queue per node and {bin_s} s bin — {}", run_title(r)),
            "time (s)",
            "queue (packets)",
            &series,
            Some((cap, "queue capacity")),
        )?;
    }
    Ok(())
}

/// Per-node lines labelled in the legend of [`crate::figures::lines`]: `node <id>` each
/// ([`legend_labels`]).
fn node_labels(nodes: &[usize], many: String) -> Vec<String> {
    legend_labels(nodes.iter().map(|i| format!("node {i}")).collect(), many)
}

/// Per-flow series labelled the same way: `flow <source> → <sink>` each.
fn flow_labels(flows: &[&crate::network::Flow], many: String) -> Vec<String> {
    legend_labels(flows.iter().map(|f| format!("flow {} → {}", f.source.0, f.sink.0)).collect(), many)
}

/// The legend labels of one series per item: `names` for up to [`MAX_NODE_LABELS`] series,
/// else `many` on the first series only (one legend entry that says what the lines are, as
/// `goodput_time`'s "one flow each"; the others stay unlabelled).
fn legend_labels(names: Vec<String>, many: String) -> Vec<String> {
    if names.len() <= MAX_NODE_LABELS {
        names
    } else {
        std::iter::once(many).chain(std::iter::repeat_n(String::new(), names.len() - 1)).collect()
    }
}

/// The most per-node lines named one by one in a legend (`figures::lines` draws a legend of up
/// to 12 labelled entries).
const MAX_NODE_LABELS: usize = 12;

/// RCRT: every flow's allocated rate r_i(t) (step lines, each ending when its flow closed) and
/// the mean per-flow goodput as a reference line, written as `dir/name.png` and `.svg` (the RCRT
/// paper's Fig. 3).
pub fn allocation_figure(
    dir: &Path,
    name: &str,
    title: &str,
    net: &crate::network::Network,
    mean_goodput: f64,
) -> Result<(), String> {
    use crate::figures::Series;
    // Labelled `flow <source> → <sink>` as the reception and congestion figures: a source with a
    // flow to each of two sinks was two legend entries both reading `node <source>`.
    let flows: Vec<&crate::network::Flow> = net.flows().iter().filter(|f| !f.rcrt.rates.is_empty()).collect();
    let labels = flow_labels(&flows, format!("one line per flow ({} flows)", flows.len()));
    let series: Vec<Series> = flows
        .iter()
        .zip(labels)
        .map(|(f, label)| Series::step(label, f.rcrt.rates.clone()).ending_at(f.rcrt.closed_s))
        .chain(std::iter::once(Series::span(0.0, net.end().as_secs_f64())))
        .collect();
    crate::figures::lines(dir, name, title, "time (s)", "rate (pkt/s)", &series, Some((mean_goodput, "mean goodput")))
}

/// RCRT and the reliable baseline: the share of each flow's delivered packets that were repaired
/// end to end, one bar per flow labelled by its source, written as `dir/name.png` and `.svg` (the
/// RCRT paper's Fig. 6).
pub fn repairs_figure(dir: &Path, name: &str, title: &str, summary: &crate::runner::Summary) -> Result<(), String> {
    let flows: Vec<&crate::runner::FlowSummary> = summary.flows.iter().filter(|f| f.e2e_repaired.is_some()).collect();
    // With flows to several sinks a source can have two bars: each is then labelled
    // `source→sink` (it was the source alone, two bars reading the same).
    let several_sinks = flows.iter().any(|f| f.sink != flows[0].sink);
    let cats: Vec<String> = flows
        .iter()
        .map(|f| if several_sinks { format!("{}→{}", f.source, f.sink) } else { f.source.to_string() })
        .collect();
    let x_label = if several_sinks { "flow (source node → sink)" } else { "source node" };
    let reps: Vec<f64> =
        flows.iter().map(|f| 100.0 * f.e2e_repaired.unwrap_or(0) as f64 / f.delivered.max(1) as f64).collect();
    let nothing_delivered = flows.iter().all(|f| f.delivered == 0);
    let title = if nothing_delivered { format!("{title} (nothing delivered)") } else { title.to_string() };
    // The share is of the flow's delivered packets (as sweep.csv's `max_e2e_repaired_share`), which
    // the axis says: "% of packets" left a reader to guess between generated, originated and delivered.
    let y_label = "repaired (% of delivered packets)";
    if reps.iter().all(|&v| v == 0.0) {
        // No bar to draw: `figures::bars` would scale its axis 0–1, which reads as a fraction.
        // The same chart with the percentage's whole axis, 0–100, and a note instead.
        let why = if nothing_delivered { "no flow delivered a packet" } else { "no packet was repaired" };
        ensure_font()?;
        render!(dir, name, FIGURE_SIZE, draw_no_bars(&title, x_label, y_label, &cats, (0.0, 100.0), why));
        return Ok(());
    }
    crate::figures::bars(dir, name, &title, x_label, y_label, &cats, &[("repaired".into(), reps)])
}

/// The size of the figures of [`crate::figures`], for one drawn here in their stead.
const FIGURE_SIZE: (u32, u32) = crate::figures::SIZE;

/// An empty bar chart in the style of [`crate::figures::bars`] (a category per tick), with the
/// y axis over `y` and `why` written across it.
fn draw_no_bars<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    y: (f64, f64),
    why: &str,
) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    let n = categories.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, font(caption_size(title, 20.0)))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, y.0..y.1)
        .s()?;
    let category = |x: &f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 && r >= 0.0 {
            categories.get(r as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(n.min(40))
        .x_label_formatter(&category)
        .y_label_formatter(&tick)
        .disable_x_mesh()
        .label_style(font(12.0))
        .axis_desc_style(font(15.0))
        .draw()
        .s()?;
    note(&chart.plotting_area().strip_coord_spec(), why)
}

/// RCRT: the application sequence number of every in-order delivery against time, one colour per
/// flow, written as `dir/name.png` and `.svg` (the RCRT paper's Fig. 5).
pub fn reception_figure(dir: &Path, name: &str, title: &str, net: &crate::network::Network) -> Result<(), String> {
    use crate::figures::Series;
    let flows: Vec<&crate::network::Flow> = net.flows().iter().filter(|f| !f.rcrt.deliveries.is_empty()).collect();
    let labels = flow_labels(&flows, format!("one colour per flow ({} flows)", flows.len()));
    let series: Vec<Series> = flows
        .iter()
        .zip(labels)
        .map(|(f, label)| Series::scatter(label, f.rcrt.deliveries.iter().map(|&(t, q)| (t, q as f64)).collect()))
        .chain(std::iter::once(Series::span(0.0, net.end().as_secs_f64())))
        .collect();
    crate::figures::lines(dir, name, title, "time (s)", "sequence number", &series, None)
}

/// RCRT: every flow's congestion level C_i over time as its sink computes it (step lines), the
/// cuts of R as markers at the triggering flow's level, and the first sink's upper threshold U,
/// written as `dir/name.png` and `.svg`.
pub fn congestion_figure(dir: &Path, name: &str, title: &str, net: &crate::network::Network) -> Result<(), String> {
    use crate::figures::Series;
    let flows: Vec<&crate::network::Flow> = net.flows().iter().filter(|f| !f.rcrt.levels.is_empty()).collect();
    let labels = flow_labels(&flows, format!("one line per flow ({} flows)", flows.len()));
    let mut series: Vec<Series> = flows
        .iter()
        .zip(labels)
        .map(|(f, label)| Series::step(label, f.rcrt.levels.clone()).ending_at(f.rcrt.closed_s))
        .collect();
    let cuts: Vec<(f64, f64)> = net.decreases().iter().map(|&(t, _, _, level)| (t, level)).collect();
    series.push(Series::markers("decrease of R (at the triggering flow's C_i)", cuts));
    // The whole run on the time axis, also when the levels stop earlier.
    series.push(Series::span(0.0, net.end().as_secs_f64()));
    // The reliable baseline has no congestion control (U = ∞): no threshold line, no axis cut.
    let upper = net
        .sinks()
        .iter()
        .find_map(|&s| net.rcrt_sink(s))
        .map(|k| k.config().upper_threshold)
        .filter(|u| u.is_finite());
    // A collapse can push C_i to hundreds and flatten everything else: the axis stops at 10·U,
    // and the title says when something lies above it.
    let cap = upper.map(|u| 10.0 * u);
    let top = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let title = match cap {
        Some(c) if top > c => format!("{title} (axis cut at 10·U; max {top:.0})"),
        _ => title.to_string(),
    };
    crate::figures::lines_clipped(
        dir,
        name,
        &title,
        "time (s)",
        "congestion level C_i (RTTs of loss repair)",
        &series,
        upper.map(|u| (u, "upper threshold U")),
        cap,
    )
}

// ---------------------------------------------------------------------------------------------
// goodput_per_flow

fn draw_goodput_per_flow<DB: DrawingBackend>(root: &Area<DB>, r: &RunResult) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    // With several sinks the flows are grouped by sink (in id order within a sink), one colour
    // per sink.
    let mut flows: Vec<&crate::runner::FlowSummary> = r.summary.flows.iter().collect();
    let mut sinks: Vec<u16> = Vec::new();
    for f in &flows {
        if !sinks.contains(&f.sink) {
            sinks.push(f.sink);
        }
    }
    flows.sort_by_key(|f| sinks.iter().position(|&s| s == f.sink));
    let gp: Vec<f64> = flows.iter().map(|f| fin(f.goodput_pps).max(0.0)).collect();
    let n = gp.len();
    // The summary's mean: over the flows that started before the end (as `wsn run` prints it).
    let end = r.network.now();
    let started = r.network.flows().iter().filter(|f| f.start < end).count();
    let mean = fin(r.summary.totals.mean_goodput_pps);
    let max = gp.iter().copied().fold(0.0, f64::max);
    let title = format!("Goodput per flow — {}", run_title(r));
    let mut chart = ChartBuilder::on(root)
        .caption(&title, font(caption_size(&title, 22.0)))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        // Room above the bars for the legend (one line per sink and the mean).
        .build_cartesian_2d(-0.6..(n.max(1) as f64 - 0.4), 0.0..y_top_under_legend(max))
        .s()?;
    let sources: Vec<String> = flows.iter().map(|f| f.source.to_string()).collect();
    let label = |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < sources.len() {
            sources[i as usize].clone()
        } else {
            String::new()
        }
    };
    let x_desc = if sinks.len() > 1 { "flow source node (flows grouped by sink)" } else { "flow source node" };
    mesh(&mut chart, 16.0)
        .disable_x_mesh()
        .x_labels(n.clamp(1, 50))
        .x_label_formatter(&label)
        .x_desc(x_desc)
        .y_desc("goodput (pkt/s)")
        .draw()
        .s()?;
    if n == 0 {
        return note(&chart.plotting_area().strip_coord_spec(), "no flows");
    }
    if started == 0 {
        return note(&chart.plotting_area().strip_coord_spec(), "no flow started before the end of the run");
    }
    let half = 0.38;
    for (k, &sink) in sinks.iter().enumerate() {
        let bar = if sinks.len() == 1 { RGBColor(70, 120, 180) } else { FLOW_COLOURS[k % FLOW_COLOURS.len()] };
        let bars = gp
            .iter()
            .enumerate()
            .filter(|(i, _)| flows[*i].sink == sink)
            .map(|(i, &g)| Rectangle::new([(i as f64 - half, 0.0), (i as f64 + half, g)], bar.filled()));
        let label = if sinks.len() == 1 { "goodput of the flow".to_string() } else { format!("flows to sink {sink}") };
        chart
            .draw_series(bars)
            .s()?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], bar.filled()));
    }
    let red = RGBColor(200, 30, 30);
    chart
        .draw_series(DashedLineSeries::new(vec![(-0.6, mean), (n as f64 - 0.4, mean)], 10, 6, red.stroke_width(2)))
        .s()?
        .label(if started == n {
            format!("mean {mean:.3} pkt/s over {n} flows")
        } else {
            format!("mean {mean:.3} pkt/s over the {started} flows that started")
        })
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

// ---------------------------------------------------------------------------------------------
// goodput_time

fn draw_goodput_time<DB: DrawingBackend>(root: &Area<DB>, r: &RunResult) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    let flows = r.network.flows();
    let bin_s = r.bin.as_secs_f64();
    let end_s = fin(r.summary.sim_seconds).max(0.0);
    // (mid-time, length) of every bin worth plotting: drop a trailing sliver under half a bin.
    let mut bins: Vec<(f64, f64)> = Vec::new();
    if bin_s.is_finite() && bin_s > 0.0 {
        let nbins = flows.iter().map(|f| f.bins.len()).max().unwrap_or(0);
        for b in 0..nbins {
            let t0 = b as f64 * bin_s;
            let len = ((b + 1) as f64 * bin_s).min(end_s) - t0;
            if len < 0.5 * bin_s {
                break;
            }
            bins.push((t0 + len / 2.0, len));
        }
    }
    let rate = |f: &crate::network::Flow, b: usize| f.bins.get(b).copied().unwrap_or(0) as f64 / bins[b].1;
    // The mean per bin over the flows that start before the end (the summary's set; a flow adds 0
    // to the bins before it starts).
    let end = r.network.now();
    let started = flows.iter().filter(|f| f.start < end).count();
    let mean: Vec<(f64, f64)> = if started == 0 {
        Vec::new()
    } else {
        (0..bins.len())
            .map(|b| {
                let sum: f64 = flows.iter().filter(|f| f.start < end).map(|f| rate(f, b)).sum();
                (bins[b].0, sum / started as f64)
            })
            .collect()
    };
    let shown = flows.len().min(MAX_THIN_FLOWS);
    let mut max = mean.iter().map(|p| p.1).fold(0.0, f64::max);
    for f in &flows[..shown] {
        for b in 0..bins.len() {
            max = max.max(rate(f, b));
        }
    }
    let title = format!("Goodput over time — {}", run_title(r));
    let mut chart = ChartBuilder::on(root)
        .caption(&title, font(caption_size(&title, 22.0)))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..end_s.max(bin_s.max(1e-9)).max(1.0), 0.0..y_top_under_legend(max))
        .s()?;
    mesh(&mut chart, 16.0).x_desc("time (s)").y_desc(format!("goodput (pkt/s, {} s bins)", trim(bin_s))).draw().s()?;
    if flows.is_empty() || bins.is_empty() || started == 0 {
        let why = if flows.is_empty() {
            "no flows"
        } else if started == 0 {
            "no flow starts before the end of the run"
        } else {
            "no complete time bin"
        };
        return note(&chart.plotting_area().strip_coord_spec(), why);
    }
    shade_outages(&mut chart, r, end_s, y_top(max))?;
    let start = flows.iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
    if start.is_finite() && start > 0.0 && start < end_s {
        let grey = RGBColor(110, 110, 110);
        chart
            .draw_series(DashedLineSeries::new(vec![(start, 0.0), (start, y_top(max))], 6, 6, grey.stroke_width(1)))
            .s()?
            .label(format!("traffic starts ({} s)", trim(start)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1)));
    }
    for (k, f) in flows[..shown].iter().enumerate() {
        let style = FLOW_COLOURS[k % FLOW_COLOURS.len()].mix(0.5).stroke_width(1);
        let anno = chart.draw_series(LineSeries::new((0..bins.len()).map(|b| (bins[b].0, rate(f, b))), style)).s()?;
        if k == 0 {
            let label = if flows.len() > shown {
                format!("one flow each (first {shown} of {} flows)", flows.len())
            } else {
                format!("one flow each ({} flows)", flows.len())
            };
            anno.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    chart
        .draw_series(LineSeries::new(mean, BLACK.stroke_width(3)))
        .s()?
        .label(if started == flows.len() {
            format!("mean over all {} flows", flows.len())
        } else {
            format!("mean over the {started} flows that start before the end (0 before a flow starts)")
        })
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(3)));
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// Shade the time windows of radio outages (`[[outages]]`) up to `top`, with one legend entry
/// naming the nodes (nothing without outages).
fn shade_outages<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    r: &RunResult,
    end_s: f64,
    top: f64,
) -> Result<(), String> {
    let outages: Vec<(usize, f64, f64)> =
        r.network.outages().into_iter().map(|(n, f, t)| (n, f, t.min(end_s))).filter(|o| o.1 < o.2).collect();
    if outages.is_empty() {
        return Ok(());
    }
    let mut windows: Vec<(f64, f64)> = outages.iter().map(|&(_, f, t)| (f, t)).collect();
    windows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    windows.dedup();
    let mut nodes: Vec<usize> = outages.iter().map(|o| o.0).collect();
    nodes.dedup();
    let shown: Vec<String> = nodes.iter().take(8).map(usize::to_string).collect();
    let more = if nodes.len() > 8 { format!(" and {} more", nodes.len() - 8) } else { String::new() };
    let colour = RGBColor(240, 170, 60).mix(0.25);
    chart
        .draw_series(windows.into_iter().map(|(f, t)| Rectangle::new([(f, 0.0), (t, top)], colour.filled())))
        .s()?
        .label(format!("radio off: node{} {}{more}", if nodes.len() > 1 { "s" } else { "" }, shown.join(", ")))
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], colour.filled()));
    Ok(())
}

/// An axis tick label: shortest exact form ("100", "0.25"), no "100.0".
pub(crate) fn tick(v: &f64) -> String {
    let r = (v * 1e9).round() / 1e9;
    if r == 0.0 || !r.is_finite() {
        "0".into()
    } else {
        format!("{r}")
    }
}

/// Colours of the thin per-flow lines (dark enough to stay visible when translucent).
const FLOW_COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(90, 90, 90),
    RGBColor(160, 160, 20),
    RGBColor(23, 170, 190),
];

/// A number without useless decimals ("10", "2.5", "0.0015"), to the nanosecond as [`tick`] (it
/// rounded to the millisecond: a 1.5-ms bin read "0.002 s bins").
fn trim(v: f64) -> String {
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

// ---------------------------------------------------------------------------------------------
// tree

/// Viridis-like colour of `t` in [0, 1], darkened at the yellow end to stay visible on white.
fn ramp(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 6] =
        [(68, 1, 84), (65, 68, 135), (42, 120, 142), (34, 168, 132), (122, 209, 81), (220, 200, 20)];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 } * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let u = t - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * u).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn hop_colour(h: u32, max_h: u32) -> RGBColor {
    ramp(if max_h == 0 { 0.0 } else { h as f64 / max_h as f64 })
}

const UNROUTED: RGBColor = RGBColor(190, 190, 190);

/// With several sinks, `wsn run` draws the trees of the first this many (`tree` for the first,
/// `tree_sink<id>` for the others); a larger network of tiles keeps to the first few.
pub const MAX_TREE_FIGURES: usize = 8;

/// The tree of sink `net.sinks()[k]` on the floor plan (nodes coloured by hop count, an arrow
/// to each node's parent); the other sinks are drawn as nodes of it.
fn draw_tree<DB: DrawingBackend>(root: &Area<DB>, r: &RunResult, k: usize) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    let net = &r.network;
    let rs = &r.summary.routing;
    // With several sinks the depth and parent-change counts are over all trees.
    let which = match net.sinks() {
        [] => "Routing tree".to_string(),
        [s] => format!("Routing tree of sink {}", s.0),
        sinks => {
            let drawn = if sinks.len() > MAX_TREE_FIGURES {
                format!("; the first {MAX_TREE_FIGURES} drawn")
            } else {
                String::new()
            };
            format!("Tree of sink {} ({} of {} sinks{drawn})", sinks[k].0, k + 1, sinks.len())
        }
    };
    // The counts are the run's, over every tree, where the colours are this tree's hops.
    let over = if net.sinks().len() > 1 { "all trees: " } else { "" };
    let title = format!(
        "{which} at t = {} s — {} — {over}max depth {}, parent changes {} ({} during traffic)",
        trim(fin(r.summary.sim_seconds)),
        r.summary.scenario,
        rs.max_depth,
        rs.parent_changes,
        rs.parent_changes_during_traffic
    );
    let root = root.titled(&title, font(caption_size(&title, 19.0))).s()?;
    let (map, legend) = root.split_horizontally(SIZE.0 as i32 - 170);

    let pos: Vec<(f64, f64)> = r.positions.iter().map(|p| (fin(p.x), fin(p.y))).collect();
    let n = pos.len();
    let has_tree = !net.sinks().is_empty();
    let is_sink = |i: usize| net.sinks().iter().any(|s| s.index() == i);
    // The drawn tree is sink k's: another sink is a node of it (drawn as a sink, with its
    // parent and depth in this tree).
    let is_root = |i: usize| net.sinks().get(k).is_some_and(|s| s.index() == i);
    let hops: Vec<Option<u32>> = (0..n)
        .map(|i| {
            if is_root(i) {
                Some(0)
            } else if has_tree && i < net.len() && net.parent(i, k).is_some() {
                net.hop_count(i, k).map(u32::from)
            } else {
                None
            }
        })
        .collect();
    let parents: Vec<Option<usize>> = (0..n)
        .map(|i| {
            if !has_tree || i >= net.len() || is_root(i) {
                return None;
            }
            net.parent(i, k).map(|p| p.index()).filter(|&p| p < n && p != i)
        })
        .collect();
    let max_h = hops.iter().flatten().copied().max().unwrap_or(0);

    // Equal aspect ratio: stretch the data box to the proportions of the plotting area.
    let (margin, xl, yl) = (10u32, 40u32, 55u32);
    let (mw, mh) = map.dim_in_pixel();
    let pw = mw.saturating_sub(2 * margin + yl).max(10) as f64;
    let ph = mh.saturating_sub(2 * margin + xl).max(10) as f64;
    let fold = |f: fn(f64, f64) -> f64, init: f64, sel: fn(&(f64, f64)) -> f64| pos.iter().map(sel).fold(init, f);
    let (x0, x1) = span(fold(f64::min, f64::INFINITY, |p| p.0), fold(f64::max, f64::NEG_INFINITY, |p| p.0), 1.0);
    let (y0, y1) = span(fold(f64::min, f64::INFINITY, |p| p.1), fold(f64::max, f64::NEG_INFINITY, |p| p.1), 1.0);
    let pad = 0.06 * (x1 - x0).max(y1 - y0) + 1.0;
    let (x0, x1, y0, y1) = (x0 - pad, x1 + pad, y0 - pad, y1 + pad);
    let mpp = ((x1 - x0) / pw).max((y1 - y0) / ph); // metres per pixel
    let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    let (hx, hy) = (mpp * pw / 2.0, mpp * ph / 2.0);
    let mut chart = ChartBuilder::on(&map)
        .margin(margin)
        .x_label_area_size(xl)
        .y_label_area_size(yl)
        .build_cartesian_2d((cx - hx)..(cx + hx), (cy - hy)..(cy + hy))
        .s()?;
    mesh(&mut chart, 15.0).x_desc("x (m)").y_desc("y (m)").bold_line_style(RGBColor(215, 215, 215)).draw().s()?;
    if n == 0 {
        return note(&chart.plotting_area().strip_coord_spec(), "no nodes");
    }
    // Node sizes in pixels; the same length in metres is `px * mpp`.
    let (r_node, r_sink) = (7.0, 10.0);
    let radius = |i: usize| if is_sink(i) { r_sink } else { r_node };
    let arrow = RGBColor(80, 80, 80);
    for (i, p) in parents.iter().enumerate() {
        let Some(p) = *p else { continue };
        let others = pos.iter().enumerate().filter(|&(j, _)| j != i && j != p).map(|(_, &q)| q);
        let area = ((cx - hx)..(cx + hx), (cy - hy)..(cy + hy));
        let (line, head) = parent_arrow(pos[i], pos[p], radius(i) * mpp, radius(p) * mpp, mpp, area, others);
        chart.draw_series(std::iter::once(PathElement::new(line, arrow.stroke_width(2)))).s()?;
        if let Some(head) = head {
            chart.draw_series(std::iter::once(Polygon::new(head.to_vec(), arrow.filled()))).s()?;
        }
    }
    let colour = |i: usize| hops[i].map_or(UNROUTED, |h| hop_colour(h, max_h));
    for (i, &at) in pos.iter().enumerate() {
        let c = colour(i);
        if is_sink(i) {
            let s = r_sink as i32;
            let sq = EmptyElement::at(at)
                + Rectangle::new([(-s, -s), (s, s)], c.filled())
                + Rectangle::new([(-s, -s), (s, s)], BLACK.stroke_width(2));
            chart.draw_series(std::iter::once(sq)).s()?;
        } else {
            let s = r_node as i32;
            let dot = EmptyElement::at(at)
                + Circle::new((0, 0), s, c.filled())
                + Circle::new((0, 0), s, BLACK.stroke_width(1));
            chart.draw_series(std::iter::once(dot)).s()?;
        }
    }
    let label_style = font(12.0).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Top));
    let ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let sizes: Vec<(i32, i32)> = ids
        .iter()
        .map(|id| {
            let (w, h) =
                chart.plotting_area().estimate_text_size(id, &label_style).unwrap_or((7 * id.len() as u32, 12));
            (w as i32, h as i32)
        })
        .collect();
    let centres: Vec<(i32, i32)> = pos.iter().map(|p| chart.plotting_area().map_coordinate(p)).collect();
    let radii: Vec<i32> = (0..n).map(|i| radius(i) as i32).collect();
    let corners = label_corners(&centres, &radii, &sizes);
    for (i, id) in ids.into_iter().enumerate() {
        let ((dx, dy), (w, h)) = (corners[i], sizes[i]);
        // A translucent white box behind the id keeps it readable over arrows.
        let t = EmptyElement::at(pos[i])
            + Rectangle::new([(dx - 1, dy), (dx + w + 1, dy + h + 1)], WHITE.mix(0.8).filled())
            + Text::new(id, (dx, dy), label_style.clone());
        chart.draw_series(std::iter::once(t)).s()?;
    }
    draw_tree_legend(&legend, &hops, max_h, has_tree)
}

/// Where each node's id label goes, as its top-left corner relative to the node's centre (in
/// pixels; `centres`, `radii` and the labels' `sizes` in pixels): above right of the node as
/// before, unless that box would cover a label placed earlier or another node (its disc as the
/// square 2 px inside its bounding square), then above left,
/// below right or below left, the first that covers neither (above right when none is free).
/// Nodes are placed in order. Neighbours closer than a label's width had their ids on top of
/// each other (nodes 9 and 10 of a new user's network).
fn label_corners(centres: &[(i32, i32)], radii: &[i32], sizes: &[(i32, i32)]) -> Vec<(i32, i32)> {
    // Boxes as (x0, y0, x1, y1), the label's with the white margin it is drawn with.
    let overlaps = |a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::with_capacity(centres.len());
    let mut corners = Vec::with_capacity(centres.len());
    for (i, (&(cx, cy), &(w, h))) in centres.iter().zip(sizes).enumerate() {
        let off = radii[i] - 1;
        let candidates = [(off, -off - h), (-off - w, -off - h), (off, off), (-off - w, off)];
        let label = |(dx, dy): (i32, i32)| (cx + dx - 1, cy + dy, cx + dx + w + 1, cy + dy + h + 1);
        let free = |c: &(i32, i32)| {
            let b = label(*c);
            placed.iter().all(|&p| !overlaps(b, p))
                && centres
                    .iter()
                    .zip(radii)
                    .enumerate()
                    // The disc as the square 2 px inside its bounding square (a label touching
                    // that square's corner does not cover the disc).
                    .all(|(j, (&(x, y), &r))| j == i || !overlaps(b, (x - r + 2, y - r + 2, x + r - 2, y + r - 2)))
        };
        let c = candidates.iter().copied().find(free).unwrap_or(candidates[0]);
        placed.push(label(c));
        corners.push(c);
    }
    corners
}

/// An arrowhead's corners: the tip, then the two ends of its base.
type ArrowHead = [(f64, f64); 3];

/// The arrow from a node at `a` (drawn with radius `ra`, in metres) to its parent at `b`
/// (radius `rb`), `mpp` metres per pixel: the line from `a`'s edge to the arrowhead's base, and
/// the arrowhead (`None` when the two nodes nearly touch: then the line joins the centres).
/// A straight arrow that would pass within a node's radius (7 px) plus 3 px of another node
/// (`others`) bows as a quadratic curve, a quarter of its length out at the middle: on a chain,
/// 2 → 0 would otherwise lie on top of 2 → 1 → 0 and run through node 1. It bows to its left
/// unless that leaves the plotting area `area` (x range, y range, less 4 px), then to its right,
/// then less deep (0.15, 0.08 of its length); with no room at all it stays straight.
fn parent_arrow(
    a: (f64, f64),
    b: (f64, f64),
    ra: f64,
    rb: f64,
    mpp: f64,
    area: (Range<f64>, Range<f64>),
    others: impl Iterator<Item = (f64, f64)>,
) -> (Vec<(f64, f64)>, Option<ArrowHead>) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let d = (dx * dx + dy * dy).sqrt();
    if d.is_nan() || d <= ra + rb + 8.0 * mpp {
        return (vec![a, b], None);
    }
    let (ux, uy) = (dx / d, dy / d);
    let clear = 10.0 * mpp;
    let crosses = others.into_iter().any(|q| {
        let t = (q.0 - a.0) * ux + (q.1 - a.1) * uy;
        let off = ((q.0 - a.0) * uy - (q.1 - a.1) * ux).abs();
        t > 0.0 && t < d && off < clear
    });
    // The bowed curve sampled, `bow` out to the left (negative: to the right) at the middle.
    let curve = |bow: f64| -> Vec<(f64, f64)> {
        let c = ((a.0 + b.0) / 2.0 - uy * bow * 2.0, (a.1 + b.1) / 2.0 + ux * bow * 2.0);
        (0..=64)
            .map(|k| {
                let t = f64::from(k) / 64.0;
                let (s, u) = ((1.0 - t) * (1.0 - t), 2.0 * t * (1.0 - t));
                (s * a.0 + u * c.0 + t * t * b.0, s * a.1 + u * c.1 + t * t * b.1)
            })
            .collect()
    };
    let inside = |p: &(f64, f64)| {
        let m = 4.0 * mpp;
        p.0 >= area.0.start + m && p.0 <= area.0.end - m && p.1 >= area.1.start + m && p.1 <= area.1.end - m
    };
    // The path as points from `a` to `b`: the first bowed curve that stays inside, or the
    // straight segment.
    let bows = [0.25, -0.25, 0.15, -0.15, 0.08, -0.08];
    let points: Vec<(f64, f64)> = bows
        .iter()
        .filter(|_| crosses)
        .map(|f| curve(f * d))
        .find(|pts| pts.iter().all(inside))
        .unwrap_or_else(|| vec![a, b]);
    let dist = |p: (f64, f64), q: (f64, f64)| ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt();
    // A point at distance `r` from `centre` on the segment from `inside` (nearer than r) to
    // `outside` (at least r away), by bisection.
    let cut = |centre: (f64, f64), r: f64, inside: (f64, f64), outside: (f64, f64)| {
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..30 {
            let mid = (lo + hi) / 2.0;
            let p = (inside.0 + (outside.0 - inside.0) * mid, inside.1 + (outside.1 - inside.1) * mid);
            if dist(p, centre) < r {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (inside.0 + (outside.0 - inside.0) * hi, inside.1 + (outside.1 - inside.1) * hi)
    };
    // Leave `a`'s disc.
    let first = points.iter().position(|&p| dist(p, a) >= ra).unwrap_or(points.len() - 1);
    let start = cut(a, ra, points[first.saturating_sub(1)], points[first]);
    // The tip 2 px before `b`'s edge, the head's base 11 px back along the path.
    let (len, wid) = (11.0 * mpp, 4.5 * mpp);
    let tip_at = points.iter().rposition(|&p| dist(p, b) >= rb + 2.0 * mpp).unwrap_or(0);
    let tip = cut(b, rb + 2.0 * mpp, points[(tip_at + 1).min(points.len() - 1)], points[tip_at]);
    let back = points[..=tip_at].iter().rposition(|&p| dist(p, tip) >= len).unwrap_or(0);
    let (hx, hy) = (tip.0 - points[back].0, tip.1 - points[back].1);
    let h = (hx * hx + hy * hy).sqrt().max(f64::MIN_POSITIVE);
    let (vx, vy) = (hx / h, hy / h);
    let base = (tip.0 - vx * len, tip.1 - vy * len);
    let mut line = vec![start];
    // Points closer than 2 px to the last kept one are left out: plotters draws a wide line's
    // near-zero segments as spikes.
    for &p in points[first..=back.max(first)].iter().chain(std::iter::once(&base)) {
        if dist(p, tip) > len + 2.0 * mpp && dist(p, *line.last().unwrap()) >= 2.0 * mpp {
            line.push(p);
        }
    }
    if dist(*line.last().unwrap(), base) >= 0.5 * mpp {
        line.push(base);
    } else {
        *line.last_mut().unwrap() = base;
    }
    let head = [tip, (base.0 - vy * wid, base.1 + vx * wid), (base.0 + vy * wid, base.1 - vx * wid)];
    (line, Some(head))
}

fn draw_tree_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    hops: &[Option<u32>],
    max_h: u32,
    has_tree: bool,
) -> Result<(), String> {
    let head = font(15.0).color(&BLACK);
    let text = font(14.0).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    let (x, mut y) = (12, 40);
    area.draw_text("hops: nodes", &head, (x, y - 10)).s()?;
    area.draw_text("(as advertised)", &font(12.0).color(&BLACK), (x, y + 6)).s()?;
    y += 34;
    // One row per hop value present, thinned to at most 16 rows.
    let mut present: Vec<u32> = hops.iter().flatten().copied().collect();
    present.sort_unstable();
    present.dedup();
    let step = present.len().div_ceil(16).max(1);
    let mut rows: Vec<u32> = present.iter().copied().step_by(step).collect();
    if let (Some(&last), Some(&shown)) = (present.last(), rows.last()) {
        if last != shown {
            rows.push(last);
        }
    }
    for h in rows {
        let c = hop_colour(h, max_h);
        area.draw(&Circle::new((x + 8, y), 7, c.filled())).s()?;
        area.draw(&Circle::new((x + 8, y), 7, BLACK.stroke_width(1))).s()?;
        let count = hops.iter().filter(|v| **v == Some(h)).count();
        let label = if h == 0 { format!("0 (sink): {count}") } else { format!("{h}: {count}") };
        area.draw_text(&label, &text, (x + 24, y)).s()?;
        y += 22;
    }
    let unrouted = hops.iter().filter(|h| h.is_none()).count();
    if unrouted > 0 {
        area.draw(&Circle::new((x + 8, y), 7, UNROUTED.filled())).s()?;
        area.draw(&Circle::new((x + 8, y), 7, BLACK.stroke_width(1))).s()?;
        area.draw_text(&format!("no route: {unrouted}"), &text, (x + 24, y)).s()?;
        y += 22;
    }
    y += 12;
    area.draw(&Rectangle::new([(x + 1, y - 7), (x + 15, y + 7)], WHITE.filled())).s()?;
    area.draw(&Rectangle::new([(x + 1, y - 7), (x + 15, y + 7)], BLACK.stroke_width(2))).s()?;
    area.draw_text("sink (square)", &text, (x + 24, y)).s()?;
    y += 24;
    if has_tree {
        let grey = RGBColor(80, 80, 80);
        area.draw(&PathElement::new(vec![(x, y), (x + 12, y)], grey.stroke_width(2))).s()?;
        area.draw(&Polygon::new(vec![(x + 18, y), (x + 9, y - 4), (x + 9, y + 4)], grey.filled())).s()?;
        area.draw_text("to parent", &text, (x + 24, y)).s()?;
        y += 20;
    }
    area.draw_text("label: node id", &text, (x, y)).s()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// network_time

fn draw_network_time<DB: DrawingBackend>(root: &Area<DB>, r: &RunResult) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    let title = format!("Routing and delivery over time — {}", run_title(r));
    let root = root.titled(&title, font(caption_size(&title, 21.0))).s()?;
    let (top, bottom) = root.split_vertically(SIZE.1 as i32 * 52 / 100);
    let s = &r.series;
    let end_s = s.iter().map(|p| fin(p.t_s)).fold(fin(r.summary.sim_seconds), f64::max).max(1.0);
    let max_depth = s.iter().map(|p| p.max_depth).max().unwrap_or(0);
    let mut chart = ChartBuilder::on(&top)
        .margin(12)
        .margin_bottom(4)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..end_s, 0.0..(max_depth as f64 + 1.0).max(2.0))
        .s()?;
    mesh(&mut chart, 15.0).y_desc("tree depth (hops)").draw().s()?;
    if s.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no samples")?;
    } else {
        let red = RGBColor(200, 40, 40);
        let blue = RGBColor(40, 90, 190);
        chart
            .draw_series(LineSeries::new(s.iter().map(|p| (fin(p.t_s), p.max_depth as f64)), red.stroke_width(2)))
            .s()?
            .label("max depth")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
        chart
            .draw_series(LineSeries::new(s.iter().map(|p| (fin(p.t_s), fin(p.mean_depth))), blue.stroke_width(2)))
            .s()?
            .label("mean depth of routed nodes")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2)));
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }

    let max_del = s.iter().map(|p| p.delivered).max().unwrap_or(0);
    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..end_s, 0.0..y_top_under_legend(max_del as f64))
        .s()?;
    mesh(&mut chart, 15.0)
        .x_desc("time (s)")
        .y_desc(format!("delivered (pkt per {} s)", trim(r.bin.as_secs_f64())))
        .draw()
        .s()?;
    if s.is_empty() {
        return note(&chart.plotting_area().strip_coord_spec(), "no samples");
    }
    shade_outages(&mut chart, r, end_s, y_top(max_del as f64))?;
    let green = RGBColor(60, 140, 80);
    let mut prev = 0.0;
    let mut bars = Vec::with_capacity(s.len());
    for p in s {
        let t = fin(p.t_s);
        bars.push(Rectangle::new([(prev, 0.0), (t.max(prev), p.delivered as f64)], green.mix(0.8).filled()));
        prev = t;
    }
    chart
        .draw_series(bars)
        .s()?
        .label("packets delivered to sinks, all flows")
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], green.mix(0.8).filled()));
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

// ---------------------------------------------------------------------------------------------
// sweep

/// One point of a sweep: x value, mean/min/max of per-flow goodput (pkt/s) and delivery ratio.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    /// Swept parameter value.
    pub x: f64,
    /// Mean per-flow goodput, pkt/s.
    pub mean: f64,
    /// Smallest per-flow goodput, pkt/s.
    pub min: f64,
    /// Largest per-flow goodput, pkt/s.
    pub max: f64,
    /// Network-wide delivery ratio (0–1).
    pub delivery: f64,
}

/// The x-axis label of a sweep over scenario key `key`: the key with, where its name ends in a
/// unit suffix (`_pps`, `_s`, `_ns`, `_m`, `_db`, `_dbm`, `_bytes`), that unit in parentheses
/// ("flows.0.rate_pps (pkt/s)"); other keys bare ("mac.max_retries").
pub fn sweep_x_label(key: &str) -> String {
    const UNITS: [(&str, &str); 7] = [
        ("_pps", "pkt/s"),
        ("_s", "s"),
        ("_ns", "ns"),
        ("_m", "m"),
        ("_db", "dB"),
        ("_dbm", "dBm"),
        ("_bytes", "bytes"),
    ];
    match UNITS.iter().find(|(suffix, _)| key.ends_with(suffix)) {
        Some((_, unit)) => format!("{key} ({unit})"),
        None => key.to_string(),
    }
}

/// Plot mean per-flow goodput with a min–max band (and error bars) against x, and the delivery
/// ratio on a second panel; y = x dashed reference line when `offered_line` is true (goodput
/// equals offered load). Writes `{name}.png` and `{name}.svg` into `dir`.
pub fn write_sweep(
    dir: &Path,
    stem: &str,
    title: &str,
    x_label: &str,
    points: &[SweepPoint],
    offered_line: bool,
) -> Result<(), String> {
    ensure_font()?;
    let mut pts: Vec<SweepPoint> = points.iter().copied().filter(|p| p.x.is_finite()).collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    render!(dir, stem, draw_sweep(title, x_label, &pts, offered_line));
    Ok(())
}

fn draw_sweep<DB: DrawingBackend>(
    root: &Area<DB>,
    name: &str,
    x_label: &str,
    pts: &[SweepPoint],
    offered: bool,
) -> Result<(), String> {
    root.fill(&WHITE).s()?;
    let title = format!("{name}: per-flow goodput and delivery ratio");
    let root = root.titled(&title, font(caption_size(&title, 21.0))).s()?;
    let (top, bottom) = root.split_vertically(SIZE.1 as i32 * 58 / 100);
    let f = |v: f64| if v.is_finite() { Some(v) } else { None };
    let xs = pts.iter().map(|p| p.x);
    let (x0, x1) = span(xs.clone().fold(f64::INFINITY, f64::min), xs.fold(f64::NEG_INFINITY, f64::max), 1e-9);
    let (x0, x1) = if x1 - x0 < 1e-6 {
        let w = (x0.abs() * 0.2).max(0.5);
        (x0 - w, x1 + w)
    } else {
        let w = (x1 - x0) * 0.04;
        (x0 - w, x1 + w)
    };
    let ymax = pts.iter().flat_map(|p| [p.mean, p.min, p.max]).filter_map(f).fold(0.0, f64::max);
    let ytop = y_top(ymax);
    // A swept integer (a queue length, a retry limit, a seed) gets integer ticks only.
    let integral = !pts.is_empty() && pts.iter().all(|p| p.x.fract() == 0.0);
    let x_ticks = if integral { ((x1 - x0).floor() as usize + 1).clamp(1, 10) } else { 10 };
    let x_tick = move |v: &f64| if integral && v.fract() != 0.0 { String::new() } else { tick(v) };

    let mut chart = ChartBuilder::on(&top)
        .margin(12)
        .margin_bottom(4)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..ytop)
        .s()?;
    mesh(&mut chart, 15.0)
        .x_labels(x_ticks)
        .x_label_formatter(&x_tick)
        .y_desc("per-flow goodput (pkt/s)")
        .draw()
        .s()?;
    if pts.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no data")?;
    } else {
        let blue = RGBColor(40, 90, 190);
        // Min–max band over the points where both are known.
        let band: Vec<(f64, f64, f64)> =
            pts.iter().filter_map(|p| Some((p.x, f(p.min)?.clamp(0.0, ytop), f(p.max)?.clamp(0.0, ytop)))).collect();
        if band.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(band.iter().rev().map(|b| (b.0, b.1)));
            chart
                .draw_series(std::iter::once(Polygon::new(poly, blue.mix(0.15).filled())))
                .s()?
                .label("min–max over flows")
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], blue.mix(0.25).filled()));
        }
        let caps = band.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]);
        chart
            .draw_series(
                caps.map(|c| EmptyElement::at(c) + PathElement::new(vec![(-5, 0), (5, 0)], blue.stroke_width(1))),
            )
            .s()?;
        chart
            .draw_series(band.iter().map(|&(x, lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], blue.stroke_width(1))))
            .s()?;
        if band.len() == 1 {
            // No band with one point: label the error bar instead.
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
                .s()?
                .label("min–max over flows")
                .legend(move |(x, y)| PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], blue.stroke_width(1)));
        }
        if offered {
            // y = x, clipped to the visible box.
            let a = x0.max(0.0);
            let b = x1.min(ytop);
            if b > a {
                let grey = RGBColor(90, 90, 90);
                chart
                    .draw_series(DashedLineSeries::new(vec![(a, a), (b, b)], 8, 6, grey.stroke_width(2)))
                    .s()?
                    .label("offered load (y = x)")
                    // Dashed in the legend as on the chart (a solid sample read as another line).
                    .legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (7, 0)], grey.stroke_width(2))
                            + PathElement::new(vec![(13, 0), (20, 0)], grey.stroke_width(2))
                    });
            }
        }
        let mean: Vec<(f64, f64)> = pts.iter().filter_map(|p| Some((p.x, f(p.mean)?.clamp(0.0, ytop)))).collect();
        chart
            .draw_series(LineSeries::new(mean.clone(), blue.stroke_width(2)))
            .s()?
            .label("mean per-flow goodput")
            .legend(move |(x, y)| {
                EmptyElement::at((x + 10, y))
                    + PathElement::new(vec![(-10, 0), (10, 0)], blue.stroke_width(2))
                    + Circle::new((0, 0), 4, blue.filled())
            });
        chart.draw_series(mean.iter().map(|&p| Circle::new(p, 4, blue.filled()))).s()?;
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }

    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..1.05)
        .s()?;
    mesh(&mut chart, 15.0)
        .x_labels(x_ticks)
        .x_label_formatter(&x_tick)
        .x_desc(if x_label.is_empty() { "x" } else { x_label })
        .y_desc("delivery ratio")
        .y_labels(6)
        .draw()
        .s()?;
    if pts.is_empty() {
        return note(&chart.plotting_area().strip_coord_spec(), "no data");
    }
    let green = RGBColor(50, 130, 70);
    let del: Vec<(f64, f64)> = pts.iter().filter_map(|p| Some((p.x, f(p.delivery)?.clamp(0.0, 1.05)))).collect();
    chart.draw_series(LineSeries::new(del.clone(), green.stroke_width(2))).s()?;
    chart.draw_series(del.iter().map(|&p| Circle::new(p, 4, green.filled()))).s()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    use crate::svg_test::{lines_with, svg_attr, svg_elements, svg_lines, svg_shapes, svg_texts};

    use crate::runner::{run, RunOptions};
    use crate::scenario::Scenario;

    fn temp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wsn-plots-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Remove a test's output unless `WSN_KEEP_TEST_PLOTS` is set (to look at the plots).
    fn cleanup(d: &Path) {
        if std::env::var_os("WSN_KEEP_TEST_PLOTS").is_none() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    fn non_empty(p: &Path) -> bool {
        std::fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false)
    }

    /// A sweep of five points: both files are written; the SVG names the series in the legend,
    /// has no "no data" note, and draws one line per panel through the five points (mean goodput
    /// on top, delivery ratio below, left to right whatever the order of the input), the min–max
    /// band through the five maxima and minima, and a marker on every point.
    #[test]
    fn sweep_writes_png_and_svg() {
        let d = temp("sweep");
        let n = 5;
        let mut pts: Vec<SweepPoint> = (1..=n)
            .map(|k| {
                let x = k as f64 * 0.5;
                SweepPoint {
                    x,
                    mean: x.min(1.2),
                    min: x.min(1.2) * 0.7,
                    max: x.min(1.2) * 1.1,
                    delivery: (1.2 / x).min(1.0),
                }
            })
            .collect();
        // `write_sweep` sorts by x.
        pts.reverse();
        write_sweep(&d, "rate", "Sweep of the rate", "offered load per node (pkt/s)", &pts, true).unwrap();
        assert!(non_empty(&d.join("rate.png")));
        assert!(non_empty(&d.join("rate.svg")));
        let svg = d.join("rate.svg");
        let texts = svg_texts(&svg);
        for label in [
            "Sweep of the rate: per-flow goodput and delivery ratio",
            "mean per-flow goodput",
            "min–max over flows",
            "offered load (y = x)",
            "per-flow goodput (pkt/s)",
            "delivery ratio",
            "offered load per node (pkt/s)",
        ] {
            assert!(texts.iter().any(|t| t == label), "no {label:?} in {texts:?}");
        }
        assert!(!texts.iter().any(|t| t == "no data"), "{texts:?}");
        // One line through the n points per panel; the top one (smaller SVG y) is the mean goodput.
        let mut data = lines_with(&svg, n);
        assert_eq!(data.len(), 2, "lines of {n} vertices: {data:?}");
        data.sort_by(|a, b| a[0].1.total_cmp(&b[0].1));
        let (mean, delivery) = (&data[0], &data[1]);
        for l in [mean, delivery] {
            assert!(l.windows(2).all(|w| w[0].0 < w[1].0), "not left to right: {l:?}");
        }
        let top = mean.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let bottom = delivery.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert!(top < bottom, "the panels overlap: {mean:?} {delivery:?}");
        // The mean rises (SVG y falls) to its plateau at 1.2; the delivery ratio falls from 1.
        assert!(mean.windows(2).all(|w| w[1].1 <= w[0].1) && mean[1].1 < mean[0].1, "{mean:?}");
        assert!(delivery.windows(2).all(|w| w[1].1 >= w[0].1) && delivery[4].1 > delivery[0].1, "{delivery:?}");
        // The band: one polygon along the maxima and back along the minima.
        let band: Vec<_> = svg_shapes(&svg, "polygon").into_iter().filter(|p| p.len() == 2 * n).collect();
        assert_eq!(band.len(), 1, "{band:?}");
        // A marker on every point of both lines.
        assert!(svg_elements(&svg, "circle").len() >= 2 * n);
        cleanup(&d);
    }

    /// A point whose mean goodput is unknown (NaN) is left out of the mean line only: its
    /// delivery ratio and its min–max band still show.
    #[test]
    fn sweep_leaves_out_unknown_values_only() {
        let d = temp("sweep-nan");
        let pt = |x: f64, mean: f64| SweepPoint { x, mean, min: 0.4, max: 0.6, delivery: 0.9 };
        let pts = [pt(1.0, 0.5), pt(2.0, f64::NAN), pt(3.0, 0.5), pt(4.0, 0.5)];
        write_sweep(&d, "nan", "NaN", "x", &pts, false).unwrap();
        let svg = d.join("nan.svg");
        let texts = svg_texts(&svg);
        assert!(!texts.iter().any(|t| t == "no data"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "mean per-flow goodput"), "{texts:?}");
        assert_eq!(lines_with(&svg, 3).len(), 1, "the mean line: {:?}", svg_lines(&svg));
        assert_eq!(lines_with(&svg, 4).len(), 1, "the delivery line: {:?}", svg_lines(&svg));
        assert_eq!(svg_shapes(&svg, "polygon").iter().filter(|p| p.len() == 8).count(), 1);
        cleanup(&d);
    }

    /// The size of the largest group of `<rect>`s sharing a fill colour other than white (the
    /// bars of one series, plus its legend sample).
    fn most_rects_of_one_colour(path: &Path) -> usize {
        let mut fills: Vec<String> = svg_elements(path, "rect")
            .iter()
            .filter_map(|e| svg_attr(e, "fill"))
            .filter(|f| !f.eq_ignore_ascii_case("none") && !f.eq_ignore_ascii_case("#FFFFFF"))
            .collect();
        fills.sort();
        fills.chunk_by(|a, b| a == b).map(<[String]>::len).max().unwrap_or(0)
    }

    /// Whether `texts` has `run` as consecutive entries (e.g. tick or node labels in order).
    fn has_run(texts: &[String], run: &[String]) -> bool {
        texts.windows(run.len()).any(|w| w == run)
    }

    /// The notes drawn instead of data.
    fn notes(texts: &[String]) -> Vec<&String> {
        const NOTES: [&str; 4] = ["no data", "no flows", "no samples", "no complete time bin"];
        texts.iter().filter(|t| NOTES.contains(&t.as_str()) || t.starts_with("no flow start")).collect()
    }

    /// Node labels go above right unless that covers an earlier label or another node, then
    /// to the first free corner: two nodes 20 px apart get their ids apart, and a lone node keeps
    /// the usual place.
    #[test]
    fn node_labels_avoid_each_other_and_other_nodes() {
        let boxes = |c: &[(i32, i32)], corners: &[(i32, i32)], s: &[(i32, i32)]| -> Vec<(i32, i32, i32, i32)> {
            (0..c.len())
                .map(|i| {
                    let (x, y) = (c[i].0 + corners[i].0, c[i].1 + corners[i].1);
                    (x - 1, y, x + s[i].0 + 1, y + s[i].1 + 1)
                })
                .collect()
        };
        let overlap =
            |a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        // A lone node: above right, as before (text from x + 6, its bottom at y − 6).
        assert_eq!(label_corners(&[(100, 100)], &[7], &[(14, 12)]), vec![(6, -18)]);
        // Close nodes (one up and right of another, as 9 and 10 were, and one 20 px to the
        // right of the first): no label on another or on another node.
        let centres = [(100, 100), (112, 86), (120, 100), (300, 300)];
        let (radii, sizes) = ([7; 4], [(8, 12), (15, 12), (15, 12), (15, 12)]);
        let corners = label_corners(&centres, &radii, &sizes);
        let b = boxes(&centres, &corners, &sizes);
        for i in 0..4 {
            for j in 0..4 {
                if i != j {
                    assert!(!overlap(b[i], b[j]), "labels {i} and {j}: {b:?}");
                    let (x, y) = centres[j];
                    assert!(!overlap(b[i], (x - 5, y - 5, x + 5, y + 5)), "label {i} on node {j}: {b:?}");
                }
            }
        }
        assert_eq!(corners[3], (6, -18), "the far node keeps the usual place");
        // A label that would only cover an earlier label (a wide one) moves too: below right.
        let (centres, sizes) = ([(100, 100), (110, 110)], [(30, 12), (15, 12)]);
        let corners = label_corners(&centres, &[7, 7], &sizes);
        let b = boxes(&centres, &corners, &sizes);
        assert!(!overlap(b[0], b[1]), "{b:?}");
        assert_eq!(corners[1], (6, 6));
        // With every corner taken, above right.
        let crowd = [(100, 100), (90, 80), (112, 80), (90, 120), (112, 120)];
        assert_eq!(label_corners(&crowd, &[7; 5], &[(14, 12); 5])[0], (6, -18));
    }

    /// A parent arrow is straight when no other node lies on its way, and bows around one that
    /// does (on a chain, 2 → 0 passes over node 1): its line keeps clear of that node, starts
    /// at the child's edge and ends at the arrowhead, whose tip stops 2 px before the parent.
    #[test]
    fn parent_arrows_bow_around_nodes_on_their_way() {
        let mpp = 0.05; // metres per pixel
        let (ra, rb) = (7.0 * mpp, 10.0 * mpp);
        let dist = |p: (f64, f64), q: (f64, f64)| ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt();
        let (a, b) = ((10.0, 0.0), (0.0, 0.0));
        let wide = || (-20.0..30.0, -20.0..20.0);
        // Nothing on the way (a node beside it, one beyond the parent): straight.
        let (line, head) = parent_arrow(a, b, ra, rb, mpp, wide(), [(5.0, 3.0), (-5.0, 0.0)].into_iter());
        let head = head.unwrap();
        assert_eq!(line.len(), 2, "{line:?}");
        assert!((dist(line[0], a) - ra).abs() < 1e-6 && line.iter().all(|p| p.1.abs() < 1e-9), "{line:?}");
        assert!((dist(head[0], b) - (rb + 2.0 * mpp)).abs() < 1e-6, "{head:?}");
        assert!((dist(line[1], head[0]) - 11.0 * mpp).abs() < 1e-6, "the line ends at the head's base");
        // Node 1 on the way: the line and the head keep clear of it, bowing to the arrow's left.
        let on_way = (5.0, 0.0);
        let (line, head) = parent_arrow(a, b, ra, rb, mpp, wide(), std::iter::once(on_way));
        let head = head.unwrap();
        assert!(line.len() > 10, "a curve: {line:?}");
        assert!((dist(line[0], a) - ra).abs() < 1e-6, "{:?}", line[0]);
        assert!((dist(head[0], b) - (rb + 2.0 * mpp)).abs() < 1e-6, "{head:?}");
        let last = *line.last().unwrap();
        assert!((dist(last, head[0]) - 11.0 * mpp).abs() < 1e-6, "the line ends at the head's base");
        // Every segment of the line stays more than a node's radius plus 3 px from node 1.
        let seg_dist = |p: (f64, f64), q: (f64, f64), x: (f64, f64)| {
            let (dx, dy) = (q.0 - p.0, q.1 - p.1);
            let t = (((x.0 - p.0) * dx + (x.1 - p.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
            dist((p.0 + t * dx, p.1 + t * dy), x)
        };
        let nearest = line.windows(2).map(|w| seg_dist(w[0], w[1], on_way)).fold(f64::INFINITY, f64::min);
        assert!(nearest > 10.0 * mpp, "{nearest} m from node 1");
        assert!(line[1..].iter().all(|p| p.1 < 0.0), "to the left of a → b (−y): {line:?}");
        // A node 8 px beside the straight line is on the way too; one 12 px beside it is not.
        assert!(parent_arrow(a, b, ra, rb, mpp, wide(), std::iter::once((5.0, 8.0 * mpp))).0.len() > 10);
        assert_eq!(parent_arrow(a, b, ra, rb, mpp, wide(), std::iter::once((5.0, 12.0 * mpp))).0.len(), 2);
        // At the plotting area's lower edge it bows to its right instead, and with room for
        // neither side's quarter-length bow, less deep; with no room at all, straight.
        let inside = |line: &[(f64, f64)], y0: f64, y1: f64| line.iter().all(|p| p.1 >= y0 && p.1 <= y1);
        let (up, _) = parent_arrow(a, b, ra, rb, mpp, (-20.0..30.0, -1.0..20.0), std::iter::once(on_way));
        let peak = |line: &[(f64, f64)]| line.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
        assert!(up.len() > 10 && inside(&up, -1.0, 20.0) && up[1..].iter().all(|p| p.1 > 0.0), "{up:?}");
        assert!((peak(&up) - 2.5).abs() < 0.1, "a quarter of the length: {up:?}");
        let (low, _) = parent_arrow(a, b, ra, rb, mpp, (-20.0..30.0, -1.0..2.0), std::iter::once(on_way));
        assert!(low.len() > 10 && inside(&low, -1.0, 2.0) && (peak(&low) - 1.5).abs() < 0.1, "{low:?}");
        let (flat, _) = parent_arrow(a, b, ra, rb, mpp, (-20.0..30.0, -0.3..0.3), std::iter::once(on_way));
        assert_eq!(flat.len(), 2, "{flat:?}");
        // No segment shorter than 2 px (plotters draws those as spikes), but the last.
        assert!(line.windows(2).rev().skip(1).all(|w| dist(w[0], w[1]) >= 2.0 * mpp - 1e-9), "{line:?}");
    }

    /// In the PNGs a decimal point sits on the digits' baseline at every size the figures ask
    /// for, odd and fractional ones included (at 13 px it was drawn a pixel above: "4·4").
    #[test]
    fn png_text_keeps_the_baseline() {
        ensure_font().unwrap();
        for size in [11.0, 12.0, 13.0, 14.5, 15.0, 19.0, 21.0] {
            let (w, h) = (80u32, 40u32);
            let mut buf = vec![255u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
                root.draw_text("4 . 4", &font(size).color(&BLACK), (4, 8)).unwrap();
                root.present().unwrap();
            }
            let dark = |x: u32, y: u32| buf[((y * w + x) * 3) as usize] < 128;
            // Glyphs as runs of columns with a dark pixel; the lowest dark row of each.
            let mut glyphs: Vec<u32> = Vec::new();
            let mut inside = false;
            for x in 0..w {
                let bottom = (0..h).rev().find(|&y| dark(x, y));
                match (bottom, inside) {
                    (Some(b), false) => glyphs.push(b),
                    (Some(b), true) => *glyphs.last_mut().unwrap() = b.max(*glyphs.last().unwrap()),
                    _ => {}
                }
                inside = bottom.is_some();
            }
            assert_eq!(glyphs.len(), 3, "{size} px: three glyphs, got {glyphs:?}");
            assert!(glyphs.iter().all(|&b| b == glyphs[0]), "{size} px: lowest rows of 4, ., 4: {glyphs:?}");
        }
    }

    /// Titles keep the base size when short, shrink to fit the width when long, and never go
    /// below 11 px.
    #[test]
    fn long_titles_shrink_to_fit() {
        assert_eq!(caption_size("Goodput per flow — office40", 22.0), 22.0);
        let long = "x".repeat(120);
        let s = caption_size(&long, 22.0);
        assert!(s < 22.0 && (120.0 * 0.55 * s - 960.0).abs() < 1.0, "{s}");
        assert_eq!(caption_size(&"x".repeat(1000), 22.0), 11.0);
    }

    /// A sweep over an integer key (values 1 and 3) is labelled 1, 2, 3 only; a fractional one
    /// keeps fractional ticks.
    #[test]
    fn sweep_of_integers_has_integer_ticks() {
        let d = temp("sweep-int");
        let pt = |x: f64| SweepPoint { x, mean: 0.5, min: 0.4, max: 0.6, delivery: 0.9 };
        write_sweep(&d, "int", "Retries", "mac.max_retries", &[pt(1.0), pt(3.0)], false).unwrap();
        let texts = svg_texts(&d.join("int.svg"));
        assert!(texts.iter().any(|t| t == "2"), "{texts:?}");
        assert!(!texts.iter().any(|t| ["1.5", "2.5", "1.2", "2.2"].contains(&t.as_str())), "{texts:?}");
        write_sweep(&d, "frac", "Rate", "rate", &[pt(0.5), pt(1.5)], false).unwrap();
        let texts = svg_texts(&d.join("frac.svg"));
        assert!(texts.iter().any(|t| t == "0.5" || t == "1.5"), "{texts:?}");
        cleanup(&d);
    }

    /// A sweep's x axis names the key and, from its suffix, the unit; a key without a known
    /// suffix stays bare.
    #[test]
    fn sweep_x_axis_names_the_unit() {
        for (key, want) in [
            ("flows.0.rate_pps", "flows.0.rate_pps (pkt/s)"),
            ("duration_s", "duration_s (s)"),
            ("mac.ack_protection_ns", "mac.ack_protection_ns (ns)"),
            ("topology.layout.spacing_m", "topology.layout.spacing_m (m)"),
            ("radio.prune_margin_db", "radio.prune_margin_db (dB)"),
            ("radio.link.tx_power_dbm", "radio.link.tx_power_dbm (dBm)"),
            ("flows.0.payload_bytes", "flows.0.payload_bytes (bytes)"),
            ("mac.max_retries", "mac.max_retries"),
            ("seed", "seed"),
            ("mac.queue_capacity", "mac.queue_capacity"),
        ] {
            assert_eq!(sweep_x_label(key), want);
        }
        let d = temp("sweep-unit");
        let pt = |x: f64| SweepPoint { x, mean: 0.5, min: 0.4, max: 0.6, delivery: 0.9 };
        write_sweep(&d, "u", "Rate", &sweep_x_label("flows.0.rate_pps"), &[pt(0.5), pt(1.0)], true).unwrap();
        let texts = svg_texts(&d.join("u.svg"));
        assert!(texts.iter().any(|t| t == "flows.0.rate_pps (pkt/s)"), "{texts:?}");
        cleanup(&d);
    }

    #[test]
    fn sweep_degenerate_inputs_do_not_panic() {
        let d = temp("sweep-degenerate");
        let nan = f64::NAN;
        let cases: Vec<Vec<SweepPoint>> = vec![
            vec![],
            vec![SweepPoint { x: 3.0, mean: 0.0, min: 0.0, max: 0.0, delivery: 0.0 }],
            vec![SweepPoint { x: nan, mean: nan, min: nan, max: nan, delivery: nan }],
            vec![
                SweepPoint { x: 1.0, mean: nan, min: f64::INFINITY, max: nan, delivery: nan },
                SweepPoint { x: 1.0, mean: 0.0, min: 0.0, max: 0.0, delivery: 2.0 },
            ],
        ];
        for (k, pts) in cases.iter().enumerate() {
            write_sweep(&d, &format!("case{k}"), "", "", pts, k % 2 == 0).unwrap();
            assert!(non_empty(&d.join(format!("case{k}.png"))));
            let svg = d.join(format!("case{k}.svg"));
            assert!(non_empty(&svg));
            // No point with a finite x (cases 0 and 2): "no data" in both panels and nothing
            // else; otherwise the point (its mean and delivery marker) and the legend.
            let texts = svg_texts(&svg);
            let no_data = texts.iter().filter(|t| *t == "no data").count();
            let legend = texts.iter().any(|t| t == "mean per-flow goodput");
            let markers = svg_elements(&svg, "circle").len();
            if pts.iter().any(|p| p.x.is_finite()) {
                assert!(no_data == 0 && legend && markers >= 2, "case {k}: {texts:?}, {markers} markers");
            } else {
                assert!(no_data == 2 && !legend && markers == 0, "case {k}: {texts:?}, {markers} markers");
            }
        }
        cleanup(&d);
    }

    fn tiny_run(nodes: usize, duration_s: f64, flows: bool) -> RunResult {
        let flow = if flows { "[[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 100.0\n" } else { "" };
        let text = format!(
            "name = \"tiny\"\nduration_s = {duration_s:?}\n\
             [topology]\nlayout = {{ kind = \"chain\", nodes = {nodes}, spacing_m = 5.0 }}\n\
             [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n\
             [routing]\nkind = \"mhlqi\"\n{flow}"
        );
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let sc = Scenario::from_toml(&text, "test", base, &[]).unwrap();
        run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
    }

    /// A 5-node chain, 4 flows from 100 s of 200 s: every figure shows its data, not a note.
    /// `goodput_per_flow`: a bar per flow labelled by its source, the legend with the mean;
    /// `goodput_time`: a line per flow and the mean, one vertex per 10-s bin; `tree`: every node
    /// labelled, the hop legend counting every node, an arrowhead per parent link;
    /// `network_time`: both depth lines and a delivery bar per sample; `queues_time`: a line per
    /// node that queued a packet, one vertex per bin.
    #[test]
    fn write_all_on_a_tiny_chain() {
        let r = tiny_run(5, 200.0, true);
        let d = temp("run");
        write_all(&d, &r).unwrap();
        for name in ["goodput_per_flow", "goodput_time", "tree", "network_time", "queues_time"] {
            assert!(non_empty(&d.join(format!("{name}.png"))), "{name}.png");
            let svg = d.join(format!("{name}.svg"));
            assert!(non_empty(&svg), "{name}.svg");
            let texts = svg_texts(&svg);
            assert!(notes(&texts).is_empty(), "{name}.svg: {texts:?}");
        }
        let has = |texts: &[String], want: &str| texts.iter().any(|t| t == want);
        let nodes = r.positions.len();
        let flows = r.summary.flows.len();
        assert_eq!((nodes, flows), (5, 4));

        let svg = d.join("goodput_per_flow.svg");
        let texts = svg_texts(&svg);
        assert!(has(&texts, "goodput of the flow"), "{texts:?}");
        let over = format!("pkt/s over {flows} flows");
        assert!(texts.iter().any(|t| t.starts_with("mean ") && t.ends_with(&over)), "{texts:?}");
        let sources: Vec<String> = r.summary.flows.iter().map(|f| f.source.to_string()).collect();
        assert!(has_run(&texts, &sources), "no tick labels {sources:?} in {texts:?}");
        assert!(most_rects_of_one_colour(&svg) > flows, "not a bar per flow and a legend sample");

        let svg = d.join("goodput_time.svg");
        let texts = svg_texts(&svg);
        for want in [
            "traffic starts (100 s)",
            &format!("one flow each ({flows} flows)"),
            &format!("mean over all {flows} flows"),
        ] {
            assert!(has(&texts, want), "no {want:?} in {texts:?}");
        }
        assert_eq!((r.bin.as_secs_f64(), r.summary.sim_seconds), (10.0, 200.0));
        assert_eq!(lines_with(&svg, 20).len(), flows + 1, "a line per flow and the mean, a vertex per bin");

        let svg = d.join("tree.svg");
        let texts = svg_texts(&svg);
        let ids: Vec<String> = (0..nodes).map(|i| i.to_string()).collect();
        assert!(has_run(&texts, &ids), "no node labels {ids:?} in {texts:?}");
        assert!(has(&texts, "0 (sink): 1"), "{texts:?}");
        // The hop legend's rows ("0 (sink): 1", "1: 4", "no route: 0") count every node once.
        let counted: usize = texts
            .iter()
            .filter_map(|t| t.split_once(": "))
            .filter(|(k, _)| *k == "0 (sink)" || *k == "no route" || k.parse::<u32>().is_ok())
            .map(|(_, v)| v.parse::<usize>().unwrap())
            .sum();
        assert_eq!(counted, nodes, "{texts:?}");
        let links = (0..nodes).filter(|&i| r.network.parent(i, 0).is_some()).count();
        assert!(links >= nodes - 1, "{links} parent links");
        let heads = svg_shapes(&svg, "polygon").iter().filter(|p| p.len() == 3).count();
        assert!(heads >= links, "{heads} arrowheads for {links} parent links");

        let svg = d.join("network_time.svg");
        let texts = svg_texts(&svg);
        for want in ["max depth", "mean depth of routed nodes", "packets delivered to sinks, all flows"] {
            assert!(has(&texts, want), "no {want:?} in {texts:?}");
        }
        let samples = r.series.len();
        assert!(samples > 2, "{samples} samples");
        assert_eq!(lines_with(&svg, samples).len(), 2, "both depth lines, a vertex per sample");
        assert!(most_rects_of_one_colour(&svg) > samples, "not a delivery bar per sample and a legend sample");

        let svg = d.join("queues_time.svg");
        let texts = svg_texts(&svg);
        assert!(has(&texts, "queue capacity"), "{texts:?}");
        let queued: Vec<usize> = (0..nodes).filter(|&i| r.network.queue_bins(i).iter().any(|&q| q > 0)).collect();
        assert!(!queued.is_empty());
        // A legend entry per line: few nodes, so each named.
        for i in &queued {
            assert!(has(&texts, &format!("node {i}")), "no \"node {i}\" in {texts:?}");
        }
        let bins = r.network.queue_bins(queued[0]).len();
        assert!(queued.iter().all(|&i| r.network.queue_bins(i).len() == bins));
        assert_eq!(lines_with(&svg, bins).len(), queued.len(), "a line per node that queued, a vertex per bin");
        cleanup(&d);
    }

    /// A run of `nodes` nodes in a chain, `protocol` ("ifrc" or "rcrt") for every node, for
    /// `duration_s`.
    fn protocol_run(protocol: &str, nodes: usize, duration_s: f64) -> RunResult {
        let mac = if protocol == "ifrc" { "[mac]\npreset = \"ifrc2006\"\n" } else { "" };
        let payload = if protocol == "ifrc" { 0 } else { 20 };
        let text = format!(
            "name = \"tiny\"\nduration_s = {duration_s:?}\n\
             [topology]\nlayout = {{ kind = \"chain\", nodes = {nodes}, spacing_m = 5.0 }}\n\
             [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n{mac}\
             [protocol]\nkind = \"{protocol}\"\n\
             [[flows]]\nsources = \"all\"\nrate_pps = 2.0\nstart_s = 20.0\npayload_bytes = {payload}\n"
        );
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let sc = Scenario::from_toml(&text, "test", base, &[]).unwrap();
        run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
    }

    /// `rates_time` and `queues_time` say in their legends what their lines are: each node by
    /// name when there are few lines (here 4), one entry naming the lines when there are more
    /// than 12 (here 19); `queues_time` keeps its queue capacity line.
    #[test]
    fn per_node_lines_are_in_the_legend() {
        let d = temp("per-node");
        let has = |texts: &[String], want: &str| texts.iter().any(|t| t == want);
        let r = protocol_run("ifrc", 5, 60.0);
        write_all(&d, &r).unwrap();
        let texts = svg_texts(&d.join("rates_time.svg"));
        for i in 1..5 {
            assert!(has(&texts, &format!("node {i}")), "no \"node {i}\" in {texts:?}");
        }
        assert!(!has(&texts, "node 0"), "the sink's pseudo-rate is not drawn: {texts:?}");

        let r = protocol_run("ifrc", 20, 60.0);
        let queued = (0..20).filter(|&i| r.network.queue_bins(i).iter().any(|&q| q > 0)).count();
        assert!(queued > 12, "{queued} nodes queued");
        write_all(&d, &r).unwrap();
        let texts = svg_texts(&d.join("rates_time.svg"));
        assert!(has(&texts, "one line per node (19 nodes; the sink left out)"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.starts_with("node ") || t.ends_with(" series, one colour each")), "{texts:?}");
        let texts = svg_texts(&d.join("queues_time.svg"));
        let want = format!("one line per node that queued a packet ({queued} of 20 nodes)");
        assert!(has(&texts, &want) && has(&texts, "queue capacity"), "{texts:?}");
        cleanup(&d);
    }

    /// Every axis of every plot an RCRT run writes has a label, with its unit where it has one
    /// (`congestion_time`'s y axis said "C_i" alone).
    #[test]
    fn rcrt_run_plots_have_axis_labels_with_units() {
        let d = temp("rcrt-axes");
        let r = protocol_run("rcrt", 3, 120.0);
        write_all(&d, &r).unwrap();
        let axes = [
            ("goodput_per_flow", "flow source node", "goodput (pkt/s)"),
            ("goodput_time", "time (s)", "goodput (pkt/s, 10 s bins)"),
            ("tree", "x (m)", "y (m)"),
            ("network_time", "time (s)", "tree depth (hops)"),
            ("network_time", "time (s)", "delivered (pkt per 10 s)"),
            ("queues_time", "time (s)", "queue (packets)"),
            ("congestion_time", "time (s)", "congestion level C_i (RTTs of loss repair)"),
            ("allocations_time", "time (s)", "rate (pkt/s)"),
            ("reception_time", "time (s)", "sequence number"),
            ("repairs_per_flow", "source node", "repaired (% of delivered packets)"),
        ];
        for (name, x, y) in axes {
            let texts = svg_texts(&d.join(format!("{name}.svg")));
            for want in [x, y] {
                assert!(texts.iter().any(|t| t == want), "{name}: no {want:?} in {texts:?}");
            }
        }
        // The per-flow lines and dots are named in the legend, one entry per flow (few flows).
        let flows: Vec<String> = r
            .network
            .flows()
            .iter()
            .filter(|f| !f.rcrt.deliveries.is_empty())
            .map(|f| format!("flow {} → {}", f.source.0, f.sink.0))
            .collect();
        assert_eq!(flows.len(), 2, "{flows:?}");
        for name in ["congestion_time", "reception_time"] {
            let texts = svg_texts(&d.join(format!("{name}.svg")));
            for want in &flows {
                assert!(texts.iter().any(|t| t == want), "{name}: no {want:?} in {texts:?}");
            }
        }
        cleanup(&d);
    }

    /// With more flows than a legend names one by one, one entry says what the lines are.
    #[test]
    fn many_flows_get_one_legend_entry() {
        let d = temp("rcrt-many-flows");
        let r = protocol_run("rcrt", 16, 120.0);
        write_all(&d, &r).unwrap();
        for (name, entry) in [("congestion_time", "one line per flow"), ("reception_time", "one colour per flow")] {
            let texts = svg_texts(&d.join(format!("{name}.svg")));
            assert!(texts.iter().any(|t| t.starts_with(entry)), "{name}: no {entry:?} in {texts:?}");
            assert!(!texts.iter().any(|t| t.starts_with("flow ")), "{name}: {texts:?}");
        }
        cleanup(&d);
    }

    /// Outages are shaded in the time plots and named in their legends (the SVG text says so).
    #[test]
    fn outages_are_shaded_and_named() {
        let text = "name = \"tiny\"\nduration_s = 200.0\n\
                    [topology]\nlayout = { kind = \"chain\", nodes = 4, spacing_m = 5.0 }\n\
                    [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n\
                    [[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 50.0\n\
                    [[outages]]\nnodes = [2, 3]\nfrom_s = 100.0\nto_s = 150.0\n\
                    [[outages]]\nnodes = 1\nfrom_s = 120.0\nto_s = 1000.0\n\
                    [[outages]]\nnodes = 0\nfrom_s = 500.0\n";
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let sc = Scenario::from_toml(text, "test", base, &[]).unwrap();
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let got = r.network.outages();
        let want = [(1, 120.0, 200.0), (2, 100.0, 150.0), (3, 100.0, 150.0)];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(g.0 == w.0 && (g.1 - w.1).abs() < 1e-9 && (g.2 - w.2).abs() < 1e-9, "{got:?}");
        }
        let d = temp("run-outages");
        write_all(&d, &r).unwrap();
        for name in ["goodput_time", "network_time"] {
            let svg = std::fs::read_to_string(d.join(format!("{name}.svg"))).unwrap();
            assert!(svg.contains("radio off: nodes 1, 2, 3"), "{name}.svg has no outage legend");
        }
        cleanup(&d);
    }

    /// `repairs_per_flow` (and `wsn reproduce rcrt`'s Fig. 6) plots each flow's repaired share of
    /// the packets it delivered, and its y axis says so (it said "% of packets").
    #[test]
    fn repairs_figure_says_share_of_delivered_packets() {
        let mut r = tiny_run(3, 120.0, true);
        assert_eq!(r.summary.flows.len(), 2);
        // A best-effort run has no repair counts: give its flows some (25 % and 20 % of delivered).
        for (f, (rep, del, orig)) in r.summary.flows.iter_mut().zip([(3, 12, 20), (1, 5, 40)]) {
            f.e2e_repaired = Some(rep);
            f.delivered = del;
            f.originated = orig;
        }
        let d = temp("repairs");
        repairs_figure(&d, "repairs", "Repairs", &r.summary).unwrap();
        let texts = svg_texts(&d.join("repairs.svg"));
        assert!(texts.iter().any(|t| t == "repaired (% of delivered packets)"), "{texts:?}");
        assert!(!texts.iter().any(|t| t == "% of packets"), "{texts:?}");
        assert!(notes(&texts).is_empty(), "{texts:?}");
        // Bars up to 25 %: the axis ends above them, not at 100.
        assert!(!texts.iter().any(|t| t == "100"), "{texts:?}");
        cleanup(&d);
    }

    /// A `repairs_per_flow` without a bar (nothing delivered, or nothing repaired) keeps the
    /// percentage's axis, 0–100 (it was 0–1, which reads as a fraction), its y label and the
    /// flows' ticks, and says why it is empty.
    #[test]
    fn empty_repairs_figure_has_a_percent_axis() {
        let mut r = tiny_run(3, 120.0, true);
        let d = temp("repairs-empty");
        for (delivered, why) in [(0, "no flow delivered a packet"), (7, "no packet was repaired")] {
            for f in r.summary.flows.iter_mut() {
                f.e2e_repaired = Some(0);
                f.delivered = delivered;
            }
            repairs_figure(&d, "repairs", "Repairs", &r.summary).unwrap();
            assert!(non_empty(&d.join("repairs.png")));
            let texts = svg_texts(&d.join("repairs.svg"));
            let has = |want: &str| texts.iter().any(|t| t == want);
            for want in ["repaired (% of delivered packets)", "source node", "0", "50", "100", why] {
                assert!(has(want), "no {want:?} in {texts:?}");
            }
            assert!(!has("0.5") && !has("0.2"), "a 0–1 axis: {texts:?}");
            let sources: Vec<String> = r.summary.flows.iter().map(|f| f.source.to_string()).collect();
            assert!(has_run(&texts, &sources), "no tick labels {sources:?} in {texts:?}");
            assert_eq!(has("Repairs (nothing delivered)"), delivered == 0, "{texts:?}");
        }
        cleanup(&d);
    }

    #[test]
    fn write_all_degenerate_runs_do_not_panic() {
        let d = temp("run-degenerate");
        // One node (the sink), no flows, a duration shorter than one bin.
        let r = tiny_run(1, 1.0, false);
        write_all(&d, &r).unwrap();
        let texts = |name: &str| svg_texts(&d.join(format!("{name}.svg")));
        for name in ["goodput_per_flow", "goodput_time"] {
            assert_eq!(notes(&texts(name)), ["no flows"], "{name}");
        }
        let t = texts("tree");
        assert!(t.iter().any(|t| t == "0 (sink): 1"), "{t:?}");
        // No samples and no flows at all.
        let mut r = tiny_run(2, 1.0, false);
        r.series.clear();
        r.summary.sim_seconds = f64::NAN;
        write_all(&d, &r).unwrap();
        assert!(non_empty(&d.join("tree.png")));
        assert_eq!(notes(&texts("goodput_per_flow")), ["no flows"]);
        assert_eq!(notes(&texts("network_time")), ["no samples", "no samples"]);
        let t = texts("network_time");
        assert!(!t.iter().any(|t| t == "max depth" || t.starts_with("packets delivered")), "{t:?}");
        cleanup(&d);
    }

    /// Mutation audit (session 36): the pure rules of the run plots, each as its doc comment
    /// states it.
    mod audit36 {
        use super::*;

        /// `even_px`: "`size` down to a whole even number of pixels, at least 2".
        #[test]
        fn even_px_rounds_down_to_an_even_size_of_at_least_2() {
            for (size, want) in
                [(13.0, 12.0), (14.5, 14.0), (12.0, 12.0), (19.9, 18.0), (3.0, 2.0), (1.0, 2.0), (0.0, 2.0)]
            {
                assert_eq!(even_px(size), want, "{size} px");
            }
        }

        /// `fin`: "`v` if finite, else 0".
        #[test]
        fn fin_keeps_finite_values_and_zeroes_the_rest() {
            assert_eq!(fin(2.5), 2.5);
            assert_eq!(fin(-3.0), -3.0);
            for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert_eq!(fin(v), 0.0, "{v}");
            }
        }

        /// `span`: "A finite, non-empty range `[lo, hi]` for data that spans `lo..hi` (padding a
        /// single value)" to `min_width`: wide data keep their range, narrower data (a single
        /// value) are padded on both sides to the minimum width, and no data give a finite range.
        #[test]
        fn span_keeps_wide_data_and_pads_a_single_value_on_both_sides() {
            assert_eq!(span(2.0, 8.0, 1.0), (2.0, 8.0));
            assert_eq!(span(5.0, 5.0, 1.0), (4.5, 5.5));
            assert_eq!(span(5.0, 5.5, 1.0), (4.75, 5.75));
            let (lo, hi) = span(f64::INFINITY, f64::NEG_INFINITY, 1.0);
            assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{lo}..{hi}");
        }

        /// `y_top`: "Upper end of a y axis starting at 0 that shows `max` with some head room";
        /// with no positive finite maximum the axis still has a height (0..0 is no axis).
        #[test]
        fn y_top_leaves_head_room_and_never_an_empty_axis() {
            let top = y_top(10.0);
            assert!(top > 10.0 && top < 13.0, "{top}");
            for max in [0.0, -3.0, f64::NAN, f64::INFINITY] {
                let top = y_top(max);
                assert!(top.is_finite() && top > 0.0, "{max}: {top}");
            }
        }

        /// `y_top_under_legend`: "room for the legend box above the highest value (about a third
        /// of the height)": the highest value lies at about two thirds of the axis.
        #[test]
        fn y_top_under_legend_keeps_a_third_for_the_legend() {
            let share = 10.0 / y_top_under_legend(10.0);
            assert!(share > 0.55 && share < 0.7, "{share}");
        }

        /// `legend_labels`: "`names` for up to [`MAX_NODE_LABELS`] (12) series, else `many` on the
        /// first series only" (one label per series; README: named in the legend up to 12 lines).
        #[test]
        fn legend_labels_name_up_to_12_series_else_one_entry_first() {
            let names = |n: usize| (0..n).map(|i| format!("node {i}")).collect::<Vec<_>>();
            assert_eq!(legend_labels(names(12), "many".into()), names(12));
            let l = legend_labels(names(13), "many".into());
            assert_eq!(l.len(), 13, "{l:?}");
            assert_eq!(l[0], "many");
            assert!(l[1..].iter().all(String::is_empty), "{l:?}");
            assert_eq!(node_labels(&[3, 7], String::new()), ["node 3", "node 7"]);
        }

        /// `tick`: "shortest exact form ("100", "0.25"), no "100.0"": small values keep their
        /// digits, and a zero that float noise made negative reads "0", not "-0".
        #[test]
        fn tick_prints_the_shortest_exact_form() {
            for (v, want) in [(100.0, "100"), (0.25, "0.25"), (0.0001, "0.0001"), (2.5e-6, "0.0000025"), (0.0, "0")] {
                assert_eq!(tick(&v), want, "{v}");
            }
            assert_eq!(tick(&-1e-12), "0");
            assert_eq!(tick(&-0.0), "0");
        }

        /// `trim`: "A number without useless decimals ("10", "2.5")"; a millisecond (a bin or a
        /// start time given to the millisecond) keeps its three decimals.
        #[test]
        fn trim_drops_useless_decimals_only() {
            for (v, want) in [(10.0, "10"), (2.5, "2.5"), (100.0, "100"), (0.0, "0"), (0.125, "0.125")] {
                assert_eq!(trim(v), want, "{v}");
            }
        }

        /// Bug (session 36): `trim` rounded to the millisecond, so a 1.5-ms bin (the smallest is
        /// 1 ms, any width above it allowed) was labelled "0.002 s bins" and a flow start at
        /// 12.0005 s "traffic starts (12.001 s)". "Without useless decimals" keeps the useful
        /// ones: the figures say what the scenario says, to the nanosecond as `tick` does.
        #[test]
        fn trim_keeps_sub_millisecond_decimals() {
            for (v, want) in
                [(0.0015, "0.0015"), (12.0005, "12.0005"), (0.1 + 0.2, "0.3"), (3600.000000001, "3600.000000001")]
            {
                assert_eq!(trim(v), want, "{v}");
            }
            let text = "name = \"tiny\"\nduration_s = 0.3\n\
                        [topology]\nlayout = { kind = \"chain\", nodes = 2, spacing_m = 5.0 }\n\
                        [output]\ntimeseries_bin_s = 0.0015\n";
            let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
            let sc = Scenario::from_toml(text, "test", base, &[]).unwrap();
            let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
            let d = temp("audit36-bin");
            write_all(&d, &r).unwrap();
            let texts = svg_texts(&d.join("network_time.svg"));
            assert!(texts.iter().any(|t| t == "delivered (pkt per 0.0015 s)"), "{texts:?}");
            cleanup(&d);
        }

        /// `ramp`: "Viridis-like colour of `t` in [0, 1], darkened at the yellow end": 0 is
        /// viridis' dark purple, 1 the darkened yellow, a value between them between. Hop colours
        /// (the tree: "nodes coloured by hop count") run over the whole ramp: the sink (hop 0) is
        /// the same purple in every tree, one node alone included, and the deepest hop the yellow.
        #[test]
        fn ramp_runs_from_purple_to_dark_yellow_and_hops_span_it() {
            let (purple, yellow) = (RGBColor(68, 1, 84), RGBColor(220, 200, 20));
            assert_eq!(ramp(0.0), purple);
            assert_eq!(ramp(1.0), yellow);
            let mid = ramp(0.5);
            assert!(mid != purple && mid != yellow && mid.1 > purple.1 && mid.1 < yellow.1, "{mid:?}");
            for max_h in [0, 1, 3, 9] {
                assert_eq!(hop_colour(0, max_h), purple, "hop 0 of {max_h}");
            }
            for max_h in [1, 3, 9] {
                assert_eq!(hop_colour(max_h, max_h), yellow, "hop {max_h} of {max_h}");
            }
            assert_eq!(hop_colour(2, 4), ramp(0.5));
        }

        /// `label_corners`: a label goes "above right …, unless that box would cover a label
        /// placed earlier or another node (its disc as the square 2 px inside its bounding
        /// square), then above left, below right or below left, the first that covers neither".
        /// Boxes that only touch cover nothing; a node up and to the right sends the label above
        /// left, not below right.
        #[test]
        fn label_corners_touching_is_free_and_above_left_comes_second() {
            // Node 0's label box (105, 82)–(121, 95) touches node 1's inner square (111, 95)–
            // (121, 105) and node 1's label box from x = 121: nothing moves.
            let (radii, sizes) = ([7, 7], [(14, 12), (14, 12)]);
            assert_eq!(label_corners(&[(100, 100), (116, 100)], &radii, &sizes), vec![(6, -18), (6, -18)]);
            // Node 1 up and to the right covers above right; above left and below right are free.
            assert_eq!(label_corners(&[(100, 100), (112, 86)], &radii, &sizes)[0], (-20, -18));
        }

        /// `parent_arrow`: only a node on the arrow's way (between child and parent) bends it, one
        /// behind the child does not; the bow keeps 4 px inside the plotting area ("unless that
        /// leaves the plotting area `area` (x range, y range, less 4 px)"); no head when the two
        /// nodes nearly touch (a 4-px gap between their discs).
        #[test]
        fn parent_arrow_bends_for_nodes_on_its_way_inside_the_area_less_4_px() {
            let mpp = 0.05;
            let (ra, rb) = (7.0 * mpp, 10.0 * mpp);
            let (a, b) = ((10.0, 0.0), (0.0, 0.0));
            let wide = || (-20.0..30.0, -20.0..20.0);
            assert_eq!(parent_arrow(a, b, ra, rb, mpp, wide(), std::iter::once((12.0, 0.0))).0.len(), 2);
            // The quarter-length bow peaks 2.5 m out: with the area's edge 2 px beyond that, it
            // leaves the area less 4 px, and so does the right-hand bow; the 0.15 bow fits.
            let edge = 2.5 + 2.0 * mpp;
            let (line, _) = parent_arrow(a, b, ra, rb, mpp, (-20.0..30.0, -1.0..edge), std::iter::once((5.0, 0.0)));
            let peak = line.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
            assert!(line.len() > 10 && (peak - 1.5).abs() < 0.1, "{peak}: {line:?}");
            let near = (ra + rb + 4.0 * mpp, 0.0);
            assert!(parent_arrow(near, b, ra, rb, mpp, wide(), std::iter::empty()).1.is_none());
        }

        /// A chain with radio outages from `outages` (TOML `[[outages]]` tables).
        fn outage_run(nodes: usize, outages: &str) -> RunResult {
            let text = format!(
                "name = \"tiny\"\nduration_s = 100.0\n\
                 [topology]\nlayout = {{ kind = \"chain\", nodes = {nodes}, spacing_m = 5.0 }}\n\
                 [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n\
                 [[flows]]\nsources = [1]\nrate_pps = 1.0\nstart_s = 10.0\n{outages}"
            );
            let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
            let sc = Scenario::from_toml(&text, "test", base, &[]).unwrap();
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
        }

        /// `shade_outages`: "one legend entry naming the nodes (nothing without outages)": a node
        /// off twice is named once ("node", one node), up to eight nodes are named, more are
        /// counted; a run without outages has no such entry.
        #[test]
        fn outage_legend_names_each_node_once_up_to_eight() {
            let d = temp("audit36-outages");
            let entry = |r: &RunResult| {
                write_all(&d, r).unwrap();
                let texts: Vec<Vec<String>> =
                    ["goodput_time", "network_time"].iter().map(|n| svg_texts(&d.join(format!("{n}.svg")))).collect();
                let found: Vec<Vec<&String>> =
                    texts.iter().map(|t| t.iter().filter(|t| t.starts_with("radio off")).collect()).collect();
                assert_eq!(found[0], found[1], "both plots name the same");
                found[0].iter().map(|s| s.to_string()).collect::<Vec<String>>()
            };
            let twice = "[[outages]]\nnodes = 1\nfrom_s = 20.0\nto_s = 30.0\n\
                         [[outages]]\nnodes = 1\nfrom_s = 50.0\nto_s = 60.0\n";
            assert_eq!(entry(&outage_run(3, twice)), ["radio off: node 1"]);
            let eight = "[[outages]]\nnodes = [1, 2, 3, 4, 5, 6, 7, 8]\nfrom_s = 20.0\nto_s = 30.0\n";
            assert_eq!(entry(&outage_run(10, eight)), ["radio off: nodes 1, 2, 3, 4, 5, 6, 7, 8"]);
            let nine = "[[outages]]\nnodes = [1, 2, 3, 4, 5, 6, 7, 8, 9]\nfrom_s = 20.0\nto_s = 30.0\n";
            assert_eq!(entry(&outage_run(10, nine)), ["radio off: nodes 1, 2, 3, 4, 5, 6, 7, 8 and 1 more"]);
            assert!(entry(&outage_run(3, "")).is_empty());
            cleanup(&d);
        }

        /// The run plots' titles name the scenario, preset and seed as such (`run_title`).
        #[test]
        fn run_titles_name_preset_and_seed() {
            let r = tiny_run(2, 20.0, false);
            let want = format!("{} (preset {}, seed {})", r.summary.scenario, r.summary.preset, r.summary.seed);
            assert_ne!(r.summary.preset, r.summary.seed.to_string());
            assert!(run_title(&r) == want, "{}", run_title(&r));
        }

        /// `congestion_figure`: "the axis stops at 10·U, and the title says when something lies
        /// above it" (README, docs/rcrt.md: "its axis cut at 10·U"): a level of 30·U is cut at
        /// 10·U (the y ticks end there) and the title gives the maximum; a level of exactly 10·U
        /// lies on the axis' end, not above it.
        #[test]
        fn congestion_axis_is_cut_at_10_u_and_the_title_says_so() {
            let d = temp("audit36-cut");
            let mut r = protocol_run("rcrt", 3, 120.0);
            let net = &r.network;
            let u = net.sinks().iter().find_map(|&s| net.rcrt_sink(s)).unwrap().config().upper_threshold;
            // The y ticks: the right-aligned texts.
            let y_ticks = |svg: &Path| -> Vec<f64> {
                svg_elements(svg, "text")
                    .iter()
                    .zip(svg_texts(svg))
                    .filter(|(e, _)| svg_attr(e, "text-anchor").as_deref() == Some("end"))
                    .filter_map(|(_, t)| t.parse().ok())
                    .collect()
            };
            for (level, cut) in [(30.0 * u, true), (10.0 * u, false)] {
                let levels = &mut r.network.flows.iter_mut().find(|f| !f.rcrt.levels.is_empty()).unwrap().rcrt.levels;
                levels.retain(|p| p.1 <= 10.0 * u);
                levels.push((60.0, level));
                congestion_figure(&d, "c", "C", &r.network).unwrap();
                let svg = d.join("c.svg");
                let texts = svg_texts(&svg);
                let title = format!("C (axis cut at 10·U; max {level:.0})");
                assert_eq!(texts.contains(&title), cut, "{level}: {texts:?}");
                assert_eq!(texts.iter().any(|t| t == "C"), !cut, "{level}: {texts:?}");
                let top = y_ticks(&svg).into_iter().fold(0.0, f64::max);
                assert!(top <= 10.0 * u + 1e-9 && top >= 8.0 * u, "{level}: y ticks up to {top}, U = {u}");
            }
            cleanup(&d);
        }
    }
}
