//! PushPress's own webhooks at `POST /webhooks/pushpress-v3/{account}`,
//! through the local runtime: deliveries signed as PushPress signs them are accepted once and
//! land in the member's facts; forged and tampered ones are 401 and change nothing; every
//! kind of event leads where the issue says — a lead, a check-in in milliseconds, a paused
//! enrollment, a no-show, a lead's booking as a trial, an `alert` enrollment as an inferred
//! payment task for the owner's review.

use openloop_core::kernel::ids::{AccountId, MemberId};
use openloop_core::members::event::MemberStatus;
use openloop_core::members::member::MemberFacts;
use openloop_core::owner::account::WebhookSecret;
use openloop_core::owner::connection::{Connection, WebhookSubscription};
use openloop_tests::{Account, Stack};
use serde_json::{Value, json};

const SECRET: &str = "pp_whsec_7e1d-signing";

/// A gym whose PushPress subscription Openloop holds (its deliveries signed with `secret`):
/// the fixture of every test of PushPress's deliveries.
pub(crate) async fn subscribed(stack: &Stack, secret: &str) -> Account {
    let gym = stack.create_account("manual").await;
    let connection = Connection {
        plans: Default::default(),
        company_id: Some("cmp_1".into()),
        company_name: Some("Renegade".into()),
        subscription: Some(WebhookSubscription {
            id: "wh_1".into(),
            url: format!("{}/webhooks/pushpress-v3/{}", stack.url, gym.id),
            event_types: vec!["customer.created".into()],
            signing_secret: WebhookSecret::new(secret),
        }),
        import: None,
        last_sync_at: None,
        last_error: None,
        version: 1,
    };
    stack
        .running
        .store
        .save_connection(account_id(&gym), &connection)
        .await
        .expect("connection");
    gym
}

fn account_id(gym: &Account) -> AccountId {
    gym.id.parse().expect("account id")
}

async fn facts(stack: &Stack, gym: &Account, member: &str) -> Option<MemberFacts> {
    let member = MemberId::parse(member).expect("member");
    stack
        .running
        .store
        .get_member(account_id(gym), &member)
        .await
        .expect("read")
        .map(|(f, _)| f)
}

fn delivery(event: &str, created: i64, data: Value) -> Value {
    json!({"event": event, "created": created, "data": data})
}

fn customer(id: &str, role: &str) -> Value {
    json!({"id": id, "companyId": "cmp_1", "name": {"first": "Ana", "last": "Lima", "nickname": null}, "email": format!("{id}@example.com"),
        "phone": null, "role": role, "account": {"type": "primary"}, "membershipDetails": null})
}

#[tokio::test]
async fn forged_and_tampered_deliveries_are_refused_and_change_nothing() {
    let stack = Stack::start("pp-v3-forged").await;
    let gym = subscribed(&stack, SECRET).await;
    let now = stack.now().await.as_second();
    let body = delivery("customer.created", now, customer("usr_forged", "member"));
    let forged = openloop_pushpress::webhook::sign("not the secret", body.to_string().as_bytes()).expect("sign");
    let (status, error) = stack.pushpress_delivery(&gym, SECRET, &body, Some(&forged)).await;
    assert_eq!(status, 401, "{error}");
    let good = openloop_pushpress::webhook::sign(SECRET, body.to_string().as_bytes()).expect("sign");
    let tampered = delivery("customer.created", now, customer("usr_forged", "superuser"));
    let (status, _) = stack.pushpress_delivery(&gym, SECRET, &tampered, Some(&good)).await;
    assert_eq!(status, 401, "tampered data");
    let (status, _) = stack.pushpress_delivery(&gym, SECRET, &body, Some("")).await;
    assert_eq!(status, 401, "unsigned");
    stack.run().await;
    assert!(facts(&stack, &gym, "usr_forged").await.is_none(), "nothing changed");

    // A gym with no subscription takes no deliveries at all.
    let unsubscribed = stack.create_account("manual").await;
    let (status, _) = stack.pushpress_delivery(&unsubscribed, SECRET, &body, None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn every_kind_of_delivery_leads_where_the_issue_says() {
    let stack = Stack::start("pp-v3-events").await;
    let gym = subscribed(&stack, SECRET).await;
    let now = stack.now().await.as_second();

    // A lead arrives and books an appointment: a trial.
    let (status, body) = stack
        .pushpress_delivery(&gym, SECRET, &delivery("customer.created", now, customer("usr_lead", "lead")), None)
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    let booking =
        json!({"id": "apt_1", "type": {"name": "Intro"}, "customerId": "usr_lead", "staffId": "usr_coach", "startTimestamp": now + 86_400});
    let (status, body) = stack
        .pushpress_delivery(&gym, SECRET, &delivery("appointment.scheduled", now + 1, booking), None)
        .await;
    assert_eq!((status, body["status"].as_str()), (202, Some("queued")), "{body}");
    stack.run().await;
    let lead = facts(&stack, &gym, "usr_lead").await.expect("the lead");
    assert_eq!(lead.status, Some(MemberStatus::Lead));
    assert_eq!(
        lead.trial_booked_for.map(|t| t.as_second()),
        Some(now + 86_400),
        "a lead's booking is a trial"
    );

    // A member checks in (PushPress's timestamp in milliseconds), twice delivered.
    stack
        .pushpress_delivery(
            &gym,
            SECRET,
            &delivery("customer.created", now, customer("usr_ana", "member")),
            None,
        )
        .await;
    let checkin = delivery(
        "checkin.created",
        now,
        json!({"id": "chk_1", "customer": "usr_ana", "company": "cmp_1", "timestamp": (now - 3600) * 1000, "kind": "class",
            "name": "WOD", "classId": "cls_1", "typeId": "t", "type": {"id": "t", "name": "WOD"}, "source": "", "result": "success", "role": "attendee"}),
    );
    assert_eq!(stack.pushpress_delivery(&gym, SECRET, &checkin, None).await.0, 202);
    let (status, again) = stack.pushpress_delivery(&gym, SECRET, &checkin, None).await;
    assert_eq!(
        (status, again["status"].as_str()),
        (200, Some("duplicate")),
        "deduplicated on (event, hash of the signed data)"
    );
    // A booking by a member is not a trial.
    let booking = json!({"id": "res_1", "customerId": "usr_ana", "registrationTimestamp": now});
    let (_, body) = stack
        .pushpress_delivery(&gym, SECRET, &delivery("reservation.created", now + 2, booking), None)
        .await;
    stack.run().await;
    assert_eq!(body["status"], "ignored", "{body}");
    let ana = facts(&stack, &gym, "usr_ana").await.expect("ana");
    assert_eq!((ana.status, ana.checkin_count), (Some(MemberStatus::Active), 1));
    assert_eq!(ana.last_checkin_at.map(|t| t.as_second()), Some(now - 3600));
    assert!(ana.trial_booked_for.is_none());

    // She misses an appointment: a no-show; then pauses her membership: frozen.
    let no_show =
        json!({"id": "apt_2", "type": {"name": "PT"}, "customerId": "usr_ana", "staffId": "usr_coach", "startTimestamp": now - 7200});
    stack
        .pushpress_delivery(&gym, SECRET, &delivery("appointment.noshowed", now + 3, no_show), None)
        .await;
    let paused = json!({"id": "sub_1", "customerId": "usr_ana", "companyId": "cmp_1", "planId": "pln_1", "status": "paused",
        "billingSchedule": {"period": "month", "interval": 1}, "paidUntil": null});
    stack
        .pushpress_delivery(&gym, SECRET, &delivery("enrollment.status.changed", now + 4, paused), None)
        .await;
    stack.run().await;
    let ana = facts(&stack, &gym, "usr_ana").await.expect("ana");
    assert_eq!(ana.membership.no_shows.len(), 1, "a no-show fact");
    assert_eq!(ana.status, Some(MemberStatus::Frozen), "a paused enrollment");

    // Her enrollment turns `alert`: an inferred payment task, waiting for the owner.
    let alert = json!({"id": "sub_1", "customerId": "usr_ana", "companyId": "cmp_1", "planId": "pln_1", "status": "alert"});
    stack
        .pushpress_delivery(&gym, SECRET, &delivery("enrollment.status.changed", now + 5, alert), None)
        .await;
    stack.run().await;
    let (_, tasks) = stack.get("/api/v1/tasks?member_id=usr_ana", &gym.token).await;
    let task = tasks["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["task_type"] == "payment_recovery"))
        .cloned()
        .unwrap_or_else(|| panic!("a payment_recovery task: {tasks}"));
    assert_eq!(task["status"], "pending_review", "{task}");
    assert!(task["goal"].as_str().is_some_and(|g| g.starts_with("Inferred")), "{task}");
    // The owner skips it; the risk scan sees the same `alert` and leaves it: one episode, once.
    let id = task["id"].as_str().expect("id");
    let (status, _) = stack
        .call(reqwest::Method::POST, &format!("/api/v1/tasks/{id}/skip"), Some(&gym.token), None)
        .await;
    assert_eq!(status, 200);
    let later = stack.now().await + openloop_core::kernel::limits::ANALYSIS_PERIOD + jiff::SignedDuration::from_hours(1);
    stack.set_clock(&later.to_string()).await;
    let ran = stack.run().await;
    assert_eq!(ran["analysis"]["accounts"][0]["findings"], 1, "the scan sees the alert: {ran}");
    let (_, tasks) = stack.get("/api/v1/tasks?member_id=usr_ana", &gym.token).await;
    let payments = tasks["tasks"]
        .as_array()
        .map_or(0, |t| t.iter().filter(|t| t["task_type"] == "payment_recovery").count());
    assert_eq!(payments, 1, "the scan does not open the episode the webhook acted on: {tasks}");

    // Every other documented event is acknowledged (sent now: the clock moved on).
    let now = stack.now().await.as_second();
    for event in [
        "customer.deleted",
        "checkin.deleted",
        "enrollment.deleted",
        "class.canceled",
        "memberapp.updated",
    ] {
        let (status, body) = stack
            .pushpress_delivery(&gym, SECRET, &delivery(event, now, json!({"id": "x_1"})), None)
            .await;
        assert_eq!((status, body["status"].as_str()), (202, Some("ignored")), "{event}: {body}");
    }
}

#[tokio::test]
async fn a_signed_delivery_that_is_not_one_is_422_and_changes_nothing() {
    let stack = Stack::start("pp-v3-shape").await;
    let gym = subscribed(&stack, SECRET).await;
    let now = stack.now().await.as_second();
    for body in [
        json!({"created": now, "data": customer("usr_shape", "member")}),
        json!({"event": "customer.created", "created": "soon", "data": customer("usr_shape", "member")}),
    ] {
        let (status, error) = stack.pushpress_delivery(&gym, SECRET, &body, None).await;
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (422, Some("invalid_event")),
            "well-formed JSON, not a delivery: {body} → {error}"
        );
    }
    stack.run().await;
    assert!(facts(&stack, &gym, "usr_shape").await.is_none(), "nothing changed");
}

/// PushPress signs only `data`. Given a member who cancelled and then came back, when the
/// captured cancellation is replayed with a fresh `created`, then it is a duplicate and she
/// stays active; one dated 2100 (or an hour old) is refused with 422 `delivery_out_of_window`
/// in the contract's shape; a genuine later change still applies.
#[tokio::test]
async fn a_replayed_delivery_cannot_rewrite_a_member_and_one_dated_2100_is_refused() {
    let stack = Stack::start("pp-v3-replay").await;
    let gym = subscribed(&stack, SECRET).await;
    let now = stack.now().await.as_second();
    let cancelled = delivery("customer.status.changed", now, customer("usr_rio", "ex-member"));
    let (status, body) = stack.pushpress_delivery(&gym, SECRET, &cancelled, None).await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    assert_eq!(
        facts(&stack, &gym, "usr_rio").await.and_then(|f| f.status),
        Some(MemberStatus::Cancelled)
    );
    let back = delivery("customer.status.changed", now + 1, customer("usr_rio", "member"));
    assert_eq!(stack.pushpress_delivery(&gym, SECRET, &back, None).await.0, 202);
    stack.run().await;
    assert_eq!(
        facts(&stack, &gym, "usr_rio").await.and_then(|f| f.status),
        Some(MemberStatus::Active)
    );

    let replayed = delivery("customer.status.changed", now + 120, customer("usr_rio", "ex-member"));
    let (status, body) = stack.pushpress_delivery(&gym, SECRET, &replayed, None).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("duplicate")), "{body}");
    for created in [4_102_444_800, now - 3600] {
        let dated = delivery("customer.status.changed", created, customer("usr_rio", "ex-member"));
        let (status, error) = stack.pushpress_delivery(&gym, SECRET, &dated, None).await;
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (422, Some("delivery_out_of_window")),
            "{created}: {error}"
        );
    }
    stack.run().await;
    assert_eq!(
        facts(&stack, &gym, "usr_rio").await.and_then(|f| f.status),
        Some(MemberStatus::Active),
        "the replays changed nothing"
    );
    let renamed = json!({"id": "usr_rio", "companyId": "cmp_1", "name": {"first": "Rio", "last": "Lima", "nickname": null},
        "email": "usr_rio@example.com", "phone": null, "role": "ex-member", "account": {"type": "primary"}, "membershipDetails": null});
    let later = delivery("customer.status.changed", now + 2, renamed);
    assert_eq!(stack.pushpress_delivery(&gym, SECRET, &later, None).await.0, 202);
    stack.run().await;
    assert_eq!(
        facts(&stack, &gym, "usr_rio").await.and_then(|f| f.status),
        Some(MemberStatus::Cancelled),
        "a genuine later change applies"
    );
}

/// A PushPress customer whose address is in Washington: their texts keep Washington's hours
/// in its time zone, as their consent record and their member page show; a later address in
/// Ontario (not the United States) leaves the gym's zone.
#[tokio::test]
async fn a_customers_address_gives_the_state_and_time_zone_their_texts_keep() {
    let stack = Stack::start("pp-v3-address").await;
    let gym = subscribed(&stack, SECRET).await;
    let now = stack.now().await.as_second();
    let mut seattle = customer("usr_sea", "member");
    seattle["phone"] = json!("+12065550100");
    seattle["address"] =
        json!({"line1": "1 Pike St", "line2": "", "city": "Seattle", "state": "Washington", "zip": "98101", "country": "US"});
    let (status, body) = stack
        .pushpress_delivery(&gym, SECRET, &delivery("customer.created", now, seattle.clone()), None)
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    assert_eq!(
        facts(&stack, &gym, "usr_sea").await.and_then(|f| f.address_state).as_deref(),
        Some("WA")
    );
    let (status, recorded) = stack
        .post(
            "/api/v1/members/usr_sea/consent",
            &gym.token,
            json!({"sms": true, "source": "imported"}),
        )
        .await;
    assert_eq!(status, 200, "{recorded}");
    assert_eq!(
        (
            recorded["state"].as_str(),
            recorded["time_zone"].as_str(),
            recorded["time_zone_source"].as_str(),
            recorded["text_hours"].as_str()
        ),
        (Some("WA"), Some("America/Los_Angeles"), Some("state"), Some("8:00–20:00")),
        "{recorded}"
    );

    seattle["address"] = json!({"line1": "1 Bay St", "city": "Toronto", "state": "ON", "zip": "M5J", "country": "Canada"});
    let (status, body) = stack
        .pushpress_delivery(&gym, SECRET, &delivery("customer.details.changed", now + 60, seattle), None)
        .await;
    assert_eq!(status, 202, "{body}");
    stack.run().await;
    let (status, member) = stack.get("/api/v1/members/usr_sea", &gym.token).await;
    assert_eq!(status, 200, "{member}");
    assert_eq!(
        (member["texts"]["state"].as_str(), member["texts"]["time_zone_source"].as_str()),
        (None, Some("gym")),
        "{member}"
    );
    assert_eq!(member["texts"]["consent"]["sms"], true, "{member}");
}
