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
    }
}

/// The HTTP samples through `openloop_edge::apigw`, the Lambda entry of api, dashboard and
/// webhooks, to the real routers on the in-memory ports: what API Gateway would get back.
#[tokio::test]
async fn the_http_samples_are_answered_through_the_lambda_entry() {
    use openloop_edge::apigw::{HttpApiAnswer, HttpApiEvent, answer};
    let event = |name: &str| -> HttpApiEvent { serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}")) };
    let json = |answer: &HttpApiAnswer| -> serde_json::Value { serde_json::from_str(&answer.body).expect("a JSON body") };
    let signing_key = secrecy::SecretString::from("a-signing-key-for-the-samples");

    let (engine, _, _) = openloop_tests::memory_engine();
    let api = std::sync::Arc::new(openloop_fn_api::ApiState {
        engine: engine.clone(),
        admin_token: secrecy::SecretString::from("the-admin-token"),
    });
    let dashboard = std::sync::Arc::new(openloop_fn_dashboard::DashboardState {
        engine,
        session_key: openloop_fn_dashboard::session_key(&signing_key),
    });
    // api.json carries an example token: refused in CONTRACT.md's shape, with its challenge.
    let refused = answer(openloop_fn_api::router(api), event("api.json")).await;
    assert_eq!(refused.status_code, 401, "{refused:?}");
    assert_eq!(json(&refused)["error"]["code"], "unauthorized");
    assert!(refused.headers["www-authenticate"].starts_with("Bearer"), "{refused:?}");
    assert!(!refused.is_base64_encoded);

    // dashboard.json asks for the sign-in page: HTML, as text.
    let page = answer(openloop_fn_dashboard::router(dashboard), event("dashboard.json")).await;
    assert_eq!(page.status_code, 200, "{page:?}");
    assert!(page.headers["content-type"].starts_with("text/html"), "{page:?}");
    assert!(!page.is_base64_encoded && page.body.contains("<form"), "{page:?}");

    // webhooks.json is a PushPress delivery for an account this store does not have.
    let (engine, _, _) = openloop_tests::memory_engine();
    let webhooks = std::sync::Arc::new(openloop_fn_webhooks::WebhooksState {
        engine,
        inbound_token: secrecy::SecretString::from("an-inbound-token"),
        accept_wall_clock: false,
        sms_notifications: openloop_aws::sns::SnsVerifier::new(openloop_aws::tls::client(), None),
    });
    let unknown = answer(openloop_fn_webhooks::router(webhooks), event("webhooks.json")).await;
    assert!(matches!(unknown.status_code, 401 | 404), "{unknown:?}");
    assert!(json(&unknown)["error"]["code"].is_string(), "{unknown:?}");
}
