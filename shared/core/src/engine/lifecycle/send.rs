//! A claimed touch, sent: its text (written, or drafted by the agent through the
//! AI budget), the reservation (`reservation.rs`), the mail, and what the provider said — sent,
//! refused (retried with a backoff, the reservation given back), or unknown (escalated, never
//! retried blind).

use jiff::Timestamp;

use super::Engine;
use super::ai::{self, AiGate};
use super::memories::PromptMemories;
use super::messages::MessageFor;
use super::reservation::Reservation;
use super::work::StepOutcome;
use crate::conversation::mail::{OutboundMail, reply_subject, thread_headers};
use crate::conversation::prompt::PromptInput;
use crate::conversation::reply::{self, Blocker};
use crate::kernel::ids::{Email, new_ulid};
use crate::members::annotation::MemberAnnotations;
use crate::members::member::{MemberFacts, SendLedger};
use crate::owner::account::Account;
use crate::owner::business_memory::MemoryBook;
use crate::rails::step::{self, AfterFailure, Failure, TouchText};
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type;
use crate::task::transition::{Why, transition};
use crate::task::{ConversationMessage, Draft, Drafted, LogEntry, OutboundMessage, OutboundStatus, Task, TaskStatus};

/// A task this worker claims for a touch: `task` is it in `executing`; `claim` is the claim's
/// log entry while it is not committed yet — it then rides in the reservation's commit.
pub(in crate::engine) struct Claimed {
    pub task: Task,
    pub claim: Option<LogEntry>,
    pub ahead: Ahead,
}

/// What a step read or counted ahead of drafting its touch: the snapshot's draft reads, and
/// the account's count of the day after the draft's AI call, when the claim counted it.
#[derive(Default)]
pub(in crate::engine) struct Ahead {
    pub reads: Option<crate::rails::send_gate::DraftReads>,
    pub ai_counted: Option<u32>,
}

/// What drafting a claimed touch came to.
pub(in crate::engine) enum Drafting {
    Ready { draft: Draft, confidence: Option<u8> },
    Done(StepOutcome),
}

impl Engine {
    /// Draft, reserve, send and record, for a task this worker has claimed. The member's
    /// annotations, facts and the account's memories come from the send snapshot.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn send_claimed(
        &self,
        account: &Account,
        claimed: Claimed,
        to: Email,
        ledger: SendLedger,
        annotations: &MemberAnnotations,
        book: &MemoryBook,
        member_tasks: &[Task],
        facts: Option<&MemberFacts>,
        sent_before: &[ConversationMessage],
    ) -> Result<StepOutcome, EngineError> {
        let Claimed {
            task: mut claimed,
            claim,
            ahead,
        } = claimed;
        let now = self.clock.now();
        let touch = claimed.touch;
        let (draft, confidence) = match self
            .draft_claimed(account, &mut claimed, annotations, book, member_tasks, facts, None, &ahead, now)
            .await?
        {
            Drafting::Ready { draft, confidence } => (draft, confidence),
            Drafting::Done(outcome) => return Ok(outcome),
        };
        // Never one message twice: a draft the agent wrote that says what the member was sent
        // already waits for the owner instead. (Its claim is committed; a text written before
        // the claim, an approved one, was checked when the owner approved it.)
        if claim.is_none()
            && let Some(sent) = sent_before.iter().find(|m| m.says(&draft.body))
        {
            let detail = format!(
                "touch {touch}: the draft repeats word for word the message sent at {}; nothing was sent",
                sent.at
            );
            return super::boxed(self.hold_draft(claimed, draft.body, Reason::DraftRepeatsSentMessage, detail, now)).await;
        }
        // A follow-up stays in the thread under its first subject; "Re:" only once the member
        // wrote (a counted turn): a "Re:" to a mail they never answered reads like a trick.
        let subject = match (touch, claimed.thread_subject.as_deref()) {
            (0, _) | (_, None) => draft.subject.clone(),
            (_, Some(first)) if claimed.budget.turns_used == 0 => first.to_owned(),
            (_, Some(first)) => reply_subject(first),
        };
        // On the domain the mail is sent from (the gym's own, once verified): a Message-ID
        // on another domain than the From's is a spam signal.
        let from_domain = account
            .sender_address(&self.config.from_email)
            .as_str()
            .split_once('@')
            .map(|(_, d)| d.to_owned())
            .unwrap_or_default();
        let outbound = OutboundMessage {
            task_id: claimed.id,
            touch,
            status: OutboundStatus::Reserved,
            to: to.clone(),
            subject,
            message_id: format!("{}@{from_domain}", new_ulid(now).to_string().to_ascii_lowercase()),
            provider_id: None,
            provider_message_id: None,
            reserved_at: now,
            sent_at: None,
        };
        let ledger_key = format!("{}#{touch}", claimed.id);

        // Reserve: the guarantees are checked by the store in the same transaction.
        let reserved = match self.reserve(account, &claimed, claim, &outbound, &ledger_key, ledger, now).await? {
            Reservation::Made(task) => *task,
            Reservation::ClaimedElsewhere => return Ok(StepOutcome::Skipped("claimed_elsewhere".into())),
            Reservation::Defer(until, why) => {
                // Lost the race for the member's or the account's capacity: defer.
                return self.back_to_waiting(&claimed, until, now, why).await;
            }
            Reservation::AlreadyReserved => {
                // Someone reserved this touch before: its fate is unknown, never send it again.
                let existing = self
                    .store
                    .outbound(account.id, claimed.id)
                    .await?
                    .into_iter()
                    .find(|m| m.touch == touch)
                    .unwrap_or(outbound);
                return self.escalate_unknown(claimed, existing, now).await;
            }
        };

        let mail = self.mail(account, &reserved, &outbound, &draft, now);
        let result = self.mailer.send(&mail).await.map(|delivered| OutboundMessage {
            status: OutboundStatus::Sent,
            provider_id: Some(delivered.provider_id),
            provider_message_id: delivered.provider_message_id,
            sent_at: Some(now),
            ..outbound.clone()
        });
        self.record_send(account, reserved, outbound, result, draft, confidence, ledger_key, "touch", now)
            .await
    }

    /// The claimed touch's text: written already (an approved draft, an answer), or drafted by
    /// the agent through the AI budget. `text_chars`: the touch is a text of about that many
    /// characters (the model is told). `Done` when drafting ended the step (escalated, held
    /// for the owner, deferred, retried).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn draft_claimed(
        &self,
        account: &Account,
        claimed: &mut Task,
        annotations: &MemberAnnotations,
        book: &MemoryBook,
        member_tasks: &[Task],
        facts: Option<&MemberFacts>,
        text_chars: Option<u32>,
        ahead: &Ahead,
        now: Timestamp,
    ) -> Result<Drafting, EngineError> {
        let def = task_type::definition(&claimed.task_type);
        let touch = claimed.touch;
        let mut confidence = None;
        let draft = match step::touch_text(claimed, def) {
            TouchText::Ready(draft) => draft,
            TouchText::Missing(why) => {
                return self
                    .move_to(claimed.clone(), TaskStatus::Escalated, now, why)
                    .await
                    .map(Drafting::Done);
            }
            TouchText::FromAgent => {
                let memories = PromptMemories::from_book(book, Some(&claimed.member.id), Vec::new(), now);
                let prompt = PromptInput::for_task(claimed, account, &memories.memories, member_tasks, now);
                let mut request = ai::draft_request(account, def, &claimed.goal, ai::first_name(claimed), touch, &prompt);
                // What the trigger said (with any later trigger's context merged into it,
                // spec §7.7) and Openloop's own notes on the member.
                let mut context = serde_json::Map::new();
                if !claimed.trigger_context.is_null() {
                    context.insert("trigger".into(), claimed.trigger_context.clone());
                }
                let notes = annotations.prompt_lines();
                if !notes.is_empty() {
                    context.insert("member_annotations".into(), serde_json::json!(notes));
                }
                // A text is short: the model is told so (the offline agent's template is cut
                // to the segment budget when the text is composed).
                if let Some(max_chars) = text_chars {
                    context.insert("channel".into(), serde_json::json!({"kind": "sms", "max_chars": max_chars}));
                }
                // The owner rewrote the first touch: the follow-up follows their words (and
                // waits for their review below).
                let owners_voice = step::owner_reviews_follow_ups(claimed);
                if owners_voice && let Some(own) = &claimed.draft {
                    context.insert("owners_voice".into(), serde_json::json!({"subject": own.subject, "body": own.body}));
                }
                if !context.is_empty() {
                    request.context = serde_json::Value::Object(context);
                }
                let to = MessageFor {
                    member: Some(&claimed.member.id),
                    first_name: request.member_first_name.clone(),
                    plan_id: claimed.member.plan_id.as_deref(),
                    facts,
                };
                let request = self.with_message_from(account, request, to, ahead.reads.as_ref(), now).await?;
                if touch == 0 {
                    claimed.message_template.clone_from(&request.message.template_version);
                }
                let gate = match ahead.ai_counted {
                    Some(calls) => self.counted_ai_call(account, calls, now).await,
                    None => self.ai_call(account, Some(claimed.ai_calls), now).await?,
                };
                let permit = match gate {
                    AiGate::Allowed(permit) => permit,
                    AiGate::TaskSpent => {
                        let why = Why::new(Reason::AiBudgetExhausted)
                            .detail(format!("{} AI calls used, the most a task may make", claimed.ai_calls));
                        return self
                            .move_to(claimed.clone(), TaskStatus::Escalated, now, why)
                            .await
                            .map(Drafting::Done);
                    }
                    AiGate::DayUsed { until } => {
                        let why = Why::new(Reason::AiDailyLimit)
                            .detail(format!("the account's AI calls for today are used up; resuming {until}"));
                        return self.back_to_waiting(claimed, until, now, why).await.map(Drafting::Done);
                    }
                };
                claimed.ai_calls += 1;
                claimed.memories_used = memories.used;
                match permit.draft(&request).await {
                    Ok(drafted) if owners_voice => {
                        return self.hold_for_owners_voice(claimed.clone(), drafted, now).await.map(Drafting::Done);
                    }
                    // Confidence at every step (spec §7.4): a follow-up the agent is less sure
                    // of than the type asks goes to the owner, its draft attached.
                    Ok(drafted) if drafted.confidence < def.auto_threshold => {
                        return self
                            .hold_unsure_draft(claimed.clone(), drafted, def.auto_threshold, now)
                            .await
                            .map(Drafting::Done);
                    }
                    Ok(drafted) => {
                        confidence = Some(drafted.confidence);
                        drafted.draft
                    }
                    Err(e) => {
                        return self
                            .after_failure(claimed.clone(), now, Failure::Draft, &e.to_string(), None)
                            .await
                            .map(Drafting::Done);
                    }
                }
            }
        };
        Ok(Drafting::Ready { draft, confidence })
    }

    /// The mail of the reserved touch `outbound`: in the task's thread, answerable through a
    /// signed reply address, with a one-click unsubscribe (RFC 8058).
    fn mail(&self, account: &Account, task: &Task, outbound: &OutboundMessage, draft: &Draft, now: Timestamp) -> OutboundMail {
        let (in_reply_to, references) = thread_headers(&task.thread);
        OutboundMail {
            from_name: account.sender_name().to_owned(),
            from: account.sender_address(&self.config.from_email),
            to: outbound.to.clone(),
            to_name: task.member.name.clone(),
            subject: outbound.subject.clone(),
            text: draft.body.clone(),
            message_id: outbound.message_id.clone(),
            in_reply_to,
            references,
            reply_to: format!(
                "reply+{}@{}",
                self.config.signing_key.reply_token(&task.id),
                self.config.reply_domain
            ),
            unsubscribe_url: format!(
                "{}/unsubscribe?token={}",
                self.config.public_url.trim_end_matches('/'),
                self.config.signing_key.unsubscribe_token(&account.id, &outbound.to)
            ),
            date: now,
        }
    }

    /// A follow-up drafted below its type's threshold: the owner reads it before the member
    /// does. The claimed task escalates with the draft in its escalation context; the owner
    /// sends it by giving it as guidance (edited if needed), resolves or cancels the task.
    pub(in crate::engine) async fn hold_unsure_draft(
        &self,
        claimed: Task,
        drafted: Drafted,
        threshold: u8,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let detail = format!(
            "touch {}: the agent's draft is at confidence {}, under this type's {threshold}; nothing was sent",
            claimed.touch, drafted.confidence
        );
        self.hold_draft(claimed, drafted.draft.body, Reason::LowConfidenceFollowUp, detail, now)
            .await
    }

    /// The claimed task escalated for `reason`, its draft in the escalation context: an unsure
    /// draft, or one that repeats what the member was sent already (never sent twice).
    async fn hold_draft(
        &self,
        claimed: Task,
        body: String,
        reason: Reason,
        detail: String,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let blocker = Blocker {
            detail: Some(detail.clone()),
            draft_reply: Some(body),
            ..Blocker::default()
        };
        let (mut next, log) = transition(&claimed, TaskStatus::Escalated, now, Why::new(reason).detail(detail))?;
        next.escalation = Some(reply::escalation_context(reason, blocker, &[], now).or_from(next.escalation.take()));
        let commit = TaskCommit::new(next, log);
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(StepOutcome::Moved {
            to: TaskStatus::Escalated,
            reason,
        })
    }

    /// A later touch of a thread whose first touch the owner rewrote: drafted to follow their
    /// words, it waits for their review (`pending_review`, the draft attached) instead of
    /// going out; approved, it is sent as approved (`Task::reviewed_touch`).
    pub(in crate::engine) async fn hold_for_owners_voice(
        &self,
        claimed: Task,
        drafted: Drafted,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let reason = Reason::OwnersVoiceFollowUp;
        let why = Why::new(reason).detail(format!(
            "message {}: you rewrote the first message, so this one waits for you",
            claimed.touch + 1
        ));
        let (mut next, log) = transition(&claimed, TaskStatus::PendingReview, now, why)?;
        next.draft = Some(drafted.draft);
        next.next_action_at = None;
        let commit = TaskCommit::new(next, log);
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(StepOutcome::Moved {
            to: TaskStatus::PendingReview,
            reason,
        })
    }

    /// The claimed step does not send now: back to `waiting`, due at `until`.
    pub(in crate::engine) async fn back_to_waiting(
        &self,
        claimed: &Task,
        until: Timestamp,
        now: Timestamp,
        why: Why,
    ) -> Result<StepOutcome, EngineError> {
        let reason = why.reason;
        let (mut next, log) = transition(claimed, TaskStatus::Waiting, now, why)?;
        next.next_action_at = Some(until);
        self.store.commit(&TaskCommit::new(next, log)).await?;
        Ok(StepOutcome::Deferred { until, reason })
    }

    /// A failed touch: back off and retry, or hand it to the owner; `release`
    /// gives a refused send's reservation back in the same commit.
    pub(in crate::engine) async fn after_failure(
        &self,
        task: Task,
        now: Timestamp,
        failed: Failure,
        error: &str,
        release: Option<SendEffect>,
    ) -> Result<StepOutcome, EngineError> {
        let (outcome, mut commit) = match step::after_failure(&task, failed, error, now) {
            AfterFailure::Retry { attempts, until, why } => {
                let reason = why.reason;
                let (mut next, log) = transition(&task, TaskStatus::Waiting, now, why)?;
                next.attempts = attempts;
                next.next_action_at = Some(until);
                (StepOutcome::Deferred { until, reason }, TaskCommit::new(next, log))
            }
            AfterFailure::GiveUp { attempts, why } => {
                let reason = why.reason;
                let (mut next, log) = transition(&task, TaskStatus::Escalated, now, why)?;
                next.attempts = attempts;
                (
                    StepOutcome::Moved {
                        to: TaskStatus::Escalated,
                        reason,
                    },
                    TaskCommit::new(next, log),
                )
            }
        };
        commit.send = release;
        self.store.commit(&commit).await?;
        self.notify_commit(&commit).await;
        Ok(outcome)
    }
}
