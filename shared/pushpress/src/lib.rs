//! The PushPress connector: Openloop's client for the PushPress Platform API v3
//! (`../shared/PUSHPRESS.md`, taken from PushPress's official SDK). It calls only the
//! operations that document lists, with the headers `API-KEY: {key}` and, when the account
//! named its company, `company-id: {company}`:
//!
//! - `GET /company` — the key's check when a gym connects, and its time zone;
//! - `GET /customers`, `GET /enrollments`, `GET /checkins/class|event|open` — paged as
//!   PushPress pages (`page` from 1 and `limit`, `{"data": {"resultArray": […]}}`, the last page
//!   is the first one shorter than `limit`); `GET /checkins/appointment` — by the `next`
//!   cursor; check-ins filtered by `after` (unix seconds), their `timestamp` read in seconds or
//!   milliseconds ([`openloop_core::members::source::unix_time`]);
//! - `GET /customers/{id}` and `GET /plans/{id}`;
//! - `GET`, `POST` and `DELETE /webhooks` — Openloop's subscription.
//!
//! PushPress has no tags, notes, tasks, customer updates, prices or payment events: nothing
//! here pretends otherwise (those actions are Openloop's own, see `openloop_core::members::annotation`).
//!
//! Layout: [`http`] makes one request (retries of 429/5xx honouring `Retry-After`, keys
//! scrubbed from every error), [`wire`] reads PushPress's JSON into the core's types, this
//! file holds the operations, and [`webhook`] reads and verifies PushPress's own deliveries.

mod http;
pub mod webhook;
mod wire;

use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use reqwest::{Method, Url};
use secrecy::{ExposeSecret, SecretString};

use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::kernel::limits::{CONNECTOR_ATTEMPTS, CONNECTOR_MAX_RETRY_AFTER, CONNECTOR_RETRY_BACKOFF, CONNECTOR_TIMEOUT};
use openloop_core::members::connector::{Connector, ConnectorCredentials, ConnectorError, ConnectorMember};
use openloop_core::members::source::{
    CheckinKind, Company, Customer, Enrollment, MemberSource, Page, PageCursor, Plan, Subscription, membership_status,
};

use http::{Access, Request};
use wire::{CheckinWire, CompanyBody, CustomerWire, EnrollmentWire, ListBody, PageBody, PlanWire, WebhookWire};

/// How many records a page asks for. PushPress states no maximum; its SDK stops at a short page.
pub const PAGE_SIZE: u32 = 100;

/// Where PushPress is and how to call it. `Debug` shows the key redacted.
#[derive(Clone, Debug)]
pub struct PushPressConfig {
    pub base_url: Url,
    /// The process-wide key, for accounts without their own; none: only accounts that
    /// brought a key are connected.
    pub api_key: Option<SecretString>,
    pub timeout: Duration,
    pub max_attempts: u32,
    pub backoff: Duration,
    pub max_retry_after: Duration,
    pub page_size: u32,
}

impl PushPressConfig {
    /// The limits' defaults for `base_url` (`https://api.pushpress.com/v3` in production).
    pub fn new(base_url: &str, api_key: Option<SecretString>) -> Result<Self, String> {
        let base_url = Url::parse(base_url).map_err(|e| format!("not a URL ({e})"))?;
        if base_url.cannot_be_a_base() {
            return Err("not a base URL".into());
        }
        Ok(Self {
            base_url,
            api_key,
            timeout: CONNECTOR_TIMEOUT,
            max_attempts: CONNECTOR_ATTEMPTS,
            backoff: CONNECTOR_RETRY_BACKOFF,
            max_retry_after: CONNECTOR_MAX_RETRY_AFTER,
            page_size: PAGE_SIZE,
        })
    }
}

/// The [`Connector`] and [`MemberSource`] over PushPress's HTTP API.
#[derive(Clone, Debug)]
pub struct PushPress {
    config: PushPressConfig,
    http: reqwest::Client,
}

impl PushPress {
    pub fn new(config: PushPressConfig) -> Result<Self, String> {
        // reqwest takes the process's rustls crypto (ring; `openloop_aws::tls`).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("could not build the HTTP client: {e}"))?;
        Ok(Self { config, http })
    }

    /// The key and company of a call: the account's own credentials, else the process-wide
    /// key (with no company named).
    fn access<'a>(&'a self, credentials: Option<&'a ConnectorCredentials>) -> Result<Access<'a>, ConnectorError> {
        if let Some(own) = credentials {
            // A key still sealed was never opened for this call: refused, never sent empty.
            let key = own
                .expose_api_key()
                .ok_or_else(|| ConnectorError::Refused("the account's PushPress key was not opened".into()))?;
            return Ok(Access {
                key,
                company: own.company_id(),
            });
        }
        match &self.config.api_key {
            Some(key) => Ok(Access {
                key: key.expose_secret(),
                company: None,
            }),
            None => Err(ConnectorError::Refused("no PushPress API key for this account".into())),
        }
    }

    /// One page of a numbered list: `{segments}?{filters}&page&limit`; the next page is asked
    /// for only when this one was full.
    async fn numbered_page<W: serde::de::DeserializeOwned>(
        &self,
        access: &Access<'_>,
        segments: &[&str],
        filters: &[(&str, String)],
        at: &PageCursor,
    ) -> Result<(Vec<W>, Option<PageCursor>), ConnectorError> {
        let page = at.page.max(1);
        let limit = self.config.page_size;
        let mut query = filters.to_vec();
        query.push(("page", page.to_string()));
        query.push(("limit", limit.to_string()));
        let body = self.get::<PageBody<W>>(access, self.url(segments, &query)?).await?;
        let (items, _) = body.map(PageBody::into_parts).unwrap_or_default();
        let full = items.len() >= usize::try_from(limit).unwrap_or(usize::MAX);
        let next = full.then(|| PageCursor {
            page: page + 1,
            next: None,
        });
        Ok((items, next))
    }

    /// Every enrollment of one customer (a member has few).
    async fn customer_enrollments(&self, access: &Access<'_>, customer: &MemberId) -> Result<Vec<Enrollment>, ConnectorError> {
        let mut all = Vec::new();
        let mut at = PageCursor::first();
        loop {
            let filters = [("customerId", customer.to_string())];
            let (page, next) = self
                .numbered_page::<EnrollmentWire>(access, &["enrollments"], &filters, &at)
                .await?;
            all.extend(page.into_iter().filter_map(EnrollmentWire::into_enrollment));
            match next {
                Some(next) if next.page <= 10 => at = next,
                _ => return Ok(all),
            }
        }
    }

    /// The first page of one kind of check-in at or after `after`, for one customer or all.
    async fn checkins_page(
        &self,
        access: &Access<'_>,
        kind: CheckinKind,
        customer: Option<&MemberId>,
        after: Timestamp,
        at: &PageCursor,
    ) -> Result<Page<openloop_core::members::source::Checkin>, ConnectorError> {
        let mut filters = vec![("after", after.as_second().to_string())];
        if let Some(customer) = customer {
            filters.push(("customer", customer.to_string()));
        }
        let (items, next) = if kind == CheckinKind::Appointment {
            if let Some(cursor) = &at.next {
                filters.push(("next", cursor.clone()));
            }
            let body = self
                .get::<PageBody<CheckinWire>>(access, self.url(&["checkins", kind.as_str()], &filters)?)
                .await?;
            let (items, next) = body.map(PageBody::into_parts).unwrap_or_default();
            let next = next.filter(|_| !items.is_empty()).map(|n| PageCursor {
                page: at.page + 1,
                next: Some(n),
            });
            (items, next)
        } else {
            self.numbered_page::<CheckinWire>(access, &["checkins", kind.as_str()], &filters, at)
                .await?
        };
        Ok(Page {
            items: items.into_iter().filter_map(|c| c.into_checkin(Some(kind))).collect(),
            next,
        })
    }
}

#[async_trait]
impl MemberSource for PushPress {
    async fn company(&self, credentials: &ConnectorCredentials) -> Result<Company, ConnectorError> {
        let access = self.access(Some(credentials))?;
        match self.get::<CompanyBody>(&access, self.url(&["company"], &[])?).await? {
            Some(body) => Ok(body.into_company()),
            None => Err(ConnectorError::Refused("PushPress knows no company for this key".into())),
        }
    }

    async fn customers(&self, credentials: &ConnectorCredentials, at: &PageCursor) -> Result<Page<Customer>, ConnectorError> {
        let access = self.access(Some(credentials))?;
        let (items, next) = self.numbered_page::<CustomerWire>(&access, &["customers"], &[], at).await?;
        Ok(Page {
            items: items.into_iter().filter_map(CustomerWire::into_customer).collect(),
            next,
        })
    }

    async fn enrollments(&self, credentials: &ConnectorCredentials, at: &PageCursor) -> Result<Page<Enrollment>, ConnectorError> {
        let access = self.access(Some(credentials))?;
        let (items, next) = self.numbered_page::<EnrollmentWire>(&access, &["enrollments"], &[], at).await?;
        Ok(Page {
            items: items.into_iter().filter_map(EnrollmentWire::into_enrollment).collect(),
            next,
        })
    }

    async fn checkins(
        &self,
        credentials: &ConnectorCredentials,
        kind: CheckinKind,
        after: Timestamp,
        at: &PageCursor,
    ) -> Result<Page<openloop_core::members::source::Checkin>, ConnectorError> {
        let access = self.access(Some(credentials))?;
        self.checkins_page(&access, kind, None, after, at).await
    }

    async fn plan(&self, credentials: &ConnectorCredentials, id: &str) -> Result<Option<Plan>, ConnectorError> {
        let access = self.access(Some(credentials))?;
        let plan = self.get::<PlanWire>(&access, self.url(&["plans", id], &[])?).await?;
        Ok(plan.map(|p| Plan {
            name: p.name.unwrap_or_else(|| p.id.clone()),
            id: p.id,
        }))
    }

    async fn subscriptions(&self, credentials: &ConnectorCredentials) -> Result<Vec<Subscription>, ConnectorError> {
        let access = self.access(Some(credentials))?;
        let body = self.get::<ListBody<WebhookWire>>(&access, self.url(&["webhooks"], &[])?).await?;
        Ok(body
            .map(|b| b.data.into_iter().map(WebhookWire::into_subscription).collect())
            .unwrap_or_default())
    }

    async fn subscribe(&self, credentials: &ConnectorCredentials, url: &str, event_types: &[&str]) -> Result<Subscription, ConnectorError> {
        let access = self.access(Some(credentials))?;
        let body = serde_json::json!({ "url": url, "eventTypes": event_types });
        let request = Request {
            method: Method::POST,
            url: self.url(&["webhooks"], &[])?,
            body: Some(&body),
        };
        let bytes = self
            .call(&access, &request)
            .await?
            .ok_or_else(|| ConnectorError::Refused("PushPress answered 404 to POST /webhooks".into()))?;
        let created: WebhookWire = serde_json::from_slice(&bytes).map_err(|e| ConnectorError::Malformed(e.to_string()))?;
        Ok(created.into_subscription())
    }

    async fn unsubscribe(&self, credentials: &ConnectorCredentials, id: &str) -> Result<(), ConnectorError> {
        let access = self.access(Some(credentials))?;
        let request = Request {
            method: Method::DELETE,
            url: self.url(&["webhooks", id], &[])?,
            body: None,
        };
        // A 404 (`None`) is a subscription already gone.
        self.call(&access, &request).await.map(|_| ())
    }
}

#[async_trait]
impl Connector for PushPress {
    fn name(&self) -> &'static str {
        "pushpress"
    }

    fn serves(&self, credentials: Option<&ConnectorCredentials>) -> bool {
        credentials.is_some() || self.config.api_key.is_some()
    }

    /// The member now: `GET /customers/{id}` (role), their enrollments (status), and their
    /// check-ins of every kind since `since` (the first page of each).
    async fn member(
        &self,
        _account: AccountId,
        credentials: Option<&ConnectorCredentials>,
        member: &MemberId,
        since: Timestamp,
    ) -> Result<Option<ConnectorMember>, ConnectorError> {
        let access = self.access(credentials)?;
        let Some(customer) = self
            .get::<CustomerWire>(&access, self.url(&["customers", member.as_str()], &[])?)
            .await?
        else {
            return Ok(None);
        };
        let Some(customer) = customer.into_customer() else {
            return Ok(None);
        };
        let enrollments = self.customer_enrollments(&access, member).await?;
        let first = PageCursor::first();
        let (class, event, open, appointment) = tokio::join!(
            self.checkins_page(&access, CheckinKind::Class, Some(member), since, &first),
            self.checkins_page(&access, CheckinKind::Event, Some(member), since, &first),
            self.checkins_page(&access, CheckinKind::Open, Some(member), since, &first),
            self.checkins_page(&access, CheckinKind::Appointment, Some(member), since, &first),
        );
        let mut checkins = Vec::new();
        for page in [class?, event?, open?, appointment?] {
            checkins.extend(page.items.into_iter().filter(|c| !c.failed).map(|c| c.at));
        }
        checkins.sort();
        let statuses: Vec<_> = enrollments.iter().map(|e| e.status).collect();
        Ok(Some(ConnectorMember {
            status: membership_status(customer.role, &statuses),
            status_changed_at: None,
            email: customer.email,
            last_checkin_at: checkins.last().copied(),
            checkins,
            // PushPress has no payment data (PUSHPRESS.md §5): it says nothing here.
            payment_failing: None,
            last_payment_succeeded_at: None,
            last_payment_failed_at: None,
        }))
    }

    fn source(&self) -> Option<&dyn MemberSource> {
        Some(self)
    }
}
