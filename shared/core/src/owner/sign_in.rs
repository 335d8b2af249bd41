//! The dashboard's sign-in link: a single-use token mailed to the owner's
//! address, stored only as its hash, good for [`SIGN_IN_LINK_LIFETIME`]. Redeeming it is one
//! conditional write, so a link opened twice signs in once.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, Email};

/// How long a mailed link signs in.
pub const SIGN_IN_LINK_LIFETIME: SignedDuration = SignedDuration::from_mins(15);
/// Links mailed for one account in one hour, at most (the rest are not sent, silently: the
/// page says the same whatever happens) — except that a requester's first link of the hour
/// always goes, so strangers asking for the owner's address cannot lock the owner out.
pub const SIGN_IN_LINKS_PER_HOUR: u32 = 20;
/// Links one requester (by network address) may have mailed for one account in one hour.
pub const SIGN_IN_LINKS_PER_REQUESTER_PER_HOUR: u32 = 3;

/// Whether a link may be mailed, from the requester's count this hour (with this one; `None`:
/// over its allowance) and the account's (`None`: over it): within both, or the requester's
/// first of the hour whatever the account's.
pub fn may_mail(requester_count: Option<u32>, account_count: Option<u32>) -> bool {
    match requester_count {
        None => false,
        Some(1) => true,
        Some(_) => account_count.is_some(),
    }
}

/// The hourly counter of one requester's links (the requester hashed: no address is stored).
pub fn requester_counter(now: Timestamp, requester: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(requester.as_bytes());
    let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{}_by_{short}", hourly_counter(now))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requesters_first_link_of_the_hour_always_goes() {
        assert!(may_mail(Some(1), None), "the account's allowance used up by others");
        assert!(may_mail(Some(2), Some(7)));
        assert!(!may_mail(Some(2), None));
        assert!(!may_mail(None, Some(1)), "over the requester's own allowance");
        let at = Timestamp::UNIX_EPOCH;
        assert_ne!(requester_counter(at, "203.0.113.9"), requester_counter(at, "198.51.100.7"));
        assert!(!requester_counter(at, "203.0.113.9").contains("203"), "no address stored");
    }
}
