//! The owner's trigger table, carried out (see [`crate::owner::trigger`]): listing, adding,
//! changing and removing rows; firing the owner's rows on each member event (re-entry claimed
//! once per member and window, a delay waiting as an open loop the sweep carries out); the
//! built-in rows' switches, which the code of each built-in asks; every firing logged with the
//! event that caused it; and the dry run over the last 30 days of stored facts.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

mod openloop;

pub(crate) use openloop::ClosedRows;

use super::Engine;
use super::tasks::{Created, NewTask};
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId, TaskId, new_ulid};
use crate::members::event::{MemberEvent, MemberStatus, SignalEnvelope};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::trigger::{
    Firing, MAX_CUSTOM_TRIGGERS, OpenloopEvent, Trigger, TriggerBook, TriggerInput, event_fields, event_names, goal_of,
};
use crate::rails::gate::GateContext;
use crate::task::TriggerType;
use crate::task::error::EngineError;
use crate::task::flood::{Burst, OnceClaim};
use crate::task::open_loop::{Expects, LoopOpens, OnDeadline, OpenLoop};

/// What a firing did about its task.
pub(crate) enum Opened {
    Task(TaskId),
    /// Another delivery of the event fired the row first.
    ClaimedAlready,
    /// No task (the member's task of that type is open, or a cap held).
    Nothing,
}

/// How far back a dry run looks.
pub const DRY_RUN_DAYS: i64 = 30;
/// The most members a dry run reads (its account's first pages) and names.
const DRY_RUN_MAX_MEMBERS: usize = 5_000;
const DRY_RUN_NAMED: usize = 100;
const BOOK_RACES: usize = 8;

/// `POST /api/v1/triggers/{id}/dry-run`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DryRun {
    pub would_open: usize,
    pub members: Vec<DryRunMember>,
    /// What the run could read: the facts keep the latest of each kind of event per member.
    pub note: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DryRunMember {
    pub id: MemberId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub at: Timestamp,
}

fn not_found() -> EngineError {
    EngineError::NotFound { what: "trigger" }
}

impl Engine {
    /// Change the account's trigger book with `change`, over the version read (another
    /// writer's change is read again and `change` applied to it).
    async fn change_triggers<T>(
        &self,
        account: AccountId,
        mut change: impl FnMut(&mut TriggerBook) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        for _ in 0..BOOK_RACES {
            let mut book = self.store.trigger_book(account).await?;
            let out = change(&mut book)?;
            book.version += 1;
            match self.store.save_trigger_book(account, &book).await {
                Ok(()) => {
                    self.closed_rows.forget(account);
                    return Ok(out);
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// `GET /api/v1/triggers`: every row, the built-in ones first.
    pub async fn triggers(&self, account: AccountId) -> Result<Vec<Trigger>, EngineError> {
        Ok(self.store.trigger_book(account).await?.rows())
    }

    /// The account's book (the firings' log with it), for the settings page.
    pub async fn trigger_book(&self, account: AccountId) -> Result<TriggerBook, EngineError> {
        Ok(self.store.trigger_book(account).await?)
    }

    /// `POST /api/v1/triggers`.
    pub async fn create_trigger(&self, account: AccountId, input: TriggerInput) -> Result<Trigger, EngineError> {
        let trigger = input.into_trigger(new_ulid(self.clock.now()).to_string())?;
        self.change_triggers(account, |book| {
            if book.custom.len() >= MAX_CUSTOM_TRIGGERS {
                return Err(InvalidInput::new(
                    "too_many_triggers",
                    format!("an account has at most {MAX_CUSTOM_TRIGGERS} triggers of its own"),
                )
                .into());
            }
            book.custom.push(trigger.clone());
            Ok(())
        })
        .await?;
        Ok(trigger)
    }

    /// `PUT /api/v1/triggers/{id}`: the fields given change; a built-in row takes only
    /// `enabled`.
    pub async fn update_trigger(&self, account: AccountId, id: &str, patch: serde_json::Value) -> Result<Trigger, EngineError> {
        let serde_json::Value::Object(patch) = patch else {
            return Err(InvalidInput::new("invalid_trigger", "the body is an object of the fields to change").into());
        };
        self.change_triggers(account, |book| {
            let row = book.row(id).ok_or_else(not_found)?;
            if row.builtin {
                let enabled = match (patch.len(), patch.get("enabled")) {
                    (1, Some(serde_json::Value::Bool(on))) => *on,
                    _ => {
                        return Err(InvalidInput::new(
                            "builtin_trigger",
                            "a built-in trigger can only be switched on or off: {\"enabled\": true | false}",
                        )
                        .into());
                    }
                };
                book.builtin_enabled.insert(row.id.clone(), enabled);
                return book.row(id).ok_or_else(not_found);
            }
            let mut merged = serde_json::json!({
                "event": row.event, "filter": row.filter, "task_type": row.task_type, "goal": row.goal,
                "delay_hours": row.delay_hours, "reentry": row.reentry, "reentry_days": row.reentry_days,
                "enabled": row.enabled, "notify": row.notify,
            });
            if let Some(fields) = merged.as_object_mut() {
                for (k, v) in &patch {
                    fields.insert(k.clone(), v.clone());
                }
                // Changing to "once" drops the days that went with "after_days".
                if patch.get("reentry").and_then(|r| r.as_str()) == Some("once") && !patch.contains_key("reentry_days") {
                    fields.insert("reentry_days".into(), serde_json::Value::Null);
                }
            }
            let input: TriggerInput = serde_json::from_value(merged).map_err(|e| {
                let text = e.to_string();
                match crate::kernel::bounded::parse_refusal(&text) {
                    Some((code, message)) => InvalidInput::new(code, message.replacen("the value", "a field", 1)),
                    None => InvalidInput::new("invalid_trigger", text),
                }
            })?;
            let changed = input.into_trigger(row.id.clone())?;
            if let Some(slot) = book.custom.iter_mut().find(|t| t.id == id) {
                *slot = changed;
            }
            book.row(id).ok_or_else(not_found)
        })
        .await
    }

    /// `DELETE /api/v1/triggers/{id}`: a row of the owner's; a built-in one is switched off instead.
    pub async fn delete_trigger(&self, account: AccountId, id: &str) -> Result<(), EngineError> {
        self.change_triggers(account, |book| {
            match book.row(id) {
                None => return Err(not_found()),
                Some(row) if row.builtin => {
                    return Err(InvalidInput::new(
                        "builtin_trigger",
                        "a built-in trigger cannot be removed; switch it off with {\"enabled\": false}",
                    )
                    .into());
                }
                Some(_) => {}
            }
            book.custom.retain(|t| t.id != id);
            Ok(())
        })
        .await
    }

    /// Whether the account's built-in row `id` is on (the code of each built-in asks first).
    pub(crate) async fn builtin_trigger_on(&self, account: AccountId, id: &str) -> Result<bool, EngineError> {
        Ok(self.store.trigger_book(account).await?.builtin_on(id))
    }

    /// Log a firing and count it. A log that cannot be written is reported, not fatal: the
    /// task it opened is there.
    pub(crate) async fn log_firing(&self, account: AccountId, firing: Firing) {
        let logged = self
            .change_triggers(account, |book| {
                book.record(firing.clone());
                Ok(())
            })
            .await;
        if let Err(e) = logged {
            tracing::warn!(%account, trigger = %firing.trigger_id, error = %e, "a trigger's firing was not logged");
        }
    }

    /// A built-in row opened `task` on `event_id`: its firing, logged.
    pub(crate) async fn builtin_fired(&self, account: AccountId, trigger: &str, member: &MemberId, event_id: &str, task: TaskId) {
        let firing = Firing {
            at: self.clock.now(),
            trigger_id: trigger.to_owned(),
            member_id: member.clone(),
            event_id: event_id.to_owned(),
            task_id: Some(task),
            opens_at: None,
        };
        self.log_firing(account, firing).await;
    }

    /// The owner's rows a member event sets off: each takes the member once per re-entry
    /// window (a claim), then opens its task through the one creation path — or, with a
    /// delay, waits as an open loop the sweep carries out. The tasks opened now.
    pub(crate) async fn fire_triggers(
        &self,
        account: &Account,
        book: &TriggerBook,
        facts: &MemberFacts,
        envelope: &SignalEnvelope,
        burst: &Burst,
    ) -> Result<Vec<TaskId>, EngineError> {
        if book.custom.iter().all(|t| !t.enabled) {
            return Ok(Vec::new());
        }
        let event = &envelope.event.event;
        let fields = event_fields(event, facts, self.clock.now());
        self.fire_rows(account, book, facts, &event_names(event), &fields, &envelope.webhook_id, burst)
            .await
    }

    /// The owner's rows an event of `names` with `fields` sets off (see [`Self::fire_triggers`]):
    /// `event_id` names the event that caused each firing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fire_rows(
        &self,
        account: &Account,
        book: &TriggerBook,
        facts: &MemberFacts,
        names: &[&str],
        fields: &serde_json::Map<String, serde_json::Value>,
        event_id: &str,
        burst: &Burst,
    ) -> Result<Vec<TaskId>, EngineError> {
        let now = self.clock.now();
        let mut opened = Vec::new();
        for trigger in book.custom.iter().filter(|t| t.matches(names, fields)) {
            // The firing is claimed for the trigger's re-entry window with what it does, never
            // before it: a function killed between the two leaves the event to fire it again.
            let claim = OnceClaim {
                source: format!("trigger:{}:{}", account.id, trigger.id),
                key: facts.member_id.as_str().to_owned(),
                now,
                expires_at: trigger.reentry_until(now),
            };
            let member = facts.member_id.as_str();
            if self.store.is_claimed(&claim.source, &claim.key, now).await? {
                continue;
            }
            let opens = LoopOpens {
                task_type: trigger.task_type.clone(),
                goal: goal_of(trigger),
                trigger_id: Some(trigger.id.clone()),
                event_id: event_id.to_owned(),
                context: serde_json::json!({"trigger_id": trigger.id, "event": trigger.event, "event_id": event_id}),
            };
            let mut firing = Firing {
                at: now,
                trigger_id: trigger.id.clone(),
                member_id: facts.member_id.clone(),
                event_id: event_id.to_owned(),
                task_id: None,
                opens_at: None,
            };
            if trigger.delay_hours > 0 {
                let at = now + SignedDuration::from_hours(i64::from(trigger.delay_hours));
                let wait = OpenLoop::new(account.id, facts.member_id.clone(), Expects::Delay, at, OnDeadline::OpenTask, now).opening(opens);
                self.register_loops(&[wait]).await?;
                // Claimed after the wait is kept: a second delivery racing this one may keep a
                // second wait, whose opening finds the first's task and opens nothing.
                if !self.claim_firing(&claim).await? {
                    continue;
                }
                firing.opens_at = Some(at);
            } else {
                match self.open_for_trigger(account, facts, &opens, burst, claim.clone()).await? {
                    Opened::Task(task) => {
                        firing.task_id = Some(task);
                        opened.push(task);
                    }
                    Opened::ClaimedAlready => continue,
                    // Not opened (the member's task of that type is open, a cap): the firing
                    // still counts for its window.
                    Opened::Nothing => {
                        if !self.claim_firing(&claim).await? {
                            continue;
                        }
                    }
                }
            }
            tracing::info!(account = %account.id, trigger = %trigger.id, member, event = %event_id, "trigger fired");
            // `always`: the owner hears of each firing (the others: not of a firing).
            if trigger.notify == crate::owner::trigger::Notify::Always {
                let when = firing.opens_at.map(|at| format!(", opening at {at}")).unwrap_or_default();
                let draft = super::owner_notices::NoticeDraft {
                    kind: crate::owner::owner_notice::NoticeKind::ActionMessage,
                    task_id: firing.task_id,
                    member_id: Some(facts.member_id.clone()),
                    title: format!("Your trigger on {} fired", trigger.event),
                    detail: format!("It opens a {} task for member {member}{when}.", trigger.task_type),
                };
                self.notify_owner_after(account.id, draft, false).await;
            }
            self.log_firing(account.id, firing).await;
        }
        Ok(opened)
    }

    /// A trigger's task, through the one creation path: its origin is the event that caused
    /// it (`trigger_event_id`) and its context names the trigger.
    pub(crate) async fn open_for_trigger(
        &self,
        account: &Account,
        facts: &MemberFacts,
        opens: &LoopOpens,
        burst: &Burst,
        claim: OnceClaim,
    ) -> Result<Opened, EngineError> {
        let now = self.clock.now();
        let input = NewTask {
            task_type: opens.task_type.clone(),
            member_id: facts.member_id.clone(),
            goal: opens.goal.clone(),
            confidence: Some(75),
            draft: None,
            trigger_type: TriggerType::Webhook,
            trigger_event_id: Some(opens.event_id.clone()),
            gate: GateContext {
                tenure_days: facts.tenure_days(now),
                monthly_value: facts.monthly_value,
                cancellation_reason: facts.cancellation_reason.clone(),
            },
            context: opens.context.clone(),
        };
        match self.create_claimed(account, input, burst, claim).await {
            Ok(Some(Created::New(task))) => Ok(Opened::Task(task.id)),
            Ok(None) => Ok(Opened::ClaimedAlready),
            Ok(Some(Created::Existing(_))) | Err(EngineError::Limited(_)) => Ok(Opened::Nothing),
            Err(e) => Err(e),
        }
    }

    /// The firing's claim on its own (where no task is written with it): whether this call made it.
    async fn claim_firing(&self, claim: &OnceClaim) -> Result<bool, EngineError> {
        Ok(self
            .store
            .claim_webhook(&claim.source, &claim.key, claim.now, claim.expires_at)
            .await?)
    }

    /// `POST /api/v1/triggers/{id}/dry-run`: the members the row would have opened a task for
    /// over the last 30 days, read from the stored facts (the latest event of each kind per
    /// member); nothing is created, claimed or logged.
    pub async fn dry_run_trigger(&self, account: AccountId, id: &str) -> Result<DryRun, EngineError> {
        let book = self.store.trigger_book(account).await?;
        let trigger = Trigger {
            enabled: true,
            ..book.row(id).ok_or_else(not_found)?
        };
        let now = self.clock.now();
        let from = now - SignedDuration::from_hours(24 * DRY_RUN_DAYS);
        let mut members = Vec::new();
        let mut read = 0;
        let mut cursor = None;
        let mut own = self.past_openloop_events(account, &trigger.event, from, now).await?;
        loop {
            let (page, next) = self.store.list_member_facts(account, 200, cursor).await?;
            read += page.len();
            for facts in page {
                let seen = past_events(&trigger.event, &facts, from, now)
                    .into_iter()
                    .find(|(event, _)| trigger.matches(&event_names(event), &event_fields(event, &facts, now)))
                    .map(|(_, at)| at);
                let own_seen = || {
                    let mut theirs = own.remove(&facts.member_id).unwrap_or_default();
                    if trigger.event == "no_checkin_days"
                        && let Some(gap) = crate::owner::trigger::no_checkin_event(&facts, now)
                    {
                        let since = facts.last_checkin_at.or(facts.joined_at).unwrap_or(now);
                        let began = since + SignedDuration::from_hours(24 * crate::owner::trigger::NO_CHECKIN_EVENT_MIN_DAYS);
                        theirs.push((gap, began.max(from)));
                    }
                    theirs
                        .into_iter()
                        .find(|(event, _)| trigger.matches(&[event.name()], &event.fields(&facts, now)))
                        .map(|(_, at)| at)
                };
                if let Some(at) = seen.or_else(own_seen) {
                    members.push(DryRunMember {
                        id: facts.member_id.clone(),
                        name: facts.display_name(),
                        at,
                    });
                }
            }
            match next {
                Some(c) if read < DRY_RUN_MAX_MEMBERS => cursor = Some(c),
                _ => break,
            }
        }
        let would_open = members.len();
        members.sort_by_key(|m| std::cmp::Reverse(m.at));
        members.truncate(DRY_RUN_NAMED);
        Ok(DryRun {
            would_open,
            members,
            note: format!(
                "over the last {DRY_RUN_DAYS} days of {read} members' stored facts, once per member; the facts keep the latest payment, status change and booking of each member and their recent check-ins (not a check-in's class); Openloop's own events from the tasks closed and the to-dos done in those days and each active member's days without a check-in"
            ),
        })
    }
}

impl Engine {
    /// Openloop's own `task_closed` and `todo_done` events between `from` and `now`, by member
    /// (from the closed tasks' tallies and the to-dos done; `no_checkin_days` is read from
    /// each member's facts).
    async fn past_openloop_events(
        &self,
        account: AccountId,
        name: &str,
        from: Timestamp,
        now: Timestamp,
    ) -> Result<std::collections::HashMap<MemberId, Vec<(OpenloopEvent, Timestamp)>>, EngineError> {
        let mut by_member: std::collections::HashMap<MemberId, Vec<(OpenloopEvent, Timestamp)>> = std::collections::HashMap::new();
        match name {
            "task_closed" => {
                // The window is half-open: a close at this very second counts too.
                let until = now + SignedDuration::from_secs(1);
                for tally in self.store.closed_tallies(account, from, until).await? {
                    let at = tally.resolved_at.unwrap_or(tally.created_at);
                    let event = OpenloopEvent::TaskClosed {
                        task_id: tally.task_id,
                        task_type: tally.task_type.clone(),
                        status: tally.status.to_string(),
                        outcome: tally.outcome.clone(),
                    };
                    by_member.entry(tally.member_id.clone()).or_default().push((event, at));
                }
            }
            "todo_done" => {
                let done = self
                    .store
                    .list_todos(account, crate::task::todo::TodoStatus::Done, super::todos::TODOS_LISTED)
                    .await?;
                for todo in done {
                    let Some(at) = todo.done_at.filter(|t| (from..=now).contains(t)) else {
                        continue;
                    };
                    let kind = serde_json::to_value(todo.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let event = OpenloopEvent::TodoDone {
                        todo_id: todo.id,
                        kind,
                        outcome: todo.outcome.clone(),
                    };
                    by_member.entry(todo.member.id.clone()).or_default().push((event, at));
                }
            }
            _ => {}
        }
        Ok(by_member)
    }
}

/// The events of `name` the facts show between `from` and `now`, rebuilt from what they keep.
fn past_events(name: &str, facts: &MemberFacts, from: Timestamp, now: Timestamp) -> Vec<(MemberEvent, Timestamp)> {
    let within = |at: &Option<Timestamp>| at.filter(|t| (from..=now).contains(t));
    let member_id = facts.member_id.clone();
    let amount = facts.monthly_value.unwrap_or(0.0);
    match name {
        "checkin.created" => facts
            .checkins
            .iter()
            .rev()
            .filter(|t| (from..=now).contains(*t))
            .map(|at| {
                let event = MemberEvent::CheckinCreated {
                    member_id: member_id.clone(),
                    checked_in_at: *at,
                    class_name: None,
                };
                (event, *at)
            })
            .collect(),
        "payment.failed" => within(&facts.last_payment_failed_at)
            .map(|at| {
                let event = MemberEvent::PaymentFailed {
                    member_id,
                    amount,
                    currency: "USD".into(),
                    failed_at: at,
                    reason: None,
                };
                (event, at)
            })
            .into_iter()
            .collect(),
        "payment.succeeded" => within(&facts.last_payment_succeeded_at)
            .map(|at| {
                let event = MemberEvent::PaymentSucceeded {
                    member_id,
                    amount,
                    currency: "USD".into(),
                    paid_at: at,
                };
                (event, at)
            })
            .into_iter()
            .collect(),
        "member.created" | "customer.created" => match (within(&facts.joined_at), facts.email.clone()) {
            (Some(at), Some(email)) => vec![(
                MemberEvent::MemberCreated {
                    member_id,
                    email: Some(email),
                    first_name: facts.first_name.clone(),
                    last_name: facts.last_name.clone(),
                    status: facts.status.unwrap_or(MemberStatus::Active),
                    joined_at: facts.joined_at,
                    monthly_value: facts.monthly_value,
                    phone: facts.phone.clone(),
                },
                at,
            )],
            _ => Vec::new(),
        },
        "member.status_changed" | "customer.status.changed" => {
            let cancelled = within(&facts.cancelled_at).map(|at| (MemberStatus::Cancelled, facts.cancellation_reason.clone(), at));
            let back = within(&facts.reactivated_at).map(|at| (MemberStatus::Active, None, at));
            cancelled
                .into_iter()
                .chain(back)
                .map(|(status, cancellation_reason, at)| {
                    let event = MemberEvent::StatusChanged {
                        member_id: member_id.clone(),
                        status,
                        previous_status: None,
                        cancellation_reason,
                    };
                    (event, at)
                })
                .collect()
        }
        "trial.booked" | "reservation.created" | "appointment.scheduled" => {
            match (within(&facts.trial_booked_at), facts.trial_booked_for) {
                (Some(at), Some(booked_for)) => vec![(MemberEvent::TrialBooked { member_id, booked_for }, at)],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}
