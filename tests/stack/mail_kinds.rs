//! Mail a spam filter trusts: one mail of every kind Openloop sends — a first touch of every
//! member-facing task type, a cadence follow-up, an answer written from the owner's guidance, the
//! holding reply to a question only the owner can answer,
//! an owner's notice, the notices' digest, the morning brief and a sign-in link — played
//! through the contract on the local runtime, and read as the very bytes SES is given.
//!
//! Each is checked here for what mailbox providers require of bulk senders (RFC 5322 `Date`,
//! a `Message-ID` on the sending domain, `MIME-Version`, a `text/plain` part, no line of 998
//! octets or more, and on member mail RFC 8058's `List-Unsubscribe` and `List-Unsubscribe-Post`).
//! With `OPENLOOP_MAIL_SAMPLES_DIR` set, each is also written there as `<kind>.eml`: `make
//! test` scores them with Apache SpamAssassin (`infra/spam-check.sh`).

use jiff::SignedDuration;
use mail_parser::{MessageParser, MimeHeaders};
use openloop_tests::{Account, Client, Stack};
use serde_json::json;

use crate::morning;

/// Where a deployment sends from: the operator's domain, the reply domain, the public URL.
const FROM: &str = "outreach@mail.renegade-fitness.com";
const SENDING_DOMAIN: &str = "mail.renegade-fitness.com";

/// The member-facing task types, each with a goal as an owner or a scan writes it.
const FIRST_TOUCHES: [(&str, &str); 7] = [
    (
        "payment_recovery",
        "Her card was declined for the monthly membership; get the payment through",
    ),
    (
        "churn_risk",
        "Dana has not been in for 16 days after three classes a week; bring her back",
    ),
    ("win_back", "Dana cancelled 12 days ago, citing a busy schedule"),
    (
        "lead_followup",
        "Asked about classes on the website two weeks ago and never booked a trial",
    ),
    ("onboarding", "Joined 5 days ago and has checked in once; help her settle in"),
    ("milestone_review", "Reached 50 check-ins this week"),
    ("ad_hoc", "Tell her the Saturday schedule changes next month"),
];

/// One raw mail of a kind, as SES was given it.
struct Sample {
    kind: String,
    raw: Vec<u8>,
    member_mail: bool,
}

fn last_to(stack: &Stack, to: &str) -> Vec<u8> {
    stack
        .running
        .outbox
        .read(Some(to), 0)
        .last()
        .map(|m| m.raw.to_vec())
        .unwrap_or_else(|| panic!("no mail to {to}"))
}

async fn owner_mail_with(stack: &Stack, owner: &str, subject_has: &str) -> Vec<u8> {
    let mail = stack.outbox_to(owner).await;
    let at = mail
        .iter()
        .rposition(|m| m["subject"].as_str().is_some_and(|s| s.contains(subject_has)))
        .unwrap_or_else(|| panic!("no owner mail with {subject_has:?}: {mail:?}"));
    stack.running.outbox.read(Some(owner), at)[0].raw.to_vec()
}

/// A gym with an owner address and a profile, as a new owner sets it up.
async fn gym(stack: &Stack) -> (Account, String) {
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"profile": {"display_name": "CrossFit Renegade", "sign_off": "Coach Mike", "owner_first_name": "Mike"}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    (gym, owner)
}

async fn approve(stack: &Stack, gym: &Account, task_type: &str, member: &str, goal: &str) -> String {
    let body = json!({"task_type": task_type, "member_id": member, "goal": goal, "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
    assert_eq!(status, 200, "{approved}");
    id
}

/// Every kind of mail, played through the contract.
async fn every_kind(stack: &Stack) -> Vec<Sample> {
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let (gym, owner) = gym(stack).await;
    let mut samples = Vec::new();
    let member = |kind: &str, raw: Vec<u8>| Sample {
        kind: kind.into(),
        raw,
        member_mail: true,
    };
    let owners = |kind: &str, raw: Vec<u8>| Sample {
        kind: kind.into(),
        raw,
        member_mail: false,
    };

    // A task waiting for review: its notice goes in the next digest (first, before
    // the day's approval notices are spent).
    stack.member(&gym, "m_kind_review", "Lee", day0).await;
    let body = json!({"task_type": "win_back", "member_id": "m_kind_review", "goal": "Win them back", "confidence": 80});
    let (status, created) = stack.post("/api/v1/tasks", &gym.token, body).await;
    assert_eq!(status, 201, "{created}");

    let mut addresses = Vec::new();
    let mut tasks = Vec::new();
    for (i, (task_type, goal)) in FIRST_TOUCHES.iter().enumerate() {
        let id = format!("m_kind_{i}");
        addresses.push(stack.member(&gym, &id, "Dana", day0).await);
        stack.run().await;
        tasks.push(approve(stack, &gym, task_type, &id, goal).await);
    }
    stack.run().await;
    for ((task_type, _), to) in FIRST_TOUCHES.iter().zip(&addresses) {
        samples.push(member(&format!("first-touch-{task_type}"), last_to(stack, to)));
    }

    // A member's question escalates their task: the owner is told at once.
    let asks = &addresses[1];
    let first = stack.outbox_to(asks).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            &first[0],
            "kind-q@mail.example.net",
            "Do you still run the Saturday 9am class?",
        ))
        .await;
    assert_eq!(status, 202);
    samples.push(owners("owner-notice", owner_mail_with(stack, &owner, "needs you").await));

    // The owner answers through guidance: the answer leaves the next morning.
    let (status, resumed) = stack
        .post(
            &format!("/api/v1/tasks/{}/guidance", tasks[1]),
            &gym.token,
            json!({"text": "Tell her yes, Saturdays at 9 with Coach Dana, and she can bring a friend"}),
        )
        .await;
    assert_eq!(status, 200, "{resumed}");

    let (_, feed) = stack.get("/api/v1/notifications", &gym.token).await;
    let digest_at = feed["notifications"]
        .as_array()
        .and_then(|n| n.iter().find_map(|n| n["digest_at"].as_str().map(str::to_owned)))
        .unwrap_or_else(|| panic!("a notice waits for the digest: {feed}"));
    let before = stack.outbox_to(&owner).await.len();
    stack.set_clock(&digest_at).await;
    stack.run().await;
    let digest = stack
        .running
        .outbox
        .read(Some(&owner), before)
        .into_iter()
        .find(|m| m.subject.as_deref().is_some_and(|s| !s.contains("daily summary")))
        .unwrap_or_else(|| panic!("the digest was mailed at {digest_at}"));
    samples.push(owners("digest", digest.raw.to_vec()));

    stack
        .set_clock(&(day0 + SignedDuration::from_hours(24) + SignedDuration::from_mins(5)).to_string())
        .await;
    stack.run().await;
    let answered = stack.outbox_to(asks).await;
    assert_eq!(answered.len(), 3, "the holding reply, then the answer: {answered:?}");
    samples.push(member("answer", last_to(stack, asks)));
    samples.push(owners("morning-brief", owner_mail_with(stack, &owner, ": Today: ").await));

    // A question only the owner can answer, the next day: the member is told so at once.
    let holds = &addresses[3];
    let first = stack.outbox_to(holds).await;
    let (status, _) = stack
        .inbound(&Client::reply_to(
            &first[0],
            "kind-h@mail.example.net",
            "Is there a sauna at the gym?",
        ))
        .await;
    assert_eq!(status, 202);
    let told = stack.outbox_to(holds).await;
    assert_eq!(told.len(), 2, "the holding reply went: {told:?}");
    samples.push(member("holding-reply", last_to(stack, holds)));

    // A task that hears nothing follows up on its cadence.
    let quiet = &addresses[2];
    stack.run_when_due(&gym, &tasks[2]).await;
    let mail = stack.outbox_to(quiet).await;
    assert_eq!(mail.len(), 2, "the follow-up went: {mail:?}");
    samples.push(member("follow-up", last_to(stack, quiet)));

    let (status, _) = crate::dashboard::ask_for_link(stack, &owner).await;
    assert!(status.is_success(), "{status}");
    samples.push(owners("sign-in-link", owner_mail_with(stack, &owner, "sign-in link").await));
    samples
}

/// What a receiving provider and a spam filter read first, checked on one mail.
fn check(sample: &Sample) -> Result<(), String> {
    let text = String::from_utf8_lossy(&sample.raw);
    if let Some(line) = text.split("\r\n").find(|l| l.len() >= 998) {
        return Err(format!("a line of {} octets", line.len()));
    }
    if text.split("\r\n").any(|l| l.contains('\n')) {
        return Err("a bare LF: lines end in CRLF".into());
    }
    let message = MessageParser::default().parse(&sample.raw[..]).ok_or("the mail does not parse")?;
    let header = |name: &'static str| message.header_raw(name).map(str::trim);
    if header("Date").is_none_or(|d| message.date().is_none() || d.is_empty()) {
        return Err("no RFC 5322 Date".into());
    }
    let id = message.message_id().ok_or("no Message-ID")?;
    if id.rsplit_once('@').map(|(_, domain)| domain) != Some(SENDING_DOMAIN) {
        return Err(format!("Message-ID {id} is not on the sending domain {SENDING_DOMAIN}"));
    }
    if header("MIME-Version") != Some("1.0") {
        return Err("no MIME-Version: 1.0".into());
    }
    if message.from().and_then(|a| a.first()).and_then(|a| a.address()) != Some(FROM) {
        return Err("not from the configured sender".into());
    }
    if message.subject().is_none_or(|s| s.trim().is_empty()) {
        return Err("no subject".into());
    }
    let plain = message.text_body.iter().any(|&part| {
        message.parts.get(part as usize).is_some_and(|p| {
            p.content_type()
                .is_none_or(|t| t.ctype().eq_ignore_ascii_case("text") && t.subtype().is_none_or(|s| s.eq_ignore_ascii_case("plain")))
        })
    });
    if !plain || message.body_text(0).is_none_or(|t| t.trim().is_empty()) {
        return Err("no text/plain part with words in it".into());
    }
    let unsubscribe = header("List-Unsubscribe");
    let one_click = header("List-Unsubscribe-Post");
    if sample.member_mail {
        if !unsubscribe.is_some_and(|u| u.starts_with("<https://") && u.ends_with('>')) {
            return Err(format!("member mail without an https List-Unsubscribe: {unsubscribe:?}"));
        }
        if one_click != Some("List-Unsubscribe=One-Click") {
            return Err(format!("member mail without List-Unsubscribe-Post: {one_click:?}"));
        }
    } else if unsubscribe.is_some() || one_click.is_some() {
        return Err("the owner's mail is not a mailing: no List-Unsubscribe".into());
    }
    Ok(())
}

/// Given a gym set up as a new owner sets it up, when every kind of mail is sent, then each
/// one, as SES is given it, carries the headers and the plain-text part bulk senders must,
/// with no over-long line; and with `OPENLOOP_MAIL_SAMPLES_DIR` set each is written there for
/// the spam filter's score.
#[tokio::test]
async fn every_kind_of_mail_is_well_formed_for_a_spam_filter() {
    let stack = Stack::start_with("mail-kinds", |config| {
        config.from_email = openloop_core::kernel::ids::Email::parse(FROM).unwrap_or_else(|e| panic!("{e}"));
        config.reply_domain = "replies.renegade-fitness.com".into();
        config.public_url = "https://app.renegade-fitness.com".into();
    })
    .await;
    let samples = every_kind(&stack).await;
    let kinds: Vec<&str> = samples.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(samples.len(), FIRST_TOUCHES.len() + 7, "{kinds:?}");
    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            check(s)
                .err()
                .map(|e| format!("{}: {e}\n{}", s.kind, String::from_utf8_lossy(&s.raw)))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    if let Some(dir) = std::env::var_os("OPENLOOP_MAIL_SAMPLES_DIR") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for sample in &samples {
            let path = dir.join(format!("{}.eml", sample.kind));
            std::fs::write(&path, &sample.raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    stack.running.stop();
}

/// Every shipped variant of every first touch (issue 42: members side by side read different
/// ones), each sent to a member whose id picks it, is well formed too; with
/// `OPENLOOP_MAIL_SAMPLES_DIR` set each is written there as `first-touch-<type>-variant-<n>.eml`
/// for the spam filter's score.
#[tokio::test]
async fn every_variant_of_every_first_touch_is_well_formed_for_a_spam_filter() {
    use openloop_core::conversation::messages::{shipped_variants, variant_index, variant_seed};
    let stack = Stack::start_with("mail-kinds-variants", |config| {
        config.from_email = openloop_core::kernel::ids::Email::parse(FROM).unwrap_or_else(|e| panic!("{e}"));
        config.reply_domain = "replies.renegade-fitness.com".into();
        config.public_url = "https://app.renegade-fitness.com".into();
    })
    .await;
    stack.set_clock(&morning(1).to_string()).await;
    let most = FIRST_TOUCHES
        .iter()
        .map(|(t, _)| shipped_variants(t, "first").len())
        .max()
        .unwrap_or(0);
    let mut samples = Vec::new();
    for variant in 0..most {
        // One gym per variant: each sends one first touch of each type.
        let (gym, _) = gym(&stack).await;
        let day0 = stack.now().await;
        let mut sent = Vec::new();
        for (i, (task_type, goal)) in FIRST_TOUCHES.iter().enumerate() {
            let count = shipped_variants(task_type, "first").len();
            if variant >= count {
                continue;
            }
            let id = (0..)
                .map(|k| format!("m_v{variant}_{i}_{k}"))
                .find(|id| variant_index(variant_seed(id), count) == variant)
                .unwrap_or_default();
            let to = stack.member(&gym, &id, "Dana", day0).await;
            stack.run().await;
            approve(&stack, &gym, task_type, &id, goal).await;
            sent.push((*task_type, to));
        }
        stack.run().await;
        for (task_type, to) in sent {
            samples.push(Sample {
                kind: format!("first-touch-{task_type}-variant-{}", variant + 1),
                raw: last_to(&stack, &to),
                member_mail: true,
            });
        }
    }
    assert!(samples.len() >= 3 * FIRST_TOUCHES.len(), "{} samples", samples.len());
    // The member's words, without the footer (its unsubscribe token is the member's own).
    let words: std::collections::BTreeSet<String> = samples
        .iter()
        .filter_map(|s| {
            MessageParser::default()
                .parse(&s.raw)?
                .body_text(0)
                .map(|t| t.split("\n--").next().unwrap_or_default().to_owned())
        })
        .collect();
    assert_eq!(words.len(), samples.len(), "each variant is its own mail");
    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| check(s).err().map(|e| format!("{}: {e}", s.kind)))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if let Some(dir) = std::env::var_os("OPENLOOP_MAIL_SAMPLES_DIR") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for sample in &samples {
            let path = dir.join(format!("{}.eml", sample.kind));
            std::fs::write(&path, &sample.raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    stack.running.stop();
}

/// The check itself refuses what it must: a bare LF, an over-long line, a member mail without
/// its unsubscribe headers, a Message-ID on another domain.
#[test]
fn the_check_refuses_a_malformed_mail() {
    let good = format!(
        "From: Gym <{FROM}>\r\nTo: a@example.com\r\nSubject: Hi\r\nDate: Mon, 2 Nov 2026 14:00:00 +0000\r\n\
         Message-ID: <x@{SENDING_DOMAIN}>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\
         List-Unsubscribe: <https://app.example.com/unsubscribe?token=t>\r\n\
         List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n\r\nHi Dana\r\n"
    );
    let sample = |raw: String, member_mail: bool| Sample {
        kind: "test".into(),
        raw: raw.into_bytes(),
        member_mail,
    };
    assert_eq!(check(&sample(good.clone(), true)), Ok(()));
    let long = good.replace("Hi Dana", &"a".repeat(998));
    for (bad, member_mail) in [
        (good.replace("\r\nHi Dana", "\nHi Dana"), true),
        (long, true),
        (good.replace("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n", ""), true),
        (good.clone(), false),
        (good.replace(&format!("x@{SENDING_DOMAIN}"), "x@elsewhere.example"), true),
        (good.replace("MIME-Version: 1.0\r\n", ""), true),
        (good.replace("Hi Dana\r\n", ""), true),
    ] {
        assert!(check(&sample(bad.clone(), member_mail)).is_err(), "{bad}");
    }
}
