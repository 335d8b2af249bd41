//! The EventBridge [`EventBus`]: domain events (`TaskClosed`, …) on the custom bus, with
//! `PutEvents` as one signed request of our own ([`crate::aws_json`]), retried as the SDK's
//! standard mode would.

use async_trait::async_trait;
use serde_json::{Value, json};

use openloop_core::ports::EventBus;

use crate::aws_json::JsonService;

pub const SOURCE: &str = "openloop";

/// EventBridge's awsJson 1.1 API.
pub(crate) fn eventbridge(shared: aws_config::SdkConfig) -> JsonService {
    JsonService::new(shared, "events", "AWSEvents")
}

#[derive(Clone)]
pub struct EventBridgeBus {
    events: JsonService,
    bus: String,
}

impl EventBridgeBus {
    pub fn new(shared: aws_config::SdkConfig, bus: impl Into<String>) -> Self {
        Self {
            events: eventbridge(shared),
            bus: bus.into(),
        }
    }
}

/// `PutEvents` of one entry on `bus`.
fn put_events(bus: &str, detail_type: &str, detail: &Value) -> Value {
    json!({"Entries": [{
        "EventBusName": bus,
        "Source": SOURCE,
        "DetailType": detail_type,
        "Detail": detail.to_string(),
    }]})
}

#[async_trait]
impl EventBus for EventBridgeBus {
    async fn publish(&self, detail_type: &str, detail: Value) -> Result<(), String> {
        let answer = self
            .events
            .call_retried("PutEvents", &put_events(&self.bus, detail_type, &detail))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|refused| format!("EventBridge PutEvents: {refused}"))?;
        match answer.get("FailedEntryCount").and_then(Value::as_u64).unwrap_or(0) {
            0 => Ok(()),
            n => Err(format!("{n} event(s) refused")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request is PutEvents' own shape: the detail a JSON string, the source ours.
    #[test]
    fn an_event_is_one_entry_on_the_bus_with_its_detail_as_text() {
        let body = put_events("openloop", "TaskClosed", &json!({"task_id": "t_1"}));
        assert_eq!(
            body,
            json!({"Entries": [{"EventBusName": "openloop", "Source": "openloop", "DetailType": "TaskClosed", "Detail": "{\"task_id\":\"t_1\"}"}]})
        );
    }
}
