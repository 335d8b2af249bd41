//! The tick (every minute): global pause, then the due index → the work queues. Reads grow
//! with what is due, never with what is stored; each item is delayed to wake at its second.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::{Engine, boxed};
use crate::kernel::limits::{DUE_INDEX_SHARDS, DUE_TOLERANCE, TICK_MAX_ITEMS, TICK_MAX_PAGES_PER_SHARD};
use crate::task::error::EngineError;
use crate::task::work::{DueEntry, QueueName, WorkItem, queue_for};

#[derive(Clone, Debug, Default, Serialize)]
pub struct TickReport {
    pub paused: bool,
    pub enqueued: HashMap<&'static str, usize>,
    /// Items left for the next tick because this one hit its bound.
    pub truncated: bool,
    /// Instances spawned by recurring templates.
    pub recurring: super::SpawnReport,
    /// Owner digest mails sent.
    pub owner_digests: usize,
    /// Open loops past their deadline, expired and carried out.
    pub loops: super::LoopSweep,
}

/// How a tick hands out work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// In Lambda: everything due before the next tick (`period` ahead), each item delayed
    /// on the queue so it wakes at its second.
    AtTheirSecond { period: SignedDuration },
    /// Under the test clock: what is due now, at once.
    Now,
}

impl Engine {
    /// Enqueue the due work (see [`Wake`]).
    pub async fn tick(&self, wake: Wake) -> Result<TickReport, EngineError> {
        boxed(async move {
            let mut report = TickReport::default();
            if self.store.system_config().await?.global_pause {
                report.paused = true;
                tracing::warn!("global pause active; tick enqueues nothing");
                return Ok(report);
            }
            let now = self.clock.now();
            let until = match wake {
                Wake::AtTheirSecond { period } => now + period,
                Wake::Now => now + DUE_TOLERANCE,
            };
            let mut batches: HashMap<QueueName, Vec<(String, SignedDuration)>> = HashMap::new();
            // Every shard at once, each reading its share of the run's bound in a bounded number
            // of pages: an idle tick is the 16 first reads alone; a backlog of 10,000 due steps is
            // handed out in one run.
            let shards = futures::future::try_join_all((0..DUE_INDEX_SHARDS).map(|shard| self.due_shard(shard, until))).await?;
            for (entries, cut) in shards {
                report.truncated |= cut;
                for entry in entries {
                    let Some(queue) = queue_for(entry.status, entry.touch) else {
                        continue;
                    };
                    let item = WorkItem {
                        account_id: entry.account_id,
                        task_id: entry.task_id,
                        due_at: entry.due_at,
                    };
                    let body = serde_json::to_string(&item).map_err(|e| EngineError::Dependency(e.to_string()))?;
                    batches.entry(queue).or_default().push((body, delay_until(now, entry.due_at)));
                }
            }
            // A failure here must not stop the due work from being handed out.
            match self.send_owner_digests().await {
                Ok(sent) => report.owner_digests = sent,
                Err(e) => tracing::error!(error = %e, "owner digests not sent this tick"),
            }
            match self.sweep_loops().await {
                Ok(swept) => report.loops = swept,
                Err(e) => tracing::error!(error = %e, "open loops not swept this tick"),
            }
            match self.nudge_due_webhooks(now).await {
                Ok(0) => {}
                Ok(nudged) => {
                    report.enqueued.insert(QueueName::Deliveries.as_str(), nudged);
                }
                Err(e) => tracing::error!(error = %e, "due webhook endpoints not nudged this tick"),
            }
            match self.resend_webhook_events(now).await {
                Ok(0) => {}
                Ok(resent) => {
                    *report.enqueued.entry(QueueName::Deliveries.as_str()).or_default() += resent;
                }
                Err(e) => tracing::error!(error = %e, "webhook events in the outbox not queued again this tick"),
            }
            match self.spawn_recurring().await {
                Ok(spawned) => report.recurring = spawned,
                Err(e) => tracing::error!(error = %e, "recurring templates not spawned this tick"),
            }
            for (queue, messages) in batches {
                report.enqueued.insert(queue.as_str(), messages.len());
                self.queue
                    .send(queue, messages)
                    .await
                    .map_err(|e| EngineError::Dependency(e.to_string()))?;
            }
            Ok(report)
        })
        .await
    }
}

impl Engine {
    /// One due-index shard's entries due by `until`, oldest first: at most its share of the
    /// tick's bound, in at most [`TICK_MAX_PAGES_PER_SHARD`] pages; and whether it left some.
    async fn due_shard(&self, shard: u32, until: Timestamp) -> Result<(Vec<DueEntry>, bool), EngineError> {
        let share = (TICK_MAX_ITEMS / DUE_INDEX_SHARDS as usize).max(1);
        let mut entries = Vec::new();
        let mut cursor = None;
        for _ in 0..TICK_MAX_PAGES_PER_SHARD {
            let (page, next) = self.store.due(shard, until, share - entries.len(), cursor).await?;
            entries.extend(page);
            if entries.len() >= share {
                let cut = entries.len() > share || next.is_some();
                entries.truncate(share);
                return Ok((entries, cut));
            }
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok((entries, false)),
            }
        }
        Ok((entries, true))
    }
}

/// The SQS delay that wakes an item at `due` (0–900 s).
fn delay_until(now: Timestamp, due: Timestamp) -> SignedDuration {
    due.duration_since(now).clamp(SignedDuration::ZERO, SignedDuration::from_mins(15))
}
