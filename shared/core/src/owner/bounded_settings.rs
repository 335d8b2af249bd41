//! The profile and the agent overrides as a request body takes them: every text one of the
//! bounded types of `kernel::texts` (`ProfileLine`, `ProfileText`, `AgentName`,
//! `TaskTypeName`, `OverrideText`), so the rule that documents a field is the one that refuses
//! it — `422 invalid_profile` / `invalid_agent_overrides` naming the field
//! (`profile.display_name`, `agent_overrides[0].prompt_additions`) — before the engine sees
//! the request. What is stored and shown stays [`Profile`] and [`AgentOverride`]: an account
//! read back is never refused by a rule that changed since it was written.

use serde::{Deserialize, Deserializer};

use crate::kernel::texts::{AgentName, OverrideText, ProfileLine, ProfileText, TaskTypeName};
use crate::owner::account::{AgentOverride, Profile};

/// [`Profile`], every text bounded.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundedProfile {
    #[serde(default)]
    display_name: Option<ProfileLine>,
    #[serde(default)]
    owner_first_name: Option<ProfileLine>,
    #[serde(default)]
    sign_off: Option<ProfileText>,
    #[serde(default)]
    business_type: Option<ProfileLine>,
    #[serde(default)]
    vibe: Option<ProfileLine>,
    #[serde(default)]
    class_types: Vec<ProfileLine>,
    #[serde(default)]
    special_programs: Vec<ProfileLine>,
    #[serde(default)]
    current_promo: Option<ProfileText>,
    #[serde(default)]
    ways_to_stay: Option<ProfileText>,
    #[serde(default)]
    typical_greeting: Option<ProfileText>,
    #[serde(default)]
    never_mention: Vec<ProfileLine>,
    #[serde(default)]
    always_include: Vec<ProfileLine>,
    #[serde(default)]
    contact_phone: Option<ProfileLine>,
    #[serde(default)]
    contact_address: Option<ProfileText>,
    #[serde(default)]
    contact_website: Option<ProfileLine>,
    #[serde(default)]
    billing_link: Option<ProfileLine>,
}

fn text<T: Into<String>>(value: Option<T>) -> Option<String> {
    value.map(Into::into)
}

fn texts<T: Into<String>>(values: Vec<T>) -> Vec<String> {
    values.into_iter().map(Into::into).collect()
}

impl From<BoundedProfile> for Profile {
    fn from(p: BoundedProfile) -> Self {
        Self {
            display_name: text(p.display_name),
            owner_first_name: text(p.owner_first_name),
            sign_off: text(p.sign_off),
            business_type: text(p.business_type),
            vibe: text(p.vibe),
            class_types: texts(p.class_types),
            special_programs: texts(p.special_programs),
            current_promo: text(p.current_promo),
            ways_to_stay: text(p.ways_to_stay),
            typical_greeting: text(p.typical_greeting),
            never_mention: texts(p.never_mention),
            always_include: texts(p.always_include),
            contact_phone: text(p.contact_phone),
            contact_address: text(p.contact_address),
            contact_website: text(p.contact_website),
            billing_link: text(p.billing_link),
        }
    }
}

/// [`AgentOverride`], every text bounded.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundedOverride {
    agent: AgentName,
    #[serde(default)]
    task_type: Option<TaskTypeName>,
    #[serde(default)]
    prompt_override: Option<OverrideText>,
    #[serde(default)]
    prompt_additions: Option<OverrideText>,
}

impl From<BoundedOverride> for AgentOverride {
    fn from(o: BoundedOverride) -> Self {
        Self {
            agent: o.agent.into(),
            task_type: text(o.task_type),
            prompt_override: text(o.prompt_override),
            prompt_additions: text(o.prompt_additions),
        }
    }
}

/// `"profile"` of a settings change (`null` is no change).
pub fn profile<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Profile>, D::Error> {
    Ok(Option::<BoundedProfile>::deserialize(deserializer)?.map(Profile::from))
}

/// `"profile"` of a new account.
pub fn new_profile<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Profile, D::Error> {
    BoundedProfile::deserialize(deserializer).map(Profile::from)
}

/// `"agent_overrides"` of a settings change (`null` is no change).
pub fn agent_overrides<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<AgentOverride>>, D::Error> {
    Ok(Option::<Vec<BoundedOverride>>::deserialize(deserializer)?.map(|list| list.into_iter().map(AgentOverride::from).collect()))
}

#[cfg(test)]
mod tests {
    use crate::engine::SettingsPatch;
    use crate::kernel::limits;

    fn refusal(body: serde_json::Value) -> (String, String) {
        let e = serde_json::from_value::<SettingsPatch>(body).expect_err("refused");
        let text = e.to_string();
        let (code, message) = crate::kernel::bounded::parse_refusal(&text).unwrap_or_else(|| panic!("not a rule's refusal: {text}"));
        (code.to_owned(), message.to_owned())
    }

    #[test]
    fn a_settings_change_is_refused_by_the_rule_of_each_text() {
        let long = "x".repeat(limits::MAX_PROFILE_TEXT_CHARS + 1);
        for (body, code) in [
            (serde_json::json!({"profile": {"display_name": long}}), "invalid_profile"),
            (serde_json::json!({"profile": {"display_name": "Two\nlines"}}), "invalid_profile"),
            (serde_json::json!({"profile": {"never_mention": ["ok", long]}}), "invalid_profile"),
            (serde_json::json!({"profile": {"sign_off": "bell\u{7}"}}), "invalid_profile"),
            (
                serde_json::json!({"agent_overrides": [{"agent": "Not An Agent"}]}),
                "invalid_agent_overrides",
            ),
            (
                serde_json::json!({"agent_overrides": [{"agent": "retention", "prompt_additions": "x".repeat(limits::MAX_OVERRIDE_CHARS + 1)}]}),
                "invalid_agent_overrides",
            ),
            (
                serde_json::json!({"agent_overrides": [{"agent": "retention", "task_type": "Win Back"}]}),
                "invalid_task_type",
            ),
            (serde_json::json!({"timezone": "not a zone!"}), "invalid_timezone"),
            (serde_json::json!({"owner_phone": "5551234567"}), "invalid_owner_phone"),
            (serde_json::json!({"sending_domain": "not a domain"}), "invalid_sending_domain"),
            (serde_json::json!({"holdout_task_types": ["Win Back"]}), "invalid_task_type"),
            (serde_json::json!({"pushpress": {"api_key": "has a space"}}), "invalid_pushpress"),
        ] {
            assert_eq!(refusal(body.clone()).0, code, "{body}");
        }
        let kept: SettingsPatch = serde_json::from_value(serde_json::json!({
            "profile": {"display_name": "CrossFit Renegade", "sign_off": "Coach Sam\nRenegade", "class_types": ["WOD"]},
            "agent_overrides": [{"agent": "*", "prompt_additions": "Be brief."}],
            "owner_phone": null, "sending_domain": null, "timezone": "America/Denver", "holdout_task_types": ["win_back"],
        }))
        .expect("kept");
        assert_eq!(kept.profile.expect("profile").display_name.as_deref(), Some("CrossFit Renegade"));
        assert_eq!(kept.agent_overrides.expect("overrides")[0].agent, "*");
        assert_eq!((kept.owner_phone, kept.sending_domain), (Some(None), Some(None)));
        let absent: SettingsPatch = serde_json::from_value(serde_json::json!({})).expect("empty");
        assert!(absent.profile.is_none() && absent.owner_phone.is_none() && absent.timezone.is_none());
    }
}
