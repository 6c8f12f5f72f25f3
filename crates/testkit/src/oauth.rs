//! A small OAuth 2.1 authorization server and the MCP resource it protects,
//! on one loopback port, for tests of axon's MCP sign-in: protected
//! resource and authorization server metadata, dynamic client registration,
//! an authorization endpoint that redirects at once (checking PKCE S256 at
//! the token endpoint), refresh tokens, revocation, and a minimal stateless
//! streamable HTTP MCP endpoint with one tool (`whoami`) behind the bearer
//! check (401 with `resource_metadata` otherwise). Issued tokens start with
//! `secret-`, so a test can look for leaks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

#[derive(Default)]
struct Auth {
    base: String,
    /// code -> (PKCE challenge, client id)
    codes: HashMap<String, (String, String)>,
    access: Vec<String>,
    refresh: Vec<String>,
    registered: usize,
    refreshed: usize,
    issued: usize,
}

type ServerScript = Arc<Mutex<Auth>>;

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn query(raw: Option<String>) -> HashMap<String, String> {
    let url = format!("http://x/?{}", raw.unwrap_or_default());
    url::Url::parse(&url).unwrap().query_pairs().into_owned().collect()
}

async fn resource_metadata(State(auth): State<ServerScript>) -> axum::Json<Value> {
    let base = auth.lock().unwrap().base.clone();
    axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
}

async fn server_metadata(State(auth): State<ServerScript>) -> axum::Json<Value> {
    let base = auth.lock().unwrap().base.clone();
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }))
}

async fn register(
    State(auth): State<ServerScript>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let mut auth = auth.lock().unwrap();
    auth.registered += 1;
    let id = format!("client-{}", auth.registered);
    let answer = json!({"client_id": id, "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "none"});
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn authorize(State(auth): State<ServerScript>, RawQuery(raw): RawQuery) -> Response {
    let q = query(raw);
    if q.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return (StatusCode::BAD_REQUEST, "PKCE S256 required").into_response();
    }
    let mut auth = auth.lock().unwrap();
    auth.issued += 1;
    let code = format!("code-{}", auth.issued);
    auth.codes.insert(code.clone(), (q["code_challenge"].clone(), q["client_id"].clone()));
    let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
    to.query_pairs_mut().append_pair("code", &code).append_pair("state", &q["state"]);
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

fn tokens(auth: &mut Auth) -> Value {
    auth.issued += 1;
    let access = format!("secret-access-{}", auth.issued);
    let refresh = format!("secret-refresh-{}", auth.issued);
    auth.access.push(access.clone());
    auth.refresh.push(refresh.clone());
    json!({"access_token": access, "refresh_token": refresh, "token_type": "Bearer", "expires_in": 3600})
}

async fn token(State(auth): State<ServerScript>, body: String) -> Response {
    let form: HashMap<String, String> =
        url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let mut auth = auth.lock().unwrap();
    let refused = (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"})));
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, _client)) = auth.codes.remove(&form["code"]) else {
                return refused.into_response();
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            if base64url(&Sha256::digest(verifier.as_bytes())) != challenge {
                return refused.into_response();
            }
            axum::Json(tokens(&mut auth)).into_response()
        }
        Some("refresh_token") => {
            let given = form.get("refresh_token").cloned().unwrap_or_default();
            if !auth.refresh.contains(&given) {
                return refused.into_response();
            }
            auth.refreshed += 1;
            axum::Json(tokens(&mut auth)).into_response()
        }
        _ => refused.into_response(),
    }
}

/// The protected MCP endpoint: a minimal stateless streamable HTTP server
/// (JSON answers) with one tool, behind the bearer check.
async fn mcp(State(auth): State<ServerScript>, headers: HeaderMap, body: String) -> Response {
    let (known, base) = {
        let auth = auth.lock().unwrap();
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(String::from);
        (bearer.is_some_and(|t| auth.access.contains(&t)), auth.base.clone())
    };
    if !known {
        let challenge =
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)], "")
            .into_response();
    }
    let message: Value = serde_json::from_str(&body).unwrap_or_default();
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1"}
        }),
        Some("tools/list") => json!({"tools": [
            {"name": "whoami", "description": "who is signed in", "inputSchema": {"type": "object"}}
        ]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "signed in"}]}),
        _ => json!({}),
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// The server, running on its own runtime until dropped.
pub struct OAuthServer {
    runtime: tokio::runtime::Runtime,
    auth: ServerScript,
    /// `http://127.0.0.1:PORT`; the MCP endpoint is `{base}/mcp`.
    pub base: String,
}

impl OAuthServer {
    /// Clients registered dynamically so far.
    pub fn registered(&self) -> usize {
        self.auth.lock().unwrap().registered
    }

    /// Refresh grants honoured so far.
    pub fn refreshed(&self) -> usize {
        self.auth.lock().unwrap().refreshed
    }

    /// Revokes every access and refresh token issued so far.
    pub fn revoke_all(&self) {
        let mut auth = self.auth.lock().unwrap();
        auth.access.clear();
        auth.refresh.clear();
    }

    /// Stops it.
    pub fn stop(self) {
        self.runtime.shutdown_background();
    }
}

/// Starts the server on a free loopback port.
pub fn start() -> OAuthServer {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let auth: ServerScript = Arc::default();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    auth.lock().unwrap().base = base.clone();
    let app = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/.well-known/oauth-protected-resource", get(resource_metadata))
        .route("/.well-known/oauth-authorization-server", get(server_metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .with_state(Arc::clone(&auth));
    runtime.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    OAuthServer { runtime, auth, base }
}
