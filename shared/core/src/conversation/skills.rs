//! The skill files, compiled into every binary: a Lambda has no `skills/` folder
//! to read at run time, and a missing skill must fail the build's tests, not a member's
//! conversation.

/// `skills/_base.md`: the rules every task type inherits.
pub const BASE: &str = include_str!("../../../../skills/_base.md");

/// Every task type's skill, by file name under `skills/`.
const SKILLS: &[(&str, &str)] = &[
    ("ad_hoc.md", include_str!("../../../../skills/ad_hoc.md")),
    ("bulk_tag_at_risk.md", include_str!("../../../../skills/bulk_tag_at_risk.md")),
    ("churn_risk.md", include_str!("../../../../skills/churn_risk.md")),
    ("lead_followup.md", include_str!("../../../../skills/lead_followup.md")),
    ("member_update.md", include_str!("../../../../skills/member_update.md")),
    ("milestone_review.md", include_str!("../../../../skills/milestone_review.md")),
    (
        "monthly_churn_analysis.md",
        include_str!("../../../../skills/monthly_churn_analysis.md"),
    ),
    ("onboarding.md", include_str!("../../../../skills/onboarding.md")),
    ("payment_recovery.md", include_str!("../../../../skills/payment_recovery.md")),
    ("staff_call_member.md", include_str!("../../../../skills/staff_call_member.md")),
    ("win_back.md", include_str!("../../../../skills/win_back.md")),
];

/// The skill text for a task type's `skill_file`, if it was compiled in.
pub fn skill(file: &str) -> Option<&'static str> {
    SKILLS.iter().find(|(name, _)| *name == file).map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task_type::REGISTRY;

    const SECTIONS: [&str; 6] = ["## Goal", "## Tone", "## Do", "## Never", "## Outcomes", "## Escalate when"];

    #[test]
    fn every_registered_type_has_its_skill_compiled_in_with_every_section() {
        for def in REGISTRY {
            let text = skill(def.skill_file).unwrap_or_else(|| panic!("{}: {} is not compiled in", def.key, def.skill_file));
            for section in SECTIONS {
                assert!(text.contains(section), "{}: missing {section}", def.skill_file);
            }
        }
        for section in SECTIONS {
            assert!(BASE.contains(section), "_base.md: missing {section}");
        }
    }

    #[test]
    fn every_skill_explains_every_outcome_of_its_type() {
        for def in REGISTRY {
            let text = skill(def.skill_file).unwrap_or_default();
            for outcome in def.goal.outcomes {
                assert!(
                    text.contains(&format!("`{}`", outcome.code)),
                    "{}: outcome {} is not explained",
                    def.skill_file,
                    outcome.code
                );
            }
        }
    }

    #[test]
    fn the_compiled_skills_are_the_files_on_disk() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("skills/")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".md") && n != "_base.md")
            .collect();
        on_disk.sort();
        let compiled: Vec<String> = SKILLS.iter().map(|(n, _)| (*n).to_owned()).collect();
        assert_eq!(on_disk, compiled, "a skill file was added or removed without compiling it in");
    }
}
