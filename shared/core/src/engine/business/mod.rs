//! The business and its owner: the account and its settings, sign-in, the sending domain, the
//! PushPress connection and members, the owner's notices and feedback, the credentials; a
//! member's export and erasure, and an account's removal.

use super::*;

pub(super) mod account_removal;
pub(super) mod accounts;
pub(super) mod connection;
pub(super) mod credentials;
pub(super) mod erasure;
pub(super) mod feedback;
pub(super) mod members;
pub(super) mod owner_notices;
pub(super) mod sending_domains;
pub(super) mod sign_in;
