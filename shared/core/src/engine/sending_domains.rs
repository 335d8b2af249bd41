//! A gym's own sending domain (spec §33.1 option B): the owner names it in settings, the
//! identity is created through the [`SendingDomains`] port with the DNS records to publish,
//! and the provider is asked again — on a settings read, and by the hourly run — until it says
//! the domain is verified. Mail leaves from the shared domain until then
//! ([`crate::owner::account::Account::sender_address`]).
//!
//! [`SendingDomains`]: crate::ports::SendingDomains

use super::Engine;
use crate::kernel::ids::AccountId;
use crate::kernel::limits::SENDING_DOMAIN_RECHECK;
use crate::owner::account::Account;
use crate::owner::deliverability::{DomainStatus, SendingDomain};
use crate::task::error::EngineError;

impl Engine {
    /// The account, its sending domain first asked about again when it is not verified and
    /// was last asked about more than [`SENDING_DOMAIN_RECHECK`] ago (`force`: now). A
    /// provider that fails is noted on the domain, never an error: the shared domain serves.
    pub(crate) async fn check_sending_domain(&self, account: Account, force: bool) -> Result<Account, EngineError> {
        let (Some(port), Some(current)) = (&self.sending_domains, account.sending_identity.clone()) else {
            return Ok(account);
        };
        let now = self.clock.now();
        let due = force || now.duration_since(current.checked_at) >= SENDING_DOMAIN_RECHECK;
        if current.status == DomainStatus::Verified || !due {
            return Ok(account);
        }
        let asked = match current.status {
            DomainStatus::NotCreated => port.create_identity(&current.domain).await.map(Some),
            _ => port.identity(&current.domain).await,
        };
        let next = match asked {
            Ok(Some(identity)) => current.seen(&identity, now),
            // The identity is gone (deleted by hand?): create it again next time.
            Ok(None) => SendingDomain {
                status: DomainStatus::NotCreated,
                checked_at: now,
                ..current.clone()
            },
            Err(e) => {
                tracing::warn!(account = %account.id, domain = %current.domain, error = %e, "sending domain not checked");
                SendingDomain {
                    error: Some(e.to_string()),
                    checked_at: now,
                    ..current.clone()
                }
            }
        };
        if next.status != current.status {
            tracing::info!(account = %account.id, domain = %next.domain, status = ?next.status, "sending domain status changed");
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

    /// The hourly run's part: every account whose sending domain is not verified yet is asked
    /// about again (when due). Returns how many were asked.
    pub async fn check_sending_domains(&self) -> Result<usize, EngineError> {
        if self.sending_domains.is_none() {
            return Ok(0);
        }
        let mut asked = 0;
        for account in self.store.list_accounts().await? {
            if account
                .sending_identity
                .as_ref()
                .is_some_and(|i| i.status != DomainStatus::Verified)
            {
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
