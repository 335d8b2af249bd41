//! `make demo`'s month, played through any running stack over the API (and the local
//! runtime's test clock, runs and outbox): a gym of fifteen members — regulars, three whose
//! payments fail, two who stopped coming weeks ago, one who cancels with a reason, one who
//! joined two days ago, a lead who texts, one nearing a milestone — and an owner who reviews
//! each morning and answers what only they can answer. The members do what members do: pay,
//! promise to come back and come, ask, opt out, text back, book a trial. Each day is told in
//! plain words — what the members did, the tasks opened, what the owner decided, the mail and
//! texts sent, the replies read and what they led to, the tasks closed — then the numbers,
//! month by month, since a month played from late November ends in December.
//!
//! Each run makes a new gym with a name of its own ([`gym_name`]); its members' addresses and
//! phones are its own too, so two demo gyms on one stack never read each other's mail.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::{Account, Client};

/// The names a demo gym takes, the first one not yet taken on the stack; past the list,
/// "Iron Temple 2", "Iron Temple 3", ….
pub const GYM_NAMES: [&str; 5] = [
    "Iron Temple",
    "Northside Barbell",
    "Harbor Strength",
    "Summit CrossFit",
    "Foundry Fitness",
];

/// What Sam answers to his first payment note.
pub const SAMS_REPLY: &str = "Thanks for the heads-up! My card was replaced last week, I'll update it tonight.";

/// Who a demo member is before the month begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Comes every two or three days, and keeps coming.
    Regular,
    /// Came every `every` days until `last` days ago, then stopped.
    Lapsed { every: i64, last: i64 },
    /// Joined `days` ago and has not come yet.
    New { days: i64 },
    /// Signed up on the website today; has a phone and says yes to texts.
    Lead,
    /// Nine check-ins since joining five weeks ago: the next is the tenth.
    NearMilestone,
    /// Signs up by mail three days before the month ends: her follow-up waits for the owner
    /// on the last morning.
    LateLead,
}

/// (id, first name, last name, who they are)
const PEOPLE: [(&str, &str, &str, Kind); 16] = [
    ("mem_1001", "Sarah", "Chen", Kind::Regular),
    ("mem_1002", "Jordan", "Reyes", Kind::Regular),
    ("mem_1003", "Sam", "Okafor", Kind::Regular),
    ("mem_1004", "Maria", "Lopez", Kind::Lapsed { every: 3, last: 20 }),
    ("mem_1005", "Tom", "Becker", Kind::Lapsed { every: 4, last: 26 }),
    ("mem_1006", "Chris", "Ward", Kind::Regular),
    ("mem_1007", "Priya", "Shah", Kind::New { days: 2 }),
    ("mem_1008", "Dana", "Kim", Kind::Lead),
    ("mem_1009", "Ben", "Turner", Kind::NearMilestone),
    ("mem_1010", "Emma", "Walsh", Kind::Regular),
    ("mem_1011", "Noah", "Patel", Kind::Regular),
    ("mem_1012", "Olivia", "Brooks", Kind::Regular),
    ("mem_1013", "Liam", "Carter", Kind::Regular),
    ("mem_1014", "Ava", "Nguyen", Kind::Regular),
    ("mem_1015", "Ethan", "Moore", Kind::Regular),
    ("mem_1016", "Zoe", "Martin", Kind::LateLead),
];

/// Emma stops coming the day the month begins: by its third week she is at risk.
const STOPS_COMING: &str = "mem_1010";

/// Chris cancels on the first day.
const CANCELS: &str = "mem_1006";

/// Chris's reason for cancelling, as the front desk wrote it.
const CHRIS_REASON: &str = "My work schedule changed and I can't make the evening classes anymore";

/// What the owner tells the agent to answer, for the members whose questions only the owner
/// can answer.
fn guidance_for(member: &str) -> Option<&'static str> {
    match member {
        "mem_1008" => Some("Your first class is free: just bring water and sneakers. Saturday at 9am is a great one to start with."),
        "mem_1007" => Some("The beginner class is Saturdays at 9am with Coach Ray, and you can just drop in."),
        _ => None,
    }
}

/// What a played month left: the gym and its name, every mail and text sent to its members,
/// the tasks by status and outcome, and each month's scorecard (`YYYY-MM`, the API's body).
pub struct Played {
    pub gym: Account,
    pub name: String,
    /// Every mail and text sent to the gym's members, oldest first.
    pub sent: Vec<Value>,
    pub texts: usize,
    pub by_status: BTreeMap<String, usize>,
    pub by_type: BTreeMap<String, usize>,
    pub by_outcome: BTreeMap<String, usize>,
    pub scorecards: Vec<(String, Value)>,
}

/// The first of [`GYM_NAMES`] (then "Iron Temple 2", …) that no account on the stack has,
/// and its number among the demo's names (0 for the first).
pub fn gym_name(taken: &BTreeSet<String>) -> (String, usize) {
    (0..)
        .map(|i| match GYM_NAMES.get(i) {
            Some(name) => ((*name).to_owned(), i),
            None => (format!("{} {}", GYM_NAMES[0], i - GYM_NAMES.len() + 2), i),
        })
        .find(|(name, _)| !taken.contains(name))
        .unwrap_or_else(|| (GYM_NAMES[0].to_owned(), 0))
}

/// A task type in the owner's words.
pub fn kind_of_task(task_type: &str) -> &str {
    match task_type {
        "payment_recovery" => "payment recovery",
        "churn_risk" => "at-risk check-in",
        "win_back" => "win-back",
        "lead_followup" => "lead follow-up",
        "onboarding" => "onboarding",
        "milestone_review" => "milestone",
        "ad_hoc" => "note of the owner's",
        "staff_call_member" => "call to make",
        "member_update" => "member tag",
        "bulk_tag_at_risk" => "tag for the members at risk",
        "monthly_churn_analysis" => "churn report",
        other => other,
    }
}

/// One demo member as the gym knows them.
struct Member {
    id: &'static str,
    first: &'static str,
    full: String,
    email: String,
    phone: Option<String>,
    kind: Kind,
}

/// The gym being played: the account, its members, and what the demo has already told.
struct Gym<'a> {
    client: &'a Client,
    account: Account,
    members: Vec<Member>,
    /// The outbox entries read so far (the whole stack's), and this gym's of them.
    outbox_seen: usize,
    sent: Vec<Value>,
    texts_seen: usize,
    texts: usize,
    /// Each task's status and outcome as last told.
    tasks: BTreeMap<String, (String, Option<String>)>,
}

impl Gym<'_> {
    fn member(&self, id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.id == id)
    }

    fn by_address(&self, to: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.email == to || m.phone.as_deref() == Some(to))
    }

    async fn event(&self, id: &str, body: Value) -> Result<(), String> {
        accepted(self.client.webhook(&self.account, id, body).await)
    }

    /// The member's latest mail from the gym.
    async fn last_mail_to(&self, member: &Member) -> Option<Value> {
        let path = format!("/_local/outbox?to={}", member.email.replace('+', "%2B").replace('@', "%40"));
        let (_, body) = self.client.call(reqwest::Method::GET, &path, None, None).await;
        body.as_array().and_then(|m| m.last().cloned())
    }

    /// Every task of the gym, newest first.
    async fn all_tasks(&self) -> Vec<Value> {
        let (_, body) = self.client.get("/api/v1/tasks?limit=200", &self.account.token).await;
        body["tasks"].as_array().cloned().unwrap_or_default()
    }

    /// What a reply to `task` led to: the first decision after the task read it.
    async fn led_to(&self, task: Option<&str>) -> String {
        let Some(task) = task else {
            return "it matched no conversation".into();
        };
        let (_, body) = self.client.get(&format!("/api/v1/tasks/{task}"), &self.account.token).await;
        let log = body["log"].as_array().cloned().unwrap_or_default();
        let read = log.iter().rposition(|e| e["reason"] == "member_replied");
        let next: Vec<&str> = read
            .map(|i| &log[i + 1..])
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e["reason_text"].as_str())
            .take(1)
            .collect();
        let what = next.first().copied().unwrap_or("the conversation goes on");
        match body["escalation"]["question"].as_str() {
            Some(q) if body["status"] == "escalated" => format!("{what}: the owner is asked {q:?}"),
            _ => what.to_owned(),
        }
    }

    /// The member answers their latest mail.
    async fn reply(&self, day: i64, member_id: &str, text: &str, say: &mut dyn FnMut(String)) -> Result<(), String> {
        let Some(member) = self.member(member_id) else {
            return Ok(());
        };
        let Some(mail) = self.last_mail_to(member).await else {
            return Ok(());
        };
        let tag = self.account.id.to_ascii_lowercase();
        let raw = Client::reply_to(&mail, &format!("{}-{day}-{tag}@mail.example.com", member.id), text);
        let (status, body) = self.client.inbound(&raw).await;
        accepted((status, body.clone()))?;
        self.client.run().await;
        say(format!("Day {day:>2}: {} answers by mail: {text:?}", member.first));
        say(format!("        → {}", self.led_to(body["task_id"].as_str()).await));
        Ok(())
    }

    /// The member texts the gym's number.
    async fn text_back(&self, day: i64, member_id: &str, text: &str, say: &mut dyn FnMut(String)) -> Result<(), String> {
        let Some(member) = self.member(member_id) else {
            return Ok(());
        };
        let Some(phone) = member.phone.clone() else {
            return Ok(());
        };
        let (_, texts) = self
            .client
            .call(reqwest::Method::GET, "/_local/outbox?channel=sms", None, None)
            .await;
        let Some(last) = texts
            .as_array()
            .and_then(|t| t.iter().rev().find(|t| t["to"].as_str() == Some(phone.as_str())).cloned())
        else {
            return Ok(());
        };
        let (status, body) = self
            .client
            .call(
                reqwest::Method::POST,
                "/_local/inbound-sms",
                None,
                Some(json!({"from": phone, "to": last["from"], "body": text})),
            )
            .await;
        accepted((status, body.clone()))?;
        self.client.run().await;
        say(format!("Day {day:>2}: {} texts back: {text:?}", member.first));
        say(format!("        → {}", self.led_to(body["task_id"].as_str()).await));
        Ok(())
    }

    /// The owner's morning: the review queue (all approved but Sarah's payment note on the
    /// first day, which she handled herself), then the escalations they can answer, with the
    /// to-do each one made marked done. On `leave_review`, the queue is left for the
    /// dashboard.
    async fn owners_morning(&self, day: i64, leave_review: bool, say: &mut dyn FnMut(String)) -> Result<(), String> {
        let token = &self.account.token;
        // The morning brief first, as the owner's mail brings it.
        let date = self.client.now().await.to_zoned(crate::new_york()).date();
        let (status, brief) = self.client.get(&format!("/api/v1/brief?date={date}"), token).await;
        if status == 200 {
            let first: Vec<String> = texts_of(&brief["actions"], "title");
            if !first.is_empty() {
                say(format!("Day {day:>2}: the morning brief says do first: {}", first.join("; ")));
            }
        }
        let (_, review) = self.client.get("/api/v1/tasks?status=pending_review", token).await;
        let queue = review["tasks"].as_array().cloned().unwrap_or_default();
        if day == 0 || !queue.is_empty() {
            let mut types: BTreeMap<&str, usize> = BTreeMap::new();
            for task in &queue {
                *types.entry(kind_of_task(task["task_type"].as_str().unwrap_or("?"))).or_default() += 1;
            }
            let types: Vec<String> = types.iter().map(|(t, n)| format!("{n} {t}")).collect();
            let waiting = match queue.len() {
                1 => "1 task waits".to_owned(),
                n => format!("{n} tasks wait"),
            };
            say(format!("Day {day:>2}: {waiting} for review ({})", types.join(", ")));
        }
        if leave_review {
            if !queue.is_empty() {
                say("        the owner leaves them for the dashboard".into());
            }
        } else {
            let mut approved = Vec::new();
            for task in &queue {
                let id = task["id"].as_str().unwrap_or_default();
                let who = first_name(task);
                if day == 0 && task["member"]["id"] == "mem_1001" && task["task_type"] == "payment_recovery" {
                    self.client
                        .post(
                            &format!("/api/v1/tasks/{id}/skip"),
                            token,
                            json!({"reason": "she called the front desk"}),
                        )
                        .await;
                    say(format!(
                        "        the owner skips {who}'s payment note: she already called the front desk"
                    ));
                } else {
                    // A note of her own she writes in her own words (with no model, the draft of a
                    // free-form goal is a general hello); its follow-up, held for her because she
                    // rewrote the first, in her words too (never the first again); the last as
                    // the agent drafted it.
                    let body = match task["touch"].as_u64().unwrap_or(0) {
                        0 => Some(format!(
                            "Hi {who},\n\nWe're starting a Saturday team workout at 10am and I'd love you in it. Fancy it?\n\nCoach Rachel"
                        )),
                        1 => Some(format!(
                            "Hi {who},\n\nJust making sure you saw my note about the Saturday team workout. No pressure either way!\n\nCoach Rachel"
                        )),
                        _ => None,
                    };
                    let own = body
                        .filter(|_| task["task_type"] == "ad_hoc")
                        .map(|body| json!({"draft": {"subject": "Saturday team workout", "body": body}}));
                    let (status, body) = self
                        .client
                        .post(&format!("/api/v1/tasks/{id}/approve"), token, own.unwrap_or_else(|| json!({})))
                        .await;
                    if status == 200 {
                        approved.push(format!("{who}'s {}", kind_of_task(task["task_type"].as_str().unwrap_or("?"))));
                    } else {
                        say(format!("        approving {who}'s task was refused: {status} {body}"));
                    }
                }
            }
            if !approved.is_empty() {
                say(format!("        the owner approves {}", join(&approved)));
            }
        }
        let (_, escalated) = self.client.get("/api/v1/tasks?status=escalated", token).await;
        for task in escalated["tasks"].as_array().cloned().unwrap_or_default() {
            let (id, member) = (
                task["id"].as_str().unwrap_or_default(),
                task["member"]["id"].as_str().unwrap_or_default(),
            );
            let Some(text) = guidance_for(member) else { continue };
            let (status, body) = self
                .client
                .post(&format!("/api/v1/tasks/{id}/guidance"), token, json!({"text": text}))
                .await;
            if status != 200 {
                say(format!(
                    "        guidance on {}'s task was refused: {status} {body}",
                    first_name(&task)
                ));
                continue;
            }
            say(format!("        the owner answers {}'s question: {text:?}", first_name(&task)));
            let (_, todos) = self.client.get("/api/v1/todos", token).await;
            for todo in todos["todos"].as_array().cloned().unwrap_or_default() {
                if todo["task_id"].as_str() == Some(id) {
                    let todo_id = todo["id"].as_str().unwrap_or_default();
                    self.client
                        .post(
                            &format!("/api/v1/todos/{todo_id}/done"),
                            token,
                            json!({"note": "answered through the agent"}),
                        )
                        .await;
                    say(format!("        and ticks off the to-do {:?}", todo["what"].as_str().unwrap_or("")));
                }
            }
        }
        Ok(())
    }

    /// What happened since the last telling: tasks opened, mail and texts sent, tasks closed.
    async fn tell(&mut self, day: i64, say: &mut dyn FnMut(String)) {
        let mut lines = Vec::new();
        let tasks = self.all_tasks().await;
        for task in tasks.iter().rev() {
            let id = task["id"].as_str().unwrap_or_default().to_owned();
            let status = task["status"].as_str().unwrap_or("?").to_owned();
            let outcome = task["outcome"].as_str().map(str::to_owned);
            let kind = kind_of_task(task["task_type"].as_str().unwrap_or("?")).to_owned();
            let who = first_name(task);
            match self.tasks.get(&id) {
                None => lines.push(format!("new {kind} task for {who}: {}", task["goal"].as_str().unwrap_or(""))),
                Some((before, before_outcome)) if *before != status || *before_outcome != outcome => {
                    if closed(&status) || outcome.is_some() && *before_outcome != outcome {
                        lines.push(format!(
                            "{who}'s {kind} closes: {}{}",
                            outcome.as_deref().unwrap_or(&status).replace('_', " "),
                            if task["provisional"] == true {
                                " (provisional until it shows)"
                            } else {
                                ""
                            }
                        ));
                    } else if status == "escalated" {
                        lines.push(format!("{who}'s {kind} is handed to the owner"));
                    }
                }
                _ => {}
            }
            self.tasks.insert(id, (status, outcome));
        }
        let path = format!("/_local/outbox?after={}", self.outbox_seen);
        let (_, mail) = self.client.call(reqwest::Method::GET, &path, None, None).await;
        let mail = mail.as_array().cloned().unwrap_or_default();
        self.outbox_seen += mail.len();
        for m in mail {
            if let Some(member) = self.by_address(m["to"].as_str().unwrap_or_default()) {
                lines.push(format!("mail to {}: {:?}", member.full, m["subject"].as_str().unwrap_or("")));
                self.sent.push(m);
            }
        }
        let (_, texts) = self
            .client
            .call(reqwest::Method::GET, "/_local/outbox?channel=sms", None, None)
            .await;
        let texts = texts.as_array().cloned().unwrap_or_default();
        for t in texts.iter().skip(self.texts_seen) {
            if let Some(member) = self.by_address(t["to"].as_str().unwrap_or_default()) {
                lines.push(format!(
                    "text to {}: {:?}",
                    member.full,
                    excerpt(t["body"].as_str().unwrap_or(""), 90)
                ));
                self.texts += 1;
                self.sent.push(t.clone());
            }
        }
        self.texts_seen = texts.len();
        for line in lines {
            say(format!("Day {day:>2}: {line}"));
        }
    }
}

fn closed(status: &str) -> bool {
    matches!(status, "completed" | "cancelled")
}

fn first_name(task: &Value) -> String {
    if task["member"]["id"] == "_account" {
        return "the gym".to_owned();
    }
    task["member"]["name"]
        .as_str()
        .and_then(|n| n.split_whitespace().next())
        .unwrap_or("a member")
        .to_owned()
}

/// The `field` of each object in `list` that has it as text.
fn texts_of(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item[field].as_str().map(str::to_owned))
        .collect()
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn excerpt(text: &str, chars: usize) -> String {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= chars {
        text
    } else {
        format!("{}…", text.chars().take(chars).collect::<String>())
    }
}

/// Play `days` days (from 09:00 New York on the day after the clock's today), telling what
/// happens through `say`. On the last day of a month (more than three days) the owner leaves
/// the review queue for the dashboard. An error says what the stack refused.
pub async fn play(client: &Client, days: i64, say: &mut dyn FnMut(String)) -> Result<Played, String> {
    let (status, accounts) = client.get("/api/v1/accounts", &client.admin_token).await;
    if status != 200 {
        return Err(format!("the stack refused the admin token: {status} {accounts}"));
    }
    let taken: BTreeSet<String> = texts_of(&accounts["accounts"], "name").into_iter().collect();
    let (name, number) = gym_name(&taken);
    let today = client.now().await.to_zoned(jiff::tz::TimeZone::UTC).date();
    let start = crate::nine_in_new_york(today.tomorrow().unwrap_or(today));
    advance_to(client, start).await?;
    let mut gym = open_gym(client, &name, number, start).await?;
    say(format!(
        "Demo gym {name} ({}): {} members; manual mode, so the owner approves every first message",
        gym.account.id,
        gym.members.iter().filter(|m| m.kind != Kind::LateLead).count()
    ));
    say("        regulars; Maria and Tom stopped coming weeks ago; Priya joined two days ago; Ben is one check-in from his 10th; Dana, a lead, signs up today with her phone and says yes to texts".into());
    let (_, outbox) = client.call(reqwest::Method::GET, "/_local/outbox", None, None).await;
    gym.outbox_seen = outbox.as_array().map_or(0, Vec::len);
    let (_, texts) = client.call(reqwest::Method::GET, "/_local/outbox?channel=sms", None, None).await;
    gym.texts_seen = texts.as_array().map_or(0, Vec::len);

    for day in 0..days {
        // Two runs a day in New York: the morning, when first touches go, and the afternoon,
        // when follow-ups do. What members do happens around them.
        let morning = start + SignedDuration::from_hours(24 * day);
        advance_to(client, morning).await?;
        members_morning(&gym, day, days, morning, say).await?;
        client.run().await;
        gym.tell(day, say).await;
        gym.owners_morning(day, day == days - 1 && days > 3, say).await?;
        client.run().await;
        gym.tell(day, say).await;
        advance_to(client, morning + SignedDuration::from_hours(5)).await?;
        members_afternoon(&gym, day, say).await?;
        if day == 3 {
            owners_own_tasks(&gym, say).await?;
        }
        client.run().await;
        gym.tell(day, say).await;
    }

    let (mut by_status, mut by_type, mut by_outcome) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for task in gym.all_tasks().await {
        *by_status.entry(task["status"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
        *by_type.entry(task["task_type"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
        if let Some(outcome) = task["outcome"].as_str() {
            *by_outcome.entry(outcome.to_owned()).or_default() += 1;
        }
    }
    // What the outreach caused, as the lift page says it (the demo gym holds nobody out).
    let (status, lift) = client.get("/api/v1/lift", &gym.account.token).await;
    if status == 200 {
        for group in lift["groups"].as_array().into_iter().flatten() {
            say(format!(
                "Lift, {}: {}",
                kind_of_task(group["task_type"].as_str().unwrap_or("?")),
                group["verdict"].as_str().unwrap_or_default()
            ));
        }
    }
    let end = start + SignedDuration::from_hours(24 * (days - 1) + 5);
    let mut scorecards = Vec::new();
    for month in months_between(start, end) {
        let (status, card) = client.get(&format!("/api/v1/scorecard?month={month}"), &gym.account.token).await;
        if status != 200 {
            return Err(format!("the scorecard of {month}: {status} {card}"));
        }
        scorecards.push((month, card));
    }
    Ok(Played {
        gym: gym.account.clone(),
        name,
        sent: gym.sent.clone(),
        texts: gym.texts,
        by_status,
        by_type,
        by_outcome,
        scorecards,
    })
}

/// The account, its settings and facts, and its members with the history they bring.
async fn open_gym<'a>(client: &'a Client, name: &str, number: usize, start: Timestamp) -> Result<Gym<'a>, String> {
    let slug: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let body = json!({"name": name, "timezone": "America/New_York", "execution_mode": "manual",
        "onboarded_at": "2026-10-01T00:00:00Z",
        "profile": {"display_name": name, "owner_first_name": "Rachel", "sign_off": format!("Coach Rachel, {name}"),
            "business_type": "strength and conditioning gym", "class_types": ["WOD", "Olympic lifting", "Beginners"],
            "contact_phone": "+1 555 010 2000", "contact_website": format!("https://{slug}.example")}});
    let (status, created) = client.post("/api/v1/accounts", &client.admin_token, body).await;
    if status != 201 {
        return Err(format!("the stack refused the demo gym: {status} {created}"));
    }
    let account = Account {
        id: created["account_id"].as_str().unwrap_or_default().to_owned(),
        token: created["api_token"].as_str().unwrap_or_default().to_owned(),
        webhook_secret: created["webhook_secret"].as_str().unwrap_or_default().to_owned(),
    };
    let gym_number = format!("+1888555{:04}", number % 10_000);
    let settings = json!({"owner_email": format!("rachel@{slug}.example"),
        "sms": {"enabled": true, "origination_identity": gym_number, "daily_limit": 50}});
    let (status, body) = client
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&account.token), Some(settings))
        .await;
    if status != 200 {
        return Err(format!("the stack refused the demo gym's settings: {status} {body}"));
    }
    // The gym's own facts, for the agent to answer from.
    let (status, body) = client
        .post(
            "/api/v1/memories",
            &account.token,
            json!({"content": "The first class is free for anyone new; bring water and sneakers.", "category": "faq"}),
        )
        .await;
    if status != 201 {
        return Err(format!("the stack refused the gym's facts: {status} {body}"));
    }
    // The second demo gym's members write from addresses of their own.
    let suffix = if number == 0 { String::new() } else { (number + 1).to_string() };
    let members: Vec<Member> = PEOPLE
        .iter()
        .enumerate()
        .map(|(k, (id, first, last, kind))| Member {
            id,
            first,
            full: format!("{first} {last}"),
            email: format!("{}.{}{suffix}@example.com", first.to_ascii_lowercase(), last.to_ascii_lowercase()),
            phone: (*kind == Kind::Lead).then(|| format!("+1555{:03}{:04}", number % 1000, 100 + k)),
            kind: *kind,
        })
        .collect();
    let gym = Gym {
        client,
        account,
        members,
        outbox_seen: 0,
        sent: Vec::new(),
        texts_seen: 0,
        texts: 0,
        tasks: BTreeMap::new(),
    };
    let ago = |days: i64| start - SignedDuration::from_hours(24 * days);
    // What the gym knew before the month: stamped before its first morning, so the morning's
    // own events (Chris's cancellation) come after it.
    let at = (start - SignedDuration::from_hours(2)).to_string();
    for (k, m) in gym.members.iter().enumerate() {
        let (status, joined, value) = match m.kind {
            Kind::LateLead => continue,
            Kind::Lead => ("lead", ago(0), None),
            Kind::New { days } => ("active", ago(days), Some(150)),
            Kind::NearMilestone => ("active", ago(38), Some(150)),
            Kind::Regular | Kind::Lapsed { .. } => ("active", ago(200 + 37 * k as i64), Some(if k % 4 == 0 { 190 } else { 150 })),
        };
        let mut data = json!({"member_id": m.id, "email": m.email, "first_name": m.first,
            "last_name": m.full.split_whitespace().nth(1), "status": status, "joined_at": joined.to_string()});
        if let Some(value) = value {
            data["monthly_value"] = json!(value);
        }
        if let Some(phone) = &m.phone {
            data["phone"] = json!(phone);
        }
        gym.event(
            &format!("join-{}", m.id),
            json!({"type": "member.created", "timestamp": at, "data": data}),
        )
        .await?;
        let history: Vec<i64> = match m.kind {
            Kind::Regular => (0..12).map(|j| 1 + (k as i64 % 2) + 3 * j).collect(),
            Kind::Lapsed { every, last } => (0..12).map(|j| last + every * j).collect(),
            Kind::NearMilestone => (0..9).map(|j| 2 + 4 * j).collect(),
            Kind::New { .. } | Kind::Lead | Kind::LateLead => Vec::new(),
        };
        for (j, days) in history.iter().rev().enumerate() {
            gym.event(&format!("hist-{}-{j}", m.id), checkin(m.id, ago(*days), &at)).await?;
        }
        if m.phone.is_some() {
            // The member event is queued: the member is known once the stack has taken it.
            for _ in 0..100 {
                let (status, _) = client.get(&format!("/api/v1/members/{}", m.id), &gym.account.token).await;
                if status == 200 {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let (status, body) = client
                .post(
                    &format!("/api/v1/members/{}/consent", m.id),
                    &gym.account.token,
                    json!({"sms": true, "source": "member"}),
                )
                .await;
            if status != 200 {
                return Err(format!("the stack refused {}'s consent to texts: {status} {body}", m.first));
            }
        }
    }
    Ok(gym)
}

/// Day 3's afternoon: the owner opens tasks of her own — a note to a member in her words, a
/// call only she can make, a tag, a tag for everyone at risk and the month's churn report —
/// each waiting for her review the next morning like any other.
async fn owners_own_tasks(gym: &Gym<'_>, say: &mut dyn FnMut(String)) -> Result<(), String> {
    let asks = [
        ("ad_hoc", "mem_1012", "Invite Olivia to the Saturday team workout", json!([])),
        (
            "staff_call_member",
            "mem_1009",
            "Call Ben about how his knee is holding up",
            json!([]),
        ),
        (
            "member_update",
            "mem_1012",
            "Tag Olivia as a team-workout regular",
            json!([{"type": "tag_member", "tag": "team-workout"}]),
        ),
    ];
    let mut opened = Vec::new();
    for (task_type, member, goal, actions) in asks {
        let mut body = json!({"task_type": task_type, "member_id": member, "goal": goal, "confidence": 80});
        if actions.as_array().is_some_and(|a| !a.is_empty()) {
            body["actions"] = actions;
        }
        let (status, created) = gym.client.post("/api/v1/tasks", &gym.account.token, body).await;
        if status != 201 {
            return Err(format!("the owner's {task_type} task was refused: {status} {created}"));
        }
        opened.push(format!("{} (\"{goal}\")", kind_of_task(task_type)));
    }
    // And two of the whole gym's, as recurring templates run at once: a tag for everyone at
    // risk, and the month's churn report.
    for (task_type, goal) in [
        ("bulk_tag_at_risk", "Tag everyone at risk of leaving"),
        ("monthly_churn_analysis", "The churn report so far"),
    ] {
        let token = &gym.account.token;
        let (status, template) = gym
            .client
            .post(
                "/api/v1/recurring",
                token,
                json!({"task_type": task_type, "cron": "0 8 1 * *", "goal": goal}),
            )
            .await;
        if status != 201 {
            return Err(format!("the owner's {task_type} template was refused: {status} {template}"));
        }
        let id = template["id"].as_str().unwrap_or_default();
        let (status, ran) = gym.client.post(&format!("/api/v1/recurring/{id}/run-now"), token, json!({})).await;
        if status != 200 {
            return Err(format!("running the {task_type} template now was refused: {status} {ran}"));
        }
        opened.push(format!(
            "{} (\"{goal}\", now and on the 1st of each month)",
            kind_of_task(task_type)
        ));
    }
    say(format!("Day  3: the owner opens tasks of her own: {}", join(&opened)));
    Ok(())
}

fn checkin(member: &str, at: Timestamp, now: &str) -> Value {
    json!({"type": "checkin.created", "timestamp": now,
        "data": {"member_id": member, "checked_in_at": at.to_string(), "class_name": "WOD"}})
}

fn payment(kind: &str, member: &str, now: &str) -> Value {
    if kind == "failed" {
        json!({"type": "payment.failed", "timestamp": now, "data": {"member_id": member, "amount": 150, "currency": "USD", "failed_at": now, "reason": "card_declined"}})
    } else {
        json!({"type": "payment.succeeded", "timestamp": now, "data": {"member_id": member, "amount": 150, "currency": "USD", "paid_at": now}})
    }
}

/// What the members do in the morning, before the day's first run.
async fn members_morning(gym: &Gym<'_>, day: i64, days: i64, now: Timestamp, say: &mut dyn FnMut(String)) -> Result<(), String> {
    let at = now.to_string();
    let mut came = Vec::new();
    // The regulars come every third day, a third of them each morning; Emma stops at first
    // (and comes back once she is asked), Chris cancels; the members the month brings in join
    // them once they have started.
    for (k, m) in gym.members.iter().enumerate() {
        let from = match m.id {
            STOPS_COMING => 17,
            CANCELS => i64::MAX,
            "mem_1007" => 3,
            "mem_1004" => 5,
            "mem_1008" => 6,
            "mem_1009" => 3,
            _ if m.kind == Kind::Regular => 1,
            _ => i64::MAX,
        };
        if day >= from && ((day + k as i64) % 3 == 0 || (from > 1 && day == from)) {
            gym.event(&format!("in-{}-{day}", m.id), checkin(m.id, now, &at)).await?;
            came.push(m.first.to_owned());
        }
    }
    match day {
        0 => {
            for id in ["mem_1001", "mem_1002", "mem_1003"] {
                gym.event(&format!("pay-{id}"), payment("failed", id, &at)).await?;
            }
            say("Day  0: Sarah's, Jordan's and Sam's card payments are declined".into());
            let data =
                json!({"member_id": "mem_1006", "status": "cancelled", "previous_status": "active", "cancellation_reason": CHRIS_REASON});
            gym.event(
                "cancel-mem_1006",
                json!({"type": "member.status_changed", "timestamp": at, "data": data}),
            )
            .await?;
            say(format!("Day  0: Chris cancels his membership: {CHRIS_REASON:?}"));
            say("Day  0: Dana signs up on the website as a lead".into());
        }
        1 => {
            gym.event("paid-mem_1002", payment("succeeded", "mem_1002", &at)).await?;
            say("Day  1: Jordan updates his card; the payment goes through".into());
            gym.event("paid-mem_1001", payment("succeeded", "mem_1001", &at)).await?;
            say("Day  1: Sarah pays at the front desk, as she told them she would".into());
        }
        2 => {
            gym.event("paid-mem_1003", payment("succeeded", "mem_1003", &at)).await?;
            say("Day  2: Sam's payment goes through".into());
        }
        3 => say("Day  3: Ben checks in for the 10th time".into()),
        4 => {
            let booked = now + SignedDuration::from_hours(24 * 2);
            let data = json!({"member_id": "mem_1008", "booked_for": booked.to_string()});
            gym.event("trial-mem_1008", json!({"type": "trial.booked", "timestamp": at, "data": data}))
                .await?;
            say("Day  4: Dana books her free first class for Saturday".into());
        }
        _ => {}
    }
    if day == days - 3 && days > 5 {
        let data = json!({"member_id": "mem_1016", "email": gym.member("mem_1016").map(|m| m.email.clone()),
            "first_name": "Zoe", "last_name": "Martin", "status": "lead", "joined_at": at});
        gym.event("join-mem_1016", json!({"type": "member.created", "timestamp": at, "data": data}))
            .await?;
        say(format!(
            "Day {day:>2}: Zoe asks about memberships through the website's form: a new lead"
        ));
    }
    if day == days - 1 && days > 3 {
        for id in ["mem_1011", "mem_1014"] {
            gym.event(&format!("pay-{id}"), payment("failed", id, &at)).await?;
        }
        say(format!("Day {day:>2}: Noah's and Ava's card payments are declined"));
    }
    if !came.is_empty() {
        say(format!("Day {day:>2}: checked in: {}", came.join(", ")));
    }
    Ok(())
}

/// What the members answer in the afternoon, to what they were sent.
async fn members_afternoon(gym: &Gym<'_>, day: i64, say: &mut dyn FnMut(String)) -> Result<(), String> {
    match day {
        1 => {
            gym.reply(day, "mem_1003", SAMS_REPLY, say).await?;
            gym.reply(
                day,
                "mem_1007",
                "Thanks so much! What time is the beginner class on Saturdays?",
                say,
            )
            .await?;
        }
        2 => {
            gym.reply(day, "mem_1004", "Hi! Work has been crazy, but I'll be back Monday at 6am.", say)
                .await?;
            gym.text_back(
                day,
                "mem_1008",
                "Hi! Is the first class really free? Do I need to bring anything?",
                say,
            )
            .await?;
        }
        4 => gym.reply(day, "mem_1005", "Please take me off your list.", say).await?,
        _ => {}
    }
    Ok(())
}

/// Every month (`YYYY-MM`, New York) from `from`'s to `to`'s.
pub fn months_between(from: Timestamp, to: Timestamp) -> Vec<String> {
    let tz = crate::new_york();
    let (mut month, last) = (
        from.to_zoned(tz.clone()).date().first_of_month(),
        to.to_zoned(tz).date().first_of_month(),
    );
    let mut months = Vec::new();
    while month <= last {
        months.push(month.strftime("%Y-%m").to_string());
        match month.checked_add(jiff::ToSpan::month(1)) {
            Ok(next) => month = next,
            Err(_) => break,
        }
    }
    months
}

fn accepted((status, body): (u16, Value)) -> Result<(), String> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(format!("the stack refused a demo event: {status} {body}"))
    }
}

/// Move the test clock to `at`. The clock flows with real time between the demo's calls, so
/// an instant it planned (the first day's morning, set a moment ago) may already be behind it:
/// that is where the clock should be anyway, and the demo goes on from its now.
async fn advance_to(client: &Client, at: Timestamp) -> Result<(), String> {
    let (status, body) = client
        .call(reqwest::Method::POST, "/_local/clock", None, Some(json!({"now": at.to_string()})))
        .await;
    match (status, body["error"]["code"].as_str()) {
        (200, _) | (409, Some("clock_backwards")) => Ok(()),
        _ => Err(format!("the stack refused to move its clock to {at}: {status} {body}")),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{gym_name, months_between};

    #[test]
    fn a_month_from_late_november_spans_two_months() {
        let from: jiff::Timestamp = "2026-11-28T14:00:00Z".parse().expect("time");
        let to: jiff::Timestamp = "2026-12-27T19:00:00Z".parse().expect("time");
        assert_eq!(months_between(from, to), ["2026-11", "2026-12"]);
        assert_eq!(months_between(from, from), ["2026-11"]);
    }

    #[test]
    fn each_demo_gym_takes_a_name_no_other_account_has() {
        let mut taken = BTreeSet::from(["CrossFit Renegade".to_owned()]);
        let mut names = Vec::new();
        for _ in 0..7 {
            let (name, _) = gym_name(&taken);
            assert!(taken.insert(name.clone()), "{name} twice");
            names.push(name);
        }
        assert_eq!(names[0], "Iron Temple");
        assert_eq!(names[1], "Northside Barbell");
        assert_eq!(names[5], "Iron Temple 2");
        assert_eq!(names[6], "Iron Temple 3");
    }
}
