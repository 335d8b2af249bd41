//! The owner's dashboard (`/app`) over HTTP, as a browser would use it — forms,
//! cookies and redirects by hand, so each security property is asserted where it is made:
//! the session cookie's flags, CSRF on every change, one account per session, and member text
//! shown as text. The real browser's walkthrough is `dashboard_browser.rs`.

use jiff::Timestamp;
use openloop_tests::{Account, Client, Stack, morning};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};

/// A signed-in owner: the session cookie and the CSRF token its pages carry.
pub(crate) struct Owner {
    http: reqwest::Client,
    url: String,
    cookie: String,
    pub(crate) csrf: String,
}

const FORM: &str = "application/x-www-form-urlencoded";

fn encode(form: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(form).unwrap_or_else(|e| panic!("{e}"))
}

fn browser_like() -> reqwest::Client {
    openloop_aws::tls::http_client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The value of `name="{field}" value="…"` in a page.
fn field(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker)? + marker.len();
    let end = page[start..].find('"')? + start;
    Some(page[start..end].to_owned())
}

/// `name=value` of a response's `Set-Cookie` for `name`, with its attributes.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(str::to_owned)
}

fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap_or_default().to_owned()
}

/// `GET /app/login`, then `POST` the form with `token`; the response of the post.
async fn post_login(stack: &Stack, token: &str, extra: &[(&str, &str)]) -> reqwest::Response {
    let http = browser_like();
    let form = http
        .get(format!("{}/app/login", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(form.status(), StatusCode::OK);
    let login_cookie = set_cookie(&form, "ol_login").unwrap_or_else(|| panic!("the form sets its login cookie"));
    let page = form.text().await.unwrap_or_default();
    let csrf = field(&page, "csrf").unwrap_or_else(|| panic!("the sign-in form carries a CSRF token: {page}"));
    let mut request = http
        .post(format!("{}/app/login", stack.url))
        .header(COOKIE, cookie_pair(&login_cookie))
        .header(CONTENT_TYPE, FORM)
        .body(encode(&[("token", token), ("csrf", csrf.as_str())]));
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) async fn sign_in(stack: &Stack, gym: &Account) -> Owner {
    let response = post_login(stack, &gym.token, &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = cookie_pair(&set_cookie(&response, "ol_session").unwrap_or_else(|| panic!("a session cookie")));
    let mut owner = Owner {
        http: browser_like(),
        url: stack.url.clone(),
        cookie,
        csrf: String::new(),
    };
    let (status, page) = owner.get("/app").await;
    assert_eq!(status, 200, "{page}");
    owner.csrf = field(&page, "csrf").unwrap_or_else(|| panic!("pages carry the session's CSRF token"));
    owner
}

impl Owner {
    pub(crate) async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .http
            .get(format!("{}{path}", self.url))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        (response.status().as_u16(), response.text().await.unwrap_or_default())
    }

    /// Posts a form; the status and the page it answers with.
    pub(crate) async fn post_page(&self, path: &str, form: &[(&str, &str)]) -> (u16, String) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .header(COOKIE, &self.cookie)
            .header(CONTENT_TYPE, FORM)
            .body(encode(form))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        (response.status().as_u16(), response.text().await.unwrap_or_default())
    }

    /// Posts a form; the status and where it redirects to.
    pub(crate) async fn post(&self, path: &str, form: &[(&str, &str)]) -> (u16, String) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .header(COOKIE, &self.cookie)
            .header(CONTENT_TYPE, FORM)
            .body(encode(form))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (response.status().as_u16(), location)
    }
}

/// A task waiting for review with the given draft; returns its id.
pub(crate) async fn pending_task(stack: &Stack, gym: &Account, member: &str, goal: &str, subject: &str, body: &str) -> String {
    let input = json!({"task_type": "churn_risk", "member_id": member, "goal": goal, "confidence": 60,
        "draft": {"subject": subject, "body": body}});
    let (status, task) = stack.post("/api/v1/tasks", &gym.token, input).await;
    assert_eq!((status, task["status"].as_str()), (201, Some("pending_review")), "{task}");
    task["id"].as_str().unwrap_or_default().to_owned()
}

pub(crate) async fn task(stack: &Stack, gym: &Account, id: &str) -> Value {
    let (status, task) = stack.get(&format!("/api/v1/tasks/{id}"), &gym.token).await;
    assert_eq!(status, 200, "{task}");
    task
}

#[tokio::test]
async fn signing_in_sets_a_strict_http_only_expiring_cookie_secure_over_https() {
    let stack = Stack::start("app-login").await;
    let gym = stack.create_account("manual").await;

    let response = post_login(&stack, &gym.token, &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers().get(LOCATION).and_then(|v| v.to_str().ok()), Some("/app"));
    let cookie = set_cookie(&response, "ol_session").unwrap_or_else(|| panic!("a session cookie"));
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/app", "Max-Age=43200"] {
        assert!(cookie.split("; ").any(|a| a == flag), "{flag} in {cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http (local) cannot keep a Secure cookie: {cookie}"
    );
    assert!(!cookie.contains(&gym.token), "the cookie never holds the API token");

    let over_https = post_login(&stack, &gym.token, &[("x-forwarded-proto", "https")]).await;
    let cookie = set_cookie(&over_https, "ol_session").unwrap_or_default();
    assert!(cookie.ends_with("; Secure"), "{cookie}");

    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app").await;
    assert_eq!(status, 200);
    for hero in ["members retained", "revenue retained", "conversations open", "need your attention"] {
        assert!(page.contains(hero), "{hero}: {page}");
    }
    assert!(!page.contains(&gym.token), "no secret in a page");
    let other_device = sign_in(&stack, &gym).await;

    let response = owner
        .http
        .post(format!("{}/app/logout", stack.url))
        .header(COOKIE, &owner.cookie)
        .header(CONTENT_TYPE, FORM)
        .body(encode(&[("csrf", &owner.csrf)]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cleared = set_cookie(&response, "ol_session").unwrap_or_default();
    assert!(cleared.starts_with("ol_session=;") && cleared.contains("Max-Age=0"), "{cleared}");
    // Ended on the server: a copy of the cookie, and the account's other sessions, open nothing.
    for (who, session) in [("the copied cookie", &owner), ("another device", &other_device)] {
        let (status, _) = session.get("/app").await;
        assert_eq!(status, 303, "{who} is signed out");
    }
    let again = sign_in(&stack, &gym).await;
    assert_eq!(again.get("/app").await.0, 200, "signing in again works");
    stack.running.stop();
}

#[tokio::test]
async fn a_wrong_token_a_forged_cookie_or_none_gets_the_sign_in_page() {
    let stack = Stack::start("app-refused").await;
    let gym = stack.create_account("manual").await;
    let response = post_login(&stack, "olk_not-a-token", &[]).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(set_cookie(&response, "ol_session").is_none(), "no session for a wrong token");
    assert!(response.text().await.unwrap_or_default().contains("That token is not valid"));

    let owner = sign_in(&stack, &gym).await;
    let forged = Owner {
        cookie: owner.cookie.replacen("v2.", "v2.0", 1),
        ..owner
    };
    let anonymous = Owner {
        cookie: String::new(),
        http: browser_like(),
        url: stack.url.clone(),
        csrf: String::new(),
    };
    for who in [&forged, &anonymous] {
        let response = who
            .http
            .get(format!("{}/app/review", stack.url))
            .header(COOKIE, &who.cookie)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers().get(LOCATION).and_then(|v| v.to_str().ok()), Some("/app/login"));
    }
    stack.running.stop();
}

#[tokio::test]
async fn a_form_without_the_sessions_csrf_token_is_forbidden_and_changes_nothing() {
    let stack = Stack::start("app-csrf").await;
    let gym = stack.create_account("manual").await;
    let id = pending_task(&stack, &gym, "m_1", "Lapsed three weeks", "Miss you", "Hi").await;
    let owner = sign_in(&stack, &gym).await;
    let other_sign_in = sign_in(&stack, &gym).await;
    let path = format!("/app/tasks/{id}/approve");
    for form in [vec![], vec![("csrf", "")], vec![("csrf", other_sign_in.csrf.as_str())]] {
        let (status, _) = owner.post(&path, &form).await;
        assert_eq!(status, 403, "{form:?}");
    }
    let (status, _) = owner.post(&format!("/app/tasks/{id}/skip"), &[]).await;
    assert_eq!(status, 403);
    let (status, _) = owner.post("/app/logout", &[]).await;
    assert_eq!(status, 403, "signing out is a form too");
    assert_eq!(task(&stack, &gym, &id).await["status"], "pending_review", "nothing changed");
    stack.running.stop();
}

#[tokio::test]
async fn another_accounts_task_is_not_found() {
    let stack = Stack::start("app-tenancy").await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    let id = pending_task(&stack, &gym, "m_1", "Lapsed three weeks", "Miss you", "Hi").await;
    let intruder = sign_in(&stack, &rival).await;
    let (status, page) = intruder.get(&format!("/app/tasks/{id}")).await;
    assert_eq!(status, 404);
    assert!(!page.contains("Lapsed three weeks"), "{page}");
    let (status, _) = intruder
        .post(&format!("/app/tasks/{id}/approve"), &[("csrf", &intruder.csrf)])
        .await;
    assert_eq!(status, 404);
    let (_, queue) = intruder.get("/app/review").await;
    assert!(!queue.contains(&id), "only the session's own account is listed");
    assert_eq!(task(&stack, &gym, &id).await["status"], "pending_review");
    let owner = sign_in(&stack, &gym).await;
    assert_eq!(owner.get(&format!("/app/tasks/{id}")).await.0, 200);
    stack.running.stop();
}

/// Given a task in the review queue, when the owner approves it as drafted (the browser
/// sending the textarea's line breaks as CRLF), then it leaves the queue unedited.
#[tokio::test]
async fn approving_from_the_review_queue_moves_the_task_on_as_drafted() {
    let stack = Stack::start("app-approve").await;
    let gym = stack.create_account("manual").await;
    let id = pending_task(&stack, &gym, "m_1", "Lapsed three weeks", "Miss you", "Hi Ana,\nsee you soon").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, queue) = owner.get("/app/review").await;
    assert!(queue.contains(&format!("data-task-id=\"{id}\"")), "{queue}");
    let digest = field(&queue, "draft_digest").unwrap_or_default();

    let (status, to) = owner
        .post(
            &format!("/app/tasks/{id}/approve"),
            &[
                ("csrf", &owner.csrf),
                ("draft_digest", &digest),
                ("subject", "Miss you"),
                ("body", "Hi Ana,\r\nsee you soon"),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/review?done=approved"));
    let approved = task(&stack, &gym, &id).await;
    assert_ne!(approved["status"], "pending_review", "{approved}");
    assert!(openloop_tests::reasons(&approved).contains(&"owner_approved"), "{approved}");
    let (_, queue) = owner.get("/app/review?done=approved").await;
    assert!(!queue.contains(&format!("data-task-id=\"{id}\"")), "it left the queue");
    assert!(queue.contains("Approved: the message goes out"), "{queue}");
    stack.running.stop();
}

#[tokio::test]
async fn an_edit_in_place_is_approved_as_the_owners_version_and_skip_closes() {
    let stack = Stack::start("app-edit").await;
    let gym = stack.create_account("manual").await;
    let edited = pending_task(&stack, &gym, "m_1", "Lapsed", "Miss you", "Hi Ana").await;
    let skipped = pending_task(&stack, &gym, "m_2", "Lapsed", "Miss you", "Hi Bo").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get(&format!("/app/tasks/{edited}")).await;
    let digest = field(&page, "draft_digest").unwrap_or_default();
    let (status, to) = owner
        .post(
            &format!("/app/tasks/{edited}/approve"),
            &[
                ("csrf", &owner.csrf),
                ("draft_digest", &digest),
                ("subject", "We miss you, Ana"),
                ("body", "Hi Ana,\r\nThursday's class has your name on it."),
                ("return_to", "task"),
            ],
        )
        .await;
    assert_eq!(status, 303);
    assert_eq!(to, format!("/app/tasks/{edited}?done=approved_edited"));
    let approved = task(&stack, &gym, &edited).await;
    assert_eq!(
        approved["draft"],
        json!({"subject": "We miss you, Ana", "body": "Hi Ana,\nThursday's class has your name on it."})
    );
    assert!(
        openloop_tests::reasons(&approved).contains(&"owner_approved_with_edits"),
        "{approved}"
    );

    let (status, to) = owner.post(&format!("/app/tasks/{skipped}/skip"), &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, to.as_str()), (303, "/app/review?done=skipped"));
    assert_eq!(task(&stack, &gym, &skipped).await["status"], "cancelled");

    let (status, page) = owner.post(&format!("/app/tasks/{skipped}/skip"), &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 409, "a second skip is a conflict: {page}");
    stack.running.stop();
}

/// Member-written text is hostile: a reply with markup shows as text on the task page, and
/// the page's policy would not run an inline script anyway.
#[tokio::test]
async fn member_text_with_markup_shows_as_text() {
    let stack = Stack::start("app-escape").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let email = stack.member(&gym, "m_x", "Sam", day0).await;
    stack.run().await;
    let id = stack.approved_task(&gym, "churn_risk", "m_x").await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1);
    let hostile = "<script>alert(1)</script> <img src=x onerror=alert(1)> what time is the class?";
    let (status, body) = stack.inbound(&Client::reply_to(&mail[0], "evil-1@mail.example.net", hostile)).await;
    assert_eq!(status, 202, "{body}");

    let owner = sign_in(&stack, &gym).await;
    let http = browser_like();
    let response = http
        .get(format!("{}/app/tasks/{id}", stack.url))
        .header(COOKIE, &owner.cookie)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let policy = response
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        policy.contains("default-src 'none'") && !policy.contains("unsafe-inline"),
        "{policy}"
    );
    let page = response.text().await.unwrap_or_default();
    assert!(
        page.contains("&#60;script&#62;alert(1)&#60;/script&#62; &#60;img src=x onerror=alert(1)&#62;"),
        "the reply as text: {page}"
    );
    assert!(
        !page.contains("<script") && !page.contains("<img"),
        "no markup from the member: {page}"
    );
    stack.running.stop();
}

#[tokio::test]
async fn the_stylesheet_is_served_under_its_hash_and_cached_for_good() {
    let stack = Stack::start("app-assets").await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, page) = owner.get("/app").await;
    let start = page.find("/app/static/app.").unwrap_or_else(|| panic!("{page}"));
    let end = page[start..].find('"').unwrap_or_default() + start;
    let href = &page[start..end];
    let response = reqwest::get(format!("{}{href}", stack.url)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers().get("cache-control").and_then(|v| v.to_str().ok()),
        Some("public, max-age=31536000, immutable")
    );
    let stale = reqwest::get(format!("{}/app/static/app.000000000000.css", stack.url))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stale.status(), StatusCode::NOT_FOUND);
    stack.running.stop();
}

/// A path under `/app` that is no page answers the dashboard's own 404 page (HTML, with the
/// dashboard's headers), whatever the method; the API's paths keep their JSON 404.
#[tokio::test]
async fn an_unknown_dashboard_path_is_the_dashboards_404_page() {
    let stack = Stack::start("app-404").await;
    let http = openloop_aws::tls::client();
    for (method, path) in [
        (reqwest::Method::GET, "/app/nope"),
        (reqwest::Method::GET, "/app/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV/nope"),
        (reqwest::Method::POST, "/app/nope"),
    ] {
        let response = http
            .request(method.clone(), format!("{}{path}", stack.url))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method} {path}");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        assert!(header("content-type").starts_with("text/html"), "{method} {path}");
        assert!(header("content-security-policy").contains("default-src 'none'"), "{method} {path}");
        let page = response.text().await.unwrap_or_default();
        assert!(page.contains("There is no such page."), "{page}");
    }
    let api = http
        .get(format!("{}/api/v1/nope", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(api.status(), StatusCode::NOT_FOUND);
    let body: Value = api.json().await.unwrap_or_default();
    assert_eq!(body["error"]["code"], "not_found", "{body}");
    stack.running.stop();
}

/// Given a task in review, when the owner skips it with a reason (from the review card, or
/// through the API), then the reason is on the task's log; a reason too long is refused and
/// changes nothing.
#[tokio::test]
async fn a_skip_keeps_the_owners_reason_on_the_log() {
    let stack = Stack::start("app-skip-reason").await;
    let gym = stack.create_account("manual").await;
    let from_page = pending_task(&stack, &gym, "m_1", "Lapsed", "Miss you", "Hi Ana").await;
    let from_api = pending_task(&stack, &gym, "m_2", "Lapsed", "Miss you", "Hi Bo").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, queue) = owner.get("/app/review").await;
    assert!(queue.contains(&format!("id=\"r-{from_page}\" name=\"reason\"")), "{queue}");

    let (status, to) = owner
        .post(
            &format!("/app/tasks/{from_page}/skip"),
            &[("csrf", &owner.csrf), ("reason", "She is <b>injured</b>, I'll call")],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/review?done=skipped"));
    let skipped = task(&stack, &gym, &from_page).await;
    assert_eq!(skipped["status"], "cancelled");
    let entry = skipped["log"]
        .as_array()
        .and_then(|log| log.iter().find(|e| e["reason"] == "owner_skipped"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(entry["detail"], "owner's reason: She is <b>injured</b>, I'll call", "{skipped}");
    let (_, page) = owner.get(&format!("/app/tasks/{from_page}")).await;
    assert!(page.contains("She is &#60;b&#62;injured&#60;/b&#62;"), "the reason as text: {page}");

    let too_long = "x".repeat(501);
    let (status, body) = stack
        .post(&format!("/api/v1/tasks/{from_api}/skip"), &gym.token, json!({"reason": too_long}))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_reason")), "{body}");
    assert_eq!(task(&stack, &gym, &from_api).await["status"], "pending_review", "nothing changed");
    let (status, body) = stack
        .post(
            &format!("/api/v1/tasks/{from_api}/skip"),
            &gym.token,
            json!({"reason": "duplicate of a call"}),
        )
        .await;
    assert_eq!((status, body["status"].as_str()), (200, Some("cancelled")), "{body}");
    let logged = task(&stack, &gym, &from_api).await;
    assert!(logged.to_string().contains("owner's reason: duplicate of a call"), "{logged}");
    stack.running.stop();
}

/// Given three tasks ticked on the review queue, one of them already skipped, when the owner
/// presses "Approve selected", then the other two are approved and the queue says which one
/// was not, and why.
#[tokio::test]
async fn approve_selected_approves_each_and_reports_the_ones_that_failed() {
    let stack = Stack::start("app-bulk").await;
    let gym = stack.create_account("manual").await;
    let one = pending_task(&stack, &gym, "m_1", "Lapsed", "Miss you", "Hi Ana").await;
    let two = pending_task(&stack, &gym, "m_2", "Lapsed", "Miss you", "Hi Bo").await;
    let gone = pending_task(&stack, &gym, "m_3", "Lapsed", "Miss you", "Hi Cy").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, queue) = owner.get("/app/review").await;
    assert!(queue.contains("Approve selected"), "{queue}");
    assert!(
        queue.contains(&format!("name=\"task\" value=\"{one}\" form=\"bulk-approve\"")),
        "{queue}"
    );
    let (status, _) = stack.post(&format!("/api/v1/tasks/{gone}/skip"), &gym.token, json!({})).await;
    assert_eq!(status, 200);

    let (status, _) = owner.post("/app/review/approve", &[("task", &one), ("task", &two)]).await;
    assert_eq!(status, 403, "CSRF guards it too");
    assert_eq!(task(&stack, &gym, &one).await["status"], "pending_review");

    let (status, to) = owner
        .post(
            "/app/review/approve",
            &[("csrf", &owner.csrf), ("task", &one), ("task", &two), ("task", &gone)],
        )
        .await;
    assert_eq!(status, 303);
    assert!(to.starts_with("/app/review?done=bulk&approved=2&failed="), "{to}");
    for id in [&one, &two] {
        let approved = task(&stack, &gym, id).await;
        assert!(openloop_tests::reasons(&approved).contains(&"owner_approved"), "{approved}");
    }
    let (_, page) = owner.get(&to).await;
    assert!(page.contains("Approved 2 of 3."), "{page}");
    assert!(
        page.contains(&format!("data-failed-task-id=\"{gone}\"")) && page.contains("it no longer waits for review"),
        "{page}"
    );
    let (_, forged) = owner.get("/app/review?done=bulk&approved=1&failed=%3Cscript%3E~x").await;
    assert!(forged.contains("Approved 1 of 1.") && !forged.contains("<script"), "{forged}");
    stack.running.stop();
}

/// A task the member's question escalated to the owner: the member has been mailed once (at
/// `at`, the clock's time) and answered with `question`. Returns the task's id.
pub(crate) async fn escalated_task(stack: &Stack, gym: &Account, member: &str, name: &str, question: &str, at: Timestamp) -> String {
    let email = stack.member(gym, member, name, at).await;
    stack.run().await;
    let id = stack.approved_task(gym, "churn_risk", member).await;
    stack.run().await;
    let mail = stack.outbox_to(&email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    let (status, body) = stack
        .inbound(&Client::reply_to(&mail[0], &format!("{member}-q@mail.example.net"), question))
        .await;
    assert_eq!(status, 202, "{body}");
    let escalated = task(stack, gym, &id).await;
    assert_eq!(escalated["status"], "escalated", "{escalated}");
    id
}

/// Given two escalated tasks and one more, when the owner opens the escalations page, then
/// each shows why and the member's words; Send guidance resumes one (the agent answers at its
/// next step), Resolve closes one with the chosen outcome, Cancel closes the third.
#[tokio::test]
async fn escalations_show_their_context_and_take_guidance_resolve_and_cancel() {
    let stack = Stack::start("app-escalations").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let guided = escalated_task(&stack, &gym, "m_g", "Gia", "Do you still run the Saturday 9am class?", day0).await;
    let resolved = escalated_task(&stack, &gym, "m_r", "Rio", "Can I bring my <b>kid</b> along?", day0).await;
    let cancelled = escalated_task(&stack, &gym, "m_c", "Cam", "Is the pool open on Sundays?", day0).await;
    let owner = sign_in(&stack, &gym).await;

    let (status, page) = owner.get("/app/escalations").await;
    assert_eq!(status, 200, "{page}");
    for id in [&guided, &resolved, &cancelled] {
        assert!(page.contains(&format!("data-task-id=\"{id}\"")), "{id}: {page}");
    }
    assert!(
        page.contains("Do you still run the Saturday 9am class?"),
        "the member's words: {page}"
    );
    assert!(page.contains("Can I bring my &#60;b&#62;kid&#60;/b&#62; along?"), "as text: {page}");
    assert!(page.contains("member question needs owner"), "the reason: {page}");
    for verb in [">Send guidance</button>", ">Resolve</button>", ">Cancel</button>"] {
        assert!(page.contains(verb), "{verb}");
    }
    assert!(page.contains("<option value=\"retained\">"), "the type's outcomes: {page}");

    let (status, _) = owner.post(&format!("/app/tasks/{guided}/guidance"), &[("text", "Yes")]).await;
    assert_eq!(status, 403, "CSRF");
    let (status, to) = owner
        .post(
            &format!("/app/tasks/{guided}/guidance"),
            &[
                ("csrf", &owner.csrf),
                ("return_to", "escalations"),
                ("text", "Tell her yes, Saturdays at 9 with Coach Dana"),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/escalations?done=guided"));
    let resumed = task(&stack, &gym, &guided).await;
    assert_eq!(resumed["status"], "executing", "{resumed}");
    assert!(openloop_tests::reasons(&resumed).contains(&"owner_provided_guidance"));

    let (status, _) = owner
        .post(
            &format!("/app/tasks/{resolved}/resolve"),
            &[("csrf", &owner.csrf), ("return_to", "escalations"), ("outcome", "not_an_outcome")],
        )
        .await;
    assert_eq!(status, 422, "an outcome outside the type's list");
    let (status, to) = owner
        .post(
            &format!("/app/tasks/{resolved}/resolve"),
            &[
                ("csrf", &owner.csrf),
                ("return_to", "escalations"),
                ("outcome", "engaged_conversation"),
                ("note", "Called him, kids club on Saturdays"),
            ],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, "/app/escalations?done=resolved"));
    let closed = task(&stack, &gym, &resolved).await;
    assert_eq!(closed["outcome"], "engaged_conversation", "{closed}");

    let (status, to) = owner
        .post(
            &format!("/app/tasks/{cancelled}/cancel"),
            &[("csrf", &owner.csrf), ("return_to", "task")],
        )
        .await;
    assert_eq!((status, to), (303, format!("/app/tasks/{cancelled}?done=cancelled")));
    assert_eq!(task(&stack, &gym, &cancelled).await["status"], "cancelled");

    let (_, page) = owner.get("/app/escalations?done=resolved").await;
    assert!(page.contains("Resolved: the task is closed"), "{page}");
    for id in [&guided, &resolved, &cancelled] {
        assert!(!page.contains(&format!("data-task-id=\"{id}\"")), "{id} left the page");
    }
    stack.running.stop();
}

/// Given the settings page, when the owner changes the limits, the time zone, the profile and
/// the instructions for every agent and presses Save, then the API's settings say so (and the
/// profile's other parts are kept); a bad time zone is refused and nothing changes; Pause and
/// Resume pull the kill switch.
#[tokio::test]
async fn settings_save_what_the_page_shows_and_the_kill_switch_pauses_and_resumes() {
    let stack = Stack::start("app-settings").await;
    let gym = stack.create_account("manual").await;
    let profile = json!({"profile": {"display_name": "Iron Temple", "class_types": ["HIIT"]}});
    let (status, _) = stack
        .call(reqwest::Method::PUT, "/api/v1/settings", Some(&gym.token), Some(profile))
        .await;
    assert_eq!(status, 200);
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/settings").await;
    assert_eq!(status, 200, "{page}");
    for text in [
        "Iron Temple",
        "America/New_York",
        ">Save</button>",
        ">Pause</button>",
        "not connected",
        "Autopilot starts with a ramp",
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }
    assert!(!page.contains(&gym.token), "no secret in a page");

    let form = |tz: &'static str| {
        vec![
            ("csrf", owner.csrf.clone()),
            ("execution_mode", "manual".to_owned()),
            ("daily_send_limit", "25".to_owned()),
            ("member_weekly_limit", "2".to_owned()),
            ("send_window_start", "9".to_owned()),
            ("send_window_end", "19".to_owned()),
            ("timezone", tz.to_owned()),
            ("display_name", "Iron Temple <Downtown>".to_owned()),
            ("sign_off", "Coach Mike".to_owned()),
            ("never_mention", "prices\r\nthe old owner\r\n".to_owned()),
            ("agent_additions", "Always offer a free class.".to_owned()),
            ("owner_notification_channel", "dashboard_only".to_owned()),
            ("owner_email", "mike@example.com".to_owned()),
        ]
    };
    let bad: Vec<(&str, String)> = form("Mars/Olympus");
    let bad: Vec<(&str, &str)> = bad.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _) = owner.post("/app/settings", &bad).await;
    assert_eq!(status, 422, "an unknown time zone");
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(settings["daily_send_limit"], 15, "nothing changed: {settings}");

    let good: Vec<(&str, String)> = form("Europe/Madrid");
    let good: Vec<(&str, &str)> = good.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, to) = owner.post("/app/settings", &good).await;
    assert_eq!((status, to.as_str()), (303, "/app/settings?done=saved"));
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        (
            &settings["daily_send_limit"],
            &settings["member_weekly_limit"],
            &settings["send_window_start"],
            &settings["send_window_end"],
            &settings["timezone"],
        ),
        (&json!(25), &json!(2), &json!(9), &json!(19), &json!("Europe/Madrid")),
        "{settings}"
    );
    assert_eq!(settings["profile"]["display_name"], "Iron Temple <Downtown>");
    assert_eq!(settings["profile"]["class_types"], json!(["HIIT"]), "kept: {settings}");
    assert_eq!(settings["profile"]["never_mention"], json!(["prices", "the old owner"]));
    assert_eq!(settings["owner_notification_channel"], "dashboard_only");
    assert_eq!(settings["owner_email"], "mike@example.com");
    assert!(settings.to_string().contains("Always offer a free class."), "{settings}");
    let (_, page) = owner.get("/app/settings?done=saved").await;
    assert!(page.contains("Iron Temple &#60;Downtown&#62;") && page.contains("Saved."), "{page}");

    let (status, _) = owner.post("/app/settings/pause", &[]).await;
    assert_eq!(status, 403, "CSRF");
    let (status, to) = owner.post("/app/settings/pause", &[("csrf", &owner.csrf)]).await;
    assert_eq!((status, to.as_str()), (303, "/app/settings?done=paused"));
    let (_, state) = stack.get("/api/v1/pause", &gym.token).await;
    assert_eq!(state["paused"], true);
    let (_, page) = owner.get("/app/settings").await;
    assert!(page.contains(">Resume</button>"), "{page}");
    let (status, _) = owner.post("/app/settings/resume", &[("csrf", &owner.csrf)]).await;
    assert_eq!(status, 303);
    let (_, state) = stack.get("/api/v1/pause", &gym.token).await;
    assert_eq!(state["paused"], false);
    stack.running.stop();
}

/// The members list pages through the account's members, 50 at a time.
#[tokio::test]
async fn the_members_list_pages() {
    let stack = Stack::start("app-members").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    for n in 0..52 {
        stack.member(&gym, &format!("m_{n:02}"), &format!("<i>P{n}</i>"), day0).await;
    }
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/members").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page.matches("data-member-id=").count(), 50, "{page}");
    assert!(page.contains("&#60;i&#62;P0&#60;/i&#62;") && !page.contains("<i>"), "{page}");
    let start = page.find("/app/members?cursor=").unwrap_or_else(|| panic!("a next page: {page}"));
    let end = page[start..].find('"').unwrap_or_default() + start;
    let next = page[start..end].replace("&#38;", "&");
    let (_, rest) = owner.get(&next).await;
    assert_eq!(rest.matches("data-member-id=").count(), 2, "{rest}");
    stack.running.stop();
}

/// Given a member's question that escalated a task, the notifications page shows the notice
/// (its text as text) with a link to the task; another account's page shows none of it.
#[tokio::test]
async fn the_notifications_page_shows_the_owners_notices() {
    let stack = Stack::start("app-notices").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let rival = stack.create_account("manual").await;
    let id = escalated_task(&stack, &gym, "m_n", "Noa", "<script>alert(1)</script> is there parking?", day0).await;
    let (_, feed) = stack.get("/api/v1/notifications", &gym.token).await;
    assert_eq!(feed["notifications"][0]["kind"], "escalation", "{feed}");
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/notifications").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&format!("data-task-id=\"{id}\"")), "{page}");
    assert!(
        page.contains("needs you") && page.contains(&format!("href=\"/app/tasks/{id}\"")),
        "{page}"
    );
    assert!(!page.contains("<script"), "{page}");
    let intruder = sign_in(&stack, &rival).await;
    let (_, theirs) = intruder.get("/app/notifications").await;
    assert!(!theirs.contains(&id) && theirs.contains("Nothing to tell you yet"), "{theirs}");
    stack.running.stop();
}

/// Given a message sent and a reply that escalated, once the hourly fold has counted them,
/// the overview draws them as inline SVG bars (no script, no inline style) with the numbers
/// as a table too.
#[tokio::test]
async fn the_overview_charts_the_weeks_from_the_daily_metrics() {
    let stack = Stack::start("app-charts").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, before) = owner.get("/app").await;
    assert!(before.contains("Nothing counted yet"), "{before}");
    escalated_task(&stack, &gym, "m_c", "Cy", "Is the pool open on Sundays?", day0).await;
    stack.set_clock(&(day0 + jiff::SignedDuration::from_hours(2)).to_string()).await;
    stack.run().await;
    let (_, metrics) = stack.get("/api/v1/metrics", &gym.token).await;
    // The first touch and the holding reply to the question.
    assert_eq!(metrics["totals"]["messages_sent"], 2, "{metrics}");

    let (status, page) = owner.get("/app").await;
    assert_eq!(status, 200);
    for chart in [
        "data-chart=\"outcomes\"",
        "data-chart=\"messages\"",
        "<svg viewBox=\"0 0 600 180\" role=\"img\"",
    ] {
        assert!(page.contains(chart), "{chart}: {page}");
    }
    assert!(page.contains(": 2 messages sent</title>"), "{page}");
    assert!(page.contains(": 1 replies</title>"), "{page}");
    assert!(page.contains(": 1 escalated</title>"), "{page}");
    assert!(!page.contains("style=") && !page.contains("<script"), "nothing the CSP would block");
    stack.running.stop();
}

/// The number a hero of the overview shows above its label.
fn hero(page: &str, label: &str) -> String {
    let end = page
        .find(&format!("<span class=\"label\">{label}</span>"))
        .unwrap_or_else(|| panic!("no hero {label}"));
    let value = page[..end].rfind("<span class=\"value\">").unwrap_or_else(|| panic!("no value")) + "<span class=\"value\">".len();
    page[value..end].split("</span>").next().unwrap_or_default().to_owned()
}

/// Given two members won back in one month (a check-in, a payment: $150 each) and one in
/// the next, the overview's revenue chart has one bar a month with each month's sum, the
/// heroes say the current month's numbers — the same as `GET /api/v1/scorecard` — and a
/// month with nothing draws no bar.
#[tokio::test]
async fn the_overview_charts_revenue_retained_per_month() {
    let stack = Stack::start("app-revenue").await;
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let first = today
        .first_of_month()
        .checked_add(jiff::Span::new().months(1))
        .unwrap_or_else(|e| panic!("{e}"));
    // 09:00 at the gym: inside a first touch's morning hours.
    let at = |date: jiff::civil::Date| {
        date.at(9, 0, 0, 0)
            .in_tz("America/New_York")
            .unwrap_or_else(|e| panic!("{e}"))
            .timestamp()
    };
    let day0 = at(first);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    for m in ["m_rv_a", "m_rv_b", "m_rv_c"] {
        stack.member(&gym, m, "Alex", day0).await;
    }
    stack.run().await;
    let won_back = |member: &'static str, task_type: &'static str| {
        let stack = &stack;
        let gym = &gym;
        async move {
            let (status, created) = stack
                .post(
                    "/api/v1/tasks",
                    &gym.token,
                    json!({"task_type": task_type, "member_id": member, "goal": "Bring them back", "confidence": 80}),
                )
                .await;
            assert_eq!(status, 201, "{created}");
            let id = created["id"].as_str().unwrap_or_default().to_owned();
            let (status, approved) = stack.post(&format!("/api/v1/tasks/{id}/approve"), &gym.token, json!({})).await;
            assert_eq!(status, 200, "{approved}");
            id
        }
    };
    let signal = |id: &'static str, body: Value| {
        let stack = &stack;
        let gym = &gym;
        async move {
            let (status, reply) = stack.webhook(gym, id, body).await;
            assert_eq!(status, 202, "{reply}");
        }
    };
    won_back("m_rv_a", "churn_risk").await;
    won_back("m_rv_b", "payment_recovery").await;
    stack.run().await;
    let next = day0 + jiff::SignedDuration::from_hours(24);
    stack.set_clock(&next.to_string()).await;
    stack.run().await;
    let t = next.to_string();
    signal(
        "evt_rv_a",
        json!({"type": "checkin.created", "timestamp": t, "data": {"member_id": "m_rv_a", "checked_in_at": t, "class_name": "WOD"}}),
    )
    .await;
    signal("evt_rv_b", json!({"type": "payment.succeeded", "timestamp": t, "data": {"member_id": "m_rv_b", "amount": 150, "currency": "USD", "paid_at": t}})).await;
    stack.run().await;

    // The next month: one more member back.
    let later = at(first
        .checked_add(jiff::Span::new().months(1))
        .unwrap_or_else(|e| panic!("{e}"))
        .saturating_add(jiff::Span::new().days(2)));
    stack.set_clock(&later.to_string()).await;
    stack.run().await;
    won_back("m_rv_c", "churn_risk").await;
    stack.run().await;
    let back = later + jiff::SignedDuration::from_hours(24);
    stack.set_clock(&back.to_string()).await;
    stack.run().await;
    let t = back.to_string();
    signal(
        "evt_rv_c",
        json!({"type": "checkin.created", "timestamp": t, "data": {"member_id": "m_rv_c", "checked_in_at": t, "class_name": "WOD"}}),
    )
    .await;
    stack.run().await;

    let (_, card) = stack.get("/api/v1/scorecard", &gym.token).await;
    assert_eq!(
        (card["members_retained"].as_u64(), card["revenue_retained"].as_f64()),
        (Some(1), Some(150.0)),
        "{card}"
    );
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app").await;
    assert_eq!(status, 200);
    assert_eq!(hero(&page, "revenue retained"), "$150");
    assert_eq!(hero(&page, "members retained"), "1");
    assert_eq!(hero(&page, "conversations open"), card["conversations_open"].to_string());
    assert_eq!(hero(&page, "need your attention"), card["needs_attention"].to_string());
    assert!(page.contains("data-chart=\"revenue\""), "{page}");
    let month = |date: jiff::civil::Date| date.strftime("%b %Y").to_string();
    let (first_month, second_month) = (
        month(first),
        month(first.checked_add(jiff::Span::new().months(1)).unwrap_or_else(|e| panic!("{e}"))),
    );
    assert!(
        page.contains(&format!("<title>{first_month}: $300 revenue retained</title>")),
        "{page}"
    );
    assert!(
        page.contains(&format!("<title>{second_month}: $150 revenue retained</title>")),
        "{page}"
    );
    assert_eq!(
        page.matches("revenue retained</title>").count(),
        2,
        "no bar for the months without revenue"
    );
    assert!(page.contains("Best month: $300."), "{page}");
    assert!(
        page.contains(&format!("<th scope=\"row\">{first_month}</th><td>$300</td>")),
        "the numbers as a table too"
    );
    stack.running.stop();
}

/// `GET /app/login`, then "Email me a sign-in link" for `email`: the response's status and page.
pub(crate) async fn ask_for_link(stack: &Stack, email: &str) -> (StatusCode, String) {
    ask_for_link_from(stack, email, None).await
}

/// [`ask_for_link`] from a network address (as API Gateway appends it to `X-Forwarded-For`).
async fn ask_for_link_from(stack: &Stack, email: &str, from: Option<&str>) -> (StatusCode, String) {
    let answer = ask_for_link_unrun(stack, email, from).await;
    // The page answers before anything is looked up; the link is mailed from the queue.
    stack.run().await;
    answer
}

/// [`ask_for_link`] without draining the queue that mails the link.
pub(crate) async fn ask_for_link_without_run(stack: &Stack, email: &str) -> (StatusCode, String) {
    ask_for_link_unrun(stack, email, None).await
}

async fn ask_for_link_unrun(stack: &Stack, email: &str, from: Option<&str>) -> (StatusCode, String) {
    let http = browser_like();
    let form = http
        .get(format!("{}/app/login", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let login_cookie = set_cookie(&form, "ol_login").unwrap_or_else(|| panic!("the form sets its login cookie"));
    let page = form.text().await.unwrap_or_default();
    assert!(page.contains("Email me a sign-in link"), "{page}");
    let csrf = field(&page, "csrf").unwrap_or_else(|| panic!("{page}"));
    let response = http
        .post(format!("{}/app/login/link", stack.url))
        .header(COOKIE, cookie_pair(&login_cookie))
        .header(CONTENT_TYPE, FORM)
        .header("x-forwarded-for", from.unwrap_or("192.0.2.1"))
        .body(encode(&[("email", email), ("csrf", csrf.as_str())]))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = response.status();
    (status, response.text().await.unwrap_or_default())
}

/// The path and query of the sign-in link in a mail's text.
fn link_in(mail: &Value) -> String {
    let text = mail["text"].as_str().unwrap_or_default();
    let start = text.find("/app/login/link?token=").unwrap_or_else(|| panic!("a link in {text}"));
    text[start..].split_whitespace().next().unwrap_or_default().to_owned()
}

/// Given an owner address in the settings, "Email me a sign-in link" mails a link that signs
/// in (the session cookie of the token sign-in) once: followed again, or after 15 minutes,
/// it is refused. An unknown address gets the same page and no mail; a sixth link within the
/// hour is not sent.
#[tokio::test]
async fn a_mailed_sign_in_link_signs_in_once_within_15_minutes() {
    let stack = Stack::start("app-link").await;
    let day0 = morning(1);
    stack.set_clock(&day0.to_string()).await;
    let gym = stack.create_account("manual").await;
    let owner = stack.give_owner_address(&gym).await;

    // Asked for with the address in capitals: the same owner.
    let (status, asked) = ask_for_link(&stack, &owner.to_ascii_uppercase()).await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert!(asked.contains("a sign-in link is on its way"), "{asked}");
    let mail = stack.outbox_to(&owner).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    let link = link_in(&mail[0]);
    assert!(
        !mail[0]["text"].as_str().unwrap_or_default().contains(&gym.token),
        "no API token in the mail"
    );

    let http = browser_like();
    // Following the link shows a "Sign in" button and uses nothing (a mail scanner's GET);
    // the button's POST signs in.
    let follow = |path: String| {
        let http = http.clone();
        let base = stack.url.clone();
        async move {
            let page = http.get(format!("{base}{path}")).send().await.unwrap_or_else(|e| panic!("{e}"));
            let login_cookie = set_cookie(&page, "ol_login").unwrap_or_else(|| panic!("the page sets its login cookie"));
            let html = page.text().await.unwrap_or_default();
            let (Some(csrf), Some(token)) = (field(&html, "csrf"), field(&html, "token")) else {
                return None;
            };
            assert!(html.contains(">Sign in</button>"), "{html}");
            assert!(
                html.contains("This link signs in to <strong>"),
                "the page names the account: {html}"
            );
            Some(
                http.post(format!("{base}/app/login/link/use"))
                    .header(COOKIE, cookie_pair(&login_cookie))
                    .header(CONTENT_TYPE, FORM)
                    .body(encode(&[("token", token.as_str()), ("csrf", csrf.as_str())]))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{e}")),
            )
        }
    };
    for _ in 0..2 {
        let scanned = http
            .get(format!("{}{link}", stack.url))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scanned.status(), StatusCode::OK, "opening the link uses nothing");
        assert!(set_cookie(&scanned, "ol_session").is_none());
    }
    let signed = follow(link.clone()).await.unwrap_or_else(|| panic!("the link's page has its form"));
    assert_eq!(signed.status(), StatusCode::SEE_OTHER);
    assert_eq!(signed.headers().get(LOCATION).and_then(|v| v.to_str().ok()), Some("/app"));
    let cookie = set_cookie(&signed, "ol_session").unwrap_or_else(|| panic!("a session cookie"));
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/app", "Max-Age=43200"] {
        assert!(cookie.split("; ").any(|a| a == flag), "{flag} in {cookie}");
    }
    let overview = http
        .get(format!("{}/app", stack.url))
        .header(COOKIE, cookie_pair(&cookie))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(overview.status(), StatusCode::OK, "the link's session is the account's");

    // A used link's page says so at once: no form, no account named.
    let again = http
        .get(format!("{}{link}", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED, "a link signs in once");
    assert!(set_cookie(&again, "ol_session").is_none());
    let said = again.text().await.unwrap_or_default();
    assert!(
        said.contains("expired or was already used") && !said.contains("This link signs in to"),
        "{said}"
    );

    // A second link, followed 16 minutes later (the virtual clock): refused.
    ask_for_link(&stack, &owner).await;
    let mail = stack.outbox_to(&owner).await;
    assert_eq!(mail.len(), 2);
    stack.set_clock(&(day0 + jiff::SignedDuration::from_mins(16)).to_string()).await;
    for (path, why) in [
        (link_in(&mail[1]), "expired"),
        ("/app/login/link?token=made-up".to_owned(), "made up"),
    ] {
        assert!(follow(path.clone()).await.is_none(), "{why}: no form to sign in with");
        let page = http
            .get(format!("{}{path}", stack.url))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.status(), StatusCode::UNAUTHORIZED, "{why}");
    }
    let empty = http
        .get(format!("{}/app/login/link?token=", stack.url))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(empty.status(), StatusCode::UNAUTHORIZED, "no token: refused at once");

    // An unknown address: the same words, and no mail.
    let stranger = format!("nobody-{}@example.com", gym.id.to_ascii_lowercase());
    let (status, page) = ask_for_link(&stack, &stranger).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("a sign-in link is on its way"), "{page}");
    assert!(stack.outbox_to(&stranger).await.is_empty());

    // Three links an hour from one requester: the third goes out, the fourth to sixth do not.
    for _ in 0..4 {
        let (status, page) = ask_for_link(&stack, &owner).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("a sign-in link is on its way"));
    }
    assert_eq!(stack.outbox_to(&owner).await.len(), 3);
    // Strangers asking for the owner's address from ten other addresses use up the account's
    // hour (20): a new one's second ask mails nothing…
    for i in 0..10 {
        for _ in 0..3 {
            ask_for_link_from(&stack, &owner, Some(&format!("198.51.100.{i}"))).await;
        }
    }
    let before = stack.outbox_to(&owner).await.len();
    for _ in 0..2 {
        ask_for_link_from(&stack, &owner, Some("198.51.100.99")).await;
    }
    assert_eq!(stack.outbox_to(&owner).await.len(), before + 1, "only a requester's first");
    // …and the owner, asking from their own address, still gets a link.
    ask_for_link_from(&stack, &owner, Some("10.0.0.1, 203.0.113.7")).await;
    assert_eq!(stack.outbox_to(&owner).await.len(), before + 2, "never locked out");
    stack.running.stop();
}

/// The review queue is in the order the owner should work it: the failing payment first
/// (whenever it arrived), then the member worth the most a month, then the oldest; the brief
/// names them in the same order.
#[tokio::test]
async fn the_review_queue_puts_the_most_urgent_then_the_most_valuable_first() {
    let stack = Stack::start("app-review-order").await;
    let gym = stack.create_account("manual").await;
    let at = stack.now().await.to_string();
    for (id, first, value) in [("m_low", "Ulla", 90), ("m_high", "Hana", 320), ("m_mid", "Ivo", 150)] {
        let event = json!({"type": "member.created", "timestamp": at, "data": {"member_id": id, "first_name": first,
            "email": format!("{id}@example.com"), "status": "active", "joined_at": "2026-06-01T00:00:00Z", "monthly_value": value}});
        let (status, body) = stack.webhook(&gym, &format!("evt_{id}"), event).await;
        assert_eq!(status, 202, "{body}");
    }
    stack.run().await;
    for member in ["m_low", "m_high", "m_mid"] {
        pending_task(&stack, &gym, member, "Bring them back", "Hello", "Hi,\nHow are you?").await;
    }
    stack.sarahs_payment_failed(&gym, &at).await;
    stack.run().await;
    let owner = sign_in(&stack, &gym).await;
    let (status, page) = owner.get("/app/review").await;
    assert_eq!(status, 200, "{page}");
    let at_of = |name: &str| {
        page.find(&format!("\">{name} <span"))
            .unwrap_or_else(|| panic!("{name} on the queue: {page}"))
    };
    let order = [at_of("Sarah Tester"), at_of("Hana"), at_of("Ivo"), at_of("Ulla")];
    // The payment is critical, Hana's $320 a month high (rules/priority.toml), Ivo's $150 and
    // Ulla's $90 of the type's own priority: Ivo first, though Ulla's task is older.
    assert!(order.windows(2).all(|w| w[0] < w[1]), "payment, then $320, $150, $90: {order:?}");
}

/// Given the owner rewrote a task's first message on the review page, when its follow-up
/// comes back to them, then its card says it is waiting since then (not since the task was
/// opened), and approving it with the first message's words again is refused on the page, in
/// words, the task still waiting: the member never gets one message twice.
#[tokio::test]
async fn a_held_follow_up_shows_when_it_came_and_refuses_the_first_message_again() {
    let stack = Stack::start("app-held-follow-up").await;
    stack.set_clock(&morning(1).to_string()).await;
    let gym = stack.create_account("manual").await;
    let ana = stack.member(&gym, "m_1", "Ana", morning(1)).await;
    let id = pending_task(&stack, &gym, "m_1", "Lapsed three weeks", "Miss you", "Hi Ana,\nsee you soon").await;
    let owner = sign_in(&stack, &gym).await;
    let (_, queue) = owner.get("/app/review").await;
    let digest = field(&queue, "draft_digest").unwrap_or_default();
    let own = "Hi Ana,\r\n\r\nThe Saturday team workout starts this week. Fancy it?\r\n\r\nCoach Mike";
    let (status, _) = approve_with(&owner, &id, own, &digest).await;
    assert_eq!(status, 303, "the owner's own first message");
    stack.run().await;
    let mut held = task(&stack, &gym, &id).await;
    for _ in 0..8 {
        if held["status"] == "pending_review" {
            break;
        }
        stack.run_when_due(&gym, &id).await;
        held = task(&stack, &gym, &id).await;
    }
    assert_eq!(held["status"], "pending_review", "the follow-up waits for the owner: {held}");
    let tz = jiff::tz::TimeZone::get("America/New_York").unwrap_or_else(|e| panic!("{e}"));
    let came = openloop_core::task::reason_words::when(stack.now().await, &tz);
    let opened = openloop_core::task::reason_words::when(morning(1), &tz);
    let (_, queue) = owner.get("/app/review").await;
    assert!(queue.contains(&format!("waiting since {came}")), "{came}: {queue}");
    assert!(!queue.contains(&format!("waiting since {opened}")), "not since it was opened");

    let digest = field(&queue, "draft_digest").unwrap_or_default();
    let (status, page) = approve_with(&owner, &id, own, &digest).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("word for word"), "the owner is told why, in words: {page}");
    assert_eq!(task(&stack, &gym, &id).await["status"], "pending_review", "nothing changed");
    assert_eq!(stack.outbox_to(&ana).await.len(), 1, "Ana got the owner's message once");
    stack.running.stop();
}

/// The review card's approve form, sent with `body` as the owner's words.
async fn approve_with(owner: &Owner, id: &str, body: &str, digest: &str) -> (u16, String) {
    let csrf = owner.csrf.clone();
    owner
        .post_page(
            &format!("/app/tasks/{id}/approve"),
            &[("csrf", &csrf), ("draft_digest", digest), ("subject", "Saturday"), ("body", body)],
        )
        .await
}
