//! A task's loop is resolved with its task: the loop's record (only while it is open) and the
//! note the task carries of it (`task/task_loops.rs`, only over the task's version) in one
//! commit. So the member's event, the deadline sweep and the task's own step — each writing
//! over the version it read — resolve a loop once between them, and the task's step reads
//! what happened from the task alone.

use super::Engine;
use crate::engine::work::MAX_RACES;
use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::TaskId;
use crate::task::TaskStatus;
use crate::task::commit::TaskCommit;
use crate::task::error::EngineError;
use crate::task::open_loop::{LoopStatus, OnDeadline, OpenLoop};
use crate::task::reason::Reason;
use crate::task::task_loops;
use crate::task::transition::{Why, record};

impl Engine {
    /// Write `resolved` (met or expired), a loop of task `task_id`, with its task: `true` if
    /// this call resolved it, `false` if the task (or the record) says something resolved it
    /// first. When the task's step has something to do about it now — a goal met, a deadline
    /// that closes or escalates — the task is made due now.
    pub(super) async fn resolve_task_loop(&self, resolved: &OpenLoop, task_id: TaskId) -> Result<bool, EngineError> {
        let now = self.clock.now();
        for _ in 0..MAX_RACES {
            let Some(task) = self.store.get_task(resolved.account_id, task_id).await? else {
                return Ok(self.store.resolve_loop(resolved).await?);
            };
            // A closed task is never written again for its loops (it waits on nothing, and
            // reopening it clears them); nor is one from before tasks carried their loops.
            let noted = task.loops.iter().find(|n| n.id == resolved.id).cloned();
            let Some(note) = noted.filter(|_| !task.status.is_terminal()) else {
                return Ok(self.store.resolve_loop(resolved).await?);
            };
            if !note.is_open() {
                return Ok(false);
            }
            let why = match resolved.status {
                LoopStatus::Met => Why::new(Reason::LoopMet).detail(note.expects.met_in_words()),
                _ => Why::new(Reason::LoopExpired).detail(format!(
                    "{} by {}; planned then: {}",
                    note.expects.missed_in_words(),
                    note.deadline,
                    note.on_deadline.in_words()
                )),
            };
            let (mut next, log) = record(&task, now, why);
            let Some(written) = task_loops::resolve(&mut next, resolved.id, resolved.status, resolved.met_by.clone(), now) else {
                return Ok(false);
            };
            let acts = match resolved.status {
                LoopStatus::Met => note.is_goal(),
                _ => matches!(note.on_deadline, OnDeadline::Close | OnDeadline::Escalate),
            };
            // A goal met while the task waits on the owner settles it too (the escalation's
            // timer reads it): a member who paid is recovered, never timed out as unanswered.
            let wakes = match next.status {
                TaskStatus::Waiting => next.awaiting.is_none(),
                TaskStatus::Escalated => resolved.status == LoopStatus::Met,
                _ => false,
            };
            if acts && wakes {
                next.next_action_at = Some(next.next_action_at.map_or(now, |at| at.min(now)));
            }
            let mut commit = TaskCommit::new(next, log);
            commit.loops = vec![written];
            match self.store.commit(&commit).await {
                Ok(()) => return Ok(true),
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// Resolve `resolved` the way its loop is kept: with its task, or alone.
    pub(super) async fn resolve_any_loop(&self, resolved: &OpenLoop) -> Result<bool, EngineError> {
        match resolved.task_id {
            Some(task) if task_loops::is_tasks_own(resolved) => self.resolve_task_loop(resolved, task).await,
            _ => Ok(self.store.resolve_loop(resolved).await?),
        }
    }
}
