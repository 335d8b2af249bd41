//! Knowing the member (CONTRACT.md, "Additions, part 3"): events of one second apply in the
//! order they arrived, and a cancellation's reason is read into its class, on the member and in
//! the churn report.

use openloop_tests::Stack;
use serde_json::json;

/// Given a member created and cancelled in the same second (the status change sent second,
/// under a webhook id that sorts first), when both are accepted, then the member is cancelled,
/// with their reason read as `moving`; a redelivery of the creation changes nothing.
#[tokio::test]
async fn a_status_change_in_the_same_second_as_its_creation_is_never_lost() {
    let stack = Stack::start("member-same-second").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    let created = json!({"type": "member.created", "timestamp": at, "data": {"member_id": "m_ian",
        "email": "ian@example.com", "first_name": "IAN", "status": "active", "joined_at": "2025-01-01T00:00:00Z"}});
    let cancelled = json!({"type": "member.status_changed", "timestamp": at, "data": {"member_id": "m_ian",
        "status": "cancelled", "previous_status": "active", "cancellation_reason": "Moving to Portland for a new job"}});
    // The redelivery is answered as a duplicate (200), the others accepted (202).
    for (id, body, answered) in [
        ("evt_z_created", &created, 202),
        ("evt_a_cancelled", &cancelled, 202),
        ("evt_z_created", &created, 200),
    ] {
        let (status, answer) = stack.webhook(&gym, id, body.clone()).await;
        assert_eq!(status, answered, "{id}: {answer}");
    }
    stack.run().await;
    let (status, member) = stack.get("/api/v1/members/m_ian", &gym.token).await;
    assert_eq!(status, 200, "{member}");
    assert_eq!(member["status"], "cancelled", "{member}");
    assert_eq!(member["name"], "Ian", "{member}");
    assert_eq!(
        (member["cancellation"]["reason"].as_str(), member["cancellation"]["class"].as_str()),
        (Some("Moving to Portland for a new job"), Some("moving")),
        "{member}"
    );
    assert!(member["cancellation"]["at"].as_str().is_some(), "{member}");
}
