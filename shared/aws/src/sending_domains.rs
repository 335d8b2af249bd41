//! [`SendingDomains`] on SES v2: a gym's own domain as an email identity with Easy DKIM
//! (`CreateEmailIdentity` without signing attributes: SES makes the key pair, three CNAME
//! tokens) and a custom MAIL
//! FROM subdomain `mail.{domain}` (`PutEmailIdentityMailFromAttributes`, falling back to SES's
//! own MAIL FROM while its MX is missing), read back with `GetEmailIdentity`. The records to
//! publish follow SES's documented shapes: `{token}._domainkey.{domain}` CNAME
//! `{token}.dkim.amazonses.com`, and MX `10 feedback-smtp.{region}.amazonses.com` with TXT
//! `v=spf1 include:amazonses.com ~all` on the MAIL FROM domain.

use async_trait::async_trait;
use aws_sdk_sesv2::Client;
use aws_sdk_sesv2::types::{BehaviorOnMxFailure, DkimAttributes};

use openloop_core::memory::ses_records;
use openloop_core::owner::deliverability::DomainIdentity;
use openloop_core::ports::{SendingDomainError, SendingDomains};

#[derive(Clone)]
pub struct SesSendingDomains {
    client: Client,
    region: String,
}

impl SesSendingDomains {
    pub fn new(client: Client, region: impl Into<String>) -> Self {
        Self {
            client,
            region: region.into(),
        }
    }

    fn identity_of(&self, domain: &str, verified: bool, dkim: Option<&DkimAttributes>, mail_from: Option<&str>) -> DomainIdentity {
        let tokens = dkim.map(|d| d.tokens().to_vec()).unwrap_or_default();
        DomainIdentity {
            domain: domain.to_owned(),
            verified,
            dkim_status: dkim
                .and_then(|d| d.status())
                .map_or_else(|| "NOT_STARTED".to_owned(), |s| s.as_str().to_owned()),
            records: ses_records(domain, &tokens, mail_from, &self.region),
        }
    }
}

fn failed(what: &str, e: impl std::fmt::Debug) -> SendingDomainError {
    SendingDomainError(format!("{what}: {e:?}"))
}

#[async_trait]
impl SendingDomains for SesSendingDomains {
    async fn create_identity(&self, domain: &str) -> Result<DomainIdentity, SendingDomainError> {
        // No signing attributes: Easy DKIM, SES making the key pair (of its default length).
        let created = self.client.create_email_identity().email_identity(domain).send().await;
        match created {
            Ok(_) => {}
            Err(e) if e.as_service_error().is_some_and(|e| e.is_already_exists_exception()) => {}
            Err(e) => return Err(failed("CreateEmailIdentity", e)),
        }
        let mail_from = format!("mail.{domain}");
        self.client
            .put_email_identity_mail_from_attributes()
            .email_identity(domain)
            .mail_from_domain(&mail_from)
            .behavior_on_mx_failure(BehaviorOnMxFailure::UseDefaultValue)
            .send()
            .await
            .map_err(|e| failed("PutEmailIdentityMailFromAttributes", e))?;
        self.identity(domain)
            .await?
            .ok_or_else(|| SendingDomainError(format!("{domain}: created, then not found")))
    }

    async fn identity(&self, domain: &str) -> Result<Option<DomainIdentity>, SendingDomainError> {
        match self.client.get_email_identity().email_identity(domain).send().await {
            Ok(out) => Ok(Some(self.identity_of(
                domain,
                out.verified_for_sending_status(),
                out.dkim_attributes(),
                out.mail_from_attributes().map(|m| m.mail_from_domain()),
            ))),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_not_found_exception()) => Ok(None),
            Err(e) => Err(failed("GetEmailIdentity", e)),
        }
    }

    async fn delete_identity(&self, domain: &str) -> Result<(), SendingDomainError> {
        match self.client.delete_email_identity().email_identity(domain).send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_not_found_exception()) => Ok(()),
            Err(e) => Err(failed("DeleteEmailIdentity", e)),
        }
    }
}
