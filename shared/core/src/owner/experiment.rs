//! The account's message experiments: an accepted skill or prompt
//! suggestion tried on half the new tasks of the types it touches before it is kept. Each
//! experiment lives on the account (creation and drafting read the account anyway, so the
//! split costs no request); its results are counted from the tasks' tallies.
//!
//! While an experiment runs, the suggestion's change stays in the settings and the tasks given
//! the current version have it left out of their prompts ([`without`]). Kept, it stays for
//! everyone; ended, the change is undone and every task has the current version again.

use std::borrow::Cow;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::kernel::ids::MemberId;
use crate::owner::account::{Account, AgentOverride};
use crate::owner::learned::Learned;
use crate::task::experiment::{self, ExperimentArm, Variant};
use crate::task::task_type;

/// How long an experiment runs before it ends undecided.
pub const EXPERIMENT_DAYS: i64 = 60;
/// The closed tasks each version needs before a win counts.
pub const MIN_EXPERIMENT_SAMPLE: u64 = 30;
/// Experiments running (or waiting for the owner) at once, at most.
pub const MAX_RUNNING_EXPERIMENTS: usize = 3;
/// Experiments an account keeps, the newest; older finished ones are dropped.
pub const MAX_KEPT_EXPERIMENTS: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExperimentStatus {
    /// New tasks are split between the versions.
    Running,
    /// The proposed version won; the split goes on until the owner keeps or ends it.
    Won,
    /// The proposed version was kept for every task.
    Kept,
    /// Ended without a win (or the owner declined): the change was undone.
    Ended,
}

impl ExperimentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Won => "won",
            Self::Kept => "kept",
            Self::Ended => "ended",
        }
    }

    /// New tasks are still split.
    pub fn splits(self) -> bool {
        matches!(self, Self::Running | Self::Won)
    }
}

/// What the proposed version adds to the prompt: what the current version leaves out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Trial {
    /// A learned skill, stored under the suggestion's id.
    Learned { suggestion_id: ulid::Ulid },
    /// An instruction in the owner's additions for `agent` (and `task_type`).
    Instruction {
        agent: String,
        #[serde(default)]
        task_type: Option<String>,
        instruction: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub id: ulid::Ulid,
    pub suggestion_id: ulid::Ulid,
    /// The suggestion's title, as the owner read it.
    pub title: String,
    pub status: ExperimentStatus,
    pub trial: Trial,
    /// The task types whose new tasks are split.
    pub task_types: Vec<String>,
    pub started_at: Timestamp,
    /// When it ends undecided.
    pub ends_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Timestamp>,
    /// Kept without the owner's review (the trust gradient).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_kept: bool,
}

impl Experiment {
    pub fn new(id: ulid::Ulid, suggestion_id: ulid::Ulid, title: String, trial: Trial, task_types: Vec<String>, now: Timestamp) -> Self {
        Self {
            id,
            suggestion_id,
            title,
            status: ExperimentStatus::Running,
            trial,
            task_types,
            started_at: now,
            ends_at: now + SignedDuration::from_hours(24 * EXPERIMENT_DAYS),
            decided_at: None,
            auto_kept: false,
        }
    }
}

/// The task types an instruction for `agent` (`*`: every agent) and `task_type` (none: all of
/// the agent's) reaches.
pub fn types_of_instruction(agent: &str, task_type: Option<&str>) -> Vec<String> {
    match task_type {
        Some(t) => vec![t.to_owned()],
        None => task_type::REGISTRY
            .iter()
            .filter(|d| agent == "*" || d.agent == agent)
            .map(|d| d.key.to_owned())
            .collect(),
    }
}

/// The key the split is hashed under: a MAC under the account's webhook secret (random per
/// account, never shown).
fn key(account: &Account) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(account.webhook_secret.expose().as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
    mac.update(b"openloop-experiment-key");
    mac.finalize().into_bytes().into()
}

/// The version a new task of `task_type` about `member` is given: the first splitting
/// experiment of the type decides; `None` outside any.
pub fn arm_for(account: &Account, task_type: &str, member: &MemberId) -> Option<ExperimentArm> {
    let running = account
        .experiments
        .iter()
        .find(|e| e.status.splits() && e.task_types.iter().any(|t| t == task_type))?;
    Some(ExperimentArm {
        experiment_id: running.id,
        variant: experiment::variant(&key(account), running.id, member),
    })
}

/// What the prompt of a task given `arm` leaves out: the change under trial, for a task given
/// the current version of an experiment still splitting.
pub fn left_out<'a>(account: &'a Account, arm: Option<&ExperimentArm>) -> Option<&'a Trial> {
    let arm = arm.filter(|a| a.variant == Variant::Current)?;
    account
        .experiments
        .iter()
        .find(|e| e.id == arm.experiment_id && e.status.splits())
        .map(|e| &e.trial)
}

/// The learned entries and the owner's additions with `trial` left out (as they are without
/// one).
pub fn without<'a>(
    trial: Option<&Trial>,
    learned: &'a [Learned],
    overrides: &'a [AgentOverride],
) -> (Cow<'a, [Learned]>, Cow<'a, [AgentOverride]>) {
    match trial {
        None => (Cow::Borrowed(learned), Cow::Borrowed(overrides)),
        Some(Trial::Learned { suggestion_id }) => (
            Cow::Owned(learned.iter().filter(|l| l.suggestion_id != *suggestion_id).cloned().collect()),
            Cow::Borrowed(overrides),
        ),
        Some(Trial::Instruction {
            agent,
            task_type,
            instruction,
        }) => {
            let overrides = overrides
                .iter()
                .map(|o| {
                    if o.agent != *agent || o.task_type != *task_type {
                        return o.clone();
                    }
                    AgentOverride {
                        prompt_additions: remove_line(o.prompt_additions.as_deref(), instruction),
                        ..o.clone()
                    }
                })
                .collect();
            (Cow::Borrowed(learned), Cow::Owned(overrides))
        }
    }
}

/// `additions` without the line `text`.
fn remove_line(additions: Option<&str>, text: &str) -> Option<String> {
    let kept: Vec<&str> = additions.unwrap_or_default().lines().filter(|l| l.trim() != text.trim()).collect();
    let joined = kept.join("\n");
    (!joined.trim().is_empty()).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::learned::LearnedKind;

    #[test]
    fn the_current_version_leaves_out_exactly_the_change_under_trial() {
        let id = ulid::Ulid::from_parts(1, 1);
        let learned = vec![
            Learned {
                kind: LearnedKind::Skill,
                task_type: "churn_risk".into(),
                text: "Mention the new class.".into(),
                suggestion_id: id,
            },
            Learned {
                kind: LearnedKind::Skill,
                task_type: "churn_risk".into(),
                text: "Keep it short.".into(),
                suggestion_id: ulid::Ulid::from_parts(2, 2),
            },
        ];
        let overrides = vec![AgentOverride {
            agent: "retention".into(),
            task_type: None,
            prompt_override: None,
            prompt_additions: Some("Sign off as Coach Mike.\nAsk one question.".into()),
        }];
        let (l, o) = without(Some(&Trial::Learned { suggestion_id: id }), &learned, &overrides);
        assert_eq!(l.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["Keep it short."]);
        assert_eq!(o.as_ref(), overrides.as_slice());
        let trial = Trial::Instruction {
            agent: "retention".into(),
            task_type: None,
            instruction: "Ask one question.".into(),
        };
        let (l, o) = without(Some(&trial), &learned, &overrides);
        assert_eq!(l.len(), 2);
        assert_eq!(o[0].prompt_additions.as_deref(), Some("Sign off as Coach Mike."));
        let (l, o) = without(None, &learned, &overrides);
        assert!(matches!((l, o), (Cow::Borrowed(_), Cow::Borrowed(_))));
    }
}
