//! The MultiHopLQI routing beacon.
//!
//! Contents follow TinyOS 2.x MultiHopLQI's 12-byte beacon (all 16-bit fields)
//! [CODE t2: tos/lib/net/lqi/MultiHopLqi.h] in this project's own order: its origin-seqno field
//! is dropped and the tree's sink put first, so that one node can take part in several trees
//! [AMBIG → chosen]. A small fixed record, it has a `Repr` only (no zero-copy `Packet` view).
//!
//! ```text
//! 0..2 sink | 2..4 source | 4..6 seqno | 6..8 parent | 8..10 cost | 10..12 hop_count
//! ```
//! Big-endian.

use crate::{Error, NodeId, Result};

/// Beacon length in bytes.
pub const BEACON_LEN: usize = 12;

/// A MultiHopLQI beacon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BeaconRepr {
    /// Root of the tree this beacon advertises.
    pub sink: NodeId,
    /// The beaconing node.
    pub source: NodeId,
    /// Beacon sequence number.
    pub seqno: u16,
    /// The beaconing node's parent ([`NodeId::BROADCAST`] when it has no route).
    pub parent: NodeId,
    /// Its path cost (0 at the root).
    pub cost: u16,
    /// Its hop count (0 at the root; 0xff when it has no route).
    pub hop_count: u16,
}

impl BeaconRepr {
    /// Parse a beacon from its bytes.
    pub fn parse(b: &[u8]) -> Result<BeaconRepr> {
        if b.len() < BEACON_LEN {
            return Err(Error::Truncated);
        }
        // Trailing bytes are refused, as by the other formats (an accepted beacon re-emits to
        // the same bytes).
        if b.len() > BEACON_LEN {
            return Err(Error::Malformed);
        }
        let r = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        Ok(BeaconRepr {
            sink: NodeId(r(0)),
            source: NodeId(r(2)),
            seqno: r(4),
            parent: NodeId(r(6)),
            cost: r(8),
            hop_count: r(10),
        })
    }
    /// Length of the emitted beacon.
    pub const fn buffer_len(&self) -> usize {
        BEACON_LEN
    }
    /// Write the beacon into `b[..BEACON_LEN]`; returns [`Error::Truncated`] if `b` is short.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < BEACON_LEN {
            return Err(Error::Truncated);
        }
        for (i, v) in
            [self.sink.0, self.source.0, self.seqno, self.parent.0, self.cost, self.hop_count].into_iter().enumerate()
        {
            b[2 * i..2 * i + 2].copy_from_slice(&v.to_be_bytes());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vector as vector;
    use proptest::prelude::*;

    const BEACON: &str = include_str!("../../../testdata/vectors/mhlqi/beacon.hex");
    const NO_ROUTE: &str = include_str!("../../../testdata/vectors/mhlqi/beacon_no_route.hex");
    const TRAILING: &str = include_str!("../../../testdata/vectors/mhlqi/beacon_trailing.hex");

    const BEACON_REPR: BeaconRepr =
        BeaconRepr { sink: NodeId(0), source: NodeId(5), seqno: 9, parent: NodeId(2), cost: 500, hop_count: 3 };
    const NO_ROUTE_REPR: BeaconRepr = BeaconRepr {
        sink: NodeId(0x0011),
        source: NodeId(0x0203),
        seqno: 0xfffe,
        parent: NodeId::BROADCAST,
        cost: 0xfffe,
        hop_count: 0xff,
    };

    #[test]
    fn vectors_parse_and_emit() {
        for (text, repr) in [(BEACON, BEACON_REPR), (NO_ROUTE, NO_ROUTE_REPR)] {
            let bytes = vector(text);
            assert_eq!(BeaconRepr::parse(&bytes), Ok(repr));
            let mut out = [0xa5; BEACON_LEN];
            repr.emit(&mut out).unwrap();
            assert_eq!(&out[..], &bytes[..]);
        }
    }

    #[test]
    fn truncated_and_malformed() {
        assert_eq!(BeaconRepr::parse(&vector(TRAILING)), Err(Error::Malformed));
        let bytes = vector(BEACON);
        for len in 0..BEACON_LEN {
            assert_eq!(BeaconRepr::parse(&bytes[..len]).unwrap_err(), Error::Truncated);
            assert_eq!(BEACON_REPR.emit(&mut [0u8; BEACON_LEN][..len]), Err(Error::Truncated));
        }
    }

    proptest! {
        #[test]
        fn parse_emit_round_trip(f in any::<[u16; 6]>()) {
            let repr = BeaconRepr {
                sink: NodeId(f[0]),
                source: NodeId(f[1]),
                seqno: f[2],
                parent: NodeId(f[3]),
                cost: f[4],
                hop_count: f[5],
            };
            let mut bytes = [0u8; BEACON_LEN];
            repr.emit(&mut bytes).unwrap();
            prop_assert_eq!(BeaconRepr::parse(&bytes), Ok(repr));
        }
    }
}

#[cfg(test)]
mod audit34 {
    //! Tests added by a hand mutation audit; each one kills a mutant the older tests let live.
    use super::*;

    /// Every field is a full big-endian u16 at the documented offset: values above 0xff in every
    /// field (including hop_count) land byte for byte where the module docs put them.
    #[test]
    fn exact_bytes_with_two_byte_values_in_every_field() {
        let repr = BeaconRepr {
            sink: NodeId(0x0102),
            source: NodeId(0x0304),
            seqno: 0x0506,
            parent: NodeId(0x0708),
            cost: 0x090a,
            hop_count: 0x0b0c,
        };
        let expected = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c];
        let mut out = [0u8; BEACON_LEN];
        repr.emit(&mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(BeaconRepr::parse(&expected), Ok(repr));
    }

    /// `emit` writes `b[..BEACON_LEN]` of a longer buffer and leaves the rest alone.
    #[test]
    fn emit_into_a_longer_buffer_writes_only_the_beacon() {
        let repr =
            BeaconRepr { sink: NodeId(0), source: NodeId(5), seqno: 9, parent: NodeId(2), cost: 500, hop_count: 3 };
        let mut out = [0xa5u8; BEACON_LEN + 3];
        assert_eq!(repr.emit(&mut out), Ok(()));
        assert_eq!(BeaconRepr::parse(&out[..BEACON_LEN]), Ok(repr));
        assert_eq!(out[BEACON_LEN..], [0xa5; 3]);
    }
}
