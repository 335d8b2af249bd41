//! A task's life: created, then worked step by step — drafted behind the AI gates on fresh
//! facts, reserved and sent exactly once, split into subtasks, escalated — with the step kinds
//! of each task category.

use super::*;

pub(super) mod actions;
pub(super) mod ai;
pub(super) mod autonomy;
pub(super) mod categories;
pub(super) mod decisions;
pub(super) mod escalation;
pub(super) mod freshness;
pub(super) mod member_tasks;
pub(super) mod reservation;
pub(super) mod send;
pub(super) mod subtasks;
pub(super) mod tasks;
pub(super) mod work;
