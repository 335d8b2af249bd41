//! A template in the owner's words: each variable a chip in square brackets (`[first name]`
//! for `{{ member.first_name }}`), each part that changes with the member `[if …] … [end if]`
//! with its condition in words — the words of `words/template_words.toml`. [`to_words`] and
//! [`from_words`] turn one into the other exactly, line for line, so what the owner saves
//! from the words is checked, kept and rendered as any template is; a template that uses more
//! of the language than these words say (a filter, a loop, a condition not listed) has no
//! words form and is edited in the template language.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::VARIABLES;
use super::problem::TemplateProblem;

/// `words/template_words.toml`, compiled in.
pub const TEMPLATE_WORDS: &str = include_str!("../../../../../words/template_words.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    parts: Parts,
    conditions: BTreeMap<String, String>,
    chips: BTreeMap<String, ChipWords>,
    problems: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Parts {
    #[serde(rename = "if")]
    if_: String,
    elif: String,
    #[serde(rename = "else")]
    else_: String,
    endif: String,
    known: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChipWords {
    label: String,
    holds: String,
}

/// One variable as the owner writes it: `[label]`, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chip {
    /// The variable (`member.first_name`).
    pub variable: &'static str,
    /// How the owner writes it, without its brackets (`first name`).
    pub label: String,
    pub holds: String,
}

fn parse(text: &str) -> Result<File, String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
    for (variable, _) in VARIABLES {
        if !file.chips.contains_key(*variable) {
            return Err(format!("no chip for {variable}"));
        }
    }
    let mut labels = std::collections::BTreeSet::new();
    for (variable, chip) in &file.chips {
        if !VARIABLES.iter().any(|(v, _)| v == variable) {
            return Err(format!("{variable} is not a variable"));
        }
        let label = normal(&chip.label);
        if label.is_empty() || label.contains(['[', ']']) || !labels.insert(label.clone()) {
            return Err(format!("{variable}'s label {:?} is empty, bracketed or not unique", chip.label));
        }
        if [&file.parts.else_, &file.parts.endif].iter().any(|p| normal(p) == label)
            || [&file.parts.if_, &file.parts.elif]
                .iter()
                .any(|p| label.starts_with(&format!("{} ", normal(p))))
        {
            return Err(format!("{variable}'s label {:?} reads as a part", chip.label));
        }
    }
    let mut said = std::collections::BTreeSet::new();
    for words in file.conditions.values() {
        if words.contains(['[', ']']) || !said.insert(normal(words)) {
            return Err(format!("the condition {words:?} is bracketed or not unique"));
        }
    }
    Ok(file)
}

fn file() -> Option<&'static File> {
    static FILE: OnceLock<Option<File>> = OnceLock::new();
    FILE.get_or_init(|| {
        parse(TEMPLATE_WORDS)
            .map_err(
                |e| tracing::error!(error = %e, "words/template_words.toml does not parse; templates are shown in their language only"),
            )
            .ok()
    })
    .as_ref()
}

/// Lower case, one space between words: how labels and conditions are matched.
fn normal(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// An expression as the file writes it: one space between its tokens.
fn spaced(expression: &str) -> String {
    expression.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every chip, in the order of [`VARIABLES`].
pub fn chips() -> Vec<Chip> {
    let Some(file) = file() else { return Vec::new() };
    VARIABLES
        .iter()
        .filter_map(|(variable, _)| {
            file.chips.get(*variable).map(|c| Chip {
                variable,
                label: c.label.clone(),
                holds: c.holds.clone(),
            })
        })
        .collect()
}

/// Why a template is refused, in the owner's words (`[problems]`), by its key.
pub(super) fn problem_sentence(key: &str) -> String {
    file()
        .and_then(|f| f.problems.get(key).cloned())
        .unwrap_or_else(|| "This template cannot be used as it is.".to_owned())
}

/// A condition in the owner's words.
fn condition_words(file: &File, expression: &str) -> Option<String> {
    let expression = spaced(expression);
    if let Some(words) = file.conditions.get(&expression) {
        return Some(words.clone());
    }
    file.chips
        .get(&expression)
        .map(|chip| format!("{} {}", chip.label, file.parts.known))
}

/// A template's source in the owner's words; `None` when it uses more of the language than
/// they say, or writes square brackets of its own.
pub fn to_words(source: &str) -> Option<String> {
    let file = file()?;
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    loop {
        let open = ["{{", "{%", "{#"].iter().filter_map(|m| rest.find(m)).min();
        let Some(open) = open else {
            if rest.contains(['[', ']']) {
                return None;
            }
            out.push_str(rest);
            return Some(out);
        };
        let text = &rest[..open];
        if text.contains(['[', ']']) {
            return None;
        }
        out.push_str(text);
        let tag = &rest[open..];
        let (close, inner) = match &tag[..2] {
            "{{" => ("}}", None),
            "{%" => ("%}", Some(())),
            _ => return None,
        };
        let end = tag.find(close)?;
        let body = tag[2..end].trim();
        if body.starts_with(['-', '+']) || body.ends_with(['-', '+']) {
            return None;
        }
        let words = match inner {
            None => file.chips.get(spaced(body).as_str())?.label.clone(),
            Some(()) => {
                let (keyword, expression) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                match (keyword, expression.trim()) {
                    ("if", e) if !e.is_empty() => format!("{} {}", file.parts.if_, condition_words(file, e)?),
                    ("elif", e) if !e.is_empty() => format!("{} {}", file.parts.elif, condition_words(file, e)?),
                    ("else", "") => file.parts.else_.clone(),
                    ("endif", "") => file.parts.endif.clone(),
                    _ => return None,
                }
            }
        };
        out.push('[');
        out.push_str(&words);
        out.push(']');
        rest = &tag[end + 2..];
    }
}

/// A condition the owner wrote, back in the template language.
fn condition_source(file: &File, words: &str, chip: &str) -> Result<String, TemplateProblem> {
    let unknown = || TemplateProblem::UnknownChip {
        chip: chip.trim().to_owned(),
    };
    let words = normal(words);
    if let Some((expression, _)) = file.conditions.iter().find(|(_, w)| normal(w) == words) {
        return Ok(expression.clone());
    }
    let label = words.strip_suffix(&normal(&file.parts.known)).map(str::trim).ok_or_else(unknown)?;
    file.chips
        .iter()
        .find(|(_, c)| normal(&c.label) == label)
        .map(|(variable, _)| variable.clone())
        .ok_or_else(unknown)
}

/// The owner's words back in the template language; a chip there is not, or a bracket left
/// open, is refused saying which.
pub fn from_words(words: &str) -> Result<String, TemplateProblem> {
    let Some(file) = file() else {
        return Ok(words.to_owned());
    };
    let line_at = |at: usize| words[..at].matches('\n').count() + 1;
    let mut out = String::with_capacity(words.len() + 32);
    let mut at = 0;
    while let Some(open) = words[at..].find(['[', ']']).map(|i| at + i) {
        if words[open..].starts_with(']') {
            return Err(TemplateProblem::UnclosedChip { line: line_at(open) });
        }
        out.push_str(&words[at..open]);
        let close = words[open + 1..]
            .find(['[', ']', '\n'])
            .map(|i| open + 1 + i)
            .filter(|&i| words[i..].starts_with(']'))
            .ok_or(TemplateProblem::UnclosedChip { line: line_at(open) })?;
        let chip = &words[open + 1..close];
        let said = normal(chip);
        let if_ = format!("{} ", normal(&file.parts.if_));
        let elif = format!("{} ", normal(&file.parts.elif));
        let source = if said == normal(&file.parts.else_) {
            "{% else %}".to_owned()
        } else if said == normal(&file.parts.endif) {
            "{% endif %}".to_owned()
        } else if let Some(condition) = said.strip_prefix(&elif) {
            format!("{{% elif {} %}}", condition_source(file, condition, chip)?)
        } else if let Some(condition) = said.strip_prefix(&if_) {
            format!("{{% if {} %}}", condition_source(file, condition, chip)?)
        } else {
            let variable = file
                .chips
                .iter()
                .find(|(_, c)| normal(&c.label) == said)
                .map(|(variable, _)| variable)
                .ok_or_else(|| TemplateProblem::UnknownChip {
                    chip: chip.trim().to_owned(),
                })?;
            format!("{{{{ {variable} }}}}")
        };
        out.push_str(&source);
        at = close + 1;
    }
    out.push_str(&words[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::messages::{keys, shipped_variants};

    #[test]
    fn the_words_file_parses_with_a_chip_for_every_variable() {
        let file = parse(TEMPLATE_WORDS).unwrap_or_else(|e| panic!("words/template_words.toml: {e}"));
        assert_eq!(chips().len(), VARIABLES.len());
        for key in [
            "too_long",
            "subject_lines",
            "body_empty",
            "unreadable",
            "unknown_variable",
            "does_not_render",
            "renders_too_long",
            "renders_empty",
            "needs_subject",
            "marks_left",
            "unknown_chip",
            "unclosed_chip",
        ] {
            let sentence = file.problems.get(key).unwrap_or_else(|| panic!("no words for {key}"));
            assert!(!sentence.contains("{{") && !sentence.contains("{%"), "{key}: {sentence}");
        }
    }

    /// Every shipped template reads in words, and its words read back as the very template.
    #[test]
    fn every_shipped_template_says_itself_in_words_and_back_exactly() {
        for (task_type, touch) in keys() {
            for text in shipped_variants(task_type, &touch) {
                for source in [&text.subject, &text.body] {
                    let words = to_words(source).unwrap_or_else(|| panic!("{task_type}/{touch}: no words for {source}"));
                    assert!(
                        !words.contains("{{") && !words.contains("{%") && !words.contains('_'),
                        "{task_type}/{touch}: {words}"
                    );
                    assert_eq!(from_words(&words).as_ref(), Ok(source), "{task_type}/{touch}: {words}");
                }
            }
        }
    }

    #[test]
    fn chips_and_parts_read_both_ways_and_what_is_not_a_chip_is_refused() {
        let source = "{{ greeting }},\n{% if member.usual_class %}See you at {{ member.usual_class }}.{% elif member.billed_in_pushpress %}x{% else %}y{% endif %}";
        let words = to_words(source).expect("words");
        assert_eq!(
            words,
            "[greeting],\n[if usual class is known]See you at [usual class].[or if they are billed in PushPress]x[otherwise]y[end if]"
        );
        assert_eq!(from_words(&words).as_deref(), Ok(source));
        assert_eq!(
            from_words("Hi [First  Name]!").as_deref(),
            Ok("Hi {{ member.first_name }}!"),
            "any case, any spacing"
        );
        assert_eq!(
            from_words("Hi [shoe size]"),
            Err(TemplateProblem::UnknownChip { chip: "shoe size".into() })
        );
        assert_eq!(from_words("Hi\n[first name"), Err(TemplateProblem::UnclosedChip { line: 2 }));
        assert_eq!(from_words("a ] b"), Err(TemplateProblem::UnclosedChip { line: 1 }));
        assert!(from_words("[if shoe size is known]x[end if]").is_err());
        for beyond in [
            "{{ member.first_name | upper }}",
            "{% for x in y %}{% endfor %}",
            "[sic] {{ greeting }}",
            "{# note #}",
        ] {
            assert_eq!(to_words(beyond), None, "{beyond}");
        }
    }
}
