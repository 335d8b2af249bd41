//! The owner's answer in words: every owner mail that asks for a
//! decision carries a signed reply address (`conversation::token::OwnerReplyTo`) naming its one
//! item, or the account for a mail of several (the brief, a digest). A reply from the account's
//! `owner_email` is read (`owner::owner_answer`) and carried out as the mail's link would be;
//! on an escalation any other words are the owner's guidance. One short mail confirms what was
//! done, or gives the item's choices back when the words were not understood. A reply from any
//! other address acts on nothing and is logged; a redelivered reply acts once.

use jiff::Timestamp;

use super::{LinkState, decided_already, task_fate};
use crate::conversation::inbound::InboundMail;
use crate::conversation::token::OwnerReplyTo;
use crate::engine::Engine;
use crate::engine::InboundOutcome;
use crate::kernel::ids::TaskId;
use crate::kernel::limits::WEBHOOK_DEDUP_TTL;
use crate::owner::account::Account;
use crate::owner::action_link::{ActionLink, LINK_LIFETIME, LinkAction, LinkItem, PAYMENT_ACTIONS, TODO_ACTIONS, task_actions};
use crate::owner::owner_answer::{self, Answer};
use crate::ports::TaskQuery;
use crate::task::error::EngineError;
use crate::task::todo::{Todo, TodoStatus};
use crate::task::{Task, TaskStatus};

/// The most items of each kind a reply to a mail of several is matched against.
const ITEMS_READ: usize = 50;
/// The most items a "which one?" answer lists (the rest are on the dashboard).
const CHOICES_LISTED: usize = 10;

/// One item an owner's reply can decide.
struct Item {
    link: LinkItem,
    /// What the owner knows it by: "Sam Lee — Churn Risk", a to-do's words.
    title: String,
    /// How the owner may name its member in a reply.
    names: Vec<String>,
    task: Option<Task>,
    actions: &'static [LinkAction],
}

impl Engine {
    /// The address an owner mail about `to` asks replies to go to.
    pub(in crate::engine) fn owner_reply_address(&self, to: OwnerReplyTo) -> String {
        format!(
            "reply+{}@{}",
            self.config.signing_key.owner_reply_token(to),
            self.config.reply_domain
        )
    }

    /// A reply to an owner mail (its reply address named `to`), carried out once: `id` is the
    /// delivery's (its Message-ID, or a digest of the message).
    pub(in crate::engine) async fn owner_answer(
        &self,
        mail: &InboundMail,
        to: OwnerReplyTo,
        id: String,
    ) -> Result<InboundOutcome, EngineError> {
        let account_id = match to {
            OwnerReplyTo::Account(id) => Some(id),
            OwnerReplyTo::Task(task) => self.store.task_account(task).await?,
        };
        let Some(account) = (match account_id {
            Some(id) => self.store.get_account(id).await?,
            None => None,
        }) else {
            return Ok(InboundOutcome::Unrouted("the item this reply answers is no longer here".into()));
        };
        if account.settings.owner_email.as_ref() != Some(&mail.from) {
            tracing::warn!(account = %account.id, "a reply to an owner mail came from another address than the owner's: nothing done");
            return Ok(InboundOutcome::Unrouted(
                "a reply to an owner mail from another address than the account's owner_email: nothing done".into(),
            ));
        }
        if mail.automatic {
            return Ok(InboundOutcome::Unrouted("an automatic reply to an owner mail: nothing done".into()));
        }
        let now = self.clock.now();
        let source = format!("owner-answer:{}", account.id);
        if self.store.is_claimed(&source, &id, now).await? {
            return Ok(InboundOutcome::Duplicate);
        }
        // Carried out, then claimed: a function killed in between leaves the provider's retry
        // to carry it out again, where each decision is a conditional write that a second
        // reading finds made (never a lost answer). The claim decides who confirms.
        let (understood, text) = self.answer_in_words(&account, mail, to, now).await?;
        if !self.store.claim_webhook(&source, &id, now, now + WEBHOOK_DEDUP_TTL).await? {
            return Ok(InboundOutcome::Duplicate);
        }
        tracing::info!(account = %account.id, understood, "owner answered a mail in words");
        self.confirm(&account, mail, to, text, now).await;
        Ok(InboundOutcome::Answered {
            account_id: account.id,
            understood,
        })
    }

    /// What the reply decides, done: whether it was understood, and the confirmation's text.
    async fn answer_in_words(
        &self,
        account: &Account,
        mail: &InboundMail,
        to: OwnerReplyTo,
        now: Timestamp,
    ) -> Result<(bool, String), EngineError> {
        let items = match to {
            OwnerReplyTo::Task(id) => match self.item_of_task(account, id).await? {
                Ok(item) => vec![item],
                Err(gone) => return Ok((true, gone)),
            },
            OwnerReplyTo::Account(_) => self.open_items(account).await?,
        };
        // The member the reply names, if any ("Sam: yes"); with one item, no name is needed.
        let names: Vec<Vec<String>> = items.iter().map(|i| i.names.clone()).collect();
        let (item, words) = match (owner_answer::about_whom(&mail.text, &names), items.len()) {
            (_, 0) => return Ok((true, "Nothing waits for your decision now: it was all decided already.".into())),
            (Some((i, rest)), _) => (i, owner_answer::without_name(&mail.text, &names[i], &rest)),
            (None, 1) => (0, mail.text.clone()),
            (None, _) => return Ok((false, self.which_one(account, &items, now))),
        };
        let item = &items[item];
        let answer = owner_answer::read(&words);
        let action = match &answer {
            Answer::Act(action) if item.actions.contains(action) => *action,
            Answer::Words(words) if item.task.as_ref().is_some_and(|t| t.status == TaskStatus::Escalated) => {
                let LinkItem::Task(id) = &item.link else {
                    return Ok((false, self.choices(account, item, now)));
                };
                return match self.guidance(account.id, *id, words).await {
                    Ok(_) => Ok((
                        true,
                        format!(
                            "{}: your answer is with the agent. It tells them in a message of its own (never your note as written), through the usual checks, and you hear if it needs you again.",
                            item.title
                        ),
                    )),
                    Err(EngineError::InvalidTransition { .. } | EngineError::StaleVersion) => {
                        Ok((true, format!("{}: {}", item.title, self.fate_of(account, item).await?)))
                    }
                    Err(EngineError::Invalid(e)) => Ok((
                        false,
                        format!("{}: {}\n\n{}", item.title, e.message, self.choices(account, item, now)),
                    )),
                    Err(e) => Err(e),
                };
            }
            _ => return Ok((false, self.choices(account, item, now))),
        };
        let link = ActionLink {
            account: account.id,
            item: item.link.clone(),
            action,
            expires: now + LINK_LIFETIME,
        };
        match self.decide_link(account, &link, item.task.as_ref()).await {
            Ok(acted) => Ok((true, format!("{}: {acted}", item.title))),
            Err(e) if decided_already(&e) => Ok((true, format!("{}: {}", item.title, self.fate_of(account, item).await?))),
            Err(e) => Err(e),
        }
    }

    /// The item a mail about task `id` asks about: the task while it waits for the owner, or
    /// its open to-do (a call-list item); `Err` with what became of it otherwise.
    async fn item_of_task(&self, account: &Account, id: TaskId) -> Result<Result<Item, String>, EngineError> {
        let Some(task) = self.store.get_task(account.id, id).await? else {
            return Ok(Err("This task is no longer here.".into()));
        };
        if !task_actions(task.status).is_empty() {
            return Ok(Ok(task_item(task)));
        }
        let open = self.store.list_todos(account.id, TodoStatus::Open, ITEMS_READ).await?;
        let snoozed = self.store.list_todos(account.id, TodoStatus::Snoozed, ITEMS_READ).await?;
        if let Some(todo) = open.into_iter().chain(snoozed).find(|t| t.task_id == id) {
            return Ok(Ok(todo_item(todo)));
        }
        Ok(Err(format!(
            "{}: {}",
            task.member.label(),
            task_fate(&task, &account.settings.time_zone())
        )))
    }

    /// Everything that waits for the owner now: the review queue, the escalations, the
    /// to-dos due (a to-do and the escalation it asks about are one item) and the failing
    /// payments the brief asks about.
    async fn open_items(&self, account: &Account) -> Result<Vec<Item>, EngineError> {
        let (pending_query, escalated_query) = (
            TaskQuery::in_status(TaskStatus::PendingReview, ITEMS_READ),
            TaskQuery::in_status(TaskStatus::Escalated, ITEMS_READ),
        );
        let (pending, escalated, todos) = futures::try_join!(
            self.store.list_tasks(account.id, &pending_query),
            self.store.list_tasks(account.id, &escalated_query),
            self.store.list_todos(account.id, TodoStatus::Open, ITEMS_READ),
        )?;
        let now = self.clock.now();
        let mut items: Vec<Item> = Vec::new();
        let escalated = escalated.0;
        for todo in todos.into_iter().filter(|t| t.is_due(now)) {
            if !escalated.iter().any(|t| t.id == todo.task_id) {
                items.push(todo_item(todo));
            }
        }
        items.extend(pending.0.into_iter().chain(escalated).map(task_item));
        let today = crate::kernel::limits::local_date(now, &account.settings.time_zone());
        let payments = self.brief_of(account, today, now).await?.payments;
        items.extend(payments.into_iter().filter(|p| p.task_id.is_none()).map(|p| Item {
            link: LinkItem::Payment(p.member_id),
            title: format!("Check {}'s payment", p.name),
            names: names(Some(&p.name)),
            task: None,
            actions: &PAYMENT_ACTIONS,
        }));
        Ok(items)
    }

    async fn fate_of(&self, account: &Account, item: &Item) -> Result<String, EngineError> {
        let link = ActionLink {
            account: account.id,
            item: item.link.clone(),
            action: item.actions.first().copied().unwrap_or(LinkAction::Done),
            expires: self.clock.now() + LINK_LIFETIME,
        };
        Ok(match self.page_of(account, &link).await?.state {
            LinkState::Gone(what) | LinkState::Acted(what) => what,
            LinkState::Open => "it still waits for you.".into(),
        })
    }

    /// The words a reply about `item` may say, and its links.
    fn choices(&self, account: &Account, item: &Item, now: Timestamp) -> String {
        let said: Vec<&str> = item.actions.iter().map(|a| reply_word(*a)).collect();
        let escalation = item.task.as_ref().is_some_and(|t| t.status == TaskStatus::Escalated);
        let guidance = if escalation {
            " — or write what the agent should tell them, in your own words"
        } else {
            ""
        };
        format!(
            "I did not act on your reply about {}: it did not say one of the choices.\nReply with {}{guidance}, or use a link (no sign-in):\n{}",
            item.title,
            or_list(&said),
            self.links_text(account.id, item.link.clone(), item.actions, now)
        )
    }

    /// The answer to a reply about a mail of several items that did not say which.
    fn which_one(&self, account: &Account, items: &[Item], now: Timestamp) -> String {
        let mut text = format!(
            "I did not act on your reply: {} wait for you, and it did not say which. Reply with the member's name and your choice (\"Sam: yes\"), or use a link (no sign-in):\n",
            crate::kernel::plural::count_of(items.len(), "item", "items")
        );
        for item in items.iter().take(CHOICES_LISTED) {
            text.push_str(&format!("\n{}\n", item.title));
            text.push_str(&self.links_text(account.id, item.link.clone(), item.actions, now));
        }
        if items.len() > CHOICES_LISTED {
            text.push_str(&format!(
                "\n… and {} more: {}\n",
                items.len() - CHOICES_LISTED,
                self.dashboard_url("/today")
            ));
        }
        text
    }

    /// One short mail to the owner, in the thread of their reply, answerable again.
    async fn confirm(&self, account: &Account, mail: &InboundMail, to: OwnerReplyTo, text: String, now: Timestamp) {
        let Some(owner) = account.settings.owner_email.clone() else {
            return;
        };
        let subject = match mail.subject.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) if s.to_ascii_lowercase().starts_with("re:") => s.to_owned(),
            Some(s) => format!("Re: {s}"),
            None => format!("{}: your answer", super::super::owner_notices::business_name(account)),
        };
        let mut reply = self.owner_mail(account, owner, subject, format!("{text}\n"), "answer", now);
        reply.reply_to = self.owner_reply_address(to);
        if let Some(theirs) = &mail.message_id {
            reply.in_reply_to = Some(theirs.clone());
            reply.references = vec![theirs.clone()];
        }
        if let Err(e) = self.mailer.send(&reply).await {
            tracing::error!(account = %account.id, error = %e, "the owner's answer was carried out; its confirmation mail was not sent");
        }
    }
}

fn task_item(task: Task) -> Item {
    let title = format!(
        "{} — {}",
        task.member.label(),
        super::super::owner_notices::type_label(&task.task_type)
    );
    Item {
        link: LinkItem::Task(task.id),
        title,
        names: names(task.member.name.as_deref()),
        actions: task_actions(task.status),
        task: Some(task),
    }
}

fn todo_item(todo: Todo) -> Item {
    Item {
        link: LinkItem::Todo(todo.id),
        title: todo.what.clone(),
        names: names(todo.member.name.as_deref()),
        task: None,
        actions: &TODO_ACTIONS,
    }
}

/// A member's full name and first name, as an owner writes them in a reply.
fn names(name: Option<&str>) -> Vec<String> {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        return Vec::new();
    };
    let mut names = vec![name.to_owned()];
    if let Some(first) = name.split_whitespace().next().filter(|f| *f != name) {
        names.push(first.to_owned());
    }
    names
}

/// The word of a reply that makes `action`.
fn reply_word(action: LinkAction) -> &'static str {
    match action {
        LinkAction::Approve => "\"yes\" (send it as drafted)",
        LinkAction::Skip => "\"skip\"",
        LinkAction::Snooze => "\"tomorrow\" (remind me tomorrow)",
        LinkAction::Done => "\"done\" (I took care of it)",
        // A suggestion is taken from its link only (a reply lists no suggestion).
        LinkAction::Accept => "its link (yes, do that)",
    }
}

fn or_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_named_by_full_and_first_name() {
        assert_eq!(names(Some("Sam Lee")), ["Sam Lee", "Sam"]);
        assert_eq!(names(Some("Cher")), ["Cher"]);
        assert!(names(Some("  ")).is_empty());
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
    }
}
