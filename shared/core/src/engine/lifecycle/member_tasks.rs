//! The member's other open tasks, for a step's guards (a task held for a suspected stop, a
//! more urgent task that goes first). The member item keeps the ids of its member's open
//! tasks, put and taken in the transactions that open and close them, and the step's send
//! snapshot read it: so a step reads the other tasks only when there are any (one batch read),
//! and never the guards. An account whose member items do not keep them yet (made before they
//! did, not backfilled) reads the guards, as before.

use super::Engine;
use crate::kernel::ids::TaskId;
use crate::rails::step::StepInput;
use crate::task::Task;
use crate::task::error::EngineError;

impl Engine {
    /// The member's active tasks, the step's own included (as the step holds it), by id.
    pub(in crate::engine) async fn member_tasks_for_step(&self, seen: &StepInput) -> Result<Vec<Task>, EngineError> {
        let current = seen.current();
        let Some(ids) = seen.snapshot.as_ref().and_then(|s| s.member_open_tasks.as_ref()) else {
            return Ok(self
                .store
                .member_active_tasks_besides(current.account_id, &current.member.id, current)
                .await?);
        };
        let others: Vec<TaskId> = ids.iter().copied().filter(|id| *id != current.id).collect();
        let mut tasks = if others.is_empty() {
            Vec::new()
        } else {
            self.store.get_tasks(current.account_id, &others).await?
        };
        // A kept id is never missing, but one may outlive its task's close (a backfill's race):
        // the task itself says whether it is open, and whose it is.
        tasks.retain(|t| t.member.id == current.member.id);
        if ids.contains(&current.id) {
            tasks.push(current.clone());
        }
        tasks.retain(Task::is_active);
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }
}
