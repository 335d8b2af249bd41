//! [`MemberStore`] in memory: member facts, send ledgers, suppressions, and the send gates'
//! snapshot.

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::civil::Date;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email, MemberId};
use crate::members::member::{MemberFacts, SendLedger};
use crate::ports::MemberStore;
use crate::rails::send_gate::{DraftReads, SendSnapshot, dates_around};

use super::{MemoryStore, conflict};

#[async_trait]
impl MemberStore for MemoryStore {
    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError> {
        let s = self.lock()?;
        let key = (account, member.clone());
        let facts = s.facts.get(&key).cloned();
        let ledger = s.ledgers.get(&key).cloned();
        if facts.is_none() && ledger.is_none() {
            return Ok(None);
        }
        Ok(Some((
            facts.unwrap_or_else(|| MemberFacts::new(member.clone())),
            ledger.unwrap_or_default(),
        )))
    }

    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError> {
        super::storable(facts)?;
        let mut s = self.lock()?;
        let key = (account, facts.member_id.clone());
        let stored = s.facts.get(&key).map_or(0, |f| f.version);
        if stored + 1 != facts.version {
            return Err(conflict(Conflict::MemberFacts));
        }
        s.facts.insert(key, facts.clone());
        Ok(())
    }

    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError> {
        let after = match cursor {
            Some(c) => Some(MemberId::parse(&c).map_err(|_| StoreError::InvalidCursor)?),
            None => None,
        };
        let s = self.lock()?;
        let mut facts: Vec<&MemberFacts> = s
            .facts
            .iter()
            .filter(|((a, m), _)| *a == account && after.as_ref().is_none_or(|after| m.as_str() > after.as_str()))
            .map(|(_, f)| f)
            .collect();
        facts.sort_by(|a, b| a.member_id.as_str().cmp(b.member_id.as_str()));
        let limit = limit.max(1);
        let next = (facts.len() > limit).then(|| facts[limit - 1].member_id.to_string());
        Ok((facts.into_iter().take(limit).cloned().collect(), next))
    }

    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError> {
        let s = self.lock()?;
        let mut snapshot = SendSnapshot {
            system: s.system.clone(),
            account: s.accounts.get(&account).cloned(),
            suppressed: email.is_some_and(|e| s.suppressed.contains(&(account, e.clone()))),
            ledger: s.ledgers.get(&(account, member.clone())).cloned().unwrap_or_default(),
            facts: s.facts.get(&(account, member.clone())).cloned(),
            daily: dates_around(around)
                .into_iter()
                .map(|d| (d, s.daily.get(&(account, d)).copied().unwrap_or(0)))
                .collect(),
            annotations: s.annotations.get(&(account, member.clone())).cloned().unwrap_or_default(),
            memories: s.memory_books.get(&account).cloned().unwrap_or_default(),
            draft: None,
            member_open_tasks: None,
        };
        // The guards are what a member item's open tasks mirror.
        let open = s.guards.iter().filter(|((a, m, _), _)| *a == account && m == member);
        snapshot.keep_member_open_tasks(open.map(|(_, id)| *id));
        Ok(snapshot)
    }

    async fn send_snapshot_for_draft(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
        template: (&str, &str),
    ) -> Result<SendSnapshot, StoreError> {
        let mut snapshot = self.send_snapshot(account, member, email, around).await?;
        let s = self.lock()?;
        let key = (template.0.to_owned(), template.1.to_owned());
        snapshot.draft = Some(DraftReads {
            template: s.message_templates.get(&(account, key.0.clone(), key.1.clone())).cloned(),
            key,
            connection: s.connections.get(&account).cloned(),
            ai_calls: dates_around(around)
                .into_iter()
                .map(|d| (d, s.ai_calls.get(&(account, d)).copied().unwrap_or(0)))
                .collect(),
        });
        Ok(snapshot)
    }

    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.lock()?.suppressed.contains(&(account, email.clone())))
    }

    async fn put_suppression(&self, account: AccountId, email: &Email, _reason: &str, _at: Timestamp) -> Result<(), StoreError> {
        self.lock()?.suppressed.insert((account, email.clone()));
        Ok(())
    }

    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.lock()?.suppressed.remove(&(account, email.clone())))
    }
}
