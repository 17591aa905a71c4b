//! Tree routing: MultiHopLQI route selection, the Tenet reverse-path (children) table,
//! static trees loaded from files, and the good-tree freeze.
//!
//! These are sans-IO state machines or pure functions. The engine owns the timers, turns
//! [`mhlqi::Beacon`]s into wire bytes and back, and asks these types where a packet goes:
//! - [`mhlqi::MhlqiNode`]: one node's parent in the tree rooted at one sink (spec
//!   radio-mac-routing.md §6.1, §6.4);
//! - [`reverse::ReverseTable`]: the downward route learned from forwarded upward data (§6.3);
//! - [`static_tree`]: a fixed tree read from a CSV file, for runs with frozen routes (§8.5);
//! - [`good_tree`]: the good-tree freeze, which replaces weak links when routes are frozen.

pub mod good_tree;
pub mod mhlqi;
pub mod reverse;
pub mod static_tree;

use std::path::PathBuf;

/// Why a routing input (a tree file) could not be used. Every message names the file, and the
/// line where one applies.
#[derive(Debug, thiserror::Error)]
pub enum RoutingError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid CSV, lacks a required column, or holds a bad value.
    #[error("{}:{line}: {msg}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 when the whole file is at fault).
        line: u64,
        /// What is wrong.
        msg: String,
    },
    /// A row names a parent that has no row of its own.
    #[error("{}:{line}: node {node} has parent {parent}, which is not a node of the file", path.display())]
    UnknownParent {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the row.
        line: u64,
        /// The node of the row.
        node: u16,
        /// The unknown parent.
        parent: u16,
    },
    /// Following parents from a node never reaches a root.
    #[error("{}:{line}: node {node} lies on a parent cycle", path.display())]
    Cycle {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the row of a node on the cycle.
        line: u64,
        /// A node on the cycle.
        node: u16,
    },
    /// A node's depth does not fit the 8-bit hop count.
    #[error("{}:{line}: node {node} is more than 255 hops from its root", path.display())]
    TooDeep {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the row.
        line: u64,
        /// The node.
        node: u16,
    },
    /// The `hops` column disagrees with the depth given by the parents.
    #[error("{}:{line}: node {node} has hops {given}, but its parents put it at depth {depth}", path.display())]
    HopsMismatch {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the row.
        line: u64,
        /// The node.
        node: u16,
        /// The value of the `hops` column.
        given: u64,
        /// The depth computed by walking parents.
        depth: u8,
    },
    /// Node ids must be exactly 0..N−1; this one has no row.
    #[error("{}: node {node} has no row (node ids must be 0..N-1)", path.display())]
    MissingNode {
        /// The file.
        path: PathBuf,
        /// The missing node id.
        node: u16,
    },
}
