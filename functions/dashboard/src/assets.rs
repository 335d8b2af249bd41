//! The dashboard's static files, compiled into the binary and served under names that carry
//! a hash of their content — so a browser may cache them for good, and a new build's file has
//! a new name. No build step: the stylesheet is plain CSS.

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use crate::state::DashboardState;

pub fn routes() -> Router<Arc<DashboardState>> {
    Router::new().route("/app/static/{name}", get(serve))
}

const STYLESHEET: &str = include_str!("../assets/app.css");

/// `app.<first 12 hex digits of its SHA-256>.css`.
static STYLESHEET_NAME: LazyLock<String> = LazyLock::new(|| hashed_name("app", "css", STYLESHEET.as_bytes()));

fn hashed_name(stem: &str, extension: &str, content: &[u8]) -> String {
    let digest = hex::encode(Sha256::digest(content));
    format!("{stem}.{}.{extension}", &digest[..12])
}

/// Where pages link the stylesheet.
pub fn stylesheet_href() -> String {
    format!("/app/static/{}", *STYLESHEET_NAME)
}

/// `GET /app/static/{name}`: the file of that exact hashed name, cached for a year.
async fn serve(Path(name): Path<String>) -> Response {
    if name != *STYLESHEET_NAME {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    }
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        STYLESHEET,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_changes_with_the_content() {
        assert_ne!(hashed_name("app", "css", b"a"), hashed_name("app", "css", b"b"));
        assert!(stylesheet_href().starts_with("/app/static/app.") && stylesheet_href().ends_with(".css"));
    }
}
