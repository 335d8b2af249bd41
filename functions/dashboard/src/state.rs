//! What every handler of the dashboard runs on: the engine and the key that signs its
//! sessions, built once when the function starts. A module of its own, below every page
//! module, so they name it without reaching up to the crate root; `lib.rs` re-exports it.

use std::sync::Arc;

use crate::session::SessionKey;

/// The dashboard's state: the engine, and the key that signs its sessions.
pub struct DashboardState {
    pub engine: openloop_core::engine::Engine,
    /// Signs the dashboard's sessions and CSRF tokens ([`session_key`] derives it from the
    /// server's signing key).
    pub session_key: SessionKey,
}

/// The function's state, from its environment: logging, the configuration, the engine.
pub async fn state_from_env() -> Result<Arc<DashboardState>, openloop_edge::apigw::Error> {
    let (config, engine) = openloop_web::engine_from_env().await?;
    Ok(Arc::new(DashboardState {
        engine,
        session_key: session_key(&config.signing_key),
    }))
}

/// The session key for [`DashboardState`], from the server's signing key.
pub fn session_key(signing_key: &secrecy::SecretString) -> SessionKey {
    use secrecy::ExposeSecret;
    SessionKey::derive(signing_key.expose_secret().as_bytes())
}
