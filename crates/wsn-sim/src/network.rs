//! The simulated network: channel, radios, MAC, routing, agents and traffic, driven by one
//! next-event loop.
//!
//! One transmission costs O(neighbours): at its start the frame is added to the `active` list of
//! every radio in the sender's pruned neighbour list (reception rule R2 of spec §4.2), and one
//! end event settles it at all of them (R3). The ACK is decided at the sender by the R4 coin on
//! the reverse link and is not put on the air [AMBIG-4 → TOSSIM behaviour].

use std::collections::VecDeque;

use rand::Rng;
use wsn_proto::agent::{AgentEvent, DropReason, LinkCtx, NodeAgent, RxInfo, SendDone};
use wsn_proto::forwarder::{CollectionForwarder, ForwarderConfig};
use wsn_proto::time::{Duration, Instant};
use wsn_wire::mhlqi::BeaconRepr;
use wsn_wire::NodeId;

use crate::engine::EventQueue;
use crate::mac::{AckMode, Backoff, MacConfig};
use crate::radio::noise::{NodeNoise, NoiseModel};
use crate::radio::{dbm_to_mw, lqi::sample_lqi, mw_to_dbm, prr, whole_dbm};
use crate::rng::{stream, Purpose, SimRng};
use crate::routing::mhlqi::{MhlqiConfig, MhlqiNode, RouteChange};
use crate::routing::reverse::{LearnOutcome, ReverseConfig, ReverseTable};
use crate::topology::Links;
use crate::trace::{TraceEvent, Tracer};

/// Transport protocol number of the best-effort source. [AMBIG → chosen]
pub const PROTO_BEST_EFFORT: u8 = 0x01;
pub use wsn_wire::ieee802154::{AM_BEACON, AM_DATA};

/// Radio options of the channel.
#[derive(Clone, Debug)]
pub struct ChannelOptions {
    /// Scale the PRR exponent with frame length [AMBIG-3].
    pub prr_length_scaling: bool,
    /// False-ACK probability for lost unicast frames [CODE t2: 0.001].
    pub false_ack_prob: f64,
    /// Reception curve.
    pub curve: crate::scenario::PrrCurve,
    /// Frame-acceptance rule (TOSSIM's two coins, or ns-3 lr-wpan's lock and chunks).
    pub reception: crate::scenario::Reception,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A MAC timer (backoff, load, guard, turnaround, ACK timeout, retry gap) of `node`. (A node
    /// index fits 16 bits, `topology::MAX_NODES`, which keeps the event at 8 bytes.)
    Mac { node: u16, gen: u32 },
    /// End of `node`'s transmission.
    TxEnd { node: u32 },
    /// ACK decision at `node`.
    AckCheck { node: u16, gen: u32 },
    /// Agent timer of `node`.
    Agent { node: u32 },
    /// Beacon tick of tree `tree` at `node`.
    Beacon { node: u32, tree: u16 },
    /// Reverse-path aging tick at `node`.
    Aging { node: u32 },
    /// Next packet of flow `flow`.
    Flow { flow: u32 },
    /// Freeze all routes.
    Freeze,
    /// Timer of end-to-end endpoint `ep`.
    Endpoint { ep: u32 },
    /// Allocation-policy change number `change`.
    Policy { change: u32 },
}

// Eight bytes: an event-queue entry is 16 (see `engine`).
const _: () = assert!(std::mem::size_of::<Ev>() == 8);
const _: () = assert!(crate::topology::MAX_NODES <= u16::MAX as usize + 1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Backoff,
    Loading,
    Guard,
    Turnaround,
    Tx,
    WaitAck,
    /// `ack_in_frame` (TOSSIM): the frame is over, its outcome known, and sendDone comes
    /// `ack_timeout_ns − ack_latency_ns` later (11 symbols), acked or not; until then the
    /// radio still counts as transmitting and receives nothing [CODE t2:
    /// TossimPacketModelC.nc; spec §5.9].
    SendDoneDelay,
    RetryGap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    Agent,
    Beacon,
}

#[derive(Debug)]
struct CurFrame {
    frame_id: u64,
    kind: FrameKind,
    dst: NodeId,
    ack_request: bool,
    am_type: u8,
    dsn: u8,
    payload: Vec<u8>,
    attempts: u8,
    /// Start of the first attempt: when the MAC began to contend for the channel (before its
    /// initial backoff), so that `time_to_ack` includes backoffs and retries (Flush's δ).
    first_tx: Instant,
    /// Start of the current attempt.
    tx_start: Instant,
    /// Did the destination decode the last attempt (so that an ACK is on its way)?
    ack_coming: bool,
    /// The destination's radio was off when the last attempt started (it heard nothing, so it
    /// cannot send even a false ACK).
    dst_deaf: bool,
    /// Index in the sender's `rx_links` of the link to `dst` found by the last attempt's
    /// [`Network::tx_end`] (`u32::MAX`: none).
    dst_link: u32,
    /// The frame is in the radio's transmit buffer.
    loaded: bool,
    /// When it was loaded there.
    loaded_at: Instant,
    /// A radio outage emptied the transmit buffer: the frame is loaded again, and re-stamped
    /// by its agent as a retransmission would be (its header would be as old as the outage).
    reload: bool,
    /// IEEE 802.15.4 CSMA-CA state of the current attempt: backoffs so far (NB) and BE.
    nb: u8,
    be: u8,
    /// The MAC gave up on a busy channel.
    access_failed: bool,
    /// The outcome `Phase::SendDoneDelay` hands on: the last attempt was acknowledged.
    done_acked: bool,
}

#[derive(Debug)]
struct Mac {
    phase: Phase,
    gen: u32,
    cur: Option<CurFrame>,
    /// Beacons waiting for the channel, oldest first: at most one per tree (each tree's routing
    /// engine has its own message buffer), so a tree's beacon never displaces another's.
    beacons: Vec<(u16, Vec<u8>)>,
    dsn: u8,
    /// When the MAC last left Idle to contend for a frame: the start of the first attempt of
    /// the frame it then binds (its initial backoff included).
    contend_since: Instant,
}

/// The frame a radio is locked on (valid while [`Radio::locked`] is `Some`). It is the only
/// arrival the reception rules ever need more than the power of: every other frame on the air
/// at the radio arrived while it was busy (transmitting, locked, processing) or failed its
/// start test, so it was lost from its first bit and only adds interference, whose power the
/// sender's link list holds. A radio therefore keeps one frame's details, not a list.
#[derive(Clone, Copy, Debug)]
struct LockedFrame {
    p_dbm: f32,
    /// An interferer or the radio's own transmission (R1) destroyed it: it will not be decoded,
    /// and no newcomer draws a coin against it.
    lost: bool,
    /// Network payload bytes of the frame (for length-dependent PRR curves).
    len: u16,
    p_mw: f64,
    /// Noise plus interference at the start, mW (for the RSSI of a delivered frame).
    n0_mw: f64,
}

/// The last noise sample of a radio with its conversions, so that they are computed once per
/// distinct sample rather than once per check.
#[derive(Clone, Copy, Debug)]
struct NoiseCache {
    /// The sample, dBm (NaN before the first one).
    dbm: f64,
    /// `dbm_to_mw(dbm)`.
    mw: f64,
    /// `mw_to_dbm(mw)`: the dBm value of the noise-only energy, as the reception rules compute it
    /// (not always bit-equal to `dbm`); NaN until first needed.
    back_dbm: f64,
}

impl NoiseCache {
    /// The cache of a sample that is not a whole dBm value (out of line: only noise offsets
    /// and the Gaussian model make such samples).
    #[cold]
    #[inline(never)]
    fn fractional(dbm: f64) -> NoiseCache {
        NoiseCache { dbm, mw: dbm_to_mw(dbm), back_dbm: f64::NAN }
    }
}

impl Default for NoiseCache {
    fn default() -> Self {
        NoiseCache { dbm: f64::NAN, mw: 0.0, back_dbm: f64::NAN }
    }
}

/// The per-node state the channel touches for every frame on the air. It lives apart from the
/// rest of the node ([`Node`]), in one dense array (`Network::radios`). The fields every arrival
/// reads share the first cache line; the frame the radio is locked on follows (read only for
/// that frame and by the coins drawn against it) in the second line, together with the start of
/// its unchecked chunk and the coins, and the noise process (read at most once per noise slot)
/// comes last. An arrival that cannot be decoded touches
/// the first line only: the radio counts the frames on the air and sums their powers but keeps
/// no list of them (see [`LockedFrame`]).
#[derive(Debug)]
#[repr(C, align(64))]
struct Radio {
    /// The last noise sample is valid for query times before this (ns): the end of its 1-ms
    /// slot, or of the run of equal values (replay, constant noise), i.e. exactly while
    /// [`NodeNoise::sample`] would return the same value without drawing
    /// ([`NodeNoise::same_until_ns`]). 0 before the first sample.
    noise_valid_until_ns: u64,
    noise_cache: NoiseCache,
    /// Sum of the powers of the frames on the air here, mW.
    active_mw: f64,
    rx_busy_until: Instant,
    /// The sender of the frame the radio is locked on.
    locked: Option<u32>,
    /// In turnaround or on the air: nothing can be received.
    transmitting: bool,
    /// Number of frames on the air here (arrivals).
    n_active: u32,
    /// The locked frame's details (second cache line).
    lock: LockedFrame,
    /// `ns3` reception: start of the locked frame's unchecked chunk (its first bit, then the
    /// last check).
    chunk_since: Instant,
    /// The node's reception coins (PRR, LQI, false ACKs).
    rng: SimRng,
    /// The node's noise process.
    noise: NodeNoise,
}

// Every field an arrival reads fits the first cache line; the locked frame starts the second,
// and what a check of the locked frame needs besides (the start of its unchecked chunk, the
// coins) fills the rest of that line.
const _: () = assert!(std::mem::offset_of!(Radio, lock) == 64);
const _: () = assert!(std::mem::offset_of!(Radio, rng) + std::mem::size_of::<SimRng>() <= 128);

impl Radio {
    fn new(noise: NodeNoise, rng: SimRng) -> Radio {
        Radio {
            noise_valid_until_ns: 0,
            noise_cache: NoiseCache::default(),
            active_mw: 0.0,
            rx_busy_until: Instant::ZERO,
            locked: None,
            transmitting: false,
            n_active: 0,
            lock: LockedFrame { p_dbm: 0.0, lost: true, len: 0, p_mw: 0.0, n0_mw: 0.0 },
            chunk_since: Instant::ZERO,
            rng,
            noise,
        }
    }
    /// Noise plus every arrival on the air at this radio at `now`, mW: the noise sample of
    /// `now` (drawn from the node's process only when its slot is newer than the last one) with
    /// its conversion, computed once per distinct sample.
    #[inline]
    fn energy_mw(&mut self, model: &NoiseModel, now: Instant) -> f64 {
        if now.as_nanos() >= self.noise_valid_until_ns {
            self.new_noise_sample(model, now);
        }
        self.noise_cache.mw + self.active_mw
    }
    #[inline(never)]
    fn new_noise_sample(&mut self, model: &NoiseModel, now: Instant) {
        let (dbm, until) = self.noise.sample_and_until(model, now);
        self.noise_valid_until_ns = until;
        // Whole-dBm samples (trace values) come from a table, bit-equal to the functions, and
        // are read whether or not the value changed (no branch on the alternating values of a
        // replayed trace; the table holds what the lazy conversion would compute); any other
        // sample is converted only when it changed.
        if let Some((mw, back_dbm)) = whole_dbm(dbm) {
            self.noise_cache = NoiseCache { dbm, mw, back_dbm };
        } else if self.noise_cache.dbm != dbm {
            self.noise_cache = NoiseCache::fractional(dbm);
        }
    }
    /// `mw_to_dbm(e)` for `e`, the value the last [`Radio::energy_mw`] call returned. With
    /// nothing on the air `e` is the noise alone (`x + 0.0 == x`), whose dBm value is cached
    /// with the sample, so the logarithm is taken once per distinct noise sample.
    #[inline]
    fn energy_dbm(&mut self, e: f64) -> f64 {
        if self.active_mw == 0.0 {
            debug_assert_eq!(e.to_bits(), self.noise_cache.mw.to_bits());
            if self.noise_cache.back_dbm.is_nan() {
                self.noise_cache.back_dbm = mw_to_dbm(self.noise_cache.mw);
            }
            self.noise_cache.back_dbm
        } else {
            mw_to_dbm(e)
        }
    }
    /// A frame of power `p_mw` starts arriving.
    #[inline]
    fn add(&mut self, p_mw: f64) {
        self.active_mw += p_mw;
        self.n_active += 1;
    }
    /// A frame of power `p_mw` (the value given to [`Radio::add`]) has ended.
    #[inline]
    fn subtract(&mut self, p_mw: f64) {
        self.n_active -= 1;
        // Keep the running sum exact when the air is empty again (no drift over a long run).
        self.active_mw = if self.n_active == 0 { 0.0 } else { self.active_mw - p_mw };
    }
    /// The radio locks on the frame from `src`.
    #[inline]
    fn lock_on(&mut self, src: u32, lock: LockedFrame) {
        debug_assert!(self.locked.is_none());
        self.locked = Some(src);
        self.lock = lock;
    }
}

/// Below this linear signal-to-(noise+interference) ratio (2 dB) the CC2420 PRR is < 1e-9 and is
/// taken as 0 without computing a logarithm [DERIVED from the curve of spec §4.1].
const SINR_FLOOR_LINEAR: f64 = 1.584_893_192_461_113_4;
/// The same for the O-QPSK curve (−8 dB, where a 20-byte frame has PRR < 1e-9) [DERIVED].
const SINR_FLOOR_LINEAR_OQPSK: f64 = 0.158_489_319_246_111_35;
/// The linear SINR below which `curve` gives a PRR taken as 0 ([`SINR_FLOOR_LINEAR`],
/// [`SINR_FLOOR_LINEAR_OQPSK`]).
fn sinr_floor_linear(curve: crate::scenario::PrrCurve) -> f64 {
    match curve {
        crate::scenario::PrrCurve::Ieee802154 => SINR_FLOOR_LINEAR_OQPSK,
        _ => SINR_FLOOR_LINEAR,
    }
}

/// The same floor in dB: a link whose power stays below the receiver's quietest noise plus this
/// can never be decoded there ("hopeless").
pub(crate) fn sinr_floor_db(curve: crate::scenario::PrrCurve) -> f64 {
    mw_to_dbm(sinr_floor_linear(curve))
}

/// Margin (dB) above the SINR from which the reception curve is exactly 1, for deciding a sure
/// reception on the linear ratio without the logarithm. It dwarfs the rounding of the dB
/// computation (≈ 1e-13 dB) and of the f32 power kept per arrival (< 1e-5 dB), so the shortcut
/// takes exactly the branch the dB computation would.
const SURE_MARGIN_DB: f64 = 0.001;

/// One directed link as the channel uses it: the receiver and the received power (transmit
/// power included).
#[derive(Clone, Copy, Debug)]
struct RxLink {
    to: u32,
    /// Even the receiver's lowest possible noise leaves the SINR below the curve's floor: the
    /// frame can never be decoded there (it still interferes).
    hopeless: bool,
    p_dbm: f64,
    p_mw: f64,
}

/// The read-only inputs of reception rule R2, borrowed apart from the nodes so that the loop
/// over a sender's receivers can update each radio in place.
struct RxEnv<'a> {
    noise: &'a NoiseModel,
    chan: &'a ChannelOptions,
    overhead: u32,
    sinr_floor: f64,
    sure_ratio: f64,
    /// The SINR (dB) from which the reception curve is exactly 1 (`Network::sure_db`).
    sure_db: f64,
    /// The `ns3` reception model is in use.
    ns3: bool,
}

pub(crate) struct TreeState {
    sink: NodeId,
    mhlqi: MhlqiNode,
    reverse: ReverseTable,
}

/// Per-node counters.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct NodeStats {
    /// Frames accepted by the MAC (data and beacons).
    pub frames_accepted: u64,
    /// `send_done` calls (must equal accepted, minus at most one in flight).
    pub send_done: u64,
    /// Data frames put on the air (every attempt).
    pub data_tx: u64,
    /// Data packets sent: agent frames the MAC finished after putting them on the air at least
    /// once, one per packet however many attempts it took (what a transport layer sends).
    pub data_sent: u64,
    /// Beacons put on the air.
    pub beacon_tx: u64,
    /// Data frames (every AM type but beacons) this radio decoded that were addressed to it or
    /// broadcast: what its agent received.
    pub data_rx: u64,
    /// Data frames this radio decoded that were addressed to another node, whether or not the
    /// MAC hands them up (promiscuous overhearing). With `data_tx` and `data_rx` this is the
    /// node's "total traffic" of the IFRC paper (§6.2: received, overheard and transmitted).
    pub data_overheard: u64,
    /// Unicast data frames acknowledged.
    pub acked: u64,
    /// Packets dropped because the transmit queue was full (local and forwarded).
    pub queue_drops: u64,
    /// Packets dropped after the last MAC retransmission.
    pub mac_drops: u64,
    /// Packets sent without a route.
    pub no_route_drops: u64,
    /// Duplicates suppressed by the forwarder.
    pub duplicates: u64,
    /// Malformed frames dropped.
    pub malformed: u64,
    /// Packets dropped for a routing loop or an expired TTL.
    pub other_drops: u64,
    /// Parent changes, summed over trees.
    pub parent_changes: u32,
    /// Largest transmit-queue length seen.
    pub max_queue: usize,
    /// Times the transmit queue was found above its bound (must stay 0).
    pub queue_overflows: u64,
    /// Backoffs restarted by TinyOS 1.x's ACK-protection rule (`mac.ack_protection_ns`).
    pub backoff_restarts: u64,
}

pub(crate) struct Node {
    pub(crate) id: NodeId,
    /// One of the network's sinks (a base station): its MAC may draw other backoffs.
    sink: bool,
    rng_mac: SimRng,
    pub(crate) rng_agent: SimRng,
    mac: Mac,
    pub(crate) trees: Vec<TreeState>,
    pub(crate) agent: Box<dyn NodeAgent + Send>,
    agent_timer: Option<Instant>,
    /// The processor is busy until then (TXFIFO loads and, with `cpu_per_rx_ns`, handed-up
    /// frames, one after the other).
    cpu_busy_until: Instant,
    pub(crate) stats: NodeStats,
}

/// State of one traffic flow.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Flow id (index).
    pub id: u32,
    /// Source node.
    pub source: NodeId,
    /// Sink node.
    pub sink: NodeId,
    /// Interval between packets.
    pub interval: Duration,
    /// First packet at or after this time.
    pub start: Instant,
    /// No packet at or after this time.
    pub stop: Instant,
    /// Packet limit.
    pub count: Option<u64>,
    /// Application payload bytes.
    pub payload_bytes: usize,
    /// Packets generated by the application.
    pub originated: u64,
    /// Packets refused by the source's own queue.
    pub refused: u64,
    /// Unique packets delivered to the sink application.
    pub delivered: u64,
    /// Deliveries of a packet already delivered (invariant: stays 0).
    pub duplicate_deliveries: u64,
    /// Deliveries of a packet that was never originated (invariant: stays 0).
    pub phantom_deliveries: u64,
    /// Sum of end-to-end delays of delivered packets, ns.
    pub delay_sum_ns: u128,
    /// Sum of hop counts of delivered packets.
    pub hops_sum: u64,
    /// Origination time per sequence number.
    pub(crate) sent_at: Vec<Instant>,
    /// Per originated packet: the source's parent on the flow's tree when the packet was
    /// originated (`u16::MAX`: none), as the RCRT authors' test harness wrote it into every
    /// data packet.
    pub(crate) parent_at: Vec<u16>,
    /// The parent stamp of the last delivered packet.
    pub(crate) last_seen_parent: Option<u16>,
    /// Parent changes as the sink sees them: deliveries whose parent stamp differs from the
    /// previous delivery's (how the RCRT paper most likely counted them, docs/rcrt.md finding H).
    pub parent_changes_seen: u64,
    /// Delivered flag per sequence number.
    pub(crate) got: Vec<bool>,
    /// Best effort: the source's queue refused this sequence number (it never entered the
    /// network, so a delivery of it is a phantom). Empty for the end-to-end transports, whose
    /// sequence numbers count only accepted packets.
    pub(crate) refused_seq: Vec<bool>,
    /// Delivered packets per time-series bin.
    pub bins: Vec<u32>,
    /// Packets the application generated (best effort: equal to `originated`).
    pub generated: u64,
    /// Time of the latest delivery.
    pub last_delivery: Instant,
    /// Time of the application's first packet.
    pub(crate) first_tick: Instant,
    /// End-to-end transports: per sequence number, the hops travelled by the first DATA
    /// datagram carrying it that reached the sink's endpoint (0 until one has). The sink
    /// delivers later, in order, so the hop count is taken at arrival and looked up at delivery.
    pub(crate) arrival_hops: Vec<u8>,
    /// Demand declared to a rate-allocating sink, pkt/s.
    pub demand_pps: f64,
    /// Endpoint serving this flow (RCRT and the reliable baseline).
    pub endpoint: Option<u32>,
    /// RCRT traces of this flow.
    pub rcrt: crate::endpoints::RcrtFlowTrace,
}

/// The simulated network.
pub struct Network {
    pub(crate) now: Instant,
    end: Instant,
    pub(crate) q: EventQueue<Ev>,
    pub(crate) seed: u64,
    pub(crate) eps: Vec<crate::endpoints::Endpoint>,
    pub(crate) node_eps: Vec<Vec<u32>>,
    pub(crate) policy_changes: Vec<(String, u32)>,
    pub(crate) total_rate: Vec<(f64, u32, f64)>,
    /// Every cut of R: (time s, sink node, flow id, the triggering flow's C_i).
    pub(crate) decreases: Vec<(f64, u32, u32, f64)>,
    pub(crate) nodes: Vec<Node>,
    /// Radio state per node (index = node index).
    radios: Vec<Radio>,
    links: Links,
    noise_model: NoiseModel,
    mac: MacConfig,
    chan: ChannelOptions,
    pub(crate) sinks: Vec<NodeId>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) bin: Duration,
    next_frame_id: u64,
    pub(crate) tracer: Tracer,
    freeze_at: Option<Instant>,
    /// See [`NetworkSpec::freeze_min_prr`].
    freeze_min_prr: Option<f64>,
    /// The noise model's long-run level distribution, for the good-tree freeze's link quality
    /// (empty without it).
    noise_levels: Vec<(f64, f64)>,
    /// The links the good-tree freeze replaced: (time, tree, move).
    pub(crate) freeze_moves: Vec<(Instant, u16, crate::routing::good_tree::Move)>,
    /// The weak links it kept (no neighbour qualified): (time, tree, link).
    pub(crate) freeze_kept: Vec<(Instant, u16, crate::routing::good_tree::Kept)>,
    /// Since the route freeze: some node was left unfrozen because its parents did not lead to
    /// its sink then ([`Network::freeze_rooted`]).
    freeze_waiting: bool,
    /// Frames put on the air (data + beacons, every attempt).
    pub(crate) frames_on_air: u64,
    pub(crate) acks_on_air: u64,
    /// Per sender, its links of `links.out` (same order) with their received powers.
    rx_links: Vec<Vec<RxLink>>,
    /// Per sender, the indices of its `rx_links` in the order a frame's start visits them:
    /// links that can be decoded first, by decreasing margin over the receiver's lowest noise,
    /// then the hopeless ones. Each arrival start touches only its own receiver's radio, so the
    /// order changes no result; grouping like outcomes lets the branch predictor follow them
    /// (the links' outcomes alternated in their `links.out` order). The end of a frame, whose
    /// receivers' agents schedule events, keeps the `rx_links` order.
    start_order: Vec<Vec<u32>>,
    /// Parallel to `rx_links`: the power at the sender of the reverse link (the ACK's path),
    /// `tx_power_dbm[to] + gain(to → sender)`, NaN when there is none.
    rev_p_dbm: Vec<Vec<f64>>,
    /// Linear SINR below which a frame is certainly lost.
    sinr_floor: f64,
    /// Linear SINR at and above which a frame is certainly received (no coin is drawn): the
    /// curve is exactly 1 there, with [`SURE_MARGIN_DB`] to spare.
    sure_ratio: f64,
    /// SINR (dB) from which [`frame_prr`] returns exactly 1 for every frame length: a pairwise
    /// SIR at or above it is decided without evaluating the curve (no coin either way).
    sure_db: f64,
    /// Frame arrivals processed (one per receiver in range of each frame on the air).
    pub(crate) receptions: u64,
    pending_agent: VecDeque<u32>,
    /// Flows paced by the agents' rate controllers (see [`NetworkSpec::rate_controlled`]).
    rate_controlled: bool,
    /// Flow ids by source node (rate-controlled runs).
    flows_by_node: Vec<Vec<u32>>,
    /// Rate-controller trace per node: (time s, rate pkt/s, congestion signal).
    pub(crate) rate_trace: Vec<Vec<(f64, f64, f64)>>,
    /// Largest transmit-queue length per node per time-series bin (empty when nodes × bins
    /// exceeds 20 million).
    pub(crate) queue_bins: Vec<Vec<u16>>,
    /// Per node: the bin of the last queue sample and the length then, which the queue keeps
    /// until the next sample (so a bin without an agent event still shows it).
    queue_last: Vec<(u32, u16)>,
    /// Agent frames each sink put on the air (every attempt) per time-series bin, in the order
    /// of `sinks`: an IFRC base station's control packets, an RCRT sink's feedback.
    pub(crate) sink_tx_bins: Vec<Vec<u32>>,
    /// Index into `sinks` per node (`u16::MAX`: not a sink).
    sink_slot: Vec<u16>,
    /// Deliveries by an end-to-end transport's sink that name no flow or do not parse (phantoms
    /// that cannot be charged to a flow).
    pub(crate) unattributed_phantoms: u64,
    /// Transport datagrams the node agent refused for a reason other than a full queue (they
    /// can never be sent; invariant: 0).
    pub(crate) datagrams_refused: u64,
    /// Radio outages per node ([`NetworkSpec::outages`]), sorted by start.
    outages: Vec<Vec<(Instant, Instant)>>,
    /// Whether any node has an outage (the hot paths skip the check otherwise).
    any_outage: bool,
}

/// A fixed tree: (parent, hop count) of every node; `None` for the root or an unreachable node.
pub type StaticParents = Vec<(Option<NodeId>, u8)>;

/// Everything needed to build a [`Network`].
pub struct NetworkSpec {
    /// Master seed.
    pub seed: u64,
    /// Simulated duration.
    pub duration: Duration,
    /// Link gains (pruned adjacency).
    pub links: Links,
    /// Noise model.
    pub noise: NoiseModel,
    /// Apply per-node noise offsets.
    pub noise_offsets: bool,
    /// MAC parameters.
    pub mac: MacConfig,
    /// Channel options.
    pub chan: ChannelOptions,
    /// Sinks (tree roots).
    pub sinks: Vec<NodeId>,
    /// MultiHopLQI parameters.
    pub mhlqi: MhlqiConfig,
    /// Children-table parameters.
    pub reverse: ReverseConfig,
    /// Static parents per tree (`static_parents[tree][node]`), or `None` for dynamic routing.
    pub static_parents: Option<Vec<StaticParents>>,
    /// Freeze routes at this time.
    pub freeze_at: Option<Instant>,
    /// The good-tree freeze ([`crate::routing::good_tree`]): at the freeze, a link to a parent
    /// expected to deliver less than this share of frames in either direction is replaced.
    pub freeze_min_prr: Option<f64>,
    /// Flows.
    pub flows: Vec<FlowSpec>,
    /// Time-series bin.
    pub bin: Duration,
    /// Trace sink.
    pub tracer: Tracer,
    /// Builds each node's agent (`None`: the generic collection forwarder everywhere).
    pub agent_factory: Option<AgentFactory>,
    /// Flows are paced by the nodes' rate controllers ([`AgentEvent::AppSlot`]) instead of
    /// their fixed `rate_pps` (IFRC): the application always has data while the flow is active.
    pub rate_controlled: bool,
    /// The collection forwarder keeps Tenet's reserved queue slot for the node's own upward
    /// packet ([`ForwarderConfig::own_slot`]); set with RCRT's one datagram in flight.
    pub own_slot: bool,
    /// Initial TTL of routed packets ([`ForwarderConfig::ttl`]).
    pub ttl: u8,
    /// Forwarders drop copies they already accepted ([`ForwarderConfig::hop_dedup`]).
    pub hop_dedup: bool,
    /// Radio outages: (node index, from, to). While off, a node's radio neither starts a
    /// transmission nor receives (its MAC contends afresh when the radio is back, and an ACK
    /// due while it is off is not heard); agents, routing and applications go on.
    pub outages: Vec<(usize, Instant, Instant)>,
}

/// Builds the agent of node `id` (index `i`): `(i, id, forwarder settings of the MAC)`.
pub type AgentFactory = Box<dyn Fn(usize, NodeId, &ForwarderConfig) -> Box<dyn NodeAgent + Send>>;

/// One flow to create.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Source node.
    pub source: NodeId,
    /// Sink node.
    pub sink: NodeId,
    /// Offered rate, packets/s.
    pub rate_pps: f64,
    /// Start.
    pub start: Instant,
    /// Stop.
    pub stop: Instant,
    /// Packet limit.
    pub count: Option<u64>,
    /// Application payload bytes.
    pub payload_bytes: usize,
    /// Start at a random phase within the first interval (else exactly at `start`).
    pub random_phase: bool,
    /// Demand declared to a rate-allocating sink (default: the rate).
    pub demand_pps: Option<f64>,
}

pub(crate) struct Ctx<'a> {
    pub(crate) me: NodeId,
    /// The network's sinks, in the order of every node's `trees`.
    pub(crate) sinks: &'a [NodeId],
    pub(crate) trees: &'a mut [TreeState],
    pub(crate) rng: &'a mut SimRng,
}

impl Ctx<'_> {
    /// Index of `sink`'s tree, found in the dense list of sink ids rather than by reading every
    /// tree state (one cache line each) in turn.
    #[inline]
    fn tree_index(&self, sink: NodeId) -> Option<usize> {
        let ti = self.sinks.iter().position(|&s| s == sink)?;
        debug_assert_eq!(self.trees[ti].sink, sink);
        Some(ti)
    }
    fn tree(&self, sink: NodeId) -> Option<&TreeState> {
        self.tree_index(sink).map(|ti| &self.trees[ti])
    }
    fn tree_mut(&mut self, sink: NodeId) -> Option<&mut TreeState> {
        self.tree_index(sink).map(|ti| &mut self.trees[ti])
    }
}

impl LinkCtx for Ctx<'_> {
    fn node(&self) -> NodeId {
        self.me
    }
    fn parent(&self, sink: NodeId) -> Option<NodeId> {
        self.tree(sink)?.mhlqi.parent()
    }
    fn hop_count(&self, sink: NodeId) -> Option<u8> {
        self.tree(sink)?.mhlqi.hop_count()
    }
    fn down_next_hop(&self, sink: NodeId, dst: NodeId) -> Option<NodeId> {
        self.tree(sink)?.reverse.next_hop(dst)
    }
    fn learn_reverse(&mut self, sink: NodeId, origin: NodeId, prev_hop: NodeId) -> bool {
        match self.tree_mut(sink) {
            Some(t) => {
                let parent = t.mhlqi.parent();
                !matches!(t.reverse.learn(origin, prev_hop, parent), LearnOutcome::DropLoop)
            }
            None => true,
        }
    }
    fn own_packet_returned(&mut self, sink: NodeId) {
        if let Some(t) = self.tree_mut(sink) {
            let parent = t.mhlqi.parent();
            t.reverse.on_own_packet_returned(parent);
        }
    }
    fn random_u32(&mut self) -> u32 {
        self.rng.gen()
    }
}

/// PRR of a frame with `len` network bytes: TOSSIM's fixed exponent 46, or 2 × the bytes after
/// the 5-byte SHR when `prr_length_scaling` is on [AMBIG-3].
#[inline]
fn frame_prr(chan: &ChannelOptions, overhead: u32, sinr_db: f64, len: usize) -> f64 {
    if chan.curve == crate::scenario::PrrCurve::Ieee802154 {
        return prr::prr_oqpsk(sinr_db, (len + overhead as usize).saturating_sub(6));
    }
    if chan.prr_length_scaling {
        let bytes = (len + overhead as usize).saturating_sub(5);
        prr::prr_with_exponent(sinr_db, 2.0 * bytes as f64)
    } else {
        prr::prr(sinr_db)
    }
}

/// The chance that an ACK is decoded at SINR `sinr_db`: the coin of the ACK decision
/// (`ack_check`). A preset that folds the ACK's airtime into the frame (`ack_bytes` 0, tossim)
/// still decodes an 11-byte ACK where the curve depends on length; under `ns3` reception the
/// whole ACK PPDU, PHY header included, as ns-3 charges it.
fn ack_success(chan: &ChannelOptions, mac: &MacConfig, sinr_db: f64) -> f64 {
    let ack_len = if mac.ack_bytes == 0 { ACK_FRAME_BYTES } else { mac.ack_bytes };
    if chan.reception == crate::scenario::Reception::Ns3 {
        prr::oqpsk_chunk_success_db(sinr_db, 8 * ack_len)
    } else {
        frame_prr(chan, ack_len, sinr_db, 0)
    }
}

/// The chance that a data frame with `len` payload bytes is decoded at SINR `sinr_db` on a quiet
/// channel (no other frame on the air, one noise level for the whole frame), under the reception
/// model: the curve's test at the frame's start and again at its end (PRR²), or, under `ns3`,
/// the lock threshold at the first bit and one chunk over the whole frame. Only the good-tree
/// freeze uses it; a run draws its coins in the arrival code, against the noise of each moment.
fn quiet_data_success(chan: &ChannelOptions, mac: &MacConfig, sinr_db: f64, len: usize) -> f64 {
    if chan.reception == crate::scenario::Reception::Ns3 {
        // Below the lock threshold (or NaN): never locked on.
        let ratio = dbm_to_mw(sinr_db);
        if ratio.is_nan() || ratio <= NS3_LOCK_SINR_LINEAR {
            return 0.0;
        }
        let bits = 8 * (len as u32 + mac.overhead_bytes);
        return prr::oqpsk_chunk_success_db(sinr_db, bits);
    }
    let q = frame_prr(chan, mac.overhead_bytes, sinr_db, len);
    q * q
}

/// An IEEE 802.15.4 ACK frame on the air: SHR 5, length 1, FCF 2, DSN 1, FCS 2 bytes [LIT].
const ACK_FRAME_BYTES: u32 = 11;

/// IEEE 802.15.4 backoff: uniform[0, 2^BE − 1] units.
fn draw_be(be: u8, unit_ns: u64, rng: &mut SimRng) -> Duration {
    let max = (1u64 << be.min(20)) - 1;
    Duration(rng.gen_range(0..=max) * unit_ns)
}

fn draw(b: &Backoff, rng: &mut SimRng) -> Duration {
    let k = match b.mask {
        Some(m) => u64::from(rng.gen::<u16>() & m) + u64::from(b.min_units),
        None => rng.gen_range(b.min_units..=b.max_units) as u64,
    };
    Duration(k * b.unit_ns)
}

impl Network {
    /// Build the network; nothing runs until [`Network::run_until`].
    pub fn new(spec: NetworkSpec) -> Network {
        let n = spec.links.n();
        let seed = spec.seed;
        let fwd = ForwarderConfig {
            queue_capacity: spec.mac.queue_capacity,
            max_frame_payload: spec.mac.max_payload,
            link_ack: spec.mac.ack != AckMode::None,
            own_slot: spec.own_slot,
            ttl: spec.ttl,
            hop_dedup: spec.hop_dedup,
        };
        let mut nodes = Vec::with_capacity(n);
        let mut radios = Vec::with_capacity(n);
        for i in 0..n {
            let id = NodeId(i as u16);
            let offset = if spec.noise_offsets { spec.links.noise_offset_db[i] } else { 0.0 };
            let trees = spec
                .sinks
                .iter()
                .enumerate()
                .map(|(ti, &sink)| {
                    let mut mhlqi = MhlqiNode::new(id, sink, &spec.mhlqi);
                    if let Some(sp) = &spec.static_parents {
                        let (p, h) = sp[ti][i];
                        mhlqi.set_static(p, h);
                    }
                    TreeState { sink, mhlqi, reverse: ReverseTable::new(&spec.reverse) }
                })
                .collect();
            radios.push(Radio::new(
                spec.noise.node(offset, stream(seed, 0, i as u32, Purpose::Noise)),
                stream(seed, 0, i as u32, Purpose::Reception),
            ));
            let mut rng_mac = stream(seed, 0, i as u32, Purpose::Mac);
            let dsn = rng_mac.gen();
            nodes.push(Node {
                id,
                sink: spec.sinks.contains(&id),
                rng_mac,
                rng_agent: stream(seed, 0, i as u32, Purpose::Agent),
                mac: Mac {
                    phase: Phase::Idle,
                    gen: 0,
                    cur: None,
                    beacons: Vec::new(),
                    dsn,
                    contend_since: Instant::ZERO,
                },
                trees,
                agent: match &spec.agent_factory {
                    Some(make) => make(i, id, &fwd),
                    None => Box::new(CollectionForwarder::new(id, fwd.clone())),
                },
                agent_timer: None,
                cpu_busy_until: Instant::ZERO,
                stats: NodeStats::default(),
            });
        }
        let end = Instant::ZERO + spec.duration;
        let bins = (spec.duration.as_nanos() / spec.bin.as_nanos().max(1) + 1) as usize;
        let sink_tx_bins = vec![vec![0; bins]; spec.sinks.len()];
        let sink_slot: Vec<u16> =
            (0..n).map(|i| spec.sinks.iter().position(|s| s.index() == i).map_or(u16::MAX, |k| k as u16)).collect();
        let noise_levels = if spec.freeze_min_prr.is_some() { spec.noise.level_distribution() } else { Vec::new() };
        let mut net = Network {
            now: Instant::ZERO,
            end,
            q: EventQueue::new(),
            seed,
            eps: Vec::new(),
            node_eps: vec![Vec::new(); n],
            policy_changes: Vec::new(),
            total_rate: Vec::new(),
            decreases: Vec::new(),
            nodes,
            radios,
            links: spec.links,
            noise_model: spec.noise,
            mac: spec.mac,
            chan: spec.chan,
            sinks: spec.sinks,
            flows: Vec::new(),
            bin: spec.bin,
            next_frame_id: 0,
            tracer: spec.tracer,
            freeze_at: spec.freeze_at,
            freeze_min_prr: spec.freeze_min_prr,
            noise_levels,
            freeze_moves: Vec::new(),
            freeze_kept: Vec::new(),
            freeze_waiting: false,
            frames_on_air: 0,
            acks_on_air: 0,
            rx_links: Vec::new(),
            start_order: Vec::new(),
            rev_p_dbm: Vec::new(),
            sinr_floor: SINR_FLOOR_LINEAR,
            sure_ratio: f64::INFINITY,
            sure_db: f64::INFINITY,
            receptions: 0,
            pending_agent: VecDeque::new(),
            unattributed_phantoms: 0,
            datagrams_refused: 0,
            rate_controlled: spec.rate_controlled,
            flows_by_node: vec![Vec::new(); n],
            rate_trace: vec![Vec::new(); n],
            // Per-node queue series only while they stay small (≤ 20 M cells, 40 MB).
            queue_bins: if n.saturating_mul(bins) <= 20_000_000 { vec![vec![0; bins]; n] } else { vec![Vec::new(); n] },
            queue_last: vec![(0, 0); n],
            sink_tx_bins,
            sink_slot,
            outages: vec![Vec::new(); n],
            any_outage: !spec.outages.is_empty(),
        };
        for &(i, from, to) in &spec.outages {
            net.outages[i].push((from, to));
        }
        for o in &mut net.outages {
            o.sort_unstable();
        }
        net.sinr_floor = sinr_floor_linear(net.chan.curve);
        let floor_db = mw_to_dbm(net.sinr_floor);
        let min_noise: Vec<f64> =
            net.radios.iter().map(|rd| net.noise_model.min_dbm() + rd.noise.offset_db()).collect();
        let one_db = if net.chan.curve == crate::scenario::PrrCurve::Ieee802154 {
            prr::prr_oqpsk_one_from_db()
        } else if net.chan.prr_length_scaling {
            prr::PRR_EXPONENT_ONE_FROM_DB
        } else {
            prr::PRR_ONE_FROM_DB
        };
        net.sure_ratio = dbm_to_mw(one_db + SURE_MARGIN_DB);
        net.sure_db = one_db;
        net.rx_links = (0..n)
            .map(|i| {
                let tx = net.links.tx_power_dbm[i];
                net.links.out[i]
                    .iter()
                    .map(|l| {
                        let p = tx + l.gain_db as f64;
                        RxLink {
                            to: l.to,
                            hopeless: p < min_noise[l.to as usize] + floor_db,
                            p_dbm: p,
                            p_mw: dbm_to_mw(p),
                        }
                    })
                    .collect()
            })
            .collect();
        net.start_order = net
            .rx_links
            .iter()
            .map(|links| {
                let margin = |k: u32| {
                    let l = &links[k as usize];
                    l.p_dbm - min_noise[l.to as usize]
                };
                let mut order: Vec<u32> = (0..links.len() as u32).collect();
                // A stable sort: equal keys keep their `rx_links` order.
                order.sort_by(|&a, &b| {
                    let hopeless = |k: u32| links[k as usize].hopeless;
                    hopeless(a).cmp(&hopeless(b)).then(margin(b).total_cmp(&margin(a)))
                });
                order
            })
            .collect();
        net.rev_p_dbm = (0..n)
            .map(|i| {
                net.rx_links[i]
                    .iter()
                    .map(|l| {
                        let to = l.to as usize;
                        net.links.gain(to, i).map_or(f64::NAN, |g| net.links.tx_power_dbm[to] + g as f64)
                    })
                    .collect()
            })
            .collect();
        // Routing: first beacon at a random phase within one period [CODE t2].
        for i in 0..n {
            let mut rng = stream(seed, 0, i as u32, Purpose::Routing);
            for ti in 0..net.sinks.len() {
                let d = net.nodes[i].trees[ti].mhlqi.first_beacon_delay(&mut rng);
                net.q.push(Instant::ZERO + d, Ev::Beacon { node: i as u32, tree: ti as u16 });
            }
            // A zero period (not reachable from a scenario) means no aging at all.
            let aging = net.nodes[i].trees.first().map(|t| t.reverse.aging_period()).filter(|p| *p > Duration::ZERO);
            if let Some(p) = aging {
                net.q.push(Instant::ZERO + p, Ev::Aging { node: i as u32 });
            }
        }
        if let Some(t) = net.freeze_at {
            net.q.push(t, Ev::Freeze);
        }
        for (fi, f) in spec.flows.iter().enumerate() {
            let interval = Duration::from_secs_f64(1.0 / f.rate_pps).max(Duration(1));
            let mut rng = stream(seed, 0, fi as u32, Purpose::Traffic);
            let phase = if f.random_phase { Duration(rng.gen_range(0..interval.as_nanos())) } else { Duration::ZERO };
            net.flows.push(Flow {
                id: fi as u32,
                source: f.source,
                sink: f.sink,
                interval,
                start: f.start,
                stop: f.stop.min(end),
                count: f.count,
                payload_bytes: f.payload_bytes,
                originated: 0,
                refused: 0,
                delivered: 0,
                duplicate_deliveries: 0,
                phantom_deliveries: 0,
                delay_sum_ns: 0,
                hops_sum: 0,
                sent_at: Vec::new(),
                parent_at: Vec::new(),
                last_seen_parent: None,
                parent_changes_seen: 0,
                got: Vec::new(),
                refused_seq: Vec::new(),
                bins: vec![0; bins],
                generated: 0,
                last_delivery: Instant::ZERO,
                first_tick: Instant::ZERO,
                arrival_hops: Vec::new(),
                demand_pps: f.demand_pps.unwrap_or(f.rate_pps),
                endpoint: None,
                rcrt: Default::default(),
            });
            if spec.rate_controlled {
                net.flows_by_node[f.source.index()].push(fi as u32);
            } else {
                net.q.push(f.start + phase, Ev::Flow { flow: fi as u32 });
            }
        }
        // Agents with timers of their own from the start (rate controllers) get them armed.
        for i in 0..n {
            if net.nodes[i].agent.poll_timeout().is_some() {
                net.after_agent(i);
            }
        }
        net
    }

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// End of the run.
    pub fn end(&self) -> Instant {
        self.end
    }
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.q.popped()
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// True if there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    /// The sinks.
    pub fn sinks(&self) -> &[NodeId] {
        &self.sinks
    }
    /// The MAC parameters in use.
    pub fn mac_config(&self) -> &MacConfig {
        &self.mac
    }
    /// The flows.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }
    /// Per-node counters.
    pub fn node_stats(&self, i: usize) -> &NodeStats {
        &self.nodes[i].stats
    }
    /// Parent of node `i` in tree `tree` right now.
    pub fn parent(&self, i: usize, tree: usize) -> Option<NodeId> {
        self.nodes[i].trees[tree].mhlqi.parent()
    }
    /// Hop count of node `i` in tree `tree` right now.
    pub fn hop_count(&self, i: usize, tree: usize) -> Option<u8> {
        self.nodes[i].trees[tree].mhlqi.hop_count()
    }
    /// Protocol-specific counters of node `i`'s agent.
    pub fn agent_counters(&self, i: usize) -> Vec<(&'static str, u64)> {
        self.nodes[i].agent.counters()
    }
    /// Rate-controller trace of node `i`: (time s, rate pkt/s, congestion signal), the starting
    /// rate and then one entry per change (empty unless the agent reports rates).
    pub fn rate_trace(&self, i: usize) -> &[(f64, f64, f64)] {
        &self.rate_trace[i]
    }
    /// Record node `j`'s queue length `q` in bin `b`: the length it held since its last sample
    /// counts in every bin up to this one, then `q` in this one.
    fn sample_queue(&mut self, j: usize, b: usize, q: u16) {
        let bins = &mut self.queue_bins[j];
        if bins.is_empty() {
            return;
        }
        let (lb, lq) = self.queue_last[j];
        if lq > 0 {
            for slot in bins.iter_mut().take(b + 1).skip(lb as usize + 1) {
                *slot = (*slot).max(lq);
            }
        }
        if let Some(slot) = bins.get_mut(b) {
            *slot = (*slot).max(q);
        }
        self.queue_last[j] = (b as u32, q);
    }

    /// At the end of the run, carry every node's last queue length through the bins after its
    /// last sample (the queue held it to the end).
    pub(crate) fn close_queue_bins(&mut self) {
        let last = bin_index(self.end, self.bin);
        for j in 0..self.queue_bins.len() {
            let q = self.queue_last[j].1;
            self.sample_queue(j, last, q);
        }
    }

    /// Largest transmit-queue length of node `i` in each time-series bin (a bin without an
    /// event at the node holds the length the queue kept through it).
    pub fn queue_bins(&self, i: usize) -> &[u16] {
        &self.queue_bins[i]
    }
    /// Agent frames the `k`-th sink of [`Network::sinks`] put on the air (every attempt) in each
    /// time-series bin.
    pub fn sink_tx_bins(&self, k: usize) -> &[u32] {
        &self.sink_tx_bins[k]
    }
    /// Agent queue length at node `i`.
    pub fn queue_len(&self, i: usize) -> usize {
        self.nodes[i].agent.queue_len()
    }
    /// Whether the agents' rate controllers pace the flows (IFRC), not the flows' `rate_pps`.
    pub fn rate_controlled(&self) -> bool {
        self.rate_controlled
    }

    /// The radio outages that happen within the run: (node, from s, to s), by node and start
    /// (an outage that starts after the end is left out).
    pub fn outages(&self) -> Vec<(usize, f64, f64)> {
        (0..self.outages.len())
            .flat_map(|i| {
                self.outages[i]
                    .iter()
                    .filter(|&&(f, t)| f < t)
                    .map(move |&(f, t)| (i, f.as_secs_f64(), t.as_secs_f64()))
            })
            .collect()
    }
    /// The most packets node `i`'s agent queues (with RCRT's one datagram in flight, the MAC
    /// preset's queue plus the slot for the node's own packet).
    pub fn queue_capacity(&self, i: usize) -> usize {
        self.nodes[i].agent.queue_capacity()
    }
    /// The links.
    pub fn links(&self) -> &Links {
        &self.links
    }
    /// Frames that went on the air (data and beacons, each attempt) and ACKs.
    pub fn frames_on_air(&self) -> (u64, u64) {
        (self.frames_on_air, self.acks_on_air)
    }
    /// Frame arrivals the channel processed: for every frame on the air, one per radio within
    /// the neighbour cut-off (the unit of work of the channel model; `wsn bench` reports the cost
    /// per arrival beside the cost per frame).
    pub fn receptions(&self) -> u64 {
        self.receptions
    }

    /// Run until `until` (capped at the end of the run). Returns false once the run is over.
    pub fn run_until(&mut self, until: Instant) -> bool {
        // Never backwards: events already run stay in the past.
        let until = until.min(self.end).max(self.now);
        while let Some(t) = self.q.peek_time() {
            if t > until {
                break;
            }
            let (t, ev) = self.q.pop().expect("peeked");
            self.now = t;
            self.dispatch(ev);
        }
        self.now = until;
        until < self.end && !self.q.is_empty()
    }

    /// Deliver raw bytes to node `node`'s agent as if a neighbour had sent them (fault injection
    /// for tests: malformed frames must be counted and dropped).
    pub fn inject_frame(&mut self, node: usize, from: NodeId, bytes: &[u8]) {
        let rx = RxInfo { link_src: from, link_dst: self.nodes[node].id, rssi_dbm: -60, lqi: 100 };
        let now = self.now;
        let n = &mut self.nodes[node];
        let mut ctx = Ctx { me: n.id, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
        n.agent.handle_frame(now, &mut ctx, &rx, bytes);
        self.after_agent(node);
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Mac { node, gen } => {
                if self.nodes[node as usize].mac.gen == gen {
                    self.mac_timer(node as usize);
                }
            }
            Ev::TxEnd { node } => self.tx_end(node as usize),
            Ev::AckCheck { node, gen } => {
                if self.nodes[node as usize].mac.gen == gen {
                    self.ack_check(node as usize);
                }
            }
            Ev::Agent { node } => {
                let i = node as usize;
                let now = self.now;
                // A timer moved earlier leaves its old event behind (cancelled lazily): only the
                // armed one runs, or the old one would arm a second chain of events.
                if self.nodes[i].agent_timer.is_none_or(|t| t > now) {
                    return;
                }
                self.nodes[i].agent_timer = None;
                let n = &mut self.nodes[i];
                if n.agent.poll_timeout().is_some_and(|t| t <= now) {
                    let mut ctx = Ctx { me: n.id, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
                    n.agent.handle_timeout(now, &mut ctx);
                }
                self.after_agent(i);
            }
            Ev::Beacon { node, tree } => self.beacon_tick(node as usize, tree as usize),
            Ev::Aging { node } => {
                let n = &mut self.nodes[node as usize];
                let mut period = None;
                for t in &mut n.trees {
                    t.reverse.age_tick();
                    period = Some(t.reverse.aging_period());
                }
                if let Some(p) = period {
                    self.q.push(self.now + p, Ev::Aging { node });
                }
            }
            Ev::Flow { flow } => self.flow_tick(flow as usize),
            Ev::Endpoint { ep } => self.endpoint_timer(ep as usize),
            Ev::Policy { change } => self.apply_policy_change(change as usize),
            Ev::Freeze => self.freeze_rooted(),
        }
    }

    // ---------------------------------------------------------------- traffic

    fn flow_tick(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        if now >= f.stop || f.count.is_some_and(|c| f.generated >= c) {
            // The application is done; an endpoint may still have to close its connection.
            if let Some(e) = f.endpoint {
                self.after_endpoint(e as usize);
            }
            return;
        }
        if f.generated == 0 {
            f.first_tick = now;
        }
        f.generated += 1;
        if let Some(e) = f.endpoint {
            self.q.push(now + f.interval, Ev::Flow { flow: fi as u32 });
            self.rcrt_flow_tick(fi, e);
            return;
        }
        self.q.push(now + f.interval, Ev::Flow { flow: fi as u32 });
        let src = self.originate(fi);
        self.after_agent(src);
    }

    /// A rate controller let node `i` originate one packet toward `sink`: the first active flow
    /// of that node to that sink generates one (the application always has data while active).
    fn app_slot(&mut self, i: usize, sink: NodeId) {
        if !self.rate_controlled {
            return;
        }
        let now = self.now;
        let active = self.flows_by_node[i].iter().copied().find(|&fi| {
            let f = &self.flows[fi as usize];
            f.sink == sink && now >= f.start && now < f.stop && f.count.is_none_or(|c| f.generated < c)
        });
        if let Some(fi) = active {
            let f = &mut self.flows[fi as usize];
            if f.generated == 0 {
                f.first_tick = now;
            }
            f.generated += 1;
            self.originate(fi as usize);
        }
    }

    /// Originate the next best-effort packet of flow `fi` at its source (the caller drains the
    /// agent afterwards). Returns the source's node index.
    fn originate(&mut self, fi: usize) -> usize {
        let now = self.now;
        let f = &mut self.flows[fi];
        let seq = f.originated;
        f.originated += 1;
        f.sent_at.push(now);
        f.got.push(false);
        f.parent_at.push(parent_stamp(&self.nodes, &self.sinks, f.source.index(), f.sink));
        let (src, sink, len) = (f.source.index(), f.sink, f.payload_bytes);
        let mut payload = vec![0u8; wsn_wire::besteffort::HEADER_LEN + len];
        {
            let mut p = wsn_wire::besteffort::Packet::new_unchecked(&mut payload[..]);
            wsn_wire::besteffort::Repr { flow: fi as u16, seq: seq as u32, data_len: len }
                .emit(&mut p, &vec![0u8; len]);
        }
        self.tracer.record(&TraceEvent::Originate { t: now, flow: fi as u32, seq });
        let n = &mut self.nodes[src];
        let mut ctx = Ctx { me: n.id, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
        let refused = n.agent.send(now, &mut ctx, sink, sink, PROTO_BEST_EFFORT, &payload).is_err();
        let f = &mut self.flows[fi];
        if f.refused_seq.len() <= seq as usize {
            f.refused_seq.resize(seq as usize + 1, false);
        }
        f.refused_seq[seq as usize] = refused;
        if refused {
            self.flows[fi].refused += 1;
            self.nodes[src].stats.queue_drops += 1;
            self.tracer.record(&TraceEvent::Drop { t: now, node: src as u32, reason: DropReason::QueueFull });
        }
        src
    }

    /// An application packet (its first six bytes: flow id and sequence number, the best-effort
    /// header layout) reached the sink application at `node` from `origin`. The simulator's own
    /// check: the packet must belong to a flow from `origin` to `node`, must have been originated,
    /// and must not have been delivered before. `in_order` also counts out-of-order deliveries
    /// (for the reliable transports). Returns the flow and sequence number of a valid delivery.
    pub(crate) fn sink_receive(
        &mut self,
        node: usize,
        origin: NodeId,
        hops: u8,
        payload: &[u8],
        in_order: bool,
    ) -> Option<(usize, u64)> {
        let now = self.now;
        // An end-to-end transport's sink (`in_order`) hands up only what a source sent: anything
        // that is not one of our packets is a phantom (the check does not trust the sink). A
        // frame injected into a best-effort run is merely malformed.
        let Ok(p) = wsn_wire::besteffort::Packet::new_checked(payload) else {
            self.nodes[node].stats.malformed += 1;
            self.unattributed_phantoms += u64::from(in_order);
            return None;
        };
        let (fi, seq) = (p.flow() as usize, p.seq() as u64);
        let Some(f) = self.flows.get_mut(fi) else {
            self.nodes[node].stats.malformed += 1;
            self.unattributed_phantoms += u64::from(in_order);
            return None;
        };
        if f.source != origin
            || f.sink.index() != node
            || seq >= f.originated
            || f.refused_seq.get(seq as usize).copied().unwrap_or(false)
        {
            f.phantom_deliveries += 1;
            return None;
        }
        if f.got[seq as usize] {
            f.duplicate_deliveries += 1;
            return None;
        }
        if in_order {
            // Behind a packet already handed up: out of order. Ahead by more than one: the
            // packets between were skipped (counted as undelivered, not as out of order).
            if f.rcrt.last_seq.is_some_and(|l| seq < l) {
                f.rcrt.out_of_order += 1;
            }
            f.rcrt.last_seq = Some(f.rcrt.last_seq.map_or(seq, |l| l.max(seq)));
        }
        f.got[seq as usize] = true;
        let stamp = f.parent_at[seq as usize];
        if f.last_seen_parent.is_some_and(|p| p != stamp) {
            f.parent_changes_seen += 1;
        }
        f.last_seen_parent = Some(stamp);
        f.delivered += 1;
        f.last_delivery = now;
        f.hops_sum += hops as u64;
        f.delay_sum_ns += (now - f.sent_at[seq as usize]).as_nanos() as u128;
        let b = bin_index(now, self.bin);
        if let Some(slot) = f.bins.get_mut(b) {
            *slot += 1;
        }
        self.tracer.record(&TraceEvent::Deliver { t: now, flow: fi as u32, seq, hops });
        Some((fi, seq))
    }

    // ---------------------------------------------------------------- agent glue

    /// Drain the agent's events, re-arm its timer and wake the MAC.
    pub(crate) fn after_agent(&mut self, i: usize) {
        self.pending_agent.push_back(i as u32);
        while let Some(j) = self.pending_agent.pop_front() {
            let j = j as usize;
            while let Some(ev) = self.nodes[j].agent.poll_event() {
                match ev {
                    AgentEvent::Delivered { origin, protocol, hops, payload } => {
                        if protocol == PROTO_BEST_EFFORT {
                            self.sink_receive(j, origin, hops, &payload, false);
                        } else if protocol == wsn_proto::rcrt::PROTO_RCRT {
                            self.endpoint_datagram(j, origin, hops, &payload);
                        }
                    }
                    AgentEvent::AppSlot { sink } => self.app_slot(j, sink),
                    AgentEvent::OwnSent { protocol, sink, upward, .. } => {
                        if protocol == wsn_proto::rcrt::PROTO_RCRT && upward {
                            self.source_send_done(j, sink);
                        }
                    }
                    AgentEvent::RateChanged { rate_pps, level } => {
                        self.rate_trace[j].push((self.now.as_secs_f64(), rate_pps, level));
                    }
                    AgentEvent::Dropped { reason, .. } => {
                        let s = &mut self.nodes[j].stats;
                        match reason {
                            DropReason::QueueFull => s.queue_drops += 1,
                            DropReason::RetriesExhausted | DropReason::ChannelAccess => s.mac_drops += 1,
                            DropReason::NoRoute => s.no_route_drops += 1,
                            DropReason::Duplicate => s.duplicates += 1,
                            DropReason::Malformed => s.malformed += 1,
                            DropReason::TtlExpired | DropReason::Loop => s.other_drops += 1,
                        }
                        self.tracer.record(&TraceEvent::Drop { t: self.now, node: j as u32, reason });
                    }
                }
            }
            let ql = self.nodes[j].agent.queue_len();
            let b = bin_index(self.now, self.bin);
            self.sample_queue(j, b, ql.min(u16::MAX as usize) as u16);
            let n = &mut self.nodes[j];
            n.stats.max_queue = n.stats.max_queue.max(ql);
            if ql > n.agent.queue_capacity() {
                n.stats.queue_overflows += 1;
            }
            if let Some(t) = n.agent.poll_timeout() {
                if n.agent_timer.is_none_or(|s| t < s) {
                    n.agent_timer = Some(t);
                    let t = t.max(self.now);
                    self.q.push(t, Ev::Agent { node: j as u32 });
                }
            }
            self.mac_kick(j);
        }
    }

    // ---------------------------------------------------------------- routing

    fn beacon_tick(&mut self, i: usize, ti: usize) {
        let now = self.now;
        let n = &mut self.nodes[i];
        let t = &mut n.trees[ti];
        let (b, change) = t.mhlqi.on_beacon_tick();
        let period = t.mhlqi.beacon_period();
        self.q.push(now + period, Ev::Beacon { node: i as u32, tree: ti as u16 });
        self.route_change(i, ti, change);
        let repr = BeaconRepr::from(b);
        let mut bytes = vec![0u8; wsn_wire::mhlqi::BEACON_LEN];
        // The buffer has exactly BEACON_LEN bytes, so emit cannot fail.
        let _ = repr.emit(&mut bytes);
        // One slot per tree: a newer beacon replaces the same tree's beacon still waiting, in
        // its place.
        let waiting = &mut self.nodes[i].mac.beacons;
        match waiting.iter_mut().find(|(t, _)| *t as usize == ti) {
            Some(slot) => slot.1 = bytes,
            None => waiting.push((ti as u16, bytes)),
        }
        self.mac_kick(i);
    }

    /// The route freeze (spec §6.4, `routing.freeze_after_s`), for every node whose parents
    /// lead to its sink at this moment; the others (in a routing loop, behind one, or without a
    /// route) keep MultiHopLQI's rules and freeze as soon as they do, checked at every route
    /// change until none is left. Freezing every node at one instant would keep a loop of the
    /// moment for good, cutting off every node in and behind it (the IFRC two-sink scenario,
    /// seed 4, froze a loop of three nodes with thirteen sources). A frozen node never changes its
    /// parent, and its parents were frozen with it or before it, so its path stays whole.
    /// [AMBIG → chosen: spec §6.4 says the freeze disables parent changes and is silent on a
    /// loop at that moment; an experiment that freezes wants a usable tree]
    fn freeze_rooted(&mut self) {
        // Each node's path state, worked out once per tree (linear in the nodes: the walks stop
        // at a node already known, and mark every node they passed at once).
        const UNKNOWN: u8 = 0;
        const WALKING: u8 = 1;
        const WHOLE: u8 = 2;
        const BROKEN: u8 = 3;
        let n = self.nodes.len();
        let mut waiting = false;
        let mut state = vec![UNKNOWN; n];
        let mut walk = Vec::new();
        for ti in 0..self.sinks.len() {
            state.fill(UNKNOWN);
            for i in 0..n {
                // Up the parents: the root, or a frozen node (whose path is whole), ends a whole
                // path; no parent, a broken path or a node of this walk (a loop) a broken one.
                walk.clear();
                let mut j = i;
                let end = loop {
                    match state[j] {
                        WHOLE | BROKEN => break state[j],
                        WALKING => break BROKEN,
                        _ => {}
                    }
                    let m = &self.nodes[j].trees[ti].mhlqi;
                    if m.is_root() || m.is_frozen() {
                        state[j] = WHOLE;
                        break WHOLE;
                    }
                    state[j] = WALKING;
                    walk.push(j);
                    match m.parent() {
                        Some(p) if p.index() < n => j = p.index(),
                        _ => break BROKEN,
                    }
                };
                for &k in &walk {
                    state[k] = end;
                }
            }
            if let Some(min) = self.freeze_min_prr {
                self.replace_weak_links(ti, &state, WHOLE, min);
            }
            for (i, &st) in state.iter().enumerate() {
                let m = &mut self.nodes[i].trees[ti].mhlqi;
                if m.is_frozen() {
                    continue;
                }
                if st == WHOLE {
                    // Its parents are frozen by this loop too, or were already.
                    m.set_frozen(true);
                } else {
                    waiting = true;
                }
            }
        }
        self.freeze_waiting = waiting;
    }

    /// The good-tree freeze ([`crate::routing::good_tree`]) for tree `ti`, over the nodes about
    /// to be frozen (`state[i] == whole`, not yet frozen): moves each one whose link to its
    /// parent falls below `min` (see [`Network::link_quality`]) to the best qualifying neighbour
    /// and records the moves and the weak links kept.
    fn replace_weak_links(&mut self, ti: usize, state: &[u8], whole: u8, min: f64) {
        let n = self.nodes.len();
        let mut parents: Vec<Option<usize>> =
            (0..n).map(|i| self.nodes[i].trees[ti].mhlqi.parent().map(|p| p.index()).filter(|&p| p < n)).collect();
        let usable: Vec<bool> = state.iter().map(|&st| st == whole).collect();
        let freezing: Vec<usize> =
            (0..n).filter(|&i| state[i] == whole && !self.nodes[i].trees[ti].mhlqi.is_frozen()).collect();
        let root = self.sinks[ti].index();
        let (moves, kept) = crate::routing::good_tree::plan(
            &mut parents,
            root,
            &usable,
            &freezing,
            |i| self.links.out[i].iter().map(|l| l.to as usize).collect(),
            |i, j| self.link_quality(i, j),
            min,
        );
        for m in moves {
            // The new parent's cost as it advertises it; its hop count as the tree now stands
            // (it may sit under a node moved in this pass, which it does not advertise yet). Its
            // descendants and the moved node's own link estimate catch up at the next beacons.
            let cost = self.nodes[m.to].trees[ti].mhlqi.cost();
            let hop = crate::routing::good_tree::depth(&parents, root, m.to).map_or(u8::MAX, |d| d.min(255) as u8);
            let change = self.nodes[m.node].trees[ti].mhlqi.move_frozen(NodeId(m.to as u16), cost, hop);
            self.note_route_change(m.node, ti, change);
            self.freeze_moves.push((self.now, ti as u16, m));
        }
        self.freeze_kept.extend(kept.into_iter().map(|k| (self.now, ti as u16, k)));
    }

    /// The share of frames the link `i → j` is expected to carry on a quiet channel (no other
    /// transmission), the lower of its two directions: a data frame of the MAC's largest
    /// payload from `i` to `j` (both reception tests of a frame, at its start and its end,
    /// taken at one noise level), and, when the MAC acknowledges, the ACK from `j` to `i`. The
    /// noise is the model's long-run level distribution plus the receiver's offset. 0 when a
    /// direction has no link. Only the good-tree freeze uses it.
    fn link_quality(&self, i: usize, j: usize) -> f64 {
        let expected = |from: usize, to: usize, f: &dyn Fn(f64) -> f64| -> f64 {
            let Some(g) = self.links.gain(from, to) else { return 0.0 };
            let p = self.links.tx_power_dbm[from] + f64::from(g);
            let offset = self.radios[to].noise.offset_db();
            self.noise_levels.iter().map(|&(level, w)| w * f(p - (level + offset))).sum()
        };
        let data = expected(i, j, &|sinr| quiet_data_success(&self.chan, &self.mac, sinr, self.mac.max_payload));
        if self.mac.ack == AckMode::None {
            return data;
        }
        let ack = expected(j, i, &|sinr| ack_success(&self.chan, &self.mac, sinr));
        data.min(ack)
    }

    fn route_change(&mut self, i: usize, ti: usize, change: RouteChange) {
        // First the change itself, then the freeze it may complete: the good-tree freeze can
        // move this very node, and its move must come after the change in the trace and the
        // reverse table (it did not, for a node frozen after the freeze time: a review).
        let waiting = self.freeze_waiting && change != RouteChange::None;
        self.note_route_change(i, ti, change);
        if waiting {
            // A node that waits for a whole path may just have found one, or a node below it.
            self.freeze_rooted();
        }
    }

    /// Bookkeeping of a route change: the reverse table, the parent-change count and the trace.
    fn note_route_change(&mut self, i: usize, ti: usize, change: RouteChange) {
        match change {
            RouteChange::None => {}
            RouteChange::NewParent { new, .. } => {
                let n = &mut self.nodes[i];
                n.trees[ti].reverse.on_parent_change(new);
                n.stats.parent_changes += 1;
                self.tracer.record(&TraceEvent::Parent {
                    t: self.now,
                    node: i as u32,
                    tree: ti as u16,
                    parent: Some(new),
                });
            }
            RouteChange::Lost { .. } => {
                self.tracer.record(&TraceEvent::Parent { t: self.now, node: i as u32, tree: ti as u16, parent: None });
            }
        }
    }

    fn handle_beacon(&mut self, i: usize, lqi: u8, payload: &[u8]) {
        let Ok(b) = BeaconRepr::parse(payload) else {
            self.nodes[i].stats.malformed += 1;
            return;
        };
        let Some(ti) = self.nodes[i].trees.iter().position(|t| t.sink == b.sink) else { return };
        let beacon = crate::routing::mhlqi::Beacon::from(b);
        let change = self.nodes[i].trees[ti].mhlqi.handle_beacon(&beacon, lqi);
        self.route_change(i, ti, change);
    }

    // ---------------------------------------------------------------- MAC

    fn schedule_mac(&mut self, i: usize, at: Instant) {
        let m = &mut self.nodes[i].mac;
        m.gen = m.gen.wrapping_add(1);
        let gen = m.gen;
        self.q.push(at, Ev::Mac { node: i as u16, gen });
    }

    /// Did an outage of node `i` begin after `after`, up to `upto`?
    fn outage_began_between(&self, i: usize, after: Instant, upto: Instant) -> bool {
        self.any_outage && self.outages[i].iter().any(|&(from, _)| after < from && from <= upto)
    }

    /// The end of the outage node `i`'s radio is in at `now`, if any.
    fn radio_off_until(&self, i: usize, now: Instant) -> Option<Instant> {
        if !self.any_outage {
            return None;
        }
        off_until(&self.outages[i], now)
    }

    /// Start contention if idle and something waits.
    fn mac_kick(&mut self, i: usize) {
        let n = &mut self.nodes[i];
        if n.mac.phase != Phase::Idle {
            return;
        }
        if n.mac.cur.is_none() && n.mac.beacons.is_empty() && !n.agent.wants_to_send() {
            return;
        }
        n.mac.phase = Phase::Backoff;
        n.mac.contend_since = self.now;
        let d = if self.mac.ieee802154_csma {
            draw_be(self.mac.csma_min_be, self.mac.initial_backoff.unit_ns, &mut n.rng_mac)
        } else {
            draw(self.mac.initial_backoff_of(n.sink), &mut n.rng_mac)
        };
        self.schedule_mac(i, self.now + d);
    }

    fn cca_clear(&mut self, i: usize) -> bool {
        let now = self.now;
        let rd = &mut self.radios[i];
        if self.mac.cca_mode3 && rd.locked.is_some() {
            return false;
        }
        let e = rd.energy_mw(&self.noise_model, now);
        rd.energy_dbm(e) < self.mac.cca_threshold_dbm
    }

    fn mac_timer(&mut self, i: usize) {
        let now = self.now;
        if !matches!(self.nodes[i].mac.phase, Phase::WaitAck | Phase::SendDoneDelay | Phase::Idle | Phase::Tx) {
            // Radio off: carrier sense and transmission wait until it is back, then the MAC
            // contends afresh with an initial backoff (nodes back from one outage would
            // otherwise all sense the channel at the same instant).
            if let Some(until) = self.radio_off_until(i, now) {
                // A transmission committed after a clear CCA (Turnaround) is abandoned, and the
                // powered-off radio loses its transmit buffer.
                self.radios[i].transmitting = false;
                if let Some(c) = self.nodes[i].mac.cur.as_mut().filter(|c| c.loaded) {
                    c.loaded = false;
                    c.reload = true;
                }
                self.contend_afresh(i, until);
                return;
            }
            // An outage that began and ended while the frame waited in the buffer (between two
            // MAC steps) emptied it too: reload and contend afresh from now.
            let since = self.nodes[i].mac.cur.as_ref().filter(|c| c.loaded).map(|c| c.loaded_at);
            if since.is_some_and(|t| self.outage_began_between(i, t, now)) {
                self.radios[i].transmitting = false;
                if let Some(c) = self.nodes[i].mac.cur.as_mut() {
                    c.loaded = false;
                    c.reload = true;
                }
                self.contend_afresh(i, now);
                return;
            }
        }
        match self.nodes[i].mac.phase {
            Phase::Backoff => {
                if self.nodes[i].mac.cur.is_none() && !self.bind_frame(i) {
                    self.nodes[i].mac.phase = Phase::Idle;
                    self.mac_kick(i);
                    return;
                }
                let n = &mut self.nodes[i];
                let cur = n.mac.cur.as_mut().expect("bound above");
                if !cur.loaded {
                    cur.loaded = true;
                    cur.loaded_at = now;
                    if (cur.attempts > 0 || cur.reload) && cur.kind == FrameKind::Agent {
                        // A retransmission, or a reload after an outage: the agent may re-stamp
                        // the frame for this attempt.
                        n.agent.refresh_frame(now, &mut cur.payload);
                    }
                    cur.reload = false;
                    let load = self.mac.txfifo_load(cur.payload.len());
                    // The load waits for the processor (frames it is still handling).
                    let start = now.max(n.cpu_busy_until);
                    if load > Duration::ZERO || start > now {
                        n.cpu_busy_until = start + load;
                        n.mac.phase = Phase::Loading;
                        self.schedule_mac(i, start + load);
                        return;
                    }
                }
                self.cca_step(i, false);
            }
            Phase::Loading => self.cca_step(i, false),
            Phase::Guard => self.cca_step(i, true),
            Phase::Turnaround => self.tx_start(i),
            Phase::WaitAck => self.attempt_failed(i),
            Phase::SendDoneDelay => {
                self.radios[i].transmitting = false;
                let (acked, ack_request) =
                    self.nodes[i].mac.cur.as_ref().map_or((false, false), |c| (c.done_acked, c.ack_request));
                if acked {
                    self.complete(i, true);
                } else if ack_request {
                    self.attempt_failed(i);
                } else {
                    // A broadcast is done, never retransmitted.
                    self.complete(i, false);
                }
            }
            Phase::RetryGap => self.contend_afresh(i, now),
            Phase::Idle | Phase::Tx => {}
        }
    }

    /// Back to `Backoff` with an initial backoff drawn from `from` (the 802.15.4 CSMA-CA state
    /// of the current frame reset): after a retry gap, and when a radio outage ends.
    fn contend_afresh(&mut self, i: usize, from: Instant) {
        let n = &mut self.nodes[i];
        n.mac.phase = Phase::Backoff;
        // `contend_since` stays: the first attempt began when the MAC left Idle, and a radio
        // outage during its backoff is part of it.
        let d = if self.mac.ieee802154_csma {
            if let Some(c) = n.mac.cur.as_mut() {
                c.nb = 0;
                c.be = self.mac.csma_min_be;
            }
            draw_be(self.mac.csma_min_be, self.mac.initial_backoff.unit_ns, &mut n.rng_mac)
        } else {
            draw(self.mac.initial_backoff_of(n.sink), &mut n.rng_mac)
        };
        self.schedule_mac(i, from + d);
    }

    /// Late binding: take the beacon or ask the agent for its frame now.
    fn bind_frame(&mut self, i: usize) -> bool {
        let now = self.now;
        let n = &mut self.nodes[i];
        let (kind, dst, ack_request, am_type, payload) = if !n.mac.beacons.is_empty() {
            let (_, b) = n.mac.beacons.remove(0);
            (FrameKind::Beacon, NodeId::BROADCAST, false, AM_BEACON, b)
        } else {
            let mut ctx = Ctx { me: n.id, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
            match n.agent.poll_frame(now, &mut ctx) {
                Some(f) => (FrameKind::Agent, f.dst, f.ack_request, AM_DATA, f.payload),
                None => return false,
            }
        };
        let ack_request = ack_request && !dst.is_broadcast() && self.mac.ack != AckMode::None;
        n.mac.dsn = n.mac.dsn.wrapping_add(1);
        let frame_id = self.next_frame_id;
        self.next_frame_id += 1;
        n.stats.frames_accepted += 1;
        n.mac.cur = Some(CurFrame {
            frame_id,
            kind,
            dst,
            ack_request,
            am_type,
            dsn: n.mac.dsn,
            payload,
            attempts: 0,
            first_tx: n.mac.contend_since,
            tx_start: now,
            ack_coming: false,
            dst_deaf: false,
            dst_link: u32::MAX,
            loaded: false,
            loaded_at: Instant::ZERO,
            reload: false,
            nb: 0,
            be: self.mac.csma_min_be,
            access_failed: false,
            done_acked: false,
        });
        true
    }

    fn cca_step(&mut self, i: usize, after_guard: bool) {
        let now = self.now;
        // IEEE 802.15.4 CSMA-CA as ns-3 runs it: the CCA answers at the end of its 8-symbol
        // window (`cca_guard_ns`), busy or clear, from the channel at that end [CODE ns-3.37
        // lr-wpan-phy.cc: PlmeCcaRequest schedules EndCca 8 symbols later, which tests the
        // receiver and the energy then; frames that start inside the window, at least 352 µs
        // long, are still on the air at its end]. The other presets sample at once and back off
        // at once on a busy channel (TinyOS's CCA pin is read instantly), and `tinyos2` samples
        // again after its guard.
        let ns3_window = self.mac.ieee802154_csma && self.mac.cca_guard_ns > 0;
        if ns3_window && !after_guard {
            self.nodes[i].mac.phase = Phase::Guard;
            self.schedule_mac(i, now + Duration(self.mac.cca_guard_ns));
            return;
        }
        if !self.cca_clear(i) {
            let mac = &self.mac;
            let n = &mut self.nodes[i];
            n.mac.phase = Phase::Backoff;
            let d = if mac.ieee802154_csma {
                let c = n.mac.cur.as_mut().expect("a frame is bound before CCA");
                c.nb += 1;
                c.be = (c.be + 1).min(mac.csma_max_be);
                if c.nb > mac.csma_max_backoffs {
                    // Channel-access failure: the frame is dropped [LIT: 802.15.4 §7.5.1.4].
                    c.access_failed = true;
                    self.complete(i, false);
                    return;
                }
                draw_be(c.be, mac.initial_backoff.unit_ns, &mut n.rng_mac)
            } else {
                draw(mac.congestion_backoff_of(n.sink), &mut n.rng_mac)
            };
            self.schedule_mac(i, now + d);
            return;
        }
        if !after_guard && self.mac.cca_guard_ns > 0 {
            self.nodes[i].mac.phase = Phase::Guard;
            self.schedule_mac(i, now + Duration(self.mac.cca_guard_ns));
            return;
        }
        // STXONCCA accepted: the radio turns to TX and loses whatever it was receiving (R1).
        let rd = &mut self.radios[i];
        rd.transmitting = true;
        rd.lock.lost = true;
        rd.locked = None;
        self.nodes[i].mac.phase = Phase::Turnaround;
        self.schedule_mac(i, now + Duration(self.mac.turnaround_ns));
    }

    fn tx_start(&mut self, i: usize) {
        let now = self.now;
        let (len, frame_id, dst, am, attempt) = {
            let n = &mut self.nodes[i];
            n.mac.phase = Phase::Tx;
            let cur = n.mac.cur.as_mut().expect("a frame is bound before TX");
            cur.tx_start = now;
            cur.attempts += 1;
            cur.ack_coming = false;
            cur.dst_deaf = false;
            match cur.kind {
                FrameKind::Agent => n.stats.data_tx += 1,
                FrameKind::Beacon => n.stats.beacon_tx += 1,
            }
            (cur.payload.len(), cur.frame_id, cur.dst, cur.am_type, cur.attempts)
        };
        let is_agent = self.nodes[i].mac.cur.as_ref().is_some_and(|c| matches!(c.kind, FrameKind::Agent));
        if let (Some(&slot), true) = (self.sink_slot.get(i).filter(|&&s| s != u16::MAX), is_agent) {
            let b = bin_index(now, self.bin);
            if let Some(c) = self.sink_tx_bins[slot as usize].get_mut(b) {
                *c += 1;
            }
        }
        self.frames_on_air += 1;
        let ack_req = self.nodes[i].mac.cur.as_ref().is_some_and(|c| c.ack_request);
        let air = self.mac.airtime(len)
            + if ack_req && self.mac.ack_in_frame { Duration(self.mac.ack_latency_ns) } else { Duration::ZERO };
        self.tracer.record(&TraceEvent::Tx { t: now, node: i as u32, frame_id, dst, am, len: len as u16, attempt });
        if self.tracer.pcap_enabled() {
            let n = &self.nodes[i];
            let cur = n.mac.cur.as_ref().expect("bound");
            self.tracer.pcap_data(now, n.id, cur.dst, cur.dsn, cur.ack_request, cur.am_type, &cur.payload);
        }
        // R2 at every neighbour.
        let env = RxEnv {
            noise: &self.noise_model,
            chan: &self.chan,
            overhead: self.mac.overhead_bytes,
            sinr_floor: self.sinr_floor,
            sure_ratio: self.sure_ratio,
            sure_db: self.sure_db,
            ns3: self.chan.reception == crate::scenario::Reception::Ns3,
        };
        self.receptions += self.rx_links[i].len() as u64;
        let links = &self.rx_links[i];
        for &k in &self.start_order[i] {
            let l = &links[k as usize];
            if self.any_outage && off_until(&self.outages[l.to as usize], now).is_some() {
                // A radio that is off decodes nothing (and cannot send a false ACK for it), but
                // the frame's power is on the air when it comes back: kept as interference only.
                self.radios[l.to as usize].add(l.p_mw);
                self.receptions -= 1;
                if NodeId(l.to as u16) == dst {
                    if let Some(cur) = self.nodes[i].mac.cur.as_mut() {
                        cur.dst_deaf = true;
                    }
                }
                continue;
            }
            arrival_start(&mut self.radios[l.to as usize], &env, i as u32, l, len, now);
        }
        self.q.push(now + air, Ev::TxEnd { node: i as u32 });
    }

    fn tx_end(&mut self, i: usize) {
        let now = self.now;
        // The payload is lent to the receivers for the settling loop (no copy per receiver) and
        // put back before anything else can look at the frame: nothing the receivers' agents do
        // reaches this sender's MAC while it is in the Tx phase.
        let (dst, ack_request, am, payload, started) = {
            let cur = self.nodes[i].mac.cur.as_mut().expect("on the air");
            (cur.dst, cur.ack_request, cur.am_type, std::mem::take(&mut cur.payload), cur.tx_start)
        };
        // The TOSSIM model keeps the radio transmitting (deaf) until sendDone
        // (`send_done_after_delay`), so nothing can lock on between the frame's end and the ACK
        // decision at the same instant.
        self.radios[i].transmitting = self.mac.ack_in_frame;
        let mut dst_decoded = false;
        let mut dst_link = u32::MAX;
        for k in 0..self.rx_links[i].len() {
            let RxLink { to, p_mw, .. } = self.rx_links[i][k];
            if NodeId(to as u16) == dst {
                dst_link = k as u32;
            }
            // A radio that was off when the frame started only counted its power (`tx_start`).
            if self.any_outage && off_until(&self.outages[to as usize], started).is_some() {
                self.radios[to as usize].subtract(p_mw);
                continue;
            }
            let ok = self.arrival_end(to as usize, i, p_mw, dst, am, &payload, now);
            if NodeId(to as u16) == dst {
                dst_decoded = ok;
            }
        }
        {
            let cur = self.nodes[i].mac.cur.as_mut().expect("on the air");
            cur.payload = payload;
            cur.dst_link = dst_link;
        }
        // A destination whose radio went off during the frame heard its end no more than one
        // that was off from the start: no false ACK either.
        let dst_off =
            self.any_outage && dst.index() < self.outages.len() && self.radio_off_until(dst.index(), now).is_some();
        let false_ack_coin = &mut self.radios[i].rng;
        let n = &mut self.nodes[i];
        if ack_request {
            // The false-ACK rule applies to a frame lost at the destination, not to one the
            // destination never heard (out of range) [spec §4.2 R3].
            let deaf = dst_off || n.mac.cur.as_ref().is_some_and(|c| c.dst_deaf);
            let false_ack =
                !dst_decoded && dst_link != u32::MAX && !deaf && false_ack_coin.gen::<f64>() < self.chan.false_ack_prob;
            let cur = n.mac.cur.as_mut().expect("on the air");
            cur.ack_coming = dst_decoded || false_ack;
            n.mac.phase = Phase::WaitAck;
            let gen = n.mac.gen.wrapping_add(1);
            n.mac.gen = gen;
            let wait = if self.mac.ack_in_frame { Duration::ZERO } else { Duration(self.mac.ack_latency_ns) };
            self.q.push(now + wait, Ev::AckCheck { node: i as u16, gen });
        } else if self.mac.ack_in_frame {
            // TOSSIM: a broadcast's sendDone too comes 11 symbols after its end.
            self.send_done_after_delay(i, false);
        } else {
            self.complete(i, false);
        }
    }

    /// `ack_in_frame` (TOSSIM): sendDone `ack_timeout_ns − ack_latency_ns` after the end of
    /// the frame (its ACK allowance included), acknowledged or not; the radio stays deaf until
    /// then [CODE t2: TossimPacketModelC.nc `send_transmit`, the RX/TX delay added to every
    /// frame's end; spec §5.9].
    fn send_done_after_delay(&mut self, i: usize, acked: bool) {
        let now = self.now;
        let delay = Duration(self.mac.ack_timeout_ns.saturating_sub(self.mac.ack_latency_ns));
        self.radios[i].transmitting = true;
        let n = &mut self.nodes[i];
        if let Some(c) = n.mac.cur.as_mut() {
            c.done_acked = acked;
        }
        n.mac.phase = Phase::SendDoneDelay;
        self.schedule_mac(i, now + delay);
    }

    /// Reception rule R3 at `r` for the frame of sender `s` (received at `p_mw`, destination
    /// `dst`, AM type `am`). Returns whether it was decoded.
    #[allow(clippy::too_many_arguments)]
    fn arrival_end(
        &mut self,
        r: usize,
        s: usize,
        p_mw: f64,
        dst: NodeId,
        am: u8,
        payload: &[u8],
        now: Instant,
    ) -> bool {
        let rd = &mut self.radios[r];
        rd.subtract(p_mw);
        if rd.locked != Some(s as u32) {
            // Not the frame the radio is locked on: lost from its first bit (see `LockedFrame`).
            return false;
        }
        let a = rd.lock;
        debug_assert_eq!(a.p_mw.to_bits(), p_mw.to_bits());
        let mut lost = a.lost;
        // End-of-frame SINR (dB), computed only when a coin or the LQI needs it.
        let mut sinr = None;
        let mut n1_mw = 0.0;
        if self.chan.reception == crate::scenario::Reception::Ns3 {
            // The last chunk, at the SINR of the last bit (the frame's own power removed).
            if !lost {
                n1_mw = rd.energy_mw(&self.noise_model, now);
                // A transmission start (R1) unlocks the radio and marks the frame lost.
                debug_assert!(!rd.transmitting);
                if !ns3_chunk_passes(&mut rd.rng, a.p_mw, n1_mw, ns3_chunk_bits(rd.chunk_since, now), self.sure_ratio) {
                    lost = true;
                }
            }
        } else if !lost {
            n1_mw = rd.energy_mw(&self.noise_model, now);
            if a.p_mw < n1_mw * self.sinr_floor {
                lost = true;
            } else if a.p_mw < n1_mw * self.sure_ratio {
                let x = a.p_dbm as f64 - rd.energy_dbm(n1_mw);
                sinr = Some(x);
                let p = frame_prr(&self.chan, self.mac.overhead_bytes, x, payload.len());
                if p < 1.0 && (p <= 0.0 || rd.rng.gen::<f64>() >= p) {
                    lost = true;
                }
            }
            // Else PRR is exactly 1: received without a coin.
        }
        rd.locked = None;
        if lost || rd.transmitting {
            return false;
        }
        // A radio switched off during the frame decodes nothing.
        if self.any_outage && off_until(&self.outages[r], now).is_some() {
            return false;
        }
        // Hand the frame up.
        let me = NodeId(r as u16);
        let for_me = dst == me || dst.is_broadcast();
        if self.mac.ack_protection_ns > 0
            && (for_me || self.mac.promiscuous)
            && self.nodes[r].mac.phase == Phase::Backoff
        {
            // TinyOS 1.x's ACK protection (spec §5.6): the frame reached the RX FIFO while this
            // node waits in a backoff, which restarts as a congestion backoff plus the ACK delay.
            // (`schedule_mac` inline: the radio record is still borrowed.)
            let n = &mut self.nodes[r];
            let d = draw(self.mac.congestion_backoff_of(n.sink), &mut n.rng_mac) + Duration(self.mac.ack_protection_ns);
            n.mac.gen = n.mac.gen.wrapping_add(1);
            n.stats.backoff_restarts += 1;
            self.q.push(now + d, Ev::Mac { node: r as u16, gen: n.mac.gen });
        }
        if am != AM_BEACON {
            let st = &mut self.nodes[r].stats;
            if for_me {
                st.data_rx += 1;
            } else {
                st.data_overheard += 1;
            }
        }
        if !for_me && !self.mac.promiscuous {
            return true;
        }
        if am != AM_BEACON && self.mac.cpu_per_rx_ns > 0 {
            let n = &mut self.nodes[r];
            n.cpu_busy_until = now.max(n.cpu_busy_until) + Duration(self.mac.cpu_per_rx_ns);
        }
        rd.rx_busy_until = now + Duration(self.mac.rx_process_ns);
        // The air at `r` has not changed since `n1_mw` was computed.
        let sinr = match sinr {
            Some(x) => x,
            None => a.p_dbm as f64 - rd.energy_dbm(n1_mw),
        };
        let lqi = sample_lqi(sinr, &mut rd.rng);
        let rssi = mw_to_dbm(a.p_mw + a.n0_mw).floor() as i16;
        let rx = RxInfo { link_src: NodeId(s as u16), link_dst: dst, rssi_dbm: rssi, lqi };
        if am == AM_BEACON {
            if for_me {
                self.handle_beacon(r, lqi, payload);
            }
            return true;
        }
        let n = &mut self.nodes[r];
        let mut ctx = Ctx { me, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
        if for_me {
            self.tracer.record(&TraceEvent::Rx { t: now, node: r as u32, from: s as u32, lqi });
            n.agent.handle_frame(now, &mut ctx, &rx, payload);
        } else {
            n.agent.handle_overheard(now, &mut ctx, &rx, payload);
        }
        self.after_agent(r);
        true
    }

    /// R4: the ACK decision at the sender.
    fn ack_check(&mut self, i: usize) {
        let now = self.now;
        let (dst, coming, dst_link) = {
            let cur = self.nodes[i].mac.cur.as_ref().expect("waiting for an ACK");
            (cur.dst, cur.ack_coming, cur.dst_link)
        };
        let mut ok = false;
        // A sender whose radio went off after its frame hears no ACK (the ACK is still sent).
        let deaf = self.radio_off_until(i, now).is_some();
        if coming && deaf {
            self.acks_on_air += 1;
            if self.tracer.pcap_enabled() {
                let dsn = self.nodes[i].mac.cur.as_ref().map(|c| c.dsn).unwrap_or(0);
                self.tracer.pcap_ack(now, dsn);
            }
        }
        let coming = coming && !deaf;
        if coming {
            // The reverse link's power, precomputed when the destination is a neighbour.
            let p_rev = match self.rev_p_dbm[i].get(dst_link as usize) {
                Some(&p) => (!p.is_nan()).then_some(p),
                None => self.links.gain(dst.index(), i).map(|g| self.links.tx_power_dbm[dst.index()] + g as f64),
            };
            if let Some(p_rev) = p_rev {
                let rd = &mut self.radios[i];
                let mw = rd.energy_mw(&self.noise_model, now);
                let c: f64 = rd.rng.gen();
                ok = c < ack_success(&self.chan, &self.mac, p_rev - rd.energy_dbm(mw));
            }
            self.acks_on_air += 1;
            if self.tracer.pcap_enabled() {
                let dsn = self.nodes[i].mac.cur.as_ref().map(|c| c.dsn).unwrap_or(0);
                self.tracer.pcap_ack(now, dsn);
            }
        }
        if ok {
            self.nodes[i].stats.acked += 1;
            if self.mac.ack_in_frame {
                self.send_done_after_delay(i, true);
            } else {
                self.complete(i, true);
            }
        } else if self.mac.ack_in_frame {
            self.send_done_after_delay(i, false);
        } else {
            // Wait out the ACK timeout (counted from the end of the data frame, `ack_latency_ns`
            // ago).
            self.nodes[i].mac.phase = Phase::WaitAck;
            let rest = Duration(self.mac.ack_timeout_ns.saturating_sub(self.mac.ack_latency_ns));
            self.schedule_mac(i, now + rest);
        }
    }

    fn attempt_failed(&mut self, i: usize) {
        let now = self.now;
        let attempts = self.nodes[i].mac.cur.as_ref().map_or(0, |c| c.attempts);
        if attempts > self.mac.max_retries {
            self.complete(i, false);
            return;
        }
        let n = &mut self.nodes[i];
        if let Some(c) = n.mac.cur.as_mut() {
            c.loaded = false;
        }
        n.mac.phase = Phase::RetryGap;
        let gap = self.mac.retry_gap_min_ns
            + if self.mac.retry_gap_spread_ns > 0 { n.rng_mac.gen_range(0..=self.mac.retry_gap_spread_ns) } else { 0 };
        self.schedule_mac(i, now + Duration(gap));
    }

    fn complete(&mut self, i: usize, acked: bool) {
        let now = self.now;
        let n = &mut self.nodes[i];
        let cur = n.mac.cur.take().expect("complete() needs a frame");
        n.mac.phase = Phase::Idle;
        n.mac.gen = n.mac.gen.wrapping_add(1);
        n.stats.send_done += 1;
        self.tracer.record(&TraceEvent::SendDone {
            t: now,
            node: i as u32,
            frame_id: cur.frame_id,
            acked,
            attempts: cur.attempts,
        });
        if cur.kind == FrameKind::Agent {
            if cur.attempts > 0 {
                n.stats.data_sent += 1;
            }
            let done = SendDone {
                frame_id: cur.frame_id,
                dst: cur.dst,
                acked,
                transmissions: cur.attempts,
                time_to_ack: if acked { Some(now - cur.first_tx) } else { None },
                channel_access_failure: cur.access_failed,
            };
            let mut ctx = Ctx { me: n.id, sinks: &self.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
            n.agent.handle_send_done(now, &mut ctx, &done);
            self.after_agent(i);
        } else {
            self.mac_kick(i);
        }
    }
}

/// The end of the outage window among `windows` that covers `now`, if any (the latest end when
/// windows overlap).
fn off_until(windows: &[(Instant, Instant)], now: Instant) -> Option<Instant> {
    windows.iter().filter(|&&(from, to)| from <= now && now < to).map(|&(_, to)| to).max()
}

/// The time-series bin of an event at `t`: bin k covers (k·bin, (k+1)·bin], so an event at
/// exactly k·bin counts in the bin that ends there, the bin network.csv samples at that
/// instant (its loop runs the events at the sampling time first), and an event at the run's
/// end in the last bin written (time 0 is in bin 0).
pub(crate) fn bin_index(t: Instant, bin: Duration) -> usize {
    (t.as_nanos().saturating_sub(1) / bin.as_nanos().max(1)) as usize
}

/// The parent of `node` on the tree of `sink` right now (`u16::MAX`: none, or no such tree).
pub(crate) fn parent_stamp(nodes: &[Node], sinks: &[NodeId], node: usize, sink: NodeId) -> u16 {
    sinks
        .iter()
        .position(|&s| s == sink)
        .and_then(|t| nodes[node].trees.get(t))
        .and_then(|t| t.mhlqi.parent())
        .map_or(u16::MAX, |p| p.0)
}

/// Reception rule R2 (spec §4.2) at receiver `rd` for the frame of sender `src` over link `l`.
fn arrival_start(rd: &mut Radio, env: &RxEnv, src: u32, l: &RxLink, len: usize, now: Instant) {
    if env.ns3 {
        arrival_start_ns3(rd, env, src, l, len, now);
        return;
    }
    let (p_dbm, p_mw) = (l.p_dbm, l.p_mw);
    let mut n0_mw = 0.0;
    // A frame that cannot be decoded even over the lowest noise needs no noise sample, logarithm
    // or coin.
    let pass = if l.hopeless {
        false
    } else {
        n0_mw = rd.energy_mw(env.noise, now);
        // Below the floor: lost; at `sure_ratio` and above: PRR exactly 1, so the dB computation
        // would pass it without drawing a coin. The two tests are combined without branching on
        // each (their outcomes vary from receiver to receiver; only the coin case branches).
        let below = p_mw < n0_mw * env.sinr_floor;
        let sure = p_mw >= n0_mw * env.sure_ratio;
        if below | sure {
            sure & !below
        } else {
            let p = frame_prr(env.chan, env.overhead, p_dbm - rd.energy_dbm(n0_mw), len);
            p >= 1.0 || (p > 0.0 && rd.rng.gen::<f64>() < p)
        }
    };
    let lost = rd.transmitting | !pass | rd.locked.is_some() | (now < rd.rx_busy_until);
    // A newcomer destroys the frame the radio is locked on unless that one is clearly stronger
    // (pairwise SIR coin). Every other frame on the air is lost already. At `sure_db` and above
    // the curve is exactly 1: it survives without a coin. (The SIR is computed whether or not
    // the radio is locked, `lock` always holding a value, so that one branch decides.)
    let sir = rd.lock.p_dbm as f64 - p_dbm;
    if rd.locked.is_some() & !rd.lock.lost & (sir < env.sure_db) {
        let p = frame_prr(env.chan, env.overhead, sir, rd.lock.len as usize);
        if p < 1.0 && (p <= 0.0 || rd.rng.gen::<f64>() >= p) {
            rd.lock.lost = true;
        }
    }
    if !lost {
        rd.lock_on(src, LockedFrame { p_dbm: p_dbm as f32, lost: false, len: len as u16, p_mw, n0_mw });
    }
    rd.add(p_mw);
}

/// ns-3.37 lr-wpan's lock threshold: an idle receiver locks on a frame whose SINR at the first
/// bit is above −5 dB (10^−0.5) [CODE ns-3.37 lr-wpan-phy.cc StartRx].
const NS3_LOCK_SINR_LINEAR: f64 = 0.316_227_766_016_837_94;
/// The O-QPSK PHY's data rate in bits per ms, which turns a chunk's duration into bits the way
/// ns-3 does (⌈Δt · 250 kb/s⌉) [CODE ns-3.37 lr-wpan-phy.cc CheckInterference].
const NS3_BITS_PER_MS: u64 = 250;

/// Bits of a chunk from `since` to `now` as ns-3 counts them: ⌈Δt · 250 kb/s⌉.
#[inline]
fn ns3_chunk_bits(since: Instant, now: Instant) -> u32 {
    let ns = (now - since).as_nanos();
    (ns * NS3_BITS_PER_MS).div_ceil(1_000_000).min(u32::MAX as u64) as u32
}

/// Whether a chunk of `bits` bits of a frame received at `p_mw` over `n_mw` (noise and
/// interference) survives: one coin at `(1 − BER)^bits`, none when that is exactly 1 (the linear
/// ratio is then at least `sure_ratio`, so no logarithm is taken either).
///
/// The chance is the exact chain's (`oqpsk_chunk_success_db` of the ratio in dB), but most coins
/// are decided against a cheap estimate of it whose error is bounded
/// ([`prr::oqpsk_chunk_estimate`]): a coin farther from the estimate than the bound falls on the
/// same side of the exact chance, and only a coin inside the bound (a few in 10⁴) or an input the
/// estimate does not cover takes the exact chain. Outcomes and coins drawn are those of the exact
/// chain alone.
#[inline]
fn ns3_chunk_passes(rng: &mut SimRng, p_mw: f64, n_mw: f64, bits: u32, sure_ratio: f64) -> bool {
    debug_assert!(n_mw > 0.0, "noise and interference must be positive");
    if p_mw >= n_mw * sure_ratio {
        return true;
    }
    let ratio = p_mw / n_mw;
    if let Some((p, err)) = prr::oqpsk_chunk_estimate(ratio, bits) {
        // The exact chance is below 1, so the exact chain draws this coin too.
        let u = rng.gen::<f64>();
        if u < p - err {
            return true;
        }
        if u > p + err {
            return false;
        }
        return u < prr::oqpsk_chunk_success_db(mw_to_dbm(ratio), bits);
    }
    let p = prr::oqpsk_chunk_success_db(mw_to_dbm(ratio), bits);
    p >= 1.0 || rng.gen::<f64>() < p
}

/// Charges the chunk of the frame `rd` is locked on since the last check, at the SINR of this
/// moment (`e_mw`: noise plus every arrival, the locked one included); one coin.
#[inline]
fn ns3_check_chunk(rd: &mut Radio, e_mw: f64, now: Instant, sure_ratio: f64) {
    if rd.locked.is_none() || rd.transmitting {
        return;
    }
    if !rd.lock.lost {
        let p_mw = rd.lock.p_mw;
        let bits = ns3_chunk_bits(rd.chunk_since, now);
        // Noise and interference: everything but the locked frame, never below the noise
        // (a frame 150 dB above the noise would otherwise round the difference to 0 or less).
        let n_mw = (e_mw - p_mw).max(rd.noise_cache.mw);
        if !ns3_chunk_passes(&mut rd.rng, p_mw, n_mw, bits, sure_ratio) {
            rd.lock.lost = true;
        }
    }
    rd.chunk_since = now;
}

/// The `ns3` reception model at the first bit of a frame (see [`crate::scenario::Reception`]).
fn arrival_start_ns3(rd: &mut Radio, env: &RxEnv, src: u32, l: &RxLink, len: usize, now: Instant) {
    let (p_dbm, p_mw) = (l.p_dbm, l.p_mw);
    let busy = rd.transmitting || rd.locked.is_some() || now < rd.rx_busy_until;
    let charge = rd.locked.is_some() && !rd.transmitting;
    if !charge && (busy || l.hopeless) {
        // No frame to charge, and the newcomer cannot lock (a hopeless link stays below −8 dB,
        // under the −5 dB lock threshold, even over the lowest noise): interference only, no
        // noise sample needed.
        rd.add(p_mw);
        return;
    }
    // The air before the newcomer: the locked frame's chunk so far is judged on it.
    let n0_mw = rd.energy_mw(env.noise, now);
    ns3_check_chunk(rd, n0_mw, now, env.sure_ratio);
    let lock = !busy && p_mw > n0_mw * NS3_LOCK_SINR_LINEAR;
    if lock {
        rd.lock_on(src, LockedFrame { p_dbm: p_dbm as f32, lost: false, len: len as u16, p_mw, n0_mw });
        rd.chunk_since = now;
    }
    // A frame the radio did not lock on is interference only.
    rd.add(p_mw);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The methods of a test agent that never sends: it ignores send-dones and has no frame.
    macro_rules! never_sends {
        () => {
            fn handle_send_done(&mut self, _: Instant, _: &mut dyn LinkCtx, _: &SendDone) {}
            fn wants_to_send(&self) -> bool {
                false
            }
            fn poll_frame(&mut self, _: Instant, _: &mut dyn LinkCtx) -> Option<wsn_proto::agent::Frame> {
                None
            }
        };
    }

    /// The methods of a test agent that ignores frames and send-dones and never sends: an
    /// empty queue of capacity 1.
    macro_rules! sends_nothing {
        () => {
            fn handle_frame(&mut self, _: Instant, _: &mut dyn LinkCtx, _: &RxInfo, _: &[u8]) {}
            never_sends!();
            fn queue_len(&self) -> usize {
                0
            }
            fn queue_capacity(&self) -> usize {
                1
            }
        };
    }

    /// The `send` of a test agent, which has no application.
    macro_rules! no_application {
        () => {
            fn send(
                &mut self,
                _: Instant,
                _: &mut dyn LinkCtx,
                _: NodeId,
                _: NodeId,
                _: u8,
                _: &[u8],
            ) -> Result<(), wsn_proto::agent::SendError> {
                unreachable!("test agents have no application")
            }
        };
    }

    /// The IFRC build's backoff, (r & 45) + 1: only the 16 sums of the mask's bits, each as
    /// often, with the mean of the uniform window it replaced (23.5 units).
    #[test]
    fn masked_backoff_draws_the_masks_values() {
        let b = crate::mac::MacConfig::ifrc2006().initial_backoff;
        let mut rng = stream(3, 0, 0, Purpose::Mac);
        let mut seen = std::collections::BTreeMap::new();
        let n = 160_000;
        for _ in 0..n {
            let k = draw(&b, &mut rng).as_nanos() / b.unit_ns;
            *seen.entry(k).or_insert(0u32) += 1;
        }
        let want: Vec<u64> = (0..64u64).filter(|v| v & !45 == 0).map(|v| v + 1).collect();
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), want);
        for (&k, &c) in &seen {
            assert!((c as f64 / n as f64 - 1.0 / 16.0).abs() < 0.005, "{k}: {c}");
        }
        let mean = seen.iter().map(|(&k, &c)| k as f64 * c as f64).sum::<f64>() / n as f64;
        assert!((mean - 23.5).abs() < 0.1, "{mean}");
        assert_eq!(b.mean(), Duration(47 * b.unit_ns / 2));
    }
    use crate::radio::noise::NoiseConfig;
    use proptest::prelude::*;

    fn radio() -> Radio {
        let model = NoiseModel::from_trace(&NoiseConfig::Constant { floor_dbm: -98.0 }, Vec::new()).unwrap();
        Radio::new(model.node(0.0, stream(1, 0, 0, Purpose::Noise)), stream(1, 0, 0, Purpose::Reception))
    }

    /// The `SendDone`s a [`Probe`] got, each with its time.
    type Timed = std::sync::Arc<std::sync::Mutex<Vec<(Instant, SendDone)>>>;

    /// Sends `left` frames to `dst`, each asking for an ACK, and keeps every `SendDone` with its
    /// time; it wants to send all along, but its first `refusals` polls find nothing ready (late
    /// binding: the backoff ended before the frame was).
    struct Probe {
        dst: NodeId,
        left: u32,
        refusals: u32,
        done: Timed,
    }

    impl Probe {
        /// A probe that never refuses a poll, with the list it fills.
        fn to(dst: NodeId, left: u32) -> (Box<Probe>, Timed) {
            let done = Timed::default();
            (Box::new(Probe { dst, left, refusals: 0, done: done.clone() }), done)
        }
    }

    /// The `SendDone`s of `done`, without their times.
    fn sent(done: &Timed) -> Vec<SendDone> {
        done.lock().unwrap().iter().map(|&(_, d)| d).collect()
    }

    impl NodeAgent for Probe {
        fn handle_frame(&mut self, _: Instant, _: &mut dyn LinkCtx, _: &RxInfo, _: &[u8]) {}
        fn handle_send_done(&mut self, now: Instant, _: &mut dyn LinkCtx, done: &SendDone) {
            self.done.lock().unwrap().push((now, *done));
        }
        fn wants_to_send(&self) -> bool {
            self.left > 0
        }
        fn poll_frame(&mut self, _: Instant, _: &mut dyn LinkCtx) -> Option<wsn_proto::agent::Frame> {
            if self.refusals > 0 {
                self.refusals -= 1;
                return None;
            }
            self.left = self.left.checked_sub(1)?;
            Some(wsn_proto::agent::Frame { dst: self.dst, ack_request: true, payload: vec![0; 20] })
        }
        fn poll_event(&mut self) -> Option<AgentEvent> {
            None
        }
        fn queue_len(&self) -> usize {
            self.left as usize
        }
        fn queue_capacity(&self) -> usize {
            usize::MAX
        }
        no_application!();
    }

    /// A network of `nodes` in a chain 2 m apart on a clean channel (no shadowing, constant
    /// noise), `tinyos1_tenet`, minimum-hop routes, for `duration_s`, with `extra` scenario text
    /// and `overrides`; built, not run.
    fn clean_chain(nodes: usize, duration_s: f64, extra: &str, overrides: &[String]) -> Network {
        let text = format!(
            "name = \"chain\"\nduration_s = {duration_s:?}\n[topology]\n\
             layout = {{ kind = \"chain\", nodes = {nodes}, spacing_m = 2.0 }}\n\
             [radio]\nnoise_offsets = false\n[radio.link]\nshadowing_sigma_db = 0.0\n\
             [radio.noise]\nmodel = \"constant\"\nfloor_dbm = -98.0\n\
             [mac]\npreset = \"tinyos1_tenet\"\n[routing]\nkind = \"shortest\"\n{extra}"
        );
        let sc = crate::scenario::Scenario::from_toml(&text, "test", std::env::temp_dir(), overrides).unwrap();
        crate::runner::prepare(&sc, None, None).unwrap().net
    }

    /// Two nodes 2 m apart on a clean channel, `tinyos1_tenet` with `overrides`; node 1 sends
    /// 200 frames to node 0 and, if `both`, node 0 as many to node 1. Returns node 1's outcomes
    /// and its count of restarted backoffs.
    fn two_probes(overrides: &[String], both: bool) -> (Vec<SendDone>, u64) {
        let mut net = clean_chain(2, 30.0, "", overrides);
        let (probe, done) = Probe::to(NodeId(0), 200);
        net.nodes[1].agent = probe;
        if both {
            let (probe, _) = Probe::to(NodeId(1), 200);
            net.nodes[0].agent = probe;
            net.after_agent(0);
        }
        net.after_agent(1);
        net.run_until(Instant::from_millis(30_000));
        let done = sent(&done);
        assert_eq!(done.len(), 200);
        (done, net.node_stats(1).backoff_restarts)
    }

    fn mean_time_to_ack_ns(done: &[SendDone]) -> f64 {
        let acked: Vec<u64> = done.iter().filter_map(|d| d.time_to_ack).map(|t| t.as_nanos()).collect();
        acked.iter().sum::<u64>() as f64 / acked.len().max(1) as f64
    }

    /// The good-tree freeze's link quality on a clean channel (constant noise): a data frame
    /// passes two reception tests at one noise level, so the data direction carries PRR²; the
    /// ACK one test, PRR; each at the receiver's noise (its offset included); the link's quality
    /// is the lower. Transmit power set so the 2-m links sit in the transitional region (SNR ≈
    /// 4.85 dB), the 4-m link far below it. With noise offsets the two directions differ, and
    /// the ACK's decides.
    #[test]
    fn link_quality_is_the_lower_direction_on_the_prr_curve() {
        let set = ["radio.link.tx_power_dbm=-27.2", "routing.kind=\"mhlqi\"", "routing.freeze_min_prr=0.66"];
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let net = clean_chain(3, 10.0, "", &set);
        let snr = |net: &Network, a: usize, b: usize| {
            net.links.tx_power_dbm[a] + f64::from(net.links.gain(a, b).unwrap()) + 98.0
                - net.radios[b].noise.offset_db()
        };
        let q = prr::prr(snr(&net, 1, 0));
        assert!(q > 0.3 && q < 0.95, "not in the transitional region: {q} at {} dB", snr(&net, 1, 0));
        assert!((net.link_quality(1, 0) - q * q).abs() < 1e-12, "{} vs {}", net.link_quality(1, 0), q * q);
        assert!(net.link_quality(2, 0) < 1e-9);
        // Without MAC ACKs only the data direction counts.
        let noack = [set.clone(), vec!["mac.preset=\"noack\"".to_string()]].concat();
        let net = clean_chain(3, 10.0, "", &noack);
        assert!((net.link_quality(1, 0) - q * q).abs() < 1e-12);
        // Offsets: the receiver's in each direction; here the ACK direction is the weaker.
        // (The first seed whose offsets make the ACK direction clearly weaker; the offsets are
        // drawn per node from the topology seed.)
        let (net, ack) = (1..=50)
            .find_map(|seed| {
                let with = [set.clone(), vec!["radio.noise_offsets=true".into(), format!("topology.seed={seed}")]];
                let net = clean_chain(3, 10.0, "", &with.concat());
                let (data, ack) = (prr::prr(snr(&net, 1, 0)).powi(2), prr::prr(snr(&net, 0, 1)));
                (ack < data - 0.05).then_some((net, ack))
            })
            .expect("a seed whose ACK direction is the weaker");
        assert!((net.link_quality(1, 0) - ack).abs() < 1e-12, "{} vs {ack}", net.link_quality(1, 0));
        // ns-3 reception: the lock threshold and one chunk over the whole frame, not PRR².
        let ns3 = [set, vec!["radio.reception=\"ns3\"".into(), "radio.prr_curve=\"ieee802154\"".into()]].concat();
        let net = clean_chain(3, 10.0, "", &ns3);
        let x = snr(&net, 1, 0);
        let bits = 8 * (net.mac.max_payload as u32 + net.mac.overhead_bytes);
        let data = prr::oqpsk_chunk_success_db(x, bits);
        let ack_len = if net.mac.ack_bytes == 0 { ACK_FRAME_BYTES } else { net.mac.ack_bytes };
        let ack = prr::oqpsk_chunk_success_db(snr(&net, 0, 1), 8 * ack_len);
        assert!((net.link_quality(1, 0) - data.min(ack)).abs() < 1e-12, "{} vs {data}, {ack}", net.link_quality(1, 0));
    }

    /// `time_to_ack` runs from the start of the first attempt, i.e. from when the MAC began to
    /// contend for the channel, so it includes the initial backoff (Flush's δ, spec §7.3), not
    /// only the air time and the ACK. On a clean link with one sender every frame's time is
    /// exactly its fixed part (TXFIFO load, turnaround, air time, ACK) plus a whole number of
    /// backoff units within the preset's initial window; over 200 frames every value of the
    /// window turns up.
    #[test]
    fn time_to_ack_includes_the_initial_backoff() {
        let (done, _) = two_probes(&[], false);
        let mac = MacConfig::tinyos1_tenet();
        // Air time plus the ACK's latency (all the old measure counted), after the TXFIFO load
        // and the turnaround that follow the backoff.
        let fixed =
            mac.txfifo_load(20).as_nanos() + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_latency_ns;
        let b = &mac.initial_backoff;
        let mut seen = std::collections::BTreeSet::new();
        for d in &done {
            let t = d.time_to_ack.expect("a clean link acks").as_nanos();
            assert_eq!(d.transmissions, 1, "{d:?}");
            let wait = t.checked_sub(fixed).unwrap_or_else(|| panic!("{t} ns < fixed part {fixed} ns"));
            let units = wait / b.unit_ns;
            assert_eq!(wait % b.unit_ns, 0, "{t} ns: fixed part {fixed} ns + {wait} ns, not whole backoff units");
            assert!((b.min_units as u64..=b.max_units as u64).contains(&units), "{t} ns: {units} backoff units");
            seen.insert(units);
        }
        assert_eq!(seen, (b.min_units as u64..=b.max_units as u64).collect(), "backoffs drawn");
    }

    /// `ieee802154`'s CCA takes its 8 symbols (128 µs) busy or clear, as ns-3's does: on a
    /// channel kept busy by the noise floor (our CCA energy counts the noise, ns-3's only the
    /// signals), with zero-length backoffs (BE 0), a frame fails channel access after exactly
    /// 1 + `csma_max_backoffs` CCAs of 128 µs each, not at once.
    #[test]
    fn an_ieee802154_busy_cca_takes_its_eight_symbols() {
        let set = |kv: &[&str]| kv.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut net = clean_chain(
            2,
            1.0,
            "",
            &set(&[
                "mac.preset=\"ieee802154\"",
                "mac.csma_min_be=0",
                "mac.csma_max_be=0",
                "radio.noise.floor_dbm=-90.0",
            ]),
        );
        let (probe, done) = Probe::to(NodeId(0), 1);
        net.nodes[1].agent = probe;
        net.after_agent(1);
        let mac = MacConfig::ieee802154();
        let failed_at = Instant(u64::from(mac.csma_max_backoffs + 1) * mac.cca_guard_ns);
        net.run_until(Instant(failed_at.as_nanos() - 1));
        assert!(done.lock().unwrap().is_empty(), "channel access failed before {failed_at:?}");
        net.run_until(failed_at);
        let done = sent(&done);
        assert_eq!(done.len(), 1, "no channel access failure at {failed_at:?}");
        assert!(done[0].channel_access_failure && !done[0].acked && done[0].transmissions == 0, "{:?}", done[0]);
    }

    /// A frame to a destination that never answers (its radio is off for the whole run) is
    /// sent 1 + `max_retries` times, and its one `SendDone` says so: not acknowledged, every
    /// transmission counted, the first included.
    #[test]
    fn an_unanswered_frame_uses_every_retry() {
        let mut net = clean_chain(2, 30.0, "[[outages]]\nnodes = 0\nfrom_s = 0.0\nto_s = 30.0\n", &[]);
        let (probe, done) = Probe::to(NodeId(0), 3);
        net.nodes[1].agent = probe;
        net.after_agent(1);
        net.run_until(Instant::from_millis(30_000));
        let tries = MacConfig::tinyos1_tenet().max_retries + 1;
        let done = sent(&done);
        assert_eq!(done.len(), 3);
        for d in &done {
            assert!(!d.acked && !d.channel_access_failure && d.time_to_ack.is_none(), "{d:?}");
            assert_eq!(u32::from(d.transmissions), u32::from(tries), "{d:?}");
        }
        assert_eq!(net.node_stats(1).data_tx, 3 * u64::from(tries));
    }

    /// A ticker whose next deadline a test can move: it counts its timeouts.
    struct Ticker {
        next: std::sync::Arc<std::sync::Mutex<Instant>>,
        period: Duration,
        fired: std::sync::Arc<std::sync::Mutex<u32>>,
    }

    impl NodeAgent for Ticker {
        fn handle_timeout(&mut self, now: Instant, _: &mut dyn LinkCtx) {
            *self.fired.lock().unwrap() += 1;
            *self.next.lock().unwrap() = now + self.period;
        }
        fn poll_timeout(&self) -> Option<Instant> {
            Some(*self.next.lock().unwrap())
        }
        fn poll_event(&mut self) -> Option<AgentEvent> {
            None
        }
        sends_nothing!();
        no_application!();
    }

    /// An agent deadline moved earlier leaves its old event behind; that event must not arm a
    /// second chain of timer events (each move used to add one for good). Also: `run_until`
    /// never moves the clock backwards.
    #[test]
    fn an_agent_timer_moved_earlier_keeps_one_event_chain() {
        let mut net = clean_chain(2, 30.0, "[routing.mhlqi]\nbeacon_period_binary_ms = 100000000\n", &[]);
        let next = std::sync::Arc::new(std::sync::Mutex::new(Instant::from_secs(10)));
        let fired = std::sync::Arc::new(std::sync::Mutex::new(0u32));
        net.nodes[1].agent =
            Box::new(Ticker { next: next.clone(), period: Duration::from_millis(100), fired: fired.clone() });
        net.after_agent(1);
        for k in 1..=20u64 {
            // Move the pending deadline earlier, 20 times.
            *next.lock().unwrap() = Instant::from_millis(10_000 - 100 * k);
            net.after_agent(1);
        }
        let before = net.events();
        net.run_until(Instant::from_secs(20));
        // From 8 s to 20 s every 100 ms: 121 timeouts, and about one event each (plus the 20
        // stale ones and the other node's few).
        assert_eq!(*fired.lock().unwrap(), 121);
        let events = net.events() - before;
        assert!(events < 121 + 20 + 50, "{events} events for 121 timeouts");
        net.run_until(Instant::from_secs(5));
        assert_eq!(net.now(), Instant::from_secs(20), "run_until moved the clock backwards");
    }

    /// MultiHopLQI's parent-beacon rule follows the MAC preset's era unless the scenario sets it
    /// (spec §7.2): 1.x/Tenet for `tinyos1_tenet` and `ifrc2006`, 2.x for the others.
    #[test]
    fn the_routing_rule_follows_the_preset_era() {
        let rule = |overrides: &[&str]| {
            let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
            let net = clean_chain(2, 1.0, "", &o);
            net.nodes[1].trees[0].mhlqi.tenet_rules()
        };
        assert!(rule(&[]));
        assert!(rule(&["mac.preset=\"ifrc2006\""]));
        assert!(!rule(&["mac.preset=\"tinyos2\""]));
        assert!(!rule(&["mac.preset=\"tossim\""]));
        assert!(rule(&["mac.preset=\"tinyos2\"", "routing.mhlqi.tenet_rules=true"]));
        assert!(!rule(&["routing.mhlqi.tenet_rules=false"]));
    }

    /// When a node adopts a new parent X, its children table loses the entry for destination X,
    /// "so that the parent is never also a child" [spec radio-mac-routing §6.3, Parent change]:
    /// the network applies the rule on every route change it handles.
    #[test]
    fn a_new_parent_leaves_the_children_table() {
        let mut net = clean_chain(4, 1.0, "", &[]);
        let t = &mut net.nodes[1].trees[0];
        assert_eq!(t.reverse.learn(NodeId(2), NodeId(3), Some(NodeId(0))), LearnOutcome::Learned);
        assert_eq!(t.reverse.learn(NodeId(3), NodeId(3), Some(NodeId(0))), LearnOutcome::Learned);
        net.route_change(1, 0, RouteChange::NewParent { old: Some(NodeId(0)), new: NodeId(2) });
        let t = &net.nodes[1].trees[0];
        assert_eq!(t.reverse.next_hop(NodeId(2)), None, "the new parent is still a child");
        assert_eq!(t.reverse.next_hop(NodeId(3)), Some(NodeId(3)), "another child went too");
    }

    /// An unanswered attempt ends `ack_timeout_ns` after the end of its frame, and the next one
    /// starts `retry_gap` later with a new initial backoff [spec radio-mac-routing §5.3 step 6:
    /// the ACK wait runs from the end of the frame; §5.5: Tenet's gap between tries]. With a
    /// one-value backoff and a fixed gap the `SendDone` of a frame to a silent node comes at an
    /// exact time: (1 + `max_retries`) × (backoff, TXFIFO load, turnaround, air time, ACK wait),
    /// plus `max_retries` gaps.
    #[test]
    fn an_unanswered_frame_ends_at_the_sum_of_its_waits() {
        let mac = MacConfig::tinyos1_tenet();
        let unit = mac.initial_backoff.unit_ns;
        let gap = 5_000_000u64;
        let over = vec![
            format!("mac.initial_backoff={{min_units=2,max_units=2,unit_ns={unit}}}"),
            format!("mac.retry_gap_min_ns={gap}"),
            "mac.retry_gap_spread_ns=0".to_string(),
        ];
        let mut net = clean_chain(2, 2.0, "[[outages]]\nnodes = 0\nfrom_s = 0.0\nto_s = 2.0\n", &over);
        let (probe, done) = Probe::to(NodeId(0), 1);
        net.nodes[1].agent = probe;
        net.after_agent(1);
        let tries = u64::from(mac.max_retries) + 1;
        let attempt = 2 * unit
            + mac.txfifo_load(20).as_nanos()
            + mac.turnaround_ns
            + mac.airtime(20).as_nanos()
            + mac.ack_timeout_ns;
        let end = Instant(tries * attempt + (tries - 1) * gap);
        net.run_until(Instant(end.as_nanos() - 1));
        assert!(done.lock().unwrap().is_empty(), "sendDone before {end:?}");
        net.run_until(end);
        let done = sent(&done);
        assert_eq!(done.len(), 1, "no sendDone at {end:?}");
        assert!(!done[0].acked && u64::from(done[0].transmissions) == tries, "{:?}", done[0]);
    }

    /// A broadcast is never acknowledged, so it goes out once even when the agent asks for an
    /// ACK [spec radio-mac-routing §5.3 step 6: no ACK requested → sendDone at once; §5.4: ACKs
    /// answer frames addressed to the node].
    #[test]
    fn a_broadcast_goes_out_once_even_with_an_ack_asked_for() {
        let mut net = clean_chain(2, 1.0, "", &[]);
        let (probe, done) = Probe::to(NodeId::BROADCAST, 3);
        net.nodes[1].agent = probe;
        net.after_agent(1);
        net.run_until(Instant::from_millis(1_000));
        let done = sent(&done);
        assert_eq!(done.len(), 3);
        assert!(done.iter().all(|d| !d.acked && d.transmissions == 1), "{done:?}");
        assert_eq!(net.node_stats(1).data_tx, 3);
    }

    /// `mac.sink_initial_backoff` (the IFRC build's base station draws (r & 7) + 1 units): the
    /// sink's frames wait 1–8 units before contending, a node's the preset's 1–16.
    #[test]
    fn a_sink_draws_its_own_backoff() {
        let unit = MacConfig::tinyos1_tenet().initial_backoff.unit_ns;
        let over = vec![format!("mac.sink_initial_backoff={{min_units=1,max_units=8,unit_ns={unit}}}")];
        let mac = MacConfig::tinyos1_tenet();
        let floor =
            mac.txfifo_load(20).as_nanos() + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_latency_ns;
        let waits = |from: usize, to: u16, overrides: &[String]| {
            let mut net = clean_chain(2, 30.0, "", overrides);
            assert!(net.nodes[0].sink && !net.nodes[1].sink);
            let (probe, done) = Probe::to(NodeId(to), 200);
            net.nodes[from].agent = probe;
            net.after_agent(from);
            net.run_until(Instant::from_millis(30_000));
            let units: std::collections::BTreeSet<u64> = sent(&done)
                .iter()
                .map(|d| (d.time_to_ack.expect("a clean link acks").as_nanos() - floor) / unit)
                .collect();
            units
        };
        let sink = waits(0, 1, &over);
        assert_eq!((sink.first(), sink.last()), (Some(&1), Some(&8)), "sink: {sink:?}");
        let node = waits(1, 0, &over);
        assert_eq!((node.first(), node.last()), (Some(&1), Some(&16)), "node: {node:?}");
        let sink_default = waits(0, 1, &[]);
        assert_eq!(sink_default.last(), Some(&16), "without the key: {sink_default:?}");
        assert_eq!(MacConfig::ifrc2006().initial_backoff_of(true).max_units, 8);
        assert_eq!(MacConfig::ifrc2006().congestion_backoff_of(true).max_units, 32);
        assert_eq!(MacConfig::ifrc2006().congestion_backoff_of(false).max_units, 190);
        assert_eq!(MacConfig::tinyos1_tenet().initial_backoff_of(true), &MacConfig::tinyos1_tenet().initial_backoff);
    }

    /// TinyOS 1.x's ACK protection (`mac.ack_protection_ns`): a frame node 1 receives while it
    /// waits in a backoff restarts that backoff (a congestion backoff, mean 9.9 ms, plus the
    /// delay), so its frames take longer to go out when node 0 sends to it at the same time.
    /// Off (0, the default), or with nothing received, no backoff is restarted.
    #[test]
    fn ack_protection_restarts_the_backoff_on_a_received_frame() {
        let on = vec!["mac.ack_protection_ns=2288818".to_string()];
        let (alone, restarts_alone) = two_probes(&on, false);
        let (off_both, restarts_off) = two_probes(&[], true);
        let (on_both, restarts_on) = two_probes(&on, true);
        assert_eq!((restarts_alone, restarts_off), (0, 0));
        assert_eq!(mean_time_to_ack_ns(&alone), mean_time_to_ack_ns(&two_probes(&[], false).0));
        eprintln!(
            "restarts {restarts_on}, time to ACK {:.2} ms with the rule, {:.2} ms without",
            mean_time_to_ack_ns(&on_both) / 1e6,
            mean_time_to_ack_ns(&off_both) / 1e6
        );
        // Node 1 spends much of its time in backoffs while node 0 keeps sending to it.
        assert!(restarts_on >= 20, "{restarts_on} restarts");
        let (on_ms, off_ms) = (mean_time_to_ack_ns(&on_both) / 1e6, mean_time_to_ack_ns(&off_both) / 1e6);
        assert!(on_ms > off_ms, "with the rule {on_ms:.2} ms, without {off_ms:.2} ms");
    }

    /// A radio that was off when a frame started still has the frame's power on its air when
    /// it comes back (carrier sense and SINR see it), and loses it when the frame ends: at every
    /// instant each radio counts exactly the frames on the air from senders within its range.
    #[test]
    fn a_radio_back_from_an_outage_senses_frames_already_on_the_air() {
        let mut net = clean_chain(3, 6.0, "[[outages]]\nnodes = 0\nfrom_s = 1.0\nto_s = 3.0\n", &[]);
        for (i, dst) in [(1, 0), (2, 0)] {
            let (probe, _) = Probe::to(NodeId(dst), 100_000);
            net.nodes[i].agent = probe;
            net.after_agent(i);
        }
        let (mut checks, mut off_with_power) = (0u64, 0u64);
        for step in 1..=60_000u64 {
            let now = Instant(step * 100_000);
            net.run_until(now);
            for r in 0..3 {
                let senders: Vec<usize> = (0..3)
                    .filter(|&s| s != r && net.nodes[s].mac.phase == Phase::Tx)
                    .filter(|&s| net.rx_links[s].iter().any(|l| l.to as usize == r))
                    .collect();
                assert_eq!(net.radios[r].n_active as usize, senders.len(), "radio {r} at {now:?}");
                let sum: f64 =
                    senders.iter().map(|&s| net.rx_links[s].iter().find(|l| l.to as usize == r).unwrap().p_mw).sum();
                assert!((net.radios[r].active_mw - sum).abs() <= 1e-9 * sum.max(1e-30));
                checks += 1;
            }
            if net.radio_off_until(0, now).is_some() && net.radios[0].n_active > 0 {
                off_with_power += 1;
            }
        }
        assert_eq!(checks, 180_000);
        // The check is not vacuous: node 0's radio was off with power on its air many times.
        assert!(off_with_power > 100, "{off_with_power}");
    }

    /// A queue length counts in every bin it was held through, not only in bins with an event
    /// at the node, up to the end of the run.
    #[test]
    fn queue_bins_carry_the_length_through_quiet_bins() {
        let mut net = clean_chain(2, 100.0, "", &[]);
        assert_eq!(net.queue_bins(1).len(), 11);
        net.sample_queue(1, 2, 5);
        net.sample_queue(1, 6, 0);
        net.sample_queue(1, 8, 3);
        net.close_queue_bins();
        assert_eq!(net.queue_bins(1), &[0, 0, 5, 5, 5, 5, 5, 0, 3, 3, 0][..]);
        assert!(net.queue_bins(0).iter().all(|&q| q == 0));
    }

    /// Sends frames stamped with the time they were built or last re-stamped (first 8 bytes);
    /// records the frames it receives with their stamps.
    struct Stamper {
        me: u16,
        dst: NodeId,
        got: std::sync::Arc<std::sync::Mutex<Vec<(Instant, u64, u16)>>>,
    }

    impl NodeAgent for Stamper {
        fn handle_frame(&mut self, now: Instant, _: &mut dyn LinkCtx, _: &RxInfo, payload: &[u8]) {
            let stamp = u64::from_be_bytes(payload[..8].try_into().unwrap());
            let from = u16::from_be_bytes(payload[8..10].try_into().unwrap());
            self.got.lock().unwrap().push((now, stamp, from));
        }
        fn handle_send_done(&mut self, _: Instant, _: &mut dyn LinkCtx, _: &SendDone) {}
        fn wants_to_send(&self) -> bool {
            self.dst != NodeId::BROADCAST
        }
        fn poll_frame(&mut self, now: Instant, _: &mut dyn LinkCtx) -> Option<wsn_proto::agent::Frame> {
            let mut payload = vec![0; 20];
            payload[..8].copy_from_slice(&now.as_nanos().to_be_bytes());
            payload[8..10].copy_from_slice(&self.me.to_be_bytes());
            self.wants_to_send().then_some(wsn_proto::agent::Frame { dst: self.dst, ack_request: true, payload })
        }
        fn refresh_frame(&mut self, now: Instant, payload: &mut [u8]) {
            payload[..8].copy_from_slice(&now.as_nanos().to_be_bytes());
        }
        fn poll_event(&mut self) -> Option<AgentEvent> {
            None
        }
        fn queue_len(&self) -> usize {
            usize::from(self.wants_to_send())
        }
        fn queue_capacity(&self) -> usize {
            1
        }
        no_application!();
    }

    /// A frame in the radio's transmit buffer when the radio goes off is loaded again after the
    /// outage and re-stamped (the agent's `refresh_frame`, as for a retransmission): no frame
    /// goes on the air with a stamp from before an outage that ended before it left. Node 1
    /// sends back to back to node 0 while node 2 competes for the channel, and node 1's radio
    /// is off 200 times for 50 ms.
    #[test]
    fn a_frame_loaded_before_an_outage_is_restamped_after_it() {
        // 200 outages of 50 ms (longer than any backoff: a MAC step finds the radio off), and
        // 2,000 of 1 ms (most begin and end between two MAC steps).
        let long: Vec<(u64, u64)> = (0..200u64).map(|k| (1_000_000 + 97_000 * k, 1_050_000 + 97_000 * k)).collect();
        let short: Vec<(u64, u64)> = (0..2000u64).map(|k| (1_000_000 + 9_700 * k, 1_001_000 + 9_700 * k)).collect();
        for (windows, long_ones) in [(long, true), (short, false)] {
            let mut outages = String::new();
            for (a, b) in &windows {
                outages +=
                    &format!("[[outages]]\nnodes = 1\nfrom_s = {:?}\nto_s = {:?}\n", *a as f64 / 1e6, *b as f64 / 1e6);
            }
            let mut net = clean_chain(3, 22.0, &outages, &[]);
            let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            net.nodes[0].agent = Box::new(Stamper { me: 0, dst: NodeId::BROADCAST, got: got.clone() });
            let other = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            net.nodes[1].agent = Box::new(Stamper { me: 1, dst: NodeId(0), got: other.clone() });
            net.nodes[2].agent = Box::new(Stamper { me: 2, dst: NodeId(0), got: other });
            net.after_agent(1);
            net.after_agent(2);
            let mut reloads = 0u64;
            for step in 1..=22_000u64 {
                let now = Instant::from_millis(step);
                net.run_until(now);
                let off = net.radio_off_until(1, now).is_some();
                reloads += u64::from(off && net.nodes[1].mac.cur.as_ref().is_some_and(|c| c.loaded || c.reload));
            }
            if long_ones {
                assert!(reloads > 0, "no outage caught a loaded frame");
            }
            let air = MacConfig::tinyos1_tenet().airtime(20).as_nanos();
            // Node 1's frames (node 2 has no outage).
            let got: Vec<(Instant, u64, u16)> = got.lock().unwrap().iter().copied().filter(|g| g.2 == 1).collect();
            assert!(got.len() > 500, "{} frames", got.len());
            let mut stale = 0;
            for &(rx, stamp, _) in got.iter() {
                let tx = rx.as_nanos() - air;
                // An outage that began after the stamp and ended before the frame left.
                stale += windows.iter().filter(|&&(a, b)| stamp < a * 1_000 && b * 1_000 <= tx).count();
            }
            assert_eq!(stale, 0, "long outages: {long_ones}");
        }
    }

    /// Two nodes with one flow from node 1 to the sink that has originated `n` packets, none
    /// delivered yet.
    fn flow_with_originated(n: usize) -> Network {
        let mut net = clean_chain(2, 10.0, "[[flows]]\nsources = 1\nrate_pps = 1.0\n", &[]);
        let f = &mut net.flows[0];
        f.originated = n as u64;
        f.got = vec![false; n];
        f.sent_at = vec![Instant::ZERO; n];
        f.parent_at = vec![0; n];
        net
    }

    /// The application bytes of packet `seq` of flow 0 (the best-effort header layout).
    fn app_packet(seq: u32) -> [u8; 6] {
        let mut data = [0u8; 6];
        let mut p = wsn_wire::besteffort::Packet::new_unchecked(&mut data[..]);
        p.set_flow(0);
        p.set_seq(seq);
        data
    }

    /// The simulator's in-order check counts a packet handed up behind a later one, once per
    /// such packet; a skipped packet (never delivered) does not make every later delivery out
    /// of order.
    #[test]
    fn out_of_order_counts_late_packets_not_skipped_ones() {
        let mut net = flow_with_originated(8);
        let mut deliver = |seq: u32| {
            assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(seq), true).is_some(), "seq {seq}");
            net.flows[0].rcrt.out_of_order
        };
        // 2 is skipped: 3, 4, 5 are still in order.
        for seq in [0, 1, 3, 4, 5] {
            assert_eq!(deliver(seq), 0, "seq {seq}");
        }
        // 2 arrives late: one out-of-order delivery; 6 and 7 are in order again.
        assert_eq!(deliver(2), 1);
        assert_eq!(deliver(6), 1);
        assert_eq!(deliver(7), 1);
    }

    /// A best-effort packet its source's queue refused never entered the network: a delivery
    /// of its number is a phantom, not a delivery; its neighbours deliver as usual.
    #[test]
    fn a_refused_packet_delivered_is_a_phantom() {
        let mut net = flow_with_originated(3);
        net.flows[0].refused_seq = vec![false, true, false];
        let mut deliver = |seq: u32| net.sink_receive(0, NodeId(1), 1, &app_packet(seq), false).is_some();
        assert!(deliver(0));
        assert!(!deliver(1), "the refused number");
        assert!(deliver(2));
        assert_eq!(net.flows[0].phantom_deliveries, 1);
    }

    /// The `ns3` chunk decision exactly as it was before the bounded estimate: the exact chain,
    /// one coin unless the chance is exactly 1.
    fn chunk_passes_exact(rng: &mut SimRng, p_mw: f64, n_mw: f64, bits: u32, sure_ratio: f64) -> bool {
        use rand::Rng; // (proptest's prelude exports another `Rng`)
        if p_mw >= n_mw * sure_ratio {
            return true;
        }
        let p = prr::oqpsk_chunk_success_db(mw_to_dbm(p_mw / n_mw), bits);
        p >= 1.0 || rng.gen::<f64>() < p
    }

    #[test]
    fn chunk_decisions_match_the_exact_chain_coin_for_coin() {
        use rand::Rng;
        // 400,000 chunks at SINRs from −12 to +8 dB over −98 dBm, 1 to 1,100 bits, each decided
        // by both with one coin stream each: the same outcome, and the same coins drawn (the
        // streams stay in step).
        let sure_ratio = dbm_to_mw(prr::prr_oqpsk_one_from_db() + SURE_MARGIN_DB);
        let mut pick = crate::rng::stream(7, 0, 0, crate::rng::Purpose::Reception);
        let (mut fast, mut exact) = (
            crate::rng::stream(7, 0, 1, crate::rng::Purpose::Reception),
            crate::rng::stream(7, 0, 1, crate::rng::Purpose::Reception),
        );
        let (mut passed, mut fallbacks) = (0u32, 0u32);
        let n_mw = dbm_to_mw(-98.0);
        for i in 0..400_000 {
            let sinr_db = -12.0 + 20.0 * pick.gen::<f64>();
            let p_mw = dbm_to_mw(-98.0 + sinr_db);
            let bits = pick.gen_range(1..=1100u32);
            if let Some((p, err)) = prr::oqpsk_chunk_estimate(p_mw / n_mw, bits) {
                // The coin this chunk will draw falls within the estimate's error: the exact
                // chain decides.
                fallbacks += (p - err..=p + err).contains(&fast.clone().gen::<f64>()) as u32;
            }
            let a = ns3_chunk_passes(&mut fast, p_mw, n_mw, bits, sure_ratio);
            let b = chunk_passes_exact(&mut exact, p_mw, n_mw, bits, sure_ratio);
            assert_eq!(a, b, "chunk {i}: {sinr_db} dB, {bits} bits");
            assert_eq!(fast.clone().gen::<u64>(), exact.clone().gen::<u64>(), "chunk {i}: coins out of step");
            passed += a as u32;
        }
        // Both outcomes occur in bulk, and the exact fallback is taken now and then.
        assert!((100_000..300_000).contains(&passed), "{passed}");
        assert!(fallbacks > 0, "no coin fell within the error");
        eprintln!("{passed} of 400000 chunks passed; {fallbacks} decided by the exact chain");
    }

    // ------------------------------------------------------------ MAC audit (mac33)

    /// `clean_chain(2, …)` with a `Probe` at node 1 sending `left` frames to `dst`; the
    /// agent is started (its MAC contends from time 0), the network not run.
    fn timed_probe(extra: &str, overrides: &[&str], dst: NodeId, left: u32, refusals: u32) -> (Network, Timed) {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let mut net = clean_chain(2, 30.0, extra, &overrides);
        let done = Timed::default();
        net.nodes[1].agent = Box::new(Probe { dst, left, refusals, done: done.clone() });
        net.after_agent(1);
        (net, done)
    }

    /// A one-value backoff window of `units` units of `unit_ns`, as a `[mac]` override.
    fn fixed_backoff(key: &str, units: u32, unit_ns: u64) -> String {
        format!("mac.{key}={{min_units={units},max_units={units},unit_ns={unit_ns}}}")
    }

    /// On a busy channel (the noise floor above the CCA threshold) every CCA fails and the MAC
    /// waits a *congestion* backoff before the next, without limit and without sending [spec
    /// radio-mac-routing §5.3 step 4, §5.6]: with one-value windows (initial 2 units,
    /// congestion 5) the MAC steps at exactly 2 units (bind and TXFIFO load), 2 units + the
    /// load (first CCA), then every 5 units.
    #[test]
    fn a_busy_channel_repeats_congestion_backoffs_without_sending() {
        let unit = MacConfig::tinyos1_tenet().initial_backoff.unit_ns;
        let (ini, cong) = (fixed_backoff("initial_backoff", 2, unit), fixed_backoff("congestion_backoff", 5, unit));
        let (mut net, done) = timed_probe("", &[&ini, &cong, "radio.noise.floor_dbm=-70.0"], NodeId(0), 1, 0);
        let load = MacConfig::tinyos1_tenet().txfifo_load(20).as_nanos();
        let g0 = net.nodes[1].mac.gen;
        let mut steps = vec![2 * unit, 2 * unit + load];
        steps.extend((1..=40).map(|k| 2 * unit + load + k * 5 * unit));
        for (k, &t) in steps.iter().enumerate() {
            net.run_until(Instant(t - 1));
            assert_eq!(net.nodes[1].mac.gen, g0.wrapping_add(k as u32), "a MAC step before {t} ns");
            net.run_until(Instant(t));
            assert_eq!(net.nodes[1].mac.gen, g0.wrapping_add(k as u32 + 1), "no MAC step at {t} ns");
            // The first step loads the frame; every later one found the channel busy.
            assert_eq!(net.nodes[1].mac.phase, if k == 0 { Phase::Loading } else { Phase::Backoff });
        }
        assert_eq!(net.node_stats(1).data_tx, 0, "sent on a busy channel");
        assert!(done.lock().unwrap().is_empty());
    }

    /// Clear channel assessment: clear while the energy (here the −98 dBm floor) is below the
    /// threshold, busy at or above it; in CCA mode 3 (`cca_mode3`, the CC2420 presets) also
    /// busy while the radio is locked on a frame, whatever the energy [spec radio-mac-routing
    /// §4.6].
    #[test]
    fn cca_reads_the_energy_and_in_mode_3_the_lock() {
        let set = |kv: &[&str]| kv.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut net = clean_chain(2, 1.0, "", &[]);
        assert!(net.mac.cca_mode3);
        assert!(net.cca_clear(1), "−98 dBm of noise read busy");
        net.radios[1].locked = Some(0);
        assert!(!net.cca_clear(1), "mode 3: a radio locked on a frame reads clear");
        let mut net = clean_chain(2, 1.0, "", &set(&["mac.cca_mode3=false"]));
        net.radios[1].locked = Some(0);
        assert!(net.cca_clear(1), "without mode 3 the lock counts");
        let mut net = clean_chain(2, 1.0, "", &set(&["mac.cca_threshold_dbm=-98.5"]));
        assert!(!net.cca_clear(1), "−98 dBm read clear against a −98.5 dBm threshold");
    }

    /// A MAC without ACKs (`noack`) never asks for one, whatever the agent asks: each frame
    /// goes out once, is not acknowledged, no ACK is on the air, and the sendDone comes at the
    /// end of the frame, not after an ACK wait [spec radio-mac-routing §5.3 step 6].
    #[test]
    fn a_mac_without_acks_never_waits_for_one() {
        let mac = MacConfig::noack();
        let unit = mac.initial_backoff.unit_ns;
        let ini = fixed_backoff("initial_backoff", 20, unit);
        let (mut net, done) = timed_probe("", &["mac.preset=\"noack\"", &ini], NodeId(0), 3, 0);
        net.run_until(Instant::from_millis(1_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 3);
        let frame = 20 * unit + mac.cca_guard_ns + mac.turnaround_ns + mac.airtime(20).as_nanos();
        for (k, (t, d)) in done.iter().enumerate() {
            assert!(!d.acked && d.transmissions == 1 && d.time_to_ack.is_none(), "{d:?}");
            assert_eq!(t.as_nanos(), (k as u64 + 1) * frame, "sendDone {k}");
        }
        assert_eq!(net.frames_on_air(), (3, 0));
        assert_eq!((net.node_stats(1).data_tx, net.node_stats(1).acked), (3, 0));
        assert_eq!(net.node_stats(0).data_rx, 3);
    }

    /// Late binding: when the backoff ends and the agent has nothing ready although it wants
    /// to send, the MAC goes back to idle and contends afresh with a new initial backoff, so
    /// two empty polls cost two backoffs; the frame's time to ACK counts from the contention
    /// that bound it.
    #[test]
    fn a_frame_not_ready_after_the_backoff_costs_a_new_backoff() {
        let mac = MacConfig::tinyos1_tenet();
        let unit = mac.initial_backoff.unit_ns;
        let (mut net, done) = timed_probe("", &[&fixed_backoff("initial_backoff", 2, unit)], NodeId(0), 1, 2);
        net.run_until(Instant::from_millis(1_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 1, "the frame never went out");
        let fixed = 2 * unit
            + mac.txfifo_load(20).as_nanos()
            + mac.turnaround_ns
            + mac.airtime(20).as_nanos()
            + mac.ack_latency_ns;
        let (t, d) = done[0];
        assert_eq!(t.as_nanos(), 2 * 2 * unit + fixed, "{d:?}");
        assert_eq!(d.time_to_ack, Some(Duration(fixed)), "{d:?}");
        assert_eq!(net.node_stats(1).frames_accepted, 1);
    }

    /// A backoff that ends while the node's radio is off does not sense the channel: the MAC
    /// contends afresh with an initial backoff drawn from the end of the outage.
    #[test]
    fn contention_resumes_a_backoff_after_the_outage() {
        let mac = MacConfig::tinyos1_tenet();
        let unit = mac.initial_backoff.unit_ns;
        let outage = "[[outages]]\nnodes = 1\nfrom_s = 0.0\nto_s = 0.05\n";
        let (mut net, done) = timed_probe(outage, &[&fixed_backoff("initial_backoff", 2, unit)], NodeId(0), 1, 0);
        net.run_until(Instant::from_millis(1_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 1);
        let end = 50_000_000
            + 2 * unit
            + mac.txfifo_load(20).as_nanos()
            + mac.turnaround_ns
            + mac.airtime(20).as_nanos()
            + mac.ack_latency_ns;
        assert_eq!(done[0].0.as_nanos(), end, "{:?}", done[0].1);
        assert!(done[0].1.acked && done[0].1.transmissions == 1);
        assert_eq!(done[0].1.time_to_ack, Some(Duration(end)), "the outage is part of the first attempt");
    }

    /// Tenet's gap between tries is drawn per retry from 5–36 binary ms [spec radio-mac-routing
    /// §5.5]: to a silent node each frame takes its five fixed attempts (one-value backoff)
    /// plus four gaps, each within the window, and the gaps vary from frame to frame.
    #[test]
    fn retry_gaps_are_drawn_from_their_window() {
        let mac = MacConfig::tinyos1_tenet();
        let unit = mac.initial_backoff.unit_ns;
        let outage = "[[outages]]\nnodes = 0\nfrom_s = 0.0\nto_s = 30.0\n";
        let (mut net, done) = timed_probe(outage, &[&fixed_backoff("initial_backoff", 2, unit)], NodeId(0), 60, 0);
        net.run_until(Instant::from_millis(30_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 60);
        let tries = u64::from(mac.max_retries) + 1;
        let attempt = 2 * unit
            + mac.txfifo_load(20).as_nanos()
            + mac.turnaround_ns
            + mac.airtime(20).as_nanos()
            + mac.ack_timeout_ns;
        let (lo, hi) =
            ((tries - 1) * mac.retry_gap_min_ns, (tries - 1) * (mac.retry_gap_min_ns + mac.retry_gap_spread_ns));
        let mut start = 0;
        let mut gaps = Vec::new();
        for (t, d) in &done {
            assert!(!d.acked && u64::from(d.transmissions) == tries, "{d:?}");
            let g = (t.as_nanos() - start).checked_sub(tries * attempt).expect("shorter than its attempts");
            assert!((lo..=hi).contains(&g), "gaps of {g} ns, not in [{lo}, {hi}]");
            gaps.push(g);
            start = t.as_nanos();
        }
        let (min, max) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
        // Four uniform gaps of 0–31 ms over their minimum: sums spread over tens of ms.
        assert!(max - min > 40_000_000, "gap sums within {min}–{max} ns");
    }

    /// IEEE 802.15.4 CSMA-CA: each busy CCA raises BE by one up to macMaxBE, and the next
    /// backoff is drawn from [0, 2^BE − 1] units [spec radio-mac-routing §5.9; IEEE 802.15.4
    /// §7.5.1.4]. On a channel that is always busy, with BE from 1 to 4, a frame fails after 5
    /// CCAs of 128 µs and backoffs with BE 1, 2, 3, 4, 4: at most 1 + 3 + 7 + 15 + 15 = 41
    /// units in all; without the growth it could wait at most 5 units, uncapped 57.
    #[test]
    fn ieee802154_backoff_exponent_grows_to_its_cap() {
        let (mut net, done) = timed_probe(
            "",
            &["mac.preset=\"ieee802154\"", "mac.csma_min_be=1", "mac.csma_max_be=4", "radio.noise.floor_dbm=-90.0"],
            NodeId(0),
            200,
            0,
        );
        net.run_until(Instant::from_millis(30_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 200);
        let mac = MacConfig::ieee802154();
        let (unit, ccas) = (mac.initial_backoff.unit_ns, u64::from(mac.csma_max_backoffs) + 1);
        let mut start = 0;
        let mut most = 0;
        for (t, d) in &done {
            assert!(d.channel_access_failure && d.transmissions == 0, "{d:?}");
            let wait = (t.as_nanos() - start) - ccas * mac.cca_guard_ns;
            assert_eq!(wait % unit, 0, "{wait} ns of backoff");
            assert!(wait / unit <= 41, "{} units of backoff", wait / unit);
            most = most.max(wait / unit);
            start = t.as_nanos();
        }
        assert!(most > 30, "at most {most} units of backoff");
        // Every frame the MAC accepted (the 200 and the routing layer's beacon, which fails
        // as well) was finished; none went on the air, so none counts as sent.
        let s = net.node_stats(1);
        assert!(s.frames_accepted >= 200 && s.frames_accepted == s.send_done, "{s:?}");
        assert_eq!((s.data_tx, s.beacon_tx, s.data_sent), (0, 0, 0), "{s:?}");
    }

    /// `tinyos2` waits its 7-jiffy guard after a clear CCA and senses again before the
    /// turnaround [spec radio-mac-routing §5.3 step 4]: on a clean link with one sender and a
    /// one-value backoff every frame's time to ACK is backoff + guard + turnaround + air time +
    /// ACK latency, exactly.
    #[test]
    fn tinyos2_waits_its_guard_after_a_clear_cca() {
        let mac = MacConfig::tinyos2();
        let unit = mac.initial_backoff.unit_ns;
        let ini = fixed_backoff("initial_backoff", 20, unit);
        let (mut net, done) = timed_probe("", &["mac.preset=\"tinyos2\"", &ini], NodeId(0), 5, 0);
        net.run_until(Instant::from_millis(1_000));
        let done = done.lock().unwrap().clone();
        assert_eq!(done.len(), 5);
        let want = 20 * unit + mac.cca_guard_ns + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_latency_ns;
        for (_, d) in &done {
            assert_eq!(d.time_to_ack, Some(Duration(want)), "{d:?}");
        }
        let s = net.node_stats(1);
        assert_eq!((s.data_tx, s.data_sent, s.acked, s.send_done), (5, 5, 5, 5), "{s:?}");
    }

    /// TOSSIM's packet model (`tossim`): the ACK allowance is part of the frame, and sendDone
    /// follows 11 symbols after the (extended) frame whether or not it was acknowledged; a
    /// broadcast has no allowance but the same 11 symbols [spec radio-mac-routing §5.4, §5.9].
    /// On a clean link with a one-value backoff, an acknowledged unicast frame ends at backoff +
    /// RX/TX delay + air time + 34 + 11 symbols, a broadcast 34 symbols earlier.
    #[test]
    fn tossim_send_done_follows_the_extended_frame_by_eleven_symbols() {
        let mac = MacConfig::tossim();
        let unit = mac.initial_backoff.unit_ns;
        let ini = fixed_backoff("initial_backoff", 100, unit);
        let base = 100 * unit + mac.turnaround_ns + mac.airtime(20).as_nanos();
        for (dst, extra) in
            [(NodeId(0), mac.ack_timeout_ns), (NodeId::BROADCAST, mac.ack_timeout_ns - mac.ack_latency_ns)]
        {
            let (mut net, done) = timed_probe("", &["mac.preset=\"tossim\"", &ini], dst, 3, 0);
            net.run_until(Instant::from_millis(1_000));
            let done = done.lock().unwrap().clone();
            assert_eq!(done.len(), 3);
            for (k, (t, d)) in done.iter().enumerate() {
                assert_eq!(t.as_nanos(), (k as u64 + 1) * (base + extra), "{dst:?}: sendDone {k}, {d:?}");
                assert_eq!(d.acked, dst == NodeId(0), "{d:?}");
                assert_eq!(d.time_to_ack, d.acked.then_some(Duration(base + extra)), "{d:?}");
            }
        }
    }

    /// Under `tossim` too, an unacknowledged unicast frame is retransmitted up to
    /// `max_retries` times (the packet model adds no retries of its own, the preset has none):
    /// to a silent node with two retries it goes out three times, each attempt ending 11
    /// symbols after its extended frame; and after each sendDone the radio hears again.
    #[test]
    fn tossim_retries_an_unacknowledged_frame_and_then_hears_again() {
        let mac = MacConfig::tossim();
        let unit = mac.initial_backoff.unit_ns;
        let ini = fixed_backoff("initial_backoff", 100, unit);
        let attempt = 100 * unit + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_timeout_ns;
        let outage = "[[outages]]\nnodes = 0\nfrom_s = 0.0\nto_s = 0.5\n";
        let (mut net, done) =
            timed_probe(outage, &["mac.preset=\"tossim\"", "mac.max_retries=2", &ini], NodeId(0), 1, 0);
        net.run_until(Instant::from_millis(500));
        let got = done.lock().unwrap().clone();
        assert_eq!(got.len(), 1);
        assert!(!got[0].1.acked && got[0].1.transmissions == 3, "{:?}", got[0].1);
        assert_eq!(got[0].0.as_nanos(), 3 * attempt);
        // Node 0, back, sends to node 1, whose radio is no longer transmitting.
        let back = Timed::default();
        net.nodes[0].agent = Box::new(Probe { dst: NodeId(1), left: 2, refusals: 0, done: back.clone() });
        net.after_agent(0);
        net.run_until(Instant::from_millis(1_000));
        let back = back.lock().unwrap().clone();
        assert_eq!(back.len(), 2);
        assert!(back.iter().all(|(_, d)| d.acked), "{back:?}");
        assert_eq!(net.node_stats(1).data_rx, 2);
    }

    /// Reports the drops it is given, one `AgentEvent::Dropped` each.
    struct Dropper {
        drops: Vec<DropReason>,
    }

    impl NodeAgent for Dropper {
        fn poll_event(&mut self) -> Option<AgentEvent> {
            self.drops.pop().map(|reason| AgentEvent::Dropped { reason, origin: None })
        }
        sends_nothing!();
        no_application!();
    }

    /// An agent's drops land in the node's counters by reason: a full queue in `queue_drops`
    /// (forwarded packets; a refused local send is counted where it is refused), a MAC give-up
    /// (retries or channel access) in `mac_drops`, and each other reason in its own counter.
    #[test]
    fn agent_drops_are_counted_by_reason() {
        use DropReason::*;
        let mut net = clean_chain(2, 1.0, "", &[]);
        let drops =
            vec![QueueFull, QueueFull, QueueFull, RetriesExhausted, ChannelAccess, NoRoute, Duplicate, Duplicate];
        let drops = [drops, vec![Malformed, TtlExpired, Loop]].concat();
        net.nodes[1].agent = Box::new(Dropper { drops });
        net.after_agent(1);
        let s = net.node_stats(1);
        let got = (s.queue_drops, s.mac_drops, s.no_route_drops, s.duplicates, s.malformed, s.other_drops);
        assert_eq!(got, (3, 2, 1, 2, 1, 2), "{s:?}");
    }

    /// Mutation audit of the MAC state machine (session 37): rules of docs/simulator.md "MAC
    /// (§5)" and "[[outages]]", and of the code's doc comments, that no other test pinned.
    mod audit37_mac {
        use super::*;

        /// `[[outages]]` windows as scenario text: node `node` off from `from` to `to` (ns).
        pub(super) fn outage(node: usize, from: u64, to: u64) -> String {
            format!("[[outages]]\nnodes = {node}\nfrom_s = {:?}\nto_s = {:?}\n", from as f64 / 1e9, to as f64 / 1e9)
        }

        /// Node 1's first attempt under `tinyos1_tenet` with a one-value initial backoff of 2
        /// units (the `fixed_backoff` override it returns): the clear CCA that commits it, the
        /// start of its frame and the end of its frame (20-byte payload), ns.
        pub(super) fn first_attempt() -> (String, u64, u64, u64) {
            let mac = MacConfig::tinyos1_tenet();
            let unit = mac.initial_backoff.unit_ns;
            let cca = 2 * unit + mac.txfifo_load(20).as_nanos();
            let start = cca + mac.turnaround_ns;
            (fixed_backoff("initial_backoff", 2, unit), cca, start, start + mac.airtime(20).as_nanos())
        }

        /// The outage windows cover `[from, to)`, and where windows overlap the radio is back
        /// at the latest end [doc comment of `off_until`].
        #[test]
        fn off_until_takes_the_latest_end_of_the_windows_covering_now() {
            let w = [(Instant(10), Instant(50)), (Instant(30), Instant(90)), (Instant(40), Instant(60))];
            assert_eq!(off_until(&w, Instant(9)), None);
            assert_eq!(off_until(&w, Instant(10)), Some(Instant(50)));
            assert_eq!(off_until(&w, Instant(45)), Some(Instant(90)));
            assert_eq!(off_until(&w, Instant(89)), Some(Instant(90)));
            assert_eq!(off_until(&w, Instant(90)), None);
        }

        /// `outage_began_between(i, after, upto)`: an outage that began after `after` (not at
        /// it), up to `upto` (included) [its doc comment].
        #[test]
        fn an_outage_begins_after_the_first_instant_up_to_the_second() {
            let net = clean_chain(2, 2.0, &outage(1, 1_000_000_000, 1_500_000_000), &[]);
            let s = Instant::from_millis;
            assert!(net.outage_began_between(1, s(500), s(1_000)));
            assert!(!net.outage_began_between(1, s(1_000), s(1_200)));
            assert!(net.outage_began_between(1, Instant(999_999_999), s(1_000)));
            assert!(!net.outage_began_between(1, s(500), Instant(999_999_999)));
            assert!(!net.outage_began_between(0, s(500), s(1_500)), "node 0 has no outage");
        }

        /// A transmission committed after a clear CCA (the turnaround) is abandoned when the
        /// radio goes off, whether it is still off at the end of the turnaround or was off only
        /// in between: at the end of the turnaround, the MAC's next step, the radio is no longer
        /// transmitting (it can hear again when it is back; during the outage's first moments,
        /// at most the 192-µs turnaround, it still counts as transmitting, which changes nothing
        /// for a radio that is off) and the MAC contends afresh [`mac_timer`'s comments; docs/simulator.md `[[outages]]`:
        /// "a MAC timer that would ... transmit waits until the radio is back"].
        #[test]
        fn an_outage_in_the_turnaround_abandons_the_transmission() {
            let (ini, cca, start, _) = first_attempt();
            for (from, to) in [(cca + 50_000, cca + 10_000_000), (cca + 50_000, cca + 100_000)] {
                let (mut net, _) = timed_probe(&outage(1, from, to), &[&ini], NodeId(0), 1, 0);
                net.run_until(Instant(cca));
                assert_eq!(net.nodes[1].mac.phase, Phase::Turnaround);
                assert!(net.radios[1].transmitting);
                net.run_until(Instant(start));
                assert!(!net.radios[1].transmitting, "outage {from}–{to}: still transmitting");
                assert_eq!(net.nodes[1].mac.phase, Phase::Backoff);
                assert_eq!(net.node_stats(1).data_tx, 0);
            }
        }

        /// "An ACK due while the sender's radio is off is sent but not heard" [docs/simulator.md
        /// `[[outages]]`]: node 1's radio goes off just after its first frame ends; the ACK is
        /// on the air at the decision, node 1 does not count it, and the frame succeeds with its
        /// second transmission after the outage.
        #[test]
        fn an_ack_due_while_the_sender_is_off_is_sent_but_not_heard() {
            let (ini, _, _, end) = first_attempt();
            let decided = end + MacConfig::tinyos1_tenet().ack_latency_ns;
            let (mut net, done) = timed_probe(&outage(1, end + 100_000, end + 50_000_000), &[&ini], NodeId(0), 1, 0);
            net.run_until(Instant(decided));
            assert_eq!(net.frames_on_air().1, 1, "the ACK was not sent");
            assert_eq!(net.node_stats(1).acked, 0, "an ACK heard by a radio that is off");
            net.run_until(Instant::from_millis(1_000));
            let done = sent(&done);
            assert_eq!(done.len(), 1);
            assert!(done[0].acked && done[0].transmissions == 2, "{:?}", done[0]);
        }

        /// False ACKs (here with `radio.false_ack_prob = 1`) come only from a destination that
        /// heard the frame and lost it [spec radio-mac-routing §4.2 R3; docs/simulator.md
        /// `[[outages]]`: a frame that starts while a radio is off "draws no false ACK"; the
        /// code's comment in `tx_end`: a destination that went off during the frame neither]: a
        /// destination that does not exist (out of range), one that was off when the first
        /// attempt started and came back during it (its second attempt is acknowledged for
        /// real), and one that went off during the first attempt and stays off (every attempt
        /// unanswered).
        #[test]
        fn no_false_ack_from_a_destination_that_did_not_hear_the_frame() {
            let (ini, _, start, end) = first_attempt();
            let tries = MacConfig::tinyos1_tenet().max_retries + 1;
            let mid = (start + end) / 2;
            // The last field: node 1's attempts that began while node 0 was off, which are no
            // frame arrivals (`Network::receptions`: "for every frame on the air, one per radio
            // within the neighbour cut-off"; a radio that is off decodes nothing).
            let cases = [(NodeId(7), String::new(), false, tries, 0), (NodeId(0), outage(0, 0, mid), true, 2, 1)];
            let cases = [&cases[..], &[(NodeId(0), outage(0, mid, 10_000_000_000), false, tries, tries - 1)]].concat();
            for (dst, outages, acked, transmissions, unheard) in cases {
                let (mut net, done) = timed_probe(&outages, &[&ini, "radio.false_ack_prob=1.0"], dst, 1, 0);
                net.run_until(Instant::from_millis(2_000));
                let done = sent(&done);
                assert_eq!(done.len(), 1, "{dst:?} {outages}");
                assert_eq!((done[0].acked, done[0].transmissions), (acked, transmissions), "{dst:?} {outages}");
                // Two radios: every frame on the air (node 1's attempts, node 0's beacon) is one
                // arrival at the other, except the attempts that began while node 0 was off.
                assert_eq!(net.receptions(), net.frames_on_air().0 - u64::from(unheard), "{dst:?} {outages}");
            }
        }

        /// "A retransmission starts again from `csma_min_be`" [docs/simulator.md, IEEE 802.15.4
        /// CSMA-CA; `contend_afresh`: "the 802.15.4 CSMA-CA state of the current frame reset"]:
        /// NB back to 0 and BE to macMinBE.
        #[test]
        fn contending_afresh_resets_the_csma_ca_state() {
            let (mut net, _) = timed_probe("", &["mac.preset=\"ieee802154\""], NodeId(0), 1, 0);
            let mut t = 0;
            while net.nodes[1].mac.cur.is_none() {
                t += 10_000;
                assert!(t < 100_000_000, "no frame bound");
                net.run_until(Instant(t));
            }
            let c = net.nodes[1].mac.cur.as_mut().unwrap();
            (c.nb, c.be) = (3, 5);
            net.contend_afresh(1, Instant(t));
            let c = net.nodes[1].mac.cur.as_ref().unwrap();
            assert_eq!((c.nb, c.be), (0, MacConfig::ieee802154().csma_min_be));
        }

        /// Under IEEE 802.15.4 CSMA-CA the first backoff too is uniform in [0, 2^BE − 1] units
        /// with BE = `csma_min_be` [docs/simulator.md, IEEE 802.15.4 CSMA-CA: "steps 1 and 4
        /// use the standard's unslotted algorithm instead of fixed windows"], not the preset's
        /// `initial_backoff` window: with macMinBE = 0 on a clean link every frame waits no
        /// backoff at all, only its CCA, turnaround, air time and ACK.
        #[test]
        fn ieee802154_first_backoff_follows_the_backoff_exponent() {
            let (mut net, done) =
                timed_probe("", &["mac.preset=\"ieee802154\"", "mac.csma_min_be=0"], NodeId(0), 20, 0);
            net.run_until(Instant::from_millis(2_000));
            let done = sent(&done);
            assert_eq!(done.len(), 20);
            let mac = MacConfig::ieee802154();
            let want = mac.cca_guard_ns + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_latency_ns;
            for d in &done {
                assert_eq!(d.time_to_ack, Some(Duration(want)), "{d:?}");
            }
        }

        /// The processor does one thing at a time: the TXFIFO load and the time charged for
        /// received frames "queue behind each other" [doc comment of `MacConfig::cpu_per_rx_ns`;
        /// docs/simulator.md, MAC (§5): "a TXFIFO load starts only when it is free, so a node busy
        /// with what it hears transmits later"]. A load keeps the processor busy to its end; and
        /// with no load at all (`tinyos2`) a busy processor still holds the frame back until it
        /// is free.
        #[test]
        fn the_txfifo_load_and_a_busy_processor_queue_behind_each_other() {
            let (ini, cca, _, _) = first_attempt();
            let (mut net, _) = timed_probe("", &[&ini], NodeId(0), 1, 0);
            let load = MacConfig::tinyos1_tenet().txfifo_load(20).as_nanos();
            net.run_until(Instant(cca - load));
            assert_eq!(net.nodes[1].mac.phase, Phase::Loading);
            assert_eq!(net.nodes[1].cpu_busy_until, Instant(cca), "the load does not hold the processor");

            let mac = MacConfig::tinyos2();
            let unit = mac.initial_backoff.unit_ns;
            let ini = fixed_backoff("initial_backoff", 20, unit);
            let (mut net, done) = timed_probe("", &["mac.preset=\"tinyos2\"", &ini], NodeId(0), 1, 0);
            let busy = 20 * unit + 5_000_000;
            net.nodes[1].cpu_busy_until = Instant(busy);
            net.run_until(Instant::from_millis(100));
            let done = sent(&done);
            assert_eq!(done.len(), 1);
            let want = busy + mac.cca_guard_ns + mac.turnaround_ns + mac.airtime(20).as_nanos() + mac.ack_latency_ns;
            assert_eq!(done[0].time_to_ack, Some(Duration(want)), "{:?}", done[0]);
        }

        /// "The radio turns to transmit: it loses whatever it was receiving (R1)"
        /// [docs/simulator.md, MAC (§5) step 6]: with a CCA that ignores the lock (not mode 3),
        /// a radio locked on a frame at its clear CCA is unlocked when it commits.
        #[test]
        fn committing_to_transmit_drops_the_frame_being_received() {
            let (ini, cca, _, _) = first_attempt();
            let (mut net, _) = timed_probe("", &[&ini, "mac.cca_mode3=false"], NodeId(0), 1, 0);
            net.run_until(Instant(cca - 1));
            net.radios[1].locked = Some(0);
            net.run_until(Instant(cca));
            assert_eq!(net.nodes[1].mac.phase, Phase::Turnaround);
            assert!(net.radios[1].transmitting);
            assert_eq!(net.radios[1].locked, None, "still locked on the frame it was receiving");
        }

        /// "The oldest waiting beacon goes first" [docs/simulator.md, MAC (§5)].
        #[test]
        fn the_oldest_waiting_beacon_goes_first() {
            let mut net = clean_chain(2, 1.0, "", &[]);
            net.nodes[1].mac.beacons = vec![(1, vec![1; 4]), (0, vec![2; 4])];
            assert!(net.bind_frame(1));
            let cur = net.nodes[1].mac.cur.as_ref().unwrap();
            assert_eq!((cur.kind, &cur.payload[..]), (FrameKind::Beacon, &[1u8; 4][..]));
            assert_eq!(net.nodes[1].mac.beacons, vec![(0, vec![2; 4])]);
        }

        /// `sink_tx_bins` counts the agent frames a sink puts on the air (as `data_tx` does) and
        /// not its routing beacons [its doc comment]. (On this clean link every frame goes out
        /// once; that retransmissions count too is not exercised here.)
        #[test]
        fn sink_tx_bins_count_agent_frames_not_beacons() {
            let mut net = clean_chain(2, 5.0, "", &[]);
            let (probe, done) = Probe::to(NodeId(1), 3);
            net.nodes[0].agent = probe;
            net.after_agent(0);
            net.run_until(Instant::from_millis(5_000));
            assert_eq!(sent(&done).len(), 3);
            let s = net.node_stats(0);
            assert!(s.beacon_tx > 0, "{s:?}");
            assert_eq!(net.sink_tx_bins(0).iter().sum::<u32>(), s.data_tx as u32);
            assert_eq!(s.data_tx, 3);
        }
    }

    proptest! {
        /// However frames start and end at a radio, its summed power returns to exactly 0 once
        /// the air is empty (no drift over a long run), and the count follows the frames. The
        /// powers span −20 to −120 dBm, so a strong frame ending leaves weak ones behind: the sum
        /// stays within a thousandth of the weakest frame still on the air (no cancellation
        /// error that could mask it).
        #[test]
        fn summed_power_returns_to_zero(ops in proptest::collection::vec((any::<bool>(), 0usize..16), 0..200)) {
            let mut rd = radio();
            let mut on_air: Vec<f64> = Vec::new();
            for (start, pick) in ops {
                if start || on_air.is_empty() {
                    let p_mw = 10f64.powf((-20.0 - pick as f64 * 100.0 / 15.0) / 10.0);
                    rd.add(p_mw);
                    on_air.push(p_mw);
                } else {
                    rd.subtract(on_air.swap_remove(pick % on_air.len()));
                }
                prop_assert_eq!(rd.n_active as usize, on_air.len());
                if on_air.is_empty() {
                    prop_assert_eq!(rd.active_mw, 0.0);
                } else {
                    let sum: f64 = on_air.iter().sum();
                    let weakest = on_air.iter().copied().fold(f64::INFINITY, f64::min);
                    prop_assert!((rd.active_mw - sum).abs() <= 1e-3 * weakest, "{} vs {}", rd.active_mw, sum);
                }
            }
        }
    }

    // ------------------------------------------------------------ radio audit (net37)

    mod audit37_radio {
        use super::*;

        /// The channel and MAC options of a `clean_chain` network, to call the reception
        /// formulas on.
        fn options() -> (ChannelOptions, MacConfig) {
            let net = clean_chain(2, 1.0, "", &[]);
            (net.chan.clone(), net.mac.clone())
        }

        /// With `prr_length_scaling` the CC2420 curve's exponent is 2 × the bytes on the air
        /// after the 5-byte SHR (payload plus overhead) instead of TOSSIM's fixed 46 [spec
        /// radio-mac-routing §4.1, AMBIG-3; `frame_prr`'s doc comment].
        #[test]
        fn length_scaling_counts_two_decisions_per_byte_after_the_shr() {
            let (mut chan, _) = options();
            chan.curve = crate::scenario::PrrCurve::Cc2420;
            chan.prr_length_scaling = false;
            assert_eq!(frame_prr(&chan, 17, 5.0, 60), prr::prr(5.0), "fixed exponent without scaling");
            chan.prr_length_scaling = true;
            for (overhead, len) in [(17u32, 60usize), (11, 0), (17, 100)] {
                let bytes = len + overhead as usize - 5;
                let want = prr::prr_with_exponent(5.0, 2.0 * bytes as f64);
                assert_eq!(frame_prr(&chan, overhead, 5.0, len), want, "{overhead} + {len} bytes");
            }
            // A longer frame is less likely to survive the same SINR.
            assert!(frame_prr(&chan, 17, 5.0, 100) < frame_prr(&chan, 17, 5.0, 20));
        }

        /// The O-QPSK curve charges every byte after the PHY header (5-byte SHR and 1-byte
        /// length): a 57-byte PPDU is charged as 51 bytes (calibration test
        /// `reception_models_charge_noise_as_documented`; `prr_oqpsk`'s doc comment).
        #[test]
        fn the_oqpsk_curve_charges_the_bytes_after_the_phy_header() {
            let (mut chan, _) = options();
            chan.curve = crate::scenario::PrrCurve::Ieee802154;
            for x in [-1.0, 0.0, 1.0] {
                assert_eq!(frame_prr(&chan, 17, x, 40), prr::prr_oqpsk(x, 51), "{x} dB");
                assert!(frame_prr(&chan, 17, x, 40) > prr::prr_oqpsk(x, 52), "{x} dB: one byte too many");
            }
        }

        /// The ACK coin is drawn for an 11-byte ACK when the preset folds the ACK into the
        /// frame (`ack_bytes` 0), for `ack_bytes` otherwise; under `ns3` over the whole ACK PPDU,
        /// PHY header included [`ack_success`'s doc comment; spec §5.2].
        #[test]
        fn the_ack_coin_is_drawn_for_the_acks_length() {
            let (mut chan, mut mac) = options();
            chan.curve = crate::scenario::PrrCurve::Cc2420;
            chan.prr_length_scaling = true;
            chan.reception = crate::scenario::Reception::Tossim;
            let x = 5.0;
            mac.ack_bytes = 0;
            assert_eq!(ack_success(&chan, &mac, x), prr::prr_with_exponent(x, 2.0 * (11 - 5) as f64));
            mac.ack_bytes = 20;
            assert_eq!(ack_success(&chan, &mac, x), prr::prr_with_exponent(x, 2.0 * (20 - 5) as f64));
            chan.curve = crate::scenario::PrrCurve::Ieee802154;
            chan.reception = crate::scenario::Reception::Ns3;
            mac.ack_bytes = 11;
            let x = 0.5;
            assert_eq!(ack_success(&chan, &mac, x), prr::oqpsk_chunk_success_db(x, 8 * 11));
            assert!(ack_success(&chan, &mac, x) < prr::oqpsk_chunk_success_db(x, 8 * 5), "PHY header left out");
        }

        /// Under `ns3` a frame whose SINR at the first bit is at or below ns-3's −5 dB lock
        /// threshold (or NaN) is never locked on, so its quiet-channel success is exactly 0,
        /// even where the chunk chance is not [`quiet_data_success`'s doc comment;
        /// `NS3_LOCK_SINR_LINEAR`].
        #[test]
        fn ns3_quiet_success_is_zero_below_the_lock_threshold() {
            let (mut chan, mac) = options();
            chan.curve = crate::scenario::PrrCurve::Ieee802154;
            chan.reception = crate::scenario::Reception::Ns3;
            let bits = 8 * mac.overhead_bytes;
            assert!(prr::oqpsk_chunk_success_db(-5.2, bits) > 0.0);
            assert_eq!(quiet_data_success(&chan, &mac, -5.2, 0), 0.0);
            assert!(prr::oqpsk_chunk_success_db(-5.0, bits) > 0.0);
            assert_eq!(quiet_data_success(&chan, &mac, -5.0, 0), 0.0, "at the threshold");
            assert_eq!(quiet_data_success(&chan, &mac, f64::NAN, 0), 0.0);
            // Above the threshold: one chunk over the whole frame, overhead included.
            let got = quiet_data_success(&chan, &mac, -4.0, 20);
            assert_eq!(got, prr::oqpsk_chunk_success_db(-4.0, 8 * (20 + mac.overhead_bytes)));
        }

        /// Records the RSSI of every frame handed to it.
        struct RssiLog(std::sync::Arc<std::sync::Mutex<Vec<i16>>>);

        impl NodeAgent for RssiLog {
            fn handle_frame(&mut self, _: Instant, _: &mut dyn LinkCtx, rx: &RxInfo, _: &[u8]) {
                self.0.lock().unwrap().push(rx.rssi_dbm);
            }
            never_sends!();
            fn poll_event(&mut self) -> Option<AgentEvent> {
                None
            }
            fn queue_len(&self) -> usize {
                0
            }
            fn queue_capacity(&self) -> usize {
                1
            }
            no_application!();
        }

        /// A delivered frame's RSSI is ⌊P ⊕ N0⌋: its power plus the noise (and interference)
        /// at its start, rounded down [spec radio-mac-routing §4.4, §4.2 R2]. The power is set
        /// 7.9 dB above the −98 dBm floor, where P ⊕ N0 ≈ −89.45 dBm: ⌊P⌋, ⌊P ⊕ N0⌋ and the
        /// rounded value all differ.
        #[test]
        fn rssi_is_the_floor_of_signal_plus_noise_at_the_start() {
            let gain = f64::from(clean_chain(2, 1.0, "", &[]).links.gain(1, 0).unwrap());
            let tx = -90.1 - gain;
            let mut net = clean_chain(2, 2.0, "", &[format!("radio.link.tx_power_dbm={tx}")]);
            let p_dbm = net.links.tx_power_dbm[1] + f64::from(net.links.gain(1, 0).unwrap());
            let want = mw_to_dbm(dbm_to_mw(p_dbm) + dbm_to_mw(-98.0));
            assert!(want.floor() != p_dbm.floor() && want.floor() != want.round(), "{p_dbm} / {want}");
            let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            net.nodes[0].agent = Box::new(RssiLog(log.clone()));
            let (probe, _) = Probe::to(NodeId(0), 50);
            net.nodes[1].agent = probe;
            net.after_agent(1);
            net.run_until(Instant::from_millis(2_000));
            let got = log.lock().unwrap().clone();
            assert!(got.len() >= 40, "{} frames delivered", got.len());
            assert!(got.iter().all(|&r| r == want.floor() as i16), "{got:?}, want {}", want.floor());
        }
    }

    /// Audit of the node, flow and routing glue (mutation-checked).
    mod audit37_node {
        use super::*;

        /// `sample_queue`'s doc: the length a node held since its last sample counts in every bin
        /// up to the next one, a length of one packet included.
        #[test]
        fn a_queue_of_one_packet_counts_in_the_quiet_bins() {
            let mut net = clean_chain(2, 100.0, "", &[]);
            net.sample_queue(1, 2, 1);
            net.sample_queue(1, 5, 0);
            net.close_queue_bins();
            assert_eq!(net.queue_bins(1), &[0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0][..]);
        }

        /// `Network::outages`' doc: an outage that starts at or after the end of the run is left
        /// out (its window, cut at the end, is empty).
        #[test]
        fn an_outage_starting_at_the_end_is_not_listed() {
            let net = clean_chain(
                3,
                10.0,
                "[[outages]]\nnodes = 1\nfrom_s = 10.0\n[[outages]]\nnodes = 2\nfrom_s = 4.0\n",
                &[],
            );
            assert_eq!(net.outages(), vec![(2, 4.0, 10.0)]);
        }

        /// `run_until`'s doc: it returns false once the run is over, also when `until` is exactly
        /// the end; before the end (events pending) it returns true.
        #[test]
        fn run_until_the_end_reports_the_run_over() {
            let mut net = clean_chain(2, 10.0, "", &[]);
            assert!(net.run_until(Instant::from_millis(5_000)));
            assert!(!net.run_until(Instant::from_millis(10_000)));
            assert_eq!(net.now(), Instant::from_millis(10_000));
        }

        /// docs/simulator.md, reverse path: every `aging_period_s` (60 s) entries age by one and
        /// those older than `max_age` (10) are removed, so the aging tick repeats for the whole run.
        #[test]
        fn reverse_entries_age_out_after_eleven_aging_periods() {
            let mut net = clean_chain(3, 700.0, "", &[]);
            let parent = net.parent(1, 0);
            net.nodes[1].trees[0].reverse.learn(NodeId(2), NodeId(2), parent);
            assert_eq!(net.nodes[1].trees[0].reverse.next_hop(NodeId(2)), Some(NodeId(2)));
            net.run_until(Instant::from_millis(650_000));
            assert_eq!(net.nodes[1].trees[0].reverse.next_hop(NodeId(2)), Some(NodeId(2)), "ten ticks: age 10");
            net.run_until(Instant::from_millis(700_000));
            assert_eq!(net.nodes[1].trees[0].reverse.next_hop(NodeId(2)), None, "the eleventh tick removes it");
        }

        /// docs/simulator.md `[[flows]]`: the application generates packets at `rate_pps` from
        /// `start_s` until `stop_s`; a tick at exactly `stop_s` generates none.
        #[test]
        fn a_flow_generates_nothing_at_its_stop_instant() {
            let flow = "[[flows]]\nsources = 1\nrate_pps = 1.0\nstop_s = 5.0\nrandom_phase = false\n";
            let mut net = clean_chain(2, 10.0, flow, &[]);
            net.run_until(Instant::from_millis(10_000));
            assert_eq!(net.flows()[0].originated, 5, "packets at 0, 1, 2, 3 and 4 s");
        }

        /// `app_slot`'s doc and docs/simulator.md (IFRC): a rate controller's slot toward `sink`
        /// makes the node's flow to that sink generate one packet while the flow is active, from
        /// `start_s` (included) to `stop_s` (excluded); a slot toward another sink generates none.
        #[test]
        fn an_app_slot_generates_only_for_an_active_flow_to_its_sink() {
            let flow = "[protocol]\nkind = \"ifrc\"\n[[flows]]\nsources = 1\nrate_pps = 1.0\nstart_s = 5.0\nstop_s = 8.0\npayload_bytes = 20\n";
            let mut net = clean_chain(2, 10.0, flow, &[]);
            assert!(net.rate_controlled());
            let slot = |net: &mut Network, ms: u64, sink: u16| {
                net.now = Instant::from_millis(ms);
                net.app_slot(1, NodeId(sink));
                net.flows()[0].originated
            };
            assert_eq!(slot(&mut net, 4_999, 0), 0, "before the start");
            assert_eq!(slot(&mut net, 5_000, 0), 1, "at the start");
            assert_eq!(slot(&mut net, 6_000, 7), 1, "a slot toward another sink");
            assert_eq!(slot(&mut net, 7_999, 0), 2);
            assert_eq!(slot(&mut net, 8_000, 0), 2, "at the stop");
        }

        /// `sink_receive`'s doc: a delivery counts only if the packet belongs to a flow from
        /// `origin` to this node and was originated; anything else is a phantom.
        #[test]
        fn a_delivery_from_elsewhere_or_never_sent_is_a_phantom() {
            let mut net = flow_with_originated(3);
            assert!(net.sink_receive(1, NodeId(1), 1, &app_packet(0), false).is_none(), "not the flow's sink");
            assert!(net.sink_receive(0, NodeId(2), 1, &app_packet(0), false).is_none(), "not the flow's source");
            assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(3), false).is_none(), "not originated yet");
            assert_eq!(net.flows[0].phantom_deliveries, 3);
            assert_eq!(net.sink_receive(0, NodeId(1), 1, &app_packet(2), false), Some((0, 2)));
        }

        /// Flow bookkeeping (`parent_at`, `parent_changes_seen`): each packet is stamped with its
        /// source's parent when originated, and a delivery whose stamp differs from the previous
        /// delivery's counts one parent change seen.
        #[test]
        fn deliveries_count_the_parent_changes_their_source_made() {
            let flow = "[[flows]]\nsources = 2\nrate_pps = 1.0\n";
            let mut net = clean_chain(3, 10.0, flow, &[]);
            let old = net.parent(2, 0).expect("a route");
            let new = if old == NodeId(0) { NodeId(1) } else { NodeId(0) };
            net.originate(0);
            net.originate(0);
            assert_ne!(net.nodes[2].trees[0].mhlqi.move_frozen(new, 0, 0), RouteChange::None);
            net.originate(0);
            assert_eq!(net.flows[0].parent_at, vec![old.0, old.0, new.0]);
            net.sink_receive(0, NodeId(2), 2, &app_packet(1), false).unwrap();
            assert_eq!(net.flows[0].parent_changes_seen, 0, "same parent as the first delivery");
            net.sink_receive(0, NodeId(2), 2, &app_packet(0), false).unwrap();
            assert_eq!(net.flows[0].parent_changes_seen, 0, "same parent again");
            net.sink_receive(0, NodeId(2), 1, &app_packet(2), false).unwrap();
            assert_eq!(net.flows[0].parent_changes_seen, 1);
        }
    }

    /// Mutation audit, part two (session 37): the rest of `sink_receive`, `originate`,
    /// `after_agent` and the routing glue, against the rules of their doc comments,
    /// docs/simulator.md and spec radio-mac-routing §6-7.
    mod audit37_node2 {
        use super::*;

        /// `Flow::refused_seq`'s doc and `originate`: a best-effort packet its source's full
        /// queue refuses is counted as refused (a queue drop of the source, traced as a drop) and
        /// its number recorded as refused, so that a delivery of it is a phantom.
        #[test]
        fn a_packet_the_full_queue_refuses_is_recorded_as_refused() {
            let flow = "[[flows]]\nsources = 1\nrate_pps = 1.0\n";
            let mut net = clean_chain(2, 10.0, flow, &["mac.queue_capacity=2".to_string()]);
            let traced = net.tracer.events();
            let mut refused = Vec::new();
            for _ in 0..5 {
                let before = net.queue_len(1);
                net.originate(0);
                refused.push(net.queue_len(1) == before);
            }
            assert_eq!(refused, [false, false, true, true, true], "a queue of two");
            assert_eq!(net.flows[0].refused_seq, refused);
            assert_eq!((net.flows[0].refused, net.node_stats(1).queue_drops), (3, 3));
            assert_eq!(net.tracer.events() - traced, 5 + 3, "an originate each, a drop each refused");
            assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(3), false).is_none());
            assert_eq!(net.flows[0].phantom_deliveries, 1);
            assert_eq!(net.sink_receive(0, NodeId(1), 1, &app_packet(1), false), Some((0, 1)));
        }

        /// `sink_receive`'s doc: a packet must not have been delivered before; a second delivery
        /// of a number is a duplicate (`Flow::duplicate_deliveries`), not a delivery.
        #[test]
        fn a_second_delivery_is_a_duplicate_not_a_delivery() {
            let mut net = flow_with_originated(2);
            for in_order in [false, true] {
                let seq = u32::from(in_order);
                assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(seq), in_order).is_some());
                assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(seq), in_order).is_none(), "{in_order}");
            }
            let f = &net.flows[0];
            assert_eq!((f.delivered, f.duplicate_deliveries, f.phantom_deliveries), (2, 2, 0));
        }

        /// `sink_receive`'s comment: a packet behind one already handed up is out of order, so the
        /// mark is the highest number handed up, not the latest: after 5, both 2 and 4 are late.
        #[test]
        fn out_of_order_is_judged_against_the_highest_number_handed_up() {
            let mut net = flow_with_originated(6);
            for seq in [5, 2, 4] {
                assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(seq), true).is_some());
            }
            assert_eq!(net.flows[0].rcrt.out_of_order, 2);
        }

        /// `sink_receive`'s doc: only `in_order` deliveries (the reliable transports) count out
        /// of order; best effort hands packets up as they come.
        #[test]
        fn best_effort_deliveries_are_not_counted_out_of_order() {
            let mut net = flow_with_originated(3);
            for seq in [2, 0, 1] {
                assert!(net.sink_receive(0, NodeId(1), 1, &app_packet(seq), false).is_some());
            }
            assert_eq!(net.flows[0].rcrt.out_of_order, 0);
        }

        /// `Flow`'s fields: a delivery adds its hops to `hops_sum`, its end-to-end delay (from
        /// origination) to `delay_sum_ns`, one to its time-series bin (bin k covers
        /// (k·bin, (k+1)·bin], docs/simulator.md) and sets `last_delivery`.
        #[test]
        fn a_delivery_adds_its_hops_delay_and_bin() {
            let mut net = flow_with_originated(2);
            net.flows[0].sent_at[1] = Instant::from_millis(1_000);
            net.now = Instant::from_millis(3_500);
            let bin = bin_index(net.now, net.bin);
            assert!(net.sink_receive(0, NodeId(1), 3, &app_packet(1), false).is_some());
            let f = &net.flows[0];
            assert_eq!((f.hops_sum, f.delay_sum_ns, f.last_delivery), (3, 2_500_000_000, net.now));
            assert_eq!(f.bins.iter().sum::<u32>(), 1);
            assert_eq!(f.bins[bin], 1);
        }

        /// The `LinkCtx` rules (wsn-proto `agent::LinkCtx`) as the network answers them from the
        /// node's own tree of the sink asked about: parent and hop count (none for a sink without
        /// a tree), reverse learning that refuses a packet from the node's parent (it came back
        /// through a loop) and otherwise learns its next hop down, and random numbers that vary.
        #[test]
        fn the_link_context_answers_from_the_nodes_tree() {
            let mut net = clean_chain(3, 10.0, "", &[]);
            let (parent, hops) = (net.parent(1, 0), net.hop_count(1, 0));
            assert_eq!((parent, hops), (Some(NodeId(0)), Some(1)));
            let n = &mut net.nodes[1];
            let mut ctx = Ctx { me: n.id, sinks: &net.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
            assert_eq!((ctx.parent(NodeId(0)), ctx.hop_count(NodeId(0))), (parent, hops));
            assert_eq!((ctx.parent(NodeId(9)), ctx.hop_count(NodeId(9))), (None, None), "no tree for that sink");
            assert!(!ctx.learn_reverse(NodeId(0), NodeId(0), NodeId(2)), "its origin is the parent: a loop");
            assert!(ctx.learn_reverse(NodeId(0), NodeId(2), NodeId(2)));
            assert_eq!(ctx.down_next_hop(NodeId(0), NodeId(2)), Some(NodeId(2)));
            assert!(ctx.learn_reverse(NodeId(9), NodeId(0), NodeId(2)), "no tree: no parent, no loop");
            let draws: std::collections::HashSet<u32> = (0..8).map(|_| ctx.random_u32()).collect();
            assert!(draws.len() > 1, "{draws:?}");
        }

        /// `LinkCtx::own_packet_returned` and spec radio-mac-routing §6.3: a node that receives
        /// its own upward packet back deletes the reverse entry for destination parent; the other
        /// entries stay.
        #[test]
        fn an_own_packet_returned_removes_the_parents_reverse_entry() {
            let mut net = clean_chain(4, 10.0, "", &[]);
            let t = &mut net.nodes[1].trees[0];
            assert_eq!(t.reverse.learn(NodeId(0), NodeId(2), None), LearnOutcome::Learned);
            assert_eq!(t.reverse.learn(NodeId(3), NodeId(2), None), LearnOutcome::Learned);
            let n = &mut net.nodes[1];
            let mut ctx = Ctx { me: n.id, sinks: &net.sinks, trees: &mut n.trees, rng: &mut n.rng_agent };
            ctx.own_packet_returned(NodeId(0));
            assert_eq!(ctx.down_next_hop(NodeId(0), NodeId(0)), None, "the parent's entry");
            assert_eq!(ctx.down_next_hop(NodeId(0), NodeId(3)), Some(NodeId(2)));
        }

        /// `parent_stamp`'s doc: the node's parent on the sink's tree, `u16::MAX` for none or for
        /// a sink without a tree.
        #[test]
        fn the_parent_stamp_of_no_route_is_the_maximum() {
            let net = clean_chain(3, 10.0, "", &[]);
            assert_eq!(parent_stamp(&net.nodes, &net.sinks, 2, NodeId(0)), net.parent(2, 0).unwrap().0);
            assert_eq!(parent_stamp(&net.nodes, &net.sinks, 2, NodeId(9)), u16::MAX, "no such tree");
            let net = clean_chain(3, 10.0, "", &["routing.kind=\"mhlqi\"".to_string()]);
            assert_eq!(net.parent(2, 0), None);
            assert_eq!(parent_stamp(&net.nodes, &net.sinks, 2, NodeId(0)), u16::MAX, "no route yet");
        }

        /// Spec radio-mac-routing §6 (one MultiHopLQI tree per sink): a beacon updates the tree
        /// of the sink it advertises and no other; a beacon that does not parse counts as
        /// malformed.
        #[test]
        fn a_beacon_updates_the_tree_of_its_sink() {
            let set = ["routing.kind=\"mhlqi\"".to_string(), "topology.sinks=[0,3]".to_string()];
            let mut net = clean_chain(4, 10.0, "", &set);
            assert_eq!((net.parent(1, 0), net.parent(1, 1)), (None, None));
            let repr =
                BeaconRepr { sink: NodeId(3), source: NodeId(2), seqno: 1, parent: NodeId(3), cost: 0, hop_count: 1 };
            let mut bytes = vec![0u8; wsn_wire::mhlqi::BEACON_LEN];
            repr.emit(&mut bytes).unwrap();
            net.handle_beacon(1, 110, &bytes);
            assert_eq!((net.parent(1, 0), net.parent(1, 1)), (None, Some(NodeId(2))));
            net.handle_beacon(1, 110, &bytes[..3]);
            assert_eq!(net.node_stats(1).malformed, 1);
        }

        /// An agent with a queue of the length a test sets; it never sends.
        struct Holding(std::sync::Arc<std::sync::Mutex<usize>>);

        impl NodeAgent for Holding {
            fn handle_frame(&mut self, _: Instant, _: &mut dyn LinkCtx, _: &RxInfo, _: &[u8]) {}
            never_sends!();
            fn poll_event(&mut self) -> Option<AgentEvent> {
                None
            }
            fn queue_len(&self) -> usize {
                *self.0.lock().unwrap()
            }
            fn queue_capacity(&self) -> usize {
                usize::MAX
            }
            no_application!();
        }

        /// `NodeStats::max_queue` (the largest transmit-queue length seen) and the queue bins
        /// (`sample_queue`, `queue_bins`: the largest length of each bin): every pass of
        /// `after_agent` samples the agent's queue length.
        #[test]
        fn after_agent_samples_the_queue_length() {
            let mut net = clean_chain(2, 100.0, "", &[]);
            let len = std::sync::Arc::new(std::sync::Mutex::new(5));
            net.nodes[1].agent = Box::new(Holding(len.clone()));
            net.now = Instant::from_millis(25_000);
            let first = bin_index(net.now, net.bin);
            net.after_agent(1);
            *len.lock().unwrap() = 2;
            net.now = Instant::from_millis(75_000);
            let second = bin_index(net.now, net.bin);
            assert!(second > first);
            net.after_agent(1);
            assert_eq!(net.node_stats(1).max_queue, 5, "the largest, not the latest");
            net.close_queue_bins();
            // Each bin holds the largest length of its time: 5 up to the second sample's bin, 2 after, to the
            // run's end.
            let bins = net.queue_bins(1);
            assert!(bins[first..=second].iter().all(|&q| q == 5), "{bins:?}");
            let last = bin_index(net.end(), net.bin);
            assert!(second < last && bins[second + 1..=last].iter().all(|&q| q == 2), "{bins:?}");
        }

        /// `run_until` never moves the clock backwards, and an agent deadline already past when
        /// `after_agent` arms it runs at once: from 5 s, a 100-ms ticker whose deadline was 1 s
        /// fires at 5.0, 5.1, …, 6.0 s (11 times), not from 1 s on.
        #[test]
        fn an_agent_deadline_already_past_runs_now() {
            let mut net = clean_chain(2, 30.0, "[routing.mhlqi]\nbeacon_period_binary_ms = 100000000\n", &[]);
            net.run_until(Instant::from_secs(5));
            let next = std::sync::Arc::new(std::sync::Mutex::new(Instant::from_secs(1)));
            let fired = std::sync::Arc::new(std::sync::Mutex::new(0u32));
            net.nodes[1].agent =
                Box::new(Ticker { next: next.clone(), period: Duration::from_millis(100), fired: fired.clone() });
            net.after_agent(1);
            net.run_until(Instant::from_secs(6));
            assert_eq!(*fired.lock().unwrap(), 11);
        }

        /// `beacon_tick`: one waiting beacon per tree; a newer beacon replaces the same tree's
        /// beacon still waiting. (One tree here: that another tree's beacon is kept beside it,
        /// and the replacement's place in the list, are not checked.)
        #[test]
        fn a_newer_beacon_replaces_the_waiting_one_of_its_tree() {
            let mut net = clean_chain(2, 10.0, "", &["routing.kind=\"mhlqi\"".to_string()]);
            net.nodes[1].mac.beacons.clear();
            net.beacon_tick(1, 0);
            net.beacon_tick(1, 0);
            let waiting = &net.nodes[1].mac.beacons;
            assert_eq!(waiting.len(), 1, "{waiting:?}");
            let first = BeaconRepr::parse(&waiting[0].1).unwrap().seqno;
            net.beacon_tick(1, 0);
            let waiting = &net.nodes[1].mac.beacons;
            assert_eq!(waiting.len(), 1);
            assert_ne!(BeaconRepr::parse(&waiting[0].1).unwrap().seqno, first, "the newer beacon");
        }

        /// `freeze_rooted`'s doc (spec §6.4, `routing.freeze_after_s`): each tree is judged on
        /// its own; a node whose parents lead to the sink of one tree is frozen on that tree
        /// only, and keeps waiting on a tree where it has no route.
        #[test]
        fn the_freeze_judges_each_tree_on_its_own() {
            let set = ["routing.kind=\"mhlqi\"".to_string(), "topology.sinks=[0,3]".to_string()];
            let mut net = clean_chain(4, 10.0, "", &set);
            let repr =
                BeaconRepr { sink: NodeId(0), source: NodeId(0), seqno: 1, parent: NodeId(0), cost: 0, hop_count: 0 };
            let mut bytes = vec![0u8; wsn_wire::mhlqi::BEACON_LEN];
            repr.emit(&mut bytes).unwrap();
            net.handle_beacon(1, 110, &bytes);
            assert_eq!((net.parent(1, 0), net.parent(1, 1)), (Some(NodeId(0)), None));
            net.freeze_rooted();
            let frozen = |net: &Network, ti: usize| net.nodes[1].trees[ti].mhlqi.is_frozen();
            assert!(frozen(&net, 0), "a whole path to sink 0");
            assert!(!frozen(&net, 1), "no route to sink 3");
            assert!(net.freeze_waiting);
        }

        /// `replace_weak_links`' doc: over the nodes about to be frozen (whole path, not yet
        /// frozen), a link to the parent below `routing.freeze_min_prr` with no qualifying
        /// neighbour to move to is kept and recorded, once: a later pass leaves frozen nodes alone.
        #[test]
        fn a_weak_link_without_a_better_neighbour_is_recorded_once() {
            let set = ["radio.link.tx_power_dbm=-27.2", "routing.kind=\"mhlqi\"", "routing.freeze_min_prr=0.99"];
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let mut net = clean_chain(3, 10.0, "", &set);
            for (node, from, hops) in [(1, 0, 0), (2, 1, 1)] {
                let repr = BeaconRepr {
                    sink: NodeId(0),
                    source: NodeId(from),
                    seqno: 1,
                    parent: NodeId(0),
                    cost: 0,
                    hop_count: hops,
                };
                let mut bytes = vec![0u8; wsn_wire::mhlqi::BEACON_LEN];
                repr.emit(&mut bytes).unwrap();
                net.handle_beacon(node, 110, &bytes);
            }
            assert_eq!((net.parent(1, 0), net.parent(2, 0)), (Some(NodeId(0)), Some(NodeId(1))));
            assert!(net.link_quality(1, 0) < 0.99 && net.link_quality(2, 0) < 1e-9);
            net.freeze_rooted();
            net.freeze_rooted();
            let kept: Vec<(usize, usize)> = net.freeze_kept.iter().map(|(_, _, k)| (k.node, k.parent)).collect();
            assert_eq!(kept, [(1, 0), (2, 1)]);
            assert!(net.freeze_moves.is_empty());
        }
    }

    mod audit37_gaps {
        use super::audit37_mac::{first_attempt, outage};
        use super::*;

        /// docs/rcrt.md "The simulator driver": "All sources of one node share one datagram in
        /// flight", and sink datagrams "are not limited this way"; `after_agent` hands only an
        /// *upward* own send to `source_send_done`. Node 1 of a three-node chain is a sink (of
        /// node 0's flow) and sources one flow to each other sink: the end of its sink's
        /// datagrams (downward) must not release its sources while one of them has a datagram in
        /// flight. Checked every millisecond: at most one of node 1's sources is in flight. (A
        /// pin of the rule, not a mutant killer: were the `upward` check dropped, the in-flight
        /// source's own `after_endpoint`, which `source_send_done` runs in the same call, would
        /// hold its siblings back again at once.)
        #[test]
        fn a_sink_datagram_does_not_release_the_sources_of_its_node() {
            let flows = "[protocol]\nkind = \"rcrt\"\n\
                 [[flows]]\nsources = [0]\nsink = 1\nrate_pps = 20.0\nstart_s = 1.0\n\
                 [[flows]]\nsources = [1]\nsink = 0\nrate_pps = 20.0\nstart_s = 1.0\n\
                 [[flows]]\nsources = [1]\nsink = 2\nrate_pps = 20.0\nstart_s = 1.0\n";
            let mut net = clean_chain(3, 30.0, flows, &["topology.sinks=[0,1,2]".to_string()]);
            assert_eq!(net.node_eps[1].len(), 3, "a sink and two sources at node 1");
            let mut both = 0;
            for ms in 1..=30_000 {
                net.run_until(Instant::from_millis(ms));
                let in_flight = |e: &u32| match &net.eps[*e as usize].kind {
                    crate::endpoints::EpKind::Source { src, .. } => src.is_in_flight(),
                    crate::endpoints::EpKind::Sink { .. } => false,
                };
                let in_flight = net.node_eps[1].iter().filter(|e| in_flight(e)).count();
                if in_flight > 1 {
                    both += 1;
                }
            }
            assert_eq!(both, 0, "milliseconds with both of node 1's sources in flight");
            // The flows ran: node 1's sink sent its datagrams down while its sources sent up.
            assert!(
                net.flows.iter().all(|f| f.delivered > 100),
                "{:?}",
                net.flows.iter().map(|f| f.delivered).collect::<Vec<_>>()
            );
        }

        /// One beacon from `from` (advertising `hop` hops and cost 0 on sink 0's tree) received
        /// by `node`.
        fn beacon_from(net: &mut Network, node: usize, from: u16, hop: u16) {
            let repr = BeaconRepr {
                sink: NodeId(0),
                source: NodeId(from),
                seqno: 1,
                parent: NodeId(0),
                cost: 0,
                hop_count: hop,
            };
            let mut bytes = vec![0u8; wsn_wire::mhlqi::BEACON_LEN];
            repr.emit(&mut bytes).unwrap();
            net.handle_beacon(node, 110, &bytes);
        }

        /// The good-tree freeze: "the moved node's hop count is its new parent's depth plus one at
        /// once" [docs/simulator.md "The good-tree freeze"; `replace_weak_links`: the new parent's
        /// hop count "as the tree now stands"]. Chain 0–1–2–3, 2 m apart: node 2 sits on the weak
        /// 4-m link to the sink, node 3 under it; node 2 moves to node 1 (depth 1) and has 2 hops.
        #[test]
        fn a_moved_node_counts_its_new_parents_depth_plus_one() {
            // The threshold is set between the weak and the good links below (the key makes the
            // network keep the noise levels that the link quality needs).
            let set = ["radio.link.tx_power_dbm=-20.0", "routing.kind=\"mhlqi\"", "routing.freeze_min_prr=0.5"];
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let mut net = clean_chain(4, 10.0, "", &set);
            for (node, from, hop) in [(1, 0, 0), (2, 0, 0), (3, 2, 1)] {
                beacon_from(&mut net, node, from, hop);
            }
            let parents: Vec<_> = (1..4).map(|i| net.parent(i, 0)).collect();
            assert_eq!(parents, [Some(NodeId(0)), Some(NodeId(0)), Some(NodeId(2))]);
            let (weak, good) = (net.link_quality(2, 0), net.link_quality(2, 1).min(net.link_quality(1, 0)));
            assert!(weak < good, "{weak} {good}");
            net.freeze_min_prr = Some((weak + good) / 2.0);
            net.freeze_rooted();
            let moves: Vec<(usize, usize, usize)> =
                net.freeze_moves.iter().map(|(_, _, m)| (m.node, m.from, m.to)).collect();
            assert_eq!(moves, [(2, 0, 1)]);
            let hops = |net: &Network, i: usize| net.nodes[i].trees[0].mhlqi.hop_count();
            assert_eq!((hops(&net, 1), hops(&net, 2)), (Some(1), Some(2)));
        }

        /// docs/simulator.md `[[outages]]`: a frame whose destination was off when it started
        /// "draws no false ACK"; the flag is the attempt's own (`tx_start` clears it). Node 0 is
        /// off when node 1's first attempt starts and back during it; a gain file makes the link
        /// one-sided: node 0 hears node 1 far below the noise (no frame decoded, the link kept),
        /// node 1 hears node 0 well (its ACKs). With `radio.false_ack_prob = 1` the second
        /// attempt, heard and lost, draws its false ACK [spec radio-mac-routing §4.2 R3].
        #[test]
        fn a_later_attempt_heard_and_lost_draws_its_false_ack() {
            let (ini, _, start, end) = first_attempt();
            let mid = (start + end) / 2;
            let file = format!("wsn-gaps37-one-sided-{}.txt", std::process::id());
            std::fs::write(std::env::temp_dir().join(&file), "gain 1 0 -125.0\ngain 0 1 -50.0\n").unwrap();
            let gains = format!("topology.gains_file=\"{file}\"");
            let set = [&ini[..], "radio.false_ack_prob=1.0", &gains];
            let (mut net, done) = timed_probe(&outage(0, 0, mid), &set, NodeId(0), 1, 0);
            std::fs::remove_file(std::env::temp_dir().join(&file)).unwrap();
            assert!(net.rx_links[1].iter().any(|l| l.to == 0), "node 0 hears node 1's frames");
            net.run_until(Instant::from_millis(2_000));
            let done = sent(&done);
            assert_eq!(done.len(), 1);
            assert_eq!((done[0].acked, done[0].transmissions), (true, 2), "{:?}", done[0]);
            assert_eq!(net.node_stats(0).data_rx, 0, "node 0 decoded a frame");
        }
    }
}
