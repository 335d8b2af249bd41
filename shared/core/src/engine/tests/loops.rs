//! Open loops on the in-memory store: a sent touch registers what it waits for, one check-in
//! meets the loops of two tasks at once, and a lead's booking waits for the lead to come —
//! or opens the no-show follow-up, once, whichever of the deadline and the no-show is first.

use super::loop_fixtures::checkin;
use super::*;
use crate::ports::Clock;
use crate::task::open_loop::{Expects, LoopStatus};

impl World {
    async fn a_lead(&self, id: &str) {
        self.signal(
            &format!("created_{id}"),
            MemberEvent::MemberCreated {
                member_id: MemberId::parse(id).expect("id"),
                email: Some(Email::parse(&format!("{id}@example.com").replace('_', "-")).expect("email")),
                first_name: Some("Lea".into()),
                last_name: None,
                status: crate::members::event::MemberStatus::Lead,
                joined_at: None,
                monthly_value: None,
                phone: None,
            },
        )
        .await;
    }

    async fn open_tasks_of(&self, member: &str, task_type: &str) -> Option<crate::kernel::ids::TaskId> {
        self.store
            .active_task(self.account.id, &MemberId::parse(member).expect("id"), task_type)
            .await
            .expect("guard")
    }
}

#[tokio::test]
async fn one_checkin_meets_the_loops_of_two_tasks_and_neither_deadline_fires_after() {
    let w = world().await;
    let churn = w.approved("churn_risk", "m_two").await;
    let lead = w.approved("lead_followup", "m_two").await;
    // One mail a day to a member: whichever task goes second waits for the next day.
    for _ in 0..4 {
        for task in [&churn, &lead] {
            if w.task(task).await.touch == 0 {
                w.run_when_due(task).await;
            }
        }
    }
    assert!(w.mailer.sent().len() >= 2, "a first touch each");

    // Each sent touch waits for a reply by its follow-up, and for its goal: a check-in.
    let loops = w.loops_of("m_two").await;
    // The newest of each: a follow-up expires the touch's reply loop and registers its own.
    let of = |task: &Task, expects: Expects| {
        loops
            .iter()
            .filter(|l| l.task_id == Some(task.id) && l.expects == expects)
            .max_by_key(|l| (l.created_at, l.id))
            .cloned()
    };
    for task in [&churn, &lead] {
        let current = w.task(task).await;
        let reply = of(task, Expects::Reply).unwrap_or_else(|| {
            panic!(
                "a reply loop of {}: {:?} {:?} {:?} {}",
                task.task_type,
                loops
                    .iter()
                    .map(|l| (l.task_id == Some(task.id), l.expects, l.status, l.deadline))
                    .collect::<Vec<_>>(),
                current.status,
                current.next_action_at,
                current.touch
            )
        });
        assert_eq!(reply.status, LoopStatus::Open);
        assert_eq!(
            Some(reply.deadline),
            w.task(task).await.next_action_at,
            "a reply is expected by the follow-up"
        );
        assert_eq!(of(task, Expects::Checkin).map(|l| l.status), Some(LoopStatus::Open));
    }

    // One check-in meets both tasks' goal loops, in one pass.
    let sent = w.mailer.sent().len();
    let now = w.clock.now() + SignedDuration::from_hours(1);
    w.clock.set(now);
    w.signal("wh_checkin", checkin("m_two", now)).await;
    let loops = w.loops_of("m_two").await;
    let met: Vec<_> = loops.iter().filter(|l| l.status == LoopStatus::Met).collect();
    assert_eq!(met.len(), 2, "{loops:?}");
    assert!(
        met.iter()
            .all(|l| l.expects == Expects::Checkin && l.met_by.as_deref() == Some("checkin.created:wh_checkin"))
    );

    // Past every deadline nothing fires: no follow-up, the met loops stay met.
    w.clock.set(day0() + days(60));
    w.run().await;
    assert_eq!(w.mailer.sent().len(), sent, "no follow-up after the goal was met");
    let after = w.loops_of("m_two").await;
    assert_eq!(after.iter().filter(|l| l.status == LoopStatus::Met).count(), 2);
    assert!(after.iter().all(|l| l.status != LoopStatus::Open), "{after:?}");
}

#[tokio::test]
async fn a_reply_meets_its_tasks_reply_loop() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_reply").await;
    w.run_when_due(&task).await;
    let reply = w.answer_newest("m-reply@example.com", "answer-1@example.net", "See you Thursday!");
    w.engine.receive_reply(&reply).await.expect("reply");
    let loops = w.loops_of("m_reply").await;
    let reply = loops.iter().find(|l| l.expects == Expects::Reply).expect("reply loop");
    assert_eq!(reply.status, LoopStatus::Met, "{loops:?}");
    assert_eq!(reply.met_by, Some(format!("reply:{}", task.id)));
}

#[tokio::test]
async fn a_leads_booking_without_a_checkin_opens_the_no_show_follow_up_once() {
    let w = world().await;
    w.a_lead("m_trial").await;
    let class = day0() + days(2);
    w.signal(
        "wh_booking",
        MemberEvent::TrialBooked {
            member_id: MemberId::parse("m_trial").expect("id"),
            booked_for: class,
        },
    )
    .await;
    let loops = w.loops_of("m_trial").await;
    assert_eq!(loops.len(), 1, "{loops:?}");
    assert_eq!((loops[0].expects, loops[0].status), (Expects::TrialAttended, LoopStatus::Open));
    assert!(loops[0].deadline > class);

    // Before the deadline nothing opens; after it, the lead follow-up for a no-show.
    w.clock.set(class);
    w.run().await;
    assert_eq!(w.open_tasks_of("m_trial", "lead_followup").await, None);
    w.clock.set(loops[0].deadline);
    w.run().await;
    let id = w.open_tasks_of("m_trial", "lead_followup").await.expect("a no-show follow-up");
    let task = w.store.get_task(w.account.id, id).await.expect("get").expect("task");
    assert_eq!(task.trigger_context["no_show"], true);
    assert_eq!(task.trigger_event_id.as_deref(), Some("wh_booking"));
    assert_eq!(w.loops_of("m_trial").await[0].status, LoopStatus::Expired);

    // A late no-show report opens nothing more: the loop is already resolved.
    w.signal(
        "wh_noshow",
        MemberEvent::NoShow {
            member_id: MemberId::parse("m_trial").expect("id"),
            at: class,
            kind: crate::members::source::CheckinKind::Class,
        },
    )
    .await;
    let open = w
        .store
        .member_active_tasks(w.account.id, &MemberId::parse("m_trial").expect("id"))
        .await
        .expect("tasks");
    assert_eq!(open.len(), 1, "{open:?}");
}

#[tokio::test]
async fn a_leads_checkin_meets_the_trial_and_a_no_show_report_opens_the_follow_up_at_once() {
    let w = world().await;
    w.a_lead("m_came").await;
    w.a_lead("m_missed").await;
    for member in ["m_came", "m_missed"] {
        w.signal(
            &format!("booking_{member}"),
            MemberEvent::TrialBooked {
                member_id: MemberId::parse(member).expect("id"),
                booked_for: day0() + days(1),
            },
        )
        .await;
    }
    w.clock.set(day0() + days(1));
    w.signal("wh_came", checkin("m_came", day0() + days(1))).await;
    w.signal(
        "wh_missed",
        MemberEvent::NoShow {
            member_id: MemberId::parse("m_missed").expect("id"),
            at: day0() + days(1),
            kind: crate::members::source::CheckinKind::Appointment,
        },
    )
    .await;
    assert!(
        w.open_tasks_of("m_missed", "lead_followup").await.is_some(),
        "the no-show opens it at once"
    );
    assert_eq!(w.loops_of("m_missed").await[0].status, LoopStatus::Expired);
    assert_eq!(w.loops_of("m_came").await[0].status, LoopStatus::Met);

    // The deadline passing opens nothing for either.
    w.clock.set(day0() + days(3));
    w.run().await;
    assert_eq!(w.open_tasks_of("m_came", "lead_followup").await, None, "the lead came");
    let missed = w
        .store
        .member_active_tasks(w.account.id, &MemberId::parse("m_missed").expect("id"))
        .await
        .expect("tasks");
    assert_eq!(missed.len(), 1, "one follow-up, not two");
}
