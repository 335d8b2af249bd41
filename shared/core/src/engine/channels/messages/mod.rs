//! Message templates: what the engine gives the offline agent to write a message
//! from — the member's facts and the owner's own template — and the owner's operations on
//! their templates (`GET /api/v1/message-templates`, `PUT` and `DELETE
//! /api/v1/message-templates/{task_type}/{touch}`).

use jiff::Timestamp;
use serde::Serialize;

use super::Engine;
use crate::conversation::messages::{self, Inputs, MemberVars, MessageInputs, OwnerTemplate, TemplateProblem, TemplateText};
use crate::kernel::error::InvalidInput;
use crate::kernel::ids::{AccountId, MemberId};
use crate::members::member::MemberFacts;
use crate::owner::account::Account;
use crate::ports::DraftRequest;
use crate::rails::send_gate::DraftReads;
use crate::task::Draft;
use crate::task::error::EngineError;

/// One template as the owner sees it: `source` says whose it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageTemplateView {
    pub task_type: String,
    pub touch: String,
    /// The first variant's subject and body.
    pub subject: String,
    pub body: String,
    /// Every variant of the touch, the first included: each member reads one of them, always
    /// the same (the shipped ones, or the owner's when they wrote theirs).
    pub variants: Vec<TemplateText>,
    /// `default` (shipped) or `owner`.
    pub source: &'static str,
    /// The template rendered for a sample member (a `PUT`'s answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Draft>,
}

/// What an owner writes: `{"subject", "body"}`.
#[derive(Clone, Debug, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TemplateInput {
    pub subject: crate::conversation::messages::TemplateSubject,
    pub body: crate::conversation::messages::TemplateBody,
}

/// What an owner writes through the API: `{"subject", "body", "variants"?: [{"subject",
/// "body"}]}`, the variants being more wordings of the same touch.
#[derive(Clone, Debug, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TemplateWithVariants {
    pub subject: crate::conversation::messages::TemplateSubject,
    pub body: crate::conversation::messages::TemplateBody,
    #[serde(default)]
    pub variants: Vec<TemplateInput>,
}

impl From<TemplateInput> for TemplateWithVariants {
    fn from(input: TemplateInput) -> Self {
        Self {
            subject: input.subject,
            body: input.body,
            variants: Vec::new(),
        }
    }
}

fn text_of(subject: &str, body: &str) -> TemplateText {
    TemplateText {
        subject: subject.replace("\r\n", "\n").trim().to_owned(),
        body: body.replace("\r\n", "\n").trim().to_owned(),
    }
}

/// Whose member a message is for: the task's member, and their plan when the task opened.
pub(crate) struct MessageFor<'a> {
    /// None for a plan's drafts of a member Openloop has no facts about.
    pub member: Option<&'a MemberId>,
    pub first_name: Option<String>,
    pub plan_id: Option<&'a str>,
    /// The member's facts, when the caller has read them already.
    pub facts: Option<&'a MemberFacts>,
}

impl Engine {
    /// What the offline agent writes `(task_type, touch)` for `to` from: the member's facts as
    /// template variables (their plan's name from the connection) and the owner's template.
    pub(crate) async fn message_inputs(
        &self,
        account: &Account,
        task_type: &str,
        touch: &str,
        to: MessageFor<'_>,
        now: Timestamp,
    ) -> Result<MessageInputs, EngineError> {
        self.message_inputs_from(account, task_type, touch, to, None, now).await
    }

    /// [`Self::message_inputs`] with what the step's snapshot read for it (`reads`): the
    /// template and the connection are read again only when the snapshot read another key.
    pub(crate) async fn message_inputs_from(
        &self,
        account: &Account,
        task_type: &str,
        touch: &str,
        to: MessageFor<'_>,
        reads: Option<&DraftReads>,
        now: Timestamp,
    ) -> Result<MessageInputs, EngineError> {
        let reads = reads.filter(|r| r.key.0 == task_type && r.key.1 == touch);
        let read;
        let facts = match to.facts {
            Some(facts) => Some(facts),
            None => {
                read = match to.member {
                    Some(member) => self.store.get_member(account.id, member).await?.map(|(facts, _)| facts),
                    None => None,
                };
                read.as_ref()
            }
        };
        let plan_id = to.plan_id.or_else(|| facts.and_then(|f| f.membership.plan_id()));
        let plan_name = match (plan_id, reads) {
            (Some(plan), Some(reads)) => reads.connection.as_ref().and_then(|c| c.plans.get(plan).cloned()),
            (Some(plan), None) => self.store.connection(account.id).await?.and_then(|c| c.plans.get(plan).cloned()),
            (None, _) => None,
        };
        let member = match facts {
            Some(facts) => {
                // The gym's records start with the account: what came before is known only
                // as far as an import reached back (see `MemberFacts::history_is_whole`).
                MemberVars::from_facts(
                    facts,
                    to.first_name,
                    plan_name,
                    &account.settings.time_zone(),
                    account.created_at,
                    now,
                )
            }
            None => MemberVars {
                plan_name,
                ..MemberVars::named(to.first_name)
            },
        };
        let stored = match reads {
            Some(reads) => reads.template.clone(),
            None => self.store.message_template(account.id, task_type, touch).await?,
        };
        let seed = to.member.map_or(0, |m| messages::variant_seed(m.as_str()));
        let (owner_template, template_version) = match stored {
            Some(t) => {
                let mut texts = t.texts();
                let i = messages::variant_index(seed, texts.len());
                let version = format!("{}@{}#{}", messages::OWNER_TEMPLATE, t.updated_at, i + 1);
                (Some(texts.swap_remove(i)), version)
            }
            None => {
                let count = messages::shipped_variants(task_type, touch).len();
                let i = messages::variant_index(seed, count);
                (None, format!("{}#{}", messages::DEFAULT_TEMPLATE, i + 1))
            }
        };
        Ok(MessageInputs {
            member,
            owner_template,
            template_version: Some(template_version),
            variant: seed,
        })
    }

    /// `request` with what the offline agent writes it from (see [`Self::message_inputs`]):
    /// the template of its touch, or the guided answer's when the owner's words are its substance.
    pub(crate) async fn with_message(
        &self,
        account: &Account,
        mut request: DraftRequest,
        to: MessageFor<'_>,
        now: Timestamp,
    ) -> Result<DraftRequest, EngineError> {
        let def = crate::task::task_type::definition(&request.task_type);
        let guided = request.context.get("owner_guidance").is_some();
        let key = messages::draft_key(def, request.touch, guided);
        request.message = self.message_inputs(account, def.key, &key, to, now).await?;
        Ok(request)
    }

    /// [`Self::with_message`] from what the step's snapshot read (see [`Self::message_inputs_from`]).
    pub(crate) async fn with_message_from(
        &self,
        account: &Account,
        mut request: DraftRequest,
        to: MessageFor<'_>,
        reads: Option<&DraftReads>,
        now: Timestamp,
    ) -> Result<DraftRequest, EngineError> {
        let def = crate::task::task_type::definition(&request.task_type);
        let guided = request.context.get("owner_guidance").is_some();
        let key = messages::draft_key(def, request.touch, guided);
        request.message = self.message_inputs_from(account, def.key, &key, to, reads, now).await?;
        Ok(request)
    }

    /// Every template of every member-facing task type and touch: the owner's where they wrote
    /// one, else the shipped one.
    pub async fn list_message_templates(&self, account: AccountId) -> Result<Vec<MessageTemplateView>, EngineError> {
        let owned = self.store.message_templates(account).await?;
        Ok(messages::keys()
            .into_iter()
            .map(|(task_type, touch)| {
                let own = owned.iter().find(|t| t.task_type == task_type && t.touch == touch);
                let (variants, source) = match own {
                    Some(t) => (t.texts(), "owner"),
                    None => (shipped_or_fallback(task_type, &touch), "default"),
                };
                let first = variants
                    .first()
                    .cloned()
                    .unwrap_or_else(|| messages::template_for(task_type, &touch, None, 0));
                MessageTemplateView {
                    task_type: task_type.to_owned(),
                    touch,
                    subject: first.subject,
                    body: first.body,
                    variants,
                    source,
                    preview: None,
                }
            })
            .collect())
    }

    /// The owner's template for `(task_type, touch)`, checked and rendered for a sample member
    /// before it is saved; a refused one changes nothing. `input` may hold variants of the
    /// owner's own; each is checked the same way.
    pub async fn put_message_template(
        &self,
        account: AccountId,
        task_type: &str,
        touch: &str,
        input: impl Into<TemplateWithVariants>,
    ) -> Result<MessageTemplateView, EngineError> {
        let input = input.into();
        messages::check_key(task_type, touch)?;
        if input.variants.len() > messages::MAX_OWNER_VARIANTS {
            return Err(InvalidInput::new(
                "invalid_template",
                format!("at most {} variants beside the first", messages::MAX_OWNER_VARIANTS),
            )
            .into());
        }
        let account = self.account(account).await?;
        let text = text_of(&input.subject, &input.body);
        let preview = self.preview(&account, touch, &text).map_err(InvalidInput::from)?;
        let mut variants = Vec::with_capacity(input.variants.len());
        for (i, v) in input.variants.iter().enumerate() {
            let variant = text_of(&v.subject, &v.body);
            self.preview(&account, touch, &variant)
                .map_err(|e| InvalidInput::new("invalid_template", format!("variant {}: {e}", i + 1)))?;
            variants.push(variant);
        }
        let template = OwnerTemplate {
            task_type: task_type.to_owned(),
            touch: touch.to_owned(),
            subject: text.subject.clone(),
            body: text.body.clone(),
            variants,
            updated_at: self.clock.now(),
        };
        self.store.put_message_template(account.id, &template).await?;
        tracing::info!(account = %account.id, task_type, touch, "message template saved");
        Ok(MessageTemplateView {
            variants: template.texts(),
            task_type: template.task_type,
            touch: template.touch,
            subject: template.subject,
            body: template.body,
            source: "owner",
            preview: Some(preview),
        })
    }

    /// What saving `text` as the owner's template for `(task_type, touch)` would do, saving
    /// nothing: the mail the sample member would read, or why [`Self::put_message_template`]
    /// would refuse it (the same check). The Messages page's preview.
    pub async fn try_message_template(
        &self,
        account: AccountId,
        task_type: &str,
        touch: &str,
        text: &TemplateText,
    ) -> Result<Result<Draft, TemplateProblem>, EngineError> {
        messages::check_key(task_type, touch)?;
        let account = self.account(account).await?;
        Ok(self.preview(&account, touch, &text_of(&text.subject, &text.body)))
    }

    /// `text` checked and rendered for the sample member with the account's profile.
    pub fn preview(&self, account: &Account, touch: &str, text: &TemplateText) -> Result<Draft, TemplateProblem> {
        let sample = messages::sample_member();
        let inputs = Inputs {
            member: &sample,
            profile: &account.settings.profile,
            business_name: account.sender_name(),
            instructions: Some(messages::SAMPLE_INSTRUCTIONS),
        };
        messages::check(touch, text, &inputs)
    }

    /// Back to the shipped template (whether or not the owner had one).
    pub async fn delete_message_template(&self, account: AccountId, task_type: &str, touch: &str) -> Result<(), EngineError> {
        messages::check_key(task_type, touch)?;
        if self.store.delete_message_template(account, task_type, touch).await? {
            tracing::info!(%account, task_type, touch, "message template back to the default");
        }
        Ok(())
    }
}

/// The shipped variants of `(task_type, touch)`, or the one template it falls back to.
fn shipped_or_fallback(task_type: &str, touch: &str) -> Vec<TemplateText> {
    let shipped = messages::shipped_variants(task_type, touch);
    if shipped.is_empty() {
        vec![messages::template_for(task_type, touch, None, 0)]
    } else {
        shipped
    }
}
