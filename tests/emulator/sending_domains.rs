//! The SES v2 sending-domain adapter on the emulator (spec §33.1 option B). moto implements
//! `CreateEmailIdentity` and `GetEmailIdentity` — a domain identity that stays unverified, with
//! no DKIM tokens — but not `PutEmailIdentityMailFromAttributes`; so the adapter's reading of
//! an identity is checked end to end here, and its creation as far as moto goes.

use openloop_aws::sending_domains::SesSendingDomains;
use openloop_core::ports::SendingDomains;
use openloop_tests::{clients, test_config};

#[tokio::test]
async fn a_domain_identity_is_read_back_unverified_and_an_unknown_one_is_none() {
    let config = test_config();
    let clients = clients(&config).await;
    let domains = SesSendingDomains::new(clients.sesv2.clone(), config.region.clone());
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
