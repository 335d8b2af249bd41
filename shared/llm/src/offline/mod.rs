//! The offline heuristic agent's judgment: how it reads a member's reply, a task's progress
//! and a planned task's next step without a model.
//!
//! It is deliberately narrow. It recognises a handful of reply shapes by their words (opt-out,
//! hostility, a request to cancel or pause, hardship, money talk on a task about something
//! else, a question, a clear commitment with a day, a claim that it is already done, a clear
//! no, a deferral, vague politeness) and escalates everything else. When two shapes conflict
//! ("no thanks, see you Monday") it escalates too. It never replies to an opt-out or a hostile
//! message, never closes on a vague one, and only names outcome codes the request offers
//!.
//!
//! Its files, split by what changes together, each using only the ones listed before it:
//!
//! - `outcomes`: which offered outcome code a judgment names ([`verbal_commitment_code`] and
//!   its neutral and negative siblings), shared by the reading of replies and of progress.
//! - `reply`: a reply's words read into a [`ReplyKind`] ([`classify`]) and answered
//!   ([`evaluate_reply`]): the phrase lists and the reply rules.
//! - `completion`: progress towards the goal ([`evaluate_completion`]), from the signals first
//!   and the member's last reply, read by `reply`, last.
//! - `planner`: the next step of a planned task ([`plan_next`]), from the steps' results and
//!   the member's facts alone.
//!
//! This module only says what is public.

mod completion;
pub mod faq;
mod outcomes;
mod planner;
mod reply;

pub use completion::evaluate_completion;
pub use outcomes::verbal_commitment_code;
pub use planner::plan_next;
pub use reply::{ReplyKind, classify, evaluate_reply};
