//! Text messages: a claimed touch sent as a text, a member's
//! text read (STOP, HELP and START first, then the same reply loop as mail), the consent
//! record, the owner's critical alerts by text, and the counts of texts and segments per
//! account and day. What a text says and how long it is: `conversation/sms`; which channel a
//! touch takes and when a text may go: `rails/texting.rs`.

mod number;
mod place;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use place::PlaceChange;
pub use place::{MemberTexts, TextPlaceView};

use super::StepOutcome;
use super::reservation::Reservation;
use super::send::Drafting;
use super::suppression::Suppression;
use super::{Engine, boxed};
use crate::conversation::inbound::InboundMail;
use crate::conversation::sms::{self, Keyword};
use crate::kernel::error::{InvalidInput, StoreError};
use crate::kernel::ids::{AccountId, MemberId, new_ulid};
use crate::kernel::limits::{self, WEBHOOK_DEDUP_TTL};
use crate::members::annotation::MemberAnnotations;
use crate::members::consent::{ConsentSource, SmsConsent};
use crate::members::member::SendLedger;
use crate::owner::account::Account;
use crate::owner::business_memory::MemoryBook;
use crate::owner::owner_notice::NotificationChannel;
pub use crate::owner::sms::TextCounts;
use crate::ports::{OutboundText, SendError};
use crate::rails::send_gate;
use crate::task::commit::{SendEffect, TaskCommit};
use crate::task::error::EngineError;
use crate::task::flood::OnceClaim;
use crate::task::open_loop::LoopSignal;
use crate::task::reason::Reason;
use crate::task::transition::{Why, transition};
use crate::task::work::WorkItem;
use crate::task::{Draft, OutboundMessage, OutboundStatus, Task, TaskStatus};

/// The longest member text kept (longer ones are cut): ten segments' worth.
const MAX_INBOUND_CHARS: usize = 1_600;

/// `POST /api/v1/members/{id}/consent`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConsentInput {
    pub sms: bool,
    pub source: crate::members::consent::SourceName,
    /// The member's time zone (an IANA name) for their texts' hours; absent keeps the one on
    /// record, `null` clears it (their state's or the gym's zone then).
    #[serde(
        default,
        deserialize_with = "crate::kernel::texts::TimezoneName::de_present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::TimezoneName::optional_schema))]
    pub time_zone: Option<Option<String>>,
    /// The member's US state (code or name), whose texting rules apply; absent keeps the one
    /// on record, `null` clears it (their PushPress address's then).
    #[serde(
        default,
        deserialize_with = "crate::kernel::texts::UsStateName::de_present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::kernel::texts::UsStateName::optional_schema))]
    pub state: Option<Option<String>>,
}

/// A member's consent record, as the owner API answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConsentView {
    pub member_id: MemberId,
    pub sms: bool,
    pub source: ConsentSource,
    pub at: Timestamp,
    /// Whether the member has a phone to text.
    pub has_phone: bool,
    /// Their time zone and state, and the hours their texts keep.
    #[serde(flatten)]
    pub place: TextPlaceView,
}

/// One text a member sent (an SNS notification of AWS End User Messaging SMS, or the local
/// runtime's `POST /_local/inbound-sms`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmsInbound {
    /// The member's phone (E.164).
    pub from: String,
    /// Our number (the origination identity it was sent to).
    pub to: String,
    pub body: String,
    /// The provider's id of the message (its duplicate deliveries share it).
    pub message_id: String,
}

/// What became of a member's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SmsOutcome {
    /// Read as a reply in its task's conversation.
    Stored {
        task_id: String,
        task_status: TaskStatus,
    },
    /// STOP: no more texts; the member's active tasks cancelled.
    Stopped {
        cancelled: usize,
    },
    /// HELP: answered with the gym's name and how to stop.
    Helped,
    /// START: texts again.
    Started,
    Duplicate,
    /// No text of ours went to this phone from this number.
    Unrouted {
        reason: String,
    },
}

impl Engine {
    /// Record a member's consent to texts (the owner's word, an import, the member's own).
    pub async fn record_consent(&self, account: AccountId, member: &MemberId, input: ConsentInput) -> Result<ConsentView, EngineError> {
        let source = ConsentSource::parse(&input.source)?;
        let change = PlaceChange::parse(input.time_zone, input.state)?;
        let settings = self.account(account).await?.settings;
        let now = self.clock.now();
        let consent = SmsConsent {
            sms: input.sms,
            source,
            at: now,
        };
        let facts = self.set_consent_and_place(account, member, consent.clone(), &change).await?;
        Ok(ConsentView {
            member_id: member.clone(),
            sms: consent.sms,
            source: consent.source,
            at: consent.at,
            has_phone: facts.phone.is_some(),
            place: TextPlaceView::of(&settings, Some(&facts)),
        })
    }

    /// Write `consent` on the member's facts, under their version.
    async fn set_consent(
        &self,
        account: AccountId,
        member: &MemberId,
        consent: SmsConsent,
    ) -> Result<crate::members::member::MemberFacts, EngineError> {
        self.set_consent_and_place(account, member, consent, &PlaceChange::default()).await
    }

    /// Write `consent`, and the owner's change of the member's time zone or state, on the
    /// member's facts, under their version.
    async fn set_consent_and_place(
        &self,
        account: AccountId,
        member: &MemberId,
        consent: SmsConsent,
        change: &PlaceChange,
    ) -> Result<crate::members::member::MemberFacts, EngineError> {
        for _ in 0..8 {
            let Some((mut facts, _)) = self.store.get_member(account, member).await? else {
                return Err(EngineError::NotFound { what: "member" });
            };
            facts.sms_consent = Some(consent.clone());
            change.apply(&mut facts);
            facts.version += 1;
            match self.store.save_member_facts(account, &facts).await {
                Ok(()) => return Ok(facts),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::StaleVersion)
    }

    /// The account's texts and segments over the local days `from` through `to` (the
    /// scorecard's, and the bench's cost model's, counts).
    pub async fn text_counts(&self, account: AccountId, from: jiff::civil::Date, to: jiff::civil::Date) -> Result<TextCounts, EngineError> {
        Ok(self.store.texts_between(account, from, to).await?)
    }

    /// Draft, reserve, text and record, for a task this worker has claimed (the text twin of
    /// `send_claimed`): the same reservation (the member's weekly cap and the task's budget
    /// count both channels), then the account's daily text limit, then the provider.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::engine) async fn send_text_claimed(
        &self,
        account: &Account,
        mut claimed: Task,
        phone: String,
        ledger: SendLedger,
        annotations: &MemberAnnotations,
        book: &MemoryBook,
        member_tasks: &[Task],
    ) -> Result<StepOutcome, EngineError> {
        let now = self.clock.now();
        let touch = claimed.touch;
        let settings = &account.settings.sms;
        let max_segments = settings.max_segments;
        let max_chars = if max_segments <= 1 { 160 } else { 153 * max_segments };
        let (draft, confidence) = match self
            .draft_claimed(
                account,
                &mut claimed,
                annotations,
                book,
                member_tasks,
                None,
                Some(max_chars),
                &Default::default(),
                now,
            )
            .await?
        {
            Drafting::Ready { draft, confidence } => (draft, confidence),
            Drafting::Done(outcome) => return Ok(outcome),
        };
        let Some(from) = settings.sending_from().map(str::to_owned) else {
            let why = Why::new(Reason::SendRejected).detail("texts were turned off before this one left");
            return self
                .back_to_waiting(&claimed, now + jiff::SignedDuration::from_hours(1), now, why)
                .await;
        };
        // The number is this account's alone (claimed when named; one named before numbers
        // were claimed is claimed now): another account's is never texted from.
        if !self.holds_sms_number(account.id, &from).await? {
            let why = Why::new(Reason::SendRejected).detail("the account's sms.origination_identity is another account's number");
            return self.move_to(claimed, TaskStatus::Escalated, now, why).await;
        }
        let Some(record_to) = sms::record_address(&phone) else {
            let why = Why::new(Reason::MissingMemberEmail).detail("the member's phone is not E.164");
            return self.move_to(claimed, TaskStatus::Escalated, now, why).await;
        };
        // The first text of a conversation names the gym and says how to stop.
        let first = !claimed.thread.iter().any(|m| sms::is_text_id(&m.message_id));
        let text = sms::compose(account.sender_name(), &draft.body, first, max_segments);
        let outbound = OutboundMessage {
            task_id: claimed.id,
            touch,
            status: OutboundStatus::Reserved,
            to: record_to,
            subject: claimed.thread_subject.clone().unwrap_or_else(|| draft.subject.clone()),
            message_id: format!("sms.{}", new_ulid(now).to_string().to_ascii_lowercase()),
            provider_id: None,
            provider_message_id: None,
            reserved_at: now,
            sent_at: None,
        };
        let ledger_key = format!("{}#{touch}", claimed.id);
        let reserved = match self.reserve(account, &claimed, None, &outbound, &ledger_key, ledger, now).await? {
            Reservation::Made(task) => *task,
            // Only a claim that rides in the reservation can be taken elsewhere; a text's is
            // committed before it is drafted.
            Reservation::ClaimedElsewhere => return Ok(StepOutcome::Skipped("claimed_elsewhere".into())),
            Reservation::Defer(until, why) => return self.back_to_waiting(&claimed, until, now, why).await,
            Reservation::AlreadyReserved => {
                let existing = self
                    .store
                    .outbound(account.id, claimed.id)
                    .await?
                    .into_iter()
                    .find(|m| m.touch == touch)
                    .unwrap_or(outbound);
                return self.escalate_unknown(claimed, existing, now).await;
            }
        };
        let tz = account.settings.time_zone();
        let daily_date = limits::local_date(now, &tz);
        // The account's texts of the day, counted before the text leaves: at the limit, the
        // reservation is given back and the touch waits for tomorrow.
        if self
            .store
            .count_text(account.id, daily_date, text.segments, settings.daily_limit)
            .await?
            .is_none()
        {
            let until = send_gate::next_local_day(now, &tz);
            let why =
                Why::new(Reason::DailyTextLimit).detail(format!("{} texts today, the account's sms.daily_limit", settings.daily_limit));
            let mut given_back = reserved.clone();
            given_back.budget.messages_used = given_back.budget.messages_used.saturating_sub(1);
            let (mut next, log) = transition(&given_back, TaskStatus::Waiting, now, why)?;
            next.next_action_at = Some(until);
            let mut commit = TaskCommit::new(next, log);
            commit.send = Some(SendEffect::Release {
                outbound: OutboundMessage {
                    status: OutboundStatus::Failed,
                    ..outbound
                },
                member_id: reserved.member.id.clone(),
                ledger_key,
                daily_date,
            });
            self.store.commit(&commit).await?;
            return Ok(StepOutcome::Deferred {
                until,
                reason: Reason::DailyTextLimit,
            });
        }
        let result = match &self.sms {
            Some(sender) => {
                sender
                    .send_text(&OutboundText {
                        to: phone.clone(),
                        from: from.clone(),
                        body: text.body.clone(),
                        segments: text.segments,
                        sent_at: now,
                    })
                    .await
            }
            None => Err(SendError::Rejected("no text-message provider is configured".into())),
        };
        let result = result.map(|delivered| {
            tracing::info!(task = %reserved.id, touch, segments = text.segments, "text sent");
            OutboundMessage {
                status: OutboundStatus::Sent,
                provider_id: Some(delivered.provider_id),
                // Where the member's answer belongs: their phone and our number.
                provider_message_id: Some(sms::route_key(account.id, &phone, &from)),
                sent_at: Some(now),
                ..outbound.clone()
            }
        });
        let as_sent = Draft {
            subject: draft.subject,
            body: text.body,
        };
        self.record_send(account, reserved, outbound, result, as_sent, confidence, ledger_key, "text", now)
            .await
    }

    /// A member's text: routed to the conversation we last texted them from that number;
    /// STOP (and every refusal), HELP and START are answered before anything reads it; any
    /// other text is a reply, read like a reply by mail.
    pub async fn receive_text(&self, inbound: SmsInbound) -> Result<SmsOutcome, EngineError> {
        boxed(async move {
            if !crate::kernel::text::is_e164(&inbound.from) {
                return Err(InvalidInput::new("invalid_sms", "from must be an E.164 phone number, such as +15555550100").into());
            }
            let body: String = inbound.body.chars().take(MAX_INBOUND_CHARS).collect();
            let Some((account_id, task_id)) = self.text_route(&inbound).await? else {
                tracing::warn!("a text from a phone we never texted from this number; nothing to do");
                return Ok(SmsOutcome::Unrouted {
                    reason: "no text of ours went to this phone from this number".into(),
                });
            };
            let now = self.clock.now();
            // The delivery is claimed with what it does, never before: a text kept as a reply
            // in the reply's own commit; a STOP, HELP or START once it is carried out (doing
            // one again is harmless). A function that dies half-way leaves no claim, so the
            // provider's retry is taken — a STOP is never lost.
            let claim = OnceClaim {
                source: format!("sms:{account_id}"),
                key: format!("{}:{}", inbound.from, inbound.message_id),
                now,
                expires_at: now + WEBHOOK_DEDUP_TTL,
            };
            if self.store.is_claimed(&claim.source, &claim.key, now).await? {
                return Ok(SmsOutcome::Duplicate);
            }
            self.read_text(account_id, task_id, &inbound, body, claim).await
        })
        .await
    }

    /// Where a member's text belongs: the number's owner first, then that account's own
    /// route from the member's phone to the number (each account's route is its own key, so
    /// another account's send never moves it). A route written before routes were scoped
    /// (`sms:{phone}:{number}`) is read only when it names the owner — or, for a number no
    /// account has claimed yet, an account that names the number in its settings.
    async fn text_route(&self, inbound: &SmsInbound) -> Result<Option<(AccountId, crate::kernel::ids::TaskId)>, EngineError> {
        let owner = self.number_owner(&inbound.to).await?;
        if let Some(owner) = owner
            && let Some(route) = self.store.message_route(&sms::route_key(owner, &inbound.from, &inbound.to)).await?
        {
            return Ok(Some(route));
        }
        let Some((account, task)) = self.store.message_route(&sms::legacy_route_key(&inbound.from, &inbound.to)).await? else {
            return Ok(None);
        };
        let accepted = match owner {
            Some(owner) => owner == account,
            None => self.store.get_account(account).await?.is_some_and(|a| {
                a.settings
                    .sms
                    .origination_identity
                    .as_deref()
                    .is_some_and(|n| crate::owner::sms::number_key(n) == crate::owner::sms::number_key(&inbound.to))
            }),
        };
        Ok(accepted.then_some((account, task)))
    }

    async fn read_text(
        &self,
        account_id: AccountId,
        task_id: crate::kernel::ids::TaskId,
        inbound: &SmsInbound,
        body: String,
        claim: OnceClaim,
    ) -> Result<SmsOutcome, EngineError> {
        let now = claim.now;
        let account = self
            .store
            .get_account(account_id)
            .await?
            .ok_or(EngineError::NotFound { what: "account" })?;
        let task = self
            .store
            .get_task(account_id, task_id)
            .await?
            .ok_or(EngineError::NotFound { what: "task" })?;
        let member = task.member.id.clone();
        // A threat goes through the reply loop whatever else it says: it is escalated at once
        // as critical (and its member suppressed there), never answered by a keyword.
        let keyword = if crate::conversation::threat::read(&body).is_some() {
            None
        } else {
            sms::keyword(&body)
        };
        // A keyword's delivery, claimed once it was carried out.
        let carried_out = |outcome: SmsOutcome| async {
            self.store
                .claim_webhook(&claim.source, &claim.key, claim.now, claim.expires_at)
                .await?;
            Ok::<_, EngineError>(outcome)
        };
        match keyword {
            Some(Keyword::Stop) => {
                let cancelled = self.stop_texts(&account, &task, &body, now).await?;
                carried_out(SmsOutcome::Stopped { cancelled }).await
            }
            Some(Keyword::Help) => {
                let contact = account.settings.profile.contact_phone.as_deref();
                let answer = sms::help_answer(account.sender_name(), contact);
                self.text_now(&account, &inbound.from, &answer, now).await;
                carried_out(SmsOutcome::Helped).await
            }
            Some(Keyword::Start) => {
                let consent = SmsConsent {
                    sms: true,
                    source: ConsentSource::Member,
                    at: now,
                };
                self.set_consent(account_id, &member, consent).await?;
                self.text_now(&account, &inbound.from, &sms::start_answer(account.sender_name()), now)
                    .await;
                carried_out(SmsOutcome::Started).await
            }
            None => {
                // The same reply loop as mail: stored first, then read by the task's step.
                let from = task
                    .member
                    .email
                    .clone()
                    .or_else(|| sms::record_address(&inbound.from))
                    .ok_or_else(|| InvalidInput::new("invalid_sms", "from must be an E.164 phone number"))?;
                let mail = InboundMail {
                    from,
                    from_name: None,
                    subject: None,
                    message_id: None,
                    reply_tokens: Vec::new(),
                    thread_ids: Vec::new(),
                    text: body.clone(),
                    original: None,
                    automatic: false,
                    body,
                    attached: Vec::new(),
                };
                let Some(stored) = self.store_reply(account_id, task_id, &mail, now, Some(claim.clone())).await? else {
                    return Ok(SmsOutcome::Duplicate);
                };
                self.meet_loops(account_id, &stored.member.id, LoopSignal::Reply { task: task_id })
                    .await?;
                let mut status = stored.status;
                if stored.awaiting.is_some() && stored.status == TaskStatus::Waiting {
                    let item = WorkItem {
                        account_id,
                        task_id,
                        due_at: now,
                    };
                    match boxed(self.follow_up(&item)).await {
                        Ok(outcome) => tracing::info!(task = %task_id, ?outcome, "text reply read"),
                        Err(e) => tracing::warn!(task = %task_id, error = %e, "text reply stored; reading it is left to the next tick"),
                    }
                    if let Some(task) = self.store.get_task(account_id, task_id).await? {
                        status = task.status;
                    }
                }
                Ok(SmsOutcome::Stored {
                    task_id: task_id.to_string(),
                    task_status: status,
                })
            }
        }
    }

    /// STOP by text: no more texts (the member's "no" on record), their address suppressed
    /// when they have one, and every active task about them cancelled — at once.
    async fn stop_texts(&self, account: &Account, task: &Task, words: &str, now: Timestamp) -> Result<usize, EngineError> {
        let member = task.member.id.clone();
        let consent = SmsConsent {
            sms: false,
            source: ConsentSource::Member,
            at: now,
        };
        let facts = self.set_consent(account.id, &member, consent).await?;
        let mut cancelled = 0;
        if let Some(email) = facts.email.clone().or_else(|| task.member.email.clone()) {
            cancelled += self
                .suppress_member(Suppression {
                    account,
                    email: &email,
                    member: Some(&member),
                    reason: "text_stop",
                    keep: None,
                })
                .await?;
        }
        // Tasks that name no address (a member known by phone only).
        for open in self.store.member_active_tasks(account.id, &member).await? {
            let why = Why::new(Reason::MemberStoppedTexts)
                .outcome("opted_out")
                .detail(format!("the member texted: {}", crate::conversation::reply::preview(words)));
            if open.is_active() && self.cancel_stopped(account, open, why).await? {
                cancelled += 1;
            }
        }
        tracing::info!(account = %account.id, cancelled, "member stopped texts");
        Ok(cancelled)
    }

    /// A text outside any task (HELP's and START's answers, the owner's alert), counted in
    /// the day's texts and left unsent at the limit; trouble is logged, never returned.
    async fn text_now(&self, account: &Account, to: &str, body: &str, now: Timestamp) -> bool {
        let (Some(sender), Some(from)) = (&self.sms, account.settings.sms.origination_identity.as_deref()) else {
            tracing::warn!(account = %account.id, "no text provider or origination identity; a text was not sent");
            return false;
        };
        match self.holds_sms_number(account.id, from).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(account = %account.id, "the account's text number is another account's; a text was not sent");
                return false;
            }
            Err(e) => {
                tracing::error!(account = %account.id, error = %e, "the text number's claim not read; a text was not sent");
                return false;
            }
        }
        let segments = sms::segments(body);
        let date = limits::local_date(now, &account.settings.time_zone());
        match self
            .store
            .count_text(account.id, date, segments, account.settings.sms.daily_limit)
            .await
        {
            Ok(Some(_)) => {}
            Ok(None) => {
                tracing::warn!(account = %account.id, "the day's texts are used up; a text was not sent");
                return false;
            }
            Err(e) => {
                tracing::error!(account = %account.id, error = %e, "texts not counted; a text was not sent");
                return false;
            }
        }
        let text = OutboundText {
            to: to.to_owned(),
            from: from.to_owned(),
            body: body.to_owned(),
            segments,
            sent_at: now,
        };
        match sender.send_text(&text).await {
            Ok(_) => true,
            Err(e) => {
                tracing::error!(account = %account.id, error = %e, "text not sent");
                false
            }
        }
    }

    /// A critical notice also texted to the owner (`owner_notification_channel:
    /// "email_and_sms"` with an `owner_phone`), whatever the hour: only critical notices are
    /// texted, so quiet hours hold everything else.
    pub(in crate::engine) async fn text_owner_alert(&self, account: &Account, title: &str, now: Timestamp) -> bool {
        if account.settings.owner_notification_channel != NotificationChannel::EmailAndSms {
            return false;
        }
        let Some(phone) = account.settings.owner_phone.clone() else {
            return false;
        };
        let text = sms::owner_alert(account.sender_name(), title, account.settings.sms.max_segments);
        self.text_now(account, &phone, &text.body, now).await
    }
}
