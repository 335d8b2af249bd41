//! The evaluation function's work and the owner's decisions on what it found: an
//! account's closed tasks of the last [`WINDOW_DAYS`] days handed to the
//! evaluator, each finding stored once as a pending suggestion; accepting applies it (a memory
//! saved, an instruction added to the owner's additions, a skill or rubric stored for its
//! task type, a threshold calibrated within its safe bounds), and an applied change can be
//! undone;
//! dismissing changes nothing; reminding hides it for [`REMIND_AFTER_DAYS`] days.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Engine;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::learning::evaluator::{ClosedTask, WINDOW_DAYS};
use crate::learning::suggestion::{self, AppliedChange, ProposedChange, Suggestion, SuggestionStatus};
use crate::owner::account::AgentOverride;
use crate::owner::business_memory::{BusinessMemory, MemorySource};
use crate::owner::calibration::Threshold;
use crate::owner::learned::{Learned, LearnedKind};
use crate::task::error::EngineError;

/// A reminded suggestion comes back after this many days.
pub const REMIND_AFTER_DAYS: i64 = 7;
/// The closed tasks one evaluation reads at most.
const MAX_EVALUATED_TASKS: usize = 1_000;
/// The suggestions a list returns at most.
const MAX_LISTED: usize = 100;

/// What a run of the evaluation function did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EvaluationReport {
    pub accounts: usize,
    pub tasks: usize,
    pub suggested: usize,
    pub failed: usize,
}

fn not_pending(s: &Suggestion) -> EngineError {
    InvalidInput::new("suggestion_decided", format!("this suggestion is {} already", s.status.as_str())).into()
}

impl Engine {
    /// The weekly run: every account's recent closed tasks. One account's failure is logged
    /// and counted, never stops the others.
    pub async fn evaluate_accounts(&self) -> Result<EvaluationReport, EngineError> {
        let mut report = EvaluationReport::default();
        for account in self.accounts_at_work().await? {
            report.accounts += 1;
            match self.evaluate_account(account.id, "weekly_batch").await {
                Ok((tasks, suggested)) => {
                    report.tasks += tasks;
                    report.suggested += suggested;
                    if let Err(e) = self.notify_learned(account.id).await {
                        tracing::warn!(account = %account.id, error = %e, "the weekly learning notice was not made");
                    }
                }
                Err(e) => {
                    report.failed += 1;
                    tracing::warn!(account = %account.id, error = %e, "evaluation failed for the account");
                }
            }
        }
        Ok(report)
    }

    /// One account's evaluation (after a task closed: `post_task`; weekly: `weekly_batch`):
    /// the closed tasks read and the new suggestions made.
    pub async fn evaluate_account(&self, account: AccountId, source: &str) -> Result<(usize, usize), EngineError> {
        let now = self.clock.now();
        let since = now - SignedDuration::from_hours(24 * WINDOW_DAYS);
        let tasks: Vec<ClosedTask> = self
            .store
            .recent_outcomes(account, since, MAX_EVALUATED_TASKS)
            .await?
            .into_iter()
            .map(|r| ClosedTask {
                task_id: r.private.task_id,
                shared: r.shared,
                edits: r.private.edits,
                template_version: r.private.template_version,
            })
            .collect();
        let owner = self.account(account).await?;
        if self.evaluator.uses_ai() {
            // A model's evaluation is an AI call like any other: counted, within the budget.
            if let Some(refused) = self.ai_call(&owner, None, now).await?.refusal() {
                tracing::info!(%account, reason = %refused, "no AI call left today for the evaluation; the next run tries again");
                return Ok((tasks.len(), 0));
            }
        }
        let drafts = self
            .evaluator
            .evaluate(&tasks, &owner.settings.calibration)
            .await
            .map_err(|e| EngineError::Dependency(format!("the evaluator failed: {e}")))?;
        let mut made = 0;
        for draft in drafts {
            let suggestion = Suggestion::new(account, draft, source, new_ulid(now), now);
            if self.store.create_suggestion(&suggestion).await? {
                made += 1;
                tracing::info!(%account, suggestion = %suggestion.id, fingerprint = %suggestion.fingerprint, source, "suggestion made");
                if suggestion.saves_itself(owner.settings.auto_save_memories, owner.created_at, now) {
                    let applied = self.accept_suggestion(account, suggestion.id).await?;
                    self.decide(Suggestion {
                        auto_applied: true,
                        ..applied
                    })
                    .await?;
                    tracing::info!(%account, suggestion = %suggestion.id, "saved without review: the owner opted in");
                }
            } else {
                tracing::debug!(%account, fingerprint = %suggestion.fingerprint, "suggested before: not again");
            }
        }
        Ok((tasks.len(), made))
    }

    /// The weekly notice of what was applied without review in the last 7 days, each with
    /// its undo; nothing if there was none.
    async fn notify_learned(&self, account: AccountId) -> Result<(), EngineError> {
        let now = self.clock.now();
        let week_ago = now - SignedDuration::from_hours(24 * 7);
        let learned: Vec<Suggestion> = self
            .store
            .list_suggestions(account, SuggestionStatus::Applied, MAX_LISTED)
            .await?
            .into_iter()
            .filter(|s| s.auto_applied && s.decided_at.is_some_and(|at| at >= week_ago))
            .collect();
        if learned.is_empty() {
            return Ok(());
        }
        let detail = learned
            .iter()
            .map(|s| format!("- {}", s.title))
            .chain(std::iter::once(format!(
                "Each is listed under Applied on your suggestions page, with an Undo button: {}",
                self.dashboard_url("/suggestions")
            )))
            .collect::<Vec<_>>()
            .join("\n");
        let draft = super::owner_notices::NoticeDraft {
            kind: crate::owner::owner_notice::NoticeKind::LearningDigest,
            task_id: None,
            member_id: None,
            title: format!(
                "Your agent learned {} this week",
                crate::kernel::plural::count_of(learned.len(), "thing", "things")
            ),
            detail,
        };
        self.notify_owner_after(account, draft, false).await;
        Ok(())
    }

    /// The account's suggestions in `status` (pending by default; a reminded one is left out
    /// until it comes back), newest first.
    pub async fn list_suggestions(&self, account: AccountId, status: Option<&str>) -> Result<Vec<Suggestion>, EngineError> {
        let status = match status {
            None => SuggestionStatus::Pending,
            Some(raw) => SuggestionStatus::parse(raw)
                .ok_or_else(|| InvalidInput::new("invalid_status", "status is one of pending, applied, dismissed"))?,
        };
        let now = self.clock.now();
        let mut listed = self.store.list_suggestions(account, status, MAX_LISTED).await?;
        listed.retain(|s| s.status == status && (status != SuggestionStatus::Pending || s.is_due(now)));
        Ok(listed)
    }

    async fn suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Suggestion, EngineError> {
        self.store
            .get_suggestion(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "suggestion" })
    }

    /// Write the next version of a suggestion.
    async fn decide(&self, mut next: Suggestion) -> Result<Suggestion, EngineError> {
        next.version += 1;
        self.store.save_suggestion(&next).await?;
        Ok(next)
    }

    /// Apply a pending suggestion: claimed first (under its version, so two accepts apply it
    /// once), then applied; if applying fails it is pending again.
    pub async fn accept_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Suggestion, EngineError> {
        let now = self.clock.now();
        let pending = self.suggestion(account, id).await?;
        if pending.status != SuggestionStatus::Pending {
            return Err(not_pending(&pending));
        }
        let claimed = self
            .decide(Suggestion {
                status: SuggestionStatus::Applied,
                decided_at: Some(now),
                ..pending
            })
            .await?;
        let applied = match self.apply(&claimed, now).await {
            Ok(applied) => applied,
            Err(e) => {
                let back = Suggestion {
                    status: SuggestionStatus::Pending,
                    decided_at: None,
                    ..claimed
                };
                self.decide(back).await?;
                return Err(e);
            }
        };
        tracing::info!(%account, suggestion = %id, ?applied, "suggestion applied");
        self.decide(Suggestion {
            applied: Some(applied),
            ..claimed
        })
        .await
    }

    async fn apply(&self, s: &Suggestion, now: Timestamp) -> Result<AppliedChange, EngineError> {
        match &s.change {
            ProposedChange::Memory { content, category } => {
                let memory = BusinessMemory {
                    id: new_ulid(now),
                    account_id: s.account_id,
                    member_id: None,
                    content: content.clone(),
                    category: category.clone(),
                    source: if s.fingerprint.starts_with("memory:owner_edit:") {
                        MemorySource::OwnerEdit
                    } else {
                        MemorySource::Evaluator
                    },
                    confidence: s.confidence,
                    created_at: now,
                    expires_at: None,
                    last_confirmed_at: Some(now),
                };
                let saved = self.save_memory(memory).await?;
                Ok(AppliedChange::Memory { memory_id: saved.id })
            }
            ProposedChange::Prompt {
                agent,
                task_type,
                instruction,
            } => {
                self.change_overrides(s.account_id, agent, task_type.as_deref(), |current| {
                    Some(suggestion::add_instruction(current, instruction))
                })
                .await?;
                Ok(AppliedChange::Prompt {
                    agent: agent.clone(),
                    task_type: task_type.clone(),
                    instruction: instruction.clone(),
                })
            }
            ProposedChange::Skill { task_type, guidance } => self.learn(s, LearnedKind::Skill, task_type, guidance.trim().to_owned()).await,
            ProposedChange::Rubric { task_type, criteria } => {
                let text = criteria
                    .iter()
                    .map(|c| c.trim())
                    .filter(|c| !c.is_empty())
                    .map(|c| format!("- {c}"))
                    .collect::<Vec<_>>()
                    .join("\n");
                self.learn(s, LearnedKind::Rubric, task_type, text).await
            }
            ProposedChange::Calibration { threshold, value } => {
                let before = self.set_threshold(s.account_id, *threshold, *value).await?;
                Ok(AppliedChange::Calibration {
                    threshold: *threshold,
                    before,
                    after: *value,
                })
            }
            ProposedChange::Autopilot { task_type } => {
                self.change_account(s.account_id, |account| {
                    if account.settings.autopilot_types.contains(task_type) {
                        return Ok(false);
                    }
                    account.settings.autopilot_types.push(task_type.clone());
                    account.settings.validate()?;
                    Ok(true)
                })
                .await?;
                Ok(AppliedChange::Autopilot {
                    task_type: task_type.clone(),
                })
            }
        }
    }

    /// Store a skill or rubric for the account's `task_type` under the suggestion's id
    /// (validated like the settings: a registered type, a bounded text, a bounded count).
    async fn learn(&self, s: &Suggestion, kind: LearnedKind, task_type: &str, text: String) -> Result<AppliedChange, EngineError> {
        let entry = Learned {
            kind,
            task_type: task_type.to_owned(),
            text,
            suggestion_id: s.id,
        };
        self.change_account(s.account_id, |account| {
            account.settings.learned.retain(|l| l.suggestion_id != s.id);
            account.settings.learned.push(entry.clone());
            account.settings.validate()?;
            Ok(true)
        })
        .await?;
        tracing::info!(account = %s.account_id, suggestion = %s.id, ?kind, task_type, "learned for the task type");
        Ok(AppliedChange::Learned { suggestion_id: s.id })
    }

    /// Set one of the account's calibrated thresholds, within its safe bounds (refused
    /// outside them); the value it had before.
    async fn set_threshold(&self, account: AccountId, threshold: Threshold, value: u16) -> Result<u16, EngineError> {
        let mut before = None;
        self.change_account(account, |account| {
            let current = account.settings.calibration;
            before = Some(current.get(threshold));
            account.settings.calibration = current.with(threshold, value)?;
            Ok(true)
        })
        .await?;
        let before = before.unwrap_or(value);
        tracing::info!(%account, threshold = threshold.as_str(), before, after = value, "calibration set");
        Ok(before)
    }

    /// Change the owner's additions for exactly (`agent`, `task_type`), validated like the
    /// owner's own settings.
    async fn change_overrides(
        &self,
        account: AccountId,
        agent: &str,
        task_type: Option<&str>,
        change: impl Fn(Option<&str>) -> Option<String>,
    ) -> Result<(), EngineError> {
        self.change_account(account, |account| {
            let overrides = &mut account.settings.agent_overrides;
            let at = match overrides
                .iter()
                .position(|o| o.agent == agent && o.task_type.as_deref() == task_type)
            {
                Some(at) => at,
                None => {
                    overrides.push(AgentOverride {
                        agent: agent.to_owned(),
                        task_type: task_type.map(str::to_owned),
                        prompt_override: None,
                        prompt_additions: None,
                    });
                    overrides.len() - 1
                }
            };
            let next = change(overrides[at].prompt_additions.as_deref());
            overrides[at].prompt_additions = next;
            if overrides[at].prompt_additions.is_none() && overrides[at].prompt_override.is_none() {
                overrides.remove(at);
            }
            account.settings.validate()?;
            Ok(true)
        })
        .await?;
        Ok(())
    }

    /// Leave a pending suggestion as it is and stop showing it; nothing else changes.
    pub async fn dismiss_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Suggestion, EngineError> {
        let s = self.suggestion(account, id).await?;
        if s.status != SuggestionStatus::Pending {
            return Err(not_pending(&s));
        }
        tracing::info!(%account, suggestion = %id, "suggestion dismissed");
        self.decide(Suggestion {
            status: SuggestionStatus::Dismissed,
            decided_at: Some(self.clock.now()),
            ..s
        })
        .await
    }

    /// Ask again in [`REMIND_AFTER_DAYS`] days: still pending, out of the list until then.
    pub async fn remind_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Suggestion, EngineError> {
        let s = self.suggestion(account, id).await?;
        if s.status != SuggestionStatus::Pending {
            return Err(not_pending(&s));
        }
        let until = self.clock.now() + SignedDuration::from_hours(24 * REMIND_AFTER_DAYS);
        tracing::info!(%account, suggestion = %id, %until, "suggestion to remind");
        self.decide(Suggestion {
            remind_at: Some(until),
            ..s
        })
        .await
    }

    /// Undo an applied suggestion: its memory deleted (if the owner has not already), its
    /// instruction taken out of the additions; it is then dismissed.
    pub async fn undo_suggestion(&self, account: AccountId, id: ulid::Ulid) -> Result<Suggestion, EngineError> {
        let s = self.suggestion(account, id).await?;
        let Some(applied) = s.applied.clone().filter(|_| s.status == SuggestionStatus::Applied) else {
            return Err(InvalidInput::new("suggestion_not_applied", "only an applied suggestion can be undone").into());
        };
        match &applied {
            AppliedChange::Memory { memory_id } => match self.delete_memory(account, *memory_id).await {
                Ok(_) | Err(EngineError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            },
            AppliedChange::Prompt {
                agent,
                task_type,
                instruction,
            } => {
                self.change_overrides(account, agent, task_type.as_deref(), |current| {
                    suggestion::remove_instruction(current, instruction)
                })
                .await?
            }
            AppliedChange::Learned { suggestion_id } => {
                self.change_account(account, |account| {
                    let before = account.settings.learned.len();
                    account.settings.learned.retain(|l| l.suggestion_id != *suggestion_id);
                    Ok(account.settings.learned.len() != before)
                })
                .await?;
            }
            AppliedChange::Calibration { threshold, before, .. } => {
                self.set_threshold(account, *threshold, *before).await?;
            }
            AppliedChange::Autopilot { task_type } => {
                self.change_account(account, |a| {
                    let before = a.settings.autopilot_types.len();
                    a.settings.autopilot_types.retain(|t| t != task_type);
                    a.approval_streaks.remove(task_type);
                    Ok(a.settings.autopilot_types.len() != before)
                })
                .await?;
            }
        }
        tracing::info!(%account, suggestion = %id, ?applied, "applied suggestion undone");
        // An experiment trying the change ends with it.
        self.end_experiments_of(account, id).await?;
        let now = self.clock.now();
        self.decide(Suggestion {
            status: SuggestionStatus::Dismissed,
            undone_at: Some(now),
            ..s
        })
        .await
    }
}
