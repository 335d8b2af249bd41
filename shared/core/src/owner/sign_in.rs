//! The dashboard's sign-in link (issue 15 item 2): a single-use token mailed to the owner's
//! address, stored only as its hash, good for [`SIGN_IN_LINK_LIFETIME`]. Redeeming it is one
//! conditional write, so a link opened twice signs in once.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, Email};

/// How long a mailed link signs in.
pub const SIGN_IN_LINK_LIFETIME: SignedDuration = SignedDuration::from_mins(15);
/// Links mailed for one account in one hour, at most (the rest are not sent, silently: the
/// page says the same whatever happens).
pub const SIGN_IN_LINKS_PER_HOUR: u32 = 5;

/// A link as stored: the token's hash, never the token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignInLink {
    pub token_hash: String,
    pub account_id: AccountId,
    pub expires_at: Timestamp,
}

/// The key the owner-address index files an address under: the whole address in lower case
/// (mail providers match the local part without case too).
pub fn owner_email_key(email: &Email) -> String {
    email.as_str().to_ascii_lowercase()
}

/// The hourly counter a link is counted in (with the UTC day as the counter's date).
pub fn hourly_counter(now: Timestamp) -> String {
    format!("sign_in_link_{}", now.to_zoned(jiff::tz::TimeZone::UTC).strftime("%H"))
}
