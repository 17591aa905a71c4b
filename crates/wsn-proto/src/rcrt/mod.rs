//! RCRT: rate-controlled reliable transport (Paek and Govindan, SenSys 2007).
//!
//! A [`Source`] on a sensor opens a connection to a [`Sink`] with its demand, paces new packets
//! with a token bucket at the rate the sink assigns, keeps them in a bounded retransmit buffer
//! and retransmits what the sink NACKs. The sink does everything else: in-order exactly-once
//! delivery, loss detection (missing list), RTT and loss-rate (ALI) estimation, the congestion
//! level C_i of every flow, AIMD on the *total* rate R with M(t) = p/(2 − p), and the split of R
//! among flows by a pluggable [`Policy`]. Feedback (rate, RTT, cumulative ACK, NACKs) is
//! self-contained and sent only on the paper's triggers, at most about once per RTO.
//!
//! Both endpoints are sans-IO: they run on top of the collection forwarder
//! ([`crate::forwarder`]) with [`PROTO_RCRT`] in the collection header. The driver
//! passes each datagram it delivers to `handle_datagram`, sends what `poll_transmit` returns
//! (sources to their sink, the sink to the node it names), calls `handle_timeout` at or after
//! `poll_timeout`, and drains `poll_event` after every call. Time only comes in as
//! [`Instant`](crate::time::Instant) arguments; the only randomness (the reference code's
//! coin flips, [`Profile::ReferenceCode`] only) comes from a seed in [`SinkConfig`].
//!
//! Two behaviour profiles (spec §6): [`Profile::Paper`] (the default) follows the paper and
//! fills its gaps with the reference code's rules; [`Profile::ReferenceCode`] switches on the
//! differences D1–D28 the spec lists for the authors' TinyOS-1 code (all but two code options,
//! D24's shared R and D28's liveness timer as an idle timeout; see the scope below). The wire format
//! ([`wsn_wire::rcrt`]) is this project's modern framing in both profiles.
//!
//! Provenance tags in the docs follow the spec (`docs/specs/rcrt.md`): `[PAPER §x]`,
//! `[CODE file]`, `[DERIVED]`, `[CODE-FILL]` (paper silent, code rule used) and
//! `[AMBIG-n → chosen …]`.
//!
//! **Scope and limitations.** Implemented: everything of spec §2 and §3 for both profiles,
//! including the application-requested flow deletion with its 60 s × 5 liveness timer (§2.18.4,
//! [`Sink::close_flow`], [`Sink::close_all`]; the simulator's scenarios never close an
//! application), except the liveness timer as an idle timeout for flows nobody closed (the
//! paper profile has its own idle timeout instead, whose expired flows come back with their
//! sequence state when their source is heard again, [`SinkConfig::revive_expired`]), one R shared
//! by several applications of one sink process (D24: one [`Sink`] is one application), the shared recovery list of several
//! connections on one mote (one [`Source`] is one connection), and flash latency (retransmissions
//! are spaced by [`SourceConfig::retx_spacing`] instead). DATA carries no end-to-end checksum
//! (see [`wsn_wire::rcrt`]).

pub mod estimators;
pub mod policy;
pub mod sink;
pub mod source;

#[cfg(test)]
mod tests;

pub use estimators::LevelFormula;
pub use policy::{DemandLimited, DemandProportional, Fair, FairGoodput, FlowDemand, Policy, Weighted};
pub use sink::{ConfigError, FeedbackTriggers, FlowInfo, FlowState, FlowStats, Sink, SinkConfig, SinkEvent, SinkStats};
pub use source::{SendError, Source, SourceConfig, SourceEvent, SourceState, SourceStats};

/// Transport protocol number of RCRT in the collection header.
/// [AMBIG → chosen: 0x02; the reference code's routing header uses 0x50 with direction bits,
/// spec §4.2, and this project's collection header keeps direction separately]
pub const PROTO_RCRT: u8 = 0x02;

/// Which behaviour an endpoint follows (spec §6): `Paper` is the paper's algorithm and
/// constants, gaps filled with the code's rules ([CODE-FILL]); `ReferenceCode` applies the
/// differences D1–D28 of spec §6, the authors' TinyOS-1 reference code (all but the code
/// options of D24 and D28).
pub use crate::Profile;

/// Multiplier that spreads incarnation nonces over the 16-bit sequence space
/// ([`seq_offset`]). [AMBIG-21 → chosen: 0x9E37 ≈ 2^16 / φ (Fibonacci hashing), so that nonces
/// one apart (a source reopening adds one) give offsets 25,033 apart and any two of 33
/// consecutive nonces at least 1,405 apart, more than the sanity jump (at most 1,000)]
pub const SEQ_OFFSET_MULTIPLIER: u16 = 0x9E37;

/// Offset of an incarnation's sequence numbers on the wire: DATA seqno, FIN / FIN-ACK last,
/// FEEDBACK cumulative ACK and NACK ranges carry `(seq + offset) mod 2^16`, so the initial
/// sequence number (ISN) of the connection is the offset, its first DATA carries ISN + 1, and
/// both follow from the nonce of its SYN
/// (spec §4.11 item 5, AMBIG-21). Both endpoints know the nonce, so neither sends anything more;
/// a packet of an earlier incarnation still in flight lands far from the new flow's window and is
/// refused by the sanity checks instead of being taken for the new flow's (as TCP's ISN does, the
/// protection is probabilistic: an old packet is mistaken only if the offsets differ by less than
/// the sequence distance the receiver accepts).
pub const fn seq_offset(nonce: u16) -> u16 {
    nonce.wrapping_mul(SEQ_OFFSET_MULTIPLIER)
}

/// Unwrap a 16-bit sequence number (the wire's, minus the connection's [`seq_offset`]) to the
/// 32-bit sequence nearest `reference` (RFC 1982 serial arithmetic over 2^16, spec §4.11 item
/// 5). Values that would fall before 0 give 0 (the connection's own number for its ISN), which
/// every endpoint treats as already acknowledged.
pub(crate) fn unwrap_seq(reference: u32, wire: u16) -> u32 {
    unwrap_seq_signed(reference, wire).clamp(0, i64::from(u32::MAX)) as u32
}

/// As [`unwrap_seq`] without the clamp: a value before the connection's start comes out
/// negative, which no packet of this incarnation can carry (its DATA starts at 1, its FIN and
/// cumulative ACK at 0), so a caller can refuse it as another incarnation's.
pub(crate) fn unwrap_seq_signed(reference: u32, wire: u16) -> i64 {
    let delta = i64::from(wire.wrapping_sub(reference as u16) as i16);
    i64::from(reference) + delta
}

/// |x| without `std`.
pub(crate) fn abs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn consecutive_nonces_give_distant_offsets() {
        // Any two of 33 consecutive nonces: offsets at least 1,405 apart on the circle.
        for base in [0u16, 1, 0x7fff, 0xfff0] {
            for a in 0..33u16 {
                for b in a + 1..33 {
                    let d = seq_offset(base.wrapping_add(a)).wrapping_sub(seq_offset(base.wrapping_add(b)));
                    assert!(d.min(d.wrapping_neg()) >= 1_405, "nonces {a} and {b} after {base}");
                }
            }
        }
        assert_eq!(seq_offset(0), 0);
        assert_eq!(seq_offset(1), 0x9E37);
    }

    #[test]
    fn sequence_unwrap_is_serial_arithmetic() {
        assert_eq!(unwrap_seq(0, 1), 1);
        assert_eq!(unwrap_seq(65_535, 0), 65_536);
        assert_eq!(unwrap_seq(65_536, 65_530), 65_530);
        assert_eq!(unwrap_seq(70_000, 70_000u32 as u16), 70_000);
        assert_eq!(unwrap_seq(5, 65_530), 0, "before the initial sequence number");
        assert_eq!(unwrap_seq(100, 3), 3);
        assert_eq!(unwrap_seq_signed(5, 65_530), -6);
        assert_eq!(unwrap_seq_signed(0, 0), 0);
    }
}
