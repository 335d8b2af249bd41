//! The dashboard's sign-in link: an owner who asks at `/app/login` gets, at
//! the address set as `owner_email`, a link that signs in once within 15 minutes
//! ([`crate::owner::sign_in`]). The account is found through the owner-address index; the
//! mail goes through the same mailer as the owner's notices. Whether an address is known is
//! never said to the asker.

use super::Engine;
use crate::kernel::ids::{AccountId, Email};
use crate::owner::sign_in::{
    SIGN_IN_LINK_LIFETIME, SIGN_IN_LINKS_PER_HOUR, SIGN_IN_LINKS_PER_REQUESTER_PER_HOUR, SignInLink, hourly_counter, may_mail,
    requester_counter,
};
use crate::task::error::EngineError;

/// A fresh sign-in token and its hash (made by the caller, who holds the randomness).
pub struct SignInToken {
    pub token: String,
    pub token_hash: String,
}

/// The most accounts one address is mailed links for at once.
const MAX_ACCOUNTS_PER_ADDRESS: usize = 5;

impl Engine {
    /// Mail a sign-in link to `email` for each account whose owner it is (at most five, each
    /// within [`SIGN_IN_LINKS_PER_HOUR`] an hour and `requester`'s
    /// [`SIGN_IN_LINKS_PER_REQUESTER_PER_HOUR`], a requester's first always): `mint` makes each link's token; the link is
    /// `{public_url}/app/login/link?token=…` (the configured address, never the request's
    /// host). Answers how many were mailed — for logs and tests only: the
    /// owner is told the same whatever it is.
    pub async fn mail_sign_in_links(
        &self,
        email: &Email,
        requester: &str,
        mut mint: impl FnMut() -> Option<SignInToken> + Send,
    ) -> Result<usize, EngineError> {
        let now = self.clock.now();
        let accounts = self.store.accounts_for_owner_email(email).await?;
        let mut mailed = 0;
        for id in accounts.into_iter().take(MAX_ACCOUNTS_PER_ADDRESS) {
            let Some(account) = self.store.get_account(id).await? else {
                continue;
            };
            // The index follows the account's own write; read the address it holds now.
            let Some(to) = account.settings.owner_email.clone() else {
                continue;
            };
            let day = now.to_zoned(jiff::tz::TimeZone::UTC).date();
            // Counted per requester and per account; a requester's first of the hour goes
            // whatever strangers asked for the same address.
            let by_requester = self
                .store
                .count_daily(id, &requester_counter(now, requester), day, SIGN_IN_LINKS_PER_REQUESTER_PER_HOUR)
                .await?;
            let by_account = self
                .store
                .count_daily(id, &hourly_counter(now), day, SIGN_IN_LINKS_PER_HOUR)
                .await?;
            if !may_mail(by_requester, by_account) {
                tracing::info!(account = %id, "sign-in link not sent: this hour's links are used up");
                continue;
            }
            let Some(token) = mint() else {
                return Err(EngineError::Dependency("no randomness for a sign-in token".into()));
            };
            self.store
                .create_sign_in_link(&SignInLink {
                    token_hash: token.token_hash,
                    account_id: id,
                    expires_at: now + SIGN_IN_LINK_LIFETIME,
                })
                .await?;
            let name = account
                .settings
                .profile
                .display_name
                .clone()
                .unwrap_or_else(|| account.name.clone());
            let link = format!(
                "{}/app/login/link?token={}",
                self.config.public_url.trim_end_matches('/'),
                token.token
            );
            let minutes = SIGN_IN_LINK_LIFETIME.as_mins();
            let text = format!(
                "Open this link to sign in to {name}'s Openloop dashboard:\n\n{link}\n\nIt works once, within {minutes} minutes. If you did not ask for it, ignore this mail: nobody can sign in without it.\n"
            );
            let mail = self.owner_mail(&account, to, format!("Your sign-in link for {name}"), text, "sign-in", now);
            match self.mailer.send(&mail).await {
                Ok(_) => mailed += 1,
                Err(e) => tracing::error!(account = %id, error = %e, "sign-in link not mailed"),
            }
        }
        Ok(mailed)
    }

    /// Sign the account out of the dashboard everywhere: its session version moves on, so every
    /// session issued before stops working on its next request.
    pub async fn end_sessions(&self, id: AccountId) -> Result<(), EngineError> {
        self.change_account(id, |account| {
            account.session_version += 1;
            Ok(true)
        })
        .await?;
        Ok(())
    }

    /// The account's current dashboard session version.
    pub async fn session_version(&self, id: AccountId) -> Result<Option<u64>, EngineError> {
        Ok(self.store.get_account(id).await?.map(|a| a.session_version))
    }

    /// The name of the account a mailed link would sign in to (valid, unused, unexpired),
    /// without using it: the confirm page says which account it opens.
    pub async fn sign_in_link_account_name(&self, token_hash: &str) -> Result<Option<String>, EngineError> {
        let Some(id) = self.store.sign_in_link_account(token_hash, self.clock.now()).await? else {
            return Ok(None);
        };
        Ok(self.store.get_account(id).await?.map(|a| a.sender_name().to_owned()))
    }

    /// The account a mailed sign-in link signs in to, if the link (by its token's hash) exists,
    /// is unused and has not expired; it is used from then on.
    pub async fn redeem_sign_in_link(&self, token_hash: &str) -> Result<Option<AccountId>, EngineError> {
        Ok(self.store.redeem_sign_in_link(token_hash, self.clock.now()).await?)
    }
}
