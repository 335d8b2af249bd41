//! The dashboard's sign-in: a session cookie that names the account and when it expires,
//! signed with a key derived from the server's signing key, and the CSRF tokens its forms
//! carry. The cookie carries the account's session version when it was issued; each page
//! checks it against the account's (`Account::session_version`), and signing out moves the
//! account's on, so every cookie of the account — a copied one too — stops working at once.
//!
//! The cookie never holds the API token; the CSRF token is a MAC of the cookie, so a page of
//! one session cannot post for another, and a forged cookie has no valid token to go with it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use jiff::{SignedDuration, Timestamp};
use sha2::Sha256;

use openloop_core::kernel::ids::AccountId;

type HmacSha256 = Hmac<Sha256>;

/// The session cookie's name; scoped to `/app`.
pub const COOKIE: &str = "ol_session";
/// The sign-in form's own cookie: a random nonce whose MAC the form carries (login CSRF).
pub const LOGIN_COOKIE: &str = "ol_login";
/// How long a sign-in lasts.
pub const LIFETIME: SignedDuration = SignedDuration::from_hours(12);

/// The key that signs sessions and CSRF tokens, derived from the server's signing key so it
/// differs from the key behind reply and unsubscribe tokens.
#[derive(Clone)]
pub struct SessionKey([u8; 32]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey([redacted])")
    }
}

/// A signed-in owner: the account and the cookie that proves it.
#[derive(Clone, Debug)]
pub struct Session {
    pub account: AccountId,
    /// The account's session version when this session was issued.
    pub version: u64,
    cookie: String,
}

impl SessionKey {
    pub fn derive(signing_key: &[u8]) -> Self {
        let mut mac = mac(signing_key);
        mac.update(b"openloop/dashboard-session/v1");
        Self(mac.finalize().into_bytes().into())
    }

    fn tag(&self, parts: &[&str]) -> String {
        let mut mac = mac(&self.0);
        for part in parts {
            mac.update(part.as_bytes());
            mac.update(b"|");
        }
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    fn verify(&self, parts: &[&str], tag: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(tag) else {
            return false;
        };
        let mut mac = mac(&self.0);
        for part in parts {
            mac.update(part.as_bytes());
            mac.update(b"|");
        }
        // Constant time.
        mac.verify_slice(&tag).is_ok()
    }

    /// A new session for `account`, expiring [`LIFETIME`] after `now`: the cookie's value.
    pub fn issue(&self, account: AccountId, version: u64, now: Timestamp, nonce: &[u8; 16]) -> Session {
        let expires = (now.as_second() + LIFETIME.as_secs()).to_string();
        let account_text = account.to_string();
        let nonce = URL_SAFE_NO_PAD.encode(nonce);
        let version_text = version.to_string();
        let tag = self.tag(&["session", &account_text, &expires, &nonce, &version_text]);
        Session {
            account,
            version,
            cookie: format!("v2.{account_text}.{expires}.{nonce}.{version_text}.{tag}"),
        }
    }

    /// The session a cookie value proves, if its signature holds and it has not expired.
    pub fn open(&self, cookie: &str, now: Timestamp) -> Option<Session> {
        let mut parts = cookie.split('.');
        let (Some("v2"), Some(account), Some(expires), Some(nonce), Some(version), Some(tag), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        if !self.verify(&["session", account, expires, nonce, version], tag) {
            return None;
        }
        let expires: i64 = expires.parse().ok()?;
        if now.as_second() >= expires {
            return None;
        }
        Some(Session {
            account: account.parse().ok()?,
            version: version.parse().ok()?,
            cookie: cookie.to_owned(),
        })
    }

    /// The token every state-changing form of this session carries.
    pub fn csrf(&self, session: &Session) -> String {
        self.tag(&["csrf", &session.cookie])
    }

    pub fn csrf_matches(&self, session: &Session, presented: &str) -> bool {
        self.verify(&["csrf", &session.cookie], presented)
    }

    /// The sign-in form's token for the nonce in its [`LOGIN_COOKIE`].
    pub fn login_csrf(&self, nonce: &str) -> String {
        self.tag(&["login", nonce])
    }

    pub fn login_csrf_matches(&self, nonce: &str, presented: &str) -> bool {
        !nonce.is_empty() && self.verify(&["login", nonce], presented)
    }
}

impl Session {
    pub fn cookie_value(&self) -> &str {
        &self.cookie
    }
}

fn mac(key: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length.
    match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    }
}

/// `Set-Cookie` for the session: HttpOnly, SameSite=Strict, scoped to `/app`, expiring with
/// the session, and Secure when the request came over https.
pub fn set_cookie(name: &str, value: &str, max_age_secs: i64, path: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; Max-Age={max_age_secs}; HttpOnly; SameSite=Strict{secure}")
}

/// The value of cookie `name` in a request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SessionKey {
        SessionKey::derive(b"test-signing-key")
    }

    fn now() -> Timestamp {
        Timestamp::from_second(1_800_000_000).unwrap_or_else(|e| panic!("{e}"))
    }

    fn account() -> AccountId {
        "01JB0000000000000000000000".parse().unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn an_issued_session_opens_until_it_expires() {
        let session = key().issue(account(), 0, now(), &[7; 16]);
        let opened = key().open(session.cookie_value(), now()).map(|s| s.account);
        assert_eq!(opened, Some(account()));
        let late = now() + LIFETIME;
        assert!(key().open(session.cookie_value(), late).is_none(), "expired at its lifetime");
    }

    #[test]
    fn a_tampered_or_foreign_cookie_opens_nothing() {
        let session = key().issue(account(), 0, now(), &[7; 16]);
        let value = session.cookie_value();
        let other = "01JB0000000000000000000001";
        let forged = value.replacen(&account().to_string(), other, 1);
        assert!(key().open(&forged, now()).is_none(), "another account's id");
        let extended = value.replacen(".1800043200.", ".1900000000.", 1);
        assert!(key().open(&extended, now()).is_none(), "a later expiry");
        assert!(
            SessionKey::derive(b"another key").open(value, now()).is_none(),
            "another server's key"
        );
        let older = key().issue(account(), 3, now(), &[7; 16]);
        let bumped = older.cookie_value().replacen(".3.", ".4.", 1);
        assert!(key().open(&bumped, now()).is_none(), "another session version");
        for junk in ["", "v1", "v1.a.b.c.d", "v2.x", &format!("{value}.extra")] {
            assert!(key().open(junk, now()).is_none(), "{junk:?}");
        }
    }

    #[test]
    fn csrf_tokens_belong_to_one_session() {
        let one = key().issue(account(), 0, now(), &[1; 16]);
        let two = key().issue(account(), 0, now(), &[2; 16]);
        let token = key().csrf(&one);
        assert!(key().csrf_matches(&one, &token));
        assert!(!key().csrf_matches(&two, &token), "another sign-in's page");
        assert!(!key().csrf_matches(&one, ""));
        assert!(!key().login_csrf_matches("", &key().login_csrf("")), "no login cookie, no login");
        assert!(key().login_csrf_matches("n1", &key().login_csrf("n1")));
        assert!(!key().login_csrf_matches("n2", &key().login_csrf("n1")));
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_over_https() {
        let plain = set_cookie(COOKIE, "v", 60, "/app", false);
        assert_eq!(plain, "ol_session=v; Path=/app; Max-Age=60; HttpOnly; SameSite=Strict");
        assert!(set_cookie(COOKIE, "v", 60, "/app", true).ends_with("; Secure"));
    }
}
