//! The conversation loop: a member's reply reaches its task,
//! the agent reads it and answers, waits, closes or hands it to the owner; the owner's guidance
//! is carried out the same way. What to do with a reply is decided in `crate::conversation::reply`; here it
//! is routed, stored, judged by the agent through the AI budget, and carried out.
//!
//! Two phases, so that nothing is lost whatever races: [`Engine::receive_reply`] routes the
//! mail and stores it in the conversation — durably, before anything else — marking the task
//! `awaiting` and due now. The task's next step (the followup worker, or at once from the
//! webhook) then reads it with the agent under the task's version, like any other step: a
//! duplicate delivery or a worker racing it changes nothing twice. An answer is not sent from
//! here: it becomes the task's next touch and goes through every gate a follow-up does.

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use super::StepOutcome;
use super::ai::{self, AiGate, AiPermit};
use super::messages::MessageFor;
use super::{Engine, boxed};
use crate::conversation::inbound::{self, InboundMail};
use crate::conversation::prompt::{PromptInput, system_prompt};
use crate::conversation::reply::{self, Blocker, Reading, ReplyDecision, preview};
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, MemberId, TaskId, new_ulid};
use crate::kernel::limits::WEBHOOK_DEDUP_TTL;
use crate::owner::account::Account;
use crate::ports::{CommitExtras, CompletionRequest, DraftRequest, ReplyRequest};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::flood::OnceClaim;
use crate::task::open_loop::LoopSignal;
use crate::task::progress::{self, Judged};
use crate::task::reason::Reason;
use crate::task::task_type;
use crate::task::transition::{Why, record, transition};
use crate::task::work::WorkItem;
use crate::task::{Awaiting, ConversationMessage, HeldQuestion, Role, Task, TaskStatus, ThreadMessage};

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
    /// The owner's answer to one of our mails, read and carried out (`understood`), or its
    /// choices mailed back.
    Answered { account_id: AccountId, understood: bool },
}

/// What reading an awaited message leaves the step with.
pub(in crate::engine) enum Read {
    /// The step is over (closed, escalated, waiting, cancelled).
    Done(StepOutcome),
    /// Carry on to the send path with this task: it has an answer to send.
    Send(Box<Task>),
}

impl Engine {
    /// Route a raw inbound message to its task and store it (phase one); then try the task's
    /// next step at once — if that fails, the tick runs it.
    pub async fn receive_reply(&self, raw: &[u8]) -> Result<InboundOutcome, EngineError> {
        boxed(async move {
            let mail = inbound::parse(raw)?;
            let owner = mail
                .reply_tokens
                .iter()
                .find_map(|t| self.config.signing_key.verify_owner_reply_token(t));
            if let Some(to) = owner {
                let id = mail.message_id.clone().unwrap_or_else(|| hex_digest(raw));
                return self.owner_answer(&mail, to, id).await;
            }
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
            let mail = self.read_against_ours(mail, account_id, task_id).await?;
            let now = self.clock.now();
            // A delivery is its message to its task: the same Message-ID answering another task
            // (ids are chosen by the sender, and may collide) is another delivery.
            let dedup_id = format!("{task_id}:{}", mail.message_id.clone().unwrap_or_else(|| hex_digest(raw)));
            // Claimed in the reply's own commit: kept with the reply, or neither is, so a
            // function that dies half-way leaves the sender's retry to be taken.
            let claim = OnceClaim {
                source: format!("inbound:{account_id}"),
                key: dedup_id,
                now,
                expires_at: now + WEBHOOK_DEDUP_TTL,
            };
            let Some(stored) = self.store_reply(account_id, task_id, &mail, now, Some(claim)).await? else {
                return Ok(InboundOutcome::Duplicate);
            };
            // The reply's commit met the task's reply loops it carries; a task from before they
            // were carried (a sent touch, none noted) meets its loops from their records.
            if stranger(&stored, &mail).is_none() && !mail.automatic && stored.loops.is_empty() && stored.touch > 0 {
                self.meet_loops(account_id, &stored.member.id, LoopSignal::Reply { task: task_id })
                    .await?;
            }
            let mut status = stored.status;
            if let Some(from) = stranger(&stored, &mail).filter(|_| !mail.automatic)
                && matches!(stored.status, TaskStatus::Waiting | TaskStatus::Executing | TaskStatus::Dormant)
            {
                let conversation = self
                    .store
                    .task_history(account_id, task_id)
                    .await?
                    .map(|h| h.messages)
                    .unwrap_or_default();
                let blocker = Blocker::because(format!(
                    "a reply came from {from}, not from the member; the owner decides what it means"
                ));
                // Read for the escalation's webhook rule, on this rare path only.
                let account = self.store.get_account(account_id).await?;
                self.escalate(
                    account.as_ref(),
                    stored,
                    &conversation,
                    now,
                    Reason::ReplyFromAnotherSender,
                    blocker,
                )
                .await?;
                status = TaskStatus::Escalated;
            } else if stored.awaiting.is_some() && stored.status == TaskStatus::Waiting {
                let item = WorkItem {
                    account_id,
                    task_id,
                    due_at: now,
                };
                match boxed(self.follow_up(&item)).await {
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
        })
        .await
    }

    /// The reply read again against the gym's own messages in its task's conversation, so that
    /// no rule and no agent reads the gym's words as the member's.
    async fn read_against_ours(&self, mail: InboundMail, account: AccountId, task: TaskId) -> Result<InboundMail, EngineError> {
        let Some(history) = self.store.task_history(account, task).await? else {
            return Ok(mail);
        };
        let ours: Vec<&str> = history
            .messages
            .iter()
            .filter(|m| m.role == Role::Agent)
            .map(|m| m.content.as_str())
            .collect();
        Ok(mail.answering(&ours))
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
    /// Keep a member's message on its task, with `claim` (its delivery's) in the same commit:
    /// `None` when that delivery was kept before.
    pub(in crate::engine) async fn store_reply(
        &self,
        account: AccountId,
        id: TaskId,
        mail: &InboundMail,
        now: Timestamp,
        claim: Option<OnceClaim>,
    ) -> Result<Option<Task>, EngineError> {
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
            let from_note = match stranger(&task, mail) {
                Some(from) => format!(" from {from} (not the member's address on file)"),
                None => String::new(),
            };
            let mut messages = Vec::new();
            let commit = if let Some(from) = stranger(&task, mail).filter(|_| !mail.automatic) {
                // Someone else wrote with a genuine reply address (a forward, a shared inbox):
                // shown to the owner, never the member's answer.
                messages.push(system_message(
                    now,
                    format!("A reply arrived from {from}, not the member's address on file; it does not act for the member:\n{text}"),
                ));
                let (next, log) = record(
                    &task,
                    now,
                    Why::new(Reason::ReplyFromAnotherSender).detail(format!("{from}: {}", preview(&text))),
                );
                TaskCommit {
                    messages,
                    ..TaskCommit::new(next, log)
                }
            } else if mail.automatic {
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
                    original: mail.original.clone(),
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
                    // A held-out task sent nothing; what reaches it is the owner's to read.
                    TaskStatus::Escalated | TaskStatus::PendingReview | TaskStatus::Ready | TaskStatus::HeldOut => {
                        let (n, log) = record(&next, now, Why::new(Reason::MemberRepliedToOwner).detail(detail));
                        next = n;
                        logs.push(log);
                    }
                }
                // What an escalation of this task will quote, without reading the conversation.
                next.member_last_words = Some(crate::task::escalation::clip(
                    mail.original.as_deref().unwrap_or(&text),
                    crate::task::escalation::MAX_QUOTED_CHARS,
                ));
                if let Some(message_id) = &mail.message_id
                    && !next.thread.iter().any(|m| m.message_id == *message_id)
                    && !task.status.is_terminal()
                {
                    next.thread.push(ThreadMessage {
                        message_id: message_id.clone(),
                        provider_message_id: None,
                    });
                }
                // The member's reply meets the task's open reply loops, in this same commit.
                let loops = crate::task::task_loops::meet_replies(&mut next, now);
                TaskCommit {
                    expected_version: task.version,
                    task: next,
                    log: logs,
                    messages,
                    send: None,
                    loops,
                    webhooks: true,
                }
            };
            let extras = CommitExtras {
                claim: claim.clone(),
                ..CommitExtras::default()
            };
            match self.store.commit_with(&commit, &extras).await {
                Ok(()) => {
                    self.notify_commit(&commit).await;
                    return Ok(Some(commit.task));
                }
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(StoreError::Conflict(Conflict::Claimed)) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Phase two, inside a worker's step: read what the task awaits.
    pub(in crate::engine) async fn read_awaiting(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        boxed(async move {
            match task.awaiting {
                Some(Awaiting::OwnerGuidance) => self.carry_out_guidance(account, task, conversation, now).await,
                _ => self.read_reply(account, task, conversation, now).await,
            }
        })
        .await
    }

    /// The member's reply: the rules before any AI, then the agent's judgment (one call, one
    /// turn), then the reply decision, carried out.
    async fn read_reply(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        let reply = match reply::before_judging(&task, conversation) {
            Reading::Judge(reply) => reply,
            Reading::Decided(decision) => return self.carry_out_reply(account, task, conversation, decision, None, now).await,
        };
        let (mut task, permit) = match self.spend_ai_call(account, task, conversation, now).await? {
            Ok(allowed) => allowed,
            Err(done) => return Ok(done),
        };
        let def = task_type::definition(&task.task_type);
        let member_tasks = self.member_tasks(task.account_id, &task.member.id).await?;
        let memories = self.prompt_memories(task.account_id, Some(&task.member.id), now).await?;
        task.memories_used = memories.used;
        let prompt = system_prompt(&PromptInput::for_task(&task, account, &memories.memories, &member_tasks, now)).unwrap_or_default();
        let facts = crate::owner::business_memory::faq_facts(&memories.memories, now);
        let request = ReplyRequest {
            facts,
            task_type: task.task_type.clone(),
            goal: task.goal.clone(),
            outcome_codes: def.goal.outcomes.iter().map(|o| o.code.to_owned()).collect(),
            member_first_name: ai::first_name(&task),
            profile: account.settings.profile.clone(),
            business_name: account.sender_name().to_owned(),
            system_prompt: prompt.clone(),
            conversation: conversation.iter().filter(|m| m.id != reply.id).cloned().collect(),
            // Less than a sentence survived the reading: the agent gets the whole message.
            reply: reply::member_words(reply).to_owned(),
            messages_left: task.budget.messages_left(),
            turns_left: task.budget.turns_max.saturating_sub(task.budget.turns_used),
            days_left: task.budget.expires_at.duration_since(now).as_hours() / 24,
            message: self
                .message_inputs(
                    account,
                    def.key,
                    crate::conversation::messages::REPLY,
                    MessageFor {
                        member: Some(&task.member.id),
                        first_name: ai::first_name(&task),
                        plan_id: task.member.plan_id.as_deref(),
                        facts: None,
                    },
                    now,
                )
                .await?,
        };
        let evaluation = match permit.evaluate_reply(&request).await {
            Ok(e) => e,
            Err(e) => {
                let decision = reply::unjudged(&e.to_string());
                return self.carry_out_reply(account, task, conversation, decision, None, now).await;
            }
        };
        // One turn per reply read, and the agent's reasoning in the conversation (spec §6.5).
        task.budget.turns_used += 1;
        let reasoning = system_message(now, format!("Agent's reading of the reply — {}", reply::judged(&evaluation)));
        let decision = reply::decide(&task, &evaluation, now);
        // Every reply that does not stop the task: how far is it towards its goal? (§16.3,
        // §18.2, §37) The owner sees it from the first answer on.
        let (task, decision) = match decision {
            stop @ (ReplyDecision::HonourStop(_) | ReplyDecision::Threatened(_) | ReplyDecision::NothingToRead) => (task, stop),
            other => boxed(self.weigh_progress(account, task, &prompt, conversation, other, now)).await?,
        };
        // A question only the owner can answer: the member hears at once that it has gone to
        // them, and the task goes to the owner once that has left.
        if let ReplyDecision::Escalate { reason, blocker } = &decision
            && reply::holds_question(&task, *reason, now)
            && let Some(text) = holding_reply(account, &task, &request)
        {
            let detail = reply::escalation_why(*reason, blocker).detail;
            let note = Why {
                detail: detail.clone(),
                ..Why::new(Reason::HoldingReplyDue)
            };
            let held = HeldQuestion {
                reason: *reason,
                detail,
                context: reply::escalation_context(*reason, blocker.clone(), conversation, now),
            };
            return self
                .answer_now(task, text, note, Some(reasoning), AfterAnswer::Escalate(Box::new(held)), now)
                .await;
        }
        self.carry_out_reply(account, task, conversation, decision, Some(reasoning), now)
            .await
    }

    /// `text` as the task's next touch, due now (`waiting`, whatever it was: guidance resumes
    /// an `executing` task), sent by the step through every gate; `then`, what follows once
    /// it has left.
    async fn answer_now(
        &self,
        task: Task,
        text: String,
        why: Why,
        reasoning: Option<ConversationMessage>,
        then: AfterAnswer,
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        let (mut next, log) = if task.status == TaskStatus::Waiting {
            record(&task, now, why)
        } else {
            transition(&task, TaskStatus::Waiting, now, why)?
        };
        next.awaiting = None;
        next.answer = Some(text);
        (next.held_question, next.parting) = match then {
            AfterAnswer::Nothing => (None, None),
            AfterAnswer::Escalate(held) => (Some(*held), None),
            AfterAnswer::Close(parting) => (None, Some(parting)),
        };
        next.next_action_at = Some(now);
        let mut commit = TaskCommit::new(next.clone(), log);
        commit.messages.extend(reasoning);
        self.store.commit(&commit).await?;
        Ok(Read::Send(Box::new(next)))
    }

    /// The completion evaluation, asked on every member reply the agent
    /// read that does not stop the task — "should this be completed or keep going?" (§18.2).
    /// One AI call within the budgets; the progress is kept on the task (the owner sees it,
    /// later prompts carry it, a spent budget reads it). Where the reply leaves the task
    /// waiting, its judgment is carried out (§37.3): a concrete signal or a finished goal
    /// closes the task, "escalate" hands it to the owner, "close as neutral" closes it with
    /// the evaluator's neutral or negative outcome. An answer, a close or an escalation the
    /// reply decided stands. Without a call left, or when the evaluator fails, the decision
    /// stands as it was. The evaluator gets the composed prompt the reply's reading had
    /// (memories, the member's other tasks and all), read once for both calls.
    async fn weigh_progress(
        &self,
        account: &Account,
        mut task: Task,
        prompt: &str,
        conversation: &[ConversationMessage],
        decision: ReplyDecision,
        now: Timestamp,
    ) -> Result<(Task, ReplyDecision), EngineError> {
        let permit = match self.ai_call(account, Some(task.ai_calls), now).await? {
            AiGate::Allowed(permit) => permit,
            refused => {
                tracing::info!(task = %task.id, ?refused, "no AI call left for the completion evaluation; the reply's decision stands");
                return Ok((task, decision));
            }
        };
        task.ai_calls += 1;
        let def = task_type::definition(&task.task_type);
        let facts = self
            .store
            .get_member(task.account_id, &task.member.id)
            .await?
            .map(|(facts, _)| facts);
        let request = CompletionRequest {
            task_type: task.task_type.clone(),
            goal: task.goal.clone(),
            judgment_criteria: def.goal.judgment_criteria.map(str::to_owned),
            outcome_codes: def.goal.outcomes.iter().map(|o| o.code.to_owned()).collect(),
            system_prompt: prompt.to_owned(),
            conversation: conversation.to_vec(),
            evidence: progress::evidence(&task, facts.as_ref()),
        };
        let progress = match permit.evaluate_completion(&request).await {
            Ok(progress) => progress,
            Err(e) => {
                tracing::warn!(task = %task.id, error = %e, "completion evaluation failed; the reply's decision stands");
                return Ok((task, decision));
            }
        };
        let summary = progress.summary();
        let judged = progress::judge(&progress, def);
        task.goal_progress = Some(progress);
        let ReplyDecision::Wait { until, why } = decision else {
            return Ok((task, decision));
        };
        let decision = match judged {
            Judged::Complete { outcome } => ReplyDecision::Close {
                why: Why::new(Reason::GoalReachedByEvaluation).outcome(outcome).detail(summary),
            },
            Judged::CloseAsNeutral { outcome } => ReplyDecision::Close {
                why: Why::new(Reason::EvaluatorClosedAsNeutral).outcome(outcome).detail(summary),
            },
            Judged::Escalate => ReplyDecision::Escalate {
                reason: Reason::EvaluatorRecommendsOwner,
                blocker: Blocker::because(format!("goal progress {summary}")),
            },
            Judged::Continue => {
                let detail = match &why.detail {
                    Some(d) => format!("{d}; goal progress {summary}"),
                    None => format!("goal progress {summary}"),
                };
                ReplyDecision::Wait {
                    until,
                    why: Why {
                        detail: Some(detail),
                        ..why
                    },
                }
            }
        };
        Ok((task, decision))
    }

    /// Do what the reply decision says. `reasoning`, the agent's reading of the reply, goes
    /// into the conversation with the decision (a stop keeps nothing but the stop).
    async fn carry_out_reply(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        decision: ReplyDecision,
        reasoning: Option<ConversationMessage>,
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        boxed(async move {
            match decision {
                ReplyDecision::NothingToRead => {
                    let (mut next, log) = record(&task, now, Why::new(Reason::NoReplyToRead));
                    next.awaiting = None;
                    self.store.commit(&TaskCommit::new(next, log)).await?;
                    Ok(Read::Done(StepOutcome::Skipped("no_reply_to_read".into())))
                }
                ReplyDecision::HonourStop(stop) => Ok(Read::Done(self.honour_stop(account, task, &stop, now).await?)),
                ReplyDecision::Threatened(threat) => Ok(Read::Done(
                    boxed(self.escalate_threat(account, task, conversation, threat, now)).await?,
                )),
                ReplyDecision::Answer { text, why } => self.answer_now(task, text, why, reasoning, AfterAnswer::Nothing, now).await,
                ReplyDecision::Part { text, parting } => {
                    let why = Why {
                        detail: parting.detail.clone(),
                        ..Why::new(Reason::PartingNoteDue)
                    };
                    boxed(self.answer_now(task, text, why, reasoning, AfterAnswer::Close(parting), now)).await
                }
                ReplyDecision::Wait { until, why } => {
                    let reason = why.reason;
                    let (mut next, log) = record(&task, now, why);
                    next.awaiting = None;
                    next.next_action_at = Some(until);
                    let mut commit = TaskCommit::new(next, log);
                    commit.messages.extend(reasoning);
                    self.store.commit(&commit).await?;
                    Ok(Read::Done(StepOutcome::Deferred { until, reason }))
                }
                ReplyDecision::Close { why } => {
                    let reason = why.reason;
                    let (next, log) = transition(&task, TaskStatus::Completed, now, why)?;
                    let mut commit = TaskCommit::new(next, log).webhooks_for(Some(account));
                    commit.messages.extend(reasoning);
                    self.store.commit(&commit).await?;
                    self.publish_closed(&commit).await;
                    Ok(Read::Done(StepOutcome::Moved {
                        to: TaskStatus::Completed,
                        reason,
                    }))
                }
                ReplyDecision::Escalate { reason, blocker } => {
                    let note = reasoning.unwrap_or_else(|| system_message(now, format!("Handed to the owner: {reason}")));
                    Ok(Read::Done(
                        self.escalate_with(Some(account), task, conversation, now, reason, blocker, note)
                            .await?,
                    ))
                }
            }
        })
        .await
    }

    /// The owner's words, carried out: the agent writes the next message from
    /// them, and the step sends it through every gate.
    async fn carry_out_guidance(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        now: Timestamp,
    ) -> Result<Read, EngineError> {
        if let Some(decision) = reply::before_guidance(&task) {
            return self.carry_out_reply(account, task, conversation, decision, None, now).await;
        }
        let (mut task, permit) = match self.spend_ai_call(account, task, conversation, now).await? {
            Ok(allowed) => allowed,
            Err(done) => return Ok(done),
        };
        let def = task_type::definition(&task.task_type);
        let recent: Vec<serde_json::Value> = reply::recent(conversation)
            .iter()
            .map(|m| serde_json::json!({"role": m.role, "content": m.content}))
            .collect();
        let member_tasks = self.member_tasks(task.account_id, &task.member.id).await?;
        let memories = self.prompt_memories(task.account_id, Some(&task.member.id), now).await?;
        task.memories_used = memories.used;
        let prompt = PromptInput::for_task(&task, account, &memories.memories, &member_tasks, now);
        let request = DraftRequest {
            tone: "owner_guided".into(),
            context: serde_json::json!({"owner_guidance": reply::owner_guidance(conversation), "conversation": recent}),
            ..ai::draft_request(account, def, &task.goal, ai::first_name(&task), task.touch, &prompt)
        };
        let to = MessageFor {
            member: Some(&task.member.id),
            first_name: request.member_first_name.clone(),
            plan_id: task.member.plan_id.as_deref(),
            facts: None,
        };
        let request = self.with_message(account, request, to, now).await?;
        let drafted = permit.draft(&request).await.map_err(|e| e.to_string());
        let decision = reply::guidance_drafted(drafted, def.auto_threshold);
        self.carry_out_reply(account, task, conversation, decision, None, now).await
    }

    /// One AI call for `task`, counted on the task it returns; or what happens
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
                let blocker = Blocker::because(format!("{} AI calls used, the most a task may make", task.ai_calls));
                let outcome = self
                    .escalate(Some(account), task, conversation, now, Reason::AiBudgetExhausted, blocker)
                    .await?;
                Ok(Err(Read::Done(outcome)))
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

    async fn member_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, EngineError> {
        Ok(self.store.member_active_tasks(account, member).await?)
    }
}

/// What follows an answer once it has left the task: nothing (the conversation goes on), the
/// owner's turn (a holding reply's question), or the close (a parting note's).
enum AfterAnswer {
    Nothing,
    Escalate(Box<HeldQuestion>),
    Close(crate::task::Parting),
}

/// The holding reply to the member of `task` (the shipped `holding` message, in the gym's
/// greeting and sign-off); none where it does not render.
fn holding_reply(account: &Account, task: &Task, request: &ReplyRequest) -> Option<String> {
    use crate::conversation::messages;
    let mut member = request.message.member.clone();
    if member.first_name.is_none() {
        member.first_name = request.member_first_name.clone();
    }
    let inputs = messages::Inputs {
        member: &member,
        profile: &account.settings.profile,
        business_name: account.sender_name(),
        instructions: None,
    };
    let template = messages::template_for(&task.task_type, messages::HOLDING, None, request.message.variant);
    match messages::render(&template, &inputs) {
        Ok(draft) => Some(draft.body),
        Err(e) => {
            tracing::warn!(task = %task.id, error = %e, "the holding reply did not render; the task goes to the owner without it");
            None
        }
    }
}

pub(in crate::engine) fn system_message(now: Timestamp, content: impl Into<String>) -> ConversationMessage {
    ConversationMessage {
        id: new_ulid(now),
        at: now,
        role: Role::System,
        content: content.into(),
        original: None,
    }
}

/// The sender, when the task's member has an address on file and this is not it.
fn stranger<'a>(task: &Task, mail: &'a InboundMail) -> Option<&'a crate::kernel::ids::Email> {
    task.member
        .email
        .as_ref()
        .is_some_and(|email| *email != mail.from)
        .then_some(&mail.from)
}

fn hex_digest(raw: &[u8]) -> String {
    Sha256::digest(raw).iter().map(|b| format!("{b:02x}")).collect()
}
