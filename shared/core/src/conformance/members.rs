//! The conformance of [`MemberStore`]: member facts are versioned and listed per account,
//! suppressions are per account, and the send snapshot holds everything the gates read.
//!
//! [`MemberStore`]: crate::ports::MemberStore

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email};
use crate::members::member::{MemberFacts, SendLedger};
use crate::ports::TaskStore;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::reason::Reason;
use crate::task::transition::{Why, record};
use crate::task::{OutboundStatus, TaskStatus};
use crate::testing::sample_account;

use super::{base, member, new_task, outbound};

pub(super) async fn member_facts_are_versioned(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let m = member("m_facts");
    assert!(store.get_member(account, &m).await.expect("get").is_none());
    let mut facts = MemberFacts::new(m.clone());
    facts.first_name = Some("Sarah".into());
    facts.version = 1;
    store.save_member_facts(account, &facts).await.expect("first save");
    assert!(
        matches!(
            store.save_member_facts(account, &facts).await,
            Err(StoreError::Conflict(Conflict::MemberFacts))
        ),
        "facts: same version twice must conflict"
    );
    let (stored, ledger) = store.get_member(account, &m).await.expect("get").expect("present");
    assert_eq!(stored.first_name.as_deref(), Some("Sarah"));
    assert_eq!(ledger, SendLedger::default());
}

/// Given facts projected from two events of one second, the later accepted winning, when they
/// are saved and read back and the earlier event is applied again (its id forgotten), then the
/// later word still stands: the acceptance order is stored with the facts.
pub(super) async fn member_facts_keep_the_order_their_events_were_accepted_in(store: &dyn TaskStore) {
    use crate::members::event::{MemberEvent, MemberStatus};
    use crate::members::member::Stamp;
    let account = AccountId::generate(base());
    let m = member("m_accepted");
    let second = base();
    let accepted = base() + jiff::SignedDuration::from_secs(1);
    let created = MemberEvent::MemberCreated {
        member_id: m.clone(),
        email: Some(Email::parse("ian@example.com").expect("email")),
        first_name: Some("Ian".into()),
        last_name: None,
        status: MemberStatus::Active,
        joined_at: Some(second),
        monthly_value: None,
        phone: None,
    };
    let cancelled = MemberEvent::StatusChanged {
        member_id: m.clone(),
        status: MemberStatus::Cancelled,
        previous_status: Some(MemberStatus::Active),
        cancellation_reason: Some("Moving to Portland".into()),
    };
    let mut facts = MemberFacts::new(m.clone());
    // The ids would order them the other way round.
    assert!(facts.apply_stamped(
        &cancelled,
        Stamp::accepted(second, accepted + jiff::SignedDuration::from_nanos(1), "wh_a")
    ));
    assert!(facts.apply_stamped(&created, Stamp::accepted(second, accepted, "wh_z")));
    facts.version = 1;
    store.save_member_facts(account, &facts).await.expect("save");
    let (mut stored, _) = store.get_member(account, &m).await.expect("get").expect("present");
    assert_eq!(stored.status_stamp, facts.status_stamp, "the stamp reads back whole");
    stored.recent_events.clear();
    assert!(stored.apply_stamped(&created, Stamp::accepted(second, accepted, "wh_z")));
    assert_eq!(stored.status, Some(MemberStatus::Cancelled));
    assert_eq!(stored.cancellation_reason.as_deref(), Some("Moving to Portland"));
}

pub(super) async fn suppressions_are_per_account(store: &dyn TaskStore) {
    let (a, b) = (AccountId::generate(base()), AccountId::generate(base()));
    let email = Email::parse("stop@example.com").expect("email");
    store.put_suppression(a, &email, "owner", base()).await.expect("put");
    assert!(store.is_suppressed(a, &email).await.expect("get"));
    assert!(
        !store.is_suppressed(b, &email).await.expect("get"),
        "suppression: scoped to the account"
    );
    assert!(store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.delete_suppression(a, &email).await.expect("delete"));
    assert!(!store.is_suppressed(a, &email).await.expect("get"));
}

pub(super) async fn snapshots_hold_everything_the_gates_read(store: &dyn TaskStore) {
    let account = sample_account(base());
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    let task = new_task(store, account.id, "m_snap", TaskStatus::Ready).await;
    let email = task.member.email.clone().expect("email");
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let empty = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert_eq!(empty.account.as_ref().map(|a| a.id), Some(account.id));
    assert!(!empty.suppressed && empty.ledger == SendLedger::default() && empty.daily_sends(date) == 0);
    assert!(empty.facts.is_none(), "snapshot: no facts for an unknown member");

    let (next, log) = record(&task, base(), Why::new(Reason::SendReserved));
    let mut commit = TaskCommit::new(next, log);
    let ledger = SendLedger {
        sends: [(format!("{}#0", task.id), base())].into_iter().collect(),
        version: 1,
    };
    let yesterday = date.yesterday().expect("date");
    commit.send = Some(SendEffect::Reserve {
        outbound: outbound(&task, 0, OutboundStatus::Reserved),
        member_id: task.member.id.clone(),
        ledger: ledger.clone(),
        daily_date: yesterday,
        daily_limit: 5,
    });
    store.commit(&commit).await.expect("reserve");
    store.put_suppression(account.id, &email, "owner", base()).await.expect("suppress");
    let mut facts = crate::members::member::MemberFacts::new(task.member.id.clone());
    facts.payment_failing = true;
    facts.version = 1;
    store.save_member_facts(account.id, &facts).await.expect("facts");
    let full = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert!(full.suppressed, "snapshot: suppression");
    assert_eq!(full.ledger, ledger, "snapshot: the member's ledger");
    assert!(
        full.facts.as_ref().is_some_and(|f| f.payment_failing),
        "snapshot: the member's facts"
    );
    assert_eq!(
        (full.daily_sends(yesterday), full.daily_sends(date)),
        (1, 0),
        "snapshot: counters of the days around"
    );
    assert!(!full.system.global_pause);
}

/// The risk scan's read: every member of the account with facts, in member-id
/// order, page by page, and nobody else's.
pub(super) async fn member_facts_are_listed_per_account_in_pages(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let other = AccountId::generate(base());
    for (acct, name) in [
        (account, "m_l3"),
        (account, "m_l1"),
        (other, "m_l0"),
        (account, "m_l2"),
        (account, "m_l5"),
        (account, "m_l4"),
    ] {
        let mut facts = MemberFacts::new(member(name));
        facts.first_name = Some(name.to_uppercase());
        facts.version = 1;
        store.save_member_facts(acct, &facts).await.expect("facts");
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let (page, next) = store.list_member_facts(account, 2, cursor).await.expect("list members");
        assert!(page.len() <= 2, "members: a page holds at most its limit");
        seen.extend(page.into_iter().map(|f| (f.member_id.to_string(), f.first_name)));
        pages += 1;
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages < 10, "members: the cursor must end");
    }
    let expected: Vec<(String, Option<String>)> = ["m_l1", "m_l2", "m_l3", "m_l4", "m_l5"]
        .iter()
        .map(|m| (m.to_string(), Some(m.to_uppercase())))
        .collect();
    assert_eq!(seen, expected, "members: every one of the account's, in order, once");
    assert!(
        matches!(
            store.list_member_facts(account, 2, Some("not a cursor!".into())).await,
            Err(StoreError::InvalidCursor)
        ),
        "members: a foreign cursor is refused"
    );
}

/// A drafted touch's snapshot holds, in the same read, the owner's template of its key (none
/// for another key), the PushPress connection and the account's AI calls on the days around.
pub(super) async fn a_drafts_snapshot_holds_its_template_connection_and_ai_calls(store: &dyn TaskStore) {
    use crate::conversation::messages::OwnerTemplate;
    use crate::owner::connection::Connection;
    let account = sample_account(base());
    store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    let task = new_task(store, account.id, "m_draft_snap", TaskStatus::Waiting).await;
    let email = task.member.email.clone().expect("email");
    let date = base().to_zoned(jiff::tz::TimeZone::UTC).date();
    let key = ("churn_risk", "follow_up_1");
    let plain = store
        .send_snapshot(account.id, &task.member.id, Some(&email), date)
        .await
        .expect("snapshot");
    assert!(plain.draft.is_none(), "a snapshot reads the draft's items only when asked");
    let empty = store
        .send_snapshot_for_draft(account.id, &task.member.id, Some(&email), date, key)
        .await
        .expect("snapshot");
    let reads = empty.draft.expect("the draft's reads");
    assert_eq!(reads.key, (key.0.to_owned(), key.1.to_owned()));
    assert!(reads.template.is_none() && reads.connection.is_none());
    assert_eq!(reads.ai_calls_on(date), Some(0), "no call counted yet");
    assert_eq!(
        empty.account.as_ref().map(|a| a.id),
        Some(account.id),
        "the gates' reads are there too"
    );

    let template = OwnerTemplate {
        task_type: key.0.into(),
        touch: key.1.into(),
        subject: "Still there?".into(),
        body: "Hi {{ member.first_name }}".into(),
        variants: Vec::new(),
        updated_at: base(),
    };
    store.put_message_template(account.id, &template).await.expect("template");
    let connection = Connection {
        company_id: None,
        company_name: None,
        subscription: None,
        import: None,
        plans: [("pln_1".to_owned(), "Unlimited".to_owned())].into(),
        last_sync_at: None,
        last_error: None,
        version: 1,
    };
    store.save_connection(account.id, &connection).await.expect("connection");
    store.count_ai_call(account.id, date, 10).await.expect("count");
    store.count_ai_call(account.id, date, 10).await.expect("count");
    let tomorrow = date.tomorrow().expect("date");
    store.count_ai_call(account.id, tomorrow, 10).await.expect("count");
    let full = store
        .send_snapshot_for_draft(account.id, &task.member.id, Some(&email), date, key)
        .await
        .expect("snapshot")
        .draft
        .expect("the draft's reads");
    assert_eq!(full.template, Some(template));
    assert_eq!(
        full.connection.as_ref().map(|c| c.plans.get("pln_1").cloned()),
        Some(Some("Unlimited".to_owned()))
    );
    assert_eq!(full.ai_calls_on(date), Some(2));
    assert_eq!(full.ai_calls_on(tomorrow), Some(1), "per day");
    let other = store
        .send_snapshot_for_draft(account.id, &task.member.id, Some(&email), date, ("churn_risk", "follow_up_2"))
        .await
        .expect("snapshot")
        .draft
        .expect("the draft's reads");
    assert!(other.template.is_none(), "the template of the key asked for, no other");
    let elsewhere = store
        .send_snapshot_for_draft(AccountId::generate(base()), &task.member.id, Some(&email), date, key)
        .await
        .expect("snapshot")
        .draft
        .expect("the draft's reads");
    assert!(
        elsewhere.template.is_none() && elsewhere.connection.is_none() && elsewhere.ai_calls_on(date) == Some(0),
        "per account"
    );
}
