//! The daily choice of each account's send hours from what its sends led to
//! (`learning/send_hours.rs` chooses, `owner/send_hours.rs` holds the numbers,
//! `rails/window.rs` plans touches by them). Off the hot paths: once a day per account, one read
//! of its learning records of the window and one write of its settings (the choice and when it
//! was made).

use jiff::SignedDuration;
use serde::Serialize;

use super::Engine;
use crate::kernel::ids::AccountId;
use crate::learning::send_hours::choose;
use crate::owner::account::Account;
use crate::owner::send_hours::{CHOOSE_EVERY_HOURS, SEND_HOURS_WINDOW_DAYS, SendHours};
use crate::task::error::EngineError;

/// The learning records one choice reads at most (the window's oldest first).
const MAX_READ: usize = 2_000;

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SendHoursRun {
    pub checked: usize,
    pub chosen: usize,
    pub failed: usize,
}

impl Engine {
    /// Every account whose choice is a day old or was never made, chosen again.
    pub async fn choose_send_hours(&self) -> Result<SendHoursRun, EngineError> {
        let now = self.clock.now();
        let mut run = SendHoursRun::default();
        for account in self.accounts_at_work().await? {
            let due = account
                .settings
                .send_hours
                .as_ref()
                .is_none_or(|h| now.duration_since(h.checked_at) >= SignedDuration::from_hours(CHOOSE_EVERY_HOURS));
            if !due {
                continue;
            }
            run.checked += 1;
            match self.choose_account_send_hours(&account).await {
                Ok(hours) if hours.first_touch.is_some() => run.chosen += 1,
                Ok(_) => {}
                Err(e) => {
                    run.failed += 1;
                    tracing::warn!(account = %account.id, error = %e, "send hours not chosen this run");
                }
            }
        }
        Ok(run)
    }

    /// The account's send hours chosen now from its last [`SEND_HOURS_WINDOW_DAYS`] days.
    pub async fn choose_send_hours_of(&self, account: AccountId) -> Result<SendHours, EngineError> {
        let account = self.account(account).await?;
        self.choose_account_send_hours(&account).await
    }

    async fn choose_account_send_hours(&self, account: &Account) -> Result<SendHours, EngineError> {
        let now = self.clock.now();
        let since = now - SignedDuration::from_hours(24 * SEND_HOURS_WINDOW_DAYS);
        let records: Vec<_> = self
            .store
            .recent_outcomes(account.id, since, MAX_READ)
            .await?
            .into_iter()
            .map(|r| r.shared)
            .collect();
        let chosen = choose(&records, &account.settings, now);
        let moved =
            account.settings.send_hours.as_ref().map(|h| (h.first_touch, h.follow_up)) != Some((chosen.first_touch, chosen.follow_up));
        let saved = chosen.clone();
        self.change_account(account.id, |a| {
            a.settings.send_hours = Some(saved.clone());
            Ok(true)
        })
        .await?;
        if moved {
            tracing::info!(account = %account.id, first = ?chosen.first_touch, follow_up = ?chosen.follow_up, sends = chosen.sends, "send hours chosen");
        }
        Ok(chosen)
    }
}
