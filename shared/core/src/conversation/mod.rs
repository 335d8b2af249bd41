//! The conversation with a member: mail out and in, the reply as it arrives, the stop rule,
//! the reply decision, the tokens in reply and unsubscribe addresses, and the system prompt
//! every AI call is given. Depends on `owner`, `task`, `members`, `kernel`.

pub mod inbound;
pub mod mail;
pub mod messages;
pub mod opt_out;
pub mod prompt;
pub mod reply;
pub mod reply_text;
pub mod skills;
pub mod sms;
pub mod threat;
pub mod token;
