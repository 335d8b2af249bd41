//! Send hours from outcomes on the in-memory store, with a moved clock: below the threshold
//! the usual hours stay and the settings say how many sends are missing; once the account has
//! enough, the evening hours its members answered choose its first touches' hours — every new
//! task's first touch goes in them, except the exploration share, at the hour its seed names.

use super::*;
use crate::owner::send_hours::{MIN_SENDS_FOR_HOURS, explores};
use crate::ports::Clock;
use crate::rails::window::jitter_seed;
use crate::task::commit::TaskCommit;
use crate::task::transition::{Why, created, record, transition};
use crate::testing::sample_task_for;

impl World {
    /// `n` closed tasks whose first message left at `local_hour` (New York) a few days ago,
    /// `answered` of them answered.
    async fn sent_at_hour(&self, tag: &str, local_hour: i8, n: usize, answered: usize) {
        let now = self.clock.now();
        let tz = self.account.settings.time_zone();
        for i in 0..n {
            let created_at = now - days(3 + (i % 20) as i64);
            let member = MemberId::parse(&format!("m_{tag}_{i}")).expect("member");
            let mut task = sample_task_for(self.account.id, member, TaskStatus::Waiting, created_at);
            task.task_type = "churn_risk".into();
            self.store
                .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
                .await
                .expect("create");
            let sent_at = created_at
                .to_zoned(tz.clone())
                .date()
                .at(local_hour, 0, 0, 0)
                .to_zoned(tz.clone())
                .expect("local")
                .timestamp();
            let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
            sent.touch = 1;
            sent.execution_started_at = Some(sent_at);
            sent.budget.turns_used = u32::from(i < answered);
            self.store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
            let (status, outcome) = if i < answered {
                (TaskStatus::Completed, "retained")
            } else {
                (TaskStatus::Cancelled, "unresponsive")
            };
            let (done, log) = transition(&sent, status, sent_at + days(2), Why::new(Reason::MessageSent).outcome(outcome)).expect("close");
            self.store.commit(&TaskCommit::new(done, log)).await.expect("close");
        }
    }
}

#[tokio::test]
async fn enough_answered_evening_sends_move_the_first_touches_to_the_evening_with_some_exploration() {
    let mut w = world().await;
    w.clock.set(day0() + days(30));
    // Mornings: 40 sends, 4 answered. Not yet enough in all.
    w.sent_at_hour("am8", 8, 20, 2).await;
    w.sent_at_hour("am9", 9, 20, 2).await;
    let run = w.engine.choose_send_hours().await.expect("choose");
    assert_eq!((run.checked, run.chosen), (1, 0), "{run:?}");
    let hours = w
        .engine
        .account(w.account.id)
        .await
        .expect("account")
        .settings
        .send_hours
        .expect("checked");
    assert_eq!((hours.sends, hours.first_touch, hours.follow_up), (40, None, None));
    assert!(
        hours.why.contains(&format!(
            "40 first messages in the last 90 days of the {MIN_SENDS_FOR_HOURS} needed"
        )),
        "{}",
        hours.why
    );
    // The settings show it (never patched: the settings' patch has no such field).
    let settings = serde_json::to_value(&w.engine.account(w.account.id).await.expect("account").settings).expect("json");
    assert_eq!(settings["send_hours"]["sends"], 40);

    // Evenings, 17:00-19:00: 30 sends, 21 answered — now 70 sends, over the threshold.
    w.sent_at_hour("pm17", 17, 15, 11).await;
    w.sent_at_hour("pm18", 18, 15, 10).await;
    // Chosen once a day: within the day nothing is read again.
    let run = w.engine.choose_send_hours().await.expect("choose");
    assert_eq!(run.checked, 0);
    w.clock.set(day0() + days(31));
    let run = w.engine.choose_send_hours().await.expect("choose");
    assert_eq!((run.checked, run.chosen), (1, 1), "{run:?}");
    w.account = w.engine.account(w.account.id).await.expect("account");
    let hours = w.account.settings.send_hours.clone().expect("chosen");
    assert_eq!((hours.sends, hours.first_touch), (70, Some([17, 19])), "{}", hours.why);
    assert!(hours.why.contains("first messages go 17:00-19:00 (70% of 30"), "{}", hours.why);

    // Learned, the hours wait for the owner (the default trust level): a task planned now goes
    // at the usual morning hours. The owner takes them.
    w.clock.set(day0() + days(31) - SignedDuration::from_hours(3));
    let waiting = w.approved("churn_risk", "m_before_yes").await;
    w.run().await;
    assert!(
        (8..10).contains(&w.local(w.due(&waiting).await).hour()),
        "the usual hours until the owner says yes"
    );
    let patch: crate::engine::SettingsPatch = serde_json::from_value(serde_json::json!({"use_learned_send_hours": true})).expect("patch");
    w.engine.update_settings(w.account.id, patch).await.expect("taken");

    // New tasks: each first touch goes 17:00-19:00, or — the exploration share — at the hour of
    // the send window its seed names.
    // Approved at 06:00, before the send window opens: the run plans each first touch.
    let (start, end) = (8i8, 20i8);
    let mut approved = Vec::new();
    // (At most 50 tasks a day: the flood limit.)
    for i in 0..44 {
        approved.push(w.approved("churn_risk", &format!("m_new_{i}")).await);
    }
    w.run().await;
    assert!(w.mailer.sent().is_empty(), "nothing goes before the window opens");
    let mut explored = 0;
    for (i, task) in approved.iter().enumerate() {
        let planned = w.local(w.due(task).await);
        let hour = planned.hour();
        match explores(jitter_seed(task.id, 0), end - start) {
            Some(offset) => {
                explored += 1;
                assert_eq!(hour, start + offset, "task {i} explores hour {}", start + offset);
            }
            None => assert!((17..19).contains(&hour), "task {i}'s first touch at {planned}"),
        }
    }
    assert!(explored < 15, "a small share explores: {explored} of 44");
}
