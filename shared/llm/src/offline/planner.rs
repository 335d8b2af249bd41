//! The offline planner: the next step of a planned task, chosen without a model.
//!
//! It reads only what the steps so far came to and the member's facts — never a reply's
//! words — so it changes with the plan's policy (which outreach first, when a person calls,
//! when the owner takes over), apart from how replies and progress are judged.

use openloop_core::ports::{PlanDecision, PlanRequest, PlannedStep};
use openloop_core::task::TaskStatus;
use openloop_core::task::subtasks::Requirement;
use openloop_core::task::task_type::{self, OutcomeKind};

/// The offline planner, one step at a time and conservative: first the outreach
/// the member's facts call for (optional, so a call can still carry the goal), then, if it
/// did not reach the goal, a call by the staff (required); after that the owner decides. A
/// step that reached the goal ends the plan.
pub fn plan_next(r: &PlanRequest) -> PlanDecision {
    const CALL: &str = "staff_call_member";
    let done = |reasoning: String| PlanDecision {
        next: None,
        remaining: Vec::new(),
        reasoning,
    };
    let succeeded = r.steps.iter().find(|s| {
        s.status == TaskStatus::Completed
            && s.outcome
                .as_deref()
                .and_then(|code| task_type::definition(&s.task_type).outcome(code))
                .is_some_and(|o| o.kind == OutcomeKind::Positive)
    });
    if let Some(step) = succeeded {
        return done(format!("the {} step reached the goal", step.task_type));
    }
    if r.steps_left == 0 {
        return done("no steps left; the owner decides".into());
    }
    let allowed = |t: &str| r.step_types.iter().any(|s| s == t);
    if r.steps.is_empty() {
        let facts = &r.facts;
        let outreach = if facts["payment_failing"].as_bool() == Some(true) {
            "payment_recovery"
        } else {
            match facts["status"].as_str() {
                Some("cancelled") => "win_back",
                Some("lead") => "lead_followup",
                _ => "churn_risk",
            }
        };
        if !allowed(outreach) {
            return done(format!(
                "the outreach this member needs ({outreach}) is not a step this task may take"
            ));
        }
        return PlanDecision {
            next: Some(PlannedStep {
                task_type: outreach.into(),
                goal: r.goal.clone(),
                requirement: Requirement::Optional,
            }),
            remaining: if allowed(CALL) {
                vec!["if the outreach does not reach the goal: a call from the staff".into()]
            } else {
                Vec::new()
            },
            reasoning: format!("start with the outreach the member's facts call for ({outreach}); a person can follow"),
        };
    }
    if r.steps.iter().any(|s| s.task_type == CALL) || !allowed(CALL) {
        return done("the outreach and a call were tried without reaching the goal; the owner decides".into());
    }
    PlanDecision {
        next: Some(PlannedStep {
            task_type: CALL.into(),
            goal: format!("Call the member: {}", r.goal),
            requirement: Requirement::Required,
        }),
        remaining: Vec::new(),
        reasoning: "the outreach did not reach the goal; a personal call is the next step".into(),
    }
}

#[cfg(test)]
mod tests {
    use openloop_core::ports::{PlanRequest, StepResult};
    use openloop_core::task::TaskStatus;
    use openloop_core::task::subtasks::Requirement;

    fn request(steps: Vec<StepResult>, facts: serde_json::Value) -> PlanRequest {
        PlanRequest {
            task_type: "ad_hoc".into(),
            goal: "Get Sam back to classes".into(),
            system_prompt: String::new(),
            step_types: ["churn_risk", "win_back", "lead_followup", "payment_recovery", "staff_call_member"]
                .map(String::from)
                .to_vec(),
            steps,
            steps_left: 8,
            facts,
        }
    }

    fn step(task_type: &str, status: TaskStatus, outcome: Option<&str>) -> StepResult {
        StepResult {
            task_type: task_type.into(),
            goal: "g".into(),
            requirement: Requirement::Optional,
            status,
            outcome: outcome.map(String::from),
        }
    }

    #[test]
    fn outreach_first_by_the_facts_then_a_call_then_the_owner() {
        let first = super::plan_next(&request(vec![], serde_json::json!({"status": "cancelled"})));
        let next = first.next.expect("a first step");
        assert_eq!((next.task_type.as_str(), next.requirement), ("win_back", Requirement::Optional));
        let paying = super::plan_next(&request(vec![], serde_json::json!({"status": "active", "payment_failing": true})));
        assert_eq!(paying.next.expect("step").task_type, "payment_recovery");
        let unknown = super::plan_next(&request(vec![], serde_json::Value::Null));
        assert_eq!(unknown.next.expect("step").task_type, "churn_risk");

        let after_silence = super::plan_next(&request(
            vec![step("win_back", TaskStatus::Cancelled, Some("unresponsive"))],
            serde_json::Value::Null,
        ));
        let call = after_silence.next.expect("a call");
        assert_eq!(
            (call.task_type.as_str(), call.requirement),
            ("staff_call_member", Requirement::Required)
        );

        let after_call = super::plan_next(&request(
            vec![
                step("win_back", TaskStatus::Cancelled, Some("unresponsive")),
                step("staff_call_member", TaskStatus::Completed, Some("member_unreachable")),
            ],
            serde_json::Value::Null,
        ));
        assert_eq!(after_call.next, None, "the owner decides after a call");

        let reached = super::plan_next(&request(
            vec![step("win_back", TaskStatus::Completed, Some("owner_handled"))],
            serde_json::Value::Null,
        ));
        assert_eq!(reached.next, None, "{}", reached.reasoning);
        let mut no_room = request(vec![], serde_json::Value::Null);
        no_room.steps_left = 0;
        assert_eq!(super::plan_next(&no_room).next, None);
    }
}
