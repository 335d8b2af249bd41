//! Deliverability on the in-memory store: soft bounces that add up to a hard
//! one, the bounce rate that pauses an account's member mail, and complaints that reach the
//! operator at once.

use super::*;
use crate::engine::{MailEvent, MailEventOutcome, MailFeedback};
use crate::owner::alert::ALERT_EVENT;
use crate::owner::owner_notice::NoticeKind;
use crate::ports::NoStoredMail;
use crate::testing::RecordingBus;

fn feedback(mail: &crate::conversation::mail::OutboundMail) -> MailFeedback {
    MailFeedback {
        message_ids: vec![mail.message_id.clone()],
        recipients: vec![mail.to.clone()],
    }
}

fn alerts(bus: &RecordingBus, code: &str) -> usize {
    bus.published(ALERT_EVENT).iter().filter(|a| a["code"] == code).count()
}

/// Given a member whose mailbox is full, when three different mails to them soft-bounce, then
/// the address counts as hard-bounced: suppressed, their task cancelled. A repeated
/// notification of the same mail is counted once.
#[tokio::test]
async fn three_soft_bounces_of_an_address_count_as_a_hard_bounce() {
    let w = world().await;
    let task = w.approved("churn_risk", "m_full").await;
    w.run().await;
    for day in [3, 8] {
        let due = w.run_when_due(&task).await;
        w.assert_follow_up_on_day(due, day);
    }
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 3);
    let email = task.member.email.clone().expect("email");
    let soft = |i: usize| MailEvent::Bounced {
        permanent: false,
        mail: feedback(&sent[i]),
    };
    for event in [soft(0), soft(0), soft(1)] {
        let outcome = w.engine.handle_mail_event(event, &NoStoredMail).await.expect("bounce");
        assert!(matches!(outcome, MailEventOutcome::Ignored(_)), "{outcome:?}");
        assert!(!w.store.is_suppressed(w.account.id, &email).await.expect("read"));
    }
    let outcome = w.engine.handle_mail_event(soft(2), &NoStoredMail).await.expect("bounce");
    assert_eq!(
        outcome,
        MailEventOutcome::Suppressed {
            reason: "bounce",
            tasks_cancelled: 1
        }
    );
    assert!(w.store.is_suppressed(w.account.id, &email).await.expect("read"));
    assert_eq!(w.task(&task).await.status, TaskStatus::Cancelled);
}

/// Given an account whose sends bounce, when the sixth of its last 50 sends bounces (above
/// 10%), then its member mail pauses at once: the owner gets a notice, the operator one alert,
/// nothing more leaves until the owner resumes — and then it does.
#[tokio::test]
async fn a_bounce_rate_above_ten_percent_pauses_the_accounts_member_mail() {
    let mut w = world().await;
    let bus = Arc::new(RecordingBus::default());
    w.engine.bus = bus.clone();
    for i in 0..7 {
        w.approved("churn_risk", &format!("m_b{i}")).await;
    }
    w.run().await;
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 7);
    for (i, mail) in sent.iter().take(6).enumerate() {
        let bounce = MailEvent::Bounced {
            permanent: true,
            mail: feedback(mail),
        };
        w.engine.handle_mail_event(bounce.clone(), &NoStoredMail).await.expect("bounce");
        let paused = w.engine.account(w.account.id).await.expect("account").paused;
        assert_eq!(paused, i == 5, "paused only at the sixth bounce (bounce {})", i + 1);
        // SNS delivers at least once: the same notification again counts nothing.
        w.engine.handle_mail_event(bounce, &NoStoredMail).await.expect("again");
    }
    assert_eq!(alerts(&bus, "bounce_pause"), 1, "the operator is told once");
    let (notices, _) = w.store.list_notices(w.account.id, 20, None).await.expect("notices");
    let paused: Vec<_> = notices
        .iter()
        .filter(|n| n.kind == NoticeKind::SystemAlert && n.title.contains("paused"))
        .collect();
    assert_eq!(paused.len(), 1, "the owner is told once: {notices:?}");
    assert!(paused[0].detail.contains("6 of your last 50"), "{}", paused[0].detail);

    let held = w.approved("churn_risk", "m_after").await;
    w.run().await;
    assert_eq!(w.mailer.sent().len(), 7, "nothing leaves a paused account");
    w.engine.set_account_paused(w.account.id, false, "owner").await.expect("resume");
    // A paused step waits an hour, then looks again.
    w.clock.advance(SignedDuration::from_mins(61));
    w.run().await;
    // Past the morning hours by now: the first touch goes at the next ones (spec §29.3).
    w.run_when_due(&held).await;
    assert_eq!(w.mailer.sent().len(), 8, "the owner resumed it");
    assert_eq!(w.task(&held).await.touch, 1);
}

/// Given a member who marks a mail as spam, then they are suppressed and the operator is
/// alerted at once (not at the next metrics run).
#[tokio::test]
async fn a_complaint_alerts_the_operator_at_once() {
    let mut w = world().await;
    let bus = Arc::new(RecordingBus::default());
    w.engine.bus = bus.clone();
    let task = w.approved("churn_risk", "m_spam").await;
    w.run().await;
    let sent = w.mailer.sent();
    let outcome = w
        .engine
        .handle_mail_event(MailEvent::Complained(feedback(&sent[0])), &NoStoredMail)
        .await
        .expect("complaint");
    assert!(matches!(outcome, MailEventOutcome::Suppressed { reason: "complaint", .. }));
    assert!(
        w.store
            .is_suppressed(w.account.id, &task.member.email.clone().expect("email"))
            .await
            .expect("read")
    );
    assert_eq!(alerts(&bus, "spam_complaint"), 1);
    let alert = &bus.published(ALERT_EVENT)[0];
    assert!(!alert.to_string().contains("example.com"), "no member data in an alert: {alert}");
}

/// Given an owner who names their own domain, then its identity is
/// created with the records to publish (three DKIM CNAMEs, the MAIL FROM MX and TXT); mail
/// leaves from the shared domain while it is pending, and from the gym's domain once the
/// provider says it is verified.
#[tokio::test]
async fn a_gyms_own_domain_sends_only_once_verified() {
    use crate::memory::MemorySendingDomains;
    use crate::owner::deliverability::DomainStatus;
    let mut w = world().await;
    let domains = Arc::new(MemorySendingDomains::default());
    w.engine.sending_domains = Some(domains.clone());
    let patch = super::super::SettingsPatch {
        sending_domain: Some(Some("CrossFitRenegade.com".into())),
        ..Default::default()
    };
    let account = w.engine.update_account(w.account.id, patch).await.expect("settings");
    assert_eq!(account.settings.sending_domain.as_deref(), Some("crossfitrenegade.com"));
    let identity = account.sending_identity.clone().expect("identity");
    assert_eq!(identity.status, DomainStatus::Pending);
    let kinds: Vec<(&str, &str)> = identity.records.iter().map(|r| (r.kind.as_str(), r.purpose.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("CNAME", "dkim"),
            ("CNAME", "dkim"),
            ("CNAME", "dkim"),
            ("MX", "mail_from"),
            ("TXT", "mail_from")
        ]
    );
    assert!(identity.records[0].name.ends_with("._domainkey.crossfitrenegade.com"));

    w.approved("churn_risk", "m_dom1").await;
    w.run().await;
    assert_eq!(
        w.mailer.sent()[0].from.as_str(),
        "outreach@mail.example.com",
        "pending: the shared domain"
    );
    assert!(
        w.mailer.sent()[0].message_id.ends_with("@mail.example.com"),
        "the Message-ID on the domain it is sent from"
    );

    domains.verify("crossfitrenegade.com");
    let dns = Arc::new(crate::memory::MemoryDns::default());
    w.engine.dns = Some(dns.clone());
    let record = identity.ownership_record();
    dns.publish(&record.name, &record.value);
    let early = w.engine.account_with_sending_domain(w.account.id).await.expect("read");
    assert_eq!(
        early.sending_identity.expect("identity").status,
        DomainStatus::Pending,
        "not asked again before the recheck"
    );
    w.clock.advance(crate::kernel::limits::SENDING_DOMAIN_RECHECK);
    assert_eq!(w.engine.check_sending_domains().await.expect("hourly"), 1);
    let verified = w.engine.account(w.account.id).await.expect("read");
    let identity = verified.sending_identity.expect("identity");
    assert_eq!((identity.status, identity.sends_from_domain()), (DomainStatus::Verified, true));
    w.approved("churn_risk", "m_dom2").await;
    w.run().await;
    assert_eq!(w.mailer.sent()[1].from.as_str(), "outreach@crossfitrenegade.com");
    assert!(
        w.mailer.sent()[1].message_id.ends_with("@crossfitrenegade.com"),
        "the Message-ID on the gym's own domain: {}",
        w.mailer.sent()[1].message_id
    );

    let back = super::super::SettingsPatch {
        sending_domain: Some(None),
        ..Default::default()
    };
    let account = w.engine.update_account(w.account.id, back).await.expect("settings");
    assert!(account.sending_identity.is_none());
    assert_eq!(
        account.sender_address(&w.engine.config.from_email).as_str(),
        "outreach@mail.example.com"
    );
}

/// Given the provider failing when the domain is named, then the settings are saved, the
/// domain waits as not created (with the error), and a later check creates it.
#[tokio::test]
async fn a_provider_failure_leaves_the_domain_to_be_created_later() {
    use crate::memory::MemorySendingDomains;
    use crate::owner::deliverability::DomainStatus;
    let mut w = world().await;
    let domains = Arc::new(MemorySendingDomains::default());
    w.engine.sending_domains = Some(domains.clone());
    domains.fail_with(Some("throttled"));
    let patch = super::super::SettingsPatch {
        sending_domain: Some(Some("gym.example.org".into())),
        ..Default::default()
    };
    let account = w.engine.update_account(w.account.id, patch).await.expect("settings saved");
    let identity = account.sending_identity.expect("identity");
    assert_eq!((identity.status, identity.error.is_some()), (DomainStatus::NotCreated, true));
    domains.fail_with(None);
    w.clock.advance(crate::kernel::limits::SENDING_DOMAIN_RECHECK);
    let account = w.engine.account_with_sending_domain(w.account.id).await.expect("read");
    let identity = account.sending_identity.expect("identity");
    assert_eq!(
        (identity.status, identity.records.len(), identity.error),
        (DomainStatus::Pending, 5, None)
    );

    let bad = super::super::SettingsPatch {
        sending_domain: Some(Some("not a domain".into())),
        ..Default::default()
    };
    let err = w.engine.update_account(w.account.id, bad).await.expect_err("refused");
    assert!(err.to_string().contains("sending_domain"), "{err}");
    w.engine.sending_domains = None;
    let unavailable = super::super::SettingsPatch {
        sending_domain: Some(Some("other.example.org".into())),
        ..Default::default()
    };
    assert!(
        w.engine.update_account(w.account.id, unavailable).await.is_err(),
        "no port: refused, not ignored"
    );
}

/// A second account's world: another gym on the same engine and store.
async fn second_gym(w: &World) -> crate::owner::account::Account {
    let other = crate::testing::sample_account(day0());
    w.store.create_account(&other, "hash-second").await.expect("account");
    other
}

fn naming(domain: &str) -> super::super::SettingsPatch {
    super::super::SettingsPatch {
        sending_domain: Some(Some(domain.into())),
        ..Default::default()
    }
}

/// Given a gym whose domain SES verified and whose ownership record is published, when a
/// second gym names the same domain, then it is refused (`sending_domain_taken`) and nothing
/// of its settings changes; the platform's own domain is refused to everyone; the second gym's
/// mail leaves from the shared address.
#[tokio::test]
async fn a_sending_domain_belongs_to_the_one_account_that_claimed_it() {
    use crate::memory::{MemoryDns, MemorySendingDomains};
    let mut w = world().await;
    let domains = Arc::new(MemorySendingDomains::default());
    let dns = Arc::new(MemoryDns::default());
    w.engine.sending_domains = Some(domains.clone());
    w.engine.dns = Some(dns.clone());
    let first = w
        .engine
        .update_account(w.account.id, naming("gym.example.org"))
        .await
        .expect("named");
    let identity = first.sending_identity.expect("identity");
    let record = identity.ownership_record();
    assert_eq!(record.name, "_openloop-verify.gym.example.org");
    dns.publish(&record.name, &record.value);
    domains.verify("gym.example.org");
    w.clock.advance(crate::kernel::limits::SENDING_DOMAIN_RECHECK);
    let first = w.engine.account_with_sending_domain(w.account.id).await.expect("read");
    assert!(first.sending_identity.expect("identity").sends_from_domain());

    let other = second_gym(&w).await;
    for domain in [
        "gym.example.org",
        "GYM.example.org.",
        "mail.example.com",
        "example.com",
        "replies.example.com",
    ] {
        let err = w.engine.update_account(other.id, naming(domain)).await.expect_err(domain);
        assert!(
            matches!(&err, crate::task::error::EngineError::Taken(i) if i.code == "sending_domain_taken"),
            "{domain}: {err:?}"
        );
    }
    let other = w.engine.account(other.id).await.expect("read");
    assert_eq!(
        (other.settings.sending_domain, other.sending_identity),
        (None, None),
        "nothing changed"
    );
    assert_eq!(
        w.store.domain_claim("gym.example.org").await.expect("read").map(|c| c.account),
        Some(w.account.id)
    );
}

/// Given a second gym that publishes the first gym's ownership record, then its own token is
/// what counts: the records differ per account, and another gym's token proves nothing.
#[tokio::test]
async fn ownership_is_proven_by_the_accounts_own_token() {
    use crate::memory::{MemoryDns, MemorySendingDomains};
    let mut w = world().await;
    let domains = Arc::new(MemorySendingDomains::default());
    let dns = Arc::new(MemoryDns::default());
    w.engine.sending_domains = Some(domains.clone());
    w.engine.dns = Some(dns.clone());
    let other = second_gym(&w).await;
    let theirs = w.engine.ownership_token(other.id, "gym.example.org");
    let mine = w.engine.ownership_token(w.account.id, "gym.example.org");
    assert_ne!(theirs, mine);
    let account = w
        .engine
        .update_account(w.account.id, naming("gym.example.org"))
        .await
        .expect("named");
    let name = account.sending_identity.expect("identity").ownership_record().name;
    dns.publish(&name, &format!("openloop-verify={theirs}"));
    domains.verify("gym.example.org");
    w.clock.advance(crate::kernel::limits::SENDING_DOMAIN_RECHECK);
    let account = w.engine.account_with_sending_domain(w.account.id).await.expect("read");
    let identity = account.sending_identity.expect("identity");
    assert_eq!(
        (identity.status, identity.proven_at),
        (crate::owner::deliverability::DomainStatus::Verified, None)
    );
    assert!(!identity.sends_from_domain(), "verified by SES, not proven by this account");
}

/// Given a gym sending from its proven domain, when its ownership record disappears, then the
/// daily recheck stops its mail from the domain; when it names another domain (or none), its
/// claim is given up and another gym may claim the old one.
#[tokio::test]
async fn an_account_that_loses_its_domain_stops_sending_from_it() {
    use crate::memory::{MemoryDns, MemorySendingDomains};
    let mut w = world().await;
    let domains = Arc::new(MemorySendingDomains::default());
    let dns = Arc::new(MemoryDns::default());
    w.engine.sending_domains = Some(domains.clone());
    w.engine.dns = Some(dns.clone());
    let account = w
        .engine
        .update_account(w.account.id, naming("gym.example.org"))
        .await
        .expect("named");
    let record = account.sending_identity.expect("identity").ownership_record();
    dns.publish(&record.name, &record.value);
    domains.verify("gym.example.org");
    w.clock.advance(crate::kernel::limits::SENDING_DOMAIN_RECHECK);
    assert_eq!(w.engine.check_sending_domains().await.expect("hourly"), 1);
    w.approved("churn_risk", "m_own1").await;
    w.run().await;
    assert_eq!(w.mailer.sent()[0].from.as_str(), "outreach@gym.example.org");

    dns.remove(&record.name);
    w.clock.advance(jiff::SignedDuration::from_hours(1));
    assert_eq!(w.engine.check_sending_domains().await.expect("hourly"), 0, "a domain in use: daily");
    w.clock.advance(crate::kernel::limits::DOMAIN_OWNERSHIP_RECHECK);
    assert_eq!(w.engine.check_sending_domains().await.expect("daily"), 1);
    let account = w.engine.account(w.account.id).await.expect("read");
    assert!(!account.sending_identity.clone().expect("identity").sends_from_domain());
    assert_eq!(
        account.sender_address(&w.engine.config.from_email).as_str(),
        "outreach@mail.example.com",
        "the record is gone: the shared address"
    );

    let other = second_gym(&w).await;
    assert!(
        w.engine.update_account(other.id, naming("gym.example.org")).await.is_err(),
        "still held"
    );
    let cleared = super::super::SettingsPatch {
        sending_domain: Some(None),
        ..Default::default()
    };
    w.engine.update_account(w.account.id, cleared).await.expect("cleared");
    assert_eq!(w.store.domain_claim("gym.example.org").await.expect("read"), None, "given up");
    let theirs = w
        .engine
        .update_account(other.id, naming("gym.example.org"))
        .await
        .expect("now theirs");
    assert_eq!(theirs.settings.sending_domain.as_deref(), Some("gym.example.org"));
}
