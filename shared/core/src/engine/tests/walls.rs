//! Owner text that is kept has a bound (issue: nothing accepted is lost): a resolve note, a
//! suppression's reason (it becomes an owner's notice title), a profile list's entries, the
//! count of recurring templates — each refused with a 422 before anything is written.

use super::*;
use crate::engine::Resolution;
use crate::owner::recurring::NewTemplate;
use crate::task::error::EngineError;

fn code(result: Result<impl std::fmt::Debug, EngineError>) -> String {
    match result {
        Err(EngineError::Invalid(e)) => e.code,
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[tokio::test]
async fn a_resolve_note_beyond_its_bound_is_refused_and_changes_nothing() {
    let w = world().await;
    let task = w
        .engine
        .create_task(&w.account, w.new_task("churn_risk", "m_note").await)
        .await
        .expect("create");
    let id = task.task().id;
    let long = Resolution {
        outcome: "retained".into(),
        note: Some("x".repeat(crate::kernel::limits::MAX_RESOLVE_NOTE_CHARS + 1)),
    };
    assert_eq!(code(w.engine.resolve(w.account.id, id, long).await), "invalid_note");
    let unchanged = w.store.get_task(w.account.id, id).await.expect("read").expect("task");
    assert_eq!(unchanged.status, TaskStatus::PendingReview);
    let fine = Resolution {
        outcome: "retained".into(),
        note: Some("Talked at the front desk.\nShe is staying.".into()),
    };
    w.engine.resolve(w.account.id, id, fine).await.expect("a note within the bound");
}

#[tokio::test]
async fn a_suppression_reason_is_one_short_line() {
    let w = world().await;
    let email = Email::parse("sam@example.com").expect("email");
    for reason in ["moved away\r\nBcc: x@evil.example".to_owned(), "r".repeat(101)] {
        assert_eq!(code(w.engine.suppress(w.account.id, &email, &reason).await), "invalid_reason");
    }
    assert!(!w.store.is_suppressed(w.account.id, &email).await.expect("read"), "nothing written");
    w.engine.suppress(w.account.id, &email, "moved away").await.expect("a short reason");
}

#[tokio::test]
async fn a_profile_list_holds_at_most_its_entries() {
    let w = world().await;
    let mut settings = w.account.settings.clone();
    settings.profile.never_mention = (0..=crate::kernel::limits::MAX_PROFILE_LIST_ITEMS)
        .map(|i| format!("topic {i}"))
        .collect();
    let patch = super::super::SettingsPatch {
        profile: Some(settings.profile.clone()),
        ..Default::default()
    };
    assert_eq!(code(w.engine.update_settings(w.account.id, patch).await), "invalid_profile");
}

#[tokio::test]
async fn an_account_keeps_at_most_its_recurring_templates() {
    let w = world().await;
    let new = || NewTemplate {
        task_type: crate::task::task_type::RegisteredTaskType::parse("task_type", "monthly_churn_analysis").expect("type"),
        cron: None,
        goal: None,
        member_id: None,
        max_instances: None,
        notify: None,
    };
    for _ in 0..crate::kernel::limits::MAX_RECURRING_TEMPLATES {
        w.engine.create_template(&w.account, new()).await.expect("within the cap");
    }
    assert_eq!(code(w.engine.create_template(&w.account, new()).await), "too_many_templates");
    assert_eq!(
        w.engine.list_templates(w.account.id).await.expect("list").len(),
        crate::kernel::limits::MAX_RECURRING_TEMPLATES
    );
}
