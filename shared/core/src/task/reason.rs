//! Why a task changed: the reason codes of the decision log.
//!
//! Every entry of a task's log, and a closed or escalated task's `outcome_reason`, names one
//! [`Reason`]. Its code — the snake_case string of [`Reason::as_str`] — is what the API has
//! always shown and what stored items hold, so a code never changes once shipped: rename the
//! variant if you must, never the string. A new decision gets a new variant here, next to the
//! decisions of its kind.
//!
//! Storage keeps the string (`LogEntry::reason`, `Task::outcome_reason`), not this type: a log
//! written by an older build reads back whatever it says, and two kinds of entry have always
//! carried a code built from data rather than one of these — the confidence gate's
//! ([`GateReason`], below) and the step through `executing` on the way to a move
//! (`transition::start_handling`, logged `<reason>_handling`).
//!
//! A few codes are older than the snake_case rule and keep their punctuation: the escalation
//! triggers (`escalation_trigger:<trigger>`) and the approval an action needs
//! (`action_requires_approval: <action type>`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`Reason`], its codes and [`Reason::ALL`] from one list, so a variant cannot exist
/// without its code.
macro_rules! reasons {
    ($($(#[$doc:meta])* $variant:ident = $code:literal,)+) => {
        /// One decision's reason, as the decision log names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[$doc])* $variant,)+
        }

        impl Reason {
            /// Every reason, in declaration order.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant,)+];

            /// The stable code the log shows and the store keeps.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$variant => $code,)+
                }
            }
        }
    };
}

reasons! {
    // The confidence gate and the reviews that follow it (spec §6.2, §15.2, §26, §7.13).
    /// The account runs in manual mode: every new task goes to the owner first.
    ManualModeRequiresReview = "manual_mode_requires_review",
    /// The task type's `always` escalation trigger.
    EscalationTriggerAlways = "escalation_trigger:always",
    /// The member has been with the business over a year.
    EscalationTriggerMemberTenureOver1Year = "escalation_trigger:member_tenure_over1_year",
    /// The member has been with the business over two years.
    EscalationTriggerMemberTenureOver2Years = "escalation_trigger:member_tenure_over2_years",
    /// The member pays over 200 a month.
    EscalationTriggerMonthlyValueOver200 = "escalation_trigger:monthly_value_over200",
    /// The member cancelled with a complaint.
    EscalationTriggerCancellationReasonComplaint = "escalation_trigger:cancellation_reason_complaint",
    /// The member cancelled over billing.
    EscalationTriggerCancellationReasonBilling = "escalation_trigger:cancellation_reason_billing",
    /// The task runs in plan mode: the owner approves its plan first.
    PlanModeRequiresReview = "plan_mode_requires_review",
    /// The onboarding ramp's shadow phase reviews every new task.
    RampShadowRequiresReview = "ramp_shadow_requires_review",
    /// The onboarding ramp's guided phase reviews every new task.
    RampGuidedRequiresReview = "ramp_guided_requires_review",
    /// The limited phase, should it ever force review.
    RampLimitedRequiresReview = "ramp_limited_requires_review",
    /// The full phase, should it ever force review.
    RampFullRequiresReview = "ramp_full_requires_review",
    /// The task sends e-mail, an action that runs only once the owner approves.
    ActionRequiresApprovalSendEmail = "action_requires_approval: send_email",
    /// The task sends an SMS, an action that runs only once the owner approves.
    ActionRequiresApprovalSendSms = "action_requires_approval: send_sms",
    /// The task changes a member's status, an action that runs only once the owner approves.
    ActionRequiresApprovalUpdateMemberStatus = "action_requires_approval: update_member_status",
    /// The agent made the task on its own: a human sees it first.
    AgentSpawnedNeedsReview = "agent_spawned_needs_review",
    /// A subtask waits for its parent's approval.
    ParentNotApproved = "parent_not_approved",

    // The owner's hand (spec §17).
    /// The owner approved the draft as it was.
    OwnerApproved = "owner_approved",
    /// The owner approved after editing the draft.
    OwnerApprovedWithEdits = "owner_approved_with_edits",
    /// The owner approved a plan-mode task's plan.
    OwnerApprovedPlan = "owner_approved_plan",
    /// The owner edited the plan before approving it: a step's words, the order, a step removed.
    OwnerEditedPlan = "owner_edited_plan",
    /// The owner asked the agent to plan the task again, with instructions.
    OwnerInstructedPlan = "owner_instructed_plan",
    /// The owner skipped the task in review.
    OwnerSkipped = "owner_skipped",
    /// The owner cancelled the task.
    OwnerCancelled = "owner_cancelled",
    /// The owner paused the task: no step until resumed.
    OwnerPaused = "owner_paused",
    /// The owner resumed a paused task.
    OwnerResumed = "owner_resumed",
    /// The owner asked for the task's next step now.
    OwnerRanNow = "owner_ran_now",
    /// The owner put the item off a day (a review item or an escalation, from a mail).
    OwnerSnoozed = "owner_snoozed",
    /// The owner closed the task with an outcome.
    OwnerResolved = "owner_resolved",
    /// The owner answered an escalation with guidance.
    OwnerProvidedGuidance = "owner_provided_guidance",
    /// The agent wrote the next message from the owner's guidance.
    GuidanceDrafted = "guidance_drafted",
    /// The agent could not turn the owner's guidance into a message.
    GuidanceNotCarriedOut = "guidance_not_carried_out",
    /// The agent's answer from the owner's guidance is below its type's threshold: the owner
    /// reads the draft before the member does.
    LowConfidenceGuidanceAnswer = "low_confidence_guidance_answer",
    /// The owner rated the task's handling: thumbs up.
    OwnerFeedbackUp = "owner_feedback_up",
    /// The owner rated the task's handling: thumbs down.
    OwnerFeedbackDown = "owner_feedback_down",
    /// The owner corrected a closed task's outcome; attribution follows.
    OwnerCorrectedOutcome = "owner_corrected_outcome",

    // A touch: its turn, its gates, its send (spec §7, §10).
    /// The first message is due.
    FirstTouchDue = "first_touch_due",
    /// A follow-up is due by the cadence.
    FollowUpDue = "follow_up_due",
    /// An answer to the member's reply is due.
    AnswerDue = "answer_due",
    /// The account is paused: the step waits an hour.
    AccountPaused = "account_paused",
    /// Outside the account's send window: the touch waits for it to open.
    OutsideSendWindow = "outside_send_window",
    /// A first touch made ready outside the morning hours waits for them.
    OutsidePreferredHours = "outside_preferred_hours",
    /// A text due outside its hours in the member's time zone (8:00–21:00, narrower in some
    /// states) waits for them.
    TextQuietHours = "text_quiet_hours",
    /// The member's state allows only so many texts about one subject in 24 hours.
    TextSameSubjectLimit = "text_same_subject_limit",
    /// The account's texts for today are used up (`sms.daily_limit`).
    DailyTextLimit = "daily_text_limit",
    /// The account's daily send limit is reached.
    DailySendLimit = "daily_send_limit",
    /// The member's weekly message limit is reached.
    MemberWeeklyLimit = "member_weekly_limit",
    /// The member already got a message today.
    MemberDailyLimit = "member_daily_limit",
    /// Another of the member's tasks with a higher priority goes first.
    YieldingToHigherPriority = "yielding_to_higher_priority",
    /// Another send to the member kept racing this one's reservation.
    MemberLedgerContended = "member_ledger_contended",
    /// Another trigger asked for this member and type while this task was open: its context
    /// was added to this task instead of a second task.
    DuplicateContextMerged = "duplicate_context_merged",
    /// The touch is reserved: budget and limits counted, the mail about to leave.
    SendReserved = "send_reserved",
    /// The message left.
    MessageSent = "message_sent",
    /// A dry-run task recorded the message it would have sent.
    DryRunWouldSend = "dry_run_would_send",
    /// The ramp's shadow phase recorded the message it would have sent.
    ShadowWouldSend = "shadow_would_send",
    /// The mail provider refused the message; it is retried.
    SendRejected = "send_rejected",
    /// The mail provider kept refusing it: the owner decides.
    SendRejectedAfterRetries = "send_rejected_after_retries",
    /// Nobody knows whether the message left: never retried blind.
    SendOutcomeUnknown = "send_outcome_unknown",
    /// The agent could not draft the touch; it is retried.
    DraftFailed = "draft_failed",
    /// The agent kept failing to draft it: the owner decides.
    DraftFailedAfterRetries = "draft_failed_after_retries",
    /// There is no approved draft to send or record.
    MissingDraft = "missing_draft",
    /// The member has no e-mail address on file.
    MissingMemberEmail = "missing_member_email",
    /// The member's details (their creation event) have not arrived yet: tried again soon.
    AwaitingMemberDetails = "awaiting_member_details",
    /// The member is suppressed: nothing more is sent.
    MemberSuppressed = "member_suppressed",
    /// A plan-mode task reached a step before its plan was approved.
    PlanNotApproved = "plan_not_approved",

    // Budgets and the AI's budget (spec §7.1, §7.4).
    /// The task's time ran out.
    BudgetTimeExpired = "budget_time_expired",
    /// The task's messages are used up.
    BudgetMessagesExhausted = "budget_messages_exhausted",
    /// The cadence has no follow-up left.
    AllFollowupTouchesUsed = "all_followup_touches_used",
    /// Many turns and still no resolution.
    TooManyTurnsWithoutResolution = "too_many_turns_without_resolution",
    /// An action would send past the task's message budget.
    MessageBudgetExhausted = "message_budget_exhausted",
    /// An action would spend past the task's turn budget.
    TurnBudgetExhausted = "turn_budget_exhausted",
    /// A member's reply came with no turn left to read it.
    TurnBudgetExhaustedOnReply = "turn_budget_exhausted_on_reply",
    /// The task made every AI call it may make.
    AiBudgetExhausted = "ai_budget_exhausted",
    /// The account's AI calls for today are used up.
    AiDailyLimit = "ai_daily_limit",
    /// No AI call left today to plan a parent's next step.
    AiBudgetDayUsed = "ai_budget_day_used",

    // Anomalies (spec §7.5).
    /// Many conversation turns without a resolution.
    AnomalyTurnsWithoutResolution = "anomaly_turns_without_resolution",
    /// The member keeps replying and the task never closes: a possible loop.
    AnomalyMemberRepliesWithoutResolution = "anomaly_member_replies_without_resolution",
    /// A worker held the task in `executing` past its lease.
    AnomalyStuckExecuting = "anomaly_stuck_executing",

    // The stale guard (spec §30) and the connector it asks (spec §34).
    /// The failed payment went through before the first message.
    PaymentResolvedBeforeOutreach = "payment_resolved_before_outreach",
    /// The failed payment went through before a follow-up.
    PaymentResolvedBeforeFollowUp = "payment_resolved_before_follow_up",
    /// The member cancelled after the payment failed.
    MemberCancelledMembership = "member_cancelled_membership",
    /// The member checked in before the first message.
    MemberCheckedInBeforeOutreach = "member_checked_in_before_outreach",
    /// The member checked in before a follow-up.
    MemberCheckedInBeforeFollowUp = "member_checked_in_before_follow_up",
    /// The member came back before the first message.
    MemberReactivatedBeforeOutreach = "member_reactivated_before_outreach",
    /// The member came back before a follow-up.
    MemberReactivatedBeforeFollowUp = "member_reactivated_before_follow_up",
    /// The member cancelled since the task was made.
    MemberCancelledSinceTaskCreated = "member_cancelled_since_task_created",
    /// The member froze their membership since the task was made.
    MemberFrozenSinceTaskCreated = "member_frozen_since_task_created",
    /// The connector is in its backoff: the touch waits.
    ConnectorBackoff = "connector_backoff",
    /// The connector did not answer: the touch waits.
    ConnectorUnavailable = "connector_unavailable",

    // A member's reply (spec §6.5, §8, §17.3).
    /// The member replied.
    MemberReplied = "member_replied",
    /// The member replied to a dormant task.
    MemberRepliedWhileDormant = "member_replied_while_dormant",
    /// The member replied to a task the owner holds.
    MemberRepliedToOwner = "member_replied_to_owner",
    /// The member replied to a closed task; the owner is told.
    LateReplyOwnerNotified = "late_reply_owner_notified",
    /// An auto-reply (out of office and the like) is not a reply.
    AutoReplyIgnored = "auto_reply_ignored",
    /// The agent suspects the member asked to stop but did not say so for sure: the owner
    /// decides, and the member's other sends hold until then.
    SuspectedStop = "suspected_stop",
    /// Another task of the member's waits on the owner's word about a suspected stop.
    HeldForSuspectedStop = "held_for_suspected_stop",
    /// The task's parent is escalated: its subtasks send nothing until it resumes (§17.2).
    HeldForEscalatedParent = "held_for_escalated_parent",
    /// The parent resumed from its escalation: its held subtask is due again.
    ResumedWithParent = "resumed_with_parent",
    /// A reply from an address that is not the member's: kept for the owner, never read as
    /// the member's answer (no stop, no close, no commitment).
    ReplyFromAnotherSender = "reply_from_another_sender",
    /// The reply waits for the agent to read it.
    AwaitingAgent = "awaiting_agent",
    /// The task awaited a reply that is not there.
    NoReplyToRead = "no_reply_to_read",
    /// The agent drafted an answer to the reply.
    ReplyDrafted = "reply_drafted",
    /// The member asked what only the owner can answer: a holding reply goes first, then the
    /// task goes to the owner.
    HoldingReplyDue = "holding_reply_due",
    /// The member has decided to leave: a short parting note (thanks, the door is open) goes
    /// first, then the task closes.
    PartingNoteDue = "parting_note_due",
    /// The parting note to a member who decided to leave has gone: the conversation closes.
    ClosedAfterPartingNote = "closed_after_parting_note",
    /// The agent judged the reply needs nothing now: wait.
    MemberReplyWait = "member_reply_wait",
    /// The reply reached the goal.
    MemberReplyResolved = "member_reply_resolved",
    /// The member committed in words; the outcome is provisional.
    VerbalCommitment = "verbal_commitment",
    /// The agent could not read the reply.
    ReplyEvaluationFailed = "reply_evaluation_failed",
    /// The agent would answer but the task has no message left.
    WantsToReplyButMessageBudgetExhausted = "wants_to_reply_but_message_budget_exhausted",
    /// The agent would answer but the task's time is up.
    WantsToReplyButTimeBudgetExhausted = "wants_to_reply_but_time_budget_exhausted",
    /// The agent is not sure enough of its answer.
    LowConfidenceOnReply = "low_confidence_on_reply",
    /// The agent's follow-up draft is below its type's threshold: the owner reads it first
    ///.
    LowConfidenceFollowUp = "low_confidence_follow_up",
    /// The owner rewrote the first touch: a later touch is drafted to follow their words and
    /// waits for their review instead of going out canned (issue 42).
    OwnersVoiceFollowUp = "owners_voice_follow_up",
    /// The drafted message says word for word what the member was sent already: it goes to the
    /// owner, never twice to the member.
    DraftRepeatsSentMessage = "draft_repeats_sent_message",
    /// The agent would close below the close floor (60): the task waits instead (§37.5).
    LowConfidenceCloseWaits = "low_confidence_close_waits",
    /// The agent would close below the close floor with the budget nearly spent: the owner
    /// decides.
    LowConfidenceCloseEscalated = "low_confidence_close_escalated",
    /// The completion evaluator saw the goal reached (a concrete signal, or a finished
    /// progressive goal).
    GoalReachedByEvaluation = "goal_reached_by_evaluation",
    /// The budget ran out with progress towards the goal: a low-confidence completion,
    /// provisional until the goal's signal confirms it.
    BudgetExhaustedWithProgress = "budget_exhausted_with_progress",
    /// The budget ran out on a warm conversation without a concrete commitment: the owner
    /// sees it stalling rather than it closing on its own.
    ConversationStalled = "conversation_stalled",
    /// The completion evaluator recommends the owner takes the task.
    EvaluatorRecommendsOwner = "evaluator_recommends_owner",
    /// The completion evaluator found a negative outcome and recommends closing as neutral
    ///.
    EvaluatorClosedAsNeutral = "evaluator_closed_as_neutral",
    /// The member's reply threatens legal action: suppressed, and the owner told at once
    ///.
    LegalThreat = "legal_threat",
    /// The member's reply is abusive or threatening: suppressed, and the owner told at once
    ///.
    AbusiveReply = "abusive_reply",
    /// The agent meant to answer and wrote nothing.
    ReplyWithoutText = "reply_without_text",
    /// The agent closed the task without one of its type's outcomes.
    CloseWithoutValidOutcome = "close_without_valid_outcome",
    /// The reply is about something else than the task.
    ReplyAboutAnotherSubject = "reply_about_another_subject",
    /// The member asked what only the owner can answer.
    MemberQuestionNeedsOwner = "member_question_needs_owner",
    /// The agent handed the reply to the owner.
    AgentEscalatedReply = "agent_escalated_reply",
    /// The member asked to stop, or a bounce or complaint stopped them.
    MemberOptedOut = "member_opted_out",
    /// The member's data was erased (the owner's call, or PushPress deleted them).
    MemberErased = "member_erased",
    /// The member texted STOP (or refused texts in words): texts stop at once.
    MemberStoppedTexts = "member_stopped_texts",
    /// The member asked to stop and no address is known to suppress.
    OptOutWithoutAddress = "opt_out_without_address",

    // Escalation's timer (spec §17.5).
    /// The owner is reminded of the escalation.
    EscalationReminder = "escalation_reminder",
    /// Nobody answered the escalation in time: the task is cancelled.
    EscalationTimeout = "escalation_timeout",
    /// The reminder waits: the owner's notices for today are used up.
    OwnerNotificationBudgetUsed = "owner_notification_budget_used",
    /// The escalation timer moved to its next date.
    EscalationTimerRescheduled = "escalation_timer_rescheduled",

    // Dormancy and outcomes (spec §6.4, §9, §16).
    /// The dormant watch found no signal yet; it looks again later.
    DormantCheckNoSignal = "dormant_check_no_signal",
    /// The dormant watch ended without the goal.
    DormantWindowExpired = "dormant_window_expired",
    /// The member is in the holdout group: nothing is sent, the goal's signals are watched.
    HeldOutForLift = "held_out_for_lift",
    /// A held-out task's watch (as long as a contacted task's) ended without the goal.
    HeldOutWindowEnded = "held_out_window_ended",
    /// A dormant task whose type has no dormant cadence.
    DormantWithoutDormantCadence = "dormant_without_dormant_cadence",
    /// The member checked in: the goal's signal.
    GoalSignalCheckin = "goal_signal_checkin",
    /// The member checked in three times: the goal's signal.
    GoalSignalCheckinCount3 = "goal_signal_checkin_count_3",
    /// A payment succeeded: the goal's signal.
    GoalSignalPaymentSucceeded = "goal_signal_payment_succeeded",
    /// The membership came back: the goal's signal.
    GoalSignalReactivation = "goal_signal_reactivation",
    /// The member booked a trial: the goal's signal.
    GoalSignalTrialBooked = "goal_signal_trial_booked",
    /// One of the task's open loops was met (a reply, a check-in, a payment resolved).
    LoopMet = "loop_met",
    /// One of the task's open loops reached its deadline unmet.
    LoopExpired = "loop_expired",
    /// A loop the task waited on passed its deadline, and what it said to do then is done.
    LoopDeadlinePassed = "loop_deadline_passed",
    /// The goal's signal came after the task closed: a late win.
    GoalSignalAfterClose = "goal_signal_after_close",
    /// The goal's signal confirmed a provisional outcome.
    ProvisionalOutcomeConfirmed = "provisional_outcome_confirmed",
    /// A verbal commitment's window passed without its signal: downgraded.
    NoSignalAfterVerbalCommitment = "no_signal_after_verbal_commitment",
    /// The attribution window closed.
    AttributionWindowClosed = "attribution_window_closed",
    /// A closed task's outcome was valued.
    RevenueAttributed = "revenue_attributed",
    /// A provisional outcome was valued, pending its signal.
    ProvisionalValueAttributed = "provisional_value_attributed",

    // Staff to-dos and research (spec §31).
    /// A staff to-do was handed to the team.
    StaffTodoAssigned = "staff_todo_assigned",
    /// The owner was reminded of an open to-do.
    StaffTodoReminder = "staff_todo_reminder",
    /// A to-do waits for a human to mark it done.
    WaitingForTheOwner = "waiting_for_the_owner",
    /// The to-do's reminders ran out.
    OwnerRemindersUsed = "owner_reminders_used",
    /// The member checked in before anyone called: the call is not needed.
    MemberCheckedInBeforeTheCall = "member_checked_in_before_the_call",
    /// A review item the owner left undecided for the account's `review_expiry_days` is
    /// closed.
    ReviewExpired = "review_expired",
    /// A review item left undecided was sent as drafted, as the owner would have approved it
    /// (settings `on_review_expiry: "send_default"`).
    ReviewExpiredSentAsDrafted = "review_expired_sent_as_drafted",
    /// The owner brought back a task closed too early, within its attribution window (spec
    /// §37.6).
    OwnerReopened = "owner_reopened",
    /// A research task produced its deliverable.
    DeliverableProduced = "deliverable_produced",
    /// A research task found no tasks in its window to report on.
    NoTasksInWindow = "no_tasks_in_window",
    /// The task type names no deliverable.
    NoDeliverableDefined = "no_deliverable_defined",
    /// Nothing produces the type's deliverable yet.
    NoProducerForDeliverable = "no_producer_for_deliverable",
    /// A recurring template type has nothing to run itself.
    NoExecutorForCategory = "no_executor_for_category",

    // Automation actions (spec §15, §32).
    /// The actions' run is due.
    ActionsDue = "actions_due",
    /// Every action ran.
    ActionsExecuted = "actions_executed",
    /// A dry run or shadow task recorded its actions.
    ActionsRecorded = "actions_recorded",
    /// A member_update task with no actions.
    NoActions = "no_actions",
    /// Nothing runs tasks of this automation type yet.
    NoHandlerForAutomationType = "no_handler_for_automation_type",
    /// The actions change members and no connector is configured.
    NoConnectorConfigured = "no_connector_configured",
    /// An action runs only on an approved task.
    RequiresApproval = "requires_approval",
    /// An action failed.
    ActionFailed = "action_failed",
    /// Nobody knows whether an action took effect.
    ActionOutcomeUnknown = "action_outcome_unknown",
    /// A `create_escalation` action hands the task to the owner.
    AutomationEscalation = "automation_escalation",

    // Subtasks and the agent's planning (spec §14).
    /// A subtask was added to the parent.
    SubtaskAdded = "subtask_added",
    /// A subtask closed.
    SubtaskClosed = "subtask_closed",
    /// The parent's subtasks started.
    SubtasksStarted = "subtasks_started",
    /// The parent waits for its subtasks.
    SubtasksInProgress = "subtasks_in_progress",
    /// Every required subtask completed.
    SubtasksCompleted = "subtasks_completed",
    /// A required subtask went to the owner.
    RequiredSubtaskEscalated = "required_subtask_escalated",
    /// A required subtask failed.
    RequiredSubtaskFailed = "required_subtask_failed",
    /// The parent was cancelled, and its subtasks with it.
    ParentCancelled = "parent_cancelled",
    /// The planner added the next step.
    AgentPlannedStep = "agent_planned_step",
    /// The planner proposed no first step.
    PlannerFoundNoStep = "planner_found_no_step",
    /// The planner could not decide the next step.
    PlannerUnsure = "planner_unsure",
    /// The planner chose a step no task type can do.
    PlannerChoseAnUnusableStep = "planner_chose_an_unusable_step",
    /// The planned step could not be created.
    PlannedStepRefused = "planned_step_refused",
}

impl Reason {
    /// The reason whose code is `code`.
    pub fn parse(code: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.as_str() == code)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Reason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Reason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Reason::parse(&code).ok_or_else(|| serde::de::Error::custom(format!("unknown reason code {code:?}")))
    }
}

/// Why the gate decided as it did. Most of its decisions are a [`Reason`]; the confidence
/// comparison has always been logged with its numbers in the code
/// (`confidence_74_below_threshold_75`, `auto_approved_confidence_90`), and keeps that
/// spelling — the one place a creation's logged reason is not a fixed code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateReason {
    /// Manual mode, an escalation trigger, or a later review (plan mode, the ramp, an action
    /// that needs approval, an agent-made task, a parent not yet approved).
    Fixed(Reason),
    /// Confidence under the task type's threshold: the owner reviews it.
    ConfidenceBelowThreshold { confidence: u8, threshold: u8 },
    /// Confident enough to run without review.
    AutoApproved { confidence: u8 },
}

impl From<Reason> for GateReason {
    fn from(reason: Reason) -> Self {
        GateReason::Fixed(reason)
    }
}

impl fmt::Display for GateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateReason::Fixed(reason) => f.write_str(reason.as_str()),
            GateReason::ConfidenceBelowThreshold { confidence, threshold } => {
                write!(f, "confidence_{confidence}_below_threshold_{threshold}")
            }
            GateReason::AutoApproved { confidence } => write!(f, "auto_approved_confidence_{confidence}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// snake_case, but for the two legacy shapes the module doc names.
    fn is_code(code: &str) -> bool {
        let snake = |s: &str| {
            !s.is_empty()
                && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && !s.starts_with('_')
                && !s.ends_with('_')
                && !s.contains("__")
        };
        match code.split_once(':') {
            None => snake(code),
            Some(("escalation_trigger", rest)) => snake(rest),
            Some(("action_requires_approval", rest)) => rest.strip_prefix(' ').is_some_and(snake),
            Some(_) => false,
        }
    }

    #[test]
    fn every_code_is_unique_and_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for reason in Reason::ALL {
            assert!(
                is_code(reason.as_str()),
                "{reason:?}: {:?} is not a snake_case code",
                reason.as_str()
            );
            assert!(seen.insert(reason.as_str()), "{reason:?}: code {:?} used twice", reason.as_str());
        }
    }

    #[test]
    fn every_reason_round_trips_through_serde_as_its_code() {
        for &reason in Reason::ALL {
            let json = serde_json::to_value(reason).expect("serialize");
            assert_eq!(json, serde_json::Value::String(reason.as_str().to_owned()));
            assert_eq!(serde_json::from_value::<Reason>(json).expect("deserialize"), reason);
            assert_eq!(Reason::parse(reason.as_str()), Some(reason));
            assert_eq!(reason.to_string(), reason.as_str());
        }
    }

    #[test]
    fn an_unknown_code_is_refused_not_guessed() {
        assert!(serde_json::from_str::<Reason>("\"step_0\"").is_err());
        assert_eq!(Reason::parse("member_replied_handling"), None);
    }
}
