//! Who may use the panel: every request passes [`guard`] before anything
//! else looks at it.
//!
//! - `Host` must name this machine (or the bound address, or a name the
//!   user allowed): a DNS-rebinding page reaches our port under its own
//!   name, and is refused here.
//! - A request that carries an `Origin` must come from this very origin
//!   (`http://` + its `Host`), and one that changes something (not GET or
//!   HEAD) must carry one; only a client that is plainly not a browser (a
//!   bearer token, no cookie, no `Sec-Fetch-*`) may leave it out: another
//!   page in the same browser cannot drive the agent, nor read its event
//!   stream, whichever credential it holds.
//! - `Sec-Fetch-Site`, when the browser sends it, must be `same-origin` or
//!   `none` (the user typed or opened the URL).
//! - Everything lives under a random prefix made per run (`/s/<random>`;
//!   other paths are 404 once the guard passed them). The token: `GET
//!   /s/<random>/?token=T` sets it as an HttpOnly, SameSite=Strict session
//!   cookie (gone with the browser) whose `Path` is that prefix, and
//!   redirects to it (so the token leaves the address bar). Browsers send
//!   cookies to every port of a host, but only for paths under the
//!   cookie's: another local server the browser visits never gets it,
//!   since no page it serves knows the prefix. After that the cookie, or
//!   `Authorization: Bearer T`, goes with every request. Anything else is
//!   401. Tokens compare in constant time.
//! - Every answer carries a strict Content-Security-Policy (scripts and
//!   styles from this server only, nothing inline, no frames, no forms, no
//!   remote images), `nosniff`, and no referrer.

use std::sync::Arc;

use axon_guard::{Hosts, bearer_matches, constant_time_eq};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The page's Content-Security-Policy.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                       img-src 'self' data:; connect-src 'self'; font-src 'self'; \
                       base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What the guard knows: the token, the names this server answers to, and
/// its cookie's name.
#[derive(Debug)]
pub struct Gate {
    pub token: String,
    pub hosts: Hosts,
    pub cookie: String,
    /// This run's random prefix (`/s/<random>`, no trailing slash): the
    /// page, its API and its cookie's `Path`.
    pub base: String,
}

impl Gate {
    /// Whether the request carries the token (cookie or bearer).
    fn admits(&self, headers: &HeaderMap) -> bool {
        if headers.get(header::AUTHORIZATION).is_some_and(|v| bearer_matches(v, &self.token)) {
            return true;
        }
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| {
                name == self.cookie && constant_time_eq(value.as_bytes(), self.token.as_bytes())
            })
    }
}

/// The middleware in front of every route.
pub async fn guard(gate: Arc<Gate>, request: Request, next: Next) -> Response {
    let mut response = check(&gate, request, next).await;
    secure(response.headers_mut());
    response
}

async fn check(gate: &Gate, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return refuse(StatusCode::BAD_REQUEST, "a request needs a Host header");
    };
    if !gate.hosts.allows(host) {
        return refuse(
            StatusCode::FORBIDDEN,
            &format!("this server does not answer to the host {host:?}"),
        );
    }
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    if let Some(origin) = origin
        && !same_origin(origin, host)
    {
        return refuse(StatusCode::FORBIDDEN, &format!("requests from {origin} are refused"));
    }
    if let Some(site) = headers.get("sec-fetch-site").and_then(|s| s.to_str().ok())
        && !matches!(site, "same-origin" | "none")
    {
        return refuse(StatusCode::FORBIDDEN, &format!("a {site} request is refused"));
    }
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if !reads && origin.is_none() && from_a_browser(headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "a request that changes something needs an Origin header (a program may send a \
             bearer token instead)",
        );
    }
    if request.uri().path() == format!("{}/", gate.base)
        && reads
        && let Some(given) = query_token(request.uri().query())
    {
        if !constant_time_eq(given.as_bytes(), gate.token.as_bytes()) {
            return unauthorized();
        }
        return enter(gate);
    }
    if !gate.admits(headers) {
        return unauthorized();
    }
    next.run(request).await
}

/// Whether a browser may have sent this: it carries a cookie or a
/// `Sec-Fetch-*` header, or no bearer token at all. Only a request that is
/// none of these (a program with the token) may change things without an
/// `Origin`.
fn from_a_browser(headers: &HeaderMap) -> bool {
    !headers.contains_key(header::AUTHORIZATION)
        || headers.contains_key(header::COOKIE)
        || headers.keys().any(|name| name.as_str().starts_with("sec-fetch-"))
}

/// Whether `origin` is the page this server serves at `host` (directly,
/// or through an HTTPS proxy that keeps the name).
fn same_origin(origin: &str, host: &str) -> bool {
    let rest = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    rest.is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// `token=` of a query string (tokens are URL-safe characters only,
/// checked at start, so they need no decoding).
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|pair| pair.strip_prefix("token="))
}

/// The first visit with the token: it becomes the cookie, bound to this
/// run's prefix, and the address bar loses it.
fn enter(gate: &Gate) -> Response {
    let page = format!("{}/", gate.base);
    let cookie = format!("{}={}; Path={page}; HttpOnly; SameSite=Strict", gate.cookie, gate.token);
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(page) = HeaderValue::from_str(&page) {
        headers.insert(header::LOCATION, page);
    }
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

fn unauthorized() -> Response {
    let mut response = refuse(
        StatusCode::UNAUTHORIZED,
        "this page needs the link axon web printed (with its token); open that link again",
    );
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// An error answer, as JSON every caller can show.
pub fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

/// The headers every answer carries.
fn secure(headers: &mut HeaderMap) {
    let fixed = [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
        (HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        Gate {
            token: "t0k".into(),
            hosts: Hosts::new("127.0.0.1:1".parse().unwrap(), &[]),
            cookie: "axon_web_1".into(),
            base: "/s/r4nd0m".into(),
        }
    }

    #[test]
    fn the_cookie_or_the_bearer_token_admits() {
        let gate = gate();
        let mut headers = HeaderMap::new();
        assert!(!gate.admits(&headers));
        headers.insert(header::COOKIE, HeaderValue::from_static("a=b; axon_web_1=t0k"));
        assert!(gate.admits(&headers));
        headers.insert(header::COOKIE, HeaderValue::from_static("axon_web_2=t0k; axon_web_1=t0"));
        assert!(!gate.admits(&headers));
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t0k"));
        assert!(gate.admits(&headers));
    }

    #[test]
    fn only_this_servers_own_origin_is_the_same() {
        assert!(same_origin("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(same_origin("https://LOCALHOST:8080", "localhost:8080"));
        assert!(!same_origin("http://127.0.0.1:8081", "127.0.0.1:8080"));
        assert!(!same_origin("http://evil.example", "127.0.0.1:8080"));
        assert!(!same_origin("null", "127.0.0.1:8080"));
    }

    #[test]
    fn only_a_program_with_the_bearer_token_may_leave_out_the_origin() {
        let mut headers = HeaderMap::new();
        assert!(from_a_browser(&headers), "no credential at all");
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t0k"));
        assert!(!from_a_browser(&headers), "a program");
        headers.insert("sec-fetch-mode", HeaderValue::from_static("cors"));
        assert!(from_a_browser(&headers), "a browser's fetch with the bearer token");
        headers.remove("sec-fetch-mode");
        headers.insert(header::COOKIE, HeaderValue::from_static("axon_web_1=t0k"));
        assert!(from_a_browser(&headers), "a cookie is a browser's");
    }

    #[test]
    fn the_cookie_is_bound_to_the_run_s_prefix() {
        let response = enter(&gate());
        let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
        assert!(cookie.contains("Path=/s/r4nd0m/;"), "{cookie}");
        assert_eq!(response.headers()[header::LOCATION], "/s/r4nd0m/");
    }

    #[test]
    fn the_query_names_the_token() {
        assert_eq!(query_token(Some("a=1&token=abc")), Some("abc"));
        assert_eq!(query_token(Some("tokens=abc")), None);
        assert_eq!(query_token(None), None);
    }
}
