//! The agent, behind the AI cost circuit breaker. The engine reaches the agent
//! only through an [`AiPermit`], and the only way to get one is [`Engine::ai_call`]: every call
//! is counted against the account's calls for its local day (one atomic counter in the store)
//! and the task's calls over its life (a counter on the task, written with the step that used
//! it). A task that has used its calls goes to the owner; an account that has used its day
//! waits for the next. [`draft_request`] is the one place a draft request is built.
//!
//! The owner hears of the day's calls twice at most (spec §7.12, §35.2 `system_alert`, always
//! delivered): when they reach [`AI_WARN_PCT`]% — the counter is atomic, so exactly one call
//! sees that number — and when they run out (claimed once a local day).

use std::sync::Arc;

use jiff::Timestamp;

use super::Engine;
use super::owner_notices::NoticeDraft;
use crate::conversation::prompt::{PromptInput, system_prompt};
use crate::conversation::reply::ReplyEvaluation;
use crate::kernel::limits::{self, AI_CALLS_PER_ACCOUNT_PER_DAY, AI_CALLS_PER_TASK, AI_WARN_PCT};
use crate::owner::account::Account;
use crate::owner::owner_notice::NoticeKind;
use crate::ports::AiCallCount;
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, Drafted, GoalProgress, PlanDecision, PlanRequest, ReplyRequest};
use crate::rails::send_gate::DraftReads;
use crate::task::Task;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::TaskTypeDef;

/// What the agent is asked for touch `touch` (0 = the first message) of a task of `def`
/// toward `goal`. The touches left count this one: the type's cadence, within its message
/// budget. Callers add the tone or context of their occasion.
pub(crate) fn draft_request(
    account: &Account,
    def: &TaskTypeDef,
    goal: &str,
    member_first_name: Option<String>,
    touch: u32,
    prompt: &PromptInput<'_>,
) -> DraftRequest {
    let touches = u32::try_from(def.cadence.intervals.len())
        .unwrap_or(u32::MAX)
        .max(1)
        .min(def.budget.max_messages);
    DraftRequest {
        task_type: def.key.to_owned(),
        goal: goal.to_owned(),
        member_first_name,
        profile: account.settings.profile.clone(),
        business_name: account.sender_name().to_owned(),
        touch,
        tone: def.cadence.tone(touch).to_owned(),
        touches_remaining: touches.saturating_sub(touch),
        context: serde_json::Value::Null,
        // A type without a skill is refused before any draft (spec §36.5); none is empty.
        system_prompt: system_prompt(prompt).unwrap_or_default(),
        // Filled by `Engine::with_message` before the call.
        message: Default::default(),
    }
}

/// The first name the agent may greet a task's member by.
pub(crate) fn first_name(task: &Task) -> Option<String> {
    task.member
        .name
        .as_deref()
        .and_then(|n| n.split_whitespace().next())
        .map(str::to_owned)
}

/// Leave for one AI call, already counted: the only handle on the agent the engine has.
pub(crate) struct AiPermit {
    agent: Arc<dyn Agent>,
}

impl std::fmt::Debug for AiPermit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AiPermit")
    }
}

impl AiPermit {
    pub(crate) async fn draft(self, request: &DraftRequest) -> Result<Drafted, AgentError> {
        self.agent.draft(request).await
    }

    pub(crate) async fn evaluate_reply(self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        self.agent.evaluate_reply(request).await
    }

    pub(crate) async fn evaluate_completion(self, request: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        self.agent.evaluate_completion(request).await
    }

    pub(crate) async fn plan_next(self, request: &PlanRequest) -> Result<PlanDecision, AgentError> {
        self.agent.plan_next(request).await
    }
}

fn alert(title: String, detail: String) -> NoticeDraft {
    NoticeDraft {
        kind: NoticeKind::SystemAlert,
        task_id: None,
        member_id: None,
        title,
        detail,
    }
}

/// Whether an AI call may be made now.
#[derive(Debug)]
pub(crate) enum AiGate {
    /// Yes: the call is counted; the permit makes it.
    Allowed(AiPermit),
    /// The task has made all the calls it may ever make.
    TaskSpent,
    /// The account's calls for today are used up; the day turns at `until`.
    DayUsed { until: Timestamp },
}

impl AiGate {
    /// The decision-log reason of a refused call (`None`: the call is allowed).
    pub(crate) fn refusal(&self) -> Option<Reason> {
        match self {
            AiGate::Allowed(_) => None,
            AiGate::TaskSpent => Some(Reason::AiBudgetExhausted),
            AiGate::DayUsed { .. } => Some(Reason::AiDailyLimit),
        }
    }
}

/// The AI call a claim of `task` may count in its own commit ([`crate::ports::CommitExtras`]):
/// when the snapshot read the account's calls of its local day and both the task and the
/// day have a call left. `None`: the call is asked for on its own ([`Engine::ai_call`]),
/// which also says why there is none.
pub(crate) fn countable(account: &Account, task: &Task, reads: Option<&DraftReads>, now: Timestamp) -> Option<AiCallCount> {
    let today = limits::local_date(now, &account.settings.time_zone());
    let seen = reads?.ai_calls_on(today)?;
    (task.ai_calls < AI_CALLS_PER_TASK && seen < AI_CALLS_PER_ACCOUNT_PER_DAY).then_some(AiCallCount { date: today, seen })
}

impl Engine {
    /// Ask for one AI call for a task that has made `task_calls` so far (`None` before the
    /// task exists). An allowed call is counted at once, whether or not it succeeds.
    pub(crate) async fn ai_call(&self, account: &Account, task_calls: Option<u32>, now: Timestamp) -> Result<AiGate, EngineError> {
        if task_calls.is_some_and(|n| n >= AI_CALLS_PER_TASK) {
            return Ok(AiGate::TaskSpent);
        }
        let tz = account.settings.time_zone();
        let today = limits::local_date(now, &tz);
        match self.store.count_ai_call(account.id, today, AI_CALLS_PER_ACCOUNT_PER_DAY).await? {
            Some(calls) => Ok(self.counted_ai_call(account, calls, now).await),
            None => {
                tracing::warn!(account = %account.id, limit = AI_CALLS_PER_ACCOUNT_PER_DAY, "the account's AI calls for today are used up");
                let until = crate::rails::send_gate::next_local_day(now, &tz);
                if matches!(self.claim_once_today(account, "ai_day_used", now).await, Ok(true)) {
                    let draft = alert(
                        "AI calls for today used up".into(),
                        format!(
                            "The agent has made all {AI_CALLS_PER_ACCOUNT_PER_DAY} AI calls allowed for {today}. \
                             Drafts and replies that need the AI wait until {until}; every task keeps its place."
                        ),
                    );
                    self.notify_owner_after(account.id, draft, false).await;
                }
                Ok(AiGate::DayUsed { until })
            }
        }
    }

    /// An AI call already counted — the account's `calls`-th of its day, by [`Self::ai_call`]
    /// or in a claim's commit: the owner hears when the day's calls reach [`AI_WARN_PCT`]%.
    pub(crate) async fn counted_ai_call(&self, account: &Account, calls: u32, now: Timestamp) -> AiGate {
        if calls == AI_CALLS_PER_ACCOUNT_PER_DAY * AI_WARN_PCT / 100 {
            let today = limits::local_date(now, &account.settings.time_zone());
            tracing::warn!(
                account = %account.id,
                calls,
                limit = AI_CALLS_PER_ACCOUNT_PER_DAY,
                "ai_cost_warning: the account used {AI_WARN_PCT}% of today's AI calls"
            );
            let draft = alert(
                format!("AI usage at {AI_WARN_PCT}% of today's limit"),
                format!(
                    "The agent has made {calls} of its {AI_CALLS_PER_ACCOUNT_PER_DAY} AI calls for {today}. \
                     At the limit, drafting and reading replies wait for the next day; nothing is lost."
                ),
            );
            self.notify_owner_after(account.id, draft, false).await;
        }
        AiGate::Allowed(AiPermit { agent: self.agent.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, sample_account};

    /// Every occasion counts the touches left the same way: the cadence's touches within the
    /// type's message budget, this one included.
    #[test]
    fn a_draft_request_counts_the_touches_left_from_the_cadence_within_the_budget() {
        let account = sample_account(at("2026-11-02T14:00:00Z"));
        for key in ["churn_risk", "payment_recovery", "win_back", "lead_followup"] {
            let def = crate::task::task_type::definition(key);
            let touches = (def.cadence.intervals.len() as u32).max(1).min(def.budget.max_messages);
            for touch in 0..touches + 1 {
                let prompt = PromptInput::for_new(def, "Bring them back", &account, &[], &[], at("2026-11-02T14:00:00Z"));
                let request = draft_request(&account, def, "Bring them back", Some("Sam".into()), touch, &prompt);
                assert!(
                    request.system_prompt.contains("Bring them back"),
                    "{key}: the prompt carries the goal"
                );
                assert_eq!(request.touches_remaining, touches.saturating_sub(touch), "{key} touch {touch}");
                assert_eq!((request.task_type.as_str(), request.touch), (key, touch));
                assert_eq!(request.tone, def.cadence.tone(touch));
            }
        }
    }
}
