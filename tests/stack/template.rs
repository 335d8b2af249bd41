//! What the deployment template promises about failures, read from `infra/template.yaml`:
//! every function EventBridge invokes (on a schedule or on the bus) has its retries bounded
//! and a failure destination, and every one of its rules a retry policy and a dead-letter
//! queue, so no scheduled or event-driven run fails in silence.

use openloop_tests::grants::{functions, named, resources};

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

/// Issue 46, point 4: no function's environment holds a secret — the platform's are in
/// Secrets Manager, named by `{NAME}_SECRET` and read at start-up by every function (and only
/// its own stack's secrets); each gym's PushPress key and webhook secrets are sealed with the
/// stack's KMS key, which only the functions that use them may decrypt with, the others that
/// write them may only seal with, and the tick neither.
#[test]
fn no_secret_is_in_an_environment_and_only_the_functions_that_use_a_gyms_secret_may_decrypt_it() {
    let template = include_str!("../../infra/template.yaml");
    let blocks = resources(template);
    let block = |name: &str| named(&blocks, name);
    for parameter in ["SigningKey", "AdminToken", "InboundToken", "PushPressApiKey", "LlmApiKey"] {
        let used: Vec<&String> = blocks
            .iter()
            // The conditions name the parameters too (whether one is set), never their values.
            .filter(|b| !b.trim_start().starts_with("Has"))
            .filter(|b| b.contains(&format!("!Ref {parameter}\n")) || b.contains(&format!("!Ref {parameter},")))
            .collect();
        assert_eq!(used.len(), 1, "{parameter} is used once: {used:?}");
        assert!(
            used[0].contains("Type: AWS::SecretsManager::Secret") && used[0].contains(&format!("SecretString: !Ref {parameter}\n")),
            "{parameter} goes into a secret only"
        );
    }
    let globals = template.split("\nResources:\n").next().unwrap_or_default();
    for variable in [
        "OPENLOOP_SIGNING_KEY_SECRET: !Ref SigningKeySecret",
        "OPENLOOP_ADMIN_TOKEN_SECRET: !Ref AdminTokenSecret",
        "OPENLOOP_INBOUND_TOKEN_SECRET: !Ref InboundTokenSecret",
        "OPENLOOP_KMS_KEY_ID: !GetAtt SecretsKey.Arn",
    ] {
        assert!(globals.contains(variable), "{variable}");
    }
    for plain in [
        "OPENLOOP_SIGNING_KEY:",
        "OPENLOOP_ADMIN_TOKEN:",
        "OPENLOOP_INBOUND_TOKEN:",
        "OPENLOOP_PUSHPRESS_API_KEY:",
        "API_KEY:",
    ] {
        assert!(!template.contains(plain), "no function's environment holds {plain}");
    }
    let granted = |action: &str| {
        template
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && l.contains(action))
            .count()
    };
    assert_eq!(granted("kms:Decrypt"), 1, "one grant of kms:Decrypt");
    assert!(block("GymSecretsOpenPolicy").contains("Action: kms:Decrypt\n"));
    assert!(!block("GymSecretsOpenPolicy").contains("GenerateDataKey"));
    assert!(block("GymSecretsSealPolicy").contains("Action: kms:GenerateDataKey\n"));
    assert!(!block("GymSecretsSealPolicy").contains("Decrypt"));
    assert!(block("PlatformSecretsPolicy").contains("Action: secretsmanager:GetSecretValue"));
    assert_eq!(granted("secretsmanager:GetSecretValue"), 1);
    let mut open = Vec::new();
    let mut seal = Vec::new();
    for (name, block) in functions(template) {
        assert!(
            block.contains("- !Ref PlatformSecretsPolicy\n"),
            "{name} reads the platform's secrets"
        );
        assert!(!block.contains("kms:"), "{name}: KMS only through the two policies");
        if block.contains("- !Ref GymSecretsOpenPolicy\n") {
            open.push(name.clone());
        }
        if block.contains("- !Ref GymSecretsSealPolicy\n") {
            seal.push(name);
        }
    }
    assert_eq!(
        open,
        [
            "WebhooksFunction",
            "ApiFunction",
            "DashboardFunction",
            "SignalsFunction",
            "ExecuteFunction",
            "FollowupFunction"
        ],
        "the functions that use a gym's secret (the PushPress key before a touch, at connecting, importing and disconnecting; an endpoint's to sign)"
    );
    assert_eq!(
        seal,
        [
            "WebhooksFunction",
            "ApiFunction",
            "DashboardFunction",
            "SignalsFunction",
            "AttributionFunction",
            "EvaluationFunction"
        ],
        "the functions that write an account or an endpoint (its secret sealed on the write)"
    );
}

/// Issue 46, point 5: with `Llm=bedrock` the functions that ask the model invoke Bedrock under
/// their own role, on the one foundation model the stack names — no key, and no other model.
#[test]
fn bedrock_is_granted_on_the_named_model_only_to_the_functions_that_ask_the_model() {
    let template = include_str!("../../infra/template.yaml");
    let policy = resources(template)
        .into_iter()
        .find(|b| b.starts_with("  BedrockInvokePolicy:\n"))
        .expect("the Bedrock policy");
    assert!(policy.contains("Action: bedrock:InvokeModel\n"), "{policy}");
    assert!(
        policy.contains("Resource: !Sub \"arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${BedrockModel}\"\n"),
        "on the named model only: {policy}"
    );
    let grants = template
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("Action: bedrock:") || l.starts_with("- bedrock:"))
        .count();
    assert_eq!(grants, 1, "no other Bedrock grant");
    assert!(template.contains("OPENLOOP_BEDROCK_MODEL: !Ref BedrockModel\n"));
    assert!(template.contains("AllowedValues: [offline, anthropic, openai, bedrock]"));
    let invoking: Vec<String> = functions(template)
        .into_iter()
        .filter(|(_, b)| b.contains("- !Ref BedrockInvokePolicy\n"))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        invoking,
        [
            "WebhooksFunction",
            "ApiFunction",
            "DashboardFunction",
            "SignalsFunction",
            "TickFunction",
            "ExecuteFunction",
            "FollowupFunction",
            "DormantFunction",
            "EvaluationFunction",
            "AnalysisFunction"
        ],
        "every function that builds an agent, but attribution, which never asks it"
    );
}
