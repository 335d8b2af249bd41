//! The rails: what stops or shapes a task before anything goes out — the confidence gate,
//! the onboarding ramp, the send gate (window, the member weekly cap, daily caps), the stale
//! guard, anomalies, the risk scan's judgment, priority rules — and the step decision that
//! applies them. Depends on `conversation`, `owner`, `task`, `members`, `kernel`.

pub mod anomaly;
pub mod autonomy;
pub mod gate;
pub mod priority_rules;
pub mod quiet_hours;
pub mod risk;
pub mod risk_factors;
pub mod send_gate;
pub mod stale_guard;
pub mod step;
pub mod texting;
pub mod window;
