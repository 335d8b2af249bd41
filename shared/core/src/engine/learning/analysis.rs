//! The risk scan: for each account, read the members' facts,
//! judge each ([`crate::rails::risk::assess`]), and open the tasks that are needed — through the
//! one creation path, highest priority first, within the flood limits.
//!
//! Before reading a single member the scan asks the account's creation counters whether it
//! may create anything today; a run then stops at its own allowance or at the first account
//! limit. Each finding is about an episode (a lapse, a cancellation, a join), claimed once
//! with an idempotency record before its task is made, so a task that closes is not opened
//! again for the same episode — and a claim whose task was refused is given back, so the
//! finding waits for the next run instead of being lost.

use std::collections::BTreeMap;

use serde::Serialize;

use super::tasks::{Created, NewTask};
use super::{Engine, boxed};
use crate::kernel::ids::{AccountId, MemberId};
use crate::kernel::limits::{self, ANALYSIS_EPISODE_TTL, ANALYSIS_PAGE, MAX_ACTIVE_TASKS_PER_ACCOUNT, MAX_TASKS_PER_ACCOUNT_PER_DAY};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::owner::trigger::OpenloopEvent;
use crate::rails::autonomy;
use crate::rails::priority_rules::PriorityInput;
use crate::rails::risk::{self, Finding};
use crate::task::TriggerType;
use crate::task::error::EngineError;
use crate::task::flood::{Burst, Limit};
use crate::task::task_type::Priority;

/// The idempotency-record source the scan claims its episodes under.
const EPISODE_SOURCE: &str = "analysis";

/// A creation's claim of the finding's episode `key` at `now` (see
/// [`crate::task::flood::OnceClaim`]), remembered as long as a finding's episode is.
pub(crate) fn episode_claim(key: String, now: jiff::Timestamp) -> crate::task::flood::OnceClaim {
    crate::task::flood::OnceClaim {
        source: EPISODE_SOURCE.into(),
        key,
        now,
        expires_at: now + ANALYSIS_EPISODE_TTL,
    }
}

/// The key the scan claims a finding's episode under; a webhook that acts on the same episode
/// claims it too ([`Engine::claim_episode`]), so neither acts twice.
pub(crate) fn episode_key(account: AccountId, member: &MemberId, task_type: &str, episode: &str) -> String {
    format!("{account}/{member}/{task_type}/{episode}")
}

/// What one scan of one account did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AccountAnalysis {
    pub account_id: Option<AccountId>,
    pub members_scanned: usize,
    pub findings: usize,
    pub created: usize,
    /// Findings whose member already has an open task of the type.
    pub already_open: usize,
    /// Findings whose episode an earlier run acted on.
    pub already_handled: usize,
    /// Findings whose member is on the call list: a task of theirs closed onto it with
    /// nothing sent, and the person calling has them (`engine/day/todos/call_list.rs`).
    pub on_call_list: usize,
    /// Findings whose member is suppressed: nothing opened, no AI call spent (the episode
    /// stays claimed).
    pub suppressed: usize,
    /// Findings not looked at in this run because the day's review capacity of the
    /// onboarding ramp is used ([`crate::rails::autonomy::review_capacity`]): they wait for a
    /// later day, unclaimed and undrafted.
    pub waiting_for_capacity: usize,
    /// Creations refused, by limit reason.
    pub refused: BTreeMap<&'static str, usize>,
    /// Why the account was not scanned, or why the run stopped early.
    pub stopped_by: Option<String>,
    /// Created per task type.
    pub created_by_type: BTreeMap<String, usize>,
}

/// What a scan of every account did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AnalysisReport {
    pub paused: bool,
    pub accounts: Vec<AccountAnalysis>,
    pub created: usize,
    pub failed_accounts: usize,
}

impl Engine {
    /// Whether a finding's episode `key` was acted on already, by the scan or by a webhook
    /// acting on the same episode. Only a read: the claim is written with the task
    /// ([`Self::create_for_episode`]), so a creation that dies half-way claims nothing.
    pub(crate) async fn episode_claimed(&self, key: &str) -> Result<bool, EngineError> {
        Ok(self.store.is_claimed(EPISODE_SOURCE, key, self.clock.now()).await?)
    }

    pub(crate) async fn release_episode(&self, key: &str) -> Result<(), EngineError> {
        Ok(self.store.release_webhook(EPISODE_SOURCE, key).await?)
    }

    /// The scheduled scan over every account (a failing account does not stop the others).
    pub async fn analyze(&self) -> Result<AnalysisReport, EngineError> {
        boxed(async move {
            let mut report = AnalysisReport::default();
            if self.store.system_config().await?.global_pause {
                report.paused = true;
                tracing::warn!("global pause active; no risk scan");
                return Ok(report);
            }
            for account in self.accounts_at_work().await? {
                match self.analyze_account(&account).await {
                    Ok(done) => {
                        report.created += done.created;
                        report.accounts.push(done);
                    }
                    Err(e) => {
                        tracing::error!(account = %account.id, error = %e, "risk scan failed for the account");
                        report.failed_accounts += 1;
                    }
                }
            }
            Ok(report)
        })
        .await
    }

    /// Scan one account and open the tasks it needs, within the flood limits.
    pub async fn analyze_account(&self, account: &Account) -> Result<AccountAnalysis, EngineError> {
        let mut done = AccountAnalysis {
            account_id: Some(account.id),
            ..AccountAnalysis::default()
        };
        if account.paused {
            done.stopped_by = Some("account_paused".into());
            return Ok(done);
        }
        let now = self.clock.now();
        let date = limits::local_date(now, &account.settings.time_zone());
        let counts = self.store.creation_counts(account.id, date).await?;
        // Nothing could be created: do not read the members at all.
        let full = if counts.open >= MAX_ACTIVE_TASKS_PER_ACCOUNT {
            Some(Limit::ActiveTasks)
        } else if counts.created >= MAX_TASKS_PER_ACCOUNT_PER_DAY {
            Some(Limit::DailyTasks)
        } else {
            None
        };
        if let Some(limit) = full {
            tracing::warn!(account = %account.id, reason = limit.reason(), ?counts, "risk scan skipped: flood protection");
            done.stopped_by = Some(limit.reason().into());
            return Ok(done);
        }

        let mut findings: Vec<(MemberId, Finding, Priority, f64)> = Vec::new();
        // The built-in rows the owner switched off open nothing (`rules/triggers.toml`); the
        // owner's rows on `no_checkin_days` take the members a week or more without a check-in.
        let book = self.store.trigger_book(account.id).await?;
        let gaps_wanted = book.custom.iter().any(|t| t.enabled && t.event == "no_checkin_days");
        let mut gaps: Vec<(MemberFacts, OpenloopEvent)> = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = self.store.list_member_facts(account.id, ANALYSIS_PAGE, cursor).await?;
            done.members_scanned += page.len();
            for facts in page {
                if gaps_wanted && let Some(gap) = crate::owner::trigger::no_checkin_event(&facts, now) {
                    gaps.push((facts.clone(), gap));
                }
                if let Some(mut finding) = risk::assess(&facts, now, account.settings.calibration.churn_gap()) {
                    // The agent is told a count only where the gym's data holds the whole of it
                    // (as a template is: `MemberVars::from_facts`), so it never writes one.
                    if !facts.history_is_whole(account.created_at) {
                        risk::forget_partial_counts(&mut finding.context);
                    }
                    let priority = self
                        .config
                        .priority_rules
                        .prioritise(&PriorityInput {
                            task_type: finding.task_type,
                            trigger: Some(TriggerType::CronAnalysis),
                            goal: &finding.goal,
                            confidence: finding.confidence,
                            monthly_value: facts.monthly_value,
                            tenure_days: finding.gate.tenure_days,
                            member_status: facts.status,
                        })
                        .priority;
                    // What the member is worth a month: their plan's price where the owner
                    // gave one (an imported gym's members), else their own value, else the average.
                    let value = account.settings.price(facts.membership.plan_id(), facts.monthly_value).monthly;
                    findings.push((facts.member_id.clone(), finding, priority, value));
                }
            }
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        done.findings = findings.len();
        // Most urgent first; then the more valuable member (a new gym's day of review goes to
        // the members worth the most: spec §26), then the surer finding; then by id, so a run
        // is reproducible.
        findings.sort_by(|a, b| {
            a.2.cmp(&b.2)
                .then(b.3.total_cmp(&a.3))
                .then(b.1.confidence.cmp(&a.1.confidence))
                .then_with(|| a.0.as_str().cmp(b.0.as_str()))
        });

        // A member a person is to call is theirs until the to-do is done; an expired review
        // item that sent nothing gave its episode back, so it never counts as handling them.
        let on_call_list = if findings.is_empty() {
            Default::default()
        } else {
            self.members_on_call_list(account.id).await?
        };
        // An owner away proposes fewer a run.
        let presence = crate::owner::presence::Presence::of(account.last_seen_at, now);
        let burst = Burst::new(Limit::PerRun, presence.scan_allowance(limits::MAX_TASKS_PER_RUN));
        for (member, finding, _, _) in findings {
            let row = crate::owner::trigger::scan_row(finding.task_type);
            if row.is_some_and(|row| !book.builtin_on(row)) {
                continue;
            }
            if burst.remaining() == 0 {
                done.stopped_by = Some(Limit::PerRun.reason().into());
                break;
            }
            // A day's review capacity in the onboarding ramp: the rest waits for later days,
            // unclaimed, without a draft spent on it.
            let agent = crate::task::task_type::definition(finding.task_type).agent;
            let created_today = counts.created.saturating_add(u32::try_from(done.created).unwrap_or(u32::MAX));
            if autonomy::review_capacity(&account.settings, agent, now, created_today) == Some(0) {
                done.waiting_for_capacity += 1;
                done.stopped_by.get_or_insert_with(|| "review_capacity".into());
                continue;
            }
            if on_call_list.contains(&member) {
                done.on_call_list += 1;
                continue;
            }
            let episode = episode_key(account.id, &member, finding.task_type, &finding.episode);
            if self.episode_claimed(&episode).await? {
                done.already_handled += 1;
                continue;
            }
            let task_type = finding.task_type;
            let input = NewTask {
                task_type: task_type.into(),
                member_id: member,
                goal: finding.goal,
                confidence: Some(finding.confidence),
                draft: None,
                trigger_type: TriggerType::CronAnalysis,
                trigger_event_id: Some(episode.clone()),
                gate: finding.gate,
                context: finding.context,
            };
            match self.create_for_episode(account, input, &burst, &episode).await {
                // Claimed by another finder since it was read.
                Ok(None) => done.already_handled += 1,
                Ok(Some(Created::New(task))) => {
                    if let Some(row) = row {
                        self.builtin_fired(account.id, row, &task.member.id, &episode, task.id).await;
                    }
                    done.created += 1;
                    *done.created_by_type.entry(task_type.to_owned()).or_default() += 1;
                }
                Ok(Some(Created::Existing(_))) => done.already_open += 1,
                Err(EngineError::MemberSuppressed { .. }) => done.suppressed += 1,
                Err(e) => {
                    // Not acted on (nothing was claimed): the finding waits for a later run.
                    let EngineError::Limited(refusal) = e else {
                        return Err(e);
                    };
                    *done.refused.entry(refusal.limit.reason()).or_default() += 1;
                    if matches!(refusal.limit, Limit::PerRun | Limit::DailyTasks | Limit::ActiveTasks) {
                        done.stopped_by = Some(refusal.limit.reason().into());
                        break;
                    }
                }
            }
        }
        // The owner's rows on `no_checkin_days`, within what the run has left.
        for (facts, gap) in gaps {
            if burst.remaining() == 0 {
                break;
            }
            let opened = self.fire_openloop_event(account, &book, &facts, &gap, &burst).await?;
            done.created += opened.len();
        }
        tracing::info!(
            account = %account.id,
            scanned = done.members_scanned,
            findings = done.findings,
            created = done.created,
            stopped_by = done.stopped_by.as_deref().unwrap_or("-"),
            "risk scan"
        );
        Ok(done)
    }
}
