//! The monthly cross-business evaluation: one month's cross-tenant records
//! read from their one partition (bounded like the operators' aggregate), searched for
//! patterns ([`crate::learning::network`]); each pattern is offered once to every account it
//! is about (its business type, or all for a system-wide one) as a memory suggestion, and the
//! accounts whose records it rests on are credited with it.
//!
//! Contributors are recognised by recomputing each account's pseudonym from its own secret:
//! the records never name an account. An account whose owner turned `share_learning` off
//! contributes nothing — its records written before it opted out are left out of the month —
//! and is credited with nothing.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Engine;
use super::lift::DEFAULT_LIFT_DAYS;
use crate::kernel::ids::new_ulid;
use crate::kernel::limits::{LEARNING_AGGREGATE_MAX_RECORDS, LEARNING_PAGE_SIZE, MAX_CREDITED_PATTERNS};
use crate::learning::interaction::{business_type_tag, contributor_pseudonym};
use crate::learning::network::{self, Pattern};
use crate::learning::pooled::GymLift;
use crate::learning::suggestion::{ProposedChange, Strength, Suggestion, SuggestionDraft, SuggestionKind};
use crate::owner::account::Account;
use crate::owner::pooled_lift::PooledLift;
use crate::task::error::EngineError;

/// What a monthly run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NetworkReport {
    pub month: String,
    pub records: usize,
    /// Records left out: their account does not share its learning.
    pub withheld: usize,
    pub patterns: usize,
    /// Accounts credited with at least one pattern.
    pub credited: usize,
    /// Suggestions made (each pattern once per account it is about).
    pub suggested: usize,
    /// Pooled lifts (business type × task type) with enough gyms behind them.
    pub pooled_lifts: usize,
}

fn pseudonym(account: &Account) -> String {
    contributor_pseudonym(account.stable_key().expose().as_bytes())
}

fn suggestion_of(pattern: &Pattern) -> SuggestionDraft {
    SuggestionDraft {
        kind: SuggestionKind::Memory,
        title: pattern.title.clone(),
        body: pattern.body.clone(),
        evidence: pattern.evidence.clone(),
        // Only surfaced with enough businesses behind it (spec 003: strong, 3+ accounts).
        strength: Strength::Strong,
        confidence: 70,
        fingerprint: format!("cross_business:{}", pattern.id),
        change: ProposedChange::Memory {
            content: pattern.memory.clone(),
            category: Some("pattern".into()),
        },
    }
}

impl Engine {
    /// The cross-business evaluation of `month` (`YYYY-MM`, UTC).
    pub async fn evaluate_network(&self, month: &str) -> Result<NetworkReport, EngineError> {
        let mut report = NetworkReport {
            month: month.to_owned(),
            ..NetworkReport::default()
        };
        let accounts = self.accounts_at_work().await?;
        let withheld: BTreeSet<String> = accounts.iter().filter(|a| !a.settings.share_learning).map(pseudonym).collect();
        let mut records = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = self.store.shared_outcomes(month, LEARNING_PAGE_SIZE, cursor).await?;
            for record in page {
                if record.contributor.as_ref().is_some_and(|c| withheld.contains(c)) {
                    report.withheld += 1;
                } else {
                    records.push(record);
                }
            }
            match next {
                Some(next) if records.len() + report.withheld < LEARNING_AGGREGATE_MAX_RECORDS => cursor = Some(next),
                Some(_) => {
                    tracing::warn!(month, "the monthly evaluation stopped at its bound of records");
                    break;
                }
                None => break,
            }
        }
        report.records = records.len();
        let patterns = network::patterns(month, &records);
        report.patterns = patterns.len();
        let now = self.clock.now();
        let pooled = self.pooled_lifts(month, &accounts, now).await?;
        report.pooled_lifts = pooled.len();
        for account in accounts {
            let helped: Vec<&Pattern> = if account.settings.share_learning {
                let me = pseudonym(&account);
                patterns.iter().filter(|p| p.contributors.contains(&me)).collect()
            } else {
                Vec::new()
            };
            if !helped.is_empty() {
                report.credited += 1;
                self.credit(&account, &helped).await?;
            }
            let tag = account.settings.profile.business_type.as_deref().map(business_type_tag);
            self.keep_pooled_lift(&account, tag, &pooled).await?;
            for pattern in patterns
                .iter()
                .filter(|p| p.business_type.is_none() || p.business_type.as_deref() == tag)
            {
                let suggestion = Suggestion::new(account.id, suggestion_of(pattern), "cross_business", new_ulid(now), now);
                if self.store.create_suggestion(&suggestion).await? {
                    report.suggested += 1;
                }
            }
        }
        tracing::info!(
            month = %report.month,
            records = report.records,
            withheld = report.withheld,
            patterns = report.patterns,
            credited = report.credited,
            pooled_lifts = report.pooled_lifts,
            "monthly cross-business evaluation"
        );
        Ok(report)
    }

    /// The lift across gyms of each business type: every sharing gym's own lift of the tasks
    /// assigned in the last [`DEFAULT_LIFT_DAYS`] (by intent to treat, each member once their
    /// window has passed), pooled. One ranged read of tallies per sharing gym with a type.
    async fn pooled_lifts(&self, month: &str, accounts: &[Account], now: Timestamp) -> Result<Vec<PooledLift>, EngineError> {
        let since = now - SignedDuration::from_hours(24 * DEFAULT_LIFT_DAYS);
        let mut lifts = Vec::new();
        for account in accounts.iter().filter(|a| a.settings.share_learning) {
            let Some(tag) = account.settings.profile.business_type.as_deref().map(business_type_tag) else {
                continue;
            };
            let tallies = self.store.tallies(account.id, since).await?;
            let own = crate::learning::lift::lift(&tallies, since..now, None, account.settings.holdout_percent, now);
            lifts.push((tag, pseudonym(account), own.groups));
        }
        let gyms: Vec<GymLift<'_>> = lifts
            .iter()
            .map(|(business_type, contributor, groups)| GymLift {
                business_type,
                contributor,
                groups,
            })
            .collect();
        Ok(crate::learning::pooled::pooled(month, &gyms))
    }

    /// The account's lift across gyms like it: this month's figure for each task type that has
    /// one, an earlier month's kept for the others — all of its current business type.
    async fn keep_pooled_lift(&self, account: &Account, tag: Option<&str>, pooled: &[PooledLift]) -> Result<(), EngineError> {
        let mut next: Vec<PooledLift> = account
            .pooled_lift
            .iter()
            .filter(|p| {
                Some(p.business_type.as_str()) == tag
                    && !pooled
                        .iter()
                        .any(|n| n.business_type == p.business_type && n.task_type == p.task_type)
            })
            .cloned()
            .collect();
        next.extend(pooled.iter().filter(|p| Some(p.business_type.as_str()) == tag).cloned());
        next.sort_by(|a, b| a.task_type.cmp(&b.task_type));
        if next == account.pooled_lift {
            return Ok(());
        }
        self.change_account(account.id, |a| {
            a.pooled_lift.clone_from(&next);
            Ok(true)
        })
        .await?;
        Ok(())
    }

    /// Add the patterns to the account's credited ones (once each; the newest kept).
    async fn credit(&self, account: &Account, helped: &[&Pattern]) -> Result<(), EngineError> {
        self.change_account(account.id, |account| {
            let before = account.learning_patterns.clone();
            account.learning_patterns.extend(helped.iter().map(|p| p.id.clone()));
            // Ids begin with their month: the first are the oldest.
            while account.learning_patterns.len() > MAX_CREDITED_PATTERNS {
                account.learning_patterns.pop_first();
            }
            Ok(account.learning_patterns != before)
        })
        .await?;
        tracing::info!(account = %account.id, patterns = helped.len(), "credited with cross-business patterns");
        Ok(())
    }
}
