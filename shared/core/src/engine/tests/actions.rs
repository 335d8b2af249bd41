//! The action executor and automation tasks (spec §15, §31.5, §32) on the in-memory store,
//! with a scripted connector: pre-flight, idempotency keys, retries, dry runs, bulk tagging.

use super::connector::with_connector;
use super::*;
use crate::engine::CreateOptions;
use crate::members::connector::MemberChange;
use crate::members::event::MemberStatus;
use crate::ports::Clock;
use crate::task::action::{Action, ActionRecord, ActionState, ActionType, idempotency_key};
use crate::task::controls::TaskMode;
use crate::task::error::EngineError;

impl World {
    async fn automation(&self, task_type: &str, member: &str, actions: Vec<Action>, mode: TaskMode) -> Result<Task, EngineError> {
        let mut input = self.new_task(task_type, member).await;
        input.draft = None;
        input.confidence = Some(100);
        let options = CreateOptions {
            actions,
            ..CreateOptions::with_mode(mode)
        };
        Ok(self.engine.create_task_with(&self.account, input, options).await?.task().clone())
    }

    async fn approved_automation(&self, member: &str, actions: Vec<Action>) -> Task {
        let task = self
            .automation("member_update", member, actions, TaskMode::Live)
            .await
            .expect("create");
        assert_eq!(task.status, TaskStatus::PendingReview, "manual mode: the owner sees it first");
        self.engine.approve(self.account.id, task.id, None).await.expect("approve")
    }

    async fn history(&self, task: &Task) -> crate::task::history::TaskHistory {
        let history = self.store.task_history(self.account.id, task.id).await;
        history.expect("read").expect("task")
    }

    async fn log_reasons(&self, task: &Task) -> Vec<String> {
        self.history(task).await.log.into_iter().map(|l| l.reason).collect()
    }

    async fn notes(&self, task: &Task) -> Vec<String> {
        self.history(task).await.messages.into_iter().map(|m| m.content).collect()
    }
}

fn tag(t: &str) -> Action {
    Action::TagMember { tag: t.into() }
}

fn note(t: &str) -> Action {
    Action::UpdateMemberNotes { note: t.into() }
}

fn code(result: Result<Task, EngineError>) -> String {
    match result {
        Err(EngineError::Invalid(e)) => e.code.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Given an approved member_update with four actions, when it runs, then each runs once in
/// order — the two PushPress changes through the connector with their idempotency keys, the
/// note and the research in the conversation — and the task completes as `executed`.
#[tokio::test]
async fn a_member_update_runs_each_action_once_and_completes() {
    let (w, connector, _) = with_connector().await;
    let actions = vec![
        tag("vip"),
        note("Prefers mornings"),
        Action::LogNote {
            text: "Tagged for the spring party".into(),
        },
        Action::ResearchMember,
    ];
    let task = w.approved_automation("m_update", actions).await;
    w.run().await;
    let done = w.task(&task).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some("executed"));
    let member = MemberId::parse("m_update").expect("member");
    assert_eq!(
        connector.changes(),
        vec![
            (
                member.clone(),
                MemberChange::AddTag("vip".into()),
                idempotency_key(task.id, ActionType::TagMember, "0")
            ),
            (
                member,
                MemberChange::AppendNote("Prefers mornings".into()),
                idempotency_key(task.id, ActionType::UpdateMemberNotes, "1")
            ),
        ]
    );
    let notes = w.notes(&task).await;
    assert_eq!(notes.iter().filter(|n| n.starts_with("Action executed:")).count(), 4, "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("Tagged for the spring party")));
    assert!(
        notes.iter().any(|n| n.contains("status: unknown")),
        "research reads the member's facts: {notes:?}"
    );
    let log = w.store.task_actions(w.account.id, task.id).await.expect("actions");
    assert_eq!(log.len(), 4);
    assert!(log.iter().all(|r| r.state == ActionState::Done && r.finished_at.is_some()));
    assert!(w.mailer.sent().is_empty(), "automation never mails a member");
    // A duplicate delivery of the same work finds nothing to do.
    let again = w.engine.execute(&w.item(&task)).await.expect("execute");
    assert!(matches!(again, StepOutcome::Skipped(_)), "{again:?}");
    assert_eq!(connector.changes().len(), 2);
}

/// Given an action an earlier run finished, when the task runs, then that action is skipped
/// (its key is taken) and only the rest run.
#[tokio::test]
async fn an_action_an_earlier_run_finished_is_not_repeated() {
    let (w, connector, _) = with_connector().await;
    let task = w.approved_automation("m_retry", vec![tag("vip"), tag("spring")]).await;
    let finished = ActionRecord {
        account_id: w.account.id,
        task_id: task.id,
        key: idempotency_key(task.id, ActionType::TagMember, "0"),
        member_id: task.member.id.clone(),
        action: tag("vip"),
        state: ActionState::Done,
        result: None,
        error: None,
        started_at: day0(),
        finished_at: Some(day0()),
    };
    w.store.finish_action(&finished).await.expect("seed");
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    let changes = connector.changes();
    assert_eq!(changes.len(), 1, "only the second tag ran: {changes:?}");
    assert_eq!(changes[0].1, MemberChange::AddTag("spring".into()));
}

/// Given a worker that died between claiming two actions and finishing them, when the task
/// runs again, then the reversible tag is simply run again, but the note (which cannot be
/// undone, and may have gone through) goes to the owner instead of being written twice.
#[tokio::test]
async fn an_unfinished_action_reruns_only_if_repeating_it_is_harmless() {
    let (w, connector, _) = with_connector().await;
    let task = w
        .approved_automation("m_died", vec![tag("vip"), note("Called about the freeze")])
        .await;
    for (slot, action) in [("0", tag("vip")), ("1", note("Called about the freeze"))] {
        let started = ActionRecord {
            account_id: w.account.id,
            task_id: task.id,
            key: idempotency_key(task.id, action.kind(), slot),
            member_id: task.member.id.clone(),
            action,
            state: ActionState::Started,
            result: None,
            error: None,
            started_at: day0(),
            finished_at: None,
        };
        assert_eq!(
            w.store.claim_action(&started).await.expect("seed"),
            crate::task::action::ActionClaim::Claimed
        );
    }
    w.run().await;
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    assert!(w.log_reasons(&task).await.contains(&"action_outcome_unknown".to_owned()));
    let changes = connector.changes();
    assert_eq!(changes.len(), 1, "the tag ran again, the note did not: {changes:?}");
    assert_eq!(changes[0].1, MemberChange::AddTag("vip".into()));
}

/// Given a status change, which needs the owner's approval, when the task is created on an
/// account that lets confident tasks run alone, then it still waits for the owner; and only
/// once approved does the change reach PushPress.
#[tokio::test]
async fn a_status_change_waits_for_the_owners_approval() {
    let (mut w, connector, _) = with_connector().await;
    w.account.settings.execution_mode = ExecutionMode::LimitedAuto;
    let freeze = Action::UpdateMemberStatus {
        status: MemberStatus::Frozen,
    };
    let mut input = w.new_task("member_update", "m_freeze").await;
    input.draft = None;
    input.confidence = Some(100);
    let options = CreateOptions {
        actions: vec![freeze.clone()],
        ..CreateOptions::default()
    };
    let task = w
        .engine
        .create_task_with(&w.account, input, options)
        .await
        .expect("create")
        .task()
        .clone();
    assert_eq!(task.status, TaskStatus::PendingReview);
    let tag_only = w
        .automation("member_update", "m_tag_only", vec![tag("vip")], TaskMode::Live)
        .await
        .expect("create");
    assert_eq!(tag_only.status, TaskStatus::Ready, "a tag needs no approval");
    w.run().await;
    assert_eq!(connector.changes().len(), 1, "only the tag ran");
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    assert!(
        connector
            .changes()
            .iter()
            .any(|(_, c, _)| *c == MemberChange::Status(MemberStatus::Frozen))
    );
}

/// Given PushPress down, when an automation runs, then the task waits (the action marked
/// failed, the connector's health counted), and once PushPress answers the run finishes
/// without repeating what went through before the failure.
#[tokio::test]
async fn connector_trouble_defers_the_run_and_a_refusal_goes_to_the_owner() {
    let (w, connector, _) = with_connector().await;
    let task = w.approved_automation("m_down", vec![Action::ResearchMember, tag("vip")]).await;
    connector.set_down(true);
    w.run().await;
    let waiting = w.task(&task).await;
    assert_eq!(waiting.status, TaskStatus::Waiting);
    assert!(waiting.next_action_at.is_some_and(|at| at > w.clock.now()));
    assert!(w.log_reasons(&task).await.contains(&"connector_unavailable".to_owned()));
    let log = w.store.task_actions(w.account.id, task.id).await.expect("actions");
    assert_eq!(
        log.iter().map(|r| r.state).collect::<Vec<_>>(),
        vec![ActionState::Done, ActionState::Failed],
        "research done, the tag failed"
    );
    let health = w.store.connector_health(w.account.id, "pushpress").await.expect("health");
    assert_eq!(health.consecutive_failures, 1);

    connector.set_down(false);
    w.clock.set(w.clock.now() + SignedDuration::from_hours(1));
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    assert_eq!(connector.changes().len(), 1);
    let notes = w.notes(&task).await;
    assert_eq!(
        notes.iter().filter(|n| n.contains("research_member")).count(),
        1,
        "research ran once: {notes:?}"
    );

    // PushPress saying no is not a retry: the owner decides, with its answer.
    connector.set_refusing(true);
    let refused = w.approved_automation("m_refused", vec![tag("not-allowed")]).await;
    w.run().await;
    let after = w.task(&refused).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    let history = w.history(&refused).await;
    let failed = history.log.iter().find(|l| l.reason == "action_failed").expect("logged");
    assert!(failed.detail.as_deref().is_some_and(|d| d.contains("422")), "{failed:?}");
}

/// Given a dry-run automation, when it runs, then changes outside Openloop are recorded and
/// not made, internal actions still run, and the task completes as `recorded`.
#[tokio::test]
async fn a_dry_run_records_outside_changes_without_making_them() {
    let (w, connector, _) = with_connector().await;
    let task = w
        .automation(
            "member_update",
            "m_dry",
            vec![tag("vip"), Action::LogNote { text: "checked".into() }],
            TaskMode::DryRun,
        )
        .await
        .expect("create");
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    let done = w.task(&task).await;
    assert_eq!((done.status, done.outcome.as_deref()), (TaskStatus::Completed, Some("recorded")));
    assert_eq!(connector.calls(), 0, "PushPress never called in a dry run");
    let notes = w.notes(&task).await;
    assert!(notes.iter().any(|n| n.starts_with("[dry run] would run tag_member")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("checked")));
}

/// Given a gym where two members have stopped coming and one comes often, when a
/// bulk_tag_at_risk task runs, then exactly the two are tagged, once each, each with its own
/// key — and a second task finds nothing new to repeat for them under its own keys.
#[tokio::test]
async fn bulk_tagging_tags_each_at_risk_member_once() {
    let (w, connector, _) = with_connector().await;
    for (id, last_seen_days) in [("m_gone_1", 30), ("m_gone_2", 20), ("m_regular", 1)] {
        let member = w.member(id).await;
        let (mut facts, _) = w.store.get_member(w.account.id, &member).await.expect("read").expect("facts");
        facts.status = Some(MemberStatus::Active);
        facts.joined_at = Some(day0() - days(400));
        facts.last_checkin_at = Some(day0() - days(last_seen_days));
        facts.checkin_count = 40;
        facts.version += 1;
        w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    }
    let task = w
        .automation(
            "bulk_tag_at_risk",
            crate::owner::recurring::ACCOUNT_WIDE_MEMBER,
            vec![],
            TaskMode::Live,
        )
        .await
        .expect("create");
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    let mut tagged: Vec<String> = connector.changes().iter().map(|(m, _, _)| m.to_string()).collect();
    tagged.sort();
    assert_eq!(tagged, vec!["m_gone_1", "m_gone_2"]);
    assert!(
        connector
            .changes()
            .iter()
            .all(|(m, c, key)| *c == MemberChange::AddTag(crate::engine::AT_RISK_TAG.into())
                && *key == idempotency_key(task.id, ActionType::TagMember, m.as_str()))
    );
}

/// Bad action lists are refused at creation, with a clear code, and nothing is created.
#[tokio::test]
async fn action_lists_are_checked_when_the_task_is_made() {
    let (w, _, _) = with_connector().await;
    assert_eq!(
        code(w.automation("member_update", "m_bad", vec![], TaskMode::Live).await),
        "actions_required"
    );
    assert_eq!(
        code(w.automation("churn_risk", "m_bad", vec![tag("vip")], TaskMode::Live).await),
        "actions_not_allowed"
    );
    assert_eq!(
        code(w.automation("bulk_tag_at_risk", "m_bad", vec![note("x")], TaskMode::Live).await),
        "invalid_actions"
    );
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("list");
    assert!(tasks.is_empty());
}

/// Without a PushPress connector, actions that change PushPress cannot run: the owner is
/// told why rather than the task pretending.
#[tokio::test]
async fn without_a_connector_pushpress_actions_go_to_the_owner() {
    let w = world().await;
    let task = w.approved_automation("m_none", vec![tag("vip")]).await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Escalated);
    assert!(w.log_reasons(&task).await.contains(&"no_connector_configured".to_owned()));
}
