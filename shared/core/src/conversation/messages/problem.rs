//! Why a template is refused, once: [`check`](super::check) finds the problem, the API says it
//! as its `invalid_template` message ([`Display`](std::fmt::Display), the words a programmer
//! reads), and the Messages page in the owner's words ([`TemplateProblem::owner_words`], from
//! `words/template_words.toml`), neither naming a variable nor quoting the template language.

use std::fmt;

use crate::kernel::error::InvalidInput;

/// Which part of a template: its subject or its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Subject,
    Body,
}

impl Part {
    /// As the API says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Subject => "subject",
            Part::Body => "body",
        }
    }

    /// As the owner says it: the body is "the message".
    fn owner_word(self) -> &'static str {
        match self {
            Part::Subject => "subject",
            Part::Body => "message",
        }
    }
}

/// What is wrong with a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateProblem {
    TooLong {
        part: Part,
        max: usize,
    },
    SubjectLines,
    BodyEmpty,
    /// It does not parse (`detail` is the template engine's, `line` where).
    Unreadable {
        part: Part,
        detail: String,
        line: Option<usize>,
    },
    UnknownVariable {
        part: Part,
        name: String,
        known: Vec<&'static str>,
    },
    /// It parses but fails to render for a member (the sample, or one known by nothing).
    DoesNotRender {
        part: Part,
        detail: String,
        line: Option<usize>,
    },
    RendersTooLong {
        part: Part,
        max: usize,
    },
    RendersEmpty,
    NeedsSubject,
    MarksLeft {
        mark: &'static str,
    },
    /// Written in the owner's words: a chip there is not.
    UnknownChip {
        chip: String,
    },
    /// Written in the owner's words: a `[` without its `]`, or the other way round.
    UnclosedChip {
        line: usize,
    },
}

impl fmt::Display for TemplateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |line: &Option<usize>| line.map(|l| format!(" (line {l})")).unwrap_or_default();
        match self {
            Self::TooLong { part, max } => write!(f, "the {} is longer than {max} characters", part.as_str()),
            Self::SubjectLines => f.write_str("the subject is one line"),
            Self::BodyEmpty => f.write_str("the body is empty"),
            Self::Unreadable { part, detail, line } | Self::DoesNotRender { part, detail, line } => {
                write!(f, "the {} does not render: {detail}{}", part.as_str(), at(line))
            }
            Self::UnknownVariable { part, name, known } => write!(
                f,
                "the {} uses the unknown variable {name}; the variables are {}",
                part.as_str(),
                known.join(", ")
            ),
            Self::RendersTooLong { part, max } => write!(f, "the {} renders longer than {max} characters", part.as_str()),
            Self::RendersEmpty => f.write_str("the body renders empty"),
            Self::NeedsSubject => f.write_str("a first message needs a subject"),
            Self::MarksLeft { mark } => write!(
                f,
                "the rendered mail still holds {mark:?}; write a variable as {{{{ member.first_name }}}}"
            ),
            Self::UnknownChip { chip } => write!(f, "[{chip}] is not a chip"),
            Self::UnclosedChip { line } => write!(f, "a square bracket is not closed (line {line})"),
        }
    }
}

impl From<TemplateProblem> for InvalidInput {
    fn from(problem: TemplateProblem) -> Self {
        InvalidInput::new("invalid_template", problem.to_string())
    }
}

impl TemplateProblem {
    /// Why it is refused, as the Messages page tells the owner (`[problems]` of
    /// `words/template_words.toml`).
    pub fn owner_words(&self) -> String {
        let (key, part, max, line, chip) = match self {
            Self::TooLong { part, max } => ("too_long", Some(*part), Some(*max), None, None),
            Self::SubjectLines => ("subject_lines", None, None, None, None),
            Self::BodyEmpty => ("body_empty", None, None, None, None),
            Self::Unreadable { part, line, .. } => ("unreadable", Some(*part), None, *line, None),
            Self::UnknownVariable { part, .. } => ("unknown_variable", Some(*part), None, None, None),
            Self::DoesNotRender { part, line, .. } => ("does_not_render", Some(*part), None, *line, None),
            Self::RendersTooLong { part, max } => ("renders_too_long", Some(*part), Some(*max), None, None),
            Self::RendersEmpty => ("renders_empty", None, None, None, None),
            Self::NeedsSubject => ("needs_subject", None, None, None, None),
            Self::MarksLeft { .. } => ("marks_left", None, None, None, None),
            Self::UnknownChip { chip } => ("unknown_chip", None, None, None, Some(chip.as_str())),
            Self::UnclosedChip { line } => ("unclosed_chip", None, None, Some(*line), None),
        };
        let sentence = super::words::problem_sentence(key);
        sentence
            .replace("{part}", part.map_or("message", Part::owner_word))
            .replace("{max}", &max.map(|m| m.to_string()).unwrap_or_default())
            .replace("{at_line}", &line.map(|l| format!(" around line {l}")).unwrap_or_default())
            .replace("{chip}", chip.unwrap_or_default())
    }
}
