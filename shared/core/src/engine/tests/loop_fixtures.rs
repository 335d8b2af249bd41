//! What the loop tests (`loops.rs`, `loops_rest.rs`, `loops_step.rs`), the outcome, to-do and
//! holdout tests share: a member event delivered through the signals path now, a check-in, and the
//! loop records of a member.

use super::*;
use crate::ports::Clock;
use crate::task::open_loop::OpenLoop;

impl World {
    /// `event`, delivered now as webhook `id` through the signals path.
    pub(super) async fn signal(&self, id: &str, event: MemberEvent) {
        let envelope = SignalEnvelope {
            account_id: self.account.id,
            webhook_id: id.into(),
            received_at: self.clock.now(),
            event: WebhookEvent {
                timestamp: self.clock.now(),
                event,
            },
        };
        self.engine.apply_signal(&envelope).await.expect("signal");
    }

    /// Every loop record of `member`, oldest first.
    pub(super) async fn loops_of(&self, member: &str) -> Vec<OpenLoop> {
        let member = MemberId::parse(member).expect("member");
        let mut loops = self
            .store
            .list_loops(self.account.id, None, Some(&member), 100)
            .await
            .expect("loops");
        loops.sort_by_key(|l| (l.created_at, l.id));
        loops
    }
}

/// `member` checked in at `at`.
pub(super) fn checkin(member: &str, at: Timestamp) -> MemberEvent {
    MemberEvent::CheckinCreated {
        member_id: MemberId::parse(member).expect("id"),
        checked_in_at: at,
        class_name: None,
    }
}
