//! The brief never nags: an item unchanged since it was listed
//! on [`MORNINGS_LISTED`] morning mails is no longer listed, only counted under "still open".
//! Each mailed brief claims one morning for each item it lists (one conditional write an item,
//! under its key of [`listed_items`]: a changed item has a new key and starts again). The
//! dashboard and the API show the whole day; only the mail counts mornings.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};

use crate::engine::Engine;
use crate::owner::account::Account;
use crate::owner::brief::{Brief, MORNINGS_LISTED, listed_items, without_stale};
use crate::task::error::EngineError;

/// The idempotency-record source of the mornings an item was listed.
const MORNINGS_SOURCE: &str = "brief_listed";
/// How long a morning is remembered: an item unchanged this long starts again.
const REMEMBERED: SignedDuration = SignedDuration::from_hours(24 * 60);

impl Engine {
    /// `brief` as this morning's mail lists it: each item claims its next morning; those that
    /// had their [`MORNINGS_LISTED`] already are counted, not listed.
    pub(crate) async fn this_mornings(&self, account: &Account, brief: Brief, now: Timestamp) -> Result<Brief, EngineError> {
        let mut stale = BTreeSet::new();
        for item in listed_items(&brief) {
            let mut listed = false;
            for morning in 1..=MORNINGS_LISTED {
                let key = format!("{}/{item}/{morning}", account.id);
                if self.store.claim_webhook(MORNINGS_SOURCE, &key, now, now + REMEMBERED).await? {
                    listed = true;
                    break;
                }
            }
            if !listed {
                stale.insert(item);
            }
        }
        Ok(without_stale(brief, &stale))
    }
}
