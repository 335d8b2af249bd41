//! The owner's edits of a plan before approving it (spec §27.3: edit a step's words, reorder,
//! remove a step; or ask the agent to plan again with instructions), and what each edit leaves
//! for learning. Pure: the engine reads
//! the task, applies an edit here and commits (`engine/day/plans/`).
//!
//! A plan's positions are its touches: step 1 is the first message, step 2 the first
//! follow-up… so a step's timing belongs to its position (the cadence schedules the touch),
//! while its words move with it. The first step's draft is the task's draft; a follow-up
//! touch of an approved plan sends its step's draft.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::task::Draft;
use crate::task::controls::{PlanStep, TaskPlan};

/// The longest step description kept.
pub const DESCRIPTION_MAX_CHARS: usize = 500;
/// The longest step draft kept (a mail body's limit).
pub const DRAFT_MAX_CHARS: usize = 20_000;
/// The longest instruction for planning again.
pub const INSTRUCTIONS_MAX_CHARS: usize = 1_000;
crate::kernel::bounded::bounded_text! {
    /// A plan step's new description.
    pub StepDescription = crate::kernel::bounded::TextRule::text(DESCRIPTION_MAX_CHARS, "invalid_plan");
    /// A plan step's new draft (its mail's body).
    pub StepDraft = crate::kernel::bounded::TextRule::text(DRAFT_MAX_CHARS, "invalid_plan");
    /// What the agent should do differently ("don't mention the promotion, just check in").
    pub Instructions = crate::kernel::bounded::TextRule::text(INSTRUCTIONS_MAX_CHARS, "invalid_instructions").min(1);
}

/// How many times the owner may ask the agent to plan one task again (each costs AI calls).
pub const MAX_REPLANS: usize = 5;
/// The most feedback entries a plan keeps (the latest).
pub const FEEDBACK_KEPT: usize = 50;

/// What kind of word the owner gave on a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanFeedbackKind {
    /// The owner changed the plan: a step's words, the order, or a step removed.
    PlanEdit,
    /// The owner told the agent how to plan it again.
    Instruction,
}

/// One edit or instruction, kept on the plan and in the task's learning record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFeedback {
    pub kind: PlanFeedbackKind,
    /// `edited`, `reordered`, `removed` or `replanned`.
    pub change: String,
    /// The step it was about, numbered as it was before the edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_number: Option<u32>,
    /// What the agent had written (a step's words, the old order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// What the owner made of it (the new words, the new order, the instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<String>,
    pub at: Timestamp,
}

/// One step of the plan as the owner wants it: the step it was (its number now), and its new
/// words if they change. The list's order is the new order; a step not listed is removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StepEdit {
    pub step_number: u32,
    #[serde(default, deserialize_with = "StepDescription::de_optional")]
    #[cfg_attr(feature = "openapi", schema(schema_with = StepDescription::optional_schema))]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "StepDraft::de_optional")]
    #[cfg_attr(feature = "openapi", schema(schema_with = StepDraft::optional_schema))]
    pub draft_content: Option<String>,
}

/// A plan may be changed while it waits for the owner's approval.
pub fn editable(plan: Option<&TaskPlan>) -> bool {
    plan.is_some_and(|p| p.approved_at.is_none())
}

/// The draft a step's text stands for: `Subject: …` on its first line, then the body; a
/// text without one is a body (and `fallback_subject` its subject).
pub fn draft_of(content: &str, fallback_subject: &str) -> Draft {
    let content = content.replace("\r\n", "\n");
    if let Some(rest) = content.strip_prefix("Subject:") {
        let (subject, body) = rest.split_once('\n').unwrap_or((rest, ""));
        return Draft {
            subject: subject.trim().to_owned(),
            body: body.trim_start_matches('\n').trim_end().to_owned(),
        };
    }
    Draft {
        subject: fallback_subject.to_owned(),
        body: content.trim_end().to_owned(),
    }
}

fn clean(text: Option<&str>, max: usize, field: &str, code: &str) -> Result<Option<String>, InvalidInput> {
    let Some(text) = text else { return Ok(None) };
    let text = text.replace("\r\n", "\n");
    let text = text.trim();
    if text.is_empty() || text.chars().count() > max {
        return Err(InvalidInput::new(code, format!("{field} must be 1-{max} characters")));
    }
    Ok(Some(text.to_owned()))
}

/// The plan as the owner edited it, with the feedback each change leaves (none when nothing
/// changed). Every step named must exist, once; at least one step stays.
pub fn edit(plan: &TaskPlan, steps: &[StepEdit], now: Timestamp) -> Result<(TaskPlan, Vec<PlanFeedback>), InvalidInput> {
    if steps.is_empty() {
        return Err(InvalidInput::new(
            "invalid_plan",
            "a plan keeps at least one step; skip or cancel the task to do nothing",
        ));
    }
    let mut seen = Vec::new();
    for s in steps {
        if !plan.steps.iter().any(|p| p.step_number == s.step_number) {
            return Err(InvalidInput::new(
                "invalid_plan",
                format!("the plan has no step {} (its steps are 1-{})", s.step_number, plan.steps.len()),
            ));
        }
        if seen.contains(&s.step_number) {
            return Err(InvalidInput::new("invalid_plan", format!("step {} is named twice", s.step_number)));
        }
        seen.push(s.step_number);
    }
    let mut feedback = Vec::new();
    let entry = |change: &str, step: Option<u32>, original: Option<String>, edited: Option<String>| PlanFeedback {
        kind: PlanFeedbackKind::PlanEdit,
        change: change.to_owned(),
        step_number: step,
        original,
        edited,
        at: now,
    };
    let mut next_steps: Vec<PlanStep> = Vec::new();
    for (position, s) in steps.iter().enumerate() {
        let Some(old) = plan.steps.iter().find(|p| p.step_number == s.step_number) else {
            continue;
        };
        let mut step = old.clone();
        let description = clean(
            s.description.as_deref(),
            DESCRIPTION_MAX_CHARS,
            "a step's description",
            "invalid_plan",
        )?;
        if let Some(d) = description.filter(|d| d != old.description.trim()) {
            feedback.push(entry(
                "edited",
                Some(old.step_number),
                Some(old.description.clone()),
                Some(d.clone()),
            ));
            step.description = d;
        }
        let draft = clean(s.draft_content.as_deref(), DRAFT_MAX_CHARS, "a step's draft", "invalid_plan")?;
        let before = old.draft_content.as_deref().map(|t| t.replace("\r\n", "\n"));
        if let Some(d) = draft.filter(|d| Some(d.as_str()) != before.as_deref().map(str::trim)) {
            feedback.push(entry("edited", Some(old.step_number), old.draft_content.clone(), Some(d.clone())));
            step.draft_content = Some(d);
        }
        // The position's timing: the cadence schedules the touch, whatever the words.
        step.timing = plan.steps.get(position).map_or_else(|| old.timing.clone(), |p| p.timing.clone());
        step.step_number = u32::try_from(position + 1).unwrap_or(u32::MAX);
        next_steps.push(step);
    }
    for old in plan.steps.iter().filter(|p| !seen.contains(&p.step_number)) {
        let words = old.draft_content.clone().unwrap_or_else(|| old.description.clone());
        feedback.push(entry("removed", Some(old.step_number), Some(words), None));
    }
    let order: Vec<u32> = steps.iter().map(|s| s.step_number).collect();
    let mut kept_in_order = order.clone();
    kept_in_order.sort_unstable();
    if order != kept_in_order {
        let list = |n: &[u32]| n.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        feedback.push(entry("reordered", None, Some(list(&kept_in_order)), Some(list(&order))));
    }
    let mut next = plan.clone();
    next.steps = next_steps;
    next.estimated_budget.messages = next
        .estimated_budget
        .messages
        .min(u32::try_from(next.steps.len()).unwrap_or(u32::MAX));
    next.feedback = kept(&plan.feedback, &feedback);
    Ok((next, feedback))
}

/// The instruction for planning again, checked; and whether the task may be planned again.
pub fn instruction(plan: &TaskPlan, text: &str) -> Result<String, InvalidInput> {
    let text = clean(Some(text), INSTRUCTIONS_MAX_CHARS, "instructions", "invalid_instructions")?.unwrap_or_default();
    let replans = plan.feedback.iter().filter(|f| f.kind == PlanFeedbackKind::Instruction).count();
    if replans >= MAX_REPLANS {
        return Err(InvalidInput::new(
            "replan_limit",
            format!("a task is planned again at most {MAX_REPLANS} times; edit its steps, or skip it and open a new one"),
        ));
    }
    Ok(text)
}

/// A new plan the agent made from the owner's instruction: it keeps the old plan's feedback
/// and adds the instruction to it.
pub fn replanned(old: &TaskPlan, mut new: TaskPlan, instruction: &str, now: Timestamp) -> TaskPlan {
    let summary = old
        .steps
        .iter()
        .map(|s| format!("{}. {}", s.step_number, s.description))
        .collect::<Vec<_>>()
        .join("; ");
    let entry = PlanFeedback {
        kind: PlanFeedbackKind::Instruction,
        change: "replanned".into(),
        step_number: None,
        original: Some(summary),
        edited: Some(instruction.to_owned()),
        at: now,
    };
    new.feedback = kept(&old.feedback, std::slice::from_ref(&entry));
    new
}

fn kept(before: &[PlanFeedback], added: &[PlanFeedback]) -> Vec<PlanFeedback> {
    let mut all: Vec<PlanFeedback> = before.iter().chain(added).cloned().collect();
    let excess = all.len().saturating_sub(FEEDBACK_KEPT);
    all.drain(..excess);
    all
}

/// The log's words for what changed.
pub fn describe(feedback: &[PlanFeedback]) -> String {
    feedback
        .iter()
        .map(|f| match (f.change.as_str(), f.step_number) {
            ("reordered", _) => format!(
                "steps reordered ({} → {})",
                f.original.as_deref().unwrap_or_default(),
                f.edited.as_deref().unwrap_or_default()
            ),
            (change, Some(n)) => format!("step {n} {change}"),
            (change, None) => change.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::controls::PlanBudget;
    use crate::testing::at;

    fn step(n: u32, timing: &str) -> PlanStep {
        PlanStep {
            step_number: n,
            action_type: "send_email".into(),
            description: format!("step {n}"),
            draft_content: Some(format!("Subject: S{n}\n\nbody {n}")),
            reasoning: String::new(),
            timing: timing.into(),
            requires_approval: true,
            confidence: 70,
        }
    }

    fn plan() -> TaskPlan {
        TaskPlan {
            goal: "g".into(),
            member_context: String::new(),
            steps: vec![step(1, "immediately"), step(2, "day 3 if no reply"), step(3, "day 8 if no reply")],
            alternative_approach: None,
            estimated_budget: PlanBudget {
                messages: 3,
                days: 14,
                ai_calls: 2,
            },
            created_at: at("2026-01-01T00:00:00Z"),
            approved_at: None,
            feedback: Vec::new(),
        }
    }

    fn keep(n: u32) -> StepEdit {
        StepEdit {
            step_number: n,
            ..StepEdit::default()
        }
    }

    #[test]
    fn a_reorder_moves_the_words_and_keeps_each_positions_timing() {
        let (next, feedback) = edit(&plan(), &[keep(2), keep(1), keep(3)], at("2026-01-02T00:00:00Z")).expect("edited");
        assert_eq!(next.steps[0].description, "step 2");
        assert_eq!(next.steps[0].step_number, 1);
        assert_eq!(next.steps[0].timing, "immediately");
        assert_eq!(next.steps[1].timing, "day 3 if no reply");
        assert_eq!(feedback.len(), 1);
        assert_eq!(feedback[0].change, "reordered");
        assert_eq!(feedback[0].edited.as_deref(), Some("2, 1, 3"));
    }

    #[test]
    fn a_removed_step_and_an_edit_are_each_kept_as_feedback() {
        let edited = StepEdit {
            step_number: 1,
            description: None,
            draft_content: Some("Subject: New\n\nshorter".into()),
        };
        let (next, feedback) = edit(&plan(), &[edited, keep(2)], at("2026-01-02T00:00:00Z")).expect("edited");
        assert_eq!(next.steps.len(), 2);
        assert_eq!(next.estimated_budget.messages, 2);
        let changes: Vec<&str> = feedback.iter().map(|f| f.change.as_str()).collect();
        assert_eq!(changes, ["edited", "removed"]);
        assert_eq!(feedback[0].original.as_deref(), Some("Subject: S1\n\nbody 1"));
        assert_eq!(next.feedback.len(), 2);
        assert_eq!(
            draft_of(next.steps[0].draft_content.as_deref().unwrap_or_default(), "x").subject,
            "New"
        );
    }

    #[test]
    fn an_unknown_repeated_or_empty_step_list_is_refused() {
        assert!(edit(&plan(), &[], at("2026-01-02T00:00:00Z")).is_err());
        assert!(edit(&plan(), &[keep(4)], at("2026-01-02T00:00:00Z")).is_err());
        assert!(edit(&plan(), &[keep(1), keep(1)], at("2026-01-02T00:00:00Z")).is_err());
        let blank = StepEdit {
            step_number: 1,
            description: Some("  ".into()),
            draft_content: None,
        };
        assert!(edit(&plan(), &[blank], at("2026-01-02T00:00:00Z")).is_err());
    }

    #[test]
    fn nothing_changed_leaves_no_feedback() {
        let (next, feedback) = edit(&plan(), &[keep(1), keep(2), keep(3)], at("2026-01-02T00:00:00Z")).expect("edited");
        assert!(feedback.is_empty());
        assert_eq!(next, plan());
    }

    #[test]
    fn a_step_text_reads_as_a_draft() {
        let d = draft_of("Subject: Hi\r\n\r\nline one\nline two\n", "fallback");
        assert_eq!((d.subject.as_str(), d.body.as_str()), ("Hi", "line one\nline two"));
        assert_eq!(draft_of("just a body", "fallback").subject, "fallback");
    }

    #[test]
    fn planning_again_is_limited() {
        let mut p = plan();
        for _ in 0..MAX_REPLANS {
            p = replanned(&p, plan(), "shorter", at("2026-01-02T00:00:00Z"));
        }
        assert_eq!(p.feedback.len(), MAX_REPLANS);
        assert!(instruction(&p, "again").is_err());
        assert!(instruction(&plan(), "   ").is_err());
        assert_eq!(instruction(&plan(), " just check in ").ok().as_deref(), Some("just check in"));
    }
}
