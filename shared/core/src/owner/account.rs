//! An account is one business (a gym): its settings, limits, profile and kill switch.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::AccountId;
use crate::kernel::limits;
use crate::task::attribution::{Price, ValueSource};
use crate::task::task_type;

/// How much the agent may do alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    /// Everything goes to the owner first.
    Manual,
    /// Confident tasks without escalation triggers run on their own.
    LimitedAuto,
}

/// How the business presents itself in mail, and what the agent may know about it.
/// Every field is optional: the prompt says only what is given, and the agent
/// escalates rather than invent the rest. A key it does not know is refused (a misspelt key
/// would otherwise replace the profile with an empty one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub display_name: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub owner_first_name: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileText::optional_schema))]
    pub sign_off: Option<String>,
    /// What kind of business it is ("crossfit box", "yoga studio").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub business_type: Option<String>,
    /// Its voice ("casual_friendly", "motivational", "professional", "community_first").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub vibe: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::list_schema))]
    pub class_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::list_schema))]
    pub special_programs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileText::optional_schema))]
    pub current_promo: Option<String>,
    /// What the gym offers a member for whom the cost is the trouble ("freeze for $10 a month,
    /// or our 2-classes-a-week plan at $89"): the only such offer a win-back may make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileText::optional_schema))]
    pub ways_to_stay: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileText::optional_schema))]
    pub typical_greeting: Option<String>,
    /// Subjects the agent must never bring up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::list_schema))]
    pub never_mention: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::list_schema))]
    pub always_include: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub contact_phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileText::optional_schema))]
    pub contact_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub contact_website: Option<String>,
    /// Where a member updates their card or pays (an `https://` link the gym gives its
    /// members): the only link a payment note may name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::ProfileLine::optional_schema))]
    pub billing_link: Option<String>,
}

impl Profile {
    /// The texts that name the gym or a thing in one line — a display name reaches the
    /// `From` header and offline subjects — are one line each; a sign-off, a greeting or a
    /// promotion may span lines (they only reach the body).
    fn validate_lines(&self) -> Result<(), InvalidInput> {
        let one_liners = [
            ("profile.display_name", &self.display_name),
            ("profile.owner_first_name", &self.owner_first_name),
            ("profile.business_type", &self.business_type),
            ("profile.vibe", &self.vibe),
            ("profile.contact_phone", &self.contact_phone),
            ("profile.contact_website", &self.contact_website),
            ("profile.billing_link", &self.billing_link),
        ];
        for (field, value) in one_liners {
            if let Some(value) = value {
                crate::kernel::text::single_line("invalid_profile", field, value)?;
            }
        }
        if let Some(link) = self.billing_link.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
            let rest = link.strip_prefix("https://").unwrap_or_default();
            if rest.is_empty() || rest.starts_with('/') || link.chars().any(char::is_whitespace) {
                return Err(InvalidInput::new(
                    "invalid_profile",
                    "profile.billing_link must be one https:// link, e.g. https://yourgym.example/billing",
                ));
            }
        }
        let lists = [
            ("profile.class_types", &self.class_types),
            ("profile.special_programs", &self.special_programs),
            ("profile.never_mention", &self.never_mention),
            ("profile.always_include", &self.always_include),
        ];
        for (field, list) in lists {
            if list.len() > crate::kernel::limits::MAX_PROFILE_LIST_ITEMS {
                return Err(InvalidInput::new(
                    "invalid_profile",
                    format!("{field} may hold at most {} entries", crate::kernel::limits::MAX_PROFILE_LIST_ITEMS),
                ));
            }
            for value in list {
                crate::kernel::text::single_line("invalid_profile", field, value)?;
            }
        }
        Ok(())
    }

    fn texts(&self) -> impl Iterator<Item = &String> {
        [
            &self.display_name,
            &self.owner_first_name,
            &self.sign_off,
            &self.business_type,
            &self.vibe,
            &self.current_promo,
            &self.typical_greeting,
            &self.contact_phone,
            &self.contact_address,
            &self.contact_website,
            &self.billing_link,
        ]
        .into_iter()
        .flatten()
        .chain(self.class_types.iter())
        .chain(self.special_programs.iter())
        .chain(self.never_mention.iter())
        .chain(self.always_include.iter())
    }
}

/// An owner's instructions for one agent, or one of its task types: added to the
/// prompt, or replacing the task type's skill. The base rules are never replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AgentOverride {
    /// `retention`, `sales`, `gm`, `reputation`, or `*` for every agent.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::AgentName::field_schema))]
    pub agent: String,
    /// A registered task type, or none for every type of the agent.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::TaskTypeName::optional_schema))]
    pub task_type: Option<String>,
    /// Replaces the task type's skill.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::OverrideText::optional_schema))]
    pub prompt_override: Option<String>,
    /// Added after the account context.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::OverrideText::optional_schema))]
    pub prompt_additions: Option<String>,
}

impl AgentOverride {
    /// How closely this override fits `agent` and `task_type`: `None` if it does not apply,
    /// higher is more specific (type-and-agent, agent, every agent with type, everything).
    pub fn specificity(&self, agent: &str, task_type: &str) -> Option<u8> {
        let agent_fits = self.agent == agent;
        let everyone = self.agent == "*";
        match self.task_type.as_deref() {
            Some(t) if t == task_type && agent_fits => Some(4),
            None if agent_fits => Some(3),
            Some(t) if t == task_type && everyone => Some(2),
            None if everyone => Some(1),
            _ => None,
        }
    }

    /// The one override that applies to a task of `task_type` run by `agent`: the most
    /// specific one.
    pub fn effective<'a>(overrides: &'a [AgentOverride], agent: &str, task_type: &str) -> Option<&'a AgentOverride> {
        overrides
            .iter()
            .filter_map(|o| o.specificity(agent, task_type).map(|s| (s, o)))
            .max_by_key(|(s, _)| *s)
            .map(|(_, o)| o)
    }
}

/// The owner-editable settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Settings {
    pub execution_mode: ExecutionMode,
    pub member_weekly_limit: u32,
    pub daily_send_limit: u32,
    pub timezone: String,
    pub send_window_start: u8,
    pub send_window_end: u8,
    pub onboarded_at: Option<Timestamp>,
    pub avg_membership_price: f64,
    pub profile: Profile,
    /// Owner instructions per agent or task type.
    #[serde(default)]
    pub agent_overrides: Vec<AgentOverride>,
    /// Agents enabled after the account's own ramp, with the day each was enabled: each runs
    /// its own onboarding ramp from then. Keys are agents (`retention`, `sales`…).
    #[serde(default)]
    pub agent_ramps: std::collections::BTreeMap<String, Timestamp>,
    /// Where owner notifications are mailed; none: the feed only.
    #[serde(default)]
    pub owner_email: Option<crate::kernel::ids::Email>,
    #[serde(default)]
    pub owner_notification_channel: crate::owner::owner_notice::NotificationChannel,
    /// The owner's monthly price per PushPress plan id (PushPress has no prices
    /// item 5). A member on a plan without one is worth `avg_membership_price`.
    #[serde(default)]
    pub plan_prices: std::collections::BTreeMap<String, f64>,
    /// The gym's own sending domain; none: the shared domain. Mail
    /// leaves from it once its identity is verified (`Account::sending_domain`).
    #[serde(default)]
    pub sending_domain: Option<String>,
    /// The trust gradient: strong memory suggestions are saved without
    /// review once the account is old enough, and listed in a weekly notice to undo. Off by
    /// default.
    #[serde(default)]
    pub auto_save_memories: bool,
    /// Whether this account's closed tasks add to the cross-tenant learning record;
    /// on unless the owner turns it off. Its own record is kept either way.
    #[serde(default = "contributes_by_default")]
    pub share_learning: bool,
    /// The account's calibrated thresholds: changed only by accepting a
    /// calibration suggestion (and its undo), within safe bounds; shown, never patched.
    #[serde(default)]
    pub calibration: crate::owner::calibration::Calibration,
    /// Skills and rubrics learned from accepted suggestions, per task type: in
    /// the composed prompt of the type's calls; removed by the suggestion's undo.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<crate::owner::learned::Learned>,
    /// The share of members held out of what Openloop opens itself, 0–20 (see
    /// docs/lift.md).
    #[serde(default)]
    pub holdout_percent: u8,
    /// The task types held out (default: every type but `payment_recovery`).
    #[serde(default = "crate::owner::holdout::default_task_types")]
    pub holdout_task_types: Vec<String>,
    /// The local hour (0–23) the morning brief is mailed; `None`: no morning mail.
    #[serde(default = "crate::owner::quiet::default_brief_hour")]
    pub brief_hour: Option<u8>,
    /// Owner notices other than critical ones wait while these local hours last.
    #[serde(default)]
    pub quiet_hours: crate::owner::quiet::QuietHours,
    /// A review item undecided this many days is closed as `review_expired`.
    #[serde(default = "crate::owner::quiet::default_review_expiry_days")]
    pub review_expiry_days: u32,
    /// What an undecided review item becomes at `review_expiry_days`: the call list (by
    /// default), its template draft sent, or closed. Leads and payments always reach the list.
    #[serde(default)]
    pub on_review_expiry: crate::owner::quiet::OnReviewExpiry,
    /// On `limited_auto`, the task types whose template drafts go out without review even when
    /// the member's value or tenure alone would ask for it (`rails/autonomy.rs`).
    #[serde(default)]
    pub autopilot_types: Vec<String>,
    /// The send hours chosen from what the account's sends led to (`owner/send_hours.rs`);
    /// shown, never patched. `None` until first chosen: the usual hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_hours: Option<crate::owner::send_hours::SendHours>,
    /// Whether touches go at the learned `send_hours`: `true` yes, `false` the usual hours;
    /// unset, as the trust gradient says (`auto_save_memories`): a change the system made on
    /// its own waits for the owner at the default trust level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_learned_send_hours: Option<bool>,
    /// Text messages: on or off, the identity they leave from, the daily limit.
    #[serde(default)]
    pub sms: crate::owner::sms::SmsSettings,
    /// Where critical alerts are texted with `owner_notification_channel: "email_and_sms"`.
    #[serde(default)]
    pub owner_phone: Option<String>,
}

fn contributes_by_default() -> bool {
    true
}

impl Settings {
    /// The learned send hours the planner goes by: `send_hours` when the owner took them (or
    /// trusts the agent to), else none — the usual hours.
    pub fn learned_send_hours(&self) -> Option<&crate::owner::send_hours::SendHours> {
        self.send_hours
            .as_ref()
            .filter(|_| self.use_learned_send_hours.unwrap_or(self.auto_save_memories))
    }

    /// A member's monthly price: the owner's price for their PushPress plan, else their own
    /// value (a member event's), else the account's average.
    pub fn price(&self, plan_id: Option<&str>, member_value: Option<f64>) -> Price {
        if let Some(monthly) = plan_id.and_then(|p| self.plan_prices.get(p)) {
            return Price {
                monthly: *monthly,
                source: ValueSource::PlanPrice,
            };
        }
        match member_value {
            Some(monthly) => Price {
                monthly,
                source: ValueSource::Member,
            },
            None => Price {
                monthly: self.avg_membership_price,
                source: ValueSource::Average,
            },
        }
    }

    pub fn defaults(timezone: String) -> Self {
        Self {
            execution_mode: ExecutionMode::Manual,
            member_weekly_limit: limits::DEFAULT_MEMBER_WEEKLY_LIMIT,
            daily_send_limit: limits::DEFAULT_DAILY_SEND_LIMIT,
            timezone,
            send_window_start: limits::DEFAULT_SEND_WINDOW_START,
            send_window_end: limits::DEFAULT_SEND_WINDOW_END,
            onboarded_at: None,
            avg_membership_price: limits::DEFAULT_AVG_MEMBERSHIP_PRICE,
            profile: Profile::default(),
            agent_overrides: Vec::new(),
            agent_ramps: Default::default(),
            owner_email: None,
            owner_notification_channel: Default::default(),
            plan_prices: Default::default(),
            sending_domain: None,
            auto_save_memories: false,
            share_learning: true,
            calibration: Default::default(),
            learned: Vec::new(),
            holdout_percent: 0,
            holdout_task_types: crate::owner::holdout::default_task_types(),
            brief_hour: crate::owner::quiet::default_brief_hour(),
            quiet_hours: Default::default(),
            review_expiry_days: crate::owner::quiet::default_review_expiry_days(),
            on_review_expiry: Default::default(),
            autopilot_types: Vec::new(),
            send_hours: None,
            use_learned_send_hours: None,
            sms: Default::default(),
            owner_phone: None,
        }
    }

    /// Reject settings the engine could not honour; nothing is stored if this fails.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        parse_timezone(&self.timezone)?;
        crate::owner::quiet::validate(self)?;
        self.calibration.validate()?;
        crate::owner::learned::validate(&self.learned)?;
        crate::owner::holdout::validate(self)?;
        self.sms.validate()?;
        crate::owner::sms::validate_owner_phone(self.owner_phone.as_deref())?;
        if self.send_window_start >= self.send_window_end || self.send_window_end > 24 {
            return Err(InvalidInput::new(
                "invalid_send_window",
                "send_window_start must be before send_window_end, both hours in 0..=24",
            ));
        }
        if self.member_weekly_limit > limits::MAX_MEMBER_WEEKLY_LIMIT {
            return Err(InvalidInput::new(
                "invalid_member_weekly_limit",
                format!("member_weekly_limit must be at most {}", limits::MAX_MEMBER_WEEKLY_LIMIT),
            ));
        }
        if self.daily_send_limit > limits::MAX_DAILY_SEND_LIMIT {
            return Err(InvalidInput::new(
                "invalid_daily_send_limit",
                format!("daily_send_limit must be at most {}", limits::MAX_DAILY_SEND_LIMIT),
            ));
        }
        if self.profile.texts().any(|t| t.chars().count() > limits::MAX_PROFILE_TEXT_CHARS) {
            return Err(InvalidInput::new(
                "invalid_profile",
                format!("profile texts must be at most {} characters each", limits::MAX_PROFILE_TEXT_CHARS),
            ));
        }
        self.profile.validate_lines()?;
        self.validate_overrides()?;
        crate::kernel::number::money("invalid_avg_membership_price", "avg_membership_price", self.avg_membership_price)?;
        if self.plan_prices.len() > limits::MAX_PLAN_PRICES {
            return Err(InvalidInput::new(
                "invalid_plan_prices",
                format!("at most {} plan prices", limits::MAX_PLAN_PRICES),
            ));
        }
        for (plan, price) in &self.plan_prices {
            if plan.is_empty() || plan.len() > 128 {
                return Err(InvalidInput::new("invalid_plan_prices", "plan ids are 1-128 characters"));
            }
            crate::kernel::number::money("invalid_plan_prices", &format!("plan_prices.{plan}"), *price)?;
        }
        if let Some(domain) = &self.sending_domain
            && crate::owner::deliverability::parse_domain(domain).as_deref() != Ok(domain.as_str())
        {
            return Err(InvalidInput::new(
                "invalid_sending_domain",
                "sending_domain must be a domain name such as crossfitrenegade.com",
            ));
        }
        if self.autopilot_types.len() > task_type::REGISTRY.len() {
            return Err(InvalidInput::new(
                "invalid_autopilot_types",
                "autopilot_types lists each task type at most once",
            ));
        }
        if let Some(unknown) = self.autopilot_types.iter().find(|t| task_type::lookup(t).is_none()) {
            return Err(InvalidInput::new(
                "invalid_autopilot_types",
                format!("{:?} is not a task type", unknown.chars().take(64).collect::<String>()),
            ));
        }
        if let Some(agent) = self
            .agent_ramps
            .keys()
            .find(|a| !crate::task::task_type::REGISTRY.iter().any(|d| d.agent == a.as_str()))
        {
            return Err(InvalidInput::new(
                "invalid_agent_ramps",
                format!("agent_ramps names an unknown agent {agent:?}"),
            ));
        }
        Ok(())
    }

    fn validate_overrides(&self) -> Result<(), InvalidInput> {
        let invalid = |message: String| Err(InvalidInput::new("invalid_agent_overrides", message));
        if self.agent_overrides.len() > limits::MAX_AGENT_OVERRIDES {
            return invalid(format!("at most {} agent overrides", limits::MAX_AGENT_OVERRIDES));
        }
        let mut seen = std::collections::BTreeSet::new();
        for o in &self.agent_overrides {
            let known_agent = o.agent == "*" || task_type::REGISTRY.iter().any(|t| t.agent == o.agent);
            if !known_agent {
                return invalid(format!("{:?} is not an agent (retention, sales, gm, reputation or *)", o.agent));
            }
            if let Some(t) = &o.task_type {
                match task_type::lookup(t) {
                    None => return invalid(format!("{t:?} is not a task type")),
                    Some(def) if o.agent != "*" && def.agent != o.agent => {
                        return invalid(format!("{t:?} is run by the {} agent, not {}", def.agent, o.agent));
                    }
                    Some(_) => {}
                }
            }
            let texts = [&o.prompt_override, &o.prompt_additions];
            if texts.iter().all(|t| t.as_deref().is_none_or(|t| t.trim().is_empty())) {
                return invalid("an override needs prompt_override or prompt_additions".into());
            }
            if texts
                .iter()
                .any(|t| t.as_deref().is_some_and(|t| t.chars().count() > limits::MAX_OVERRIDE_CHARS))
            {
                return invalid(format!("override texts must be at most {} characters", limits::MAX_OVERRIDE_CHARS));
            }
            if !seen.insert((o.agent.clone(), o.task_type.clone())) {
                return invalid(format!("two overrides for agent {:?} and task type {:?}", o.agent, o.task_type));
            }
        }
        Ok(())
    }

    pub fn time_zone(&self) -> TimeZone {
        parse_timezone(&self.timezone).unwrap_or(TimeZone::UTC)
    }
}

/// An IANA time zone name, checked against the bundled database.
pub fn parse_timezone(name: &str) -> Result<TimeZone, InvalidInput> {
    TimeZone::get(name).map_err(|_| {
        InvalidInput::new(
            "invalid_timezone",
            format!("{name:?} is not an IANA time zone (e.g. America/New_York)"),
        )
    })
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    pub settings: Settings,
    /// Standard Webhooks secret (`whsec_…`), used to verify the connector's webhooks.
    pub webhook_secret: WebhookSecret,
    /// The per-account kill switch: nothing is sent while set.
    pub paused: bool,
    /// The account's own PushPress credentials, when it brought them: the
    /// connector calls for its members carry them instead of the process-wide key. Stored
    /// here, never in an API view (the owner sees only whether they are set) or a log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushpress: Option<crate::members::connector::ConnectorCredentials>,
    /// The identity of `settings.sending_domain` as the mail provider last reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sending_identity: Option<crate::owner::deliverability::SendingDomain>,
    /// The cross-business patterns this account's records helped surface,
    /// by pattern id (`{month}:{scope}:{finding}`), written by the monthly evaluation; the
    /// owner sees how many. At most [`crate::kernel::limits::MAX_CREDITED_PATTERNS`], newest kept.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub learning_patterns: std::collections::BTreeSet<String>,
    /// The lift across gyms of this business type, per task type, as the latest monthly
    /// evaluation pooled it (`owner/pooled_lift.rs`); shown beside the gym's own lift.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pooled_lift: Vec<crate::owner::pooled_lift::PooledLift>,
    /// Which draw of the holdout groups is in force (`owner/holdout.rs`); reshuffled by the
    /// owner at most monthly.
    #[serde(default)]
    pub holdout_draw: crate::owner::holdout::HoldoutDraw,
    /// The message experiments, newest last (`owner/experiment.rs`): those running split new
    /// tasks between the current and the proposed prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub experiments: Vec<crate::owner::experiment::Experiment>,
    /// The dashboard's sessions of this account carry it; signing out moves it on, ending
    /// every session issued before on the server.
    #[serde(default)]
    pub session_version: u64,
    /// The API token's hash, a rotated-out webhook secret's overlap, the draw's stable key
    /// (`owner/credentials.rs`).
    #[serde(default)]
    pub credentials: crate::owner::credentials::Credentials,
    /// When the owner last used the dashboard or the API (written at most hourly): their
    /// presence (`owner/presence.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_at: Option<Timestamp>,
    /// Whether the account's member items keep the ids of their member's open tasks, put and
    /// taken in the transactions that open and close them (`engine/lifecycle/member_tasks.rs`): true for
    /// an account made since they do, set for one made before by `openloop-admin
    /// backfill-tallies`. While false, a step reads the member's active guards instead.
    #[serde(default)]
    pub member_open_tasks_kept: bool,
    /// How many outbound webhook endpoints the account may have: counted up before an
    /// endpoint is made and down after one is removed, so never fewer than it has. `None`
    /// on an account from before the count (it may have some). A step that read the account
    /// writes no webhook event to the outbox while this is `Some(0)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_endpoints: Option<u32>,
    /// Per task type not on autopilot: the owner's approvals in a row without an edit
    /// (`engine/learning/autopilot.rs`); at [`crate::learning::suggestion::AUTOPILOT_APPROVALS`]
    /// a suggestion offers the type for `autopilot_types`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub approval_streaks: std::collections::BTreeMap<String, u32>,
    /// The operator asked for the account to be removed (`DELETE /api/v1/accounts/{id}`): from
    /// then on it is paused, its token and sessions end, nothing it is sent is kept, and the
    /// signals queue removes its items page by page, this item last
    /// (`engine/business/account_removal.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removal: Option<AccountRemoval>,
    pub created_at: Timestamp,
    pub version: u64,
}

/// A removal under way: when it was asked for and how far it has come.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountRemoval {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub requested_at: Timestamp,
    /// The items removed so far.
    pub items_removed: u64,
}

impl Account {
    /// The gym's name as its members and owner read it: the profile's display name, else the
    /// account's name.
    pub fn business_name(&self) -> String {
        self.settings.profile.display_name.clone().unwrap_or_else(|| self.name.clone())
    }

    /// The webhook secrets a delivery may be signed with at `now`: the current one, and the
    /// one rotated out while its overlap lasts.
    pub fn inbound_secrets(&self, now: Timestamp) -> Vec<&WebhookSecret> {
        let mut secrets = vec![&self.webhook_secret];
        if let Some(old) = self.credentials.retiring_webhook_secret.as_ref().filter(|r| now < r.until) {
            secrets.push(&old.secret);
        }
        secrets
    }

    /// The key the holdout draw and the learning pseudonym derive from: the first webhook
    /// secret, whatever rotations followed.
    pub fn stable_key(&self) -> &WebhookSecret {
        self.credentials.stable_key.as_ref().unwrap_or(&self.webhook_secret)
    }

    /// Whether an event of this account may have an endpoint to reach (see
    /// [`Account::webhook_endpoints`]): its change writes it to the outbox only then.
    pub fn may_have_webhooks(&self) -> bool {
        self.webhook_endpoints.is_none_or(|n| n > 0)
    }

    pub fn sender_name(&self) -> &str {
        self.settings.profile.display_name.as_deref().unwrap_or(&self.name)
    }

    /// The address member mail leaves from: the gym's own domain once its
    /// identity is verified, the shared address until then.
    pub fn sender_address(&self, shared: &crate::kernel::ids::Email) -> crate::kernel::ids::Email {
        match (&self.sending_identity, &self.settings.sending_domain) {
            (Some(identity), Some(domain)) if &identity.domain == domain => identity.from_address(shared),
            _ => shared.clone(),
        }
    }
}

/// A webhook signing secret: stored and compared, never printed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

impl From<&str> for WebhookSecret {
    fn from(secret: &str) -> Self {
        Self::new(secret)
    }
}

/// The platform-wide switch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SystemConfig {
    pub global_pause: bool,
    pub updated_at: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_overrides(overrides: Vec<AgentOverride>) -> Settings {
        let mut s = Settings::defaults("Europe/London".into());
        s.agent_overrides = overrides;
        s
    }

    fn addition(agent: &str, task_type: Option<&str>) -> AgentOverride {
        AgentOverride {
            agent: agent.into(),
            task_type: task_type.map(Into::into),
            prompt_override: None,
            prompt_additions: Some("Mention the summer schedule.".into()),
        }
    }

    /// The billing link is the one link a payment note gives: an `https://` address with a
    /// host, nothing else.
    #[test]
    fn the_billing_link_is_one_https_address() {
        let with = |link: &str| {
            let mut s = Settings::defaults("Europe/London".into());
            s.profile.billing_link = Some(link.into());
            s.validate()
        };
        assert!(with("https://pay.example/renegade").is_ok());
        assert!(with("").is_ok(), "an empty field is no link");
        for bad in [
            "http://pay.example",
            "pay.example",
            "https://",
            "https:///x",
            "https://pay.example/a b",
        ] {
            assert_eq!(with(bad).expect_err(bad).code, "invalid_profile", "{bad}");
        }
    }

    #[test]
    fn overrides_name_a_real_agent_and_one_of_its_types_once() {
        assert!(
            with_overrides(vec![addition("retention", Some("churn_risk")), addition("*", None)])
                .validate()
                .is_ok()
        );
        let refused = [
            vec![addition("marketing", None)],
            vec![addition("retention", Some("no_such_type"))],
            vec![addition("sales", Some("churn_risk"))],
            vec![addition("retention", None), addition("retention", None)],
            vec![AgentOverride {
                prompt_additions: Some("   ".into()),
                ..addition("gm", None)
            }],
            vec![AgentOverride {
                prompt_override: Some("x".repeat(limits::MAX_OVERRIDE_CHARS + 1)),
                ..addition("gm", None)
            }],
        ];
        for overrides in refused {
            let err = with_overrides(overrides.clone()).validate().expect_err("refused");
            assert_eq!(err.code, "invalid_agent_overrides", "{overrides:?}");
        }
    }

    #[test]
    fn settings_without_overrides_or_the_new_profile_fields_still_read() {
        let old = serde_json::json!({
            "execution_mode": "manual", "member_weekly_limit": 3, "daily_send_limit": 15,
            "timezone": "UTC", "send_window_start": 8, "send_window_end": 20, "onboarded_at": null,
            "avg_membership_price": 150.0, "profile": {"display_name": "Harbour Gym"}
        });
        let settings: Settings = serde_json::from_value(old).expect("old settings");
        assert!(settings.agent_overrides.is_empty());
        assert_eq!(settings.profile.display_name.as_deref(), Some("Harbour Gym"));
    }
}
