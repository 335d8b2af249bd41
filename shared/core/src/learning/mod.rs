//! The platform-wide view of the learning record: one
//! month of cross-tenant records ([`SharedOutcome`], `LEARNING#{month}`) added up per task type
//! and outcome — how many, how many the member answered, how many succeeded.
//!
//! It is for operators, never owners: it mixes every account. It is built from the shared
//! part only, which has no ids and no text to begin with, and adds nothing but counts and
//! rates, so nothing that identifies an account, a member or a message can come out of it.
//! Reading it is bounded: the month's one partition, in pages, at most
//! [`crate::kernel::limits::LEARNING_AGGREGATE_MAX_RECORDS`] records (the report says if it stopped).

use std::collections::BTreeMap;

use serde::Serialize;

pub mod calibration;
pub mod edit;
pub mod evaluator;
pub mod experiment;
pub mod interaction;
pub mod lift;
pub mod network;
pub mod offline;
pub mod pooled;
pub mod send_hours;
pub mod suggestion;

use crate::learning::interaction::SharedOutcome;
use crate::task::TaskStatus;
use crate::task::task_type::{self, OutcomeKind};

/// Counts and the rates derived from them, for one task type or one outcome of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tally {
    /// Closed tasks.
    pub tasks: u64,
    /// Those that wrote to their member at least once.
    pub sent: u64,
    /// Those of `sent` the member answered.
    pub replied: u64,
    /// `replied / sent`.
    pub reply_rate: Option<f64>,
    /// Closed on a positive outcome of the type, and not provisionally: a
    /// verbal commitment counts once its signal confirmed it.
    pub succeeded: u64,
    /// `succeeded / tasks`.
    pub success_rate: Option<f64>,
    /// Those whose first message the owner edited before it went out.
    pub owner_edited: u64,
}

impl Tally {
    fn add(&mut self, record: &SharedOutcome) {
        self.tasks += 1;
        if record.touches > 0 {
            self.sent += 1;
            if record.turns > 0 {
                self.replied += 1;
            }
        }
        if succeeded(record) {
            self.succeeded += 1;
        }
        if record.owner_edited {
            self.owner_edited += 1;
        }
        self.reply_rate = ratio(self.replied, self.sent);
        self.success_rate = ratio(self.succeeded, self.tasks);
    }
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A positive outcome of the record's type that is no longer provisional.
fn succeeded(record: &SharedOutcome) -> bool {
    record.status == TaskStatus::Completed
        && !record.provisional
        && record.outcome.as_deref().is_some_and(|code| {
            task_type::definition(&record.task_type)
                .outcome(code)
                .is_some_and(|o| o.kind == OutcomeKind::Positive)
        })
}

/// One task type's month: its totals, and the same per outcome code (`none` when the task
/// closed without one).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskTypeAggregate {
    pub task_type: String,
    #[serde(flatten)]
    pub total: Tally,
    pub outcomes: BTreeMap<String, Tally>,
}

/// A month across every account.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonthAggregate {
    /// `YYYY-MM`, UTC (how the records are grouped).
    pub month: String,
    pub records: u64,
    /// Distinct contributing accounts, counted by their pseudonyms (a
    /// cross-business pattern needs at least 3).
    pub contributors: u64,
    #[serde(skip)]
    seen: std::collections::BTreeSet<String>,
    /// `false` when the read stopped at its bound before the month's last record.
    pub complete: bool,
    pub task_types: Vec<TaskTypeAggregate>,
}

impl MonthAggregate {
    pub fn new(month: &str) -> Self {
        Self {
            month: month.to_owned(),
            records: 0,
            contributors: 0,
            seen: Default::default(),
            complete: true,
            task_types: Vec::new(),
        }
    }

    /// Add one page of the month's records.
    pub fn add(&mut self, records: &[SharedOutcome]) {
        for record in records {
            self.records += 1;
            if let Some(contributor) = &record.contributor
                && self.seen.insert(contributor.clone())
            {
                self.contributors += 1;
            }
            let at = match self.task_types.binary_search_by(|t| t.task_type.as_str().cmp(&record.task_type)) {
                Ok(i) => i,
                Err(i) => {
                    self.task_types.insert(
                        i,
                        TaskTypeAggregate {
                            task_type: record.task_type.clone(),
                            ..TaskTypeAggregate::default()
                        },
                    );
                    i
                }
            };
            let aggregate = &mut self.task_types[at];
            aggregate.total.add(record);
            let outcome = record.outcome.clone().unwrap_or_else(|| "none".into());
            aggregate.outcomes.entry(outcome).or_default().add(record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(task_type: &str, outcome: Option<&str>, touches: u32, turns: u32) -> SharedOutcome {
        SharedOutcome {
            task_type: task_type.into(),
            category: "communication".into(),
            agent: "retention".into(),
            status: if outcome.is_some_and(|o| o != "unresponsive") {
                TaskStatus::Completed
            } else {
                TaskStatus::Cancelled
            },
            outcome: outcome.map(Into::into),
            outcome_reason: None,
            provisional: false,
            touches,
            turns,
            ai_calls: 1,
            days_to_outcome: 3,
            hours_to_first_touch: Some(2),
            first_touch_hour: Some(10),
            first_touch_weekday: Some(2),
            message_length: Some(120),
            owner_edited: false,
            confidence_bucket: 80,
            trigger: "manual".into(),
            execution_mode: "live".into(),
            attributed_value: None,
            business_type: Some("crossfit_gym".into()),
            flagged_gap_days: None,
            contributor: None,
            subject_style: None,
            template: None,
            arm: None,
            absent_days_at_cancel: None,
        }
    }

    #[test]
    fn records_add_up_per_task_type_and_outcome_with_rates() {
        let mut month = MonthAggregate::new("2026-11");
        let mut edited = record("win_back", Some("recovered"), 2, 1);
        edited.owner_edited = true;
        let mut provisional = record("win_back", Some("recovered"), 1, 1);
        provisional.provisional = true;
        month.add(&[
            edited,
            record("win_back", Some("unresponsive"), 3, 0),
            provisional,
            record("churn_risk", None, 0, 0),
        ]);
        month.add(&[record("win_back", Some("recovered"), 1, 0)]);
        assert_eq!((month.records, month.task_types.len()), (5, 2));
        let churn = &month.task_types[0];
        assert_eq!(
            (churn.task_type.as_str(), churn.total.tasks, churn.total.reply_rate),
            ("churn_risk", 1, None)
        );
        assert_eq!(churn.outcomes["none"].tasks, 1);
        let win_back = &month.task_types[1];
        assert_eq!(
            (
                win_back.total.tasks,
                win_back.total.sent,
                win_back.total.replied,
                win_back.total.succeeded
            ),
            (4, 4, 2, 2),
            "a provisional close is not yet a success"
        );
        assert_eq!((win_back.total.reply_rate, win_back.total.success_rate), (Some(0.5), Some(0.5)));
        assert_eq!(win_back.total.owner_edited, 1);
        let recovered = &win_back.outcomes["recovered"];
        assert_eq!((recovered.tasks, recovered.succeeded), (3, 2));
        assert_eq!(win_back.outcomes["unresponsive"].success_rate, Some(0.0));
    }

    #[test]
    fn the_aggregate_carries_only_codes_and_numbers() {
        let mut month = MonthAggregate::new("2026-11");
        month.add(&[record("win_back", Some("recovered"), 2, 1)]);
        let json = serde_json::to_value(&month).expect("json");
        let keys: Vec<&str> = json["task_types"][0]
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        for key in keys {
            assert!(
                !["account_id", "member_id", "task_id", "message_sent", "business_type"].contains(&key),
                "{key} must not be in the aggregate"
            );
        }
    }

    #[test]
    fn contributing_accounts_are_counted_by_their_pseudonyms() {
        let by = |who: Option<&str>| SharedOutcome {
            contributor: who.map(Into::into),
            ..record("win_back", Some("recovered"), 1, 1)
        };
        let mut month = MonthAggregate::new("2026-11");
        month.add(&[by(Some("aa")), by(Some("bb")), by(Some("aa")), by(None)]);
        month.add(&[by(Some("cc")), by(Some("bb"))]);
        assert_eq!((month.records, month.contributors), (6, 3));
    }
}
