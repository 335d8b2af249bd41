//! Owner notifications on the in-memory store (spec §35, §17, §22): an escalation reaches the
//! owner's inbox at once; opt-outs, late replies and reminders wait for the digest within
//! their daily budget; everything stays in the feed.

use super::*;
use crate::limits;
use crate::owner_notice::{NoticeDelivery, NoticeKind, NotificationChannel};
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, GoalProgress, ReplyAction, ReplyEvaluation, ReplyRequest};

const OWNER: &str = "mike@crossfit-renegade.example";

/// An agent that escalates every reply with the member's question.
struct Escalates;

#[async_trait::async_trait]
impl Agent for Escalates {
    async fn draft(&self, request: &DraftRequest) -> Result<Draft, AgentError> {
        FixedAgent.draft(request).await
    }
    async fn evaluate_reply(&self, _: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        Ok(ReplyEvaluation {
            action: ReplyAction::Escalate,
            outcome: None,
            confidence: 80,
            reasoning: "a question about opening hours".into(),
            reply: None,
            wait_days: None,
            suggest_suppression: false,
            provisional: false,
            unanswered_question: Some("Is the pool open on Sundays?".into()),
            other_subject: None,
        })
    }
    async fn evaluate_completion(&self, _: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        Err(AgentError("not used".into()))
    }
    async fn plan_next(&self, _: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, AgentError> {
        Err(AgentError("not used".into()))
    }
}

async fn owner_world(channel: NotificationChannel) -> World {
    let mut w = world().await;
    w.engine.agent = Arc::new(Escalates);
    let patch = crate::engine::SettingsPatch {
        owner_email: Some(Email::parse(OWNER).expect("email")),
        owner_notification_channel: Some(channel),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    w
}

fn to_owner(w: &World) -> Vec<crate::mail::OutboundMail> {
    w.mailer.sent().into_iter().filter(|m| m.to.as_str() == OWNER).collect()
}

/// The member's answer to the newest mail to them.
fn answer(w: &World, to: &str, message_id: &str, text: &str) -> Vec<u8> {
    let last = w
        .mailer
        .sent()
        .into_iter()
        .rev()
        .find(|m| m.to.as_str() == to)
        .expect("a mail to answer");
    format!(
        "From: Sam <{to}>\r\nTo: <{}>\r\nSubject: Re: {}\r\nMessage-ID: <{message_id}>\r\nContent-Type: text/plain\r\n\r\n{text}\r\n",
        last.reply_to, last.subject
    )
    .into_bytes()
}

async fn feed(w: &World) -> Vec<crate::owner_notice::OwnerNotice> {
    w.engine.owner_notices(w.account.id, None, None).await.expect("feed").0
}

/// Given an owner with an address, when a member's question escalates a task, then the owner
/// is mailed at once; when another member says "stop", the owner hears of it in the next
/// digest (a slot of the send window), not before, and only once.
#[tokio::test]
async fn an_escalation_mails_the_owner_at_once_and_an_opt_out_waits_for_the_digest() {
    let w = owner_world(NotificationChannel::Email).await;
    let asks = w.approved("churn_risk", "m_asks").await;
    w.approved("churn_risk", "m_stops").await;
    w.run().await;
    assert!(to_owner(&w).is_empty(), "nothing to tell yet");

    let raw = answer(&w, "m-asks@example.com", "q1@mail.example.net", "Is the pool open on Sundays?");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    assert_eq!(w.task(&asks).await.status, TaskStatus::Escalated);
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 1, "the escalation is mailed at once");
    assert!(mails[0].text.contains("Is the pool open on Sundays?"), "{}", mails[0].text);
    assert!(mails[0].unsubscribe_url.is_empty(), "owner mail is not a mailing");

    let raw = answer(&w, "m-stops@example.com", "s1@mail.example.net", "STOP");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    let notices = feed(&w).await;
    let kinds: Vec<(NoticeKind, NoticeDelivery)> = notices.iter().map(|n| (n.kind, n.delivery)).collect();
    assert_eq!(
        kinds,
        [
            (NoticeKind::MemberOptedOut, NoticeDelivery::Digest),
            (NoticeKind::Escalation, NoticeDelivery::Email)
        ],
        "newest first"
    );
    let digest_at = notices[0].digest_at.expect("waits for a digest");
    assert_eq!(
        digest_at,
        at("2026-11-02T17:00:00Z"),
        "12:00 in New York: the next 4-hour slot of the 8–20 window"
    );
    assert_eq!(to_owner(&w).len(), 1, "the opt-out is not mailed on its own");

    w.clock.set(digest_at);
    w.run().await;
    let mails = to_owner(&w);
    assert_eq!(mails.len(), 2, "one digest");
    assert!(mails[1].text.contains("will get no more mail"), "{}", mails[1].text);
    w.clock.advance(SignedDuration::from_hours(5));
    w.run().await;
    assert_eq!(to_owner(&w).len(), 2, "a digest goes once");
    assert_eq!(feed(&w).await[0].digest_at, None);
}

/// Given batchable notices past their kind's daily budget, then the rest stay in the feed
/// only, and the next local day has a fresh budget; immediate ones are never limited.
#[tokio::test]
async fn batchable_notices_past_their_daily_budget_stay_in_the_feed_only() {
    let w = owner_world(NotificationChannel::Email).await;
    let draft = |kind| super::super::owner_notices::NoticeDraft {
        kind,
        task_id: None,
        member_id: None,
        title: "t".into(),
        detail: "d".into(),
    };
    let mut deliveries = Vec::new();
    for _ in 0..=limits::OWNER_LATE_REPLY_NOTICES_PER_DAY {
        let notice = w
            .engine
            .notify_owner(w.account.id, draft(NoticeKind::LateReply), false)
            .await
            .expect("notify");
        deliveries.push(notice.expect("account").delivery);
    }
    let budget = limits::OWNER_LATE_REPLY_NOTICES_PER_DAY as usize;
    assert!(deliveries[..budget].iter().all(|d| *d == NoticeDelivery::Digest));
    assert_eq!(deliveries[budget], NoticeDelivery::OverBudget);
    for _ in 0..15 {
        let notice = w
            .engine
            .notify_owner(w.account.id, draft(NoticeKind::Escalation), false)
            .await
            .expect("notify");
        assert_eq!(notice.expect("account").delivery, NoticeDelivery::Email);
    }
    w.clock.advance(days(1));
    let notice = w
        .engine
        .notify_owner(w.account.id, draft(NoticeKind::LateReply), false)
        .await
        .expect("notify");
    assert_eq!(notice.expect("account").delivery, NoticeDelivery::Digest);
}

/// Given an owner who chose the dashboard, then an escalation is in the feed and no mail goes.
#[tokio::test]
async fn a_dashboard_only_owner_gets_the_feed_and_no_mail() {
    let w = owner_world(NotificationChannel::DashboardOnly).await;
    w.approved("churn_risk", "m_asks").await;
    w.run().await;
    let raw = answer(&w, "m-asks@example.com", "q2@mail.example.net", "Is the pool open on Sundays?");
    w.engine.receive_reply(&raw).await.expect("receive");
    w.run().await;
    assert!(to_owner(&w).is_empty());
    let notices = feed(&w).await;
    assert_eq!(notices.len(), 1);
    assert_eq!(
        (notices[0].kind, notices[0].delivery),
        (NoticeKind::Escalation, NoticeDelivery::Dashboard)
    );
}
