//! How the offline agent reads a member's reply, and what it does about it.
//!
//! [`classify`] reads the words into a [`ReplyKind`] with the phrase lists of
//! `words/reply_phrases.toml` (data an engineer edits, compiled in), matched at
//! word boundaries, in the order of what must not be missed: an opt-out first, then hostility,
//! then what only the owner settles (a membership change, hardship, another subject), then a
//! question, and only then the shapes the agent may meet itself. When two shapes conflict ("no
//! thanks, see you Monday") the reply is unclear. [`evaluate_reply`] turns the kind into an
//! action: no reply to an opt-out or a hostile message, no close on a vague one, a provisional
//! close on a commitment only where the type's goal closes on words, and the owner for the rest.
//!
//! The phrase lists and the rules change together; the tests hold them to three labelled sets,
//! `fixtures/churn_replies.tsv` and `fixtures/member_words.tsv` (whole bodies, quoted history
//! included, read as the engine reads them) and `tests/data/labelled_replies.tsv`. What means "stop" is data,
//! `words/opt_out.toml`, read in the core before any of this.

use std::sync::LazyLock;

use openloop_core::conversation::opt_out::normalize;
use openloop_core::conversation::reply::{ReplyAction, ReplyEvaluation};
use openloop_core::ports::ReplyRequest;
use openloop_core::task::task_type;

use super::outcomes::{definition, negative_code, neutral_code, offered, verbal_commitment_code};

/// What a reply is, as far as words can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyKind {
    OptOut,
    Hostile,
    /// Cancel, freeze, pause, downgrade, refund: the owner decides.
    MembershipChange,
    /// Injury, illness, bereavement, job loss: the owner answers, not a template.
    Hardship,
    /// Money talk on a task that is not about money.
    OtherSubject(String),
    Question(String),
    /// A specific plan: a verb of coming or doing, with a day or time.
    Commitment,
    /// "I already paid" / "I came in yesterday": a claim the signal must confirm.
    AlreadyDone,
    Decline,
    /// "I won't be renewing": the member has decided to leave; the conversation closes with
    /// one short kind note (thanks, the door is open), and no attempt to change their mind.
    NotRenewing,
    /// "Away for two weeks": look again after that many days.
    Deferral(u32),
    /// Warm but committing to nothing ("sounds good", "I'd like to come back").
    Interest,
    /// "ok", "thanks", "maybe", "been busy".
    Vague,
    /// Signals that contradict each other, or nothing recognisable.
    Unclear(String),
}

/// The phrase lists of `words/reply_phrases.toml`, compiled in.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Phrases {
    hostile: Vec<String>,
    membership_change: Vec<String>,
    hardship: Vec<String>,
    money: Vec<String>,
    question_openers: Vec<String>,
    hedges: Vec<String>,
    decline: Vec<String>,
    not_renewing: Vec<String>,
    commit_verbs: Vec<String>,
    days: Vec<String>,
    time_anchors: Vec<String>,
    already_done: Vec<String>,
    away: Vec<String>,
    away_for: Vec<String>,
    interest: Vec<String>,
    vague: Vec<String>,
    open_prefixes: Vec<String>,
}

static PHRASES: LazyLock<Phrases> = LazyLock::new(|| {
    toml::from_str(include_str!("../../../../words/reply_phrases.toml")).unwrap_or_else(|e| panic!("words/reply_phrases.toml: {e}"))
});

fn any<S: AsRef<str>>(text: &str, needles: &[S]) -> bool {
    needles.iter().any(|n| contains_phrase(text, n.as_ref()))
}

/// `needle` in `text` at word boundaries, the stems listed as `open_prefixes` matching as prefixes.
fn contains_phrase(text: &str, needle: &str) -> bool {
    openloop_core::conversation::opt_out::contains_phrase(text, needle, PHRASES.open_prefixes.iter().any(|p| p == needle.trim_end()))
}

/// The sentences of a reply that ask something.
fn question(text: &str, original: &str) -> Option<String> {
    let sentences = original
        .split_inclusive(['?', '.', '!', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let asked: Vec<&str> = sentences
        .filter(|s| {
            let n = normalize(s);
            n.ends_with('?') || PHRASES.question_openers.iter().any(|q| n.starts_with(q.as_str()))
        })
        .collect();
    if !asked.is_empty() {
        return Some(asked.join(" "));
    }
    text.contains('?').then(|| original.trim().to_owned())
}

fn is_vague(text: &str) -> bool {
    let stripped: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '\'')
        .collect();
    let stripped = stripped.split_whitespace().collect::<Vec<_>>().join(" ");
    if stripped.is_empty() {
        return true;
    }
    let words = stripped.split(' ').count();
    (words <= 6 && PHRASES.vague.iter().any(|v| contains_phrase(&stripped, v))) || any(text, &PHRASES.hedges)
}

/// "2 weeks", "ten days", "a couple of weeks": the first duration in the text, in days.
fn duration_days(text: &str) -> Option<u32> {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && *w != "of")
        .collect();
    for (i, w) in words.iter().enumerate() {
        let unit = match words.get(i + 1).copied() {
            Some("day" | "days") => 1,
            Some("week" | "weeks") => 7,
            Some("month" | "months") => 30,
            _ => continue,
        };
        let n = match *w {
            "a" | "one" | "1" => 1,
            "two" | "couple" | "2" => 2,
            "three" | "few" | "3" => 3,
            "four" | "4" => 4,
            "five" | "5" => 5,
            "six" | "6" => 6,
            "ten" | "10" => 10,
            other => match other.parse::<u32>() {
                Ok(n) => n,
                Err(_) => continue,
            },
        };
        return Some((n * unit).clamp(1, 90));
    }
    any(text, &["next week", "back next"]).then_some(7)
}

/// How long the member says they are away, if they say they are.
fn deferral(text: &str) -> Option<u32> {
    let duration = duration_days(text);
    if any(text, &PHRASES.away) {
        return Some(duration.unwrap_or(14));
    }
    if any(text, &PHRASES.away_for) { duration } else { None }
}

/// A day or a time: "tomorrow", "Monday", "6am", "7:30", "6 pm", or a class.
fn has_time_anchor(text: &str) -> bool {
    names_a_day(text) || any(text, &PHRASES.time_anchors)
}

/// A named day or a clock time: "Monday", "tomorrow", "6am", "7:30".
fn names_a_day(text: &str) -> bool {
    if any(text, &PHRASES.days) {
        return true;
    }
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '.' || c == '!')
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        let digits = w.trim_end_matches("am").trim_end_matches("pm");
        let clock = !digits.is_empty()
            && digits.chars().next().is_some_and(|c| c.is_ascii_digit())
            && digits.chars().all(|c| c.is_ascii_digit() || c == ':');
        (clock && (w.ends_with("am") || w.ends_with("pm") || w.contains(':')))
            || (matches!(*w, "am" | "pm") && i > 0 && words[i - 1].chars().all(|c| c.is_ascii_digit() || c == ':'))
    })
}

/// Whether the task is itself about money: then money talk is on its subject.
fn about_money(task_type: &str) -> bool {
    definition(task_type).subject() == task_type::PAYMENT_RECOVERY.subject()
}

/// The member's own lines of a reply: lines marked `>` are the gym's words kept around an
/// answer written between them (the reply reader keeps them so the answers keep their
/// questions); the gym's question is not the member's.
fn members_lines(reply: &str) -> String {
    if !reply.lines().any(|l| l.trim_start().starts_with('>')) {
        return reply.to_owned();
    }
    reply
        .lines()
        .filter(|l| !l.trim_start().starts_with('>'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Read a reply. `task_type` decides what counts as "another subject".
pub fn classify(reply: &str, task_type: &str) -> ReplyKind {
    let own = members_lines(reply);
    let reply = own.as_str();
    let text = normalize(reply);
    if text.is_empty() {
        return ReplyKind::Unclear("the reply is empty".into());
    }
    if openloop_core::conversation::opt_out::is_opt_out(reply) {
        return ReplyKind::OptOut;
    }
    if any(&text, &PHRASES.hostile) || shouting(reply) {
        return ReplyKind::Hostile;
    }
    if any(&text, &PHRASES.membership_change) {
        return ReplyKind::MembershipChange;
    }
    if any(&text, &PHRASES.hardship) {
        return ReplyKind::Hardship;
    }
    if !about_money(task_type) && any(&text, &PHRASES.money) {
        return ReplyKind::OtherSubject("billing or payment".into());
    }
    if let Some(q) = question(&text, reply) {
        return ReplyKind::Question(q);
    }
    if any(&text, &PHRASES.not_renewing) {
        return ReplyKind::NotRenewing;
    }
    let hedged = any(&text, &PHRASES.hedges);
    let declined = any(&text, &PHRASES.decline);
    let negated = any(&text, &["can't", "cant", "cannot", "won't", "wont", "not able", "unable"]);
    let done = any(&text, &PHRASES.already_done);
    let committed = any(&text, &PHRASES.commit_verbs) && has_time_anchor(&text);
    let deferred = deferral(&text);
    match (declined, done || committed) {
        (true, true) => return ReplyKind::Unclear("the reply both declines and commits".into()),
        (true, false) => return ReplyKind::Decline,
        _ => {}
    }
    if done && !hedged && !negated {
        return ReplyKind::AlreadyDone;
    }
    // "Back next week, Monday at 6" names its day: the plan, not the delay, is what counts;
    // so does "I've been travelling for two weeks, but I'll be back on Monday".
    let away = any(&text, &PHRASES.away);
    if committed && !hedged && !negated && (deferred.is_none() || (!away && names_a_day(&text)) || plan_after_context(&text)) {
        return ReplyKind::Commitment;
    }
    if let Some(days) = deferred {
        return ReplyKind::Deferral(days);
    }
    if !hedged && !committed && !done && !negated && any(&text, &PHRASES.interest) {
        return ReplyKind::Interest;
    }
    if is_vague(&text) || committed || done || negated {
        return ReplyKind::Vague;
    }
    ReplyKind::Unclear("the reply did not match anything the offline agent can judge".into())
}

/// The reply's last clause is a plan with a day, and the being away is before it: where they
/// have been ("I've been travelling the past two weeks", "been out of town for the wedding"),
/// then when they will come ("but I'll be back on Monday", ", I'll be back on Monday").
fn plan_after_context(text: &str) -> bool {
    let clauses: Vec<&str> = text
        .split(['.', '!', ';', '\n'])
        .flat_map(|s| s.split(" but "))
        .flat_map(|s| s.split(" however "))
        .flat_map(|s| s.split(", "))
        .map(|s| s.trim().trim_matches(','))
        .filter(|s| !s.is_empty())
        .collect();
    let Some((last, before)) = clauses.split_last() else {
        return false;
    };
    !before.is_empty()
        && any(last, &PHRASES.commit_verbs)
        && names_a_day(last)
        && !any(last, &PHRASES.away)
        && !any(last, &PHRASES.away_for)
        && !any(last, &PHRASES.hedges)
        && before.iter().all(|c| !any(c, &PHRASES.decline) && !any(c, &PHRASES.hedges))
}

/// Mostly capitals over a few words reads as shouting.
fn shouting(reply: &str) -> bool {
    let letters: Vec<char> = reply.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() >= 12 && letters.iter().filter(|c| c.is_uppercase()).count() * 10 >= letters.len() * 8
}

fn evaluation(action: ReplyAction, confidence: u8, reasoning: impl Into<String>) -> ReplyEvaluation {
    ReplyEvaluation {
        action,
        outcome: None,
        confidence,
        reasoning: reasoning.into(),
        reply: None,
        wait_days: None,
        suggest_suppression: false,
        provisional: false,
        unanswered_question: None,
        other_subject: None,
    }
}

/// Judge a reply (see the module docs).
pub fn evaluate_reply(r: &ReplyRequest) -> ReplyEvaluation {
    let kind = classify(&r.reply, &r.task_type);
    let mut evaluation = judge(r, kind);
    // Whatever else the reply is, a question in it goes to the owner with the escalation.
    if evaluation.action == ReplyAction::Escalate && evaluation.unanswered_question.is_none() && !evaluation.suggest_suppression {
        evaluation.unanswered_question = question(&normalize(&r.reply), &r.reply);
    }
    evaluation
}

/// The shipped parting note to a member who decided to leave (thanks, the door is open), in
/// the gym's greeting and sign-off; none without a message left or where it does not render
/// (the conversation then closes without it).
fn parting_note(r: &ReplyRequest) -> Option<String> {
    if r.messages_left == 0 {
        return None;
    }
    // The request's inputs are the reply touch's: the owner's reply template is not this.
    let shipped = openloop_core::conversation::messages::MessageInputs {
        owner_template: None,
        ..r.message.clone()
    };
    crate::write(
        definition(&r.task_type).key,
        openloop_core::conversation::messages::PARTING,
        &shipped,
        r.member_first_name.as_deref(),
        &r.profile,
        &r.business_name,
        None,
    )
    .ok()
    .map(|draft| draft.body)
}

/// A question the gym's own facts clearly answer (`faq.rs`): answered with them, as the owner
/// wrote them, in the type's guided message (greeting and sign-off around the facts); the
/// budget and the send gates still decide whether it leaves.
fn answer_from_facts(r: &ReplyRequest, question: &str) -> Option<ReplyEvaluation> {
    if r.messages_left == 0 {
        return None;
    }
    let facts = super::faq::answer(question, &r.facts)?;
    let shipped = openloop_core::conversation::messages::MessageInputs {
        owner_template: None,
        ..r.message.clone()
    };
    let body = crate::write(
        definition(&r.task_type).key,
        openloop_core::conversation::messages::GUIDED,
        &shipped,
        r.member_first_name.as_deref(),
        &r.profile,
        &r.business_name,
        Some(&super::faq::words(&facts)),
    )
    .ok()?
    .body;
    Some(ReplyEvaluation {
        reply: Some(body),
        ..evaluation(
            ReplyAction::Reply,
            80,
            format!(
                "The member asked {question:?}; the gym's own facts answer it ({}), so I answer with them as written.",
                facts.len()
            ),
        )
    })
}

fn judge(r: &ReplyRequest, kind: ReplyKind) -> ReplyEvaluation {
    let codes = &r.outcome_codes;
    match kind {
        ReplyKind::OptOut => ReplyEvaluation {
            outcome: offered(codes, "opted_out").cloned(),
            suggest_suppression: true,
            ..evaluation(
                ReplyAction::Escalate,
                95,
                "The member asked not to be contacted: no reply, suppress them and tell the owner.",
            )
        },
        ReplyKind::Hostile => ReplyEvaluation {
            outcome: offered(codes, "opted_out").cloned(),
            suggest_suppression: true,
            ..evaluation(
                ReplyAction::Escalate,
                85,
                "The reply is hostile: no reply from us; the owner decides, and suppression is suggested.",
            )
        },
        ReplyKind::MembershipChange => ReplyEvaluation {
            outcome: negative_code(codes, true),
            ..evaluation(
                ReplyAction::Escalate,
                80,
                "The member asks to cancel, pause or change their membership or for a refund; only the owner can decide that.",
            )
        },
        ReplyKind::Hardship => evaluation(
            ReplyAction::Escalate,
            80,
            "The member mentions an injury, illness or a hard time; the owner should answer personally.",
        ),
        ReplyKind::OtherSubject(subject) => ReplyEvaluation {
            other_subject: Some(subject.clone()),
            ..evaluation(
                ReplyAction::Escalate,
                75,
                format!("The reply is about {subject}, not this task's subject; the owner should look."),
            )
        },
        ReplyKind::Question(q) => match answer_from_facts(r, &q) {
            Some(answered) => answered,
            None => ReplyEvaluation {
                unanswered_question: Some(q.clone()),
                ..evaluation(
                    ReplyAction::Escalate,
                    85,
                    format!(
                        "The member asked something I cannot answer from what I know: {q:?}. The owner's answer lets the conversation resume."
                    ),
                )
            },
        },
        ReplyKind::Commitment | ReplyKind::AlreadyDone => {
            let done = kind == ReplyKind::AlreadyDone;
            match verbal_commitment_code(codes, &r.task_type) {
                Some(code) => ReplyEvaluation {
                    outcome: Some(code),
                    provisional: true,
                    ..evaluation(
                        ReplyAction::Close,
                        if done { 65 } else { 70 },
                        if done {
                            "The member says it is already done; closing provisionally until the signal confirms it."
                        } else {
                            "The member made a specific commitment (a day or time); closing provisionally until the signal confirms it."
                        },
                    )
                },
                None => ReplyEvaluation {
                    outcome: neutral_code(codes, &r.task_type),
                    wait_days: Some(3),
                    ..evaluation(
                        ReplyAction::Wait,
                        60,
                        "The member sounds committed, but this goal is settled by signals, not words; waiting for them.",
                    )
                },
            }
        }
        ReplyKind::Decline => match negative_code(codes, false) {
            Some(code) => ReplyEvaluation {
                outcome: Some(code),
                ..evaluation(
                    ReplyAction::Close,
                    70,
                    "The member said no, clearly; respecting it without trying to convince them.",
                )
            },
            None => evaluation(
                ReplyAction::Escalate,
                60,
                "The member said no, and this task type has no outcome for a refusal; the owner decides.",
            ),
        },
        ReplyKind::NotRenewing => match negative_code(codes, true) {
            Some(code) => ReplyEvaluation {
                outcome: Some(code),
                reply: parting_note(r),
                ..evaluation(
                    ReplyAction::Close,
                    75,
                    "The member has decided not to renew; thanking them and closing the conversation without trying to change their mind.",
                )
            },
            None => evaluation(
                ReplyAction::Escalate,
                60,
                "The member has decided not to renew, and this task type has no outcome for it; the owner decides.",
            ),
        },
        ReplyKind::Deferral(days) => ReplyEvaluation {
            outcome: neutral_code(codes, &r.task_type),
            wait_days: Some(days),
            ..evaluation(
                ReplyAction::Wait,
                65,
                format!("The member is away for now; looking again in {days} days."),
            )
        },
        ReplyKind::Vague => ReplyEvaluation {
            outcome: neutral_code(codes, &r.task_type),
            wait_days: Some(3),
            ..evaluation(
                ReplyAction::Wait,
                55,
                "The reply is polite but commits to nothing; not closing, waiting a few days.",
            )
        },
        ReplyKind::Interest => {
            if r.messages_left == 0 || r.turns_left == 0 {
                return ReplyEvaluation {
                    outcome: neutral_code(codes, &r.task_type),
                    wait_days: Some(3),
                    ..evaluation(
                        ReplyAction::Wait,
                        55,
                        "The member is interested but the budget has no message left; waiting.",
                    )
                };
            }
            // The type's answer template (the owner's if they wrote one): one concrete question.
            let written = crate::write(
                definition(&r.task_type).key,
                openloop_core::conversation::messages::REPLY,
                &r.message,
                r.member_first_name.as_deref(),
                &r.profile,
                &r.business_name,
                None,
            );
            let body = match written {
                Ok(draft) => draft.body,
                Err(e) => {
                    return evaluation(
                        ReplyAction::Escalate,
                        40,
                        format!("The member is interested, but the answer's template does not render ({e}); the owner answers."),
                    );
                }
            };
            ReplyEvaluation {
                outcome: neutral_code(codes, &r.task_type),
                reply: Some(body),
                ..evaluation(
                    ReplyAction::Reply,
                    60,
                    "The member is interested but named no day; asking one concrete question.",
                )
            }
        }
        ReplyKind::Unclear(why) => evaluation(
            ReplyAction::Escalate,
            30,
            format!("Unsure how to read the reply ({why}); the owner decides."),
        ),
    }
}

#[cfg(test)]
mod tests;
