//! A task's own open loops, as the task item carries them ([`Task::loops`]): what each waits
//! for, by when and what happens then, and whether it is still open. The notes are written in
//! the same conditional write as the loop records they summarise (the commit that registers a
//! sent touch's loops, the one that meets or expires a loop), so the task's step reads its
//! loops without another request, and the two cannot drift: every change of a task's loop is
//! a write over the task's version, whoever makes it (the member's event, the deadline sweep,
//! the task's own step), so of two racing the second reads again and finds it resolved.
//!
//! What the step makes of them ([`verdict`]): a goal loop met (the member checked in, the
//! payment went through) settles the task as won instead of sending; an overdue loop's
//! `on_deadline` — follow up, close, escalate — is what the step does; a follow-up is due at
//! the earliest open loop's deadline. A resolved note stays on the task until a step has acted
//! on it ([`consume`]), then only its record remains (`GET /api/v1/loops`).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::task::open_loop::{Expects, LoopStatus, OnDeadline, OpenLoop};
use crate::task::outcome;
use crate::task::task_type::GoalSignal;
use crate::task::{Task, TaskStatus};

/// The most notes a task keeps; the oldest resolved ones go first (a task registers two
/// loops on its first touch and one on each later one, so this is never reached by open ones).
pub const MAX_NOTES: usize = 12;

/// One of the task's loops, as the task carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopNote {
    pub id: ulid::Ulid,
    pub expects: Expects,
    pub deadline: Timestamp,
    pub on_deadline: OnDeadline,
    pub status: LoopStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

impl LoopNote {
    pub fn of(l: &OpenLoop) -> Self {
        Self {
            id: l.id,
            expects: l.expects,
            deadline: l.deadline,
            on_deadline: l.on_deadline,
            status: l.status,
            met_by: l.met_by.clone(),
            resolved_at: l.resolved_at,
            created_at: l.created_at,
        }
    }

    /// The loop's record as this note says it is (a task's loops open nothing and wait on no
    /// to-do, so the note holds all of it).
    pub fn record(&self, task: &Task) -> OpenLoop {
        OpenLoop {
            id: self.id,
            account_id: task.account_id,
            member_id: task.member.id.clone(),
            task_id: Some(task.id),
            todo_id: None,
            expects: self.expects,
            deadline: self.deadline,
            on_deadline: self.on_deadline,
            status: self.status,
            met_by: self.met_by.clone(),
            resolved_at: self.resolved_at,
            opens: None,
            created_at: self.created_at,
        }
    }

    pub fn is_open(&self) -> bool {
        self.status == LoopStatus::Open
    }

    /// Whether it waits for the task's goal (not for a reply).
    pub fn is_goal(&self) -> bool {
        matches!(self.expects, Expects::Checkin | Expects::PaymentResolved | Expects::TrialAttended)
    }
}

/// How long past its deadline a task's own loop is left to the task's step (an open task is
/// due at its first deadline, and its step expires the loop in the commit of what it does);
/// past it — a task deferred or paused — the deadline sweep expires it with the task.
pub const LEFT_TO_STEP: jiff::SignedDuration = jiff::SignedDuration::from_hours(1);

/// Whether the sweep leaves `l` to its task's step at `now` (see [`LEFT_TO_STEP`]).
pub fn left_to_step(l: &OpenLoop, now: Timestamp) -> bool {
    is_tasks_own(l) && now < l.deadline + LEFT_TO_STEP
}

/// Whether `l` is a task's own loop (a sent touch's reply or goal), which the task carries —
/// not a to-do's or a booking's, which are kept by their records alone.
pub fn is_tasks_own(l: &OpenLoop) -> bool {
    l.task_id.is_some() && l.todo_id.is_none() && l.opens.is_none()
}

/// Note `loops` (just registered, in the same commit) on `task`, dropping the oldest resolved
/// notes beyond [`MAX_NOTES`].
pub fn note(task: &mut Task, loops: &[OpenLoop]) {
    task.loops.extend(
        loops
            .iter()
            .filter(|l| l.task_id == Some(task.id) && is_tasks_own(l))
            .map(LoopNote::of),
    );
    while task.loops.len() > MAX_NOTES {
        match task.loops.iter().position(|n| !n.is_open()) {
            Some(oldest) => {
                task.loops.remove(oldest);
            }
            None => break,
        }
    }
}

/// Resolve the open note `id` on `task` (met, with what met it, or expired): the loop's
/// record to write in the same commit, `None` if the task has no such open note.
pub fn resolve(task: &mut Task, id: ulid::Ulid, status: LoopStatus, met_by: Option<String>, now: Timestamp) -> Option<OpenLoop> {
    let note = task.loops.iter_mut().find(|n| n.id == id && n.is_open())?;
    note.status = status;
    note.met_by = met_by;
    note.resolved_at = Some(now);
    let note = note.clone();
    Some(note.record(task))
}

/// A member's reply to the task meets its open reply loops: their records, to write with
/// the reply's commit.
pub fn meet_replies(task: &mut Task, now: Timestamp) -> Vec<OpenLoop> {
    let ids: Vec<ulid::Ulid> = task
        .loops
        .iter()
        .filter(|n| n.is_open() && n.expects == Expects::Reply)
        .map(|n| n.id)
        .collect();
    let by = format!("reply:{}", task.id);
    ids.into_iter()
        .filter_map(|id| resolve(task, id, LoopStatus::Met, Some(by.clone()), now))
        .collect()
}

/// What the task's move to `to` does to its open loops: the overdue ones expire (their
/// deadline's action is what the step is doing now), and on closing every one still open
/// expires with the task. The records, to write in the move's commit.
pub fn on_move(task: &mut Task, to: TaskStatus, now: Timestamp) -> Vec<OpenLoop> {
    let ids: Vec<ulid::Ulid> = task
        .loops
        .iter()
        .filter(|n| n.is_open() && (to.is_terminal() || n.deadline <= now))
        .map(|n| n.id)
        .collect();
    ids.into_iter()
        .filter_map(|id| resolve(task, id, LoopStatus::Expired, None, now))
        .collect()
}

/// The step acted on the task's resolved notes: they leave the task (their records stay).
pub fn consume(task: &mut Task) {
    task.loops.retain(LoopNote::is_open);
}

/// The earliest deadline of the task's open loops.
pub fn earliest_open_deadline(task: &Task) -> Option<Timestamp> {
    task.loops.iter().filter(|n| n.is_open()).map(|n| n.deadline).min()
}

/// What the task's loops say its step does now.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Nothing beyond the task's own cadence (no loop resolved or due, or one whose deadline
    /// says to follow up — the cadence's next touch).
    Cadence,
    /// A goal loop was met: the task settles as won, with the goal signal that shows it.
    GoalMet { note: LoopNote, signal: &'static GoalSignal },
    /// A loop passed its deadline unmet and says to close the task.
    Close { note: LoopNote },
    /// A loop passed its deadline unmet and says to tell the owner.
    Escalate { note: LoopNote },
}

/// What the task's loops decide at `now` (see the module docs): a met goal first, then the
/// most serious overdue action (escalate, then close); otherwise the cadence.
pub fn verdict(task: &Task, now: Timestamp) -> Verdict {
    if let Some((note, signal)) = task
        .loops
        .iter()
        .filter(|n| n.status == LoopStatus::Met && n.is_goal())
        .find_map(|n| goal_signal(&task.task_type, n.expects).map(|s| (n.clone(), s)))
    {
        return Verdict::GoalMet { note, signal };
    }
    let overdue = |n: &&LoopNote| n.status == LoopStatus::Expired || (n.is_open() && n.deadline <= now);
    let due: Vec<&LoopNote> = task.loops.iter().filter(overdue).collect();
    if let Some(note) = due.iter().find(|n| n.on_deadline == OnDeadline::Escalate) {
        return Verdict::Escalate { note: (*note).clone() };
    }
    if let Some(note) = due.iter().find(|n| n.on_deadline == OnDeadline::Close) {
        return Verdict::Close { note: (*note).clone() };
    }
    Verdict::Cadence
}

/// The task type's goal signal a loop expecting `expects` stands for (the one
/// [`crate::task::open_loop::goal_expects`] registered it from).
pub fn goal_signal(task_type: &str, expects: Expects) -> Option<&'static GoalSignal> {
    outcome::completing_signals(task_type).find(|s| {
        let of = if s.signal.starts_with("checkin") || s.signal == "reactivation" {
            Some(Expects::Checkin)
        } else if s.signal == "payment_succeeded" {
            Some(Expects::PaymentResolved)
        } else {
            None
        };
        of == Some(expects) || (expects == Expects::TrialAttended && of == Some(Expects::Checkin))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::{AccountId, MemberId, new_ulid};
    use crate::task::open_loop::loops_for_sent_touch;
    use crate::testing::{at, sample_task_for};
    use jiff::SignedDuration;

    fn task_with_loops(now: Timestamp) -> (Task, Vec<OpenLoop>) {
        let account = AccountId(new_ulid(now));
        let mut task = sample_task_for(account, MemberId::parse("m_1").expect("id"), TaskStatus::Waiting, now);
        task.budget.messages_used = 1;
        let loops = loops_for_sent_touch(&task, 0, Some(now + SignedDuration::from_hours(72)), now);
        note(&mut task, &loops);
        (task, loops)
    }

    #[test]
    fn a_sent_touch_is_noted_and_a_met_goal_settles_before_any_deadline() {
        let now = at("2026-11-02T10:00:00Z");
        let (mut task, loops) = task_with_loops(now);
        assert_eq!(task.loops.len(), 2);
        assert_eq!(earliest_open_deadline(&task), Some(loops[0].deadline));
        assert_eq!(verdict(&task, now), Verdict::Cadence);
        let goal = loops.iter().find(|l| l.expects == Expects::PaymentResolved).expect("goal loop");
        let met = resolve(&mut task, goal.id, LoopStatus::Met, Some("payment.succeeded:wh".into()), now).expect("open");
        assert_eq!((met.status, met.task_id), (LoopStatus::Met, Some(task.id)));
        assert_eq!(met.created_at, goal.created_at, "the record is the loop, resolved");
        assert!(
            resolve(&mut task, goal.id, LoopStatus::Expired, None, now).is_none(),
            "resolved once"
        );
        match verdict(&task, now) {
            Verdict::GoalMet { signal, .. } => assert_eq!(signal.outcome, Some("recovered")),
            other => panic!("{other:?}"),
        }
        consume(&mut task);
        assert_eq!(task.loops.len(), 1, "the met note leaves once acted on");
        assert_eq!(verdict(&task, now), Verdict::Cadence);
    }

    #[test]
    fn an_overdue_loops_action_is_the_verdict_and_a_move_expires_it() {
        let now = at("2026-11-02T10:00:00Z");
        let (mut task, loops) = task_with_loops(now);
        task.loops[0].on_deadline = OnDeadline::Escalate;
        let later = loops[0].deadline;
        assert_eq!(verdict(&task, later - SignedDuration::from_secs(1)), Verdict::Cadence, "not yet");
        assert!(matches!(verdict(&task, later), Verdict::Escalate { .. }));
        task.loops[0].on_deadline = OnDeadline::Close;
        assert!(matches!(verdict(&task, later), Verdict::Close { .. }));
        let expired = on_move(&mut task, TaskStatus::Escalated, later);
        assert_eq!(expired.len(), 1, "only the overdue one");
        assert_eq!(expired[0].status, LoopStatus::Expired);
        let closed = on_move(&mut task, TaskStatus::Cancelled, later);
        assert_eq!(closed.len(), 1, "closing expires the rest");
        assert!(task.loops.iter().all(|n| !n.is_open()));
    }

    #[test]
    fn a_reply_meets_only_the_reply_loops() {
        let now = at("2026-11-02T10:00:00Z");
        let (mut task, _) = task_with_loops(now);
        let met = meet_replies(&mut task, now);
        assert_eq!(met.len(), 1);
        assert_eq!(met[0].met_by, Some(format!("reply:{}", task.id)));
        assert!(meet_replies(&mut task, now).is_empty());
        assert_eq!(verdict(&task, now), Verdict::Cadence, "a met reply is read, not settled");
    }
}
