//! A deterministic discrete-event simulator of CC2420-class multihop sensor networks.
//!
//! Layers, bottom up: [`radio`] (PRR curve, noise models, LQI), [`topology`] (placement and
//! log-normal link gains), the channel and CSMA MAC in [`network`] (parameters in [`mac`]),
//! [`routing`] (MultiHopLQI, the reverse path, static trees), and node agents from
//! `wsn-proto`. [`engine`] is the event queue, [`rng`] the seeded streams, [`trace`] the typed
//! trace and its fingerprint, [`scenario`] the TOML input, [`runner`] builds and runs a scenario,
//! [`output`] writes results.
//!
//! Ordering guarantee: events at equal times run in the order they were scheduled; every random
//! draw comes from a stream keyed by (seed, run, node, purpose). A scenario and a seed therefore
//! determine the trace byte for byte.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod endpoints;
pub mod engine;
pub mod figures;
pub mod ifrc;
pub mod mac;
pub mod network;
pub mod output;
pub mod pcap;
pub mod plots;
pub mod radio;
pub mod rng;
pub mod routing;
pub mod runner;
pub mod scenario;
pub mod topology;
pub mod trace;

/// Read a text data file (a noise trace, a gain file): UTF-8, with a leading byte-order mark
/// dropped; bytes that are not UTF-8 are an error that names their line.
pub(crate) fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    let mut bytes = std::fs::read(path)?;
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("line {line} is not UTF-8 text"))
    })
}
