//! The IFRC node agent: rate controller, queue monitor, neighbour table and base-station logic
//! around a [`CollectionForwarder`].

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec;

use wsn_wire::collection::{self, Direction};
use wsn_wire::ifrc as wire;

use super::config::{
    BsTrigger, Generation, IfrcConfig, QueueAverage, Sharing, SlowStartExit, SlowStartRule, ThresholdTest,
    TopThreshold, CODE_CHILD_SHARE_STEP_PPS, CODE_HALF_STEP_PPS, CODE_MIN_AI_STEP_PPS, CODE_PARENT_STEP_PPS,
    CODE_SHARE_STEP_PPS, FIXED_POINT_SCALE, MAX_THRESHOLDS,
};
use super::PROTO_IFRC;
use crate::agent::{AgentEvent, DropReason, Frame, LinkCtx, NodeAgent, RxInfo, SendDone, SendError};
use crate::forwarder::{CollectionForwarder, ForwarderConfig, ForwarderStats};
use crate::time::{Duration, Instant};
use crate::NodeId;

/// What the agent is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A sensor node that originates traffic toward `sink` and forwards its children's.
    Node {
        /// The base station whose tree the node uses.
        sink: NodeId,
    },
    /// A base station: sources nothing, keeps the pseudo-rate r_b and broadcasts control
    /// packets [PAPER §4.1.4].
    BaseStation,
}

/// Rate-increase mode [PAPER §4.1.3].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Add φ every 1/r.
    SlowStart,
    /// Add δ/r every 1/r.
    Additive,
}

/// Counters of an IFRC agent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IfrcStats {
    /// Own multiplicative decreases (one per newly crossed threshold that lowered the rate: a
    /// rate already at its floor does not count).
    pub halvings: u64,
    /// Collapses to r_init at the top threshold ([`TopThreshold::Collapse`] only).
    pub collapses: u64,
    /// Slow-starting nodes' crossings of U(0) that set the rate to r_init + 0.0011 pkt/s
    /// (the code's START → HALF step, [`SlowStartRule::SsThresh`] only).
    pub start_half_steps: u64,
    /// Own threshold crossings that did not halve ([`IfrcConfig::skip_halving_after_sharing`]).
    pub skipped_halvings: u64,
    /// Congestion epochs entered.
    pub epochs: u64,
    /// Rule 1: the rate was lowered on hearing the parent.
    pub rule1_clamps: u64,
    /// Rule 1: an own increase was cut back to the parent's last heard rate.
    pub rule1_caps: u64,
    /// Rule 2 signals seen (a neighbour or a neighbour's child crossed a new threshold; the
    /// base station: one of its children did).
    pub rule2_signals: u64,
    /// Rule 2 signals that lowered the rate.
    pub rule2_constraints: u64,
    /// The code's "parent in START" rule: the rate was lowered to a slow-starting parent's, the
    /// node put in slow start with its ssThresh and the tick restarted
    /// ([`IfrcConfig::code_header`] only).
    pub parent_start_resets: u64,
    /// Control packets handed to the MAC (base station).
    pub control_sent: u64,
    /// Control packets received or overheard.
    pub control_received: u64,
    /// Data packets inserted into the queue (own and forwarded; each updates the EWMA).
    pub insertions: u64,
    /// Packets refused because the queue was full (from the forwarder).
    pub queue_drops: u64,
    /// Application slots offered.
    pub app_slots: u64,
    /// Data frames re-stamped for a MAC retransmission ([`NodeAgent::refresh_frame`]).
    pub restamps: u64,
    /// Rate-timer ticks.
    pub ticks: u64,
    /// Frames addressed to this node whose IFRC header did not parse.
    pub malformed: u64,
    /// Snooped frames for other nodes whose headers did not parse (ignored).
    pub snoop_malformed: u64,
    /// Largest EWMA queue length reached, packets.
    pub max_avg_q: f64,
    /// Data packets of another base station's tree forwarded by this node: IFRC gives each node
    /// one tree (spec §9.1), so Rule 1 held this node to its own tree's parent while it served
    /// the other tree's children too (a scenario whose flows to several sinks cross).
    pub foreign_tree_forwards: u64,
}

/// What a snooped header tells the sharing rules.
#[derive(Clone, Copy, Debug)]
struct Snooped {
    from: NodeId,
    /// The sender newly crossed one of its thresholds (Rule 2(a)).
    fire_a: bool,
    /// The sender's congested child newly crossed one (Rule 2(b)).
    fire_b: bool,
    congested: bool,
    is_child: bool,
}

/// The threshold ladder and its comparisons.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ladder {
    u: [f64; MAX_THRESHOLDS],
    n: usize,
    lower: f64,
    test: ThresholdTest,
}

impl Ladder {
    pub(super) fn new(cfg: &IfrcConfig) -> Ladder {
        let mut u = [f64::INFINITY; MAX_THRESHOLDS];
        let n = cfg.threshold_count();
        for (k, slot) in u.iter_mut().enumerate().take(n) {
            *slot = cfg.threshold(k);
        }
        Ladder { u, n, lower: cfg.lower_threshold, test: cfg.threshold_test }
    }

    fn value(&self, x: f64) -> f64 {
        match self.test {
            ThresholdTest::Strict => x,
            // avg is never negative, so truncation is the floor.
            ThresholdTest::FlooredInclusive => (x as u64) as f64,
        }
    }

    fn above(&self, x: f64, u: f64) -> bool {
        match self.test {
            ThresholdTest::Strict => x > u,
            ThresholdTest::FlooredInclusive => self.value(x) >= u,
        }
    }

    /// lvl(x): the largest k with x above U(k), or −1 (spec §6.3).
    pub(super) fn level(&self, x: f64) -> i8 {
        let mut l = -1i8;
        for k in 0..self.n {
            if self.above(x, self.u[k]) {
                l = k as i8;
            }
        }
        l
    }

    fn enters(&self, x: f64) -> bool {
        self.n > 0 && self.above(x, self.u[0])
    }

    fn leaves(&self, x: f64) -> bool {
        self.value(x) < self.lower
    }
}

/// The EWMA of the queue length in the configured arithmetic ([`QueueAverage`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct QueueEwma {
    kind: QueueAverage,
    /// w_q (float arithmetic).
    weight: f64,
    /// w_q in whole hundredths, the code's ALPHA (fixed-point arithmetic).
    alpha: u64,
    /// The float average, packets.
    float: f64,
    /// The fixed-point average, 1/[`FIXED_POINT_SCALE`] packet.
    fixed: u64,
}

impl QueueEwma {
    /// An empty average (0 packets) [AMBIG-2: the EWMA starts from 0]. With fixed point, w_q is
    /// rounded to the nearest hundredth and kept within 0 … 1 (the code's ALPHA is a whole
    /// number; the simulator refuses a w_q that is not a whole number of hundredths).
    pub(super) fn new(cfg: &IfrcConfig) -> QueueEwma {
        let scale = f64::from(FIXED_POINT_SCALE);
        let w = cfg.ewma_weight;
        let alpha = if w.is_finite() && w > 0.0 { (w * scale + 0.5).min(scale) as u64 } else { 0 };
        QueueEwma { kind: cfg.queue_average, weight: w, alpha, float: 0.0, fixed: 0 }
    }

    /// One update with the instantaneous queue length `q`, packets [PAPER §4.1.1; CODE usc-ifrc:
    /// QueuedSendM.nc calQueueLength].
    pub(super) fn update(&mut self, q: usize) {
        match self.kind {
            QueueAverage::Float => self.float = (1.0 - self.weight) * self.float + self.weight * q as f64,
            QueueAverage::FixedPoint => {
                // Q ← ⌊((S − a)·Q + a·q·S) / S⌋ with S = 100, in 64 bits (the code's 32 hold
                // 97 × 6300 + 3 × 63 × 100 with room to spare).
                let s = u64::from(FIXED_POINT_SCALE);
                let q = q as u64;
                self.fixed = ((s - self.alpha) * self.fixed + self.alpha * q * s) / s;
            }
        }
    }

    /// The average, packets (the fixed-point one is a whole number of hundredths).
    pub(super) fn value(&self) -> f64 {
        match self.kind {
            QueueAverage::Float => self.float,
            QueueAverage::FixedPoint => self.fixed as f64 / f64::from(FIXED_POINT_SCALE),
        }
    }
}

/// Congestion state with hysteresis and the highest level of the current epoch: the node's own
/// (§4.4) and the one inferred for every neighbour (§6.3).
#[derive(Clone, Copy, Debug)]
pub(super) struct Epoch {
    pub(super) congested: bool,
    pub(super) maxlvl: i8,
}

impl Epoch {
    pub(super) const IDLE: Epoch = Epoch { congested: false, maxlvl: -1 };

    /// Feed a new average; returns (previous max level, new max level) of the epoch, and
    /// whether an epoch started.
    pub(super) fn update(&mut self, ladder: &Ladder, avg: f64) -> (i8, i8, bool) {
        let mut started = false;
        if !self.congested && ladder.enters(avg) {
            self.congested = true;
            self.maxlvl = -1;
            started = true;
        }
        if self.congested && ladder.leaves(avg) {
            *self = Epoch::IDLE;
        }
        let old = self.maxlvl;
        if self.congested {
            self.maxlvl = self.maxlvl.max(ladder.level(avg));
        }
        (old, self.maxlvl, started)
    }

    /// As [`Epoch::update`], but one threshold at a time: an epoch starts at level 0 and each
    /// update climbs at most one level [CODE usc-ifrc: RateControlM.nc checkQueue, one `switch`
    /// case per call]; an epoch does not end in the update that starts it.
    pub(super) fn update_stepwise(&mut self, ladder: &Ladder, avg: f64) -> (i8, i8, bool) {
        let old = self.maxlvl;
        if !self.congested {
            if ladder.enters(avg) {
                *self = Epoch { congested: true, maxlvl: 0 };
                return (-1, 0, true);
            }
            return (old, old, false);
        }
        if ladder.leaves(avg) {
            *self = Epoch::IDLE;
        } else if ladder.level(avg) > self.maxlvl {
            self.maxlvl += 1;
        }
        (old, self.maxlvl, false)
    }
}

/// One entry of the neighbour table [PAPER §4.1.2: "state proportional to the number of
/// neighbours"; fields spec §3].
#[derive(Clone, Copy, Debug)]
struct Neighbour {
    rate: f64,
    avg_q: f64,
    epoch: Epoch,
    child_congested: bool,
    child_rate: f64,
    child_avg_q: f64,
    child_maxlvl: i8,
    /// The advertised mode (the code extension; None: not heard since the entry was created or
    /// aged out, or heard without the extension).
    code_mode: Option<wire::CodeMode>,
    /// The advertised mode of the reported congested child (None: no congested child reported).
    child_code_mode: Option<wire::CodeMode>,
    /// Advertised rThresh, ssThresh and the congested child's rThresh (the code extension).
    r_thresh: f64,
    ss_thresh: Option<f64>,
    child_r_thresh: f64,
    is_child: bool,
    last_heard: Instant,
    /// Packets this neighbour originated that reached this base station since the last
    /// periodic control packet.
    originated: u32,
    /// Packets of any origin this neighbour delivered to this base station since the last
    /// periodic control packet.
    received: u32,
    /// When a packet this neighbour originated last reached this base station.
    last_originated: Option<Instant>,
}

impl Neighbour {
    fn new(now: Instant) -> Neighbour {
        Neighbour {
            rate: 0.0,
            avg_q: 0.0,
            epoch: Epoch::IDLE,
            child_congested: false,
            child_rate: 0.0,
            child_avg_q: 0.0,
            child_maxlvl: -1,
            code_mode: None,
            child_code_mode: None,
            r_thresh: 0.0,
            ss_thresh: None,
            child_r_thresh: 0.0,
            is_child: false,
            last_heard: now,
            originated: 0,
            received: 0,
            last_originated: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InFlight {
    None,
    Data,
    Control,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    Rule1,
    Rule2,
}

/// Most timer expiries one `handle_timeout` call processes (a late call catches up this far,
/// then the timers restart from now).
const MAX_CATCH_UP: u32 = 10_000;

/// The IFRC node agent (see the module docs of [`crate::ifrc`]).
#[derive(Debug)]
pub struct IfrcAgent {
    me: NodeId,
    role: Role,
    cfg: IfrcConfig,
    ladder: Ladder,
    fwd: CollectionForwarder,
    // Rate controller.
    rate: f64,
    mode: Mode,
    delta: f64,
    last_tick: Instant,
    next_tick: Instant,
    shared_since_tick: bool,
    /// ssThresh, None while unknown (the code's BANDWIDTH) [`SlowStartRule::SsThresh`].
    ss_thresh: Option<f64>,
    /// The code's rThresh, with δ = ε·rThresh² ([`IfrcConfig::code_header`] only).
    r_thresh: f64,
    /// The base station is in the code's mode START (r_b raised to the cap at every raise)
    /// ([`IfrcConfig::code_header`] only).
    bs_start: bool,
    /// The current epoch began in slow start: slow start resumes when it ends (the code's
    /// revertmode = START).
    revert_slow_start: bool,
    /// The tick ran: `shared_since_tick` is cleared at the next entry into the agent, after the
    /// tick's own packets were checked under it ([`IfrcConfig::skip_halving_after_sharing`]).
    guard_clear_pending: bool,
    /// A node without a flow follows the best-path tree among these sinks (empty: the role's).
    relay_sinks: alloc::vec::Vec<NodeId>,
    // Queue monitor.
    ewma: QueueEwma,
    avg_q: f64,
    own: Epoch,
    // Parent (Rule 1).
    parent: Option<NodeId>,
    parent_rate: Option<f64>,
    /// The parent's last heard code extension ([`IfrcConfig::code_header`]).
    parent_code: Option<wire::CodeExt>,
    parent_decreased: bool,
    neighbours: BTreeMap<NodeId, Neighbour>,
    // Application slots.
    weight: f64,
    slot_credit: f64,
    last_slot: Instant,
    next_slot: Option<Instant>,
    phase_pending: bool,
    last_now: Instant,
    // Base station.
    pending_control: u8,
    next_control: Option<Instant>,
    /// When r_b was last raised ([`IfrcConfig::bs_increase_at_control`]).
    bs_last_raise: Instant,
    control_seq: u16,
    in_flight: InFlight,
    events: VecDeque<AgentEvent>,
    stats: IfrcStats,
}

/// 1/r as a duration (at least 1 ns).
fn period(rate: f64) -> Duration {
    // Rates are kept at or above the configured floor; a non-positive one (never reached) takes
    // the paper profile's 10⁻⁴ pkt/s floor [AMBIG-11].
    let r = if rate.is_finite() && rate > 0.0 { rate } else { 1e-4 };
    Duration::from_secs_f64(1.0 / r).max(Duration(1))
}

/// Rates of the code are whole numbers of 1/RESOLUTION pkt/s. [CODE usc-ifrc: Makefile
/// RESOLUTION = 10000]
const CODE_RESOLUTION: f64 = 10_000.0;

/// A rate in the code's whole units of 10⁻⁴ pkt/s, to the nearest unit: a rate read from a
/// header is within half a wire step (7.6·10⁻⁶ pkt/s) of the sender's whole number of units.
fn code_units(r: f64) -> u64 {
    if r.is_finite() && r > 0.0 {
        (r * CODE_RESOLUTION + 0.5) as u64
    } else {
        0
    }
}

/// A whole number of the code's rate units as pkt/s.
fn from_code_units(u: u64) -> f64 {
    u as f64 / CODE_RESOLUTION
}

/// A rate moved onto the code's grid of whole units.
fn code_grid(r: f64) -> f64 {
    from_code_units(code_units(r))
}

fn at_least(t: Instant, floor: Instant) -> Instant {
    if t < floor {
        floor
    } else {
        t
    }
}

fn earlier(t: Instant, d: Duration) -> Instant {
    Instant(t.0.saturating_sub(d.0))
}

impl IfrcAgent {
    /// An agent for node `me` created at `now`. The forwarder's queue bound is replaced by
    /// [`IfrcConfig::queue_capacity`].
    pub fn new(me: NodeId, role: Role, cfg: IfrcConfig, fwd: ForwarderConfig, now: Instant) -> Self {
        let fwd = CollectionForwarder::new(me, ForwarderConfig { queue_capacity: cfg.queue_capacity, ..fwd });
        let ladder = Ladder::new(&cfg);
        let (rate, mode) = match role {
            Role::Node { .. } => (cfg.initial_rate_pps, Mode::SlowStart),
            // The base station always increases additively [PAPER §4.1.4].
            Role::BaseStation => (cfg.bs_initial_rate_pps.min(cfg.max_rate_pps), Mode::Additive),
        };
        let p = period(rate);
        let (next_tick, last_tick, phase_pending) = if matches!(role, Role::BaseStation) && cfg.bs_increase_at_control {
            // No rate timer: r_b rises at control packets only.
            (Instant::MAX, now, false)
        } else if cfg.random_start_phase {
            (now, now, true)
        } else {
            (now + p, now, false)
        };
        let is_node = matches!(role, Role::Node { .. });
        let next_slot = match (is_node, cfg.generation) {
            (true, Generation::SeparateTimer) => Some(next_tick),
            _ => None,
        };
        let next_control = match (role, cfg.bs_trigger) {
            // [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired] a beacon at once, and
            // the timer from there.
            (Role::BaseStation, BsTrigger::Timer) if cfg.bs_control_at_start => Some(now),
            // The first periodic control packet assumes a fastest child at 1 pkt/s.
            // [CODE usc-ifrc: RateControlM.nc setBS]
            (Role::BaseStation, BsTrigger::Timer) => Some(now + Duration::from_secs_f64(f64::from(cfg.bs_m))),
            _ => None,
        };
        IfrcAgent {
            me,
            role,
            // The base station's slope follows its own pseudo-rate, δ = ε·r_b² (AMBIG-12,
            // option a), from the start as after every decrease.
            delta: cfg.delta_for(if matches!(role, Role::BaseStation) { rate } else { cfg.initial_rate_pps }),
            ladder,
            fwd,
            rate,
            mode,
            last_tick,
            next_tick,
            shared_since_tick: false,
            ss_thresh: None,
            // [CODE usc-ifrc: RateControlM.nc StdControl.init] rThresh = rLocal = SSVALUE, also at
            // the base station (setBS raises rLocal only); its mode START.
            r_thresh: cfg.initial_rate_pps,
            bs_start: true,
            revert_slow_start: false,
            guard_clear_pending: false,
            relay_sinks: alloc::vec::Vec::new(),
            ewma: QueueEwma::new(&cfg),
            avg_q: 0.0,
            own: Epoch::IDLE,
            parent: None,
            parent_rate: None,
            parent_code: None,
            parent_decreased: false,
            neighbours: BTreeMap::new(),
            weight: 1.0,
            slot_credit: 0.0,
            last_slot: last_tick,
            next_slot,
            phase_pending,
            last_now: now,
            pending_control: 0,
            next_control,
            bs_last_raise: now,
            control_seq: 0,
            in_flight: InFlight::None,
            // The starting rate, so that a rate trace begins where the rate does (r_init, or
            // r_b at the base station), not at its first change.
            events: VecDeque::from([AgentEvent::RateChanged { rate_pps: rate, level: 0.0 }]),
            stats: IfrcStats::default(),
            cfg,
        }
    }

    /// Current rate r_i (the base station: r_b), pkt/s.
    pub fn rate_pps(&self) -> f64 {
        self.rate
    }
    /// EWMA of the queue length, packets.
    pub fn avg_queue(&self) -> f64 {
        self.avg_q
    }
    /// True during an own congestion epoch.
    pub fn is_congested(&self) -> bool {
        self.own.congested
    }
    /// Highest threshold level crossed in the current epoch (−1 outside epochs).
    pub fn congestion_level(&self) -> i8 {
        self.own.maxlvl
    }
    /// True in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.mode == Mode::SlowStart
    }
    /// Rate-increase mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// Additive-increase constant δ, pkt/s².
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// ssThresh, pkt/s: None while unknown (always under [`SlowStartRule::Paper`]).
    pub fn ss_thresh(&self) -> Option<f64> {
        self.ss_thresh
    }
    /// The code's rThresh, pkt/s, kept under [`SlowStartRule::SsThresh`] (r_init while that
    /// option is off).
    pub fn r_thresh(&self) -> f64 {
        self.r_thresh
    }
    /// The code's mode as this node advertises it in the code extension: a base station START
    /// or AI; a node HALF, FOURTH or EIGHTH in a congested epoch (one per threshold crossed),
    /// else START in slow start and AI in additive increase. [CODE usc-ifrc: RateControl.h]
    pub fn code_mode(&self) -> wire::CodeMode {
        use wire::CodeMode as M;
        if self.role == Role::BaseStation {
            return if self.bs_start { M::Start } else { M::Ai };
        }
        if self.own.congested {
            return match self.own.maxlvl {
                i8::MIN..=0 => M::Half,
                1 => M::Fourth,
                _ => M::Eighth,
            };
        }
        if self.mode == Mode::SlowStart {
            M::Start
        } else {
            M::Ai
        }
    }
    /// The parent's last heard rate (None before the first packet from the current parent).
    pub fn parent_rate(&self) -> Option<f64> {
        self.parent_rate
    }
    /// Counters.
    pub fn stats(&self) -> IfrcStats {
        IfrcStats { queue_drops: self.fwd.stats().queue_drops, ..self.stats }
    }
    /// Counters of the inner collection forwarder.
    pub fn forwarder_stats(&self) -> &ForwarderStats {
        self.fwd.stats()
    }
    /// Parameters.
    pub fn config(&self) -> &IfrcConfig {
        &self.cfg
    }
    /// Role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Weight w_i of weighted fairness [PAPER §4.2].
    pub fn weight(&self) -> f64 {
        self.weight
    }
    /// Number of neighbours in the table.
    pub fn neighbour_count(&self) -> usize {
        self.neighbours.len()
    }

    /// A node that sends nothing follows the best-path tree among `sinks` (the fewest hops;
    /// on a tie the current tree, else the earlier sink), as every IFRC node picks the best-path
    /// base station [PAPER §4.2; spec §9.1]. Ignored by a base station.
    pub fn set_relay_sinks(&mut self, sinks: alloc::vec::Vec<NodeId>) {
        if matches!(self.role, Role::Node { .. }) {
            self.relay_sinks = sinks;
        }
    }

    /// Set the weight w_i: application slots come at w·r [PAPER §4.2]; 0 means the node
    /// originates nothing but still adapts its rate [PAPER §4.2, subset of senders; AMBIG-15].
    /// Negative or non-finite weights count as 0.
    pub fn set_weight(&mut self, w: f64) {
        let w = if w.is_finite() && w > 0.0 { w } else { 0.0 };
        self.weight = w;
        if matches!(self.role, Role::Node { .. }) && self.cfg.generation == Generation::SeparateTimer {
            self.next_slot = if w > 0.0 {
                let t = self.last_slot + period(w * self.rate);
                Some(if self.phase_pending { t } else { at_least(t, self.last_now) })
            } else {
                None
            };
        }
    }

    /// The congested child with the smallest rate, as (rate, avg_q), if any fresh one
    /// [PAPER §4.1.2 fields 3–5; AMBIG-5; AMBIG-6 expiry].
    pub fn congested_child(&self, now: Instant) -> Option<(f64, f64)> {
        self.slowest_congested_child(now).map(|n| (n.rate, n.avg_q))
    }

    fn slowest_congested_child(&self, now: Instant) -> Option<&Neighbour> {
        let mut best: Option<&Neighbour> = None;
        for n in self.fresh_congested_children(now) {
            if best.is_none_or(|b| n.rate < b.rate) {
                best = Some(n);
            }
        }
        best
    }

    /// The children in a congested epoch whose mark has not expired (AMBIG-6). With the code's
    /// header a child is congested while it advertises HALF or above [CODE usc-ifrc:
    /// RateControlM.nc calcParameters], else while its advertised average keeps it in an epoch.
    fn fresh_congested_children(&self, now: Instant) -> impl Iterator<Item = &Neighbour> + '_ {
        let by_mode = self.cfg.code_header();
        self.neighbours.values().filter(move |n| {
            let silent = now.saturating_since(n.last_heard).as_secs_f64();
            let congested =
                if by_mode { n.code_mode.is_some_and(wire::CodeMode::congested) } else { n.epoch.congested };
            n.is_child && congested && n.rate > 0.0 && silent * n.rate <= self.cfg.child_expiry_intervals
        })
    }

    /// The header a data packet carrying `protocol` would get if it were sent now
    /// [PAPER §4.1.2].
    pub fn header(&self, now: Instant, protocol: u8) -> wire::Repr {
        self.build_header(now, protocol, false)
    }

    fn build_header(&self, now: Instant, protocol: u8, control: bool) -> wire::Repr {
        let child = self.congested_child(now);
        let bs = self.role == Role::BaseStation;
        // [CODE usc-ifrc: RateControlM.nc UpdateHdr] lhRThresh, lhMode, lhSSThresh and the
        // congested child's lhCongChildRThresh, lhCongChildMode.
        let code = self.cfg.code_header().then(|| {
            let c = self.slowest_congested_child(now);
            wire::CodeExt {
                r_thresh_pps: self.r_thresh,
                ss_thresh_pps: self.ss_thresh,
                mode: self.code_mode(),
                child_r_thresh_pps: c.map_or(0.0, |n| n.r_thresh),
                child_mode: c.and_then(|n| n.code_mode).unwrap_or(wire::CodeMode::Start),
            }
        });
        wire::Repr {
            code,
            child_congested: child.is_some(),
            control,
            rate_pps: self.rate,
            // The base station advertises an empty queue [AMBIG-12].
            avg_q: if bs { 0.0 } else { self.avg_q },
            // Multi-BS fix: the base station's own r_b [PAPER §4.2; AMBIG-13].
            child_rate_pps: if bs && self.cfg.multi_bs_fix { self.rate } else { child.map_or(0.0, |c| c.0) },
            // With the fix, the highest level among the congested children: r_b falls with
            // every child's new crossing below it, and a node of another tree sees a Rule 2(b)
            // signal only when the advertised level rises, which the slowest child's level
            // need not do [AMBIG → chosen; the paper's BS sends "a control packet indicating
            // that r_11 is congested", §4.2]. Without it, the slowest child's, as a node's.
            child_avg_q: if bs && self.cfg.multi_bs_fix {
                self.fresh_congested_children(now).map(|n| n.avg_q).fold(0.0, f64::max)
            } else {
                child.map_or(0.0, |c| c.1)
            },
            protocol,
        }
    }

    // ----- rate controller -----

    fn set_rate(&mut self, now: Instant, rate: f64) {
        let mut rate = rate.max(self.cfg.min_rate_pps).min(self.cfg.max_rate_pps);
        if self.cfg.code_header() {
            // [CODE usc-ifrc: RateControlM.nc] rLocal is a whole number of 10⁻⁴ pkt/s.
            rate = code_grid(rate);
        }
        if rate == self.rate {
            return;
        }
        self.rate = rate;
        self.events.push_back(AgentEvent::RateChanged { rate_pps: rate, level: self.avg_q });
        if self.next_tick == Instant::MAX {
            // A parked base station timer restarts now that r_b can grow again (none when r_b
            // rises at control packets only).
            if !self.bs_raises_at_control() {
                self.last_tick = now;
                self.next_tick = now + period(rate);
            }
            return;
        }
        // [AMBIG-9 → chosen: the pending tick moves to last_tick + 1/r_new]
        if self.cfg.reschedule_on_rate_change && !self.phase_pending {
            self.next_tick = at_least(self.last_tick + period(rate), now);
            if self.next_slot.is_some() {
                self.next_slot = Some(at_least(self.last_slot + period(self.weight * rate), now));
            }
        }
    }

    /// r ≤ r_init, up to one step of the header's rate encoding: a rate learned from a
    /// neighbour's header went through [`wire::quantize_rate`], and a node clamped to its
    /// parent's r_init must re-enter slow start as its parent did, not fall into additive
    /// increase with δ = ε·r_init² (which leaves it stuck near r_init for hours). [AMBIG →
    /// chosen: the paper's "r ≤ r_init" widened by 2⁻¹⁶ pkt/s, for every test of it (own
    /// halvings and the tick's re-entry check too, where it changes nothing in practice)]
    fn at_or_below_initial(&self, r: f64) -> bool {
        r <= self.cfg.initial_rate_pps + 1.0 / wire::RATE_SCALE
    }

    /// Enter slow start when r ≤ r_init, otherwise additive increase with a fresh δ.
    fn after_decrease(&mut self) {
        self.delta = self.cfg.delta_for(self.rate);
        let floor = self.at_or_below_initial(self.rate);
        if floor && self.code_ss() && self.mode != Mode::SlowStart {
            self.floor_reset();
            return;
        }
        self.mode = if floor { Mode::SlowStart } else { Mode::Additive };
    }

    /// Half a rate: under the code's header in whole units, truncated (the code's
    /// `(int)((float)rLocal * MDFACTOR)` and `rLocal/2`, MDFACTOR = 0.5). [CODE usc-ifrc:
    /// RateControlM.nc checkQueue; RateControl.h MDFACTOR]
    fn half(&self, r: f64) -> f64 {
        if self.cfg.code_header() {
            from_code_units(code_units(r) / 2)
        } else {
            r / 2.0
        }
    }

    /// The code's additive step in units of 10⁻⁴ pkt/s from rLocal = `u` units: with
    /// inc = ⌊rThresh/EPSILON⌋, inc·⌊rThresh/rLocal⌋ when rThresh > rLocal, else
    /// ⌊inc·rThresh/rLocal⌋; at least one unit. Between rThresh/2 and rThresh that is only
    /// ⌊rThresh/EPSILON⌋ per tick. [CODE usc-ifrc: RateControlM.nc updateRLocal; Makefile
    /// EPSILON = 80]
    fn code_ai_step(&self, u: u64) -> u64 {
        let t = code_units(self.r_thresh);
        let epsilon = ((1.0 / self.cfg.epsilon + 0.5) as u64).max(1);
        let u = u.max(1);
        let inc = t / epsilon;
        let inc = if t > u { inc * (t / u) } else { inc * t / u };
        inc.max(code_units(CODE_MIN_AI_STEP_PPS))
    }

    /// The code's ssThresh slow start is in use.
    fn code_ss(&self) -> bool {
        self.cfg.slow_start_rule == SlowStartRule::SsThresh && self.role != Role::BaseStation
    }

    /// A decrease to r_init or below outside slow start: slow start with ssThresh unknown and
    /// the ladder back at the bottom (the code's mode START). [CODE usc-ifrc: RateControlM.nc
    /// checkQueue and IFRCRules, last lines: rLocal ≤ SSVALUE and mode ≠ START → rLocal =
    /// SSVALUE, mode = START, ssThresh = BANDWIDTH]
    fn floor_reset(&mut self) {
        self.mode = Mode::SlowStart;
        self.ss_thresh = None;
        self.revert_slow_start = false;
        self.own = Epoch::IDLE;
    }

    /// An own threshold U(k) was newly crossed [PAPER §4.1.1].
    fn own_crossing(&mut self, now: Instant, k: i8) {
        if self.role == Role::BaseStation {
            return; // the base station never halves [PAPER §4.1.4]
        }
        if self.code_ss() && self.mode == Mode::SlowStart {
            // START → HALF [CODE usc-ifrc: RateControlM.nc checkQueue, case START]: no halving
            // and no decLastCycle guard; ssThresh = rThresh = half the rate if ssThresh was
            // unknown (else both kept), the rate r_init + 0.0011, additive increase with
            // δ = ε·rThresh² through the epoch, slow start again when it ends (revertmode).
            if self.ss_thresh.is_none() {
                let half = self.half(self.rate);
                self.ss_thresh = Some(half);
                self.r_thresh = half;
                self.delta = self.cfg.delta_for(half);
            } else if self.cfg.code_header() {
                // ssThresh known: rThresh is kept (a "parent in START" after a collapse leaves
                // it at half the collapsed rate), and the epoch's additive increase uses it:
                // the code's integer step reads rThresh itself (`code_ai_step`); δ is set from
                // it too only so that `delta()` reports what the steps follow.
                // [CODE usc-ifrc: RateControlM.nc checkQueue case START leaves rThresh;
                // updateRLocal: increment from rThresh/EPSILON in every mode but START]
                self.delta = self.cfg.delta_for(self.r_thresh);
            }
            self.stats.start_half_steps += 1;
            let r = self.cfg.initial_rate_pps + CODE_HALF_STEP_PPS;
            self.set_rate(now, r);
            self.mode = Mode::Additive;
            self.revert_slow_start = true;
            return;
        }
        let top = k as usize + 1 == self.ladder.n;
        if top && self.cfg.top_threshold_action == TopThreshold::Collapse {
            self.stats.collapses += 1;
            if self.cfg.code_header() {
                // [CODE usc-ifrc: RateControlM.nc checkQueue, case EIGHTH] rThresh = rLocal / 2
                // (advertised; START does not use it).
                self.r_thresh = self.half(self.rate);
            }
            let r = self.cfg.initial_rate_pps;
            self.set_rate(now, r);
            self.delta = self.cfg.delta_for(self.rate);
            self.mode = Mode::SlowStart;
            if self.code_ss() {
                // [CODE usc-ifrc: RateControlM.nc checkQueue, case EIGHTH] mode START with
                // ssThresh = BANDWIDTH: the ladder starts again from the bottom.
                self.floor_reset();
            }
            return;
        }
        if self.code_ss() && k == 0 {
            // [CODE usc-ifrc: RateControlM.nc checkQueue, case AI] revertmode = AI.
            self.revert_slow_start = false;
        }
        if self.cfg.skip_halving_after_sharing && self.shared_since_tick {
            self.stats.skipped_halvings += 1;
            return;
        }
        let (before, r) = (self.rate, self.half(self.rate));
        self.set_rate(now, r);
        if self.rate < before {
            self.stats.halvings += 1;
        }
        if self.cfg.code_header() {
            // [CODE usc-ifrc: RateControlM.nc checkQueue] rThresh = the halved rate (δ below).
            self.r_thresh = self.rate;
        }
        self.after_decrease();
        if self.code_ss() && self.mode == Mode::Additive {
            // [CODE usc-ifrc: RateControlM.nc checkQueue] rThresh = ssThresh = the halved rate.
            self.ss_thresh = Some(self.rate);
        }
    }

    /// Rule 1 or Rule 2 lowers the rate to `x` if it is lower [PAPER §4.1.2; AMBIG-22].
    fn constrain(&mut self, now: Instant, x: f64, cause: Cause) {
        let x = x.max(self.cfg.min_rate_pps);
        if x >= self.rate {
            return;
        }
        match cause {
            Cause::Rule1 => self.stats.rule1_clamps += 1,
            Cause::Rule2 => self.stats.rule2_constraints += 1,
        }
        self.shared_since_tick = true;
        self.set_rate(now, x);
        let stay = cause == Cause::Rule1
            && self.mode == Mode::SlowStart
            && !self.at_or_below_initial(self.rate)
            && match self.cfg.slow_start_exit {
                // [AMBIG-8 → chosen: cap only, unless the parent clearly left slow start]
                SlowStartExit::Recommended => !self.parent_decreased,
                SlowStartExit::Literal => false,
            };
        if !stay {
            self.after_decrease();
        }
    }

    /// One rate-timer expiry [PAPER §4.1.3; AMBIG-9].
    fn tick(&mut self, t: Instant) {
        self.stats.ticks += 1;
        self.last_tick = t;
        if let (Role::Node { sink }, Generation::PerTick) = (self.role, self.cfg.generation) {
            self.slot_credit += self.weight;
            while self.slot_credit >= 1.0 {
                self.slot_credit -= 1.0;
                self.stats.app_slots += 1;
                self.events.push_back(AgentEvent::AppSlot { sink });
            }
        }
        let old = self.rate;
        let mut r = self.rate;
        match self.role {
            Role::BaseStation => r += self.cfg.bs_slope_factor * self.delta / r,
            Role::Node { .. } if self.cfg.code_header() => {
                // [CODE usc-ifrc: RateControlM.nc updateRLocal] in whole units of 10⁻⁴ pkt/s,
                // only below the parent: +PHI in START, else the integer additive step from
                // rThresh. No cap at the parent and no slow-start exit through it: updateRLocal
                // may pass the parent by one step, which the parent rules of the next received
                // packet answer ([`IfrcAgent::code_rules`]).
                let (mut u, parent) = (code_units(r), self.parent_rate.map(code_units));
                if !self.cfg.grow_only_below_parent || parent.is_some_and(|p| u < p) {
                    u += match self.mode {
                        Mode::SlowStart => code_units(self.cfg.slow_start_increment_pps),
                        Mode::Additive => self.code_ai_step(u),
                    };
                }
                r = from_code_units(u);
            }
            Role::Node { .. } => {
                let may_grow = !self.cfg.grow_only_below_parent || self.parent_rate.is_some_and(|p| r < p);
                if may_grow {
                    r += match self.mode {
                        Mode::SlowStart => self.cfg.slow_start_increment_pps,
                        Mode::Additive => self.delta / r,
                    };
                }
                // Rule 1 after an own increase, with the last known parent rate [AMBIG-10]:
                // the cap only cancels the increase, so δ stays (spec §7.2 (a)).
                if let Some(p) = self.parent_rate {
                    let reached = r >= p;
                    if r > p {
                        self.stats.rule1_caps += 1;
                        r = p;
                    }
                    if reached && self.mode == Mode::SlowStart {
                        // Slow-start exit 2 [PAPER §4.1.3; AMBIG-8].
                        let exit = match self.cfg.slow_start_exit {
                            SlowStartExit::Recommended => self.parent_decreased,
                            SlowStartExit::Literal => true,
                        };
                        if exit {
                            self.mode = Mode::Additive;
                            self.delta = self.cfg.delta_for(r.max(self.cfg.min_rate_pps));
                        }
                    }
                }
            }
        }
        r = r.max(self.cfg.min_rate_pps).min(self.cfg.max_rate_pps);
        if self.code_ss() && self.mode == Mode::SlowStart {
            // [CODE usc-ifrc: RateControlM.nc updateRLocal] START ends at ssThresh, into AI
            // with rThresh = ssThresh.
            if let Some(s) = self.ss_thresh.filter(|&s| r >= s) {
                self.mode = Mode::Additive;
                self.revert_slow_start = false;
                self.r_thresh = s;
                self.delta = self.cfg.delta_for(s);
            }
        }
        if self.role != Role::BaseStation && self.at_or_below_initial(r) {
            if self.code_ss() && self.mode != Mode::SlowStart {
                self.floor_reset();
            }
            self.mode = Mode::SlowStart; // re-entry [PAPER §4.1.3]
        }
        if self.cfg.skip_halving_after_sharing {
            // [CODE usc-ifrc: SendTimer.fired] the tick's own packets are still checked under
            // the guard; it is cleared after them.
            self.guard_clear_pending = true;
        } else {
            self.shared_since_tick = false;
        }
        if r != old {
            self.rate = r;
            self.events.push_back(AgentEvent::RateChanged { rate_pps: r, level: self.avg_q });
        }
        self.next_tick = if self.role == Role::BaseStation && self.rate >= self.cfg.max_rate_pps {
            // Nothing can grow at the cap: park the base station's timer until r_b is lowered
            // (saves the simulator a tick every 1/r_b).
            Instant::MAX
        } else {
            t + period(self.rate)
        };
    }

    fn slot(&mut self, t: Instant) {
        self.last_slot = t;
        if let Role::Node { sink } = self.role {
            if self.weight > 0.0 {
                self.stats.app_slots += 1;
                self.events.push_back(AgentEvent::AppSlot { sink });
                self.next_slot = Some(t + period(self.weight * self.rate));
                return;
            }
        }
        self.next_slot = None;
    }

    /// The child with the largest advertised rate among those heard within
    /// `child_expiry_intervals` of their inter-packet times (a removed child stops counting,
    /// AMBIG-6) that pass `keep`.
    fn fastest_fresh_child(&self, now: Instant, keep: impl Fn(&Neighbour) -> bool) -> Option<(NodeId, f64)> {
        let mut best: Option<(NodeId, f64)> = None;
        for (&id, n) in &self.neighbours {
            if !n.is_child || n.rate <= 0.0 || !keep(n) {
                continue;
            }
            let silent = now.saturating_since(n.last_heard).as_secs_f64();
            if silent * n.rate > self.cfg.child_expiry_intervals {
                continue;
            }
            if best.is_none_or(|(_, r)| n.rate > r) {
                best = Some((id, n.rate));
            }
        }
        best
    }

    /// The base station raises r_b at its control packets instead of on a 1/r_b timer.
    fn bs_raises_at_control(&self) -> bool {
        self.role == Role::BaseStation && self.cfg.bs_increase_at_control
    }

    /// Raise r_b by slope·δ × `secs`, at least by `bs_min_step_pps`, up to the cap, and note
    /// `now` as the last raise [CODE usc-ifrc: RateControlM.nc incrementBSRLocal].
    fn bs_raise(&mut self, now: Instant, secs: f64) {
        let r = if self.cfg.code_header() && self.bs_start {
            // [CODE usc-ifrc: RateControlM.nc incrementBSRLocal] mode START: rLocal = BANDWIDTH.
            self.cfg.max_rate_pps
        } else if self.cfg.code_header() {
            // [CODE usc-ifrc: RateControlM.nc incrementBSRLocal, mode AI] in whole units with
            // the period in whole ms: inc = 2·rThresh·⌊rThresh/EPSILON⌋, then above RESOLUTION
            // ⌊⌊inc/RESOLUTION⌋·ms/1000⌋, else ⌊⌊inc·ms/RESOLUTION⌋/1000⌋; at least
            // RESOLUTION/1000. (The code's 32 bits overflow for rThresh above 41 pkt/s; not
            // modelled, 64 bits here.)
            let t = code_units(self.r_thresh);
            let epsilon = ((1.0 / self.cfg.epsilon + 0.5) as u64).max(1);
            let slope = (self.cfg.bs_slope_factor + 0.5) as u64;
            let ms = (secs * 1000.0 + 1e-6) as u64;
            let res = CODE_RESOLUTION as u64;
            let inc = slope * t * (t / epsilon);
            let inc = if inc > res { inc / res * ms / 1000 } else { inc * ms / res / 1000 };
            from_code_units(code_units(self.rate) + inc.max(code_units(self.cfg.bs_min_step_pps)))
        } else {
            let step = (self.cfg.bs_slope_factor * self.delta * secs).max(self.cfg.bs_min_step_pps);
            self.rate + step
        };
        self.set_rate(now, r);
        self.bs_last_raise = now;
    }

    /// The base station's periodic control timer [CODE usc-ifrc: RateControlM.nc].
    fn control_timer(&mut self, t: Instant) {
        if self.bs_raises_at_control() {
            // [CODE usc-ifrc: RateControlM.nc BeaconTimer.fired] incrementBSRLocal over the
            // period that just ended, then the beacon. The start-up packet comes without a raise
            // (RouteStabilizeTimer.fired calls sendBeacon(1) alone); it is the only one with no
            // time elapsed since the last raise, the timer being re-armed after every cut.
            let secs = t.saturating_since(self.bs_last_raise).as_secs_f64();
            if secs > 0.0 {
                self.bs_raise(t, secs);
            }
        }
        self.pending_control = self.pending_control.max(1);
        let rmax = self.fastest_fresh_child(t, |_| true).map_or(1.0, |(_, r)| r);
        let m = f64::from(self.cfg.bs_m.max(1));
        let secs = if rmax / m < self.cfg.initial_rate_pps { 10.0 } else { m / rmax };
        self.next_control = Some(t + Duration::from_secs_f64(secs).max(Duration(1)));
    }

    // ----- queue monitor -----

    /// One EWMA update; `inserted` is false for the reference code's update on a refused
    /// packet [PAPER §4.1.1; AMBIG-2: after insertion].
    fn ewma(&mut self, now: Instant, inserted: bool) {
        if inserted {
            self.stats.insertions += 1;
        }
        self.ewma.update(self.fwd.queue_len());
        self.avg_q = self.ewma.value();
        if self.avg_q > self.stats.max_avg_q {
            self.stats.max_avg_q = self.avg_q;
        }
        // The thresholds are tested on the average as the header carries it (to 1/256 packet),
        // so that neighbours, which run the same ladder on the header's value, see exactly the
        // crossings this node acted on [spec §6.3 step 2]; the average itself stays unrounded
        // (rounding each update would stall it when w·|q − avg| < 1/512). A fixed-point average
        // in hundredths is at least 1/100 from the next whole packet below it or equal to one,
        // so that rounding keeps its whole part: ⌊avg⌋ is the code's getOccupancy exactly.
        let q = wire::quantize_queue(self.avg_q);
        let was_congested = self.own.congested;
        let (old, new, started) =
            if self.code_ss() { self.own.update_stepwise(&self.ladder, q) } else { self.own.update(&self.ladder, q) };
        if started {
            self.stats.epochs += 1;
        }
        if self.code_ss() && was_congested && !self.own.congested && self.revert_slow_start {
            // [CODE usc-ifrc: RateControlM.nc checkQueue] ⌊avg⌋ < L: mode = revertmode (START).
            self.revert_slow_start = false;
            self.mode = Mode::SlowStart;
        }
        // One decrease per newly crossed threshold [AMBIG-1].
        for k in (old + 1)..=new {
            self.own_crossing(now, k);
            if !self.own.congested {
                break; // a collapse or the floor put the ladder back at the bottom
            }
        }
    }

    // ----- receive path -----

    fn refresh_parent(&mut self, ctx: &mut dyn LinkCtx) {
        if let (Role::Node { sink }, false) = (self.role, self.relay_sinks.is_empty()) {
            // Each node picks the best-path base station [PAPER §4.2; spec §9.1]: the fewest
            // hops, the current one on a tie, else the earlier in the list.
            let hops = |s: NodeId| ctx.parent(s).and(ctx.hop_count(s));
            let mut best = (hops(sink), sink);
            for &s in &self.relay_sinks {
                if let Some(h) = hops(s) {
                    if best.0.is_none_or(|b| h < b) {
                        best = (Some(h), s);
                    }
                }
            }
            self.role = Role::Node { sink: best.1 };
        }
        if let Role::Node { sink } = self.role {
            let p = ctx.parent(sink);
            if p != self.parent {
                // [AMBIG-21 → chosen: forget the old parent's rate]
                self.parent = p;
                self.parent_rate = None;
                self.parent_code = None;
                self.parent_decreased = false;
            }
        }
    }

    /// Update the neighbour table from a decoded header; what Rules 1 and 2 need of it, unless
    /// the frame is this node's own or a broadcast sender's.
    fn snoop(&mut self, now: Instant, rx: &RxInfo, c: &collection::Repr, h: &wire::Repr) -> Option<Snooped> {
        let n = rx.link_src;
        if n == self.me || n.is_broadcast() {
            return None;
        }
        let ladder = self.ladder;
        let expiry = self.cfg.child_expiry_intervals;
        let e = self.neighbours.entry(n).or_insert_with(|| Neighbour::new(now));
        // What this node knows of a neighbour's epoch ages as a child's congested mark does
        // (AMBIG-6): after that long a silence the neighbour may have left its epoch and
        // crossed again unheard, so its crossing state starts afresh and the level it is heard
        // at counts as a crossing [AMBIG → chosen; the paper keeps no per-neighbour timer]. A
        // neighbour heard again within it continues its epoch.
        if e.rate > 0.0 && now.saturating_since(e.last_heard).as_secs_f64() * e.rate > expiry {
            e.epoch = Epoch::IDLE;
            e.child_maxlvl = -1;
            // The code's neighbour entry is new again: its first mode is no transition.
            e.code_mode = None;
            e.child_code_mode = None;
        }
        e.rate = h.rate_pps;
        e.avg_q = h.avg_q;
        e.last_heard = now;
        if !h.control {
            // Children are nodes whose upward data frames name this node [spec §6.5].
            e.is_child = rx.link_dst == self.me && c.direction == Direction::Up;
        }
        let (old, new, _) = e.epoch.update(&ladder, h.avg_q);
        let fire_a = new > old;
        let fire_b = if h.child_congested {
            let l = ladder.level(h.child_avg_q);
            let f = l > e.child_maxlvl;
            e.child_maxlvl = e.child_maxlvl.max(l);
            f
        } else {
            // The bit clears when the reported child's epoch ends or when its mark expires at
            // the sender (AMBIG-6); the header names no child, so either way the next report
            // counts afresh [AMBIG-4 → chosen]. After an expiry that repeats a level already
            // counted, but the sender counts it afresh too (its crossing state of the child
            // expired with the same silence, above), and the constraint is to the child's
            // current rate: never below what a new crossing would ask.
            e.child_maxlvl = -1;
            false
        };
        e.child_congested = h.child_congested;
        e.child_rate = h.child_rate_pps;
        e.child_avg_q = h.child_avg_q;
        if self.cfg.code_header() {
            // Crossings from the advertised modes [CODE usc-ifrc: RateControlM.nc
            // ReceiveMsg.receive: neighTransition when the stored mode is below the new one,
            // neighCongChildTransition when a congested child is reported and its id changed
            // or its mode rose, neither for a new entry; calcParameters: only HALF and up
            // count]. The header names no child: a report after none counts as a new child. A
            // collapse (EIGHTH → START) or an epoch's end is no rise, so it signals nothing.
            let (fire_a, fire_b, congested) = match h.code {
                Some(x) => {
                    let known = e.code_mode.is_some();
                    let fire_a = x.mode.congested() && e.code_mode.is_some_and(|m| x.mode > m);
                    let child = h.child_congested.then_some(x.child_mode);
                    let fire_b =
                        known && child.is_some_and(|m| m.congested() && e.child_code_mode.is_none_or(|old| m > old));
                    e.code_mode = Some(x.mode);
                    e.child_code_mode = child;
                    e.r_thresh = x.r_thresh_pps;
                    e.ss_thresh = x.ss_thresh_pps;
                    e.child_r_thresh = x.child_r_thresh_pps;
                    (fire_a, fire_b, x.mode.congested())
                }
                None => {
                    e.code_mode = None;
                    e.child_code_mode = None;
                    (false, false, false)
                }
            };
            return Some(Snooped { from: n, fire_a, fire_b, congested, is_child: e.is_child });
        }
        Some(Snooped { from: n, fire_a, fire_b, congested: e.epoch.congested, is_child: e.is_child })
    }

    /// Apply Rules 1 and 2 (a node) or lower r_b (the base station) for a snooped header.
    fn apply_rules(&mut self, now: Instant, ctx: &mut dyn LinkCtx, s: Snooped, h: &wire::Repr) {
        let Snooped { from: n, fire_a, fire_b, congested, is_child } = s;
        // The code's rules read the sender's whole units of 10⁻⁴ pkt/s, which the header's
        // rate encoding carries to within half a wire step: back on the grid, so that equal
        // rates compare equal as in the code (a node at 0.0211 pkt/s and its parent at 0.0211
        // read as 0.021103 would grow past it; a node at 0.0214 would be above its parent's
        // 0.0214 read as 0.021393). [CODE usc-ifrc: RateControlM.nc, rates uint32_t]
        let gridded = self.cfg.code_header().then(|| wire::Repr {
            rate_pps: code_grid(h.rate_pps),
            child_rate_pps: code_grid(h.child_rate_pps),
            code: h.code.map(|x| wire::CodeExt {
                r_thresh_pps: code_grid(x.r_thresh_pps),
                ss_thresh_pps: x.ss_thresh_pps.map(code_grid),
                child_r_thresh_pps: code_grid(x.child_r_thresh_pps),
                ..x
            }),
            ..*h
        });
        let h = gridded.as_ref().unwrap_or(h);
        match self.role {
            Role::BaseStation => {
                // Only the base station's own children lower r_b [PAPER §4.1.4].
                if is_child && fire_a {
                    self.bs_child_crossing(now, h.rate_pps, h.code.map(|x| x.r_thresh_pps));
                }
            }
            Role::Node { .. } if self.cfg.code_header() => self.code_rules(now, ctx, s, h),
            Role::Node { .. } => {
                if Some(n) == self.parent {
                    // Rule 1 [PAPER §4.1.2; AMBIG-10: on every packet heard from the parent].
                    // "The parent has clearly left slow start" [AMBIG-8 → chosen: its rate fell
                    // by more than a quarter, and by more than one slow-start step φ plus a
                    // header quantum]. Slow-starting neighbours drift several φ apart (their
                    // timers are not in phase, and silent nodes climb before traffic starts),
                    // so a slow-starting parent capped by its own parent can drop by a few φ;
                    // read as "left slow start", such a drop sent its children into additive
                    // increase at a near-r_init δ = ε·r² for good (a review: 9 of 32 senders of
                    // E7 crawled at 0.37 pkt/s while the rest reached 1.2; Jain index of the
                    // group 0.871, 0.954 with the φ test alone, 0.998 with this one). A halving
                    // still counts, and so does any larger constraint.
                    let step = self.cfg.slow_start_increment_pps + 1.0 / wire::RATE_SCALE;
                    self.parent_decreased = self.parent_rate.is_some_and(|p| h.rate_pps < (p - step).min(0.75 * p));
                    self.parent_rate = Some(h.rate_pps);
                    self.constrain(now, h.rate_pps, Cause::Rule1);
                }
                let (a, b) = match self.cfg.sharing {
                    Sharing::Crossing => (fire_a, fire_b),
                    Sharing::Pinned => (congested, h.child_congested),
                };
                // Rule 2(a) and 2(b) [PAPER §4.1.2].
                if a {
                    self.stats.rule2_signals += 1;
                    self.constrain(now, h.rate_pps, Cause::Rule2);
                }
                if b {
                    self.stats.rule2_signals += 1;
                    self.constrain(now, h.child_rate_pps, Cause::Rule2);
                }
            }
        }
    }

    /// The code's sharing and parent rules for one received header, on a node
    /// ([`IfrcConfig::code_header`]) [CODE usc-ifrc: RateControlM.nc IFRCRules, after
    /// calcParameters; its "RULE 1" is this project's Rule 2 and its "RULE 2" Rule 1]:
    /// 1. a neighbour's rise into HALF or above (or its congested child's) at a rate below
    ///    this node's: the node takes that rate and rThresh (δ = ε·rThresh²) and the sharing
    ///    guard; in START it takes the neighbour's ssThresh and r_init + 0.0012 (for a child's
    ///    transition r_init + 0.0013) instead of the rate and stays in START. When both fire,
    ///    the lower rate
    ///    (calcParameters keeps one candidate, the child when its rate is lower);
    /// 2. the parent not in START, below this node: its rate and rThresh, the guard; in START
    ///    its ssThresh and r_init + 0.0014 (slow start to that ssThresh);
    /// 3. the parent in START, below this node: its rate, START with its ssThresh, and the tick
    ///    restarted after 1/(r + jitter), jitter ((rand & 0xA)·r_init/10);
    /// 4. r ≤ r_init outside START: r_init, START, ssThresh unknown.
    ///
    /// Rules 2 and 3 use the parent's last heard values on every received packet, as the code
    /// does. The code keeps a single candidate for rule 1 (the congested neighbour with the
    /// lowest rate, never cleared); here each sender's own transition counts (see the module
    /// docs, "Not reproduced").
    fn code_rules(&mut self, now: Instant, ctx: &mut dyn LinkCtx, s: Snooped, h: &wire::Repr) {
        let Snooped { from: n, fire_a, fire_b, .. } = s;
        if Some(n) == self.parent {
            self.parent_rate = Some(h.rate_pps);
            self.parent_code = h.code;
        }
        let r_init = self.cfg.initial_rate_pps;
        if let Some(x) = h.code {
            self.stats.rule2_signals += u64::from(fire_a) + u64::from(fire_b);
            let child = fire_b && (!fire_a || h.child_rate_pps < h.rate_pps);
            let (rate, r_thresh, step) = if child {
                (h.child_rate_pps, x.child_r_thresh_pps, CODE_CHILD_SHARE_STEP_PPS)
            } else {
                (h.rate_pps, x.r_thresh_pps, CODE_SHARE_STEP_PPS)
            };
            if (fire_a || fire_b) && rate < self.rate {
                self.stats.rule2_constraints += 1;
                // The neighbour's ssThresh in both cases (the child's is not in the header).
                self.code_cut(now, rate, r_thresh, x.ss_thresh_pps, r_init + step);
            }
        }
        if let (Some(p), Some(pc)) = (self.parent_rate, self.parent_code) {
            if self.rate > p {
                self.stats.rule1_clamps += 1;
                if pc.mode != wire::CodeMode::Start {
                    self.code_cut(now, p, pc.r_thresh_pps, pc.ss_thresh_pps, r_init + CODE_PARENT_STEP_PPS);
                } else {
                    self.stats.parent_start_resets += 1;
                    self.set_rate(now, p);
                    self.floor_reset();
                    self.ss_thresh = pc.ss_thresh_pps;
                    // [CODE usc-ifrc: RateControlM.nc IFRCRules] SendTimer restarted at
                    // calTimerVal(rLocal + jitter), jitter = ((rand & 0xA)·SSVALUE)/10, in the
                    // code's units (10⁻⁴ pkt/s, whole ms; 10 s below SSVALUE).
                    let k = u64::from(ctx.random_u32() & 0xA);
                    let units = |r: f64| ((r * 1e4 + 0.5) as u64).max(1);
                    let rate = units(self.rate) + k * units(r_init) / 10;
                    let ms = if rate < units(r_init) { 10_000 } else { 10_000_000 / rate };
                    self.last_tick = now;
                    self.next_tick = now + Duration::from_millis(ms);
                }
            }
        }
        if self.at_or_below_initial(self.rate) && self.mode != Mode::SlowStart {
            self.set_rate(now, r_init);
            self.floor_reset();
        }
    }

    /// A cut by the code's rules 1 or 2 ([`IfrcAgent::code_rules`]): outside START the rate and
    /// rThresh of the constraining node; in START its rThresh and ssThresh and the rate
    /// `start_rate`, staying in START. Sets the sharing guard (decLastCycle).
    fn code_cut(&mut self, now: Instant, rate: f64, r_thresh: f64, ss_thresh: Option<f64>, start_rate: f64) {
        self.shared_since_tick = true;
        self.r_thresh = r_thresh;
        self.delta = self.cfg.delta_for(r_thresh);
        if self.mode == Mode::SlowStart && !self.own.congested {
            self.ss_thresh = ss_thresh;
            self.set_rate(now, start_rate);
        } else {
            self.set_rate(now, rate);
        }
    }

    /// A child of the base station crossed a new threshold [PAPER §4.1.4]; `r_thresh` is its
    /// advertised rThresh when the code's header is in use.
    fn bs_child_crossing(&mut self, now: Instant, r_child: f64, r_thresh: Option<f64>) {
        self.stats.rule2_signals += 1;
        let decreased = r_child < self.rate;
        if decreased {
            self.stats.rule2_constraints += 1;
            self.set_rate(now, r_child);
            match r_thresh.filter(|_| self.cfg.code_header()) {
                Some(t) => {
                    // [CODE usc-ifrc: RateControlM.nc bsIFRCRules] rThresh = the child's; mode
                    // START when rLocal ≤ SSVALUE, else AI with ssThresh = rLocal.
                    self.r_thresh = t;
                    self.delta = self.cfg.delta_for(t);
                    self.bs_start = self.at_or_below_initial(self.rate);
                    if !self.bs_start {
                        self.ss_thresh = Some(self.rate);
                    }
                }
                None => self.delta = self.cfg.delta_for(self.rate),
            }
        }
        // "When r_b is decreased because a child is congested", broadcast at once, back to back
        // [PAPER §4.1.4; AMBIG-25]; the code too broadcasts only when r_b falls
        // [CODE usc-ifrc: RateControlM.nc bsIFRCRules, inside `neighRLocal < rLocal`].
        if !decreased {
            return;
        }
        if self.bs_raises_at_control() {
            // [CODE usc-ifrc: RateControlM.nc bsIFRCRules] incrementBSRLocal(calTimerVal(rLocal))
            // at the lowered rate, before the copies are stamped. (At or below r_init the code
            // would be back in START and jump r_b to BANDWIDTH instead; it never gets there, as
            // a child at or below SSVALUE is in START, which its base station does not act on,
            // while here a child's collapse to r_init does lower r_b, and this raises it over
            // calTimerVal's 10 s below r_init: see docs/ifrc.md, session 26.)
            let r = self.rate;
            let secs = if r < self.cfg.initial_rate_pps { 10.0 } else { 1.0 / r };
            self.bs_raise(now, secs);
        }
        self.pending_control = self.pending_control.max(self.cfg.bs_immediate_copies);
        match self.cfg.bs_trigger {
            BsTrigger::OriginatedPackets => self.reset_pacing_counts(),
            // [CODE usc-ifrc: RateControlM.nc bsIFRCRules] the timer re-arms at 1/r_b.
            BsTrigger::Timer => self.next_control = Some(now + period(self.rate)),
        }
    }

    /// Translate the inner forwarder's events (IFRC payloads become application payloads).
    fn drain_forwarder(&mut self) {
        while let Some(ev) = self.fwd.poll_event() {
            let ev = match ev {
                AgentEvent::Delivered { origin, protocol: PROTO_IFRC, hops, payload } => {
                    match wire::Repr::parse(&wire::Packet::new_unchecked(&payload[..])) {
                        Ok(h) if !h.control => AgentEvent::Delivered {
                            origin,
                            protocol: h.protocol,
                            hops,
                            payload: payload[h.buffer_len()..].to_vec(),
                        },
                        _ => {
                            self.stats.malformed += 1;
                            AgentEvent::Dropped { reason: DropReason::Malformed, origin: Some(origin) }
                        }
                    }
                }
                other => other,
            };
            self.events.push_back(ev);
        }
    }

    /// Hand a frame addressed to this node to the forwarder and watch what it did.
    /// Hand a received frame to the forwarder; true when it queued the packet for forwarding.
    fn forward_in(
        &mut self,
        now: Instant,
        ctx: &mut dyn LinkCtx,
        rx: &RxInfo,
        payload: &[u8],
        origin: Option<NodeId>,
    ) -> bool {
        let before = *self.fwd.stats();
        self.fwd.handle_frame(now, ctx, rx, payload);
        self.drain_forwarder();
        let after = *self.fwd.stats();
        if after.forwarded > before.forwarded {
            self.ewma(now, true);
        } else if after.queue_drops > before.queue_drops && self.cfg.ewma_on_overflow {
            self.ewma(now, false);
        }
        if self.role == Role::BaseStation
            && self.cfg.bs_trigger == BsTrigger::OriginatedPackets
            && after.delivered > before.delivered
        {
            self.count_from_child(now, rx.link_src, origin == Some(rx.link_src));
        }
        after.forwarded > before.forwarded
    }

    /// A packet from `child` (originated by it when `own`) reached the base station
    /// [PAPER §4.1.4; AMBIG-12].
    fn count_from_child(&mut self, now: Instant, child: NodeId, own: bool) {
        if let Some(e) = self.neighbours.get_mut(&child) {
            e.received = e.received.saturating_add(1);
            if own {
                e.originated = e.originated.saturating_add(1);
                e.last_originated = Some(now);
            }
        }
        let count = match self.pacing_child(now) {
            Some((id, true)) => self.neighbours.get(&id).map_or(0, |e| e.originated),
            Some((id, false)) => self.neighbours.get(&id).map_or(0, |e| e.received),
            None => 0,
        };
        if count >= self.cfg.bs_m {
            self.pending_control = self.pending_control.max(1);
            self.reset_pacing_counts();
        }
    }

    fn reset_pacing_counts(&mut self) {
        self.neighbours.values_mut().for_each(|n| {
            n.originated = 0;
            n.received = 0;
        });
    }

    /// The child whose packets pace the periodic control packet, and whether its originated
    /// packets count (else all its packets). [AMBIG-12 → chosen: the fastest fresh child that
    /// originates packets, counting those; a child that originates nothing (weight 0, a
    /// stopped flow) or is no longer heard never paces, or the control packets — the only
    /// way the base station's children learn that r_b grew — would stop and Rule 1 would pin
    /// the whole network at the last r_b they heard. When no fresh child originates, the
    /// fastest fresh child and all its packets (the literal "m packets from the child").]
    fn pacing_child(&self, now: Instant) -> Option<(NodeId, bool)> {
        let expiry = self.cfg.child_expiry_intervals;
        let originating = self.fastest_fresh_child(now, |n| {
            n.last_originated.is_some_and(|t| now.saturating_since(t).as_secs_f64() * n.rate <= expiry)
        });
        originating
            .map(|(id, _)| (id, true))
            .or_else(|| self.fastest_fresh_child(now, |_| true).map(|(id, _)| (id, false)))
    }

    fn on_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx, rx: &RxInfo, payload: &[u8], addressed: bool) {
        self.last_now = now;
        self.refresh_parent(ctx);
        let packet = collection::Packet::new_unchecked(payload);
        let Ok(c) = collection::Repr::parse(&packet) else {
            if addressed {
                // The forwarder counts and reports it.
                self.fwd.handle_frame(now, ctx, rx, payload);
                self.drain_forwarder();
            } else {
                self.stats.snoop_malformed += 1;
            }
            return;
        };
        if c.protocol != PROTO_IFRC {
            // Not ours: forward untouched (it still occupies the queue).
            if addressed {
                self.forward_in(now, ctx, rx, payload, Some(c.origin));
            }
            return;
        }
        let body = packet.payload();
        let h = match wire::Repr::parse(&wire::Packet::new_unchecked(body)) {
            Ok(h) => h,
            Err(_) => {
                if addressed {
                    self.stats.malformed += 1;
                    self.events
                        .push_back(AgentEvent::Dropped { reason: DropReason::Malformed, origin: Some(c.origin) });
                } else {
                    self.stats.snoop_malformed += 1;
                }
                return;
            }
        };
        let snooped = self.snoop(now, rx, &c, &h);
        if h.control {
            // Control packets never enter the queue and are never forwarded [AMBIG-27].
            if let Some(s) = snooped {
                self.apply_rules(now, ctx, s, &h);
            }
            self.stats.control_received += 1;
            return;
        }
        // Another tree's packet that this node takes into its queue (counted once queued: a
        // duplicate, a full queue or a broadcast is not a forward).
        let foreign = c.direction == Direction::Up && matches!(self.role, Role::Node { sink } if c.sink != sink);
        if addressed && self.cfg.rules_after_queue_check {
            // [CODE usc-ifrc: ReceiveMsg.receive] queue and check, then the rules.
            if self.forward_in(now, ctx, rx, payload, Some(c.origin)) && foreign {
                self.stats.foreign_tree_forwards += 1;
            }
            if let Some(s) = snooped {
                self.apply_rules(now, ctx, s, &h);
            }
            return;
        }
        if let Some(s) = snooped {
            self.apply_rules(now, ctx, s, &h);
        }
        if addressed && self.forward_in(now, ctx, rx, payload, Some(c.origin)) && foreign {
            self.stats.foreign_tree_forwards += 1;
        }
    }

    /// Clear the sharing guard left set through the last tick's own packets.
    fn settle_guard(&mut self) {
        if self.guard_clear_pending {
            self.guard_clear_pending = false;
            self.shared_since_tick = false;
        }
    }

    fn control_frame(&mut self, now: Instant) -> Frame {
        let h = self.build_header(now, 0, true);
        let mut bytes = vec![0u8; collection::HEADER_LEN + h.buffer_len()];
        let mut p = collection::Packet::new_unchecked(&mut bytes[..]);
        collection::Repr {
            direction: Direction::Down,
            protocol: PROTO_IFRC,
            origin: self.me,
            dst: NodeId::BROADCAST,
            sink: self.me,
            prev_hop: self.me,
            ttl: 1,
            seqno: self.control_seq,
            hops: 0,
        }
        .emit(&mut p);
        self.control_seq = self.control_seq.wrapping_add(1);
        h.emit(&mut wire::Packet::new_unchecked(p.payload_mut()));
        Frame { dst: NodeId::BROADCAST, ack_request: false, payload: bytes }
    }

    /// Write the current header into a data frame at transmission time [AMBIG-16].
    fn stamp(&self, now: Instant, bytes: &mut [u8]) {
        let mut c = collection::Packet::new_unchecked(bytes);
        if c.check_len().is_err() || c.protocol() != PROTO_IFRC {
            return;
        }
        let mut w = wire::Packet::new_unchecked(c.payload_mut());
        if w.check_len().is_err() {
            return;
        }
        let proto = w.protocol();
        let mut h = self.header(now, proto);
        // A frame keeps the layout it was queued with (every node of a run uses the same one):
        // without room for the code extension the 12-byte header is written alone, and a frame
        // that carries one this node does not write is left as it is.
        if w.has_code_ext() != h.code.is_some() {
            if w.has_code_ext() {
                return;
            }
            h.code = None;
        }
        h.emit(&mut w);
    }
}

impl NodeAgent for IfrcAgent {
    fn handle_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx, rx: &RxInfo, payload: &[u8]) {
        self.settle_guard();
        self.on_frame(now, ctx, rx, payload, true);
    }

    fn handle_overheard(&mut self, now: Instant, ctx: &mut dyn LinkCtx, rx: &RxInfo, payload: &[u8]) {
        self.settle_guard();
        self.on_frame(now, ctx, rx, payload, false);
    }

    fn handle_send_done(&mut self, now: Instant, ctx: &mut dyn LinkCtx, done: &SendDone) {
        self.settle_guard();
        self.last_now = now;
        match core::mem::replace(&mut self.in_flight, InFlight::None) {
            InFlight::Data => {
                self.fwd.handle_send_done(now, ctx, done);
                self.drain_forwarder();
            }
            InFlight::Control | InFlight::None => {}
        }
    }

    fn handle_timeout(&mut self, now: Instant, ctx: &mut dyn LinkCtx) {
        self.settle_guard();
        self.last_now = now;
        self.refresh_parent(ctx);
        if self.phase_pending {
            self.phase_pending = false;
            let p = period(self.rate);
            if self.cfg.code_first_tick {
                // The code's jittered first period [CODE usc-ifrc: RateControlM.nc
                // RouteStabilizeTimer.fired, calTimerVal]: rates in units of 10⁻⁴ pkt/s
                // (RESOLUTION), the jitter k·SSVALUE/15 and the period in whole ms, truncated.
                let k = u64::from(ctx.random_u32() & 0xF);
                // Rounded to the nearest unit (no_std: no f64::round; rates are positive).
                let units = |r: f64| ((r * 1e4 + 0.5) as u64).max(1);
                let rate = units(self.rate) + k * units(self.cfg.initial_rate_pps) / 15;
                let first = Duration::from_millis(10_000_000 / rate);
                self.next_tick = now + first;
                self.last_tick = earlier(self.next_tick, p);
                if self.next_slot.is_some() {
                    self.next_slot = Some(self.next_tick);
                    self.last_slot = earlier(self.next_tick, period(self.weight * self.rate));
                }
            } else {
                // Random phase within the first period [AMBIG-20].
                let u = f64::from(ctx.random_u32()) / 4_294_967_296.0;
                self.next_tick = now + Duration::from_secs_f64(u * p.as_secs_f64());
                self.last_tick = earlier(self.next_tick, p);
                if self.next_slot.is_some() {
                    let ps = period(self.weight * self.rate);
                    let t = now + Duration::from_secs_f64(u * ps.as_secs_f64());
                    self.next_slot = Some(t);
                    self.last_slot = earlier(t, ps);
                }
            }
        }
        for _ in 0..MAX_CATCH_UP {
            // On a tie the rate tick runs first, so that with w = 1 the slot is rescheduled
            // with the same new rate and both timers stay aligned.
            let slot_due = self.next_slot.filter(|&t| t <= now && t < self.next_tick);
            let control_due = self.next_control.filter(|&t| t <= now);
            if self.next_tick <= now && slot_due.is_none() {
                let t = self.next_tick;
                self.tick(t);
            } else if let Some(t) = slot_due {
                self.slot(t);
            } else if let Some(t) = control_due {
                self.control_timer(t);
            } else {
                return;
            }
        }
        // Far behind: restart the timers from now.
        self.next_tick = at_least(self.next_tick, now + Duration(1));
        if let Some(t) = self.next_slot {
            self.next_slot = Some(at_least(t, now + Duration(1)));
        }
        if let Some(t) = self.next_control {
            self.next_control = Some(at_least(t, now + Duration(1)));
        }
    }

    fn wants_to_send(&self) -> bool {
        self.in_flight == InFlight::None && (self.pending_control > 0 || self.fwd.wants_to_send())
    }

    fn poll_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx) -> Option<Frame> {
        self.last_now = now;
        if self.in_flight != InFlight::None {
            return None;
        }
        if self.pending_control > 0 {
            // Control packets bypass the data queue [AMBIG-27].
            self.pending_control -= 1;
            self.stats.control_sent += 1;
            self.in_flight = InFlight::Control;
            return Some(self.control_frame(now));
        }
        self.refresh_parent(ctx);
        let frame = self.fwd.poll_frame(now, ctx);
        self.drain_forwarder();
        let mut frame = frame?;
        self.stamp(now, &mut frame.payload);
        self.in_flight = InFlight::Data;
        Some(frame)
    }

    fn refresh_frame(&mut self, now: Instant, payload: &mut [u8]) {
        // A retransmission carries the state of its own attempt, as the first one did
        // [AMBIG-16; CODE: the header is rewritten before every attempt, retries included].
        self.last_now = now;
        if self.in_flight == InFlight::Data {
            self.stamp(now, payload);
            self.stats.restamps += 1;
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.next_tick;
        for x in [self.next_slot, self.next_control].into_iter().flatten() {
            t = t.min(x);
        }
        (t != Instant::MAX).then_some(t)
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    fn queue_len(&self) -> usize {
        self.fwd.queue_len()
    }

    fn queue_capacity(&self) -> usize {
        self.fwd.queue_capacity()
    }

    fn counters(&self) -> alloc::vec::Vec<(&'static str, u64)> {
        let s = self.stats();
        alloc::vec![
            ("halvings", s.halvings),
            ("collapses", s.collapses),
            ("skipped_halvings", s.skipped_halvings),
            ("epochs", s.epochs),
            ("rule1_clamps", s.rule1_clamps),
            ("rule1_caps", s.rule1_caps),
            ("rule2_signals", s.rule2_signals),
            ("rule2_constraints", s.rule2_constraints),
            ("control_sent", s.control_sent),
            ("control_received", s.control_received),
            ("app_slots", s.app_slots),
            ("restamps", s.restamps),
            ("foreign_tree_forwards", s.foreign_tree_forwards),
            ("malformed", s.malformed),
            ("snoop_malformed", s.snoop_malformed),
        ]
    }

    fn send(
        &mut self,
        now: Instant,
        ctx: &mut dyn LinkCtx,
        sink: NodeId,
        dst: NodeId,
        protocol: u8,
        payload: &[u8],
    ) -> Result<(), SendError> {
        self.last_now = now;
        self.refresh_parent(ctx);
        let h = self.header(now, protocol);
        let mut bytes = vec![0u8; h.buffer_len() + payload.len()];
        let mut p = wire::Packet::new_unchecked(&mut bytes[..]);
        h.emit(&mut p);
        p.payload_mut().copy_from_slice(payload);
        let before = *self.fwd.stats();
        let result = self.fwd.send(now, ctx, sink, dst, PROTO_IFRC, &bytes);
        self.drain_forwarder();
        let after = *self.fwd.stats();
        if after.originated > before.originated {
            self.ewma(now, true);
        } else if after.queue_drops > before.queue_drops && self.cfg.ewma_on_overflow {
            self.ewma(now, false);
        }
        result
    }
}
