//! RCRT transport packets: SYN, SYN-ACK, SYN-NACK, DATA, FEEDBACK, FIN and FIN-ACK.
//!
//! RCRT (Paek and Govindan, SenSys 2007) runs end to end on top of the collection header
//! ([`crate::collection`]); the flow is identified by the collection header's origin and sink, so
//! the transport header carries no flow id. This is the project's *modern* framing of the
//! reference code's `TransportMsg` + `rcrt_msg_t` / `rcrt_feedback_t` (spec §4.1–§4.7), changed
//! as spec §4.11 recommends where the 86-byte frame allows it:
//!
//! - **version** (2 bits) and **type** (3 bits) in the first byte, explicit **big-endian** fields;
//! - **rates as pkt/s in a 16-bit unsigned float** ([`Rate`]: 4-bit exponent, 12-bit fraction) instead
//!   of integer-millisecond intervals;
//! - **16-bit sequence numbers with RFC 1982 serial arithmetic** (the endpoints unwrap them);
//! - a per-connection **incarnation nonce** in SYN / SYN-ACK / SYN-NACK, from which both
//!   endpoints derive the connection's initial sequence number, ISN =
//!   `wsn_proto::rcrt::seq_offset(nonce)`: every sequence number on the wire is the connection's
//!   own number plus the ISN (its first DATA carries ISN + 1), so packets of an earlier
//!   incarnation fall outside the new connection's window;
//! - **NACKs as (first, run length) ranges** rather than single sequence numbers;
//! - FIN carries the **last data sequence number** explicitly and FIN-ACK echoes it;
//! - every control packet ends with a **CRC-16/CCITT-FALSE**; there is no 0xFF bypass.
//!
//! Recommendations of §4.11 not taken, or taken in part [AMBIG → chosen]:
//!
//! - item 1's optional little-endian T1 framing: no such profile, since the traces compare
//!   runs of this project, never frames of the T1 binaries;
//! - item 2's flow id separate from the application's: the flow is the collection header's
//!   (origin, sink) pair, one flow per source and sink, and the nonce (in SYN, SYN-ACK and
//!   SYN-NACK, then through the ISN in every sequence number) tells its incarnations apart;
//! - item 3 for DATA, which has no transport checksum (the trade-off below);
//! - item 9: "unknown" stays the value 0 in the feedback id and RTT fields rather than a flag
//!   bit (0 is never a valid fid, and an RTT below 1 ms is sent as 1, so the value cannot be
//!   ambiguous);
//! - item 10: FEEDBACK carries no "rate changed" / "NACK present" flags (the rate is two bytes
//!   and the range count one byte away, so a source gains nothing by skipping them);
//! - item 11, authentication: out of scope here; a deployment that needs it has IEEE 802.15.4
//!   link-layer security.
//!
//! **What the CRC covers.** The control packets' CRC covers the RCRT bytes only, not the
//! collection header's addresses that name the flow (there is no pseudo-header, as UDP and TCP
//! have): a forwarder that corrupts an address in its memory can hand a valid control packet to
//! another flow's endpoint. On the air the IEEE 802.15.4 FCS covers every byte.
//!
//! **DATA length.** DATA has no length limit of its own: the frame's bounds it (127-byte
//! MPDU, so up to 93 bytes of application data behind the 14-byte collection header); the
//! paper's motes sent 64 [PAPER §4.1 "a packet payload size of 64 bytes"; spec §4.1: "data ≤ 64 B"
//! in T1's 86-byte field].
//!
//! ```text
//! byte 0 (all types):  7 6 | 5 4 3 | 2 1 0
//!                      ver | type  | flags        ver = 1; flags used by DATA only
//!
//! DATA      | hdr | seq BE16 | rate UF16 BE16 | fid u8 | since_fb BE16 (2 ms) | data ...
//! SYN       | hdr | demand UF16 BE16 | nonce BE16 | crc BE16 |
//! SYN-ACK   | hdr | fid u8 | rate BE16 | rtt_ms BE16 | nonce BE16 | crc BE16 |
//! SYN-NACK  | hdr | nonce BE16 | crc BE16 |
//! FEEDBACK  | hdr | fid u8 | rate BE16 | rtt_ms BE16 | cack BE16 | n u8 | n × (first BE16, run u8) | crc BE16 |
//! FIN       | hdr | last BE16 | crc BE16 |
//! FIN-ACK   | hdr | last BE16 | crc BE16 |
//! ```
//!
//! **Sizes.** DATA header 8 bytes, so collection (14) + DATA (8) + 64 bytes of application data
//! fill TinyOS 1.x's 86-byte data field exactly [CODE rcrtransport.h: 6 + 8 bytes of header in
//! T1]. FEEDBACK is 11 + 3n bytes (41 with the 10 ranges the sink sends at most), SYN 7, SYN-ACK
//! 10, SYN-NACK / FIN / FIN-ACK 5.
//!
//! **The trade-off in DATA** [AMBIG → chosen: no transport checksum on DATA]. A CRC-16 (or even
//! the T1 8-bit sum) does not fit next to the six fields DATA must carry (type, flags, seqno,
//! rate in use, feedback-id echo, time since feedback) without shrinking the 64-byte payload the
//! paper's experiments used. DATA therefore relies on the per-hop IEEE 802.15.4 FCS
//! (CRC-16/KERMIT, checked by every receiver): corruption on the air is caught, corruption
//! inside a forwarder's memory is not. To make room, the feedback id is 8 bits (the sink keeps
//! only the 5 newest, spec §2.8, so 256 values never alias in practice) and the time since the
//! last feedback is 16 bits in 2 ms units (131 s, above the 120 s ageing limit of spec §3.11).
//! Control packets are small, so they all carry a CRC-16. (One consequence: a flipped type bit
//! can turn a control packet into a DATA that no check catches; three bits cannot keep every
//! type two bit flips away from DATA.)

use core::fmt;

use crate::{Error, Result};

/// Protocol version carried in the two top bits of byte 0. [AMBIG → chosen: 1; 0 is reserved so
/// that an all-zero buffer never parses]
pub const VERSION: u8 = 1;

/// Length of the DATA header (application data follows). [DERIVED: 1 + 2 + 2 + 1 + 2] Unit:
/// bytes.
pub const DATA_HEADER_LEN: usize = 8;

/// Length of a FEEDBACK packet without NACK ranges. [DERIVED: 1 + 1 + 2 + 2 + 2 + 1 + 2]
/// Unit: bytes.
pub const FEEDBACK_BASE_LEN: usize = 11;

/// Bytes per NACK range in a FEEDBACK. [DERIVED: first seqno 2 + run length 1]
pub const NACK_RANGE_LEN: usize = 3;

/// Most NACK ranges a FEEDBACK may carry. [DERIVED: (86 − 14 − 11) / 3 = 20, the ranges that fit
/// a TinyOS 1.x frame behind the collection header]
pub const MAX_NACK_RANGES: usize = 20;

/// Length of a SYN. [DERIVED: 1 + 2 + 2 + 2] Unit: bytes.
pub const SYN_LEN: usize = 7;

/// Length of a SYN-ACK. [DERIVED: 1 + 1 + 2 + 2 + 2 + 2] Unit: bytes.
pub const SYN_ACK_LEN: usize = 10;

/// Length of a SYN-NACK, FIN or FIN-ACK. [DERIVED: 1 + 2 + 2] Unit: bytes.
pub const SHORT_LEN: usize = 5;

/// Length of the CRC trailer of control packets. Unit: bytes.
pub const CRC_LEN: usize = 2;

/// Unit of the DATA "time since the last feedback" field. [AMBIG → chosen: 2 ms, so that 16
/// bits reach 131 s > the 120 s ageing of spec §3.11] Unit: milliseconds.
pub const SINCE_FEEDBACK_UNIT_MS: u32 = 2;

/// DATA flag: the source asks for a feedback (its buffer is more than half full).
/// [PAPER §3.7; CODE rcrtransport.h ACK_REQ 0x40]
pub const FLAG_ACK_REQUEST: u8 = 0x01;

/// DATA flag: this is an end-to-end retransmission. [CODE rcrtransport.h RETX 0x20]
pub const FLAG_RETRANSMISSION: u8 = 0x02;

const FLAG_MASK: u8 = 0x07;
const KIND_SHIFT: u32 = 3;
const KIND_MASK: u8 = 0x07;
const VERSION_SHIFT: u32 = 6;

/// Byte ranges of the fields, per packet type.
mod field {
    /// A range of bytes.
    pub type Field = core::ops::Range<usize>;

    /// Version, type and flags.
    pub const HEADER: usize = 0;

    /// DATA: sequence number.
    pub const DATA_SEQ: Field = 1..3;
    /// DATA: rate in use.
    pub const DATA_RATE: Field = 3..5;
    /// DATA: feedback-id echo.
    pub const DATA_FID: usize = 5;
    /// DATA: time since that feedback, 2 ms units.
    pub const DATA_SINCE: Field = 6..8;

    /// SYN: demand.
    pub const SYN_DEMAND: Field = 1..3;
    /// SYN: incarnation nonce.
    pub const SYN_NONCE: Field = 3..5;

    /// SYN-ACK and FEEDBACK: feedback id.
    pub const FB_FID: usize = 1;
    /// SYN-ACK and FEEDBACK: assigned rate.
    pub const FB_RATE: Field = 2..4;
    /// SYN-ACK and FEEDBACK: the sink's RTT estimate.
    pub const FB_RTT: Field = 4..6;
    /// SYN-ACK: nonce echo.
    pub const SA_NONCE: Field = 6..8;
    /// FEEDBACK: cumulative ACK.
    pub const FB_CACK: Field = 6..8;
    /// FEEDBACK: number of NACK ranges.
    pub const FB_COUNT: usize = 8;
    /// FEEDBACK: first NACK range.
    pub const FB_NACKS: usize = 9;

    /// SYN-NACK: nonce echo; FIN / FIN-ACK: last data sequence number.
    pub const SHORT_VALUE: Field = 1..3;
}

/// The type of an RCRT packet (3 bits of byte 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Source → sink: open a connection and state the demand. [CODE flag SYN 0x02]
    Syn,
    /// Sink → source: connection accepted, first rate. [CODE flag SYN_ACK 0x12]
    SynAck,
    /// Sink → source: connection refused. [CODE flag SYN_NACK 0x82]
    SynNack,
    /// Source → sink: application data (original or retransmission). [CODE flags 0x01/0x21]
    Data,
    /// Sink → source: rate, RTT, cumulative ACK and NACKs. [CODE flag FEEDBACK 0x08]
    Feedback,
    /// Source → sink: teardown with the last sequence number. [CODE flag FIN 0x04]
    Fin,
    /// Sink → source: teardown complete. [CODE flag FIN_ACK 0x14]
    FinAck,
}

impl Kind {
    /// The 3-bit code of this type.
    pub const fn code(self) -> u8 {
        match self {
            Kind::Syn => 0,
            Kind::SynAck => 1,
            Kind::SynNack => 2,
            Kind::Data => 3,
            Kind::Feedback => 4,
            Kind::Fin => 5,
            Kind::FinAck => 6,
        }
    }

    /// The type with 3-bit code `code`, if any (7 is reserved).
    pub const fn from_code(code: u8) -> Option<Kind> {
        match code {
            0 => Some(Kind::Syn),
            1 => Some(Kind::SynAck),
            2 => Some(Kind::SynNack),
            3 => Some(Kind::Data),
            4 => Some(Kind::Feedback),
            5 => Some(Kind::Fin),
            6 => Some(Kind::FinAck),
            _ => None,
        }
    }

    /// Smallest valid length of a packet of this type. Unit: bytes.
    pub const fn min_len(self) -> usize {
        match self {
            Kind::Syn => SYN_LEN,
            Kind::SynAck => SYN_ACK_LEN,
            Kind::SynNack | Kind::Fin | Kind::FinAck => SHORT_LEN,
            Kind::Data => DATA_HEADER_LEN,
            Kind::Feedback => FEEDBACK_BASE_LEN,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Syn => "SYN",
            Kind::SynAck => "SYN-ACK",
            Kind::SynNack => "SYN-NACK",
            Kind::Data => "DATA",
            Kind::Feedback => "FEEDBACK",
            Kind::Fin => "FIN",
            Kind::FinAck => "FIN-ACK",
        })
    }
}

/// A rate in packets per second as a 16-bit unsigned float (UF16): a 4-bit exponent `e` (the top
/// bits) and a 12-bit fraction `f`, in units of 2⁻¹⁶ pkt/s. `e = 0` holds `f · 2⁻¹⁶` pkt/s
/// (0 … 0.0625 pkt/s in steps of 2⁻¹⁶ ≈ 1.5·10⁻⁵), `e ≥ 1` holds `(4096 + f) · 2^(e − 17)` pkt/s
/// (0.0625 … 2047.75 pkt/s, steps of at most 2⁻¹² of the rate, 0.024 %). The code grows with the
/// rate, so codes compare as the rates do.
///
/// [AMBIG → chosen. Spec §4.11 item 4 asks for pkt/s in unsigned fixed point, "e.g. u16 with
/// 1/256 resolution, or u32 milli-pkt/s"; the reference code sends integer-millisecond intervals,
/// spec §1.] DATA has no room for more than 16 bits, and 16-bit fixed point cannot be both fine
/// at the slowest rates and wide enough for the fastest: until session 24 this was UQ8.8, whose
/// 1/256 pkt/s steps moved rates near the 40-flow floor N/30 ≈ 0.033 pkt/s by up to 12 % (the
/// sink's 1 : 2 : 8 and 2 : 1 allocations showed it). The float keeps every rate within 0.024 %
/// above 0.0625 pkt/s and within 2⁻¹⁷ pkt/s below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Rate(pub u16);

/// Bits of the fraction in [`Rate`]'s code.
const RATE_FRACTION_BITS: u32 = 12;
/// 2⁻¹⁶: a [`Rate`] code counts in these units of pkt/s.
const RATE_UNITS_PER_PPS: f64 = 65_536.0;

/// 2^k as an f64, exactly (k within the normal range).
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

impl Rate {
    /// No rate (a SYN's "demand unspecified").
    pub const ZERO: Rate = Rate(0);
    /// The largest rate a code holds, 2047.75 pkt/s.
    pub const MAX: Rate = Rate(u16::MAX);

    /// Encode `pps`, rounding to the nearest code (halves up). A positive rate never encodes as
    /// zero (it becomes the smallest code); negative input, NaN and −∞ give zero; input above
    /// the largest code (and +∞) saturates.
    pub fn from_pps(pps: f64) -> Rate {
        if pps.is_nan() || pps <= 0.0 {
            return Rate(0);
        }
        if pps >= Rate::MAX.pps() {
            return Rate::MAX;
        }
        let units = pps * RATE_UNITS_PER_PPS; // exact: a power of two
        let one = f64::from(1u32 << RATE_FRACTION_BITS);
        if units < one {
            // e = 0: the code is the count of units (4096 after rounding up is e = 1, f = 0).
            return Rate(((units + 0.5) as u16).max(1)); // truncation = floor (positive)
        }
        // ⌊log₂ units⌋ from the float's exponent, exactly: units ∈ [2^(11+e), 2^(12+e)).
        let log2 = ((units.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let e = log2 - RATE_FRACTION_BITS as i32 + 1;
        let mantissa = (units / pow2(e - 1) + 0.5) as u32; // 4096 ..= 8192 (truncation = floor)
                                                           // A mantissa rounded up to 8192 carries into the next exponent by itself.
        let code = ((e as u32) << RATE_FRACTION_BITS) + mantissa - (1 << RATE_FRACTION_BITS);
        Rate(code.min(u32::from(u16::MAX)) as u16)
    }

    /// The rate in packets per second (exact: every code is a dyadic fraction).
    pub fn pps(self) -> f64 {
        let e = i32::from(self.0 >> RATE_FRACTION_BITS);
        let f = f64::from(self.0 & ((1 << RATE_FRACTION_BITS) - 1));
        if e == 0 {
            f / RATE_UNITS_PER_PPS
        } else {
            (f64::from(1u32 << RATE_FRACTION_BITS) + f) * pow2(e - 17)
        }
    }

    /// True for the zero rate.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

/// One run of missing sequence numbers: `first`, `first + 1`, …, `first + run − 1` (mod 2^16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct NackRange {
    /// First missing sequence number.
    pub first: u16,
    /// Number of consecutive missing sequence numbers (1 … 255).
    pub run: u8,
}

/// A bounded list of NACK ranges (no allocation), oldest first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NackList {
    ranges: [NackRange; MAX_NACK_RANGES],
    len: u8,
}

impl NackList {
    /// An empty list.
    pub const fn new() -> NackList {
        NackList { ranges: [NackRange { first: 0, run: 0 }; MAX_NACK_RANGES], len: 0 }
    }

    /// Append a range; returns false (and changes nothing) when the list is full or `run` is 0.
    pub fn push(&mut self, range: NackRange) -> bool {
        let len = usize::from(self.len);
        if len >= MAX_NACK_RANGES || range.run == 0 {
            return false;
        }
        self.ranges[len] = range;
        self.len += 1;
        true
    }

    /// The ranges.
    pub fn as_slice(&self) -> &[NackRange] {
        &self.ranges[..usize::from(self.len)]
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when there are no ranges.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of sequence numbers the ranges cover.
    pub fn seqno_count(&self) -> usize {
        self.as_slice().iter().map(|r| usize::from(r.run)).sum()
    }

    /// Every NACKed sequence number, oldest first.
    pub fn seqnos(&self) -> impl Iterator<Item = u16> + '_ {
        self.as_slice().iter().flat_map(|r| (0..u16::from(r.run)).map(move |k| r.first.wrapping_add(k)))
    }
}

impl fmt::Debug for NackList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// CRC-16/CCITT-FALSE (poly 0x1021, init 0xffff, no reflection, no final XOR) of `data`.
/// [AMBIG → chosen per spec §4.11 item 3; check value of "123456789" is 0x29b1]
pub fn crc16_ccitt(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xffff;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// A read/write view of an RCRT packet. Getters read the field where the packet's type puts it
/// and return 0 (or an empty slice) when the type has no such field or the buffer is too short,
/// so no getter ever panics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checking it. Use for emitting into a buffer of
    /// [`Repr::buffer_len`] bytes.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap a buffer and check it with [`Packet::check_len`]. Use for parsing.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Check that the buffer is long enough for its type: [`Error::Truncated`] when it is
    /// shorter, [`Error::Malformed`] for an unknown version or type, a flag bit the type does
    /// not define, or a control packet with bytes beyond its end.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len == 0 {
            return Err(Error::Truncated);
        }
        if self.version() != VERSION {
            return Err(Error::Malformed);
        }
        let kind = self.kind().ok_or(Error::Malformed)?;
        // Flag bits without a meaning are refused (DATA has two, the others none), so that
        // every packet that parses is the one its `Repr` emits.
        let allowed = if kind == Kind::Data { FLAG_ACK_REQUEST | FLAG_RETRANSMISSION } else { 0 };
        if self.flags() & !allowed != 0 {
            return Err(Error::Malformed);
        }
        if len < kind.min_len() {
            return Err(Error::Truncated);
        }
        let expected = match kind {
            Kind::Data => return Ok(()),
            Kind::Feedback => {
                let count = usize::from(self.nack_count());
                if count > MAX_NACK_RANGES {
                    return Err(Error::Malformed);
                }
                FEEDBACK_BASE_LEN + NACK_RANGE_LEN * count
            }
            other => other.min_len(),
        };
        match len.cmp(&expected) {
            core::cmp::Ordering::Less => Err(Error::Truncated),
            core::cmp::Ordering::Greater => Err(Error::Malformed),
            core::cmp::Ordering::Equal => Ok(()),
        }
    }

    /// Consume the view and return the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version bits (0 for an empty buffer).
    pub fn version(&self) -> u8 {
        self.header() >> VERSION_SHIFT
    }

    /// The packet type, if the type bits name one.
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_code((self.header() >> KIND_SHIFT) & KIND_MASK)
    }

    /// The three flag bits.
    pub fn flags(&self) -> u8 {
        self.header() & FLAG_MASK
    }

    /// DATA: the ACK-request flag.
    pub fn ack_request(&self) -> bool {
        self.kind() == Some(Kind::Data) && self.flags() & FLAG_ACK_REQUEST != 0
    }

    /// DATA: the retransmission flag.
    pub fn retransmission(&self) -> bool {
        self.kind() == Some(Kind::Data) && self.flags() & FLAG_RETRANSMISSION != 0
    }

    /// DATA: the sequence number; FIN and FIN-ACK: the last data sequence number; both in the
    /// connection's wire numbering (see [`Repr::Data`]).
    pub fn seq(&self) -> u16 {
        match self.kind() {
            Some(Kind::Data) => self.read_u16(field::DATA_SEQ),
            Some(Kind::Fin | Kind::FinAck) => self.read_u16(field::SHORT_VALUE),
            _ => 0,
        }
    }

    /// DATA: rate in use; SYN: demand; SYN-ACK and FEEDBACK: assigned rate.
    pub fn rate(&self) -> Rate {
        Rate(match self.kind() {
            Some(Kind::Data) => self.read_u16(field::DATA_RATE),
            Some(Kind::Syn) => self.read_u16(field::SYN_DEMAND),
            Some(Kind::SynAck | Kind::Feedback) => self.read_u16(field::FB_RATE),
            _ => 0,
        })
    }

    /// DATA: echoed feedback id (0 = none known); SYN-ACK and FEEDBACK: this feedback's id.
    pub fn fid(&self) -> u8 {
        match self.kind() {
            Some(Kind::Data) => self.read_u8(field::DATA_FID),
            Some(Kind::SynAck | Kind::Feedback) => self.read_u8(field::FB_FID),
            _ => 0,
        }
    }

    /// DATA: time since the echoed feedback was received, in units of
    /// [`SINCE_FEEDBACK_UNIT_MS`].
    pub fn since_feedback_2ms(&self) -> u16 {
        match self.kind() {
            Some(Kind::Data) => self.read_u16(field::DATA_SINCE),
            _ => 0,
        }
    }

    /// SYN-ACK and FEEDBACK: the sink's RTT estimate in ms (0 = unknown).
    pub fn rtt_ms(&self) -> u16 {
        match self.kind() {
            Some(Kind::SynAck | Kind::Feedback) => self.read_u16(field::FB_RTT),
            _ => 0,
        }
    }

    /// SYN, SYN-ACK and SYN-NACK: the incarnation nonce.
    pub fn nonce(&self) -> u16 {
        match self.kind() {
            Some(Kind::Syn) => self.read_u16(field::SYN_NONCE),
            Some(Kind::SynAck) => self.read_u16(field::SA_NONCE),
            Some(Kind::SynNack) => self.read_u16(field::SHORT_VALUE),
            _ => 0,
        }
    }

    /// FEEDBACK: the cumulative ACK (last sequence number delivered in order).
    pub fn cack(&self) -> u16 {
        match self.kind() {
            Some(Kind::Feedback) => self.read_u16(field::FB_CACK),
            _ => 0,
        }
    }

    /// FEEDBACK: the number of NACK ranges.
    pub fn nack_count(&self) -> u8 {
        match self.kind() {
            Some(Kind::Feedback) => self.read_u8(field::FB_COUNT),
            _ => 0,
        }
    }

    /// FEEDBACK: NACK range `index` (zeroes when `index` is not below the range count or the
    /// buffer is too short).
    pub fn nack(&self, index: usize) -> NackRange {
        if self.kind() != Some(Kind::Feedback) || index >= usize::from(self.nack_count()) {
            return NackRange::default();
        }
        // Checked: an absurd index gives the zero range, never a wrapped offset.
        let Some(start) = index.checked_mul(NACK_RANGE_LEN).and_then(|o| o.checked_add(field::FB_NACKS)) else {
            return NackRange::default();
        };
        let Some(end) = start.checked_add(2) else {
            return NackRange::default();
        };
        NackRange { first: self.read_u16(start..end), run: self.read_u8(end) }
    }

    /// DATA: the application data (empty for other types or a short buffer).
    pub fn payload(&self) -> &[u8] {
        match self.kind() {
            Some(Kind::Data) => self.buffer.as_ref().get(DATA_HEADER_LEN..).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Control packets: the CRC stored in the last two bytes (0 for DATA or a short buffer).
    pub fn checksum(&self) -> u16 {
        let data = self.buffer.as_ref();
        if self.kind() == Some(Kind::Data) || data.len() < CRC_LEN {
            return 0;
        }
        self.read_u16(data.len() - CRC_LEN..data.len())
    }

    /// Control packets: true when the stored CRC matches the bytes before it. DATA carries no
    /// CRC (see the module docs) and always verifies.
    pub fn verify_checksum(&self) -> bool {
        let data = self.buffer.as_ref();
        match self.kind() {
            Some(Kind::Data) => true,
            _ if data.len() < CRC_LEN => false,
            _ => crc16_ccitt(&data[..data.len() - CRC_LEN]) == self.checksum(),
        }
    }

    fn header(&self) -> u8 {
        self.read_u8(field::HEADER)
    }

    fn read_u8(&self, index: usize) -> u8 {
        self.buffer.as_ref().get(index).copied().unwrap_or(0)
    }

    fn read_u16(&self, range: field::Field) -> u16 {
        match self.buffer.as_ref().get(range) {
            Some(&[a, b]) => u16::from_be_bytes([a, b]),
            _ => 0,
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write version [`VERSION`], `kind` and `flags` into byte 0.
    ///
    /// # Panics
    /// If the buffer is empty (as every setter panics on a buffer too short for its field).
    pub fn set_header(&mut self, kind: Kind, flags: u8) {
        self.buffer.as_mut()[field::HEADER] =
            (VERSION << VERSION_SHIFT) | (kind.code() << KIND_SHIFT) | (flags & FLAG_MASK);
    }

    /// DATA: set the sequence number; FIN and FIN-ACK: set the last data sequence number (in
    /// the connection's wire numbering). Does nothing for other types.
    pub fn set_seq(&mut self, value: u16) {
        match self.kind() {
            Some(Kind::Data) => self.write_u16(field::DATA_SEQ, value),
            Some(Kind::Fin | Kind::FinAck) => self.write_u16(field::SHORT_VALUE, value),
            _ => {}
        }
    }

    /// Set the rate field of DATA, SYN (demand), SYN-ACK or FEEDBACK.
    pub fn set_rate(&mut self, value: Rate) {
        match self.kind() {
            Some(Kind::Data) => self.write_u16(field::DATA_RATE, value.0),
            Some(Kind::Syn) => self.write_u16(field::SYN_DEMAND, value.0),
            Some(Kind::SynAck | Kind::Feedback) => self.write_u16(field::FB_RATE, value.0),
            _ => {}
        }
    }

    /// Set the feedback id (DATA: the echo).
    pub fn set_fid(&mut self, value: u8) {
        match self.kind() {
            Some(Kind::Data) => self.buffer.as_mut()[field::DATA_FID] = value,
            Some(Kind::SynAck | Kind::Feedback) => self.buffer.as_mut()[field::FB_FID] = value,
            _ => {}
        }
    }

    /// DATA: set the time since the echoed feedback, in 2 ms units.
    pub fn set_since_feedback_2ms(&mut self, value: u16) {
        if self.kind() == Some(Kind::Data) {
            self.write_u16(field::DATA_SINCE, value);
        }
    }

    /// SYN-ACK and FEEDBACK: set the RTT estimate in ms.
    pub fn set_rtt_ms(&mut self, value: u16) {
        if matches!(self.kind(), Some(Kind::SynAck | Kind::Feedback)) {
            self.write_u16(field::FB_RTT, value);
        }
    }

    /// SYN, SYN-ACK and SYN-NACK: set the incarnation nonce.
    pub fn set_nonce(&mut self, value: u16) {
        match self.kind() {
            Some(Kind::Syn) => self.write_u16(field::SYN_NONCE, value),
            Some(Kind::SynAck) => self.write_u16(field::SA_NONCE, value),
            Some(Kind::SynNack) => self.write_u16(field::SHORT_VALUE, value),
            _ => {}
        }
    }

    /// FEEDBACK: set the cumulative ACK.
    pub fn set_cack(&mut self, value: u16) {
        if self.kind() == Some(Kind::Feedback) {
            self.write_u16(field::FB_CACK, value);
        }
    }

    /// FEEDBACK: set the number of NACK ranges.
    pub fn set_nack_count(&mut self, value: u8) {
        if self.kind() == Some(Kind::Feedback) {
            self.buffer.as_mut()[field::FB_COUNT] = value;
        }
    }

    /// FEEDBACK: set NACK range `index`.
    pub fn set_nack(&mut self, index: usize, range: NackRange) {
        if self.kind() == Some(Kind::Feedback) {
            let start = field::FB_NACKS + NACK_RANGE_LEN * index;
            self.write_u16(start..start + 2, range.first);
            self.buffer.as_mut()[start + 2] = range.run;
        }
    }

    /// DATA: the application data, mutable (empty for other types).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        match self.kind() {
            Some(Kind::Data) => &mut self.buffer.as_mut()[DATA_HEADER_LEN..],
            _ => &mut [],
        }
    }

    /// Control packets: compute the CRC over everything before the trailer and store it.
    /// Does nothing for DATA.
    pub fn fill_checksum(&mut self) {
        if self.kind() == Some(Kind::Data) {
            return;
        }
        let len = self.buffer.as_ref().len();
        let crc = crc16_ccitt(&self.buffer.as_ref()[..len - CRC_LEN]);
        self.write_u16(len - CRC_LEN..len, crc);
    }

    fn write_u16(&mut self, range: field::Field, value: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&value.to_be_bytes());
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level form of an RCRT packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repr<'a> {
    /// Open a connection. [PAPER §3.7; CODE SYN]
    Syn {
        /// Desired rate d_i; [`Rate::ZERO`] = unspecified (the sink substitutes its default).
        demand: Rate,
        /// Incarnation nonce of this connection (spec §4.11 item 5).
        nonce: u16,
    },
    /// Connection accepted: a feedback with no ACK or NACKs. [CODE SYN_ACK]
    SynAck {
        /// Feedback id (never 0).
        fid: u8,
        /// Assigned rate r_i (never zero).
        rate: Rate,
        /// The sink's RTT estimate in ms; 0 = unknown.
        rtt_ms: u16,
        /// The SYN's nonce, echoed.
        nonce: u16,
    },
    /// Connection refused (no room at the sink). [CODE SYN_NACK]
    SynNack {
        /// The SYN's nonce, echoed.
        nonce: u16,
    },
    /// Application data. [PAPER §3.7; CODE rcrt_msg_t]
    Data {
        /// Sequence number in the connection's wire numbering: the connection's own number
        /// (1 for its first packet) plus the offset its SYN's nonce gives
        /// (`wsn_proto::rcrt::seq_offset`), mod 2^16. The offset is the initial sequence
        /// number (ISN) of the connection, so its first DATA carries ISN + 1.
        seq: u16,
        /// The rate the source is using (never zero).
        rate: Rate,
        /// Id of the newest feedback the source accepted; 0 = none, and then the time field
        /// must be 0 too ([`Repr::parse`] refuses anything else as [`Error::Malformed`]).
        fid: u8,
        /// Time since that feedback was received (T″ − T′ of spec §2.8), in 2 ms units.
        since_feedback_2ms: u16,
        /// The source asks for a feedback.
        ack_request: bool,
        /// An end-to-end retransmission.
        retransmission: bool,
        /// Application data.
        payload: &'a [u8],
    },
    /// Sink → source control: self-contained rate, RTT, cumulative ACK and NACKs.
    /// [PAPER §3.7; CODE rcrt_feedback_t]
    Feedback {
        /// Feedback id (never 0).
        fid: u8,
        /// Assigned rate r_i (never zero).
        rate: Rate,
        /// The sink's RTT estimate in ms; 0 = unknown.
        rtt_ms: u16,
        /// Cumulative ACK: every sequence number up to this one was delivered in order (wire
        /// numbering: ISN when nothing was).
        cack: u16,
        /// Missing sequence numbers, oldest first (wire numbering; a range may wrap past
        /// 65,535).
        nacks: NackList,
    },
    /// Teardown. [PAPER §3.8; CODE FIN]
    Fin {
        /// Sequence number of the last data packet sent, in wire numbering (the ISN when none
        /// was sent).
        last: u16,
    },
    /// Teardown complete. [CODE FIN_ACK]
    FinAck {
        /// The FIN's `last`, echoed.
        last: u16,
    },
}

impl<'a> Repr<'a> {
    /// Parse and validate a packet: [`Error::Truncated`] or [`Error::Malformed`] from
    /// [`Packet::check_len`], [`Error::Checksum`] for a control packet whose CRC does not
    /// match, and [`Error::Malformed`] for a zero fid or rate where one is required or an empty
    /// NACK run.
    pub fn parse(bytes: &'a [u8]) -> Result<Repr<'a>> {
        let packet = Packet::new_checked(bytes)?;
        if !packet.verify_checksum() {
            return Err(Error::Checksum);
        }
        let kind = packet.kind().ok_or(Error::Malformed)?;
        let repr = match kind {
            Kind::Syn => Repr::Syn { demand: packet.rate(), nonce: packet.nonce() },
            Kind::SynAck => {
                Repr::SynAck { fid: packet.fid(), rate: packet.rate(), rtt_ms: packet.rtt_ms(), nonce: packet.nonce() }
            }
            Kind::SynNack => Repr::SynNack { nonce: packet.nonce() },
            Kind::Data => Repr::Data {
                seq: packet.seq(),
                rate: packet.rate(),
                fid: packet.fid(),
                since_feedback_2ms: packet.since_feedback_2ms(),
                ack_request: packet.ack_request(),
                retransmission: packet.retransmission(),
                payload: &bytes[DATA_HEADER_LEN..],
            },
            Kind::Feedback => {
                let mut nacks = NackList::new();
                for index in 0..usize::from(packet.nack_count()) {
                    if !nacks.push(packet.nack(index)) {
                        return Err(Error::Malformed);
                    }
                }
                Repr::Feedback {
                    fid: packet.fid(),
                    rate: packet.rate(),
                    rtt_ms: packet.rtt_ms(),
                    cack: packet.cack(),
                    nacks,
                }
            }
            Kind::Fin => Repr::Fin { last: packet.seq() },
            Kind::FinAck => Repr::FinAck { last: packet.seq() },
        };
        match repr {
            Repr::SynAck { fid, rate, .. } | Repr::Feedback { fid, rate, .. } if fid == 0 || rate.is_zero() => {
                Err(Error::Malformed)
            }
            Repr::Data { rate, .. } if rate.is_zero() => Err(Error::Malformed),
            // No feedback to echo, so no time since it either.
            Repr::Data { fid: 0, since_feedback_2ms, .. } if since_feedback_2ms != 0 => Err(Error::Malformed),
            _ => Ok(repr),
        }
    }

    /// The packet type.
    pub const fn kind(&self) -> Kind {
        match self {
            Repr::Syn { .. } => Kind::Syn,
            Repr::SynAck { .. } => Kind::SynAck,
            Repr::SynNack { .. } => Kind::SynNack,
            Repr::Data { .. } => Kind::Data,
            Repr::Feedback { .. } => Kind::Feedback,
            Repr::Fin { .. } => Kind::Fin,
            Repr::FinAck { .. } => Kind::FinAck,
        }
    }

    /// Bytes this packet needs. Unit: bytes.
    pub fn buffer_len(&self) -> usize {
        match self {
            Repr::Data { payload, .. } => DATA_HEADER_LEN + payload.len(),
            Repr::Feedback { nacks, .. } => FEEDBACK_BASE_LEN + NACK_RANGE_LEN * nacks.len(),
            other => other.kind().min_len(),
        }
    }

    /// Write the packet (CRC included) into `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Repr::buffer_len`]; bytes beyond it are left alone.
    pub fn emit(&self, buf: &mut [u8]) {
        debug_assert!(
            !matches!(*self, Repr::Data { fid: 0, since_feedback_2ms, .. } if since_feedback_2ms != 0),
            "DATA without a feedback id carries no time since feedback"
        );
        let len = self.buffer_len();
        let mut packet = Packet::new_unchecked(&mut buf[..len]);
        let flags = match *self {
            Repr::Data { ack_request, retransmission, .. } => {
                (if ack_request { FLAG_ACK_REQUEST } else { 0 })
                    | (if retransmission { FLAG_RETRANSMISSION } else { 0 })
            }
            _ => 0,
        };
        packet.set_header(self.kind(), flags);
        match *self {
            Repr::Syn { demand, nonce } => {
                packet.set_rate(demand);
                packet.set_nonce(nonce);
            }
            Repr::SynAck { fid, rate, rtt_ms, nonce } => {
                packet.set_fid(fid);
                packet.set_rate(rate);
                packet.set_rtt_ms(rtt_ms);
                packet.set_nonce(nonce);
            }
            Repr::SynNack { nonce } => packet.set_nonce(nonce),
            Repr::Data { seq, rate, fid, since_feedback_2ms, payload, .. } => {
                packet.set_seq(seq);
                packet.set_rate(rate);
                packet.set_fid(fid);
                packet.set_since_feedback_2ms(since_feedback_2ms);
                packet.payload_mut().copy_from_slice(payload);
            }
            Repr::Feedback { fid, rate, rtt_ms, cack, nacks } => {
                packet.set_fid(fid);
                packet.set_rate(rate);
                packet.set_rtt_ms(rtt_ms);
                packet.set_cack(cack);
                packet.set_nack_count(nacks.len() as u8);
                for (index, range) in nacks.as_slice().iter().enumerate() {
                    packet.set_nack(index, *range);
                }
            }
            Repr::Fin { last } | Repr::FinAck { last } => packet.set_seq(last),
        }
        packet.fill_checksum();
    }
}

impl fmt::Display for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repr::Syn { demand, nonce } => {
                write!(f, "RCRT SYN demand={:.3}pps nonce={nonce:#06x}", demand.pps())
            }
            Repr::SynAck { fid, rate, rtt_ms, nonce } => {
                write!(f, "RCRT SYN-ACK fid={fid} rate={:.3}pps rtt={rtt_ms}ms nonce={nonce:#06x}", rate.pps())
            }
            Repr::SynNack { nonce } => write!(f, "RCRT SYN-NACK nonce={nonce:#06x}"),
            Repr::Data { seq, rate, fid, since_feedback_2ms, ack_request, retransmission, payload } => write!(
                f,
                "RCRT DATA{}{} seq={seq} rate={:.3}pps fid={fid} since={}ms len={}",
                if *retransmission { "|RETX" } else { "" },
                if *ack_request { "|ACKREQ" } else { "" },
                rate.pps(),
                u32::from(*since_feedback_2ms) * SINCE_FEEDBACK_UNIT_MS,
                payload.len()
            ),
            Repr::Feedback { fid, rate, rtt_ms, cack, nacks } => write!(
                f,
                "RCRT FEEDBACK fid={fid} rate={:.3}pps rtt={rtt_ms}ms cack={cack} nacks={nacks:?}",
                rate.pps()
            ),
            Repr::Fin { last } => write!(f, "RCRT FIN last={last}"),
            Repr::FinAck { last } => write!(f, "RCRT FIN-ACK last={last}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    use crate::test_vector as vector;

    const DATA: &str = include_str!("../../../testdata/vectors/rcrt/data.hex");
    const DATA_RETX: &str = include_str!("../../../testdata/vectors/rcrt/data_retx_ackreq.hex");
    const SYN: &str = include_str!("../../../testdata/vectors/rcrt/syn.hex");
    const SYN_ACK: &str = include_str!("../../../testdata/vectors/rcrt/syn_ack.hex");
    const SYN_NACK: &str = include_str!("../../../testdata/vectors/rcrt/syn_nack.hex");
    const FEEDBACK: &str = include_str!("../../../testdata/vectors/rcrt/feedback.hex");
    const FEEDBACK_EMPTY: &str = include_str!("../../../testdata/vectors/rcrt/feedback_empty.hex");
    const FIN: &str = include_str!("../../../testdata/vectors/rcrt/fin.hex");
    const FIN_ACK: &str = include_str!("../../../testdata/vectors/rcrt/fin_ack.hex");
    const FEEDBACK_BAD_CRC: &str = include_str!("../../../testdata/vectors/rcrt/feedback_bad_crc.hex");
    const DATA_BAD_VERSION: &str = include_str!("../../../testdata/vectors/rcrt/data_bad_version.hex");

    fn two_nacks() -> NackList {
        let mut nacks = NackList::new();
        assert!(nacks.push(NackRange { first: 3, run: 1 }));
        assert!(nacks.push(NackRange { first: 7, run: 2 }));
        nacks
    }

    /// Every vector with the Repr it encodes.
    fn cases() -> Vec<(&'static str, Repr<'static>)> {
        vec![
            (
                DATA,
                Repr::Data {
                    seq: 5,
                    rate: Rate(0x5400),
                    fid: 3,
                    since_feedback_2ms: 50,
                    ack_request: false,
                    retransmission: false,
                    payload: b"hi",
                },
            ),
            (
                DATA_RETX,
                Repr::Data {
                    seq: 0xfffe,
                    rate: Rate(0x4000),
                    fid: 0,
                    since_feedback_2ms: 0,
                    ack_request: true,
                    retransmission: true,
                    payload: &[],
                },
            ),
            (SYN, Repr::Syn { demand: Rate(0x5000), nonce: 0xbeef }),
            (SYN_ACK, Repr::SynAck { fid: 1, rate: Rate(0x4000), rtt_ms: 0, nonce: 0xbeef }),
            (SYN_NACK, Repr::SynNack { nonce: 0xbeef }),
            (FEEDBACK, Repr::Feedback { fid: 9, rate: Rate(0x49a0), rtt_ms: 1200, cack: 2, nacks: two_nacks() }),
            (
                FEEDBACK_EMPTY,
                Repr::Feedback { fid: 0xff, rate: Rate(0xffff), rtt_ms: 0xffff, cack: 0, nacks: NackList::new() },
            ),
            (FIN, Repr::Fin { last: 100 }),
            (FIN_ACK, Repr::FinAck { last: 100 }),
        ]
    }

    /// Flag bits a type does not define are refused: DATA's third bit (DATA has no checksum
    /// to catch it), and any flag on a control packet even with a valid CRC.
    #[test]
    fn undefined_flags_are_malformed() {
        let mut bytes = vector(DATA);
        bytes[0] |= 0x04;
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        let mut bytes = vector(FIN);
        bytes[0] |= 0x07;
        Packet::new_unchecked(&mut bytes[..]).fill_checksum();
        assert!(Packet::new_unchecked(&bytes[..]).verify_checksum());
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        // An absurd NACK index reads the zero range instead of wrapping into the packet.
        let bytes = vector(FEEDBACK);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.nack(usize::MAX), p.nack(0x5555_5555_5555_5556)), (NackRange::default(), NackRange::default()));
    }

    #[test]
    fn test_deconstruct() {
        let bytes = vector(DATA);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(packet.version(), VERSION);
        assert_eq!(packet.kind(), Some(Kind::Data));
        assert_eq!(packet.seq(), 5);
        assert_eq!(packet.rate(), Rate(0x5400));
        assert_eq!(packet.rate().pps(), 1.25);
        assert_eq!(packet.fid(), 3);
        assert_eq!(packet.since_feedback_2ms(), 50);
        assert!(!packet.ack_request() && !packet.retransmission());
        assert_eq!(packet.payload(), b"hi");

        let bytes = vector(FEEDBACK);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(packet.kind(), Some(Kind::Feedback));
        assert_eq!(packet.fid(), 9);
        assert_eq!(packet.rtt_ms(), 1200);
        assert_eq!(packet.cack(), 2);
        assert_eq!(packet.nack_count(), 2);
        assert_eq!(packet.nack(1), NackRange { first: 7, run: 2 });
        assert_eq!(packet.nack(2), NackRange::default(), "past the range count: the CRC read as a range");
        assert!(packet.verify_checksum());
        assert_eq!(packet.checksum(), 0x6f22);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 10];
        let mut packet = Packet::new_unchecked(&mut bytes[..]);
        packet.set_header(Kind::Data, 0);
        packet.set_seq(5);
        packet.set_rate(Rate::from_pps(1.25));
        packet.set_fid(3);
        packet.set_since_feedback_2ms(50);
        packet.payload_mut().copy_from_slice(b"hi");
        assert_eq!(bytes, vector(DATA));

        let mut bytes = vec![0xa5; FEEDBACK_BASE_LEN + 2 * NACK_RANGE_LEN];
        let mut packet = Packet::new_unchecked(&mut bytes[..]);
        packet.set_header(Kind::Feedback, 0);
        packet.set_fid(9);
        packet.set_rate(Rate(0x49a0));
        packet.set_rtt_ms(1200);
        packet.set_cack(2);
        packet.set_nack_count(2);
        packet.set_nack(0, NackRange { first: 3, run: 1 });
        packet.set_nack(1, NackRange { first: 7, run: 2 });
        packet.fill_checksum();
        assert_eq!(bytes, vector(FEEDBACK));
    }

    #[test]
    fn test_parse() {
        for (text, expected) in cases() {
            let bytes = vector(text);
            assert_eq!(Repr::parse(&bytes), Ok(expected), "{text}");
        }
    }

    #[test]
    fn test_emit() {
        for (text, repr) in cases() {
            let mut bytes = vec![0xa5; repr.buffer_len()];
            repr.emit(&mut bytes);
            assert_eq!(bytes, vector(text), "{repr}");
        }
    }

    #[test]
    fn crc_check_value() {
        assert_eq!(crc16_ccitt(b"123456789"), 0x29b1);
    }

    #[test]
    fn bad_checksum_and_version() {
        assert_eq!(Repr::parse(&vector(FEEDBACK_BAD_CRC)), Err(Error::Checksum));
        assert_eq!(Repr::parse(&vector(DATA_BAD_VERSION)), Err(Error::Malformed));
        // Any single flipped bit in a control packet is caught (by the CRC or a field check),
        // except in the three type bits: those can turn it into a DATA, which has no CRC (see
        // the module docs; on the air the 802.15.4 FCS catches it).
        for text in [SYN, SYN_ACK, SYN_NACK, FEEDBACK, FIN, FIN_ACK] {
            let good = vector(text);
            for bit in (0..good.len() * 8).filter(|bit| !(3..6).contains(bit)) {
                let mut bad = good.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                assert!(Repr::parse(&bad).is_err(), "{text} bit {bit}");
            }
        }
    }

    #[test]
    fn truncated_and_malformed() {
        for (text, _) in cases() {
            let bytes = vector(text);
            let min = Packet::new_unchecked(&bytes[..]).kind().unwrap().min_len();
            for len in 0..min {
                let packet = Packet::new_unchecked(&bytes[..len]);
                assert_eq!(Repr::parse(&bytes[..len]), Err(Error::Truncated), "{text} {len}");
                // Getters on a short buffer do not panic either.
                let _ = (
                    packet.seq(),
                    packet.rate(),
                    packet.fid(),
                    packet.rtt_ms(),
                    packet.cack(),
                    packet.nack(5),
                    packet.payload(),
                    packet.checksum(),
                    packet.verify_checksum(),
                    packet.nonce(),
                );
            }
        }
        // A feedback that announces more ranges than it holds, or than the limit.
        let mut bytes = vector(FEEDBACK);
        bytes[8] = 3;
        assert_eq!(Repr::parse(&bytes), Err(Error::Truncated));
        bytes[8] = MAX_NACK_RANGES as u8 + 1;
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        // Trailing bytes after a control packet.
        let mut bytes = vector(FIN);
        bytes.push(0);
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        // Reserved type 7.
        assert_eq!(Repr::parse(&[0x78, 0, 0, 0, 0]), Err(Error::Malformed));
        // Zero fid in a feedback, zero rate in DATA.
        let repr = Repr::Feedback { fid: 0, rate: Rate(1), rtt_ms: 0, cack: 0, nacks: NackList::new() };
        let mut bytes = vec![0; repr.buffer_len()];
        repr.emit(&mut bytes);
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        let mut bytes = vector(DATA);
        bytes[3] = 0;
        bytes[4] = 0;
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        // DATA with no feedback id (0) but a time since that feedback.
        let mut bytes = vector(DATA);
        bytes[5] = 0;
        assert_ne!(u16::from_be_bytes([bytes[6], bytes[7]]), 0, "the vector carries a time");
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
        bytes[6..8].fill(0);
        assert!(matches!(Repr::parse(&bytes), Ok(Repr::Data { fid: 0, since_feedback_2ms: 0, .. })));
        // Empty NACK run.
        let mut bytes = vector(FEEDBACK);
        bytes[11] = 0;
        let len = bytes.len();
        let crc = crc16_ccitt(&bytes[..len - 2]).to_be_bytes();
        bytes[len - 2..].copy_from_slice(&crc);
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
    }

    #[test]
    fn rate_encoding() {
        assert_eq!(Rate::from_pps(0.0), Rate(0));
        assert_eq!(Rate::from_pps(-1.0), Rate(0));
        assert_eq!(Rate::from_pps(f64::NAN), Rate(0));
        assert_eq!(Rate::from_pps(1e-9), Rate(1));
        assert_eq!(Rate(1).pps(), 1.0 / 65_536.0);
        // Below 1/16 pkt/s the code counts units of 2⁻¹⁶ pkt/s; 4095.5 units round up into e = 1.
        assert_eq!(Rate::from_pps(100.0 / 65_536.0), Rate(100));
        assert_eq!(Rate::from_pps(4095.5 / 65_536.0), Rate(0x1000));
        assert_eq!(Rate(0x0fff).pps(), 4095.0 / 65_536.0);
        assert_eq!(Rate(0x1000).pps(), 0.0625);
        // e = 5: (4096 + f) · 2⁻¹² pkt/s.
        assert_eq!(Rate::from_pps(1.0), Rate(0x5000));
        assert_eq!(Rate::from_pps(1.25), Rate(0x5400));
        assert_eq!(Rate::from_pps(0.5), Rate(0x4000));
        assert_eq!(Rate(0x49a0).pps(), 205.0 / 256.0);
        // A mantissa that rounds up to 8192 carries into the next exponent.
        assert_eq!(Rate::from_pps(2.0 - 1e-9), Rate(0x6000));
        assert_eq!(Rate::MAX.pps(), 2047.75);
        assert_eq!(Rate::from_pps(2047.75), Rate::MAX);
        assert_eq!(Rate::from_pps(1e9), Rate::MAX);
        assert_eq!(Rate::from_pps(f64::INFINITY), Rate::MAX);
        // The 40-flow floor N/30 and its doubles keep their exact ratios to within 0.1 %.
        let floor = Rate::from_pps(1.0 / 30.0 / 3.0);
        for k in [2.0, 8.0] {
            let r = Rate::from_pps(k / 30.0 / 3.0).pps() / floor.pps();
            assert!((r / k - 1.0).abs() < 1e-3, "{k}: {r}");
        }
    }

    proptest! {
        /// Every code decodes to a rate that encodes back to it, the codes are ordered as their
        /// rates, and any rate in range encodes within half a step (at most 2⁻¹³ of the rate
        /// from 1/16 pkt/s, 2⁻¹⁷ pkt/s below).
        #[test]
        fn rate_codes_round_trip_in_order(code in 1..u16::MAX, pps in 1e-5f64..2047.0) {
            let r = Rate(code);
            prop_assert_eq!(Rate::from_pps(r.pps()), r);
            prop_assert!(Rate(code + 1).pps() > r.pps());
            let got = Rate::from_pps(pps).pps();
            prop_assert!((got - pps).abs() <= (pps / 8192.0).max(1.0 / 131_072.0) * (1.0 + 1e-12), "{} → {}", pps, got);
        }
    }

    #[test]
    fn nack_list_bounds() {
        let mut nacks = NackList::new();
        assert!(!nacks.push(NackRange { first: 1, run: 0 }));
        for k in 0..MAX_NACK_RANGES as u16 {
            assert!(nacks.push(NackRange { first: k * 10, run: 2 }));
        }
        assert!(!nacks.push(NackRange { first: 999, run: 1 }));
        assert_eq!(nacks.seqno_count(), 2 * MAX_NACK_RANGES);
        let mut wrap = NackList::new();
        wrap.push(NackRange { first: 0xffff, run: 3 });
        assert_eq!(wrap.seqnos().collect::<Vec<_>>(), vec![0xffff, 0, 1]);
    }

    fn arb_rate() -> impl Strategy<Value = Rate> {
        (1..=u16::MAX).prop_map(Rate)
    }

    fn arb_nacks() -> impl Strategy<Value = NackList> {
        proptest::collection::vec((any::<u16>(), 1..=u8::MAX), 0..=MAX_NACK_RANGES).prop_map(|ranges| {
            let mut nacks = NackList::new();
            for (first, run) in ranges {
                nacks.push(NackRange { first, run });
            }
            nacks
        })
    }

    proptest! {
        #[test]
        fn parse_emit_round_trip(
            which in 0..7u8,
            a in any::<u16>(),
            b in any::<u16>(),
            c in any::<u16>(),
            fid in 1..=u8::MAX,
            rate in arb_rate(),
            flags in any::<(bool, bool)>(),
            nacks in arb_nacks(),
            data in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            let repr = match which {
                0 => Repr::Syn { demand: Rate(a), nonce: b },
                1 => Repr::SynAck { fid, rate, rtt_ms: a, nonce: b },
                2 => Repr::SynNack { nonce: a },
                3 => Repr::Data {
                    seq: a, rate, fid: fid.wrapping_add(b as u8),
                    since_feedback_2ms: if fid.wrapping_add(b as u8) == 0 { 0 } else { c },
                    ack_request: flags.0, retransmission: flags.1, payload: &data,
                },
                4 => Repr::Feedback { fid, rate, rtt_ms: a, cack: b, nacks },
                5 => Repr::Fin { last: a },
                _ => Repr::FinAck { last: a },
            };
            let mut bytes = vec![0xa5; repr.buffer_len()];
            repr.emit(&mut bytes);
            prop_assert_eq!(Repr::parse(&bytes), Ok(repr));
        }

        /// Arbitrary bytes never panic the parser or the getters.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), i in any::<usize>()) {
            let _ = Repr::parse(&bytes);
            let packet = Packet::new_unchecked(&bytes[..]);
            let _ = (packet.kind(), packet.seq(), packet.nack(3), packet.nack(i), packet.payload(),
                     packet.verify_checksum(), packet.check_len());
        }

        /// Whatever parses is exactly what its `Repr` emits: no bit is ignored. Raw random
        /// bytes rarely parse, so a third of the cases get a DATA header, and a third are made
        /// into a control packet of the right length with a valid CRC (its other fields stay
        /// random), which parses unless a field is one the format refuses.
        #[test]
        fn whatever_parses_reemits_the_same_bytes(
            mut bytes in proptest::collection::vec(any::<u8>(), 1..80), mode in 0..3u8, code in 0..6u8,
        ) {
            let kind = [Kind::Syn, Kind::SynAck, Kind::SynNack, Kind::Feedback, Kind::Fin, Kind::FinAck]
                [usize::from(code)];
            match mode {
                1 => bytes[0] = (bytes[0] & 0x07) | (VERSION << VERSION_SHIFT) | (Kind::Data.code() << KIND_SHIFT),
                2 if bytes.len() >= kind.min_len() => {
                    let len = if kind == Kind::Feedback {
                        let count = ((bytes.len() - FEEDBACK_BASE_LEN) / NACK_RANGE_LEN).min(MAX_NACK_RANGES);
                        FEEDBACK_BASE_LEN + NACK_RANGE_LEN * count
                    } else {
                        kind.min_len()
                    };
                    bytes.truncate(len);
                    let mut packet = Packet::new_unchecked(&mut bytes[..]);
                    packet.set_header(kind, 0);
                    if kind == Kind::Feedback {
                        packet.set_nack_count(((len - FEEDBACK_BASE_LEN) / NACK_RANGE_LEN) as u8);
                    }
                    packet.fill_checksum();
                }
                _ => {}
            }
            if let Ok(repr) = Repr::parse(&bytes) {
                let mut out = vec![0; repr.buffer_len()];
                repr.emit(&mut out);
                prop_assert_eq!(out, bytes);
            }
        }
    }

    /// Each DATA flag has its own bit: ACK request 0x01, retransmission 0x02 (the vectors set
    /// both at once, so a swap of the two bits would go unnoticed there).
    #[test]
    fn data_flags_each_have_their_own_bit() {
        let data = |ack_request, retransmission| Repr::Data {
            seq: 1,
            rate: Rate(0x5000),
            fid: 0,
            since_feedback_2ms: 0,
            ack_request,
            retransmission,
            payload: &[],
        };
        for (ack_request, retransmission, byte0) in [(true, false, 0x59), (false, true, 0x5a), (false, false, 0x58)] {
            let repr = data(ack_request, retransmission);
            let mut bytes = vec![0; repr.buffer_len()];
            repr.emit(&mut bytes);
            assert_eq!(bytes[0], byte0, "ack_request {ack_request}, retransmission {retransmission}");
            let p = Packet::new_checked(&bytes[..]).unwrap();
            assert_eq!((p.ack_request(), p.retransmission()), (ack_request, retransmission));
            assert_eq!(Repr::parse(&bytes), Ok(repr));
        }
    }

    /// A FEEDBACK may carry exactly `MAX_NACK_RANGES` ranges (one more is malformed), and its
    /// length must then be 11 + 3 × 20 = 71 bytes to the byte.
    #[test]
    fn feedback_with_the_most_nack_ranges_parses() {
        let mut nacks = NackList::new();
        for k in 0..MAX_NACK_RANGES as u16 {
            assert!(nacks.push(NackRange { first: 1000 + 4 * k, run: 3 }));
        }
        let repr = Repr::Feedback { fid: 4, rate: Rate(0x5000), rtt_ms: 300, cack: 999, nacks };
        let mut bytes = vec![0; repr.buffer_len()];
        assert_eq!(bytes.len(), FEEDBACK_BASE_LEN + NACK_RANGE_LEN * MAX_NACK_RANGES);
        repr.emit(&mut bytes);
        assert_eq!(bytes[field::FB_COUNT], MAX_NACK_RANGES as u8);
        assert_eq!(Repr::parse(&bytes), Ok(repr));
        assert_eq!(Packet::new_checked(&bytes[..]).unwrap().nack(MAX_NACK_RANGES - 1).first, 1000 + 4 * 19);
        // One byte short or long of the announced ranges.
        assert_eq!(Repr::parse(&bytes[..bytes.len() - 1]), Err(Error::Truncated));
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(Repr::parse(&long), Err(Error::Malformed));
    }

    /// SYN-ACK and FEEDBACK need both a feedback id and a rate: either one zero is malformed,
    /// even under a valid CRC (the vectors' bit flips only reach the CRC check).
    #[test]
    fn zero_fid_or_rate_in_a_rate_carrying_control_packet_is_malformed() {
        for (fid, rate, ok) in [(0, Rate(0x5000), false), (1, Rate::ZERO, false), (1, Rate(1), true)] {
            for repr in [
                Repr::SynAck { fid, rate, rtt_ms: 10, nonce: 7 },
                Repr::Feedback { fid, rate, rtt_ms: 10, cack: 3, nacks: two_nacks() },
            ] {
                let mut bytes = vec![0; repr.buffer_len()];
                repr.emit(&mut bytes);
                let want = if ok { Ok(repr) } else { Err(Error::Malformed) };
                assert_eq!(Repr::parse(&bytes), want, "{repr}");
            }
        }
        // DATA without a feedback id may not carry even the smallest time since one.
        let mut bytes = vector(DATA);
        bytes[field::DATA_FID] = 0;
        bytes[field::DATA_SINCE].copy_from_slice(&1u16.to_be_bytes());
        assert_eq!(Repr::parse(&bytes), Err(Error::Malformed));
    }

    /// The CRC getters on buffers too short to hold one, and on DATA (which has none).
    #[test]
    fn checksum_getters_on_data_and_short_buffers() {
        // A FIN header alone: no CRC to verify.
        let one = [(VERSION << VERSION_SHIFT) | (Kind::Fin.code() << KIND_SHIFT)];
        let p = Packet::new_unchecked(&one[..]);
        assert_eq!((p.checksum(), p.verify_checksum()), (0, false));
        // DATA: no CRC, so the last two bytes (here the payload) are not one.
        let bytes = vector(DATA);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!((p.checksum(), p.verify_checksum()), (0, true));
    }

    /// Control packets define no flag bit: each single one is refused, even under a valid CRC.
    #[test]
    fn every_flag_bit_on_a_control_packet_is_malformed() {
        for text in [SYN, SYN_ACK, SYN_NACK, FEEDBACK, FEEDBACK_EMPTY, FIN, FIN_ACK] {
            for flag in [0x01, 0x02, 0x04] {
                let mut bytes = vector(text);
                bytes[0] |= flag;
                Packet::new_unchecked(&mut bytes[..]).fill_checksum();
                assert_eq!(Repr::parse(&bytes), Err(Error::Malformed), "{text} flag {flag:#04x}");
            }
        }
    }

    /// Session 36's mutation audit of this module: the rules its surviving mutants showed no test held.
    mod audit36 {
        use super::*;

        /// Every type, by its 3-bit code.
        fn kinds() -> Vec<Kind> {
            (0..8).filter_map(Kind::from_code).collect()
        }

        /// [`Packet`]'s doc: a getter "return[s] 0 (or an empty slice) when the type has no such
        /// field", whatever the buffer holds: here every vector with 16 more bytes behind it (so
        /// every offset holds something) and, on control packets, all three flag bits set (so the
        /// DATA flags would read true if a getter ignored the type).
        #[test]
        fn getters_of_fields_a_type_lacks_read_zero() {
            use Kind::*;
            for (text, _) in cases() {
                let mut bytes = vector(text);
                let kind = Packet::new_unchecked(&bytes[..]).kind().unwrap();
                if kind != Data {
                    bytes[0] |= FLAG_MASK;
                }
                bytes.extend_from_slice(&[0x5a; 16]);
                let p = Packet::new_unchecked(&bytes[..]);
                let lacks = |kinds: &[Kind]| !kinds.contains(&kind);
                if lacks(&[Data]) {
                    assert!(!p.ack_request() && !p.retransmission(), "{kind}");
                    assert_eq!((p.since_feedback_2ms(), p.payload()), (0, &[][..]), "{kind}");
                }
                if lacks(&[Data, Fin, FinAck]) {
                    assert_eq!(p.seq(), 0, "{kind}");
                }
                if lacks(&[Data, Syn, SynAck, Feedback]) {
                    assert_eq!(p.rate(), Rate::ZERO, "{kind}");
                }
                if lacks(&[Data, SynAck, Feedback]) {
                    assert_eq!(p.fid(), 0, "{kind}");
                }
                if lacks(&[SynAck, Feedback]) {
                    assert_eq!(p.rtt_ms(), 0, "{kind}");
                }
                if lacks(&[Syn, SynAck, SynNack]) {
                    assert_eq!(p.nonce(), 0, "{kind}");
                }
                if lacks(&[Feedback]) {
                    assert_eq!((p.cack(), p.nack_count(), p.nack(0)), (0, 0, NackRange::default()), "{kind}");
                }
            }
        }

        /// `set_header` writes "version [`VERSION`], `kind` and `flags` into byte 0": flags take
        /// only the three flag bits (module docs' byte-0 layout), so stray high bits in `flags`
        /// change neither the version nor the type.
        #[test]
        fn set_header_keeps_flags_to_the_three_flag_bits() {
            for kind in kinds() {
                let mut byte = [0u8; 1];
                Packet::new_unchecked(&mut byte[..]).set_header(kind, 0xff);
                let p = Packet::new_unchecked(&byte[..]);
                assert_eq!((p.version(), p.kind(), p.flags()), (VERSION, Some(kind), FLAG_MASK), "{kind}");
            }
        }

        /// `Repr::emit` writes `buffer_len` bytes, CRC included, and "bytes beyond it are left
        /// alone": the CRC ends the packet, not the caller's longer buffer.
        #[test]
        fn emit_into_a_longer_buffer_leaves_the_rest_alone() {
            for (text, repr) in cases() {
                let len = repr.buffer_len();
                let mut buf = vec![0xa5; len + 7];
                repr.emit(&mut buf);
                assert_eq!(buf[..len], vector(text)[..], "{repr}");
                assert!(buf[len..].iter().all(|&b| b == 0xa5), "{repr}: {buf:02x?}");
            }
        }

        /// `NackList::is_empty` is "true when there are no ranges": one range is not empty.
        #[test]
        fn a_nack_list_with_one_range_is_not_empty() {
            let mut nacks = NackList::new();
            assert!(nacks.is_empty());
            assert!(nacks.push(NackRange { first: 9, run: 1 }));
            assert!(!nacks.is_empty() && nacks.len() == 1);
        }

        /// `checksum` reads "the CRC stored in the last two bytes": a buffer of exactly
        /// [`CRC_LEN`] bytes holds one (0 only below that, or for DATA).
        #[test]
        fn checksum_reads_a_two_byte_buffer() {
            let fin = (VERSION << VERSION_SHIFT) | (Kind::Fin.code() << KIND_SHIFT);
            let p = Packet::new_unchecked([fin, 0x42]);
            assert_eq!(p.checksum(), u16::from_be_bytes([fin, 0x42]));
            assert!(!p.verify_checksum(), "the CRC of no bytes is 0xffff");
        }
    }
}
