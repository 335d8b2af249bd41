//! Member events on DynamoDB: a `member.created` and the `member.status_changed` accepted after
//! it in the same second, applied at the same time on one member's facts (the optimistic lock
//! races), leave the member with the changed status — whatever their random webhook ids — and
//! a redelivery of either changes nothing.

use openloop_core::kernel::ids::{Email, MemberId, new_ulid};
use openloop_core::members::event::{MemberEvent, MemberStatus, SignalEnvelope, WebhookEvent};
use openloop_core::ports::prelude::*;
use openloop_tests::Scratch;

use crate::loop_fixtures::race_account;

#[tokio::test]
async fn a_status_change_accepted_after_its_creation_in_the_same_second_wins_the_race() {
    let scratch = Scratch::new("member-events");
    let (engine, store, _, account) = race_account(&scratch, "Event Gym").await;
    let second = engine.now();
    let mut pairs = Vec::new();
    for i in 0..8 {
        // Half the creations carry the greater id, half the smaller: ids decide nothing.
        let (first, then) = if i % 2 == 0 { ("z", "a") } else { ("a", "z") };
        let member = MemberId::parse(&format!("m_ian{i}")).unwrap_or_else(|e| panic!("{e}"));
        let created = SignalEnvelope {
            account_id: account.id,
            webhook_id: format!("msg_{first}{}", new_ulid(second)),
            received_at: second,
            event: WebhookEvent {
                timestamp: second,
                event: MemberEvent::MemberCreated {
                    member_id: member.clone(),
                    email: Some(Email::parse(&format!("ian{i}@example.com")).unwrap_or_else(|e| panic!("{e}"))),
                    first_name: Some("Ian".into()),
                    last_name: None,
                    status: MemberStatus::Active,
                    joined_at: Some(second),
                    monthly_value: Some(150.0),
                    phone: None,
                },
            },
        };
        // Accepted a nanosecond later, as the engine stamps two webhooks of one instant.
        let cancelled = SignalEnvelope {
            account_id: account.id,
            webhook_id: format!("msg_{then}{}", new_ulid(second)),
            received_at: second + jiff::SignedDuration::from_nanos(1),
            event: WebhookEvent {
                timestamp: second,
                event: MemberEvent::StatusChanged {
                    member_id: member.clone(),
                    status: MemberStatus::Cancelled,
                    previous_status: Some(MemberStatus::Active),
                    cancellation_reason: Some("Moving to Portland for a new job".into()),
                },
            },
        };
        pairs.push((member, created, cancelled));
    }

    // Every event twice, all at once, the later-accepted one first half of the time.
    let signals = pairs.iter().enumerate().flat_map(|(i, (_, created, cancelled))| {
        let order = if i % 2 == 0 { [cancelled, created] } else { [created, cancelled] };
        order.into_iter().chain(order).map(|e| engine.apply_signal(e))
    });
    let applied = futures::future::join_all(signals).await;
    assert!(applied.iter().all(Result::is_ok), "{applied:?}");

    for (member, _, _) in &pairs {
        let (facts, _) = store
            .get_member(account.id, member)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{member}: no facts"));
        assert_eq!(facts.status, Some(MemberStatus::Cancelled), "{member}: {facts:?}");
        assert_eq!(facts.first_name.as_deref(), Some("Ian"));
        assert_eq!(
            facts.status_stamp.map(|s| s.accepted_at),
            Some(Some(second + jiff::SignedDuration::from_nanos(1))),
            "the acceptance order is stored with the facts"
        );
    }
}
