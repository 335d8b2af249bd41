//! [`AnnotationStore`] in memory: each member's tags and notes.

use async_trait::async_trait;

use crate::kernel::error::StoreError;
use crate::kernel::ids::{AccountId, MemberId};
use crate::members::annotation::{Annotation, MemberAnnotations};
use crate::ports::AnnotationStore;

use super::MemoryStore;

#[async_trait]
impl AnnotationStore for MemoryStore {
    async fn annotate_member(&self, account: AccountId, member: &MemberId, change: &Annotation) -> Result<(), StoreError> {
        self.lock()?.annotations.entry((account, member.clone())).or_default().apply(change);
        Ok(())
    }

    async fn member_annotations(&self, account: AccountId, member: &MemberId) -> Result<MemberAnnotations, StoreError> {
        Ok(self
            .lock()?
            .annotations
            .get(&(account, member.clone()))
            .cloned()
            .unwrap_or_default())
    }
}
