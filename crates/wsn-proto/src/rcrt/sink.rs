//! The RCRT sink: reliability, congestion detection, rate adaptation and allocation for every
//! flow of one application (spec §2).
//!
//! Call order (quinn style): after [`Sink::handle_datagram`] or [`Sink::handle_timeout`], drain
//! [`Sink::poll_transmit`] (each datagram goes down the reverse path to the node it names),
//! then [`Sink::poll_event`], then re-read [`Sink::poll_timeout`]. Time must not go backwards;
//! a spurious `handle_timeout` is harmless.
//! A FEEDBACK is queued per flow (several triggers merge into one) and built when
//! `poll_transmit` hands it out, so it carries the newest state and its send time is exact.
//!
//! Per flow the sink keeps the missing list (losses not yet repaired, ascending = detection
//! order) and the out-of-order list (packets held behind a gap), delivers every packet to the
//! application exactly once and in order, estimates RTT (T…T‴ with feedback ids), loss (ALI)
//! and the congestion level C_i. Globally it keeps R, D, N and the adaptation clocks; one
//! `Sink` is one (sink, application) pair with its own policy [spec §2.19, D24].

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use wsn_wire::rcrt::{NackList, NackRange, Rate, Repr, MAX_NACK_RANGES, SINCE_FEEDBACK_UNIT_MS};

use super::estimators::{
    decrease_factor, decrease_factor_code, level_code, level_paper, Ali, FidRing, LevelFormula, LevelInput,
    RttEstimator, RttOrder, ALI_WEIGHTS,
};
use super::policy::{Fair, FlowDemand, Policy};
use super::{seq_offset, unwrap_seq_signed, Profile};
use crate::time::{Duration, Instant};
use crate::NodeId;

/// Lower bound of every RTO. [DERIVED: the 2-ms resolution of the DATA packet's time-since-feedback
/// field, the clock granularity G of RFC 6298's max(G, k·RTTVAR). The paper's RTO = srtt +
/// 2·rttvar is 0 after a first sample of 0 (rttvar starts at 0), and a NACK timer re-armed at
/// `now + 0` sent feedback without end at one instant (a review's test: 1,001 in one instant)]
pub const RTO_FLOOR: Duration = Duration::from_millis(2);

/// Period of a closed flow's liveness timer ([`Sink::close_flow`]). [CODE rcrtransport.c
/// RCRT_CONNECTION_TIMEOUT = 60 s; spec §2.18.4]
pub const CLOSE_TIMER: Duration = Duration::from_secs(60);

/// Expiries in a row, with no new unique DATA between them, after which a closed flow is
/// deleted. [CODE rcrtransport.c RCRT_MAX_ALIVE_TIMEOUT = 5; spec §2.18.2, §2.18.4]
pub const CLOSE_EXPIRIES: u32 = 5;

/// Every constant of the sink (spec §5), with defaults per profile.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkConfig {
    /// Behaviour profile; also selects the rules that are not constants (spec §6).
    pub profile: Profile,
    /// Lower congestion threshold L: increase only while every C_j is below it.
    /// [PAPER §3.4: 1; CODE rcrtmaster.h CONGESTION_L_THRESH: 0.2 (D1)]
    pub lower_threshold: f64,
    /// Upper congestion threshold U: a flow with C_i above it triggers a decrease.
    /// [PAPER §3.4: 4; CODE rcrtmaster.h CONGESTION_H_THRESH: 2.0, compared with ≥ (D1)]
    pub upper_threshold: f64,
    /// Additive increase A of R. Unit: pkt/s. [PAPER §3.5 footnote 1: 0.5;
    /// CODE R_ADDITIVE_INCREMENT: 1.0 (D7)]
    pub additive_increase_pps: f64,
    /// Add 2A per increase while in slow start (until the first decrease, and again whenever
    /// N returns to 0). [AMBIG-9 → paper: off; CODE increase_all_rate: on (D7)]. The join rule
    /// keys on the same "no decrease yet" phase in both profiles ([CODE-FILL], spec §5 "initial
    /// rate at join: same"), whatever this switch says.
    pub slow_start: bool,
    /// Instantaneous congestion-level formula. [D2: paper |ooo|/(r·RTT); CODE
    /// ((|ooo| − 1) + (|missing| − 1))/(r·RTT) + timeouts]. Separate from the profile so that
    /// the one difference that matters most at low r·RTT can be tried alone: with the paper's
    /// form a single held packet exceeds U once r·RTT < 1/U.
    pub level_formula: LevelFormula,
    /// Gain of the C_i EWMA. [AMBIG-7 → 0.5, CODE-FILL]
    pub congestion_gain: f64,
    /// Floor of r_i·RTT_i in the C_i normalisation. [CODE-FILL update_congestion_level: 0.1]
    pub congestion_norm_floor: f64,
    /// Cap on RTT_i in the C_i normalisation. [CODE-FILL: 5 s]
    pub congestion_rtt_cap: Duration,
    /// RTT mean gain α. [AMBIG-4 → 1/8, CODE]
    pub rtt_alpha: f64,
    /// RTT deviation gain β. [AMBIG-4 → 1/4, CODE]
    pub rtt_beta: f64,
    /// k in RTO = RTT + k·RTTVAR (+ extra). [PAPER §3.7: 2; CODE feedback_timeout: 4 (D11)]
    pub rto_rttvar_factor: u64,
    /// Constant added to the RTO. [PAPER: 0; CODE feedback_timeout: 100 ms (D11)]
    pub rto_extra: Duration,
    /// RTT, RTO and adaptation-wait basis before a flow's first RTT sample.
    /// [AMBIG-5 → 5000 ms, CODE RCRT_FEEDBACK_TIMEOUT]
    pub default_rtt: Duration,
    /// RTT samples above this are discarded (a clock wrap in the code). [CODE: 30 s]
    pub max_rtt_sample: Duration,
    /// Freeze RTT updates while any flow has C ≥ L. [D12: paper off; CODE on]
    pub freeze_rtt_when_congested: bool,
    /// ALI weights, most recent first. [PAPER §3.5]
    pub ali_weights: [f64; 8],
    /// Clamp ALI loss intervals (first ≤ 10 or 2, later [2, 20]). [D16: paper off; CODE on]
    pub ali_clamps: bool,
    /// Floor of R per active flow: R ≥ N × this. Unit: pkt/s. [CODE-FILL: 1/30, "one packet
    /// per 30 s per flow" (D9)]
    pub min_rate_per_flow_pps: f64,
    /// A joining flow adds min(d_i, this) to R while R = 0, N = 0 or (no decrease yet and R ≤
    /// [`SinkConfig::join_slow_start_limit_pps`]). Unit: pkt/s. [CODE-FILL RCRT_INIT_RATE 0.5]
    pub join_rate_pps: f64,
    /// Limit on R under which joins still add to R during slow start. Unit: pkt/s.
    /// [CODE-FILL adjust_rates_at_node_join: 25]
    pub join_slow_start_limit_pps: f64,
    /// Demand assumed for a SYN that states none. Unit: pkt/s. [CODE: 20 ms interval = 50]
    pub default_demand_pps: f64,
    /// Quantise allocated rates to integer-millisecond intervals, ⌊1000/r⌋.
    /// [D22: paper exact rates; CODE rate2interval]
    pub quantize_to_ms: bool,
    /// Longest interval a quantised rate may have. [CODE: 65534 ms]
    pub max_interval: Duration,
    /// Feedback (fid, time) records kept per flow. [CODE: 5]
    pub fid_ring_len: usize,
    /// An echoed fid advances "the source has seen feedback fid" only within this many ids.
    /// [CODE: 20]
    pub fid_seen_window: u8,
    /// DATA more than this many sequence numbers beyond the highest seen is dropped as bogus.
    /// [CODE: 100; AMBIG → chosen paper 1000: an honest source stays within its window of the
    /// cumulative ACK, and the bound keeps a corrupt datagram from flooding the missing list]
    pub max_seq_jump: u32,
    /// Measure the jump from the cumulative ACK (the highest in-order sequence number) instead
    /// of the highest seen. [AMBIG → chosen paper true: then |missing| + |out-of-order| stays
    /// below `max_seq_jump` whatever a peer sends (measured from the highest seen, a peer raising
    /// it 1000 at a time grew both lists without bound, and the paper profile never gives up on a
    /// hole; a review's test: 299,700 missing after 300 datagrams); CODE false, from lastRecv]
    pub jump_from_cack: bool,
    /// Give up on holes this far behind the highest sequence number (force delivery, drop the
    /// NACK). [D21: paper never (`None`); CODE 200]
    pub give_up_distance: Option<u32>,
    /// Most NACK ranges per feedback. [CODE-FILL: 10 entries; AMBIG → chosen: ranges, spec
    /// §4.11 item 6]
    pub max_nack_ranges: usize,
    /// Most NACKed sequence numbers per feedback. [AMBIG → paper: no limit beyond the ranges;
    /// CODE send_FEEDBACK: the oldest 10]
    pub max_nack_seqnos: usize,
    /// Cap on the reference code's adaptation wait. [CODE is_all_connection_update_time_ok:
    /// 20 s]
    pub adaptation_wait_cap: Duration,
    /// After a decrease, queue feedback to every flow whose rate changed (each limited by its
    /// RTO). [D15, AMBIG-15: paper yes; CODE only the triggering flow]
    pub decrease_notifies_all: bool,
    /// Probability that the "rate differs" and "ACK requested" triggers send (they are
    /// rate-limited either way). [CODE drand48() > 0.5: 0.5; paper 1]
    pub feedback_probability: f64,
    /// Seed of the generator behind [`SinkConfig::feedback_probability`] (used only when it is
    /// below 1).
    pub rng_seed: u64,
    /// Most concurrent flows; a SYN beyond it gets a SYN-NACK. [AMBIG → chosen 1024; the code's
    /// limit is memory]
    pub max_flows: usize,
    /// Delete a flow after this long without any datagram from it, or ten intervals of the
    /// slowest rate it ever had, if longer. [D28: paper 300 s, the spec's recommendation
    /// (5 × 60 s); CODE none]
    pub idle_timeout: Option<Duration>,
    /// Keep the sequence state of a flow the idle timeout released, and let DATA, a FIN or a
    /// same-nonce SYN from its source bring it back (a re-join with that state) instead of
    /// dropping them as "unknown flow". [AMBIG → chosen: on for the paper profile, the only one
    /// with an idle timeout. The timeout is this re-implementation's addition (D28, spec §2.18.4
    /// "recommended"); the code deletes only flows whose application has gone, whose data no
    /// one wants, and so drops their DATA silently (§2.4 step 2). A sink-initiated expiry of a
    /// source that is alive but cut off for longer than the timeout (a MultiHopLQI black hole)
    /// would then lose its data for ever and stall the source, against PAPER §3.3 (reliable
    /// "as long as the network is not partitioned"). Expiry still releases the flow's r_i, d_i
    /// and its place in N.]
    pub revive_expired: bool,
    /// Weight of a flow with no configured weight. [AMBIG-12 → 1]
    pub default_weight: f64,
    /// Least time between two datagrams [`Sink::poll_transmit`] hands out (a base station
    /// feeding its gateway mote one packet at a time). [AMBIG → chosen 0 = hand out what the
    /// driver asks for; the simulator's driver stops asking while its node's queue is full and
    /// retries every 10 ms, so a burst such as the rate notifications of a decrease to 39 flows
    /// waits here rather than being dropped]
    pub tx_spacing: Duration,
}

impl SinkConfig {
    /// The paper profile (the default).
    pub fn paper() -> SinkConfig {
        SinkConfig {
            profile: Profile::Paper,
            lower_threshold: 1.0,
            upper_threshold: 4.0,
            additive_increase_pps: 0.5,
            slow_start: false,
            level_formula: LevelFormula::Paper,
            congestion_gain: 0.5,
            congestion_norm_floor: 0.1,
            congestion_rtt_cap: Duration::from_secs(5),
            rtt_alpha: 0.125,
            rtt_beta: 0.25,
            rto_rttvar_factor: 2,
            rto_extra: Duration::ZERO,
            default_rtt: Duration::from_millis(5_000),
            max_rtt_sample: Duration::from_secs(30),
            freeze_rtt_when_congested: false,
            ali_weights: ALI_WEIGHTS,
            ali_clamps: false,
            min_rate_per_flow_pps: 1.0 / 30.0,
            join_rate_pps: 0.5,
            join_slow_start_limit_pps: 25.0,
            default_demand_pps: 50.0,
            quantize_to_ms: false,
            max_interval: Duration::from_millis(65_534),
            fid_ring_len: 5,
            fid_seen_window: 20,
            max_seq_jump: 1_000,
            jump_from_cack: true,
            give_up_distance: None,
            max_nack_ranges: 10,
            max_nack_seqnos: usize::MAX,
            adaptation_wait_cap: Duration::from_secs(20),
            decrease_notifies_all: true,
            feedback_probability: 1.0,
            rng_seed: 0x5eed_0001,
            max_flows: 1_024,
            idle_timeout: Some(Duration::from_secs(300)),
            revive_expired: true,
            default_weight: 1.0,
            tx_spacing: Duration::ZERO,
        }
    }

    /// The reference-code profile: every difference of spec §6.
    pub fn reference_code() -> SinkConfig {
        SinkConfig {
            profile: Profile::ReferenceCode,
            lower_threshold: 0.2,
            upper_threshold: 2.0,
            additive_increase_pps: 1.0,
            slow_start: true,
            level_formula: LevelFormula::ReferenceCode,
            rto_rttvar_factor: 4,
            rto_extra: Duration::from_millis(100),
            freeze_rtt_when_congested: true,
            ali_clamps: true,
            quantize_to_ms: true,
            max_seq_jump: 100,
            jump_from_cack: false,
            give_up_distance: Some(200),
            max_nack_seqnos: 10,
            decrease_notifies_all: false,
            feedback_probability: 0.5,
            idle_timeout: None,
            revive_expired: false,
            ..SinkConfig::paper()
        }
    }

    /// The defaults of `profile`.
    pub fn for_profile(profile: Profile) -> SinkConfig {
        match profile {
            Profile::Paper => SinkConfig::paper(),
            Profile::ReferenceCode => SinkConfig::reference_code(),
        }
    }

    /// Checks the values the sink's rules assume, the first offence named by its field:
    /// thresholds with 0 < L ≤ U, U possibly +∞ (increases need every C_j < L; a decrease needs
    /// some C_i above U); A ≥ 0 (0: never increase); gains and probabilities within their
    /// ranges; a positive normalisation floor, rate floor, default demand and default weight; a
    /// join rate > 0 and a join limit ≥ 0 (either may be +∞); ALI weights that are finite, not
    /// negative and give the most recent interval a share; at least 1 for the fid records, NACK
    /// ranges, NACKed numbers, flows, sequence jump, give-up distance and fid window; and a
    /// longest RTT sample above 0. [`Sink::new`] takes any configuration; call this first on one
    /// read from a file or a command line.
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, rule: &'static str| Err(ConfigError { field, rule });
        let positive = |x: f64| x.is_finite() && x > 0.0;
        let unit = |x: f64| x > 0.0 && x <= 1.0;
        if !positive(self.lower_threshold) {
            return bad("lower_threshold", "must be finite and > 0");
        }
        // U = +∞ is allowed: no decrease ever (the reliable baseline's sinks).
        if self.upper_threshold.is_nan() || self.upper_threshold < self.lower_threshold {
            return bad("upper_threshold", "must be ≥ lower_threshold (+∞: never decrease)");
        }
        for (field, x) in [
            ("congestion_norm_floor", self.congestion_norm_floor),
            ("min_rate_per_flow_pps", self.min_rate_per_flow_pps),
            ("default_demand_pps", self.default_demand_pps),
            ("default_weight", self.default_weight),
        ] {
            if !positive(x) {
                return bad(field, "must be finite and > 0");
            }
        }
        // A = 0 never increases; a join rate and limit of +∞ add every joining flow's whole
        // demand (both are the reliable baseline's).
        if !(self.additive_increase_pps.is_finite() && self.additive_increase_pps >= 0.0) {
            return bad("additive_increase_pps", "must be finite and ≥ 0");
        }
        if self.join_rate_pps.is_nan() || self.join_rate_pps <= 0.0 {
            return bad("join_rate_pps", "must be > 0 (+∞: a joining flow's whole demand)");
        }
        if self.join_slow_start_limit_pps.is_nan() || self.join_slow_start_limit_pps < 0.0 {
            return bad("join_slow_start_limit_pps", "must be ≥ 0");
        }
        for (field, x) in
            [("congestion_gain", self.congestion_gain), ("rtt_alpha", self.rtt_alpha), ("rtt_beta", self.rtt_beta)]
        {
            if !unit(x) {
                return bad(field, "must be in (0, 1]");
            }
        }
        if !(0.0..=1.0).contains(&self.feedback_probability) {
            return bad("feedback_probability", "must be in [0, 1]");
        }
        if self.ali_weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return bad("ali_weights", "must be finite and ≥ 0");
        }
        if self.ali_weights[0] <= 0.0 {
            return bad("ali_weights", "the first (most recent interval's) must be > 0");
        }
        for (field, n) in [
            ("fid_ring_len", self.fid_ring_len),
            ("max_nack_ranges", self.max_nack_ranges),
            ("max_nack_seqnos", self.max_nack_seqnos),
            ("max_flows", self.max_flows),
            ("max_seq_jump", self.max_seq_jump as usize),
            ("give_up_distance", self.give_up_distance.map_or(1, |d| d as usize)),
            ("fid_seen_window", usize::from(self.fid_seen_window)),
        ] {
            if n == 0 {
                return bad(field, "must be at least 1");
            }
        }
        if self.max_rtt_sample == Duration::ZERO {
            return bad("max_rtt_sample", "must be > 0 (every RTT sample above it is discarded)");
        }
        Ok(())
    }
}

/// A [`SinkConfig`] value outside what the sink's rules assume ([`SinkConfig::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The field, as named in [`SinkConfig`].
    pub field: &'static str,
    /// What it must be.
    pub rule: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig::paper()
    }
}

/// Something the sink reports to its application or driver.
#[derive(Clone, Debug, PartialEq)]
pub enum SinkEvent {
    /// The next packet of a flow, in order and exactly once. [PAPER §3.3]
    Delivered {
        /// The flow's source.
        source: NodeId,
        /// Sequence number (1 for the first packet of a connection, unwrapped).
        seq: u32,
        /// Application data.
        data: Vec<u8>,
    },
    /// The total rate R changed (increase, decrease, join or leave).
    RateChanged {
        /// New R, pkt/s.
        total_pps: f64,
    },
    /// A flow's assigned rate changed as the wire encodes it (its source learns it with the next
    /// feedback).
    Allocated {
        /// The flow's source.
        source: NodeId,
        /// New r_i, pkt/s, as encoded for the source ([`Rate`]: within 2⁻¹³ of it from 1/16 pkt/s, 2⁻¹⁷ pkt/s below): the value in force
        /// until the next `Allocated` event of this flow.
        rate_pps: f64,
    },
    /// A flow was set up by a SYN.
    FlowOpened {
        /// The flow's source.
        source: NodeId,
        /// Its demand d_i, pkt/s.
        demand_pps: f64,
    },
    /// A flow finished: FIN received and everything delivered; FIN-ACK sent.
    FlowClosed {
        /// The flow's source.
        source: NodeId,
    },
    /// A flow was released after [`SinkConfig::idle_timeout`] of silence (its sequence state
    /// is kept when [`SinkConfig::revive_expired`] is set).
    FlowExpired {
        /// The flow's source.
        source: NodeId,
    },
    /// A flow the application closed ([`Sink::close_flow`]) was deleted: at once if it had
    /// received no DATA, otherwise after 5 feedback-timer expiries in a row with no new packet.
    FlowDeleted {
        /// The flow's source.
        source: NodeId,
    },
    /// A released flow's source was heard again: the flow re-joined with its sequence state
    /// ([`SinkConfig::revive_expired`]).
    FlowRevived {
        /// The flow's source.
        source: NodeId,
    },
    /// A flow was abandoned because its source opened a new incarnation (new SYN nonce).
    FlowAborted {
        /// The flow's source.
        source: NodeId,
    },
    /// A SYN was refused (SYN-NACK) because [`SinkConfig::max_flows`] flows are active.
    FlowRefused {
        /// The refused source.
        source: NodeId,
    },
    /// A flow's congestion level C_i was updated (on every unique packet; in the
    /// reference-code profile also at each feedback-timer expiry with repair pending).
    Level {
        /// The flow's source.
        source: NodeId,
        /// The new C_i.
        level: f64,
    },
    /// A flow's congestion level triggered a decrease of R.
    Congestion {
        /// The triggering flow's source.
        source: NodeId,
        /// Its congestion level C_i at that moment.
        level: f64,
    },
}

/// State of one flow at the sink. [CODE rcrtransport.c]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowState {
    /// Connected, no repair outstanding.
    Active,
    /// Missing packets outstanding; the RTO timer re-sends NACKs.
    NackWait,
    /// FIN received while packets were missing; FIN-ACK once they are repaired.
    FinRetxWait,
}

impl fmt::Display for FlowState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FlowState::Active => "ACTIVE",
            FlowState::NackWait => "NACK_WAIT",
            FlowState::FinRetxWait => "FIN_RETX_WAIT",
        })
    }
}

/// Counters of one flow (kept after the flow ends, summed over incarnations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// DATA packets received (duplicates and retransmissions included).
    pub data_received: u64,
    /// DATA packets seen for the first time.
    pub unique: u64,
    /// DATA packets already received or delivered.
    pub duplicates: u64,
    /// DATA packets flagged as retransmissions.
    pub retransmissions: u64,
    /// Packets recovered end to end (unique retransmissions). [PAPER §4.2.1 Fig. 6]
    pub recovered: u64,
    /// Packets delivered to the application.
    pub delivered: u64,
    /// Sequence numbers detected as lost (missing-list insertions).
    pub losses_detected: u64,
    /// FEEDBACK packets sent.
    pub feedback_sent: u64,
    /// Sequence numbers NACKed (summed over feedbacks).
    pub nacks_sent: u64,
}

/// Counters of the sink.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SinkStats {
    /// Datagrams handed to [`Sink::handle_datagram`].
    pub datagrams: u64,
    /// Datagrams that did not parse (dropped).
    pub malformed: u64,
    /// Parsed datagrams of a sink → source type (dropped).
    pub unexpected: u64,
    /// DATA for no known flow (dropped silently). [CODE rcrtransport_receive]
    pub unknown_flow: u64,
    /// DATA or FIN dropped as bogus: too far ahead (of the cumulative ACK in the paper profile,
    /// of the highest number received in the reference-code one, [`SinkConfig::max_seq_jump`]),
    /// numbered before the connection's start, or (a FIN) behind a number already received.
    pub bogus: u64,
    /// DATA packets received.
    pub data_received: u64,
    /// Duplicate DATA packets.
    pub duplicates: u64,
    /// Unique retransmissions (end-to-end repairs).
    pub recovered: u64,
    /// Packets delivered to the application.
    pub delivered: u64,
    /// FEEDBACK packets sent (SYN-ACKs not included).
    pub feedback_sent: u64,
    /// NACK ranges sent.
    pub nack_ranges_sent: u64,
    /// Sequence numbers NACKed.
    pub nacks_sent: u64,
    /// SYN-ACKs sent.
    pub syn_acks_sent: u64,
    /// SYN-NACKs sent.
    pub syn_nacks_sent: u64,
    /// FIN-ACKs sent.
    pub fin_acks_sent: u64,
    /// Additive increases of R.
    pub increases: u64,
    /// Multiplicative decreases of R.
    pub decreases: u64,
    /// Flows opened.
    pub flows_opened: u64,
    /// Flows completed (FIN-ACK).
    pub flows_closed: u64,
    /// Flows released by the idle timeout.
    pub flows_expired: u64,
    /// Flows deleted after the application closed them ([`Sink::close_flow`]).
    pub flows_deleted: u64,
    /// Flows abandoned because their source opened a new incarnation (a SYN with a new nonce,
    /// AMBIG-21).
    pub flows_replaced: u64,
    /// Expired flows brought back by their source's DATA, FIN or SYN
    /// ([`SinkConfig::revive_expired`]).
    pub flows_revived: u64,
    /// Sequence numbers given up: skipped by in-order delivery and never delivered
    /// (reference-code profile only, [`SinkConfig::give_up_distance`]).
    pub given_up: u64,
    /// Missing sequence numbers whose NACKs were deleted unrepaired for being too far behind
    /// (reference-code profile only). Such a packet may still arrive; if it does not, delivery
    /// later skips it and counts it in [`SinkStats::given_up`] as well.
    pub nacks_abandoned: u64,
    /// How often each feedback trigger fired (several may fire for one packet; a fired
    /// trigger may still be rate-limited away).
    pub feedback_triggers: FeedbackTriggers,
    /// FEEDBACK packets sent, by the trigger that queued them (the first one when several
    /// merged; a deferred feedback counts under the trigger that was held back).
    pub feedback_sent_by: FeedbackTriggers,
    /// FEEDBACK packets sent when a trigger held back by the RTO limit came due (paper
    /// profile, AMBIG-14); also counted in [`SinkStats::feedback_sent_by`].
    pub feedback_sent_deferred: u64,
    /// Of [`SinkStats::feedback_sent_deferred`], those whose trigger no longer held when they
    /// came due: nothing left to repair (new loss, timer, FIN), or the source's latest DATA
    /// already reported the assigned rate (rate differs, decrease). They are still sent
    /// (AMBIG-14 → "with the then-current content"); the count measures what a re-check would
    /// save.
    pub feedback_deferred_stale: u64,
    /// Per-flow counters, by source.
    pub per_flow: BTreeMap<NodeId, FlowStats>,
}

/// Counts of the feedback triggers of spec §2.17.2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedbackTriggers {
    /// New missing packets detected. [PAPER §3.7 trigger 1]
    pub new_loss: u64,
    /// The packet reported a rate other than the assigned one. [PAPER §3.7 trigger 2]
    pub rate_differs: u64,
    /// A duplicate of an already-acknowledged packet. [PAPER §3.7 trigger 3]
    pub duplicate: u64,
    /// The packet carried the ACK-request bit. [PAPER §3.7 trigger 4]
    pub ack_request: u64,
    /// A flow's rate changed in a decrease (sent to every such flow in the paper profile, to
    /// the triggering flow in the code's). [PAPER §3.5; CODE reason 2]
    pub decrease: u64,
    /// A FIN arrived with packets missing. [CODE reason 7]
    pub fin: u64,
    /// The RTO timer expired with repair pending. [CODE reason 8]
    pub timer: u64,
}

impl FeedbackTriggers {
    fn bump(&mut self, why: Why) {
        let counter = match why {
            Why::NewLoss => &mut self.new_loss,
            Why::RateDiffers => &mut self.rate_differs,
            Why::Duplicate => &mut self.duplicate,
            Why::AckRequest => &mut self.ack_request,
            Why::Decrease => &mut self.decrease,
            Why::Fin => &mut self.fin,
            Why::Timer => &mut self.timer,
        };
        *counter += 1;
    }
}

/// Why a feedback was queued (one of the triggers of spec §2.17.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    NewLoss,
    RateDiffers,
    Duplicate,
    AckRequest,
    Decrease,
    Fin,
    Timer,
}

/// A snapshot of one flow, for tests and reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowInfo {
    /// Flow state.
    pub state: FlowState,
    /// Demand d_i, pkt/s.
    pub demand_pps: f64,
    /// Assigned rate r_i, pkt/s.
    pub rate_pps: f64,
    /// Congestion level C_i.
    pub congestion: f64,
    /// ALI delivery ratio p_i.
    pub delivery_ratio: f64,
    /// Smoothed RTT, if sampled.
    pub rtt: Option<Duration>,
    /// Current RTO.
    pub rto: Duration,
    /// Cumulative ACK (last sequence number delivered in order).
    pub cack: u32,
    /// Highest sequence number seen.
    pub last_recv: u32,
    /// Length of the missing list.
    pub missing: usize,
    /// Length of the out-of-order list.
    pub out_of_order: usize,
    /// Cumulative goodput, pkt/s.
    pub goodput_pps: f64,
}

/// Outcome of one rate-control decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Adapt {
    Hold,
    Increased,
    Decreased,
}

/// Why a flow leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leave {
    Completed,
    Expired,
    Replaced,
    Deleted,
}

/// Per-flow state (spec §2.2).
#[derive(Debug)]
struct Flow {
    nonce: u16,
    state: FlowState,
    last_recv: u32,
    next_expected: u32,
    last_sent_cack: u32,
    ooo: BTreeMap<u32, Vec<u8>>,
    missing: BTreeSet<u32>,
    demand: f64,
    assigned: f64,
    assigned_code: Rate,
    congestion: f64,
    timeouts: u32,
    fid: u8,
    fids: FidRing,
    fid_seen: u8,
    last_fb: Option<Instant>,
    rtt: RttEstimator,
    ali: Ali,
    first_at: Option<Instant>,
    unique: u64,
    goodput: f64,
    /// The feedback/RTO timer. [CODE-FILL §2.17.5]
    timer: Option<Instant>,
    /// A feedback held back by the RTO limit. [AMBIG-14 → deferred]
    fb_due: Option<Instant>,
    /// Why the held-back feedback was triggered (the first trigger).
    fb_due_why: Option<Why>,
    /// A feedback for this flow waits in the outbox, queued for this reason.
    queued: Option<Why>,
    /// The queued feedback was a held-back one that came due.
    queued_deferred: bool,
    /// The rate the source's latest DATA reported.
    last_reported: Rate,
    last_heard: Instant,
    /// The slowest rate the source was ever told or reported using (the idle timeout scales
    /// with it: after a speed-up the code's pacing keeps one tick of the old interval, and
    /// feedback may be lost, so a live source can stay silent for several slow intervals).
    slowest_told: Rate,
    /// The rate of the latest feedback or SYN-ACK built for the source.
    last_told: Rate,
    /// Slow-downs (a told rate below the previous one, or the SYN-ACK) built since the source's
    /// last new (not retransmitted) DATA, and when the latest was built. Each one the source receives restarts its
    /// pacing timer and takes a token, with no floor in the reference code (spec §3.4), so a
    /// live slow source under frequent rate cuts can stay silent for many intervals; the idle
    /// timeout allows for that ([`Sink::idle_deadline`]).
    slowdowns_unheard: u32,
    last_slowdown: Option<Instant>,
    fin_last: Option<u16>,
    /// The application asked to close the flow (the code's `deletePending`, spec §2.18.4).
    delete_pending: bool,
}

impl Flow {
    fn cack(&self) -> u32 {
        self.next_expected - 1
    }

    /// A datagram from the source arrived; `reported` is the rate a DATA says it uses (it may
    /// still be an older one when feedback was lost). It shows the source alive, not that its
    /// token deficit is gone: only a unique new DATA does that (`on_data` resets the slow-down
    /// count), as retransmissions, SYNs and FINs are not paced by the token bucket.
    fn heard(&mut self, now: Instant, reported: Option<Rate>) {
        self.last_heard = now;
        if let Some(rate) = reported {
            self.slowest(rate);
        }
    }

    /// Record the rate carried by a feedback or SYN-ACK built at `now`.
    fn told(&mut self, now: Instant) {
        let rate = self.assigned_code;
        if self.last_told.is_zero() || rate < self.last_told {
            self.slowdowns_unheard = self.slowdowns_unheard.saturating_add(1);
            self.last_slowdown = Some(now);
        }
        self.last_told = rate;
        self.slowest(rate);
    }

    fn slowest(&mut self, rate: Rate) {
        if !rate.is_zero() && (self.slowest_told.is_zero() || rate < self.slowest_told) {
            self.slowest_told = rate;
        }
    }
}

/// Most tokens a source can owe after slow-downs: the mote keeps its token in an `int8_t`
/// (−128). [CODE RcrTransportM.nc; spec §3.4]
const MAX_TOKEN_DEFICIT: u32 = 128;

/// The RCRT sink of one application (see the module docs for the call order).
pub struct Sink {
    me: NodeId,
    cfg: SinkConfig,
    policy: Box<dyn Policy>,
    flows: BTreeMap<NodeId, Flow>,
    /// Flows released by the idle timeout, kept for [`SinkConfig::revive_expired`].
    dormant: BTreeMap<NodeId, Flow>,
    weights: BTreeMap<NodeId, f64>,
    /// R, pkt/s.
    total: f64,
    /// D = Σ d_i, pkt/s.
    demand: f64,
    /// No decrease since N last returned to 0 (the code's `slowstart` flag). [CODE]
    slow_start: bool,
    t_inc: Option<Instant>,
    t_dec: Option<Instant>,
    t_adapt: Option<Instant>,
    c_last: f64,
    p_last: f64,
    rng: u64,
    /// Datagrams waiting for [`Sink::poll_transmit`]; feedback is built when handed out.
    outbox: VecDeque<Outgoing>,
    /// When the next datagram may be handed out ([`SinkConfig::tx_spacing`]).
    next_tx: Instant,
    /// The latest time seen (time never goes backwards).
    now: Instant,
    events: VecDeque<SinkEvent>,
    stats: SinkStats,
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink")
            .field("me", &self.me)
            .field("policy", &self.policy.name())
            .field("flows", &self.flows.len())
            .field("total_pps", &self.total)
            .finish()
    }
}

impl Sink {
    /// A sink at node `me` allocating with `policy`.
    pub fn new(me: NodeId, cfg: SinkConfig, policy: Box<dyn Policy>) -> Sink {
        let rng = cfg.rng_seed | 1;
        Sink {
            me,
            slow_start: true,
            cfg,
            policy,
            flows: BTreeMap::new(),
            dormant: BTreeMap::new(),
            weights: BTreeMap::new(),
            total: 0.0,
            demand: 0.0,
            t_inc: None,
            t_dec: None,
            t_adapt: None,
            c_last: 0.0,
            p_last: 1.0,
            rng,
            outbox: VecDeque::new(),
            next_tx: Instant::ZERO,
            now: Instant::ZERO,
            events: VecDeque::new(),
            stats: SinkStats::default(),
        }
    }

    /// A datagram from source `from` arrived (the collection header's origin). Malformed or
    /// unexpected datagrams are counted and dropped; nothing panics.
    pub fn handle_datagram(&mut self, now: Instant, from: NodeId, bytes: &[u8]) {
        let now = self.tick(now);
        self.stats.datagrams += 1;
        let repr = match Repr::parse(bytes) {
            Ok(repr) => repr,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        match repr {
            // [PAPER §3.7] SYN with the demand → set up or refresh the flow.
            Repr::Syn { demand, nonce } => self.on_syn(now, from, demand, nonce),
            // [PAPER §3.3–3.7] data → reliability, estimators, rate control, feedback.
            Repr::Data { seq, rate, fid, since_feedback_2ms, ack_request, retransmission, payload } => self.on_data(
                now,
                from,
                DataIn {
                    seq,
                    rate,
                    fid,
                    since: Duration::from_millis(u64::from(since_feedback_2ms) * u64::from(SINCE_FEEDBACK_UNIT_MS)),
                    ack_request,
                    retransmission,
                },
                payload,
            ),
            // [PAPER §3.8] FIN with the last sequence number → teardown, trailing repair.
            Repr::Fin { last } => self.on_fin(now, from, last),
            // Sink → source types never come to a sink.
            Repr::SynAck { .. } | Repr::SynNack { .. } | Repr::Feedback { .. } | Repr::FinAck { .. } => {
                self.stats.unexpected += 1
            }
        }
    }

    /// Run every timer due at `now`: idle expiry, deferred feedback, and the per-flow RTO
    /// timer that re-sends NACKs (spec §2.17.5, §2.18.2).
    pub fn handle_timeout(&mut self, now: Instant) {
        let now = self.tick(now);
        let sources: Vec<NodeId> = self.flows.keys().copied().collect();
        for source in sources {
            let Some(flow) = self.flows.get(&source) else {
                continue;
            };
            if let Some(idle) = self.idle_deadline(flow) {
                if now >= idle {
                    // [D28 → paper] nothing heard for the idle timeout: the flow leaves.
                    self.leave(now, source, Leave::Expired);
                    continue;
                }
            }
            if flow.fb_due.is_some_and(|due| due <= now) {
                // [AMBIG-14 → paper] a held-back trigger: send with the current content.
                self.send_deferred(now, source);
            }
            let Some(flow) = self.flows.get_mut(&source) else {
                continue;
            };
            if flow.timer.is_some_and(|at| at <= now) {
                flow.timer = None;
                self.on_flow_timer(now, source);
            }
        }
    }

    /// The next datagram to send: (destination source node, RCRT bytes). At most one per
    /// [`SinkConfig::tx_spacing`]; [`Sink::poll_timeout`] says when the next one is ready.
    /// A FEEDBACK or SYN-ACK is built now, with the flow's current rate (and a FEEDBACK's
    /// cumulative ACK and NACKs), and `now` is its send time T of the RTT scheme; triggers that
    /// fire while a flow's feedback waits here are merged into it.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<(NodeId, Vec<u8>)> {
        let now = self.tick(now);
        if now < self.next_tx {
            return None;
        }
        loop {
            let out = match self.outbox.pop_front()? {
                Outgoing::Ready(destination, bytes) => (destination, bytes),
                Outgoing::Feedback(source) => match self.build_feedback(now, source) {
                    Some(bytes) => (source, bytes),
                    None => continue, // the flow is gone
                },
                Outgoing::SynAck(source) => match self.build_syn_ack(now, source) {
                    Some(bytes) => (source, bytes),
                    None => continue, // the flow is gone
                },
            };
            self.next_tx = now + self.cfg.tx_spacing;
            return Some(out);
        }
    }

    /// Whether [`Sink::poll_transmit`] would hand out a datagram at `now` (a driver whose link
    /// has no room asks this before it takes one, so that no FEEDBACK is built only to wait).
    #[must_use]
    pub fn has_output(&self, now: Instant) -> bool {
        !self.outbox.is_empty() && now >= self.next_tx
    }

    /// Earliest time [`Sink::handle_timeout`] has work, or a held-back datagram can be taken
    /// with [`Sink::poll_transmit`].
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let pending = (!self.outbox.is_empty()).then_some(self.next_tx);
        self.flows.values().flat_map(|f| [f.timer, f.fb_due, self.idle_deadline(f)]).chain([pending]).flatten().min()
    }

    /// The next event for the application or driver.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SinkEvent> {
        self.events.pop_front()
    }

    /// The application closes the flow from `source` (the code's `rcrtransport_delete_tid`,
    /// for one flow; spec §2.18.4). A flow that has received no DATA is deleted at once; any
    /// other is marked, its timer armed for 60 s unless it is running, and it is deleted when
    /// its timer has expired [`CLOSE_EXPIRIES`] times with no new unique DATA between them,
    /// expiries of a failing repair before the close included (the code's counter); after the
    /// close each expiry re-arms the timer for 60 s (a live source keeps the flow; its packets
    /// are still delivered). A marked flow sends no more feedback
    /// at its timer expiries, so its repair stops; it still answers DATA and a FIN as before.
    /// A flow released by the idle timeout and kept for revival is forgotten. Returns whether
    /// the source had a flow. Both profiles: the paper has no such rule, and the code's is
    /// the one a daemon needs to end an application.
    pub fn close_flow(&mut self, now: Instant, source: NodeId) -> bool {
        let now = self.tick(now);
        let dormant = self.dormant.remove(&source).is_some();
        let Some(flow) = self.flows.get_mut(&source) else {
            return dormant;
        };
        if flow.first_at.is_none() {
            self.leave(now, source, Leave::Deleted);
        } else if !flow.delete_pending {
            flow.delete_pending = true;
            if flow.timer.is_none() {
                flow.timer = Some(now + CLOSE_TIMER);
            }
        }
        true
    }

    /// [`Sink::close_flow`] for every flow: the application ends (the code's
    /// `rcrtransport_delete_tid`). New SYNs are still answered.
    pub fn close_all(&mut self, now: Instant) {
        let sources: Vec<NodeId> = self.flows.keys().chain(self.dormant.keys()).copied().collect();
        for source in sources {
            self.close_flow(now, source);
        }
    }

    /// Replace the allocation policy at run time and re-allocate at once; sources learn their
    /// new rates through the usual feedback. [PAPER §3.6: no change at the sources]
    pub fn set_policy(&mut self, policy: Box<dyn Policy>) {
        self.policy = policy;
        if self.flows.is_empty() {
            return;
        }
        if self.policy.caps_at_demand() && self.demand > 0.0 {
            self.set_total(self.total.min(self.demand));
        }
        self.reallocate();
    }

    /// Configure the weight w_i of `source` for the weighted policy (default
    /// [`SinkConfig::default_weight`]); re-allocates when the flow exists. A weight must be
    /// finite and ≥ 0; any other is ignored (the source keeps its weight) and `false` returned.
    pub fn set_weight(&mut self, source: NodeId, weight: f64) -> bool {
        if !(weight.is_finite() && weight >= 0.0) {
            return false;
        }
        self.weights.insert(source, weight);
        if self.flows.contains_key(&source) {
            self.reallocate();
        }
        true
    }

    /// Total allocated rate R, pkt/s.
    pub fn total_rate(&self) -> f64 {
        self.total
    }

    /// Sum of the active flows' demands D, pkt/s.
    pub fn total_demand(&self) -> f64 {
        self.demand
    }

    /// Rate assigned to the flow from `source`, pkt/s (the source uses its [`Rate`] encoding).
    pub fn flow_rate(&self, source: NodeId) -> Option<f64> {
        self.flows.get(&source).map(|f| f.assigned)
    }

    /// A snapshot of the flow from `source`.
    pub fn flow_info(&self, source: NodeId) -> Option<FlowInfo> {
        let flow = self.flows.get(&source)?;
        Some(FlowInfo {
            state: flow.state,
            demand_pps: flow.demand,
            rate_pps: flow.assigned,
            congestion: flow.congestion,
            delivery_ratio: flow.ali.delivery_ratio(),
            rtt: flow.rtt.srtt(),
            rto: self.rto(flow),
            cack: flow.cack(),
            last_recv: flow.last_recv,
            missing: flow.missing.len(),
            out_of_order: flow.ooo.len(),
            goodput_pps: flow.goodput,
        })
    }

    /// Number of active flows N.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// Sources of the active flows, ascending.
    pub fn flows(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.flows.keys().copied()
    }

    /// Counters.
    pub fn stats(&self) -> &SinkStats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &SinkConfig {
        &self.cfg
    }

    /// Name of the current policy.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// This sink's node.
    pub fn node(&self) -> NodeId {
        self.me
    }

    // ---------------------------------------------------------------- connection management

    /// SYN (spec §2.18.1).
    fn on_syn(&mut self, now: Instant, from: NodeId, demand: Rate, nonce: u16) {
        if let Some(old) = self.dormant.remove(&from) {
            if old.nonce == nonce && self.flows.len() < self.cfg.max_flows {
                // [revive_expired] the same incarnation, released while cut off: re-join with
                // its state and answer the SYN as a duplicate.
                self.revive(now, from, old);
                self.send_syn_ack(from);
                return;
            }
            // A new incarnation (or no room): the released state is obsolete.
        }
        match self.flows.get_mut(&from) {
            Some(flow) if flow.nonce == nonce => {
                // [CODE] duplicate SYN: a fresh SYN-ACK (new fid), nothing else changes.
                flow.heard(now, None);
                self.send_syn_ack(from);
                return;
            }
            Some(_) => {
                // [AMBIG-21 → chosen] a new incarnation: the old flow leaves, a new one joins.
                self.leave(now, from, Leave::Replaced);
            }
            None => {}
        }
        if self.flows.len() >= self.cfg.max_flows {
            // [CODE] no room: SYN-NACK.
            self.stats.syn_nacks_sent += 1;
            self.events.push_back(SinkEvent::FlowRefused { source: from });
            self.push(from, &Repr::SynNack { nonce });
            return;
        }
        let demand_pps = if demand.is_zero() { self.cfg.default_demand_pps } else { demand.pps() };
        self.join(now, from, demand_pps, nonce);
        self.send_syn_ack(from);
    }

    /// A flow joins (spec §2.16) [CODE-FILL adjust_rates_at_node_join].
    fn join(&mut self, now: Instant, source: NodeId, demand_pps: f64, nonce: u16) {
        self.join_with(now, source, demand_pps, nonce, None);
    }

    /// A flow released by the idle timeout is heard again: it joins as a new flow would
    /// (spec §2.16) but keeps its sequence state, estimators and fid ring.
    /// [`SinkConfig::revive_expired`]
    fn revive(&mut self, now: Instant, source: NodeId, old: Flow) {
        self.stats.flows_revived += 1;
        self.events.push_back(SinkEvent::FlowRevived { source });
        let (demand, nonce) = (old.demand, old.nonce);
        self.join_with(now, source, demand, nonce, Some(old));
    }

    fn join_with(&mut self, now: Instant, source: NodeId, demand_pps: f64, nonce: u16, old: Option<Flow>) {
        let revived = old.is_some();
        if self.cfg.profile == Profile::ReferenceCode && self.t_dec.is_none() {
            // [CODE rcrtransport.c create_rcrt_connection, gettime_ms] the sink's clock starts
            // at its first connection and the last decrease time is 0 on that clock, so no
            // decrease may come before one adaptation wait has passed since the first join.
            self.t_dec = Some(now);
        }
        let n = self.flows.len();
        let initial = demand_pps.min(self.cfg.join_rate_pps);
        let old_total = self.total;
        if self.total <= 0.0 || n == 0 || (self.slow_start && self.total <= self.cfg.join_slow_start_limit_pps) {
            self.total += initial;
        }
        self.demand += demand_pps;
        let flow = Flow {
            nonce,
            state: FlowState::Active,
            last_recv: 0,
            next_expected: 1,
            last_sent_cack: 0,
            ooo: BTreeMap::new(),
            missing: BTreeSet::new(),
            demand: demand_pps,
            assigned: initial,
            assigned_code: Rate::ZERO,
            congestion: 0.0,
            timeouts: 0,
            fid: 0,
            fids: FidRing::new(self.cfg.fid_ring_len),
            fid_seen: 0,
            last_fb: None,
            rtt: RttEstimator::new(
                self.cfg.rtt_alpha,
                self.cfg.rtt_beta,
                match self.cfg.profile {
                    Profile::Paper => RttOrder::Rfc6298,
                    Profile::ReferenceCode => RttOrder::MeanFirst,
                },
            ),
            ali: Ali::new(self.cfg.ali_weights, self.cfg.ali_clamps),
            first_at: None,
            unique: 0,
            goodput: 0.0,
            timer: None,
            fb_due: None,
            fb_due_why: None,
            queued: None,
            queued_deferred: false,
            last_reported: Rate::ZERO,
            last_heard: now,
            slowest_told: Rate::ZERO,
            last_told: Rate::ZERO,
            slowdowns_unheard: 0,
            last_slowdown: None,
            fin_last: None,
            delete_pending: false,
        };
        let flow = match old {
            Some(old) => {
                let mut flow = Flow {
                    assigned: flow.assigned,
                    assigned_code: flow.assigned_code,
                    congestion: 0.0,
                    timeouts: 0,
                    timer: None,
                    fb_due: None,
                    fb_due_why: None,
                    queued: None,
                    queued_deferred: false,
                    last_heard: now,
                    // The slow-down count stays: only a new DATA shows the deficit is gone (the
                    // revival may come from a retransmission, a FIN or a SYN).
                    ..old
                };
                // [CODE-FILL §2.17.5] the NACK re-send timer runs while repair is pending: the
                // expiry stopped it, so a revival with holes left starts it again (otherwise
                // they wait for another trigger; the NACKs sent into the black hole were lost).
                if !flow.missing.is_empty() {
                    flow.timer = Some(now + self.rto(&flow));
                }
                flow
            }
            None => flow,
        };
        self.flows.insert(source, flow);
        // [D9; AMBIG → chosen: the floor R ≥ N/30 is kept as an invariant, so a join under a
        // floored R raises R too]
        self.total = self.total.max(self.flows.len() as f64 * self.cfg.min_rate_per_flow_pps);
        if !revived {
            self.stats.flows_opened += 1;
            self.stats.per_flow.entry(source).or_default();
            self.events.push_back(SinkEvent::FlowOpened { source, demand_pps });
        }
        self.reallocate();
        // [D10] a join restarts the increase clock (and, in the paper profile, the wait).
        self.t_inc = Some(now);
        self.t_adapt = Some(now);
        if self.total != old_total {
            self.events.push_back(SinkEvent::RateChanged { total_pps: self.total });
        }
    }

    /// A flow leaves (spec §2.16): R −= r_i, D −= d_i, no re-allocation [AMBIG-13 → code].
    fn leave(&mut self, now: Instant, source: NodeId, why: Leave) {
        let Some(flow) = self.flows.remove(&source) else {
            return;
        };
        // A flow the application closed is not kept for revival when it also falls silent.
        let why = if flow.delete_pending && why == Leave::Expired { Leave::Deleted } else { why };
        // Datagrams still to be built for this flow go with it: a new incarnation of the source
        // must not get its predecessor's FEEDBACK (built from the new flow's state, ahead of its
        // SYN-ACK; a review). Datagrams already built (a FIN-ACK) stay.
        self.outbox.retain(|o| !matches!(o, Outgoing::Feedback(s) | Outgoing::SynAck(s) if *s == source));
        let old_total = self.total;
        self.total -= flow.assigned;
        // [AMBIG-26] the code's policy id 2 (demand-limited) never reduces D.
        let keep_demand = self.cfg.profile == Profile::ReferenceCode && self.policy.name() == "demand-limited";
        if !keep_demand {
            self.demand -= flow.demand;
            // No R ≤ D cap under a policy without one (weighted, AMBIG-12).
            if self.policy.caps_at_demand() {
                self.total = self.total.min(self.demand);
            }
        }
        if self.flows.is_empty() {
            // [CODE] clear rounding residue; slow start again.
            self.slow_start = true;
            self.total = 0.0;
            self.demand = 0.0;
        }
        // [D9; AMBIG → chosen] keep R ≥ N/30 after a leave too.
        self.total = self.total.max(self.flows.len() as f64 * self.cfg.min_rate_per_flow_pps);
        self.demand = self.demand.max(0.0);
        // [D10] a leave restarts the decrease clock (and, in the paper profile, the wait).
        self.t_dec = Some(now);
        self.t_adapt = Some(now);
        match why {
            Leave::Completed => {
                self.stats.flows_closed += 1;
                self.events.push_back(SinkEvent::FlowClosed { source });
            }
            Leave::Expired => {
                self.stats.flows_expired += 1;
                self.events.push_back(SinkEvent::FlowExpired { source });
                if self.cfg.revive_expired {
                    self.keep_dormant(source, flow);
                }
            }
            Leave::Replaced => {
                self.stats.flows_replaced += 1;
                self.events.push_back(SinkEvent::FlowAborted { source });
            }
            Leave::Deleted => {
                self.stats.flows_deleted += 1;
                self.events.push_back(SinkEvent::FlowDeleted { source });
            }
        }
        if self.total != old_total {
            self.events.push_back(SinkEvent::RateChanged { total_pps: self.total });
        }
    }

    /// Keep a released flow's state for [`SinkConfig::revive_expired`]; at most
    /// [`SinkConfig::max_flows`] are kept, the longest silent one is forgotten first.
    fn keep_dormant(&mut self, source: NodeId, mut flow: Flow) {
        flow.timer = None;
        flow.fb_due = None;
        flow.fb_due_why = None;
        flow.queued = None;
        flow.queued_deferred = false;
        self.dormant.insert(source, flow);
        while self.dormant.len() > self.cfg.max_flows {
            let oldest = self.dormant.iter().min_by_key(|(_, f)| f.last_heard).map(|(s, _)| *s);
            match oldest {
                Some(s) => {
                    self.dormant.remove(&s);
                }
                None => break,
            }
        }
    }

    /// A released flow's source was heard (DATA or FIN): bring the flow back if there is room.
    fn revive_if_dormant(&mut self, now: Instant, from: NodeId) {
        if self.flows.contains_key(&from) || self.flows.len() >= self.cfg.max_flows {
            return;
        }
        if let Some(old) = self.dormant.remove(&from) {
            self.revive(now, from, old);
        }
    }

    /// FIN (spec §2.18.3): synchronise the last sequence number and repair trailing losses.
    fn on_fin(&mut self, now: Instant, from: NodeId, last: u16) {
        // A FIN the check refuses is not heard from the connection (as for DATA): it neither
        // revives a released flow nor postpones a live one's idle timeout.
        if let Some(flow) = self.flows.get(&from).or_else(|| self.dormant.get(&from)) {
            if fin_seq(&self.cfg, flow, last).is_none() {
                self.stats.bogus += 1;
                return;
            }
        }
        self.revive_if_dormant(now, from);
        let Some(flow) = self.flows.get_mut(&from) else {
            // [CODE] unknown flow (already closed, FIN-ACK lost): idempotent FIN-ACK.
            self.send_fin_ack(from, last);
            return;
        };
        flow.heard(now, None);
        let Some(last32) = fin_seq(&self.cfg, flow, last) else {
            debug_assert!(false, "checked on entry");
            return;
        };
        flow.fin_last = Some(last);
        if last32 > flow.last_recv {
            // [PAPER §3.8] trailing losses become visible now; ALI is not updated.
            let fstats = self.stats.per_flow.entry(from).or_default();
            for seq in flow.last_recv + 1..=last32 {
                flow.missing.insert(seq);
                fstats.losses_detected += 1;
            }
            flow.last_recv = last32;
        }
        match (flow.state, flow.missing.is_empty()) {
            // [CODE] nothing missing: FIN-ACK and the flow leaves.
            (_, true) => {
                self.send_fin_ack(from, last);
                self.leave(now, from, Leave::Completed);
            }
            // [CODE] repairs pending: FIN_RETX_WAIT, NACK them, arm the timer.
            (state, false) => {
                self.stats.feedback_triggers.fin += 1;
                if state != FlowState::FinRetxWait {
                    flow.state = FlowState::FinRetxWait;
                    flow.timeouts = 0;
                }
                let rto = self.rto(&self.flows[&from]);
                match self.cfg.profile {
                    Profile::Paper => self.send_or_defer(now, from, Why::Fin),
                    Profile::ReferenceCode => self.send_feedback(now, from, Why::Fin),
                }
                if let Some(flow) = self.flows.get_mut(&from) {
                    flow.timer = Some(now + rto);
                }
            }
        }
    }

    // ----------------------------------------------------------------------------- data path

    /// DATA (spec §2.4, in the code's order; paper deltas per §2.20).
    fn on_data(&mut self, now: Instant, from: NodeId, d: DataIn, payload: &[u8]) {
        // A number the checks below refuse is not heard from this connection: it neither
        // revives a released flow nor keeps a live one from the idle timeout (D28).
        if let Some(flow) = self.flows.get(&from).or_else(|| self.dormant.get(&from)) {
            if data_seq(&self.cfg, flow, d.seq).is_none() {
                self.stats.data_received += 1;
                self.stats.bogus += 1;
                let fstats = self.stats.per_flow.entry(from).or_default();
                fstats.data_received += 1;
                if d.retransmission {
                    fstats.retransmissions += 1;
                }
                return;
            }
        }
        self.revive_if_dormant(now, from);
        let any_congested = self.flows.values().any(|f| f.congestion >= self.cfg.lower_threshold);
        let Some(flow) = self.flows.get_mut(&from) else {
            // [CODE] data on an unknown flow gets no reply.
            self.stats.unknown_flow += 1;
            return;
        };
        flow.heard(now, Some(d.rate));
        flow.last_reported = d.rate;
        self.stats.data_received += 1;
        let fstats = self.stats.per_flow.entry(from).or_default();
        fstats.data_received += 1;
        if d.retransmission {
            fstats.retransmissions += 1;
        }
        // Step 3 (refused numbers returned above, before the flow was heard).
        let Some(seq) = data_seq(&self.cfg, flow, d.seq) else {
            debug_assert!(false, "checked on entry");
            return;
        };
        // Step 4: uniqueness.
        let unique = seq >= flow.next_expected && !flow.ooo.contains_key(&seq);
        // Step 5: repair bookkeeping. [AMBIG → chosen: any arrival removes its seqno, which
        // also covers an original that arrives after a FIN already declared it missing]
        flow.missing.remove(&seq);
        // Step 6: a new highest sequence number reveals gaps and feeds ALI.
        let mut new_loss = 0;
        if seq > flow.last_recv {
            for lost in flow.last_recv + 1..seq {
                flow.missing.insert(lost);
                new_loss += 1;
            }
            fstats.losses_detected += new_loss;
            flow.ali.on_advance(seq, flow.last_recv);
            flow.last_recv = seq;
        }
        let mut adapt = Adapt::Hold;
        if unique && !d.retransmission {
            // A new packet the bucket paced: the source had a token when it sent it.
            flow.slowdowns_unheard = 0;
        }
        if unique {
            fstats.unique += 1;
            // 7a: liveness.
            flow.timeouts = 0;
            // 7b: RTT sample from (fid, T″ − T′). [PAPER §3.7]
            let freeze = self.cfg.freeze_rtt_when_congested && any_congested;
            rtt_sample(&self.cfg, flow, now, d.fid, d.since, freeze);
            // 7c: in-order delivery. [PAPER §3.3]
            let delivered = deliver_in_order(flow, seq, payload, self.cfg.give_up_distance, from, &mut self.events);
            fstats.delivered += delivered.delivered;
            self.stats.delivered += delivered.delivered;
            self.stats.given_up += delivered.given_up;
            // 7d: goodput; end-to-end repairs.
            flow.unique += 1;
            let first = *flow.first_at.get_or_insert(now);
            let elapsed = (now - first).as_secs_f64();
            if flow.unique > 5 && elapsed > 0.0 {
                flow.goodput = (flow.unique - 1) as f64 / elapsed;
            }
            if d.retransmission {
                fstats.recovered += 1;
                self.stats.recovered += 1;
            }
            // 7e: congestion level. [PAPER §3.4; AMBIG-1 → unique packets only]
            update_congestion(&self.cfg, flow);
            self.events.push_back(SinkEvent::Level { source: from, level: flow.congestion });
            // 7f: only original packets drive rate control. [CODE; AMBIG-24]
            if !d.retransmission {
                adapt = self.rate_control(now, from, d.rate);
            }
        } else {
            fstats.duplicates += 1;
            self.stats.duplicates += 1;
        }

        // Step 8: feedback decision (spec §2.17.2).
        let Some(flow) = self.flows.get(&from) else {
            return;
        };
        let duplicate_acked = seq <= flow.last_sent_cack;
        let rate_differs = d.rate != flow.assigned_code;
        let triggers = &mut self.stats.feedback_triggers;
        triggers.new_loss += u64::from(new_loss > 0);
        triggers.rate_differs += u64::from(rate_differs);
        triggers.duplicate += u64::from(duplicate_acked);
        triggers.ack_request += u64::from(d.ack_request);
        let feedback = match self.cfg.profile {
            // [PAPER §3.7] the four triggers (all rate-limited, deferred).
            Profile::Paper => {
                if new_loss > 0 {
                    Some(Why::NewLoss)
                } else if rate_differs {
                    Some(Why::RateDiffers)
                } else if duplicate_acked {
                    Some(Why::Duplicate)
                } else if d.ack_request {
                    Some(Why::AckRequest)
                } else {
                    None
                }
            }
            // [CODE rcrtransport_receive] reasons 1–5 in order; 1 and 2 bypass the limit.
            Profile::ReferenceCode => {
                if new_loss > 0 {
                    Some(Why::NewLoss)
                } else if adapt == Adapt::Decreased {
                    Some(Why::Decrease)
                } else if !self.feedback_time_ok_code(flow, now) {
                    None
                } else if duplicate_acked {
                    Some(Why::Duplicate)
                } else if rate_differs && self.coin() {
                    Some(Why::RateDiffers)
                } else if d.ack_request && self.coin() {
                    Some(Why::AckRequest)
                } else {
                    None
                }
            }
        };

        // Step 9: state machine.
        let Some(flow) = self.flows.get_mut(&from) else {
            return;
        };
        match (flow.state, flow.missing.is_empty()) {
            // [CODE] the last repair after a FIN: FIN-ACK, leave, no feedback.
            (FlowState::FinRetxWait, true) => {
                let last = flow.fin_last.unwrap_or((flow.last_recv as u16).wrapping_add(seq_offset(flow.nonce)));
                self.send_fin_ack(from, last);
                self.leave(now, from, Leave::Completed);
                return;
            }
            // [CODE] every loss repaired: back to ACTIVE.
            (FlowState::NackWait, true) => flow.state = FlowState::Active,
            // [CODE] a loss is outstanding: NACK_WAIT.
            (FlowState::Active, false) => flow.state = FlowState::NackWait,
            (FlowState::Active, true) | (FlowState::NackWait, false) | (FlowState::FinRetxWait, false) => {}
        }
        // Step 10: send (or defer) the feedback; sending arms the RTO timer.
        if let Some(why) = feedback {
            match self.cfg.profile {
                Profile::Paper => self.send_or_defer(now, from, why),
                Profile::ReferenceCode => self.send_feedback(now, from, why),
            }
        }
    }

    /// Expiry of a flow's RTO timer (spec §2.18.2).
    fn on_flow_timer(&mut self, now: Instant, source: NodeId) {
        let Some(flow) = self.flows.get_mut(&source) else {
            return;
        };
        if flow.delete_pending {
            // [CODE RCRT_Timer_fired, spec §2.18.2 step 2 and the ACTIVE case] a closed flow
            // counts the expiry and is deleted at the fifth in a row (or at once if it never
            // received DATA); otherwise the timer re-arms for 60 s. No feedback: its repair stops.
            flow.timeouts += 1;
            if flow.timeouts >= CLOSE_EXPIRIES || flow.first_at.is_none() {
                self.leave(now, source, Leave::Deleted);
            } else {
                flow.timer = Some(now + CLOSE_TIMER);
            }
            return;
        }
        match flow.state {
            // [CODE] ACTIVE: nothing to repair, the timer stays off.
            FlowState::Active => return,
            // [CODE-FILL] repair pending: count the timeout and re-send the NACKs.
            FlowState::NackWait | FlowState::FinRetxWait => flow.timeouts += 1,
        }
        self.stats.feedback_triggers.timer += 1;
        match self.cfg.profile {
            // [PAPER] no timeout-driven congestion signal (D3, D5); the re-send is limited.
            Profile::Paper => self.send_or_defer(now, source, Why::Timer),
            // [CODE RCRT_Timer_fired] C += timeouts; after ≥ 2, a decrease without the
            // rate-match check; then feedback reason 8, not limited.
            Profile::ReferenceCode => {
                update_congestion(&self.cfg, flow);
                self.events.push_back(SinkEvent::Level { source, level: flow.congestion });
                let timeouts = flow.timeouts;
                if timeouts >= 2 && self.decrease_time_ok_code(now) && self.should_decrease_code(source) {
                    if self.decrease(now, source) {
                        self.c_last = self.flows.get(&source).map_or(0.0, |f| f.congestion);
                    }
                    if let Some(flow) = self.flows.get_mut(&source) {
                        flow.timeouts = 0;
                    }
                }
                self.send_feedback(now, source, Why::Timer);
            }
        }
        if let Some(flow) = self.flows.get(&source) {
            let rto = self.rto(flow);
            if let Some(flow) = self.flows.get_mut(&source) {
                flow.timer = Some(now + rto);
            }
        }
    }

    // ------------------------------------------------------------------- rate adaptation

    /// Rate control for an original unique packet reporting rate `used` (spec §2.12–§2.14).
    fn rate_control(&mut self, now: Instant, source: NodeId, used: Rate) -> Adapt {
        let Some(flow) = self.flows.get(&source) else {
            return Adapt::Hold;
        };
        // [PAPER §3.5; CODE do_rate_control] only a flow using its latest rate may trigger.
        if used != flow.assigned_code {
            return Adapt::Hold;
        }
        let congestion = flow.congestion;
        match self.cfg.profile {
            Profile::Paper => {
                // [PAPER §3.5] wait 2 × max RTT after any adaptation (AMBIG-10).
                if let Some(at) = self.t_adapt {
                    if now < at + self.paper_wait() {
                        return Adapt::Hold;
                    }
                }
                if congestion > self.cfg.upper_threshold {
                    // [PAPER §3.4–3.5] C_i > U: congested → decrease.
                    if self.decrease(now, source) {
                        return Adapt::Decreased;
                    }
                    return Adapt::Hold;
                }
                if self.flows.values().all(|f| f.congestion < self.cfg.lower_threshold) {
                    // [PAPER §3.4–3.5] every C_j < L: uncongested → increase.
                    if self.increase(now) {
                        return Adapt::Increased;
                    }
                }
                Adapt::Hold
            }
            Profile::ReferenceCode => {
                if self.decrease_time_ok_code(now) && self.should_decrease_code(source) {
                    // [CODE] a decrease attempt; a skipped cut does not fall through.
                    if self.decrease(now, source) {
                        self.c_last = congestion;
                        self.stats.feedback_triggers.decrease += 1;
                        return Adapt::Decreased;
                    }
                    return Adapt::Hold;
                }
                let calm = self.flows.values().all(|f| f.congestion < self.cfg.lower_threshold && f.missing.len() <= 1);
                if self.increase_time_ok_code(now) && calm && self.increase(now) {
                    return Adapt::Increased;
                }
                Adapt::Hold
            }
        }
    }

    /// R ← max(M·R, N·floor) and re-allocate; false when R did not fall (spec §2.12.2–3).
    fn decrease(&mut self, now: Instant, trigger: NodeId) -> bool {
        let Some(flow) = self.flows.get(&trigger) else {
            return false;
        };
        let p = flow.ali.delivery_ratio();
        let level = flow.congestion;
        let factor = match self.cfg.profile {
            Profile::Paper => decrease_factor(p),
            Profile::ReferenceCode => {
                let (factor, p_last) = decrease_factor_code(p, self.p_last);
                self.p_last = p_last;
                factor
            }
        };
        let floor = self.flows.len() as f64 * self.cfg.min_rate_per_flow_pps;
        let new_total = (factor * self.total).max(floor);
        if new_total.is_nan() || new_total >= self.total {
            return false;
        }
        self.set_total(new_total);
        let changed = self.reallocate();
        self.slow_start = false;
        self.t_dec = Some(now);
        self.t_adapt = Some(now);
        self.stats.decreases += 1;
        self.events.push_back(SinkEvent::Congestion { source: trigger, level });
        if self.cfg.decrease_notifies_all {
            // [PAPER §3.5, AMBIG-15] send each flow its new rate (each RTO-limited).
            self.stats.feedback_triggers.decrease += changed.len() as u64;
            for source in changed {
                self.send_or_defer(now, source, Why::Decrease);
            }
        }
        true
    }

    /// R ← min(R + A, D) (2A in slow start) and re-allocate; false when R did not grow.
    fn increase(&mut self, now: Instant) -> bool {
        let step = if self.slow_start && self.cfg.slow_start {
            2.0 * self.cfg.additive_increase_pps
        } else {
            self.cfg.additive_increase_pps
        };
        let mut new_total = self.total + step;
        if self.policy.caps_at_demand() && self.demand > 0.0 {
            // [CODE-FILL] R ≤ D.
            new_total = new_total.min(self.demand);
        }
        if new_total.is_nan() || new_total <= self.total {
            return false;
        }
        self.set_total(new_total);
        self.reallocate();
        self.p_last = 1.0;
        self.c_last = 0.0;
        self.t_inc = Some(now);
        self.t_adapt = Some(now);
        self.stats.increases += 1;
        true
    }

    fn set_total(&mut self, total: f64) {
        if total != self.total {
            self.total = total;
            self.events.push_back(SinkEvent::RateChanged { total_pps: total });
        }
    }

    /// Ask the policy for every r_i; returns the sources whose (encoded) rate changed.
    fn reallocate(&mut self) -> Vec<NodeId> {
        let demands: Vec<FlowDemand> = self
            .flows
            .iter()
            .map(|(source, f)| FlowDemand {
                source: *source,
                demand_pps: f.demand,
                weight: self.weights.get(source).copied().unwrap_or(self.cfg.default_weight),
                goodput_pps: f.goodput,
                current_pps: f.assigned,
            })
            .collect();
        let mut rates = self.policy.allocate(self.total, &demands);
        if rates.len() != demands.len() {
            // A policy bug must not take the sink down: fall back to fair.
            rates = Fair.allocate(self.total, &demands);
        }
        let mut changed = Vec::new();
        for ((source, flow), rate) in self.flows.iter_mut().zip(rates) {
            let mut rate = if rate.is_finite() && rate > 0.0 { rate } else { self.cfg.min_rate_per_flow_pps };
            if self.cfg.quantize_to_ms {
                // [CODE rate2interval] interval = ⌊1000/r⌋ ms, capped.
                let max_ms = (self.cfg.max_interval.as_nanos() / 1_000_000).max(1);
                let interval_ms = ((1_000.0 / rate) as u64).clamp(1, max_ms);
                rate = 1_000.0 / interval_ms as f64;
            }
            let code = Rate::from_pps(rate);
            flow.assigned = rate;
            if code != flow.assigned_code {
                flow.assigned_code = code;
                changed.push(*source);
                // The rate as the source is told it: it holds until the code changes again,
                // whatever reallocations in between leave the code as it is.
                self.events.push_back(SinkEvent::Allocated { source: *source, rate_pps: code.pps() });
            }
        }
        changed
    }

    /// [PAPER §3.5] W = 2 × max_j RTT_j (default RTT before a sample).
    fn paper_wait(&self) -> Duration {
        let max_rtt =
            self.flows.values().map(|f| f.rtt.rtt_or(self.cfg.default_rtt)).max().unwrap_or(self.cfg.default_rtt);
        max_rtt.saturating_mul(2)
    }

    /// [CODE is_all_connection_update_time_ok] W = min(max_j (2·RTO_j + 3/r_j
    /// [+ 3·RTO_j + 2/r_j with losses pending]), 20 s).
    fn code_wait(&self) -> Duration {
        let wait = self
            .flows
            .values()
            .map(|f| {
                let rto = self.rto(f);
                let interval = Duration::from_secs_f64(1.0 / f.assigned.max(1e-6));
                let base = rto.saturating_mul(2) + interval.saturating_mul(3);
                if f.missing.is_empty() {
                    base
                } else {
                    base + rto.saturating_mul(3) + interval.saturating_mul(2)
                }
            })
            .max()
            .unwrap_or(Duration::ZERO);
        wait.min(self.cfg.adaptation_wait_cap)
    }

    fn decrease_time_ok_code(&self, now: Instant) -> bool {
        self.t_dec.is_none_or(|at| now >= at + self.code_wait())
    }

    fn increase_time_ok_code(&self, now: Instant) -> bool {
        let last = match (self.t_inc, self.t_dec) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        last.is_none_or(|at| now >= at + self.code_wait())
    }

    /// [CODE] "should decrease": losses pending, C_i ≥ U and worse than at the last decrease.
    fn should_decrease_code(&self, source: NodeId) -> bool {
        self.flows.get(&source).is_some_and(|f| {
            !f.missing.is_empty() && f.congestion >= self.cfg.upper_threshold && f.congestion > self.c_last
        })
    }

    // ------------------------------------------------------------------------------ feedback

    /// When the flow expires for silence. Let `iv` be one interval of the slowest rate the
    /// flow ever had (told in a feedback or reported in its DATA):
    ///
    /// - [`SinkConfig::idle_timeout`] after the source was last heard, or 10·iv if longer (a
    ///   slow flow is not idle);
    /// - later still while slow-downs explain the silence: k of them built since the source's
    ///   last new DATA, the latest at t, can keep a live source silent until about t + (k + 1)·iv
    ///   (each restarts its pacing timer and takes a token, spec §3.4), so the flow is kept
    ///   until t + (k + 11)·iv, with k ≤ 128 (the code's token is an `int8_t`);
    /// - but never longer than the idle timeout or 139·iv after the last hearing, whichever is
    ///   longer: a cut re-notifies every flow, dead ones included, and without this bound a
    ///   dead flow would be kept as long as R keeps moving. A live source starved for longer
    ///   (a stream of slow-downs keeps restarting its timer) is released, and its next DATA
    ///   brings the flow back ([`SinkConfig::revive_expired`]).
    fn idle_deadline(&self, flow: &Flow) -> Option<Instant> {
        let idle = self.cfg.idle_timeout?;
        let slowest = if flow.slowest_told.is_zero() { flow.assigned_code } else { flow.slowest_told };
        let iv = Duration::from_secs_f64(1.0 / slowest.pps().max(1e-6));
        let heard = flow.last_heard + idle.max(iv.saturating_mul(10));
        let deficit = u64::from(flow.slowdowns_unheard.min(MAX_TOKEN_DEFICIT));
        let explained = match flow.last_slowdown {
            Some(at) if deficit > 0 => at + iv.saturating_mul(deficit + 11),
            _ => Instant::ZERO,
        };
        let cap = flow.last_heard + idle.max(iv.saturating_mul(u64::from(MAX_TOKEN_DEFICIT) + 11));
        Some(heard.max(explained).min(cap))
    }

    /// The flow's RTO.
    fn rto(&self, flow: &Flow) -> Duration {
        flow.rtt.rto(self.cfg.rto_rttvar_factor, self.cfg.rto_extra, self.cfg.default_rtt).max(RTO_FLOOR)
    }

    /// [PAPER §3.7; AMBIG-14 → defer] send now if RTO_i has passed since the last feedback to
    /// the flow, otherwise send at `tLastFb + RTO_i` with the then-current content.
    fn send_or_defer(&mut self, now: Instant, source: NodeId, why: Why) {
        let Some(flow) = self.flows.get(&source) else {
            return;
        };
        let rto = self.rto(flow);
        match flow.last_fb {
            Some(at) if now < at + rto => {
                let due = at + rto;
                if let Some(flow) = self.flows.get_mut(&source) {
                    flow.fb_due = Some(flow.fb_due.map_or(due, |d| d.min(due)));
                    flow.fb_due_why.get_or_insert(why);
                }
            }
            _ => self.send_feedback(now, source, why),
        }
    }

    /// A held-back trigger came due (paper profile): send the feedback now.
    fn send_deferred(&mut self, now: Instant, source: NodeId) {
        let Some(flow) = self.flows.get_mut(&source) else {
            return;
        };
        let why = flow.fb_due_why.take().unwrap_or(Why::Timer);
        flow.fb_due = None;
        let fresh = flow.queued.is_none();
        let stale = match why {
            Why::NewLoss | Why::Timer | Why::Fin => flow.missing.is_empty(),
            Why::RateDiffers | Why::Decrease => flow.last_reported == flow.assigned_code,
            Why::Duplicate | Why::AckRequest => false,
        };
        self.stats.feedback_deferred_stale += u64::from(fresh && stale);
        self.send_feedback(now, source, why);
        if let Some(flow) = self.flows.get_mut(&source) {
            flow.queued_deferred |= fresh;
        }
    }

    /// [CODE is_feedback_time_ok] the source echoed the newest fid, or none was sent, or
    /// 2·RTO + 2/r has passed.
    fn feedback_time_ok_code(&self, flow: &Flow, now: Instant) -> bool {
        let Some(at) = flow.last_fb else {
            return true;
        };
        let interval = Duration::from_secs_f64(1.0 / flow.assigned.max(1e-6));
        flow.fid_seen == flow.fid || now >= at + self.rto(flow).saturating_mul(2) + interval.saturating_mul(2)
    }

    /// Queue a FEEDBACK for the flow (once: a flow already queued keeps its place).
    fn send_feedback(&mut self, _now: Instant, source: NodeId, why: Why) {
        let Some(flow) = self.flows.get_mut(&source) else {
            return;
        };
        flow.fb_due = None;
        flow.fb_due_why = None;
        if flow.queued.is_none() {
            flow.queued = Some(why);
            flow.queued_deferred = false;
            self.outbox.push_back(Outgoing::Feedback(source));
        }
    }

    /// Build the flow's FEEDBACK now (spec §2.17.1); arms the RTO timer when none runs.
    fn build_feedback(&mut self, now: Instant, source: NodeId) -> Option<Vec<u8>> {
        let rto = self.rto(self.flows.get(&source)?);
        let flow = self.flows.get_mut(&source)?;
        let why = flow.queued.take().unwrap_or(Why::Timer);
        let deferred = core::mem::take(&mut flow.queued_deferred);
        if let Some(distance) = self.cfg.give_up_distance {
            // [CODE send_FEEDBACK] NACKs this far behind are deleted unrepaired.
            let last = flow.last_recv;
            let before = flow.missing.len();
            flow.missing.retain(|&seq| last < seq.saturating_add(distance));
            self.stats.nacks_abandoned += (before - flow.missing.len()) as u64;
        }
        let nacks = on_wire(
            &build_nacks(&flow.missing, self.cfg.max_nack_ranges, self.cfg.max_nack_seqnos),
            seq_offset(flow.nonce),
        );
        flow.fid = next_fid(flow.fid);
        flow.fids.record(flow.fid, now);
        flow.last_fb = Some(now);
        flow.told(now);
        flow.fb_due = None;
        flow.fb_due_why = None;
        flow.last_sent_cack = flow.cack();
        if flow.timer.is_none() {
            flow.timer = Some(now + rto);
        }
        let repr = Repr::Feedback {
            fid: flow.fid,
            rate: flow.assigned_code,
            rtt_ms: rtt_field(&flow.rtt),
            cack: (flow.cack() as u16).wrapping_add(seq_offset(flow.nonce)),
            nacks,
        };
        let fstats = self.stats.per_flow.entry(source).or_default();
        fstats.feedback_sent += 1;
        fstats.nacks_sent += nacks.seqno_count() as u64;
        self.stats.feedback_sent += 1;
        self.stats.feedback_sent_by.bump(why);
        self.stats.feedback_sent_deferred += u64::from(deferred);
        self.stats.nack_ranges_sent += nacks.len() as u64;
        self.stats.nacks_sent += nacks.seqno_count() as u64;
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut bytes);
        Some(bytes)
    }

    /// Queue a SYN-ACK for the flow; it is built when handed out ([`Sink::build_syn_ack`]).
    fn send_syn_ack(&mut self, source: NodeId) {
        self.outbox.push_back(Outgoing::SynAck(source));
    }

    /// SYN-ACK: a feedback with the assigned rate and no ACK or NACKs [CODE], built when it
    /// leaves, like a FEEDBACK: `now` is its send time T of the RTT scheme (spec §2.8, D25: its
    /// fid gives the flow's first RTT sample), and it carries the rate assigned at that time.
    fn build_syn_ack(&mut self, now: Instant, source: NodeId) -> Option<Vec<u8>> {
        let flow = self.flows.get_mut(&source)?;
        flow.fid = next_fid(flow.fid);
        flow.fids.record(flow.fid, now);
        flow.last_fb = Some(now);
        flow.told(now);
        let repr =
            Repr::SynAck { fid: flow.fid, rate: flow.assigned_code, rtt_ms: rtt_field(&flow.rtt), nonce: flow.nonce };
        self.stats.syn_acks_sent += 1;
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut bytes);
        Some(bytes)
    }

    fn send_fin_ack(&mut self, source: NodeId, last: u16) {
        self.stats.fin_acks_sent += 1;
        self.push(source, &Repr::FinAck { last });
    }

    fn push(&mut self, destination: NodeId, repr: &Repr<'_>) {
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut bytes);
        self.outbox.push_back(Outgoing::Ready(destination, bytes));
    }

    /// Advance the sink's clock to `now` (never backwards) and return it.
    fn tick(&mut self, now: Instant) -> Instant {
        self.now = self.now.max(now);
        self.now
    }

    /// A Bernoulli draw with [`SinkConfig::feedback_probability`] (xorshift64*, seeded).
    fn coin(&mut self) -> bool {
        if self.cfg.feedback_probability >= 1.0 {
            return true;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let draw = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (draw as f64 / (1u64 << 53) as f64) < self.cfg.feedback_probability
    }
}

/// One entry of the sink's outbox.
#[derive(Debug)]
enum Outgoing {
    /// A datagram built already (SYN-NACK, FIN-ACK).
    Ready(NodeId, Vec<u8>),
    /// A FEEDBACK for this flow, built when handed out.
    Feedback(NodeId),
    /// A SYN-ACK for this flow, built when handed out.
    SynAck(NodeId),
}

/// DATA fields the sink uses.
#[derive(Clone, Copy, Debug)]
struct DataIn {
    seq: u16,
    rate: Rate,
    fid: u8,
    since: Duration,
    ack_request: bool,
    retransmission: bool,
}

/// Counts from one delivery round.
struct Delivery {
    delivered: u64,
    given_up: u64,
}

/// [CODE update_rtt_estimate] take an RTT sample from the echoed fid, if valid.
fn rtt_sample(cfg: &SinkConfig, flow: &mut Flow, now: Instant, fid: u8, since: Duration, freeze: bool) {
    let Some(sent_at) = flow.fids.sent_at(fid) else {
        return; // unknown or no fid: no sample
    };
    let elapsed = now - sent_at;
    if since > elapsed {
        // Impossible timing: forget the record. [CODE]
        flow.fids.clear(fid);
        return;
    }
    let ahead = fid.wrapping_sub(flow.fid_seen);
    if ahead > 0 && ahead < cfg.fid_seen_window {
        // The source has seen feedback `fid`.
        flow.fid_seen = fid;
    }
    let sample = Duration(elapsed.as_nanos() - since.as_nanos());
    if sample > cfg.max_rtt_sample {
        return;
    }
    if freeze && flow.rtt.has_sample() {
        return; // [D12 code] frozen while any flow is congested
    }
    flow.rtt.sample(sample);
}

/// The internal number of the last packet a FIN names (`wire`) on `flow`, or `None` when the
/// FIN is refused as bogus: a FIN names the last packet sent, so it cannot lie behind one
/// received, nor before the connection's start, nor beyond the sanity jump; such a FIN
/// (another incarnation's, or a forged one) would close the flow early. [AMBIG-21 → chosen:
/// refused as bogus; the code accepts any FIN]
fn fin_seq(cfg: &SinkConfig, flow: &Flow, wire: u16) -> Option<u32> {
    let signed = unwrap_seq_signed(flow.last_recv, wire.wrapping_sub(seq_offset(flow.nonce)));
    let last32 = signed.clamp(0, i64::from(u32::MAX)) as u32;
    let base = if cfg.jump_from_cack { flow.next_expected.saturating_sub(1) } else { flow.last_recv };
    if last32 > base.saturating_add(cfg.max_seq_jump) || signed < i64::from(flow.last_recv) {
        return None;
    }
    Some(last32)
}

/// The internal number of a DATA packet's wire number `wire` on `flow`, or `None` when the
/// packet is refused as bogus (spec §2.4 step 3):
/// - [CODE: more than 100 beyond the highest seen; paper AMBIG → 1000 beyond the cumulative ACK,
///   `jump_from_cack`] a sanity jump;
/// - a number before the connection's first packet is another incarnation's [AMBIG-21 → chosen:
///   bogus too];
/// - a number past the last packet a FIN named is not this connection's, and its gaps could
///   never be repaired (the flow would wait in FIN_RETX_WAIT for the idle timeout) [AMBIG-21 →
///   chosen: bogus, as a number before the start; the code accepts it].
fn data_seq(cfg: &SinkConfig, flow: &Flow, wire: u16) -> Option<u32> {
    let signed = unwrap_seq_signed(flow.last_recv, wire.wrapping_sub(seq_offset(flow.nonce)));
    let seq = signed.clamp(0, i64::from(u32::MAX)) as u32;
    let base = if cfg.jump_from_cack { flow.next_expected.saturating_sub(1) } else { flow.last_recv };
    if seq > base.saturating_add(cfg.max_seq_jump) || signed < 1 {
        return None;
    }
    if let Some(fin) = flow.fin_last {
        if signed > unwrap_seq_signed(flow.last_recv, fin.wrapping_sub(seq_offset(flow.nonce))) {
            return None;
        }
    }
    Some(seq)
}

/// [PAPER §3.3; CODE receive_rtr_msg] deliver `seq` (or hold it) and drain the out-of-order
/// list; with a give-up distance, force holes that far behind (reference code only).
fn deliver_in_order(
    flow: &mut Flow,
    seq: u32,
    payload: &[u8],
    give_up: Option<u32>,
    source: NodeId,
    events: &mut VecDeque<SinkEvent>,
) -> Delivery {
    let mut out = Delivery { delivered: 0, given_up: 0 };
    if seq == flow.next_expected {
        events.push_back(SinkEvent::Delivered { source, seq, data: payload.to_vec() });
        flow.next_expected += 1;
        out.delivered += 1;
    } else if seq > flow.next_expected {
        flow.ooo.insert(seq, payload.to_vec());
    }
    while let Some((&head, _)) = flow.ooo.first_key_value() {
        if head < flow.next_expected {
            flow.ooo.pop_first(); // stale
        } else if head == flow.next_expected || give_up.is_some_and(|d| seq >= head.saturating_add(d)) {
            if head != flow.next_expected {
                // [CODE, D21] skip the hole.
                out.given_up += u64::from(head - flow.next_expected);
                for lost in flow.next_expected..head {
                    flow.missing.remove(&lost);
                }
            }
            let Some((head, data)) = flow.ooo.pop_first() else {
                break;
            };
            events.push_back(SinkEvent::Delivered { source, seq: head, data });
            flow.next_expected = head + 1;
            out.delivered += 1;
        } else {
            break;
        }
    }
    out
}

/// C_i ← g·level + (1 − g)·C_i with the profile's level formula (spec §2.10).
fn update_congestion(cfg: &SinkConfig, flow: &mut Flow) {
    let input = LevelInput {
        ooo: flow.ooo.len(),
        missing: flow.missing.len(),
        rate_pps: flow.assigned,
        rtt: flow.rtt.srtt(),
        default_rtt: cfg.default_rtt,
        rtt_cap: cfg.congestion_rtt_cap,
        norm_floor: cfg.congestion_norm_floor,
        timeouts: flow.timeouts,
    };
    let level = match cfg.level_formula {
        LevelFormula::Paper => level_paper(&input),
        LevelFormula::ReferenceCode => level_code(&input),
    };
    flow.congestion = cfg.congestion_gain * level + (1.0 - cfg.congestion_gain) * flow.congestion;
}

/// The oldest missing sequence numbers as runs, within both limits.
fn build_nacks(missing: &BTreeSet<u32>, max_ranges: usize, max_seqnos: usize) -> NackList {
    let mut list = NackList::new();
    let max_ranges = max_ranges.min(MAX_NACK_RANGES);
    if max_ranges == 0 {
        return list;
    }
    let mut pending: Option<(u32, u32)> = None;
    for &seq in missing.iter().take(max_seqnos) {
        match pending {
            Some((first, run)) if seq == first + run && run < u32::from(u8::MAX) => {
                pending = Some((first, run + 1));
            }
            Some((first, run)) => {
                if list.len() + 1 >= max_ranges {
                    break;
                }
                list.push(NackRange { first: first as u16, run: run as u8 });
                pending = Some((seq, 1));
            }
            None => pending = Some((seq, 1)),
        }
    }
    if let Some((first, run)) = pending {
        list.push(NackRange { first: first as u16, run: run as u8 });
    }
    list
}

/// NACK ranges in the flow's wire numbering ([`seq_offset`]): the first of each range shifted by
/// `offset` (a run may wrap past 65,535, which the source's serial arithmetic undoes).
fn on_wire(list: &NackList, offset: u16) -> NackList {
    let mut out = NackList::new();
    for r in list.as_slice() {
        out.push(NackRange { first: r.first.wrapping_add(offset), run: r.run });
    }
    out
}

/// The next feedback id; 0 is skipped. [CODE update_feedback_send_info]
fn next_fid(fid: u8) -> u8 {
    match fid.wrapping_add(1) {
        0 => 1,
        next => next,
    }
}

/// The RTT field of a feedback: ms, at least 1 when known, 0 when unknown.
fn rtt_field(rtt: &RttEstimator) -> u16 {
    rtt.srtt().map_or(0, |d| (d.as_nanos() / 1_000_000).clamp(1, u64::from(u16::MAX)) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rcrt::policy::{DemandLimited, DemandProportional, Weighted};
    use std::vec::Vec;

    const SRC: NodeId = NodeId(7);

    /// [`SinkConfig::check`] accepts both profiles and names the first field out of range:
    /// each case below breaks one rule its doc comment states and nothing else.
    #[test]
    fn config_check_names_the_field_out_of_range() {
        assert_eq!(SinkConfig::paper().check(), Ok(()));
        assert_eq!(SinkConfig::reference_code().check(), Ok(()));
        let p = SinkConfig::paper;
        let mut ali = ALI_WEIGHTS;
        ali[7] = -0.1;
        let mut ali_first = ALI_WEIGHTS;
        ali_first[0] = 0.0;
        let mut ali_nan = ALI_WEIGHTS;
        ali_nan[3] = f64::NAN;
        let cases = [
            (SinkConfig { lower_threshold: 0.0, ..p() }, "lower_threshold"),
            (SinkConfig { lower_threshold: f64::INFINITY, upper_threshold: f64::INFINITY, ..p() }, "lower_threshold"),
            (SinkConfig { upper_threshold: 0.9, ..p() }, "upper_threshold"),
            (SinkConfig { upper_threshold: f64::NAN, ..p() }, "upper_threshold"),
            (SinkConfig { additive_increase_pps: -0.5, ..p() }, "additive_increase_pps"),
            (SinkConfig { additive_increase_pps: f64::INFINITY, ..p() }, "additive_increase_pps"),
            (SinkConfig { join_rate_pps: 0.0, ..p() }, "join_rate_pps"),
            (SinkConfig { congestion_norm_floor: -0.1, ..p() }, "congestion_norm_floor"),
            (SinkConfig { min_rate_per_flow_pps: 0.0, ..p() }, "min_rate_per_flow_pps"),
            (SinkConfig { join_rate_pps: f64::NAN, ..p() }, "join_rate_pps"),
            (SinkConfig { default_demand_pps: 0.0, ..p() }, "default_demand_pps"),
            (SinkConfig { default_weight: 0.0, ..p() }, "default_weight"),
            (SinkConfig { join_slow_start_limit_pps: -1.0, ..p() }, "join_slow_start_limit_pps"),
            (SinkConfig { congestion_gain: 0.0, ..p() }, "congestion_gain"),
            (SinkConfig { rtt_alpha: 1.5, ..p() }, "rtt_alpha"),
            (SinkConfig { rtt_beta: 0.0, ..p() }, "rtt_beta"),
            (SinkConfig { feedback_probability: 1.01, ..p() }, "feedback_probability"),
            (SinkConfig { ali_weights: ali, ..p() }, "ali_weights"),
            (SinkConfig { ali_weights: ali_first, ..p() }, "ali_weights"),
            (SinkConfig { ali_weights: ali_nan, ..p() }, "ali_weights"),
            (SinkConfig { fid_ring_len: 0, ..p() }, "fid_ring_len"),
            (SinkConfig { max_nack_ranges: 0, ..p() }, "max_nack_ranges"),
            (SinkConfig { max_nack_seqnos: 0, ..p() }, "max_nack_seqnos"),
            (SinkConfig { max_flows: 0, ..p() }, "max_flows"),
            (SinkConfig { max_seq_jump: 0, ..p() }, "max_seq_jump"),
            (SinkConfig { give_up_distance: Some(0), ..p() }, "give_up_distance"),
            (SinkConfig { fid_seen_window: 0, ..p() }, "fid_seen_window"),
            (SinkConfig { max_rtt_sample: Duration::ZERO, ..p() }, "max_rtt_sample"),
        ];
        for (cfg, field) in cases {
            let e = cfg.check().expect_err(field);
            assert_eq!(e.field, field, "{e}");
        }
        // The edges of each range are accepted: L = U, a gain of 1, probabilities 0 and 1, a
        // zero join limit and ALI weights of 0 after the first.
        let mut ali_tail = [0.0; 8];
        ali_tail[0] = 1.0;
        let edges = SinkConfig {
            lower_threshold: 2.0,
            upper_threshold: 2.0,
            congestion_gain: 1.0,
            rtt_alpha: 1.0,
            rtt_beta: 1.0,
            feedback_probability: 0.0,
            join_slow_start_limit_pps: 0.0,
            ali_weights: ali_tail,
            give_up_distance: Some(1),
            ..p()
        };
        assert_eq!(edges.check(), Ok(()));
        // The reliable baseline's sink: never a decrease, never an increase, every joining
        // flow's whole demand added to R.
        let reliable = SinkConfig {
            upper_threshold: f64::INFINITY,
            additive_increase_pps: 0.0,
            join_rate_pps: f64::INFINITY,
            join_slow_start_limit_pps: f64::INFINITY,
            ..p()
        };
        assert_eq!(reliable.check(), Ok(()));
        let e = SinkConfig { upper_threshold: 0.5, ..p() }.check().unwrap_err();
        assert_eq!(alloc::format!("{e}"), "upper_threshold: must be ≥ lower_threshold (+∞: never decrease)");
    }

    /// The wire offset of nonce 1, which most tests open their flow with: the tests write and
    /// read sequence numbers as the incarnation's own numbers.
    const OFF: u16 = seq_offset(1);

    /// A sequence number as the incarnation of nonce 1 writes it.
    fn w(seq: u16) -> u16 {
        seq.wrapping_add(OFF)
    }

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    /// The profile's defaults without output pacing (these tests drain the outbox at once).
    fn config(profile: Profile) -> SinkConfig {
        SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::for_profile(profile) }
    }

    fn sink(profile: Profile) -> Sink {
        Sink::new(NodeId(0), config(profile), Box::new(Fair))
    }

    fn bytes(repr: &Repr<'_>) -> Vec<u8> {
        let mut b = vec![0; repr.buffer_len()];
        repr.emit(&mut b);
        b
    }

    fn syn(demand: f64, nonce: u16) -> Vec<u8> {
        bytes(&Repr::Syn { demand: Rate::from_pps(demand), nonce })
    }

    /// DATA with the given rate, fid echo and time since that feedback (ms).
    fn data(seq: u16, rate: Rate, fid: u8, since_ms: u64, retx: bool) -> Vec<u8> {
        bytes(&Repr::Data {
            seq: w(seq),
            rate,
            fid,
            since_feedback_2ms: (since_ms / 2) as u16,
            ack_request: false,
            retransmission: retx,
            payload: &[seq as u8],
        })
    }

    /// Everything the sink sent, parsed: (destination, kind, fid, rate, cack, nacks).
    fn sent(s: &mut Sink) -> Vec<(NodeId, std::vec::Vec<u8>)> {
        core::iter::from_fn(|| s.poll_transmit(Instant::ZERO)).collect()
    }

    fn sent_at(s: &mut Sink, now: Instant) -> Vec<(NodeId, std::vec::Vec<u8>)> {
        core::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn delivered(s: &mut Sink) -> Vec<u32> {
        core::iter::from_fn(|| s.poll_event())
            .filter_map(|e| match e {
                SinkEvent::Delivered { seq, data, .. } => {
                    assert_eq!(data, vec![seq as u8]);
                    Some(seq)
                }
                _ => None,
            })
            .collect()
    }

    /// A sink with one open flow from SRC (demand `demand`); the SYN-ACK has been taken.
    fn open(profile: Profile, demand: f64) -> (Sink, Rate) {
        let mut s = sink(profile);
        s.handle_datagram(ms(0), SRC, &syn(demand, 1));
        let out = sent(&mut s);
        assert_eq!(out.len(), 1);
        let Ok(Repr::SynAck { fid: 1, rate, .. }) = Repr::parse(&out[0].1) else {
            panic!("expected SYN-ACK, got {:?}", Repr::parse(&out[0].1));
        };
        (s, rate)
    }

    fn feedback(bytes: &[u8]) -> (u8, Rate, u16, u16, Vec<u16>) {
        match Repr::parse(bytes) {
            Ok(Repr::Feedback { fid, rate, rtt_ms, cack, nacks }) => {
                (fid, rate, rtt_ms, cack.wrapping_sub(OFF), nacks.seqnos().map(|n| n.wrapping_sub(OFF)).collect())
            }
            other => panic!("expected FEEDBACK, got {other:?}"),
        }
    }

    // ------------------------------------------------------------- tests for connection setup

    #[test]
    fn syn_opens_flow_with_join_rate() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        // [CODE-FILL] first join: R += min(d, 0.5); fair: r = 0.5.
        assert_eq!(rate, Rate::from_pps(0.5));
        assert_eq!(s.total_rate(), 0.5);
        assert_eq!(s.flow_rate(SRC), Some(0.5));
        let events: Vec<SinkEvent> = core::iter::from_fn(|| s.poll_event()).collect();
        assert!(events.contains(&SinkEvent::FlowOpened { source: SRC, demand_pps: 1.0 }));
        // A duplicate SYN gets a fresh SYN-ACK with the next fid; nothing else changes.
        s.handle_datagram(ms(100), SRC, &syn(1.0, 1));
        let out = sent(&mut s);
        assert!(matches!(Repr::parse(&out[0].1), Ok(Repr::SynAck { fid: 2, .. })));
        assert_eq!(s.flow_count(), 1);
        // An unstated demand is 50 pkt/s.
        s.handle_datagram(ms(200), NodeId(8), &syn(0.0, 1));
        assert_eq!(s.flow_info(NodeId(8)).unwrap().demand_pps, 50.0);
    }

    #[test]
    fn new_incarnation_replaces_flow() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(100), SRC, &data(1, rate, 1, 50, false));
        assert_eq!(s.flow_info(SRC).unwrap().cack, 1);
        s.handle_datagram(ms(200), SRC, &syn(1.0, 2));
        assert_eq!(s.flow_info(SRC).unwrap().cack, 0);
        assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SinkEvent::FlowAborted { source: SRC }));
        assert_eq!((s.stats().flows_replaced, s.stats().flows_expired), (1, 0));
        // Spec §4.11 item 5: packets of the old incarnation still in flight (numbered with nonce
        // 1's offset) are not taken for the new flow's: neither its packet 2 nor a FIN.
        let _ = sent(&mut s);
        let bogus = s.stats().bogus;
        s.handle_datagram(ms(300), SRC, &data(2, rate, 1, 50, true));
        s.handle_datagram(ms(310), SRC, &bytes(&Repr::Fin { last: w(2) }));
        assert!(delivered(&mut s).is_empty(), "an old retransmission delivered as the new flow's");
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.state, info.cack, info.missing, info.out_of_order), (FlowState::Active, 0, 0, 0));
        assert_eq!(s.stats().bogus, bogus + 2);
        // The new incarnation's own packet 1 is delivered.
        let new1 = (1u16).wrapping_add(seq_offset(2));
        let pkt = bytes(&Repr::Data {
            seq: new1,
            rate,
            fid: 2,
            since_feedback_2ms: 0,
            ack_request: false,
            retransmission: false,
            payload: &[1],
        });
        s.handle_datagram(ms(320), SRC, &pkt);
        assert_eq!(delivered(&mut s), vec![1]);
    }

    /// A reopened flow (nonce 1 → 3, whose offsets differ by 15,470, so that the old FIN's 5
    /// lands at −15,465, i.e. the old numbers land
    /// *before* the new connection's start) refuses the old incarnation's FIN and DATA: unwrapped
    /// without a clamp, they come out negative. (The clamp to 0 let such a FIN close the new
    /// flow at once.)
    #[test]
    fn a_reopened_flow_refuses_numbers_before_its_start() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(200), SRC, &syn(1.0, 3));
        let _ = sent(&mut s);
        let _ = core::iter::from_fn(|| s.poll_event()).count();
        s.handle_datagram(ms(300), SRC, &bytes(&Repr::Fin { last: w(5) }));
        s.handle_datagram(ms(310), SRC, &data(4, rate, 1, 50, true));
        assert_eq!(s.flow_count(), 1, "an old FIN closed the new flow");
        assert!(sent(&mut s).is_empty(), "an answer to an old FIN or DATA");
        assert!(delivered(&mut s).is_empty());
        assert_eq!(s.stats().bogus, 2);
        // The new incarnation's FIN with nothing sent (its ISN) closes it.
        s.handle_datagram(ms(400), SRC, &bytes(&Repr::Fin { last: seq_offset(3) }));
        assert_eq!(s.flow_count(), 0);
    }

    /// A FIN names the last packet sent; one behind a packet already received (here from an
    /// earlier connection, or forged) neither closes the flow nor changes its state.
    #[test]
    fn fin_behind_the_received_packets_is_refused() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for seq in 1..=3 {
            s.handle_datagram(ms(100 * u64::from(seq)), SRC, &data(seq, rate, 1, 50, false));
        }
        let _ = sent(&mut s);
        s.handle_datagram(ms(400), SRC, &bytes(&Repr::Fin { last: w(2) }));
        assert_eq!(s.flow_count(), 1, "the flow closed on a FIN behind packet 3");
        assert!(sent(&mut s).is_empty(), "a FIN-ACK for a FIN behind packet 3");
        assert_eq!(s.stats().bogus, 1);
        // The right FIN closes it.
        s.handle_datagram(ms(500), SRC, &bytes(&Repr::Fin { last: w(3) }));
        assert_eq!(Repr::parse(&sent(&mut s)[0].1), Ok(Repr::FinAck { last: w(3) }));
        assert_eq!(s.flow_count(), 0);
    }

    #[test]
    fn syn_beyond_capacity_is_refused() {
        let cfg = SinkConfig { max_flows: 1, ..config(Profile::Paper) };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        s.handle_datagram(ms(0), SRC, &syn(1.0, 1));
        s.handle_datagram(ms(0), NodeId(9), &syn(1.0, 5));
        let out = sent(&mut s);
        assert_eq!(out[1].0, NodeId(9));
        assert_eq!(Repr::parse(&out[1].1), Ok(Repr::SynNack { nonce: 5 }));
    }

    #[test]
    fn garbage_and_unknown_flows_are_counted_and_dropped() {
        let mut s = sink(Profile::Paper);
        s.handle_datagram(ms(0), SRC, &[0xff, 0x00]);
        s.handle_datagram(ms(0), SRC, &data(1, Rate(128), 0, 0, false));
        assert_eq!(s.stats().malformed, 1);
        assert_eq!(s.stats().unknown_flow, 1);
        assert!(sent(&mut s).is_empty());
        assert_eq!(s.poll_timeout(), None);
    }

    // ---------------------------------------------------- tests for the ACTIVE / NACK_WAIT states

    #[test]
    fn in_order_delivery_with_gap_then_repair() {
        // Demand 0.5 = the join rate, so R = D and no increase changes the rate meanwhile.
        let (mut s, rate) = open(Profile::Paper, 0.5);
        for (t, seq) in [(1_100, 1), (1_200, 2), (1_300, 4), (1_400, 5)] {
            // Every echo of the SYN-ACK (fid 1, sent at 0) gives an RTT sample of 1 s.
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
        }
        assert_eq!(delivered(&mut s), vec![1, 2]);
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.state, info.missing, info.out_of_order), (FlowState::NackWait, 1, 2));
        // The gap was seen at 1300 ms, RTO = 1 s (var 0) after the SYN-ACK: the NACK went out at
        // once; 5 triggered nothing (and C stays below U: 1, then 2.5).
        let out = sent(&mut s);
        assert_eq!(out.len(), 1);
        let (fid, _, rtt, cack, nacks) = feedback(&out[0].1);
        assert_eq!((fid, rtt, cack, nacks), (2, 1_000, 2, vec![3]));
        // The retransmission repairs the gap: 3, 4, 5 delivered in order, back to ACTIVE.
        s.handle_datagram(ms(1_500), SRC, &data(3, rate, 2, 10, true));
        assert_eq!(delivered(&mut s), vec![3, 4, 5]);
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.state, info.cack, info.missing), (FlowState::Active, 5, 0));
        assert_eq!(s.stats().recovered, 1);
    }

    #[test]
    fn duplicates_are_suppressed() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(100), SRC, &data(1, rate, 1, 10, false));
        s.handle_datagram(ms(150), SRC, &data(1, rate, 1, 10, false));
        s.handle_datagram(ms(300), SRC, &data(3, rate, 1, 10, false));
        s.handle_datagram(ms(350), SRC, &data(3, rate, 1, 10, false));
        s.handle_datagram(ms(400), SRC, &data(2, rate, 1, 10, true));
        s.handle_datagram(ms(450), SRC, &data(2, rate, 1, 10, false));
        assert_eq!(delivered(&mut s), vec![1, 2, 3]);
        assert_eq!(s.stats().duplicates, 3);
        assert_eq!(s.stats().per_flow[&SRC].unique, 3);
    }

    /// [PAPER §3.7 trigger 3] a copy of a packet at or below the cumulative ACK already sent
    /// (its ACK was lost) brings a feedback: with nothing missing and no timer running, the
    /// only trigger there is.
    #[test]
    fn duplicate_of_acknowledged_packet_triggers_feedback() {
        for profile in [Profile::Paper, Profile::ReferenceCode] {
            let (mut s, rate) = open(profile, 1.0);
            s.handle_datagram(ms(100), SRC, &data(1, rate, 1, 10, false));
            s.handle_datagram(ms(200), SRC, &data(3, rate, 1, 10, false)); // loss → feedback, cack 1
            let out = sent(&mut s);
            assert_eq!(feedback(&out[0].1).3, 1, "{profile:?}");
            s.handle_datagram(ms(300), SRC, &data(2, rate, 1, 10, true)); // repaired
            assert!(sent(&mut s).is_empty(), "{profile:?}: nothing to say");
            assert!(s.flow_info(SRC).unwrap().missing == 0, "{profile:?}");
            let before = s.stats().feedback_sent_by;
            // Long after: a copy of 1, which the feedback acknowledged.
            s.handle_datagram(ms(60_000), SRC, &data(1, rate, 1, 10, true));
            assert_eq!(sent_at(&mut s, ms(60_000)).len(), 1, "{profile:?}");
            let after = s.stats().feedback_sent_by;
            assert_eq!(after.duplicate, before.duplicate + 1, "{profile:?}: {after:?}");
        }
    }

    #[test]
    fn nack_list_lists_oldest_losses_as_ranges() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for seq in [1, 2, 4, 8, 9, 11] {
            s.handle_datagram(ms(6_000), SRC, &data(seq, rate, 0, 0, false));
        }
        // Three new-loss triggers, one feedback: built when handed out, with every NACK.
        let out = sent(&mut s);
        assert_eq!(out.len(), 1);
        let (_, _, _, cack, nacks) = feedback(&out[0].1);
        assert_eq!(cack, 2);
        assert_eq!(nacks, vec![3, 5, 6, 7, 10]);
        let Ok(Repr::Feedback { nacks: list, .. }) = Repr::parse(&out[0].1) else { unreachable!() };
        assert_eq!(list.len(), 3);

        // Reference code: at most the 10 oldest seqnos.
        let (mut s, rate) = open(Profile::ReferenceCode, 1.0);
        s.handle_datagram(ms(100), SRC, &data(1, rate, 0, 0, false));
        s.handle_datagram(ms(200), SRC, &data(14, rate, 0, 0, false));
        let out = sent(&mut s);
        let (_, _, _, _, nacks) = feedback(&out[0].1);
        assert_eq!(nacks, (2..=11).collect::<Vec<u16>>());
    }

    #[test]
    fn build_nacks_limits() {
        let missing: BTreeSet<u32> = [1, 2, 3, 5, 7, 8].into_iter().collect();
        let seqs = |l: NackList| l.seqnos().collect::<Vec<u16>>();
        assert_eq!(seqs(build_nacks(&missing, 10, usize::MAX)), vec![1, 2, 3, 5, 7, 8]);
        assert_eq!(seqs(build_nacks(&missing, 2, usize::MAX)), vec![1, 2, 3, 5]);
        assert_eq!(seqs(build_nacks(&missing, 10, 4)), vec![1, 2, 3, 5]);
        assert!(build_nacks(&missing, 0, 4).is_empty());
        let long: BTreeSet<u32> = (1..=300).collect();
        let list = build_nacks(&long, 10, usize::MAX);
        assert_eq!(list.as_slice()[0], NackRange { first: 1, run: 255 });
        assert_eq!(list.seqno_count(), 300);
    }

    #[test]
    fn rto_timer_resends_nacks_until_repaired() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(6_000), SRC, &data(1, rate, 0, 0, false));
        s.handle_datagram(ms(6_100), SRC, &data(3, rate, 0, 0, false));
        assert_eq!(sent(&mut s).len(), 1);
        // No RTT sample (fid 0): RTO = 5 s. Re-sent at every expiry while 2 is missing.
        assert_eq!(s.poll_timeout(), Some(ms(11_100)));
        s.handle_timeout(ms(11_100));
        assert_eq!(feedback(&sent(&mut s)[0].1).4, vec![2]);
        assert_eq!(s.poll_timeout(), Some(ms(16_100)));
        s.handle_datagram(ms(12_000), SRC, &data(2, rate, 0, 0, true));
        s.handle_timeout(ms(16_100));
        assert!(sent(&mut s).is_empty(), "ACTIVE: the timer stays off");
        assert_eq!(s.flow_info(SRC).unwrap().state, FlowState::Active);
    }

    /// [PAPER §3.5] ALI through the sink: 1–10, 12 → p = 1 − 1/11.
    #[test]
    fn ali_from_a_loss_pattern() {
        for (profile, p) in [(Profile::Paper, 1.0 - 1.0 / 11.0), (Profile::ReferenceCode, 0.9)] {
            let (mut s, rate) = open(profile, 1.0);
            for seq in (1..=10).chain([12]) {
                s.handle_datagram(ms(100 * u64::from(seq)), SRC, &data(seq, rate, 0, 0, false));
            }
            let got = s.flow_info(SRC).unwrap().delivery_ratio;
            assert!(crate::rcrt::abs(got - p) < 1e-9, "{profile}: {got}");
        }
    }

    /// [PAPER §3.7; spec §10 test 7] RTT by T…T‴ and the RTO.
    #[test]
    fn rtt_and_rto_update() {
        let mut s = sink(Profile::Paper);
        s.handle_datagram(ms(1_000), SRC, &syn(1.0, 1)); // SYN-ACK fid 1 at 1000 ms
        assert_eq!(sent(&mut s).len(), 1);
        let rate = Rate::from_pps(0.5);
        // Unknown fid: no sample. Interval longer than elapsed: no sample, slot cleared.
        s.handle_datagram(ms(1_500), SRC, &data(1, rate, 9, 100, false));
        s.handle_datagram(ms(1_600), SRC, &data(2, rate, 1, 800, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, None);
        s.handle_datagram(ms(2_500), SRC, &data(3, rate, 1, 300, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, None, "slot 1 was cleared");
        // A rate-differs trigger at 3000 ms is held back to SYN-ACK + RTO (5 s default).
        s.handle_datagram(ms(3_000), SRC, &data(4, Rate(1), 0, 0, false));
        assert!(sent(&mut s).is_empty());
        assert_eq!(s.poll_timeout(), Some(ms(6_000)));
        s.handle_timeout(ms(6_000));
        let out = sent(&mut s);
        assert!(matches!(Repr::parse(&out[0].1), Ok(Repr::Feedback { fid: 2, .. })));
        // Echoed at 7500 after 300 ms at the source: sample 1200 ms.
        s.handle_datagram(ms(7_500), SRC, &data(5, rate, 2, 300, false));
        let info = s.flow_info(SRC).unwrap();
        assert_eq!(info.rtt, Some(Duration::from_millis(1_200)));
        assert_eq!(info.rto, Duration::from_millis(1_200), "RTO = RTT + 2·0");
        // Second sample 2000 ms: srtt 1300, rttvar |2000 − 1200| / 4 = 200 → RTO 1700 ms.
        s.handle_datagram(ms(8_000), SRC, &data(6, rate, 2, 0, false));
        let info = s.flow_info(SRC).unwrap();
        assert_eq!(info.rtt, Some(Duration::from_millis(1_300)));
        assert_eq!(info.rto, Duration::from_millis(1_700));
    }

    // --------------------------------------------------------------- tests for rate adaptation

    /// [PAPER §3.5] R += A after 2 × max RTT, with every C below L and a matching rate.
    #[test]
    fn additive_increase() {
        let (mut s, rate) = open(Profile::Paper, 5.0);
        assert_eq!(s.total_rate(), 0.5);
        // Before 2 × RTT (default 5 s) since the join: no change.
        s.handle_datagram(ms(9_000), SRC, &data(1, rate, 0, 0, false));
        assert_eq!(s.total_rate(), 0.5);
        s.handle_datagram(ms(10_000), SRC, &data(2, rate, 0, 0, false));
        assert_eq!(s.total_rate(), 1.0);
        assert_eq!(s.stats().increases, 1);
        // The packet still reports 0.5: the rate differs, so the next packet triggers nothing
        // (rate-match gate) but asks for feedback (lazy propagation).
        s.handle_datagram(ms(30_000), SRC, &data(3, rate, 0, 0, false));
        assert_eq!(s.total_rate(), 1.0);
        let out = sent(&mut s);
        assert_eq!(feedback(&out.last().unwrap().1).1, Rate::from_pps(1.0));
        // Reporting the new rate after the wait: +0.5 again, then the R ≤ D cap.
        s.handle_datagram(ms(40_000), SRC, &data(4, Rate::from_pps(1.0), 0, 0, false));
        assert_eq!(s.total_rate(), 1.5);

        // Reference code: slow start adds 2A = 2.
        let (mut s, rate) = open(Profile::ReferenceCode, 5.0);
        s.handle_datagram(ms(30_000), SRC, &data(1, rate, 0, 0, false));
        assert_eq!(s.total_rate(), 2.5);
    }

    /// Drive a flow with demand 0.5 (so R = D = 0.5 cannot grow) into congestion: 1 arrives,
    /// 2 is lost, 3, 4, 5 pile up in the out-of-order list. RTT 1 s from fid 1's echo, so
    /// r·RTT = 0.5 and each held packet adds 2 to the level.
    fn congest(profile: Profile) -> Sink {
        congest_from(profile, 11_000)
    }

    /// `congest` with the first DATA at `t0` ms (the SYN came at 0).
    fn congest_from(profile: Profile, t0: u64) -> Sink {
        let (mut s, rate) = open(profile, 0.5);
        let mut t = t0;
        for seq in [1, 3, 4, 5, 6] {
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
            t += 100;
        }
        s
    }

    /// [PAPER §3.5] R ← M·R with M = p/(2 − p) once C > U.
    #[test]
    fn multiplicative_decrease_paper() {
        let mut s = congest(Profile::Paper);
        // C after 3, 4, 5: 1, 2.5, 4.25 > 4 → decrease with p = 1 − 1/2 (interval 2): M = 1/3.
        assert_eq!(s.stats().decreases, 1);
        assert!(crate::rcrt::abs(s.total_rate() - 0.5 / 3.0) < 1e-9);
        let events: Vec<SinkEvent> = core::iter::from_fn(|| s.poll_event()).collect();
        assert!(events.iter().any(|e| matches!(e, SinkEvent::Congestion { source: SRC, level } if *level > 4.0)));
        // The cut came at packet 5 (11.3 s); packet 6 reported the old rate. A still-congested
        // packet reporting the new rate within the 2 × RTT wait (2 s) cuts nothing; one after
        // it cuts again. [PAPER §3.5]
        let new_rate = Rate::from_pps(s.flow_info(SRC).unwrap().rate_pps);
        s.handle_datagram(ms(12_000), SRC, &data(7, new_rate, 1, 11_000, false));
        assert!(s.flow_info(SRC).unwrap().congestion > 4.0);
        assert_eq!(s.stats().decreases, 1, "within the wait");
        s.handle_datagram(ms(13_500), SRC, &data(8, new_rate, 1, 12_500, false));
        assert!(s.flow_info(SRC).unwrap().congestion > 4.0);
        assert_eq!(s.stats().decreases, 2, "after the wait");
    }

    /// Every update of C_i is reported as a `Level` event (one per unique packet), and a cut
    /// as a `Congestion` event carrying the level that triggered it; duplicates report nothing.
    #[test]
    fn level_events_trace_every_update() {
        let mut s = congest(Profile::Paper);
        let events: Vec<SinkEvent> = core::iter::from_fn(|| s.poll_event()).collect();
        let levels: Vec<f64> = events
            .iter()
            .filter_map(|e| match e {
                SinkEvent::Level { source: SRC, level } => Some(*level),
                _ => None,
            })
            .collect();
        assert_eq!(levels.len(), 5, "{events:?}");
        // Packet 6 after the cut to r = 0.5/3: |ooo| = 4 over r·RTT = 1/6 → 24; C = (24 + 4.25)/2.
        for (got, want) in levels.iter().zip([0.0, 1.0, 2.5, 4.25, 14.125]) {
            assert!(crate::rcrt::abs(got - want) < 1e-9, "{levels:?}");
        }
        // The cut follows the level of packet 5, with the same value.
        let cut = events.iter().position(|e| matches!(e, SinkEvent::Congestion { .. })).expect("a cut");
        let before = events[..cut].iter().rev().find_map(|e| match e {
            SinkEvent::Level { level, .. } => Some(*level),
            _ => None,
        });
        assert!(matches!(events[cut], SinkEvent::Congestion { source: SRC, level } if Some(level) == before));
        // A duplicate of 6 is not unique: counted as a duplicate, no new level.
        let dups = s.stats().duplicates;
        s.handle_datagram(ms(20_000), SRC, &data(6, Rate::from_pps(0.5), 1, 19_000, false));
        assert_eq!(s.stats().duplicates, dups + 1);
        assert!(!core::iter::from_fn(|| s.poll_event()).any(|e| matches!(e, SinkEvent::Level { .. })));
    }

    /// Timeouts as a congestion signal (D3, D5): with repair pending and no DATA arriving, the
    /// code's RTO timer raises C_i and, from the second timeout on, cuts R without a packet to
    /// check the rate against; the paper's timer only re-sends the NACKs.
    #[test]
    fn only_the_code_profile_cuts_on_repeated_timeouts() {
        for profile in [Profile::ReferenceCode, Profile::Paper] {
            let mut s = congest_from(profile, 11_000);
            let before = s.stats().decreases;
            let _ = sent(&mut s);
            let mut fired = 0;
            while let Some(at) = s.poll_timeout().filter(|&at| at <= ms(120_000)) {
                s.handle_timeout(at);
                let _ = sent_at(&mut s, at);
                fired += 1;
                assert!(fired < 10_000);
            }
            assert!(fired >= 2, "{profile:?}: the repair timer ran ({fired})");
            let cuts = s.stats().decreases - before;
            match profile {
                Profile::ReferenceCode => assert!(cuts >= 1, "no cut after {fired} timeouts"),
                Profile::Paper => assert_eq!(cuts, 0, "the paper's timer cut R"),
            }
        }
    }

    /// RTT freeze (D12): while any flow's level is at or above L, the code takes no RTT
    /// sample (a congested network's delays would inflate the RTO); the paper keeps sampling.
    #[test]
    fn only_the_code_profile_freezes_the_rtt_under_congestion() {
        for profile in [Profile::ReferenceCode, Profile::Paper] {
            let mut s = congest_from(profile, 11_000);
            let info = s.flow_info(SRC).unwrap();
            assert!(info.congestion >= s.config().lower_threshold, "{profile:?}: congested");
            let before = info.rtt.expect("sampled");
            // A 3-s sample (fid 1 was sent at 0, its echo says 8.6 s ago at 11.6 s).
            let rate = Rate::from_pps(info.rate_pps);
            s.handle_datagram(ms(11_600), SRC, &data(7, rate, 1, 8_600, false));
            let after = s.flow_info(SRC).unwrap().rtt.unwrap();
            match profile {
                Profile::ReferenceCode => assert_eq!(after, before, "frozen"),
                Profile::Paper => assert!(after > before, "{before:?} -> {after:?}"),
            }
        }
    }

    /// The code's increase needs every flow calm: C_j < L *and* at most one packet missing
    /// (D6). With two packets missing the level is still below L here (r·RTT is large), yet
    /// nothing grows; with one missing it does.
    #[test]
    fn code_increase_waits_while_two_packets_are_missing() {
        for (next, grows) in [(4u16, false), (3, true)] {
            let (mut s, rate) = open(Profile::ReferenceCode, 5.0);
            // fid 1 (the SYN-ACK, sent at 0) echoed 20 s after it arrived: a 10-s RTT.
            s.handle_datagram(ms(30_000), SRC, &data(1, rate, 1, 20_000, false));
            assert_eq!(s.total_rate(), 2.5, "slow start's first step");
            let _ = sent_at(&mut s, ms(30_000));
            let told = s.flows[&SRC].assigned_code;
            // Past the code's adaptation wait (at most 20 s), reporting the new rate.
            s.handle_datagram(ms(60_000), SRC, &data(next, told, 1, 50_000, false));
            let info = s.flow_info(SRC).unwrap();
            assert_eq!(info.missing, usize::from(next - 2));
            assert!(info.congestion < s.config().lower_threshold, "calm by its level: {}", info.congestion);
            assert_eq!(s.total_rate() > 2.5, grows, "{} missing: R = {}", info.missing, s.total_rate());
        }
    }

    /// The code's increase clock runs from the later of the last increase and the last
    /// decrease (D10): right after a cut, a calm network still waits before it grows.
    #[test]
    fn code_increase_waits_after_a_decrease() {
        let mut s = congest_from(Profile::ReferenceCode, 31_000);
        assert_eq!(s.stats().decreases, 1);
        let cut = s.total_rate();
        let _ = sent_at(&mut s, ms(31_400));
        let told = s.flows[&SRC].assigned_code;
        // The lost packet repaired, then new ones: nothing missing, the level halves with each
        // until it is below L, all within the wait.
        s.handle_datagram(ms(31_500), SRC, &data(2, told, 1, 30_500, true));
        for seq in 7..=14u16 {
            let t = 32_000 + 100 * u64::from(seq);
            s.handle_datagram(ms(t), SRC, &data(seq, told, 1, t - 1_000, false));
        }
        let info = s.flow_info(SRC).unwrap();
        assert!(info.missing == 0 && info.congestion < s.config().lower_threshold, "{info:?}");
        assert_eq!(s.total_rate(), cut, "within the wait after the cut");
        // Past the wait (at most 20 s): the increase.
        s.handle_datagram(ms(60_000), SRC, &data(15, told, 1, 59_000, false));
        assert!(s.total_rate() > cut, "R = {}", s.total_rate());
    }

    /// Who hears a decrease (D15): the paper profile sends every flow whose rate changed its
    /// new rate; the code sends only the flow whose packet caused the cut, as its reason 2,
    /// which bypasses the feedback limiter.
    #[test]
    fn a_decrease_is_told_to_every_flow_or_to_the_trigger() {
        const OTHER: NodeId = NodeId(8);
        for (profile, t0) in [(Profile::Paper, 11_000), (Profile::ReferenceCode, 31_000)] {
            let mut s = sink(profile);
            s.handle_datagram(ms(0), SRC, &syn(0.5, 1));
            s.handle_datagram(ms(0), OTHER, &syn(0.5, 1));
            let _ = sent(&mut s);
            let mut t = t0;
            let mut out = Vec::new();
            for seq in [1, 3, 4, 5, 6] {
                let rate = Rate::from_pps(s.flow_info(SRC).unwrap().rate_pps);
                s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
                out.extend(sent_at(&mut s, ms(t)));
                t += 100;
            }
            assert_eq!(s.stats().decreases, 1, "{profile:?}");
            // Deferred feedback (the paper's RTO limit) goes out when its timer fires.
            while let Some(at) = s.poll_timeout().filter(|&at| at <= ms(t + 20_000)) {
                s.handle_timeout(at);
                out.extend(sent_at(&mut s, at));
            }
            let to_other = out
                .iter()
                .filter(|(to, b)| {
                    *to == OTHER && Repr::parse(b).is_ok_and(|r| r.kind() == wsn_wire::rcrt::Kind::Feedback)
                })
                .count();
            let by = s.stats().feedback_sent_by;
            match profile {
                Profile::Paper => {
                    assert_eq!(s.stats().feedback_triggers.decrease, 2, "both flows' rates changed");
                    assert!(to_other >= 1, "the other flow hears its new rate: {out:?}");
                }
                Profile::ReferenceCode => {
                    assert_eq!(by.decrease, 1, "the triggering packet's feedback, reason 2: {by:?}");
                    assert_eq!(to_other, 0, "the other flow learns nothing now");
                }
            }
        }
    }

    /// [CODE decrease_all_rate] the same pattern with the code's rules: ll = (|ooo| − 1) +
    /// (|missing| − 1), U = 2, clamp M ≥ 0.5.
    #[test]
    fn multiplicative_decrease_code() {
        // 31 s after the join: past the start-up lock (below), whose wait is capped at 20 s.
        let s = congest_from(Profile::ReferenceCode, 31_000);
        // Levels: 3 → 0, 4 → 2, 5 → 4, C = 0, 1, 2.5 ≥ 2 → p = 1/2 → M clamped to 0.5.
        assert_eq!(s.stats().decreases, 1);
        assert!(crate::rcrt::abs(s.total_rate() - 0.25) < 1e-9);
    }

    /// [CODE should_decrease] a cut also needs the flow's level above C_last, the level of the
    /// trigger at the last cut: with the same losses as `multiplicative_decrease_code` (a cut at
    /// packet 5, C = 2.5 ≥ U = 2), a C_last of exactly 2.5 holds the cut, one just below lets it
    /// through, and the cut records its own level as the new C_last.
    #[test]
    fn code_cut_needs_a_level_above_the_last_cuts() {
        for (c_last, cuts) in [(2.5, 0), (2.4, 1), (0.0, 1)] {
            let (mut s, rate) = open(Profile::ReferenceCode, 0.5);
            s.c_last = c_last;
            let mut t = 31_000;
            for seq in [1, 3, 4, 5] {
                s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
                t += 100;
            }
            let info = s.flow_info(SRC).unwrap();
            assert!(crate::rcrt::abs(info.congestion - 2.5) < 1e-9 && info.missing == 1, "{info:?}");
            assert_eq!(s.stats().decreases, cuts, "C_last = {c_last}");
            let want = if cuts == 1 { 2.5 } else { c_last };
            assert!(crate::rcrt::abs(s.c_last - want) < 1e-9, "C_last after: {}", s.c_last);
        }
    }

    /// [CODE rcrtransport.c] the sink's clock starts at the first connection, with the last
    /// decrease at time 0 of that clock: the same losses 11 s after the first join come within
    /// the adaptation wait (2·RTO + 3/r + 3·RTO + 2/r with a loss pending, 10 s of packet times
    /// alone at 0.5 pkt/s) and cut nothing. The paper profile has no such lock.
    #[test]
    fn code_profile_locks_decreases_after_the_first_join() {
        let s = congest_from(Profile::ReferenceCode, 11_000);
        assert_eq!(s.stats().decreases, 0);
        assert!(crate::rcrt::abs(s.total_rate() - 0.5) < 1e-9);
        assert_eq!(congest_from(Profile::Paper, 11_000).stats().decreases, 1);
    }

    /// [PAPER §3.5; spec §10 test 12] a packet reporting a stale rate never adapts.
    #[test]
    fn stale_rate_never_triggers_adaptation() {
        let (mut s, _) = open(Profile::Paper, 0.5);
        let stale = Rate(200);
        let mut t = 11_000;
        for seq in [1, 3, 4, 5, 6, 7, 8] {
            s.handle_datagram(ms(t), SRC, &data(seq, stale, 1, t - 1_000, false));
            t += 100;
        }
        assert!(s.flow_info(SRC).unwrap().congestion > 4.0);
        assert_eq!(s.stats().decreases, 0);
        assert_eq!(s.total_rate(), 0.5);
    }

    /// [PAPER §3.7; spec §10 test 13] a second trigger within RTO is deferred, not lost.
    #[test]
    fn feedback_limiter_defers() {
        let (mut s, _) = open(Profile::Paper, 1.0);
        let stale = Rate(200);
        s.handle_datagram(ms(6_000), SRC, &data(1, stale, 0, 0, false));
        assert_eq!(sent(&mut s).len(), 1, "rate differs: feedback");
        s.handle_datagram(ms(7_000), SRC, &data(2, stale, 0, 0, false));
        assert!(sent(&mut s).is_empty());
        assert_eq!(s.poll_timeout(), Some(ms(11_000)), "deferred to tLastFb + RTO");
        s.handle_timeout(ms(11_000));
        assert_eq!(sent(&mut s).len(), 1);
    }

    #[test]
    fn leave_subtracts_share_without_reallocation() {
        let mut s = Sink::new(NodeId(0), config(Profile::Paper), Box::new(DemandProportional));
        s.handle_datagram(ms(0), NodeId(1), &syn(1.0, 1));
        s.handle_datagram(ms(0), NodeId(2), &syn(3.0, 1));
        // Before any decrease each join adds min(d, 0.5): R = 1; ρ = 1 / 4.
        assert_eq!(s.total_rate(), 1.0);
        assert!(crate::rcrt::abs(s.flow_rate(NodeId(2)).unwrap() - 0.75) < 1e-9);
        let fin = bytes(&Repr::Fin { last: w(0) });
        s.handle_datagram(ms(10), NodeId(2), &fin);
        // R −= 0.75; flow 1 keeps its 0.25 (no re-allocation).
        assert!(crate::rcrt::abs(s.total_rate() - 0.25) < 1e-9);
        assert!(crate::rcrt::abs(s.flow_rate(NodeId(1)).unwrap() - 0.25) < 1e-9);
        assert_eq!(s.total_demand(), 1.0);
        s.handle_datagram(ms(20), NodeId(1), &fin);
        assert_eq!((s.total_rate(), s.total_demand(), s.flow_count()), (0.0, 0.0, 0));
    }

    /// Under the weighted policy R may exceed D = Σ d_i (AMBIG-12), and a leave does not cap it.
    #[test]
    fn weighted_leave_keeps_r_above_d() {
        let mut s = Sink::new(NodeId(0), config(Profile::Paper), Box::new(crate::rcrt::policy::Weighted));
        s.handle_datagram(ms(0), NodeId(1), &syn(0.25, 1));
        s.handle_datagram(ms(0), NodeId(2), &syn(0.25, 1));
        assert_eq!((s.total_rate(), s.total_demand()), (0.5, 0.5));
        let r1 = Rate::from_pps(s.flow_rate(NodeId(1)).unwrap());
        s.handle_datagram(ms(10_000), NodeId(1), &data(1, r1, 0, 0, false));
        assert_eq!(s.total_rate(), 1.0, "an increase above D");
        s.handle_datagram(ms(10_010), NodeId(2), &bytes(&Repr::Fin { last: w(0) }));
        assert_eq!((s.total_rate(), s.total_demand()), (0.5, 0.25), "R −= r_2 only");
    }

    /// [CODE-FILL adjust_rates_at_node_join] joins add min(d, 0.5) until the first decrease
    /// (while R ≤ 25); afterwards a newcomer's share comes out of the others'.
    #[test]
    fn joins_add_rate_until_the_first_decrease() {
        let mut s = congest(Profile::Paper);
        assert_eq!(s.stats().decreases, 1);
        let before = s.total_rate();
        s.handle_datagram(ms(20_000), NodeId(9), &syn(1.0, 1));
        assert_eq!(s.total_rate(), before.max(2.0 / 30.0));
        let mut s = sink(Profile::Paper);
        for n in 1..=60 {
            s.handle_datagram(ms(0), NodeId(n), &syn(1.0, 1));
        }
        // 51 joins bring R from 0 to 25.5; later ones add nothing.
        assert_eq!(s.total_rate(), 25.5);
    }

    #[test]
    fn set_policy_reallocates_at_once() {
        let mut s = Sink::new(NodeId(0), config(Profile::Paper), Box::new(DemandProportional));
        s.handle_datagram(ms(0), NodeId(1), &syn(0.5, 1));
        s.handle_datagram(ms(0), NodeId(2), &syn(4.0, 1));
        s.total = 3.0;
        s.set_policy(Box::new(DemandLimited));
        assert_eq!(s.policy_name(), "demand-limited");
        assert_eq!(s.flow_rate(NodeId(1)), Some(0.5));
        assert_eq!(s.flow_rate(NodeId(2)), Some(2.5));
    }

    /// A peer that raises the highest sequence number 1000 at a time cannot grow the missing and
    /// out-of-order lists without bound (paper profile): the jump is measured from the cumulative
    /// ACK, so both stay within `max_seq_jump`.
    #[test]
    fn missing_list_stays_bounded_against_a_jumping_peer() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for k in 1..=300u32 {
            let seq = ((k * 1000) % 65_536) as u16;
            s.handle_datagram(ms(1_000 + u64::from(k)), SRC, &data(seq, rate, 0, 0, false));
        }
        let info = s.flow_info(SRC).unwrap();
        assert!(info.missing + info.out_of_order <= 1_000, "{} missing, {} held", info.missing, info.out_of_order);
        // (Numbers half the 16-bit space behind read as old packets, the rest as bogus.)
        assert!(s.stats().bogus > 100, "{}", s.stats().bogus);
    }

    /// The paper's RTO is srtt + 2·rttvar, 0 after a first RTT sample of 0; the floor keeps a
    /// NACK timer from firing again and again at one instant.
    #[test]
    fn rto_has_a_floor() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        // SYN-ACK (fid 1) left at 0; DATA 2 at 1 s echoes fid 1 with 1000 ms since it: RTT 0.
        s.handle_datagram(ms(1_000), SRC, &data(2, rate, 1, 1_000, false));
        let mut sent = 0;
        let mut now = ms(1_000);
        for _ in 0..50 {
            sent += sent_at(&mut s, now).len();
            match s.poll_timeout() {
                Some(t) if t <= now + Duration::from_millis(1) => {
                    assert!(t > now || sent < 3, "timer re-armed at the same instant");
                    now = t;
                    s.handle_timeout(now);
                }
                _ => break,
            }
        }
        assert!(sent < 10, "{sent} datagrams in one instant");
    }

    /// Weights that are not finite numbers ≥ 0 are refused; huge ones still split R by weight.
    #[test]
    fn weights_are_checked_and_scaled() {
        let mut s = Sink::new(NodeId(0), config(Profile::Paper), Box::new(Weighted));
        assert!(!s.set_weight(NodeId(1), f64::INFINITY));
        assert!(!s.set_weight(NodeId(1), -1.0));
        assert!(!s.set_weight(NodeId(1), f64::NAN));
        let w = [
            FlowDemand { source: NodeId(1), demand_pps: 1.0, weight: 1e308, goodput_pps: 0.0, current_pps: 0.0 },
            FlowDemand { source: NodeId(2), demand_pps: 1.0, weight: 1e308, goodput_pps: 0.0, current_pps: 0.0 },
        ];
        assert_eq!(Weighted.allocate(2.0, &w), vec![1.0, 1.0]);
        let w = [FlowDemand { weight: f64::INFINITY, ..w[0] }, FlowDemand { weight: 1.0, ..w[1] }];
        assert_eq!(Weighted.allocate(2.0, &w), vec![0.0, 2.0]);
    }

    /// A FEEDBACK queued for a flow that a new incarnation replaces is not sent to the new one.
    #[test]
    fn a_replaced_flow_takes_its_queued_feedback_along() {
        let mut s = sink(Profile::ReferenceCode);
        s.handle_datagram(ms(0), SRC, &syn(1.0, 1));
        let out = sent(&mut s);
        let Ok(Repr::SynAck { rate, .. }) = Repr::parse(&out[0].1) else { panic!("SYN-ACK") };
        // A loss queues a FEEDBACK; before it leaves, the source reboots and opens again.
        s.handle_datagram(ms(100), SRC, &data(1, rate, 1, 50, false));
        s.handle_datagram(ms(200), SRC, &data(3, rate, 1, 150, false));
        s.handle_datagram(ms(250), SRC, &syn(1.0, 2));
        let kinds: Vec<(&str, u16)> = sent_at(&mut s, ms(250))
            .iter()
            .map(|(_, b)| match Repr::parse(b) {
                Ok(Repr::SynAck { nonce, .. }) => ("syn-ack", nonce),
                Ok(Repr::Feedback { fid, .. }) => ("feedback", u16::from(fid)),
                _ => ("other", 0),
            })
            .collect();
        assert_eq!(kinds, vec![("syn-ack", 2)]);
    }

    /// The allocation trace records the rate the source is told (its wire code), and a
    /// reallocation that leaves the code as it is records nothing: the last recorded value is the
    /// one in force (a review found traces holding a stale unrounded rate).
    #[test]
    fn allocated_events_carry_the_encoded_rate() {
        let mut s = sink(Profile::Paper);
        for n in 1..=3 {
            s.handle_datagram(ms(0), NodeId(n), &syn(1.0, 1));
        }
        let allocated = |s: &mut Sink| -> Vec<(NodeId, f64)> {
            core::iter::from_fn(|| s.poll_event())
                .filter_map(|e| match e {
                    SinkEvent::Allocated { source, rate_pps } => Some((source, rate_pps)),
                    _ => None,
                })
                .collect()
        };
        allocated(&mut s);
        // R = 1.0: one third each, 5461.33 · 2⁻¹⁴ pkt/s, sent as 5461 · 2⁻¹⁴ (UF16 exponent 3).
        s.total = 1.0;
        s.reallocate();
        let ev = allocated(&mut s);
        assert_eq!(ev.len(), 3, "{ev:?}");
        for (_, r) in &ev {
            assert_eq!(*r, 5461.0 / 16_384.0);
        }
        // R = 1.00002: 5461.44 · 2⁻¹⁴, still the same code: no event, and the trace's last value
        // stays right.
        s.total = 1.00002;
        s.reallocate();
        assert_eq!(allocated(&mut s), vec![]);
        assert_eq!(Rate::from_pps(s.flow_rate(NodeId(1)).unwrap()).pps(), 5461.0 / 16_384.0);
    }

    #[test]
    fn code_profile_quantizes_to_ms_intervals() {
        let mut s = Sink::new(NodeId(0), config(Profile::ReferenceCode), Box::new(Fair));
        for n in 1..=3 {
            s.handle_datagram(ms(0), NodeId(n), &syn(1.0, 1));
        }
        // Slow start: R = 1.5, fair 0.5 each → 2000 ms exactly; then R = 1.1 → 0.3667 pkt/s
        // → ⌊2727.3⌋ = 2727 ms.
        assert_eq!(s.flow_rate(NodeId(1)), Some(0.5));
        s.total = 1.1;
        s.reallocate();
        assert_eq!(s.flow_rate(NodeId(1)), Some(1_000.0 / 2_727.0));
    }

    // ------------------------------------------------------------ tests for FIN_RETX_WAIT

    /// [PAPER §3.8; spec §10 test 10] trailing losses found at teardown, repaired, FIN-ACK.
    #[test]
    fn teardown_repairs_trailing_losses() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for seq in 1..=5 {
            s.handle_datagram(ms(6_000 + 100 * u64::from(seq)), SRC, &data(seq, rate, 0, 0, false));
        }
        s.handle_datagram(ms(7_000), SRC, &bytes(&Repr::Fin { last: w(8) }));
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.state, info.missing, info.last_recv), (FlowState::FinRetxWait, 3, 8));
        let out = sent(&mut s);
        assert_eq!(feedback(&out[0].1).4, vec![6, 7, 8]);
        for seq in 6..=8 {
            s.handle_datagram(ms(7_500), SRC, &data(seq, rate, 2, 0, true));
        }
        assert_eq!(delivered(&mut s), vec![1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(s.flow_count(), 0);
        let out = sent(&mut s);
        assert_eq!(Repr::parse(&out[0].1), Ok(Repr::FinAck { last: w(8) }));
        // A repeated FIN after the flow is gone: FIN-ACK again.
        s.handle_datagram(ms(30_000), SRC, &bytes(&Repr::Fin { last: w(8) }));
        assert_eq!(Repr::parse(&sent(&mut s)[0].1), Ok(Repr::FinAck { last: w(8) }));
        assert_eq!(s.stats().flows_closed, 1);
    }

    /// A DATA numbered past the FIN's last packet is refused as bogus (both profiles): it adds
    /// no gap the source could never fill, and the trailing repair completes the flow.
    #[test]
    fn data_past_the_fins_last_packet_is_bogus() {
        for profile in [Profile::Paper, Profile::ReferenceCode] {
            let (mut s, rate) = open(profile, 1.0);
            for seq in 1..=5 {
                s.handle_datagram(ms(6_000 + 100 * u64::from(seq)), SRC, &data(seq, rate, 0, 0, false));
            }
            s.handle_datagram(ms(7_000), SRC, &bytes(&Repr::Fin { last: w(7) }));
            let _ = sent(&mut s);
            let bogus = s.stats().bogus;
            s.handle_datagram(ms(7_200), SRC, &data(9, rate, 2, 0, false));
            assert_eq!(s.stats().bogus, bogus + 1, "{profile:?}");
            let info = s.flow_info(SRC).unwrap();
            assert_eq!((info.state, info.missing, info.last_recv), (FlowState::FinRetxWait, 2, 7), "{profile:?}");
            for seq in 6..=7 {
                s.handle_datagram(ms(7_500), SRC, &data(seq, rate, 2, 0, true));
            }
            assert_eq!(delivered(&mut s), vec![1, 2, 3, 4, 5, 6, 7], "{profile:?}");
            assert_eq!(s.flow_count(), 0, "{profile:?}: closed once 6 and 7 arrived");
        }
    }

    #[test]
    fn output_is_paced() {
        let cfg = SinkConfig { tx_spacing: Duration::from_millis(20), ..SinkConfig::paper() };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        for n in 1..=3 {
            s.handle_datagram(ms(0), NodeId(n), &syn(1.0, 1));
        }
        assert!(s.poll_transmit(ms(0)).is_some());
        assert!(s.poll_transmit(ms(0)).is_none(), "20 ms apart");
        assert_eq!(s.poll_timeout(), Some(ms(20)));
        assert!(s.poll_transmit(ms(20)).is_some());
        assert!(s.poll_transmit(ms(45)).is_some());
        assert!(s.poll_transmit(ms(100)).is_none(), "empty");
    }

    /// A SYN-ACK that waits behind others in the paced outbox is built when it leaves: its send
    /// time T is the moment it leaves (so the handshake's RTT sample leaves out the wait), and
    /// it carries the rate assigned by then, after the later joins.
    #[test]
    fn syn_ack_is_built_when_it_leaves() {
        let cfg = SinkConfig { tx_spacing: Duration::from_millis(20), ..SinkConfig::paper() };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        for n in 1..=3 {
            s.handle_datagram(ms(0), NodeId(n), &syn(1.0, 1));
        }
        let share = Rate::from_pps(s.flow_rate(NodeId(1)).unwrap());
        let mut out = Vec::new();
        for at in [0, 20, 40] {
            out.push(s.poll_transmit(ms(at)).expect("one SYN-ACK per 20 ms"));
        }
        for (k, (to, b)) in out.iter().enumerate() {
            assert_eq!(*to, NodeId(k as u16 + 1));
            // Every SYN-ACK, the first one included, carries the share of three flows.
            assert!(matches!(Repr::parse(b), Ok(Repr::SynAck { fid: 1, rate, .. }) if rate == share), "{k}");
        }
        // Node 3 answers 100 ms after its SYN-ACK left, 50 ms of which it held the feedback.
        s.handle_datagram(ms(140), NodeId(3), &data(1, share, 1, 50, false));
        assert_eq!(s.flow_info(NodeId(3)).unwrap().rtt, Some(Duration::from_millis(50)));
    }

    #[test]
    fn idle_flow_expires() {
        let (mut s, _) = open(Profile::Paper, 1.0);
        assert_eq!(s.poll_timeout(), Some(ms(300_000)));
        s.handle_timeout(ms(300_000));
        assert_eq!(s.flow_count(), 0);
        assert_eq!(s.stats().flows_expired, 1);
        let (s, _) = open(Profile::ReferenceCode, 1.0);
        assert_eq!(s.poll_timeout(), None, "the code has no idle timeout");
    }

    /// Run the sink's timers up to `until`; returns the datagrams it sent meanwhile.
    fn run_to(s: &mut Sink, until: u64) -> Vec<(NodeId, std::vec::Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(at) = s.poll_timeout().filter(|&at| at <= ms(until)) {
            s.handle_timeout(at);
            out.extend(sent_at(s, at));
        }
        out
    }

    fn deleted(s: &mut Sink) -> bool {
        core::iter::from_fn(|| s.poll_event()).any(|e| e == SinkEvent::FlowDeleted { source: SRC })
    }

    /// [CODE rcrtransport_delete_tid; spec §2.18.4] closing a flow that has received no DATA
    /// deletes it at once; closing an unknown source reports false.
    #[test]
    fn closing_a_flow_without_data_deletes_it_at_once() {
        for profile in [Profile::Paper, Profile::ReferenceCode] {
            let (mut s, _) = open(profile, 0.5);
            let _ = core::iter::from_fn(|| s.poll_event()).count();
            assert!(!s.close_flow(ms(1_000), NodeId(99)));
            assert!(s.close_flow(ms(1_000), SRC));
            assert!(deleted(&mut s), "{profile:?}");
            assert_eq!((s.flow_count(), s.stats().flows_deleted), (0, 1));
            assert_eq!(s.total_rate(), 0.0);
        }
    }

    /// [CODE RCRT_Timer_fired; spec §2.18.2, §2.18.4] a closed flow that has received DATA is
    /// deleted at the fifth 60-s expiry in a row; a new unique packet restarts the count; the
    /// expiries send nothing.
    #[test]
    fn a_closed_flow_is_deleted_after_five_silent_minutes() {
        // (profile, a new packet at 150 s, the paper profile's idle timeout on)
        for (profile, late_packet, idle) in [
            (Profile::ReferenceCode, false, false),
            (Profile::ReferenceCode, true, false),
            (Profile::Paper, false, false),
            (Profile::Paper, false, true),
        ] {
            let (mut s, rate) = open(profile, 0.5);
            if !idle {
                s.cfg.idle_timeout = None;
            }
            s.handle_datagram(ms(2_000), SRC, &data(1, rate, 1, 1_000, false));
            let _ = run_to(&mut s, 10_000);
            let _ = core::iter::from_fn(|| s.poll_event()).count();
            assert!(s.close_flow(ms(10_000), SRC));
            assert_eq!(s.poll_timeout(), Some(ms(70_000)), "{profile:?}: the 60-s timer");
            let mut out = run_to(&mut s, 130_000);
            assert!(!deleted(&mut s) && s.flow_count() == 1, "{profile:?}: deleted after two expiries");
            // The fifth expiry at 310 s; with the paper's idle timeout on, that comes first
            // (300 s after the last DATA) and counts as a deletion too.
            let mut end = if idle { 302_000 } else { 310_000 };
            if late_packet {
                // A new unique packet at 150 s: the count starts again.
                s.handle_datagram(ms(150_000), SRC, &data(2, rate, 1, 149_000, false));
                let _ = sent_at(&mut s, ms(150_000));
                end = 430_000;
                out.extend(run_to(&mut s, 310_000));
                assert!(!deleted(&mut s), "deleted on the old schedule despite the packet at 150 s");
            } else {
                out.extend(run_to(&mut s, end - 1_000));
                assert!(!deleted(&mut s), "{profile:?}: deleted before {end} ms");
            }
            out.extend(run_to(&mut s, end));
            assert!(out.is_empty(), "{profile:?}: the timer sent {out:?}");
            assert!(deleted(&mut s), "{profile:?}: not deleted by {end} ms");
            assert_eq!((s.flow_count(), s.stats().flows_deleted, s.stats().flows_expired), (0, 1, 0));
            // Gone for good: not kept for revival (`revive_expired`).
            s.handle_datagram(ms(end + 1_000), SRC, &data(3, rate, 1, 1_000, false));
            assert_eq!((s.flow_count(), s.stats().flows_revived), (0, 0), "{profile:?}");
        }
    }

    /// A closed flow with repair pending stops re-sending its NACKs (spec §2.18.2 step 2 stops
    /// before the feedback), and falls silent into deletion.
    #[test]
    fn a_closed_flow_stops_its_repair() {
        let (mut s, rate) = open(Profile::ReferenceCode, 0.5);
        for (seq, t) in [(1u16, 31_000u64), (3, 31_100)] {
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
        }
        let _ = sent_at(&mut s, ms(31_100));
        assert_eq!(s.flow_info(SRC).unwrap().missing, 1);
        // Open: the timer re-sends the NACK.
        let mut open_copy = {
            let (mut c, rate) = open(Profile::ReferenceCode, 0.5);
            for (seq, t) in [(1u16, 31_000u64), (3, 31_100)] {
                c.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
            }
            let _ = sent_at(&mut c, ms(31_100));
            c
        };
        assert!(!run_to(&mut open_copy, 100_000).is_empty(), "an open flow re-sends its NACKs");
        s.close_flow(ms(31_200), SRC);
        assert!(run_to(&mut s, 400_000).is_empty(), "a closed flow re-sent its NACKs");
        assert!(deleted(&mut s));
    }

    /// A slow source that keeps being slowed down is silent for longer than ten intervals: each
    /// slow-down it receives restarts its pacing and takes a token (spec §3.4). The idle
    /// timeout waits ten intervals beyond what the unheard slow-downs explain, and forgets them
    /// when a new (not retransmitted) DATA arrives.
    #[test]
    fn idle_timeout_allows_for_unheard_slow_downs() {
        let (mut s, first) = open(Profile::Paper, 1.0);
        let slow = Rate::from_pps(1.0 / 128.0);
        assert!(first.pps() > 0.1, "{first:?}");
        assert_eq!(slow.pps(), 1.0 / 128.0);
        let flow = s.flows.get_mut(&SRC).unwrap();
        // The SYN-ACK at 0 was the first slow-down (from no rate), then three more.
        for (at, pps) in
            [(10_000, first.pps() / 2.0), (20_000, 1.0 / 128.0), (30_000, 2.0 / 128.0), (40_000, 1.0 / 128.0)]
        {
            flow.assigned_code = Rate::from_pps(pps);
            flow.told(ms(at));
        }
        assert_eq!(flow.slowdowns_unheard, 4, "the speed-up at 30 s does not count");
        // Ten intervals of 128 s after the last hearing would be 1280 s; the four slow-downs
        // explain silence until about 40 s + 5 × 128 s, and ten intervals more are allowed.
        let flow = s.flows.get(&SRC).unwrap();
        assert_eq!(s.idle_deadline(flow), Some(ms(40_000 + 15 * 128_000)));
        s.handle_timeout(ms(1_500_000));
        assert_eq!(s.flow_count(), 1, "not idle yet");
        // A retransmission is not paced by the bucket: the source is alive, but its deficit
        // may still hold, so the slow-downs still count.
        s.handle_datagram(ms(1_550_000), SRC, &data(1, slow, 1, 1_000, true));
        assert_eq!(s.flows.get(&SRC).unwrap().slowdowns_unheard, 4);
        // A new DATA at 1600 s: back to ten intervals after it.
        s.handle_datagram(ms(1_600_000), SRC, &data(2, slow, 1, 1_000, false));
        let flow = s.flows.get(&SRC).unwrap();
        assert_eq!(flow.slowdowns_unheard, 0);
        assert_eq!(s.idle_deadline(flow), Some(ms(1_600_000 + 1_280_000)));
    }

    /// A dead source keeps being told slow-downs while R moves (the paper profile notifies
    /// every flow at a cut); the idle timeout still releases it, at most 139 intervals of its
    /// slowest rate after it was last heard.
    #[test]
    fn dead_flow_expires_although_slow_downs_continue() {
        let (mut s, first) = open(Profile::Paper, 1.0);
        let half = Rate::from_pps(first.pps() / 2.0);
        let iv = Duration::from_secs_f64(1.0 / half.pps());
        // A cut every second, each told as a slow-down, then a raise; the source never answers.
        let mut t = ms(0);
        let mut told = 0;
        while s.flow_count() == 1 && t < ms(48 * 3_600_000) {
            t += Duration::from_secs(1);
            s.handle_timeout(t);
            let Some(flow) = s.flows.get_mut(&SRC) else { break };
            flow.assigned_code = half;
            flow.told(t);
            flow.assigned_code = first;
            flow.told(t + Duration::from_millis(1));
            told += 1;
        }
        assert_eq!(s.flow_count(), 0, "a dead flow must be released");
        assert_eq!(s.stats().flows_expired, 1);
        // Released by the bound: 139 intervals of its slowest rate after its last hearing
        // (at 0), within one step; without the bound the deadline kept moving ahead.
        let bound = Instant::ZERO + Duration::from_secs(300).max(iv.saturating_mul(139));
        assert!(t >= bound && t <= bound + Duration::from_secs(1), "released at {t:?}, bound {bound:?}");
        assert!(told > 128, "{told} slow-downs told");
        // A retransmission brings the flow back but does not show the deficit gone.
        s.handle_datagram(t + Duration::from_secs(1), SRC, &data(1, half, 1, 1_000, true));
        assert_eq!(s.flow_count(), 1, "revived");
        assert!(s.flows.get(&SRC).unwrap().slowdowns_unheard > 0, "the count survives the revival");
    }

    /// Known problem 2 of docs/rcrt.md: a source cut off (route black hole) for longer than
    /// the idle timeout is released, but its DATA is not then dropped for ever: the flow comes
    /// back with its sequence state, delivers in order from where it stopped, NACKs what was
    /// lost meanwhile, and gets a rate again. [SinkConfig::revive_expired]
    #[test]
    fn expired_flow_is_revived_by_its_data() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for seq in 1..=3u16 {
            s.handle_datagram(ms(u64::from(seq) * 2_000), SRC, &data(seq, rate, 1, 1_000, false));
        }
        assert_eq!(delivered(&mut s), vec![1, 2, 3]);
        let _ = sent(&mut s);
        // Silence (the source is cut off): the idle timeout releases the flow.
        let mut idle_at = ms(6_000);
        while s.flow_count() > 0 {
            idle_at = s.poll_timeout().expect("idle deadline");
            s.handle_timeout(idle_at);
            let _ = sent(&mut s);
        }
        assert!(idle_at >= ms(306_000), "{idle_at:?}");
        assert_eq!(s.total_rate(), 0.0, "its share of R is released");
        assert_eq!(s.stats().flows_expired, 1);
        // Its route comes back: packets 4 and 5 were lost in the black hole, 6 arrives.
        let t = idle_at + Duration::from_secs(60);
        s.handle_datagram(t, SRC, &data(6, rate, 1, 1_000, false));
        assert_eq!(s.flow_count(), 1, "the flow is back");
        assert_eq!(s.stats().flows_revived, 1);
        assert_eq!(s.stats().unknown_flow, 0);
        assert!(s.flow_rate(SRC).is_some_and(|r| r > 0.0));
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.cack, info.missing, info.out_of_order), (3, 2, 1));
        let out = sent(&mut s);
        assert_eq!(out.len(), 1, "new loss: a NACK");
        let (_, _, _, cack, nacks) = feedback(&out[0].1);
        assert_eq!((cack, nacks), (3, vec![4, 5]));
        for seq in [4u16, 5] {
            s.handle_datagram(t + Duration::from_secs(1), SRC, &data(seq, rate, 2, 10, true));
        }
        assert_eq!(delivered(&mut s), vec![4, 5, 6], "in order, exactly once, from where it stopped");
        // Without the option, the same DATA is dropped as for an unknown flow (spec §2.4 step 2).
        let cfg = SinkConfig { revive_expired: false, ..config(Profile::Paper) };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        s.handle_datagram(ms(0), SRC, &syn(1.0, 1));
        let _ = sent(&mut s);
        let idle_at = s.poll_timeout().unwrap();
        s.handle_timeout(idle_at);
        s.handle_datagram(idle_at + Duration::from_secs(1), SRC, &data(1, rate, 1, 1_000, false));
        assert_eq!((s.flow_count(), s.stats().unknown_flow), (0, 1));
        // A new incarnation (another nonce) replaces the released state instead of reviving it.
        let (mut s, _) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(2_000), SRC, &data(1, rate, 1, 1_000, false));
        let idle_at = s.poll_timeout().unwrap();
        s.handle_timeout(idle_at);
        s.handle_datagram(idle_at + Duration::from_secs(1), SRC, &syn(1.0, 2));
        assert_eq!(s.stats().flows_revived, 0);
        assert_eq!(s.flow_info(SRC).unwrap().cack, 0, "a fresh flow");
    }

    /// Packets 1–3 of a paper-profile flow, then `bogus` (a datagram the checks refuse) at
    /// 100 s if given, then silence until the idle timeout releases the flow: the sink, the
    /// flow's rate and the release time.
    fn released_after(bogus: Option<&[u8]>) -> (Sink, Rate, Instant) {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for seq in 1..=3u16 {
            s.handle_datagram(ms(u64::from(seq) * 2_000), SRC, &data(seq, rate, 1, 1_000, false));
        }
        let _ = (delivered(&mut s), sent(&mut s));
        if let Some(b) = bogus {
            s.handle_datagram(ms(100_000), SRC, b);
            assert_eq!(s.stats().bogus, 1);
        }
        let mut idle_at = ms(0);
        while s.flow_count() > 0 {
            idle_at = s.poll_timeout().expect("idle deadline");
            s.handle_timeout(idle_at);
            let _ = sent(&mut s);
        }
        (s, rate, idle_at)
    }

    /// A DATA the sanity checks refuse (here 2,000 beyond the highest number, past the paper
    /// profile's sanity jump of 1,000) is not heard from the connection: it neither postpones
    /// the idle timeout of a live flow nor revives a released one (it used to do both before
    /// being refused); a good DATA then revives the flow.
    #[test]
    fn a_bogus_data_neither_keeps_a_flow_alive_nor_revives_it() {
        let rate = open(Profile::Paper, 1.0).1;
        let bogus = data(2_003, rate, 1, 1_000, false);
        let (_, _, quiet) = released_after(None);
        let (mut s, rate, idle_at) = released_after(Some(&bogus));
        assert_eq!(idle_at, quiet, "the bogus DATA postponed the idle timeout");
        let t = idle_at + Duration::from_secs(10);
        s.handle_datagram(t, SRC, &bogus);
        assert_eq!((s.flow_count(), s.stats().flows_revived, s.stats().bogus), (0, 0, 2), "revived by a bogus DATA");
        s.handle_datagram(t, SRC, &data(4, rate, 1, 1_000, false));
        assert_eq!((s.flow_count(), s.stats().flows_revived), (1, 1));
        assert_eq!(delivered(&mut s), vec![4]);
    }

    /// The same for a FIN the check refuses (one naming a packet behind those received): it
    /// neither postpones the idle timeout nor revives the released flow; a good FIN then
    /// revives and closes it.
    #[test]
    fn a_bogus_fin_neither_keeps_a_flow_alive_nor_revives_it() {
        let bogus = bytes(&Repr::Fin { last: w(2) });
        let (_, _, quiet) = released_after(None);
        let (mut s, _, idle_at) = released_after(Some(&bogus));
        assert_eq!(idle_at, quiet, "the bogus FIN postponed the idle timeout");
        let t = idle_at + Duration::from_secs(10);
        s.handle_datagram(t, SRC, &bogus);
        assert_eq!((s.flow_count(), s.stats().flows_revived, s.stats().bogus), (0, 0, 2), "revived by a bogus FIN");
        assert!(sent(&mut s).is_empty(), "no FIN-ACK for a refused FIN");
        s.handle_datagram(t, SRC, &bytes(&Repr::Fin { last: w(3) }));
        assert_eq!(s.stats().flows_revived, 1);
        assert_eq!(Repr::parse(&sent(&mut s)[0].1), Ok(Repr::FinAck { last: w(3) }));
        assert_eq!(s.flow_count(), 0, "nothing missing: closed");
    }

    /// A flow released while repair was pending (NACK_WAIT) and revived by a DATA that fires no
    /// feedback trigger (the next new packet, at the rate the revival assigns again) gets its
    /// NACK re-send timer back (spec §2.17.5: it runs while repair is pending): the NACK for the
    /// hole goes out one RTO later. Before, the timer stayed off and the hole waited for some
    /// other trigger (here: none until the idle timeout, 300 s later).
    #[test]
    fn a_revived_flow_with_repair_pending_resends_its_nacks() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        for (t, seq) in [(2_000, 1u16), (4_000, 2), (6_000, 3), (8_000, 5)] {
            // Echoes of the SYN-ACK (fid 1, sent at 0) 1 s after it arrived: RTT 1 s.
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
        }
        assert_eq!(feedback(&sent_at(&mut s, ms(8_000))[0].1).4, vec![4]);
        // A black hole: the NACKs are re-sent every RTO until the idle timeout releases the flow.
        let mut t = ms(8_000);
        while s.flow_count() > 0 {
            t = s.poll_timeout().expect("a timer");
            s.handle_timeout(t);
            let _ = sent_at(&mut s, t);
        }
        assert_eq!(s.stats().flows_expired, 1);
        // The route is back: the next new packet revives the flow, at the same rate (R = 0 after
        // the expiry, so the join gives it min(d, 0.5) again), without any feedback trigger.
        let back = t + Duration::from_secs(10);
        s.handle_datagram(back, SRC, &data(6, rate, 1, 1_000, false));
        assert!(sent_at(&mut s, back).is_empty(), "no trigger fired");
        let info = s.flow_info(SRC).unwrap();
        assert_eq!((info.state, info.missing, Rate::from_pps(info.rate_pps)), (FlowState::NackWait, 1, rate));
        let rto = info.rto;
        assert_eq!(s.poll_timeout(), Some(back + rto), "the NACK timer runs again");
        s.handle_timeout(back + rto);
        let out = sent_at(&mut s, back + rto);
        assert_eq!(out.len(), 1);
        assert_eq!(feedback(&out[0].1).4, vec![4], "the hole is NACKed again");
    }

    /// Reference code: a hole skipped by delivery counts once in `given_up` (the numbers never
    /// delivered), whether or not its NACK had been deleted before (`nacks_abandoned`); before,
    /// both added to `given_up` (144 for these 97 numbers).
    #[test]
    fn given_up_counts_each_skipped_number_once() {
        let (mut s, rate) = open(Profile::ReferenceCode, 1.0);
        let mut t = 100;
        let mut got = Vec::new();
        for seq in [1u16, 3, 100, 200, 250, 300] {
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 0, 0, false));
            sent_at(&mut s, ms(t));
            got.extend(delivered(&mut s));
            t += 100;
        }
        // 250 is 200 past the out-of-order head 3 (hole 2 skipped), 300 past 100 (holes
        // 4..=99 skipped; D21).
        assert_eq!(got, vec![1, 3, 100]);
        assert_eq!(s.stats().given_up, 97, "2 and 4..=99");
        assert!(s.stats().nacks_abandoned > 0, "{:?}", s.stats());
    }

    // ------------------------------------------------- tests from the test-quality audit

    /// [PAPER §3.4] congested means C_i > U, strictly: C_i = U = 4 exactly cuts nothing, and
    /// the next packet, above it, cuts. RTT 250 ms at r = 0.5 gives r·RTT = 1/8, so one held
    /// packet makes the level 8 and C = 8/2 = 4.
    #[test]
    fn paper_cut_needs_a_level_strictly_above_u() {
        let (mut s, rate) = open(Profile::Paper, 0.5);
        s.handle_datagram(ms(11_000), SRC, &data(1, rate, 1, 10_750, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_millis(250)));
        s.handle_datagram(ms(11_100), SRC, &data(3, rate, 1, 10_850, false));
        assert_eq!(s.flow_info(SRC).unwrap().congestion, 4.0);
        assert_eq!(s.stats().decreases, 0, "C = U cut R");
        s.handle_datagram(ms(11_200), SRC, &data(4, rate, 1, 10_950, false));
        assert!(s.flow_info(SRC).unwrap().congestion > 4.0);
        assert_eq!(s.stats().decreases, 1, "C > U past the wait cut nothing");
    }

    /// [PAPER §3.4–3.5] R grows only while every flow is calm (C_j < L = 1): a calm flow's
    /// packet past the wait grows nothing while another flow's level is at L, and grows R once
    /// that flow's repair has brought its level below L.
    #[test]
    fn paper_increase_needs_every_flow_calm() {
        const OTHER: NodeId = NodeId(8);
        let mut s = sink(Profile::Paper);
        s.handle_datagram(ms(0), SRC, &syn(5.0, 1));
        s.handle_datagram(ms(0), OTHER, &syn(5.0, 1));
        let _ = sent(&mut s);
        let rate = Rate::from_pps(0.5);
        assert_eq!((s.total_rate(), s.flows[&SRC].assigned_code, s.flows[&OTHER].assigned_code), (1.0, rate, rate));
        // SRC: 1 arrives, 2 is lost, 3 is held. RTT 1 s, so r·RTT = 0.5, level 2, C = 1 = L.
        // (Within the wait of 2 × OTHER's default 5-s RTT since the joins: no decision.)
        s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0, false));
        s.handle_datagram(ms(1_100), SRC, &data(3, rate, 1, 100, false));
        assert_eq!(s.flow_info(SRC).unwrap().congestion, 1.0);
        // OTHER, calm, past the wait: no increase while SRC is at L.
        s.handle_datagram(ms(11_000), OTHER, &data(1, rate, 0, 0, false));
        assert_eq!(s.flow_info(OTHER).unwrap().congestion, 0.0);
        assert_eq!((s.total_rate(), s.stats().increases), (1.0, 0), "R grew with a flow at L");
        // SRC's repair (a retransmission, which adapts nothing) halves its C to 0.5 < L; then
        // OTHER's next packet grows R by A = 0.5.
        s.handle_datagram(ms(11_100), SRC, &data(2, rate, 1, 10_100, true));
        assert_eq!(s.flow_info(SRC).unwrap().congestion, 0.5);
        s.handle_datagram(ms(11_200), OTHER, &data(2, rate, 0, 0, false));
        assert_eq!((s.total_rate(), s.stats().increases), (1.5, 1));
    }

    /// [CODE is_feedback_time_ok] a limited trigger of the reference code (here a differing
    /// rate, its coin set to always) passes at once when the source has echoed the newest
    /// feedback id, and otherwise waits 2·RTO + 2/r after the last feedback (the SYN-ACK at 0,
    /// with an RTO of 5 s or 600 ms that is far more than 1 s).
    #[test]
    fn code_limited_trigger_passes_once_the_newest_fid_is_echoed() {
        for echoed in [false, true] {
            let cfg = SinkConfig { feedback_probability: 1.0, ..config(Profile::ReferenceCode) };
            let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
            s.handle_datagram(ms(0), SRC, &syn(5.0, 1));
            assert_eq!(sent(&mut s).len(), 1, "the SYN-ACK, fid 1");
            let (fid, since) = if echoed { (1, 500) } else { (0, 0) };
            s.handle_datagram(ms(1_000), SRC, &data(1, Rate(200), fid, since, false));
            assert_ne!(s.flows[&SRC].assigned_code, Rate(200));
            let out = sent_at(&mut s, ms(1_000));
            assert_eq!(out.len(), usize::from(echoed), "echoed fid 1: {echoed}");
            assert_eq!(s.stats().feedback_sent_by.rate_differs, u64::from(echoed));
        }
    }

    /// The RTT scheme's bounds (spec §2.8): a sample over 30 s is discarded (the fid stays
    /// recorded), one of exactly 30 s is taken, and an echo whose time at the source equals the
    /// time since the feedback left is possible and gives a sample of 0; only a longer one is
    /// impossible (`rtt_and_rto_update`).
    #[test]
    fn rtt_samples_of_zero_and_30_s_are_taken_longer_ones_discarded() {
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(31_000), SRC, &data(1, rate, 1, 998, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, None, "a 30.002-s sample was taken");
        s.handle_datagram(ms(31_100), SRC, &data(2, rate, 1, 1_100, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_secs(30)));
        let (mut s, rate) = open(Profile::Paper, 1.0);
        s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 1_000, false));
        assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::ZERO));
    }

    /// C_i ← g·level + (1 − g)·C_i with the configured gain (spec §2.10; the scenario key
    /// `congestion_gain`): with g = 1/4 and levels 0, 2 and 4 (none, one, then two packets held
    /// at r·RTT = 0.5), C is 0, 0.5, then 1.375. (With the default g = 1/2 the two weights
    /// are equal, so only another gain tells them apart.)
    #[test]
    fn congestion_level_uses_the_configured_gain() {
        let cfg = SinkConfig { congestion_gain: 0.25, ..config(Profile::Paper) };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        s.handle_datagram(ms(0), SRC, &syn(0.5, 1));
        let _ = sent(&mut s);
        let rate = Rate::from_pps(0.5);
        let mut levels = Vec::new();
        for (t, seq) in [(1_000, 1), (1_100, 3), (1_200, 4)] {
            s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000, false));
            levels.push(s.flow_info(SRC).unwrap().congestion);
        }
        assert_eq!(levels, vec![0.0, 0.5, 1.375]);
    }

    /// The paper profile's wait between adaptations is twice the *largest* smoothed RTT of the
    /// flows (spec §2.13, AMBIG-10), the default RTT standing in for a flow without a sample:
    /// RTTs of 100 and 500 ms give 1 s, whichever flow opened first.
    #[test]
    fn paper_wait_is_twice_the_largest_rtt() {
        let other = NodeId(8);
        for (first, second) in [(SRC, other), (other, SRC)] {
            let mut s = sink(Profile::Paper);
            s.handle_datagram(ms(0), first, &syn(1.0, 1));
            s.handle_datagram(ms(0), second, &syn(1.0, 1));
            let _ = sent(&mut s);
            assert_eq!(s.paper_wait(), s.cfg.default_rtt.saturating_mul(2));
            // Samples (T‴ − T) − (T″ − T′) of 1 s − 0.9 s and 1 s − 0.5 s, echoing fid 1.
            for (src, since) in [(SRC, 900), (other, 500)] {
                let rate = s.flows[&src].assigned_code;
                s.handle_datagram(ms(1_000), src, &data(1, rate, 1, since, false));
            }
            assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_millis(100)));
            assert_eq!(s.flow_info(other).unwrap().rtt, Some(Duration::from_millis(500)));
            assert_eq!(s.paper_wait(), Duration::from_millis(1_000), "{first:?} first");
        }
    }
}

/// Checks from a mutation audit (sink34) that need the sink's private state.
#[cfg(test)]
mod audit34 {
    use super::*;
    use std::vec::Vec;

    const SRC: NodeId = NodeId(7);

    /// [idle_deadline docs: k slow-downs built since the source's last new DATA, the latest at
    /// t, keep the flow until t + (k + 11)·iv "with k ≤ 128 (the code's token is an int8_t)"]
    /// A flow at 0.25 pkt/s (iv = 4 s) last heard at 100 s (a retransmission, which leaves the
    /// count) with 200 slow-downs, the latest at 0: kept until 0 + (128 + 11)·4 s = 556 s, not
    /// 0 + 211·4 s (which the cap of 100 s + 139·4 s = 656 s would allow).
    #[test]
    fn the_slowdown_count_is_capped_at_the_token_deficit() {
        let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::paper() };
        let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
        let mut syn = vec![0; Repr::Syn { demand: Rate::from_pps(1.0), nonce: 1 }.buffer_len()];
        Repr::Syn { demand: Rate::from_pps(1.0), nonce: 1 }.emit(&mut syn);
        s.handle_datagram(Instant::ZERO, SRC, &syn);
        let _: Vec<_> = core::iter::from_fn(|| s.poll_transmit(Instant::ZERO)).collect();
        let flow = s.flows.get_mut(&SRC).unwrap();
        flow.slowest_told = Rate::from_pps(0.25);
        flow.slowdowns_unheard = 200;
        flow.last_slowdown = Some(Instant::ZERO);
        flow.last_heard = Instant::from_secs(100);
        let flow = &s.flows[&SRC];
        assert_eq!(s.idle_deadline(flow), Some(Instant::from_secs(556)));
    }
}
