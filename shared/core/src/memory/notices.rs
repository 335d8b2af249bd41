//! [`NoticeStore`] in memory: owner notices, and the digest entries waiting to be taken.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::AccountId;
use crate::owner::owner_notice::OwnerNotice;
use crate::ports::NoticeStore;

use super::{MemoryStore, conflict};

#[async_trait]
impl NoticeStore for MemoryStore {
    async fn put_notice(&self, notice: &OwnerNotice) -> Result<(), StoreError> {
        let mut s = self.lock()?;
        let key = (notice.account_id, notice.id);
        if s.notices.contains_key(&key) {
            return Err(conflict(Conflict::AlreadyExists));
        }
        s.notices.insert(key, notice.clone());
        Ok(())
    }

    async fn list_notices(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), StoreError> {
        let after: Option<ulid::Ulid> = match cursor {
            Some(c) => Some(c.parse().map_err(|_| StoreError::InvalidCursor)?),
            None => None,
        };
        let s = self.lock()?;
        let mut page: Vec<OwnerNotice> = s
            .notices
            .range((account, ulid::Ulid::nil())..=(account, ulid::Ulid::from(u128::MAX)))
            .rev()
            .map(|(_, n)| n)
            .filter(|n| after.is_none_or(|a| n.id < a))
            .take(limit.max(1) + 1)
            .cloned()
            .collect();
        let limit = limit.max(1);
        let next = (page.len() > limit).then(|| page[limit - 1].id.to_string());
        page.truncate(limit);
        Ok((page, next))
    }

    async fn due_notices(&self, until: Timestamp, limit: usize) -> Result<Vec<OwnerNotice>, StoreError> {
        let mut due: Vec<OwnerNotice> = self
            .lock()?
            .notices
            .values()
            .filter(|n| n.digest_at.is_some_and(|at| at <= until))
            .cloned()
            .collect();
        due.sort_by_key(|n| (n.digest_at, n.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn claim_notice(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        let mut s = self.lock()?;
        Ok(s.notices.get_mut(&(account, id)).is_some_and(|n| n.digest_at.take().is_some()))
    }
}
