//! A gym's own sending domain: the owner names it in settings, the
//! domain is claimed for the account (one conditional write; the platform's own domains and
//! another account's are refused with 409), the identity is created through the
//! [`SendingDomains`] port with the DNS records to publish, and the provider and the DNS are
//! asked again — on a settings read, and by the hourly run — until SES says the domain is
//! verified and the account's ownership record is found. Mail leaves from the shared domain
//! until then ([`crate::owner::account::Account::sender_address`]); a domain in use is checked
//! again daily, and an account whose record is gone or whose claim another account took stops
//! sending from it.
//!
//! [`SendingDomains`]: crate::ports::SendingDomains

use jiff::Timestamp;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::kernel::limits::{DOMAIN_OWNERSHIP_RECHECK, SENDING_DOMAIN_RECHECK};
use crate::owner::account::Account;
use crate::owner::deliverability::{DomainClaim, DomainStatus, SendingDomain, is_platform_domain, proves_ownership};
use crate::task::error::EngineError;

fn taken(domain: &str) -> EngineError {
    EngineError::Taken(InvalidInput::new(
        "sending_domain_taken",
        format!("{domain} is another account's sending domain; name a domain your gym owns"),
    ))
}

/// Whether the domain is due to be asked about again: a domain in use daily, one that is not
/// yet every [`SENDING_DOMAIN_RECHECK`].
fn due(current: &SendingDomain, now: Timestamp) -> bool {
    match current.proven_at {
        Some(proven) if current.sends_from_domain() => now.duration_since(proven) >= DOMAIN_OWNERSHIP_RECHECK,
        _ => now.duration_since(current.checked_at) >= SENDING_DOMAIN_RECHECK,
    }
}

impl Engine {
    /// The platform's own domains: the shared sender's, the reply addresses', the public site's.
    fn platform_domains(&self) -> Vec<String> {
        let mut domains = vec![self.config.reply_domain.clone()];
        if let Some((_, domain)) = self.config.from_email.as_str().rsplit_once('@') {
            domains.push(domain.to_owned());
        }
        let host = self.config.public_url.split("://").nth(1).unwrap_or_default();
        let host = host.split(['/', ':', '?']).next().unwrap_or_default();
        if host.contains('.') {
            domains.push(host.to_owned());
        }
        domains
    }

    /// The token `account` publishes to prove `domain` is its own.
    pub(crate) fn ownership_token(&self, account: AccountId, domain: &str) -> String {
        self.config.signing_key.domain_ownership_token(&account, domain)
    }

    /// Claim `domain` for `account` before the account names it. The platform's domains and
    /// one another account holds are refused (`sending_domain_taken`, 409).
    pub(crate) async fn claim_sending_domain(&self, account: AccountId, domain: &str) -> Result<(), EngineError> {
        let platform = self.platform_domains();
        if is_platform_domain(domain, &platform.iter().map(String::as_str).collect::<Vec<_>>()) {
            return Err(EngineError::Taken(InvalidInput::new(
                "sending_domain_taken",
                format!("{domain} is Openloop's own domain; name a domain your gym owns"),
            )));
        }
        let proven_at = self
            .store
            .domain_claim(domain)
            .await?
            .filter(|c| c.account == account)
            .and_then(|c| c.proven_at);
        let claim = DomainClaim {
            domain: domain.to_owned(),
            account,
            claimed_at: self.clock.now(),
            proven_at,
        };
        match self.store.claim_domain(&claim).await {
            Ok(()) => Ok(()),
            Err(StoreError::Conflict(Conflict::AlreadyExists)) => Err(taken(domain)),
            Err(e) => Err(e.into()),
        }
    }

    /// Give up `domain`'s claim if `account` holds it (a domain the owner no longer names).
    pub(crate) async fn release_sending_domain(&self, account: AccountId, domain: &str) {
        if let Err(e) = self.store.release_domain(domain, account).await {
            tracing::warn!(account = %account, domain, error = %e, "sending domain not released");
        }
    }

    /// The account, its sending domain asked about again when due (`force`: now): its claim,
    /// its ownership record, and the provider. A provider or resolver that fails is noted on
    /// the domain, never an error: the shared domain serves.
    pub(crate) async fn check_sending_domain(&self, account: Account, force: bool) -> Result<Account, EngineError> {
        let (Some(port), Some(current)) = (&self.sending_domains, account.sending_identity.clone()) else {
            return Ok(account);
        };
        let now = self.clock.now();
        if !force && !due(&current, now) {
            return Ok(account);
        }
        let mut next = SendingDomain {
            checked_at: now,
            error: None,
            ..current.clone()
        };
        if next.ownership_token.is_empty() {
            next.ownership_token = self.ownership_token(account.id, &next.domain);
        }

        // The claim: another account's means this one lost the domain.
        let claim = self.store.domain_claim(&next.domain).await?;
        if claim.as_ref().is_some_and(|c| c.account != account.id && !c.may_be_taken(now)) {
            next.status = DomainStatus::Lost;
            next.proven_at = None;
            return self.save_sending_domain(account, current, next).await;
        }
        if next.status == DomainStatus::Lost {
            next.status = DomainStatus::NotCreated;
        }

        // Ownership: the account's own token in the domain's TXT record.
        if let Some(dns) = &self.dns {
            match dns.txt(&next.ownership_record().name).await {
                Ok(found) => next.proven_at = proves_ownership(&found, &next.ownership_token).then_some(now),
                Err(e) => {
                    tracing::warn!(account = %account.id, domain = %next.domain, error = %e, "ownership record not read");
                    next.error = Some(e.to_string());
                }
            }
        }
        let ours = claim.as_ref().filter(|c| c.account == account.id);
        let claimed_at = match (ours, next.proven_at, current.proven_at) {
            // Proof lost: the hold against others starts again now.
            (_, None, Some(_)) => now,
            (Some(c), _, _) => c.claimed_at,
            (None, _, _) => now,
        };
        let write = DomainClaim {
            domain: next.domain.clone(),
            account: account.id,
            claimed_at,
            proven_at: next.proven_at,
        };
        if ours != Some(&write) {
            match self.store.claim_domain(&write).await {
                Ok(()) => {}
                Err(StoreError::Conflict(Conflict::AlreadyExists)) => {
                    next.status = DomainStatus::Lost;
                    next.proven_at = None;
                    return self.save_sending_domain(account, current, next).await;
                }
                Err(e) => return Err(e.into()),
            }
        }

        // The provider: its identity created, then read until it is verified.
        let asked = match next.status {
            DomainStatus::NotCreated => port.create_identity(&next.domain).await.map(Some),
            _ => port.identity(&next.domain).await,
        };
        next = match asked {
            Ok(Some(identity)) => SendingDomain {
                error: next.error.clone(),
                ..next.seen(&identity, now)
            },
            // The identity is gone (deleted by hand?): create it again next time.
            Ok(None) => SendingDomain {
                status: DomainStatus::NotCreated,
                ..next
            },
            Err(e) => {
                tracing::warn!(account = %account.id, domain = %next.domain, error = %e, "sending domain not checked");
                SendingDomain {
                    error: Some(e.to_string()),
                    ..next
                }
            }
        };
        self.save_sending_domain(account, current, next).await
    }

    async fn save_sending_domain(&self, account: Account, current: SendingDomain, next: SendingDomain) -> Result<Account, EngineError> {
        if next.status != current.status || next.sends_from_domain() != current.sends_from_domain() {
            tracing::info!(account = %account.id, domain = %next.domain, status = ?next.status, sends_from_domain = next.sends_from_domain(), "sending domain changed");
        }
        self.change_account(account.id, |stored| {
            // Only over the same domain: the owner may have named another meanwhile.
            if stored.sending_identity.as_ref().map(|i| &i.domain) != Some(&next.domain) {
                return Ok(false);
            }
            stored.sending_identity = Some(next.clone());
            Ok(true)
        })
        .await
    }

    /// The account as the owner's settings show it: its sending domain checked if due.
    pub async fn account_with_sending_domain(&self, id: AccountId) -> Result<Account, EngineError> {
        let account = self.account(id).await?;
        self.check_sending_domain(account, false).await
    }

    /// The hourly run's part: every account with a sending domain due to be asked about again
    /// (pending ones every few minutes, ones in use daily). Returns how many were asked.
    pub async fn check_sending_domains(&self) -> Result<usize, EngineError> {
        if self.sending_domains.is_none() {
            return Ok(0);
        }
        let now = self.clock.now();
        let mut asked = 0;
        for account in self.accounts_at_work().await? {
            if account.sending_identity.as_ref().is_some_and(|i| due(i, now)) {
                let id = account.id;
                if let Err(e) = self.check_sending_domain(account, false).await {
                    tracing::warn!(account = %id, error = %e, "sending domain check failed");
                }
                asked += 1;
            }
        }
        Ok(asked)
    }
}
