//! A text number belongs to one account (issue 47): the origination identity an owner names
//! in `sms.origination_identity` is claimed for the account before the settings are saved
//! (another account's is refused, `sms_number_taken`, 409, and nothing changes), given up when
//! the owner names another or none, and checked again before each text leaves; a member's
//! text is read by the number's owner only ([`Engine::number_owner`]).

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::sms::{NumberClaim, number_key};
use crate::task::error::EngineError;

fn taken(number: &str) -> EngineError {
    EngineError::Taken(InvalidInput::new(
        "sms_number_taken",
        format!("{number} is another account's text number; name a number your gym was given"),
    ))
}

impl Engine {
    /// Claim `identity` for `account` (its own claim again changes nothing); another
    /// account's is refused with `sms_number_taken`.
    pub(crate) async fn claim_sms_number(&self, account: AccountId, identity: &str) -> Result<(), EngineError> {
        let claim = NumberClaim {
            number: number_key(identity),
            account,
            claimed_at: self.clock.now(),
        };
        match self.store.claim_number(&claim).await {
            Ok(()) => Ok(()),
            Err(StoreError::Conflict(Conflict::AlreadyExists)) => Err(taken(identity.trim())),
            Err(e) => Err(e.into()),
        }
    }

    /// Give up `identity`'s claim if `account` holds it (a number the owner no longer names).
    pub(crate) async fn release_sms_number(&self, account: AccountId, identity: &str) {
        if let Err(e) = self.store.release_number(&number_key(identity), account).await {
            tracing::warn!(account = %account, error = %e, "text number not released");
        }
    }

    /// Whether `account` may text from `identity` now: its claim is the account's, or the
    /// number is unclaimed (named before numbers were claimed) and this claims it.
    pub(in crate::engine) async fn holds_sms_number(&self, account: AccountId, identity: &str) -> Result<bool, EngineError> {
        match self.store.number_claim(&number_key(identity)).await? {
            Some(claim) => Ok(claim.account == account),
            None => match self.claim_sms_number(account, identity).await {
                Ok(()) => Ok(true),
                Err(EngineError::Taken(_)) => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    /// The account a text to `identity` belongs to: the number's claim, or — for a number
    /// named before numbers were claimed — none, so only an account that names it reads it.
    pub(in crate::engine) async fn number_owner(&self, identity: &str) -> Result<Option<AccountId>, EngineError> {
        Ok(self.store.number_claim(&number_key(identity)).await?.map(|c| c.account))
    }
}
