//! Signed tokens that travel in mail: the reply address `reply+{token}@…` that routes a
//! member's answer to its task (and an owner's answer to what their mail asked), and the
//! unsubscribe link. A token is the payload plus a
//! truncated HMAC-SHA256; verification is constant-time, so a forged or altered token routes
//! nowhere.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::kernel::ids::{AccountId, Email, TaskId};
use crate::owner::action_link::ActionLink;

type HmacSha256 = Hmac<Sha256>;

/// 80 bits of MAC: unguessable, yet short enough for an e-mail local part (≤ 64 chars).
const REPLY_MAC_BYTES: usize = 10;

/// The key that signs tokens. Never logged.
#[derive(Clone)]
pub struct SigningKey(Vec<u8>);

impl SigningKey {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self(bytes.into())
    }

    fn mac(&self, purpose: &str, payload: &[u8]) -> HmacSha256 {
        // Keys of any length are accepted by HMAC; this cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!("HMAC takes keys of any size"));
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac.update(payload);
        mac
    }

    /// The local-part token for replies to `task`: `{task id, lower-case}-{mac, base32}`.
    pub fn reply_token(&self, task: &TaskId) -> String {
        let id = task.to_string().to_ascii_lowercase();
        let tag = self.mac("reply", id.as_bytes()).finalize().into_bytes();
        format!("{id}-{}", base32_lower(&tag[..REPLY_MAC_BYTES]))
    }

    /// The task a reply token names, if and only if the token is genuine.
    pub fn verify_reply_token(&self, token: &str) -> Option<TaskId> {
        let (id, tag) = token
            .to_ascii_lowercase()
            .split_once('-')
            .map(|(a, b)| (a.to_owned(), b.to_owned()))?;
        let tag = base32_decode_lower(&tag)?;
        if tag.len() != REPLY_MAC_BYTES {
            return None;
        }
        self.mac("reply", id.as_bytes()).verify_truncated_left(&tag).ok()?;
        id.to_ascii_uppercase().parse().ok()
    }

    /// The token `account` publishes to prove `domain` is its own (a sending domain's TXT
    /// record): its own for each account and domain, unguessable by another account.
    pub fn domain_ownership_token(&self, account: &AccountId, domain: &str) -> String {
        let payload = format!("{account}:{}", domain.to_ascii_lowercase());
        let tag = self.mac("domain-ownership", payload.as_bytes()).finalize().into_bytes();
        base32_lower(&tag[..16])
    }

    /// The keyed hash an erasure keeps of one identity of a member (`what` is `member`,
    /// `email` or `phone`, see `members::erasure::identities`): the same for the same
    /// account and value, and no help to anyone without the key in finding the value. Never
    /// sent anywhere; stored so a later import of the same person stays out.
    pub fn erasure_key(&self, account: &AccountId, what: &str, value: &str) -> String {
        let payload = format!("{account}:{what}:{value}");
        base32_lower(&self.mac("erasure", payload.as_bytes()).finalize().into_bytes())
    }

    /// A URL-safe token for the unsubscribe link of `email` at `account`.
    pub fn unsubscribe_token(&self, account: &AccountId, email: &Email) -> String {
        let payload = format!("{account}:{email}");
        let tag = self.mac("unsubscribe", payload.as_bytes()).finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(&tag[..16]))
    }

    pub fn verify_unsubscribe_token(&self, token: &str) -> Option<(AccountId, Email)> {
        let (payload, tag) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != 16 {
            return None;
        }
        self.mac("unsubscribe", &payload).verify_truncated_left(&tag).ok()?;
        let payload = String::from_utf8(payload).ok()?;
        let (account, email) = payload.split_once(':')?;
        Some((account.parse().ok()?, Email::parse(email).ok()?))
    }
}

/// What an owner mail's reply address names: the one item it asks about, or the account (a
/// mail of several items: the brief, a digest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerReplyTo {
    Task(TaskId),
    Account(AccountId),
}

impl SigningKey {
    /// The local-part token of an owner mail's reply address: `o{t|a}{id, lower-case}-{mac}`,
    /// signed for its own purpose (a member's reply token never reads as one, nor the reverse).
    pub fn owner_reply_token(&self, to: OwnerReplyTo) -> String {
        let payload = match to {
            OwnerReplyTo::Task(id) => format!("ot{}", id.to_string().to_ascii_lowercase()),
            OwnerReplyTo::Account(id) => format!("oa{}", id.to_string().to_ascii_lowercase()),
        };
        let tag = self.mac("owner-reply", payload.as_bytes()).finalize().into_bytes();
        format!("{payload}-{}", base32_lower(&tag[..REPLY_MAC_BYTES]))
    }

    /// What an owner reply token names, if and only if the token is genuine.
    pub fn verify_owner_reply_token(&self, token: &str) -> Option<OwnerReplyTo> {
        let lower = token.to_ascii_lowercase();
        let (payload, tag) = lower.split_once('-')?;
        let tag = base32_decode_lower(tag)?;
        if tag.len() != REPLY_MAC_BYTES {
            return None;
        }
        self.mac("owner-reply", payload.as_bytes()).verify_truncated_left(&tag).ok()?;
        let id = payload.get(2..)?.to_ascii_uppercase();
        match payload.get(..2)? {
            "ot" => Some(OwnerReplyTo::Task(id.parse().ok()?)),
            "oa" => Some(OwnerReplyTo::Account(id.parse().ok()?)),
            _ => None,
        }
    }

    /// The token of an owner's action link (`/a/{token}`): the link's payload and 128 bits of
    /// MAC, URL-safe.
    pub fn action_token(&self, link: &ActionLink) -> String {
        let payload = link.payload();
        let tag = self.mac("action", payload.as_bytes()).finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(&tag[..16]))
    }

    /// The link a token names, if and only if the token is genuine (its expiry is the
    /// caller's to check: an expired link still says what became of its item).
    pub fn verify_action_token(&self, token: &str) -> Option<ActionLink> {
        let (payload, tag) = token.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != 16 {
            return None;
        }
        self.mac("action", &payload).verify_truncated_left(&tag).ok()?;
        ActionLink::from_payload(std::str::from_utf8(&payload).ok()?)
    }
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(<redacted>)")
    }
}

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

fn base32_lower(bytes: &[u8]) -> String {
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(*byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

fn base32_decode_lower(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        buffer = (buffer << 5) | v;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push(((buffer >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    fn key() -> SigningKey {
        SigningKey::new(b"test-signing-key".to_vec())
    }

    #[test]
    fn reply_tokens_round_trip_and_fit_an_email_local_part() {
        let task = TaskId::generate(Timestamp::UNIX_EPOCH);
        let token = key().reply_token(&task);
        assert!(format!("reply+{token}").len() <= 64, "{token}");
        assert_eq!(key().verify_reply_token(&token), Some(task));
        assert_eq!(key().verify_reply_token(&token.to_ascii_uppercase()), Some(task));
    }

    #[test]
    fn forged_or_altered_reply_tokens_route_nowhere() {
        let task = TaskId::generate(Timestamp::UNIX_EPOCH);
        let other = TaskId::generate(Timestamp::UNIX_EPOCH);
        let token = key().reply_token(&task);
        let (_, tag) = token.split_once('-').expect("dash");
        let swapped = format!("{}-{tag}", other.to_string().to_ascii_lowercase());
        assert_eq!(key().verify_reply_token(&swapped), None);
        assert_eq!(SigningKey::new(b"other".to_vec()).verify_reply_token(&token), None);
        assert_eq!(key().verify_reply_token("garbage"), None);
    }

    #[test]
    fn owner_reply_tokens_round_trip_fit_a_local_part_and_are_no_members_token() {
        let task = TaskId::generate(Timestamp::UNIX_EPOCH);
        let account = AccountId::generate(Timestamp::UNIX_EPOCH);
        for to in [OwnerReplyTo::Task(task), OwnerReplyTo::Account(account)] {
            let token = key().owner_reply_token(to);
            assert!(format!("reply+{token}").len() <= 64, "{token}");
            assert_eq!(key().verify_owner_reply_token(&token), Some(to));
            assert_eq!(key().verify_owner_reply_token(&token.to_ascii_uppercase()), Some(to));
            assert_eq!(key().verify_reply_token(&token), None, "an owner token routes no member reply");
            assert_eq!(SigningKey::new(b"other".to_vec()).verify_owner_reply_token(&token), None);
        }
        let member = key().reply_token(&task);
        assert_eq!(key().verify_owner_reply_token(&member), None, "a member's token is not the owner's");
        let token = key().owner_reply_token(OwnerReplyTo::Task(task));
        let (_, tag) = token.split_once('-').expect("dash");
        let other = TaskId::generate(Timestamp::UNIX_EPOCH);
        let swapped = format!("ot{}-{tag}", other.to_string().to_ascii_lowercase());
        assert_eq!(key().verify_owner_reply_token(&swapped), None);
        assert_eq!(key().verify_owner_reply_token("ot-x"), None);
    }

    #[test]
    fn action_tokens_round_trip_and_a_forged_or_altered_one_names_nothing() {
        use crate::owner::action_link::{LinkAction, LinkItem};
        let link = ActionLink {
            account: AccountId::generate(Timestamp::UNIX_EPOCH),
            item: LinkItem::Task(TaskId::generate(Timestamp::UNIX_EPOCH)),
            action: LinkAction::Approve,
            expires: Timestamp::UNIX_EPOCH,
        };
        let token = key().action_token(&link);
        assert_eq!(key().verify_action_token(&token), Some(link.clone()));
        let (payload, tag) = token.split_once('.').expect("dot");
        let skip = ActionLink {
            action: LinkAction::Skip,
            ..link
        };
        let altered = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(skip.payload()));
        assert_eq!(key().verify_action_token(&altered), None, "another action under the same MAC");
        assert_eq!(SigningKey::new(b"another".to_vec()).verify_action_token(&token), None);
        assert_eq!(key().verify_action_token(payload), None);
        assert_eq!(key().verify_action_token(&format!("{payload}.{}", &tag[1..])), None);
        assert_ne!(key().action_token(&skip), token, "one token per action");
    }

    #[test]
    fn unsubscribe_tokens_round_trip_and_refuse_tampering() {
        let account = AccountId::generate(Timestamp::UNIX_EPOCH);
        let email = Email::parse("sarah@example.com").expect("email");
        let token = key().unsubscribe_token(&account, &email);
        assert_eq!(key().verify_unsubscribe_token(&token), Some((account, email)));
        let tampered = format!("{}x", token);
        assert_eq!(key().verify_unsubscribe_token(&tampered), None);
    }
}
