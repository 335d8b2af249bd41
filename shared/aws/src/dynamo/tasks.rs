//! [`TaskWrites`] and [`TaskReads`] on DynamoDB: the task item, its log and conversation items,
//! its active guard and its outbound records. A creation and a `commit` are one transaction
//! each, with everything the change moves: the reservation, the reply routes, the creation
//! counters, the learning record.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, TransactWriteItem, Update};
use jiff::civil::Date;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, MemberId, TaskId};
use openloop_core::learning::interaction::InteractionOutcome;
use openloop_core::ports::{AccountStore, CommitExtras, TaskReads, TaskWrites};
use openloop_core::task::commit::{SendEffect, TaskCommit};
use openloop_core::task::flood::{CreationQuota, closes_task, reopens_task};
use openloop_core::task::history::TaskHistory;
use openloop_core::task::tally::TaskTally;
use openloop_core::task::{ConversationMessage, LogEntry, OutboundMessage, Task};

use crate::keys::*;

use super::items::{from_item, keyed, n, s, sk_of};
use super::member_open_tasks::{OpenChange, open_value};
use super::{DynamoStore, Item, build_error};

#[async_trait]
impl TaskWrites for DynamoStore {
    async fn create_task(&self, task: &Task, log: &LogEntry, messages: &[ConversationMessage]) -> Result<(), StoreError> {
        self.create_task_within(task, log, messages, &CreationQuota::unlimited()).await
    }

    async fn create_task_within(
        &self,
        task: &Task,
        log: &LogEntry,
        messages: &[ConversationMessage],
        quota: &CreationQuota,
    ) -> Result<(), StoreError> {
        let mut writes = Vec::new();
        if task.is_active() {
            let guard: Item = HashMap::from([
                (PK.into(), s(account_pk(task.account_id))),
                (SK.into(), s(active_sk(&task.member.id, &task.task_type))),
                (KIND.into(), s("active_guard")),
                ("task_id".into(), s(task.id.to_string())),
            ]);
            writes.push((self.put_new(guard)?, Some(Conflict::ActiveTask)));
            // The member's open tasks, with the guard (another creation's write of the member
            // item at once is a lost race: tried again).
            writes.push((
                self.open_tasks_update(task.account_id, &task.member.id, task.id, OpenChange::Opens)?,
                None,
            ));
        }
        writes.push((self.put_new(self.task_put(task)?)?, Some(Conflict::AlreadyExists)));
        if let Some(claim) = &quota.once {
            writes.push((self.once_claim(claim)?, Some(Conflict::Claimed)));
        }
        writes.extend(self.tally_writes(task)?.into_iter().map(|w| (w, None)));
        writes.push((self.plain_put(self.log_item(task, log)?)?, None));
        for message in messages {
            writes.push((self.plain_put(self.message_item(task, message)?)?, None));
        }
        if task.is_active() {
            writes.extend(self.creation_counter_writes(task, quota)?);
        }
        self.transact(writes).await
    }

    async fn commit(&self, commit: &TaskCommit) -> Result<(), StoreError> {
        self.commit_with(commit, &CommitExtras::default()).await
    }

    async fn commit_with(&self, commit: &TaskCommit, extras: &CommitExtras) -> Result<(), StoreError> {
        let task = &commit.task;
        let pk = account_pk(task.account_id);
        let mut writes = Vec::new();
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(self.task_put(task)?))
            .condition_expression("#v = :v")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":v", n(commit.expected_version))
            .build()
            .map_err(build_error)?;
        writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::Version)));
        // The owner's numbers move with the task, in its transaction (under its version).
        writes.extend(self.tally_writes(task)?.into_iter().map(|w| (w, None)));
        for entry in &commit.log {
            writes.push((self.plain_put(self.log_item(task, entry)?)?, None));
        }
        for message in &commit.messages {
            writes.push((self.plain_put(self.message_item(task, message)?)?, None));
        }
        writes.extend(self.commit_loop_writes(&commit.loops)?);
        // The owner's webhook events the change causes, written with it (unless the step
        // knew the account has no endpoint).
        if commit.webhooks {
            for event in openloop_core::owner::webhook_event::of_commit(commit) {
                let item = openloop_core::owner::webhook_event::OutboxItem::new(event);
                writes.push((self.plain_put(super::webhooks::outbox_item(&item)?)?, None));
            }
        }
        let member_key = |member: &MemberId| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(member_sk(member)))]);
        // Closing frees the active guard; revising a task that was already closed (attribution)
        // leaves it alone, as a newer task of the member and type may hold it by now. The
        // member's open tasks move with the guard: in the ledger's update when the commit
        // writes the member item for its send, else in an update of their own.
        let revises_closed = !commit.log.is_empty() && commit.log.iter().all(|e| e.from_status.is_some_and(|f| f.is_terminal()));
        let frees_guard = !task.is_active() && !revises_closed;
        let takes_guard = reopens_task(commit) && task.is_active();
        let mut open_change = match (frees_guard, takes_guard) {
            (true, _) => Some(OpenChange::Closes),
            (_, true) => Some(OpenChange::Opens),
            _ => None,
        };
        let daily_key = |date: &Date| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(sends_sk(*date)))]);
        match &commit.send {
            Some(SendEffect::Reserve {
                outbound,
                member_id,
                ledger,
                daily_date,
                daily_limit,
            }) => {
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(self.outbound_item(task.account_id, outbound)?))
                    .condition_expression("attribute_not_exists(PK) OR #status = :failed")
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":failed", s("failed"))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::OutboundExists)));
                // The mail may leave the moment it is reserved: where its replies belong is
                // written now, so a reply to a send nobody lived to record reaches its task.
                writes.push((self.plain_put(route_item(task_route_pk(task.id), task))?, None));
                writes.push((self.plain_put(route_item(message_route_pk(&outbound.message_id), task))?, None));
                let sends: Item = ledger.sends.iter().map(|(k, at)| (k.clone(), s(at.to_string()))).collect();
                let open = open_change.take_if(|_| *member_id == task.member.id);
                let expression = match open {
                    Some(OpenChange::Opens) => "SET ledger = :ledger, ledger_version = :nv, #kind = :kind ADD open_tasks :open",
                    Some(OpenChange::Closes) => "SET ledger = :ledger, ledger_version = :nv, #kind = :kind DELETE open_tasks :open",
                    None => "SET ledger = :ledger, ledger_version = :nv, #kind = :kind",
                };
                let mut update = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(member_id)))
                    .update_expression(expression)
                    .expression_attribute_names("#kind", KIND)
                    .expression_attribute_values(":ledger", AttributeValue::M(sends))
                    .expression_attribute_values(":nv", n(ledger.version))
                    .expression_attribute_values(":kind", s("member"));
                if open.is_some() {
                    update = update.expression_attribute_values(":open", open_value(task.id));
                }
                update = if ledger.version <= 1 {
                    update.condition_expression("attribute_not_exists(ledger_version)")
                } else {
                    update
                        .condition_expression("ledger_version = :pv")
                        .expression_attribute_values(":pv", n(ledger.version - 1))
                };
                writes.push((
                    TransactWriteItem::builder().update(update.build().map_err(build_error)?).build(),
                    Some(Conflict::MemberLedger),
                ));
                let daily = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(daily_key(daily_date)))
                    .update_expression("ADD sent :one SET #kind = :kind")
                    .condition_expression("attribute_not_exists(sent) OR sent < :limit")
                    .expression_attribute_names("#kind", KIND)
                    .expression_attribute_values(":one", n(1))
                    .expression_attribute_values(":limit", n(*daily_limit))
                    .expression_attribute_values(":kind", s("daily_sends"))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(daily).build(), Some(Conflict::DailyLimit)));
                writes.push((self.count_send(task.account_id, 1)?, None));
            }
            Some(SendEffect::Record { outbound }) => {
                writes.push((self.plain_put(self.outbound_item(task.account_id, outbound)?)?, None));
                // The task's route and our Message-ID's were written with the reservation.
                if let Some(id) = &outbound.provider_message_id {
                    writes.push((self.plain_put(route_item(message_route_pk(id), task))?, None));
                }
            }
            Some(SendEffect::Release {
                outbound,
                member_id,
                ledger_key,
                daily_date,
            }) => {
                writes.push((self.plain_put(self.outbound_item(task.account_id, outbound)?)?, None));
                let open = open_change.take_if(|_| *member_id == task.member.id);
                let expression = match open {
                    Some(OpenChange::Opens) => "REMOVE ledger.#k ADD ledger_version :one, open_tasks :open",
                    Some(OpenChange::Closes) => "REMOVE ledger.#k ADD ledger_version :one DELETE open_tasks :open",
                    None => "REMOVE ledger.#k ADD ledger_version :one",
                };
                let mut member = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(member_id)))
                    .update_expression(expression)
                    .expression_attribute_names("#k", ledger_key)
                    .expression_attribute_values(":one", n(1));
                if open.is_some() {
                    member = member.expression_attribute_values(":open", open_value(task.id));
                }
                let member = member.build().map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(member).build(), Some(Conflict::MemberLedger)));
                let daily = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(daily_key(daily_date)))
                    .update_expression("ADD sent :minus")
                    .expression_attribute_values(":minus", n(-1))
                    .build()
                    .map_err(build_error)?;
                writes.push((TransactWriteItem::builder().update(daily).build(), None));
                writes.push((self.count_send(task.account_id, -1)?, None));
            }
            None => {}
        }
        if let Some(change) = open_change {
            writes.push((self.open_tasks_update(task.account_id, &task.member.id, task.id, change)?, None));
        }
        if frees_guard {
            let delete = Delete::builder()
                .table_name(&self.table)
                .key(PK, s(pk.clone()))
                .key(SK, s(active_sk(&task.member.id, &task.task_type)))
                .condition_expression("attribute_not_exists(PK) OR task_id = :t")
                .expression_attribute_values(":t", s(task.id.to_string()))
                .build()
                .map_err(build_error)?;
            writes.push((TransactWriteItem::builder().delete(delete).build(), None));
        }
        if closes_task(commit) {
            writes.push((self.counter_add(task.account_id, OPEN_TASKS_SK.into(), -1, None, None)?, None));
        }
        // The owner's reopen: the guard again (refused while a newer task of the member and
        // type holds it), an open task again, and the tally of its close gone (its key is the
        // close's time, still on the task until it closes again).
        if takes_guard {
            let guard: Item = HashMap::from([
                (PK.into(), s(pk.clone())),
                (SK.into(), s(active_sk(&task.member.id, &task.task_type))),
                (KIND.into(), s("active_guard")),
                ("task_id".into(), s(task.id.to_string())),
            ]);
            writes.push((self.put_new(guard)?, Some(Conflict::ActiveTask)));
            writes.push((self.counter_add(task.account_id, OPEN_TASKS_SK.into(), 1, None, None)?, None));
            let closed_tally = Delete::builder()
                .table_name(&self.table)
                .key(PK, s(pk.clone()))
                .key(SK, s(tally_closed_sk(TaskTally::closed_at(task), task.id)))
                .build()
                .map_err(build_error)?;
            writes.push((TransactWriteItem::builder().delete(closed_tally).build(), None));
        }
        // The learning record rides on the close (and on every revision of a closed task):
        // one read of the account's settings for its time zone and business type.
        if !task.is_active() {
            // The account the step read, when it says so; else one read.
            let owner = match extras.account.as_ref().filter(|a| a.id == task.account_id) {
                Some(known) => Some(known.clone()),
                None => self.get_account(task.account_id).await?,
            };
            let settings = owner.as_ref().map(|a| a.settings.clone());
            let record = InteractionOutcome::of(task, settings.as_ref()).map(|r| match &owner {
                Some(a) => r.contributed_by(a.webhook_secret.expose().as_bytes()),
                None => r,
            });
            if let Some(record) = record {
                let private = keyed(&record, pk.clone(), interaction_sk(task.id), "interaction")?;
                writes.push((self.plain_put(private)?, None));
                // The cross-tenant copy only while the owner lets the account contribute.
                if settings.as_ref().is_none_or(|s| s.share_learning) {
                    let shared = keyed(
                        &record.shared,
                        learning_pk(&record.month()),
                        learning_sk(&record.shared.task_type, task.id),
                        "learning",
                    )?;
                    writes.push((self.plain_put(shared)?, None));
                }
            }
        }
        writes.extend(self.extra_writes(task.account_id, extras)?);
        self.transact(writes).await
    }
}

#[async_trait]
impl TaskReads for DynamoStore {
    async fn get_task(&self, account: AccountId, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.get(account_pk(account), &task_sk(id)).await?.map(from_item).transpose()
    }

    async fn get_tasks(&self, account: AccountId, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let pk = account_pk(account);
        let keys = ids
            .iter()
            .map(|id| HashMap::from([(PK.to_owned(), s(pk.clone())), (SK.to_owned(), s(task_sk(*id)))]))
            .collect();
        let found: HashMap<TaskId, Task> = self
            .batch_get(keys)
            .await?
            .into_iter()
            .map(|item| from_item::<Task>(item).map(|t| (t.id, t)))
            .collect::<Result<_, _>>()?;
        Ok(ids.iter().filter_map(|id| found.get(id).cloned()).collect())
    }

    async fn active_task(&self, account: AccountId, member: &MemberId, task_type: &str) -> Result<Option<TaskId>, StoreError> {
        let Some(item) = self.get(account_pk(account), &active_sk(member, task_type)).await? else {
            return Ok(None);
        };
        Ok(item.get("task_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
    }

    async fn member_active_tasks(&self, account: AccountId, member: &MemberId) -> Result<Vec<Task>, StoreError> {
        let pk = account_pk(account);
        let guards = self
            .query_all(None, PK, pk.clone(), Some(active_member_prefix(member)), true)
            .await?;
        let ids: Vec<TaskId> = guards
            .iter()
            .filter_map(|g| g.get("task_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
            .collect();
        let mut tasks = self.get_tasks(account, &ids).await?;
        tasks.retain(Task::is_active);
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }

    async fn member_active_tasks_besides(&self, account: AccountId, member: &MemberId, known: &Task) -> Result<Vec<Task>, StoreError> {
        let pk = account_pk(account);
        let guards = self
            .query_all(None, PK, pk.clone(), Some(active_member_prefix(member)), true)
            .await?;
        let ids: Vec<TaskId> = guards
            .iter()
            .filter_map(|g| g.get("task_id").and_then(|v| v.as_s().ok()).and_then(|v| v.parse().ok()))
            .collect();
        // The step's own task as it read it: only the member's other tasks are read.
        let others: Vec<TaskId> = ids.iter().copied().filter(|id| *id != known.id).collect();
        let mut tasks = if others.is_empty() {
            Vec::new()
        } else {
            self.get_tasks(account, &others).await?
        };
        if ids.contains(&known.id) {
            tasks.push(known.clone());
        }
        tasks.retain(Task::is_active);
        tasks.sort_by_key(|t| t.id);
        Ok(tasks)
    }

    async fn task_with_conversation(&self, account: AccountId, id: TaskId) -> Result<Option<(Task, Vec<ConversationMessage>)>, StoreError> {
        // One query: the task, its log and its conversation share the key's prefix.
        let items = self.query_all(None, PK, account_pk(account), Some(task_sk(id)), true).await?;
        let task_key = task_sk(id);
        let conversation_prefix = format!("{task_key}#CONV#");
        let (mut task, mut messages) = (None, Vec::new());
        for item in items {
            let sk = sk_of(&item).to_owned();
            if sk == task_key {
                task = Some(from_item::<Task>(item)?);
            } else if sk.starts_with(&conversation_prefix) {
                messages.push(from_item::<ConversationMessage>(item)?);
            }
        }
        Ok(task.map(|t| (t, messages)))
    }

    async fn task_history(&self, account: AccountId, id: TaskId) -> Result<Option<TaskHistory>, StoreError> {
        // One query returns the task, its log and its conversation (they share the prefix).
        let items = self.query_all(None, PK, account_pk(account), Some(task_sk(id)), true).await?;
        let (mut task, mut log, mut messages) = (None, Vec::new(), Vec::new());
        let task_key = task_sk(id);
        for item in items {
            let sk = sk_of(&item).to_owned();
            if sk == task_key {
                task = Some(from_item::<Task>(item)?);
            } else if sk.starts_with(&format!("{task_key}#LOG#")) {
                log.push(from_item::<LogEntry>(item)?);
            } else if sk.starts_with(&format!("{task_key}#CONV#")) {
                messages.push(from_item::<ConversationMessage>(item)?);
            }
        }
        let Some(task) = task else { return Ok(None) };
        let outbound = self.outbound(account, id).await?;
        Ok(Some(TaskHistory {
            task,
            log,
            messages,
            outbound,
        }))
    }

    async fn outbound(&self, account: AccountId, task: TaskId) -> Result<Vec<OutboundMessage>, StoreError> {
        let items = self
            .query_all(None, PK, account_pk(account), Some(outbound_prefix(task)), true)
            .await?;
        items.into_iter().map(from_item).collect()
    }
}

/// A reply-routing item (see `keys::task_route_pk`).
fn route_item(pk: String, task: &Task) -> Item {
    HashMap::from([
        (PK.into(), s(pk)),
        (SK.into(), s(ROUTE_SK)),
        (KIND.into(), s("route")),
        ("account_id".into(), s(task.account_id.to_string())),
        ("task_id".into(), s(task.id.to_string())),
    ])
}

impl DynamoStore {
    /// One creation counter: `ADD n 1`, below `max` if given, forgotten at `ttl` if given.
    /// The account's count of sends (the bounce window's, spec §33.3), moved with the
    /// reservation that counts or gives back a send.
    fn count_send(&self, account: AccountId, by: i64) -> Result<TransactWriteItem, StoreError> {
        let update = Update::builder()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(DELIVERABILITY_SK))
            .update_expression("ADD sends :by SET #kind = :kind")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":by", n(by))
            .expression_attribute_values(":kind", s("deliverability"))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    fn counter_add(
        &self,
        account: AccountId,
        sk: String,
        by: i64,
        max: Option<u32>,
        ttl: Option<i64>,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut expression = "ADD #n :by SET #kind = :kind".to_owned();
        let mut update = Update::builder()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(sk))
            .expression_attribute_names("#n", "n")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":by", n(by))
            .expression_attribute_values(":kind", s("creation_counter"));
        if let Some(ttl) = ttl {
            expression.push_str(", #ttl = :ttl");
            update = update
                .expression_attribute_names("#ttl", TTL)
                .expression_attribute_values(":ttl", n(ttl));
        }
        if let Some(max) = max {
            update = update
                .condition_expression("attribute_not_exists(#n) OR #n < :max")
                .expression_attribute_values(":max", n(max));
        }
        let update = update.update_expression(expression).build().map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The counters a new open task moves (see [`TaskWrites::create_task_within`]), each with
    /// the conflict its condition stands for.
    fn creation_counter_writes(
        &self,
        task: &Task,
        quota: &CreationQuota,
    ) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        let account = task.account_id;
        let mut writes = vec![(
            self.counter_add(account, OPEN_TASKS_SK.into(), 1, quota.active_max, None)?,
            Some(Conflict::ActiveTasks),
        )];
        if let Some(date) = quota.date {
            let ttl = Some(quota.counters_expire_at.as_second());
            writes.push((
                self.counter_add(account, created_sk(date), 1, quota.daily_max, ttl)?,
                Some(Conflict::DailyTasks),
            ));
            if let Some(agent) = &quota.agent {
                writes.push((
                    self.counter_add(account, agent_created_sk(date), 1, Some(agent.daily_max), ttl)?,
                    Some(Conflict::AgentTasks),
                ));
                writes.push((
                    self.counter_add(
                        account,
                        agent_member_created_sk(date, &agent.member),
                        1,
                        Some(agent.member_max),
                        ttl,
                    )?,
                    Some(Conflict::MemberAgentTasks),
                ));
            }
        }
        Ok(writes)
    }
}

impl DynamoStore {
    /// A commit's [`CommitExtras`] as transaction items, each with the conflict its condition
    /// reports.
    fn extra_writes(&self, account: AccountId, extras: &CommitExtras) -> Result<Vec<(TransactWriteItem, Option<Conflict>)>, StoreError> {
        let mut writes = Vec::new();
        if let Some(ai) = &extras.ai_call {
            let update = Update::builder()
                .table_name(&self.table)
                .key(PK, s(account_pk(account)))
                .key(SK, s(ai_calls_sk(ai.date)))
                .update_expression("SET #kind = :kind, calls = :next")
                .expression_attribute_names("#kind", KIND)
                .expression_attribute_values(":kind", s("ai_calls"))
                .expression_attribute_values(":next", n(ai.seen + 1));
            let update = if ai.seen == 0 {
                update.condition_expression("attribute_not_exists(calls)")
            } else {
                update
                    .condition_expression("calls = :seen")
                    .expression_attribute_values(":seen", n(ai.seen))
            };
            writes.push((
                TransactWriteItem::builder().update(update.build().map_err(build_error)?).build(),
                Some(Conflict::AiCalls),
            ));
        }
        for claim in &extras.claim_actions {
            let item = keyed(claim, account_pk(claim.account_id), action_sk(claim.task_id, &claim.key), "action")?;
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(PK) OR #state = :failed")
                .expression_attribute_names("#state", "state")
                .expression_attribute_values(":failed", s("failed"))
                .build()
                .map_err(build_error)?;
            writes.push((TransactWriteItem::builder().put(put).build(), Some(Conflict::AlreadyExists)));
        }
        for finished in &extras.finish_actions {
            let item = keyed(
                finished,
                account_pk(finished.account_id),
                action_sk(finished.task_id, &finished.key),
                "action",
            )?;
            writes.push((self.plain_put(item)?, None));
        }
        if let Some(claim) = &extras.claim {
            writes.push((self.once_claim(claim)?, Some(Conflict::Claimed)));
        }
        Ok(writes)
    }
}
