//! axon's MCP server stays bounded and answers every invalid request:
//! sessions expire when idle and are capped in number (counted, never timed
//! or measured in memory), unknown sessions get 404, a bad body gets a
//! JSON-RPC error with the request's id over HTTP and over stdio, and the
//! bearer scheme is read in any letter case.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_mcp::server::http::{BoundedSessions, HttpOptions, HttpServer, SessionLimits};
use axon_mcp::server::{ToolServer, serve_lines};
use axon_tools::{Profile, ToolContext, Workspace};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

fn tool_server(workspace: &tempfile::TempDir) -> ToolServer {
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    let context = ToolContext::new(Workspace::new(workspace.path()).unwrap());
    ToolServer::new(Arc::new(Profile::Code.registry()), context, "test".into(), true)
}

struct Served {
    url: String,
    sessions: Arc<BoundedSessions>,
    client: reqwest::Client,
    _stop: tokio_util::sync::DropGuard,
    _workspace: tempfile::TempDir,
}

async fn serve(options: HttpOptions) -> Served {
    let workspace = tempfile::tempdir().unwrap();
    let server = tool_server(&workspace);
    let http = HttpServer::bind("127.0.0.1:0".parse().unwrap(), options).await.unwrap();
    let url = http.url();
    let sessions = http.sessions();
    let stop = CancellationToken::new();
    tokio::spawn(http.serve(move || server.session(), stop.clone()));
    Served {
        url,
        sessions,
        client: {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::new()
        },
        _stop: stop.drop_guard(),
        _workspace: workspace,
    }
}

fn limits(idle: Duration, max_sessions: usize) -> HttpOptions {
    HttpOptions { sessions: SessionLimits { idle, max_sessions }, ..HttpOptions::default() }
}

struct Reply {
    status: StatusCode,
    session: Option<String>,
    /// The JSON-RPC message the body holds (plain JSON or the SSE events'
    /// last data line), or `Null`.
    message: Value,
}

impl Served {
    async fn send(
        &self,
        method: reqwest::Method,
        session: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Reply {
        let mut request = self
            .client
            .request(method, &self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2025-06-18")
            .timeout(Duration::from_secs(60));
        if let Some(id) = session {
            request = request.header("Mcp-Session-Id", id);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let session =
            response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
        let text = response.text().await.unwrap();
        let message = serde_json::from_str(&text).unwrap_or_else(|_| {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .next_back()
                .unwrap_or(Value::Null)
        });
        Reply { status, session, message }
    }

    async fn post(&self, session: Option<&str>, body: &str) -> Reply {
        self.send(reqwest::Method::POST, session, &[], Some(body.to_string())).await
    }

    /// A new session, initialized.
    async fn initialize(&self) -> String {
        let reply = self.post(None, &initialize_body(0)).await;
        assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.message);
        let session = reply.session.expect("a session id");
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        assert_eq!(self.post(Some(&session), &done).await.status, StatusCode::ACCEPTED);
        session
    }

    /// `tools/list` in `session`: its status.
    async fn list(&self, session: &str) -> StatusCode {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        let reply = self.post(Some(session), &body).await;
        if reply.status == StatusCode::OK {
            assert!(reply.message["result"]["tools"].is_array(), "{:?}", reply.message);
        }
        reply.status
    }
}

fn initialize_body(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bounds-test", "version": "1"}}})
    .to_string()
}

/// Waits until `condition` holds, failing after a generous deadline.
async fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_cap_evict_the_one_idle_longest() {
    let served = serve(limits(Duration::from_secs(3600), 3)).await;
    let a = served.initialize().await;
    let b = served.initialize().await;
    let c = served.initialize().await;
    assert_eq!(served.sessions.live(), 3);
    // A is used again, so B is now the one idle the longest.
    assert_eq!(served.list(&a).await, StatusCode::OK);
    let d = served.initialize().await;
    assert_eq!(served.sessions.live(), 3);
    assert_eq!(served.list(&b).await, StatusCode::NOT_FOUND, "the evicted session");
    for session in [&a, &c, &d] {
        assert_eq!(served.list(session).await, StatusCode::OK);
    }
    // A flood stays within the cap.
    for _ in 0..20 {
        served.initialize().await;
        assert!(served.sessions.live() <= 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_and_then_gets_404_everywhere() {
    // Idle long enough that the session cannot expire between the
    // initialize and the count below, however busy the machine.
    let served = serve(limits(Duration::from_secs(3), 16)).await;
    let session = served.initialize().await;
    assert_eq!(served.sessions.live(), 1);
    // The server's own sweep frees it; no request has to come.
    wait_for("the idle session to be closed", || served.sessions.live() == 0).await;
    assert_eq!(served.list(&session).await, StatusCode::NOT_FOUND);
    let get = served.send(reqwest::Method::GET, Some(&session), &[], None).await;
    assert_eq!(get.status, StatusCode::NOT_FOUND);
    let delete = served.send(reqwest::Method::DELETE, Some(&session), &[], None).await;
    assert_eq!(delete.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_still_running_keeps_its_session() {
    let served = serve(limits(Duration::from_millis(200), 16)).await;
    let session = served.initialize().await;
    // The call outlasts the idle time many times over.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "shell", "arguments": {"command": "sleep 2; echo done"}}})
    .to_string();
    let reply = served.post(Some(&session), &body).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.message["id"], 2, "{:?}", reply.message);
    let text = reply.message["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("done"), "{:?}", reply.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_unknown_or_closed_session_gets_404() {
    let served = serve(HttpOptions::default()).await;
    let unknown = served.send(reqwest::Method::DELETE, Some("no-such-session"), &[], None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let session = served.initialize().await;
    let first = served.send(reqwest::Method::DELETE, Some(&session), &[], None).await;
    assert!(first.status.is_success(), "{}", first.status);
    assert_eq!(served.sessions.live(), 0);
    let again = served.send(reqwest::Method::DELETE, Some(&session), &[], None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(served.list(&session).await, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_gets_400_with_a_parse_error() {
    let served = serve(HttpOptions::default()).await;
    let session = served.initialize().await;
    for session in [Some(session.as_str()), None] {
        let reply = served.post(session, r#"{"jsonrpc": "2.0", "id": 3, "method": "#).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "session {session:?}");
        assert_eq!(reply.message["error"]["code"], -32700, "{:?}", reply.message);
        assert_eq!(reply.message["id"], Value::Null);
    }
    // An unknown session is still a 404 first.
    let reply = served.post(Some("gone"), "{not json").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_over_http_get_their_id_back() {
    let served = serve(HttpOptions::default()).await;
    let session = served.initialize().await;
    let wrong_name = json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
                            "params": {"name": 5, "arguments": {}}});
    let reply = served.post(Some(&session), &wrong_name.to_string()).await;
    assert_eq!(reply.message["id"], "call-1", "{:?}", reply.message);
    assert_eq!(reply.message["error"]["code"], -32602, "{:?}", reply.message);
    let message = reply.message["error"]["message"].as_str().unwrap();
    assert!(message.contains("`name`") && message.contains("string"), "{message}");

    let wrong_arguments = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                 "params": {"name": "read_file", "arguments": "a.txt"}});
    let reply = served.post(Some(&session), &wrong_arguments.to_string()).await;
    assert_eq!(
        (reply.message["id"].clone(), reply.message["error"]["code"].clone()),
        (json!(8), json!(-32602))
    );
    assert!(reply.message["error"]["message"].as_str().unwrap().contains("`arguments`"));

    let old_version = json!({"jsonrpc": "1.0", "id": 9, "method": "ping"});
    let reply = served.post(Some(&session), &old_version.to_string()).await;
    assert_eq!(reply.message["id"], 9, "{:?}", reply.message);
    assert_eq!(reply.message["error"]["code"], -32600);

    let bad_initialize = json!({"jsonrpc": "2.0", "id": 10, "method": "initialize",
                                "params": {"protocolVersion": 2025, "capabilities": {}}});
    let reply = served.post(None, &bad_initialize.to_string()).await;
    assert_eq!(reply.message["id"], 10, "{:?}", reply.message);
    assert_eq!(reply.message["error"]["code"], -32602);
    assert_eq!(served.sessions.live(), 1, "a refused initialize makes no session");

    // The session still works.
    assert_eq!(served.list(&session).await, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_read_in_any_letter_case() {
    let token = "a-token-for-the-case-test";
    let served = serve(HttpOptions { token: Some(token.into()), ..HttpOptions::default() }).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let value = format!("{scheme} {token}");
        let reply = served
            .send(
                reqwest::Method::POST,
                None,
                &[("Authorization", &value)],
                Some(initialize_body(1)),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{scheme}");
    }
    let wrong = format!("Bearer {}", token.to_uppercase());
    let reply = served
        .send(reqwest::Method::POST, None, &[("Authorization", &wrong)], Some(initialize_body(1)))
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_over_stdio_get_their_id_back() {
    let workspace = tempfile::tempdir().unwrap();
    let server = tool_server(&workspace);
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(serve_lines(server, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("a reply within a minute")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    };
    let mut send = async |text: &str| {
        client_write.write_all(text.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    };

    send(&initialize_body(0)).await;
    assert_eq!(next().await["id"], 0);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;

    send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}"#).await;
    let reply = next().await;
    assert_eq!((reply["id"].clone(), reply["error"]["code"].clone()), (json!(5), json!(-32602)));
    assert!(reply["error"]["message"].as_str().unwrap().contains("`name`"), "{reply}");

    send(r#"{"jsonrpc":"1.0","id":"s-6","method":"ping"}"#).await;
    let reply = next().await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!("s-6"), json!(-32600))
    );

    // Text that is not JSON has no id to answer: the next reply is the ping's.
    send("this is not json").await;
    send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).await;
    let reply = next().await;
    assert_eq!(reply["id"], 7, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");

    serving.abort();
}
