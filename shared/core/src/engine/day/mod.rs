//! The owner's day: the morning brief, the to-dos and call list, the mail's action links, conversations in progress,
//! the churn report, a task reopened, a plan edited, and the owner's presence.

use super::*;

pub(super) mod brief;
pub(super) mod conversations;
pub(super) mod links;
pub(super) mod plans;
pub(super) mod presence;
pub(super) mod reopen;
pub(super) mod reports;
pub(super) mod todos;
