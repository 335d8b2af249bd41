//! What the owner just did, said back to them on the page a form sends them to: the words for
//! each `done=` code those pages share — the task's actions, its plan's, the settings' and
//! the triggers', and what the owner teaches the agent (a task's rating lands on its page,
//! a memory's on the memories page). Only words from these fixed lists reach the page:
//! nothing from the query string is echoed. A page that alone says a thing keeps its words
//! (the day's, the templates', the webhooks').

/// The words for `done` on the review queue, a task, the escalations and the settings.
pub fn notice(done: Option<&str>) -> Option<&'static str> {
    match done? {
        "approved" => Some("Approved: the message goes out at the task's next step."),
        "approved_edited" => Some("Approved with your edits: your version goes out at the task's next step."),
        "skipped" => Some("Skipped: the task is closed."),
        "guided" => Some("Guidance sent: the agent carries it out at the task's next step."),
        "resolved" => Some("Resolved: the task is closed with the outcome you chose."),
        "cancelled" => Some("Cancelled: the task is closed."),
        "saved" => Some("Saved."),
        "task_paused" => Some("Paused: this task takes no step until you resume it."),
        "task_resumed" => Some("Resumed: its next step is due again."),
        "task_run_now" => Some("Its next step is being taken now (the send window and the limits still apply)."),
        "task_reopened" => Some("Reopened: the task is back at work."),
        "plan_edited" => Some("Plan changed: approve it when it reads right."),
        "replanned" => Some("The agent planned it again with your instructions."),
        "paused" => Some("Paused: nothing is sent to your members until you resume."),
        "resumed" => Some("Resumed: due messages go out again."),
        "trigger_on" => Some("Trigger switched on: its events open tasks again."),
        "trigger_off" => Some("Trigger switched off: its events open nothing."),
        "trigger_added" => Some("Trigger added: its events open tasks from now on."),
        "trigger_changed" => Some("Trigger changed: its events open tasks as you set it from now on."),
        "trigger_deleted" => Some("Trigger removed: its events open nothing."),
        "pushpress_connected" => Some("Connected to PushPress: its members are being imported."),
        "pushpress_disconnected" => Some("Disconnected from PushPress: nothing more is imported."),
        other => learned(other),
    }
}

/// The words for `done` after what the owner teaches the agent (`learning.rs`): all the
/// memories and suggestions pages say back.
pub fn learned(done: &str) -> Option<&'static str> {
    match done {
        "rated" => Some("Thanks: your rating is kept, and the agent learns from it."),
        "corrected" => Some("Outcome corrected: its value and your numbers follow it."),
        "memory_added" => Some("Saved: the agent reads it from its next message."),
        "memory_deleted" => Some("Deleted: the agent no longer reads it."),
        "accepted" => Some("Accepted: the change is applied. Undo it below if it was wrong."),
        "dismissed" => Some("Dismissed: nothing changes."),
        "reminded" => Some("It comes back in a week."),
        "undone" => Some("Undone: the change is taken back."),
        _ => None,
    }
}
