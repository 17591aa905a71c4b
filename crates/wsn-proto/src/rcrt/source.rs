//! The RCRT source: the minimal sensor side (spec §3).
//!
//! A source opens a connection with its demand (SYN, retried), paces *new* packets with a
//! depth-1 token bucket at the rate the sink assigns, keeps each sent packet in a bounded
//! retransmit buffer until the cumulative ACK covers it, retransmits what the sink NACKs (not
//! paced by the bucket), stalls when the buffer is full and then probes with the first
//! unacknowledged packet about once per RTT, and tears down with a FIN carrying its last
//! sequence number. No congestion logic runs here [PAPER §3.1, §3.7].
//!
//! Call order: after [`Source::open`], [`Source::send`], [`Source::close`],
//! [`Source::handle_datagram`] or [`Source::handle_timeout`], drain [`Source::poll_transmit`]
//! (each datagram goes to the sink), then [`Source::poll_event`], then re-read
//! [`Source::poll_timeout`]. Paced packets leave from `poll_transmit`, so the driver calls it at
//! (or after) `poll_timeout` too; `handle_timeout` followed by `poll_transmit` does that.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use wsn_wire::rcrt::{NackList, Rate, Repr, SINCE_FEEDBACK_UNIT_MS};

use super::{seq_offset, unwrap_seq, unwrap_seq_signed, Profile};
use crate::time::{Duration, Instant};
use crate::NodeId;

/// Settings of a source, with defaults per profile (spec §5, mote rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceConfig {
    /// Behaviour profile (here it only selects the stall-probe period, D19, NACK processing
    /// details, when a packet the full window held back leaves, and whether a late SYN-ACK
    /// counts).
    pub profile: Profile,
    /// Retransmit buffer bound = most packets outstanding beyond the cumulative ACK.
    /// [CODE-FILL RCRT_MAX_WINDOW: 50 (D20); AMBIG-17: ≫ 2·r·RTT]
    pub buffer_packets: usize,
    /// Set ACK-request on every packet while more than this many are outstanding.
    /// [PAPER §3.7 "more than half full"; CODE window/2 = 25]
    pub ack_request_above: usize,
    /// Most NACKed packets queued for retransmission. [CODE recovery list: 10; AMBIG → chosen
    /// paper: the buffer size, so that one feedback can repair every loss it lists]
    pub recovery_capacity: usize,
    /// Time before a SYN is repeated. [CODE RCRT_SYN_TIMEOUT: 2000 ms]
    pub syn_timeout: Duration,
    /// SYN repetitions before giving up. [CODE RCRT_MAX_NUM_RETX: 10]
    pub syn_retries: u32,
    /// Time before a FIN is repeated. [CODE RCRT_FIN_TIMEOUT: 20 000 ms]
    pub fin_timeout: Duration,
    /// FIN repetitions before giving up. [CODE: 10]
    pub fin_retries: u32,
    /// RTT assumed until a feedback reports one. [AMBIG-23; CODE RCRT_FEEDBACK_TIMEOUT 5000 ms]
    pub default_rtt: Duration,
    /// A feedback's RTT is accepted only when 0 < rtt < this. [CODE RCRT_MAX_RTT: 10 000 ms]
    pub max_rtt: Duration,
    /// After this long without feedback the source stops reporting the time since it (fid 0).
    /// [CODE: 120 000 ms]
    pub feedback_age_limit: Duration,
    /// A feedback whose fid is the newest accepted one or up to this many − 1 older is
    /// ignored. [CODE: 10]
    pub fid_dup_window: u8,
    /// Gap between consecutive retransmissions. [AMBIG → chosen 10 ms: the mote sends one
    /// retransmission per flash read and radio send-done, spec §3.8; not a token-bucket limit]
    pub retx_spacing: Duration,
    /// Send one datagram at a time: after a datagram leaves [`Source::poll_transmit`], the next
    /// is built only after [`Source::handle_send_done`] and a further
    /// [`SourceConfig::send_done_retry`], with the values (rate, feedback echo) of that moment.
    /// This is the mote: one radio buffer and a `sending` flag shared by new packets,
    /// retransmissions, SYN and FIN, cleared by the routing layer's `sendDone`
    /// [CODE RcrTransportM.nc `transmitWaitingPacket`, `RoutingSend.sendDone`; spec §3.8,
    /// §3.12]. Off by default, for drivers without a send-done signal (a datagram socket); the
    /// simulator turns it on for every source.
    pub wait_for_send_done: bool,
    /// With [`SourceConfig::wait_for_send_done`]: wait after a send-done before the next
    /// datagram. [CODE RcrTransportM.nc: `sendDone` starts the 10-ms retry timer that sends the
    /// next waiting packet or reads the next retransmission]
    pub send_done_retry: Duration,
    /// Cap inside the reference code's stall-probe period 2·min(max(1/r, RTT), cap).
    /// [CODE: 10 s]
    pub stall_probe_cap: Duration,
    /// NACK processing stops at an entry more than this far behind the last sequence number
    /// sent (reference code only). [CODE: 200]
    pub nack_stale_distance: u32,
    /// Largest application payload. [PAPER §4.1: 64 bytes]
    pub max_payload: usize,
    /// Lowest token count that a slow-down can leave. Every slow-down restarts the pacing timer
    /// and takes one token away [CODE RcrTransportM.nc process_feedback_packet: an `int8_t`
    /// decremented with no floor, so −128; AMBIG-16 → chosen: the code in both profiles].
    /// −1 stops the deficit at one token (spec §3.4: "the token can become −1"): a
    /// sensitivity option, see docs/rcrt.md ("The slow-down token skip").
    pub slow_down_token_floor: i8,
    /// Incarnation nonce carried by the SYN; give each connection (or reboot) a fresh value.
    /// [AMBIG-21 → chosen, spec §4.11 item 5]
    pub nonce: u16,
}

impl SourceConfig {
    /// The paper profile (the default).
    pub fn paper() -> SourceConfig {
        SourceConfig {
            profile: Profile::Paper,
            buffer_packets: 50,
            ack_request_above: 25,
            recovery_capacity: 50,
            syn_timeout: Duration::from_millis(2_000),
            syn_retries: 10,
            fin_timeout: Duration::from_millis(20_000),
            fin_retries: 10,
            default_rtt: Duration::from_millis(5_000),
            max_rtt: Duration::from_millis(10_000),
            feedback_age_limit: Duration::from_millis(120_000),
            fid_dup_window: 10,
            retx_spacing: Duration::from_millis(10),
            wait_for_send_done: false,
            send_done_retry: Duration::from_millis(10),
            stall_probe_cap: Duration::from_secs(10),
            nack_stale_distance: 200,
            max_payload: 64,
            slow_down_token_floor: i8::MIN,
            nonce: 1,
        }
    }

    /// The reference-code profile.
    pub fn reference_code() -> SourceConfig {
        SourceConfig { profile: Profile::ReferenceCode, recovery_capacity: 10, ..SourceConfig::paper() }
    }

    /// The defaults of `profile`.
    pub fn for_profile(profile: Profile) -> SourceConfig {
        match profile {
            Profile::Paper => SourceConfig::paper(),
            Profile::ReferenceCode => SourceConfig::reference_code(),
        }
    }
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig::paper()
    }
}

/// Connection state of a source. [CODE RcrTransportM.nc: IDLE, SYN_ACK_WAIT, ACTIVE,
/// FIN_ACK_WAIT; SYN_SEND and FIN_SEND collapse into the wait states because there is no
/// send-done here]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Not opened yet.
    Idle,
    /// SYN sent, waiting for the SYN-ACK.
    SynAckWait {
        /// SYN repetitions so far.
        retries: u32,
        /// When the SYN is repeated.
        deadline: Instant,
    },
    /// Connected: data flows.
    Active,
    /// FIN sent, waiting for the FIN-ACK (NACKs are still served).
    FinAckWait {
        /// FIN repetitions so far.
        retries: u32,
        /// When the FIN is repeated.
        deadline: Instant,
    },
    /// Closed after a FIN-ACK: every packet was delivered.
    Closed,
    /// Opening was refused or timed out, or teardown timed out.
    Failed,
}

impl fmt::Display for SourceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceState::Idle => "IDLE",
            SourceState::SynAckWait { .. } => "SYN_ACK_WAIT",
            SourceState::Active => "ACTIVE",
            SourceState::FinAckWait { .. } => "FIN_ACK_WAIT",
            SourceState::Closed => "CLOSED",
            SourceState::Failed => "FAILED",
        })
    }
}

/// Something a source reports to its application.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SourceEvent {
    /// The SYN-ACK arrived: the application may send.
    Opened,
    /// A SYN-NACK arrived or the SYN retries ran out.
    OpenFailed,
    /// The sink assigned a new rate, pkt/s.
    RateChanged(f64),
    /// The cumulative ACK advanced: every packet up to this sequence number was delivered.
    Acked(u32),
    /// The retransmit buffer is full: no new packets until the sink acknowledges.
    Stalled,
    /// The buffer has room again.
    Resumed,
    /// The FIN-ACK arrived: every packet was delivered; the connection is closed.
    Closed,
    /// The FIN retries ran out; the connection was dropped.
    Aborted,
}

/// Why [`Source::send`] refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The connection is not open (no SYN-ACK yet, or closed).
    NotOpen,
    /// A packet is already waiting for a token (see [`Source::can_send`]).
    Busy,
    /// The payload is longer than [`SourceConfig::max_payload`].
    TooLong,
    /// [`Source::close`] was called.
    Closing,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::NotOpen => "connection not open",
            SendError::Busy => "a packet is already waiting to be sent",
            SendError::TooLong => "payload too long",
            SendError::Closing => "connection is closing",
        })
    }
}

impl core::error::Error for SendError {}

/// Counters of a source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// SYNs sent (repetitions included).
    pub syn_sent: u64,
    /// FINs sent (repetitions included).
    pub fin_sent: u64,
    /// Original DATA packets sent.
    pub data_sent: u64,
    /// Retransmissions sent (NACK-driven and probes).
    pub retransmissions: u64,
    /// Stall probes scheduled.
    pub probes: u64,
    /// Feedback packets accepted (SYN-ACK included).
    pub feedback_accepted: u64,
    /// Feedback packets ignored as duplicate or old.
    pub feedback_stale: u64,
    /// Sequence numbers NACKed to this source.
    pub nacks_received: u64,
    /// Times the buffer filled.
    pub stalls: u64,
    /// Feedbacks after which 2·r·RTT exceeded half the buffer: the buffer is too small for the
    /// rate and RTT. [AMBIG-17 → warn when 2·r_i·RTT_i > window/2]
    pub small_buffer_warnings: u64,
    /// Datagrams that did not parse.
    pub malformed: u64,
    /// Datagrams that parsed but do not fit the state.
    pub unexpected: u64,
    /// FEEDBACKs whose cumulative ACK lies outside what this incarnation sent: another
    /// incarnation's (spec §4.11 item 5), dropped whole.
    pub feedback_foreign: u64,
}

/// One RCRT connection from a sensor to its sink (see the module docs for the call order).
#[derive(Debug)]
pub struct Source {
    me: NodeId,
    sink: NodeId,
    cfg: SourceConfig,
    state: SourceState,
    demand: Rate,
    /// Rate in use (the newest assigned); zero until the SYN-ACK.
    rate: Rate,
    token: i64,
    next_tick: Instant,
    last_sent: u32,
    last_acked: u32,
    staged: Option<Vec<u8>>,
    /// Payloads of last_acked + 1 ..= last_sent.
    buffer: VecDeque<Vec<u8>>,
    recovery: VecDeque<u32>,
    next_retx_at: Instant,
    last_fid: u8,
    fb_at: Option<Instant>,
    rtt: Duration,
    stall_at: Option<Instant>,
    stalled: bool,
    /// Reference-code profile: a cumulative ACK freed the window for a staged packet that it
    /// had held back; the packet waits for the next pacing tick, even with a token saved
    /// (`on_feedback`, step 5).
    window_hold: bool,
    closing: bool,
    /// The setup failed because every SYN went unanswered (not refused): the sink may hold
    /// the flow, so [`Source::close`] still tears it down with a FIN.
    open_timed_out: bool,
    now: Instant,
    outbox: VecDeque<Vec<u8>>,
    /// A datagram has left and its send-done has not come yet ([`SourceConfig::wait_for_send_done`]).
    in_flight: bool,
    /// Another source of the same node has a datagram in flight: the node's one radio buffer
    /// is taken ([`Source::set_link_busy`]).
    link_busy: bool,
    /// No datagram leaves before this ([`SourceConfig::send_done_retry`] after a send-done).
    resume_at: Instant,
    events: VecDeque<SourceEvent>,
    stats: SourceStats,
}

impl Source {
    /// Mote-relevant state of one connection besides its recovery list, in bytes, as a packed C
    /// struct on a 16-bit mote would hold it (the retransmit buffer lives in flash and the
    /// staged packet's bytes in the application's buffer, so neither is counted; the source
    /// keeps a pointer to them and their length until the token comes, as the code keeps
    /// `psd[i].msg` [CODE RcrTransportM.nc `send`], which copies the bytes too, into a 76-byte
    /// `waitBuf` per connection) [DERIVED from the fields below]: state 1, retries 1, sink
    /// address 2, nonce 2, demand 2, rate 2, token 1, last sent 2, last acked 2, last fid 1,
    /// feedback time 4, RTT 2, staged/closing/stalled/timed-out flags 1, staged packet pointer
    /// 2 and length 1, pacing deadline 4, state (SYN/FIN) deadline 4, stall deadline 4,
    /// retransmission deadline 4 = 42. (The state and stall deadlines are never armed together,
    /// stall only while ACTIVE; one timer could hold both, as the code's `SubTimer` does, 4
    /// bytes less.)
    pub const FIXED_STATE_BYTES: usize = 1 + 1 + 2 + 2 + 2 + 2 + 1 + 2 + 2 + 1 + 4 + 2 + 1 + 2 + 1 + 4 + 4 + 4 + 4;

    /// Mote-relevant state of one connection under `cfg`, in bytes: [`Self::FIXED_STATE_BYTES`]
    /// plus the recovery list, 2 bytes per entry and 2 for its head and length (64 bytes with
    /// the reference code's 10 entries, 144 with the paper profile's 50).
    pub fn state_bytes(cfg: &SourceConfig) -> usize {
        Self::FIXED_STATE_BYTES + 2 * cfg.recovery_capacity + 2
    }

    /// A source at node `me` for a connection to `sink`.
    pub fn new(me: NodeId, sink: NodeId, cfg: SourceConfig) -> Source {
        Source {
            me,
            sink,
            rtt: cfg.default_rtt,
            cfg,
            state: SourceState::Idle,
            demand: Rate::ZERO,
            rate: Rate::ZERO,
            token: 0,
            next_tick: Instant::ZERO,
            last_sent: 0,
            last_acked: 0,
            staged: None,
            buffer: VecDeque::new(),
            recovery: VecDeque::new(),
            next_retx_at: Instant::ZERO,
            last_fid: 0,
            fb_at: None,
            stall_at: None,
            stalled: false,
            window_hold: false,
            closing: false,
            open_timed_out: false,
            now: Instant::ZERO,
            outbox: VecDeque::new(),
            in_flight: false,
            link_busy: false,
            resume_at: Instant::ZERO,
            events: VecDeque::new(),
            stats: SourceStats::default(),
        }
    }

    /// Open the connection with demand `demand_pps` (0 = let the sink choose): a SYN, repeated
    /// every [`SourceConfig::syn_timeout`]. Does nothing unless the source is idle.
    pub fn open(&mut self, now: Instant, demand_pps: f64) {
        self.now = now;
        if self.state != SourceState::Idle {
            return;
        }
        self.demand = Rate::from_pps(demand_pps);
        // [PAPER §3.7; CODE] IDLE → SYN_ACK_WAIT: SYN with the demand.
        self.state = SourceState::SynAckWait { retries: 0, deadline: now + self.cfg.syn_timeout };
        self.send_syn();
    }

    /// True when the application may hand over one more packet now.
    pub fn can_send(&self) -> bool {
        self.state == SourceState::Active && !self.closing && self.staged.is_none()
    }

    /// Stage one application packet; it leaves when the token bucket allows (and the buffer
    /// has room). [CODE RcrtSend.send: one staged packet]
    pub fn send(&mut self, now: Instant, data: &[u8]) -> Result<(), SendError> {
        self.now = now;
        if self.state != SourceState::Active {
            return Err(SendError::NotOpen);
        }
        if self.closing {
            return Err(SendError::Closing);
        }
        if data.len() > self.cfg.max_payload {
            return Err(SendError::TooLong);
        }
        if self.staged.is_some() {
            return Err(SendError::Busy);
        }
        self.staged = Some(data.to_vec());
        Ok(())
    }

    /// Close: the staged packet (if any) is still sent, then a FIN with the last sequence
    /// number; [`SourceEvent::Closed`] comes with the FIN-ACK, i.e. once the sink has every
    /// packet. [PAPER §3.8]
    pub fn close(&mut self, now: Instant) {
        self.now = now;
        match self.state {
            // [PAPER §3.8] ACTIVE → FIN_ACK_WAIT once the last packet has left. [AMBIG →
            // chosen: a staged packet is sent before the FIN; the code cancels it, spec §3.2;
            // docs/rcrt.md "The two profiles"]
            SourceState::Active => {
                self.closing = true;
                if self.staged.is_none() {
                    self.send_fin(now);
                }
            }
            // Not connected yet: tear down whatever the sink may have set up. The same after a
            // setup that timed out: a SYN may have arrived and its SYN-ACKs been lost, and a
            // sink without an idle timeout (the reference code's) would keep the flow's share
            // of R. A sink that never heard of the flow answers with a FIN-ACK anyway.
            // [AMBIG → chosen: FIN after a timed-out setup, not after a refused one]
            SourceState::SynAckWait { .. } => self.send_fin(now),
            SourceState::Failed if self.open_timed_out => {
                self.open_timed_out = false;
                self.send_fin(now)
            }
            SourceState::Idle => {
                self.state = SourceState::Closed;
                self.events.push_back(SourceEvent::Closed);
            }
            SourceState::FinAckWait { .. } | SourceState::Closed | SourceState::Failed => {}
        }
    }

    /// A datagram from the sink. Malformed or unexpected datagrams are counted and dropped.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.now = now;
        let repr = match Repr::parse(bytes) {
            Ok(repr) => repr,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let own = self.cfg.nonce;
        match (self.state, repr) {
            // [CODE] SYN_ACK_WAIT + SYN-ACK → ACTIVE; the SYN-ACK is processed as a feedback.
            (SourceState::SynAckWait { .. }, Repr::SynAck { fid, rate, rtt_ms, nonce }) if nonce == own => {
                self.state = SourceState::Active;
                self.last_sent = 0;
                self.last_acked = 0;
                self.events.push_back(SourceEvent::Opened);
                self.on_feedback(now, fid, rate, rtt_ms, None, &NackList::new());
            }
            // [CODE] SYN_ACK_WAIT + SYN-NACK → refused.
            (SourceState::SynAckWait { .. }, Repr::SynNack { nonce }) if nonce == own => {
                self.state = SourceState::Failed;
                self.events.push_back(SourceEvent::OpenFailed);
            }
            // A late duplicate SYN-ACK: only its rate and RTT matter (the fid filter applies).
            // [AMBIG → chosen, paper profile: the paper is silent; a SYN-ACK carries a feedback's
            // rate and RTT. CODE RcrTransportM.nc `RoutingReceive.receive`: a SYN-ACK is handled
            // only in SYN_ACK_WAIT, so the reference-code profile counts it as unexpected (spec
            // §3.3 step 4)]
            (SourceState::Active | SourceState::FinAckWait { .. }, Repr::SynAck { fid, rate, rtt_ms, nonce })
                if nonce == own && self.cfg.profile == Profile::Paper =>
            {
                self.on_feedback(now, fid, rate, rtt_ms, None, &NackList::new())
            }
            // A FEEDBACK whose cumulative ACK is not one of ours (before our start or beyond
            // what we sent) is another incarnation's: none of it applies (rate, RTT, fid, timers).
            (SourceState::Active | SourceState::FinAckWait { .. }, Repr::Feedback { cack, .. })
                if !self.acks_own_packets(cack) =>
            {
                self.stats.feedback_foreign += 1;
            }
            // [PAPER §3.7] ACTIVE + FEEDBACK → rate, cumulative ACK, NACK retransmissions.
            (SourceState::Active, Repr::Feedback { fid, rate, rtt_ms, cack, nacks }) => {
                self.on_feedback(now, fid, rate, rtt_ms, Some(cack), &nacks)
            }
            // [CODE] FIN_ACK_WAIT + FEEDBACK → repairs go on; the FIN timer and retries reset.
            (SourceState::FinAckWait { .. }, Repr::Feedback { fid, rate, rtt_ms, cack, nacks }) => {
                self.state = SourceState::FinAckWait { retries: 0, deadline: now + self.cfg.fin_timeout };
                self.on_feedback(now, fid, rate, rtt_ms, Some(cack), &nacks);
            }
            // [CODE; spec §4.11 item 7] FIN_ACK_WAIT + FIN-ACK echoing our last seqno → CLOSED.
            (SourceState::FinAckWait { .. }, Repr::FinAck { last }) if last == self.wire_seq(self.last_sent) => {
                self.state = SourceState::Closed;
                self.release();
                self.events.push_back(SourceEvent::Closed);
            }
            _ => self.stats.unexpected += 1,
        }
    }

    /// Run the timers due at `now` (SYN/FIN repetition, stall probe, paced sending).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    /// The next datagram for the sink. With [`SourceConfig::wait_for_send_done`], at most one
    /// until [`Source::handle_send_done`].
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.advance(now);
        if !self.cfg.wait_for_send_done {
            return self.outbox.pop_front();
        }
        if self.in_flight || self.link_busy || self.now < self.resume_at {
            return None;
        }
        let bytes = self.outbox.pop_front()?;
        self.in_flight = true;
        Some(bytes)
    }

    /// The link layer is done with the last datagram (acknowledged or not): with
    /// [`SourceConfig::wait_for_send_done`] the next may be built
    /// [`SourceConfig::send_done_retry`] later. Without it, this does nothing.
    pub fn handle_send_done(&mut self, now: Instant) {
        self.now = self.now.max(now);
        if self.cfg.wait_for_send_done && self.in_flight {
            self.in_flight = false;
            self.resume_at = self.now + self.cfg.send_done_retry;
        }
    }

    /// True while a datagram awaits its send-done ([`SourceConfig::wait_for_send_done`]).
    pub fn is_in_flight(&self) -> bool {
        self.in_flight
    }

    /// With [`SourceConfig::wait_for_send_done`]: another source on the same node took
    /// (`true`) or released (`false`) the node's one radio buffer. While it is taken nothing
    /// is built or sent; its release counts as a send-done here too (the mote has one
    /// `sending` flag and one retry timer for both connections).
    pub fn set_link_busy(&mut self, busy: bool, now: Instant) {
        self.now = self.now.max(now);
        if !self.cfg.wait_for_send_done || self.link_busy == busy {
            return;
        }
        self.link_busy = busy;
        if !busy {
            self.resume_at = self.resume_at.max(self.now + self.cfg.send_done_retry);
        }
    }

    /// Earliest time the source has work ([`Source::handle_timeout`] then
    /// [`Source::poll_transmit`]).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let state_deadline = match self.state {
            SourceState::SynAckWait { deadline, .. } | SourceState::FinAckWait { deadline, .. } => Some(deadline),
            _ => None,
        };
        // With wait_for_send_done: nothing leaves while a datagram is in flight (its send-done
        // wakes the source), nor before `resume_at`.
        let blocked = self.cfg.wait_for_send_done && (self.in_flight || self.link_busy);
        let floor = if self.cfg.wait_for_send_done { self.resume_at } else { Instant::ZERO };
        let retx = match self.state {
            SourceState::Active | SourceState::FinAckWait { .. } if !self.recovery.is_empty() && !blocked => {
                Some(self.next_retx_at.max(self.now).max(floor))
            }
            _ => None,
        };
        let stall = match self.state {
            SourceState::Active => self.stall_at,
            _ => None,
        };
        let send = if blocked { None } else { self.next_send_time().map(|t| t.max(floor)) };
        let queued = (!blocked && !self.outbox.is_empty()).then(|| self.now.max(floor));
        [state_deadline, retx, stall, send, queued].into_iter().flatten().min()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SourceEvent> {
        self.events.pop_front()
    }

    /// The rate in use, pkt/s (0 before the SYN-ACK).
    pub fn rate(&self) -> f64 {
        self.rate.pps()
    }

    /// Connection state.
    pub fn state(&self) -> SourceState {
        self.state
    }

    /// Sequence number of the newest original packet sent (0 = none).
    pub fn last_sent(&self) -> u32 {
        self.last_sent
    }

    /// Newest cumulative ACK accepted.
    pub fn last_acked(&self) -> u32 {
        self.last_acked
    }

    /// Packets in the retransmit buffer (sent, not yet covered by the cumulative ACK).
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// True while the buffer is full.
    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// The RTT the sink last reported (or the default).
    pub fn rtt(&self) -> Duration {
        self.rtt
    }

    /// This source's node.
    pub fn node(&self) -> NodeId {
        self.me
    }

    /// The sink this connection goes to.
    pub fn sink(&self) -> NodeId {
        self.sink
    }

    /// Counters.
    pub fn stats(&self) -> &SourceStats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &SourceConfig {
        &self.cfg
    }

    // ------------------------------------------------------------------------------- private

    /// Everything time-driven, in order: SYN/FIN timers, stall probe, one retransmission,
    /// one paced new packet.
    fn advance(&mut self, now: Instant) {
        self.now = self.now.max(now);
        let now = self.now;
        match self.state {
            // [CODE] SYN timeout: repeat up to 10 times, then give up.
            SourceState::SynAckWait { retries, deadline } if deadline <= now => {
                if retries < self.cfg.syn_retries {
                    self.state = SourceState::SynAckWait { retries: retries + 1, deadline: now + self.cfg.syn_timeout };
                    self.send_syn();
                } else {
                    self.state = SourceState::Failed;
                    self.open_timed_out = true;
                    self.events.push_back(SourceEvent::OpenFailed);
                }
            }
            // [CODE] FIN timeout: repeat up to 10 times, then drop the connection.
            SourceState::FinAckWait { retries, deadline } if deadline <= now => {
                if retries < self.cfg.fin_retries {
                    self.state = SourceState::FinAckWait { retries: retries + 1, deadline: now + self.cfg.fin_timeout };
                    self.push(&Repr::Fin { last: self.wire_seq(self.last_sent) });
                    self.stats.fin_sent += 1;
                } else {
                    self.state = SourceState::Failed;
                    self.release();
                    self.events.push_back(SourceEvent::Aborted);
                }
            }
            _ => {}
        }
        if self.state == SourceState::Active && self.stall_at.is_some_and(|at| at <= now) {
            // [PAPER §3.7; CODE StateTimerFired] still full: probe with last_acked + 1.
            self.stall_at = None;
            if self.outstanding() >= self.cfg.buffer_packets {
                self.stall_at = Some(now + self.probe_period());
                if self.recovery.is_empty() {
                    self.recovery.push_back(self.last_acked + 1);
                }
                self.stats.probes += 1;
            }
        }
        // With wait_for_send_done a DATA packet is built only when it can leave at once.
        let link_free = !self.cfg.wait_for_send_done
            || (!self.in_flight && !self.link_busy && now >= self.resume_at && self.outbox.is_empty());
        if link_free && matches!(self.state, SourceState::Active | SourceState::FinAckWait { .. }) {
            self.retransmit(now);
        }
        if self.state == SourceState::Active {
            self.refill(now);
            let link_free = link_free && self.outbox.is_empty() || !self.cfg.wait_for_send_done;
            if link_free && self.staged.is_some() && self.token >= 1 && !self.window_hold {
                self.send_staged(now);
            }
        }
    }

    /// Send retransmissions that are due (one per [`SourceConfig::retx_spacing`]); not paced
    /// by the token bucket [PAPER §3.7].
    fn retransmit(&mut self, now: Instant) {
        while now >= self.next_retx_at {
            let Some(seq) = self.recovery.pop_front() else {
                return;
            };
            if seq <= self.last_acked || seq > self.last_sent {
                continue; // [CODE] acknowledged meanwhile, or never sent
            }
            let index = (seq - self.last_acked - 1) as usize;
            let Some(payload) = self.buffer.get(index).cloned() else {
                continue;
            };
            let (fid, since) = self.echo(now);
            self.push(&Repr::Data {
                seq: self.wire_seq(seq),
                rate: self.rate,
                fid,
                since_feedback_2ms: since,
                ack_request: self.outstanding() > self.cfg.ack_request_above,
                retransmission: true,
                payload: &payload,
            });
            self.stats.retransmissions += 1;
            self.next_retx_at = now + self.cfg.retx_spacing;
            if self.cfg.retx_spacing > Duration::ZERO {
                return;
            }
        }
    }

    /// Send the staged packet if the buffer allows. [CODE trySendStaged]
    fn send_staged(&mut self, now: Instant) {
        let seq = self.last_sent + 1;
        let out = (seq - self.last_acked) as usize;
        if out > self.cfg.buffer_packets {
            return; // [PAPER §3.7] buffer full: stalled until acknowledged (see `on_feedback`)
        }
        self.window_hold = false;
        let Some(payload) = self.staged.take() else {
            return;
        };
        if out == self.cfg.buffer_packets {
            // [CODE] the last packet the buffer allows: arm the stall probe.
            self.stall_at = Some(now + self.probe_period());
            self.stalled = true;
            self.stats.stalls += 1;
            self.events.push_back(SourceEvent::Stalled);
        }
        let (fid, since) = self.echo(now);
        self.push(&Repr::Data {
            seq: self.wire_seq(seq),
            rate: self.rate,
            fid,
            since_feedback_2ms: since,
            // [PAPER §3.7] more than half full: ask for feedback.
            ack_request: out > self.cfg.ack_request_above,
            retransmission: false,
            payload: &payload,
        });
        self.buffer.push_back(payload);
        self.last_sent = seq;
        self.token -= 1;
        self.stats.data_sent += 1;
        if self.closing {
            self.send_fin(now);
        }
    }

    /// A sequence number as this incarnation writes it on the wire ([`seq_offset`]).
    fn wire_seq(&self, seq: u32) -> u16 {
        (seq as u16).wrapping_add(seq_offset(self.cfg.nonce))
    }

    /// Whether a cumulative ACK (wire numbering) names a packet of this incarnation: from its
    /// start (0, nothing delivered) up to the last packet sent.
    fn acks_own_packets(&self, cack: u16) -> bool {
        let c = unwrap_seq_signed(self.last_sent, cack.wrapping_sub(seq_offset(self.cfg.nonce)));
        (0..=i64::from(self.last_sent)).contains(&c)
    }

    /// A wire sequence number of this incarnation, unwrapped near the last one sent.
    fn unwire_seq(&self, wire: u16) -> u32 {
        unwrap_seq(self.last_sent, wire.wrapping_sub(seq_offset(self.cfg.nonce)))
    }

    /// Process a feedback (or SYN-ACK). [CODE process_feedback_packet, spec §3.7]
    fn on_feedback(&mut self, now: Instant, fid: u8, rate: Rate, rtt_ms: u16, cack: Option<u16>, nacks: &NackList) {
        // 1. Duplicate or old feedback.
        if self.last_fid != 0 && self.last_fid.wrapping_sub(fid) < self.cfg.fid_dup_window {
            self.stats.feedback_stale += 1;
            return;
        }
        self.stats.feedback_accepted += 1;
        // 2. T′ of the RTT scheme.
        self.fb_at = Some(now);
        self.last_fid = fid;
        // 3. The sink's RTT. [AMBIG-23]
        let rtt = Duration::from_millis(u64::from(rtt_ms));
        if rtt_ms > 0 && rtt < self.cfg.max_rtt {
            self.rtt = rtt;
        }
        // 4. Rate. [CODE; AMBIG-16 → depth 1, one token dropped on a slow-down]
        if rate != self.rate && !rate.is_zero() {
            self.refill(now);
            if self.rate.is_zero() || rate.pps() < self.rate.pps() {
                self.next_tick = now + interval(rate);
                // [CODE RcrTransportM.nc process_feedback_packet: an int8_t decremented
                // without a floor, so two slow-downs within one tick leave −2]
                if self.token > i64::from(self.cfg.slow_down_token_floor) {
                    self.token -= 1;
                }
            }
            self.rate = rate;
            self.events.push_back(SourceEvent::RateChanged(rate.pps()));
        }
        // [AMBIG-17] the buffer should be ≫ 2·r·RTT packets.
        if 2.0 * self.rate.pps() * self.rtt.as_secs_f64() > (self.cfg.buffer_packets / 2) as f64 {
            self.stats.small_buffer_warnings += 1;
        }
        // 5. Cumulative ACK frees the buffer.
        if let Some(cack) = cack {
            let cack = self.unwire_seq(cack);
            if cack > self.last_acked && cack <= self.last_sent {
                let was_blocked = self.window_blocked();
                let freed = (cack - self.last_acked) as usize;
                self.buffer.drain(..freed.min(self.buffer.len()));
                self.last_acked = cack;
                self.events.push_back(SourceEvent::Acked(cack));
                if self.stalled && self.outstanding() < self.cfg.buffer_packets {
                    self.stalled = false;
                    self.events.push_back(SourceEvent::Resumed);
                }
                // A staged packet the full window held back, now free to go:
                // - [CODE RcrTransportM.nc: `transmitWaitingPacket` returns at the window check
                //   and arms no retry, and `process_feedback_packet` posts no send; only
                //   `RateControlTimerFired` tries again] the reference-code profile sends it at
                //   the next pacing tick, up to one interval after this ACK, even with a token
                //   saved (spec §3.5: "each later pacing tick retries it"). Every tick up to now
                //   tried it against the full window and failed. (Not modelled: a tick that met
                //   a busy radio retries every 10 ms until the radio is free, and would send it
                //   at that retry if this ACK came meanwhile.)
                // - [AMBIG → chosen, paper profile: the paper is silent; a token bucket holding
                //   a saved token sends at once] the paper profile sends it as soon as a token
                //   allows, at once with one saved.
                if was_blocked && !self.window_blocked() && self.cfg.profile == Profile::ReferenceCode {
                    self.refill(now);
                    self.window_hold = true;
                }
            }
        }
        // 6. NACKs → recovery list (every NACKed number counted, also past an entry that ends
        // the walk).
        self.stats.nacks_received += nacks.seqnos().count() as u64;
        for wire in nacks.seqnos() {
            let seq = self.unwire_seq(wire);
            if self.cfg.profile == Profile::ReferenceCode
                && (seq == 0 || seq.saturating_add(self.cfg.nack_stale_distance) < self.last_sent)
            {
                break; // [CODE] stop at an invalid or stale entry
            }
            if seq <= self.last_acked || seq > self.last_sent || self.recovery.contains(&seq) {
                continue;
            }
            if self.recovery.len() >= self.cfg.recovery_capacity {
                break; // [CODE] stop at the first entry that does not fit
            }
            self.recovery.push_back(seq);
        }
    }

    /// Add the tokens of every pacing tick up to `now` (capacity 1). [CODE RateControlTimer]
    fn refill(&mut self, now: Instant) {
        if self.rate.is_zero() || now < self.next_tick {
            return;
        }
        let step = interval(self.rate).as_nanos().max(1);
        let ticks = (now - self.next_tick).as_nanos() / step + 1;
        // The token never falls below −128 (an int8_t in the code), so 256 ticks refill any deficit.
        self.token = (self.token + ticks.min(256) as i64).min(1);
        self.next_tick += Duration(step.saturating_mul(ticks));
        // [CODE RateControlTimerFired posts `transmitWaitingPacket`] a tick tries the staged
        // packet again: the hold ends.
        self.window_hold = false;
    }

    /// A packet is staged and the window has no room for it.
    fn window_blocked(&self) -> bool {
        self.staged.is_some() && (self.last_sent + 1 - self.last_acked) as usize > self.cfg.buffer_packets
    }

    /// When the staged packet can leave, if it is waiting for a token.
    fn next_send_time(&self) -> Option<Instant> {
        if self.state != SourceState::Active || self.staged.is_none() || self.rate.is_zero() {
            return None;
        }
        if self.window_blocked() {
            return None; // stalled: the stall probe or a feedback moves things on
        }
        if self.token >= 1 && !self.window_hold {
            return Some(self.now);
        }
        // Waiting for a token, or (window_hold) for the next tick with a token saved.
        let missing = (1 - self.token).max(1) as u64;
        Some(self.next_tick + interval(self.rate).saturating_mul(missing - 1))
    }

    /// Packets sent and not yet acknowledged.
    fn outstanding(&self) -> usize {
        (self.last_sent - self.last_acked) as usize
    }

    /// [PAPER §3.7, D19] max(2/r, RTT); [CODE] 2·min(max(1/r, RTT), 10 s).
    fn probe_period(&self) -> Duration {
        let per_packet = interval(self.rate);
        match self.cfg.profile {
            Profile::Paper => per_packet.saturating_mul(2).max(self.rtt),
            Profile::ReferenceCode => per_packet.max(self.rtt).min(self.cfg.stall_probe_cap).saturating_mul(2),
        }
    }

    /// The (fid, time since that feedback) echo of a DATA packet. [PAPER §3.7 T″ − T′]
    fn echo(&mut self, now: Instant) -> (u8, u16) {
        let Some(at) = self.fb_at else {
            return (0, 0);
        };
        let since = now - at;
        if since >= self.cfg.feedback_age_limit {
            // [CODE] too old to be useful: report "unknown" and forget the record.
            self.fb_at = None;
            return (0, 0);
        }
        let units = since.as_nanos() / (u64::from(SINCE_FEEDBACK_UNIT_MS) * 1_000_000);
        (self.last_fid, units.min(u64::from(u16::MAX)) as u16)
    }

    fn send_syn(&mut self) {
        self.stats.syn_sent += 1;
        self.push(&Repr::Syn { demand: self.demand, nonce: self.cfg.nonce });
    }

    fn send_fin(&mut self, now: Instant) {
        // [PAPER §3.8] FIN with the last sequence number sent.
        self.state = SourceState::FinAckWait { retries: 0, deadline: now + self.cfg.fin_timeout };
        self.stall_at = None;
        self.stats.fin_sent += 1;
        self.push(&Repr::Fin { last: self.wire_seq(self.last_sent) });
    }

    /// Drop the buffer and pending work (connection over).
    fn release(&mut self) {
        self.buffer.clear();
        self.recovery.clear();
        self.staged = None;
        self.stall_at = None;
        self.window_hold = false;
    }

    fn push(&mut self, repr: &Repr<'_>) {
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut bytes);
        self.outbox.push_back(bytes);
    }
}

/// The inter-packet interval of `rate` (at least 1 ns).
fn interval(rate: Rate) -> Duration {
    if rate.is_zero() {
        return Duration::from_secs(1_000);
    }
    Duration(((1e9 / rate.pps()) as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    const SINK: NodeId = NodeId(0);

    /// The wire offset of the default nonce (1): tests write and read sequence numbers as
    /// the incarnation's own numbers.
    const OFF: u16 = seq_offset(1);

    /// A sequence number as the default incarnation writes it.
    fn w(seq: u16) -> u16 {
        seq.wrapping_add(OFF)
    }

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    fn bytes(repr: &Repr<'_>) -> Vec<u8> {
        let mut b = vec![0; repr.buffer_len()];
        repr.emit(&mut b);
        b
    }

    fn syn_ack(fid: u8, rate: f64) -> Vec<u8> {
        bytes(&Repr::SynAck { fid, rate: Rate::from_pps(rate), rtt_ms: 0, nonce: 1 })
    }

    fn fb(fid: u8, rate: f64, rtt_ms: u16, cack: u16, nacks: &[u16]) -> Vec<u8> {
        let mut list = NackList::new();
        for &n in nacks {
            list.push(wsn_wire::rcrt::NackRange { first: w(n), run: 1 });
        }
        bytes(&Repr::Feedback { fid, rate: Rate::from_pps(rate), rtt_ms, cack: w(cack), nacks: list })
    }

    /// A DATA packet in owned form.
    #[derive(Debug, PartialEq)]
    struct Data {
        seq: u16,
        fid: u8,
        since_ms: u32,
        ack_request: bool,
        retx: bool,
        payload: Vec<u8>,
    }

    fn parse_data(b: &[u8]) -> Data {
        match Repr::parse(b) {
            Ok(Repr::Data { seq, fid, since_feedback_2ms, ack_request, retransmission, payload, .. }) => Data {
                seq: seq.wrapping_sub(OFF),
                fid,
                since_ms: u32::from(since_feedback_2ms) * 2,
                ack_request,
                retx: retransmission,
                payload: payload.to_vec(),
            },
            other => panic!("expected DATA, got {other:?}"),
        }
    }

    fn drain(s: &mut Source, now: Instant) -> Vec<Vec<u8>> {
        core::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    /// An open source at rate `rate` (SYN-ACK fid 1 at time 0).
    fn active(cfg: SourceConfig, rate: f64) -> Source {
        let mut s = Source::new(NodeId(7), SINK, cfg);
        s.open(ms(0), 1.0);
        drain(&mut s, ms(0));
        s.handle_datagram(ms(0), &syn_ack(1, rate));
        assert_eq!(s.state(), SourceState::Active);
        s
    }

    /// Let the application always have a packet ready and run until `until`; returns the
    /// emission times (ms) and packets.
    fn run(s: &mut Source, from: u64, until: u64) -> Vec<(u64, Data)> {
        let mut out = Vec::new();
        let mut now = ms(from);
        while now <= ms(until) {
            if s.can_send() {
                let seq = s.last_sent() as u8 + 1;
                s.send(now, &[seq]).unwrap();
            }
            s.handle_timeout(now);
            for b in drain(s, now) {
                out.push((now.as_millis(), parse_data(&b)));
            }
            if s.can_send() {
                continue;
            }
            match s.poll_timeout() {
                Some(t) if t > now => now = t,
                Some(_) => now += Duration::from_millis(1),
                None => break,
            }
        }
        out
    }

    // ---------------------------------------------------------- tests for SYN_ACK_WAIT

    #[test]
    fn open_sends_syn_and_retries() {
        let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
        assert_eq!(s.send(ms(0), b"x"), Err(SendError::NotOpen));
        s.open(ms(0), 2.0);
        let out = drain(&mut s, ms(0));
        assert_eq!(Repr::parse(&out[0]), Ok(Repr::Syn { demand: Rate::from_pps(2.0), nonce: 1 }));
        for k in 1..=10u64 {
            assert_eq!(s.poll_timeout(), Some(ms(2_000 * k)));
            assert_eq!(drain(&mut s, ms(2_000 * k)).len(), 1, "SYN repeat {k}");
        }
        s.handle_timeout(ms(22_000));
        assert_eq!(s.state(), SourceState::Failed);
        assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SourceEvent::OpenFailed));
    }

    /// A setup that timed out may have reached the sink (its SYN-ACKs lost): closing then
    /// tears the flow down with a FIN. A refused setup left nothing at the sink: no FIN.
    #[test]
    fn close_after_a_timed_out_setup_sends_a_fin_but_not_after_a_refusal() {
        let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
        s.open(ms(0), 2.0);
        for k in 0..=10u64 {
            drain(&mut s, ms(2_000 * k));
        }
        s.handle_timeout(ms(22_000));
        assert_eq!(s.state(), SourceState::Failed);
        s.close(ms(23_000));
        let out = drain(&mut s, ms(23_000));
        assert_eq!(out.len(), 1);
        assert_eq!(Repr::parse(&out[0]), Ok(Repr::Fin { last: s.wire_seq(0) }));
        assert!(matches!(s.state(), SourceState::FinAckWait { .. }));
        s.handle_datagram(ms(23_100), &bytes(&Repr::FinAck { last: s.wire_seq(0) }));
        assert_eq!(s.state(), SourceState::Closed);

        let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
        s.open(ms(0), 1.0);
        drain(&mut s, ms(0));
        s.handle_datagram(ms(10), &bytes(&Repr::SynNack { nonce: 1 }));
        assert_eq!(s.state(), SourceState::Failed);
        s.close(ms(20));
        assert!(drain(&mut s, ms(20)).is_empty(), "a refused setup sends no FIN");
        assert_eq!(s.state(), SourceState::Failed);
    }

    /// `close` in every state: a second call, at the same instant or later, changes nothing (no
    /// second FIN, the same state). The simulator's driver calls it once (`after_endpoint`'s
    /// `closing` flag) but a repeated call would be harmless.
    #[test]
    fn a_second_close_changes_nothing() {
        use alloc::boxed::Box;
        let timed_out = || {
            let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
            s.open(ms(0), 2.0);
            for k in 0..=10u64 {
                drain(&mut s, ms(2_000 * k));
            }
            s.handle_timeout(ms(22_000));
            s
        };
        let refused = || {
            let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
            s.open(ms(0), 1.0);
            drain(&mut s, ms(0));
            s.handle_datagram(ms(10), &bytes(&Repr::SynNack { nonce: 1 }));
            s
        };
        let staged = |rate: f64| {
            let mut s = active(SourceConfig::paper(), rate);
            s.send(ms(0), &[0; 6]).unwrap();
            s
        };
        type Make = Box<dyn Fn() -> Source>;
        let setups: Vec<(&str, Make)> = vec![
            ("idle", Box::new(|| Source::new(NodeId(7), SINK, SourceConfig::paper()))),
            (
                "SYN-ACK wait",
                Box::new(|| {
                    let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
                    s.open(ms(0), 1.0);
                    drain(&mut s, ms(0));
                    s
                }),
            ),
            ("active", Box::new(|| active(SourceConfig::paper(), 0.5))),
            ("active, a packet staged", Box::new(move || staged(0.5))),
            ("active, a packet staged without a token", Box::new(move || staged(0.001))),
            ("failed: setup timed out", Box::new(timed_out)),
            ("failed: refused", Box::new(refused)),
        ];
        let at = ms(30_000);
        for (name, make) in &setups {
            let mut once = make();
            once.close(at);
            let mut out1 = drain(&mut once, at);
            out1.extend(drain(&mut once, ms(30_001)));
            let mut twice = make();
            twice.close(at);
            twice.close(at);
            let mut out2 = drain(&mut twice, at);
            twice.close(ms(30_001));
            out2.extend(drain(&mut twice, ms(30_001)));
            assert_eq!(out1, out2, "{name}");
            let events = |s: &mut Source| core::iter::from_fn(|| s.poll_event()).collect::<Vec<_>>();
            assert_eq!(events(&mut once), events(&mut twice), "{name}");
            assert_eq!((once.state(), once.stats().fin_sent), (twice.state(), twice.stats().fin_sent), "{name}");
            assert!(twice.stats().fin_sent <= 1, "{name}");
        }
    }

    #[test]
    fn syn_ack_opens_and_syn_nack_refuses() {
        let s = active(SourceConfig::paper(), 0.5);
        assert_eq!(s.rate(), 0.5);
        let mut s = Source::new(NodeId(7), SINK, SourceConfig::paper());
        s.open(ms(0), 1.0);
        s.handle_datagram(ms(10), &bytes(&Repr::SynNack { nonce: 2 }));
        assert_eq!(s.stats().unexpected, 1, "another incarnation's SYN-NACK");
        s.handle_datagram(ms(10), &bytes(&Repr::SynNack { nonce: 1 }));
        assert_eq!(s.state(), SourceState::Failed);
    }

    // ---------------------------------------------------------------- tests for ACTIVE

    /// [PAPER §3.7; CODE] token bucket at r: the first packet two intervals after the
    /// SYN-ACK (token −1), then one per interval.
    #[test]
    fn token_bucket_paces_at_the_assigned_rate() {
        let mut s = active(SourceConfig::paper(), 2.0);
        let out = run(&mut s, 0, 3_000);
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, vec![1_000, 1_500, 2_000, 2_500, 3_000]);
        let seqs: Vec<u16> = out.iter().map(|(_, d)| d.seq).collect();
        assert_eq!(seqs, vec![1, 2, 3, 4, 5]);
        // T″ − T′: the SYN-ACK (fid 1) came at 0.
        assert_eq!((out[0].1.fid, out[0].1.since_ms), (1, 1_000));
        assert!(out.iter().all(|(_, d)| !d.retx && !d.ack_request));
    }

    /// [CODE] a slow-down restarts the pacing timer and drops a token; a speed-up applies from
    /// the next tick.
    #[test]
    fn rate_changes_follow_the_code() {
        let mut s = active(SourceConfig::paper(), 2.0);
        let out = run(&mut s, 0, 1_000);
        assert_eq!(out.len(), 1);
        // At 1200: slow down to 1 pkt/s → next tick 2200 with token −1 → next send 3200.
        s.handle_datagram(ms(1_200), &fb(2, 1.0, 0, 0, &[]));
        assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SourceEvent::RateChanged(1.0)));
        let out = run(&mut s, 1_200, 4_300);
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, vec![3_200, 4_200]);
        // At 4300: speed up to 4 pkt/s; the tick at 5200 stands, then every 250 ms.
        s.handle_datagram(ms(4_300), &fb(3, 4.0, 0, 0, &[]));
        let out = run(&mut s, 4_300, 5_700);
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, vec![5_200, 5_450, 5_700]);
    }

    /// [CODE process_feedback_packet] every slow-down takes a token, with no floor: two within
    /// one tick leave −2, so the next packet waits three ticks of the new rate. With
    /// `slow_down_token_floor = −1`, two ticks.
    #[test]
    fn slow_downs_take_a_token_each() {
        let floored = SourceConfig { slow_down_token_floor: -1, ..SourceConfig::paper() };
        for (cfg, expected) in [(SourceConfig::paper(), vec![7_300]), (floored, vec![5_300, 7_300])] {
            let mut s = active(cfg, 2.0);
            assert_eq!(run(&mut s, 0, 1_000).len(), 1); // token back to 0 after the send at 1000
            s.handle_datagram(ms(1_200), &fb(2, 1.0, 0, 0, &[])); // token −1, tick at 2200
            s.handle_datagram(ms(1_300), &fb(3, 0.5, 0, 0, &[])); // −2 (floored: −1); tick at 3300
            let times: Vec<u64> = run(&mut s, 1_300, 7_400).iter().map(|(t, _)| *t).collect();
            assert_eq!(times, expected);
        }
    }

    /// Without a floor, alternating rates pile up a deficit (the code's int8_t stops at −128);
    /// with the floor at −1 the next packet leaves two ticks after the last slow-down.
    #[test]
    fn slow_down_deficit_with_and_without_a_floor() {
        let floored: Vec<u64> = (5..=14).map(|k| k * 1_000).collect();
        for (floor, expected) in [(i8::MIN, vec![14_000]), (-1, floored)] {
            let mut s = active(SourceConfig { slow_down_token_floor: floor, ..SourceConfig::paper() }, 2.0);
            assert_eq!(run(&mut s, 0, 1_000).len(), 1);
            // Twenty feedbacks 100 ms apart alternate 4 and 1 pkt/s: ten slow-downs.
            for k in 0..20u8 {
                let rate = if k % 2 == 0 { 4.0 } else { 1.0 };
                s.handle_datagram(ms(1_100 + 100 * u64::from(k)), &fb(2 + k, rate, 0, 0, &[]));
            }
            // The last, at 3000, is a slow-down to 1 pkt/s: ticks every second from 4000. The
            // code's token is then −10: eleven ticks to the next packet.
            let times: Vec<u64> = run(&mut s, 3_000, 14_500).iter().map(|(t, _)| *t).collect();
            assert_eq!(times, expected, "floor {floor}");
        }
    }

    /// [CODE RcrTransportM.nc `sending`] with `wait_for_send_done`, one datagram at a time:
    /// the next is built 10 ms after the send-done of the previous, with the values of then.
    #[test]
    fn one_datagram_in_flight_until_send_done() {
        let cfg = SourceConfig { wait_for_send_done: true, ..SourceConfig::paper() };
        let mut s = Source::new(NodeId(7), SINK, cfg);
        s.open(ms(0), 1.0);
        assert_eq!(drain(&mut s, ms(0)).len(), 1, "the SYN");
        assert!(s.is_in_flight());
        s.handle_send_done(ms(2));
        assert!(!s.is_in_flight());
        s.handle_datagram(ms(5), &syn_ack(1, 10.0)); // token −1, ticks at 105, 205, …
                                                     // Packets 1..3, each acknowledged by the link 1 ms after it leaves.
        let mut now = ms(5);
        for seq in 1..=3u8 {
            s.send(now, &[seq]).unwrap();
            now = s.poll_timeout().expect("a tick");
            let out = drain(&mut s, now);
            assert_eq!(out.len(), 1);
            assert_eq!(parse_data(&out[0]).seq, u16::from(seq));
            s.handle_send_done(now + Duration::from_millis(1));
        }
        assert_eq!(now, ms(405));
        // Three NACKs: one retransmission leaves; the next waits for the send-done, and no
        // timer fires meanwhile (the send-done wakes the source).
        s.handle_datagram(ms(450), &fb(2, 10.0, 0, 0, &[1, 2, 3]));
        let first = drain(&mut s, ms(450));
        assert_eq!(first.len(), 1);
        assert_eq!((parse_data(&first[0]).seq, parse_data(&first[0]).retx), (1, true));
        assert!(s.poll_timeout().is_none_or(|t| t > ms(1_000)));
        assert!(drain(&mut s, ms(500)).is_empty(), "still in flight");
        s.handle_send_done(ms(520));
        assert_eq!(s.poll_timeout(), Some(ms(530)));
        assert!(drain(&mut s, ms(525)).is_empty(), "the 10-ms retry timer");
        let second = drain(&mut s, ms(530));
        assert_eq!(second.len(), 1);
        let d = parse_data(&second[0]);
        // Built at 530: the feedback (fid 2) was heard 80 ms before.
        assert_eq!((d.seq, d.retx, d.fid, d.since_ms), (2, true, 2, 80));
        // The default (a datagram socket) hands everything over at once.
        let mut free = active(SourceConfig::paper(), 10.0);
        run(&mut free, 0, 400);
        free.handle_datagram(ms(450), &fb(2, 10.0, 0, 0, &[1, 2]));
        assert_eq!(drain(&mut free, ms(450)).len() + drain(&mut free, ms(460)).len(), 2);
    }

    /// A node's two sources share its one buffer: while the other holds it nothing is built
    /// (no token spent, no stale echo), and its release starts the same 10-ms retry timer.
    #[test]
    fn link_busy_holds_a_sibling_back() {
        let cfg = SourceConfig { wait_for_send_done: true, ..SourceConfig::paper() };
        let mut s = Source::new(NodeId(7), SINK, cfg);
        s.open(ms(0), 1.0);
        assert_eq!(drain(&mut s, ms(0)).len(), 1);
        s.handle_send_done(ms(1));
        s.handle_datagram(ms(5), &syn_ack(1, 10.0)); // ticks at 105, 205
        s.send(ms(5), &[1]).unwrap();
        s.set_link_busy(true, ms(100));
        s.handle_timeout(ms(300));
        assert!(drain(&mut s, ms(300)).is_empty());
        assert_eq!(s.last_sent(), 0, "nothing built while the buffer is taken");
        assert!(s.poll_timeout().is_none_or(|t| t > ms(1_000)));
        s.set_link_busy(false, ms(400));
        assert_eq!(s.poll_timeout(), Some(ms(410)));
        let out = drain(&mut s, ms(410));
        assert_eq!(out.len(), 1);
        // Built at 410: the SYN-ACK (fid 1) was heard 405 ms before.
        assert_eq!(parse_data(&out[0]).since_ms, 404);
    }

    /// [PAPER §3.7] buffer full: no new packets; probe with last_acked + 1 every max(2/r, RTT).
    #[test]
    fn full_buffer_stalls_and_probes() {
        let cfg = SourceConfig { buffer_packets: 4, ack_request_above: 2, ..SourceConfig::paper() };
        let mut s = active(cfg, 10.0);
        let out = run(&mut s, 0, 2_000);
        let sent: Vec<(u16, bool, bool)> = out.iter().map(|(_, d)| (d.seq, d.ack_request, d.retx)).collect();
        // Seqnos 1–4 at 200…500 ms (ACK-request above 2 outstanding); the probe (RTT 5 s >
        // 2/r) at 500 + 5000 ms is beyond the horizon.
        assert_eq!(sent, vec![(1, false, false), (2, false, false), (3, true, false), (4, true, false)]);
        assert!(s.is_stalled());
        assert!(!s.can_send(), "the fifth packet is staged and blocked");
        let out = run(&mut s, 2_000, 11_000);
        let probes: Vec<(u64, u16, bool, bool)> = out.iter().map(|(t, d)| (*t, d.seq, d.ack_request, d.retx)).collect();
        assert_eq!(probes, vec![(5_500, 1, true, true), (10_500, 1, true, true)]);
        // A cumulative ACK frees the buffer; sending resumes.
        s.handle_datagram(ms(11_000), &fb(2, 10.0, 0, 4, &[]));
        let events: Vec<SourceEvent> = core::iter::from_fn(|| s.poll_event()).collect();
        assert!(events.contains(&SourceEvent::Acked(4)));
        assert!(events.contains(&SourceEvent::Resumed));
        assert_eq!(s.buffered(), 0);
        let out = run(&mut s, 11_000, 11_000);
        assert_eq!(out[0].1.seq, 5);
    }

    /// A 4-packet window at 10 pkt/s: packets 1–4 leave at 200…500 ms and packet 5 stays
    /// staged behind the full window; the tick at 600 saves a token it cannot use.
    fn blocked(cfg: SourceConfig) -> Source {
        let mut s = active(SourceConfig { buffer_packets: 4, ack_request_above: 2, ..cfg }, 10.0);
        let times: Vec<u64> = run(&mut s, 0, 650).iter().map(|(t, _)| *t).collect();
        assert_eq!(times, vec![200, 300, 400, 500]);
        assert!(s.is_stalled() && !s.can_send(), "packet 5 is staged and blocked");
        s
    }

    /// Spec §3.5 "out > 50: ... each later pacing tick retries it". [CODE RcrTransportM.nc:
    /// `process_feedback_packet` posts no send] the reference-code profile sends the packet a
    /// cumulative ACK frees at the next tick (700), though a token is saved; the paper profile
    /// at once (650) [AMBIG → chosen].
    #[test]
    fn freed_window_waits_for_the_next_tick_in_the_reference_code_profile() {
        for (cfg, first) in [(SourceConfig::paper(), 650), (SourceConfig::reference_code(), 700)] {
            let profile = cfg.profile;
            let mut s = blocked(cfg);
            s.handle_datagram(ms(650), &fb(2, 10.0, 0, 4, &[]));
            assert!(!s.is_stalled());
            // Due now (the paper profile's refill is lazy: it reports the tick at 600), or at 700.
            assert!(s.poll_timeout().is_some_and(|t| t.max(ms(650)) == ms(first)), "{profile:?}");
            let out = run(&mut s, 650, 900);
            let sent: Vec<(u64, u16)> = out.iter().map(|(t, d)| (*t, d.seq)).collect();
            let expected = match profile {
                Profile::Paper => vec![(650, 5), (700, 6), (800, 7), (900, 8)],
                Profile::ReferenceCode => vec![(700, 5), (800, 6), (900, 7)],
            };
            assert_eq!(sent, expected, "{profile:?}");
        }
    }

    /// The hold adds no tick when no token was saved: an ACK at 550, before the tick at 600,
    /// lets packet 5 go at 600 in both profiles; and the hold ends at a tick even if a deficit
    /// (a slow-down with the ACK) makes the packet wait for a later one.
    #[test]
    fn freed_window_without_a_saved_token_sends_at_the_tick_in_both_profiles() {
        for cfg in [SourceConfig::paper(), SourceConfig::reference_code()] {
            let profile = cfg.profile;
            let mut s = active(SourceConfig { buffer_packets: 4, ack_request_above: 2, ..cfg.clone() }, 10.0);
            run(&mut s, 0, 500);
            s.handle_datagram(ms(550), &fb(2, 10.0, 0, 4, &[]));
            let out = run(&mut s, 550, 600);
            assert_eq!(out.iter().map(|(t, d)| (*t, d.seq)).collect::<Vec<_>>(), vec![(600, 5)], "{profile:?}");
            // Blocked with a saved token; the freeing feedback slows down to 5 pkt/s: the tick
            // restarts (850) and the token goes: both profiles send at 850.
            let mut s = blocked(cfg);
            s.handle_datagram(ms(650), &fb(2, 5.0, 0, 4, &[]));
            let out = run(&mut s, 650, 1_050);
            let sent: Vec<(u64, u16)> = out.iter().map(|(t, d)| (*t, d.seq)).collect();
            assert_eq!(sent, vec![(850, 5), (1_050, 6)], "{profile:?}");
        }
    }

    /// Closing while packet 5 is blocked: it goes first, then the FIN, at the next tick in the
    /// reference-code profile (700) and at the ACK in the paper profile (650).
    #[test]
    fn closing_behind_a_full_window_waits_for_the_tick_in_the_reference_code_profile() {
        for (cfg, at) in [(SourceConfig::paper(), 650), (SourceConfig::reference_code(), 700)] {
            let profile = cfg.profile;
            let mut s = blocked(cfg);
            s.close(ms(640));
            assert_eq!(s.state(), SourceState::Active);
            s.handle_datagram(ms(650), &fb(2, 10.0, 0, 4, &[]));
            assert!(drain(&mut s, ms(650)).len() == usize::from(at == 650) * 2, "{profile:?}");
            if at == 700 {
                assert_eq!(s.poll_timeout(), Some(ms(700)));
                let out = drain(&mut s, ms(700));
                assert_eq!(parse_data(&out[0]).seq, 5);
                assert_eq!(Repr::parse(&out[1]), Ok(Repr::Fin { last: w(5) }));
            }
            assert!(matches!(s.state(), SourceState::FinAckWait { .. }), "{profile:?}");
        }
    }

    /// [CODE RcrTransportM.nc: a tick that finds the radio busy retries every 10 ms] a tick
    /// during a NACK retransmission sends the new packet after that retransmission's
    /// send-done and the 10-ms retry, not at the next tick, in both profiles.
    #[test]
    fn tick_during_a_retransmission_sends_after_the_send_done() {
        for cfg in [SourceConfig::paper(), SourceConfig::reference_code()] {
            let profile = cfg.profile;
            let mut s = active(SourceConfig { wait_for_send_done: true, ..cfg }, 10.0);
            s.handle_send_done(ms(1));
            s.send(ms(0), &[1]).unwrap();
            let out = drain(&mut s, ms(200));
            assert_eq!(parse_data(&out[0]).seq, 1);
            s.handle_send_done(ms(201));
            s.send(ms(250), &[2]).unwrap();
            s.handle_datagram(ms(290), &fb(2, 10.0, 0, 0, &[1]));
            assert!(parse_data(&drain(&mut s, ms(290))[0]).retx);
            assert!(drain(&mut s, ms(300)).is_empty(), "the tick at 300 meets the busy radio");
            s.handle_send_done(ms(320));
            assert_eq!(s.poll_timeout(), Some(ms(330)), "{profile:?}");
            let out = drain(&mut s, ms(330));
            assert_eq!((parse_data(&out[0]).seq, parse_data(&out[0]).retx), (2, false), "{profile:?}");
        }
    }

    /// [CODE RcrTransportM.nc `RoutingReceive.receive`: SYN-ACKs count only in SYN_ACK_WAIT]
    /// a late duplicate SYN-ACK in ACTIVE or FIN_ACK_WAIT changes nothing in the reference-code
    /// profile; the paper profile takes its rate like a feedback's [AMBIG → chosen].
    #[test]
    fn late_syn_ack_after_setup() {
        let late = |fid: u8, rate: f64| bytes(&Repr::SynAck { fid, rate: Rate::from_pps(rate), rtt_ms: 700, nonce: 1 });
        for cfg in [SourceConfig::paper(), SourceConfig::reference_code()] {
            let profile = cfg.profile;
            let paper = profile == Profile::Paper;
            let mut s = active(cfg, 1.0);
            // ACTIVE.
            s.handle_datagram(ms(100), &late(2, 3.0));
            assert_eq!(s.rate(), if paper { 3.0 } else { 1.0 }, "{profile:?}");
            assert_eq!(s.rtt(), Duration::from_millis(if paper { 700 } else { 5_000 }), "{profile:?}");
            assert_eq!((s.stats().feedback_accepted, s.stats().unexpected), if paper { (2, 0) } else { (1, 1) });
            // FIN_ACK_WAIT.
            s.close(ms(200));
            drain(&mut s, ms(200));
            assert!(matches!(s.state(), SourceState::FinAckWait { .. }));
            s.handle_datagram(ms(300), &late(3, 4.0));
            assert_eq!(s.rate(), if paper { 4.0 } else { 1.0 }, "{profile:?}");
            assert_eq!((s.stats().feedback_accepted, s.stats().unexpected), if paper { (3, 0) } else { (1, 2) });
        }
    }

    #[test]
    fn code_probe_period() {
        let cfg = SourceConfig { buffer_packets: 1, ..SourceConfig::reference_code() };
        let mut s = active(cfg, 0.25); // 1/r = 4 s, RTT 5 s → 2·5 s
        let out = run(&mut s, 0, 30_000);
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, vec![8_000, 18_000, 28_000]);
    }

    /// [PAPER §3.7] NACK → retransmissions, not paced by the bucket.
    #[test]
    fn nack_triggers_retransmission() {
        let mut s = active(SourceConfig::paper(), 10.0);
        run(&mut s, 0, 700); // 1..6
        assert_eq!(s.last_sent(), 6);
        s.handle_datagram(ms(750), &fb(2, 10.0, 800, 1, &[2, 4, 9]));
        assert_eq!(s.rtt(), Duration::from_millis(800));
        let first = drain(&mut s, ms(750));
        assert_eq!(first.len(), 1);
        let d = parse_data(&first[0]);
        assert_eq!((d.seq, d.retx, d.fid, d.since_ms, d.payload), (2, true, 2, 0, vec![2]));
        assert_eq!(s.poll_timeout(), Some(ms(760)));
        let second = drain(&mut s, ms(760));
        assert_eq!(parse_data(&second[0]).seq, 4);
        assert_eq!(s.stats().retransmissions, 2, "9 was never sent");
        assert_eq!(s.buffered(), 5, "cack 1 freed one packet");
    }

    /// Spec §4.11 item 5: the cumulative ACK and NACKs of an earlier incarnation (here nonce 0,
    /// whose numbers carry no offset) free nothing and retransmit nothing.
    #[test]
    fn feedback_of_another_incarnation_is_ignored() {
        let mut s = active(SourceConfig::paper(), 10.0);
        run(&mut s, 0, 700); // 1..6
        let mut nacks = NackList::new();
        nacks.push(wsn_wire::rcrt::NackRange { first: 2, run: 3 });
        let stale = bytes(&Repr::Feedback { fid: 7, rate: Rate::from_pps(3.0), rtt_ms: 7_000, cack: 5, nacks });
        s.handle_datagram(ms(750), &stale);
        assert_eq!(s.buffered(), 6, "cack 5 of nonce 0 freed packets of nonce 1");
        assert!(drain(&mut s, ms(750)).is_empty(), "NACKs of nonce 0 retransmitted packets of nonce 1");
        // None of it applies: not its rate, its RTT or its feedback id (which would make the
        // next real feedback, fid 3, look stale).
        assert_eq!((s.rate(), s.stats().feedback_foreign), (10.0, 1));
        assert_ne!(s.rtt(), Duration::from_millis(7_000));
        // The same feedback in this incarnation's numbering frees 5 and resends 6 after them.
        s.handle_datagram(ms(760), &fb(3, 10.0, 800, 5, &[6]));
        assert_eq!((s.buffered(), s.stats().feedback_stale), (1, 0));
        assert_eq!(parse_data(&drain(&mut s, ms(760))[0]).seq, 6);
    }

    #[test]
    fn small_buffer_is_flagged() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.handle_datagram(ms(10), &fb(2, 4.0, 4_000, 0, &[]));
        assert_eq!(s.stats().small_buffer_warnings, 1, "2 · 4 · 4 = 32 > 25");
        s.handle_datagram(ms(20), &fb(3, 1.0, 4_000, 0, &[]));
        assert_eq!(s.stats().small_buffer_warnings, 1, "2 · 1 · 4 = 8");
    }

    #[test]
    fn duplicate_feedback_and_bad_rtt_are_ignored() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.handle_datagram(ms(10), &fb(5, 2.0, 20_000, 0, &[]));
        assert_eq!(s.rtt(), Duration::from_millis(5_000), "RTT ≥ 10 s rejected");
        s.handle_datagram(ms(20), &fb(5, 3.0, 100, 0, &[]));
        s.handle_datagram(ms(20), &fb(1, 3.0, 100, 0, &[]));
        assert_eq!(s.stats().feedback_stale, 2);
        assert_eq!(s.rate(), 2.0);
        s.handle_datagram(ms(30), &fb(6, 3.0, 100, 0, &[]));
        assert_eq!(s.rate(), 3.0);
        // Garbage is counted.
        s.handle_datagram(ms(40), &[1, 2, 3]);
        assert_eq!(s.stats().malformed, 1);
    }

    #[test]
    fn feedback_time_ages_out() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.send(ms(0), b"a").unwrap();
        assert_eq!(parse_data(&drain(&mut s, ms(2_000))[0]).since_ms, 2_000);
        s.send(ms(130_000), b"b").unwrap();
        let d = parse_data(&drain(&mut s, ms(130_000))[0]);
        assert_eq!((d.fid, d.since_ms), (0, 0));
    }

    #[test]
    fn send_errors() {
        let mut s = active(SourceConfig::paper(), 1.0);
        assert_eq!(s.send(ms(0), &[0; 65]), Err(SendError::TooLong));
        s.send(ms(0), b"a").unwrap();
        assert!(!s.can_send());
        assert_eq!(s.send(ms(0), b"b"), Err(SendError::Busy));
        s.close(ms(0));
        assert_eq!(s.send(ms(0), b"b"), Err(SendError::Closing));
    }

    // ---------------------------------------------------------- tests for FIN_ACK_WAIT

    #[test]
    fn teardown_after_the_last_packet() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.send(ms(0), b"a").unwrap();
        s.close(ms(0));
        assert_eq!(s.state(), SourceState::Active, "FIN waits for the staged packet");
        let out = drain(&mut s, ms(2_000));
        assert_eq!(parse_data(&out[0]).seq, 1);
        assert_eq!(Repr::parse(&out[1]), Ok(Repr::Fin { last: w(1) }));
        assert!(matches!(s.state(), SourceState::FinAckWait { .. }));
        // NACKs are still served; a feedback restarts the FIN timer.
        s.handle_datagram(ms(3_000), &fb(2, 1.0, 0, 0, &[1]));
        assert_eq!(parse_data(&drain(&mut s, ms(3_000))[0]).seq, 1);
        assert_eq!(s.poll_timeout(), Some(ms(23_000)));
        // A FIN-ACK for another sequence number is ignored; the right one closes.
        s.handle_datagram(ms(4_000), &bytes(&Repr::FinAck { last: w(9) }));
        assert!(matches!(s.state(), SourceState::FinAckWait { .. }));
        // ... and so is one of another incarnation (nonce 0: no offset).
        s.handle_datagram(ms(4_000), &bytes(&Repr::FinAck { last: 1 }));
        assert!(matches!(s.state(), SourceState::FinAckWait { .. }));
        s.handle_datagram(ms(4_000), &bytes(&Repr::FinAck { last: w(1) }));
        assert_eq!(s.state(), SourceState::Closed);
        assert_eq!(s.buffered(), 0);
        assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SourceEvent::Closed));
    }

    #[test]
    fn fin_retries_then_abort() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.close(ms(0));
        assert_eq!(Repr::parse(&drain(&mut s, ms(0))[0]), Ok(Repr::Fin { last: w(0) }));
        for k in 1..=10u64 {
            assert_eq!(drain(&mut s, ms(20_000 * k)).len(), 1, "FIN repeat {k}");
        }
        s.handle_timeout(ms(220_000));
        assert_eq!(s.state(), SourceState::Failed);
        assert!(core::iter::from_fn(|| s.poll_event()).any(|e| e == SourceEvent::Aborted));
    }

    /// The state follows the recovery list's size: 42 fixed bytes (the staged packet's pointer
    /// and length included; 39 before, which left them out) and 2 per entry plus 2.
    #[test]
    fn state_size_is_small() {
        assert_eq!(Source::FIXED_STATE_BYTES, 42);
        assert_eq!(Source::state_bytes(&SourceConfig::reference_code()), 64);
        assert_eq!(Source::state_bytes(&SourceConfig::paper()), 144);
        assert!(Source::state_bytes(&SourceConfig::paper()) < 374, "the paper's whole transport took 374 B of RAM");
    }

    /// Every NACKed number counts in `nacks_received`, also those after the entry at which the
    /// reference code's walk stops (a full recovery list of 10): 15 here, 11 before.
    #[test]
    fn nacks_received_counts_the_whole_list() {
        let mut s = active(SourceConfig::reference_code(), 100.0);
        run(&mut s, 0, 400);
        assert!(s.last_sent() >= 20, "{}", s.last_sent());
        let nacks: Vec<u16> = (2..=16).collect();
        s.handle_datagram(ms(400), &fb(2, 100.0, 0, 1, &nacks));
        assert_eq!(s.stats().nacks_received, 15);
    }

    // ------------------------------------------------- tests from the test-quality audit

    /// [PAPER §3.7, D19] the paper's stall probe period is max(2/r, RTT): at 0.25 pkt/s, 2/r =
    /// 8 s beats the 5-s RTT, so the probes of a full one-packet buffer leave 8 s apart.
    #[test]
    fn paper_probe_period_is_two_intervals_when_longer_than_the_rtt() {
        let cfg = SourceConfig { buffer_packets: 1, ..SourceConfig::paper() };
        let mut s = active(cfg, 0.25);
        assert_eq!(s.rtt(), Duration::from_secs(5));
        let out = run(&mut s, 0, 40_000);
        let times: Vec<u64> = out.iter().map(|(t, _)| *t).collect();
        assert!(out.iter().skip(1).all(|(_, d)| d.seq == 1 && d.retx), "probes of packet 1: {times:?}");
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.len() >= 3 && gaps.iter().all(|&g| g == 8_000), "{times:?}");
    }

    /// [CODE] NACKed numbers fill the recovery list up to its capacity; the walk stops at the
    /// first that does not fit: with room for 3, five NACKed packets give three retransmissions.
    #[test]
    fn recovery_list_holds_its_capacity_and_no_more() {
        let mut s = active(SourceConfig { recovery_capacity: 3, ..SourceConfig::paper() }, 10.0);
        run(&mut s, 0, 700); // 1..6
        assert_eq!(s.last_sent(), 6);
        s.handle_datagram(ms(750), &fb(2, 10.0, 800, 0, &[1, 2, 3, 4, 5]));
        let resent: Vec<u16> = (0..10)
            .flat_map(|k| drain(&mut s, ms(750 + 10 * k)))
            .map(|b| parse_data(&b))
            .filter(|d| d.retx)
            .map(|d| d.seq)
            .collect();
        assert_eq!(resent, vec![1, 2, 3]);
        assert_eq!(s.stats().retransmissions, 3);
    }

    /// [CODE] a feedback up to 9 ids older than the newest accepted is a duplicate; one 10
    /// older is taken as new (the id has wrapped).
    #[test]
    fn feedback_id_window_is_the_newest_and_nine_older() {
        let mut s = active(SourceConfig::paper(), 1.0);
        s.handle_datagram(ms(10), &fb(30, 2.0, 100, 0, &[]));
        s.handle_datagram(ms(20), &fb(21, 3.0, 100, 0, &[]));
        assert_eq!((s.stats().feedback_stale, s.rate()), (1, 2.0), "9 older");
        s.handle_datagram(ms(30), &fb(20, 3.0, 100, 0, &[]));
        assert_eq!((s.stats().feedback_stale, s.rate()), (1, 3.0), "10 older");
    }

    // ------------------------------------- gaps found by manual mutation testing (tests31)

    /// Spec §3.7 step 5 "if lastAcked < fb.cack ≤ lastSent": a feedback that repeats the current
    /// cumulative ACK frees nothing and reports no new [`SourceEvent::Acked`] (the event means
    /// the ACK advanced).
    #[test]
    fn a_repeated_cumulative_ack_is_no_new_ack() {
        let mut s = active(SourceConfig::paper(), 10.0);
        run(&mut s, 0, 700); // 1..6
        while s.poll_event().is_some() {}
        s.handle_datagram(ms(750), &fb(2, 10.0, 0, 3, &[]));
        assert_eq!(core::iter::from_fn(|| s.poll_event()).collect::<Vec<_>>(), vec![SourceEvent::Acked(3)]);
        assert_eq!((s.last_acked(), s.buffered()), (3, 3));
        s.handle_datagram(ms(760), &fb(3, 10.0, 0, 3, &[]));
        assert_eq!(s.stats().feedback_accepted, 3, "SYN-ACK and both feedbacks");
        assert_eq!(s.poll_event(), None, "the ACK did not advance");
        assert_eq!((s.last_acked(), s.buffered()), (3, 3));
    }

    /// Spec §3.6 [CODE `StateTimerFired`, ACTIVE]: the stall probe puts lastAcked + 1 in the
    /// recovery list only if that list is empty; a NACKed retransmission already queued is the
    /// probe, and packet 1 is not sent on top of it.
    #[test]
    fn stall_probe_adds_nothing_when_a_repair_is_queued() {
        let mut s = blocked(SourceConfig::paper()); // stalled, probe due at 500 + 5000 ms
        s.handle_datagram(ms(5_500), &fb(2, 10.0, 0, 0, &[3]));
        let resent: Vec<u16> =
            run(&mut s, 5_500, 6_000).into_iter().filter(|(_, d)| d.retx).map(|(_, d)| d.seq).collect();
        assert_eq!(resent, vec![3]);
        assert_eq!(s.stats().probes, 1, "the probe fired (and re-armed)");
        assert_eq!(s.poll_timeout(), Some(ms(10_500)));
    }
}
