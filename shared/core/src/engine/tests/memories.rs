//! Business memories reach every AI call: what the owner taught — about the
//! business, or about this member — is in the text handed to the model for a first draft, a
//! follow-up, a reply's evaluation, a guidance draft and a planning step; another member's
//! memory, an expired one and a deleted one never are; and the task says which it used.

use std::sync::Mutex;

use super::*;
use crate::conversation::reply::{ReplyAction, ReplyEvaluation};
use crate::engine::CreateOptions;
use crate::engine::NewMemory;
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, GoalProgress, PlanDecision, PlanRequest, ReplyRequest};

/// The fixed agent, keeping every call's system prompt by what it was for.
#[derive(Default)]
struct Prompts(Mutex<Vec<(String, String)>>);

impl Prompts {
    fn keep(&self, call: String, prompt: &str) {
        self.0.lock().expect("prompts").push((call, prompt.to_owned()));
    }
    fn seen(&self) -> Vec<(String, String)> {
        self.0.lock().expect("prompts").clone()
    }
}

#[async_trait::async_trait]
impl Agent for Prompts {
    async fn draft(&self, request: &DraftRequest) -> Result<crate::task::Drafted, AgentError> {
        self.keep(format!("draft {} {}", request.touch, request.tone), &request.system_prompt);
        FixedAgent.draft(request).await
    }
    async fn evaluate_reply(&self, request: &ReplyRequest) -> Result<ReplyEvaluation, AgentError> {
        self.keep("evaluate_reply".into(), &request.system_prompt);
        Ok(ReplyEvaluation {
            action: ReplyAction::Escalate,
            outcome: None,
            confidence: 40,
            reasoning: "the owner should answer".into(),
            reply: None,
            wait_days: None,
            suggest_suppression: false,
            provisional: false,
            unanswered_question: Some("Is the pool open?".into()),
            other_subject: None,
        })
    }
    async fn evaluate_completion(&self, r: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        FixedAgent.evaluate_completion(r).await
    }
    async fn plan_next(&self, request: &PlanRequest) -> Result<PlanDecision, AgentError> {
        self.keep("plan_next".into(), &request.system_prompt);
        FixedAgent.plan_next(request).await
    }
}

const BUSINESS: &str = "Members here answer evening messages, not morning ones.";
const ABOUT_SAM: &str = "Sam is recovering from a knee injury.";
const ABOUT_OTHER: &str = "Alex is moving abroad in spring.";
const EXPIRED: &str = "The pool is closed this week.";
const DELETED: &str = "Mention the summer barbecue.";

fn memory(content: &str, member: Option<MemberId>) -> NewMemory {
    NewMemory {
        content: crate::kernel::texts::MemoryContent::parse("content", content).expect("content"),
        member_id: member,
        category: Some(crate::kernel::texts::MemoryCategory::parse("category", "context").expect("category")),
        expires_at: None,
    }
}

/// What the owner taught: one memory of each kind.
async fn taught(w: &World, member: &MemberId) -> Vec<ulid::Ulid> {
    let e = &w.engine;
    let business = e.add_memory(w.account.id, memory(BUSINESS, None)).await.expect("business");
    let sam = e
        .add_memory(w.account.id, memory(ABOUT_SAM, Some(member.clone())))
        .await
        .expect("sam");
    let other = w.member("m_alex").await;
    e.add_memory(w.account.id, memory(ABOUT_OTHER, Some(other))).await.expect("alex");
    let expiring = NewMemory {
        expires_at: Some(w.clock.now() + SignedDuration::from_hours(1)),
        ..memory(EXPIRED, None)
    };
    e.add_memory(w.account.id, expiring).await.expect("expiring");
    let deleted = e.add_memory(w.account.id, memory(DELETED, None)).await.expect("deleted");
    e.delete_memory(w.account.id, deleted.id).await.expect("delete");
    // The short-lived one is past its expiry by the first call.
    w.clock.advance(SignedDuration::from_hours(2));
    vec![business.id, sam.id]
}

fn assert_knows(call: &str, prompt: &str) {
    assert!(prompt.contains(BUSINESS), "{call}: the business memory:\n{prompt}");
    assert!(prompt.contains(ABOUT_SAM), "{call}: the member's memory:\n{prompt}");
    for never in [ABOUT_OTHER, EXPIRED, DELETED] {
        assert!(!prompt.contains(never), "{call}: never {never:?}:\n{prompt}");
    }
}

use crate::ports::Clock;

#[tokio::test]
async fn every_ai_call_of_a_task_reads_the_active_memories_about_the_business_and_its_member() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let sam = w.member("m_sam").await;
    let used = taught(&w, &sam).await;

    // A first draft at creation, then the first touch and a follow-up drafted at send time.
    let mut input = w.new_task("churn_risk", "m_sam").await;
    input.draft = None;
    let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
    assert_eq!(
        task.memories_used.len(),
        2,
        "the first draft's call used both: {:?}",
        task.memories_used
    );
    assert!(used.iter().all(|id| task.memories_used.contains(id)));
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    for _ in 1..=8 {
        w.clock.set(w.clock.now() + days(1));
        w.run().await;
        if prompts.seen().iter().any(|(call, _)| call.starts_with("draft 1")) {
            break;
        }
    }
    // The member replies: the agent evaluates it and hands it to the owner, who guides it.
    let sent = w.mailer.sent();
    let last = sent.last().expect("a mail was sent");
    let raw = format!(
        "From: Sam <m-sam@example.com>\r\nTo: <{}>\r\nSubject: Re: {}\r\nMessage-ID: <r1@mail.example.net>\r\n\
         In-Reply-To: <{}>\r\nContent-Type: text/plain\r\n\r\nIs the pool open again?\r\n",
        last.reply_to, last.subject, last.message_id
    );
    w.engine.receive_reply(raw.as_bytes()).await.expect("reply");
    w.run().await;
    w.engine
        .guidance(w.account.id, task.id, "Tell Sam the pool reopened")
        .await
        .expect("guidance");
    w.run().await;
    let after = w.task(&task).await;
    assert!(used.iter().all(|id| after.memories_used.contains(id)), "{:?}", after.memories_used);

    // A planning parent's step.
    let mut plan = w.new_task("ad_hoc", "m_sam").await;
    plan.draft = None;
    plan.goal = "Get Sam back to morning classes".into();
    let parent = w
        .engine
        .create_task_with(&w.account, plan, CreateOptions::default().with_agent_planning(true))
        .await
        .expect("create")
        .task()
        .clone();
    w.engine.approve(w.account.id, parent.id, None).await.expect("approve");
    w.run().await;

    let seen = prompts.seen();
    for wanted in ["draft 0", "draft 1", "evaluate_reply", "owner_guided", "plan_next"] {
        assert!(
            seen.iter().any(|(call, _)| call.contains(wanted)),
            "a {wanted} call was made: {:?}",
            seen.iter().map(|(c, _)| c).collect::<Vec<_>>()
        );
    }
    for (call, prompt) in &seen {
        assert_knows(call, prompt);
    }
}
