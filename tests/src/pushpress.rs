//! The fake PushPress the stack tests and `make bench` use: the local runtime's own
//! (`openloop_local::pushpress`, which `make run` serves as its stand-in), so there is one fake
//! of the Platform API v3's wire format.

pub use openloop_local::pushpress::*;
