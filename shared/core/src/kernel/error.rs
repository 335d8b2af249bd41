//! The errors of input and of the store. Each entry point maps them once: to an HTTP status
//! in the API, to retryable vs not in the queue consumers. The engine's operations refuse with
//! [`crate::task::error::EngineError`], which wraps these.

use thiserror::Error;

/// Input that is well-formed JSON but not acceptable (→ 400/422 with this code).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{message}")]
pub struct InvalidInput {
    pub code: String,
    pub message: String,
}

impl InvalidInput {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// What went wrong in a store operation.
#[derive(Debug, Error)]
pub enum StoreError {
    /// A conditional write lost: someone else changed the item first. Normal under
    /// concurrency — re-read and re-decide.
    #[error("conflict: {0:?}")]
    Conflict(Conflict),
    /// The backing store failed; retrying later may work.
    #[error("store unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Stored data could not be decoded — a bug or a hand-edited item.
    #[error("corrupt item {key}: {reason}")]
    Corrupt { key: String, reason: String },
    /// A pagination cursor that this store did not hand out (or for another account).
    #[error("invalid cursor")]
    InvalidCursor,
    /// The value holds a number the store cannot keep (`kernel::number`): refused before any
    /// write, whatever store it is — bad input that slipped past its entry point, never a
    /// retry.
    #[error("{0}")]
    Unstorable(InvalidInput),
}

/// Which condition of a conditional write failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// The item's `version` (task or account) was not the one the writer read.
    Version,
    /// The member's facts changed since they were read.
    MemberFacts,
    /// An active task for this member and type exists already.
    ActiveTask,
    /// The member's send ledger changed since it was read (another send raced this one).
    MemberLedger,
    /// The account's daily send counter is at its limit.
    DailyLimit,
    /// A message for this task and touch was reserved already: it must never be sent twice.
    OutboundExists,
    /// The item being created exists already (account, token…).
    AlreadyExists,
    /// A task's write named a once-only claim ([`crate::task::flood::OnceClaim`]: a finding's
    /// episode, a delivered reply) that is held already: nothing was written.
    Claimed,
    /// The account's count of tasks created today is at its limit.
    DailyTasks,
    /// The account holds as many open tasks as it may.
    ActiveTasks,
    /// The account's agent-spawned tasks today are at their limit.
    AgentTasks,
    /// The agent-spawned tasks about this member today are at their limit.
    MemberAgentTasks,
    /// The account's AI calls of the day moved since the writer read them (another call was
    /// counted meanwhile): nothing was written; count the call on its own.
    AiCalls,
}
