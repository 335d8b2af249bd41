//! An account's connection to its PushPress: the webhook subscription Openloop
//! registered there (with its signing secret, stored write-only), and the import of the gym's
//! history — where it stands, so a crashed import goes on from its last finished page, and
//! what it has brought in so far. The credentials themselves stay on the account
//! ([`crate::owner::account::Account::pushpress`]).
//!
//! The import is a sequence of pages: customers, then enrollments, then the plans they name
//! (PushPress lists no plans: each is read by id, [`PLANS_PER_STEP`] a step), then the
//! check-ins of the last [`IMPORT_CHECKIN_DAYS`] days of each kind. A page's facts are written first and its
//! progress after, under the connection's version, so a page redone after a crash writes the
//! same facts again (they are sets and last-writer-wins fields) and is counted once.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::members::source::{CheckinKind, PageCursor};
use crate::owner::account::WebhookSecret;

/// How far back the import reads check-ins.
pub const IMPORT_CHECKIN_DAYS: i64 = 90;

/// Page size asked of PushPress (it states no maximum; the SDK's paging stops at a short page).
pub const IMPORT_PAGE_SIZE: u32 = 100;

/// Plans read by id in one import step.
pub const PLANS_PER_STEP: usize = 25;

/// How many plans a connection keeps the names of (a gym has a handful; the limit keeps the
/// connection's item small whatever PushPress says).
pub const MAX_PLANS: usize = 500;

/// How long an import step waits after PushPress could not be reached before trying again.
pub const IMPORT_RETRY_DELAY: SignedDuration = SignedDuration::from_secs(60);

/// The webhook subscription Openloop holds at PushPress.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookSubscription {
    pub id: String,
    pub url: String,
    pub event_types: Vec<String>,
    /// What PushPress signs deliveries with; never shown.
    pub signing_secret: WebhookSecret,
}

impl std::fmt::Debug for WebhookSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSubscription")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("event_types", &self.event_types)
            .finish_non_exhaustive()
    }
}

/// Which list the import is reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "phase", content = "kind")]
pub enum ImportPhase {
    Customers,
    Enrollments,
    Plans,
    Checkins(CheckinKind),
    Done,
}

impl ImportPhase {
    /// The list after this one.
    pub fn next(self) -> ImportPhase {
        match self {
            Self::Customers => Self::Enrollments,
            Self::Enrollments => Self::Plans,
            Self::Plans => Self::Checkins(CheckinKind::Class),
            Self::Checkins(CheckinKind::Class) => Self::Checkins(CheckinKind::Event),
            Self::Checkins(CheckinKind::Event) => Self::Checkins(CheckinKind::Open),
            Self::Checkins(CheckinKind::Open) => Self::Checkins(CheckinKind::Appointment),
            Self::Checkins(CheckinKind::Appointment) | Self::Done => Self::Done,
        }
    }
}

/// Where an import stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportProgress {
    /// One id per import: a step of another import finds nothing to do.
    pub run: ulid::Ulid,
    pub phase: ImportPhase,
    /// The next page of the phase's list.
    pub cursor: PageCursor,
    /// Check-ins at or after this are imported.
    pub checkins_after: Timestamp,
    pub members: u32,
    pub checkins: u32,
    pub pages: u32,
    /// The plans the enrollments named, read in the plans phase.
    #[serde(default)]
    pub plan_ids: std::collections::BTreeSet<String>,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}

impl ImportProgress {
    pub fn start(run: ulid::Ulid, now: Timestamp) -> Self {
        Self {
            run,
            phase: ImportPhase::Customers,
            cursor: PageCursor::first(),
            checkins_after: now - SignedDuration::from_hours(24 * IMPORT_CHECKIN_DAYS),
            members: 0,
            checkins: 0,
            pages: 0,
            plan_ids: Default::default(),
            started_at: now,
            finished_at: None,
        }
    }

    /// After a page: on to `next` in this list, or the first page of the next list.
    pub fn advance(&mut self, next: Option<PageCursor>) {
        self.pages += 1;
        match next {
            Some(cursor) => self.cursor = cursor,
            None => {
                self.phase = self.phase.next();
                self.cursor = PageCursor::first();
            }
        }
    }
}

/// The connection (see the module docs). Versioned: written only over the version read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    pub company_id: Option<String>,
    pub company_name: Option<String>,
    pub subscription: Option<WebhookSubscription>,
    pub import: Option<ImportProgress>,
    /// The gym's plans by id: their names, so the owner knows which plan to price.
    #[serde(default)]
    pub plans: std::collections::BTreeMap<String, String>,
    pub last_sync_at: Option<Timestamp>,
    /// The last thing that went wrong, until something goes right again.
    pub last_error: Option<String>,
    pub version: u64,
}

/// What `GET /api/v1/connector` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStatus {
    NotConnected,
    Importing,
    Connected,
    Error,
}

impl Connection {
    pub fn status(connection: Option<&Connection>, has_credentials: bool) -> ConnectionStatus {
        let Some(c) = connection.filter(|_| has_credentials) else {
            return ConnectionStatus::NotConnected;
        };
        if c.last_error.is_some() && c.import.as_ref().is_none_or(|i| i.finished_at.is_some()) {
            return ConnectionStatus::Error;
        }
        match &c.import {
            Some(i) if i.finished_at.is_none() => ConnectionStatus::Importing,
            _ if c.subscription.is_none() => ConnectionStatus::Error,
            _ => ConnectionStatus::Connected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_import_reads_every_list_in_order() {
        let mut phase = ImportPhase::Customers;
        let mut seen = vec![phase];
        while phase != ImportPhase::Done {
            phase = phase.next();
            seen.push(phase);
        }
        assert_eq!(
            seen.len(),
            8,
            "customers, enrollments, plans, four kinds of check-in, done: {seen:?}"
        );
    }
}
