//! People's data: a member's export holds what they wrote; their erasure leaves nothing that
//! names them, keeps the owner's numbers, answers `not found` the second time, and keeps them
//! out of later member events and tasks.

use super::*;
use crate::kernel::ids::AccountId;
use crate::members::membership::CustomerFacts;
use crate::task::todo::TodoStatus;

impl World {
    /// Sam Gone, with a task that mailed them, their answer, and a call to make about them.
    async fn a_member_with_a_month_of_history(&self) -> (MemberId, Task) {
        let member = self.member("m_gone").await;
        let (mut facts, _) = self
            .store
            .get_member(self.account.id, &member)
            .await
            .expect("read")
            .expect("member");
        facts.last_name = Some("Gonzalez".into());
        facts.phone = Some("+15555550199".into());
        facts.version += 1;
        self.store.save_member_facts(self.account.id, &facts).await.expect("facts");
        let task = self.approved("churn_risk", "m_gone").await;
        self.run().await;
        let raw = self.answer_newest(
            "m-gone@example.com",
            "gone1@mail.example.net",
            "Work has been brutal, I miss the 6am class",
        );
        self.engine.receive_reply(&raw).await.expect("reply");
        self.run().await;
        let call = NewTask {
            goal: "Call Sam Gonzalez about the 6am class".into(),
            draft: None,
            ..self.new_task("staff_call_member", "m_gone").await
        };
        self.engine.create_task(&self.account, call).await.expect("call");
        (member, task)
    }

    fn customer_event(member: &str, email: &str) -> MemberEvent {
        MemberEvent::Customer {
            member_id: MemberId::parse(member).expect("id"),
            customer: CustomerFacts {
                email: Email::parse(email).ok(),
                first_name: Some("Sam".into()),
                last_name: Some("Gonzalez".into()),
                role: None,
                member_since: None,
                phone: None,
                state: None,
            },
        }
    }
}

#[tokio::test]
async fn an_export_holds_the_member_their_words_and_their_to_dos() {
    let w = world().await;
    let (member, task) = w.a_member_with_a_month_of_history().await;
    let export = w.engine.export_member(w.account.id, &member).await.expect("export");
    let text = serde_json::to_string(&export).expect("json");
    assert!(
        text.contains("m-gone@example.com") && text.contains("+15555550199"),
        "their address and phone"
    );
    assert!(text.contains("I miss the 6am class"), "what they wrote");
    assert!(
        export.tasks.iter().any(|t| t.task.id == task.id && !t.outbound.is_empty()),
        "what was sent to them"
    );
    assert!(
        export.todos.iter().any(|t| t.what.contains("6am class")),
        "the call about them: {:?}",
        export.todos
    );
    let other = AccountId::generate(day0());
    assert!(matches!(
        w.engine.export_member(other, &member).await,
        Err(crate::task::error::EngineError::NotFound { .. })
    ));
}

#[tokio::test]
async fn an_erased_member_is_named_nowhere_their_numbers_stay_and_they_stay_out() {
    let w = world().await;
    let (member, task) = w.a_member_with_a_month_of_history().await;
    let since = day0() - days(30);
    let tallies_before = w.store.tallies(w.account.id, since).await.expect("tallies").len();
    assert_eq!(tallies_before, 2);

    w.engine.erase_member(w.account.id, &member).await.expect("erase");

    assert!(w.store.get_member(w.account.id, &member).await.expect("read").is_none());
    assert!(w.store.get_task(w.account.id, task.id).await.expect("read").is_none());
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("tasks");
    assert!(tasks.is_empty(), "their tasks are gone: {tasks:?}");
    for status in TodoStatus::ALL {
        assert!(w.engine.todos(w.account.id, status).await.expect("todos").is_empty());
    }
    let (activity, _) = w.store.activity(w.account.id, 100, None).await.expect("activity");
    assert!(activity.is_empty(), "no decision names them");
    let (notices, _) = w.store.list_notices(w.account.id, 100, None).await.expect("notices");
    assert!(
        notices
            .iter()
            .all(|n| !n.title.contains("Sam") && n.member_id.as_ref() != Some(&member))
    );
    let tallies = w.store.tallies(w.account.id, since).await.expect("tallies");
    assert_eq!(tallies.len(), tallies_before, "the owner's numbers still count their tasks");
    assert!(tallies.iter().all(|t| !t.is_open()), "their open tasks were cancelled first");

    let again = w.engine.erase_member(w.account.id, &member).await;
    assert!(matches!(again, Err(crate::task::error::EngineError::NotFound { .. })), "{again:?}");

    // The same person again, by id or by address: nothing kept, nothing opened.
    w.signal("evt_back", World::customer_event("m_gone", "m-gone@example.com")).await;
    w.signal("evt_new_id", World::customer_event("m_again", "M-Gone@example.com")).await;
    assert!(w.store.get_member(w.account.id, &member).await.expect("read").is_none());
    let again = MemberId::parse("m_again").expect("id");
    assert!(w.store.get_member(w.account.id, &again).await.expect("read").is_none());
    // What follows under that new id alone (a payment names no address) is not kept either.
    let payment = MemberEvent::PaymentFailed {
        member_id: again.clone(),
        amount: 150.0,
        currency: "USD".into(),
        failed_at: day0(),
        reason: None,
    };
    w.signal("evt_new_id_pay", payment).await;
    assert!(w.store.get_member(w.account.id, &again).await.expect("read").is_none());
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("tasks");
    assert!(tasks.is_empty(), "nothing opened for them: {tasks:?}");
    let input = NewTask {
        member_id: member.clone(),
        ..w.new_task("churn_risk", "m_someone").await
    };
    let refused = w.engine.create_task(&w.account, input).await;
    assert!(
        matches!(refused, Err(crate::task::error::EngineError::MemberSuppressed { .. })),
        "{refused:?}"
    );
    let mails = w.mailer.sent().len();
    w.clock.set(day0() + days(10));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), mails, "nothing more reaches them");
}

#[tokio::test]
async fn a_step_that_read_the_task_before_the_erasure_commits_nothing() {
    let w = world().await;
    let (member, task) = w.a_member_with_a_month_of_history().await;
    let read_by_the_step = w.task(&task).await;
    w.engine.erase_member(w.account.id, &member).await.expect("erase");
    let (next, log) = crate::task::transition::transition(
        &read_by_the_step,
        TaskStatus::Cancelled,
        day0(),
        crate::task::transition::Why::new(crate::task::reason::Reason::MemberOptedOut),
    )
    .expect("a move");
    let late = w.store.commit(&crate::task::commit::TaskCommit::new(next, log)).await;
    assert!(late.is_err(), "the step's commit over the erased task is refused");
    assert!(w.store.get_task(w.account.id, task.id).await.expect("read").is_none());
}
