//! Checks from a mutation audit of the RCRT sink (`wsn_proto::rcrt::Sink`, spec §2): each test
//! pins one rule of the spec that a single-point change of the sink's code (a flipped
//! comparison, a dropped statement) broke without any earlier test noticing. The section of
//! docs/specs/rcrt.md each one follows is named in its doc comment.

mod common;

use common::{bytes, ms, w, NONCE};
use wsn_proto::rcrt::{seq_offset, Fair, Sink, SinkConfig, SinkEvent};
use wsn_proto::time::{Duration, Instant};
use wsn_proto::NodeId;
use wsn_wire::rcrt::{Rate, Repr};

const SRC: NodeId = NodeId(7);

fn syn(demand: f64) -> Vec<u8> {
    bytes(&Repr::Syn { demand: Rate::from_pps(demand), nonce: NONCE })
}

/// An original DATA `seq` reporting `rate`, echoing `fid` `since_ms` after the source got it.
fn data(seq: u32, rate: Rate, fid: u8, since_ms: u64) -> Vec<u8> {
    bytes(&Repr::Data {
        seq: w(seq),
        rate,
        fid,
        since_feedback_2ms: (since_ms / 2) as u16,
        ack_request: false,
        retransmission: false,
        payload: &[seq as u8],
    })
}

fn fin(last: u32) -> Vec<u8> {
    bytes(&Repr::Fin { last: w(last) })
}

/// A sink with `cfg` (no output pacing) and one flow from SRC of demand `demand`, opened by a
/// SYN at time 0 whose SYN-ACK (fid 1) left at time 0.
fn open(cfg: SinkConfig, demand: f64) -> Sink {
    let mut s = Sink::new(NodeId(0), SinkConfig { tx_spacing: Duration::ZERO, ..cfg }, Box::new(Fair));
    s.handle_datagram(ms(0), SRC, &syn(demand));
    let out = drain(&mut s, ms(0));
    assert!(matches!(Repr::parse(&out[0]), Ok(Repr::SynAck { fid: 1, .. })), "{out:?}");
    s
}

fn drain(s: &mut Sink, now: Instant) -> Vec<Vec<u8>> {
    core::iter::from_fn(|| s.poll_transmit(now)).map(|(_, b)| b).collect()
}

fn events(s: &mut Sink) -> Vec<SinkEvent> {
    core::iter::from_fn(|| s.poll_event()).collect()
}

/// The rate the sink assigned to SRC, as its DATA reports it.
fn assigned(s: &Sink) -> Rate {
    Rate::from_pps(s.flow_rate(SRC).expect("the flow is open"))
}

/// [Spec §2.2 `goodput`: Rcumm = (packets − 1) / (time since the first packet), 0 while ≤ 5
/// packets] Five packets one second apart leave the goodput at 0; the sixth makes it 5 packets
/// over 5 s = 1 pkt/s.
#[test]
fn goodput_is_zero_up_to_five_packets_then_packets_minus_one_over_the_time() {
    let mut s = open(SinkConfig::paper(), 2.0);
    for seq in 1..=5 {
        let rate = assigned(&s);
        s.handle_datagram(ms(1_000 * u64::from(seq)), SRC, &data(seq, rate, 0, 0));
        assert_eq!(s.flow_info(SRC).unwrap().goodput_pps, 0.0, "after {seq} packets");
    }
    let rate = assigned(&s);
    s.handle_datagram(ms(6_000), SRC, &data(6, rate, 0, 0));
    assert_eq!(s.flow_info(SRC).unwrap().goodput_pps, 1.0);
}

/// [Spec §2.8 step 7; SinkConfig::freeze_rtt_when_congested: "freeze RTT updates while any flow
/// has C ≥ L"] With the freeze on, a flow whose C_i equals L exactly takes no new RTT sample.
/// Paper thresholds (L = 1): RTT 1 s from the SYN-ACK's echo, r = 0.5 pkt/s; one packet held
/// behind a gap gives the level 1 / (0.5 · 1) = 2 and C = 0.5 · 2 = 1 = L.
#[test]
fn a_level_equal_to_l_freezes_the_rtt() {
    let cfg = SinkConfig { freeze_rtt_when_congested: true, ..SinkConfig::paper() };
    let lower = cfg.lower_threshold;
    let mut s = open(cfg, 1.0);
    let rate = assigned(&s);
    assert_eq!(rate.pps(), 0.5);
    // Packet 1 echoes fid 1 (sent at 0) 1 s later: the first sample, 1 s.
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_millis(1_000)));
    // Packet 3 (2 lost) echoes no fid: no sample; one packet held.
    s.handle_datagram(ms(1_100), SRC, &data(3, rate, 0, 0));
    drain(&mut s, ms(1_100));
    let info = s.flow_info(SRC).unwrap();
    assert_eq!((info.out_of_order, info.congestion), (1, lower), "{info:?}");
    // Packet 4 echoes fid 1 again (a 1.2 s sample): frozen, since C = L.
    s.handle_datagram(ms(1_200), SRC, &data(4, rate, 1, 0));
    assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_millis(1_000)), "C = L must freeze the RTT");
}

/// [Spec §2.6 give-up rule, §2.18.3] In the reference-code profile a hole 200 behind is skipped
/// by delivery; once skipped it can never be delivered, so it is no longer missing: the flow is
/// back in ACTIVE at once (before any feedback is built, the other place that drops old NACKs),
/// and a FIN naming the last packet is answered by a FIN-ACK straight away, as for a flow with
/// nothing missing, not by a repair round.
#[test]
fn a_hole_skipped_by_delivery_is_no_longer_missing() {
    let mut s = open(SinkConfig::reference_code(), 50.0);
    let rate = assigned(&s);
    // 1 arrives, 2 is lost, 3..=202 are held: not yet 200 past the hole's successor 3.
    for seq in (1..=1).chain(3..=202) {
        s.handle_datagram(ms(1_000 + u64::from(seq)), SRC, &data(seq, rate, 0, 0));
    }
    let info = s.flow_info(SRC).unwrap();
    assert_eq!((info.cack, info.missing, info.out_of_order), (1, 1, 200), "{info:?}");
    // 203 ≥ 3 + 200: 2 is given up, 3..=203 delivered.
    s.handle_datagram(ms(1_300), SRC, &data(203, rate, 0, 0));
    assert_eq!(s.stats().given_up, 1);
    let info = s.flow_info(SRC).unwrap();
    assert_eq!((info.cack, info.out_of_order), (203, 0), "{info:?}");
    assert_eq!(info.missing, 0, "the skipped hole is still NACKed: {info:?}");
    assert_eq!(info.state, wsn_proto::rcrt::FlowState::Active);
    events(&mut s);
    s.handle_datagram(ms(1_400), SRC, &fin(203));
    assert!(
        events(&mut s).contains(&SinkEvent::FlowClosed { source: SRC }),
        "a FIN with nothing missing closes at once"
    );
    let out = drain(&mut s, ms(1_400));
    assert!(out.iter().any(|b| matches!(Repr::parse(b), Ok(Repr::FinAck { last }) if last == w(203))), "no FIN-ACK");
}

/// Congestion events in `events`.
fn cuts(events: &[SinkEvent]) -> usize {
    events.iter().filter(|e| matches!(e, SinkEvent::Congestion { .. })).count()
}

/// [Spec §2.12.3 "skip once", the trace "cut, skip, cut" and step 5: "If R did not change,
/// return 'no decrease'"; §2.13 "Decrease allowed iff now ≥ t_dec + W"] Reference-code profile,
/// one flow (demand 0.5, so no increase moves R), packet 21 lost and never repaired, so the
/// delivery ratio stays p = 0.9. The first attempt cuts R by M(0.9) and stores p_last = 0.9.
/// The next attempt, exactly W = min(5·RTO + 5/r, 20 s) (a loss pending) after that cut and
/// with C above the level of the cut, finds p not below p_last and skips: R, the decrease count
/// and the events stay as they were, and p_last becomes 1. So the attempt after it, 100 ms
/// later (a skip is not a decrease and does not restart the decrease wait), cuts by M(0.9)
/// again.
#[test]
fn code_decrease_cuts_skips_once_then_cuts_again() {
    let mut s = open(SinkConfig::reference_code(), 0.5);
    // Packet `seq` at `now`, echoing fid 1 (sent at 0) when `echo`; returns the events.
    let send = |s: &mut Sink, now: Instant, seq: u32, echo: bool| -> Vec<SinkEvent> {
        let rate = assigned(s);
        let (fid, since) = if echo { (1, now.as_millis() - 1_000) } else { (0, 0) };
        s.handle_datagram(now, SRC, &data(seq, rate, fid, since));
        drain(s, now);
        events(s)
    };
    // Past the wait the first join starts (at most 20 s); RTT 1 s.
    let mut t = 31_000;
    for seq in 1..=20 {
        send(&mut s, ms(t), seq, true);
        t += 100;
    }
    // 21 lost; packets from 22 on pile up until one cuts.
    let mut seq = 22;
    while s.stats().decreases == 0 {
        assert!(seq < 40, "no first cut: {:?}", s.flow_info(SRC));
        send(&mut s, ms(t), seq, false);
        (t, seq) = (t + 100, seq + 1);
    }
    let first = s.flow_info(SRC).unwrap();
    let (t1, r1, c1) = (ms(t - 100), s.total_rate(), first.congestion);
    let m = 0.9 / 1.1;
    assert!((first.delivery_ratio - 0.9).abs() < 1e-12, "{first:?}");
    assert!((r1 - 0.5 * m).abs() < 1e-12, "R = {r1}");
    assert_eq!(first.missing, 1);
    let interval = Duration::from_secs_f64(1.0 / first.rate_pps);
    let wait = first.rto.saturating_mul(5) + interval.saturating_mul(5);
    assert!(wait < Duration::from_secs(20), "W = {wait:?}");

    // Exactly W after the cut: the skip.
    let t2 = t1 + wait;
    let ev = send(&mut s, t2, seq, false);
    let i = s.flow_info(SRC).unwrap();
    assert!(i.congestion > c1 && i.congestion >= 2.0 && i.missing == 1, "no attempt: {i:?}, c1 = {c1}");
    assert!((i.delivery_ratio - 0.9).abs() < 1e-12, "{i:?}");
    assert_eq!((i.rto, i.rate_pps), (first.rto, first.rate_pps), "W moved");
    assert_eq!(s.stats().decreases, 1, "p = p_last: the attempt must skip");
    assert_eq!(cuts(&ev), 0, "{ev:?}");
    assert_eq!(s.total_rate(), r1);

    // The next attempt cuts.
    let ev = send(&mut s, t2 + Duration::from_millis(100), seq + 1, false);
    assert_eq!(s.stats().decreases, 2, "{:?}", s.flow_info(SRC));
    assert_eq!(cuts(&ev), 1, "{ev:?}");
    assert!((s.total_rate() - r1 * m).abs() < 1e-12, "R = {}", s.total_rate());
}

/// [Spec §2.12.1 "set t_inc = now", §2.13 "Increase allowed iff now ≥ max(t_inc, t_dec) + W"]
/// Reference-code profile, one flow (demand 10), no RTT sample (RTO 5 s) and nothing missing,
/// so W = 2·RTO + 3/r. The first increase comes W after the join; the next one needs W after
/// that increase, not after the join: a packet reporting the new rate 1 s later is refused,
/// one W later (at the new rate) is taken.
#[test]
fn code_increase_waits_after_an_increase() {
    let mut s = open(SinkConfig::reference_code(), 10.0);
    let wait = |r: f64| 10_000 + (3_000.0 / r).ceil() as u64; // 2·RTO + 3/r, ms
    let send = |s: &mut Sink, t: u64, seq: u32| {
        let rate = assigned(s);
        s.handle_datagram(ms(t), SRC, &data(seq, rate, 0, 0));
        drain(s, ms(t));
    };
    let w0 = wait(0.5);
    send(&mut s, w0 - 100, 1);
    assert_eq!(s.stats().increases, 0, "before W after the join");
    send(&mut s, w0, 2);
    assert_eq!(s.stats().increases, 1, "W after the join");
    let r1 = s.flow_rate(SRC).unwrap();
    assert!(r1 > 0.5, "r = {r1}");
    // The new rate, 1 s after the increase: W (now with r1) has not passed since it.
    send(&mut s, w0 + 1_000, 3);
    assert_eq!(s.stats().increases, 1, "an increase 1 s after the last one");
    send(&mut s, w0 + wait(r1), 4);
    assert_eq!(s.stats().increases, 2, "W after the last increase");
}

/// [SinkEvent::RateChanged: "The total rate R changed"] Switching the policy re-allocates, and
/// caps R at D under a policy that caps: no RateChanged when R stays, one when the cap lowers
/// it (R raised above D under the weighted policy, which has no cap, spec §2.15.4).
#[test]
fn a_policy_switch_reports_rate_changed_only_when_r_changes() {
    let rate_changes = |ev: &[SinkEvent]| -> Vec<f64> {
        ev.iter()
            .filter_map(|e| match e {
                SinkEvent::RateChanged { total_pps } => Some(*total_pps),
                _ => None,
            })
            .collect()
    };
    let mut s = open(SinkConfig::paper(), 1.0);
    events(&mut s);
    assert_eq!(s.total_rate(), 0.5);
    s.set_policy(Box::new(wsn_proto::rcrt::DemandLimited));
    assert_eq!(s.total_rate(), 0.5);
    assert_eq!(rate_changes(&events(&mut s)), Vec::<f64>::new(), "R stayed 0.5");

    // Weighted (no cap): increases take R past D = 1.
    s.set_policy(Box::new(wsn_proto::rcrt::Weighted));
    events(&mut s);
    let mut t = 10_000;
    for seq in 1..=3 {
        let rate = assigned(&s);
        s.handle_datagram(ms(t), SRC, &data(seq, rate, 0, 0));
        drain(&mut s, ms(t));
        t += 10_000;
    }
    assert_eq!(s.total_rate(), 2.0, "{:?}", s.stats());
    events(&mut s);
    s.set_policy(Box::new(Fair));
    assert_eq!(s.total_rate(), 1.0);
    assert_eq!(rate_changes(&events(&mut s)), vec![1.0]);
}

/// A policy with a bug: it returns no rate at all.
struct NoRates;

impl wsn_proto::rcrt::Policy for NoRates {
    fn name(&self) -> &'static str {
        "no-rates"
    }
    fn allocate(&self, _total_pps: f64, _flows: &[wsn_proto::rcrt::FlowDemand]) -> Vec<f64> {
        Vec::new()
    }
}

/// [Policy docs: "a result whose length differs from flows is replaced by the Fair split"]
/// Two flows under a policy that returns nothing get R/N each, and their SYN-ACKs say so.
#[test]
fn a_policy_result_of_the_wrong_length_falls_back_to_fair() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::paper() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(NoRates));
    for src in [NodeId(1), NodeId(2)] {
        s.handle_datagram(ms(0), src, &syn(1.0));
    }
    assert_eq!(s.total_rate(), 1.0);
    let out = drain(&mut s, ms(0));
    assert_eq!(out.len(), 2);
    for (src, b) in [NodeId(1), NodeId(2)].into_iter().zip(&out) {
        assert_eq!(s.flow_rate(src), Some(0.5));
        let Ok(Repr::SynAck { rate, .. }) = Repr::parse(b) else { panic!("{b:?}") };
        assert_eq!(rate, Rate::from_pps(0.5), "SYN-ACK to {src:?}");
    }
}

/// [Spec §2.15: "Code profile: rates are converted to integer-ms intervals with ⌊1000/r⌋, capped
/// at 65534"; SinkConfig::max_interval] Demand-proportional, demands 10 and 0.01 pkt/s: R = 0.51
/// gives the small flow 0.51/10.01 · 0.01 ≈ 0.0005 pkt/s, an interval of about 1,963 s, which
/// the cap turns into 65.534 s.
#[test]
fn code_quantisation_caps_the_interval() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::reference_code() };
    assert_eq!(cfg.max_interval, Duration::from_millis(65_534));
    let mut s = Sink::new(NodeId(0), cfg, Box::new(wsn_proto::rcrt::DemandProportional));
    s.handle_datagram(ms(0), NodeId(1), &bytes(&Repr::Syn { demand: Rate::from_pps(10.0), nonce: NONCE }));
    s.handle_datagram(ms(0), NodeId(2), &bytes(&Repr::Syn { demand: Rate::from_pps(0.01), nonce: NONCE }));
    let small = s.flow_info(NodeId(2)).unwrap();
    assert!(small.demand_pps * s.total_rate() / s.total_demand() < 1.0 / 65.534, "{small:?}");
    assert_eq!(small.rate_pps, 1_000.0 / 65_534.0);
}

/// [SinkConfig::default_weight: "Weight of a flow with no configured weight"; spec §2.15.4
/// r_i = R·w_i / Σ w_j] Weighted policy, default weight 3: a flow without a weight gets three
/// times the share of one given weight 1.
#[test]
fn the_configured_default_weight_is_used() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, default_weight: 3.0, ..SinkConfig::paper() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(wsn_proto::rcrt::Weighted));
    assert!(s.set_weight(NodeId(2), 1.0));
    for src in [NodeId(1), NodeId(2)] {
        s.handle_datagram(ms(0), src, &syn(1.0));
    }
    assert_eq!(s.total_rate(), 1.0);
    assert_eq!(s.flow_rate(NodeId(1)), Some(0.75));
    assert_eq!(s.flow_rate(NodeId(2)), Some(0.25));
}

/// FEEDBACK datagrams in `out`.
fn feedbacks(out: &[Vec<u8>]) -> usize {
    out.iter().filter(|b| matches!(Repr::parse(b), Ok(Repr::Feedback { .. }))).count()
}

/// An original DATA `seq` with the ACK-request bit, reporting `rate`, no fid echo.
fn data_ack(seq: u32, rate: Rate) -> Vec<u8> {
    bytes(&Repr::Data {
        seq: w(seq),
        rate,
        fid: 0,
        since_feedback_2ms: 0,
        ack_request: true,
        retransmission: false,
        payload: &[seq as u8],
    })
}

/// [Spec §2.17.3 paper: every trigger "subject to ≥ RTO_i since the last feedback to i";
/// AMBIG-14 → deferred to tLastFb + RTO_i] RTT 1 s from the SYN-ACK's echo (RTO 1 s): a new
/// loss exactly one RTO after the SYN-ACK is sent at once.
#[test]
fn paper_feedback_exactly_one_rto_after_the_last_is_not_held_back() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    assert_eq!(s.flow_info(SRC).unwrap().rto, Duration::from_millis(1_000));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(1_000))), 1, "held back at tLastFb + RTO");
}

/// [AMBIG-14 → a held-back trigger is sent at tLastFb + RTO_i] A later trigger does not
/// postpone an earlier one when the RTO grew in between. Feedback at 1 s (RTO 1 s); a new loss
/// at 1.1 s is due at 2 s; a new loss at 1.2 s whose packet gives a 1.2 s RTT sample (RTO
/// 1.125 s) would be due at 2.125 s: the feedback still leaves at 2 s.
#[test]
fn a_later_trigger_does_not_postpone_a_held_back_one() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(1_000))), 1);
    s.handle_datagram(ms(1_100), SRC, &data(5, rate, 0, 0));
    assert!(drain(&mut s, ms(1_100)).is_empty());
    s.handle_datagram(ms(1_200), SRC, &data(7, rate, 1, 0));
    assert!(drain(&mut s, ms(1_200)).is_empty());
    assert_eq!(s.flow_info(SRC).unwrap().rto, Duration::from_millis(1_125));
    s.handle_timeout(ms(2_000));
    assert_eq!(feedbacks(&drain(&mut s, ms(2_000))), 1, "the first held-back trigger was postponed");
}

/// [SinkStats::feedback_sent_by: "the first one when several merged; a deferred feedback counts
/// under the trigger that was held back"; feedback_sent_deferred; feedback_deferred_stale:
/// deferred ones whose trigger no longer held] A new loss held back, then an ACK request held
/// back too: the feedback that leaves at tLastFb + RTO counts as a deferred new-loss one, and
/// is not stale, as the loss is still unrepaired.
#[test]
fn a_deferred_feedback_counts_under_its_first_trigger() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    drain(&mut s, ms(1_000));
    let before = s.stats().feedback_sent_by;
    assert_eq!(before.new_loss, 1);
    s.handle_datagram(ms(1_100), SRC, &data(5, rate, 0, 0));
    s.handle_datagram(ms(1_200), SRC, &data_ack(6, rate));
    assert!(drain(&mut s, ms(1_200)).is_empty());
    s.handle_timeout(ms(2_000));
    assert_eq!(feedbacks(&drain(&mut s, ms(2_000))), 1);
    let st = s.stats();
    assert_eq!(st.feedback_sent_by.new_loss, 2, "{st:?}");
    assert_eq!(st.feedback_sent_by.ack_request, 0, "{st:?}");
    assert_eq!(st.feedback_sent_deferred, 1, "{st:?}");
    assert_eq!(st.feedback_deferred_stale, 0, "the losses are still missing: {st:?}");
}

/// [SinkStats::feedback_deferred_stale] A held-back new-loss trigger whose losses were all
/// repaired before it came due is counted as stale (it is still sent).
#[test]
fn a_deferred_feedback_with_nothing_left_to_repair_is_stale() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(2, rate, 0, 0));
    s.handle_datagram(ms(1_000), SRC, &data_ack(3, rate));
    assert_eq!(feedbacks(&drain(&mut s, ms(1_000))), 1, "the ACK request");
    s.handle_datagram(ms(1_100), SRC, &data(5, rate, 0, 0));
    s.handle_datagram(ms(1_200), SRC, &data(4, rate, 0, 0));
    assert_eq!(s.flow_info(SRC).unwrap().missing, 0);
    s.handle_timeout(ms(2_000));
    assert_eq!(feedbacks(&drain(&mut s, ms(2_000))), 1);
    let st = s.stats();
    assert_eq!((st.feedback_sent_deferred, st.feedback_deferred_stale), (1, 1), "{st:?}");
}

/// [Spec §2.17.3 code: reasons 3–5 allowed iff fidSeen = fid, or no feedback yet, or now ≥
/// tLastFb + 2·RTO_i + 2·(1/r_i)] No RTT sample (RTO 5 s), r = 0.5 pkt/s: a duplicate of an
/// acknowledged packet (reason 3, no coin) 13 s after the last feedback gets none, exactly 14 s
/// after it gets one.
#[test]
fn code_limited_feedback_waits_two_rtos_and_two_intervals() {
    let mut s = open(SinkConfig::reference_code(), 0.5);
    let rate = assigned(&s);
    s.handle_datagram(ms(100), SRC, &data(1, rate, 0, 0));
    s.handle_datagram(ms(200), SRC, &data(3, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(200))), 1, "reason 1, not limited");
    assert_eq!(s.flow_info(SRC).unwrap().rto, Duration::from_secs(5));
    s.handle_datagram(ms(13_200), SRC, &data(1, rate, 0, 0));
    assert!(drain(&mut s, ms(13_200)).is_empty(), "before 2·RTO + 2/r");
    s.handle_datagram(ms(14_200), SRC, &data(1, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(14_200))), 1, "at 2·RTO + 2/r");
}

/// [Spec §2.18.3: with packets missing, a FIN enters FIN_RETX_WAIT "resetting timeouts on
/// entry", sends feedback "and (re)arm[s] the timer for RTO_i"; §2.10 code: each expiry adds
/// `timeouts` to the level] Reference-code profile, no RTT sample (RTO 5 s), 2 lost: the first
/// expiry (5.2 s) makes timeouts 1 and C = 0.5; the FIN at 6 s re-arms the timer for 11 s and
/// resets timeouts, so that expiry counts 1 again: C = 0.5·1 + 0.5·0.5 = 0.75.
#[test]
fn a_fin_with_losses_resets_the_timeouts_and_rearms_the_timer() {
    let mut s = open(SinkConfig::reference_code(), 0.5);
    let rate = assigned(&s);
    s.handle_datagram(ms(100), SRC, &data(1, rate, 0, 0));
    s.handle_datagram(ms(200), SRC, &data(3, rate, 0, 0));
    drain(&mut s, ms(200));
    assert_eq!(s.flow_info(SRC).unwrap().congestion, 0.0);
    assert_eq!(s.poll_timeout(), Some(ms(5_200)));
    s.handle_timeout(ms(5_200));
    drain(&mut s, ms(5_200));
    assert_eq!(s.flow_info(SRC).unwrap().congestion, 0.5);
    s.handle_datagram(ms(6_000), SRC, &fin(3));
    drain(&mut s, ms(6_000));
    assert_eq!(s.flow_info(SRC).unwrap().state, wsn_proto::rcrt::FlowState::FinRetxWait);
    assert_eq!(s.poll_timeout(), Some(ms(11_000)), "the FIN re-arms the timer for one RTO");
    s.handle_timeout(ms(11_000));
    assert_eq!(s.stats().feedback_triggers.timer, 2);
    assert_eq!(s.flow_info(SRC).unwrap().congestion, 0.75, "timeouts not reset by the FIN");
}

/// [Spec §2.4 step 3, "more than" the sanity jump is bogus; paper profile: 1000 beyond the
/// cumulative ACK] A FIN exactly 1000 beyond the cumulative ACK is taken (its trailing losses
/// become missing), one further is refused.
#[test]
fn a_fin_exactly_the_sanity_jump_ahead_is_taken() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(100), SRC, &data(1, rate, 0, 0));
    s.handle_datagram(ms(200), SRC, &fin(1_002));
    assert_eq!(s.stats().bogus, 1, "1001 ahead");
    s.handle_datagram(ms(300), SRC, &fin(1_001));
    assert_eq!(s.stats().bogus, 1, "1000 ahead");
    let info = s.flow_info(SRC).unwrap();
    assert_eq!((info.state, info.missing), (wsn_proto::rcrt::FlowState::FinRetxWait, 1_000), "{info:?}");
}

/// [rcrt::unwrap_seq_signed docs and data_seq: DATA of an incarnation starts at 1; a number
/// before its first packet is another incarnation's, refused as bogus (AMBIG-21)] A DATA
/// numbered 0 (the initial sequence number itself) is bogus: not a duplicate, no feedback.
#[test]
fn data_numbered_zero_is_bogus() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(10_000), SRC, &data(0, rate, 0, 0));
    let st = s.stats();
    assert_eq!((st.bogus, st.duplicates), (1, 0), "{st:?}");
    assert!(drain(&mut s, ms(10_000)).is_empty());
}

/// [Spec §2.12.4 floor R ≥ N/30; D9 → kept as an invariant, so a join raises R to it] A flow
/// demanding 0.01 pkt/s adds 0.01 to R, which the floor lifts to 1/30.
#[test]
fn a_join_keeps_r_at_or_above_the_floor() {
    let s = open(SinkConfig::paper(), 0.01);
    let floor = SinkConfig::paper().min_rate_per_flow_pps;
    assert_eq!(s.total_rate(), floor);
    assert_eq!(s.flow_rate(SRC), Some(floor));
}

/// [Spec §2.13 code: "a flow join sets t_inc = now"; increase allowed iff now ≥ max(t_inc,
/// t_dec) + W] Flow A joins at 0, flow B at 10 s (R = 1, r = 0.5 each; W = 2·5 s + 3/0.5 =
/// 16 s with no RTT sample): A's packet at 16 s does not increase, at 26 s it does.
#[test]
fn code_increase_waits_after_a_join() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::reference_code() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
    s.handle_datagram(ms(0), NodeId(1), &syn(10.0));
    s.handle_datagram(ms(10_000), NodeId(2), &syn(10.0));
    drain(&mut s, ms(10_000));
    assert_eq!(s.total_rate(), 1.0);
    let rate = Rate::from_pps(s.flow_rate(NodeId(1)).unwrap());
    assert_eq!(rate.pps(), 0.5);
    s.handle_datagram(ms(16_000), NodeId(1), &data(1, rate, 0, 0));
    assert_eq!(s.stats().increases, 0, "16 s after the first join, 6 s after the second");
    s.handle_datagram(ms(26_000), NodeId(1), &data(2, rate, 0, 0));
    assert_eq!(s.stats().increases, 1, "16 s after the second join");
}

/// A FIN naming `last` from `src` (nonce 1).
fn fin_from(s: &mut Sink, now: Instant, src: NodeId, last: u32) {
    s.handle_datagram(now, src, &fin(last));
}

/// [Spec §2.16 leave: "Unless the policy is id 2: D ← D − d_i"; §2.15.6 "only for id 2, D is not
/// reduced when a flow leaves" (AMBIG-26)] Reference-code profile, demand-limited: a flow that
/// completes leaves D as it was; under the fair policy D loses its demand.
#[test]
fn code_demand_limited_keeps_d_when_a_flow_leaves() {
    for (limited, kept) in [(true, true), (false, false)] {
        let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::reference_code() };
        let policy: Box<dyn wsn_proto::rcrt::Policy> =
            if limited { Box::new(wsn_proto::rcrt::DemandLimited) } else { Box::new(Fair) };
        let mut s = Sink::new(NodeId(0), cfg, policy);
        s.handle_datagram(ms(0), NodeId(1), &syn(2.0));
        s.handle_datagram(ms(0), NodeId(2), &syn(3.0));
        let d = s.total_demand();
        fin_from(&mut s, ms(100), NodeId(2), 0);
        assert_eq!(s.flow_count(), 1);
        if kept {
            assert_eq!(s.total_demand(), d, "demand-limited");
        } else {
            assert!(s.total_demand() < d, "fair");
        }
    }
}

/// [Spec §2.16 leave: "D ← D − d_i and R ← min(R, D)"] Fair policy, demands 0.1 and 5: R = 0.6,
/// 0.3 each. When the big flow leaves, R − r_i = 0.3 exceeds the remaining D = 0.1: R is capped
/// at D.
#[test]
fn a_leave_caps_r_at_the_remaining_demand() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::paper() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
    s.handle_datagram(ms(0), NodeId(1), &syn(0.1));
    s.handle_datagram(ms(0), NodeId(2), &syn(5.0));
    assert!((s.total_rate() - 0.6).abs() < 1e-3, "R = {}", s.total_rate());
    fin_from(&mut s, ms(100), NodeId(2), 0);
    assert_eq!(s.flow_count(), 1);
    assert!((s.total_demand() - 0.1).abs() < 1e-3);
    assert_eq!(s.total_rate(), s.total_demand());
}

/// [Spec §2.1 `slowstart`: "set back to 1 when N returns to 0"; §2.16 join: R grows while
/// slowstart and R ≤ 25] After a decrease ended slow start, every flow leaves; of two new flows
/// the second adds to R again.
#[test]
fn slow_start_returns_when_every_flow_has_left() {
    let mut s = open(SinkConfig::paper(), 0.5);
    let rate = assigned(&s);
    // 2 lost, then packets pile up behind it until R is cut (RTT 1 s, r·RTT = 0.5).
    let mut t = 11_000;
    let mut last = 0;
    for seq in [1, 3, 4, 5, 6, 7, 8] {
        if s.stats().decreases > 0 {
            break;
        }
        s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000));
        (t, last) = (t + 100, seq);
    }
    assert_eq!(s.stats().decreases, 1);
    // The FIN, then the repair of 2: FIN-ACK, the flow leaves, N = 0.
    fin_from(&mut s, ms(t), SRC, last);
    s.handle_datagram(ms(t + 100), SRC, &data(2, rate, 0, 0));
    assert_eq!(s.flow_count(), 0);
    assert_eq!(s.total_rate(), 0.0);
    s.handle_datagram(ms(t + 200), NodeId(1), &syn(5.0));
    s.handle_datagram(ms(t + 200), NodeId(2), &syn(5.0));
    assert_eq!(s.total_rate(), 1.0, "the second join after N returned to 0 adds to R");
}

/// [Spec §2.13 code: "a flow leave sets t_dec = now"; increase allowed iff now ≥ max(t_inc,
/// t_dec) + W] Flows A and B join at 0 (r = 0.5 each; W = 16 s with no RTT sample); B leaves at
/// 10 s. A's packet at 16 s does not increase, at 26 s it does.
#[test]
fn code_increase_waits_after_a_leave() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::reference_code() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
    s.handle_datagram(ms(0), NodeId(1), &syn(10.0));
    s.handle_datagram(ms(0), NodeId(2), &syn(10.0));
    drain(&mut s, ms(0));
    let rate = Rate::from_pps(s.flow_rate(NodeId(1)).unwrap());
    assert_eq!(rate.pps(), 0.5);
    fin_from(&mut s, ms(10_000), NodeId(2), 0);
    assert_eq!(s.flow_count(), 1);
    s.handle_datagram(ms(16_000), NodeId(1), &data(1, rate, 0, 0));
    assert_eq!(s.stats().increases, 0, "16 s after the joins, 6 s after the leave");
    s.handle_datagram(ms(26_000), NodeId(1), &data(2, rate, 0, 0));
    assert_eq!(s.stats().increases, 1, "16 s after the leave");
}

/// [SinkConfig::revive_expired: "at most max_flows are kept, the longest silent one is forgotten
/// first"] max_flows = 1: flow A expires, then flow B; A, silent for longer, is forgotten, so
/// A's next DATA is for an unknown flow while B's revives B.
#[test]
fn the_longest_silent_released_flow_is_forgotten_first() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, max_flows: 1, ..SinkConfig::paper() };
    let idle = cfg.idle_timeout.unwrap();
    let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
    let (a, b) = (NodeId(1), NodeId(2));
    let mut t = Instant::ZERO;
    for src in [a, b] {
        s.handle_datagram(t, src, &syn(1.0));
        drain(&mut s, t);
        let rate = Rate::from_pps(s.flow_rate(src).unwrap());
        t += Duration::from_secs(1);
        s.handle_datagram(t, src, &data(1, rate, 0, 0));
        drain(&mut s, t);
        t += idle;
        s.handle_timeout(t);
        assert_eq!(s.flow_count(), 0, "{src:?} did not expire");
        t += Duration::from_secs(1);
    }
    assert_eq!(s.stats().flows_expired, 2);
    s.handle_datagram(t, a, &data(2, Rate::from_pps(0.5), 0, 0));
    assert_eq!((s.stats().unknown_flow, s.stats().flows_revived), (1, 0), "A was kept");
    s.handle_datagram(t, b, &data(2, Rate::from_pps(0.5), 0, 0));
    assert_eq!(s.stats().flows_revived, 1, "B was forgotten");
    assert_eq!(s.flows().collect::<Vec<_>>(), vec![b]);
}

/// [SinkConfig::max_flows: "Most concurrent flows; a SYN beyond it gets a SYN-NACK";
/// revive_expired: a released flow comes back "if there is room"] max_flows = 1: A expires, B
/// opens; A's DATA then revives nothing, and A's SYN (same nonce) is refused with a SYN-NACK.
#[test]
fn a_released_flow_is_not_revived_beyond_max_flows() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, max_flows: 1, ..SinkConfig::paper() };
    let idle = cfg.idle_timeout.unwrap();
    let mut s = Sink::new(NodeId(0), cfg, Box::new(Fair));
    let (a, b) = (NodeId(1), NodeId(2));
    s.handle_datagram(ms(0), a, &syn(1.0));
    drain(&mut s, ms(0));
    let t = Instant::ZERO + idle + Duration::from_secs(1);
    s.handle_timeout(t);
    assert_eq!((s.flow_count(), s.stats().flows_expired), (0, 1));
    s.handle_datagram(t, b, &syn(1.0));
    drain(&mut s, t);
    assert_eq!(s.flow_count(), 1);
    s.handle_datagram(t, a, &data(1, Rate::from_pps(0.5), 0, 0));
    assert_eq!((s.flow_count(), s.stats().flows_revived), (1, 0), "DATA revived A beyond max_flows");
    events(&mut s);
    s.handle_datagram(t, a, &syn(1.0));
    assert_eq!((s.flow_count(), s.stats().flows_revived), (1, 0), "a SYN revived A beyond max_flows");
    assert!(events(&mut s).contains(&SinkEvent::FlowRefused { source: a }));
    let out = drain(&mut s, t);
    assert!(out.iter().any(|b| matches!(Repr::parse(b), Ok(Repr::SynNack { nonce: NONCE }))), "{out:?}");
}

/// Reference-code profile, one flow of demand 0.5 (SYN-ACK fid 1 at 0): packets 1–20 (RTT 1 s),
/// 21 lost, 22..=26 reporting a rate one step off the assigned one, so that C climbs past U
/// while no packet may adapt (spec §2.14). Returns the sink and the time of packet 26, ms.
fn code_congested() -> (Sink, u64) {
    let mut s = open(SinkConfig::reference_code(), 0.5);
    let mut t = 31_000;
    for seq in (1..=20).chain(22..=26) {
        let rate = if seq < 21 { assigned(&s) } else { Rate(assigned(&s).0 + 1) };
        s.handle_datagram(ms(t), SRC, &data(seq, rate, 1, t - 1_000));
        drain(&mut s, ms(t));
        t += 100;
    }
    assert_eq!(s.stats().decreases, 0);
    let i = s.flow_info(SRC).unwrap();
    assert!(i.congestion >= 2.0 && i.missing == 1, "{i:?}");
    (s, t - 100)
}

/// The reference code's instantaneous level of SRC's flow with `timeouts` (spec §2.10 code):
/// ((|ooo| − 1) + (|missing| − 1)) / max(0.1, r·min(RTT, 5 s)) + timeouts.
fn code_level(s: &Sink, timeouts: u32) -> f64 {
    let i = s.flow_info(SRC).unwrap();
    let ll = i.out_of_order as f64 - 1.0 + i.missing as f64 - 1.0;
    let rtt = i.rtt.unwrap().min(Duration::from_secs(5));
    ll / (i.rate_pps * rtt.as_secs_f64()).max(0.1) + f64::from(timeouts)
}

/// Run the next timer expiry; returns its time.
fn expire(s: &mut Sink) -> Instant {
    let at = s.poll_timeout().expect("a timer runs");
    s.handle_timeout(at);
    drain(s, at);
    at
}

/// [Spec §2.18.2 step 4: after a timer-driven decrease attempt "set timeouts = 0 whether or not
/// R changed"; step 3: each expiry adds `timeouts` to the level] The second expiry cuts R; the
/// third counts one timeout again: C = 0.5·(level with timeouts 1) + 0.5·C.
#[test]
fn a_timer_cut_resets_the_timeouts() {
    let (mut s, _) = code_congested();
    expire(&mut s);
    assert_eq!(s.stats().decreases, 0);
    expire(&mut s);
    assert_eq!((s.stats().feedback_triggers.timer, s.stats().decreases), (2, 1));
    let c = s.flow_info(SRC).unwrap().congestion;
    let want = 0.5 * code_level(&s, 1) + 0.5 * c;
    expire(&mut s);
    assert_eq!(s.stats().feedback_triggers.timer, 3);
    let got = s.flow_info(SRC).unwrap().congestion;
    assert!((got - want).abs() < 1e-9, "C = {got}, want {want} (one timeout)");
}

/// [SinkStats::feedback_deferred_stale: "Of feedback_sent_deferred, those whose trigger no longer
/// held"] A held-back trigger that comes due while a feedback for the flow still waits in the
/// outbox merges into it: that feedback is not a deferred one, so the stale count stays 0 even
/// though the trigger (the rate differs) no longer holds. The outbox is left undrained from 2 s
/// while an RTT sample raises the RTO, so that a trigger at 2.05 s is held back behind the
/// feedback built at 1 s.
#[test]
fn a_held_back_trigger_merged_into_a_queued_feedback_is_not_counted_stale() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(1_000))), 1);
    s.handle_datagram(ms(1_500), SRC, &data(2, rate, 0, 0));
    // A new loss exactly one RTO after the last feedback: queued, left in the outbox.
    s.handle_datagram(ms(2_000), SRC, &data(5, rate, 0, 0));
    // 4 repaired by a packet reporting another rate, with a 2.05 s RTT sample: RTO 1.656 s, so
    // its trigger is held back until 2.656 s.
    s.handle_datagram(ms(2_050), SRC, &data(4, Rate(rate.0 + 1), 1, 0));
    assert!(s.flow_info(SRC).unwrap().rto > Duration::from_millis(1_050));
    // The source reports the assigned rate again: the held-back trigger no longer holds.
    s.handle_datagram(ms(2_100), SRC, &data(6, rate, 0, 0));
    s.handle_timeout(ms(3_000));
    assert_eq!(feedbacks(&drain(&mut s, ms(3_000))), 1, "one feedback: the queued one");
    let st = s.stats();
    assert_eq!((st.feedback_sent_deferred, st.feedback_deferred_stale), (0, 0), "{st:?}");
}

/// [Spec §2.8 step 6: "First sample: rtt = sample" – only later samples wait for no flow to
/// be congested (step 7)] Reference-code profile (freeze on): the flow is congested (C ≥ L)
/// before any fid is echoed; the first echo still gives the RTT.
#[test]
fn the_first_rtt_sample_is_taken_while_congested() {
    let mut s = open(SinkConfig::reference_code(), 0.5);
    let rate = assigned(&s);
    for (k, seq) in [1, 3, 4].into_iter().enumerate() {
        s.handle_datagram(ms(100 * (k as u64 + 1)), SRC, &data(seq, rate, 0, 0));
    }
    let i = s.flow_info(SRC).unwrap();
    assert!(i.congestion >= SinkConfig::reference_code().lower_threshold && i.rtt.is_none(), "{i:?}");
    s.handle_datagram(ms(1_000), SRC, &data(5, rate, 1, 200));
    assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::from_millis(800)));
}

/// [Spec §2.8 step 4: "If fid > fidSeen and fid − fidSeen < 20, set fidSeen = fid"; §2.17.3
/// code: reasons 3–5 pass at once only when fidSeen = fid] fidSeen = 1, then 20 feedbacks
/// (fids 2..=21, new losses, not limited): an echo of fid 21, 20 ahead, does not count as
/// seen, so a duplicate of an acknowledged packet right after it gets no feedback.
#[test]
fn an_echo_twenty_fids_ahead_is_not_taken_as_seen() {
    let mut s = open(SinkConfig::reference_code(), 50.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(100), SRC, &data(1, rate, 1, 0));
    drain(&mut s, ms(100));
    let mut seq = 1;
    for k in 0..20u64 {
        seq += 2;
        let t = ms(200 + 10 * k);
        s.handle_datagram(t, SRC, &data(seq, rate, 0, 0));
        assert_eq!(feedbacks(&drain(&mut s, t)), 1, "new loss at {seq}");
    }
    assert_eq!(s.stats().decreases, 0);
    // The echo of fid 21 (in order: no new loss).
    s.handle_datagram(ms(500), SRC, &data(seq + 1, rate, 21, 0));
    assert!(drain(&mut s, ms(500)).is_empty());
    // A duplicate of packet 1, acknowledged by every feedback: limited (2·RTO + 2/r not over).
    s.handle_datagram(ms(510), SRC, &data(1, rate, 0, 0));
    assert!(drain(&mut s, ms(510)).is_empty(), "fid 21, 20 ahead of fid 1, was taken as seen");
}

/// [Flow::told: a slow-down is "a told rate below the previous one, or the SYN-ACK"; the idle
/// timeout: "idle_timeout after the source was last heard" unless slow-downs explain the
/// silence] A slow flow (0.04 pkt/s, 10 intervals = 250 s < 300 s) falls silent with a loss
/// pending: the NACK re-sends repeat its rate, which is no slow-down, so it expires exactly
/// 300 s after it was last heard.
#[test]
fn feedback_repeating_the_rate_does_not_postpone_the_idle_expiry() {
    let mut s = open(SinkConfig::paper(), 0.04);
    let rate = assigned(&s);
    assert!(rate.pps() > 1.0 / 30.0 && 10.0 / rate.pps() < 300.0, "{rate:?}");
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    drain(&mut s, ms(1_000));
    let mut resent = 0;
    loop {
        let at = s.poll_timeout().unwrap();
        assert!(at <= ms(301_000), "no expiry by 301 s (next timer {at:?})");
        s.handle_timeout(at);
        let out = drain(&mut s, at);
        resent += feedbacks(&out);
        if s.flow_count() == 0 {
            assert_eq!(at, ms(301_000));
            break;
        }
    }
    assert!(resent > 100, "{resent} NACK re-sends");
    assert_eq!(s.stats().flows_expired, 1);
}

/// NACKed sequence numbers of a FEEDBACK, in the connection's own numbering.
fn nacked(b: &[u8]) -> Vec<u32> {
    match Repr::parse(b) {
        Ok(Repr::Feedback { nacks, .. }) => {
            nacks.seqnos().map(|n| u32::from(n.wrapping_sub(seq_offset(NONCE)))).collect()
        }
        other => panic!("expected FEEDBACK, got {other:?}"),
    }
}

/// [Spec §2.5 give-up rule (code only): "While a feedback is being built, an entry is deleted
/// without being repaired if lastRecv ≥ entry + 200"] 2 lost, packets up to 202: the next
/// feedback (the repair timer's) drops 2 and NACKs nothing.
#[test]
fn code_feedback_drops_a_nack_exactly_200_behind() {
    let mut s = open(SinkConfig::reference_code(), 50.0);
    let rate = assigned(&s);
    for seq in (1..=1).chain(3..=202) {
        let t = ms(100 + u64::from(seq));
        s.handle_datagram(t, SRC, &data(seq, rate, 0, 0));
        drain(&mut s, t);
    }
    let i = s.flow_info(SRC).unwrap();
    assert_eq!((i.last_recv, i.missing, i.cack), (202, 1, 1), "{i:?}");
    let at = s.poll_timeout().unwrap();
    s.handle_timeout(at);
    let out = drain(&mut s, at);
    assert_eq!(out.len(), 1);
    assert_eq!(nacked(&out[0]), Vec::<u32>::new(), "2 is 200 behind 202");
    assert_eq!(s.stats().nacks_abandoned, 1);
}

/// [Spec §2.4 step 10 and §2.17.5: sending feedback arms the timer "if no timer is running"]
/// Reference-code profile (new losses are not rate-limited), RTO 5 s: a feedback at 0.2 s arms
/// the timer for 5.2 s; the next one at 0.3 s leaves it there.
#[test]
fn a_feedback_does_not_push_back_a_running_timer() {
    let mut s = open(SinkConfig::reference_code(), 50.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(100), SRC, &data(1, rate, 0, 0));
    s.handle_datagram(ms(200), SRC, &data(3, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(200))), 1);
    assert_eq!(s.poll_timeout(), Some(ms(5_200)));
    s.handle_datagram(ms(300), SRC, &data(5, rate, 0, 0));
    assert_eq!(feedbacks(&drain(&mut s, ms(300))), 1);
    assert_eq!(s.poll_timeout(), Some(ms(5_200)));
}

/// [Spec §2.8 "fid = fid + 1; if it wraps to 0, make it 1"; §2.18.1 a duplicate SYN gets a
/// fresh SYN-ACK with a new fid] The SYN-ACKs of 256 SYNs carry fids 1..=255, then 1.
#[test]
fn the_feedback_id_skips_zero_when_it_wraps() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let mut fids = vec![1u8];
    for k in 1..256u64 {
        s.handle_datagram(ms(k), SRC, &syn(1.0));
        for b in drain(&mut s, ms(k)) {
            if let Ok(Repr::SynAck { fid, .. }) = Repr::parse(&b) {
                fids.push(fid);
            }
        }
    }
    let want: Vec<u8> = (1..=255).chain([1]).collect();
    assert_eq!(fids, want);
}

/// [Spec §2.8: the source accepts an RTT field in (0, 10 000) ms; 0 is "unknown"] A flow whose
/// RTT is known but below 1 ms (a sample of 0) is told 1 ms, not 0.
#[test]
fn a_known_rtt_below_one_ms_is_sent_as_one() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 1_000));
    assert_eq!(s.flow_info(SRC).unwrap().rtt, Some(Duration::ZERO));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    let out = drain(&mut s, ms(1_000));
    assert_eq!(out.len(), 1);
    assert!(matches!(Repr::parse(&out[0]), Ok(Repr::Feedback { rtt_ms: 1, .. })), "{:?}", Repr::parse(&out[0]));
}

/// [Spec §2.18.4: a closed flow that received DATA gets "a 60 s timer if none is running"] A
/// flow with a repair pending (its NACK timer due at 2 s) is closed at 1.5 s: the running timer
/// stays, the 60 s one is not armed over it.
#[test]
fn closing_a_flow_keeps_its_running_timer() {
    let mut s = open(SinkConfig::paper(), 1.0);
    let rate = assigned(&s);
    s.handle_datagram(ms(1_000), SRC, &data(1, rate, 1, 0));
    s.handle_datagram(ms(1_000), SRC, &data(3, rate, 0, 0));
    drain(&mut s, ms(1_000));
    assert_eq!(s.poll_timeout(), Some(ms(2_000)));
    assert!(s.close_flow(ms(1_500), SRC));
    assert_eq!(s.poll_timeout(), Some(ms(2_000)));
}

/// [Sink::set_weight: "A weight must be finite and ≥ 0"] Weight 0 is accepted (the flow gets
/// nothing under the weighted policy but the floor); −1 and NaN are refused.
#[test]
fn a_zero_weight_is_accepted() {
    let cfg = SinkConfig { tx_spacing: Duration::ZERO, ..SinkConfig::paper() };
    let mut s = Sink::new(NodeId(0), cfg, Box::new(wsn_proto::rcrt::Weighted));
    s.handle_datagram(ms(0), NodeId(1), &syn(1.0));
    s.handle_datagram(ms(0), NodeId(2), &syn(1.0));
    assert!(!s.set_weight(NodeId(1), -1.0));
    assert!(!s.set_weight(NodeId(1), f64::NAN));
    assert!(s.set_weight(NodeId(1), 0.0));
    assert_eq!(s.flow_rate(NodeId(1)), Some(SinkConfig::paper().min_rate_per_flow_pps));
    assert_eq!(s.flow_rate(NodeId(2)), Some(1.0));
}

/// [Spec §2.7 code: later loss intervals clamped to [2, 20]; the interval of two single losses
/// one received packet apart is 2] Code ALI, 1 received, 2 lost, 3 received, 4 lost, 5
/// received: intervals [2, 2], loss rate 1/2.
#[test]
fn code_ali_keeps_an_interval_of_two() {
    use wsn_proto::rcrt::estimators::{Ali, ALI_WEIGHTS};
    let mut ali = Ali::new(ALI_WEIGHTS, true);
    let mut last = 0;
    for seq in [1, 3, 5] {
        ali.on_advance(seq, last);
        last = seq;
    }
    assert_eq!(ali.intervals(), &[2, 2]);
    assert_eq!(ali.loss_rate(), 0.5);
}

/// [Spec §2.8: fid 0 means "none"; "slots with fid 0 ... are empty"] A ring that was handed
/// fid 0 still knows no send time for it.
#[test]
fn the_fid_ring_never_answers_for_fid_zero() {
    use wsn_proto::rcrt::estimators::FidRing;
    let mut ring = FidRing::new(5);
    ring.record(0, ms(100));
    ring.record(1, ms(200));
    assert_eq!(ring.sent_at(0), None);
    assert_eq!(ring.sent_at(1), Some(ms(200)));
}

/// [Spec §2.12.3 step 3: "If ratio < 0.5, use 0.5 (never cut more than half)"] p = 0.6 gives
/// M = 0.6/1.4 ≈ 0.43, raised to 0.5.
#[test]
fn the_code_decrease_factor_never_cuts_more_than_half() {
    use wsn_proto::rcrt::estimators::{decrease_factor, decrease_factor_code};
    assert!(decrease_factor(0.6) < 0.5 && decrease_factor(0.6) > 0.4);
    assert_eq!(decrease_factor_code(0.6, 1.0), (0.5, 0.6));
}

/// [Spec §2.15.5 fair-goodput: "If the new R exceeds the current sum of assigned rates (an
/// increase)" the increment goes to lagging flows; "Otherwise ... demand-proportional"] R equal
/// to the current sum is no increase: the rates become ρ·d_i, not the current ones.
#[test]
fn fair_goodput_with_r_equal_to_the_current_sum_is_demand_proportional() {
    use wsn_proto::rcrt::{FairGoodput, FlowDemand, Policy};
    let flows: Vec<FlowDemand> = [(1.0, 0.9), (3.0, 0.1)]
        .iter()
        .enumerate()
        .map(|(i, &(demand, current))| FlowDemand {
            source: NodeId(i as u16 + 1),
            demand_pps: demand,
            weight: 1.0,
            goodput_pps: 0.0,
            current_pps: current,
        })
        .collect();
    assert_eq!(FairGoodput.allocate(1.0, &flows), vec![0.25, 0.75]);
}

/// Flows for a policy: (demand, goodput, current) each.
fn policy_flows(v: &[(f64, f64, f64)]) -> Vec<wsn_proto::rcrt::FlowDemand> {
    v.iter()
        .enumerate()
        .map(|(i, &(demand, goodput, current))| wsn_proto::rcrt::FlowDemand {
            source: NodeId(i as u16 + 1),
            demand_pps: demand,
            weight: 1.0,
            goodput_pps: goodput,
            current_pps: current,
        })
        .collect()
}

/// [Spec §2.15.5: "Flows with g_i ≥ d_i are unchanged"] An increase of 1 with one flow ahead of
/// its demand (goodput 3 > demand 2) and one lagging by 1: the lagging flow gets all of it.
#[test]
fn fair_goodput_leaves_a_flow_ahead_of_its_demand_unchanged() {
    use wsn_proto::rcrt::{FairGoodput, Policy};
    let flows = policy_flows(&[(2.0, 3.0, 1.0), (2.0, 1.0, 1.0)]);
    assert_eq!(FairGoodput.allocate(3.0, &flows), vec![1.0, 2.0]);
}

/// [Spec §2.1 and §2.15.1: rho = R/D, "1.0 if D = 0"] Demand-proportional with no demand gives
/// every flow ρ·0 = 0 (which the sink then lifts to its floor), not a NaN.
#[test]
fn demand_proportional_with_no_demand_gives_zero() {
    use wsn_proto::rcrt::{DemandProportional, Policy};
    let flows = policy_flows(&[(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)]);
    assert_eq!(DemandProportional.allocate(2.0, &flows), vec![0.0, 0.0]);
}

/// [Spec §2.18.2 step 4: after a timer-driven cut "set C_last = C_i"; §2.14 "should decrease"
/// needs C_i > C_last] The second expiry cuts R at level c1; the lost packet is then repaired,
/// and 21 s later (past any wait) new losses raise C again: packets whose C is between 2 and c1
/// cut nothing, although every other condition holds (a loss pending, a delivery ratio below
/// the last cut's); the first one above c1 cuts.
#[test]
fn a_timer_cut_sets_the_level_a_later_cut_must_exceed() {
    let (mut s, _) = code_congested();
    expire(&mut s);
    let te = expire(&mut s);
    assert_eq!(s.stats().decreases, 1);
    let cut = s.flow_info(SRC).unwrap();
    let (c1, p1) = (cut.congestion, cut.delivery_ratio);
    let rate = assigned(&s);
    let repair = bytes(&Repr::Data {
        seq: w(21),
        rate,
        fid: 0,
        since_feedback_2ms: 0,
        ack_request: false,
        retransmission: true,
        payload: &[21],
    });
    let t = te + Duration::from_millis(100);
    s.handle_datagram(t, SRC, &repair);
    drain(&mut s, t);
    assert_eq!(s.flow_info(SRC).unwrap().missing, 0);
    // 27 in order, then 28, 30, 32, 34 lost.
    let mut t = te + Duration::from_secs(21);
    let mut below = 0;
    for seq in [27, 29, 31, 33, 35] {
        let rate = assigned(&s);
        s.handle_datagram(t, SRC, &data(seq, rate, 0, 0));
        drain(&mut s, t);
        t += Duration::from_millis(100);
        let i = s.flow_info(SRC).unwrap();
        if i.congestion > c1 {
            assert_eq!(s.stats().decreases, 2, "C = {} > c1 = {c1}: {i:?}", i.congestion);
            assert!(below > 0, "no packet between 2 and c1");
            return;
        }
        if i.congestion >= 2.0 && i.missing > 0 {
            // An attempt here would cut: p/p_last gives a factor of at most 0.98.
            let q = i.delivery_ratio / p1;
            assert!(q < 1.0 && q / (2.0 - q) <= 0.98, "{i:?}");
            below += 1;
        }
        assert_eq!(s.stats().decreases, 1, "C = {} ≤ c1 = {c1} cut R: {i:?}", i.congestion);
    }
    panic!("C never exceeded c1 = {c1}");
}
