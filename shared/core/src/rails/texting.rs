//! Which channel a touch goes by, and when a text may go: a
//! text needs the owner's texts turned on, the member's phone and their consent; it goes when
//! the member has no e-mail address, when the touch answers a conversation that was last
//! texted, or when the task type's cadence lets this touch be a text (`rules/texts.toml`).
//! Texts keep quiet hours (`quiet_hours.rs`): 8:00–21:00 in the member's time zone, narrower
//! where their state's law says so; a text due outside them waits for the window to open.

use jiff::Timestamp;

use crate::kernel::ids::Email;
use crate::members::consent::SmsConsent;
use crate::members::member::MemberFacts;
use crate::owner::account::Settings;
use crate::rails::quiet_hours::{self, Hold, TextPlace};
use crate::task::Task;
use crate::task::reason::Reason;
use crate::task::transition::Why;

/// How a touch reaches the member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    Mail(Email),
    /// A text to `phone` (E.164).
    Text {
        phone: String,
    },
}

/// The member's phone, when a text may go to it at all: texts on with an identity to send
/// from, a phone on file, and the member's "yes".
pub fn textable<'a>(settings: &Settings, facts: Option<&'a MemberFacts>) -> Option<&'a str> {
    settings.sms.sending_from()?;
    let facts = facts?;
    if !SmsConsent::allows_texts(facts.sms_consent.as_ref()) {
        return None;
    }
    facts.phone.as_deref()
}

/// The channel of the task's next touch; `None` when the member can be reached by neither.
pub fn choose(settings: &Settings, task: &Task, facts: Option<&MemberFacts>, email: Option<Email>) -> Option<Channel> {
    let Some(phone) = textable(settings, facts) else {
        return email.map(Channel::Mail);
    };
    let text = Channel::Text { phone: phone.to_owned() };
    let Some(email) = email else {
        return Some(text);
    };
    let by_text = if task.answer.is_some() {
        // An answer goes back the way the conversation last went.
        task.thread
            .last()
            .is_some_and(|m| crate::conversation::sms::is_text_id(&m.message_id))
    } else {
        crate::task::text_touches::may_text(&task.task_type, task.touch)
    };
    Some(if by_text { text } else { Channel::Mail(email) })
}

/// Where the member is, as far as texts go (`rails/quiet_hours.rs`): the time zone the owner
/// set for them, else their state's, else the gym's.
pub fn member_place(settings: &Settings, facts: Option<&MemberFacts>) -> TextPlace {
    let zone = facts.and_then(|f| f.time_zone.as_deref());
    let state = facts.and_then(|f| f.state.as_deref().or(f.address_state.as_deref()));
    quiet_hours::place(&settings.time_zone(), zone, state)
}

/// The settings the send gates read for a touch: a text's in the member's local time (the send
/// window, the first touch's morning hours, the member's day), with the default preferred
/// hours — which fall inside every state's weekday hours, so a text never waits forever
/// between an account's chosen hour and a state's window. The account's daily limit is
/// still kept on its own day by the reservation.
pub fn gate_settings<'a>(settings: &'a Settings, channel: &Channel, facts: Option<&MemberFacts>) -> std::borrow::Cow<'a, Settings> {
    if !matches!(channel, Channel::Text { .. }) {
        return std::borrow::Cow::Borrowed(settings);
    }
    let place = member_place(settings, facts);
    let mut local = settings.clone();
    local.timezone = place.time_zone_name();
    local.send_hours = None;
    std::borrow::Cow::Owned(local)
}

/// When a text of `task` due at `now` may go, and why it waits: `None` inside the member's
/// window (8:00–21:00 in their time zone, narrower where their state says so) and under their
/// state's cap on texts about one subject (the task's texts of the last 24 hours, read from
/// its thread: a text's id carries the time it went).
pub fn text_hold(settings: &Settings, task: &Task, facts: Option<&MemberFacts>, now: Timestamp) -> Option<(Timestamp, Why)> {
    let place = member_place(settings, facts);
    let sent: Vec<Timestamp> = task
        .thread
        .iter()
        .filter_map(|m| crate::conversation::sms::text_sent_at(&m.message_id))
        .collect();
    let (until, hold) = quiet_hours::text_hold(&place, &sent, now)?;
    let why = match hold {
        Hold::QuietHours { hours, zone } => {
            Why::new(Reason::TextQuietHours).detail(format!("texts go {hours} in the member's time zone ({zone})"))
        }
        Hold::SameSubject { state, per_24h } => {
            Why::new(Reason::TextSameSubjectLimit).detail(format!("{state} allows {per_24h} texts about one subject in 24 hours"))
        }
    };
    Some((until, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> Timestamp {
        t.parse().expect("time")
    }

    #[test]
    fn a_text_due_at_half_past_nine_at_night_waits_for_eight_in_the_morning() {
        let s = Settings::defaults("America/New_York".into());
        let task = crate::testing::sample_task(crate::task::TaskStatus::Waiting);
        // 21:30 in New York (EST, UTC-5) is 02:30 UTC the next day.
        let (until, why) = text_hold(&s, &task, None, at("2026-11-10T02:30:00Z")).expect("held");
        assert_eq!((until, why.reason), (at("2026-11-10T13:00:00Z"), Reason::TextQuietHours));
        assert_eq!(text_hold(&s, &task, None, at("2026-11-10T13:00:00Z")).map(|h| h.0), None);
    }

    #[test]
    fn the_members_own_zone_and_state_come_with_their_facts() {
        let s = Settings::defaults("America/New_York".into());
        let task = crate::testing::sample_task(crate::task::TaskStatus::Waiting);
        let mut facts = MemberFacts::new(task.member.id.clone());
        facts.time_zone = Some("America/Los_Angeles".into());
        // 21:30 in New York, 18:30 in Los Angeles.
        assert!(text_hold(&s, &task, Some(&facts), at("2026-11-11T02:30:00Z")).is_none());
        // A Washington address: 20:15 there waits for the morning.
        facts.time_zone = None;
        facts.address_state = Some("WA".into());
        let (until, why) = text_hold(&s, &task, Some(&facts), at("2026-11-11T04:15:00Z")).expect("held");
        assert_eq!(until, at("2026-11-11T16:00:00Z"));
        assert!(why.detail.as_deref().is_some_and(|d| d.contains("8:00–20:00")), "{why:?}");
        // The state the owner set wins over the address's.
        facts.state = Some("CA".into());
        assert!(text_hold(&s, &task, Some(&facts), at("2026-11-11T04:15:00Z")).is_none());
    }
}
