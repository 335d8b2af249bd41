//! Idempotent creation of everything the system needs on the emulator: the table with its
//! indexes and TTL, the queues with their dead-letter queues and redrive, the event bus and
//! the tick rule, the SES sending identity, the bucket SES receiving stores inbound mail
//! in, and the KMS key that seals the gyms' secrets. Running it twice changes nothing.
//! (In AWS, `infra/template.yaml` declares the same resources.)

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType, ScalarAttributeType,
    TimeToLiveSpecification,
};
use aws_sdk_sqs::types::QueueAttributeName;

use openloop_core::task::work::QueueName;

use crate::clients::Clients;
use crate::keys::{GSI1, GSI1PK, GSI1SK, GSI2, GSI2PK, GSI2SK, PK, SK, TTL};

/// Names of everything provisioned, from one prefix.
#[derive(Clone, Debug)]
pub struct Names {
    pub table: String,
    pub event_bus: String,
    pub queue_prefix: String,
    /// Where SES receiving stores inbound messages (`{prefix}-inbound-mail`, as S3 allows).
    pub inbound_mail_bucket: String,
    /// The alias of the KMS key that seals the gyms' secrets (`alias/{prefix}-secrets`).
    pub secrets_key_alias: String,
}

impl Names {
    pub fn from_prefix(prefix: &str) -> Self {
        Self {
            table: prefix.to_owned(),
            event_bus: prefix.to_owned(),
            queue_prefix: prefix.to_owned(),
            inbound_mail_bucket: bucket_name(&format!("{prefix}-inbound-mail")),
            secrets_key_alias: format!("alias/{}-secrets", bucket_name(prefix)),
        }
    }
    pub fn queue(&self, queue: QueueName) -> String {
        format!("{}-{}", self.queue_prefix, queue.as_str())
    }
}

/// What provisioning made (or found).
#[derive(Clone, Debug)]
pub struct Provisioned {
    pub queue_urls: HashMap<QueueName, String>,
    /// The ARN of the KMS key that seals the gyms' secrets (`alias/{prefix}-secrets`).
    pub secrets_key: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

pub async fn provision(clients: &Clients, names: &Names, sender_domain: &str) -> Result<Provisioned, BoxError> {
    create_table(clients, &names.table).await?;
    let mut queue_urls = HashMap::new();
    let sqs = clients.sqs();
    for queue in QueueName::ALL {
        queue_urls.insert(queue, create_queue(&sqs, &names.queue(queue)).await?);
    }
    create_bus(clients, &names.event_bus).await?;
    clients.bucket(&names.inbound_mail_bucket).create().await?;
    let identity = serde_json::json!({"EmailIdentity": sender_domain});
    let ses = crate::ses::ses_v2(clients.sdk_config().clone());
    match ses.rest("POST", "/v2/email/identities", Some(&identity)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) if e.code == "AlreadyExistsException" => {}
        Ok(Err(e)) => return Err(format!("SES identity {sender_domain}: {e}").into()),
        Err(e) => return Err(format!("SES identity {sender_domain}: {e}").into()),
    }
    let secrets_key = secrets_key(clients, &names.secrets_key_alias).await?;
    Ok(Provisioned { queue_urls, secrets_key })
}

/// The KMS key under `alias` (the emulator's KMS), made with its alias if there is none.
async fn secrets_key(clients: &Clients, alias: &str) -> Result<String, BoxError> {
    let kms = crate::aws_json::JsonService::new(clients.sdk_config().clone(), "kms", "TrentService");
    let arn = |answer: &serde_json::Value| {
        answer
            .pointer("/KeyMetadata/Arn")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| BoxError::from("KMS answered no key ARN"))
    };
    match kms.call("DescribeKey", &serde_json::json!({"KeyId": alias})).await? {
        Ok(answer) => return arn(&answer),
        Err(refused) if refused.code == "NotFoundException" => {}
        Err(refused) => return Err(format!("KMS key {alias}: {refused}").into()),
    }
    let created = kms
        .call(
            "CreateKey",
            &serde_json::json!({"Description": "Openloop: seals the gyms' secrets (local)", "KeyUsage": "ENCRYPT_DECRYPT"}),
        )
        .await?
        .map_err(|refused| format!("KMS CreateKey: {refused}"))?;
    let key = arn(&created)?;
    kms.call("CreateAlias", &serde_json::json!({"AliasName": alias, "TargetKeyId": key}))
        .await?
        .map_err(|refused| format!("KMS CreateAlias {alias}: {refused}"))?;
    Ok(key)
}

/// `name` as an S3 bucket name: lowercase letters, digits and hyphens, at most 63 characters.
fn bucket_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .take(63)
        .collect();
    cleaned.trim_matches('-').to_owned()
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, BoxError> {
    Ok(KeySchemaElement::builder().attribute_name(name).key_type(kind).build()?)
}

fn string_attr(name: &str) -> Result<AttributeDefinition, BoxError> {
    Ok(AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()?)
}

async fn create_table(clients: &Clients, table: &str) -> Result<(), BoxError> {
    let db = &clients.dynamodb;
    if db.describe_table().table_name(table).send().await.is_ok() {
        return Ok(());
    }
    let gsi = |name: &str, pk: &str, sk: &str| -> Result<GlobalSecondaryIndex, BoxError> {
        Ok(GlobalSecondaryIndex::builder()
            .index_name(name)
            .key_schema(key(pk, KeyType::Hash)?)
            .key_schema(key(sk, KeyType::Range)?)
            .projection(Projection::builder().projection_type(ProjectionType::All).build())
            .build()?)
    };
    let created = db
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .attribute_definitions(string_attr(PK)?)
        .attribute_definitions(string_attr(SK)?)
        .attribute_definitions(string_attr(GSI1PK)?)
        .attribute_definitions(string_attr(GSI1SK)?)
        .attribute_definitions(string_attr(GSI2PK)?)
        .attribute_definitions(string_attr(GSI2SK)?)
        .global_secondary_indexes(gsi(GSI1, GSI1PK, GSI1SK)?)
        .global_secondary_indexes(gsi(GSI2, GSI2PK, GSI2SK)?)
        .send()
        .await;
    match created {
        Ok(_) => {}
        // Another process created it between our describe and create.
        Err(e) if e.as_service_error().is_some_and(|e| e.is_resource_in_use_exception()) => {}
        Err(e) => {
            return Err(format!("create table {table}: {:?}", e.as_service_error().map(|e| e.to_string())).into());
        }
    }
    db.update_time_to_live()
        .table_name(table)
        .time_to_live_specification(TimeToLiveSpecification::builder().attribute_name(TTL).enabled(true).build()?)
        .send()
        .await
        .ok();
    Ok(())
}

async fn create_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> Result<String, BoxError> {
    let dlq = sqs
        .create_queue()
        .queue_name(format!("{name}-dlq"))
        .attributes(QueueAttributeName::MessageRetentionPeriod, "1209600")
        .send()
        .await
        .map_err(|e| format!("create queue {name}-dlq: {:?}", e.as_service_error().map(|e| e.to_string())))?;
    let dlq_url = dlq.queue_url.ok_or("no DLQ url")?;
    let arn = sqs
        .get_queue_attributes()
        .queue_url(&dlq_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(|e| format!("DLQ arn: {e:?}"))?
        .attributes
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .ok_or("no DLQ arn")?;
    let redrive = serde_json::json!({"deadLetterTargetArn": arn, "maxReceiveCount": "5"}).to_string();
    let queue = sqs
        .create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::VisibilityTimeout, "60")
        .attributes(QueueAttributeName::RedrivePolicy, redrive)
        .send()
        .await
        .map_err(|e| format!("create queue {name}: {:?}", e.as_service_error().map(|e| e.to_string())))?;
    Ok(queue.queue_url.ok_or("no queue url")?)
}

async fn create_bus(clients: &Clients, bus: &str) -> Result<(), BoxError> {
    let eb = clients.eventbridge();
    let created = eb.call_retried("CreateEventBus", &serde_json::json!({"Name": bus})).await;
    match created.map_err(|e| format!("create bus {bus}: {e}"))? {
        Ok(_) => {}
        Err(refused) if refused.code == "ResourceAlreadyExistsException" => {}
        Err(refused) => return Err(format!("create bus {bus}: {refused}").into()),
    }
    // The schedule that fires the tick in AWS; locally the runtime fires it (moto never does).
    let rule = serde_json::json!({"Name": format!("{bus}-tick"), "ScheduleExpression": "rate(1 minute)"});
    eb.call_retried("PutRule", &rule)
        .await
        .map_err(|e| format!("tick rule: {e}"))?
        .map_err(|e| format!("tick rule: {e}"))?;
    Ok(())
}

/// Remove everything `provision` made under `names` (tests and the bench clean up after
/// themselves: the emulator holds every table in memory and copies them on each transaction,
/// so what one test leaves behind slows every test after it). Missing pieces are skipped.
pub async fn deprovision(clients: &Clients, names: &Names) -> Result<(), BoxError> {
    let mut failures = Vec::new();
    if let Err(e) = clients.dynamodb.delete_table().table_name(&names.table).send().await
        && !e.as_service_error().is_some_and(|e| e.is_resource_not_found_exception())
    {
        failures.push(format!("table {}: {e:?}", names.table));
    }
    let sqs = clients.sqs();
    for queue in QueueName::ALL {
        let name = names.queue(queue);
        for name in [format!("{name}-dlq"), name] {
            let Ok(found) = sqs.get_queue_url().queue_name(&name).send().await else {
                continue;
            };
            if let Some(url) = found.queue_url
                && let Err(e) = sqs.delete_queue().queue_url(url).send().await
            {
                failures.push(format!("queue {name}: {e:?}"));
            }
        }
    }
    let eb = clients.eventbridge();
    let _ = eb
        .call("DeleteRule", &serde_json::json!({"Name": format!("{}-tick", names.event_bus)}))
        .await;
    let _ = eb.call("DeleteEventBus", &serde_json::json!({"Name": names.event_bus})).await;
    if let Err(e) = clients.bucket(&names.inbound_mail_bucket).delete_with_objects().await {
        failures.push(e);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; ").into())
    }
}
