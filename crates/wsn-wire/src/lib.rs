//! Packet formats of the `wsn` toolkit.
//!
//! Every format follows the smoltcp contract: a zero-copy `Packet<T: AsRef<[u8]>>` view with
//! `new_unchecked` / `check_len` / `new_checked` and field accessors that never panic after
//! `check_len`, plus a `Repr` struct with `parse`, `buffer_len` and `emit` (the 12-byte
//! MultiHopLQI beacon, a fixed record, has the `Repr` only). Multi-byte fields
//! are big-endian (network order) unless a format says otherwise.
//!
//! Layering of one data frame on the air:
//!
//! ```text
//! ieee802154 MAC header | AM type | collection header | [IFRC header] | transport payload | FCS
//! ```
//!
//! The AM type (one byte, TinyOS's active-message type) tells data frames from MultiHopLQI
//! beacons (which carry a [`mhlqi`] beacon instead of the collection header); the 12-byte
//! [`ifrc`] header is there only in IFRC runs; the transport payload is a [`besteffort`] or
//! [`rcrt`] packet.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod besteffort;
pub mod collection;
pub mod ieee802154;
pub mod ifrc;
pub mod mhlqi;
pub mod rcrt;

use core::fmt;

/// The big-endian `u16` at the start of `r` in `b` (the wire views' common reader).
pub(crate) fn read_u16(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

/// A 16-bit node (short) address. `0xffff` is the broadcast address.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NodeId(pub u16);

impl NodeId {
    /// The link-layer broadcast address.
    pub const BROADCAST: NodeId = NodeId(0xffff);

    /// True for the broadcast address.
    pub const fn is_broadcast(self) -> bool {
        self.0 == 0xffff
    }
    /// The address as an index into per-node tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_broadcast() {
            write!(f, "bcast")
        } else {
            write!(f, "n{}", self.0)
        }
    }
}
impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Why a buffer could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the format needs.
    Truncated,
    /// A field holds a value the format does not allow.
    Malformed,
    /// A checksum did not match.
    Checksum,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => write!(f, "buffer too short"),
            Error::Malformed => write!(f, "malformed field"),
            Error::Checksum => write!(f, "checksum mismatch"),
        }
    }
}

impl core::error::Error for Error {}

/// Result of a parse.
pub type Result<T> = core::result::Result<T, Error>;

/// Decode a test-vector file of `testdata/vectors/`: `#` lines are comments, the rest is hex
/// with optional whitespace (shared by every format's tests).
#[cfg(test)]
pub(crate) fn test_vector(text: &str) -> std::vec::Vec<u8> {
    let digits: std::string::String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect();
    hex::decode(digits).expect("vector file is valid hex")
}
