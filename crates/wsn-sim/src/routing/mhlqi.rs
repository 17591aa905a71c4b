//! MultiHopLQI route selection for one tree (one sink) at one node (spec §6.1, §6.4).
//!
//! A node keeps one parent and the cost of the path through it: the cost the parent advertises
//! plus a link cost derived from the LQI of the parent's last beacon ([`adjust_lqi`]). It
//! switches to another neighbour only when that neighbour's path is more than 25 % cheaper, and
//! only on beacon reception. It drops its route when the parent stays silent for more than
//! eight beacon periods, and when the parent's beacon shows a two-node loop (or, under the
//! 1.x/Tenet rules, that the parent lost its own route). [`MhlqiNode::handle_loop`] drops it
//! when a packet comes back around a cycle, but the simulator's forwarder does not call it (a
//! documented choice: docs/simulator.md, routing).
//!
//! [`MhlqiNode`] is sans-IO. The engine calls:
//! 1. [`MhlqiNode::first_beacon_delay`] once at boot, then [`MhlqiNode::on_beacon_tick`] every
//!    [`MhlqiNode::beacon_period`] (fixed period, no jitter), broadcasting the returned beacon;
//! 2. [`MhlqiNode::handle_beacon`] for every beacon received, with the frame's LQI;
//! 3. [`MhlqiNode::handle_loop`] when the data path detects a cycle;
//! 4. [`MhlqiNode::parent`] whenever a data packet is (re)sent.
//!
//! Every call that may move the parent returns a [`RouteChange`], so the engine can update the
//! reverse-path table ([`super::reverse::ReverseTable::on_parent_change`]) and trace the event.

use rand::Rng;
use wsn_proto::time::Duration;
use wsn_wire::NodeId;

use crate::rng::SimRng;

/// Default beacon period in binary milliseconds (1/1024 s): 32·1024 + 1 ≈ 32.001 s.
/// [CODE t1: MultiHopLQI.nc; CODE t2: LqiRoutingEngineP.nc] (`1024 * BEACON_PERIOD + 1`).
pub const DEFAULT_BEACON_PERIOD_BINARY_MS: u64 = 32 * 1024 + 1;

/// Default route timeout: the route is dropped when more than this many beacon ticks pass
/// without an acceptable beacon from the parent. [CODE t1: MultiHopLQI.nc] (`BEACON_TIMEOUT`).
pub const DEFAULT_TIMEOUT_BEACONS: u8 = 8;

/// Default switch hysteresis in percent: switch iff new cost < C − ⌊C·25/100⌋ = C − ⌊C/4⌋.
/// [CODE t1: MultiHopLQI.nc] (the `>> 2` in the switch test).
pub const DEFAULT_HYSTERESIS_PERCENT: u8 = 25;

/// Parent cost and link estimate of a node without a route, each.
/// [CODE tenet1: mote/lib/router/MultiHopLQI/MultiHopLQI.nc `giveupCurrentParent`; t2:
/// LqiRoutingEngineP.nc resets the same costs inline].
pub const NO_ROUTE_HALF_COST: u16 = 0x7FFF;

/// Path cost of a node without a route (0x7FFF + 0x7FFF), which is also what it advertises.
/// Any advertised cost at or above this value means "no usable route".
/// [CODE t2: LqiRoutingEngineP.nc] (`gbCurrentCost = 0xfffe`); [AMBIG → chosen: a path cost
/// that reaches 0xFFFE is advertised as 0xFFFE (saturated, unusable) instead of wrapping as
/// the 16-bit mote arithmetic would].
pub const NO_ROUTE_COST: u16 = 0xFFFE;

/// Hop count of a node without a route. [CODE t2: LqiRoutingEngineP.nc] (`ROUTE_INVALID`).
pub const INVALID_HOP_COUNT: u8 = 0xFF;

/// Largest hop count a node with a route can hold; deeper trees saturate here so that a valid
/// hop count never reads as [`INVALID_HOP_COUNT`]. [AMBIG → chosen: saturate at 0xFE; the mote
/// code wraps the 8-bit counter].
pub const MAX_HOP_COUNT: u8 = 0xFE;

/// LQI values below this are treated as this value in [`adjust_lqi`]. \[DERIVED\] (§6.1: the
/// 16-bit product overflows below 50 on motes; simulate exactly with q clamped to ≥ 50).
pub const MIN_LQI: u8 = 50;

/// LQI values above this are treated as this value in [`adjust_lqi`]. [AMBIG → chosen: the
/// CC2420 LQI is a 7-bit value, so 127 is the largest a real frame can carry].
pub const MAX_LQI: u8 = 127;

/// Per-hop link cost assumed for a static route set with [`MhlqiNode::set_static`]: the cost
/// of an excellent link, `adjust_lqi(110)` = 125. \[REC\] (a static tree has no measured cost;
/// this keeps the advertised cost finite and growing with depth).
pub const STATIC_LINK_COST: u16 = 125;

/// Largest beacon period accepted, in binary ms (2³² ≈ 48.5 days); larger configured values
/// are clamped so that time arithmetic cannot overflow. \[REC\]
pub const MAX_BEACON_PERIOD_BINARY_MS: u64 = 1 << 32;

/// MultiHopLQI parameters (§6.4 lists which ones to expose).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MhlqiConfig {
    /// Beacon period [binary ms, 1/1024 s]. Default [`DEFAULT_BEACON_PERIOD_BINARY_MS`]
    /// (32 769 binary ms = 32.000 977 s). Clamped to 1..=[`MAX_BEACON_PERIOD_BINARY_MS`].
    /// [CODE t1: MultiHopLQI.nc]
    pub beacon_period_binary_ms: u64,
    /// Route timeout [beacon periods]: the route is dropped when the count of ticks since the
    /// last acceptable parent beacon exceeds this. Default 8. [CODE t1: MultiHopLQI.nc]
    pub timeout_beacons: u8,
    /// Switch hysteresis [%]: switch iff new cost < C − ⌊C·h/100⌋. Default 25; values above
    /// 100 act as 100 (never switch away from a route). A node without a route is not held by
    /// it: it takes an offer below the original code's fixed threshold for the no-route cost,
    /// 0xFFFE − (0xFFFE >> 2) (the same as h = 25). [CODE t1: MultiHopLQI.nc]
    pub hysteresis_percent: u8,
    /// Start with routes frozen (§6.4; see [`MhlqiNode::set_frozen`]). Default false. \[REC\]
    pub freeze: bool,
    /// Use the 1.x/Tenet variant of the parent-beacon rule: a parent beacon that names no
    /// parent (the broadcast address) also drops the route. When false, the 2.x rule applies:
    /// only a parent beacon naming this node as its parent drops the route, and any other
    /// parent beacon refreshes the cost. Unset: the MAC preset's era decides (spec §7.2: 1.x
    /// for `tinyos1_tenet` and `ifrc2006`, MultiHopLQI-2.x for the others), resolved by the
    /// runner; a node built from an unset value uses the 1.x rule.
    /// [CODE tenet1: MultiHopLQI.nc; CODE t2: LqiRoutingEngineP.nc]
    pub tenet_rules: Option<bool>,
}

impl Default for MhlqiConfig {
    fn default() -> Self {
        MhlqiConfig {
            beacon_period_binary_ms: DEFAULT_BEACON_PERIOD_BINARY_MS,
            timeout_beacons: DEFAULT_TIMEOUT_BEACONS,
            hysteresis_percent: DEFAULT_HYSTERESIS_PERCENT,
            freeze: false,
            tenet_rules: None,
        }
    }
}

/// The contents of a routing beacon (the engine converts to and from
/// `wsn_wire::mhlqi::BeaconRepr` bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beacon {
    /// The sink (tree root) this beacon is about.
    pub sink: NodeId,
    /// The sender of the beacon.
    pub source: NodeId,
    /// Per-sender beacon counter (wraps). [CODE t2: LqiRoutingEngineP.nc]
    pub seqno: u16,
    /// The sender's parent: broadcast when it has no route, the sink itself in the root's beacon.
    pub parent: NodeId,
    /// The sender's path cost: 0 at the root, [`NO_ROUTE_COST`] without a route.
    pub cost: u16,
    /// The sender's hop count: 0 at the root, [`INVALID_HOP_COUNT`] without a route.
    pub hop_count: u16,
}

impl Beacon {
    /// True when the beacon advertises a usable route: a real parent, a cost below
    /// [`NO_ROUTE_COST`] and a valid hop count. Only such beacons are ever adopted.
    pub fn advertises_route(&self) -> bool {
        !self.parent.is_broadcast() && self.cost < NO_ROUTE_COST && self.hop_count < u16::from(INVALID_HOP_COUNT)
    }
}

impl From<wsn_wire::mhlqi::BeaconRepr> for Beacon {
    fn from(b: wsn_wire::mhlqi::BeaconRepr) -> Beacon {
        let wsn_wire::mhlqi::BeaconRepr { sink, source, seqno, parent, cost, hop_count } = b;
        Beacon { sink, source, seqno, parent, cost, hop_count }
    }
}

impl From<Beacon> for wsn_wire::mhlqi::BeaconRepr {
    fn from(b: Beacon) -> wsn_wire::mhlqi::BeaconRepr {
        let Beacon { sink, source, seqno, parent, cost, hop_count } = b;
        wsn_wire::mhlqi::BeaconRepr { sink, source, seqno, parent, cost, hop_count }
    }
}

/// MultiHopLQI link cost of a beacon received with LQI `lqi`:
/// `r = 130 − q`, cost = ⌊⌊r²/8⌋·r/8⌋, with q clamped to [[`MIN_LQI`], [`MAX_LQI`]].
/// Examples: 110 → 125, 105 → 243, 90 → 1000, 80 → 1950, 50 → 8000.
/// [CODE t1: MultiHopLQI.nc] (`adjustLQI`), \[DERIVED\] (§6.1 table).
pub const fn adjust_lqi(lqi: u8) -> u16 {
    let q = if lqi < MIN_LQI {
        MIN_LQI
    } else if lqi > MAX_LQI {
        MAX_LQI
    } else {
        lqi
    };
    let r = 130 - q as u32; // 3..=80
    let cost = ((r * r) / 8) * r / 8; // ≤ 8000
    cost as u16
}

/// How a call changed the node's parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteChange {
    /// The parent is unchanged (its cost or hop count may have been refreshed).
    None,
    /// The node adopted `new`; `old` is the previous parent, `None` if it had no route.
    NewParent {
        /// The previous parent, if any.
        old: Option<NodeId>,
        /// The new parent.
        new: NodeId,
    },
    /// The node dropped its route; `old` was its parent.
    Lost {
        /// The parent that was dropped.
        old: NodeId,
    },
}

/// MultiHopLQI state of one node in the tree of one sink.
///
/// The root (`me == sink`) has cost 0 and hop count 0, ignores beacons and never changes
/// parent. Other nodes start without a route (cost [`NO_ROUTE_COST`], hop count invalid).
///
/// **Freezing** ([`MhlqiNode::set_frozen`], §6.4, Tenet's `ParentControl.hold`): no timeout,
/// no loss and no switch, but beacons continue and the parent's beacons still refresh the
/// cost. A frozen node that has never had a route may still acquire its first (so that
/// `mhlqi.freeze` from the start keeps the first parent each node hears); one that lost its
/// route before the freeze stays without one (spec §6.4: "the freeze disables parent
/// changes").
/// **Static** ([`MhlqiNode::set_static`]): the parent is fixed and nothing moves it, not even
/// an acquisition.
#[derive(Clone, Debug)]
pub struct MhlqiNode {
    me: NodeId,
    sink: NodeId,
    period_binary_ms: u64,
    timeout_beacons: u8,
    hysteresis_percent: u8,
    tenet_rules: bool,
    parent: Option<NodeId>,
    parent_cost: u16,
    link_est: u16,
    hop: u8,
    last_heard: u16,
    seqno: u16,
    frozen: bool,
    fixed: bool,
    parent_changes: u32,
}

impl MhlqiNode {
    /// A node `me` in the tree of `sink`; it is the root iff `me == sink`.
    pub fn new(me: NodeId, sink: NodeId, cfg: &MhlqiConfig) -> Self {
        let root = me == sink;
        MhlqiNode {
            me,
            sink,
            period_binary_ms: cfg.beacon_period_binary_ms.clamp(1, MAX_BEACON_PERIOD_BINARY_MS),
            timeout_beacons: cfg.timeout_beacons,
            hysteresis_percent: cfg.hysteresis_percent.min(100),
            tenet_rules: cfg.tenet_rules.unwrap_or(true),
            parent: None,
            parent_cost: if root { 0 } else { NO_ROUTE_HALF_COST },
            link_est: if root { 0 } else { NO_ROUTE_HALF_COST },
            hop: if root { 0 } else { INVALID_HOP_COUNT },
            last_heard: 0,
            seqno: 0,
            frozen: cfg.freeze,
            fixed: false,
            parent_changes: 0,
        }
    }

    /// Delay from boot to the first beacon: a whole number of binary ms drawn uniformly from
    /// [0, period − 1), i.e. [0, 32·1024) TMilli by default. [CODE t1: MultiHopLQI.nc]
    /// (`rand % (1024 * interval)`, while the period itself is `1024 * interval + 1`).
    pub fn first_beacon_delay(&self, rng: &mut SimRng) -> Duration {
        let window = self.period_binary_ms.saturating_sub(1).max(1);
        Duration::from_binary_millis(rng.gen_range(0..window))
    }

    /// The fixed interval between beacon ticks (no jitter). [CODE t1: MultiHopLQI.nc]
    pub fn beacon_period(&self) -> Duration {
        Duration::from_binary_millis(self.period_binary_ms)
    }

    /// Called at every beacon tick: ages the parent (timeout rule), returns the beacon to
    /// broadcast now (reflecting any loss just applied) and the route change the timeout
    /// caused. The root and frozen or static nodes do not age.
    /// [CODE t1: MultiHopLQI.nc] (`TimerTask` then `SendRouteTask`).
    pub fn on_beacon_tick(&mut self) -> (Beacon, RouteChange) {
        let mut change = RouteChange::None;
        if !self.is_root() && !self.frozen && !self.fixed {
            self.last_heard = self.last_heard.saturating_add(1);
            // In 16 bits, so that a timeout of 255 periods still expires.
            if self.last_heard > u16::from(self.timeout_beacons) {
                change = self.drop_route();
            }
        }
        let beacon = self.current_beacon();
        self.seqno = self.seqno.wrapping_add(1);
        (beacon, change)
    }

    /// The beacon this node would send now (does not advance the beacon seqno).
    pub fn current_beacon(&self) -> Beacon {
        if self.is_root() {
            // [CODE t2: LqiRoutingEngineP.nc] the root names itself as parent.
            return Beacon {
                sink: self.sink,
                source: self.me,
                seqno: self.seqno,
                parent: self.me,
                cost: 0,
                hop_count: 0,
            };
        }
        Beacon {
            sink: self.sink,
            source: self.me,
            seqno: self.seqno,
            parent: self.parent.unwrap_or(NodeId::BROADCAST),
            cost: self.cost(),
            hop_count: u16::from(self.hop),
        }
    }

    /// A beacon from `beacon.source` was received with link quality `lqi` (§6.1 rules 1–2).
    /// Beacons of another sink, from this node itself or from the broadcast address are
    /// ignored, as is everything at the root.
    pub fn handle_beacon(&mut self, beacon: &Beacon, lqi: u8) -> RouteChange {
        if self.is_root() || beacon.sink != self.sink || beacon.source == self.me || beacon.source.is_broadcast() {
            return RouteChange::None;
        }
        let link = adjust_lqi(lqi);
        if self.parent == Some(beacon.source) {
            // Rule 1: a beacon from the current parent.
            // Tenet drops the route only when the parent names no parent (the broadcast
            // address) [CODE tenet1: MultiHopLQI.nc]; a parent whose path cost saturated at
            // NO_ROUTE_COST still has a route, and the child keeps it at that cost, as 2.x does.
            let acceptable = beacon.parent != self.me && (!self.tenet_rules || !beacon.parent.is_broadcast());
            if acceptable {
                // 1a: refresh cost, link estimate and hop count.
                self.parent_cost = beacon.cost;
                self.link_est = link;
                self.hop = hop_after(beacon.hop_count);
                self.last_heard = 0;
                return RouteChange::None;
            }
            if self.frozen || self.fixed {
                // Tenet hold: a frozen node keeps its parent.
                return RouteChange::None;
            }
            // 1b: two-node loop (or, Tenet, the parent lost its route): drop the route.
            self.last_heard = 0;
            return self.drop_route();
        }
        // Rule 2: a beacon from another neighbour; switch on a > 25 % cheaper path. A frozen
        // node changes nothing, except one that has never had a route, which may take its
        // first: it has no descendants, so no frozen beacon can lead it into a loop. (A node that
        // lost its route before the freeze may have frozen descendants still advertising the
        // routes they had through it; adopting one of them would close a loop for good.)
        if self.fixed || (self.frozen && (self.parent.is_some() || self.parent_changes > 0)) {
            return RouteChange::None;
        }
        let offered = u32::from(beacon.cost) + u32::from(link);
        let current = self.path_cost();
        let threshold = if self.parent.is_none() || current >= u32::from(NO_ROUTE_COST) {
            // No usable route (none, or a 2.x parent that lost its own): the first usable offer,
            // as the original's fixed `cost >> 2` test on the no-route cost gives it, whatever
            // the switch hysteresis.
            current - (current >> 2)
        } else {
            current - current * u32::from(self.hysteresis_percent) / 100
        };
        if offered < threshold && beacon.parent != self.me && beacon.advertises_route() {
            let old = self.parent;
            self.parent = Some(beacon.source);
            self.parent_cost = beacon.cost;
            self.link_est = link;
            self.hop = hop_after(beacon.hop_count);
            self.last_heard = 0;
            self.parent_changes = self.parent_changes.saturating_add(1);
            return RouteChange::NewParent { old, new: beacon.source };
        }
        RouteChange::None
    }

    /// The forwarder detected a cycle (its own packet, or an origin/origin-seqno pair it
    /// already forwarded, came back): drop the route. Ignored at the root and while frozen
    /// or static. [CODE t2: LqiRoutingEngineP.nc] (`selectRoute` cycle check).
    pub fn handle_loop(&mut self) -> RouteChange {
        if self.is_root() || self.frozen || self.fixed {
            return RouteChange::None;
        }
        self.drop_route()
    }

    /// The current parent; `None` at the root and without a route (the mote would then send
    /// to the broadcast address, and the packet is lost).
    pub fn parent(&self) -> Option<NodeId> {
        self.parent
    }

    /// Hops to the sink: 0 at the root; `None` without a route, and also when the parent
    /// advertises an invalid hop count (possible under the 2.x rule only).
    pub fn hop_count(&self) -> Option<u8> {
        if self.is_root() {
            return Some(0);
        }
        match self.parent {
            Some(_) if self.hop != INVALID_HOP_COUNT => Some(self.hop),
            _ => None,
        }
    }

    /// The path cost this node advertises: 0 at the root, parent cost + link cost otherwise,
    /// saturated at [`NO_ROUTE_COST`] (which is also the cost of a node without a route).
    pub fn cost(&self) -> u16 {
        self.path_cost().min(u32::from(NO_ROUTE_COST)) as u16
    }

    /// Whether this node follows the 1.x/Tenet parent-beacon rule ([`MhlqiConfig::tenet_rules`]).
    pub fn tenet_rules(&self) -> bool {
        self.tenet_rules
    }

    /// True iff this node is the sink of its tree.
    pub fn is_root(&self) -> bool {
        self.me == self.sink
    }

    /// This node's address.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// The sink of this tree.
    pub fn sink(&self) -> NodeId {
        self.sink
    }

    /// Beacon ticks since the last acceptable beacon from the parent (or since the last
    /// switch or loss).
    pub fn last_heard(&self) -> u16 {
        self.last_heard
    }

    /// Number of [`RouteChange::NewParent`] events so far: every adoption of a parent,
    /// including the first acquisition and re-acquisitions after a loss. Losses and
    /// [`MhlqiNode::set_static`] are not counted.
    pub fn parent_changes(&self) -> u32 {
        self.parent_changes
    }

    /// True while routes are frozen (by config, [`MhlqiNode::set_frozen`] or
    /// [`MhlqiNode::set_static`]).
    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// True while the route is static (set by [`MhlqiNode::set_static`]).
    pub fn is_static(&self) -> bool {
        self.fixed
    }

    /// Freeze or unfreeze routes (§6.4). While frozen: no timeout aging, no loss, no switch;
    /// beacons continue and parent beacons still refresh the cost; a node that has never had a
    /// route may still acquire its first, one that lost its route stays without one.
    /// Unfreezing also ends a static route, returning the node to normal MultiHopLQI with its
    /// current parent. This follows the spec's §6.4 choice. Tenet's own
    /// `ParentControl.hold()` differs: it stops the beacon timer of a node that has a parent,
    /// so a held node no longer beacons [CODE tenet1: MultiHopLQI.nc].
    pub fn set_frozen(&mut self, on: bool) {
        self.frozen = on;
        if !on {
            self.fixed = false;
            self.last_heard = 0;
        }
    }

    /// Install a static route (a tree from a file): parent fixed to `parent` at `hop_count`
    /// hops, and frozen. `None`, the broadcast address or this node itself means "no route".
    /// The advertised cost starts as `hop_count ×` [`STATIC_LINK_COST`]; the parent's beacons
    /// then refresh cost and hop count as for a frozen node (the parent itself never changes).
    /// At the root only the freeze applies. Not counted in [`MhlqiNode::parent_changes`].
    pub fn set_static(&mut self, parent: Option<NodeId>, hop_count: u8) {
        self.frozen = true;
        self.fixed = true;
        self.last_heard = 0;
        if self.is_root() {
            return;
        }
        let parent = parent.filter(|p| *p != self.me && !p.is_broadcast());
        match parent {
            Some(p) => {
                let hop = hop_count.clamp(1, MAX_HOP_COUNT);
                self.parent = Some(p);
                self.parent_cost = (u32::from(hop - 1) * u32::from(STATIC_LINK_COST))
                    .min(u32::from(NO_ROUTE_COST - STATIC_LINK_COST)) as u16;
                self.link_est = STATIC_LINK_COST;
                self.hop = hop;
            }
            None => {
                self.drop_route();
            }
        }
    }

    /// Move a node to `parent`, which advertises `parent_cost` at `parent_hop` hops, and freeze
    /// it there (the good-tree freeze, `routing.freeze_min_prr`: the experimenter replaces a
    /// weak link of the tree being frozen; the node need not be frozen yet). The link estimate
    /// stays until the new parent's next beacon refreshes cost, link estimate and hop count as for
    /// any frozen node. Counted in [`MhlqiNode::parent_changes`]. Does nothing at the root, to the
    /// node itself or to the broadcast address.
    pub fn move_frozen(&mut self, parent: NodeId, parent_cost: u16, parent_hop: u8) -> RouteChange {
        if self.is_root() || parent == self.me || parent.is_broadcast() || self.parent == Some(parent) {
            return RouteChange::None;
        }
        let old = self.parent;
        self.frozen = true;
        self.parent = Some(parent);
        self.parent_cost = parent_cost;
        self.hop = hop_after(u16::from(parent_hop));
        self.last_heard = 0;
        self.parent_changes = self.parent_changes.saturating_add(1);
        RouteChange::NewParent { old, new: parent }
    }

    /// Path cost as a 32-bit sum (never wraps).
    fn path_cost(&self) -> u32 {
        u32::from(self.parent_cost) + u32::from(self.link_est)
    }

    /// Forget the parent and reset the costs (`giveupCurrentParent`).
    fn drop_route(&mut self) -> RouteChange {
        let old = self.parent.take();
        self.parent_cost = NO_ROUTE_HALF_COST;
        self.link_est = NO_ROUTE_HALF_COST;
        self.hop = INVALID_HOP_COUNT;
        match old {
            Some(old) => RouteChange::Lost { old },
            None => RouteChange::None,
        }
    }
}

/// Own hop count behind a parent that advertises `advertised`: one more, saturated at
/// [`MAX_HOP_COUNT`]; an invalid advertised count stays invalid.
fn hop_after(advertised: u16) -> u8 {
    if advertised >= u16::from(INVALID_HOP_COUNT) {
        INVALID_HOP_COUNT
    } else {
        (advertised + 1).min(u16::from(MAX_HOP_COUNT)) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const ME: NodeId = NodeId(7);
    const SINK: NodeId = NodeId(0);

    fn node() -> MhlqiNode {
        MhlqiNode::new(ME, SINK, &MhlqiConfig::default())
    }

    fn node_2x() -> MhlqiNode {
        let cfg = MhlqiConfig { tenet_rules: Some(false), ..MhlqiConfig::default() };
        MhlqiNode::new(ME, SINK, &cfg)
    }

    /// A beacon from `source` advertising a route via `parent` at `cost`, `hop` hops.
    fn beacon(source: u16, parent: u16, cost: u16, hop: u16) -> Beacon {
        Beacon { sink: SINK, source: NodeId(source), seqno: 0, parent: NodeId(parent), cost, hop_count: hop }
    }

    /// A beacon from `source` advertising no route.
    fn no_route(source: u16) -> Beacon {
        Beacon {
            sink: SINK,
            source: NodeId(source),
            seqno: 0,
            parent: NodeId::BROADCAST,
            cost: NO_ROUTE_COST,
            hop_count: u16::from(INVALID_HOP_COUNT),
        }
    }

    /// A node with parent 5 at path cost `757 + 243 = 1000`, hop 3.
    fn node_with_cost_1000() -> MhlqiNode {
        let mut n = node();
        let ch = n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: None, new: NodeId(5) });
        assert_eq!(n.cost(), 1000);
        n
    }

    // ---- Link cost ----

    #[test]
    fn adjust_lqi_matches_spec_table() {
        let table: [(u8, u16); 12] = [
            (110, 125),
            (108, 165),
            (107, 189),
            (105, 243),
            (100, 420),
            (95, 669),
            (90, 1000),
            (85, 1423),
            (80, 1950),
            (70, 3375),
            (60, 5355),
            (50, 8000),
        ];
        for (q, c) in table {
            assert_eq!(adjust_lqi(q), c, "lqi {q}");
        }
    }

    #[test]
    fn adjust_lqi_clamps_out_of_range_lqi() {
        assert_eq!(adjust_lqi(0), 8000);
        assert_eq!(adjust_lqi(49), 8000);
        // r = 3: ⌊9/8⌋·3/8 = 0.
        assert_eq!(adjust_lqi(127), 0);
        assert_eq!(adjust_lqi(255), 0);
    }

    // ---- Initial state ----

    #[test]
    fn new_node_has_no_route_and_advertises_invalid_state() {
        let mut n = node();
        assert_eq!(n.parent(), None);
        assert_eq!(n.hop_count(), None);
        assert_eq!(n.cost(), NO_ROUTE_COST);
        assert!(!n.is_root());
        let (b, ch) = n.on_beacon_tick();
        assert_eq!(ch, RouteChange::None);
        assert_eq!(
            b,
            Beacon { sink: SINK, source: ME, seqno: 0, parent: NodeId::BROADCAST, cost: 0xFFFE, hop_count: 0xFF }
        );
        assert!(!b.advertises_route());
        assert_eq!(n.on_beacon_tick().0.seqno, 1);
    }

    #[test]
    fn beacon_period_and_first_delay() {
        let n = node();
        assert_eq!(n.beacon_period(), Duration::from_binary_millis(32_769));
        assert_eq!(n.beacon_period().as_nanos(), 32_000_976_563);
        let mut rng = SimRng::seed_from_u64(1);
        let mut again = SimRng::seed_from_u64(1);
        let max = Duration::from_binary_millis(32_767);
        for _ in 0..1000 {
            let d = n.first_beacon_delay(&mut rng);
            assert!(d <= max);
            assert_eq!(d, n.first_beacon_delay(&mut again));
        }
        // A degenerate period does not panic.
        let cfg = MhlqiConfig { beacon_period_binary_ms: 0, ..MhlqiConfig::default() };
        let n = MhlqiNode::new(ME, SINK, &cfg);
        assert_eq!(n.first_beacon_delay(&mut rng), Duration::ZERO);
        assert_eq!(n.beacon_period(), Duration::from_binary_millis(1));
        let cfg = MhlqiConfig { beacon_period_binary_ms: u64::MAX, ..MhlqiConfig::default() };
        let n = MhlqiNode::new(ME, SINK, &cfg);
        assert_eq!(n.beacon_period(), Duration::from_binary_millis(1 << 32));
    }

    #[test]
    fn config_defaults_and_unknown_fields() {
        let c: MhlqiConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, MhlqiConfig::default());
        assert_eq!(c.beacon_period_binary_ms, 32_769);
        assert_eq!(c.timeout_beacons, 8);
        assert_eq!(c.hysteresis_percent, 25);
        assert!(!c.freeze && c.tenet_rules.is_none());
        assert!(serde_json::from_str::<MhlqiConfig>(r#"{"bogus": 1}"#).is_err());
    }

    // ---- Acquiring a route ----

    #[test]
    fn adopts_first_usable_beacon() {
        let mut n = node();
        let ch = n.handle_beacon(&beacon(5, 2, 500, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: None, new: NodeId(5) });
        assert_eq!(n.parent(), Some(NodeId(5)));
        assert_eq!(n.cost(), 743);
        assert_eq!(n.hop_count(), Some(3));
        assert_eq!(n.parent_changes(), 1);
        let (b, _) = n.on_beacon_tick();
        assert_eq!((b.parent, b.cost, b.hop_count), (NodeId(5), 743, 3));
    }

    #[test]
    fn adopts_a_poor_link_when_without_route() {
        // 8000 + 20000 = 28000 < 0xFFFE − 0x3FFF = 49151.
        let mut n = node();
        let ch = n.handle_beacon(&beacon(5, 2, 20_000, 4), 40);
        assert_eq!(ch, RouteChange::NewParent { old: None, new: NodeId(5) });
        assert_eq!(n.cost(), 28_000);
    }

    #[test]
    fn never_adopts_a_beacon_without_route() {
        let mut n = node();
        assert_eq!(n.handle_beacon(&no_route(5), 110), RouteChange::None);
        // Broadcast parent with a small cost.
        let mut b = beacon(5, 0xFFFF, 10, 1);
        assert_eq!(n.handle_beacon(&b, 110), RouteChange::None);
        // Invalid cost with a real parent.
        b = beacon(5, 2, NO_ROUTE_COST, 1);
        assert_eq!(n.handle_beacon(&b, 110), RouteChange::None);
        // Invalid hop count.
        b = beacon(5, 2, 100, 0xFF);
        assert_eq!(n.handle_beacon(&b, 110), RouteChange::None);
        assert_eq!(n.parent(), None);
        assert_eq!(n.parent_changes(), 0);
    }

    #[test]
    fn never_adopts_neighbour_whose_parent_is_me() {
        let mut n = node();
        assert_eq!(n.handle_beacon(&beacon(5, 7, 0, 1), 110), RouteChange::None);
        assert_eq!(n.parent(), None);
        let mut n = node_with_cost_1000();
        assert_eq!(n.handle_beacon(&beacon(6, 7, 0, 1), 110), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(5)));
    }

    #[test]
    fn ignores_foreign_sink_own_and_broadcast_sources() {
        let mut n = node();
        let mut b = beacon(5, 0, 0, 0);
        b.sink = NodeId(9);
        assert_eq!(n.handle_beacon(&b, 110), RouteChange::None);
        assert_eq!(n.handle_beacon(&beacon(7, 0, 0, 0), 110), RouteChange::None);
        assert_eq!(n.handle_beacon(&beacon(0xFFFF, 0, 0, 0), 110), RouteChange::None);
        assert_eq!(n.parent(), None);
    }

    #[test]
    fn hop_count_is_parents_plus_one_and_saturates() {
        let mut n = node();
        n.handle_beacon(&beacon(0, 0, 0, 0), 105);
        assert_eq!(n.hop_count(), Some(1));
        let mut n = node();
        n.handle_beacon(&beacon(5, 2, 100, 0xFE), 105);
        assert_eq!(n.hop_count(), Some(MAX_HOP_COUNT));
        assert_eq!(n.current_beacon().hop_count, 0xFE);
    }

    // ---- Switching (hysteresis) ----

    #[test]
    fn switches_only_on_more_than_25_percent_improvement() {
        let mut n = node_with_cost_1000();
        // Threshold: 1000 − 250 = 750.
        assert_eq!(n.handle_beacon(&beacon(6, 1, 517, 2), 105), RouteChange::None); // 760
        assert_eq!(n.handle_beacon(&beacon(6, 1, 507, 2), 105), RouteChange::None); // 750
        assert_eq!(n.parent(), Some(NodeId(5)));
        assert_eq!(n.cost(), 1000);
        let ch = n.handle_beacon(&beacon(6, 1, 497, 4), 105); // 740
        assert_eq!(ch, RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
        assert_eq!(n.cost(), 740);
        assert_eq!(n.hop_count(), Some(5));
        assert_eq!(n.parent_changes(), 2);
    }

    #[test]
    fn hysteresis_is_configurable() {
        let cfg = MhlqiConfig { hysteresis_percent: 0, ..MhlqiConfig::default() };
        let mut n = MhlqiNode::new(ME, SINK, &cfg);
        n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(n.handle_beacon(&beacon(6, 1, 757, 2), 105), RouteChange::None);
        assert!(matches!(n.handle_beacon(&beacon(6, 1, 756, 2), 105), RouteChange::NewParent { .. }));
        let cfg = MhlqiConfig { hysteresis_percent: 200, ..MhlqiConfig::default() };
        let mut n = MhlqiNode::new(ME, SINK, &cfg);
        // 100 %: a node never switches away from its route, but it takes its first one.
        assert!(matches!(n.handle_beacon(&beacon(5, 1, 3000, 2), 105), RouteChange::NewParent { .. }));
        assert_eq!(n.handle_beacon(&beacon(6, 0, 0, 0), 127), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(5)));
        // ... and a new one once it has lost it.
        for _ in 0..9 {
            n.on_beacon_tick();
        }
        assert_eq!(n.parent(), None);
        assert!(matches!(n.handle_beacon(&beacon(6, 0, 0, 0), 127), RouteChange::NewParent { .. }));
    }

    /// The first route is taken below the original's fixed threshold for the no-route cost,
    /// 0xFFFE − 0x3FFF = 49,151, whatever the hysteresis (offer = advertised cost + link cost).
    #[test]
    fn first_route_threshold_does_not_depend_on_hysteresis() {
        for h in [0, 25, 90, 100] {
            let cfg = MhlqiConfig { hysteresis_percent: h, ..MhlqiConfig::default() };
            let link = u32::from(adjust_lqi(105));
            let mut n = MhlqiNode::new(ME, SINK, &cfg);
            let at_threshold = (49_151 - link) as u16;
            assert_eq!(n.handle_beacon(&beacon(5, 1, at_threshold, 2), 105), RouteChange::None, "h = {h}");
            let below = at_threshold - 1;
            assert!(matches!(n.handle_beacon(&beacon(5, 1, below, 2), 105), RouteChange::NewParent { .. }), "h = {h}");
        }
    }

    /// A timeout of 255 periods (the largest the key takes) still expires, on the 256th tick.
    #[test]
    fn timeout_of_255_periods_expires() {
        let cfg = MhlqiConfig { timeout_beacons: 255, ..MhlqiConfig::default() };
        let mut n = MhlqiNode::new(ME, SINK, &cfg);
        n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        for _ in 0..255 {
            assert_eq!(n.on_beacon_tick().1, RouteChange::None);
        }
        assert_eq!(n.on_beacon_tick().1, RouteChange::Lost { old: NodeId(5) });
    }

    // ---- Beacons from the parent ----

    #[test]
    fn parent_beacon_refreshes_cost_and_hop() {
        let mut n = node_with_cost_1000();
        // Worse cost from the parent is taken as is (no hysteresis for the parent).
        assert_eq!(n.handle_beacon(&beacon(5, 1, 3000, 6), 90), RouteChange::None);
        assert_eq!(n.cost(), 4000);
        assert_eq!(n.hop_count(), Some(7));
        assert_eq!(n.parent(), Some(NodeId(5)));
    }

    #[test]
    fn parent_advertising_me_drops_route_both_variants() {
        for mut n in [node(), node_2x()] {
            n.handle_beacon(&beacon(5, 1, 757, 2), 105);
            for _ in 0..3 {
                n.on_beacon_tick();
            }
            let ch = n.handle_beacon(&beacon(5, 7, 800, 2), 105);
            assert_eq!(ch, RouteChange::Lost { old: NodeId(5) });
            assert_eq!(n.parent(), None);
            assert_eq!(n.cost(), NO_ROUTE_COST);
            assert_eq!(n.hop_count(), None);
            assert_eq!(n.last_heard(), 0);
        }
    }

    #[test]
    fn tenet_rule_parent_without_route_drops_route() {
        let mut n = node_with_cost_1000();
        assert_eq!(n.handle_beacon(&no_route(5), 105), RouteChange::Lost { old: NodeId(5) });
        assert_eq!(n.parent(), None);
    }

    /// A parent whose path cost saturated (it still has a parent) does not make a Tenet child
    /// drop its route (Tenet tests only the advertised parent); the child's own cost saturates
    /// and any usable neighbour wins. A parent with no parent does.
    #[test]
    fn tenet_child_keeps_a_parent_whose_cost_saturated() {
        let mut n = node_with_cost_1000();
        assert_eq!(n.handle_beacon(&beacon(5, 1, NO_ROUTE_COST, 9), 105), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(5)));
        assert_eq!(n.cost(), NO_ROUTE_COST);
        let ch = n.handle_beacon(&beacon(6, 1, 30_000, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
        assert_eq!(n.handle_beacon(&no_route(6), 105), RouteChange::Lost { old: NodeId(6) });
    }

    #[test]
    fn rule_2x_parent_without_route_refreshes_to_unusable_cost() {
        let mut n = node_2x();
        n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(n.handle_beacon(&no_route(5), 105), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(5)));
        assert_eq!(n.cost(), NO_ROUTE_COST);
        assert_eq!(n.hop_count(), None);
        let b = n.current_beacon();
        assert_eq!((b.parent, b.cost, b.hop_count), (NodeId(5), 0xFFFE, 0xFF));
        assert!(!b.advertises_route());
        // Any usable neighbour now wins.
        let ch = n.handle_beacon(&beacon(6, 1, 30_000, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
    }

    /// A path whose cost is exactly [`NO_ROUTE_COST`] is no usable route (that is the cost a
    /// node without a route advertises, and its beacons no longer offer one), so the next
    /// parent is taken below the fixed first-route threshold 0xFFFE − 0x3FFF = 49,151, not below
    /// C − ⌊C·h/100⌋ [spec radio-mac-routing §6.1 rule 2: a node without a route has C = 0xFFFE
    /// and takes the first usable beacon below C − ⌊C/4⌋]. With h = 0 the hysteresis rule
    /// would take any offer below 0xFFFE.
    #[test]
    fn a_path_cost_of_exactly_no_route_cost_is_no_usable_route() {
        let cfg = MhlqiConfig { hysteresis_percent: 0, tenet_rules: Some(false), ..MhlqiConfig::default() };
        let mut n = MhlqiNode::new(ME, SINK, &cfg);
        let link = adjust_lqi(110);
        // The parent still has a route, but the path cost reaches the no-route cost exactly.
        let ch = n.handle_beacon(&beacon(5, 1, 1000, 2), 110);
        assert!(matches!(ch, RouteChange::NewParent { .. }));
        assert_eq!(n.handle_beacon(&beacon(5, 1, NO_ROUTE_COST - link, 2), 110), RouteChange::None);
        assert_eq!(n.cost(), NO_ROUTE_COST);
        assert!(!n.current_beacon().advertises_route());
        // 55,000 < 0xFFFE, but not below 49,151: kept.
        assert_eq!(n.handle_beacon(&beacon(6, 1, 55_000 - link, 2), 110), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(5)));
        // 49,150: taken.
        let ch = n.handle_beacon(&beacon(6, 1, 49_150 - link, 2), 110);
        assert_eq!(ch, RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
    }

    /// A beacon advertises a route only with a cost below [`NO_ROUTE_COST`], a real parent and a
    /// valid hop count: the cost alone at 0xFFFE already means "no route" [spec radio-mac-routing §6.1:
    /// a node without a route has C = 0xFFFE].
    #[test]
    fn a_beacon_at_the_no_route_cost_advertises_no_route() {
        assert!(beacon(5, 1, NO_ROUTE_COST - 1, 3).advertises_route());
        assert!(!beacon(5, 1, NO_ROUTE_COST, 3).advertises_route());
        assert!(!beacon(5, 1, 100, u16::from(INVALID_HOP_COUNT)).advertises_route());
        assert!(beacon(5, 1, 100, u16::from(MAX_HOP_COUNT)).advertises_route());
        assert!(!beacon(5, 0xFFFF, 100, 3).advertises_route());
    }

    // ---- Timeout ----

    #[test]
    fn timeout_after_nine_silent_ticks_not_eight() {
        let mut n = node_with_cost_1000();
        for _ in 0..8 {
            assert_eq!(n.on_beacon_tick().1, RouteChange::None);
        }
        assert_eq!(n.parent(), Some(NodeId(5)));
        assert_eq!(n.last_heard(), 8);
        let (b, ch) = n.on_beacon_tick();
        assert_eq!(ch, RouteChange::Lost { old: NodeId(5) });
        assert_eq!((b.parent, b.cost, b.hop_count), (NodeId::BROADCAST, 0xFFFE, 0xFF));
        assert_eq!(n.parent(), None);
        // Later ticks report nothing new.
        assert_eq!(n.on_beacon_tick().1, RouteChange::None);
    }

    #[test]
    fn parent_beacon_resets_timeout() {
        let mut n = node_with_cost_1000();
        for _ in 0..8 {
            n.on_beacon_tick();
        }
        n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(n.last_heard(), 0);
        for _ in 0..8 {
            assert_eq!(n.on_beacon_tick().1, RouteChange::None);
        }
        assert_eq!(n.parent(), Some(NodeId(5)));
    }

    /// A switch to a new parent restarts the timeout: the new parent gets the full 8 silent
    /// periods, however long the old one had been silent [spec radio-mac-routing §6.1 rule 2:
    /// "On switching: … lastHeard = 0"; Timeout: dropped once lastHeard > 8].
    #[test]
    fn a_switch_restarts_the_timeout() {
        let mut n = node_with_cost_1000();
        for _ in 0..6 {
            n.on_beacon_tick();
        }
        assert_eq!(n.last_heard(), 6);
        let ch = n.handle_beacon(&beacon(6, 1, 100, 1), 105);
        assert_eq!(ch, RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
        assert_eq!(n.last_heard(), 0);
        for _ in 0..8 {
            assert_eq!(n.on_beacon_tick().1, RouteChange::None);
        }
        assert_eq!(n.parent(), Some(NodeId(6)));
        assert_eq!(n.on_beacon_tick().1, RouteChange::Lost { old: NodeId(6) });
    }

    #[test]
    fn reacquisition_after_loss_counts_as_change() {
        let mut n = node_with_cost_1000();
        for _ in 0..9 {
            n.on_beacon_tick();
        }
        assert_eq!(n.parent(), None);
        let ch = n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: None, new: NodeId(5) });
        assert_eq!(n.parent_changes(), 2);
    }

    // ---- Loop detected by the forwarder ----

    #[test]
    fn handle_loop_drops_route() {
        let mut n = node_with_cost_1000();
        assert_eq!(n.handle_loop(), RouteChange::Lost { old: NodeId(5) });
        assert_eq!(n.parent(), None);
        assert_eq!(n.handle_loop(), RouteChange::None);
    }

    // ---- Frozen and static ----

    /// The good-tree freeze's move: a frozen node takes the new parent, the cost it advertises
    /// and one hop more than it, counts a parent change and stays frozen; its link estimate
    /// waits for the new parent's beacon; the old parent's beacons move nothing. No move at the
    /// root, to the node itself, to the broadcast address or to its own parent.
    #[test]
    fn move_frozen_takes_the_new_parent() {
        let mut n = node_with_cost_1000();
        n.set_frozen(true);
        let changes = n.parent_changes();
        assert_eq!(n.move_frozen(NodeId(6), 400, 1), RouteChange::NewParent { old: Some(NodeId(5)), new: NodeId(6) });
        assert_eq!((n.parent(), n.hop_count(), n.parent_changes()), (Some(NodeId(6)), Some(2), changes + 1));
        assert!(n.is_frozen());
        assert_eq!(n.cost(), 400 + 243, "the old link estimate until the new parent's beacon");
        assert_eq!(n.handle_beacon(&beacon(5, 1, 0, 1), 110), RouteChange::None);
        assert_eq!(n.parent(), Some(NodeId(6)));
        n.handle_beacon(&beacon(6, 1, 100, 3), 110);
        assert_eq!((n.cost(), n.hop_count()), (225, Some(4)));
        for p in [NodeId(6), ME, NodeId::BROADCAST] {
            assert_eq!(n.move_frozen(p, 0, 0), RouteChange::None, "{p:?}");
        }
        assert_eq!((n.parent(), n.parent_changes()), (Some(NodeId(6)), changes + 1));
        let mut root = MhlqiNode::new(SINK, SINK, &MhlqiConfig::default());
        assert_eq!(root.move_frozen(NodeId(3), 0, 0), RouteChange::None);
        assert_eq!(root.parent(), None);
    }

    #[test]
    fn frozen_node_keeps_parent() {
        let mut n = node_with_cost_1000();
        n.set_frozen(true);
        assert!(n.is_frozen());
        assert_eq!(n.handle_beacon(&beacon(6, 1, 0, 1), 110), RouteChange::None);
        assert_eq!(n.handle_beacon(&beacon(5, 7, 0, 1), 110), RouteChange::None);
        assert_eq!(n.handle_beacon(&no_route(5), 110), RouteChange::None);
        assert_eq!(n.handle_loop(), RouteChange::None);
        for _ in 0..20 {
            let (b, ch) = n.on_beacon_tick();
            assert_eq!(ch, RouteChange::None);
            assert_eq!(b.parent, NodeId(5));
        }
        // The parent's good beacons still refresh the cost.
        n.handle_beacon(&beacon(5, 1, 100, 2), 110);
        assert_eq!(n.cost(), 225);
        assert_eq!(n.parent(), Some(NodeId(5)));
        // Unfreezing restores the normal rules, timeout counted from zero.
        n.set_frozen(false);
        for _ in 0..8 {
            n.on_beacon_tick();
        }
        assert_eq!(n.on_beacon_tick().1, RouteChange::Lost { old: NodeId(5) });
    }

    #[test]
    fn frozen_node_without_route_may_acquire() {
        let cfg = MhlqiConfig { freeze: true, ..MhlqiConfig::default() };
        let mut n = MhlqiNode::new(ME, SINK, &cfg);
        assert!(n.is_frozen());
        let ch = n.handle_beacon(&beacon(5, 1, 757, 2), 105);
        assert_eq!(ch, RouteChange::NewParent { old: None, new: NodeId(5) });
        assert_eq!(n.handle_beacon(&beacon(6, 1, 0, 1), 110), RouteChange::None);
    }

    /// A node that lost its route before the freeze stays without one: a frozen neighbour's
    /// beacon may be a descendant's, advertising the route it had through this node, and
    /// adopting it would close a loop that nothing frozen ever opens again.
    #[test]
    fn frozen_node_that_lost_its_route_stays_unrouted() {
        let mut n = node_with_cost_1000();
        for _ in 0..8 {
            n.on_beacon_tick();
        }
        assert_eq!(n.on_beacon_tick().1, RouteChange::Lost { old: NodeId(5) });
        n.set_frozen(true);
        assert_eq!(n.handle_beacon(&beacon(6, 1, 0, 1), 110), RouteChange::None);
        assert_eq!(n.parent(), None);
        // Unfrozen, it takes a route again.
        n.set_frozen(false);
        assert_eq!(n.handle_beacon(&beacon(6, 1, 0, 1), 110), RouteChange::NewParent { old: None, new: NodeId(6) });
    }

    #[test]
    fn static_route_is_fixed() {
        let mut n = node();
        n.set_static(Some(NodeId(3)), 2);
        assert!(n.is_static() && n.is_frozen());
        assert_eq!(n.parent(), Some(NodeId(3)));
        assert_eq!(n.hop_count(), Some(2));
        assert_eq!(n.cost(), 250);
        assert_eq!(n.parent_changes(), 0);
        assert_eq!(n.handle_beacon(&beacon(6, 0, 0, 0), 110), RouteChange::None);
        assert_eq!(n.handle_beacon(&beacon(3, 7, 0, 0), 110), RouteChange::None);
        assert_eq!(n.handle_loop(), RouteChange::None);
        for _ in 0..20 {
            assert_eq!(n.on_beacon_tick().1, RouteChange::None);
        }
        assert_eq!(n.parent(), Some(NodeId(3)));
        // A static "no route" node does not acquire one.
        let mut n = node();
        n.set_static(None, 0);
        assert_eq!(n.handle_beacon(&beacon(6, 0, 0, 0), 110), RouteChange::None);
        assert_eq!(n.parent(), None);
        // Self or broadcast parent means no route.
        let mut n = node();
        n.set_static(Some(ME), 1);
        assert_eq!(n.parent(), None);
        n.set_frozen(false);
        assert!(!n.is_static());
        assert!(matches!(n.handle_beacon(&beacon(6, 0, 0, 0), 110), RouteChange::NewParent { .. }));
    }

    // ---- Root ----

    #[test]
    fn root_never_changes() {
        let mut r = MhlqiNode::new(SINK, SINK, &MhlqiConfig::default());
        assert!(r.is_root());
        assert_eq!(r.hop_count(), Some(0));
        assert_eq!(r.cost(), 0);
        assert_eq!(r.parent(), None);
        assert_eq!(r.handle_beacon(&beacon(5, 1, 0, 0), 110), RouteChange::None);
        assert_eq!(r.handle_loop(), RouteChange::None);
        for _ in 0..50 {
            let (b, ch) = r.on_beacon_tick();
            assert_eq!(ch, RouteChange::None);
            assert_eq!((b.parent, b.cost, b.hop_count), (SINK, 0, 0));
            assert!(b.advertises_route());
        }
        r.set_static(Some(NodeId(4)), 3);
        assert_eq!((r.parent(), r.hop_count(), r.cost()), (None, Some(0), 0));
        assert_eq!(r.parent_changes(), 0);
    }

    // ---- Convergence ----

    #[test]
    fn chain_of_five_converges_one_hop_per_round() {
        let cfg = MhlqiConfig::default();
        let mut nodes: Vec<MhlqiNode> = (0..5).map(|i| MhlqiNode::new(NodeId(i), SINK, &cfg)).collect();
        for round in 1..=6 {
            // Every node beacons, then every beacon is delivered to the chain neighbours.
            let beacons: Vec<Beacon> = nodes.iter_mut().map(|n| n.on_beacon_tick().0).collect();
            for (i, b) in beacons.iter().enumerate() {
                for j in [i.wrapping_sub(1), i + 1] {
                    if let Some(n) = nodes.get_mut(j) {
                        n.handle_beacon(b, 105);
                    }
                }
            }
            let reached = nodes.iter().filter(|n| n.hop_count().is_some()).count();
            assert_eq!(reached, (round + 1).min(5), "round {round}");
        }
        for (i, n) in nodes.iter().enumerate() {
            assert_eq!(n.hop_count(), Some(i as u8));
            assert_eq!(n.cost(), 243 * i as u16);
            let expect = if i == 0 { None } else { Some(NodeId(i as u16 - 1)) };
            assert_eq!(n.parent(), expect);
            assert_eq!(n.parent_changes(), u32::from(i > 0));
        }
    }

    /// Tests added by the routing35 mutation audit.
    mod audit35 {
        use super::*;

        /// A node whose static route was ended by unfreezing, then frozen again, keeps its
        /// parent: the freeze disables parent changes (spec radio-mac-routing §6.4; doc of
        /// [`MhlqiNode`]: "Freezing … no switch"; only a node that has never had a route may
        /// acquire its first, and a static route is a route although it is no parent change).
        #[test]
        fn refrozen_former_static_node_does_not_switch() {
            let mut n = node();
            n.set_static(Some(NodeId(3)), 4);
            assert_eq!(n.parent_changes(), 0);
            n.set_frozen(false);
            n.set_frozen(true);
            assert!(n.is_frozen() && !n.is_static());
            // 0 + 125 is far below 75 % of the static cost 500: an unfrozen node would switch.
            assert_eq!(n.handle_beacon(&beacon(6, 0, 0, 0), 110), RouteChange::None);
            assert_eq!(n.parent(), Some(NodeId(3)));
        }

        /// Unfreezing restarts the timeout: the parent gets the full eight silent periods after
        /// the freeze ends, whatever ticks had passed before it (doc of
        /// `frozen_node_keeps_parent`: "Unfreezing restores the normal rules, timeout counted
        /// from zero"; spec §6.1 Timeout: the route is dropped once lastHeard > 8).
        #[test]
        fn unfreezing_restarts_the_timeout() {
            let mut n = node_with_cost_1000();
            for _ in 0..5 {
                n.on_beacon_tick();
            }
            assert_eq!(n.last_heard(), 5);
            n.set_frozen(true);
            n.set_frozen(false);
            for _ in 0..8 {
                assert_eq!(n.on_beacon_tick().1, RouteChange::None);
            }
            assert_eq!(n.on_beacon_tick().1, RouteChange::Lost { old: NodeId(5) });
        }

        /// [`MhlqiNode::set_static`]: "the broadcast address … means no route".
        #[test]
        fn static_broadcast_parent_means_no_route() {
            let mut n = node();
            n.set_static(Some(NodeId::BROADCAST), 1);
            assert_eq!((n.parent(), n.hop_count(), n.cost()), (None, None, NO_ROUTE_COST));
            assert!(!n.current_beacon().advertises_route());
        }

        /// A static tree may be 255 hops deep (static_tree: "deeper than 255 hops" is refused,
        /// 255 is not); the node keeps a valid hop count, saturated at [`MAX_HOP_COUNT`] "so that
        /// a valid hop count never reads as [`INVALID_HOP_COUNT`]". A node below a parent is at
        /// least one hop from the sink (spec §6.1: h = parent's hop + 1; only the root has 0).
        #[test]
        fn static_hop_count_stays_valid_and_nonzero() {
            let mut n = node();
            n.set_static(Some(NodeId(3)), 255);
            assert_eq!(n.hop_count(), Some(MAX_HOP_COUNT));
            assert!(n.current_beacon().advertises_route());
            let mut n = node();
            n.set_static(Some(NodeId(3)), 0);
            assert_eq!(n.hop_count(), Some(1));
            assert_eq!(n.current_beacon().hop_count, 1);
        }
    }
}
