//! Stop means stop: a member who asks to stop — in a reply, through the
//! unsubscribe link, or by the owner's hand — is suppressed, and every active task about them
//! is cancelled; nothing more is sent to them, not even an acknowledgment. The owner hears of
//! it. Whether a reply says stop is decided in `crate::conversation::reply`; the send path refuses a
//! suppressed address in `crate::rails::step`. Also the list from the outside: whom an unsubscribe
//! link speaks for, and an owner lifting a suppression.

use jiff::Timestamp;

use super::StepOutcome;
use super::replies::system_message;
use super::{Engine, boxed};
use crate::conversation::reply::{Blocker, Stop};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};
use crate::owner::account::Account;
use crate::ports::TaskQuery;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::transition::{Why, transition};
use crate::task::{Task, TaskStatus};

/// Who is being suppressed, and why.
pub(in crate::engine) struct Suppression<'a> {
    /// The account as the stop's path read it: its owner's notice, and whether the cancelled
    /// tasks' webhook events have an endpoint to reach.
    pub account: &'a Account,
    pub email: &'a Email,
    pub member: Option<&'a MemberId>,
    pub reason: &'a str,
    /// A task of the member's that stays open (a threat's: escalated to the owner).
    pub keep: Option<TaskId>,
}

impl Engine {
    /// Member-level stop: suppress the address and cancel every active task of the
    /// member, this one included; nothing is sent to them, not even an acknowledgment.
    pub(in crate::engine) async fn honour_stop(
        &self,
        account: &Account,
        task: Task,
        stop: &Stop,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        boxed(async move {
            let Some(email) = task.member.email.clone() else {
                return self
                    .escalate(Some(account), task, &[], now, Reason::OptOutWithoutAddress, Blocker::default())
                    .await;
            };
            let why = Why::new(Reason::MemberOptedOut).outcome("opted_out").detail(stop.detail.clone());
            let (next, log) = transition(&task, TaskStatus::Cancelled, now, why)?;
            let mut commit = TaskCommit::new(next, log).webhooks_for(Some(account));
            commit.messages.push(system_message(
                now,
                "The member asked to stop: they are suppressed and every task about them is cancelled. No reply is sent.",
            ));
            self.store.commit(&commit).await?;
            self.publish_closed(&commit).await;
            self.suppress_member(Suppression {
                account,
                email: &email,
                member: Some(&task.member.id),
                reason: stop.source,
                keep: None,
            })
            .await?;
            Ok(StepOutcome::Moved {
                to: TaskStatus::Cancelled,
                reason: Reason::MemberOptedOut,
            })
        })
        .await
    }

    /// Suppress an address from the outside (unsubscribe link, owner): the same member-level
    /// stop as an opt-out reply. Returns how many tasks were cancelled.
    pub async fn suppress(&self, account: AccountId, email: &Email, reason: &str) -> Result<usize, EngineError> {
        boxed(async move {
            // The reason reaches the owner's notice title (a mail subject): one short line.
            crate::kernel::text::single_line("invalid_reason", "reason", reason)?;
            crate::kernel::text::bounded_text(
                "invalid_reason",
                "reason",
                reason,
                crate::kernel::limits::MAX_SUPPRESSION_REASON_CHARS,
            )?;
            // Read once: the owner's notice, and the cancelled tasks' webhook rule.
            let account = self.account(account).await?;
            self.suppress_member(Suppression {
                account: &account,
                email,
                member: None,
                reason,
                keep: None,
            })
            .await
        })
        .await
    }

    pub(in crate::engine) async fn suppress_member(&self, who: Suppression<'_>) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let account = who.account.id;
        self.store.put_suppression(account, who.email, who.reason, now).await?;
        let cancelled = match who.member {
            // The member is known: their own open tasks, through the guards.
            Some(member) => {
                self.cancel_all(self.store.member_active_tasks(account, member).await?, &who)
                    .await?
            }
            None => self.cancel_all_by_address(&who).await?,
        };
        tracing::info!(account = %account, cancelled, reason = who.reason, "member suppressed");
        // The owner knows the member by the address the stop is about, never by an id.
        let why = crate::task::reason_words::stop_in_words(who.reason);
        let draft = super::owner_notices::NoticeDraft {
            kind: crate::owner::owner_notice::NoticeKind::MemberOptedOut,
            task_id: None,
            member_id: who.member.cloned(),
            title: format!("{} will get no more mail: {why}", who.email),
            detail: match cancelled {
                0 => format!("Nothing more is sent to {}.", who.email),
                n => format!(
                    "Nothing more is sent to {}; {} about them {} closed.",
                    who.email,
                    crate::kernel::plural::count_of(n, "open task", "open tasks"),
                    if n == 1 { "was" } else { "were" }
                ),
            },
        };
        if let Err(e) = self.notify_owner_of(who.account, draft, false).await {
            tracing::error!(account = %account, error = %e, "owner notice of a suppression not recorded");
        }
        Ok(cancelled)
    }

    /// Cancel every active task of `tasks` that names the suppressed address.
    async fn cancel_all(&self, tasks: Vec<Task>, who: &Suppression<'_>) -> Result<usize, EngineError> {
        let mut cancelled = 0;
        for task in tasks {
            let kept = who.keep == Some(task.id);
            let why = Why::new(Reason::MemberOptedOut)
                .outcome("opted_out")
                .detail(format!("member-level stop ({})", who.reason));
            if !kept
                && task.is_active()
                && task.member.email.as_ref() == Some(who.email)
                && self.cancel_stopped(who.account, task, why).await?
            {
                cancelled += 1;
            }
        }
        Ok(cancelled)
    }

    /// Only the address is known (an owner's or an unsubscribe's stop): every task that names
    /// it, in a rare and owner-initiated scan of the account's tasks.
    async fn cancel_all_by_address(&self, who: &Suppression<'_>) -> Result<usize, EngineError> {
        let mut cancelled = 0;
        let mut cursor = None;
        loop {
            let query = TaskQuery {
                status: None,
                member_id: None,
                limit: 200,
                cursor,
            };
            let (tasks, next) = self.store.list_tasks(who.account.id, &query).await?;
            cancelled += self.cancel_all(tasks, who).await?;
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(cancelled),
            }
        }
    }

    /// Cancel one task of a member who asked to stop (by mail, link, the owner's hand or a
    /// text) for `why`, re-reading on a lost race; `false` if it was no longer active.
    pub(in crate::engine) async fn cancel_stopped(&self, account: &Account, task: Task, why: Why) -> Result<bool, EngineError> {
        let mut task = task;
        for _ in 0..4 {
            if !task.is_active() {
                return Ok(false);
            }
            let now = self.clock.now();
            let (next, log) = transition(&task, TaskStatus::Cancelled, now, why.clone())?;
            let commit = TaskCommit::new(next, log).webhooks_for(Some(account));
            match self.store.commit(&commit).await {
                Ok(()) => {
                    self.publish_closed(&commit).await;
                    return Ok(true);
                }
                Err(StoreError::Conflict(Conflict::Version)) => match self.store.get_task(task.account_id, task.id).await? {
                    Some(t) => task = t,
                    None => return Ok(false),
                },
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }
}

impl Engine {
    /// The account and address an unsubscribe link was signed for; `None` if the token is
    /// not one this deployment signed.
    pub fn unsubscribe_target(&self, token: &str) -> Option<(AccountId, Email)> {
        self.config.signing_key.verify_unsubscribe_token(token)
    }

    /// Take an address off the account's suppression list; `false` if it was not on it.
    pub async fn remove_suppression(&self, account: AccountId, email: &Email) -> Result<bool, EngineError> {
        Ok(self.store.delete_suppression(account, email).await?)
    }
}
