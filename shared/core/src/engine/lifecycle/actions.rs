//! The action executor and the automation step it serves (§31.5).
//!
//! An automation task is a list of actions — given at creation (`member_update`) or worked out
//! when it runs (`bulk_tag_at_risk`: one tag per member the risk scan finds at risk). The step
//! claims the task (`→ executing` with a lease) and hands each action to
//! [`Engine::execute_action`], which checks the action's pre-flight ([`preflight`]: budgets,
//! approval, whether this run may touch the outside world), then claims the action's
//! idempotency key in the action log before its handler runs, and writes what happened over
//! the claim. So:
//! - a retried or duplicated step skips every action that already ran;
//! - an action found claimed but unfinished (its worker died) runs again only if running it
//!   twice is harmless (it is reversible, or changes nothing outside); otherwise the owner
//!   decides (`action_outcome_unknown`);
//! - nothing here calls PushPress: the actions that once changed members there are Openloop's
//!   own now (tags and notes are member annotations, a staff to-do is an owner notice) and a
//!   status change is refused, since PushPress's API offers none of them.
//!
//! The task then closes in one commit with a line per action in its conversation: `completed`
//! (`executed`, or `recorded` for a dry run), `escalated`, or back to `waiting` for a retry.

use jiff::Timestamp;

use super::Engine;
use super::owner_notices::NoticeDraft;
use super::work::StepOutcome;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{MemberId, new_ulid};
use crate::kernel::limits::{self, EXECUTION_LEASE};
use crate::members::annotation::{Annotation, MemberNote};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::owner_notice::NoticeKind;
use crate::ports::CommitExtras;
use crate::rails::autonomy::{self, SendMode};
use crate::task::action::{Action, ActionClaim, ActionRecord, ActionState, Preflight, idempotency_key, preflight};
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::reason::Reason;
use crate::task::task_type::TaskTypeDef;
use crate::task::transition::{Why, transition};
use crate::task::{ConversationMessage, Role, Task, TaskStatus};

/// The tag `bulk_tag_at_risk` gives unless its task names another.
pub const AT_RISK_TAG: &str = "at-risk";

/// One action of a run: what, for whom, and its slot in the run (part of its key).
#[derive(Clone, Debug)]
pub(crate) struct Planned {
    pub slot: String,
    pub member: MemberId,
    pub action: Action,
}

/// What one action came to.
enum Executed {
    /// It ran (or, in a dry run, was recorded): a line for the conversation.
    Done { note: String, recorded: bool, turn: bool },
    /// An earlier run already did it.
    AlreadyDone,
    /// The run stops here: the owner decides.
    Escalate(Why),
}

/// Why a handler did not succeed.
enum Failure {
    /// The other side said no, or answered nonsense.
    Refused(String),
    /// `create_escalation`: it ran, and the run ends with the owner.
    Escalate(String),
}

impl Engine {
    /// The automation step for a due task of an automation type.
    pub(crate) async fn automation_step(
        &self,
        task: Task,
        def: &TaskTypeDef,
        account: &Account,
        facts: Option<&MemberFacts>,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        if limits::is_due(task.budget.expires_at, now) {
            let why = Why::new(Reason::BudgetTimeExpired).detail("the actions did not run in the task's time; the owner decides");
            return self.move_to(task, TaskStatus::Escalated, now, why).await;
        }
        let planned = match self.planned_actions(account, &task, def, now).await? {
            Ok(planned) => planned,
            Err(why) => return self.move_to(task, TaskStatus::Escalated, now, why).await,
        };
        let ramp = autonomy::ramp(&account.settings, def.agent, now);
        let mode = SendMode::of(task.controls.mode, &ramp);
        let live = mode == SendMode::Live;
        // Claim the run: from here this worker owns the task until the lease ends.
        let why = Why::new(Reason::ActionsDue).detail(format!(
            "{}{}",
            crate::kernel::plural::count_of(planned.len(), "action", "actions"),
            if live { String::new() } else { format!(" ({})", mode_label(mode)) }
        ));
        let (mut claimed, claim_log) = transition(&task, TaskStatus::Executing, now, why)?;
        claimed.next_action_at = Some(now + EXECUTION_LEASE);
        claimed.execution_started_at.get_or_insert(now);
        // A few actions that change nothing outside the table and may all run: claimed in the
        // task's claim and finished in its close, one transaction each. Any other run claims
        // and finishes each action on its own. An action claimed before (a retried run) makes
        // the batch's claim fail whole, and the run goes one action at a time.
        let mut batch = CommitExtras {
            claim_actions: if batchable(&planned, &claimed, live) {
                planned.iter().map(|p| started(&claimed, p, now)).collect()
            } else {
                Vec::new()
            },
            ..CommitExtras::default()
        };
        let claim = TaskCommit::new(claimed.clone(), claim_log);
        let claimed_run = match self.store.commit_with(&claim, &batch).await {
            Err(StoreError::Conflict(Conflict::AlreadyExists)) if !batch.claim_actions.is_empty() => {
                batch.claim_actions.clear();
                self.store.commit(&claim).await
            }
            other => other,
        };
        match claimed_run {
            Ok(()) => {}
            Err(StoreError::Conflict(Conflict::Version)) => return Ok(StepOutcome::Skipped("claimed_elsewhere".into())),
            Err(e) => return Err(e.into()),
        }

        let mut notes = Vec::new();
        let (mut ran, mut recorded, mut before, mut turns) = (0usize, 0usize, 0usize, 0u32);
        let mut stop = None;
        let mut finished = Vec::new();
        for (i, planned) in planned.iter().enumerate() {
            let executed = match batch.claim_actions.get(i) {
                Some(claim) => {
                    let mut record = claim.clone();
                    let executed = self.run_claimed(account, &claimed, planned, true, &mut record, facts, now).await?;
                    finished.push(record);
                    executed
                }
                None => self.execute_action(account, &claimed, planned, live, facts, now).await?,
            };
            match executed {
                Executed::Done { note, recorded: r, turn } => {
                    if r {
                        recorded += 1;
                    } else {
                        ran += 1;
                    }
                    turns += u32::from(turn);
                    notes.push(note);
                }
                Executed::AlreadyDone => before += 1,
                other => {
                    stop = Some(other);
                    break;
                }
            }
        }
        claimed.budget.turns_used += turns;
        let messages = notes
            .into_iter()
            .map(|content| ConversationMessage {
                id: new_ulid(now),
                at: now,
                role: Role::System,
                content,
                original: None,
            })
            .collect();
        let tally = format!(
            "{ran} ran, {recorded} recorded only, {before} done by an earlier run, of {}",
            planned.len()
        );
        let (to, why) = match stop {
            Some(Executed::Escalate(why)) => {
                let why = Why::new(why.reason).detail(format!("{}; {tally}", why.detail.unwrap_or_default()));
                (TaskStatus::Escalated, why)
            }
            _ => {
                let (outcome, reason) = if recorded > 0 {
                    ("recorded", Reason::ActionsRecorded)
                } else {
                    ("executed", Reason::ActionsExecuted)
                };
                (TaskStatus::Completed, Why::new(reason).outcome(outcome).detail(tally))
            }
        };
        // The batch's outcomes ride in the close; a close that fails writes them on their
        // own first, so a retried run finds them done.
        let close = CommitExtras {
            finish_actions: finished,
            account: Some(account.clone()),
            ..CommitExtras::default()
        };
        let moved = self.move_with_extras(claimed, to, now, why, messages, &close).await;
        if moved.is_err() {
            for record in &close.finish_actions {
                self.store.finish_action(record).await?;
            }
        }
        moved
    }

    /// The task's actions for this run, or why there are none.
    async fn planned_actions(
        &self,
        account: &Account,
        task: &Task,
        def: &TaskTypeDef,
        now: Timestamp,
    ) -> Result<Result<Vec<Planned>, Why>, EngineError> {
        match def.key {
            "member_update" if task.actions.is_empty() => Ok(Err(
                Why::new(Reason::NoActions).detail("a member_update task lists its actions when it is created")
            )),
            "member_update" => Ok(Ok(task
                .actions
                .iter()
                .enumerate()
                .map(|(i, action)| Planned {
                    slot: i.to_string(),
                    member: task.member.id.clone(),
                    action: action.clone(),
                })
                .collect())),
            "bulk_tag_at_risk" => Ok(Ok(self.at_risk_tags(task, account.settings.calibration.churn_gap(), now).await?)),
            other => Ok(Err(
                Why::new(Reason::NoHandlerForAutomationType).detail(format!("nothing runs {other} tasks yet; the owner decides"))
            )),
        }
    }

    /// One `tag_member` per member the risk scan finds at risk, at most
    /// [`limits::MAX_BULK_ACTION_MEMBERS`] (read in pages; the rest wait for another run),
    /// judged with the account's calibrated gap (`churn_gap`).
    async fn at_risk_tags(&self, task: &Task, churn_gap: jiff::SignedDuration, now: Timestamp) -> Result<Vec<Planned>, EngineError> {
        let tag = task
            .actions
            .iter()
            .find_map(|a| match a {
                Action::TagMember { tag } => Some(tag.clone()),
                _ => None,
            })
            .unwrap_or_else(|| AT_RISK_TAG.to_owned());
        let mut planned = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = self.store.list_member_facts(task.account_id, 500, cursor).await?;
            for facts in page {
                if planned.len() == limits::MAX_BULK_ACTION_MEMBERS {
                    return Ok(planned);
                }
                if crate::rails::risk::assess(&facts, now, churn_gap).is_some_and(|f| f.task_type == "churn_risk") {
                    planned.push(Planned {
                        slot: facts.member_id.to_string(),
                        member: facts.member_id.clone(),
                        action: Action::TagMember { tag: tag.clone() },
                    });
                }
            }
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(planned),
            }
        }
    }

    /// Run one action for `task` (claimed by this worker), at most once for its key.
    async fn execute_action(
        &self,
        account: &Account,
        task: &Task,
        planned: &Planned,
        live: bool,
        facts: Option<&MemberFacts>,
        now: Timestamp,
    ) -> Result<Executed, EngineError> {
        let action = &planned.action;
        let profile = action.profile();
        let run = match preflight(action, task, live) {
            Preflight::Refuse { reason, detail } => return Ok(Executed::Escalate(Why::new(reason).detail(detail))),
            Preflight::RecordOnly => false,
            Preflight::Run => true,
        };
        let mut record = started(task, planned, now);
        match self.store.claim_action(&record).await? {
            ActionClaim::Claimed => {}
            ActionClaim::Existing(existing) if existing.state == ActionState::Started => {
                // Its worker stopped between the claim and the outcome.
                if profile.external && !profile.reversible {
                    return Ok(Executed::Escalate(Why::new(Reason::ActionOutcomeUnknown).detail(format!(
                        "{} for {} was started by a run that stopped before it finished, and it cannot be undone; check it before running the task again",
                        action.describe(),
                        planned.member
                    ))));
                }
                tracing::info!(task = %task.id, key = %record.key, "running an unfinished action again: it is safe to repeat");
            }
            ActionClaim::Existing(_) => return Ok(Executed::AlreadyDone),
        }
        let executed = self.run_claimed(account, task, planned, run, &mut record, facts, now).await?;
        self.store.finish_action(&record).await?;
        Ok(executed)
    }

    /// Run (or, `run` false, record) one action whose claim is `record`, and write its
    /// outcome into `record` — the caller stores it.
    #[allow(clippy::too_many_arguments)]
    async fn run_claimed(
        &self,
        account: &Account,
        task: &Task,
        planned: &Planned,
        run: bool,
        record: &mut ActionRecord,
        facts: Option<&MemberFacts>,
        now: Timestamp,
    ) -> Result<Executed, EngineError> {
        let action = &planned.action;
        let profile = action.profile();
        let member = &planned.member;
        if !run {
            record.state = ActionState::Recorded;
            record.finished_at = Some(now);
            return Ok(Executed::Done {
                note: format!("[dry run] would run {} for {member}", action.describe()),
                recorded: true,
                turn: false,
            });
        }
        let outcome = self.run_handler(account, task, planned, &record.key, facts, now).await?;
        record.finished_at = Some(self.clock.now());
        let executed = match outcome {
            Ok(result) => {
                record.state = ActionState::Done;
                let note = match &result {
                    serde_json::Value::String(text) => format!("Action executed: {} for {member}\n{text}", action.describe()),
                    _ => format!("Action executed: {} for {member}", action.describe()),
                };
                record.result = Some(result);
                Executed::Done {
                    note,
                    recorded: false,
                    turn: profile.counts_turns,
                }
            }
            Err(Failure::Escalate(reason)) => {
                record.state = ActionState::Done;
                Executed::Escalate(Why::new(Reason::AutomationEscalation).detail(reason))
            }
            Err(Failure::Refused(why)) => {
                record.state = ActionState::Failed;
                record.error = Some(why.clone());
                Executed::Escalate(Why::new(Reason::ActionFailed).detail(format!("{} for {member}: {why}", action.describe())))
            }
        };
        Ok(executed)
    }

    /// The handler of each kind. `Ok(result)`: what it did, for the action log (a string is
    /// also shown in the conversation).
    async fn run_handler(
        &self,
        _account: &Account,
        task: &Task,
        planned: &Planned,
        _key: &str,
        facts: Option<&MemberFacts>,
        now: Timestamp,
    ) -> Result<Result<serde_json::Value, Failure>, EngineError> {
        let member = &planned.member;
        let about = |title: String, detail: &str| NoticeDraft {
            kind: NoticeKind::ActionMessage,
            task_id: Some(task.id),
            member_id: Some(member.clone()),
            title,
            detail: detail.to_owned(),
        };
        Ok(match &planned.action {
            Action::ResearchMember => {
                // The task's member's facts as the step's snapshot read them, else a read.
                let known = facts.filter(|f| f.member_id == *member).cloned();
                let facts = match known {
                    Some(facts) => Some(facts),
                    None => self.store.get_member(task.account_id, member).await?.map(|(facts, _)| facts),
                };
                Ok(serde_json::Value::String(research_note(facts.as_ref(), now)))
            }
            Action::LogNote { text } => Ok(serde_json::Value::String(text.clone())),
            Action::NotifyOwner { message } => {
                let notice = self
                    .notify_owner(task.account_id, about(format!("About {member}"), message), false)
                    .await?;
                Ok(serde_json::json!({ "notice_id": notice.map(|n| n.id.to_string()) }))
            }
            Action::NotifyCoach { coach, message } => {
                let notice = self
                    .notify_owner(task.account_id, about(format!("For coach {coach}, about {member}"), message), false)
                    .await?;
                Ok(serde_json::json!({ "notice_id": notice.map(|n| n.id.to_string()), "coach": coach }))
            }
            Action::CreateEscalation { reason } => Err(Failure::Escalate(reason.clone())),
            // PushPress has no tags, notes, tasks or customer updates (`../shared/PUSHPRESS.md`
            // §3, §7): tags and notes are Openloop's own annotations, a staff to-do is a notice
            // to the owner, and a status change is refused.
            Action::TagMember { tag } => {
                self.store
                    .annotate_member(task.account_id, member, &Annotation::AddTag(tag.clone()))
                    .await?;
                Ok(serde_json::Value::String(format!(
                    "Tagged \"{tag}\" in Openloop (PushPress has no tags)."
                )))
            }
            Action::RemoveTag { tag } => {
                self.store
                    .annotate_member(task.account_id, member, &Annotation::RemoveTag(tag.clone()))
                    .await?;
                Ok(serde_json::Value::String(format!("Removed the tag \"{tag}\" in Openloop.")))
            }
            Action::UpdateMemberNotes { note } => {
                let note = MemberNote {
                    at: now,
                    text: note.clone(),
                    task_id: Some(task.id),
                };
                self.store.annotate_member(task.account_id, member, &Annotation::Note(note)).await?;
                Ok(serde_json::Value::String(
                    "Noted on the member in Openloop (PushPress has no notes).".into(),
                ))
            }
            Action::CreatePushpressTask { title } => {
                let notice = self
                    .notify_owner(
                        task.account_id,
                        about(format!("Staff to-do: {title}"), &format!("About {member}")),
                        false,
                    )
                    .await?;
                Ok(serde_json::json!({ "staff_todo": title, "notice_id": notice.map(|n| n.id.to_string()) }))
            }
            Action::UpdateMemberStatus { .. } => Err(Failure::Refused(crate::task::action::STATUS_CHANGE_REFUSED.into())),
        })
    }
}

/// The most actions a run claims in its task's claim (and finishes in its close): well
/// within a transaction's 100 items beside the task's own.
const BATCHED_ACTIONS: usize = 10;

/// Whether a run's actions are claimed with the task and finished with its close: a few, each
/// changing nothing outside the table (so running one again after a worker stopped is
/// harmless, as for a single claim), each allowed to run now, none ending the run early (an
/// escalation) — so every action claimed is run.
fn batchable(planned: &[Planned], task: &Task, live: bool) -> bool {
    planned.len() <= BATCHED_ACTIONS
        && planned.iter().all(|p| {
            !p.action.profile().external
                && !matches!(p.action, Action::CreateEscalation { .. })
                && matches!(preflight(&p.action, task, live), Preflight::Run)
        })
}

/// The claim of one action of `task`'s run: started now, under its idempotency key.
fn started(task: &Task, planned: &Planned, now: Timestamp) -> ActionRecord {
    ActionRecord {
        account_id: task.account_id,
        task_id: task.id,
        key: idempotency_key(task.id, planned.action.kind(), &planned.slot),
        member_id: planned.member.clone(),
        action: planned.action.clone(),
        state: ActionState::Started,
        result: None,
        error: None,
        started_at: now,
        finished_at: None,
    }
}

fn mode_label(mode: SendMode) -> &'static str {
    match mode {
        SendMode::Shadow => "shadow: recorded only",
        _ => "dry run: recorded only",
    }
}

/// What we know of the member, for the conversation.
fn research_note(facts: Option<&crate::members::member::MemberFacts>, now: Timestamp) -> String {
    let Some(f) = facts else {
        return "Nothing is known about this member yet (no member events received).".into();
    };
    let mut lines = vec![format!(
        "status: {}",
        f.status.map_or("unknown", crate::members::event::MemberStatus::as_str)
    )];
    if let Some(days) = f.tenure_days(now) {
        lines.push(format!("member for {}", crate::kernel::plural::count(days, "day", "days")));
    }
    lines.push(match f.last_checkin_at {
        Some(at) => format!("last check-in: {at}"),
        None => "no check-in on record".into(),
    });
    if let Some(value) = f.monthly_value {
        lines.push(format!("monthly value: {value:.2}"));
    }
    if f.payment_failing {
        lines.push("a payment is failing".into());
    }
    lines.join("\n")
}
