//! The offline agent against a labelled set of member replies (tests/data/labelled_replies.tsv).
//!
//! Prints a confusion table (expected action × action taken) and every disagreement, and fails
//! on the mistakes that must never happen — replying to, or not suppressing, an opt-out or a
//! hostile message; closing on a vague one; naming an outcome the task type does not offer —
//! and if agreement with the labels drops below 90%.

use std::collections::BTreeMap;

use openloop_core::conversation::reply::ReplyAction;
use openloop_core::owner::account::Profile;
use openloop_core::ports::{Agent, ReplyRequest};
use openloop_core::task::task_type;
use openloop_llm::OfflineAgent;

struct Labelled {
    category: String,
    task_type: String,
    expected: ReplyAction,
    text: String,
}

fn action(name: &str) -> ReplyAction {
    match name {
        "reply" => ReplyAction::Reply,
        "wait" => ReplyAction::Wait,
        "close" => ReplyAction::Close,
        "escalate" => ReplyAction::Escalate,
        other => panic!("unknown action {other:?} in the labelled set"),
    }
}

fn name(a: ReplyAction) -> &'static str {
    match a {
        ReplyAction::Reply => "reply",
        ReplyAction::Wait => "wait",
        ReplyAction::Close => "close",
        ReplyAction::Escalate => "escalate",
    }
}

fn labelled_set() -> Vec<Labelled> {
    include_str!("data/labelled_replies.tsv")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.splitn(4, '\t').collect();
            assert_eq!(cols.len(), 4, "malformed line: {l:?}");
            Labelled {
                category: cols[0].into(),
                task_type: cols[1].into(),
                expected: action(cols[2]),
                text: cols[3].into(),
            }
        })
        .collect()
}

fn request(task_type: &str, reply: &str) -> ReplyRequest {
    let def = task_type::definition(task_type);
    ReplyRequest {
        task_type: task_type.into(),
        goal: def.goal.summary.into(),
        outcome_codes: def.goal.outcomes.iter().map(|o| o.code.to_owned()).collect(),
        member_first_name: Some("Sam".into()),
        profile: Profile {
            display_name: Some("Riverside Strength".into()),
            owner_first_name: Some("Jo".into()),
            sign_off: Some("Coach Jo".into()),
            ..Profile::default()
        },
        business_name: "Riverside Strength".into(),
        system_prompt: String::new(),
        conversation: Vec::new(),
        reply: reply.into(),
        messages_left: 2,
        turns_left: 3,
        days_left: 10,
        message: Default::default(),
        facts: Vec::new(),
    }
}

#[tokio::test]
async fn the_offline_agent_never_replies_to_opt_outs_or_hostility_and_never_closes_on_vague_replies() {
    // Given the labelled replies
    let set = labelled_set();
    assert!(set.len() >= 60, "the labelled set must hold at least 60 replies, has {}", set.len());
    let actions = [ReplyAction::Reply, ReplyAction::Wait, ReplyAction::Close, ReplyAction::Escalate];
    let mut table: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    let mut by_category: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut violations = Vec::new();

    // When the offline agent judges each one
    for item in &set {
        let req = request(&item.task_type, &item.text);
        let got = OfflineAgent.evaluate_reply(&req).await.expect("the offline agent always answers");
        *table.entry((name(item.expected), name(got.action))).or_default() += 1;
        let entry = by_category.entry(item.category.as_str()).or_default();
        entry.1 += 1;
        if got.action == item.expected {
            entry.0 += 1;
        } else {
            disagreements.push(format!(
                "  [{}] {} {:?}: expected {}, got {} ({})",
                item.category,
                item.task_type,
                item.text,
                name(item.expected),
                name(got.action),
                got.reasoning
            ));
        }
        // Then the rules that must never break hold
        let dangerous = matches!(item.category.as_str(), "opt_out" | "hostile");
        if dangerous && (got.action == ReplyAction::Reply || got.reply.is_some() || !got.suggest_suppression) {
            violations.push(format!("{:?}: {:?} to an opt-out/hostile reply", item.text, got));
        }
        if item.category == "vague" && got.action == ReplyAction::Close {
            violations.push(format!("{:?}: closed on a vague reply", item.text));
        }
        if let Some(code) = &got.outcome
            && !req.outcome_codes.contains(code)
        {
            violations.push(format!("{:?}: outcome {code:?} is not offered", item.text));
        }
        if got.action == ReplyAction::Close && got.confidence < 60 {
            violations.push(format!("{:?}: closed with confidence {}", item.text, got.confidence));
        }
        if item.category == "question" && got.unanswered_question.is_none() {
            violations.push(format!("{:?}: a question escalated without the question", item.text));
        }
    }

    println!("\nOffline agent on {} labelled replies: rows expected, columns taken", set.len());
    print!("{:>10}", "");
    for a in actions {
        print!("{:>10}", name(a));
    }
    println!();
    for e in actions {
        print!("{:>10}", name(e));
        for g in actions {
            print!("{:>10}", table.get(&(name(e), name(g))).copied().unwrap_or(0));
        }
        println!();
    }
    println!("\nBy category (agreeing / total):");
    for (category, (ok, total)) in &by_category {
        println!("  {category:<14} {ok:>3} / {total}");
    }
    let agreeing: u32 = by_category.values().map(|(ok, _)| ok).sum();
    println!("\nAgreement: {agreeing} / {}", set.len());
    if !disagreements.is_empty() {
        println!("Disagreements:\n{}", disagreements.join("\n"));
    }

    assert!(violations.is_empty(), "rules broken:\n{}", violations.join("\n"));
    assert!(
        agreeing as usize * 100 >= set.len() * 90,
        "agreement {agreeing}/{} is below 90%",
        set.len()
    );
}
