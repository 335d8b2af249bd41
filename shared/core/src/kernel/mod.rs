//! What every folder stands on: ids and e-mail addresses, the errors of input and of the
//! store, checks on outside text, the one rule for numbers, every numeric limit, the retry policy, and secrets sealed at rest (`sealed.rs`). Depends on no
//! other folder of the crate.

pub mod bounded;
pub mod calendar;
pub mod error;
pub mod ids;
pub mod limits;
pub mod number;
pub mod plural;
pub mod retry;
pub mod sealed;
pub mod text;
pub mod texts;
