//! `make run`'s PushPress: with no `OPENLOOP_PUSHPRESS_BASE_URL`, the local runtime serves its
//! stand-in (`openloop_local::pushpress`) and a gym connects to it — the demo gym's members
//! imported through the connector's real HTTP client — while a key the stand-in refuses gets
//! the owner a 4xx in the error shape, as a key PushPress refuses does, and nothing changes.

use openloop_tests::Stack;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn a_gym_connects_to_the_local_stand_in_and_a_refused_key_is_a_4xx() {
    let stack = Stack::start_as_make_run("local-pushpress").await;
    let base = stack
        .running
        .pushpress_stand_in
        .clone()
        .expect("make run serves a stand-in PushPress");
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/v3"), "{base}");

    // A key outside the stand-in's rule: refused as PushPress refuses one, nothing saved.
    let (gym, status, error) = stack.refused_pushpress_key("pp_live_not_local").await;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["error"]["code"], "pushpress_refused", "{error}");
    assert!(error["error"]["message"].as_str().is_some_and(|m| m.contains("refused")), "{error}");
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(connector["status"], "not_connected", "{connector}");

    // A key it takes: connected, subscribed, and the demo gym imported.
    let (status, settings) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(json!({"pushpress": {"api_key": "local_demo"}})),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    stack.run().await;
    let (_, connector) = stack.get("/api/v1/connector", &gym.token).await;
    assert_eq!(connector["status"], "connected", "{connector}");
    assert_eq!(connector["webhook"]["registered"], true, "{connector}");
    assert_eq!(connector["imported_members"], 6, "the demo gym's six: {connector}");
    assert_eq!(connector["imported_checkins"], 60, "twelve each for five members: {connector}");
    let (status, members) = stack.get("/api/v1/members?limit=50", &gym.token).await;
    assert_eq!(status, 200, "{members}");
    let text = members.to_string();
    for name in ["Sarah", "Alex", "Jordan", "Priya", "Sam", "Lee"] {
        assert!(text.contains(name), "{name} imported: {members}");
    }
    stack.running.stop();
}
