//! Streamable HTTP for any `rmcp` server handler, mounted in axum at `/mcp`,
//! with what a server on a developer's machine needs to be safe:
//!
//! - It binds loopback unless told otherwise, and [`HttpServer::bind`]
//!   refuses any other address without a bearer token: a tool server on a
//!   LAN address with no token is a remote shell.
//! - `Host` must name this machine (DNS-rebinding protection) and a browser's
//!   `Origin` must be a loopback page; `rmcp` checks both and answers 403.
//! - With a token, every request must carry `Authorization: Bearer TOKEN`
//!   (compared in constant time) or gets 401 before reaching the handler.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::ServeError;

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
}

/// A bound, not yet serving, HTTP endpoint.
pub struct HttpServer {
    listener: TcpListener,
    addr: SocketAddr,
    options: HttpOptions,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free port). A non-loopback address needs
    /// a token.
    pub async fn bind(addr: SocketAddr, options: HttpOptions) -> Result<Self, ServeError> {
        if !addr.ip().is_loopback() && options.token.is_none() {
            return Err(ServeError::ExposedWithoutToken(addr));
        }
        let listener =
            TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
        Ok(HttpServer { listener, addr, options })
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
            .with_allowed_hosts(allowed_hosts(self.addr, &self.options))
            .with_allowed_origins(allowed_origins(&self.options))
            .enforce_origin_validation();
        config.cancellation_token = shutdown.child_token();
        let service = StreamableHttpService::new(
            move || Ok(new_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let mut router = Router::new().route_service(PATH, service);
        if let Some(token) = self.options.token {
            let expected: Arc<str> = Arc::from(format!("Bearer {token}"));
            router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
                let expected = Arc::clone(&expected);
                async move { require_token(&expected, request, next).await }
            }));
        }
        axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
            .map_err(ServeError::Http)
    }
}

async fn require_token(expected: &str, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    if given.is_some_and(|given| constant_time_eq(given, expected.as_bytes())) {
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

/// Equal-length inputs take the same time whatever they hold, so a wrong
/// token's timing says nothing about the right one.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// This machine's names (any port) plus the bound address itself when it is
/// a specific non-loopback one, plus what the user added.
fn allowed_hosts(addr: SocketAddr, options: &HttpOptions) -> Vec<String> {
    let mut hosts: Vec<String> =
        ["localhost", "127.0.0.1", "::1"].into_iter().map(String::from).collect();
    let ip = addr.ip();
    if !ip.is_loopback() && !ip.is_unspecified() {
        hosts.push(ip.to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    hosts
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_content_and_length() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }

    #[test]
    fn a_specific_lan_address_is_an_allowed_host() {
        let hosts = allowed_hosts("192.0.2.7:80".parse().unwrap(), &HttpOptions::default());
        assert!(hosts.contains(&"192.0.2.7".to_string()));
        let hosts = allowed_hosts("0.0.0.0:80".parse().unwrap(), &HttpOptions::default());
        assert!(!hosts.contains(&"0.0.0.0".to_string()));
    }
}
