//! The gym owner's side: the account and its settings, recurring templates, business
//! memories, the notices and digests we send the owner, daily metrics, the scorecard, and
//! alerts to us. Depends on `task`, `members`, `kernel`.

pub mod account;
pub mod action_link;
pub mod alert;
pub mod bounded_settings;
pub mod brief;
pub mod business_memory;
pub mod calibration;
pub mod churn_report;
pub mod connection;
pub mod credentials;
pub mod deliverability;
pub mod experiment;
pub mod holdout;
pub mod learned;
pub mod metrics;
pub mod outbound_webhook;
pub mod owner_answer;
pub mod owner_notice;
pub mod pooled_lift;
pub mod presence;
pub mod quiet;
pub mod recurring;
pub mod scorecard;
pub mod send_hours;
pub mod sign_in;
pub mod sms;
pub mod trigger;
pub mod webhook_address;
pub mod webhook_event;
