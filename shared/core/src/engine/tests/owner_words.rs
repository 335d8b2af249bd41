//! What a new gym's owner reads on day one with no model configured: goals, notices and the
//! log in the owner's words — money as they write it, days in the gym's time zone, members by
//! name or address, task types by their label — never a code, an id or a UTC timestamp.

use super::*;
use crate::ports::Clock as _;

impl World {
    /// `event`, delivered now through the signals path (the loop tests' fixture).
    async fn owner_words_signal(&self, id: &str, event: MemberEvent) {
        self.signal(id, event).await;
    }

    async fn owner_words_tasks(&self) -> Vec<Task> {
        let (tasks, _) = self.store.list_tasks(self.account.id, &Default::default()).await.expect("list");
        tasks
    }

    async fn owner_words_notices(&self) -> Vec<crate::owner::owner_notice::OwnerNotice> {
        let (notices, _) = self.engine.owner_notices(self.account.id, None, None).await.expect("notices");
        notices
    }
}

/// No internal code in owner text: no snake_case word, no UTC timestamp, no member id.
fn assert_plain_words(text: &str) {
    let coded = text
        .split(|c: char| c.is_whitespace() || ",.;:()\"'".contains(c))
        .find(|w| w.contains('_') && !w.contains('@'));
    assert!(coded.is_none(), "a code in owner text: {coded:?} in {text:?}");
    assert!(!text.contains("T14:00:00Z") && !text.contains(":00Z"), "a UTC timestamp: {text}");
}

/// Given a $1,250 payment that failed at 09:00 New York time, then the task's goal names the
/// sum in dollars and the gym's day, its log names the task type's label and the member, and
/// the review notice says why it waits in words.
#[tokio::test]
async fn a_failed_payment_reads_in_dollars_on_the_gyms_day() {
    let w = world().await;
    let member = w.member("m_chloe").await;
    w.owner_words_signal(
        "evt_pay",
        MemberEvent::PaymentFailed {
            member_id: member,
            amount: 1250.0,
            currency: "USD".into(),
            failed_at: day0(),
            reason: Some("card_declined".into()),
        },
    )
    .await;
    let tasks = w.owner_words_tasks().await;
    let task = tasks.first().expect("a payment recovery task");
    assert_eq!(
        task.goal,
        "Recover the failed payment of $1,250.00 from Nov 2 without embarrassing the member"
    );
    let history = w.store.task_history(w.account.id, task.id).await.expect("history").expect("task");
    let opened = history.log.first().and_then(|e| e.detail.clone()).unwrap_or_default();
    assert!(opened.starts_with("Payment Recovery for Sam"), "{opened}");
    assert_plain_words(&opened);

    let notices = w.owner_words_notices().await;
    let review = notices
        .iter()
        .find(|n| n.title.contains("awaits your approval"))
        .unwrap_or_else(|| panic!("a review notice: {notices:?}"));
    assert!(review.title.contains("Payment Recovery awaits your approval"), "{}", review.title);
    assert!(review.detail.contains("Why it waits for you: "), "{}", review.detail);
    assert_plain_words(&review.title);
    // The draft's subject is the test agent's own words; the rest is the notice's.
    for line in review.detail.lines().filter(|l| !l.starts_with("Draft:")) {
        assert_plain_words(line);
    }
}

/// Given a member whose member event names them with blanks, then they have no name (the
/// mail greets "Hi there"), owner text knows them by their address, and their stop notice says
/// why in words.
#[tokio::test]
async fn a_member_without_a_name_is_known_by_their_address() {
    let w = world().await;
    let member = MemberId::parse("m_blank").expect("id");
    let email = Email::parse("blank@example.com").expect("email");
    w.owner_words_signal(
        "evt_blank",
        MemberEvent::MemberCreated {
            member_id: member.clone(),
            email: Some(email.clone()),
            first_name: Some("".into()),
            last_name: Some("  ".into()),
            status: crate::members::event::MemberStatus::Active,
            joined_at: Some(day0() - days(400)),
            monthly_value: Some(80.0),
            phone: None,
        },
    )
    .await;
    let (facts, _) = w.store.get_member(w.account.id, &member).await.expect("facts").expect("member");
    assert_eq!((facts.first_name.as_deref(), facts.display_name()), (None, None));
    assert_eq!(facts.first_name_or_address(), "blank@example.com");

    let input = NewTask {
        task_type: "churn_risk".into(),
        member_id: member.clone(),
        goal: "Goal".into(),
        confidence: Some(80),
        draft: None,
        trigger_type: TriggerType::Manual,
        trigger_event_id: None,
        gate: GateContext::default(),
        context: serde_json::Value::Null,
    };
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(task.member.name, None);
    assert_eq!(task.member.label(), "blank@example.com");
    let history = w.store.task_history(w.account.id, task.id).await.expect("history").expect("task");
    let opened = history.log.first().and_then(|e| e.detail.clone()).unwrap_or_default();
    assert!(opened.starts_with("At-Risk Member for blank@example.com"), "{opened}");

    w.engine.suppress(w.account.id, &email, "member_request").await.expect("suppress");
    let notices = w.owner_words_notices().await;
    let stop = notices
        .iter()
        .find(|n| n.title.contains("no more mail"))
        .unwrap_or_else(|| panic!("a stop notice: {notices:?}"));
    assert_eq!(stop.title, "blank@example.com will get no more mail: they asked to stop");
    assert!(!stop.title.contains("m_blank") && !stop.detail.contains("m_blank"), "{stop:?}");
    assert_plain_words(&stop.detail);
}

/// Given ten check-ins that arrive weeks late (an import, a replay), then no milestone is
/// congratulated: the member may have stopped coming since. The same tenth check-in arriving
/// as it happens opens one.
#[tokio::test]
async fn a_late_tenth_checkin_congratulates_nobody() {
    let w = world().await;
    let milestones = |tasks: Vec<Task>| tasks.into_iter().filter(|t| t.task_type == "milestone_review").count();
    let late = w.member("m_late").await;
    for i in 0..10 {
        w.owner_words_signal(
            &format!("evt_late_{i}"),
            MemberEvent::CheckinCreated {
                member_id: late.clone(),
                checked_in_at: day0() - days(60) + days(i),
                class_name: None,
            },
        )
        .await;
    }
    assert_eq!(milestones(w.owner_words_tasks().await), 0, "a tenth check-in of seven weeks ago");

    let current = w.member("m_current").await;
    for i in 0..10 {
        w.owner_words_signal(
            &format!("evt_now_{i}"),
            MemberEvent::CheckinCreated {
                member_id: current.clone(),
                checked_in_at: day0() - days(9) + days(i),
                class_name: None,
            },
        )
        .await;
    }
    assert_eq!(milestones(w.owner_words_tasks().await), 1, "the tenth check-in, today");
}

/// Given a member who already got today's message, then the log says so in words and in the
/// gym's time: no "message(s)", no UTC timestamp.
#[tokio::test]
async fn the_log_says_sends_and_limits_in_words() {
    let w = world().await;
    let first = w.approved("churn_risk", "m_busy").await;
    w.run().await;
    let second = w.approved("win_back", "m_busy").await;
    w.run().await;
    let history = w.store.task_history(w.account.id, first.id).await.expect("history").expect("task");
    let sent = history
        .log
        .iter()
        .find(|e| e.reason == "message_sent")
        .and_then(|e| e.detail.clone())
        .unwrap_or_else(|| panic!("sent: {:?}", history.log));
    assert!(sent.starts_with("message 1 sent to m-busy@example.com"), "{sent}");
    assert!(sent.contains("follow-up planned for ") && !sent.contains('Z'), "{sent}");
    let held = w.store.task_history(w.account.id, second.id).await.expect("history").expect("task");
    let limit = held
        .log
        .iter()
        .find(|e| e.reason == "member_daily_limit")
        .and_then(|e| e.detail.clone())
        .unwrap_or_else(|| panic!("held: {:?}", held.log));
    assert_eq!(limit, "the member already got 1 message today (at most 1 a day); it goes tomorrow");
}

/// The owner's escalation notice of `task`.
async fn escalation_notice(
    w: &World,
    task: &Task,
    kind: crate::owner::owner_notice::NoticeKind,
) -> crate::owner::owner_notice::OwnerNotice {
    let (notices, _) = w.store.list_notices(w.account.id, 50, None).await.expect("notices");
    notices
        .into_iter()
        .find(|n| n.task_id == Some(task.id) && n.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} notice for {}", task.id))
}

async fn run_until_escalated(w: &World, task: &Task) {
    for _ in 0..10 {
        w.run_when_due(task).await;
        if w.task(task).await.status == TaskStatus::Escalated {
            return;
        }
    }
    panic!("{} never escalated", task.id);
}

/// Given a payment task whose messages all went out before it escalated, then the owner's
/// mail quotes its first message as sent (and says how many went); given one whose mail was
/// refused, the draft as not sent — never "the agent's last draft" for a message the member got.
#[tokio::test]
async fn an_escalation_names_a_sent_message_as_sent_and_an_unsent_draft_as_a_draft() {
    use crate::owner::owner_notice::NoticeKind;
    let w = world().await;
    let spent = w.approved("payment_recovery", "m_spent").await;
    run_until_escalated(&w, &spent).await;
    let touch = w.task(&spent).await.touch;
    assert!(touch >= 2, "both payment notes went out: {touch}");
    let notice = escalation_notice(&w, &spent, NoticeKind::Escalation).await;
    assert!(
        notice
            .detail
            .contains(&format!("The first of the {touch} messages sent to Sam:\n> First")),
        "{}",
        notice.detail
    );
    assert!(
        !notice.detail.contains("last draft") && !notice.detail.contains("not sent"),
        "{}",
        notice.detail
    );

    w.mailer.set_mode(MailerMode::Reject);
    let refused = w.approved("churn_risk", "m_refused").await;
    run_until_escalated(&w, &refused).await;
    let notice = escalation_notice(&w, &refused, NoticeKind::Escalation).await;
    assert!(
        notice.detail.contains("The agent's draft (not sent):\n> First"),
        "{}",
        notice.detail
    );
    assert!(!notice.detail.contains("sent to"), "{}", notice.detail);
}

/// Given an escalation nobody answers for two days, then the reminder names the member and the
/// task type, says why in words and when it will be cancelled in the gym's time — no id, code
/// or UTC time.
#[tokio::test]
async fn an_escalation_reminder_reads_in_words_and_the_gyms_time() {
    use crate::owner::owner_notice::NoticeKind;
    let w = world().await;
    w.mailer.set_mode(MailerMode::Reject);
    let task = w.approved("churn_risk", "m_waits").await;
    run_until_escalated(&w, &task).await;
    w.clock.advance(crate::kernel::limits::ESCALATION_REMINDER_AFTER);
    w.run().await;
    let reminder = escalation_notice(&w, &task, NoticeKind::EscalationReminder).await;
    assert_eq!(reminder.title, "Sam still needs you (At-Risk Member)");
    assert!(
        reminder
            .detail
            .starts_with("It has waited for you for 48 hours: the message could not be sent"),
        "{}",
        reminder.detail
    );
    let timeout = w.local(w.task(&task).await.next_action_at.expect("the timeout"));
    assert!(
        reminder
            .detail
            .contains(&timeout.strftime("cancelled on %a, %b %-d at %H:%M").to_string()),
        "{}",
        reminder.detail
    );
    assert_plain_words(&reminder.title);
    assert_plain_words(&reminder.detail);
    assert!(
        !reminder.detail.contains("m_waits") && !reminder.detail.contains('Z'),
        "{}",
        reminder.detail
    );
}

/// Given a manual-mode account's new task and a sent message, then every entry of the activity
/// feed as the API gives it reads its reason as a sentence and its detail in the gym's time —
/// the codes and UTC instants stay only in the fields for programs.
#[tokio::test]
async fn the_activity_feed_reads_in_sentences_and_the_gyms_time() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_feed").await;
    w.run().await;
    let pending = w
        .engine
        .create_task(&w.account, w.new_task("win_back", "m_other").await)
        .await
        .expect("create");
    let (entries, _) = w.engine.activity(w.account.id, Some(50), None).await.expect("activity");
    let tz = w.account.settings.time_zone();
    let views: Vec<_> = entries.iter().map(|e| crate::contract::ActivityView::for_owner(e, &tz)).collect();
    assert!(
        views.iter().any(|v| v.task_id == task.id.to_string()),
        "the sent task is in the feed"
    );
    assert!(
        views.iter().any(|v| v.task_id == pending.task().id.to_string()),
        "the new task is in the feed"
    );
    for view in &views {
        assert_plain_words(&view.reason_text);
        assert!(!view.reason_text.contains(view.reason), "{} reads as its code", view.reason);
        if let Some(detail) = &view.detail_text {
            assert!(!detail.contains(":00Z") && !detail.contains("T1"), "a UTC instant: {detail}");
        }
    }
    let manual = views
        .iter()
        .find(|v| v.reason == "manual_mode_requires_review")
        .unwrap_or_else(|| panic!("the review entry: {views:?}"));
    assert_eq!(
        manual.reason_text,
        "Your account is in manual mode, so every first message waits for your approval"
    );
    let sent = views.iter().find(|v| v.reason == "message_sent").expect("the send");
    assert_eq!(sent.reason_text, "The message was sent");
    let raw = sent.detail.unwrap_or_default();
    let shown = sent.detail_text.clone().unwrap_or_default();
    if raw.contains('Z') {
        assert_ne!(raw, shown, "the instants are the gym's");
    }

    // The task's own log (`GET /api/v1/tasks/{id}`) reads the same.
    let history = w.engine.task(w.account.id, task.id).await.expect("the task");
    let detail = crate::contract::TaskDetailView::for_owner(&history, &tz);
    assert_eq!(detail.log.len(), history.log.len());
    for entry in &detail.log {
        assert_plain_words(&entry.reason_text);
        assert!(!entry.reason_text.contains(entry.reason), "{} reads as its code", entry.reason);
    }
    let sent_in_log = detail
        .log
        .iter()
        .find(|l| l.reason == "message_sent")
        .expect("the send in the task's log");
    assert_eq!(sent_in_log.reason_text, "The message was sent");
    assert_eq!(sent_in_log.detail_text, sent.detail_text);
}

/// Given a payment task that sends its first note and then sees the payment go through, then
/// every entry of its log reads, as the owner is shown it, in words and the gym's time: the
/// step says which message ("message 1", no cadence tone), the met loop what happened ("the
/// payment went through", no event id).
#[tokio::test]
async fn a_payment_tasks_log_reads_in_words_from_first_note_to_payment() {
    let w = world().await;
    let task = w.approved("payment_recovery", "m_pays").await;
    w.run().await;
    let member = w.member("m_pays").await;
    w.owner_words_signal(
        "evt_paid",
        MemberEvent::PaymentSucceeded {
            member_id: member,
            amount: 150.0,
            currency: "USD".into(),
            paid_at: w.clock.now(),
        },
    )
    .await;
    w.run().await;
    let history = w.store.task_history(w.account.id, task.id).await.expect("history").expect("task");
    let tz = w.account.settings.time_zone();
    let shown: Vec<(String, String)> = history
        .log
        .iter()
        .map(|e| {
            (
                crate::task::reason_words::sentence(&e.reason),
                crate::task::reason_words::detail(e.detail.as_deref().unwrap_or_default(), &tz),
            )
        })
        .collect();
    for (reason, detail) in &shown {
        assert_plain_words(reason);
        assert_plain_words(detail);
        assert!(!detail.contains("tone") && !detail.contains("touch "), "{detail}");
    }
    assert!(shown.iter().any(|(_, d)| d == "Message 1."), "{shown:?}");
    assert!(
        shown
            .iter()
            .any(|(r, d)| r == "What it waited for happened" && d == "The payment went through."),
        "{shown:?}"
    );
    assert_eq!(w.task(&task).await.outcome.as_deref(), Some("recovered"), "{shown:?}");
}

/// Given a member's question the agent hands to the owner with a reading that only repeats
/// it, then the escalation mail says what happened once and quotes the member once.
#[test]
fn an_escalation_mail_quotes_the_members_question_once() {
    let mut task = crate::testing::sample_task(TaskStatus::Escalated);
    let words = "Do you have a class on Sunday mornings?";
    task.outcome_reason = Some("member_question_needs_owner".into());
    task.escalation = Some(crate::task::EscalationContext {
        blocked_at: day0(),
        blocked_by: "member".into(),
        reason: "member_question_needs_owner".into(),
        summary: format!(
            "The member asked something only you can answer. The agent's reading: The member asked something I cannot answer from what I know: \"{words}\"."
        ),
        member_words: Some(words.into()),
        last_draft: None,
        last_draft_sent: None,
        suggested_next_step: "Answer the member's question as guidance; the agent writes it to them.".into(),
        question: Some(words.into()),
        draft_reply: None,
        suggested_actions: Vec::new(),
        conversation_snapshot: Vec::new(),
        resume_instructions: String::new(),
    });
    let (_, text) = crate::task::escalation::notice(&task);
    assert_eq!(text.matches(words).count(), 1, "{text}");
    assert!(text.starts_with("The member asked something only you can answer.\n\n"), "{text}");
    assert_eq!(text.matches("asked something").count(), 1, "{text}");
}
