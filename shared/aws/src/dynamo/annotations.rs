//! [`AnnotationStore`] on DynamoDB: one `ANNOTATIONS#{member}` item per member holding their
//! tags and notes, changed by a read and a write conditional on the version read (so the
//! note cap holds and concurrent changes all land).

use async_trait::async_trait;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::members::annotation::{Annotation, MemberAnnotations};
use openloop_core::ports::AnnotationStore;

use crate::keys::*;

use super::DynamoStore;
use super::items::{from_item, keyed, n};

/// The item: the annotations and their version.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    #[serde(flatten)]
    annotations: MemberAnnotations,
    version: u64,
}

/// Lost version races before giving up.
const RACES: usize = 8;

/// A member's annotations from their stored item.
pub(super) fn from_stored(item: super::Item) -> Result<MemberAnnotations, StoreError> {
    from_item::<Stored>(item).map(|s| s.annotations)
}

impl DynamoStore {
    async fn stored_annotations(&self, account: AccountId, member: &MemberId) -> Result<Option<Stored>, StoreError> {
        self.get(account_pk(account), &annotations_sk(member))
            .await?
            .map(from_item)
            .transpose()
    }
}

#[async_trait]
impl AnnotationStore for DynamoStore {
    async fn annotate_member(&self, account: AccountId, member: &MemberId, change: &Annotation) -> Result<(), StoreError> {
        for _ in 0..RACES {
            let stored = self.stored_annotations(account, member).await?;
            let (mut annotations, version) = stored.map_or_else(|| (MemberAnnotations::default(), 0), |s| (s.annotations, s.version));
            annotations.apply(change);
            let item = keyed(
                &Stored {
                    annotations,
                    version: version + 1,
                },
                account_pk(account),
                annotations_sk(member),
                "annotations",
            )?;
            let written = if version == 0 {
                self.put_conditional(item, "attribute_not_exists(PK)", &[], Vec::new(), Conflict::Version)
                    .await
            } else {
                self.put_conditional(item, "#v = :v", &[("#v", "version")], vec![(":v", n(version))], Conflict::Version)
                    .await
            };
            match written {
                Err(StoreError::Conflict(Conflict::Version)) => continue,
                other => return other,
            }
        }
        Err(StoreError::Conflict(Conflict::Version))
    }

    async fn member_annotations(&self, account: AccountId, member: &MemberId) -> Result<MemberAnnotations, StoreError> {
        Ok(self
            .stored_annotations(account, member)
            .await?
            .map(|s| s.annotations)
            .unwrap_or_default())
    }
}
