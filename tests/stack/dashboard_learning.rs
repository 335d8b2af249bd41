//! What the owner teaches the agent, through the dashboard (`/app` and 16) over
//! HTTP: a task's rating and outcome correction on its page, the memories page and the
//! suggestions page — each the same operation as its JSON call, each form behind the
//! session's CSRF token, member and owner text shown as text. The real browser's walk is in
//! `dashboard_browser.rs`.

use jiff::SignedDuration;
use openloop_core::kernel::ids::AccountId;
use openloop_core::learning::suggestion::{ProposedChange, Strength, Suggestion, SuggestionKind, SuggestionStatus};
use openloop_tests::{Stack, morning};
use reqwest::Method;
use serde_json::json;

use crate::dashboard::{pending_task, sign_in, task};

/// Given a cancelled task, when the owner rates it Bad with a comment and corrects its
/// outcome on its page, then the task carries the rating and the new outcome with its value
/// and where the price came from; a form without the CSRF token changes nothing, and an open
/// task offers neither.
#[tokio::test]
async fn the_owner_rates_and_corrects_a_closed_task_on_its_page() {
    let stack = Stack::start("app-word").await;
    let gym = stack.create_account("manual").await;
    let closed = pending_task(&stack, &gym, "m_ana", "Lapsed three weeks", "Miss you", "Hi Ana").await;
    let open = pending_task(&stack, &gym, "m_bo", "Lapsed two weeks", "Miss you", "Hi Bo").await;
    let (status, _) = stack.post(&format!("/api/v1/tasks/{closed}/cancel"), &gym.token, json!({})).await;
    assert_eq!(status, 200);
    let owner = sign_in(&stack, &gym).await;

    let (status, page) = owner.get(&format!("/app/tasks/{closed}")).await;
    assert_eq!(status, 200, "{page}");
    for verb in [
        "value=\"up\">Good</button>",
        "value=\"down\">Bad</button>",
        ">Correct outcome</button>",
    ] {
        assert!(page.contains(verb), "{verb}: {page}");
    }
    assert!(page.contains("<option value=\"retained\""), "the type's outcomes: {page}");
    let (_, page) = owner.get(&format!("/app/tasks/{open}")).await;
    assert!(
        !page.contains(">Good</button>") && !page.contains(">Correct outcome</button>"),
        "{page}"
    );

    let feedback = format!("/app/tasks/{closed}/feedback");
    let (status, _) = owner.post(&feedback, &[("rating", "down")]).await;
    assert_eq!(status, 403, "CSRF");
    assert!(task(&stack, &gym, &closed).await["feedback"].is_null(), "nothing changed");
    let comment = "Too pushy <b>for</b> a regular";
    let (status, to) = owner
        .post(&feedback, &[("csrf", &owner.csrf), ("rating", "down"), ("comment", comment)])
        .await;
    assert_eq!((status, to.as_str()), (303, format!("/app/tasks/{closed}?done=rated").as_str()));
    let rated = task(&stack, &gym, &closed).await;
    assert_eq!(
        (rated["feedback"]["rating"].as_str(), rated["feedback"]["comment"].as_str()),
        (Some("down"), Some(comment)),
        "{rated}"
    );
    let (status, page) = owner.get(&to).await;
    assert_eq!(status, 200);
    assert!(page.contains("data-feedback=\"Bad\""), "{page}");
    assert!(page.contains("Too pushy &#60;b&#62;for&#60;/b&#62; a regular"), "as text: {page}");
    assert!(page.contains("role=\"status\">Thanks"), "{page}");

    let (status, _) = owner
        .post(&format!("/app/tasks/{open}/feedback"), &[("csrf", &owner.csrf), ("rating", "up")])
        .await;
    assert_eq!(status, 409, "an open task is not rated");
    let (status, _) = owner.post(&feedback, &[("csrf", &owner.csrf), ("rating", "sideways")]).await;
    assert_eq!(status, 422);

    let outcome = format!("/app/tasks/{closed}/outcome");
    let (status, page) = owner.post(&outcome, &[("csrf", &owner.csrf), ("outcome", "paid")]).await;
    assert_eq!(status, 422, "not one of the type's outcomes: {page}");
    let (status, to) = owner
        .post(
            &outcome,
            &[("csrf", &owner.csrf), ("outcome", "retained"), ("note", "She came back on Monday")],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, format!("/app/tasks/{closed}?done=corrected").as_str()));
    let corrected = task(&stack, &gym, &closed).await;
    assert_eq!(corrected["outcome"], "retained", "{corrected}");
    assert!(corrected["attributed_value"].as_f64().is_some_and(|v| v > 0.0), "{corrected}");
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("valued at the account&#39;s average membership price"), "{page}");
    assert!(page.contains("<option value=\"retained\" selected>"), "{page}");
    assert!(page.contains("She came back on Monday"), "the note joins the conversation: {page}");
    stack.running.stop();
}

/// Given two memories, the task page of an AI call that read them lists their text; one
/// deleted since says so.
#[tokio::test]
async fn the_task_page_shows_the_memories_its_last_ai_call_read() {
    let stack = Stack::start("app-word-memories").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    stack.member(&gym, "m_sam", "Sam", day0).await;
    stack.run().await;
    let mut ids = Vec::new();
    for (content, member) in [
        ("Members here answer evening messages.", None),
        ("Sam is back from a <i>knee</i> injury.", Some("m_sam")),
    ] {
        let (status, memory) = stack
            .post("/api/v1/memories", &gym.token, json!({"content": content, "member_id": member}))
            .await;
        assert_eq!(status, 201, "{memory}");
        ids.push(memory["id"].as_str().unwrap_or_default().to_owned());
    }
    let body = json!({"task_type": "churn_risk", "member_id": "m_sam", "goal": "Bring Sam back", "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default();
    let (status, _) = stack
        .call(Method::DELETE, &format!("/api/v1/memories/{}", ids[0]), Some(&gym.token), None)
        .await;
    assert_eq!(status, 204);
    seed_goal_progress(&stack, &gym.id, id).await;
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get(&format!("/app/tasks/{id}")).await;
    assert_eq!(status, 200, "{page}");
    for shown in [
        "40% towards the goal: verbal commitment",
        "<progress id=\"goal-progress\" value=\"40\" max=\"100\">",
        "Evidence: the member said so · next: wait to see it in the gym&#39;s data",
        "Said &#60;b&#62;Monday&#60;/b&#62;",
        "✓ replied",
        "○ checked in",
        "<strong>Risks:</strong> busy week",
    ] {
        assert!(page.contains(shown), "{shown}: {page}");
    }
    assert!(page.contains("Memories the agent read"), "{page}");
    assert!(page.contains("Sam is back from a &#60;i&#62;knee&#60;/i&#62; injury."), "{page}");
    assert!(
        page.contains(&format!("data-memory-id=\"{}\"><span class=\"muted\">deleted since", ids[0])),
        "{page}"
    );
    stack.running.stop();
}

/// The completion evaluation's progress on the task, as the reply reading keeps it (no
/// member conversation is lived here).
async fn seed_goal_progress(stack: &Stack, account: &str, id: &str) {
    use openloop_core::task::commit::TaskCommit;
    use openloop_core::task::outcome::Milestone;
    use openloop_core::task::progress::{EvidenceType, GoalProgress, RecommendedAction};
    use openloop_core::task::reason::Reason;
    use openloop_core::task::transition::{Why, record};
    let store = stack.running.store.clone();
    let account: AccountId = account.parse().expect("account id");
    let current = store
        .get_task(account, id.parse().expect("task id"))
        .await
        .expect("store")
        .expect("the task");
    let mut next = current.clone();
    next.goal_progress = Some(GoalProgress {
        progress_pct: 40,
        current_outcome: "verbal_commitment".into(),
        confidence: 65,
        evidence_type: EvidenceType::VerbalCommitment,
        evidence: "Said <b>Monday</b>".into(),
        recommended_action: RecommendedAction::WaitAndVerify,
        milestones: vec![
            Milestone {
                name: "replied".into(),
                hit: true,
                hit_at: None,
            },
            Milestone {
                name: "checked in".into(),
                hit: false,
                hit_at: None,
            },
        ],
        risks: vec!["busy week".into()],
    });
    let (next, log) = record(&next, stack.now().await, Why::new(Reason::MemberReplied));
    store.commit(&TaskCommit::new(next, log)).await.expect("commit");
}

/// Given the memories page, the owner adds memories (about the business, about one member
/// until a date), sees them with who wrote them, and deletes one; what the engine refuses —
/// empty, too long, a malformed member id, a past date, the cap reached — is said on the page
/// with the form as filled, and nothing is saved.
#[tokio::test]
async fn memories_are_added_and_deleted_on_their_page_and_refusals_are_said_there() {
    let stack = Stack::start("app-memories").await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let intruder = sign_in(&stack, &rival).await;

    let (status, page) = owner.get("/app/memories").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(">Add</button>") && page.contains("No memories yet."), "{page}");
    let (status, _) = owner.post("/app/memories", &[("content", "No CSRF")]).await;
    assert_eq!(status, 403);

    let hostile = "Dan <script>alert(1)</script> prefers texts after 6pm";
    let (status, to) = owner
        .post(
            "/app/memories",
            &[
                ("csrf", &owner.csrf),
                ("content", hostile),
                ("member_id", "m_dan"),
                ("category", "preference"),
                ("expires_on", "2099-12-31"),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/memories?done=memory_added"));
    let (status, _) = owner
        .post(
            "/app/memories",
            &[("csrf", &owner.csrf), ("content", "We close at 9pm on Fridays.")],
        )
        .await;
    assert_eq!(status, 303);
    let (_, listed) = stack.get("/api/v1/memories", &gym.token).await;
    let memories = listed["memories"].as_array().cloned().unwrap_or_default();
    assert_eq!(memories.len(), 2, "{listed}");
    let dan = memories.iter().find(|m| m["member_id"] == "m_dan").cloned().unwrap_or_default();
    assert_eq!(
        (dan["content"].as_str(), dan["category"].as_str(), dan["source"].as_str()),
        (Some(hostile), Some("preference"), Some("owner"))
    );
    assert!(
        dan["expires_at"].as_str().is_some_and(|e| e.starts_with("2100-01-01")),
        "the end of the last day: {dan}"
    );
    let (status, page) = owner.get(&to).await;
    assert_eq!(status, 200);
    assert!(page.contains("Dan &#60;script&#62;alert(1)&#60;/script&#62; prefers"), "{page}");
    assert!(!page.contains("<script>"), "{page}");
    assert!(page.contains("about member m_dan") && page.contains("from you"), "{page}");
    let dan_id = dan["id"].as_str().unwrap_or_default();
    assert!(page.contains(&format!("data-memory-id=\"{dan_id}\"")), "{page}");

    let too_long = "x".repeat(1_001);
    for (form, says) in [
        (vec![("content", "   ")], "A memory is 1 to 1000 characters."),
        (vec![("content", too_long.as_str())], "A memory is 1 to 1000 characters."),
        (vec![("content", "Kept"), ("member_id", "not a member")], "is not a valid member id"),
        (
            vec![("content", "Kept"), ("expires_on", "2020-01-01")],
            "Expires_at must be in the future.",
        ),
        (vec![("content", "Kept"), ("expires_on", "soon")], "The expiry is a date"),
    ] {
        let mut form = form;
        form.push(("csrf", &owner.csrf));
        let (status, page) = owner.post_page("/app/memories", &form).await;
        assert_eq!(status, 422, "{form:?}: {page}");
        assert!(page.contains("role=\"alert\""), "{form:?}: {page}");
        assert!(page.contains(&says.replace('\'', "&#39;")), "{says}: {page}");
        assert!(!page.contains("\"error\""), "not the API's JSON: {page}");
    }
    let (_, page) = owner
        .post_page(
            "/app/memories",
            &[("csrf", &owner.csrf), ("content", "Kept"), ("member_id", "not a member")],
        )
        .await;
    assert!(page.contains("value=\"not a member\""), "the form as filled: {page}");
    let (_, listed) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(listed["memories"].as_array().map(Vec::len), Some(2), "nothing was saved");

    let (status, _) = intruder
        .post(&format!("/app/memories/{dan_id}/delete"), &[("csrf", &intruder.csrf)])
        .await;
    assert_eq!(status, 404, "another account's memory");
    let (status, to) = owner
        .post(&format!("/app/memories/{dan_id}/delete"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/memories?done=memory_deleted"));
    let (_, page) = owner.get(&to).await;
    assert!(!page.contains(dan_id) && page.contains("Deleted"), "{page}");
    let (status, _) = owner
        .post(&format!("/app/memories/{dan_id}/delete"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 404, "deleted once");

    // The cap: the 200th memory is the last.
    for i in 1..openloop_core::kernel::limits::MAX_MEMORIES_PER_ACCOUNT {
        let (status, body) = stack
            .post("/api/v1/memories", &gym.token, json!({"content": format!("Fact {i}")}))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, page) = owner
        .post_page("/app/memories", &[("csrf", &owner.csrf), ("content", "One too many")])
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("An account keeps at most 200 memories: delete one first."), "{page}");
    stack.running.stop();
}

/// A pending suggestion of `account`, made as the evaluator makes one (its store call).
async fn seeded_suggestion(stack: &Stack, account: AccountId, fingerprint: &str, change: ProposedChange) -> String {
    let now = stack.now().await;
    let suggestion = Suggestion {
        id: openloop_core::kernel::ids::new_ulid(now),
        account_id: account,
        kind: match change {
            ProposedChange::Memory { .. } => SuggestionKind::Memory,
            ProposedChange::Prompt { .. } => SuggestionKind::Prompt,
            ProposedChange::Skill { .. } => SuggestionKind::Skill,
            ProposedChange::Rubric { .. } => SuggestionKind::Rubric,
            ProposedChange::Calibration { .. } => SuggestionKind::Calibration,
            ProposedChange::Autopilot { .. } => SuggestionKind::Autopilot,
        },
        title: format!("Finding {fingerprint} <em>now</em>"),
        body: "Over the last 30 days, 12 of 12 evening messages were answered.".into(),
        evidence: json!({"window_days": 30, "evening": {"sent": 12, "replied": 12, "reply_rate": 1.0},
            "morning": {"sent": 12, "replied": 3, "reply_rate": 0.25}, "task_ids": ["a", "b"]}),
        strength: Strength::Strong,
        confidence: 85,
        status: SuggestionStatus::Pending,
        created_at: now,
        fingerprint: fingerprint.into(),
        source: "weekly_batch".into(),
        change,
        remind_at: None,
        decided_at: None,
        applied: None,
        undone_at: None,
        auto_applied: false,
        version: 1,
    };
    let made = stack.running.store.create_suggestion(&suggestion).await.expect("store");
    assert!(made, "a new fingerprint");
    suggestion.id.to_string()
}

/// Given three pending suggestions, the owner sees each with its evidence as a table;
/// Accept applies one (a memory), which then shows as applied and Undo takes back; Dismiss
/// and Remind me later take the others off the page; another account can decide none.
#[tokio::test]
async fn suggestions_are_accepted_undone_dismissed_and_put_off_on_their_page() {
    let stack = Stack::start("app-suggestions").await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    let account: AccountId = gym.id.parse().expect("account id");
    let memory = |content: &str| ProposedChange::Memory {
        content: content.into(),
        category: Some("pattern".into()),
    };
    let accepted = seeded_suggestion(&stack, account, "memory:a", memory("Members answer in the evening.")).await;
    let dismissed = seeded_suggestion(&stack, account, "memory:b", memory("Mornings are quiet.")).await;
    let prompt = ProposedChange::Prompt {
        agent: "*".into(),
        task_type: None,
        instruction: "Keep it under 80 words.".into(),
    };
    let reminded = seeded_suggestion(&stack, account, "prompt:c", prompt).await;
    let owner = sign_in(&stack, &gym).await;
    let intruder = sign_in(&stack, &rival).await;

    let (status, page) = owner.get("/app/suggestions").await;
    assert_eq!(status, 200, "{page}");
    for id in [&accepted, &dismissed, &reminded] {
        assert!(page.contains(&format!("data-suggestion-id=\"{id}\"")), "{id}: {page}");
    }
    assert!(page.contains("Finding memory:a &#60;em&#62;now&#60;/em&#62;"), "as text: {page}");
    for shown in [
        ">Accept</button>",
        ">Dismiss</button>",
        ">Remind me later</button>",
        "<th scope=\"row\">evening</th><td>12</td><td>100%</td><td>12</td>",
        "<th scope=\"row\">morning</th><td>3</td><td>25%</td><td>12</td>",
        "<dt>tasks</dt><dd>2</dd>",
        "strong evidence",
        "confidence 85%",
        "Nothing applied yet.",
    ] {
        assert!(page.contains(shown), "{shown}: {page}");
    }
    let (_, theirs) = intruder.get("/app/suggestions").await;
    assert!(!theirs.contains(&accepted), "{theirs}");
    let (status, _) = intruder
        .post(&format!("/app/suggestions/{accepted}/accept"), &[("csrf", &intruder.csrf)])
        .await;
    assert_eq!(status, 404, "another account's suggestion");
    let (status, _) = owner.post(&format!("/app/suggestions/{accepted}/accept"), &[]).await;
    assert_eq!(status, 403, "CSRF");

    let (status, to) = owner
        .post(&format!("/app/suggestions/{accepted}/accept"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/suggestions?done=accepted"));
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(memories["memories"][0]["content"], "Members answer in the evening.", "{memories}");
    let (_, page) = owner.get(&to).await;
    let applied = page.split("id=\"applied-heading\"").nth(1).unwrap_or_default();
    assert!(applied.contains(&format!("data-suggestion-id=\"{accepted}\"")), "{page}");
    assert!(
        applied.contains("Applied: saved as a memory") && applied.contains(">Undo</button>"),
        "{page}"
    );
    let (status, page) = owner
        .post_page(&format!("/app/suggestions/{accepted}/accept"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!(status, 422, "accepted once: the API's answer, as a page");
    assert!(page.contains("this suggestion is applied already"), "{page}");

    let (status, to) = owner
        .post(&format!("/app/suggestions/{accepted}/undo"), &[("csrf", &owner.csrf)])
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/suggestions?done=undone"));
    let (_, memories) = stack.get("/api/v1/memories", &gym.token).await;
    assert_eq!(memories["memories"], json!([]), "the memory is taken back");

    for (id, verb, done) in [(&dismissed, "dismiss", "dismissed"), (&reminded, "remind", "reminded")] {
        let (status, to) = owner.post(&format!("/app/suggestions/{id}/{verb}"), &[("csrf", &owner.csrf)]).await;
        assert_eq!((status, to), (303, format!("/app/suggestions?done={done}")));
    }
    let (_, page) = owner.get("/app/suggestions").await;
    for id in [&accepted, &dismissed, &reminded] {
        assert!(!page.contains(id.as_str()), "{id} left the page: {page}");
    }
    assert!(page.contains("Nothing to decide now."), "{page}");
    // A week on, the one put off is back.
    let later = stack.now().await + SignedDuration::from_hours(24 * 8);
    stack.set_clock(&later.to_string()).await;
    let (_, page) = owner.get("/app/suggestions").await;
    assert!(page.contains(&format!("data-suggestion-id=\"{reminded}\"")), "{page}");
    stack.running.stop();
}

/// The settings page shows the trust gradient's and the learning opt-out's switches, and
/// Save keeps what they say.
#[tokio::test]
async fn the_learning_switches_are_saved_from_the_settings_page() {
    let stack = Stack::start("app-learning-settings").await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app/settings").await;
    assert!(
        page.contains("id=\"auto_save_memories\" name=\"auto_save_memories\">"),
        "off by default: {page}"
    );
    assert!(
        page.contains("id=\"share_learning\" name=\"share_learning\" checked>"),
        "on by default: {page}"
    );
    let (status, _) = owner
        .post(
            "/app/settings",
            &[("csrf", &owner.csrf), ("learning", "shown"), ("auto_save_memories", "on")],
        )
        .await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (settings["auto_save_memories"].as_bool(), settings["share_learning"].as_bool()),
        (Some(true), Some(false)),
        "{settings}"
    );
    let (status, _) = owner
        .post("/app/settings", &[("csrf", &owner.csrf), ("daily_send_limit", "25")])
        .await;
    assert_eq!(status, 303);
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (settings["auto_save_memories"].as_bool(), settings["share_learning"].as_bool()),
        (Some(true), Some(false)),
        "a form without the switches leaves them: {settings}"
    );
    stack.running.stop();
}
