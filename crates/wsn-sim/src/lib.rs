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
#[cfg(test)]
mod svg_test;
pub mod topology;
pub mod trace;

/// Line numbers of the records of one CSV text. The `csv` crate reports where it began to look
/// for a record: before the `#` comment lines and blank lines it skips, and with `\r\n` line ends
/// at the `\n` of the line before (its own line numbers are then off too). This skips what it
/// skips, and counts lines as the records come, in increasing byte order, so that numbering a
/// whole file costs one pass over it.
pub(crate) struct CsvLines<'a> {
    bytes: &'a [u8],
    /// A byte offset whose line is known, and that line.
    at: usize,
    line: u64,
}

impl<'a> CsvLines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        CsvLines { bytes, at: 0, line: 1 }
    }

    /// The line (1-based) on which the record found from byte `from` starts; `0` gives the
    /// header's line.
    pub(crate) fn record_line(&mut self, from: u64) -> u64 {
        let bytes = self.bytes;
        let mut i = usize::try_from(from).unwrap_or(usize::MAX).min(bytes.len());
        loop {
            while i < bytes.len() && matches!(bytes[i], b'\r' | b'\n') {
                i += 1;
            }
            let line_start = i == 0 || matches!(bytes[i - 1], b'\r' | b'\n');
            if i < bytes.len() && bytes[i] == b'#' && line_start {
                i = bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |k| i + k);
                continue;
            }
            break;
        }
        if i < self.at {
            (self.at, self.line) = (0, 1);
        }
        self.line += bytes[self.at..i].iter().filter(|&&b| b == b'\n').count() as u64;
        self.at = i;
        self.line
    }
}

/// [`CsvLines::record_line`] for one record (an error's).
pub(crate) fn csv_record_line(bytes: &[u8], from: u64) -> u64 {
    CsvLines::new(bytes).record_line(from)
}

/// A `csv` crate error as (line, message), with the real line ([`csv_record_line`]) and without
/// the crate's own line number, which can be wrong.
pub(crate) fn csv_error(bytes: &[u8], e: &csv::Error) -> (u64, String) {
    let line = e.position().map_or(0, |p| csv_record_line(bytes, p.byte()));
    let msg = match e.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("{len} fields, where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { err, .. } => format!("field {} is not UTF-8 text", err.field() + 1),
        _ => e.to_string(),
    };
    (line, msg)
}

/// The index of column `name` in a CSV header, matched case-insensitively after trimming (the
/// rule of every CSV input file). `Err` names what is wrong: no such column, or a name the header
/// holds twice (which one is meant would be a guess).
pub(crate) fn csv_column(headers: &csv::StringRecord, name: &str) -> Result<Option<usize>, String> {
    let mut found = headers.iter().enumerate().filter(|(_, h)| h.trim().eq_ignore_ascii_case(name)).map(|(i, _)| i);
    let first = found.next();
    if let (Some(a), Some(b)) = (first, found.next()) {
        return Err(format!("the header names column `{name}` twice (columns {} and {})", a + 1, b + 1));
    }
    Ok(first)
}

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
