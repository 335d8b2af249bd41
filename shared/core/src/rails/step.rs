//! A worker's step, decided: from what the step has read of a
//! task — the task itself, the send snapshot, the conversation, the member's facts, the
//! member's other tasks — and the time, what happens to it now: skip it, defer it, move it,
//! let it go dormant, read what it awaits, hand it to its subtasks or its category's step,
//! record the touch it would send, or claim it and send. The engine (`engine/lifecycle/work.rs`) loads,
//! asks [`decide`], and carries the [`StepDecision`] out; nothing here reads a port or the clock.
//!
//! Some inputs cost a call (the connector refreshes the member's facts, the agent reads a reply)
//! and others a read only a few steps need, so the step reads each only once every earlier rule
//! has let it go on: until [`decide`] can decide, it names the input it needs next
//! ([`Step::Needs`]). A rule looks only at inputs asked for before it, so asking again with one
//! more input never changes an earlier rule's verdict.
//!
//! The claimed touch's own decisions are here too: where its text comes from ([`touch_text`]),
//! and whether a failed draft or send is tried again ([`after_failure`]). The dormant worker's
//! step is [`dormant`].

use jiff::{SignedDuration, Timestamp};

use crate::kernel::ids::Email;
use crate::kernel::limits;
use crate::members::member::MemberFacts;
use crate::rails::anomaly::{self, Anomaly};
use crate::rails::autonomy::{self, SendMode};
use crate::rails::send_gate;
use crate::rails::send_gate::SendSnapshot;
use crate::rails::stale_guard::{self, Freshness};
use crate::rails::texting::{self, Channel};
use crate::task::cadence::OnExhaustion;
use crate::task::controls::TaskMode;
use crate::task::progress;
use crate::task::reason::Reason;
use crate::task::task_loops::{self, Verdict};
use crate::task::task_type::{self, Category, TaskTypeDef};
use crate::task::transition::Why;
use crate::task::{Awaiting, ConversationMessage, Draft, OutboundMessage, OutboundStatus, Task, TaskStatus};

/// Which worker is asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// The first touch of a ready task.
    Execute,
    /// A due follow-up, a deferred first touch, an awaited reply, exhaustion.
    Followup,
}

/// What a step has read so far; `None` is "not read yet".
#[derive(Clone, Debug)]
pub struct StepInput {
    pub worker: Worker,
    pub now: Timestamp,
    /// The task as the step read it.
    pub task: Task,
    /// Everything the gates need, in one read ([`Input::Snapshot`]).
    pub snapshot: Option<SendSnapshot>,
    /// The task's outbound records, for a lease that ran out ([`Input::Outbound`]).
    pub outbound: Option<Vec<OutboundMessage>>,
    /// The task's conversation ([`Input::Conversation`]).
    pub conversation: Option<Vec<ConversationMessage>>,
    /// The task once what it awaited was read and an answer is to be sent ([`Input::Reading`]).
    pub after_reading: Option<Task>,
    /// The member's facts, refreshed by the connector if there is one; `Some(None)` when
    /// nothing is known of them ([`Input::Facts`]).
    pub facts: Option<Option<MemberFacts>>,
    /// The member's active tasks, this one included ([`Input::MemberTasks`]).
    pub member_tasks: Option<Vec<Task>>,
    /// Whether the member's current address (from their facts, when it is not the one the
    /// task was made with) is suppressed ([`Input::AddressSuppressed`]).
    pub address_suppressed: Option<bool>,
    /// A subtask's parent; `Some(None)` when it is gone ([`Input::Parent`]).
    pub parent: Option<Option<Task>>,
}

impl StepInput {
    /// A step that has read only `task`.
    pub fn new(worker: Worker, task: Task, now: Timestamp) -> Self {
        Self {
            worker,
            now,
            task,
            snapshot: None,
            outbound: None,
            conversation: None,
            after_reading: None,
            facts: None,
            member_tasks: None,
            address_suppressed: None,
            parent: None,
        }
    }

    /// The task as the step would leave it: after reading, if it read.
    pub fn current(&self) -> &Task {
        self.after_reading.as_ref().unwrap_or(&self.task)
    }
}

/// What the step must read before it can decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Snapshot,
    Outbound,
    Conversation,
    /// What the task awaits — the member's reply or the owner's guidance — read by the agent;
    /// the reading may end the step itself (the reply decision, `reply.rs`).
    Reading,
    Facts,
    MemberTasks,
    /// The suppression list for the member's current address, when it is not the task's.
    AddressSuppressed,
    /// A subtask's parent: while it is escalated, the subtask holds.
    Parent,
}

/// Where the step stands: an input to read first, or its decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Needs(Input),
    Decided(StepDecision),
}

/// Why a step does nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// The task is not due yet (a stale or early work item).
    NotDue,
    /// The task's status is not one this worker runs.
    Status(TaskStatus),
    /// The operator paused everything.
    GlobalPause,
}

impl Skip {
    /// The code a skipped step reports.
    pub fn code(self) -> String {
        match self {
            Skip::NotDue => "not_due".into(),
            Skip::Status(status) => format!("status_{status}"),
            Skip::GlobalPause => "global_pause".into(),
        }
    }
}

/// The categories whose tasks never e-mail a member: each has its own step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithoutMail {
    StaffTodo,
    Research,
    Automation,
}

/// What the step does.
#[derive(Clone, Debug, PartialEq)]
pub enum StepDecision {
    /// Nothing now.
    Skip(Skip),
    /// The snapshot names no account for the task.
    NoAccount,
    /// Keep the status; the step comes back at `until`.
    Defer { until: Timestamp, why: Why },
    /// A lease ran out before its touch was reserved: back to `waiting`, due now.
    Retry { anomaly: Anomaly },
    /// A lease ran out after its touch was reserved: nobody knows whether the mail left, so
    /// the owner finds out — it is never sent again.
    SendOutcomeUnknown { reserved: OutboundMessage },
    /// The task looks wrong: the owner takes it.
    Anomalous(Anomaly),
    /// The owner takes it.
    Escalate { why: Why },
    /// Closed (`completed` or `cancelled`) without sending.
    Close { to: TaskStatus, why: Why },
    /// The stale guard's verdict: what the member did since makes the touch wrong.
    StaleGuard { to: TaskStatus, why: Why },
    /// No more messages; watch for the outcome until `expires_at`, checking at `next_check`.
    Dormant {
        why: Why,
        next_check: Timestamp,
        expires_at: Timestamp,
    },
    /// One of the task's goal loops was met (`task/task_loops.rs`): the task completes with
    /// the outcome of the goal signal it stands for, instead of sending.
    GoalMet {
        note: crate::task::task_loops::LoopNote,
        signal: &'static crate::task::task_type::GoalSignal,
    },
    /// The member said stop while the account is paused: honoured now.
    HonourStop,
    /// A parent: its state is its subtasks'.
    Coordinate,
    /// A task of a category that never mails a member.
    WithoutMail(WithoutMail),
    /// Every gate passed but the touch is only recorded: a dry run or the ramp's shadow phase.
    RecordWouldSend { to: Email, mode: SendMode },
    /// Every gate passed: claim the task (`claim` is the log of the move to `executing`) and
    /// send, with the account's daily limit as the ramp sets it today.
    Send { to: Email, claim: Why, daily_send_limit: u32 },
    /// Every gate passed and the touch goes by text (`rails/texting.rs`) to `phone`; `email`
    /// is the member's current address, if any (kept on the task).
    Text {
        phone: String,
        email: Option<Email>,
        claim: Why,
        daily_send_limit: u32,
    },
}

/// The next thing the step does, given what it has read.
pub fn decide(seen: &StepInput) -> Step {
    use Step::{Decided, Needs};
    let (task, now) = (&seen.task, seen.now);
    if !task.next_action_at.is_some_and(|due| limits::is_due(due, now)) {
        return Decided(StepDecision::Skip(Skip::NotDue));
    }
    match (task.status, seen.worker) {
        (TaskStatus::Ready, Worker::Execute) | (TaskStatus::Waiting, Worker::Followup) | (TaskStatus::Executing, _) => {}
        (status, _) => return Decided(StepDecision::Skip(Skip::Status(status))),
    }
    // Everything the gates need, in one read: never trust the message that woke us.
    let Some(snapshot) = &seen.snapshot else {
        return Needs(Input::Snapshot);
    };
    if snapshot.system.global_pause {
        return Decided(StepDecision::Skip(Skip::GlobalPause));
    }
    if task.status == TaskStatus::Executing && task.awaiting != Some(Awaiting::OwnerGuidance) {
        // A lease ran out: the worker that held it died mid-step.
        let Some(outbound) = &seen.outbound else {
            return Needs(Input::Outbound);
        };
        return Decided(recover(task, outbound, now));
    }
    let Some(account) = &snapshot.account else {
        return Decided(StepDecision::NoAccount);
    };
    if account.paused {
        // The kill switch holds every step, but not a member's stop (spec §7.6, §22.3).
        if task.awaiting == Some(Awaiting::MemberReply) {
            let Some(conversation) = &seen.conversation else {
                return Needs(Input::Conversation);
            };
            if crate::conversation::reply::says_stop(conversation) {
                return Decided(StepDecision::HonourStop);
            }
        }
        return Decided(StepDecision::Defer {
            until: now + SignedDuration::from_hours(1),
            why: Why::new(Reason::AccountPaused),
        });
    }
    // While a parent is escalated the whole pipeline pauses (spec §17.2): its subtasks send
    // nothing and read nothing; the owner's guidance on the parent makes them due again.
    if let Some(parent_id) = task.parent_id {
        let Some(parent) = &seen.parent else {
            return Needs(Input::Parent);
        };
        // A parent cancelled without its subtasks (its escalation timed out): they go with it.
        if parent.as_ref().is_some_and(|p| p.status == TaskStatus::Cancelled) {
            let why = Why::new(Reason::ParentCancelled).detail(format!("parent task {parent_id} was cancelled"));
            return Decided(StepDecision::Close {
                to: TaskStatus::Cancelled,
                why,
            });
        }
        if parent.as_ref().is_some_and(|p| p.status == TaskStatus::Escalated) {
            let why = Why::new(Reason::HeldForEscalatedParent).detail(format!(
                "parent task {parent_id} waits on the owner; nothing is sent until it resumes"
            ));
            return Decided(StepDecision::Defer {
                until: now + limits::HELD_SUBTASK_RECHECK,
                why,
            });
        }
    }
    if task.batch || !task.subtasks.is_empty() || task.controls.agent_planning {
        return Decided(StepDecision::Coordinate);
    }
    let def = task_type::definition(&task.task_type);
    // The §7.5 reply count needs the conversation of a task that has written to the member
    // (a reply needs a message to answer); an awaited message needs it too.
    let replies = if wrote_to_member(task) || task.awaiting.is_some() {
        let Some(conversation) = &seen.conversation else {
            return Needs(Input::Conversation);
        };
        if wrote_to_member(task) {
            anomaly::member_replies(conversation)
        } else {
            0
        }
    } else {
        0
    };
    if let Some(anomaly) = anomaly::detect(task, replies, now) {
        return Decided(StepDecision::Anomalous(anomaly));
    }
    if task.controls.mode == TaskMode::Plan {
        let why = Why::new(Reason::PlanNotApproved).detail("a task in plan mode runs only once the owner approves its plan");
        return Decided(StepDecision::Escalate { why });
    }
    // A member's reply or the owner's guidance is read before anything else is decided.
    let task = match (&task.awaiting, &seen.after_reading) {
        (None, _) => task,
        (Some(_), Some(read)) => read,
        (Some(_), None) => return Needs(Input::Reading),
    };
    match def.category {
        Category::Communication => {}
        Category::StaffTodo => return Decided(StepDecision::WithoutMail(WithoutMail::StaffTodo)),
        Category::Research => return Decided(StepDecision::WithoutMail(WithoutMail::Research)),
        Category::Automation => return Decided(StepDecision::WithoutMail(WithoutMail::Automation)),
        Category::Recurring => {
            // Recurring types are templates (spec §31.6): their instances are tasks of other
            // categories, so a task of the template's own type has nothing to run.
            let why = Why::new(Reason::NoExecutorForCategory).detail(format!(
                "{} is a recurring template type; its instances do the work. The owner decides",
                def.key
            ));
            return Decided(StepDecision::Escalate { why });
        }
    }
    // What the task's open loops say (`task/task_loops.rs`): a goal met settles it; a loop
    // past its deadline does what it said to do then; otherwise the cadence goes on.
    match task_loops::verdict(task, now) {
        Verdict::Cadence => {}
        Verdict::GoalMet { note, signal } => return Decided(StepDecision::GoalMet { note, signal }),
        Verdict::Escalate { note } => {
            let why = Why::new(Reason::LoopDeadlinePassed).detail(format!(
                "the {} it waited for did not come by {}",
                note.expects.as_str(),
                note.deadline
            ));
            return Decided(StepDecision::Escalate { why });
        }
        // Closing is the budget's policy (its own reason when the budget is what ran out).
        Verdict::Close { .. } => {
            return Decided(spent(task, def, now).unwrap_or_else(|| exhaust(task, Reason::LoopDeadlinePassed, now)));
        }
    }
    // Step 0 (spec §30): is the task still needed, given what the member did since?
    let Some(facts) = &seen.facts else {
        return Needs(Input::Facts);
    };
    match stale_guard::check(task, facts.as_ref(), now) {
        Freshness::Proceed => {}
        Freshness::Resolved {
            to,
            outcome,
            reason,
            detail,
        } => {
            let why = Why::new(reason).outcome(outcome).detail(detail);
            return Decided(StepDecision::StaleGuard { to, why });
        }
        Freshness::Escalate { reason, detail } => {
            let why = Why::new(reason).detail(detail);
            return Decided(StepDecision::StaleGuard {
                to: TaskStatus::Escalated,
                why,
            });
        }
    }
    if let Some(decision) = spent(task, def, now) {
        return Decided(decision);
    }
    // The member as they are now (spec §30): an address that arrived after the task was made
    // (its member event still queued then), or changed since, is the one written to.
    let current_email = facts.as_ref().and_then(|f| f.email.clone());
    let email = current_email.or_else(|| task.member.email.clone());
    // By mail or by text (`texting.rs`): a text needs the member's consent.
    let Some(channel) = texting::choose(&account.settings, task, facts.as_ref(), email.clone()) else {
        // A task opened by an event that overtook the member's own creation (a failed payment
        // read before `member.created`, both queued): their address may be on its way. It waits
        // a while for it before the owner is asked to reach them another way.
        let details_pending = facts.as_ref().is_none_or(|f| f.profile_stamp.is_none());
        if details_pending && now < task.created_at + limits::MEMBER_DETAILS_WAIT {
            return Decided(StepDecision::Defer {
                until: now + limits::MEMBER_DETAILS_RECHECK,
                why: Why::new(Reason::AwaitingMemberDetails),
            });
        }
        let why = Why::new(Reason::MissingMemberEmail)
            .detail("the member has no e-mail address on file, and no phone with their consent to texts");
        return Decided(StepDecision::Escalate { why });
    };
    // The snapshot checked the address the task was made with; a newer one is checked too.
    let suppressed = match &email {
        None => false,
        Some(to) if task.member.email.as_ref() == Some(to) => snapshot.suppressed,
        Some(_) => {
            let Some(suppressed) = seen.address_suppressed else {
                return Needs(Input::AddressSuppressed);
            };
            suppressed
        }
    };
    if suppressed {
        let why = Why::new(Reason::MemberSuppressed).outcome("opted_out");
        return Decided(StepDecision::Close {
            to: TaskStatus::Cancelled,
            why,
        });
    }
    // The ramp (spec §26): a phase may lower the account's daily limit for live sends, and
    // the shadow phase (like a dry-run task) records its touches instead of sending them.
    let ramp = autonomy::ramp(&account.settings, def.agent, now);
    let mode = SendMode::of(task.controls.mode, &ramp);
    let mut settings = account.settings.clone();
    if mode == SendMode::Live {
        settings.daily_send_limit = ramp.daily_send_limit;
    }
    // A text keeps the member's hours first (`texting.rs`), then the gates in their local time.
    if matches!(channel, Channel::Text { .. })
        && let Some((until, why)) = texting::text_hold(&settings, task, facts.as_ref(), now)
    {
        return Decided(StepDecision::Defer { until, why });
    }
    let gate = texting::gate_settings(&settings, &channel, facts.as_ref());
    if let Some((until, why)) = send_gate::send_gate(&gate, task, snapshot, now) {
        return Decided(StepDecision::Defer { until, why });
    }
    let Some(member_tasks) = &seen.member_tasks else {
        return Needs(Input::MemberTasks);
    };
    if let Some(held) = member_tasks.iter().find(|t| {
        t.id != task.id && t.status == TaskStatus::Escalated && t.outcome_reason.as_deref() == Some(Reason::SuspectedStop.as_str())
    }) {
        let why = Why::new(Reason::HeldForSuspectedStop).detail(format!("task {} waits on the owner about a possible stop", held.id));
        return Decided(StepDecision::Defer {
            until: now + SignedDuration::from_hours(24),
            why,
        });
    }
    if let Some((until, why)) = yield_to_higher_priority(task, member_tasks, &settings.time_zone(), now) {
        return Decided(StepDecision::Defer { until, why });
    }
    if mode != SendMode::Live {
        let to = match &channel {
            Channel::Mail(to) => Some(to.clone()),
            Channel::Text { phone } => crate::conversation::sms::record_address(phone),
        };
        if let Some(to) = to {
            return Decided(StepDecision::RecordWouldSend { to, mode });
        }
    }
    let step = match (&task.answer, task.touch == 0) {
        (Some(_), _) => Reason::AnswerDue,
        (None, true) => Reason::FirstTouchDue,
        (None, false) => Reason::FollowUpDue,
    };
    let claim = Why::new(step).detail(format!("message {}", task.touch + 1));
    Decided(match channel {
        Channel::Mail(to) => StepDecision::Send {
            to,
            claim,
            daily_send_limit: settings.daily_send_limit,
        },
        Channel::Text { phone } => StepDecision::Text {
            phone,
            email,
            claim,
            daily_send_limit: settings.daily_send_limit,
        },
    })
}

/// A waiting task that has sent something: only such a task can have been answered.
fn wrote_to_member(task: &Task) -> bool {
    task.status == TaskStatus::Waiting && task.touch > 0
}

/// A task found in `executing` past its lease: if its touch was reserved, nobody knows
/// whether the mail left; otherwise the step never reached the send and simply runs again.
fn recover(task: &Task, outbound: &[OutboundMessage], now: Timestamp) -> StepDecision {
    if let Some(reserved) = outbound
        .iter()
        .find(|m| m.touch == task.touch && matches!(m.status, OutboundStatus::Reserved | OutboundStatus::Sent))
    {
        return StepDecision::SendOutcomeUnknown {
            reserved: reserved.clone(),
        };
    }
    let anomaly = anomaly::detect(task, 0, now).unwrap_or(Anomaly::StuckExecuting { since: task.updated_at });
    StepDecision::Retry { anomaly }
}

/// The task's budgets, in order: its time, its messages, its turns, the cadence's touches. An
/// answer owed to the member is sent whatever the cadence says; the budgets still hold.
fn spent(task: &Task, def: &TaskTypeDef, now: Timestamp) -> Option<StepDecision> {
    if limits::is_due(task.budget.expires_at, now) {
        return Some(exhaust(task, Reason::BudgetTimeExpired, now));
    }
    if task.budget.messages_used >= task.budget.messages_max {
        return Some(exhaust(task, Reason::BudgetMessagesExhausted, now));
    }
    if task.budget.turns_max > 0 && task.budget.turns_used >= task.budget.turns_max {
        return Some(StepDecision::Escalate {
            why: Why::new(Reason::TooManyTurnsWithoutResolution),
        });
    }
    if task.answer.is_none() && !def.cadence.allows_touch(task.touch) {
        return Some(exhaust(task, Reason::AllFollowupTouchesUsed, now));
    }
    None
}

/// The touches (or the time) ran out. With progress towards the goal (the completion
/// evaluator's, kept on the task): a commitment or a signal is the spec's low-confidence
/// completion (§16.1: "budget exhausted with positive signal"), completed with the
/// evaluator's outcome, provisional, so attribution confirms it by the goal's signal or
/// downgrades it; a warm conversation without one goes to the owner (§16.2: "the owner sees
/// 'conversation is warm but stalling' rather than the task silently dying"). Otherwise the
/// cadence's exhaustion policy decides.
pub fn exhaust(task: &Task, reason: Reason, now: Timestamp) -> StepDecision {
    let def = task_type::definition(&task.task_type);
    let summary = task.goal_progress.as_ref().map(|p| p.summary()).unwrap_or_default();
    match progress::spent_with_progress(task.goal_progress.as_ref(), def) {
        Some(progress::SpentWithProgress::CloseProvisionally { outcome }) => {
            let why = Why::new(Reason::BudgetExhaustedWithProgress)
                .outcome(outcome)
                .detail(format!("{reason}: a low-confidence completion on goal progress {summary}"))
                .provisional();
            return StepDecision::Close {
                to: TaskStatus::Completed,
                why,
            };
        }
        Some(progress::SpentWithProgress::Stalled) => {
            let why = Why::new(Reason::ConversationStalled).detail(format!(
                "{} sent and the goal is not reached; progress so far: {summary}",
                crate::kernel::plural::count(task.budget.messages_used, "message", "messages")
            ));
            return StepDecision::Escalate { why };
        }
        None => {}
    }
    let unresponsive = || StepDecision::Close {
        to: TaskStatus::Cancelled,
        why: Why::new(reason).outcome("unresponsive"),
    };
    match def.cadence.on_exhaustion {
        OnExhaustion::Cancel => unresponsive(),
        OnExhaustion::Escalate => {
            let detail = format!(
                "{} sent without settling it; the next step is yours",
                crate::kernel::plural::count(task.budget.messages_used, "message", "messages")
            );
            StepDecision::Escalate {
                why: Why::new(reason).detail(detail),
            }
        }
        // Never started: there is nothing to watch for.
        OnExhaustion::Dormant { .. } if task.status == TaskStatus::Ready => unresponsive(),
        OnExhaustion::Dormant { check_days, max_days } => StepDecision::Dormant {
            why: Why::new(reason).detail(format!("no more messages; watching for outcome signals for up to {max_days} days")),
            next_check: now + days(check_days),
            expires_at: now + days(max_days),
        },
    }
}

fn days(n: u32) -> SignedDuration {
    SignedDuration::from_hours(24 * i64::from(n))
}

/// Priority-based allocation: every send uses the member's one message of the
/// day, so while a more urgent task about the same member wants to send today (due now, or
/// planned later this local day — a follow-up's afternoon hours), this one waits for the next
/// local day. Its touch is delayed, never skipped; and a task the gates deferred to another day
/// is not "wanting to send", so two tasks can never hold each other back.
pub fn yield_to_higher_priority(task: &Task, member_tasks: &[Task], tz: &jiff::tz::TimeZone, now: Timestamp) -> Option<(Timestamp, Why)> {
    let wants_to_send = |other: &Task| {
        // A parent coordinates its subtasks and never sends itself.
        let sends =
            task_type::definition(&other.task_type).category == Category::Communication && other.subtasks.is_empty() && !other.batch;
        let moving = match other.status {
            TaskStatus::Ready | TaskStatus::Waiting => true,
            TaskStatus::Executing => other.awaiting != Some(Awaiting::OwnerGuidance),
            _ => false,
        };
        let today = |due: Timestamp| limits::is_due(due, now) || limits::local_date(due, tz) == limits::local_date(now, tz);
        sends && moving && other.next_action_at.is_some_and(today)
    };
    let first = member_tasks
        .iter()
        .filter(|o| o.id != task.id && o.priority < task.priority && wants_to_send(o))
        .min_by_key(|o| o.priority)?;
    let until = send_gate::next_local_day(now, tz);
    let why = Why::new(Reason::YieldingToHigherPriority).detail(format!(
        "{} task {} ({}) goes first for this member; this {} touch waits until {until}",
        first.task_type,
        first.id,
        first.priority.as_str(),
        task.priority.as_str()
    ));
    Some((until, why))
}

/// Where a claimed touch's text comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TouchText {
    /// Written already: the answer to the member's reply (under the task's subject), or the
    /// first touch's approved draft.
    Ready(Draft),
    /// A follow-up: the agent writes it (one AI call).
    FromAgent,
    /// A first touch with no approved draft: the owner decides.
    Missing(Why),
}

/// The text of the claimed touch of `task`, of type `def`.
pub fn touch_text(task: &Task, def: &TaskTypeDef) -> TouchText {
    if let Some(answer) = &task.answer {
        let subject = task.draft.as_ref().map_or_else(|| def.subject().to_owned(), |d| d.subject.clone());
        return TouchText::Ready(Draft {
            subject,
            body: answer.clone(),
        });
    }
    if task.touch > 0 {
        // A follow-up the owner reviewed (they rewrote the first touch): their approved words.
        if task.reviewed_touch == Some(task.touch)
            && let Some(draft) = &task.draft
        {
            return TouchText::Ready(draft.clone());
        }
        // An approved plan's follow-up: the words the owner approved for this touch.
        return match planned_follow_up(task) {
            Some(draft) => TouchText::Ready(draft),
            None => TouchText::FromAgent,
        };
    }
    match &task.draft {
        Some(draft) => TouchText::Ready(draft.clone()),
        None => TouchText::Missing(Why::new(Reason::MissingDraft).detail("no approved draft to send")),
    }
}

/// Whether the task's later touches wait for the owner's review: the owner rewrote its first
/// touch before approving it, so the thread is in their voice and a canned follow-up would
/// break it (issue 42, "the owner's voice is kept"). An approved plan's follow-ups are the
/// owner's words already, and a touch they reviewed goes out as approved.
pub fn owner_reviews_follow_ups(task: &Task) -> bool {
    task.owner_edited
        && task.touch > 0
        && task.answer.is_none()
        && task.reviewed_touch != Some(task.touch)
        && planned_follow_up(task).is_none()
}

/// The draft an approved plan holds for the task's touch (its step at that position), if any.
fn planned_follow_up(task: &Task) -> Option<Draft> {
    let plan = task.controls.plan.as_ref().filter(|p| p.approved_at.is_some())?;
    let step = plan.steps.get(usize::try_from(task.touch).ok()?)?;
    let content = step.draft_content.as_deref().filter(|c| !c.trim().is_empty())?;
    let subject = task.thread_subject.clone().unwrap_or_default();
    Some(crate::task::plan_edit::draft_of(content, &subject))
}

/// A claimed touch that failed, and is retried with a backoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The agent could not draft it.
    Draft,
    /// The mail provider refused it (a send whose fate is unknown is never retried).
    Send,
}

impl Failure {
    /// The reason each attempt logs.
    pub fn reason(self) -> Reason {
        match self {
            Failure::Draft => Reason::DraftFailed,
            Failure::Send => Reason::SendRejected,
        }
    }

    /// The reason logged when the retries run out and the owner takes it.
    pub fn given_up(self) -> Reason {
        match self {
            Failure::Draft => Reason::DraftFailedAfterRetries,
            Failure::Send => Reason::SendRejectedAfterRetries,
        }
    }
}

/// What a failure leads to; `attempts` counts this one.
#[derive(Clone, Debug, PartialEq)]
pub enum AfterFailure {
    /// Back to `waiting`, due at `until`.
    Retry { attempts: u32, until: Timestamp, why: Why },
    /// The retries ran out: the owner takes it.
    GiveUp { attempts: u32, why: Why },
}

/// Try `task`'s failed touch again after the backoff, or hand it to the owner.
pub fn after_failure(task: &Task, failed: Failure, error: &str, now: Timestamp) -> AfterFailure {
    let attempts = task.attempts + 1;
    match limits::retry_delay(attempts) {
        Some(delay) => {
            let until = now + delay;
            let why = Why::new(failed.reason()).detail(format!("attempt {attempts} failed: {error}; retrying at {until}"));
            AfterFailure::Retry { attempts, until, why }
        }
        None => {
            let why = Why::new(failed.given_up()).detail(format!("{attempts} attempts failed; last error: {error}"));
            AfterFailure::GiveUp { attempts, why }
        }
    }
}

/// The dormant worker's step for a dormant task: never sends, never calls
/// the agent. The engine looks for the goal's signal before it carries out anything but a
/// skip: a member who reached the goal completes the task whatever this says.
pub fn dormant(task: &Task, now: Timestamp) -> StepDecision {
    let quiet = matches!(task.status, TaskStatus::Dormant | TaskStatus::HeldOut);
    if !quiet || !task.next_action_at.is_some_and(|due| limits::is_due(due, now)) {
        return StepDecision::Skip(Skip::NotDue);
    }
    // A held-out task is due once, when its watch ends: closed unanswered, as a contacted
    // task that got no answer is (attribution still watches it for a late win).
    if task.status == TaskStatus::HeldOut {
        return StepDecision::Close {
            to: TaskStatus::Cancelled,
            why: Why::new(Reason::HeldOutWindowEnded)
                .outcome(crate::task::attribution::UNRESPONSIVE)
                .detail("held out: nothing was sent, and no goal signal came within the window a contacted task is watched"),
        };
    }
    if task.dormant_expires_at.is_some_and(|end| limits::is_due(end, now)) {
        return StepDecision::Close {
            to: TaskStatus::Cancelled,
            why: Why::new(Reason::DormantWindowExpired).outcome("unresponsive"),
        };
    }
    let OnExhaustion::Dormant { check_days, .. } = task_type::definition(&task.task_type).cadence.on_exhaustion else {
        return StepDecision::Close {
            to: TaskStatus::Cancelled,
            why: Why::new(Reason::DormantWithoutDormantCadence).outcome("unresponsive"),
        };
    };
    let next_check = now + days(check_days);
    let until = task.dormant_expires_at.map_or(next_check, |end| end.min(next_check));
    StepDecision::Defer {
        until,
        why: Why::new(Reason::DormantCheckNoSignal).detail(format!("next check {until}")),
    }
}

#[cfg(test)]
mod tests;
