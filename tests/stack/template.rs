//! What the deployment template promises about failures, read from `infra/template.yaml`:
//! every function EventBridge invokes (on a schedule or on the bus) has its retries bounded
//! and a failure destination, and every one of its rules a retry policy and a dead-letter
//! queue, so no scheduled or event-driven run fails in silence.

/// The template's resources, one block each (a line indented two spaces starts one).
pub(crate) fn resources(template: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in template.lines() {
        let starts = line.len() > 2 && line.starts_with("  ") && line[2..].starts_with(|c: char| c.is_ascii_uppercase());
        match blocks.last_mut() {
            Some(block) if !starts => {
                block.push_str(line);
                block.push('\n');
            }
            _ => blocks.push(format!("{line}\n")),
        }
    }
    blocks
}

#[test]
fn every_function_eventbridge_invokes_has_bounded_retries_and_a_failure_destination() {
    let template = include_str!("../../infra/template.yaml");
    let mut invoked = Vec::new();
    for block in resources(template).iter().filter(|b| b.contains("Type: AWS::Serverless::Function")) {
        let name = block.lines().next().unwrap_or_default().trim().trim_end_matches(':').to_owned();
        let rules = block.matches("Type: Schedule\n").count() + block.matches("Type: EventBridgeRule\n").count();
        if rules == 0 {
            continue;
        }
        invoked.push(name.clone());
        assert!(
            block.contains("EventInvokeConfig:\n        MaximumRetryAttempts: "),
            "{name}: its async retries bounded"
        );
        assert!(
            block.contains("OnFailure:\n            Type: SQS\n            Destination: !GetAtt RunsDeadLetterQueue.Arn"),
            "{name}: a failure destination"
        );
        assert_eq!(block.matches("RetryPolicy:\n").count(), rules, "{name}: each rule's retry policy");
        assert_eq!(
            block
                .matches("DeadLetterConfig:\n              Arn: !GetAtt RunsDeadLetterQueue.Arn")
                .count(),
            rules,
            "{name}: each rule's dead-letter queue"
        );
    }
    assert_eq!(
        invoked,
        ["TickFunction", "AttributionFunction", "EvaluationFunction", "AnalysisFunction"],
        "the functions EventBridge invokes"
    );
    // EventBridge may write to the queue, and a message there is an alarm.
    for needed in [
        "Principal: {Service: events.amazonaws.com}\n            Action: sqs:SendMessage\n            Resource: !GetAtt RunsDeadLetterQueue.Arn",
        "Value: !GetAtt RunsDeadLetterQueue.QueueName",
    ] {
        assert!(template.contains(needed), "{needed}");
    }
}
