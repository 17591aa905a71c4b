//! IFRC: interference-aware fair rate control (Rangwala, Gummadi, Govindan and Psounis,
//! SIGCOMM 2006).
//!
//! **What it is.** Every sensor node keeps one FIFO queue for its own and forwarded packets and
//! an EWMA of its length. When the average crosses an upper threshold the node is congested and
//! halves its source rate r_i; closer-spaced higher thresholds halve it again; the epoch ends
//! when the average falls below a lower threshold. Every transmitted packet carries the
//! sender's rate and average queue and those of its most constrained congested child
//! ([`wsn_wire::ifrc`]). Nodes overhear these headers and apply **Rule 1** (never exceed the
//! parent's rate) and **Rule 2** (when a neighbour, or a neighbour's congested child, crosses a
//! threshold, drop to its rate). Between decreases rates grow additively by δ/r every 1/r
//! (slope δ), with a slow start (+φ per tick) at the beginning and whenever r ≤ r_init. A base
//! station keeps a pseudo-rate r_b, lowered only when one of its own children crosses a
//! threshold, and broadcasts it in control packets. Together the rules bring every potential
//! interferer of a congested node down to that node's rate (spec §0, §6.2).
//!
//! **Design.** [`IfrcAgent`] is a [`NodeAgent`](crate::agent::NodeAgent) that wraps a
//! [`CollectionForwarder`](crate::forwarder::CollectionForwarder) by composition: the
//! forwarder keeps the queue (capacity [`IfrcConfig::queue_capacity`]), forwarding, duplicate
//! suppression and delivery; the agent adds, around it:
//! - the **queue monitor**: the EWMA is updated on every insertion of a data packet, own or
//!   forwarded, detected from the forwarder's counters, with the queue length *after* the
//!   insertion (the frame held by the MAC counted) [PAPER §4.1.1; AMBIG-2, AMBIG-26];
//! - the **rate controller**: one rate timer every 1/r (moved to last_tick + 1/r_new when r
//!   changes, AMBIG-9), and a separate application-slot timer every 1/(w·r) that emits
//!   [`AgentEvent::AppSlot`](crate::agent::AgentEvent::AppSlot) (the driver answers with
//!   `send`); the starting rate and every rate change emit `RateChanged`;
//! - the **neighbour table**, filled from the header of every decoded frame (addressed,
//!   broadcast or overheard): rate, average queue, congestion inferred with the L/U(0)
//!   hysteresis, the highest level seen in the neighbour's epoch and in its reported child's,
//!   and whether it is a child (its upward data frames name this node);
//! - the **header stamping**: `send` prepends a 12-byte IFRC header (the application's protocol
//!   number inside it) and hands the packet to the forwarder with collection protocol
//!   [`PROTO_IFRC`]; `poll_frame` rewrites the header with the values current at transmission
//!   time [AMBIG-16]; at the destination the header is stripped again, so `Delivered` carries
//!   the application's protocol and bytes unchanged;
//! - the **base station** ([`Role::BaseStation`]): additive increase of r_b only, a decrease to a
//!   child's rate when that child crosses a threshold followed by `bs_immediate_copies`
//!   broadcasts, and a periodic control packet; control packets are broadcast, bypass the data
//!   queue (AMBIG-27), have priority over data, and are consumed by every receiver.
//!
//! Several base stations need nothing extra: a node knows only its own tree (its `sink`), Rule 2
//! applies to every overheard neighbour whatever its tree, and a base station's control packet
//! carries r_b in the child-rate field (the multi-BS fix, [PAPER §4.2]) and the highest average
//! queue among its congested children in the child-queue field, so that each cut of r_b shows a
//! new level to the other tree (since session 20).
//!
//! **Crossing detection** [AMBIG-4 → chosen spec §6.3]. The header carries average queues, not
//! levels. Every receiver applies the shared ladder: a neighbour is inferred congested when its
//! average exceeds U(0) and until it falls below L; Rule 2(a) fires when its level (the largest
//! k with avg > U(k)) exceeds the highest level seen in its current epoch; Rule 2(b) does the
//! same on the reported child's fields, reset when the child bit clears. A lost packet delays a
//! crossing to the next packet but does not lose it. The child's id is not carried, so a change
//! of the reported child can hide a crossing (documented limitation).
//!
//! **Choices where the paper is silent** (each cited where it is made; spec §16):
//! AMBIG-1 K = 4, one halving per newly crossed threshold; AMBIG-2 EWMA after insertion, from 0;
//! AMBIG-3 `>` and `<`; AMBIG-5 the congested child with the smallest rate; AMBIG-6 a child's
//! congested mark expires after 10 of its inter-packet times; AMBIG-7 δ = ε·r² recomputed on
//! every decrease ([`DeltaRule::PerDecrease`]; [`DeltaRule::Global`] as an option); AMBIG-8 in
//! slow start Rule 1 only caps unless the parent's rate fell by more than a quarter and more
//! than one step φ ([`SlowStartExit::Recommended`],
//! a deviation; [`SlowStartExit::Literal`] as an ablation); AMBIG-9 one 1/r timer, rescheduled
//! on rate changes; AMBIG-10 Rule 1 on every packet heard from the parent and after each own
//! increase, no cap before the parent is heard; AMBIG-11 floor 10⁻⁴ pkt/s; AMBIG-12 the base
//! station counts packets *originated* by its fastest child among the fresh children that
//! originate (a silent, stopped or removed child never paces it; with no originating child,
//! every packet of the fastest child counts), advertises avg_q = 0; AMBIG-13
//! child_rate = r_b in the base station's packets (always; receivers read it only while the
//! child-congested flag is set, which it is while a child is in a congested epoch); AMBIG-14 slots at w·r, header carries r, increase
//! on 1/r; AMBIG-15 silent nodes adapt; AMBIG-16 stamp at transmission (at `poll_frame`, and again
//! at `refresh_frame` before every MAC retransmission); AMBIG-20 periodic slots, random initial phase;
//! AMBIG-21 a parent change forgets the parent's rate; AMBIG-22 Rule 2 with r_x ≥ r is a no-op;
//! AMBIG-25 immediate copies back to back; AMBIG-27 control packets outside the queue.
//! In addition, every rate is capped at [`IfrcConfig::max_rate_pps`] (the nominal channel rate,
//! 85 pkt/s) [DERIVED: the nominal channel rate]: without it the base station's δ/r timer and r_b would grow without
//! bound while no child is congested.
//!
//! **Profiles.** [`Profile::Paper`] (the default) follows the paper and the spec's
//! recommendations. [`Profile::ReferenceCode`] follows the authors' TinyOS-1 code
//! (`tinyos-1.x/contrib/usc-ifrc`, 2006; facts collected in the project's notes) wherever
//! the difference fits this agent and the paper's header. Differences applied
//! (all `[CODE usc-ifrc: …]`):
//! - ε = 1/80 = 0.0125 (Makefile EPSILON = 80) and w_q = 0.03 (Makefile ALPHA = 3);
//! - the queue average in the code's integer arithmetic (QueuedSendM.nc calQueueLength): whole
//!   hundredths of a packet, truncated at every update, so a steady queue of q packets settles
//!   at q − 0.33 where the float average reaches q ([`QueueAverage::FixedPoint`]);
//! - ladder {8, 16, 20, 22} (RateControl.h), compared as ⌊avg⌋ ≥ U(k) and ⌊avg⌋ < L
//!   (RateControlM.nc checkQueue); reaching the top threshold collapses the rate to r_init and
//!   restarts slow start instead of halving;
//! - an own crossing does not halve if Rule 1 or 2 lowered the rate since the last tick
//!   (decLastCycle), the tick's own packets still checked under that guard;
//! - a received data frame is queued and the own thresholds checked before that frame's sharing
//!   rules run (ReceiveMsg.receive: Send.send, calcParameters, checkQueue, IFRCRules;
//!   [`IfrcConfig::rules_after_queue_check`]; the paper profile applies the rules first);
//! - queue capacity 63 (QueuedSendM.nc), and the EWMA also runs on a refused enqueue;
//! - rate floor r_init instead of 10⁻⁴ pkt/s;
//! - no growth unless r is below the parent's last heard rate (so none before the parent is
//!   heard);
//! - rate changes do not move the pending tick (one-shot timer re-armed at 1/r);
//! - weighted fairness as w slots back to back on each rate tick;
//! - rate control starts with the traffic (the driver creates the agents at the first flow's
//!   start: the code's timers start once routing has settled, and every node then sends on every
//!   tick; [`IfrcConfig::start_with_traffic`]); the paper profile adapts from boot (AMBIG-15);
//! - the first rate tick after 1/(r_init·(1 + k/15)), k uniform in 0…15 (25–50 s), in the code's
//!   whole-ms periods, instead of a uniform phase within 1/r ([`IfrcConfig::code_first_tick`]);
//! - base station: r_b starts and is capped at 60 pkt/s (BANDWIDTH), increases with slope 2δ,
//!   sends its periodic control packet on a timer of 3 / r_maxchild (BEACONFACTOR; 10 s when
//!   that rate is below 3·r_init; one as soon as rate control starts and the next 3 s later:
//!   RouteStabilizeTimer.fired, [`IfrcConfig::bs_control_at_start`]), sends 4 immediate copies
//!   after a child crossing that lowers r_b and re-arms its timer at 1/r_b, and puts the real
//!   congested child's rate, not r_b, in the child-rate field (no multi-BS fix);
//! - base station: r_b rises only at its control packets, with no timer of its own: at each
//!   periodic one by 2δ × the period that ended (at least 0.001 pkt/s), and right after a cut by
//!   2δ/r_b, before the immediate copies, which carry the raised value
//!   ([`IfrcConfig::bs_increase_at_control`]; RateControlM.nc incrementBSRLocal, called from
//!   BeaconTimer.fired and bsIFRCRules only).
//!
//! Not reproduced by the profile as it stands, because the code's header carries fields the
//! paper's does not (rThresh, ssThresh, mode, the congested child's id): δ inherited through
//! rThresh along Rule 1/2 (δ = ε·r² at the constraining rate is used instead — equal at the
//! moment of the crossing); the TCP-like ssThresh slow start (reset to ≈ r_init on congestion or
//! sharing while in slow start, climb back to ssThresh); crossing detection from the advertised
//! mode; the "parent in START" branch of Rule 1; the base station's use of the child's rThresh.
//! All of these are modelled behind [`SlowStartRule::SsThresh`], which under the reference-code
//! profile also sends the code's header extension ([`IfrcConfig::code_header`],
//! [`wsn_wire::ifrc::CodeExt`]); there rates, rThresh and ssThresh are whole units of 10⁻⁴
//! pkt/s as in the code (received ones put back on that grid, so equal rates compare equal),
//! with the integer steps of `updateRLocal` and `incrementBSRLocal` and truncated halvings
//! (session 28). It is off in both profiles (docs/ifrc.md, the sections marked session 27, 27 (2)
//! and 28: its E1 is unfair and its frames 10 bytes longer than the code's). Not
//! reproduced even there: the congested child's id (a change of the reported child counts only
//! when a report follows none); the single sticky Rule 2 candidate (a probable bug; each
//! sender's transition counts), `calcParameters`' choice of one kind of candidate (child or
//! neighbour) and its cut on any mode rise of the kept candidate; `checkQueue` on every
//! received packet (here on queue updates only); the code's whole-ms timer periods after the
//! first tick; neighbour ageing by packet count (a time-based expiry is used instead: for the header's
//! congested-child summary, the base station's pacing and, since session 21, the Rule 2
//! crossing state of a neighbour, its epoch and its child's highest level, which start afresh
//! after 10 of its inter-packet times of silence: see docs/ifrc.md, "Known gaps"); Rule 1
//! re-checked on every received packet against the stored parent rate (here: on packets from
//! the parent and after each own increase; the code's re-check also sets its no-halving guard,
//! decLastCycle, when it pulls back an increase that overshot the parent's rate, which this
//! in-tick cap does not: one fewer skipped halving in E3 of a quick run, none in E1); the
//! code's MAC beyond what the `ifrc2006` MAC preset models (its tripled backoffs, software ACKs
//! and the base station's shorter backoffs are modelled there).
//!
//! **Analysis helpers.** [`stability_bounds`] gives the paper's bounds (5) and (6) on ε and
//! [`ewma_burst_tolerance`] the burst that lifts the EWMA above a threshold (spec §11).
//!
//! **References.** Paper: S. Rangwala, R. Gummadi, R. Govindan, K. Psounis,
//! "Interference-Aware Fair Rate Control in Wireless Sensor Networks", ACM SIGCOMM 2006,
//! DOI 10.1145/1151659.1159922. Spec: `ifrc.md` of the project's shared specs (section and
//! AMBIG numbers above refer to it). Code: usc-ifrc in the TinyOS-1 contrib tree
//! (RateControlM.nc, RateControl.h, QueuedSendM.nc, Makefile). All code here is this project's
//! own.

mod agent;
mod config;

#[cfg(test)]
mod tests;

pub use agent::{IfrcAgent, IfrcStats, Mode, Role};
pub use config::{
    ewma_burst_tolerance, stability_bounds, BsTrigger, DeltaRule, Generation, IfrcConfig, Profile, QueueAverage,
    Sharing, SlowStartExit, SlowStartRule, ThresholdTest, TopThreshold, CODE_CHILD_SHARE_STEP_PPS, CODE_HALF_STEP_PPS,
    CODE_MIN_AI_STEP_PPS, CODE_PARENT_STEP_PPS, CODE_SHARE_STEP_PPS, FIXED_POINT_SCALE, MAX_THRESHOLDS,
};

/// Collection-header protocol number of IFRC data and control packets (the IFRC header follows
/// the collection header). [AMBIG-17 → chosen: 0x03, after best effort and RCRT (0x02)]
pub const PROTO_IFRC: u8 = 0x03;
