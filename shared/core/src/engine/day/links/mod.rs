//! The owner's action links (`/a/{token}`, `owner/action_link.rs`): decided from the mail,
//! without signing in. Looking at a link changes nothing; using it runs the same decision as
//! the dashboard's button (approve, skip, a to-do done or put off a day, a failing payment
//! checked or put off), so two clicks, or a click and the dashboard at once, decide once: the loser is told what happened. The same
//! decisions can be made in words, by replying to the mail (`answers`).

mod answers;

use jiff::Timestamp;

use super::Engine;
use super::decisions::Resolution;
use crate::kernel::error::{InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId};
use crate::learning::suggestion::SuggestionStatus;
use crate::members::member::PaymentSeen;
use crate::owner::account::Account;
use crate::owner::action_link::{ActionLink, LINK_LIFETIME, LinkAction, LinkItem, task_actions};
use crate::task::error::EngineError;
use crate::task::reason_words;
use crate::task::todo::TodoStatus;
use crate::task::{Task, TaskStatus};

/// What a link's page shows: the item, the decision, and whether it is still to be made.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkPage {
    /// The gym's name.
    pub business: String,
    /// Who and what: "Sam Lee — Churn Risk", "Call Nia".
    pub title: String,
    /// The item as the owner decides it: the draft's subject and text, the to-do's words.
    pub detail: Vec<String>,
    pub action: LinkAction,
    pub state: LinkState,
}

/// Where a link's item stands.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkState {
    /// Still to decide: the page offers the button.
    Open,
    /// Decided just now by this link: what was done.
    Acted(String),
    /// Decided already, or the link expired: what became of the item (`410`).
    Gone(String),
}

impl Engine {
    /// The address of `action` on `item`, for a mail made at `now`.
    pub(crate) fn action_url(&self, account: AccountId, item: LinkItem, action: LinkAction, now: Timestamp) -> String {
        let link = ActionLink {
            account,
            item,
            action,
            expires: now + LINK_LIFETIME,
        };
        let token = self.config.signing_key.action_token(&link);
        format!("{}/a/{token}", self.config.public_url.trim_end_matches('/'))
    }

    /// The lines an owner mail carries under an item that waits for a decision: one signed
    /// link per action offered.
    pub(crate) fn links_text(&self, account: AccountId, item: LinkItem, actions: &[LinkAction], now: Timestamp) -> String {
        actions
            .iter()
            .map(|a| format!("  {}: {}\n", a.label(), self.action_url(account, item.clone(), *a, now)))
            .collect()
    }

    /// `GET /a/{token}`: the page of a genuine link, changing nothing; `None` for a forged or
    /// altered one.
    pub async fn action_link_page(&self, token: &str) -> Result<Option<LinkPage>, EngineError> {
        let Some(link) = self.config.signing_key.verify_action_token(token) else {
            return Ok(None);
        };
        let account = self.account(link.account).await?;
        let now = self.clock.now();
        let page = self.page_of(&account, &link).await?;
        Ok(Some(match page.state {
            LinkState::Open if now > link.expires => expired(page),
            _ => page,
        }))
    }

    /// `POST /a/{token}`: the link's decision, once. An item decided already (by this link,
    /// another, a reply or the dashboard) or a link past its time is told as `Gone`.
    pub async fn use_action_link(&self, token: &str) -> Result<Option<LinkPage>, EngineError> {
        let Some(link) = self.config.signing_key.verify_action_token(token) else {
            return Ok(None);
        };
        let account = self.account(link.account).await?;
        let (page, task) = self.read_link(&account, &link).await?;
        if page.state != LinkState::Open {
            return Ok(Some(page));
        }
        if self.clock.now() > link.expires {
            return Ok(Some(expired(page)));
        }
        let acted = match self.decide_link(&account, &link, task.as_ref()).await {
            Ok(done) => done,
            // Decided meanwhile by someone else: say what they did.
            Err(e) if decided_already(&e) => return Ok(Some(self.page_of(&account, &link).await?)),
            Err(e) => return Err(e),
        };
        tracing::info!(account = %account.id, action = link.action.as_str(), "owner decided from a mail link");
        Ok(Some(LinkPage {
            state: LinkState::Acted(acted),
            ..page
        }))
    }

    /// `task`: the link's task as [`Self::read_link`] found it (its decision re-reads it at
    /// its version).
    async fn decide_link(&self, account: &Account, link: &ActionLink, task: Option<&Task>) -> Result<String, EngineError> {
        let tz = account.settings.time_zone();
        match (&link.item, link.action) {
            (&LinkItem::Task(id), LinkAction::Approve) => {
                self.approve(account.id, id, None).await?;
                Ok("Approved: the message goes out as drafted, in your send hours.".into())
            }
            (&LinkItem::Task(id), LinkAction::Skip) => {
                let task = task.ok_or(EngineError::NotFound { what: "task" })?;
                if task.status == TaskStatus::Escalated {
                    self.cancel(account.id, id).await?;
                    Ok("Closed: the agent sends nothing more on it.".into())
                } else {
                    self.skip(account.id, id, Some("skipped from the mail")).await?;
                    Ok("Skipped: nothing is sent.".into())
                }
            }
            (&LinkItem::Task(id), LinkAction::Done) => {
                let task = task.ok_or(EngineError::NotFound { what: "task" })?;
                let handled = crate::task::task_type::definition(&task.task_type)
                    .outcome("owner_handled")
                    .is_some();
                if handled {
                    let resolution = Resolution {
                        outcome: "owner_handled".into(),
                        note: None,
                    };
                    self.resolve(account.id, id, resolution).await?;
                } else {
                    self.cancel(account.id, id).await?;
                }
                Ok("Marked as taken care of by you: the agent sends nothing more on it.".into())
            }
            (LinkItem::Task(_), LinkAction::Snooze) => {
                let task = task.ok_or(EngineError::NotFound { what: "task" })?;
                let until = self.snooze_task(account, task).await?;
                Ok(format!(
                    "Put off until tomorrow ({}): it comes back to you then.",
                    reason_words::when(until, &tz)
                ))
            }
            (&LinkItem::Todo(id), LinkAction::Done) => {
                self.complete_todo(account.id, id, None, Some("done from the mail")).await?;
                Ok("Done: it is off your list.".into())
            }
            (&LinkItem::Todo(id), LinkAction::Snooze) => {
                let tomorrow = crate::kernel::limits::local_date(self.clock.now(), &tz)
                    .tomorrow()
                    .map_err(|e| EngineError::Invalid(crate::kernel::error::InvalidInput::new("invalid_until", e.to_string())))?;
                let todo = self.snooze_todo(account.id, id, &tomorrow.to_string()).await?;
                let until = todo
                    .snoozed_until
                    .map_or_else(String::new, |at| format!(" ({})", reason_words::when(at, &tz)));
                Ok(format!("Put off until tomorrow{until}: it comes back on your list then."))
            }
            (LinkItem::Payment(member), LinkAction::Done) => {
                self.set_payment_aside(account, member, false).await?;
                Ok("Marked as checked by you: the brief leaves it out unless the payment fails again.".into())
            }
            (LinkItem::Payment(member), LinkAction::Snooze) => {
                let until = self
                    .set_payment_aside(account, member, true)
                    .await?
                    .unwrap_or_else(|| self.clock.now());
                Ok(format!(
                    "Put off until tomorrow ({}): it comes back to you then.",
                    reason_words::when(until, &tz)
                ))
            }
            (&LinkItem::Suggestion(id), LinkAction::Accept) => {
                let taken = self.accept_suggestion(account.id, id).await?;
                Ok(format!(
                    "Done: {} You can undo it on your dashboard's suggestions page.",
                    taken.title.trim_end_matches('?')
                ))
            }
            (&LinkItem::Suggestion(id), LinkAction::Skip) => {
                self.dismiss_suggestion(account.id, id).await?;
                Ok("Left as it is: nothing changes, and it is not offered again.".into())
            }
            // A link is only ever made for the actions its item offers.
            _ => Err(EngineError::Invalid(crate::kernel::error::InvalidInput::new(
                "unsupported_action",
                "this link's action does not apply to its item",
            ))),
        }
    }

    /// Put `task` (a review item or an escalation) off until the start of the owner's next
    /// day: the brief leaves it out and its review does not expire until then. Under the
    /// task's version: a decision made meanwhile wins.
    async fn snooze_task(&self, account: &Account, task: &Task) -> Result<jiff::Timestamp, EngineError> {
        let tz = account.settings.time_zone();
        let now = self.clock.now();
        let until = self.tomorrow_starts(account)?;
        let why = crate::task::transition::Why::new(crate::task::reason::Reason::OwnerSnoozed)
            .detail(format!("until {}", reason_words::when(until, &tz)));
        let (mut next, log) = crate::task::transition::record(task, now, why);
        next.snoozed_until = Some(until);
        self.store.commit(&crate::task::commit::TaskCommit::new(next, log)).await?;
        Ok(until)
    }

    /// The start of the owner's next day: when what they put off comes back.
    fn tomorrow_starts(&self, account: &Account) -> Result<Timestamp, EngineError> {
        let tz = account.settings.time_zone();
        let tomorrow = crate::kernel::limits::local_date(self.clock.now(), &tz)
            .tomorrow()
            .map_err(|e| EngineError::Invalid(InvalidInput::new("invalid_until", e.to_string())))?;
        Ok(crate::owner::brief::day_bounds(tomorrow, &tz).0)
    }

    /// The owner's word on `member`'s failing payment that nothing works on (the brief's "Check
    /// X's payment"): checked (the brief leaves it out unless the payment fails again), or,
    /// with `snooze`, put off until the owner's next day (returned). Under the facts' version;
    /// a payment that went through meanwhile needs no word (`payment_not_failing`).
    pub async fn set_payment_aside(&self, account: &Account, member: &MemberId, snooze: bool) -> Result<Option<Timestamp>, EngineError> {
        let until = if snooze { Some(self.tomorrow_starts(account)?) } else { None };
        for _ in 0..8 {
            let Some((mut facts, _)) = self.store.get_member(account.id, member).await? else {
                return Err(EngineError::NotFound { what: "member" });
            };
            if !facts.payment_failing {
                return Err(EngineError::Invalid(InvalidInput::new(
                    PAYMENT_NOT_FAILING,
                    "the payment is no longer failing",
                )));
            }
            facts.payment_seen = Some(PaymentSeen {
                failed_at: facts.last_payment_failed_at,
                until,
            });
            facts.version += 1;
            match self.store.save_member_facts(account.id, &facts).await {
                Ok(()) => {
                    tracing::info!(account = %account.id, snooze, "owner put a failing payment aside");
                    return Ok(until);
                }
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// The page of `link` as its item stands now.
    async fn page_of(&self, account: &Account, link: &ActionLink) -> Result<LinkPage, EngineError> {
        Ok(self.read_link(account, link).await?.0)
    }

    /// [`Self::page_of`], with the task it read (a to-do's link reads none).
    async fn read_link(&self, account: &Account, link: &ActionLink) -> Result<(LinkPage, Option<Task>), EngineError> {
        let tz = account.settings.time_zone();
        let business = super::owner_notices::business_name(account);
        let page = |title: String, detail: Vec<String>, state: LinkState| LinkPage {
            business: business.clone(),
            title,
            detail,
            action: link.action,
            state,
        };
        match &link.item {
            &LinkItem::Task(id) => {
                let Some(task) = self.store.get_task(account.id, id).await? else {
                    return Ok((
                        page("A task".into(), Vec::new(), LinkState::Gone("This task is no longer here.".into())),
                        None,
                    ));
                };
                let title = format!("{} — {}", task.member.label(), super::owner_notices::type_label(&task.task_type));
                let mut detail = vec![format!("Goal: {}", task.goal)];
                if let Some(draft) = &task.draft {
                    detail.push(format!("Subject: {}", draft.subject));
                    detail.push(draft.body.clone());
                }
                let now = self.clock.now();
                let state = match task.snoozed_until {
                    _ if !task_actions(task.status).contains(&link.action) => LinkState::Gone(task_fate(&task, &tz)),
                    Some(until) if link.action == LinkAction::Snooze && until > now => {
                        LinkState::Gone(format!("Already put off until {}.", reason_words::when(until, &tz)))
                    }
                    _ => LinkState::Open,
                };
                Ok((page(title, detail, state), Some(task)))
            }
            &LinkItem::Todo(id) => {
                let Some(todo) = self.store.get_todo(account.id, id).await? else {
                    return Ok((
                        page(
                            "A to-do".into(),
                            Vec::new(),
                            LinkState::Gone("This to-do is no longer here.".into()),
                        ),
                        None,
                    ));
                };
                let title = todo.what.clone();
                let detail = todo.member.phone.iter().map(|p| format!("Phone: {p}")).collect();
                let now = self.clock.now();
                let state = match todo.status {
                    TodoStatus::Done => LinkState::Gone(format!(
                        "Already done{}.",
                        todo.done_at
                            .map(|at| format!(" ({})", reason_words::when(at, &tz)))
                            .unwrap_or_default()
                    )),
                    TodoStatus::Snoozed if link.action == LinkAction::Snooze && !todo.is_due(now) => LinkState::Gone(format!(
                        "Already put off{}.",
                        todo.snoozed_until
                            .map(|at| format!(" until {}", reason_words::when(at, &tz)))
                            .unwrap_or_default()
                    )),
                    _ => LinkState::Open,
                };
                Ok((page(title, detail, state), None))
            }
            LinkItem::Payment(member) => {
                let Some((facts, _)) = self.store.get_member(account.id, member).await? else {
                    return Ok((
                        page(
                            "A payment".into(),
                            Vec::new(),
                            LinkState::Gone("This member is no longer here.".into()),
                        ),
                        None,
                    ));
                };
                let name = facts.first_name_or_address();
                let title = format!("Check {name}'s payment");
                let mut detail = Vec::new();
                if let Some(at) = facts.last_payment_failed_at {
                    detail.push(format!("Their payment failed on {}.", reason_words::when(at, &tz)));
                }
                detail.push("Nothing works on it yet: no message about it has gone out.".into());
                let (monthly, _) = crate::engine::monthly_value(&facts, &account.settings);
                detail.push(format!("They pay {}/month.", crate::kernel::plural::dollars(monthly)));
                let now = self.clock.now();
                let seen = facts.payment_seen.as_ref().filter(|s| s.failed_at == facts.last_payment_failed_at);
                let state = match seen {
                    _ if !facts.payment_failing => LinkState::Gone("Their payment has gone through since: nothing to check.".into()),
                    Some(s) if s.until.is_none() => LinkState::Gone("Already marked as checked.".into()),
                    Some(PaymentSeen { until: Some(until), .. }) if link.action == LinkAction::Snooze && *until > now => {
                        LinkState::Gone(format!("Already put off until {}.", reason_words::when(*until, &tz)))
                    }
                    _ => LinkState::Open,
                };
                Ok((page(title, detail, state), None))
            }
            &LinkItem::Suggestion(id) => {
                let Some(s) = self.store.get_suggestion(account.id, id).await? else {
                    return Ok((
                        page(
                            "A suggestion".into(),
                            Vec::new(),
                            LinkState::Gone("This suggestion is no longer here.".into()),
                        ),
                        None,
                    ));
                };
                let state = match (s.status, s.decided_at) {
                    (SuggestionStatus::Pending, _) => LinkState::Open,
                    (status, at) => LinkState::Gone(format!(
                        "Already {}{}.",
                        if status == SuggestionStatus::Applied {
                            "taken"
                        } else {
                            "left as it is"
                        },
                        at.map(|at| format!(" ({})", reason_words::when(at, &tz))).unwrap_or_default()
                    )),
                };
                Ok((page(s.title, vec![s.body], state), None))
            }
        }
    }
}

/// A payment paid meanwhile: the owner's word on it is not needed.
const PAYMENT_NOT_FAILING: &str = "payment_not_failing";

/// Whether a decision failed because its item was decided or changed meanwhile (by another
/// link, a reply, the dashboard, or the member): its page then says what happened.
fn decided_already(e: &EngineError) -> bool {
    match e {
        EngineError::StaleVersion | EngineError::InvalidTransition { .. } | EngineError::InvalidState { .. } => true,
        EngineError::Invalid(e) => e.code == "todo_done" || e.code == PAYMENT_NOT_FAILING || e.code == "suggestion_decided",
        _ => false,
    }
}

/// What became of a task that no longer waits for this decision, in the owner's words.
fn task_fate(task: &Task, tz: &jiff::tz::TimeZone) -> String {
    let when = reason_words::when(task.updated_at, tz);
    let why = task
        .outcome_reason
        .as_deref()
        .map(|r| format!(" {}.", reason_words::sentence(r).trim_end_matches('.')))
        .unwrap_or_default();
    match task.status {
        s if s.is_terminal() => format!("Already decided: the task closed on {when}.{why}"),
        TaskStatus::PendingReview | TaskStatus::Escalated => format!("This link no longer applies to it (changed {when}).{why}"),
        _ => format!("Already decided ({when}): the agent is working on it."),
    }
}

/// A link past its time: the page says so, and what to open instead.
fn expired(page: LinkPage) -> LinkPage {
    LinkPage {
        state: LinkState::Gone("This link has expired. The item is still waiting on your dashboard.".into()),
        ..page
    }
}
