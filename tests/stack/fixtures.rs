//! `events/*.json` are what `cargo lambda invoke --data-file` sends: each must parse as its
//! function's Lambda event, with a body the function accepts.

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use openloop_core::members::event::SignalEnvelope;
use openloop_core::task::work::WorkItem;

fn read(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../events").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sqs_body(name: &str) -> String {
    let event: SqsEvent = serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    event
        .records
        .first()
        .and_then(|r| r.body.clone())
        .unwrap_or_else(|| panic!("{name}: no record body"))
}

#[test]
fn every_sample_event_parses_as_its_functions_input() {
    for name in ["execute.json", "followup.json", "dormant.json"] {
        let _: WorkItem = serde_json::from_str(&sqs_body(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let _: SignalEnvelope = serde_json::from_str(&sqs_body("signals.json")).unwrap_or_else(|e| panic!("signals.json: {e}"));
    for name in ["tick.json", "attribution.json"] {
        let _: EventBridgeEvent<serde_json::Value> = serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for name in ["api.json", "dashboard.json", "webhooks.json"] {
        let event: serde_json::Value = serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(event["version"], "2.0", "{name}: an HTTP API payload v2.0");
        assert!(event["rawPath"].as_str().is_some_and(|p| p.starts_with('/')), "{name}: rawPath");
    }
}
