//! `make pictures`: the README's pictures, made from the current dashboard on the demo gym.
//! Plays `make demo`'s month (`openloop_tests::demo`) on a stack — the one `OPENLOOP_URL`
//! names, else an in-memory one started here and stopped at the end — signs in to the
//! dashboard as the demo gym's owner in headless Chromium (`openloop_tests::browser`), and
//! writes, into `OPENLOOP_PICTURES_DIR` (default `docs/`):
//!
//! - `dashboard-overview.png`: the overview at a desktop's width — the month's numbers, the
//!   charts, the activity feed;
//! - `dashboard-review.png`: the review queue, with what the last morning left for the owner;
//! - `dashboard-phone.png`: the owner's morning (`/app/today`) at a phone's width;
//! - `pictures.sha256`: what the pages were made from (`openloop_tests::pictures`), which a
//!   test holds the current templates to.

use std::path::{Path, PathBuf};

use openloop_tests::browser::Browser;
use openloop_tests::{Client, Stack};

/// (file, page, width, at most this tall) in CSS pixels.
const PICTURES: [(&str, &str, u32, u32); 3] = [
    ("dashboard-overview.png", "/app", 1200, 1500),
    ("dashboard-review.png", "/app/review", 1200, 1300),
    ("dashboard-phone.png", "/app/today", 390, 844),
];

#[tokio::main]
async fn main() {
    if let Err(e) = make().await {
        eprintln!("pictures: {e}");
        std::process::exit(1);
    }
}

async fn make() -> Result<(), String> {
    let dir = PathBuf::from(std::env::var("OPENLOOP_PICTURES_DIR").unwrap_or_else(|_| "docs".into()));
    let given = std::env::var("OPENLOOP_URL").ok().filter(|u| !u.trim().is_empty());
    // Kept until the pictures are taken: dropping it stops the stack it started.
    let mut started = None;
    let client = match given {
        Some(url) => Client {
            url: url.trim().trim_end_matches('/').to_owned(),
            http: openloop_aws::tls::client(),
            admin_token: std::env::var("OPENLOOP_ADMIN_TOKEN").unwrap_or_else(|_| "local-admin-token".into()),
            inbound_token: std::env::var("OPENLOOP_INBOUND_TOKEN").unwrap_or_else(|_| "local-inbound-token".into()),
        },
        None => {
            let stack = Stack::start_as_make_run("pictures").await;
            let client = Client {
                url: stack.client.url.clone(),
                http: stack.client.http.clone(),
                admin_token: stack.client.admin_token.clone(),
                inbound_token: stack.client.inbound_token.clone(),
            };
            started = Some(stack);
            client
        }
    };
    if client.http.get(format!("{}/health", client.url)).send().await.is_err() {
        return Err(format!("nothing answers at {}", client.url));
    }
    // The month played is one calendar month, from its 1st: the overview's "this month" then
    // holds all of it. The demo starts the day after the clock's today, so the clock goes to
    // the last day of this month first (forward only; on that day already, it stays).
    let today = client.now().await.to_zoned(jiff::tz::TimeZone::UTC).date();
    let eve = today.last_of_month();
    let first = eve.tomorrow().map_err(|e| e.to_string())?;
    let noon = eve
        .at(12, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(|e| e.to_string())?
        .timestamp();
    let (status, body) = client
        .call(
            reqwest::Method::POST,
            "/_local/clock",
            None,
            Some(serde_json::json!({"now": noon.to_string()})),
        )
        .await;
    if status != 200 && body["error"]["code"] != "clock_backwards" {
        return Err(format!("the stack refused to move its clock to {noon}: {status} {body}"));
    }
    let days = i64::from(first.days_in_month()).min(30);
    println!("Playing the demo gym's {} at {} …", first.strftime("%B %Y"), client.url);
    let played = openloop_tests::demo::play(&client, days, &mut |_| {}).await?;
    println!("{}: {} messages sent", played.name, played.sent.len());

    let browser = Browser::start(PICTURES[0].2, PICTURES[0].3).await?;
    browser.goto(&format!("{}/app/login", client.url)).await?;
    let token = browser.find("input[name=token]").await?;
    browser.type_text(&token, &played.gym.token).await?;
    let sign_in = browser.find("button[type=submit]").await?;
    browser.click(&sign_in).await?;
    browser
        .wait_for("the overview after signing in", || async {
            Ok(browser.url().await?.ends_with("/app"))
        })
        .await?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (file, page, width, tallest) in PICTURES {
        browser.resize(width, tallest).await?;
        browser.goto(&format!("{}{page}", client.url)).await?;
        browser.find("main").await?;
        // As tall as the page, up to `tallest`: no empty band below a short page.
        let height = browser
            .execute("return document.documentElement.scrollHeight;", vec![])
            .await?
            .as_u64()
            .map_or(tallest, |h| u32::try_from(h).unwrap_or(tallest).min(tallest));
        browser.resize(width, height).await?;
        // No scroll bar in a picture.
        browser
            .execute("document.documentElement.style.overflow = 'hidden';", vec![])
            .await?;
        let png = browser.screenshot().await?;
        let path = Path::new(&dir).join(file);
        std::fs::write(&path, png).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {} ({page} at {width} px wide)", path.display());
    }
    drop(browser);
    drop(started);
    // What they were taken from, so a test can tell when the pages have changed since.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("the repository")?;
    let fingerprint = openloop_tests::pictures::fingerprint(root).map_err(|e| format!("the pages' files: {e}"))?;
    let path = Path::new(&dir).join("pictures.sha256");
    std::fs::write(&path, openloop_tests::pictures::record(&fingerprint)).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}
