//! Deliverability (spec §33): what an account's bounces say about its sending, and the gym's
//! own sending domain. Bounces are counted against the account's sends — every send's
//! reservation counts one ([`crate::task::commit::SendEffect::Reserve`]) — so "more than 10%
//! of the last 50 sends bounced" is a pure question of [`BounceWindow`]; the engine pauses the
//! account's member mail when it says so (`engine/mail_events.rs`).
//!
//! A per-gym sending domain (§33.1 option B) is an SES identity with Easy DKIM and a custom
//! MAIL FROM subdomain: the owner names the domain, Openloop creates the identity through the
//! `SendingDomains` port and shows the DNS records to publish; mail leaves from the domain
//! only once SES says it is verified, from the shared domain until then.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::Email;
use crate::kernel::limits::{BOUNCE_PAUSE_RATE, BOUNCE_WINDOW_SENDS};

/// An account's sends, counted for ever, and its recent hard bounces, each marked with the
/// count of sends when it arrived (a bounce comes minutes after its send, so the mark stands
/// for the send's place).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BounceWindow {
    pub sends: u64,
    /// Our Message-ID of each bounced mail → the count of sends when its bounce was recorded.
    pub bounces: BTreeMap<String, u64>,
    /// Moved by each recorded bounce (the sends count moves on its own).
    pub version: u64,
}

impl BounceWindow {
    /// The bounces among the last [`BOUNCE_WINDOW_SENDS`] sends.
    pub fn recent_bounces(&self) -> usize {
        let from = self.sends.saturating_sub(BOUNCE_WINDOW_SENDS);
        self.bounces
            .values()
            .filter(|&&at| at > from || self.sends <= BOUNCE_WINDOW_SENDS)
            .count()
    }

    /// The bounce rate over the last [`BOUNCE_WINDOW_SENDS`] sends (fewer sends: still over
    /// the whole window, see [`crate::kernel::limits::BOUNCE_WINDOW_SENDS`]).
    pub fn bounce_rate(&self) -> f64 {
        self.recent_bounces() as f64 / BOUNCE_WINDOW_SENDS as f64
    }

    /// Whether the account's member mail must pause (spec §33.2: above 10%).
    pub fn must_pause(&self) -> bool {
        self.bounce_rate() > BOUNCE_PAUSE_RATE
    }

    /// Record a bounce of `message_id` now (once per mail), forgetting bounces that fell out
    /// of the window; `false` if the mail's bounce was already recorded.
    pub fn record(&mut self, message_id: &str) -> bool {
        if self.bounces.contains_key(message_id) {
            return false;
        }
        self.bounces.insert(message_id.to_owned(), self.sends);
        let from = self.sends.saturating_sub(BOUNCE_WINDOW_SENDS);
        if self.sends > BOUNCE_WINDOW_SENDS {
            self.bounces.retain(|_, at| *at > from);
        }
        true
    }
}

/// One DNS record the owner publishes for their sending domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsRecord {
    /// `CNAME`, `MX` or `TXT`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub value: String,
    /// What it is for: `dkim` or `mail_from`.
    pub purpose: String,
}

/// What the mail provider says about a domain identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainIdentity {
    pub domain: String,
    /// SES may send from it (its DKIM records were found).
    pub verified: bool,
    /// SES's DKIM status (`PENDING`, `SUCCESS`, `FAILED`, `TEMPORARY_FAILURE`, `NOT_STARTED`).
    pub dkim_status: String,
    /// The records to publish: the DKIM CNAMEs, and the MAIL FROM domain's MX and TXT.
    pub records: Vec<DnsRecord>,
}

/// Where a gym's own sending domain stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DomainStatus {
    /// The identity could not be created yet (the provider failed); tried again later.
    NotCreated,
    /// Created; waiting for the owner's DNS records.
    Pending,
    /// Mail leaves from it.
    Verified,
}

/// The account's own sending domain and what is known of it (kept on the account).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendingDomain {
    pub domain: String,
    pub status: DomainStatus,
    #[serde(default)]
    pub dkim_status: Option<String>,
    #[serde(default)]
    pub records: Vec<DnsRecord>,
    /// The provider's failure, when the identity could not be created or read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub checked_at: Timestamp,
}

impl SendingDomain {
    /// A domain just named, before the provider is asked.
    pub fn named(domain: &str, at: Timestamp) -> Self {
        Self {
            domain: domain.to_owned(),
            status: DomainStatus::NotCreated,
            dkim_status: None,
            records: Vec::new(),
            error: None,
            checked_at: at,
        }
    }

    /// The same domain after the provider answered.
    pub fn seen(&self, identity: &DomainIdentity, at: Timestamp) -> Self {
        Self {
            domain: self.domain.clone(),
            status: if identity.verified {
                DomainStatus::Verified
            } else {
                DomainStatus::Pending
            },
            dkim_status: Some(identity.dkim_status.clone()),
            records: if identity.records.is_empty() {
                self.records.clone()
            } else {
                identity.records.clone()
            },
            error: None,
            checked_at: at,
        }
    }

    /// The address mail leaves from: the shared address's local part at this domain once it
    /// is verified; the shared address until then.
    pub fn from_address(&self, shared: &Email) -> Email {
        if self.status != DomainStatus::Verified {
            return shared.clone();
        }
        let local = shared.as_str().split('@').next().unwrap_or("outreach");
        Email::parse(&format!("{local}@{}", self.domain)).unwrap_or_else(|_| shared.clone())
    }
}

/// A sending domain as an owner may name it: a lowercase DNS name of two labels or more,
/// letters, digits and hyphens, at most 253 characters.
pub fn parse_domain(domain: &str) -> Result<String, InvalidInput> {
    let invalid = || {
        InvalidInput::new(
            "invalid_sending_domain",
            "sending_domain must be a domain name such as crossfitrenegade.com",
        )
    };
    let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
    let labels: Vec<&str> = domain.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if domain.len() > 253
        || labels.len() < 2
        || !labels.iter().all(label_ok)
        || labels.last().is_some_and(|t| t.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(invalid());
    }
    Ok(domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(sends: u64, bounced_at: &[u64]) -> BounceWindow {
        let mut w = BounceWindow::default();
        for (i, at) in bounced_at.iter().enumerate() {
            w.sends = *at;
            w.record(&format!("m{i}"));
        }
        w.sends = sends;
        w
    }

    #[test]
    fn more_than_five_bounces_in_the_last_fifty_sends_pause() {
        assert!(!window(50, &[1, 2, 3, 4, 5]).must_pause(), "10% is not above 10%");
        assert!(window(50, &[1, 2, 3, 4, 5, 6]).must_pause());
        assert!(window(8, &[3, 4, 5, 6, 7, 8]).must_pause(), "a young account: the same count");
        assert!(
            !window(120, &[10, 20, 30, 40, 50, 60, 70, 80]).must_pause(),
            "old bounces fall out of the window"
        );
        assert_eq!(window(120, &[10, 20, 30, 40, 50, 60, 70, 80]).recent_bounces(), 1);
    }

    #[test]
    fn a_bounce_is_recorded_once_per_mail() {
        let mut w = BounceWindow {
            sends: 10,
            ..Default::default()
        };
        assert!(w.record("a@x"));
        assert!(!w.record("a@x"));
        assert_eq!(w.recent_bounces(), 1);
    }

    #[test]
    fn domains_are_dns_names() {
        assert_eq!(parse_domain(" CrossFitRenegade.com. ").as_deref(), Ok("crossfitrenegade.com"));
        for bad in [
            "",
            "localhost",
            "a..b",
            "-a.com",
            "a b.com",
            "x.123",
            "mail@gym.com",
            "gym.com\r\nBcc: x",
        ] {
            assert!(parse_domain(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mail_leaves_from_the_domain_only_once_verified() {
        let shared = Email::parse("outreach@mail.openloop.local").expect("address");
        let at = Timestamp::UNIX_EPOCH;
        let pending = SendingDomain::named("gym.com", at);
        assert_eq!(pending.from_address(&shared), shared);
        let identity = DomainIdentity {
            domain: "gym.com".into(),
            verified: true,
            dkim_status: "SUCCESS".into(),
            records: Vec::new(),
        };
        assert_eq!(pending.seen(&identity, at).from_address(&shared).as_str(), "outreach@gym.com");
    }
}
