//! How far a task has come towards its goal, judged without a model.
//!
//! The evidence is read in order of trust: a completing signal first, then the milestones of a
//! progressive goal ("three check-ins"), and only then the member's last words, read through
//! [`classify`] and skeptically — words are a verbal commitment to verify, never the event.
//! Whatever the judgment, it names one of the outcome codes the request offers.

use openloop_core::ports::{CompletionRequest, EvidenceType, GoalProgress, RecommendedAction};
use openloop_core::task::Role;
use openloop_core::task::outcome::Milestone;
use openloop_core::task::task_type::{GoalSignal, TaskTypeDef};

use super::outcomes::{definition, negative_code, neutral_code, offered, verbal_commitment_code};
use super::reply::{ReplyKind, classify};

/// Signal names in the evidence: `{"signals": ["checkin", {"signal": "checkin", "at": …}]}`.
fn evidence_signals(evidence: &serde_json::Value) -> Vec<(String, Option<openloop_core::Timestamp>)> {
    let Some(list) = evidence.get("signals").and_then(|s| s.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|s| match s {
            serde_json::Value::String(name) => Some((name.clone(), None)),
            serde_json::Value::Object(o) => {
                let name = o.get("signal").or_else(|| o.get("type"))?.as_str()?.to_owned();
                let at = o.get("at").and_then(|a| a.as_str()).and_then(|a| a.parse().ok());
                Some((name, at))
            }
            _ => None,
        })
        .collect()
}

/// The outcome a completing signal closes with, as the registry says, if it is offered.
fn signal_code(codes: &[String], signal: &GoalSignal) -> Option<String> {
    signal.outcome.and_then(|code| offered(codes, code).cloned())
}

fn progress(
    pct: u8,
    outcome: Option<String>,
    confidence: u8,
    evidence_type: EvidenceType,
    evidence: impl Into<String>,
    action: RecommendedAction,
) -> GoalProgress {
    GoalProgress {
        progress_pct: pct,
        current_outcome: outcome.unwrap_or_default(),
        confidence,
        evidence_type,
        evidence: evidence.into(),
        recommended_action: action,
        milestones: Vec::new(),
        risks: Vec::new(),
    }
}

/// Judge progress towards the goal: concrete signals first, then milestones
/// for progressive goals, then the member's last words, skeptically.
pub fn evaluate_completion(r: &CompletionRequest) -> GoalProgress {
    let def = definition(&r.task_type);
    let codes = &r.outcome_codes;
    let signals = evidence_signals(&r.evidence);
    let seen = |name: &str| signals.iter().filter(|(s, _)| s == name).count();

    // A progressive goal: "checkin_count_3" completes after three check-ins.
    if let Some(goal) = def.goal.signals.iter().find(|s| s.completes_goal && s.signal.contains("_count_")) {
        let (base, target) = goal.signal.rsplit_once("_count_").unwrap_or((goal.signal, "1"));
        let target: usize = target.parse().unwrap_or(1).max(1);
        let mut hits: Vec<Option<openloop_core::Timestamp>> = signals.iter().filter(|(s, _)| s == base).map(|(_, at)| *at).collect();
        let done = hits.len() >= target || seen(goal.signal) > 0;
        hits.resize(hits.len().max(target), None);
        let count = if done {
            target
        } else {
            signals.iter().filter(|(s, _)| s == base).count()
        };
        let milestones = (0..target)
            .map(|i| Milestone {
                name: format!("{} {base}", ordinal(i + 1)),
                hit: i < count,
                hit_at: if i < count { hits[i] } else { None },
            })
            .collect();
        let pct = u8::try_from(count * 100 / target).unwrap_or(100).min(100);
        let mut p = if done {
            progress(
                100,
                signal_code(codes, goal),
                90,
                EvidenceType::ConcreteSignal,
                format!("{target} of {target} {base} signals seen"),
                RecommendedAction::Complete,
            )
        } else if count > 0 {
            progress(
                pct,
                neutral_code(codes, &r.task_type),
                80,
                EvidenceType::PartialSignal,
                format!("{count} of {target} {base} signals seen"),
                RecommendedAction::Continue,
            )
        } else {
            from_words(r, def)
        };
        p.milestones = milestones;
        return named(p, codes);
    }

    if let Some(s) = def.goal.signals.iter().find(|s| s.completes_goal && seen(s.signal) > 0) {
        return progress(
            100,
            signal_code(codes, s),
            90,
            EvidenceType::ConcreteSignal,
            format!("the {} signal was seen", s.signal),
            RecommendedAction::Complete,
        );
    }
    let mut p = from_words(r, def);
    if let Some(s) = def.goal.signals.iter().find(|s| !s.completes_goal && seen(s.signal) > 0)
        && p.evidence_type == EvidenceType::None
    {
        p = progress(
            s.weight.min(99),
            neutral_code(codes, &r.task_type),
            60,
            EvidenceType::PartialSignal,
            format!("the {} signal was seen, which is progress but not the goal", s.signal),
            RecommendedAction::Continue,
        );
    }
    named(p, codes)
}

/// Every progress names one of the offered codes, even when nothing fits well: the least
/// optimistic neutral one (the caller escalates or continues, it does not close on it).
fn named(mut p: GoalProgress, codes: &[String]) -> GoalProgress {
    if !codes.contains(&p.current_outcome) {
        p.current_outcome = ["unresponsive", "acknowledged", "engaged_conversation"]
            .iter()
            .find_map(|c| offered(codes, c).cloned())
            .or_else(|| codes.first().cloned())
            .unwrap_or_default();
    }
    p
}

fn ordinal(n: usize) -> &'static str {
    match n {
        1 => "first",
        2 => "second",
        3 => "third",
        4 => "fourth",
        5 => "fifth",
        _ => "next",
    }
}

/// What the member's last reply says about the goal, read skeptically.
fn from_words(r: &CompletionRequest, def: &TaskTypeDef) -> GoalProgress {
    let codes = &r.outcome_codes;
    let Some(last) = r.conversation.iter().rev().find(|m| m.role == Role::Member) else {
        return progress(
            0,
            offered(codes, "unresponsive").cloned(),
            70,
            EvidenceType::None,
            "no reply and no signal yet",
            RecommendedAction::Continue,
        );
    };
    match classify(&last.content, def.key) {
        ReplyKind::Commitment | ReplyKind::AlreadyDone => match verbal_commitment_code(codes, &r.task_type) {
            Some(code) => GoalProgress {
                risks: vec!["words are not the event: the signal may never arrive".into()],
                ..progress(
                    60,
                    Some(code),
                    65,
                    EvidenceType::VerbalCommitment,
                    format!("the member wrote: {:?}", excerpt(&last.content)),
                    RecommendedAction::WaitAndVerify,
                )
            },
            None => progress(
                30,
                neutral_code(codes, &r.task_type),
                55,
                EvidenceType::Inferred,
                format!("the member wrote: {:?}", excerpt(&last.content)),
                RecommendedAction::Continue,
            ),
        },
        ReplyKind::Decline => progress(
            0,
            negative_code(codes, false),
            70,
            EvidenceType::Inferred,
            format!("the member declined: {:?}", excerpt(&last.content)),
            RecommendedAction::CloseAsNeutral,
        ),
        ReplyKind::Vague | ReplyKind::Interest | ReplyKind::Deferral(_) => progress(
            20,
            neutral_code(codes, &r.task_type),
            50,
            EvidenceType::Inferred,
            format!("the member replied without committing: {:?}", excerpt(&last.content)),
            RecommendedAction::Continue,
        ),
        other => GoalProgress {
            risks: vec![format!("the last reply needs the owner: {other:?}")],
            ..progress(
                0,
                neutral_code(codes, &r.task_type),
                30,
                EvidenceType::None,
                format!("the member wrote: {:?}", excerpt(&last.content)),
                RecommendedAction::Escalate,
            )
        },
    }
}

fn excerpt(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::outcomes::codes;
    use openloop_core::task::ConversationMessage;
    use openloop_core::task::task_type::REGISTRY;

    fn completion(task_type: &str, member_said: Option<&str>, evidence: serde_json::Value) -> CompletionRequest {
        CompletionRequest {
            task_type: task_type.into(),
            goal: String::new(),
            judgment_criteria: None,
            outcome_codes: codes(task_type),
            system_prompt: String::new(),
            conversation: member_said
                .map(|text| ConversationMessage {
                    id: ulid::Ulid::nil(),
                    at: openloop_core::Timestamp::UNIX_EPOCH,
                    role: Role::Member,
                    content: text.into(),
                    original: None,
                })
                .into_iter()
                .collect(),
            evidence,
        }
    }

    #[test]
    fn a_completing_signal_is_concrete_and_completes() {
        let p = evaluate_completion(&completion("churn_risk", None, serde_json::json!({"signals": ["checkin"]})));
        assert_eq!(p.evidence_type, EvidenceType::ConcreteSignal);
        assert_eq!(p.recommended_action, RecommendedAction::Complete);
        assert_eq!((p.progress_pct, p.current_outcome.as_str()), (100, "retained"));
        assert!(p.confidence >= 80);
    }

    #[test]
    fn onboarding_progress_counts_check_ins_as_milestones() {
        let two = serde_json::json!({"signals": [
            {"signal": "checkin", "at": "2026-01-02T10:00:00Z"},
            {"signal": "checkin", "at": "2026-01-05T10:00:00Z"},
        ]});
        let p = evaluate_completion(&completion("onboarding", None, two));
        assert_eq!((p.progress_pct, p.evidence_type), (66, EvidenceType::PartialSignal));
        assert_eq!(p.recommended_action, RecommendedAction::Continue);
        let hits: Vec<bool> = p.milestones.iter().map(|m| m.hit).collect();
        assert_eq!(hits, [true, true, false]);
        assert!(p.milestones[0].hit_at.is_some());
        let three = serde_json::json!({"signals": ["checkin", "checkin", "checkin"]});
        let done = evaluate_completion(&completion("onboarding", None, three));
        assert_eq!((done.progress_pct, done.current_outcome.as_str()), (100, "habit_formed"));
        assert_eq!(done.recommended_action, RecommendedAction::Complete);
    }

    #[test]
    fn words_alone_are_a_verbal_commitment_to_verify_and_vague_words_are_not_progress_to_close_on() {
        let said = evaluate_completion(&completion("churn_risk", Some("I'll be in Monday"), serde_json::json!({})));
        assert_eq!(said.evidence_type, EvidenceType::VerbalCommitment);
        assert_eq!(said.recommended_action, RecommendedAction::WaitAndVerify);
        assert!((60..=75).contains(&said.confidence));
        assert_eq!(said.current_outcome, "verbal_commitment");
        let vague = evaluate_completion(&completion("churn_risk", Some("maybe"), serde_json::json!({})));
        assert_eq!(vague.recommended_action, RecommendedAction::Continue);
        assert_eq!(vague.evidence_type, EvidenceType::Inferred);
        let silent = evaluate_completion(&completion("churn_risk", None, serde_json::json!({})));
        assert_eq!(
            (silent.evidence_type, silent.current_outcome.as_str()),
            (EvidenceType::None, "unresponsive")
        );
    }

    #[test]
    fn goal_progress_always_names_an_offered_outcome() {
        for def in REGISTRY {
            for said in [None, Some("stop"), Some("see you monday"), Some("what?")] {
                let p = evaluate_completion(&completion(def.key, said, serde_json::json!({})));
                assert!(codes(def.key).contains(&p.current_outcome), "{}: {p:?}", def.key);
            }
        }
    }
}
