//! The dashboard's sign-in tokens, made where a sign-in link is mailed (the signals consumer
//! answers "Email me a sign-in link" after the page has answered): 32 random bytes, URL-safe
//! base64, stored only as their hash.

use base64::Engine as _;

use openloop_core::engine::SignInToken;

use crate::http::token_hash;

/// A fresh token and its hash; `None` without randomness.
pub fn sign_in_token() -> Option<SignInToken> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    Some(SignInToken {
        token_hash: token_hash(&token),
        token,
    })
}
