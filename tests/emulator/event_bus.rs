//! The EventBridge bus on the emulator: a domain event published through the adapter (one
//! signed `PutEvents` of our own, `openloop_aws::bus`) is routed by a rule on the bus to its
//! target, with its detail type, source and detail as sent; a bus that does not exist is an
//! error, never a silent success.

use aws_sdk_sqs::types::QueueAttributeName;
use openloop_aws::aws_json::JsonService;
use openloop_core::ports::EventBus;
use openloop_tests::Scratch;
use serde_json::json;

#[tokio::test]
async fn a_published_event_reaches_a_rules_target_with_its_detail_and_a_missing_bus_is_an_error() {
    let scratch = Scratch::new("bus");
    let (config, clients) = scratch.provision().await;
    let queue = format!("{}-bus-target", config.event_bus);
    let url = clients
        .sqs()
        .create_queue()
        .queue_name(&queue)
        .send()
        .await
        .expect("queue")
        .queue_url
        .expect("url");
    let arn = clients
        .sqs()
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("attributes")
        .attributes
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .expect("arn");
    let events = JsonService::new(clients.sdk_config().clone(), "events", "AWSEvents");
    let rule = format!("{}-closed", config.event_bus);
    let pattern = json!({"source": ["openloop"], "detail-type": ["TaskClosed"]}).to_string();
    let put = json!({"Name": rule, "EventBusName": config.event_bus, "EventPattern": pattern});
    events.call("PutRule", &put).await.expect("answered").expect("rule");
    let targets = json!({"Rule": rule, "EventBusName": config.event_bus, "Targets": [{"Id": "queue", "Arn": arn}]});
    let answer = events.call("PutTargets", &targets).await.expect("answered").expect("targets");
    assert_eq!(answer["FailedEntryCount"], 0, "{answer}");

    let detail = json!({"task_id": "01JTASK", "status": "completed", "outcome": "recovered"});
    clients
        .event_bus(config.event_bus.clone())
        .publish("TaskClosed", detail.clone())
        .await
        .expect("published");
    let received = clients
        .sqs()
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("receive")
        .messages
        .unwrap_or_default();
    assert_eq!(received.len(), 1, "{received:?}");
    let event: serde_json::Value = serde_json::from_str(received[0].body().unwrap_or_default()).expect("an event");
    assert_eq!(event["source"], "openloop");
    assert_eq!(event["detail-type"], "TaskClosed");
    assert_eq!(event["detail"], detail);

    let refused = clients.event_bus("no-such-bus").publish("TaskClosed", detail).await;
    assert!(refused.is_err(), "{refused:?}");
    let _ = events
        .call(
            "RemoveTargets",
            &json!({"Rule": rule, "EventBusName": config.event_bus, "Ids": ["queue"]}),
        )
        .await;
    let _ = events
        .call("DeleteRule", &json!({"Name": rule, "EventBusName": config.event_bus}))
        .await;
    let _ = clients.sqs().delete_queue().queue_url(&url).send().await;
}
