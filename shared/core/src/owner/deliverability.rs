//! Deliverability: what an account's bounces say about its sending, and the gym's
//! own sending domain. Bounces are counted against the account's sends — every send's
//! reservation counts one ([`crate::task::commit::SendEffect::Reserve`]) — so "more than 10%
//! of the last 50 sends bounced" is a pure question of [`BounceWindow`]; the engine pauses the
//! account's member mail when it says so (`engine/inbound/mail_events.rs`).
//!
//! A per-gym sending domain (§33.1 option B) is an SES identity with Easy DKIM and a custom
//! MAIL FROM subdomain: the owner names the domain, Openloop creates the identity through the
//! `SendingDomains` port and shows the DNS records to publish; mail leaves from the domain
//! only once SES says it is verified, from the shared domain until then.
//!
//! A domain belongs to one account: the first to name it claims it ([`DomainClaim`], one
//! conditional write), and proves it by publishing a TXT record of its own token
//! ([`ownership_record`]); only then does mail leave from it. The platform's own domains are
//! never claimable ([`is_platform_domain`]).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, Email};
use crate::kernel::limits::{BOUNCE_PAUSE_RATE, BOUNCE_WINDOW_SENDS, UNPROVEN_CLAIM_HOLD};

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

    /// Whether the account's member mail must pause.
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DnsRecord {
    /// `CNAME`, `MX` or `TXT`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub value: String,
    /// What it is for: `dkim`, `mail_from` or `ownership`.
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DomainStatus {
    /// The identity could not be created yet (the provider failed); tried again later.
    NotCreated,
    /// Created; waiting for the owner's DNS records.
    Pending,
    /// Mail leaves from it (once its ownership is proven too).
    Verified,
    /// Another account holds the domain's claim now: mail leaves from the shared address.
    Lost,
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
    /// The account's token, published as [`ownership_record`] to prove the domain is theirs.
    #[serde(default)]
    pub ownership_token: String,
    /// When that record was last found; `None`: not proven, no mail leaves from the domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proven_at: Option<Timestamp>,
}

impl SendingDomain {
    /// A domain just named, before the provider is asked.
    pub fn named(domain: &str, ownership_token: String, at: Timestamp) -> Self {
        Self {
            domain: domain.to_owned(),
            status: DomainStatus::NotCreated,
            dkim_status: None,
            records: Vec::new(),
            error: None,
            checked_at: at,
            ownership_token,
            proven_at: None,
        }
    }

    /// Mail may leave from the domain: SES verified it and the account proved it is theirs.
    pub fn sends_from_domain(&self) -> bool {
        self.status == DomainStatus::Verified && self.proven_at.is_some()
    }

    /// The TXT record that proves the domain is this account's.
    pub fn ownership_record(&self) -> DnsRecord {
        ownership_record(&self.domain, &self.ownership_token)
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
            ownership_token: self.ownership_token.clone(),
            proven_at: self.proven_at,
        }
    }

    /// The address mail leaves from: the shared address's local part at this domain once it
    /// is verified and proven; the shared address until then.
    pub fn from_address(&self, shared: &Email) -> Email {
        if !self.sends_from_domain() {
            return shared.clone();
        }
        let local = shared.as_str().split('@').next().unwrap_or("outreach");
        Email::parse(&format!("{local}@{}", self.domain)).unwrap_or_else(|_| shared.clone())
    }
}

/// The name of the TXT record that proves a domain is an account's.
pub const OWNERSHIP_RECORD_LABEL: &str = "_openloop-verify";

/// The TXT record an account publishes to prove `domain` is its own: at
/// `_openloop-verify.{domain}`, the value `openloop-verify={token}` (the token is the account's).
pub fn ownership_record(domain: &str, token: &str) -> DnsRecord {
    DnsRecord {
        kind: "TXT".into(),
        name: format!("{OWNERSHIP_RECORD_LABEL}.{domain}"),
        value: format!("openloop-verify={token}"),
        purpose: "ownership".into(),
    }
}

/// Whether the TXT strings found at the ownership record's name hold `token` (quotes and
/// surrounding space ignored, as resolvers differ in showing them).
pub fn proves_ownership(found: &[String], token: &str) -> bool {
    let want = format!("openloop-verify={token}");
    !token.is_empty() && found.iter().any(|v| v.trim().trim_matches('"').trim() == want)
}

/// One account's hold on a sending domain: written once by a conditional write (absent, this
/// account's already, or [`DomainClaim::may_be_taken`]), so no two accounts send as one domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainClaim {
    pub domain: String,
    pub account: AccountId,
    /// When the claim was made, or last lost its proof.
    pub claimed_at: Timestamp,
    /// When the account's ownership record was last found; `None` while unproven.
    pub proven_at: Option<Timestamp>,
}

impl DomainClaim {
    /// Another account may take the claim: unproven for [`UNPROVEN_CLAIM_HOLD`] (a name typed
    /// by someone who could not publish its record does not hold a gym's domain for ever).
    pub fn may_be_taken(&self, now: Timestamp) -> bool {
        self.proven_at.is_none() && now.duration_since(self.claimed_at) >= UNPROVEN_CLAIM_HOLD
    }
}

/// Whether `domain` is one of the platform's own (`platform`: the shared sender's domain, the
/// reply domain, the public site's host): the same name, a subdomain of one, or a parent of one.
pub fn is_platform_domain(domain: &str, platform: &[&str]) -> bool {
    let domain = domain.to_ascii_lowercase();
    platform
        .iter()
        .map(|p| p.trim().trim_end_matches('.').to_ascii_lowercase())
        .any(|p| !p.is_empty() && (domain == p || domain.ends_with(&format!(".{p}")) || p.ends_with(&format!(".{domain}"))))
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
        let pending = SendingDomain::named("gym.com", "tok".into(), at);
        assert_eq!(pending.from_address(&shared), shared);
        let identity = DomainIdentity {
            domain: "gym.com".into(),
            verified: true,
            dkim_status: "SUCCESS".into(),
            records: Vec::new(),
        };
        let verified = pending.seen(&identity, at);
        assert_eq!(verified.from_address(&shared), shared, "verified by SES but not proven theirs");
        let proven = SendingDomain {
            proven_at: Some(at),
            ..verified.clone()
        };
        assert_eq!(proven.from_address(&shared).as_str(), "outreach@gym.com");
        let lost = SendingDomain {
            status: DomainStatus::Lost,
            ..proven
        };
        assert_eq!(lost.from_address(&shared), shared, "another account holds it now");
    }

    #[test]
    fn the_platforms_domains_and_their_relatives_are_never_a_gyms() {
        let platform = ["mail.openloop.app", "reply.openloop.app"];
        for taken in ["mail.openloop.app", "MAIL.openloop.app", "x.mail.openloop.app", "openloop.app"] {
            assert!(is_platform_domain(taken, &platform), "{taken}");
        }
        for free in ["gym.com", "openloop.app.gym.com", "notopenloop.app"] {
            assert!(!is_platform_domain(free, &platform), "{free}");
        }
    }

    #[test]
    fn ownership_is_the_accounts_own_token_in_the_record() {
        let record = ownership_record("gym.com", "abc");
        assert_eq!(
            (record.name.as_str(), record.value.as_str()),
            ("_openloop-verify.gym.com", "openloop-verify=abc")
        );
        assert!(proves_ownership(&["\"openloop-verify=abc\"".into()], "abc"));
        assert!(!proves_ownership(&["openloop-verify=abcd".into(), "v=spf1".into()], "abc"));
        assert!(!proves_ownership(&["openloop-verify=".into()], ""), "an empty token proves nothing");
    }

    #[test]
    fn an_unproven_claim_is_held_for_a_while_a_proven_one_for_good() {
        let at = Timestamp::UNIX_EPOCH;
        let claim = DomainClaim {
            domain: "gym.com".into(),
            account: AccountId::generate(at),
            claimed_at: at,
            proven_at: None,
        };
        assert!(!claim.may_be_taken(at));
        let later = at + UNPROVEN_CLAIM_HOLD;
        assert!(claim.may_be_taken(later));
        assert!(
            !DomainClaim {
                proven_at: Some(at),
                ..claim
            }
            .may_be_taken(later)
        );
    }
}
