//! The monthly churn report (spec §31.4; CONTRACT.md `GET
//! /api/v1/reports/churn`): members at the start and end of the month, who joined and who
//! cancelled, the churn rate and its 12-month trend, why members left, and what Openloop
//! saved. Pure: the members' facts and the tasks' tallies are read by `engine/day/reports/`.
//!
//! A member counts from `joined_at` (from always when unknown) until `cancelled_at`; leads
//! never count. Facts keep a member's latest cancellation, so a member who cancelled twice
//! counts once, in the month of the latest.

use serde::Serialize;

use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;
use crate::owner::scorecard::Month;
use crate::task::tally::TaskTally;

/// The outcomes that mean a member was kept or brought back.
const SAVED: [&str; 2] = ["retained", "recovered"];

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonthRate {
    pub month: String,
    pub churn_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReasonCount {
    pub reason: String,
    pub count: u32,
    /// `cancellation` (the reason the member gave) or `risk_scan` (a factor the risk scan
    /// would have seen before they left: `rails/risk_factors.rs`).
    pub source: &'static str,
}

/// How many of the month's cancellations gave a reason of one class
/// (`members/cancellation.rs`), most first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassCount {
    pub class: crate::members::cancellation::CancellationClass,
    pub count: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChurnReport {
    pub month: String,
    pub members_start: u32,
    pub members_end: u32,
    pub joined: u32,
    pub cancelled: u32,
    pub churn_rate: f64,
    pub trend: Vec<MonthRate>,
    pub reasons: Vec<ReasonCount>,
    /// The month's cancellations grouped by what their reasons read as.
    pub classes: Vec<ClassCount>,
    pub saved_by_openloop: u32,
    pub revenue_retained: f64,
}

fn member_at(facts: &MemberFacts, at: jiff::Timestamp) -> bool {
    facts.status.is_some_and(|s| s != MemberStatus::Lead)
        && facts.joined_at.is_none_or(|j| j < at)
        && facts.cancelled_at.is_none_or(|c| c >= at)
}

/// Counts of one month: (members at its start, at its end, joined, cancelled).
fn counts(members: &[MemberFacts], month: &Month) -> (u32, u32, u32, u32) {
    let count = |f: &dyn Fn(&MemberFacts) -> bool| u32::try_from(members.iter().filter(|m| f(m)).count()).unwrap_or(u32::MAX);
    (
        count(&|m| member_at(m, month.start)),
        count(&|m| member_at(m, month.end)),
        count(&|m| m.status.is_some_and(|s| s != MemberStatus::Lead) && m.joined_at.is_some_and(|j| month.contains(j))),
        count(&|m| m.cancelled_at.is_some_and(|c| month.contains(c))),
    )
}

fn rate(cancelled: u32, start: u32) -> f64 {
    if start == 0 {
        return 0.0;
    }
    (f64::from(cancelled) / f64::from(start) * 10_000.0).round() / 10_000.0
}

/// The members who cancelled in `month`.
pub fn cancelled_in<'a>(members: &'a [MemberFacts], month: &'a Month) -> impl Iterator<Item = &'a MemberFacts> + 'a {
    members.iter().filter(|m| m.cancelled_at.is_some_and(|c| month.contains(c)))
}

/// The report with the risk scan's factors (`factors`: each cancelled member's) counted after
/// the cancellation reasons, most frequent first.
pub fn with_risk_factors<'a>(mut report: ChurnReport, factors: impl IntoIterator<Item = &'a str>) -> ChurnReport {
    let mut counts: std::collections::BTreeMap<&str, u32> = Default::default();
    for factor in factors {
        *counts.entry(factor).or_default() += 1;
    }
    let mut found: Vec<ReasonCount> = counts
        .into_iter()
        .map(|(reason, count)| ReasonCount {
            reason: reason.to_owned(),
            count,
            source: "risk_scan",
        })
        .collect();
    found.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    report.reasons.extend(found);
    report
}

/// The report of `months`' last month (`months`: the 12 months up to it, oldest first).
pub fn report(members: &[MemberFacts], tallies: &[TaskTally], months: &[Month]) -> ChurnReport {
    let Some(month) = months.last() else {
        return ChurnReport {
            month: String::new(),
            members_start: 0,
            members_end: 0,
            joined: 0,
            cancelled: 0,
            churn_rate: 0.0,
            trend: Vec::new(),
            reasons: Vec::new(),
            classes: Vec::new(),
            saved_by_openloop: 0,
            revenue_retained: 0.0,
        };
    };
    let (members_start, members_end, joined, cancelled) = counts(members, month);
    // The months before the gym's data begins (nobody a member at their start, nobody joining)
    // are left out: a 0% for a month the gym did not exist reads as a good month.
    let trend = months
        .iter()
        .map(|m| (m, counts(members, m)))
        .skip_while(|(_, (start, _, joined, _))| *start == 0 && *joined == 0)
        .map(|(m, (start, _, _, gone))| MonthRate {
            month: m.label(),
            churn_rate: rate(gone, start),
        })
        .collect();
    let mut reasons: std::collections::BTreeMap<String, u32> = Default::default();
    let mut classes: std::collections::BTreeMap<crate::members::cancellation::CancellationClass, u32> = Default::default();
    for m in cancelled_in(members, month) {
        let reason = m.cancellation_reason.clone().unwrap_or_else(|| "not given".into());
        *reasons.entry(reason).or_default() += 1;
        *classes
            .entry(crate::members::cancellation::CancellationClass::of(
                m.cancellation_reason.as_deref(),
            ))
            .or_default() += 1;
    }
    let mut classes: Vec<ClassCount> = classes.into_iter().map(|(class, count)| ClassCount { class, count }).collect();
    classes.sort_by(|a, b| b.count.cmp(&a.count).then(a.class.cmp(&b.class)));
    let mut reasons: Vec<ReasonCount> = reasons
        .into_iter()
        .map(|(reason, count)| ReasonCount {
            reason,
            count,
            source: "cancellation",
        })
        .collect();
    reasons.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    let closed_in_month = tallies
        .iter()
        .filter(|t| !t.is_open() && t.resolved_at.is_some_and(|r| month.contains(r)));
    let (mut saved, mut revenue) = (0u32, 0.0f64);
    for t in closed_in_month {
        if t.outcome.as_deref().is_some_and(|o| SAVED.contains(&o)) {
            saved += 1;
        }
        revenue += t.attributed_value.unwrap_or(0.0);
    }
    ChurnReport {
        month: month.label(),
        members_start,
        members_end,
        joined,
        cancelled,
        churn_rate: rate(cancelled, members_start),
        trend,
        reasons,
        classes,
        saved_by_openloop: saved,
        revenue_retained: (revenue * 100.0).round() / 100.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::MemberId;
    use crate::testing::at;

    fn member(id: &str, joined: &str, cancelled: Option<(&str, &str)>) -> MemberFacts {
        let mut f = MemberFacts::new(MemberId::parse(id).unwrap_or_else(|e| panic!("{e}")));
        f.status = Some(if cancelled.is_some() {
            MemberStatus::Cancelled
        } else {
            MemberStatus::Active
        });
        f.joined_at = Some(at(joined));
        if let Some((when, why)) = cancelled {
            f.cancelled_at = Some(at(when));
            f.cancellation_reason = Some(why.into());
        }
        f
    }

    #[test]
    fn the_trend_begins_with_the_gyms_data() {
        let tz = jiff::tz::TimeZone::UTC;
        let months = Month::parse("2026-11", &tz).expect("month").trailing(12, &tz).expect("months");
        let members = [
            member("m_a", "2026-08-20T00:00:00Z", None),
            member("m_b", "2026-09-02T00:00:00Z", Some(("2026-10-10T00:00:00Z", "moving"))),
        ];
        let r = report(&members, &[], &months);
        let shown: Vec<&str> = r.trend.iter().map(|t| t.month.as_str()).collect();
        assert_eq!(
            shown,
            ["2026-08", "2026-09", "2026-10", "2026-11"],
            "no 0% for the months before anyone joined"
        );
    }

    #[test]
    fn the_report_adds_up_members_joins_cancels_and_the_trend() {
        let tz = jiff::tz::TimeZone::UTC;
        let november = Month::parse("2026-11", &tz).expect("month");
        let months = november.trailing(12, &tz).expect("months");
        let members = [
            member("m_a", "2025-01-01T00:00:00Z", None),
            member("m_b", "2025-01-01T00:00:00Z", Some(("2026-11-10T00:00:00Z", "moving"))),
            member("m_c", "2025-01-01T00:00:00Z", Some(("2026-11-12T00:00:00Z", "moving"))),
            member("m_d", "2025-01-01T00:00:00Z", Some(("2026-10-03T00:00:00Z", "price"))),
            member("m_e", "2026-11-05T00:00:00Z", None),
        ];
        let r = report(&members, &[], &months);
        assert_eq!((r.members_start, r.members_end, r.joined, r.cancelled), (3, 2, 1, 2));
        assert_eq!(r.churn_rate, 0.6667);
        assert_eq!(r.trend.len(), 12);
        assert_eq!(
            r.trend[10],
            MonthRate {
                month: "2026-10".into(),
                churn_rate: 0.25
            }
        );
        assert_eq!(
            r.reasons,
            [ReasonCount {
                reason: "moving".into(),
                count: 2,
                source: "cancellation",
            }]
        );
        assert_eq!(
            r.classes,
            [ClassCount {
                class: crate::members::cancellation::CancellationClass::Moving,
                count: 2
            }]
        );
        let with = with_risk_factors(
            r.clone(),
            ["risk scan: payment trouble", "risk scan: new member", "risk scan: payment trouble"],
        );
        let listed: Vec<(&str, u32, &str)> = with.reasons.iter().map(|r| (r.reason.as_str(), r.count, r.source)).collect();
        assert_eq!(
            listed,
            [
                ("moving", 2, "cancellation"),
                ("risk scan: payment trouble", 2, "risk_scan"),
                ("risk scan: new member", 1, "risk_scan"),
            ]
        );
        assert_eq!(r.members_end, r.members_start + r.joined - r.cancelled, "it adds up");
    }
}
