//! Members as the gym's system knows them: their events (joins, check-ins, payments), the facts
//! we keep from them and the send ledger, and the member-data connector. Depends on `kernel`.

pub mod annotation;
pub mod cancellation;
pub mod connector;
pub mod consent;
pub mod erasure;
pub mod event;
pub mod member;
pub mod membership;
pub mod name;
pub mod source;
