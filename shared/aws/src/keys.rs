//! Every key format of the single table, in one place (see ARCHITECTURE.md, "Data").

use jiff::civil::Date;
use openloop_core::kernel::ids::{AccountId, Email, MemberId, TaskId};

pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub const GSI1: &str = "GSI1";
pub const GSI1PK: &str = "GSI1PK";
pub const GSI1SK: &str = "GSI1SK";
pub const GSI2: &str = "GSI2";
pub const GSI2PK: &str = "GSI2PK";
pub const GSI2SK: &str = "GSI2SK";
pub const KIND: &str = "kind";
pub const TTL: &str = "ttl";
/// A conditional write's own token (`dynamo::DynamoStore::put_conditional`, `transact`): read
/// back on a condition failure, it tells our own earlier attempt — applied by DynamoDB, its
/// answer lost, met again by the SDK's retry — from someone else's write.
pub const WRITE_TOKEN: &str = "write_token";

pub fn account_pk(a: AccountId) -> String {
    format!("ACCT#{a}")
}
pub const PROFILE_SK: &str = "PROFILE";
pub const ACCOUNTS_GSI2PK: &str = "ACCOUNTS";

pub fn token_pk(hash: &str) -> String {
    format!("TOKEN#{hash}")
}
pub const TOKEN_SK: &str = "TOKEN";

/// The owner-address index on GSI1: an account item carries its owner's address here.
pub fn owner_email_gsi1pk(key: &str) -> String {
    format!("OWNER#{key}")
}

/// A dashboard sign-in link, by its token's hash.
pub fn sign_in_pk(token_hash: &str) -> String {
    format!("SIGNIN#{token_hash}")
}
pub const SIGN_IN_SK: &str = "SIGNIN";

/// A sending domain's claim: which account may send as it.
pub fn domain_claim_pk(domain: &str) -> String {
    format!("DOMAIN#{}", domain.to_ascii_lowercase())
}
pub const DOMAIN_CLAIM_SK: &str = "CLAIM";

/// A text origination identity's claim: which account may text from it and read what is
/// texted to it (`number` as `openloop_core::owner::sms::number_key` folds it).
pub fn number_claim_pk(number: &str) -> String {
    format!("SMSNUMBER#{}", number.to_ascii_lowercase())
}
pub const NUMBER_CLAIM_SK: &str = "CLAIM";

pub const SYSTEM_PK: &str = "SYSTEM";
pub const CONFIG_SK: &str = "CONFIG";

pub fn task_sk(t: TaskId) -> String {
    format!("TASK#{t}")
}
pub fn log_sk(t: TaskId, entry: ulid::Ulid) -> String {
    format!("TASK#{t}#LOG#{entry}")
}
pub fn conversation_sk(t: TaskId, entry: ulid::Ulid) -> String {
    format!("TASK#{t}#CONV#{entry}")
}
/// Listing an account's tasks, newest first.
pub fn tasks_gsi2pk(a: AccountId) -> String {
    format!("TASKS#{a}")
}
pub fn due_gsi1pk(shard: u32) -> String {
    format!("DUE#{shard}")
}

/// The prefix of every active-task guard of an account.
pub const ACTIVE_PREFIX: &str = "ACTIVE#";
pub fn active_sk(member: &MemberId, task_type: &str) -> String {
    format!("{ACTIVE_PREFIX}{member}#{task_type}")
}
/// The prefix of one member's active-task guards (the `#` keeps `m_1` from matching `m_10`).
pub fn active_member_prefix(member: &MemberId) -> String {
    format!("ACTIVE#{member}#")
}
/// What an open task counts for in the owner's numbers (`TaskTally`), beside the task.
pub const TALLY_OPEN_PREFIX: &str = "TALLY#OPEN#";
pub fn tally_open_sk(t: TaskId) -> String {
    format!("{TALLY_OPEN_PREFIX}{t}")
}
/// A closed task's tally, sorted by when it closed (Unix seconds, 12 digits).
pub fn tally_closed_sk(closed_at: jiff::Timestamp, t: TaskId) -> String {
    format!("{}{t}", tally_closed_from(closed_at))
}
/// The first closed tally at or after `since` sorts at or after this.
pub fn tally_closed_from(since: jiff::Timestamp) -> String {
    format!("TALLY#CLOSED#{:012}#", since.as_second().max(0))
}
/// Sorts after every closed tally.
pub const TALLY_CLOSED_END: &str = "TALLY#CLOSED#~";
pub fn member_sk(member: &MemberId) -> String {
    format!("MEMBER#{member}")
}
pub fn sends_sk(date: Date) -> String {
    format!("SENDS#{date}")
}
/// The account's texts and their segments on one local day (no TTL: the scorecard reads them).
pub fn texts_sk(date: Date) -> String {
    format!("TEXTS#{date}")
}
/// The account's AI calls on one local day.
pub fn ai_calls_sk(date: Date) -> String {
    format!("AICALLS#{date}")
}
/// Another daily allowance of the account, by name (an owner notice kind's budget).
pub fn daily_counter_sk(counter: &str, date: Date) -> String {
    format!("COUNT#{counter}#{date}")
}
pub fn suppress_sk(email: &Email) -> String {
    format!("SUPPRESS#{email}")
}
pub fn outbound_prefix(t: TaskId) -> String {
    format!("MSG#{t}#")
}
pub fn outbound_sk(t: TaskId, touch: u32) -> String {
    format!("MSG#{t}#{touch:04}")
}
pub fn hook_pk(source: &str, id: &str) -> String {
    format!("HOOK#{source}#{id}")
}
pub const HOOK_SK: &str = "HOOK";

/// Reply routing: where replies to a task's mail, or to one Message-ID, belong. Written with
/// every recorded send; the partition is the id itself, so a lookup needs no account.
pub fn task_route_pk(t: TaskId) -> String {
    format!("ROUTE#TASK#{t}")
}
pub fn message_route_pk(message_id: &str) -> String {
    format!("ROUTE#MSG#{}", message_id.to_ascii_lowercase())
}
pub const ROUTE_SK: &str = "ROUTE";

/// Recurring templates: the item, and the one due-index partition that the tick
/// reads for templates due to spawn (only enabled templates carry it).
pub fn template_sk(id: ulid::Ulid) -> String {
    format!("RECUR#{id}")
}
pub const TEMPLATE_PREFIX: &str = "RECUR#";
pub const TEMPLATES_DUE_GSI1PK: &str = "RECURDUE";

/// The attribution index (GSI1, sparse, sharded like the due index): closed tasks whose
/// outcome attribution still watches, sorted by the end of their window.
pub fn attribution_gsi1pk(shard: u32) -> String {
    format!("ATTRIB#{shard}")
}

/// The account's activity feed (GSI2): every decision-log entry, sorted by its time and id
/// (`GSI2SK = {at to the millisecond}#{entry ulid}`).
pub fn activity_gsi2pk(a: AccountId) -> String {
    format!("ACTIVITY#{a}")
}
pub fn activity_gsi2sk(at: jiff::Timestamp, entry: ulid::Ulid) -> String {
    format!("{}#{entry}", openloop_core::task::work::due_time_key(at))
}

/// Creation counters: the account's open tasks, and per local day every
/// creation, the agent's own, and the agent's per member (the daily ones carry a TTL).
pub const OPEN_TASKS_SK: &str = "COUNT#OPEN";
pub fn created_sk(date: Date) -> String {
    format!("COUNT#CREATED#{date}")
}
pub fn agent_created_sk(date: Date) -> String {
    format!("COUNT#AGENT#{date}")
}
pub fn agent_member_created_sk(date: Date, member: &MemberId) -> String {
    format!("COUNT#AGENT#{date}#{member}")
}
/// The prefix of every member item's sort key (see [`member_sk`]), for listing them.
pub const MEMBER_PREFIX: &str = "MEMBER#";

/// The learning record of a closed task: the account's own copy, ids and texts
/// included, beside its tasks.
pub fn interaction_sk(t: TaskId) -> String {
    format!("INTERACTION#{t}")
}
/// The cross-tenant copy of a learning record: one partition per month (UTC), sorted by task
/// type. The sort key ends in a one-way digest of the task id, so a revision replaces its
/// record while no id crosses tenants.
pub fn learning_pk(month: &str) -> String {
    format!("LEARNING#{month}")
}
pub fn learning_sk(task_type: &str, t: TaskId) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("learning#{t}").as_bytes());
    format!("{task_type}#{}", hex::encode(&digest[..16]))
}

/// A connector's health for the account.
pub fn connector_sk(name: &str) -> String {
    format!("CONNECTOR#{name}")
}

/// Daily metrics: the account's fold watermark, and one item per local day.
pub const METRICS_CURSOR_SK: &str = "METRICS#CURSOR";
pub fn metrics_sk(date: Date) -> String {
    format!("METRICS#{date}")
}
/// The day of a [`metrics_sk`] (`None` for the cursor or anything else).
pub fn metrics_date(sk: &str) -> Option<Date> {
    sk.strip_prefix("METRICS#")?.parse().ok()
}

/// Owner notifications: one item per notice, listed newest first by its ULID; a
/// notice waiting for its digest mail also sits in one digest partition of GSI1, sorted by
/// when the digest goes out (`GSI1SK = {digest time}#{account}#{notice}`).
/// An action's record in the action log, under its task.
pub fn action_sk(t: TaskId, key: &str) -> String {
    format!("ACTION#{t}#{key}")
}
pub fn actions_prefix(t: TaskId) -> String {
    format!("ACTION#{t}#")
}
pub fn notice_sk(id: ulid::Ulid) -> String {
    format!("NOTICE#{id}")
}
pub const NOTICE_PREFIX: &str = "NOTICE#";
pub const NOTICES_DUE_GSI1PK: &str = "NOTICEDUE";
pub fn notice_due_gsi1sk(at: jiff::Timestamp, account: AccountId, id: ulid::Ulid) -> String {
    format!("{}#{account}#{id}", openloop_core::task::work::due_time_key(at))
}

/// The account's PushPress connection: subscription and import progress.
pub const CONNECTION_SK: &str = "CONNECTION#pushpress";
/// The owner's own message templates, one item per task type and touch.
pub const MESSAGE_TEMPLATE_PREFIX: &str = "MTPL#";
pub fn message_template_sk(task_type: &str, touch: &str) -> String {
    format!("{MESSAGE_TEMPLATE_PREFIX}{task_type}#{touch}")
}
/// A member's annotations: Openloop's own tags and notes.
pub fn annotations_sk(m: &MemberId) -> String {
    format!("ANNOTATIONS#{m}")
}

/// The account's bounce window: sends counted by reservations, recent bounces.
pub const DELIVERABILITY_SK: &str = "DELIVERABILITY";
/// The mails one address soft-bounced.
pub fn soft_bounce_sk(email: &Email) -> String {
    format!("SOFTBOUNCE#{email}")
}
/// A suggestion of the evaluator, listed per account and status on GSI2; and the
/// claim of its fingerprint, so a finding is suggested once.
pub fn suggestion_sk(id: ulid::Ulid) -> String {
    format!("SUGGESTION#{id}")
}
pub fn suggestion_fingerprint_sk(fingerprint: &str) -> String {
    format!("SUGGESTED#{fingerprint}")
}
pub fn suggestions_gsi2pk(a: AccountId, status: &str) -> String {
    format!("SUGGESTIONS#{a}#{status}")
}
/// The account's business memories: one versioned book.
pub const MEMORIES_SK: &str = "MEMORIES";

/// An open loop, under its member so one member's loops are one consistent query.
pub fn loop_sk(member: &MemberId, id: ulid::Ulid) -> String {
    format!("LOOP#{member}#{id}")
}
/// The prefix of one member's loops (the `#` keeps `m_1` from matching `m_10`).
pub fn loop_member_prefix(member: &MemberId) -> String {
    format!("LOOP#{member}#")
}
/// The sharded deadline index of open loops on GSI1 (sort key `{deadline}#{id}`).
pub fn loop_due_gsi1pk(shard: u32) -> String {
    format!("LOOPDUE#{shard}")
}
/// An account's loops on GSI2, by status then id (newest last).
pub fn loops_gsi2pk(a: AccountId) -> String {
    format!("LOOPS#{a}")
}
pub fn loops_gsi2sk(status: &str, id: ulid::Ulid) -> String {
    format!("{status}#{id}")
}
/// An account's trigger table: its own rows, its switches of the built-in ones, the firings.
pub const TRIGGERS_SK: &str = "TRIGGERS";
/// A to-do of the owner's, listed per account and status on GSI2 by its index
/// time (`TODOS#{a}#{status}`, `{time}#{id}`: open soonest due first); and the claim of its
/// source, so one task's event makes one to-do.
pub fn todo_sk(id: ulid::Ulid) -> String {
    format!("TODO#{id}")
}
pub fn todo_source_sk(source: &str) -> String {
    format!("TODOSRC#{source}")
}
pub fn todos_gsi2pk(a: AccountId, status: &str) -> String {
    format!("TODOS#{a}#{status}")
}
pub fn todos_gsi2sk(at: jiff::Timestamp, id: ulid::Ulid) -> String {
    format!("{}#{id}", openloop_core::task::work::due_time_key(at))
}

/// An owner's outbound webhook endpoint (its backlog and delivery log ride on it).
pub fn webhook_endpoint_sk(id: ulid::Ulid) -> String {
    format!("WEBHOOK#{id}")
}
pub const WEBHOOK_ENDPOINT_PREFIX: &str = "WEBHOOK#";
/// GSI1 partition of endpoints a consumer should look at again (`{due time}#{account}#{id}`).
pub const WEBHOOKS_DUE_GSI1PK: &str = "WEBHOOKDUE";
pub fn webhook_due_gsi1sk(at: jiff::Timestamp, account: AccountId, id: ulid::Ulid) -> String {
    format!("{}#{account}#{id}", openloop_core::task::work::due_time_key(at))
}

/// An outbound webhook event written before it is queued (`owner/webhook_event.rs`), until
/// the `deliveries` consumer takes it.
pub fn webhook_outbox_sk(event_id: &str) -> String {
    format!("OUTBOX#{event_id}")
}
/// GSI1 partition of outbox items, by when the tick queues them again (`{due time}#{account}#{event id}`).
pub const WEBHOOK_OUTBOX_GSI1PK: &str = "OUTBOXDUE";
pub fn webhook_outbox_gsi1sk(at: jiff::Timestamp, account: AccountId, event_id: &str) -> String {
    format!("{}#{account}#{event_id}", openloop_core::task::work::due_time_key(at))
}

/// The keyed hash of an erased member's identity (`openloop_core::members::erasure`): what
/// keeps them out of a later import, under the account.
pub fn erased_sk(key: &str) -> String {
    format!("ERASED#{key}")
}
/// The prefix of a task's log and conversation items (see [`log_sk`], [`conversation_sk`]).
pub fn task_items_prefix(t: TaskId) -> String {
    format!("TASK#{t}#")
}
/// The prefixes of the items an erasure looks through for what names a member.
pub const TODO_PREFIX: &str = "TODO#";
pub const OUTBOX_PREFIX: &str = "OUTBOX#";
