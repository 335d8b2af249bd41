//! A to-do's loop on DynamoDB: the member's check-in and the deadline sweep, run at the same
//! time on the same loops, resolve each loop exactly once — a member who came back leaves no
//! "overdue" notice, a to-do the sweep expired leaves exactly one.

use openloop_core::members::event::MemberStatus;
use openloop_core::ports::prelude::*;
use openloop_core::task::open_loop::LoopStatus;
use openloop_tests::Scratch;

use crate::loop_fixtures::{by_hand, checkins, race_account, six_members};

#[tokio::test]
async fn a_checkin_and_the_deadline_sweep_racing_on_a_todos_loop_escalate_it_at_most_once() {
    let scratch = Scratch::new("todo-loop-race");
    let (engine, store, clock, account) = race_account(&scratch, "Call Gym").await;
    let start = engine.now();

    // Six members, each with a staff call: a "get them back" to-do and its loop.
    let members = six_members(&store, &account, "call", MemberStatus::Active, "Cal", true).await;
    for member in &members {
        let call = by_hand("staff_call_member", member, "Call them");
        engine.create_task(&account, call).await.unwrap_or_else(|e| panic!("call: {e}"));
    }
    let deadline = store
        .list_loops(account.id, Some(LoopStatus::Open), None, 100)
        .await
        .unwrap_or_else(|e| panic!("loops: {e}"))
        .iter()
        .map(|l| l.deadline)
        .max()
        .unwrap_or_else(|| panic!("the to-dos registered no loops"));
    let now = deadline + jiff::SignedDuration::from_mins(1);
    clock.set(now).unwrap_or_else(|e| panic!("clock: {e}"));

    // Each member's check-in (delivered twice) and four sweeps, all at once.
    let envelopes = checkins(&account, &members, now);
    let signals = envelopes.iter().chain(envelopes.iter()).map(|e| engine.apply_signal(e));
    let sweeps = (0..4).map(|_| engine.sweep_loops());
    let (applied, swept) = futures::future::join(futures::future::join_all(signals), futures::future::join_all(sweeps)).await;
    assert!(applied.iter().all(Result::is_ok), "{applied:?}");
    assert!(swept.iter().all(Result::is_ok), "{swept:?}");

    let (notices, _) = store
        .list_notices(account.id, 200, None)
        .await
        .unwrap_or_else(|e| panic!("notices: {e}"));
    for member in &members {
        let loops = store
            .list_loops(account.id, None, Some(member), 10)
            .await
            .unwrap_or_else(|e| panic!("loops: {e}"));
        let todo_loops: Vec<_> = loops.iter().filter(|l| l.todo_id.is_some()).collect();
        assert_eq!(todo_loops.len(), 1, "{loops:?}");
        let told = notices
            .iter()
            .filter(|n| n.member_id.as_ref() == Some(member) && n.title.starts_with("Overdue to-do"))
            .count();
        match todo_loops[0].status {
            LoopStatus::Met => assert_eq!(told, 0, "{member} came back first: not escalated"),
            LoopStatus::Expired => assert_eq!(told, 1, "{member}'s deadline won: escalated once"),
            LoopStatus::Open => panic!("{member}'s to-do loop was left open"),
        }
    }
    assert!(start < deadline);
}
