//! `axon mcp login` end to end, through the real `axon` binary, against a
//! small OAuth 2.1 authorization server and a protected MCP resource served
//! here on a free loopback port: discovery from the 401's
//! `WWW-Authenticate`, dynamic client registration, PKCE (S256 checked),
//! the loopback redirect (this test plays the browser), a tool call with the
//! token, a refresh of an expired token before use, and a revoked token
//! leaving the server "needs login" with the command to run. The token file
//! is 0600 and no token appears in the workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
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

type Shared = Arc<Mutex<Auth>>;

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

async fn resource_metadata(State(auth): State<Shared>) -> axum::Json<Value> {
    let base = auth.lock().unwrap().base.clone();
    axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
}

async fn server_metadata(State(auth): State<Shared>) -> axum::Json<Value> {
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

async fn register(State(auth): State<Shared>, axum::Json(body): axum::Json<Value>) -> Response {
    let mut auth = auth.lock().unwrap();
    auth.registered += 1;
    let id = format!("client-{}", auth.registered);
    let answer = json!({"client_id": id, "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "none"});
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn authorize(State(auth): State<Shared>, RawQuery(raw): RawQuery) -> Response {
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

async fn token(State(auth): State<Shared>, body: String) -> Response {
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
async fn mcp(State(auth): State<Shared>, headers: HeaderMap, body: String) -> Response {
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

struct Server {
    runtime: tokio::runtime::Runtime,
    auth: Shared,
    base: String,
}

fn start_server() -> Server {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let auth: Shared = Arc::default();
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
    Server { runtime, auth, base }
}

fn axon(home: &Path, workspace: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home)
        .current_dir(workspace);
    cmd
}

/// Runs `cmd` to the end, bounded; (status ok, stdout, stderr).
fn run(mut cmd: std::process::Command) -> (bool, String, String) {
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A plain HTTP/1.1 GET, no redirects followed: (status line, Location).
fn http_get(url: &str) -> (String, Option<String>) {
    let parsed = url::Url::parse(url).unwrap();
    let address = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap());
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let path = match parsed.query() {
        Some(q) => format!("{}?{q}", parsed.path()),
        None => parsed.path().to_string(),
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        parsed.authority()
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.lines().next().unwrap_or("").to_string();
    let location = text
        .lines()
        .find_map(|l| l.strip_prefix("location: ").or_else(|| l.strip_prefix("Location: ")))
        .map(|l| l.trim().to_string());
    (status, location)
}

/// `axon mcp login remote`, this test playing the browser: it reads the
/// printed URL, GETs it and follows its redirect to the loopback port.
fn login(home: &Path, workspace: &Path) -> String {
    let mut cmd = axon(home, workspace);
    cmd.args(["mcp", "login", "remote", "--no-browser"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(read > 0, "axon mcp login ended before printing a URL:\n{seen}");
        seen.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http") {
            break format!("http{url}");
        }
    };
    let (status, location) = http_get(&url);
    assert!(status.contains("302"), "{status}");
    let location = location.unwrap();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let (status, _) = http_get(&location);
    assert!(status.contains("200"), "{status}");
    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{seen}{rest}{stdout}");
    stdout
}

fn token_files(home: &Path) -> Vec<PathBuf> {
    let dir = home.join("data").join("mcp-tokens");
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

fn all_text_under(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&all_text_under(&path));
        } else if let Ok(content) = std::fs::read(&path) {
            text.push_str(&String::from_utf8_lossy(&content));
        }
    }
    text
}

#[test]
fn login_call_refresh_revoke_and_logout() {
    let server = start_server();
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[mcp_servers.remote]\nurl = \"{}/mcp\"\n", server.base),
    )
    .unwrap();

    // Before any login: the server refuses, and says what to run.
    let mut list = axon(home.path(), workspace.path());
    list.args(["mcp", "list"]);
    let (_, stdout, stderr) = run(list);
    assert!(stdout.contains("needs login: run `axon mcp login remote`"), "{stdout}{stderr}");

    let said = login(home.path(), workspace.path());
    assert!(said.contains("Signed in to remote"), "{said}");
    assert_eq!(server.auth.lock().unwrap().registered, 1, "dynamic registration");
    let files = token_files(home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(stored.contains("secret-access-"));
    assert!(!said.contains("secret-"), "{said}");

    // A tool call with the token.
    let call = |name: &str| {
        let mut cmd = axon(home.path(), workspace.path());
        cmd.args(["mcp", "call", "remote", name, "{}"]);
        run(cmd)
    };
    let (ok, stdout, stderr) = call("whoami");
    assert!(ok && stdout.contains("signed in"), "{stdout}{stderr}");
    assert!(!stderr.contains("secret-") && !stdout.contains("secret-"));

    // An expired token is refreshed before it is used.
    let mut credentials: Value = serde_json::from_str(&stored).unwrap();
    credentials["token_received_at"] = json!(1);
    std::fs::write(&files[0], credentials.to_string()).unwrap();
    let (ok, stdout, stderr) = call("whoami");
    assert!(ok && stdout.contains("signed in"), "{stdout}{stderr}");
    assert_eq!(server.auth.lock().unwrap().refreshed, 1, "one refresh");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "still private after the refresh wrote it");

    // Revoked: the refresh is refused too, and the server needs login.
    {
        let mut auth = server.auth.lock().unwrap();
        auth.access.clear();
        auth.refresh.clear();
    }
    let (ok, stdout, stderr) = call("whoami");
    assert!(!ok, "{stdout}{stderr}");
    assert!(format!("{stdout}{stderr}").contains("axon mcp login remote"), "{stdout}{stderr}");
    let mut list = axon(home.path(), workspace.path());
    list.args(["mcp", "list"]);
    let (_, stdout, stderr) = run(list);
    assert!(stdout.contains("needs login: run `axon mcp login remote`"), "{stdout}{stderr}");

    // Nothing of the tokens is in the workspace.
    assert!(!all_text_under(workspace.path()).contains("secret-"));

    let mut logout = axon(home.path(), workspace.path());
    logout.args(["mcp", "logout", "remote"]);
    let (ok, stdout, _) = run(logout);
    assert!(ok && stdout.contains("Signed out of remote"), "{stdout}");
    assert!(token_files(home.path()).is_empty());
    let mut again = axon(home.path(), workspace.path());
    again.args(["mcp", "logout", "remote"]);
    let (ok, stdout, _) = run(again);
    assert!(ok && stdout.contains("No tokens were kept"), "{stdout}");
    drop(server.runtime);
}
