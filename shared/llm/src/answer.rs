//! What a model is asked, and how its answer is read.
//!
//! Each port method asks for ONE JSON object of a stated shape. The answer is then parsed and
//! checked strictly: an outcome code the task type does not offer, a confidence outside 0–100,
//! an unknown action, a close without its outcome, a reply without text — each is an error,
//! never a guess. The engine escalates on errors, so a malformed answer reaches the owner
//! instead of a member. Surrounding prose and ```json fences are tolerated, since models add
//! them even when told not to; a second JSON object is not, since we could not tell which one
//! the model meant.

use openloop_core::conversation::reply::{ReplyAction, ReplyEvaluation};
use openloop_core::owner::account::Profile;
use openloop_core::ports::{
    CompletionRequest, DraftRequest, Drafted, EvidenceType, GoalProgress, PlanDecision, PlanRequest, RecommendedAction, ReplyRequest,
};
use openloop_core::task::outcome::Milestone;
use openloop_core::task::{ConversationMessage, Draft, Role};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why an answer was refused. Carries no secret: only the model's text is ever quoted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnswerError {
    #[error("the answer holds no JSON object")]
    NoJson,
    #[error("the answer holds more than one JSON object")]
    SeveralObjects,
    #[error("the answer's JSON has the wrong shape: {0}")]
    Shape(String),
    #[error("the answer is invalid: {0}")]
    Invalid(String),
}

// ---- the prompts ------------------------------------------------------------------------

/// The system message for a draft: the request's composed prompt (the skill, the account's
/// context and the owner's rules — "never mention billing" among them), then this message's
/// own instructions: the gym's voice, the touch, the owner's guidance.
pub fn draft_system(r: &DraftRequest) -> String {
    let gym = r.profile.display_name.as_deref().unwrap_or(&r.business_name);
    let mut s = String::new();
    if !r.system_prompt.trim().is_empty() {
        s.push_str(r.system_prompt.trim_end());
        s.push_str("\n\n## This message\n\n");
    }
    s += &format!(
        "You write short, plain e-mails from {gym} to one of its members, as a person at the gym would. \
         Never invent facts (prices, times, offers, names) that are not given below. \
         Never mention that you are an AI.\n\n"
    );
    s.push_str(&profile_lines(&r.profile, &r.business_name));
    s.push_str(&format!("\nTask type: {}\nGoal: {}\n", r.task_type, r.goal));
    s.push_str(&format!(
        "This is touch {} (0 is the first message; later touches are follow-ups in the same thread). \
         Touches remaining after this one: {}. Tone: {}.\n",
        r.touch, r.touches_remaining, r.tone
    ));
    if let Some(guidance) = r.context.get("owner_guidance").and_then(Value::as_str) {
        s.push_str(&format!(
            "\nThe gym owner told you what to say: \"{}\". Follow it: it is the substance of this \
             message. The owner wrote it to you, about the member: say it to the member, in your own \
             words and the gym's voice — \"Tell her we can freeze her membership\" becomes \"We can \
             freeze your membership\", \"Congratulate him on the new job\" becomes \"Congratulations on \
             the new job\". Never copy the owner's note into the message, and do not add promises it \
             does not make.\n",
            guidance.trim()
        ));
    }
    let other_context = match &r.context {
        Value::Object(map) => {
            let rest: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "owner_guidance")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (!rest.is_empty()).then_some(Value::Object(rest))
        }
        Value::Null => None,
        other => Some(other.clone()),
    };
    if let Some(context) = other_context {
        s.push_str(&format!("\nWhat we know for this message (JSON): {context}\n"));
    }
    s
}

/// The user message for a draft: the member and the answer's shape.
pub fn draft_user(r: &DraftRequest) -> String {
    let greeting = match &r.member_first_name {
        Some(name) => format!("The member's first name is {name}; greet them by it."),
        None => "We do not know the member's name; greet them without one.".to_owned(),
    };
    format!(
        "Write the message. {greeting} Sign it as the gym would.\n\n\
         Answer with ONE JSON object and nothing else:\n\
         {{\"subject\": \"the subject line\", \"body\": \"the whole e-mail body, plain text\", \
         \"confidence\": an integer from 0 to 100: how sure you are this message is right to send as it is}}\n\
         Below the task type's threshold the owner reads it before the member does. The subject may be \"\" for a follow-up (touch above 0), which stays in the same thread; \
         the first message (touch 0) needs one."
    )
}

/// The user message for a reply evaluation; the request's composed prompt is the system message.
pub fn reply_user(r: &ReplyRequest) -> String {
    format!(
        "A member replied in this task's conversation. Decide what to do.\n\n\
         Task type: {task_type}\nGoal: {goal}\nMember's first name: {name}\n\
         Budget left: {messages} message(s), {turns} turn(s), {days} day(s).\n\n\
         Conversation so far, oldest first:\n{conversation}\n\
         The member's reply:\n<<<\n{reply}\n>>>\n\n\
         {facts}\n\n\
         Answer with ONE JSON object and nothing else, of this shape:\n\
         {{\"action\": \"reply\" | \"wait\" | \"close\" | \"escalate\",\n \
         \"outcome\": one of {codes}, or null,\n \
         \"confidence\": an integer from 0 to 100,\n \
         \"reasoning\": \"why, in one or two sentences\",\n \
         \"reply\": \"the answer to send the member (action reply), a draft for the owner (action escalate), or a short parting note (action close, when the member has decided to leave)\", or null,\n \
         \"wait_days\": an integer number of days to wait (action wait), or null,\n \
         \"suggest_suppression\": true if the member asked to stop or was hostile,\n \
         \"provisional\": true if closing on a verbal commitment that a signal must still confirm,\n \
         \"unanswered_question\": the member's question you cannot answer from what you know, or null,\n \
         \"other_subject\": the other subject if the reply is about something else than this task, or null}}\n\
         Rules: close only with an outcome from the list; a promise to act (\"I'll come in Monday\") is a \
         verbal commitment: close provisionally. A member who has decided to leave (\"I won't be renewing\") is not \
         persuaded: close, with a short kind parting note in reply (thanks, the door is open, no question). Never reply to a request to stop or to a hostile message. \
         Escalate when unsure, when the member asks something you cannot answer from what you know, or when \
         the reply is about another subject.",
        task_type = r.task_type,
        goal = r.goal,
        name = r.member_first_name.as_deref().unwrap_or("unknown"),
        messages = r.messages_left,
        turns = r.turns_left,
        days = r.days_left,
        conversation = conversation_lines(&r.conversation),
        reply = r.reply.trim(),
        codes = code_list(&r.outcome_codes),
        facts = facts_lines(&r.facts),
    )
}

/// The gym's own facts for members' questions, and the rule that goes with them: a question is
/// answered from these alone, or it goes to the owner.
fn facts_lines(facts: &[String]) -> String {
    if facts.is_empty() {
        return "The gym has written no facts for members' questions: a question about prices, times, classes or \
                policies goes to the owner (action escalate, with unanswered_question)."
            .to_owned();
    }
    let lines: Vec<String> = facts.iter().map(|f| format!("- {}", f.trim())).collect();
    format!(
        "The gym's own facts for members' questions, as the owner wrote them:\n{}\n\
         Answer a question only from these facts, in their words; never state a price, a time, an offer or a \
         policy they do not give. A question they do not clearly answer goes to the owner (action escalate, \
         with unanswered_question).",
        lines.join("\n")
    )
}

/// The user message for a completion evaluation.
pub fn completion_user(r: &CompletionRequest) -> String {
    let criteria = r
        .judgment_criteria
        .as_deref()
        .unwrap_or("This task completes when a concrete signal is seen. Do not complete it on the conversation alone.");
    format!(
        "Judge how far this task is towards its goal. Be honest and skeptical.\n\n\
         Task type: {task_type}\nGoal: {goal}\nHow to judge it: {criteria}\n\n\
         Evidence (signals seen since the task started, and facts about the member), JSON:\n{evidence}\n\n\
         Conversation, oldest first:\n{conversation}\n\
         A check-in, a payment or a reactivation is a concrete signal (confidence 85-95). \"I'll come in \
         tomorrow\" is a verbal commitment, not a signal (confidence 60-75; recommend wait_and_verify). \
         Reading tone alone is inferred (confidence 40-60). No evidence at all is none. Below 60 confidence, \
         recommend wait_and_verify or escalate, never complete.\n\n\
         Answer with ONE JSON object and nothing else, of this shape:\n\
         {{\"progress_pct\": an integer from 0 to 100,\n \
         \"current_outcome\": one of {codes},\n \
         \"confidence\": an integer from 0 to 100,\n \
         \"evidence_type\": \"concrete_signal\" | \"verbal_commitment\" | \"inferred\" | \"partial_signal\" | \"none\",\n \
         \"evidence\": \"what tells you so\",\n \
         \"recommended_action\": \"complete\" | \"wait_and_verify\" | \"continue\" | \"escalate\" | \"close_as_neutral\",\n \
         \"milestones\": [{{\"name\": \"...\", \"hit\": true or false, \"hit_at\": an RFC 3339 time or null}}],\n \
         \"risks\": [\"what could still go wrong\"]}}",
        task_type = r.task_type,
        goal = r.goal,
        evidence = r.evidence,
        conversation = conversation_lines(&r.conversation),
        codes = code_list(&r.outcome_codes),
    )
}

pub fn plan_user(r: &PlanRequest) -> String {
    let steps = if r.steps.is_empty() {
        "none yet".to_owned()
    } else {
        r.steps
            .iter()
            .map(|s| {
                format!(
                    "- {} ({:?}): {} → {}{}",
                    s.task_type,
                    s.requirement,
                    s.goal,
                    s.status.as_str(),
                    s.outcome.as_deref().map(|o| format!(", outcome {o}")).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "Decide the NEXT step towards this goal, or that there is none. Plan one step at a time: \
         look at what the steps so far came to before choosing.\n\n\
         Task type: {task_type}\nGoal: {goal}\nWhat we know about the member, JSON: {facts}\n\
         Steps so far, oldest first:\n{steps}\n\
         At most {left} more step(s). Each step is a task of one of these types: {types}. A \
         step of a type already tried is not allowed. Choose no step when a step already \
         reached the goal, or when nothing sensible is left (the owner then decides).\n\n\
         Answer with ONE JSON object and nothing else, of this shape:\n\
         {{\"next\": null or {{\"task_type\": one of the types above, \"goal\": \"what this step must achieve\", \
         \"requirement\": \"required\" | \"optional\" | \"best_effort\"}},\n \
         \"remaining\": [\"a rough outline of later steps\"],\n \
         \"reasoning\": \"why this step, why now\"}}",
        task_type = r.task_type,
        goal = r.goal,
        facts = r.facts,
        left = r.steps_left,
        types = code_list(&r.step_types),
    )
}

/// A system message when the engine composed none (it always should; this keeps a model from
/// answering with no frame at all).
pub fn fallback_system(business_name: &str, profile: &Profile) -> String {
    format!(
        "You act for {business_name}, a gym, in a conversation with one of its members. Be brief, \
         warm and truthful; never invent facts.\n{}",
        profile_lines(profile, business_name)
    )
}

fn profile_lines(p: &Profile, business_name: &str) -> String {
    let mut s = format!("The business: {business_name}");
    if let Some(kind) = &p.business_type {
        s.push_str(&format!(" ({kind})"));
    }
    s.push('\n');
    let mut line = |label: &str, value: Option<&String>| {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            s.push_str(&format!("{label}: {v}\n"));
        }
    };
    line("Owner's first name", p.owner_first_name.as_ref());
    line("Sign off as", p.sign_off.as_ref());
    line("Voice", p.vibe.as_ref());
    line("Typical greeting", p.typical_greeting.as_ref());
    line("Current promotion", p.current_promo.as_ref());
    line("Ways to stay when the cost is the trouble", p.ways_to_stay.as_ref());
    line("Phone", p.contact_phone.as_ref());
    line("Address", p.contact_address.as_ref());
    line("Website", p.contact_website.as_ref());
    line("Where members update their card", p.billing_link.as_ref());
    let list = |label: &str, items: &[String]| (!items.is_empty()).then(|| format!("{label}: {}\n", items.join("; ")));
    [
        list("Classes", &p.class_types),
        list("Special programs", &p.special_programs),
        list("Never mention", &p.never_mention),
        list("Always include", &p.always_include),
    ]
    .into_iter()
    .flatten()
    .for_each(|l| s.push_str(&l));
    s
}

fn conversation_lines(conversation: &[ConversationMessage]) -> String {
    if conversation.is_empty() {
        return "(nothing yet)\n".to_owned();
    }
    conversation
        .iter()
        .map(|m| {
            let who = match m.role {
                Role::Agent => "gym (you)",
                Role::Member => "member",
                Role::Owner => "owner (to you, not seen by the member)",
                Role::System => "system note",
            };
            format!("[{} {who}] {}\n", m.at, m.content.trim())
        })
        .collect()
}

fn code_list(codes: &[String]) -> String {
    let quoted: Vec<String> = codes.iter().map(|c| format!("\"{c}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

// ---- reading the answers ----------------------------------------------------------------

/// The one JSON object in a model's text.
pub fn json_object(text: &str) -> Result<Value, AnswerError> {
    let mut found: Option<(Value, usize)> = None;
    let mut from = 0;
    while let Some(i) = text[from..].find('{').map(|i| i + from) {
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value @ Value::Object(_))) => {
                if found.is_some() {
                    return Err(AnswerError::SeveralObjects);
                }
                let end = i + stream.byte_offset();
                found = Some((value, end));
                from = end;
            }
            // Cut off mid-object: whatever lies inside is a fragment, never the answer.
            Some(Err(e)) if e.is_eof() => break,
            _ => from = i + 1,
        }
    }
    found.map(|(v, _)| v).ok_or(AnswerError::NoJson)
}

fn shaped<T: DeserializeOwned>(value: Value) -> Result<T, AnswerError> {
    serde_json::from_value(value).map_err(|e| AnswerError::Shape(e.to_string()))
}

/// A 0–100 integer; a fraction (a model thinking in 0–1) is refused, not rounded.
fn percent(field: &str, value: f64) -> Result<u8, AnswerError> {
    if value.is_finite() && value.fract() == 0.0 && (0.0..=100.0).contains(&value) {
        // Exact: an integer in 0..=100.
        Ok(value as u8)
    } else {
        Err(AnswerError::Invalid(format!("{field} {value} is not an integer from 0 to 100")))
    }
}

fn offered(codes: &[String], code: &str, field: &str) -> Result<(), AnswerError> {
    if codes.iter().any(|c| c == code) {
        Ok(())
    } else {
        Err(AnswerError::Invalid(format!("{field} {code:?} is not one of {}", code_list(codes))))
    }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

#[derive(Deserialize)]
struct DraftAnswer {
    subject: String,
    body: String,
    /// A model that does not say how sure it is, is not sure: 0, and the owner reads it.
    #[serde(default)]
    confidence: Option<f64>,
}

pub fn draft(text: &str, request: &DraftRequest) -> Result<Drafted, AnswerError> {
    let a: DraftAnswer = shaped(json_object(text)?)?;
    if a.body.trim().is_empty() {
        return Err(AnswerError::Invalid("the body is empty".into()));
    }
    let guided = request.context.get("owner_guidance").is_some();
    if request.touch == 0 && !guided && a.subject.trim().is_empty() {
        return Err(AnswerError::Invalid("a first message needs a subject".into()));
    }
    // The same bounds the engine puts on a draft an owner submits.
    if a.subject.contains(['\r', '\n']) || a.subject.trim().len() > 200 {
        return Err(AnswerError::Invalid("the subject is not one line of at most 200 characters".into()));
    }
    if a.body.trim().len() > 20_000 {
        return Err(AnswerError::Invalid("the body is longer than 20000 characters".into()));
    }
    let confidence = match a.confidence {
        Some(c) => percent("confidence", c)?,
        None => 0,
    };
    Ok(Drafted {
        draft: Draft {
            subject: a.subject.trim().to_owned(),
            body: a.body.trim().to_owned(),
        },
        confidence,
    })
}

#[derive(Deserialize)]
struct ReplyAnswer {
    action: ReplyAction,
    outcome: Option<String>,
    confidence: f64,
    reasoning: String,
    reply: Option<String>,
    wait_days: Option<u32>,
    #[serde(default)]
    suggest_suppression: bool,
    provisional: Option<bool>,
    unanswered_question: Option<String>,
    other_subject: Option<String>,
}

pub fn reply_evaluation(text: &str, request: &ReplyRequest) -> Result<ReplyEvaluation, AnswerError> {
    let a: ReplyAnswer = shaped(json_object(text)?)?;
    let confidence = percent("confidence", a.confidence)?;
    let outcome = non_empty(a.outcome);
    if let Some(code) = &outcome {
        offered(&request.outcome_codes, code, "outcome")?;
    }
    let reply = non_empty(a.reply);
    match a.action {
        ReplyAction::Close if outcome.is_none() => {
            return Err(AnswerError::Invalid("close without an outcome".into()));
        }
        // Whether a close is provisional decides whether a signal must still confirm it: never
        // assumed.
        ReplyAction::Close if a.provisional.is_none() => {
            return Err(AnswerError::Invalid("close without saying whether it is provisional".into()));
        }
        ReplyAction::Reply if reply.is_none() => {
            return Err(AnswerError::Invalid("reply without text".into()));
        }
        ReplyAction::Reply if a.suggest_suppression => {
            return Err(AnswerError::Invalid("a reply to a member it says to suppress".into()));
        }
        _ => {}
    }
    if a.reasoning.trim().is_empty() {
        return Err(AnswerError::Invalid("no reasoning".into()));
    }
    Ok(ReplyEvaluation {
        action: a.action,
        outcome,
        confidence,
        reasoning: a.reasoning.trim().to_owned(),
        reply,
        wait_days: a.wait_days,
        suggest_suppression: a.suggest_suppression,
        provisional: a.provisional.unwrap_or(false),
        unanswered_question: non_empty(a.unanswered_question),
        other_subject: non_empty(a.other_subject),
    })
}

#[derive(Deserialize)]
struct MilestoneAnswer {
    name: String,
    hit: bool,
    #[serde(default)]
    hit_at: Option<String>,
}

#[derive(Deserialize)]
struct CompletionAnswer {
    progress_pct: f64,
    current_outcome: String,
    confidence: f64,
    evidence_type: EvidenceType,
    evidence: String,
    recommended_action: RecommendedAction,
    #[serde(default)]
    milestones: Vec<MilestoneAnswer>,
    #[serde(default)]
    risks: Vec<String>,
}

pub fn goal_progress(text: &str, request: &CompletionRequest) -> Result<GoalProgress, AnswerError> {
    let a: CompletionAnswer = shaped(json_object(text)?)?;
    let progress_pct = percent("progress_pct", a.progress_pct)?;
    let confidence = percent("confidence", a.confidence)?;
    offered(&request.outcome_codes, &a.current_outcome, "current_outcome")?;
    let milestones = a
        .milestones
        .into_iter()
        .map(|m| {
            let hit_at = match non_empty(m.hit_at) {
                None => None,
                Some(at) => Some(
                    at.parse()
                        .map_err(|_| AnswerError::Invalid(format!("milestone {:?} hit_at {at:?} is not a time", m.name)))?,
                ),
            };
            Ok(Milestone {
                name: m.name,
                hit: m.hit,
                hit_at,
            })
        })
        .collect::<Result<Vec<_>, AnswerError>>()?;
    Ok(GoalProgress {
        progress_pct,
        current_outcome: a.current_outcome,
        confidence,
        evidence_type: a.evidence_type,
        evidence: a.evidence.trim().to_owned(),
        recommended_action: a.recommended_action,
        milestones,
        risks: a.risks,
    })
}

/// The planner's answer, checked against what it was offered.
pub fn plan_decision(text: &str, request: &PlanRequest) -> Result<PlanDecision, AnswerError> {
    let decision: PlanDecision = shaped(json_object(text)?)?;
    if let Some(step) = &decision.next {
        offered(&request.step_types, &step.task_type, "next.task_type")?;
        if request.steps.iter().any(|s| s.task_type == step.task_type) {
            return Err(AnswerError::Invalid(format!(
                "next.task_type {:?} was already tried",
                step.task_type
            )));
        }
        if step.goal.trim().is_empty() || step.goal.len() > 2_000 {
            return Err(AnswerError::Invalid("next.goal must be 1-2000 characters".into()));
        }
        if request.steps_left == 0 {
            return Err(AnswerError::Invalid("a next step was chosen with no steps left".into()));
        }
    }
    Ok(decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_names_an_offered_untried_type_or_is_refused() {
        use openloop_core::ports::StepResult;
        use openloop_core::task::subtasks::Requirement;
        let request = PlanRequest {
            task_type: "ad_hoc".into(),
            goal: "Get Sam back".into(),
            system_prompt: String::new(),
            step_types: vec!["churn_risk".into(), "staff_call_member".into()],
            steps: vec![StepResult {
                task_type: "churn_risk".into(),
                goal: "g".into(),
                requirement: Requirement::Optional,
                status: openloop_core::task::TaskStatus::Cancelled,
                outcome: Some("unresponsive".into()),
            }],
            steps_left: 3,
            facts: Value::Null,
        };
        let call = r#"Sure. {"next": {"task_type": "staff_call_member", "goal": "Call Sam", "requirement": "required"},
            "remaining": [], "reasoning": "no answer by mail"}"#;
        let decision = plan_decision(call, &request).expect("a plan");
        assert_eq!(
            decision.next.map(|n| (n.task_type, n.requirement)),
            Some(("staff_call_member".into(), Requirement::Required))
        );
        let done = plan_decision(r#"{"next": null, "remaining": [], "reasoning": "done"}"#, &request).expect("no step");
        assert_eq!(done.next, None);
        for bad in [
            r#"{"next": {"task_type": "churn_risk", "goal": "again", "requirement": "optional"}, "remaining": [], "reasoning": ""}"#,
            r#"{"next": {"task_type": "send_pizza", "goal": "x", "requirement": "optional"}, "remaining": [], "reasoning": ""}"#,
            r#"{"next": {"task_type": "staff_call_member", "goal": " ", "requirement": "required"}, "remaining": [], "reasoning": ""}"#,
            r#"{"next": {"task_type": "staff_call_member", "goal": "x", "requirement": "maybe"}, "remaining": [], "reasoning": ""}"#,
        ] {
            assert!(plan_decision(bad, &request).is_err(), "{bad}");
        }
        assert!(plan_user(&request).contains("staff_call_member"));
    }

    #[test]
    fn the_object_is_found_inside_fences_and_prose() {
        let fenced = "Sure! Here it is:\n```json\n{\"a\": {\"b\": 1}}\n```\nLet me know {if} you need more.";
        assert_eq!(json_object(fenced), Ok(serde_json::json!({"a": {"b": 1}})));
        assert_eq!(json_object("no json here {at all"), Err(AnswerError::NoJson));
        assert_eq!(json_object("[1, 2]"), Err(AnswerError::NoJson));
        let truncated = r#"{"action": "close", "detail": {"action": "reply", "confidence": 90}, "outc"#;
        assert_eq!(
            json_object(truncated),
            Err(AnswerError::NoJson),
            "a nested fragment is not the answer"
        );
    }

    #[test]
    fn two_objects_are_ambiguous() {
        assert_eq!(json_object("{\"a\": 1}\nor perhaps\n{\"a\": 2}"), Err(AnswerError::SeveralObjects));
    }

    #[test]
    fn drafts_keep_to_the_bounds_of_an_owners_draft() {
        let request = DraftRequest {
            task_type: "churn_risk".into(),
            goal: "Get her back".into(),
            member_first_name: None,
            profile: Profile::default(),
            business_name: "Gym".into(),
            touch: 0,
            tone: "friendly".into(),
            touches_remaining: 2,
            context: Value::Null,
            system_prompt: String::new(),
            message: Default::default(),
        };
        let answer = |subject: &str, body: &str| serde_json::json!({"subject": subject, "body": body}).to_string();
        assert!(draft(&answer("Checking in", "Hi there"), &request).is_ok());
        let sure = draft(r#"{"subject": "Hi", "body": "Hi there", "confidence": 82}"#, &request).expect("draft");
        assert_eq!(sure.confidence, 82);
        assert_eq!(
            draft(&answer("Checking in", "Hi there"), &request).map(|d| d.confidence),
            Ok(0),
            "unsaid is unsure"
        );
        assert!(
            draft(r#"{"subject": "Hi", "body": "Hi there", "confidence": 0.8}"#, &request).is_err(),
            "a fraction"
        );
        assert!(draft(&answer("", "Hi there"), &request).is_err(), "a first message needs a subject");
        assert!(draft(&answer("Two\nlines", "Hi there"), &request).is_err());
        assert!(draft(&answer(&"s".repeat(201), "Hi there"), &request).is_err());
        assert!(draft(&answer("Checking in", &"b".repeat(20_001)), &request).is_err());
    }

    #[test]
    fn percentages_are_whole_numbers_in_range() {
        assert_eq!(percent("confidence", 85.0), Ok(85));
        assert!(percent("confidence", 0.85).is_err());
        assert!(percent("confidence", 101.0).is_err());
        assert!(percent("confidence", -1.0).is_err());
    }
}
