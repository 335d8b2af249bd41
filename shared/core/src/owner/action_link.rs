//! Action links: what an owner mail offers for each item that waits for a decision — a review
//! item to send as drafted, skip or put off a day; an escalation the owner took care of; a
//! to-do done or put off; a failing payment nothing works on, checked or put off; a suggestion
//! (autopilot for a type the owner always approves as drafted) taken or left.
//! `{public_url}/a/{token}` names one item and one action; `GET` shows
//! the decision and a button, only `POST` acts (a mail scanner that opens links never does).
//! The token is signed (`conversation::token`) and lives until the item is decided or
//! [`LINK_LIFETIME`] has passed; afterwards the page says what happened.

use jiff::{SignedDuration, Timestamp};

use crate::kernel::ids::{AccountId, MemberId, TaskId};

/// How long a link works when its item stays undecided.
pub const LINK_LIFETIME: SignedDuration = SignedDuration::from_hours(24 * 14);

/// The item a link decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkItem {
    /// A task waiting for review or escalated to the owner.
    Task(TaskId),
    /// A to-do on the owner's list.
    Todo(ulid::Ulid),
    /// A member's failing payment that no task works on (the brief's "Check X's payment").
    Payment(MemberId),
    /// A pending suggestion (the brief's "A suggestion").
    Suggestion(ulid::Ulid),
}

/// What a link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    /// Send the review item's message as drafted.
    Approve,
    /// Skip the review item (nothing is sent), or leave an escalation closed.
    Skip,
    /// Put an item off a day: it comes back tomorrow.
    Snooze,
    /// The owner took care of it: an escalation or a to-do is done.
    Done,
    /// Take a suggestion: what it proposes is applied (and can be undone).
    Accept,
}

impl LinkAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Skip => "skip",
            Self::Snooze => "snooze",
            Self::Done => "done",
            Self::Accept => "accept",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Approve, Self::Skip, Self::Snooze, Self::Done, Self::Accept]
            .into_iter()
            .find(|a| a.as_str() == s)
    }

    /// The words of the link in the mail and of the page's button.
    pub fn label(self) -> &'static str {
        match self {
            Self::Approve => "Send it as drafted",
            Self::Skip => "Skip it",
            Self::Snooze => "Remind me tomorrow",
            Self::Done => "I took care of it",
            Self::Accept => "Yes, do that",
        }
    }
}

/// One signed decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionLink {
    pub account: AccountId,
    pub item: LinkItem,
    pub action: LinkAction,
    /// After this the link only says what became of its item.
    pub expires: Timestamp,
}

impl ActionLink {
    /// What is signed: `{account}:{t|d|p|s}:{item}:{action}:{expires, unix seconds}` (a
    /// member's id may itself hold `:`; the other parts never do).
    pub fn payload(&self) -> String {
        let (kind, id) = match &self.item {
            LinkItem::Task(id) => ('t', id.to_string()),
            LinkItem::Todo(id) => ('d', id.to_string()),
            LinkItem::Payment(member) => ('p', member.to_string()),
            LinkItem::Suggestion(id) => ('s', id.to_string()),
        };
        format!("{}:{kind}:{id}:{}:{}", self.account, self.action.as_str(), self.expires.as_second())
    }

    /// The link a payload names, if it is one.
    pub fn from_payload(payload: &str) -> Option<Self> {
        let (account, rest) = payload.split_once(':')?;
        let (kind, rest) = rest.split_once(':')?;
        let (rest, expires) = rest.rsplit_once(':')?;
        let (id, action) = rest.rsplit_once(':')?;
        let item = match kind {
            "t" => LinkItem::Task(id.parse().ok()?),
            "d" => LinkItem::Todo(id.parse().ok()?),
            "p" => LinkItem::Payment(MemberId::parse(id).ok()?),
            "s" => LinkItem::Suggestion(id.parse().ok()?),
            _ => return None,
        };
        Some(Self {
            account: account.parse().ok()?,
            item,
            action: LinkAction::parse(action)?,
            expires: Timestamp::from_second(expires.parse().ok()?).ok()?,
        })
    }
}

/// The actions a mail offers for a task in `status` (review: send as drafted, skip or put off a
/// day; an escalation: done, skip, put off), none for any other.
pub fn task_actions(status: crate::task::TaskStatus) -> &'static [LinkAction] {
    use crate::task::TaskStatus;
    match status {
        TaskStatus::PendingReview => &[LinkAction::Approve, LinkAction::Skip, LinkAction::Snooze],
        TaskStatus::Escalated => &[LinkAction::Done, LinkAction::Skip, LinkAction::Snooze],
        _ => &[],
    }
}

/// What makes the links' lines of a mail: the item and the actions offered (the engine signs
/// them); the mail's words stay pure.
pub type Links<'a> = &'a dyn Fn(LinkItem, &[LinkAction]) -> String;

/// The actions a mail offers for an open to-do.
pub const TODO_ACTIONS: [LinkAction; 2] = [LinkAction::Done, LinkAction::Snooze];

/// The actions a mail offers for a failing payment nothing works on: the owner checked it, or
/// it comes back tomorrow.
pub const PAYMENT_ACTIONS: [LinkAction; 2] = [LinkAction::Done, LinkAction::Snooze];

/// The actions a mail offers for a pending suggestion: take it, or leave it (nothing changes).
pub const SUGGESTION_ACTIONS: [LinkAction; 2] = [LinkAction::Accept, LinkAction::Skip];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_reads_back_as_the_link_it_was_made_from_and_nothing_else_does() {
        let now: Timestamp = "2026-12-02T10:00:00Z".parse().expect("ts");
        let link = ActionLink {
            account: AccountId::generate(now),
            item: LinkItem::Task(TaskId::generate(now)),
            action: LinkAction::Approve,
            expires: now + LINK_LIFETIME,
        };
        assert_eq!(ActionLink::from_payload(&link.payload()), Some(link.clone()));
        let todo = ActionLink {
            item: LinkItem::Todo(ulid::Ulid::new()),
            action: LinkAction::Snooze,
            ..link.clone()
        };
        assert_eq!(ActionLink::from_payload(&todo.payload()), Some(todo));
        // A member id with colons of its own reads back whole.
        let payment = ActionLink {
            item: LinkItem::Payment(MemberId::parse("usr:12:ab").expect("id")),
            action: LinkAction::Done,
            ..link.clone()
        };
        assert_eq!(ActionLink::from_payload(&payment.payload()), Some(payment));
        for bad in [
            "",
            "x",
            &format!("{}:extra", link.payload()),
            &link.payload().replace(":approve:", ":send:"),
            &link.payload().replace(":t:", ":x:"),
            &format!("{}:p::done:1", link.account),
        ] {
            assert_eq!(ActionLink::from_payload(bad), None, "{bad}");
        }
    }
}
