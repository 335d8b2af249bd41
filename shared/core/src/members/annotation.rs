//! Openloop's own notes on a member: the tags and notes automation actions (`tag_member`,
//! `remove_tag`, `update_member_notes`) used to send to PushPress, which has neither
//! (`../shared/PUSHPRESS.md` §3). They are stored with the account, shown on the member
//! (`GET /api/v1/members/{id}`) and given to the agent's prompt.

use std::collections::BTreeSet;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::kernel::ids::TaskId;

/// At most this many notes are kept per member; the oldest go first.
pub const MAX_MEMBER_NOTES: usize = 50;

/// One note, and the task that wrote it, if any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberNote {
    pub at: Timestamp,
    pub text: String,
    #[serde(default)]
    pub task_id: Option<TaskId>,
}

/// A member's tags and notes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberAnnotations {
    pub tags: BTreeSet<String>,
    /// Oldest first.
    pub notes: Vec<MemberNote>,
}

/// One change to them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Annotation {
    AddTag(String),
    RemoveTag(String),
    Note(MemberNote),
}

impl MemberAnnotations {
    /// Apply one change (the in-memory store's and any read-modify-write's rule).
    pub fn apply(&mut self, change: &Annotation) {
        match change {
            Annotation::AddTag(tag) => {
                self.tags.insert(tag.clone());
            }
            Annotation::RemoveTag(tag) => {
                self.tags.remove(tag);
            }
            Annotation::Note(note) => {
                self.notes.push(note.clone());
                if self.notes.len() > MAX_MEMBER_NOTES {
                    let extra = self.notes.len() - MAX_MEMBER_NOTES;
                    self.notes.drain(..extra);
                }
            }
        }
    }

    /// A few lines for the agent's prompt; empty when there is nothing to say.
    pub fn prompt_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.tags.is_empty() {
            lines.push(format!("Tags: {}", self.tags.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        for note in self.notes.iter().rev().take(5) {
            lines.push(format!("Note ({}): {}", note.at.strftime("%Y-%m-%d"), note.text));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_gets_the_tags_and_the_latest_notes() {
        let mut a = MemberAnnotations::default();
        assert!(a.prompt_lines().is_empty(), "nothing to say, no lines");
        a.apply(&Annotation::AddTag("vip".into()));
        for (i, text) in ["Prefers mornings", "Knee injury in May"].iter().enumerate() {
            a.apply(&Annotation::Note(MemberNote {
                at: crate::testing::at(&format!("2026-11-0{}T10:00:00Z", i + 1)),
                text: (*text).into(),
                task_id: None,
            }));
        }
        assert_eq!(
            a.prompt_lines(),
            vec![
                "Tags: vip".to_owned(),
                "Note (2026-11-02): Knee injury in May".to_owned(),
                "Note (2026-11-01): Prefers mornings".to_owned()
            ]
        );
    }
}
