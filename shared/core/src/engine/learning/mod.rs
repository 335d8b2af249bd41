//! What the agent learns and reports: analysis, attribution of outcomes, suggestions and
//! memories, the cross-tenant network, the scorecard and the metrics.

use super::*;

pub(super) mod analysis;
pub(super) mod attribution;
pub(super) mod memories;
pub(super) mod network;
pub(super) mod observability;
pub(super) mod scorecard;
pub(super) mod suggestions;
