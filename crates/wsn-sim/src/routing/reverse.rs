//! The Tenet children table: downward routes learned from forwarded upward data (spec §6.3).
//!
//! When an UP packet from origin S arrives from previous hop H and is forwarded, the node
//! remembers "S is reached through H". DOWN packets to a known destination go to its next hop;
//! to an unknown destination the engine sends them directly (one hop, "try once"). Entries age
//! on a periodic tick and expire after [`ReverseConfig::max_age`] ticks without traffic.
//!
//! The table is a vector sorted by destination address, so any iteration is in address order and
//! runs are reproducible. It holds at most [`ReverseConfig::capacity`] entries (90 by default), so
//! one contiguous array beats a search tree, above all for the aging pass over every entry that a
//! full table runs at each new origin near a sink.

use wsn_proto::time::Duration;
use wsn_wire::NodeId;

/// Default table capacity (entries). [CODE tenet1: ChildrenM.nc] (`CHILDREN_MAX_NUM` for
/// telosb/tmote; 20 on MicaZ, 50 in tenet2 lqirp).
pub const DEFAULT_CAPACITY: usize = 90;

/// Default maximum age [aging ticks]: an entry whose age exceeds this is deleted.
/// [CODE tenet1: ChildrenM.nc] (`CHILDREN_TIMEOUT`).
pub const DEFAULT_MAX_AGE: u8 = 10;

/// Default aging period (s). [CODE tenet1: RoutingLayerM.nc] (60 s aging timer, §6.3; tenet2
/// lqirp ages on each ≈ 32 s beacon tick instead).
pub const DEFAULT_AGING_PERIOD_S: f64 = 60.0;

/// Children-table parameters.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReverseConfig {
    /// Maximum number of entries. Default 90. [CODE tenet1: ChildrenM.nc]
    pub capacity: usize,
    /// Entries with age > `max_age` are deleted at an aging tick. Default 10.
    /// [CODE tenet1: ChildrenM.nc]
    pub max_age: u8,
    /// Interval between aging ticks (s). Default 60. Scenarios accept 0.1 s to 10^7 s; here a
    /// non-positive or non-finite value gives a zero period, which the engine takes for "never
    /// age". [CODE tenet1: RoutingLayerM.nc]
    pub aging_period_s: f64,
}

impl Default for ReverseConfig {
    fn default() -> Self {
        ReverseConfig { capacity: DEFAULT_CAPACITY, max_age: DEFAULT_MAX_AGE, aging_period_s: DEFAULT_AGING_PERIOD_S }
    }
}

/// What [`ReverseTable::learn`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LearnOutcome {
    /// A new entry was added.
    Learned,
    /// The entry existed with the same next hop; its age was reset to 0.
    Refreshed,
    /// The entry existed with another next hop; it now points to the new one, age 0.
    Replaced,
    /// The table was full: nothing was inserted, every entry was aged instead.
    TableFull,
    /// The packet came from this node's parent: nothing learned.
    IgnoredFromParent,
    /// The origin is this node's parent, so the packet came around a loop: the caller must drop
    /// it. Nothing learned.
    DropLoop,
    /// The origin or the previous hop is the broadcast address: nothing learned.
    Ignored,
}

/// One child entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Child {
    next_hop: NodeId,
    /// In 16 bits, so that `max_age` = 255 still expires.
    age: u16,
}

/// The children table of one node: destination → (next hop, age).
#[derive(Clone, Debug)]
pub struct ReverseTable {
    capacity: usize,
    max_age: u8,
    aging_period: Duration,
    /// Sorted by destination, one entry per destination.
    entries: Vec<(NodeId, Child)>,
}

impl ReverseTable {
    /// An empty table.
    pub fn new(cfg: &ReverseConfig) -> Self {
        ReverseTable {
            capacity: cfg.capacity,
            max_age: cfg.max_age,
            aging_period: Duration::from_secs_f64(cfg.aging_period_s),
            entries: Vec::new(),
        }
    }

    /// An UP packet from `origin` arrived from `prev_hop` and is accepted for forwarding;
    /// `parent` is this node's current parent (§6.3 learning rules, in this order):
    /// origin = parent → [`LearnOutcome::DropLoop`]; prev_hop = parent →
    /// [`LearnOutcome::IgnoredFromParent`]; else add, refresh or replace the entry for
    /// `origin`; a new entry into a full table ages all entries instead.
    /// [CODE tenet1: ChildrenM.nc] (`addChild`).
    pub fn learn(&mut self, origin: NodeId, prev_hop: NodeId, parent: Option<NodeId>) -> LearnOutcome {
        if origin.is_broadcast() || prev_hop.is_broadcast() {
            return LearnOutcome::Ignored;
        }
        if parent == Some(origin) {
            return LearnOutcome::DropLoop;
        }
        if parent == Some(prev_hop) {
            return LearnOutcome::IgnoredFromParent;
        }
        let at = self.find(origin);
        if let Ok(k) = at {
            let child = &mut self.entries[k].1;
            let outcome = if child.next_hop == prev_hop {
                LearnOutcome::Refreshed
            } else {
                // Delete and re-add: the freed slot always takes the new entry.
                LearnOutcome::Replaced
            };
            *child = Child { next_hop: prev_hop, age: 0 };
            return outcome;
        }
        if self.entries.len() >= self.capacity {
            self.age_tick();
            return LearnOutcome::TableFull;
        }
        let k = at.unwrap_err();
        self.entries.insert(k, (origin, Child { next_hop: prev_hop, age: 0 }));
        LearnOutcome::Learned
    }

    /// The next hop toward `dst`, if `dst` is in the table. `None` means "send directly to
    /// `dst`" (§6.3).
    pub fn next_hop(&self, dst: NodeId) -> Option<NodeId> {
        self.find(dst).ok().map(|k| self.entries[k].1.next_hop)
    }

    /// The node adopted `new_parent`: delete any entry for destination `new_parent`, so the
    /// parent is never also a child. [CODE tenet1: RoutingLayerM.nc]
    pub fn on_parent_change(&mut self, new_parent: NodeId) {
        self.remove(new_parent);
    }

    /// The node received its own UP packet back: delete the entry for destination `parent`
    /// (meant to break a two-node loop). No-op without a parent. [CODE tenet1: RoutingLayerM.nc]
    pub fn on_own_packet_returned(&mut self, parent: Option<NodeId>) {
        if let Some(p) = parent {
            self.remove(p);
        }
    }

    /// An aging tick: every entry's age += 1; entries with age > `max_age` are deleted.
    /// [CODE tenet1: ChildrenM.nc] (`ageChildren`).
    pub fn age_tick(&mut self) {
        let max_age = self.max_age;
        self.entries.retain_mut(|(_, c)| {
            c.age = c.age.saturating_add(1);
            c.age <= u16::from(max_age)
        });
    }

    /// Interval between aging ticks.
    pub fn aging_period(&self) -> Duration {
        self.aging_period
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries as (destination, next hop, age), in destination order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId, u16)> + '_ {
        self.entries.iter().map(|(d, c)| (*d, c.next_hop, c.age))
    }

    /// Index of `dst`'s entry, or where it would go.
    #[inline]
    fn find(&self, dst: NodeId) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&dst, |e| e.0)
    }

    fn remove(&mut self, dst: NodeId) {
        if let Ok(k) = self.find(dst) {
            self.entries.remove(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: Option<NodeId> = Some(NodeId(1));

    fn table(capacity: usize) -> ReverseTable {
        ReverseTable::new(&ReverseConfig { capacity, ..ReverseConfig::default() })
    }

    fn age_of(t: &ReverseTable, dst: u16) -> Option<u16> {
        t.iter().find(|(d, _, _)| *d == NodeId(dst)).map(|(_, _, a)| a)
    }

    #[test]
    fn defaults() {
        let c: ReverseConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, ReverseConfig::default());
        assert_eq!((c.capacity, c.max_age), (90, 10));
        let t = ReverseTable::new(&c);
        assert_eq!(t.aging_period(), Duration::from_secs(60));
        assert!(t.is_empty());
        assert!(serde_json::from_str::<ReverseConfig>(r#"{"size": 3}"#).is_err());
        let bad = ReverseConfig { aging_period_s: f64::NAN, ..c };
        assert_eq!(ReverseTable::new(&bad).aging_period(), Duration::ZERO);
    }

    #[test]
    fn learn_then_lookup() {
        let mut t = table(90);
        assert_eq!(t.learn(NodeId(9), NodeId(4), PARENT), LearnOutcome::Learned);
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(4)));
        assert_eq!(t.next_hop(NodeId(8)), None);
        assert_eq!(t.len(), 1);
        // A direct child: origin = previous hop.
        assert_eq!(t.learn(NodeId(4), NodeId(4), PARENT), LearnOutcome::Learned);
        assert_eq!(t.next_hop(NodeId(4)), Some(NodeId(4)));
        // No parent at all: learning still works.
        assert_eq!(t.learn(NodeId(5), NodeId(5), None), LearnOutcome::Learned);
        assert_eq!(t.len(), 3);
    }

    /// A maximum age of 255 ticks (the largest the key takes) still expires, on the 256th tick.
    #[test]
    fn max_age_of_255_expires() {
        let mut t = ReverseTable::new(&ReverseConfig { max_age: 255, ..ReverseConfig::default() });
        t.learn(NodeId(9), NodeId(4), PARENT);
        for _ in 0..255 {
            t.age_tick();
        }
        assert_eq!(age_of(&t, 9), Some(255));
        t.age_tick();
        assert!(t.is_empty());
    }

    #[test]
    fn refresh_resets_age() {
        let mut t = table(90);
        t.learn(NodeId(9), NodeId(4), PARENT);
        t.age_tick();
        t.age_tick();
        assert_eq!(age_of(&t, 9), Some(2));
        assert_eq!(t.learn(NodeId(9), NodeId(4), PARENT), LearnOutcome::Refreshed);
        assert_eq!(age_of(&t, 9), Some(0));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn replace_takes_most_recent_path() {
        let mut t = table(90);
        t.learn(NodeId(9), NodeId(4), PARENT);
        t.age_tick();
        assert_eq!(t.learn(NodeId(9), NodeId(6), PARENT), LearnOutcome::Replaced);
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(6)));
        assert_eq!(age_of(&t, 9), Some(0));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn replace_works_in_full_table() {
        let mut t = table(2);
        t.learn(NodeId(9), NodeId(4), PARENT);
        t.learn(NodeId(8), NodeId(4), PARENT);
        assert_eq!(t.learn(NodeId(9), NodeId(6), PARENT), LearnOutcome::Replaced);
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(6)));
        assert_eq!(age_of(&t, 8), Some(0));
    }

    #[test]
    fn full_table_ages_instead_of_inserting() {
        let mut t = table(2);
        t.learn(NodeId(9), NodeId(4), PARENT);
        t.learn(NodeId(8), NodeId(4), PARENT);
        assert_eq!(t.learn(NodeId(7), NodeId(4), PARENT), LearnOutcome::TableFull);
        assert_eq!(t.next_hop(NodeId(7)), None);
        assert_eq!((age_of(&t, 9), age_of(&t, 8)), (Some(1), Some(1)));
        // Repeated pressure eventually expires the old entries and makes room.
        for _ in 0..10 {
            assert_eq!(t.learn(NodeId(7), NodeId(4), PARENT), LearnOutcome::TableFull);
        }
        assert!(t.is_empty());
        assert_eq!(t.learn(NodeId(7), NodeId(4), PARENT), LearnOutcome::Learned);
        // Capacity 0 never stores anything.
        let mut z = table(0);
        assert_eq!(z.learn(NodeId(7), NodeId(4), PARENT), LearnOutcome::TableFull);
        assert!(z.is_empty());
    }

    #[test]
    fn expiry_after_max_age_plus_one_ticks() {
        let mut t = table(90);
        t.learn(NodeId(9), NodeId(4), PARENT);
        for _ in 0..10 {
            t.age_tick();
        }
        assert_eq!(age_of(&t, 9), Some(10));
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(4)));
        t.age_tick();
        assert_eq!(t.next_hop(NodeId(9)), None);
        assert!(t.is_empty());
    }

    #[test]
    fn parent_change_deletes_entry_for_new_parent() {
        let mut t = table(90);
        t.learn(NodeId(5), NodeId(5), PARENT);
        t.learn(NodeId(9), NodeId(5), PARENT);
        t.on_parent_change(NodeId(5));
        assert_eq!(t.next_hop(NodeId(5)), None);
        // Only the entry *for destination* 5 goes; routes via 5 stay.
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(5)));
        t.on_parent_change(NodeId(42));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn origin_is_parent_means_loop() {
        let mut t = table(90);
        assert_eq!(t.learn(NodeId(1), NodeId(3), PARENT), LearnOutcome::DropLoop);
        assert_eq!(t.learn(NodeId(1), NodeId(1), PARENT), LearnOutcome::DropLoop);
        assert!(t.is_empty());
    }

    #[test]
    fn packets_from_parent_are_not_learned() {
        let mut t = table(90);
        assert_eq!(t.learn(NodeId(9), NodeId(1), PARENT), LearnOutcome::IgnoredFromParent);
        assert!(t.is_empty());
    }

    #[test]
    fn broadcast_addresses_are_ignored() {
        let mut t = table(90);
        assert_eq!(t.learn(NodeId::BROADCAST, NodeId(4), PARENT), LearnOutcome::Ignored);
        assert_eq!(t.learn(NodeId(9), NodeId::BROADCAST, PARENT), LearnOutcome::Ignored);
        assert!(t.is_empty());
    }

    #[test]
    fn own_packet_returned_deletes_child_entry_for_parent() {
        let mut t = table(90);
        // Learned while the node had another parent.
        t.learn(NodeId(1), NodeId(1), Some(NodeId(2)));
        t.learn(NodeId(9), NodeId(4), Some(NodeId(2)));
        t.on_own_packet_returned(Some(NodeId(1)));
        assert_eq!(t.next_hop(NodeId(1)), None);
        assert_eq!(t.next_hop(NodeId(9)), Some(NodeId(4)));
        t.on_own_packet_returned(None);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn iteration_is_in_address_order() {
        let mut t = table(90);
        for o in [30, 10, 20] {
            t.learn(NodeId(o), NodeId(4), PARENT);
        }
        let order: Vec<u16> = t.iter().map(|(d, _, _)| d.0).collect();
        assert_eq!(order, vec![10, 20, 30]);
    }
}
