//! The morning brief: read what the day holds, compose it
//! ([`crate::owner::brief`]) and mail it once at the account's `brief_hour` — in place of the
//! daily digest. `GET /api/v1/brief` and `/app/today` show the same [`Brief`].
//!
//! Its reads do not grow with the tasks stored: the pending to-dos (two index reads), the
//! escalated tasks and the review queue (one status read each, capped), the tasks' tallies
//! (open, and closed since yesterday's start), yesterday's daily metrics, and the members'
//! facts (read as the risk scan reads them, at most [`BRIEF_MEMBERS_READ`]).

mod expiry;
mod mornings;

use std::collections::HashMap;

use jiff::Timestamp;
use jiff::civil::Date;

use super::Engine;
use super::members::monthly_value;
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits;
use crate::learning::suggestion::{SuggestionKind, SuggestionStatus};
use crate::members::event::MemberStatus;
use crate::owner::account::Account;
use crate::owner::brief::{
    AtRisk, Brief, BriefInputs, BriefSuggestion, MORNINGS_LISTED, PaymentTrouble, Waiting, Yesterday, compose, day_bounds,
};
use crate::ports::TaskQuery;
use crate::task::error::EngineError;
use crate::task::todo::TodoStatus;
use crate::task::{Task, TaskStatus};

/// The most members one brief reads (in pages of 500).
pub const BRIEF_MEMBERS_READ: usize = 5_000;
/// The most escalated or pending tasks one brief reads.
const BRIEF_TASKS_READ: usize = 50;

impl Engine {
    /// `GET /brief?date=YYYY-MM-DD`: the account's brief for `date` (today in its time zone
    /// by default).
    pub async fn brief(&self, account: AccountId, date: Option<&str>) -> Result<Brief, EngineError> {
        let account = self.account(account).await?;
        let now = self.clock.now();
        let date = match date {
            None => limits::local_date(now, &account.settings.time_zone()),
            Some(raw) => crate::kernel::calendar::parse_day("date", raw.trim())?,
        };
        self.brief_of(&account, date, now).await
    }

    /// The brief of `account` for `date`, as it stands at `now`.
    pub(crate) async fn brief_of(&self, account: &Account, date: Date, now: Timestamp) -> Result<Brief, EngineError> {
        let tz = account.settings.time_zone();
        let (start, end) = day_bounds(date, &tz);
        let yesterday = date.yesterday().unwrap_or(date);
        let (y_start, y_end) = day_bounds(yesterday, &tz);
        let (escalated_query, pending_query) = (
            TaskQuery::in_status(TaskStatus::Escalated, BRIEF_TASKS_READ),
            TaskQuery::in_status(TaskStatus::PendingReview, BRIEF_TASKS_READ),
        );
        let (open, snoozed, (escalated, _), (pending, _), tallies, metrics) = futures::try_join!(
            self.store.list_todos(account.id, TodoStatus::Open, super::TODOS_LISTED),
            self.store.list_todos(account.id, TodoStatus::Snoozed, super::TODOS_LISTED),
            self.store.list_tasks(account.id, &escalated_query),
            self.store.list_tasks(account.id, &pending_query),
            self.store.tallies(account.id, y_start),
            self.store.daily_metrics(account.id, yesterday),
        )?;

        // Each member's open task (any), and yesterday's closes.
        let mut open_task: HashMap<MemberId, TaskId> = HashMap::new();
        let (mut retained, mut recovered, mut review_expired, mut planned_today) = (0u32, 0u32, 0usize, 0usize);
        let mut held_out_back = 0u32;
        for tally in &tallies {
            if tally.is_open() {
                open_task.entry(tally.member_id.clone()).or_insert(tally.task_id);
                let plans = matches!(
                    tally.status,
                    TaskStatus::Ready | TaskStatus::Waiting | TaskStatus::Executing | TaskStatus::Dormant
                );
                if plans && tally.next_action_at.is_some_and(|at| start <= at && at < end) {
                    planned_today += 1;
                }
                continue;
            }
            // Review items closed undecided since yesterday began (also this morning's).
            if tally.outcome.as_deref() == Some(REVIEW_EXPIRED) && tally.resolved_at.is_some_and(|at| y_start <= at) {
                review_expired += 1;
            }
            if !tally.resolved_at.is_some_and(|at| y_start <= at && at < y_end) {
                continue;
            }
            // Which group each member back was in: a held-out one came back with nothing sent.
            if tally.arm == Some(crate::task::holdout::Arm::HeldOut) {
                held_out_back += u32::from(crate::task::holdout::succeeded(&tally.task_type, tally.outcome.as_deref()));
                continue;
            }
            match tally.outcome.as_deref() {
                Some("retained") => retained += 1,
                Some("recovered") => recovered += 1,
                _ => {}
            }
        }

        // The members: what each is worth, who is at risk, whose payment fails.
        let churn_gap = account.settings.calibration.churn_gap();
        let mut value: HashMap<MemberId, f64> = HashMap::new();
        let (mut at_risk, mut payments) = (Vec::new(), Vec::new());
        let (mut cursor, mut read) = (None, 0usize);
        loop {
            let (page, next) = self.store.list_member_facts(account.id, 500, cursor).await?;
            read += page.len();
            for facts in page {
                let (monthly, _) = monthly_value(&facts, &account.settings);
                value.insert(facts.member_id.clone(), monthly);
                let name = facts.first_name_or_address();
                let task_id = open_task.get(&facts.member_id).copied();
                if crate::rails::risk::assess(&facts, now, churn_gap).is_some_and(|f| f.task_type == "churn_risk") {
                    at_risk.push(AtRisk {
                        member_id: facts.member_id.clone(),
                        name: name.clone(),
                        days_since_checkin: facts.last_checkin_at.map(|at| now.duration_since(at).as_hours().max(0) / 24),
                        monthly_value: monthly,
                        task_id,
                    });
                }
                // What the owner checked or put off from the brief waits (CONTRACT.md "The
                // brief never nags"); a payment that fails again asks again.
                if facts.payment_failing && facts.status != Some(MemberStatus::Cancelled) && !facts.payment_put_aside(now) {
                    payments.push(PaymentTrouble {
                        member_id: facts.member_id.clone(),
                        name,
                        monthly_value: monthly,
                        failed_at: facts.last_payment_failed_at,
                        task_id,
                        awaiting_approval: false,
                    });
                }
            }
            match next {
                Some(next) if read < BRIEF_MEMBERS_READ => cursor = Some(next),
                _ => break,
            }
        }
        // A failing payment whose task the owner decided (skipped, resolved, handed to the call
        // list) since it failed is not asked about again every morning.
        let mut decided = Vec::new();
        for p in payments.iter().filter(|p| p.task_id.is_none()).take(PAYMENTS_CHECKED) {
            if self.payment_decided(account, &p.member_id, p.failed_at).await? {
                decided.push(p.member_id.clone());
            }
        }
        payments.retain(|p| !decided.contains(&p.member_id));
        // What the owner put off waits until its day (CONTRACT.md "The brief never nags").
        let put_off = |t: &Task| t.snoozed_until.is_some_and(|until| until > now);
        let awaiting_approval: Vec<TaskId> = pending.iter().map(|t| t.id).collect();
        for p in &mut payments {
            p.awaiting_approval = p.task_id.is_some_and(|t| awaiting_approval.contains(&t));
        }
        let mut waiting_review: Vec<&Task> = pending.iter().filter(|t| !put_off(t)).collect();
        // The most urgent first (a failing payment before a check-in), then the oldest.
        waiting_review.sort_by_key(|t| (t.priority, t.created_at, t.id));
        let awaiting_members = waiting_review.iter().map(|t| (t.id, t.member.label())).collect();
        let worth = |member: &MemberId| value.get(member).copied().unwrap_or(account.settings.avg_membership_price);
        let todos = open.into_iter().chain(snoozed).map(|t| {
            let v = worth(&t.member.id);
            (t, v)
        });
        let escalated = escalated
            .iter()
            .filter(|t| !put_off(t))
            .map(|t| waiting(t, worth(&t.member.id)))
            .collect();
        Ok(compose(BriefInputs {
            date,
            now,
            day_ends: end,
            todos: todos.collect(),
            escalated,
            awaiting_review: waiting_review.len(),
            awaiting_members,
            at_risk,
            payments,
            yesterday: Yesterday {
                retained,
                recovered,
                held_out_back,
                replies: metrics.member_replies,
                escalations: metrics.tasks_escalated,
                sent: metrics.messages_sent,
            },
            planned_today,
            review_expired,
            suggestion: self.suggestion_to_offer(account, now).await?,
        }))
    }

    /// The newest pending autopilot suggestion made in the last [`MORNINGS_LISTED`] days: the
    /// brief offers it with its links, so an owner who decides from the mail can take it.
    async fn suggestion_to_offer(&self, account: &Account, now: Timestamp) -> Result<Option<BriefSuggestion>, EngineError> {
        let since = now - jiff::SignedDuration::from_hours(24 * i64::from(MORNINGS_LISTED));
        let pending = self.store.list_suggestions(account.id, SuggestionStatus::Pending, 5).await?;
        Ok(pending
            .into_iter()
            .find(|s| s.kind == SuggestionKind::Autopilot && s.created_at > since && s.is_due(now))
            .map(|s| BriefSuggestion {
                id: s.id,
                title: s.title,
                body: s.body,
            }))
    }
}

impl Engine {
    /// Whether a `payment_recovery` task of `member` closed since the payment failed (at
    /// `failed_at`; unknown: any): the owner has decided on it.
    async fn payment_decided(&self, account: &Account, member: &MemberId, failed_at: Option<Timestamp>) -> Result<bool, EngineError> {
        let query = TaskQuery {
            status: None,
            member_id: Some(member.clone()),
            limit: BRIEF_TASKS_READ,
            cursor: None,
        };
        let (tasks, _) = self.store.list_tasks(account.id, &query).await?;
        Ok(tasks.iter().any(|t| {
            t.task_type == "payment_recovery" && t.status.is_terminal() && failed_at.is_none_or(|at| t.resolved_at.is_some_and(|r| r >= at))
        }))
    }
}

/// The most payments without an open task one brief checks for the owner's decision.
const PAYMENTS_CHECKED: usize = 10;

/// The outcome of a review item closed undecided.
pub const REVIEW_EXPIRED: &str = "review_expired";

fn waiting(task: &Task, monthly_value: f64) -> Waiting {
    let context = task.escalation.as_ref();
    Waiting {
        task_id: task.id,
        member_id: task.member.id.clone(),
        name: task.member.label(),
        why: crate::task::escalation::reason_in_words(
            context.map_or_else(|| task.outcome_reason.as_deref().unwrap_or_default(), |c| c.reason.as_str()),
        ),
        since: context.map_or(task.updated_at, |c| c.blocked_at),
        monthly_value,
    }
}
