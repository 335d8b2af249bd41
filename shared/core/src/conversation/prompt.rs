//! The system prompt every AI call is given, in six layers:
//!
//! 1. the base skill (`skills/_base.md`): rules for every task type, never replaced;
//! 2. the task type's skill — or the owner's replacement for it;
//! 3. the account context: the business profile and its business memories;
//! 4. the owner's additions for this agent or task type;
//! 5. the goal and the outcomes to choose from, with the budget left;
//! 6. the member's other open tasks, so this one keeps to its subject.
//!
//! What the account learned from accepted skill and rubric suggestions joins layers 2 and 5:
//! guidance beside the type's skill, criteria beside how it is judged.
//!
//! Each layer is its own function so each is tested alone; [`system_prompt`] joins the
//! non-empty ones. Only facts handed in are stated: the prompt never fills a gap.

use std::fmt::Write;

use jiff::Timestamp;

use crate::conversation::skills;
use crate::kernel::ids::TaskId;
use crate::owner::account::{Account, AgentOverride, Profile};
use crate::owner::business_memory::{self, BusinessMemory};
use crate::owner::learned::{self, Learned, LearnedKind};
use crate::task::progress::GoalProgress;
use crate::task::task_type::{self, CompletionType, OutcomeKind, TaskTypeDef};
use crate::task::{Budget, Task};

/// What a task has left to spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetLeft {
    pub messages: u32,
    pub turns: u32,
    /// Whole days until the task's time budget ends (0 on its last day or after).
    pub days: i64,
}

impl BudgetLeft {
    pub fn of(budget: &Budget, now: Timestamp) -> Self {
        let seconds = budget.expires_at.as_second() - now.as_second();
        Self {
            messages: budget.messages_left(),
            turns: budget.turns_max.saturating_sub(budget.turns_used),
            days: (seconds / 86_400).max(0),
        }
    }
}

/// Everything the prompt is made of.
#[derive(Clone, Debug)]
pub struct PromptInput<'a> {
    pub task_type: &'a str,
    /// The task's own goal (an ad hoc task's goal is the owner's words).
    pub goal: &'a str,
    pub business_name: &'a str,
    pub profile: &'a Profile,
    pub overrides: &'a [AgentOverride],
    /// The skills and rubrics the account learned from accepted suggestions.
    pub learned: &'a [Learned],
    pub memories: &'a [BusinessMemory],
    pub budget: BudgetLeft,
    /// The task the prompt is for, left out of the cross-task layer.
    pub task_id: Option<TaskId>,
    /// The member's tasks (any status: only the open ones are shown).
    pub member_tasks: &'a [Task],
    /// The task's goal progress as last evaluated.
    pub progress: Option<&'a GoalProgress>,
    /// The change a message experiment is trying, left out for a task given the current
    /// version (`crate::owner::experiment`).
    pub left_out: Option<&'a crate::owner::experiment::Trial>,
    pub now: Timestamp,
}

impl<'a> PromptInput<'a> {
    /// The prompt for `task` of `account`, with the account's memories and the member's tasks.
    pub fn for_task(
        task: &'a Task,
        account: &'a Account,
        memories: &'a [BusinessMemory],
        member_tasks: &'a [Task],
        now: Timestamp,
    ) -> Self {
        Self {
            task_type: &task.task_type,
            goal: &task.goal,
            business_name: account.sender_name(),
            profile: &account.settings.profile,
            overrides: &account.settings.agent_overrides,
            learned: &account.settings.learned,
            memories,
            budget: BudgetLeft::of(&task.budget, now),
            task_id: Some(task.id),
            member_tasks,
            progress: task.goal_progress.as_ref(),
            left_out: crate::owner::experiment::left_out(account, task.experiment.as_ref()),
            now,
        }
    }
}

impl<'a> PromptInput<'a> {
    /// The prompt for a task of `def` not made yet (its first draft, its plan): the full
    /// budget of its type.
    pub fn for_new(
        def: &'a TaskTypeDef,
        goal: &'a str,
        account: &'a Account,
        memories: &'a [BusinessMemory],
        member_tasks: &'a [Task],
        now: Timestamp,
    ) -> Self {
        Self {
            task_type: def.key,
            goal,
            business_name: account.sender_name(),
            profile: &account.settings.profile,
            overrides: &account.settings.agent_overrides,
            learned: &account.settings.learned,
            memories,
            budget: BudgetLeft {
                messages: def.budget.max_messages,
                turns: def.budget.max_turns,
                days: i64::from(def.budget.max_days),
            },
            task_id: None,
            member_tasks,
            progress: None,
            left_out: None,
            now,
        }
    }
}

/// A task type without instructions: the task must go to the owner.
#[derive(Debug, thiserror::Error)]
#[error("no skill for task type {0}: the owner must handle it")]
pub struct MissingSkill(pub String);

/// The six layers joined, empty ones left out.
pub fn system_prompt(input: &PromptInput<'_>) -> Result<String, MissingSkill> {
    let def = task_type::definition(input.task_type);
    let (learned, overrides) = crate::owner::experiment::without(input.left_out, input.learned, input.overrides);
    let layers = [
        base_layer().to_owned(),
        type_layer(def, &overrides)?,
        learned_layer(def, &learned, LearnedKind::Skill),
        account_layer(input.business_name, input.profile, input.memories, input.now),
        override_layer(def, &overrides),
        goal_layer(def, input.goal, input.budget),
        learned_layer(def, &learned, LearnedKind::Rubric),
        progress_layer(input.progress),
        cross_task_layer(def, input.task_id, input.member_tasks),
    ];
    Ok(layers
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n---\n\n"))
}

/// Layer 1: the rules every task type inherits.
pub fn base_layer() -> &'static str {
    skills::BASE
}

/// Layer 2: the task type's skill, or the owner's replacement for it.
pub fn type_layer(def: &TaskTypeDef, overrides: &[AgentOverride]) -> Result<String, MissingSkill> {
    if let Some(text) = AgentOverride::effective(overrides, def.agent, def.key)
        .and_then(|o| o.prompt_override.as_deref())
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(format!("# Instructions from the owner for {} tasks\n\n{}", def.label, text.trim()));
    }
    skills::skill(def.skill_file)
        .map(str::to_owned)
        .ok_or_else(|| MissingSkill(def.key.to_owned()))
}

/// Beside layer 2 and layer 5: what this business learned about the type from accepted
/// suggestions — skill guidance with the skill, rubric criteria with how the work is judged.
pub fn learned_layer(def: &TaskTypeDef, learned: &[Learned], kind: LearnedKind) -> String {
    let texts: Vec<&str> = learned::of(learned, kind, def.key).collect();
    if texts.is_empty() {
        return String::new();
    }
    let heading = match kind {
        LearnedKind::Skill => format!("# What this business learned about {} tasks (follow it)", def.label),
        LearnedKind::Rubric => format!(
            "# How this business judges {} work (a good message and a good close meet every criterion)",
            def.label
        ),
    };
    let mut out = heading;
    for text in texts {
        out.push('\n');
        out.push_str(text);
    }
    out
}

/// Layer 3: who the business is and what it has told us (profile and business memories).
pub fn account_layer(business_name: &str, profile: &Profile, memories: &[BusinessMemory], now: Timestamp) -> String {
    let mut out = String::from("# The business\n");
    let name = profile.display_name.as_deref().unwrap_or(business_name);
    let _ = write!(out, "- Name: {name}");
    if let Some(kind) = &profile.business_type {
        let _ = write!(out, " ({kind})");
    }
    out.push('\n');
    let mut line = |label: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            let _ = writeln!(out, "- {label}: {}", v.trim());
        }
    };
    let list = |items: &[String]| (!items.is_empty()).then(|| items.join(", "));
    line("Owner", profile.owner_first_name.clone());
    line("Voice", profile.vibe.clone());
    line("Classes", list(&profile.class_types));
    line("Programs", list(&profile.special_programs));
    line("Current promotion (mention only if it fits)", profile.current_promo.clone());
    line(
        "Ways to stay for a member the cost troubles (the only such offer to make)",
        profile.ways_to_stay.clone(),
    );
    line("Greeting", profile.typical_greeting.clone());
    line(
        "Sign off as",
        profile
            .sign_off
            .clone()
            .or_else(|| profile.owner_first_name.clone())
            .or_else(|| Some(format!("the team at {name}"))),
    );
    line("NEVER mention", list(&profile.never_mention));
    line("Always include", list(&profile.always_include));
    line("Phone", profile.contact_phone.clone());
    line("Address", profile.contact_address.clone());
    line("Website", profile.contact_website.clone());
    line(
        "Where members update their card (the only payment link you may give)",
        profile.billing_link.clone(),
    );
    out.push_str(
        "Anything about the business not written here (hours, prices, policies, schedules) is unknown to you: \
         ask the owner by escalating, never guess.\n",
    );
    let known = business_memory::for_prompt(memories, now);
    let (member, business): (Vec<_>, Vec<_>) = known.into_iter().partition(|m| m.member_id.is_some());
    if !business.is_empty() {
        out.push_str("\n# What the owner has told us about the business\n");
        for m in business {
            let _ = writeln!(out, "- {}", m.content.trim());
        }
    }
    if !member.is_empty() {
        out.push_str("\n# What the owner has told us about this member\n");
        for m in member {
            let _ = writeln!(out, "- {}", m.content.trim());
        }
    }
    out
}

/// Layer 4: the owner's additions for this agent or task type (the most specific override).
pub fn override_layer(def: &TaskTypeDef, overrides: &[AgentOverride]) -> String {
    AgentOverride::effective(overrides, def.agent, def.key)
        .and_then(|o| o.prompt_additions.as_deref())
        .filter(|t| !t.trim().is_empty())
        .map(|t| format!("# The owner's instructions (follow them)\n\n{}", t.trim()))
        .unwrap_or_default()
}

/// Layer 5: the goal, the outcomes to choose from, how to judge, and the budget left.
pub fn goal_layer(def: &TaskTypeDef, goal: &str, budget: BudgetLeft) -> String {
    let mut out = format!("# Goal\n{}\n", goal.trim());
    if goal.trim() != def.goal.summary {
        let _ = writeln!(out, "(This is a {} task: {}.)", def.label, def.goal.summary);
    }
    out.push_str("\n# Possible outcomes (choose only from these codes)\n");
    for o in def.goal.outcomes {
        let kind = match o.kind {
            OutcomeKind::Positive => "positive",
            OutcomeKind::Neutral => "neutral",
            OutcomeKind::Negative => "negative",
        };
        let _ = writeln!(out, "- `{}` ({kind}): {}", o.code, o.description);
    }
    out.push_str("\n# How to judge\n");
    match (def.goal.completion, def.goal.judgment_criteria) {
        (CompletionType::Signal, _) => {
            out.push_str("This task completes when a concrete signal is seen. Never close it on the conversation alone.\n")
        }
        (_, Some(criteria)) => {
            let _ = writeln!(out, "{criteria}");
        }
        (_, None) => out.push_str("Use your judgment from the whole conversation.\n"),
    }
    out.push_str(
        "A promise is not an event: close on words only provisionally, with the outcome that says so. \
         Rate your confidence 0-100; below 60 do not close — wait or escalate.\n",
    );
    let _ = write!(
        out,
        "\n# Budget left\n{} message(s) to the member, {} reply turn(s), {} day(s).\n",
        budget.messages, budget.turns, budget.days
    );
    if budget.messages == 0 || budget.turns == 0 {
        out.push_str("Nothing more may be sent: do not reply. Wait, close with an outcome, or escalate.\n");
    } else if budget.messages == 1 {
        out.push_str("This is the last message you may send: make it complete and leave the door open.\n");
    }
    if budget.days <= 1 {
        out.push_str("The task's time is nearly up: if the conversation is warm but unsettled, escalate rather than let it lapse.\n");
    }
    out
}

/// Layer 5b: how far the task is towards its goal, as last evaluated: the
/// percentage, the outcome it stands at, the milestones met and pending, the evidence.
pub fn progress_layer(progress: Option<&GoalProgress>) -> String {
    let Some(p) = progress else {
        return String::new();
    };
    let mut out = format!(
        "# Goal progress so far
{}% — currently `{}` (evaluator confidence {}, evidence: {:?})
",
        p.progress_pct, p.current_outcome, p.confidence, p.evidence_type
    );
    if !p.evidence.trim().is_empty() {
        let _ = writeln!(out, "Evidence: {}", p.evidence.trim());
    }
    if !p.milestones.is_empty() {
        let marks: Vec<String> = p
            .milestones
            .iter()
            .map(|m| match m.hit_at {
                Some(at) if m.hit => format!("✓ {} ({})", m.name, at.strftime("%Y-%m-%d")),
                _ if m.hit => format!("✓ {}", m.name),
                _ => format!("○ {} (pending)", m.name),
            })
            .collect();
        let _ = writeln!(out, "Milestones: {}", marks.join(" | "));
    }
    if !p.risks.is_empty() {
        let _ = writeln!(out, "Risks: {}", p.risks.join("; "));
    }
    out.push_str("Build on what was reached; do not ask again for what is done.\n");
    out
}

/// Layer 6: the member's other open tasks, so this task keeps to its subject.
pub fn cross_task_layer(def: &TaskTypeDef, this: Option<TaskId>, member_tasks: &[Task]) -> String {
    let others: Vec<&Task> = member_tasks.iter().filter(|t| Some(t.id) != this && t.is_active()).collect();
    if others.is_empty() {
        return String::new();
    }
    let mut out = format!("# This member's other open tasks ({})\n", others.len());
    for t in &others {
        let other = task_type::definition(&t.task_type);
        let _ = writeln!(
            out,
            "- [{}, {} priority, {}] {}",
            t.task_type,
            t.priority.as_str(),
            t.status.as_str(),
            t.goal.trim()
        );
        if other.subject() != def.subject() {
            let _ = writeln!(out, "  Do not bring up {} — that is handled separately.", other.subject());
        }
    }
    let _ = writeln!(out, "Keep to this task's subject: {}.", def.subject());
    out
}

#[cfg(test)]
mod tests;
