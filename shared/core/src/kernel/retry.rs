//! Calling an outside service with a few retries: the one policy the PushPress connector
//! (`openloop-pushpress`) and the model agents (`openloop-llm`) share.
//!
//! Transient failures (429, 5xx, timeouts, refused connections) are retried with exponential
//! backoff, at most [`RetryPolicy::max_attempts`] attempts in all. A `retry-after` the service
//! sends is honoured when it is short (never less than the backoff), and ends the call when it
//! is longer than [`RetryPolicy::max_retry_after`]: a Lambda should not sleep for a minute, and
//! the callers have a better answer (defer the touch, escalate). Anything else fails at once,
//! since retrying cannot help.
//!
//! The core reads no clock and has no runtime, so the caller hands in how to sleep (in
//! production `tokio::time::sleep`) and what to log before a retry; the HTTP details (which
//! `reqwest` errors count as transient) stay in the adapters, which describe each attempt as an
//! [`Attempt`].

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

/// How hard to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (0 is read as 1).
    pub max_attempts: u32,
    /// The wait before the second attempt; doubled before each later one.
    pub backoff: Duration,
    /// The longest `retry-after` waited for.
    pub max_retry_after: Duration,
}

/// How one attempt failed.
#[derive(Debug)]
pub enum Attempt<E> {
    /// Worth another try: rate limited, a server error, a timeout, no connection.
    Transient { why: String, retry_after: Option<Duration> },
    /// Retrying cannot help.
    Fatal(E),
}

impl<E> Attempt<E> {
    /// A request that got no answer: worth another try when it timed out or `retryable` (it
    /// never connected, or was cut off); otherwise `fatal` of the reason.
    pub fn no_answer(timed_out: bool, retryable: bool, error: impl Display, fatal: impl FnOnce(String) -> E) -> Self {
        let why = if timed_out {
            format!("timed out: {error}")
        } else {
            format!("request failed: {error}")
        };
        if timed_out || retryable {
            Attempt::Transient { why, retry_after: None }
        } else {
            Attempt::Fatal(fatal(why))
        }
    }

    /// An answer with a failing HTTP `status`: 429 and 5xx are worth another try (after
    /// `retry_after`, if the service said), anything else is `fatal` of the reason.
    pub fn failed_status(status: u16, why: String, retry_after: Option<Duration>, fatal: impl FnOnce(String) -> E) -> Self {
        if status == 429 || (500..600).contains(&status) {
            Attempt::Transient { why, retry_after }
        } else {
            Attempt::Fatal(fatal(why))
        }
    }
}

/// Why a call ended without an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum GaveUp<E> {
    /// An attempt failed in a way retrying cannot help.
    Fatal(E),
    /// The service asked to wait `asked`, longer than the policy waits: the call ends at once.
    WaitTooLong { why: String, asked: Duration },
    /// Every one of `attempts` failed; `last` says why the last one did.
    Exhausted { attempts: u32, last: String },
}

impl RetryPolicy {
    /// Make `attempt` until it answers, fails for good, or the attempts run out. Between
    /// attempts, `before_retry(attempt number, why it failed, wait)` is told (for the log) and
    /// then `sleep(wait)` is awaited.
    pub async fn run<T, E, Op, Fut, Sleep, Slept>(
        &self,
        mut attempt: Op,
        mut sleep: Sleep,
        mut before_retry: impl FnMut(u32, &str, Duration),
    ) -> Result<T, GaveUp<E>>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Attempt<E>>>,
        Sleep: FnMut(Duration) -> Slept,
        Slept: Future<Output = ()>,
    {
        let attempts = self.max_attempts.max(1);
        let mut last = String::new();
        for n in 1..=attempts {
            let wait = match attempt().await {
                Ok(answer) => return Ok(answer),
                Err(Attempt::Fatal(e)) => return Err(GaveUp::Fatal(e)),
                Err(Attempt::Transient { why, retry_after }) => {
                    let backoff = self.backoff.saturating_mul(2u32.saturating_pow(n - 1));
                    let wait = match retry_after {
                        Some(asked) if asked > self.max_retry_after => return Err(GaveUp::WaitTooLong { why, asked }),
                        Some(asked) => asked.max(backoff),
                        None => backoff,
                    };
                    last = why;
                    wait
                }
            };
            if n < attempts {
                before_retry(n, &last, wait);
                sleep(wait).await;
            }
        }
        Err(GaveUp::Exhausted { attempts, last })
    }
}

/// A `retry-after` header's value in whole seconds (the HTTP-date form is not honoured).
pub fn retry_after(header: Option<&str>) -> Option<Duration> {
    header.and_then(|v| v.trim().parse::<u64>().ok()).map(Duration::from_secs)
}

/// The first `max` characters of an error body, trimmed, to quote in an error without
/// flooding the logs.
pub fn excerpt(body: &str, max: usize) -> String {
    let body = body.trim();
    match body.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::VecDeque;

    const POLICY: RetryPolicy = RetryPolicy {
        max_attempts: 3,
        backoff: Duration::from_millis(500),
        max_retry_after: Duration::from_secs(5),
    };

    /// Run `POLICY` over scripted attempts; returns the result, the waits slept and the
    /// attempts made.
    async fn play(script: Vec<Result<&'static str, Attempt<String>>>) -> (Result<&'static str, GaveUp<String>>, Vec<Duration>, usize) {
        let script = RefCell::new(VecDeque::from(script));
        let made = RefCell::new(0);
        let slept = RefCell::new(Vec::new());
        let result = POLICY
            .run(
                || {
                    *made.borrow_mut() += 1;
                    let next = script.borrow_mut().pop_front().expect("scripted");
                    async move { next }
                },
                |d| {
                    slept.borrow_mut().push(d);
                    async {}
                },
                |_, _, _| {},
            )
            .await;
        (result, slept.into_inner(), made.into_inner())
    }

    fn transient(after: Option<u64>) -> Result<&'static str, Attempt<String>> {
        Err(Attempt::Transient {
            why: "503".into(),
            retry_after: after.map(Duration::from_secs),
        })
    }

    #[tokio::test]
    async fn transient_failures_are_retried_with_a_doubling_backoff_or_the_longer_retry_after() {
        let (result, slept, made) = play(vec![transient(None), transient(Some(2)), Ok("answer")]).await;
        assert_eq!((result, made), (Ok("answer"), 3));
        assert_eq!(slept, vec![Duration::from_millis(500), Duration::from_secs(2)]);
        let (_, slept, _) = play(vec![transient(None), transient(Some(0)), Ok("answer")]).await;
        assert_eq!(
            slept[1],
            Duration::from_secs(1),
            "a retry-after shorter than the backoff waits the backoff"
        );
    }

    #[tokio::test]
    async fn the_last_failure_ends_the_call_without_a_wait() {
        let (result, slept, made) = play(vec![transient(None), transient(None), transient(None)]).await;
        assert_eq!(
            result,
            Err(GaveUp::Exhausted {
                attempts: 3,
                last: "503".into()
            })
        );
        assert_eq!((slept.len(), made), (2, 3));
    }

    #[tokio::test]
    async fn a_fatal_failure_or_a_long_retry_after_ends_the_call_at_once() {
        let (result, slept, made) = play(vec![Err(Attempt::Fatal("401".into()))]).await;
        assert_eq!((result, slept.len(), made), (Err(GaveUp::Fatal("401".into())), 0, 1));
        let (result, _, made) = play(vec![transient(Some(60))]).await;
        assert_eq!(
            (result, made),
            (
                Err(GaveUp::WaitTooLong {
                    why: "503".into(),
                    asked: Duration::from_secs(60)
                }),
                1
            )
        );
    }

    #[test]
    fn statuses_and_missing_answers_are_classified() {
        let fatal = |why: String| why;
        assert!(matches!(
            Attempt::failed_status(429, "x".into(), None, fatal),
            Attempt::Transient { .. }
        ));
        assert!(matches!(
            Attempt::failed_status(502, "x".into(), None, fatal),
            Attempt::Transient { .. }
        ));
        assert!(matches!(Attempt::failed_status(401, "x".into(), None, fatal), Attempt::Fatal(_)));
        assert!(matches!(Attempt::no_answer(true, false, "t", fatal), Attempt::Transient { ref why, .. } if why.starts_with("timed out")));
        assert!(matches!(Attempt::no_answer(false, false, "tls", fatal), Attempt::Fatal(ref why) if why == "request failed: tls"));
        assert_eq!(retry_after(Some(" 3 ")), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2026 07:28:00 GMT")), None);
        assert_eq!(excerpt(&"é".repeat(5), 3), "ééé…");
    }
}
