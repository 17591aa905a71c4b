//! Typed trace events, the run's SHA-256 fingerprint, and optional trace/pcap files.
//!
//! Every event that shapes the result (transmissions, decoded frames at their destination,
//! `send_done`, originations, deliveries, drops, parent changes) is encoded in a fixed binary
//! form and fed to SHA-256; the digest (`trace_sha256` in `summary.json`) is the determinism
//! check: the same scenario and seed give the same digest, byte for byte.

use std::fs::File;
use std::io::{BufWriter, Write};

use sha2::{Digest, Sha256};
use wsn_proto::agent::DropReason;
use wsn_proto::time::Instant;
use wsn_wire::NodeId;

use crate::pcap::PcapWriter;

/// One trace event.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// A frame went on the air.
    Tx {
        /// Time.
        t: Instant,
        /// Sender.
        node: u32,
        /// MAC frame id.
        frame_id: u64,
        /// Link destination.
        dst: NodeId,
        /// AM type.
        am: u8,
        /// Network payload bytes.
        len: u16,
        /// Attempt number (1 = first).
        attempt: u8,
    },
    /// A data frame was decoded at its link destination.
    Rx {
        /// Time.
        t: Instant,
        /// Receiver.
        node: u32,
        /// Sender.
        from: u32,
        /// LQI.
        lqi: u8,
    },
    /// The MAC finished with a frame.
    SendDone {
        /// Time.
        t: Instant,
        /// Sender.
        node: u32,
        /// MAC frame id.
        frame_id: u64,
        /// ACK received.
        acked: bool,
        /// Attempts used.
        attempts: u8,
    },
    /// An application packet was generated.
    Originate {
        /// Time.
        t: Instant,
        /// Flow.
        flow: u32,
        /// Sequence number.
        seq: u64,
    },
    /// An application packet reached its sink application.
    Deliver {
        /// Time.
        t: Instant,
        /// Flow.
        flow: u32,
        /// Sequence number.
        seq: u64,
        /// Hops travelled.
        hops: u8,
    },
    /// A packet was dropped.
    Drop {
        /// Time.
        t: Instant,
        /// Node.
        node: u32,
        /// Why.
        reason: DropReason,
    },
    /// A node changed parent (None: lost its route).
    Parent {
        /// Time.
        t: Instant,
        /// Node.
        node: u32,
        /// Tree index.
        tree: u16,
        /// New parent.
        parent: Option<NodeId>,
    },
}

impl TraceEvent {
    fn encode(&self, out: &mut Vec<u8>) {
        let mut put = |tag: u8, t: Instant, fields: &[u64]| {
            out.push(tag);
            out.extend_from_slice(&t.as_nanos().to_le_bytes());
            for f in fields {
                out.extend_from_slice(&f.to_le_bytes());
            }
        };
        match *self {
            TraceEvent::Tx { t, node, frame_id, dst, am, len, attempt } => {
                put(1, t, &[node as u64, frame_id, dst.0 as u64, am as u64, len as u64, attempt as u64])
            }
            TraceEvent::Rx { t, node, from, lqi } => put(2, t, &[node as u64, from as u64, lqi as u64]),
            TraceEvent::SendDone { t, node, frame_id, acked, attempts } => {
                put(3, t, &[node as u64, frame_id, acked as u64, attempts as u64])
            }
            TraceEvent::Originate { t, flow, seq } => put(4, t, &[flow as u64, seq]),
            TraceEvent::Deliver { t, flow, seq, hops } => put(5, t, &[flow as u64, seq, hops as u64]),
            TraceEvent::Drop { t, node, reason } => put(6, t, &[node as u64, reason as u64]),
            TraceEvent::Parent { t, node, tree, parent } => {
                put(7, t, &[node as u64, tree as u64, parent.map_or(u64::MAX, |p| p.0 as u64)])
            }
        }
    }

    fn csv_line(&self, w: &mut impl Write) -> std::io::Result<()> {
        match self {
            TraceEvent::Tx { t, node, frame_id, dst, am, len, attempt } => {
                writeln!(w, "{},tx,{node},{frame_id},{},{am},{len},{attempt}", t.as_nanos(), dst.0)
            }
            TraceEvent::Rx { t, node, from, lqi } => writeln!(w, "{},rx,{node},{from},{lqi},,,", t.as_nanos()),
            TraceEvent::SendDone { t, node, frame_id, acked, attempts } => {
                writeln!(w, "{},send_done,{node},{frame_id},{},{attempts},,", t.as_nanos(), *acked as u8)
            }
            TraceEvent::Originate { t, flow, seq } => writeln!(w, "{},originate,,{flow},{seq},,,", t.as_nanos()),
            TraceEvent::Deliver { t, flow, seq, hops } => {
                writeln!(w, "{},deliver,,{flow},{seq},{hops},,", t.as_nanos())
            }
            TraceEvent::Drop { t, node, reason } => {
                writeln!(w, "{},drop,{node},{},,,,", t.as_nanos(), reason.as_str())
            }
            TraceEvent::Parent { t, node, tree, parent } => {
                writeln!(w, "{},parent,{node},{tree},{},,,", t.as_nanos(), parent.map_or(-1, |p| p.0 as i64))
            }
        }
    }
}

/// Header of `trace.csv`.
pub const TRACE_CSV_HEADER: &str = "t_ns,event,node,a,b,c,d,e";

/// Collects the fingerprint and writes the optional files.
pub struct Tracer {
    hasher: Sha256,
    buf: Vec<u8>,
    csv: Option<BufWriter<File>>,
    pcap: Option<PcapWriter<BufWriter<File>>>,
    io_error: Option<std::io::Error>,
    events: u64,
}

impl Default for Tracer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tracer {
    /// A tracer that only fingerprints.
    pub fn new() -> Tracer {
        Tracer {
            hasher: Sha256::new(),
            buf: Vec::with_capacity(1 << 16),
            csv: None,
            pcap: None,
            io_error: None,
            events: 0,
        }
    }
    /// Also write `trace.csv` to `file`.
    pub fn with_csv(mut self, file: File) -> std::io::Result<Tracer> {
        let mut w = BufWriter::new(file);
        writeln!(w, "{TRACE_CSV_HEADER}")?;
        self.csv = Some(w);
        Ok(self)
    }
    /// Also write every frame to a pcap file.
    pub fn with_pcap(mut self, file: File) -> std::io::Result<Tracer> {
        self.pcap = Some(PcapWriter::new(BufWriter::new(file))?);
        Ok(self)
    }
    /// Record one event.
    pub fn record(&mut self, ev: &TraceEvent) {
        self.events += 1;
        ev.encode(&mut self.buf);
        if self.buf.len() >= 1 << 16 {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
        if let Some(w) = &mut self.csv {
            if let Err(e) = ev.csv_line(w) {
                self.io_error.get_or_insert(e);
            }
        }
    }
    /// Events recorded.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// True when frames should be written to a pcap.
    pub fn pcap_enabled(&self) -> bool {
        self.pcap.is_some()
    }
    /// Write a data frame to the pcap.
    #[allow(clippy::too_many_arguments)]
    pub fn pcap_data(
        &mut self,
        t: Instant,
        src: NodeId,
        dst: NodeId,
        dsn: u8,
        ack_request: bool,
        am: u8,
        payload: &[u8],
    ) {
        use wsn_wire::ieee802154::{Frame, FrameKind, FrameRepr, DEFAULT_PAN};
        let repr = FrameRepr {
            kind: FrameKind::Data,
            ack_request,
            dsn,
            pan: DEFAULT_PAN,
            dst,
            src,
            am_type: am,
            payload_len: payload.len(),
        };
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Frame::new_unchecked(&mut bytes[..]), payload);
        self.pcap_write(t, &bytes);
    }
    /// Write an ACK frame to the pcap.
    pub fn pcap_ack(&mut self, t: Instant, dsn: u8) {
        use wsn_wire::ieee802154::{Frame, FrameKind, FrameRepr, DEFAULT_PAN};
        let repr = FrameRepr {
            kind: FrameKind::Ack,
            ack_request: false,
            dsn,
            pan: DEFAULT_PAN,
            dst: NodeId(0),
            src: NodeId(0),
            am_type: 0,
            payload_len: 0,
        };
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Frame::new_unchecked(&mut bytes[..]), &[]);
        self.pcap_write(t, &bytes);
    }
    fn pcap_write(&mut self, t: Instant, bytes: &[u8]) {
        if let Some(p) = &mut self.pcap {
            if let Err(e) = p.write_frame(t, bytes) {
                self.io_error.get_or_insert(e);
            }
        }
    }
    /// Flush files and return the hex SHA-256 of the trace; reports the first I/O error.
    pub fn finish(&mut self) -> std::io::Result<String> {
        self.hasher.update(&self.buf);
        self.buf.clear();
        let digest = std::mem::take(&mut self.hasher).finalize();
        if let Some(w) = &mut self.csv {
            w.flush()?;
        }
        if let Some(p) = self.pcap.take() {
            p.into_inner().flush()?;
        }
        if let Some(e) = self.io_error.take() {
            return Err(e);
        }
        Ok(hex::encode(digest))
    }
}
