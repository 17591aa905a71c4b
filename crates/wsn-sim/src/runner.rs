//! Build a [`Network`] from a [`Scenario`], run it, and collect the results.

use std::path::{Path, PathBuf};
use std::time::Instant as WallInstant;

use serde::Serialize;
use wsn_proto::time::{Duration, Instant};
use wsn_wire::NodeId;

use crate::endpoints::EndpointSpec;
use crate::network::{ChannelOptions, FlowSpec, Network, NetworkSpec};
use crate::output::{partial_name, TraceFile, TRACE_FILES};
use crate::radio::noise::{NoiseConfig, NoiseModel};
use crate::rng::{stream, Purpose};
use crate::routing::mhlqi::MhlqiConfig;
use crate::routing::static_tree::read_tree;
use crate::scenario::{ProtocolConfig, RcrtConfig, RcrtProfile, RoutingKind, Scenario, Sources};
use crate::topology::{generate_links, generate_links_per_receiver, place, read_tossim_gains, Links, Position};
use crate::trace::Tracer;

/// Why a run could not be built or finished.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is inconsistent (names the field; [`run`] and [`check`] also name the
    /// scenario and the field's line).
    #[error("{0}")]
    Config(String),
    /// An input file could not be used.
    #[error("{0}")]
    Input(String),
    /// Writing an output failed.
    #[error("writing {path}: {source}")]
    Output {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The run failed after it had opened its trace files, which it leaves under their temporary
    /// names ([`crate::output::partial_name`]), unfinished, for a look at what it wrote.
    #[error("{source}; this run's unfinished trace is left as {}", left_list(left))]
    TraceLeft {
        /// Why the run failed.
        source: Box<RunError>,
        /// The files left (`…/trace.csv.partial`, `…/frames.pcap.partial`).
        left: Vec<PathBuf>,
    },
}

/// `a`, `a and b`: the files a failed run left.
fn left_list(left: &[PathBuf]) -> String {
    let names: Vec<String> = left.iter().map(|p| p.display().to_string()).collect();
    names.join(" and ")
}

impl From<crate::trace::TraceFileError> for RunError {
    fn from(e: crate::trace::TraceFileError) -> RunError {
        RunError::Output { path: e.path.display().to_string(), source: e.source }
    }
}

/// Headline numbers of one run (`summary.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Where the scenario came from: its file, or "built-in scenario NAME".
    pub scenario_origin: String,
    /// The `--set` overrides applied to it, as given (a sweep's value among them).
    pub overrides: Vec<String>,
    /// Seed.
    pub seed: u64,
    /// MAC preset.
    pub preset: String,
    /// Reception curve (`cc2420` or `ieee802154`).
    pub prr_curve: crate::scenario::PrrCurve,
    /// Reception rules (`tossim` or `ns3`).
    pub reception: crate::scenario::Reception,
    /// Protocol.
    pub protocol: String,
    /// The scenario's `[protocol]` section as the run read it, overrides applied (for RCRT the
    /// profile, the default and per-sink policies, the policy changes and weights; for IFRC its
    /// parameters; `null` where the profile's own value applies), so that a summary says which
    /// allocation and parameters produced it.
    pub protocol_config: crate::scenario::ProtocolConfig,
    /// Simulated seconds.
    pub sim_seconds: f64,
    /// Wall-clock seconds of the simulation loop.
    pub wall_seconds: f64,
    /// Events processed.
    pub events: u64,
    /// Nodes.
    pub nodes: usize,
    /// SHA-256 of the trace (determinism fingerprint).
    pub trace_sha256: String,
    /// The data files the run read, by the scenario field that names them (the layout, gain,
    /// noise trace and tree files), as absolute paths.
    pub data_files: std::collections::BTreeMap<String, String>,
    /// Routing.
    pub routing: RoutingSummary,
    /// Flows.
    pub flows: Vec<FlowSummary>,
    /// Totals.
    pub totals: Totals,
}

/// Routing figures.
#[derive(Clone, Debug, Serialize)]
pub struct RoutingSummary {
    /// Deepest node at the end of the run (hops, as the nodes advertise them: from the parent's
    /// last beacon, so a node can be deeper along its parents while routes change).
    pub max_depth: u32,
    /// Mean depth at the end over every routed (node, tree) pair, a sink counting in the
    /// other sinks' trees.
    pub mean_depth: f64,
    /// Deepest node seen at any sample during the run.
    pub max_depth_seen: u32,
    /// Median over the samples taken while traffic flows of the tree depth (deepest node).
    pub median_max_depth: u32,
    /// 10th and 90th percentiles of the same.
    pub max_depth_p10_p90: [u32; 2],
    /// Parent changes, all nodes, all trees.
    pub parent_changes: u64,
    /// Parent changes after the first flow started.
    pub parent_changes_during_traffic: u64,
    /// Nodes without a route in at least one tree at the end (a sink counts in the other
    /// sinks' trees, not in its own): no parent, or, under the 2.x rule, a parent that lost its
    /// own route (no valid hop count).
    pub unrouted_nodes: usize,
    /// Nodes with a route of their own in some tree at the end whose parents do not lead to
    /// that tree's sink: in a routing loop, or behind one or behind an unrouted node. Their
    /// packets cannot arrive until the routes change (a transient state of MultiHopLQI; the
    /// frozen part of a tree has none). A node may count here for one tree and as unrouted for
    /// another.
    pub cut_off_nodes: usize,
    /// The links the good-tree freeze replaced (`routing.freeze_min_prr`; empty without it).
    pub freeze_moves: Vec<FreezeLink>,
    /// The weak links it kept because no neighbour qualified.
    pub freeze_weak_kept: Vec<FreezeLink>,
}

/// A link judged by the good-tree freeze ([`crate::routing::good_tree`]).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FreezeLink {
    /// When (simulated seconds): the freeze, or later for a node frozen once its path led to
    /// the sink.
    pub t_s: f64,
    /// The sink whose tree it is.
    pub sink: u16,
    /// The node.
    pub node: u16,
    /// Its parent before (for a kept link, its parent).
    pub parent: u16,
    /// The expected share of frames of the link to `parent` (the lower direction).
    pub quality: f64,
    /// The new parent (a move only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_parent: Option<u16>,
    /// The expected share of the link to `new_parent` (a move only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_quality: Option<f64>,
}

/// One flow's figures.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    /// Flow id.
    pub id: u32,
    /// Source node.
    pub source: u16,
    /// Sink node.
    pub sink: u16,
    /// Packets the application generated.
    pub generated: u64,
    /// Packets handed to the network: those the transport accepted (RCRT, reliable); best
    /// effort and IFRC: every packet generated while the flow was active, including those the
    /// source's full queue refused (counted as queue drops, so they lower the delivery ratio).
    pub originated: u64,
    /// Unique packets delivered.
    pub delivered: u64,
    /// Delivered packets per second of the flow's active time.
    pub goodput_pps: f64,
    /// delivered / originated; `None` (null, an empty CSV field) when nothing was originated.
    pub delivery_ratio: Option<f64>,
    /// Mean end-to-end delay, ms; `None` when nothing was delivered.
    pub mean_delay_ms: Option<f64>,
    /// Mean hops of delivered packets; `None` when nothing was delivered.
    pub mean_hops: Option<f64>,
    /// RCRT: packets of this flow repaired end to end (unique retransmissions received).
    pub e2e_repaired: Option<u64>,
    /// RCRT: every originated packet reached the sink application exactly once and in order
    /// (checked by the simulator, not taken from the sink).
    pub in_order_exactly_once: Option<bool>,
    /// RCRT: the last rate the sink allocated to this flow, pkt/s.
    pub last_rate_pps: Option<f64>,
    /// RCRT: the sink's smoothed RTT of this flow at the end of the run, ms (if the flow is
    /// still known to the sink and has an RTT sample).
    pub rtt_ms: Option<f64>,
    /// RCRT: the sink's congestion level C_i at the end of the run.
    pub congestion: Option<f64>,
    /// RCRT: feedback packets the sink sent to this flow (SYN-ACKs excluded).
    pub feedback_packets: Option<u64>,
    /// RCRT: decreases of the total rate this flow's congestion level triggered.
    pub decreases_triggered: Option<u64>,
    /// Parent changes of the source as the sink sees them: delivered packets whose source's
    /// parent (at origination) differs from the previous delivered packet's. The RCRT authors'
    /// test harness wrote the parent into every data packet (docs/rcrt.md, finding H).
    pub parent_changes_seen: u64,
    /// Rate-controlled agents (IFRC): time average of the source node's controller rate r_i
    /// over the flow's active time, pkt/s (the origination rate is w_i·r_i).
    pub mean_rate_pps: Option<f64>,
}

/// The columns of `flows.csv`: [`FlowSummary`]'s fields, in order (written by hand only when
/// there is no flow to take them from; a test checks them against the serialised struct).
pub const FLOW_CSV_COLUMNS: [&str; 19] = [
    "id",
    "source",
    "sink",
    "generated",
    "originated",
    "delivered",
    "goodput_pps",
    "delivery_ratio",
    "mean_delay_ms",
    "mean_hops",
    "e2e_repaired",
    "in_order_exactly_once",
    "last_rate_pps",
    "rtt_ms",
    "congestion",
    "feedback_packets",
    "decreases_triggered",
    "parent_changes_seen",
    "mean_rate_pps",
];

/// Network-wide totals.
#[derive(Clone, Debug, Serialize)]
pub struct Totals {
    /// Packets originated, summed over the flows ([`FlowSummary::originated`]): those handed to
    /// the network. Not the packets generated: under RCRT (and the reliable baseline) the
    /// applications generate more than their transport accepts.
    pub originated: u64,
    /// Unique packets delivered.
    pub delivered: u64,
    /// delivered / originated.
    pub delivery_ratio: f64,
    /// Mean per-flow goodput, packets/s, over the flows that started before the end (as are
    /// the minimum, the maximum and Jain's index).
    pub mean_goodput_pps: f64,
    /// Smallest per-flow goodput.
    pub min_goodput_pps: f64,
    /// Largest per-flow goodput.
    pub max_goodput_pps: f64,
    /// Data frames on the air (each attempt).
    pub data_frames: u64,
    /// Beacon frames on the air.
    pub beacon_frames: u64,
    /// ACKs sent by receivers, plus the false ACKs drawn for frames lost at their destination
    /// (`radio.false_ack_prob`).
    pub ack_frames: u64,
    /// Queue-full drops.
    pub queue_drops: u64,
    /// Packets the MAC gave up: after the last link retransmission (`retries_exhausted` in the
    /// trace), or after finding the channel busy too many times in a row under CSMA-CA
    /// (`channel_access`).
    pub mac_drops: u64,
    /// Packets sent without a route.
    pub no_route_drops: u64,
    /// Packets dropped for a routing loop or an expired TTL.
    pub loop_ttl_drops: u64,
    /// Duplicates suppressed in the network.
    pub duplicates_suppressed: u64,
    /// Malformed frames dropped.
    pub malformed_frames: u64,
    /// RCRT: feedback packets sent by all sinks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback_packets: Option<u64>,
    /// RCRT: decreases of the total rate triggered by congestion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion_decreases: Option<u64>,
    /// RCRT: feedback packets sent, by the trigger that queued them (new_loss, rate_differs,
    /// duplicate, ack_request, decrease, fin, timer), all sinks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback_by_trigger: Option<std::collections::BTreeMap<String, u64>>,
    /// RCRT: flows the sinks released after their idle timeout (paper profile; the reference
    /// code has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_expired: Option<u64>,
    /// RCRT: released flows that their source's datagrams brought back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_revived: Option<u64>,
    /// RCRT: flows abandoned for a new incarnation of their source (a SYN with a new nonce).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_replaced: Option<u64>,
    /// Jain's fairness index of the per-flow goodputs (1 = all equal).
    pub goodput_jain_index: f64,
    /// Protocol-specific counters summed over all nodes' agents (IFRC: halvings, sharing
    /// constraints, base-station control packets, …).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub protocol_counters: std::collections::BTreeMap<String, u64>,
    /// Invariant checks (all must be 0).
    pub invariant_violations: Invariants,
}

/// Counters of broken invariants; every one must be zero.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Invariants {
    /// Packets delivered twice to a sink application.
    pub duplicate_deliveries: u64,
    /// Packets delivered that were never originated.
    pub phantom_deliveries: u64,
    /// Queue found above its bound.
    pub queue_overflows: u64,
    /// Nodes whose accepted-frame and send_done counts differ by more than the one in flight.
    pub send_done_mismatch: u64,
    /// Reliable transports: packets handed to the sink application out of order.
    pub out_of_order_deliveries: u64,
    /// Reliable transports: datagrams the node refused for good (too long for a frame).
    pub datagrams_refused: u64,
    /// Reliable transports whose sink never gives up a packet (RCRT's paper profile, the
    /// reliable baseline): packets behind the highest one handed to the application that were
    /// never handed up, i.e. skipped for good. (The reference-code profile's give-up rule skips
    /// packets by design; they are not counted.)
    pub skipped_deliveries: u64,
}

/// One row of the network time series.
#[derive(Clone, Debug, Serialize)]
pub struct NetSample {
    /// End of the bin, s.
    pub t_s: f64,
    /// Deepest routed node.
    pub max_depth: u32,
    /// Mean depth of routed nodes.
    pub mean_depth: f64,
    /// Routed non-sink nodes.
    pub routed: usize,
    /// Cumulative parent changes.
    pub parent_changes: u64,
    /// Packets delivered in the bin, all flows.
    pub delivered: u64,
    /// Sum of queue lengths.
    pub queued: usize,
}

/// Everything a run produced.
pub struct RunResult {
    /// Headline numbers.
    pub summary: Summary,
    /// Network time series.
    pub series: Vec<NetSample>,
    /// Node positions.
    pub positions: Vec<Position>,
    /// The network at the end (per-node stats, parents, flows).
    pub network: Network,
    /// Time-series bin width.
    pub bin: Duration,
    /// Each node's parent changes before the first flow started (all of them when no flow
    /// started within the run), so that `node_stats(i).parent_changes` minus this is the
    /// node's count during traffic.
    pub parent_changes_before_traffic: Vec<u32>,
    /// What the run found questionable in its inputs once it built them (e.g. a static tree's
    /// edge without a radio link), for the command line to print.
    pub warnings: Vec<String>,
    /// The trace files the run wrote into [`RunOptions::out_dir`], under their temporary names
    /// (or as streams): the caller moves them into place with
    /// [`crate::output::publish_trace_files`] once it has written the run's other files.
    pub trace_files: Vec<TraceFile>,
}

/// Options of one run.
pub struct RunOptions<'a> {
    /// Override the scenario's seed.
    pub seed: Option<u64>,
    /// Directory for the trace and pcap files (when the scenario asks for them), which the run
    /// writes under temporary names ([`RunResult::trace_files`]).
    pub out_dir: Option<PathBuf>,
    /// Called with the fraction done, about every simulated bin.
    pub progress: Option<&'a mut dyn FnMut(f64)>,
}

/// Build the positions, links and noise of a scenario (shared by `run` and tools).
pub fn build_topology(sc: &Scenario) -> Result<(Vec<Position>, Links, NoiseModel), RunError> {
    topology_of(sc).map_err(|e| locate(sc, e))
}

/// A [`RunError::Config`] or [`RunError::Input`] named after the scenario and the field's line.
fn locate(sc: &Scenario, e: RunError) -> RunError {
    match e {
        RunError::Config(m) => RunError::Config(sc.locate(m)),
        RunError::Input(m) => RunError::Input(sc.locate(m)),
        e => e,
    }
}

/// The file the path field `key` names, or an input error naming the field.
fn data_file(sc: &Scenario, key: &str, p: &str) -> Result<PathBuf, RunError> {
    sc.resolve(key, p).map_err(RunError::Input)
}

fn topology_of(sc: &Scenario) -> Result<(Vec<Position>, Links, NoiseModel), RunError> {
    let mut prng = stream(sc.topology.seed, 0, 0, Purpose::Placement);
    let layout = match &sc.topology.layout {
        crate::topology::Placement::File { path } => crate::topology::Placement::File {
            path: data_file(sc, "topology.layout.path", path)?.to_string_lossy().into_owned(),
        },
        other => other.clone(),
    };
    let positions = place(&layout, Path::new(""), &mut prng, sc.radio.link.d0_m).map_err(|e| {
        let key = if matches!(layout, crate::topology::Placement::File { .. }) {
            "topology.layout.path"
        } else {
            "topology.layout"
        };
        match e {
            // A message that names its key already (`topology.layout.spacing_m = 0: …`) is said
            // as it is, so that the key's own line (or `--set`) is found for it.
            crate::topology::TopologyError::Invalid(m) if m.starts_with("topology.layout.") => RunError::Input(m),
            e => RunError::Input(format!("{key}: {e}")),
        }
    })?;
    let noise_cfg = match &sc.radio.noise {
        NoiseConfig::Cpm { trace, history, reset_gap_s, max_samples } => NoiseConfig::Cpm {
            trace: data_file(sc, "radio.noise.trace", trace)?.to_string_lossy().into_owned(),
            history: *history,
            reset_gap_s: *reset_gap_s,
            max_samples: *max_samples,
        },
        NoiseConfig::Replay { trace } => {
            NoiseConfig::Replay { trace: data_file(sc, "radio.noise.trace", trace)?.to_string_lossy().into_owned() }
        }
        other => other.clone(),
    };
    let noise = NoiseModel::new(&noise_cfg, Path::new("")).map_err(|e| {
        // A parameter's message names its key (and so finds its line in the file).
        let m = e.to_string();
        RunError::Input(if m.starts_with("radio.noise.") { m } else { format!("radio.noise: {m}") })
    })?;
    let min_rx = noise.min_dbm() - sc.radio.prune_margin_db;
    let links = match &sc.topology.gains_file {
        Some(g) => {
            // Ids beyond the layout are refused with their line, a file naming fewer nodes as a
            // whole.
            let mut links = read_tossim_gains(&data_file(sc, "topology.gains_file", g)?, Some(positions.len()))
                .map_err(|e| RunError::Input(format!("topology.gains_file: {e}")))?;
            // A gain file holds gains without the transmit power (TOSSIM's convention): every
            // node transmits at the scenario's power (`wsn gains` and back give the same links,
            // bit for bit, and so do the noise offsets with the header's `noise_floor_dbm`).
            links.tx_power_dbm = vec![sc.radio.link.tx_power_dbm; links.n()];
            links
        }
        // The cut-off follows each receiver's noise offset when its noise carries one.
        None if sc.radio.noise_offsets => {
            generate_links_per_receiver(&positions, &sc.radio.link, sc.topology.seed, min_rx)
                .map_err(|e| RunError::Input(e.to_string()))?
        }
        None => generate_links(&positions, &sc.radio.link, sc.topology.seed, min_rx)
            .map_err(|e| RunError::Input(e.to_string()))?,
    };
    Ok((positions, links, noise))
}

/// A network built from a scenario, ready to run.
pub(crate) struct Prepared {
    pub(crate) net: Network,
    positions: Vec<Position>,
    preset: String,
    seed: u64,
    end: Instant,
    bin: Duration,
    warnings: Vec<String>,
    trace_files: Vec<TraceFile>,
}

/// Check a scenario as far as it can be without running it: build its network (reading every
/// data file it names) and install its protocol. Errors name the scenario, the field and, for
/// keys written in the file, the line, as [`run`]'s do.
/// Returns what the run would warn about ([`RunResult::warnings`]).
pub fn check(sc: &Scenario, seed: Option<u64>) -> Result<Vec<String>, RunError> {
    prepare(sc, seed, None).map(|p| p.warnings).map_err(|e| locate(sc, e))
}

/// Simulated time between two checks that the trace files are still being written: a run whose
/// write to `trace.csv` or `frames.pcap` failed stops within this much more simulated time, in
/// the warm-up as later (every stretch of the run goes through [`run_checked`]).
const WRITE_CHECK_STEP: Duration = Duration::from_secs(1);

/// Run a scenario to its end; a failed write to the trace files stops it early, with an error
/// that names the file (and the unfinished trace files it leaves, [`RunError::TraceLeft`]).
/// The trace files are written under temporary names: see [`RunResult::trace_files`].
pub fn run(sc: &Scenario, opts: RunOptions<'_>) -> Result<RunResult, RunError> {
    let Prepared { mut net, positions, preset, seed, end, bin, warnings, trace_files } =
        prepare(sc, opts.seed, opts.out_dir.as_deref()).map_err(|e| locate(sc, e))?;
    let traffic_start = net.flows().iter().map(|f| f.start).min().unwrap_or(end);
    let wall = WallInstant::now();
    let Simulated { series, changes_at_traffic_start, max_depth_seen } =
        simulate(&mut net, end, bin, traffic_start, opts.progress);
    net.close_queue_bins();
    let wall_seconds = wall.elapsed().as_secs_f64();
    // After a failed write (the loop stopped there), the error, naming the file and what is left.
    let sha = net.tracer.finish().map_err(|e| {
        let left: Vec<PathBuf> =
            trace_files.iter().filter(|f| f.is_partial() && f.written.exists()).map(|f| f.written.clone()).collect();
        if left.is_empty() {
            RunError::from(e)
        } else {
            RunError::TraceLeft { source: Box::new(e.into()), left }
        }
    })?;
    let mut depths_during: Vec<u32> =
        series.iter().filter(|s| s.t_s > traffic_start.as_secs_f64()).map(|s| s.max_depth).collect();
    depths_during.sort_unstable();
    let pct = |q: usize| depths_during.get(depths_during.len() * q / 100).copied().unwrap_or(0);
    let before = changes_at_traffic_start.unwrap_or_else(|| node_parent_changes(&net));
    let mut summary = summarize(
        sc,
        seed,
        &preset,
        &net,
        wall_seconds,
        sha,
        max_depth_seen,
        // No traffic within the run: no parent change happened during traffic.
        before.iter().map(|&c| u64::from(c)).sum(),
    );
    summary.routing.median_max_depth = pct(50);
    summary.routing.max_depth_p10_p90 = [pct(10), pct(90)];
    Ok(RunResult {
        summary,
        series,
        positions,
        network: net,
        bin,
        parent_changes_before_traffic: before,
        warnings,
        trace_files,
    })
}

/// What [`simulate`] saw on the way.
struct Simulated {
    /// One sample per bin run to its end.
    series: Vec<NetSample>,
    /// Each node's parent changes when traffic started (`None`: the run stopped before).
    changes_at_traffic_start: Option<Vec<u32>>,
    /// Deepest tree sampled.
    max_depth_seen: u32,
}

/// Run `net` to `end` bin by bin, sampling each bin and noting the parent changes when the
/// traffic starts; stops early after a failed write to the trace files (every stretch of
/// simulated time runs through [`run_checked`]), leaving the error in the tracer.
fn simulate(
    net: &mut Network,
    end: Instant,
    bin: Duration,
    traffic_start: Instant,
    mut progress: Option<&mut dyn FnMut(f64)>,
) -> Simulated {
    let mut sim = Simulated { series: Vec::new(), changes_at_traffic_start: None, max_depth_seen: 0 };
    let mut t = Instant::ZERO;
    let mut last_delivered = 0u64;
    while t < end {
        let next = (t + bin).min(end);
        if sim.changes_at_traffic_start.is_none() && next > traffic_start {
            if run_checked(net, traffic_start).is_err() {
                break;
            }
            sim.changes_at_traffic_start = Some(node_parent_changes(net));
        }
        if run_checked(net, next).is_err() {
            break;
        }
        t = next;
        let s = sample(net, t, &mut last_delivered);
        sim.max_depth_seen = sim.max_depth_seen.max(s.max_depth);
        sim.series.push(s);
        if let Some(p) = progress.as_mut() {
            p(t.as_nanos() as f64 / end.as_nanos().max(1) as f64);
        }
    }
    sim
}

/// A write to `trace.csv` or `frames.pcap` failed ([`Tracer::failed`]).
#[derive(Debug)]
struct WriteFailed;

/// `net.run_until(until)` in steps of at most [`WRITE_CHECK_STEP`], so that a failed write to
/// the trace files stops the run soon, however far `until` is: returns [`WriteFailed`] after the
/// first step in which a write failed (or before any step, if one had already). `run_until` runs
/// the same events in the same order however the time is cut: the trace does not change.
fn run_checked(net: &mut Network, until: Instant) -> Result<(), WriteFailed> {
    // `run_until` goes no further than the end.
    let until = until.min(net.end());
    loop {
        if net.tracer.failed() {
            return Err(WriteFailed);
        }
        if net.now() >= until {
            return Ok(());
        }
        net.run_until((net.now() + WRITE_CHECK_STEP).min(until));
    }
}

/// Why the tree edge `child → parent` cannot carry traffic, if it cannot: a direction without a
/// link (outside the neighbour cut-off, or absent from a gain file), or one the receiver can
/// never decode: its power stays below the receiver's quietest noise plus the reception curve's
/// SINR floor `floor_db` (the channel's "hopeless" links, `network::sinr_floor_db`). Both
/// directions count: data goes up, MAC ACKs and the transport's feedback come down.
fn tree_edge_fault(
    links: &Links,
    noise: &NoiseModel,
    offsets: bool,
    floor_db: f64,
    child: usize,
    parent: usize,
) -> Option<String> {
    let mut faults = Vec::new();
    for (from, to, dir) in [(child, parent, "up"), (parent, child, "down")] {
        match links.gain(from, to) {
            None => faults.push(format!("no link {dir}")),
            Some(g) => {
                let rx = links.tx_power_dbm.get(from).copied().unwrap_or(0.0) + f64::from(g);
                let quietest =
                    noise.min_dbm() + if offsets { links.noise_offset_db.get(to).copied().unwrap_or(0.0) } else { 0.0 };
                if rx < quietest + floor_db {
                    faults.push(format!(
                        "{dir} {rx:.1} dBm, never decodable: the quietest noise {quietest:.1} dBm needs {:.1} dBm",
                        quietest + floor_db
                    ));
                }
            }
        }
    }
    (!faults.is_empty()).then(|| format!("({})", faults.join("; ")))
}

pub(crate) fn prepare(sc: &Scenario, seed: Option<u64>, out_dir: Option<&Path>) -> Result<Prepared, RunError> {
    let seed = seed.unwrap_or(sc.seed);
    let mac = sc.mac().map_err(RunError::Config)?;
    let (positions, links, noise) = topology_of(sc)?;
    let n = positions.len();
    let mut warnings = Vec::new();
    if let Some(g) = &sc.topology.gains_file {
        // A gain file's links are all kept (spec §2.3 REC 1's "no pruning", for TOSSIM
        // equivalence): the margin has nothing to act on.
        if sc.radio.prune_margin_db != crate::scenario::default_prune_margin_db() {
            warnings.push(format!(
                "radio.prune_margin_db = {} has no effect with topology.gains_file = {g:?}: every link of a gain \
                 file is kept",
                sc.radio.prune_margin_db
            ));
        }
        // A node no gain line names (left out of the file by a slip) can neither send nor
        // receive: its flows deliver nothing. Said once, with the nodes.
        let mut heard = vec![false; n];
        for l in links.out.iter().flatten() {
            heard[l.to as usize] = true;
        }
        let isolated: Vec<String> =
            (0..n).filter(|&i| links.out[i].is_empty() && !heard[i]).map(|i| i.to_string()).collect();
        if !isolated.is_empty() {
            warnings.push(format!(
                "topology.gains_file = {g:?}: no gain line to or from node{} {}{}: {} can neither send nor receive \
                 (left out of the file?)",
                if isolated.len() == 1 { "" } else { "s" },
                isolated.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                if isolated.len() > 8 { ", …" } else { "" },
                if isolated.len() == 1 { "it" } else { "they" }
            ));
        }
        // A file `wsn gains --fold-tx-power` wrote holds the power in its gains already: read at
        // a non-zero power, the power would count twice (the header line says how it was written).
        if sc.radio.link.tx_power_dbm != 0.0 {
            let path = data_file(sc, "topology.gains_file", g)?;
            let folded = crate::read_text(&path).is_ok_and(|t| crate::topology::gain_file_marked_folded(&t));
            if folded {
                warnings.push(format!(
                    "topology.gains_file = {g:?} was written with the transmit power folded into its gains \
                     (wsn gains --fold-tx-power), but radio.link.tx_power_dbm = {}: the power counts twice; set \
                     radio.link.tx_power_dbm = 0, or export without --fold-tx-power",
                    sc.radio.link.tx_power_dbm
                ));
            }
        }
    } else if let crate::topology::Placement::File { path } = &sc.topology.layout {
        // Nodes closer than D0 get the path loss at D0; a repeated coordinate row is the usual
        // slip. (LinkLayerModel refuses such a layout; we run it and say so.)
        let d0 = sc.radio.link.d0_m;
        let (count, pairs) = crate::topology::close_pairs(&positions, d0, 8);
        if count > 0 {
            let shown: Vec<String> = pairs.iter().map(|(i, j)| format!("{i}–{j}")).collect();
            warnings.push(format!(
                "topology.layout.path {path:?}: {count} pairs of nodes sit closer than D0 = {d0} m ({}{}): they get \
                 the path loss at D0 (a node placed twice?)",
                shown.join(", "),
                if count > pairs.len() { ", …" } else { "" }
            ));
        }
    }
    let sinks: Vec<NodeId> = sc.topology.sinks.iter().map(|&s| NodeId(s)).collect();
    for s in &sinks {
        if s.index() >= n {
            return Err(RunError::Config(format!("topology.sinks: node {} does not exist ({} nodes)", s.0, n)));
        }
    }
    // RCRT's weights name nodes, as IFRC's do (`ifrc::agent_factory`, same message).
    if let ProtocolConfig::Rcrt(c) | ProtocolConfig::Reliable(c) = &sc.protocol {
        if let Some(k) = c.weights.keys().find(|k| !k.parse::<usize>().is_ok_and(|i| i < n)) {
            return Err(weight_not_a_node(k, n));
        }
    }
    // A weight for a node without a flow (a sink, or a node no flow names) weighs nothing; IFRC
    // refuses a base station's weight, RCRT took it silently.
    if let ProtocolConfig::Rcrt(c) = &sc.protocol {
        use crate::scenario::Sources;
        let is_source = |id: u16| {
            sc.flows.iter().any(|f| match &f.sources {
                Sources::Keyword(_) => !sc.topology.sinks.contains(&id),
                Sources::One(n) => *n == id,
                Sources::List(l) => l.contains(&id),
            })
        };
        for id in c.weights.keys().filter_map(|k| k.parse::<u16>().ok()).filter(|&id| !is_source(id)) {
            let why = if sc.topology.sinks.contains(&id) {
                "a sink and the source of no flow"
            } else {
                "not the source of any flow"
            };
            warnings.push(format!("protocol.weights.{id}: node {id} is {why}; its weight has no effect"));
        }
    }
    let static_parents = match sc.routing.kind {
        RoutingKind::Mhlqi => None,
        RoutingKind::Static => {
            let path = sc.routing.tree_file.as_ref().ok_or_else(|| {
                RunError::Config("routing.tree_file is required with routing.kind = \"static\"".into())
            })?;
            if sinks.len() != 1 {
                return Err(RunError::Config(format!(
                    "topology.sinks names {} sinks: routing.kind = \"static\" reads one tree, so it supports exactly \
                     one sink",
                    sinks.len()
                )));
            }
            let tree = read_tree(&data_file(sc, "routing.tree_file", path)?)
                .map_err(|e| RunError::Input(format!("routing.tree_file: {e}")))?;
            if tree.len() != n {
                return Err(RunError::Config(format!(
                    "routing.tree_file = {path:?}: the tree has {} nodes, the topology {n} (one row per node, ids 0 to {})",
                    tree.len(),
                    n - 1
                )));
            }
            // The tree's one root must be the sink: another root would be a dead end that still
            // reports a hop count.
            let roots: Vec<usize> = (0..n).filter(|&i| tree.parent[i].is_none()).collect();
            if roots != [sinks[0].index()] {
                let roots: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
                return Err(RunError::Config(format!(
                    "routing.tree_file: the tree's root must be the sink, node {}, alone; its roots (parent -1) are [{}]",
                    sinks[0].0,
                    roots.join(", ")
                )));
            }
            // Edges the radio cannot carry, and paths longer than the TTL lets a packet go: the
            // tree is read as given, but its packets will be lost there.
            let unusable: Vec<String> = (0..n)
                .filter_map(|i| tree.parent[i].map(|p| (i, p.index())))
                .filter_map(|(i, p)| {
                    let floor_db = crate::network::sinr_floor_db(sc.radio.prr_curve);
                    tree_edge_fault(&links, &noise, sc.radio.noise_offsets, floor_db, i, p).map(|f| (i, p, f))
                })
                .map(|(i, p, f)| format!("{i}→{p} {f}"))
                .collect();
            if !unusable.is_empty() {
                warnings.push(format!(
                    "routing.tree_file: {} cannot carry traffic both ways ({}{}): data goes up an edge and its MAC \
                     ACKs and the transport's feedback come down it, so those nodes' packets will be lost there",
                    if unusable.len() == 1 {
                        "1 tree edge".to_string()
                    } else {
                        format!("{} tree edges", unusable.len())
                    },
                    unusable.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                    if unusable.len() > 8 { ", …" } else { "" }
                ));
            }
            let deepest = tree.hops.iter().copied().max().unwrap_or(0);
            if u32::from(deepest) > u32::from(sc.routing.ttl) + 1 {
                warnings.push(format!(
                    "routing.tree_file: the tree is {deepest} hops deep, more than routing.ttl + 1 = {} hops a packet \
                     may travel: the deepest nodes' packets expire on the way",
                    u32::from(sc.routing.ttl) + 1
                ));
            }
            Some(vec![(0..n).map(|i| (tree.parent[i], tree.hops[i])).collect()])
        }
        RoutingKind::Shortest => Some(
            sinks
                .iter()
                .map(|&s| shortest_tree(&links, s, sc.radio.link.noise_floor_dbm + sc.routing.shortest_snr_db))
                .collect(),
        ),
    };
    let end = Instant::ZERO + Duration::from_secs_f64(sc.duration_s);
    let mut flows = Vec::new();
    // The `[[flows]]` entry of each flow (an entry with several sources gives several flows).
    let mut flow_entry = Vec::new();
    // The reference code's header extension (`protocol.slow_start_rule = "ss_thresh"` under the
    // reference-code profile) goes on the air beyond the preset's bound (see `crate::ifrc`), but
    // every frame must still fit an 802.15.4 frame.
    let code_ext = match &sc.protocol {
        ProtocolConfig::Ifrc(c) => crate::ifrc::config(c, &mac)?.code_header(),
        _ => false,
    };
    for (k, f) in sc.flows.iter().enumerate() {
        let sink = NodeId(f.sink.unwrap_or(sc.topology.sinks[0]));
        let sources: Vec<u16> = match &f.sources {
            Sources::Keyword(_) => (0..n as u16).filter(|i| !sc.topology.sinks.contains(i)).collect(),
            Sources::One(s) => vec![*s],
            Sources::List(l) => l.clone(),
        };
        // Best effort: collection + 6-byte header + payload. RCRT: collection + 8-byte DATA
        // header + payload (whose first 6 bytes carry the simulator's flow/sequence check).
        // IFRC: collection + 12-byte IFRC header + 6-byte flow/sequence header + payload.
        let (hdr, what) = match sc.protocol {
            ProtocolConfig::BestEffort => (wsn_wire::besteffort::HEADER_LEN, "6-byte best-effort"),
            ProtocolConfig::Ifrc(_) => (
                crate::ifrc::IFRC_HEADER_LEN + wsn_wire::besteffort::HEADER_LEN,
                "12-byte IFRC and 6-byte flow/sequence",
            ),
            _ => (wsn_wire::rcrt::DATA_HEADER_LEN, "8-byte RCRT DATA"),
        };
        // RCRT's payload carries the simulator's 6-byte flow/sequence check (below).
        let min_payload = match sc.protocol {
            ProtocolConfig::Rcrt(_) | ProtocolConfig::Reliable(_) => wsn_wire::besteffort::HEADER_LEN,
            _ => 0,
        };
        let frame = wsn_wire::collection::HEADER_LEN + hdr + f.payload_bytes;
        if frame > mac.max_payload {
            // What would fit (a flow that leaves `payload_bytes` out has 64, which the IFRC
            // preset's 32-byte frames cannot hold).
            let headers = wsn_wire::collection::HEADER_LEN + hdr;
            let fits = match mac.max_payload.checked_sub(headers) {
                Some(room) if room >= min_payload => format!("the most that fits is payload_bytes = {room}"),
                _ if min_payload > 0 => format!(
                    "not even the smallest payload fits ({min_payload} bytes): the frame needs mac.max_payload ≥ {}",
                    headers + min_payload
                ),
                _ => format!("not even an empty payload fits: the headers need mac.max_payload ≥ {headers}"),
            };
            return Err(RunError::Config(format!(
                "flows[{k}].payload_bytes = {}: with the 14-byte collection and {what} headers \
                 the frame payload is {frame} bytes, above mac.max_payload = {} of preset {}; {fits}",
                f.payload_bytes, mac.max_payload, mac.preset
            )));
        }
        if code_ext {
            let with_ext = frame + wsn_wire::ifrc::EXT_LEN;
            let most = wsn_wire::ieee802154::MAX_PAYLOAD_LEN.min(133 - mac.overhead_bytes as usize);
            if with_ext > most {
                return Err(RunError::Config(format!(
                    "flows[{k}].payload_bytes = {}: with the reference code's 10-byte IFRC header extension \
                     (protocol.slow_start_rule = \"ss_thresh\") the frame payload is {with_ext} bytes, above \
                     the {most} an 802.15.4 frame carries with preset {}",
                    f.payload_bytes, mac.preset
                )));
            }
        }
        if f.payload_bytes < min_payload {
            return Err(RunError::Config(format!("flows[{k}].payload_bytes must be ≥ {min_payload} for RCRT flows")));
        }
        // Sources that the shortest-path tree leaves without a route to the flow's sink. (A tree
        // without any link has a warning of its own, "no node ever had a route".)
        let mut unrouted = Vec::new();
        let any_link = static_parents.iter().flatten().flatten().any(|p| p.0.is_some());
        for s in sources {
            if s as usize >= n {
                return Err(RunError::Config(format!("flows[{k}].sources: node {s} does not exist ({n} nodes)")));
            }
            if s == sink.0 {
                return Err(RunError::Config(format!(
                    "flows[{k}].sources: node {s} cannot send to itself (it is the flow's sink)"
                )));
            }
            if matches!(sc.routing.kind, RoutingKind::Shortest) && any_link {
                let tree = sinks.iter().position(|&x| x == sink).and_then(|t| static_parents.as_ref()?.get(t));
                if tree.is_some_and(|tree| tree[s as usize].0.is_none()) {
                    unrouted.push(s.to_string());
                }
            }
            // An IFRC base station runs the base-station role: it originates nothing.
            if matches!(sc.protocol, ProtocolConfig::Ifrc(_)) && sc.topology.sinks.contains(&s) {
                return Err(RunError::Config(format!(
                    "flows[{k}].sources: node {s} is a base station, which originates nothing under IFRC"
                )));
            }
            flow_entry.push(k);
            flows.push(FlowSpec {
                source: NodeId(s),
                sink,
                // Unused under IFRC (its rate controller paces the flow).
                rate_pps: f.rate_pps.unwrap_or(1.0),
                start: Instant::ZERO + Duration::from_secs_f64(f.start_s),
                stop: f.stop_s.map_or(end, |s| Instant::ZERO + Duration::from_secs_f64(s)),
                count: f.count,
                payload_bytes: f.payload_bytes,
                random_phase: f.random_phase,
                demand_pps: f.demand_pps,
            });
        }
        if !unrouted.is_empty() {
            let (who, verb) = if unrouted.len() == 1 { ("node", "has") } else { ("nodes", "have") };
            warnings.push(format!(
                "flows[{k}]: {who} {} {verb} no path to sink {} in the routing.kind = \"shortest\" tree (links at \
                 least routing.shortest_snr_db = {} dB above the noise floor both ways): {} deliver nothing",
                if unrouted.len() > 8 {
                    format!("{}, … ({} in all)", unrouted[..8].join(", "), unrouted.len())
                } else {
                    unrouted.join(", ")
                },
                sink.0,
                crate::scenario::short_num(sc.routing.shortest_snr_db),
                if unrouted.len() == 1 { "its flow will" } else { "their flows will" },
            ));
        }
    }
    // The flow id travels in 16 bits (the best-effort header's `flow`): more flows would alias.
    if flows.len() > usize::from(u16::MAX) + 1 {
        return Err(RunError::Config(format!(
            "flows: {} flows in all (every source of every [[flows]] entry), more than the 65,536 a \
             packet's 16-bit flow id can name",
            flows.len()
        )));
    }
    if matches!(sc.protocol, ProtocolConfig::Ifrc(_)) {
        // A node's IFRC agent runs on one tree and gives each of its rate slots to the first
        // flow (in file order) that is active and has packets left: a later flow at the same
        // time would never send unless the earlier one has a packet count (it then goes on
        // when that count is generated); a flow to another sink never would.
        // Pairs of flows from the same node only (grouped, not all pairs: `sources = "all"`
        // gives one flow per node).
        let mut by_node: std::collections::BTreeMap<NodeId, Vec<usize>> = std::collections::BTreeMap::new();
        for (k, f) in flows.iter().enumerate() {
            by_node.entry(f.source).or_default().push(k);
        }
        for group in by_node.values() {
            for (x, &a) in group.iter().enumerate() {
                for &b in &group[x + 1..] {
                    let (fa, fb) = (&flows[a], &flows[b]);
                    let (ka, kb) = (flow_entry[a], flow_entry[b]);
                    let which = if ka == kb { format!("flows[{ka}]") } else { format!("flows[{ka}] and flows[{kb}]") };
                    if fa.sink != fb.sink {
                        return Err(RunError::Config(format!(
                            "{which}: node {} sends to sinks {} and {}; an IFRC node sends on one tree",
                            fa.source.0, fa.sink.0, fb.sink.0
                        )));
                    }
                    if fa.start < fb.stop && fb.start < fa.stop && fa.count.is_none() {
                        return Err(RunError::Config(format!(
                            "{which}: node {} has two IFRC flows at the same time; its rate controller \
                         paces one flow per node (give them disjoint start_s … stop_s, or the first a count)",
                            fa.source.0
                        )));
                    }
                }
            }
        }
    }
    let mut outages = Vec::new();
    for (k, o) in sc.outages.iter().enumerate() {
        let from = Instant::ZERO + Duration::from_secs_f64(o.from_s);
        let to = o.to_s.map_or(end, |t| Instant::ZERO + Duration::from_secs_f64(t).min(end - Instant::ZERO));
        for id in o.nodes.ids() {
            if usize::from(id) >= n {
                return Err(RunError::Config(format!("outages[{k}].nodes: node {id} does not exist ({n} nodes)")));
            }
            outages.push((usize::from(id), from, to));
        }
    }
    let bin = Duration::from_secs_f64(sc.output.timeseries_bin_s);
    let agent_factory = match &sc.protocol {
        ProtocolConfig::Ifrc(c) => {
            // Each node sends on the tree of its first flow's sink; a node without a flow follows
            // the best-path sink's tree.
            let mut node_sink = vec![None; n];
            for f in flows.iter().rev() {
                node_sink[f.source.index()] = Some(f.sink);
            }
            // The first flow's start (0 without flows): where the reference-code profile's
            // rate control begins.
            let first = flows.iter().map(|f| f.start).min().unwrap_or(Instant::ZERO);
            Some(crate::ifrc::agent_factory(c, &mac, &node_sink, &sinks, first)?)
        }
        _ => None,
    };
    let spec = NetworkSpec {
        seed,
        duration: end - Instant::ZERO,
        links,
        noise,
        noise_offsets: sc.radio.noise_offsets,
        mac: mac.clone(),
        chan: ChannelOptions {
            prr_length_scaling: sc.radio.prr_length_scaling,
            false_ack_prob: sc.radio.false_ack_prob,
            curve: sc.radio.prr_curve,
            reception: sc.radio.reception,
        },
        sinks: sinks.clone(),
        mhlqi: MhlqiConfig {
            tenet_rules: Some(sc.routing.mhlqi.tenet_rules.unwrap_or_else(|| tenet_era(&mac.preset))),
            ..sc.routing.mhlqi.clone()
        },
        reverse: sc.routing.reverse.clone(),
        static_parents,
        freeze_at: sc.routing.freeze_after_s.map(|s| Instant::ZERO + Duration::from_secs_f64(s)),
        freeze_min_prr: sc.routing.freeze_min_prr.filter(|_| sc.routing.kind == crate::scenario::RoutingKind::Mhlqi),
        flows,
        bin,
        // The trace files are opened once the network is built (below).
        tracer: Tracer::new(),
        agent_factory,
        rate_controlled: matches!(sc.protocol, ProtocolConfig::Ifrc(_)),
        own_slot: matches!(&sc.protocol, ProtocolConfig::Rcrt(c) | ProtocolConfig::Reliable(c) if c.one_datagram_in_flight),
        ttl: sc.routing.ttl,
        hop_dedup: sc.routing.hop_dedup,
        outages,
    };
    let mut net = Network::new(spec);
    match &sc.protocol {
        ProtocolConfig::BestEffort | ProtocolConfig::Ifrc(_) => {}
        ProtocolConfig::Rcrt(c) => {
            net.install_endpoints(&endpoint_spec(c, false, mac.max_payload)?).map_err(RunError::Config)?
        }
        ProtocolConfig::Reliable(c) => {
            net.install_endpoints(&endpoint_spec(c, true, mac.max_payload)?).map_err(RunError::Config)?
        }
    }
    // Last, once nothing can refuse the scenario any more. The files are written under
    // temporary names, so that an earlier run's trace files stay until this run's caller moves
    // these into place. (Nothing has been recorded yet.)
    let mut trace_files = Vec::new();
    if let Some(dir) = out_dir {
        let wanted = [(TRACE_FILES[0], sc.output.trace), (TRACE_FILES[1], sc.output.pcap)];
        let names: Vec<&'static str> = wanted.iter().filter(|w| w.1).map(|w| w.0).collect();
        let mut tracer = std::mem::take(&mut net.tracer);
        debug_assert_eq!(tracer.events(), 0, "events recorded before the trace files were opened");
        for (f, file) in open_trace_files(dir, &names)? {
            let path = f.written.clone();
            tracer = if f.name == "trace.csv" { tracer.with_csv(path, file)? } else { tracer.with_pcap(path, file)? };
            trace_files.push(f);
        }
        net.tracer = tracer;
    }
    Ok(Prepared { net, positions, preset: mac.preset, seed, end, bin, warnings, trace_files })
}

/// Open the trace files `names` in `dir` for writing, their paths made absolute: each under its
/// temporary name ([`crate::output::partial_name`]; one left there by an earlier run is
/// replaced), except where what stands at the name is not a regular file (a device, a named
/// pipe), which is written to as a stream, as it is. A folder standing at a name is refused
/// before any file is touched; on any failure the files this call created are removed again,
/// and the earlier run's trace files are never touched.
fn open_trace_files(dir: &Path, names: &[&'static str]) -> Result<Vec<(TraceFile, std::fs::File)>, RunError> {
    let output = |path: &Path, source| RunError::Output { path: path.display().to_string(), source };
    let mut plan = Vec::new();
    for &name in names {
        let path = dir.join(name);
        let path = std::path::absolute(&path).unwrap_or(path);
        // What stands at the name, through symbolic links: nothing (or a broken link) and a
        // regular file are replaced once the run is done; a device or a pipe is a stream.
        let written = match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "a folder stands where the file goes");
                return Err(output(&path, e));
            }
            Ok(m) if !m.is_file() => path.clone(),
            _ => path.with_file_name(partial_name(name)),
        };
        plan.push(TraceFile { name, path, written });
    }
    let mut opened: Vec<(TraceFile, std::fs::File)> = Vec::new();
    for f in plan {
        let file = if f.is_partial() {
            // A link standing at the temporary name is removed, not followed.
            match std::fs::remove_file(&f.written) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => std::fs::OpenOptions::new().write(true).create_new(true).open(&f.written),
            }
        } else {
            std::fs::OpenOptions::new().write(true).open(&f.written)
        };
        match file {
            Ok(file) => opened.push((f, file)),
            Err(source) => {
                for (g, _) in opened.iter().filter(|(g, _)| g.is_partial()) {
                    std::fs::remove_file(&g.written).ok();
                }
                return Err(output(&f.written, source));
            }
        }
    }
    Ok(opened)
}

/// Minimum-hop tree toward `sink` over links received at ≥ `min_rx_dbm` in both directions;
/// among equal hop counts the strongest link wins. Unreachable nodes get no parent.
fn shortest_tree(links: &Links, sink: NodeId, min_rx_dbm: f64) -> Vec<(Option<NodeId>, u8)> {
    let n = links.n();
    let rx = |a: usize, b: usize| links.gain(a, b).map(|g| links.tx_power_dbm[a] + g as f64);
    let mut out = vec![(None, u8::MAX); n];
    let mut hops = vec![u32::MAX; n];
    let mut best = vec![f64::NEG_INFINITY; n];
    hops[sink.index()] = 0;
    out[sink.index()] = (None, 0);
    let mut frontier = vec![sink.index()];
    let mut h = 0;
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &p in &frontier {
            for l in &links.out[p] {
                let c = l.to as usize;
                let (Some(down), Some(up)) = (rx(p, c), rx(c, p)) else { continue };
                let q = down.min(up);
                if q < min_rx_dbm || hops[c] < h + 1 {
                    continue;
                }
                if hops[c] == u32::MAX {
                    hops[c] = h + 1;
                    next.push(c);
                }
                if q > best[c] {
                    best[c] = q;
                    out[c] = (Some(NodeId(p as u16)), (h + 1).min(254) as u8);
                }
            }
        }
        next.sort_unstable();
        frontier = next;
        h += 1;
    }
    out
}

/// The endpoints of an RCRT or reliable-baseline run whose MAC frames carry at most
/// `frame_payload` bytes.
/// The invariant counters of a run, summed over its flows and nodes ([`Invariants`]).
fn invariants(net: &Network) -> Invariants {
    let mut inv = Invariants {
        phantom_deliveries: net.unattributed_phantoms,
        datagrams_refused: net.datagrams_refused,
        ..Invariants::default()
    };
    for f in net.flows() {
        inv.duplicate_deliveries += f.duplicate_deliveries;
        inv.phantom_deliveries += f.phantom_deliveries;
        inv.out_of_order_deliveries += f.rcrt.out_of_order;
        let never_gives_up = net.rcrt_sink(f.sink).is_some_and(|s| s.config().give_up_distance.is_none());
        if let (Some(_), Some(last), true) = (f.endpoint, f.rcrt.last_seq, never_gives_up) {
            let behind = f.got.iter().take(last as usize);
            inv.skipped_deliveries += behind.filter(|&&got| !got).count() as u64;
        }
    }
    for i in 0..net.len() {
        let s = net.node_stats(i);
        inv.queue_overflows += s.queue_overflows;
        if s.frames_accepted < s.send_done || s.frames_accepted - s.send_done > 1 {
            inv.send_done_mismatch += 1;
        }
    }
    inv
}

/// `in_order_exactly_once` of an end-to-end flow: complete, and every packet delivered once and in
/// order. Complete: everything generated was originated, or the connection was closed (a flow
/// stopped at stop_s leaves its unsent backlog behind; one that connected too late to send
/// anything closes empty); a flow that originated nothing and did not close is not.
fn complete_in_order(f: &crate::network::Flow) -> bool {
    (f.originated > 0 || f.rcrt.closed_s.is_some())
        && (f.generated == f.originated || f.rcrt.closed_s.is_some())
        && f.delivered == f.originated
        && f.rcrt.out_of_order == 0
        && f.duplicate_deliveries == 0
        && f.phantom_deliveries == 0
}

fn endpoint_spec(c: &RcrtConfig, reliable: bool, frame_payload: usize) -> Result<EndpointSpec, RunError> {
    let profile = match c.profile {
        RcrtProfile::Paper => wsn_proto::rcrt::Profile::Paper,
        RcrtProfile::ReferenceCode => wsn_proto::rcrt::Profile::ReferenceCode,
    };
    let mut e = if reliable { EndpointSpec::reliable(profile) } else { EndpointSpec::rcrt(profile) };
    // What an RCRT datagram may hold behind the collection header. The source takes any
    // application payload whose DATA fits (64 bytes on `tinyos1_tenet`, the paper's); a FEEDBACK
    // carries as many NACK ranges as fit, up to the profile's number [AMBIG → chosen: the code's
    // 10 entries fit its 86-byte frame; a smaller frame carries fewer rather than none]. A frame
    // with room for no NACK range at all cannot run RCRT (the flows' check above already refuses
    // it: the smallest DATA needs as many bytes as a FEEDBACK with one range).
    use wsn_wire::rcrt::{DATA_HEADER_LEN, FEEDBACK_BASE_LEN, NACK_RANGE_LEN};
    let room = frame_payload.saturating_sub(wsn_wire::collection::HEADER_LEN);
    let min = wsn_wire::collection::HEADER_LEN + FEEDBACK_BASE_LEN + NACK_RANGE_LEN;
    if room < FEEDBACK_BASE_LEN + NACK_RANGE_LEN {
        return Err(RunError::Config(format!(
            "mac.max_payload = {frame_payload}: an RCRT FEEDBACK with one NACK range needs a {min}-byte frame \
             payload (14-byte collection header, {FEEDBACK_BASE_LEN}-byte FEEDBACK, {NACK_RANGE_LEN} bytes per range)"
        )));
    }
    e.source.max_payload = room - DATA_HEADER_LEN.min(room);
    e.sink.max_nack_ranges = e.sink.max_nack_ranges.min((room - FEEDBACK_BASE_LEN) / NACK_RANGE_LEN);
    let id = |k: &str, field: &str| {
        k.parse::<u16>().map(NodeId).map_err(|_| RunError::Config(format!("{field}: `{k}` is not a node id")))
    };
    // Every sink gets `policy` unless sink_policies names it; the reliable baseline gives every
    // flow its demand (demand-limited water-filling over R = Σ demands).
    // `"3"` and `"03"` are two keys of a table but one node: refused rather than one kept.
    let twice = |field: &str, node: NodeId| RunError::Config(format!("{field}: two keys name node {}", node.0));
    for (k, p) in &c.sink_policies {
        let node = id(k, "protocol.sink_policies")?;
        if e.policies.iter().any(|(n, _)| *n == node) {
            return Err(twice("protocol.sink_policies", node));
        }
        // (The reliable baseline ignores them, as its `policy` and `policy_changes`: its flows
        // get their demands at every sink; the scenario warns.)
        e.policies.push((node, if reliable { "demand_limited".into() } else { p.clone() }));
    }
    e.default_policy = if reliable { "demand_limited".into() } else { c.policy.clone() };
    for (k, w) in &c.weights {
        let node = id(k, "protocol.weights")?;
        if e.weights.insert(node, *w).is_some() {
            return Err(twice("protocol.weights", node));
        }
    }
    for pc in c.policy_changes.iter().filter(|_| !reliable) {
        e.policy_changes.push((Instant::ZERO + Duration::from_secs_f64(pc.at_s), NodeId(pc.sink), pc.policy.clone()));
    }
    if let Some(f) = c.level_formula {
        e.sink.level_formula = match f {
            RcrtProfile::Paper => wsn_proto::rcrt::estimators::LevelFormula::Paper,
            RcrtProfile::ReferenceCode => wsn_proto::rcrt::estimators::LevelFormula::ReferenceCode,
        };
    }
    if let Some(g) = c.congestion_gain {
        if !(g > 0.0 && g <= 1.0) {
            return Err(RunError::Config(format!("protocol.congestion_gain = {g}: must be in (0, 1]")));
        }
        e.sink.congestion_gain = g;
    }
    e.source.wait_for_send_done = c.one_datagram_in_flight;
    if let Some(f) = c.slow_down_token_floor {
        e.source.slow_down_token_floor = f;
    }
    if let Some(b) = c.buffer_packets {
        e.source.buffer_packets = b;
        e.source.ack_request_above = b / 2;
        if e.source.profile == wsn_proto::rcrt::Profile::Paper {
            // The paper profile's recovery list is as long as the buffer (SourceConfig::
            // recovery_capacity, AMBIG → chosen), so that one feedback can repair every loss it
            // lists; the reference code's list keeps its fixed 10.
            e.source.recovery_capacity = b;
        }
    }
    // A backstop: the keys above are checked where they are read, and the rest are profile
    // defaults.
    e.sink.check().map_err(|err| RunError::Config(format!("RCRT sink configuration: {err}")))?;
    Ok(e)
}

/// The error for a `protocol.weights` key `k` that names no node of an `n`-node topology (RCRT
/// and IFRC say it alike), named by its entry so that the message finds the entry's line.
pub(crate) fn weight_not_a_node(k: &str, n: usize) -> RunError {
    RunError::Config(format!(
        "protocol.weights.{k}: `{k}` is not a node id of this topology (node ids 0 to {})",
        n.saturating_sub(1)
    ))
}

/// Whether a MAC preset is of the TinyOS 1.x / Tenet era, whose MultiHopLQI drops a route on a
/// parent beacon that names no parent (spec §7.2 pairs the 1.x presets with MultiHopLQI-1.x and
/// `tinyos2` with MultiHopLQI-2.x).
pub fn tenet_era(preset: &str) -> bool {
    matches!(preset, "tinyos1_tenet" | "ifrc2006")
}

fn node_parent_changes(net: &Network) -> Vec<u32> {
    (0..net.len()).map(|i| net.node_stats(i).parent_changes).collect()
}

fn total_parent_changes(net: &Network) -> u64 {
    (0..net.len()).map(|i| net.node_stats(i).parent_changes as u64).sum()
}

/// Node `i` has a route in tree `t`: a parent, and a valid hop count (under the 2.x rule a node
/// whose parent lost its own route keeps the parent but advertises no hop count; its packets
/// go nowhere). The one test behind the depths, `routed` and `unrouted_nodes`.
fn is_routed(net: &Network, i: usize, t: usize) -> bool {
    net.parent(i, t).is_some() && net.hop_count(i, t).is_some()
}

/// Node `i`'s parents in tree `t` lead to the tree's sink.
fn reaches_sink(net: &Network, i: usize, t: usize) -> bool {
    leads_to(i, net.sinks()[t].index(), net.len(), |j| net.parent(j, t).map(NodeId::index))
}

/// Following `parent` from node `from` reaches `root` (at most one step per node of `n`: a
/// chain that goes on longer has come round a loop).
fn leads_to(from: usize, root: usize, n: usize, parent: impl Fn(usize) -> Option<usize>) -> bool {
    let mut j = from;
    for _ in 0..=n {
        if j == root {
            return true;
        }
        match parent(j) {
            Some(p) => j = p,
            None => return false,
        }
    }
    false
}

fn depths(net: &Network) -> (u32, f64, usize) {
    let (mut max, mut sum, mut routed) = (0u32, 0u64, 0usize);
    for i in 0..net.len() {
        // A sink is the root of its own tree only: in the other sinks' trees it is a node.
        for ti in (0..net.sinks().len()).filter(|&ti| net.sinks()[ti] != NodeId(i as u16)) {
            if let Some(h) = net.hop_count(i, ti).filter(|_| is_routed(net, i, ti)) {
                max = max.max(h as u32);
                sum += h as u64;
                routed += 1;
            }
        }
    }
    (max, if routed > 0 { sum as f64 / routed as f64 } else { 0.0 }, routed)
}

fn sample(net: &Network, t: Instant, last: &mut u64) -> NetSample {
    let (max_depth, mean_depth, routed) = depths(net);
    let delivered: u64 = net.flows().iter().map(|f| f.delivered).sum();
    let d = delivered - *last;
    *last = delivered;
    NetSample {
        // Divided, not multiplied by 1e-9: a whole second stays whole (120, not
        // 120.00000000000001), as the other binned files print it.
        t_s: t.as_nanos() as f64 / 1e9,
        max_depth,
        mean_depth,
        routed,
        parent_changes: total_parent_changes(net),
        delivered: d,
        queued: (0..net.len()).map(|i| net.queue_len(i)).sum(),
    }
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    sc: &Scenario,
    seed: u64,
    preset: &str,
    net: &Network,
    wall_seconds: f64,
    trace_sha256: String,
    max_depth_seen: u32,
    changes_before_traffic: u64,
) -> Summary {
    let end = net.end();
    let flows: Vec<FlowSummary> = net
        .flows()
        .iter()
        .map(|f| {
            // A flow with a packet count is active until its last delivery once it is done, but
            // at least until its last packet was due (a flow of one packet is not "22 pkt/s"
            // because it arrived fast); otherwise until it stopped or its last delivery, if
            // later (packets in flight at the stop still arrive), or the run ended.
            // - Best effort: done when the application generated the whole count (whether or
            //   not every packet arrived).
            // - End-to-end transports: done when every packet arrived. Their applications
            //   generate far faster than the allocated rate, so a flow that stalls (or is cut
            //   off) long after its last generation was still active, not finished.
            // - IFRC generates on the controller's slots, not at `rate_pps`: no "due" time.
            let due = |c: u64| {
                if net.rate_controlled() {
                    Instant::ZERO
                } else {
                    f.first_tick.max(f.start) + f.interval.saturating_mul(c)
                }
            };
            let until = match f.count {
                Some(c) if f.endpoint.is_some() && f.delivered >= c => f.last_delivery.max(due(c)).min(end),
                Some(c) if f.endpoint.is_none() && f.generated >= c => f.last_delivery.max(due(c)).min(end),
                _ => f.stop.max(f.last_delivery).min(end),
            };
            let active = (until - f.start).as_secs_f64();
            FlowSummary {
                id: f.id,
                source: f.source.0,
                sink: f.sink.0,
                generated: f.generated,
                originated: f.originated,
                delivered: f.delivered,
                goodput_pps: if active > 0.0 { f.delivered as f64 / active } else { 0.0 },
                delivery_ratio: (f.originated > 0).then(|| ratio(f.delivered, f.originated)),
                mean_delay_ms: (f.delivered > 0).then(|| f.delay_sum_ns as f64 / f.delivered as f64 / 1e6),
                mean_hops: (f.delivered > 0).then(|| f.hops_sum as f64 / f.delivered as f64),
                e2e_repaired: f.endpoint.map(|_| {
                    net.rcrt_sink(f.sink)
                        .and_then(|s| s.stats().per_flow.get(&f.source).map(|fs| fs.recovered))
                        .unwrap_or(0)
                }),
                in_order_exactly_once: f.endpoint.map(|_| complete_in_order(f)),
                last_rate_pps: f.rcrt.rates.last().map(|r| r.1),
                rtt_ms: net
                    .rcrt_sink(f.sink)
                    .and_then(|s| s.flow_info(f.source))
                    .and_then(|i| i.rtt)
                    .map(|d| d.as_secs_f64() * 1e3),
                congestion: net.rcrt_sink(f.sink).and_then(|s| s.flow_info(f.source)).map(|i| i.congestion),
                feedback_packets: f.endpoint.map(|_| {
                    net.rcrt_sink(f.sink)
                        .and_then(|s| s.stats().per_flow.get(&f.source).map(|fs| fs.feedback_sent))
                        .unwrap_or(0)
                }),
                decreases_triggered: f.endpoint.map(|_| net.decreases().iter().filter(|d| d.2 == f.id).count() as u64),
                parent_changes_seen: f.parent_changes_seen,
                // Over the flow's active time, as its goodput (a flow with a packet count ends
                // with its last packet, not at its stop time).
                mean_rate_pps: step_average(
                    net.rate_trace(f.source.index()),
                    f.start.as_secs_f64(),
                    until.as_secs_f64(),
                ),
            }
        })
        .collect();
    let sum = |g: fn(&crate::network::NodeStats) -> u64| (0..net.len()).map(|i| g(net.node_stats(i))).sum::<u64>();
    // RCRT counters summed over the sinks (absent from runs without end-to-end transport).
    // The RCRT totals come with the protocol, also when the scenario has no flow (zeros then).
    let rcrt =
        matches!(sc.protocol, crate::scenario::ProtocolConfig::Rcrt(_) | crate::scenario::ProtocolConfig::Reliable(_));
    let sink_sum = |g: fn(&wsn_proto::rcrt::SinkStats) -> u64| {
        rcrt.then(|| net.sinks().iter().filter_map(|s| net.rcrt_sink(*s)).map(|k| g(k.stats())).sum::<u64>())
    };
    let originated: u64 = flows.iter().map(|f| f.originated).sum();
    let delivered: u64 = flows.iter().map(|f| f.delivered).sum();
    // Goodput statistics over the flows that started before the end (a flow that never started
    // would read as a starved one and drag the minimum and Jain's index down).
    let gp: Vec<f64> =
        net.flows().iter().zip(&flows).filter(|(nf, _)| nf.start < end).map(|(_, f)| f.goodput_pps).collect();
    let inv = invariants(net);
    let (max_depth, mean_depth, _) = depths(net);
    let parent_changes = total_parent_changes(net);
    let (_, acks) = net.frames_on_air();
    Summary {
        scenario: sc.name.clone(),
        scenario_origin: sc.origin.clone(),
        overrides: sc.overrides().to_vec(),
        seed,
        preset: preset.into(),
        prr_curve: sc.radio.prr_curve,
        reception: sc.radio.reception,
        protocol: sc.protocol.name().into(),
        protocol_config: sc.protocol.clone(),
        sim_seconds: end.as_secs_f64(),
        wall_seconds,
        events: net.events(),
        nodes: net.len(),
        trace_sha256,
        data_files: sc
            .file_fields()
            .into_iter()
            .filter_map(|(key, p)| {
                let f = sc.resolve(key, p).ok()?;
                Some((key.to_string(), std::fs::canonicalize(&f).unwrap_or(f).display().to_string()))
            })
            .collect(),
        routing: RoutingSummary {
            max_depth,
            mean_depth,
            max_depth_seen,
            median_max_depth: 0,
            max_depth_p10_p90: [0, 0],
            parent_changes,
            parent_changes_during_traffic: parent_changes - changes_before_traffic.min(parent_changes),
            // Nodes without a route in some tree other than their own (a sink roots its own).
            unrouted_nodes: (0..net.len())
                .filter(|&i| {
                    (0..net.sinks().len()).any(|t| net.sinks()[t] != NodeId(i as u16) && !is_routed(net, i, t))
                })
                .count(),
            cut_off_nodes: (0..net.len())
                .filter(|&i| (0..net.sinks().len()).any(|t| is_routed(net, i, t) && !reaches_sink(net, i, t)))
                .count(),
            freeze_moves: net
                .freeze_moves
                .iter()
                .map(|(t, ti, m)| FreezeLink {
                    t_s: t.as_secs_f64(),
                    sink: net.sinks()[*ti as usize].0,
                    node: m.node as u16,
                    parent: m.from as u16,
                    quality: m.quality_before,
                    new_parent: Some(m.to as u16),
                    new_quality: Some(m.quality_after),
                })
                .collect(),
            freeze_weak_kept: net
                .freeze_kept
                .iter()
                .map(|(t, ti, k)| FreezeLink {
                    t_s: t.as_secs_f64(),
                    sink: net.sinks()[*ti as usize].0,
                    node: k.node as u16,
                    parent: k.parent as u16,
                    quality: k.quality,
                    new_parent: None,
                    new_quality: None,
                })
                .collect(),
        },
        totals: Totals {
            originated,
            delivered,
            delivery_ratio: if originated == 0 { f64::NAN } else { ratio(delivered, originated) },
            // Without a flow that started (or a packet originated) these are undefined: NaN,
            // which summary.json writes as null, rather than a 0 that reads as a measurement.
            mean_goodput_pps: if gp.is_empty() { f64::NAN } else { gp.iter().sum::<f64>() / gp.len() as f64 },
            min_goodput_pps: if gp.is_empty() { f64::NAN } else { gp.iter().copied().fold(f64::INFINITY, f64::min) },
            max_goodput_pps: if gp.is_empty() { f64::NAN } else { gp.iter().copied().fold(0.0, f64::max) },
            data_frames: sum(|s| s.data_tx),
            beacon_frames: sum(|s| s.beacon_tx),
            ack_frames: acks,
            queue_drops: sum(|s| s.queue_drops),
            mac_drops: sum(|s| s.mac_drops),
            no_route_drops: sum(|s| s.no_route_drops),
            loop_ttl_drops: sum(|s| s.other_drops),
            duplicates_suppressed: sum(|s| s.duplicates),
            malformed_frames: sum(|s| s.malformed),
            feedback_packets: sink_sum(|st| st.feedback_sent),
            congestion_decreases: sink_sum(|st| st.decreases),
            feedback_by_trigger: if rcrt {
                let mut m = std::collections::BTreeMap::new();
                for st in net.sinks().iter().filter_map(|s| net.rcrt_sink(*s)).map(|s| s.stats().feedback_sent_by) {
                    for (k, v) in [
                        ("new_loss", st.new_loss),
                        ("rate_differs", st.rate_differs),
                        ("duplicate", st.duplicate),
                        ("ack_request", st.ack_request),
                        ("decrease", st.decrease),
                        ("fin", st.fin),
                        ("timer", st.timer),
                    ] {
                        *m.entry(k.to_string()).or_insert(0) += v;
                    }
                }
                Some(m)
            } else {
                None
            },
            flows_expired: sink_sum(|st| st.flows_expired),
            flows_revived: sink_sum(|st| st.flows_revived),
            flows_replaced: sink_sum(|st| st.flows_replaced),
            // 0/0 when no flow delivered anything: undefined, not "perfectly fair".
            goodput_jain_index: if gp.iter().all(|&g| g == 0.0) { f64::NAN } else { jain(&gp) },
            protocol_counters: {
                let mut m = std::collections::BTreeMap::new();
                for i in 0..net.len() {
                    for (k, v) in net.agent_counters(i) {
                        *m.entry(k.to_string()).or_insert(0) += v;
                    }
                }
                m
            },
            invariant_violations: inv,
        },
        flows,
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || q <= 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * q)
    }
}

/// Time average of a step trace `(t, value, _)` over `[from, to]` (value before the first
/// change: the first value).
pub fn step_average(trace: &[(f64, f64, f64)], from: f64, to: f64) -> Option<f64> {
    if trace.is_empty() || to <= from {
        return None;
    }
    let mut cur = trace[0].1;
    let mut t = from;
    let mut acc = 0.0;
    for &(ti, v, _) in trace {
        if ti <= from {
            cur = v;
            continue;
        }
        if ti >= to {
            break;
        }
        acc += cur * (ti - t);
        t = ti;
        cur = v;
    }
    acc += cur * (to - t);
    Some(acc / (to - from))
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cut_off_nodes` counts a routed node whose parents do not lead to the sink: on a loop,
    /// behind one, or behind a node without a route; a node on a whole path is not cut off.
    #[test]
    fn a_node_on_or_behind_a_loop_does_not_lead_to_the_sink() {
        // 0 is the sink; 1 → 0 and 2 → 1 are whole; 3 → 4 → 5 → 3 is a loop with 6 behind it;
        // 7 has no parent and 8 hangs below it.
        let parents = [None, Some(0), Some(1), Some(4), Some(5), Some(3), Some(3), None, Some(7)];
        let leads: Vec<bool> = (0..parents.len()).map(|i| leads_to(i, 0, parents.len(), |j| parents[j])).collect();
        assert_eq!(leads, [true, true, true, false, false, false, false, false, false]);
    }

    fn small(set: &[&str]) -> Scenario {
        let text =
            "name = \"t\"\nduration_s = 60.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                    [[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 10.0\n";
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &set).unwrap()
    }

    /// An IFRC flow's mean rate is taken over its active time, as its goodput: a flow with a
    /// packet count ends with its last packet (the mean ran to the stop time before).
    #[test]
    fn ifrc_mean_rate_covers_the_active_time() {
        let sc = small(&[
            "protocol.kind=\"ifrc\"",
            "mac.preset=\"ifrc2006\"",
            "flows.0.payload_bytes=0",
            "flows.0.count=3",
            "duration_s=600",
        ]);
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let f = r.network.flows().iter().find(|f| f.delivered == 3).expect("a flow delivered its 3 packets");
        let s = &r.summary.flows[f.id as usize];
        let trace = r.network.rate_trace(f.source.index());
        let (from, to) = (f.start.as_secs_f64(), f.last_delivery.as_secs_f64());
        assert!(to < 590.0, "the flow ended early: {to}");
        let want = step_average(trace, from, to).unwrap();
        assert!((s.mean_rate_pps.unwrap() - want).abs() < 1e-12, "{:?} vs {want}", s.mean_rate_pps);
        let to_stop = step_average(trace, from, 600.0).unwrap();
        assert!((want - to_stop).abs() > 1e-6, "the test cannot tell the windows apart");
    }

    /// An RCRT application whose source cannot connect (its radio is off from 100 s to the end)
    /// opens new connections after failed set-ups only while it still has data to send: after
    /// its stop at 200 s it gives up, and its last source is closed or failed, not connecting.
    #[test]
    fn rcrt_application_stops_reopening_after_its_stop() {
        let text = "name = \"t\"\nduration_s = 1200.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                    [protocol]\nkind = \"rcrt\"\n[[flows]]\nsources = [8]\nrate_pps = 1.0\nstart_s = 120.0\nstop_s = 200.0\n\
                    [[outages]]\nnodes = [8]\nfrom_s = 100.0\n[output]\nplots = false\n";
        let sc = Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap();
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let first_nonce = (crate::rng::mix64(r.summary.seed) & 0xffff) as u16;
        let (nonce, state) = r
            .network
            .eps
            .iter()
            .find_map(|e| match &e.kind {
                crate::endpoints::EpKind::Source { src, cfg, .. } => Some((cfg.nonce, src.state())),
                _ => None,
            })
            .expect("a source endpoint");
        let reopened = nonce.wrapping_sub(first_nonce);
        eprintln!("reopened {reopened} times, last state {state:?}");
        // At most one new incarnation can start before the stop (set-up time + 30 s > 80 s / 2).
        assert!(reopened <= 1, "reopened {reopened} times");
        assert!(!matches!(state, wsn_proto::rcrt::SourceState::SynAckWait { .. }), "{state:?}");
    }

    /// A flow that starts only after the end takes no part in the goodput statistics (it is
    /// not a starved flow): the minimum and Jain's index are those of the flow that ran.
    #[test]
    fn flows_that_never_started_are_left_out_of_the_goodput_statistics() {
        let two = "flows=[{sources=[1], rate_pps=1.0, start_s=10.0}, {sources=[2], rate_pps=1.0, start_s=100.0}]";
        let r = run(&small(&[two]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let t = &r.summary.totals;
        assert_eq!(r.summary.flows[1].goodput_pps, 0.0);
        assert!(r.summary.flows[0].goodput_pps > 0.5, "{:?}", r.summary.flows[0]);
        assert_eq!(
            (t.min_goodput_pps, t.max_goodput_pps),
            (r.summary.flows[0].goodput_pps, r.summary.flows[0].goodput_pps)
        );
        assert_eq!(t.goodput_jain_index, 1.0);
        // Flows that started but delivered nothing: the index is undefined (null), not 1.
        let late = "flows=[{sources=[1, 2], rate_pps=1.0, start_s=59.999}]";
        let r = run(&small(&[late]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        assert_eq!(r.summary.flows.len(), 2);
        assert!(r.summary.totals.goodput_jain_index.is_nan(), "{}", r.summary.totals.goodput_jain_index);
    }

    /// A delivery at exactly the end of a bin counts in that bin in every binned output: here
    /// the run ends with a delivery and is one bin long, so that bin holds every delivery (it
    /// used to go to a bin after the run's, which no file writes).
    #[test]
    fn a_delivery_at_a_bin_end_counts_in_that_bin() {
        let r = run(&small(&[]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let t = r.network.flows().iter().map(|f| f.last_delivery).max().unwrap().as_nanos();
        assert!(t > 10_000_000_000, "no delivery");
        let secs = format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
        let sc = small(&[&format!("duration_s={secs}"), &format!("output.timeseries_bin_s={secs}")]);
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        assert_eq!(r.network.end().as_nanos(), t);
        assert_eq!(r.series.len(), 1);
        let delivered: u64 = r.network.flows().iter().map(|f| f.delivered).sum();
        assert!(r.network.flows().iter().any(|f| f.last_delivery.as_nanos() == t));
        let binned: u64 = r.network.flows().iter().map(|f| u64::from(f.bins[0])).sum();
        assert_eq!((binned, r.series[0].delivered), (delivered, delivered));
        assert_eq!(crate::network::bin_index(Instant::ZERO, r.bin), 0);
    }

    /// Bad noise parameters are refused naming their key and, when written in the file, its
    /// line; a noise floor or spread outside what a radio measures too.
    #[test]
    fn bad_noise_parameters_name_their_key_and_line() {
        let base =
            "name = \"t\"\nduration_s = 10.0\n[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n\
                    [radio.noise]\n";
        for (noise, says) in [
            ("model = \"cpm\"\ntrace = \"data/noise/meyer-short.txt\"\nhistory = 0\n", "radio.noise.history = 0"),
            (
                "model = \"cpm\"\ntrace = \"data/noise/meyer-short.txt\"\nmax_samples = 5\n",
                "radio.noise.max_samples = 5",
            ),
            (
                "model = \"cpm\"\ntrace = \"data/noise/meyer-short.txt\"\nreset_gap_s = -1.0\n",
                "radio.noise.reset_gap_s = -1",
            ),
            ("model = \"constant\"\nfloor_dbm = 50.0\n", "radio.noise.floor_dbm = 50: must be within"),
            ("model = \"gaussian\"\nfloor_dbm = -98.0\nsigma_db = 1e300\n", "radio.noise.sigma_db = 1"),
        ] {
            let text = format!("{base}{noise}");
            let sc = Scenario::from_toml(&text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap();
            let e = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).err().expect(says).to_string();
            let line = text.lines().count();
            assert!(e.contains(says) && e.contains(&format!("(line {line})")), "{e}");
        }
    }

    /// A positions file with two nodes closer than D0 (a row repeated), and a pruning margin set
    /// beside a gain file (which is never pruned), run with a warning each.
    #[test]
    fn close_file_positions_and_a_margin_without_effect_are_warned_about() {
        let dir = std::env::temp_dir().join(format!("wsn-close-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // `top` goes before the topology table, `topo` into it.
        let warnings = |positions: &str, top: &str, topo: &str| -> Vec<String> {
            std::fs::write(dir.join("p.csv"), positions).unwrap();
            let text = format!(
                "name = \"t\"\nduration_s = 2.0\n{top}[topology]\nlayout = {{ kind = \"file\", path = \"p.csv\" }}\n{topo}"
            );
            let sc = Scenario::from_toml(&text, "t.toml", dir.clone(), &[]).unwrap();
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap().warnings
        };
        let spread = "node,x_m,y_m\n0,0,0\n1,5,0\n2,10,0\n3,15,0\n";
        assert!(warnings(spread, "", "").is_empty(), "{:?}", warnings(spread, "", ""));
        let w = warnings(&spread.replace("2,10,0", "2,5,0"), "", "");
        assert!(w.iter().any(|w| w.contains("1 pairs of nodes sit closer than D0 = 1 m (1–2)")), "{w:?}");
        // D0 = 6 m: every neighbour pair is too close.
        let w = warnings(spread, "radio.link.d0_m = 6.0\n", "");
        assert!(w.iter().any(|w| w.contains("3 pairs") && w.contains("(0–1, 1–2, 2–3)")), "{w:?}");
        std::fs::write(dir.join("g.txt"), "gain 1 0 -60\ngain 0 1 -60\n").unwrap();
        let (two, gains) = ("node,x_m,y_m\n0,0,0\n1,5,0\n", "gains_file = \"g.txt\"\n");
        let w = warnings(two, "radio.prune_margin_db = 30.0\n", gains);
        assert!(w.iter().any(|w| w.contains("radio.prune_margin_db = 30 has no effect")), "{w:?}");
        assert!(warnings(two, "", gains).is_empty(), "{:?}", warnings(two, "", gains));
        // A node the gain file never names (node 1 of three) is warned about, by number.
        std::fs::write(dir.join("g.txt"), "gain 2 0 -60\ngain 0 2 -60\n").unwrap();
        let three = "node,x_m,y_m\n0,0,0\n1,5,0\n2,10,0\n";
        let w = warnings(three, "", gains);
        assert!(w.iter().any(|w| w.contains("no gain line to or from node 1: it can neither send")), "{w:?}");
        // A node that only hears (no gain line from it) is not isolated.
        std::fs::write(dir.join("g.txt"), "gain 2 0 -60\ngain 0 2 -60\ngain 0 1 -60\n").unwrap();
        assert!(warnings(three, "", gains).is_empty(), "{:?}", warnings(three, "", gains));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A static tree whose edges the radio cannot carry, or deeper than the TTL allows, runs as
    /// given with a warning that names the edges.
    #[test]
    fn a_static_tree_the_radio_cannot_carry_is_warned_about() {
        let dir = std::env::temp_dir().join(format!("wsn-star-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tree = dir.join("star.csv");
        std::fs::write(&tree, "node,parent\n0,-1\n1,0\n2,0\n3,0\n").unwrap();
        let chain = |spacing: f64, ttl: u8| -> Vec<String> {
            let text = format!(
                "name = \"t\"\nduration_s = 5.0\n[topology]\nlayout = {{ kind = \"chain\", nodes = 4, spacing_m = {spacing:?} }}\n\
                 [routing]\nkind = \"static\"\nttl = {ttl}\ntree_file = {:?}\n",
                tree.display().to_string()
            );
            let sc = Scenario::from_toml(&text, "t.toml", dir.clone(), &[]).unwrap();
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap().warnings
        };
        assert!(chain(2.0, 20).is_empty(), "{:?}", chain(2.0, 20));
        let w = chain(400.0, 20);
        assert!(
            w.iter()
                .any(|w| w.contains("cannot carry traffic both ways") && w.contains("3→0 (no link up; no link down)")),
            "{w:?}"
        );
        // A gain file: a link one way only, and a link far below the noise, each named.
        let gains = |text: &str| -> Vec<String> {
            std::fs::write(dir.join("g.txt"), text).unwrap();
            let text = format!(
                "name = \"t\"\nduration_s = 5.0\n[topology]\nlayout = {{ kind = \"chain\", nodes = 4, spacing_m = 2.0 }}\n\
                 gains_file = \"g.txt\"\n[routing]\nkind = \"static\"\ntree_file = {:?}\n",
                tree.display().to_string()
            );
            let sc = Scenario::from_toml(&text, "t.toml", dir.clone(), &[]).unwrap();
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap().warnings
        };
        let good = "gain 1 0 -60\ngain 0 1 -60\ngain 2 0 -60\ngain 0 2 -60\ngain 3 0 -60\ngain 0 3 -60\n";
        assert!(gains(good).is_empty(), "{:?}", gains(good));
        let w = gains(&good.replace("gain 0 2 -60\n", "").replace("gain 3 0 -60", "gain 3 0 -200"));
        let w = w.iter().find(|w| w.contains("cannot carry traffic both ways")).unwrap_or_else(|| panic!("{w:?}"));
        assert!(
            w.contains("2 tree edges")
                && w.contains("2→0 (no link down)")
                && w.contains("3→0 (up -200.0 dBm, never decodable"),
            "{w}"
        );
        let w = gains(&good.replace("gain 0 2 -60\n", ""));
        assert!(w.iter().any(|w| w.contains("tree_file: 1 tree edge cannot carry") && w.contains("2→0")), "{w:?}");
        // A tree of another network: the file, both counts and the ids it should have.
        let text = format!(
            "name = \"t\"\nduration_s = 5.0\n[topology]\nlayout = {{ kind = \"chain\", nodes = 5, spacing_m = 2.0 }}\n\
             [routing]\nkind = \"static\"\ntree_file = {:?}\n",
            tree.display().to_string()
        );
        let sc = Scenario::from_toml(&text, "t.toml", dir.clone(), &[]).unwrap();
        let e = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).err().expect("refused").to_string();
        assert!(e.contains("star.csv\": the tree has 4 nodes, the topology 5 (one row per node, ids 0 to 4)"), "{e}");
        std::fs::write(&tree, "node,parent\n0,-1\n1,0\n2,1\n3,2\n").unwrap();
        let w = chain(2.0, 1);
        assert!(w.iter().any(|w| w.contains("3 hops deep, more than routing.ttl + 1 = 2")), "{w:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `FLOW_CSV_COLUMNS` (flows.csv's header when there is no flow) are the fields of
    /// `FlowSummary` as the CSV writer serialises them.
    #[test]
    fn flow_csv_columns_match_the_serialised_summary() {
        let r = run(&small(&[]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(&r.summary.flows[0]).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), FLOW_CSV_COLUMNS.join(","));
    }

    /// IFRC paces one flow per node: flows from one node to two sinks, or two at the same time,
    /// are refused by name (the second one used to send nothing), and so is a weight on a base
    /// station; one node's flows one after the other are fine.
    #[test]
    fn ifrc_refuses_what_it_cannot_pace() {
        let ifrc = ["protocol.kind=\"ifrc\"", "mac.preset=\"ifrc2006\"", "flows.0.payload_bytes=0"];
        let two = |extra: &str| {
            let text = format!(
                "name = \"t\"\nduration_s = 60.0\n[topology]\nsinks = [0, 8]\n\
                 layout = {{ kind = \"grid\", nodes = 9, spacing_m = 5.0 }}\n[protocol]\nkind = \"ifrc\"\n\
                 [mac]\npreset = \"ifrc2006\"\n\
                 [[flows]]\nsources = [4]\nsink = 0\nstart_s = 10.0\nstop_s = 30.0\npayload_bytes = 0\n\
                 [[flows]]\nsources = [4]\npayload_bytes = 0\n{extra}"
            );
            let sc = Scenario::from_toml(&text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap();
            check(&sc, None).map_err(|e| e.to_string())
        };
        let e = two("sink = 8\nstart_s = 30.0\n").expect_err("two sinks accepted");
        assert!(e.contains("flows[0] and flows[1]: node 4 sends to sinks 0 and 8"), "{e}");
        let e = two("sink = 0\nstart_s = 20.0\n").expect_err("overlapping flows accepted");
        assert!(e.contains("node 4 has two IFRC flows at the same time"), "{e}");
        assert!(two("sink = 0\nstart_s = 30.0\n").is_ok());
        // An earlier flow with a count hands its slots on when its count is generated.
        let text =
            "name = \"t\"\nduration_s = 60.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                    [protocol]\nkind = \"ifrc\"\n[mac]\npreset = \"ifrc2006\"\n\
                    [[flows]]\nsources = [4]\ncount = 10\nstart_s = 1.0\npayload_bytes = 0\n\
                    [[flows]]\nsources = [4]\nstart_s = 20.0\npayload_bytes = 0\n";
        let sc = Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap();
        assert!(check(&sc, None).is_ok());
        let e = check(&small(&[&ifrc[..], &["protocol.weights={\"0\"=2.0}"]].concat()), None)
            .expect_err("a weight on the base station accepted")
            .to_string();
        assert!(e.contains("protocol.weights.0: node 0 is a base station"), "{e}");
    }

    /// A static tree must be rooted at the sink, alone: a tree file whose root is another node,
    /// or with several roots, is refused by name.
    #[test]
    fn static_tree_root_must_be_the_sink() {
        let dir = std::env::temp_dir().join(format!("wsn-static-root-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, rows: &str| {
            let p = dir.join(name);
            std::fs::write(&p, format!("node,parent\n{rows}")).unwrap();
            p.display().to_string()
        };
        // 9-node grid, sink 0: a chain 8 → 7 → … → 0.
        let chain: String = (0..9).map(|i| format!("{i},{}\n", i as i64 - 1)).collect();
        let two_roots: String = (0..9).map(|i| format!("{i},{}\n", if i == 4 { -1 } else { i as i64 - 1 })).collect();
        let good = write("chain.csv", &chain);
        let bad = write("two-roots.csv", &two_roots);
        let set = |file: &str, sink: u16| {
            small(&[
                "routing.kind=\"static\"",
                &format!("routing.tree_file={file:?}"),
                &format!("topology.sinks=[{sink}]"),
            ])
        };
        assert!(check(&set(&good, 0), None).is_ok());
        let e = check(&set(&good, 5), None).expect_err("a tree rooted at 0 accepted for sink 5").to_string();
        assert!(e.contains("the tree's root must be the sink, node 5, alone; its roots (parent -1) are [0]"), "{e}");
        let e = check(&set(&bad, 0), None).expect_err("two roots accepted").to_string();
        assert!(e.contains("its roots (parent -1) are [0, 4]"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// RCRT weights for a node the topology does not have are refused as IFRC's are.
    #[test]
    fn rcrt_weights_must_name_nodes() {
        for kind in ["rcrt", "reliable"] {
            let sc = small(&[&format!("protocol.kind=\"{kind}\""), "protocol.weights={\"99\"=2.0}"]);
            let e = run(&sc, RunOptions { seed: None, out_dir: None, progress: None })
                .err()
                .expect("weight of node 99 accepted")
                .to_string();
            assert!(e.contains("protocol.weights.99: `99` is not a node id of this topology (node ids 0 to 8)"), "{e}");
            // Two keys for one node are refused, not one of them kept.
            let sc = small(&[&format!("protocol.kind=\"{kind}\""), "protocol.weights={\"3\"=2.0, \"03\"=5.0}"]);
            let e = run(&sc, RunOptions { seed: None, out_dir: None, progress: None })
                .err()
                .expect("two weights for node 3 accepted")
                .to_string();
            assert!(e.contains("protocol.weights: two keys name node 3"), "{e}");
        }
    }

    /// Errors found only when the network is built name the scenario and, for a key written
    /// in the file, its line; `check` finds them without running, and a key given with `--set`
    /// gets that `--set` instead of a line.
    #[test]
    fn build_errors_name_the_scenario_and_the_line() {
        let text =
            "name = \"t\"\nduration_s = 60.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                    sinks = [42]\n";
        let sc = Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap();
        let e = check(&sc, None).expect_err("sink 42 of 9 nodes accepted").to_string();
        assert_eq!(e, "t.toml: topology.sinks: node 42 does not exist (9 nodes) (line 5)");
        let e = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).err().expect("ran").to_string();
        assert_eq!(e, "t.toml: topology.sinks: node 42 does not exist (9 nodes) (line 5)");
        let sc = small(&["topology.sinks=[9]"]);
        let e = check(&sc, None).expect_err("sink 9 of 9 nodes accepted").to_string();
        assert_eq!(e, "t.toml: topology.sinks: node 9 does not exist (9 nodes) (from --set topology.sinks=[9])");
        assert!(check(&small(&[]), None).is_ok());
    }

    /// A missing data file is named by its field, with every place it was looked for; the
    /// summary lists the files a run read.
    #[test]
    fn data_files_are_named_and_recorded() {
        let sc = small(&["routing.kind=\"static\"", "routing.tree_file=\"no-such-tree.csv\""]);
        let e = check(&sc, None).expect_err("missing tree file accepted").to_string();
        assert!(e.starts_with("t.toml: routing.tree_file = \"no-such-tree.csv\": no such file (looked for "), "{e}");
        let cwd = std::env::current_dir().unwrap().join("no-such-tree.csv");
        assert!(e.contains(&cwd.display().to_string()), "the current directory comes first: {e}");
        // A folder where the file should be is called a folder.
        let folder = std::env::temp_dir().display().to_string();
        let sc = small(&["routing.kind=\"static\"", &format!("routing.tree_file={folder:?}")]);
        let e = check(&sc, None).expect_err("a folder accepted as a tree file").to_string();
        assert!(e.contains("is a folder, not a file"), "{e}");
        // A device is refused rather than read: /dev/zero would never end.
        #[cfg(unix)]
        {
            let sc = small(&["routing.kind=\"static\"", "routing.tree_file=\"/dev/zero\""]);
            let e = check(&sc, None).expect_err("a device accepted as a tree file").to_string();
            assert!(e.contains("/dev/zero is not a regular file"), "{e}");
        }
        let sc = Scenario::load("office40", &["duration_s=1".into()]).unwrap();
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let files: Vec<&str> = r.summary.data_files.keys().map(String::as_str).collect();
        assert_eq!(files, ["radio.noise.trace", "topology.layout.path"]);
        let layout = Path::new(&r.summary.data_files["topology.layout.path"]);
        assert!(layout.is_absolute() && layout.ends_with("data/topologies/office40.csv"), "{}", layout.display());
    }

    /// A node whose radio is off for the whole run puts nothing on the air and decodes nothing
    /// (so it acknowledges nothing); its application still generates and its queue overflows.
    /// An outage that ends lets it work again. Bad outages are refused by name.
    #[test]
    fn radio_outages_silence_a_node() {
        let off = |from: f64, to: f64| {
            let sc = small(&["flows.0.sources=[4]", &format!("outages=[{{nodes=[4], from_s={from}, to_s={to}}}]")]);
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
        };
        let r = off(0.0, 60.0);
        let st = r.network.node_stats(4);
        assert_eq!((st.data_tx, st.beacon_tx, st.data_rx, st.data_overheard), (0, 0, 0, 0), "{st:?}");
        assert!(st.queue_drops > 0, "the queue of a silent node overflows: {st:?}");
        assert_eq!(r.summary.flows[0].delivered, 0);
        for i in (0..9).filter(|&i| i != 4) {
            assert!(r.network.node_stats(i).beacon_tx > 0, "node {i} beacons");
        }
        // Off for the first 20 s only: it beacons and delivers afterwards.
        let r = off(0.0, 20.0);
        assert!(r.network.node_stats(4).beacon_tx > 0 && r.summary.flows[0].delivered > 0);
        for (set, want) in [
            ("outages=[{nodes=[4], from_s=30, to_s=10}]", "outages[0].to_s = 10: must be after from_s = 30"),
            ("outages=[{nodes=[], from_s=1}]", "outages[0].nodes is an empty list"),
            ("outages=[{nodes=4, from_s=-1}]", "outages[0].from_s = -1: must be a time ≥ 0 s"),
        ] {
            let text = "name = \"t\"\nduration_s = 60.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n";
            let e = Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &[set.to_string()])
                .expect_err(set)
                .to_string();
            assert!(e.contains(want), "{set}: {e}");
        }
        let e = check(&small(&["outages=[{nodes=[2, 9], from_s=1}]"]), None).unwrap_err().to_string();
        assert!(e.contains("outages[0].nodes: node 9 does not exist (9 nodes)"), "{e}");
    }

    /// `protocol.congestion_gain` reaches the sink's configuration and is checked.
    #[test]
    fn congestion_gain_is_applied_and_checked() {
        let mut c = RcrtConfig::default();
        assert_eq!(endpoint_spec(&c, false, 86).unwrap().sink.congestion_gain, 0.5);
        c.congestion_gain = Some(0.125);
        assert_eq!(endpoint_spec(&c, false, 86).unwrap().sink.congestion_gain, 0.125);
        for bad in [0.0, -0.1, 1.5, f64::NAN] {
            c.congestion_gain = Some(bad);
            let e = endpoint_spec(&c, false, 86).expect_err("bad gain accepted").to_string();
            assert!(e.contains("protocol.congestion_gain"), "{e}");
        }
    }

    /// `in_order_exactly_once` (README: "false also for a flow that originated nothing and did
    /// not close"), from a real flow that completed, one field changed at a time: a backlog left
    /// unsent while the connection is open, a closed flow that lost a packet, a duplicate, an
    /// out-of-order or a phantom delivery, or nothing originated make it false; a closed flow
    /// that left its backlog unsent, or closed empty, stays complete.
    #[test]
    fn in_order_exactly_once_needs_a_complete_flow() {
        let sc = small(&["protocol.kind=\"rcrt\"", "flows.0.rate_pps=0.5", "flows.0.count=5", "duration_s=300"]);
        let r = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        let done = r.network.flows().iter().find(|f| f.rcrt.closed_s.is_some() && f.delivered == 5).unwrap().clone();
        assert!(complete_in_order(&done) && done.generated == 5 && done.originated == 5, "{done:?}");
        let with = |change: &dyn Fn(&mut crate::network::Flow)| {
            let mut f = done.clone();
            change(&mut f);
            complete_in_order(&f)
        };
        let open = |f: &mut crate::network::Flow| f.rcrt.closed_s = None;
        // Open and everything sent was delivered: complete only without a backlog.
        assert!(with(&|f| open(f)));
        assert!(!with(&|f| {
            open(f);
            f.generated += 1;
        }));
        // Closed with its backlog unsent: complete.
        assert!(with(&|f| f.generated += 3));
        // A closed flow that lost a packet, or delivered one wrongly.
        assert!(!with(&|f| f.delivered -= 1));
        assert!(!with(&|f| f.duplicate_deliveries = 1));
        assert!(!with(&|f| f.rcrt.out_of_order = 1));
        assert!(!with(&|f| f.phantom_deliveries = 1));
        // Nothing originated: complete only if the connection closed (empty).
        let empty = |f: &mut crate::network::Flow| (f.originated, f.delivered, f.generated) = (0, 0, 0);
        assert!(with(&|f| empty(f)));
        assert!(!with(&|f| {
            empty(f);
            open(f);
        }));
    }

    /// The invariant counters are what the reliability claims rest on, so each must count what
    /// it names ([`Invariants`]): after a clean RCRT run every one is 0; then deliveries are
    /// injected at the sink as a faulty transport would make them (checked by the simulator, not
    /// taken from the sink) and node counters broken, and each lands in its own counter.
    #[test]
    fn each_invariant_counts_its_own_fault() {
        let sc = small(&["protocol.kind=\"rcrt\"", "flows.0.rate_pps=0.5", "flows.0.count=5", "duration_s=300"]);
        let mut net = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap().network;
        assert_eq!(invariants(&net), Invariants::default());
        let (fi, f) = net.flows().iter().enumerate().find(|(_, f)| f.delivered == 5).unwrap();
        let (origin, sink) = (f.source, f.sink.index());
        let packet = |seq: u32| {
            let mut data = [0u8; 6];
            let mut p = wsn_wire::besteffort::Packet::new_unchecked(&mut data[..]);
            p.set_flow(fi as u16);
            p.set_seq(seq);
            data
        };
        // A second copy of packet 0, a packet never originated, and bytes that are no packet.
        assert!(net.sink_receive(sink, origin, 1, &packet(0), true).is_none());
        assert!(net.sink_receive(sink, origin, 1, &packet(9), true).is_none());
        assert!(net.sink_receive(sink, origin, 1, &[1, 2], true).is_none());
        // Packet 2 handed up again as if never delivered, after 4: out of order; then 1 missing
        // behind the highest handed up: skipped for good (this sink never gives up).
        net.flows[fi].got[2] = false;
        assert!(net.sink_receive(sink, origin, 1, &packet(2), true).is_some());
        net.flows[fi].got[1] = false;
        net.nodes[3].stats.queue_overflows = 2;
        net.nodes[4].stats.send_done = net.nodes[4].stats.frames_accepted + 1;
        net.nodes[5].stats.frames_accepted = net.nodes[5].stats.send_done + 2;
        net.datagrams_refused = 7;
        let want = Invariants {
            duplicate_deliveries: 1,
            phantom_deliveries: 2,
            queue_overflows: 2,
            send_done_mismatch: 2,
            out_of_order_deliveries: 1,
            datagrams_refused: 7,
            skipped_deliveries: 1,
        };
        assert_eq!(invariants(&net), want);
        // The reference-code profile's sink gives packets up by design: a hole behind the highest
        // packet handed up is not counted there.
        let sc = small(&[
            "protocol.kind=\"rcrt\"",
            "protocol.profile=\"reference_code\"",
            "flows.0.rate_pps=0.5",
            "flows.0.count=5",
            "duration_s=300",
        ]);
        let mut net = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap().network;
        let fi = net.flows().iter().position(|f| f.delivered == 5).unwrap();
        net.flows[fi].got[1] = false;
        assert_eq!(invariants(&net), Invariants::default());
    }

    /// Every sink the runner builds passes `SinkConfig::check` (which `endpoint_spec` runs): RCRT
    /// and the reliable baseline (U = +∞, A = 0, join rate and limit +∞), both profiles, from the
    /// smallest frame that holds a FEEDBACK with one NACK range to office40's 86 bytes.
    #[test]
    fn every_sink_the_runner_builds_passes_the_check() {
        use wsn_wire::rcrt::{FEEDBACK_BASE_LEN, NACK_RANGE_LEN};
        let smallest = wsn_wire::collection::HEADER_LEN + FEEDBACK_BASE_LEN + NACK_RANGE_LEN;
        for profile in [RcrtProfile::Paper, RcrtProfile::ReferenceCode] {
            let c = RcrtConfig { profile, ..RcrtConfig::default() };
            for reliable in [false, true] {
                for payload in [smallest, 86] {
                    let e = endpoint_spec(&c, reliable, payload)
                        .unwrap_or_else(|e| panic!("{profile:?}, reliable {reliable}, {payload} bytes: {e}"));
                    assert_eq!(e.sink.check(), Ok(()));
                    assert_eq!(e.sink.upper_threshold.is_infinite(), reliable);
                }
            }
        }
    }

    /// `protocol.buffer_packets` sets the buffer, the ACK-request mark at half of it and, in the
    /// paper profile, the recovery list (as long as the buffer); the reference code's list stays 10.
    #[test]
    fn buffer_packets_sizes_the_paper_recovery_list() {
        let mut c = RcrtConfig { buffer_packets: Some(80), ..RcrtConfig::default() };
        let s = endpoint_spec(&c, false, 86).unwrap().source;
        assert_eq!((s.buffer_packets, s.ack_request_above, s.recovery_capacity), (80, 40, 80));
        c.profile = RcrtProfile::ReferenceCode;
        let s = endpoint_spec(&c, false, 86).unwrap().source;
        assert_eq!((s.buffer_packets, s.ack_request_above, s.recovery_capacity), (80, 40, 10));
    }

    /// A scenario refused while its network is built (a check of the protocol's sink, of the
    /// IFRC agents, of the endpoints) leaves the trace files of an earlier run in the folder as
    /// they were, and creates none; so does a trace file that cannot be opened. A run that
    /// finishes writes its own under temporary names, with the digest of a run without files,
    /// and they replace the earlier ones only once published.
    #[test]
    fn a_refused_run_leaves_the_earlier_trace_files_alone() {
        let dir = std::env::temp_dir().join(format!("wsn-refused-trace-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let go = |sc: &Scenario| run(sc, RunOptions { seed: None, out_dir: Some(dir.clone()), progress: None });
        let files = ["output.trace=true", "output.pcap=true"];
        let refused = [
            (
                "protocol.congestion_gain = 2: must be in (0, 1]",
                vec!["protocol.kind=\"rcrt\"", "protocol.congestion_gain=2"],
            ),
            (
                "protocol.weights.0: node 0 is a base station",
                vec![
                    "protocol.kind=\"ifrc\"",
                    "mac.preset=\"ifrc2006\"",
                    "flows.0.payload_bytes=0",
                    "protocol.weights={\"0\"=2.0}",
                ],
            ),
            (
                "node 1 has two flows to sink 0; RCRT allows one connection per pair",
                vec![
                    "protocol.kind=\"rcrt\"",
                    "flows=[{sources=[1], rate_pps=1.0}, {sources=[1], rate_pps=1.0, start_s=30.0}]",
                ],
            ),
        ];
        for (says, set) in &refused {
            // No files before: none after.
            let e = go(&small(&[&set[..], &files[..]].concat())).err().expect(says).to_string();
            assert!(e.contains(says), "{e}");
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{says}: a file was created");
            // An earlier run's files: unchanged.
            std::fs::write(dir.join("trace.csv"), "an earlier trace").unwrap();
            std::fs::write(dir.join("frames.pcap"), "an earlier pcap").unwrap();
            go(&small(&[&set[..], &files[..]].concat())).err().expect(says);
            assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), "an earlier trace", "{says}");
            assert_eq!(std::fs::read_to_string(dir.join("frames.pcap")).unwrap(), "an earlier pcap", "{says}");
            std::fs::remove_file(dir.join("trace.csv")).unwrap();
            std::fs::remove_file(dir.join("frames.pcap")).unwrap();
        }
        // frames.pcap cannot be opened (a folder stands there): trace.csv is kept as it was, or
        // not left behind if there was none; the error names the pcap by its full path.
        std::fs::create_dir(dir.join("frames.pcap")).unwrap();
        let e = go(&small(&files)).err().expect("a folder opened as frames.pcap").to_string();
        assert!(e.starts_with(&format!("writing {}: ", dir.join("frames.pcap").display())), "{e}");
        assert!(!dir.join("trace.csv").exists(), "an empty trace.csv left behind");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "a temporary file left behind");
        std::fs::write(dir.join("trace.csv"), "an earlier trace").unwrap();
        go(&small(&files)).err().expect("a folder opened as frames.pcap");
        assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), "an earlier trace");
        std::fs::remove_dir(dir.join("frames.pcap")).unwrap();
        // A run writes both under temporary names (replacing ones an earlier failed run left,
        // not following a link there), and they replace the earlier files once published (a
        // longer earlier file leaves nothing of itself behind).
        std::fs::write(dir.join("trace.csv"), "#".repeat(1 << 22)).unwrap();
        std::fs::write(dir.join("frames.pcap"), "#".repeat(1 << 22)).unwrap();
        std::fs::write(dir.join("trace.csv.partial"), "a failed run's trace").unwrap();
        std::fs::write(dir.join("mine"), "not a trace").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("mine"), dir.join("frames.pcap.partial")).unwrap();
        let with = go(&small(&files)).unwrap();
        let without = run(&small(&[]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        assert_eq!(with.summary.trace_sha256, without.summary.trace_sha256);
        assert!(without.trace_files.is_empty());
        assert_eq!(std::fs::read(dir.join("mine")).unwrap(), b"not a trace", "a link at a temporary name was followed");
        let names: Vec<&str> = with.trace_files.iter().map(|f| f.name).collect();
        assert_eq!(names, ["trace.csv", "frames.pcap"]);
        for f in &with.trace_files {
            assert_eq!(f.path, dir.join(f.name));
            assert_eq!(f.written, dir.join(format!("{}.partial", f.name)));
            assert_eq!(std::fs::read(&f.path).unwrap(), "#".repeat(1 << 22).as_bytes(), "replaced before publishing");
        }
        crate::output::publish_trace_files(&with.trace_files).unwrap();
        assert!(!dir.join("trace.csv.partial").exists() && !dir.join("frames.pcap.partial").exists());
        let trace = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
        assert!(trace.starts_with(crate::trace::TRACE_CSV_HEADER) && !trace.contains('#'));
        let pcap = std::fs::read(dir.join("frames.pcap")).unwrap();
        assert_eq!(pcap[..4], crate::pcap::MAGIC.to_le_bytes());
        assert!(pcap.len() != 1 << 22 && !pcap.ends_with(b"########"), "the earlier pcap's tail is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A write to trace.csv or frames.pcap that fails (here: a full device) stops the run soon,
    /// not at its end, with an error that names the file by its full path.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_trace_write_stops_the_run_and_names_the_file() {
        for (name, set) in [("frames.pcap", "output.pcap=true"), ("trace.csv", "output.trace=true")] {
            let dir = std::env::temp_dir().join(format!("wsn-full-{}-{name}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            std::fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink("/dev/full", dir.join(name)).unwrap();
            // One simulated hour, in 10-s bins or in one: the run stops within its first bins,
            // or before the end of its only one.
            for (bin, before) in [("10", 0.05), ("3600", 1e-9)] {
                let sc = small(&[set, "duration_s=3600", &format!("output.timeseries_bin_s={bin}")]);
                let mut last = 0.0;
                let mut progress = |f: f64| last = f;
                let e = run(&sc, RunOptions { seed: None, out_dir: Some(dir.clone()), progress: Some(&mut progress) })
                    .err()
                    .expect("a run writing to /dev/full succeeded");
                let RunError::Output { path, source } = &e else { panic!("{e}") };
                assert_eq!(*path, dir.join(name).display().to_string());
                assert_eq!(source.raw_os_error(), Some(28), "{e}");
                assert!(last < before, "{name}, bins of {bin} s: the run went on to {:.0} % of its time", last * 100.0);
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// A write that fails during the warm-up (before the first flow starts; here in a single
    /// one-hour bin whose traffic starts at 3000 s) stops the run within WRITE_CHECK_STEP of the
    /// failure too, not at the traffic start nor at the end of the bin.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_during_the_warm_up_stops_the_run_soon() {
        let traffic_start = Instant::ZERO + Duration::from_secs(3000);
        for (name, set) in [("frames.pcap", "output.pcap=true"), ("trace.csv", "output.trace=true")] {
            let dir = std::env::temp_dir().join(format!("wsn-full-warm-up-{}-{name}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            std::fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink("/dev/full", dir.join(name)).unwrap();
            let sc = small(&[set, "duration_s=3600", "output.timeseries_bin_s=3600", "flows.0.start_s=3000"]);
            // The run fails, naming the file.
            let e = run(&sc, RunOptions { seed: None, out_dir: Some(dir.clone()), progress: None })
                .err()
                .expect("a run writing to /dev/full succeeded");
            let RunError::Output { path, source } = &e else { panic!("{e}") };
            assert_eq!(*path, dir.join(name).display().to_string());
            assert_eq!(source.raw_os_error(), Some(28), "{e}");
            // When the first write fails: the same run, in 1-ms steps (the same events in the
            // same order), stopped at the first step after it.
            let Prepared { mut net, .. } = prepare(&sc, None, Some(&dir)).unwrap();
            while !net.tracer.failed() && net.now() < traffic_start {
                net.run_until(net.now() + Duration::from_millis(1));
            }
            assert!(net.tracer.failed(), "{name}: no write failed during the warm-up");
            let failed_by = net.now();
            // Where `run`'s loop stops.
            let Prepared { mut net, end, bin, .. } = prepare(&sc, None, Some(&dir)).unwrap();
            assert_eq!(net.flows().iter().map(|f| f.start).min(), Some(traffic_start));
            let sim = simulate(&mut net, end, bin, traffic_start, None);
            assert!(net.tracer.failed());
            assert!(sim.series.is_empty() && sim.changes_at_traffic_start.is_none());
            assert!(
                net.now() <= failed_by + WRITE_CHECK_STEP,
                "{name}: the first write failed by {failed_by:?}, the run went on to {:?}",
                net.now()
            );
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// The trace digest does not depend on how the run is cut into time bins (and so into
    /// `run_until` steps, the warm-up's among them), nor on whether the trace files are written.
    #[test]
    fn the_trace_digest_does_not_depend_on_the_bins_or_the_trace_files() {
        let dir = std::env::temp_dir().join(format!("wsn-digest-bins-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(small(&[]).output.timeseries_bin_s, 10.0, "the default bin");
        let mut seen = Vec::new();
        // Traffic from 10.25 s: the warm-up ends within a bin and within a check step.
        for bin in [Some("0.37"), None, Some("3600")] {
            for files in [false, true] {
                let mut set = vec!["flows.0.start_s=10.25".to_string()];
                set.extend(bin.map(|b| format!("output.timeseries_bin_s={b}")));
                if files {
                    set.extend(["output.trace=true".to_string(), "output.pcap=true".to_string()]);
                }
                let set: Vec<&str> = set.iter().map(String::as_str).collect();
                let out_dir = files.then(|| dir.clone());
                let r = run(&small(&set), RunOptions { seed: None, out_dir, progress: None }).unwrap();
                crate::output::publish_trace_files(&r.trace_files).unwrap();
                let written = files.then(|| {
                    let trace = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
                    (trace, std::fs::read(dir.join("frames.pcap")).unwrap())
                });
                let what = format!("bins of {} s, trace files {}", bin.unwrap_or("10 (default)"), files);
                seen.push((what, r.summary.trace_sha256, written));
            }
        }
        let (first, sha, _) = &seen[0];
        assert!(!sha.is_empty());
        for (what, other, _) in &seen[1..] {
            assert_eq!(other, sha, "{what} against {first}");
        }
        // The files written are the same too.
        let mut written = seen.iter().filter_map(|(what, _, w)| Some((what, w.as_ref()?)));
        let (first, (trace, pcap)) = written.next().unwrap();
        assert!(trace.lines().count() > 100, "a short trace");
        for (what, (t, p)) in written {
            assert!(t == trace && p == pcap, "{what}: other files than {first}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A run whose flows start after its end has no parent changes during traffic.
    #[test]
    fn no_traffic_no_changes_during_traffic() {
        let r =
            run(&small(&["flows.0.start_s=100"]), RunOptions { seed: None, out_dir: None, progress: None }).unwrap();
        assert!(r.summary.routing.parent_changes > 0);
        assert_eq!(r.summary.routing.parent_changes_during_traffic, 0);
    }

    /// Mutation audit of the summary's metrics (session 35).
    mod audit35 {
        use super::*;

        pub(super) fn go(sc: &Scenario) -> RunResult {
            run(sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
        }

        /// `jain`'s doc: (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
        #[test]
        fn jain_is_the_square_of_the_sum_over_n_times_the_sum_of_squares() {
            assert_eq!(jain(&[1.0, 0.0]), 0.5);
            assert_eq!(jain(&[1.0, 2.0, 3.0]), 36.0 / 42.0);
            assert_eq!(jain(&[4.0, 4.0]), 1.0);
            assert_eq!(jain(&[]), 1.0);
            assert_eq!(jain(&[0.0, 0.0]), 1.0);
        }

        /// `step_average`'s doc: the time average over [from, to], the first value before the
        /// first change; nothing over an empty window.
        #[test]
        fn step_average_weights_each_value_by_how_long_it_held() {
            let trace = [(5.0, 2.0, 0.0), (10.0, 4.0, 0.0), (20.0, 8.0, 0.0)];
            // 0–10 s at 2 (the first value before its change), 10–15 s at 4.
            assert_eq!(step_average(&trace, 0.0, 15.0), Some(40.0 / 15.0));
            // A change at or before `from` holds from `from` on.
            assert_eq!(step_average(&trace, 12.0, 14.0), Some(4.0));
            assert_eq!(step_average(&trace, 5.0, 25.0), Some((2.0 * 5.0 + 4.0 * 10.0 + 8.0 * 5.0) / 20.0));
            assert_eq!(step_average(&trace, 3.0, 3.0), None);
            assert_eq!(step_average(&[], 0.0, 3.0), None);
        }

        /// README "What a run writes", `summary.json`: `totals` sum the flows; `delivery_ratio`
        /// is delivered / originated; `mean_delay_ms` is in ms and `mean_hops` a mean over the
        /// delivered packets; goodput is over the flow's active time, here from its start to
        /// the end of the run (10 s to 120 s); the drop and frame totals are the sums of `nodes.csv`'s columns;
        /// the routing depths are the hop counts the routed nodes advertise at the end.
        #[test]
        fn the_summary_is_that_of_the_flows_and_nodes() {
            let r = go(&small(&["flows.0.rate_pps=4.0", "duration_s=120"]));
            let (s, net, t) = (&r.summary, &r.network, &r.summary.totals);
            assert_eq!(t.originated, s.flows.iter().map(|f| f.originated).sum::<u64>());
            assert_eq!(t.delivered, s.flows.iter().map(|f| f.delivered).sum::<u64>());
            assert!(t.delivered > 0 && t.delivered < t.originated, "{t:?}");
            assert_eq!(t.delivery_ratio, t.delivered as f64 / t.originated as f64);
            for (f, nf) in s.flows.iter().zip(net.flows()) {
                assert_eq!(f.delivery_ratio, Some(f.delivered as f64 / f.originated as f64));
                assert_eq!(f.goodput_pps, f.delivered as f64 / 110.0, "{f:?}");
                let d = nf.delay_sum_ns as f64 / 1e6 / nf.delivered as f64;
                assert!((f.mean_delay_ms.unwrap() - d).abs() < 1e-9 * d, "{f:?}");
                assert_eq!(f.mean_hops, Some(nf.hops_sum as f64 / nf.delivered as f64));
                assert!((1.0..=8.0).contains(&f.mean_hops.unwrap()), "{f:?}");
            }
            let gp: Vec<f64> = s.flows.iter().map(|f| f.goodput_pps).collect();
            assert_eq!(t.mean_goodput_pps, gp.iter().sum::<f64>() / gp.len() as f64);
            assert_eq!(t.min_goodput_pps, gp.iter().copied().fold(f64::INFINITY, f64::min));
            assert_eq!(t.max_goodput_pps, gp.iter().copied().fold(0.0, f64::max));
            assert!(t.min_goodput_pps < t.max_goodput_pps, "{gp:?}");
            assert_eq!(t.goodput_jain_index, jain(&gp));
            let col =
                |g: fn(&crate::network::NodeStats) -> u64| (0..net.len()).map(|i| g(net.node_stats(i))).sum::<u64>();
            let want = [col(|s| s.data_tx), col(|s| s.beacon_tx), col(|s| s.queue_drops), col(|s| s.mac_drops)];
            assert_eq!([t.data_frames, t.beacon_frames, t.queue_drops, t.mac_drops], want);
            let want = [col(|s| s.no_route_drops), col(|s| s.duplicates)];
            assert_eq!([t.no_route_drops, t.duplicates_suppressed], want);
            // Not rules but this run's preconditions: with every counter non-zero (the load is 4
            // pkt/s on a small lossy network), a swapped or dropped counter shows above.
            assert!(t.queue_drops > 0 && t.mac_drops > 0 && t.no_route_drops > 0 && t.duplicates_suppressed > 0);
            assert!(t.ack_frames > 0 && t.ack_frames <= t.data_frames, "{t:?}");
            // Depths: the hop counts of the eight routed nodes (the sink is none), some two hops deep.
            let hops: Vec<u32> = (1..9).filter_map(|i| net.hop_count(i, 0)).map(u32::from).collect();
            assert_eq!((hops.len(), s.routing.unrouted_nodes, s.routing.cut_off_nodes), (8, 0, 0));
            assert_eq!(s.routing.max_depth, *hops.iter().max().unwrap());
            assert_eq!(s.routing.mean_depth, hops.iter().sum::<u32>() as f64 / 8.0);
            assert!(s.routing.max_depth >= 2 && s.routing.mean_depth > 1.0, "{:?}", s.routing);
            assert_eq!(
                s.routing.parent_changes,
                (0..9).map(|i| u64::from(net.node_stats(i).parent_changes)).sum::<u64>()
            );
            let before: u64 = r.parent_changes_before_traffic.iter().map(|&c| u64::from(c)).sum();
            // A precondition again: changes on both sides of the traffic's start, so that the split
            // below is checked.
            assert!(before > 0 && before < s.routing.parent_changes, "{before} {:?}", s.routing);
            assert_eq!(s.routing.parent_changes_during_traffic, s.routing.parent_changes - before);
        }

        /// README, `network.csv`: per bin, stamped with the bin's end (a whole second stays
        /// whole: `sample`'s comment), the depths, `routed` (nodes with a route, the sink not
        /// counted), cumulative `parent_changes`, the packets `delivered` in the bin (they sum
        /// to the total) and `queued`, the sum of the queue lengths; `max_depth_seen` is the
        /// deepest bin, `median_max_depth` and `max_depth_p10_p90` over the bins while traffic
        /// flows.
        #[test]
        fn network_series_bins_hold_what_the_readme_says() {
            let r = go(&small(&["flows.0.rate_pps=4.0", "output.timeseries_bin_s=5.0"]));
            let (s, net) = (&r.summary, &r.network);
            let stamps: Vec<f64> = r.series.iter().map(|b| b.t_s).collect();
            assert_eq!(stamps, (1..=12).map(|k| (5 * k) as f64).collect::<Vec<f64>>());
            assert_eq!(r.series.iter().map(|b| b.delivered).sum::<u64>(), s.totals.delivered);
            assert!(r.series.iter().filter(|b| b.delivered > 0).count() > 5);
            let last = r.series.last().unwrap();
            assert_eq!((last.max_depth, last.mean_depth, last.routed), (s.routing.max_depth, s.routing.mean_depth, 8));
            assert_eq!(last.parent_changes, s.routing.parent_changes);
            assert_eq!(last.queued, (0..net.len()).map(|i| net.queue_len(i)).sum::<usize>());
            // A sum over the nodes: above any one node's largest queue in some bin, never above their sum.
            let qb = |b: usize| (0..net.len()).map(move |i| usize::from(net.queue_bins(i)[b]));
            assert!(r.series.iter().enumerate().all(|(b, s)| s.queued <= qb(b).sum::<usize>()));
            assert!(r.series.iter().enumerate().any(|(b, s)| s.queued > qb(b).max().unwrap()), "one queue at a time");
            assert!(r.series.iter().all(|b| b.routed <= 8));
            let depths: Vec<u32> = r.series.iter().map(|b| b.max_depth).collect();
            assert_eq!(s.routing.max_depth_seen, *depths.iter().max().unwrap());
            let mut during: Vec<u32> = r.series.iter().filter(|b| b.t_s > 10.0).map(|b| b.max_depth).collect();
            during.sort_unstable();
            assert_eq!(during.len(), 10);
            assert_eq!(s.routing.median_max_depth, during[5]);
            assert_eq!(s.routing.max_depth_p10_p90, [during[1], during[9]]);
        }

        /// README, `flows[].goodput_pps`: a flow stopped at `stop_s` is active until its last
        /// delivery, if later (packets in flight at the stop still arrive); a best-effort flow
        /// with a packet count that generated it all is active to its last delivery, but at
        /// least until its last packet was due (`count` intervals after its first packet: a
        /// flow of one packet at 1 pkt/s is not faster than 1 pkt/s because it arrived fast).
        #[test]
        fn goodput_is_over_the_active_time() {
            let r = go(&small(&["flows.0.rate_pps=8.0", "flows.0.stop_s=30.0"]));
            let late = r.network.flows().iter().filter(|f| f.last_delivery.as_secs_f64() > 30.0);
            let mut n = 0;
            for nf in late {
                let f = &r.summary.flows[nf.id as usize];
                assert_eq!(f.goodput_pps, nf.delivered as f64 / (nf.last_delivery - nf.start).as_secs_f64(), "{f:?}");
                n += 1;
            }
            assert!(n > 0, "no delivery after the stop");
            let r = go(&small(&["flows.0.count=1"]));
            let arrived: Vec<_> =
                r.summary.flows.iter().zip(r.network.flows()).filter(|(f, _)| f.delivered == 1).collect();
            assert!(arrived.len() >= 4, "{:?}", r.summary.flows);
            for (f, nf) in arrived {
                assert!(f.goodput_pps <= 1.0, "{f:?}");
                // A count of 1 was generated at the first packet: done one interval later.
                let active = (nf.last_delivery.max(nf.first_tick + nf.interval) - nf.start).as_secs_f64();
                assert_eq!(f.goodput_pps, 1.0 / active, "{f:?}");
            }
            assert!(r.network.flows().iter().any(|f| f.first_tick > f.start), "every first packet at the start");
        }
        /// README `flows[]`, RCRT: `feedback_packets` (feedback the sink sent to the flow) add up
        /// to `totals.feedback_packets` (sent by all sinks; one here), as do the counts of
        /// `feedback_by_trigger`; `decreases_triggered` (cuts of R the flow's C_i triggered) add
        /// up to the cuts of `decreases.csv`; `last_rate_pps` is the last rate the sink
        /// assigned; `rtt_ms` the sink's smoothed RTT in ms.
        #[test]
        fn rcrt_flow_fields_add_up_to_the_sinks_totals() {
            let r = go(&small(&["protocol.kind=\"rcrt\"", "flows.0.rate_pps=4.0", "duration_s=300"]));
            let (t, net) = (&r.summary.totals, &r.network);
            let fb: u64 = r.summary.flows.iter().map(|f| f.feedback_packets.unwrap()).sum();
            assert!(fb > 0);
            assert_eq!(t.feedback_packets, Some(fb));
            let by = t.feedback_by_trigger.as_ref().unwrap();
            assert_eq!(by.values().sum::<u64>(), fb, "{by:?}");
            assert_eq!(by.len(), 7, "{by:?}");
            let dec: u64 = r.summary.flows.iter().map(|f| f.decreases_triggered.unwrap()).sum();
            assert_eq!(dec, net.decreases().len() as u64);
            assert_eq!(t.congestion_decreases, Some(dec));
            let sink = net.rcrt_sink(net.sinks()[0]).unwrap();
            let (mut changed, mut repairs, mut backlog) = (false, 0, 0);
            for (f, nf) in r.summary.flows.iter().zip(net.flows()) {
                assert_eq!(f.last_rate_pps, nf.rcrt.rates.last().map(|r| r.1), "{f:?}");
                let repaired = sink.stats().per_flow.get(&nf.source).map_or(0, |fs| fs.recovered);
                assert_eq!(f.e2e_repaired, Some(repaired));
                repairs += repaired;
                // `in_order_exactly_once` needs the flow complete (summarize's comment): a flow
                // that leaves a backlog unsent and its connection open is not.
                if f.generated > f.originated && nf.rcrt.closed_s.is_none() {
                    assert_eq!(f.in_order_exactly_once, Some(false), "{f:?}");
                    backlog += 1;
                }
                changed |= nf.rcrt.rates.first() != nf.rcrt.rates.last();
                let rtt = sink.flow_info(nf.source).and_then(|i| i.rtt).unwrap();
                assert_eq!(f.rtt_ms, Some(rtt.as_secs_f64() * 1e3));
            }
            assert!(changed, "no flow's rate changed");
            assert!(repairs > 0 && backlog > 0, "{repairs} {backlog}");
        }

        /// README `summary.json`: `delivery_ratio` is null for a flow that originated nothing,
        /// and in the totals when nothing was; the goodput statistics are over the flows that
        /// started before the end of the run (null when none did: here every flow starts at
        /// the end); `in_order_exactly_once` is false for a flow that originated nothing and
        /// did not close; the RCRT totals are there, zeros.
        #[test]
        fn what_nothing_measured_reads_as_null() {
            let r = go(&small(&["protocol.kind=\"rcrt\"", "flows.0.start_s=60.0"]));
            let t = &r.summary.totals;
            assert_eq!(r.summary.flows.len(), 8);
            for f in &r.summary.flows {
                assert_eq!((f.originated, f.delivery_ratio, f.mean_delay_ms, f.mean_hops), (0, None, None, None));
                assert_eq!(f.in_order_exactly_once, Some(false), "{f:?}");
            }
            assert!(t.delivery_ratio.is_nan() && t.mean_goodput_pps.is_nan(), "{t:?}");
            assert!(t.min_goodput_pps.is_nan() && t.max_goodput_pps.is_nan(), "{t:?}");
            assert_eq!((t.feedback_packets, t.congestion_decreases), (Some(0), Some(0)));
        }

        /// README `flows[].goodput_pps`: an RCRT flow with a packet count is done when every
        /// packet arrived, and active to its last delivery but at least until its last packet
        /// was due (`count` intervals after its first), within the run: a count of 5 at 1 pkt/s
        /// ends long before the run does, one of 3 at 0.01 pkt/s (due 300 s after its first
        /// packet) with the run.
        #[test]
        fn an_rcrt_flow_with_a_count_is_active_until_done() {
            for (rate, count, due_after_end) in [("1.0", 5, false), ("0.01", 3, true)] {
                let (rate, n) = (format!("flows.0.rate_pps={rate}"), format!("flows.0.count={count}"));
                let r = go(&small(&["protocol.kind=\"rcrt\"", "duration_s=300", &rate, &n]));
                let end = r.network.end();
                let mut done = 0;
                for (f, nf) in r.summary.flows.iter().zip(r.network.flows()).filter(|(f, _)| f.delivered == count) {
                    let due = nf.first_tick.max(nf.start) + nf.interval.saturating_mul(count);
                    assert_eq!(due > end, due_after_end, "{f:?}");
                    let until = nf.last_delivery.max(due).min(end);
                    assert_eq!(f.goodput_pps, count as f64 / (until - nf.start).as_secs_f64(), "{f:?}");
                    assert_eq!(until < end, !due_after_end, "{f:?}");
                    done += 1;
                }
                assert!(done >= 4, "{:?}", r.summary.flows);
            }
        }

        /// An IFRC flow with a packet count has no time its last packet was due (IFRC sends on
        /// the controller's slots, not at `rate_pps`: summarize's comment): it is active until
        /// its last delivery, however slow its nominal rate.
        #[test]
        fn an_ifrc_flow_with_a_count_ends_with_its_last_delivery() {
            let set =
                ["protocol.kind=\"ifrc\"", "mac.preset=\"ifrc2006\"", "flows.0.payload_bytes=0", "flows.0.count=3"];
            let r = go(&small(&[&set[..], &["flows.0.rate_pps=0.01", "duration_s=600"]].concat()));
            let mut done = 0;
            for (f, nf) in r.summary.flows.iter().zip(r.network.flows()).filter(|(f, _)| f.delivered == 3) {
                assert_eq!(f.goodput_pps, 3.0 / (nf.last_delivery - nf.start).as_secs_f64(), "{f:?}");
                assert!(nf.last_delivery < nf.first_tick + nf.interval.saturating_mul(3), "{f:?}");
                done += 1;
            }
            assert!(done >= 4, "{:?}", r.summary.flows);
            // README `totals.protocol_counters`: IFRC's counters summed over all nodes.
            let counters = &r.summary.totals.protocol_counters;
            let nodes: Vec<Vec<(&str, u64)>> = (0..r.network.len()).map(|i| r.network.agent_counters(i)).collect();
            let total = |k: &str| nodes.iter().flatten().filter(|c| c.0 == k).map(|c| c.1).sum::<u64>();
            assert!(counters.iter().all(|(k, &v)| v == total(k)), "{counters:?}");
            assert!(nodes.iter().filter(|n| n.iter().any(|c| c.0 == "app_slots" && c.1 > 0)).count() > 1);
        }
    }

    mod audit36 {
        use super::*;

        fn go(text: &str) -> RunResult {
            super::audit35::go(&Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &[]).unwrap())
        }

        /// `unrouted_nodes`' doc: a node counts without a route when it has no parent "or, under the
        /// 2.x rule, a parent that lost its own route (no valid hop count)", and `cut_off_nodes` counts
        /// only nodes "with a route of their own". Chain 0–1–2–3 under MultiHopLQI-2.x (`tinyos2`)
        /// whose sink falls silent at 100 s: by the end node 2 keeps its parent 1 without a hop count.
        /// The depths (README `network.csv`) are over the routed nodes: a mean of their hop counts
        /// (the one routed node's own when there is one), 0 with the maximum when none is routed.
        #[test]
        fn a_2x_node_whose_parent_lost_its_route_is_unrouted() {
            let r = go("name = \"t\"\nduration_s = 400.0\n[topology]\n\
                        layout = { kind = \"chain\", nodes = 4, spacing_m = 6.0 }\n[mac]\npreset = \"tinyos2\"\n\
                        [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n\
                        [[outages]]\nnodes = [0]\nfrom_s = 100.0\n[output]\nplots = false\n");
            let (net, s) = (&r.network, &r.summary.routing);
            assert_eq!((net.parent(2, 0), net.hop_count(2, 0)), (Some(NodeId(1)), None), "the 2.x state");
            assert_eq!((s.unrouted_nodes, s.cut_off_nodes), (3, 0), "{s:?}");
            assert_eq!((s.max_depth, s.mean_depth), (0, 0.0), "{s:?}");
            assert!(s.max_depth_seen >= 2, "{s:?}");
            for b in &r.series {
                if b.routed == 0 {
                    assert_eq!((b.max_depth, b.mean_depth), (0, 0.0), "{b:?}");
                } else {
                    assert!(b.mean_depth >= 1.0 && b.mean_depth <= b.max_depth as f64, "{b:?}");
                }
            }
            assert!(r.series.iter().any(|b| b.routed == 1), "no bin with one routed node");
            assert_eq!(r.series.last().unwrap().routed, 0);
        }

        /// README `summary.json`: `median_max_depth` and `max_depth_p10_p90` are over "the bins while
        /// traffic flows"; every binned file stamps a bin at its end, so a bin ending exactly at the
        /// first flow's start covers time before it and is not one of them. Grid with sink 0 silent
        /// until 100 s (no routes), a flow from 100 s, 50-s bins: the bin ending at 100 s has depth 0,
        /// the two after it have routes.
        #[test]
        fn the_depth_percentiles_leave_out_a_bin_ending_at_the_traffic_start() {
            let r = go("name = \"t\"\nduration_s = 200.0\n[topology]\n\
                        layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                        [[flows]]\nsources = [8]\nrate_pps = 1.0\nstart_s = 100.0\n\
                        [[outages]]\nnodes = [0]\nfrom_s = 0.0\nto_s = 100.0\n\
                        [output]\nplots = false\ntimeseries_bin_s = 50.0\n");
            let depths: Vec<(f64, u32)> = r.series.iter().map(|b| (b.t_s, b.max_depth)).collect();
            assert_eq!(depths.len(), 4);
            assert_eq!(depths[1], (100.0, 0), "{depths:?}");
            let mut during = [depths[2].1, depths[3].1];
            during.sort_unstable();
            assert!(during[0] > 0, "{depths:?}");
            let s = &r.summary.routing;
            assert_eq!((s.median_max_depth, s.max_depth_p10_p90), (during[1], [during[0], during[1]]), "{s:?}");
        }

        /// README: "In every binned file (`timeseries.csv`, `network.csv`, `queues.csv`) `t_s` is the end
        /// of the bin; the last bin ends with the run." A 65-s run in 10-s bins: 7 bins, the last one
        /// 5 s wide, stamped 65 s, and the network ran to 65 s.
        #[test]
        fn the_last_bin_ends_with_the_run() {
            let r = go("name = \"t\"\nduration_s = 65.0\n[topology]\n\
                        layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                        [[flows]]\nsources = [8]\nrate_pps = 1.0\nstart_s = 10.0\n[output]\nplots = false\n");
            let stamps: Vec<f64> = r.series.iter().map(|b| b.t_s).collect();
            assert_eq!(stamps, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 65.0]);
            assert_eq!(r.network.now(), Instant::from_secs(65));
        }

        /// README `summary.json` / docs/rcrt.md "Outputs": the RCRT totals are over all sinks:
        /// `feedback_packets` (sent by all sinks), `congestion_decreases`, `feedback_by_trigger`
        /// per trigger, and `flows_expired`, `flows_revived` and `flows_replaced` each from its own
        /// counter. Two sinks (0 and 8) each serve flows from nodes 1–7; node 4's radio goes off at
        /// 100 s for good, so each paper-profile sink releases its flow (idle timeout: 300 s, or ten
        /// intervals of the flow's slowest rate if longer), which never comes back.
        #[test]
        fn rcrt_totals_add_up_every_sinks_counters() {
            let r = go("name = \"t\"\nduration_s = 2000.0\n[topology]\nsinks = [0, 8]\n\
                        layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                        [protocol]\nkind = \"rcrt\"\nprofile = \"paper\"\n\
                        [[flows]]\nsources = [1, 2, 3, 4, 5, 6, 7]\nsink = 0\nrate_pps = 1.0\nstart_s = 10.0\n\
                        [[flows]]\nsources = [1, 2, 3, 4, 5, 6, 7]\nsink = 8\nrate_pps = 1.0\nstart_s = 10.0\n\
                        [[outages]]\nnodes = [4]\nfrom_s = 100.0\n[output]\nplots = false\n");
            let (net, t) = (&r.network, &r.summary.totals);
            let sinks: Vec<&wsn_proto::rcrt::SinkStats> =
                net.sinks().iter().map(|s| net.rcrt_sink(*s).expect("an RCRT sink").stats()).collect();
            assert_eq!(sinks.len(), 2);
            let sum = |g: fn(&wsn_proto::rcrt::SinkStats) -> u64| Some(sinks.iter().map(|s| g(s)).sum::<u64>());
            assert_eq!(t.feedback_packets, sum(|s| s.feedback_sent));
            assert_eq!(t.congestion_decreases, sum(|s| s.decreases));
            assert_eq!(t.flows_expired, sum(|s| s.flows_expired));
            assert_eq!(t.flows_revived, sum(|s| s.flows_revived));
            assert_eq!(t.flows_replaced, sum(|s| s.flows_replaced));
            // Preconditions: both sinks released a flow, fewer came back than left, and both sent
            // feedback of one trigger at least, so that a sink left out or a swapped counter shows.
            assert!(sinks.iter().all(|s| s.flows_expired > 0 && s.feedback_sent > 0), "{sinks:?}");
            assert!(t.flows_revived < t.flows_expired && t.flows_replaced != t.flows_expired, "{t:?}");
            let by = t.feedback_by_trigger.as_ref().unwrap();
            let per = |s: &wsn_proto::rcrt::SinkStats| {
                let b = s.feedback_sent_by;
                [b.new_loss, b.rate_differs, b.duplicate, b.ack_request, b.decrease, b.fin, b.timer]
            };
            let names = ["new_loss", "rate_differs", "duplicate", "ack_request", "decrease", "fin", "timer"];
            for (k, name) in names.iter().enumerate() {
                assert_eq!(by[*name], per(sinks[0])[k] + per(sinks[1])[k], "{name}: {by:?}");
            }
            assert!((0..7).any(|k| per(sinks[0])[k] > 0 && per(sinks[1])[k] > 0), "{sinks:?}");
        }
    }
}
