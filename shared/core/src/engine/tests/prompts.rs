//! Every draft the agent writes gets the composed prompt: the owner's rules
//! ("never mention billing") reach first drafts, follow-ups and guidance drafts, with the
//! type's skill, the account's context, the goal and the member's other open tasks.

use std::sync::Mutex;

use super::*;
use crate::owner::account::AgentOverride;

/// The fixed agent, keeping every draft's system prompt.
#[derive(Default)]
struct Prompts(Mutex<Vec<(u32, String)>>);

#[async_trait::async_trait]
impl crate::ports::Agent for Prompts {
    async fn draft(&self, request: &crate::ports::DraftRequest) -> Result<crate::ports::Drafted, crate::ports::AgentError> {
        self.0.lock().expect("prompts").push((request.touch, request.system_prompt.clone()));
        FixedAgent.draft(request).await
    }
    async fn evaluate_reply(
        &self,
        r: &crate::ports::ReplyRequest,
    ) -> Result<crate::conversation::reply::ReplyEvaluation, crate::ports::AgentError> {
        FixedAgent.evaluate_reply(r).await
    }
    async fn evaluate_completion(
        &self,
        r: &crate::ports::CompletionRequest,
    ) -> Result<crate::ports::GoalProgress, crate::ports::AgentError> {
        FixedAgent.evaluate_completion(r).await
    }
    async fn plan_next(&self, r: &crate::ports::PlanRequest) -> Result<crate::ports::PlanDecision, crate::ports::AgentError> {
        FixedAgent.plan_next(r).await
    }
}

const RULE: &str = "Never mention billing or prices.";

#[tokio::test]
async fn every_draft_carries_the_owners_rules_the_skill_the_goal_and_the_members_other_tasks() {
    let mut w = world().await;
    let prompts = Arc::new(Prompts::default());
    w.engine.agent = prompts.clone();
    let patch = super::super::SettingsPatch {
        agent_overrides: Some(vec![AgentOverride {
            agent: "*".into(),
            task_type: None,
            prompt_override: None,
            prompt_additions: Some(RULE.into()),
        }]),
        profile: Some(crate::owner::account::Profile {
            display_name: Some("Harbour Gym".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    w.engine.update_settings(w.account.id, patch).await.expect("settings");
    let account = w.engine.account(w.account.id).await.expect("account");
    // Another open task of the member's, for the cross-task layer.
    w.approved("win_back", "m_prompt").await;
    // A first draft written by the agent at creation (no owner draft).
    let mut input = w.new_task("churn_risk", "m_prompt").await;
    input.draft = None;
    input.goal = "Bring Sam back to the 6am class".into();
    let task = w.engine.create_task(&account, input).await.expect("create").task().clone();
    w.engine.approve(w.account.id, task.id, None).await.expect("approve");
    w.run().await;
    // The follow-up touches, drafted at send time (one member, one message a day).
    for day in 1..=12 {
        w.clock.set(day0() + days(day));
        w.run().await;
    }
    // A guidance draft, from the owner's words.
    w.engine.guidance(w.account.id, task.id, "Tell Sam the pool reopened").await.ok();
    let seen = prompts.0.lock().expect("prompts").clone();
    assert!(seen.len() >= 2, "a first draft and a follow-up at least: {seen:?}");
    assert!(
        seen.iter().any(|(touch, _)| *touch == 0) && seen.iter().any(|(touch, _)| *touch > 0),
        "{seen:?}"
    );
    for (touch, prompt) in &seen {
        assert!(prompt.contains(RULE), "touch {touch}: the owner's rule:\n{prompt}");
        assert!(prompt.contains("Harbour Gym"), "touch {touch}: the account's context:\n{prompt}");
        assert!(
            prompt.contains("Bring Sam back") || prompt.contains("Goal"),
            "touch {touch}: the goal:\n{prompt}"
        );
    }
    let follow_up = seen
        .iter()
        .find(|(touch, _)| *touch > 0)
        .map(|(_, p)| p.clone())
        .unwrap_or_default();
    assert!(follow_up.contains("Bring Sam back to the 6am class"), "{follow_up}");
    assert!(
        follow_up.contains("win_back") || follow_up.contains("Win"),
        "the member's other open task:\n{follow_up}"
    );
}
