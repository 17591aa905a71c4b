//! Scenario files: TOML describing topology, radio, MAC preset, routing, flows, protocol,
//! duration, seed and outputs.
//!
//! Loading is `text → TOML document → --set overrides → typed Scenario`. Unknown keys are errors
//! (a typo never silently falls back to a default), and every error names the field and, for
//! keys written in the file, the line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::mac::MacConfig;
use crate::radio::noise::NoiseConfig;
use crate::routing::mhlqi::MhlqiConfig;
use crate::routing::reverse::ReverseConfig;
use crate::topology::{LinkModel, Placement};

/// A complete scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in outputs.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Master seed of every random stream of the run.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated duration, seconds.
    pub duration_s: f64,
    /// Node placement and sinks.
    pub topology: TopologyConfig,
    /// Channel model.
    #[serde(default)]
    pub radio: RadioConfig,
    /// MAC preset and overrides (any field of [`MacConfig`]); resolved by [`Scenario::mac`].
    #[serde(default)]
    pub mac: toml::Table,
    /// Tree routing.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// The protocol every node runs.
    #[serde(default)]
    pub protocol: ProtocolConfig,
    /// Traffic.
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Radio outages: nodes whose radio is off for a while.
    #[serde(default)]
    pub outages: Vec<OutageConfig>,
    /// What to write.
    #[serde(default)]
    pub output: OutputConfig,
    /// Directory that relative paths in the scenario are resolved against (not a TOML key).
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// Things the loader accepted but that look like a slip (keys it ignores), for the caller
    /// to show; not part of the scenario.
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// Where the scenario came from (its file, or "built-in scenario NAME"), for messages.
    #[serde(skip)]
    pub origin: String,
    /// The scenario's text as written, to point messages at the line of a key.
    #[serde(skip)]
    source_text: String,
    /// The `--set` overrides applied, as given.
    #[serde(skip)]
    overrides: Vec<String>,
}

fn one() -> u64 {
    1
}

/// Placement, sinks and (optionally) measured gains.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    /// Where the nodes are.
    pub layout: Placement,
    /// Sink (tree root) node ids.
    #[serde(default = "default_sinks")]
    pub sinks: Vec<u16>,
    /// Seed of placement and shadowing: fixed by default so that a topology is the same "testbed"
    /// whatever the run seed.
    #[serde(default = "one")]
    pub seed: u64,
    /// TOSSIM gain file to use instead of the generated link gains.
    #[serde(default)]
    pub gains_file: Option<String>,
}

fn default_sinks() -> Vec<u16> {
    vec![0]
}

/// Channel model options.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RadioConfig {
    /// Log-normal shadowing link model.
    pub link: LinkModel,
    /// Noise model.
    pub noise: NoiseConfig,
    /// Links whose received power is below (lowest noise − margin) are pruned: they can neither
    /// be decoded nor add noticeable energy [REC spec §2.3: 15 dB]. Generated links only: a gain
    /// file's links are all kept (spec §2.3's "no pruning" for TOSSIM equivalence).
    pub prune_margin_db: f64,
    /// Add each node's noise-floor offset δ_i (hardware variance) to its noise [REC spec §2.2].
    pub noise_offsets: bool,
    /// Scale the PRR exponent with frame length instead of TOSSIM's fixed 46 [AMBIG-3 → off].
    pub prr_length_scaling: bool,
    /// Probability that a lost unicast frame still triggers the sender's ACK [CODE t2: 0.001].
    pub false_ack_prob: f64,
    /// Reception curve: `cc2420` (TOSSIM's CC2420 fit, default) or `ieee802154` (the standard's
    /// O-QPSK BER formula as ns-3 lr-wpan uses it, to mirror ns-3 runs).
    pub prr_curve: PrrCurve,
    /// How a receiver takes a frame: `tossim` (default; spec §4.2 R2–R3: a coin at the first
    /// bit, another at the last, a pairwise SIR coin per newcomer, as TOSSIM's CpmModelC) or
    /// `ns3` (ns-3.37 lr-wpan's PHY, for mirroring ns-3 runs; needs `prr_curve = "ieee802154"`).
    pub reception: Reception,
}

/// The receiver's frame-acceptance rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Reception {
    /// Spec §4.2 R2–R3 (TOSSIM CpmModelC): a PRR coin on the SINR at the frame's first bit
    /// decides whether the radio locks on it; a second coin on the SINR at its last bit decides
    /// reception; each newcomer draws a pairwise SIR coin against every earlier arrival.
    #[default]
    Tossim,
    /// ns-3.37 lr-wpan (`LrWpanPhy::StartRx`, `CheckInterference`, `EndRx`): an idle radio locks
    /// on a frame whose SINR at the first bit exceeds −5 dB, without a coin; a radio already
    /// locked treats newcomers as interference only. The locked frame's error chance is charged
    /// in chunks over the whole PPDU (PHY header included): one coin per chunk with
    /// (1 − BER)^bits at the SINR of the moment the chunk is checked (when a newcomer arrives
    /// and at the last bit); interference that ends between two checks is not charged.
    /// [CODE ns-3.37 src/lr-wpan/model/lr-wpan-phy.cc]
    Ns3,
}

/// Which PRR(SINR) curve judges frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PrrCurve {
    /// TOSSIM's CC2420 curve (spec §4.1).
    #[default]
    Cc2420,
    /// IEEE 802.15.4 O-QPSK BER curve (ns-3 lr-wpan).
    Ieee802154,
}

/// The default of `radio.prune_margin_db` [REC spec §2.3: 15 dB].
pub(crate) fn default_prune_margin_db() -> f64 {
    15.0
}

impl Default for RadioConfig {
    fn default() -> Self {
        RadioConfig {
            link: LinkModel::default(),
            noise: NoiseConfig::Cpm {
                trace: "data/noise/meyer-heavy.txt".into(),
                history: 20,
                reset_gap_s: 10.0,
                max_samples: None,
            },
            prune_margin_db: default_prune_margin_db(),
            noise_offsets: true,
            prr_length_scaling: false,
            false_ack_prob: 0.001,
            prr_curve: PrrCurve::Cc2420,
            reception: Reception::Tossim,
        }
    }
}

/// Which routing the nodes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutingKind {
    /// MultiHopLQI with dynamic parents (spec §6.1).
    Mhlqi,
    /// A fixed tree read from `tree_file` (beacons are still sent, as frozen MultiHopLQI).
    Static,
    /// A fixed minimum-hop tree computed from the link gains over links whose SNR above the
    /// link model's noise floor is at least `shortest_snr_db` in both directions (ties: the
    /// strongest link). For large networks where MultiHopLQI would need hours to converge.
    Shortest,
}

/// Routing options.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// Dynamic MultiHopLQI or a static tree.
    pub kind: RoutingKind,
    /// CSV with `node,parent` columns (parent −1 for the sink), for `kind = "static"`.
    pub tree_file: Option<String>,
    /// Freeze every parent at this time (seconds); beacons continue.
    pub freeze_after_s: Option<f64>,
    /// The good-tree freeze: at `freeze_after_s`, a node whose link to its parent is expected
    /// to carry less than this share of frames in either direction on a quiet channel (the
    /// channel model, over the noise model's levels) moves to its shallowest neighbour with a
    /// good link whose path avoids it and has no weak link ([`crate::routing::good_tree`]). In (0, 1]; unset (the
    /// default) keeps MultiHopLQI's tree as it stands. The IFRC paper's frozen tree had links of
    /// 66–96 % \[PAPER IFRC §6.1, Fig. 5\].
    pub freeze_min_prr: Option<f64>,
    /// Link SNR threshold of `kind = "shortest"`, dB.
    pub shortest_snr_db: f64,
    /// MultiHopLQI parameters.
    pub mhlqi: MhlqiConfig,
    /// Reverse-path (children table) parameters.
    pub reverse: ReverseConfig,
    /// Initial TTL of a routed packet: a path may have up to TTL + 1 hops. [CODE tenet1:
    /// routinglayer.h RT_DEFAULT_TTL = 20] Deeper synthetic networks (`wsn bench`'s grids) need
    /// more.
    pub ttl: u8,
    /// Forwarders drop copies of a packet they already accepted (retransmissions after a lost
    /// ACK); false lets every copy travel to its destination, as Tenet's and the IFRC authors'
    /// forwarding do ([`wsn_proto::forwarder::ForwarderConfig::hop_dedup`]). Default true.
    pub hop_dedup: bool,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            kind: RoutingKind::Mhlqi,
            tree_file: None,
            freeze_after_s: None,
            freeze_min_prr: None,
            shortest_snr_db: 10.0,
            mhlqi: MhlqiConfig::default(),
            reverse: ReverseConfig::default(),
            ttl: wsn_wire::collection::DEFAULT_TTL,
            hop_dedup: true,
        }
    }
}

/// The protocol run on top of the MAC.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProtocolConfig {
    /// Fixed-rate best-effort collection over the generic collection forwarder.
    #[default]
    BestEffort,
    /// RCRT: end-to-end NACK recovery with congestion detection, AIMD on the total rate and a
    /// per-sink allocation policy; every flow's `rate_pps` is its application's generation rate
    /// and `demand_pps` (default: `rate_pps`) the demand declared in the SYN.
    Rcrt(RcrtConfig),
    /// Reliable without congestion control: RCRT's end-to-end recovery with every flow paced
    /// at its offered load (`rate_pps`) and no rate adaptation (RCRT paper §4.2.2 baseline).
    Reliable(RcrtConfig),
    /// IFRC: hop-by-hop interference-aware rate control (Rangwala et al., SIGCOMM 2006). Every
    /// node's rate controller paces its flows; a flow's `rate_pps` is ignored (its application
    /// always has data while the flow is active).
    Ifrc(IfrcScenario),
}

/// IFRC options. Unset numbers take the profile's values (the paper's Table 1 by default).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct IfrcScenario {
    /// `paper` (default) or `reference_code` (the authors' TinyOS code where it differs).
    pub profile: RcrtProfile,
    /// Weights w_i by node id (default 1): node i originates at w_i·r_i [PAPER §4.2].
    pub weights: std::collections::BTreeMap<String, f64>,
    /// Additive-increase parameter ε, 1/packet.
    pub epsilon: Option<f64>,
    /// EWMA weight of the queue average.
    pub w_q: Option<f64>,
    /// Lower threshold L, packets.
    pub lower: Option<f64>,
    /// First upper threshold U(0), packets.
    pub u0: Option<f64>,
    /// Threshold increment I, packets.
    pub increment: Option<f64>,
    /// Initial rate r_init, pkt/s.
    pub r_init: Option<f64>,
    /// Slow-start increment φ, pkt/s (default r_init / 8 when r_init is set).
    pub phi: Option<f64>,
    /// Base-station pseudo-rate at start, pkt/s.
    pub bs_initial_rate: Option<f64>,
    /// How δ follows from ε: `per_decrease` (δ = ε·r² whenever r is lowered; default) or
    /// `global` (one δ = ε·`global_r_min`²).
    pub delta_rule: Option<String>,
    /// r̂_min of `delta_rule = "global"`, pkt/s.
    pub global_r_min: Option<f64>,
    /// Slow-start exit: `recommended` (default; the spec's AMBIG-8 deviation) or `literal`.
    pub slow_start_exit: Option<String>,
    /// Slow start: `paper` (default in both profiles) or `ss_thresh` (the authors' code's
    /// ssThresh slow start and START → HALF step; under the reference-code profile also the
    /// code's header extension and the rules that read it; docs/ifrc.md, the sections marked
    /// session 27 and 27 (2)).
    pub slow_start_rule: Option<String>,
    /// Congestion sharing: `crossing` (default; rule 2 fires on threshold crossings) or
    /// `pinned` (any heard congested node with a lower rate constrains).
    pub sharing: Option<String>,
    /// Skip an own halving when Rule 1 or 2 lowered the rate since the last tick (the authors'
    /// code's `decLastCycle`; on in the reference-code profile, off in the paper profile).
    pub skip_halving_after_sharing: Option<bool>,
    /// Queue a received data frame and check the own thresholds before that frame's sharing
    /// rules run (the authors' code's order; on in the reference-code profile, off in the paper
    /// profile).
    pub rules_after_queue_check: Option<bool>,
    /// Arithmetic of the queue average: `float` (the paper profile's) or `fixed_point` (the
    /// reference-code profile's: whole hundredths of a packet, truncated at every update; needs a
    /// `w_q` that is a whole number of hundredths).
    pub queue_average: Option<String>,
    /// Start every node's rate controller and the base station's control packets at the first
    /// flow's start instead of at boot (the authors' code; on in the reference-code profile, off
    /// in the paper profile, whose silent nodes adapt from boot).
    pub start_with_traffic: Option<bool>,
    /// The base station raises r_b only when it sends a control packet, by slope·δ × the period
    /// that ended (the authors' code; on in the reference-code profile, off in the paper
    /// profile, whose r_b grows on its own 1/r_b timer).
    pub bs_increase_at_control: Option<bool>,
    /// The base station's first control packet as soon as rate control starts (the authors'
    /// code; on in the reference-code profile). Needs the code's timer-paced control packets.
    pub bs_control_at_start: Option<bool>,
    /// The first rate tick after the code's jittered period 1/(r_init·(1 + k/15)), k = 0…15,
    /// instead of a uniform phase within 1/r_init (on in the reference-code profile).
    pub code_first_tick: Option<bool>,
}

/// RCRT options.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RcrtConfig {
    /// `paper` (default) or `reference_code` (every difference of the spec's §6).
    pub profile: RcrtProfile,
    /// Allocation policy of every sink: fair, demand_limited, demand_proportional, weighted,
    /// fair_goodput.
    pub policy: String,
    /// Per-sink policy, by sink id (overrides `policy`).
    pub sink_policies: std::collections::BTreeMap<String, String>,
    /// Policy changes at run time (no change at the sources).
    pub policy_changes: Vec<PolicyChange>,
    /// Weights of sources for the weighted policy, by source id (default 1).
    pub weights: std::collections::BTreeMap<String, f64>,
    /// Retransmit-buffer bound of every source, packets (default: the profile's).
    pub buffer_packets: Option<usize>,
    /// Override the profile's congestion-level formula: `paper` (|ooo| / (r_i·RTT_i)) or
    /// `reference_code` (((|ooo| − 1) + (|missing| − 1)) / max(r_i·RTT_i, 0.1) + timeouts).
    /// See docs/rcrt.md: the paper's formula collapses when r_i·RTT_i ≪ 1.
    pub level_formula: Option<RcrtProfile>,
    /// Override the gain of the sink's C_i EWMA, in (0, 1] (default 0.5 in both profiles: the
    /// paper gives none, the code uses 0.5 [spec AMBIG-7]). For sensitivity studies; see
    /// docs/rcrt.md.
    pub congestion_gain: Option<f64>,
    /// Model the Tenet mote stack: a source (all of a node's sources together) hands the
    /// routing layer its next datagram only after the link layer is done with the previous one
    /// [CODE RcrTransportM.nc `sending`; spec §3.8, §3.12], and the routing layer keeps one
    /// queue slot beyond the MAC preset's bound for that datagram [CODE tenet1 RoutingLayerM.nc
    /// `_QUEUE_SIZE = FWD_Q_SIZE + 1`], so forwarded traffic cannot crowd it out; a refused
    /// datagram would be retried every 10 ms, never dropped. `false`: one shared queue bound,
    /// and a source hands over datagrams as soon as it builds them (a refused one is retried
    /// every 10 ms; the source keeps the rest).
    pub one_datagram_in_flight: bool,
    /// Lowest token count a slow-down can leave at a source, from −128 (the reference code's
    /// `int8_t`, the default in both profiles) to 0. −1 stops the "skip one token on slow-down"
    /// deficit at one token (spec AMBIG-16). For sensitivity studies; see docs/rcrt.md.
    pub slow_down_token_floor: Option<i8>,
}

impl Default for RcrtConfig {
    fn default() -> Self {
        RcrtConfig {
            profile: RcrtProfile::Paper,
            policy: "fair".into(),
            sink_policies: Default::default(),
            policy_changes: Vec::new(),
            weights: Default::default(),
            buffer_packets: None,
            level_formula: None,
            congestion_gain: None,
            one_datagram_in_flight: true,
            slow_down_token_floor: None,
        }
    }
}

/// RCRT behaviour profile.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum RcrtProfile {
    /// The paper's algorithm (default).
    #[default]
    Paper,
    /// The authors' reference code.
    ReferenceCode,
}

/// A policy switch at run time.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PolicyChange {
    /// When, seconds.
    pub at_s: f64,
    /// Which sink.
    pub sink: u16,
    /// The new policy.
    pub policy: String,
}

impl ProtocolConfig {
    /// Name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            ProtocolConfig::BestEffort => "best_effort",
            ProtocolConfig::Rcrt(c) => match c.profile {
                RcrtProfile::Paper => "rcrt",
                RcrtProfile::ReferenceCode => "rcrt_reference_code",
            },
            ProtocolConfig::Reliable(_) => "reliable_no_cc",
            ProtocolConfig::Ifrc(c) => match c.profile {
                RcrtProfile::Paper => "ifrc",
                RcrtProfile::ReferenceCode => "ifrc_reference_code",
            },
        }
    }
}

/// Which nodes a flow entry covers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Sources {
    /// `"all"`: every node that is not a sink (one flow each).
    Keyword(String),
    /// One node.
    One(u16),
    /// A list of nodes (one flow each).
    List(Vec<u16>),
}

/// A radio outage (`[[outages]]`): from `from_s` to `to_s` the radios of `nodes` are off. They
/// neither send nor receive (so they acknowledge nothing); everything else goes on: the
/// applications generate, the queues fill and overflow, the timers of routing and transport
/// fire. A frame the node has on the air when the outage starts finishes; its MAC contends
/// afresh when the radio is back. A model of a node cut off for a while (an obstacle, a flat
/// battery that recovers), not of a reboot: no state is lost.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OutageConfig {
    /// The nodes (one id or a list).
    pub nodes: OutageNodes,
    /// Start of the outage, s.
    pub from_s: f64,
    /// End of the outage, s (default: the end of the run).
    #[serde(default)]
    pub to_s: Option<f64>,
}

/// The nodes of an outage.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OutageNodes {
    /// One node.
    One(u16),
    /// Several nodes.
    List(Vec<u16>),
}

impl OutageNodes {
    /// The node ids.
    pub fn ids(&self) -> Vec<u16> {
        match self {
            OutageNodes::One(n) => vec![*n],
            OutageNodes::List(v) => v.clone(),
        }
    }
}

/// One traffic entry (expanded to one flow per source).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Source node(s).
    pub sources: Sources,
    /// Destination sink (default: the first sink).
    #[serde(default)]
    pub sink: Option<u16>,
    /// Offered rate, packets per second (required except under IFRC, whose rate controller
    /// paces every flow).
    #[serde(default)]
    pub rate_pps: Option<f64>,
    /// Start time, s (each source starts at a random phase within one interval after it).
    #[serde(default)]
    pub start_s: f64,
    /// Stop time, s (default: end of run).
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// Stop after this many packets.
    #[serde(default)]
    pub count: Option<u64>,
    /// Application payload per packet, bytes.
    #[serde(default = "default_payload")]
    pub payload_bytes: usize,
    /// Demand, packets per second (used by rate-allocating protocols; informational here).
    #[serde(default)]
    pub demand_pps: Option<f64>,
    /// Start each source at a random phase within one interval (false: all exactly at
    /// `start_s`, as synchronised test senders).
    #[serde(default = "yes")]
    pub random_phase: bool,
}

fn yes() -> bool {
    true
}

fn default_payload() -> usize {
    64
}

/// Output switches.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Write the packet trace `trace.csv`.
    pub trace: bool,
    /// Write every frame on the air to `frames.pcap` (IEEE 802.15.4 link type).
    pub pcap: bool,
    /// Write PNG/SVG plots.
    pub plots: bool,
    /// Bin width of the time series, s.
    pub timeseries_bin_s: f64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig { trace: false, pcap: false, plots: true, timeseries_bin_s: 10.0 }
    }
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// TOML syntax or a field with a bad value (the message names field and line).
    #[error("{origin}: {message}")]
    Invalid {
        /// File name or "built-in scenario".
        origin: String,
        /// What is wrong, with field and line.
        message: String,
    },
}

/// Built-in scenarios, by name.
pub const BUILTIN: [(&str, &str); 3] = [
    ("rcrt-baseline", include_str!("../../../scenarios/rcrt/baseline.toml")),
    ("office40", include_str!("../../../scenarios/office40.toml")),
    ("lrwpan40", include_str!("../../../scenarios/bench/lrwpan40.toml")),
];

impl Scenario {
    /// Load a scenario from a file path or a built-in name, applying `key=value` overrides.
    pub fn load(spec: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let path = Path::new(spec);
        let builtin = BUILTIN.iter().find(|(n, _)| *n == spec);
        // A folder of the same name (e.g. `--out office40` in the current folder) does not hide
        // a built-in scenario.
        if path.exists() && !(path.is_dir() && builtin.is_some()) {
            if path.is_dir() {
                return Err(ScenarioError::Io {
                    path: spec.into(),
                    source: std::io::Error::other("is a folder, not a scenario file"),
                });
            }
            let text = read_scenario_text(path).map_err(|source| ScenarioError::Io { path: spec.into(), source })?;
            // Absolute, so that where data files are looked for does not depend on how the
            // file was named (`x.toml`, `../x.toml`).
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let base = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
            return Self::from_toml(&text, spec, base, overrides);
        }
        match builtin {
            Some((_, text)) => Self::from_toml(text, &format!("built-in scenario {spec}"), builtin_base(), overrides),
            None => Err(ScenarioError::Io {
                path: spec.into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "no such file, and not a built-in scenario (built-ins: {})",
                        BUILTIN.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
                    ),
                ),
            }),
        }
    }

    /// Parse scenario text. `origin` names the source in error messages.
    pub fn from_toml(
        text: &str,
        origin: &str,
        base_dir: PathBuf,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        let invalid = |message: String| ScenarioError::Invalid {
            origin: origin.into(),
            message: short_long_numbers(&token_floor_range(plain_types(message)), text, overrides),
        };
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
        if doc.as_table().is_empty() {
            // Said plainly: serde's first complaint would be "missing field `name`" at line 1.
            return Err(invalid(
                "the scenario is empty (no keys, only blank lines or comments); a scenario needs at least `name`, \
                 `duration_s` and a [topology] (see scenarios/office40.toml, or `wsn run office40`)"
                    .into(),
            ));
        }
        for o in overrides {
            apply_override(&mut doc, o).map_err(invalid)?;
        }
        default_protocol_kind(&mut doc).map_err(invalid)?;
        // The file itself when no override changed it, but for an empty `[protocol]` header
        // turned into a comment of the same length (serde's default then runs best effort, as
        // the `kind` inserted above would): the parser's lines and spans are then the file's.
        let parsed = match overrides.is_empty().then(|| empty_protocol_commented(text)).flatten() {
            Some(same_spans) => same_spans,
            None => doc.to_string(),
        };
        let mut sc: Scenario = match toml::from_str(&parsed) {
            Ok(sc) => sc,
            Err(e) => return Err(invalid(with_line(text, overrides, explain(text, &doc, overrides, &e)))),
        };
        sc.base_dir = base_dir;
        sc.origin = origin.into();
        sc.source_text = text.into();
        sc.overrides = overrides.to_vec();
        if sc.protocol == ProtocolConfig::BestEffort {
            // `kind = "best_effort"` takes no parameters; the keys are accepted so that
            // `--set protocol.kind=best_effort` works on a scenario of another protocol.
            let ignored: Vec<String> = doc
                .get("protocol")
                .and_then(|p| p.as_table_like())
                .map(|t| t.iter().filter(|(k, _)| *k != "kind").map(|(k, _)| format!("protocol.{k}")).collect())
                .unwrap_or_default();
            if !ignored.is_empty() {
                sc.warnings.push(format!(
                    "protocol.kind = \"best_effort\" takes no parameters; ignoring {}",
                    ignored.join(", ")
                ));
            }
        }
        sc.validate().map_err(|m| invalid(with_line(text, overrides, m)))?;
        for (i, o) in sc.outages.iter().enumerate() {
            if o.from_s >= sc.duration_s {
                sc.warnings.push(format!(
                    "outages[{i}] starts at {} s, not before the run ends (duration_s = {}): it has no effect",
                    short_num(o.from_s),
                    short_num(sc.duration_s)
                ));
            }
        }
        if sc.routing.tree_file.is_some() && sc.routing.kind != RoutingKind::Static {
            sc.warnings.push(format!(
                "routing.tree_file is used only with routing.kind = \"static\"; ignored with \"{}\"",
                if sc.routing.kind == RoutingKind::Mhlqi { "mhlqi" } else { "shortest" }
            ));
        }
        // Keys of one routing kind given under another run without effect: say so.
        let routing_keys: Vec<String> = doc
            .get("routing")
            .and_then(|r| r.as_table_like())
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        let kind_name = match sc.routing.kind {
            RoutingKind::Mhlqi => "mhlqi",
            RoutingKind::Static => "static",
            RoutingKind::Shortest => "shortest",
        };
        // (`routing.mhlqi` applies to every kind: static and shortest trees keep the beacons.)
        for (key, only) in [("shortest_snr_db", "shortest"), ("freeze_after_s", "mhlqi"), ("freeze_min_prr", "mhlqi")] {
            if routing_keys.iter().any(|k| k == key) && kind_name != only {
                sc.warnings.push(format!(
                    "routing.{key} is used only with routing.kind = \"{only}\"; ignored with \"{kind_name}\""
                ));
            }
        }
        if sc.routing.freeze_min_prr.is_some() && sc.routing.freeze_after_s.is_none() && kind_name == "mhlqi" {
            sc.warnings.push(
                "routing.freeze_min_prr acts at the freeze, and routing.freeze_after_s is not set: it has no effect"
                    .to_string(),
            );
        }
        if let Some(t) = sc.routing.freeze_after_s.filter(|&t| t >= sc.duration_s && kind_name == "mhlqi") {
            sc.warnings.push(format!(
                "routing.freeze_after_s = {} s is not before the run ends (duration_s = {}): it has no effect",
                short_num(t),
                short_num(sc.duration_s)
            ));
        }
        if matches!(sc.protocol, ProtocolConfig::Reliable(_)) {
            // The baseline paces every flow at its demand (demand-limited at every sink, all run).
            // (A `policy` that says "demand_limited" asks for what the baseline does: nothing to ignore.)
            let protocol = doc.get("protocol").and_then(|p| p.as_table_like());
            let given: Vec<String> = ["policy", "sink_policies", "policy_changes", "weights"]
                .iter()
                .filter(|k| {
                    protocol
                        .and_then(|t| t.get(k))
                        .is_some_and(|v| !(**k == "policy" && v.as_str() == Some("demand_limited")))
                })
                .map(|k| format!("protocol.{k}"))
                .collect();
            if !given.is_empty() {
                sc.warnings.push(format!(
                    "protocol.kind = \"reliable\" gives every flow its demand (demand-limited at every sink, for the \
                     whole run); ignoring {}",
                    given.join(", ")
                ));
            }
        }
        if let ProtocolConfig::Rcrt(c) = &sc.protocol {
            let weighted = c.policy == "weighted"
                || c.sink_policies.values().any(|p| p == "weighted")
                || c.policy_changes.iter().any(|pc| pc.policy == "weighted");
            if !c.weights.is_empty() && !weighted {
                sc.warnings.push(format!(
                    "protocol.weights are used only by the \"weighted\" policy; ignored with \"{}\"",
                    c.policy
                ));
            }
            // Two switches of one sink at the same time: both run, in list order, so the earlier
            // one's policy never allocates on its own (switching to it still acts once: every
            // policy but `weighted` caps R at the sum of the demands, `Sink::set_policy`).
            for (i, pc) in c.policy_changes.iter().enumerate() {
                if let Some(j) = c.policy_changes[i + 1..].iter().position(|q| q.sink == pc.sink && q.at_s == pc.at_s) {
                    sc.warnings.push(format!(
                        "protocol.policy_changes[{i}] and [{}] both switch sink {} at {} s: they run in list order, so \
                         \"{}\" follows \"{}\" at once (which still caps R at the flows' demands unless it is \
                         \"weighted\")",
                        i + 1 + j,
                        pc.sink,
                        short_num(pc.at_s),
                        c.policy_changes[i + 1 + j].policy,
                        pc.policy
                    ));
                }
            }
            for (i, pc) in c.policy_changes.iter().enumerate() {
                if pc.at_s >= sc.duration_s {
                    sc.warnings.push(format!(
                        "protocol.policy_changes[{i}] is at {} s, not before the run ends (duration_s = {}): it has no effect",
                        short_num(pc.at_s),
                        short_num(sc.duration_s)
                    ));
                }
            }
        }
        if matches!(sc.protocol, ProtocolConfig::Ifrc(_)) {
            // IFRC's controller paces the flows, and shares congestion by overhearing.
            for (i, f) in sc.flows.iter().enumerate() {
                if let Some(r) = f.rate_pps {
                    sc.warnings.push(format!(
                        "flows[{i}].rate_pps = {r} is ignored under IFRC: each node's rate controller paces its flow"
                    ));
                }
            }
            if let Ok(mac) = sc.mac() {
                if !mac.promiscuous {
                    sc.warnings.push(format!(
                        "IFRC shares congestion by overhearing, but mac.promiscuous = false (preset {}): \
                         nodes hear only frames addressed to them",
                        mac.preset
                    ));
                }
                if let ProtocolConfig::Ifrc(c) = &sc.protocol {
                    // (Errors in these keys are reported when the run starts.)
                    if let Ok(cfg) = crate::ifrc::config(c, &mac) {
                        let unreachable: Vec<String> = cfg
                            .thresholds()
                            .into_iter()
                            .filter(|&u| u >= cfg.queue_capacity as f64)
                            .map(short_num)
                            .collect();
                        if !unreachable.is_empty() {
                            sc.warnings.push(format!(
                                "IFRC thresholds {} lie at or above the {}-packet queue (preset {}): they can never \
                                 be crossed",
                                unreachable.join(", "),
                                cfg.queue_capacity,
                                mac.preset
                            ));
                        }
                    }
                    if c.global_r_min.is_some() && c.delta_rule.as_deref() != Some("global") {
                        sc.warnings.push(
                            "protocol.global_r_min is used only with protocol.delta_rule = \"global\": ignored".into(),
                        );
                    }
                }
            }
        }
        // Nodes closer than D0 share the path loss at D0 (the link model's floor), and a dense
        // random placement keeps such pairs after its redraws: say so. (LinkLayerModel refuses a
        // grid spacing below D0 and uniform cells below 1.4·D0.)
        // (With a gain file the layout does not set the gains.)
        let d0 = sc.radio.link.d0_m;
        match sc.topology.layout {
            _ if sc.topology.gains_file.is_some() => {}
            // (A spacing or area that is not positive is refused when the layout is built.)
            crate::topology::Placement::Grid { nodes, spacing_m } if nodes > 1 && spacing_m < d0 && spacing_m > 0.0 => {
                sc.warnings.push(format!(
                    "topology.layout: grid spacing {} m is below D0 = {d0} m: neighbours get the path loss at D0",
                    short_num(spacing_m)
                ));
            }
            crate::topology::Placement::Chain { nodes, spacing_m }
                if nodes > 1 && spacing_m < d0 && spacing_m > 0.0 =>
            {
                sc.warnings.push(format!(
                    "topology.layout: chain spacing {} m is below D0 = {d0} m: neighbours get the path loss at D0",
                    short_num(spacing_m)
                ));
            }
            crate::topology::Placement::Uniform { nodes, width_m, height_m }
            | crate::topology::Placement::Random { nodes, width_m, height_m }
                if nodes > 1
                    && width_m > 0.0
                    && height_m > 0.0
                    && width_m * height_m / (nodes as f64) < (1.4 * d0) * (1.4 * d0) =>
            {
                sc.warnings.push(format!(
                    "topology.layout: {nodes} nodes on {} m² leave each less than (1.4·D0)² = {} m²: some nodes \
                     will sit closer than D0 = {d0} m to another and get the path loss at D0",
                    short_num(width_m * height_m),
                    short_num((1.4 * d0) * (1.4 * d0))
                ));
            }
            _ => {}
        }
        if let Ok(mac) = sc.mac() {
            if mac.ack == crate::mac::AckMode::Hardware && mac.promiscuous {
                sc.warnings.push(format!(
                    "mac.promiscuous = true with hardware ACKs (preset {}): no CC2420 does both (its automatic \
                     ACK needs the address recognition that drops frames addressed to others, spec §5.4); \
                     the run models an idealised MAC",
                    mac.preset
                ));
            }
            if !mac.ieee802154_csma {
                // These keys shape only the IEEE 802.15.4 CSMA-CA; the TinyOS presets' fixed
                // backoff windows ignore them (and so skip their range checks).
                for k in
                    ["csma_min_be", "csma_max_be", "csma_max_backoffs"].into_iter().filter(|k| sc.mac.contains_key(*k))
                {
                    sc.warnings.push(format!(
                        "mac.{k} has no effect: preset {} uses TinyOS's fixed backoff windows, not IEEE 802.15.4 \
                         CSMA-CA (set mac.ieee802154_csma = true for that)",
                        mac.preset
                    ));
                }
            }
        }
        for (i, f) in sc.flows.iter().enumerate() {
            if f.start_s >= sc.duration_s {
                sc.warnings.push(format!(
                    "flows[{i}] starts at {} s, not before the run ends (duration_s = {}): it sends nothing",
                    short_num(f.start_s),
                    short_num(sc.duration_s)
                ));
            }
        }
        let offered = sc.offered_packets();
        if offered > WARN_OFFERED_PACKETS {
            sc.warnings.push(format!(
                "the flows offer about {} packets over duration_s = {} s (rate_pps × sources × time sending): \
                 at about 1 µs of wall time per packet (one refused at a full queue; one that travels costs \
                 more), this run may take {} or more; shorten duration_s or lower the rates",
                short_num(offered.round()),
                short_num(sc.duration_s),
                wall_hint(offered * 1e-6)
            ));
        }
        Ok(sc)
    }

    /// The number of nodes the layout places: its `nodes`, or the rows of its positions file
    /// (the header line left out; 0 when the file cannot be read, which a run reports itself).
    /// For estimates made before the topology is built.
    pub fn layout_nodes(&self) -> usize {
        use crate::topology::Placement;
        match &self.topology.layout {
            Placement::Grid { nodes, .. }
            | Placement::Uniform { nodes, .. }
            | Placement::Random { nodes, .. }
            | Placement::Chain { nodes, .. } => *nodes,
            Placement::File { path } => self
                .resolve("topology.layout.path", path)
                .ok()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .map_or(0, |t| t.lines().filter(|l| !l.trim().is_empty()).count().saturating_sub(1)),
        }
    }

    /// The packets the flows' applications generate over the run, as their rates, sources, start
    /// and stop times and counts say (IFRC's flows, paced by the rate controller, left out). A
    /// flow to `"all"` counts every node but the sinks, as many as the layout has (read from a
    /// positions file; taken as 1 when the file cannot be read, which the run reports).
    fn offered_packets(&self) -> f64 {
        let all = self.layout_nodes().saturating_sub(self.topology.sinks.len()).max(1);
        let mut total = 0.0;
        for f in &self.flows {
            let Some(rate) = f.rate_pps.filter(|_| !matches!(self.protocol, ProtocolConfig::Ifrc(_))) else {
                continue;
            };
            let sources = match &f.sources {
                Sources::One(_) => 1,
                Sources::List(v) => v.len(),
                Sources::Keyword(_) => all,
            };
            let end = f.stop_s.unwrap_or(self.duration_s).min(self.duration_s);
            let per_source = (rate * (end - f.start_s).max(0.0)).min(f.count.map_or(f64::INFINITY, |c| c as f64));
            total += per_source * sources as f64;
        }
        total
    }

    /// The `--set` overrides applied to this scenario, as given.
    pub fn overrides(&self) -> &[String] {
        &self.overrides
    }

    /// The resolved MAC configuration: the preset named by `mac.preset` (default
    /// `tinyos1_tenet`) with every other key of `[mac]` overriding the preset's value.
    pub fn mac(&self) -> Result<MacConfig, String> {
        let name = match self.mac.get("preset") {
            None => "tinyos1_tenet",
            Some(toml::Value::String(s)) => s.as_str(),
            Some(_) => return Err("mac.preset must be a string".into()),
        };
        let base = MacConfig::preset(name)
            .ok_or_else(|| format!("mac.preset: unknown preset `{name}` (known: {})", MacConfig::PRESETS.join(", ")))?;
        let mut table = toml::Table::try_from(&base).map_err(|e| e.to_string())?;
        for (k, v) in &self.mac {
            if k == "preset" {
                continue;
            }
            match table.get_mut(k) {
                Some(slot) => *slot = v.clone(),
                // Optional keys a preset may leave unset (absent from its table).
                None if MacConfig::OPTIONAL_KEYS.contains(&k.as_str()) => {
                    table.insert(k.clone(), v.clone());
                }
                None => {
                    let mut known: Vec<&str> = table.keys().map(String::as_str).collect();
                    known.extend(MacConfig::OPTIONAL_KEYS);
                    known.sort_unstable();
                    known.dedup();
                    return Err(format!("mac.{k}: unknown MAC parameter (known: {})", known.join(", ")));
                }
            }
        }
        let cfg: MacConfig = match table.try_into() {
            Ok(c) => c,
            Err(e) => {
                // Name the key: the preset's own values always parse, so the culprit is the
                // first key of `[mac]` that fails on its own.
                let preset = toml::Table::try_from(&base).map_err(|e| e.to_string())?;
                for (k, v) in self.mac.iter().filter(|(k, _)| *k != "preset") {
                    let mut one = preset.clone();
                    one.insert(k.clone(), v.clone());
                    if let Err(e) = one.try_into::<MacConfig>() {
                        return Err(format!("mac.{k} = {v}: {}", e.message()));
                    }
                }
                return Err(format!("mac: {}", e.message()));
            }
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// `message` about this scenario, prefixed with its origin and, when it starts with a key
    /// written in the file, followed by that key's line (for a key the file leaves out, the line
    /// of the table it would go in).
    pub fn locate(&self, message: String) -> String {
        format!(
            "{}: {}",
            self.origin,
            with_line(
                &self.source_text,
                &self.overrides,
                short_long_numbers(&message, &self.source_text, &self.overrides)
            )
        )
    }

    /// True when `key` (dotted, e.g. `radio.noise.trace`) or a table holding it was set with
    /// `--set`.
    fn overridden(&self, key: &str) -> bool {
        overrides_cover(&self.overrides, key)
    }

    /// The places where the relative path `p` of the field `key` is looked for, in order:
    /// - when the field was given with `--set`, first the current directory;
    /// - the scenario file's folder, then the folders above it up to the project holding the
    ///   file (the nearest folder above with a `Cargo.toml` or `.git`), so that `data/...` works
    ///   from `scenarios/` and `scenarios/bench/` alike;
    /// - then the project this binary was built from (for built-in scenarios, and for files
    ///   elsewhere that name the project's `data/...`);
    /// - last, for a file in no project, the remaining folders above it.
    ///
    /// An absolute `p` is the one candidate.
    pub fn candidates(&self, key: &str, p: &str) -> Vec<PathBuf> {
        let path = Path::new(p);
        if path.is_absolute() {
            return vec![path.to_path_buf()];
        }
        let mut out = Vec::new();
        if self.overridden(key) {
            out.push(std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path)));
        }
        out.push(self.base_dir.join(path));
        // A folder that is gone (a built-in scenario of a source tree moved since the build)
        // has no folders above it worth searching: an unrelated `data/` there would be taken.
        let above: Vec<&Path> = if self.base_dir.is_dir() {
            self.base_dir.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty()).collect()
        } else {
            Vec::new()
        };
        let is_root = |d: &Path| d.join("Cargo.toml").is_file() || d.join(".git").exists();
        match above.iter().position(|d| is_root(d)) {
            Some(k) => {
                out.extend(above[..=k].iter().map(|d| d.join(path)));
                out.push(project_root().join(path));
            }
            None => {
                out.push(project_root().join(path));
                out.extend(above.iter().map(|d| d.join(path)));
            }
        }
        let mut unique: Vec<PathBuf> = Vec::with_capacity(out.len());
        for c in out {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        unique
    }

    /// The file a path field names: the first of [`Scenario::candidates`] that exists, or an
    /// error naming the field and every place looked in.
    pub fn resolve(&self, key: &str, p: &str) -> Result<PathBuf, String> {
        let tried = self.candidates(key, p);
        match tried.iter().find(|c| c.is_file()) {
            Some(c) => Ok(c.clone()),
            None => {
                let list = tried.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", ");
                match tried.iter().find(|c| c.is_dir()) {
                    Some(d) => {
                        Err(format!("{key} = {p:?}: {} is a folder, not a file (looked for {list})", d.display()))
                    }
                    None => match tried.iter().find(|c| c.exists()) {
                        // A device or a pipe: /dev/zero would be read without end, and a pipe
                        // can be read only once while a run may read its files twice.
                        Some(o) => Err(format!(
                            "{key} = {p:?}: {} is not a regular file (a device, a pipe or a socket); \
                             give a file",
                            o.display()
                        )),
                        None => Err(format!("{key} = {p:?}: no such file (looked for {list})")),
                    },
                }
            }
        }
    }

    /// The data files this scenario reads, as (field, path written) pairs.
    pub fn file_fields(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        if let crate::topology::Placement::File { path } = &self.topology.layout {
            out.push(("topology.layout.path", path.as_str()));
        }
        if let Some(g) = &self.topology.gains_file {
            out.push(("topology.gains_file", g.as_str()));
        }
        if let NoiseConfig::Cpm { trace, .. } | NoiseConfig::Replay { trace } = &self.radio.noise {
            out.push(("radio.noise.trace", trace.as_str()));
        }
        if self.routing.kind == RoutingKind::Static {
            if let Some(t) = &self.routing.tree_file {
                out.push(("routing.tree_file", t.as_str()));
            }
        }
        out
    }

    fn validate(&self) -> Result<(), String> {
        if !(self.duration_s > 0.0 && self.duration_s.is_finite() && self.duration_s <= 1.0e7) {
            return Err("duration_s must be a positive number of seconds (at most 10^7)".into());
        }
        if self.topology.sinks.is_empty() {
            return Err("topology.sinks must name at least one sink".into());
        }
        for (k, s) in self.topology.sinks.iter().enumerate() {
            if self.topology.sinks[..k].contains(s) {
                return Err(format!("topology.sinks names node {s} twice"));
            }
        }
        if let Err(crate::topology::TopologyError::Invalid(why)) = self.radio.link.validate() {
            return Err(format!("radio.link.{why}"));
        }
        if !(0.0..=100.0).contains(&self.radio.prune_margin_db) {
            return Err(format!(
                "radio.prune_margin_db = {}: must be within 0 … 100 dB (links weaker than the lowest noise minus this margin are left out)",
                self.radio.prune_margin_db
            ));
        }
        if self.radio.reception == Reception::Ns3 && self.radio.prr_curve != PrrCurve::Ieee802154 {
            return Err("radio.reception = \"ns3\" needs radio.prr_curve = \"ieee802154\" (ns-3's O-QPSK \
                        error model)"
                .into());
        }
        for (i, o) in self.outages.iter().enumerate() {
            if !(o.from_s.is_finite() && o.from_s >= 0.0) {
                return Err(format!("outages[{i}].from_s = {}: must be a time ≥ 0 s", o.from_s));
            }
            if let Some(to) = o.to_s {
                if !(to.is_finite() && to > o.from_s) {
                    return Err(format!("outages[{i}].to_s = {to}: must be after from_s = {}", o.from_s));
                }
            }
            let ids = o.nodes.ids();
            if ids.is_empty() {
                return Err(format!("outages[{i}].nodes is an empty list"));
            }
            if let Some(d) = ids.iter().enumerate().find_map(|(k, id)| ids[..k].contains(id).then_some(id)) {
                return Err(format!("outages[{i}].nodes names node {d} twice"));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            match f.rate_pps {
                Some(r) if !r.is_finite() => return Err(format!("flows[{i}].rate_pps = {r}: must be a finite number")),
                Some(r) if r <= 0.0 => return Err(format!("flows[{i}].rate_pps = {r}: must be > 0")),
                // Far above what any modelled MAC carries (≈ 130 pkt/s one hop); beyond it a
                // run only fills memory with packets that can never leave.
                Some(r) if r > MAX_FLOW_RATE_PPS => {
                    return Err(format!("flows[{i}].rate_pps = {r}: at most {MAX_FLOW_RATE_PPS} packets per second"))
                }
                None if !matches!(self.protocol, ProtocolConfig::Ifrc(_)) => {
                    return Err(format!("flows[{i}].rate_pps is required (packets per second)"))
                }
                _ => {}
            }
            if let Sources::Keyword(k) = &f.sources {
                if k != "all" {
                    return Err(format!("flows[{i}].sources: expected \"all\", a node id or a list, got \"{k}\""));
                }
            }
            if let Sources::List(v) = &f.sources {
                if v.is_empty() {
                    return Err(format!("flows[{i}].sources is an empty list"));
                }
                if let Some((k, s)) = v.iter().enumerate().find(|(k, s)| v[..*k].contains(s)) {
                    return Err(format!("flows[{i}].sources names node {s} twice (entry {k})"));
                }
            }
            if !(f.start_s.is_finite() && f.start_s >= 0.0) {
                return Err(format!("flows[{i}].start_s = {}: must be a time ≥ 0 s", f.start_s));
            }
            if let Some(stop) = f.stop_s {
                if !(stop.is_finite() && stop > f.start_s) {
                    return Err(format!("flows[{i}].stop_s = {stop}: must be after start_s = {}", f.start_s));
                }
            }
            if f.count == Some(0) {
                return Err(format!(
                    "flows[{i}].count = 0: a flow must send at least one packet (leave count out for no limit)"
                ));
            }
            if let Some(d) = f.demand_pps {
                // 0 is RCRT's "let the sink choose" (the sink's default demand).
                if !((0.0..=MAX_FLOW_RATE_PPS).contains(&d)) {
                    return Err(format!("flows[{i}].demand_pps = {d}: must be ≥ 0 (0: the sink chooses) and at most {MAX_FLOW_RATE_PPS}"));
                }
            }
            if let Some(s) = f.sink {
                if !self.topology.sinks.contains(&s) {
                    let sinks: Vec<String> = self.topology.sinks.iter().map(|s| s.to_string()).collect();
                    return Err(format!(
                        "flows[{i}].sink: node {s} is not in topology.sinks (the sinks: {})",
                        sinks.join(", ")
                    ));
                }
            }
        }
        if let ProtocolConfig::Rcrt(c) | ProtocolConfig::Reliable(c) = &self.protocol {
            let known = crate::endpoints::POLICY_NAMES;
            // Each named by its own key, so that the message finds its line.
            let mut names: Vec<(String, &str)> = vec![("protocol.policy".into(), c.policy.as_str())];
            names.extend(c.sink_policies.iter().map(|(k, p)| (format!("protocol.sink_policies.{k}"), p.as_str())));
            names.extend(
                c.policy_changes
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (format!("protocol.policy_changes[{i}].policy"), p.policy.as_str())),
            );
            for (field, name) in names {
                if !known.contains(&name) {
                    return Err(format!("{field}: unknown policy `{name}` (known: {})", known.join(", ")));
                }
            }
            if let Some(b) = c.buffer_packets {
                if b < 2 {
                    return Err(format!(
                        "protocol.buffer_packets = {b}: the retransmit buffer needs at least 2 packets"
                    ));
                }
                // The sink drops DATA further than its sanity jump ahead (the paper profile from
                // the cumulative ACK, the code from the highest seen): a larger window would have
                // honest packets counted as bogus.
                let jump = match c.profile {
                    RcrtProfile::Paper => wsn_proto::rcrt::SinkConfig::paper().max_seq_jump,
                    RcrtProfile::ReferenceCode => wsn_proto::rcrt::SinkConfig::reference_code().max_seq_jump,
                } as usize;
                if b > jump {
                    return Err(format!(
                        "protocol.buffer_packets = {b}: at most {jump} under this profile (the sink's sanity jump)"
                    ));
                }
            }
            if let Some(f) = c.slow_down_token_floor {
                if f > 0 {
                    return Err(format!(
                        "protocol.slow_down_token_floor = {f}: must be between -128 and 0 (a slow-down takes a token, it never adds one)"
                    ));
                }
            }
            for (k, w) in &c.weights {
                if !(1e-6..=1e6).contains(w) {
                    return Err(format!("protocol.weights.{k} = {}: must be from 10^-6 to 10^6", short_num(*w)));
                }
            }
            for k in c.sink_policies.keys() {
                if !k.parse::<u16>().is_ok_and(|id| self.topology.sinks.contains(&id)) {
                    return Err(format!("protocol.sink_policies.{k}: `{k}` is not a sink of topology.sinks"));
                }
            }
            for (i, pc) in c.policy_changes.iter().enumerate() {
                if !(pc.at_s.is_finite() && pc.at_s >= 0.0) {
                    return Err(format!("protocol.policy_changes[{i}].at_s = {}: must be a time ≥ 0 s", pc.at_s));
                }
                if !self.topology.sinks.contains(&pc.sink) {
                    return Err(format!(
                        "protocol.policy_changes[{i}].sink = {}: not a sink of topology.sinks",
                        pc.sink
                    ));
                }
            }
        }
        if !(0.0..=1.0).contains(&self.radio.false_ack_prob) {
            return Err(format!(
                "radio.false_ack_prob = {}: must be a probability in 0..=1",
                self.radio.false_ack_prob
            ));
        }
        if !self.routing.shortest_snr_db.is_finite() {
            return Err(format!(
                "routing.shortest_snr_db = {}: must be a finite number of dB",
                self.routing.shortest_snr_db
            ));
        }
        if let Ok(mac) = self.mac() {
            if mac.ack_protection_ns > 0 && mac.ieee802154_csma {
                return Err("mac.ack_protection_ns: TinyOS 1.x's ACK-protection rule does not combine with \
                            IEEE 802.15.4 CSMA-CA (mac.ieee802154_csma = true)"
                    .into());
            }
        }
        if self.routing.ttl == 0 {
            return Err("routing.ttl = 0: must be at least 1 (with 0 no packet could be forwarded at all)".into());
        }
        let beacon = self.routing.mhlqi.beacon_period_binary_ms;
        if !(MIN_BEACON_PERIOD_BINARY_MS..=crate::routing::mhlqi::MAX_BEACON_PERIOD_BINARY_MS).contains(&beacon) {
            return Err(format!(
                "routing.mhlqi.beacon_period_binary_ms = {beacon}: must be from {MIN_BEACON_PERIOD_BINARY_MS} \
                 (0.1 s) to 2^32 binary ms (MultiHopLQI's default is 32769, about 32 s)"
            ));
        }
        if self.routing.mhlqi.timeout_beacons == 0 {
            return Err("routing.mhlqi.timeout_beacons = 0: must be at least 1 (with 0 every route is dropped at the \
                        next beacon tick; MultiHopLQI's default is 8)"
                .into());
        }
        if self.routing.reverse.capacity == 0 {
            return Err("routing.reverse.capacity = 0: must be at least 1 (with no entry no packet finds its way \
                        down the tree, and RCRT's sinks reach no source; the authors' code keeps 90)"
                .into());
        }
        if self.routing.reverse.max_age == 0 {
            return Err("routing.reverse.max_age = 0: must be at least 1 (with 0 every entry is dropped at the next \
                        aging tick; the authors' code keeps 10)"
                .into());
        }
        let aging = self.routing.reverse.aging_period_s;
        if !(aging.is_finite() && (MIN_AGING_PERIOD_S..=1.0e7).contains(&aging)) {
            return Err(format!(
                "routing.reverse.aging_period_s = {aging}: must be a number of seconds from {MIN_AGING_PERIOD_S} \
                 to 10^7 (the authors' code ages its reverse table every 60 s)"
            ));
        }
        if let Some(t) = self.routing.freeze_after_s {
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("routing.freeze_after_s = {t}: must be a time ≥ 0 s"));
            }
        }
        if let Some(m) = self.routing.freeze_min_prr {
            if !(m > 0.0 && m <= 1.0) {
                return Err(format!(
                    "routing.freeze_min_prr = {m}: must be a share of frames in (0, 1], e.g. 0.66 (the IFRC paper's \
                     weakest tree link)"
                ));
            }
        }
        let bin = self.output.timeseries_bin_s;
        if !(bin.is_finite() && bin >= 0.001 && self.duration_s / bin <= 1.0e6) {
            return Err(format!(
                "output.timeseries_bin_s = {bin}: must be a finite number of seconds, at least \
                 0.001 and giving at most 10^6 bins over duration_s ({} s)",
                self.duration_s
            ));
        }
        self.mac()?;
        Ok(())
    }
}

/// A number as a person would write it in a message: scientific notation when very large or
/// very small (`1e300`, not 301 digits).
pub(crate) fn short_num(x: f64) -> String {
    if x.is_finite() && (x.abs() >= 1e7 || (x != 0.0 && x.abs() < 1e-4)) {
        return format!("{x:e}");
    }
    let s = format!("{x}");
    // A computed value's float noise (`1.9599999999999997`) reads as 6 significant digits;
    // values of up to 12 characters (most that a user writes: `0.123456789`) stay as they are.
    match format!("{x:.5e}").parse::<f64>() {
        Ok(r) if s.len() > 12 => format!("{r}"),
        _ => s,
    }
}

/// Packets offered over a run beyond which loading warns that the run may take long: every
/// packet an application generates costs about 1 µs of wall time even when its queue refuses it
/// (0.7 µs measured: office40 at 10,000 pkt/s per node, 20 s), so 10^9 of them take a quarter of
/// an hour at the least. [DERIVED]
const WARN_OFFERED_PACKETS: f64 = 1e9;

/// A wall time of `s` seconds in words: minutes, hours or days.
fn wall_hint(s: f64) -> String {
    if s >= 2.0 * 86400.0 {
        format!("{} days", short_num((s / 86400.0).round()))
    } else if s >= 2.0 * 3600.0 {
        format!("{:.0} hours", s / 3600.0)
    } else {
        format!("{:.0} minutes", (s / 60.0).ceil())
    }
}

/// `message` with every number written out with more than 24 digits (a float such as 1e300 or
/// 1e-300 as Rust and serde print it: 301 digits) written as [`short_num`] does (`1e300`).
/// Shorter numbers, every integer a scenario can hold among them, stay as they are, and so does
/// a number written as it stands in the scenario `text` or an `--set` override (the message
/// quotes what the user wrote: the echoed `--set KEY=…`, the file's line under a parse error).
fn short_long_numbers(message: &str, text: &str, overrides: &[String]) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        let run = &rest[at..];
        let int = run.find(|c: char| !c.is_ascii_digit()).unwrap_or(run.len());
        let frac = run[int..].strip_prefix('.').map_or(0, |f| f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len()));
        let len = if frac > 0 { int + 1 + frac } else { int };
        match run[..len].parse::<f64>() {
            Ok(x) if len > 24 && !text.contains(&run[..len]) && !overrides.iter().any(|o| o.contains(&run[..len])) => {
                out.push_str(&short_num(x))
            }
            _ => out.push_str(&run[..len]),
        }
        rest = &run[len..];
    }
    out.push_str(rest);
    out
}

/// Shortest MultiHopLQI beacon period a scenario may set, binary ms (about 0.1 s): shorter
/// periods only flood the channel with beacons (the routing core itself clamps to 1).
pub const MIN_BEACON_PERIOD_BINARY_MS: u64 = 100;

/// Shortest interval between two aging ticks of the reverse-path tables, s. Much shorter ticks
/// expire entries between a source's packets and flood the event queue (every node ticks).
const MIN_AGING_PERIOD_S: f64 = 0.1;

/// `message` with the line of the scenario text where its key is written, when it starts with a
/// key path (`mac.max_retries`, `protocol.policy`, `flows[0].rate_pps`, …) found in the text
/// and does not name a line already. A key set with `--set` gets the override instead of a line
/// (its value is not the file's, see [`override_note`]), also when the message names a line of a
/// data file that key points to.
fn with_line(text: &str, overrides: &[String], message: String) -> String {
    if message.starts_with("--set ") || message.contains("from --set ") {
        return message;
    }
    let path: String = message.chars().take_while(|c| !matches!(c, ':' | ' ' | '=')).collect();
    // `flows[0].x` in messages is `flows.0.x` on the command line.
    let dotted = path.replace('[', ".").replace(']', "");
    if let Some(note) = override_note(overrides, &dotted) {
        return format!("{message} ({note})");
    }
    if message.contains("line ") {
        // It names a line already (of a data file, such as a gain file's duplicate pair).
        return message;
    }
    if let Some(n) = key_line(text, &path) {
        return format!("{message} (line {n})");
    }
    // A key the file leaves out (its default, or a preset's value): point at the table
    // it would go in, e.g. the `[[flows]]` of a flow without `payload_bytes`.
    let parent = path.rsplit_once('.').map(|(p, _)| p).filter(|p| !p.is_empty());
    match parent.and_then(|p| key_line(text, p).map(|n| (p, n))) {
        Some((p, n)) => format!("{message} (not set in the file; {p} begins at line {n})"),
        None => message,
    }
}

/// True when the `--set` overrides set `key` (dotted, `flows.0.rate_pps`), a table or array
/// element holding it (`flows[0]` written with brackets counts as `flows.0`), or a key inside it
/// (`topology.layout.spacing_m` for `topology.layout`: the file's line would then be the wrong
/// one to blame).
fn overrides_cover(overrides: &[String], key: &str) -> bool {
    override_note(overrides, key).is_some()
}

/// What a message about `key` says of the `--set` overrides that touched it, in the sense of
/// [`overrides_cover`]: the one that set `key` or a table holding it (the last of several, which
/// wins) as "from --set …"; otherwise the overrides of keys inside it, all of them, as "some of
/// its keys from --set …", since the message does not say which of its keys is at fault (a flow
/// whose `sources` came from the file is not to be blamed on a `--set` of its rate).
fn override_note(overrides: &[String], key: &str) -> Option<String> {
    let nested = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|rest| rest.starts_with('.'));
    let dotted = |o: &str| o.split_once('=').map(|(k, _)| bracket_indices_to_dots(k.trim()));
    let holding = overrides.iter().rev().find(|o| dotted(o).is_some_and(|k| key == k || nested(key, &k)));
    if let Some(o) = holding {
        return Some(format!("from --set {o}"));
    }
    let mut inside: Vec<&str> = Vec::new();
    for o in overrides {
        if dotted(o).is_some_and(|k| nested(&k, key)) && !inside.contains(&o.as_str()) {
            inside.push(o);
        }
    }
    (!inside.is_empty()).then(|| {
        let list: Vec<String> = inside.iter().map(|o| format!("--set {o}")).collect();
        format!("some of its keys from {}", list.join(", "))
    })
}

/// The 1-based line on which the key `path` (`table.key`, `table.sub.key`, `flows[i].key`,
/// `protocol.weights.8`) is written in `text`, wherever TOML lets it be written: under its
/// table's header, as a dotted key, inside an inline table, with quotes. From the spans the
/// TOML parser keeps; an index names an element of a list (its header, or the inline value).
fn key_line(text: &str, path: &str) -> Option<usize> {
    use toml_edit::{Item, Table, TableLike, Value};
    /// Where the walk stands: the elements of arrays of tables and of inline arrays are not
    /// items.
    #[derive(Clone, Copy)]
    enum At<'a> {
        Item(&'a Item),
        Table(&'a Table),
        Value(&'a Value),
    }
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut at = At::Table(doc.as_table());
    let mut span = None;
    for part in bracket_indices_to_dots(path).split('.') {
        let table: Option<&dyn TableLike> = match at {
            At::Item(i) => i.as_table_like(),
            At::Table(t) => Some(t),
            At::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
        };
        if let Some((k, v)) = table.and_then(|t| t.get_key_value(part)) {
            span = k.span().or_else(|| v.span());
            at = At::Item(v);
            continue;
        }
        let idx: usize = part.parse().ok()?;
        let (item_aot, array) = match at {
            At::Item(i) => (i.as_array_of_tables(), i.as_array()),
            At::Value(v) => (None, v.as_array()),
            At::Table(_) => (None, None),
        };
        if let Some(t) = item_aot.and_then(|a| a.get(idx)) {
            span = t.span();
            at = At::Table(t);
        } else {
            let v = array?.get(idx)?;
            span = v.span();
            at = At::Value(v);
        }
    }
    let start = span?.start;
    Some(text.get(..start)?.matches('\n').count() + 1)
}

/// The protocols `[protocol] kind` may name.
const PROTOCOL_KINDS: [&str; 4] = ["best_effort", "rcrt", "reliable", "ifrc"];

/// A `[protocol]` table without `kind`: empty, it is the default (best effort); with other keys
/// it is an error that says `kind` is needed (those keys belong to a protocol that must be named).
/// (`kind = "best_effort"` ignores other keys, so that `--set protocol.kind=best_effort` works on
/// an RCRT scenario.)
fn default_protocol_kind(doc: &mut toml_edit::DocumentMut) -> Result<(), String> {
    let Some(t) = doc.get_mut("protocol").and_then(|p| p.as_table_like_mut()) else { return Ok(()) };
    let keys: Vec<String> = t.iter().filter(|(k, _)| *k != "kind").map(|(k, _)| format!("`{k}`")).collect();
    if t.contains_key("kind") {
        return Ok(());
    }
    if !keys.is_empty() {
        return Err(format!(
            "protocol.kind must be given when [protocol] sets other keys ({}): kind = \"best_effort\" \
             (the default), \"rcrt\", \"reliable\" or \"ifrc\"",
            keys.join(", ")
        ));
    }
    t.insert("kind", toml_edit::value("best_effort"));
    Ok(())
}

/// `text` with its `[protocol]` header made a comment (`#protocol]`, the same bytes but the
/// first) when that table is written as a header and holds nothing; None otherwise.
fn empty_protocol_commented(text: &str) -> Option<String> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let toml_edit::Item::Table(t) = doc.get("protocol")? else { return None };
    if !t.is_empty() || t.is_implicit() {
        return None;
    }
    let at = t.span()?.start;
    (text.as_bytes().get(at) == Some(&b'[')).then(|| format!("{}#{}", &text[..at], &text[at + 1..]))
}

/// A deserialization error `e` of the scenario `doc` (the file `text` with `overrides` applied),
/// said so that the user can find it: a `[protocol]` key by name (serde's tagged enum reports
/// only the table's line), an error an override brought in as that `--set` (the line numbers of
/// the rewritten document are not the file's), an error of the file itself with its own lines.
fn explain(text: &str, doc: &toml_edit::DocumentMut, overrides: &[String], e: &toml::de::Error) -> String {
    if let Some(m) = protocol_error(doc) {
        return m;
    }
    if overrides.is_empty() {
        return with_unknown_key_line(text, e);
    }
    let parse = |d: &toml_edit::DocumentMut| {
        let mut d = d.clone();
        default_protocol_kind(&mut d).ok()?;
        toml::from_str::<Scenario>(&d.to_string()).err()
    };
    let Ok(mut d) = text.parse::<toml_edit::DocumentMut>() else { return e.to_string() };
    match parse(&d) {
        Some(fe) if fe.message() == e.message() => return with_unknown_key_line(text, &fe),
        _ => {}
    }
    for o in overrides {
        if apply_override(&mut d, o).is_err() {
            break;
        }
        if parse(&d).is_some_and(|oe| oe.message() == e.message()) {
            return format!("--set {o}: {}", e.message().trim_end());
        }
    }
    format!("{e}(line numbers count in the scenario with the --set overrides applied)")
}

/// The fields a scenario must give at its top level (those of [`Scenario`] without a default).
const TOP_LEVEL_REQUIRED: [&str; 3] = ["name", "duration_s", "topology"];

/// `e` said, plus the line of the unknown key it names when the parser pointed at the key's
/// table instead (a tagged table such as `[radio.noise]`, whose fields serde checks as a whole):
/// found from the spans the TOML parser keeps, as [`key_line`] does, in the table whose span
/// the error names (a `[header]` table or an inline one), quoted or dotted keys included.
fn with_unknown_key_line(text: &str, e: &toml::de::Error) -> String {
    use toml_edit::{Item, TableLike};
    let plain = e.to_string();
    // A field missing from the top level: the parser points at the document's start, which it
    // shows as the file's first line (a comment, a table header), a line that has nothing to do
    // with the field. Told apart from a table's missing field by the name: the scenario's own
    // required fields, which no table shares.
    if let Some(field) = e.message().strip_prefix("missing field `").and_then(|r| r.split_once('`')).map(|(n, _)| n) {
        if e.span().is_some_and(|s| s.start == 0) && TOP_LEVEL_REQUIRED.contains(&field) {
            // `topology` is a table: say how to write one (a newcomer read `topology = …` as a
            // plain key).
            if field == "topology" {
                return "missing field `topology`: the scenario needs a [topology] table with at least its `layout`, \
                        e.g. `[topology]` then `layout = { kind = \"grid\", nodes = 25, spacing_m = 5.0 }`"
                    .to_string();
            }
            return format!(
                "missing field `{field}`: the scenario needs it at its top level (`{field} = …` above the first \
                 [table])"
            );
        }
    }
    if e.message().starts_with("invalid type: ") {
        return with_wrong_type_key(text, e).unwrap_or(plain);
    }
    let Some(name) = e.message().strip_prefix("unknown field `").and_then(|r| r.split_once('`')).map(|(n, _)| n) else {
        return plain;
    };
    let Some(at) = e.span().map(|s| s.start) else { return plain };
    let Ok(doc) = toml_edit::ImDocument::parse(text) else { return plain };
    // Depth-first: the table (or inline table) whose span starts where the error points.
    fn find(t: &dyn TableLike, at: usize, name: &str) -> Option<std::ops::Range<usize>> {
        for (_, item) in t.iter() {
            let sub: Option<&dyn TableLike> = match item {
                Item::Table(t) => Some(t),
                Item::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
                Item::ArrayOfTables(a) => {
                    if let Some(r) = a.iter().find_map(|t| find(t, at, name).or_else(|| here(t, t.span(), at, name))) {
                        return Some(r);
                    }
                    None
                }
                Item::None => None,
            };
            if let Some(sub) = sub {
                if let Some(r) = here(sub, item.span(), at, name).or_else(|| find(sub, at, name)) {
                    return Some(r);
                }
            }
        }
        None
    }
    fn here(
        t: &dyn TableLike,
        span: Option<std::ops::Range<usize>>,
        at: usize,
        name: &str,
    ) -> Option<std::ops::Range<usize>> {
        if span.is_some_and(|s| s.start == at) {
            let (k, v) = t.get_key_value(name)?;
            return k.span().or_else(|| v.span());
        }
        None
    }
    let Some(span) = find(doc.as_table(), at, name) else { return plain };
    let (line, table_line) = (text[..span.start].matches('\n').count() + 1, text[..at].matches('\n').count() + 1);
    if line == table_line {
        return plain;
    }
    format!("{plain}(`{name}` is on line {line})")
}

/// `e` (an `invalid type: …` error) said with the key whose value has the wrong type, when the
/// parser pointed at the key's table instead: a tagged table such as `topology.layout` or
/// `[radio.noise]`, which serde reads as a whole, so that `layout = { kind = "grid", nodes = 25,
/// spacing_m = "8" }` named neither `spacing_m` nor, for a `[header]` table, its line. The key
/// is the one key of that table whose value is the one the message quotes (a string, a number,
/// a boolean; an array or a table for `sequence` and `map`); None when no key, or more than one,
/// holds such a value, or the error points elsewhere (at the value itself, which the parser
/// then shows).
fn with_wrong_type_key(text: &str, e: &toml::de::Error) -> Option<String> {
    use toml_edit::{Item, TableLike, Value};
    let found = e.message().strip_prefix("invalid type: ")?.rsplit_once(", expected ")?.0;
    let matches = |item: &Item| -> bool {
        let v = item.as_value();
        if let Some(q) = found.strip_prefix("string ") {
            return v.and_then(Value::as_str).is_some_and(|s| format!("{s:?}") == q);
        }
        let quoted = |kind: &str| found.strip_prefix(kind).and_then(|r| r.strip_prefix(" `")?.strip_suffix('`'));
        if let Some(n) = quoted("integer") {
            return v.and_then(Value::as_integer).is_some_and(|i| i.to_string() == n);
        }
        if let Some(f) = quoted("floating point") {
            return v.and_then(Value::as_float).is_some_and(|x| f.parse::<f64>().is_ok_and(|y| y == x));
        }
        if let Some(b) = quoted("boolean") {
            return v.and_then(Value::as_bool).is_some_and(|x| x.to_string() == b);
        }
        match found {
            "sequence" => item.is_array() || item.is_array_of_tables(),
            "map" => item.is_table_like(),
            _ => false,
        }
    };
    let at = e.span()?.start;
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    // Depth-first: the table (or inline table) whose span starts where the error points.
    fn table_at(t: &dyn TableLike, at: usize) -> Option<&dyn TableLike> {
        for (_, item) in t.iter() {
            let sub: Option<&dyn TableLike> = match item {
                Item::Table(t) => Some(t),
                Item::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
                Item::ArrayOfTables(a) => {
                    if let Some(t) = a.iter().find_map(|t| {
                        if t.span().is_some_and(|s| s.start == at) {
                            Some(t as &dyn TableLike)
                        } else {
                            table_at(t, at)
                        }
                    }) {
                        return Some(t);
                    }
                    None
                }
                Item::None => None,
            };
            if let Some(sub) = sub {
                if item.span().is_some_and(|s| s.start == at) {
                    return Some(sub);
                }
                if let Some(t) = table_at(sub, at) {
                    return Some(t);
                }
            }
        }
        None
    }
    let table = table_at(doc.as_table(), at)?;
    let mut hits = table.iter().filter(|(_, item)| matches(item));
    let (name, _) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let (k, v) = table.get_key_value(name)?;
    let line = text[..k.span().or_else(|| v.span())?.start].matches('\n').count() + 1;
    Some(format!("{e}(`{name}` is on line {line})"))
}

/// `protocol.slow_down_token_floor` is an `i8` that must also be ≤ 0: a value outside the `i8`
/// range was refused as "a whole number from −128 to 127", and then 5 as "between -128 and 0".
/// Both now give the key's own range.
fn token_floor_range(message: String) -> String {
    if message.contains("slow_down_token_floor") {
        message.replace("a whole number from −128 to 127", "a whole number from −128 to 0")
    } else {
        message
    }
}

/// Serde's Rust type names in an error message, in words a scenario's author knows: `expected u8`
/// becomes `expected a whole number from 0 to 255`, `expected struct TopologyConfig` becomes
/// `expected a table`.
fn plain_types(message: String) -> String {
    const WORDS: [(&str, &str); 12] = [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number ≥ 0"),
        ("usize", "a whole number ≥ 0"),
        ("i8", "a whole number from −128 to 127"),
        ("i16", "a whole number from −32768 to 32767"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("f32", "a number"),
        ("f64", "a number"),
        ("struct", "a table"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message.as_str();
    while let Some(at) = rest.find("expected ") {
        let (before, after) = rest.split_at(at + "expected ".len());
        out.push_str(before);
        let word_end = after.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(after.len());
        let word = &after[..word_end];
        match WORDS.iter().find(|(w, _)| *w == word) {
            // serde's `struct variant Enum::Name with …` and `struct Enum::Name`: kept as is.
            Some(("struct", _))
                if after[word_end..].starts_with(" variant")
                    || after[word_end..]
                        .trim_start()
                        .split(|c: char| c.is_whitespace())
                        .next()
                        .is_some_and(|n| n.contains("::")) =>
            {
                out.push_str(word);
                rest = &after[word_end..];
            }
            // `struct Name`: drop the name as well.
            Some(("struct", plain)) => {
                let name_end = after[word_end..]
                    .strip_prefix(' ')
                    .map(|n| word_end + 1 + n.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(n.len()))
                    .unwrap_or(word_end);
                out.push_str(plain);
                rest = &after[name_end..];
            }
            Some((_, plain)) => {
                out.push_str(plain);
                rest = &after[word_end..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out.replace(
        "data did not match any variant of untagged enum Sources",
        "expected \"all\", a node id or a list of node ids",
    )
    .replace("data did not match any variant of untagged enum OutageNodes", "expected a node id or a list of node ids")
}

/// The tables of `[protocol]` keyed by node id (`protocol.weights.8`, `protocol.sink_policies.0`).
const KEYED_BY_NODE_ID: [&str; 2] = ["weights", "sink_policies"];

/// The lists of the scenario format that `--set` can name an element of (`flows.0.rate_pps`), by
/// their whole path.
const LIST_KEYS: [&str; 4] = ["flows", "outages", "protocol.policy_changes", "topology.sinks"];

/// The first key of `[protocol]` that its protocol refuses, named, or None.
fn protocol_error(doc: &toml_edit::DocumentMut) -> Option<String> {
    let t = doc.get("protocol")?.as_table_like()?;
    let kind = t.get("kind")?.as_str()?;
    if !PROTOCOL_KINDS.contains(&kind) {
        return Some(format!("protocol.kind = {kind:?}: unknown protocol (known: {})", PROTOCOL_KINDS.join(", ")));
    }
    // The message of `[protocol]` holding only `k = item`, read as `kind`'s parameters (every
    // other field has its default); None when it reads.
    let parse = |k: &str, item: toml_edit::Item| -> Option<String> {
        let mut one = toml_edit::DocumentMut::new();
        one.insert(k, item);
        let text = one.to_string();
        match kind {
            "ifrc" => toml::from_str::<IfrcScenario>(&text).err().map(|e| e.message().to_string()),
            _ => toml::from_str::<RcrtConfig>(&text).err().map(|e| e.message().to_string()),
        }
    };
    if !matches!(kind, "rcrt" | "reliable" | "ifrc") {
        // Best effort ignores the other keys.
        return None;
    }
    for (k, item) in t.iter().filter(|(k, _)| *k != "kind") {
        let Some(m) = parse(k, item.clone()) else { continue };
        // A table keyed by node (`weights`, `sink_policies`) that the protocol has: the entry
        // at fault, by its key, so that the message names it and `with_line` finds its line,
        // not the table's. (A table the protocol does not have is at fault as a whole.)
        let keyed = KEYED_BY_NODE_ID.contains(&k) && !m.starts_with(&format!("unknown field `{k}`"));
        let entry = item.as_table_like().filter(|_| keyed).and_then(|t| {
            t.iter().find(|(sub, v)| {
                let mut table = toml_edit::Table::new();
                table.insert(sub, (*v).clone());
                parse(k, toml_edit::Item::Table(table)).is_some_and(|e| e == m)
            })
        });
        if let Some((sub, v)) = entry {
            let shown = v.as_value().map(|v| format!(" = {}", v.to_string().trim())).unwrap_or_default();
            return Some(format!("protocol.{k}.{sub}{shown}: {}", m.trim_end()));
        }
        let shown = item.as_value().map(|v| format!(" = {}", v.to_string().trim())).unwrap_or_default();
        return Some(format!("protocol.{k}{shown}: {}", m.trim_end()));
    }
    None
}

/// Largest `rate_pps` / `demand_pps` of a flow: two orders of magnitude above the one-hop
/// capacity of any MAC preset (≈ 130 pkt/s), so only nonsense is refused.
pub const MAX_FLOW_RATE_PPS: f64 = 10_000.0;

/// Where the data files of built-in scenarios live: the project root this binary was built from.
pub fn builtin_base() -> PathBuf {
    project_root().join("scenarios")
}

/// The root of the project this binary was built from (without `..` when the folder exists).
pub fn project_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Apply one `key.path=value` override to a TOML document. The value is parsed as TOML
/// (number, bool, string, array, inline table) and taken as a bare string if that fails, unless it
/// starts with `{`, `[` or a quote: then it was meant as TOML, and the parse error is reported.
pub fn apply_override(doc: &mut toml_edit::DocumentMut, spec: &str) -> Result<(), String> {
    let (key, raw) =
        spec.split_once('=').ok_or_else(|| format!("--set {spec}: expected KEY=VALUE (e.g. mac.max_retries=2)"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("--set {spec}: empty key"));
    }
    let value: toml_edit::Value = match format!("v = {}", raw.trim()).parse::<toml_edit::DocumentMut>() {
        // No field is a date: `--set name=2024-01-01` means the text, as an unquoted word does.
        Ok(d) => d["v"].as_value().filter(|v| !v.is_datetime()).cloned().unwrap_or_else(|| raw.trim().into()),
        Err(e) => {
            // Not TOML: taken as a bare string, except a number TOML cannot hold, which would
            // otherwise fail later as "invalid type: string", and a value that opens an inline
            // table, an array or a quoted string (`{kind="grid"` without its `}`), which would
            // otherwise fail later as a string where a table was expected, hiding the typo.
            let t = raw.trim();
            if t.starts_with(['{', '[', '"', '\'']) {
                let why = e.message().trim().replace('\n', "; ");
                return Err(format!(
                    "--set {spec}: the value is not valid TOML ({why}): a value that starts with `{{`, `[` or a quote \
                     must be a complete inline table, array or string (to mean the text, quote it: \
                     --set '{key}=\"…\"')"
                ));
            }
            let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
            if digits.len() > 18 && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "--set {spec}: integer out of range (scenario integers are 64-bit signed, at most {})",
                    i64::MAX
                ));
            }
            raw.trim().into()
        }
    };
    // `flows[0].rate_pps`, as error messages name a field, means `flows.0.rate_pps`.
    let dotted = bracket_indices_to_dots(key);
    let parts: Vec<&str> = dotted.split('.').collect();
    set_in(doc.as_table_mut(), &parts, value, key)
}

/// `a[1].b[2]` → `a.1.b.2`: bracketed decimal indices become path components. Anything else in
/// brackets is left as it is (and then fails as an unknown key, naming it).
fn bracket_indices_to_dots(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut rest = key;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else { break };
        let inner = &rest[open + 1..close];
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&rest[..=close]);
        } else {
            out.push_str(&rest[..open]);
            out.push('.');
            out.push_str(inner);
            // `flows[0]rate_pps`: the field after the index needs its dot too.
            if !(rest[close + 1..].is_empty() || rest[close + 1..].starts_with(['.', '['])) {
                out.push('.');
            }
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn set_in(
    table: &mut dyn toml_edit::TableLike,
    parts: &[&str],
    value: toml_edit::Value,
    key: &str,
) -> Result<(), String> {
    let Some((head, rest)) = parts.split_first() else {
        return Err(format!("--set {key}: empty key"));
    };
    if rest.is_empty() {
        table.insert(head, toml_edit::Item::Value(value));
        return Ok(());
    }
    let existed = table.get(head).is_some();
    if !existed {
        table.insert(head, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let child = table.get_mut(head).ok_or_else(|| format!("--set {key}: cannot create `{head}`"))?;
    // The whole path to `head` (it may sit in a table: protocol.policy_changes).
    let path_to_head = || {
        let dotted = bracket_indices_to_dots(key);
        let parts: Vec<&str> = dotted.split('.').collect();
        parts[..parts.len().saturating_sub(rest.len())].join(".")
    };
    // A number names an element of a list; in a table keyed by node ids (`protocol.weights`,
    // `protocol.sink_policies`, present or not) or in another table the scenario has, it is a
    // key like any other, below. (A missing `flows` or `policy_changes` is a list the scenario
    // lacks: that gets the error below, not a type error from the parser.)
    // A head the scenario lacks that is none of the format's lists (`flow.0.rate_pps`, a typo of
    // `flows`) is a key like any other too: the parser then names it as unknown, where "give the
    // list whole" would send the user to a key it refuses as well.
    let missing_unknown = !existed && !LIST_KEYS.contains(&path_to_head().as_str());
    let keyed_table = child.is_table_like()
        && !child.is_array_of_tables()
        && (existed || KEYED_BY_NODE_ID.contains(head) || missing_unknown);
    if let (Ok(idx), false) = (rest[0].parse::<usize>(), keyed_table) {
        if rest.len() == 1 {
            return Err(if child.is_array_of_tables() {
                format!("--set {key}: a whole element of `{head}` cannot be replaced; set its fields one by one (--set {}.FIELD=VALUE)", bracket_indices_to_dots(key))
            } else {
                format!(
                    "--set {key}: `{head}` is not an array of tables; set it whole (e.g. --set {}=[…])",
                    bracket_indices_to_dots(key).rsplit_once('.').map_or(head.to_string(), |(k, _)| k.to_string())
                )
            });
        }
        if !existed {
            return Err(format!(
                "--set {key}: the scenario has no `{head}`, so no element {idx}; give the list whole (--set '{}=[{}]')",
                path_to_head(),
                if *head == "sinks" { "…" } else { "{…}" }
            ));
        }
        // A list written inline, `flows = [{ … }]`: its elements are inline tables.
        if let Some(arr) = child.as_array_mut() {
            let len = arr.len();
            let v = arr
                .get_mut(idx)
                .ok_or_else(|| format!("--set {key}: index {idx} out of range (`{head}` has {len})"))?;
            let t = v.as_inline_table_mut().ok_or_else(|| {
                format!(
                    "--set {key}: element {idx} of `{head}` is not a table; set the list whole (--set {}=[…])",
                    path_to_head()
                )
            })?;
            return set_in(t, &rest[1..], value, key);
        }
        let arr =
            child.as_array_of_tables_mut().ok_or_else(|| format!("--set {key}: `{head}` is not an array of tables"))?;
        let len = arr.len();
        let t =
            arr.get_mut(idx).ok_or_else(|| format!("--set {key}: index {idx} out of range (`{head}` has {len})"))?;
        return set_in(t, &rest[1..], value, key);
    }
    // A list of tables, whether written as [[head]] or inline.
    let of_tables = child.is_array_of_tables()
        || child.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(|v| v.is_inline_table()));
    if of_tables {
        // `flows.x.rate_pps` (a bad index) or `flows.rate_pps` (none): suggest index 0.
        let field = if rest.len() > 1 { rest[1..].join(".") } else { rest[0].to_string() };
        return Err(format!(
            "--set {key}: `{head}` is a list; name an element by its index, e.g. --set {}.0.{field}",
            path_to_head()
        ));
    }
    if child.as_array().is_some() {
        return Err(format!(
            "--set {key}: `{head}` is a list written inline; set it whole (--set {}=[…])",
            path_to_head()
        ));
    }
    let t = child.as_table_like_mut().ok_or_else(|| format!("--set {key}: `{head}` is not a table"))?;
    set_in(t, rest, value, key)
}

/// The largest scenario file read, bytes. Scenario files are small TOML files (the largest
/// shipped one is a few kB); the cap turns a wrong path such as a device or a pipe that never
/// ends (`/dev/zero`) into an error instead of a read that fills the memory.
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// Read a scenario file as UTF-8, refusing one larger than [`MAX_SCENARIO_BYTES`].
fn read_scenario_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_SCENARIO_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a scenario file",
            MAX_SCENARIO_BYTES >> 20
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(set: &[&str]) -> String {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        match Scenario::load("office40", &set) {
            Ok(_) => panic!("{set:?} was accepted"),
            Err(e) => e.to_string(),
        }
    }

    /// Layouts denser than the link model's D0 are warned about (they run: nodes closer than D0
    /// get the path loss at D0).
    #[test]
    fn layouts_denser_than_d0_are_warned_about() {
        for (layout, says) in [
            ("{kind=\"grid\", nodes=9, spacing_m=0.5}", "grid spacing 0.5 m is below D0 = 1 m"),
            ("{kind=\"random\", nodes=100, width_m=5.0, height_m=5.0}", "100 nodes on 25 m²"),
            ("{kind=\"uniform\", nodes=100, width_m=5.0, height_m=5.0}", "100 nodes on 25 m²"),
        ] {
            let sc = Scenario::load("office40", &[format!("topology.layout={layout}")]).unwrap();
            assert!(sc.warnings.iter().any(|w| w.contains(says)), "{layout}: {:?}", sc.warnings);
        }
        // Not at the bench's density (about 30 m² per node), at a grid spacing of D0 itself, below
        // 1 m when D0 is smaller too, or with a gain file.
        for set in [
            vec!["topology.layout={kind=\"uniform\", nodes=40, width_m=35.0, height_m=35.0}"],
            vec!["topology.layout={kind=\"grid\", nodes=9, spacing_m=1.0}"],
            vec!["topology.layout={kind=\"grid\", nodes=9, spacing_m=0.8}", "radio.link.d0_m=0.5"],
        ] {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let sc = Scenario::load("office40", &set).unwrap();
            assert!(sc.warnings.iter().all(|w| !w.contains("D0")), "{set:?}: {:?}", sc.warnings);
        }
    }

    /// The IEEE 802.15.4 CSMA-CA keys under a TinyOS preset (fixed windows) are named as having no
    /// effect; with `ieee802154_csma` on, or under lrwpan40's preset, they are not.
    #[test]
    fn csma_keys_without_ieee802154_csma_are_warned_about() {
        let sc = Scenario::load("office40", &["mac.csma_max_be=100".into()]).unwrap();
        assert!(sc.warnings.iter().any(|w| w.contains("mac.csma_max_be has no effect")), "{:?}", sc.warnings);
        let sc = Scenario::load("office40", &["mac.csma_max_be=6".into(), "mac.ieee802154_csma=true".into()]).unwrap();
        assert!(sc.warnings.iter().all(|w| !w.contains("no effect")), "{:?}", sc.warnings);
        let sc = Scenario::load("lrwpan40", &["mac.csma_max_be=6".into()]).unwrap();
        assert!(sc.warnings.iter().all(|w| !w.contains("no effect")), "{:?}", sc.warnings);
    }

    /// An empty file (or only comments) is called empty, not "missing field `name`".
    #[test]
    fn an_empty_scenario_is_called_empty() {
        for text in ["", "# a comment\n\n", "\u{feff}"] {
            let e = Scenario::from_toml(text, "e.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
            assert!(e.contains("the scenario is empty"), "{text:?}: {e}");
        }
        // One key is not empty: serde names the first missing field.
        let e = Scenario::from_toml("name = \"x\"\n", "e.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        assert!(e.contains("missing field `duration_s`"), "{e}");
    }

    #[test]
    fn an_outage_naming_a_node_twice_is_refused() {
        let e = err(&["outages=[{nodes=[3,3], from_s=5.0, to_s=10.0}]"]);
        assert!(e.contains("outages[0].nodes names node 3 twice"), "{e}");
    }

    /// `--set protocol.weights.2=3` sets the weight of node 2: in a table keyed by node ids a
    /// number is a key, not a list index (the error used to suggest a form that failed too).
    #[test]
    fn set_reaches_a_table_keyed_by_node_id() {
        let text = "name = \"k\"\nduration_s = 10.0\n[topology]\n\
                    layout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n[protocol]\nkind = \"ifrc\"\n";
        for set in [["protocol.weights.2=3.0"].as_slice(), &["protocol.weights={\"1\"=2.0}", "protocol.weights.2=3.0"]]
        {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let sc = Scenario::from_toml(text, "test", std::env::temp_dir(), &set).unwrap();
            let ProtocolConfig::Ifrc(c) = &sc.protocol else { panic!("not IFRC") };
            assert_eq!(c.weights.get("2"), Some(&3.0), "{set:?}");
        }
        // A number after a list still names an element, also of a list the scenario lacks.
        let e = err(&["flows.7.rate_pps=1.0"]);
        assert!(e.contains("index 7 out of range"), "{e}");
        let e = err(&["protocol.kind=\"rcrt\"", "protocol.policy_changes.0.at_s=1"]);
        assert!(e.contains("the scenario has no `policy_changes`, so no element 0"), "{e}");
    }

    /// Errors name the key and the value, also where serde alone would not: a `[mac]` key, a
    /// `[protocol]` key (the tagged enum reports only the table's line), an unknown key brought
    /// in by `--set` (as that `--set`, not as a line of a rewritten copy of the file).
    #[test]
    fn errors_name_the_line_of_a_key_in_the_file() {
        let office = BUILTIN.iter().find(|b| b.0 == "office40").unwrap().1;
        let line_of = |text: &str, needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
        // An unknown [mac] key and a refused [[flows]] value, written in the file.
        let text = office.replacen("[mac]\n", "[mac]\nmax_retriez = 3\n", 1);
        let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        let n = line_of(&text, "max_retriez = 3");
        assert!(e.contains("mac.max_retriez: unknown MAC parameter (known: ack, ack_bytes,"), "{e}");
        assert!(e.contains(&format!("max_payload, max_retries, overhead_bytes, preset, promiscuous, queue_capacity, retry_gap_min_ns, retry_gap_spread_ns, rx_process_ns, sink_congestion_backoff, sink_initial_backoff, turnaround_ns, txfifo_load_base_ns, txfifo_load_per_byte_ns) (line {n})")), "{e}");
        let text = office.replacen("start_s = 300.0", "start_s = -5.0", 1);
        let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        let n = line_of(&text, "start_s = -5.0");
        assert!(e.contains(&format!("flows[0].start_s = -5: must be a time ≥ 0 s (line {n})")), "{e}");
        // Headers written with a trailing comment or spaces inside the brackets are found too
        // (the first flow's line used to be missed, and the second flow's line named).
        let text =
            "name = \"t\"\nduration_s = 60.0\n[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n\
                    [ mac ]   # the MAC\nmax_retriez = 3\n\
                    [[flows]]   # the first flow\nsources = \"all\"\nrate_pps = -1.0\n\
                    [[flows]]\nsources = \"all\"\nrate_pps = 1.0\n";
        let e = Scenario::from_toml(&text.replace("-1.0", "2.0"), "t.toml", PathBuf::from("."), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("mac.max_retriez") && e.contains("(line 6)"), "{e}");
        let text = text.replace("max_retriez", "max_retries");
        let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        assert!(e.contains("flows[0].rate_pps = -1") && e.contains("(line 9)"), "{e}");
        // The same key set on the command line: the file's line would mislead, so the message
        // names the override instead (the last of several that set it).
        let sets = ["flows.0.start_s=7".into(), "flows.0.start_s=-5".into(), "duration_s=60".into()];
        let e = Scenario::from_toml(office, "t.toml", PathBuf::from("."), &sets).unwrap_err().to_string();
        assert!(e.contains("flows[0].start_s = -5") && !e.contains("line"), "{e}");
        assert!(e.ends_with(" (from --set flows.0.start_s=-5)"), "{e}");
        // A message about a table whose key inside was set with --set names no line of the file.
        let m = "topology.layout: invalid topology: topology.layout.spacing_m = -1: must be positive".to_string();
        let text = "[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n";
        assert!(with_line(text, &[], m.clone()).contains("(line 2)"));
        let e = with_line(text, &["topology.layout.spacing_m=-1".into()], m.clone());
        assert!(
            !e.contains("line") && e.ends_with("(some of its keys from --set topology.layout.spacing_m=-1)"),
            "{e}"
        );
        // Overrides inside the key are all listed, none blamed; one that sets the key itself, or
        // a table holding it, is named alone, the last of several.
        let sets: Vec<String> =
            ["topology.layout.nodes=4", "duration_s=9", "topology.layout.spacing_m=-1"].map(String::from).to_vec();
        let e = with_line(text, &sets, m.clone());
        assert!(
            e.ends_with("(some of its keys from --set topology.layout.nodes=4, --set topology.layout.spacing_m=-1)"),
            "{e}"
        );
        let sets = [sets, vec!["topology={sinks=[0]}".into(), "topology.layout={kind=\"chain\"}".into()]].concat();
        let e = with_line(text, &sets, m);
        assert!(e.ends_with("(from --set topology.layout={kind=\"chain\"})"), "{e}");
        // A data file's own line is kept, and the scenario key that named the file gets its
        // --set (a gain file given on the command line), but no line of the scenario file.
        let text2 = "[topology]\ngains_file = \"a.txt\"\n";
        let m = "topology.gains_file: g.txt:2: a second gain line for 0 → 1 (the first is on line 1)".to_string();
        assert_eq!(with_line(text2, &[], m.clone()), m);
        let e = with_line(text2, &["topology.gains_file=g.txt".into()], m.clone());
        assert_eq!(e, format!("{m} (from --set topology.gains_file=g.txt)"));
        // A message that quotes a user's "--set " text still gets its line.
        let m = "topology.layout: the name \"--set x\" is not a kind".to_string();
        assert!(with_line(text, &[], m).ends_with("(line 2)"));
        // A key the file leaves out points at the table it would go in (a flow's default
        // payload that the preset's frames cannot hold); with no such table, no line.
        let text = "name = \"t\"\n[mac]\npreset = \"ifrc2006\"\n\n[[flows]]\nsources = \"all\"\n";
        let m = "flows[0].payload_bytes = 64: above mac.max_payload = 32".to_string();
        assert!(with_line(text, &[], m.clone()).ends_with("(not set in the file; flows[0] begins at line 5)"));
        let m = "mac.max_retries = 9: too many".to_string();
        assert!(with_line(text, &[], m).ends_with("(not set in the file; mac begins at line 2)"));
        let text3 = "[topology]\nsinks = [0]\nlayout = { kind = \"grid\" }\n";
        let m = "topology.layout.nodes = 0: none".to_string();
        assert!(with_line(text3, &[], m).ends_with("(not set in the file; topology.layout begins at line 3)"));
        let m = "routing.kind = \"x\": no such kind".to_string();
        assert_eq!(with_line(text, &[], m.clone()), m);
        let m = "duration_s = 0: no time".to_string();
        assert_eq!(with_line(text, &[], m.clone()), m);
        // A top-level key.
        let text = office.replacen("duration_s = 3600.0", "duration_s = -1.0", 1);
        let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        let n = line_of(&text, "duration_s = -1.0");
        assert!(
            e.contains(&format!("duration_s must be a positive number of seconds (at most 10^7) (line {n})")),
            "{e}"
        );
    }

    /// Keys are found wherever TOML lets them be written: quoted keys in an inline table, dotted
    /// keys, keys inside an inline table of a list, subtables; an unknown key of a tagged table
    /// (which serde reports at the table's header) gets its own line too.
    #[test]
    fn errors_name_the_line_wherever_the_key_is_written() {
        let text = "name = \"t\"\nradio.prune_margin_db = 150.0\n[topology]\nsinks = [0]\n\
                    layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n[protocol]\n\
                    kind = \"ifrc\"\nweights = { \"4\" = 2.0, \"8\" = -2.0 }\n\
                    flows = [\n  { sources = \"all\", rate_pps = 1.0 }]\n[radio.noise]\nmodel = \"constant\"\n";
        assert_eq!(key_line(text, "radio.prune_margin_db"), Some(2));
        assert_eq!(key_line(text, "topology.layout.spacing_m"), Some(5));
        assert_eq!(key_line(text, "protocol.weights.8"), Some(8));
        assert_eq!(key_line(text, "protocol.flows[0].rate_pps"), Some(10));
        assert_eq!(key_line(text, "radio.noise.model"), Some(12));
        assert_eq!(key_line(text, "radio.noise.floor_dbm"), None);
        assert_eq!(key_line(text, "protocol.flows[1].rate_pps"), None);
        // A refused sink policy names its key, and so its line.
        let two = std::fs::read_to_string(project_root().join("scenarios/rcrt/two-sinks.toml")).unwrap();
        let (sink, _) = two.lines().find_map(|l| l.trim().strip_prefix('"')?.split_once('"')).unwrap();
        let bad = two.replacen(&format!("\"{sink}\" = \""), &format!("\"{sink}\" = \"demand_limted\" # \""), 1);
        let e =
            Scenario::from_toml(&bad, "t.toml", project_root().join("scenarios/rcrt"), &[]).unwrap_err().to_string();
        let n = bad.lines().position(|l| l.contains("demand_limted")).unwrap() + 1;
        assert!(e.contains(&format!("protocol.sink_policies.{sink}: unknown policy `demand_limted`")), "{e}");
        assert!(e.contains(&format!("(line {n})")), "{e}");
        // A field missing from the top level is named as such, not at the file's first line; one
        // missing from a table still points at that table.
        let office = BUILTIN.iter().find(|b| b.0 == "office40").unwrap().1;
        let no_duration = office.replacen("duration_s = 3600.0\n", "", 1);
        assert_ne!(no_duration, office);
        let e = Scenario::from_toml(&no_duration, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        assert!(e.contains("missing field `duration_s`: the scenario needs it at its top level"), "{e}");
        assert!(!e.contains("line 1"), "{e}");
        // The topology, a table, is asked for as one.
        let e = Scenario::from_toml("name = \"x\"\nduration_s = 10.0\n", "t.toml", PathBuf::from("."), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field `topology`: the scenario needs a [topology] table"), "{e}");
        // Also when the file opens with a comment and a table, as the built-ins do, or with a table.
        for head in ["# a comment\n[topology]\n", "[topology]\n"] {
            let text = format!("{head}layout = {{ kind = \"grid\", nodes = 9, spacing_m = 5 }}\n");
            let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
            assert!(e.contains("missing field `name`: the scenario needs it at its top level"), "{head}: {e}");
        }
        let layout = office.lines().find(|l| l.starts_with("layout = ")).unwrap();
        let no_layout = office.replacen(&format!("{layout}\n"), "", 1);
        let e = Scenario::from_toml(&no_layout, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        assert!(e.contains("missing field `layout`") && e.contains("[topology]") && !e.contains("top level"), "{e}");
        // An unknown key inside a tagged table.
        let office = BUILTIN.iter().find(|b| b.0 == "office40").unwrap().1;
        let noisy = office.replacen("[radio.noise]\n", "[radio.noise]\nbogus = 3\n", 1);
        let e = Scenario::from_toml(&noisy, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        let n = noisy.lines().position(|l| l.starts_with("bogus")).unwrap() + 1;
        assert!(e.contains(&format!("(`bogus` is on line {n})")), "{e}");
        // Quoted and dotted, as the parser reads them.
        for written in ["'bogus' = 3", "bogus.x = 3"] {
            let noisy = office.replacen("[radio.noise]\n", &format!("[radio.noise]\n{written}\n"), 1);
            let e = Scenario::from_toml(&noisy, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
            let n = noisy.lines().position(|l| l.starts_with(written)).unwrap() + 1;
            assert!(e.contains(&format!("(`bogus` is on line {n})")), "{written}: {e}");
        }
    }

    /// `--set` reaches into lists written inline; an index into a list the scenario lacks says so.
    #[test]
    fn set_indexes_inline_lists_and_names_missing_ones() {
        let text = "name = \"t\"\nduration_s = 60.0\nflows = [{ sources = \"all\", rate_pps = 1.0 }]\n\
                    [topology]\nsinks = [0]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n";
        let sc = Scenario::from_toml(text, "t.toml", PathBuf::from("."), &["flows[0].rate_pps=2.5".into()]).unwrap();
        assert_eq!(sc.flows[0].rate_pps, Some(2.5));
        let err = |set: &str| {
            Scenario::from_toml(text, "t.toml", PathBuf::from("."), &[set.to_string()]).unwrap_err().to_string()
        };
        let e = err("flows.1.rate_pps=2");
        assert!(e.contains("index 1 out of range (`flows` has 1)"), "{e}");
        let e = err("outages.0.from_s=5");
        assert!(e.contains("the scenario has no `outages`, so no element 0; give the list whole"), "{e}");
        let e = err("flows.rate_pps=2");
        assert!(e.contains("`flows` is a list; name an element by its index, e.g. --set flows.0.rate_pps"), "{e}");
        let e = err("topology.sinks.x=2");
        assert!(e.contains("`sinks` is a list written inline; set it whole (--set topology.sinks=[…])"), "{e}");
    }

    #[test]
    fn errors_name_the_key() {
        let cases: &[(&[&str], &str)] = &[
            (&["mac.max_retries=-1"], "mac.max_retries = -1: invalid value"),
            (
                &["protocol.kind=\"rcrt\"", "protocol.profile=\"foo\""],
                "protocol.profile = \"foo\": unknown variant `foo`",
            ),
            (&["protocol.kind=\"rcrt\"", "protocol.demand_pps=3"], "protocol.demand_pps = 3: unknown field"),
            (&["protocol.kind=\"ifrc\"", "protocol.epsilon=\"x\""], "protocol.epsilon = \"x\": invalid type"),
            (&["protocol.kind=\"foo\""], "protocol.kind = \"foo\": unknown protocol"),
            (
                &["protocol.kind=\"rcrt\"", "protocol.weights={\"5\"=1e300}"],
                "protocol.weights.5 = 1e300: must be from 10^-6 to 10^6",
            ),
            (
                &["routing.mhlqi.beacon_period_binary_ms=0"],
                "routing.mhlqi.beacon_period_binary_ms = 0: must be from 100",
            ),
            (&["routing.mhlqi.timeout_beacons=0"], "routing.mhlqi.timeout_beacons = 0: must be at least 1"),
            (&["routing.reverse.max_age=0"], "routing.reverse.max_age = 0: must be at least 1"),
            (&["routing.reverse.capacity=0"], "routing.reverse.capacity = 0: must be at least 1"),
            (
                &["protocol.kind=\"rcrt\"", "protocol.slow_down_token_floor=1"],
                "protocol.slow_down_token_floor = 1: must be between -128 and 0",
            ),
            (
                &["protocol.kind=\"rcrt\"", "protocol.slow_down_token_floor=-129"],
                "protocol.slow_down_token_floor = -129: invalid value",
            ),
            (&["protocol={profile=\"paper\"}"], "protocol.kind must be given"),
            (&["bogus=1"], "--set bogus=1: unknown field `bogus`"),
            (&["seed=18446744073709551615"], "--set seed=18446744073709551615: integer out of range"),
            (&["duration_s=\"x\""], "--set duration_s=\"x\": invalid type"),
            (
                &["protocol.kind=\"rcrt\"", "protocol.policy_changes=[{at_s=5.0,sink=3,policy=\"fair\"}]"],
                "protocol.policy_changes[0].sink = 3",
            ),
            (
                &["protocol.kind=\"rcrt\"", "protocol.policy_changes=[{at_s=nan,sink=0,policy=\"fair\"}]"],
                "protocol.policy_changes[0].at_s = NaN",
            ),
            (&["radio.prune_margin_db=-100"], "radio.prune_margin_db = -100: must be within 0 … 100 dB"),
            (
                &["protocol.kind=\"rcrt\"", "protocol.buffer_packets=5000"],
                "protocol.buffer_packets = 5000: at most 1000",
            ),
            (
                &["protocol.kind=\"rcrt\"", "protocol.profile=\"reference_code\"", "protocol.buffer_packets=101"],
                "protocol.buffer_packets = 101: at most 100",
            ),
            (&["mac.max_retries=255"], "mac.max_retries = 255: at most 100"),
            (&["routing.reverse.aging_period_s=0"], "routing.reverse.aging_period_s = 0: must be"),
            (&["routing.reverse.aging_period_s=0.000001"], "routing.reverse.aging_period_s = 0.000001"),
        ];
        for (set, says) in cases {
            let e = err(set);
            assert!(e.contains(says), "{set:?}: {e}");
            assert!(!e.contains("line "), "{set:?} names a line of the rewritten file: {e}");
        }
        // An error in the file itself keeps the file's own line numbers under --set.
        let text = "name = \"x\"\nduration_s = 10.0\nbogus = 1\n[topology]\nlayout = { kind = \"chain\", nodes = 3, spacing_m = 1.0 }\n";
        let e = Scenario::from_toml(text, "t.toml", builtin_base(), &["seed=2".into(), "duration_s=5".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus") && e.contains("line 3"), "{e}");
    }

    /// The reliable baseline names the RCRT allocation keys it ignores, but not a `policy` that
    /// already says `demand_limited`, which is what it does [README, `reliable`].
    #[test]
    fn reliable_warns_only_about_allocation_keys_it_overrides() {
        let warned = |set: &[&str]| -> bool {
            let mut o = vec!["protocol.kind=\"reliable\"".to_string()];
            o.extend(set.iter().map(|s| s.to_string()));
            let sc = Scenario::load("rcrt-baseline", &o).unwrap();
            sc.warnings.iter().any(|w| w.contains("ignoring protocol.policy"))
        };
        assert!(warned(&[]), "the baseline's fair policy is ignored");
        assert!(!warned(&["protocol.policy=\"demand_limited\""]));
        assert!(warned(&["protocol.policy=\"weighted\""]));
    }

    /// An empty `[protocol]` table is the default protocol.
    #[test]
    fn empty_protocol_table_is_best_effort() {
        let sc = Scenario::load("office40", &["protocol={}".into()]).unwrap();
        assert_eq!(sc.protocol, ProtocolConfig::BestEffort);
        // Switching an RCRT scenario to best effort keeps working (its RCRT keys are ignored).
        let sc = Scenario::load("rcrt-baseline", &["protocol.kind=\"best_effort\"".into()]).unwrap();
        assert_eq!(sc.protocol, ProtocolConfig::BestEffort);
        assert!(
            sc.warnings.iter().any(|w| w.contains("ignoring") && w.contains("protocol.policy")),
            "the RCRT keys left behind are reported: {:?}",
            sc.warnings
        );
        let sc = Scenario::load("office40", &[]).unwrap();
        assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    }

    /// `--set` accepts a field as error messages name it, `flows[0].rate_pps`.
    #[test]
    fn messages_name_types_in_words() {
        for (set, want) in [
            ("mac.max_retries=1000", "integer `1000`, expected a whole number from 0 to 255"),
            ("flows.0.payload_bytes=-1", "integer `-1`, expected a whole number ≥ 0"),
            ("topology=5", "integer `5`, expected a table"),
            ("duration_s=\"abc\"", "string \"abc\", expected a number"),
            ("flows.0.sources=1.5", "expected \"all\", a node id or a list of node ids"),
        ] {
            let e = err(&[set]);
            assert!(e.contains(want), "{set}: {e}");
        }
        assert_eq!(
            plain_types("expected u8, expected u80, expected struct A".into()),
            "expected a whole number from 0 to 255, expected u80, expected a table"
        );
        for kept in ["expected struct variant Placement::Grid with 2 elements", "expected struct Placement::Grid"] {
            assert_eq!(plain_types(kept.into()), kept);
        }
    }

    #[test]
    fn set_refuses_a_whole_array_element() {
        for set in ["flows.0={}", "flows.0=5", "flows[0]={rate_pps=1}"] {
            let e = err(&[set]);
            assert!(
                e.contains("a whole element of `flows` cannot be replaced; set its fields one by one (--set flows.0.FIELD=VALUE)"),
                "{set}: {e}"
            );
        }
        let e = err(&["topology.sinks.0=5"]);
        assert!(e.contains("`sinks` is not an array of tables; set it whole (e.g. --set topology.sinks=[…])"), "{e}");
    }

    #[test]
    fn set_accepts_bracketed_indices() {
        assert_eq!(bracket_indices_to_dots("flows[0].rate_pps"), "flows.0.rate_pps");
        assert_eq!(bracket_indices_to_dots("a[12].b[3]"), "a.12.b.3");
        assert_eq!(bracket_indices_to_dots("a[x].b"), "a[x].b");
        assert_eq!(bracket_indices_to_dots("a[1"), "a[1");
        assert_eq!(bracket_indices_to_dots("flows[0]rate_pps"), "flows.0.rate_pps");
        assert_eq!(bracket_indices_to_dots("a[1][2]"), "a.1.2");
        let sc = Scenario::load("office40", &["flows[0].rate_pps=0.25".into()]).unwrap();
        assert_eq!(sc.flows[0].rate_pps, Some(0.25));
        let e = err(&["flows[3].rate_pps=1"]);
        assert!(e.contains("--set flows[3].rate_pps: index 3 out of range"), "{e}");
        let e = Scenario::load("office40", &["flows.x.rate_pps=1".into()]).unwrap_err().to_string();
        assert!(e.contains("`flows` is a list; name an element by its index, e.g. --set flows.0.rate_pps"), "{e}");
        let e = Scenario::load("office40", &["flows.rate_pps=1".into()]).unwrap_err().to_string();
        assert!(e.contains("e.g. --set flows.0.rate_pps"), "{e}");
        // A list inside a table keeps its whole path in the hint; an inline list is set whole.
        let text = "name = \"t\"\nduration_s = 60.0\n[protocol]\nkind = \"rcrt\"\n\
                    [[protocol.policy_changes]]\nat_s = 5.0\nsink = 0\npolicy = \"fair\"\n";
        let e = Scenario::from_toml(text, "t.toml", builtin_base(), &["protocol.policy_changes.at_s=6".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("e.g. --set protocol.policy_changes.0.at_s"), "{e}");
        let set = [
            "protocol.kind=\"rcrt\"".to_string(),
            "protocol.policy_changes=[{at_s=5.0, sink=0, policy=\"fair\"}]".into(),
            "protocol.policy_changes.at_s=6".into(),
        ];
        let e = Scenario::load("office40", &set).unwrap_err().to_string();
        // A list written inline takes indices too (since session 21).
        assert!(e.contains("name an element by its index, e.g. --set protocol.policy_changes.0.at_s"), "{e}");
        let set = [set[0].clone(), set[1].clone(), "protocol.policy_changes.0.at_s=6".into()];
        assert!(Scenario::load("office40", &set).is_ok());
    }

    /// A relative data path is looked for in the current directory first when it was given with
    /// `--set`, then beside the scenario file, in the project holding the file and in the
    /// project this binary was built from; never in arbitrary folders above.
    #[test]
    fn data_paths_are_looked_for_in_known_places_only() {
        let text = BUILTIN.iter().find(|b| b.0 == "office40").unwrap().1;
        let outside = std::env::temp_dir().join(format!("wsn-candidates-test-{}/deep/er", std::process::id()));
        let trace = "data/noise/casino-lab.txt";
        // A folder that does not exist (a built-in scenario of a source tree moved since the
        // build): no folder above it is searched.
        let sc = Scenario::from_toml(text, "x.toml", outside.clone(), &[]).unwrap();
        assert_eq!(sc.candidates("radio.noise.trace", trace), [outside.join(trace), project_root().join(trace)]);
        std::fs::create_dir_all(&outside).unwrap();
        // The cases in no project need a temporary folder with no project above it (no folder
        // above holding a Cargo.toml or .git, as `candidates` decides); where the temporary folder
        // sits in one (TMPDIR inside a checkout), they cannot be set up and are skipped, said on
        // standard error. The project cases below run everywhere.
        let cwd = std::env::current_dir().unwrap();
        let in_project =
            outside.ancestors().skip(1).find(|d| d.join("Cargo.toml").is_file() || d.join(".git").exists());
        if let Some(d) = in_project {
            eprintln!("skipped the cases in no project: {} holds a Cargo.toml or .git", d.display());
        } else {
            let sc = Scenario::from_toml(text, "x.toml", outside.clone(), &[]).unwrap();
            // In no project: the file's folder, the build's project, then the folders above.
            let above = |p: &str| -> Vec<PathBuf> { outside.ancestors().skip(1).map(|d| d.join(p)).collect() };
            let mut want = vec![outside.join(trace), project_root().join(trace)];
            want.extend(above(trace));
            assert_eq!(sc.candidates("radio.noise.trace", trace), want);
            let sc =
                Scenario::from_toml(text, "x.toml", outside.clone(), &["radio.noise.trace=\"t.txt\"".into()]).unwrap();
            let mut want = vec![cwd.join("t.txt"), outside.join("t.txt"), project_root().join("t.txt")];
            want.extend(above("t.txt"));
            // Each place once, first come first: the working folder may be one of the others (the
            // build's project when the test binary runs from the project's root, or `/`).
            let mut once: Vec<PathBuf> = Vec::new();
            want.into_iter().for_each(|p| {
                if !once.contains(&p) {
                    once.push(p)
                }
            });
            assert_eq!(sc.candidates("radio.noise.trace", "t.txt"), once);
        }
        // In a project: the folders above up to its root come before the build's project.
        let proj = std::env::temp_dir().join(format!("wsn-candidates-proj-{}", std::process::id()));
        std::fs::create_dir_all(proj.join("scenarios/sub")).unwrap();
        std::fs::write(proj.join("Cargo.toml"), "").unwrap();
        let sub = proj.join("scenarios/sub");
        let sc = Scenario::from_toml(text, "x.toml", sub.clone(), &[]).unwrap();
        assert_eq!(
            sc.candidates("radio.noise.trace", trace),
            [sub.join(trace), proj.join("scenarios").join(trace), proj.join(trace), project_root().join(trace)]
        );
        std::fs::remove_dir_all(&proj).unwrap();
        // Setting the whole table counts as setting the path in it.
        let sc = Scenario::from_toml(
            text,
            "x.toml",
            outside.clone(),
            &["radio.noise={model=\"replay\", trace=\"t.txt\"}".into()],
        )
        .unwrap();
        assert_eq!(sc.candidates("radio.noise.trace", "t.txt")[0], cwd.join("t.txt"));
        std::fs::remove_dir_all(outside.ancestors().nth(2).unwrap()).ok();
        // A scenario file inside the project finds `data/...` at the project's root.
        let sc = Scenario::load("office40", &[]).unwrap();
        assert_eq!(sc.resolve("radio.noise.trace", trace).unwrap(), project_root().join(trace));
        let abs = project_root().join(trace);
        assert_eq!(sc.candidates("radio.noise.trace", abs.to_str().unwrap()), [abs]);
    }

    /// A tree file without a static tree, and a policy change after the end, are warned about.
    #[test]
    fn settings_without_effect_are_warned_about() {
        let sc = Scenario::load("office40", &["routing.tree_file=\"t.csv\"".into()]).unwrap();
        assert!(sc.warnings.iter().any(|w| w.contains("routing.tree_file is used only with")), "{:?}", sc.warnings);
        let set = [
            "protocol.kind=\"rcrt\"".to_string(),
            "protocol.policy_changes=[{at_s=1e9, sink=0, policy=\"fair\"}]".into(),
        ];
        let sc = Scenario::load("office40", &set).unwrap();
        assert!(sc.warnings.iter().any(|w| w.contains("protocol.policy_changes[0] is at 1e9 s")), "{:?}", sc.warnings);
    }

    /// IFRC runs warn about what IFRC ignores: a flow's `rate_pps`, and a MAC that does not
    /// overhear.
    #[test]
    fn ifrc_settings_it_ignores_are_warned_about() {
        let sc = Scenario::load("office40", &["protocol.kind=\"ifrc\"".into()]).unwrap();
        let has = |s: &str| sc.warnings.iter().any(|w| w.contains(s));
        assert!(has("flows[0].rate_pps = 1 is ignored under IFRC"), "{:?}", sc.warnings);
        assert!(has("mac.promiscuous = false (preset tinyos1_tenet)"), "{:?}", sc.warnings);
        let sc = Scenario::load("office40", &["protocol.kind=\"ifrc\"".into(), "mac.promiscuous=true".into()]).unwrap();
        assert!(!sc.warnings.iter().any(|w| w.contains("mac.promiscuous = false")), "{:?}", sc.warnings);
        // Snooping with hardware ACKs is a MAC no CC2420 has: said so.
        assert!(
            sc.warnings.iter().any(|w| w.contains("with hardware ACKs (preset tinyos1_tenet)")),
            "{:?}",
            sc.warnings
        );
        let sc = Scenario::load("office40", &["mac.preset=\"ifrc2006\"".into()]).unwrap();
        assert!(!sc.warnings.iter().any(|w| w.contains("promiscuous")), "{:?}", sc.warnings);
        // The IFRC experiments set neither.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ifrc");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let sc = Scenario::load(&p.to_string_lossy(), &[]).unwrap();
            if matches!(sc.protocol, ProtocolConfig::Ifrc(_)) {
                assert!(sc.warnings.is_empty(), "{}: {:?}", p.display(), sc.warnings);
            }
        }
    }

    /// Huge and tiny numbers are written short in messages (`1e300`, not 301 digits); integers a
    /// scenario can hold are written in full.
    #[test]
    fn messages_write_huge_numbers_short() {
        let e = err(&["flows.0.rate_pps=1e300"]);
        assert!(e.contains("flows[0].rate_pps = 1e300: at most 10000 packets per second"), "{e}");
        let e = err(&["flows.0.payload_bytes=1e300"]);
        assert!(e.contains("invalid type: floating point `1e300`, expected a whole number"), "{e}");
        let e = err(&["radio.link.s12=1e-300"]);
        assert!(e.contains("radio.link.s12 = 1e-300: |s12| exceeds"), "{e}");
        let e = err(&["seed=18446744073709551615"]);
        assert!(e.contains("seed=18446744073709551615"), "{e}");
        for kept in ["9223372036854775807 and 0.30000000000000004.", "at most 10000.", "1.5e300", "v1.2.3"] {
            assert_eq!(short_long_numbers(kept, "", &[]), kept);
        }
        assert_eq!(short_long_numbers(&format!("x = {}, y = {}.", 1e300, -1e-300), "", &[]), "x = 1e300, y = -1e-300.");
        // A long number the user wrote is quoted as written, from the command line or the file.
        let typed = "123456789012345678901234567890";
        let e = err(&[&format!("seed={typed}")]);
        assert!(e.contains(&format!("seed={typed}")) && !e.contains("e29"), "{e}");
        let text = format!("name = \"t\"\nduration_s = 10.0\nseed = {typed}\n[topology]\nlayout = {{ kind = \"grid\", nodes = 4, spacing_m = 5.0 }}\n");
        let e = Scenario::from_toml(&text, "t.toml", PathBuf::from("."), &[]).expect_err("refused").to_string();
        assert!(e.contains(typed) && !e.contains("e29"), "{e}");
    }

    /// A run whose flows offer more than 10^9 packets is warned about before it starts, with
    /// the time it may take; office40's hour, or its flows over 10^7 s, are not.
    #[test]
    fn a_run_offering_absurdly_many_packets_is_warned_about() {
        let says = |sc: &Scenario| sc.warnings.iter().find(|w| w.contains("the flows offer about")).cloned();
        let sc = Scenario::load("office40", &["duration_s=1e7".into(), "flows.0.rate_pps=10000".into()]).unwrap();
        let w = says(&sc).expect("warned");
        // 39 sources (office40's positions file: 40 nodes, one sink) from 300 s.
        assert!(w.contains("about 3.899883e12 packets over duration_s = 1e7 s"), "{w}");
        assert!(w.contains("may take 45 days or more"), "{w}");
        for set in [
            vec![],
            vec!["duration_s=1e7".to_string()],
            vec!["flows.0.count=10".into(), "duration_s=1e7".into(), "flows.0.rate_pps=10000".into()],
        ] {
            let sc = Scenario::load("office40", &set).unwrap();
            assert_eq!(says(&sc), None, "{set:?}");
        }
        // A layout that names its node count, and IFRC (its controller paces the flows).
        let set = ["topology.layout={kind=\"grid\", nodes=10000, spacing_m=5.0}".to_string(), "duration_s=1e6".into()];
        let w = says(&Scenario::load("office40", &set).unwrap()).expect("warned");
        // 9,999 sources for 999,700 s.
        assert!(w.contains("about 9.9960003e9 packets"), "{w}");
        let set = [set[0].clone(), set[1].clone(), "protocol.kind=\"ifrc\"".into()];
        assert_eq!(says(&Scenario::load("office40", &set).unwrap()), None);
    }

    /// A flow that starts only when the run is over is accepted, with a warning that names it.
    #[test]
    fn flow_starting_after_the_end_is_warned_about() {
        let sc = Scenario::load("office40", &["duration_s=400".into(), "flows.0.start_s=5000".into()]).unwrap();
        assert!(
            sc.warnings.iter().any(|w| w.contains("flows[0] starts at 5000 s") && w.contains("sends nothing")),
            "{:?}",
            sc.warnings
        );
    }

    /// An empty `[protocol]` runs best effort, and the parser's lines stay the file's: a later
    /// error is shown on its own line with its key's (the `kind` once inserted for it moved every
    /// later line down by one and lost the key's line, a review).
    #[test]
    fn an_empty_protocol_table_keeps_the_files_lines() {
        let head = "name = \"t\"\nduration_s = 10.0\n[protocol] # best effort\n[radio.noise]\nmodel = \"constant\"\n";
        let tail =
            "[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n[[flows]]\nsources = \"all\"\nrate_pps = 1.0\n";
        let ok = format!("{head}floor_dbm = -95.0\n{tail}");
        let sc = Scenario::from_toml(&ok, "t.toml", PathBuf::from("."), &[]).expect("loads");
        assert_eq!(sc.protocol, ProtocolConfig::BestEffort);
        let bad = format!("{head}floor_dbm = \"x\"\n{tail}");
        let e = Scenario::from_toml(&bad, "t.toml", PathBuf::from("."), &[]).unwrap_err().to_string();
        assert!(e.contains("at line 4") && e.contains("(`floor_dbm` is on line 6)"), "{e}");
        assert_eq!(empty_protocol_commented("[protocol]\nx = 1\n"), None, "a table with keys is the file's");
        assert_eq!(empty_protocol_commented("protocol = {}\n"), None, "an inline table has no header");
    }

    /// Mutation audit (session 36): the documented range of each checked key, pinned on both sides
    /// of each boundary, the defaults of docs/simulator.md "Scenario keys", and `--set`'s rules.
    mod audit36 {
        use super::*;

        fn load(set: &[&str]) -> Result<Scenario, String> {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            Scenario::load("office40", &set).map_err(|e| e.to_string())
        }

        fn ok(set: &[&str]) -> Scenario {
            load(set).unwrap_or_else(|e| panic!("{set:?} was refused: {e}"))
        }

        /// `err(set)` names `field` in its message.
        fn refused(set: &[&str], field: &str) {
            let e = err(set);
            assert!(e.contains(field), "{set:?}: {e}");
        }

        /// `duration_s`: "a positive number of seconds (at most 10^7)" (its check's message).
        #[test]
        fn duration_is_positive_and_at_most_1e7() {
            ok(&["duration_s=1e7"]);
            ok(&["duration_s=0.001", "flows.0.start_s=0"]);
            refused(&["duration_s=0"], "duration_s must be a positive number");
            refused(&["duration_s=10000000.5"], "duration_s must be a positive number");
        }

        /// `radio.prune_margin_db`: within 0 … 100 dB, both ends included (its check's message).
        #[test]
        fn prune_margin_accepts_0_and_100_only_between() {
            assert_eq!(ok(&["radio.prune_margin_db=0"]).radio.prune_margin_db, 0.0);
            assert_eq!(ok(&["radio.prune_margin_db=100"]).radio.prune_margin_db, 100.0);
            refused(&["radio.prune_margin_db=-0.001"], "radio.prune_margin_db = -0.001");
            refused(&["radio.prune_margin_db=100.001"], "radio.prune_margin_db = 100.001");
        }

        /// README `[radio]`: `reception = "ns3"` "needs the `ieee802154` curve".
        #[test]
        fn ns3_reception_needs_the_ieee802154_curve() {
            refused(&["radio.reception=\"ns3\""], "radio.reception = \"ns3\" needs radio.prr_curve");
            let sc = ok(&["radio.reception=\"ns3\"", "radio.prr_curve=\"ieee802154\""]);
            assert_eq!(sc.radio.reception, Reception::Ns3);
        }

        /// `[[outages]]`: `from_s` a time ≥ 0, `to_s` after `from_s` (their checks' messages).
        #[test]
        fn outage_times_from_zero_and_ending_after_they_start() {
            ok(&["outages=[{nodes=3, from_s=0.0, to_s=0.5}]"]);
            refused(&["outages=[{nodes=3, from_s=-0.5}]"], "outages[0].from_s = -0.5");
            refused(&["outages=[{nodes=3, from_s=5.0, to_s=5.0}]"], "outages[0].to_s = 5: must be after from_s");
            refused(&["outages=[{nodes=[], from_s=5.0}]"], "outages[0].nodes is an empty list");
        }

        /// `flows[i].rate_pps`: > 0 and at most [`MAX_FLOW_RATE_PPS`], required except under IFRC
        /// (FlowConfig's doc comment).
        #[test]
        fn flow_rate_is_positive_bounded_and_required_but_under_ifrc() {
            assert_eq!(ok(&["flows.0.rate_pps=10000"]).flows[0].rate_pps, Some(MAX_FLOW_RATE_PPS));
            refused(&["flows.0.rate_pps=0"], "flows[0].rate_pps = 0: must be > 0");
            refused(&["flows.0.rate_pps=10000.5"], "flows[0].rate_pps = 10000.5: at most 10000");
            let flow = "flows=[{sources=\"all\", start_s=300.0}]";
            refused(&[flow], "flows[0].rate_pps is required");
            refused(&["protocol.kind=\"rcrt\"", flow], "flows[0].rate_pps is required");
            ok(&["protocol.kind=\"ifrc\"", flow]);
        }

        /// `flows[i].sources`: `"all"`, a node id, or a non-empty list without repeats (README).
        #[test]
        fn flow_sources_are_all_an_id_or_a_list_of_distinct_ids() {
            refused(&["flows.0.sources=\"none\""], "flows[0].sources: expected \"all\"");
            refused(&["flows.0.sources=[]"], "flows[0].sources is an empty list");
            refused(&["flows.0.sources=[4, 5, 4]"], "flows[0].sources names node 4 twice");
            ok(&["flows.0.sources=[4, 5]"]);
        }

        /// `flows[i].start_s` a time ≥ 0 (default 0), `stop_s` after it, `count` at least 1.
        #[test]
        fn flow_times_and_count() {
            ok(&["flows.0.start_s=0"]);
            refused(&["flows.0.start_s=-1"], "flows[0].start_s = -1");
            refused(&["flows.0.stop_s=300"], "flows[0].stop_s = 300: must be after start_s = 300");
            ok(&["flows.0.stop_s=300.5"]);
            refused(&["flows.0.count=0"], "flows[0].count = 0");
            ok(&["flows.0.count=1"]);
        }

        /// `flows[i].demand_pps`: ≥ 0 (0: the sink chooses) and at most [`MAX_FLOW_RATE_PPS`].
        #[test]
        fn flow_demand_from_0_to_the_rate_cap() {
            ok(&["flows.0.demand_pps=0"]);
            ok(&["flows.0.demand_pps=10000"]);
            refused(&["flows.0.demand_pps=-0.001"], "flows[0].demand_pps = -0.001");
            refused(&["flows.0.demand_pps=10000.001"], "flows[0].demand_pps = 10000.001");
        }

        /// `protocol.buffer_packets`: at least 2 and at most the profile's sink sanity jump
        /// (1000 in the paper profile, 100 in the reference-code one).
        #[test]
        fn rcrt_buffer_from_2_to_the_profiles_sanity_jump() {
            let rcrt = "protocol.kind=\"rcrt\"";
            let code = "protocol.profile=\"reference_code\"";
            refused(&[rcrt, "protocol.buffer_packets=1"], "protocol.buffer_packets = 1: the retransmit buffer");
            ok(&[rcrt, "protocol.buffer_packets=2"]);
            ok(&[rcrt, "protocol.buffer_packets=1000"]);
            refused(&[rcrt, "protocol.buffer_packets=1001"], "protocol.buffer_packets = 1001: at most 1000");
            ok(&[rcrt, code, "protocol.buffer_packets=100"]);
            refused(&[rcrt, code, "protocol.buffer_packets=101"], "protocol.buffer_packets = 101: at most 100");
        }

        /// `protocol.slow_down_token_floor`: −128 to 0 (README).
        #[test]
        fn rcrt_token_floor_from_minus_128_to_0() {
            let rcrt = "protocol.kind=\"rcrt\"";
            ok(&[rcrt, "protocol.slow_down_token_floor=0"]);
            ok(&[rcrt, "protocol.slow_down_token_floor=-128"]);
            refused(&[rcrt, "protocol.slow_down_token_floor=1"], "protocol.slow_down_token_floor = 1");
        }

        /// `protocol.weights`: from 10^-6 to 10^6 (its check's message).
        #[test]
        fn rcrt_weights_from_1e_minus_6_to_1e6() {
            let (rcrt, weighted) = ("protocol.kind=\"rcrt\"", "protocol.policy=\"weighted\"");
            ok(&[rcrt, weighted, "protocol.weights.3=1e-6", "protocol.weights.4=1e6"]);
            refused(&[rcrt, weighted, "protocol.weights.3=9.9e-7"], "protocol.weights.3");
            refused(&[rcrt, weighted, "protocol.weights.4=1.000001e6"], "protocol.weights.4");
        }

        /// `sink_policies` and `policy_changes` name sinks of `topology.sinks`; a change's `at_s`
        /// is a time ≥ 0.
        #[test]
        fn rcrt_per_sink_keys_name_sinks() {
            let rcrt = "protocol.kind=\"rcrt\"";
            ok(&[rcrt, "protocol.sink_policies.0=\"fair\""]);
            refused(&[rcrt, "protocol.sink_policies.5=\"fair\""], "protocol.sink_policies.5");
            ok(&[rcrt, "protocol.policy_changes=[{at_s=0.0, sink=0, policy=\"fair\"}]"]);
            refused(&[rcrt, "protocol.policy_changes=[{at_s=-1.0, sink=0, policy=\"fair\"}]"], "at_s = -1");
            refused(&[rcrt, "protocol.policy_changes=[{at_s=1.0, sink=5, policy=\"fair\"}]"], "sink = 5");
        }

        /// `radio.false_ack_prob`: a probability in 0..=1, both ends included.
        #[test]
        fn false_ack_prob_is_a_probability() {
            ok(&["radio.false_ack_prob=0"]);
            ok(&["radio.false_ack_prob=1"]);
            refused(&["radio.false_ack_prob=-0.001"], "radio.false_ack_prob = -0.001");
            refused(&["radio.false_ack_prob=1.001"], "radio.false_ack_prob = 1.001");
        }

        /// `mac.ack_protection_ns` does not combine with `mac.ieee802154_csma`; either alone does.
        #[test]
        fn ack_protection_refused_only_with_ieee802154_csma() {
            refused(&["mac.ack_protection_ns=1000", "mac.ieee802154_csma=true"], "mac.ack_protection_ns");
            ok(&["mac.ack_protection_ns=1000"]);
            ok(&["mac.ieee802154_csma=true"]);
        }

        /// docs/simulator.md `[routing]`: `ttl` 1–255, `timeout_beacons` 1 to 255, `capacity` at
        /// least 1, `max_age` 1 to 255.
        #[test]
        fn routing_counts_start_at_1() {
            for key in
                ["routing.ttl", "routing.mhlqi.timeout_beacons", "routing.reverse.capacity", "routing.reverse.max_age"]
            {
                refused(&[&format!("{key}=0")], &format!("{key} = 0"));
                ok(&[&format!("{key}=1")]);
            }
        }

        /// `beacon_period_binary_ms` from [`MIN_BEACON_PERIOD_BINARY_MS`] to 2^32, and
        /// `aging_period_s` from 0.1 to 10^7 s, both ends included (their checks' messages).
        #[test]
        fn routing_periods_within_their_ranges() {
            let beacon = "routing.mhlqi.beacon_period_binary_ms";
            ok(&[&format!("{beacon}=100")]);
            ok(&[&format!("{beacon}=4294967296")]);
            refused(&[&format!("{beacon}=99")], &format!("{beacon} = 99"));
            refused(&[&format!("{beacon}=4294967297")], &format!("{beacon} = 4294967297"));
            let aging = "routing.reverse.aging_period_s";
            ok(&[&format!("{aging}=0.1")]);
            ok(&[&format!("{aging}=1e7")]);
            refused(&[&format!("{aging}=0.0999")], &format!("{aging} = 0.0999"));
            refused(&[&format!("{aging}=10000000.5")], &format!("{aging} = 10000000.5"));
        }

        /// `freeze_after_s` a time ≥ 0; `freeze_min_prr` in (0, 1] (docs/simulator.md); a
        /// non-finite `shortest_snr_db` is refused.
        #[test]
        fn routing_freeze_and_snr_ranges() {
            ok(&["routing.freeze_after_s=0"]);
            refused(&["routing.freeze_after_s=-1"], "routing.freeze_after_s = -1");
            let freeze = "routing.freeze_after_s=600";
            ok(&[freeze, "routing.freeze_min_prr=1"]);
            ok(&[freeze, "routing.freeze_min_prr=1e-9"]);
            refused(&[freeze, "routing.freeze_min_prr=0"], "routing.freeze_min_prr = 0");
            refused(&[freeze, "routing.freeze_min_prr=1.0001"], "routing.freeze_min_prr = 1.0001");
            refused(&["routing.shortest_snr_db=inf"], "routing.shortest_snr_db = inf");
        }

        /// `output.timeseries_bin_s`: at least 0.001 s and at most 10^6 bins over `duration_s`.
        #[test]
        fn timeseries_bin_at_least_a_ms_and_at_most_1e6_bins() {
            ok(&["duration_s=1000", "output.timeseries_bin_s=0.001"]);
            refused(&["duration_s=1000", "output.timeseries_bin_s=0.000999"], "output.timeseries_bin_s");
            refused(&["duration_s=1000.001", "output.timeseries_bin_s=0.001"], "output.timeseries_bin_s");
        }

        /// A scenario with only the required keys takes every default docs/simulator.md "Scenario
        /// keys" and the README list.
        #[test]
        fn a_minimal_scenario_takes_the_documented_defaults() {
            let text = "name = \"m\"\nduration_s = 100.0\n[topology]\n\
                        layout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n\
                        [[flows]]\nsources = \"all\"\nrate_pps = 1.0\n";
            let sc = Scenario::from_toml(text, "m.toml", PathBuf::from("."), &[]).unwrap();
            assert_eq!((sc.seed, sc.topology.seed, sc.topology.sinks.clone()), (1, 1, vec![0]));
            let r = &sc.radio;
            assert_eq!(
                (r.prune_margin_db, r.noise_offsets, r.prr_length_scaling, r.false_ack_prob),
                (15.0, true, false, 0.001)
            );
            assert_eq!((r.prr_curve, r.reception), (PrrCurve::Cc2420, Reception::Tossim));
            match &r.noise {
                NoiseConfig::Cpm { trace, history, reset_gap_s, max_samples } => {
                    assert_eq!(
                        (trace.as_str(), *history, *reset_gap_s, *max_samples),
                        ("data/noise/meyer-heavy.txt", 20, 10.0, None)
                    );
                }
                other => panic!("default noise {other:?}"),
            }
            assert_eq!(sc.mac().unwrap().preset, "tinyos1_tenet");
            let g = &sc.routing;
            assert_eq!((g.kind, g.shortest_snr_db, g.ttl, g.hop_dedup), (RoutingKind::Mhlqi, 10.0, 20, true));
            assert_eq!((g.freeze_after_s, g.freeze_min_prr, g.tree_file.as_deref()), (None, None, None));
            assert_eq!(sc.protocol, ProtocolConfig::BestEffort);
            let o = &sc.output;
            assert_eq!((o.trace, o.pcap, o.plots, o.timeseries_bin_s), (false, false, true, 10.0));
            let f = &sc.flows[0];
            assert_eq!((f.sink, f.start_s, f.stop_s, f.count), (None, 0.0, None, None));
            assert_eq!((f.payload_bytes, f.random_phase, f.demand_pps), (64, true, None));
            assert!(sc.outages.is_empty());
        }

        /// RCRT's keys default to the paper profile, the fair policy and one datagram in flight
        /// (README "Protocols").
        #[test]
        fn rcrt_takes_the_documented_defaults() {
            let ProtocolConfig::Rcrt(c) = ok(&["protocol.kind=\"rcrt\""]).protocol else { panic!("not RCRT") };
            assert_eq!((c.profile, c.policy.as_str(), c.one_datagram_in_flight), (RcrtProfile::Paper, "fair", true));
            let none = (None, None, None, None);
            assert_eq!((c.buffer_packets, c.level_formula, c.congestion_gain, c.slow_down_token_floor), none);
        }

        /// A key given twice with `--set`: the last wins ([`override_note`]: "the last of
        /// several, which wins").
        #[test]
        fn the_last_of_two_sets_of_a_key_wins() {
            assert_eq!(ok(&["duration_s=500", "duration_s=700"]).duration_s, 700.0);
            assert_eq!(ok(&["flows.0.rate_pps=2", "flows[0].rate_pps=3"]).flows[0].rate_pps, Some(3.0));
        }

        /// `--set` values: TOML when they read as TOML (but no dates), a bare string otherwise;
        /// an integer beyond 64 bits and a broken inline table are errors ([`apply_override`]).
        #[test]
        fn set_values_read_as_toml_or_a_bare_string() {
            assert_eq!(ok(&["name=2024-01-01"]).name, "2024-01-01");
            assert_eq!(ok(&["name=plain words"]).name, "plain words");
            let e = load(&["seed=9223372036854775808"]).unwrap_err();
            assert!(e.contains("--set seed=9223372036854775808: integer out of range"), "{e}");
            let e = load(&["topology.layout={ kind = \"grid\""]).unwrap_err();
            assert!(e.contains("the value is not valid TOML"), "{e}");
        }

        /// Warnings say an outage, a flow, the freeze or a policy change at the run's end itself
        /// has no effect ("not before the run ends"), and say nothing just before it.
        #[test]
        fn times_at_the_runs_end_are_warned_about() {
            let at_end = |set: &[&str], says: &str| {
                let sc = ok(set);
                assert!(sc.warnings.iter().any(|w| w.contains(says)), "{set:?}: {:?}", sc.warnings);
            };
            let before_end = |set: &[&str], says: &str| {
                let sc = ok(set);
                assert!(sc.warnings.iter().all(|w| !w.contains(says)), "{set:?}: {:?}", sc.warnings);
            };
            let d = "duration_s=400";
            at_end(&[d, "flows.0.start_s=400", "flows.0.stop_s=500"], "flows[0] starts at 400 s");
            before_end(&[d, "flows.0.start_s=399.5"], "flows[0] starts at");
            at_end(&[d, "outages=[{nodes=3, from_s=400.0}]"], "outages[0] starts at 400 s");
            before_end(&[d, "outages=[{nodes=3, from_s=399.5}]"], "outages[0] starts at");
            at_end(&[d, "routing.freeze_after_s=400"], "routing.freeze_after_s = 400 s is not before");
            before_end(&[d, "routing.freeze_after_s=399.5"], "routing.freeze_after_s");
            let rcrt = "protocol.kind=\"rcrt\"";
            let change = |at: &str| format!("protocol.policy_changes=[{{at_s={at}, sink=0, policy=\"fair\"}}]");
            at_end(&[d, rcrt, &change("400.0")], "protocol.policy_changes[0] is at 400 s");
            before_end(&[d, rcrt, &change("399.5")], "protocol.policy_changes[0]");
        }

        /// `protocol.weights` under RCRT are used only by the `weighted` policy (README
        /// "Protocols": "`weights` (a table source id → weight, for `weighted`)"): given with
        /// another policy they are named as ignored; with `weighted` they are not.
        #[test]
        fn rcrt_weights_without_the_weighted_policy_are_warned_about() {
            let says = "protocol.weights are used only by the \"weighted\" policy";
            let sc = ok(&["protocol.kind=\"rcrt\"", "protocol.weights.3=2.0"]);
            assert!(sc.warnings.iter().any(|w| w.contains(says)), "{:?}", sc.warnings);
            let sc = ok(&["protocol.kind=\"rcrt\"", "protocol.policy=\"weighted\"", "protocol.weights.3=2.0"]);
            assert!(sc.warnings.iter().all(|w| !w.contains(says)), "{:?}", sc.warnings);
        }

        /// The packets offered count only the time a flow sends within the run
        /// ([`Scenario::offered_packets`]: "as their rates, sources, start and stop times and
        /// counts say"): a stop after the run's end ends at the end, and a flow that starts after
        /// it offers nothing (and takes nothing off the others).
        #[test]
        fn offered_packets_count_only_the_time_within_the_run() {
            let says = "the flows offer about";
            let warned = |set: &[&str]| ok(set).warnings.iter().any(|w| w.contains(says));
            // 39 sources at 10,000 pkt/s for 10 s (3.9·10^6), not until 10^7 s.
            assert!(!warned(&["duration_s=10", "flows.0.start_s=0", "flows.0.rate_pps=10000", "flows.0.stop_s=1e7"]));
            // 39 × 10,000 × 3000 s = 1.17·10^9 warns: a flow starting after the end takes nothing off
            // it. At 2500 s the first flow offers 9.75·10^8, under the bound: the late flow adds
            // nothing either (counted over the run it would double that).
            let late = "flows=[{sources=\"all\", rate_pps=10000.0}, {sources=\"all\", rate_pps=10000.0, start_s=1e6}]";
            assert!(warned(&["duration_s=3000", late]));
            assert!(!warned(&["duration_s=2500", late]));
        }
    }
}
