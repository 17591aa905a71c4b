//! Checks from a review of the RCRT source core (`wsn_proto::rcrt::Source`, spec §3): sequence
//! numbers across the 16-bit wrap, retransmissions outside the token bucket, NACK lists with
//! duplicates and numbers freed or never sent, and a cumulative ACK beyond what was sent. Each
//! pins behaviour that the review found correct.

mod common;

use common::{bytes, ms, w, NONCE};
use wsn_proto::rcrt::{seq_offset, Source, SourceConfig};
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
    let cfg = SourceConfig { nonce: NONCE, ..SourceConfig::paper() };
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
