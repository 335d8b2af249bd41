//! Standard Webhooks verification: `HMAC-SHA256(key, "{id}.{timestamp}.{body}")`, base64,
//! in `webhook-signature: v1,<sig> [v1,<sig>…]`, with the timestamp within ±5 minutes of the
//! clock (the test clock locally, which is why this is not the `standardwebhooks` crate: it
//! reads the system clock). The comparison is constant-time (`Mac::verify_slice`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use jiff::Timestamp;
use sha2::Sha256;

use openloop_core::kernel::limits::WEBHOOK_TOLERANCE;

#[derive(Debug, PartialEq, Eq)]
pub enum Rejection {
    MissingHeaders,
    BadTimestamp,
    StaleTimestamp,
    BadSecret,
    NoMatch,
}

impl Rejection {
    pub fn message(&self) -> &'static str {
        match self {
            Rejection::MissingHeaders => "webhook-id, webhook-timestamp and webhook-signature headers are required",
            Rejection::BadTimestamp => "webhook-timestamp must be unix seconds",
            Rejection::StaleTimestamp => "webhook-timestamp is more than 5 minutes from now",
            Rejection::BadSecret => "the account's webhook secret is not a whsec_ secret",
            Rejection::NoMatch => "no webhook-signature matches the body",
        }
    }
}

/// Check one delivery. `secret` is the account's `whsec_…` secret.
pub fn verify(secret: &str, id: &str, timestamp: &str, signatures: &str, body: &[u8], now: Timestamp) -> Result<(), Rejection> {
    let seconds: i64 = timestamp.trim().parse().map_err(|_| Rejection::BadTimestamp)?;
    let sent = Timestamp::from_second(seconds).map_err(|_| Rejection::BadTimestamp)?;
    if now.duration_since(sent).abs() > WEBHOOK_TOLERANCE {
        return Err(Rejection::StaleTimestamp);
    }
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").ok_or(Rejection::BadSecret)?)
        .map_err(|_| Rejection::BadSecret)?;
    let mac = || -> Result<Hmac<Sha256>, Rejection> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| Rejection::BadSecret)?;
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.trim().as_bytes());
        mac.update(b".");
        mac.update(body);
        Ok(mac)
    };
    for candidate in signatures.split_whitespace() {
        let Some(encoded) = candidate.strip_prefix("v1,") else {
            continue;
        };
        let Ok(signature) = STANDARD.decode(encoded) else {
            continue;
        };
        if mac()?.verify_slice(&signature).is_ok() {
            return Ok(());
        }
    }
    Err(Rejection::NoMatch)
}

/// Sign a delivery (for tests, the demo and anyone calling our endpoint).
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix("whsec_")?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // The example from the Standard Webhooks specification.
        let body = br#"{"test": 2432232314}"#;
        let now = Timestamp::from_second(1_614_265_330).expect("ts");
        let sig = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assert_eq!(verify(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", sig, body, now), Ok(()));
    }

    #[test]
    fn forged_altered_and_stale_deliveries_are_refused() {
        let body = b"{}";
        let now = Timestamp::from_second(1_700_000_000).expect("ts");
        let good = sign(SECRET, "msg_1", 1_700_000_000, body).expect("sign");
        assert_eq!(verify(SECRET, "msg_1", "1700000000", &good, body, now), Ok(()));
        assert_eq!(verify(SECRET, "msg_1", "1700000000", &good, b"{ }", now), Err(Rejection::NoMatch));
        assert_eq!(verify(SECRET, "msg_2", "1700000000", &good, body, now), Err(Rejection::NoMatch));
        assert_eq!(
            verify("whsec_b3RoZXI=", "msg_1", "1700000000", &good, body, now),
            Err(Rejection::NoMatch)
        );
        let later = Timestamp::from_second(1_700_000_301).expect("ts");
        assert_eq!(
            verify(SECRET, "msg_1", "1700000000", &good, body, later),
            Err(Rejection::StaleTimestamp)
        );
        assert_eq!(verify(SECRET, "msg_1", "soon", &good, body, now), Err(Rejection::BadTimestamp));
        assert_eq!(verify(SECRET, "msg_1", "1700000000", &format!("v2,x {good}"), body, now), Ok(()));
    }
}
