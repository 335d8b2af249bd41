//! What the owner automates: open loops and their deadlines, the trigger table, and the control
//! of one task or schedule (pause, resume, run now, back-off, good news on a win).

use super::*;

pub(super) mod control;
pub(super) mod loops;
pub(super) mod triggers;
