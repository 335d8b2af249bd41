//! Which touches of a task type's cadence may be texts: the data file `rules/texts.toml`,
//! compiled in and checked by a test against the task types and their cadences.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

pub const TEXT_TOUCHES: &str = include_str!("../../../../rules/texts.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    texts: Vec<u32>,
}

fn table() -> &'static BTreeMap<String, Vec<u32>> {
    static TABLE: OnceLock<BTreeMap<String, Vec<u32>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str::<BTreeMap<String, Row>>(TEXT_TOUCHES)
            .map(|rows| rows.into_iter().map(|(k, r)| (k, r.texts)).collect())
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "rules/texts.toml does not parse; no touch is a text");
                BTreeMap::new()
            })
    })
}

/// Whether touch `touch` of a task of `task_type` may be a text.
pub fn may_text(task_type: &str, touch: u32) -> bool {
    table().get(task_type).is_some_and(|t| t.contains(&touch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_names_real_task_types_and_touches_their_cadences_have() {
        let rows: BTreeMap<String, Row> = toml::from_str(TEXT_TOUCHES).expect("rules/texts.toml parses");
        assert!(!rows.is_empty());
        for (key, row) in rows {
            let def = crate::task::task_type::lookup(&key).unwrap_or_else(|| panic!("{key} is not a task type"));
            for touch in row.texts {
                assert!(def.cadence.allows_touch(touch), "{key}: touch {touch} is past its cadence");
            }
        }
        assert!(may_text("ad_hoc", 0));
        assert!(!may_text("churn_risk", 0));
        assert!(!may_text("staff_call_member", 0));
    }
}
