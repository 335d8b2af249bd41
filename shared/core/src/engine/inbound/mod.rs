//! What arrives from outside: a member's reply, mail events (bounces, complaints), signals and
//! PushPress deliveries, and the stops, suppressions and threats they carry.

use super::*;

pub(super) mod mail_events;
pub(super) mod owner_turn;
pub(super) mod pushpress;
pub(super) mod replies;
pub(super) mod signals;
pub(super) mod suppression;
pub(super) mod threats;
