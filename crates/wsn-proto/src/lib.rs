//! Sans-IO protocol cores and node agents of the `wsn` toolkit.
//!
//! Nothing in this crate reads a clock, opens a socket, spawns a thread or touches a file: time
//! comes in as [`time::Instant`] arguments and randomness through the caller's context. The same
//! code therefore runs in the simulator (`wsn-sim`) and, later, in a real daemon.
//!
//! Two boundaries (see ARCHITECTURE.md of the project):
//! - the **link boundary** ([`agent`]): a node agent owns forwarding on one node and talks to its
//!   MAC in frames; [`forwarder::CollectionForwarder`] is the generic collection agent;
//! - the **endpoint boundary** (datagrams): end-to-end protocols run on top of a collection agent.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod agent;
pub mod forwarder;
pub mod ifrc;
pub mod rcrt;
pub mod time;

#[cfg(test)]
mod test_ctx;

pub use wsn_wire::NodeId;

/// Which behaviour a protocol core follows where its paper and its authors' code differ (each
/// protocol module says what the two mean for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// The paper's algorithm and constants (the default).
    #[default]
    Paper,
    /// The authors' reference code.
    ReferenceCode,
}

impl core::fmt::Display for Profile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Profile::Paper => "paper",
            Profile::ReferenceCode => "reference-code",
        })
    }
}
