//! Autopilot that offers itself: on `limited_auto`, each
//! approval of a task type not on autopilot counts toward the type's streak, and an edit
//! starts it again. At [`AUTOPILOT_APPROVALS`] approvals in a row, none edited, a suggestion
//! offers to put the type on `autopilot_types`; made once per account and type, it changes
//! nothing until the owner accepts it (and accepting can be undone).

use crate::engine::Engine;
use crate::kernel::ids::{AccountId, new_ulid};
use crate::learning::suggestion::{AUTOPILOT_APPROVALS, Suggestion, autopilot};
use crate::owner::account::ExecutionMode;
use crate::task::error::EngineError;

impl Engine {
    /// The owner approved a `task_type` task (`edited`: with their own changes). Trouble
    /// here is logged: the approval stands.
    pub(in crate::engine) async fn note_approval(&self, account: AccountId, task_type: &str, edited: bool) {
        if let Err(e) = self.count_approval(account, task_type, edited).await {
            tracing::warn!(%account, task_type, error = %e, "the approval was not counted toward the autopilot suggestion");
        }
    }

    async fn count_approval(&self, account: AccountId, task_type: &str, edited: bool) -> Result<(), EngineError> {
        let mut streak = 0;
        let owner = self
            .change_account(account, |a| {
                if a.settings.execution_mode != ExecutionMode::LimitedAuto || a.settings.autopilot_types.iter().any(|t| t == task_type) {
                    return Ok(false);
                }
                let current = a.approval_streaks.get(task_type).copied().unwrap_or(0);
                streak = if edited { 0 } else { current.saturating_add(1) };
                if streak == current {
                    return Ok(false);
                }
                if streak == 0 {
                    a.approval_streaks.remove(task_type);
                } else {
                    a.approval_streaks.insert(task_type.to_owned(), streak);
                }
                Ok(true)
            })
            .await?;
        if streak < AUTOPILOT_APPROVALS {
            return Ok(());
        }
        let now = self.clock.now();
        let label = crate::engine::owner_notices::type_label(task_type);
        let suggestion = Suggestion::new(owner.id, autopilot(task_type, &label, streak), "edit_analysis", new_ulid(now), now);
        if self.store.create_suggestion(&suggestion).await? {
            tracing::info!(%account, task_type, suggestion = %suggestion.id, "autopilot suggested");
        }
        Ok(())
    }
}
