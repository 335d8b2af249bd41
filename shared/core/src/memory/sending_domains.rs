//! [`SendingDomains`] in memory: identities created on request with three made-up DKIM
//! tokens and the MAIL FROM records, pending until a test (or the local runtime's owner)
//! says a domain's DNS is published ([`MemorySendingDomains::verify`]).

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::owner::deliverability::{DnsRecord, DomainIdentity};
use crate::ports::{DnsTxt, SendingDomainError, SendingDomains};

#[derive(Default)]
pub struct MemorySendingDomains {
    identities: Mutex<BTreeMap<String, DomainIdentity>>,
    /// While set, every call fails with this (a provider outage).
    failing: Mutex<Option<String>>,
}

impl MemorySendingDomains {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, DomainIdentity>> {
        self.identities.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The domain's records were found: SES may send from it.
    pub fn verify(&self, domain: &str) {
        if let Some(identity) = self.lock().get_mut(domain) {
            identity.verified = true;
            identity.dkim_status = "SUCCESS".into();
        }
    }

    /// Make every call fail (`Some`) or work again (`None`).
    pub fn fail_with(&self, why: Option<&str>) {
        *self.failing.lock().unwrap_or_else(|e| e.into_inner()) = why.map(str::to_owned);
    }

    fn check(&self) -> Result<(), SendingDomainError> {
        match &*self.failing.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(why) => Err(SendingDomainError(why.clone())),
            None => Ok(()),
        }
    }
}

/// The records SES asks for, for `domain` and its DKIM `tokens`, in `region`.
pub fn ses_records(domain: &str, tokens: &[String], mail_from: Option<&str>, region: &str) -> Vec<DnsRecord> {
    let mut records: Vec<DnsRecord> = tokens
        .iter()
        .map(|t| DnsRecord {
            kind: "CNAME".into(),
            name: format!("{t}._domainkey.{domain}"),
            value: format!("{t}.dkim.amazonses.com"),
            purpose: "dkim".into(),
        })
        .collect();
    if let Some(mail_from) = mail_from {
        records.push(DnsRecord {
            kind: "MX".into(),
            name: mail_from.to_owned(),
            value: format!("10 feedback-smtp.{region}.amazonses.com"),
            purpose: "mail_from".into(),
        });
        records.push(DnsRecord {
            kind: "TXT".into(),
            name: mail_from.to_owned(),
            value: "\"v=spf1 include:amazonses.com ~all\"".into(),
            purpose: "mail_from".into(),
        });
    }
    records
}

#[async_trait]
impl SendingDomains for MemorySendingDomains {
    async fn create_identity(&self, domain: &str) -> Result<DomainIdentity, SendingDomainError> {
        self.check()?;
        let mut identities = self.lock();
        let identity = identities.entry(domain.to_owned()).or_insert_with(|| {
            let tokens: Vec<String> = (1..=3).map(|i| format!("token{i}{}", domain.replace('.', ""))).collect();
            DomainIdentity {
                domain: domain.to_owned(),
                verified: false,
                dkim_status: "PENDING".into(),
                records: ses_records(domain, &tokens, Some(&format!("mail.{domain}")), "us-east-1"),
            }
        });
        Ok(identity.clone())
    }

    async fn identity(&self, domain: &str) -> Result<Option<DomainIdentity>, SendingDomainError> {
        self.check()?;
        Ok(self.lock().get(domain).cloned())
    }

    async fn delete_identity(&self, domain: &str) -> Result<(), SendingDomainError> {
        self.check()?;
        self.lock().remove(domain);
        Ok(())
    }
}

/// [`DnsTxt`] in memory: the TXT records a test (an owner) published, by name.
#[derive(Default)]
pub struct MemoryDns {
    records: Mutex<BTreeMap<String, Vec<String>>>,
    failing: Mutex<bool>,
}

impl MemoryDns {
    /// Publish a TXT record at `name`.
    pub fn publish(&self, name: &str, value: &str) {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.entry(name.to_ascii_lowercase()).or_default().push(value.to_owned());
    }

    /// Remove every TXT record at `name`.
    pub fn remove(&self, name: &str) {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&name.to_ascii_lowercase());
    }

    /// Make every lookup fail (`true`: the resolver is down) or work again.
    pub fn fail(&self, failing: bool) {
        *self.failing.lock().unwrap_or_else(|e| e.into_inner()) = failing;
    }
}

#[async_trait]
impl DnsTxt for MemoryDns {
    async fn txt(&self, name: &str) -> Result<Vec<String>, SendingDomainError> {
        if *self.failing.lock().unwrap_or_else(|e| e.into_inner()) {
            return Err(SendingDomainError("resolver unavailable".into()));
        }
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        Ok(records.get(&name.to_ascii_lowercase()).cloned().unwrap_or_default())
    }
}
