use super::*;

fn zone(name: &str) -> TimeZone {
    TimeZone::get(name).expect("zone")
}

/// `local` ("2026-11-10T21:30", a Tuesday) in `tz`, as an instant.
fn at(tz: &str, local: &str) -> Timestamp {
    local
        .parse::<jiff::civil::DateTime>()
        .expect("date-time")
        .to_zoned(zone(tz))
        .expect("in zone")
        .timestamp()
}

fn ny() -> TimeZone {
    zone("America/New_York")
}

/// The gym in New York, the member in `state`: when a text due at `local` (in `tz`) goes.
fn goes(state: &str, tz: &str, local: &str) -> Option<Timestamp> {
    let place = place(&ny(), None, Some(state));
    text_hold(&place, &[], at(tz, local)).map(|(t, _)| t)
}

#[test]
fn the_data_file_parses_and_every_rule_has_its_source() {
    let table = parse(QUIET_HOURS).expect("rules/sms_quiet_hours.toml is usable");
    assert_eq!(table.federal, Hours { from: 8, until: 21 });
    // Fifty states, the District and five territories.
    assert_eq!(table.states.len(), 56);
    let raw: File = toml::from_str(QUIET_HOURS).expect("parses");
    for (code, row) in &raw.states {
        let strict = row.from.is_some() || row.saturday.is_some() || row.sunday.is_some() || row.per_24h.is_some();
        assert_eq!(strict, row.source.is_some(), "{code}: a source exactly where there is a rule");
    }
    // A rule without a source, a window backwards, an unknown zone: refused.
    let federal = "[federal]\nfrom = 8\nuntil = 21\nsource = \"x\"\n";
    for bad in [
        "[states.FL]\nname = \"Florida\"\nzones = [\"America/New_York\"]\nfrom = 8\nuntil = 20\n",
        "[states.FL]\nname = \"Florida\"\nzones = [\"America/New_York\"]\nfrom = 20\nuntil = 8\nsource = \"s\"\n",
        "[states.FL]\nname = \"Florida\"\nzones = [\"America/Gotham\"]\n",
        "[states.FL]\nname = \"Florida\"\nzones = [\"America/New_York\"]\nfrom = 8\nsource = \"s\"\n",
    ] {
        assert!(parse(&format!("{federal}{bad}")).is_err(), "{bad}");
    }
}

#[test]
fn each_states_window_is_what_its_source_says() {
    let hours = |code: &str, day: Weekday| place(&ny(), None, Some(code)).hours(day);
    let h = |from, until| Hours { from, until };
    for code in ["FL", "MD", "MS", "NJ", "OK", "WA"] {
        for day in [Weekday::Monday, Weekday::Saturday, Weekday::Sunday] {
            assert_eq!(hours(code, day), h(8, 20), "{code} {day:?}");
        }
    }
    assert_eq!(hours("CT", Weekday::Sunday), h(9, 20));
    assert_eq!(hours("RI", Weekday::Friday), h(9, 18));
    assert_eq!(hours("RI", Weekday::Saturday), h(10, 17));
    assert_eq!(hours("RI", Weekday::Sunday), h(10, 17));
    assert_eq!(hours("TX", Weekday::Saturday), h(9, 21));
    assert_eq!(hours("TX", Weekday::Sunday), h(12, 21));
    for code in ["NY", "CA", "GA", "PR"] {
        assert_eq!(hours(code, Weekday::Sunday), h(8, 21), "{code}: the federal window");
    }
    let caps: Vec<&str> = table()
        .states
        .values()
        .filter(|s| s.per_24h.is_some())
        .map(|s| s.code.as_str())
        .collect();
    assert_eq!(caps, ["FL", "MD", "OK"]);
    assert!(caps.iter().all(|c| state(c).and_then(|s| s.per_24h) == Some(3)));
    assert_eq!(place(&ny(), None, Some("TX")).hours_in_words(), "9:00–21:00, Sunday 12:00–21:00");
    assert_eq!(place(&ny(), None, Some("RI")).hours_in_words(), "9:00–18:00, weekends 10:00–17:00");
}

#[test]
fn a_state_is_read_from_its_code_or_its_name_and_only_in_the_united_states() {
    assert_eq!(state_code("fl"), Some("FL"));
    assert_eq!(state_code(" Florida "), Some("FL"));
    assert_eq!(state_code("RHODE ISLAND"), Some("RI"));
    assert_eq!(state_code("District of Columbia"), Some("DC"));
    assert_eq!(state_code("Ontario"), None);
    assert_eq!(state_code(""), None);
    assert!(is_united_states(None));
    assert!(is_united_states(Some("U.S.A.")));
    assert!(is_united_states(Some("United States")));
    assert!(!is_united_states(Some("Canada")));
}

#[test]
fn the_members_zone_is_theirs_else_their_states_else_the_gyms() {
    let gym = ny();
    let set = place(&gym, Some("America/Los_Angeles"), Some("NY"));
    assert_eq!(
        (set.time_zone_name(), set.zone_source),
        ("America/Los_Angeles".into(), ZoneSource::Member)
    );
    assert_eq!(set.state.map(|s| s.code.as_str()), Some("NY"), "the state's rules still apply");
    let california = place(&gym, None, Some("CA"));
    assert_eq!(
        (california.time_zone_name(), california.zone_source),
        ("America/Los_Angeles".into(), ZoneSource::State)
    );
    // Florida spans two zones; a New York gym's member there is taken to be on its time.
    assert_eq!(place(&gym, None, Some("FL")).zones.len(), 1);
    assert_eq!(place(&zone("America/Denver"), None, Some("FL")).zones.len(), 2);
    let unknown = place(&gym, Some("Not/AZone"), Some("Narnia"));
    assert_eq!(
        (unknown.time_zone_name(), unknown.zone_source),
        ("America/New_York".into(), ZoneSource::Gym)
    );
}

#[test]
fn a_text_due_at_half_past_nine_at_night_waits_for_eight_in_the_morning() {
    let gym = place(&ny(), None, None);
    let (until, hold) = text_hold(&gym, &[], at("America/New_York", "2026-11-10T21:30")).expect("held");
    assert_eq!(until, at("America/New_York", "2026-11-11T08:00"));
    assert_eq!(
        hold,
        Hold::QuietHours {
            hours: "8:00–21:00".into(),
            zone: "America/New_York".into()
        }
    );
    assert_eq!(
        text_hold(&gym, &[], at("America/New_York", "2026-11-10T06:00")).map(|h| h.0),
        Some(at("America/New_York", "2026-11-10T08:00"))
    );
    assert_eq!(text_hold(&gym, &[], at("America/New_York", "2026-11-10T08:00")), None);
    assert_eq!(text_hold(&gym, &[], at("America/New_York", "2026-11-10T20:59")), None);
}

#[test]
fn a_gym_in_new_york_texts_a_member_in_los_angeles_on_los_angeles_time() {
    let member = place(&ny(), Some("America/Los_Angeles"), None);
    // 21:30 in New York is 18:30 in Los Angeles: the text goes.
    assert_eq!(text_hold(&member, &[], at("America/New_York", "2026-11-10T21:30")), None);
    // 09:00 in New York is 06:00 in Los Angeles: it waits for 8:00 there (11:00 in New York).
    assert_eq!(
        text_hold(&member, &[], at("America/New_York", "2026-11-10T09:00")).map(|h| h.0),
        Some(at("America/Los_Angeles", "2026-11-10T08:00"))
    );
    // 21:30 in Los Angeles waits for 8:00 there the next morning.
    assert_eq!(
        text_hold(&member, &[], at("America/Los_Angeles", "2026-11-10T21:30")).map(|h| h.0),
        Some(at("America/Los_Angeles", "2026-11-11T08:00"))
    );
}

#[test]
fn the_eight_in_the_evening_states_hold_a_text_due_at_eight() {
    for (code, tz) in [
        ("FL", "America/New_York"),
        ("MD", "America/New_York"),
        ("MS", "America/Chicago"),
        ("NJ", "America/New_York"),
        ("OK", "America/Chicago"),
        ("WA", "America/Los_Angeles"),
    ] {
        assert_eq!(goes(code, tz, "2026-11-10T19:59"), None, "{code}");
        assert_eq!(goes(code, tz, "2026-11-10T20:00"), Some(at(tz, "2026-11-11T08:00")), "{code}");
        assert_eq!(goes(code, tz, "2026-11-10T07:30"), Some(at(tz, "2026-11-10T08:00")), "{code}");
    }
    // A state with no rule of its own keeps the federal window.
    assert_eq!(goes("GA", "America/New_York", "2026-11-10T20:30"), None);
}

#[test]
fn connecticut_waits_for_nine() {
    assert_eq!(
        goes("CT", "America/New_York", "2026-11-10T08:30"),
        Some(at("America/New_York", "2026-11-10T09:00"))
    );
    assert!(goes("CT", "America/New_York", "2026-11-10T20:00").is_some());
}

#[test]
fn rhode_island_keeps_shorter_hours_at_weekends() {
    let tz = "America/New_York";
    // Friday 18:00 waits for Saturday's 10:00.
    assert_eq!(goes("RI", tz, "2026-11-13T18:00"), Some(at(tz, "2026-11-14T10:00")));
    assert_eq!(goes("RI", tz, "2026-11-14T09:30"), Some(at(tz, "2026-11-14T10:00")));
    assert_eq!(goes("RI", tz, "2026-11-14T17:00"), Some(at(tz, "2026-11-15T10:00")));
    // Sunday 17:30 waits for Monday's 9:00.
    assert_eq!(goes("RI", tz, "2026-11-15T17:30"), Some(at(tz, "2026-11-16T09:00")));
    assert_eq!(goes("RI", tz, "2026-11-16T17:59"), None);
}

#[test]
fn texas_waits_for_noon_on_sunday() {
    let tz = "America/Chicago";
    // A gym in Houston: its member in Texas is taken to be on its time.
    let member = place(&zone(tz), None, Some("TX"));
    let goes = |local: &str| text_hold(&member, &[], at(tz, local)).map(|h| h.0);
    assert_eq!(goes("2026-11-15T10:00"), Some(at(tz, "2026-11-15T12:00")));
    assert_eq!(goes("2026-11-14T08:30"), Some(at(tz, "2026-11-14T09:00")));
    assert_eq!(goes("2026-11-14T20:30"), None);
    // Saturday 21:00 waits for Sunday noon.
    assert_eq!(goes("2026-11-14T21:00"), Some(at(tz, "2026-11-15T12:00")));
    // A New York gym knows only the state: noon in El Paso (Mountain time) too, 13:00 in Houston.
    assert_eq!(
        self::goes("TX", tz, "2026-11-15T10:00"),
        Some(at("America/Denver", "2026-11-15T12:00"))
    );
}

#[test]
fn a_state_in_two_zones_keeps_the_window_in_both() {
    // A Denver gym's member in Florida: Eastern and Central time both.
    let member = place(&zone("America/Denver"), None, Some("FL"));
    // 8:30 in New York is 7:30 in Chicago: wait for 8:00 in Chicago.
    assert_eq!(
        text_hold(&member, &[], at("America/New_York", "2026-11-10T08:30")).map(|h| h.0),
        Some(at("America/Chicago", "2026-11-10T08:00"))
    );
    // 19:30 in Chicago is 20:30 in New York: wait for the morning in both.
    assert_eq!(
        text_hold(&member, &[], at("America/Chicago", "2026-11-10T19:30")).map(|h| h.0),
        Some(at("America/Chicago", "2026-11-11T08:00"))
    );
    assert_eq!(text_hold(&member, &[], at("America/Chicago", "2026-11-10T12:00")), None);
}

#[test]
fn three_texts_about_one_subject_in_a_day_are_the_most_in_florida_oklahoma_and_maryland() {
    let tz = "America/New_York";
    let sent = [at(tz, "2026-11-10T09:00"), at(tz, "2026-11-10T12:00"), at(tz, "2026-11-10T15:00")];
    for code in ["FL", "MD", "OK"] {
        let member = place(&ny(), Some(tz), Some(code));
        let (until, hold) = text_hold(&member, &sent, at(tz, "2026-11-10T16:00")).expect("capped");
        // The fourth waits until the first is 24 hours old.
        assert_eq!(until, at(tz, "2026-11-11T09:00"), "{code}");
        assert_eq!(
            hold,
            Hold::SameSubject {
                state: code.into(),
                per_24h: 3
            }
        );
        assert_eq!(
            text_hold(&member, &sent[1..], at(tz, "2026-11-10T16:00")),
            None,
            "{code}: two is fine"
        );
        // Past 24 hours the oldest no longer counts.
        assert_eq!(text_hold(&member, &sent, at(tz, "2026-11-11T09:00")), None, "{code}");
    }
    // The cap's end at night waits on for the morning too.
    // (The first went at 20:30, before the member's state was known.)
    let late = [at(tz, "2026-11-09T20:30"), at(tz, "2026-11-10T09:00"), at(tz, "2026-11-10T10:00")];
    let member = place(&ny(), Some(tz), Some("FL"));
    assert_eq!(
        text_hold(&member, &late, at(tz, "2026-11-10T11:00")).map(|h| h.0),
        Some(at(tz, "2026-11-11T08:00")),
        "20:30 + 24 hours is past Florida's 20:00"
    );
    // No cap elsewhere.
    let member = place(&ny(), Some(tz), Some("NY"));
    assert_eq!(text_hold(&member, &sent, at(tz, "2026-11-10T16:00")), None);
}
