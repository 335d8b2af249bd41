//! Fixtures for tests (unit tests here, the conformance suite, the emulator tests).

use jiff::{SignedDuration, Timestamp};

use crate::account::{Account, Settings};
use crate::ids::{AccountId, Email, MemberId, TaskId};
use crate::task::{Budget, Draft, MemberRef, Task, TaskStatus, TriggerType};
use crate::task_type::Priority;

pub fn at(s: &str) -> Timestamp {
    s.parse()
        .unwrap_or_else(|e| panic!("bad timestamp {s}: {e}"))
}

pub fn sample_account(now: Timestamp) -> Account {
    Account {
        id: AccountId::generate(now),
        name: "CrossFit Renegade".into(),
        settings: Settings::defaults("America/New_York".into()),
        webhook_secret: "whsec_dGVzdA==".into(),
        paused: false,
        created_at: now,
        version: 1,
    }
}

/// A payment-recovery task in `status`, created at 2026-11-02T14:00Z (09:00 in New York).
pub fn sample_task(status: TaskStatus) -> Task {
    let now = at("2026-11-02T14:00:00Z");
    sample_task_for(
        AccountId::generate(now),
        MemberId::parse("m_1").unwrap_or_else(|e| panic!("{e}")),
        status,
        now,
    )
}

pub fn sample_task_for(
    account: AccountId,
    member: MemberId,
    status: TaskStatus,
    now: Timestamp,
) -> Task {
    Task {
        id: TaskId::generate(now),
        account_id: account,
        task_type: "payment_recovery".into(),
        status,
        priority: Priority::Critical,
        member: MemberRef {
            email: Email::parse(&format!(
                "{}@example.com",
                member.as_str().replace(['_', ':'], "-")
            ))
            .ok(),
            id: member,
            name: Some("Sarah Johnson".into()),
        },
        goal: "Recover a failed payment".into(),
        confidence: 90,
        draft: Some(Draft {
            subject: "Quick note about your membership".into(),
            body: "Hi Sarah, your last payment did not go through.".into(),
        }),
        thread_subject: None,
        thread: Vec::new(),
        budget: Budget {
            messages_used: 0,
            messages_max: 2,
            turns_used: 0,
            turns_max: 4,
            expires_at: now + SignedDuration::from_hours(24 * 7),
        },
        touch: 0,
        next_action_at: matches!(status, TaskStatus::Ready | TaskStatus::Waiting).then_some(now),
        attempts: 0,
        outcome: None,
        outcome_reason: None,
        attributed_value: None,
        parent_id: None,
        trigger_type: TriggerType::Webhook,
        trigger_event_id: None,
        created_at: now,
        updated_at: now,
        execution_started_at: None,
        dormant_at: None,
        dormant_expires_at: None,
        resolved_at: None,
        version: 1,
    }
}
