//! Typed trace events, the run's SHA-256 fingerprint, and optional trace/pcap files.
//!
//! Every event that shapes the result (transmissions, decoded frames at their destination,
//! `send_done`, originations, deliveries, drops, parent changes) is encoded in a fixed binary
//! form and fed to SHA-256; the digest (`trace_sha256` in `summary.json`) is the determinism
//! check: the same scenario and seed give the same digest, byte for byte.
//!
//! A write to `trace.csv` or `frames.pcap` that fails is kept with the file's path: the tracer
//! writes nothing more to that file, [`Tracer::failed`] tells the run to stop, and
//! [`Tracer::finish`] returns the error. The digest does not depend on the files.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

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

/// Where a trace file goes: a file, or any writer (tests).
type Sink = BufWriter<Box<dyn Write + Send>>;

/// A write to one of the trace files failed.
#[derive(Debug, thiserror::Error)]
#[error("writing {}: {source}", path.display())]
pub struct TraceFileError {
    /// The file (`…/trace.csv` or `…/frames.pcap`).
    pub path: PathBuf,
    /// Cause.
    pub source: io::Error,
}

/// Collects the fingerprint and writes the optional files.
pub struct Tracer {
    hasher: Sha256,
    buf: Vec<u8>,
    csv: Option<(PathBuf, Sink)>,
    pcap: Option<(PathBuf, PcapWriter<Sink>)>,
    /// The first failed write; nothing more is written to the files once it is set.
    io_error: Option<TraceFileError>,
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
    /// Also write the trace as CSV (`trace.csv`) to `sink`; `path` names it in errors.
    pub fn with_csv(
        mut self,
        path: impl Into<PathBuf>,
        sink: impl Write + Send + 'static,
    ) -> Result<Tracer, TraceFileError> {
        let path = path.into();
        let mut w: Sink = BufWriter::new(Box::new(sink));
        if let Err(source) = writeln!(w, "{TRACE_CSV_HEADER}") {
            return Err(TraceFileError { path, source });
        }
        self.csv = Some((path, w));
        Ok(self)
    }
    /// Also write every frame as pcap to `sink`; `path` names it in errors.
    pub fn with_pcap(
        mut self,
        path: impl Into<PathBuf>,
        sink: impl Write + Send + 'static,
    ) -> Result<Tracer, TraceFileError> {
        let path = path.into();
        match PcapWriter::new(BufWriter::new(Box::new(sink) as Box<dyn Write + Send>)) {
            Ok(p) => self.pcap = Some((path, p)),
            Err(source) => return Err(TraceFileError { path, source }),
        }
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
        if let (Some((path, w)), None) = (&mut self.csv, &self.io_error) {
            if let Err(source) = ev.csv_line(w) {
                self.io_error = Some(TraceFileError { path: path.clone(), source });
            }
        }
    }
    /// Events recorded.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// A write to a trace file failed: the run should stop ([`Tracer::finish`] returns the error).
    pub fn failed(&self) -> bool {
        self.io_error.is_some()
    }
    /// True when frames should be written to a pcap (not after a failed write).
    pub fn pcap_enabled(&self) -> bool {
        self.pcap.is_some() && self.io_error.is_none()
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
        if let (Some((path, p)), None) = (&mut self.pcap, &self.io_error) {
            if let Err(source) = p.write_frame(t, bytes) {
                self.io_error = Some(TraceFileError { path: path.clone(), source });
            }
        }
    }
    /// Flush files and return the hex SHA-256 of the trace; reports the first failed write,
    /// with its file.
    pub fn finish(&mut self) -> Result<String, TraceFileError> {
        self.hasher.update(&self.buf);
        self.buf.clear();
        let digest = std::mem::take(&mut self.hasher).finalize();
        if let Some(e) = self.io_error.take() {
            return Err(e);
        }
        // Taken, as the pcap: the files are closed once flushed (a caller may rename them).
        if let Some((path, mut w)) = self.csv.take() {
            w.flush().map_err(|source| TraceFileError { path, source })?;
        }
        if let Some((path, p)) = self.pcap.take() {
            p.into_inner().flush().map_err(|source| TraceFileError { path, source })?;
        }
        Ok(hex::encode(digest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Takes `room` bytes, then fails every write as a full disk does; counts the bytes offered.
    struct FailAfter {
        room: usize,
        offered: Arc<AtomicUsize>,
    }

    impl Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.offered.fetch_add(buf.len(), Ordering::Relaxed);
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn tx(i: u64) -> TraceEvent {
        TraceEvent::Tx { t: Instant(i * 1000), node: 3, frame_id: i, dst: NodeId(0), am: 7, len: 40, attempt: 1 }
    }

    /// A failed write is reported with its file, at once (`failed`), and nothing more is
    /// written to the files afterwards; the first error is the one `finish` returns.
    #[test]
    fn a_failed_write_names_its_file_and_ends_the_writing() {
        for pcap in [false, true] {
            let offered = Arc::new(AtomicUsize::new(0));
            let sink = FailAfter { room: 20_000, offered: offered.clone() };
            let path = if pcap { "out/frames.pcap" } else { "out/trace.csv" };
            let mut tr =
                if pcap { Tracer::new().with_pcap(path, sink) } else { Tracer::new().with_csv(path, sink) }.unwrap();
            let mut i = 0;
            while !tr.failed() {
                i += 1;
                assert!(i < 10_000, "no failure after {i} events");
                tr.record(&tx(i));
                if tr.pcap_enabled() {
                    tr.pcap_ack(Instant(i * 1000), i as u8);
                }
            }
            assert!(!tr.pcap_enabled(), "no more frames once a write failed");
            let at_failure = offered.load(Ordering::Relaxed);
            // Found within one buffer of the full disk.
            assert!(at_failure <= 20_000 + 2 * 8192, "{at_failure} bytes offered before the failure was seen");
            for j in 0..1000 {
                tr.record(&tx(i + j));
            }
            assert_eq!(offered.load(Ordering::Relaxed), at_failure, "written to after the failure");
            assert_eq!(tr.events(), i + 1000);
            let e = tr.finish().expect_err("the failure is reported");
            assert_eq!(e.path, PathBuf::from(path));
            assert_eq!(e.source.raw_os_error(), Some(28));
            assert!(e.to_string().starts_with(&format!("writing {path}: ")), "{e}");
        }
    }

    /// A flush that fails at the end names its file too.
    #[test]
    fn a_failed_final_flush_names_its_file() {
        let offered = Arc::new(AtomicUsize::new(0));
        let mut tr = Tracer::new()
            .with_csv("out/trace.csv", io::sink())
            .unwrap()
            .with_pcap("out/frames.pcap", FailAfter { room: 0, offered })
            .unwrap();
        tr.record(&tx(1));
        assert!(!tr.failed(), "buffered, not written yet");
        let e = tr.finish().expect_err("the flush fails");
        assert_eq!(e.path, PathBuf::from("out/frames.pcap"));
    }

    /// The digest is the same with or without the files.
    #[test]
    fn the_digest_does_not_depend_on_the_files() {
        let events: Vec<TraceEvent> = (1..5000).map(tx).collect();
        let mut bare = Tracer::new();
        let mut files =
            Tracer::new().with_csv("trace.csv", io::sink()).unwrap().with_pcap("frames.pcap", io::sink()).unwrap();
        for (k, ev) in events.iter().enumerate() {
            bare.record(ev);
            files.record(ev);
            files.pcap_ack(Instant(k as u64), k as u8);
        }
        assert_eq!(bare.finish().unwrap(), files.finish().unwrap());
    }

    /// Collects what it is given (the pcap stream of a tracer).
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The pcap records of a data frame and of its ACK are the IEEE 802.15.4 MPDUs the wire
    /// format builds, FCS included (link type 195, `crate::pcap`'s module doc): a data frame
    /// carries its sender, destination, DSN, ACK request, AM type and payload; an ACK its DSN.
    #[test]
    fn pcap_records_are_the_frames_mpdus() {
        use wsn_wire::ieee802154::{Frame, FrameKind, FrameRepr};
        let out = Shared::default();
        let mut tr = Tracer::new().with_pcap("frames.pcap", out.clone()).unwrap();
        let payload = [1u8, 2, 3, 4, 5];
        tr.pcap_data(Instant(5_000), NodeId(7), NodeId(3), 42, true, 9, &payload);
        tr.pcap_ack(Instant(6_000), 42);
        tr.finish().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        let mut off = crate::pcap::GLOBAL_HEADER_LEN;
        let mut records = Vec::new();
        while off < bytes.len() {
            let len = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
            let start = off + crate::pcap::RECORD_HEADER_LEN;
            records.push(bytes[start..start + len].to_vec());
            off = start + len;
        }
        assert_eq!(records.len(), 2);
        let frame = Frame::new_checked(&records[0][..]).expect("a valid data MPDU");
        let repr = FrameRepr::parse(&frame).expect("a valid data MPDU");
        assert_eq!(repr.kind, FrameKind::Data);
        assert_eq!((repr.src, repr.dst, repr.dsn, repr.ack_request, repr.am_type), (NodeId(7), NodeId(3), 42, true, 9));
        assert_eq!(frame.payload(), Some(&payload[..]));
        let ack = FrameRepr::parse(&Frame::new_checked(&records[1][..]).expect("a valid ACK")).expect("a valid ACK");
        assert_eq!((ack.kind, ack.dsn), (FrameKind::Ack, 42));
    }

    /// docs/simulator.md, trace.csv: the header `t_ns,event,node,a,b,c,d,e` and, per event,
    /// the columns it documents: `tx` sender, frame id, link destination, AM type, payload
    /// bytes, attempt; `rx` receiver, sender, LQI; `send_done` sender, frame id, acked (0/1),
    /// attempts; `originate` (empty), flow, sequence number; `deliver` (empty), flow, sequence
    /// number, hops; `drop` node, reason; `parent` node, tree, new parent (−1 = lost).
    #[test]
    fn trace_csv_rows_have_the_documented_columns() {
        let out = Shared::default();
        let mut tr = Tracer::new().with_csv("trace.csv", out.clone()).unwrap();
        let t = Instant;
        let events = [
            TraceEvent::Tx { t: t(1), node: 3, frame_id: 17, dst: NodeId(65535), am: 250, len: 40, attempt: 2 },
            TraceEvent::Rx { t: t(2), node: 4, from: 3, lqi: 107 },
            TraceEvent::SendDone { t: t(3), node: 3, frame_id: 17, acked: true, attempts: 2 },
            TraceEvent::SendDone { t: t(4), node: 3, frame_id: 18, acked: false, attempts: 5 },
            TraceEvent::Originate { t: t(5), flow: 6, seq: 9 },
            TraceEvent::Deliver { t: t(6), flow: 6, seq: 9, hops: 3 },
            TraceEvent::Drop { t: t(7), node: 2, reason: DropReason::QueueFull },
            TraceEvent::Drop { t: t(8), node: 2, reason: DropReason::ChannelAccess },
            TraceEvent::Parent { t: t(9), node: 2, tree: 1, parent: Some(NodeId(0)) },
            TraceEvent::Parent { t: t(10), node: 2, tree: 0, parent: None },
        ];
        for ev in &events {
            tr.record(ev);
        }
        tr.finish().unwrap();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let want = [
            "t_ns,event,node,a,b,c,d,e",
            "1,tx,3,17,65535,250,40,2",
            "2,rx,4,3,107,,,",
            "3,send_done,3,17,1,2,,",
            "4,send_done,3,18,0,5,,",
            "5,originate,,6,9,,,",
            "6,deliver,,6,9,3,,",
            "7,drop,2,queue_full,,,,",
            "8,drop,2,channel_access,,,,",
            "9,parent,2,1,0,,,",
            "10,parent,2,0,-1,,,",
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), want);
    }

    /// `Tracer::finish`: a flush of `trace.csv` that fails at the end is reported, naming the file.
    #[test]
    fn a_failed_final_flush_of_the_csv_names_it() {
        let offered = Arc::new(AtomicUsize::new(0));
        let mut tr = Tracer::new().with_csv("out/trace.csv", FailAfter { room: 0, offered }).unwrap();
        tr.record(&tx(1));
        assert!(!tr.failed(), "buffered, not written yet");
        let e = tr.finish().expect_err("the flush fails");
        assert_eq!(e.path, PathBuf::from("out/trace.csv"));
    }

    /// The module doc: the digest is the determinism check over every event that shapes the
    /// result, so two traces that differ in any one field of an event have different digests
    /// (a lost route differs from a move to node 0).
    #[test]
    fn the_digest_tells_every_field_apart() {
        let digest = |ev: TraceEvent| {
            let mut tr = Tracer::new();
            tr.record(&ev);
            tr.finish().unwrap()
        };
        let t = Instant(5);
        let tx = |frame_id, dst, am, len, attempt| TraceEvent::Tx { t, node: 1, frame_id, dst, am, len, attempt };
        let done = |acked, attempts| TraceEvent::SendDone { t, node: 1, frame_id: 2, acked, attempts };
        let deliver = |seq, hops| TraceEvent::Deliver { t, flow: 1, seq, hops };
        let parent = |tree, parent| TraceEvent::Parent { t, node: 1, tree, parent };
        let groups = [
            vec![tx(2, NodeId(0), 251, 40, 1), tx(3, NodeId(0), 251, 40, 1), tx(2, NodeId(4), 251, 40, 1)],
            vec![tx(2, NodeId(0), 250, 40, 1), tx(2, NodeId(0), 251, 41, 1), tx(2, NodeId(0), 251, 40, 2)],
            vec![TraceEvent::Rx { t, node: 1, from: 2, lqi: 100 }, TraceEvent::Rx { t, node: 1, from: 2, lqi: 101 }],
            vec![done(true, 1), done(false, 1), done(true, 2)],
            vec![TraceEvent::Originate { t, flow: 1, seq: 2 }, TraceEvent::Originate { t, flow: 1, seq: 3 }],
            vec![deliver(2, 3), deliver(3, 3), deliver(2, 4)],
            vec![
                TraceEvent::Drop { t, node: 1, reason: DropReason::QueueFull },
                TraceEvent::Drop { t, node: 1, reason: DropReason::NoRoute },
            ],
            vec![parent(0, Some(NodeId(0))), parent(0, None), parent(1, Some(NodeId(0)))],
            // The time and the node of an event, the sender of a reception, the flow of a packet.
            vec![
                TraceEvent::Tx { t: Instant(6), node: 1, frame_id: 2, dst: NodeId(0), am: 251, len: 40, attempt: 1 },
                TraceEvent::Tx { t, node: 2, frame_id: 2, dst: NodeId(0), am: 251, len: 40, attempt: 1 },
                TraceEvent::Rx { t, node: 1, from: 3, lqi: 100 },
                TraceEvent::Originate { t, flow: 2, seq: 2 },
                TraceEvent::Deliver { t, flow: 2, seq: 2, hops: 3 },
            ],
        ];
        let mut seen = std::collections::HashSet::new();
        for ev in groups.into_iter().flatten() {
            assert!(seen.insert(digest(ev.clone())), "{ev:?} has another event's digest");
        }
    }

    /// Fails its first write, then takes everything (a passing error).
    struct FailOnce(bool);

    impl Write for FailOnce {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if !self.0 {
                self.0 = true;
                return Err(io::Error::from_raw_os_error(5));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The module doc: a failed write is kept and [`Tracer::finish`] returns it, although the
    /// writer took every write after it (`finish` returns the kept error without flushing).
    #[test]
    fn finish_reports_a_failed_write_though_later_writes_pass() {
        let mut tr = Tracer::new().with_csv("out/trace.csv", FailOnce(false)).unwrap();
        let mut i = 0;
        while !tr.failed() {
            i += 1;
            assert!(i < 10_000, "no failure after {i} events");
            tr.record(&tx(i));
        }
        let e = tr.finish().expect_err("the failed write is reported");
        assert_eq!((e.path, e.source.raw_os_error()), (PathBuf::from("out/trace.csv"), Some(5)));
    }
}
