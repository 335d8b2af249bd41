//! What time brings: the tick that wakes due work and the recurring templates it spawns.

use super::*;

pub(super) mod recurring;
pub(super) mod tick;
