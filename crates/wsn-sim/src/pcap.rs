//! A pcap writer for the frames the simulator puts on the air.
//!
//! The file is in the classic libpcap format (not pcapng), written little-endian so that the
//! same run gives the same bytes on every host:
//!
//! ```text
//! global header (24 bytes): magic 0xa1b2c3d4 | version 2.4 | thiszone 0 | sigfigs 0 |
//!                           snaplen 65535 | network 195
//! per record (16 bytes + data): ts_sec | ts_usec | incl_len | orig_len | MPDU bytes
//! ```
//!
//! Link type 195 (`LINKTYPE_IEEE802_15_4_WITHFCS`) means each record is an IEEE 802.15.4 MPDU
//! with its 2-byte FCS, without the PHY preamble, SFD and length byte; see
//! [`wsn_wire::ieee802154`] for the frames. Wireshark and tshark decode such files directly.
//! Timestamps are simulated time, rounded down to whole microseconds.

use std::io::{self, Write};

use wsn_proto::time::Instant;

/// Magic number of a classic pcap file with microsecond timestamps.
/// [LIT: libpcap pcap-savefile(5)]
pub const MAGIC: u32 = 0xa1b2_c3d4;

/// Major version of the file format. [LIT: libpcap pcap-savefile(5)]
pub const VERSION_MAJOR: u16 = 2;

/// Minor version of the file format. [LIT: libpcap pcap-savefile(5)]
pub const VERSION_MINOR: u16 = 4;

/// Largest number of bytes stored per record; longer frames are cut. Unit: bytes.
/// [AMBIG → chosen: 65535, the customary value; an 802.15.4 MPDU is at most 127 bytes]
pub const SNAPLEN: u32 = 65_535;

/// `LINKTYPE_IEEE802_15_4_WITHFCS`: IEEE 802.15.4 MPDU including the FCS.
/// [LIT: tcpdump.org link-layer header types list]
pub const LINKTYPE_IEEE802_15_4_WITHFCS: u32 = 195;

/// Length of the global file header. [LIT: libpcap pcap-savefile(5)] Unit: bytes.
pub const GLOBAL_HEADER_LEN: usize = 24;

/// Length of each record header. [LIT: libpcap pcap-savefile(5)] Unit: bytes.
pub const RECORD_HEADER_LEN: usize = 16;

/// Writes 802.15.4 frames into a classic pcap stream.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    sink: W,
}

impl<W: Write> PcapWriter<W> {
    /// Write the global header to `sink` and return the writer.
    pub fn new(mut sink: W) -> io::Result<Self> {
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        header[4..6].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        header[6..8].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        // Bytes 8..16: thiszone (GMT offset) and sigfigs, both 0.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_IEEE802_15_4_WITHFCS.to_le_bytes());
        sink.write_all(&header)?;
        Ok(PcapWriter { sink })
    }

    /// Append one frame (an MPDU with its FCS) seen at simulated time `t`.
    ///
    /// Returns `InvalidInput` if `t` is past the 32-bit seconds field (year 2106 of the run) or
    /// the frame is longer than `u32::MAX` bytes; nothing is written in that case. Frames longer
    /// than [`SNAPLEN`] are cut, with their full length recorded.
    pub fn write_frame(&mut self, t: Instant, mpdu: &[u8]) -> io::Result<()> {
        let nanos = t.as_nanos();
        let secs = u32::try_from(nanos / 1_000_000_000)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pcap: timestamp out of range"))?;
        // Below 1_000_000, so it fits.
        let micros = ((nanos % 1_000_000_000) / 1_000) as u32;
        let orig_len = u32::try_from(mpdu.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pcap: frame too long"))?;
        let incl_len = orig_len.min(SNAPLEN);

        let mut header = [0u8; RECORD_HEADER_LEN];
        header[0..4].copy_from_slice(&secs.to_le_bytes());
        header[4..8].copy_from_slice(&micros.to_le_bytes());
        header[8..12].copy_from_slice(&incl_len.to_le_bytes());
        header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.sink.write_all(&header)?;
        self.sink.write_all(&mpdu[..incl_len as usize])
    }

    /// Flush the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }

    /// Return the underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.sink
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Global header as pcap-savefile(5) lays it out, little-endian.
    const GLOBAL_HEADER: [u8; 24] = [
        0xd4, 0xc3, 0xb2, 0xa1, // magic 0xa1b2c3d4
        0x02, 0x00, 0x04, 0x00, // version 2.4
        0x00, 0x00, 0x00, 0x00, // thiszone 0
        0x00, 0x00, 0x00, 0x00, // sigfigs 0
        0xff, 0xff, 0x00, 0x00, // snaplen 65535
        0xc3, 0x00, 0x00, 0x00, // network 195
    ];

    /// An 802.15.4 ACK with DSN 0x2a (testdata/vectors/ieee802154/ack.hex).
    const ACK: [u8; 5] = [0x02, 0x00, 0x2a, 0xe0, 0x3b];

    #[test]
    fn header_and_one_record() {
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        // 3 s + 141 592 653 ns → ts_sec 3, ts_usec 141 592 (rounded down).
        writer.write_frame(Instant(3_141_592_653), &ACK).unwrap();
        let bytes = writer.into_inner();

        let mut expected = GLOBAL_HEADER.to_vec();
        expected.extend_from_slice(&[
            0x03, 0x00, 0x00, 0x00, // ts_sec 3
            0x18, 0x29, 0x02, 0x00, // ts_usec 141592 = 0x00022918
            0x05, 0x00, 0x00, 0x00, // incl_len 5
            0x05, 0x00, 0x00, 0x00, // orig_len 5
        ]);
        expected.extend_from_slice(&ACK);
        assert_eq!(bytes, expected);
    }

    #[test]
    fn timestamp_out_of_range_is_an_error() {
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        let err = writer.write_frame(Instant((u64::from(u32::MAX) + 1) * 1_000_000_000), &ACK).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(writer.into_inner().len(), GLOBAL_HEADER_LEN);
    }

    /// A frame longer than the snapshot length is cut to [`SNAPLEN`] bytes, its full length
    /// kept in `orig_len` (pcap-savefile(5): `incl_len` ≤ snaplen, `orig_len` the length on the
    /// wire; `write_frame`'s doc comment).
    #[test]
    fn a_frame_longer_than_the_snaplen_is_cut_with_its_length_kept() {
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        let long: Vec<u8> = (0..70_000u32).map(|i| i as u8).collect();
        writer.write_frame(Instant(1_000), &long).unwrap();
        writer.write_frame(Instant(2_000), &ACK).unwrap();
        let bytes = writer.into_inner();
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let rec = GLOBAL_HEADER_LEN;
        assert_eq!((u32_at(rec + 8), u32_at(rec + 12)), (SNAPLEN, 70_000), "incl_len, orig_len");
        let data = rec + RECORD_HEADER_LEN;
        assert_eq!(&bytes[data..data + SNAPLEN as usize], &long[..SNAPLEN as usize]);
        // The next record follows the cut data.
        let next = data + SNAPLEN as usize;
        assert_eq!((u32_at(next + 4), u32_at(next + 8)), (2, ACK.len() as u32), "ts_usec, incl_len");
        assert_eq!(&bytes[next + RECORD_HEADER_LEN..], &ACK);
    }
}
