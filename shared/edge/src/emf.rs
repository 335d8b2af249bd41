//! CloudWatch Embedded Metric Format: platform metrics as one JSON log line,
//! which CloudWatch Logs turns into metrics in the `Openloop` namespace — no API call, no
//! extra permission. Lambda writes stdout to the function's log group.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use openloop_core::owner::metrics::DailyMetrics;

pub const NAMESPACE: &str = "Openloop";

/// One EMF document: `metrics` (name, value) as counts, with the `Function` dimension.
pub fn line(function: &str, at: Timestamp, metrics: &[(&str, f64)]) -> String {
    let definitions: Vec<Value> = metrics.iter().map(|(name, _)| json!({"Name": name, "Unit": "Count"})).collect();
    let mut root = Map::new();
    root.insert(
        "_aws".into(),
        json!({
            "Timestamp": at.as_millisecond(),
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [["Function"]],
                "Metrics": definitions,
            }],
        }),
    );
    root.insert("Function".into(), Value::String(function.to_owned()));
    for (name, value) in metrics {
        root.insert((*name).to_owned(), json!(value));
    }
    Value::Object(root).to_string()
}

/// The metric name of a daily count (`messages_sent` → `MessagesSent`).
pub fn metric_name(field: &str) -> String {
    field
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or_else(String::new, |f| f.to_ascii_uppercase().to_string() + c.as_str())
        })
        .collect()
}

/// The counts of a metrics run as one EMF line, plus `extra` (name, value) pairs.
pub fn counts_line(function: &str, at: Timestamp, counts: &DailyMetrics, extra: &[(&str, f64)]) -> String {
    let names: Vec<(String, f64)> = counts
        .fields()
        .into_iter()
        .map(|(field, v)| (metric_name(field), f64::from(v)))
        .chain(extra.iter().map(|(n, v)| ((*n).to_owned(), *v)))
        .collect();
    let borrowed: Vec<(&str, f64)> = names.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    line(function, at, &borrowed)
}

/// Write a line where CloudWatch reads it (stdout in Lambda); locally it is a debug log.
pub fn emit(line: &str) {
    if std::env::var("AWS_LAMBDA_FUNCTION_NAME").is_ok() {
        println!("{line}");
    } else {
        tracing::debug!(emf = %line, "metrics");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_declares_every_metric_it_carries_under_the_namespace() {
        let at: Timestamp = "2026-11-02T14:00:00Z".parse().expect("time");
        let counts = DailyMetrics {
            messages_sent: 3,
            ..DailyMetrics::default()
        };
        let doc: Value = serde_json::from_str(&counts_line("attribution", at, &counts, &[("Alerts", 1.0)])).expect("json");
        let directive = &doc["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "Openloop");
        assert_eq!(doc["_aws"]["Timestamp"], at.as_millisecond());
        assert_eq!(doc["Function"], "attribution");
        let declared: Vec<&str> = directive["Metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .map(|m| m["Name"].as_str().expect("name"))
            .collect();
        assert!(declared.contains(&"MessagesSent") && declared.contains(&"Alerts"));
        for name in declared {
            assert!(doc[name].is_number(), "{name} has a value at the root");
        }
        assert_eq!(doc["MessagesSent"], 3.0);
        assert_eq!(directive["Dimensions"][0][0], "Function");
    }
}
