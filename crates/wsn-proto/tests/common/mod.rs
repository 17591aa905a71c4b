//! Helpers shared by the RCRT integration tests: one connection nonce, its wire numbering, and
//! datagrams as bytes.
#![allow(dead_code)] // each test file uses its own subset

use wsn_proto::rcrt::seq_offset;
use wsn_proto::time::Instant;
use wsn_wire::rcrt::Repr;

/// The connection nonce of the tests' flows.
pub const NONCE: u16 = 1;

/// `repr` emitted into a buffer of its own length.
pub fn bytes(repr: &Repr<'_>) -> Vec<u8> {
    let mut b = vec![0; repr.buffer_len()];
    repr.emit(&mut b);
    b
}

/// The instant `v` milliseconds after time 0.
pub fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

/// Wire numbering of the connection's own sequence number `seq` (mod 2^16).
pub fn w(seq: u32) -> u16 {
    (seq as u16).wrapping_add(seq_offset(NONCE))
}
