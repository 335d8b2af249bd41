//! The owner's view of their members: `GET /api/v1/members`, a page
//! of the account's member facts with what an owner asks first — are they coming, what are
//! they worth, is anything open about them — and `GET /api/v1/members/{id}`, one member with
//! Openloop's own tags and notes on them. Scoped to the account: another's member is not found.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Engine;
use crate::kernel::ids::{AccountId, Email, MemberId};
use crate::members::annotation::MemberAnnotations;
use crate::members::event::MemberStatus;
use crate::members::member::MemberFacts;
use crate::members::membership::Membership;
use crate::owner::account::Settings;
use crate::task::attribution::ValueSource;
use crate::task::error::EngineError;

/// Members per page unless asked, and at most.
pub const MEMBERS_PAGE: usize = 50;
pub const MEMBERS_PAGE_MAX: usize = 200;

/// A member's monthly value and where it came from: the plan's price the owner gave, else
/// the member's own, else the account's average.
pub fn monthly_value(facts: &MemberFacts, settings: &Settings) -> (f64, ValueSource) {
    let price = settings.price(facts.membership.plan_id(), facts.monthly_value);
    (price.monthly, price.source)
}

/// One member in the list.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
// `Member` in the document: the resource whose `id` the calls taking a `member_id` name.
#[cfg_attr(feature = "openapi", schema(as = Member))]
pub struct MemberView {
    pub id: MemberId,
    pub name: Option<String>,
    pub email: Option<Email>,
    pub status: Option<MemberStatus>,
    pub last_checkin_at: Option<Timestamp>,
    pub checkins_30d: usize,
    pub monthly_value: f64,
    /// An extension: which price `monthly_value` is.
    pub monthly_value_source: ValueSource,
    pub open_tasks: usize,
    /// Why and when a cancelled member left, with the class their reason's words read as
    /// (`members/cancellation.rs`); none for a member who is not cancelled.
    pub cancellation: Option<crate::members::cancellation::Cancellation>,
}

/// One member with everything Openloop keeps on them.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberDetail {
    #[serde(flatten)]
    pub member: MemberView,
    pub tags: Vec<String>,
    pub notes: Vec<crate::members::annotation::MemberNote>,
    pub membership: Membership,
    pub trial_booked_for: Option<Timestamp>,
    /// Their consent to texts, their time zone and state, and the hours texts keep.
    pub texts: crate::engine::MemberTexts,
}

impl Engine {
    fn member_view(settings: &Settings, facts: &MemberFacts, open_tasks: usize, now: Timestamp) -> MemberView {
        let (monthly_value, monthly_value_source) = monthly_value(facts, settings);
        MemberView {
            id: facts.member_id.clone(),
            name: facts.display_name(),
            email: facts.email.clone(),
            status: facts.status,
            last_checkin_at: facts.last_checkin_at,
            checkins_30d: facts.checkins_since(now - SignedDuration::from_hours(24 * 30)),
            monthly_value,
            monthly_value_source,
            open_tasks,
            cancellation: crate::members::cancellation::Cancellation::of(facts),
        }
    }

    /// A page of the account's members, in id order.
    pub async fn list_members(
        &self,
        account: AccountId,
        limit: Option<usize>,
        cursor: Option<String>,
    ) -> Result<(Vec<MemberView>, Option<String>), EngineError> {
        let settings = self.account(account).await?.settings;
        let limit = limit.unwrap_or(MEMBERS_PAGE).clamp(1, MEMBERS_PAGE_MAX);
        let (page, next) = self.store.list_member_facts(account, limit, cursor).await?;
        let now = self.clock.now();
        // One read of the account's open tasks for the whole page, not one per member.
        let open = if page.is_empty() {
            Default::default()
        } else {
            self.store.open_tasks_by_member(account).await?
        };
        let views = page
            .iter()
            .map(|facts| Self::member_view(&settings, facts, open.get(&facts.member_id).copied().unwrap_or(0), now))
            .collect();
        Ok((views, next))
    }

    /// One member of the account, with their tags and notes.
    pub async fn member_detail(&self, account: AccountId, member: &MemberId) -> Result<MemberDetail, EngineError> {
        let settings = self.account(account).await?.settings;
        let Some((facts, _)) = self.store.get_member(account, member).await? else {
            return Err(EngineError::NotFound { what: "member" });
        };
        let MemberAnnotations { tags, notes } = self.store.member_annotations(account, member).await?;
        let open = self.store.member_active_tasks(account, member).await?.len();
        Ok(MemberDetail {
            member: Self::member_view(&settings, &facts, open, self.clock.now()),
            tags: tags.into_iter().collect(),
            notes,
            membership: facts.membership.clone(),
            trial_booked_for: facts.trial_booked_for,
            texts: crate::engine::MemberTexts::of(&settings, &facts),
        })
    }
}

impl Engine {
    /// A member's tags and notes as the prompt's member memories (Openloop
    /// keeps what PushPress cannot), newest notes first, a few at most.
    pub(crate) async fn annotation_memories(
        &self,
        account: AccountId,
        member: &MemberId,
        now: Timestamp,
    ) -> Result<Vec<crate::owner::business_memory::BusinessMemory>, EngineError> {
        let annotations = self.store.member_annotations(account, member).await?;
        Ok(annotations
            .prompt_lines()
            .into_iter()
            .map(|content| crate::owner::business_memory::BusinessMemory {
                id: crate::kernel::ids::new_ulid(now),
                account_id: account,
                member_id: Some(member.clone()),
                content,
                category: Some("member_annotation".into()),
                source: crate::owner::business_memory::MemorySource::Owner,
                confidence: 100,
                created_at: now,
                expires_at: None,
                last_confirmed_at: None,
            })
            .collect())
    }
}
