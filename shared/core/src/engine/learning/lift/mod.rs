//! Honest lift: the holdout draw at task creation, the owner's
//! reshuffle of the groups, and the lift of the tasks assigned in a window.

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde::Serialize;

use super::Engine;
use super::tasks::{CreateOptions, NewTask};
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::AccountId;
use crate::kernel::limits;
use crate::learning::lift::{self, TypeLift};
use crate::owner::account::Account;
use crate::owner::holdout;
use crate::task::controls::TaskMode;
use crate::task::error::EngineError;
use crate::task::holdout::Holdout;
use crate::task::task_type;

/// The longest window the lift reads at once, in days.
pub const MAX_LIFT_DAYS: i64 = 366;
/// The window when the owner names none: the last 180 days (the longest conversion windows,
/// a win-back's and an onboarding's, are 120 days: a shorter default would show them nothing).
pub const DEFAULT_LIFT_DAYS: i64 = 180;

/// The draw for a task being created, if it goes through one: a plain task Openloop opens
/// itself (not a subtask, a batch, a plan, an automation or the agent's planning parent).
pub(crate) fn holdout_for(account: &Account, input: &NewTask, options: &CreateOptions, task_type: &str) -> Option<Holdout> {
    let plain = options.parent.is_none()
        && options.batch_of.is_none()
        && options.mode == TaskMode::Live
        && !options.agent_planning
        && options.actions.is_empty();
    plain
        .then(|| holdout::draw(account, &input.member_id, task_type, input.trigger_type))
        .flatten()
}

/// `GET /api/v1/lift`: the window read, the holdout in force, and the lift.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LiftReport {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub from: Date,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub to: Date,
    pub holdout_percent: u8,
    pub groups: Vec<TypeLift>,
    pub revenue_after_outreach: f64,
    pub revenue_caused: f64,
}

/// A window of local days, `from` to `to` inclusive.
fn window(from: Option<&str>, to: Option<&str>, today: Date) -> Result<(Date, Date), InvalidInput> {
    let date = crate::kernel::calendar::parse_day;
    let to = to.map(|raw| date("to", raw)).transpose()?.unwrap_or(today);
    let from = match from {
        Some(raw) => date("from", raw)?,
        None => to.checked_sub((DEFAULT_LIFT_DAYS - 1).days()).unwrap_or(to),
    };
    if from > to {
        return Err(InvalidInput::new(
            "invalid_range",
            format!("from ({from}) must not be after to ({to})"),
        ));
    }
    let days = i64::from(to.since(from).map_or(i32::MAX, |span| span.get_days())) + 1;
    if days > MAX_LIFT_DAYS {
        return Err(InvalidInput::new(
            "invalid_range",
            format!("at most {MAX_LIFT_DAYS} days at a time ({from} to {to} is {days})"),
        ));
    }
    Ok((from, to))
}

impl Engine {
    /// The lift of the tasks assigned between `from` and `to` (local dates, inclusive; by
    /// default the last 180 days), by intent to treat, per task type or only `task_type`.
    /// Reads the account and the tallies of the open tasks and of those closed since `from`:
    /// its cost grows with those, never with the tasks stored.
    pub async fn lift(
        &self,
        account: AccountId,
        from: Option<&str>,
        to: Option<&str>,
        task_type: Option<&str>,
    ) -> Result<LiftReport, EngineError> {
        let account = self.account(account).await?;
        if let Some(t) = task_type
            && task_type::lookup(t).is_none()
        {
            return Err(InvalidInput::new(
                "invalid_task_type",
                format!("{:?} is not a task type", t.chars().take(64).collect::<String>()),
            )
            .into());
        }
        let tz = account.settings.time_zone();
        let (from, to) = window(from, to, limits::local_date(self.clock.now(), &tz))?;
        let start = |day: Date| day.to_zoned(tz.clone()).map(|z| z.timestamp()).unwrap_or(Timestamp::MAX);
        let until = to.tomorrow().map_or(Timestamp::MAX, start);
        // Every task assigned in the window is open now or closed since it began.
        let tallies = self.store.tallies(account.id, start(from)).await?;
        let now = self.clock.now();
        let lift = lift::lift(&tallies, start(from)..until, task_type, account.settings.holdout_percent, now);
        let mut groups = with_pooled(lift.groups, &account, task_type);
        for group in &mut groups {
            // The last assignment day whose members' window has passed by now.
            let judged = limits::local_date(now - SignedDuration::from_hours(24 * group.window_days), &tz)
                .yesterday()
                .ok()
                .map(|day| day.min(to))
                .filter(|day| *day >= from);
            group.cohort = lift::Cohort {
                from: judged.map(|_| from),
                to: judged,
            };
        }
        Ok(LiftReport {
            from,
            to,
            holdout_percent: account.settings.holdout_percent,
            groups,
            revenue_after_outreach: lift.revenue_after_outreach,
            revenue_caused: lift.revenue_caused,
        })
    }

    /// The owner draws the holdout groups again (a new salt): at most once every 30 days,
    /// else `reshuffle_too_soon` and nothing changes. Tasks already open keep their group.
    pub async fn reshuffle_holdout(&self, account: AccountId) -> Result<Account, EngineError> {
        let now = self.clock.now();
        let account = self
            .change_account(account, |account| {
                account.holdout_draw = account.holdout_draw.reshuffled(account.created_at, now)?;
                Ok(true)
            })
            .await?;
        tracing::info!(account = %account.id, generation = account.holdout_draw.generation, "holdout groups drawn again");
        Ok(account)
    }
}

/// Each type's lift with the lift across gyms like this one beside it; a type the gym has no
/// closed tasks of yet is listed for its pooled figure alone (a small gym's first answer).
fn with_pooled(mut groups: Vec<TypeLift>, account: &Account, only: Option<&str>) -> Vec<TypeLift> {
    for pooled in &account.pooled_lift {
        if only.is_some_and(|t| t != pooled.task_type) {
            continue;
        }
        let at = match groups.iter().position(|g| g.task_type == pooled.task_type) {
            Some(at) => at,
            None => {
                let empty = lift::lift(
                    &[],
                    Timestamp::UNIX_EPOCH..Timestamp::UNIX_EPOCH,
                    Some(&pooled.task_type),
                    account.settings.holdout_percent,
                    Timestamp::UNIX_EPOCH,
                );
                groups.extend(empty.groups);
                groups.len() - 1
            }
        };
        groups[at].pooled = Some(pooled.clone());
    }
    groups.sort_by(|a, b| a.task_type.cmp(&b.task_type));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_local_days_within_a_year() {
        let today: Date = "2026-11-27".parse().unwrap_or_else(|e| panic!("{e}"));
        let (from, to) = window(None, None, today).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((from.to_string(), to), ("2026-06-01".to_owned(), today));
        let code = |from, to| window(from, to, today).map_err(|e| e.code);
        assert_eq!(code(Some("2026-11-2"), None), Err("invalid_date".into()));
        assert_eq!(code(Some("2026-11-20"), Some("2026-11-19")), Err("invalid_range".into()));
        assert_eq!(code(Some("2025-01-01"), Some("2026-11-19")), Err("invalid_range".into()));
        assert!(code(Some("2025-11-27"), Some("2026-11-27")).is_ok(), "366 days");
    }
}
