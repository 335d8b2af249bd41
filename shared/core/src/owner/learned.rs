//! What accepted skill and rubric suggestions taught the agent about one task type of one
//! account: a skill's guidance joins the
//! type's skill layer of the composed prompt, a rubric's criteria join how the type's work is
//! judged. Each names the suggestion it came from, so undoing that suggestion removes exactly it.

use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::task::task_type;

/// At most this many learned skills and rubrics per account.
pub const MAX_LEARNED: usize = 20;
/// Characters of one learned text at most.
pub const MAX_LEARNED_CHARS: usize = 2_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LearnedKind {
    /// Guidance for handling the type's situations (the skill layer).
    Skill,
    /// Criteria a good result of the type meets (how it is judged).
    Rubric,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Learned {
    pub kind: LearnedKind,
    pub task_type: String,
    pub text: String,
    /// The suggestion whose acceptance stored it.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub suggestion_id: ulid::Ulid,
}

impl Learned {
    fn validate(&self) -> Result<(), InvalidInput> {
        let invalid = |message: String| Err(InvalidInput::new("invalid_learned", message));
        if task_type::lookup(&self.task_type).is_none() {
            return invalid(format!("{} is not a task type", self.task_type));
        }
        let chars = self.text.trim().chars().count();
        if chars == 0 || chars > MAX_LEARNED_CHARS {
            return invalid(format!("a learned text is 1-{MAX_LEARNED_CHARS} characters"));
        }
        Ok(())
    }
}

/// Every learned entry valid, and no more than [`MAX_LEARNED`].
pub fn validate(learned: &[Learned]) -> Result<(), InvalidInput> {
    if learned.len() > MAX_LEARNED {
        return Err(InvalidInput::new(
            "learned_limit",
            format!("an account keeps at most {MAX_LEARNED} learned skills and rubrics; undo one first"),
        ));
    }
    learned.iter().try_for_each(Learned::validate)
}

/// The texts of `kind` learned for `task_type`, oldest first.
pub fn of<'a>(learned: &'a [Learned], kind: LearnedKind, task_type: &str) -> impl Iterator<Item = &'a str> {
    learned
        .iter()
        .filter(move |l| l.kind == kind && l.task_type == task_type)
        .map(|l| l.text.trim())
}
