//! Logging setup shared by every binary: JSON lines in Lambda (CloudWatch), readable text
//! locally; levels from `RUST_LOG` as targets and levels (`info`, `openloop_core=debug,warn`;
//! default info). `Targets` rather than `EnvFilter`: the latter's span and field matching
//! brings a regex compiler into every Lambda binary.

use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// `RUST_LOG` read as targets and levels; unset or unreadable, info.
fn targets(rust_log: Option<&str>) -> Targets {
    rust_log
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(Level::INFO))
}

pub fn init() {
    let targets = targets(std::env::var("RUST_LOG").ok().as_deref());
    let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt().with_target(false).with_ansi(colour);
    let result = if std::env::var("AWS_LAMBDA_FUNCTION_NAME").is_ok() {
        builder.json().without_time().finish().with(targets).try_init()
    } else {
        builder.finish().with(targets).try_init()
    };
    let _ = result;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_sets_levels_per_target_and_info_is_the_default() {
        let read = targets(Some("openloop_core=debug,warn"));
        assert!(read.would_enable("openloop_core::engine", &Level::DEBUG));
        assert!(!read.would_enable("hyper", &Level::INFO));
        assert!(read.would_enable("hyper", &Level::WARN));
        for unset in [None, Some("not a level=at all=")] {
            let default = targets(unset);
            assert!(default.would_enable("anything", &Level::INFO));
            assert!(!default.would_enable("anything", &Level::DEBUG));
        }
    }
}
