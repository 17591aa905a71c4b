//! `wsn bench`: speed and memory of the simulator on fixed scenarios.
//!
//! Each case runs in a child process (`wsn bench --case NAME`) so that its peak resident memory
//! (VmHWM) is its own. Timings are wall-clock seconds of the simulation loop on this machine;
//! compare ratios measured in one run, not absolute numbers across machines.

use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use wsn_sim::runner::{run, RunOptions};
use wsn_sim::scenario::Scenario;

/// ns-3.37 lr-wpan on the lrwpan40 layout, 600 s (data/topologies/README.md).
const NS3_LRWPAN40_WALL_S: f64 = 10.4;
const NS3_LRWPAN40_DELIVERY: f64 = 0.989;

#[derive(Serialize, Deserialize, Debug)]
struct CaseResult {
    case: String,
    nodes: usize,
    sim_s: f64,
    wall_s: f64,
    events: u64,
    frames: u64,
    delivery: f64,
    peak_rss_mb: f64,
}

/// Area side (m) for `n` nodes at the lrwpan40 density (40 nodes in 35 m × 35 m).
fn side(n: usize) -> f64 {
    (n as f64 * 35.0 * 35.0 / 40.0).sqrt()
}

/// Index of the node in the centre cell of a uniform placement (row-major cells).
fn center_cell(n: usize) -> usize {
    let cols = (n as f64).sqrt().ceil() as usize;
    let rows = n.div_ceil(cols);
    ((rows / 2) * cols + cols / 2).min(n - 1)
}

fn case_scenario(name: &str) -> Result<Scenario> {
    let mut set: Vec<String> = vec!["output.plots=false".into()];
    let base = if name == "lrwpan40" {
        "lrwpan40"
    } else if name == "office40-hour" {
        set.push("duration_s=3600".into());
        "office40"
    } else if let Some(n) = name.strip_prefix("uniform-") {
        // uniform-N-RATE-SECONDS: N nodes at the lrwpan40 density (its radio, no shadowing),
        // the sink at the centre-most cell, a static minimum-hop tree over links at least 0 dB
        // above the noise (MultiHopLQI would need hours to converge over 60+ hops), every node
        // sending at RATE pkt/s.
        let parts: Vec<&str> = n.split('-').collect();
        anyhow::ensure!(parts.len() == 3, "bad case {name}");
        let n: usize = parts[0].parse()?;
        let w = side(n);
        set.push(format!("topology.layout={{ kind = \"uniform\", nodes = {n}, width_m = {w:.2}, height_m = {w:.2} }}"));
        set.push("routing.kind=\"shortest\"".into());
        // 0 dB: the O-QPSK curve of this radio decodes a 51-byte frame with PRR 0.93 there;
        // at this density and power a stricter threshold leaves most nodes unconnected.
        set.push("routing.shortest_snr_db=0.0".into());
        set.push(format!("topology.sinks=[{}]", center_cell(n)));
        set.push(format!("flows.0.rate_pps={}", parts[1]));
        set.push(format!("duration_s={}", parts[2]));
        "lrwpan40"
    } else {
        anyhow::bail!("unknown bench case {name}");
    };
    Ok(Scenario::load(base, &set)?)
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Run one case in this process and print its result as one JSON line.
pub fn one(name: &str) -> Result<()> {
    let sc = case_scenario(name)?;
    let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None })?;
    let (frames, _) = r.network.frames_on_air();
    let res = CaseResult {
        case: name.into(),
        nodes: r.summary.nodes,
        sim_s: r.summary.sim_seconds,
        wall_s: r.summary.wall_seconds,
        events: r.summary.events,
        frames,
        delivery: r.summary.totals.delivery_ratio,
        peak_rss_mb: peak_rss_mb(),
    };
    println!("{}", serde_json::to_string(&res)?);
    Ok(())
}

fn spawn(name: &str) -> Result<CaseResult> {
    let exe = std::env::current_exe().context("locating the wsn binary")?;
    let out = Command::new(exe).args(["bench", "--case", name]).output().context("starting a bench case")?;
    anyhow::ensure!(out.status.success(), "bench case {name} failed: {}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8_lossy(&out.stdout);
    Ok(serde_json::from_str(line.trim())?)
}

/// Run every case and print the table.
pub fn all(quick: bool) -> Result<()> {
    let mut cases = vec!["lrwpan40".to_string(), "office40-hour".into(), "uniform-400-0.5-300".into()];
    let sizes: &[usize] = if quick { &[40, 400, 2000] } else { &[40, 400, 4000, 10000] };
    for n in sizes {
        cases.push(format!("uniform-{n}-0.2-60"));
    }
    println!("{:<24} {:>6} {:>8} {:>8} {:>11} {:>9} {:>12} {:>9} {:>9}", "case", "nodes", "sim s", "wall s", "events/s", "frames", "µs/frame", "delivery", "peak MB");
    let mut rows = Vec::new();
    for c in &cases {
        let r = spawn(c)?;
        println!(
            "{:<24} {:>6} {:>8.0} {:>8.2} {:>11.0} {:>9} {:>12.2} {:>9.3} {:>9.1}",
            r.case,
            r.nodes,
            r.sim_s,
            r.wall_s,
            r.events as f64 / r.wall_s.max(1e-9),
            r.frames,
            r.wall_s * 1e6 / r.frames.max(1) as f64,
            r.delivery,
            r.peak_rss_mb
        );
        rows.push(r);
    }
    if let Some(l) = rows.iter().find(|r| r.case == "lrwpan40") {
        println!(
            "lrwpan40: {:.1}× faster than ns-3.37 lr-wpan ({} s); delivery {:.3} vs ns-3 {:.3} ({:+.1} points)",
            NS3_LRWPAN40_WALL_S / l.wall_s,
            NS3_LRWPAN40_WALL_S,
            l.delivery,
            NS3_LRWPAN40_DELIVERY,
            100.0 * (l.delivery - NS3_LRWPAN40_DELIVERY)
        );
    }
    if let Some(o) = rows.iter().find(|r| r.case == "office40-hour") {
        println!("office40: {:.2} s of wall time per simulated hour at 1 pkt/s per node", o.wall_s * 3600.0 / o.sim_s);
    }
    let dir = std::path::Path::new("out/bench");
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("bench.json"), serde_json::to_string_pretty(&rows)?)?;
    println!("outputs   {}", dir.join("bench.json").display());
    Ok(())
}
