//! [`Counters`] in memory: daily sends, AI calls and other daily allowances, and the creation
//! counters.

use async_trait::async_trait;
use jiff::civil::Date;

use crate::kernel::error::StoreError;
use crate::kernel::ids::AccountId;
use crate::ports::Counters;
use crate::task::flood::CreationCounts;

use super::MemoryStore;

#[async_trait]
impl Counters for MemoryStore {
    async fn daily_sends(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self.lock()?.daily.get(&(account, date)).copied().unwrap_or(0))
    }

    async fn sends_between(&self, account: AccountId, from: Date, to: Date) -> Result<u32, StoreError> {
        let s = self.lock()?;
        Ok(s.daily
            .iter()
            .filter(|((a, day), _)| *a == account && *day >= from && *day <= to)
            .map(|(_, sent)| *sent)
            .sum())
    }

    async fn count_ai_call(&self, account: AccountId, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        let mut s = self.lock()?;
        let calls = s.ai_calls.entry((account, date)).or_insert(0);
        if *calls >= limit {
            return Ok(None);
        }
        *calls += 1;
        Ok(Some(*calls))
    }

    async fn ai_calls(&self, account: AccountId, date: Date) -> Result<u32, StoreError> {
        Ok(self.lock()?.ai_calls.get(&(account, date)).copied().unwrap_or(0))
    }

    async fn count_daily(&self, account: AccountId, counter: &str, date: Date, limit: u32) -> Result<Option<u32>, StoreError> {
        let mut s = self.lock()?;
        let count = s.daily_counters.entry((account, counter.to_owned(), date)).or_insert(0);
        if *count >= limit {
            return Ok(None);
        }
        *count += 1;
        Ok(Some(*count))
    }

    async fn creation_counts(&self, account: AccountId, date: Date) -> Result<CreationCounts, StoreError> {
        let s = self.lock()?;
        let open = s.tasks.values().filter(|t| t.account_id == account && t.is_active()).count();
        Ok(CreationCounts {
            created: s.created.get(&(account, date)).copied().unwrap_or(0),
            agent_created: s.agent_created.get(&(account, date)).copied().unwrap_or(0),
            open: u32::try_from(open).unwrap_or(u32::MAX),
        })
    }

    async fn count_text(
        &self,
        account: AccountId,
        date: Date,
        segments: u32,
        limit: u32,
    ) -> Result<Option<crate::owner::sms::TextCounts>, StoreError> {
        let mut s = self.lock()?;
        let day = s.texts.entry((account, date)).or_default();
        if day.texts >= limit {
            return Ok(None);
        }
        day.texts += 1;
        day.segments = day.segments.saturating_add(segments);
        Ok(Some(*day))
    }

    async fn texts_between(&self, account: AccountId, from: Date, to: Date) -> Result<crate::owner::sms::TextCounts, StoreError> {
        let s = self.lock()?;
        Ok(s.texts
            .iter()
            .filter(|((a, day), _)| *a == account && *day >= from && *day <= to)
            .fold(Default::default(), |sum: crate::owner::sms::TextCounts, (_, c)| {
                crate::owner::sms::TextCounts {
                    texts: sum.texts.saturating_add(c.texts),
                    segments: sum.segments.saturating_add(c.segments),
                }
            }))
    }
}
