//! The morning brief: one short read a day
//! of who to call and what to do. At most three "do this now" actions first, ranked by the
//! value at stake and how late they are; then the to-dos due, the members at risk (by monthly
//! value, then days since their last check-in), payment trouble, yesterday's results and what
//! the agent plans today. Lists are capped; what is left is counted for "see all".
//!
//! Pure: `engine/day/brief/` reads what goes in; this composes it, and writes the mail. The same
//! [`Brief`] is the API's body, the dashboard's `/app/today` and the mail at `brief_hour`,
//! which replaces the daily digest (one mail a day).

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::kernel::ids::{MemberId, TaskId};
use crate::kernel::plural::{count, count_of, dollars};
use crate::owner::action_link::{LinkItem, Links, PAYMENT_ACTIONS, SUGGESTION_ACTIONS, TODO_ACTIONS, task_actions};
use crate::task::todo::Todo;

/// The most actions, and the most entries of each list, a brief shows.
pub const BRIEF_ACTIONS: usize = 3;
pub const BRIEF_LIST: usize = 5;
/// The most items of the review queue a brief carries links for, each under its member's name
/// (its title names the first [`BRIEF_ACTIONS`]): an owner who decides from the mail clears a
/// busy morning's queue from one mail.
pub const BRIEF_REVIEW_LINKED: usize = 10;

/// One "do this now".
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BriefAction {
    /// `todo`, `escalation`, `payment` or `review`.
    pub kind: &'static str,
    pub title: String,
    pub why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_id: Option<MemberId>,
    /// What ranks it: the value at stake, raised by how late it is.
    #[serde(skip)]
    pub score: f64,
    /// Which item it is, as it stands: the same while the item is unchanged ([`listed_items`]).
    #[serde(skip)]
    pub key: String,
    /// The review queue's first tasks and their members, each decided from the mail.
    #[serde(skip)]
    pub review: Vec<(TaskId, String)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AtRisk {
    pub member_id: MemberId,
    pub name: String,
    /// `None`: never checked in.
    pub days_since_checkin: Option<i64>,
    pub monthly_value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaymentTrouble {
    pub member_id: MemberId,
    pub name: String,
    pub monthly_value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// Its task waits in the review queue: nothing works on it until the owner decides.
    #[serde(skip)]
    pub awaiting_approval: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Yesterday {
    /// Members retained and recovered after outreach (contacted, or never drawn).
    pub retained: u32,
    pub recovered: u32,
    /// Members of the holdout group whose goal was reached with nothing sent: back on their
    /// own, not counted as retained or recovered. Left out of the brief when none.
    #[serde(skip_serializing_if = "none")]
    pub held_out_back: u32,
    pub replies: u32,
    pub escalations: u32,
    pub sent: u32,
}

fn none(n: &u32) -> bool {
    *n == 0
}

impl Yesterday {
    fn is_empty(&self) -> bool {
        *self == Yesterday::default()
    }
}

/// How many entries each capped list left out ("see all").
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct More {
    pub todos: usize,
    pub at_risk: usize,
    pub payments: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Brief {
    pub date: Date,
    pub actions: Vec<BriefAction>,
    pub todos: Vec<Todo>,
    pub at_risk: Vec<AtRisk>,
    pub payments: Vec<PaymentTrouble>,
    pub yesterday: Yesterday,
    pub planned_today: usize,
    /// Review items closed yesterday because the owner left them undecided
    /// (`review_expiry_days`).
    pub review_expired: usize,
    pub more: More,
    /// Items unchanged since they were listed on [`MORNINGS_LISTED`] mornings: counted here,
    /// no longer listed (the mail only).
    #[serde(skip_serializing_if = "is_zero")]
    pub still_open: usize,
    /// A suggestion made in the last [`MORNINGS_LISTED`] days and still pending, offered with
    /// its links (the mail only: the API lists suggestions on their own).
    #[serde(skip)]
    pub suggestion: Option<BriefSuggestion>,
}

/// A pending suggestion as the brief offers it: "Send At-Risk Member messages without waiting
/// for you?" and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BriefSuggestion {
    pub id: ulid::Ulid,
    pub title: String,
    pub body: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The most mornings an unchanged item is listed in the mail; then it is only counted under
/// "still open".
pub const MORNINGS_LISTED: u32 = 3;

impl Brief {
    /// Nothing to say: no mail that day.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
            && self.todos.is_empty()
            && self.at_risk.is_empty()
            && self.payments.is_empty()
            && self.yesterday.is_empty()
            && self.planned_today == 0
            && self.review_expired == 0
            && self.suggestion.is_none()
    }
}

/// An escalated task waiting for the owner, as the brief weighs it.
#[derive(Clone, Debug)]
pub struct Waiting {
    pub task_id: TaskId,
    pub member_id: MemberId,
    pub name: String,
    pub why: String,
    pub since: Timestamp,
    pub monthly_value: f64,
}

/// Everything a brief is made of, read by the engine.
#[derive(Clone, Debug)]
pub struct BriefInputs {
    pub date: Date,
    pub now: Timestamp,
    /// The end of `date` in the account's time zone: to-dos due before it are in.
    pub day_ends: Timestamp,
    /// Pending to-dos, each with the monthly value of its member.
    pub todos: Vec<(Todo, f64)>,
    pub escalated: Vec<Waiting>,
    /// Tasks waiting in the review queue (counted up to the read's cap).
    pub awaiting_review: usize,
    /// The first of them (the most urgent, then the oldest) and who each is for: the review action names them.
    pub awaiting_members: Vec<(TaskId, String)>,
    pub at_risk: Vec<AtRisk>,
    pub payments: Vec<PaymentTrouble>,
    pub yesterday: Yesterday,
    pub planned_today: usize,
    pub review_expired: usize,
    pub suggestion: Option<BriefSuggestion>,
}

fn days_late(since: Timestamp, now: Timestamp) -> f64 {
    (now.duration_since(since).as_hours().max(0) as f64) / 24.0
}

/// The brief of `inputs`: actions ranked, lists ordered and capped.
pub fn compose(mut inputs: BriefInputs) -> Brief {
    let now = inputs.now;
    let due: Vec<(Todo, f64)> = inputs
        .todos
        .into_iter()
        .filter(|(t, _)| t.is_pending() && t.is_due(inputs.day_ends))
        .collect();
    let mut actions: Vec<BriefAction> = Vec::new();
    for (todo, value) in &due {
        let since = todo.snoozed_until.unwrap_or(todo.due_at);
        let late = days_late(since, now);
        let when = if late >= 1.0 {
            format!("waiting {}", count(late.floor() as i64, "day", "days"))
        } else {
            "due today".to_owned()
        };
        // The member is named once: by the to-do's own words when they name them.
        let name = name_of(todo);
        actions.push(BriefAction {
            kind: "todo",
            title: todo.what.clone(),
            why: if todo.what.contains(&name) {
                when
            } else {
                format!("{name}, {when}")
            },
            task_id: Some(todo.task_id),
            todo_id: Some(todo.id.to_string()),
            member_id: Some(todo.member.id.clone()),
            score: value * 1.2 * (1.0 + late),
            key: todo_key(todo),
            review: Vec::new(),
        });
    }
    for waiting in &inputs.escalated {
        // A to-do already asks for this task.
        if due.iter().any(|(t, _)| t.task_id == waiting.task_id) {
            continue;
        }
        let late = days_late(waiting.since, now);
        actions.push(BriefAction {
            kind: "escalation",
            title: format!("{} needs you", waiting.name),
            why: waiting.why.clone(),
            task_id: Some(waiting.task_id),
            todo_id: None,
            member_id: Some(waiting.member_id.clone()),
            score: waiting.monthly_value * 1.5 * (1.0 + late),
            key: format!("escalation:{}:{}", waiting.task_id, waiting.since),
            review: Vec::new(),
        });
    }
    for payment in &inputs.payments {
        if payment.task_id.is_some() {
            continue;
        }
        let late = payment.failed_at.map_or(0.0, |at| days_late(at, now));
        actions.push(BriefAction {
            kind: "payment",
            title: format!("Check {}'s payment", payment.name),
            why: "a payment is failing and nothing is working on it yet".into(),
            task_id: None,
            todo_id: None,
            member_id: Some(payment.member_id.clone()),
            score: payment.monthly_value * 1.3 * (1.0 + late),
            key: payment_key(payment),
            review: Vec::new(),
        });
    }
    if inputs.awaiting_review > 0 {
        let n = inputs.awaiting_review;
        // Every listed item names its member: the first few of the queue by name.
        let review: Vec<(TaskId, String)> = inputs.awaiting_members.iter().take(BRIEF_REVIEW_LINKED).cloned().collect();
        let titled = review.len().min(BRIEF_ACTIONS);
        // A member with two tasks waiting is named once, with how many.
        let mut named: Vec<(&str, usize)> = Vec::new();
        for (_, name) in &review[..titled] {
            match named.iter_mut().find(|(n, _)| *n == name.as_str()) {
                Some((_, count)) => *count += 1,
                None => named.push((name.as_str(), 1)),
            }
        }
        let labels: Vec<String> = named
            .iter()
            .map(|(name, count)| {
                if *count == 1 {
                    (*name).to_owned()
                } else {
                    format!("{name} ({count} tasks)")
                }
            })
            .collect();
        let shown: Vec<&str> = labels.iter().map(String::as_str).collect();
        let names = match (shown.len(), n.saturating_sub(titled)) {
            (0, _) => String::new(),
            (_, 0) => format!(": {}", and_list(&shown)),
            (_, rest) => format!(": {} and {}", shown.join(", "), count_of(rest, "other", "others")),
        };
        actions.push(BriefAction {
            kind: "review",
            title: if n == 1 {
                format!("1 task waits for your approval{names}")
            } else {
                format!("{n} tasks wait for your approval{names}")
            },
            why: if n == 1 {
                "nothing is sent for it until you decide".into()
            } else {
                "nothing is sent for them until you decide".into()
            },
            task_id: None,
            todo_id: None,
            member_id: None,
            score: 50.0 * n as f64,
            key: format!(
                "review:{n}:{}",
                inputs
                    .awaiting_members
                    .iter()
                    .map(|(id, _)| id.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            review,
        });
    }
    actions.sort_by(|a, b| b.score.total_cmp(&a.score));
    actions.truncate(BRIEF_ACTIONS);

    let mut todos: Vec<Todo> = due.into_iter().map(|(t, _)| t).collect();
    todos.sort_by_key(|t| (t.snoozed_until.unwrap_or(t.due_at), t.id));
    inputs.at_risk.sort_by(|a, b| {
        b.monthly_value.total_cmp(&a.monthly_value).then(
            b.days_since_checkin
                .unwrap_or(i64::MAX)
                .cmp(&a.days_since_checkin.unwrap_or(i64::MAX)),
        )
    });
    inputs.payments.sort_by(|a, b| b.monthly_value.total_cmp(&a.monthly_value));
    let more = More {
        todos: todos.len().saturating_sub(BRIEF_LIST),
        at_risk: inputs.at_risk.len().saturating_sub(BRIEF_LIST),
        payments: inputs.payments.len().saturating_sub(BRIEF_LIST),
    };
    todos.truncate(BRIEF_LIST);
    inputs.at_risk.truncate(BRIEF_LIST);
    inputs.payments.truncate(BRIEF_LIST);
    Brief {
        date: inputs.date,
        actions,
        todos,
        at_risk: inputs.at_risk,
        payments: inputs.payments,
        yesterday: inputs.yesterday,
        planned_today: inputs.planned_today,
        review_expired: inputs.review_expired,
        more,
        still_open: 0,
        suggestion: inputs.suggestion,
    }
}

/// "A", "A and B", "A, B and C".
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn todo_key(todo: &Todo) -> String {
    format!("todo:{}:{}", todo.id, todo.version)
}

fn payment_key(p: &PaymentTrouble) -> String {
    format!("payment:{}:{}", p.member_id, p.failed_at.map(|t| t.to_string()).unwrap_or_default())
}

/// The last check-in a member at risk was counted from (the same every morning until they
/// come back).
fn at_risk_key(m: &AtRisk, date: Date) -> String {
    let since = m
        .days_since_checkin
        .and_then(|d| date.checked_sub(jiff::Span::new().days(d)).ok())
        .map(|d| d.to_string())
        .unwrap_or_default();
    format!("at_risk:{}:{since}", m.member_id)
}

/// Every item the brief lists, by a key that stays the same while the item is unchanged
/// (a to-do's version, an escalation's start, a payment's failure, a member's last
/// check-in): what the mail counts the mornings of. Each once.
pub fn listed_items(brief: &Brief) -> Vec<String> {
    let mut keys: Vec<String> = brief.actions.iter().map(|a| a.key.clone()).collect();
    keys.extend(brief.todos.iter().map(todo_key));
    keys.extend(brief.at_risk.iter().map(|m| at_risk_key(m, brief.date)));
    keys.extend(brief.payments.iter().map(payment_key));
    let mut seen = std::collections::BTreeSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys
}

/// `brief` without the items of `stale` (listed on [`MORNINGS_LISTED`] mornings already and
/// unchanged since), counted under `still_open` instead.
pub fn without_stale(mut brief: Brief, stale: &std::collections::BTreeSet<String>) -> Brief {
    if stale.is_empty() {
        return brief;
    }
    let date = brief.date;
    let mut gone = std::collections::BTreeSet::new();
    let mut keep = |key: String| {
        if stale.contains(&key) {
            gone.insert(key);
            false
        } else {
            true
        }
    };
    brief.actions.retain(|a| keep(a.key.clone()));
    brief.todos.retain(|t| keep(todo_key(t)));
    brief.at_risk.retain(|m| keep(at_risk_key(m, date)));
    brief.payments.retain(|p| keep(payment_key(p)));
    brief.still_open += gone.len();
    brief
}

fn name_of(todo: &Todo) -> String {
    todo.member.label()
}

/// The start and end of `date` in `tz`.
pub fn day_bounds(date: Date, tz: &TimeZone) -> (Timestamp, Timestamp) {
    let start = date.to_zoned(tz.clone()).map_or(Timestamp::UNIX_EPOCH, |z| z.timestamp());
    let end = date
        .tomorrow()
        .ok()
        .and_then(|d| d.to_zoned(tz.clone()).ok())
        .map_or(start + SignedDuration::from_hours(24), |z| z.timestamp());
    (start, end)
}

/// The links under a "do this now": a to-do's, an escalation's, each of the review queue's
/// first items under its member's name; a failing payment's nothing works on yet.
fn action_links(action: &BriefAction, links: Links) -> String {
    match (action.kind, action.todo_id.as_deref().and_then(|t| t.parse().ok()), action.task_id) {
        ("payment", _, None) => action
            .member_id
            .as_ref()
            .map(|m| links(LinkItem::Payment(m.clone()), &PAYMENT_ACTIONS))
            .unwrap_or_default(),
        ("todo", Some(todo), _) => links(LinkItem::Todo(todo), &TODO_ACTIONS),
        ("escalation", _, Some(task)) => links(LinkItem::Task(task), task_actions(crate::task::TaskStatus::Escalated)),
        ("review", _, _) => action
            .review
            .iter()
            .map(|(task, name)| {
                let lines: String = links(LinkItem::Task(*task), task_actions(crate::task::TaskStatus::PendingReview))
                    .lines()
                    .map(|l| format!("  {l}\n"))
                    .collect();
                format!("  {name}:\n{lines}")
            })
            .collect(),
        _ => String::new(),
    }
}

/// The mail's title (its subject, after the business's name) and text. `app`: the
/// dashboard's address (`{public_url}/app`); `links`: the action links under each item the
/// owner can decide from the mail (an escalation, a to-do).
pub fn mail(brief: &Brief, app: &str, links: Links) -> (String, String) {
    let subject = match brief.actions.first() {
        Some(first) => format!("Today: {}", first.title),
        None => "Your morning brief".to_owned(),
    };
    let mut text = format!("Your morning brief for {}\n", brief.date.strftime("%A, %B %-d"));
    let mut decisions = false;
    if !brief.actions.is_empty() {
        text.push_str("\nDo this now:\n");
        for (i, a) in brief.actions.iter().enumerate() {
            text.push_str(&format!("{}. {} ({})\n", i + 1, a.title, a.why));
            let decide = action_links(a, links);
            decisions |= !decide.is_empty();
            text.push_str(&decide);
        }
    }
    if let Some(s) = &brief.suggestion {
        text.push_str(&format!("\nA suggestion: {}\n  {}\n", s.title, s.body));
        text.push_str(&links(LinkItem::Suggestion(s.id), &SUGGESTION_ACTIONS));
        decisions = true;
    }
    let see_all = |n: usize, path: &str| {
        if n > 0 {
            format!("  … and {n} more: {app}{path}\n")
        } else {
            String::new()
        }
    };
    // A to-do already asked for under "Do this now" is not listed again.
    let asked: Vec<String> = brief.actions.iter().filter_map(|a| a.todo_id.clone()).collect();
    let todos: Vec<&Todo> = brief.todos.iter().filter(|t| !asked.contains(&t.id.to_string())).collect();
    if !todos.is_empty() {
        text.push_str(if asked.is_empty() {
            "\nTo-dos due:\n"
        } else {
            "\nOther to-dos due:\n"
        });
        for t in todos {
            let phone = t.member.phone.as_deref().map(|p| format!(" — {p}")).unwrap_or_default();
            let name = name_of(t);
            let who = if t.what.contains(&name) {
                String::new()
            } else {
                format!(" ({name})")
            };
            text.push_str(&format!("- {}{who}{phone}\n", t.what));
            text.push_str(&links(LinkItem::Todo(t.id), &TODO_ACTIONS));
        }
        text.push_str(&see_all(brief.more.todos, "/todos"));
    }
    if !brief.at_risk.is_empty() {
        text.push_str("\nMembers at risk:\n");
        for m in &brief.at_risk {
            let days = m.days_since_checkin.map_or("never checked in".to_owned(), |d| {
                format!("{} since a check-in", count(d, "day", "days"))
            });
            text.push_str(&format!("- {}: {}/month, {days}\n", m.name, dollars(m.monthly_value)));
        }
        text.push_str(&see_all(brief.more.at_risk, "/members"));
    }
    if !brief.payments.is_empty() {
        text.push_str("\nPayment trouble:\n");
        for p in &brief.payments {
            let working = match p.task_id {
                Some(_) if p.awaiting_approval => " (its message waits for your approval)",
                Some(_) => " (the agent is on it)",
                None => "",
            };
            text.push_str(&format!("- {}: {}/month{working}\n", p.name, dollars(p.monthly_value)));
            // One nothing works on is decided here, unless "Do this now" asked already.
            let asked = brief
                .actions
                .iter()
                .any(|a| a.kind == "payment" && a.member_id.as_ref() == Some(&p.member_id));
            if p.task_id.is_none() && !asked {
                text.push_str(&links(LinkItem::Payment(p.member_id.clone()), &PAYMENT_ACTIONS));
                decisions = true;
            }
        }
        text.push_str(&see_all(brief.more.payments, "/members"));
    }
    let y = &brief.yesterday;
    if y.is_empty() {
        text.push_str("\nYesterday: a quiet day (no mail sent, no replies).\n");
    } else {
        // Only what happened, each with its noun: no column of zeros.
        let said: Vec<String> = [
            (y.retained, "member retained", "members retained"),
            (y.recovered, "recovery", "recoveries"),
            (y.sent, "mail sent", "mails sent"),
            (y.replies, "reply", "replies"),
            (y.escalations, "escalation", "escalations"),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| count(n, one, many))
        .collect();
        if said.is_empty() {
            text.push_str("\nYesterday: no mail sent, no replies.\n");
        } else {
            text.push_str(&format!("\nYesterday: {}.\n", said.join(", ")));
        }
    }
    if y.held_out_back > 0 {
        text.push_str(&format!(
            "{} of the holdout group came back on their own, with nothing sent (not counted as retained).\n",
            count(y.held_out_back, "member", "members"),
        ));
    }
    if brief.review_expired > 0 {
        text.push_str(&format!(
            "{} waited too long and {} closed (review expired).\n",
            count_of(brief.review_expired, "review item", "review items"),
            if brief.review_expired == 1 { "was" } else { "were" }
        ));
    }
    if brief.planned_today > 0 {
        text.push_str(&format!(
            "Planned today: {} by the agent.\n",
            count_of(brief.planned_today, "step", "steps")
        ));
    }
    if brief.still_open > 0 {
        text.push_str(&format!(
            "Still open: {}, listed on {MORNINGS_LISTED} mornings already and unchanged: {app}/today\n",
            count_of(brief.still_open, "item", "items")
        ));
    }
    if decisions {
        // The example names one of the members listed.
        let example = brief
            .actions
            .iter()
            .find_map(|a| a.review.first().map(|(_, name)| name.clone()))
            .or_else(|| brief.todos.first().map(name_of))
            .and_then(|name| name.split_whitespace().next().map(str::to_owned));
        text.push_str(&crate::owner::owner_answer::reply_hint_naming(example.as_deref()));
    }
    text.push_str(&format!("\nThe whole day: {app}/today\n"));
    (subject, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::todo::{TodoKind, TodoMember, TodoStatus};

    fn todo(what: &str, name: &str, due_at: Timestamp) -> Todo {
        Todo {
            id: ulid::Ulid::from_parts(1, 1),
            account_id: crate::kernel::ids::AccountId::generate(due_at),
            task_id: TaskId::generate(due_at),
            member: TodoMember {
                id: MemberId::parse("m_dana").expect("id"),
                name: Some(name.into()),
                phone: Some("555-0100".into()),
                email: None,
            },
            kind: TodoKind::Call,
            what: what.into(),
            due_at,
            status: TodoStatus::Open,
            snoozed_until: None,
            contacts: Vec::new(),
            outcome: None,
            note: None,
            get_them_back: false,
            source: "test".into(),
            created_at: due_at,
            done_at: None,
            version: 1,
        }
    }

    /// The brief mail as an owner reads it: each member named once in an action, counts with
    /// their nouns, no codes.
    #[test]
    fn the_brief_names_a_member_once_and_reads_as_plain_words() {
        let now: Timestamp = "2026-03-10T13:00:00Z".parse().expect("time");
        let yesterday = now - SignedDuration::from_hours(30);
        let date = jiff::civil::date(2026, 3, 10);
        let brief = compose(BriefInputs {
            date,
            now,
            day_ends: now + SignedDuration::from_hours(11),
            todos: vec![
                (
                    todo("Call Dana Tester: they asked what only you can answer", "Dana Tester", yesterday),
                    120.0,
                ),
                (todo("Check the front desk's notes", "Sam Lee", now), 10.0),
            ],
            escalated: Vec::new(),
            awaiting_review: 0,
            awaiting_members: Vec::new(),
            at_risk: Vec::new(),
            payments: Vec::new(),
            yesterday: Yesterday {
                held_out_back: 1,
                sent: 1,
                ..Yesterday::default()
            },
            planned_today: 1,
            review_expired: 0,
            suggestion: None,
        });
        let (subject, text) = mail(&brief, "https://app.example.com/app", &|_, _| String::new());
        assert_eq!(subject, "Today: Call Dana Tester: they asked what only you can answer");
        assert!(
            text.contains("1. Call Dana Tester: they asked what only you can answer (waiting 1 day)\n"),
            "{text}"
        );
        // A to-do whose words do not name the member says who it is about.
        assert!(text.contains("2. Check the front desk's notes (Sam Lee, due today)\n"), "{text}");
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("1. "))
                .map(|l| l.matches("Dana Tester").count())
                .sum::<usize>(),
            1
        );
        assert!(text.contains("1 member of the holdout group came back on their own"), "{text}");
        assert!(text.contains("Planned today: 1 step by the agent."), "{text}");
        assert!(text.contains("\nYesterday: 1 mail sent.\n"), "only what happened: {text}");
        assert!(!text.contains("(s)") && !text.contains('_'), "{text}");
    }

    /// A first morning: money grouped as the owner writes it, one task is "it", a quiet
    /// yesterday said in words and no "0 steps" line.
    /// A member with two tasks in the queue is named once, with how many.
    #[test]
    fn a_member_with_two_tasks_waiting_is_named_once() {
        let now: Timestamp = "2026-03-10T13:00:00Z".parse().expect("time");
        let task = |name: &str| (TaskId::generate(now), name.to_owned());
        let brief = compose(BriefInputs {
            date: jiff::civil::date(2026, 3, 10),
            now,
            day_ends: now + SignedDuration::from_hours(11),
            todos: Vec::new(),
            escalated: Vec::new(),
            awaiting_review: 4,
            awaiting_members: vec![task("Olivia Brooks"), task("Olivia Brooks"), task("Ben Turner"), task("Ava")],
            at_risk: Vec::new(),
            payments: Vec::new(),
            yesterday: Yesterday::default(),
            planned_today: 0,
            review_expired: 0,
            suggestion: None,
        });
        let title = &brief.actions[0].title;
        assert_eq!(
            title, "4 tasks wait for your approval: Olivia Brooks (2 tasks), Ben Turner and 1 other",
            "{title}"
        );
    }

    #[test]
    fn a_first_morning_reads_without_zeros_or_raw_sums() {
        let now: Timestamp = "2026-03-10T13:00:00Z".parse().expect("time");
        let brief = compose(BriefInputs {
            date: jiff::civil::date(2026, 3, 10),
            now,
            day_ends: now + SignedDuration::from_hours(11),
            todos: Vec::new(),
            escalated: Vec::new(),
            awaiting_review: 1,
            awaiting_members: vec![(TaskId::generate(now), "Ray".into())],
            at_risk: Vec::new(),
            payments: vec![PaymentTrouble {
                member_id: MemberId::parse("m_chloe").expect("id"),
                name: "Chloe".into(),
                monthly_value: 1250.0,
                failed_at: None,
                task_id: Some(TaskId::generate(now)),
                awaiting_approval: false,
            }],
            yesterday: Yesterday::default(),
            planned_today: 0,
            review_expired: 0,
            suggestion: None,
        });
        let (_, text) = mail(&brief, "https://app.example.com/app", &|_, _| String::new());
        assert!(
            text.contains("1. 1 task waits for your approval: Ray (nothing is sent for it until you decide)"),
            "{text}"
        );
        assert!(text.contains("- Chloe: $1,250/month (the agent is on it)"), "{text}");
        assert!(text.contains("Yesterday: a quiet day (no mail sent, no replies)."), "{text}");
        assert!(!text.contains("Planned today") && !text.contains(" 0 "), "{text}");
    }
}
