//! `make demo`'s month (`openloop_tests::demo`), played on the in-memory stack from the last
//! days of a month: what the demo shows an owner must be what happened.

use openloop_tests::Stack;

/// Given the demo's month started three days before a month ends (so it ends in the next), then Jordan's and Sam's
/// payments are recovered, Sarah's note is skipped, Tom opts out, Dana (texted) converts, Priya
/// forms the habit, every member task type is opened, and the scorecards of the months played count every message sent — the
/// sends of late November in November's, not a December reading "0 sent".
#[tokio::test]
async fn the_demo_month_recovers_payments_and_each_months_scorecard_counts_its_sends() {
    let stack = Stack::start("demo-month").await;
    // Three days before the end of this month (or the next, if that is past), at noon UTC.
    let now = stack.now().await;
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let mut month = today.first_of_month();
    let start = loop {
        let end = month.last_of_month();
        let start = end
            .checked_sub(jiff::ToSpan::days(3))
            .and_then(|d| d.at(12, 0, 0, 0).to_zoned(jiff::tz::TimeZone::UTC))
            .map(|z| z.timestamp())
            .unwrap_or_else(|e| panic!("{e}"));
        if start > now {
            break start;
        }
        month = end.tomorrow().unwrap_or_else(|e| panic!("{e}"));
    };
    stack.set_clock(&start.to_string()).await;
    let first = start.to_zoned(openloop_tests::new_york()).date();
    let mut lines = Vec::new();
    let played = openloop_tests::demo::play(&stack, 30, &mut |line| lines.push(line))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let said = lines.join("\n");
    assert_eq!(played.by_outcome.get("recovered"), Some(&2), "{:?}\n{said}", played.by_outcome);
    for (outcome, n) in [("skipped", 1), ("opted_out", 1), ("converted", 1), ("habit_formed", 1)] {
        assert_eq!(
            played.by_outcome.get(outcome),
            Some(&n),
            "{outcome}: {:?}\n{said}",
            played.by_outcome
        );
    }
    for task_type in [
        "payment_recovery",
        "churn_risk",
        "win_back",
        "lead_followup",
        "onboarding",
        "milestone_review",
        "ad_hoc",
        "staff_call_member",
        "member_update",
        "bulk_tag_at_risk",
        "monthly_churn_analysis",
    ] {
        assert!(
            played.by_type.contains_key(task_type),
            "no {task_type}: {:?}\n{said}",
            played.by_type
        );
    }
    assert!(played.texts >= 2, "Dana's texts: {}\n{said}", played.texts);
    let months: Vec<&str> = played.scorecards.iter().map(|(m, _)| m.as_str()).collect();
    let next = first.last_of_month().tomorrow().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(months, [first.strftime("%Y-%m").to_string(), next.strftime("%Y-%m").to_string()]);
    let counted: u64 = played
        .scorecards
        .iter()
        .map(|(_, c)| c["messages_sent"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(counted, played.sent.len() as u64, "{:?}", played.scorecards);
    let november = &played.scorecards[0].1;
    assert!(november["messages_sent"].as_u64().unwrap_or(0) >= 2, "November's sends: {november}");
    assert!(said.contains("Sam answers"), "{said}");
    assert!(said.contains("Dana texts back"), "{said}");
    // The owner's morning brief, and what the lift says, told as the owner reads them.
    assert!(said.contains(": the morning brief says do first: "), "{said}");
    assert!(said.contains("Lift, ") && said.contains("hold out some members"), "{said}");
}
