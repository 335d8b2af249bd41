//! What the local runtime keeps of its own on the emulator, so that a runtime killed and
//! started again goes on where the last one was: the test clock's offset, and every mail and
//! text the providers accepted (`/_local/outbox`), and the receipts of the messages it holds,
//! so that what a killed runtime held is handed back to its queue at once rather than after
//! SQS's visibility timeout. Everything else already lives in the emulator (the table, the
//! queues), so nothing a restart loses is seen from outside.
//!
//! Kept in the table under a key of its own (`LOCAL#KEPT`), outside every account, which no
//! function reads: it lives and goes with the emulator's other state (a scratch prefix's
//! teardown deletes the table). One item per mail or text, its sort key a ULID, so a query
//! reads them in order; read back once, when a runtime starts. In memory mode nothing is
//! kept, as nothing else survives a restart there.

use std::sync::Mutex;

use aws_sdk_dynamodb::types::AttributeValue;
use jiff::SignedDuration;
use openloop_aws::keys::{PK, SK};

use crate::function::run_as;
use crate::texts::SentText;

/// The partition of everything kept, outside every account.
const KEPT: &str = "LOCAL#KEPT";
const CLOCK: &str = "clock";
const MAIL: &str = "mail#";
const TEXT: &str = "text#";
const HELD: &str = "held#";

pub struct Kept {
    client: aws_sdk_dynamodb::Client,
    table: String,
    /// Keys in the order kept, within a millisecond too.
    ids: Mutex<ulid::Generator>,
}

impl Kept {
    pub fn new(client: aws_sdk_dynamodb::Client, table: &str) -> Self {
        Self {
            client,
            table: table.to_owned(),
            ids: Mutex::new(ulid::Generator::new()),
        }
    }

    /// The clock's offset from real time, as the last runtime left it.
    pub async fn clock(&self) -> Result<Option<SignedDuration>, String> {
        let got = run_as(
            "runtime",
            self.client
                .get_item()
                .table_name(&self.table)
                .key(PK, AttributeValue::S(KEPT.into()))
                .key(SK, AttributeValue::S(CLOCK.into()))
                .consistent_read(true)
                .send(),
        )
        .await
        .map_err(|e| format!("the kept clock: {e:?}"))?;
        let Some(millis) = got.item.as_ref().and_then(|i| i.get("offset_ms")).and_then(|v| v.as_n().ok()) else {
            return Ok(None);
        };
        let millis = millis.parse::<i64>().map_err(|e| format!("the kept clock: {e}"))?;
        Ok(Some(SignedDuration::from_millis(millis)))
    }

    pub async fn set_clock(&self, offset: SignedDuration) -> Result<(), String> {
        run_as(
            "runtime",
            self.client
                .put_item()
                .table_name(&self.table)
                .item(PK, AttributeValue::S(KEPT.into()))
                .item(SK, AttributeValue::S(CLOCK.into()))
                .item("offset_ms", AttributeValue::N(offset.as_millis().to_string()))
                .send(),
        )
        .await
        .map(|_| ())
        .map_err(|e| format!("the clock not kept: {e:?}"))
    }

    /// A mail as it left (its RFC 5322 bytes) and the provider's id for it.
    pub async fn keep_mail(&self, raw: &[u8], provider_id: &str) -> Result<(), String> {
        let mut body = format!("{provider_id}\n").into_bytes();
        body.extend_from_slice(raw);
        self.append(MAIL, body).await
    }

    /// Every mail kept, oldest first: the provider's id and the bytes.
    pub async fn mails(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut mails = Vec::new();
        for body in self.all(MAIL).await? {
            let split = body.iter().position(|b| *b == b'\n').unwrap_or(body.len());
            let id = String::from_utf8_lossy(&body[..split]).into_owned();
            mails.push((id, body.get(split + 1..).unwrap_or_default().to_vec()));
        }
        Ok(mails)
    }

    pub async fn keep_text(&self, text: &SentText) -> Result<(), String> {
        let body = serde_json::to_vec(text).map_err(|e| e.to_string())?;
        self.append(TEXT, body).await
    }

    /// Every text kept, oldest first.
    pub async fn texts(&self) -> Result<Vec<SentText>, String> {
        self.all(TEXT)
            .await?
            .iter()
            .map(|body| serde_json::from_slice(body).map_err(|e| format!("a kept text: {e}")))
            .collect()
    }

    /// The receipts of messages received from `queue` and not yet deleted.
    pub async fn hold(&self, queue: &str, receipts: &[String]) -> Result<(), String> {
        let puts = receipts.iter().map(|r| {
            aws_sdk_dynamodb::types::PutRequest::builder()
                .item(PK, AttributeValue::S(KEPT.into()))
                .item(SK, AttributeValue::S(held_sk(queue, r)))
                .build()
                .map(|put| aws_sdk_dynamodb::types::WriteRequest::builder().put_request(put).build())
        });
        self.write(puts.collect::<Result<_, _>>().map_err(|e| e.to_string())?).await
    }

    /// Those receipts handled: deleted from their queue.
    pub async fn release(&self, queue: &str, receipts: &[String]) -> Result<(), String> {
        let deletes = receipts.iter().map(|r| {
            aws_sdk_dynamodb::types::DeleteRequest::builder()
                .key(PK, AttributeValue::S(KEPT.into()))
                .key(SK, AttributeValue::S(held_sk(queue, r)))
                .build()
                .map(|delete| aws_sdk_dynamodb::types::WriteRequest::builder().delete_request(delete).build())
        });
        self.write(deletes.collect::<Result<_, _>>().map_err(|e| e.to_string())?).await
    }

    /// Every receipt a runtime before this one held: `(queue, receipt)`.
    pub async fn held(&self) -> Result<Vec<(String, String)>, String> {
        Ok(self
            .keys(HELD)
            .await?
            .into_iter()
            .filter_map(|sk| {
                let (queue, receipt) = sk.strip_prefix(HELD)?.split_once('#')?;
                Some((queue.to_owned(), receipt.to_owned()))
            })
            .collect())
    }

    /// A batch write (a receive's batch is at most ten, under DynamoDB's 25), retried for
    /// what comes back unprocessed.
    async fn write(&self, mut requests: Vec<aws_sdk_dynamodb::types::WriteRequest>) -> Result<(), String> {
        for _ in 0..5 {
            if requests.is_empty() {
                return Ok(());
            }
            let out = run_as(
                "runtime",
                self.client
                    .batch_write_item()
                    .request_items(&self.table, std::mem::take(&mut requests))
                    .send(),
            )
            .await
            .map_err(|e| format!("the held receipts: {e:?}"))?;
            requests = out.unprocessed_items.and_then(|mut u| u.remove(&self.table)).unwrap_or_default();
        }
        Err("the held receipts: writes left unprocessed".into())
    }

    /// The runtime's own call, whichever function's mail it keeps: the functions' roles have
    /// no grant for it (`crate::function`).
    async fn append(&self, prefix: &str, body: Vec<u8>) -> Result<(), String> {
        let id = {
            let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
            ids.generate().unwrap_or_else(|_| ulid::Ulid::new())
        };
        run_as(
            "runtime",
            self.client
                .put_item()
                .table_name(&self.table)
                .item(PK, AttributeValue::S(KEPT.into()))
                .item(SK, AttributeValue::S(format!("{prefix}{id}")))
                .item("body", AttributeValue::B(body.into()))
                .send(),
        )
        .await
        .map(|_| ())
        .map_err(|e| format!("not kept: {e:?}"))
    }

    async fn all(&self, prefix: &str) -> Result<Vec<Vec<u8>>, String> {
        Ok(self
            .items(prefix)
            .await?
            .into_iter()
            .filter_map(|mut item| match item.remove("body") {
                Some(AttributeValue::B(body)) => Some(body.into_inner()),
                _ => None,
            })
            .collect())
    }

    async fn keys(&self, prefix: &str) -> Result<Vec<String>, String> {
        Ok(self
            .items(prefix)
            .await?
            .into_iter()
            .filter_map(|mut item| match item.remove(SK) {
                Some(AttributeValue::S(sk)) => Some(sk),
                _ => None,
            })
            .collect())
    }

    /// Every item whose sort key begins with `prefix`, in order, from every page.
    async fn items(&self, prefix: &str) -> Result<Vec<std::collections::HashMap<String, AttributeValue>>, String> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let page = run_as(
                "runtime",
                self.client
                    .query()
                    .table_name(&self.table)
                    .key_condition_expression(format!("{PK} = :pk AND begins_with({SK}, :prefix)"))
                    .expression_attribute_values(":pk", AttributeValue::S(KEPT.into()))
                    .expression_attribute_values(":prefix", AttributeValue::S(prefix.into()))
                    .consistent_read(true)
                    .set_exclusive_start_key(start.take())
                    .send(),
            )
            .await
            .map_err(|e| format!("the kept {prefix}: {e:?}"))?;
            items.extend(page.items.unwrap_or_default());
            match page.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(items),
            }
        }
    }
}

/// A held message's key: its queue and its receipt.
fn held_sk(queue: &str, receipt: &str) -> String {
    format!("{HELD}{queue}#{receipt}")
}
