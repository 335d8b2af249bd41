//! Open loops: every action that waits registers what it
//! expects — a reply, a check-in, a payment resolved, a trial attended, a to-do done — from
//! which member, by when, and what happens if the deadline passes first. A loop is met by
//! the first signal that satisfies it or expired by the deadline sweep, exactly once: the
//! store moves it out of `open` with one conditional write, so whichever of the event and
//! the sweep comes second finds it already resolved and does nothing.
//!
//! Pure: what a loop expects, which signals meet it, and the loops an action registers.
//! Registering, matching and sweeping are the engine's (`engine/automation/loops/`).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::{AccountId, MemberId, TaskId, new_ulid};
use crate::members::event::MemberEvent;
use crate::members::source::EnrollmentStatus;
use crate::task::Task;
use crate::task::outcome;

/// What a loop waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expects {
    /// A reply from the member to the task's mail.
    Reply,
    /// A check-in by the member.
    Checkin,
    /// A payment that succeeds, or the enrollment back in good standing.
    PaymentResolved,
    /// A lead's booked class or appointment attended: a check-in.
    TrialAttended,
    /// A staff to-do marked done ([`LoopSignal::TodoDone`]).
    TodoDone,
    /// Nothing: only the time passing (a trigger's delay before it opens its task).
    Delay,
}

impl Expects {
    pub fn as_str(self) -> &'static str {
        match self {
            Expects::Reply => "reply",
            Expects::Checkin => "checkin",
            Expects::PaymentResolved => "payment_resolved",
            Expects::TrialAttended => "trial_attended",
            Expects::TodoDone => "todo_done",
            Expects::Delay => "delay",
        }
    }

    /// What meeting it means, as the owner reads it: "the payment went through".
    pub fn met_in_words(self) -> &'static str {
        match self {
            Expects::Reply => "the member replied",
            Expects::Checkin => "the member checked in",
            Expects::PaymentResolved => "the payment went through",
            Expects::TrialAttended => "the lead came to their trial",
            Expects::TodoDone => "the to-do was done",
            Expects::Delay => "the wait is over",
        }
    }

    /// What did not happen by the deadline, as the owner reads it (followed by "by <time>").
    pub fn missed_in_words(self) -> &'static str {
        match self {
            Expects::Reply => "no reply",
            Expects::Checkin => "no check-in",
            Expects::PaymentResolved => "the payment still had not gone through",
            Expects::TrialAttended => "the lead did not come to their trial",
            Expects::TodoDone => "the to-do was not done",
            Expects::Delay => "the wait ended",
        }
    }
}

/// What happens when the deadline passes with the loop still open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDeadline {
    /// The task's next touch (its step is scheduled for the same time).
    FollowUp,
    /// The task ends by its budget's policy (its own step closes it).
    Close,
    /// The owner is told.
    Escalate,
    /// A lead who booked and did not come: the lead follow-up for a no-show opens.
    NoShowFollowup,
    /// A trigger's delayed task opens ([`OpenLoop::opens`]).
    OpenTask,
}

impl OnDeadline {
    pub fn as_str(self) -> &'static str {
        match self {
            OnDeadline::FollowUp => "follow_up",
            OnDeadline::Close => "close",
            OnDeadline::Escalate => "escalate",
            OnDeadline::NoShowFollowup => "no_show_followup",
            OnDeadline::OpenTask => "open_task",
        }
    }

    /// What was planned for the deadline, as the owner reads it.
    pub fn in_words(self) -> &'static str {
        match self {
            OnDeadline::FollowUp => "the next follow-up",
            OnDeadline::Close => "closing the task",
            OnDeadline::Escalate => "handing it to you",
            OnDeadline::NoShowFollowup => "a note about the missed visit",
            OnDeadline::OpenTask => "opening the planned task",
        }
    }

    /// Whether the sweep itself carries the action out. A task's loops are carried out by the
    /// task's own step, which reads them from the task (`task/task_loops.rs`): the sweep
    /// leaves one to that step for an hour, then expires it with the task and makes the task
    /// due when it says to close or escalate.
    pub fn carried_by_sweep(self) -> bool {
        matches!(self, OnDeadline::NoShowFollowup | OnDeadline::OpenTask | OnDeadline::Escalate)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LoopStatus {
    Open,
    Met,
    Expired,
}

impl LoopStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopStatus::Open => "open",
            LoopStatus::Met => "met",
            LoopStatus::Expired => "expired",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "open" => LoopStatus::Open,
            "met" => LoopStatus::Met,
            "expired" => LoopStatus::Expired,
            _ => return None,
        })
    }
}

/// The task a loop opens at its deadline ([`OnDeadline::OpenTask`], [`OnDeadline::NoShowFollowup`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopOpens {
    pub task_type: String,
    pub goal: String,
    /// The trigger that fired, if a trigger's delay is what waits.
    #[serde(default)]
    pub trigger_id: Option<String>,
    /// The event that caused it.
    pub event_id: String,
    #[serde(default)]
    pub context: serde_json::Value,
}

/// One expectation: see the module docs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoop {
    pub id: ulid::Ulid,
    pub account_id: AccountId,
    pub member_id: MemberId,
    #[serde(default)]
    pub task_id: Option<TaskId>,
    /// The staff to-do it waits on (the owner's-day to-dos register these).
    #[serde(default)]
    pub todo_id: Option<String>,
    pub expects: Expects,
    pub deadline: Timestamp,
    pub on_deadline: OnDeadline,
    pub status: LoopStatus,
    /// What met it (`checkin.created:{event id}`, `reply:{task}`…).
    #[serde(default)]
    pub met_by: Option<String>,
    #[serde(default)]
    pub resolved_at: Option<Timestamp>,
    #[serde(default)]
    pub opens: Option<LoopOpens>,
    pub created_at: Timestamp,
}

/// A signal a loop may be waiting for, as the engine hands it to [`OpenLoop::met_by_signal`].
#[derive(Clone, Copy, Debug)]
pub enum LoopSignal<'a> {
    /// A member event (projected from a webhook or PushPress), by its delivery id.
    Event { event: &'a MemberEvent, id: &'a str },
    /// The member replied to this task's mail.
    Reply { task: TaskId },
    /// A staff to-do was marked done.
    TodoDone { todo: &'a str },
}

impl OpenLoop {
    /// A new open loop.
    pub fn new(
        account_id: AccountId,
        member_id: MemberId,
        expects: Expects,
        deadline: Timestamp,
        on_deadline: OnDeadline,
        now: Timestamp,
    ) -> Self {
        Self {
            id: new_ulid(now),
            account_id,
            member_id,
            task_id: None,
            todo_id: None,
            expects,
            deadline,
            on_deadline,
            status: LoopStatus::Open,
            met_by: None,
            resolved_at: None,
            opens: None,
            created_at: now,
        }
    }

    pub fn for_task(self, task: TaskId) -> Self {
        Self {
            task_id: Some(task),
            ..self
        }
    }

    pub fn opening(self, opens: LoopOpens) -> Self {
        Self {
            opens: Some(opens),
            ..self
        }
    }

    /// The loop a staff to-do registers: met when the to-do is done ([`LoopSignal::TodoDone`])
    /// — or, for one whose point is the member coming back (`get_them_back`), by the member's
    /// check-in too —, else the owner is told at `deadline` that it is overdue.
    pub fn for_todo(
        account_id: AccountId,
        member_id: MemberId,
        todo: &str,
        get_them_back: bool,
        deadline: Timestamp,
        now: Timestamp,
    ) -> Self {
        let expects = if get_them_back { Expects::Checkin } else { Expects::TodoDone };
        Self {
            todo_id: Some(todo.to_owned()),
            ..Self::new(account_id, member_id, expects, deadline, OnDeadline::Escalate, now)
        }
    }

    /// What of `signal` meets this loop, as `met_by` says it; `None` if it does not.
    pub fn met_by_signal(&self, signal: LoopSignal<'_>) -> Option<String> {
        if self.status != LoopStatus::Open {
            return None;
        }
        match (self.expects, signal) {
            (Expects::Reply, LoopSignal::Reply { task }) if self.task_id == Some(task) => Some(format!("reply:{task}")),
            (_, LoopSignal::TodoDone { todo }) if self.todo_id.as_deref() == Some(todo) => Some(format!("todo_done:{todo}")),
            (Expects::Checkin | Expects::TrialAttended, LoopSignal::Event { event, id }) => match event {
                MemberEvent::CheckinCreated { member_id, .. } if *member_id == self.member_id => Some(format!("checkin.created:{id}")),
                _ => None,
            },
            (Expects::PaymentResolved, LoopSignal::Event { event, id }) => match event {
                MemberEvent::PaymentSucceeded { member_id, .. } if *member_id == self.member_id => Some(format!("payment.succeeded:{id}")),
                MemberEvent::Enrollment { member_id, enrollment }
                    if *member_id == self.member_id && enrollment.status == EnrollmentStatus::Active =>
                {
                    Some(format!("enrollment.active:{id}"))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether the deadline has passed with the loop open.
    pub fn is_overdue(&self, now: Timestamp) -> bool {
        self.status == LoopStatus::Open && self.deadline <= now
    }
}

/// The shard of the deadline index a loop waits in (spreads the index over partitions).
pub fn loop_shard(id: ulid::Ulid) -> u32 {
    crate::task::work::due_shard(&TaskId(id), crate::kernel::limits::DUE_INDEX_SHARDS)
}

/// What a task's goal waits for, from the first goal signal of its type a checker can see.
pub fn goal_expects(task_type: &str) -> Option<Expects> {
    outcome::completing_signals(task_type).find_map(|s| {
        if s.signal.starts_with("checkin") || s.signal == "reactivation" {
            Some(Expects::Checkin)
        } else if s.signal == "payment_succeeded" {
            Some(Expects::PaymentResolved)
        } else {
            None
        }
    })
}

/// The loops a sent touch registers: a reply expected by the next step's time (the follow-up,
/// or the budget's end when none is left), and — on the first touch of a type whose goal a
/// signal shows — the goal expected by the end of its verification window (the attribution
/// deadline). `next_step` is the time the task's next step is scheduled for.
pub fn loops_for_sent_touch(task: &Task, touch: u32, next_step: Option<Timestamp>, now: Timestamp) -> Vec<OpenLoop> {
    let mut loops = Vec::new();
    let more_touches = task.budget.messages_used < task.budget.messages_max;
    let (deadline, then) = match next_step {
        Some(at) if more_touches => (at, OnDeadline::FollowUp),
        Some(at) => (at, OnDeadline::Close),
        None => (task.budget.expires_at, OnDeadline::Close),
    };
    loops.push(OpenLoop::new(task.account_id, task.member.id.clone(), Expects::Reply, deadline, then, now).for_task(task.id));
    if touch == 0
        && let Some(expects) = goal_expects(&task.task_type)
    {
        let window = outcome::verification_window_days(&task.task_type).unwrap_or(0);
        let deadline = outcome::watch_from(task).max(now) + SignedDuration::from_hours(24 * i64::from(window.max(1)));
        loops.push(OpenLoop::new(task.account_id, task.member.id.clone(), expects, deadline, OnDeadline::Close, now).for_task(task.id));
    }
    loops
}

/// How long a lead's booked class or appointment is waited on after its start before it
/// counts as a no-show: a check-in is usually recorded at the door, but late.
pub const TRIAL_GRACE: SignedDuration = SignedDuration::from_hours(3);

/// The loop a lead's booking registers: attended (a check-in) by the booking's start and a
/// grace after it, else the lead follow-up for a no-show.
pub fn trial_loop(account_id: AccountId, member_id: MemberId, booked_for: Timestamp, event_id: &str, now: Timestamp) -> OpenLoop {
    let deadline = booked_for.max(now) + TRIAL_GRACE;
    OpenLoop::new(
        account_id,
        member_id,
        Expects::TrialAttended,
        deadline,
        OnDeadline::NoShowFollowup,
        now,
    )
    .opening(LoopOpens {
        task_type: "lead_followup".into(),
        goal: "Follow up with a lead who booked a class and did not come, kindly, and offer another time".into(),
        trigger_id: None,
        event_id: event_id.to_owned(),
        context: serde_json::json!({"no_show": true, "booked_for": booked_for}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, sample_task_for};

    fn checkin(member: &str) -> MemberEvent {
        MemberEvent::CheckinCreated {
            member_id: MemberId::parse(member).expect("id"),
            checked_in_at: at("2026-11-02T14:00:00Z"),
            class_name: None,
        }
    }

    #[test]
    fn a_checkin_meets_the_members_checkin_and_trial_loops_only() {
        let now = at("2026-11-02T10:00:00Z");
        let account = AccountId(new_ulid(now));
        let m1 = MemberId::parse("m_1").expect("id");
        let event = checkin("m_1");
        let signal = LoopSignal::Event { event: &event, id: "wh_1" };
        for expects in [Expects::Checkin, Expects::TrialAttended] {
            let open = OpenLoop::new(account, m1.clone(), expects, now, OnDeadline::Close, now);
            assert_eq!(open.met_by_signal(signal).as_deref(), Some("checkin.created:wh_1"));
        }
        for expects in [Expects::Reply, Expects::PaymentResolved, Expects::TodoDone, Expects::Delay] {
            let open = OpenLoop::new(account, m1.clone(), expects, now, OnDeadline::Close, now);
            assert_eq!(open.met_by_signal(signal), None, "{expects:?}");
        }
        let other = OpenLoop::new(
            account,
            MemberId::parse("m_2").expect("id"),
            Expects::Checkin,
            now,
            OnDeadline::Close,
            now,
        );
        assert_eq!(other.met_by_signal(signal), None, "another member's loop");
        let met = OpenLoop {
            status: LoopStatus::Met,
            ..OpenLoop::new(account, m1, Expects::Checkin, now, OnDeadline::Close, now)
        };
        assert_eq!(met.met_by_signal(signal), None, "a resolved loop is met once");
    }

    #[test]
    fn a_sent_touch_expects_a_reply_by_the_follow_up_and_the_first_one_the_goal() {
        let now = at("2026-11-02T10:00:00Z");
        let account = AccountId(new_ulid(now));
        let mut task = sample_task_for(account, MemberId::parse("m_1").expect("id"), crate::task::TaskStatus::Waiting, now);
        task.task_type = "churn_risk".into();
        task.budget.messages_used = 1;
        let follow_up = now + SignedDuration::from_hours(72);
        let loops = loops_for_sent_touch(&task, 0, Some(follow_up), now);
        assert_eq!(loops.len(), 2, "{loops:?}");
        assert_eq!(
            (loops[0].expects, loops[0].deadline, loops[0].on_deadline),
            (Expects::Reply, follow_up, OnDeadline::FollowUp)
        );
        assert_eq!(loops[0].task_id, Some(task.id));
        assert_eq!(loops[1].expects, Expects::Checkin);
        assert!(loops[1].deadline > follow_up);
        let later = loops_for_sent_touch(&task, 1, Some(follow_up), now);
        assert_eq!(later.len(), 1, "the goal is registered once, with the first touch");
    }
}
