//! One sign-in: the OAuth 2.1 authorization-code flow with PKCE, the user's
//! browser sent back to a loopback port.
//!
//! Steps: an unauthenticated `initialize` to the server, whose 401 carries
//! the `WWW-Authenticate` challenge; discovery (protected resource metadata,
//! then authorization server metadata) and client registration (the
//! configured client id, else a client ID metadata document where the server
//! takes one and one is configured, else dynamic registration), all by
//! rmcp; a listener on 127.0.0.1 (the configured callback port or a free
//! one); the authorization URL handed to `send_user` (the CLI opens a
//! browser and prints it; a test follows it itself); the redirect awaited
//! at most [`LOGIN_WAIT`]; its `state` checked against the one sent (rmcp's
//! state store) and the code exchanged; the tokens stored.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::response::Html;
use rmcp::transport::auth::{AuthorizationCallback, AuthorizationRequest, OAuthState};
use tokio::sync::oneshot;

use super::store::{FileStore, token_path};
use crate::config::{ServerConfig, Transport};

/// How long a sign-in waits for the browser to come back.
pub const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// A finished sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginDone {
    /// Where the tokens are kept.
    pub token_file: std::path::PathBuf,
    /// The scopes granted, when the server said.
    pub scopes: Vec<String>,
}

type Redirect = Result<String, String>;
type Pending = Arc<Mutex<Option<oneshot::Sender<Redirect>>>>;

/// Signs in to `server` (an HTTP server whose token folder is set), handing
/// the authorization URL to `send_user` and waiting at most `wait` for the
/// browser to come back.
pub async fn login<F, Fut>(
    server: &ServerConfig,
    wait: Duration,
    send_user: F,
) -> Result<LoginDone, String>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let Transport::Http { url, headers, oauth, .. } = &server.transport else {
        return Err(format!(
            "MCP server {} is a local command; signing in is for servers reached over HTTP (url)",
            server.name
        ));
    };
    let Some(dir) = &oauth.token_dir else {
        return Err("no data folder is known to keep tokens in".to_string());
    };
    let name = &server.name;
    // HTTPS needs a crypto provider, installed once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = FileStore { path: token_path(dir, name, url) };
    // A 403 asking for more scope, kept from a session, wins over the
    // probe's plain 401: it names the scope this sign-in must ask for.
    let kept = super::challenge_path(dir, name, url);
    let challenge = match std::fs::read_to_string(&kept) {
        Ok(text) if !text.trim().is_empty() => Some(text.trim().to_string()),
        _ => challenge(url, headers).await?,
    };

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", oauth.callback_port.unwrap_or(0)))
        .await
        .map_err(|e| match oauth.callback_port {
            Some(port) => {
                format!("cannot listen on 127.0.0.1:{port} for the browser (callback_port): {e}")
            }
            None => format!("cannot listen on 127.0.0.1 for the browser: {e}"),
        })?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let mut manager = rmcp::transport::auth::AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| format!("cannot set up OAuth for {url}: {e}"))?;
    manager.set_credential_store(store.clone());
    let mut state = OAuthState::Unauthorized(manager);
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name("axon");
    if !oauth.scopes.is_empty() {
        request = request.with_scopes(oauth.scopes.clone());
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = super::client_secret(oauth)? {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(metadata) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(metadata);
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state
        .start_authorization(request)
        .await
        .map_err(|e| format!("MCP server {name}: signing in could not start: {e}"))?;
    let OAuthState::Session(session) = &state else {
        return Err(format!("MCP server {name}: signing in could not start"));
    };

    let (sender, receiver) = oneshot::channel();
    let pending: Pending = Arc::new(Mutex::new(Some(sender)));
    let app = axum::Router::new().route("/callback", axum::routing::get(callback)).with_state((
        Arc::clone(&pending),
        name.clone(),
        port,
    ));
    let served = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    send_user(session.get_authorization_url().to_string()).await;
    let redirect = tokio::time::timeout(wait, receiver).await;
    served.abort();
    let redirect = match redirect {
        Ok(Ok(redirect)) => redirect?,
        Ok(Err(_)) => return Err("the sign-in listener stopped".to_string()),
        Err(_) => {
            return Err(format!(
                "the browser did not come back to 127.0.0.1:{port} within {}s; run `axon mcp login {name}` again",
                wait.as_secs()
            ));
        }
    };
    let callback = AuthorizationCallback::from_redirect_url(&redirect)
        .map_err(|e| format!("the browser came back without a usable answer: {e}"))?;
    session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| format!("MCP server {name}: the sign-in was not accepted: {e}"))?;
    let scopes = session.auth_manager.get_current_scopes().await;
    let _ = std::fs::remove_file(&kept);
    Ok(LoginDone { token_file: store.path, scopes })
}

/// The loopback redirect: hands the full URL (code, state, iss) or the
/// authorization server's error to the waiting sign-in, once.
async fn callback(
    State((pending, name, port)): State<(Pending, String, u16)>,
    RawQuery(query): RawQuery,
) -> Html<String> {
    let query = query.unwrap_or_default();
    let url = format!("http://127.0.0.1:{port}/callback?{query}");
    let error = reqwest::Url::parse(&url).ok().and_then(|parsed| {
        let pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
        let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        get("error").map(|error| match get("error_description") {
            Some(description) => format!("{error}: {description}"),
            None => error,
        })
    });
    let (answer, page) = match error {
        Some(error) => (
            Err(format!("the authorization server refused: {error}")),
            format!("Signing in to {name} failed: {error}. You can close this tab."),
        ),
        None => {
            (Ok(url), format!("Signed in to {name}. You can close this tab and go back to axon."))
        }
    };
    if let Some(sender) = pending.lock().unwrap_or_else(PoisonError::into_inner).take() {
        let _ = sender.send(answer);
    }
    Html(format!("<!doctype html><title>axon</title><p>{}</p>", html_escape(&page)))
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated
/// `initialize`, if it refuses one (401); `None` when it does not.
async fn challenge(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<Option<String>, String> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "axon", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let mut request = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(initialize.to_string());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request.send().await.map_err(|e| format!("cannot reach {url}: {e}"))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}
