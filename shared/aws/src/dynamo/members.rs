//! [`MemberStore`] on DynamoDB: the member item (facts and send ledger), the suppression items,
//! and the send gates' snapshot in one batch read.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use jiff::Timestamp;
use jiff::civil::Date;

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, Email, MemberId};
use openloop_core::members::member::{MemberFacts, SendLedger};
use openloop_core::ports::MemberStore;
use openloop_core::rails::send_gate::{DraftReads, SendSnapshot, dates_around};

use crate::keys::*;

use super::items::{decode_cursor, encode_cursor, from_item, n, s, sk_of, to_item};
use super::{DynamoStore, Item, unavailable};

#[async_trait]
impl MemberStore for DynamoStore {
    async fn get_member(&self, account: AccountId, member: &MemberId) -> Result<Option<(MemberFacts, SendLedger)>, StoreError> {
        let item = self.get(account_pk(account), &member_sk(member)).await?;
        item.map(|item| member_from_item(&item, member)).transpose()
    }

    async fn save_member_facts(&self, account: AccountId, facts: &MemberFacts) -> Result<(), StoreError> {
        self.count();
        let token = super::write_token();
        let mut req = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(member_sk(&facts.member_id)))
            .update_expression("SET facts = :f, facts_version = :v, #kind = :kind, #token = :token")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_names("#token", WRITE_TOKEN)
            .expression_attribute_values(":token", s(token.clone()))
            .expression_attribute_values(":f", AttributeValue::M(to_item(facts)?))
            .expression_attribute_values(":v", n(facts.version))
            .expression_attribute_values(":kind", s("member"));
        req = if facts.version <= 1 {
            req.condition_expression("attribute_not_exists(facts_version)")
        } else {
            req.condition_expression("facts_version = :pv")
                .expression_attribute_values(":pv", n(facts.version - 1))
        };
        match req.send().await {
            Ok(_) => Ok(()),
            // Our own update, applied with its answer lost and met again by the SDK's retry.
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => {
                if self.written_by(&account_pk(account), &member_sk(&facts.member_id), &token).await? {
                    return Ok(());
                }
                Err(StoreError::Conflict(Conflict::MemberFacts))
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn list_member_facts(
        &self,
        account: AccountId,
        limit: usize,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberFacts>, Option<String>), StoreError> {
        let pk = account_pk(account);
        let mut start = match cursor {
            Some(c) => Some(decode_cursor(&c, (PK, &pk))?),
            None => None,
        };
        let limit = limit.clamp(1, 1000);
        let mut facts = Vec::new();
        loop {
            self.count();
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("PK = :pk AND begins_with(SK, :prefix)")
                .expression_attribute_values(":pk", s(pk.clone()))
                .expression_attribute_values(":prefix", s(MEMBER_PREFIX))
                .limit(i32::try_from(limit - facts.len()).unwrap_or(1))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(unavailable)?;
            for item in out.items.unwrap_or_default() {
                // A member item may hold only a send ledger (no facts yet): not a member to scan.
                if item.contains_key("facts") {
                    let id = sk_of(&item).strip_prefix(MEMBER_PREFIX).unwrap_or_default().to_owned();
                    let member = MemberId::parse(&id).map_err(|e| StoreError::Corrupt {
                        key: sk_of(&item).to_owned(),
                        reason: e.to_string(),
                    })?;
                    facts.push(member_from_item(&item, &member)?.0);
                }
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => {
                    if facts.len() >= limit {
                        return Ok((facts, Some(encode_cursor(&key))));
                    }
                    start = Some(key);
                }
                _ => return Ok((facts, None)),
            }
        }
    }

    async fn send_snapshot(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
    ) -> Result<SendSnapshot, StoreError> {
        self.snapshot_batch(account, member, email, around, None).await
    }

    async fn send_snapshot_for_draft(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
        template: (&str, &str),
    ) -> Result<SendSnapshot, StoreError> {
        self.snapshot_batch(account, member, email, around, Some(template)).await
    }

    async fn is_suppressed(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        Ok(self.get(account_pk(account), &suppress_sk(email)).await?.is_some())
    }

    async fn put_suppression(&self, account: AccountId, email: &Email, reason: &str, at: Timestamp) -> Result<(), StoreError> {
        self.count();
        self.client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(account_pk(account)))
            .item(SK, s(suppress_sk(email)))
            .item(KIND, s("suppression"))
            .item("email", s(email.as_str()))
            .item("reason", s(reason))
            .item("created_at", s(at.to_string()))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn delete_suppression(&self, account: AccountId, email: &Email) -> Result<bool, StoreError> {
        self.delete(account_pk(account), &suppress_sk(email)).await
    }
}

impl DynamoStore {
    /// The send snapshot's one batch read; with `template`, the draft's reads too.
    async fn snapshot_batch(
        &self,
        account: AccountId,
        member: &MemberId,
        email: Option<&Email>,
        around: Date,
        template: Option<(&str, &str)>,
    ) -> Result<SendSnapshot, StoreError> {
        let pk = account_pk(account);
        let key = |pk: String, sk: String| HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))]);
        let mut keys = vec![
            key(SYSTEM_PK.into(), CONFIG_SK.into()),
            key(pk.clone(), PROFILE_SK.into()),
            key(pk.clone(), member_sk(member)),
            key(pk.clone(), annotations_sk(member)),
            key(pk.clone(), MEMORIES_SK.into()),
        ];
        if let Some(email) = email {
            keys.push(key(pk.clone(), suppress_sk(email)));
        }
        let dates = dates_around(around);
        keys.extend(dates.iter().map(|d| key(pk.clone(), sends_sk(*d))));
        let template_sk = template.map(|(task_type, touch)| message_template_sk(task_type, touch));
        if let Some(sk) = &template_sk {
            keys.push(key(pk.clone(), sk.clone()));
            keys.push(key(pk.clone(), CONNECTION_SK.into()));
            keys.extend(dates.iter().map(|d| key(pk.clone(), ai_calls_sk(*d))));
        }
        let items = self.batch_get(keys).await?;
        let mut snapshot = SendSnapshot {
            daily: dates.iter().map(|d| (*d, 0)).collect(),
            draft: template.map(|(task_type, touch)| DraftReads {
                key: (task_type.to_owned(), touch.to_owned()),
                ai_calls: dates.iter().map(|d| (*d, 0)).collect(),
                ..DraftReads::default()
            }),
            ..SendSnapshot::default()
        };
        let mut open_tasks = Vec::new();
        for item in items {
            let sk = sk_of(&item).to_owned();
            if sk == CONFIG_SK {
                snapshot.system = from_item(item)?;
            } else if sk == PROFILE_SK {
                snapshot.account = Some(from_item(item)?);
            } else if sk == MEMORIES_SK {
                snapshot.memories = super::memories::from_stored(item)?;
            } else if sk.starts_with("ANNOTATIONS#") {
                snapshot.annotations = super::annotations::from_stored(item)?;
            } else if sk.starts_with("MEMBER#") {
                open_tasks = super::member_open_tasks::open_tasks_of(&item);
                let (facts, ledger) = member_from_item(&item, member)?;
                snapshot.ledger = ledger;
                snapshot.facts = item.contains_key("facts").then_some(facts);
            } else if template_sk.as_ref() == Some(&sk) {
                if let Some(draft) = snapshot.draft.as_mut() {
                    draft.template = Some(from_item(item)?);
                }
            } else if sk == CONNECTION_SK {
                if let Some(draft) = snapshot.draft.as_mut() {
                    draft.connection = Some(from_item(item)?);
                }
            } else if let Some(date) = sk.strip_prefix("AICALLS#").and_then(|d| d.parse::<Date>().ok()) {
                let calls = item.get("calls").and_then(|v| v.as_n().ok()).and_then(|v| v.parse::<u32>().ok());
                if let (Some(draft), Some(calls)) = (snapshot.draft.as_mut(), calls)
                    && let Some(entry) = draft.ai_calls.iter_mut().find(|(d, _)| *d == date)
                {
                    entry.1 = calls;
                }
            } else if sk.starts_with("SUPPRESS#") {
                snapshot.suppressed = true;
            } else if let Some(date) = sk.strip_prefix("SENDS#").and_then(|d| d.parse::<Date>().ok()) {
                let sent = item
                    .get("sent")
                    .and_then(|v| v.as_n().ok())
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(0);
                if let Some(entry) = snapshot.daily.iter_mut().find(|(d, _)| *d == date) {
                    entry.1 = u32::try_from(sent.max(0)).unwrap_or(0);
                }
            }
        }
        snapshot.keep_member_open_tasks(open_tasks);
        Ok(snapshot)
    }
}

/// A member item holds the facts (under `facts`) and the send ledger (`ledger`, `ledger_version`).
fn member_from_item(item: &Item, member: &MemberId) -> Result<(MemberFacts, SendLedger), StoreError> {
    let facts = match item.get("facts") {
        Some(AttributeValue::M(m)) => from_item::<MemberFacts>(m.clone())?,
        _ => MemberFacts::new(member.clone()),
    };
    let mut ledger = SendLedger::default();
    if let Some(AttributeValue::M(m)) = item.get("ledger") {
        for (k, v) in m {
            if let Some(at) = v.as_s().ok().and_then(|t| t.parse::<Timestamp>().ok()) {
                ledger.sends.insert(k.clone(), at);
            }
        }
    }
    ledger.version = item
        .get("ledger_version")
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok((facts, ledger))
}
