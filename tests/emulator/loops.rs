//! Open loops on DynamoDB: an event that meets a loop and the deadline sweep that expires it,
//! run at the same time on the same loops, resolve each loop exactly once — a lead who came
//! has no no-show follow-up, a lead the sweep expired has exactly one.

use openloop_core::members::event::MemberStatus;
use openloop_core::ports::prelude::*;
use openloop_core::task::open_loop::{LoopStatus, trial_loop};
use openloop_tests::Scratch;

use crate::loop_fixtures::{checkins, race_account, six_members};

#[tokio::test]
async fn a_checkin_and_the_deadline_sweep_racing_on_one_loop_resolve_it_once() {
    let scratch = Scratch::new("loop-race");
    let (engine, store, clock, account) = race_account(&scratch, "Loop Gym").await;
    let now = engine.now();

    // Six leads, each with a booked trial whose deadline is now.
    let members = six_members(&store, &account, "lead", MemberStatus::Lead, "Lee", false).await;
    for member in &members {
        let booked = trial_loop(
            account.id,
            member.clone(),
            now - openloop_core::task::open_loop::TRIAL_GRACE,
            "booking",
            now,
        );
        engine.register_loops(&[booked]).await.unwrap_or_else(|e| panic!("loop: {e}"));
    }
    clock
        .set(now + jiff::SignedDuration::from_mins(1))
        .unwrap_or_else(|e| panic!("clock: {e}"));

    // Each lead's check-in (delivered twice) and four sweeps, all at once.
    let envelopes = checkins(&account, &members, now);
    let signals = envelopes.iter().chain(envelopes.iter()).map(|e| engine.apply_signal(e));
    let sweeps = (0..4).map(|_| engine.sweep_loops());
    let (applied, swept) = futures::future::join(futures::future::join_all(signals), futures::future::join_all(sweeps)).await;
    assert!(applied.iter().all(Result::is_ok), "{applied:?}");
    let swept: Vec<_> = swept.into_iter().map(|r| r.unwrap_or_else(|e| panic!("sweep: {e}"))).collect();

    let mut expired = 0;
    for member in &members {
        let loops = store
            .list_loops(account.id, None, Some(member), 10)
            .await
            .unwrap_or_else(|e| panic!("loops: {e}"));
        assert_eq!(loops.len(), 1, "{loops:?}");
        let followups = store
            .member_active_tasks(account.id, member)
            .await
            .unwrap_or_else(|e| panic!("tasks: {e}"))
            .into_iter()
            .filter(|t| t.task_type == "lead_followup")
            .count();
        match loops[0].status {
            LoopStatus::Met => assert_eq!(followups, 0, "{member} came: no no-show follow-up"),
            LoopStatus::Expired => {
                expired += 1;
                assert_eq!(followups, 1, "{member}'s deadline won: exactly one follow-up");
            }
            LoopStatus::Open => panic!("{member}'s loop was left open"),
        }
    }
    assert_eq!(
        swept.iter().map(|s| s.expired).sum::<usize>(),
        expired,
        "each expiry counted by one sweep: {swept:?}"
    );
    assert_eq!(
        swept.iter().map(|s| s.opened.len()).sum::<usize>(),
        expired,
        "one follow-up per expired loop"
    );
}
