//! The queues as the runtime's consumers see them: receive a batch without waiting, delete
//! what was handled. On the emulator that is SQS itself; in memory, [`MemoryQueues`] keeps
//! SQS's semantics that the functions rely on — a message's delay, its invisibility while a
//! consumer holds it, and its return after the visibility timeout when it was not deleted.
//!
//! [`LocalQueues`] joins the two sides: every send wakes the background consumer, so nothing
//! waits on a long poll for a queue to drain, and a drain skips the queues that hold nothing
//! this process sent.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_sqs::types::DeleteMessageBatchRequestEntry;
use jiff::SignedDuration;
use tokio::sync::Notify;

use openloop_core::ports::{Queue, QueueError};
use openloop_core::task::work::QueueName;

/// How long a received message stays invisible (the provisioned queues' `VisibilityTimeout`).
pub const VISIBILITY_TIMEOUT: Duration = Duration::from_secs(60);

/// One received message: what the SQS event source hands a function.
#[derive(Clone, Debug)]
pub struct Received {
    pub id: String,
    pub body: String,
    pub receipt: String,
}

/// The consumer side of the queues.
#[async_trait]
pub trait Inbox: Send + Sync {
    /// Up to ten visible messages, at once (no long poll).
    async fn receive(&self, queue: QueueName) -> Result<Vec<Received>, String>;
    /// Remove handled messages by their receipts.
    async fn delete(&self, queue: QueueName, receipts: Vec<String>) -> Result<(), String>;
}

/// SQS (the emulator's), by queue URL. The receipts of what it holds are kept
/// ([`crate::kept`]), so a runtime started after this one hands them back at once.
pub struct SqsInbox {
    pub client: aws_sdk_sqs::Client,
    pub urls: HashMap<QueueName, String>,
    pub kept: Arc<crate::kept::Kept>,
}

impl SqsInbox {
    fn url(&self, queue: QueueName) -> Result<&str, String> {
        self.urls
            .get(&queue)
            .map(String::as_str)
            .ok_or_else(|| format!("queue {} not provisioned", queue.as_str()))
    }

    /// What a runtime before this one received and never deleted (it was killed holding
    /// it) made visible in its queue again at once, not after the visibility timeout. A
    /// receipt that ran out meanwhile is no error: its message is visible already.
    pub async fn hand_back_held(&self) -> Result<usize, String> {
        let mut handed = 0;
        for (name, receipt) in self.kept.held().await? {
            if let Some(queue) = QueueName::ALL.into_iter().find(|q| q.as_str() == name) {
                let back = self
                    .client
                    .change_message_visibility()
                    .queue_url(self.url(queue)?)
                    .receipt_handle(&receipt)
                    .visibility_timeout(0)
                    .send()
                    .await;
                handed += usize::from(back.is_ok());
            }
            self.kept.release(&name, &[receipt]).await?;
        }
        Ok(handed)
    }

    /// How many messages `queue` holds: visible, in flight and delayed.
    pub async fn holding(&self, queue: QueueName) -> Result<usize, String> {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(self.url(queue)?)
            .attribute_names(A::ApproximateNumberOfMessages)
            .attribute_names(A::ApproximateNumberOfMessagesNotVisible)
            .attribute_names(A::ApproximateNumberOfMessagesDelayed)
            .send()
            .await
            .map_err(|e| format!("attributes: {:?}", e.as_service_error().map(|e| e.to_string())))?;
        Ok(out
            .attributes
            .unwrap_or_default()
            .values()
            .filter_map(|n| n.parse::<usize>().ok())
            .sum())
    }
}

#[async_trait]
impl Inbox for SqsInbox {
    async fn receive(&self, queue: QueueName) -> Result<Vec<Received>, String> {
        let received = self
            .client
            .receive_message()
            .queue_url(self.url(queue)?)
            .max_number_of_messages(10)
            .wait_time_seconds(0)
            .send()
            .await
            .map_err(|e| format!("receive: {:?}", e.as_service_error().map(|e| e.to_string())))?;
        let received: Vec<Received> = received
            .messages
            .unwrap_or_default()
            .into_iter()
            .map(|m| Received {
                id: m.message_id.unwrap_or_default(),
                body: m.body.unwrap_or_default(),
                receipt: m.receipt_handle.unwrap_or_default(),
            })
            .collect();
        if !received.is_empty() {
            let receipts: Vec<String> = received.iter().map(|r| r.receipt.clone()).collect();
            if let Err(e) = self.kept.hold(queue.as_str(), &receipts).await {
                tracing::warn!(error = %e, "held messages not kept; after a restart they wait out their visibility timeout");
            }
        }
        Ok(received)
    }

    async fn delete(&self, queue: QueueName, receipts: Vec<String>) -> Result<(), String> {
        if receipts.is_empty() {
            return Ok(());
        }
        let entries = receipts
            .iter()
            .enumerate()
            .filter_map(|(i, receipt)| {
                DeleteMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(receipt.clone())
                    .build()
                    .ok()
            })
            .collect();
        self.client
            .delete_message_batch()
            .queue_url(self.url(queue)?)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| format!("delete: {:?}", e.as_service_error().map(|e| e.to_string())))?;
        if let Err(e) = self.kept.release(queue.as_str(), &receipts).await {
            tracing::warn!(error = %e, "handled messages still kept as held");
        }
        Ok(())
    }
}

struct Message {
    id: u64,
    body: String,
    visible_at: Instant,
    /// The receipt of the current delivery; a stale receipt deletes nothing.
    receipt: Option<String>,
}

/// Queues in this process's memory, with SQS's delay and visibility timeout (wall time, as
/// SQS counts them).
#[derive(Default)]
pub struct MemoryQueues {
    queues: Mutex<HashMap<QueueName, VecDeque<Message>>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl MemoryQueues {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<QueueName, VecDeque<Message>>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Queue for MemoryQueues {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError> {
        let now = Instant::now();
        let mut queues = self.lock();
        let waiting = queues.entry(queue).or_default();
        for (body, delay) in messages {
            // Whole seconds, 0–900, as SQS's `DelaySeconds` (and the SQS adapter) count them.
            let delay = Duration::from_secs(delay.as_secs().clamp(0, 900).unsigned_abs());
            waiting.push_back(Message {
                id: self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                body,
                visible_at: now + delay,
                receipt: None,
            });
        }
        Ok(())
    }
}

#[async_trait]
impl Inbox for MemoryQueues {
    async fn receive(&self, queue: QueueName) -> Result<Vec<Received>, String> {
        let now = Instant::now();
        let mut queues = self.lock();
        let Some(waiting) = queues.get_mut(&queue) else {
            return Ok(Vec::new());
        };
        let mut batch = Vec::new();
        for message in waiting.iter_mut().filter(|m| m.visible_at <= now).take(10) {
            let receipt = format!("{}-{}", message.id, ulid::Ulid::new());
            message.visible_at = now + VISIBILITY_TIMEOUT;
            message.receipt = Some(receipt.clone());
            batch.push(Received {
                id: message.id.to_string(),
                body: message.body.clone(),
                receipt,
            });
        }
        Ok(batch)
    }

    async fn delete(&self, queue: QueueName, receipts: Vec<String>) -> Result<(), String> {
        if let Some(waiting) = self.lock().get_mut(&queue) {
            waiting.retain(|m| !m.receipt.as_ref().is_some_and(|r| receipts.contains(r)));
        }
        Ok(())
    }
}

/// The queues as the runtime wires them: the engine sends through it (to SQS or memory), the
/// consumers receive through it. It counts what this process sent and has not yet seen
/// deleted, so a drain asks only the queues that can hold something (an idle `/_local/run`
/// asks none), and every send wakes the background consumer.
pub struct LocalQueues {
    sender: Arc<dyn Queue>,
    inbox: Arc<dyn Inbox>,
    pub wake: Notify,
    outstanding: Mutex<HashMap<QueueName, usize>>,
}

impl LocalQueues {
    pub fn new(sender: Arc<dyn Queue>, inbox: Arc<dyn Inbox>) -> Self {
        Self {
            sender,
            inbox,
            wake: Notify::new(),
            outstanding: Mutex::new(HashMap::new()),
        }
    }

    /// `queue` holds `n` messages this process did not send (a runtime before it did): a
    /// drain asks it until they are handled.
    pub fn expect(&self, queue: QueueName, n: usize) {
        *self.outstanding().entry(queue).or_default() += n;
    }

    fn outstanding(&self) -> std::sync::MutexGuard<'_, HashMap<QueueName, usize>> {
        self.outstanding.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A batch from `queue`: only if this process sent it something not yet handled, unless
    /// `everything` (the background consumer's periodic look, for messages that reached the
    /// queue from elsewhere — an SNS subscription in AWS).
    pub async fn receive(&self, queue: QueueName, everything: bool) -> Result<Vec<Received>, String> {
        if !everything && self.outstanding().get(&queue).copied().unwrap_or(0) == 0 {
            return Ok(Vec::new());
        }
        self.inbox.receive(queue).await
    }

    pub async fn delete(&self, queue: QueueName, receipts: Vec<String>) -> Result<(), String> {
        let handled = receipts.len();
        self.inbox.delete(queue, receipts).await?;
        let mut outstanding = self.outstanding();
        let count = outstanding.entry(queue).or_default();
        *count = count.saturating_sub(handled);
        Ok(())
    }
}

#[async_trait]
impl Queue for LocalQueues {
    async fn send(&self, queue: QueueName, messages: Vec<(String, SignedDuration)>) -> Result<(), QueueError> {
        let sent = messages.len();
        self.sender.send(queue, messages).await?;
        *self.outstanding().entry(queue).or_default() += sent;
        self.wake.notify_one();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(received: &[Received]) -> Vec<&str> {
        received.iter().map(|r| r.body.as_str()).collect()
    }

    #[tokio::test]
    async fn a_message_is_hidden_while_held_gone_once_deleted_and_back_if_not() {
        let queues = MemoryQueues::default();
        queues
            .send(
                QueueName::Execute,
                vec![("a".into(), SignedDuration::ZERO), ("b".into(), SignedDuration::ZERO)],
            )
            .await
            .expect("send");
        let first = queues.receive(QueueName::Execute).await.expect("receive");
        assert_eq!(body(&first), ["a", "b"]);
        assert!(
            queues.receive(QueueName::Execute).await.expect("receive").is_empty(),
            "held messages are invisible"
        );
        queues
            .delete(QueueName::Execute, vec![first[0].receipt.clone()])
            .await
            .expect("delete");
        // Not deleted: visible again after the timeout (moved here by hand, not waited for).
        for m in queues.lock().get_mut(&QueueName::Execute).expect("queue").iter_mut() {
            m.visible_at = Instant::now();
        }
        let again = queues.receive(QueueName::Execute).await.expect("receive");
        assert_eq!(body(&again), ["b"]);
        // The first delivery's receipt no longer deletes it.
        queues
            .delete(QueueName::Execute, vec![first[1].receipt.clone()])
            .await
            .expect("delete");
        assert_eq!(queues.lock()[&QueueName::Execute].len(), 1);
    }

    #[tokio::test]
    async fn a_delayed_message_waits_and_queues_are_separate() {
        let queues = MemoryQueues::default();
        queues
            .send(QueueName::Followup, vec![("later".into(), SignedDuration::from_secs(30))])
            .await
            .expect("send");
        assert!(queues.receive(QueueName::Followup).await.expect("receive").is_empty());
        assert!(queues.receive(QueueName::Execute).await.expect("receive").is_empty());
        assert_eq!(queues.lock()[&QueueName::Followup].len(), 1);
    }
}

#[cfg(test)]
mod local_tests {
    use super::*;

    #[tokio::test]
    async fn a_queue_is_asked_only_while_it_holds_what_was_sent() {
        let memory = Arc::new(MemoryQueues::default());
        let queues = LocalQueues::new(memory.clone(), memory.clone());
        // Something sent from elsewhere is seen only by a look at everything.
        memory
            .send(QueueName::Signals, vec![("external".into(), SignedDuration::ZERO)])
            .await
            .expect("send");
        assert!(queues.receive(QueueName::Signals, false).await.expect("receive").is_empty());
        let external = queues.receive(QueueName::Signals, true).await.expect("receive");
        assert_eq!(external.len(), 1);
        queues
            .delete(QueueName::Signals, vec![external[0].receipt.clone()])
            .await
            .expect("delete");

        queues
            .send(QueueName::Execute, vec![("a".into(), SignedDuration::ZERO)])
            .await
            .expect("send");
        let held = queues.receive(QueueName::Execute, false).await.expect("receive");
        assert_eq!(held.len(), 1);
        queues
            .delete(QueueName::Execute, vec![held[0].receipt.clone()])
            .await
            .expect("delete");
        assert_eq!(queues.outstanding().get(&QueueName::Execute), Some(&0));
        assert!(queues.receive(QueueName::Execute, false).await.expect("receive").is_empty());
    }
}
