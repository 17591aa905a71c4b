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

    // sink 0, source 5, seqno 9, parent 2, cost 0x01f4 (500), hop count 3
    const BYTES: [u8; 12] = [0, 0, 0, 5, 0, 9, 0, 2, 0x01, 0xf4, 0, 3];

    #[test]
    fn parse_and_emit() {
        let mut long = BYTES.to_vec();
        long.push(0);
        assert_eq!(BeaconRepr::parse(&long), Err(Error::Malformed));
        let r = BeaconRepr::parse(&BYTES).unwrap();
        assert_eq!(r.source, NodeId(5));
        assert_eq!(r.cost, 500);
        let mut out = [0xa5; 12];
        r.emit(&mut out).unwrap();
        assert_eq!(out, BYTES);
        assert_eq!(BeaconRepr::parse(&BYTES[..11]).unwrap_err(), Error::Truncated);
    }
}
