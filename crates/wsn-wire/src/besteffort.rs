//! Payload of the fixed-rate best-effort source.
//!
//! The baseline "transport" of the comparison sends at a fixed rate with no end-to-end
//! reliability or rate control. Each packet carries just enough for the sink to count delivery,
//! order and latency per flow:
//!
//! ```text
//!  0      2         6
//! +------+---------+-------------------+
//! | flow | seq     | application data  |
//! | BE16 | BE32    | (opaque, any len) |
//! +------+---------+-------------------+
//! ```
//!
//! `flow` identifies the source flow (the simulator writes its flow index) and `seq` counts that flow's
//! packets from 0. The header is kept to 6 bytes so that the collection header (14) plus this
//! header plus RCRT's 64 bytes of application data fit TinyOS 1.x's 86-byte data field; the
//! simulator measures latency from its own record of when each packet was generated.
//! [AMBIG → chosen: this project's own format; the transport papers do not define a
//! best-effort baseline packet.]

use core::fmt;

use crate::{Error, Result};

/// Byte ranges of the fields.
mod field {
    /// A range of bytes.
    pub type Field = core::ops::Range<usize>;

    /// Flow identifier.
    pub const FLOW: Field = 0..2;
    /// Per-flow sequence number.
    pub const SEQ: Field = 2..6;
    /// Application data after the header.
    pub const DATA: core::ops::RangeFrom<usize> = SEQ.end..;
}

/// Length of the best-effort header. [DERIVED: 2 + 4] Unit: bytes.
pub const HEADER_LEN: usize = field::SEQ.end;

/// A read/write view of a best-effort packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checking its length. Use for emitting into a buffer of
    /// [`Repr::buffer_len`] bytes.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap a buffer and check its length with [`Packet::check_len`]. Use for parsing.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Return [`Error::Truncated`] if the buffer is shorter than [`HEADER_LEN`]. After `Ok`, no
    /// getter panics.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Consume the view and return the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The flow identifier (0 if the buffer is too short).
    pub fn flow(&self) -> u16 {
        match self.buffer.as_ref().get(field::FLOW) {
            Some(&[a, b]) => u16::from_be_bytes([a, b]),
            _ => 0,
        }
    }

    /// The per-flow sequence number (0 if the buffer is too short).
    pub fn seq(&self) -> u32 {
        read_be32(self.buffer.as_ref(), field::SEQ)
    }

    /// The application data after the header (empty if the buffer is too short).
    pub fn data(&self) -> &[u8] {
        self.buffer.as_ref().get(field::DATA).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the flow identifier.
    ///
    /// # Panics
    /// If the buffer is shorter than [`HEADER_LEN`] (as every setter).
    pub fn set_flow(&mut self, value: u16) {
        self.buffer.as_mut()[field::FLOW].copy_from_slice(&value.to_be_bytes());
    }

    /// Set the per-flow sequence number.
    pub fn set_seq(&mut self, value: u32) {
        self.buffer.as_mut()[field::SEQ].copy_from_slice(&value.to_be_bytes());
    }

    /// The application data after the header, mutable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// High-level form of a best-effort packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    /// The flow identifier.
    pub flow: u16,
    /// The per-flow sequence number.
    pub seq: u32,
    /// Length of the application data after the header. Unit: bytes.
    pub data_len: usize,
}

impl Repr {
    /// Parse a packet. Every header value is legal, so the only error is [`Error::Truncated`].
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr { flow: packet.flow(), seq: packet.seq(), data_len: packet.data().len() })
    }

    /// Bytes this packet needs: header plus data. Unit: bytes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data_len
    }

    /// Write the header and `data`.
    ///
    /// # Panics
    /// If the buffer is not exactly [`Repr::buffer_len`] bytes or `data.len() != self.data_len`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>, data: &[u8]) {
        assert_eq!(data.len(), self.data_len, "data length differs from the Repr's data_len");
        assert_eq!(packet.buffer.as_ref().len(), self.buffer_len(), "buffer is not buffer_len() bytes");
        packet.set_flow(self.flow);
        packet.set_seq(self.seq);
        packet.data_mut().copy_from_slice(data);
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BE flow={} seq={} len={}", self.flow, self.seq, self.data_len)
    }
}

/// Read a big-endian u32 from `range` of `data`, or 0 if it is out of bounds.
fn read_be32(data: &[u8], range: field::Field) -> u32 {
    match data.get(range) {
        Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;

    use crate::test_vector as vector;

    const BASIC: &str = include_str!("../../../testdata/vectors/besteffort/basic.hex");
    const HEADER_ONLY: &str = include_str!("../../../testdata/vectors/besteffort/header_only.hex");

    const BASIC_REPR: Repr = Repr { flow: 3, seq: 7, data_len: 2 };
    const HEADER_ONLY_REPR: Repr = Repr { flow: 0xffff, seq: 0xffff_fffe, data_len: 0 };

    #[test]
    fn test_deconstruct() {
        let bytes = vector(BASIC);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(packet.flow(), 3);
        assert_eq!(packet.seq(), 7);
        assert_eq!(packet.data(), b"hi");
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 8];
        let mut packet = Packet::new_unchecked(&mut bytes[..]);
        packet.set_flow(3);
        packet.set_seq(7);
        packet.data_mut().copy_from_slice(b"hi");
        assert_eq!(bytes, vector(BASIC));
    }

    #[test]
    fn test_parse() {
        for (text, expected) in [(BASIC, BASIC_REPR), (HEADER_ONLY, HEADER_ONLY_REPR)] {
            let bytes = vector(text);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            assert_eq!(Repr::parse(&packet), Ok(expected));
        }
    }

    #[test]
    fn test_emit() {
        for (text, repr, data) in [(BASIC, BASIC_REPR, &b"hi"[..]), (HEADER_ONLY, HEADER_ONLY_REPR, &[][..])] {
            let mut bytes = vec![0xa5; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut bytes[..]), data);
            assert_eq!(bytes, vector(text));
        }
    }

    #[test]
    fn truncated() {
        let bytes = vector(HEADER_ONLY);
        for len in 0..HEADER_LEN {
            let packet = Packet::new_unchecked(&bytes[..len]);
            assert_eq!(packet.check_len(), Err(Error::Truncated));
            assert_eq!(Repr::parse(&packet), Err(Error::Truncated));
            // Getters on a short buffer do not panic either.
            let _ = (packet.flow(), packet.seq(), packet.data());
        }
    }

    proptest! {
        #[test]
        fn parse_emit_round_trip(
            flow in any::<u16>(),
            seq in any::<u32>(),
            data in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let repr = Repr { flow, seq, data_len: data.len() };
            let mut bytes = vec![0xa5; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut bytes[..]), &data);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(Repr::parse(&packet), Ok(repr));
            prop_assert_eq!(packet.data(), &data[..]);
        }
    }
}

#[cfg(test)]
mod audit34 {
    //! Tests added by a hand mutation audit; each one kills a mutant the older tests let live.
    use super::*;

    /// On a buffer too short for the header, the getters return the documented fallbacks:
    /// 0 for `flow` and `seq` (even when part of the field is there), empty `data`.
    #[test]
    fn short_buffer_getters_return_the_documented_defaults() {
        let bytes = [0x12u8, 0x34, 0x56, 0x78, 0x9a, 0xbc];
        for len in 0..HEADER_LEN {
            let packet = Packet::new_unchecked(&bytes[..len]);
            assert_eq!(packet.seq(), 0, "len {len}");
            assert_eq!(packet.data(), &[] as &[u8], "len {len}");
            if len < 2 {
                assert_eq!(packet.flow(), 0, "len {len}");
            } else {
                assert_eq!(packet.flow(), 0x1234, "len {len}");
            }
        }
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!((packet.flow(), packet.seq(), packet.data()), (0x1234, 0x5678_9abc, &[] as &[u8]));
    }
}
