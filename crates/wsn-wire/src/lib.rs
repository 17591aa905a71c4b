//! Packet formats of the `wsn` toolkit.
//!
//! Every format follows the smoltcp contract: a zero-copy `Packet<T: AsRef<[u8]>>` view with
//! `new_unchecked` / `check_len` / `new_checked` and field accessors that never panic after
//! `check_len`, plus a `Repr` struct with `parse`, `buffer_len` and `emit` (the 12-byte
//! MultiHopLQI beacon, a fixed record, has the `Repr` only). `parse` never panics; `emit`
//! panics when the caller's buffer is shorter than `buffer_len` (each says so under
//! "Panics"), except the beacon's, which returns [`Error::Truncated`]. Multi-byte fields
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

#[cfg(test)]
mod vector_tests {
    use std::string::{String, ToString};
    use std::vec;
    use std::vec::Vec;

    use super::*;

    /// What a parser of `layer` returns for `bytes`, as a vector file's `# expect:` line names
    /// it; for a packet that parses, also the bytes its `Repr` emits.
    fn outcome(layer: &str, bytes: &[u8]) -> (String, Option<Vec<u8>>) {
        fn name(e: Error) -> String {
            match e {
                Error::Truncated => "truncated",
                Error::Malformed => "malformed",
                Error::Checksum => "checksum",
            }
            .to_string()
        }
        let emitted = match layer {
            "besteffort" => besteffort::Packet::new_checked(bytes).and_then(|p| {
                let repr = besteffort::Repr::parse(&p)?;
                let mut out = vec![0; repr.buffer_len()];
                repr.emit(&mut besteffort::Packet::new_unchecked(&mut out[..]), p.data());
                Ok(out)
            }),
            "collection" => collection::Packet::new_checked(bytes).and_then(|p| {
                let repr = collection::Repr::parse(&p)?;
                let mut out = bytes.to_vec();
                out[..collection::HEADER_LEN].fill(0);
                repr.emit(&mut collection::Packet::new_unchecked(&mut out[..]));
                Ok(out)
            }),
            "ieee802154" => ieee802154::Frame::new_checked(bytes).and_then(|f| {
                let repr = ieee802154::FrameRepr::parse(&f)?;
                let mut out = vec![0; repr.buffer_len()];
                repr.emit(&mut ieee802154::Frame::new_unchecked(&mut out[..]), f.payload().unwrap_or(&[]));
                Ok(out)
            }),
            "ifrc" => ifrc::Packet::new_checked(bytes).and_then(|p| {
                let repr = ifrc::Repr::parse(&p)?;
                let mut out = bytes.to_vec();
                out[..ifrc::HEADER_LEN].fill(0);
                repr.emit(&mut ifrc::Packet::new_unchecked(&mut out[..]));
                Ok(out)
            }),
            "mhlqi" => mhlqi::BeaconRepr::parse(bytes).and_then(|repr| {
                let mut out = vec![0; repr.buffer_len()];
                repr.emit(&mut out)?;
                Ok(out)
            }),
            "rcrt" => rcrt::Repr::parse(bytes).map(|repr| {
                let mut out = vec![0; repr.buffer_len()];
                repr.emit(&mut out);
                out
            }),
            other => panic!("testdata/vectors/{other}/: no parser for this folder; add it here"),
        };
        match emitted {
            Ok(out) => ("ok".to_string(), Some(out)),
            Err(e) => (name(e), None),
        }
    }

    /// Every file of `testdata/vectors/` has exactly one `# expect:` line, and its layer's parser
    /// returns that outcome; a packet expected to parse emits its own bytes again. This keeps
    /// the files, which other languages read too, honest about what they hold.
    #[test]
    fn vectors_match_their_expect_lines() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors");
        let mut checked = 0;
        let mut seen = std::collections::BTreeSet::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            let layer = dir.file_name().unwrap().to_str().unwrap().to_string();
            for file in std::fs::read_dir(&dir).unwrap() {
                let path = file.unwrap().path();
                assert_eq!(path.extension().and_then(|e| e.to_str()), Some("hex"), "{}", path.display());
                let text = std::fs::read_to_string(&path).unwrap();
                let expects: Vec<&str> =
                    text.lines().filter_map(|l| l.trim().strip_prefix("# expect:")).map(str::trim).collect();
                assert_eq!(expects.len(), 1, "{}: one `# expect:` line", path.display());
                let bytes = test_vector(&text);
                let (got, emitted) = outcome(&layer, &bytes);
                assert_eq!(got, expects[0], "{}", path.display());
                if let Some(out) = emitted {
                    assert_eq!(out, bytes, "{}: emitting the parsed packet", path.display());
                }
                seen.insert(layer.clone());
                checked += 1;
            }
        }
        assert_eq!(seen.len(), 6, "every layer has vectors: {seen:?}");
        assert!(checked >= 30, "{checked} vector files");
    }
}
