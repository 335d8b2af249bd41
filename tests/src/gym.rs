//! A seeded gym for the risk scan (the analysis emulator test and `make bench`): members
//! with a realistic mix of facts, written straight through the store. Of every 20 members:
//! 2 regulars who stopped coming, 1 member with a short history who stopped, 1 new member,
//! 1 recent cancellation, 1 lead without a trial (6 findings), 1 lead with a trial booked,
//! 1 frozen member and 12 regulars who came in the last days (no finding).

use futures::stream::{self, StreamExt, TryStreamExt};
use jiff::{SignedDuration, Timestamp};
use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::{AccountId, Email, MemberId};
use openloop_core::members::event::MemberStatus;
use openloop_core::members::member::MemberFacts;
use openloop_core::ports::TaskStore;

fn days(n: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * n)
}

/// The facts of member number `i` of a seeded gym at `now`.
pub fn member(account: AccountId, i: usize, now: Timestamp) -> MemberFacts {
    let id = MemberId::parse(&format!("m_{i:05}")).unwrap_or_else(|e| panic!("{e}"));
    let mut facts = MemberFacts::new(id);
    let address = format!("m{i}+{}@example.com", account.to_string().to_ascii_lowercase());
    facts.email = Some(Email::parse(&address).unwrap_or_else(|e| panic!("{e}")));
    facts.first_name = Some(format!("Member{i}"));
    facts.monthly_value = Some(if i.is_multiple_of(7) { 220.0 } else { 150.0 });
    facts.joined_at = Some(now - days(200 + (i % 300) as i64));
    facts.status = Some(MemberStatus::Active);
    let spread = (i / 20 % 20) as i64;
    let checkins: Vec<Timestamp> = match i % 20 {
        0 | 1 => (0..12).map(|k| now - days(20 + spread + 3 * k)).collect(),
        2 => (0..2).map(|k| now - days(25 + spread + 4 * k)).collect(),
        3 => {
            facts.joined_at = Some(now - days(1 + spread % 10));
            Vec::new()
        }
        4 => {
            facts.status = Some(MemberStatus::Cancelled);
            facts.cancelled_at = Some(now - days(5 + spread));
            facts.cancellation_reason = Some("too expensive right now".into());
            (0..10).map(|k| now - days(40 + spread + 3 * k)).collect()
        }
        5 | 6 => {
            facts.status = Some(MemberStatus::Lead);
            facts.joined_at = Some(now - days(3 + spread));
            if i % 20 == 6 {
                facts.trial_booked_at = Some(now - days(1));
            }
            Vec::new()
        }
        7 => {
            facts.status = Some(MemberStatus::Frozen);
            (0..8).map(|k| now - days(30 + 3 * k)).collect()
        }
        // Regulars keep a short history: the emulator copies every table on each transaction,
        // so small items keep a 500-member gym from slowing the other tests down.
        _ => (0..3).map(|k| now - days(1 + (i % 3) as i64 + 3 * k)).collect(),
    };
    facts.checkin_count = u32::try_from(checkins.len()).unwrap_or(0);
    facts.checkins = checkins.into_iter().collect();
    facts.last_checkin_at = facts.checkins.last().copied();
    facts.version = 1;
    facts
}

/// Findings the scan should make among the first `count` members.
pub fn findings(count: usize) -> usize {
    (0..count).filter(|i| i % 20 <= 5).count()
}

/// Write `count` members (16 writes at a time).
pub async fn seed(store: &dyn TaskStore, account: AccountId, count: usize, now: Timestamp) -> Result<(), StoreError> {
    stream::iter(0..count)
        .map(|i| async move { store.save_member_facts(account, &member(account, i, now)).await })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await
        .map(|_| ())
}
