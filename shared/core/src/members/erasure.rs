//! Forgetting a member: what an erasure looks for in the records that are not the member's
//! own. The member's item, annotations, loops and tasks are found by their id; a to-do, an
//! owner's notice or an outbound webhook event is found by the member or task it names, or
//! by the address, phone or whole name written in it ([`MemberTrace::names`]). The erasure
//! itself is `engine/business/erasure.rs`; what stays afterwards is a keyed hash of each
//! identity (`conversation::token::SigningKey::erasure_key`), never the identity.

use std::collections::BTreeSet;

use crate::kernel::ids::{MemberId, TaskId};
use crate::members::member::MemberFacts;

/// Shortest text that counts as naming the member: a name of one short word ("Al") would
/// find other members' records too.
const SHORTEST_WORD: usize = 5;

/// What names one member: their id, their tasks, and the words that are theirs alone (their
/// addresses, phones and whole name, in lower case).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberTrace {
    pub member: Option<MemberId>,
    pub tasks: BTreeSet<TaskId>,
    words: BTreeSet<String>,
}

impl MemberTrace {
    /// The trace of `member`, with what their facts say of them.
    pub fn of(member: &MemberId, facts: Option<&MemberFacts>) -> Self {
        let mut trace = Self {
            member: Some(member.clone()),
            ..Self::default()
        };
        if let Some(facts) = facts {
            if let Some(email) = &facts.email {
                trace.add_word(email.as_str());
            }
            if let Some(phone) = &facts.phone {
                trace.add_word(phone);
            }
            if let (Some(_), Some(_)) = (&facts.first_name, &facts.last_name)
                && let Some(name) = facts.display_name()
            {
                trace.add_word(&name);
            }
        }
        trace
    }

    /// Another word that is the member's alone (an address a task kept, a name as it was).
    pub fn add_word(&mut self, word: &str) {
        let word = word.trim().to_lowercase();
        if word.chars().count() >= SHORTEST_WORD {
            self.words.insert(word);
        }
    }

    /// The member's addresses, phones and whole names, as [`Self::names`] looks for them.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(String::as_str)
    }

    /// Whether a record about `member` and `task`, holding `text`, names the member.
    pub fn names(&self, member: Option<&MemberId>, task: Option<TaskId>, text: &str) -> bool {
        if member.is_some() && member == self.member.as_ref() {
            return true;
        }
        if task.is_some_and(|t| self.tasks.contains(&t)) {
            return true;
        }
        let text = text.to_lowercase();
        self.words.iter().any(|w| text.contains(w.as_str()))
            || self.member.as_ref().is_some_and(|m| contains_id(&text, &m.as_str().to_lowercase()))
    }
}

/// Whether `text` holds `id` as a token of its own (`m_1` is not in `m_10`).
fn contains_id(text: &str, id: &str) -> bool {
    let part_of_id = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '@' | '-');
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(part_of_id) && !after.is_some_and(part_of_id)
    })
}

/// The identities of a member an erasure keeps a keyed hash of: `(what, value)`, `what` being
/// `member`, `email` or `phone`, the value as the records compare it (an address in lower
/// case).
pub fn identities(member: &MemberId, facts: Option<&MemberFacts>) -> Vec<(&'static str, String)> {
    let mut out = vec![("member", member.as_str().to_owned())];
    if let Some(facts) = facts {
        if let Some(email) = &facts.email {
            out.push(("email", email.as_str().to_lowercase()));
        }
        if let Some(phone) = &facts.phone {
            out.push(("phone", phone.trim().to_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::Email;

    fn facts() -> MemberFacts {
        let mut facts = MemberFacts::new(MemberId::parse("m_1").expect("id"));
        facts.email = Some(Email::parse("Dana.Scully@example.com").expect("email"));
        facts.first_name = Some("Dana".into());
        facts.last_name = Some("Scully".into());
        facts.phone = Some("+15555550123".into());
        facts
    }

    #[test]
    fn a_trace_finds_the_member_by_id_task_address_phone_or_whole_name_and_no_one_else() {
        let member = MemberId::parse("m_1").expect("id");
        let other = MemberId::parse("m_10").expect("id");
        let task = TaskId::generate(jiff::Timestamp::from_second(1_800_000_000).expect("time"));
        let mut trace = MemberTrace::of(&member, Some(&facts()));
        trace.tasks.insert(task);
        assert!(trace.names(Some(&member), None, ""));
        assert!(trace.names(None, Some(task), ""));
        assert!(trace.names(None, None, "dana.scully@EXAMPLE.com will get no more mail"));
        assert!(trace.names(None, None, "Call +15555550123 today"));
        assert!(trace.names(None, None, "Call Dana Scully about her plan"));
        assert!(trace.names(None, None, r#"{"member_id":"m_1"}"#));
        assert!(!trace.names(Some(&other), None, r#"{"member_id":"m_10"}"#), "m_1 is not in m_10");
        assert!(
            !trace.names(None, None, "Call Dana about her plan"),
            "a first name alone is anyone's"
        );
    }

    #[test]
    fn the_identities_are_the_id_the_address_in_lower_case_and_the_phone() {
        let member = MemberId::parse("m_1").expect("id");
        assert_eq!(
            identities(&member, Some(&facts())),
            vec![
                ("member", "m_1".to_owned()),
                ("email", "dana.scully@example.com".to_owned()),
                ("phone", "+15555550123".to_owned())
            ]
        );
    }
}
