//! The EventBridge [`EventBus`]: domain events (`TaskClosed`, …) on the custom bus.

use async_trait::async_trait;
use aws_sdk_eventbridge::Client;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;

use openloop_core::ports::EventBus;

pub const SOURCE: &str = "openloop";

#[derive(Clone)]
pub struct EventBridgeBus {
    client: Client,
    bus: String,
}

impl EventBridgeBus {
    pub fn new(client: Client, bus: impl Into<String>) -> Self {
        Self { client, bus: bus.into() }
    }
}

#[async_trait]
impl EventBus for EventBridgeBus {
    async fn publish(&self, detail_type: &str, detail: serde_json::Value) -> Result<(), String> {
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(SOURCE)
            .detail_type(detail_type)
            .detail(detail.to_string())
            .build();
        let out = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| e.as_service_error().map(|s| s.to_string()).unwrap_or_else(|| e.to_string()))?;
        if out.failed_entry_count > 0 {
            return Err(format!("{} event(s) refused", out.failed_entry_count));
        }
        Ok(())
    }
}
