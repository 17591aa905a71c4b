//! IFRC glue (temporary placeholder while the IFRC core is written).
use wsn_wire::NodeId;

use crate::mac::MacConfig;
use crate::network::AgentFactory;
use crate::runner::RunError;
use crate::scenario::IfrcScenario;

/// Bytes of the IFRC header carried after the collection header.
pub const IFRC_HEADER_LEN: usize = 12;

/// Not yet available.
pub fn agent_factory(_: &IfrcScenario, _: &MacConfig, _: &[NodeId], _: &[NodeId]) -> Result<AgentFactory, RunError> {
    Err(RunError::Config("IFRC is not available in this build".into()))
}
