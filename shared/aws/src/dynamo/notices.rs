//! [`NoticeStore`] on DynamoDB: the `NOTICE#` items (TTL) and the GSI1 digest partition.

use async_trait::async_trait;
use jiff::Timestamp;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::owner_notice::OwnerNotice;
use openloop_core::ports::NoticeStore;

use crate::keys::*;

use super::items::{from_item, keyed, n, s};
use super::{DynamoStore, unavailable};

#[async_trait]
impl NoticeStore for DynamoStore {
    async fn put_notice(&self, notice: &OwnerNotice) -> Result<(), StoreError> {
        let mut item = keyed(notice, account_pk(notice.account_id), notice_sk(notice.id), "owner_notice")?;
        item.insert(
            TTL.into(),
            n((notice.at + openloop_core::kernel::limits::OWNER_NOTICE_TTL).as_second()),
        );
        if let Some(at) = notice.digest_at {
            item.insert(GSI1PK.into(), s(NOTICES_DUE_GSI1PK));
            item.insert(GSI1SK.into(), s(notice_due_gsi1sk(at, notice.account_id, notice.id)));
        }
        self.put_conditional(item, "attribute_not_exists(PK)", &[], vec![], Conflict::AlreadyExists)
            .await
    }

    async fn list_notices(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<OwnerNotice>, Option<String>), StoreError> {
        let (items, next) = self
            .index_page(None, PK, account_pk(account), Some(NOTICE_PREFIX), false, limit, cursor)
            .await?;
        let notices = items.into_iter().map(from_item).collect::<Result<_, _>>()?;
        Ok((notices, next))
    }

    async fn due_notices(&self, until: Timestamp, limit: usize) -> Result<Vec<OwnerNotice>, StoreError> {
        self.due_in(NOTICES_DUE_GSI1PK, until, limit)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }

    async fn claim_notice(&self, account: AccountId, id: ulid::Ulid) -> Result<bool, StoreError> {
        self.count();
        match self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(notice_sk(id)))
            .update_expression("REMOVE GSI1PK, GSI1SK, digest_at")
            .condition_expression("attribute_exists(GSI1PK)")
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(false),
            Err(e) => Err(unavailable(e)),
        }
    }
}
