//! The action executor and automation tasks on the in-memory store,
//! with a scripted connector that must never be called: tags and notes are Openloop's own
//! member annotations, a staff to-do is an owner notice and a status change is refused
//! (PushPress has none of them). Pre-flight, idempotency keys, dry runs, bulk tagging.

use super::connector::with_connector;
use super::*;
use crate::engine::CreateOptions;
use crate::members::annotation::MemberAnnotations;
use crate::members::event::MemberStatus;
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

    /// `task`'s `action` in `slot`, claimed by a worker that died before finishing it.
    async fn died_after_claiming(&self, task: &Task, slot: &str, action: Action) -> crate::task::action::ActionClaim {
        let started = ActionRecord {
            account_id: self.account.id,
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
        self.store.claim_action(&started).await.expect("seed")
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

    async fn annotations(&self, member: &str) -> MemberAnnotations {
        let member = MemberId::parse(member).expect("member");
        self.store.member_annotations(self.account.id, &member).await.expect("annotations")
    }

    async fn tags(&self, member: &str) -> Vec<String> {
        self.annotations(member).await.tags.into_iter().collect()
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
/// order — the tag and the note kept on the member in Openloop, never sent to PushPress; the
/// log note and the research in the conversation — and the task completes as `executed`.
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
    let annotations = w.annotations("m_update").await;
    assert_eq!(annotations.tags.into_iter().collect::<Vec<_>>(), vec!["vip"]);
    assert_eq!(
        annotations.notes.iter().map(|n| (n.text.as_str(), n.task_id)).collect::<Vec<_>>(),
        vec![("Prefers mornings", Some(task.id))]
    );
    assert_eq!(connector.calls(), 0, "nothing here calls PushPress");
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
    assert_eq!(w.annotations("m_update").await.notes.len(), 1, "the note once");
}

/// Given an action an earlier run finished, when the task runs, then that action is skipped
/// (its key is taken) and only the rest run.
#[tokio::test]
async fn an_action_an_earlier_run_finished_is_not_repeated() {
    let (w, _, _) = with_connector().await;
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
    assert_eq!(w.tags("m_retry").await, vec!["spring"], "only the second tag ran");
}

/// Given a worker that died between claiming two actions and finishing them, when the task
/// runs again, then the reversible tag is simply run again, but the note (which cannot be
/// undone, and may have gone through) goes to the owner instead of being written twice.
#[tokio::test]
async fn an_unfinished_action_reruns_only_if_repeating_it_is_harmless() {
    let (w, _, _) = with_connector().await;
    let task = w
        .approved_automation("m_died", vec![tag("vip"), note("Called about the freeze")])
        .await;
    for (slot, action) in [("0", tag("vip")), ("1", note("Called about the freeze"))] {
        assert_eq!(
            w.died_after_claiming(&task, slot, action).await,
            crate::task::action::ActionClaim::Claimed
        );
    }
    w.run().await;
    let after = w.task(&task).await;
    assert_eq!(after.status, TaskStatus::Escalated);
    assert!(w.log_reasons(&task).await.contains(&"action_outcome_unknown".to_owned()));
    let annotations = w.annotations("m_died").await;
    assert_eq!(annotations.tags.len(), 1, "the tag ran again");
    assert!(annotations.notes.is_empty(), "the note did not");
}

/// Given a status change — PushPress has no call for one — when it is asked for, then it is
/// refused when the task is made, with a message that says so; and one already stored (made
/// before this was known) goes to the owner when it runs, with the same words, and never to
/// PushPress.
#[tokio::test]
async fn a_status_change_is_refused_because_pushpress_has_no_such_call() {
    let (w, connector, _) = with_connector().await;
    let refused = crate::task::action::parse_actions(&[serde_json::json!({"type": "update_member_status", "status": "frozen"})])
        .expect_err("refused");
    assert_eq!(refused.code, "unsupported_action");
    assert!(refused.message.contains("PushPress offers no call"), "{}", refused.message);

    let freeze = Action::UpdateMemberStatus {
        status: MemberStatus::Frozen,
    };
    let task = w.approved_automation("m_freeze", vec![freeze]).await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Escalated);
    let history = w.history(&task).await;
    let failed = history.log.iter().find(|l| l.reason == "action_failed").expect("logged");
    assert!(
        failed.detail.as_deref().is_some_and(|d| d.contains("PushPress offers no call")),
        "{failed:?}"
    );
    assert_eq!(connector.calls(), 0);
}

/// Given `create_pushpress_task` — PushPress has no tasks — when it runs, then the owner gets
/// the staff to-do as a notice about the member, and the task completes.
#[tokio::test]
async fn a_staff_todo_reaches_the_owner_as_a_notice() {
    let (w, connector, _) = with_connector().await;
    let todo = Action::CreatePushpressTask {
        title: "Call about the freeze".into(),
    };
    let task = w.approved_automation("m_todo", vec![todo]).await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    let (notices, _) = w.store.list_notices(w.account.id, 10, None).await.expect("notices");
    let notice = notices
        .iter()
        .find(|n| n.title == "Staff to-do: Call about the freeze")
        .expect("a staff to-do");
    assert_eq!(notice.member_id.as_ref().map(MemberId::as_str), Some("m_todo"));
    assert_eq!(connector.calls(), 0);
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
    assert!(w.tags("m_dry").await.is_empty(), "the tag recorded, not made");
    let notes = w.notes(&task).await;
    assert!(notes.iter().any(|n| n.starts_with("[dry run] would run tag_member")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("checked")));
}

/// Given a gym where two members have stopped coming and one comes often, when a
/// bulk_tag_at_risk task runs, then exactly the two are tagged, once each, each with its own
/// key — and a second task finds nothing new to repeat for them under its own keys.
#[tokio::test]
async fn bulk_tagging_tags_each_at_risk_member_once() {
    let (w, _, _) = with_connector().await;
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
    for (member, tagged) in [("m_gone_1", true), ("m_gone_2", true), ("m_regular", false)] {
        let tags = w.tags(member).await;
        assert_eq!(tags == vec![crate::engine::AT_RISK_TAG], tagged, "{member}: {tags:?}");
    }
    let log = w.store.task_actions(w.account.id, task.id).await.expect("actions");
    let mut keys: Vec<String> = log.iter().map(|r| r.key.clone()).collect();
    keys.sort();
    let mut expected: Vec<String> = ["m_gone_1", "m_gone_2"]
        .iter()
        .map(|m| idempotency_key(task.id, ActionType::TagMember, m))
        .collect();
    expected.sort();
    assert_eq!(keys, expected, "one key per member");
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

/// Without any PushPress connector, tags still work: they were never PushPress's to keep.
#[tokio::test]
async fn tags_need_no_connector() {
    let w = world().await;
    let task = w.approved_automation("m_none", vec![tag("vip")]).await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    assert_eq!(w.tags("m_none").await, vec!["vip"]);
}

/// Given a run of actions that change nothing outside Openloop (a log note, the member's
/// research), when it runs, then both are claimed with the task and finished with its close —
/// each once, done; and given a worker that died after such a claim, the run again finds the
/// claims unfinished and runs them again (repeating them is harmless), once each.
#[tokio::test]
async fn internal_actions_are_claimed_with_the_task_and_finished_with_its_close() {
    let (w, _, _) = with_connector().await;
    let actions = vec![
        Action::LogNote {
            text: "Prefers mornings".into(),
        },
        Action::ResearchMember,
    ];
    let task = w.approved_automation("m_batch", actions.clone()).await;
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    let log = w.store.task_actions(w.account.id, task.id).await.expect("actions");
    assert_eq!(log.len(), 2);
    assert!(
        log.iter().all(|r| r.state == ActionState::Done && r.finished_at.is_some()),
        "{log:?}"
    );
    let notes = w.notes(&task).await;
    assert_eq!(notes.iter().filter(|n| n.starts_with("Action executed:")).count(), 2, "{notes:?}");

    let task = w.approved_automation("m_batch_died", actions.clone()).await;
    for (slot, action) in ["0", "1"].into_iter().zip(actions) {
        w.died_after_claiming(&task, slot, action).await;
    }
    w.run().await;
    assert_eq!(w.task(&task).await.status, TaskStatus::Completed);
    let log = w.store.task_actions(w.account.id, task.id).await.expect("actions");
    assert_eq!(log.len(), 2, "the same two keys");
    assert!(log.iter().all(|r| r.state == ActionState::Done), "{log:?}");
    let notes = w.notes(&task).await;
    assert_eq!(
        notes.iter().filter(|n| n.starts_with("Action executed:")).count(),
        2,
        "run again once each: {notes:?}"
    );
}
