//! The signals function: member events from the signals queue → member facts and task
//! triggers; the dashboard's sign-in links asked for (`SignInRequest`, mailed after the page
//! answered); outbound webhooks from the deliveries queue (`handle_deliveries`); the steps of a PushPress import (one page each, `ImportStep`) and of an account's removal (`AccountRemovalStep`); and, in AWS, SES's notifications delivered to the same queue by SNS — member
//! replies from SES receiving, bounces and complaints. Thin: parse each SQS record, call the
//! engine, report partial batch failures.
//!
//! SES's notifications are read into the core's `MailEvent` by `openloop_aws::mail_events`,
//! but every SNS envelope's signature is checked first (`openloop_aws::sns`). One that fails —
//! unsigned, forged, altered, of another topic — is logged and never processed: it is
//! reported as failed, so after the queue's receive limit it sits in the dead-letter queue,
//! whose alarm makes it visible (a forged message on our queue means someone can write to it).

use std::sync::Arc;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use openloop_aws::mail_events::{self, ses_notification};
use openloop_aws::sns::{SnsError, SnsMessage, SnsVerifier};
use openloop_core::engine::{AccountRemovalStep, Engine, ImportStep, SignInRequest, WebhookWork};
use openloop_core::members::event::SignalEnvelope;
use openloop_core::ports::StoredMail;
use openloop_edge::config::{Clients, Config};
use openloop_edge::consumer::{Disposition, parse, process_batch, settle};
use tracing::Instrument;

pub const QUEUE: &str = "signals";
/// The outbound webhooks' queue, consumed here too.
pub const DELIVERIES: &str = "deliveries";

/// What the function needs for mail besides the engine: the SNS signature check and the
/// store of inbound messages too large for their notification.
#[derive(Clone)]
pub struct MailIntake {
    pub verifier: SnsVerifier,
    pub stored: Arc<dyn StoredMail>,
}

impl MailIntake {
    /// The production intake: certificates from SNS's hosts only, the configured topic only,
    /// the configured inbound-mail bucket only.
    pub fn from_config(config: &Config, clients: &Clients) -> Self {
        Self {
            verifier: SnsVerifier::new(openloop_aws::tls::client(), config.mail_events_topic_arn.clone()),
            stored: Arc::new(clients.stored_mail(config.inbound_mail_bucket.clone())),
        }
    }
}

pub async fn handle(engine: &Engine, mail: &MailIntake, event: SqsEvent) -> SqsBatchResponse {
    process_batch(event, |body| async move {
        if let Ok(work) = serde_json::from_str::<WebhookWork>(&body) {
            return deliver(engine, &work).await;
        }
        if SnsMessage::is_envelope(&body) {
            return mail_event(engine, mail, &body).instrument(tracing::info_span!("mail_event")).await;
        }
        if ses_notification(&body).is_some() {
            tracing::error!(
                queue = QUEUE,
                "an SES notification outside a signed SNS envelope: rejected, never processed"
            );
            return Disposition::Retry;
        }
        if let Ok(request) = serde_json::from_str::<SignInRequest>(&body) {
            let mailed = engine
                .answer_sign_in_request(&request, openloop_edge::sign_in::sign_in_token)
                .instrument(tracing::info_span!("sign_in_request"))
                .await;
            return settle(QUEUE, mailed);
        }
        if let Ok(step) = serde_json::from_str::<AccountRemovalStep>(&body) {
            let span = tracing::info_span!("account_removal", account = %step.remove_account);
            return settle(QUEUE, engine.account_removal_step(&step).instrument(span).await);
        }
        if let Ok(step) = serde_json::from_str::<ImportStep>(&body) {
            let span = tracing::info_span!("import_step", account = %step.account_id, run = %step.import_run);
            return settle(QUEUE, engine.import_step(&step).instrument(span).await);
        }
        let envelope: SignalEnvelope = match parse(QUEUE, &body) {
            Ok(envelope) => envelope,
            Err(disposition) => return disposition,
        };
        let span = tracing::info_span!("signal", account = %envelope.account_id, webhook_id = %envelope.webhook_id);
        settle(QUEUE, engine.apply_signal(&envelope).instrument(span).await)
    })
    .await
}

/// The `deliveries` queue (outbound webhooks; the same function in AWS, by a second event
/// source): each message puts an event in its endpoints' backlogs or drains one endpoint.
pub async fn handle_deliveries(engine: &Engine, event: SqsEvent) -> SqsBatchResponse {
    process_batch(event, |body| async move {
        match parse::<WebhookWork>(DELIVERIES, &body) {
            Ok(work) => deliver(engine, &work).await,
            Err(disposition) => disposition,
        }
    })
    .await
}

async fn deliver(engine: &Engine, work: &WebhookWork) -> Disposition {
    let span = tracing::info_span!("webhook_work");
    settle(DELIVERIES, engine.handle_webhook_work(work).instrument(span).await)
}

async fn mail_event(engine: &Engine, mail: &MailIntake, body: &str) -> Disposition {
    let message = match mail.verifier.verify(body).await {
        Ok(message) => message,
        Err(e @ SnsError::CertificateUnavailable(_)) => {
            tracing::warn!(queue = QUEUE, error = %e, "SNS signature not checked yet; will retry");
            return Disposition::Retry;
        }
        Err(e) => {
            tracing::error!(queue = QUEUE, error = %e, "SNS envelope rejected, never processed; it will end in the dead-letter queue");
            return Disposition::Retry;
        }
    };
    if message.kind != "Notification" {
        // The template's subscription is confirmed by CloudFormation; nothing to visit.
        tracing::info!(queue = QUEUE, kind = %message.kind, topic = %message.topic_arn, "signed SNS message needs nothing");
        return Disposition::Done;
    }
    let Some(notification) = ses_notification(&message.message) else {
        tracing::warn!(queue = QUEUE, topic = %message.topic_arn, "a signed notification that is not from SES; ignored");
        return Disposition::Done;
    };
    match mail_events::mail_event(&notification) {
        Ok(event) => settle(QUEUE, engine.handle_mail_event(event, mail.stored.as_ref()).await),
        Err(invalid) => settle(QUEUE, Err::<(), _>(invalid.into())),
    }
}
