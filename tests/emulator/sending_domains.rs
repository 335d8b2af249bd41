//! The SES v2 sending-domain adapter on the emulator. moto implements
//! `CreateEmailIdentity` and `GetEmailIdentity` — a domain identity that stays unverified, with
//! no DKIM tokens — but not `PutEmailIdentityMailFromAttributes`; so the adapter's reading of
//! an identity is checked end to end here, and its creation as far as moto goes. A domain's
//! claim (DynamoDB) keeps a second account from naming or sending as a domain verified on SES.

use std::sync::Arc;

use openloop_aws::sending_domains::SesSendingDomains;
use openloop_core::engine::{Engine, SettingsPatch};
use openloop_core::kernel::limits::SENDING_DOMAIN_RECHECK;
use openloop_core::memory::MemoryDns;
use openloop_core::owner::deliverability::DomainIdentity;
use openloop_core::ports::prelude::*;
use openloop_core::ports::{Clock, SendingDomainError, SendingDomains};
use openloop_core::task::error::EngineError;
use openloop_tests::{Scratch, clients, test_config};

use crate::concurrency::approved_task;

#[tokio::test]
async fn a_domain_identity_is_read_back_unverified_and_an_unknown_one_is_none() {
    let config = test_config();
    let clients = clients(&config).await;
    let domains = clients.sending_domains(config.region.clone());
    let domain = format!("gym-{}.example.org", ulid::Ulid::new().to_string().to_ascii_lowercase());
    assert_eq!(
        domains.identity(&domain).await.unwrap_or_else(|e| panic!("{e}")),
        None,
        "no identity yet"
    );
    // Creation: the identity is made (moto stops at the MAIL FROM call it lacks).
    let created = domains.create_identity(&domain).await;
    let identity = domains
        .identity(&domain)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("the identity was created: {created:?}"));
    assert_eq!(identity.domain, domain);
    assert!(!identity.verified, "nobody published the records: {identity:?}");
    if let Ok(created) = created {
        assert!(!created.verified);
    }
}

/// moto never verifies an identity (it reads no DNS): this stands in for SES having found the
/// DKIM records of a domain whose identity exists on moto, and reads everything else from it.
struct DkimFound(SesSendingDomains);

#[async_trait::async_trait]
impl SendingDomains for DkimFound {
    async fn create_identity(&self, domain: &str) -> Result<DomainIdentity, SendingDomainError> {
        // moto stops at the MAIL FROM call it lacks; the identity exists by then.
        let _ = self.0.create_identity(domain).await;
        self.identity(domain)
            .await?
            .ok_or_else(|| SendingDomainError(format!("{domain}: not created")))
    }

    async fn identity(&self, domain: &str) -> Result<Option<DomainIdentity>, SendingDomainError> {
        Ok(self.0.identity(domain).await?.map(|identity| DomainIdentity {
            verified: true,
            dkim_status: "SUCCESS".into(),
            ..identity
        }))
    }

    async fn delete_identity(&self, domain: &str) -> Result<(), SendingDomainError> {
        self.0.delete_identity(domain).await
    }
}

/// Given a gym whose domain is verified on SES (moto) and proven by its ownership record, with
/// its claim in DynamoDB, when a second gym names the same domain, then it is refused (409's
/// `sending_domain_taken`), and the second gym's mail leaves from the shared address while the
/// first gym's leaves from its domain — though SES itself would accept either.
/// On a thread with room (`with_room`): the engine's steps run on the test's own thread.
#[test]
fn a_second_account_can_neither_claim_a_verified_domain_nor_send_from_it() {
    openloop_tests::with_room(second_account_refused);
}

async fn second_account_refused() {
    let scratch = Scratch::new("domain-claim");
    let (mut ports, engine_config, store, clock) = scratch.ports(None).await;
    let config = test_config();
    let ses = clients(&config).await.sending_domains(config.region.clone());
    ports.sending_domains = Some(Arc::new(DkimFound(ses)));
    let dns = Arc::new(MemoryDns::default());
    ports.dns = Some(dns.clone());
    let engine = Engine::new(ports, engine_config);
    let domain = format!("gym-{}.example.org", ulid::Ulid::new().to_string().to_ascii_lowercase());
    let naming = || SettingsPatch {
        sending_domain: Some(Some(domain.clone())),
        ..Default::default()
    };

    let (first, first_email) = approved_task(&engine, &store).await;
    let named = engine
        .update_account(first.account_id, naming())
        .await
        .unwrap_or_else(|e| panic!("named: {e}"));
    let record = named.sending_identity.unwrap_or_else(|| panic!("identity")).ownership_record();
    dns.publish(&record.name, &record.value);
    clock
        .set(clock.now() + SENDING_DOMAIN_RECHECK)
        .unwrap_or_else(|e| panic!("clock: {e}"));
    let checked = engine
        .account_with_sending_domain(first.account_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let identity = checked.sending_identity.unwrap_or_else(|| panic!("identity"));
    assert!(identity.sends_from_domain(), "verified and proven: {identity:?}");
    let claim = store.domain_claim(&domain).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(claim.map(|c| (c.account, c.proven_at.is_some())), Some((first.account_id, true)));

    let (second, second_email) = approved_task(&engine, &store).await;
    let refused = engine.update_account(second.account_id, naming()).await;
    assert!(
        matches!(&refused, Err(EngineError::Taken(i)) if i.code == "sending_domain_taken"),
        "{refused:?}"
    );
    let second_account = engine.account(second.account_id).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(second_account.settings.sending_domain, None);

    for item in [&first, &second] {
        engine.execute(item).await.unwrap_or_else(|e| panic!("{e}"));
    }
    let accepted = openloop_tests::ses_accepted().await;
    let from = |to: &str| {
        accepted
            .iter()
            .filter(|m| m.to == to)
            .map(|m| m.from.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    let firsts = from(&first_email);
    assert_eq!(firsts.len(), 1, "{firsts:?}");
    assert!(
        firsts[0].contains(&format!("@{domain}")),
        "the owner's mail from its domain: {firsts:?}"
    );
    let seconds = from(&second_email);
    assert_eq!(seconds.len(), 1, "{seconds:?}");
    assert!(
        !seconds[0].contains(&domain) && seconds[0].contains(config.from_email.as_str()),
        "the other gym's mail from the shared address: {seconds:?}"
    );
}
