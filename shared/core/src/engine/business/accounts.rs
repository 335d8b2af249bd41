//! Accounts, settings and the two kill switches (per account and global); who an owner's
//! API token speaks for; the onboarding ramp an account stands in.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

use super::Engine;
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::AccountId;
use crate::members::connector::ConnectorCredentials;
use crate::owner::account::{Account, AgentOverride, ExecutionMode, Profile, Settings, SystemConfig, WebhookSecret, parse_timezone};
use crate::rails::autonomy::{RampLimits, RampPhase};
use crate::task::error::EngineError;

/// `POST /api/v1/accounts`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewAccount {
    pub name: crate::kernel::texts::AccountName,
    pub timezone: Option<crate::kernel::texts::TimezoneName>,
    pub execution_mode: Option<ExecutionMode>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub onboarded_at: Option<Timestamp>,
    #[serde(default, deserialize_with = "crate::owner::bounded_settings::new_profile")]
    pub profile: Profile,
    /// The account's own PushPress credentials: `{"api_key", "company_id"?}`.
    #[serde(default)]
    pub pushpress: Option<ConnectorCredentials>,
}

/// Secrets made by the caller from a real random source (the core has none).
pub struct AccountSecrets {
    pub api_token: String,
    pub api_token_hash: String,
    pub webhook_secret: WebhookSecret,
}

/// `PUT /api/v1/settings`: any subset of the fields.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    pub execution_mode: Option<ExecutionMode>,
    #[cfg_attr(feature = "openapi", schema(maximum = 14))]
    pub member_weekly_limit: Option<u32>,
    #[cfg_attr(feature = "openapi", schema(maximum = 10000))]
    pub daily_send_limit: Option<u32>,
    #[serde(default, deserialize_with = "crate::kernel::texts::TimezoneName::de_optional")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::TimezoneName::optional_schema))]
    pub timezone: Option<String>,
    #[cfg_attr(feature = "openapi", schema(maximum = 23))]
    pub send_window_start: Option<u8>,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 24))]
    pub send_window_end: Option<u8>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub onboarded_at: Option<Timestamp>,
    /// A monthly price, 0–100,000.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100000))]
    pub avg_membership_price: Option<f64>,
    #[serde(default, deserialize_with = "crate::owner::bounded_settings::profile")]
    pub profile: Option<Profile>,
    #[serde(default, deserialize_with = "crate::owner::bounded_settings::agent_overrides")]
    pub agent_overrides: Option<Vec<AgentOverride>>,
    /// Replaces the per-agent ramp start dates.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<std::collections::BTreeMap<String, crate::kernel::texts::TimeText>>))]
    pub agent_ramps: Option<std::collections::BTreeMap<String, Timestamp>>,
    /// Where owner notifications are mailed.
    pub owner_email: Option<crate::kernel::ids::Email>,
    pub owner_notification_channel: Option<crate::owner::owner_notice::NotificationChannel>,
    /// Replaces the prices per PushPress plan.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<std::collections::BTreeMap<String, f64>>))]
    pub plan_prices: Option<std::collections::BTreeMap<String, f64>>,
    /// The trust gradient's opt-in.
    pub auto_save_memories: Option<bool>,
    /// Touches at the learned send hours (`true`), the usual ones (`false`), or as the trust
    /// gradient says (`null`).
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<bool>))]
    pub use_learned_send_hours: Option<Option<bool>>,
    /// Contributing to the cross-tenant learning record.
    pub share_learning: Option<bool>,
    /// The account's own PushPress credentials: `{"api_key", "company_id"?}` sets them,
    /// `null` removes them (the process-wide key, if any, is used again); absent keeps them.
    /// Write-only: no view returns the key.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<ConnectorCredentials>))]
    pub pushpress: Option<Option<ConnectorCredentials>>,
    /// The gym's own sending domain: a name creates its identity, `null` goes
    /// back to the shared domain; absent keeps it.
    #[serde(default, deserialize_with = "crate::kernel::texts::DomainName::de_present")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::DomainName::optional_schema))]
    pub sending_domain: Option<Option<String>>,
    /// The share of members held out (0–20; see docs/lift.md).
    #[cfg_attr(feature = "openapi", schema(maximum = 20))]
    pub holdout_percent: Option<u8>,
    /// Replaces the task types held out.
    #[serde(default, deserialize_with = "crate::kernel::texts::TaskTypeName::de_optional_list")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::TaskTypeName::list_schema))]
    pub holdout_task_types: Option<Vec<String>>,
    /// Apply only over this version of the account (the dashboard's form, which posts every
    /// field it showed): another change since is `StaleVersion`, nothing saved. Not in the API.
    #[serde(skip)]
    pub expected_version: Option<u64>,
    /// The morning brief's local hour; `null` turns the morning mail off.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u8>, maximum = 23))]
    pub brief_hour: Option<Option<u8>>,
    pub quiet_hours: Option<crate::owner::quiet::QuietHours>,
    pub review_expiry_days: Option<u32>,
    /// `call_list` (default), `send_default` or `close`.
    pub on_review_expiry: Option<crate::owner::quiet::OnReviewExpiry>,
    /// Replaces the task types that run on autopilot (`limited_auto`).
    #[serde(default, deserialize_with = "crate::kernel::texts::TaskTypeName::de_optional_list")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::TaskTypeName::list_schema))]
    pub autopilot_types: Option<Vec<String>>,
    /// Text messages (any subset of `enabled`, `origination_identity`, `daily_limit`,
    /// `max_segments`).
    pub sms: Option<crate::owner::sms::SmsPatch>,
    /// The owner's phone for critical alerts; `null` removes it.
    #[serde(default, deserialize_with = "crate::kernel::texts::PhoneNumber::de_present")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::PhoneNumber::optional_schema))]
    pub owner_phone: Option<Option<String>>,
}

/// A field that is present — even as `null` — is `Some`, so `null` can mean "remove".
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

impl SettingsPatch {
    fn apply(&self, mut s: Settings) -> Settings {
        let patch = self.clone();
        if let Some(v) = patch.execution_mode {
            s.execution_mode = v
        }
        if let Some(v) = patch.member_weekly_limit {
            s.member_weekly_limit = v
        }
        if let Some(v) = patch.daily_send_limit {
            s.daily_send_limit = v
        }
        if let Some(v) = patch.timezone {
            s.timezone = v
        }
        if let Some(v) = patch.send_window_start {
            s.send_window_start = v
        }
        if let Some(v) = patch.send_window_end {
            s.send_window_end = v
        }
        if let Some(v) = patch.onboarded_at {
            s.onboarded_at = Some(v)
        }
        if let Some(v) = patch.avg_membership_price {
            s.avg_membership_price = v
        }
        if let Some(v) = patch.profile {
            s.profile = v
        }
        if let Some(v) = patch.agent_overrides {
            s.agent_overrides = v
        }
        if let Some(v) = patch.agent_ramps {
            s.agent_ramps = v
        }
        if let Some(v) = patch.owner_email {
            s.owner_email = Some(v)
        }
        if let Some(v) = patch.owner_notification_channel {
            s.owner_notification_channel = v
        }
        if let Some(v) = patch.auto_save_memories {
            s.auto_save_memories = v;
        }
        if let Some(v) = patch.use_learned_send_hours {
            s.use_learned_send_hours = v;
        }
        if let Some(v) = patch.share_learning {
            s.share_learning = v;
        }
        if let Some(v) = patch.plan_prices {
            s.plan_prices = v
        }
        if let Some(v) = patch.holdout_percent {
            s.holdout_percent = v;
        }
        if let Some(mut v) = patch.holdout_task_types {
            v.sort();
            v.dedup();
            s.holdout_task_types = v;
        }
        if let Some(v) = patch.brief_hour {
            s.brief_hour = v
        }
        if let Some(v) = patch.quiet_hours {
            s.quiet_hours = v
        }
        if let Some(v) = patch.review_expiry_days {
            s.review_expiry_days = v
        }
        if let Some(v) = patch.on_review_expiry {
            s.on_review_expiry = v
        }
        if let Some(mut v) = patch.autopilot_types {
            v.sort();
            v.dedup();
            s.autopilot_types = v;
        }
        if let Some(v) = &patch.sms {
            s.sms = v.apply(s.sms.clone());
        }
        if let Some(v) = patch.owner_phone {
            s.owner_phone = v
        }
        if let Some(v) = patch.sending_domain {
            s.sending_domain = v.map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase())
        }
        s
    }
}

/// Where an account stands on the onboarding ramp now: its own phase and each
/// agent's limits.
#[derive(Clone, Debug)]
pub struct Autonomy {
    pub account: Account,
    pub phase: RampPhase,
    pub agents: BTreeMap<&'static str, RampLimits>,
}

impl Autonomy {
    /// The account's place on the ramp at `now`.
    pub fn of(account: Account, now: jiff::Timestamp) -> Self {
        Self {
            phase: RampPhase::since(account.settings.onboarded_at, now),
            agents: crate::rails::autonomy::phases(&account.settings, now),
            account,
        }
    }
}

impl Engine {
    pub async fn create_account(&self, input: NewAccount, secrets: AccountSecrets) -> Result<Account, EngineError> {
        let name = input.name.trim().to_owned();
        if name.is_empty() || name.len() > crate::kernel::limits::MAX_ACCOUNT_NAME_CHARS {
            return Err(InvalidInput::new("invalid_name", "name must be 1-200 characters").into());
        }
        crate::kernel::text::single_line("invalid_name", "name", &name)?;
        let now = self.clock.now();
        let id = AccountId::generate(now);
        if let Some(credentials) = &input.pushpress {
            credentials.validate()?;
        }
        // A gym that brings its PushPress key is checked before it is made (`connection.rs`);
        // PushPress's time zone stands in for one the request did not name.
        let connected = match &input.pushpress {
            Some(credentials) => Some(self.check_and_subscribe(id, credentials).await?),
            None => None,
        };
        let company_timezone = connected
            .as_ref()
            .and_then(|c| c.company.timezone.clone())
            .filter(|t| parse_timezone(t).is_ok());
        let timezone = input
            .timezone
            .map(String::from)
            .or(company_timezone)
            .unwrap_or_else(|| "America/New_York".into());
        parse_timezone(&timezone)?;
        let mut settings = Settings::defaults(timezone);
        settings.execution_mode = input.execution_mode.unwrap_or(ExecutionMode::Manual);
        // Connecting PushPress starts the ramp and the warm-up (spec §26, §33.2), unless the
        // owner says when the gym was onboarded: safe first weeks without a setting.
        settings.onboarded_at = input.onboarded_at.or(connected.as_ref().map(|_| now));
        settings.profile = input.profile;
        settings.validate()?;
        let account = Account {
            id,
            name,
            settings,
            webhook_secret: secrets.webhook_secret,
            paused: false,
            pushpress: input.pushpress,
            sending_identity: None,
            learning_patterns: Default::default(),
            approval_streaks: Default::default(),
            removal: None,
            pooled_lift: Vec::new(),
            holdout_draw: Default::default(),
            experiments: Vec::new(),
            session_version: 0,
            credentials: crate::owner::credentials::Credentials {
                api_token_hash: Some(secrets.api_token_hash.clone()),
                ..Default::default()
            },
            last_seen_at: None,
            member_open_tasks_kept: true,
            webhook_endpoints: Some(0),
            created_at: now,
            version: 1,
        };
        self.store.create_account(&account, &secrets.api_token_hash).await?;
        if let Some(connected) = connected {
            self.start_connection(account.id, connected).await?;
        }
        Ok(account)
    }

    pub async fn account(&self, id: AccountId) -> Result<Account, EngineError> {
        self.store.get_account(id).await?.ok_or(EngineError::NotFound { what: "account" })
    }

    /// Every account (the operator's list).
    pub async fn list_accounts(&self) -> Result<Vec<Account>, EngineError> {
        Ok(self.store.list_accounts().await?)
    }

    /// The account's place on the onboarding ramp at the engine's time.
    pub async fn autonomy(&self, id: AccountId) -> Result<Autonomy, EngineError> {
        let account = self.account(id).await?;
        Ok(Autonomy::of(account, self.clock.now()))
    }

    /// Apply a settings patch; all of it or none of it.
    pub async fn update_settings(&self, id: AccountId, patch: SettingsPatch) -> Result<Settings, EngineError> {
        Ok(self.update_account(id, patch).await?.settings)
    }

    /// [`Self::update_settings`], answering the whole account (for views that say whether
    /// it has connector credentials).
    pub async fn update_account(&self, id: AccountId, patch: SettingsPatch) -> Result<Account, EngineError> {
        if let Some(Some(credentials)) = &patch.pushpress {
            credentials.validate()?;
        }
        if matches!(patch.sending_domain, Some(Some(_))) && self.sending_domains.is_none() {
            return Err(InvalidInput::new(
                "sending_domains_unavailable",
                "this deployment cannot create sending identities; mail leaves from the shared domain",
            )
            .into());
        }
        // A newly named sending domain is claimed first (409 if another account holds it);
        // a domain no longer named is given up once the settings are saved.
        let named = match &patch.sending_domain {
            Some(Some(raw)) => Some(crate::owner::deliverability::parse_domain(raw)?),
            _ => None,
        };
        // A newly named text number the same way (409 `sms_number_taken` if another
        // account holds it), so no two accounts text from, or read texts to, one number.
        let named_number = patch
            .sms
            .as_ref()
            .and_then(|sms| sms.origination_identity.as_ref())
            .map(|n| n.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned));
        let current = match (&patch.sending_domain, &named_number) {
            (None, None) => None,
            _ => Some(self.account(id).await?),
        };
        let before = match &patch.sending_domain {
            Some(_) => current.as_ref().and_then(|a| a.settings.sending_domain.clone()),
            None => None,
        };
        let number_before = match &named_number {
            Some(_) => current.as_ref().and_then(|a| a.settings.sms.origination_identity.clone()),
            None => None,
        };
        let same_number = |a: &str, b: &str| crate::owner::sms::number_key(a) == crate::owner::sms::number_key(b);
        let claimed_number = match &named_number {
            Some(Some(number)) if !number_before.as_deref().is_some_and(|b| same_number(b, number)) => {
                self.claim_sms_number(id, number).await?;
                Some(number.clone())
            }
            _ => None,
        };
        let claimed = match &named {
            Some(domain) if before.as_ref() != Some(domain) => {
                if let Err(e) = self.claim_sending_domain(id, domain).await {
                    if let Some(number) = &claimed_number {
                        self.release_sms_number(id, number).await;
                    }
                    return Err(e);
                }
                Some(domain.clone())
            }
            _ => None,
        };
        let result = self.update_claimed_account(id, patch).await;
        match (&result, &claimed) {
            (Err(_), Some(domain)) => self.release_sending_domain(id, domain).await,
            (Ok(account), _) => {
                if let Some(old) = before.filter(|old| account.settings.sending_domain.as_ref() != Some(old)) {
                    self.release_sending_domain(id, &old).await;
                }
            }
            _ => {}
        }
        match (&result, &claimed_number) {
            (Err(_), Some(number)) => self.release_sms_number(id, number).await,
            (Ok(account), _) => {
                let now_named = account.settings.sms.origination_identity.as_deref();
                if let Some(old) = number_before.filter(|old| !now_named.is_some_and(|n| same_number(n, old))) {
                    self.release_sms_number(id, &old).await;
                }
            }
            _ => {}
        }
        let account = result?;
        if account
            .sending_identity
            .as_ref()
            .is_some_and(|i| i.status == crate::owner::deliverability::DomainStatus::NotCreated)
        {
            return self.check_sending_domain(account, true).await;
        }
        Ok(account)
    }

    /// [`Self::update_account`] once its sending domain is claimed.
    async fn update_claimed_account(&self, id: AccountId, patch: SettingsPatch) -> Result<Account, EngineError> {
        // Connecting and disconnecting talk to PushPress first (`connection.rs`): a key it
        // refuses changes nothing here.
        let connected = match &patch.pushpress {
            Some(Some(credentials)) => Some(self.check_and_subscribe(id, credentials).await?),
            Some(None) => {
                self.end_connection(&self.account(id).await?).await?;
                None
            }
            None => None,
        };
        // The patch is applied to the account as stored now: two owners changing different
        // fields at once both land (the loser of the version race re-reads and re-applies).
        let now = self.clock.now();
        let account = self
            .change_account(id, |account| {
                if patch.expected_version.is_some_and(|v| v != account.version) {
                    return Err(EngineError::StaleVersion);
                }
                let mut settings = patch.apply(account.settings.clone());
                // Switching to autopilot starts the ramp (shadow first) now, unless the owner
                // says when the account was onboarded (spec §26).
                let to_autopilot =
                    settings.execution_mode == ExecutionMode::LimitedAuto && account.settings.execution_mode != ExecutionMode::LimitedAuto;
                // Connecting PushPress starts it too (spec §26.2: "when a gym connects").
                if (to_autopilot || connected.is_some()) && settings.onboarded_at.is_none() {
                    settings.onboarded_at = Some(now);
                }
                settings.validate()?;
                if let Some(credentials) = &patch.pushpress {
                    account.pushpress = credentials.clone();
                }
                // A newly named domain starts over: not created until the provider says so.
                if settings.sending_domain != account.sending_identity.as_ref().map(|i| i.domain.clone()) {
                    account.sending_identity = settings
                        .sending_domain
                        .as_deref()
                        .map(|d| crate::owner::deliverability::SendingDomain::named(d, self.ownership_token(id, d), now));
                }
                account.settings = settings;
                Ok(true)
            })
            .await?;
        if let Some(credentials) = &patch.pushpress {
            tracing::info!(account = %id, set = credentials.is_some(), "PushPress credentials changed");
        }
        if let Some(connected) = connected {
            self.start_connection(id, connected).await?;
        }
        Ok(account)
    }

    /// Read the account, let `change` edit it, and save it over the version read; a lost race
    /// re-reads and changes again. `change` says whether there is anything to save.
    pub(in crate::engine) async fn change_account(
        &self,
        id: AccountId,
        mut change: impl FnMut(&mut Account) -> Result<bool, EngineError>,
    ) -> Result<Account, EngineError> {
        for _ in 0..4 {
            let mut account = self.account(id).await?;
            if !change(&mut account)? {
                return Ok(account);
            }
            account.version += 1;
            match self.store.save_account(&account).await {
                Ok(()) => return Ok(account),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// The per-account kill switch: while set, no worker sends for this account;
    /// due steps are deferred, never dropped. `by` says who pulled it (owner or admin). An
    /// account being removed stays paused.
    pub async fn set_account_paused(&self, id: AccountId, paused: bool, by: &str) -> Result<Account, EngineError> {
        let mut changed = false;
        let account = self
            .change_account(id, |account| {
                let paused = paused || account.removal.is_some();
                changed = account.paused != paused;
                account.paused = paused;
                Ok(changed)
            })
            .await?;
        if changed {
            tracing::warn!(account = %id, paused, by, "account kill switch changed");
        }
        Ok(account)
    }

    /// Pull the account's kill switch for a reason of the system's own (the bounce rate):
    /// the account, and whether this call paused it (`false`: it was paused already).
    pub(crate) async fn pause_account(&self, id: AccountId, by: &str) -> Result<(Account, bool), EngineError> {
        let mut changed = false;
        let account = self
            .change_account(id, |account| {
                changed = !account.paused;
                account.paused = true;
                Ok(changed)
            })
            .await?;
        if changed {
            tracing::warn!(account = %id, by, "account kill switch pulled");
        }
        Ok((account, changed))
    }

    /// The global emergency stop: every worker and the tick check it first.
    pub async fn set_global_pause(&self, paused: bool) -> Result<SystemConfig, EngineError> {
        let config = SystemConfig {
            global_pause: paused,
            updated_at: Some(self.clock.now()),
        };
        self.store.save_system_config(&config).await?;
        tracing::warn!(paused, "global pause changed");
        Ok(config)
    }
}
