//! Logging setup shared by every binary: JSON lines in Lambda (CloudWatch), readable text
//! locally; level from `RUST_LOG` (default info).

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(colour);
    let result = if std::env::var("AWS_LAMBDA_FUNCTION_NAME").is_ok() {
        builder.json().without_time().try_init()
    } else {
        builder.try_init()
    };
    let _ = result;
}
