//! The owner seen: each use of the API or the dashboard is written to the
//! account at most hourly ([`SEEN_EVERY`]; a process remembers its last write, so most
//! requests read nothing more). An owner back after a day or more gets one "while you were
//! away" notice: how many notices waited in the feed, the first few by title.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::Timestamp;

use super::Engine;
use super::owner_notices::NoticeDraft;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::owner_notice::{NoticeDelivery, NoticeKind};
use crate::owner::presence::{ACTIVE_FOR, SEEN_EVERY};
use crate::task::error::EngineError;

/// The notices one summary reads, and names.
const SUMMARY_READ: usize = 50;
const SUMMARY_NAMED: usize = 5;

/// When this process last wrote each account's `last_seen_at`.
static WRITTEN: Mutex<Option<HashMap<AccountId, Timestamp>>> = Mutex::new(None);

impl Engine {
    /// The owner used the API or the dashboard now.
    pub async fn note_owner_seen(&self, account: AccountId) -> Result<(), EngineError> {
        let now = self.clock.now();
        let recently = |at: Timestamp| at <= now && now.duration_since(at) < SEEN_EVERY;
        let remembered = WRITTEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&account).copied());
        if remembered.is_some_and(recently) {
            return Ok(());
        }
        for _ in 0..3 {
            let Some(mut stored) = self.store.get_account(account).await? else {
                return Ok(());
            };
            let before = stored.last_seen_at;
            if before.is_some_and(recently) {
                remember(account, before.unwrap_or(now));
                return Ok(());
            }
            stored.last_seen_at = Some(now);
            stored.version += 1;
            match self.store.save_account(&stored).await {
                Ok(()) => {
                    remember(account, now);
                    if let Some(since) = before.filter(|b| now.duration_since(*b) >= ACTIVE_FOR) {
                        self.while_away(account, since).await;
                    }
                    return Ok(());
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// One summary of what waited in the feed since `since`; none when nothing did.
    async fn while_away(&self, account: AccountId, since: Timestamp) {
        let notices = match self.store.list_notices(account, SUMMARY_READ, None).await {
            Ok((notices, _)) => notices,
            Err(e) => {
                tracing::error!(account = %account, error = %e, "while-away summary not made");
                return;
            }
        };
        let waited: Vec<_> = notices
            .iter()
            .filter(|n| {
                n.at > since && n.delivery != NoticeDelivery::Email && !matches!(n.kind, NoticeKind::WhileAway | NoticeKind::DailyDigest)
            })
            .collect();
        if waited.is_empty() {
            return;
        }
        let days = self.clock.now().duration_since(since).as_hours().max(0) / 24;
        let mut detail = format!(
            "While you were away ({}), {} waited in your notifications:\n",
            crate::kernel::plural::count(days, "day", "days"),
            crate::kernel::plural::count_of(waited.len(), "update", "updates")
        );
        for n in waited.iter().take(SUMMARY_NAMED) {
            detail.push_str(&format!("- {}\n", n.title));
        }
        if waited.len() > SUMMARY_NAMED {
            detail.push_str(&format!("… and {} more.\n", waited.len() - SUMMARY_NAMED));
        }
        detail.push_str(&format!("See them all: {}", self.dashboard_url("/notifications")));
        let draft = NoticeDraft {
            kind: NoticeKind::WhileAway,
            task_id: None,
            member_id: None,
            title: format!(
                "While you were away: {}",
                crate::kernel::plural::count_of(waited.len(), "update", "updates")
            ),
            detail,
        };
        self.notify_owner_after(account, draft, false).await;
    }
}

fn remember(account: AccountId, at: Timestamp) {
    WRITTEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(account, at);
}
