//! A gym leaves: `DELETE /api/v1/accounts/{id}` (admin) removes the account and all of its
//! data in the background, and says when it is done.
//!
//! The request marks the account (`Account::removal`) in one write and answers `202`: from
//! then on it is paused, its API token signs nothing in, its dashboard sessions and mailed
//! sign-in links end, nothing arriving for it is kept (member events, PushPress deliveries),
//! and no schedule works on it. Then one step at a time on the signals queue
//! ([`AccountRemovalStep`]):
//! 1. the first step gives up what the account holds outside the table: its own sending
//!    domain's identity at the mail provider and its claim on the domain, and its claim on
//!    its text number;
//! 2. each step removes a page of the account's items (tasks with their history and reply
//!    routes, members, to-dos, loops, notices, metrics, counters, memories, endpoints…) and
//!    queues the next;
//! 3. the step that finds nothing left removes the account item and its token, last, and
//!    tells the operator (`account_removed` on the bus).
//!
//! Every step is safe to run twice: what is gone stays gone. While the account item is there
//! the removal is under way (asking again answers where it is, and queues a step again in case
//! the last one was lost); once it is gone the account is `404`. Raw inbound mail is not
//! kept past its reading (`engine/inbound/mail_events.rs`), so nothing of the account is left
//! in the mail bucket; the cross-tenant learning record names no account and stays.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::Engine;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::account::{Account, AccountRemoval};
use crate::owner::alert::{Alert, Severity};
use crate::task::error::EngineError;
use crate::task::work::QueueName;

/// Items removed per step: one query's page and its deletes, well inside a minute.
pub const REMOVAL_PAGE: usize = 200;

/// One step of an account's removal, as queued (on the signals queue).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountRemovalStep {
    pub remove_account: AccountId,
}

/// `DELETE /api/v1/accounts/{id}`: the removal under way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountRemovalView {
    pub account_id: AccountId,
    /// Always `removing`: a removed account is not found.
    pub status: &'static str,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub requested_at: Timestamp,
    /// The items removed so far.
    pub items_removed: u64,
    /// By when it is done: a day after it was asked for.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub done_by: Timestamp,
}

/// How long a removal may take, as the contract promises it.
pub const REMOVAL_WITHIN: SignedDuration = SignedDuration::from_hours(24);

impl AccountRemovalView {
    fn of(account: AccountId, removal: &AccountRemoval) -> Self {
        Self {
            account_id: account,
            status: "removing",
            requested_at: removal.requested_at,
            items_removed: removal.items_removed,
            done_by: removal.requested_at + REMOVAL_WITHIN,
        }
    }
}

/// What one step did.
#[derive(Debug, PartialEq, Eq)]
pub enum RemovalOutcome {
    /// A page removed; the next step is queued.
    Page { removed: usize },
    /// Nothing was left: the account is gone.
    Done { items_removed: u64 },
    /// The account is not there (removed already), or not being removed.
    Stale(&'static str),
}

impl Engine {
    /// Every account the schedules work on: those being removed are left alone.
    pub(in crate::engine) async fn accounts_at_work(&self) -> Result<Vec<Account>, StoreError> {
        let mut accounts = self.store.list_accounts().await?;
        accounts.retain(|a| a.removal.is_none());
        Ok(accounts)
    }

    /// `DELETE /api/v1/accounts/{id}` (see the module docs): the account stops at once and
    /// its removal is queued. Asked again while it runs, where it is (and a step queued again).
    pub async fn request_account_removal(&self, id: AccountId) -> Result<AccountRemovalView, EngineError> {
        for _ in 0..4 {
            let mut account = self.account(id).await?;
            if let Some(removal) = &account.removal {
                let view = AccountRemovalView::of(id, removal);
                self.queue_removal_step(id).await?;
                return Ok(view);
            }
            let removal = AccountRemoval {
                requested_at: self.clock.now(),
                items_removed: 0,
            };
            account.removal = Some(removal.clone());
            account.paused = true;
            // Every dashboard session ends, and no sign-in link is mailed for it any more.
            account.session_version += 1;
            account.settings.owner_email = None;
            account.version += 1;
            match self.store.save_account(&account).await {
                Ok(()) => {
                    tracing::info!(account = %id, "the account's removal was asked for");
                    self.queue_removal_step(id).await?;
                    return Ok(AccountRemovalView::of(id, &removal));
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    async fn queue_removal_step(&self, account: AccountId) -> Result<(), EngineError> {
        let step = AccountRemovalStep { remove_account: account };
        let body = serde_json::to_string(&step).map_err(|e| EngineError::Dependency(e.to_string()))?;
        self.queue
            .send(QueueName::Signals, vec![(body, SignedDuration::ZERO)])
            .await
            .map_err(|e| EngineError::Dependency(format!("the account's removal could not be queued: {e}")))
    }

    /// One step of a removal (see the module docs).
    pub async fn account_removal_step(&self, step: &AccountRemovalStep) -> Result<RemovalOutcome, EngineError> {
        let id = step.remove_account;
        let Some(account) = self.store.get_account(id).await? else {
            return Ok(RemovalOutcome::Stale("the account is gone"));
        };
        let Some(removal) = account.removal.clone() else {
            return Ok(RemovalOutcome::Stale("the account is not being removed"));
        };
        if removal.items_removed == 0 {
            self.give_up_outside_claims(&account).await?;
        }
        let removed = self.store.remove_account_items(id, REMOVAL_PAGE).await?;
        if removed > 0 {
            self.count_removed(id, removed).await?;
            self.queue_removal_step(id).await?;
            return Ok(RemovalOutcome::Page { removed });
        }
        self.store.remove_account(id).await?;
        let items_removed = removal.items_removed;
        let took = self.clock.now().duration_since(removal.requested_at);
        tracing::info!(account = %id, items_removed, minutes = took.as_mins(), "the account was removed");
        self.raise(Alert {
            code: "account_removed",
            severity: Severity::Info,
            account_id: Some(id),
            detail: format!(
                "the account and its {items_removed} items were removed, {} minutes after it was asked for",
                took.as_mins()
            ),
            action: "nothing: the gym's data is gone; only the cross-tenant learning record, which names no account, stays",
            at: self.clock.now(),
        })
        .await;
        Ok(RemovalOutcome::Done { items_removed })
    }

    /// What the account claims outside the table: its sending domain's identity and claim,
    /// its text number's claim. Each is safe to give up twice.
    async fn give_up_outside_claims(&self, account: &Account) -> Result<(), EngineError> {
        if let Some(domain) = &account.settings.sending_domain {
            let ours = self
                .store
                .domain_claim(domain)
                .await?
                .is_some_and(|claim| claim.account == account.id);
            if ours && let Some(domains) = &self.sending_domains {
                domains
                    .delete_identity(domain)
                    .await
                    .map_err(|e| EngineError::Dependency(e.to_string()))?;
            }
            self.store.release_domain(domain, account.id).await?;
        }
        if let Some(number) = &account.settings.sms.origination_identity {
            self.store
                .release_number(&crate::owner::sms::number_key(number), account.id)
                .await?;
        }
        Ok(())
    }

    /// Add `removed` to the account's count, under its version.
    async fn count_removed(&self, id: AccountId, removed: usize) -> Result<(), EngineError> {
        for _ in 0..4 {
            let Some(mut account) = self.store.get_account(id).await? else {
                return Ok(());
            };
            let Some(removal) = account.removal.as_mut() else {
                return Ok(());
            };
            removal.items_removed += removed as u64;
            account.version += 1;
            match self.store.save_account(&account).await {
                Ok(()) => return Ok(()),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }
}
