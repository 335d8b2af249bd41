//! [`ConnectionStore`] on DynamoDB: one `CONNECTION#pushpress` item per account, written only
//! over the version read.

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::AccountId;
use openloop_core::owner::connection::Connection;
use openloop_core::ports::ConnectionStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed, n};

#[async_trait]
impl ConnectionStore for DynamoStore {
    async fn connection(&self, account: AccountId) -> Result<Option<Connection>, StoreError> {
        self.get(account_pk(account), CONNECTION_SK).await?.map(from_item).transpose()
    }

    async fn save_connection(&self, account: AccountId, connection: &Connection) -> Result<(), StoreError> {
        let item = keyed(connection, account_pk(account), CONNECTION_SK.into(), "connection")?;
        if connection.version <= 1 {
            return self
                .put_conditional(item, "attribute_not_exists(PK)", &[], Vec::new(), Conflict::Version)
                .await;
        }
        self.put_conditional(
            item,
            "#v = :v",
            &[("#v", "version")],
            vec![(":v", n(connection.version - 1))],
            Conflict::Version,
        )
        .await
    }

    async fn delete_connection(&self, account: AccountId) -> Result<bool, StoreError> {
        self.delete(account_pk(account), CONNECTION_SK).await
    }
}
