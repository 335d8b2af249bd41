//! Declarative priority rules (the TASKS spec, §3): a rules file decides how urgent a new task
//! is from what is known when it is made, and the result is combined with the task type's own
//! priority — the more urgent of the two wins, so a rule can raise a task, never bury it.
//!
//! The file is TOML, an ordered list of `[[rule]]` tables; the first rule whose every condition
//! holds applies. A rule without conditions matches everything (a default). The rules that
//! ship are `rules/priority.toml`; `OPENLOOP_PRIORITY_RULES` points at another file.
//!
//! ```toml
//! [[rule]]
//! name = "high_value_member"
//! monthly_value_at_least = 200
//! priority = "high"
//! ```

use serde::{Deserialize, Serialize};

use crate::members::event::MemberStatus;
use crate::task::TriggerType;
use crate::task::task_type::{self, Category, Priority};

/// The rules that ship with Openloop.
pub const DEFAULT_RULES: &str = include_str!("../../../../rules/priority.toml");

/// What a rule can look at when a task is made.
#[derive(Clone, Debug, Default)]
pub struct PriorityInput<'a> {
    pub task_type: &'a str,
    pub trigger: Option<TriggerType>,
    pub goal: &'a str,
    /// The creator's confidence, 0–100 (the spec's "LLM urgency score").
    pub confidence: u8,
    pub monthly_value: Option<f64>,
    pub tenure_days: Option<i64>,
    pub member_status: Option<MemberStatus>,
}

/// One rule: conditions (all must hold) and the priority it sets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub priority: Priority,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerType>,
    /// Any of these words in the goal (case-insensitive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goal_contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_at_least: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_value_at_least: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenure_days_at_least: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_statuses: Vec<MemberStatus>,
}

impl Rule {
    fn matches(&self, input: &PriorityInput<'_>) -> bool {
        let category = task_type::definition(input.task_type).category;
        let goal = input.goal.to_lowercase();
        (self.task_types.is_empty() || self.task_types.iter().any(|t| t == input.task_type))
            && (self.categories.is_empty() || self.categories.contains(&category))
            && (self.triggers.is_empty() || input.trigger.is_some_and(|t| self.triggers.contains(&t)))
            && (self.goal_contains.is_empty() || self.goal_contains.iter().any(|w| goal.contains(&w.to_lowercase())))
            && self.confidence_at_least.is_none_or(|min| input.confidence >= min)
            && self
                .monthly_value_at_least
                .is_none_or(|min| input.monthly_value.is_some_and(|v| v >= min))
            && self
                .tenure_days_at_least
                .is_none_or(|min| input.tenure_days.is_some_and(|d| d >= min))
            && (self.member_statuses.is_empty() || input.member_status.is_some_and(|s| self.member_statuses.contains(&s)))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityRules {
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

/// The decision, with the rule that made it (for the creation log).
#[derive(Clone, Debug, PartialEq)]
pub struct Prioritised {
    pub priority: Priority,
    /// The rule that raised the type's priority, if one did.
    pub raised_by: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("priority rules: {0}")]
    Parse(String),
    #[error("priority rules: rule {rule:?} names unknown task type {task_type:?}")]
    UnknownTaskType { rule: String, task_type: String },
    #[error("priority rules: rule {0:?} appears twice")]
    DuplicateName(String),
}

impl PriorityRules {
    /// Parse and check a rules file: unknown fields, unknown task types and repeated names are
    /// errors, so a typo cannot silently switch a rule off.
    pub fn parse(text: &str) -> Result<Self, RulesError> {
        let rules: PriorityRules = toml::from_str(text).map_err(|e| RulesError::Parse(e.to_string()))?;
        let mut names = std::collections::HashSet::new();
        for rule in &rules.rules {
            if !names.insert(rule.name.as_str()) {
                return Err(RulesError::DuplicateName(rule.name.clone()));
            }
            if let Some(unknown) = rule.task_types.iter().find(|t| task_type::lookup(t).is_none()) {
                return Err(RulesError::UnknownTaskType {
                    rule: rule.name.clone(),
                    task_type: unknown.clone(),
                });
            }
        }
        Ok(rules)
    }

    /// The rules that ship with Openloop (`rules/priority.toml`).
    pub fn shipped() -> Self {
        // The shipped file is checked by a test; an empty rule set is the safe fallback.
        Self::parse(DEFAULT_RULES).unwrap_or_default()
    }

    /// The priority of a new task: the more urgent of its type's priority and the first
    /// matching rule's.
    pub fn prioritise(&self, input: &PriorityInput<'_>) -> Prioritised {
        let base = task_type::definition(input.task_type).priority;
        match self.rules.iter().find(|r| r.matches(input)) {
            // `Priority` orders from most to least urgent.
            Some(rule) if rule.priority < base => Prioritised {
                priority: rule.priority,
                raised_by: Some(rule.name.clone()),
            },
            _ => Prioritised {
                priority: base,
                raised_by: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(task_type: &str) -> PriorityInput<'_> {
        PriorityInput {
            task_type,
            goal: "Check in with the member",
            ..PriorityInput::default()
        }
    }

    #[test]
    fn the_shipped_rules_parse() {
        let rules = PriorityRules::parse(DEFAULT_RULES).expect("rules/priority.toml");
        assert!(!rules.rules.is_empty());
    }

    #[test]
    fn the_first_matching_rule_raises_the_type_priority_but_never_lowers_it() {
        let rules = PriorityRules::parse(
            r#"
            [[rule]]
            name = "valuable"
            monthly_value_at_least = 200
            priority = "critical"

            [[rule]]
            name = "billing_words"
            goal_contains = ["Invoice", "card"]
            priority = "high"

            [[rule]]
            name = "default"
            priority = "low"
            "#,
        )
        .expect("rules");
        // lead_followup is medium by type.
        let plain = rules.prioritise(&input("lead_followup"));
        assert_eq!((plain.priority, plain.raised_by), (Priority::Medium, None));

        let worded = rules.prioritise(&PriorityInput {
            goal: "Ask about the unpaid INVOICE",
            ..input("lead_followup")
        });
        assert_eq!(
            (worded.priority, worded.raised_by.as_deref()),
            (Priority::High, Some("billing_words"))
        );

        let valuable = rules.prioritise(&PriorityInput {
            monthly_value: Some(250.0),
            goal: "Ask about the unpaid invoice",
            ..input("lead_followup")
        });
        assert_eq!(valuable.priority, Priority::Critical, "first match wins");

        // payment_recovery is critical already: a lower rule leaves it.
        assert_eq!(rules.prioritise(&input("payment_recovery")).priority, Priority::Critical);
    }

    #[test]
    fn conditions_combine_and_missing_facts_do_not_match() {
        let rules = PriorityRules::parse(
            r#"
            [[rule]]
            name = "loyal_and_sure"
            tenure_days_at_least = 365
            confidence_at_least = 80
            triggers = ["cron_analysis"]
            task_types = ["churn_risk"]
            priority = "critical"
            "#,
        )
        .expect("rules");
        let all = PriorityInput {
            tenure_days: Some(400),
            confidence: 85,
            trigger: Some(TriggerType::CronAnalysis),
            ..input("churn_risk")
        };
        assert_eq!(rules.prioritise(&all).priority, Priority::Critical);
        assert_eq!(
            rules
                .prioritise(&PriorityInput {
                    confidence: 79,
                    ..all.clone()
                })
                .priority,
            Priority::High
        );
        assert_eq!(
            rules
                .prioritise(&PriorityInput {
                    tenure_days: None,
                    ..all.clone()
                })
                .priority,
            Priority::High
        );
        assert_eq!(
            rules
                .prioritise(&PriorityInput {
                    trigger: None,
                    ..all.clone()
                })
                .priority,
            Priority::High
        );
        assert_eq!(rules.prioritise(&PriorityInput { ..input("win_back") }).priority, Priority::High);
    }

    #[test]
    fn typos_are_errors_not_silently_dead_rules() {
        let unknown_field = PriorityRules::parse("[[rule]]\nname = \"x\"\npriority = \"high\"\nmonthly_valu_at_least = 3\n");
        assert!(matches!(unknown_field, Err(RulesError::Parse(_))), "{unknown_field:?}");
        let unknown_type = PriorityRules::parse("[[rule]]\nname = \"x\"\npriority = \"high\"\ntask_types = [\"winback\"]\n");
        assert!(matches!(unknown_type, Err(RulesError::UnknownTaskType { .. })), "{unknown_type:?}");
        let bad_priority = PriorityRules::parse("[[rule]]\nname = \"x\"\npriority = \"urgent\"\n");
        assert!(matches!(bad_priority, Err(RulesError::Parse(_))));
        let twice = PriorityRules::parse("[[rule]]\nname = \"x\"\npriority = \"high\"\n[[rule]]\nname = \"x\"\npriority = \"low\"\n");
        assert!(matches!(twice, Err(RulesError::DuplicateName(_))));
    }
}
