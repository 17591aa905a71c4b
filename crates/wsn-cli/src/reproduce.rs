//! `wsn reproduce rcrt`: run every experiment of the RCRT paper (§4) on the simulator and write
//! a report with the analogue of its figures and a table "paper | ours | note".
//!
//! Every experiment runs under both RCRT profiles (`paper`, `reference_code`). Runs are
//! independent and run in parallel. Nothing here is tuned toward the paper's numbers: the
//! scenarios are the paper's setups on the `office40` network, and the report says where and
//! why the results differ.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::progress::Batch;
use anyhow::{Context, Result};
use rayon::prelude::*;
use wsn_sim::endpoints::RcrtFlowTrace;
use wsn_sim::figures::{bars, lines, Series};
use wsn_sim::runner::{run, RunOptions, RunResult};
use wsn_sim::scenario::Scenario;

/// One run of a reproduction.
pub(crate) struct Job {
    pub(crate) key: String,
    scenario: &'static str,
    pub(crate) set: Vec<String>,
}

/// A run keyed `key` of `scenario` (a path under the project's `scenarios/`) with overrides.
pub(crate) fn job(key: impl Into<String>, scenario: &'static str, set: &[String]) -> Job {
    Job { key: key.into(), scenario, set: set.to_vec() }
}

/// Run every job in parallel (plots off) with progress labelled `label` ([`Batch`]), each with its
/// scenario's own seed or, if given, `seed`, and with every flow's application payload set to
/// `payload` bytes if given.
pub(crate) fn run_jobs(
    label: &str,
    jobs: &[Job],
    seed: Option<u64>,
    payload: Option<usize>,
) -> Result<std::collections::BTreeMap<String, RunResult>> {
    let base = wsn_sim::scenario::builtin_base();
    // Load every scenario first, so that a bad file stops the batch before any run.
    let scenarios: Vec<Scenario> = jobs
        .iter()
        .map(|j| {
            let path = base.join(j.scenario);
            let path = path.to_str().unwrap_or_default();
            let mut set = j.set.clone();
            set.push("output.plots=false".into());
            let load = |set: &[String]| {
                Scenario::load(path, set).with_context(|| format!("{}: loading {}", j.key, j.scenario))
            };
            let sc = load(&set)?;
            match payload {
                None => Ok(sc),
                Some(p) => {
                    // Through the scenario's own overrides, so that the usual checks apply.
                    set.extend((0..sc.flows.len()).map(|i| format!("flows.{i}.payload_bytes={p}")));
                    load(&set)
                }
            }
        })
        .collect::<Result<_>>()?;
    // Build every network once without running it, so that a setting that fails only there
    // (e.g. a payload the MAC's frame cannot hold) stops the batch before any run.
    for (j, sc) in jobs.iter().zip(&scenarios) {
        wsn_sim::runner::check(sc, seed).with_context(|| match payload {
            Some(p) => format!("{}: {} with every payload at {p} bytes", j.key, j.scenario),
            None => format!("{}: {}", j.key, j.scenario),
        })?;
    }
    let bar = Batch::new(&batch_label(label, seed), jobs.len());
    let pairs: Vec<(&Job, &Scenario)> = jobs.iter().zip(&scenarios).collect();
    let results = run_all(&pairs, |&(j, sc)| {
        let r = run(sc, RunOptions { seed, out_dir: None, progress: None })
            .with_context(|| format!("{}: running", j.key))?;
        bar.done_one();
        Ok((j.key.clone(), r))
    });
    bar.finish();
    Ok(results?.into_iter().collect())
}

/// The progress label of a batch: `label`, and the run seed when one is given, so that the
/// seeds of a `--seeds` run, which each count their runs from 1, can be told apart in a log
/// (`reproduce rcrt, seed 5: 3/34 runs done, 1 s`).
fn batch_label(label: &str, seed: Option<u64>) -> String {
    match seed {
        Some(s) => format!("{label}, seed {s}"),
        None => label.to_string(),
    }
}

/// `work` on every item, in parallel; the results in the items' order. Once an item has failed
/// no other starts (those under way finish), and the error says how many failed and how many
/// were not started, with each failure's message (which names its item) on a line of its own.
pub(crate) fn run_all<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    run_all_noting(items, work, &std::sync::atomic::AtomicBool::new(false))
}

/// [`run_all`] with the flag it sets at the first failure (or panic) given by the caller (false
/// on entry), so that a test's runs can wait until the failure is noted.
fn run_all_noting<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> Result<R> + Sync,
    failed: &std::sync::atomic::AtomicBool,
) -> Result<Vec<R>> {
    use std::sync::atomic::Ordering;
    let results: Vec<Option<Result<R>>> = items
        .par_iter()
        .map(|item| {
            if failed.load(Ordering::SeqCst) {
                return None;
            }
            // A run that panics (a bug) stops the batch as a failed run does; rayon hands the
            // panic to the caller once the runs under way have ended.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item))).unwrap_or_else(|p| {
                failed.store(true, Ordering::SeqCst);
                std::panic::resume_unwind(p)
            });
            if r.is_err() {
                failed.store(true, Ordering::SeqCst);
            }
            Some(r)
        })
        .collect();
    if !failed.load(Ordering::SeqCst) {
        return Ok(results.into_iter().map(|r| r.expect("every item ran").expect("no item failed")).collect());
    }
    let skipped = results.iter().filter(|r| r.is_none()).count();
    let errors: Vec<String> = results.into_iter().flatten().filter_map(Result::err).map(|e| format!("{e:#}")).collect();
    let mut msg = format!(
        "{} of {} runs failed{}:",
        errors.len(),
        items.len(),
        if skipped > 0 { format!(" ({skipped} not started after the first failure)") } else { String::new() }
    );
    for e in &errors {
        write!(msg, "\n  - {e}")?;
    }
    Err(anyhow::Error::msg(msg))
}

/// The report line naming a run seed given with `--seed` (a `--seeds` run rewrites it in each
/// seed's report: `crate::seeds`).
pub(crate) fn seed_line(s: u64) -> String {
    format!("Run seed: {s} (`--seed`) for every run.\n")
}

/// The report line naming the run seeds (`--seed`, or each scenario file's own).
pub(crate) fn seeds_line(runs: &std::collections::BTreeMap<String, RunResult>, seed: Option<u64>) -> String {
    let used: std::collections::BTreeSet<u64> = runs.values().map(|r| r.summary.seed).collect();
    let list = used.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    match seed {
        Some(s) => seed_line(s),
        None => format!("Run seed(s): {list} (each scenario file's own; `--seed N` overrides them all).\n"),
    }
}

/// Write the "paper | ours" table into `md` and `dir/numbers.csv`, then `dir/report.md` (printed
/// by `crate::seeds` from the files it reads back: once they are in place for a single run, from
/// each seed's staging folder in a `--seeds` run).
pub(crate) fn write_numbers(dir: &Path, mut md: String, rows: &[Row]) -> Result<()> {
    writeln!(md, "## Numbers: paper | ours\n\n| key | paper | ours | unit | note |\n|---|---|---|---|---|")?;
    let mut w = csv::Writer::from_path(dir.join("numbers.csv"))?;
    w.write_record(["key", "paper", "ours", "unit", "note"])?;
    for r in rows {
        writeln!(md, "| {} | {} | {} | {} | {} |", r.key, r.paper, r.ours, r.unit, r.note)?;
        w.write_record([r.key.as_str(), r.paper.as_str(), r.ours.as_str(), r.unit, r.note.as_str()])?;
    }
    w.flush()?;
    std::fs::write(dir.join("report.md"), md)?;
    Ok(())
}

/// The variants every experiment runs under: the two profiles, and the paper profile with only
/// its congestion-level formula replaced by the reference code's (docs/rcrt.md explains why that
/// one change matters on this network).
const PROFILES: [&str; 3] = ["paper", "reference_code", "paper+code_level"];

/// Scenario overrides of a variant.
fn variant(p: &str) -> Vec<String> {
    match p {
        "paper+code_level" => {
            vec!["protocol.profile=\"paper\"".into(), "protocol.level_formula=\"reference_code\"".into()]
        }
        other => vec![format!("protocol.profile=\"{other}\"")],
    }
}

/// Run the RCRT reproduction into `dir` (created if missing).
/// With `payload`, every flow of every experiment carries that many application bytes per packet
/// instead of its scenario's own (64): the authors' test harness sent 6 (docs/rcrt.md, finding H).
pub fn rcrt(quick: bool, dir: PathBuf, seed: Option<u64>, payload: Option<usize>) -> Result<()> {
    let _made = crate::create_out_dir(&dir)?;
    let count = if quick { 200 } else { 1000 };
    let loads: Vec<f64> = if quick { vec![0.3, 0.6, 0.9, 1.2] } else { vec![0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6] };
    let sweep_s = if quick { 1800.0 } else { 3600.0 };
    let long_s = if quick { 3000.0 } else { 9000.0 };
    let mut jobs = Vec::new();
    for p in PROFILES {
        let prof = variant(p);
        let with = |extra: &[String]| -> Vec<String> { prof.iter().cloned().chain(extra.iter().cloned()).collect() };
        jobs.push(job(
            format!("baseline/{p}"),
            "rcrt/baseline.toml",
            &with(&[format!("flows.0.count={count}"), format!("duration_s={long_s}")]),
        ));
        jobs.push(job(format!("single-rcrt/{p}"), "rcrt/single-source-rcrt.toml", &prof));
        for &x in &loads {
            jobs.push(job(
                format!("sweep-rcrt/{p}/{x}"),
                "rcrt/optimality-rcrt.toml",
                &with(&[
                    format!("flows.0.demand_pps={x}"),
                    "flows.0.count=1000000".into(),
                    format!("duration_s={sweep_s}"),
                ]),
            ));
        }
        let rc = count as f64;
        jobs.push(job(
            format!("robustness/{p}"),
            "rcrt/robustness.toml",
            &with(&[
                format!("flows.0.count={count}"),
                format!("flows.1.count={count}"),
                format!("flows.2.count={count}"),
                format!("flows.2.start_s={}", 300.0 + 500.0 * rc / 1000.0),
                format!("duration_s={long_s}"),
            ]),
        ));
        let (c1, c2, c3) = (count, count / 2, count / 4);
        jobs.push(job(
            format!("two-sinks/{p}"),
            "rcrt/two-sinks.toml",
            &with(&[
                format!("flows.0.count={c1}"),
                format!("flows.1.count={c2}"),
                format!("flows.2.count={c2}"),
                format!("flows.3.count={c3}"),
                format!("duration_s={long_s}"),
            ]),
        ));
    }
    jobs.push(job("single-be", "rcrt/single-source-best-effort.toml", &[]));
    // The same source above the harness's 102.4 pkt/s cap: what the one-hop radio and MAC carry.
    jobs.push(job("single-be-saturated", "rcrt/single-source-best-effort.toml", &["flows.0.rate_pps=200".to_string()]));
    for &x in &loads {
        jobs.push(job(
            format!("sweep-be/{x}"),
            "rcrt/optimality-best-effort.toml",
            &[format!("flows.0.rate_pps={x}"), format!("duration_s={sweep_s}")],
        ));
        jobs.push(job(
            format!("sweep-rel/{x}"),
            "rcrt/optimality-reliable.toml",
            &[
                format!("flows.0.rate_pps={x}"),
                format!("flows.0.demand_pps={x}"),
                "flows.0.count=1000000".into(),
                format!("duration_s={sweep_s}"),
            ],
        ));
    }
    let runs = run_jobs("reproduce rcrt", &jobs, seed, payload)?;
    report(&dir, quick, &loads, &runs, seed, payload)?;
    Ok(())
}

/// What every RCRT report says about one seed's figures.
pub(crate) const SEED_CAUTION: &str =
    "One run seed gives one realisation: on this network RCRT's figures, the paper profile's \
     above all, vary strongly from seed to seed (a small change can move a run's mean goodput by a factor of 5 or more either way; \
     docs/rcrt.md, \"The slow-down token skip\"). Quote the medians of `--seeds 5`.";

/// The last sentence of [`SEED_CAUTION`], which a `--seeds` run's seed reports replace.
pub(crate) const QUOTE_MEDIANS: &str = "Quote the medians of `--seeds 5`.";

/// One line of the "paper | ours" table.
#[derive(Clone)]
pub(crate) struct Row {
    pub(crate) key: String,
    pub(crate) paper: String,
    pub(crate) ours: String,
    pub(crate) unit: &'static str,
    pub(crate) note: String,
}

/// A table row; `ours` is printed with four significant digits ([`sig4`]).
pub(crate) fn row(key: &str, paper: impl ToString, ours: f64, unit: &'static str, note: impl Into<String>) -> Row {
    Row { key: key.into(), paper: paper.to_string(), ours: sig4(ours), unit, note: note.into() }
}

/// A row for the share of `of` sampled instants at which a ratio held (`within` of them; the
/// paper's figure is every instant, 1; undefined without instants).
fn share_row(key: &str, within: usize, of: usize, note: String) -> Row {
    row(key, 1.0, if of == 0 { f64::NAN } else { within as f64 / of as f64 }, "ratio", note)
}

/// `x` with four significant digits and no trailing zeros after the point (`n/a` when not
/// finite): 0.0125 stays 0.0125 (three decimals made it 0.013, which cannot be told from the
/// paper's 0.0133 or 0.0167), 102.4 stays 102.4, 12342.0 prints 12342.
pub(crate) fn sig4(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let decimals = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// Median (the mean of the two middle values for an even count; NaN for an empty slice).
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Arithmetic mean (NaN for an empty slice).
pub(crate) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The knee: the largest x up to which the predicate holds at every point.
pub(crate) fn knee(points: &[(f64, f64, f64, f64)], ok: impl Fn(&(f64, f64, f64, f64)) -> bool) -> f64 {
    let mut k = f64::NAN;
    for p in points {
        if ok(p) {
            k = p.0;
        } else {
            break;
        }
    }
    k
}

/// A note for a knee `k` found by [`knee`] on `points`: when every swept point passed, the knee is
/// the sweep's largest value and only a lower bound of the real one.
pub(crate) fn knee_note(points: &[(f64, f64, f64, f64)], k: f64) -> &'static str {
    if points.last().is_some_and(|p| p.0 == k) {
        "; every swept rate passed, so R is only a lower bound of the knee"
    } else {
        ""
    }
}

/// A sweep point: (offered load or demand per node, mean goodput, min goodput over the flows,
/// delivery ratio), as the optimality sweeps give them in ascending load.
type Point = (f64, f64, f64, f64);

/// The project's rule for a fixed-rate load that the network still carries, "fair with ≥ 95 %
/// delivery": delivery ≥ 95 % and the lowest per-flow goodput at least 80 % of the mean ("fair"
/// read as that 80 %, our choice; the README's `wsn sweep`). `wsn sweep`'s knee, the RCRT
/// report's best-effort knee, the IFRC report's best fixed rate and `wsn compare`'s all use it.
pub(crate) fn fair_and_delivered(delivery: f64, min_goodput: f64, mean_goodput: f64) -> bool {
    delivery >= 0.95 && min_goodput >= 0.8 * mean_goodput
}

/// The largest swept load up to which every swept load is [`fair_and_delivered`] ([`knee`]):
/// `best_effort_knee_pps` here, the best fixed fair rate in the IFRC report and `wsn compare`.
pub(crate) fn best_effort_knee(be: &[Point]) -> f64 {
    knee(be, |p| fair_and_delivered(p.3, p.2, p.1))
}

/// `reliable_knee_pps`: the largest swept load up to which every swept load's mean goodput is
/// ≥ 90 % of it ([`knee`]).
fn reliable_knee(rel: &[Point]) -> f64 {
    knee(rel, |p| p.1 >= 0.9 * p.0)
}

/// `rcrt_plateau_pps`: the mean goodput at the highest demand, the sweep's last point (NaN
/// without one).
fn rcrt_plateau(v: &[Point]) -> f64 {
    v.last().map_or(f64::NAN, |p| p.1)
}

/// `reliable_max_goodput_pps`, the highest mean goodput of the reliable-no-CC sweep `rel`, and the
/// denominator of `rcrt_over_reliable_knee`: the larger of it and the knee `rel_knee` (either
/// alone where the other is NaN).
fn reliable_reference(rel: &[Point], rel_knee: f64) -> (f64, f64) {
    let rel_max = rel.iter().map(|p| p.1).filter(|x| x.is_finite()).fold(f64::NAN, f64::max);
    (rel_max, rel_knee.max(rel_max))
}

/// The pieces of the step series `steps` (time s, value; each value holds until the next entry)
/// that fall in `[from, to)`: (value, seconds). Time before the first entry has no value.
fn step_spans(steps: &[(f64, f64)], from: f64, to: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
    steps.iter().enumerate().filter_map(move |(k, &(t, v))| {
        let next = steps.get(k + 1).map_or(f64::INFINITY, |n| n.0);
        let (a, b) = (t.max(from), next.min(to));
        (b > a).then_some((v, b - a))
    })
}

/// Seconds within ±`tol`·`center` of `center`, and seconds in all, of the step series `steps`
/// over `[from, to)` ([`step_spans`]).
fn time_within(steps: &[(f64, f64)], from: f64, to: f64, center: f64, tol: f64) -> (f64, f64) {
    step_spans(steps, from, to).fold((0.0, 0.0), |(inside, all), (v, d)| {
        (if (v - center).abs() <= tol * center { inside + d } else { inside }, all + d)
    })
}

/// The paper's "after this transient, the allocated rate stays within 25 % of the average
/// goodput" (§4.2.1) as a share of time: each flow's allocation against the mean goodput of all
/// flows (`mg`) over the second half of the flow's traffic (from halfway between its first and its
/// last delivery to the last), pooled over the flows (`traces`, one per flow). `None` without RCRT
/// deliveries.
fn allocation_within(traces: &[&RcrtFlowTrace], mg: f64, tol: f64) -> Option<f64> {
    let (mut inside, mut all) = (0.0, 0.0);
    for t in traces {
        let Some((from, to)) = second_half(t) else { continue };
        let (i, a) = time_within(&t.rates, from, to, mg, tol);
        inside += i;
        all += a;
    }
    (all > 0.0).then(|| inside / all)
}

/// The second half of a flow's traffic (`t`, its RCRT trace), from halfway between its first and
/// last delivery to the last (s); `None` before any delivery.
fn second_half(t: &RcrtFlowTrace) -> Option<(f64, f64)> {
    let (first, last) = (t.deliveries.first()?, t.deliveries.last()?);
    Some(((first.0 + last.0) / 2.0, last.0))
}

/// Fig. 1 [PAPER §3.5, spec §7.2]: the end-to-end delivery ratio p against the offered load per
/// node, the total traffic r′ = r(2 − p)/p a flow then causes (data plus one NACK per loss), and
/// the rate after one decrease, M(r)·r with M = p/(2 − p). p is measured on the reliable-no-CC
/// sweep (RCRT's recovery at a fixed rate) as each flow's share of packets that arrived without an
/// end-to-end repair, the quantity RCRT's loss estimate tracks, averaged over the flows; the best
/// effort sweep's delivery ratio is drawn beside it. The paper's checks: (a) above the knee one
/// decrease lands below it, (b) M shrinks as the load grows.
fn fig1(
    dir: &Path,
    md: &mut String,
    rows: &mut Vec<Row>,
    loads: &[f64],
    runs: &std::collections::BTreeMap<String, RunResult>,
    be: &[(f64, f64, f64, f64)],
    knee: f64,
) -> Result<()> {
    // (load, p) for every reliable sweep point with deliveries.
    let p_rel: Vec<(f64, f64)> = loads
        .iter()
        .filter_map(|&x| {
            let r = runs.get(&format!("sweep-rel/{x}"))?;
            let per_flow: Vec<f64> = r
                .summary
                .flows
                .iter()
                .filter(|f| f.delivered > 0)
                .map(|f| 1.0 - f.e2e_repaired.unwrap_or(0) as f64 / f.delivered as f64)
                .collect();
            (!per_flow.is_empty()).then(|| (x, mean(&per_flow)))
        })
        .collect();
    let m = |p: f64| p / (2.0 - p);
    let above: Vec<&(f64, f64)> = p_rel.iter().filter(|q| knee.is_finite() && q.0 > knee).collect();
    let below_share = if above.is_empty() {
        f64::NAN
    } else {
        above.iter().filter(|q| m(q.1) * q.0 < knee).count() as f64 / above.len() as f64
    };
    let pairs: Vec<(f64, f64)> = above.windows(2).map(|w| (m(w[0].1), m(w[1].1))).collect();
    let nonincreasing = if pairs.is_empty() {
        f64::NAN
    } else {
        pairs.iter().filter(|(a, b)| b <= a).count() as f64 / pairs.len() as f64
    };
    let p_knee = p_rel.iter().find(|q| q.0 == knee).map_or(f64::NAN, |q| q.1);
    writeln!(md, "## Fig. 1: delivery ratio against load, and one decrease (§3.5)\n")?;
    writeln!(md, "p is each flow's share of packets that arrived without an end-to-end repair in the reliable-no-CC sweep (RCRT's recovery at a fixed rate), averaged over the flows; M = p/(2 − p) is RCRT's decrease factor; the knee is the reliable-no-CC knee ({knee} pkt/s; the paper's 1.1 is its best-effort saturation).\n")?;
    writeln!(md, "| offered pkt/s | p (reliable, no CC) | best-effort delivery | r′ = r(2 − p)/p | M(r) | M(r)·r |\n|---|---|---|---|---|---|")?;
    for &(x, p) in &p_rel {
        let bed = be.iter().find(|q| q.0 == x).map_or("–".to_string(), |q| format!("{:.3}", q.3));
        let r_total = if p > 0.0 { format!("{:.3}", x * (2.0 - p) / p) } else { "–".into() };
        writeln!(md, "| {x} | {p:.3} | {bed} | {r_total} | {:.3} | {:.3} |", m(p), m(p) * x)?;
    }
    writeln!(md)?;
    rows.push(row(
        "fig1_p_at_knee",
        "—",
        p_knee,
        "ratio",
        "p at the reliable-no-CC knee (the paper plots p but prints no value)",
    ));
    rows.push(row(
        "fig1_cut_below_knee_share",
        1.0,
        below_share,
        "ratio",
        format!("share of swept loads above the knee from which one decrease, M(r)·r, lands below the knee ({} loads; paper: every r, claim (a))", above.len()),
    ));
    rows.push(row(
        "fig1_m_nonincreasing_share",
        1.0,
        nonincreasing,
        "ratio",
        "share of consecutive swept loads above the knee at which M does not grow with the load (paper: M is more aggressive the higher the load, claim (b))",
    ));
    let series = vec![
        Series::line("p, reliable no CC", p_rel.clone()),
        Series::line("delivery ratio, best effort", be.iter().map(|q| (q.0, q.3)).collect()),
        // p = 0 (every packet repaired) has no finite r′.
        Series::line(
            "r′ = r(2 − p)/p (pkt/s)",
            p_rel.iter().filter(|q| q.1 > 0.0).map(|&(x, p)| (x, x * (2.0 - p) / p)).collect(),
        ),
        Series::line("M(r)·r (pkt/s)", p_rel.iter().map(|&(x, p)| (x, m(p) * x)).collect()),
        Series::line(
            "knee (pkt/s)",
            if knee.is_finite() { loads.iter().map(|&x| (x, knee)).collect() } else { Vec::new() },
        ),
    ];
    wsn_sim::figures::lines(
        dir,
        "fig1-p-vs-load",
        "Fig. 1 analogue: delivery ratio p, total traffic r′ and the rate after one decrease",
        "offered load per node (pkt/s)",
        "p (ratio) or rate (pkt/s)",
        &series,
        None,
    )
    .map_err(anyhow::Error::msg)?;
    writeln!(md, "![Fig. 1](fig1-p-vs-load.png)\n")?;
    Ok(())
}

/// The allocated rate after the transient: each flow's time mean of its allocation over the
/// second half of its traffic (the window of [`allocation_within`]), averaged over the flows.
/// `None` without RCRT deliveries. `traces`: one per flow.
fn allocation_mean(traces: &[&RcrtFlowTrace]) -> Option<f64> {
    let per_flow: Vec<f64> = traces
        .iter()
        .filter_map(|t| {
            let (from, to) = second_half(t)?;
            step_mean(&t.rates, from, to)
        })
        .collect();
    (!per_flow.is_empty()).then(|| mean(&per_flow))
}

/// Time mean of the step series `steps` over `[from, to)` ([`step_spans`]); `None` when no time
/// counts.
fn step_mean(steps: &[(f64, f64)], from: f64, to: f64) -> Option<f64> {
    let (area, all) = step_spans(steps, from, to).fold((0.0, 0.0), |(area, all), (v, d)| (area + v * d, all + d));
    (all > 0.0).then(|| area / all)
}

/// The allocation r_i(t) of every flow of each group, one colour and one legend entry per group,
/// each line ending when its flow closed.
fn grouped_rates(groups: &[(&[&wsn_sim::network::Flow], &str)]) -> Vec<Series> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(g, (flows, label))| {
            flows.iter().enumerate().map(move |(i, f)| {
                Series::step(if i == 0 { label.to_string() } else { String::new() }, f.rcrt.rates.clone())
                    .in_group(g)
                    .ending_at(f.rcrt.closed_s)
            })
        })
        .collect()
}

fn report(
    dir: &Path,
    quick: bool,
    loads: &[f64],
    runs: &std::collections::BTreeMap<String, RunResult>,
    seed: Option<u64>,
    payload: Option<usize>,
) -> Result<()> {
    let fig = |r: std::result::Result<(), String>| r.map_err(anyhow::Error::msg);
    let mut md = String::new();
    let mut rows: Vec<Row> = Vec::new();
    // The other profiles' figures, appended after the paper profile's (see `pkey`).
    let mut extra: Vec<Row> = Vec::new();
    writeln!(md, "# RCRT reproduction{}\n", if quick { " (quick)" } else { "" })?;
    writeln!(md, "{}", seeds_line(runs, seed))?;
    writeln!(md, "{SEED_CAUTION}\n")?;
    let payload_text = match payload {
        None => "64-byte payloads".to_string(),
        Some(p) => format!(
            "**{p}-byte payloads** (`--payload-bytes {p}`, instead of the scenarios' 64; the authors' test harness sent 6, docs/rcrt.md finding H)"
        ),
    };
    writeln!(md, "Network: the built-in `office40` (40 nodes over 1,125 m², MultiHopLQI, TinyOS 1.x MAC with hardware ACKs and 4 retries, {payload_text}). Paper: Paek & Govindan, SenSys 2007, §4. Every experiment runs under both RCRT profiles (`paper`, `reference_code`) and under `paper+code_level` (the paper profile with only its congestion-level formula replaced by the code's, see docs/rcrt.md); where a figure shows one, it is the `paper` profile.\n")?;

    // ------------------------------------------------------------------ baseline (Figs 3-6)
    writeln!(md, "## Baseline: 39 sources, fair policy (Figs. 3–6)\n")?;
    writeln!(md, "| profile | delivered / originated (min over flows) | mean goodput pkt/s | goodput spread max−min over flows (pkt/s) | spread / mean | max e2e repair share | feedback / data | parent changes / node (traffic period) | allocation within ±25 % of mean goodput (share of time, second half of each flow's traffic) |\n|---|---|---|---|---|---|---|---|---|")?;
    let mut congestion_figs = Vec::new();
    for p in PROFILES {
        let Some(r) = runs.get(&format!("baseline/{p}")) else { continue };
        // The congestion level of every flow over time, with the cuts of R (every profile).
        let name = format!("congestion-{}", p.replace('+', "-"));
        fig(wsn_sim::plots::congestion_figure(
            dir,
            &name,
            &format!("Baseline, {p} profile: C_i per flow and the cuts of R"),
            &r.network,
        ))?;
        congestion_figs.push((p, name));
        let s = &r.summary;
        let gp: Vec<f64> = s.flows.iter().map(|f| f.goodput_pps).collect();
        let (mn, mx) = (gp.iter().copied().fold(f64::INFINITY, f64::min), gp.iter().copied().fold(0.0, f64::max));
        let dmin = s
            .flows
            .iter()
            .map(|f| if f.originated > 0 { f.delivered as f64 / f.originated as f64 } else { 0.0 })
            .fold(f64::INFINITY, f64::min);
        // As sweep.csv's columns: undefined (NaN, "n/a") without deliveries or packets.
        let rep = crate::max_repaired_share(s).unwrap_or(f64::NAN);
        let orig: u64 = s.flows.iter().map(|f| f.originated).sum();
        let fb = s.totals.feedback_packets.unwrap_or(0) as f64 / orig as f64;
        let pc = s.routing.parent_changes_during_traffic as f64 / (s.nodes - 1) as f64;
        let traces: Vec<&RcrtFlowTrace> = r.network.flows().iter().map(|f| &f.rcrt).collect();
        let within = allocation_within(&traces, mean(&gp), 0.25);
        let within_txt = within.map_or("–".to_string(), |w| format!("{:.1} %", 100.0 * w));
        writeln!(
            md,
            "| {p} | {dmin:.4} | {:.3} | {:.3} | {:.1} % | {:.1} % | {:.1} % | {pc:.1} | {within_txt} |",
            mean(&gp),
            mx - mn,
            100.0 * (mx - mn) / mean(&gp),
            100.0 * rep,
            100.0 * fb
        )?;
        // Every profile's figures go into numbers.csv: the paper profile's under the keys the
        // issue names, the others with the profile appended (see `pkey`).
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(
            &pkey(p, "delivery_ratio_min"),
            1.0,
            dmin,
            "ratio",
            "delivered / originated at the end of the run, min over flows: below 1 by packets still in flight or awaiting repair when the run ends (the paper's flows all completed); wrong deliveries are delivery_violations",
        ));
        // The simulator's own check of every delivery (not the sink's word): a packet delivered
        // twice, behind a higher sequence number, or never originated.
        // The whole invariant record: also deliveries no flow can own, datagrams refused for good
        // and packets skipped for good.
        let inv = &r.summary.totals.invariant_violations;
        let violations: u64 = inv.out_of_order_deliveries
            + inv.duplicate_deliveries
            + inv.phantom_deliveries
            + inv.skipped_deliveries
            + inv.datagrams_refused;
        out.push(row(
            &pkey(p, "delivery_violations"),
            0,
            violations as f64,
            "count",
            "deliveries to the sink application that were duplicates, out of order or of packets never originated, packets skipped for good, datagrams refused for good, all flows (checked by the simulator)",
        ));
        out.push(row(
            &pkey(p, "goodput_spread"),
            0.015,
            mx - mn,
            "pkt/s",
            format!("max − min per-flow goodput; relative {:.1} % (acceptance ≤ 5 %)", 100.0 * (mx - mn) / mean(&gp)),
        ));
        // The acceptance is relative: at a low goodput the absolute spread always looks small.
        out.push(row(
            &pkey(p, "goodput_spread_relative"),
            0.02,
            (mx - mn) / mean(&gp),
            "ratio",
            "(max − min) / mean per-flow goodput (acceptance ≤ 0.05; paper 0.015 of ≈ 0.77)",
        ));
        out.push(row(
            &pkey(p, "max_e2e_repair_share"),
            0.08,
            rep,
            "ratio",
            "largest share of a flow's packets repaired end to end",
        ));
        out.push(row(&pkey(p, "feedback_ratio"), 0.116, fb, "ratio", "feedback packets / data packets originated"));
        out.push(row(
            &pkey(p, "baseline_mean_goodput_pps"),
            0.77,
            mean(&gp),
            "pkt/s",
            "mean per-flow goodput; the paper's ≈ 0.77 is derived (spec §7.3: §4.2.4's 1.226 is \"about 60 % higher\", and \"nearly 0.8\" in §4.2.2)",
        ));
        out.push(row(
            &pkey(p, "baseline_settled_rate_pps"),
            0.55,
            allocation_mean(&traces).unwrap_or(f64::NAN),
            "pkt/s",
            "allocated rate after the transient: time mean over the second half of each flow's traffic, mean over flows (paper: settles near 0.55, Fig. 3)",
        ));
        // Rate within ±25 % of the mean goodput after the transient (second half of the run).
        out.push(row(
            &pkey(p, "rate_within_25pct_share"),
            1.0,
            within.unwrap_or(f64::NAN),
            "ratio",
            "share of time over the second half of each flow's traffic that its allocation is within ±25 % of the mean goodput",
        ));
        if p == "paper" {
            // Fig. 3: rate profile; Fig. 4 goodput; Fig. 5 reception; Fig. 6 repairs.
            fig(wsn_sim::plots::allocation_figure(
                dir,
                "fig3-rate-profile",
                "Fig. 3 analogue: allocated rate per flow (fair policy)",
                &r.network,
                mean(&gp),
            ))?;
            let cats: Vec<String> = s.flows.iter().map(|f| f.source.to_string()).collect();
            fig(bars(
                dir,
                "fig4-goodput",
                "Fig. 4 analogue: per-flow goodput",
                "source node",
                "goodput (pkt/s)",
                &cats,
                &[("goodput".into(), gp.clone())],
            ))?;
            fig(wsn_sim::plots::reception_figure(
                dir,
                "fig5-reception",
                "Fig. 5 analogue: packet reception (sequence number vs time)",
                &r.network,
            ))?;
            fig(wsn_sim::plots::repairs_figure(
                dir,
                "fig6-e2e-repairs",
                "Fig. 6 analogue: packets repaired end to end",
                s,
            ))?;
        }
    }
    writeln!(md, "\n![Fig. 3](fig3-rate-profile.png)\n![Fig. 4](fig4-goodput.png)\n![Fig. 5](fig5-reception.png)\n![Fig. 6](fig6-e2e-repairs.png)\n")?;
    writeln!(md, "Congestion level C_i of every flow as the sink computes it, each cut of R marked at the level of the flow that triggered it (no figure of the paper; docs/rcrt.md, finding A):\n")?;
    for (p, name) in &congestion_figs {
        writeln!(md, "![C_i, {p}]({name}.png)")?;
    }
    writeln!(md)?;

    // ------------------------------------------------------------------ optimality (Figs 7-9)
    writeln!(md, "## Optimality (Figs. 7–9) and single source\n")?;
    let pts = |prefix: &str| -> Vec<(f64, f64, f64, f64)> {
        loads
            .iter()
            .filter_map(|&x| {
                runs.get(&format!("{prefix}/{x}")).map(|r| {
                    (
                        x,
                        r.summary.totals.mean_goodput_pps,
                        r.summary.totals.min_goodput_pps,
                        r.summary.totals.delivery_ratio,
                    )
                })
            })
            .collect()
    };
    let be = pts("sweep-be");
    let rel = pts("sweep-rel");
    let rc = pts("sweep-rcrt/paper");
    let rc2 = pts("sweep-rcrt/reference_code");
    let rc3 = pts("sweep-rcrt/paper+code_level");
    writeln!(md, "| offered / demand pkt/s | best effort mean (min) | delivery | reliable no CC mean (min) | RCRT paper mean (min) | RCRT reference-code mean (min) | RCRT paper + code level mean (min) |\n|---|---|---|---|---|---|---|")?;
    for (i, &x) in loads.iter().enumerate() {
        let f = |v: &[(f64, f64, f64, f64)]| v.get(i).map_or("–".to_string(), |p| format!("{:.3} ({:.3})", p.1, p.2));
        writeln!(
            md,
            "| {x} | {} | {} | {} | {} | {} | {} |",
            f(&be),
            be.get(i).map_or("–".into(), |p| format!("{:.1} %", 100.0 * p.3)),
            f(&rel),
            f(&rc),
            f(&rc2),
            f(&rc3)
        )?;
    }
    let be_knee = best_effort_knee(&be);
    let rel_knee = reliable_knee(&rel);
    let plateau = rcrt_plateau(&rc);
    let rel_after: f64 =
        rel.iter().filter(|p| p.0 > rel_knee).map(|p| p.1).fold(f64::NAN, |a, b| if a.is_nan() { b } else { a.min(b) });
    rows.push(row(
        "best_effort_knee_pps",
        1.1,
        be_knee,
        "pkt/s",
        format!(
            "largest swept load up to which every swept load has ≥ 95 % delivery and every flow ≥ 80 % of the mean{}",
            knee_note(&be, be_knee)
        ),
    ));
    let beyond = if rel_after.is_finite() { format!("{rel_after:.3}") } else { "none swept beyond".into() };
    rows.push(row(
        "reliable_knee_pps",
        0.9,
        rel_knee,
        "pkt/s",
        format!(
            "largest swept load up to which every swept load's mean goodput is ≥ 90 % of it (a floor of the knee on \
             the swept grid){}; lowest goodput beyond: {beyond}",
            knee_note(&rel, rel_knee)
        ),
    ));
    // The paper's 88 % is of "the 0.9 reliable maximum", a throughput. The knee above is a grid
    // floor (the real knee lies up to one step higher) and dividing by it inflated the ratio in
    // the passing direction (a review): the denominator is the larger of the knee and the
    // highest mean goodput the reliable baseline carried in the sweep.
    let (rel_max, denom) = reliable_reference(&rel, rel_knee);
    rows.push(row(
        "reliable_max_goodput_pps",
        0.9,
        rel_max,
        "pkt/s",
        "highest mean per-node goodput of the reliable-no-CC sweep (the paper's 0.9 reliable maximum)",
    ));
    let ratio_note = "RCRT plateau / the larger of reliable_knee_pps and reliable_max_goodput_pps (acceptance ≥ 0.85)";
    rows.push(row("rcrt_plateau_pps", 0.8, plateau, "pkt/s", "RCRT mean goodput at the highest demand"));
    rows.push(row("rcrt_over_reliable_knee", 0.88, plateau / denom, "ratio", ratio_note));
    for (p, v) in [("reference_code", &rc2), ("paper+code_level", &rc3)] {
        let plateau = rcrt_plateau(v);
        extra.push(row(&pkey(p, "rcrt_plateau_pps"), 0.8, plateau, "pkt/s", "RCRT mean goodput at the highest demand"));
        extra.push(row(&pkey(p, "rcrt_over_reliable_knee"), 0.88, plateau / denom, "ratio", ratio_note));
    }
    let line = |v: &[(f64, f64, f64, f64)], l: &str| Series::line(l, v.iter().map(|p| (p.0, p.1)).collect());
    let diag = Series::reference("offered = goodput", loads.iter().map(|&x| (x, x)).collect());
    fig(lines(
        dir,
        "fig7-9-optimality",
        "Figs. 7–9 analogue: mean per-node goodput vs offered load / demand",
        "offered load or demand per node (pkt/s)",
        "goodput (pkt/s)",
        &[
            line(&be, "best effort (Fig. 7)"),
            line(&rel, "reliable, no CC (Fig. 8)"),
            line(&rc, "RCRT paper (Fig. 9)"),
            line(&rc2, "RCRT reference code"),
            line(&rc3, "RCRT paper + code level"),
            diag,
        ],
        None,
    ))?;
    writeln!(md, "\n![Figs. 7–9](fig7-9-optimality.png)\n")?;

    // ------------------------------------------------------------------ Fig. 1 (§3.5)
    fig1(dir, &mut md, &mut rows, loads, runs, &be, rel_knee)?;
    let sbe = runs.get("single-be").map_or(f64::NAN, |r| r.summary.totals.mean_goodput_pps);
    let sat = runs.get("single-be-saturated").map_or(f64::NAN, |r| r.summary.totals.mean_goodput_pps);
    writeln!(
        md,
        "Single source one hop from the sink: both sources offer at most 102.4 pkt/s, the cap of the authors' test harness (a 10-ms application timer); offered 200 pkt/s, best effort carries {sat:.1} pkt/s (the one-hop limit of radio and MAC).\n"
    )?;
    rows.push(row(
        "single_source_be_saturated_pps",
        "—",
        sat,
        "pkt/s",
        "best effort one hop from the sink, offered 200 pkt/s (above the harness's 102.4 cap)",
    ));
    for p in PROFILES {
        let src = runs.get(&format!("single-rcrt/{p}")).map_or(f64::NAN, |r| r.summary.totals.mean_goodput_pps);
        writeln!(md, "Single source ({p}): RCRT {src:.1} pkt/s, best effort {sbe:.1} pkt/s, ratio {:.2} (paper 60/95 = 0.63); against the saturated best effort {:.2}.\n", src / sbe, src / sat)?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(
            &pkey(p, "single_source_rcrt_over_be"),
            0.63,
            src / sbe,
            "ratio",
            format!("RCRT {src:.1} vs best effort {sbe:.1} pkt/s, both at most 102.4 offered (paper 60 vs 95); best effort offered 200: {sat:.1}"),
        ));
    }

    // ------------------------------------------------------------------ robustness (Figs 10-12)
    writeln!(md, "## Robustness: demand classes and a late set (Figs. 10–12)\n")?;
    for p in PROFILES {
        let Some(r) = runs.get(&format!("robustness/{p}")) else { continue };
        let set = |d: f64| -> Vec<&wsn_sim::network::Flow> {
            r.network.flows().iter().filter(|f| (f.demand_pps - d).abs() < 1e-9).collect()
        };
        let gp = |v: &[&wsn_sim::network::Flow]| {
            mean(&v.iter().map(|f| r.summary.flows[f.id as usize].goodput_pps).collect::<Vec<_>>())
        };
        let (a, b, c) = (set(0.5), set(1.0), set(4.0));
        let (ga, gb, gc) = (gp(&a), gp(&b), gp(&c));
        // Rate ratios while all three classes are active: median over the set-C join window.
        let c_start = c.first().map_or(0.0, |f| f.start.as_secs_f64());
        let c_end = c.iter().map(|f| f.last_delivery.as_secs_f64()).fold(0.0, f64::max);
        // A flow's allocation at `t`, none once its connection closed (its last rate would stay).
        let rate_at = |f: &wsn_sim::network::Flow, t: f64| {
            if f.rcrt.closed_s.is_some_and(|c| c <= t) {
                return f64::NAN;
            }
            f.rcrt.rates.iter().take_while(|x| x.0 <= t).last().map_or(f64::NAN, |x| x.1)
        };
        let mut ratios_b = Vec::new();
        let mut ratios_c = Vec::new();
        let steps = 20;
        for k in 1..steps {
            let t = c_start + (c_end - c_start) * k as f64 / steps as f64;
            let active = |v: &[&wsn_sim::network::Flow]| -> Vec<f64> {
                v.iter().map(|f| rate_at(f, t)).filter(|x| x.is_finite()).collect()
            };
            let (va, vb, vc) = (active(&a), active(&b), active(&c));
            if va.is_empty() || vb.is_empty() || vc.is_empty() {
                continue; // a class not active at `t`
            }
            let (ra, rb, rcc) = (mean(&va), mean(&vb), mean(&vc));
            // A set without an allocation yet at `t` has no ratio there.
            if ra > 0.0 && ra.is_finite() && rb.is_finite() && rcc.is_finite() {
                ratios_b.push(rb / ra);
                ratios_c.push(rcc / ra);
            }
        }
        let med = |v: &[f64]| median(v);
        writeln!(md, "{p}: set goodputs demand 0.5 → {ga:.3}, 1.0 → {gb:.3}, 4.0 → {gc:.3} pkt/s (paper 0.44 / 0.77 / 2.04); median rate ratio while C is active 1 : {:.2} : {:.2} (paper 1 : 2 : 8).\n", med(&ratios_b), med(&ratios_c))?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(&pkey(p, "robustness_goodput_d05"), 0.44, ga, "pkt/s", "demand-0.5 set"));
        out.push(row(&pkey(p, "robustness_goodput_d10"), 0.77, gb, "pkt/s", "demand-1.0 set"));
        out.push(row(&pkey(p, "robustness_goodput_d40"), 2.04, gc, "pkt/s", "demand-4.0 set (joins late)"));
        out.push(row(
            &pkey(p, "robustness_ratio_d10_over_d05"),
            2.0,
            med(&ratios_b),
            "ratio",
            "median while set C is active (acceptance ±10 %)",
        ));
        out.push(row(
            &pkey(p, "robustness_ratio_d40_over_d05"),
            8.0,
            med(&ratios_c),
            "ratio",
            "median while set C is active (acceptance ±10 %)",
        ));
        // The acceptance asks for ±10 % at all times, which a median hides.
        let within = ratios_b
            .iter()
            .zip(&ratios_c)
            .filter(|(b, c)| (*b / 2.0 - 1.0).abs() <= 0.1 && (*c / 8.0 - 1.0).abs() <= 0.1)
            .count();
        out.push(share_row(
            &pkey(p, "robustness_ratios_within_10pct_share"),
            within,
            ratios_b.len(),
            format!(
                "share of {} instants, evenly spaced while all three classes are active, at which both 1:2 and 1:8 \
                 hold within ±10 % (of the rates the sources are told, as the wire encodes them)",
                ratios_b.len()
            ),
        ));
        // Parent changes [PAPER §4.2.3, Fig. 12]: the paper's 3.4 per node is from this
        // experiment's 38 minutes. Counted from the first flow's start to the end of the run
        // (traffic need not last that long), then scaled to the paper's 38 minutes.
        let s = &r.summary;
        let pc = s.routing.parent_changes_during_traffic as f64 / (s.nodes - 1) as f64;
        let first = r.network.flows().iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
        let span = s.sim_seconds - first;
        out.push(row(
            &pkey(p, "parent_changes_per_node"),
            3.4,
            pc,
            "count",
            format!(
                "robustness run, per node from the first flow's start to the end of the run ({span:.0} s; paper: 3.4 over its 38 min, see parent_changes_per_node_per_38min)"
            ),
        ));
        out.push(row(
            &pkey(p, "parent_changes_per_node_per_38min"),
            3.4,
            if span > 0.0 { pc * 2280.0 / span } else { f64::NAN },
            "count",
            "parent_changes_per_node scaled to 38 minutes (MultiHopLQI's churn does not depend on the load, docs/rcrt.md finding B)",
        ));
        // The same as the authors' harness could see it: changes of the parent stamped in each
        // delivered packet, per flow, scaled to the paper's 38 minutes of the flow's traffic.
        let seen: Vec<f64> = s
            .flows
            .iter()
            .filter(|f| f.goodput_pps > 0.0)
            .map(|f| f.parent_changes_seen as f64 / (f.delivered as f64 / f.goodput_pps) * 2280.0)
            .collect();
        out.push(row(
            &pkey(p, "parent_changes_seen_per_38min"),
            3.4,
            mean(&seen),
            "count",
            "robustness run, mean over flows of the parent changes seen in delivered packets (the harness stamped the parent in each) per 38 min of the flow's traffic",
        ));
        if p == "paper" {
            let mut series = grouped_rates(&[(&a, "demand 0.5"), (&b, "demand 1.0"), (&c, "demand 4.0")]);
            series.push(Series::span(0.0, r.network.end().as_secs_f64()));
            fig(lines(
                dir,
                "fig10-robustness-rates",
                "Fig. 10 analogue: rate profile, demand-proportional",
                "time (s)",
                "rate (pkt/s)",
                &series,
                None,
            ))?;
            fig(bars(
                dir,
                "fig11-set-goodput",
                "Fig. 11 analogue: goodput by demand class",
                "demand class",
                "goodput (pkt/s)",
                &["0.5".into(), "1.0".into(), "4.0".into()],
                &[("goodput".into(), vec![ga, gb, gc])],
            ))?;
            // During traffic, as `parent_changes_per_node` (the warm-up's tree building left out).
            let pcs: Vec<f64> = (0..r.network.len())
                .map(|i| {
                    let before = r.parent_changes_before_traffic.get(i).copied().unwrap_or(0);
                    r.network.node_stats(i).parent_changes.saturating_sub(before) as f64
                })
                .collect();
            let cats: Vec<String> = (0..r.network.len()).map(|i| i.to_string()).collect();
            fig(bars(
                dir,
                "fig12-parent-changes",
                &format!("Fig. 12 analogue: routing parent changes per node during traffic ({span:.0} s)"),
                "node",
                "parent changes",
                &cats,
                &[("changes".into(), pcs)],
            ))?;
        }
    }
    writeln!(md, "![Fig. 10](fig10-robustness-rates.png)\n![Fig. 11](fig11-set-goodput.png)\n![Fig. 12](fig12-parent-changes.png)\n")?;

    // ------------------------------------------------------------------ two sinks (Table 4, Figs 13-14)
    writeln!(md, "## Flexibility: two sinks, two policies (Table 4, Figs. 13–14)\n")?;
    for p in PROFILES {
        let Some(r) = runs.get(&format!("two-sinks/{p}")) else { continue };
        let sinks = r.network.sinks().to_vec();
        anyhow::ensure!(
            sinks.len() >= 2,
            "two-sinks/{p}: the scenario has {} sink(s), the experiment needs two",
            sinks.len()
        );
        let by = |sink: usize, d: f64| -> Vec<&wsn_sim::network::Flow> {
            r.network.flows().iter().filter(|f| f.sink == sinks[sink] && (f.demand_pps - d).abs() < 1e-9).collect()
        };
        let (a1, b1, a2, b2) = (by(0, 1.0), by(0, 0.5), by(1, 1.0), by(1, 0.5));
        let rate_mid = |v: &[&wsn_sim::network::Flow]| {
            // Median allocated rate of the set at the middle of B2's life.
            let b2_start = b2.iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
            let t = (b2_start + b2.iter().map(|f| f.last_delivery.as_secs_f64()).fold(0.0, f64::max)) / 2.0;
            // (A flow closed by then has no rate: its last one would stay.)
            let rs: Vec<f64> = v
                .iter()
                .filter(|f| !f.rcrt.closed_s.is_some_and(|c| c <= t))
                .filter_map(|f| f.rcrt.rates.iter().take_while(|x| x.0 <= t).last().map(|x| x.1))
                .collect();
            median(&rs)
        };
        let (ra1, rb1, ra2, rb2) = (rate_mid(&a1), rate_mid(&b1), rate_mid(&a2), rate_mid(&b2));
        let app =
            |v: &[&wsn_sim::network::Flow]| v.iter().map(|f| r.summary.flows[f.id as usize].goodput_pps).sum::<f64>();
        // Per source node (Table 4's 37), as the paper gives them.
        let n_nodes =
            r.network.flows().iter().map(|f| f.source).collect::<std::collections::BTreeSet<_>>().len().max(1) as f64;
        let (g1, g2) = ((app(&a1) + app(&b1)) / n_nodes, (app(&a2) + app(&b2)) / n_nodes);
        let regime = if rb2 >= 0.5 - 1e-6 {
            "B2 at its demand 0.5, A2 above it: the demand-limited policy's regime above the equal share"
        } else {
            "the demand-limited policy gives them equal rates while below 0.5"
        };
        writeln!(md, "{p}: rates at the middle of B2's life A1 {ra1:.3}, B1 {rb1:.3} (A1/B1 {:.2}, paper 2), A2 {ra2:.3}, B2 {rb2:.3} ({regime}); per-node goodput app 1 {g1:.3}, app 2 {g2:.3}, total {:.3} pkt/s (paper 0.718 + 0.508 = 1.226).\n", ra1 / rb1, g1 + g2)?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(
            &pkey(p, "two_sinks_a1_over_b1"),
            2.0,
            ra1 / rb1,
            "ratio",
            "demand-proportional application, median rates at the middle of B2's life (acceptance 2 ± 10 %)",
        ));
        // One instant decides little: the share of 19 evenly spaced instants of B2's life at
        // which A1/B1 (median rates of the flows still open) is within 2 ± 10 %.
        let b2_start = b2.iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
        let b2_end = b2.iter().map(|f| f.last_delivery.as_secs_f64()).fold(0.0, f64::max);
        let open_median = |v: &[&wsn_sim::network::Flow], t: f64| {
            let rs: Vec<f64> = v
                .iter()
                .filter(|f| !f.rcrt.closed_s.is_some_and(|c| c <= t))
                .filter_map(|f| f.rcrt.rates.iter().take_while(|x| x.0 <= t).last().map(|x| x.1))
                .collect();
            if rs.is_empty() {
                f64::NAN
            } else {
                median(&rs)
            }
        };
        let ratios: Vec<f64> = (1..20)
            .map(|k| b2_start + (b2_end - b2_start) * k as f64 / 20.0)
            .map(|t| open_median(&a1, t) / open_median(&b1, t))
            .filter(|x| x.is_finite())
            .collect();
        let within = ratios.iter().filter(|x| (*x / 2.0 - 1.0).abs() <= 0.1).count();
        out.push(share_row(
            &pkey(p, "two_sinks_a1_over_b1_within_10pct_share"),
            within,
            ratios.len(),
            format!(
                "share of {} instants over B2's life at which A1/B1 is within 2 ± 10 % (of the rates the sources \
                 are told, as the wire encodes them)",
                ratios.len()
            ),
        ));
        // The demand-limited policy gives A2 and B2 equal rates only while the fair share is
        // below B2's demand; above it B2 gets its 0.5 and A2 the rest, so a ratio above 1 is
        // then the policy at work, not a miss.
        let a2_note = if rb2 >= 0.5 - 1e-6 {
            format!("demand-limited application; B2 at its demand 0.5 and A2 at {ra2:.3} here, above the equal regime")
        } else {
            "demand-limited application, equal while below 0.5".to_string()
        };
        out.push(row(&pkey(p, "two_sinks_a2_over_b2"), 1.0, ra2 / rb2, "ratio", a2_note));
        out.push(row(&pkey(p, "two_sinks_goodput_app1"), 0.718, g1, "pkt/s", "per node"));
        out.push(row(&pkey(p, "two_sinks_goodput_app2"), 0.508, g2, "pkt/s", "per node"));
        if p == "paper" {
            let mut series = grouped_rates(&[
                (&a1, "A1 (app 1, demand 1.0)"),
                (&b1, "B1 (app 1, demand 0.5)"),
                (&a2, "A2 (app 2, demand 1.0)"),
                (&b2, "B2 (app 2, demand 0.5)"),
            ]);
            series.push(Series::span(0.0, r.network.end().as_secs_f64()));
            fig(lines(
                dir,
                "fig13-two-sinks-rates",
                "Fig. 13 analogue: rates of the four sets",
                "time (s)",
                "rate (pkt/s)",
                &series,
                None,
            ))?;
            let nodes: Vec<u16> = r
                .network
                .flows()
                .iter()
                .map(|f| f.source.0)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let per = |sink: usize| -> Vec<f64> {
                nodes
                    .iter()
                    .map(|&n| {
                        r.summary
                            .flows
                            .iter()
                            .filter(|f| f.source == n && f.sink == sinks[sink].0)
                            .map(|f| f.goodput_pps)
                            .sum()
                    })
                    .collect()
            };
            let cats: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
            fig(bars(
                dir,
                "fig14-two-sinks-goodput",
                "Fig. 14 analogue: per-node goodput, two applications stacked",
                "node",
                "goodput (pkt/s)",
                &cats,
                &[("app 1".into(), per(0)), ("app 2".into(), per(1))],
            ))?;
        }
    }
    writeln!(md, "![Fig. 13](fig13-two-sinks-rates.png)\n![Fig. 14](fig14-two-sinks-goodput.png)\n")?;

    // The other variants' rows repeat the paper profile's notes: say whose figure each is.
    rows.extend(extra.into_iter().map(|mut r| {
        if let Some(v) = variant_name(&r.key) {
            r.note = format!("{v}: {}", r.note);
        }
        r
    }));
    write_numbers(dir, md, &rows)
}

/// The variant a `numbers.csv` key of another variant than the paper profile belongs to (see
/// [`pkey`]).
fn variant_name(key: &str) -> Option<&'static str> {
    if key.ends_with("_paper_code_level") {
        Some("paper profile with the reference code's congestion level")
    } else if key.ends_with("_reference_code") {
        Some("reference-code profile")
    } else {
        None
    }
}

/// The `numbers.csv` key of `base` for profile `p`: the paper profile (the default) keeps the
/// key the RCRT issue names; the others append theirs (`feedback_ratio_reference_code`,
/// `feedback_ratio_paper_code_level`).
pub(crate) fn pkey(p: &str, base: &str) -> String {
    if p == "paper" {
        base.to_string()
    } else {
        format!("{base}_{}", p.replace('+', "_"))
    }
}

#[cfg(test)]
mod tests {
    use super::{batch_label, job, median, pkey, run_all, run_all_noting, run_jobs, sig4, step_mean, time_within};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    /// How many runs have reached a point, for runs to wait on one another with a time limit:
    /// a test whose runs are not scheduled as it expects fails instead of hanging.
    #[derive(Default)]
    struct Arrivals {
        count: Mutex<usize>,
        changed: Condvar,
    }

    impl Arrivals {
        const LIMIT: Duration = Duration::from_secs(10);

        fn arrive(&self) {
            *self.count.lock().unwrap() += 1;
            self.changed.notify_all();
        }

        /// Wait until `n` runs have arrived; false if they have not within [`Self::LIMIT`].
        fn wait_for(&self, n: usize) -> bool {
            let count = self.count.lock().unwrap();
            let (count, _) = self.changed.wait_timeout_while(count, Self::LIMIT, |c| *c < n).unwrap();
            *count >= n
        }
    }

    /// Waits until the batch has noted a failure (`failed`, the flag given to
    /// [`run_all_noting`]); after [`Arrivals::LIMIT`] sets `waited_too_long` and fails the run.
    fn wait_until_noted(failed: &AtomicBool, waited_too_long: &AtomicBool) -> anyhow::Result<()> {
        let t0 = std::time::Instant::now();
        while !failed.load(Ordering::SeqCst) {
            if t0.elapsed() > Arrivals::LIMIT {
                waited_too_long.store(true, Ordering::SeqCst);
                anyhow::bail!("the first failure was not noted within {:?}", Arrivals::LIMIT);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// A `--seeds` run's progress lines name their seed: each seed counts its runs from 1, and
    /// without the seed a log of `--seeds 3` showed "1/34 runs done" three times over.
    #[test]
    fn progress_label_names_the_seed() {
        assert_eq!(batch_label("reproduce rcrt", Some(5)), "reproduce rcrt, seed 5");
        assert_eq!(batch_label("compare", None), "compare");
    }

    /// A batch returns its results in order; after a failure it starts no new run, and the
    /// error counts the failed runs and the ones not started and names every failed one.
    #[test]
    fn a_failed_run_stops_the_batch_and_every_failure_is_named() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let items: Vec<usize> = (0..100).collect();
        let all = pool.install(|| run_all(&items, |&i| Ok(i * 2))).unwrap();
        assert_eq!(all, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        // Run 0 fails at once; every other run waits until the batch has noted that failure
        // before it returns. The thread that calls `run_all` runs item 0 first; the other thread
        // starts at most one run before the failure is noted and no run starts after it, so at
        // most 2 runs start, whatever the OS's scheduling.
        let started = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let waited_too_long = AtomicBool::new(false);
        let e = pool
            .install(|| {
                run_all_noting(
                    &items,
                    |&i| {
                        started.fetch_add(1, Ordering::SeqCst);
                        if i == 0 {
                            anyhow::bail!("run {i}: boom");
                        }
                        wait_until_noted(&failed, &waited_too_long)?;
                        Ok(i)
                    },
                    &failed,
                )
            })
            .unwrap_err()
            .to_string();
        assert!(!waited_too_long.load(Ordering::SeqCst), "run 0 never failed: {e}");
        let started = started.load(Ordering::SeqCst);
        assert!((1..=2).contains(&started), "{started} runs started; at most 2 can start before the failure is noted");
        let skipped = 100 - started;
        assert_eq!(
            e,
            format!("1 of 100 runs failed ({skipped} not started after the first failure):\n  - run 0: boom")
        );
        // Two runs under way when the first fails both finish, and both are named with their
        // causes. Each waits until both have started; if rayon does not run them at once (they
        // need both threads), the wait times out and the test fails.
        let both_started = Arrivals::default();
        let alone = AtomicBool::new(false);
        let e = pool
            .install(|| {
                run_all(&[0, 1], |&i| -> anyhow::Result<()> {
                    both_started.arrive();
                    if !both_started.wait_for(2) {
                        alone.store(true, Ordering::SeqCst);
                    }
                    Err(anyhow::anyhow!("no route").context(format!("run {i}: running")))
                })
            })
            .unwrap_err()
            .to_string();
        assert!(!alone.load(Ordering::SeqCst), "runs 0 and 1 did not run at the same time: {e}");
        assert_eq!(e, "2 of 2 runs failed:\n  - run 0: running: no route\n  - run 1: running: no route");
    }

    /// A run that panics stops the batch as a failed run does (no run starts after it), and the
    /// panic reaches the caller.
    #[test]
    fn a_panicking_run_stops_the_batch() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let items: Vec<usize> = (0..100).collect();
        let started = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let waited_too_long = AtomicBool::new(false);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                run_all_noting(
                    &items,
                    |&i| {
                        started.fetch_add(1, Ordering::SeqCst);
                        if i == 0 {
                            panic!("run 0: a bug");
                        }
                        wait_until_noted(&failed, &waited_too_long)?;
                        Ok(i)
                    },
                    &failed,
                )
            })
        }));
        let payload = r.expect_err("the panic did not reach the caller");
        assert!(!waited_too_long.load(Ordering::SeqCst), "the batch did not note the panic");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"run 0: a bug"));
        let started = started.load(Ordering::SeqCst);
        assert!((1..=2).contains(&started), "{started} runs started; at most 2 can start before the panic is noted");
    }

    /// `--payload-bytes` reaches every flow of a multi-flow experiment; without it each flow
    /// keeps its scenario's payload.
    #[test]
    fn payload_override_reaches_every_flow() {
        let jobs = [job("two-sinks", "rcrt/two-sinks.toml", &["duration_s=1".to_string()])];
        let own = run_jobs("test", &jobs, None, None).expect("runs");
        let six = run_jobs("test", &jobs, None, Some(6)).expect("runs");
        let payloads = |r: &std::collections::BTreeMap<String, wsn_sim::runner::RunResult>| -> Vec<usize> {
            r["two-sinks"].network.flows().iter().map(|f| f.payload_bytes).collect()
        };
        let (own, six) = (payloads(&own), payloads(&six));
        assert!(own.len() > 4 && own.iter().all(|&p| p == 64), "{own:?}");
        assert!(six.len() == own.len() && six.iter().all(|&p| p == 6), "{six:?}");
    }

    /// The paper profile keeps the keys; the others append their name.
    #[test]
    fn profile_keys() {
        assert_eq!(pkey("paper", "feedback_ratio"), "feedback_ratio");
        assert_eq!(pkey("reference_code", "feedback_ratio"), "feedback_ratio_reference_code");
        assert_eq!(pkey("paper+code_level", "feedback_ratio"), "feedback_ratio_paper_code_level");
        assert_eq!(
            super::variant_name(&pkey("paper+code_level", "x")),
            Some("paper profile with the reference code's congestion level")
        );
        assert_eq!(super::variant_name(&pkey("reference_code", "x")), Some("reference-code profile"));
        assert_eq!(super::variant_name(&pkey("paper", "x")), None);
    }

    #[test]
    fn step_mean_weights_each_value_by_how_long_it_holds() {
        let steps = [(0.0, 1.0), (10.0, 3.0), (20.0, 5.0)];
        // [5, 25): 1 for 5 s, 3 for 10 s, 5 for 5 s.
        assert_eq!(step_mean(&steps, 5.0, 25.0), Some((5.0 + 30.0 + 25.0) / 20.0));
        // Before the first entry nothing counts.
        assert_eq!(step_mean(&[(10.0, 2.0)], 0.0, 20.0), Some(2.0));
        assert_eq!(step_mean(&[(30.0, 2.0)], 0.0, 20.0), None);
        assert_eq!(step_mean(&[], 0.0, 20.0), None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn sig4_keeps_four_significant_digits() {
        for (x, want) in [
            (0.0125, "0.0125"),
            (0.016_666, "0.01667"),
            (102.4, "102.4"),
            (0.547, "0.547"),
            (12_342.0, "12342"),
            (2.0, "2"),
            (-0.25, "-0.25"),
            (0.0, "0"),
            (1e-9, "0.000000001"),
            (f64::NAN, "n/a"),
        ] {
            assert_eq!(sig4(x), want, "{x}");
        }
    }

    #[test]
    fn time_within_weights_each_value_by_how_long_it_holds() {
        // 1.0 from 0 s, 2.0 from 10 s, 1.1 from 20 s; window [5, 25), centre 1.0 ± 25 %.
        let steps = [(0.0, 1.0), (10.0, 2.0), (20.0, 1.1)];
        let (inside, all) = time_within(&steps, 5.0, 25.0, 1.0, 0.25);
        assert_eq!(all, 20.0);
        assert_eq!(inside, 10.0, "5 s of 1.0 and 5 s of 1.1; not the 10 s of 2.0");
        // Before the first entry there is no value; an empty window counts nothing.
        assert_eq!(time_within(&[(30.0, 1.0)], 0.0, 40.0, 1.0, 0.25), (10.0, 10.0));
        assert_eq!(time_within(&steps, 25.0, 25.0, 1.0, 0.25), (0.0, 0.0));
    }

    /// Mutation audit (session 36) of the report's number helpers: each test pins what the helper's
    /// doc comment, or the meaning docs/rcrt.md ("Paper | ours") gives its `numbers.csv` key, says.
    mod audit36 {
        use crate::reproduce::{
            allocation_mean, allocation_within, best_effort_knee, knee, knee_note, mean, rcrt_plateau, reliable_knee,
            reliable_reference, second_half, share_row, sig4, time_within, Point,
        };
        use wsn_sim::endpoints::RcrtFlowTrace;

        /// Sweep points at `loads` with nothing else set (for predicates on the load alone).
        fn at(loads: &[f64]) -> Vec<Point> {
            loads.iter().map(|&x| (x, 0.0, 0.0, 0.0)).collect()
        }

        /// [`knee`]: "the largest x up to which the predicate holds at every point": a point that
        /// passes after one that failed does not count, and no point passing gives no knee (NaN,
        /// which `crate::seeds` counts as below the swept range).
        #[test]
        fn knee_is_the_last_point_before_the_first_failure() {
            let pts = at(&[0.2, 0.4, 0.6, 0.8]);
            assert_eq!(knee(&pts, |p| p.0 != 0.6), 0.4);
            assert_eq!(knee(&pts, |_| true), 0.8);
            assert!(knee(&pts, |p| p.0 > 0.2).is_nan());
            assert!(knee(&[], |_| true).is_nan());
        }

        /// [`knee_note`]: only a knee at the sweep's largest value is a lower bound, and the note
        /// says so in the words `crate::seeds` reads as one (`bound_of`: "only a lower bound").
        #[test]
        fn only_a_knee_at_the_top_of_the_sweep_is_noted_as_a_bound() {
            let pts = at(&[0.2, 0.4, 0.6, 0.8]);
            assert!(knee_note(&pts, 0.8).contains("only a lower bound"), "{}", knee_note(&pts, 0.8));
            for k in [0.2, 0.4, f64::NAN] {
                assert_eq!(knee_note(&pts, k), "", "{k}");
            }
            assert_eq!(knee_note(&[], f64::NAN), "");
        }

        /// [`mean`]: the arithmetic mean, NaN for an empty slice.
        #[test]
        fn mean_is_the_arithmetic_mean() {
            assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
            assert_eq!(mean(&[0.5]), 0.5);
            assert!(mean(&[]).is_nan());
        }

        /// [`sig4`]: four significant digits down to 12 decimals, whole numbers from 1000 up, no
        /// trailing zeros (none of a whole number's own), `n/a` when not finite; a value that
        /// rounds to nothing prints 0, not -0.
        #[test]
        fn sig4_edges() {
            for (x, want) in [
                (1.234e-9, "0.000000001234"),
                (1000.0, "1000"),
                (12_340.0, "12340"),
                (123_456.7, "123457"),
                (f64::INFINITY, "n/a"),
                (f64::NEG_INFINITY, "n/a"),
                (-1e-13, "0"),
            ] {
                assert_eq!(sig4(x), want, "{x}");
            }
        }

        /// [`time_within`]: "within ±`tol`·`center` of `center`": below the centre as above it, the
        /// edge included, and the band scales with the centre.
        #[test]
        fn time_within_is_a_band_around_the_centre() {
            // 1.25 (the upper edge) for 10 s, 0.5 (far below) for 10 s: centre 1 ± 25 %.
            let steps = [(0.0, 1.25), (10.0, 0.5)];
            assert_eq!(time_within(&steps, 0.0, 20.0, 1.0, 0.25), (10.0, 20.0));
            // 0.75, the lower edge.
            assert_eq!(time_within(&[(0.0, 0.75)], 0.0, 10.0, 1.0, 0.25), (10.0, 10.0));
            // Centre 4: ± 1, so 4.8 and 3.2 are inside, 5.5 is not.
            let steps = [(0.0, 4.8), (10.0, 3.2), (20.0, 5.5)];
            assert_eq!(time_within(&steps, 0.0, 30.0, 4.0, 0.25), (20.0, 30.0));
        }

        /// [`share_row`]: the share `within / of` against the paper's 1, undefined (n/a) without
        /// instants.
        #[test]
        fn share_row_is_within_over_of() {
            let r = share_row("k", 3, 4, "note".into());
            assert_eq!((r.paper.as_str(), r.ours.as_str(), r.unit), ("1", "0.75", "ratio"));
            assert_eq!(share_row("k", 0, 0, String::new()).ours, "n/a");
            assert_eq!(share_row("k", 0, 5, String::new()).ours, "0");
        }

        /// The knees of docs/rcrt.md's table and their notes in `numbers.csv`: best effort, the
        /// largest load up to which every load has ≥ 95 % delivery and every flow ≥ 80 % of the
        /// mean goodput; reliable, the largest load whose mean goodput is ≥ 90 % of it (both edges
        /// included).
        #[test]
        fn knee_thresholds() {
            // (load, mean goodput, min goodput, delivery ratio)
            let be = [(0.2, 1.0, 0.8, 0.95), (0.4, 1.0, 0.79, 1.0), (0.6, 1.0, 1.0, 1.0)];
            assert_eq!(best_effort_knee(&be), 0.2);
            let be = [(0.2, 1.0, 1.0, 1.0), (0.4, 1.0, 1.0, 0.949), (0.6, 1.0, 1.0, 1.0)];
            assert_eq!(best_effort_knee(&be), 0.2);
            let rel = [(0.5, 0.45, 0.0, 0.0), (1.0, 0.9, 0.0, 0.0), (2.0, 1.7, 0.0, 0.0), (4.0, 4.0, 0.0, 0.0)];
            assert_eq!(reliable_knee(&rel), 1.0);
        }

        /// `rcrt_plateau_pps` is "RCRT mean goodput at the highest demand" (the last swept point);
        /// `rcrt_over_reliable_knee` divides it by the larger of the reliable knee and
        /// `reliable_max_goodput_pps`, the sweep's highest mean goodput (the note in `numbers.csv`).
        #[test]
        fn plateau_and_the_reliable_reference() {
            let v = [(0.5, 0.4, 0.0, 0.0), (1.0, 0.7, 0.0, 0.0), (1.5, 0.6, 0.0, 0.0)];
            assert_eq!(rcrt_plateau(&v), 0.6);
            assert!(rcrt_plateau(&[]).is_nan());
            // Highest goodput 0.7 above the knee 0.5; below the knee 0.9, the knee.
            assert_eq!(reliable_reference(&v, 0.5), (0.7, 0.7));
            assert_eq!(reliable_reference(&v, 0.9), (0.7, 0.9));
            // No knee (no swept load passed): the highest goodput alone.
            assert_eq!(reliable_reference(&v, f64::NAN), (0.7, 0.7));
            let (max, denom) = reliable_reference(&[], f64::NAN);
            assert!(max.is_nan() && denom.is_nan());
        }

        /// An RCRT trace with these allocations and delivery times.
        fn trace(rates: &[(f64, f64)], deliveries: &[f64]) -> RcrtFlowTrace {
            RcrtFlowTrace {
                rates: rates.to_vec(),
                deliveries: deliveries.iter().enumerate().map(|(i, &t)| (t, i as u64)).collect(),
                ..Default::default()
            }
        }

        /// [`second_half`], [`allocation_within`] and [`allocation_mean`]: the window runs from
        /// halfway between a flow's first and last delivery to the last; the share of time within
        /// ±25 % is pooled over the flows (`rate_within_25pct_share`), the settled rate is the mean
        /// over the flows of each flow's time mean (`baseline_settled_rate_pps`); flows without a
        /// delivery count in neither, and without any there is no number.
        #[test]
        fn the_allocation_after_the_transient() {
            // Window [200, 300): 1.0 for 50 s, 2.0 for 50 s (time mean 1.5).
            let a = trace(&[(0.0, 1.0), (250.0, 2.0)], &[100.0, 150.0, 300.0]);
            // Window [50, 100): 1.1 throughout.
            let b = trace(&[(0.0, 1.1)], &[0.0, 100.0]);
            // Window [5, 10): 0.4 throughout.
            let c = trace(&[(0.0, 0.4)], &[0.0, 10.0]);
            let none = trace(&[(0.0, 9.0)], &[]);
            assert_eq!(second_half(&a), Some((200.0, 300.0)));
            assert_eq!(second_half(&none), None);
            // Inside ±25 % of 1: a's 50 s of 1.0 and b's 50 s of 1.1, of 150 s.
            let within = allocation_within(&[&a, &b, &none], 1.0, 0.25).unwrap();
            assert!((within - 100.0 / 150.0).abs() < 1e-12, "{within}");
            assert_eq!(allocation_within(&[&none], 1.0, 0.25), None);
            assert_eq!(allocation_within(&[], 1.0, 0.25), None);
            // Mean over the flows of 1.5, 1.1 and 0.4 (their median would be 1.1).
            let settled = allocation_mean(&[&a, &b, &c, &none]).unwrap();
            assert!((settled - 1.0).abs() < 1e-12, "{settled}");
            assert_eq!(allocation_mean(&[&none]), None);
        }
    }
}
