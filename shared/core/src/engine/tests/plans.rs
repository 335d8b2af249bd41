//! The owner's hand on a plan before approving it: edited, reordered and removed
//! steps that the task then follows, planning again with instructions, and the feedback each
//! leaves in the task's learning record.

use super::*;
use crate::owner::account::ExecutionMode;
use crate::ports::Clock;
use crate::task::controls::TaskMode;
use crate::task::error::EngineError;
use crate::task::plan_edit::{PlanFeedbackKind, StepEdit};

async fn planned(w: &World, member: &str) -> Task {
    let patch = super::super::SettingsPatch {
        onboarded_at: Some(w.clock.now() - days(60)),
        execution_mode: Some(ExecutionMode::LimitedAuto),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    let input = w.new_task("churn_risk", member).await;
    let options = super::super::CreateOptions {
        mode: TaskMode::Plan,
        ..Default::default()
    };
    w.engine
        .create_task_with(&account, input, options)
        .await
        .expect("create")
        .task()
        .clone()
}

fn keep(n: u32) -> StepEdit {
    StepEdit {
        step_number: n,
        ..StepEdit::default()
    }
}

/// Given a plan of three messages, when the owner rewrites the first, removes the last and
/// approves, then the first mail says the owner's words, the follow-up is the plan's second
/// step, no third message goes out, and the learning record holds both edits.
#[tokio::test]
async fn an_edited_plan_is_what_the_task_sends() {
    let w = world().await;
    let task = planned(&w, "m_plan_edit").await;
    let plan = task.controls.plan.clone().expect("plan");
    assert_eq!(plan.steps.len(), 3);
    assert!(plan.steps[1].draft_content.is_some(), "a drafted follow-up");
    let follow_up = StepEdit {
        step_number: 2,
        description: None,
        draft_content: Some("Sam, one more nudge from us: Saturday at 9 works too.".into()),
    };
    let rewritten = StepEdit {
        step_number: 1,
        description: Some("A short personal note".into()),
        draft_content: Some("Subject: Missed you\n\nSam, we kept your spot. Come Tuesday?".into()),
    };
    let edited = w
        .engine
        .edit_plan(w.account.id, task.id, &[rewritten, follow_up], Some(task.version))
        .await
        .expect("edit");
    assert_eq!(edited.controls.plan.as_ref().map(|p| p.steps.len()), Some(2));
    assert_eq!(edited.draft.as_ref().map(|d| d.subject.as_str()), Some("Missed you"));
    assert_eq!(edited.budget.messages_max, 2);
    let stale = w.engine.edit_plan(w.account.id, task.id, &[keep(1)], Some(task.version)).await;
    assert!(matches!(stale, Err(EngineError::StaleVersion)), "{stale:?}");

    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].text.contains("we kept your spot"), "{}", sent[0].text);
    w.run_when_due(&task).await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "the plan's follow-up went out");
    assert!(
        sent[1].text.contains("one more nudge from us"),
        "the owner's follow-up: {}",
        sent[1].text
    );

    let after = w.task(&task).await;
    assert!(after.budget.messages_used <= 2);
    let log: Vec<String> = w
        .engine
        .task(w.account.id, task.id)
        .await
        .expect("history")
        .log
        .into_iter()
        .map(|l| l.reason)
        .collect();
    assert!(log.contains(&"owner_edited_plan".to_owned()), "{log:?}");
    if after.is_active() {
        w.engine.cancel(w.account.id, task.id).await.expect("cancel");
    }
    let record = w
        .store
        .interaction_outcome(w.account.id, task.id)
        .await
        .expect("read")
        .expect("a learning record");
    let changes: Vec<&str> = record.private.plan_feedback.iter().map(|f| f.change.as_str()).collect();
    assert_eq!(changes, ["edited", "edited", "edited", "removed"]);
    assert!(record.private.plan_feedback.iter().all(|f| f.kind == PlanFeedbackKind::PlanEdit));
}

/// Given a plan, when the owner asks the agent to plan again with instructions, then the plan
/// is made anew, the instruction is kept as feedback and logged; an approved plan no longer
/// changes.
#[tokio::test]
async fn planning_again_keeps_the_owners_instruction() {
    let w = world().await;
    let task = planned(&w, "m_replan").await;
    let edited = w
        .engine
        .edit_plan(w.account.id, task.id, &[keep(2), keep(1), keep(3)], None)
        .await
        .expect("reorder");
    let replanned = w
        .engine
        .replan(w.account.id, task.id, "Don't mention the promotion, just check in", None)
        .await
        .expect("replan");
    let plan = replanned.controls.plan.clone().expect("plan");
    assert_eq!(plan.steps.len(), 3);
    assert_eq!(plan.steps[0].step_number, 1);
    assert!(replanned.version > edited.version);
    let kinds: Vec<PlanFeedbackKind> = plan.feedback.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [PlanFeedbackKind::PlanEdit, PlanFeedbackKind::Instruction]);
    assert_eq!(
        plan.feedback[1].edited.as_deref(),
        Some("Don't mention the promotion, just check in")
    );
    let blank = w.engine.replan(w.account.id, task.id, "  ", None).await;
    assert!(matches!(blank, Err(EngineError::Invalid(_))), "{blank:?}");

    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    let late = w.engine.edit_plan(w.account.id, task.id, &[keep(1)], None).await;
    assert!(matches!(late, Err(EngineError::InvalidState { .. })), "{late:?}");
    let late = w.engine.replan(w.account.id, task.id, "again", None).await;
    assert!(matches!(late, Err(EngineError::InvalidState { .. })), "{late:?}");
}
