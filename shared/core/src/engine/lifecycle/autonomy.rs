//! The step of a task that must not send: every gate
//! has already passed in `work.rs`; here the touch is drafted and recorded — in the decision
//! log and as a system entry of the conversation — and the cadence moves on exactly as if it
//! had been sent. The mailer is never called, and neither the member's ledger nor the
//! account's daily counter is touched, so a dry run cannot use up anyone's real capacity.

use super::ai::{self, AiGate};
use super::messages::MessageFor;
use jiff::Timestamp;

use super::Engine;
use super::work::StepOutcome;
use crate::conversation::prompt::PromptInput;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{Email, new_ulid};
use crate::owner::account::Account;
use crate::rails::autonomy::SendMode;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type;
use crate::task::transition::{Why, transition};
use crate::task::{ConversationMessage, Role, Task, TaskStatus};

impl Engine {
    /// Record the touch a dry-run or shadow task would send now, in one commit
    /// (`→ executing → waiting`, both logged).
    pub(crate) async fn record_would_send(
        &self,
        account: &Account,
        mut task: Task,
        to: Email,
        mode: SendMode,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let def = task_type::definition(&task.task_type);
        let touch = task.touch;
        let draft = if touch == 0 {
            task.draft.clone()
        } else {
            let permit = match self.ai_call(account, Some(task.ai_calls), now).await? {
                AiGate::Allowed(permit) => permit,
                refused => {
                    let why = Why::new(refused.refusal().unwrap_or(Reason::AiBudgetExhausted))
                        .detail("no AI call left to draft the touch; the owner decides");
                    return self.move_to(task, TaskStatus::Escalated, now, why).await;
                }
            };
            task.ai_calls += 1;
            let memories = self.prompt_memories(account.id, Some(&task.member.id), now).await?;
            task.memories_used = memories.used;
            let prompt = PromptInput::for_task(&task, account, &memories.memories, &[], now);
            let request = ai::draft_request(account, def, &task.goal, ai::first_name(&task), touch, &prompt);
            let to = MessageFor {
                member: Some(&task.member.id),
                first_name: request.member_first_name.clone(),
                plan_id: task.member.plan_id.as_deref(),
                facts: None,
            };
            let request = self.with_message(account, request, to, now).await?;
            match permit.draft(&request).await {
                Ok(d) => Some(d.draft),
                Err(e) => {
                    return self
                        .move_to(
                            task,
                            TaskStatus::Escalated,
                            now,
                            Why::new(Reason::DraftFailed).detail(format!("the agent could not draft touch {touch}: {e}")),
                        )
                        .await;
                }
            }
        };
        let Some(draft) = draft else {
            let why = Why::new(Reason::MissingDraft).detail("no approved draft to record");
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        };
        let label = match mode {
            SendMode::Shadow => "shadow",
            _ => "dry run",
        };
        let reason = mode.would_send_reason();
        let expected_version = task.version;
        let (started, claim_log) = transition(
            &task,
            TaskStatus::Executing,
            now,
            Why::new(if touch == 0 { Reason::FirstTouchDue } else { Reason::FollowUpDue })
                .detail(format!("message {} ({label})", touch + 1)),
        )?;
        let (mut next, log) = transition(
            &started,
            TaskStatus::Waiting,
            now,
            Why::new(reason).detail(format!(
                "message {} to {to} passed every gate; recorded, not sent (subject {:?})",
                touch + 1,
                draft.subject
            )),
        )?;
        next.touch = touch + 1;
        next.attempts = 0;
        next.budget.messages_used += 1;
        if touch == 0 {
            next.thread_subject = Some(draft.subject.clone());
        }
        // The cadence's day, in the afternoon hours (spec §29.3), as a live send plans it.
        let (at, when) = crate::rails::window::after_touch_at(&account.settings, &next, &def.cadence, touch, now);
        next.next_action_at = Some(at);
        let log = match when {
            Some(when) => crate::task::LogEntry {
                detail: Some(log.detail.map_or(when.clone(), |d| format!("{d}; {when}"))),
                ..log
            },
            None => log,
        };
        let note = ConversationMessage {
            id: new_ulid(now),
            at: now,
            role: Role::System,
            content: format!("[{label}] would send to {to}\nSubject: {}\n\n{}", draft.subject, draft.body),
            original: None,
        };
        let commit = TaskCommit {
            expected_version,
            task: next,
            log: vec![claim_log, log],
            messages: vec![note],
            send: None,
            loops: Vec::new(),
            webhooks: true,
        };
        match self.store.commit(&commit).await {
            Ok(()) => Ok(StepOutcome::Moved {
                to: TaskStatus::Waiting,
                reason,
            }),
            Err(StoreError::Conflict(Conflict::Version)) => Ok(StepOutcome::Skipped("claimed_elsewhere".into())),
            Err(e) => Err(e.into()),
        }
    }
}
