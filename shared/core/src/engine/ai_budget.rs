//! The AI cost circuit breaker (spec §7.12): every call to the agent is counted against the
//! account's calls for its local day (one atomic counter in the store) and the task's calls
//! over its life (a counter on the task, written with the step that used it). A task that has
//! used its calls goes to the owner; an account that has used its day waits for the next.
//!
//! The owner hears of the day's calls twice at most (spec §7.12, §35.2 `system_alert`, always
//! delivered): when they reach [`AI_WARN_PCT`]% — the counter is atomic, so exactly one call
//! sees that number — and when they run out (claimed once a local day).

use jiff::Timestamp;

use super::Engine;
use super::owner_notices::NoticeDraft;
use crate::account::Account;
use crate::error::EngineError;
use crate::limits::{self, AI_CALLS_PER_ACCOUNT_PER_DAY, AI_CALLS_PER_TASK, AI_WARN_PCT};
use crate::owner_notice::NoticeKind;
use crate::reason::Reason;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AiGate {
    Allowed,
    /// The task has made all the calls it may ever make.
    TaskSpent,
    /// The account's calls for today are used up; the day turns at `until`.
    DayUsed {
        until: Timestamp,
    },
}

impl AiGate {
    /// The decision-log reason of a refused call (`None`: the call is allowed).
    pub(crate) fn refusal(self) -> Option<Reason> {
        match self {
            AiGate::Allowed => None,
            AiGate::TaskSpent => Some(Reason::AiBudgetExhausted),
            AiGate::DayUsed { .. } => Some(Reason::AiDailyLimit),
        }
    }
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
            Some(calls) => {
                if calls == AI_CALLS_PER_ACCOUNT_PER_DAY * AI_WARN_PCT / 100 {
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
                Ok(AiGate::Allowed)
            }
            None => {
                tracing::warn!(account = %account.id, limit = AI_CALLS_PER_ACCOUNT_PER_DAY, "the account's AI calls for today are used up");
                let until = super::work::next_local_day(now, &tz);
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
}
