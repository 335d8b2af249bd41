//! Every page in the owner's words: the dashboard walked from its overview by its own links,
//! as a signed-in owner would click through it, and the visible text of each page read for what
//! an owner should never meet — an internal code (`owner_approved`, `m_ana`), a raw identifier,
//! template syntax, a backtick, a placeholder address or a Rust value's debug form.

use std::collections::{BTreeSet, VecDeque};

use openloop_tests::{Account, Stack};

use crate::dashboard::sign_in;

/// Pages walked at most: a long list's pages are not all needed to read what a page says.
const PAGES: usize = 160;

/// What the owner sees of a page: its text outside tags, scripts and styles, entities decoded,
/// and the words a control shows (a placeholder, a button's value).
pub(crate) fn visible_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        rest = &rest[open..];
        let lower = rest.get(..8).unwrap_or(rest).to_ascii_lowercase();
        let mut skip_to = ["<script", "<style", "<templat"]
            .iter()
            .find(|t| lower.starts_with(**t))
            .map(|t| format!("</{}", &t[1..]));
        // The one exception: the Messages page's opt-in raw editor, a `<details
        // data-raw-template>` ("Edit the template language"), shows the template language
        // itself, on purpose. Only that element is skipped, and only to its own `</details>`
        // (it holds no other); the same page's words, chips and mail are read as any page's.
        if lower.starts_with("<details") && rest[..rest.find('>').unwrap_or(0)].contains("data-raw-template") {
            skip_to = Some("</details".to_owned());
        }
        if let Some(end) = skip_to.and_then(|end| rest.to_ascii_lowercase().find(&end)) {
            rest = &rest[end + 2..];
        }
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        for attr in ["placeholder=\"", "aria-label=\"", "title=\""] {
            if let Some(at) = tag.find(attr) {
                let value = &tag[at + attr.len()..];
                out.push(' ');
                out.push_str(value.split('"').next().unwrap_or_default());
                out.push(' ');
            }
        }
        out.push(' ');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
}

/// A ULID as the code prints it: 26 characters of Crockford's base32, digits among them.
fn is_ulid(word: &str) -> bool {
    word.len() == 26
        && word.bytes().any(|b| b.is_ascii_digit())
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b)))
}

/// What on a page no owner should read, each with the words around it.
pub(crate) fn codes_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let around = |at: usize| {
        let start = text[..at].char_indices().rev().nth(40).map_or(0, |(i, _)| i);
        let end = text[at..].char_indices().nth(60).map_or(text.len(), |(i, _)| at + i);
        text[start..end].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    for marker in [
        "{{",
        "{%",
        "%}",
        "}}",
        "`",
        ".invalid",
        "AccountId(",
        "Ulid(",
        "Some(",
        "TaskId(",
        "MemberId(",
    ] {
        if let Some(at) = text.find(marker) {
            found.push(format!("{marker:?} in \"{}\"", around(at)));
        }
    }
    let mut at = 0;
    for word in text.split(|c: char| !(c.is_alphanumeric() || "_@.+-/:".contains(c))) {
        let start = text[at..].find(word).map_or(at, |i| at + i);
        at = start + word.len();
        let word = word.trim_matches(|c: char| ".:/-".contains(c));
        if word.contains('@') || word.contains("://") || word.starts_with('/') || word.contains('/') {
            continue; // an address, a link, or a time zone's name ("America/New_York")
        }
        let dotted = word.contains('.')
            && (word.contains('_')
                || ["member.", "checkin.", "payment.", "customer.", "enrollment.", "task.", "todo."]
                    .iter()
                    .any(|p| word.starts_with(p)));
        let snake = word.contains('_')
            && word
                .split('_')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        let capital_snake = word.contains('_') && word.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        if snake || capital_snake || dotted || is_ulid(word) {
            found.push(format!("{word:?} in \"{}\"", around(start)));
        }
    }
    found
}

/// The dashboard's links on a page, to walk on: its own pages, not its assets or signing out.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(|l| l.replace("&amp;", "&"))
        .filter(|l| l.starts_with("/app") && !l.starts_with("/app/static") && !l.contains("logout") && !l.contains("login"))
        .map(|l| l.split('#').next().unwrap_or_default().to_owned())
        .collect()
}

/// Walks the gym's dashboard from `/app` and reads every page it reaches; each finding names
/// the page. The pages a member opens from a mail (`member_pages`: unsubscribe, an action link)
/// are read the same way, signed out.
pub(crate) async fn codes_on_pages(stack: &Stack, gym: &Account, member_pages: &[String]) -> Vec<String> {
    let owner = sign_in(stack, gym).await;
    let mut problems = Vec::new();
    let mut seen = BTreeSet::from(["/app".to_owned()]);
    let mut queue = VecDeque::from(["/app".to_owned()]);
    // One page of each kind under a path with an id (a task, a member) is enough after a few.
    let mut per_kind: std::collections::BTreeMap<String, usize> = Default::default();
    while let Some(path) = queue.pop_front() {
        let (status, html) = owner.get(&path).await;
        if status != 200 {
            problems.push(format!("{path}: {status}"));
            continue;
        }
        for found in codes_in(&visible_text(&html)) {
            problems.push(format!("{path}: {found}"));
        }
        for link in links(&html) {
            // A page's kind: its path without an id, and the names of its query's fields.
            let (path, query) = link.split_once('?').unwrap_or((&link, ""));
            let path = match path.rsplit_once('/') {
                Some((parent, id)) if id.len() >= 20 => parent,
                // One message's page is one kind, whichever task type and step it is.
                _ if path.starts_with("/app/templates/") => "/app/templates/",
                _ => path,
            };
            let keys: Vec<&str> = query.split('&').filter_map(|kv| kv.split('=').next()).collect();
            let kind = format!("{path}?{}", keys.join("&"));
            let n = per_kind.entry(kind).or_default();
            if seen.len() < PAGES && *n < 12 && seen.insert(link.clone()) {
                *n += 1;
                queue.push_back(link);
            }
        }
    }
    for kind in [
        "/app/today",
        "/app/review",
        "/app/escalations",
        "/app/conversations",
        "/app/todos",
        "/app/members",
        "/app/members/",
        "/app/tasks/",
        "/app/lift",
        "/app/reports/churn",
        "/app/notifications",
        "/app/memories",
        "/app/suggestions",
        "/app/settings",
        "/app/settings?try=",
        "/app/settings/webhooks",
        "/app/templates",
        "/app/templates/",
        "/app/schedules",
    ] {
        if !seen
            .iter()
            .any(|p| p.starts_with(kind) && (kind.ends_with(['/', '=']) || p.len() == kind.len() || p[kind.len()..].starts_with('?')))
        {
            problems.push(format!("no link on the dashboard led to {kind}"));
        }
    }
    let http = reqwest::Client::new();
    for url in member_pages {
        let page = http.get(url).send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let html = page.text().await.unwrap_or_default();
        for found in codes_in(&visible_text(&html)) {
            problems.push(format!("{url}: {found}"));
        }
    }
    problems
}

#[test]
fn the_reader_finds_codes_and_passes_words() {
    let page = "<html><head><title>Today</title><style>a_b{}</style></head><body><p>Sent &amp; approved</p>\
        <script>let send_reserved = 1;</script><p title=\"owner_approved\">ok</p><p>Mail kim_lee@example.com at \
        <a href=\"/app/tasks/01J\">the task</a></p><td>m_ana</td><p>{% if x %}</p><p>01M90NNKR0NM97ZSKDDCNQ4YVG</p>\
        <details class=\"card\" data-raw-template><summary>Edit</summary><textarea>{{ member.first_name }}</textarea></details>\
        <details><textarea>{{ gym.owner_first_name }}</textarea></details></body></html>";
    let text = visible_text(page);
    assert!(
        text.contains("Sent & approved") && !text.contains("send_reserved") && !text.contains("a_b"),
        "{text}"
    );
    let found = codes_in(&text);
    assert!(found.iter().any(|f| f.starts_with("\"owner_approved\"")), "{found:?}");
    assert!(found.iter().any(|f| f.starts_with("\"m_ana\"")), "{found:?}");
    assert!(found.iter().any(|f| f.starts_with("\"{%\"")), "{found:?}");
    assert!(found.iter().any(|f| f.starts_with("\"01M90NNKR0NM97ZSKDDCNQ4YVG\"")), "{found:?}");
    assert!(!text.contains("member.first_name"), "the raw editor is not read: {text}");
    assert!(
        found.iter().any(|f| f.starts_with("\"gym.owner_first_name\"")),
        "any other details is: {found:?}"
    );
    assert_eq!(found.len(), 8, "{found:?}");
    assert_eq!(codes_in("On member.status_changed, after 2 h").len(), 1);
    assert!(codes_in("Kim's first mail went at 9:00 — 3 of 5 approved (60%). Re: Checking in").is_empty());
}

/// The overview's counts held against the lists they count: the conversations open against
/// the Conversations page's rows, the attention needed against the review queue and the
/// escalations. Each disagreement, in words.
pub(crate) async fn numbers_disagree(stack: &Stack, gym: &Account) -> Vec<String> {
    let owner = sign_in(stack, gym).await;
    let (_, overview) = owner.get("/app").await;
    let hero = |label: &str| -> Option<usize> {
        let end = overview.find(&format!("<span class=\"label\">{label}</span>"))?;
        let at = overview[..end].rfind("<span class=\"value\">")? + "<span class=\"value\">".len();
        overview[at..end].split("</span>").next()?.trim().parse().ok()
    };
    let rows = |page: &str| page.matches("data-task-id=").count();
    let mut problems = Vec::new();
    let (_, conversations) = owner.get("/app/conversations").await;
    match hero("conversations open") {
        Some(n) if n == rows(&conversations) => {}
        other => problems.push(format!(
            "the overview says {other:?} conversations open, Conversations lists {}",
            rows(&conversations)
        )),
    }
    let (_, review) = owner.get("/app/review").await;
    let (_, escalations) = owner.get("/app/escalations").await;
    let waiting = review.matches("<article class=\"card\" data-task-id=").count()
        + escalations.matches("<article class=\"card\" data-task-id=").count();
    match hero("need your attention") {
        Some(n) if n == waiting => {}
        other => problems.push(format!(
            "the overview says {other:?} need attention, the review queue and escalations list {waiting}"
        )),
    }
    problems
}
