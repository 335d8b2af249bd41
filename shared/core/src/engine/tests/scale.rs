//! Scale: a Monday morning's backlog of due steps is handed to the workers in one tick run,
//! every shard read at once, each item once.

use std::collections::HashSet;

use super::*;
use crate::engine::Wake;
use crate::ports::Clock;
use crate::task::transition::{Why, record};

/// `count` waiting tasks of the world's account, each of its own member, due a minute ago.
async fn backlog(w: &World, count: usize) -> HashSet<crate::kernel::ids::TaskId> {
    let now = w.clock.now();
    let mut ids = HashSet::new();
    for i in 0..count {
        let member = MemberId::parse(&format!("m_backlog_{i}")).expect("id");
        let mut task = crate::testing::sample_task_for(w.account.id, member, TaskStatus::Waiting, now);
        task.touch = 1;
        task.next_action_at = Some(now - SignedDuration::from_mins(1));
        let (task, log) = record(&task, now, Why::new(Reason::MessageSent));
        w.store.create_task(&task, &log, &[]).await.expect("seed");
        ids.insert(task.id);
    }
    ids
}

/// Given 2,500 due steps (more than a tick used to hand out), when the tick runs once, then
/// every one of them is on the follow-up queue, each once, and the run says it left none.
#[tokio::test]
async fn a_backlog_of_due_steps_is_handed_out_in_one_tick_run() {
    let w = world().await;
    let due = backlog(&w, 2_500).await;
    let report = w.engine.tick(Wake::Now).await.expect("tick");
    assert!(!report.truncated, "the whole backlog fits one run");
    assert_eq!(report.enqueued.get(QueueName::Followup.as_str()), Some(&2_500));
    let queued: Vec<WorkItem> = w
        .queue
        .0
        .lock()
        .expect("queue")
        .iter()
        .filter(|(q, _)| *q == QueueName::Followup)
        .map(|(_, body)| serde_json::from_str(body).expect("work item"))
        .collect();
    let handed: HashSet<_> = queued.iter().map(|i| i.task_id).collect();
    assert_eq!(queued.len(), handed.len(), "each step once");
    assert_eq!(handed, due);
}
