//! When a text may reach a member: the federal 8:00–21:00 in their local time, narrowed by
//! their state's law where it is stricter, and a state's cap on texts about one subject in 24
//! hours. The rules are the data file `rules/sms_quiet_hours.toml` (compiled in, each with
//! its source); this module is pure — the member's place comes with the facts the step has
//! already read.
//!
//! The member's place ([`place`]): the time zone the owner set for them, else their state's
//! zones (the state the owner set, else their PushPress address's), else the gym's zone. A
//! state that spans zones keeps the window in each of them, unless the gym's own zone is one
//! (then it is taken as the member's).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use jiff::civil::{Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde::{Deserialize, Serialize};

pub const QUIET_HOURS: &str = include_str!("../../../../rules/sms_quiet_hours.toml");

/// A local window: a text may go from `from`:00 until `until`:00.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hours {
    pub from: i8,
    pub until: i8,
}

impl Hours {
    /// The narrower of two windows (the later start, the earlier end).
    fn and(self, other: Hours) -> Hours {
        Hours {
            from: self.from.max(other.from),
            until: self.until.min(other.until),
        }
    }

    fn holds(self, hour: i8) -> bool {
        (self.from..self.until).contains(&hour)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FederalRow {
    from: i8,
    until: i8,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateRow {
    name: String,
    zones: Vec<String>,
    from: Option<i8>,
    until: Option<i8>,
    saturday: Option<Hours>,
    sunday: Option<Hours>,
    per_24h: Option<u32>,
    source: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    federal: FederalRow,
    states: BTreeMap<String, StateRow>,
}

/// One state's (or territory's) rules.
#[derive(Clone, Debug)]
pub struct StateRules {
    pub code: String,
    pub name: String,
    pub zones: Vec<TimeZone>,
    /// The state's own window, every day (when stricter than the federal one).
    pub every_day: Option<Hours>,
    pub saturday: Option<Hours>,
    pub sunday: Option<Hours>,
    /// The most texts about one subject in any 24 hours.
    pub per_24h: Option<u32>,
}

impl StateRules {
    /// The state's own window on `day`, if it has one.
    fn own(&self, day: Weekday) -> Option<Hours> {
        match day {
            Weekday::Saturday => self.saturday.or(self.every_day),
            Weekday::Sunday => self.sunday.or(self.every_day),
            _ => self.every_day,
        }
    }
}

struct Table {
    federal: Hours,
    states: BTreeMap<String, StateRules>,
}

/// Why the data file cannot be used (a test reads it; the build keeps the federal window).
fn parse(raw: &str) -> Result<Table, String> {
    let file: File = toml::from_str(raw).map_err(|e| e.to_string())?;
    let federal = Hours {
        from: file.federal.from,
        until: file.federal.until,
    };
    let sane = |h: Hours| (0..=23).contains(&h.from) && (1..=24).contains(&h.until) && h.from < h.until;
    if !sane(federal) || file.federal.source.trim().is_empty() {
        return Err("the federal window must be whole hours, from before until, with a source".into());
    }
    let mut states = BTreeMap::new();
    for (code, row) in file.states {
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(format!("{code:?} is not a two-letter code"));
        }
        let zones = row
            .zones
            .iter()
            .map(|z| TimeZone::get(z).map_err(|_| format!("{code}: {z:?} is not an IANA time zone")))
            .collect::<Result<Vec<_>, _>>()?;
        if zones.is_empty() {
            return Err(format!("{code}: no zones"));
        }
        let every_day = match (row.from, row.until) {
            (None, None) => None,
            (Some(from), Some(until)) => Some(Hours { from, until }),
            _ => return Err(format!("{code}: from and until go together")),
        };
        let rules = [every_day, row.saturday, row.sunday];
        if rules.iter().flatten().any(|h| !sane(*h)) {
            return Err(format!("{code}: a window must be whole hours, from before until"));
        }
        let strict = rules.iter().any(Option::is_some) || row.per_24h.is_some();
        if strict && row.source.as_deref().is_none_or(|s| s.trim().is_empty()) {
            return Err(format!("{code}: a rule needs its source"));
        }
        if row.per_24h == Some(0) {
            return Err(format!("{code}: per_24h must be at least 1"));
        }
        states.insert(
            code.clone(),
            StateRules {
                code,
                name: row.name,
                zones,
                every_day,
                saturday: row.saturday,
                sunday: row.sunday,
                per_24h: row.per_24h,
            },
        );
    }
    Ok(Table { federal, states })
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse(QUIET_HOURS).unwrap_or_else(|e| {
            tracing::error!(error = %e, "rules/sms_quiet_hours.toml is not usable; texts keep 8:00-21:00 only");
            Table {
                federal: Hours { from: 8, until: 21 },
                states: BTreeMap::new(),
            }
        })
    })
}

/// A state's rules by its two-letter code.
pub fn state(code: &str) -> Option<&'static StateRules> {
    table().states.get(code)
}

/// The two-letter code of a US state or territory, from its code or its name as an address
/// may give it ("fl", "Florida", " FLORIDA "); `None` for anything else.
pub fn state_code(raw: &str) -> Option<&'static str> {
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > 40 {
        return None;
    }
    let upper = raw.to_ascii_uppercase();
    table()
        .states
        .values()
        .find(|s| s.code == upper || s.name.eq_ignore_ascii_case(raw))
        .map(|s| s.code.as_str())
}

/// Whether an address's country (absent, or as people write it) is the United States.
pub fn is_united_states(country: Option<&str>) -> bool {
    let Some(country) = country.map(str::trim).filter(|c| !c.is_empty()) else {
        return true;
    };
    let plain: String = country
        .chars()
        .filter(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    matches!(plain.as_str(), "US" | "USA" | "UNITEDSTATES" | "UNITEDSTATESOFAMERICA")
}

/// Where the member's time zone came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ZoneSource {
    /// Set for this member by the owner.
    Member,
    /// Their state's (set by the owner or from their address).
    State,
    /// Nothing known of the member: the gym's.
    Gym,
}

/// Where a member is, as far as texts go.
#[derive(Clone, Debug)]
pub struct TextPlace {
    /// The zones a text keeps its window in (one, unless a state spans zones).
    pub zones: Vec<TimeZone>,
    pub zone_source: ZoneSource,
    pub state: Option<&'static StateRules>,
}

impl TextPlace {
    /// The member's (main) time zone's IANA name.
    pub fn time_zone_name(&self) -> String {
        self.zones.first().and_then(TimeZone::iana_name).unwrap_or("UTC").to_owned()
    }

    /// The window a text keeps on `day`: the federal one narrowed by the state's.
    pub fn hours(&self, day: Weekday) -> Hours {
        let federal = table().federal;
        match self.state.and_then(|s| s.own(day)) {
            Some(own) => federal.and(own),
            None => federal,
        }
    }

    /// The hours in words, for the owner: "8:00–20:00", or with the days that differ.
    pub fn hours_in_words(&self) -> String {
        let show = |h: Hours| format!("{}:00–{}:00", h.from, h.until);
        let weekday = self.hours(Weekday::Monday);
        let mut words = show(weekday);
        let saturday = self.hours(Weekday::Saturday);
        let sunday = self.hours(Weekday::Sunday);
        if saturday == sunday && saturday != weekday {
            words.push_str(&format!(", weekends {}", show(saturday)));
        } else {
            for (name, h) in [("Saturday", saturday), ("Sunday", sunday)] {
                if h != weekday {
                    words.push_str(&format!(", {name} {}", show(h)));
                }
            }
        }
        words
    }
}

/// The member's place: the zone the owner set (`member_zone`, an IANA name), else the
/// state's zones (`member_state`, a two-letter code), else the gym's zone.
pub fn place(gym: &TimeZone, member_zone: Option<&str>, member_state: Option<&str>) -> TextPlace {
    let state = member_state.and_then(state_code).and_then(self::state);
    if let Some(zone) = member_zone.and_then(|z| TimeZone::get(z).ok()) {
        return TextPlace {
            zones: vec![zone],
            zone_source: ZoneSource::Member,
            state,
        };
    }
    if let Some(rules) = state {
        let gym_name = gym.iana_name();
        let zones = if rules.zones.iter().any(|z| z.iana_name().is_some() && z.iana_name() == gym_name) {
            vec![gym.clone()]
        } else {
            rules.zones.clone()
        };
        return TextPlace {
            zones,
            zone_source: ZoneSource::State,
            state,
        };
    }
    TextPlace {
        zones: vec![gym.clone()],
        zone_source: ZoneSource::Gym,
        state: None,
    }
}

/// What holds a text back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Outside the window in the member's time zone.
    QuietHours { hours: String, zone: String },
    /// The state's cap on texts about one subject in 24 hours.
    SameSubject { state: String, per_24h: u32 },
}

/// The first instant at or after `at` inside the window in every one of the place's zones.
fn opening(place: &TextPlace, at: Timestamp) -> Timestamp {
    let mut t = at;
    // Each pass moves to the next opening in a zone that is closed; windows of hours in
    // zones hours apart agree within a few passes.
    for _ in 0..16 {
        let mut moved = false;
        for zone in &place.zones {
            let local = t.to_zoned(zone.clone());
            let hours = place.hours(local.weekday());
            if hours.holds(local.hour()) {
                continue;
            }
            let next = if local.hour() < hours.from {
                local.date().to_datetime(Time::new(hours.from, 0, 0, 0).unwrap_or_default())
            } else {
                let Ok(tomorrow) = local.date().checked_add(1.day()) else {
                    return t;
                };
                let h = place.hours(tomorrow.weekday());
                tomorrow.to_datetime(Time::new(h.from, 0, 0, 0).unwrap_or_default())
            };
            match next.to_zoned(zone.clone()) {
                Ok(z) if z.timestamp() > t => {
                    t = z.timestamp();
                    moved = true;
                }
                _ => return t,
            }
        }
        if !moved {
            break;
        }
    }
    t
}

/// When a text due at `now` may go, and what holds it; `None` when it may go now. `sent` are
/// the times of the texts already sent about the same subject (the task's), for a state's
/// cap.
pub fn text_hold(place: &TextPlace, sent: &[Timestamp], now: Timestamp) -> Option<(Timestamp, Hold)> {
    let mut at = now;
    let mut hold = None;
    if let Some(state) = place.state
        && let Some(cap) = state.per_24h
    {
        let mut recent: Vec<Timestamp> = sent
            .iter()
            .copied()
            .filter(|s| *s <= now && now.duration_since(*s) < SignedDuration::from_hours(24))
            .collect();
        recent.sort();
        let cap_usize = usize::try_from(cap).unwrap_or(usize::MAX);
        if recent.len() >= cap_usize {
            // The oldest text that must fall out of the 24 hours for one more to go.
            let oldest = recent[recent.len() - cap_usize];
            at = oldest + SignedDuration::from_hours(24);
            hold = Some(Hold::SameSubject {
                state: state.code.clone(),
                per_24h: cap,
            });
        }
    }
    let open = opening(place, at);
    if open > at {
        at = open;
        if hold.is_none() {
            hold = Some(Hold::QuietHours {
                hours: place.hours_in_words(),
                zone: place.time_zone_name(),
            });
        }
    }
    hold.map(|h| (at, h))
}

#[cfg(test)]
mod tests;
