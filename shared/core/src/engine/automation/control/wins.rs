//! Good news: a task whose goal was reached — a member back, a payment recovered — reaches
//! the owner as a short notice when what opened it (a recurring template, a trigger row of
//! the owner's or a built-in one) has a notify policy that tells wins (`always`, `on_win`).
//! `on_change` and `never` say nothing of it. Non-critical: it waits out the quiet hours and,
//! while the owner is away, the feed keeps it for their return.

use super::super::Engine;
use super::super::owner_notices::NoticeDraft;
use crate::owner::owner_notice::NoticeKind;
use crate::owner::trigger::{Notify, TaskSource, task_source};
use crate::task::Task;
use crate::task::error::EngineError;
use crate::task::task_type::{self, OutcomeKind};

/// The title of a win's notice starts with it (the feed and the mail).
pub const GOOD_NEWS: &str = "Good news";

impl Engine {
    /// `task` just reached its goal with `outcome`: tell the owner if its source's policy asks.
    /// Trouble is logged: the task is closed either way.
    pub(crate) async fn tell_win(&self, task: &Task, outcome: &str) {
        let def = task_type::definition(&task.task_type);
        let Some(reached) = def.outcome(outcome) else { return };
        // A held-out member came back on their own: not Openloop's news.
        if reached.kind != OutcomeKind::Positive || task.is_held_out() {
            return;
        }
        let Some(source) = task_source(&task.task_type, task.trigger_type, &task.trigger_context) else {
            return;
        };
        let policy = match self.notify_policy_of(task, &source).await {
            Ok(policy) => policy,
            Err(e) => {
                tracing::warn!(task = %task.id, error = %e, "a win's notify policy not read; the owner is not told");
                return;
            }
        };
        let Some((notify, from)) = policy else { return };
        if !notify.tells_win() {
            return;
        }
        let name = task.member.label();
        let draft = NoticeDraft {
            kind: NoticeKind::ActionMessage,
            task_id: Some(task.id),
            member_id: Some(task.member.id.clone()),
            title: format!("{GOOD_NEWS}: {name} — {}", reached.label.to_lowercase()),
            detail: format!("{} ({from}).", reached.description),
        };
        self.notify_owner_after(task.account_id, draft, false).await;
    }

    /// The notify policy of what opened `task`, with words for it; `None` if it is gone.
    async fn notify_policy_of(&self, task: &Task, source: &TaskSource) -> Result<Option<(Notify, String)>, EngineError> {
        Ok(match source {
            TaskSource::Template(id) => self
                .store
                .list_templates(task.account_id)
                .await?
                .into_iter()
                .find(|t| t.id == *id)
                .map(|t| (t.notify, format!("your {} schedule", t.task_type.replace('_', " ")))),
            TaskSource::Row(id) => self.store.trigger_book(task.account_id).await?.row(id).map(|row| {
                let words = match (row.builtin, row.label) {
                    (true, Some(label)) => format!("built-in trigger: {label}"),
                    _ => format!("your trigger on {}", row.event),
                };
                (row.notify, words)
            }),
        })
    }
}
