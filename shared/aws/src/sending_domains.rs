//! [`SendingDomains`] on SES v2: a gym's own domain as an email identity with Easy DKIM
//! (`CreateEmailIdentity` without signing attributes: SES makes the key pair, three CNAME
//! tokens) and a custom MAIL
//! FROM subdomain `mail.{domain}` (`PutEmailIdentityMailFromAttributes`, falling back to SES's
//! own MAIL FROM while its MX is missing), read back with `GetEmailIdentity`. The records to
//! publish follow SES's documented shapes: `{token}._domainkey.{domain}` CNAME
//! `{token}.dkim.amazonses.com`, and MX `10 feedback-smtp.{region}.amazonses.com` with TXT
//! `v=spf1 include:amazonses.com ~all` on the MAIL FROM domain.

use async_trait::async_trait;
use serde_json::{Value, json};

use openloop_core::memory::ses_records;
use openloop_core::owner::deliverability::DomainIdentity;
use openloop_core::ports::{SendingDomainError, SendingDomains};

use crate::aws_json::{AwsRefusal, JsonService, NoAnswer};

#[derive(Clone)]
pub struct SesSendingDomains {
    ses: JsonService,
    region: String,
}

impl SesSendingDomains {
    pub fn new(shared: aws_config::SdkConfig, region: impl Into<String>) -> Self {
        Self {
            ses: crate::ses::ses_v2(shared),
            region: region.into(),
        }
    }

    /// The identity as `GetEmailIdentity` answered it.
    fn identity_of(&self, domain: &str, answer: &Value) -> DomainIdentity {
        let dkim = answer.get("DkimAttributes");
        let tokens: Vec<String> = dkim
            .and_then(|d| d.get("Tokens"))
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let mail_from = answer.pointer("/MailFromAttributes/MailFromDomain").and_then(Value::as_str);
        DomainIdentity {
            domain: domain.to_owned(),
            verified: answer.get("VerifiedForSendingStatus").and_then(Value::as_bool).unwrap_or(false),
            dkim_status: dkim
                .and_then(|d| d.get("Status"))
                .and_then(Value::as_str)
                .unwrap_or("NOT_STARTED")
                .to_owned(),
            records: ses_records(domain, &tokens, mail_from, &self.region),
        }
    }

    /// `method` on `/v2/email/identities/{domain}{rest}`.
    async fn on_identity(
        &self,
        method: &str,
        domain: &str,
        rest: &str,
        body: Option<&Value>,
    ) -> Result<Result<Value, AwsRefusal>, NoAnswer> {
        self.ses
            .rest(method, &format!("/v2/email/identities/{}{rest}", segment(domain)), body)
            .await
    }
}

/// A path segment: every byte but the unreserved ones as `%XX`.
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn failed(what: &str, e: impl std::fmt::Display) -> SendingDomainError {
    SendingDomainError(format!("{what}: {e}"))
}

#[async_trait]
impl SendingDomains for SesSendingDomains {
    async fn create_identity(&self, domain: &str) -> Result<DomainIdentity, SendingDomainError> {
        // No signing attributes: Easy DKIM, SES making the key pair (of its default length).
        let created = self
            .ses
            .rest("POST", "/v2/email/identities", Some(&json!({"EmailIdentity": domain})))
            .await
            .map_err(|e| failed("CreateEmailIdentity", e))?;
        match created {
            Ok(_) => {}
            Err(e) if e.code == "AlreadyExistsException" => {}
            Err(e) => return Err(failed("CreateEmailIdentity", e)),
        }
        let mail_from = json!({"MailFromDomain": format!("mail.{domain}"), "BehaviorOnMxFailure": "USE_DEFAULT_VALUE"});
        self.on_identity("PUT", domain, "/mail-from", Some(&mail_from))
            .await
            .map_err(|e| failed("PutEmailIdentityMailFromAttributes", e))?
            .map_err(|e| failed("PutEmailIdentityMailFromAttributes", e))?;
        self.identity(domain)
            .await?
            .ok_or_else(|| SendingDomainError(format!("{domain}: created, then not found")))
    }

    async fn identity(&self, domain: &str) -> Result<Option<DomainIdentity>, SendingDomainError> {
        match self
            .on_identity("GET", domain, "", None)
            .await
            .map_err(|e| failed("GetEmailIdentity", e))?
        {
            Ok(answer) => Ok(Some(self.identity_of(domain, &answer))),
            Err(e) if e.code == "NotFoundException" => Ok(None),
            Err(e) => Err(failed("GetEmailIdentity", e)),
        }
    }

    async fn delete_identity(&self, domain: &str) -> Result<(), SendingDomainError> {
        match self
            .on_identity("DELETE", domain, "", None)
            .await
            .map_err(|e| failed("DeleteEmailIdentity", e))?
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == "NotFoundException" => Ok(()),
            Err(e) => Err(failed("DeleteEmailIdentity", e)),
        }
    }
}
