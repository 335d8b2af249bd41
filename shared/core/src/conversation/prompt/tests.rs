use jiff::SignedDuration;

use super::*;
use crate::kernel::ids::MemberId;
use crate::owner::business_memory::MemorySource;
use crate::task::TaskStatus;
use crate::task::task_type::{CHURN_RISK, PAYMENT_RECOVERY, WIN_BACK};
use crate::testing::{at, sample_account, sample_task};

fn now() -> Timestamp {
    at("2026-11-03T14:00:00Z")
}

fn memory(content: &str, member: Option<&str>, confidence: u8, expires_at: Option<Timestamp>) -> BusinessMemory {
    BusinessMemory {
        id: ulid::Ulid::new(),
        account_id: sample_account(now()).id,
        member_id: member.map(|m| MemberId::parse(m).unwrap_or_else(|e| panic!("{e}"))),
        content: content.into(),
        category: None,
        source: MemorySource::Owner,
        confidence,
        created_at: now(),
        expires_at,
        last_confirmed_at: None,
    }
}

fn churn_override(agent: &str, task_type: Option<&str>, replace: Option<&str>, add: Option<&str>) -> AgentOverride {
    AgentOverride {
        agent: agent.into(),
        task_type: task_type.map(Into::into),
        prompt_override: replace.map(Into::into),
        prompt_additions: add.map(Into::into),
    }
}

fn budget(messages: u32, turns: u32, days: i64) -> BudgetLeft {
    BudgetLeft { messages, turns, days }
}

#[test]
fn layer_one_is_the_base_skill_and_survives_any_override() {
    // Given an owner override that replaces the churn-risk skill
    let overrides = [churn_override(
        "retention",
        Some("churn_risk"),
        Some("Talk about the barbecue."),
        None,
    )];
    let mut account = sample_account(now());
    account.settings.agent_overrides = overrides.to_vec();
    let mut task = sample_task(TaskStatus::Executing);
    task.task_type = "churn_risk".into();
    // When the prompt is composed
    let prompt = system_prompt(&PromptInput::for_task(&task, &account, &[], &[], now())).expect("prompt");
    // Then the base rules come first, untouched
    assert!(prompt.starts_with(skills::BASE.trim()));
    assert!(prompt.contains("Talk about the barbecue."));
}

#[test]
fn layer_two_is_the_types_skill_unless_the_owner_replaced_it() {
    let skill = type_layer(&CHURN_RISK, &[]).expect("skill");
    assert_eq!(skill, skills::skill("churn_risk.md").expect("compiled"));
    let agent_wide = [churn_override("retention", None, Some("Agent-wide instructions."), None)];
    assert!(
        type_layer(&CHURN_RISK, &agent_wide)
            .expect("layer")
            .contains("Agent-wide instructions.")
    );
    // The most specific override wins: type-and-agent over agent over everyone.
    let all = [
        churn_override("*", None, Some("Everyone."), None),
        churn_override("retention", Some("churn_risk"), Some("Churn only."), None),
        churn_override("retention", None, Some("Retention."), None),
    ];
    let layer = type_layer(&CHURN_RISK, &all).expect("layer");
    assert!(layer.contains("Churn only.") && !layer.contains("Retention.") && !layer.contains("Everyone."));
    assert!(type_layer(&WIN_BACK, &all).expect("layer").contains("Retention."));
    // Overrides for other agents or types do not apply.
    let elsewhere = [churn_override("sales", None, Some("Sales."), None)];
    assert_eq!(type_layer(&CHURN_RISK, &elsewhere).expect("skill"), skill);
}

#[test]
fn layer_three_states_the_profile_and_active_memories_only() {
    // Given a profile and memories, one expired and one about the member
    let profile = Profile {
        display_name: Some("Iron & Grace".into()),
        owner_first_name: Some("Mia".into()),
        sign_off: Some("Coach Mia".into()),
        business_type: Some("crossfit box".into()),
        class_types: vec!["WOD".into(), "Open Gym".into()],
        never_mention: vec!["competitor names".into()],
        contact_phone: Some("555-0100".into()),
        ..Profile::default()
    };
    let memories = [
        memory("Members here take two-week breaks in August.", None, 80, None),
        memory(
            "The Saturday class moved to 9am.",
            None,
            90,
            Some(now() - SignedDuration::from_hours(1)),
        ),
        memory("Dan prefers to be called Daniel.", Some("m_1"), 70, None),
    ];
    // When the account layer is written
    let layer = account_layer("Iron and Grace LLC", &profile, &memories, now());
    // Then it says what is known, and only that
    assert!(layer.contains("- Name: Iron & Grace (crossfit box)"));
    assert!(layer.contains("- Classes: WOD, Open Gym"));
    assert!(layer.contains("- Sign off as: Coach Mia"));
    assert!(layer.contains("- NEVER mention: competitor names"));
    assert!(layer.contains("- Phone: 555-0100"));
    assert!(!layer.contains("Current promotion"), "no promotion was given");
    assert!(layer.contains("two-week breaks in August"));
    assert!(!layer.contains("Saturday class"), "expired memories are not read");
    let about_member = layer.find("about this member").expect("member section");
    assert!(layer.find("Daniel").expect("member memory") > about_member);
    // A bare profile still names the business and how to sign.
    let bare = account_layer("Harbour Gym", &Profile::default(), &[], now());
    assert!(bare.contains("- Name: Harbour Gym") && bare.contains("the team at Harbour Gym"));
}

#[test]
fn layer_four_is_the_owners_additions_for_this_agent_or_type() {
    let overrides = [
        churn_override("retention", Some("churn_risk"), None, Some("Mention the Open in March.")),
        churn_override("*", None, None, Some("Never write on Sundays.")),
    ];
    assert!(override_layer(&CHURN_RISK, &overrides).contains("Mention the Open in March."));
    assert!(override_layer(&PAYMENT_RECOVERY, &overrides).contains("Never write on Sundays."));
    assert!(override_layer(&CHURN_RISK, &[]).is_empty());
}

#[test]
fn layer_five_lists_the_types_outcomes_and_warns_as_the_budget_runs_out() {
    let roomy = goal_layer(&CHURN_RISK, CHURN_RISK.goal.summary, budget(3, 4, 10));
    for o in CHURN_RISK.goal.outcomes {
        assert!(roomy.contains(&format!("`{}`", o.code)), "{} missing", o.code);
    }
    assert!(roomy.contains(CHURN_RISK.goal.judgment_criteria.expect("criteria")));
    assert!(roomy.contains("3 message(s) to the member, 4 reply turn(s), 10 day(s)"));
    assert!(!roomy.contains("last message") && !roomy.contains("do not reply"));
    let last = goal_layer(&CHURN_RISK, "Get Sam back", budget(1, 2, 5));
    assert!(last.contains("last message") && last.contains("Get Sam back"));
    let spent = goal_layer(&CHURN_RISK, "Get Sam back", budget(0, 2, 0));
    assert!(spent.contains("do not reply") && spent.contains("nearly up"));
}

#[test]
fn layer_six_names_the_members_other_open_tasks_and_their_subjects() {
    // Given a churn-risk task and the member's open payment task and a closed one
    let mut this = sample_task(TaskStatus::Waiting);
    this.task_type = "churn_risk".into();
    let payment = sample_task(TaskStatus::Waiting);
    let closed = sample_task(TaskStatus::Completed);
    let tasks = [this.clone(), payment.clone(), closed];
    // When the cross-task layer is written
    let layer = cross_task_layer(&CHURN_RISK, Some(this.id), &tasks);
    // Then only the other open task is named, with its subject off limits
    assert!(layer.contains("other open tasks (1)"));
    assert!(layer.contains("[payment_recovery, critical priority"));
    assert!(layer.contains("Do not bring up payment or billing"));
    // And with nothing else open the layer is left out
    assert!(cross_task_layer(&CHURN_RISK, Some(this.id), &[this.clone()]).is_empty());
    let account = sample_account(now());
    let alone = system_prompt(&PromptInput::for_task(&this, &account, &[], &[this.clone()], now())).expect("prompt");
    assert_eq!(alone.matches("\n\n---\n\n").count(), 3, "base, type, account, goal");
}

#[test]
fn the_prompt_is_the_six_layers_in_order() {
    let mut account = sample_account(now());
    account.settings.agent_overrides = vec![churn_override("retention", None, None, Some("OWNER-ADDITION"))];
    let mut task = sample_task(TaskStatus::Waiting);
    task.task_type = "churn_risk".into();
    let other = sample_task(TaskStatus::Waiting);
    let memories = [memory("MEMORY-LINE", None, 80, None)];
    let prompt = system_prompt(&PromptInput::for_task(&task, &account, &memories, &[task.clone(), other], now())).expect("prompt");
    let positions: Vec<usize> = [
        "# Base",
        "# At-risk member",
        "MEMORY-LINE",
        "OWNER-ADDITION",
        "# Possible outcomes",
        "# This member's other open tasks",
    ]
    .iter()
    .map(|needle| prompt.find(needle).unwrap_or_else(|| panic!("{needle} missing")))
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert_eq!(prompt.matches("\n\n---\n\n").count(), 5);
}

#[test]
fn the_budget_left_is_read_from_the_task() {
    let task = sample_task(TaskStatus::Waiting);
    let left = BudgetLeft::of(&task.budget, task.created_at + SignedDuration::from_hours(30));
    assert_eq!(left, budget(2, 4, 5));
    assert_eq!(
        BudgetLeft::of(&task.budget, task.budget.expires_at + SignedDuration::from_hours(1)).days,
        0
    );
}

#[test]
fn the_goal_progress_is_given_to_the_agent_with_its_milestones() {
    use crate::task::outcome::Milestone;
    use crate::task::progress::{EvidenceType, GoalProgress, RecommendedAction};
    assert_eq!(progress_layer(None), "");
    let progress = GoalProgress {
        progress_pct: 67,
        current_outcome: "partial".into(),
        confidence: 80,
        evidence_type: EvidenceType::PartialSignal,
        evidence: "2 of 3 check-ins".into(),
        recommended_action: RecommendedAction::Continue,
        milestones: vec![
            Milestone {
                name: "first checkin".into(),
                hit: true,
                hit_at: Some(now()),
            },
            Milestone {
                name: "third checkin".into(),
                hit: false,
                hit_at: None,
            },
        ],
        risks: vec!["busy month".into()],
    };
    let layer = progress_layer(Some(&progress));
    assert!(layer.contains("67% — currently `partial`"), "{layer}");
    assert!(
        layer.contains("✓ first checkin (2026-") && layer.contains("○ third checkin (pending)"),
        "{layer}"
    );
    assert!(layer.contains("Risks: busy month"), "{layer}");
}
