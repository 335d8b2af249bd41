//! Connecting a gym's PushPress and importing its history.
//!
//! Connecting (`"pushpress": {"api_key", "company_id"?}` in the settings or at account
//! creation) checks the key against `GET /company` (refused: a clear `422`), then makes sure
//! Openloop holds exactly one webhook subscription at its URL — reusing one a previous connect
//! made (`GET /webhooks`), replacing one with the wrong event types, removing duplicates — and
//! keeps its signing secret write-only in the connection. Disconnecting removes the
//! subscription at PushPress first, then the connection and the credentials.
//!
//! The import is queued work on the signals queue, one page per step (see
//! [`crate::owner::connection`]): a step reads where the import stands, imports one page, and moves
//! the progress on under its version before it queues the next step — so a crash anywhere
//! repeats at most one page, whose facts are written the same way again, and a duplicated
//! step loses the version race and stops. PushPress out of reach: the step records the error
//! and comes back after [`IMPORT_RETRY_DELAY`]. When the last list is read the risk scan runs
//! on the imported history.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::{Engine, boxed};
use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId};
use crate::members::connector::{ConnectorCredentials, ConnectorError};
use crate::members::event::MemberEvent;
use crate::members::member::MemberFacts;
use crate::members::membership::CustomerFacts;
use crate::members::source::{Company, MemberSource, Plan, SUBSCRIBED_EVENT_TYPES};
use crate::owner::account::{Account, WebhookSecret};
use crate::owner::connection::{
    Connection, ConnectionStatus, IMPORT_RETRY_DELAY, ImportPhase, ImportProgress, MAX_PLANS, PLANS_PER_STEP, WebhookSubscription,
};
use crate::task::error::EngineError;
use crate::task::work::QueueName;

/// One step of an import, as queued (on the signals queue).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportStep {
    pub account_id: AccountId,
    pub import_run: ulid::Ulid,
}

/// What a step did.
#[derive(Debug, PartialEq, Eq)]
pub enum ImportOutcome {
    /// A page imported; the next step is queued (or the import is finished).
    Page { phase: ImportPhase, done: bool },
    /// PushPress could not be read; the step comes back later.
    Retrying(String),
    /// Nothing to do: another import, another worker, or a disconnected account.
    Stale(&'static str),
}

/// `GET /api/v1/connector`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectorView {
    pub status: ConnectionStatus,
    pub imported_members: u32,
    pub imported_checkins: u32,
    pub webhook: WebhookView,
    pub last_sync_at: Option<Timestamp>,
    pub last_error: Option<String>,
    /// An extension: where the import stands (`customers`, `checkins`…), when one ran.
    pub import_phase: Option<ImportPhase>,
    /// An extension: the gym's plans (read by id during the import) with the owner's price
    /// for each, if they gave one (settings `plan_prices`).
    pub plans: Vec<PlanView>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanView {
    pub id: String,
    pub name: String,
    pub price: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookView {
    pub registered: bool,
    pub event_types: Vec<String>,
}

/// What connecting learned before anything is saved.
pub(crate) struct Connected {
    pub company: Company,
    pub subscription: WebhookSubscription,
}

fn not_built() -> EngineError {
    EngineError::NotConfigured(InvalidInput::new(
        "connector_not_configured",
        "no PushPress connector is configured in this deployment: its operator sets OPENLOOP_PUSHPRESS_BASE_URL; until then gyms cannot connect",
    ))
}

fn from_connector(e: ConnectorError) -> EngineError {
    match e {
        ConnectorError::Refused(why) => InvalidInput::new(
            "pushpress_refused",
            format!("PushPress refused the API key (GET /company): {why}. Check the key and company_id in PushPress's developer settings."),
        )
        .into(),
        other => EngineError::Dependency(format!("PushPress: {other}")),
    }
}

impl Engine {
    fn member_source(&self) -> Option<&dyn MemberSource> {
        self.connector.as_deref().and_then(|c| c.source())
    }

    /// Where PushPress delivers this account's webhooks.
    pub fn pushpress_webhook_url(&self, account: AccountId) -> String {
        format!("{}/webhooks/pushpress-v3/{account}", self.config.public_url.trim_end_matches('/'))
    }

    /// Check the key and make sure exactly one subscription is ours (see the module docs).
    pub(crate) async fn check_and_subscribe(
        &self,
        account: AccountId,
        credentials: &ConnectorCredentials,
    ) -> Result<Connected, EngineError> {
        let source = self.member_source().ok_or_else(not_built)?;
        let company = source.company(credentials).await.map_err(from_connector)?;
        let url = self.pushpress_webhook_url(account);
        let existing = source.subscriptions(credentials).await.map_err(from_connector)?;
        let mut kept = None;
        for subscription in existing.into_iter().filter(|s| s.url == url) {
            let complete = SUBSCRIBED_EVENT_TYPES
                .iter()
                .all(|t| subscription.event_types.iter().any(|e| e == t));
            if kept.is_none() && complete && subscription.signing_secret.is_some() {
                kept = Some(subscription);
            } else {
                source.unsubscribe(credentials, &subscription.id).await.map_err(from_connector)?;
            }
        }
        let subscription = match kept {
            Some(s) => s,
            None => source
                .subscribe(credentials, &url, &SUBSCRIBED_EVENT_TYPES)
                .await
                .map_err(from_connector)?,
        };
        let Some(secret) = subscription.signing_secret else {
            return Err(EngineError::Dependency(
                "PushPress made the subscription but gave no signing secret".into(),
            ));
        };
        tracing::info!(%account, subscription = %subscription.id, company = %company.id, "PushPress subscription in place");
        Ok(Connected {
            company,
            subscription: WebhookSubscription {
                id: subscription.id,
                url: subscription.url,
                event_types: subscription.event_types,
                signing_secret: WebhookSecret::new(secret),
            },
        })
    }

    /// Keep what connecting learned and start the import (unless one is under way).
    pub(crate) async fn start_connection(&self, account: AccountId, connected: Connected) -> Result<(), EngineError> {
        let now = self.clock.now();
        for _ in 0..4 {
            let previous = self.store.connection(account).await?;
            let import = match previous.as_ref().and_then(|c| c.import.clone()) {
                Some(running) if running.finished_at.is_none() => running,
                _ => ImportProgress::start(crate::kernel::ids::new_ulid(now), now),
            };
            let run = import.run;
            let connection = Connection {
                plans: Default::default(),
                company_id: Some(connected.company.id.clone()),
                company_name: Some(connected.company.name.clone()),
                subscription: Some(connected.subscription.clone()),
                import: Some(import),
                last_sync_at: previous.as_ref().and_then(|c| c.last_sync_at),
                last_error: None,
                version: previous.as_ref().map_or(1, |c| c.version + 1),
            };
            match self.store.save_connection(account, &connection).await {
                Ok(()) => return self.queue_import_step(account, run, SignedDuration::ZERO).await,
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Remove the subscription at PushPress (before anything here changes: if PushPress cannot
    /// be reached, nothing is disconnected), then the connection.
    pub(crate) async fn end_connection(&self, account: &Account) -> Result<(), EngineError> {
        let connection = self.store.connection(account.id).await?;
        if let (Some(_), Some(subscription)) = (&account.pushpress, connection.as_ref().and_then(|c| c.subscription.as_ref())) {
            let source = self.member_source().ok_or_else(not_built)?;
            let credentials = self.opened_pushpress(account).await?.ok_or_else(not_built)?;
            match source.unsubscribe(&credentials, &subscription.id).await {
                Ok(()) => {}
                // A key PushPress no longer takes cannot hold a subscription either.
                Err(ConnectorError::Refused(why)) => {
                    tracing::warn!(account = %account.id, why, "subscription not removed: PushPress refused the key")
                }
                Err(e) => {
                    return Err(EngineError::Dependency(format!(
                        "PushPress: {e}; nothing was disconnected, try again"
                    )));
                }
            }
        }
        self.store.delete_connection(account.id).await?;
        Ok(())
    }

    async fn queue_import_step(&self, account: AccountId, run: ulid::Ulid, delay: SignedDuration) -> Result<(), EngineError> {
        let step = ImportStep {
            account_id: account,
            import_run: run,
        };
        let body = serde_json::to_string(&step).map_err(|e| EngineError::Dependency(e.to_string()))?;
        self.queue
            .send(QueueName::Signals, vec![(body, delay)])
            .await
            .map_err(|e| EngineError::Dependency(format!("the import could not be queued: {e}")))
    }

    /// `GET /api/v1/connector`.
    pub async fn connector_status(&self, account: AccountId) -> Result<ConnectorView, EngineError> {
        let account = self.account(account).await?;
        let has_credentials = account.pushpress.is_some();
        let prices = &account.settings.plan_prices;
        let connection = self.store.connection(account.id).await?;
        let c = connection.as_ref();
        let import = c.and_then(|c| c.import.as_ref());
        let subscription = c.and_then(|c| c.subscription.as_ref()).filter(|_| has_credentials);
        Ok(ConnectorView {
            status: Connection::status(c, has_credentials),
            imported_members: import.map_or(0, |i| i.members),
            imported_checkins: import.map_or(0, |i| i.checkins),
            webhook: WebhookView {
                registered: subscription.is_some(),
                event_types: subscription.map(|s| s.event_types.clone()).unwrap_or_default(),
            },
            last_sync_at: c.and_then(|c| c.last_sync_at),
            last_error: c.and_then(|c| c.last_error.clone()),
            import_phase: import.map(|i| i.phase),
            plans: c.map_or_else(Vec::new, |c| {
                c.plans
                    .iter()
                    .map(|(id, name)| PlanView {
                        id: id.clone(),
                        name: name.clone(),
                        price: prices.get(id).copied(),
                    })
                    .collect()
            }),
        })
    }

    /// One step of an import (see the module docs).
    pub async fn import_step(&self, step: &ImportStep) -> Result<ImportOutcome, EngineError> {
        boxed(async move {
            let Some(account) = self.store.get_account(step.account_id).await? else {
                return Ok(ImportOutcome::Stale("no such account"));
            };
            let Some(credentials) = self.opened_pushpress(&account).await? else {
                return Ok(ImportOutcome::Stale("the account is not connected"));
            };
            let Some(mut connection) = self.store.connection(account.id).await? else {
                return Ok(ImportOutcome::Stale("the account is not connected"));
            };
            let Some(mut progress) = connection
                .import
                .clone()
                .filter(|i| i.run == step.import_run && i.finished_at.is_none())
            else {
                return Ok(ImportOutcome::Stale("another import, or this one is finished"));
            };
            let Some(source) = self.member_source() else {
                // Queued work: kept retryable, so a deployment that gains its connector resumes.
                return Err(EngineError::Dependency(not_built().to_string()));
            };
            let now = self.clock.now();
            let imported = self.import_page(&account, source, &credentials, &progress).await;
            let page = match imported {
                Ok(page) => page,
                Err(e) => {
                    let retry = matches!(e, ConnectorError::Unavailable(_));
                    connection.last_error = Some(format!("import: {e}"));
                    if !retry {
                        // A refused key: the import stops here, the status says why.
                        progress.finished_at = Some(now);
                        connection.import = Some(progress);
                    }
                    connection.version += 1;
                    match self.store.save_connection(account.id, &connection).await {
                        Ok(()) => {}
                        Err(StoreError::Conflict(Conflict::Version)) => return Ok(ImportOutcome::Stale("another worker moved the import")),
                        Err(e) => return Err(e.into()),
                    }
                    tracing::warn!(account = %account.id, error = %e, retry, "import step failed");
                    if retry {
                        self.queue_import_step(account.id, step.import_run, IMPORT_RETRY_DELAY).await?;
                    }
                    return Ok(ImportOutcome::Retrying(e.to_string()));
                }
            };
            let phase = progress.phase;
            progress.members += page.members;
            progress.checkins += page.checkins;
            for id in page.plan_ids {
                if progress.plan_ids.len() < MAX_PLANS {
                    progress.plan_ids.insert(id);
                }
            }
            for plan in page.plans {
                connection.plans.insert(plan.id, plan.name);
            }
            progress.advance(page.next);
            let done = progress.phase == ImportPhase::Done;
            if done {
                progress.finished_at = Some(now);
            }
            connection.import = Some(progress);
            connection.last_sync_at = Some(now);
            connection.last_error = None;
            connection.version += 1;
            match self.store.save_connection(account.id, &connection).await {
                Ok(()) => {}
                Err(StoreError::Conflict(Conflict::Version)) => return Ok(ImportOutcome::Stale("another worker imported this page")),
                Err(e) => return Err(e.into()),
            }
            if done {
                tracing::info!(account = %account.id, members = progress_members(&connection), "import finished; running the risk scan");
                self.analyze_account(&account).await?;
            } else {
                self.queue_import_step(account.id, step.import_run, SignedDuration::ZERO).await?;
            }
            Ok(ImportOutcome::Page { phase, done })
        })
        .await
    }

    /// One page of the phase's list into the facts: what it brought, and where the next
    /// page starts.
    async fn import_page(
        &self,
        account: &Account,
        source: &dyn MemberSource,
        credentials: &ConnectorCredentials,
        progress: &ImportProgress,
    ) -> Result<PageImported, ConnectorError> {
        let store_error = |e: EngineError| ConnectorError::Unavailable(format!("the store: {e}"));
        // Imported facts are stamped with the import's start: anything PushPress delivered
        // since (a webhook) is newer and wins.
        let at = progress.started_at;
        let run = progress.run;
        match progress.phase {
            ImportPhase::Customers => {
                let page = source.customers(credentials, &progress.cursor).await?;
                let mut members = 0;
                for c in &page.items {
                    if c.role.is_some_and(crate::members::source::CustomerRole::is_staff) {
                        continue;
                    }
                    let event = MemberEvent::Customer {
                        member_id: c.id.clone(),
                        customer: CustomerFacts {
                            email: c.email.clone(),
                            first_name: c.first_name.clone(),
                            last_name: c.last_name.clone(),
                            role: c.role,
                            member_since: c.member_since,
                            phone: c.phone.clone(),
                            state: c.state.clone(),
                        },
                    };
                    if event.validate().is_err() {
                        tracing::warn!(account = %account.id, customer = %c.id, "a customer whose name cannot be used in mail; left out");
                        continue;
                    }
                    let id = format!("import:{run}:customer:{}", c.id);
                    self.apply_imported(account.id, &c.id, &[(id, event)], at, true)
                        .await
                        .map_err(store_error)?;
                    members += 1;
                }
                Ok(PageImported {
                    members,
                    next: page.next,
                    ..PageImported::default()
                })
            }
            ImportPhase::Enrollments => {
                let page = source.enrollments(credentials, &progress.cursor).await?;
                let mut by_member: BTreeMap<MemberId, Vec<(String, MemberEvent)>> = BTreeMap::new();
                let plan_ids = page.items.iter().filter_map(|e| e.plan_id.clone()).collect();
                for e in page.items {
                    let id = format!("import:{run}:enrollment:{}", e.id);
                    by_member.entry(e.customer.clone()).or_default().push((
                        id,
                        MemberEvent::Enrollment {
                            member_id: e.customer.clone(),
                            enrollment: e,
                        },
                    ));
                }
                for (member, events) in by_member {
                    self.apply_imported(account.id, &member, &events, at, false)
                        .await
                        .map_err(store_error)?;
                }
                Ok(PageImported {
                    plan_ids,
                    next: page.next,
                    ..PageImported::default()
                })
            }
            ImportPhase::Plans => {
                // PushPress lists no plans: each one the enrollments named, by id.
                let done = (progress.cursor.page.max(1) as usize - 1) * PLANS_PER_STEP;
                let mut plans = Vec::new();
                for id in progress.plan_ids.iter().skip(done).take(PLANS_PER_STEP) {
                    if let Some(plan) = source.plan(credentials, id).await? {
                        plans.push(plan);
                    }
                }
                let next = (progress.plan_ids.len() > done + PLANS_PER_STEP).then(|| crate::members::source::PageCursor {
                    page: progress.cursor.page.max(1) + 1,
                    next: None,
                });
                Ok(PageImported {
                    plans,
                    next,
                    ..PageImported::default()
                })
            }
            ImportPhase::Checkins(kind) => {
                let page = source
                    .checkins(credentials, kind, progress.checkins_after, &progress.cursor)
                    .await?;
                let mut by_member: BTreeMap<MemberId, Vec<(String, MemberEvent)>> = BTreeMap::new();
                for c in page.items.into_iter().filter(|c| !c.failed) {
                    let id = format!("import:{run}:checkin:{}", c.id);
                    by_member.entry(c.customer.clone()).or_default().push((
                        id,
                        MemberEvent::CheckinCreated {
                            member_id: c.customer,
                            checked_in_at: c.at,
                            class_name: c.name,
                        },
                    ));
                }
                let mut checkins = 0;
                for (member, events) in by_member {
                    if self
                        .apply_imported(account.id, &member, &events, at, false)
                        .await
                        .map_err(store_error)?
                    {
                        checkins += u32::try_from(events.len()).unwrap_or(u32::MAX);
                    }
                }
                Ok(PageImported {
                    checkins,
                    next: page.next,
                    ..PageImported::default()
                })
            }
            ImportPhase::Done => Ok(PageImported::default()),
        }
    }

    /// Apply imported events to one member's facts in one versioned write (`create`: a member
    /// not known yet is made; otherwise one unknown — staff, say — is left out). `false` if
    /// the member was left out.
    async fn apply_imported(
        &self,
        account: AccountId,
        member: &MemberId,
        events: &[(String, MemberEvent)],
        at: Timestamp,
        create: bool,
    ) -> Result<bool, EngineError> {
        for _ in 0..5 {
            let stored = self.store.get_member(account, member).await?.map(|(f, _)| f);
            let new_member = stored.is_none();
            let mut facts = match stored {
                Some(facts) => facts,
                None if create => MemberFacts::new(member.clone()),
                None => return Ok(false),
            };
            let before = facts.clone();
            for (id, event) in events {
                facts.apply(id, event, at);
            }
            // An erased member stays forgotten: an import does not bring them back.
            if new_member && self.erased_identity(account, member, Some(&facts)).await? {
                return Ok(false);
            }
            if facts == before {
                return Ok(true);
            }
            facts.version += 1;
            match self.store.save_member_facts(account, &facts).await {
                Ok(()) => return Ok(true),
                Err(StoreError::Conflict(Conflict::MemberFacts)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }
}

/// What one import step brought in.
#[derive(Default)]
struct PageImported {
    members: u32,
    checkins: u32,
    /// The plans the page's enrollments name.
    plan_ids: Vec<String>,
    /// The plans read (the plans phase).
    plans: Vec<Plan>,
    next: Option<crate::members::source::PageCursor>,
}

fn progress_members(connection: &Connection) -> u32 {
    connection.import.as_ref().map_or(0, |i| i.members)
}
