//! The collection (routing) header carried by every routed data packet.
//!
//! It combines what the Tenet 1.x routing layer carries (end-to-end source and destination, the
//! previous hop rewritten by every forwarder, a TTL and direction bits) with the origin sequence
//! number MultiHopLQI uses for duplicate suppression, and names the tree (sink) the packet uses.
//! [CODE tenet1: routinglayer.h; CODE t1: MultiHop.h], layout [AMBIG → chosen: our own 14-byte
//! layout, as large as Tenet's 8-byte routing header and its 6-byte transport header together,
//! so that an RCRT frame of 64 application bytes is 86 bytes, Tenet's TOSH_DATA_LENGTH].
//!
//! ```text
//!  0      1         2..4    4..6   6..8   8..10     10   11..13  13
//! +------+---------+-------+------+------+---------+----+-------+------+
//! |flags |protocol | origin| dst  | sink |prev_hop |ttl | seqno | hops |
//! +------+---------+-------+------+------+---------+----+-------+------+
//! ```
//! All multi-byte fields are big-endian. `flags`: UP 0x01 (towards the sink), DOWN 0x02
//! (towards the origin on the reverse path); the six other bits are reserved and a header with
//! any of them set is refused.

use crate::{read_u16, Error, NodeId, Result};

mod field {
    use core::ops::{Range, RangeFrom};
    pub const FLAGS: usize = 0;
    pub const PROTOCOL: usize = 1;
    pub const ORIGIN: Range<usize> = 2..4;
    pub const DST: Range<usize> = 4..6;
    pub const SINK: Range<usize> = 6..8;
    pub const PREV_HOP: Range<usize> = 8..10;
    pub const TTL: usize = 10;
    pub const SEQNO: Range<usize> = 11..13;
    pub const HOPS: usize = 13;
    pub const PAYLOAD: RangeFrom<usize> = 14..;
}

/// Length of the collection header in bytes.
pub const HEADER_LEN: usize = 14;

/// Initial TTL of a packet. [CODE tenet1: routinglayer.h, default 20]
pub const DEFAULT_TTL: u8 = 20;

/// Direction of a routed packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Toward the sink, along the tree.
    Up,
    /// Away from the sink, along the learned reverse path.
    Down,
}

const FLAG_UP: u8 = 0x01;
const FLAG_DOWN: u8 = 0x02;

/// A read/write view of a collection packet.
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
    /// Ensure that no accessor will panic.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }
    /// Return the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Raw flags byte.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Transport protocol number.
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }
    /// End-to-end source.
    pub fn origin(&self) -> NodeId {
        NodeId(read_u16(self.buffer.as_ref(), field::ORIGIN))
    }
    /// End-to-end destination.
    pub fn dst(&self) -> NodeId {
        NodeId(read_u16(self.buffer.as_ref(), field::DST))
    }
    /// The sink whose tree the packet uses.
    pub fn sink(&self) -> NodeId {
        NodeId(read_u16(self.buffer.as_ref(), field::SINK))
    }
    /// The node that last transmitted the packet.
    pub fn prev_hop(&self) -> NodeId {
        NodeId(read_u16(self.buffer.as_ref(), field::PREV_HOP))
    }
    /// Hops left.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }
    /// Origin sequence number.
    pub fn seqno(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::SEQNO)
    }
    /// Hops travelled so far.
    pub fn hops(&self) -> u8 {
        self.buffer.as_ref()[field::HOPS]
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The transport payload.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn write_u16(&mut self, r: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }
    /// Set the flags byte.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }
    /// Set the protocol number.
    pub fn set_protocol(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v;
    }
    /// Set the end-to-end source.
    pub fn set_origin(&mut self, v: NodeId) {
        self.write_u16(field::ORIGIN, v.0)
    }
    /// Set the end-to-end destination.
    pub fn set_dst(&mut self, v: NodeId) {
        self.write_u16(field::DST, v.0)
    }
    /// Set the tree (sink).
    pub fn set_sink(&mut self, v: NodeId) {
        self.write_u16(field::SINK, v.0)
    }
    /// Set the previous hop (every forwarder writes itself here before sending).
    pub fn set_prev_hop(&mut self, v: NodeId) {
        self.write_u16(field::PREV_HOP, v.0)
    }
    /// Set the TTL.
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }
    /// Set the origin sequence number.
    pub fn set_seqno(&mut self, v: u16) {
        self.write_u16(field::SEQNO, v)
    }
    /// Set the hop counter.
    pub fn set_hops(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOPS] = v;
    }
    /// Mutable transport payload.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// High-level representation of a collection header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Direction bits.
    pub direction: Direction,
    /// Transport protocol number.
    pub protocol: u8,
    /// End-to-end source.
    pub origin: NodeId,
    /// End-to-end destination.
    pub dst: NodeId,
    /// Tree (sink) used.
    pub sink: NodeId,
    /// Previous hop.
    pub prev_hop: NodeId,
    /// Hops left.
    pub ttl: u8,
    /// Origin sequence number.
    pub seqno: u16,
    /// Hops travelled.
    pub hops: u8,
}

impl Repr {
    /// Parse a header. Both or neither direction bit set is [`Error::Malformed`] (Tenet drops
    /// such packets [CODE tenet1: RoutingLayerM.nc]), and so is a reserved flag bit.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        // The other six bits are reserved: refused, so that what parses is what `emit` writes.
        if packet.flags() & !(FLAG_UP | FLAG_DOWN) != 0 {
            return Err(Error::Malformed);
        }
        let direction = match packet.flags() & (FLAG_UP | FLAG_DOWN) {
            FLAG_UP => Direction::Up,
            FLAG_DOWN => Direction::Down,
            _ => return Err(Error::Malformed),
        };
        Ok(Repr {
            direction,
            protocol: packet.protocol(),
            origin: packet.origin(),
            dst: packet.dst(),
            sink: packet.sink(),
            prev_hop: packet.prev_hop(),
            ttl: packet.ttl(),
            seqno: packet.seqno(),
            hops: packet.hops(),
        })
    }
    /// Length of the emitted header.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Write the header into the first [`HEADER_LEN`] bytes of `packet`.
    ///
    /// # Panics
    /// If `packet` is shorter than [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_flags(match self.direction {
            Direction::Up => FLAG_UP,
            Direction::Down => FLAG_DOWN,
        });
        packet.set_protocol(self.protocol);
        packet.set_origin(self.origin);
        packet.set_dst(self.dst);
        packet.set_sink(self.sink);
        packet.set_prev_hop(self.prev_hop);
        packet.set_ttl(self.ttl);
        packet.set_seqno(self.seqno);
        packet.set_hops(self.hops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vector as vector;
    use proptest::prelude::*;
    use std::vec;

    const UP: &str = include_str!("../../../testdata/vectors/collection/up.hex");
    const DOWN: &str = include_str!("../../../testdata/vectors/collection/down.hex");
    const BAD_BOTH: &str = include_str!("../../../testdata/vectors/collection/bad_both_directions.hex");
    const BAD_RESERVED: &str = include_str!("../../../testdata/vectors/collection/bad_reserved.hex");

    const UP_REPR: Repr = Repr {
        direction: Direction::Up,
        protocol: 0x10,
        origin: NodeId(7),
        dst: NodeId(0),
        sink: NodeId(0),
        prev_hop: NodeId(0x0102),
        ttl: 20,
        seqno: 0xbeef,
        hops: 3,
    };
    const DOWN_REPR: Repr = Repr {
        direction: Direction::Down,
        protocol: 0x20,
        origin: NodeId(0),
        dst: NodeId(0x0123),
        sink: NodeId(0),
        prev_hop: NodeId(4),
        ttl: 1,
        seqno: 0xffff,
        hops: 0xff,
    };

    #[test]
    fn deconstruct() {
        let bytes = vector(UP);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.flags(), 0x01);
        assert_eq!(p.protocol(), 0x10);
        assert_eq!(p.origin(), NodeId(7));
        assert_eq!(p.dst(), NodeId(0));
        assert_eq!(p.sink(), NodeId(0));
        assert_eq!(p.prev_hop(), NodeId(0x0102));
        assert_eq!(p.ttl(), 20);
        assert_eq!(p.seqno(), 0xbeef);
        assert_eq!(p.hops(), 3);
        assert_eq!(p.payload(), b"hi");
    }

    #[test]
    fn vectors_parse_and_emit() {
        for (text, repr, payload) in [(UP, UP_REPR, &b"hi"[..]), (DOWN, DOWN_REPR, &[][..])] {
            let bytes = vector(text);
            assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(repr));
            let mut out = vec![0xa5u8; repr.buffer_len() + payload.len()];
            let mut p = Packet::new_unchecked(&mut out[..]);
            repr.emit(&mut p);
            p.payload_mut().copy_from_slice(payload);
            assert_eq!(out, bytes);
        }
    }

    #[test]
    fn truncated_and_malformed() {
        let bytes = vector(UP);
        for len in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&bytes[..len]).unwrap_err(), Error::Truncated);
            assert_eq!(Repr::parse(&Packet::new_unchecked(&bytes[..len])).unwrap_err(), Error::Truncated);
        }
        for text in [BAD_BOTH, BAD_RESERVED] {
            let bad = vector(text);
            assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
        }
        // Neither direction bit.
        let mut bad = bytes.clone();
        bad[0] = 0x00;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
        // Every reserved bit beside a valid direction.
        bad[0] = 0xfd;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
    }

    proptest! {
        #[test]
        fn parse_emit_round_trip(
            down in any::<bool>(),
            protocol in any::<u8>(),
            ids in any::<[u16; 4]>(),
            ttl in any::<u8>(),
            seqno in any::<u16>(),
            hops in any::<u8>(),
        ) {
            let repr = Repr {
                direction: if down { Direction::Down } else { Direction::Up },
                protocol,
                origin: NodeId(ids[0]),
                dst: NodeId(ids[1]),
                sink: NodeId(ids[2]),
                prev_hop: NodeId(ids[3]),
                ttl,
                seqno,
                hops,
            };
            let mut bytes = [0xa5u8; HEADER_LEN];
            repr.emit(&mut Packet::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(repr));
        }
    }
}

#[cfg(test)]
mod audit34 {
    //! Tests added by a hand mutation audit; each one kills a mutant the older tests let live.
    use super::*;
    use crate::test_vector as vector;

    const UP: &str = include_str!("../../../testdata/vectors/collection/up.hex");

    /// Each of the six reserved flag bits (0x04..=0x80), alone beside either direction bit, makes
    /// the header malformed; the same header without it parses.
    #[test]
    fn each_reserved_flag_bit_alone_is_malformed() {
        let mut bytes = vector(UP);
        for direction in [FLAG_UP, FLAG_DOWN] {
            bytes[field::FLAGS] = direction;
            assert!(Repr::parse(&Packet::new_unchecked(&bytes[..])).is_ok(), "flags {direction:#04x}");
            for bit in 2..8 {
                bytes[field::FLAGS] = direction | (1 << bit);
                assert_eq!(
                    Repr::parse(&Packet::new_unchecked(&bytes[..])),
                    Err(Error::Malformed),
                    "flags {:#04x}",
                    bytes[field::FLAGS]
                );
            }
        }
    }
}
