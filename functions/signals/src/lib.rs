//! The signals function: member events from the signals queue → member facts and task
//! triggers; and, in AWS, SES's notifications delivered to the same queue by SNS — member
//! replies from SES receiving, bounces and complaints. Thin: parse each SQS record, call the
//! engine, report partial batch failures.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use openloop_aws::consumer::{parse, process_batch, settle};
use openloop_core::engine::{Engine, ses_notification};
use openloop_core::event::SignalEnvelope;
use tracing::Instrument;

pub const QUEUE: &str = "signals";

pub async fn handle(engine: &Engine, event: SqsEvent) -> SqsBatchResponse {
    process_batch(event, |body| async move {
        if let Some(notification) = ses_notification(&body) {
            let span = tracing::info_span!("mail_event");
            return settle(QUEUE, engine.handle_mail_event(&notification).instrument(span).await);
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
