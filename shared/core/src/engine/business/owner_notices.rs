//! Telling the owner: the feed, the immediate mails and the digests. The rules are
//! in [`crate::owner::owner_notice`]; this is where notices are made, rationed, stored and mailed.
//!
//! A notice is a consequence of a decision already committed (an escalation, a late reply,
//! a suppression, a reminder), so it never undoes or fails that decision: trouble here is
//! logged and the step goes on. Mail to the owner goes through the same [`Mailer`] as mail
//! to members, but outside every member gate: it is not outreach.
//!
//! [`Mailer`]: crate::ports::Mailer

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use super::{Engine, boxed};
use crate::conversation::mail::OutboundMail;
use crate::conversation::token::OwnerReplyTo;
use crate::kernel::ids::{AccountId, Email, MemberId, TaskId, new_ulid};
use crate::kernel::limits::{self, DUE_TOLERANCE, OWNER_DIGEST_NOTICES_PER_TICK};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::owner_notice::{NoticeDelivery, NoticeKind, NoticePolicy, OwnerNotice, digest_mail, next_digest_slot};
use crate::ports::TaskQuery;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::GateReason;
use crate::task::reason::Reason;
use crate::task::{Task, TaskStatus};

/// The idempotency-record source under which the owner's daily notice budget is claimed.
const NOTICE_SOURCE: &str = "owner_notice";

/// What to tell the owner.
#[derive(Clone, Debug)]
pub(crate) struct NoticeDraft {
    pub kind: NoticeKind,
    pub task_id: Option<TaskId>,
    pub member_id: Option<MemberId>,
    pub title: String,
    pub detail: String,
}

impl NoticeDraft {
    fn about(kind: NoticeKind, task: &Task, title: String, detail: String) -> Self {
        Self {
            kind,
            task_id: Some(task.id),
            member_id: Some(task.member.id.clone()),
            title,
            detail,
        }
    }
}

/// A task type as the owner reads it: its label ("Lead Follow-up"), never its code.
pub(crate) fn type_label(task_type: &str) -> String {
    crate::task::task_type::lookup(task_type).map_or_else(|| task_type.replace('_', " "), |def| def.label.to_owned())
}

/// Why a new task waits in the review queue, in the owner's words (never its code).
pub(crate) fn waits_because(reason: &str) -> String {
    let trigger = |what: &str| format!("you asked to check every message to a member who {what}");
    match reason {
        "manual_mode_requires_review" => "your account is in manual mode: every first message waits for you".to_owned(),
        "plan_mode_requires_review" => "it runs in plan mode: you approve its plan first".to_owned(),
        "ramp_shadow_requires_review" | "ramp_guided_requires_review" | "ramp_limited_requires_review" | "ramp_full_requires_review" => {
            "Openloop is new to your gym: you check its first messages while it learns".to_owned()
        }
        "escalation_trigger:always" => "this kind of task always waits for you".to_owned(),
        "escalation_trigger:member_tenure_over1_year" => trigger("has been with you over a year"),
        "escalation_trigger:member_tenure_over2_years" => trigger("has been with you over two years"),
        "escalation_trigger:monthly_value_over200" => trigger("pays over $200 a month"),
        "escalation_trigger:cancellation_reason_complaint" => trigger("cancelled with a complaint"),
        "escalation_trigger:cancellation_reason_billing" => trigger("cancelled over billing"),
        "agent_spawned_needs_review" => "the agent opened it on its own, so you see it first".to_owned(),
        r if r.starts_with("action_requires_approval") => "it changes something at your gym, which waits for your yes".to_owned(),
        r if r.starts_with("low_confidence") || r.contains("confidence") => {
            "the agent is not sure enough of its message to send it alone".to_owned()
        }
        other => crate::task::escalation::reason_in_words(other),
    }
}

fn member_name(task: &Task) -> String {
    task.member.label()
}

impl Engine {
    /// The account's notification feed, newest first (`GET /api/v1/notifications`).
    pub async fn owner_notices(
        &self,
        account: AccountId,
        limit: Option<usize>,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), EngineError> {
        let limit = limit.unwrap_or(limits::OWNER_NOTICES_DEFAULT_LIMIT);
        if !(1..=limits::OWNER_NOTICES_MAX_LIMIT).contains(&limit) {
            return Err(crate::kernel::error::InvalidInput::new(
                "invalid_limit",
                format!("limit must be 1-{}", limits::OWNER_NOTICES_MAX_LIMIT),
            )
            .into());
        }
        Ok(self.store.list_notices(account, limit, cursor).await?)
    }

    /// Take one of today's slots of `kind`'s daily budget, or say when the next
    /// local day starts if they are all taken. The slots are one atomic counter per kind and
    /// day, so concurrent workers cannot overspend it. Immediate kinds always pass; the
    /// daily digest has one slot a day.
    pub(crate) async fn claim_notice_budget(
        &self,
        account: &Account,
        kind: NoticeKind,
        now: Timestamp,
    ) -> Result<Result<(), Timestamp>, EngineError> {
        let max_per_day = match kind.policy() {
            NoticePolicy::Immediate => return Ok(Ok(())),
            NoticePolicy::Batched { max_per_day } => max_per_day,
            NoticePolicy::Daily => 1,
        };
        let tz = account.settings.time_zone();
        let date = limits::local_date(now, &tz);
        // One atomic counter per kind and local day: a single write, however many are spent.
        if self
            .store
            .count_daily(account.id, kind.as_str(), date, max_per_day)
            .await?
            .is_some()
        {
            return Ok(Ok(()));
        }
        let next_day = date
            .tomorrow()
            .ok()
            .and_then(|d| d.to_zoned(tz).ok())
            .map_or(now + SignedDuration::from_hours(24), |z| z.timestamp());
        Ok(Err(next_day))
    }

    /// Claim `what` for the account's local day: `true` the first time only (an idempotency
    /// record, so concurrent workers agree).
    pub(crate) async fn claim_once_today(&self, account: &Account, what: &str, now: Timestamp) -> Result<bool, EngineError> {
        let key = once_key(account, what, now);
        let expires = now + SignedDuration::from_hours(48);
        Ok(self.store.claim_webhook(NOTICE_SOURCE, &key, now, expires).await?)
    }

    /// Record `draft` in the account's feed and mail it as its kind's policy and the owner's
    /// channel allow. `budget_claimed`: the caller already took the budget slot.
    pub(crate) async fn notify_owner(
        &self,
        account_id: AccountId,
        draft: NoticeDraft,
        budget_claimed: bool,
    ) -> Result<Option<OwnerNotice>, EngineError> {
        let Some(account) = self.store.get_account(account_id).await? else {
            return Ok(None);
        };
        self.notify_owner_of(&account, draft, budget_claimed).await
    }

    /// [`Self::notify_owner`] for an account the caller has just read.
    pub(crate) async fn notify_owner_of(
        &self,
        account: &Account,
        draft: NoticeDraft,
        budget_claimed: bool,
    ) -> Result<Option<OwnerNotice>, EngineError> {
        self.notify(account, draft, budget_claimed, false).await
    }

    /// A notice that must reach the owner's inbox even while they are away (a review item's
    /// last call: the next day it is decided without them), past the day's budget of its kind;
    /// trouble is logged.
    pub(crate) async fn notify_owner_even_away(&self, account: &Account, draft: NoticeDraft) {
        let kind = draft.kind;
        if let Err(e) = self.notify(account, draft, true, true).await {
            tracing::error!(account = %account.id, kind = kind.as_str(), error = %e, "owner notice not recorded");
        }
    }

    async fn notify(
        &self,
        account: &Account,
        draft: NoticeDraft,
        budget_claimed: bool,
        even_away: bool,
    ) -> Result<Option<OwnerNotice>, EngineError> {
        let account_id = account.id;
        let now = self.clock.now();
        let mailable = account.settings.owner_email.is_some() && account.settings.owner_notification_channel.mails();
        // Quiet hours: everything but a critical notice (the account's own
        // trouble, a member's legal threat or abuse) waits for their end; the brief leaves at
        // the hour the owner chose.
        let waits = !(draft.kind.is_critical() || matches!(draft.kind, NoticeKind::SystemAlert | NoticeKind::DailyDigest));
        let after_quiet = |at: Timestamp| {
            if waits {
                crate::owner::quiet::quiet_until(&account.settings, at).unwrap_or(at)
            } else {
                at
            }
        };
        // An owner away a day or more gets the brief and what needs them now only (an
        // escalation, a review item's last call, each with its action links): the rest waits
        // in the feed for the "while you were away" summary of their return.
        let away = crate::owner::presence::Presence::of(account.last_seen_at, now) != crate::owner::presence::Presence::Active
            && !matches!(draft.kind, NoticeKind::Escalation)
            && !even_away;
        let (delivery, digest_at) = match draft.kind.policy() {
            // Once a day whatever the channel; mailed with the next digest mail, which may
            // leave at once (it is made from the window's opening on).
            NoticePolicy::Daily => {
                if !budget_claimed && self.claim_notice_budget(account, draft.kind, now).await?.is_err() {
                    return Ok(None);
                }
                if mailable {
                    (NoticeDelivery::Digest, Some(now))
                } else {
                    (NoticeDelivery::Dashboard, None)
                }
            }
            _ if !mailable || (away && waits) => (NoticeDelivery::Dashboard, None),
            NoticePolicy::Immediate if after_quiet(now) > now => (NoticeDelivery::Digest, Some(after_quiet(now))),
            NoticePolicy::Immediate => (NoticeDelivery::Email, None),
            NoticePolicy::Batched { .. } => {
                if budget_claimed || self.claim_notice_budget(account, draft.kind, now).await?.is_ok() {
                    (NoticeDelivery::Digest, Some(after_quiet(next_digest_slot(&account.settings, now))))
                } else {
                    (NoticeDelivery::OverBudget, None)
                }
            }
        };
        let notice = OwnerNotice {
            id: new_ulid(now),
            account_id,
            at: now,
            kind: draft.kind,
            task_id: draft.task_id,
            member_id: draft.member_id,
            title: draft.title,
            detail: draft.detail,
            delivery,
            digest_at,
        };
        self.store.put_notice(&notice).await?;
        tracing::info!(account = %account_id, kind = notice.kind.as_str(), delivery = ?delivery, "owner notified");
        if delivery == NoticeDelivery::Email {
            let subject = format!("{}: {}", business_name(account), notice.title);
            let mut text = format!(
                "{}\n\n({})\n",
                notice.detail,
                crate::owner::owner_notice::when(notice.at, &account.settings.time_zone())
            );
            let links = |item, actions: &[_]| self.links_text(account_id, item, actions, now);
            let decide = crate::owner::owner_notice::notice_links(&notice, &links);
            if !decide.is_empty() {
                text.push_str(&format!("Decide from here (no sign-in):\n{decide}"));
            }
            if let Some(task) = notice.task_id {
                text.push_str(&format!("Open the task: {}\n", self.dashboard_url(&format!("/tasks/{task}"))));
            }
            // A mail that asks for a decision can be answered in words: the reply names its item.
            let reply = (!decide.is_empty()).then(|| {
                text.push_str(&crate::owner::owner_answer::reply_hint(
                    notice.kind == NoticeKind::Escalation || notice.kind == NoticeKind::CriticalEscalation,
                ));
                notice.task_id.map_or(OwnerReplyTo::Account(account_id), OwnerReplyTo::Task)
            });
            self.mail_owner(account, subject, text, reply, now).await;
        }
        // A critical notice also reaches the owner's phone, whatever the hour.
        if notice.kind.is_critical() {
            self.text_owner_alert(account, &notice.title, now).await;
        }
        Ok(Some(notice))
    }

    /// [`Self::notify_owner`] for a decision already committed: trouble is logged, never returned.
    pub(crate) async fn notify_owner_after(&self, account_id: AccountId, draft: NoticeDraft, budget_claimed: bool) {
        let kind = draft.kind;
        if let Err(e) = self.notify_owner(account_id, draft, budget_claimed).await {
            tracing::error!(account = %account_id, kind = kind.as_str(), error = %e, "owner notice not recorded");
        }
    }

    /// The notices a committed task change calls for: an escalation that began, a reply to a
    /// closed task.
    pub(crate) async fn notify_commit(&self, commit: &TaskCommit) {
        self.notify_commit_with(commit, None).await;
    }

    /// [`Self::notify_commit`] by a step that has read the account and the member's facts
    /// (its send snapshot): the to-do and the notice read neither again.
    pub(crate) async fn notify_commit_with(&self, commit: &TaskCommit, known: Option<(&Account, Option<&MemberFacts>)>) {
        let task = &commit.task;
        if crate::owner::webhook_event::escalation_began(commit) {
            self.todo_for_escalation(commit, known.map(|(_, facts)| facts)).await;
            // What happened in words, the member's last words, the agent's last draft and the
            // suggested next step (`task/escalation.rs`); a threat is critical.
            let critical = commit
                .log
                .iter()
                .any(|l| l.reason == Reason::LegalThreat.as_str() || l.reason == Reason::AbusiveReply.as_str());
            let kind = if critical {
                NoticeKind::CriticalEscalation
            } else {
                NoticeKind::Escalation
            };
            let (title, detail) = crate::task::escalation::notice(task);
            let draft = NoticeDraft::about(kind, task, title, detail);
            // A member's question waits for an answer: mailed at once (outside quiet hours),
            // it is texted too where the owner asked for urgent alerts by text.
            let question = commit.log.iter().any(|l| l.reason == Reason::MemberQuestionNeedsOwner.as_str());
            let account = match known {
                Some((account, _)) if account.id == task.account_id => Ok(Some(std::borrow::Cow::Borrowed(account))),
                _ => self
                    .store
                    .get_account(task.account_id)
                    .await
                    .map(|a| a.map(std::borrow::Cow::Owned)),
            };
            let notified = match account {
                Ok(Some(account)) => self.notify_owner_of(&account, draft, false).await.map(|n| n.map(|n| (account, n))),
                Ok(None) => Ok(None),
                Err(e) => Err(e.into()),
            };
            match notified {
                Ok(Some((account, notice))) if question && notice.delivery == NoticeDelivery::Email => {
                    self.text_owner_alert(&account, &notice.title, notice.at).await;
                }
                Ok(_) => {}
                Err(e) => tracing::error!(account = %task.account_id, kind = kind.as_str(), error = %e, "owner notice not recorded"),
            }
            if commit.webhooks {
                self.emit_escalated_webhook(task).await;
            }
        }
        if let Some(late) = commit.log.iter().find(|l| l.reason == Reason::LateReplyOwnerNotified.as_str()) {
            let title = format!(
                "{} replied to a closed task ({})",
                member_name(task),
                task.task_type.replace('_', " ")
            );
            let detail = late.detail.clone().unwrap_or_else(|| "a reply after the task closed".into());
            self.notify_owner_after(
                task.account_id,
                NoticeDraft::about(NoticeKind::LateReply, task, title, detail),
                false,
            )
            .await;
        }
    }

    /// The morning brief (in place of the daily digest of spec §35.2), run
    /// hourly after the metrics fold: from each account's `brief_hour` (none: no morning
    /// mail), the day's brief (`engine/day/brief/`), claimed once per local day and mailed at once
    /// with whatever other notices are due (one mail, not two). A day with nothing in it
    /// mails nothing. First, review items left undecided past `review_expiry_days` are
    /// closed, so the brief can say so. An account whose brief fails gives its claim back
    /// for the next run, and the others go on. Returns the briefs made.
    pub async fn send_daily_digests(&self) -> Result<usize, EngineError> {
        boxed(async move {
            if self.store.system_config().await?.global_pause {
                return Ok(0);
            }
            let now = self.clock.now();
            let mut made = 0;
            for account in self.accounts_at_work().await? {
                if let Err(e) = self.expire_reviews(&account, now).await {
                    tracing::error!(account = %account.id, error = %e, "undecided review items not expired; the next run tries again");
                }
                if !crate::owner::quiet::brief_due(&account.settings, now)
                    || self.claim_notice_budget(&account, NoticeKind::DailyDigest, now).await?.is_err()
                {
                    continue;
                }
                match self.daily_digest(&account, now).await {
                    Ok(true) => made += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::error!(account = %account.id, error = %e, "daily digest not made; the next run tries again");
                        let key = once_key(&account, &format!("{}/0", NoticeKind::DailyDigest.as_str()), now);
                        if let Err(e) = self.store.release_webhook(NOTICE_SOURCE, &key).await {
                            tracing::error!(account = %account.id, error = %e, "daily digest claim not released");
                        }
                    }
                }
            }
            if made > 0 {
                self.send_owner_digests().await?;
            }
            Ok(made)
        })
        .await
    }

    /// One account's morning brief, its day already claimed: `false` when there is nothing to say.
    async fn daily_digest(&self, account: &Account, now: Timestamp) -> Result<bool, EngineError> {
        let today = limits::local_date(now, &account.settings.time_zone());
        let brief = self.brief_of(account, today, now).await?;
        if brief.is_empty() {
            return Ok(false);
        }
        let brief = self.this_mornings(account, brief, now).await?;
        if brief.is_empty() {
            return Ok(false);
        }
        let app = self.dashboard_url("");
        let links = |item, actions: &[_]| self.links_text(account.id, item, actions, now);
        let (title, detail) = crate::owner::brief::mail(&brief, &app, &links);
        // Written before the mail: a brief whose event cannot be kept is made again next run.
        self.emit_durably(crate::owner::webhook_event::brief_ready(
            account.id,
            &brief,
            format!("{app}/today"),
            format!("msg_{}", new_ulid(now)),
            now,
        ))
        .await?;
        let draft = NoticeDraft {
            kind: NoticeKind::DailyDigest,
            task_id: None,
            member_id: None,
            title,
            detail,
        };
        Ok(self.notify_owner(account.id, draft, true).await?.is_some())
    }

    /// A new task that waits in the review queue:
    /// named in the next digest within the kind's daily budget, always in the feed. `why` is
    /// the creation's reason; a subtask held for its parent's approval is covered by the
    /// parent's notice.
    pub(crate) async fn notify_awaiting_review(&self, task: &Task, why: GateReason) {
        if task.status != TaskStatus::PendingReview || why == GateReason::Fixed(Reason::ParentNotApproved) {
            return;
        }
        let title = format!("{} — {} awaits your approval", member_name(task), type_label(&task.task_type));
        let mut detail = format!("Goal: {}", task.goal);
        if let Some(draft) = &task.draft {
            detail.push_str(&format!("\nDraft: \"{}\"", draft.subject));
        }
        detail.push_str(&format!("\nWhy it waits for you: {}", waits_because(&why.to_string())));
        self.notify_owner_after(
            task.account_id,
            NoticeDraft::about(NoticeKind::ApprovalNeeded, task, title, detail),
            false,
        )
        .await;
    }

    /// Mail every digest that is due: each account's waiting notices in one mail. Each notice
    /// is claimed before mailing, so overlapping ticks mail it once at most.
    pub(crate) async fn send_owner_digests(&self) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let due = self.store.due_notices(now + DUE_TOLERANCE, OWNER_DIGEST_NOTICES_PER_TICK).await?;
        let mut by_account: BTreeMap<AccountId, Vec<OwnerNotice>> = BTreeMap::new();
        for notice in due {
            by_account.entry(notice.account_id).or_default().push(notice);
        }
        let mut sent = 0;
        for (account_id, notices) in by_account {
            let mut claimed = Vec::new();
            for notice in notices {
                if self.store.claim_notice(account_id, notice.id).await? {
                    claimed.push(notice);
                }
            }
            let Some(account) = self.store.get_account(account_id).await? else {
                continue;
            };
            if claimed.is_empty() || !account.settings.owner_notification_channel.mails() {
                continue;
            }
            claimed.sort_by_key(|n| n.id);
            // A task the owner already approved or skipped is not news.
            let mut current = Vec::with_capacity(claimed.len());
            for notice in claimed {
                if notice.kind == NoticeKind::ApprovalNeeded && !self.still_awaits_review(account_id, notice.task_id).await? {
                    continue;
                }
                current.push(notice);
            }
            if current.is_empty() {
                continue;
            }
            let awaiting_review = if current.iter().any(|n| n.kind == NoticeKind::ApprovalNeeded) {
                Some(self.tasks_in(account_id, TaskStatus::PendingReview).await?.0.len())
            } else {
                None
            };
            let links = |item, actions: &[_]| self.links_text(account_id, item, actions, now);
            let (subject, text) = digest_mail(
                &business_name(&account),
                &current,
                awaiting_review,
                &account.settings.time_zone(),
                &links,
            );
            // A reply in words to a mail of several items names its member ("Sam: yes").
            let reply = crate::owner::owner_notice::digest_asks(&current).then_some(OwnerReplyTo::Account(account_id));
            if self.mail_owner(&account, subject, text, reply, now).await {
                sent += 1;
            }
        }
        Ok(sent)
    }

    async fn still_awaits_review(&self, account: AccountId, task: Option<TaskId>) -> Result<bool, EngineError> {
        let Some(task) = task else {
            return Ok(true);
        };
        Ok(self
            .store
            .get_task(account, task)
            .await?
            .is_some_and(|t| t.status == TaskStatus::PendingReview))
    }

    /// The account's tasks in `status`, newest first: up to [`limits::OWNER_DIGEST_COUNT_CAP`],
    /// and whether there are more.
    async fn tasks_in(&self, account: AccountId, status: TaskStatus) -> Result<(Vec<Task>, bool), EngineError> {
        let query = TaskQuery {
            status: Some(status),
            member_id: None,
            limit: limits::OWNER_DIGEST_COUNT_CAP,
            cursor: None,
        };
        let (tasks, next) = self.store.list_tasks(account, &query).await?;
        Ok((tasks, next.is_some()))
    }

    /// Send one mail to the owner; `false` (logged) if there is no address or the send failed.
    /// `reply`: what a reply to it answers (a mail that asks for a decision).
    async fn mail_owner(&self, account: &Account, subject: String, text: String, reply: Option<OwnerReplyTo>, now: Timestamp) -> bool {
        let Some(to) = account.settings.owner_email.clone() else {
            return false;
        };
        let text = format!(
            "{text}\nEvery notification is on your dashboard: {}\nTo choose how Openloop tells you (e-mail, the dashboard only, or urgent alerts also by text), \
             change \"Channel\" under Notifications on your settings page: {}\n",
            self.dashboard_url("/notifications"),
            self.dashboard_url("/settings#notify-heading"),
        );
        let mut mail = self.owner_mail(account, to, subject, text, "notice", now);
        if let Some(to) = reply {
            mail.reply_to = self.owner_reply_address(to);
        }
        match self.mailer.send(&mail).await {
            Ok(_) => true,
            Err(e) => {
                tracing::error!(account = %account.id, error = %e, "owner notification mail not sent (it stays in the feed)");
                false
            }
        }
    }

    /// The dashboard page at `path` (`/notifications`; empty: the overview), under the
    /// deployment's public address: what owner mail links to, never the API.
    pub(in crate::engine) fn dashboard_url(&self, path: &str) -> String {
        format!("{}/app{path}", self.config.public_url.trim_end_matches('/'))
    }

    /// A mail from Openloop to the account's owner at `to` (no thread, no unsubscribe link:
    /// the owner's settings are the switch); its Message-ID starts with `kind`.
    pub(in crate::engine) fn owner_mail(
        &self,
        account: &Account,
        to: Email,
        subject: String,
        text: String,
        kind: &str,
        now: Timestamp,
    ) -> OutboundMail {
        let domain = self.config.from_email.as_str().split_once('@').map_or("openloop.local", |(_, d)| d);
        OutboundMail {
            from_name: "Openloop".into(),
            from: self.config.from_email.clone(),
            to,
            to_name: account.settings.profile.owner_first_name.clone(),
            subject,
            text,
            message_id: format!("{kind}-{}@{domain}", new_ulid(now).to_string().to_ascii_lowercase()),
            in_reply_to: None,
            references: Vec::new(),
            reply_to: self.config.from_email.to_string(),
            unsubscribe_url: String::new(),
            date: now,
        }
    }
}

/// The idempotency key of `what` on the account's local day.
fn once_key(account: &Account, what: &str, now: Timestamp) -> String {
    let date = limits::local_date(now, &account.settings.time_zone());
    format!("{}/{date}/{what}", account.id)
}

pub(in crate::engine) fn business_name(account: &Account) -> String {
    account.business_name()
}
