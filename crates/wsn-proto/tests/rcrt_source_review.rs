//! Checks from a review of the RCRT source core (`wsn_proto::rcrt::Source`, spec §3): sequence
//! numbers across the 16-bit wrap, retransmissions outside the token bucket, NACK lists with
//! duplicates and numbers freed or never sent, and a cumulative ACK beyond what was sent. Each
//! pins behaviour that the review found correct.

mod common;

use common::{bytes, ms, w, NONCE};
use wsn_proto::rcrt::{seq_offset, Source, SourceConfig, SourceEvent, SourceState};
use wsn_proto::time::{Duration, Instant};
use wsn_proto::NodeId;
use wsn_wire::rcrt::{NackList, NackRange, Rate, Repr};

fn feedback(fid: u8, pps: f64, cack: u32, nacks: &[u32]) -> Vec<u8> {
    let mut list = NackList::new();
    for &n in nacks {
        assert!(list.push(NackRange { first: w(n), run: 1 }));
    }
    bytes(&Repr::Feedback { fid, rate: Rate::from_pps(pps), rtt_ms: 100, cack: w(cack), nacks: list })
}

/// (own seq, retransmission, payload) of a DATA datagram.
fn data(b: &[u8]) -> (u16, bool, Vec<u8>) {
    match Repr::parse(b) {
        Ok(Repr::Data { seq, retransmission, payload, .. }) => {
            (seq.wrapping_sub(seq_offset(NONCE)), retransmission, payload.to_vec())
        }
        other => panic!("expected DATA, got {other:?}"),
    }
}

fn drain(s: &mut Source, now: Instant) -> Vec<Vec<u8>> {
    core::iter::from_fn(|| s.poll_transmit(now)).collect()
}

/// An open source (SYN-ACK fid 1 at 0) at `pps`.
fn active(pps: f64) -> Source {
    active_with(SourceConfig::paper(), pps)
}

/// As [`active`] with `cfg` (its nonce replaced by the tests' [`NONCE`]).
fn active_with(cfg: SourceConfig, pps: f64) -> Source {
    let cfg = SourceConfig { nonce: NONCE, ..cfg };
    let mut s = Source::new(NodeId(3), NodeId(0), cfg);
    s.open(ms(0), pps);
    drain(&mut s, ms(0));
    s.handle_datagram(ms(0), &bytes(&Repr::SynAck { fid: 1, rate: Rate::from_pps(pps), rtt_ms: 100, nonce: NONCE }));
    s
}

/// The payload the tests give packet `seq`.
fn payload(seq: u32) -> [u8; 4] {
    seq.to_be_bytes()
}

/// Keep a packet staged and send what is due until `until`; returns (time, datagram).
fn run(s: &mut Source, from: u64, until: u64) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut now = ms(from);
    while now <= ms(until) {
        if s.can_send() {
            s.send(now, &payload(s.last_sent() + 1)).unwrap();
        }
        s.handle_timeout(now);
        out.extend(drain(s, now).into_iter().map(|b| (now.as_millis(), b)));
        if s.can_send() {
            continue;
        }
        match s.poll_timeout() {
            Some(t) if t > now => now = t,
            _ => now += Duration::from_millis(1),
        }
    }
    out
}

/// Sequence numbers past 2^16 (the wire's wrap, shifted by the ISN): every cumulative ACK frees
/// exactly what it covers and every NACK resends the packet with its own payload, through two
/// wraps; the buffer never holds more than its 50 packets.
#[test]
fn cumulative_acks_and_nacks_across_the_sequence_wrap() {
    let mut s = active(100.0);
    let (mut fid, mut t) = (1u8, 0u64);
    while s.last_sent() < 140_000 {
        let out = run(&mut s, t, t + 200);
        t += 200;
        assert!(out.iter().all(|(_, b)| !data(b).1), "no retransmission unless NACKed");
        assert!(s.buffered() <= 50);
        // Acknowledge all but the last 5, NACK the 3rd and 4th newest.
        let last = s.last_sent();
        fid = if fid == 255 { 1 } else { fid + 1 };
        s.handle_datagram(ms(t), &feedback(fid, 100.0, last - 5, &[last - 3, last - 2]));
        assert_eq!((s.last_acked(), s.buffered()), (last - 5, 5), "at {last}");
        // (A new packet may leave meanwhile, at its tick.)
        let resent: Vec<(u16, bool, Vec<u8>)> = [drain(&mut s, ms(t)), drain(&mut s, ms(t + 10))]
            .concat()
            .iter()
            .map(|b| data(b))
            .filter(|d| d.1)
            .collect();
        let expected: Vec<(u16, bool, Vec<u8>)> =
            [last - 3, last - 2].iter().map(|&q| (q as u16, true, payload(q).to_vec())).collect();
        assert_eq!(resent, expected, "at {last}");
        t += 10;
    }
    assert!(s.stats().feedback_stale == 0 && s.stats().feedback_foreign == 0, "{:?}", s.stats());
}

/// [PAPER §3.7] retransmissions are not paced by the token bucket: a burst of NACKed packets
/// leaves at once (10 ms apart) and the next new packet still leaves at its own tick.
#[test]
fn retransmissions_take_no_token() {
    let mut s = active(1.0); // ticks every second; the first packet at 2 s (token −1 after the SYN-ACK)
    let times: Vec<u64> = run(&mut s, 0, 5_000).iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![2_000, 3_000, 4_000, 5_000]);
    s.handle_datagram(ms(5_100), &feedback(2, 1.0, 0, &[1, 2, 3, 4]));
    let out = run(&mut s, 5_100, 6_000);
    let sent: Vec<(u64, u16, bool)> = out.iter().map(|(t, b)| (*t, data(b).0, data(b).1)).collect();
    assert_eq!(sent, vec![(5_100, 1, true), (5_110, 2, true), (5_120, 3, true), (5_130, 4, true), (6_000, 5, false)]);
}

/// A NACK list naming one number three times, a number already freed by the cumulative ACK
/// and numbers never sent (the staged packet's and beyond) resends the one valid number once.
#[test]
fn nack_duplicates_freed_and_unsent_numbers() {
    let mut s = active(10.0);
    run(&mut s, 0, 700);
    assert_eq!(s.last_sent(), 6);
    assert!(!s.can_send(), "packet 7 is staged");
    s.handle_datagram(ms(750), &feedback(2, 10.0, 2, &[4, 4, 1, 2, 4, 7, 9]));
    let resent: Vec<(u16, bool)> =
        [drain(&mut s, ms(750)), drain(&mut s, ms(760))].concat().iter().map(|b| (data(b).0, data(b).1)).collect();
    assert_eq!(resent, vec![(4, true)]);
    assert_eq!(s.stats().retransmissions, 1);
}

/// A cumulative ACK beyond the last packet sent is no ACK of this connection: nothing is freed,
/// and nothing else of that feedback (rate, NACKs, feedback id) applies.
#[test]
fn cumulative_ack_beyond_what_was_sent_is_refused_whole() {
    let mut s = active(10.0);
    run(&mut s, 0, 700);
    assert_eq!(s.last_sent(), 6);
    s.handle_datagram(ms(750), &feedback(2, 2.0, 9, &[3]));
    assert_eq!((s.last_acked(), s.buffered(), s.rate()), (0, 6, 10.0));
    assert!(drain(&mut s, ms(750)).is_empty());
    assert_eq!(s.stats().feedback_foreign, 1);
    // The next feedback, with the same fid and a real ACK, is not taken for a duplicate.
    s.handle_datagram(ms(760), &feedback(2, 2.0, 6, &[]));
    assert_eq!((s.last_acked(), s.buffered(), s.rate()), (6, 0, 2.0));
}

// ------------------------------------------- gaps found by manual mutation testing (audit37)

/// A FEEDBACK with the RTT field `rtt_ms` and no NACKs.
fn feedback_rtt(fid: u8, pps: f64, rtt_ms: u16, cack: u32) -> Vec<u8> {
    bytes(&Repr::Feedback { fid, rate: Rate::from_pps(pps), rtt_ms, cack: w(cack), nacks: NackList::new() })
}

/// The fid echo of a DATA datagram.
fn echoed_fid(b: &[u8]) -> u8 {
    match Repr::parse(b) {
        Ok(Repr::Data { fid, .. }) => fid,
        other => panic!("expected DATA, got {other:?}"),
    }
}

/// [`Source::open`]: "Does nothing unless the source is idle": a second call while the SYN is
/// out sends no second SYN and moves neither its timer nor the demand.
#[test]
fn open_does_nothing_unless_idle() {
    let mut s = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    s.open(ms(0), 2.0);
    assert_eq!(drain(&mut s, ms(0)).len(), 1);
    s.open(ms(500), 4.0);
    assert!(drain(&mut s, ms(500)).is_empty(), "a second SYN");
    assert_eq!(s.poll_timeout(), Some(ms(2_000)), "the SYN timer restarted");
    assert_eq!(s.state(), SourceState::SynAckWait { retries: 0, deadline: ms(2_000) });
    let repeat = drain(&mut s, ms(2_000));
    assert_eq!(Repr::parse(&repeat[0]), Ok(Repr::Syn { demand: Rate::from_pps(2.0), nonce: NONCE }));
    assert_eq!(s.stats().syn_sent, 2, "SYNs sent, repetitions included");
}

/// [`SourceEvent::Opened`]: "The SYN-ACK arrived: the application may send", the first event,
/// before the rate the SYN-ACK assigns.
#[test]
fn the_syn_ack_reports_opened_first() {
    let mut s = active(2.0);
    let events: Vec<SourceEvent> = core::iter::from_fn(|| s.poll_event()).collect();
    assert_eq!(events, vec![SourceEvent::Opened, SourceEvent::RateChanged(2.0)]);
}

/// Spec §3.7 step 1 / [`SourceConfig::fid_dup_window`]: only the newest *accepted* feedback
/// and the 9 before it are duplicates; before any was accepted none is, so a SYN-ACK whose fid
/// is 250 (that is, 6 "older" than 0 in 8-bit arithmetic) still sets the rate.
#[test]
fn the_first_feedback_is_no_duplicate_whatever_its_id() {
    let mut s = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    s.open(ms(0), 2.0);
    drain(&mut s, ms(0));
    s.handle_datagram(ms(10), &bytes(&Repr::SynAck { fid: 250, rate: Rate::from_pps(2.0), rtt_ms: 0, nonce: NONCE }));
    assert_eq!(s.state(), SourceState::Active);
    assert_eq!((s.rate(), s.stats().feedback_accepted, s.stats().feedback_stale), (2.0, 1, 0));
}

/// Spec §3.7 step 3 [CODE RCRT_MAX_RTT]: "If 0 < fb.rtt < 10 000, set rtt": 10 000 ms itself
/// is refused, 9 999 ms taken.
#[test]
fn a_reported_rtt_of_exactly_the_maximum_is_refused() {
    let mut s = active(1.0);
    assert_eq!(s.rtt(), Duration::from_millis(100));
    s.handle_datagram(ms(10), &feedback_rtt(2, 1.0, 10_000, 0));
    assert_eq!(s.rtt(), Duration::from_millis(100));
    s.handle_datagram(ms(20), &feedback_rtt(3, 1.0, 9_999, 0));
    assert_eq!(s.rtt(), Duration::from_millis(9_999));
}

/// [`SourceStats::small_buffer_warnings`]: "2·r·RTT exceeded half the buffer" (AMBIG-17):
/// 2 · 5 pkt/s · 2.5 s = 25, exactly half of 50, is no warning; 2.6 s is.
#[test]
fn the_small_buffer_warning_needs_more_than_half_the_buffer() {
    let mut s = active(5.0);
    assert_eq!(s.rate(), 5.0);
    s.handle_datagram(ms(10), &feedback_rtt(2, 5.0, 2_500, 0));
    assert_eq!(s.stats().small_buffer_warnings, 0);
    s.handle_datagram(ms(20), &feedback_rtt(3, 5.0, 2_600, 0));
    assert_eq!(s.stats().small_buffer_warnings, 1);
}

/// [`SourceEvent::Resumed`]: "The buffer has room again": a cumulative ACK that frees one
/// packet of a full 4-packet buffer resumes the source.
#[test]
fn freeing_one_packet_of_a_full_buffer_resumes() {
    let mut s = active_with(SourceConfig { buffer_packets: 4, ..SourceConfig::paper() }, 10.0);
    run(&mut s, 0, 700);
    assert_eq!((s.last_sent(), s.is_stalled()), (4, true));
    while s.poll_event().is_some() {}
    s.handle_datagram(ms(750), &feedback(2, 10.0, 1, &[]));
    let events: Vec<SourceEvent> = core::iter::from_fn(|| s.poll_event()).collect();
    assert_eq!(events, vec![SourceEvent::Acked(1), SourceEvent::Resumed]);
    assert!(!s.is_stalled());
}

/// Spec §3.7 step 6 [CODE]: the reference code's NACK walk stops at the first entry that "is
/// 0": a list [0, 3] resends nothing (the paper profile skips the 0 and resends 3).
#[test]
fn code_nack_walk_stops_at_zero() {
    for cfg in [SourceConfig::reference_code(), SourceConfig::paper()] {
        let code = cfg.profile == wsn_proto::Profile::ReferenceCode;
        let mut s = active_with(cfg, 10.0);
        run(&mut s, 0, 700);
        assert_eq!(s.last_sent(), 6);
        s.handle_datagram(ms(750), &feedback(2, 10.0, 0, &[0, 3]));
        let resent: Vec<u16> = drain(&mut s, ms(750)).iter().map(|b| data(b)).filter(|d| d.1).map(|d| d.0).collect();
        assert_eq!(resent, if code { vec![] } else { vec![3] }, "{:?}", s.config().profile);
    }
}

/// Spec §3.7 step 6 [CODE]: the walk stops at an entry "more than 200 behind lastSent": one
/// exactly 200 behind is still resent, one 201 behind ends the walk (the entry after it too).
#[test]
fn code_nack_exactly_200_behind_is_still_resent() {
    let cfg = SourceConfig { buffer_packets: 300, ..SourceConfig::reference_code() };
    let mut s = active_with(cfg, 100.0);
    run(&mut s, 0, 2_500);
    assert!(s.last_sent() > 210, "{}", s.last_sent());
    let resent = |s: &mut Source, at: u64| -> Vec<u32> {
        drain(s, ms(at)).iter().map(|b| data(b)).filter(|d| d.1).map(|d| u32::from(d.0)).collect()
    };
    let last = s.last_sent();
    s.handle_datagram(ms(2_600), &feedback(2, 100.0, 0, &[last - 201, last - 199]));
    assert_eq!(resent(&mut s, 2_600), Vec::<u32>::new());
    let last = s.last_sent();
    s.handle_datagram(ms(2_700), &feedback(3, 100.0, 0, &[last - 200]));
    assert_eq!(resent(&mut s, 2_700), vec![last - 200]);
}

/// Spec §3.6 [CODE `StateTimerFired`]: the reference code's probe period 2·min(max(1/r, RTT),
/// 10 s) is capped at 20 s: at 0.05 pkt/s (1/r = 20 s) a full one-packet buffer is probed every
/// 20 s, not every 40 s.
#[test]
fn code_probe_period_is_capped_at_twenty_seconds() {
    let cfg = SourceConfig { buffer_packets: 1, ..SourceConfig::reference_code() };
    let mut s = active_with(cfg, 0.05);
    let out = run(&mut s, 0, 130_000);
    assert!(out.iter().skip(1).all(|(_, b)| data(b).1), "probes only after packet 1");
    let gaps: Vec<u64> = out.windows(2).map(|p| p[1].0 - p[0].0).collect();
    assert!(gaps.len() >= 3 && gaps.iter().all(|&g| g == 20_000), "{gaps:?}");
}

/// [`SourceConfig::feedback_age_limit`]: "After this long without feedback the source stops
/// reporting the time since it (fid 0)": a packet 119 s after the SYN-ACK echoes its fid, one
/// exactly 120 s after echoes 0 (a buffer large enough that no stall intervenes).
#[test]
fn the_feedback_echo_ends_exactly_at_the_age_limit() {
    let mut s = active_with(SourceConfig { buffer_packets: 200, ..SourceConfig::paper() }, 1.0); // ticks on whole seconds
    let out = run(&mut s, 0, 120_000);
    let at = |t: u64| out.iter().find(|(when, _)| *when == t).map(|(_, b)| echoed_fid(b));
    assert_eq!((at(119_000), at(120_000)), (Some(1), Some(0)));
}

/// Close after a teardown that gave up: a timed-out setup is torn down with one FIN run; once
/// its retries are spent (FAILED, Aborted), a further `close` sends nothing.
#[test]
fn close_after_an_aborted_teardown_sends_nothing() {
    let mut s = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    s.open(ms(0), 2.0);
    for k in 0..=10u64 {
        drain(&mut s, ms(2_000 * k));
    }
    s.handle_timeout(ms(22_000));
    assert_eq!(s.state(), SourceState::Failed);
    s.close(ms(30_000));
    let mut fins = 0;
    for k in 0..=10u64 {
        fins += drain(&mut s, ms(30_000 + 20_000 * k)).len();
    }
    s.handle_timeout(ms(250_000));
    assert_eq!((fins, s.state()), (11, SourceState::Failed));
    assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SourceEvent::Aborted));
    s.close(ms(260_000));
    assert!(drain(&mut s, ms(260_000)).is_empty());
    assert_eq!(s.state(), SourceState::Failed);
}

/// Spec §4.11 item 5: a SYN-ACK carrying another incarnation's nonce is not this connection's
/// answer: the source stays in SYN_ACK_WAIT and counts it as unexpected.
#[test]
fn a_syn_ack_of_another_incarnation_does_not_open() {
    let mut s = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    s.open(ms(0), 2.0);
    drain(&mut s, ms(0));
    let other = NONCE.wrapping_add(1);
    s.handle_datagram(ms(10), &bytes(&Repr::SynAck { fid: 1, rate: Rate::from_pps(2.0), rtt_ms: 0, nonce: other }));
    assert!(matches!(s.state(), SourceState::SynAckWait { .. }), "{}", s.state());
    assert_eq!((s.rate(), s.stats().unexpected), (0.0, 1));
    assert_eq!(s.poll_event(), None);
}

/// [`Source::close`]: before the SYN-ACK "tear down whatever the sink may have set up" (a FIN
/// with last = 0, FIN_ACK_WAIT); on a source never opened, closed at once with
/// [`SourceEvent::Closed`] and nothing sent.
#[test]
fn close_before_the_syn_ack_sends_a_fin_and_close_when_idle_closes_at_once() {
    let mut s = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    s.open(ms(0), 2.0);
    drain(&mut s, ms(0));
    s.close(ms(500));
    assert_eq!(
        drain(&mut s, ms(500)).iter().map(|b| Repr::parse(b)).collect::<Vec<_>>(),
        vec![Ok(Repr::Fin { last: w(0) })]
    );
    assert!(matches!(s.state(), SourceState::FinAckWait { .. }), "{}", s.state());

    let mut idle = Source::new(NodeId(3), NodeId(0), SourceConfig { nonce: NONCE, ..SourceConfig::paper() });
    idle.close(ms(0));
    assert_eq!((idle.state(), idle.poll_event()), (SourceState::Closed, Some(SourceEvent::Closed)));
    assert!(drain(&mut idle, ms(0)).is_empty());
}

/// [`SourceConfig::wait_for_send_done`] and [`Source::poll_timeout`]: a FIN queued behind an
/// in-flight DATA packet is due one `send_done_retry` (10 ms) after that packet's send-done,
/// not at the FIN's 20-s repetition timer.
#[test]
fn a_queued_fin_is_due_at_the_retry_after_the_send_done() {
    let mut s = active_with(SourceConfig { wait_for_send_done: true, ..SourceConfig::paper() }, 10.0);
    s.handle_send_done(ms(0)); // the SYN's
    s.send(ms(0), &payload(1)).unwrap();
    s.close(ms(0));
    let out = drain(&mut s, ms(200));
    assert_eq!(out.len(), 1, "one datagram in flight");
    assert_eq!(data(&out[0]).0, 1);
    s.handle_send_done(ms(205));
    assert_eq!(s.poll_timeout(), Some(ms(215)));
    assert_eq!(
        drain(&mut s, ms(215)).iter().map(|b| Repr::parse(b)).collect::<Vec<_>>(),
        vec![Ok(Repr::Fin { last: w(1) })]
    );
}

/// [`SourceEvent::Aborted`]: "The FIN retries ran out; the connection was dropped": nothing
/// is kept in the retransmit buffer afterwards.
#[test]
fn an_aborted_teardown_drops_the_buffer() {
    let mut s = active(10.0);
    s.send(ms(0), &payload(1)).unwrap();
    s.close(ms(0));
    assert_eq!(drain(&mut s, ms(200)).len(), 2, "packet 1 and the FIN");
    assert_eq!(s.buffered(), 1);
    for k in 1..=11u64 {
        drain(&mut s, ms(200 + 20_000 * k));
    }
    assert_eq!((s.state(), s.buffered()), (SourceState::Failed, 0));
}
