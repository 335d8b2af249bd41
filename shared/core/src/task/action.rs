//! Actions beyond e-mail and their idempotency (§32).
//!
//! Every kind of action the system knows has a **safety profile**: how risky it is, whether it
//! can be undone, whether it needs the owner's approval, which budgets it spends and whether
//! it changes anything outside our table. The action executor
//! ([`crate::engine::Engine`]'s automation step) checks [`preflight`] before any handler runs
//! and claims the action's idempotency key in the store, so a retried or duplicated step never
//! repeats an action that went through.
//!
//! Member e-mail (`send_email`) is the one action that runs on its own path: the send path in
//! `engine/lifecycle/work.rs`, whose gates (budgets, member ledger, daily cap, window, suppression, the
//! reserved outbound record as its idempotency key) are a superset of [`preflight`]. The
//! actions automation tasks may run are the [`Action`] variants; asking for any other kind is
//! a clear error that says where that kind is done instead.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, MemberId, TaskId};
use crate::kernel::limits;
use crate::members::event::MemberStatus;
use crate::task::Task;
use crate::task::reason::Reason;

/// Every kind of action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    SendEmail,
    SendSms,
    TagMember,
    RemoveTag,
    UpdateMemberStatus,
    UpdateMemberNotes,
    CreatePushpressTask,
    ResearchMember,
    EvaluateConversation,
    DraftMessage,
    CreatePlan,
    LogNote,
    NotifyOwner,
    NotifyCoach,
    CreateEscalation,
    ScheduleFollowup,
    ScheduleCheckin,
}

impl ActionType {
    pub const ALL: [ActionType; 17] = [
        ActionType::SendEmail,
        ActionType::SendSms,
        ActionType::TagMember,
        ActionType::RemoveTag,
        ActionType::UpdateMemberStatus,
        ActionType::UpdateMemberNotes,
        ActionType::CreatePushpressTask,
        ActionType::ResearchMember,
        ActionType::EvaluateConversation,
        ActionType::DraftMessage,
        ActionType::CreatePlan,
        ActionType::LogNote,
        ActionType::NotifyOwner,
        ActionType::NotifyCoach,
        ActionType::CreateEscalation,
        ActionType::ScheduleFollowup,
        ActionType::ScheduleCheckin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActionType::SendEmail => "send_email",
            ActionType::SendSms => "send_sms",
            ActionType::TagMember => "tag_member",
            ActionType::RemoveTag => "remove_tag",
            ActionType::UpdateMemberStatus => "update_member_status",
            ActionType::UpdateMemberNotes => "update_member_notes",
            ActionType::CreatePushpressTask => "create_pushpress_task",
            ActionType::ResearchMember => "research_member",
            ActionType::EvaluateConversation => "evaluate_conversation",
            ActionType::DraftMessage => "draft_message",
            ActionType::CreatePlan => "create_plan",
            ActionType::LogNote => "log_note",
            ActionType::NotifyOwner => "notify_owner",
            ActionType::NotifyCoach => "notify_coach",
            ActionType::CreateEscalation => "create_escalation",
            ActionType::ScheduleFollowup => "schedule_followup",
            ActionType::ScheduleCheckin => "schedule_checkin",
        }
    }

    pub fn parse(s: &str) -> Option<ActionType> {
        ActionType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The reason a new task with this kind of action waits for the owner's approval
    /// (`None`: the kind needs none — its profile says which do).
    pub fn approval_reason(self) -> Option<Reason> {
        match self {
            ActionType::SendEmail => Some(Reason::ActionRequiresApprovalSendEmail),
            ActionType::SendSms => Some(Reason::ActionRequiresApprovalSendSms),
            ActionType::UpdateMemberStatus => Some(Reason::ActionRequiresApprovalUpdateMemberStatus),
            _ => None,
        }
    }

    /// Where a kind that automation tasks do not run is done instead (`None`: they run it).
    fn done_elsewhere(self) -> Option<&'static str> {
        match self {
            ActionType::SendEmail => Some("member e-mail is sent by communication tasks, through their gates"),
            ActionType::SendSms => Some("SMS is not built: no SMS provider is configured in this system"),
            ActionType::EvaluateConversation | ActionType::DraftMessage => {
                Some("the agent drafts and judges inside a communication task's conversation")
            }
            ActionType::CreatePlan => Some("a plan is made by creating a task with execution_mode \"plan\""),
            ActionType::ScheduleFollowup => Some("follow-ups are subtasks: POST /api/v1/tasks/{id}/subtasks"),
            ActionType::ScheduleCheckin => Some("outcome check-ins are scheduled by the task type's dormant watch"),
            ActionType::UpdateMemberStatus => Some(STATUS_CHANGE_REFUSED),
            _ => None,
        }
    }
}

/// How much can go wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    None,
    Low,
    Medium,
    High,
}

/// Why a member's status cannot be changed from here (`../shared/PUSHPRESS.md` §3).
pub const STATUS_CHANGE_REFUSED: &str =
    "PushPress offers no call to change a member's status (its API has no customer update); change it in PushPress itself";

/// An action kind's safety profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ActionProfile {
    pub risk: Risk,
    pub reversible: bool,
    /// Runs only on a task the owner approved.
    pub requires_approval: bool,
    pub counts_messages: bool,
    pub counts_turns: bool,
    /// Changes something outside our table (PushPress, an inbox).
    pub external: bool,
}

const fn p(
    risk: Risk,
    reversible: bool,
    requires_approval: bool,
    counts_messages: bool,
    counts_turns: bool,
    external: bool,
) -> ActionProfile {
    ActionProfile {
        risk,
        reversible,
        requires_approval,
        counts_messages,
        counts_turns,
        external,
    }
}

/// The profile of every kind.
pub const fn profile(kind: ActionType) -> ActionProfile {
    use ActionType::*;
    use Risk::{High, Low, Medium, None as NoRisk};
    match kind {
        SendEmail | SendSms => p(High, false, true, true, true, true),
        TagMember | RemoveTag => p(Low, true, false, false, false, true),
        UpdateMemberStatus => p(High, true, true, false, false, true),
        UpdateMemberNotes => p(Low, false, false, false, false, true),
        CreatePushpressTask => p(Medium, true, false, false, false, true),
        ResearchMember | EvaluateConversation | DraftMessage | CreatePlan => p(NoRisk, true, false, false, true, false),
        LogNote => p(NoRisk, true, false, false, false, false),
        NotifyOwner | NotifyCoach => p(Low, false, false, false, false, true),
        CreateEscalation | ScheduleFollowup | ScheduleCheckin => p(NoRisk, true, false, false, false, false),
    }
}

/// An action an automation task runs, with its parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    TagMember {
        tag: String,
    },
    RemoveTag {
        tag: String,
    },
    UpdateMemberStatus {
        status: MemberStatus,
    },
    UpdateMemberNotes {
        note: String,
    },
    CreatePushpressTask {
        title: String,
    },
    /// Read what we know of the member into the task's conversation.
    ResearchMember,
    LogNote {
        text: String,
    },
    NotifyOwner {
        message: String,
    },
    /// There is no coach channel: the owner is told, addressed to the coach.
    NotifyCoach {
        coach: String,
        message: String,
    },
    /// Stop here and hand the task to the owner.
    CreateEscalation {
        reason: String,
    },
}

impl Action {
    pub fn kind(&self) -> ActionType {
        match self {
            Action::TagMember { .. } => ActionType::TagMember,
            Action::RemoveTag { .. } => ActionType::RemoveTag,
            Action::UpdateMemberStatus { .. } => ActionType::UpdateMemberStatus,
            Action::UpdateMemberNotes { .. } => ActionType::UpdateMemberNotes,
            Action::CreatePushpressTask { .. } => ActionType::CreatePushpressTask,
            Action::ResearchMember => ActionType::ResearchMember,
            Action::LogNote { .. } => ActionType::LogNote,
            Action::NotifyOwner { .. } => ActionType::NotifyOwner,
            Action::NotifyCoach { .. } => ActionType::NotifyCoach,
            Action::CreateEscalation { .. } => ActionType::CreateEscalation,
        }
    }

    pub fn profile(&self) -> ActionProfile {
        profile(self.kind())
    }

    /// Whether PushPress would have made it once: these are now Openloop's own (tags and
    /// notes as member annotations, a staff to-do as an owner notice) or refused (status).
    pub fn was_pushpress_change(&self) -> bool {
        matches!(
            self,
            Action::TagMember { .. }
                | Action::RemoveTag { .. }
                | Action::UpdateMemberStatus { .. }
                | Action::UpdateMemberNotes { .. }
                | Action::CreatePushpressTask { .. }
        )
    }

    /// One line for the conversation and the log.
    pub fn describe(&self) -> String {
        match self {
            Action::TagMember { tag } => format!("tag_member \"{tag}\""),
            Action::RemoveTag { tag } => format!("remove_tag \"{tag}\""),
            Action::UpdateMemberStatus { status } => format!("update_member_status to {}", status.as_str()),
            Action::UpdateMemberNotes { .. } => "update_member_notes".into(),
            Action::CreatePushpressTask { title } => format!("create_pushpress_task \"{title}\""),
            Action::ResearchMember => "research_member".into(),
            Action::LogNote { .. } => "log_note".into(),
            Action::NotifyOwner { .. } => "notify_owner".into(),
            Action::NotifyCoach { coach, .. } => format!("notify_coach {coach}"),
            Action::CreateEscalation { reason } => format!("create_escalation: {reason}"),
        }
    }

    /// An action from its JSON (`{"type": "tag_member", "tag": "at-risk"}`), checked.
    pub fn parse(value: &serde_json::Value) -> Result<Action, InvalidInput> {
        let name = value
            .get("type")
            .and_then(|t| t.as_str())
            .ok_or_else(|| InvalidInput::new("invalid_action", "every action is an object with a \"type\""))?;
        let Some(kind) = ActionType::parse(name) else {
            return Err(InvalidInput::new("unknown_action_type", format!("unknown action type {name:?}")));
        };
        if let Some(instead) = kind.done_elsewhere() {
            return Err(InvalidInput::new(
                "unsupported_action",
                format!("automation tasks do not run {name}: {instead}"),
            ));
        }
        let action: Action =
            serde_json::from_value(value.clone()).map_err(|e| InvalidInput::new("invalid_action", format!("{name}: {e}")))?;
        action.check()?;
        Ok(action)
    }

    fn check(&self) -> Result<(), InvalidInput> {
        let (field, text, max) = match self {
            Action::TagMember { tag } | Action::RemoveTag { tag } => ("tag", tag, limits::MAX_TAG_LEN),
            Action::UpdateMemberNotes { note } => ("note", note, limits::MAX_ACTION_TEXT_LEN),
            Action::CreatePushpressTask { title } => ("title", title, limits::MAX_TAG_LEN * 4),
            Action::LogNote { text } => ("text", text, limits::MAX_ACTION_TEXT_LEN),
            Action::NotifyOwner { message } => ("message", message, limits::MAX_ACTION_TEXT_LEN),
            Action::NotifyCoach { coach, message } => {
                if coach.trim().is_empty() || coach.len() > limits::MAX_TAG_LEN {
                    return Err(InvalidInput::new(
                        "invalid_action",
                        format!("notify_coach: coach must be 1-{} characters", limits::MAX_TAG_LEN),
                    ));
                }
                ("message", message, limits::MAX_ACTION_TEXT_LEN)
            }
            Action::CreateEscalation { reason } => ("reason", reason, limits::MAX_ACTION_TEXT_LEN),
            Action::UpdateMemberStatus { .. } | Action::ResearchMember => return Ok(()),
        };
        if text.trim().is_empty() || text.len() > max || (max == limits::MAX_TAG_LEN && text.contains(['\r', '\n'])) {
            return Err(InvalidInput::new(
                "invalid_action",
                format!("{}: {field} must be 1-{max} characters", self.kind().as_str()),
            ));
        }
        Ok(())
    }
}

/// A task's list of actions as given at creation, checked.
pub fn parse_actions(values: &[serde_json::Value]) -> Result<Vec<Action>, InvalidInput> {
    if values.len() > limits::MAX_ACTIONS_PER_TASK {
        return Err(InvalidInput::new(
            "too_many_actions",
            format!("a task runs at most {} actions", limits::MAX_ACTIONS_PER_TASK),
        ));
    }
    values.iter().map(Action::parse).collect()
}

/// What the pre-flight checks allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preflight {
    Run,
    /// Dry run or shadow: an action with an outside effect is recorded, not run.
    RecordOnly,
    /// Refused; the task goes to the owner with this reason.
    Refuse {
        reason: Reason,
        detail: String,
    },
}

/// Whether `action` may run for `task` now: its budgets, its approval, and whether this step
/// may touch the outside world at all (`live`).
pub fn preflight(action: &Action, task: &Task, live: bool) -> Preflight {
    let profile = action.profile();
    if profile.counts_messages && task.budget.messages_used >= task.budget.messages_max {
        return Preflight::Refuse {
            reason: Reason::MessageBudgetExhausted,
            detail: format!("{} of {} messages used", task.budget.messages_used, task.budget.messages_max),
        };
    }
    if profile.counts_turns && task.budget.turns_max > 0 && task.budget.turns_used >= task.budget.turns_max {
        return Preflight::Refuse {
            reason: Reason::TurnBudgetExhausted,
            detail: format!("{} of {} turns used", task.budget.turns_used, task.budget.turns_max),
        };
    }
    if profile.requires_approval && task.approved_at.is_none() {
        return Preflight::Refuse {
            reason: Reason::RequiresApproval,
            detail: format!("{} runs only on a task the owner approved", action.kind().as_str()),
        };
    }
    if profile.external && !live {
        return Preflight::RecordOnly;
    }
    Preflight::Run
}

/// Where an action's one execution is recorded: the task, the kind, and its slot in the run
/// (its index in the task's list, or the member a batch action is for) — spec §32.2.
pub fn idempotency_key(task: TaskId, kind: ActionType, slot: &str) -> String {
    format!("{task}:{}:{slot}", kind.as_str())
}

/// How far an action got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionState {
    /// Claimed; the handler may or may not have run (a worker that finds this did not finish).
    Started,
    Done,
    /// Dry run or shadow: what would have run.
    Recorded,
    /// Failed before changing anything we know of; may be claimed again.
    Failed,
}

/// One action's entry in the action log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub account_id: AccountId,
    pub task_id: TaskId,
    pub key: String,
    /// The member it was about.
    pub member_id: MemberId,
    pub action: Action,
    pub state: ActionState,
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}

/// What claiming an action's key found.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionClaim {
    /// Ours to run.
    Claimed,
    /// Someone ran it or is running it (never a `Failed` one: those are claimed again).
    Existing(Box<ActionRecord>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskStatus;
    use crate::testing::sample_task;

    #[test]
    fn a_kind_has_an_approval_reason_exactly_when_its_profile_needs_approval() {
        for kind in ActionType::ALL {
            let reason = kind.approval_reason();
            assert_eq!(reason.is_some(), profile(kind).requires_approval, "{kind:?}");
            if let Some(reason) = reason {
                assert_eq!(reason.as_str(), format!("action_requires_approval: {}", kind.as_str()));
            }
        }
    }

    #[test]
    fn every_kind_has_the_profile_the_spec_gives_it() {
        // (kind, risk, reversible, approval, messages, turns, external) — spec §15.2.
        use ActionType::*;
        let table = [
            (SendEmail, Risk::High, false, true, true, true, true),
            (SendSms, Risk::High, false, true, true, true, true),
            (TagMember, Risk::Low, true, false, false, false, true),
            (RemoveTag, Risk::Low, true, false, false, false, true),
            (UpdateMemberStatus, Risk::High, true, true, false, false, true),
            (UpdateMemberNotes, Risk::Low, false, false, false, false, true),
            (CreatePushpressTask, Risk::Medium, true, false, false, false, true),
            (ResearchMember, Risk::None, true, false, false, true, false),
            (EvaluateConversation, Risk::None, true, false, false, true, false),
            (DraftMessage, Risk::None, true, false, false, true, false),
            (CreatePlan, Risk::None, true, false, false, true, false),
            (LogNote, Risk::None, true, false, false, false, false),
            (NotifyOwner, Risk::Low, false, false, false, false, true),
            (NotifyCoach, Risk::Low, false, false, false, false, true),
            (CreateEscalation, Risk::None, true, false, false, false, false),
            (ScheduleFollowup, Risk::None, true, false, false, false, false),
            (ScheduleCheckin, Risk::None, true, false, false, false, false),
        ];
        assert_eq!(table.len(), ActionType::ALL.len());
        for (kind, risk, reversible, approval, messages, turns, external) in table {
            assert_eq!(
                profile(kind),
                p(risk, reversible, approval, messages, turns, external),
                "{}",
                kind.as_str()
            );
            assert_eq!(ActionType::parse(kind.as_str()), Some(kind));
        }
    }

    #[test]
    fn actions_parse_with_clear_errors() {
        let ok = Action::parse(&serde_json::json!({"type": "tag_member", "tag": "at-risk"})).expect("parses");
        assert_eq!(ok, Action::TagMember { tag: "at-risk".into() });
        let status = Action::parse(&serde_json::json!({"type": "update_member_status", "status": "frozen"})).expect_err("refused");
        assert_eq!(status.code, "unsupported_action");
        assert!(status.message.contains("PushPress offers no call"), "{}", status.message);
        for (value, code) in [
            (serde_json::json!({"tag": "x"}), "invalid_action"),
            (serde_json::json!({"type": "launch_rocket"}), "unknown_action_type"),
            (serde_json::json!({"type": "send_email"}), "unsupported_action"),
            (serde_json::json!({"type": "schedule_checkin"}), "unsupported_action"),
            (serde_json::json!({"type": "tag_member"}), "invalid_action"),
            (serde_json::json!({"type": "tag_member", "tag": " "}), "invalid_action"),
            (serde_json::json!({"type": "tag_member", "tag": "a\nb"}), "invalid_action"),
        ] {
            assert_eq!(Action::parse(&value).expect_err("refused").code, code, "{value}");
        }
        let many = vec![serde_json::json!({"type": "research_member"}); limits::MAX_ACTIONS_PER_TASK + 1];
        assert_eq!(parse_actions(&many).expect_err("refused").code, "too_many_actions");
    }

    #[test]
    fn preflight_checks_budgets_approval_and_the_outside_world() {
        let mut task = sample_task(TaskStatus::Executing);
        let tag = Action::TagMember { tag: "vip".into() };
        let status = Action::UpdateMemberStatus {
            status: MemberStatus::Frozen,
        };
        let note = Action::LogNote { text: "hi".into() };
        assert_eq!(preflight(&tag, &task, true), Preflight::Run);
        assert_eq!(preflight(&tag, &task, false), Preflight::RecordOnly);
        assert_eq!(
            preflight(&note, &task, false),
            Preflight::Run,
            "internal actions run in a dry run too"
        );
        assert!(matches!(
            preflight(&status, &task, true),
            Preflight::Refuse {
                reason: Reason::RequiresApproval,
                ..
            }
        ));
        task.approved_at = Some(task.created_at);
        assert_eq!(preflight(&status, &task, true), Preflight::Run);
        task.budget.turns_max = 2;
        task.budget.turns_used = 2;
        assert!(matches!(
            preflight(&Action::ResearchMember, &task, true),
            Preflight::Refuse {
                reason: Reason::TurnBudgetExhausted,
                ..
            }
        ));
        assert_eq!(preflight(&tag, &task, true), Preflight::Run, "tags spend no turns");
    }
}
