//! Subtasks on the in-memory store: limits, the parent's message ceiling, and the
//! parent's state derived from its subtasks.

use super::*;
use crate::engine::CreateOptions;
use crate::engine::Resolution;
use crate::task::subtasks::Requirement;

impl World {
    async fn subtask(
        &self,
        parent: &Task,
        task_type: &str,
        member: &str,
        requirement: Requirement,
    ) -> Result<Task, crate::task::error::EngineError> {
        let input = self.new_task(task_type, member).await;
        self.engine
            .create_subtask(&self.account, parent.id, input, requirement, Default::default())
            .await
    }

    async fn resolve(&self, task: &Task, outcome: &str) {
        let resolution = Resolution {
            outcome: outcome.into(),
            note: None,
        };
        self.engine.resolve(self.account.id, task.id, resolution).await.expect("resolve");
    }
}

fn code(result: Result<Task, crate::task::error::EngineError>) -> String {
    match result {
        Err(crate::task::error::EngineError::Invalid(e)) => e.code.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Given an approved win-back parent with a required staff call and an optional churn
/// touch, when the call is made and the touch is cancelled, then the parent completes on its
/// next step — and the parent itself never wrote to anyone.
#[tokio::test]
async fn a_parent_completes_when_its_required_subtasks_do() {
    let w = world().await;
    let parent = w.approved("win_back", "m_parent").await;
    let call = w
        .subtask(&parent, "staff_call_member", "m_parent", Requirement::Required)
        .await
        .expect("call");
    let touch = w
        .subtask(&parent, "churn_risk", "m_parent", Requirement::Optional)
        .await
        .expect("touch");
    assert_eq!((call.parent_id, touch.requirement), (Some(parent.id), Some(Requirement::Optional)));
    assert_eq!(touch.budget.messages_max, 3, "within the parent's ceiling");
    w.run().await;
    let waiting = w.task(&parent).await;
    assert_eq!(waiting.status, TaskStatus::Waiting, "the subtasks are still in review");
    assert!(w.mailer.sent().is_empty(), "a parent never sends; its subtasks wait for review");

    w.engine.approve(w.account.id, call.id, None).await.expect("approve the call");
    w.run().await;
    assert_eq!(w.task(&call).await.status, TaskStatus::Waiting, "the to-do is with the owner");
    w.resolve(&w.task(&call).await, "completed").await;
    w.engine.cancel(w.account.id, touch.id).await.expect("cancel");
    w.run().await;
    let done = w.task(&parent).await;
    assert_eq!(
        (done.status, done.outcome.as_deref()),
        (TaskStatus::Completed, Some("subtasks_completed"))
    );
    assert!(w.mailer.sent().is_empty());
}

/// Given a parent whose required subtask is cancelled, when the parent steps, then it goes to
/// the owner naming the failed step.
#[tokio::test]
async fn a_failed_required_subtask_escalates_the_parent() {
    let w = world().await;
    let parent = w.approved("win_back", "m_fail").await;
    let call = w
        .subtask(&parent, "staff_call_member", "m_fail", Requirement::Required)
        .await
        .expect("call");
    w.engine.cancel(w.account.id, call.id).await.expect("cancel");
    w.run().await;
    let after = w.task(&parent).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    assert_eq!(after.outcome_reason.as_deref(), Some("required_subtask_failed"));
}

/// Given a parent, then it takes at most 8 subtasks, promises no more messages than its own
/// budget, and closed parents take none.
#[tokio::test]
async fn subtask_limits_and_the_parents_ceiling_hold() {
    let w = world().await;
    let parent = w.approved("win_back", "m_lim").await;
    w.subtask(&parent, "churn_risk", "m_lim", Requirement::Required)
        .await
        .expect("first");
    assert_eq!(
        code(w.subtask(&parent, "lead_followup", "m_lim", Requirement::Required).await),
        "parent_budget_exhausted",
        "the churn subtask holds all three of the parent's messages"
    );
    for n in 1..8 {
        w.subtask(&parent, "staff_call_member", &format!("m_lim_{n}"), Requirement::BestEffort)
            .await
            .expect("within the limit");
    }
    assert_eq!(
        code(w.subtask(&parent, "staff_call_member", "m_lim_9", Requirement::BestEffort).await),
        "subtask_limit"
    );
    let other = w.approved("win_back", "m_closed").await;
    w.engine.cancel(w.account.id, other.id).await.expect("cancel");
    assert_eq!(
        code(w.subtask(&other, "staff_call_member", "m_closed", Requirement::Required).await),
        "parent_not_open"
    );
    assert_eq!(w.task(&parent).await.subtasks.len(), 8);
}

/// Given three members, one of whom already has an open churn task, when the owner makes a
/// churn batch for all three, then the batch parent (about the whole business) holds one
/// optional subtask for each of the other two, refuses the third with why, and — once the
/// subtasks are approved — each member gets their own mail while the parent sends nothing.
#[tokio::test]
async fn a_batch_makes_one_subtask_per_member_through_the_gates() {
    let w = world().await;
    w.approved("churn_risk", "m_busy").await;
    w.run().await;
    let input = w.new_task("churn_risk", "m_b1").await;
    let members = vec![
        w.member("m_b1").await,
        w.member("m_b2").await,
        w.member("m_busy").await,
        w.member("m_b1").await,
    ];
    let batch = w
        .engine
        .create_batch(&w.account, input, members, Default::default())
        .await
        .expect("batch");
    assert!(batch.parent.batch, "{:?}", batch.refused);
    assert_eq!(batch.parent.member.id.as_str(), "_account");
    assert_eq!(batch.parent.subtasks.len(), 2);
    assert_eq!(batch.parent.budget.messages_max, 3 * 3, "each member's budget, for every member");
    assert_eq!(batch.subtasks.len(), 2);
    assert!(batch.subtasks.iter().all(|t| t.requirement == Some(Requirement::Optional)));
    assert_eq!(batch.refused.len(), 1);
    assert_eq!(batch.refused[0].0.as_str(), "m_busy");
    let sent_before = w.mailer.sent().len();
    for task in &batch.subtasks {
        w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    }
    w.run().await;
    assert_eq!(w.mailer.sent().len(), sent_before + 2, "one mail per member");
    assert_eq!(
        w.task(&batch.parent).await.status,
        TaskStatus::PendingReview,
        "the parent itself is still in review"
    );
    assert!(
        w.engine
            .create_batch(&w.account, w.new_task("churn_risk", "m_b1").await, Vec::new(), Default::default())
            .await
            .is_err(),
        "a batch names at least one member"
    );
}

/// Given a parent with two open subtasks, when the owner cancels the parent, then its
/// subtasks are cancelled too, each logged with why.
#[tokio::test]
async fn cancelling_a_parent_cancels_its_open_subtasks() {
    let w = world().await;
    let parent = w.approved("win_back", "m_cascade").await;
    let call = w
        .subtask(&parent, "staff_call_member", "m_cascade", Requirement::Required)
        .await
        .expect("call");
    let touch = w
        .subtask(&parent, "churn_risk", "m_cascade", Requirement::Optional)
        .await
        .expect("touch");
    w.engine.cancel(w.account.id, parent.id).await.expect("cancel");
    for sub in [&call, &touch] {
        let after = w.task(sub).await;
        assert_eq!(
            (after.status, after.outcome_reason.as_deref()),
            (TaskStatus::Cancelled, Some("parent_cancelled"))
        );
    }
}

/// Given a parent still in review with a subtask (waiting in review with it), when the owner
/// skips the parent, then the subtask is cancelled too.
#[tokio::test]
async fn skipping_a_parent_in_review_cancels_its_subtasks() {
    let w = world().await;
    let input = w.new_task("win_back", "m_skip").await;
    let parent = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(parent.status, TaskStatus::PendingReview);
    let call = w
        .subtask(&parent, "staff_call_member", "m_skip", Requirement::Required)
        .await
        .expect("call");
    w.engine.skip(w.account.id, parent.id, None).await.expect("skip");
    assert_eq!(w.task(&call).await.outcome_reason.as_deref(), Some("parent_cancelled"));
}

/// Given a parent whose required subtask is still in review, when the owner resolves that
/// subtask as handled (it closes without ever running), then it counts as done and the parent
/// completes; a subtask the owner skipped does not count.
#[tokio::test]
async fn a_subtask_the_owner_handled_before_it_ran_counts_as_done() {
    let w = world().await;
    let parent = w.approved("win_back", "m_handled").await;
    let call = w
        .subtask(&parent, "staff_call_member", "m_handled", Requirement::Required)
        .await
        .expect("call");
    assert_eq!(call.status, TaskStatus::PendingReview);
    w.resolve(&call, "owner_handled").await;
    assert_eq!(w.task(&call).await.status, TaskStatus::Cancelled, "it never ran");
    w.run().await;
    let done = w.task(&parent).await;
    assert_eq!(done.status, TaskStatus::Completed, "the owner did the required step");

    let other = w.approved("win_back", "m_skipped").await;
    let skipped = w
        .subtask(&other, "staff_call_member", "m_skipped", Requirement::Required)
        .await
        .expect("call");
    w.engine.skip(w.account.id, skipped.id, None).await.expect("skip");
    w.run().await;
    assert_eq!(
        w.task(&other).await.status,
        TaskStatus::Escalated,
        "a skipped required step fails the parent"
    );
}

/// Given an owner's goal the agent plans, when it runs, then the agent adds one
/// step at a time, each reviewed by the owner: first the outreach; when that fails, a staff
/// call; once the call is made, no further step and the parent completes. The parent never
/// writes to anyone, and each planning decision is one AI call, logged with its reasoning.
#[tokio::test]
async fn the_agent_plans_one_step_at_a_time_until_the_goal_is_met() {
    let w = world().await;
    let mut input = w.new_task("ad_hoc", "m_plan").await;
    input.draft = None;
    input.goal = "Get Sam back to morning classes".into();
    let options = CreateOptions::default().with_agent_planning(true);
    let parent = w
        .engine
        .create_task_with(&w.account, input, options)
        .await
        .expect("create")
        .task()
        .clone();
    assert!(parent.draft.is_none(), "a planning parent drafts nothing");
    w.engine
        .approve(w.account.id, parent.id, None)
        .await
        .expect("approve without a draft");
    w.run().await;

    let planned = w.task(&parent).await;
    assert_eq!(planned.subtasks.len(), 1, "one step at a time");
    let outreach = w
        .store
        .get_task(w.account.id, planned.subtasks[0].id)
        .await
        .expect("read")
        .expect("step");
    assert_eq!(
        (outreach.task_type.as_str(), outreach.status, outreach.trigger_type),
        ("churn_risk", TaskStatus::PendingReview, TriggerType::AgentSpawned),
        "the agent's step waits for the owner"
    );
    let history = w.store.task_history(w.account.id, parent.id).await.expect("read").expect("task");
    assert!(
        history
            .log
            .iter()
            .any(|l| l.reason == "agent_planned_step" && l.detail.as_deref().is_some_and(|d| d.contains("the fixed plan")))
    );

    w.engine.cancel(w.account.id, outreach.id).await.expect("the outreach goes nowhere");
    w.run().await;
    let replanned = w.task(&parent).await;
    assert_eq!(replanned.subtasks.len(), 2, "a second step after the first failed");
    let call = w
        .store
        .get_task(w.account.id, replanned.subtasks[1].id)
        .await
        .expect("read")
        .expect("step");
    assert_eq!(call.task_type, "staff_call_member");
    assert_eq!(replanned.subtasks[1].requirement, Requirement::Required);

    w.engine.approve(w.account.id, call.id, None).await.expect("approve the call");
    w.run().await;
    w.resolve(&call, "completed").await;
    w.run().await;
    let done = w.task(&parent).await;
    assert_eq!(done.status, TaskStatus::Completed, "the required call was made");
    assert_eq!(done.ai_calls, 3, "three planning decisions");
    assert!(
        w.mailer.sent().is_empty(),
        "nothing was sent: every step waited for the owner or was cancelled"
    );

    let mut todo = w.new_task("staff_call_member", "m_plan_todo").await;
    todo.draft = None;
    let refused = w
        .engine
        .create_task_with(&w.account, todo, CreateOptions::default().with_agent_planning(true))
        .await;
    assert!(
        matches!(refused, Err(crate::task::error::EngineError::Invalid(ref e)) if e.code == "planning_not_allowed"),
        "{refused:?}"
    );
}
