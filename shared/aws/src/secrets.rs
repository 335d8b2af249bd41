//! The platform's own secrets at start-up: a value named by a Secrets Manager secret (its ARN
//! or name: `GetSecretValue`) or an SSM SecureString parameter (`ssm:/name` or a parameter's
//! ARN: `GetParameter` with decryption), read once when a function starts, with signed
//! requests of our own ([`crate::aws_json`]). The value is never logged.

use serde_json::{Value, json};

use crate::aws_json::JsonService;

/// Reads the platform's secrets.
#[derive(Clone)]
pub struct PlatformSecrets {
    secrets_manager: JsonService,
    ssm: JsonService,
}

impl PlatformSecrets {
    pub fn new(shared: aws_config::SdkConfig) -> Self {
        Self {
            secrets_manager: JsonService::new(shared.clone(), "secretsmanager", "secretsmanager"),
            ssm: JsonService::new(shared, "ssm", "AmazonSSM"),
        }
    }

    /// The value `id` names (see the module's notes); the error names `id`, never the value.
    pub async fn value(&self, id: &str) -> Result<String, String> {
        let parameter = id.strip_prefix("ssm:").map(str::to_owned).or_else(|| {
            id.starts_with("arn:")
                .then(|| id.split_once(":parameter").map(|(_, name)| name.to_owned()))
                .flatten()
        });
        let (answer, pointer) = match &parameter {
            Some(name) => (
                self.ssm
                    .call_retried("GetParameter", &json!({"Name": name, "WithDecryption": true}))
                    .await,
                "/Parameter/Value",
            ),
            None => (
                self.secrets_manager.call_retried("GetSecretValue", &json!({"SecretId": id})).await,
                "/SecretString",
            ),
        };
        match answer {
            Ok(Ok(answer)) => answer
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{id}: no text value")),
            Ok(Err(refused)) => Err(format!("{id}: {refused}")),
            Err(e) => Err(format!("{id}: {e}")),
        }
    }
}
