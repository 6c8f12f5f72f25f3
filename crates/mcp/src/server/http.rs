//! Streamable HTTP for any `rmcp` server handler, mounted in axum at `/mcp`,
//! with what a server on a developer's machine needs to be safe:
//!
//! - It binds loopback unless told otherwise, and [`HttpServer::bind`]
//!   refuses any other address without a bearer token: a tool server on a
//!   LAN address with no token is a remote shell.
//! - `Host` must name this machine (DNS-rebinding protection) and a browser's
//!   `Origin` must be a loopback page; `rmcp` checks both and answers 403.
//! - With a token, every request must carry `Authorization: Bearer TOKEN`
//!   (the scheme in any letter case, the token compared in constant time) or
//!   gets 401 before reaching the handler. A token guarding a non-loopback
//!   address must have at least [`MIN_EXPOSED_TOKEN_CHARS`] characters.
//! - Sessions are bounded ([`BoundedSessions`]): idle ones expire, their
//!   number is capped, and a request or DELETE for an unknown or expired
//!   session gets 404.
//! - A body that is not a valid MCP message gets a JSON-RPC error, never
//!   rmcp's bare 415: 400 with -32700 for text that is not JSON, and the
//!   request's own id on the error when it has one (-32602 naming the field
//!   for wrong params; see [`super::jsonrpc`]).
//! - Accepted sockets have TCP_NODELAY: a response written in pieces is not
//!   held back waiting for the client's delayed ACK on kept-alive
//!   connections.

use std::net::SocketAddr;
use std::sync::Arc;

use std::time::Duration;

use axon_guard::{Hosts, bearer_matches};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::ServeError;
use super::jsonrpc;
pub use super::sessions::{
    BoundedSessions, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, SessionLimits,
};

pub use axon_guard::MIN_EXPOSED_TOKEN_CHARS;

/// The largest request body read, as rmcp's own limit.
const MAX_BODY: usize = 4 * 1024 * 1024;

const SESSION_HEADER: &str = "mcp-session-id";

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// Who may talk to the server, beyond this machine's own names.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Required as `Authorization: Bearer TOKEN` on every request when set.
    pub token: Option<String>,
    /// Extra `Host` values to accept (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins to accept (`https://app.example:443`, `:*` for
    /// any port).
    pub allowed_origins: Vec<String>,
    /// How long sessions may idle and how many may live.
    pub sessions: SessionLimits,
}

/// A bound, not yet serving, HTTP endpoint.
pub struct HttpServer {
    listener: TcpListener,
    addr: SocketAddr,
    options: HttpOptions,
    sessions: Arc<BoundedSessions>,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free port). A non-loopback address needs
    /// a token of at least [`MIN_EXPOSED_TOKEN_CHARS`] characters.
    pub async fn bind(addr: SocketAddr, options: HttpOptions) -> Result<Self, ServeError> {
        axon_guard::check_exposure(addr, options.token.as_deref())?;
        let listener =
            TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
        let sessions = Arc::new(BoundedSessions::new(options.sessions));
        Ok(HttpServer { listener, addr, options, sessions })
    }

    /// The server's sessions, to observe how many are held.
    pub fn sessions(&self) -> Arc<BoundedSessions> {
        Arc::clone(&self.sessions)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL, as a host on this machine would use it.
    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }

    /// Serves sessions, each with a handler from `new_session`, until
    /// `shutdown` is cancelled.
    pub async fn serve<S, F>(
        self,
        new_session: F,
        shutdown: CancellationToken,
    ) -> Result<(), ServeError>
    where
        S: ServerHandler + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static,
    {
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(Hosts::new(self.addr, &self.options.allowed_hosts).names().to_vec())
            .with_allowed_origins(allowed_origins(&self.options))
            .enforce_origin_validation();
        config.cancellation_token = shutdown.child_token();
        let sessions = Arc::clone(&self.sessions);
        let service =
            StreamableHttpService::new(move || Ok(new_session()), Arc::clone(&sessions), config);
        let guard_sessions = Arc::clone(&sessions);
        let mut router = Router::new().route_service(PATH, service).layer(middleware::from_fn(
            move |request: Request, next: Next| {
                let sessions = Arc::clone(&guard_sessions);
                async move { answer_invalid(&sessions, request, next).await }
            },
        ));
        // Outermost: nothing is looked at before the token is checked.
        if let Some(token) = self.options.token {
            let expected: Arc<str> = Arc::from(token);
            router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
                let expected = Arc::clone(&expected);
                async move { require_token(&expected, request, next).await }
            }));
        }
        let reaper_stop = shutdown.child_token();
        let _stop_reaper = reaper_stop.clone().drop_guard();
        tokio::spawn(reap(sessions, reaper_stop));
        axum::serve(axon_guard::nodelay(self.listener), router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
            .map_err(ServeError::Http)
    }
}

/// Closes idle sessions even when no request comes to notice them.
async fn reap(sessions: Arc<BoundedSessions>, stop: CancellationToken) {
    let period =
        (sessions.limits().idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(period) => sessions.sweep().await,
        }
        if sessions.take_closed() {
            let _ = tokio::task::spawn_blocking(super::sessions::release_freed_memory).await;
        }
    }
}

/// Answers a body that is not a valid MCP message with a JSON-RPC error
/// instead of rmcp's bare 415 (after rmcp's own checks of Host, Origin,
/// Accept and Content-Type) or its "method not found" for a standard method
/// whose params do not fit; answers DELETE of an unknown session with 404
/// (rmcp says 202).
async fn answer_invalid(sessions: &BoundedSessions, request: Request, next: Next) -> Response {
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    match *request.method() {
        Method::DELETE => {
            let known = session.as_deref().map(|id| sessions.contains(id));
            let response = next.run(request).await;
            if known == Some(false) && response.status().is_success() {
                return unknown_session();
            }
            response
        }
        Method::POST => {
            let json = is_json(request.headers());
            let (parts, body) = request.into_parts();
            let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
                Ok(bytes) => bytes,
                Err(e) => {
                    return (
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!(
                            "cannot read the request body (the limit is {MAX_BODY} bytes): {e}"
                        ),
                    )
                        .into_response();
                }
            };
            let parsed = if json {
                Some(serde_json::from_slice::<ClientJsonRpcMessage>(&bytes))
            } else {
                None
            };
            // Params rmcp would take for a custom method ("method not found").
            if let Some(Ok(message)) = &parsed
                && let Some(invalid) = jsonrpc::misparsed(message)
            {
                return invalid_reply(sessions, session.as_deref(), &invalid);
            }
            let response = next.run(Request::from_parts(parts, Body::from(bytes.clone()))).await;
            match parsed {
                // rmcp's checks passed and only the body failed.
                Some(Err(error)) if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                    invalid_reply(sessions, session.as_deref(), &jsonrpc::diagnose(&bytes, &error))
                }
                _ => response,
            }
        }
        _ => next.run(request).await,
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The JSON-RPC error for a body that is not a valid message. A request
/// that could otherwise be served (its session is known, or it starts one)
/// is answered like any failed request, with 200; anything else is 400.
fn invalid_reply(
    sessions: &BoundedSessions,
    session: Option<&str>,
    invalid: &jsonrpc::Invalid,
) -> Response {
    if session.is_some_and(|id| !sessions.contains(id)) {
        return unknown_session();
    }
    let servable = invalid.is_request
        && (session.is_some() || invalid.method.as_deref() == Some("initialize"));
    let status = if servable { StatusCode::OK } else { StatusCode::BAD_REQUEST };
    (status, [(header::CONTENT_TYPE, "application/json")], invalid.response().to_string())
        .into_response()
}

fn unknown_session() -> Response {
    (
        StatusCode::NOT_FOUND,
        "Not Found: no session has this Mcp-Session-Id (it expired or was closed); send \
         initialize without one to start a new session",
    )
        .into_response()
}

async fn require_token(token: &str, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION);
    if given.is_some_and(|given| bearer_matches(given, token)) {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "this MCP server needs `Authorization: Bearer <token>` with the token it was started with",
    )
        .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Pages served from this machine, on any port, plus what the user added.
fn allowed_origins(options: &HttpOptions) -> Vec<String> {
    let mut origins = Vec::new();
    for scheme in ["http", "https"] {
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            origins.push(format!("{scheme}://{host}:*"));
        }
    }
    origins.extend(options.allowed_origins.iter().cloned());
    origins
}
