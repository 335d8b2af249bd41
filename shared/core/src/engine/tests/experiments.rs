//! Message experiments on the in-memory store: an accepted skill
//! suggestion run as an experiment splits new tasks between the current and the proposed
//! prompt, the same member always the same way; a planted win is offered to the owner (kept at
//! once with the trust gradient on), and an undecided one ends at its time limit with nothing
//! changed. What cannot run as one is refused with its code.

use std::sync::Mutex;

use super::*;
use crate::learning::suggestion::{ProposedChange, Strength, Suggestion, SuggestionDraft, SuggestionKind, SuggestionStatus};
use crate::owner::experiment::{EXPERIMENT_DAYS, ExperimentStatus};
use crate::ports::{Agent, AgentError, Clock, CompletionRequest, DraftRequest, GoalProgress, PlanDecision, PlanRequest, ReplyRequest};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::experiment::{ExperimentArm, Variant};
use crate::task::transition::{Why, created, transition};
use crate::testing::sample_task_for;

const GUIDANCE: &str = "Mention the new 6am class by name.";

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

impl World {
    /// A suggestion of `kind` proposing `change`, made (pending) for the account.
    async fn suggested(&self, kind: SuggestionKind, change: ProposedChange, fingerprint: &str) -> Suggestion {
        let draft = SuggestionDraft {
            kind,
            title: format!("Try: {fingerprint}"),
            body: "From the closed tasks.".into(),
            evidence: serde_json::json!({}),
            strength: Strength::Strong,
            confidence: 90,
            fingerprint: fingerprint.into(),
            change,
        };
        let now = self.clock.now();
        let s = Suggestion::new(self.account.id, draft, "weekly_batch", crate::kernel::ids::new_ulid(now), now);
        assert!(self.store.create_suggestion(&s).await.expect("suggest"));
        s
    }

    /// An accepted skill suggestion for churn-risk tasks.
    async fn accepted_skill(&self) -> Suggestion {
        let change = ProposedChange::Skill {
            task_type: "churn_risk".into(),
            guidance: GUIDANCE.into(),
        };
        let s = self.suggested(SuggestionKind::Skill, change, "skill:churn:6am").await;
        self.engine.accept_suggestion(self.account.id, s.id).await.expect("accept")
    }

    /// A churn-risk task the agent drafts, and the system prompt its draft was asked with.
    async fn drafted(&self, prompts: &Prompts, member: &str) -> (Task, String) {
        let mut input = self.new_task("churn_risk", member).await;
        input.draft = None;
        let account = self.engine.account(self.account.id).await.expect("account");
        let task = self.engine.create_task(&account, input).await.expect("create").task().clone();
        let prompt = prompts.0.lock().expect("prompts").last().cloned().expect("a draft was asked for");
        (task, prompt)
    }

    /// `n` closed churn-risk tasks of the experiment's `variant`, `won` of them retained.
    async fn closed_in(&self, experiment: ulid::Ulid, variant: Variant, n: usize, won: usize) {
        let now = self.clock.now();
        for i in 0..n {
            let member = MemberId::parse(&format!("m_{}_{i}", variant.as_str())).expect("member");
            let mut task = sample_task_for(self.account.id, member, TaskStatus::Waiting, now);
            task.task_type = "churn_risk".into();
            task.experiment = Some(ExperimentArm {
                experiment_id: experiment,
                variant,
            });
            self.store
                .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
                .await
                .expect("create");
            let (status, outcome) = if i < won {
                (TaskStatus::Completed, "retained")
            } else {
                (TaskStatus::Cancelled, "unresponsive")
            };
            let (done, log) = transition(&task, status, now, Why::new(Reason::MessageSent).outcome(outcome)).expect("close");
            self.store.commit(&TaskCommit::new(done, log)).await.expect("close");
        }
    }
}

fn code(e: EngineError) -> String {
    match e {
        EngineError::Invalid(i) | EngineError::Taken(i) => i.code.to_string(),
        other => panic!("not a refusal: {other:?}"),
    }
}

#[tokio::test]
async fn an_experiment_splits_new_tasks_by_member_and_the_current_half_gets_the_prompt_without_the_change() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let account = w.account.id;

    // What cannot run as an experiment is refused, nothing started.
    let pending = w
        .suggested(
            SuggestionKind::Skill,
            ProposedChange::Skill {
                task_type: "churn_risk".into(),
                guidance: "Keep it short.".into(),
            },
            "skill:pending",
        )
        .await;
    let refused = w.engine.start_experiment(account, pending.id).await.expect_err("pending");
    assert_eq!(code(refused), "suggestion_not_applied");
    let memory = w
        .suggested(
            SuggestionKind::Memory,
            ProposedChange::Memory {
                content: "Members like the 6am class.".into(),
                category: None,
            },
            "memory:6am",
        )
        .await;
    w.engine.accept_suggestion(account, memory.id).await.expect("accept");
    let refused = w.engine.start_experiment(account, memory.id).await.expect_err("memory");
    assert_eq!(code(refused), "experiment_not_supported");
    assert!(matches!(
        w.engine.start_experiment(account, ulid::Ulid::new()).await,
        Err(EngineError::NotFound { .. })
    ));
    assert!(w.engine.experiments(account).await.expect("list").experiments.is_empty());

    let skill = w.accepted_skill().await;
    let started = w.engine.start_experiment(account, skill.id).await.expect("start");
    assert_eq!((started.status, started.suggestion_id), (ExperimentStatus::Running, skill.id));
    assert_eq!(started.task_types, ["churn_risk"]);
    let refused = w.engine.start_experiment(account, skill.id).await.expect_err("again");
    assert_eq!(code(refused), "experiment_running");

    // Forty new churn-risk tasks: each drafted with the version its member was given.
    let mut by_variant = [0usize; 2];
    for i in 0..40 {
        let (task, prompt) = w.drafted(&prompts, &format!("m_exp_{i}")).await;
        let arm = task.experiment.unwrap_or_else(|| panic!("task {i} is in the experiment"));
        assert_eq!(arm.experiment_id, started.id);
        assert_eq!(
            prompt.contains(GUIDANCE),
            arm.variant == Variant::Proposed,
            "task {i} ({:?}) was drafted with the wrong version",
            arm.variant
        );
        // The follow-ups and answers read the prompt the same way.
        let now = w.clock.now();
        let account_now = w.engine.account(account).await.expect("account");
        let later = crate::conversation::prompt::system_prompt(&crate::conversation::prompt::PromptInput::for_task(
            &task,
            &account_now,
            &[],
            &[],
            now,
        ))
        .expect("prompt");
        assert_eq!(later.contains(GUIDANCE), arm.variant == Variant::Proposed);
        // Sticky: the member is given the same version on any later task of the experiment.
        let again = crate::owner::experiment::arm_for(&account_now, "churn_risk", &task.member.id);
        assert_eq!(again, Some(arm));
        by_variant[usize::from(arm.variant == Variant::Proposed)] += 1;
    }
    assert!(
        by_variant.iter().all(|n| (8..=32).contains(n)),
        "about half and half: {by_variant:?}"
    );

    // A type the change does not touch is not split.
    let other = w.approved("win_back", "m_exp_other").await;
    assert_eq!(other.experiment, None);

    // The report lists both versions (nothing closed yet).
    let report = w.engine.experiments(account).await.expect("list");
    let [e] = report.experiments.as_slice() else {
        panic!("one: {report:?}")
    };
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["current", "proposed"]);
    assert!(e.verdict.starts_with("not enough tasks yet: 0 and 0"), "{}", e.verdict);

    // Undoing the suggestion ends its experiment: every new task has the current version.
    w.engine.undo_suggestion(account, skill.id).await.expect("undo");
    let report = w.engine.experiments(account).await.expect("list");
    assert_eq!(report.experiments[0].status, ExperimentStatus::Ended);
    let (task, prompt) = w.drafted(&prompts, "m_exp_after").await;
    assert_eq!((task.experiment, prompt.contains(GUIDANCE)), (None, false));
}

#[tokio::test]
async fn a_planted_win_is_offered_to_the_owner_and_kept_when_they_say_so() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let account = w.account.id;
    let skill = w.accepted_skill().await;
    let started = w.engine.start_experiment(account, skill.id).await.expect("start");

    // A day later: 40 proposed, 30 retained; 40 current, 12 retained.
    w.clock.set(day0() + days(1));
    w.closed_in(started.id, Variant::Proposed, 40, 30).await;
    w.closed_in(started.id, Variant::Current, 40, 12).await;
    w.clock.set(day0() + days(2));
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!((run.accounts, run.won, run.kept, run.ended), (1, 1, 0, 0), "{run:?}");
    let report = w.engine.experiments(account).await.expect("list");
    let e = &report.experiments[0];
    assert_eq!(e.status, ExperimentStatus::Won);
    assert_eq!(
        e.variants.iter().map(|v| (v.n, v.succeeded)).collect::<Vec<_>>(),
        [(40, 12), (40, 30)]
    );
    let [low, _] = e.ci95.expect("interval");
    assert!(low > 0.0, "{e:?}");
    assert!(
        e.verdict.starts_with("the proposed version wins: 45.0 points more"),
        "{}",
        e.verdict
    );
    let (notices, _) = w.engine.owner_notices(account, None, None).await.expect("notices");
    let offer = notices
        .iter()
        .find(|n| n.title.contains("has a winner"))
        .unwrap_or_else(|| panic!("the owner is offered to keep it: {notices:?}"));
    assert!(
        offer.detail.contains("https://app.example.com/app/lift#experiments") && !offer.detail.contains("/api/"),
        "{}",
        offer.detail
    );
    // Offered once: the next run has nothing new to say.
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!((run.won, run.kept), (0, 0));

    // The owner keeps it: every new task gets the proposed version, no split.
    let kept = w.engine.keep_experiment(account, started.id).await.expect("keep");
    assert_eq!((kept.status, kept.auto_kept), (ExperimentStatus::Kept, false));
    assert_eq!(
        kept.variants.iter().map(|v| v.n).collect::<Vec<_>>(),
        [40, 40],
        "the answer counts as the list does"
    );
    let again = w.engine.keep_experiment(account, started.id).await.expect_err("decided");
    assert_eq!(code(again), "experiment_decided");
    let (task, prompt) = w.drafted(&prompts, "m_after_keep").await;
    assert_eq!((task.experiment, prompt.contains(GUIDANCE)), (None, true));
    let s = w.store.get_suggestion(account, skill.id).await.expect("get").expect("suggestion");
    assert_eq!(s.status, SuggestionStatus::Applied);
}

#[tokio::test]
async fn with_the_trust_gradient_on_a_win_is_kept_at_once_and_the_owner_told() {
    let w = world().await;
    let account = w.account.id;
    let patch = super::super::SettingsPatch {
        auto_save_memories: Some(true),
        ..Default::default()
    };
    w.engine.update_settings(account, patch).await.expect("settings");
    let skill = w.accepted_skill().await;
    let started = w.engine.start_experiment(account, skill.id).await.expect("start");
    w.closed_in(started.id, Variant::Proposed, 40, 30).await;
    w.closed_in(started.id, Variant::Current, 40, 12).await;
    w.clock.set(day0() + days(1));
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!((run.won, run.kept), (0, 1), "{run:?}");
    let e = &w.engine.experiments(account).await.expect("list").experiments[0];
    assert_eq!((e.status, e.auto_kept), (ExperimentStatus::Kept, true));
    assert!(e.verdict.starts_with("kept for every task"), "{}", e.verdict);
    let (notices, _) = w.engine.owner_notices(account, None, None).await.expect("notices");
    let told = notices
        .iter()
        .find(|n| n.title.starts_with("Kept a better message"))
        .unwrap_or_else(|| panic!("the owner is told: {notices:?}"));
    assert!(
        told.detail.contains("https://app.example.com/app/suggestions") && !told.detail.contains("/api/"),
        "{}",
        told.detail
    );
}

#[tokio::test]
async fn an_undecided_experiment_ends_at_its_time_limit_and_the_current_version_stays() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let account = w.account.id;
    let skill = w.accepted_skill().await;
    let started = w.engine.start_experiment(account, skill.id).await.expect("start");
    w.clock.set(day0() + days(10));
    // The same rate in both: no win, whatever the sample.
    w.closed_in(started.id, Variant::Proposed, 40, 20).await;
    w.closed_in(started.id, Variant::Current, 40, 20).await;
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!((run.won, run.kept, run.ended), (0, 0, 0), "still running before its limit");
    assert_eq!(
        w.engine.experiments(account).await.expect("list").experiments[0].status,
        ExperimentStatus::Running
    );

    // Its time limit passes.
    w.clock.set(day0() + days(EXPERIMENT_DAYS) + SignedDuration::from_hours(1));
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!(run.ended, 1, "{run:?}");
    let e = &w.engine.experiments(account).await.expect("list").experiments[0];
    assert_eq!(e.status, ExperimentStatus::Ended);
    assert!(
        e.verdict.starts_with("ended without a win; the current version stays"),
        "{}",
        e.verdict
    );
    let s = w.store.get_suggestion(account, skill.id).await.expect("get").expect("suggestion");
    assert!(s.undone_at.is_some() && s.status == SuggestionStatus::Dismissed, "{s:?}");
    let settings = w.engine.account(account).await.expect("account").settings;
    assert!(settings.learned.is_empty(), "the change is gone: {:?}", settings.learned);
    let (task, prompt) = w.drafted(&prompts, "m_after_end").await;
    assert_eq!((task.experiment, prompt.contains(GUIDANCE)), (None, false));
    // Nothing more to decide.
    let run = w.engine.decide_experiments().await.expect("decide");
    assert_eq!(run.accounts, 0);
}
