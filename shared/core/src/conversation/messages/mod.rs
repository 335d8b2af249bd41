//! Message templates: the mail the agent writes without a model, one per member-facing task
//! type and touch — the cadence's touches (`first`, `follow_up_1`, …), the answer to a member
//! who sounds interested (`reply`), the owner's instructions said to the member (`guided`) and
//! the holding reply to a question only the owner can answer (`holding`).
//!
//! The shipped ones are data files, `messages/<task_type>/<touch>.md` (a `Subject:` line, a
//! blank line, the body), compiled in ([`defaults`]). A file may hold several variants of its
//! touch, one after the other with a line `---` between them: each member reads one of them,
//! always the same ([`variant_seed`]), so members who train side by side do not get the same
//! mail. An owner may replace any of them for their account ([`OwnerTemplate`], kept by the
//! `MessageTemplateStore`), with variants of their own; the offline agent renders the owner's
//! when there is one. Templates are MiniJinja, rendered from the member's
//! facts ([`MemberVars`]), the gym's profile and the owner's instructions ([`VARIABLES`]) —
//! never from the task's goal, the scan's context or any internal code, which are not given to
//! them at all.

mod defaults;
pub mod owners_voice;
mod problem;
mod vars;
pub mod words;

use jiff::Timestamp;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::{Deserialize, Serialize};

use crate::kernel::error::InvalidInput;
use crate::owner::account::Profile;
use crate::task::Draft;
use crate::task::task_type::{Category, REGISTRY, TaskTypeDef};

pub use problem::{Part, TemplateProblem};
pub use vars::MemberVars;

/// The first touch of a cadence.
pub const FIRST: &str = "first";
/// The offline agent's answer to a member who sounds interested but named no day.
pub const REPLY: &str = "reply";
/// The owner's instructions, said to the member in the gym's voice.
pub const GUIDED: &str = "guided";
/// The holding reply to a member whose question waits for the owner: every type's is
/// `ad_hoc`'s.
pub const HOLDING: &str = "holding";
/// The parting note to a member who has decided to leave (thanks, the door is open): every
/// type's is `ad_hoc`'s.
pub const PARTING: &str = "parting";

/// The most characters an owner's subject template may have.
pub const MAX_SUBJECT_SOURCE_CHARS: usize = 300;
/// The most characters an owner's body template may have.
pub const MAX_BODY_SOURCE_CHARS: usize = 5_000;

crate::kernel::bounded::bounded_text! {
    /// An owner's template of a subject (MiniJinja): one line; a reply's may be empty (it
    /// answers under the member's subject).
    pub TemplateSubject = crate::kernel::bounded::TextRule::line(MAX_SUBJECT_SOURCE_CHARS, "invalid_template");
    /// An owner's template of a body (MiniJinja).
    pub TemplateBody = crate::kernel::bounded::TextRule::text(MAX_BODY_SOURCE_CHARS, "invalid_template").min(1);
}
/// A rendered subject, as any draft's.
const MAX_SUBJECT_CHARS: usize = 200;
/// A rendered body, as any draft's.
const MAX_BODY_CHARS: usize = 20_000;
/// What one rendering may spend (loops, filters): far above any sensible mail.
const FUEL: u64 = 50_000;

/// A template's text: MiniJinja source for the subject and the body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateText {
    pub subject: String,
    pub body: String,
}

/// An owner's own template for one task type and touch of their account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerTemplate {
    pub task_type: String,
    pub touch: String,
    pub subject: String,
    pub body: String,
    /// More of the owner's own wordings of the touch, beside `subject` and `body`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<TemplateText>,
    pub updated_at: Timestamp,
}

impl OwnerTemplate {
    pub fn text(&self) -> TemplateText {
        TemplateText {
            subject: self.subject.clone(),
            body: self.body.clone(),
        }
    }

    /// Every wording the owner wrote: `subject` and `body` first, then their variants.
    pub fn texts(&self) -> Vec<TemplateText> {
        std::iter::once(self.text()).chain(self.variants.iter().cloned()).collect()
    }
}

/// The most variants an owner may write of one touch (beside the first).
pub const MAX_OWNER_VARIANTS: usize = 9;

/// The line between two variants in a shipped file.
const VARIANT_SEPARATOR: &str = "---";

/// A member's variant seed: a stable hash of their id (FNV-1a, then mixed so ids that differ
/// in their last character land far apart). The same member reads the same variant of a
/// touch on every send, whichever worker writes it.
pub fn variant_seed(member: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in member.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // splitmix64's finaliser.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Which of `count` variants a member with `seed` reads (0-based).
pub fn variant_index(seed: u64, count: usize) -> usize {
    match u64::try_from(count) {
        Ok(n) if n > 0 => usize::try_from(seed % n).unwrap_or(0),
        _ => 0,
    }
}

/// A message written from the shipped template, and from the owner's own (the learning
/// record's `template`, and the start of a `template_version`).
pub const DEFAULT_TEMPLATE: &str = "default";
pub const OWNER_TEMPLATE: &str = "owner";

/// What the offline agent writes a message from, carried in the agent's requests: the member's
/// facts and the owner's own template for the message, if they wrote one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageInputs {
    #[serde(default)]
    pub member: MemberVars,
    #[serde(default)]
    pub owner_template: Option<TemplateText>,
    /// Which template the message is written from, for learning: `default`, or
    /// `owner@{time}` (when the owner last changed theirs) — never shown to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_version: Option<String>,
    /// The member's [`variant_seed`]: which of the shipped variants they read (the owner's
    /// variant is picked by the engine into `owner_template`).
    #[serde(default)]
    pub variant: u64,
}

/// Every variable a template may use, with what it holds (the dashboard and the docs list
/// them). A value the facts do not give is empty: test it with `{% if … %}`.
pub const VARIABLES: &[(&str, &str)] = &[
    ("greeting", "\"Hi Dana\", or \"Hi there\" when the first name is unknown"),
    (
        "sign_off",
        "the profile's sign-off, else the owner's first name, else \"The <gym> team\"",
    ),
    (
        "instructions",
        "the owner's words for this message (the guided answer only; empty elsewhere)",
    ),
    ("member.first_name", "the member's first name"),
    (
        "member.tenure",
        "how long they have been a member, in words (\"8 months\", \"over a year\"), where the gym's data holds their whole history (as for member.visits); empty under a month",
    ),
    ("member.tenure_months", "the same in whole months"),
    ("member.days_since_last_visit", "days since their last check-in"),
    (
        "member.visits",
        "how many check-ins they have made, where the gym's data holds them all (they joined since the gym's records start, or the first check-in it holds is within 14 days of their joining); else empty",
    ),
    (
        "member.usual_time",
        "when they usually train (\"Tuesday evening\", \"morning\"), from their check-ins",
    ),
    ("member.plan_name", "their PushPress plan's name"),
    (
        "member.usual_class",
        "the class most of their recent check-ins were (\"Yoga Flow\"), where check-ins name one",
    ),
    (
        "member.cancellation_class",
        "what a cancelled member's reason reads as: moving, medical, financial, schedule, dissatisfied or other; empty for a member who is not cancelled",
    ),
    ("member.days_since_cancelled", "days since a cancelled member cancelled"),
    (
        "member.billed_in_pushpress",
        "true when their membership is billed in PushPress: they can update their card in PushPress's member app",
    ),
    ("gym.name", "the profile's display name, else the account's name"),
    ("gym.owner_first_name", "the owner's first name"),
    ("gym.sign_off", "the profile's sign-off as written"),
    ("gym.phone", "the profile's phone"),
    ("gym.website", "the profile's website"),
    (
        "gym.billing_link",
        "the profile's billing link: where members update their card (the only link a payment note may give)",
    ),
    ("gym.address", "the profile's address"),
    ("gym.offer", "the profile's current promotion: the only offer a template may make"),
    (
        "gym.ways_to_stay",
        "the profile's ways to stay for a member the cost troubles (a pause, a cheaper plan): the only such offer a win-back may make",
    ),
];

/// The variable namespaces (`{{ member }}` alone is known, if not useful).
const NAMESPACES: &[&str] = &["member", "gym"];

/// Whether tasks of `def` write to members, and so have templates.
pub fn member_facing(def: &TaskTypeDef) -> bool {
    def.category == Category::Communication
}

/// The cadence's touch `touch` (0 = the first message) as a template key.
pub fn touch_key(touch: u32) -> String {
    if touch == 0 {
        FIRST.to_owned()
    } else {
        format!("follow_up_{touch}")
    }
}

/// How many touches a task of `def` sends: its cadence's, within its message budget.
fn cadence_touches(def: &TaskTypeDef) -> u32 {
    u32::try_from(def.cadence.intervals.len())
        .unwrap_or(u32::MAX)
        .max(1)
        .min(def.budget.max_messages)
}

/// The template keys of `def`: its touches, then [`REPLY`] and [`GUIDED`]; none for a type
/// that never writes to a member.
pub fn touches(def: &TaskTypeDef) -> Vec<String> {
    if !member_facing(def) {
        return Vec::new();
    }
    let mut keys: Vec<String> = (0..cadence_touches(def)).map(touch_key).collect();
    keys.push(REPLY.to_owned());
    keys.push(GUIDED.to_owned());
    keys
}

/// Every `(task_type, touch)` there is a template for, in the registry's order.
pub fn keys() -> Vec<(&'static str, String)> {
    REGISTRY
        .iter()
        .flat_map(|def| touches(def).into_iter().map(move |t| (def.key, t)))
        .collect()
}

/// The key of a draft's template: [`GUIDED`] when the owner's instructions are its substance,
/// else the touch's (a touch past the cadence's last, which the rails never send, reads as the
/// last).
pub fn draft_key(def: &TaskTypeDef, touch: u32, guided: bool) -> String {
    if guided {
        return GUIDED.to_owned();
    }
    touch_key(touch.min(cadence_touches(def).saturating_sub(1)))
}

/// Why a template key is refused.
pub fn check_key(task_type: &str, touch: &str) -> Result<&'static TaskTypeDef, InvalidInput> {
    let def = crate::task::task_type::lookup(task_type)
        .filter(|d| member_facing(d))
        .ok_or_else(|| {
            let facing: Vec<&str> = REGISTRY.iter().filter(|d| member_facing(d)).map(|d| d.key).collect();
            InvalidInput::new(
                "unknown_template",
                format!(
                    "{task_type:?} has no message templates; the task types that write to members are {}",
                    facing.join(", ")
                ),
            )
        })?;
    let known = touches(def);
    if !known.iter().any(|t| t == touch) {
        return Err(InvalidInput::new(
            "unknown_template",
            format!("{task_type} has no touch {touch:?}; its touches are {}", known.join(", ")),
        ));
    }
    Ok(def)
}

/// The shipped template of `(task_type, touch)`: its first variant.
pub fn shipped(task_type: &str, touch: &str) -> Option<TemplateText> {
    shipped_variants(task_type, touch).into_iter().next()
}

/// Every shipped variant of `(task_type, touch)`, in the file's order; none for a key there
/// is no file of.
pub fn shipped_variants(task_type: &str, touch: &str) -> Vec<TemplateText> {
    defaults::SHIPPED
        .iter()
        .find(|(t, k, _)| *t == task_type && *k == touch)
        .map(|(_, _, file)| parse_file(file))
        .unwrap_or_default()
}

/// The template to write `(task_type, touch)` from: the owner's, else the shipped variant of
/// the member with `seed` ([`variant_seed`]); a type with none (an unknown key reads as
/// `ad_hoc`, like the registry) gets `ad_hoc`'s.
pub fn template_for(task_type: &str, touch: &str, owner: Option<&TemplateText>, seed: u64) -> TemplateText {
    if let Some(text) = owner {
        return text.clone();
    }
    [(task_type, touch), ("ad_hoc", touch), ("ad_hoc", FIRST)]
        .into_iter()
        .map(|(t, k)| shipped_variants(t, k))
        .find(|v| !v.is_empty())
        .and_then(|mut variants| {
            let i = variant_index(seed, variants.len());
            (i < variants.len()).then(|| variants.swap_remove(i))
        })
        .unwrap_or_else(|| TemplateText {
            subject: "A note from {{ gym.name }}".into(),
            body: "{{ greeting }},\n\n{{ sign_off }}".into(),
        })
}

/// A shipped file: variants separated by a line `---`, each `Subject: …`, a blank line, the
/// body.
fn parse_file(file: &str) -> Vec<TemplateText> {
    let mut variants = vec![String::new()];
    for line in file.lines() {
        if line.trim_end() == VARIANT_SEPARATOR {
            variants.push(String::new());
        } else if let Some(last) = variants.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    variants
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(|v| {
            let (first, rest) = v.split_once('\n').unwrap_or((v, ""));
            TemplateText {
                subject: first.trim_start_matches("Subject:").trim().to_owned(),
                body: rest.trim().to_owned(),
            }
        })
        .collect()
}

/// What a message is written from, beside its template.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub member: &'a MemberVars,
    pub profile: &'a Profile,
    /// The account's name: the gym's name when the profile gives no display name.
    pub business_name: &'a str,
    /// The owner's words for this message ([`GUIDED`]).
    pub instructions: Option<&'a str>,
}

fn some(value: Option<&str>) -> Value {
    Value::from(value.map(str::trim).filter(|v| !v.is_empty()).unwrap_or_default())
}

/// The template's context.
fn context(inputs: &Inputs<'_>) -> Value {
    use std::collections::BTreeMap;
    let p = inputs.profile;
    let gym_name = p
        .display_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(inputs.business_name)
        .to_owned();
    let first_name = inputs
        .member
        .first_name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(crate::members::name::as_written);
    let first_name = first_name.as_deref();
    let greeting = match first_name {
        Some(name) => format!("Hi {name}"),
        None => "Hi there".to_owned(),
    };
    let sign_off = [p.sign_off.as_deref(), p.owner_first_name.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map_or_else(|| format!("The {gym_name} team"), str::to_owned);
    let m = inputs.member;
    let member: BTreeMap<String, Value> = [
        ("first_name", some(first_name)),
        ("tenure", some(m.tenure().as_deref())),
        ("tenure_months", Value::from(m.tenure_days.map(|d| d / 30))),
        ("days_since_last_visit", Value::from(m.days_since_last_visit)),
        ("visits", Value::from(m.visits)),
        ("usual_time", some(m.usual_time.as_deref())),
        ("plan_name", some(m.plan_name.as_deref())),
        ("usual_class", some(m.usual_class.as_deref())),
        ("billed_in_pushpress", Value::from(m.billed_in_pushpress)),
        ("cancellation_class", some(m.cancellation_class.as_deref())),
        ("days_since_cancelled", Value::from(m.days_since_cancelled)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let gym: BTreeMap<String, Value> = [
        ("name", Value::from(gym_name.clone())),
        ("owner_first_name", some(p.owner_first_name.as_deref())),
        ("sign_off", some(p.sign_off.as_deref())),
        ("phone", some(p.contact_phone.as_deref())),
        ("website", some(p.contact_website.as_deref())),
        ("billing_link", some(p.billing_link.as_deref())),
        ("address", some(p.contact_address.as_deref())),
        ("offer", some(p.current_promo.as_deref())),
        ("ways_to_stay", some(p.ways_to_stay.as_deref())),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let top: BTreeMap<String, Value> = [
        ("greeting", Value::from(greeting)),
        ("sign_off", Value::from(sign_off)),
        ("instructions", some(inputs.instructions)),
        ("member", Value::from(member)),
        ("gym", Value::from(gym)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    Value::from(top)
}

/// The environment: plain text (no escaping), a missing variable an error, `none` printed as
/// nothing, a bounded run, and no function that shows what a template was given: `debug()`
/// would print every variable (the member's facts, the gym's) into a member's mail.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.remove_global("debug");
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(|out, state, value| {
        if value.is_none() || value.is_undefined() {
            Ok(())
        } else {
            minijinja::escape_formatter(out, state, value)
        }
    });
    // The newline after a tag is kept (an `{% endif %}` ending a line keeps its paragraph
    // break); the blank lines a tag alone on its line leaves are tidied away after rendering.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder().lstrip_blocks(true).build() {
        env.set_syntax(syntax);
    }
    env.set_fuel(Some(FUEL));
    env
}

/// Why a part did not parse or render: which part, what, where.
fn describe(part: Part, e: &minijinja::Error) -> TemplateProblem {
    let detail = e.detail().map_or_else(|| e.kind().to_string(), |d| format!("{}: {d}", e.kind()));
    let line = e.line();
    if e.kind() == minijinja::ErrorKind::SyntaxError {
        TemplateProblem::Unreadable { part, detail, line }
    } else {
        TemplateProblem::DoesNotRender { part, detail, line }
    }
}

/// Tidy rendered text: no trailing spaces, at most one blank line in a row, nothing around.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

fn render_part(env: &Environment<'static>, part: Part, source: &str, ctx: &Value) -> Result<String, TemplateProblem> {
    env.render_str(source, ctx.clone()).map_err(|e| describe(part, &e))
}

/// Render `text` for one message. An error says which part failed and why.
pub fn render(text: &TemplateText, inputs: &Inputs<'_>) -> Result<Draft, String> {
    rendered(text, inputs).map_err(|p| p.to_string())
}

fn rendered(text: &TemplateText, inputs: &Inputs<'_>) -> Result<Draft, TemplateProblem> {
    let env = environment();
    let ctx = context(inputs);
    let subject = render_part(&env, Part::Subject, &text.subject, &ctx)?;
    let body = render_part(&env, Part::Body, &text.body, &ctx)?;
    let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    let body = tidy(&body);
    if subject.chars().count() > MAX_SUBJECT_CHARS {
        return Err(TemplateProblem::RendersTooLong {
            part: Part::Subject,
            max: MAX_SUBJECT_CHARS,
        });
    }
    if body.is_empty() {
        return Err(TemplateProblem::RendersEmpty);
    }
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(TemplateProblem::RendersTooLong {
            part: Part::Body,
            max: MAX_BODY_CHARS,
        });
    }
    Ok(Draft { subject, body })
}

/// The names a part uses that are not variables, in the order written.
fn unknown_variables(env: &Environment<'static>, part: Part, source: &str) -> Result<Vec<String>, TemplateProblem> {
    let template = env.template_from_str(source).map_err(|e| describe(part, &e))?;
    let mut unknown: Vec<String> = template
        .undeclared_variables(true)
        .into_iter()
        .filter(|name| {
            let root = name.split('.').next().unwrap_or(name);
            !(VARIABLES.iter().any(|(v, _)| v == name) || NAMESPACES.contains(&name.as_str()) || env.globals().any(|(g, _)| g == root))
        })
        .collect();
    unknown.sort();
    Ok(unknown)
}

/// Check an owner's template for a `touch` and render it for `sample` (the preview). A
/// template that is too long, does not parse, names a variable there is not, fails to render
/// or leaves template marks in the mail is refused, saying which and why ([`TemplateProblem`]:
/// the API's message and the owner's words both).
pub fn check(touch: &str, text: &TemplateText, sample: &Inputs<'_>) -> Result<Draft, TemplateProblem> {
    for (part, source, max) in [
        (Part::Subject, &text.subject, MAX_SUBJECT_SOURCE_CHARS),
        (Part::Body, &text.body, MAX_BODY_SOURCE_CHARS),
    ] {
        if source.chars().count() > max {
            return Err(TemplateProblem::TooLong { part, max });
        }
    }
    if text.subject.contains(['\r', '\n']) {
        return Err(TemplateProblem::SubjectLines);
    }
    if text.body.trim().is_empty() {
        return Err(TemplateProblem::BodyEmpty);
    }
    let env = environment();
    for (part, source) in [(Part::Subject, &text.subject), (Part::Body, &text.body)] {
        let unknown = unknown_variables(&env, part, source)?;
        if let Some(name) = unknown.first() {
            return Err(TemplateProblem::UnknownVariable {
                part,
                name: name.clone(),
                known: VARIABLES.iter().map(|(v, _)| *v).collect(),
            });
        }
    }
    // It must render for a member we know everything about and for one we know nothing about.
    let blank = MemberVars::default();
    rendered(
        text,
        &Inputs {
            member: &blank,
            instructions: None,
            ..*sample
        },
    )?;
    let preview = rendered(text, sample)?;
    if touch == FIRST && preview.subject.is_empty() {
        return Err(TemplateProblem::NeedsSubject);
    }
    for mark in ["{{", "}}", "{%", "%}"] {
        if preview.subject.contains(mark) || preview.body.contains(mark) {
            return Err(TemplateProblem::MarksLeft { mark });
        }
    }
    Ok(preview)
}

/// The sample member a preview is rendered for.
pub fn sample_member() -> MemberVars {
    MemberVars::sample()
}

/// The instructions a preview of [`GUIDED`] shows.
pub const SAMPLE_INSTRUCTIONS: &str = "The Saturday class starts at 9am from next week.";

#[cfg(test)]
mod tests;
