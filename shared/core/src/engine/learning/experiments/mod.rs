//! Message experiments: an accepted skill or prompt suggestion
//! run on half the new tasks of the types it touches (`POST /api/v1/suggestions/{id}/experiment`),
//! each version's results with the lift's interval (`GET /api/v1/experiments`), and the hourly
//! decision: a win over the minimum sample is offered to the owner to keep — kept at once with
//! the trust gradient on (`auto_save_memories`), the owner told —, and an experiment still
//! running at its time limit ends with its change undone, so the current version stays.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Engine;
use super::owner_notices::NoticeDraft;
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::learning::experiment::{self, VariantCount};
use crate::learning::suggestion::{AppliedChange, ProposedChange, SuggestionKind, SuggestionStatus};
use crate::owner::account::Account;
use crate::owner::experiment::{Experiment, ExperimentStatus, MAX_KEPT_EXPERIMENTS, MAX_RUNNING_EXPERIMENTS, Trial, types_of_instruction};
use crate::owner::owner_notice::NoticeKind;
use crate::task::error::EngineError;
use crate::task::tally::TaskTally;

/// The longest stretch of closes one read of the results covers.
const MAX_RESULT_DAYS: i64 = 366;

/// One experiment as the owner reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExperimentView {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ulid::Ulid,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub suggestion_id: ulid::Ulid,
    /// The suggestion's title.
    pub title: String,
    /// `running`, `won` (waiting for the owner), `kept` or `ended`.
    pub status: ExperimentStatus,
    pub task_types: Vec<String>,
    pub started_at: Timestamp,
    pub ends_at: Timestamp,
    pub decided_at: Option<Timestamp>,
    /// Kept without review (the trust gradient).
    pub auto_kept: bool,
    /// `current` then `proposed`.
    pub variants: Vec<VariantCount>,
    /// Proposed rate minus current rate.
    pub difference: Option<f64>,
    /// Its 95% interval (Newcombe's hybrid score method, as the lift).
    pub ci95: Option<[f64; 2]>,
    pub verdict: String,
}

/// `GET /api/v1/experiments`: the account's experiments, newest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExperimentsReport {
    pub experiments: Vec<ExperimentView>,
}

/// What an hourly run decided.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExperimentRun {
    pub accounts: usize,
    pub won: usize,
    pub kept: usize,
    pub ended: usize,
    pub failed: usize,
}

fn view(e: &Experiment, tallies: &[TaskTally]) -> ExperimentView {
    let r = experiment::result(e, tallies);
    ExperimentView {
        id: e.id,
        suggestion_id: e.suggestion_id,
        title: e.title.clone(),
        status: e.status,
        task_types: e.task_types.clone(),
        started_at: e.started_at,
        ends_at: e.ends_at,
        decided_at: e.decided_at,
        auto_kept: e.auto_kept,
        variants: r.variants,
        difference: r.difference,
        ci95: r.ci95,
        verdict: r.verdict,
    }
}

/// Keep the newest [`MAX_KEPT_EXPERIMENTS`], dropping the oldest finished ones first.
fn trim(experiments: &mut Vec<Experiment>) {
    while experiments.len() > MAX_KEPT_EXPERIMENTS {
        match experiments.iter().position(|e| !e.status.splits()) {
            Some(at) => {
                experiments.remove(at);
            }
            None => break,
        }
    }
}

impl Engine {
    /// Start an experiment on an accepted skill or prompt suggestion: from now on, new tasks of
    /// the types its change touches are split half and half between the current version (the
    /// change left out) and the proposed one, by a keyed hash of the member.
    pub async fn start_experiment(&self, account: AccountId, suggestion_id: ulid::Ulid) -> Result<ExperimentView, EngineError> {
        let now = self.clock.now();
        let s = self
            .store
            .get_suggestion(account, suggestion_id)
            .await?
            .ok_or(EngineError::NotFound { what: "suggestion" })?;
        if !matches!(s.kind, SuggestionKind::Skill | SuggestionKind::Prompt) {
            return Err(InvalidInput::new(
                "experiment_not_supported",
                format!(
                    "only a skill or prompt suggestion can run as an experiment; this one is a {} suggestion",
                    serde_json::to_value(s.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ),
            )
            .into());
        }
        let (trial, task_types) = match (&s.applied, &s.change) {
            (Some(AppliedChange::Learned { suggestion_id }), ProposedChange::Skill { task_type, .. })
                if s.status == SuggestionStatus::Applied =>
            {
                (
                    Trial::Learned {
                        suggestion_id: *suggestion_id,
                    },
                    vec![task_type.clone()],
                )
            }
            (
                Some(AppliedChange::Prompt {
                    agent,
                    task_type,
                    instruction,
                }),
                _,
            ) if s.status == SuggestionStatus::Applied => (
                Trial::Instruction {
                    agent: agent.clone(),
                    task_type: task_type.clone(),
                    instruction: instruction.clone(),
                },
                types_of_instruction(agent, task_type.as_deref()),
            ),
            _ => {
                return Err(InvalidInput::new(
                    "suggestion_not_applied",
                    format!(
                        "this suggestion is {}: accept it first, then run it as an experiment",
                        if s.undone_at.is_some() { "undone" } else { s.status.as_str() }
                    ),
                )
                .into());
            }
        };
        let started = Experiment::new(new_ulid(now), s.id, s.title.clone(), trial, task_types, now);
        let account = self
            .change_account(account, |account| {
                let splitting: Vec<&Experiment> = account.experiments.iter().filter(|e| e.status.splits()).collect();
                if splitting.iter().any(|e| e.suggestion_id == s.id) {
                    return Err(EngineError::Taken(InvalidInput::new(
                        "experiment_running",
                        "an experiment on this suggestion is already running",
                    )));
                }
                if let Some(busy) = splitting
                    .iter()
                    .find_map(|e| e.task_types.iter().find(|t| started.task_types.contains(t)))
                {
                    return Err(EngineError::Taken(InvalidInput::new(
                        "experiment_running",
                        format!("an experiment on {busy} tasks is already running; one type runs one experiment at a time"),
                    )));
                }
                if splitting.len() >= MAX_RUNNING_EXPERIMENTS {
                    return Err(InvalidInput::new(
                        "experiment_limit",
                        format!("at most {MAX_RUNNING_EXPERIMENTS} experiments run at once; wait for one to end"),
                    )
                    .into());
                }
                account.experiments.push(started.clone());
                trim(&mut account.experiments);
                Ok(true)
            })
            .await?;
        tracing::info!(account = %account.id, experiment = %started.id, suggestion = %s.id, types = ?started.task_types, "experiment started");
        Ok(view(&started, &[]))
    }

    /// The tallies of the tasks closed since the earliest of `experiments` started (at most a
    /// year of closes): one ranged read.
    async fn experiment_tallies(&self, account: AccountId, experiments: &[&Experiment]) -> Result<Vec<TaskTally>, EngineError> {
        let now = self.clock.now();
        let Some(since) = experiments.iter().map(|e| e.started_at).min() else {
            return Ok(Vec::new());
        };
        let since = since.max(now - SignedDuration::from_hours(24 * MAX_RESULT_DAYS));
        Ok(self
            .store
            .closed_tallies(account, since, now + SignedDuration::from_secs(1))
            .await?)
    }

    /// `GET /api/v1/experiments`: every experiment the account keeps, newest first, with each
    /// version's results. Reads the account and the tallies of the closes since the oldest began.
    pub async fn experiments(&self, account: AccountId) -> Result<ExperimentsReport, EngineError> {
        let account = self.account(account).await?;
        let listed: Vec<&Experiment> = account.experiments.iter().rev().collect();
        let tallies = self.experiment_tallies(account.id, &listed).await?;
        Ok(ExperimentsReport {
            experiments: listed.into_iter().map(|e| view(e, &tallies)).collect(),
        })
    }

    /// The owner keeps the proposed version of a won (or still running) experiment: the change
    /// stays for every task.
    pub async fn keep_experiment(&self, account: AccountId, id: ulid::Ulid) -> Result<ExperimentView, EngineError> {
        let kept = self.set_experiment_status(account, id, ExperimentStatus::Kept, false).await?;
        tracing::info!(%account, experiment = %id, "experiment kept by the owner");
        let tallies = self.experiment_tallies(account, &[&kept]).await?;
        Ok(view(&kept, &tallies))
    }

    /// The owner ends an experiment without keeping it: its change is undone, the current
    /// version stays.
    pub async fn end_experiment(&self, account: AccountId, id: ulid::Ulid) -> Result<ExperimentView, EngineError> {
        let ended = self.set_experiment_status(account, id, ExperimentStatus::Ended, false).await?;
        self.undo_trial(account, &ended).await?;
        tracing::info!(%account, experiment = %id, "experiment ended by the owner");
        let tallies = self.experiment_tallies(account, &[&ended]).await?;
        Ok(view(&ended, &tallies))
    }

    /// Move a splitting experiment to `status` (refused once it is decided).
    async fn set_experiment_status(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        status: ExperimentStatus,
        auto: bool,
    ) -> Result<Experiment, EngineError> {
        let now = self.clock.now();
        let mut decided = None;
        self.change_account(account, |account| {
            let e = account
                .experiments
                .iter_mut()
                .find(|e| e.id == id)
                .ok_or(EngineError::NotFound { what: "experiment" })?;
            if !e.status.splits() {
                return Err(InvalidInput::new("experiment_decided", format!("this experiment is {} already", e.status.as_str())).into());
            }
            if e.status == status {
                decided = Some(e.clone());
                return Ok(false);
            }
            e.status = status;
            e.decided_at = Some(now);
            e.auto_kept = auto && status == ExperimentStatus::Kept;
            decided = Some(e.clone());
            Ok(true)
        })
        .await?;
        decided.ok_or(EngineError::NotFound { what: "experiment" })
    }

    /// Take the experiment's change out (the suggestion undone); nothing to do when the owner
    /// already undid it.
    async fn undo_trial(&self, account: AccountId, e: &Experiment) -> Result<(), EngineError> {
        match self.undo_suggestion(account, e.suggestion_id).await {
            Ok(_) | Err(EngineError::NotFound { .. }) => Ok(()),
            Err(EngineError::Invalid(i)) if i.code == "suggestion_not_applied" => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The owner undid the suggestion an experiment tries: the experiment ends with it.
    pub(in crate::engine) async fn end_experiments_of(&self, account: AccountId, suggestion: ulid::Ulid) -> Result<(), EngineError> {
        let now = self.clock.now();
        self.change_account(account, |account| {
            let mut changed = false;
            for e in account
                .experiments
                .iter_mut()
                .filter(|e| e.suggestion_id == suggestion && e.status.splits())
            {
                e.status = ExperimentStatus::Ended;
                e.decided_at = Some(now);
                changed = true;
            }
            Ok(changed)
        })
        .await?;
        Ok(())
    }

    /// The hourly decision over every account with an experiment splitting: a win is offered
    /// (or kept, with the trust gradient on), an experiment past its time limit ends. One
    /// account's failure never stops the others.
    pub async fn decide_experiments(&self) -> Result<ExperimentRun, EngineError> {
        let mut run = ExperimentRun::default();
        for account in self.accounts_at_work().await? {
            if !account.experiments.iter().any(|e| e.status.splits()) {
                continue;
            }
            run.accounts += 1;
            if let Err(e) = self.decide_account_experiments(&account, &mut run).await {
                run.failed += 1;
                tracing::warn!(account = %account.id, error = %e, "experiments not decided this run");
            }
        }
        Ok(run)
    }

    async fn decide_account_experiments(&self, account: &Account, run: &mut ExperimentRun) -> Result<(), EngineError> {
        let now = self.clock.now();
        let splitting: Vec<&Experiment> = account.experiments.iter().filter(|e| e.status.splits()).collect();
        let tallies = self.experiment_tallies(account.id, &splitting).await?;
        for e in splitting {
            let result = experiment::result(e, &tallies);
            if e.status == ExperimentStatus::Running && result.proposed_wins {
                let trusted = account.settings.auto_save_memories;
                let status = if trusted { ExperimentStatus::Kept } else { ExperimentStatus::Won };
                self.set_experiment_status(account.id, e.id, status, trusted).await?;
                let (title, detail) = if trusted {
                    run.kept += 1;
                    (
                        format!("Kept a better message: {}", e.title),
                        format!(
                            "The proposed version won its experiment ({}), so it now goes to every member. \
                             To undo it, press Undo beside it under Applied on your suggestions page: {}",
                            result.verdict,
                            self.dashboard_url("/suggestions")
                        ),
                    )
                } else {
                    run.won += 1;
                    (
                        format!("A message experiment has a winner: {}", e.title),
                        format!(
                            "{}. To send it to every member, press \"Keep it\" under Message experiments on your lift page \
                             (or \"End it\"): {}. Until then half the new tasks keep getting each version.",
                            result.verdict,
                            self.dashboard_url("/lift#experiments")
                        ),
                    )
                };
                tracing::info!(account = %account.id, experiment = %e.id, status = status.as_str(), verdict = %result.verdict, "experiment won");
                let draft = NoticeDraft {
                    kind: NoticeKind::LearningDigest,
                    task_id: None,
                    member_id: None,
                    title,
                    detail,
                };
                self.notify_owner_after(account.id, draft, false).await;
            } else if e.status == ExperimentStatus::Running && now >= e.ends_at {
                let ended = self.set_experiment_status(account.id, e.id, ExperimentStatus::Ended, false).await?;
                self.undo_trial(account.id, &ended).await?;
                run.ended += 1;
                tracing::info!(account = %account.id, experiment = %e.id, verdict = %result.verdict, "experiment ended at its time limit: the current version stays");
            }
        }
        Ok(())
    }
}
