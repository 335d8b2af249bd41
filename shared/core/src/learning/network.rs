//! The monthly cross-business evaluation:
//! one month of cross-tenant records (codes, counts, hours — no ids, no text) searched for the
//! same contrasts the offline evaluator looks for in one account — when first messages are
//! answered, and whether short ones do better — per business type tag and across all.
//!
//! A pattern surfaces only with enough contributing businesses, counted by their keyed
//! pseudonyms among the records it rests on: at least [`MIN_CONTRIBUTORS`] for a business
//! type, at least [`MIN_SYSTEM_CONTRIBUTORS`] across at least [`MIN_SYSTEM_BUSINESS_TYPES`]
//! types for a system-wide one. Records without a pseudonym count for nothing. The pattern
//! keeps its contributors' pseudonyms so the engine can credit their accounts; what an owner
//! is shown of it carries only counts.

use std::collections::BTreeSet;

use serde_json::json;

use super::evaluator::{MIN_RATE_GAP_PCT, MIN_SENDS_PER_GROUP};
use super::interaction::SharedOutcome;

pub const MIN_CONTRIBUTORS: usize = 3;
pub const MIN_SYSTEM_CONTRIBUTORS: usize = 5;
pub const MIN_SYSTEM_BUSINESS_TYPES: usize = 2;
/// A first message longer than this many characters is "long" (as in one account).
const LONG_MESSAGE_CHARS: usize = super::evaluator::LONG_MESSAGE_CHARS;

/// One finding across businesses.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// `{month}:{scope}:{finding}`: the same finding of the same month is the same pattern.
    pub id: String,
    /// The business type tag it is about; `None`: system-wide.
    pub business_type: Option<String>,
    pub title: String,
    pub body: String,
    /// What an account that accepts it remembers.
    pub memory: String,
    /// Counts only: the groups compared, how many businesses and business types.
    pub evidence: serde_json::Value,
    /// The pseudonyms of the businesses whose records it rests on (never shown to an owner).
    pub contributors: BTreeSet<String>,
}

#[derive(Default)]
struct Group {
    sent: u32,
    replied: u32,
    contributors: BTreeSet<String>,
    business_types: BTreeSet<String>,
}

impl Group {
    fn rate_pct(&self) -> u32 {
        (self.replied * 100).checked_div(self.sent).unwrap_or(0)
    }
}

fn day_part(hour: i8) -> Option<&'static str> {
    match hour {
        5..=11 => Some("morning"),
        12..=16 => Some("afternoon"),
        17..=22 => Some("evening"),
        _ => None,
    }
}

/// The records' groups by `key`, of those that wrote and have a contributor.
fn grouped<'a>(
    records: impl Iterator<Item = &'a SharedOutcome>,
    key: impl Fn(&SharedOutcome) -> Option<&'static str>,
) -> Vec<(&'static str, Group)> {
    let mut groups: Vec<(&'static str, Group)> = Vec::new();
    for r in records.filter(|r| r.touches > 0) {
        let (Some(k), Some(who)) = (key(r), r.contributor.as_ref()) else {
            continue;
        };
        let at = match groups.iter().position(|(g, _)| *g == k) {
            Some(at) => at,
            None => {
                groups.push((k, Group::default()));
                groups.len() - 1
            }
        };
        let g = &mut groups[at].1;
        g.sent += 1;
        g.replied += u32::from(r.turns > 0);
        g.contributors.insert(who.clone());
        if let Some(t) = &r.business_type {
            g.business_types.insert(t.clone());
        }
    }
    groups
}

/// The best and worst group with enough messages, if they differ by enough.
fn contrast(groups: &[(&'static str, Group)]) -> Option<(usize, usize)> {
    let enough: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].1.sent >= MIN_SENDS_PER_GROUP).collect();
    let best = *enough
        .iter()
        .max_by_key(|&&i| (groups[i].1.rate_pct(), std::cmp::Reverse(groups[i].0)))?;
    let worst = *enough.iter().min_by_key(|&&i| (groups[i].1.rate_pct(), groups[i].0))?;
    (best != worst && groups[best].1.rate_pct().saturating_sub(groups[worst].1.rate_pct()) >= MIN_RATE_GAP_PCT).then_some((best, worst))
}

/// Enough businesses for the scope: 3 for a type, 5 across 2 types system-wide.
fn surfaces(business_type: Option<&str>, contributors: usize, business_types: usize) -> bool {
    match business_type {
        Some(_) => contributors >= MIN_CONTRIBUTORS,
        None => contributors >= MIN_SYSTEM_CONTRIBUTORS && business_types >= MIN_SYSTEM_BUSINESS_TYPES,
    }
}

fn finding(
    month: &str,
    business_type: Option<&str>,
    name: &str,
    groups: &[(&'static str, Group)],
    describe: impl Fn(&str, &str) -> (String, String),
) -> Option<Pattern> {
    let (b, w) = contrast(groups)?;
    let (best, worst) = (&groups[b], &groups[w]);
    let contributors: BTreeSet<String> = best.1.contributors.union(&worst.1.contributors).cloned().collect();
    let types: BTreeSet<&String> = best.1.business_types.iter().chain(&worst.1.business_types).collect();
    if !surfaces(business_type, contributors.len(), types.len()) {
        return None;
    }
    let scope = business_type.unwrap_or("all");
    let who = match business_type {
        Some(t) => format!("{} businesses of your type ({})", contributors.len(), t.replace('_', " ")),
        None => format!("{} businesses of {} types", contributors.len(), types.len()),
    };
    let (title, memory) = describe(best.0, worst.0);
    let group = |(name, g): &(&str, Group)| json!({"group": name, "sent": g.sent, "replied": g.replied, "reply_rate": f64::from(g.replied) / f64::from(g.sent.max(1))});
    Some(Pattern {
        id: format!("{month}:{scope}:{name}:{}>{}", best.0, worst.0),
        business_type: business_type.map(str::to_owned),
        body: format!(
            "In {month}, across {who}: {} of {} first messages ({}) were answered ({}%), against {} of {} ({}, {}%). \
             No business, person or message is named; only these counts crossed accounts.",
            best.1.replied,
            best.1.sent,
            best.0,
            best.1.rate_pct(),
            worst.1.replied,
            worst.1.sent,
            worst.0,
            worst.1.rate_pct()
        ),
        title,
        memory,
        evidence: json!({
            "month": month,
            "scope": scope,
            "best": group(best),
            "worst": group(worst),
            "businesses": contributors.len(),
            "business_types": types.len(),
        }),
        contributors,
    })
}

/// Every pattern the month's records show, per business type and system-wide.
pub fn patterns(month: &str, records: &[SharedOutcome]) -> Vec<Pattern> {
    let mut tags: Vec<&str> = records.iter().filter_map(|r| r.business_type.as_deref()).collect();
    tags.sort_unstable();
    tags.dedup();
    let scopes = tags.into_iter().map(Some).chain([None]);
    let mut found = Vec::new();
    for scope in scopes {
        let of_scope = || {
            records
                .iter()
                .filter(move |r| scope.is_none() || r.business_type.as_deref() == scope)
        };
        let timing = grouped(of_scope(), |r| r.first_touch_hour.and_then(day_part));
        found.extend(finding(month, scope, "send_time", &timing, |best, worst| {
            (
                format!("Across businesses, {best} messages are answered more than {worst} ones"),
                format!("Across similar businesses, first messages sent in the {best} are answered far more often than {worst} ones."),
            )
        }));
        let length = grouped(of_scope(), |r| {
            r.message_length.map(|n| if n > LONG_MESSAGE_CHARS { "long" } else { "short" })
        });
        found.extend(
            finding(month, scope, "message_length", &length, |best, worst| {
                (
                    format!("Across businesses, {best} first messages are answered more than {worst} ones"),
                    format!("Across similar businesses, {best} first messages are answered far more often than {worst} ones."),
                )
            })
            // Longer messages doing better is no instruction to follow safely.
            .filter(|p| p.id.contains("short>")),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(who: &str, business_type: &str, hour: i8, replied: bool) -> SharedOutcome {
        SharedOutcome {
            days_to_outcome: 2,
            hours_to_first_touch: Some(1),
            first_touch_weekday: Some(3),
            message_length: Some(200),
            business_type: Some(business_type.into()),
            contributor: Some(who.into()),
            ..crate::testing::sample_shared_outcome(hour, replied)
        }
    }

    /// Each business: two evening sends answered, two morning ones not.
    fn businesses(of: &[(&str, &str)]) -> Vec<SharedOutcome> {
        of.iter()
            .flat_map(|(who, t)| {
                [19, 19, 9, 9]
                    .into_iter()
                    .map(move |h| record(who, t, h, h == 19))
                    .chain([record(who, t, 19, true), record(who, t, 9, false)])
            })
            .collect()
    }

    #[test]
    fn a_system_wide_pattern_needs_five_businesses_across_two_types() {
        let four = businesses(&[
            ("a", "crossfit_gym"),
            ("b", "crossfit_gym"),
            ("c", "yoga_studio"),
            ("d", "yoga_studio"),
        ]);
        assert!(
            patterns("2026-10", &four).iter().all(|p| p.business_type.is_some()),
            "four are not enough"
        );
        let one_type = businesses(&[
            ("a", "yoga_studio"),
            ("b", "yoga_studio"),
            ("c", "yoga_studio"),
            ("d", "yoga_studio"),
            ("e", "yoga_studio"),
        ]);
        let found = patterns("2026-10", &one_type);
        assert!(found.iter().all(|p| p.business_type.is_some()), "one type is not enough: {found:?}");
        assert_eq!(found.len(), 1, "the type's own pattern");
        let five = businesses(&[
            ("a", "crossfit_gym"),
            ("b", "crossfit_gym"),
            ("c", "yoga_studio"),
            ("d", "yoga_studio"),
            ("e", "yoga_studio"),
        ]);
        let system: Vec<Pattern> = patterns("2026-10", &five)
            .into_iter()
            .filter(|p| p.business_type.is_none())
            .collect();
        assert_eq!(system.len(), 1, "{system:?}");
        assert_eq!(
            (
                system[0].evidence["businesses"].as_u64(),
                system[0].evidence["business_types"].as_u64()
            ),
            (Some(5), Some(2))
        );
        assert_eq!(system[0].id, "2026-10:all:send_time:evening>morning");
    }

    #[test]
    fn records_without_a_pseudonym_count_for_nothing() {
        let mut anonymous = businesses(&[("a", "crossfit_gym"), ("b", "crossfit_gym"), ("c", "crossfit_gym")]);
        for r in anonymous.iter_mut().filter(|r| r.contributor.as_deref() == Some("c")) {
            r.contributor = None;
        }
        assert!(patterns("2026-10", &anonymous).is_empty());
    }
}
