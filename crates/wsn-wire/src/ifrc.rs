//! The IFRC congestion-sharing header (Rangwala et al., SIGCOMM 2006).
//!
//! IFRC stamps five fields into every packet a node transmits, data it originates or forwards
//! and the base station's control broadcasts [PAPER §4.1.2]: the sender's rate, its average
//! queue length, whether one of its children is congested, and the rate and average queue of
//! the congested child with the smallest rate. Receivers snoop these fields to share
//! congestion (spec `ifrc.md` §5, §6.3).
//!
//! The paper gives no field widths [AMBIG-17 → chosen: this project's own fixed-point layout,
//! 12 bytes]. The header sits in the collection packet's transport payload, right after the
//! collection header, and is followed by the application bytes; `protocol` names those bytes.
//!
//! ```text
//!  0        1..4        4..6     6..9          9..11          11
//! +-------+-----------+--------+-------------+--------------+----------+
//! | flags | rate u24  | avg_q  | child_rate  | child_avg_q  | protocol |
//! +-------+-----------+--------+-------------+--------------+----------+
//!
//! flags:  7 6 | 5        | 4 3 2    | 1       | 0
//!         ver | code_ext | reserved | control | child_congested   ver = 1, reserved = 0
//! ```
//!
//! - **Rates** are unsigned 24-bit big-endian in units of 2⁻¹⁶ pkt/s (UQ8.16): 0 … 255.99998
//!   pkt/s in steps of 1.5·10⁻⁵ pkt/s. [AMBIG-17 → chosen: the largest rate is the base
//!   station's nominal channel rate, about 85 pkt/s (spec §8), and rates fall far below r_init
//!   (the floor is 10⁻⁴ pkt/s, AMBIG-11); 16 bits over 85 pkt/s would step by 1.3·10⁻³ pkt/s, a
//!   tenth of r_init, while 24 bits keep rates from 0.001 pkt/s up within 1.5 %. Nearer the
//!   floor the advertised rate is coarse (and the smallest additive step there, ε·r ≈ 2.5·10⁻⁶
//!   pkt/s, is below one unit); a node keeps its own rate unrounded, only its header rounds]
//! - **Average queue lengths** are unsigned 16-bit big-endian in units of 1/256 packet (UQ8.8):
//!   0 … 255.996 packets, above the 64-packet queue (Table 1) and fine enough for the EWMA with
//!   w_q = 0.02 (one insertion moves it by w_q·|q − avg|: 0.02 packets ≈ 5 steps per packet of
//!   difference).
//! - **Version** 1 in the two top bits, as in [`crate::rcrt`], so an all-zero buffer never
//!   parses; reserved bits must be zero, the sender's rate must not be zero, nor a congested
//!   child's (all rejected as [`Error::Malformed`]).
//! - The paper's 1-bit child flag and this project's control flag share the flags byte.
//! - **Code extension** (flag bit 5, [`FLAG_CODE_EXT`]): [`EXT_LEN`] more bytes right after the
//!   12, before the payload, with the authors' code's header fields that the paper's header
//!   lacks ([`CodeExt`]): the sender's rThresh and ssThresh, its mode, and the congested
//!   child's rThresh and mode [CODE usc-ifrc: RateControlM.nc UpdateHdr, lhRThresh, lhSSThresh,
//!   lhMode, lhCongChildRThresh, lhCongChildMode]. Only the reference-code profile with the
//!   code's ssThresh slow start sets it; the paper profile never does, so its headers keep the
//!   12 bytes above. A header with the bit set but fewer than 22 bytes is [`Error::Truncated`].
//!
//! ```text
//!  12..15      15..18        18                       19..22
//! +----------+-------------+------------------------+----------------+
//! | rThresh  | ssThresh    | mode << 4 | child mode | child rThresh  |
//! +----------+-------------+------------------------+----------------+
//! ```
//!
//!   rThresh and ssThresh are rates as above; ssThresh 0 means unknown (the code's BANDWIDTH);
//!   modes are 0 START, 1 AI, 2 HALF, 3 FOURTH, 4 EIGHTH (RateControl.h), larger values are
//!   [`Error::Malformed`]. Without a congested child its two fields are zero.
//!
//! Encoding rounds to the nearest step and **saturates**: negative, NaN or too large inputs
//! never panic (NaN and negatives give 0, large values the maximum), and a positive rate never
//! encodes as zero (it becomes one step), so a receiver never reads a positive sender as
//! stopped.

use crate::{read_u16, Error, Result};

/// Length of the IFRC header in bytes. [DERIVED: 1 + 3 + 2 + 3 + 2 + 1]
pub const HEADER_LEN: usize = 12;

/// Protocol version carried in the two top bits of the flags byte. [AMBIG-17 → chosen: 1; 0 is
/// reserved so that an all-zero buffer never parses]
pub const VERSION: u8 = 1;

/// Flags bit: some child of the sender is in a congested epoch [PAPER §4.1.2, field 3].
pub const FLAG_CHILD_CONGESTED: u8 = 0x01;

/// Flags bit: a base station's control broadcast [PAPER §4.1.4]. Its sender appends no
/// application payload; the parser does not check that (bytes after the header are the
/// caller's).
pub const FLAG_CONTROL: u8 = 0x02;

/// Flags bit: the [`CodeExt`] extension follows the 12-byte header. [AMBIG-17 → chosen: bit 5,
/// one of the reserved bits; bits 4–2 stay reserved]
pub const FLAG_CODE_EXT: u8 = 0x20;

/// Length of the [`CodeExt`] extension in bytes. [DERIVED: 3 + 3 + 1 + 3]
pub const EXT_LEN: usize = 10;

const VERSION_SHIFT: u32 = 6;
const RESERVED_MASK: u8 = 0x1c;

/// Steps per packet/s of the rate fields (2¹⁶).
pub const RATE_SCALE: f64 = 65_536.0;

/// Largest raw value of a rate field (2²⁴ − 1).
pub const RATE_RAW_MAX: u32 = 0x00ff_ffff;

/// Steps per packet of the average-queue fields (2⁸).
pub const QUEUE_SCALE: f64 = 256.0;

mod field {
    use core::ops::Range;
    pub const FLAGS: usize = 0;
    pub const RATE: Range<usize> = 1..4;
    pub const AVG_Q: Range<usize> = 4..6;
    pub const CHILD_RATE: Range<usize> = 6..9;
    pub const CHILD_AVG_Q: Range<usize> = 9..11;
    pub const PROTOCOL: usize = 11;
    pub const R_THRESH: Range<usize> = 12..15;
    pub const SS_THRESH: Range<usize> = 15..18;
    pub const MODES: usize = 18;
    pub const CHILD_R_THRESH: Range<usize> = 19..22;
}

/// Quantise a rate in pkt/s to the raw 24-bit field value (nearest step, saturating; a
/// positive rate never becomes 0; NaN and negatives give 0).
pub fn rate_to_raw(pps: f64) -> u32 {
    if pps.is_nan() || pps <= 0.0 {
        return 0;
    }
    let scaled = pps * RATE_SCALE + 0.5;
    if scaled >= RATE_RAW_MAX as f64 {
        RATE_RAW_MAX
    } else {
        (scaled as u32).max(1)
    }
}

/// The rate in pkt/s of a raw 24-bit field value (bits above 24 are ignored).
pub fn rate_from_raw(raw: u32) -> f64 {
    f64::from(raw & RATE_RAW_MAX) / RATE_SCALE
}

/// Round a rate to the nearest value the header can carry.
pub fn quantize_rate(pps: f64) -> f64 {
    rate_from_raw(rate_to_raw(pps))
}

/// Quantise an average queue length in packets to the raw 16-bit field value (nearest step,
/// saturating; NaN and negatives give 0).
pub fn queue_to_raw(packets: f64) -> u16 {
    if packets.is_nan() || packets <= 0.0 {
        return 0;
    }
    let scaled = packets * QUEUE_SCALE + 0.5;
    if scaled >= f64::from(u16::MAX) {
        u16::MAX
    } else {
        scaled as u16
    }
}

/// The average queue length in packets of a raw 16-bit field value.
pub fn queue_from_raw(raw: u16) -> f64 {
    f64::from(raw) / QUEUE_SCALE
}

/// Round an average queue length to the nearest value the header can carry.
pub fn quantize_queue(packets: f64) -> f64 {
    queue_from_raw(queue_to_raw(packets))
}

fn read_u24(b: &[u8], r: core::ops::Range<usize>) -> u32 {
    u32::from_be_bytes([0, b[r.start], b[r.start + 1], b[r.start + 2]])
}

/// A read/write view of an IFRC header and the bytes after it.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wrap a buffer and check that the header fits.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Ensure that no accessor will panic: the 12 bytes, and the extension's when its flag is
    /// set.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN || self.buffer.as_ref().len() < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }
    /// Length of the header: [`HEADER_LEN`], plus [`EXT_LEN`] when the extension flag is set
    /// (an empty buffer reads as [`HEADER_LEN`]).
    pub fn header_len(&self) -> usize {
        match self.buffer.as_ref().first() {
            Some(f) if f & FLAG_CODE_EXT != 0 => HEADER_LEN + EXT_LEN,
            _ => HEADER_LEN,
        }
    }
    /// The code extension follows the header.
    pub fn has_code_ext(&self) -> bool {
        self.flags() & FLAG_CODE_EXT != 0
    }
    /// The extension's bytes, when its flag is set and they are all there (`None` otherwise,
    /// so the extension getters never panic, even on an unchecked 12-byte buffer).
    fn ext_bytes(&self) -> Option<&[u8]> {
        let b = self.buffer.as_ref();
        (b.len() >= HEADER_LEN + EXT_LEN && b[field::FLAGS] & FLAG_CODE_EXT != 0).then_some(b)
    }
    /// Extension, raw: the sender's rThresh in 2⁻¹⁶ pkt/s (`None` without the extension).
    pub fn r_thresh_raw(&self) -> Option<u32> {
        self.ext_bytes().map(|b| read_u24(b, field::R_THRESH))
    }
    /// Extension, raw: the sender's ssThresh in 2⁻¹⁶ pkt/s (0: unknown; `None` without the
    /// extension).
    pub fn ss_thresh_raw(&self) -> Option<u32> {
        self.ext_bytes().map(|b| read_u24(b, field::SS_THRESH))
    }
    /// Extension, raw: the sender's mode (high nibble) and its congested child's (low nibble)
    /// (`None` without the extension).
    pub fn modes_raw(&self) -> Option<u8> {
        self.ext_bytes().map(|b| b[field::MODES])
    }
    /// Extension, raw: the congested child's rThresh in 2⁻¹⁶ pkt/s (`None` without the
    /// extension).
    pub fn child_r_thresh_raw(&self) -> Option<u32> {
        self.ext_bytes().map(|b| read_u24(b, field::CHILD_R_THRESH))
    }
    /// Return the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Raw flags byte (version, reserved bits and the two flags).
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Version bits of the flags byte.
    pub fn version(&self) -> u8 {
        self.flags() >> VERSION_SHIFT
    }
    /// Field 3: some child of the sender is congested.
    pub fn child_congested(&self) -> bool {
        self.flags() & FLAG_CHILD_CONGESTED != 0
    }
    /// A base station's control packet.
    pub fn control(&self) -> bool {
        self.flags() & FLAG_CONTROL != 0
    }
    /// Field 1, raw: the sender's rate in 2⁻¹⁶ pkt/s.
    pub fn rate_raw(&self) -> u32 {
        read_u24(self.buffer.as_ref(), field::RATE)
    }
    /// Field 2, raw: the sender's average queue in 1/256 packet.
    pub fn avg_q_raw(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::AVG_Q)
    }
    /// Field 4, raw: the congested child's rate in 2⁻¹⁶ pkt/s.
    pub fn child_rate_raw(&self) -> u32 {
        read_u24(self.buffer.as_ref(), field::CHILD_RATE)
    }
    /// Field 5, raw: the congested child's average queue in 1/256 packet.
    pub fn child_avg_q_raw(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::CHILD_AVG_Q)
    }
    /// Protocol number of the bytes after the header.
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The bytes after the header and its extension, if any (the application payload).
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn write_u24(&mut self, r: core::ops::Range<usize>, v: u32) {
        let b = (v.min(RATE_RAW_MAX)).to_be_bytes();
        self.buffer.as_mut()[r].copy_from_slice(&b[1..4]);
    }
    fn write_u16(&mut self, r: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the raw flags byte.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }
    /// Set field 1, raw (values above 2²⁴ − 1 saturate).
    pub fn set_rate_raw(&mut self, v: u32) {
        self.write_u24(field::RATE, v)
    }
    /// Set field 2, raw.
    pub fn set_avg_q_raw(&mut self, v: u16) {
        self.write_u16(field::AVG_Q, v)
    }
    /// Set field 4, raw (values above 2²⁴ − 1 saturate).
    pub fn set_child_rate_raw(&mut self, v: u32) {
        self.write_u24(field::CHILD_RATE, v)
    }
    /// Set field 5, raw.
    pub fn set_child_avg_q_raw(&mut self, v: u16) {
        self.write_u16(field::CHILD_AVG_Q, v)
    }
    /// Set the payload protocol number.
    pub fn set_protocol(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v;
    }
    /// Set the extension's rThresh, raw (values above 2²⁴ − 1 saturate).
    pub fn set_r_thresh_raw(&mut self, v: u32) {
        self.write_u24(field::R_THRESH, v)
    }
    /// Set the extension's ssThresh, raw (0: unknown).
    pub fn set_ss_thresh_raw(&mut self, v: u32) {
        self.write_u24(field::SS_THRESH, v)
    }
    /// Set the extension's modes byte, raw.
    pub fn set_modes_raw(&mut self, v: u8) {
        self.buffer.as_mut()[field::MODES] = v;
    }
    /// Set the extension's child rThresh, raw (values above 2²⁴ − 1 saturate).
    pub fn set_child_r_thresh_raw(&mut self, v: u32) {
        self.write_u24(field::CHILD_R_THRESH, v)
    }
    /// Mutable bytes after the header and its extension, if any (set the flags first).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// The authors' code's mode, both its increase rule and its congestion level [CODE usc-ifrc:
/// RateControl.h]. Ordered: a rise into [`CodeMode::Half`] or above is a congestion transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CodeMode {
    /// Slow start (0).
    Start,
    /// Additive increase, not congested (1).
    Ai,
    /// Congested, one threshold crossed (2).
    Half,
    /// Congested, two thresholds (3).
    Fourth,
    /// Congested, three thresholds (4).
    Eighth,
}

impl CodeMode {
    /// The wire value.
    pub const fn raw(self) -> u8 {
        self as u8
    }
    /// The mode of a wire value (None above 4).
    pub const fn from_raw(v: u8) -> Option<CodeMode> {
        Some(match v {
            0 => CodeMode::Start,
            1 => CodeMode::Ai,
            2 => CodeMode::Half,
            3 => CodeMode::Fourth,
            4 => CodeMode::Eighth,
            _ => return None,
        })
    }
    /// HALF or above: the code's "congested" [CODE usc-ifrc: RateControlM.nc calcParameters].
    pub const fn congested(self) -> bool {
        self as u8 >= CodeMode::Half as u8
    }
}

/// The code's header fields that the paper's header lacks (the extension, [`FLAG_CODE_EXT`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeExt {
    /// The sender's rThresh (δ = ε·rThresh²), pkt/s.
    pub r_thresh_pps: f64,
    /// The sender's ssThresh, pkt/s; None while unknown (the code's BANDWIDTH).
    pub ss_thresh_pps: Option<f64>,
    /// The sender's mode.
    pub mode: CodeMode,
    /// The congested child's rThresh, pkt/s (0 without one).
    pub child_r_thresh_pps: f64,
    /// The congested child's mode ([`CodeMode::Start`] without one).
    pub child_mode: CodeMode,
}

impl CodeExt {
    /// As it reads back after a round trip (rates quantised; a positive ssThresh never reads as
    /// unknown, as a positive rate never encodes as 0).
    pub fn quantized(&self) -> CodeExt {
        CodeExt {
            r_thresh_pps: quantize_rate(self.r_thresh_pps),
            ss_thresh_pps: self.ss_thresh_pps.map(quantize_rate).filter(|&s| s > 0.0),
            child_r_thresh_pps: quantize_rate(self.child_r_thresh_pps),
            ..*self
        }
    }
}

/// High-level representation of an IFRC header (values in pkt/s and packets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Repr {
    /// Field 3: some child of the sender is in a congested epoch.
    pub child_congested: bool,
    /// A base station's control broadcast.
    pub control: bool,
    /// Field 1: the sender's rate r_i (the base station's r_b), pkt/s.
    pub rate_pps: f64,
    /// Field 2: the sender's EWMA queue length, packets.
    pub avg_q: f64,
    /// Field 4: rate of the congested child with the smallest rate, pkt/s (a base station puts
    /// its own r_b here, the multi-BS fix of [PAPER §4.2]).
    pub child_rate_pps: f64,
    /// Field 5: that child's average queue length, packets.
    pub child_avg_q: f64,
    /// Protocol number of the bytes after the header.
    pub protocol: u8,
    /// The code extension ([`FLAG_CODE_EXT`]), None in the paper's 12-byte header.
    pub code: Option<CodeExt>,
}

impl Repr {
    /// Parse a header: [`Error::Truncated`] when shorter than [`HEADER_LEN`],
    /// [`Error::Malformed`] for another version, a set reserved bit, a zero sender rate (no
    /// sender emits one: a positive rate never encodes as 0, and IFRC rates have a positive
    /// floor; read as a rate it would pull every child that hears it down to the floor), or a
    /// congested child with a zero rate; with the extension flag, [`Error::Truncated`] when
    /// shorter than [`HEADER_LEN`] + [`EXT_LEN`] and [`Error::Malformed`] for a mode above 4.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != VERSION || packet.flags() & RESERVED_MASK != 0 {
            return Err(Error::Malformed);
        }
        if packet.rate_raw() == 0 || (packet.child_congested() && packet.child_rate_raw() == 0) {
            return Err(Error::Malformed);
        }
        // `check_len` passed, so with the flag set every extension getter answers.
        let code =
            match (packet.modes_raw(), packet.r_thresh_raw(), packet.ss_thresh_raw(), packet.child_r_thresh_raw()) {
                (Some(m), Some(r_thresh), Some(ss), Some(child_r_thresh)) => {
                    let (Some(mode), Some(child_mode)) = (CodeMode::from_raw(m >> 4), CodeMode::from_raw(m & 0x0f))
                    else {
                        return Err(Error::Malformed);
                    };
                    Some(CodeExt {
                        r_thresh_pps: rate_from_raw(r_thresh),
                        ss_thresh_pps: (ss != 0).then(|| rate_from_raw(ss)),
                        mode,
                        child_r_thresh_pps: rate_from_raw(child_r_thresh),
                        child_mode,
                    })
                }
                _ => None,
            };
        Ok(Repr {
            code,
            child_congested: packet.child_congested(),
            control: packet.control(),
            rate_pps: rate_from_raw(packet.rate_raw()),
            avg_q: queue_from_raw(packet.avg_q_raw()),
            child_rate_pps: rate_from_raw(packet.child_rate_raw()),
            child_avg_q: queue_from_raw(packet.child_avg_q_raw()),
            protocol: packet.protocol(),
        })
    }

    /// Length of the emitted header: [`HEADER_LEN`], plus [`EXT_LEN`] with the extension.
    pub const fn buffer_len(&self) -> usize {
        if self.code.is_some() {
            HEADER_LEN + EXT_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Write the header into the first [`Repr::buffer_len`] bytes of `packet` (the caller sizes
    /// the buffer; values are quantised and saturate, see the module docs).
    ///
    /// # Panics
    /// If `packet` is shorter than [`Repr::buffer_len`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let mut flags = VERSION << VERSION_SHIFT;
        if self.child_congested {
            flags |= FLAG_CHILD_CONGESTED;
        }
        if self.control {
            flags |= FLAG_CONTROL;
        }
        if let Some(x) = self.code {
            flags |= FLAG_CODE_EXT;
            packet.set_flags(flags);
            packet.set_r_thresh_raw(rate_to_raw(x.r_thresh_pps));
            packet.set_ss_thresh_raw(x.ss_thresh_pps.map_or(0, rate_to_raw));
            packet.set_modes_raw(x.mode.raw() << 4 | x.child_mode.raw());
            packet.set_child_r_thresh_raw(rate_to_raw(x.child_r_thresh_pps));
        }
        packet.set_flags(flags);
        packet.set_rate_raw(rate_to_raw(self.rate_pps));
        packet.set_avg_q_raw(queue_to_raw(self.avg_q));
        packet.set_child_rate_raw(rate_to_raw(self.child_rate_pps));
        packet.set_child_avg_q_raw(queue_to_raw(self.child_avg_q));
        packet.set_protocol(self.protocol);
    }

    /// This header as it reads back after a round trip through the wire (every value quantised).
    pub fn quantized(&self) -> Repr {
        Repr {
            rate_pps: quantize_rate(self.rate_pps),
            avg_q: quantize_queue(self.avg_q),
            child_rate_pps: quantize_rate(self.child_rate_pps),
            child_avg_q: quantize_queue(self.child_avg_q),
            code: self.code.map(|x| x.quantized()),
            ..*self
        }
    }
}

impl core::fmt::Display for Repr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "IFRC{} rate={:.5} avg_q={:.3}",
            if self.control { " CONTROL" } else { "" },
            self.rate_pps,
            self.avg_q
        )?;
        if self.child_congested {
            write!(f, " cc rate={:.5} avg_q={:.3}", self.child_rate_pps, self.child_avg_q)?;
        }
        if let Some(x) = self.code {
            write!(f, " mode={:?} rthresh={:.5}", x.mode, x.r_thresh_pps)?;
            match x.ss_thresh_pps {
                Some(s) => write!(f, " ssthresh={s:.5}")?,
                None => write!(f, " ssthresh=unknown")?,
            }
            if self.child_congested {
                write!(f, " cc mode={:?} rthresh={:.5}", x.child_mode, x.child_r_thresh_pps)?;
            }
        }
        write!(f, " proto={:#04x}", self.protocol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    use crate::test_vector as vector;

    const DATA: &str = include_str!("../../../testdata/vectors/ifrc/data.hex");
    const CHILD_CONGESTED: &str = include_str!("../../../testdata/vectors/ifrc/child_congested.hex");
    const CONTROL: &str = include_str!("../../../testdata/vectors/ifrc/control.hex");
    const BAD_VERSION: &str = include_str!("../../../testdata/vectors/ifrc/bad_version.hex");
    const BAD_RESERVED: &str = include_str!("../../../testdata/vectors/ifrc/bad_reserved.hex");
    const CODE_EXT: &str = include_str!("../../../testdata/vectors/ifrc/code_ext.hex");
    const CODE_EXT_START: &str = include_str!("../../../testdata/vectors/ifrc/code_ext_start.hex");
    const CODE_EXT_TRUNCATED: &str = include_str!("../../../testdata/vectors/ifrc/code_ext_truncated.hex");
    const CODE_EXT_BAD_MODE: &str = include_str!("../../../testdata/vectors/ifrc/code_ext_bad_mode.hex");

    /// Every valid vector with the Repr it encodes and its payload.
    fn cases() -> Vec<(&'static str, Repr, &'static [u8])> {
        vec![
            (
                DATA,
                Repr {
                    child_congested: false,
                    control: false,
                    rate_pps: 0.25,
                    avg_q: 2.5,
                    child_rate_pps: 0.0,
                    child_avg_q: 0.0,
                    protocol: 0x01,
                    code: None,
                },
                b"hi",
            ),
            (
                CHILD_CONGESTED,
                Repr {
                    child_congested: true,
                    control: false,
                    rate_pps: 0.125,
                    avg_q: 8.0,
                    child_rate_pps: 0.0625,
                    child_avg_q: 16.5,
                    protocol: 0x01,
                    code: None,
                },
                b"",
            ),
            (
                CONTROL,
                Repr {
                    child_congested: true,
                    control: true,
                    rate_pps: 85.0,
                    avg_q: 0.0,
                    child_rate_pps: 85.0,
                    child_avg_q: 9.0,
                    protocol: 0x00,
                    code: None,
                },
                b"",
            ),
            (
                CODE_EXT,
                Repr {
                    child_congested: true,
                    control: false,
                    rate_pps: 0.0211,
                    avg_q: 8.0,
                    child_rate_pps: 0.25,
                    child_avg_q: 16.0,
                    protocol: 0x01,
                    code: Some(CodeExt {
                        r_thresh_pps: 0.5,
                        ss_thresh_pps: Some(0.5),
                        mode: CodeMode::Half,
                        child_r_thresh_pps: 0.25,
                        child_mode: CodeMode::Fourth,
                    }),
                }
                .quantized(),
                b"hi",
            ),
            (
                CODE_EXT_START,
                Repr {
                    child_congested: false,
                    control: false,
                    rate_pps: 0.02,
                    avg_q: 0.0,
                    child_rate_pps: 0.0,
                    child_avg_q: 0.0,
                    protocol: 0x01,
                    code: Some(CodeExt {
                        r_thresh_pps: 0.02,
                        ss_thresh_pps: None,
                        mode: CodeMode::Start,
                        child_r_thresh_pps: 0.0,
                        child_mode: CodeMode::Start,
                    }),
                }
                .quantized(),
                b"",
            ),
        ]
    }

    #[test]
    fn vectors_parse_and_emit() {
        for (text, repr, payload) in cases() {
            let bytes = vector(text);
            let p = Packet::new_checked(&bytes[..]).unwrap();
            assert_eq!(Repr::parse(&p).unwrap(), repr, "{text}");
            assert_eq!(p.payload(), payload);
            let mut out = vec![0xa5u8; repr.buffer_len() + payload.len()];
            let mut q = Packet::new_unchecked(&mut out[..]);
            repr.emit(&mut q);
            q.payload_mut().copy_from_slice(payload);
            assert_eq!(out, bytes, "{text}");
        }
    }

    /// No sender emits a zero rate, nor a congested child with one: such a header is refused
    /// (read as a rate, it would pull every child that hears it down to the rate floor).
    #[test]
    fn zero_rates_are_malformed() {
        let ok = Repr {
            child_congested: true,
            control: false,
            rate_pps: 0.5,
            avg_q: 3.0,
            child_rate_pps: 0.25,
            child_avg_q: 9.0,
            protocol: 7,
            code: None,
        };
        for (repr, good) in [
            (ok, true),
            (Repr { rate_pps: 0.0, ..ok }, false),
            (Repr { child_rate_pps: 0.0, ..ok }, false),
            (Repr { child_congested: false, child_rate_pps: 0.0, ..ok }, true),
        ] {
            let mut buf = [0u8; HEADER_LEN];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).is_ok(), good, "{repr:?}");
        }
    }

    #[test]
    fn bad_version_and_reserved_bits_are_malformed() {
        for text in [BAD_VERSION, BAD_RESERVED] {
            let bytes = vector(text);
            assert_eq!(Repr::parse(&Packet::new_unchecked(&bytes[..])), Err(Error::Malformed));
        }
        let zero = [0u8; HEADER_LEN];
        assert_eq!(Repr::parse(&Packet::new_unchecked(&zero[..])), Err(Error::Malformed));
    }

    /// A header announcing the extension but cut short anywhere in it is truncated, never a
    /// panic; a mode above EIGHTH is malformed; the bit that `bad_reserved` sets stays reserved.
    #[test]
    fn truncated_or_bad_extension_is_rejected() {
        let bytes = vector(CODE_EXT);
        for len in HEADER_LEN..HEADER_LEN + EXT_LEN {
            assert_eq!(Packet::new_checked(&bytes[..len]).unwrap_err(), Error::Truncated, "{len}");
            assert_eq!(Repr::parse(&Packet::new_unchecked(&bytes[..len])), Err(Error::Truncated), "{len}");
        }
        assert!(Repr::parse(&Packet::new_unchecked(&bytes[..HEADER_LEN + EXT_LEN])).is_ok());
        let t = vector(CODE_EXT_TRUNCATED);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&t[..])), Err(Error::Truncated));
        let m = vector(CODE_EXT_BAD_MODE);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&m[..])), Err(Error::Malformed));
        assert_eq!(vector(BAD_RESERVED)[0] & FLAG_CODE_EXT, 0, "bad_reserved does not use the extension bit");
        // Every mode value: 0–4 parse, 5–15 are refused, in either nibble.
        for v in 0..=15u8 {
            for (hi, lo) in [(v, 0), (0, v)] {
                let mut b = bytes.clone();
                b[18] = hi << 4 | lo;
                let r = Repr::parse(&Packet::new_unchecked(&b[..]));
                assert_eq!(r.is_ok(), v <= 4, "{hi} {lo}");
            }
        }
    }

    /// The extension getters answer `None`, never panic, on a buffer without the flag (even a
    /// bare 12-byte one) or one cut short inside the extension, and the values otherwise.
    #[test]
    fn extension_getters_never_panic() {
        let plain = vector(DATA);
        let p = Packet::new_unchecked(&plain[..HEADER_LEN]);
        assert!(!p.has_code_ext());
        assert_eq!(
            (p.r_thresh_raw(), p.ss_thresh_raw(), p.modes_raw(), p.child_r_thresh_raw()),
            (None, None, None, None)
        );
        let ext = vector(CODE_EXT);
        for len in 1..HEADER_LEN + EXT_LEN {
            let p = Packet::new_unchecked(&ext[..len]);
            assert_eq!((p.r_thresh_raw(), p.modes_raw(), p.child_r_thresh_raw()), (None, None, None), "{len}");
        }
        let p = Packet::new_unchecked(&ext[..]);
        assert_eq!(p.modes_raw(), Some(ext[18]));
        assert_eq!(p.r_thresh_raw(), Some(u32::from_be_bytes([0, ext[12], ext[13], ext[14]])));
        // A flagless header followed by bytes that would read as an extension still has none.
        let mut long = plain.clone();
        long.resize(HEADER_LEN + EXT_LEN, 0x11);
        assert_eq!(Packet::new_unchecked(&long[..]).ss_thresh_raw(), None);
    }

    #[test]
    fn truncated_input_is_rejected() {
        let bytes = vector(DATA);
        for len in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&bytes[..len]).unwrap_err(), Error::Truncated);
            assert_eq!(Repr::parse(&Packet::new_unchecked(&bytes[..len])), Err(Error::Truncated));
        }
        assert!(Packet::new_checked(&bytes[..HEADER_LEN]).is_ok());
    }

    #[test]
    fn quantisation_rounds_and_saturates() {
        assert_eq!(rate_to_raw(1.0), 65_536);
        assert_eq!(rate_to_raw(1e-9), 1, "a positive rate never encodes as zero");
        assert_eq!(rate_to_raw(-3.0), 0);
        assert_eq!(rate_to_raw(f64::NAN), 0);
        assert_eq!(rate_to_raw(1e12), RATE_RAW_MAX);
        assert_eq!(rate_to_raw(f64::INFINITY), RATE_RAW_MAX);
        assert!((rate_from_raw(RATE_RAW_MAX) - 255.999_984_7).abs() < 1e-6);
        assert_eq!(queue_to_raw(64.0), 64 * 256);
        assert_eq!(queue_to_raw(1e9), u16::MAX);
        assert_eq!(queue_to_raw(-1.0), 0);
        assert_eq!(quantize_rate(0.02), rate_from_raw(1311));
        // Half a step or less of error.
        for r in [1e-4, 0.0025, 0.02, 0.147, 0.22, 85.0] {
            assert!((quantize_rate(r) - r).abs() <= 0.5 / RATE_SCALE);
        }
        let mut buf = [0u8; HEADER_LEN];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.set_rate_raw(u32::MAX);
        assert_eq!(p.rate_raw(), RATE_RAW_MAX);
    }

    proptest! {
        /// Emit then parse gives the quantised Repr back, within half a step of an in-range
        /// input, for any input including junk floats (one case in nine: most cases are
        /// ordinary rates and queues, which `any::<f64>()` alone almost never drew).
        #[test]
        fn round_trip(cc: bool, ctl: bool,
                      r in prop_oneof![8 => 1e-5f64..256.0, 1 => any::<f64>()],
                      aq in prop_oneof![8 => 0.0f64..256.0, 1 => any::<f64>()],
                      cr in 0.0f64..300.0, cq in -1.0f64..300.0, proto: u8,
                      ext in proptest::option::of((0.0f64..300.0, proptest::option::of(1e-5f64..300.0),
                                                   0u8..5, 0.0f64..300.0, 0u8..5))) {
            let code = ext.map(|(rt, ss, m, crt, cm)| CodeExt {
                r_thresh_pps: rt,
                ss_thresh_pps: ss,
                mode: CodeMode::from_raw(m).unwrap(),
                child_r_thresh_pps: crt,
                child_mode: CodeMode::from_raw(cm).unwrap(),
            });
            let repr = Repr { child_congested: cc, control: ctl, rate_pps: r, avg_q: aq,
                              child_rate_pps: cr, child_avg_q: cq, protocol: proto, code };
            let mut buf = [0u8; HEADER_LEN + EXT_LEN];
            let buf = &mut buf[..repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let parsed = Repr::parse(&Packet::new_unchecked(&buf[..]));
            let q = repr.quantized();
            if let (Some(x), Some(s)) = (code, ext.and_then(|e| e.1)) {
                // A positive ssThresh survives as a positive rate (never "unknown").
                prop_assert!(q.code.unwrap().ss_thresh_pps.is_some(), "{}", s);
                prop_assert!((x.r_thresh_pps.min(rate_from_raw(RATE_RAW_MAX)) - q.code.unwrap().r_thresh_pps).abs() <= 0.5 / RATE_SCALE);
            }
            // A zero rate (from NaN or a rate ≤ 0), or a congested child's, is refused.
            if q.rate_pps == 0.0 || (cc && q.child_rate_pps == 0.0) {
                prop_assert_eq!(parsed, Err(Error::Malformed));
                return Ok(());
            }
            let back = parsed.unwrap();
            prop_assert_eq!(back, q);
            let max = rate_from_raw(RATE_RAW_MAX);
            if (1.0 / RATE_SCALE..=max).contains(&r) {
                prop_assert!((back.rate_pps - r).abs() <= 0.5 / RATE_SCALE, "{} → {}", r, back.rate_pps);
            }
            if (0.0..=255.0).contains(&aq) {
                prop_assert!((back.avg_q - aq).abs() <= 0.5 / 256.0, "{} → {}", aq, back.avg_q);
            }
            // Parsing is idempotent on the grid.
            let mut buf2 = [0u8; HEADER_LEN + EXT_LEN];
            let buf2 = &mut buf2[..back.buffer_len()];
            back.emit(&mut Packet::new_unchecked(&mut buf2[..]));
            prop_assert_eq!(&buf[..], &buf2[..]);
        }

        /// Arbitrary bytes never panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..30)) {
            if let Ok(r) = Repr::parse(&Packet::new_unchecked(&bytes[..])) {
                prop_assert!(r.rate_pps >= 0.0 && r.rate_pps < 256.0);
                prop_assert!(r.avg_q >= 0.0 && r.avg_q < 256.0);
            }
        }
    }

    /// Session 36's mutation audit of this module: the rules its surviving mutants showed no test held.
    mod audit36 {
        use super::*;

        /// Module docs: "reserved = 0" for flag bits 4–2, each refused on its own as
        /// [`Error::Malformed`] (the `bad_reserved` vector sets bit 2 only).
        #[test]
        fn each_reserved_flag_bit_is_malformed() {
            for bit in [0x04u8, 0x08, 0x10] {
                let mut bytes = vector(DATA);
                bytes[0] |= bit;
                assert_eq!(Repr::parse(&Packet::new_unchecked(&bytes[..])), Err(Error::Malformed), "{bit:#04x}");
            }
        }

        /// The raw setters of 24-bit rates: "values above 2²⁴ − 1 saturate" (to 2²⁴ − 1, not the
        /// value's low 24 bits); `rate_from_raw`: "bits above 24 are ignored".
        #[test]
        fn raw_rates_above_24_bits_saturate_on_write_and_are_masked_on_read() {
            let mut buf = [0u8; HEADER_LEN + EXT_LEN];
            let mut p = Packet::new_unchecked(&mut buf[..]);
            p.set_flags(VERSION << VERSION_SHIFT | FLAG_CODE_EXT);
            p.set_rate_raw(0x0100_0000);
            p.set_child_rate_raw(0x0100_0001);
            p.set_r_thresh_raw(0x0200_0000);
            p.set_ss_thresh_raw(0x0100_0000);
            p.set_child_r_thresh_raw(0x8000_0000);
            let p = Packet::new_unchecked(&buf[..]);
            assert_eq!((p.rate_raw(), p.child_rate_raw()), (RATE_RAW_MAX, RATE_RAW_MAX));
            assert_eq!(
                (p.r_thresh_raw(), p.ss_thresh_raw(), p.child_r_thresh_raw()),
                (Some(RATE_RAW_MAX), Some(RATE_RAW_MAX), Some(RATE_RAW_MAX))
            );
            assert_eq!(rate_from_raw(0x0100_0001), rate_from_raw(1));
            assert_eq!(rate_from_raw(u32::MAX), rate_from_raw(RATE_RAW_MAX));
        }

        /// `has_code_ext`: "The code extension follows the header" (flag bit 5), true on the
        /// extension vectors, false on the plain ones.
        #[test]
        fn has_code_ext_follows_the_flag() {
            for (text, repr, _) in cases() {
                let bytes = vector(text);
                assert_eq!(Packet::new_unchecked(&bytes[..]).has_code_ext(), repr.code.is_some(), "{text}");
            }
        }

        /// `CodeMode::congested`: "HALF or above", so HALF, FOURTH and EIGHTH are congested and
        /// START and AI are not.
        #[test]
        fn half_and_above_are_congested() {
            for raw in 0..=4 {
                let mode = CodeMode::from_raw(raw).unwrap();
                assert_eq!(mode.raw(), raw);
                assert_eq!(mode.congested(), raw >= 2, "{mode:?}");
            }
        }

        /// `CodeExt::quantized` is the extension "as it reads back after a round trip": an
        /// ssThresh of 0 (or one that is not positive) is sent as 0 and reads as unknown (`None`).
        #[test]
        fn a_zero_ss_thresh_reads_back_as_unknown() {
            let x = CodeExt {
                r_thresh_pps: 0.5,
                ss_thresh_pps: Some(0.0),
                mode: CodeMode::Ai,
                child_r_thresh_pps: 0.0,
                child_mode: CodeMode::Start,
            };
            let repr = Repr {
                child_congested: false,
                control: false,
                rate_pps: 0.5,
                avg_q: 1.0,
                child_rate_pps: 0.0,
                child_avg_q: 0.0,
                protocol: 1,
                code: Some(x),
            };
            let mut buf = [0u8; HEADER_LEN + EXT_LEN];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let back = Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap();
            assert_eq!(back.code.unwrap().ss_thresh_pps, None);
            assert_eq!(x.quantized().ss_thresh_pps, None);
            assert_eq!(repr.quantized(), back);
        }
    }
}
