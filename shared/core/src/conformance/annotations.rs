//! The conformance of [`AnnotationStore`]: a member's tags are a set, notes are kept in order
//! up to the cap, concurrent changes all land, and every member and account has their own.
//!
//! [`AnnotationStore`]: crate::ports::AnnotationStore

use crate::kernel::ids::AccountId;
use crate::members::annotation::{Annotation, MAX_MEMBER_NOTES, MemberNote};
use crate::ports::TaskStore;

use super::{base, member};

fn note(i: usize) -> Annotation {
    Annotation::Note(MemberNote {
        at: base() + jiff::SignedDuration::from_secs(i64::try_from(i).expect("small")),
        text: format!("note {i}"),
        task_id: None,
    })
}

/// Tags and notes PushPress has no place for.
pub(super) async fn annotations_keep_tags_as_a_set_and_notes_in_order(store: &dyn TaskStore) {
    let account = AccountId::generate(base());
    let ana = member("m_annotated");
    let bo = member("m_other");
    assert!(store.member_annotations(account, &ana).await.expect("read").tags.is_empty());
    for change in [
        Annotation::AddTag("vip".into()),
        Annotation::AddTag("vip".into()),
        Annotation::AddTag("spring".into()),
        Annotation::RemoveTag("spring".into()),
        Annotation::RemoveTag("never-there".into()),
    ] {
        store.annotate_member(account, &ana, &change).await.expect("annotate");
    }
    let changes: Vec<Annotation> = (0..6).map(|i| Annotation::AddTag(format!("t{i}"))).collect();
    let racing = changes.iter().map(|change| store.annotate_member(account, &ana, change));
    for result in futures::future::join_all(racing).await {
        result.expect("a racing change lands");
    }
    for i in 0..MAX_MEMBER_NOTES + 2 {
        store.annotate_member(account, &ana, &note(i)).await.expect("note");
    }
    let annotations = store.member_annotations(account, &ana).await.expect("read");
    assert_eq!(
        annotations.tags.len(),
        7,
        "annotations: vip and six racing tags: {:?}",
        annotations.tags
    );
    assert!(annotations.tags.contains("vip") && !annotations.tags.contains("spring"));
    assert_eq!(annotations.notes.len(), MAX_MEMBER_NOTES, "annotations: notes capped");
    assert_eq!(
        annotations.notes.first().map(|n| n.text.as_str()),
        Some("note 2"),
        "oldest dropped first"
    );
    assert!(
        store.member_annotations(account, &bo).await.expect("read").tags.is_empty(),
        "per member"
    );
    // The send snapshot carries them, read in the same batch as the rest.
    let snapshot = store
        .send_snapshot(account, &ana, None, base().to_zoned(jiff::tz::TimeZone::UTC).date())
        .await
        .expect("snapshot");
    assert_eq!(snapshot.annotations, annotations, "annotations: in the send snapshot");
    let other = store
        .send_snapshot(account, &bo, None, base().to_zoned(jiff::tz::TimeZone::UTC).date())
        .await
        .expect("snapshot");
    assert!(
        other.annotations.tags.is_empty(),
        "annotations: the snapshot's are the member's own"
    );
    let elsewhere = AccountId::generate(base());
    assert!(
        store.member_annotations(elsewhere, &ana).await.expect("read").notes.is_empty(),
        "per account"
    );
}
