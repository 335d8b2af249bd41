//! PushPress's JSON (`../shared/PUSHPRESS.md`, camelCase) and its reading into the core's
//! types ([`openloop_core::members::source`]). Read leniently: a field PushPress leaves out or a value
//! it added after this was written is a `None`, never a failed import; only what identifies a
//! record (an id, a customer) is required.

use jiff::Timestamp;
use serde::Deserialize;

use openloop_core::kernel::ids::{Email, MemberId};
use openloop_core::members::source::{self, CheckinKind, Company, Customer, CustomerRole, Enrollment, EnrollmentStatus, unix_time};

/// `{"data": {"resultArray": [...]}}`, and the appointment check-ins' `next` (top level per
/// the SDK's model, inside `data` per its paginator: either is read).
#[derive(Deserialize)]
pub(crate) struct PageBody<T> {
    #[serde(default = "none")]
    pub data: Option<PageData<T>>,
    #[serde(default)]
    pub next: Option<String>,
}

fn none<T>() -> Option<T> {
    None
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageData<T> {
    #[serde(default = "Vec::new")]
    pub result_array: Vec<T>,
    #[serde(default)]
    pub next: Option<String>,
}

impl<T> PageBody<T> {
    pub fn into_parts(self) -> (Vec<T>, Option<String>) {
        let (items, inner) = self.data.map(|d| (d.result_array, d.next)).unwrap_or_default();
        let next = self.next.or(inner).filter(|n| !n.trim().is_empty());
        (items, next)
    }
}

/// `{"data": [...]}` (`GET /webhooks`).
#[derive(Deserialize)]
pub(crate) struct ListBody<T> {
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompanyWire {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub default_timezone: Option<String>,
}

/// `GET /company` answers the company bare; a `data` wrapper is read too.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum CompanyBody {
    Wrapped { data: CompanyWire },
    Bare(CompanyWire),
}

impl CompanyBody {
    pub fn into_company(self) -> Company {
        let (Self::Wrapped { data: c } | Self::Bare(c)) = self;
        Company {
            name: c.name.unwrap_or_else(|| c.id.clone()),
            id: c.id,
            timezone: c.default_timezone.filter(|t| !t.trim().is_empty()),
        }
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct NameWire {
    #[serde(default)]
    pub first: Option<String>,
    #[serde(default)]
    pub last: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MembershipDetailsWire {
    #[serde(default)]
    pub initial_membership_start_date: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CustomerWire {
    pub id: String,
    #[serde(default)]
    pub name: Option<NameWire>,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub membership_details: Option<MembershipDetailsWire>,
    #[serde(default)]
    pub phone: Option<String>,
    #[serde(default)]
    pub address: Option<AddressWire>,
}

/// A customer's `address{line1,line2,city,state,zip,country}`: only the state is read (where
/// texts' hours are kept).
#[derive(Deserialize)]
pub(crate) struct AddressWire {
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub country: Option<String>,
}

impl AddressWire {
    /// The two-letter code of a US state or territory, when the address names one.
    fn us_state(&self) -> Option<String> {
        use openloop_core::rails::quiet_hours::{is_united_states, state_code};
        if !is_united_states(self.country.as_deref()) {
            return None;
        }
        self.state.as_deref().and_then(state_code).map(str::to_owned)
    }
}

impl CustomerWire {
    /// `None` when the id is not one Openloop can keep (logged).
    pub fn into_customer(self) -> Option<Customer> {
        let id = member_id(&self.id)?;
        let name = self.name.unwrap_or_default();
        let text = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        Some(Customer {
            id,
            first_name: text(name.first),
            last_name: text(name.last),
            email: self.email.as_deref().and_then(|e| Email::parse(e).ok()),
            role: self.role.as_deref().and_then(role),
            // Kept only in E.164: a text needs the country code.
            phone: self
                .phone
                .map(|p| p.chars().filter(|c| !matches!(c, ' ' | '-' | '(' | ')' | '.')).collect::<String>())
                .filter(|p| openloop_core::kernel::text::is_e164(p)),
            state: self.address.as_ref().and_then(AddressWire::us_state),
            member_since: self
                .membership_details
                .and_then(|m| m.initial_membership_start_date)
                .as_deref()
                .and_then(date_time),
        })
    }
}

pub(crate) fn role(raw: &str) -> Option<CustomerRole> {
    serde_json::from_value(serde_json::Value::String(raw.trim().to_ascii_lowercase())).ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BillingWire {
    #[serde(default)]
    pub period: Option<String>,
    /// Read by the one rule for numbers ([`billing_interval`]): an unstorable or absurd one is
    /// left out (logged), never the whole page.
    #[serde(default)]
    pub interval: Option<serde_json::Number>,
}

/// The most periods one billing interval may span (monthly every 1–24 months, weekly…).
const MAX_BILLING_INTERVAL: u64 = 1_000;

/// A billing interval as PushPress sent it, if it is a whole number Openloop can mean; else
/// left out with a warning (the enrollment itself is kept).
fn billing_interval(enrollment: &str, n: &serde_json::Number) -> Option<u32> {
    let value = n.as_f64()?;
    match openloop_core::kernel::number::whole("invalid_interval", "billingSchedule.interval", value, 1, MAX_BILLING_INTERVAL) {
        Ok(whole) => u32::try_from(whole).ok(),
        Err(e) => {
            tracing::warn!(enrollment, error = %e, "an enrollment's billing interval Openloop cannot keep; left out");
            None
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EnrollmentWire {
    pub id: String,
    pub customer_id: String,
    #[serde(default)]
    pub plan_id: Option<String>,
    #[serde(default)]
    pub billing_schedule: Option<BillingWire>,
    pub status: String,
    #[serde(default)]
    pub paid_until: Option<String>,
    #[serde(default)]
    pub next_charge: Option<String>,
}

impl EnrollmentWire {
    pub fn into_enrollment(self) -> Option<Enrollment> {
        let customer = member_id(&self.customer_id)?;
        let Ok(status) = serde_json::from_value::<EnrollmentStatus>(serde_json::Value::String(self.status.to_ascii_lowercase())) else {
            tracing::warn!(enrollment = %self.id, status = %self.status, "an enrollment status PushPress did not document; left out");
            return None;
        };
        let billing = self.billing_schedule;
        let interval = billing
            .as_ref()
            .and_then(|b| b.interval.as_ref())
            .and_then(|n| billing_interval(&self.id, n));
        Some(Enrollment {
            id: self.id,
            customer,
            plan_id: self.plan_id.filter(|p| !p.is_empty()),
            status,
            billing_period: billing.as_ref().and_then(|b| b.period.clone()),
            billing_interval: interval,
            paid_until: self.paid_until.as_deref().and_then(date_time),
            next_charge: self.next_charge.as_deref().and_then(date_time),
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckinWire {
    pub id: String,
    /// The customer's id; `customerId` on some payloads.
    #[serde(default, alias = "customerId")]
    pub customer: Option<String>,
    #[serde(default)]
    pub timestamp: Option<serde_json::Number>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub result: Option<String>,
}

impl CheckinWire {
    /// `kind` when the payload does not say.
    pub fn into_checkin(self, kind: Option<CheckinKind>) -> Option<Checkin> {
        let customer = member_id(self.customer.as_deref()?)?;
        let at = self.timestamp.as_ref().and_then(number_time)?;
        let kind = self.kind.as_deref().and_then(checkin_kind).or(kind)?;
        Some(source::Checkin {
            id: self.id,
            customer,
            at,
            kind,
            name: self.name.filter(|n| !n.trim().is_empty()),
            failed: self.result.as_deref() == Some("failure"),
        })
    }
}

use openloop_core::members::source::Checkin;

pub(crate) fn checkin_kind(raw: &str) -> Option<CheckinKind> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned())).ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlanWire {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookWire {
    pub id: String,
    pub url: String,
    #[serde(default)]
    pub event_types: Vec<String>,
    #[serde(default)]
    pub signing_secret: Option<String>,
}

impl WebhookWire {
    pub fn into_subscription(self) -> source::Subscription {
        source::Subscription {
            id: self.id,
            url: self.url,
            event_types: self.event_types,
            signing_secret: self.signing_secret.filter(|s| !s.is_empty()),
        }
    }
}

/// A PushPress id as a member id, if it is one Openloop can keep.
pub(crate) fn member_id(raw: &str) -> Option<MemberId> {
    match MemberId::parse_external(raw) {
        Ok(id) => Some(id),
        Err(e) => {
            tracing::warn!(error = %e, "a PushPress customer id Openloop cannot keep; left out");
            None
        }
    }
}

/// The latest unix time in milliseconds a time may name (the end of year 9999).
const MAX_UNIX_MILLIS: u64 = 253_402_300_799_999;

/// A unix time in seconds or milliseconds (integer or not), read by the one rule for numbers:
/// a negative one, or one Openloop cannot keep (`1e-131`, `1e126`), is no time.
pub(crate) fn number_time(n: &serde_json::Number) -> Option<Timestamp> {
    let whole = match n.as_i64() {
        Some(whole) => whole,
        None => {
            let value = n.as_f64()?;
            openloop_core::kernel::number::check("invalid_time", "timestamp", value, 0.0, MAX_UNIX_MILLIS as f64).ok()?;
            value.trunc() as i64
        }
    };
    if whole < 0 {
        return None;
    }
    unix_time(whole)
}

/// PushPress's "date strings": an RFC 3339 time, or a bare `YYYY-MM-DD` (midnight UTC).
pub(crate) fn date_time(raw: &str) -> Option<Timestamp> {
    let raw = raw.trim();
    if let Ok(at) = raw.parse::<Timestamp>() {
        return Some(at);
    }
    let date: jiff::civil::Date = raw.get(..10)?.parse().ok()?;
    date.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|z| z.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn customer(address: serde_json::Value) -> Option<Customer> {
        let raw = serde_json::json!({"id": "usr_ana", "email": "ana@example.com", "role": "member", "address": address});
        serde_json::from_value::<CustomerWire>(raw).ok()?.into_customer()
    }

    #[test]
    fn a_customers_us_state_is_read_from_their_address_by_code_or_name() {
        let state = |address| customer(address).and_then(|c| c.state);
        assert_eq!(state(serde_json::json!({"state": "fl", "country": "US"})), Some("FL".into()));
        assert_eq!(state(serde_json::json!({"state": "Washington", "country": ""})), Some("WA".into()));
        assert_eq!(state(serde_json::json!({"state": "Texas", "zip": "73301"})), Some("TX".into()));
        // Not the United States, no state, or a name Openloop does not know: none.
        assert_eq!(state(serde_json::json!({"state": "FL", "country": "Canada"})), None);
        assert_eq!(state(serde_json::json!({"state": "", "country": "US"})), None);
        assert_eq!(state(serde_json::json!({"state": "Atlantis"})), None);
        assert_eq!(state(serde_json::Value::Null), None);
    }
}
