//! MAC parameters: the CSMA presets of TinyOS 2.x, TinyOS 1.x (the RCRT/IFRC era), a no-ACK
//! MAC for CXCC and a CC1000 (mica2-class) radio for the Go-Back-N report.
//!
//! The state machine itself lives in [`crate::network`]; this module holds only numbers, each
//! with its source (tags as in the project's radio/MAC/routing spec, §0 and §5; besides
//! those, `[CODE usc-ifrc]` is the IFRC authors' TinyOS 1.x code, `x3ro/tinyos-legacy`
//! `tinyos-1.x/contrib/usc-ifrc`, and `[PAPER]` the IFRC paper, as in the IFRC spec).

use serde::{Deserialize, Serialize};
use wsn_proto::time::Duration;

/// Backoff window: a uniform integer `k` in `[min_units, max_units]`, giving
/// `k × unit_ns` of waiting; or, with `mask`, `k = (r & mask) + min_units` for a uniform 16-bit
/// `r`, as TinyOS 1.x draws it (`max_units` is then `mask + min_units`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backoff {
    /// Smallest multiple of the unit.
    pub min_units: u32,
    /// Largest multiple of the unit (inclusive).
    pub max_units: u32,
    /// Unit length in nanoseconds.
    pub unit_ns: u64,
    /// The bit mask of a TinyOS-style draw, when the mask is not of the form 2^n − 1 (for which
    /// the draw is uniform anyway), e.g. the IFRC build's 45 = 3 × 0xF, whose draw takes only
    /// 16 values [CODE usc-ifrc: QueuedSend.h].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<u16>,
}

impl Backoff {
    /// Mean wait.
    pub fn mean(&self) -> Duration {
        match self.mask {
            // Each bit of the mask is set with probability ½.
            Some(m) => Duration((2 * self.min_units as u64 + m as u64) * self.unit_ns / 2),
            None => Duration((self.min_units as u64 + self.max_units as u64) * self.unit_ns / 2),
        }
    }
}

/// How link-layer ACKs are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckMode {
    /// No ACKs at all (and so no retransmissions).
    None,
    /// CC2420 hardware auto-ACK (address recognition on, so no snooping of unicast frames).
    Hardware,
    /// Software ACK strobed by the MCU (address recognition may be off).
    Software,
}

/// All MAC parameters of one preset. Every field can be overridden from a scenario's `[mac]`
/// table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MacConfig {
    /// Preset name, reported with every result.
    pub preset: String,
    /// Air time of one byte, ns. CC2420: 32 µs (250 kbit/s) [LIT: IEEE 802.15.4]; CC1000:
    /// 19.2 kbit/s Manchester-coded → 416.7 µs [LIT: CC1000 datasheet].
    pub byte_ns: u64,
    /// Bytes on the air besides the network payload (PHY + MAC header + AM fields + FCS).
    /// 2.x: L + 19; 1.x: L + 17 [DERIVED from CODE t2: CC2420.h; CODE t1: CC2420Const.h].
    pub overhead_bytes: u32,
    /// ACK frame on the air, bytes (SHR 5, len 1, FCF 2, DSN 1, FCS 2) \[LIT\].
    pub ack_bytes: u32,
    /// Initial backoff window.
    pub initial_backoff: Backoff,
    /// Congestion backoff window (after a busy CCA), repeated without limit.
    pub congestion_backoff: Backoff,
    /// A sink's (base station's) initial backoff window instead of `initial_backoff`; none: the
    /// same as every node's. The IFRC build gives its base station the shortest waits, "as all
    /// its packets are control packets" [CODE usc-ifrc: QueuedSendM.nc, MacBackoff].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink_initial_backoff: Option<Backoff>,
    /// A sink's congestion backoff window instead of `congestion_backoff`; none: the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink_congestion_backoff: Option<Backoff>,
    /// Wait between a clear CCA and the STXONCCA strobe, ns (2.x: 7 jiffies; 1.x: none).
    pub cca_guard_ns: u64,
    /// RX→TX turnaround before the preamble, ns (12 symbols) [LIT?: CC2420 datasheet].
    pub turnaround_ns: u64,
    /// CCA threshold, dBm [AMBIG-8 → −77 for mote presets].
    pub cca_threshold_dbm: f64,
    /// CCA also reports busy while the radio is locked on a frame (CC2420 CCA mode 3).
    pub cca_mode3: bool,
    /// ACK production.
    pub ack: AckMode,
    /// End of data frame → ACK fully received, ns (hardware 0.544 ms, software ≈ 0.75 ms)
    /// [DERIVED, spec §5.4].
    pub ack_latency_ns: u64,
    /// End of data frame → give up waiting for the ACK, ns. With `ack_in_frame`: end of data
    /// frame → sendDone, acked or not (TOSSIM: 34 + 11 symbols).
    pub ack_timeout_ns: u64,
    /// TOSSIM folds the ACK into the data frame: the frame occupies the air for `ack_latency_ns`
    /// longer when an ACK is requested, and the ACK is decided at its end. sendDone follows
    /// `ack_timeout_ns − ack_latency_ns` later whatever the outcome, and a broadcast's the same
    /// time after its end; the radio receives nothing until then [CODE t2:
    /// TossimPacketModelC.nc; spec §5.9].
    pub ack_in_frame: bool,
    /// Link-layer retransmissions after the first attempt.
    pub max_retries: u8,
    /// Gap before a retransmission: `retry_gap_min_ns + uniform[0, retry_gap_spread_ns]`.
    pub retry_gap_min_ns: u64,
    /// See `retry_gap_min_ns`.
    pub retry_gap_spread_ns: u64,
    /// Transmit-queue bound of the node agent, packets.
    pub queue_capacity: usize,
    /// IEEE 802.15.4 unslotted CSMA-CA instead of TinyOS's fixed windows: the initial wait is
    /// `uniform[0, 2^BE − 1]` units of `initial_backoff.unit_ns`, BE starts at `csma_min_be`
    /// and grows by one per busy CCA up to `csma_max_be`; after `csma_max_backoffs` busy CCAs
    /// in a row the attempt ends in a channel-access failure and the frame is dropped
    /// [LIT: IEEE 802.15.4-2006 §7.5.1.4; ns-3 lr-wpan-csmaca].
    pub ieee802154_csma: bool,
    /// macMinBE.
    pub csma_min_be: u8,
    /// macMaxBE.
    pub csma_max_be: u8,
    /// macMaxCSMABackoffs.
    pub csma_max_backoffs: u8,
    /// Largest network payload per frame (TOSH_DATA_LENGTH), bytes.
    pub max_payload: usize,
    /// Deliver decoded frames addressed to other nodes to the agent (snooping). Hardware
    /// address recognition (hardware ACKs) makes this impossible on a real mote.
    pub promiscuous: bool,
    /// Fixed part of the TXFIFO load over SPI, ns [AMBIG-5]. Loaded once the initial backoff
    /// has expired, before the first CCA, as TinyOS 1.x does (TIMER_INITIAL → startSend →
    /// TXFIFO done → CCA) [CODE tenet1: CC2420RadioM.nc]; a congestion backoff or a CCA retry
    /// does not reload it, a retransmission does.
    pub txfifo_load_base_ns: u64,
    /// Per-byte part of the TXFIFO load, ns [AMBIG-5].
    pub txfifo_load_per_byte_ns: u64,
    /// After each delivered frame the receiver cannot lock onto a new one for this long (RX FIFO
    /// read and processing), ns [AMBIG-5].
    pub rx_process_ns: u64,
    /// Processor time charged for every data frame handed up to the node's agent (received or
    /// overheard; beacons are not charged), ns. The processor does one thing at a time: this
    /// time and the TXFIFO load queue behind each other, so a node busy with the frames it
    /// hears starts its next transmission later. 0 (every preset): no processor model beyond
    /// the TXFIFO load [AMBIG-5; an experiment on the IFRC testbed's per-node traffic,
    /// docs/ifrc.md].
    pub cpu_per_rx_ns: u64,
    /// TinyOS 1.x's ACK-protection rule (spec §5.6) when > 0: a frame that enters the node's RX
    /// FIFO (addressed to it or broadcast; any frame it decodes when it is promiscuous, as
    /// without address recognition) while its MAC waits in a backoff restarts that backoff as a
    /// congestion backoff plus this delay, so that its transmission does not hit the ACK the
    /// frame's receiver may be sending. The stacks use the ACK delay: 75 jiffies = 2,288,818 ns
    /// in Tenet's build, 150 jiffies = 4,577,637 ns in the IFRC authors' SACK build [CODE tenet1
    /// and usc-ifrc: CC2420RadioM.nc `FIFOP.fired`, CC2420Const.h `CC2420_ACK_DELAY`; usc-ifrc
    /// apps/RateControl/Makefile `-DACK_DELAY=150`]. 0 (every preset): the rule is off.
    pub ack_protection_ns: u64,
}

impl Default for MacConfig {
    fn default() -> Self {
        MacConfig::tinyos1_tenet()
    }
}

/// Largest `max_retries` a configuration may ask for (the presets use 0 to 5).
const MAX_RETRIES: u8 = 100;
const JIFFY_NS: u64 = 30_518; // 1/32768 s, rounded [DERIVED]

impl MacConfig {
    /// Names of the built-in presets.
    pub const PRESETS: [&'static str; 7] =
        ["tinyos1_tenet", "tinyos2", "tossim", "noack", "cc1000", "ieee802154", "ifrc2006"];

    /// A preset by name.
    pub fn preset(name: &str) -> Option<MacConfig> {
        match name {
            "tinyos1_tenet" => Some(Self::tinyos1_tenet()),
            "tinyos2" => Some(Self::tinyos2()),
            "tossim" => Some(Self::tossim()),
            "noack" => Some(Self::noack()),
            "cc1000" => Some(Self::cc1000()),
            "ieee802154" => Some(Self::ieee802154()),
            "ifrc2006" => Some(Self::ifrc2006()),
            _ => None,
        }
    }

    /// TinyOS 2.x CC2420 CSMA (spec §5.3) with MultiHopLQI-2.x-style immediate retries.
    pub fn tinyos2() -> MacConfig {
        MacConfig {
            preset: "tinyos2".into(),
            byte_ns: 32_000,
            overhead_bytes: 19,
            ack_bytes: 11,
            // [11, 320] jiffies [CODE t2: CC2420CsmaP.nc, CC2420TransmitP.nc]
            initial_backoff: Backoff { min_units: 11, max_units: 320, unit_ns: JIFFY_NS, mask: None },
            // [11, 80] jiffies [CODE t2]
            congestion_backoff: Backoff { min_units: 11, max_units: 80, unit_ns: JIFFY_NS, mask: None },
            sink_initial_backoff: None,
            sink_congestion_backoff: None,
            cca_guard_ns: 7 * JIFFY_NS, // [CODE t2: CC2420TransmitP.nc]
            turnaround_ns: 192_000,
            cca_threshold_dbm: -77.0,
            cca_mode3: true,
            ack: AckMode::Software,
            ack_latency_ns: 750_000,        // [DERIVED §5.4: 0.65–0.85 ms]
            ack_timeout_ns: 256 * JIFFY_NS, // 7.81 ms [CODE t2: CC2420.h]
            ack_in_frame: false,
            max_retries: 5,      // [CODE t2: LqiForwardingEngineP.nc, 5 retries]
            retry_gap_min_ns: 0, // immediate resend [CODE t2]
            retry_gap_spread_ns: 0,
            // [CODE t2: CtpP.nc FORWARD_COUNT] with MultiHopLQI-2.x's 5 retries above: a deliberate
            // mix [AMBIG → chosen: CTP's queue; spec §5.7's `mhlqi2` row would be 2/5/0].
            queue_capacity: 12,
            // [AMBIG → chosen: 86, the 1.x/Tenet data field, so that RCRT-sized frames fit; the
            // 2.x default TOSH_DATA_LENGTH is 28]
            max_payload: 86,
            promiscuous: false, // 2.x address recognition on by default [CODE t2]
            ieee802154_csma: false,
            csma_min_be: 3,
            csma_max_be: 5,
            csma_max_backoffs: 4,
            txfifo_load_base_ns: 0,
            txfifo_load_per_byte_ns: 0,
            rx_process_ns: 0,
            cpu_per_rx_ns: 0,
            ack_protection_ns: 0,
        }
    }

    /// TinyOS 1.x CC2420 stack as the RCRT testbed ran it (Tenet): hardware ACKs, 4 link
    /// retransmissions 5–36 ms apart, a 16-packet forwarding queue, 86-byte data field
    /// (spec §5.6, §7.2, AMBIG-9).
    pub fn tinyos1_tenet() -> MacConfig {
        MacConfig {
            preset: "tinyos1_tenet".into(),
            byte_ns: 32_000,
            overhead_bytes: 17,
            ack_bytes: 11,
            // ((r & 0xF) + 1) × 10 jiffies [CODE t1: CC2420RadioM.nc]
            initial_backoff: Backoff { min_units: 1, max_units: 16, unit_ns: 10 * JIFFY_NS, mask: None },
            // ((r & 0x3F) + 1) × 10 jiffies [CODE t1]
            congestion_backoff: Backoff { min_units: 1, max_units: 64, unit_ns: 10 * JIFFY_NS, mask: None },
            sink_initial_backoff: None,
            sink_congestion_backoff: None,
            cca_guard_ns: 0,
            turnaround_ns: 192_000,
            cca_threshold_dbm: -77.0,
            cca_mode3: true,
            ack: AckMode::Hardware,
            ack_latency_ns: 544_000,       // 12 symbols + 11-byte ACK [DERIVED §5.4]
            ack_timeout_ns: 75 * JIFFY_NS, // 2.29 ms [CODE t1: CC2420RadioM.nc]
            ack_in_frame: false,
            max_retries: 4, // LINK_NUM_RETX [CODE tenet1: NewQueuedSendM.nc]
            // 5 + ((r + 2·id) & 31) binary ms = 5–36 ms [CODE tenet1: NewQueuedSendM.nc]
            retry_gap_min_ns: 5 * 976_563,
            retry_gap_spread_ns: 31 * 976_563,
            queue_capacity: 16, // FWD_QUEUE_LEN [CODE tenet1: TestTransport/Makefile]
            max_payload: 86,    // TOSH_DATA_LENGTH in RCRT runs [spec-rcrt §1]
            promiscuous: false, // hardware address recognition [CODE t1]
            ieee802154_csma: false,
            csma_min_be: 3,
            csma_max_be: 5,
            csma_max_backoffs: 4,
            // Calibrated so that one 1.x hop with a full RCRT frame is near the testbed's
            // 95 pkt/s single-source figure (since found to be the test harness's 102.4 pkt/s
            // cap, not the radio's: docs/simulator.md) and near Flush's 8 ms one-hop minimum
            // (7.87 ms per packet, 127.0 pkt/s, saturated)
            // [AMBIG-5 → chosen: SPI load 0.5 ms + 8 µs/byte, RX FIFO read 1.5 ms].
            txfifo_load_base_ns: 500_000,
            txfifo_load_per_byte_ns: 8_000,
            rx_process_ns: 1_500_000,
            cpu_per_rx_ns: 0,
            ack_protection_ns: 0,
        }
    }

    /// TOSSIM's packet-level CSMA (spec §5.9): backoffs in 1/65536-s symbols, CCA at −72 dBm on
    /// energy only, ACK time folded into the frame.
    pub fn tossim() -> MacConfig {
        let sym = 15_259; // 1/65536 s [CODE t2: sim_csma.h]
        MacConfig {
            preset: "tossim".into(),
            byte_ns: 2 * sym,
            overhead_bytes: 19,
            ack_bytes: 0,
            initial_backoff: Backoff { min_units: 20, max_units: 639, unit_ns: sym, mask: None },
            congestion_backoff: Backoff { min_units: 20, max_units: 159, unit_ns: sym, mask: None },
            sink_initial_backoff: None,
            sink_congestion_backoff: None,
            cca_guard_ns: 0,
            turnaround_ns: 11 * sym, // RX/TX delay [CODE t2]
            cca_threshold_dbm: -72.0,
            cca_mode3: false,
            ack: AckMode::Software,
            ack_latency_ns: 34 * sym, // the ACK allowance folded into the frame [CODE t2]
            // sendDone 11 symbols after the extended frame, acked or not [CODE t2:
            // TossimPacketModelC.nc; spec §5.9]
            ack_timeout_ns: 34 * sym + 11 * sym,
            ack_in_frame: true,
            max_retries: 0, // the packet model itself never retransmits [CODE t2]
            retry_gap_min_ns: 0,
            retry_gap_spread_ns: 0,
            queue_capacity: 12, // [AMBIG → chosen: as `tinyos2` (CTP's forwarding queue)]
            // [AMBIG → chosen: the largest payload of a 127-byte 802.15.4 frame with TOSSIM's
            // 13-byte header]
            max_payload: 114,
            promiscuous: true, // [AMBIG → chosen: on; TOSSIM's AM layer hands others' frames up as Snoop]
            ieee802154_csma: false,
            csma_min_be: 3,
            csma_max_be: 5,
            csma_max_backoffs: 4,
            txfifo_load_base_ns: 0,
            txfifo_load_per_byte_ns: 0,
            rx_process_ns: 0,
            cpu_per_rx_ns: 0,
            ack_protection_ns: 0,
        }
    }

    /// `tinyos2` without MAC ACKs or retransmissions, for CXCC (spec-cxcc).
    pub fn noack() -> MacConfig {
        MacConfig { preset: "noack".into(), ack: AckMode::None, max_retries: 0, promiscuous: true, ..Self::tinyos2() }
    }

    /// A mica2-class CC1000 radio at 19.2 kbit/s under TinyOS B-MAC-style CSMA
    /// [AMBIG → chosen: backoffs 1–32 and 1–16 byte times, 18 bytes of preamble/sync/header/CRC
    /// overhead; the CC2420 PRR curve is reused]. The ACK handshake follows the stock CC1000
    /// stack [CODE t2: tos/chips/cc1000/CC1000SendReceiveP.nc]: after the CRC the sender sends 4
    /// flush bytes, waits 4 more and then looks for the ACK word for up to `MAX_ACK_WAIT` = 18
    /// byte times; the receiver answers with a 16-byte ACK (`ACK_LENGTH`) whose ACK word ends
    /// its 14th byte. So an ACK is heard about 14 byte times after the frame, and a missing one is
    /// given up 4 + 4 + 18 = 26 byte times after it (spec-gbn §15: "roughly 20 byte times").
    pub fn cc1000() -> MacConfig {
        let byte = 416_667;
        MacConfig {
            preset: "cc1000".into(),
            byte_ns: byte,
            overhead_bytes: 18,
            // [AMBIG → chosen: 4 of the 16-byte ACK decide whether it is heard: the sender looks
            // for the 16-bit ACK word at any bit offset in the last bytes the receiver sends
            // (`ackCode` = ab ba 83 aa aa, after 11 preamble bytes that need no decoding)
            // [CODE t2: CC1000SendReceiveP.nc txReadAck, ackData]; the whole ACK's 16 bytes
            // set only its timing (`ack_latency_ns`, `ack_timeout_ns`)]
            ack_bytes: 4,
            initial_backoff: Backoff { min_units: 1, max_units: 32, unit_ns: byte, mask: None },
            congestion_backoff: Backoff { min_units: 1, max_units: 16, unit_ns: byte, mask: None },
            sink_initial_backoff: None,
            sink_congestion_backoff: None,
            cca_guard_ns: 0,
            // [AMBIG → chosen: the CC1000's RX→TX switch, ≈ 250 µs]
            turnaround_ns: 250_000,
            // [AMBIG → chosen: the CC2420 presets' threshold and busy-while-receiving CCA; B-MAC
            // uses an adaptive noise floor instead]
            cca_threshold_dbm: -77.0,
            cca_mode3: true,
            ack: AckMode::Software,
            ack_latency_ns: 14 * byte,
            ack_timeout_ns: 26 * byte,
            ack_in_frame: false,
            max_retries: 4, // [AMBIG → chosen: as `tinyos1_tenet`; spec-gbn leaves it open]
            retry_gap_min_ns: 0,
            retry_gap_spread_ns: 0,
            queue_capacity: 16, // [AMBIG → chosen: as `tinyos1_tenet`]
            max_payload: 29,    // TOSH_DATA_LENGTH, TinyOS 1.x's default for the mica2 [CODE t1: AM.h]
            promiscuous: true,  // [AMBIG → chosen: on; the CC1000 has no hardware address filter]
            ieee802154_csma: false,
            csma_min_be: 3,
            csma_max_be: 5,
            csma_max_backoffs: 4,
            txfifo_load_base_ns: 0,
            txfifo_load_per_byte_ns: 0,
            rx_process_ns: 0,
            cpu_per_rx_ns: 0,
            ack_protection_ns: 0,
        }
    }

    /// Plain IEEE 802.15.4-2006 unslotted CSMA-CA with hardware ACKs, as ns-3's lr-wpan model
    /// runs it (spec §5.9: only for comparison with ns-3; TinyOS does not use it): backoff unit
    /// 20 symbols (320 µs), BE 3–5, at most 4 backoffs, 12-symbol turnaround, ACK wait 54
    /// symbols (864 µs), 3 retries by default [LIT: IEEE 802.15.4-2006 §7.4.2, §7.5.6.4].
    /// Frame overhead 17 bytes: PHY 6 + MAC header 9 (short addresses, PAN-ID compression) +
    /// FCS 2, so a 40-byte payload is the 57-byte frame of the ns-3 reference.
    pub fn ieee802154() -> MacConfig {
        MacConfig {
            preset: "ieee802154".into(),
            overhead_bytes: 17,
            initial_backoff: Backoff { min_units: 0, max_units: 7, unit_ns: 320_000, mask: None },
            congestion_backoff: Backoff { min_units: 0, max_units: 31, unit_ns: 320_000, mask: None },
            sink_initial_backoff: None,
            sink_congestion_backoff: None,
            cca_guard_ns: 128_000, // CCA takes 8 symbols
            // Energy-detect CCA at 10 dB above the −106.58 dBm reference sensitivity
            // [LIT: IEEE 802.15.4-2006 §6.9.9, as ns-3 lr-wpan applies it].
            cca_threshold_dbm: -96.58,
            // ns-3 reports the channel busy while its PHY is receiving a frame, whatever the
            // energy, then compares the energy with the threshold: energy OR carrier, as our
            // mode 3 [CODE ns-3.37 lr-wpan-phy.cc EndCca: PhyIsBusy() before the ED test].
            cca_mode3: true,
            ack: AckMode::Hardware,
            ack_latency_ns: 192_000 + 11 * 32_000,
            ack_timeout_ns: 864_000,
            max_retries: 3, // macMaxFrameRetries default [LIT: IEEE 802.15.4-2006 §7.4.2]
            retry_gap_min_ns: 0,
            retry_gap_spread_ns: 0,
            queue_capacity: 16, // [AMBIG → chosen: the lrwpan40 reference run's 16-packet queues]
            // [AMBIG → chosen: 127-byte frame less the 17 bytes of overhead above]
            max_payload: 110,
            promiscuous: false,
            ieee802154_csma: true,
            ..Self::tinyos2()
        }
    }

    /// The IFRC testbed's MAC (IFRC paper §6.1, spec-ifrc §13.1): TinyOS 1.x CC2420 CSMA with
    /// promiscuous reception, so address recognition and hardware ACKs are off and the driver
    /// strobes a software ACK (SACK) for valid frames addressed to the node; the default random
    /// backoff "tripled"; 5 link retransmissions after the first attempt; a 64-packet queue;
    /// 32-byte packets. Numbers from the authors' build [CODE usc-ifrc: Makefile, QueuedSend.h,
    /// CC2420RadioM.nc].
    ///
    /// The backoffs AND a 16-bit random number with the masks 45 and 189 (3 × 0xF and 3 × 0x3F),
    /// as the code does (session 16; before, uniform windows with the same means, 23.5 and 95.5
    /// units). The base station draws its own shorter backoffs (masks 7 and 31, session 17).
    /// Deviation: the code's queue holds 63 packets, the paper's 64.
    pub fn ifrc2006() -> MacConfig {
        MacConfig {
            preset: "ifrc2006".into(),
            // (r & 45) + 1 units of 10 jiffies: 0.31–14 ms, mean 7.2 ms, 16 distinct values
            // [CODE usc-ifrc: QueuedSend.h, 3 × 0xF]
            initial_backoff: Backoff { min_units: 1, max_units: 46, unit_ns: 10 * JIFFY_NS, mask: Some(45) },
            // (r & 189) + 1 units: 0.31–58 ms, mean 29 ms, 64 distinct values [CODE usc-ifrc:
            // QueuedSend.h, 3 × 0x3F]
            congestion_backoff: Backoff { min_units: 1, max_units: 190, unit_ns: 10 * JIFFY_NS, mask: Some(189) },
            // The base station: (r & 7) + 1 and (r & 31) + 1 units [CODE usc-ifrc: QueuedSend.h
            // BS_INIT_BACKOFF = 0xF / 2, BS_CONG_BACKOFF = 0x3F / 2; QueuedSendM.nc MacBackoff]
            sink_initial_backoff: Some(Backoff { min_units: 1, max_units: 8, unit_ns: 10 * JIFFY_NS, mask: None }),
            sink_congestion_backoff: Some(Backoff { min_units: 1, max_units: 32, unit_ns: 10 * JIFFY_NS, mask: None }),
            ack: AckMode::Software,
            // SACK is strobed once the frame has been read over SPI: RX FIFO read (1.5 ms, as
            // `rx_process_ns`) + 12-symbol turnaround + 11-byte ACK [DERIVED spec-radio §5.4].
            ack_latency_ns: 1_500_000 + 192_000 + 11 * 32_000,
            ack_timeout_ns: 150 * JIFFY_NS, // ACK_DELAY 150 jiffies = 4.6 ms [CODE usc-ifrc: Makefile]
            // MAX_RETRANSMIT_COUNT 5: 5 retransmissions, 6 attempts [PAPER Table 1; CODE
            // usc-ifrc: QueuedSendM.nc; AMBIG-24]
            max_retries: 5,
            // A retransmission goes straight back through the initial backoff [CODE usc-ifrc:
            // QueuedSendM.nc].
            retry_gap_min_ns: 0,
            retry_gap_spread_ns: 0,
            queue_capacity: 64, // [PAPER Table 1]
            // Per-frame software time before contention, calibrated to the testbed's capacity
            // (IFRC paper §6.2: one link carries ≈ 80–90 pkt/s without ACKs and ≈ 50 pkt/s with
            // ACKs and the tripled backoff; spec-ifrc §13.4 asks for this calibration). The
            // testbed logged every transmission and reception over the USB back-channel
            // [PAPER §6.1], which the radio-only model does not charge. [AMBIG-5 → chosen
            // 7.5 ms + 8 µs/byte: one saturated hop measures 52.8 pkt/s with this preset and
            // 81.6 pkt/s without ACKs at the default backoff; crates/wsn-sim/tests/ifrc.rs]
            txfifo_load_base_ns: 7_500_000,
            // 32-byte packets [PAPER Table 1; AMBIG-28 → 32 bytes of network payload: the
            // 14-byte collection header, the 12-byte IFRC header and the 6-byte flow/sequence
            // header; 49 bytes on the air, the code's frame is 48].
            max_payload: 32,
            promiscuous: true,
            ..Self::tinyos1_tenet()
        }
    }

    /// Air time of a frame with `payload` network bytes.
    pub fn airtime(&self, payload: usize) -> Duration {
        Duration((payload as u64 + self.overhead_bytes as u64) * self.byte_ns)
    }

    /// Time to load a frame into the radio before contention starts.
    pub fn txfifo_load(&self, payload: usize) -> Duration {
        Duration(
            self.txfifo_load_base_ns + (payload as u64 + self.overhead_bytes as u64) * self.txfifo_load_per_byte_ns,
        )
    }

    /// `[mac]` keys that a preset may leave unset.
    pub const OPTIONAL_KEYS: &'static [&'static str] = &["sink_initial_backoff", "sink_congestion_backoff"];

    /// The initial backoff window of a node, `sink` if it is one of the network's sinks.
    pub fn initial_backoff_of(&self, sink: bool) -> &Backoff {
        match &self.sink_initial_backoff {
            Some(b) if sink => b,
            _ => &self.initial_backoff,
        }
    }

    /// The congestion backoff window of a node, `sink` if it is one of the network's sinks.
    pub fn congestion_backoff_of(&self, sink: bool) -> &Backoff {
        match &self.sink_congestion_backoff {
            Some(b) if sink => b,
            _ => &self.congestion_backoff,
        }
    }

    /// Every backoff window that is set, with its key.
    fn backoffs(&self) -> Vec<(&'static str, Backoff)> {
        let mut all = vec![("initial_backoff", self.initial_backoff), ("congestion_backoff", self.congestion_backoff)];
        all.extend(self.sink_initial_backoff.map(|b| ("sink_initial_backoff", b)));
        all.extend(self.sink_congestion_backoff.map(|b| ("sink_congestion_backoff", b)));
        all
    }

    /// Check the numbers for consistency; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, b) in self.backoffs() {
            if b.min_units > b.max_units {
                return Err(format!("mac.{name}: min_units > max_units"));
            }
            if b.unit_ns == 0 {
                return Err(format!("mac.{name}.unit_ns must be > 0"));
            }
            if let Some(m) = b.mask {
                if u64::from(b.max_units) != u64::from(b.min_units) + u64::from(m) {
                    return Err(format!(
                        "mac.{name}: with mask = {m}, max_units must be min_units + mask = {}",
                        u64::from(b.min_units) + u64::from(m)
                    ));
                }
            }
        }
        if self.byte_ns == 0 {
            return Err("mac.byte_ns must be > 0".into());
        }
        // No modelled MAC waits anywhere near a second for one step; the cap keeps every sum and
        // product of these times (air time, backoff draws, TXFIFO loads) far from overflow.
        let second = 1_000_000_000u64;
        let mut times: Vec<(String, u64)> = vec![
            ("byte_ns".into(), self.byte_ns.saturating_mul(128)),
            ("cca_guard_ns".into(), self.cca_guard_ns),
            ("turnaround_ns".into(), self.turnaround_ns),
            ("ack_latency_ns".into(), self.ack_latency_ns),
            ("ack_timeout_ns".into(), self.ack_timeout_ns),
            ("retry_gap_min_ns".into(), self.retry_gap_min_ns),
            ("retry_gap_spread_ns".into(), self.retry_gap_spread_ns),
            ("txfifo_load_base_ns".into(), self.txfifo_load_base_ns),
            ("txfifo_load_per_byte_ns".into(), self.txfifo_load_per_byte_ns.saturating_mul(128)),
            ("rx_process_ns".into(), self.rx_process_ns),
            ("cpu_per_rx_ns".into(), self.cpu_per_rx_ns),
            ("ack_protection_ns".into(), self.ack_protection_ns),
        ];
        for (name, b) in self.backoffs() {
            // 2^8 − 1 units: the largest 802.15.4 window (macMaxBE = 8) uses the same unit.
            times.push((
                format!("{name} (max_units × unit_ns, or 255 × unit_ns)"),
                b.unit_ns.saturating_mul(u64::from(b.max_units.max(255))),
            ));
        }
        for (name, t) in times {
            if t > 10 * second {
                return Err(format!(
                    "mac.{name}: {} s is beyond any MAC timing (at most 10 s; per byte: 10 s / 128)",
                    t as f64 / 1e9
                ));
            }
        }
        // The attempt counter is a byte: 1 + max_retries must fit, and no modelled MAC comes near.
        if self.max_retries > MAX_RETRIES {
            return Err(format!("mac.max_retries = {}: at most {MAX_RETRIES}", self.max_retries));
        }
        if self.queue_capacity == 0 {
            return Err("mac.queue_capacity must be ≥ 1".into());
        }
        // At most what an 802.15.4 frame carries (127 bytes less the 12 of header, AM type and
        // FCS), as every frame is written to the pcap.
        let most = wsn_wire::ieee802154::MAX_PAYLOAD_LEN;
        if self.max_payload < 16 || self.max_payload > most {
            return Err(format!("mac.max_payload must be within 16..={most} bytes (an 802.15.4 frame's payload)"));
        }
        // A frame on the air is at most an 802.15.4 PPDU: 6 bytes of preamble, SFD and length and
        // a 127-byte MPDU (the presets reach 133 with their largest payload).
        const MAX_PPDU: usize = 133;
        if self.max_payload + self.overhead_bytes as usize > MAX_PPDU || self.ack_bytes as usize > MAX_PPDU {
            return Err(format!(
                "mac.overhead_bytes = {}, mac.ack_bytes = {}: a frame of max_payload = {} bytes would take {} bytes on \
                 the air, an ACK {}; at most {MAX_PPDU} (an 802.15.4 PPDU)",
                self.overhead_bytes,
                self.ack_bytes,
                self.max_payload,
                self.max_payload + self.overhead_bytes as usize,
                self.ack_bytes
            ));
        }
        if self.ack != AckMode::None && self.ack_timeout_ns < self.ack_latency_ns {
            return Err("mac.ack_timeout_ns must be ≥ mac.ack_latency_ns".into());
        }
        if !self.cca_threshold_dbm.is_finite() {
            return Err(format!("mac.cca_threshold_dbm = {}: must be a finite power in dBm", self.cca_threshold_dbm));
        }
        // IEEE 802.15.4-2006 §7.4.2: macMinBE ≤ macMaxBE, macMaxBE within 3..=8,
        // macMaxCSMABackoffs within 0..=5.
        if self.ieee802154_csma && (self.csma_min_be > self.csma_max_be || self.csma_max_be > 8) {
            return Err(format!(
                "mac.csma_min_be = {}, mac.csma_max_be = {}: need csma_min_be ≤ csma_max_be ≤ 8 (IEEE 802.15.4)",
                self.csma_min_be, self.csma_max_be
            ));
        }
        if self.ieee802154_csma && self.csma_max_backoffs > 5 {
            return Err(format!(
                "mac.csma_max_backoffs = {}: at most 5 (macMaxCSMABackoffs, IEEE 802.15.4)",
                self.csma_max_backoffs
            ));
        }
        if self.ieee802154_csma && (self.sink_initial_backoff.is_some() || self.sink_congestion_backoff.is_some()) {
            return Err("mac.sink_initial_backoff / mac.sink_congestion_backoff: IEEE 802.15.4 CSMA-CA \
                        (ieee802154_csma) draws its backoffs from the backoff exponent, so a sink's own \
                        windows would be ignored"
                .into());
        }

        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_have_their_names() {
        for name in MacConfig::PRESETS {
            let p = MacConfig::preset(name).unwrap();
            assert_eq!(p.preset, name);
            p.validate().unwrap();
        }
        assert!(MacConfig::preset("nope").is_none());
    }

    #[test]
    fn settings_no_mac_has_are_refused() {
        let t1 = MacConfig::tinyos1_tenet();
        let bad = [
            (MacConfig { ack_timeout_ns: 20_000_000_000, ..t1.clone() }, "mac.ack_timeout_ns"),
            (MacConfig { byte_ns: u64::MAX / 2, ..t1.clone() }, "mac.byte_ns"),
            (
                MacConfig {
                    initial_backoff: Backoff { min_units: 1, max_units: 16, unit_ns: u64::MAX, mask: None },
                    ..t1.clone()
                },
                "mac.initial_backoff",
            ),
            (MacConfig { csma_max_backoffs: 255, ..MacConfig::ieee802154() }, "at most 5"),
            (
                MacConfig { sink_initial_backoff: Some(t1.initial_backoff), ..MacConfig::ieee802154() },
                "a sink's own windows would be ignored",
            ),
            (
                MacConfig {
                    sink_congestion_backoff: Some(Backoff { min_units: 9, max_units: 1, unit_ns: 1, mask: None }),
                    ..t1.clone()
                },
                "mac.sink_congestion_backoff: min_units > max_units",
            ),
            // 100-kB frames used to be simulated.
            (MacConfig { overhead_bytes: 100_000, ..t1.clone() }, "would take 100086 bytes on the air"),
            (MacConfig { ack_bytes: 1_000, ..t1.clone() }, "an ACK 1000; at most 133"),
        ];
        for (cfg, says) in bad {
            let e = cfg.validate().unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn backoff_means_match_spec() {
        // 2.x initial mean 165.5 jiffies = 5.05 ms; 1.x initial mean 85 jiffies = 2.59 ms.
        let t2 = MacConfig::tinyos2();
        assert!((t2.initial_backoff.mean().as_secs_f64() * 1e3 - 5.05).abs() < 0.01);
        let t1 = MacConfig::tinyos1_tenet();
        assert!((t1.initial_backoff.mean().as_secs_f64() * 1e3 - 2.59).abs() < 0.01);
    }

    /// The presets' windows, ACK waits, retry limits and queues are the spec's numbers
    /// [spec radio-mac-routing §5.3: backoffs [11, 320] and [11, 80] jiffies, ACK wait 256
    /// jiffies; §5.6: 1.x backoffs 1–16 and 1–64 units of 10 jiffies, ACK wait 75 jiffies;
    /// §5.5: Tenet's 4 retransmissions 5–36 ms apart; §5.7: the test harness's FWD_QUEUE_LEN 16].
    #[test]
    fn presets_carry_the_spec_numbers() {
        let win = |b: &Backoff| (b.min_units, b.max_units, b.unit_ns);
        let t2 = MacConfig::tinyos2();
        assert_eq!(win(&t2.initial_backoff), (11, 320, JIFFY_NS));
        assert_eq!(win(&t2.congestion_backoff), (11, 80, JIFFY_NS));
        assert_eq!((t2.ack_timeout_ns, t2.cca_guard_ns), (256 * JIFFY_NS, 7 * JIFFY_NS));
        let t1 = MacConfig::tinyos1_tenet();
        assert_eq!(win(&t1.initial_backoff), (1, 16, 10 * JIFFY_NS));
        assert_eq!(win(&t1.congestion_backoff), (1, 64, 10 * JIFFY_NS));
        assert_eq!(t1.ack_timeout_ns, 75 * JIFFY_NS);
        assert_eq!((t1.max_retries, t1.queue_capacity), (4, 16));
        let ms = 976_563; // one binary ms, ns
        assert_eq!((t1.retry_gap_min_ns, t1.retry_gap_min_ns + t1.retry_gap_spread_ns), (5 * ms, 36 * ms));
    }

    #[test]
    fn airtime_of_a_2x_frame() {
        // L = 28 → 47 bytes → 1.504 ms (spec §5.2)
        assert_eq!(MacConfig::tinyos2().airtime(28).as_nanos(), 1_504_000);
    }

    /// A masked (TinyOS 1.x) draw's mean is `min + mask / 2` units: the IFRC build's windows
    /// average 23.5 and 95.5 units of 10 jiffies (the means of the uniform windows they
    /// replaced, see `ifrc2006`).
    #[test]
    fn masked_backoff_means() {
        let i = MacConfig::ifrc2006();
        assert_eq!(i.initial_backoff.mean().as_nanos(), 235 * JIFFY_NS);
        assert_eq!(i.congestion_backoff.mean().as_nanos(), 955 * JIFFY_NS);
    }

    /// The TXFIFO load charges its per-byte time for every byte on the air, header included:
    /// Tenet's 0.5 ms + 8 µs × (86 + 17) bytes.
    #[test]
    fn txfifo_load_counts_the_whole_frame() {
        assert_eq!(MacConfig::tinyos1_tenet().txfifo_load(86).as_nanos(), 500_000 + 103 * 8_000);
        assert_eq!(MacConfig::tinyos2().txfifo_load(86).as_nanos(), 0);
    }

    /// A sink draws from its own windows only where the preset has them (the IFRC build's base
    /// station), and an ordinary node never does.
    #[test]
    fn sink_windows_apply_to_sinks_only() {
        let i = MacConfig::ifrc2006();
        let units = |b: &Backoff| (b.min_units, b.max_units, b.mask);
        assert_eq!(units(i.initial_backoff_of(true)), (1, 8, None));
        assert_eq!(units(i.congestion_backoff_of(true)), (1, 32, None));
        assert_eq!(units(i.initial_backoff_of(false)), (1, 46, Some(45)));
        assert_eq!(units(i.congestion_backoff_of(false)), (1, 190, Some(189)));
        let t2 = MacConfig::tinyos2();
        assert_eq!(t2.initial_backoff_of(true), &t2.initial_backoff);
        assert_eq!(t2.congestion_backoff_of(true), &t2.congestion_backoff);
    }

    /// Each limit of `validate` at its edge: the last valid value passes, the next is refused
    /// with the field's name.
    #[test]
    fn validate_limits_are_inclusive() {
        let t1 = MacConfig::tinyos1_tenet();
        let fixed = Backoff { min_units: 5, max_units: 5, unit_ns: JIFFY_NS, mask: None };
        let most = wsn_wire::ieee802154::MAX_PAYLOAD_LEN;
        let e154 = MacConfig::ieee802154();
        let edges = [
            // (valid at the edge, refused one step beyond, the error names)
            (MacConfig { initial_backoff: fixed, ..t1.clone() }, None, "mac.initial_backoff"),
            (
                MacConfig { max_retries: MAX_RETRIES, ..t1.clone() },
                Some(MacConfig { max_retries: MAX_RETRIES + 1, ..t1.clone() }),
                "mac.max_retries",
            ),
            (
                MacConfig { queue_capacity: 1, ..t1.clone() },
                Some(MacConfig { queue_capacity: 0, ..t1.clone() }),
                "mac.queue_capacity",
            ),
            (
                MacConfig { max_payload: most, overhead_bytes: 0, ..t1.clone() },
                Some(MacConfig { max_payload: most + 1, overhead_bytes: 0, ..t1.clone() }),
                "mac.max_payload",
            ),
            (
                MacConfig { max_payload: 16, ..t1.clone() },
                Some(MacConfig { max_payload: 15, ..t1.clone() }),
                "mac.max_payload",
            ),
            (
                MacConfig { ack_timeout_ns: t1.ack_latency_ns, ..t1.clone() },
                Some(MacConfig { ack_timeout_ns: t1.ack_latency_ns - 1, ..t1.clone() }),
                "mac.ack_timeout_ns",
            ),
            (
                MacConfig { csma_min_be: 8, csma_max_be: 8, ..e154.clone() },
                Some(MacConfig { csma_min_be: 8, csma_max_be: 9, ..e154.clone() }),
                "mac.csma_max_be",
            ),
            (
                MacConfig { csma_max_backoffs: 5, ..e154.clone() },
                Some(MacConfig { csma_max_backoffs: 6, ..e154.clone() }),
                "mac.csma_max_backoffs",
            ),
            (
                MacConfig { retry_gap_spread_ns: 10_000_000_000, ..t1.clone() },
                Some(MacConfig { retry_gap_spread_ns: 10_000_000_001, ..t1.clone() }),
                "mac.retry_gap_spread_ns",
            ),
        ];
        for (ok, bad, names) in edges {
            assert_eq!(ok.validate(), Ok(()), "{names}");
            if let Some(bad) = bad {
                let e = bad.validate().unwrap_err();
                assert!(e.contains(names), "{names}: {e}");
            }
        }
        // A mask fixes max_units at min_units + mask, neither more nor less.
        let masked = |max_units| MacConfig {
            initial_backoff: Backoff { min_units: 1, max_units, unit_ns: JIFFY_NS, mask: Some(45) },
            ..t1.clone()
        };
        assert_eq!(masked(46).validate(), Ok(()));
        for max_units in [45, 47] {
            assert!(masked(max_units).validate().unwrap_err().contains("max_units must be min_units + mask = 46"));
        }
    }

    /// Each refusal `validate` states, one field at a time, with the field's name in the
    /// error: a zero backoff unit or byte time; a window that could reach 10 s either at its
    /// largest draw or at 255 units (the largest 802.15.4 window, which uses the same unit); a
    /// per-byte time whose 128-byte frame reaches 10 s; a CCA threshold that is not a finite
    /// power; `csma_min_be > csma_max_be` under 802.15.4 CSMA-CA (§7.4.2), which is not checked
    /// without it (the fields are unused); and a sink's congestion window alone under 802.15.4
    /// CSMA-CA. A MAC without ACKs has no ACK wait to order against the ACK latency.
    #[test]
    fn validate_refuses_each_stated_rule() {
        let t1 = MacConfig::tinyos1_tenet();
        let e154 = MacConfig::ieee802154();
        let window = |unit_ns| Backoff { min_units: 1, max_units: 16, unit_ns, mask: None };
        let bad = [
            (MacConfig { initial_backoff: window(0), ..t1.clone() }, "mac.initial_backoff.unit_ns must be > 0"),
            (MacConfig { byte_ns: 0, ..t1.clone() }, "mac.byte_ns must be > 0"),
            // 16 × 50 ms = 0.8 s, but 255 × 50 ms = 12.75 s.
            (MacConfig { congestion_backoff: window(50_000_000), ..t1.clone() }, "mac.congestion_backoff (max_units"),
            // 255 × 11 ms = 2.8 s, but its largest draw, 1000 × 11 ms = 11 s.
            (
                MacConfig { congestion_backoff: Backoff { max_units: 1000, ..window(11_000_000) }, ..t1.clone() },
                "mac.congestion_backoff (max_units",
            ),
            // 100 ms a byte: 12.8 s for 128 bytes.
            (MacConfig { txfifo_load_per_byte_ns: 100_000_000, ..t1.clone() }, "mac.txfifo_load_per_byte_ns"),
            (MacConfig { cca_threshold_dbm: f64::NAN, ..t1.clone() }, "mac.cca_threshold_dbm"),
            (MacConfig { cca_threshold_dbm: f64::NEG_INFINITY, ..t1.clone() }, "mac.cca_threshold_dbm"),
            (MacConfig { csma_min_be: 5, csma_max_be: 4, ..e154.clone() }, "mac.csma_min_be = 5"),
            (
                MacConfig { sink_congestion_backoff: Some(t1.congestion_backoff), ..e154.clone() },
                "a sink's own windows would be ignored",
            ),
        ];
        for (cfg, says) in bad {
            let e = cfg.validate().unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
        let fine = [
            MacConfig { congestion_backoff: window(30_000_000), ..t1.clone() },
            MacConfig { txfifo_load_per_byte_ns: 70_000_000, ..t1.clone() },
            MacConfig { csma_min_be: 5, csma_max_be: 4, ..t1.clone() },
            MacConfig { ack_timeout_ns: 0, ..MacConfig::noack() },
        ];
        for cfg in fine {
            assert_eq!(cfg.validate(), Ok(()), "{cfg:?}");
        }
    }

    /// The other presets' ACK, retry and queue numbers as their sources give them
    /// [spec radio-mac-routing §5.3–§5.9; spec-ifrc §13.1; IEEE 802.15.4-2006 §7.4.2].
    #[test]
    fn presets_carry_their_ack_retry_and_queue_numbers() {
        let t2 = MacConfig::tinyos2();
        assert_eq!((t2.ack, t2.max_retries, t2.queue_capacity, t2.ack_latency_ns), (AckMode::Software, 5, 12, 750_000));
        let t1 = MacConfig::tinyos1_tenet();
        assert_eq!((t1.ack, t1.ack_latency_ns), (AckMode::Hardware, 544_000));
        let no = MacConfig::noack();
        assert_eq!((no.ack, no.max_retries, no.promiscuous), (AckMode::None, 0, true));
        let sym = 15_259;
        let ts = MacConfig::tossim();
        assert_eq!(
            (ts.ack_in_frame, ts.ack_latency_ns, ts.ack_timeout_ns, ts.max_retries),
            (true, 34 * sym, 45 * sym, 0)
        );
        let e = MacConfig::ieee802154();
        assert_eq!((e.ack, e.ack_timeout_ns, e.max_retries, e.queue_capacity), (AckMode::Hardware, 864_000, 3, 16));
        assert_eq!((e.ieee802154_csma, e.csma_min_be, e.csma_max_be, e.csma_max_backoffs), (true, 3, 5, 4));
        let i = MacConfig::ifrc2006();
        assert_eq!(
            (i.ack, i.ack_timeout_ns, i.max_retries, i.queue_capacity),
            (AckMode::Software, 150 * JIFFY_NS, 5, 64)
        );
        assert_eq!((i.initial_backoff.mask, i.congestion_backoff.mask), (Some(45), Some(189)));
        let c = MacConfig::cc1000();
        assert_eq!((c.ack_latency_ns, c.ack_timeout_ns, c.max_retries), (14 * 416_667, 26 * 416_667, 4));
    }
}
