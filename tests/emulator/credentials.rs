//! Rotating the API token on DynamoDB: the new token, the old one's retirement and the account
//! are one transaction; the old token works through its overlap on the test clock, then not.

use openloop_tests::Stack;
use serde_json::json;

#[tokio::test]
async fn a_rotated_token_retires_after_its_overlap_on_dynamodb() {
    let stack = Stack::on_emulator("rotate-dynamo").await;
    let gym = stack.create_account("manual").await;
    let (status, rotated) = stack.post("/api/v1/settings/api-token/rotate", &gym.token, json!({})).await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["api_token"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        stack.get("/api/v1/settings", &gym.token).await.0,
        200,
        "the old token in its overlap"
    );
    assert_eq!(stack.get("/api/v1/settings", &new).await.0, 200);
    let until: jiff::Timestamp = rotated["previous_token_expires_at"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{rotated}"));
    stack.set_clock(&(until + jiff::SignedDuration::from_secs(1)).to_string()).await;
    assert_eq!(stack.get("/api/v1/settings", &gym.token).await.0, 401);
    assert_eq!(stack.get("/api/v1/settings", &new).await.0, 200);
    // The account names the new token now: a second rotation retires it in turn.
    let (status, again) = stack.post("/api/v1/settings/api-token/rotate", &new, json!({})).await;
    assert_eq!(status, 200, "{again}");
    let newest = again["api_token"].as_str().unwrap_or_default().to_owned();
    assert_eq!(stack.get("/api/v1/settings", &newest).await.0, 200);
}
