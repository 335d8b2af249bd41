//! The monthly cross-business evaluation: a pattern surfaces only with three
//! contributing businesses of a type (two are not enough), an account that does not share its
//! learning contributes nothing, each contributor is credited, and the pattern is offered to
//! the accounts of its type only.

use super::*;
use crate::learning::suggestion::SuggestionKind;
use crate::owner::account::Account;
use crate::task::commit::TaskCommit;
use crate::task::transition::{Why, created, record, transition};
use crate::testing::sample_task_for;

const MONTH: &str = "2026-10";

async fn gym(w: &World, business_type: &str, share: bool) -> Account {
    let mut account = crate::testing::sample_account(day0());
    account.settings.profile.business_type = Some(business_type.into());
    account.settings.share_learning = share;
    // Each business its own secret, so its own pseudonym.
    account.webhook_secret = crate::owner::account::WebhookSecret::new(format!("whsec_{}", account.id));
    w.store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    account
}

/// Four evening first messages answered and four morning ones not, in October (New York).
async fn a_month_of(w: &World, account: &Account) {
    for i in 0..8 {
        let evening = i % 2 == 0;
        let created_at: Timestamp = format!("2026-10-{:02}T12:00:00Z", 5 + i).parse().expect("time");
        let member = MemberId::parse(&format!("m_net_{i}")).expect("member");
        let task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
        w.store
            .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
            .await
            .expect("create");
        let sent_at = created_at + SignedDuration::from_hours(if evening { 11 } else { 1 });
        let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
        sent.touch = 1;
        sent.execution_started_at = Some(sent_at);
        sent.budget.turns_used = u32::from(evening);
        w.store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
        let (done, log) = transition(
            &sent,
            TaskStatus::Completed,
            sent_at + days(2),
            Why::new(Reason::MessageSent).outcome("recovered"),
        )
        .expect("close");
        w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
    }
}

async fn credited(w: &World, account: &Account) -> usize {
    w.engine.account(account.id).await.expect("account").learning_patterns.len()
}

async fn offered(w: &World, account: &Account) -> usize {
    w.engine
        .list_suggestions(account.id, None)
        .await
        .expect("list")
        .iter()
        .filter(|s| s.kind == SuggestionKind::Memory && s.source == "cross_business")
        .count()
}

#[tokio::test]
async fn two_businesses_make_no_pattern_and_a_third_makes_one_credited_to_each() {
    let w = world().await;
    let a = gym(&w, "CrossFit box", true).await;
    let b = gym(&w, "CrossFit gym", true).await;
    let newcomer = gym(&w, "CrossFit affiliate", true).await;
    let yoga = gym(&w, "hot yoga studio", true).await;
    a_month_of(&w, &a).await;
    a_month_of(&w, &b).await;

    let two = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!((two.records, two.patterns, two.suggested), (16, 0, 0), "{two:?}");

    let c = gym(&w, "crossfit", true).await;
    a_month_of(&w, &c).await;
    let three = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!((three.records, three.patterns, three.credited), (24, 1, 3), "{three:?}");
    for contributor in [&a, &b, &c] {
        assert_eq!(credited(&w, contributor).await, 1, "its data helped one pattern");
        assert_eq!(offered(&w, contributor).await, 1);
    }
    assert_eq!(credited(&w, &newcomer).await, 0, "no records, no credit");
    assert_eq!(offered(&w, &newcomer).await, 1, "a business of the type benefits");
    assert_eq!(offered(&w, &yoga).await, 0, "another type sees none of it");
    let shown = &w.engine.list_suggestions(newcomer.id, None).await.expect("list")[0];
    assert_eq!(
        (
            &shown.evidence["businesses"],
            &shown.evidence["best"]["sent"],
            &shown.evidence["best"]["replied"],
            &shown.evidence["worst"]["replied"]
        ),
        (
            &serde_json::json!(3),
            &serde_json::json!(12),
            &serde_json::json!(12),
            &serde_json::json!(0)
        ),
        "{}",
        shown.evidence
    );
    let text = serde_json::to_string(&shown.evidence).expect("json") + &shown.body;
    for account in [&a, &b, &c] {
        assert!(!text.contains(&account.id.to_string()), "no account is named");
    }

    // Run again: nothing new, nobody credited twice.
    let again = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!(again.suggested, 0);
    assert_eq!(credited(&w, &a).await, 1);
}

#[tokio::test]
async fn a_business_that_does_not_share_contributes_nothing() {
    let w = world().await;
    let a = gym(&w, "CrossFit box", true).await;
    let b = gym(&w, "CrossFit gym", true).await;
    let private = gym(&w, "crossfit", true).await;
    for account in [&a, &b, &private] {
        a_month_of(&w, account).await;
    }
    // The owner turns sharing off after the month's records were written.
    let patch = crate::engine::SettingsPatch {
        share_learning: Some(false),
        ..Default::default()
    };
    w.engine.update_settings(private.id, patch).await.expect("settings");

    let report = w.engine.evaluate_network(MONTH).await.expect("monthly");
    assert_eq!((report.records, report.withheld, report.patterns), (16, 8, 0), "{report:?}");
    assert_eq!(credited(&w, &private).await, 0);
}
