//! The owner's control of one task or one recurring template (spec 001, `task_pause`,
//! `task_resume`, `task_run_now`, run history): pause (a paused task leaves the due index and
//! its workers skip it; a paused template spawns nothing), resume, run now, and a template's
//! runs.

mod wins;

use jiff::Timestamp;

use super::Engine;
use super::tasks::{Created, NewTask};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, TaskId};
use crate::owner::recurring::{self, RecurringTemplate, TemplateRun};
use crate::rails::gate::GateContext;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::work::{WorkItem, queue_for};
use crate::task::{Task, TaskStatus, TriggerType};

const RACES: usize = 4;
/// The runs a template keeps (newest last).
pub const RUNS_KEPT: usize = 50;

/// What the owner asks of one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Control {
    Pause,
    Resume,
    RunNow,
}

impl Engine {
    /// `POST /api/v1/tasks/{id}/pause`: the task takes no step until resumed (already paused:
    /// unchanged).
    pub async fn pause_task(&self, account: AccountId, id: TaskId) -> Result<Task, EngineError> {
        self.control_task(account, id, Control::Pause).await
    }

    /// `POST /api/v1/tasks/{id}/resume`: a paused task's next step is due again when it was
    /// scheduled (at once if that passed).
    pub async fn resume_task(&self, account: AccountId, id: TaskId) -> Result<Task, EngineError> {
        self.control_task(account, id, Control::Resume).await
    }

    /// `POST /api/v1/tasks/{id}/run-now`: the task's next step now (a paused one is resumed);
    /// the step still passes every gate (the send window, the caps).
    pub async fn run_task_now(&self, account: AccountId, id: TaskId) -> Result<Task, EngineError> {
        self.control_task(account, id, Control::RunNow).await
    }

    async fn control_task(&self, account: AccountId, id: TaskId, control: Control) -> Result<Task, EngineError> {
        for _ in 0..RACES {
            let task = self
                .store
                .get_task(account, id)
                .await?
                .ok_or(EngineError::NotFound { what: "task" })?;
            let now = self.clock.now();
            let action = match control {
                Control::Pause => "pause",
                Control::Resume => "resume",
                Control::RunNow => "run now",
            };
            if !task.is_active() {
                return Err(EngineError::InvalidState {
                    status: task.status,
                    action,
                });
            }
            let paused = task.controls.paused_at.is_some();
            let (reason, detail) = match control {
                Control::Pause if paused => return Ok(task),
                Control::Resume if !paused => return Ok(task),
                Control::Pause => (Reason::OwnerPaused, "no step until the owner resumes it".to_owned()),
                Control::Resume => (Reason::OwnerResumed, "its steps are due again".to_owned()),
                Control::RunNow => {
                    if queue_for(task.status, task.touch).is_none() {
                        return Err(EngineError::InvalidState {
                            status: task.status,
                            action,
                        });
                    }
                    (Reason::OwnerRanNow, "its next step is due now".to_owned())
                }
            };
            let (mut next, log) = record(&task, now, Why::new(reason).detail(detail));
            next.controls.paused_at = (control == Control::Pause).then_some(now);
            if control == Control::RunNow {
                next.next_action_at = Some(now);
            }
            match self.store.commit(&TaskCommit::new(next.clone(), log)).await {
                Ok(()) => {
                    if control == Control::RunNow
                        && let Some(queue) = queue_for(next.status, next.touch)
                    {
                        self.wake(&next, queue, now).await;
                    }
                    return Ok(next);
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Hand a task's step to its worker at once (the tick would within its minute).
    async fn wake(&self, task: &Task, queue: crate::task::work::QueueName, now: Timestamp) {
        let item = WorkItem {
            account_id: task.account_id,
            task_id: task.id,
            due_at: now,
        };
        let Ok(body) = serde_json::to_string(&item) else { return };
        if let Err(e) = self.queue.send(queue, vec![(body, jiff::SignedDuration::ZERO)]).await {
            tracing::warn!(task = %task.id, error = %e, "run-now not queued; the tick takes it within a minute");
        }
    }

    async fn template(&self, account: AccountId, id: ulid::Ulid) -> Result<RecurringTemplate, EngineError> {
        self.store
            .list_templates(account)
            .await?
            .into_iter()
            .find(|t| t.id == id)
            .ok_or(EngineError::NotFound {
                what: "recurring template",
            })
    }

    /// `POST /api/v1/recurring/{id}/pause`: it spawns nothing until resumed.
    pub async fn pause_template(&self, account: AccountId, id: ulid::Ulid) -> Result<RecurringTemplate, EngineError> {
        self.change_template(account, id, |t, _| {
            t.paused = true;
            Ok(())
        })
        .await
    }

    /// `POST /api/v1/recurring/{id}/resume`: its next occurrence counts from now (missed ones
    /// are not made up).
    pub async fn resume_template(&self, account: AccountId, id: ulid::Ulid) -> Result<RecurringTemplate, EngineError> {
        let tz = self.account(account).await?.settings.time_zone();
        self.change_template(account, id, |t, now| {
            t.paused = false;
            if t.enabled && t.next_at.is_none_or(|at| at < now) {
                t.next_at = recurring::next_occurrence(&t.cron, now, &tz).ok();
            }
            Ok(())
        })
        .await
    }

    /// `PUT /api/v1/recurring/{id}` (`{"notify"}`): when the owner hears of its runs from now
    /// on (`always`, `on_change`, `on_win`, `never`); its schedule and runs are unchanged.
    pub async fn set_template_notify(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        notify: crate::owner::trigger::Notify,
    ) -> Result<RecurringTemplate, EngineError> {
        self.change_template(account, id, |t, _| {
            t.notify = notify;
            Ok(())
        })
        .await
    }

    async fn change_template(
        &self,
        account: AccountId,
        id: ulid::Ulid,
        change: impl Fn(&mut RecurringTemplate, Timestamp) -> Result<(), EngineError>,
    ) -> Result<RecurringTemplate, EngineError> {
        for _ in 0..RACES {
            let current = self.template(account, id).await?;
            let mut next = RecurringTemplate {
                version: current.version + 1,
                ..current
            };
            change(&mut next, self.clock.now())?;
            match self.store.save_template(&next).await {
                Ok(()) => return Ok(next),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// `POST /api/v1/recurring/{id}/run-now`: one instance now, outside its schedule (its
    /// next occurrence stays), within its instance cap.
    pub async fn run_template_now(&self, account: AccountId, id: ulid::Ulid) -> Result<RecurringTemplate, EngineError> {
        let current = self.template(account, id).await?;
        if current.instances_created >= current.max_instances {
            return Err(crate::kernel::error::InvalidInput::new(
                "template_exhausted",
                format!("the template made all its {} instances", current.max_instances),
            )
            .into());
        }
        let claimed = self
            .change_template(account, id, |t, now| {
                t.instances_created += 1;
                t.last_triggered_at = Some(now);
                Ok(())
            })
            .await?;
        let account_id = account;
        let account = self.account(account).await?;
        let run = self.spawn_instance(&account, &claimed, "run_now").await;
        // An instance is spent only by a task it opened: a run-now that found its member's
        // task still open (a double click), or opened nothing, gives its instance back, so
        // the cap counts tasks, each once.
        if run.opened == 0 {
            self.change_template(account_id, id, |t, _| {
                t.instances_created = t.instances_created.saturating_sub(1);
                Ok(())
            })
            .await?;
        }
        self.record_run(&account, id, run).await
    }

    /// One instance of `template` (its `instances_created` already counted), as a run.
    pub(crate) async fn spawn_instance(
        &self,
        account: &crate::owner::account::Account,
        template: &RecurringTemplate,
        by: &str,
    ) -> TemplateRun {
        let now = self.clock.now();
        let input = NewTask {
            task_type: template.task_type.clone(),
            member_id: template.member_id.clone(),
            goal: template.goal.clone(),
            confidence: None,
            draft: None,
            trigger_type: TriggerType::Recurring,
            trigger_event_id: Some(format!("{}#{}", template.id, template.instances_created)),
            gate: GateContext::default(),
            context: serde_json::json!({ "recurring_template": template.id, "instance": template.instances_created }),
        };
        let mut run = TemplateRun {
            at: now,
            found: 1,
            opened: 0,
            notified: None,
            task_id: None,
            skipped: None,
            by: by.to_owned(),
            every: template.backoff.every,
        };
        match self.create_task(account, input).await {
            Ok(Created::New(task)) => {
                run.opened = 1;
                run.task_id = Some(task.id);
                if task.status == TaskStatus::PendingReview {
                    run.notified = Some("owner".into());
                }
            }
            Ok(Created::Existing(task)) => run.task_id = Some(task.id),
            Err(EngineError::MemberSuppressed { .. }) => {
                tracing::info!(template = %template.id, "recurring instance skipped: the member is suppressed");
                run.skipped = Some("member_suppressed".into());
            }
            Err(e) => {
                tracing::warn!(template = %template.id, error = %e, "recurring instance not created");
                run.found = 0;
            }
        }
        run
    }

    /// Add a run to the template's history (newest last, [`RUNS_KEPT`] kept), and tell the
    /// owner as the template's notify policy says: `always`; `on_change` when the result
    /// differs from the last run's (the difference named); `on_win` and `never` not for a run.
    ///
    /// The run moves its back-off ([`recurring::Backoff`]): a scheduled run that keeps finding
    /// nothing sets its next occurrence further out, a run that opens a task brings it back.
    pub(crate) async fn record_run(
        &self,
        account: &crate::owner::account::Account,
        id: ulid::Ulid,
        run: TemplateRun,
    ) -> Result<RecurringTemplate, EngineError> {
        let tz = account.settings.time_zone();
        let account = account.id;
        let told = std::sync::Mutex::new(None::<String>);
        let saved = self
            .change_template(account, id, |t, _| {
                let tell = run_news(t.notify, t.runs.last(), &run);
                let mut run = run.clone();
                if tell.is_some() {
                    run.notified = Some("owner".into());
                }
                let scheduled = run.by == "schedule";
                let before = t.backoff;
                t.backoff = before.after(run.opened, scheduled);
                run.every = t.backoff.every;
                if t.enabled && t.next_at.is_some() {
                    if scheduled && t.backoff.every > 1 {
                        t.next_at = recurring::nth_occurrence(&t.cron, run.at, &tz, t.backoff.every).ok().or(t.next_at);
                    } else if before.every > 1 && t.backoff.every == 1 {
                        t.next_at = recurring::next_occurrence(&t.cron, run.at, &tz).ok().or(t.next_at);
                    }
                }
                *told.lock().unwrap_or_else(|e| e.into_inner()) = tell;
                t.runs.push(run);
                let over = t.runs.len().saturating_sub(RUNS_KEPT);
                t.runs.drain(..over);
                Ok(())
            })
            .await?;
        let tell = told.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(detail) = tell {
            let draft = super::owner_notices::NoticeDraft {
                kind: crate::owner::owner_notice::NoticeKind::ActionMessage,
                task_id: run.task_id,
                member_id: None,
                title: format!("Your schedule ran: {}", crate::task::task_type::definition(&saved.task_type).label),
                detail,
            };
            self.notify_owner_after(account, draft, false).await;
        }
        Ok(saved)
    }

    /// `GET /api/v1/recurring/{id}/runs`: newest first.
    pub async fn template_runs(&self, account: AccountId, id: ulid::Ulid) -> Result<Vec<TemplateRun>, EngineError> {
        let mut runs = self.template(account, id).await?.runs;
        runs.reverse();
        Ok(runs)
    }
}

/// What the owner is told of a run under `notify`, if anything, in words (the notice's title
/// names the schedule by its type's label).
fn run_news(notify: crate::owner::trigger::Notify, last: Option<&TemplateRun>, run: &TemplateRun) -> Option<String> {
    use crate::owner::trigger::Notify;
    let said = |r: &TemplateRun| match (r.found, r.opened) {
        (0, _) => "found nothing to do".to_owned(),
        (_, 0) => "found its task already open".to_owned(),
        (_, n) => format!("opened {n} task{}", if n == 1 { "" } else { "s" }),
    };
    let now = said(run);
    match notify {
        Notify::Always => Some(format!("It {now}.")),
        Notify::OnChange => match last {
            Some(before) if (before.found, before.opened) == (run.found, run.opened) => None,
            Some(before) => Some(format!("It {now}; the last run {}.", said(before))),
            None => Some(format!("It {now} (its first run).")),
        },
        Notify::OnWin | Notify::Never => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::trigger::Notify;

    fn run(found: u32, opened: u32) -> TemplateRun {
        TemplateRun {
            at: crate::testing::at("2026-11-02T14:00:00Z"),
            found,
            opened,
            notified: None,
            task_id: None,
            skipped: None,
            by: "schedule".into(),
            every: 1,
        }
    }

    #[test]
    fn on_change_tells_the_owner_only_when_the_result_changes() {
        assert!(run_news(Notify::OnChange, None, &run(1, 1)).is_some(), "a first run is news");
        assert_eq!(
            run_news(Notify::OnChange, Some(&run(1, 1)), &run(1, 1)),
            None,
            "the same result is not"
        );
        let changed = run_news(Notify::OnChange, Some(&run(1, 1)), &run(1, 0)).unwrap_or_default();
        assert!(
            changed.contains("already open") && changed.contains("opened 1 task"),
            "the difference is named: {changed}"
        );
        assert!(run_news(Notify::Always, Some(&run(1, 1)), &run(1, 1)).is_some());
        assert_eq!(run_news(Notify::Never, None, &run(1, 1)), None);
    }
}
