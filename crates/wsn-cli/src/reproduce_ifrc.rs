//! `wsn reproduce ifrc`: run the experiments of the IFRC paper (Rangwala et al., SIGCOMM 2006,
//! §6) on the simulator and write a report with the analogue of each figure and a table
//! "paper | ours | note".
//!
//! The protocol experiments run under both IFRC profiles (`paper`, `reference_code`); the
//! best-effort optimality sweep and the stability sweeps run once. Nothing here is tuned toward
//! the paper's numbers; the report states every criterion it applies.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use wsn_proto::ifrc::{ewma_burst_tolerance, stability_bounds};
use wsn_proto::NodeId;
use wsn_sim::figures::{bars, lines, Series};
use wsn_sim::runner::{step_average, RunResult};

use crate::reproduce::{best_effort_knee, job, mean, pkey, row, run_jobs, write_numbers, Job, Row};

/// Profiles the protocol experiments run under.
const PROFILES: [&str; 2] = ["paper", "reference_code"];

/// Experiments run under both profiles: (key, scenario).
const EXPERIMENTS: [(&str, &str); 7] = [
    ("e1", "ifrc/e1-40node.toml"),
    ("e3", "ifrc/e3-node-addition.toml"),
    ("e4", "ifrc/e4-node-removal.toml"),
    ("e5", "ifrc/e5-weights.toml"),
    ("e6", "ifrc/e6-subset.toml"),
    ("e7", "ifrc/e7-two-sinks.toml"),
    ("e8", "ifrc/e8-no-retransmissions.toml"),
];

/// Instability criterion of the ε sweeps, fixed before any run: a network is unstable when its
/// congestion epochs need on average more than 1.5 own halvings (after one halving and the
/// additive increase that follows, the queue fails to drain and a second threshold falls; IFRC
/// paper §6.2, Table 2). Since session 16 a run whose queue overflowed is unstable too (the
/// paper's "the queue didn't drain"): a 2-node run at ε = 0.0167 kept its queue full for the last
/// 537 s of 600 with its average frozen above the top threshold, so no new threshold fell and its
/// halvings per epoch read "stable" (a review).
const UNSTABLE_HALVINGS_PER_EPOCH: f64 = 1.5;

/// Run the IFRC reproduction into `dir` (created if missing).
pub fn ifrc(quick: bool, dir: PathBuf, seed: Option<u64>) -> Result<()> {
    let _made = crate::create_out_dir(&dir)?;
    let plan = Plan::new(quick);
    let mut jobs: Vec<Job> = Vec::new();
    for p in PROFILES {
        for (key, scenario) in EXPERIMENTS {
            jobs.push(job(format!("{key}/{p}"), scenario, &[format!("protocol.profile=\"{p}\"")]));
        }
    }
    // Ablation of E3: the paper profile with the code's guard against compounding halvings.
    jobs.push(job("e3/paper+skip", "ifrc/e3-node-addition.toml", &["protocol.skip_halving_after_sharing=true".into()]));
    for &r in &plan.fixed_rates {
        jobs.push(job(
            format!("e2/{r}"),
            "ifrc/e2-optimality-best-effort.toml",
            &[format!("flows.0.rate_pps={r}"), format!("duration_s={}", plan.sweep_s)],
        ));
    }
    for &e in &plan.eps_two {
        jobs.push(job(format!("e9-2/{e}"), "ifrc/e9-two-node.toml", &[format!("protocol.epsilon={e}")]));
    }
    for &e in &plan.eps_thirty {
        jobs.push(job(format!("e9-30/{e}"), "ifrc/e9-thirty-node.toml", &[format!("protocol.epsilon={e}")]));
    }
    let (cmp_jobs, cmp_rates) = crate::compare::jobs(quick, None);
    jobs.extend(cmp_jobs);
    let runs = run_jobs("reproduce ifrc", &jobs, seed, None)?;
    report(&dir, &plan, &runs, &cmp_rates, seed)?;
    Ok(())
}

/// Sweep points.
struct Plan {
    quick: bool,
    fixed_rates: Vec<f64>,
    sweep_s: f64,
    eps_two: Vec<f64>,
    eps_thirty: Vec<f64>,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                // Past the full run's knee (1.0; 1.2 overflows), so that the quick knee is one.
                fixed_rates: vec![0.2, 0.4, 0.6, 0.8, 1.0, 1.2],
                sweep_s: 1200.0,
                eps_two: vec![0.005, 0.0125, 0.025, 0.05],
                eps_thirty: vec![0.05, 0.2],
            }
        } else {
            Plan {
                quick,
                fixed_rates: vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2],
                sweep_s: 1800.0,
                eps_two: vec![0.0025, 0.005, 0.0083, 0.0125, 0.0167, 0.025, 0.05, 0.1],
                eps_thirty: vec![0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5],
            }
        }
    }
}

/// Mean per-flow goodput over the second half of the traffic period (after IFRC's slow start:
/// from r_init = 0.02 pkt/s it needs ~1,500 s to reach this network's rates), pkt/s.
pub(crate) fn steady_goodput(r: &RunResult) -> f64 {
    mean(&steady_goodputs(r))
}

/// Agent frames of the first sink per second over the second half of the run (bins that start
/// at or after half its length): an IFRC base station's control packets.
fn second_half_sink_tx(r: &RunResult) -> f64 {
    let sim = r.summary.sim_seconds;
    if r.network.sinks().is_empty() {
        return f64::NAN;
    }
    bins_per_second(r.network.sink_tx_bins(0), r.bin.as_secs_f64(), sim / 2.0, sim)
}

/// Count per second over `[from, to)` from per-bin counts (bin `b` covers `[b·bin_s, (b+1)·bin_s)`):
/// the bins that start at or after `from` and before `to`, over the seconds from the first such
/// bin's start to `to`. A bin that straddles `from` is left out of the count and of the
/// duration alike (NaN when no bin starts in the window).
pub(crate) fn bins_per_second(bins: &[u32], bin_s: f64, from: f64, to: f64) -> f64 {
    if bin_s.is_nan() || bin_s <= 0.0 {
        return f64::NAN;
    }
    let first = (from / bin_s).ceil().max(0.0) as usize;
    let start = first as f64 * bin_s;
    if to <= start {
        return f64::NAN;
    }
    let got: u64 = bins
        .iter()
        .enumerate()
        .skip(first)
        .take_while(|(b, _)| (*b as f64) * bin_s < to)
        .map(|(_, &c)| u64::from(c))
        .sum();
    got as f64 / (to - start)
}

/// Per-flow goodput over the second half of each flow's active time, pkt/s: the deliveries in
/// the time-series bins from the first one that starts at or after the midpoint
/// ([`bins_per_second`]; 0 for a flow that is never active).
fn steady_goodputs(r: &RunResult) -> Vec<f64> {
    let bin_s = r.bin.as_secs_f64();
    let end = r.summary.sim_seconds;
    r.network
        .flows()
        .iter()
        .map(|f| {
            let to = f.stop.as_secs_f64().min(end);
            let from = (f.start.as_secs_f64() + to) / 2.0;
            let g = bins_per_second(&f.bins, bin_s, from, to);
            if g.is_finite() {
                g
            } else {
                0.0
            }
        })
        .collect()
}

/// The node with the largest total traffic at the transport layer, as the IFRC paper counts it
/// (§6.2: "all packets received, overheard, and transmitted"): packets sent (once each, however
/// many MAC attempts they took), plus data frames decoded, addressed to it or overheard (each copy
/// the transport layer handles, a retransmitted copy included), over the traffic period: (node,
/// packets per second, packets per packet delivered in the network; ties: the lowest id).
fn busiest_node(r: &RunResult) -> (usize, f64, f64) {
    let start = r.network.flows().iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
    let span = (r.summary.sim_seconds - start).max(f64::MIN_POSITIVE);
    let (node, total) = (0..r.network.len())
        .map(|i| {
            let s = r.network.node_stats(i);
            (i, s.data_sent + s.data_rx + s.data_overheard)
        })
        .max_by_key(|&(i, t)| (t, std::cmp::Reverse(i)))
        .unwrap_or((0, 0));
    (node, total as f64 / span, total as f64 / r.summary.totals.delivered.max(1) as f64)
}

/// End-to-end loss of a run: the share of the originated packets that were neither delivered
/// nor still waiting in a queue (or on the air from one) when the run ended, which would be
/// delivered had it gone on (`delivery_ratio` counts those as missing too); and how many were
/// still waiting. A packet that a child retransmits after its ACK was lost may wait at both ends
/// of the link for a moment and count twice, so the loss is clamped at 0.
pub(crate) fn e2e_loss(r: &RunResult) -> (f64, u64) {
    let queued: u64 = (0..r.network.len())
        .filter(|&i| !r.network.sinks().contains(&NodeId(i as u16)))
        .map(|i| r.network.queue_len(i) as u64)
        .sum();
    let t = &r.summary.totals;
    if t.originated == 0 {
        return (f64::NAN, queued);
    }
    let lost = t.originated.saturating_sub(t.delivered).saturating_sub(queued);
    (lost as f64 / t.originated as f64, queued)
}

/// E1's base-station overhead over the whole run: its control packets (`control_sent`) per second
/// of the run (`bs_overhead_pps`) and per data packet delivered, at least one
/// (`bs_overhead_per_delivered`; docs/ifrc.md, Validation).
fn bs_overhead(r: &RunResult) -> (f64, f64) {
    let sent = counter(r, "control_sent") as f64;
    (sent / r.summary.sim_seconds, sent / r.summary.totals.delivered.max(1) as f64)
}

/// E5's mean goodputs of the weight-2 nodes (ids divisible by 4) and of the others, pkt/s.
fn weight_goodputs(flows: &[wsn_sim::runner::FlowSummary]) -> (f64, f64) {
    let (w2, w1): (Vec<_>, Vec<_>) = flows.iter().partition(|f| f.source % 4 == 0);
    (
        mean(&w2.iter().map(|f| f.goodput_pps).collect::<Vec<_>>()),
        mean(&w1.iter().map(|f| f.goodput_pps).collect::<Vec<_>>()),
    )
}

/// E6 against E1 (docs/ifrc.md, Validation: a one-third subset gets at least the all-senders fair
/// rate): the smallest and the mean of the subset senders' second-half goodputs `sub`, each over
/// E1's all-senders mean goodput after slow start, the second of `e1` = (whole run, second half):
/// ((smallest, mean), (smallest / all, mean / all)).
fn subset_over_all(sub: &[f64], e1: (f64, f64)) -> ((f64, f64), (f64, f64)) {
    let all = e1.1;
    let sub_min = sub.iter().copied().fold(f64::INFINITY, f64::min);
    let sub_mean = mean(sub);
    ((sub_min, sub_mean), (sub_min / all, sub_mean / all))
}

/// The mean goodput of the swept fixed rate `x` among `pts` (rate, mean goodput, min goodput,
/// delivery), NaN when `x` was not swept (the best fixed rate's goodput, E2 and `wsn compare`).
pub(crate) fn goodput_at(pts: &[(f64, f64, f64, f64)], x: f64) -> f64 {
    pts.iter().find(|p| p.0 == x).map_or(f64::NAN, |p| p.1)
}

/// One run of an ε sweep (Table 2): its halvings per congestion epoch (NaN without an epoch),
/// whether it is unstable (more than [`UNSTABLE_HALVINGS_PER_EPOCH`] halvings per epoch, or a
/// queue overflow) and the verdict the table prints ("no congestion" without an epoch or a drop).
fn stability_verdict(halvings: u64, epochs: u64, drops: u64) -> (f64, bool, &'static str) {
    let per = if epochs > 0 { halvings as f64 / epochs as f64 } else { f64::NAN };
    let unstable = per > UNSTABLE_HALVINGS_PER_EPOCH || drops > 0;
    let verdict = if epochs == 0 && drops == 0 {
        "no congestion"
    } else if unstable {
        "unstable"
    } else {
        "stable"
    };
    (per, unstable, verdict)
}

/// The stable/unstable boundary of an ε sweep from its verdicts `(ε, unstable)` in increasing ε:
/// the smallest ε judged unstable (NaN when none is) and, when there is one, whether the sweep
/// shows a clean boundary (stable below it, unstable at every larger ε), names the larger ε judged
/// stable, or has its lowest ε already unstable.
fn stability_boundary(verdicts: &[(f64, bool)]) -> (f64, Option<String>) {
    let first_unstable = verdicts.iter().find(|v| v.1).map_or(f64::NAN, |v| v.0);
    if !first_unstable.is_finite() {
        return (first_unstable, None);
    }
    let stable_above: Vec<String> =
        verdicts.iter().filter(|(e, u)| *e > first_unstable && !u).map(|(e, _)| e.to_string()).collect();
    let lowest_unstable = verdicts.first().is_some_and(|&(e, u)| u && e == first_unstable);
    let shape = if !stable_above.is_empty() {
        format!("but ε = {} above it judged stable: no clean boundary", stable_above.join(", "))
    } else if lowest_unstable {
        "the lowest swept ε is already unstable: the boundary lies below the sweep".to_string()
    } else {
        "stable below it, every larger swept ε unstable".to_string()
    };
    (first_unstable, Some(shape))
}

/// E7: the flows of the first and of the second base station, each with its sources' mean rate
/// over the second half of the traffic period, from halfway between the first flow's start and
/// the run's end (E7's flows start at 600 s; the second half of the run opened on the large
/// group's first cuts, a review).
fn two_sink_rates(r: &RunResult, sinks: &[NodeId]) -> ((Vec<usize>, f64), (Vec<usize>, f64)) {
    let group = |k: usize| -> Vec<usize> {
        (0..r.network.flows().len()).filter(|&i| r.network.flows()[i].sink == sinks[k]).collect()
    };
    let (ga, gb) = (group(0), group(1));
    let end = r.summary.sim_seconds;
    let start = r.network.flows().iter().map(|f| f.start.as_secs_f64()).fold(end, f64::min);
    let from = start + (end - start) / 2.0;
    let (ra, rb) = (mean_rate(r, &ga, from, end), mean_rate(r, &gb, from, end));
    ((ga, ra), (gb, rb))
}

/// A protocol counter of the run; 0 when the run has no such counter (no such event counted).
fn counter(r: &RunResult, name: &str) -> u64 {
    r.summary.totals.protocol_counters.get(name).copied().unwrap_or(0)
}

/// Whether a fair share after / before a change is a collapse rather than a new fair share: below
/// a tenth of the `expected` ratio (senders before / senders after). [AMBIG → chosen: a tenth;
/// the paper's Figs. 11, 12 show the share settling near the new equal share, not a threshold.]
fn collapsed(ratio: f64, expected: f64) -> bool {
    ratio < 0.1 * expected
}

/// Mean controller rate of the flows' sources over `[from, to]` s (time-weighted; a source without
/// a rate left out).
fn mean_rate(r: &RunResult, flows: &[usize], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = flows
        .iter()
        .filter_map(|&fi| step_average(r.network.rate_trace(r.network.flows()[fi].source.index()), from, to))
        .collect();
    mean(&v)
}

/// Median over time (samples every `step` s in `[from, to]`) of the coefficient of variation of
/// the non-sink nodes' rates: 0 when every node holds the same rate.
fn rate_spread(r: &RunResult, from: f64, to: f64, step: f64) -> f64 {
    let net = &r.network;
    let traces: Vec<&[(f64, f64, f64)]> = (0..net.len())
        .filter(|&i| !net.sinks().contains(&NodeId(i as u16)) && !net.rate_trace(i).is_empty())
        .map(|i| net.rate_trace(i))
        .collect();
    cv_median(&traces, from, to, step)
}

/// [`rate_spread`] over the given rate traces: at every `step` s from `from` to `to` inclusive, the
/// population coefficient of variation (standard deviation over n, over the mean) of the rates in
/// force (the traces without a rate yet left out; no sample when the mean is not positive); the
/// median of those.
fn cv_median(traces: &[&[(f64, f64, f64)]], from: f64, to: f64, step: f64) -> f64 {
    let mut cvs = Vec::new();
    let mut t = from;
    while t <= to {
        let rates: Vec<f64> = traces
            .iter()
            .map(|tr| tr.iter().take_while(|x| x.0 <= t).last().map_or(f64::NAN, |x| x.1))
            .filter(|x| x.is_finite())
            .collect();
        let m = mean(&rates);
        if m > 0.0 {
            let var = rates.iter().map(|x| (x - m).powi(2)).sum::<f64>() / rates.len() as f64;
            cvs.push(var.sqrt() / m);
        }
        t += step;
    }
    crate::reproduce::median(&cvs)
}

/// One step series per sending node's rate, drawn only while the node sends: from the start of
/// its first flow to the end of its last (or of the run), over the flows that start before the
/// run ends (a gap between two flows of one node would be drawn; no experiment has one). A node that joins later is not drawn
/// before it joins (its IFRC rate grows meanwhile, unused), one that leaves is not drawn after.
/// With a `group`, the nodes share one colour and one legend entry `label`; without, every node
/// has its own colour and there is no legend.
fn rate_series(r: &RunResult, label: &str, only: Option<&[usize]>, group: Option<usize>) -> Vec<Series> {
    let net = &r.network;
    let end = r.summary.sim_seconds;
    let window = |i: usize| {
        let flows: Vec<_> =
            net.flows().iter().filter(|f| f.source.index() == i && f.start.as_secs_f64() < end).collect();
        let from = flows.iter().map(|f| f.start.as_secs_f64()).fold(f64::INFINITY, f64::min);
        let to = flows.iter().map(|f| f.stop.as_secs_f64()).fold(f64::NEG_INFINITY, f64::max).min(end);
        (from < to).then_some((from, to))
    };
    (0..net.len())
        .filter(|&i| !net.sinks().contains(&NodeId(i as u16)))
        .filter(|i| only.is_none_or(|o| o.contains(i)))
        .filter_map(|i| window(i).map(|w| (i, w)))
        .enumerate()
        .map(|(k, (i, (from, to)))| {
            let trace = net.rate_trace(i);
            // The rate in use when the node starts to send, then every change while it sends.
            let at_start = trace.iter().take_while(|x| x.0 <= from).last().map(|x| (from, x.1));
            let mut pts: Vec<(f64, f64)> = at_start
                .into_iter()
                .chain(trace.iter().filter(|x| x.0 > from && x.0 <= to).map(|&(t, v, _)| (t, v)))
                .collect();
            if let Some(&(_, v)) = pts.last() {
                pts.push((to, v));
            }
            match group {
                Some(g) => Series::step(if k == 0 { label.to_string() } else { String::new() }, pts).in_group(g),
                None => Series::step("", pts),
            }
        })
        .collect()
}

/// E1's rows that copy profile `p`'s run totals: `queue_overflows` (its queue drops) and
/// `ifrc_mean_goodput_pps` (its mean goodput), the keys suffixed for a profile other than the paper's.
fn e1_total_rows(p: &str, t: &wsn_sim::runner::Totals) -> [Row; 2] {
    [
        row(
            &pkey(p, "queue_overflows"),
            0,
            t.queue_drops as f64,
            "packets",
            "packets dropped at a full queue, all nodes, E1",
        ),
        row(
            &pkey(p, "ifrc_mean_goodput_pps"),
            0.22,
            t.mean_goodput_pps,
            "pkt/s",
            "E1 mean per-node goodput over the whole hour, slow start included (paper: 8.8 pkt/s over 40 nodes; our \
             network carries more, see best_fixed_fair_pps)",
        ),
    ]
}

fn report(
    dir: &Path,
    plan: &Plan,
    runs: &BTreeMap<String, RunResult>,
    cmp_rates: &[f64],
    seed: Option<u64>,
) -> Result<()> {
    let fig = |r: std::result::Result<(), String>| r.map_err(anyhow::Error::msg);
    let get = |k: &str| runs.get(k).with_context(|| format!("run {k} missing"));
    let mut md = String::new();
    let mut rows: Vec<Row> = Vec::new();
    // The reference-code profile's figures, appended after the paper profile's (keys suffixed).
    let mut extra: Vec<Row> = Vec::new();
    writeln!(md, "# IFRC reproduction{}\n", if plan.quick { " (quick)" } else { "" })?;
    writeln!(md, "{}", crate::reproduce::seeds_line(runs, seed))?;
    writeln!(
        md,
        "Network: the office floor of `office40` (40 nodes over 1,125 m², sink = node 0) at −10 dBm, the IFRC-era MAC \
         (`ifrc2006`: software ACKs with promiscuous reception, widened backoff, 5 link retransmissions, 64-packet queues, \
         32-byte packets, calibrated to ≈ 50 pkt/s per saturated hop), and one MultiHopLQI tree frozen after formation \
         (`scenarios/ifrc/tree40.csv`, 8 hops deep). Paper: Rangwala, Gummadi, Govindan, Psounis, SIGCOMM 2006, §6. Every \
         protocol experiment runs under both profiles (`paper`: the paper's rules with the spec's recommended resolutions; \
         `reference_code`: the authors' TinyOS code where it differs, see docs/ifrc.md); figures show the `paper` profile.\n"
    )?;

    // ------------------------------------------------------------------ E1 (Figs. 6-9)
    writeln!(md, "## E1: 40 nodes, one base station (Figs. 6–9; the paper's Fig. 5, its tree, is not drawn)\n")?;
    writeln!(
        md,
        "| profile | mean goodput pkt/s | second-half goodput | min / max goodput | Jain index | end-to-end loss | queue overflows | largest queue | BS control pkt/s | halvings | median rate CV |\n|---|---|---|---|---|---|---|---|---|---|---|"
    )?;
    let mut e1_goodput = BTreeMap::new();
    let mut e1_busiest = BTreeMap::new();
    for p in PROFILES {
        let r = get(&format!("e1/{p}"))?;
        let s = &r.summary;
        let t = &s.totals;
        let maxq = (0..r.network.len()).map(|i| r.network.node_stats(i).max_queue).max().unwrap_or(0);
        let (bs_pps, bs_per_delivered) = bs_overhead(r);
        let (loss, queued_at_end) = e2e_loss(r);
        let cv = rate_spread(r, s.sim_seconds / 2.0, s.sim_seconds, 10.0);
        let steady = steady_goodput(r);
        e1_goodput.insert(p, (t.mean_goodput_pps, steady));
        writeln!(
            md,
            "| {p} | {:.3} | {steady:.3} | {:.3} / {:.3} | {:.3} | {:.2} % ({queued_at_end} queued at the end) | {} | \
             {maxq} | {bs_pps:.3} | {} | {cv:.2} |",
            t.mean_goodput_pps,
            t.min_goodput_pps,
            t.max_goodput_pps,
            t.goodput_jain_index,
            100.0 * loss,
            t.queue_drops,
            counter(r, "halvings")
        )?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.extend(e1_total_rows(p, t));
        out.push(row(
            &pkey(p, "ifrc_steady_goodput_pps"),
            0.22,
            steady,
            "pkt/s",
            "E1 mean per-node goodput over the second half of the hour (after slow start; the paper's 0.22 is over its \
             whole experiment)",
        ));
        out.push(row(
            &pkey(p, "e2e_loss"),
            0.08,
            loss,
            "ratio",
            "E1 end-to-end loss with link retransmissions: packets neither delivered nor still queued at the end, \
             over those originated (paper: below 8 %)",
        ));
        out.push(row(
            &pkey(p, "bs_overhead_pps"),
            0.1,
            bs_pps,
            "pkt/s",
            "base-station control packets per second over the whole hour, slow start included (paper: below 1 per \
             10 s)",
        ));
        // The same over the second half, the window of `ifrc_steady_goodput_pps` and of the
        // efficiency ratio: the base station paces its control packets by its fastest child's
        // rate, so it sends most of them once the rates have grown.
        let bs_steady = second_half_sink_tx(r);
        out.push(row(
            &pkey(p, "bs_overhead_steady_pps"),
            0.1,
            bs_steady,
            "pkt/s",
            "base-station control packets per second over the second half of the hour (after slow start, the window \
             of ifrc_steady_goodput_pps; paper: below 1 per 10 s)",
        ));
        // Overflows in the other experiments on the same frozen tree (E2's fixed rates and E9's
        // ε sweeps overflow by design and are left out).
        let mut others = Vec::new();
        for (key, _) in EXPERIMENTS.iter().filter(|(k, _)| *k != "e1") {
            others.push((key, get(&format!("{key}/{p}"))?.summary.totals.queue_drops));
        }
        out.push(row(
            &pkey(p, "queue_overflows_other_experiments"),
            0,
            others.iter().map(|o| o.1).sum::<u64>() as f64,
            "packets",
            format!(
                "packets dropped at a full queue in E3–E8 ({})",
                others.iter().map(|(k, d)| format!("{} {d}", k.to_uppercase())).collect::<Vec<_>>().join(", ")
            ),
        ));
        // The same overhead per delivered data packet: the paper's bound at its 8.8 pkt/s
        // in all is 0.1 / 8.8 ≈ 0.011; it makes networks of different capacity comparable.
        out.push(row(
            &pkey(p, "bs_overhead_per_delivered"),
            "< 0.011",
            bs_per_delivered,
            "ratio",
            "base-station control packets per delivered data packet (paper: < 0.1 pkt/s at 8.8 pkt/s delivered)",
        ));
        out.push(row(
            &pkey(p, "largest_queue"),
            20,
            maxq as f64,
            "packets",
            "largest instantaneous queue at any node (paper: never above 20 of 64)",
        ));
        // IFRC paper §6.2: "the busiest node has a total traffic of close to 32 packet/sec"
        // (received, overheard and transmitted at the transport layer), at 8.8 pkt/s delivered
        // in all. Counted here as data frames decoded (addressed to the node or overheard) plus
        // packets sent (once each, not per MAC attempt), over the traffic period; beacons are
        // not counted (`busiest_node`).
        let (busy_node, busy_pps, busy_per_delivered) = busiest_node(r);
        e1_busiest.insert(p, (busy_node, busy_pps, busy_per_delivered));
        out.push(row(
            &pkey(p, "busiest_node_traffic_pps"),
            "≈ 32",
            busy_pps,
            "pkt/s",
            format!("E1 largest per-node total traffic at the transport layer (packets sent once each, data frames received and overheard, per second over the traffic period; node {busy_node}); paper: close to 32 pkt/s, near the radio's ≈ 50 pkt/s"),
        ));
        out.push(row(
            &pkey(p, "busiest_node_traffic_per_delivered"),
            "≈ 3.6",
            busy_per_delivered,
            "ratio",
            "E1 that node's total traffic per data packet delivered to the base station (paper: 32 / 8.8)",
        ));
        out.push(row(
            &pkey(p, "rate_cv_median"),
            "≈ 0 (near-synchronous)",
            cv,
            "ratio",
            "median over the second half of the run of the spread (CV) of the 39 nodes' rates",
        ));
        if p == "paper" {
            fig(lines(
                dir,
                "fig8-rates",
                "Fig. 8 analogue: rate r_i(t) of every node (E1)",
                "time (s)",
                "rate (pkt/s)",
                &rate_series(r, "nodes", None, None),
                None,
            ))?;
            let cats: Vec<String> = s.flows.iter().map(|f| f.source.to_string()).collect();
            let dur = s.sim_seconds;
            let got: Vec<f64> = s.flows.iter().map(|f| f.delivered as f64 / dur).collect();
            let lost: Vec<f64> = s.flows.iter().map(|f| (f.originated - f.delivered) as f64 / dur).collect();
            fig(bars(
                dir,
                "fig6-goodput",
                "Fig. 6 analogue: per-node transmit rate, received (lower) and lost (upper)",
                "node",
                "pkt/s",
                &cats,
                &[("received".into(), got), ("lost".into(), lost)],
            ))?;
            let bin_s = r.bin.as_secs_f64();
            let mut cum: Vec<Series> = r
                .network
                .flows()
                .iter()
                .map(|f| {
                    let mut acc = 0.0;
                    Series::line(
                        "",
                        f.bins
                            .iter()
                            .enumerate()
                            .map(|(b, &d)| {
                                acc += d as f64;
                                (((b + 1) as f64 * bin_s).min(s.sim_seconds), acc)
                            })
                            .collect(),
                    )
                })
                .collect();
            // Time axes from 0 (the first bin is stamped at its end).
            cum.push(Series::span(0.0, s.sim_seconds));
            fig(lines(
                dir,
                "fig7-reception",
                "Fig. 7 analogue: cumulative packets received per node",
                "time (s)",
                "packets",
                &cum,
                None,
            ))?;
            let mut q: Vec<Series> = (0..r.network.len())
                .map(|i| {
                    Series::line(
                        "",
                        r.network
                            .queue_bins(i)
                            .iter()
                            .enumerate()
                            // Stamped at the bin's end, as queues.csv and Fig. 7.
                            .map(|(b, &v)| (((b + 1) as f64 * bin_s).min(s.sim_seconds), v as f64))
                            .collect(),
                    )
                })
                .collect();
            q.push(Series::span(0.0, s.sim_seconds));
            let capacity = (0..r.network.len()).map(|i| r.network.queue_capacity(i)).max().unwrap_or(0);
            fig(lines(
                dir,
                "fig9-queues",
                &format!("Fig. 9 analogue: largest queue per node per {bin_s} s"),
                "time (s)",
                "packets",
                &q,
                Some((capacity as f64, "capacity")),
            ))?;
        }
    }
    for (p, (node, pps, per)) in &e1_busiest {
        writeln!(
            md,
            "\nBusiest node ({p}): node {node} sends (once per packet, not per MAC attempt), receives and overhears \
             {pps:.1} data packets per second over the traffic period, {per:.2} per packet delivered (paper: close to \
             32 pkt/s at 8.8 pkt/s delivered, 3.6 per packet).",
        )?;
    }
    // The paper's §5 bounds for this network next to the chosen ε (spec §11.5): F_j = n·ln n,
    // s̄ = 3, burst tolerances from the EWMA weight and the first two thresholds.
    {
        let cfg = wsn_proto::ifrc::IfrcConfig::default();
        let n = 39.0f64;
        let (u0, u1) = (
            ewma_burst_tolerance(cfg.ewma_weight, cfg.threshold(0)),
            ewma_burst_tolerance(cfg.ewma_weight, cfg.threshold(1)),
        );
        let (b5, b6) = stability_bounds(n * n.ln(), u0 as f64, u1 as f64, 3.0);
        writeln!(
            md,
            "\nChosen ε = {} (paper profile) against the paper's §5 bounds for {n} senders (F_j = n·ln n = {:.1}, s̄ = 3, \
             U_0 = {u0} and U_1 = {u1} packets from w_q = {} and U(0), U(1) = {}, {}): (5) ε < {b5:.3}, (6) ε < {b6:.3}.",
            cfg.epsilon,
            n * n.ln(),
            cfg.ewma_weight,
            cfg.threshold(0),
            cfg.threshold(1)
        )?;
    }
    writeln!(md, "\n![Fig. 6](fig6-goodput.png)\n![Fig. 7](fig7-reception.png)\n![Fig. 8](fig8-rates.png)\n![Fig. 9](fig9-queues.png)\n")?;

    // ------------------------------------------------------------------ E2 (Fig. 10)
    writeln!(md, "## E2: optimality — fixed-rate best effort on the same tree (Fig. 10)\n")?;
    writeln!(md, "| fixed rate R pkt/s | mean goodput | min goodput | max / min | delivery | largest queue | queue drops |\n|---|---|---|---|---|---|---|")?;
    let mut pts = Vec::new();
    let mut ratio_pts = Vec::new();
    let mut queue_pts = Vec::new();
    for &x in &plan.fixed_rates {
        let r = get(&format!("e2/{x}"))?;
        let t = &r.summary.totals;
        let maxq = (0..r.network.len()).map(|i| r.network.node_stats(i).max_queue).max().unwrap_or(0);
        let mm = if t.min_goodput_pps > 0.0 { t.max_goodput_pps / t.min_goodput_pps } else { f64::INFINITY };
        writeln!(
            md,
            "| {x} | {:.3} | {:.3} | {mm:.2} | {:.1} % | {maxq} | {} |",
            t.mean_goodput_pps,
            t.min_goodput_pps,
            100.0 * t.delivery_ratio,
            t.queue_drops
        )?;
        pts.push((x, t.mean_goodput_pps, t.min_goodput_pps, t.delivery_ratio));
        ratio_pts.push((x, mm.min(20.0)));
        queue_pts.push((x, maxq as f64));
    }
    // The project's knee rule (as `wsn sweep` and the RCRT report): the largest fixed rate up to
    // which every swept rate has ≥ 95 % delivery and every flow at ≥ 80 % of the mean goodput.
    let best = best_effort_knee(&pts);
    let best_goodput = goodput_at(&pts, best);
    let no_overflow = plan
        .fixed_rates
        .iter()
        .take_while(|&&x| runs.get(&format!("e2/{x}")).is_some_and(|r| r.summary.totals.queue_drops == 0))
        .last()
        .copied()
        .unwrap_or(f64::NAN);
    let (ifrc_all, ifrc_gp) = e1_goodput.get("paper").copied().unwrap_or((f64::NAN, f64::NAN));
    writeln!(
        md,
        "\nBest fixed fair rate (largest R up to which every swept R has ≥ 95 % delivery and every node ≥ 80 % of the mean): **{best}** pkt/s \
         (mean goodput {best_goodput:.3}); largest R without a queue overflow: {no_overflow}. IFRC (E1, paper profile) \
         sustains {ifrc_gp:.3} pkt/s after slow start = **{:.0} %** of the best fixed rate's goodput (paper: ≈ 80 %, \
         conservatively 60 %); over the whole hour, its slow start from r_init = 0.02 pkt/s included, {ifrc_all:.3} pkt/s \
         = {:.0} %. The fixed-rate runs have no ramp, so the sustained rate compares IFRC's control with them; the \
         paper's 80 % rests on its total goodput of 8.8 pkt/s, packets received over the experiment's duration, slow \
         start included, which at its lower rates was shorter (about 1,000 s to 0.22 pkt/s, against about 1,500 s to \
         0.8 here) in a run of unstated length: neither figure is its exact counterpart.\n",
        100.0 * ifrc_gp / best_goodput,
        100.0 * ifrc_all / best_goodput
    )?;
    rows.push(row(
        "best_fixed_fair_pps",
        0.27,
        best_goodput,
        "pkt/s",
        format!(
            "mean goodput at the best fixed rate R = {best} (knee rule: every swept rate up to R has ≥ 95 % delivery, \
             min ≥ 0.8 mean{})",
            crate::reproduce::knee_note(&pts, best)
        ),
    ));
    // A best fixed rate that is only a lower bound makes the ratios over it upper bounds.
    let bound = if crate::reproduce::knee_note(&pts, best).is_empty() {
        ""
    } else {
        "; the best fixed rate is only a lower bound (every swept rate passed), so this ratio is an upper bound"
    };
    rows.push(row(
        "ifrc_over_best_fixed",
        0.8,
        ifrc_gp / best_goodput,
        "ratio",
        format!(
            "IFRC goodput after slow start (second half of E1) / best fixed fair best-effort goodput (acceptance ≥ \
             0.7; the paper's ≈ 0.8 counts its slow start, see _whole_run){bound}"
        ),
    ));
    rows.push(row(
        "ifrc_over_best_fixed_whole_run",
        0.8,
        ifrc_all / best_goodput,
        "ratio",
        format!(
            "the same with IFRC's goodput over the whole hour, slow start included (as the paper's goodput; our slow \
             start is longer, our rates being higher){bound}"
        ),
    ));
    if let Some((_, g)) = e1_goodput.get("reference_code") {
        rows.push(row(
            "ifrc_code_over_best_fixed",
            0.8,
            g / best_goodput,
            "ratio",
            format!("the same (after slow start) for the reference-code profile{bound}"),
        ));
    }
    fig(lines(
        dir,
        "fig10-optimality",
        "Fig. 10 analogue: fixed-rate best effort — max/min goodput and largest queue",
        "fixed rate per node (pkt/s)",
        "max/min goodput (capped at 20) · largest queue / 10",
        &[
            Series::line("max / min goodput", ratio_pts),
            Series::line("largest queue / 10", queue_pts.iter().map(|&(x, q)| (x, q / 10.0)).collect()),
        ],
        Some((1.0, "max / min = 1")),
    ))?;
    writeln!(md, "![Fig. 10](fig10-optimality.png)\n")?;

    // ------------------------------------------------------------------ E3, E4 (Figs. 11, 12)
    writeln!(md, "## E3, E4: nodes joining and leaving (Figs. 11, 12)\n")?;
    writeln!(
        md,
        "Each run is listed for the paper profile, the reference-code profile and, for E3, \"paper+skip\": the paper \
         profile plus the reference code's guard that skips a node's own halving right after it halved for a \
         sharing decrease (`protocol.skip_halving_after_sharing`), which separates that one rule from the rest of the \
         profile. The expected ratio after / before is senders before / senders after (equal shares of one \
         bottleneck); a ratio below a tenth of it is a collapse, not a new fair share.\n"
    )?;
    for (key, title) in [("e3", "addition: ¾ of the nodes join"), ("e4", "removal: ¾ of the nodes stop")] {
        let variants: &[&str] = if key == "e3" { &["paper", "reference_code", "paper+skip"] } else { &PROFILES };
        for &p in variants {
            let r = get(&format!("{key}/{p}"))?;
            let flows = r.network.flows();
            let end = r.summary.sim_seconds;
            let early: Vec<usize> = (0..flows.len())
                .filter(|&i| flows[i].start.as_secs_f64() < 1.0 && flows[i].stop.as_secs_f64() >= end)
                .collect();
            let all: Vec<usize> = (0..flows.len()).collect();
            // The change: the first late start (E3) or early stop (E4) of the scenario.
            let change = flows
                .iter()
                .map(|f| if key == "e3" { f.start.as_secs_f64() } else { f.stop.as_secs_f64() })
                .filter(|&t| t >= 1.0 && t < end)
                .fold(f64::INFINITY, f64::min);
            anyhow::ensure!(change.is_finite(), "{key}/{p}: no flow joins or leaves within the run");
            // The last 10 minutes before the change and the last 10 minutes of the run.
            let (b0, b1, a0) = (change - 600.0, change, end - 600.0);
            let (before, after) = if key == "e3" {
                (mean_rate(r, &early, b0, b1), mean_rate(r, &all, a0, end))
            } else {
                (mean_rate(r, &all, b0, b1), mean_rate(r, &early, a0, end))
            };
            let t = &r.summary.totals;
            // E3's joiners start at the rate their controllers reached while silent (AMBIG-15),
            // which Fig. 11 draws as a spike at the join: say how high.
            let joined = if key == "e3" {
                let at_join: Vec<f64> = (0..flows.len())
                    .filter(|&i| flows[i].start.as_secs_f64() == change)
                    .filter_map(|i| {
                        let trace = r.network.rate_trace(flows[i].source.index());
                        trace.iter().take_while(|x| x.0 <= change).last().map(|x| x.1)
                    })
                    .collect();
                let max = at_join.iter().copied().fold(f64::NAN, f64::max);
                format!(
                    " The {} joiners start at the rate they reached while silent (their rate controllers adapt \
                     while they do not send, AMBIG-15): {:.3} pkt/s on average, at most {max:.3}{}.",
                    at_join.len(),
                    mean(&at_join),
                    if p == "paper" { ", the spike at the join in Fig. 11" } else { "" }
                )
            } else {
                String::new()
            };
            writeln!(
                md,
                "{key} {title} at {change} s ({p}): mean rate of the active nodes {before:.3} pkt/s in {b0}–{b1} s, {after:.3} pkt/s in {a0}–{end} s (ratio {:.2}); mean per-node goodput over the run {:.3} pkt/s; {} packets dropped at full queues.{joined}\n",
                after / before,
                t.mean_goodput_pps,
                t.queue_drops
            )?;
            // The fair share expected after the change: [PAPER §6] gives no number (Fig. 11, 12
            // show the share falling and rising). [AMBIG → chosen: equal shares of a bottleneck
            // whose capacity the change leaves as it was, i.e. senders before / senders after:
            // about 0.25 for ¼ → all of the nodes, about 4 the other way.]
            let (n_before, n_after) = if key == "e3" { (early.len(), all.len()) } else { (all.len(), early.len()) };
            let expected = n_before as f64 / n_after as f64;
            let paper_col = format!("{} (≈ {expected:.2})", if key == "e3" { "< 1" } else { "> 1" });
            let ratio = after / before;
            let note = |what: &str| {
                let mut n = format!(
                    "{title}: {what}mean rate of the active nodes after / before; ≈ {expected:.2} expected from \
                     {n_before} senders before and {n_after} after sharing one bottleneck equally [DERIVED]"
                );
                if collapsed(ratio, expected) {
                    n.push_str("; below 0.1 × the expected share: the rates collapsed, see docs/ifrc.md");
                }
                n
            };
            if p == "paper+skip" {
                rows.push(row(
                    "e3_skip_rate_after_over_before",
                    &paper_col,
                    ratio,
                    "ratio",
                    note(
                        "paper profile plus the reference code's guard (no own halving right after a sharing \
                          decrease), ",
                    ),
                ));
            } else {
                let out = if p == "paper" { &mut rows } else { &mut extra };
                out.push(row(
                    &pkey(p, &format!("{key}_rate_after_over_before")),
                    &paper_col,
                    ratio,
                    "ratio",
                    note(if p == "paper" { "paper profile, " } else { "reference-code profile, " }),
                ));
            }
            if p == "paper" {
                let name = if key == "e3" { "fig11-addition" } else { "fig12-removal" };
                fig(lines(
                    dir,
                    name,
                    &format!("Fig. {} analogue: node {title}", if key == "e3" { 11 } else { 12 }),
                    "time (s)",
                    "rate (pkt/s)",
                    &rate_series(r, "nodes", None, None),
                    None,
                ))?;
            }
        }
    }
    writeln!(md, "![Fig. 11](fig11-addition.png)\n![Fig. 12](fig12-removal.png)\n")?;

    // ------------------------------------------------------------------ E5, E6 (Figs. 13, 14)
    writeln!(md, "## E5, E6: weights and a subset of senders (Figs. 13, 14)\n")?;
    for p in PROFILES {
        let r = get(&format!("e5/{p}"))?;
        let (g2, g1) = weight_goodputs(&r.summary.flows);
        writeln!(
            md,
            "E5 weights ({p}): weight-2 nodes {g2:.3}, weight-1 nodes {g1:.3} pkt/s, ratio **{:.2}** (paper ≈ 2).\n",
            g2 / g1
        )?;
        let s = get(&format!("e6/{p}"))?;
        // Sustained rates (second halves): slow start to the subset's higher rates takes longer.
        let sub = steady_goodputs(s);
        let e1 = e1_goodput.get(p).copied().unwrap_or((f64::NAN, f64::NAN));
        let all = e1.1;
        let ((sub_min, sub_mean), (min_over_all, mean_over_all)) = subset_over_all(&sub, e1);
        writeln!(md, "E6 subset ({p}): after slow start the 13 senders (ids divisible by 3) get {sub_mean:.3} pkt/s on average, at least {sub_min:.3}; with all 39 sending, {all:.3} (min / all-senders {:.2}, mean / all-senders {:.2}; paper ≈ 4× on average). Whole-run means: {:.3} and {:.3}.\n", min_over_all, mean_over_all, s.summary.totals.mean_goodput_pps, e1_goodput.get(p).map_or(f64::NAN, |g| g.0))?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(
            &pkey(p, "weight2_over_weight1"),
            2.0,
            g2 / g1,
            "ratio",
            "E5 goodput ratio (acceptance 2 ± 20 %)",
        ));
        out.push(row(&pkey(p, "subset_min_over_all_senders"), "≥ 1", min_over_all, "ratio", format!("E6 smallest subset-sender goodput / E1 mean, both after slow start; subset mean / E1 mean {:.2} (paper ≈ 4)", mean_over_all)));
        if p == "paper" {
            let cats: Vec<String> = r.summary.flows.iter().map(|f| f.source.to_string()).collect();
            fig(bars(
                dir,
                "fig13-weights",
                "Fig. 13 analogue: per-node goodput, ids divisible by 4 have weight 2",
                "node",
                "goodput (pkt/s)",
                &cats,
                &[("goodput".into(), r.summary.flows.iter().map(|f| f.goodput_pps).collect())],
            ))?;
            let cats: Vec<String> = s.summary.flows.iter().map(|f| f.source.to_string()).collect();
            fig(bars(
                dir,
                "fig14-subset",
                "Fig. 14 analogue: goodput when only ids divisible by 3 send",
                "node",
                "goodput (pkt/s)",
                &cats,
                &[("goodput".into(), s.summary.flows.iter().map(|f| f.goodput_pps).collect())],
            ))?;
        }
    }
    writeln!(md, "![Fig. 13](fig13-weights.png)\n![Fig. 14](fig14-subset.png)\n")?;

    // ------------------------------------------------------------------ E7, E8 (Figs. 15, 16)
    writeln!(md, "## E7, E8: two base stations; no link retransmissions (Figs. 15, 16)\n")?;
    for p in PROFILES {
        let r = get(&format!("e7/{p}"))?;
        let sinks = r.network.sinks().to_vec();
        anyhow::ensure!(
            sinks.len() >= 2,
            "e7/{p}: the scenario has {} base station(s), the experiment needs two",
            sinks.len()
        );
        let ((ga, ra), (gb, rb)) = two_sink_rates(r, &sinks);
        let gp = |g: &[usize]| mean(&g.iter().map(|&i| r.summary.flows[i].goodput_pps).collect::<Vec<_>>());
        writeln!(md, "E7 two sinks ({p}): group of sink {} ({} senders) rate {ra:.3}, goodput {:.3}; group of sink {} ({} senders) rate {rb:.3}, goodput {:.3} pkt/s (mean rates over the second half of the traffic; ratio {:.2}).\n", sinks[0].0, ga.len(), gp(&ga), sinks[1].0, gb.len(), gp(&gb), rb / ra)?;
        if let Some(text) = crate::compare::run_freeze_links_text(r) {
            writeln!(md, "The good-tree freeze changed E7's trees ({p}; each link's expected share of frames on a quiet channel): {text}.\n")?;
        }
        let e8 = get(&format!("e8/{p}"))?;
        let rates: Vec<f64> =
            (0..e8.network.flows().len()).map(|i| mean_rate(e8, &[i], 0.0, e8.summary.sim_seconds)).collect();
        let jr = wsn_sim::runner::jain(&rates);
        writeln!(md, "E8 no retransmissions ({p}): Jain index of the nodes' mean rates {jr:.3}, of their goodputs {:.3}; delivery {:.1} %.\n", e8.summary.totals.goodput_jain_index, 100.0 * e8.summary.totals.delivery_ratio)?;
        let out = if p == "paper" { &mut rows } else { &mut extra };
        out.push(row(&pkey(p, "two_sinks_rate_ratio"), "≠ 1", rb / ra, "ratio", "E7: mean rate of the small group / the large group over the second half of the traffic period (paper: the groups settle at different rates)"));
        out.push(row(
            &pkey(p, "noretx_rate_jain"),
            "≈ 1",
            jr,
            "index",
            "E8: fairness of the allocation without link retransmissions",
        ));
        out.push(row(
            &pkey(p, "noretx_goodput_jain"),
            "< rate index",
            e8.summary.totals.goodput_jain_index,
            "index",
            "E8: fairness of goodput (paper: allocation fair, goodput not)",
        ));
        if p == "paper" {
            let mut series = rate_series(
                r,
                &format!("nodes of sink {}", sinks[0].0),
                Some(&ga.iter().map(|&i| r.network.flows()[i].source.index()).collect::<Vec<_>>()),
                Some(0),
            );
            series.extend(rate_series(
                r,
                &format!("nodes of sink {}", sinks[1].0),
                Some(&gb.iter().map(|&i| r.network.flows()[i].source.index()).collect::<Vec<_>>()),
                Some(1),
            ));
            fig(lines(
                dir,
                "fig15-two-sinks",
                "Fig. 15 analogue: rates with two base stations",
                "time (s)",
                "rate (pkt/s)",
                &series,
                None,
            ))?;
            let cats: Vec<String> = e8.summary.flows.iter().map(|f| f.source.to_string()).collect();
            fig(bars(
                dir,
                "fig16-no-retx",
                "Fig. 16 analogue: no link retransmissions — mean rate vs goodput",
                "node",
                "pkt/s",
                &cats,
                &[
                    ("goodput".into(), e8.summary.flows.iter().map(|f| f.goodput_pps).collect()),
                    (
                        "lost".into(),
                        rates.iter().zip(&e8.summary.flows).map(|(r, f)| (r - f.goodput_pps).max(0.0)).collect(),
                    ),
                ],
            ))?;
        }
    }
    writeln!(md, "![Fig. 15](fig15-two-sinks.png)\n![Fig. 16](fig16-no-retx.png)\n")?;

    // ------------------------------------------------------------------ E9 (Table 2)
    writeln!(md, "## E9: stability of the ε choice (Table 2)\n")?;
    writeln!(
        md,
        "Criterion (fixed before the runs): a network is *unstable* at ε when its congestion epochs need on average more than \
         {UNSTABLE_HALVINGS_PER_EPOCH} own halvings — after one halving and the additive increase that follows, the queue does not \
         drain and another threshold falls (paper §6.2) — or, since session 16, when its queue overflows (the queue did not \
         drain: a queue held full with the average frozen above the top threshold makes no new crossing to count).\n"
    )?;
    let two_bounds =
        stability_bounds(1.0, ewma_burst_tolerance(0.3, 8.0) as f64, ewma_burst_tolerance(0.3, 16.0) as f64, 3.0);
    let n30 = 30.0f64;
    let (u0_30, u1_30) = (ewma_burst_tolerance(0.12, 8.0) as f64, ewma_burst_tolerance(0.12, 16.0) as f64);
    let thirty_bounds = stability_bounds(n30 * n30.ln(), u0_30, u1_30, 3.0);
    let paper_thirty = stability_bounds(n30 * n30.ln(), 15.0, 30.0, 3.0);
    for (name, key, eps, bound, paper_pred, paper_obs) in [
        ("2 nodes (F_j = 1, w_q = 0.3)", "e9-2", &plan.eps_two, two_bounds.0.min(two_bounds.1), 0.0125, 0.0167),
        (
            "30 nodes (F_j = 30 ln 30, s̄ = 3, w_q = 0.12)",
            "e9-30",
            &plan.eps_thirty,
            thirty_bounds.0.min(thirty_bounds.1),
            paper_thirty.0.min(paper_thirty.1),
            0.2,
        ),
    ] {
        writeln!(md, "**{name}** — predicted bound min((5), (6)) with our burst tolerances: {bound:.4}; the paper's predicted {paper_pred:.4}, observed unstable from {paper_obs}.\n\n| ε | halvings | epochs | halvings / epoch | queue drops | verdict | weakest link ACKed |\n|---|---|---|---|---|---|---|")?;
        let mut weak = Vec::new();
        let mut freeze_texts: Vec<(f64, Option<String>)> = Vec::new();
        let mut verdicts: Vec<(f64, bool)> = Vec::new();
        for &e in eps.iter() {
            let r = get(&format!("{key}/{e}"))?;
            let (h, ep) = (counter(r, "halvings"), counter(r, "epochs"));
            let drops = r.summary.totals.queue_drops;
            let (per, unstable, verdict) = stability_verdict(h, ep, drops);
            verdicts.push((e, unstable));
            // (No epoch: no ratio to print.)
            let per = if per.is_finite() { format!("{per:.2}") } else { "—".into() };
            freeze_texts.push((e, crate::compare::run_freeze_links_text(r)));
            let weakest = crate::compare::weakest_link(r);
            if let Some(w) = weakest.filter(crate::compare::is_weak) {
                weak.push(format!("ε = {e}: {}", crate::compare::weak_link_facts(&w)));
            }
            writeln!(
                md,
                "| {e} | {h} | {ep} | {per} | {drops} | {verdict} | {} |",
                crate::compare::weakest_link_cell(weakest)
            )?;
        }
        writeln!(md)?;
        // The runs of one sweep freeze one tree (the freeze comes before the traffic): say it
        // once when every run agrees.
        match crate::compare::say_once(&freeze_texts) {
            crate::compare::SayOnce::Once(text) => writeln!(md, "**The good-tree freeze** changed the tree of every run (each link's expected share of frames on a quiet channel): {text}.\n")?,
            crate::compare::SayOnce::Each(each) => {
                for (e, text) in each {
                    writeln!(md, "**The good-tree freeze**, ε = {e}: {text}.\n")?;
                }
            }
        }
        if !weak.is_empty() {
            writeln!(
                md,
                "**A weak link in the frozen tree.** {} (below {} %; last column: the lowest share over the nodes with \
                 at least 100 attempts, that node → its parent). The good-tree freeze judges links on a quiet channel, \
                 so a link it kept or chose can still lose this much under load, unlike the paper's \"empirically good tree\"; \
                 the verdicts there reflect the tree as well as ε (docs/ifrc.md, \"Known problems\").\n",
                weak.join("; "),
                crate::compare::WEAK_TREE_ACK_PERCENT
            )?;
        }
        let k =
            if key == "e9-2" { "stability_2node_first_unstable_eps" } else { "stability_30node_first_unstable_eps" };
        let (first_unstable, shape) = stability_boundary(&verdicts);
        rows.push(row(
            k,
            paper_obs,
            first_unstable,
            "1/packet",
            if let Some(shape) = shape {
                format!(
                    "smallest swept ε judged unstable ({shape}); predicted bound {bound:.4} (paper predicted \
                     {paper_pred:.4})"
                )
            } else {
                format!(
                    "none unstable up to the largest swept ε; predicted bound {bound:.4} (paper predicted {paper_pred:.4})"
                )
            },
        ));
    }

    // ------------------------------------------------------------------ RCRT vs IFRC
    crate::compare::section(dir, &mut md, &mut rows, runs, cmp_rates, plan.quick)?;
    rows.extend(extra);
    write_numbers(dir, md, &rows)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{bins_per_second, collapsed, e2e_loss};

    /// The end-to-end loss counts the packets the network lost, not those still waiting in a
    /// queue when the run ended: E2's tree overloaded at 2 pkt/s per node until 60 s (best
    /// effort), run to 60 s and to 200 s (the same run up to 60 s; by 200 s every queue has
    /// drained). The packets queued at 60 s are then delivered or lost, so the loss counted at
    /// 60 s is at most the final one, and the deliveries after 60 s are at most what was queued.
    #[test]
    fn the_loss_leaves_out_what_is_still_queued() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/ifrc/e2-optimality-best-effort.toml");
        let run = |duration: &str| {
            let sets = [format!("duration_s={duration}"), "flows.0.rate_pps=2.0".into(), "flows.0.stop_s=60".into()];
            let sc = wsn_sim::scenario::Scenario::load(path, &sets).expect("scenario");
            let opts = wsn_sim::runner::RunOptions { seed: None, out_dir: None, progress: None };
            wsn_sim::runner::run(&sc, opts).expect("run")
        };
        let (at_60, end) = (run("60"), run("200"));
        let ((loss, queued), (final_loss, drained)) = (e2e_loss(&at_60), e2e_loss(&end));
        let (t, tf) = (&at_60.summary.totals, &end.summary.totals);
        assert_eq!((t.originated, drained), (tf.originated, 0), "the same packets, all out of the queues at 200 s");
        assert!(queued > 100 && tf.delivered > t.delivered + 100, "queued {queued}, delivered {t:?} then {tf:?}");
        let lost = |l: f64| l * t.originated as f64;
        assert!(lost(loss) <= lost(final_loss) + 1e-9, "{loss} > {final_loss}");
        // No packet is originated after 60 s: every later delivery was waiting at 60 s.
        assert!(
            tf.delivered - t.delivered <= queued,
            "delivered {} after 60 s, {queued} queued",
            tf.delivered - t.delivered
        );
        assert!(loss < 1.0 - t.delivery_ratio);
    }

    /// A rate from per-bin counts takes the count and the duration over the same bins: a bin that
    /// straddles the window's start counts for neither (the second-half goodput once counted it
    /// whole over the seconds after the midpoint only), and bins from the window's end on count
    /// for nothing.
    #[test]
    fn a_rate_from_bins_counts_and_times_the_same_bins() {
        // Bins of 10 s with 10 packets each (1 pkt/s), then a burst after the window.
        let bins = [10, 10, 10, 10, 50];
        assert_eq!(bins_per_second(&bins, 10.0, 15.0, 40.0), 1.0);
        assert_eq!(bins_per_second(&bins, 10.0, 20.0, 40.0), 1.0);
        assert_eq!(bins_per_second(&bins, 10.0, 0.0, 20.0), 1.0);
        // A window that ends inside a bin: that bin's packets over the seconds up to the end.
        assert_eq!(bins_per_second(&[10, 10, 10], 10.0, 0.0, 25.0), 30.0 / 25.0);
        // No bin starts inside the window: undefined, not 0.
        assert!(bins_per_second(&bins, 10.0, 35.0, 40.0).is_nan());
        assert!(bins_per_second(&bins, 0.0, 0.0, 40.0).is_nan());
    }

    /// A fall of the fair share to a small fraction of the equal share is flagged as a collapse
    /// (session 22's seed 1: 5.03 → 0.002 pkt/s, 0.0003, with 9 senders before and 39 after);
    /// a fall to about the equal share or to a sixth of it (the code's guard: 0.15) is not, nor a
    /// ratio that is not a number.
    #[test]
    fn a_collapse_is_told_from_a_new_fair_share() {
        let expected = 9.0 / 39.0;
        assert!(collapsed(0.0003, expected));
        assert!(collapsed(0.02, expected));
        assert!(!collapsed(0.15, expected));
        assert!(!collapsed(0.24, expected));
        assert!(!collapsed(f64::NAN, expected));
        // E4 (39 → 9 senders): a ratio below 1 that still is not a tenth of 4.3 is no collapse.
        assert!(!collapsed(0.5, 39.0 / 9.0) && collapsed(0.4, 39.0 / 9.0));
    }

    mod audit36 {
        use super::super::{busiest_node, second_half_sink_tx, steady_goodputs};
        use super::collapsed;
        use wsn_sim::runner::{run, RunOptions};
        use wsn_sim::scenario::{builtin_base, Scenario};

        /// On a small IFRC run (traffic 300–600 s, 10 s bins), counted independently from the bins
        /// and node counters: a flow's steady goodput is its deliveries in the bins from the
        /// midpoint of its active time (450 s) over the 150 s after it (`steady_goodputs`); the
        /// sink's second-half control rate its transmissions from 300 s over 300 s
        /// (`second_half_sink_tx`); the busiest node's traffic is packets sent + data frames
        /// received + overheard, per second of the traffic period (`busiest_node`, IFRC §6.2).
        #[test]
        fn second_half_rates_and_the_busiest_node_from_a_small_run() {
            let text = "name = \"t\"\nduration_s = 600.0\n[topology]\n\
                        layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                        [mac]\npreset = \"ifrc2006\"\n[protocol]\nkind = \"ifrc\"\n[[flows]]\nsources = \"all\"\n\
                        payload_bytes = 0\nstart_s = 300.0\n[output]\ntimeseries_bin_s = 10.0\n";
            let sc = Scenario::from_toml(text, "t.toml", builtin_base(), &[]).expect("scenario");
            let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).expect("run");
            let sum_from = |bins: &[u32], b: usize| bins.iter().skip(b).map(|&c| f64::from(c)).sum::<f64>();
            let got = steady_goodputs(&r);
            assert_eq!(got.len(), r.network.flows().len());
            for (f, g) in r.network.flows().iter().zip(&got) {
                assert!((g - sum_from(&f.bins, 45) / 150.0).abs() < 1e-12, "{g}");
            }
            assert!(got.iter().any(|&g| g > 0.0), "{got:?}");
            let tx = sum_from(r.network.sink_tx_bins(0), 30);
            assert!(tx > 0.0 && (second_half_sink_tx(&r) - tx / 300.0).abs() < 1e-12);
            let total = |i: usize| {
                let s = r.network.node_stats(i);
                s.data_sent + s.data_rx + s.data_overheard
            };
            let (node, pps, per) = busiest_node(&r);
            assert!((0..r.network.len()).all(|i| total(i) <= total(node)));
            assert!(r.network.node_stats(node).data_overheard > 0, "no overhearing to count");
            assert!((pps - total(node) as f64 / 300.0).abs() < 1e-9, "{pps}");
            assert!((per - total(node) as f64 / r.summary.totals.delivered as f64).abs() < 1e-12, "{per}");
        }

        /// `collapsed`: strictly below a tenth of the expected ratio; exactly a tenth is not a
        /// collapse (0.1 × 4 = 0.4 exactly in binary floating point).
        #[test]
        fn exactly_a_tenth_of_the_expected_share_is_no_collapse() {
            assert!(!collapsed(0.4, 4.0));
            assert!(collapsed(0.399, 4.0));
        }
    }

    /// Audit of the numbers `report` computes inline (docs/ifrc.md, Validation), extracted into
    /// small functions, and of mutants the first audit left.
    pub(crate) mod audit36b {
        use super::super::{
            bs_overhead, busiest_node, counter, cv_median, e1_total_rows, goodput_at, mean_rate, rate_series,
            rate_spread, stability_boundary, stability_verdict, steady_goodputs, subset_over_all, two_sink_rates,
            weight_goodputs,
        };
        use wsn_proto::NodeId;
        use wsn_sim::runner::{run, RunOptions, RunResult};
        use wsn_sim::scenario::{builtin_base, Scenario};

        /// A 9-node grid under IFRC on the `ifrc2006` MAC (`extra`: more `[topology]` keys; `flows`:
        /// the `[[flows]]` tables), 10-s bins; also used by `compare`'s tests.
        pub(crate) fn ifrc_run(extra: &str, flows: &str, duration: f64) -> RunResult {
            let text = format!(
                "name = \"t\"\nduration_s = {duration}\n[topology]\n{extra}\
                 layout = {{ kind = \"grid\", nodes = 9, spacing_m = 5.0 }}\n[mac]\npreset = \"ifrc2006\"\n\
                 [protocol]\nkind = \"ifrc\"\n{flows}[output]\ntimeseries_bin_s = 10.0\n"
            );
            let sc = Scenario::from_toml(&text, "t.toml", builtin_base(), &[]).expect("scenario");
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).expect("run")
        }

        /// numbers.csv's `queue_overflows` and `ifrc_mean_goodput_pps` are E1's run totals (queue drops,
        /// mean goodput), the keys suffixed for the reference-code profile (`e1_total_rows`). The totals
        /// of a short run, set to values the quick runs never give (they drop nothing).
        #[test]
        fn e1_total_rows_copy_the_runs_totals() {
            let mut r = ifrc_run("", "[[flows]]\nsources = [1, 2]\npayload_bytes = 0\nstart_s = 30.0\n", 100.0);
            (r.summary.totals.queue_drops, r.summary.totals.mean_goodput_pps) = (7, 0.5);
            for (p, suffix) in [("paper", ""), ("reference_code", "_reference_code")] {
                let [a, b] = e1_total_rows(p, &r.summary.totals);
                assert_eq!((a.key, a.ours), (format!("queue_overflows{suffix}"), "7".to_string()));
                assert_eq!((b.key, b.ours), (format!("ifrc_mean_goodput_pps{suffix}"), "0.5".to_string()));
            }
        }

        /// Time average of a step trace over `[from, to]`, its value before the first point taken
        /// as the first point's (as `step_average`), integrated here point by point.
        fn avg(tr: &[(f64, f64, f64)], from: f64, to: f64) -> f64 {
            let at = |t: f64| tr.iter().take_while(|x| x.0 <= t).last().or(tr.first()).map_or(f64::NAN, |x| x.1);
            let mut cuts: Vec<f64> = tr.iter().map(|x| x.0).filter(|&t| t > from && t < to).collect();
            cuts.insert(0, from);
            cuts.push(to);
            cuts.windows(2).map(|w| at(w[0]) * (w[1] - w[0])).sum::<f64>() / (to - from)
        }

        /// `rate_spread`'s CV: sampled every `step` s from `from` to `to` inclusive, population
        /// standard deviation over the mean, the median over the samples. Two nodes at 1 pkt/s,
        /// one rising to 3 at 10 s: CVs 0, 0.5, 0.5 at 0, 10, 20 s, median 0.5.
        #[test]
        fn the_rate_cv_is_a_population_cv_sampled_to_the_end_inclusive() {
            let (a, b) = ([(0.0, 1.0, 0.0), (10.0, 3.0, 0.0)], [(0.0, 1.0, 0.0)]);
            assert_eq!(cv_median(&[&a, &b], 0.0, 20.0, 10.0), 0.5);
            // A node without a rate yet is left out of a sample, not counted as 0.
            let c = [(15.0, 9.0, 0.0)];
            assert_eq!(cv_median(&[&a, &b, &c], 0.0, 10.0, 10.0), 0.25);
            // Every node at 0: no sample (no CV of a zero mean); CVs 0 and 0.5 at 10 and 20 s.
            let (a, b) = ([(0.0, 0.0, 0.0), (10.0, 1.0, 0.0), (20.0, 3.0, 0.0)], [(0.0, 0.0, 0.0), (10.0, 1.0, 0.0)]);
            assert_eq!(cv_median(&[&a, &b], 0.0, 20.0, 10.0), 0.25);
        }

        /// `rate_spread` is over the non-sink nodes only (its doc), the sink's trace left out.
        #[test]
        fn the_rate_spread_leaves_out_the_sink() {
            let r = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 60.0\n", 300.0);
            let sink = r.network.sinks()[0].index();
            let others: Vec<&[(f64, f64, f64)]> =
                (0..r.network.len()).filter(|&i| i != sink).map(|i| r.network.rate_trace(i)).collect();
            assert!(!r.network.rate_trace(sink).is_empty(), "the sink has no rate to leave out");
            let got = rate_spread(&r, 150.0, 300.0, 10.0);
            assert!(got > 0.0 && got == cv_median(&others, 150.0, 300.0, 10.0), "{got}");
        }

        /// A flow that is never active has a steady goodput of 0 (`steady_goodputs`' doc), and a
        /// run with no traffic at all names node 0 as its busiest node (ties: the lowest id); a
        /// counter the run does not have counts 0.
        #[test]
        fn idle_flows_count_zero_and_ties_go_to_the_lowest_id() {
            let r = ifrc_run(
                "",
                "[[flows]]\nsources = [1, 2]\npayload_bytes = 0\nstart_s = 20.0\n\
                 [[flows]]\nsources = [3]\npayload_bytes = 0\nstart_s = 200.0\n",
                100.0,
            );
            let g = steady_goodputs(&r);
            assert_eq!(g.len(), 3);
            let late = r.network.flows().iter().position(|f| f.source.index() == 3).expect("late flow");
            assert_eq!(g[late], 0.0);
            assert_eq!(counter(&r, "no_such_counter"), 0);
            let idle = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 200.0\n", 60.0);
            assert_eq!(busiest_node(&idle).0, 0);
        }

        /// `mean_rate` averages each source's rate over `[from, to]` exactly; the rate series of a
        /// node runs from the start of its flow to the run's end, its points in time order.
        #[test]
        fn mean_rate_windows_and_rate_series_ends() {
            let r = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 60.0\n", 300.0);
            let fl = r.network.flows();
            let all: Vec<usize> = (0..fl.len()).collect();
            let want: Vec<f64> = fl.iter().map(|f| avg(r.network.rate_trace(f.source.index()), 100.0, 250.0)).collect();
            let want = want.iter().sum::<f64>() / want.len() as f64;
            let got = mean_rate(&r, &all, 100.0, 250.0);
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
            let series = rate_series(&r, "nodes", None, None);
            assert_eq!(series.len(), fl.len());
            for s in &series {
                assert_eq!(s.points.first().map(|p| p.0), Some(60.0));
                assert_eq!(s.points.last().map(|p| p.0), Some(300.0));
                assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0 || w[1].0 == 300.0), "{:?}", s.points);
            }
        }

        /// E7 (docs/ifrc.md, Validation: two base stations settle at different rates): the flows
        /// grouped by base station, each group's mean source rate over the second half of the
        /// traffic period (here 100–300 s).
        #[test]
        fn two_sinks_group_flows_by_sink_over_the_second_half() {
            let r = ifrc_run(
                "sinks = [0, 8]\n",
                "[[flows]]\nsources = [1, 2, 3]\nsink = 0\npayload_bytes = 0\nstart_s = 100.0\n\
                 [[flows]]\nsources = [5, 7]\nsink = 8\npayload_bytes = 0\nstart_s = 100.0\n",
                300.0,
            );
            let sinks = r.network.sinks().to_vec();
            assert_eq!(sinks, vec![NodeId(0), NodeId(8)]);
            let ((ga, ra), (gb, rb)) = two_sink_rates(&r, &sinks);
            let src = |g: &[usize]| g.iter().map(|&i| r.network.flows()[i].source.0).collect::<Vec<_>>();
            assert_eq!((src(&ga), src(&gb)), (vec![1, 2, 3], vec![5, 7]));
            let want = |s: &[u16]| {
                s.iter().map(|&n| avg(r.network.rate_trace(n as usize), 200.0, 300.0)).sum::<f64>() / s.len() as f64
            };
            assert!((ra - want(&[1, 2, 3])).abs() < 1e-9 && (rb - want(&[5, 7])).abs() < 1e-9, "{ra} {rb}");
            assert!(ra != rb);
        }

        /// E1's base-station overhead (docs/ifrc.md, Validation): its control packets per second of
        /// the whole run and per data packet delivered, counted here from the sink's transmissions.
        #[test]
        fn base_station_overhead_per_second_and_per_delivered_packet() {
            let r = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 60.0\n", 600.0);
            let sent = r.network.sink_tx_bins(0).iter().map(|&c| f64::from(c)).sum::<f64>();
            let t = &r.summary.totals;
            assert!(sent > 0.0 && t.delivered > 0 && t.delivered < t.originated, "{sent} {t:?}");
            let (pps, per) = bs_overhead(&r);
            assert!((pps - sent / 600.0).abs() < 1e-12, "{pps}");
            assert!((per - sent / t.delivered as f64).abs() < 1e-12, "{per}");
        }

        /// A node's rate series starts at its flow's start with the rate then in force, once,
        /// even when the rate changes at that very instant (here the start of the run).
        #[test]
        fn a_rate_series_does_not_repeat_its_start() {
            let r = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 0.0\n", 120.0);
            let at_start = (0..r.network.len()).any(|i| r.network.rate_trace(i).first().is_some_and(|x| x.0 == 0.0));
            assert!(at_start, "no rate change at the start to repeat");
            for s in &rate_series(&r, "nodes", None, None) {
                assert_eq!(s.points.first().map(|p| p.0), Some(0.0));
                assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0 || w[1].0 == 120.0), "{:?}", s.points);
            }
        }

        /// E6 (docs/ifrc.md, Validation): the slowest subset sender and the subset's mean, each
        /// over the all-senders fair rate.
        #[test]
        fn the_subset_is_judged_by_its_slowest_sender() {
            // E1: 0.1 pkt/s over the whole run, 0.25 over its second half.
            let ((min, mean), (min_r, mean_r)) = subset_over_all(&[0.9, 0.3, 0.6], (0.1, 0.25));
            assert_eq!((min, min_r), (0.3, 0.3 / 0.25));
            assert!((mean - 0.6).abs() < 1e-12 && (mean_r - 0.6 / 0.25).abs() < 1e-12, "{mean} {mean_r}");
        }

        /// The best fixed rate's goodput is the mean goodput of that swept rate (not its minimum),
        /// NaN for a rate not swept (no knee).
        #[test]
        fn the_best_fixed_goodput_is_the_mean_goodput_at_that_rate() {
            let pts = [(0.2, 0.19, 0.18, 1.0), (0.4, 0.37, 0.33, 0.99)];
            assert_eq!(goodput_at(&pts, 0.4), 0.37);
            assert!(goodput_at(&pts, f64::NAN).is_nan() && goodput_at(&pts, 0.6).is_nan());
        }

        /// E5: weight-2 nodes are the ids divisible by 4 (docs/ifrc.md: 2× ± 20 % of the others).
        #[test]
        fn weight_two_nodes_are_the_ids_divisible_by_four() {
            let r = ifrc_run("", "[[flows]]\nsources = \"all\"\npayload_bytes = 0\nstart_s = 60.0\n", 200.0);
            let mut flows = r.summary.flows.clone();
            for f in &mut flows {
                f.goodput_pps = if f.source % 4 == 0 { 2.0 } else { f64::from(f.source % 2) + 0.5 };
            }
            // Weight 2: 4, 8 → 2; weight 1: 1, 3, 5, 7 → 1.5 and 2, 6 → 0.5, mean 7 / 6.
            let (g2, g1) = weight_goodputs(&flows);
            assert_eq!(g2, 2.0);
            assert!((g1 - 7.0 / 6.0).abs() < 1e-12, "{g1}");
        }

        /// Table 2's verdicts: unstable above 1.5 halvings per epoch (exactly 1.5 is stable) or on
        /// a queue overflow; no epoch and no drop is "no congestion".
        #[test]
        fn stability_verdicts() {
            // Exactly 1.5 halvings per epoch: stable.
            assert_eq!(stability_verdict(3, 2, 0), (1.5, false, "stable"));
            assert_eq!(stability_verdict(4, 2, 0), (2.0, true, "unstable"));
            assert_eq!(stability_verdict(2, 2, 1).2, "unstable");
            let (per, unstable, v) = stability_verdict(0, 0, 0);
            assert!(per.is_nan() && !unstable && v == "no congestion");
            let (per, unstable, v) = stability_verdict(0, 0, 3);
            assert!(per.is_nan() && unstable && v == "unstable");
        }

        /// The boundary the report sets beside the paper's (0.0125 / 0.147 predicted, 0.0167 / 0.2
        /// observed): the smallest unstable ε, and whether the sweep is stable below it and
        /// unstable above.
        #[test]
        fn stability_boundary_finds_the_smallest_unstable_eps_and_its_shape() {
            let (e, s) = stability_boundary(&[(0.005, false), (0.0125, true), (0.025, true)]);
            assert_eq!(e, 0.0125);
            assert!(s.expect("shape").starts_with("stable below it"));
            let (e, s) = stability_boundary(&[(0.005, false), (0.0125, true), (0.025, false), (0.05, true)]);
            assert_eq!(e, 0.0125);
            assert!(s.expect("shape").contains("ε = 0.025 above it judged stable"));
            let (e, s) = stability_boundary(&[(0.005, true), (0.0125, true)]);
            assert_eq!(e, 0.005);
            assert!(s.expect("shape").contains("already unstable"));
            let (e, s) = stability_boundary(&[(0.05, false), (0.2, false)]);
            assert!(e.is_nan() && s.is_none());
        }
    }
}
