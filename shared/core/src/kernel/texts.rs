//! The texts the owner API takes that belong to no one domain folder, each a
//! [`bounded_text!`](crate::kernel::bounded::bounded_text) type: its rule is what the body's `Deserialize` refuses
//! and what the OpenAPI document says. (A folder's own texts are beside its limits: a to-do's
//! note in `task/todo.rs`, a plan step in `task/plan_edit.rs`, a trigger's event in
//! `owner/trigger.rs`…)

use crate::kernel::bounded::TextRule;
use crate::kernel::bounded::bounded_text;
use crate::kernel::limits;

/// A task type's name: a-z, 0-9 and `_`.
pub const TASK_TYPE_PATTERN: &str = "^[a-z0-9_]+$";

bounded_text! {
    /// What a task is for, in the owner's words.
    pub Goal = TextRule::text(limits::MAX_GOAL_CHARS, "invalid_goal").min(1);
    /// A task type: a registered one, or any name of a-z, 0-9 and `_` (worked under `ad_hoc`'s rules, always reviewed).
    pub TaskTypeName = TextRule::line(limits::MAX_TASK_TYPE_CHARS, "invalid_task_type").min(1).pattern(TASK_TYPE_PATTERN);
    /// A mail's subject: one line.
    pub Subject = TextRule::line(limits::MAX_DRAFT_SUBJECT_CHARS, "invalid_draft");
    /// A mail's plain-text body.
    pub MailBody = TextRule::text(limits::MAX_DRAFT_BODY_CHARS, "invalid_draft");
    /// The owner's reason for skipping a task, kept on its log.
    pub SkipReason = TextRule::text(limits::MAX_SKIP_REASON_CHARS, "invalid_reason");
    /// The owner's note when resolving a task, kept on its log and conversation.
    pub ResolveNote = TextRule::text(limits::MAX_RESOLVE_NOTE_CHARS, "invalid_note");
    /// The owner's words to the agent.
    pub GuidanceText = TextRule::text(limits::MAX_GUIDANCE_CHARS, "invalid_guidance").min(1);
    /// An outcome code of the task's type (`rejoined`, `retained`, …).
    pub OutcomeCode = TextRule::line(limits::MAX_CODE_CHARS, "invalid_outcome").min(1).pattern("^[a-z0-9_]+$");
    /// Why mail to an address stops: one line.
    pub SuppressionReason = TextRule::line(limits::MAX_SUPPRESSION_REASON_CHARS, "invalid_reason");
    /// An e-mail address.
    pub EmailAddress = TextRule::line(limits::MAX_EMAIL_CHARS, "invalid_email").min(3).format("email");
    /// An IANA time zone (`America/New_York`).
    pub TimezoneName = TextRule::line(limits::MAX_TIMEZONE_CHARS, "invalid_timezone").min(1).pattern("^[A-Za-z0-9_+/-]+$");
    /// A US state's or territory's two-letter code or name (`FL`, `Florida`).
    pub UsStateName = TextRule::line(32, "invalid_consent").min(1);
    /// A domain name (`mail.example.com`).
    pub DomainName = TextRule::line(limits::MAX_DOMAIN_CHARS, "invalid_sending_domain").min(1).pattern("^[A-Za-z0-9.-]+$");
    /// A cron expression of five fields: minute hour day-of-month month day-of-week.
    pub CronExpression = TextRule::line(limits::MAX_CRON_CHARS, "invalid_cron").min(1).pattern("^[0-9A-Za-z*/,? -]+$");
    /// An account's name: one line.
    pub AccountName = TextRule::line(limits::MAX_ACCOUNT_NAME_CHARS, "invalid_name").min(1);
    /// A phone number in E.164 (`+15551234567`).
    pub PhoneNumber = TextRule::line(16, "invalid_owner_phone").pattern(r"^\+[1-9][0-9]{7,14}$");
    /// A month, `YYYY-MM`.
    pub MonthText = TextRule::line(7, "invalid_month").pattern("^[0-9]{4}-[0-9]{2}$");
    /// A date, `YYYY-MM-DD`.
    pub DateText = TextRule::line(10, "invalid_date").format("date");
    /// A time (RFC 3339).
    pub TimeText = TextRule::line(limits::MAX_TIME_CHARS, "invalid_time").format("date-time");
    /// A business memory: what the agent should know.
    pub MemoryContent = TextRule::text(limits::MAX_MEMORY_CHARS, "invalid_memory").min(1);
    /// A business memory's category: one line.
    pub MemoryCategory = TextRule::line(limits::MAX_MEMORY_CATEGORY_CHARS, "invalid_memory").min(1);
    /// A profile's one-line text (a name, a phone, a website, a list's entry).
    pub ProfileLine = TextRule::line(limits::MAX_PROFILE_TEXT_CHARS, "invalid_profile");
    /// A profile's free text (a sign-off, a greeting, a promotion, an address).
    pub ProfileText = TextRule::text(limits::MAX_PROFILE_TEXT_CHARS, "invalid_profile");
    /// An owner's instructions for an agent (added to its prompt, or replacing a skill).
    pub OverrideText = TextRule::text(limits::MAX_OVERRIDE_CHARS, "invalid_agent_overrides");
    /// An agent's name: `retention`, `sales`, `gm`, `reputation`, or `*` for every agent.
    pub AgentName = TextRule::line(16, "invalid_agent_overrides").min(1).pattern("^([a-z_]+|\\*)$");
    /// A PushPress API key: printable, no spaces.
    pub ConnectorKey = TextRule::line(limits::MAX_CONNECTOR_KEY_CHARS, "invalid_pushpress").min(1).pattern("^[!-~]+$");
    /// A PushPress company id: printable, no spaces.
    pub ConnectorCompany = TextRule::line(limits::MAX_CONNECTOR_COMPANY_CHARS, "invalid_pushpress").min(1).pattern("^[!-~]+$");
    /// A text message's sender: a phone number (E.164), pool id, sender id or ARN.
    pub OriginationIdentity = TextRule::line(limits::MAX_ORIGINATION_CHARS, "invalid_sms").min(1).pattern("^[A-Za-z0-9+_:/.-]+$");
    /// The `next_cursor` of the page before.
    pub CursorText = TextRule::line(limits::MAX_CURSOR_CHARS, "invalid_cursor").min(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_keeps_its_bound_and_refuses_past_it_by_code() {
        assert!(Goal::parse("goal", "x".repeat(limits::MAX_GOAL_CHARS)).is_ok());
        let e = Goal::parse("goal", "x".repeat(limits::MAX_GOAL_CHARS + 1)).expect_err("over");
        assert_eq!(e.code, "invalid_goal");
        assert!(e.message.starts_with("goal must be at most"), "{}", e.message);
        assert!(Goal::parse("goal", "").is_err());
        assert!(Goal::parse("goal", "two\nlines").is_ok());
        assert!(Subject::parse("subject", "two\nlines").is_err());
        assert!(TaskTypeName::parse("task_type", "win_back").is_ok());
        assert!(TaskTypeName::parse("task_type", "Win Back").is_err());
        assert!(EmailAddress::parse("email", "a@example.com").is_ok());
        assert!(EmailAddress::parse("email", "not an address").is_err());
        assert!(PhoneNumber::parse("owner_phone", "+15551234567").is_ok());
        assert!(PhoneNumber::parse("owner_phone", "5551234567").is_err());
        assert!(MonthText::parse("month", "2026-11").is_ok());
        assert!(MonthText::parse("month", "2026-1").is_err());
        assert!(DateText::parse("date", "2026-11-31").is_err());
        assert!(TimeText::parse("at", "2030-01-01T00:00:00Z").is_ok());
    }

    #[test]
    fn the_documented_patterns_refuse_what_the_rules_refuse() {
        let free = regex_lite::Regex::new(crate::kernel::bounded::FREE_TEXT_PATTERN).expect("pattern");
        let line = regex_lite::Regex::new(crate::kernel::bounded::ONE_LINE_PATTERN).expect("pattern");
        for c in (0..0x3000u32).filter_map(char::from_u32) {
            let value = format!("a{c}b");
            assert_eq!(
                free.is_match(&value),
                MemoryContent::parse("content", value.as_str()).is_ok(),
                "{c:?} as free text"
            );
            assert_eq!(
                line.is_match(&value),
                MemoryCategory::parse("category", value.as_str()).is_ok(),
                "{c:?} in one line"
            );
        }
    }

    #[test]
    fn a_body_refuses_a_value_past_its_rule_with_the_rules_code() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Body {
            goal: Goal,
        }
        let over = serde_json::json!({"goal": "x".repeat(limits::MAX_GOAL_CHARS + 1)});
        let e = serde_json::from_value::<Body>(over).expect_err("refused");
        let text = e.to_string();
        let (code, message) = crate::kernel::bounded::parse_refusal(&text).expect("a refusal");
        assert_eq!(code, "invalid_goal");
        assert!(message.contains("at most 2000"), "{message}");
        let ok: Body = serde_json::from_value(serde_json::json!({"goal": "Bring Dana back"})).expect("kept");
        assert_eq!(&*ok.goal, "Bring Dana back");
    }
}
