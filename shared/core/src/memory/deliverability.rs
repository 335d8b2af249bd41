//! [`DeliverabilityStore`] in memory: each account's bounce window (its sends counted by the
//! reservations in `tasks.rs`), the mails each address soft-bounced, and the claims on sending
//! domains and text numbers.

use async_trait::async_trait;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email};
use crate::owner::deliverability::{BounceWindow, DomainClaim};
use crate::owner::sms::NumberClaim;
use crate::ports::DeliverabilityStore;

use super::MemoryStore;

#[async_trait]
impl DeliverabilityStore for MemoryStore {
    async fn bounce_window(&self, account: AccountId) -> Result<BounceWindow, StoreError> {
        Ok(self.lock()?.bounce_windows.get(&account).cloned().unwrap_or_default())
    }

    async fn record_bounce(&self, account: AccountId, message_id: &str) -> Result<BounceWindow, StoreError> {
        let mut s = self.lock()?;
        let window = s.bounce_windows.entry(account).or_default();
        if window.record(message_id) {
            window.version += 1;
        }
        Ok(window.clone())
    }

    async fn record_soft_bounce(&self, account: AccountId, email: &Email, message_id: &str) -> Result<u32, StoreError> {
        let mut s = self.lock()?;
        let mails = s.soft_bounces.entry((account, email.clone())).or_default();
        mails.insert(message_id.to_owned());
        Ok(u32::try_from(mails.len()).unwrap_or(u32::MAX))
    }

    async fn claim_domain(&self, claim: &DomainClaim) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        match s.domain_claims.get(&claim.domain) {
            Some(held) if held.account != claim.account && !held.may_be_taken(claim.claimed_at) => {
                Err(StoreError::Conflict(Conflict::AlreadyExists))
            }
            _ => {
                s.domain_claims.insert(claim.domain.clone(), claim.clone());
                Ok(())
            }
        }
    }

    async fn domain_claim(&self, domain: &str) -> Result<Option<DomainClaim>, StoreError> {
        Ok(self.lock()?.domain_claims.get(domain).cloned())
    }

    async fn release_domain(&self, domain: &str, account: AccountId) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        if s.domain_claims.get(domain).is_some_and(|c| c.account == account) {
            s.domain_claims.remove(domain);
        }
        Ok(())
    }

    async fn claim_number(&self, claim: &NumberClaim) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        match s.number_claims.get(&claim.number) {
            Some(held) if held.account != claim.account => Err(StoreError::Conflict(Conflict::AlreadyExists)),
            Some(_) => Ok(()),
            None => {
                s.number_claims.insert(claim.number.clone(), claim.clone());
                Ok(())
            }
        }
    }

    async fn number_claim(&self, number: &str) -> Result<Option<NumberClaim>, StoreError> {
        Ok(self.lock()?.number_claims.get(number).cloned())
    }

    async fn release_number(&self, number: &str, account: AccountId) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        if s.number_claims.get(number).is_some_and(|c| c.account == account) {
            s.number_claims.remove(number);
        }
        Ok(())
    }
}
