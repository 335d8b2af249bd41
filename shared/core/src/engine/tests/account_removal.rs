//! A gym leaves: the removal stops the account at once (paused, its token refused, nothing
//! arriving kept), then removes its items a page at a time in the background, gives up its
//! sending domain and text number, removes the account last, and says so; another gym keeps
//! everything, and the removed account is not found.

use super::*;
use crate::kernel::ids::AccountId;
use crate::owner::deliverability::DomainClaim;
use crate::owner::sms::{NumberClaim, number_key};
use crate::task::todo::TodoStatus;

const DOMAIN: &str = "mail.renegade.example";
const NUMBER: &str = "+18885550142";

impl World {
    /// The gym with a month's worth to remove: members, a task that mailed one of them and
    /// their answer, a call to make, its own sending domain and text number.
    async fn a_gym_with_a_history(&self) -> Task {
        for n in 0..5 {
            self.member(&format!("m_leave_{n}")).await;
        }
        let task = self.approved("churn_risk", "m_leave_0").await;
        self.run().await;
        let raw = self.answer_newest("m-leave-0@example.com", "leave0@mail.example.net", "See you next week");
        self.engine.receive_reply(&raw).await.expect("reply");
        let call = NewTask {
            goal: "Call them about their plan".into(),
            draft: None,
            ..self.new_task("staff_call_member", "m_leave_1").await
        };
        self.engine.create_task(&self.account, call).await.expect("call");
        let domains = self.engine.sending_domains.clone().expect("domains");
        domains.create_identity(DOMAIN).await.expect("identity");
        let claim = DomainClaim {
            domain: DOMAIN.into(),
            account: self.account.id,
            claimed_at: day0(),
            proven_at: Some(day0()),
        };
        self.store.claim_domain(&claim).await.expect("claim");
        let number = NumberClaim {
            number: number_key(NUMBER),
            account: self.account.id,
            claimed_at: day0(),
        };
        self.store.claim_number(&number).await.expect("number");
        let mut account = self.store.get_account(self.account.id).await.expect("read").expect("account");
        account.settings.sending_domain = Some(DOMAIN.into());
        account.settings.sms.origination_identity = Some(NUMBER.into());
        account.version += 1;
        self.store.save_account(&account).await.expect("settings");
        task
    }
}

#[tokio::test]
async fn a_gym_that_leaves_is_stopped_at_once_then_removed_in_the_background_and_said_so() {
    let w = world().await;
    let task = w.a_gym_with_a_history().await;
    let other = sample_account(day0());
    w.store.create_account(&other, "other-hash").await.expect("other gym");
    let theirs = MemberId::parse("m_leave_0").expect("id");
    let mut facts = crate::members::member::MemberFacts::new(theirs.clone());
    facts.email = Email::parse("elsewhere@example.com").ok();
    facts.version = 1;
    w.store.save_member_facts(other.id, &facts).await.expect("the other gym's member");
    assert_eq!(w.engine.authenticate_owner("hash").await.expect("auth"), Some(w.account.id));

    let asked = w.engine.request_account_removal(w.account.id).await.expect("asked");
    assert_eq!((asked.status, asked.items_removed), ("removing", 0));
    assert_eq!(asked.done_by, asked.requested_at + days(1));

    // At once, before any step ran: stopped.
    let marked = w.store.get_account(w.account.id).await.expect("read").expect("still there");
    assert!(marked.paused && marked.removal.is_some() && marked.settings.owner_email.is_none());
    assert_eq!(
        w.engine.authenticate_owner("hash").await.expect("auth"),
        None,
        "its token signs nothing in"
    );
    let resumed = w.engine.set_account_paused(w.account.id, false, "admin").await.expect("resume");
    assert!(resumed.paused, "a removal stays paused");
    let envelope = SignalEnvelope {
        account_id: w.account.id,
        webhook_id: "evt_late".into(),
        received_at: day0(),
        event: WebhookEvent {
            timestamp: day0(),
            event: MemberEvent::PaymentFailed {
                member_id: MemberId::parse("m_late").expect("id"),
                amount: 150.0,
                currency: "USD".into(),
                failed_at: day0(),
                reason: None,
            },
        },
    };
    let late = w.engine.apply_signal(&envelope).await.expect("dropped, not failed");
    assert!(matches!(late, crate::engine::SignalOutcome::UnknownAccount), "{late:?}");
    let late_member = MemberId::parse("m_late").expect("id");
    assert!(
        w.store.get_member(w.account.id, &late_member).await.expect("read").is_none(),
        "nothing arriving is kept"
    );
    let again = w.engine.request_account_removal(w.account.id).await.expect("asked again");
    assert_eq!(again.requested_at, asked.requested_at, "asked again, where it is");

    // In the background, a page at a time, then the account last.
    w.run().await;
    assert!(
        w.store.get_account(w.account.id).await.expect("read").is_none(),
        "the account is gone"
    );
    assert!(matches!(
        w.engine.request_account_removal(w.account.id).await,
        Err(crate::task::error::EngineError::NotFound { .. })
    ));
    assert!(w.store.get_task(w.account.id, task.id).await.expect("read").is_none());
    assert!(w.store.task_account(task.id).await.expect("route").is_none(), "its reply routes");
    let (tasks, _) = w.store.list_tasks(w.account.id, &Default::default()).await.expect("tasks");
    assert!(tasks.is_empty());
    assert!(w.store.get_member(w.account.id, &theirs).await.expect("read").is_none());
    assert!(
        w.store
            .list_todos(w.account.id, TodoStatus::Open, 10)
            .await
            .expect("todos")
            .is_empty()
    );
    assert!(
        w.store.domain_claim(DOMAIN).await.expect("claim").is_none(),
        "its sending domain is free"
    );
    let domains = w.engine.sending_domains.clone().expect("domains");
    assert!(domains.identity(DOMAIN).await.expect("identity").is_none(), "its identity is gone");
    assert!(
        w.store.number_claim(&number_key(NUMBER)).await.expect("claim").is_none(),
        "its number is free"
    );
    assert_eq!(w.engine.authenticate_owner("hash").await.expect("auth"), None);

    // The other gym keeps everything.
    assert!(w.store.get_account(other.id).await.expect("read").is_some());
    assert!(w.store.get_member(other.id, &theirs).await.expect("read").is_some());
    assert_eq!(w.engine.authenticate_owner("other-hash").await.expect("auth"), Some(other.id));
}

#[tokio::test]
async fn a_removal_step_for_an_account_gone_or_not_leaving_does_nothing() {
    let w = world().await;
    let step = crate::engine::AccountRemovalStep {
        remove_account: w.account.id,
    };
    let outcome = w.engine.account_removal_step(&step).await.expect("step");
    assert!(matches!(outcome, crate::engine::RemovalOutcome::Stale(_)), "{outcome:?}");
    assert!(
        w.store.get_account(w.account.id).await.expect("read").is_some(),
        "an account not leaving stays"
    );
    let gone = crate::engine::AccountRemovalStep {
        remove_account: AccountId::generate(day0()),
    };
    let outcome = w.engine.account_removal_step(&gone).await.expect("step");
    assert!(matches!(outcome, crate::engine::RemovalOutcome::Stale(_)), "{outcome:?}");
}
