//! The ways a message leaves: the message templates of mail, text messages, and the signed
//! webhooks other programs receive.

use super::*;

pub(super) mod messages;
pub(super) mod sms;
pub(super) mod webhooks;
