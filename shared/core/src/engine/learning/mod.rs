//! What the agent learns and reports: analysis, attribution of outcomes, suggestions and
//! memories, the cross-tenant network, the scorecard and the metrics; the lift against the
//! holdout, experiments on messages and the send hours chosen from outcomes.

use super::*;

pub(super) mod analysis;
pub(super) mod attribution;
pub(super) mod autopilot;
pub(super) mod experiments;
pub(super) mod lift;
pub(super) mod memories;
pub(super) mod network;
pub(super) mod observability;
pub(super) mod scorecard;
pub(super) mod send_hours;
pub(super) mod suggestions;
