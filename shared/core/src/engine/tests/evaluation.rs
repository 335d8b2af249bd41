//! The evaluation function and the owner's decisions, as the issue checks
//! them: a month of closed tasks with a dozen evening sends all answered and a dozen morning
//! sends none yields one timing suggestion whose evidence matches the data; accepting it puts
//! the memory in the next prompt (and undoing takes it out); dismissing changes nothing; a
//! finding is never suggested twice; another account sees none of it.

use std::sync::Mutex;

use super::*;
use crate::learning::suggestion::{ProposedChange, SuggestionKind, SuggestionStatus};
use crate::owner::account::Account;
use crate::ports::{Agent, AgentError, CompletionRequest, DraftRequest, GoalProgress, PlanDecision, PlanRequest, ReplyRequest};
use crate::task::commit::TaskCommit;
use crate::task::transition::{Why, created, record, transition};
use crate::testing::sample_task_for;

/// The fixed agent, keeping every draft's system prompt.
#[derive(Default)]
struct Prompts(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl Agent for Prompts {
    async fn draft(&self, request: &DraftRequest) -> Result<crate::task::Drafted, AgentError> {
        self.0.lock().expect("prompts").push(request.system_prompt.clone());
        FixedAgent.draft(request).await
    }
    async fn evaluate_reply(&self, r: &ReplyRequest) -> Result<crate::conversation::reply::ReplyEvaluation, AgentError> {
        FixedAgent.evaluate_reply(r).await
    }
    async fn evaluate_completion(&self, r: &CompletionRequest) -> Result<GoalProgress, AgentError> {
        FixedAgent.evaluate_completion(r).await
    }
    async fn plan_next(&self, r: &PlanRequest) -> Result<PlanDecision, AgentError> {
        FixedAgent.plan_next(r).await
    }
}

/// One task of `account` created on `day` (before day0), whose first message left at `utc_hour`
/// and was answered or not, then closed.
async fn closed_task(w: &World, account: &Account, i: usize, day: i64, utc_hour: i64, answered: bool) {
    let created_at = day0() - days(day);
    let member = MemberId::parse(&format!("m_eval_{i}")).expect("member");
    let task = sample_task_for(account.id, member, TaskStatus::Waiting, created_at);
    w.store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .expect("create");
    let sent_at = created_at
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .at(0, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .expect("utc")
        .timestamp()
        + SignedDuration::from_hours(utc_hour);
    let (mut sent, log) = record(&task, sent_at, Why::new(Reason::MessageSent));
    sent.touch = 1;
    sent.execution_started_at = Some(sent_at);
    sent.budget.turns_used = u32::from(answered);
    w.store.commit(&TaskCommit::new(sent.clone(), log)).await.expect("send");
    let (status, outcome) = if answered {
        (TaskStatus::Completed, "recovered")
    } else {
        (TaskStatus::Cancelled, "unresponsive")
    };
    let (done, log) = transition(&sent, status, sent_at + days(3), Why::new(Reason::MessageSent).outcome(outcome)).expect("close");
    w.store.commit(&TaskCommit::new(done, log)).await.expect("close");
}

/// The month: a dozen evening sends (19:00 in New York) all answered, a dozen morning
/// ones (09:00) none.
async fn a_month_of_evenings_answered(w: &World, account: &Account) {
    for i in 0..12 {
        closed_task(w, account, i, 2 + i as i64 * 2, 24, true).await;
        closed_task(w, account, 100 + i, 3 + i as i64 * 2, 14, false).await;
    }
}

async fn another_account(w: &World) -> Account {
    let account = crate::testing::sample_account(day0());
    w.store
        .create_account(&account, &format!("hash-{}", account.id))
        .await
        .expect("account");
    account
}

async fn draft_prompt(w: &World, prompts: &Prompts, account: &Account, member: &str) -> String {
    let mut input = w.new_task("churn_risk", member).await;
    input.draft = None;
    let account = w.engine.account(account.id).await.expect("account");
    w.engine.create_task(&account, input).await.expect("create");
    prompts.0.lock().expect("prompts").last().cloned().expect("a draft was asked for")
}

#[tokio::test]
async fn a_clear_timing_pattern_is_suggested_once_with_its_counts_and_accepting_it_changes_the_next_prompt() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let gym = w.account.clone();
    let quiet = another_account(&w).await;
    a_month_of_evenings_answered(&w, &gym).await;

    let report = w.engine.evaluate_accounts().await.expect("evaluate");
    assert_eq!((report.accounts, report.tasks, report.suggested), (2, 24, 1), "{report:?}");
    let pending = w.engine.list_suggestions(gym.id, None).await.expect("list");
    assert_eq!(pending.len(), 1, "{pending:?}");
    let timing = pending[0].clone();
    assert_eq!((timing.kind, timing.status), (SuggestionKind::Memory, SuggestionStatus::Pending));
    assert_eq!(
        (
            &timing.evidence["evening"]["sent"],
            &timing.evidence["evening"]["replied"],
            &timing.evidence["morning"]["sent"],
            &timing.evidence["morning"]["replied"]
        ),
        (
            &serde_json::json!(12),
            &serde_json::json!(12),
            &serde_json::json!(12),
            &serde_json::json!(0)
        ),
        "the evidence is the data: {}",
        timing.evidence
    );
    assert!(
        w.engine.list_suggestions(quiet.id, None).await.expect("list").is_empty(),
        "another account sees none of it"
    );
    assert!(matches!(
        w.engine.accept_suggestion(quiet.id, timing.id).await,
        Err(crate::task::error::EngineError::NotFound { .. })
    ));
    // The weekly run and a task's close find it again: never suggested twice.
    assert_eq!(w.engine.evaluate_account(gym.id, "post_task").await.expect("again").1, 0);

    let before = draft_prompt(&w, &prompts, &gym, "m_next_1").await;
    assert!(!before.contains("answer messages sent after 5pm"), "{before}");
    let applied = w.engine.accept_suggestion(gym.id, timing.id).await.expect("accept");
    assert_eq!(applied.status, SuggestionStatus::Applied);
    assert!(
        matches!(
            w.engine.accept_suggestion(gym.id, timing.id).await,
            Err(crate::task::error::EngineError::Invalid(_))
        ),
        "applied once"
    );
    let memories = w.engine.list_memories(gym.id).await.expect("memories");
    assert_eq!(memories.len(), 1);
    assert_eq!(memories[0].source, crate::owner::business_memory::MemorySource::Evaluator);
    let after = draft_prompt(&w, &prompts, &gym, "m_next_2").await;
    assert!(
        after.contains("answer messages sent after 5pm"),
        "accepting changed the next prompt:\n{after}"
    );
    assert_eq!(w.engine.list_suggestions(gym.id, Some("applied")).await.expect("list").len(), 1);

    // Undone: the memory is gone, and the next prompt is as before.
    let undone = w.engine.undo_suggestion(gym.id, timing.id).await.expect("undo");
    assert_eq!(undone.status, SuggestionStatus::Dismissed);
    assert!(w.engine.list_memories(gym.id).await.expect("memories").is_empty());
    let undone_prompt = draft_prompt(&w, &prompts, &gym, "m_next_3").await;
    assert!(!undone_prompt.contains("answer messages sent after 5pm"));
}

#[tokio::test]
async fn dismissing_a_suggestion_changes_nothing_and_reminding_brings_it_back_in_a_week() {
    let w = world().await;
    let gym = w.account.clone();
    let other = another_account(&w).await;
    a_month_of_evenings_answered(&w, &gym).await;
    a_month_of_evenings_answered(&w, &other).await;
    w.engine.evaluate_accounts().await.expect("evaluate");
    let settings_before = w.engine.account(gym.id).await.expect("account").settings;

    let timing = w.engine.list_suggestions(gym.id, None).await.expect("list").remove(0);
    let dismissed = w.engine.dismiss_suggestion(gym.id, timing.id).await.expect("dismiss");
    assert_eq!(dismissed.status, SuggestionStatus::Dismissed);
    assert!(w.engine.list_memories(gym.id).await.expect("memories").is_empty());
    assert_eq!(w.engine.account(gym.id).await.expect("account").settings, settings_before);
    assert!(w.engine.list_suggestions(gym.id, None).await.expect("list").is_empty());
    assert_eq!(
        w.engine.evaluate_account(gym.id, "weekly_batch").await.expect("again").1,
        0,
        "not again"
    );

    let theirs = w.engine.list_suggestions(other.id, None).await.expect("list").remove(0);
    w.engine.remind_suggestion(other.id, theirs.id).await.expect("remind");
    assert!(
        w.engine.list_suggestions(other.id, None).await.expect("list").is_empty(),
        "hidden for now"
    );
    w.clock.advance(days(7));
    assert_eq!(
        w.engine.list_suggestions(other.id, None).await.expect("list").len(),
        1,
        "back in a week"
    );
    assert!(matches!(
        w.engine.list_suggestions(other.id, Some("everything")).await,
        Err(crate::task::error::EngineError::Invalid(_))
    ));
}

/// Each approval with edits keeps the original beside what was approved; three
/// drafts shortened the same way make a weak memory suggestion, saved as the owner's edit.
#[tokio::test]
async fn three_drafts_the_owner_shortened_make_a_weak_memory_suggestion_from_their_edits() {
    let w = world().await;
    let long = Draft {
        subject: "Hello".into(),
        body: "Hi Sam, it has been a while since we saw you at the gym and we wanted to check in on you.".into(),
    };
    let short = Draft {
        subject: "Hello".into(),
        body: "Hi Sam, see you soon?".into(),
    };
    for i in 0..3 {
        let mut input = w.new_task("churn_risk", &format!("m_edit_{i}")).await;
        input.draft = Some(long.clone());
        let task = w.engine.create_task(&w.account, input).await.expect("create").task().clone();
        let approved = w.engine.approve(w.account.id, task.id, Some(short.clone())).await.expect("approve");
        assert_eq!(
            (approved.original_draft.as_ref(), approved.draft.as_ref()),
            (Some(&long), Some(&short)),
            "original vs. sent"
        );
        w.engine.cancel(w.account.id, task.id).await.expect("close");
        let record = w
            .store
            .interaction_outcome(w.account.id, task.id)
            .await
            .expect("read")
            .expect("record");
        assert_eq!(record.private.edits, [crate::learning::edit::EditKind::Shortened]);
        assert!(
            !serde_json::to_string(&record.shared).expect("json").contains("shortened"),
            "edits stay private"
        );
    }
    w.engine.evaluate_account(w.account.id, "post_task").await.expect("evaluate");
    let found = w.engine.list_suggestions(w.account.id, None).await.expect("list");
    let edit = found
        .iter()
        .find(|s| s.evidence["edit"] == "shortened")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(edit.strength, crate::learning::suggestion::Strength::Weak);
    w.engine.accept_suggestion(w.account.id, edit.id).await.expect("accept");
    let memories = w.engine.list_memories(w.account.id).await.expect("memories");
    assert_eq!(memories[0].source, crate::owner::business_memory::MemorySource::OwnerEdit);
}

/// Off by default; an owner who opted in, on an account past its first 30
/// days, has a strong memory suggestion saved without review and hears of it in the weekly
/// notice, with its undo.
#[tokio::test]
async fn an_owner_who_opted_in_gets_strong_memories_saved_and_listed_in_the_weekly_notice() {
    let w = world().await;
    let mut trusting = crate::testing::sample_account(day0() - days(40));
    trusting.settings.auto_save_memories = true;
    w.store.create_account(&trusting, "hash-trusting").await.expect("account");
    let mut young = crate::testing::sample_account(day0() - days(10));
    young.settings.auto_save_memories = true;
    w.store.create_account(&young, "hash-young").await.expect("account");
    for account in [&w.account, &trusting, &young] {
        a_month_of_evenings_answered(&w, account).await;
    }
    w.engine.evaluate_accounts().await.expect("evaluate");

    let memories = w.engine.list_memories(trusting.id).await.expect("memories");
    assert_eq!(memories.len(), 1, "saved without review");
    let applied = w.engine.list_suggestions(trusting.id, Some("applied")).await.expect("list");
    assert!(applied.len() == 1 && applied[0].auto_applied, "{applied:?}");
    let (notices, _) = w.store.list_notices(trusting.id, 10, None).await.expect("notices");
    let digest = notices
        .iter()
        .find(|n| n.kind == crate::owner::owner_notice::NoticeKind::LearningDigest)
        .unwrap_or_else(|| panic!("{notices:?}"));
    assert!(
        digest.detail.contains("https://app.example.com/app/suggestions")
            && digest.detail.contains(&applied[0].title)
            && !digest.detail.contains("/api/"),
        "{}",
        digest.detail
    );

    for (account, why) in [(&w.account, "not opted in"), (&young, "under 30 days old")] {
        assert!(w.engine.list_memories(account.id).await.expect("memories").is_empty(), "{why}");
        assert_eq!(
            w.engine.list_suggestions(account.id, None).await.expect("list").len(),
            1,
            "{why}: pending"
        );
    }
}

/// A pending suggestion of `account` proposing `change`, as an evaluator would make it.
async fn suggested(w: &World, account: &Account, kind: SuggestionKind, fingerprint: &str, change: ProposedChange) -> ulid::Ulid {
    let draft = crate::learning::suggestion::SuggestionDraft {
        kind,
        title: fingerprint.into(),
        body: "From the month's outcomes.".into(),
        evidence: serde_json::json!({"sample_count": 9}),
        strength: crate::learning::suggestion::Strength::Moderate,
        confidence: 60,
        fingerprint: fingerprint.into(),
        change,
    };
    let now = w.engine.now();
    let suggestion =
        crate::learning::suggestion::Suggestion::new(account.id, draft, "weekly_batch", crate::kernel::ids::new_ulid(now), now);
    assert!(w.store.create_suggestion(&suggestion).await.expect("create"));
    suggestion.id
}

const LEARNED_SKILL: &str = "Name the member's favourite class in the first line.";
const LEARNED_CRITERION: &str = "Never mention the absence itself in the first message.";

#[tokio::test]
async fn an_accepted_skill_and_rubric_reach_their_types_prompt_and_undo_takes_them_out() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let gym = w.account.clone();
    let skill = suggested(
        &w,
        &gym,
        SuggestionKind::Skill,
        "skill:churn_risk:favourite_class",
        ProposedChange::Skill {
            task_type: "churn_risk".into(),
            guidance: LEARNED_SKILL.into(),
        },
    )
    .await;
    let rubric = suggested(
        &w,
        &gym,
        SuggestionKind::Rubric,
        "rubric:churn_risk:no_absence",
        ProposedChange::Rubric {
            task_type: "churn_risk".into(),
            criteria: vec![LEARNED_CRITERION.into()],
        },
    )
    .await;
    let before = draft_prompt(&w, &prompts, &gym, "m_learn_1").await;
    assert!(
        !before.contains(LEARNED_SKILL) && !before.contains(LEARNED_CRITERION),
        "pending changes nothing"
    );

    w.engine.accept_suggestion(gym.id, skill).await.expect("accept skill");
    w.engine.accept_suggestion(gym.id, rubric).await.expect("accept rubric");
    let after = draft_prompt(&w, &prompts, &gym, "m_learn_2").await;
    assert!(after.contains(LEARNED_SKILL), "the skill layer:\n{after}");
    assert!(after.contains(&format!("- {LEARNED_CRITERION}")), "the rubric:\n{after}");
    assert!(
        after.find(LEARNED_SKILL) < after.find("# The business"),
        "the skill beside the type's skill, before the account layer"
    );
    // Another type's prompt does not carry them.
    let mut input = w.new_task("win_back", "m_learn_3").await;
    input.draft = None;
    w.engine
        .create_task(&w.engine.account(gym.id).await.expect("account"), input)
        .await
        .expect("create");
    let win_back = prompts.0.lock().expect("prompts").last().cloned().unwrap_or_default();
    assert!(
        !win_back.contains(LEARNED_SKILL) && !win_back.contains(LEARNED_CRITERION),
        "{win_back}"
    );

    w.engine.undo_suggestion(gym.id, skill).await.expect("undo");
    let undone = draft_prompt(&w, &prompts, &gym, "m_learn_4").await;
    assert!(!undone.contains(LEARNED_SKILL), "undo removes the skill:\n{undone}");
    assert!(undone.contains(LEARNED_CRITERION), "and only the skill");
    let learned = w.engine.account(gym.id).await.expect("account").settings.learned;
    assert_eq!(learned.len(), 1);
}

/// A model's evaluator: counts its calls, finds nothing.
#[derive(Default)]
struct ModelLike(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl crate::ports::Evaluator for ModelLike {
    async fn evaluate(
        &self,
        _: &[crate::learning::evaluator::ClosedTask],
        _: &crate::owner::calibration::Calibration,
    ) -> Result<Vec<crate::learning::suggestion::SuggestionDraft>, AgentError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Vec::new())
    }
    fn uses_ai(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_models_evaluation_is_an_ai_call_counted_within_the_days_budget() {
    let mut w = world().await;
    let model = Arc::new(ModelLike::default());
    w.engine = w.engine.clone().with_evaluator(model.clone());
    let gym = w.account.clone();
    let today = crate::kernel::limits::local_date(day0(), &gym.settings.time_zone());
    w.engine.evaluate_account(gym.id, "post_task").await.expect("evaluate");
    assert_eq!(model.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(
        w.store.ai_calls(gym.id, today).await.expect("calls"),
        1,
        "counted as the day's AI call"
    );

    // The day's calls used up: the evaluation waits for the next run, nothing is asked.
    while w
        .store
        .count_ai_call(gym.id, today, crate::kernel::limits::AI_CALLS_PER_ACCOUNT_PER_DAY)
        .await
        .expect("count")
        .is_some()
    {}
    w.engine.evaluate_account(gym.id, "post_task").await.expect("evaluate");
    assert_eq!(model.0.load(std::sync::atomic::Ordering::SeqCst), 1, "not asked over the budget");
}
