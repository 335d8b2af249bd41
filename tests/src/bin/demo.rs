//! `make demo`: a month for a new demo gym, played through a running stack (`make run`) over
//! the API and the local endpoints only (`openloop_tests::demo`) — every kind of member, the
//! owner's mornings, mail and texts, replies of each kind — told day by day, then the
//! numbers, each month's scorecard, and how to sign in to the gym.
//!
//! Talks to `OPENLOOP_URL`, else `http://{OPENLOOP_HTTP_ADDR}`, else where a running `make run`
//! of this checkout noted it serves (`target/openloop-local.url`: whatever port it took), else
//! `http://127.0.0.1:8787`, with `OPENLOOP_ADMIN_TOKEN`. `--days N` (or `OPENLOOP_DEMO_DAYS`)
//! plays N days instead of 30 (`make test` plays a short one).

use openloop_tests::Client;

#[tokio::main]
async fn main() {
    let days = match demo_days(std::env::args().skip(1).collect(), std::env::var("OPENLOOP_DEMO_DAYS").ok()) {
        Ok(days) => days,
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(2);
        }
    };
    let client = Client {
        url: openloop_tests::stack_url(std::env::var("OPENLOOP_URL").ok(), std::env::var("OPENLOOP_HTTP_ADDR").ok()),
        http: openloop_aws::tls::client(),
        admin_token: std::env::var("OPENLOOP_ADMIN_TOKEN").unwrap_or_else(|_| "local-admin-token".into()),
        inbound_token: std::env::var("OPENLOOP_INBOUND_TOKEN").unwrap_or_else(|_| "local-inbound-token".into()),
    };
    if client.http.get(format!("{}/health", client.url)).send().await.is_err() {
        eprintln!(
            "nothing answers at {}: start the stack with `make run` first, or set OPENLOOP_URL to where it serves",
            client.url
        );
        std::process::exit(1);
    }
    let played = match openloop_tests::demo::play(&client, days, &mut |line| println!("{line}")).await {
        Ok(played) => played,
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(1);
        }
    };
    println!();
    println!(
        "After {days} days: {} messages sent ({} mails, {} texts); tasks by type: {:?}; by status: {:?}; outcomes: {:?}",
        played.sent.len(),
        played.sent.len() - played.texts,
        played.texts,
        played.by_type,
        played.by_status,
        played.by_outcome
    );
    // One per month played: a month begun late in November ends in December, and each
    // month's scorecard counts its own sends.
    for (_, card) in &played.scorecards {
        println!("Scorecard: {card}");
    }
    println!();
    println!("{}", sign_in_hint(&client.url, &played.name, &played.gym.token));
    println!(
        "Then look at: the overview (the month's numbers and the activity feed), Review (what waits for {}'s owner), To-dos, Conversations (Dana's texts, Maria's promise), a task's page (every decision with its reason)",
        played.name
    );
}

/// How to see the demo gym on the dashboard: its sign-in page and the token it takes.
fn sign_in_hint(url: &str, gym: &str, token: &str) -> String {
    format!("See {gym} on the dashboard: open {url}/app/login and sign in with its token {token}")
}

/// How many days to play: `--days N`, else `OPENLOOP_DEMO_DAYS`, else 30.
fn demo_days(args: Vec<String>, env: Option<String>) -> Result<i64, String> {
    let value = match args.as_slice() {
        [] => env,
        [flag, n] if flag == "--days" => Some(n.clone()),
        _ => return Err("usage: demo [--days N]".into()),
    };
    match value {
        None => Ok(30),
        Some(n) => match n.trim().parse::<i64>() {
            Ok(days) if (1..=365).contains(&days) => Ok(days),
            _ => Err(format!("the number of days must be 1 to 365, not {n:?}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{demo_days, sign_in_hint};

    #[test]
    fn the_demo_says_how_to_sign_in_to_its_gym() {
        let hint = sign_in_hint("http://127.0.0.1:8787", "Iron Temple", "olk_abc");
        assert!(hint.contains("Iron Temple"), "{hint}");
        assert!(hint.contains("http://127.0.0.1:8787/app/login"), "{hint}");
        assert!(hint.ends_with("olk_abc"), "{hint}");
    }

    #[test]
    fn the_demo_plays_thirty_days_unless_told() {
        assert_eq!(demo_days(vec![], None), Ok(30));
        assert_eq!(demo_days(vec![], Some("3".into())), Ok(3));
        assert_eq!(demo_days(vec!["--days".into(), "2".into()], Some("3".into())), Ok(2));
        assert!(demo_days(vec!["--days".into(), "0".into()], None).is_err());
        assert!(demo_days(vec!["--days".into(), "x".into()], None).is_err());
        assert!(demo_days(vec!["--weeks".into(), "2".into()], None).is_err());
    }
}
