//! A reply that threatens legal action or is abusive, carried out: the
//! task goes to the owner at once — with a critical notice that says what the member wrote —
//! the member is suppressed and their other tasks cancelled, as a stop would, and the
//! operator is alerted. The agent never reads or answers it. What counts as a threat is
//! `crate::conversation::threat`.

use jiff::Timestamp;

use super::Engine;
use super::StepOutcome;
use super::suppression::Suppression;
use crate::conversation::reply::{self, Blocker};
use crate::conversation::threat::Threat;
use crate::owner::account::Account;
use crate::owner::alert::{Alert, Severity};
use crate::task::error::EngineError;
use crate::task::{ConversationMessage, Task};

impl Engine {
    /// Escalate `task` on a threatening reply, then suppress its member (this task stays with
    /// the owner) and alert the operator.
    pub(in crate::engine) async fn escalate_threat(
        &self,
        account: &Account,
        task: Task,
        conversation: &[ConversationMessage],
        threat: Threat,
        now: Timestamp,
    ) -> Result<StepOutcome, EngineError> {
        let words = reply::awaited_reply(conversation)
            .map(|m| reply::preview(reply::member_words(m)))
            .unwrap_or_default();
        let blocker = Blocker::because(format!(
            "the member wrote: \"{words}\"; nothing was sent and the agent will not answer"
        ));
        let (email, member, id) = (task.member.email.clone(), task.member.id.clone(), task.id);
        let outcome = self
            .escalate(Some(account), task, conversation, now, threat.reason(), blocker)
            .await?;
        if let Some(email) = &email {
            self.suppress_member(Suppression {
                account,
                email,
                member: Some(&member),
                reason: threat.reason().as_str(),
                keep: Some(id),
            })
            .await?;
        }
        // The operator hears of it (spec §28.4: "immediate review"), without the member's data.
        self.raise(Alert {
            code: threat.reason().as_str(),
            severity: Severity::Critical,
            account_id: Some(account.id),
            detail: format!(
                "a member's reply on task {id} was read as {}; the task is escalated and the member suppressed",
                threat.reason()
            ),
            action: "make sure the gym's owner has seen the escalation; review the account's recent outreach",
            at: now,
        })
        .await;
        tracing::warn!(account = %account.id, task = %id, reason = threat.reason().as_str(), "threatening reply: escalated, member suppressed");
        Ok(outcome)
    }
}
