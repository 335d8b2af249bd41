//! Recurring templates: the owner's schedules, and the tick's spawning of their
//! instances through the one creation path.

use serde::Serialize;

use super::{Engine, boxed};
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, new_ulid};
use crate::kernel::limits::{DUE_TOLERANCE, RECURRING_PER_TICK};
use crate::owner::account::Account;
use crate::owner::recurring::{self, DEFAULT_MAX_INSTANCES, MAX_INSTANCES_CAP, NewTemplate, RecurringTemplate, account_wide_member};
use crate::task::error::EngineError;
use crate::task::task_type::{self, Category};

/// What one pass over the due templates did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpawnReport {
    pub spawned: usize,
    pub disabled: usize,
    pub failed: usize,
    /// Instances not opened because their member is suppressed (logged by the creation path).
    #[serde(default)]
    pub skipped_suppressed: usize,
}

impl Engine {
    pub async fn create_template(&self, account: &Account, input: NewTemplate) -> Result<RecurringTemplate, EngineError> {
        let Some(def) = task_type::lookup(input.task_type.trim()) else {
            return Err(InvalidInput::new("invalid_task_type", format!("{:?} is not a registered task type", input.task_type)).into());
        };
        let cron = match (input.cron, def.recurrence) {
            (Some(cron), _) => cron.trim().to_owned(),
            (None, Some(r)) => r.cron.to_owned(),
            (None, None) => {
                return Err(InvalidInput::new(
                    "invalid_cron",
                    format!("{} has no schedule of its own: give a cron expression", def.key),
                )
                .into());
            }
        };
        let max_instances = input
            .max_instances
            .or(def.recurrence.map(|r| r.max_instances))
            .unwrap_or(DEFAULT_MAX_INSTANCES);
        if !(1..=MAX_INSTANCES_CAP).contains(&max_instances) {
            return Err(InvalidInput::new("invalid_max_instances", format!("max_instances must be 1-{MAX_INSTANCES_CAP}")).into());
        }
        let member_id = match (input.member_id, def.category) {
            (Some(m), _) => {
                m.refuse_reserved()?;
                m
            }
            (None, Category::Communication) => {
                return Err(InvalidInput::new("missing_member_id", format!("{} talks to a member: give member_id", def.key)).into());
            }
            (None, _) => account_wide_member(),
        };
        let goal = input
            .goal
            .map(|g| g.trim().to_owned())
            .unwrap_or_else(|| def.goal.summary.to_owned());
        if goal.is_empty() || goal.len() > 2_000 {
            return Err(InvalidInput::new("invalid_goal", "goal must be 1-2000 characters").into());
        }
        // Counted before the write: two creations at once may pass the cap by one, no more.
        if self.store.list_templates(account.id).await?.len() >= crate::kernel::limits::MAX_RECURRING_TEMPLATES {
            return Err(InvalidInput::new(
                "too_many_templates",
                format!(
                    "an account keeps at most {} recurring templates; delete one first",
                    crate::kernel::limits::MAX_RECURRING_TEMPLATES
                ),
            )
            .into());
        }
        let now = self.clock.now();
        let next_at = recurring::next_occurrence(&cron, now, &account.settings.time_zone()).map_err(InvalidInput::from)?;
        let template = RecurringTemplate {
            id: new_ulid(now),
            account_id: account.id,
            task_type: def.key.to_owned(),
            member_id,
            goal,
            cron,
            enabled: true,
            max_instances,
            instances_created: 0,
            next_at: Some(next_at),
            last_triggered_at: None,
            created_at: now,
            version: 1,
            paused: false,
            runs: Vec::new(),
            notify: input.notify.unwrap_or_default(),
            backoff: Default::default(),
        };
        self.store.save_template(&template).await?;
        Ok(template)
    }

    pub async fn list_templates(&self, account: AccountId) -> Result<Vec<RecurringTemplate>, EngineError> {
        Ok(self.store.list_templates(account).await?)
    }

    pub async fn delete_template(&self, account: AccountId, id: ulid::Ulid) -> Result<(), EngineError> {
        if self.store.delete_template(account, id).await? {
            Ok(())
        } else {
            Err(EngineError::NotFound {
                what: "recurring template",
            })
        }
    }

    /// Spawn an instance of every template that is due (bounded per tick). The template is
    /// advanced first, conditionally, so overlapping ticks spawn an instance once; a crash
    /// between the two loses that one instance rather than doubling it. Missed occurrences
    /// (the system was down) are not made up in a burst: the next one counts from now.
    pub async fn spawn_recurring(&self) -> Result<SpawnReport, EngineError> {
        boxed(async move {
            let now = self.clock.now();
            let mut report = SpawnReport::default();
            for template in self.store.due_templates(now + DUE_TOLERANCE, RECURRING_PER_TICK).await? {
                if template.paused {
                    continue;
                }
                let Some(account) = self.store.get_account(template.account_id).await? else {
                    continue;
                };
                let mut next = RecurringTemplate {
                    version: template.version + 1,
                    last_triggered_at: Some(now),
                    ..template.clone()
                };
                let capped = template.instances_created >= template.max_instances;
                if capped {
                    next.enabled = false;
                    next.next_at = None;
                } else {
                    next.instances_created += 1;
                    next.next_at = recurring::next_occurrence(&template.cron, now, &account.settings.time_zone()).ok();
                    next.enabled = next.next_at.is_some();
                }
                match self.store.save_template(&next).await {
                    Ok(()) => {}
                    Err(StoreError::Conflict(Conflict::Version)) => continue,
                    Err(e) => return Err(e.into()),
                }
                if capped {
                    tracing::warn!(template = %template.id, max = template.max_instances, "recurring template reached its instance cap; disabled");
                    report.disabled += 1;
                    continue;
                }
                let run = self.spawn_instance(&account, &next, "schedule").await;
                if run.skipped.is_some() {
                    report.skipped_suppressed += 1;
                } else if run.found == 0 {
                    report.failed += 1;
                } else {
                    report.spawned += 1;
                }
                if let Err(e) = self.record_run(&account, template.id, run).await {
                    tracing::warn!(template = %template.id, error = %e, "a recurring run was not recorded");
                }
            }
            Ok(report)
        })
        .await
    }
}
