//! The owner away: nothing found is dropped in silence. A
//! review item gets a last call a day before it expires; at expiry `on_review_expiry` decides,
//! and a lead or a payment always reaches the call list; an escalation left unanswered puts its
//! member on the list before it closes; the risk scan never counts an expired, unsent task as
//! handling its member.

use super::*;
use crate::engine::InboundOutcome;
use crate::engine::LinkState;
use crate::members::member::MemberFacts;
use crate::owner::owner_notice::NoticeKind;
use crate::owner::quiet::OnReviewExpiry;
use crate::ports::Clock;
use crate::task::todo::{Todo, TodoStatus};

async fn expiring(w: &World, setting: OnReviewExpiry) {
    let patch = crate::engine::SettingsPatch {
        on_review_expiry: Some(setting),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
}

/// A new task of `task_type` for `member` that waits in the review queue.
async fn awaiting_review(w: &World, task_type: &str, member: &str) -> Task {
    let input = w.new_task(task_type, member).await;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(task.status, TaskStatus::PendingReview);
    task
}

/// The account's review items decided at the clock's now.
async fn expire(w: &World) -> usize {
    let account = w.engine.account(w.account.id).await.expect("account");
    w.engine.expire_reviews(&account, w.clock.now()).await.expect("expire")
}

async fn open_todos(w: &World) -> Vec<Todo> {
    w.engine.todos(w.account.id, TodoStatus::Open).await.expect("todos")
}

fn to_members(w: &World) -> usize {
    w.mailer.sent().len()
}

/// Given a review item nobody decides, then a day before it expires the owner gets one last
/// call naming the member; at expiry (`call_list`, the default) the member is on the to-do list
/// and the task is closed as `review_expired` with that to-do's id, nothing sent.
#[tokio::test]
async fn an_undecided_review_item_gets_a_last_call_then_lands_on_the_call_list() {
    let w = world().await;
    let task = awaiting_review(&w, "churn_risk", "m_quiet").await;

    w.clock.set(day0() + days(6) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 0);
    expire(&w).await;
    let notices = w.engine.owner_notices(w.account.id, None, None).await.expect("feed").0;
    let last_calls: Vec<_> = notices.iter().filter(|n| n.title.starts_with("Last call")).collect();
    assert_eq!(last_calls.len(), 1, "one last call, however often the run comes");
    assert_eq!(last_calls[0].kind, NoticeKind::ApprovalNeeded);
    assert!(last_calls[0].title.contains("Sam"), "{}", last_calls[0].title);
    assert!(last_calls[0].detail.contains("goes on your call list"), "{}", last_calls[0].detail);
    assert_eq!(w.task(&task).await.status, TaskStatus::PendingReview);

    w.clock.set(day0() + days(7) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 1);
    let closed = w.task(&task).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref()),
        (TaskStatus::Cancelled, Some("review_expired"))
    );
    let todos = open_todos(&w).await;
    assert_eq!(todos.len(), 1, "{todos:?}");
    assert_eq!(closed.todo_id, Some(todos[0].id));
    assert_eq!(todos[0].member.id, task.member.id);
    assert!(todos[0].what.starts_with("Write to Sam"), "no phone on file: {}", todos[0].what);
    assert!(
        todos[0].what.contains("a drafted message waited 7 days for your review"),
        "what happened, not the type's label: {}",
        todos[0].what
    );
    let view = serde_json::to_value(crate::contract::TaskView::from(&closed)).expect("view");
    assert_eq!(view["todo_id"], serde_json::json!(todos[0].id.to_string()));
    assert_eq!(to_members(&w), 0, "nothing sent");
}

/// Given the owner rewrote a task's first message, its follow-up is held for their review;
/// undecided, it waits its own seven days from when it came to them — not from when the task
/// was opened — and the call-list to-do says the next message was not sent (the first was).
#[tokio::test]
async fn a_follow_up_held_for_review_expires_a_week_after_it_came_and_says_what_went() {
    let w = world().await;
    let task = awaiting_review(&w, "churn_risk", "m_quiet").await;
    let own = Draft {
        subject: "Your shoulder".into(),
        body: "Hi Sam,\n\nIs your shoulder still bugging you?\n\nRosa".into(),
    };
    w.engine.approve(w.account.id, task.id, Some(own)).await.expect("approve");
    w.run().await;
    assert_eq!(to_members(&w), 1, "the owner's first message");
    let mut held = w.task(&task).await;
    for _ in 0..14 {
        if held.status == TaskStatus::PendingReview {
            break;
        }
        w.run_when_due(&held).await;
        held = w.task(&task).await;
    }
    assert_eq!(held.status, TaskStatus::PendingReview, "the follow-up waits for the owner");
    let came = w.clock.now();
    assert!(
        came >= task.created_at + days(2),
        "held on its cadence, days after the task was opened"
    );
    assert_eq!(held.review_since, Some(came));

    w.clock.set(came + days(6) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 0, "six days in review: not yet");
    let last_calls: Vec<_> = w
        .engine
        .owner_notices(w.account.id, None, None)
        .await
        .expect("feed")
        .0
        .into_iter()
        .filter(|n| n.title.starts_with("Last call"))
        .collect();
    assert_eq!(last_calls.len(), 1);
    assert!(
        last_calls[0].detail.contains("the next message not sent"),
        "{}",
        last_calls[0].detail
    );
    w.clock.set(came + days(7) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 1);
    let todos = open_todos(&w).await;
    assert_eq!(todos.len(), 1, "{todos:?}");
    assert_eq!(
        todos[0].what, "Write to Sam: the next message to them waited 7 days for your review and was not sent",
        "never \"nothing was sent\" after the first message went"
    );
    assert_eq!(to_members(&w), 1, "the held follow-up never went");
}

/// Given `send_default`, then an expiring churn item goes out as drafted — while a lead and a
/// payment, whatever the setting, reach the call list.
#[tokio::test]
async fn send_default_sends_the_draft_but_leads_and_payments_reach_the_call_list() {
    let w = world().await;
    expiring(&w, OnReviewExpiry::SendDefault).await;
    let churn = awaiting_review(&w, "churn_risk", "m_churn").await;
    let lead = awaiting_review(&w, "lead_followup", "m_lead").await;
    let payment = awaiting_review(&w, "payment_recovery", "m_pay").await;

    w.clock.set(day0() + days(7) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 3);
    w.run().await;
    let sent = w.task(&churn).await;
    assert_eq!(sent.touch, 1, "{:?}", sent.status);
    let mails = w.mailer.sent();
    assert_eq!(mails.len(), 1);
    assert_eq!((mails[0].to.as_str(), mails[0].subject.as_str()), ("m-churn@example.com", "Hello"));
    let todos = open_todos(&w).await;
    for task in [&lead, &payment] {
        let closed = w.task(task).await;
        assert_eq!(
            (closed.status, closed.outcome.as_deref()),
            (TaskStatus::Cancelled, Some("review_expired")),
            "{}",
            task.task_type
        );
        let todo = todos.iter().find(|t| Some(t.id) == closed.todo_id).expect("its to-do");
        assert_eq!(todo.member.id, task.member.id);
    }
}

/// Given `close`, then the item closes with nothing sent and no to-do.
#[tokio::test]
async fn close_closes_an_undecided_item_with_nothing_sent() {
    let w = world().await;
    expiring(&w, OnReviewExpiry::Close).await;
    let task = awaiting_review(&w, "churn_risk", "m_close").await;
    w.clock.set(day0() + days(7) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 1);
    let closed = w.task(&task).await;
    assert_eq!(
        (closed.status, closed.outcome.as_deref(), closed.todo_id),
        (TaskStatus::Cancelled, Some("review_expired"), None)
    );
    assert!(open_todos(&w).await.is_empty());
    assert_eq!(to_members(&w), 0);
}

/// A regular who stopped coming 25 days ago.
async fn lapsed(w: &World, id: &str) -> MemberId {
    let now = w.clock.now();
    let member = MemberId::parse(id).expect("id");
    let mut facts = MemberFacts::new(member.clone());
    facts.email = Email::parse(&format!("{}@example.com", id.replace('_', "-"))).ok();
    facts.first_name = Some("Pat".into());
    facts.status = Some(crate::members::event::MemberStatus::Active);
    facts.joined_at = Some(now - days(400));
    let last = now - days(25);
    facts.checkins = (0..12).map(|k| last - days(3 * k)).collect();
    facts.checkin_count = 12;
    facts.last_checkin_at = facts.checkins.last().copied();
    facts.version = 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    member
}

/// Given a scan's task that expired unsent, then the scan never counts it as handling the
/// member: while they are on the call list the person calling has them; once that to-do is
/// done and they are still away, the scan opens a task for them again.
#[tokio::test]
async fn the_scan_never_counts_an_expired_unsent_task_as_handling_its_member() {
    let w = world().await;
    let member = lapsed(&w, "m_lapsed").await;
    let first = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!(first.created, 1, "{first:?}");

    w.clock.advance(days(7) + SignedDuration::from_mins(5));
    assert_eq!(expire(&w).await, 1);
    let on_list = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!(
        (on_list.created, on_list.on_call_list, on_list.already_handled),
        (0, 1, 0),
        "{on_list:?}"
    );

    let todo = open_todos(&w).await.pop().expect("the call");
    assert_eq!(todo.member.id, member);
    w.engine
        .complete_todo(w.account.id, todo.id, Some("no_answer"), None)
        .await
        .expect("done");
    let again = w.engine.analyze_account(&w.account).await.expect("scan");
    assert_eq!((again.created, again.already_handled), (1, 0), "{again:?}");
}

const OWNER: &str = "mike@crossfit-renegade.example";

async fn with_owner_mail(w: &World) {
    let patch = crate::engine::SettingsPatch {
        owner_email: Some(Email::parse(OWNER).expect("email")),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
}

/// The morning brief mailed at 07:30 in New York on day `n` after day0, if one left.
async fn brief_on_day(w: &World, n: i64) -> Option<String> {
    let before = w.mailer.sent().len();
    w.clock.set(at("2026-11-02T12:30:00Z") + days(n));
    w.engine.send_daily_digests().await.expect("briefs");
    w.mailer
        .sent()
        .into_iter()
        .skip(before)
        .find(|m| m.to.as_str() == OWNER && m.text.starts_with("Your morning brief"))
        .map(|m| m.text)
}

/// A call on the list for `member`, with `goal` as its words.
async fn call(w: &World, member: &str, goal: &str) -> Task {
    let input = NewTask {
        draft: None,
        goal: goal.into(),
        ..w.new_task("staff_call_member", member).await
    };
    w.engine.create_task(&w.account, input).await.expect("call").task().clone()
}

/// Given a to-do nobody touches, then the brief lists it — naming its member — on three
/// mornings, and from the fourth only counts it under "still open"; a morning with nothing
/// else to say mails nothing.
#[tokio::test]
async fn an_unchanged_item_is_listed_on_three_mornings_then_only_counted() {
    let w = world().await;
    with_owner_mail(&w).await;
    call(&w, "m_ray", "Ring about the schedule").await;
    for n in 1..=3 {
        let text = brief_on_day(&w, n).await.unwrap_or_else(|| panic!("a brief on morning {n}"));
        assert!(text.contains("Ring about the schedule (Sam, "), "morning {n}: {text}");
    }
    assert_eq!(brief_on_day(&w, 4).await, None, "nothing new: no mail");

    call(&w, "m_dana", "Call Dana back").await;
    let text = brief_on_day(&w, 5).await.expect("a brief with the new call");
    assert!(text.contains("Call Dana back"), "{text}");
    assert!(!text.contains("Ring about the schedule"), "{text}");
    assert!(text.contains("Still open: 1 item, listed on 3 mornings already"), "{text}");
}

/// `member`'s payment failing at the clock's now, as an import reports it: no task works on it.
async fn payment_fails(w: &World, member: &str) -> MemberId {
    let member = w.member(member).await;
    let (mut facts, _) = w.store.get_member(w.account.id, &member).await.expect("read").expect("facts");
    facts.status = Some(crate::members::event::MemberStatus::Active);
    facts.payment_failing = true;
    facts.last_payment_failed_at = Some(w.clock.now());
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    member
}

/// The token of the link labelled `label` under the first line of `text` holding `item`.
fn link_under(text: &str, item: &str, label: &str) -> String {
    let start = text.find(item).unwrap_or_else(|| panic!("{item} in {text}"));
    let line = text[start..]
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{label}: ")))
        .unwrap_or_else(|| panic!("{label} under {item}: {text}"));
    line.rsplit("/a/").next().expect("token").trim().to_owned()
}

/// Given a failing payment nothing works on, then the brief's "Check Sam's payment" carries its
/// links; looking changes nothing; "Remind me tomorrow" leaves it out until the next morning;
/// "I took care of it" leaves it out for good, and the link then says so; a new failure asks
/// again, and a payment gone through needs no word.
#[tokio::test]
async fn the_briefs_payment_item_is_checked_or_put_off_from_the_mail() {
    let w = world().await;
    with_owner_mail(&w).await;
    w.clock.set(at("2026-11-02T12:30:00Z"));
    payment_fails(&w, "m_ray").await;
    let text = brief_on_day(&w, 1).await.expect("a brief");
    assert!(text.contains("Check Sam's payment"), "{text}");
    let later = link_under(&text, "Check Sam's payment", "Remind me tomorrow");
    let done = link_under(&text, "Check Sam's payment", "I took care of it");

    let page = w.engine.action_link_page(&later).await.expect("page").expect("genuine");
    assert_eq!((page.title.as_str(), &page.state), ("Check Sam's payment", &LinkState::Open));
    assert!(page.detail.iter().any(|d| d.contains("failed on")), "{:?}", page.detail);
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.actions.iter().any(|a| a.kind == "payment"), "looking changed nothing");

    let acted = w.engine.use_action_link(&later).await.expect("use").expect("genuine");
    assert!(
        matches!(acted.state, LinkState::Acted(ref s) if s.starts_with("Put off until tomorrow")),
        "{acted:?}"
    );
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.payments.is_empty() && brief.actions.is_empty(), "put off: {brief:?}");
    let again = w.engine.use_action_link(&later).await.expect("use").expect("genuine");
    assert!(
        matches!(again.state, LinkState::Gone(ref s) if s.starts_with("Already put off")),
        "{again:?}"
    );

    let text = brief_on_day(&w, 2).await.expect("back the next morning");
    assert!(text.contains("Check Sam's payment"), "{text}");
    let acted = w.engine.use_action_link(&done).await.expect("use").expect("genuine");
    assert!(
        matches!(acted.state, LinkState::Acted(ref s) if s.starts_with("Marked as checked")),
        "{acted:?}"
    );
    let twice = w.engine.use_action_link(&done).await.expect("use").expect("genuine");
    assert_eq!(twice.state, LinkState::Gone("Already marked as checked.".into()));
    for n in 3..=4 {
        let text = brief_on_day(&w, n).await.unwrap_or_default();
        assert!(!text.contains("payment"), "morning {n}: {text}");
    }

    // It fails again: the brief asks again; once it goes through, the old link needs nothing.
    let member = payment_fails(&w, "m_ray").await;
    let text = brief_on_day(&w, 5).await.expect("a new failure");
    assert!(text.contains("Check Sam's payment"), "{text}");
    let (mut facts, _) = w.store.get_member(w.account.id, &member).await.expect("read").expect("facts");
    facts.payment_failing = false;
    facts.version += 1;
    w.store.save_member_facts(w.account.id, &facts).await.expect("facts");
    let fresh = link_under(&text, "Check Sam's payment", "I took care of it");
    let paid = w.engine.use_action_link(&fresh).await.expect("use").expect("genuine");
    assert!(
        matches!(paid.state, LinkState::Gone(ref s) if s.contains("gone through")),
        "{paid:?}"
    );
}

/// Given the brief's payment item, when the owner replies "Sam: done", then it is checked and
/// one short mail says so.
#[tokio::test]
async fn the_briefs_payment_item_is_answered_in_words() {
    let w = world().await;
    with_owner_mail(&w).await;
    w.clock.set(at("2026-11-02T12:30:00Z"));
    payment_fails(&w, "m_ray").await;
    brief_on_day(&w, 1).await.expect("a brief");
    let reply = w.answer_newest(OWNER, "owner-1@owner.example", "Sam: done");
    let outcome = w.engine.receive_reply(&reply).await.expect("reply");
    assert!(matches!(outcome, InboundOutcome::Answered { understood: true, .. }), "{outcome:?}");
    let confirmed = w.mailer.sent().last().cloned().expect("a confirmation");
    assert!(
        confirmed.text.starts_with("Check Sam's payment: Marked as checked"),
        "{}",
        confirmed.text
    );
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.payments.is_empty(), "{:?}", brief.payments);
}

/// Given a failing payment whose task the owner skipped, then the brief does not ask about
/// the payment again.
#[tokio::test]
async fn a_skipped_payment_does_not_come_back_to_the_brief() {
    let w = world().await;
    payment_fails(&w, "m_ray").await;
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.actions.iter().any(|a| a.kind == "payment"), "{:?}", brief.actions);

    w.clock.advance(SignedDuration::from_mins(1));
    let task = awaiting_review(&w, "payment_recovery", "m_ray").await;
    w.engine.skip(w.account.id, task.id, None).await.expect("skip");
    w.clock.advance(days(1));
    let brief = w.engine.brief(w.account.id, None).await.expect("brief");
    assert!(brief.actions.iter().all(|a| a.kind != "payment"), "{:?}", brief.actions);
    assert!(brief.payments.is_empty(), "{:?}", brief.payments);
}

/// Given an escalated task whose messages are spent, when the owner gives guidance, then it is
/// granted exactly one more message, which goes to the member — not straight back to the
/// owner unsent.
#[tokio::test]
async fn guidance_on_a_spent_task_grants_it_exactly_one_more_message() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_baby").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 1);
    let current = w.task(&task).await;
    let why = crate::task::transition::Why::new(Reason::BudgetMessagesExhausted);
    let (mut spent, log) = crate::task::transition::record(&current, w.clock.now(), why);
    spent.budget.messages_max = spent.budget.messages_used;
    w.store
        .commit(&crate::task::commit::TaskCommit::new(spent.clone(), log))
        .await
        .expect("spend");
    let why = crate::task::transition::Why::new(Reason::MemberQuestionNeedsOwner);
    w.engine
        .move_to(spent, TaskStatus::Escalated, w.clock.now(), why)
        .await
        .expect("escalate");

    let guided = w
        .engine
        .guidance(
            w.account.id,
            task.id,
            "Congratulate her on the baby! Tell her we can freeze her membership",
        )
        .await
        .expect("guidance");
    assert_eq!(guided.budget.messages_max, guided.budget.messages_used + 1);
    w.run().await;
    // A member gets one message a day, inside the window: the answer leaves when they allow.
    for _ in 0..3 {
        if w.mailer.sent().len() == 1 {
            w.run_when_due(&task).await;
        }
    }
    let after = w.task(&task).await;
    assert_eq!(w.mailer.sent().len(), 2, "the answer went to the member ({:?})", after.status);
    assert_eq!(after.budget.messages_left(), 0, "exactly one more");
}

/// Given a gym past its ramp on `limited_auto` with `churn_risk` on autopilot, then a
/// long-standing, valuable member's churn draft goes out without review; a win-back for the
/// same kind of member, not listed, still asks; a payment, listed or not, still asks.
#[tokio::test]
async fn autopilot_types_send_what_value_or_tenure_alone_would_have_held() {
    let w = world().await;
    let patch = crate::engine::SettingsPatch {
        onboarded_at: Some(w.clock.now() - days(60)),
        execution_mode: Some(crate::owner::account::ExecutionMode::LimitedAuto),
        autopilot_types: Some(vec!["churn_risk".into(), "payment_recovery".into()]),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    let valued = crate::rails::gate::GateContext {
        tenure_days: Some(800),
        monthly_value: Some(250.0),
        cancellation_reason: None,
    };
    let made = |task_type: &'static str, member: &'static str| {
        let (w, account, valued) = (&w, &account, valued.clone());
        async move {
            let input = NewTask {
                confidence: Some(99),
                gate: valued,
                ..w.new_task(task_type, member).await
            };
            w.engine.create_task(account, input).await.expect("create").task().status
        }
    };
    assert_eq!(made("churn_risk", "m_loyal").await, TaskStatus::Ready);
    assert_eq!(made("win_back", "m_gone").await, TaskStatus::PendingReview);
    assert_eq!(made("payment_recovery", "m_card").await, TaskStatus::PendingReview);

    let unknown = crate::engine::SettingsPatch {
        autopilot_types: Some(vec!["no_such_type".into()]),
        ..Default::default()
    };
    assert!(w.engine.update_settings(w.account.id, unknown).await.is_err());
}

/// Given a gym past its ramp on `limited_auto` whose churn drafts wait for review (valued,
/// long-standing members), when the owner approves four as drafted, then edits one, then
/// approves five as drafted, then only the fifth approval in a row offers the type for
/// autopilot, once; accepted, the next such draft goes out without review; undone, it waits
/// again.
#[tokio::test]
async fn five_approvals_without_an_edit_offer_autopilot() {
    let w = world().await;
    let patch = crate::engine::SettingsPatch {
        onboarded_at: Some(w.clock.now() - days(60)),
        execution_mode: Some(crate::owner::account::ExecutionMode::LimitedAuto),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let valued = crate::rails::gate::GateContext {
        tenure_days: Some(800),
        monthly_value: Some(250.0),
        cancellation_reason: None,
    };
    let made = |member: String| {
        let (w, valued) = (&w, valued.clone());
        async move {
            let account = w.engine.account(w.account.id).await.expect("account");
            let input = NewTask {
                confidence: Some(99),
                gate: valued,
                ..w.new_task("churn_risk", &member).await
            };
            w.engine.create_task(&account, input).await.expect("create").task().clone()
        }
    };
    let offers = || async {
        w.engine
            .list_suggestions(w.account.id, Some("pending"))
            .await
            .expect("suggestions")
            .into_iter()
            .filter(|s| s.kind == crate::learning::suggestion::SuggestionKind::Autopilot)
            .collect::<Vec<_>>()
    };
    let mut n = 0;
    let mut approve = |edited: bool| {
        n += 1;
        let member = format!("m_loyal{n}");
        let (w, made) = (&w, &made);
        async move {
            let task = made(member).await;
            assert_eq!(task.status, TaskStatus::PendingReview, "valued members wait for review");
            let edit = edited.then(|| crate::task::Draft {
                subject: "A note from the gym".into(),
                body: "Hi, it has been a while. Hope all is well.".into(),
            });
            w.engine.approve(w.account.id, task.id, edit).await.expect("approve");
        }
    };
    for edited in [false, false, false, false, true, false, false, false, false] {
        approve(edited).await;
    }
    assert!(offers().await.is_empty(), "four in a row since the edit: no offer yet");
    approve(false).await;
    let offered = offers().await;
    assert_eq!(offered.len(), 1, "{offered:?}");
    assert!(offered[0].title.contains("without waiting for you"), "{}", offered[0].title);
    approve(false).await;
    assert_eq!(offers().await.len(), 1, "offered once");

    let accepted = w.engine.accept_suggestion(w.account.id, offered[0].id).await.expect("accept");
    let account = w.engine.account(w.account.id).await.expect("account");
    assert_eq!(account.settings.autopilot_types, ["churn_risk"]);
    assert_eq!(made("m_next".into()).await.status, TaskStatus::Ready, "on autopilot now");
    w.engine.undo_suggestion(w.account.id, accepted.id).await.expect("undo");
    assert!(
        w.engine
            .account(w.account.id)
            .await
            .expect("account")
            .settings
            .autopilot_types
            .is_empty()
    );
    assert_eq!(made("m_after".into()).await.status, TaskStatus::PendingReview, "waits again");
}
