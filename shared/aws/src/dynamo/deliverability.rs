//! [`DeliverabilityStore`] on DynamoDB: the account's `DELIVERABILITY` item (its `sends`
//! attribute added to by each reservation's transaction in `tasks.rs`, its `bounces` map
//! written over `bounce_version`) and one `SOFTBOUNCE#{email}` item per address, a string set
//! of the mails that soft-bounced. Outside accounts, `DOMAIN#{domain}`/`CLAIM` names the one
//! account that may send as a domain, written by one conditional put; `SMSNUMBER#{number}`/`CLAIM`
//! the one account that may text from a number, the same way (never taken over).

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use openloop_core::kernel::error::{Conflict, StoreError};
use openloop_core::kernel::ids::{AccountId, Email};
use openloop_core::kernel::limits::UNPROVEN_CLAIM_HOLD;
use openloop_core::owner::deliverability::{BounceWindow, DomainClaim};
use openloop_core::owner::sms::NumberClaim;
use openloop_core::ports::DeliverabilityStore;

use crate::keys::*;

use super::items::{n, s};
use super::{DynamoStore, Item, unavailable};

const RACES: usize = 4;

#[async_trait]
impl DeliverabilityStore for DynamoStore {
    async fn bounce_window(&self, account: AccountId) -> Result<BounceWindow, StoreError> {
        Ok(self
            .get(account_pk(account), DELIVERABILITY_SK)
            .await?
            .map(|item| window_from_item(&item))
            .unwrap_or_default())
    }

    async fn record_bounce(&self, account: AccountId, message_id: &str) -> Result<BounceWindow, StoreError> {
        for _ in 0..RACES {
            let mut window = self.bounce_window(account).await?;
            let before = window.version;
            if !window.record(message_id) {
                return Ok(window);
            }
            window.version += 1;
            let bounces: Item = window.bounces.iter().map(|(id, at)| (id.clone(), n(*at))).collect();
            let update = self
                .client
                .update_item()
                .table_name(&self.table)
                .key(PK, s(account_pk(account)))
                .key(SK, s(DELIVERABILITY_SK))
                .update_expression("SET bounces = :b, bounce_version = :nv, #kind = :kind")
                .expression_attribute_names("#kind", KIND)
                .expression_attribute_values(":b", AttributeValue::M(bounces))
                .expression_attribute_values(":nv", n(window.version))
                .expression_attribute_values(":kind", s("deliverability"));
            let update = if before == 0 {
                update.condition_expression("attribute_not_exists(bounce_version)")
            } else {
                update
                    .condition_expression("bounce_version = :pv")
                    .expression_attribute_values(":pv", n(before))
            };
            self.count();
            match update.send().await {
                Ok(_) => return Ok(window),
                Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => continue,
                Err(e) => return Err(unavailable(e)),
            }
        }
        Err(StoreError::Conflict(Conflict::Version))
    }

    async fn record_soft_bounce(&self, account: AccountId, email: &Email, message_id: &str) -> Result<u32, StoreError> {
        self.count();
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(account_pk(account)))
            .key(SK, s(soft_bounce_sk(email)))
            .update_expression("ADD mails :m SET #kind = :kind")
            .expression_attribute_names("#kind", KIND)
            .expression_attribute_values(":m", AttributeValue::Ss(vec![message_id.to_owned()]))
            .expression_attribute_values(":kind", s("soft_bounces"))
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .map_err(unavailable)?;
        let mails = out
            .attributes
            .as_ref()
            .and_then(|a| a.get("mails"))
            .and_then(|m| m.as_ss().ok())
            .map_or(0, Vec::len);
        Ok(u32::try_from(mails).unwrap_or(u32::MAX))
    }

    async fn claim_domain(&self, claim: &DomainClaim) -> Result<(), StoreError> {
        let mut item: Item = HashMap::from([
            (PK.into(), s(domain_claim_pk(&claim.domain))),
            (SK.into(), s(DOMAIN_CLAIM_SK)),
            (KIND.into(), s("domain_claim")),
            ("domain".into(), s(claim.domain.clone())),
            ("account_id".into(), s(claim.account.to_string())),
            ("claimed_at".into(), n(claim.claimed_at.as_millisecond())),
        ]);
        if let Some(at) = claim.proven_at {
            item.insert("proven_at".into(), n(at.as_millisecond()));
        }
        let stale_before = claim.claimed_at.checked_sub(UNPROVEN_CLAIM_HOLD).unwrap_or(claim.claimed_at);
        self.put_conditional(
            item,
            "attribute_not_exists(PK) OR account_id = :me OR (attribute_not_exists(proven_at) AND claimed_at <= :stale)",
            &[],
            vec![(":me", s(claim.account.to_string())), (":stale", n(stale_before.as_millisecond()))],
            Conflict::AlreadyExists,
        )
        .await
    }

    async fn domain_claim(&self, domain: &str) -> Result<Option<DomainClaim>, StoreError> {
        let Some(item) = self.get(domain_claim_pk(domain), DOMAIN_CLAIM_SK).await? else {
            return Ok(None);
        };
        let millis = |name: &str| {
            item.get(name)
                .and_then(|v| v.as_n().ok())
                .and_then(|v| v.parse::<i64>().ok())
                .and_then(|v| jiff::Timestamp::from_millisecond(v).ok())
        };
        let account = item
            .get("account_id")
            .and_then(|v| v.as_s().ok())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StoreError::Corrupt {
                key: domain_claim_pk(domain),
                reason: "a domain claim without its account".into(),
            })?;
        Ok(Some(DomainClaim {
            domain: domain.to_owned(),
            account,
            claimed_at: millis("claimed_at").unwrap_or(jiff::Timestamp::UNIX_EPOCH),
            proven_at: millis("proven_at"),
        }))
    }

    async fn release_domain(&self, domain: &str, account: AccountId) -> Result<(), StoreError> {
        self.count();
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(domain_claim_pk(domain)))
            .key(SK, s(DOMAIN_CLAIM_SK))
            .condition_expression("account_id = :me")
            .expression_attribute_values(":me", s(account.to_string()))
            .send()
            .await;
        match out {
            // Not this account's (or no claim): left alone.
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn claim_number(&self, claim: &NumberClaim) -> Result<(), StoreError> {
        let item: Item = HashMap::from([
            (PK.into(), s(number_claim_pk(&claim.number))),
            (SK.into(), s(NUMBER_CLAIM_SK)),
            (KIND.into(), s("number_claim")),
            ("number".into(), s(claim.number.clone())),
            ("account_id".into(), s(claim.account.to_string())),
            ("claimed_at".into(), n(claim.claimed_at.as_millisecond())),
        ]);
        // The holder's own claim again is a no-op, its first `claimed_at` kept.
        if self
            .number_claim(&claim.number)
            .await?
            .is_some_and(|held| held.account == claim.account)
        {
            return Ok(());
        }
        self.put_conditional(
            item,
            "attribute_not_exists(PK) OR account_id = :me",
            &[],
            vec![(":me", s(claim.account.to_string()))],
            Conflict::AlreadyExists,
        )
        .await
    }

    async fn number_claim(&self, number: &str) -> Result<Option<NumberClaim>, StoreError> {
        let Some(item) = self.get(number_claim_pk(number), NUMBER_CLAIM_SK).await? else {
            return Ok(None);
        };
        let account = item
            .get("account_id")
            .and_then(|v| v.as_s().ok())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StoreError::Corrupt {
                key: number_claim_pk(number),
                reason: "a number claim without its account".into(),
            })?;
        let claimed_at = item
            .get("claimed_at")
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|v| jiff::Timestamp::from_millisecond(v).ok())
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        Ok(Some(NumberClaim {
            number: number.to_owned(),
            account,
            claimed_at,
        }))
    }

    async fn release_number(&self, number: &str, account: AccountId) -> Result<(), StoreError> {
        self.count();
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(number_claim_pk(number)))
            .key(SK, s(NUMBER_CLAIM_SK))
            .condition_expression("account_id = :me")
            .expression_attribute_values(":me", s(account.to_string()))
            .send()
            .await;
        match out {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_conditional_check_failed_exception()) => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }
}

fn number(item: &Item, name: &str) -> u64 {
    item.get(name).and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn window_from_item(item: &Item) -> BounceWindow {
    let bounces: HashMap<String, AttributeValue> = item.get("bounces").and_then(|b| b.as_m().ok()).cloned().unwrap_or_default();
    BounceWindow {
        sends: number(item, "sends"),
        bounces: bounces
            .into_iter()
            .filter_map(|(id, at)| Some((id, at.as_n().ok()?.parse().ok()?)))
            .collect(),
        version: number(item, "bounce_version"),
    }
}
