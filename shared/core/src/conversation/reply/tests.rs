//! The reply decision, one branch at a time: what the rules decide before any AI, what each of
//! the agent's judgments leads to within the task's budgets, and the owner's guidance.

use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::task::{Role, TaskStatus};
use crate::testing::{at, sample_task};

/// An hour after the sample task was made; its time budget runs a week.
fn now() -> Timestamp {
    at("2026-11-02T15:00:00Z")
}

fn days(n: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * n)
}

fn message(role: Role, content: &str) -> ConversationMessage {
    ConversationMessage {
        id: crate::kernel::ids::new_ulid(now()),
        at: now(),
        role,
        content: content.into(),
        original: None,
    }
}

/// The agent's confident judgment to do `action`, with nothing else to say.
fn judged_as(action: ReplyAction) -> ReplyEvaluation {
    ReplyEvaluation {
        action,
        outcome: None,
        confidence: 90,
        reasoning: "the member answered".into(),
        reply: None,
        wait_days: None,
        suggest_suppression: false,
        provisional: false,
        unanswered_question: None,
        other_subject: None,
    }
}

fn answering(text: &str) -> ReplyEvaluation {
    ReplyEvaluation {
        reply: Some(text.into()),
        ..judged_as(ReplyAction::Reply)
    }
}

/// The reason a decision is logged with.
fn reason(decision: &ReplyDecision) -> Option<Reason> {
    match decision {
        ReplyDecision::Answer { why, .. } | ReplyDecision::Wait { why, .. } | ReplyDecision::Close { why } => Some(why.reason),
        ReplyDecision::Escalate { reason, .. } => Some(*reason),
        ReplyDecision::Threatened(threat) => Some(threat.reason()),
        ReplyDecision::Part { .. } => Some(Reason::PartingNoteDue),
        ReplyDecision::NothingToRead | ReplyDecision::HonourStop(_) => None,
    }
}

#[test]
fn before_any_ai_the_rules_read_the_latest_reply() {
    let task = sample_task(TaskStatus::Waiting);
    let mut no_turns = sample_task(TaskStatus::Waiting);
    no_turns.budget.turns_used = no_turns.budget.turns_max;
    let asked = [message(Role::Member, "Is Friday ok?"), message(Role::Agent, "Hi Sarah")];
    let cases: [(&str, &Task, Vec<ConversationMessage>, Option<ReplyDecision>); 5] = [
        (
            "no reply",
            &task,
            vec![message(Role::Agent, "Hi Sarah")],
            Some(ReplyDecision::NothingToRead),
        ),
        (
            "a stop",
            &task,
            vec![message(Role::Member, "Please remove me from your list")],
            Some(ReplyDecision::HonourStop(Stop::member_request())),
        ),
        (
            "a stop with no turn left is still a stop",
            &no_turns,
            vec![message(Role::Member, "stop")],
            Some(ReplyDecision::HonourStop(Stop::member_request())),
        ),
        (
            "no turn left",
            &no_turns,
            vec![message(Role::Member, "Is Friday ok?")],
            Some(ReplyDecision::Escalate {
                reason: Reason::TurnBudgetExhaustedOnReply,
                blocker: Blocker::default(),
            }),
        ),
        ("a reply to judge", &task, asked.to_vec(), None),
    ];
    for (case, task, conversation, expected) in cases {
        match (before_judging(task, &conversation), expected) {
            (Reading::Decided(decision), Some(expected)) => assert_eq!(decision, expected, "{case}"),
            (Reading::Judge(reply), None) => assert_eq!(reply.content, "Is Friday ok?", "{case}"),
            (other, _) => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn the_agent_suggesting_suppression_is_a_stop_whatever_it_would_do() {
    let task = sample_task(TaskStatus::Waiting);
    let evaluation = ReplyEvaluation {
        suggest_suppression: true,
        ..answering("Sorry to hear that")
    };
    assert_eq!(
        decide(&task, &evaluation, now()),
        ReplyDecision::HonourStop(Stop::agent_suggested(judged(&evaluation)))
    );
}

#[test]
fn an_answer_is_sent_only_within_the_budgets_and_when_the_agent_is_sure() {
    let fresh = sample_task(TaskStatus::Waiting);
    let mut spent = sample_task(TaskStatus::Waiting);
    spent.budget.messages_used = spent.budget.messages_max;
    let mut out_of_time = sample_task(TaskStatus::Waiting);
    out_of_time.budget.expires_at = now() - days(1);
    let unsure = ReplyEvaluation {
        confidence: REPLY_MIN_CONFIDENCE - 1,
        ..answering("Friday works")
    };
    let cases = [
        ("sure, with text", &fresh, answering("Friday works"), Reason::ReplyDrafted),
        (
            "no message left",
            &spent,
            answering("Friday works"),
            Reason::WantsToReplyButMessageBudgetExhausted,
        ),
        (
            "no time left",
            &out_of_time,
            answering("Friday works"),
            Reason::WantsToReplyButTimeBudgetExhausted,
        ),
        ("unsure", &fresh, unsure, Reason::LowConfidenceOnReply),
        ("blank", &fresh, answering("   "), Reason::ReplyWithoutText),
        ("no text", &fresh, judged_as(ReplyAction::Reply), Reason::ReplyWithoutText),
    ];
    for (case, task, evaluation, expected) in cases {
        let decision = decide(task, &evaluation, now());
        assert_eq!(reason(&decision), Some(expected), "{case}");
        match decision {
            ReplyDecision::Answer { text, why } => {
                assert_eq!((text.as_str(), why.detail), ("Friday works", Some(judged(&evaluation))), "{case}");
            }
            ReplyDecision::Escalate { blocker, .. } => {
                // The owner gets the agent's draft, if it wrote one, to edit or send.
                let draft = evaluation.reply.clone().filter(|r| !r.trim().is_empty());
                assert_eq!(blocker.draft_reply, draft, "{case}");
                assert_eq!(blocker.detail, Some(judged(&evaluation)), "{case}");
            }
            other => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn a_wait_is_clamped_and_kept_within_the_time_budget() {
    let task = sample_task(TaskStatus::Waiting);
    let expires = task.budget.expires_at;
    let mut woken = sample_task(TaskStatus::Waiting);
    woken.budget.expires_at = now() - days(1);
    let cases = [
        ("the default", &task, None, now() + days(i64::from(REPLY_DEFAULT_WAIT_DAYS))),
        ("at least a day", &task, Some(0), now() + days(1)),
        ("no later than the budget", &task, Some(20), expires),
        (
            "a task past its budget waits as asked, up to the most",
            &woken,
            Some(90),
            now() + days(i64::from(REPLY_MAX_WAIT_DAYS)),
        ),
    ];
    for (case, task, wait_days, expected) in cases {
        let evaluation = ReplyEvaluation {
            wait_days,
            ..judged_as(ReplyAction::Wait)
        };
        assert_eq!(
            decide(task, &evaluation, now()),
            ReplyDecision::Wait {
                until: expected,
                why: Why::new(Reason::MemberReplyWait).detail(format!("{}; next step {expected}", judged(&evaluation))),
            },
            "{case}"
        );
    }
}

#[test]
fn a_close_needs_one_of_the_types_outcomes_and_a_verbal_commitment_is_provisional() {
    let task = sample_task(TaskStatus::Waiting);
    let closing = |outcome: Option<&str>, provisional: bool| ReplyEvaluation {
        outcome: outcome.map(str::to_owned),
        provisional,
        ..judged_as(ReplyAction::Close)
    };
    let resolved = closing(Some("acknowledged"), false);
    assert_eq!(
        decide(&task, &resolved, now()),
        ReplyDecision::Close {
            why: Why::new(Reason::MemberReplyResolved)
                .outcome("acknowledged")
                .detail(judged(&resolved))
        }
    );
    let promised = closing(Some("recovered"), true);
    assert_eq!(
        decide(&task, &promised, now()),
        ReplyDecision::Close {
            why: Why::new(Reason::VerbalCommitment)
                .outcome("recovered")
                .detail(judged(&promised))
                .provisional()
        }
    );
    for outcome in [None, Some("booked_a_class")] {
        let evaluation = closing(outcome, false);
        let decision = decide(&task, &evaluation, now());
        assert_eq!(reason(&decision), Some(Reason::CloseWithoutValidOutcome), "{outcome:?}");
    }
}

/// A close that carries words for the member (one who decided to leave) sends them first,
/// then closes with its outcome; without a message or time left, or on a verbal commitment,
/// it closes as before.
#[test]
fn a_close_with_a_parting_note_sends_it_first_while_a_message_is_left() {
    let task = sample_task(TaskStatus::Waiting);
    let parting = ReplyEvaluation {
        outcome: Some("acknowledged".into()),
        reply: Some("  Thank you, the door is open.  ".into()),
        ..judged_as(ReplyAction::Close)
    };
    assert_eq!(
        decide(&task, &parting, now()),
        ReplyDecision::Part {
            text: "Thank you, the door is open.".into(),
            parting: crate::task::Parting {
                outcome: "acknowledged".into(),
                detail: Some(judged(&parting)),
            },
        }
    );
    let mut spent = sample_task(TaskStatus::Waiting);
    spent.budget.messages_used = spent.budget.messages_max;
    assert_eq!(reason(&decide(&spent, &parting, now())), Some(Reason::MemberReplyResolved));
    let promised = ReplyEvaluation {
        provisional: true,
        ..parting.clone()
    };
    assert_eq!(reason(&decide(&task, &promised, now())), Some(Reason::VerbalCommitment));
    let blank = ReplyEvaluation {
        reply: Some("   ".into()),
        ..parting
    };
    assert_eq!(reason(&decide(&task, &blank, now())), Some(Reason::MemberReplyResolved));
}

#[test]
fn a_close_under_60_waits_or_with_the_budget_nearly_spent_goes_to_the_owner() {
    let mut task = sample_task(TaskStatus::Waiting);
    task.budget.messages_max = 3;
    task.budget.messages_used = 1;
    let closing = |confidence: u8| ReplyEvaluation {
        outcome: Some("acknowledged".into()),
        confidence,
        ..judged_as(ReplyAction::Close)
    };
    assert_eq!(
        reason(&decide(&task, &closing(60), now())),
        Some(Reason::MemberReplyResolved),
        "at 60"
    );
    match decide(&task, &closing(59), now()) {
        ReplyDecision::Wait { until, why } => {
            assert_eq!(why.reason, Reason::LowConfidenceCloseWaits);
            assert_eq!(until, now() + SignedDuration::from_hours(24 * 3), "the default wait");
            assert!(why.detail.unwrap_or_default().contains("confidence 59 (under 60)"));
        }
        other => panic!("at 59: {other:?}"),
    }
    task.budget.messages_used = 2;
    assert_eq!(
        reason(&decide(&task, &closing(59), now())),
        Some(Reason::LowConfidenceCloseEscalated),
        "one message left"
    );
    assert_eq!(reason(&decide(&task, &closing(60), now())), Some(Reason::MemberReplyResolved));
}

#[test]
fn an_escalation_names_what_the_member_needs_from_the_owner() {
    let task = sample_task(TaskStatus::Waiting);
    let escalating = |question: Option<&str>, other: Option<&str>| ReplyEvaluation {
        unanswered_question: question.map(str::to_owned),
        other_subject: other.map(str::to_owned),
        ..judged_as(ReplyAction::Escalate)
    };
    let cases = [
        (
            "another subject",
            escalating(Some("And my locker?"), Some("lockers")),
            Reason::ReplyAboutAnotherSubject,
            "member",
        ),
        (
            "a question the agent cannot answer",
            escalating(Some("Can I pause for a month?"), None),
            Reason::MemberQuestionNeedsOwner,
            "member",
        ),
        ("the agent's own call", escalating(None, None), Reason::AgentEscalatedReply, "agent"),
    ];
    for (case, evaluation, expected, blocked_by) in cases {
        let ReplyDecision::Escalate { reason, blocker } = decide(&task, &evaluation, now()) else {
            panic!("{case}: not escalated");
        };
        assert_eq!(reason, expected, "{case}");
        let context = escalation_context(reason, blocker, &[], now());
        assert_eq!(context.blocked_by, blocked_by, "{case}");
        assert_eq!(context.question, evaluation.unanswered_question, "{case}");
    }
}

#[test]
fn the_agent_cannot_judge_the_reply_and_the_owner_reads_it() {
    assert_eq!(
        unjudged("timed out"),
        ReplyDecision::Escalate {
            reason: Reason::ReplyEvaluationFailed,
            blocker: Blocker::because("the agent could not judge the reply: timed out"),
        }
    );
}

#[test]
fn guidance_needs_a_message_left_and_words_from_the_agent() {
    let mut spent = sample_task(TaskStatus::Executing);
    spent.budget.messages_used = spent.budget.messages_max;
    assert_eq!(
        before_guidance(&spent).as_ref().and_then(reason),
        Some(Reason::MessageBudgetExhausted)
    );
    assert_eq!(before_guidance(&sample_task(TaskStatus::Executing)), None);

    let sure = |body: &str, confidence: u8| crate::task::Drafted {
        draft: crate::task::Draft {
            subject: "Re: Quick note".into(),
            body: body.into(),
        },
        confidence,
    };
    let draft = |body: &str| sure(body, 75);
    assert_eq!(
        guidance_drafted(Ok(draft("Hi Sarah,\n  Friday  is fine.")), 75),
        ReplyDecision::Answer {
            text: "Hi Sarah,\n  Friday  is fine.".into(),
            why: Why::new(Reason::GuidanceDrafted).detail("confidence 75: Hi Sarah, Friday is fine."),
        },
        "at the threshold, sent"
    );
    match guidance_drafted(Ok(sure("Friday is fine.", 74)), 75) {
        ReplyDecision::Escalate { reason, blocker } => {
            assert_eq!(reason, Reason::LowConfidenceGuidanceAnswer);
            assert_eq!(blocker.draft_reply.as_deref(), Some("Friday is fine."), "the draft goes with it");
        }
        other => panic!("just under the threshold: {other:?}"),
    }
    let cases = [
        (Ok(draft("  ")), "the agent wrote nothing from the guidance"),
        (
            Err("model down".to_owned()),
            "the agent could not write from the guidance: model down",
        ),
    ];
    for (drafted, detail) in cases {
        assert_eq!(
            guidance_drafted(drafted, 75),
            ReplyDecision::Escalate {
                reason: Reason::GuidanceNotCarriedOut,
                blocker: Blocker::because(detail),
            }
        );
    }
}

#[test]
fn the_owners_latest_words_are_the_guidance() {
    let conversation = [
        message(Role::Owner, "Offer a free week"),
        message(Role::Member, "Hmm"),
        message(Role::Owner, "Offer two free weeks"),
        message(Role::System, "Handed to the owner"),
    ];
    assert_eq!(owner_guidance(&conversation), "Offer two free weeks");
    assert_eq!(owner_guidance(&conversation[1..2]), "");
}

#[test]
fn a_stop_is_read_from_the_members_latest_message_only() {
    let stopped = [message(Role::Member, "Stop"), message(Role::Agent, "Noted")];
    assert!(says_stop(&stopped));
    let changed_their_mind = [message(Role::Member, "Stop"), message(Role::Member, "Actually, Friday works")];
    assert!(!says_stop(&changed_their_mind));
    assert!(!says_stop(&[]));
}

#[test]
fn the_owner_sees_the_last_messages_what_blocked_the_agent_and_what_they_can_do() {
    let conversation: Vec<_> = (0..10).map(|n| message(Role::Member, &format!("message {n}"))).collect();
    let with_draft = Blocker {
        draft_reply: Some("Friday works".into()),
        ..Blocker::because("unsure about Friday")
    };
    let context = escalation_context(Reason::LowConfidenceOnReply, with_draft, &conversation, now());
    assert_eq!(context.reason, "low_confidence_on_reply");
    assert_eq!(
        context.summary,
        "The agent is not sure enough of what to say next. Unsure about Friday."
    );
    assert_eq!(context.member_words.as_deref(), Some("message 9"));
    assert_eq!(context.last_draft.as_deref(), Some("Friday works"));
    assert!(context.suggested_next_step.starts_with("Read the agent's draft"));
    assert_eq!(context.suggested_actions.len(), 4);
    assert!(context.suggested_actions[0].starts_with("send the agent's draft"));
    let shown: Vec<_> = context.conversation_snapshot.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        shown,
        ["message 4", "message 5", "message 6", "message 7", "message 8", "message 9"]
    );

    let bare = escalation_context(Reason::AgentEscalatedReply, Blocker::default(), &[], now());
    assert_eq!((bare.reason.as_str(), bare.blocked_by.as_str()), ("agent_escalated_reply", "agent"));
    assert_eq!(bare.suggested_actions.len(), 3);
    assert_eq!(
        escalation_why(Reason::AgentEscalatedReply, &Blocker::because("why")),
        Why::new(Reason::AgentEscalatedReply).detail("why")
    );
}

#[test]
fn a_preview_is_one_line_of_at_most_200_characters() {
    assert_eq!(preview("Hi\n\n  Sarah"), "Hi Sarah");
    let long = "é".repeat(250);
    assert_eq!(preview(&long), format!("{}…", "é".repeat(200)));
}

/// The agent escalating with the opt-out outcome but no suppression suspects a stop (issue
/// 18): the owner decides, under a reason the member's other tasks hold on.
#[test]
fn an_escalation_naming_the_opt_out_is_a_suspected_stop() {
    let task = sample_task(TaskStatus::Waiting);
    let evaluation = ReplyEvaluation {
        outcome: Some("opted_out".into()),
        ..judged_as(ReplyAction::Escalate)
    };
    assert_eq!(reason(&decide(&task, &evaluation, now())), Some(Reason::SuspectedStop));
    let sure = ReplyEvaluation {
        suggest_suppression: true,
        ..evaluation
    };
    assert!(
        matches!(decide(&task, &sure, now()), ReplyDecision::HonourStop(_)),
        "a sure stop is honoured"
    );
}

/// The agent's reasoning is a sentence with its full stop; in the log it is followed by more,
/// so the stop goes ("waiting for them; next step …", never "them.; next step").
#[test]
fn a_waits_log_reads_on_from_the_reasoning_without_a_stray_full_stop() {
    let evaluation = ReplyEvaluation {
        reasoning: "The member sounds committed; waiting for the payment. ".into(),
        ..judged_as(ReplyAction::Wait)
    };
    let ReplyDecision::Wait { why, .. } = decide(&sample_task(TaskStatus::Waiting), &evaluation, now()) else {
        panic!("a wait");
    };
    let detail = why.detail.expect("a detail");
    assert!(detail.contains("waiting for the payment; next step "), "{detail}");
    assert!(!detail.contains(".;"), "{detail}");
}
