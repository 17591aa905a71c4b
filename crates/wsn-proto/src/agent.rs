//! The link boundary: what a node agent sees of its MAC and routing layer.
//!
//! Call order, per node, driven by the simulator (or a real radio driver):
//! 1. frames addressed to the node (or broadcast) → [`NodeAgent::handle_frame`];
//!    decoded frames for other nodes, when overhearing is on → [`NodeAgent::handle_overheard`];
//! 2. when [`NodeAgent::wants_to_send`] is true the MAC contends for the channel; when its
//!    initial backoff has expired (before the TXFIFO load and the first CCA) it calls
//!    [`NodeAgent::poll_frame`] (*late binding*: the agent may pick another frame or withdraw,
//!    returning `None`); the frame stays bound through congestion backoffs, and the agent may
//!    re-stamp it before each retransmission ([`NodeAgent::refresh_frame`]);
//! 3. every frame returned by `poll_frame` gets **exactly one** [`NodeAgent::handle_send_done`],
//!    after the MAC's last attempt (link retransmissions are the MAC's job);
//! 4. [`NodeAgent::handle_timeout`] is called at or after [`NodeAgent::poll_timeout`]; a
//!    spurious call is harmless;
//! 5. after any call the driver drains [`NodeAgent::poll_event`].

use alloc::vec::Vec;

use crate::time::{Duration, Instant};
use crate::NodeId;

/// Metadata of a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxInfo {
    /// Link-layer source (the previous hop).
    pub link_src: NodeId,
    /// Link-layer destination (this node, broadcast, or another node when overheard).
    pub link_dst: NodeId,
    /// Received signal strength at the start of the frame, dBm.
    pub rssi_dbm: i16,
    /// CC2420 link quality indication (≈ 50 worst … 110 best).
    pub lqi: u8,
}

/// A frame an agent hands to its MAC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Link-layer destination (a neighbour or [`NodeId::BROADCAST`]).
    pub dst: NodeId,
    /// Ask the receiver for a link-layer ACK (and let the MAC retransmit when none comes).
    pub ack_request: bool,
    /// Network-layer bytes (collection header and transport payload).
    pub payload: Vec<u8>,
}

/// Outcome of one frame handed to the MAC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendDone {
    /// Identifier the MAC gave the frame when it accepted it.
    pub frame_id: u64,
    /// Link-layer destination of the frame.
    pub dst: NodeId,
    /// True when a link-layer ACK arrived (always false for broadcasts and no-ACK frames).
    pub acked: bool,
    /// Transmissions used, the first one included.
    pub transmissions: u8,
    /// Time from the start of the first attempt (when the MAC began to contend for the channel,
    /// its initial backoff included) to the ACK, when acked: Flush's δ.
    pub time_to_ack: Option<Duration>,
    /// The MAC gave up because the channel stayed busy (IEEE 802.15.4 channel-access failure),
    /// so the frame never went on the air in its last attempt.
    pub channel_access_failure: bool,
}

/// What the node's routing layer and environment offer an agent.
pub trait LinkCtx {
    /// This node's address.
    fn node(&self) -> NodeId;
    /// Current parent in the tree rooted at `sink`, if the node has a route.
    fn parent(&self, sink: NodeId) -> Option<NodeId>;
    /// Hop count to `sink`, if known.
    fn hop_count(&self, sink: NodeId) -> Option<u8>;
    /// Next hop toward `dst` on the reverse path of the tree rooted at `sink`, if learned.
    fn down_next_hop(&self, sink: NodeId, dst: NodeId) -> Option<NodeId>;
    /// Record that an upward packet from `origin` arrived from `prev_hop` (reverse-path
    /// learning). Returns `false` when the packet must be dropped because it can only have come
    /// back through a loop (its origin is this node's parent) [CODE tenet1: RoutingLayerM.nc].
    fn learn_reverse(&mut self, sink: NodeId, origin: NodeId, prev_hop: NodeId) -> bool;
    /// This node received its own upward packet back: a routing loop.
    fn own_packet_returned(&mut self, sink: NodeId);
    /// A uniformly distributed random number from the node's seeded agent stream.
    fn random_u32(&mut self) -> u32;
}

/// Why an agent dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The transmit queue was full.
    QueueFull,
    /// A copy of this packet had already been seen.
    Duplicate,
    /// The hop limit ran out.
    TtlExpired,
    /// No route toward the destination.
    NoRoute,
    /// The bytes did not parse.
    Malformed,
    /// The MAC gave up after its retransmissions.
    RetriesExhausted,
    /// The MAC found the channel busy too many times in a row.
    ChannelAccess,
    /// The packet came back along a loop.
    Loop,
}

impl DropReason {
    /// Short name for tables and CSV files.
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::Duplicate => "duplicate",
            DropReason::TtlExpired => "ttl_expired",
            DropReason::NoRoute => "no_route",
            DropReason::Malformed => "malformed",
            DropReason::RetriesExhausted => "retries_exhausted",
            DropReason::ChannelAccess => "channel_access",
            DropReason::Loop => "loop",
        }
    }
}

/// Something an agent reports to its driver.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// A datagram reached its end-to-end destination at this node.
    Delivered {
        /// End-to-end source.
        origin: NodeId,
        /// Transport protocol number.
        protocol: u8,
        /// Hops travelled.
        hops: u8,
        /// Transport bytes.
        payload: Vec<u8>,
    },
    /// The node's rate controller lets the application originate one packet toward `sink` now
    /// (rate-controlled agents such as IFRC). The driver answers with [`NodeAgent::send`] when
    /// the application has data; otherwise the slot passes unused.
    AppSlot {
        /// Tree the packet would travel.
        sink: NodeId,
    },
    /// The rate the agent's controller allows this node changed (for traces and plots).
    RateChanged {
        /// New rate, packets per second.
        rate_pps: f64,
        /// The controller's congestion signal at the time (IFRC: the EWMA queue length).
        level: f64,
    },
    /// The link layer is done with a datagram this node originated ([`NodeAgent::send`]):
    /// acknowledged, given up after its retries, or delivered locally. A mote's routing layer
    /// signals this `sendDone` to the transport, which sends its next packet only then
    /// [CODE tenet1: RoutingLayerM.nc `Send.sendDone`, RcrTransportM.nc `sending`].
    OwnSent {
        /// Transport protocol number.
        protocol: u8,
        /// Tree (sink) the datagram travelled on.
        sink: NodeId,
        /// True for a datagram toward the sink, false for one down the tree from it.
        upward: bool,
        /// The next hop acknowledged it (always true without link ACKs or when delivered
        /// locally).
        acked: bool,
    },
    /// A packet was dropped at this node.
    Dropped {
        /// Why.
        reason: DropReason,
        /// End-to-end source, when the header could be read.
        origin: Option<NodeId>,
    },
}

/// Why a local send was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The transmit queue is full.
    QueueFull,
    /// The payload does not fit in one frame.
    TooLong,
    /// No route toward the destination.
    NoRoute,
}

impl core::fmt::Display for SendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SendError::QueueFull => write!(f, "transmit queue full"),
            SendError::TooLong => write!(f, "payload too long for one frame"),
            SendError::NoRoute => write!(f, "no route to destination"),
        }
    }
}

impl core::error::Error for SendError {}

/// A per-node protocol agent at the link boundary (see the module docs for the call order).
pub trait NodeAgent {
    /// A frame addressed to this node (or broadcast) was received.
    fn handle_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx, rx: &RxInfo, payload: &[u8]);
    /// A frame for another node was decoded (promiscuous mode only).
    fn handle_overheard(&mut self, _now: Instant, _ctx: &mut dyn LinkCtx, _rx: &RxInfo, _payload: &[u8]) {}
    /// The MAC finished with a frame previously returned by [`NodeAgent::poll_frame`].
    fn handle_send_done(&mut self, now: Instant, ctx: &mut dyn LinkCtx, done: &SendDone);
    /// A timer requested through [`NodeAgent::poll_timeout`] expired.
    fn handle_timeout(&mut self, _now: Instant, _ctx: &mut dyn LinkCtx) {}
    /// True when the agent has something to transmit (the MAC then contends for the channel).
    fn wants_to_send(&self) -> bool;
    /// The MAC may transmit now: hand over the frame, or `None` to withdraw.
    fn poll_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx) -> Option<Frame>;
    /// The MAC is about to retransmit the frame last returned by [`NodeAgent::poll_frame`]
    /// (second and later attempts; not called for the first): the agent may rewrite the bytes in
    /// place, e.g. IFRC stamps its header with current values at every attempt (spec-ifrc
    /// AMBIG-16). The length must not change. Default: the frame is resent unchanged.
    fn refresh_frame(&mut self, _now: Instant, _payload: &mut [u8]) {}
    /// Earliest time the agent wants [`NodeAgent::handle_timeout`].
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    /// Next event for the driver.
    fn poll_event(&mut self) -> Option<AgentEvent>;
    /// Packets waiting in the transmit queue (the frame held by the MAC included).
    fn queue_len(&self) -> usize;
    /// Bound of the transmit queue.
    fn queue_capacity(&self) -> usize;
    /// Whether [`NodeAgent::send`] would find room now for an upward (`upward`) or downward
    /// datagram of this node's own, so that a driver can ask before it builds one. Default: true.
    fn can_send(&self, _upward: bool) -> bool {
        true
    }
    /// Protocol-specific counters for reports, as (name, value) pairs; none by default.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The application on this node sends `payload` to `dst` through tree `sink`.
    ///
    /// For upward traffic `dst == sink`; for downward traffic `sink` names the tree whose
    /// reverse path is used.
    fn send(
        &mut self,
        now: Instant,
        ctx: &mut dyn LinkCtx,
        sink: NodeId,
        dst: NodeId,
        protocol: u8,
        payload: &[u8],
    ) -> Result<(), SendError>;
}
