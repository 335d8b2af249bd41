//! PushPress's own webhook deliveries (`../shared/PUSHPRESS.md` §6).
