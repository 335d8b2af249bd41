//! The owner's holdout: what share of the members Openloop would
//! contact on its own it leaves alone instead, for which task types, and the salt that puts
//! each member in a group — drawn again only when the owner reshuffles, at most once a month.
//!
//! Only tasks Openloop opens itself (the risk scan, triggers, recurring templates) go through
//! the draw; a task the owner or the agent opens never does. A type whose goal no signal shows
//! is never held out: there would be nothing to compare.

use hmac::{Hmac, Mac};
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::MemberId;
use crate::owner::account::{Account, Settings};
use crate::task::TriggerType;
use crate::task::holdout::{self, Holdout};
use crate::task::outcome;
use crate::task::task_type;

/// The most of its members an account may hold out, in percent.
pub const MAX_HOLDOUT_PERCENT: u8 = 20;
/// The share the settings page recommends, in percent.
pub const RECOMMENDED_HOLDOUT_PERCENT: u8 = 10;
/// The least time between two draws of the holdout group.
pub const RESHUFFLE_AFTER: SignedDuration = SignedDuration::from_hours(24 * 30);

/// The holdout's task types unless the owner says otherwise: every type but
/// `payment_recovery` (a failed payment is money the member owes; nobody is left unreminded
/// unless the owner opts the type in).
pub fn default_task_types() -> Vec<String> {
    task_type::REGISTRY
        .iter()
        .map(|d| d.key)
        .filter(|k| *k != "payment_recovery")
        .map(str::to_owned)
        .collect()
}

/// Which salt draws the groups now: the `generation`-th, drawn at `drawn_at` (`None`: the
/// account's first, drawn when it was created).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldoutDraw {
    pub generation: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawn_at: Option<Timestamp>,
}

impl HoldoutDraw {
    /// When the groups in force were drawn.
    pub fn since(&self, account_created: Timestamp) -> Timestamp {
        self.drawn_at.unwrap_or(account_created)
    }

    /// The earliest time the owner may draw again.
    pub fn next_reshuffle(&self, account_created: Timestamp) -> Timestamp {
        self.since(account_created) + RESHUFFLE_AFTER
    }

    /// A new draw at `now`, or a refusal inside the month since the last.
    pub fn reshuffled(&self, account_created: Timestamp, now: Timestamp) -> Result<HoldoutDraw, InvalidInput> {
        let next = self.next_reshuffle(account_created);
        if now < next {
            return Err(InvalidInput::new(
                "reshuffle_too_soon",
                format!(
                    "the holdout group was drawn at {}; it can be drawn again from {next} (at most once every 30 days, so each group is measured long enough)",
                    self.since(account_created)
                ),
            ));
        }
        Ok(HoldoutDraw {
            generation: self.generation + 1,
            drawn_at: Some(now),
        })
    }
}

/// The account's salt for its current draw: a MAC of the generation under the account's
/// webhook secret — random per account, never shown, and new with every reshuffle.
pub fn salt(account: &Account) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(account.stable_key().expose().as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
    mac.update(format!("openloop-holdout-salt:{}", account.holdout_draw.generation).as_bytes());
    mac.finalize().into_bytes().into()
}

/// Whether a creation of this origin is one Openloop makes itself (the scan, a trigger, a
/// recurring template): the owner's own tasks, the GM chat's and the agent's never are.
pub fn opened_by_openloop(trigger: TriggerType) -> bool {
    !matches!(trigger, TriggerType::Manual | TriggerType::GmChat | TriggerType::AgentSpawned)
}

/// The draw for a task of `task_type` about `member` that Openloop opens itself: `None` when
/// the type is not held out (not in the owner's list, or no signal can show its goal).
/// With `holdout_percent` 0 the draw still records the member as contacted, so the lift
/// counts the contacted group from the day the owner turns holdouts on.
pub fn draw(account: &Account, member: &MemberId, task_type: &str, trigger: TriggerType) -> Option<Holdout> {
    let settings = &account.settings;
    let listed = settings.holdout_task_types.iter().any(|t| t == task_type);
    if !opened_by_openloop(trigger) || !listed || !outcome::is_watchable(task_type) {
        return None;
    }
    let bucket = holdout::bucket(&salt(account), member);
    Some(Holdout {
        arm: holdout::arm(bucket, settings.holdout_percent),
        bucket,
        generation: account.holdout_draw.generation,
    })
}

/// The settings' holdout fields, checked (part of [`Settings::validate`]).
pub fn validate(settings: &Settings) -> Result<(), InvalidInput> {
    if settings.holdout_percent > MAX_HOLDOUT_PERCENT {
        return Err(InvalidInput::new(
            "invalid_holdout_percent",
            format!("holdout_percent must be 0-{MAX_HOLDOUT_PERCENT} (10 is recommended)"),
        ));
    }
    if settings.holdout_task_types.len() > task_type::REGISTRY.len() {
        return Err(InvalidInput::new(
            "invalid_holdout_task_types",
            "holdout_task_types lists each task type at most once",
        ));
    }
    if let Some(unknown) = settings.holdout_task_types.iter().find(|t| task_type::lookup(t).is_none()) {
        return Err(InvalidInput::new(
            "invalid_holdout_task_types",
            format!("{:?} is not a task type", unknown.chars().take(64).collect::<String>()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::holdout::Arm;
    use crate::testing::{at, sample_account};

    fn member(i: usize) -> MemberId {
        MemberId::parse(&format!("m_{i}")).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn only_what_openloop_opens_itself_of_a_listed_watchable_type_is_drawn() {
        let mut account = sample_account(at("2026-11-02T14:00:00Z"));
        account.settings.holdout_percent = 20;
        let m = member(1);
        assert!(draw(&account, &m, "churn_risk", TriggerType::CronAnalysis).is_some());
        assert!(draw(&account, &m, "churn_risk", TriggerType::Webhook).is_some());
        assert!(draw(&account, &m, "churn_risk", TriggerType::Recurring).is_some());
        for owner in [TriggerType::Manual, TriggerType::GmChat, TriggerType::AgentSpawned] {
            assert_eq!(draw(&account, &m, "churn_risk", owner), None, "{owner:?}");
        }
        assert_eq!(
            draw(&account, &m, "payment_recovery", TriggerType::Webhook),
            None,
            "not held out by default"
        );
        assert_eq!(
            draw(&account, &m, "monthly_churn_analysis", TriggerType::Recurring),
            None,
            "no signal to watch"
        );
        account.settings.holdout_task_types.push("payment_recovery".into());
        assert!(draw(&account, &m, "payment_recovery", TriggerType::Webhook).is_some(), "opted in");
    }

    #[test]
    fn a_member_keeps_their_group_across_types_until_a_reshuffle_a_month_later() {
        let created = at("2026-11-02T14:00:00Z");
        let mut account = sample_account(created);
        account.settings.holdout_percent = 20;
        let groups = |account: &Account| -> Vec<Arm> {
            (0..300)
                .map(|i| {
                    let churn = draw(account, &member(i), "churn_risk", TriggerType::CronAnalysis).map(|h| h.arm);
                    let back = draw(account, &member(i), "win_back", TriggerType::Webhook).map(|h| h.arm);
                    assert_eq!(churn, back, "one group per member, whatever the type");
                    churn.unwrap_or_else(|| panic!("drawn"))
                })
                .collect()
        };
        let before = groups(&account);
        let held = before.iter().filter(|a| **a == Arm::HeldOut).count();
        assert!((30..=90).contains(&held), "about a fifth of 300: {held}");

        let err = account
            .holdout_draw
            .reshuffled(created, created + SignedDuration::from_hours(24 * 29))
            .expect_err("inside the month");
        assert_eq!(err.code, "reshuffle_too_soon");
        account.holdout_draw = account
            .holdout_draw
            .reshuffled(created, created + RESHUFFLE_AFTER)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(account.holdout_draw.generation, 1);
        let after = groups(&account);
        assert_ne!(before, after, "a reshuffle draws the groups again");
        let next = account
            .holdout_draw
            .reshuffled(created, created + RESHUFFLE_AFTER + SignedDuration::from_hours(1));
        assert!(next.is_err(), "and the next one waits another month");
    }

    #[test]
    fn the_settings_hold_out_at_most_a_fifth_of_known_types() {
        let mut settings = Settings::defaults("UTC".into());
        assert_eq!(settings.holdout_percent, 0);
        assert!(!settings.holdout_task_types.contains(&"payment_recovery".to_owned()));
        assert!(settings.holdout_task_types.contains(&"churn_risk".to_owned()));
        settings.holdout_percent = 21;
        assert_eq!(validate(&settings).map_err(|e| e.code), Err("invalid_holdout_percent".into()));
        settings.holdout_percent = 20;
        settings.holdout_task_types = vec!["no_such_type".into()];
        assert_eq!(validate(&settings).map_err(|e| e.code), Err("invalid_holdout_task_types".into()));
        settings.holdout_task_types = vec!["churn_risk".into(), "payment_recovery".into()];
        assert!(validate(&settings).is_ok());
        let old: Settings = serde_json::from_value(serde_json::json!({
            "execution_mode": "manual", "member_weekly_limit": 3, "daily_send_limit": 15,
            "timezone": "UTC", "send_window_start": 8, "send_window_end": 20, "onboarded_at": null,
            "avg_membership_price": 150.0, "profile": {}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((old.holdout_percent, old.holdout_task_types), (0, default_task_types()));
    }
}
