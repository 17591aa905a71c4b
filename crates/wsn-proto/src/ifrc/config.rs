//! IFRC parameters, with the paper's values and the authors' code's values.

/// Most thresholds U(0) … U(K) the ladder may hold (K ≤ 15). The paper's ladder converges to
/// U(0) + 2I, so more than a handful of rungs never differ. [DERIVED: U(k) tends to U(0) + 2I]
pub const MAX_THRESHOLDS: usize = 16;

/// Which behaviour the agent follows: `Paper` is the paper's algorithm and Table 1, gaps filled
/// with the spec's recommendations; `ReferenceCode` the numbers and node-local rules of the
/// authors' TinyOS-1 code (usc-ifrc), as far as the paper's header can carry them (see the module
/// docs of [`crate::ifrc`]).
pub use crate::Profile;

/// How the additive-increase constant δ is obtained from ε at run time [AMBIG-7].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeltaRule {
    /// δ = ε·r² recomputed whenever r is lowered (own halving, Rule 1, Rule 2) or slow start
    /// ends, then kept during the ramp. [AMBIG-7 → chosen (a), spec §7.2]
    PerDecrease,
    /// One global δ = ε·r̂_min², with r̂_min a configured estimate of the sawtooth trough.
    /// [AMBIG-7 option (b); spec §7.2 suggests r̂_min ≈ 0.147 pkt/s]
    Global {
        /// Estimate of the steady-state trough rate, pkt/s.
        r_min_pps: f64,
    },
}

/// When slow start ends because of the parent's rate [AMBIG-8].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartExit {
    /// In slow start Rule 1 only caps; slow start ends on an own halving, a Rule 2 constraint,
    /// or when the parent clearly left slow start: its advertised rate fell by more than a
    /// quarter and by more than one step φ. [AMBIG-8 → chosen: spec §7.4 recommendation
    /// ("the parent's rate decreased"), with the session-16 threshold; a documented deviation
    /// from the literal text]
    Recommended,
    /// Literal [PAPER §4.1.3]: slow start ends as soon as r ≥ the parent's rate.
    Literal,
}

/// How snooped congestion is shared (Rule 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Rule 2 fires when a neighbour (or a neighbour's congested child) crosses a *new*
    /// threshold, inferred from the advertised average queue. [PAPER §4.1.2; spec §6.3]
    Crossing,
    /// Simpler variant: every heard packet of a congested neighbour (or with a congested child)
    /// with a lower rate pins the rate to it. [spec §6.3, sensitivity variant]
    Pinned,
}

/// How a threshold comparison is made [AMBIG-3].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdTest {
    /// avg > U(k) crosses upward, avg < L leaves congestion. [AMBIG-3 → chosen: spec §4.4]
    Strict,
    /// ⌊avg⌋ ≥ U(k) crosses upward, ⌊avg⌋ < L leaves congestion. [CODE usc-ifrc:
    /// RateControlM.nc checkQueue, QueuedSendM.nc getOccupancy]
    FlooredInclusive,
}

/// How the EWMA of the queue length is computed and kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueAverage {
    /// Binary floating point: avg ← (1 − w_q)·avg + w_q·q, unrounded. [PAPER §4.1.1]
    Float,
    /// The authors' integer arithmetic: the average is kept as a whole number Q of
    /// 1/[`FIXED_POINT_SCALE`] packet and the weight as a whole number a = w_q·100 of hundredths
    /// (ALPHA); each update is Q ← ⌊((100 − a)·Q + a·100·q) / 100⌋, so the remainder below one
    /// hundredth is dropped every time, and the thresholds see ⌊Q / 100⌋ packets. An update moves
    /// Q by ⌊a·(100·q − Q)/100⌋, so from below a steady queue of q packets stops once the gap is
    /// under 100/a hundredths: with the code's a = 3 at Q = 100·q − 33, 0.33 packet short of q,
    /// while the float average comes within 1/512 packet of q (the header's rounding, which
    /// the thresholds see) after 274 updates from 0 at q = 8. From above, Q reaches 100·q
    /// exactly.
    /// [CODE usc-ifrc: QueuedSendM.nc calQueueLength (queueLength, uint32_t, QRESOLUTION = 100,
    /// ALPHA from the Makefile) and QueueControl.getOccupancy (queueLength / QRESOLUTION);
    /// RateControlM.nc checkQueue compares that whole number with the thresholds]
    FixedPoint,
}

/// Steps per packet of [`QueueAverage::FixedPoint`]. [CODE usc-ifrc: QueuedSendM.nc,
/// QRESOLUTION = 100]
pub const FIXED_POINT_SCALE: u32 = 100;

/// What crossing the top threshold U(K) does to the node's own rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopThreshold {
    /// Halve, like every other threshold. [PAPER §4.1.1]
    Halve,
    /// Collapse to r_init and re-enter slow start. [CODE usc-ifrc: RateControlM.nc checkQueue,
    /// the EIGHTH → START transition]
    Collapse,
}

/// What slow start is and what congestion does to a slow-starting node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartRule {
    /// Slow start (+φ per tick) runs while r ≤ r_init and ends on a decrease or through the
    /// parent's rate (AMBIG-8); a slow-starting node that crosses a threshold halves like any
    /// other. [PAPER §4.1.3]
    Paper,
    /// The code's TCP-like slow start with a threshold ssThresh (unknown at first, BANDWIDTH in
    /// the code): slow start ends when the rate reaches ssThresh, into additive increase with
    /// δ = ε·ssThresh² (rThresh = ssThresh); a slow-starting node whose queue crosses U(0) goes
    /// to r_init + [`CODE_HALF_STEP_PPS`] in the congested mode HALF, sets ssThresh = rThresh =
    /// half its rate if ssThresh was unknown, increases additively with δ = ε·rThresh² during
    /// the epoch and goes back to slow start when it ends; a halving in additive increase sets
    /// ssThresh to the halved rate; a collapse at the top threshold or any decrease to r_init
    /// or below outside slow start puts the node in slow start with ssThresh unknown and its
    /// threshold ladder back at the bottom, so that the next check with ⌊avg⌋ ≥ U(0) is a new
    /// crossing of U(0) (the START → HALF step); and the ladder climbs at most one threshold
    /// per queue update. [CODE usc-ifrc: RateControlM.nc updateRLocal (START: rLocal ≥ ssThresh
    /// → AI, rThresh = ssThresh), checkQueue (the START case; AI/HALF/FOURTH: rThresh =
    /// ssThresh = the halved rate; EIGHTH → START with ssThresh = BANDWIDTH; the closing floor
    /// rLocal ≤ SSVALUE → START, ssThresh = BANDWIDTH; one switch case per call)]
    ///
    /// Under [`Profile::ReferenceCode`] it also implies the code's header and the rules that
    /// read it ([`IfrcConfig::code_header`]): every header carries the code extension of
    /// [`wsn_wire::ifrc`] (rThresh, ssThresh, mode, the congested child's rThresh and mode);
    /// δ = ε·rThresh² with rThresh inherited along every cut (a neighbour's, its congested
    /// child's, the parent's), in START the neighbour's or parent's ssThresh and the rates
    /// r_init + 0.0012 / 0.0013 / 0.0014; the parent rules on every received packet ("parent
    /// not in START": its rate and rThresh; "parent in START": its rate, START, its ssThresh,
    /// the tick restarted with the code's jitter), no cap or slow-start exit at the tick;
    /// additive steps of at least 10⁻⁴ pkt/s; congestion of neighbours and children read from
    /// their advertised mode (HALF and up) and Rule 2 fired by a rise of it, not by the
    /// advertised average; the base station taking the child's rThresh, mode START (r_b ≤
    /// r_init: raised to the cap) or AI with ssThresh = r_b; rates in the code's whole units
    /// of 10⁻⁴ pkt/s with its integer steps (`updateRLocal`, `incrementBSRLocal`, halvings
    /// truncated) and, at START → HALF with ssThresh known, the kept rThresh for the epoch's
    /// δ. [CODE usc-ifrc: RateControlM.nc
    /// UpdateHdr, ReceiveMsg.receive, calcParameters, IFRCRules, bsIFRCRules,
    /// incrementBSRLocal; docs/ifrc.md, session 27 (2)] Under [`Profile::Paper`] the header stays
    /// the paper's and only the node-local part above applies.
    SsThresh,
}

/// The rate a slow-starting node takes when its queue crosses U(0), above r_init, pkt/s.
/// [CODE usc-ifrc: RateControlM.nc checkQueue, rLocal = SSVALUE + 11 in units of
/// 1/RESOLUTION = 10⁻⁴ pkt/s (Makefile RESOLUTION = 10000, SSVALUE = 200)]
pub const CODE_HALF_STEP_PPS: f64 = 0.0011;

/// The rate a node in slow start takes from a congested neighbour's transition, above r_init,
/// pkt/s ([`IfrcConfig::code_header`] only). [CODE usc-ifrc: RateControlM.nc IFRCRules,
/// SSVALUE + 12]
pub const CODE_SHARE_STEP_PPS: f64 = 0.0012;

/// As [`CODE_SHARE_STEP_PPS`] for a neighbour's congested child's transition. [CODE usc-ifrc:
/// RateControlM.nc IFRCRules, SSVALUE + 13]
pub const CODE_CHILD_SHARE_STEP_PPS: f64 = 0.0013;

/// As [`CODE_SHARE_STEP_PPS`] for a parent not in START with a lower rate. [CODE usc-ifrc:
/// RateControlM.nc IFRCRules, SSVALUE + 14]
pub const CODE_PARENT_STEP_PPS: f64 = 0.0014;

/// Smallest additive step per tick, pkt/s ([`IfrcConfig::code_header`] only). [CODE usc-ifrc:
/// RateControlM.nc updateRLocal, "increment < 1 → 1" in units of 10⁻⁴ pkt/s]
pub const CODE_MIN_AI_STEP_PPS: f64 = 1e-4;

/// What makes the base station broadcast its periodic control packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BsTrigger {
    /// After `bs_m` packets *originated* by the fastest child have arrived (the fastest among
    /// the fresh children that originate; if none does, any `bs_m` packets of the fastest
    /// fresh child). [PAPER §4.1.4; AMBIG-12 → chosen: originated packets only]
    OriginatedPackets,
    /// A timer of `bs_m` / (the fastest child's rate); 10 s while that rate / `bs_m` is below
    /// r_init. [CODE usc-ifrc: RateControlM.nc beacon timer, BEACONFACTOR; calTimerVal]
    Timer,
}

/// How application slots are produced for weighted fairness [AMBIG-14].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// A separate timer with period 1/(w·r). [AMBIG-14 → chosen: spec §9.2]
    SeparateTimer,
    /// w slots back to back on every rate tick (fractional weights accumulate).
    /// [CODE usc-ifrc: RateControlM.nc SendTimer.fired, the `weight` loop]
    PerTick,
}

/// Every IFRC parameter (spec §12), with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct IfrcConfig {
    /// Which behaviour these numbers come from.
    pub profile: Profile,
    /// Lower threshold L, packets: leaving congestion. [PAPER Table 1: 4]
    pub lower_threshold: f64,
    /// First upper threshold U(0), packets. [PAPER Table 1: 8]
    pub upper_threshold: f64,
    /// Threshold increment I, packets; U(k) = U(k−1) + I/2^(k−1). [PAPER Table 1: 8; §4.1.1]
    pub threshold_increment: f64,
    /// Index K of the top threshold U(K) (thresholds U(0) … U(K)).
    /// [AMBIG-1 → chosen K = 4: {8, 16, 20, 22, 23}; CODE usc-ifrc: RateControl.h, K = 3:
    /// {8, 16, 20, 22}]
    pub top_threshold_index: usize,
    /// Comparison used for thresholds.
    pub threshold_test: ThresholdTest,
    /// What crossing the top threshold does.
    pub top_threshold_action: TopThreshold,
    /// EWMA weight w_q. [PAPER Table 1: 0.02; CODE usc-ifrc: Makefile ALPHA = 3 → 0.03]
    pub ewma_weight: f64,
    /// Arithmetic of the EWMA. [PAPER §4.1.1: a real-valued average; CODE usc-ifrc:
    /// QueuedSendM.nc calQueueLength, integer hundredths truncated at every update]
    pub queue_average: QueueAverage,
    /// Additive-increase parameter ε, 1/packet. [PAPER Table 1: 0.025; CODE usc-ifrc: Makefile
    /// EPSILON = 80 → 1/80 = 0.0125]
    pub epsilon: f64,
    /// Initial rate r_init, pkt/s; slow start runs whenever r ≤ r_init. [PAPER Table 1: 0.02]
    pub initial_rate_pps: f64,
    /// Slow-start increment φ per tick, pkt/s. [PAPER Table 1: 0.0025 = r_init/8]
    pub slow_start_increment_pps: f64,
    /// Transmit queue bound, packets (the frame held by the MAC included).
    /// [PAPER Table 1: 64; CODE usc-ifrc: QueuedSendM.nc, 64 slots of which 63 usable]
    pub queue_capacity: usize,
    /// Also update the EWMA when a packet is refused by a full queue.
    /// [CODE usc-ifrc: QueuedSendM.nc; the paper updates on insertion only, §4.1.1]
    pub ewma_on_overflow: bool,
    /// Smallest rate, pkt/s (keeps 1/r finite). [AMBIG-11 → chosen 10⁻⁴; CODE usc-ifrc:
    /// RateControlM.nc floor at r_init]
    pub min_rate_pps: f64,
    /// Largest rate, pkt/s. [AMBIG → chosen: the paper puts no cap on r_i; capped at the
    /// nominal channel rate, the base station's initial rate, which nothing can exceed; it also
    /// bounds the base station's 1/r timer]
    pub max_rate_pps: f64,
    /// A child's congested mark expires after this many of its inter-packet times without a
    /// packet. [AMBIG-6 → chosen 10]
    pub child_expiry_intervals: f64,
    /// Base station's initial pseudo-rate r_b, pkt/s. [PAPER §4.1.4: the nominal rate; DERIVED
    /// 85 from §6.2's 80–90 pkt/s; CODE usc-ifrc: Makefile BANDWIDTH → 60]
    pub bs_initial_rate_pps: f64,
    /// m: packets from the fastest child per periodic control packet.
    /// [PAPER §4.1.4: 5; CODE usc-ifrc: Makefile BEACONFACTOR = 3, as a timer]
    pub bs_m: u32,
    /// What triggers the periodic control packet.
    pub bs_trigger: BsTrigger,
    /// Copies of the immediate control packet after a child crossing.
    /// [PAPER §4.1.4: 2; CODE usc-ifrc: RateControlM.nc bsIFRCRules, 2 + 2 = 4]
    pub bs_immediate_copies: u8,
    /// Slope of the base station's additive increase, in units of δ.
    /// [PAPER §4.1.4: 1; CODE usc-ifrc: RateControlM.nc incrementBSRLocal, 2]
    pub bs_slope_factor: f64,
    /// The base station puts r_b into the child-rate field of its control packets, and the
    /// highest average queue among its congested children into the child-queue field.
    /// [PAPER §4.2: on in all experiments; AMBIG-13; CODE usc-ifrc: off, RateControlM.nc
    /// UpdateHdr]
    pub multi_bs_fix: bool,
    /// The base station raises r_b only when it sends a control packet, never on a timer of its
    /// own: at each periodic control packet by `bs_slope_factor`·δ × the time since the last
    /// raise, and right after a child's crossing lowered it by `bs_slope_factor`·δ / r_b (one
    /// period at the lowered rate), before the immediate copies go out, so that they carry the
    /// raised value. [CODE usc-ifrc: RateControlM.nc BeaconTimer.fired calls
    /// incrementBSRLocal(lastBSBeaconPeriod) before sendBeacon(1); bsIFRCRules calls
    /// incrementBSRLocal(calTimerVal(rLocal)) between its two sendBeacon(2), and the header is
    /// written when each copy reaches the head of the queue (UpdateHdr). PAPER §4.1.4: r_b
    /// "increases additively", here on its own 1/r_b timer (false)]
    /// Meant for [`BsTrigger::Timer`] (the code's): with [`BsTrigger::OriginatedPackets`] there
    /// is no periodic control timer, and r_b rises only right after cuts.
    pub bs_increase_at_control: bool,
    /// Smallest raise of r_b at a control packet, pkt/s ([`IfrcConfig::bs_increase_at_control`]
    /// only). [CODE usc-ifrc: RateControlM.nc incrementBSRLocal, "at least" RESOLUTION/1000 =
    /// 0.001 pkt/s; the paper names none: 0]
    pub bs_min_step_pps: f64,
    /// The base station sends its first periodic control packet as soon as rate control starts,
    /// then on its timer ([`BsTrigger::Timer`] only). [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired:
    /// sendBeacon(1), then BeaconTimer.start; PAPER §4.1.4 (false): the first one after m
    /// packets of the fastest child; with the timer, after its first period]
    pub bs_control_at_start: bool,
    /// δ from ε. [AMBIG-7]
    pub delta_rule: DeltaRule,
    /// Slow-start exit on the parent's rate. [AMBIG-8]
    pub slow_start_exit: SlowStartExit,
    /// Slow start and congestion in slow start: the paper's or the code's ssThresh rules.
    /// [PAPER §4.1.3: `Paper`, in both profiles; CODE usc-ifrc: RateControlM.nc updateRLocal,
    /// checkQueue: `SsThresh`, an option; with the reference-code profile it also brings the
    /// code's header and sharing rules ([`IfrcConfig::code_header`]): docs/ifrc.md, the
    /// sections marked session 27 and 27 (2)]
    pub slow_start_rule: SlowStartRule,
    /// Rule 2 variant.
    pub sharing: Sharing,
    /// An own threshold crossing does not halve when Rule 1 or 2 lowered the rate since the
    /// last tick (the level still advances); the tick's own packets are still checked under the
    /// guard, which is cleared after them. [CODE usc-ifrc: RateControlM.nc decLastCycle,
    /// SendTimer.fired: sendReady, updateRLocal, checkQueue, then decLastCycle = FALSE]
    pub skip_halving_after_sharing: bool,
    /// A received data frame is queued and the own thresholds checked before the frame's
    /// sharing rules run. [CODE usc-ifrc: RateControlM.nc ReceiveMsg.receive: Send.send, then
    /// calcParameters, checkQueue, IFRCRules; AMBIG → chosen for the paper profile: rules
    /// first (the paper gives no order; not in the spec's register of ambiguities)]
    pub rules_after_queue_check: bool,
    /// On a rate change, move the pending tick to last_tick + 1/r_new.
    /// [AMBIG-9 → chosen: yes; CODE usc-ifrc: RateControlM.nc, no (the next period only)]
    pub reschedule_on_rate_change: bool,
    /// Increase only while r is below the parent's last heard rate (no growth before the parent
    /// is heard). [CODE usc-ifrc: RateControlM.nc updateRLocal; the paper has no such gate]
    pub grow_only_below_parent: bool,
    /// How application slots are produced. [AMBIG-14]
    pub generation: Generation,
    /// Start the timers at a random phase within their first period (drawn from
    /// `ctx.random_u32()`), so nodes created together do not tick in lockstep.
    /// [AMBIG-20 → chosen: motes boot at different times; CODE usc-ifrc: RateControlM.nc,
    /// random first period]
    pub random_start_phase: bool,
    /// With `random_start_phase`: the first rate tick comes after 1/(r + jitter) with the
    /// code's jitter k·r_init/15, k drawn uniformly from 0…15 (25–50 s at r_init = 0.02 pkt/s),
    /// in the code's integer units (rates in 10⁻⁴ pkt/s, periods in whole ms), instead of at a
    /// uniform phase within 1/r. [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired,
    /// jitter = ((Random.rand() & 0xF)·SSVALUE)/0xF, SendTimer.start(calTimerVal(rLocal +
    /// jitter)); AMBIG-20 → chosen for the paper profile: a uniform phase (false)]
    pub code_first_tick: bool,
    /// Rate control starts together with the traffic: every node's rate timer and the base
    /// station's control packets begin at the first flow's start, not at boot. The driver reads
    /// this and creates the agents at that instant. Under the paper profile (false) nodes adapt
    /// from boot, silent or not [AMBIG-15 → chosen spec §9.3]. The authors' code starts its
    /// SendTimer (and at the base station its BeaconTimer) only once routing has settled, and
    /// from then every node sends on every tick, so in its runs rate control and traffic begin
    /// together [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired; ApplM.nc
    /// SendReady.sendReady]. With the code's no-growth-above-the-parent rule this matters: a
    /// controller running before any data flows lets only the base station's children grow
    /// (they hear its control packets; a deeper node hears its parent only in data), which put
    /// them about 600 s of slow start ahead of the rest in a run whose traffic started at 600 s.
    /// One start for every node, the first flow's, as the code starts every node's timer when
    /// routing settles: a node whose own flow starts later (E3's joiners) still adapts from then
    /// on while silent, as under the paper profile (a silent forwarder held at r_init would pin
    /// its active descendants there through Rule 1, spec §9.3). Rate traces still begin at 0
    /// with the starting rate, which holds until the start.
    pub start_with_traffic: bool,
}

impl Default for IfrcConfig {
    fn default() -> Self {
        IfrcConfig::for_profile(Profile::Paper)
    }
}

impl IfrcConfig {
    /// The parameters of a profile.
    pub fn for_profile(profile: Profile) -> IfrcConfig {
        let paper = IfrcConfig {
            profile,
            lower_threshold: 4.0,
            upper_threshold: 8.0,
            threshold_increment: 8.0,
            top_threshold_index: 4,
            threshold_test: ThresholdTest::Strict,
            top_threshold_action: TopThreshold::Halve,
            ewma_weight: 0.02,
            queue_average: QueueAverage::Float,
            epsilon: 0.025,
            initial_rate_pps: 0.02,
            slow_start_increment_pps: 0.0025,
            queue_capacity: 64,
            ewma_on_overflow: false,
            min_rate_pps: 1e-4,
            max_rate_pps: 85.0,
            child_expiry_intervals: 10.0,
            bs_initial_rate_pps: 85.0,
            bs_m: 5,
            bs_trigger: BsTrigger::OriginatedPackets,
            bs_immediate_copies: 2,
            bs_slope_factor: 1.0,
            multi_bs_fix: true,
            bs_increase_at_control: false,
            bs_min_step_pps: 0.0,
            bs_control_at_start: false,
            delta_rule: DeltaRule::PerDecrease,
            slow_start_exit: SlowStartExit::Recommended,
            slow_start_rule: SlowStartRule::Paper,
            sharing: Sharing::Crossing,
            skip_halving_after_sharing: false,
            rules_after_queue_check: false,
            reschedule_on_rate_change: true,
            grow_only_below_parent: false,
            generation: Generation::SeparateTimer,
            random_start_phase: true,
            code_first_tick: false,
            start_with_traffic: false,
        };
        match profile {
            Profile::Paper => paper,
            Profile::ReferenceCode => IfrcConfig {
                // [CODE usc-ifrc: RateControl.h] explicit ladder 8, 16, 20, 22.
                top_threshold_index: 3,
                // [CODE usc-ifrc: RateControlM.nc checkQueue] ⌊avg⌋ ≥ U, ⌊avg⌋ < L.
                threshold_test: ThresholdTest::FlooredInclusive,
                // [CODE usc-ifrc: RateControlM.nc checkQueue] EIGHTH at 22 → r_init, START.
                top_threshold_action: TopThreshold::Collapse,
                // [CODE usc-ifrc: Makefile ALPHA = 3 (percent)]
                ewma_weight: 0.03,
                // [CODE usc-ifrc: QueuedSendM.nc calQueueLength] integer hundredths, truncated.
                queue_average: QueueAverage::FixedPoint,
                // [CODE usc-ifrc: Makefile EPSILON = 80, δ = rThresh²/80]
                epsilon: 1.0 / 80.0,
                // [CODE usc-ifrc: QueuedSendM.nc] full when (next+1) % 64 == head.
                queue_capacity: 63,
                // [CODE usc-ifrc: QueuedSendM.nc] the EWMA also runs on a failed enqueue.
                ewma_on_overflow: true,
                // [CODE usc-ifrc: RateControlM.nc] floor: r ≤ r_init → r_init, START.
                min_rate_pps: 0.02,
                // [CODE usc-ifrc: Makefile BANDWIDTH = 600000 × 10⁻⁴ pkt/s]
                max_rate_pps: 60.0,
                bs_initial_rate_pps: 60.0,
                // [CODE usc-ifrc: Makefile BEACONFACTOR = 3; RateControlM.nc beacon timer]
                bs_m: 3,
                bs_trigger: BsTrigger::Timer,
                // [CODE usc-ifrc: RateControlM.nc bsIFRCRules] sendBeacon(2) twice.
                bs_immediate_copies: 4,
                // [CODE usc-ifrc: RateControlM.nc incrementBSRLocal] "twice as fast".
                bs_slope_factor: 2.0,
                // [CODE usc-ifrc: RateControlM.nc UpdateHdr] the real child's rate.
                multi_bs_fix: false,
                // [CODE usc-ifrc: RateControlM.nc incrementBSRLocal, called from BeaconTimer.fired
                // and bsIFRCRules only] r_b rises at control packets, at least 0.001 pkt/s.
                bs_increase_at_control: true,
                bs_min_step_pps: 0.001,
                // [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired] sendBeacon(1) at once.
                bs_control_at_start: true,
                // slow_start_rule stays `Paper` [AMBIG → chosen]: `SsThresh` with the code's header
                // and rules still differs from the code (per-sender Rule 2 candidate, no child id,
                // 10 more bytes on the air, checkQueue on queue updates only, timers at 1/r
                // rather than whole ms); see docs/ifrc.md, the sections marked session 27,
                // 27 (2) and 28.
                // [CODE usc-ifrc: RateControlM.nc decLastCycle]
                skip_halving_after_sharing: true,
                // [CODE usc-ifrc: RateControlM.nc ReceiveMsg.receive]
                rules_after_queue_check: true,
                // [CODE usc-ifrc: RateControlM.nc SendTimer] one-shot, re-armed at 1/r.
                reschedule_on_rate_change: false,
                // [CODE usc-ifrc: RateControlM.nc updateRLocal] only if rLocal < parentRLocal.
                grow_only_below_parent: true,
                // [CODE usc-ifrc: RateControlM.nc SendTimer.fired] `weight` sends per tick.
                generation: Generation::PerTick,
                // [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired starts SendTimer
                // and BeaconTimer; ApplM.nc sends on every SendReady]
                start_with_traffic: true,
                // [CODE usc-ifrc: RateControlM.nc RouteStabilizeTimer.fired] first period
                // 1/(r_init·(1 + k/15)), k = rand & 0xF.
                code_first_tick: true,
                ..paper
            },
        }
    }

    /// Threshold U(k), packets: U(0) and then U(k) = U(k−1) + I/2^(k−1) [PAPER §4.1.1].
    pub fn threshold(&self, k: usize) -> f64 {
        let mut u = self.upper_threshold;
        let mut step = self.threshold_increment;
        for _ in 0..k {
            u += step;
            step /= 2.0;
        }
        u
    }

    /// Number of thresholds in use, U(0) … U(K) (at most [`MAX_THRESHOLDS`]).
    pub fn threshold_count(&self) -> usize {
        (self.top_threshold_index + 1).min(MAX_THRESHOLDS)
    }

    /// The ladder U(0) … U(K).
    pub fn thresholds(&self) -> alloc::vec::Vec<f64> {
        (0..self.threshold_count()).map(|k| self.threshold(k)).collect()
    }

    /// The code's header extension and the rules that read it are in use:
    /// [`SlowStartRule::SsThresh`] under [`Profile::ReferenceCode`] (see there). The paper
    /// profile never sends the extension.
    pub fn code_header(&self) -> bool {
        self.slow_start_rule == SlowStartRule::SsThresh && self.profile == Profile::ReferenceCode
    }

    /// δ right after the rate was lowered to `rate`, pkt/s² [AMBIG-7].
    pub fn delta_for(&self, rate: f64) -> f64 {
        match self.delta_rule {
            DeltaRule::PerDecrease => self.epsilon * rate * rate,
            DeltaRule::Global { r_min_pps } => self.epsilon * r_min_pps * r_min_pps,
        }
    }
}

/// The paper's closed-form bounds on ε for a congested node j [PAPER §5, eqs. (5) and (6)]:
/// `(F_j / (8·U_0), 9·U_1 / (2·s̄²·F_j))`. ε must lie below both. `f_j` is the
/// contention-weighted load (rule of thumb n·ln n), `u0` and `u1` the instantaneous queue
/// lengths that lift the EWMA above U(0) and U(1) (see [`ewma_burst_tolerance`]), `s_bar` the
/// mean feedback delay in rate updates. Pure arithmetic; degenerate inputs give ∞ or NaN.
pub fn stability_bounds(f_j: f64, u0: f64, u1: f64, s_bar: f64) -> (f64, f64) {
    (f_j / (8.0 * u0), 9.0 * u1 / (2.0 * s_bar * s_bar * f_j))
}

/// The burst tolerance of the EWMA (spec §11.5): the number of packets that must arrive back
/// to back into an empty queue (avg = 0, the EWMA updated after each insertion with the queue
/// length counting the new packet) before the average exceeds `threshold`. `u32::MAX` when
/// the weight is not in (0, 1] or no burst of up to 10⁶ packets suffices.
pub fn ewma_burst_tolerance(w_q: f64, threshold: f64) -> u32 {
    if !(w_q > 0.0 && w_q <= 1.0) || threshold.is_nan() {
        return u32::MAX;
    }
    let mut avg = 0.0;
    for n in 1..=1_000_000u32 {
        avg = (1.0 - w_q) * avg + w_q * f64::from(n);
        if avg > threshold {
            return n;
        }
    }
    u32::MAX
}
