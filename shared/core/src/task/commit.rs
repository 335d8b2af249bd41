//! One atomic change to a task, as the engine hands it to the store ([`crate::ports::TaskWrites`]):
//! the new task over the version it read, the log entries that explain it, conversation
//! entries, and what a send does to the counters that enforce the guarantees.

use jiff::civil::Date;

use crate::kernel::ids::MemberId;
use crate::members::member::SendLedger;
use crate::task::{ConversationMessage, LogEntry, OutboundMessage, Task};

/// What a send does to the counters that enforce the guarantees, committed with the task.
#[derive(Clone, Debug)]
pub enum SendEffect {
    /// Count the send before it happens: put the outbound record (only if no live record
    /// exists for this task and touch), write the member's new ledger (only if the ledger is
    /// still at `ledger.version - 1`), and add one to the account's daily counter (only if it
    /// is below `daily_limit`).
    Reserve {
        outbound: OutboundMessage,
        member_id: MemberId,
        ledger: SendLedger,
        daily_date: Date,
        daily_limit: u32,
    },
    /// Update the outbound record after the send (sent, or unknown).
    Record { outbound: OutboundMessage },
    /// The provider refused the mail: nothing went out, so give back what was counted.
    Release {
        outbound: OutboundMessage,
        member_id: MemberId,
        ledger_key: String,
        daily_date: Date,
    },
}

/// One atomic change to a task: the new task (written only if the stored version is still
/// `expected_version`), the log entries explaining it — one per version step — conversation
/// entries, and the send effect. Closing a task also frees its active guard.
#[derive(Clone, Debug)]
pub struct TaskCommit {
    pub expected_version: u64,
    pub task: Task,
    pub log: Vec<LogEntry>,
    pub messages: Vec<ConversationMessage>,
    pub send: Option<SendEffect>,
    /// Open loops the change registers (a sent touch's reply and goal), written in the same
    /// transaction so a loop exists exactly when the action that waits does; and the task's
    /// loops it resolves (status `met` or `expired`, see [`crate::task::task_loops`]), each
    /// written only if its stored record is still open — else nothing of the commit is, and
    /// it fails as a version conflict (someone else resolved it, over the task's version).
    pub loops: Vec<crate::task::open_loop::OpenLoop>,
    /// Whether the webhook events the change causes are written to the outbox (and queued):
    /// always, unless the path that made the change read the account and it has no endpoint
    /// (set by [`TaskCommit::webhooks_for`], beside the rule in `owner/webhook_event.rs`).
    pub webhooks: bool,
}

impl TaskCommit {
    /// One step: the version the task had before `log`'s change.
    pub fn new(task: Task, log: LogEntry) -> Self {
        Self {
            expected_version: task.version - 1,
            task,
            log: vec![log],
            messages: Vec::new(),
            send: None,
            loops: Vec::new(),
            webhooks: true,
        }
    }
}
