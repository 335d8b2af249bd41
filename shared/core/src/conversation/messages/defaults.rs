//! The shipped message templates, compiled into every binary (a Lambda has no `messages/`
//! folder): `messages/<task_type>/<touch>.md` at the repository's root. A test checks that
//! every member-facing type and touch has one here and that the folder holds no other.

/// `(task_type, touch, file text)`.
pub(super) const SHIPPED: &[(&str, &str, &str)] = &[
    ("ad_hoc", "first", include_str!("../../../../../messages/ad_hoc/first.md")),
    (
        "ad_hoc",
        "follow_up_1",
        include_str!("../../../../../messages/ad_hoc/follow_up_1.md"),
    ),
    (
        "ad_hoc",
        "follow_up_2",
        include_str!("../../../../../messages/ad_hoc/follow_up_2.md"),
    ),
    ("ad_hoc", "reply", include_str!("../../../../../messages/ad_hoc/reply.md")),
    ("ad_hoc", "guided", include_str!("../../../../../messages/ad_hoc/guided.md")),
    ("ad_hoc", "holding", include_str!("../../../../../messages/ad_hoc/holding.md")),
    ("ad_hoc", "parting", include_str!("../../../../../messages/ad_hoc/parting.md")),
    ("churn_risk", "first", include_str!("../../../../../messages/churn_risk/first.md")),
    (
        "churn_risk",
        "follow_up_1",
        include_str!("../../../../../messages/churn_risk/follow_up_1.md"),
    ),
    (
        "churn_risk",
        "follow_up_2",
        include_str!("../../../../../messages/churn_risk/follow_up_2.md"),
    ),
    ("churn_risk", "reply", include_str!("../../../../../messages/churn_risk/reply.md")),
    ("churn_risk", "guided", include_str!("../../../../../messages/churn_risk/guided.md")),
    (
        "lead_followup",
        "first",
        include_str!("../../../../../messages/lead_followup/first.md"),
    ),
    (
        "lead_followup",
        "follow_up_1",
        include_str!("../../../../../messages/lead_followup/follow_up_1.md"),
    ),
    (
        "lead_followup",
        "follow_up_2",
        include_str!("../../../../../messages/lead_followup/follow_up_2.md"),
    ),
    (
        "lead_followup",
        "reply",
        include_str!("../../../../../messages/lead_followup/reply.md"),
    ),
    (
        "lead_followup",
        "guided",
        include_str!("../../../../../messages/lead_followup/guided.md"),
    ),
    (
        "milestone_review",
        "first",
        include_str!("../../../../../messages/milestone_review/first.md"),
    ),
    (
        "milestone_review",
        "reply",
        include_str!("../../../../../messages/milestone_review/reply.md"),
    ),
    (
        "milestone_review",
        "guided",
        include_str!("../../../../../messages/milestone_review/guided.md"),
    ),
    ("onboarding", "first", include_str!("../../../../../messages/onboarding/first.md")),
    (
        "onboarding",
        "follow_up_1",
        include_str!("../../../../../messages/onboarding/follow_up_1.md"),
    ),
    (
        "onboarding",
        "follow_up_2",
        include_str!("../../../../../messages/onboarding/follow_up_2.md"),
    ),
    ("onboarding", "reply", include_str!("../../../../../messages/onboarding/reply.md")),
    ("onboarding", "guided", include_str!("../../../../../messages/onboarding/guided.md")),
    (
        "payment_recovery",
        "first",
        include_str!("../../../../../messages/payment_recovery/first.md"),
    ),
    (
        "payment_recovery",
        "follow_up_1",
        include_str!("../../../../../messages/payment_recovery/follow_up_1.md"),
    ),
    (
        "payment_recovery",
        "reply",
        include_str!("../../../../../messages/payment_recovery/reply.md"),
    ),
    (
        "payment_recovery",
        "guided",
        include_str!("../../../../../messages/payment_recovery/guided.md"),
    ),
    ("win_back", "first", include_str!("../../../../../messages/win_back/first.md")),
    (
        "win_back",
        "follow_up_1",
        include_str!("../../../../../messages/win_back/follow_up_1.md"),
    ),
    (
        "win_back",
        "follow_up_2",
        include_str!("../../../../../messages/win_back/follow_up_2.md"),
    ),
    ("win_back", "reply", include_str!("../../../../../messages/win_back/reply.md")),
    ("win_back", "guided", include_str!("../../../../../messages/win_back/guided.md")),
];
