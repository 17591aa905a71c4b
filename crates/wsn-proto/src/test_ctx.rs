//! A routing context for unit tests: a fixed parent, a fixed reverse path (none by default),
//! the reverse-path learning and own-packet-returned calls recorded, and a small deterministic
//! random sequence.

use alloc::vec::Vec;

use crate::agent::LinkCtx;
use crate::NodeId;

/// See the module docs.
pub(crate) struct TestCtx {
    /// This node.
    pub me: NodeId,
    /// Its parent in every tree.
    pub parent: Option<NodeId>,
    /// `(origin, previous hop)` of every `learn_reverse` call.
    pub learned: Vec<(NodeId, NodeId)>,
    /// The tree (sink) of every `own_packet_returned` call.
    pub returned: Vec<NodeId>,
    /// The next hop down the tree, to every destination (`None`: no reverse path known).
    pub down: Option<NodeId>,
    /// State of the random sequence (a 32-bit LCG).
    pub rng: u32,
}

impl TestCtx {
    /// Node `me` with parent `parent`.
    pub fn new(me: u16, parent: Option<u16>) -> TestCtx {
        TestCtx {
            me: NodeId(me),
            parent: parent.map(NodeId),
            learned: Vec::new(),
            returned: Vec::new(),
            down: None,
            rng: 1,
        }
    }
}

impl LinkCtx for TestCtx {
    fn node(&self) -> NodeId {
        self.me
    }
    fn parent(&self, _: NodeId) -> Option<NodeId> {
        self.parent
    }
    fn hop_count(&self, _: NodeId) -> Option<u8> {
        Some(1)
    }
    fn down_next_hop(&self, _: NodeId, _: NodeId) -> Option<NodeId> {
        self.down
    }
    /// Refuses, as the real table does, a packet whose origin is this node's parent (a loop).
    fn learn_reverse(&mut self, _: NodeId, origin: NodeId, prev: NodeId) -> bool {
        self.learned.push((origin, prev));
        Some(origin) != self.parent
    }
    fn own_packet_returned(&mut self, sink: NodeId) {
        self.returned.push(sink);
    }
    fn random_u32(&mut self) -> u32 {
        self.rng = self.rng.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.rng
    }
}
