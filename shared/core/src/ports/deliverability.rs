//! Deliverability's ports: the store's record of an account's bounces and of which
//! account holds a sending identity (a gym's own domain, its texts' number), and the mail
//! provider's sending identities (a gym's own domain). See [`crate::owner::deliverability`].

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, Email};
use crate::owner::deliverability::{BounceWindow, DomainClaim, DomainIdentity};
use crate::owner::sms::NumberClaim;

/// An account's bounces against its sends. The sends are counted by every send's reservation
/// ([`crate::task::commit::SendEffect::Reserve`] adds one, `Release` gives it back), in the
/// reservation's own transaction; bounces are recorded here, once per mail.
#[async_trait]
pub trait DeliverabilityStore: Send + Sync {
    /// The account's sends so far and its recent bounces (empty if none).
    async fn bounce_window(&self, account: AccountId) -> Result<BounceWindow, StoreError>;
    /// Record a hard bounce of our mail `message_id` at the account's current count of sends
    /// (once per mail: a repeated notification changes nothing), forgetting bounces that fell
    /// out of the window: the window after it.
    async fn record_bounce(&self, account: AccountId, message_id: &str) -> Result<BounceWindow, StoreError>;
    /// Count a soft bounce of `email` by our mail `message_id`, once per mail, atomically: how
    /// many mails to the address have soft-bounced so far.
    async fn record_soft_bounce(&self, account: AccountId, email: &Email, message_id: &str) -> Result<u32, StoreError>;

    /// Write `claim` in one conditional write: when the domain has no claim, when its claim is
    /// `claim.account`'s already (then replaced, e.g. proven), or when the standing claim
    /// [`DomainClaim::may_be_taken`] at `claim.claimed_at`. Another account's claim:
    /// `Conflict::AlreadyExists`, nothing written.
    async fn claim_domain(&self, claim: &DomainClaim) -> Result<(), StoreError>;
    /// The domain's claim, if any.
    async fn domain_claim(&self, domain: &str) -> Result<Option<DomainClaim>, StoreError>;
    /// Give the domain up, if and only if `account` holds its claim (another's is left alone).
    async fn release_domain(&self, domain: &str, account: AccountId) -> Result<(), StoreError>;

    /// Write `claim` of a text origination identity in one conditional write: when the number
    /// has no claim or its claim is `claim.account`'s already (then left as it stands).
    /// Another account's claim: `Conflict::AlreadyExists`, nothing written. A claim is never
    /// taken over (see [`NumberClaim`]).
    async fn claim_number(&self, claim: &NumberClaim) -> Result<(), StoreError>;
    /// The number's claim, if any (`number` as [`crate::owner::sms::number_key`] folds it).
    async fn number_claim(&self, number: &str) -> Result<Option<NumberClaim>, StoreError>;
    /// Give the number up, if and only if `account` holds its claim (another's is left alone).
    async fn release_number(&self, number: &str, account: AccountId) -> Result<(), StoreError>;
}

#[derive(Debug, thiserror::Error)]
#[error("sending domains unavailable: {0}")]
pub struct SendingDomainError(pub String);

/// The TXT records of a DNS name, as a resolver sees them (a gym proves a domain is its own by
/// publishing one, [`crate::owner::deliverability::ownership_record`]).
#[async_trait]
pub trait DnsTxt: Send + Sync {
    /// The TXT strings at `name` (a record's strings joined), empty when it has none or the
    /// name does not exist; an error when the resolver could not answer.
    async fn txt(&self, name: &str) -> Result<Vec<String>, SendingDomainError>;
}

/// The mail provider's sending identities (SES v2 email identities): a gym's own domain with
/// Easy DKIM and a custom MAIL FROM subdomain.
#[async_trait]
pub trait SendingDomains: Send + Sync {
    /// Create the domain's identity (Easy DKIM) and its MAIL FROM subdomain; an identity that
    /// already exists is read instead. The records to publish come back with it.
    async fn create_identity(&self, domain: &str) -> Result<DomainIdentity, SendingDomainError>;
    /// What the provider says of the domain now; `None` if it has no such identity.
    async fn identity(&self, domain: &str) -> Result<Option<DomainIdentity>, SendingDomainError>;
    /// Remove the domain's identity (its gym left); one that is not there is no error.
    async fn delete_identity(&self, domain: &str) -> Result<(), SendingDomainError>;
}
