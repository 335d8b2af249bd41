//! The headers every HTML page carries — the dashboard's under `/app` — even when no page
//! handler made the response (a 405 of the router, an extractor's rejection): a
//! Content-Security-Policy without inline script, no framing, no sniffing, no referrer, and
//! never cached.

use axum::http::{HeaderValue, header};
use axum::response::Response;

const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

/// Whether a path is a page's (the dashboard's, and the mail's action links at `/a/…`).
pub fn is_page_path(path: &str) -> bool {
    path == "/app" || path.starts_with("/app/") || path.starts_with("/a/")
}

/// Middleware on a whole router: a response to a page's path carries the page headers.
pub async fn protect_page_paths(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let page = is_page_path(request.uri().path());
    let response = next.run(request).await;
    if page { protect(response).await } else { response }
}

/// The headers every page carries.
pub async fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
