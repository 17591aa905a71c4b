//! `wsn`: run, sweep and benchmark simulated sensor-network scenarios.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wsn_sim::runner::{run, RunOptions, RunResult};
use wsn_sim::scenario::Scenario;

#[derive(Parser)]
#[command(name = "wsn", version, about = "Reliable, rate-controlled data collection in simulated low-power multihop wireless networks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario (a TOML file or a built-in name; default: office40).
    Run {
        /// Scenario file or built-in name (office40, lrwpan40).
        #[arg(default_value = "office40")]
        scenario: String,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Output directory (default: out/<scenario>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override any scenario field, e.g. --set duration_s=600 --set flows.0.rate_pps=2
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write the full packet trace (trace.csv).
        #[arg(long)]
        trace: bool,
        /// Write every frame on the air to frames.pcap (IEEE 802.15.4, opens in Wireshark).
        #[arg(long)]
        pcap: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Export the link gains of a scenario's topology as a TOSSIM gain file.
    Gains {
        /// Scenario file or built-in name.
        #[arg(default_value = "office40")]
        scenario: String,
        /// Output file.
        #[arg(long, default_value = "gains.txt")]
        out: PathBuf,
        /// Override any scenario field.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run { scenario, seed, out, mut set, trace, pcap, quiet } => {
            if trace {
                set.push("output.trace=true".into());
            }
            if pcap {
                set.push("output.pcap=true".into());
            }
            let sc = Scenario::load(&scenario, &set)?;
            let dir = out.unwrap_or_else(|| PathBuf::from("out").join(&sc.name));
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let r = run_with_bar(&sc, seed, &dir, quiet)?;
            wsn_sim::output::write_all(&dir, &r)?;
            if sc.output.plots {
                wsn_sim::plots::write_all(&dir, &r).map_err(anyhow::Error::msg).context("writing plots")?;
            }
            print_summary(&r, &dir);
        }
        Cmd::Gains { scenario, out, set } => {
            let sc = Scenario::load(&scenario, &set)?;
            let (_, links, _) = wsn_sim::runner::build_topology(&sc)?;
            wsn_sim::topology::write_tossim_gains(&links, sc.radio.link.noise_floor_dbm, 0.0, &out)
                .with_context(|| format!("writing {}", out.display()))?;
            let pairs: usize = links.out.iter().map(Vec::len).sum();
            println!("{} nodes, {} directed links → {}", links.n(), pairs, out.display());
        }
    }
    Ok(())
}

fn run_with_bar(sc: &Scenario, seed: Option<u64>, dir: &std::path::Path, quiet: bool) -> Result<RunResult> {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(1000) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {percent:>3}% sim  eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("{} ({} s simulated)", sc.name, sc.duration_s));
    let mut progress = |f: f64| bar.set_position((f * 1000.0) as u64);
    let r = run(sc, RunOptions { seed, out_dir: Some(dir.to_path_buf()), progress: Some(&mut progress) })?;
    bar.finish_and_clear();
    Ok(r)
}

fn print_summary(r: &RunResult, dir: &std::path::Path) {
    let s = &r.summary;
    let t = &s.totals;
    println!("scenario  {}  (seed {}, preset {}, protocol {})", s.scenario, s.seed, s.preset, s.protocol);
    println!(
        "run       {:.0} s simulated in {:.2} s wall, {} events ({:.1} M/s), {} nodes",
        s.sim_seconds,
        s.wall_seconds,
        s.events,
        s.events as f64 / s.wall_seconds.max(1e-9) / 1e6,
        s.nodes
    );
    println!(
        "routing   depth max {} (max seen {}), mean {:.2}; parent changes {} ({} during traffic); unrouted {}",
        s.routing.max_depth,
        s.routing.max_depth_seen,
        s.routing.mean_depth,
        s.routing.parent_changes,
        s.routing.parent_changes_during_traffic,
        s.routing.unrouted_nodes
    );
    println!(
        "traffic   {} flows: originated {}, delivered {} ({:.1} %)",
        s.flows.len(),
        t.originated,
        t.delivered,
        100.0 * t.delivery_ratio
    );
    println!(
        "goodput   per flow mean {:.3} pkt/s, min {:.3}, max {:.3}",
        t.mean_goodput_pps, t.min_goodput_pps, t.max_goodput_pps
    );
    println!(
        "frames    data {}, beacons {}, acks {}; drops: queue {}, mac {}, no route {}; dups suppressed {}",
        t.data_frames, t.beacon_frames, t.ack_frames, t.queue_drops, t.mac_drops, t.no_route_drops, t.duplicates_suppressed
    );
    let inv = &t.invariant_violations;
    let ok = inv.duplicate_deliveries + inv.phantom_deliveries + inv.queue_overflows + inv.send_done_mismatch == 0;
    println!("checks    invariants {}", if ok { "ok".to_string() } else { format!("VIOLATED: {inv:?}") });
    println!("trace     sha256 {}", s.trace_sha256);
    println!("outputs   {}", dir.display());
}
