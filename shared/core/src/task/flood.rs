//! Creation limits: flood protection and cross-task amplification.
//!
//! Two kinds of limit, enforced in the one creation path ([`crate::engine::Engine::create_task`]):
//! - *per invocation* — an analysis run, one webhook event — counted in process by a
//!   [`Burst`] the caller hands to every creation of that invocation;
//! - *per account* — tasks created per local day, open tasks, agent-spawned tasks per day
//!   and per member — counted by the store in the same transaction that writes the task and
//!   its active guard ([`CreationQuota`]), so concurrent creators cannot get past them.
//!
//! A refused creation changes nothing and comes back as a [`Refusal`] naming the limit.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use jiff::Timestamp;
use jiff::civil::Date;
use serde::Serialize;

use crate::kernel::error::Conflict;
use crate::kernel::ids::MemberId;
use crate::kernel::limits;
use crate::task::TriggerType;
use crate::task::commit::TaskCommit;

/// Which creation limit refused a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Tasks one analysis run may create.
    PerRun,
    /// Tasks one webhook event may create.
    PerWebhookEvent,
    /// Tasks an account may get in one local day (lower during the onboarding ramp).
    DailyTasks,
    /// Open (non-terminal) tasks an account may hold.
    ActiveTasks,
    /// Agent-spawned tasks an account may get in one local day.
    AgentTasksPerDay,
    /// Agent-spawned tasks about one member in one local day.
    AgentTasksPerMember,
}

impl Limit {
    /// The reason code logged and returned.
    pub fn reason(self) -> &'static str {
        match self {
            Limit::PerRun => "flood_limit_per_run",
            Limit::PerWebhookEvent => "flood_limit_per_webhook_event",
            Limit::DailyTasks => "flood_limit_daily_tasks",
            Limit::ActiveTasks => "flood_limit_active_tasks",
            Limit::AgentTasksPerDay => "amplification_limit_agent_tasks_per_day",
            Limit::AgentTasksPerMember => "amplification_limit_agent_tasks_per_member",
        }
    }

    /// The store conflict this limit shows up as, and back.
    pub fn from_conflict(c: Conflict) -> Option<Limit> {
        match c {
            Conflict::DailyTasks => Some(Limit::DailyTasks),
            Conflict::ActiveTasks => Some(Limit::ActiveTasks),
            Conflict::AgentTasks => Some(Limit::AgentTasksPerDay),
            Conflict::MemberAgentTasks => Some(Limit::AgentTasksPerMember),
            _ => None,
        }
    }
}

/// A creation refused by a limit: which one, and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub limit: Limit,
    pub max: u32,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = self.max;
        match self.limit {
            Limit::PerRun => write!(f, "an analysis run creates at most {max} tasks; the rest wait for the next run"),
            Limit::PerWebhookEvent => write!(f, "one webhook event creates at most {max} tasks"),
            Limit::DailyTasks => write!(
                f,
                "the account reached its limit of {max} new tasks today (its local day); try again tomorrow"
            ),
            Limit::ActiveTasks => write!(
                f,
                "the account has {max} open tasks, the most it may hold; close some before creating more"
            ),
            Limit::AgentTasksPerDay => write!(f, "the agent may spawn at most {max} tasks a day on this account"),
            Limit::AgentTasksPerMember => write!(f, "the agent may spawn at most {max} tasks a day about one member"),
        }
    }
}

/// What the store checks and counts when it writes a new task, atomically with it. `None`
/// fields are not limited (the open-task count is kept whatever the quota).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreationQuota {
    /// The account's local date, which keys the per-day counters.
    pub date: Option<Date>,
    /// When that day's counters may be forgotten (their TTL).
    pub counters_expire_at: Timestamp,
    pub daily_max: Option<u32>,
    pub active_max: Option<u32>,
    /// For agent-spawned tasks: the per-day and per-member-per-day caps.
    pub agent: Option<AgentQuota>,
    /// What the task is the one answer to, claimed in the creation's own transaction (a
    /// finding's episode — a member's risk episode, a lead's arrival — or an owner trigger's
    /// firing for a member): a creation killed half-way leaves neither the claim nor the task,
    /// and a second finder of the same thing writes nothing.
    pub once: Option<OnceClaim>,
}

/// A once-only claim written with a task's creation or commit, in its transaction: the
/// idempotency record `(source, key)`
/// (as [`crate::ports::Idempotency::claim_webhook`] keeps them), unless one is held and
/// unexpired at `now` — then [`crate::kernel::error::Conflict::Claimed`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnceClaim {
    pub source: String,
    pub key: String,
    pub now: Timestamp,
    pub expires_at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentQuota {
    pub member: MemberId,
    pub daily_max: u32,
    pub member_max: u32,
}

impl CreationQuota {
    /// Only the open-task count is kept; nothing is limited (imports, fixtures).
    pub fn unlimited() -> Self {
        Self {
            date: None,
            counters_expire_at: Timestamp::UNIX_EPOCH,
            daily_max: None,
            active_max: None,
            agent: None,
            once: None,
        }
    }

    /// The limits of spec §7.9 and §7.13 for a task created on `date` (the account's local
    /// day) by `trigger`; `ramp_daily` is the onboarding ramp's lower daily cap, if any.
    pub fn for_creation(date: Date, now: Timestamp, trigger: TriggerType, member: &MemberId, ramp_daily: Option<u32>) -> Self {
        let daily = ramp_daily.map_or(limits::MAX_TASKS_PER_ACCOUNT_PER_DAY, |r| {
            r.min(limits::MAX_TASKS_PER_ACCOUNT_PER_DAY)
        });
        Self {
            date: Some(date),
            counters_expire_at: now + limits::CREATION_COUNTER_TTL,
            daily_max: Some(daily),
            active_max: Some(limits::MAX_ACTIVE_TASKS_PER_ACCOUNT),
            agent: is_agent_spawned(trigger).then(|| AgentQuota {
                member: member.clone(),
                daily_max: limits::MAX_AGENT_TASKS_PER_ACCOUNT_PER_DAY,
                member_max: limits::MAX_AGENT_TASKS_PER_MEMBER_PER_DAY,
            }),
            once: None,
        }
    }

    /// The refusal a store conflict stands for, with the limit's value.
    pub fn refusal(&self, conflict: Conflict) -> Option<Refusal> {
        let limit = Limit::from_conflict(conflict)?;
        let max = match limit {
            Limit::DailyTasks => self.daily_max,
            Limit::ActiveTasks => self.active_max,
            Limit::AgentTasksPerDay => self.agent.as_ref().map(|a| a.daily_max),
            Limit::AgentTasksPerMember => self.agent.as_ref().map(|a| a.member_max),
            Limit::PerRun | Limit::PerWebhookEvent => None,
        };
        Some(Refusal {
            limit,
            max: max.unwrap_or(0),
        })
    }
}

/// Tasks the agent made on its own (not the owner, a webhook, the analysis scan or a
/// template the owner set up): always reviewed, and capped.
pub fn is_agent_spawned(trigger: TriggerType) -> bool {
    matches!(trigger, TriggerType::AgentSpawned)
}

/// The account's creation counters as they stand (for callers that plan a batch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CreationCounts {
    /// Tasks created on the date asked for.
    pub created: u32,
    /// Agent-spawned tasks created on that date.
    pub agent_created: u32,
    /// Open (non-terminal) tasks now.
    pub open: u32,
}

/// Whether a commit closes its task — the one moment the open-task count goes down. The
/// version condition makes it happen once per task.
pub fn closes_task(commit: &TaskCommit) -> bool {
    commit
        .log
        .iter()
        .any(|l| l.to_status.is_terminal() && l.from_status.is_some_and(|from| !from.is_terminal()))
}

/// Whether `commit` brings a closed task back to work (the owner's reopen, spec §37.6): it
/// holds its member and type's guard again and counts among the open tasks.
pub fn reopens_task(commit: &TaskCommit) -> bool {
    commit
        .log
        .iter()
        .any(|l| !l.to_status.is_terminal() && l.from_status.is_some_and(crate::task::TaskStatus::is_terminal))
}

/// A per-invocation allowance: an analysis run or one webhook event. Shared by reference
/// across the creations of that invocation; a slot is taken only by a task actually made.
#[derive(Debug)]
pub struct Burst {
    limit: Limit,
    max: usize,
    used: AtomicUsize,
}

impl Burst {
    /// An analysis run's allowance.
    pub fn analysis_run() -> Self {
        Self::new(Limit::PerRun, limits::MAX_TASKS_PER_RUN)
    }

    /// One webhook event's allowance.
    pub fn webhook_event() -> Self {
        Self::new(Limit::PerWebhookEvent, limits::MAX_TASKS_PER_WEBHOOK_EVENT)
    }

    pub fn new(limit: Limit, max: usize) -> Self {
        Self {
            limit,
            max,
            used: AtomicUsize::new(0),
        }
    }

    /// Take a slot, or the refusal if none is left. Give it back with [`Burst::release`] if
    /// the task is not made after all.
    pub fn take(&self) -> Result<(), Refusal> {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| (used < self.max).then_some(used + 1))
            .map(|_| ())
            .map_err(|_| Refusal {
                limit: self.limit,
                max: u32::try_from(self.max).unwrap_or(u32::MAX),
            })
    }

    pub fn release(&self) {
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| used.checked_sub(1));
    }

    pub fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }

    pub fn remaining(&self) -> usize {
        self.max.saturating_sub(self.used())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_hands_out_exactly_its_slots_and_takes_back_released_ones() {
        let burst = Burst::new(Limit::PerRun, 2);
        assert!(burst.take().is_ok() && burst.take().is_ok());
        assert_eq!(
            burst.take(),
            Err(Refusal {
                limit: Limit::PerRun,
                max: 2
            })
        );
        burst.release();
        assert!(burst.take().is_ok());
        assert_eq!(burst.remaining(), 0);
    }

    #[test]
    fn only_agent_spawned_tasks_carry_the_amplification_caps() {
        let date: Date = "2026-11-02".parse().expect("date");
        let member = MemberId::parse("m_1").expect("member");
        let now: Timestamp = "2026-11-02T14:00:00Z".parse().expect("ts");
        let owner = CreationQuota::for_creation(date, now, TriggerType::Manual, &member, None);
        assert_eq!(owner.agent, None);
        assert_eq!(owner.daily_max, Some(limits::MAX_TASKS_PER_ACCOUNT_PER_DAY));
        let agent = CreationQuota::for_creation(date, now, TriggerType::AgentSpawned, &member, Some(10));
        assert_eq!(agent.daily_max, Some(10), "the ramp lowers the daily cap");
        assert_eq!(agent.agent.map(|a| a.member_max), Some(limits::MAX_AGENT_TASKS_PER_MEMBER_PER_DAY));
    }
}
