//! The generic collection forwarder: the node agent that end-to-end protocols run on.
//!
//! It keeps one bounded FIFO transmit queue, sends upward packets to the current parent of the
//! packet's tree and downward packets along the learned reverse path (or straight to the
//! destination when no path is known, Tenet's "try once"), rewrites the previous-hop field on
//! every hop, suppresses duplicates with a per-origin sequence window, and reports every
//! delivery and drop as an [`AgentEvent`]. Link-layer retransmissions are the MAC's job: a
//! frame the MAC gives up on is dropped here, as Tenet's routing layer does
//! [CODE tenet1: RoutingLayerM.nc, NewQueuedSendM.nc].

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use wsn_wire::collection::{self, Direction, Packet, Repr};

use crate::agent::{AgentEvent, DropReason, Frame, LinkCtx, NodeAgent, RxInfo, SendDone, SendError};
use crate::time::{Duration, Instant};
use crate::NodeId;

/// Settings of the collection forwarder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwarderConfig {
    /// Transmit queue bound, in packets, counting the one held by the MAC.
    /// [AMBIG-9 → chosen 16, the Tenet TestTransport default FWD_QUEUE_LEN]
    pub queue_capacity: usize,
    /// Initial TTL. [CODE tenet1: routinglayer.h, 20]
    pub ttl: u8,
    /// Largest network payload (collection header included) one frame may carry, bytes.
    /// [CODE tenet1: TOSH_DATA_LENGTH 86 in the RCRT runs]
    pub max_frame_payload: usize,
    /// Ask for link-layer ACKs on unicast frames.
    pub link_ack: bool,
    /// Tenet's reserved slot: besides `queue_capacity` packets going elsewhere, the queue holds
    /// one more, this node's own upward packet, of which there is at most one at a time (a
    /// second is refused until the first is done). [CODE tenet1: RoutingLayerM.nc
    /// `_QUEUE_SIZE = FWD_Q_SIZE + 1`, `mybusy`] Off: one shared bound for all packets.
    pub own_slot: bool,
    /// Drop a packet to forward whose (origin, sequence number) this node has already
    /// accepted (the per-origin window below): the copies a sender retransmits after losing the
    /// ACK of a frame that did arrive. Default on. Off: every copy travels on and only its
    /// destination drops it, as in Tenet, whose byte-for-byte compare with the last queued
    /// packet never matches a retransmitted copy (the queued copy's TTL was decremented)
    /// \[CODE tenet1: RoutingLayerM.nc `is_duplicate_packet`, `header->ttl--` before the copy\],
    /// and as in the IFRC authors' forwarding (no filter) [CODE usc-ifrc: RateControlM.nc].
    /// [AMBIG → chosen on: TinyOS 2.x filters them at the link layer (Unique layer) and
    /// MultiHopLQI keeps a 4-entry history; measured effect in docs/simulator.md]
    pub hop_dedup: bool,
}

impl Default for ForwarderConfig {
    fn default() -> Self {
        ForwarderConfig {
            queue_capacity: 16,
            ttl: collection::DEFAULT_TTL,
            max_frame_payload: 86,
            link_ack: true,
            own_slot: false,
            hop_dedup: true,
        }
    }
}

/// Width of the per-origin duplicate window, in sequence numbers. [AMBIG → chosen 128; MultiHopLQI
/// keeps only 4 entries; Tenet's compare with the last queued packet never matches a copy, see
/// `ForwarderConfig::hop_dedup`] One origin's packets reach a
/// node out of order when they took different paths: the sink's feedback to many sources fans out
/// and converges again downstream, and in the reference-code RCRT runs a node received one up to
/// 84 numbers behind the newest (6–7 times per run; with 64 until session 14 those were dropped
/// as duplicates).
const DEDUP_WINDOW: u16 = 128;

/// A duplicate window that has accepted nothing for this long is stale: a number more than the
/// window behind its newest restarts it instead of being dropped. [AMBIG → chosen 60 s: far
/// longer than a link-layer copy trails its original (a retry), far shorter than the hours it
/// takes a busy origin's 16-bit numbers to wrap]
const DEDUP_STALE_AFTER: Duration = Duration::from_secs(60);

/// Per-origin sliding window of recently seen sequence numbers.
#[derive(Clone, Copy, Debug)]
struct SeqWindow {
    highest: u16,
    /// Bit k set ⇔ `highest − 1 − k` was seen.
    seen: u128,
    /// When the window last accepted a number.
    last: Instant,
}

impl SeqWindow {
    fn new(seq: u16, now: Instant) -> SeqWindow {
        SeqWindow { highest: seq, seen: 0, last: now }
    }

    /// Record `seq` at `now`; returns false if it was already seen, or if it is more than the
    /// window behind the highest while the window is in use: too old to tell, and with very
    /// long queues a link-layer copy can arrive that late (accepting those delivered duplicates
    /// in a robustness hunt). After [`DEDUP_STALE_AFTER`] without an accepted number, such a
    /// number restarts the window: the origin's numbers may have wrapped while this node saw
    /// none of them (more than 32,768), and a stale window would reject all its packets until
    /// the numbers caught up. The price: if that number was instead a copy trailing by more
    /// than a minute, the restarted window no longer knows the numbers between it and the old
    /// newest, and copies of those are accepted again (at most the 128 the old window held;
    /// the destination's transport, or the simulator's delivery check, still counts each
    /// packet once).
    fn accept(&mut self, seq: u16, now: Instant) -> bool {
        let fresh = self.accept_number(seq, now);
        if fresh {
            self.last = now;
        }
        fresh
    }

    fn accept_number(&mut self, seq: u16, now: Instant) -> bool {
        let diff = seq.wrapping_sub(self.highest) as i16;
        if diff > 0 {
            let shift = diff as u32;
            self.seen = match shift {
                1..=127 => (self.seen << shift) | (1u128 << (shift - 1)),
                128 => 1u128 << 127,
                _ => 0,
            };
            self.highest = seq;
            true
        } else if diff == 0 {
            false
        } else {
            let back = (-(diff as i32)) as u32;
            if back > DEDUP_WINDOW as u32 {
                if now.saturating_since(self.last) >= DEDUP_STALE_AFTER {
                    *self = SeqWindow::new(seq, now);
                    return true;
                }
                return false;
            }
            let bit = 1u128 << (back - 1);
            if self.seen & bit != 0 {
                false
            } else {
                self.seen |= bit;
                true
            }
        }
    }
}

/// Hasher of node addresses for the duplicate windows: one multiplication (Fibonacci hashing)
/// spreads consecutive addresses over the table. Nothing iterates the table, so its order
/// cannot leak into a run.
#[derive(Clone, Copy, Debug, Default)]
struct AddrHasher(u64);

impl core::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u16(&mut self, n: u16) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The duplicate windows of every origin seen. Near a sink a node sees thousands of origins; a
/// hash probe into a flat table costs far less than a walk down a search tree.
type Windows = hashbrown::HashMap<NodeId, SeqWindow, core::hash::BuildHasherDefault<AddrHasher>>;

#[derive(Clone, Debug)]
struct Queued {
    bytes: Vec<u8>,
    /// Originated here ([`NodeAgent::send`]): its end is reported as [`AgentEvent::OwnSent`].
    own: bool,
    /// Originated here and going up the tree: it may use the reserved slot
    /// ([`ForwarderConfig::own_slot`]).
    own_up: bool,
}

/// Counters kept by the forwarder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStats {
    /// Packets originated here and accepted into the queue.
    pub originated: u64,
    /// Packets received for forwarding and accepted into the queue.
    pub forwarded: u64,
    /// Packets delivered at this node.
    pub delivered: u64,
    /// Drops because the queue was full.
    pub queue_drops: u64,
    /// Drops after the MAC's last retransmission.
    pub mac_drops: u64,
    /// Duplicates suppressed.
    pub duplicates: u64,
    /// Frames that did not parse.
    pub malformed: u64,
    /// Packets without a route (sent to the broadcast address and lost).
    pub no_route: u64,
    /// Packets dropped for an expired or impossible TTL, or for coming back along a loop.
    pub ttl_or_loop: u64,
    /// Packets the MAC gave up on for a busy channel (802.15.4 CSMA-CA).
    pub channel_access: u64,
    /// Largest queue length seen.
    pub max_queue: usize,
}

/// The generic collection forwarder (see the module docs).
#[derive(Debug)]
pub struct CollectionForwarder {
    me: NodeId,
    cfg: ForwarderConfig,
    queue: VecDeque<Queued>,
    in_flight: Option<Queued>,
    /// Own upward packets queued or in flight (at most 1 with [`ForwarderConfig::own_slot`]).
    own_up: usize,
    next_seqno: u16,
    windows: Windows,
    events: VecDeque<AgentEvent>,
    stats: ForwarderStats,
}

impl CollectionForwarder {
    /// A forwarder for node `me`.
    pub fn new(me: NodeId, cfg: ForwarderConfig) -> Self {
        CollectionForwarder {
            me,
            cfg,
            queue: VecDeque::new(),
            in_flight: None,
            own_up: 0,
            next_seqno: 0,
            windows: Windows::default(),
            events: VecDeque::new(),
            stats: ForwarderStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> &ForwarderStats {
        &self.stats
    }

    fn drop_packet(&mut self, reason: DropReason, origin: Option<NodeId>) {
        match reason {
            DropReason::QueueFull => self.stats.queue_drops += 1,
            DropReason::RetriesExhausted => self.stats.mac_drops += 1,
            DropReason::Duplicate => self.stats.duplicates += 1,
            DropReason::Malformed => self.stats.malformed += 1,
            DropReason::NoRoute => self.stats.no_route += 1,
            DropReason::TtlExpired | DropReason::Loop => self.stats.ttl_or_loop += 1,
            DropReason::ChannelAccess => self.stats.channel_access += 1,
        }
        self.events.push_back(AgentEvent::Dropped { reason, origin });
    }

    /// Room for one more packet: an own upward one (`own_up`) or any other.
    fn has_room(&self, own_up: bool) -> bool {
        if !self.cfg.own_slot {
            return self.queue_len() < self.cfg.queue_capacity;
        }
        if own_up {
            // mybusy: one own packet at a time, in its reserved slot.
            self.own_up == 0
        } else {
            self.queue_len() - self.own_up < self.cfg.queue_capacity
        }
    }

    fn enqueue(&mut self, bytes: Vec<u8>, own: bool, own_up: bool) -> bool {
        if !self.has_room(own_up) {
            return false;
        }
        self.queue.push_back(Queued { bytes, own, own_up });
        self.own_up += usize::from(own_up);
        self.stats.max_queue = self.stats.max_queue.max(self.queue_len());
        true
    }

    fn deliver(&mut self, repr: &Repr, payload: &[u8]) {
        self.stats.delivered += 1;
        self.events.push_back(AgentEvent::Delivered {
            origin: repr.origin,
            protocol: repr.protocol,
            hops: repr.hops,
            payload: payload.to_vec(),
        });
    }

    /// Duplicate check on (origin, seqno) at `now`.
    fn is_new(&mut self, origin: NodeId, seqno: u16, now: Instant) -> bool {
        match self.windows.entry(origin) {
            hashbrown::hash_map::Entry::Occupied(mut w) => w.get_mut().accept(seqno, now),
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert(SeqWindow::new(seqno, now));
                true
            }
        }
    }
}

impl NodeAgent for CollectionForwarder {
    fn handle_frame(&mut self, now: Instant, ctx: &mut dyn LinkCtx, rx: &RxInfo, payload: &[u8]) {
        let packet = Packet::new_unchecked(payload);
        let repr = match Repr::parse(&packet) {
            Ok(r) => r,
            Err(_) => {
                self.drop_packet(DropReason::Malformed, None);
                return;
            }
        };
        // Forwarders accept only frames addressed to them [AMBIG → chosen: MultiHopLQI's engine,
        // CODE t1: MultiHopEngineM.nc]; a broadcast data frame comes from a node without a route
        // and is lost. (Tenet's RoutingLayerM also takes broadcast frames and forwards them.)
        if rx.link_dst != self.me {
            return;
        }
        if repr.origin == self.me && repr.direction == Direction::Up {
            // Our own packet came back: a loop [CODE tenet1: RoutingLayerM.nc].
            ctx.own_packet_returned(repr.sink);
            self.drop_packet(DropReason::Loop, Some(repr.origin));
            return;
        }
        let body = packet.payload();
        let up = repr.direction == Direction::Up;
        let for_me = repr.dst == self.me || (up && repr.sink == self.me);
        if for_me && !self.is_new(repr.origin, repr.seqno, now) {
            self.drop_packet(DropReason::Duplicate, Some(repr.origin));
            return;
        }
        // Reverse-path learning from every upward packet this node accepts: delivered at the
        // sink (its own radio learns too, so that it can route replies down) or accepted for
        // forwarding [CODE tenet1: RoutingLayerM.nc, spec §6.3].
        if up && (repr.dst == self.me || repr.sink == self.me) {
            if !ctx.learn_reverse(repr.sink, repr.origin, rx.link_src) {
                self.drop_packet(DropReason::Loop, Some(repr.origin));
                return;
            }
            // A sink delivers everything that climbs its tree.
            self.deliver(&repr, body);
            return;
        }
        if repr.dst == self.me {
            self.deliver(&repr, body);
            return;
        }
        // TTL expired, or above the initial value ("TTL error") [CODE tenet1: RoutingLayerM.nc].
        if repr.ttl == 0 || repr.ttl > self.cfg.ttl {
            self.drop_packet(DropReason::TtlExpired, Some(repr.origin));
            return;
        }
        if !self.has_room(false) {
            self.drop_packet(DropReason::QueueFull, Some(repr.origin));
            return;
        }
        // The duplicate check comes after the room check [CODE tenet1: RoutingLayerM.nc; spec
        // §6.1, MultiHopLQI]: a packet dropped for a full queue (or its TTL) is not recorded, so
        // the sender's retransmission after a lost ACK can still be forwarded.
        if self.cfg.hop_dedup && !self.is_new(repr.origin, repr.seqno, now) {
            self.drop_packet(DropReason::Duplicate, Some(repr.origin));
            return;
        }
        if up && !ctx.learn_reverse(repr.sink, repr.origin, rx.link_src) {
            self.drop_packet(DropReason::Loop, Some(repr.origin));
            return;
        }
        let accepted = self.enqueue(payload.to_vec(), false, false);
        debug_assert!(accepted, "capacity was checked above");
        self.stats.forwarded += 1;
    }

    fn handle_send_done(&mut self, _now: Instant, _ctx: &mut dyn LinkCtx, done: &SendDone) {
        let Some(q) = self.in_flight.take() else { return };
        self.own_up -= usize::from(q.own_up);
        let header = Packet::new_checked(&q.bytes[..]).ok().map(|p| (p.origin(), Repr::parse(&p).ok()));
        let origin = header.as_ref().map(|h| h.0);
        let mut acked = true;
        if done.channel_access_failure {
            self.drop_packet(DropReason::ChannelAccess, origin);
            acked = false;
        } else if done.dst.is_broadcast() {
            // Sent without a route: no neighbour forwards a broadcast data frame.
            self.drop_packet(DropReason::NoRoute, origin);
            acked = false;
        } else if self.cfg.link_ack && !done.acked {
            self.drop_packet(DropReason::RetriesExhausted, origin);
            acked = false;
        }
        if q.own {
            if let Some((_, Some(r))) = header {
                self.events.push_back(AgentEvent::OwnSent {
                    protocol: r.protocol,
                    sink: r.sink,
                    upward: r.direction == Direction::Up,
                    acked,
                });
            }
        }
    }

    fn wants_to_send(&self) -> bool {
        self.in_flight.is_none() && !self.queue.is_empty()
    }

    fn poll_frame(&mut self, _now: Instant, ctx: &mut dyn LinkCtx) -> Option<Frame> {
        if self.in_flight.is_some() {
            return None;
        }
        let mut q = self.queue.pop_front()?;
        // Queued bytes were parsed on entry, so this cannot fail; stay panic-free regardless.
        let (dir, sink, dst) = match Repr::parse(&Packet::new_unchecked(&q.bytes[..])) {
            Ok(r) => (r.direction, r.sink, r.dst),
            Err(_) => {
                self.own_up -= usize::from(q.own_up);
                self.drop_packet(DropReason::Malformed, None);
                return None;
            }
        };
        let mut packet = Packet::new_unchecked(&mut q.bytes[..]);
        let next = match dir {
            Direction::Up => ctx.parent(sink).unwrap_or(NodeId::BROADCAST),
            Direction::Down => ctx.down_next_hop(sink, dst).unwrap_or(dst),
        };
        packet.set_prev_hop(self.me);
        if !q.own {
            // A forwarder spends one unit of TTL; the origin sends the full TTL, and a receiver
            // drops a packet that arrives with 0 (so a path may have TTL + 1 hops).
            // [CODE tenet1: RoutingLayerM.nc, "decrement ttl just before queueing for forwarding"]
            packet.set_ttl(packet.ttl().saturating_sub(1));
        }
        packet.set_hops(packet.hops().saturating_add(1));
        let frame =
            Frame { dst: next, ack_request: self.cfg.link_ack && !next.is_broadcast(), payload: q.bytes.clone() };
        self.in_flight = Some(q);
        Some(frame)
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    fn queue_len(&self) -> usize {
        self.queue.len() + usize::from(self.in_flight.is_some())
    }

    fn queue_capacity(&self) -> usize {
        self.cfg.queue_capacity + usize::from(self.cfg.own_slot)
    }

    fn can_send(&self, upward: bool) -> bool {
        self.has_room(upward)
    }

    fn send(
        &mut self,
        now: Instant,
        _ctx: &mut dyn LinkCtx,
        sink: NodeId,
        dst: NodeId,
        protocol: u8,
        payload: &[u8],
    ) -> Result<(), SendError> {
        if collection::HEADER_LEN + payload.len() > self.cfg.max_frame_payload {
            return Err(SendError::TooLong);
        }
        let direction = if dst == sink { Direction::Up } else { Direction::Down };
        let repr = Repr {
            direction,
            protocol,
            origin: self.me,
            dst,
            sink,
            prev_hop: self.me,
            ttl: self.cfg.ttl,
            seqno: self.next_seqno,
            hops: 0,
        };
        if dst == self.me {
            self.deliver(&repr, payload);
            self.events.push_back(AgentEvent::OwnSent {
                protocol,
                sink,
                upward: direction == Direction::Up,
                acked: true,
            });
            return Ok(());
        }
        if !self.has_room(direction == Direction::Up) {
            self.stats.queue_drops += 1;
            return Err(SendError::QueueFull);
        }
        let mut bytes = vec![0u8; collection::HEADER_LEN + payload.len()];
        let mut packet = Packet::new_unchecked(&mut bytes[..]);
        repr.emit(&mut packet);
        packet.payload_mut().copy_from_slice(payload);
        self.next_seqno = self.next_seqno.wrapping_add(1);
        // Our own packets enter the duplicate window too, so a looped copy is recognised.
        self.is_new(self.me, repr.seqno, now);
        let accepted = self.enqueue(bytes, true, direction == Direction::Up);
        debug_assert!(accepted, "capacity was checked above");
        self.stats.originated += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    use crate::test_ctx::TestCtx as Ctx;

    fn ctx(me: u16, parent: u16) -> Ctx {
        Ctx::new(me, Some(parent))
    }

    /// The MAC's report of a first-attempt, acknowledged frame to `dst`.
    fn acked(dst: NodeId) -> SendDone {
        SendDone { frame_id: 1, dst, acked: true, transmissions: 1, time_to_ack: None, channel_access_failure: false }
    }

    fn rx(from: u16, to: u16) -> RxInfo {
        RxInfo { link_src: NodeId(from), link_dst: NodeId(to), rssi_dbm: -70, lqi: 105 }
    }

    fn up_packet(origin: u16, seqno: u16, body: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; collection::HEADER_LEN + body.len()];
        let mut p = Packet::new_unchecked(&mut b[..]);
        Repr {
            direction: Direction::Up,
            protocol: 1,
            origin: NodeId(origin),
            dst: NodeId(0),
            sink: NodeId(0),
            prev_hop: NodeId(origin),
            ttl: 20,
            seqno,
            hops: 0,
        }
        .emit(&mut p);
        p.payload_mut().copy_from_slice(body);
        b
    }

    #[test]
    fn forwards_up_with_prev_hop_and_ttl_rewritten() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 1, b"x"));
        assert!(f.wants_to_send());
        assert_eq!(c.learned, vec![(NodeId(9), NodeId(9))]);
        let frame = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!(frame.dst, NodeId(2));
        assert!(frame.ack_request);
        let r = Repr::parse(&Packet::new_unchecked(&frame.payload[..])).unwrap();
        assert_eq!((r.prev_hop, r.ttl, r.hops), (NodeId(5), 19, 1));
        assert!(!f.wants_to_send(), "one frame at a time to the MAC");
    }

    /// The origin sends the full TTL and each forwarder spends one, as Tenet does; a packet that
    /// arrives with TTL 0 at a node that must forward it is dropped, so a path may have TTL + 1
    /// hops. [CODE tenet1: RoutingLayerM.nc]
    #[test]
    fn ttl_is_spent_by_forwarders_only() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"own").unwrap();
        let frame = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        let r = Repr::parse(&Packet::new_unchecked(&frame.payload[..])).unwrap();
        assert_eq!((r.ttl, r.hops), (collection::DEFAULT_TTL, 1));
        let mut last = up_packet(9, 1, b"x");
        Packet::new_unchecked(&mut last[..]).set_ttl(0);
        let mut g = CollectionForwarder::new(NodeId(6), ForwarderConfig::default());
        let mut c = ctx(6, 2);
        g.handle_frame(Instant::ZERO, &mut c, &rx(9, 6), &last);
        assert!(!g.wants_to_send());
        assert!(matches!(g.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::TtlExpired, .. })));
    }

    /// `hop_dedup`: a forwarder drops a second copy of a packet it already accepted; without it
    /// (Tenet's behaviour) the copy travels on, and only the destination drops it.
    #[test]
    fn hop_dedup_off_forwards_copies_and_the_destination_drops_them() {
        for (dedup, queued) in [(true, 1), (false, 2)] {
            let mut f =
                CollectionForwarder::new(NodeId(5), ForwarderConfig { hop_dedup: dedup, ..ForwarderConfig::default() });
            let mut c = ctx(5, 2);
            let pkt = up_packet(9, 7, b"data");
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &pkt);
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &pkt); // the sender lost the ACK
            assert_eq!(f.queue_len(), queued, "hop_dedup {dedup}");
        }
        let mut sink =
            CollectionForwarder::new(NodeId(0), ForwarderConfig { hop_dedup: false, ..ForwarderConfig::default() });
        let mut c = ctx(0, 0);
        let pkt = up_packet(9, 7, b"data");
        sink.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt);
        sink.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt);
        assert!(matches!(sink.poll_event(), Some(AgentEvent::Delivered { .. })));
        assert!(matches!(sink.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::Duplicate, .. })));
    }

    /// A TTL above the initial value is a "TTL error" [CODE tenet1: RoutingLayerM.nc].
    #[test]
    fn ttl_above_the_initial_value_is_dropped() {
        let mut pkt = up_packet(9, 7, b"data");
        Packet::new_unchecked(&mut pkt[..]).set_ttl(ForwarderConfig::default().ttl + 1);
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &pkt);
        assert!(!f.wants_to_send());
        assert!(matches!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::TtlExpired, .. })));
        // Every drop reason is counted in the forwarder's own statistics too.
        assert_eq!(f.stats().ttl_or_loop, 1);
    }

    #[test]
    fn sink_delivers_exactly_once() {
        let mut f = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = ctx(0, 0);
        let pkt = up_packet(9, 7, b"data");
        f.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt);
        f.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt); // retransmission after a lost ACK
        assert!(matches!(f.poll_event(), Some(AgentEvent::Delivered { origin: NodeId(9), .. })));
        assert!(matches!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::Duplicate, .. })));
        assert_eq!(f.poll_event(), None);
    }

    #[test]
    fn full_queue_drops_and_counts() {
        let cfg = ForwarderConfig { queue_capacity: 2, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        for s in 0..3 {
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, s, b""));
        }
        assert_eq!(f.queue_len(), 2);
        assert_eq!(f.stats().queue_drops, 1);
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y"), Err(SendError::QueueFull));
    }

    #[test]
    fn mac_failure_drops_the_packet_and_frees_the_slot() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y").unwrap();
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        let done = SendDone {
            frame_id: 1,
            dst: fr.dst,
            acked: false,
            transmissions: 5,
            time_to_ack: None,
            channel_access_failure: false,
        };
        f.handle_send_done(Instant::ZERO, &mut c, &done);
        assert_eq!(f.queue_len(), 0);
        assert!(matches!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::RetriesExhausted, .. })));
        // The end of an own packet is reported, acknowledged or not.
        assert_eq!(
            f.poll_event(),
            Some(AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: false })
        );
        assert_eq!(f.poll_event(), None);
    }

    /// [CODE tenet1 RoutingLayerM.nc] with `own_slot`, forwarded traffic fills `queue_capacity`
    /// slots and the node's own upward packet still gets in, one at a time.
    #[test]
    fn own_slot_is_reserved_for_one_own_upward_packet() {
        let cfg = ForwarderConfig { queue_capacity: 2, own_slot: true, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        for s in 0..3 {
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, s, b""));
        }
        assert_eq!((f.queue_len(), f.stats().queue_drops), (2, 1));
        assert!(matches!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::QueueFull, .. })));
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"a").unwrap();
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b"), Err(SendError::QueueFull), "mybusy");
        // A packet down the tree is not the reserved kind.
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(7), 1, b"c"), Err(SendError::QueueFull));
        assert_eq!((f.queue_len(), f.queue_capacity()), (3, 3));
        // The slot frees when the own packet is done, not before.
        let mut events = Vec::new();
        for _ in 0..3 {
            let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
            assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b"), Err(SendError::QueueFull));
            f.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
            events.extend(core::iter::from_fn(|| f.poll_event()));
        }
        assert_eq!(events, vec![AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: true }]);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b").unwrap();
        // Without the option, one bound for all.
        let mut g =
            CollectionForwarder::new(NodeId(5), ForwarderConfig { queue_capacity: 2, ..ForwarderConfig::default() });
        for s in 0..2 {
            g.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, s, b""));
        }
        assert_eq!(g.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"a"), Err(SendError::QueueFull));
    }

    #[test]
    fn a_packet_dropped_for_a_full_queue_is_not_remembered() {
        // Its copy (the sender's retransmission after a lost ACK) is forwarded once there is
        // room, not discarded as a duplicate [spec §6.1].
        let cfg = ForwarderConfig { queue_capacity: 1, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 0, b""));
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 1, b""));
        assert_eq!((f.queue_len(), f.stats().queue_drops, f.stats().duplicates), (1, 1, 0));
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        f.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 1, b""));
        assert_eq!((f.queue_len(), f.stats().queue_drops, f.stats().duplicates), (1, 1, 0));
        // Another copy of an accepted packet is still a duplicate (given room to be tested).
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        f.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 1, b""));
        assert_eq!((f.queue_len(), f.stats().duplicates), (0, 1));
    }

    /// A node without a parent sends its upward packet to the broadcast address, without an
    /// ACK request (nobody would acknowledge it); the MAC's report of that frame is a drop for
    /// want of a route, not a MAC drop, and the own packet ends unacknowledged.
    #[test]
    fn a_frame_sent_without_a_route_is_a_no_route_drop() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = Ctx::new(5, None);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y").unwrap();
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!((fr.dst, fr.ack_request), (NodeId::BROADCAST, false));
        let done = SendDone { acked: false, ..acked(fr.dst) };
        f.handle_send_done(Instant::ZERO, &mut c, &done);
        assert_eq!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::NoRoute, origin: Some(NodeId(5)) }));
        assert_eq!(
            f.poll_event(),
            Some(AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: false })
        );
        assert_eq!((f.stats().no_route, f.stats().mac_drops, f.queue_len()), (1, 0, 0));
    }

    /// A frame the MAC could not put on the air (CSMA-CA gave up on a busy channel) is a
    /// channel-access drop, whatever else the report says; not a MAC-retry drop.
    #[test]
    fn channel_access_failure_is_its_own_drop() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 3, b"x"));
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        let done = SendDone { acked: false, transmissions: 0, channel_access_failure: true, ..acked(fr.dst) };
        f.handle_send_done(Instant::ZERO, &mut c, &done);
        assert_eq!(
            f.poll_event(),
            Some(AgentEvent::Dropped { reason: DropReason::ChannelAccess, origin: Some(NodeId(9)) })
        );
        assert_eq!(f.poll_event(), None, "a forwarded packet has no OwnSent");
        assert_eq!((f.stats().channel_access, f.stats().mac_drops, f.queue_len()), (1, 0, 0));
    }

    /// An upward packet of this node's own that comes back to it has gone round a loop: it is
    /// dropped as such (not forwarded a second time, not delivered), and so is a packet whose
    /// reverse-path entry the routing refuses (its origin is this node's parent).
    #[test]
    fn own_packet_coming_back_is_a_loop_drop() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(5, 0, b"x"));
        assert_eq!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::Loop, origin: Some(NodeId(5)) }));
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(2, 0, b"x"));
        assert_eq!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::Loop, origin: Some(NodeId(2)) }));
        assert_eq!(f.poll_event(), None);
        let s = f.stats();
        assert_eq!((s.ttl_or_loop, s.forwarded, s.delivered, f.queue_len()), (2, 0, 0, 0));
    }

    /// The learning rule holds where an upward packet is delivered too, not only where it is
    /// forwarded: "at every forwarder, including the sink's base mote", an UP packet whose origin
    /// is this node's parent is dropped, as it can only have come round a loop [spec
    /// radio-mac-routing §6.3]. Here the receiver is the packet's sink and its routing refuses
    /// the entry (the test context's parent, 2, is the origin): a loop drop, not a delivery.
    #[test]
    fn a_packet_the_routing_refuses_is_a_loop_drop_at_delivery_too() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = ctx(0, 2);
        sink.handle_frame(Instant::ZERO, &mut c, &rx(9, 0), &up_packet(2, 0, b"x"));
        assert_eq!(c.learned, [(NodeId(2), NodeId(9))]);
        assert_eq!(sink.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::Loop, origin: Some(NodeId(2)) }));
        assert_eq!(sink.poll_event(), None);
        let s = sink.stats();
        assert_eq!((s.ttl_or_loop, s.delivered, s.forwarded), (1, 0, 0));
        // Another origin from the same neighbour is learned and delivered.
        sink.handle_frame(Instant::ZERO, &mut c, &rx(9, 0), &up_packet(4, 0, b"y"));
        assert!(matches!(sink.poll_event(), Some(AgentEvent::Delivered { origin: NodeId(4), .. })));
        assert_eq!(sink.stats().delivered, 1);
    }

    /// A packet down the tree goes to the next hop of the learned reverse path, or, with none
    /// known, straight to its destination (Tenet's "try once"); it reaches its destination,
    /// which delivers it, and a node on the way forwards it without learning a reverse path.
    #[test]
    fn downward_packets_follow_the_reverse_path_or_try_once() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = Ctx::new(0, None);
        c.down = Some(NodeId(3));
        sink.send(Instant::ZERO, &mut c, NodeId(0), NodeId(9), 2, b"fb").unwrap();
        let fr = sink.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!((fr.dst, fr.ack_request), (NodeId(3), true));
        sink.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
        c.down = None;
        sink.send(Instant::ZERO, &mut c, NodeId(0), NodeId(9), 2, b"fb").unwrap();
        let direct = sink.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!(direct.dst, NodeId(9), "no reverse path: straight to the destination");
        // Node 3 forwards the first one on (its own reverse path: none, so to 9 directly).
        let mut mid = CollectionForwarder::new(NodeId(3), ForwarderConfig::default());
        let mut c3 = ctx(3, 0);
        mid.handle_frame(Instant::ZERO, &mut c3, &rx(0, 3), &fr.payload);
        assert!(c3.learned.is_empty(), "no reverse-path learning from a downward packet");
        let on = mid.poll_frame(Instant::ZERO, &mut c3).unwrap();
        assert_eq!(on.dst, NodeId(9));
        let r = Repr::parse(&Packet::new_unchecked(&on.payload[..])).unwrap();
        assert_eq!(
            (r.direction, r.origin, r.dst, r.prev_hop, r.hops),
            (Direction::Down, NodeId(0), NodeId(9), NodeId(3), 2)
        );
        let mut dst = CollectionForwarder::new(NodeId(9), ForwarderConfig::default());
        let mut c9 = ctx(9, 3);
        dst.handle_frame(Instant::ZERO, &mut c9, &rx(3, 9), &on.payload);
        assert_eq!(
            dst.poll_event(),
            Some(AgentEvent::Delivered { origin: NodeId(0), protocol: 2, hops: 2, payload: b"fb".to_vec() })
        );
        assert!(!dst.wants_to_send());
        // Nor does the destination: only UP packets teach the children table [spec
        // radio-mac-routing §6.3, Learning].
        assert!(c9.learned.is_empty(), "reverse-path learning from a downward packet at its destination");
    }

    #[test]
    fn too_long_payload_is_refused() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, &[0; 80]), Err(SendError::TooLong));
    }

    #[test]
    fn sequence_window_accepts_each_seqno_once() {
        let t = Instant::ZERO;
        let mut w = SeqWindow::new(10, t);
        assert!(w.accept(12, t));
        assert!(w.accept(11, t));
        assert!(!w.accept(11, t));
        assert!(!w.accept(12, t));
        assert!(w.accept(12 + 128, t));
        assert!(!w.accept(12, t)); // 128 behind: still inside the window, seen
        assert!(w.accept(12 + 128 - 84, t), "84 behind and never seen: a packet that took a slower path");
        assert!(!w.accept(12 + 128 - 84, t));
        assert!(!w.accept(11, t), "129 behind a window in use: too old to tell");
        assert!(w.accept(u16::MAX.wrapping_add(80), t)); // wrap-around
    }

    /// A number more than the window behind is dropped while the window is in use (a late
    /// copy), but restarts a window that accepted nothing for a minute: the origin's numbers may
    /// have wrapped meanwhile (here 40,000 of them went by unseen).
    #[test]
    fn stale_sequence_window_starts_afresh() {
        let t0 = Instant::from_secs(100);
        let mut w = SeqWindow::new(100, t0);
        let far = 100u16.wrapping_add(40_000); // looks 25,536 behind
        assert!(!w.accept(far, t0 + Duration::from_secs(59)), "the window is still in use");
        assert!(w.accept(101, t0 + Duration::from_secs(59)));
        let later = t0 + Duration::from_secs(59 + 60);
        assert!(w.accept(far, later), "a minute without an accepted number: stale");
        assert!(!w.accept(far, later), "a copy of the new window's number is still a duplicate");
        assert!(w.accept(far.wrapping_add(1), later));
        assert!(!w.accept(far.wrapping_sub(200), later), "200 behind the new window, in use: dropped");
    }

    /// The window across the wrap of the 16-bit numbers: 3 is 9 ahead of 65530, 65534 is 5
    /// behind 3 and unseen, each accepted once; 65530 stays seen.
    #[test]
    fn sequence_window_wraps_around() {
        let t = Instant::ZERO;
        let mut w = SeqWindow::new(65530, t);
        assert!(w.accept(3, t), "9 ahead across the wrap");
        assert!(w.accept(65534, t), "5 behind, unseen");
        assert!(!w.accept(65534, t));
        assert!(!w.accept(65530, t), "the old highest, 9 behind, was seen");
        assert!(!w.accept(3, t));
        assert!(w.accept(0, t) && w.accept(65535, t) && !w.accept(0, t));
    }

    /// A number exactly the window's width behind the newest and never seen is still inside
    /// the window, so it is accepted (once); one more behind is too old to tell.
    #[test]
    fn sequence_window_holds_exactly_its_width() {
        let t = Instant::ZERO;
        let mut w = SeqWindow::new(0, t);
        assert!(w.accept(2, t) && w.accept(129, t));
        assert!(w.accept(129 - DEDUP_WINDOW, t), "128 behind, unseen: inside the window");
        assert!(!w.accept(129 - DEDUP_WINDOW, t));
        assert!(!w.accept(0, t), "129 behind: outside");
    }

    /// Staleness counts from the window's last accepted number, not from its creation.
    #[test]
    fn stale_counts_from_the_last_accepted_number() {
        let t0 = Instant::from_secs(10);
        let mut w = SeqWindow::new(1000, t0);
        assert!(w.accept(1001, t0 + Duration::from_secs(50)));
        let far = 1001u16.wrapping_sub(500);
        assert!(!w.accept(far, t0 + Duration::from_secs(70)), "20 s after the last accept: in use");
        assert!(w.accept(far, t0 + Duration::from_secs(110)), "60 s after it: stale");
    }

    /// The transmit queue is FIFO: packets leave in the order they were accepted, own and
    /// forwarded alike; the largest length is remembered after the queue drains.
    #[test]
    fn queue_is_fifo_and_remembers_its_largest_length() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, 1, b"a"));
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b").unwrap();
        f.handle_frame(Instant::ZERO, &mut c, &rx(8, 5), &up_packet(8, 1, b"c"));
        let mut bodies = Vec::new();
        while let Some(fr) = f.poll_frame(Instant::ZERO, &mut c) {
            bodies.push(fr.payload[collection::HEADER_LEN..].to_vec());
            f.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
        }
        assert_eq!(bodies, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert_eq!((f.queue_len(), f.stats().max_queue), (0, 3));
    }

    /// Only one frame is with the MAC at a time: asking again before its send-done gives
    /// nothing, and the queued packets stay queued.
    #[test]
    fn no_second_frame_while_one_is_in_flight() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"a").unwrap();
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b").unwrap();
        let first = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert!(f.poll_frame(Instant::ZERO, &mut c).is_none());
        assert_eq!(f.queue_len(), 2);
        f.handle_send_done(Instant::ZERO, &mut c, &acked(first.dst));
        let second = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!(&second.payload[collection::HEADER_LEN..], b"b");
    }

    /// Each own packet gets the next sequence number, so the sink delivers both of two
    /// identical ones (not the second as a duplicate).
    #[test]
    fn own_packets_are_numbered_in_turn() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 0);
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c0 = Ctx::new(0, None);
        for want in 0..2u16 {
            f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"same").unwrap();
            let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
            f.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
            assert_eq!(Packet::new_unchecked(&fr.payload[..]).seqno(), want);
            sink.handle_frame(Instant::ZERO, &mut c0, &rx(5, 0), &fr.payload);
        }
        assert_eq!((sink.stats().delivered, sink.stats().duplicates), (2, 0));
    }

    /// A node's own downward packet that comes back to it (a loop in the reverse path) is
    /// recognised by its own duplicate window and not sent out again.
    #[test]
    fn own_downward_packet_coming_back_is_a_duplicate() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = Ctx::new(0, None);
        c.down = Some(NodeId(3));
        sink.send(Instant::ZERO, &mut c, NodeId(0), NodeId(9), 2, b"fb").unwrap();
        let fr = sink.poll_frame(Instant::ZERO, &mut c).unwrap();
        sink.handle_send_done(Instant::ZERO, &mut c, &acked(fr.dst));
        assert!(matches!(sink.poll_event(), Some(AgentEvent::OwnSent { upward: false, acked: true, .. })));
        sink.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &fr.payload);
        assert_eq!(
            sink.poll_event(),
            Some(AgentEvent::Dropped { reason: DropReason::Duplicate, origin: Some(NodeId(0)) })
        );
        assert!(!sink.wants_to_send());
        assert_eq!((sink.stats().duplicates, sink.stats().forwarded), (1, 0));
    }

    /// With `own_slot`, the own packet in its reserved slot leaves every one of the
    /// `queue_capacity` slots to forwarded packets.
    #[test]
    fn own_slot_packet_takes_no_forwarding_slot() {
        let cfg = ForwarderConfig { queue_capacity: 2, own_slot: true, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"own").unwrap();
        for s in 0..3 {
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &up_packet(9, s, b""));
        }
        assert_eq!((f.queue_len(), f.stats().forwarded, f.stats().queue_drops), (3, 2, 1));
    }

    /// Without link-layer ACKs a frame is never acknowledged, and that is no drop: it asks for
    /// no ACK, and its own packet ends as sent.
    #[test]
    fn without_link_acks_an_unacked_frame_is_not_a_drop() {
        let cfg = ForwarderConfig { link_ack: false, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y").unwrap();
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!((fr.dst, fr.ack_request), (NodeId(2), false));
        f.handle_send_done(Instant::ZERO, &mut c, &SendDone { acked: false, ..acked(fr.dst) });
        assert_eq!(
            f.poll_event(),
            Some(AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: true })
        );
        assert_eq!(f.poll_event(), None);
        assert_eq!(f.stats().mac_drops, 0);
    }

    /// A payload that fills the frame to exactly `max_frame_payload` bytes is accepted.
    #[test]
    fn a_payload_that_exactly_fills_the_frame_is_accepted() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        let most = ForwarderConfig::default().max_frame_payload - collection::HEADER_LEN;
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, &vec![7; most + 1]), Err(SendError::TooLong));
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, &vec![7; most]).unwrap();
        assert_eq!(f.poll_frame(Instant::ZERO, &mut c).unwrap().payload.len(), 86);
    }

    /// A packet addressed to this node itself is delivered at once and its end reported as
    /// acknowledged, without touching the queue.
    #[test]
    fn a_packet_to_oneself_is_delivered_locally() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = Ctx::new(0, None);
        sink.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 3, b"me").unwrap();
        assert_eq!(
            sink.poll_event(),
            Some(AgentEvent::Delivered { origin: NodeId(0), protocol: 3, hops: 0, payload: b"me".to_vec() })
        );
        assert_eq!(
            sink.poll_event(),
            Some(AgentEvent::OwnSent { protocol: 3, sink: NodeId(0), upward: true, acked: true })
        );
        assert_eq!((sink.queue_len(), sink.stats().originated), (0, 0));
    }

    /// An own packet the MAC could not put on the air ends unacknowledged, like one whose
    /// retries ran out.
    #[test]
    fn own_packet_after_a_channel_access_failure_ends_unacked() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y").unwrap();
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        let done = SendDone { acked: false, transmissions: 0, channel_access_failure: true, ..acked(fr.dst) };
        f.handle_send_done(Instant::ZERO, &mut c, &done);
        assert!(matches!(f.poll_event(), Some(AgentEvent::Dropped { reason: DropReason::ChannelAccess, .. })));
        assert_eq!(
            f.poll_event(),
            Some(AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: false })
        );
    }

    /// The sink delivers an upward packet of its tree once, whatever node its header names as
    /// the destination: its duplicate check covers every upward packet it delivers.
    #[test]
    fn sink_dedups_upward_packets_whatever_their_destination() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = Ctx::new(0, None);
        let mut pkt = up_packet(9, 4, b"z");
        Packet::new_unchecked(&mut pkt[..]).set_dst(NodeId(7));
        sink.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt);
        sink.handle_frame(Instant::ZERO, &mut c, &rx(3, 0), &pkt);
        assert!(matches!(sink.poll_event(), Some(AgentEvent::Delivered { origin: NodeId(9), .. })));
        assert_eq!(
            sink.poll_event(),
            Some(AgentEvent::Dropped { reason: DropReason::Duplicate, origin: Some(NodeId(9)) })
        );
        assert_eq!(sink.stats().delivered, 1);
    }

    /// A frame's outcome: (forwarded, delivered, counted drops) after it was handled.
    fn outcome(f: &CollectionForwarder) -> (u64, u64, u64) {
        let s = f.stats();
        (s.forwarded, s.delivered, s.queue_drops + s.duplicates + s.malformed + s.ttl_or_loop)
    }

    fn arb_frame() -> impl Strategy<Value = (Vec<u8>, u16)> {
        // Addresses from a small set around node 5 (parent 2, sink 0), so that frames are for
        // this node, its own, from its parent, or for others; now and then one byte mutated.
        let addr = prop_oneof![Just(0u16), Just(2), Just(5), Just(7), Just(9)];
        (
            any::<bool>(),
            addr.clone(),
            addr.clone(),
            addr.clone(),
            0u8..=22,
            0u16..6,
            prop::option::weighted(0.2, (0usize..collection::HEADER_LEN, any::<u8>())),
        )
            .prop_map(|(up, origin, dst, link_dst, ttl, seqno, mutation)| {
                let mut b = vec![0u8; collection::HEADER_LEN + 3];
                Repr {
                    direction: if up { Direction::Up } else { Direction::Down },
                    protocol: 1,
                    origin: NodeId(origin),
                    dst: NodeId(dst),
                    sink: NodeId(0),
                    prev_hop: NodeId(9),
                    ttl,
                    seqno,
                    hops: 1,
                }
                .emit(&mut Packet::new_unchecked(&mut b[..]));
                if let Some((i, v)) = mutation {
                    b[i] = v;
                }
                (b, link_dst)
            })
    }

    proptest! {
        /// Arbitrary bytes never panic; one frame queues at most one packet.
        #[test]
        fn arbitrary_frames_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
            let mut c = ctx(5, 2);
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &bytes);
            let _ = f.poll_frame(Instant::ZERO, &mut c);
            while f.poll_event().is_some() {}
            prop_assert!(f.queue_len() <= 1);
        }

        /// Every frame addressed to this node (or that does not parse) has exactly one outcome:
        /// forwarded (queued), delivered, or counted as one drop; a frame for another node has
        /// none. Headers are well formed but for a few mutated bytes, so every branch is reached
        /// (a full queue of 2, duplicates of 6 numbers, TTLs 0 to 22, own packets coming back).
        #[test]
        fn every_frame_for_this_node_has_one_outcome(frames in proptest::collection::vec(arb_frame(), 1..40)) {
            let cfg = ForwarderConfig { queue_capacity: 2, ..ForwarderConfig::default() };
            let mut f = CollectionForwarder::new(NodeId(5), cfg);
            let mut c = ctx(5, 2);
            for (bytes, link_dst) in frames {
                let before = outcome(&f);
                let queued = f.queue_len();
                f.handle_frame(Instant::ZERO, &mut c, &rx(9, link_dst), &bytes);
                while f.poll_event().is_some() {}
                let after = outcome(&f);
                let changes = (after.0 - before.0) + (after.1 - before.1) + (after.2 - before.2);
                let parses = Repr::parse(&Packet::new_unchecked(&bytes[..])).is_ok();
                if link_dst == 5 || !parses {
                    prop_assert_eq!(changes, 1, "{:?} -> {:?}", before, after);
                } else {
                    prop_assert_eq!(changes, 0);
                }
                prop_assert_eq!(f.queue_len(), queued + (after.0 - before.0) as usize);
                prop_assert!(f.queue_len() <= 2);
            }
        }
    }
}

/// Tests added by a hand mutation audit of this module (fwd34): each one kills a mutant of the
/// code above that the tests in `tests` let live.
#[cfg(test)]
mod audit34 {
    use super::*;
    use alloc::vec::Vec;

    use crate::test_ctx::TestCtx as Ctx;

    fn ctx(me: u16, parent: u16) -> Ctx {
        Ctx::new(me, Some(parent))
    }

    fn rx(from: u16, to: u16) -> RxInfo {
        RxInfo { link_src: NodeId(from), link_dst: NodeId(to), rssi_dbm: -70, lqi: 105 }
    }

    fn acked(dst: NodeId) -> SendDone {
        SendDone { frame_id: 1, dst, acked: true, transmissions: 1, time_to_ack: None, channel_access_failure: false }
    }

    /// A packet with the given header fields (protocol 1, previous hop = origin, hops 0) and a
    /// one-byte body.
    fn packet(direction: Direction, origin: u16, dst: u16, sink: u16, ttl: u8, seqno: u16) -> Vec<u8> {
        let mut b = vec![0u8; collection::HEADER_LEN + 1];
        let mut p = Packet::new_unchecked(&mut b[..]);
        Repr {
            direction,
            protocol: 1,
            origin: NodeId(origin),
            dst: NodeId(dst),
            sink: NodeId(sink),
            prev_hop: NodeId(origin),
            ttl,
            seqno,
            hops: 0,
        }
        .emit(&mut p);
        b
    }

    fn events(f: &mut CollectionForwarder) -> Vec<AgentEvent> {
        core::iter::from_fn(|| f.poll_event()).collect()
    }
    /// A jump of 127 numbers (the largest shift that keeps bits) still remembers the old
    /// highest, now 127 behind and inside the window, and the unseen numbers between.
    #[test]
    fn a_jump_of_127_keeps_the_old_highest_as_seen() {
        let t = Instant::ZERO;
        let mut w = SeqWindow::new(0, t);
        assert!(w.accept(127, t));
        assert!(!w.accept(0, t), "the old highest, 127 behind, was seen");
        assert!(w.accept(1, t), "126 behind, never seen");
        assert!(!w.accept(1, t));
    }

    /// A jump wider than the window forgets every number seen before it: the numbers just
    /// behind the new highest were never seen and are accepted, whatever bits the old window
    /// held.
    #[test]
    fn a_jump_beyond_the_window_forgets_the_old_numbers() {
        let t = Instant::ZERO;
        let mut w = SeqWindow::new(0, t);
        assert!(w.accept(1, t) && w.accept(2, t) && w.accept(3, t));
        assert!(w.accept(1000, t), "997 ahead");
        for back in 1..=3u16 {
            assert!(w.accept(1000 - back, t), "{back} behind the new highest, never seen");
        }
    }
    /// Every drop after the MAC's last retry is counted in `mac_drops`.
    #[test]
    fn a_mac_drop_is_counted() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &packet(Direction::Up, 9, 0, 0, 20, 1));
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        f.handle_send_done(Instant::ZERO, &mut c, &SendDone { acked: false, transmissions: 5, ..acked(fr.dst) });
        assert_eq!(
            events(&mut f),
            [AgentEvent::Dropped { reason: DropReason::RetriesExhausted, origin: Some(NodeId(9)) }]
        );
        assert_eq!((f.stats().mac_drops, f.stats().channel_access, f.stats().no_route), (1, 0, 0));
    }

    /// `max_queue` is the largest queue length seen, the frame with the MAC included (as
    /// `queue_len` counts it), and a shorter queue later does not lower it.
    #[test]
    fn max_queue_counts_the_frame_in_flight_and_never_falls() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"a").unwrap();
        let first = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b").unwrap();
        assert_eq!((f.queue_len(), f.stats().max_queue), (2, 2), "one with the MAC, one queued");
        f.handle_send_done(Instant::ZERO, &mut c, &acked(first.dst));
        let second = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        f.handle_send_done(Instant::ZERO, &mut c, &acked(second.dst));
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"c").unwrap();
        assert_eq!((f.queue_len(), f.stats().max_queue), (1, 2));
    }

    /// A node that gets its own upward packet back tells the routing of that packet's tree, so
    /// that it can delete the child entry for its parent [spec radio-mac-routing §6.3, Loop
    /// handling]; another origin's packet does not.
    #[test]
    fn own_upward_packet_coming_back_is_reported_to_the_routing() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &packet(Direction::Up, 9, 3, 3, 20, 0));
        assert!(c.returned.is_empty());
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &packet(Direction::Up, 5, 3, 3, 20, 0));
        assert_eq!(c.returned, [NodeId(3)]);
    }

    /// A node forwards a downward packet that is not addressed to it even when it is the sink
    /// of the packet's tree: only an upward packet is the sink's to deliver, so the first copy
    /// goes on (to its destination, no reverse path being known), not dropped as a duplicate.
    #[test]
    fn the_sink_forwards_a_downward_packet_for_another_node() {
        let mut sink = CollectionForwarder::new(NodeId(0), ForwarderConfig::default());
        let mut c = Ctx::new(0, None);
        sink.handle_frame(Instant::ZERO, &mut c, &rx(4, 0), &packet(Direction::Down, 4, 9, 0, 20, 6));
        assert_eq!(events(&mut sink), []);
        assert_eq!((sink.stats().forwarded, sink.stats().duplicates), (1, 0));
        assert_eq!(sink.poll_frame(Instant::ZERO, &mut c).unwrap().dst, NodeId(9));
    }

    /// A packet that arrives with TTL 1 still has a hop left: it is forwarded with TTL 0, and
    /// the next forwarder drops it [spec radio-mac-routing §6.3: "dropped at 0"].
    #[test]
    fn a_packet_with_ttl_one_makes_one_more_hop() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = ctx(5, 2);
        f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &packet(Direction::Up, 9, 0, 0, 1, 1));
        assert_eq!(events(&mut f), []);
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!(Packet::new_unchecked(&fr.payload[..]).ttl(), 0);
        let mut g = CollectionForwarder::new(NodeId(2), ForwarderConfig::default());
        let mut c2 = ctx(2, 1);
        g.handle_frame(Instant::ZERO, &mut c2, &rx(5, 2), &fr.payload);
        assert_eq!(events(&mut g), [AgentEvent::Dropped { reason: DropReason::TtlExpired, origin: Some(NodeId(9)) }]);
        assert!(!g.wants_to_send());
    }

    /// A frame the MAC could not put on the air is a channel-access drop even when it was sent
    /// to the broadcast address for want of a route ("whatever else the report says").
    #[test]
    fn channel_access_failure_wins_over_a_missing_route() {
        let mut f = CollectionForwarder::new(NodeId(5), ForwarderConfig::default());
        let mut c = Ctx::new(5, None);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"y").unwrap();
        let fr = f.poll_frame(Instant::ZERO, &mut c).unwrap();
        assert_eq!(fr.dst, NodeId::BROADCAST);
        let done = SendDone { acked: false, transmissions: 0, channel_access_failure: true, ..acked(fr.dst) };
        f.handle_send_done(Instant::ZERO, &mut c, &done);
        assert_eq!(
            events(&mut f),
            [
                AgentEvent::Dropped { reason: DropReason::ChannelAccess, origin: Some(NodeId(5)) },
                AgentEvent::OwnSent { protocol: 1, sink: NodeId(0), upward: true, acked: false },
            ]
        );
        assert_eq!((f.stats().channel_access, f.stats().no_route), (1, 0));
    }

    /// `can_send` answers for the direction asked about: with `own_slot`, a queue full of
    /// forwarded packets still takes one own upward packet but no downward one, and once the
    /// own upward packet is in, no second.
    #[test]
    fn can_send_depends_on_the_direction() {
        let cfg = ForwarderConfig { queue_capacity: 2, own_slot: true, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        assert!(f.can_send(true) && f.can_send(false));
        for s in 0..2 {
            f.handle_frame(Instant::ZERO, &mut c, &rx(9, 5), &packet(Direction::Up, 9, 0, 0, 20, s));
        }
        assert!(f.can_send(true), "the reserved slot is free");
        assert!(!f.can_send(false), "no room for a downward packet");
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"own").unwrap();
        assert!(!f.can_send(true), "one own upward packet at a time");
    }
    /// An own packet the queue refuses is counted as a queue drop (IFRC reads the counter to
    /// update its queue average on an overflow), and not as originated.
    #[test]
    fn a_refused_own_packet_is_a_queue_drop() {
        let cfg = ForwarderConfig { queue_capacity: 1, ..ForwarderConfig::default() };
        let mut f = CollectionForwarder::new(NodeId(5), cfg);
        let mut c = ctx(5, 2);
        f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"a").unwrap();
        assert_eq!(f.send(Instant::ZERO, &mut c, NodeId(0), NodeId(0), 1, b"b"), Err(SendError::QueueFull));
        assert_eq!((f.stats().originated, f.stats().queue_drops), (1, 1));
    }
}
