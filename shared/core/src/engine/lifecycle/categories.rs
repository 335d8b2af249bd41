//! Steps for the task categories that never e-mail a member: staff to-dos run the
//! owner-reminder cadence and wait for a human, research tasks produce their deliverable and
//! complete. Which step a task takes is decided in `crate::rails::step`; communication tasks send
//! (`work.rs`, `send.rs`).

use jiff::{SignedDuration, Timestamp};

use super::Engine;
use super::work::StepOutcome;
use crate::ports::TaskQuery;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::{Category, DeliverableType, TaskTypeDef};
use crate::task::transition::{Why, transition};
use crate::task::{ConversationMessage, Deliverable, Role, Task, TaskStatus};

/// How far back the churn report looks.
const REPORT_WINDOW_DAYS: i64 = 30;
/// The most tasks one report reads (a bounded, paged read of the account's task list).
const REPORT_MAX_TASKS: usize = 2_000;

impl Engine {
    /// A staff to-do: the first step starts the timer, each later one is a reminder to the
    /// owner, and when the reminders run out the cadence escalates it. Nothing reaches the
    /// member; the owner closes it with `resolve`.
    pub(in crate::engine) async fn staff_todo_step(
        &self,
        task: Task,
        def: &TaskTypeDef,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        if limits_passed(&task, now) {
            return self.exhaust_todo(task, now, Reason::BudgetTimeExpired).await;
        }
        let Some(wait_days) = def.cadence.intervals.get(task.touch as usize) else {
            return self.exhaust_todo(task, now, Reason::OwnerRemindersUsed).await;
        };
        let (reason, text) = if task.touch == 0 {
            (
                Reason::StaffTodoAssigned,
                format!("To do for the {:?}: {} (member {}).", def.assignment, task.goal, task.member.id).to_lowercase(),
            )
        } else {
            (
                Reason::StaffTodoReminder,
                format!(
                    "Reminder {} ({}): {} is still open.",
                    task.touch,
                    def.cadence.tone(task.touch - 1),
                    task.goal
                ),
            )
        };
        let expected_version = task.version;
        let (started, start_log) = transition(&task, TaskStatus::Executing, now, Why::new(reason))?;
        let (mut next, wait_log) = transition(
            &started,
            TaskStatus::Waiting,
            now,
            Why::new(Reason::WaitingForTheOwner).detail(format!(
                "next reminder in {}",
                crate::kernel::plural::count(*wait_days, "day", "days")
            )),
        )?;
        next.touch += 1;
        next.next_action_at = Some((now + SignedDuration::from_hours(24 * i64::from(*wait_days))).min(next.budget.expires_at));
        next.execution_started_at.get_or_insert(now);
        let note = ConversationMessage {
            id: crate::kernel::ids::new_ulid(now),
            at: now,
            role: Role::System,
            content: text,
            original: None,
        };
        self.store
            .commit(&TaskCommit {
                expected_version,
                task: next,
                log: vec![start_log, wait_log],
                messages: vec![note],
                send: None,
                loops: Vec::new(),
                webhooks: true,
            })
            .await?;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Waiting,
            reason,
        })
    }

    async fn exhaust_todo(&self, task: Task, now: Timestamp, reason: Reason) -> Result<StepOutcome, EngineError> {
        let detail = format!(
            "{} sent and nobody marked it done; the owner must decide",
            crate::kernel::plural::count(task.touch.saturating_sub(1), "reminder", "reminders")
        );
        self.move_to(task, TaskStatus::Escalated, now, Why::new(reason).detail(detail))
            .await
    }

    /// A research task: gather, write the deliverable, complete — in one commit.
    pub(in crate::engine) async fn research_step(
        &self,
        mut task: Task,
        def: &TaskTypeDef,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let Some(kind) = def.deliverable else {
            let why = Why::new(Reason::NoDeliverableDefined).detail(format!("{} names no deliverable", def.key));
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        };
        let deliverable = match def.key {
            "monthly_churn_analysis" => self.churn_report(&task, kind, now).await?,
            other => {
                let why = Why::new(Reason::NoProducerForDeliverable).detail(format!("nothing produces the {other} deliverable yet"));
                return self.move_to(task, TaskStatus::Escalated, now, why).await;
            }
        };
        let enough = deliverable.data["tasks_considered"].as_u64().unwrap_or(0) > 0;
        let (outcome, reason) = if enough {
            ("report_produced", Reason::DeliverableProduced)
        } else {
            ("insufficient_data", Reason::NoTasksInWindow)
        };
        task.draft = None;
        task.deliverable = Some(deliverable);
        self.move_to(task, TaskStatus::Completed, now, Why::new(reason).outcome(outcome))
            .await
    }

    /// The monthly churn report, from the account's own task rows of the last 30 days.
    async fn churn_report(&self, task: &Task, kind: DeliverableType, now: Timestamp) -> Result<Deliverable, EngineError> {
        let since = now - SignedDuration::from_hours(24 * REPORT_WINDOW_DAYS);
        let mut by_type: std::collections::BTreeMap<String, (u32, u32)> = Default::default();
        let mut outcomes: std::collections::BTreeMap<String, u32> = Default::default();
        let (mut considered, mut active_at_risk, mut messages, mut value) = (0u32, 0u32, 0u32, 0.0f64);
        let mut query = TaskQuery {
            limit: 100,
            ..TaskQuery::default()
        };
        let mut read = 0usize;
        'pages: loop {
            let (tasks, cursor) = self.store.list_tasks(task.account_id, &query).await?;
            for t in tasks {
                read += 1;
                // Newest first: everything after this is older than the window.
                if t.created_at < since || read > REPORT_MAX_TASKS {
                    break 'pages;
                }
                if t.id == task.id || task_type_is_research(&t.task_type) {
                    continue;
                }
                considered += 1;
                messages += t.budget.messages_used;
                value += t.attributed_value.unwrap_or(0.0);
                let entry = by_type.entry(t.task_type.clone()).or_default();
                entry.0 += 1;
                if t.is_active() {
                    entry.1 += 1;
                    if t.task_type == "churn_risk" {
                        active_at_risk += 1;
                    }
                }
                if let Some(o) = &t.outcome {
                    *outcomes.entry(o.clone()).or_default() += 1;
                }
            }
            match cursor {
                Some(c) => query.cursor = Some(c),
                None => break,
            }
        }
        let mut content = format!(
            "# Churn analysis, {} to {}\n\n- Tasks in the window: {considered}\n- Members at risk with an open conversation: {active_at_risk}\n- Messages sent: {messages}\n- Revenue attributed: ${value:.0}\n\n## By task type\n\n| type | tasks | still open |\n|---|---|---|\n",
            since.strftime("%Y-%m-%d"),
            now.strftime("%Y-%m-%d")
        );
        for (t, (n, open)) in &by_type {
            content.push_str(&format!("| {t} | {n} | {open} |\n"));
        }
        content.push_str("\n## Outcomes\n\n");
        if outcomes.is_empty() {
            content.push_str("No task closed in the window.\n");
        }
        for (o, n) in &outcomes {
            content.push_str(&format!("- {o}: {n}\n"));
        }
        content.push_str("\n## Recommended next steps\n\n");
        let unresponsive = outcomes.get("unresponsive").copied().unwrap_or(0);
        if active_at_risk > 0 {
            content.push_str(&format!(
                "- {} mid-conversation: review the escalated ones first.\n",
                if active_at_risk == 1 {
                    "1 at-risk member is".to_owned()
                } else {
                    format!("{active_at_risk} at-risk members are")
                }
            ));
        }
        if unresponsive > 0 {
            content.push_str(&format!(
                "- {} without an answer: a personal call may reach them.\n",
                crate::kernel::plural::count(unresponsive, "task ended", "tasks ended")
            ));
        }
        if considered == 0 {
            content.push_str("- Not enough activity yet for a trend; the next report will have more.\n");
        }
        Ok(Deliverable {
            kind,
            title: format!("Churn analysis {}", now.strftime("%Y-%m")),
            content,
            data: serde_json::json!({
                "window_days": REPORT_WINDOW_DAYS,
                "tasks_considered": considered,
                "active_at_risk": active_at_risk,
                "messages_sent": messages,
                "attributed_value": value,
                "by_type": by_type.iter().map(|(t, (n, open))| (t.clone(), serde_json::json!({"tasks": n, "open": open}))).collect::<serde_json::Map<_, _>>(),
                "outcomes": outcomes,
            }),
            created_at: now,
        })
    }
}

fn limits_passed(task: &Task, now: Timestamp) -> bool {
    crate::kernel::limits::is_due(task.budget.expires_at, now)
}

fn task_type_is_research(key: &str) -> bool {
    crate::task::task_type::definition(key).category == Category::Research
}
