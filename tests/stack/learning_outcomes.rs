//! Learning from outcomes and the lift across gyms, through CONTRACT.md: a month in which
//! members whose first subject line asked a question came back far more often becomes a
//! suggestion whose evidence names the pattern; and when the month turns, three gyms of one
//! type that share their learning give `GET /api/v1/lift` and `/app/lift` a figure "across 3
//! gyms like yours", with the gym that does not share left out. (History is seeded in the
//! store: a month of closed tasks cannot be lived here.)

use jiff::{SignedDuration, Timestamp};
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::task::TaskStatus;
use openloop_core::task::commit::TaskCommit;
use openloop_core::task::holdout::{Arm, Holdout};
use openloop_core::task::reason::Reason;
use openloop_core::task::transition::{Why, created, record, transition};
use openloop_tests::{Account, Stack};
use reqwest::Method;
use serde_json::json;

/// A closed churn task of `account` created at `at`: contacted (its first message's subject
/// `subject`) or held out, and the member back or not.
async fn closed(stack: &Stack, account: AccountId, id: &str, at: Timestamp, subject: Option<&str>, arm: Option<Arm>, back: bool) {
    let store = stack.running.store.clone();
    let member = MemberId::parse(id).expect("member");
    let mut task = openloop_core::testing::sample_task_for(account, member, TaskStatus::Waiting, at);
    task.task_type = "churn_risk".into();
    task.member.name = Some("Dana Reyes".into());
    task.holdout = arm.map(|arm| Holdout {
        arm,
        bucket: if arm == Arm::HeldOut { 7 } else { 7_000 },
        generation: 0,
    });
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let mut current = task.clone();
    if let Some(subject) = subject {
        let sent_at = at + SignedDuration::from_hours(1);
        let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
        sent.touch = 1;
        sent.execution_started_at = Some(sent_at);
        sent.thread_subject = Some(subject.into());
        sent.message_template = Some("default".into());
        store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
        current = sent;
    }
    let (to, reason, outcome) = if back {
        (TaskStatus::Completed, Reason::GoalSignalCheckin, "retained")
    } else {
        (TaskStatus::Cancelled, Reason::MessageBudgetExhausted, "unresponsive")
    };
    let (done, log) = transition(&current, to, at + SignedDuration::from_hours(72), Why::new(reason).outcome(outcome)).expect("close");
    store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

/// Given a month in which 10 of 12 members whose subject asked a question came back and 2 of
/// 12 with a plain one did (replies alike), when a task's close fires the evaluation, then the
/// owner is offered one suggestion whose evidence names the subject style and its numbers.
#[tokio::test]
async fn an_outcome_pattern_becomes_a_suggestion_whose_evidence_names_it() {
    let stack = Stack::start("learning-outcomes").await;
    let day0 = crate::morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let account: AccountId = gym.id.parse().expect("account id");
    for i in 0..12 {
        let at = day0 - SignedDuration::from_hours(24 * (2 + i as i64));
        closed(
            &stack,
            account,
            &format!("m_q_{i}"),
            at,
            Some("Coming back this week?"),
            None,
            i < 10,
        )
        .await;
        closed(&stack, account, &format!("m_p_{i}"), at, Some("A note from the gym"), None, i < 2).await;
    }
    stack.member(&gym, "m_sam", "Sam", day0).await;
    let (status, task) = stack
        .post(
            "/api/v1/tasks",
            &gym.token,
            json!({"task_type": "win_back", "member_id": "m_sam", "goal": "Win Sam back", "confidence": 80}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap_or_default();
    let (status, _) = stack.post(&format!("/api/v1/tasks/{id}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let ran = stack.run().await;
    assert_eq!(ran["evaluation"]["suggested"], 1, "{ran}");
    let (_, listed) = stack.get("/api/v1/suggestions", &gym.token).await;
    let found = &listed["suggestions"][0];
    let e = &found["evidence"];
    assert_eq!(
        (&e["measure"], &e["pattern"]),
        (&json!("outcome"), &json!("subject_style")),
        "{found}"
    );
    assert_eq!((&e["question"]["succeeded"], &e["question"]["sent"]), (&json!(10), &json!(12)));
    assert_eq!((&e["plain"]["succeeded"], &e["plain"]["sent"]), (&json!(2), &json!(12)));
    assert!(e["ci95"][0].as_f64().is_some_and(|low| low > 0.0), "{e}");
    assert_eq!(found["kind"], "prompt");
}

async fn crossfit_gym(stack: &Stack, share: bool) -> Account {
    let gym = stack.create_account("manual").await;
    let (status, body) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"profile": {"business_type": "CrossFit box"}, "share_learning": share, "holdout_percent": 10})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    gym
}

/// Given four CrossFit gyms, three sharing their learning, each with a month of churn tasks
/// (ten contacted, six back; five held out, one back), when the month turns, then each gym's
/// lift shows beside its own numbers the lift across the 3 sharing gyms — the fourth left
/// out — and a gym of the type with no tasks of its own sees the figure too.
#[tokio::test]
async fn three_sharing_gyms_give_each_a_pooled_lift_beside_its_own_and_a_gym_that_does_not_share_is_left_out() {
    let stack = Stack::start("learning-pooled-lift").await;
    let first_of = |t: Timestamp, months: i64| {
        t.to_zoned(jiff::tz::TimeZone::UTC)
            .date()
            .first_of_month()
            .checked_add(jiff::Span::new().months(months))
            .expect("date")
            .to_zoned(jiff::tz::TimeZone::UTC)
            .expect("utc")
            .timestamp()
    };
    let day0 = first_of(crate::morning(1), 1) + SignedDuration::from_hours(24 * 20 + 13);
    stack.set_clock(&day0.to_string()).await;
    let sharing = [
        crossfit_gym(&stack, true).await,
        crossfit_gym(&stack, true).await,
        crossfit_gym(&stack, true).await,
    ];
    let private = crossfit_gym(&stack, false).await;
    let newcomer = crossfit_gym(&stack, true).await;
    for gym in sharing.iter().chain([&private]) {
        let account: AccountId = gym.id.parse().expect("account id");
        for i in 0..15 {
            let at = day0 - SignedDuration::from_hours(24 * (4 + i as i64));
            let (arm, back) = if i < 10 { (Arm::Contacted, i < 6) } else { (Arm::HeldOut, i == 10) };
            let subject = (arm == Arm::Contacted).then_some("A note from the gym");
            closed(&stack, account, &format!("m_pool_{i}"), at, subject, Some(arm), back).await;
        }
    }
    let next_month = first_of(day0, 1) + SignedDuration::from_hours(4);
    stack.set_clock(&next_month.to_string()).await;
    let ran = stack.run().await;
    assert_eq!(ran["monthly_evaluation"]["pooled_lifts"], 1, "{ran}");

    let (status, lift) = stack.get("/api/v1/lift", &sharing[0].token).await;
    assert_eq!(status, 200, "{lift}");
    let churn = lift["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["task_type"] == "churn_risk"))
        .cloned()
        .unwrap_or_else(|| panic!("churn risk: {lift}"));
    assert_eq!(
        (&churn["contacted"]["n"], &churn["held_out"]["n"]),
        (&json!(10), &json!(5)),
        "its own"
    );
    let pooled = &churn["pooled"];
    assert_eq!(pooled["gyms"], 3, "the gym that does not share is left out: {pooled}");
    assert_eq!((&pooled["contacted"]["n"], &pooled["held_out"]["n"]), (&json!(30), &json!(15)));
    assert_eq!(pooled["difference"], 0.4);
    let summary = pooled["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("across 3 gyms like yours, outreach of this type adds 40.0 points (95% interval "),
        "{summary}"
    );

    let (_, theirs) = stack.get("/api/v1/lift?task_type=churn_risk", &newcomer.token).await;
    assert_eq!(
        (&theirs["groups"][0]["contacted"]["n"], &theirs["groups"][0]["pooled"]["gyms"]),
        (&json!(0), &json!(3)),
        "{theirs}"
    );
    let owner = crate::dashboard::sign_in(&stack, &newcomer).await;
    let (status, page) = owner.get("/app/lift").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("Across 3 gyms like yours, outreach of this type adds 40.0 points"),
        "{page}"
    );
}
