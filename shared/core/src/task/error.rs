//! The error of the engine's operations. It lives with the task because the task's own
//! functions (a transition) refuse with it, and it names a task's status and a creation
//! refusal; the input and store errors it wraps are in [`crate::kernel::error`].

use thiserror::Error;

use crate::kernel::error::{Conflict, InvalidInput, StoreError};
use crate::kernel::ids::MemberId;
use crate::task::TaskStatus;

/// Errors of the engine's operations.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("{0}")]
    Invalid(#[from] InvalidInput),
    #[error("{what} not found")]
    NotFound { what: &'static str },
    #[error("invalid transition: {from} → {to}")]
    InvalidTransition { from: TaskStatus, to: TaskStatus },
    /// The task's status does not allow the action (a conflict, like a transition).
    #[error("a task in status {status} cannot take {action}")]
    InvalidState { status: TaskStatus, action: &'static str },
    #[error("the task changed while this request was being applied; re-read it and try again")]
    StaleVersion,
    #[error("{0}")]
    Paused(String),
    #[error(transparent)]
    Store(StoreError),
    #[error("{0}")]
    Dependency(String),
    /// This deployment lacks what the call needs (a connector, say): a retry will not help,
    /// its operator's configuration will. Its code and message say what is missing.
    #[error("{}", .0.message)]
    NotConfigured(InvalidInput),
    /// What the call asks for belongs to someone else (a sending domain another account
    /// holds): a conflict, with its own code and message.
    #[error("{}", .0.message)]
    Taken(InvalidInput),
    /// The credentials the call came with may not do this (a rotated-out API token changing
    /// the account's credentials): 401, with its own code and message.
    #[error("{}", .0.message)]
    Unauthorized(InvalidInput),
    /// A creation limit refused the task; nothing was created.
    #[error("{0}")]
    Limited(crate::task::flood::Refusal),
    /// The member asked to stop: no task is opened for them, from
    /// any source; nothing was created and no AI call was spent.
    #[error("member {member} is suppressed (they asked to get no more mail): no task is opened for them")]
    MemberSuppressed { member: MemberId },
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(Conflict::Version) => EngineError::StaleVersion,
            // A number the store cannot hold is the input's fault: 422, not a retry.
            StoreError::Unstorable(invalid) => EngineError::Invalid(invalid),
            other => EngineError::Store(other),
        }
    }
}

impl EngineError {
    /// Worth retrying the same input later (infrastructure trouble), as opposed to a
    /// decision that will not change.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            EngineError::Store(StoreError::Unavailable(_)) | EngineError::Dependency(_) | EngineError::StaleVersion
        )
    }
}
