//! Every numeric safety limit, and the pure checks that use them. One place for each number.
//!
//! The store enforces the same limits atomically (conditional writes in the send
//! reservation); these checks decide *before* trying, so the engine can defer with a reason
//! instead of failing a transaction.

use std::collections::BTreeMap;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

pub const DEFAULT_MEMBER_WEEKLY_LIMIT: u32 = 3;
pub const DEFAULT_DAILY_SEND_LIMIT: u32 = 15;
pub const DEFAULT_SEND_WINDOW_START: u8 = 8;
pub const DEFAULT_SEND_WINDOW_END: u8 = 20;
pub const DEFAULT_AVG_MEMBERSHIP_PRICE: f64 = 150.0;
pub const MAX_MEMBER_WEEKLY_LIMIT: u32 = 14;
pub const MAX_DAILY_SEND_LIMIT: u32 = 10_000;

/// The texts the owner API takes (`kernel::texts`): what a task is for, a task type's name, an
/// edited draft's subject and body, the owner's guidance, a code, an address, a zone, a domain,
/// a cron expression, an account's name, a time and a page's cursor.
pub const MAX_GOAL_CHARS: usize = 2_000;
pub const MAX_TASK_TYPE_CHARS: usize = 64;
pub const MAX_DRAFT_SUBJECT_CHARS: usize = 200;
pub const MAX_DRAFT_BODY_CHARS: usize = 20_000;
pub const MAX_GUIDANCE_CHARS: usize = 5_000;
pub const MAX_CODE_CHARS: usize = 64;
pub const MAX_EMAIL_CHARS: usize = 254;
pub const MAX_TIMEZONE_CHARS: usize = 64;
pub const MAX_DOMAIN_CHARS: usize = 253;
pub const MAX_CRON_CHARS: usize = 100;
pub const MAX_ACCOUNT_NAME_CHARS: usize = 200;
pub const MAX_TIME_CHARS: usize = 64;
pub const MAX_CURSOR_CHARS: usize = 2_048;
/// A text message's sender (a phone number, pool id, sender id or ARN).
pub const MAX_ORIGINATION_CHARS: usize = 256;
/// A member's id in the gym's system (`kernel::ids::MemberId`).
pub const MAX_MEMBER_ID_CHARS: usize = 128;
/// Account context for prompts: how much an owner may write into it.
pub const MAX_PROFILE_TEXT_CHARS: usize = 500;
/// The owner's reason for skipping a task, kept on its log.
pub const MAX_SKIP_REASON_CHARS: usize = 500;
/// The owner's note when resolving a task, kept on its log and conversation: as a skip reason.
pub const MAX_RESOLVE_NOTE_CHARS: usize = MAX_SKIP_REASON_CHARS;
/// A suppression's reason: it reaches the owner's notice title (a mail subject), so one line
/// and as short as a name.
pub const MAX_SUPPRESSION_REASON_CHARS: usize = 100;
/// Entries in each of a profile's lists (class types, special programs, never mention, always
/// include); each entry is a profile text ([`MAX_PROFILE_TEXT_CHARS`]).
pub const MAX_PROFILE_LIST_ITEMS: usize = 50;
/// Recurring templates one account may keep.
pub const MAX_RECURRING_TEMPLATES: usize = 50;
/// A member event's free text (a cancellation or payment failure reason), as a skip reason.
pub const MAX_EVENT_REASON_CHARS: usize = MAX_SKIP_REASON_CHARS;
/// A member event's names (a class name), as a member's name.
pub const MAX_EVENT_NAME_CHARS: usize = 100;
pub const MAX_AGENT_OVERRIDES: usize = 40;
pub const MAX_OVERRIDE_CHARS: usize = 8_000;
/// Business memories: the longest one, how many an account keeps, how many a prompt reads.
pub const MAX_MEMORY_CHARS: usize = 1_000;
/// An account's memories are one stored record (DynamoDB items hold 400 KB): 200 memories of
/// at most 1,500 bytes each, with their fields, stay well under it.
pub const MAX_MEMORY_BYTES: usize = 1_500;
pub const MAX_MEMORY_CATEGORY_CHARS: usize = 40;
pub const MAX_MEMORIES_PER_ACCOUNT: usize = 200;
pub const MAX_PROMPT_MEMORIES: usize = 25;

/// The trust gradient: with the owner's opt-in, a memory
/// suggestion this confident and strong is saved without review, once the account is this old.
pub const AUTO_SAVE_MIN_CONFIDENCE: u8 = 80;
pub const AUTO_SAVE_AFTER_DAYS: i64 = 30;

/// Attributed values cross tenants only rounded to the nearest this many dollars.
pub const LEARNING_VALUE_ROUNDING: f64 = 50.0;
/// The operator's platform aggregate of a month's learning records: read in pages of this
/// size, and no more than this many records in one report (it says when it stopped short).
pub const LEARNING_PAGE_SIZE: usize = 500;
/// Cross-business patterns an account is credited with at most (the oldest months drop out).
pub const MAX_CREDITED_PATTERNS: usize = 500;
pub const LEARNING_AGGREGATE_MAX_RECORDS: usize = 50_000;

/// At most this many messages per member per day (the account's local day), across tasks.
pub const MEMBER_DAILY_LIMIT: usize = 1;

/// The member cap is a rolling window, not a calendar week.
pub const MEMBER_WINDOW: SignedDuration = SignedDuration::from_hours(24 * 7);

/// How long a worker may hold a task in `executing` before another may take it over
///.
pub const EXECUTION_LEASE: SignedDuration = SignedDuration::from_mins(5);

/// Retry policy for a failed step: three tries at growing distances, then the
/// task goes to the owner.
pub const RETRY_BACKOFF: [SignedDuration; 3] = [
    SignedDuration::from_mins(1),
    SignedDuration::from_mins(5),
    SignedDuration::from_hours(1),
];

/// A step counts as due this much before its time: schedules are computed from the moment
/// a mail actually left, so "a day later" must not miss a tick by a second.
pub const DUE_TOLERANCE: SignedDuration = SignedDuration::from_mins(1);

/// Whether something scheduled at `at` is due at `now`.
pub fn is_due(at: Timestamp, now: Timestamp) -> bool {
    at <= now + DUE_TOLERANCE
}

/// How many due items one tick hands out at most: a Monday morning's backlog of 10,000 due
/// steps in one run. Each shard reads its share ([`TICK_MAX_ITEMS`] / [`DUE_INDEX_SHARDS`])
/// in at most [`TICK_MAX_PAGES_PER_SHARD`] pages, every shard at once.
pub const TICK_MAX_ITEMS: usize = 20_000;
pub const DUE_INDEX_SHARDS: u32 = 16;
/// Pages one shard reads in one tick (a page is at most 1,000 items or 1 MB).
pub const TICK_MAX_PAGES_PER_SHARD: usize = 8;

/// Webhook signatures older or newer than this are refused (Standard Webhooks).
pub const WEBHOOK_TOLERANCE: SignedDuration = SignedDuration::from_mins(5);
/// A PushPress delivery's unsigned `created` must be within this of now (either way); outside
/// it the delivery is refused (`422 delivery_out_of_window`). The same tolerance as a signed
/// webhook's timestamp: PushPress delivers at once.
pub const PUSHPRESS_CREATED_WINDOW: SignedDuration = WEBHOOK_TOLERANCE;
/// How long a processed webhook id is remembered.
pub const WEBHOOK_DEDUP_TTL: SignedDuration = SignedDuration::from_hours(24 * 7);
/// Largest request body accepted by the API and the member-event webhook.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Largest raw inbound mail accepted by `POST /webhooks/inbound-email`: 25 MB of attachments
/// (what the big providers deliver) after base64. In AWS, large mail arrives through S3.
pub const MAX_INBOUND_MAIL_BYTES: usize = 40 * 1024 * 1024;

/// The backoff before retry number `attempt` (1-based), or `None` when retries are used up.
pub fn retry_delay(attempt: u32) -> Option<SignedDuration> {
    RETRY_BACKOFF.get(attempt.checked_sub(1)? as usize).copied()
}

/// Sends recorded for a member in the rolling window, keyed by reservation key.
pub fn sends_in_window(ledger: &BTreeMap<String, Timestamp>, now: Timestamp) -> usize {
    ledger.values().filter(|at| now.duration_since(**at) < MEMBER_WINDOW).count()
}

/// The ledger without entries that fell out of the window (kept small as sends go by).
pub fn prune_ledger(ledger: &BTreeMap<String, Timestamp>, now: Timestamp) -> BTreeMap<String, Timestamp> {
    ledger
        .iter()
        .filter(|(_, at)| now.duration_since(**at) < MEMBER_WINDOW)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The account-local calendar date, which keys the daily send counter.
pub fn local_date(now: Timestamp, tz: &TimeZone) -> Date {
    now.to_zoned(tz.clone()).date()
}

/// Smart timing: a touch planned at the start of its preferred hours, or deferred
/// to the window's opening, leaves a few minutes after it, never on the hour — 5:00 to 20:59
/// (whole seconds, so a zone's touches spread over 960 seconds), fixed per task and touch (a
/// hash of both) so a retried step lands on the same second.
pub const SEND_JITTER_MINS: (u64, u64) = (5, 20);
/// The local hours `[start, end)` a first touch prefers (the morning) and a cadence follow-up
/// prefers (the afternoon), each only where it meets the account's send window. An answer to a
/// member's reply prefers nothing: it goes as soon as the rails allow.
pub const FIRST_TOUCH_HOURS: (i8, i8) = (8, 10);
pub const FOLLOW_UP_HOURS: (i8, i8) = (13, 16);

/// Subtasks: agent-planned steps per parent, the higher limit for a
/// batch parent's one-per-member subtasks, how deep subtasks nest, and how often a parent
/// re-derives its state when no subtask closes meanwhile.
pub const MAX_SUBTASKS_PER_PARENT: usize = 8;
pub const MAX_BATCH_SUBTASKS_PER_PARENT: usize = 50;
pub const MAX_SUBTASK_DEPTH: usize = 2;

/// Actions: the most one automation task is given, the most members one
/// bulk action touches (one connector call each, so a run stays well inside a Lambda's time),
/// and the length of a tag and of a note's text.
pub const MAX_ACTIONS_PER_TASK: usize = 20;
pub const MAX_BULK_ACTION_MEMBERS: usize = 200;
pub const MAX_TAG_LEN: usize = 64;
pub const MAX_ACTION_TEXT_LEN: usize = 2_000;
pub const PARENT_CHECK_INTERVAL: SignedDuration = SignedDuration::from_hours(6);

/// Anomalies: this many conversation turns without a resolution escalate…
pub const ANOMALY_TURNS_WITHOUT_RESOLUTION: u32 = 5;
/// …and so do this many member replies on a task that is still open (a possible loop).
pub const ANOMALY_MEMBER_REPLIES: usize = 3;

/// The conversation loop: an answer the agent is less sure of than this goes
/// to the owner as a draft instead of to the member.
pub const REPLY_MIN_CONFIDENCE: u8 = 50;
/// How long a subtask held by its escalated parent waits before looking again; the owner's
/// guidance on the parent makes it due at once.
pub const HELD_SUBTASK_RECHECK: SignedDuration = SignedDuration::from_hours(24);
/// A model's decision to close a task: below this confidence it never
/// closes the task; the task waits, or goes to the owner when its budget is nearly spent.
pub const CLOSE_MIN_CONFIDENCE: u8 = 60;
/// The completion evaluator closes on a concrete signal at or above this confidence (§37.3).
pub const PROGRESS_SIGNAL_CONFIDENCE: u8 = 80;
/// …and a progressive goal at 100% at or above this one (§37.3).
pub const PROGRESS_DONE_CONFIDENCE: u8 = 70;
/// How long "wait" waits when the agent names no number of days.
pub const REPLY_DEFAULT_WAIT_DAYS: u32 = 3;
/// The most a "wait" may push the next step out.
pub const REPLY_MAX_WAIT_DAYS: u32 = 30;
/// The AI cost circuit breaker: calls per account per local day, calls per task
/// over its life, and the share of the day's calls at which the owner is warned.
pub const AI_CALLS_PER_ACCOUNT_PER_DAY: u32 = 200;
pub const AI_CALLS_PER_TASK: u32 = 20;
pub const AI_WARN_PCT: u32 = 80;
/// How many of the latest messages an escalation shows the owner.
pub const ESCALATION_SNAPSHOT_MESSAGES: usize = 6;

/// The onboarding ramp: a gym (or a newly enabled agent) is in `shadow` for its
/// first 3 days, `guided` up to day 7, `limited` up to day 14, then `full`.
pub const RAMP_SHADOW_DAYS: i64 = 3;
pub const RAMP_GUIDED_DAYS: i64 = 7;
pub const RAMP_LIMITED_DAYS: i64 = 14;
/// Daily sends allowed per phase (shadow sends nothing; full uses the account's own limit).
pub const RAMP_GUIDED_DAILY_SENDS: u32 = 3;
/// The deliverability warm-up's daily sends in a new account's weeks 1–3.
pub const WARMUP_WEEK_1_DAILY_SENDS: u32 = 3;
pub const WARMUP_WEEK_2_DAILY_SENDS: u32 = 5;
pub const WARMUP_WEEK_3_DAILY_SENDS: u32 = 10;
pub const RAMP_LIMITED_DAILY_SENDS: u32 = 10;
/// Tasks a gym may get per day per phase (for the creation flood limits, spec §7.9).
pub const RAMP_SHADOW_TASKS_PER_DAY: u32 = 10;
pub const RAMP_GUIDED_TASKS_PER_DAY: u32 = 15;
pub const RAMP_LIMITED_TASKS_PER_DAY: u32 = 25;

/// The stale guard: a check-in this recent means a churn task resolved itself.
pub const STALE_GUARD_RECENT_CHECKIN: SignedDuration = SignedDuration::from_hours(24 * 3);

/// Daily metrics: the hourly fold leaves the last minutes for the next run (a
/// decision may be written a moment after its time), and a first fold looks back this far.
pub const METRICS_SETTLE: SignedDuration = SignedDuration::from_mins(5);
pub const METRICS_FIRST_LOOKBACK: SignedDuration = SignedDuration::from_hours(48);
/// An estimate of one AI call's cost, for the cost metric and alert (no token counts yet).
pub const AI_CALL_COST_ESTIMATE_USD: f64 = 0.02;
/// An account's own connector credentials: the longest API key and company id
/// accepted.
pub const MAX_CONNECTOR_KEY_CHARS: usize = 256;
/// How many PushPress plans an owner may price (settings `plan_prices`).
pub const MAX_PLAN_PRICES: usize = 500;
pub const MAX_CONNECTOR_COMPANY_CHARS: usize = 128;
/// The owner's daily metrics read (`GET /api/v1/metrics`): the days shown by default (ending
/// today in the account's time zone), and the most one request may ask for.
pub const METRICS_DEFAULT_DAYS: i64 = 30;
pub const METRICS_MAX_DAYS: i64 = 92;

/// Alert conditions.
pub const ALERT_ESCALATION_RATE: f64 = 0.5;
pub const ALERT_ESCALATION_DAYS: usize = 3;
/// A day with fewer decided tasks says nothing about its escalation rate.
pub const ALERT_MIN_DECIDED: u32 = 3;
pub const ALERT_AI_COST_USD: f64 = 10.0;
pub const ALERT_SEND_FAILURE_RATE: f64 = 0.05;
pub const ALERT_BOUNCE_RATE: f64 = 0.05;
/// Rates of sends are judged from this many sends a day.
pub const ALERT_MIN_SENDS: u32 = 10;
pub const ALERT_STALLED_AFTER: SignedDuration = SignedDuration::from_hours(24 * 14);
pub const ALERT_VERBAL_ONLY_RATE: f64 = 0.6;
pub const ALERT_MIN_VERBAL: u32 = 5;

/// The member-data connector: after this many failures in a row it is degraded
/// (one alert); every failure defers the touches that needed it until its backoff ends.
pub const CONNECTOR_DEGRADED_AFTER: u32 = 5;
/// The wait after the `n`th failure in a row before the connector is asked again.
pub const CONNECTOR_BACKOFF: [SignedDuration; 5] = [
    SignedDuration::from_mins(1),
    SignedDuration::from_mins(2),
    SignedDuration::from_mins(5),
    SignedDuration::from_mins(15),
    SignedDuration::from_mins(30),
];
/// A healthy connector's success is written at most this often (the health's `last_success_at`).
pub const CONNECTOR_SUCCESS_RECORD_INTERVAL: SignedDuration = SignedDuration::from_hours(1);
/// One connector request: per-attempt timeout, attempts in all, the first backoff between
/// attempts (doubled after each) and the longest `retry-after` honoured.
pub const CONNECTOR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
pub const CONNECTOR_ATTEMPTS: u32 = 3;
pub const CONNECTOR_RETRY_BACKOFF: std::time::Duration = std::time::Duration::from_millis(250);
pub const CONNECTOR_MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(5);
/// How much of a failing answer's body an error quotes (the connector's, the model's).
pub const CONNECTOR_ERROR_EXCERPT_CHARS: usize = 200;
pub const MODEL_ERROR_EXCERPT_CHARS: usize = 300;

/// The backoff after `failures` consecutive failures (the last step repeats).
pub fn connector_backoff(failures: u32) -> SignedDuration {
    let i = (failures.max(1) as usize - 1).min(CONNECTOR_BACKOFF.len() - 1);
    CONNECTOR_BACKOFF[i]
}

/// Recurring templates spawned per tick at most; the rest wait a minute.
pub const RECURRING_PER_TICK: usize = 50;

/// Outcome attribution: how long a provisional outcome waits for its signal when
/// the task type names no verification window, and how many watched tasks one index page holds.
pub const PROVISIONAL_WINDOW_DAYS: u32 = 14;
pub const ATTRIBUTION_PAGE: usize = 200;
/// The activity feed: entries per page by default and at most.
pub const ACTIVITY_DEFAULT_LIMIT: usize = 50;
pub const ACTIVITY_MAX_LIMIT: usize = 200;

/// Task-creation flood limits: what one analysis run may create, what one
/// webhook event may create, what an account may get in one local day (the ramp may lower
/// it), and how many open tasks an account may hold before creation stops.
pub const MAX_TASKS_PER_RUN: usize = 25;
pub const MAX_TASKS_PER_WEBHOOK_EVENT: usize = 5;
pub const MAX_TASKS_PER_ACCOUNT_PER_DAY: u32 = 50;
pub const MAX_ACTIVE_TASKS_PER_ACCOUNT: u32 = 100;

/// Cross-task amplification: tasks the agent spawns on its own are always
/// reviewed, and an account (and each member) gets only so many of them a day.
pub const MAX_AGENT_TASKS_PER_ACCOUNT_PER_DAY: u32 = 10;
pub const MAX_AGENT_TASKS_PER_MEMBER_PER_DAY: u32 = 2;

/// How long the per-day creation counters are kept (TTL; only today's is ever read).
pub const CREATION_COUNTER_TTL: SignedDuration = SignedDuration::from_hours(24 * 3);

/// How long a parting note to a member who decided to leave may wait for its gates (the send
/// window, a cap) before the conversation closes without it.
pub const PARTING_NOTE_WAITS_AT_MOST: SignedDuration = SignedDuration::from_hours(24);

/// Escalation timeouts: an escalated task nobody looked at gets a reminder to
/// the owner after 48 hours and is cancelled after 7 days.
pub const ESCALATION_REMINDER_AFTER: SignedDuration = SignedDuration::from_hours(48);
pub const ESCALATION_TIMEOUT: SignedDuration = SignedDuration::from_hours(24 * 7);
/// The owner notification budget for those reminders: batchable, so at most this
/// many a day per account; the rest wait for the next local day (the timeout does not).
pub const ESCALATION_REMINDERS_PER_DAY: u32 = 5;
/// The rest of the owner notification budget: the
/// batchable notices mailed per local day, the spacing of digest mails inside the send
/// window, how long notices stay in the feed, and the feed's page sizes.
pub const OWNER_LATE_REPLY_NOTICES_PER_DAY: u32 = 10;
pub const OWNER_OPT_OUT_NOTICES_PER_DAY: u32 = 20;
pub const OWNER_ACTION_NOTICES_PER_DAY: u32 = 10;
/// Tasks entering the review queue that are named in digest mails per local day (spec §35.2:
/// five); the digest still says how many wait in all.
pub const OWNER_APPROVAL_NOTICES_PER_DAY: u32 = 5;
/// How many waiting tasks a digest counts before it says "more than".
pub const OWNER_DIGEST_COUNT_CAP: usize = 200;
pub const OWNER_DIGEST_EVERY: SignedDuration = SignedDuration::from_hours(4);
pub const OWNER_NOTICE_TTL: SignedDuration = SignedDuration::from_hours(24 * 90);
pub const OWNER_NOTICES_DEFAULT_LIMIT: usize = 50;
pub const OWNER_NOTICES_MAX_LIMIT: usize = 200;
/// Notices one tick takes out of the digest index at most (the rest wait a minute).
pub const OWNER_DIGEST_NOTICES_PER_TICK: usize = 200;

/// The risk scan, every 6 hours: who counts as dropping off, recently
/// cancelled, new, or a cold lead.
pub const ANALYSIS_PERIOD: SignedDuration = SignedDuration::from_hours(6);
/// An active member is at risk of churning when their last check-in is older than this, or
/// than twice their usual gap between check-ins if that is longer.
pub const CHURN_NO_CHECKIN: SignedDuration = SignedDuration::from_hours(24 * 14);
/// Calibration: the safe bounds an accepted calibration suggestion may move
/// an account's thresholds within. The no-check-in gap (in days) may only lengthen, from the
/// spec's 14 up to six weeks: a gym whose members take longer natural breaks is flagged later,
/// never earlier than the default.
pub const RISK_GAP_DAYS_MIN: u16 = 14;
pub const RISK_GAP_DAYS_MAX: u16 = 42;
/// Points added to every task type's auto-send confidence threshold for an account whose
/// high-confidence work the owner keeps correcting: only ever more caution, at most this much.
pub const CONFIDENCE_RAISE_MAX: u8 = 20;
/// One calibration step of the confidence threshold.
pub const CONFIDENCE_RAISE_STEP: u8 = 10;
/// Check-ins needed before a member's usual rhythm counts as known (fewer is sparse data).
pub const CHURN_PATTERN_CHECKINS: u32 = 10;
/// A member who cancelled within this window is a win-back candidate.
pub const WIN_BACK_WINDOW: SignedDuration = SignedDuration::from_hours(24 * 60);
/// A member who cancelled for their health hears nothing for this long; then a care-first
/// note, within [`WIN_BACK_WINDOW`] of that day.
pub const MEDICAL_QUIET: SignedDuration = SignedDuration::from_hours(24 * 30);
/// A member who joined within this window gets onboarding.
/// How long past an active enrollment's `paidUntil` without a renewal before the risk scan
/// infers payment trouble (PushPress reports no payments).
pub const PAID_UNTIL_GRACE: SignedDuration = SignedDuration::from_hours(24 * 3);
pub const ONBOARDING_WINDOW: SignedDuration = SignedDuration::from_hours(24 * 14);
/// A lead older than this without a booked trial gets a follow-up (younger ones get time).
pub const LEAD_FOLLOWUP_AFTER: SignedDuration = SignedDuration::from_hours(24 * 2);
/// …and a lead older than this is too cold to chase.
pub const LEAD_TOO_OLD: SignedDuration = SignedDuration::from_hours(24 * 60);
/// Members the scan reads per store page.
pub const ANALYSIS_PAGE: usize = 500;
/// How long the scan remembers that it acted on a member's episode (a lapse, a
/// cancellation, a join), so a closed task is not opened again for the same one.
pub const ANALYSIS_EPISODE_TTL: SignedDuration = SignedDuration::from_hours(24 * 120);

/// Deliverability: an account's member mail pauses at once when more than
/// [`BOUNCE_PAUSE_RATE`] of its last [`BOUNCE_WINDOW_SENDS`] sends bounced (hard bounces, and
/// addresses that soft-bounced [`SOFT_BOUNCES_AS_HARD`] times); with fewer sends than the
/// window, the rate is still taken over the whole window, so a young account pauses on the
/// same count of bounces (6) and never on one unlucky address.
pub const BOUNCE_WINDOW_SENDS: u64 = 50;
pub const BOUNCE_PAUSE_RATE: f64 = 0.10;
/// Soft bounces (by distinct mails) after which an address counts as hard-bounced.
pub const SOFT_BOUNCES_AS_HARD: u32 = 3;
/// A pending per-gym sending domain is asked about at most this often (settings reads, the
/// hourly run).
pub const SENDING_DOMAIN_RECHECK: SignedDuration = SignedDuration::from_mins(10);

/// How long an unproven claim on a sending domain holds it against other accounts: a week to
/// publish the ownership record; after that another account naming the domain takes it.
pub const UNPROVEN_CLAIM_HOLD: SignedDuration = SignedDuration::from_hours(7 * 24);

/// How often a sending domain in use is checked again (its claim and its ownership record):
/// an account whose record is gone stops sending from the domain within this.
pub const DOMAIN_OWNERSHIP_RECHECK: SignedDuration = SignedDuration::from_hours(24);

/// The check-in counts at which a member is congratulated and asked for a review
/// (`milestone_review`, spec §12, §20.4).
pub const CHECKIN_MILESTONES: [u32; 4] = [10, 25, 50, 100];
/// A milestone is congratulated only for a check-in this recent and the member's latest: a
/// late or replayed one (weeks old) would praise a member who has since stopped coming.
pub const MILESTONE_CHECKIN_FRESH_HOURS: i64 = 48;

/// How soon after a member joined the first check-in the gym holds must be for their history
/// since joining to count as whole (an import that reached back to their start): then a count
/// of their visits or months said to them is true.
pub const WHOLE_HISTORY_SLACK_DAYS: i64 = 14;

/// How long a first touch waits for a member's details (their `member.created`) when the event
/// that opened the task overtook them, and how often it looks again meanwhile.
pub const MEMBER_DETAILS_WAIT: SignedDuration = SignedDuration::from_hours(1);
pub const MEMBER_DETAILS_RECHECK: SignedDuration = SignedDuration::from_mins(10);

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn the_member_window_rolls_over_seven_days() {
        let now = at("2026-11-10T12:00:00Z");
        let ledger = BTreeMap::from([
            ("a".to_owned(), at("2026-11-03T11:59:00Z")),
            ("b".to_owned(), at("2026-11-03T12:01:00Z")),
            ("c".to_owned(), at("2026-11-09T12:00:00Z")),
        ]);
        assert_eq!(sends_in_window(&ledger, now), 2);
        assert_eq!(prune_ledger(&ledger, now).len(), 2);
    }

    #[test]
    fn retries_back_off_then_stop() {
        assert_eq!(retry_delay(1), Some(SignedDuration::from_mins(1)));
        assert_eq!(retry_delay(3), Some(SignedDuration::from_hours(1)));
        assert_eq!(retry_delay(4), None);
        assert_eq!(retry_delay(0), None);
    }
}
