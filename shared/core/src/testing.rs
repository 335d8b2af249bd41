//! Fixtures for tests (unit tests here, the conformance suite, the emulator tests).

use jiff::{SignedDuration, Timestamp};

use crate::kernel::ids::{AccountId, Email, MemberId, TaskId};
use crate::owner::account::{Account, Settings};
use crate::task::task_type::Priority;
use crate::task::{Budget, Draft, MemberRef, Task, TaskStatus, TriggerType};

pub fn at(s: &str) -> Timestamp {
    s.parse().unwrap_or_else(|e| panic!("bad timestamp {s}: {e}"))
}

pub fn sample_account(now: Timestamp) -> Account {
    Account {
        id: AccountId::generate(now),
        name: "CrossFit Renegade".into(),
        settings: Settings::defaults("America/New_York".into()),
        webhook_secret: "whsec_dGVzdA==".into(),
        paused: false,
        pushpress: None,
        sending_identity: None,
        learning_patterns: Default::default(),
        approval_streaks: Default::default(),
        removal: None,
        pooled_lift: Vec::new(),
        holdout_draw: Default::default(),
        experiments: Vec::new(),
        session_version: 0,
        credentials: Default::default(),
        last_seen_at: None,
        member_open_tasks_kept: true,
        webhook_endpoints: Some(0),
        created_at: now,
        version: 1,
    }
}

/// A payment-recovery task in `status`, created at 2026-11-02T14:00Z (09:00 in New York).
pub fn sample_task(status: TaskStatus) -> Task {
    let now = at("2026-11-02T14:00:00Z");
    sample_task_for(
        AccountId::generate(now),
        MemberId::parse("m_1").unwrap_or_else(|e| panic!("{e}")),
        status,
        now,
    )
}

pub fn sample_task_for(account: AccountId, member: MemberId, status: TaskStatus, now: Timestamp) -> Task {
    Task {
        id: TaskId::generate(now),
        account_id: account,
        task_type: "payment_recovery".into(),
        status,
        priority: Priority::Critical,
        member: MemberRef {
            email: Email::parse(&format!("{}@example.com", member.as_str().replace(['_', ':'], "-"))).ok(),
            id: member,
            name: Some("Sarah Johnson".into()),
            plan_id: None,
            monthly_value: None,
        },
        goal: "Recover a failed payment".into(),
        confidence: 90,
        draft: Some(Draft {
            subject: "Quick note about your membership".into(),
            body: "Hi Sarah, your last payment did not go through.".into(),
        }),
        thread_subject: None,
        thread: Vec::new(),
        budget: Budget {
            messages_used: 0,
            messages_max: 2,
            turns_used: 0,
            turns_max: 4,
            expires_at: now + SignedDuration::from_hours(24 * 7),
        },
        ai_calls: 0,
        touch: 0,
        next_action_at: matches!(status, TaskStatus::Ready | TaskStatus::Waiting).then_some(now),
        attempts: 0,
        outcome: None,
        outcome_reason: None,
        attributed_value: None,
        parent_id: None,
        requirement: None,
        subtasks: Vec::new(),
        batch: false,
        actions: Vec::new(),
        approved_at: None,
        trigger_type: TriggerType::Webhook,
        trigger_event_id: None,
        trigger_context: serde_json::Value::Null,
        created_at: now,
        updated_at: now,
        execution_started_at: None,
        dormant_at: None,
        dormant_expires_at: None,
        resolved_at: None,
        deliverable: None,
        controls: Default::default(),
        awaiting: None,
        answer: None,
        held_question: None,
        parting: None,
        snoozed_until: None,
        review_since: None,
        escalation: None,
        provisional: false,
        goal_at: None,
        attribution_until: None,
        value_source: None,
        owner_edited: false,
        reviewed_touch: None,
        goal_progress: None,
        feedback: None,
        original_draft: None,
        member_last_words: None,
        holdout: None,
        message_template: None,
        experiment: None,
        memories_used: Vec::new(),
        loops: Vec::new(),
        todo_id: None,
        version: 1,
    }
}

/// A clock tests move by hand.
pub struct ManualClock(std::sync::Mutex<Timestamp>);

impl ManualClock {
    pub fn new(at: Timestamp) -> Self {
        Self(std::sync::Mutex::new(at))
    }
    pub fn set(&self, at: Timestamp) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
}

impl crate::ports::Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a [`RecordingMailer`] does with the next sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailerMode {
    Deliver,
    Reject,
    Ambiguous,
}

/// A mailer that keeps what it was asked to send (unit tests only; the emulator tests use SES).
pub struct RecordingMailer {
    pub sent: std::sync::Mutex<Vec<crate::conversation::mail::OutboundMail>>,
    pub mode: std::sync::Mutex<MailerMode>,
}

impl Default for RecordingMailer {
    fn default() -> Self {
        Self {
            sent: std::sync::Mutex::new(Vec::new()),
            mode: std::sync::Mutex::new(MailerMode::Deliver),
        }
    }
}

impl RecordingMailer {
    pub fn sent(&self) -> Vec<crate::conversation::mail::OutboundMail> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    pub fn set_mode(&self, mode: MailerMode) {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner()) = mode;
    }
}

#[async_trait::async_trait]
impl crate::ports::Mailer for RecordingMailer {
    async fn send(&self, mail: &crate::conversation::mail::OutboundMail) -> Result<crate::ports::Delivered, crate::ports::SendError> {
        match *self.mode.lock().unwrap_or_else(|e| e.into_inner()) {
            MailerMode::Reject => {
                return Err(crate::ports::SendError::Rejected("MessageRejected".into()));
            }
            MailerMode::Ambiguous => {
                return Err(crate::ports::SendError::Ambiguous("timeout".into()));
            }
            MailerMode::Deliver => {}
        }
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.push(mail.clone());
        let id = format!("ses-{}", sent.len());
        Ok(crate::ports::Delivered {
            provider_message_id: Some(format!("{id}@us-east-1.amazonses.com")),
            provider_id: id,
        })
    }
}

/// A queue that keeps what it was given.
#[derive(Default)]
pub struct RecordingQueue(pub std::sync::Mutex<Vec<(crate::task::work::QueueName, String)>>);

#[async_trait::async_trait]
impl crate::ports::Queue for RecordingQueue {
    async fn send(
        &self,
        queue: crate::task::work::QueueName,
        messages: Vec<(String, SignedDuration)>,
    ) -> Result<(), crate::ports::QueueError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(messages.into_iter().map(|(body, _)| (queue, body)));
        Ok(())
    }
}

/// An agent that writes a fixed follow-up.
pub struct FixedAgent;

#[async_trait::async_trait]
impl crate::ports::Agent for FixedAgent {
    /// Sure of its drafts: at or above every type's threshold.
    async fn draft(&self, request: &crate::ports::DraftRequest) -> Result<crate::ports::Drafted, crate::ports::AgentError> {
        Ok(crate::ports::Drafted {
            draft: Draft {
                subject: format!("About {}", request.task_type),
                body: format!("Touch {} ({})", request.touch, request.tone),
            },
            confidence: 95,
        })
    }

    async fn evaluate_reply(
        &self,
        _: &crate::ports::ReplyRequest,
    ) -> Result<crate::conversation::reply::ReplyEvaluation, crate::ports::AgentError> {
        Err(crate::ports::AgentError("the fixed agent does not read replies".into()))
    }

    async fn evaluate_completion(
        &self,
        _: &crate::ports::CompletionRequest,
    ) -> Result<crate::ports::GoalProgress, crate::ports::AgentError> {
        Err(crate::ports::AgentError("the fixed agent does not judge progress".into()))
    }

    /// Outreach first (`churn_risk`, optional), then a staff call (required) if the outreach
    /// did not complete, then no more steps.
    async fn plan_next(&self, r: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, crate::ports::AgentError> {
        use crate::ports::{PlanDecision, PlannedStep};
        use crate::task::subtasks::Requirement;
        let step = |task_type: &str, requirement| PlannedStep {
            task_type: task_type.into(),
            goal: r.goal.clone(),
            requirement,
        };
        let next = match r.steps.as_slice() {
            [] => Some(step("churn_risk", Requirement::Optional)),
            [first] if first.status != TaskStatus::Completed => Some(step("staff_call_member", Requirement::Required)),
            _ => None,
        };
        Ok(PlanDecision {
            next,
            remaining: Vec::new(),
            reasoning: "the fixed plan".into(),
        })
    }
}

/// A bus that keeps what was published: `(detail type, detail)`, oldest first.
#[derive(Default)]
pub struct RecordingBus(pub std::sync::Mutex<Vec<(String, serde_json::Value)>>);

impl RecordingBus {
    pub fn published(&self, detail_type: &str) -> Vec<serde_json::Value> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(t, _)| t == detail_type)
            .map(|(_, d)| d.clone())
            .collect()
    }
}

#[async_trait::async_trait]
impl crate::ports::EventBus for RecordingBus {
    async fn publish(&self, detail_type: &str, detail: serde_json::Value) -> Result<(), String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((detail_type.to_owned(), detail));
        Ok(())
    }
}

/// A closed churn task's shared record: one message sent at `hour` (local), answered or not;
/// 240 characters, confidence 80, no business type or contributor — override what a test
/// is about with struct update syntax.
pub fn sample_shared_outcome(hour: i8, replied: bool) -> crate::learning::interaction::SharedOutcome {
    crate::learning::interaction::SharedOutcome {
        task_type: "churn_risk".into(),
        category: "communication".into(),
        agent: "retention".into(),
        status: TaskStatus::Completed,
        outcome: Some("retained".into()),
        outcome_reason: None,
        provisional: false,
        touches: 1,
        turns: u32::from(replied),
        ai_calls: 1,
        days_to_outcome: 3,
        hours_to_first_touch: Some(2),
        first_touch_hour: Some(hour),
        first_touch_weekday: Some(2),
        message_length: Some(240),
        owner_edited: false,
        confidence_bucket: 80,
        trigger: "manual".into(),
        execution_mode: "live".into(),
        attributed_value: None,
        business_type: None,
        flagged_gap_days: None,
        contributor: None,
        subject_style: None,
        template: None,
        arm: None,
        absent_days_at_cancel: None,
    }
}
