//! The conversation loop (spec §6.5, §8, §17, §22, §24.3): a member's reply reaches its task,
//! the agent reads it and answers, waits, closes or hands it to the owner; the owner's guidance
//! is carried out the same way.
//!
//! Two phases, so that nothing is lost whatever races: [`Engine::receive_reply`] routes the
//! mail and stores it in the conversation — durably, before anything else — marking the task
//! `awaiting` and due now. The task's next step (the followup worker, or at once from the
//! webhook) then reads it with the agent under the task's version, like any other step: a
//! duplicate delivery or a worker racing it changes nothing twice. An answer is not sent from
//! here: it becomes the task's next touch and goes through every gate a follow-up does.

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};

use super::Engine;
use crate::account::Account;
use crate::error::{Conflict, EngineError, StoreError};
use crate::ids::{AccountId, Email, MemberId, TaskId, new_ulid};
use crate::inbound::{self, InboundMail};
use crate::limits::{ESCALATION_SNAPSHOT_MESSAGES, REPLY_DEFAULT_WAIT_DAYS, REPLY_MAX_WAIT_DAYS, REPLY_MIN_CONFIDENCE, WEBHOOK_DEDUP_TTL};
use crate::ports::{DraftRequest, ReplyAction, ReplyEvaluation, ReplyRequest, TaskCommit, TaskQuery};
use crate::prompt::{PromptInput, system_prompt};
use crate::task::{Awaiting, ConversationMessage, EscalationContext, Role, Task, TaskStatus, ThreadMessage};
use crate::task_type;
use crate::transition::{Why, record, start_handling, transition};
use crate::work::WorkItem;

use super::StepOutcome;
use super::ai::{self, AiGate, AiPermit};
use crate::reason::Reason;

/// What became of an inbound message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboundOutcome {
    /// Stored in the task's conversation; `status` is the task's status afterwards.
    Stored {
        account_id: AccountId,
        task_id: TaskId,
        status: TaskStatus,
    },
    /// The same message was received before.
    Duplicate,
    /// No genuine reply address or known thread: it belongs to no task.
    Unrouted(String),
}

/// What reading an awaited message leaves the step with.
pub(super) enum Read {
    /// The step is over (closed, escalated, waiting, cancelled).
    Done(StepOutcome),
    /// Carry on to the send path with this task: it has an answer to send.
    Send(Box<Task>),
}

/// Who is being suppressed, and why (spec §22.2).
struct Suppression<'a> {
    account: AccountId,
    email: &'a Email,
    member: Option<&'a MemberId>,
    reason: &'a str,
}

impl Engine {
    /// Route a raw inbound message to its task and store it (phase one); then try the task's
    /// next step at once — if that fails, the tick runs it.
    pub async fn receive_reply(&self, raw: &[u8]) -> Result<InboundOutcome, EngineError> {
        let mail = inbound::parse(raw)?;
        let Some((account_id, task_id)) = self.route(&mail).await? else {
            tracing::warn!(
                reply_tokens = mail.reply_tokens.len(),
                thread_ids = mail.thread_ids.len(),
                "inbound mail routes nowhere"
            );
            return Ok(InboundOutcome::Unrouted(
                "no genuine reply address or known thread in the message".into(),
            ));
        };
        let now = self.clock.now();
        let dedup_id = mail.message_id.clone().unwrap_or_else(|| hex_digest(raw));
        let source = format!("inbound:{account_id}");
        if !self.store.claim_webhook(&source, &dedup_id, now, now + WEBHOOK_DEDUP_TTL).await? {
            return Ok(InboundOutcome::Duplicate);
        }
        let stored = match self.store_reply(account_id, task_id, &mail, now).await {
            Ok(task) => task,
            Err(e) => {
                // Not stored: forget the claim so the sender's retry is taken.
                let _ = self.store.release_webhook(&source, &dedup_id).await;
                return Err(e);
            }
        };
        let mut status = stored.status;
        if stored.awaiting.is_some() && stored.status == TaskStatus::Waiting {
            let item = WorkItem {
                account_id,
                task_id,
                due_at: now,
            };
            match self.follow_up(&item).await {
                Ok(outcome) => tracing::info!(task = %task_id, ?outcome, "reply read"),
                Err(e) => tracing::warn!(task = %task_id, error = %e, "reply stored; reading it is left to the next tick"),
            }
            if let Some(task) = self.store.get_task(account_id, task_id).await? {
                status = task.status;
            }
        }
        Ok(InboundOutcome::Stored {
            account_id,
            task_id,
            status,
        })
    }

    /// The signed reply address first; a forged one routes nowhere. Without one, the thread
    /// ids — but then only from the member the task is about, since ids are not secrets.
    async fn route(&self, mail: &InboundMail) -> Result<Option<(AccountId, TaskId)>, EngineError> {
        if !mail.reply_tokens.is_empty() {
            for token in &mail.reply_tokens {
                if let Some(task) = self.config.signing_key.verify_reply_token(token)
                    && let Some(account) = self.store.task_account(task).await?
                {
                    return Ok(Some((account, task)));
                }
            }
            return Ok(None);
        }
        for id in &mail.thread_ids {
            if let Some((account, task_id)) = self.store.message_route(id).await? {
                let task = self.store.get_task(account, task_id).await?;
                let from_member = task.is_some_and(|t| t.member.email.as_ref() == Some(&mail.from));
                return Ok(from_member.then_some((account, task_id)));
            }
        }
        Ok(None)
    }

    /// Phase one: the reply goes into the conversation before anything else, whatever the
    /// task's state; an open task is marked to read it and made due now.
    async fn store_reply(&self, account: AccountId, id: TaskId, mail: &InboundMail, now: Timestamp) -> Result<Task, EngineError> {
        for _ in 0..8 {
            let task = self
                .store
                .get_task(account, id)
                .await?
                .ok_or(EngineError::NotFound { what: "task" })?;
            let text = if mail.text.is_empty() {
                "(an empty reply)".to_owned()
            } else {
                mail.text.clone()
            };
            let from_note = match &task.member.email {
                Some(email) if *email != mail.from => format!(" from {} (not the member's address on file)", mail.from),
                _ => String::new(),
            };
            let mut messages = Vec::new();
            let commit = if mail.automatic {
                messages.push(system_message(
                    now,
                    format!(
                        "An automatic reply arrived{from_note} and was not treated as the member's answer: {}",
                        preview(&text)
                    ),
                ));
                let (next, log) = record(&task, now, Why::new(Reason::AutoReplyIgnored).detail(preview(&text)));
                TaskCommit {
                    messages,
                    ..TaskCommit::new(next, log)
                }
            } else {
                messages.push(ConversationMessage {
                    id: new_ulid(now),
                    at: now,
                    role: Role::Member,
                    content: text.clone(),
                });
                let mut logs = Vec::new();
                let mut next = task.clone();
                let detail = format!("{}{from_note}", preview(&text));
                match task.status {
                    TaskStatus::Waiting | TaskStatus::Executing => {
                        let (n, log) = record(&next, now, Why::new(Reason::MemberReplied).detail(detail));
                        next = n;
                        logs.push(log);
                        next.awaiting = Some(Awaiting::MemberReply);
                        if next.status == TaskStatus::Waiting {
                            next.next_action_at = Some(now);
                        }
                    }
                    TaskStatus::Dormant => {
                        // §19.2: a human replying is always worth answering.
                        let (n, log) = transition(
                            &next,
                            TaskStatus::Executing,
                            now,
                            Why::new(Reason::MemberRepliedWhileDormant).detail(detail),
                        )?;
                        logs.push(log);
                        let (mut n, log) = transition(&n, TaskStatus::Waiting, now, Why::new(Reason::AwaitingAgent))?;
                        logs.push(log);
                        n.awaiting = Some(Awaiting::MemberReply);
                        n.next_action_at = Some(now);
                        n.dormant_at = None;
                        n.dormant_expires_at = None;
                        next = n;
                        messages.push(system_message(now, "The task woke up: the member replied while it was dormant."));
                    }
                    TaskStatus::Completed | TaskStatus::Cancelled => {
                        let (n, log) = record(&next, now, Why::new(Reason::LateReplyOwnerNotified).detail(detail));
                        next = n;
                        logs.push(log);
                        messages.push(system_message(
                            now,
                            format!(
                                "The member replied after the task was {}; it stays closed and the owner decides what to do.",
                                task.status
                            ),
                        ));
                    }
                    TaskStatus::Escalated | TaskStatus::PendingReview | TaskStatus::Ready => {
                        let (n, log) = record(&next, now, Why::new(Reason::MemberRepliedToOwner).detail(detail));
                        next = n;
                        logs.push(log);
                    }
                }
                if let Some(message_id) = &mail.message_id
                    && !next.thread.iter().any(|m| m.message_id == *message_id)
                    && !task.status.is_terminal()
                {
                    next.thread.push(ThreadMessage {
                        message_id: message_id.clone(),
                        provider_message_id: None,
                    });
                }
                TaskCommit {
                    expected_version: task.version,
                    task: next,
                    log: logs,
                    messages,
                    send: None,
                }
            };
            match self.store.commit(&commit).await {
                Ok(()) => {
                    self.notify_commit(&commit).await;
                    return Ok(commit.task);
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Phase two, inside a worker's step: read what the task awaits.
    pub(super) async fn read_awaiting(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        match task.awaiting {
            Some(Awaiting::OwnerGuidance) => self.carry_out_guidance(account, task, conversation, now).await,
            _ => self.read_reply(account, task, conversation, now).await,
        }
    }

    async fn read_reply(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        let Some(reply) = conversation.iter().rev().find(|m| m.role == Role::Member) else {
            let (mut next, log) = record(&task, now, Why::new(Reason::NoReplyToRead));
            next.awaiting = None;
            self.store.commit(&TaskCommit::new(next, log)).await?;
            return Ok(Read::Done(StepOutcome::Skipped("no_reply_to_read".into())));
        };
        // The hard rule before any AI (spec §22.3): stop means stop, and no acknowledgment.
        if crate::opt_out::is_opt_out(&reply.content) {
            return self.opted_out(account, task, "member_request", "opt_out_keywords", now).await;
        }
        if task.budget.turns_max > 0 && task.budget.turns_used >= task.budget.turns_max {
            return self
                .escalate(task, conversation, now, Reason::TurnBudgetExhaustedOnReply, Blocker::default())
                .await;
        }
        let (task, permit) = match self.spend_ai_call(account, task, conversation, now).await? {
            Ok(allowed) => allowed,
            Err(done) => return Ok(done),
        };
        let def = task_type::definition(&task.task_type);
        let member_tasks = self.member_tasks(task.account_id, &task.member.id).await?;
        let prompt = system_prompt(&PromptInput::for_task(&task, account, &[], &member_tasks, now));
        let request = ReplyRequest {
            task_type: task.task_type.clone(),
            goal: task.goal.clone(),
            outcome_codes: def.goal.outcomes.iter().map(|o| o.code.to_owned()).collect(),
            member_first_name: ai::first_name(&task),
            profile: account.settings.profile.clone(),
            business_name: account.sender_name().to_owned(),
            system_prompt: prompt.unwrap_or_default(),
            conversation: conversation.iter().filter(|m| m.id != reply.id).cloned().collect(),
            reply: reply.content.clone(),
            messages_left: task.budget.messages_left(),
            turns_left: task.budget.turns_max.saturating_sub(task.budget.turns_used),
            days_left: task.budget.expires_at.duration_since(now).as_hours() / 24,
        };
        let evaluation = match permit.evaluate_reply(&request).await {
            Ok(e) => e,
            Err(e) => {
                let blocker = Blocker {
                    detail: Some(format!("the agent could not judge the reply: {e}")),
                    ..Blocker::default()
                };
                return self.escalate(task, conversation, now, Reason::ReplyEvaluationFailed, blocker).await;
            }
        };
        // One turn per reply read, and the agent's reasoning in the conversation (spec §6.5).
        let mut task = task;
        task.budget.turns_used += 1;
        let judged = format!(
            "action {:?}, confidence {}, outcome {}: {}",
            evaluation.action,
            evaluation.confidence,
            evaluation.outcome.as_deref().unwrap_or("none"),
            evaluation.reasoning
        );
        let reasoning = system_message(now, format!("Agent's reading of the reply — {judged}"));
        if evaluation.suggest_suppression {
            return self.opted_out(account, task, "agent_suggested", &judged, now).await;
        }
        let named_outcome = evaluation.outcome.as_deref().filter(|code| def.outcome(code).is_some());
        match evaluation.action {
            ReplyAction::Reply => {
                let draft = evaluation.reply.clone().filter(|r| !r.trim().is_empty());
                let blocked = if task.budget.messages_left() == 0 {
                    Some(Reason::WantsToReplyButMessageBudgetExhausted)
                } else if crate::limits::is_due(task.budget.expires_at, now) {
                    // A task woken from dormant has used its time: the owner answers.
                    Some(Reason::WantsToReplyButTimeBudgetExhausted)
                } else if evaluation.confidence < REPLY_MIN_CONFIDENCE {
                    Some(Reason::LowConfidenceOnReply)
                } else if draft.is_none() {
                    Some(Reason::ReplyWithoutText)
                } else {
                    None
                };
                if let Some(reason) = blocked {
                    let blocker = Blocker::from_evaluation(&evaluation, judged);
                    return self.escalate_with(task, conversation, now, reason, blocker, reasoning).await;
                }
                let (mut next, log) = record(&task, now, Why::new(Reason::ReplyDrafted).detail(judged));
                next.awaiting = None;
                next.answer = draft;
                next.next_action_at = Some(now);
                let mut commit = TaskCommit::new(next.clone(), log);
                commit.messages.push(reasoning);
                self.store.commit(&commit).await?;
                Ok(Read::Send(Box::new(next)))
            }
            ReplyAction::Wait => {
                let days = evaluation
                    .wait_days
                    .unwrap_or(REPLY_DEFAULT_WAIT_DAYS)
                    .clamp(1, REPLY_MAX_WAIT_DAYS);
                let wanted = now + SignedDuration::from_hours(24 * i64::from(days));
                // Within the time budget; a task past it (woken from dormant) goes back to
                // watching when the wait is over.
                let until = if task.budget.expires_at > now {
                    wanted.min(task.budget.expires_at)
                } else {
                    wanted
                };
                let (mut next, log) = record(
                    &task,
                    now,
                    Why::new(Reason::MemberReplyWait).detail(format!("{judged}; next step {until}")),
                );
                next.awaiting = None;
                next.next_action_at = Some(until);
                let mut commit = TaskCommit::new(next, log);
                commit.messages.push(reasoning);
                self.store.commit(&commit).await?;
                Ok(Read::Done(StepOutcome::Deferred {
                    until,
                    reason: Reason::MemberReplyWait,
                }))
            }
            ReplyAction::Close => {
                let Some(outcome) = named_outcome else {
                    let blocker = Blocker::from_evaluation(
                        &evaluation,
                        format!("the agent closed without one of the type's outcomes: {judged}"),
                    );
                    return self
                        .escalate_with(task, conversation, now, Reason::CloseWithoutValidOutcome, blocker, reasoning)
                        .await;
                };
                let reason = if evaluation.provisional {
                    Reason::VerbalCommitment
                } else {
                    Reason::MemberReplyResolved
                };
                let mut why = Why::new(reason).outcome(outcome).detail(judged);
                if evaluation.provisional {
                    // A verbal commitment: attribution confirms it when the signal comes, or
                    // downgrades it when the window passes (spec §16.2).
                    why = why.provisional();
                }
                let (next, log) = transition(&task, TaskStatus::Completed, now, why)?;
                let mut commit = TaskCommit::new(next.clone(), log);
                commit.messages.push(reasoning);
                self.store.commit(&commit).await?;
                self.publish_closed(&next).await;
                Ok(Read::Done(StepOutcome::Moved {
                    to: TaskStatus::Completed,
                    reason,
                }))
            }
            ReplyAction::Escalate => {
                let reason = if evaluation.other_subject.is_some() {
                    Reason::ReplyAboutAnotherSubject
                } else if evaluation.unanswered_question.is_some() {
                    Reason::MemberQuestionNeedsOwner
                } else {
                    Reason::AgentEscalatedReply
                };
                let blocker = Blocker::from_evaluation(&evaluation, judged);
                self.escalate_with(task, conversation, now, reason, blocker, reasoning).await
            }
        }
    }

    /// The owner's words, carried out (spec §17.4): the agent writes the next message from
    /// them, and the step sends it through every gate.
    async fn carry_out_guidance(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        let guidance = conversation
            .iter()
            .rev()
            .find(|m| m.role == Role::Owner)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        if task.budget.messages_left() == 0 {
            let blocker = Blocker {
                detail: Some("the owner's guidance needs a message but the task's message budget is spent; resolve or cancel it".into()),
                ..Blocker::default()
            };
            return self
                .escalate(task, conversation, now, Reason::MessageBudgetExhausted, blocker)
                .await;
        }
        let (task, permit) = match self.spend_ai_call(account, task, conversation, now).await? {
            Ok(allowed) => allowed,
            Err(done) => return Ok(done),
        };
        let def = task_type::definition(&task.task_type);
        let recent: Vec<serde_json::Value> = conversation
            .iter()
            .rev()
            .take(ESCALATION_SNAPSHOT_MESSAGES)
            .rev()
            .map(|m| serde_json::json!({"role": m.role, "content": m.content}))
            .collect();
        let request = DraftRequest {
            tone: "owner_guided".into(),
            context: serde_json::json!({"owner_guidance": guidance, "conversation": recent}),
            ..ai::draft_request(account, def, &task.goal, ai::first_name(&task), task.touch)
        };
        let draft = match permit.draft(&request).await {
            Ok(d) if !d.body.trim().is_empty() => d,
            other => {
                let detail = match other {
                    Err(e) => format!("the agent could not write from the guidance: {e}"),
                    Ok(_) => "the agent wrote nothing from the guidance".into(),
                };
                let blocker = Blocker {
                    detail: Some(detail),
                    ..Blocker::default()
                };
                return self.escalate(task, conversation, now, Reason::GuidanceNotCarriedOut, blocker).await;
            }
        };
        let (mut next, log) = transition(
            &task,
            TaskStatus::Waiting,
            now,
            Why::new(Reason::GuidanceDrafted).detail(preview(&draft.body)),
        )?;
        next.awaiting = None;
        next.answer = Some(draft.body);
        next.next_action_at = Some(now);
        self.store.commit(&TaskCommit::new(next.clone(), log)).await?;
        Ok(Read::Send(Box::new(next)))
    }

    /// One AI call for `task` (spec §7.12), counted on the task it returns; or what happens
    /// instead: the owner takes a task that used its calls, and a day whose calls are used up
    /// leaves the awaited message to be read the next day.
    async fn spend_ai_call(
        &self,
        account: &Account,
        mut task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Result<(Task, AiPermit), Read>, EngineError> {
        match self.ai_call(account, Some(task.ai_calls), now).await? {
            AiGate::Allowed(permit) => {
                task.ai_calls += 1;
                Ok(Ok((task, permit)))
            }
            AiGate::TaskSpent => {
                let blocker = Blocker {
                    detail: Some(format!("{} AI calls used, the most a task may make", task.ai_calls)),
                    ..Blocker::default()
                };
                Ok(Err(self
                    .escalate(task, conversation, now, Reason::AiBudgetExhausted, blocker)
                    .await?))
            }
            AiGate::DayUsed { until } => {
                let why =
                    Why::new(Reason::AiDailyLimit).detail(format!("the account's AI calls for today are used up; reading it {until}"));
                self.store.commit(&Self::reschedule(&task, until, now, why)).await?;
                Ok(Err(Read::Done(StepOutcome::Deferred {
                    until,
                    reason: Reason::AiDailyLimit,
                })))
            }
        }
    }

    /// `POST /tasks/{id}/guidance`: escalated → executing with the owner's words in the
    /// conversation; the next step carries them out.
    pub async fn guidance(&self, account: AccountId, id: TaskId, text: &str) -> Result<Task, EngineError> {
        let text = text.trim();
        if text.is_empty() || text.len() > 5_000 {
            return Err(crate::error::InvalidInput::new("invalid_guidance", "text must be 1-5000 characters").into());
        }
        let now = self.clock.now();
        let task = self
            .store
            .get_task(account, id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        if task.status != TaskStatus::Escalated {
            return Err(EngineError::InvalidTransition {
                from: task.status,
                to: TaskStatus::Executing,
            });
        }
        let (mut next, log) = transition(
            &task,
            TaskStatus::Executing,
            now,
            Why::new(Reason::OwnerProvidedGuidance).detail(preview(text)),
        )?;
        next.awaiting = Some(Awaiting::OwnerGuidance);
        next.next_action_at = Some(now);
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.push(ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::Owner,
            content: text.to_owned(),
        });
        self.store.commit(&commit).await?;
        Ok(next)
    }

    /// The account's kill switch (spec §7.6) holds every step, but not a member's stop
    /// (spec §22.3): an awaited reply that says stop is honoured at once — suppression, every
    /// task of theirs cancelled, nothing sent — so nothing about them can go out in the first
    /// steps after the owner resumes. `None` when the task awaits no such reply.
    pub(super) async fn stop_while_paused(
        &self,
        account: &Account,
        task: &Task,
        now: Timestamp,
    ) -> Result<Option<StepOutcome>, EngineError> {
        if task.awaiting != Some(Awaiting::MemberReply) {
            return Ok(None);
        }
        let Some(history) = self.store.task_history(task.account_id, task.id).await? else {
            return Ok(None);
        };
        let says_stop = history
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Member)
            .is_some_and(|m| crate::opt_out::is_opt_out(&m.content));
        if !says_stop || history.task.awaiting != Some(Awaiting::MemberReply) {
            return Ok(None);
        }
        match self
            .opted_out(account, history.task, "member_request", "opt_out_keywords", now)
            .await?
        {
            Read::Done(outcome) => Ok(Some(outcome)),
            Read::Send(_) => Ok(None),
        }
    }

    /// Member-level stop (spec §22): suppress the address and cancel every active task of the
    /// member, this one included; nothing is sent to them, not even an acknowledgment.
    async fn opted_out(&self, account: &Account, task: Task, reason: &str, detail: &str, now: Timestamp) -> Result<Read, EngineError> {
        let Some(email) = task.member.email.clone() else {
            return self
                .escalate(task, &[], now, Reason::OptOutWithoutAddress, Blocker::default())
                .await;
        };
        let why = Why::new(Reason::MemberOptedOut)
            .outcome("opted_out")
            .detail(format!("{reason}: {detail}"));
        let (next, log) = transition(&task, TaskStatus::Cancelled, now, why)?;
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.push(system_message(
            now,
            "The member asked to stop: they are suppressed and every task about them is cancelled. No reply is sent.",
        ));
        self.store.commit(&commit).await?;
        self.publish_closed(&next).await;
        self.suppress_member(Suppression {
            account: account.id,
            email: &email,
            member: Some(&task.member.id),
            reason,
        })
        .await?;
        Ok(Read::Done(StepOutcome::Moved {
            to: TaskStatus::Cancelled,
            reason: Reason::MemberOptedOut,
        }))
    }

    /// Suppress an address from the outside (unsubscribe link, owner): the same member-level
    /// stop as an opt-out reply. Returns how many tasks were cancelled.
    pub async fn suppress(&self, account: AccountId, email: &Email, reason: &str) -> Result<usize, EngineError> {
        self.suppress_member(Suppression {
            account,
            email,
            member: None,
            reason,
        })
        .await
    }

    async fn suppress_member(&self, who: Suppression<'_>) -> Result<usize, EngineError> {
        let now = self.clock.now();
        self.store.put_suppression(who.account, who.email, who.reason, now).await?;
        let cancelled = match who.member {
            // The member is known: their own open tasks, through the guards.
            Some(member) => {
                self.cancel_all(self.store.member_active_tasks(who.account, member).await?, &who)
                    .await?
            }
            None => self.cancel_all_by_address(&who).await?,
        };
        tracing::info!(account = %who.account, cancelled, reason = who.reason, "member suppressed");
        let name = who.member.map_or_else(|| who.email.to_string(), ToString::to_string);
        let draft = super::owner_notices::NoticeDraft {
            kind: crate::owner_notice::NoticeKind::MemberOptedOut,
            task_id: None,
            member_id: who.member.cloned(),
            title: format!("{name} will get no more mail ({})", who.reason.replace('_', " ")),
            detail: format!(
                "{} is suppressed ({}); {cancelled} active task(s) about them were cancelled and nothing more is sent.",
                who.email, who.reason
            ),
        };
        self.notify_owner_after(who.account, draft, false).await;
        Ok(cancelled)
    }

    /// Cancel every active task of `tasks` that names the suppressed address.
    async fn cancel_all(&self, tasks: Vec<Task>, who: &Suppression<'_>) -> Result<usize, EngineError> {
        let mut cancelled = 0;
        for task in tasks {
            if task.is_active() && task.member.email.as_ref() == Some(who.email) && self.cancel_opted_out(task, who.reason).await? {
                cancelled += 1;
            }
        }
        Ok(cancelled)
    }

    /// Only the address is known (an owner's or an unsubscribe's stop): every task that names
    /// it, in a rare and owner-initiated scan of the account's tasks.
    async fn cancel_all_by_address(&self, who: &Suppression<'_>) -> Result<usize, EngineError> {
        let mut cancelled = 0;
        let mut cursor = None;
        loop {
            let query = TaskQuery {
                status: None,
                member_id: None,
                limit: 200,
                cursor,
            };
            let (tasks, next) = self.store.list_tasks(who.account, &query).await?;
            cancelled += self.cancel_all(tasks, who).await?;
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(cancelled),
            }
        }
    }

    /// Cancel one of a suppressed member's tasks, re-reading on a lost race.
    async fn cancel_opted_out(&self, task: Task, reason: &str) -> Result<bool, EngineError> {
        let mut task = task;
        for _ in 0..4 {
            if !task.is_active() {
                return Ok(false);
            }
            let now = self.clock.now();
            let why = Why::new(Reason::MemberOptedOut)
                .outcome("opted_out")
                .detail(format!("member-level stop ({reason})"));
            let (next, log) = transition(&task, TaskStatus::Cancelled, now, why)?;
            match self.store.commit(&TaskCommit::new(next.clone(), log)).await {
                Ok(()) => {
                    self.publish_closed(&next).await;
                    return Ok(true);
                }
                Err(StoreError::Conflict(Conflict::Version)) => match self.store.get_task(task.account_id, task.id).await? {
                    Some(t) => task = t,
                    None => return Ok(false),
                },
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    async fn member_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, EngineError> {
        Ok(self.store.member_active_tasks(account, member).await?)
    }

    async fn escalate(
        &self,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
        reason: Reason,
        blocker: Blocker,
    ) -> Result<Read, EngineError> {
        let note = system_message(now, format!("Handed to the owner: {reason}"));
        self.escalate_with(task, conversation, now, reason, blocker, note).await
    }

    /// Escalate with the context the owner needs (spec §17.3).
    async fn escalate_with(
        &self,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
        reason: Reason,
        blocker: Blocker,
        note: ConversationMessage,
    ) -> Result<Read, EngineError> {
        let mut why = Why::new(reason);
        if let Some(detail) = &blocker.detail {
            why = why.detail(detail.clone());
        }
        // A waiting task escalates directly; a dormant or ready one passes through executing.
        let expected_version = task.version;
        let mut logs = Vec::new();
        let mut current = task;
        if !current.status.can_move_to(TaskStatus::Escalated) {
            let (started, log) = start_handling(&current, now, reason)?;
            logs.push(log);
            current = started;
        }
        let (mut next, log) = transition(&current, TaskStatus::Escalated, now, why)?;
        logs.push(log);
        let mut suggested = vec![
            "give guidance: the agent writes the next message from your words".to_owned(),
            "resolve it yourself with an outcome".to_owned(),
            "cancel it".to_owned(),
        ];
        if blocker.draft_reply.is_some() {
            suggested.insert(
                0,
                "send the agent's draft by giving it as guidance (edit it first if needed)".into(),
            );
        }
        next.escalation = Some(EscalationContext {
            blocked_at: now,
            blocked_by: if blocker.question.is_some() || blocker.other_subject {
                "member"
            } else {
                "agent"
            }
            .into(),
            reason: blocker.detail.clone().unwrap_or_else(|| reason.as_str().replace('_', " ")),
            question: blocker.question,
            draft_reply: blocker.draft_reply,
            suggested_actions: suggested,
            conversation_snapshot: conversation
                .iter()
                .rev()
                .take(ESCALATION_SNAPSHOT_MESSAGES)
                .rev()
                .cloned()
                .collect(),
            resume_instructions: "the agent reads your guidance and writes the next message to the member from it".into(),
        });
        let commit = TaskCommit {
            expected_version,
            task: next,
            log: logs,
            messages: vec![note],
            send: None,
        };
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(Read::Done(StepOutcome::Moved {
            to: TaskStatus::Escalated,
            reason,
        }))
    }
}

/// What blocked the agent, for the escalation context.
#[derive(Default)]
struct Blocker {
    detail: Option<String>,
    question: Option<String>,
    draft_reply: Option<String>,
    other_subject: bool,
}

impl Blocker {
    fn from_evaluation(evaluation: &ReplyEvaluation, detail: String) -> Self {
        Self {
            detail: Some(detail),
            question: evaluation.unanswered_question.clone(),
            draft_reply: evaluation.reply.clone().filter(|r| !r.trim().is_empty()),
            other_subject: evaluation.other_subject.is_some(),
        }
    }
}

fn system_message(now: Timestamp, content: impl Into<String>) -> ConversationMessage {
    ConversationMessage {
        id: new_ulid(now),
        at: now,
        role: Role::System,
        content: content.into(),
    }
}

/// The first 200 characters, for log details.
fn preview(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

fn hex_digest(raw: &[u8]) -> String {
    Sha256::digest(raw).iter().map(|b| format!("{b:02x}")).collect()
}
