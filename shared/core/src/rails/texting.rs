//! Which channel a touch goes by, and when a text may go (CONTRACT.md "Text messages"): a
//! text needs the owner's texts turned on, the member's phone and their consent; it goes when
//! the member has no e-mail address, when the touch answers a conversation that was last
//! texted, or when the task type's cadence lets this touch be a text (`rules/texts.toml`).
//! Texts keep quiet hours: 8:00–21:00 in the member's time zone (the gym's, which is where
//! its members live); a text due outside them waits for 8:00.

use jiff::civil::Time;
use jiff::{Timestamp, ToSpan};

use crate::kernel::ids::Email;
use crate::members::consent::SmsConsent;
use crate::members::member::MemberFacts;
use crate::owner::account::Settings;
use crate::task::Task;

/// The first local hour a text may go.
pub const TEXTS_FROM_HOUR: i8 = 8;
/// The local hour texts stop.
pub const TEXTS_UNTIL_HOUR: i8 = 21;

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

/// When a text due at `now` may go: `None` inside 8:00–21:00 local, else the next 8:00.
pub fn quiet_until(settings: &Settings, now: Timestamp) -> Option<Timestamp> {
    let tz = settings.time_zone();
    let local = now.to_zoned(tz.clone());
    let hour = local.hour();
    if (TEXTS_FROM_HOUR..TEXTS_UNTIL_HOUR).contains(&hour) {
        return None;
    }
    let day = if hour >= TEXTS_UNTIL_HOUR {
        local.date().checked_add(1.day()).ok()?
    } else {
        local.date()
    };
    day.to_datetime(Time::constant(TEXTS_FROM_HOUR, 0, 0, 0))
        .to_zoned(tz)
        .ok()
        .map(|z| z.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings::defaults("America/New_York".into())
    }

    #[test]
    fn a_text_due_at_half_past_nine_at_night_waits_for_eight_in_the_morning() {
        let s = settings();
        let at = |t: &str| -> Timestamp { t.parse().expect("time") };
        // 21:30 in New York (EST, UTC-5) is 02:30 UTC the next day.
        assert_eq!(quiet_until(&s, at("2026-11-10T02:30:00Z")), Some(at("2026-11-10T13:00:00Z")));
        // 06:00 waits for 08:00 the same day.
        assert_eq!(quiet_until(&s, at("2026-11-10T11:00:00Z")), Some(at("2026-11-10T13:00:00Z")));
        // 08:00 and 20:59 may text.
        assert_eq!(quiet_until(&s, at("2026-11-10T13:00:00Z")), None);
        assert_eq!(quiet_until(&s, at("2026-11-11T01:59:00Z")), None);
        assert!(quiet_until(&s, at("2026-11-11T02:00:00Z")).is_some());
    }
}
