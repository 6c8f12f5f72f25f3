//! axon's MCP client over streamable HTTP opens the session's standalone
//! stream before its first request: a server that answers the standalone
//! GET late still sees no request before it has answered (the order the
//! conformance suite's `sse-retry` scenario needs for the client to resume
//! its request's stream with `Last-Event-ID`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::server::ToolServer;
use axon_mcp::{McpManager, ServerState};
use axon_tools::{Profile, ToolContext, Workspace};
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

type Log = Arc<Mutex<Vec<String>>>;

/// Holds the standalone GET's answer back a while and logs when each
/// request arrives and when the GET is answered.
async fn observe(log: Log, request: Request, next: Next) -> Response {
    let standalone = request.method() == axum::http::Method::GET
        && !request.headers().contains_key("last-event-id");
    if standalone {
        // Long enough that a client not waiting for it sends its next
        // request first; the test asserts order, never this time.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let response = next.run(request).await;
        log.lock().unwrap().push("standalone answered".into());
        return response;
    }
    if request.method() == axum::http::Method::POST {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let method = value["method"].as_str().unwrap_or("response").to_string();
        log.lock().unwrap().push(format!("post {method}"));
        return next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await;
    }
    next.run(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_waits_for_the_standalone_stream() {
    let workspace = tempfile::tempdir().unwrap();
    let context = ToolContext::new(Workspace::new(workspace.path()).unwrap());
    let tools = ToolServer::new(Arc::new(Profile::Code.registry()), context, "test".into(), true);
    let service = StreamableHttpService::new(
        move || Ok(tools.session()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let log = Log::default();
    let logged = Arc::clone(&log);
    let router = axum::Router::new().route_service("/mcp", service).layer(middleware::from_fn(
        move |request: Request, next: Next| observe(Arc::clone(&logged), request, next),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let config = ServerConfig {
        name: "ordered".into(),
        transport: Transport::Http {
            url,
            headers: BTreeMap::new(),
            bearer_token_env: None,
            oauth: Default::default(),
        },
        enabled: true,
        startup_timeout: Duration::from_secs(60),
        tool_timeout: Some(Duration::from_secs(60)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    };
    let manager = McpManager::start(vec![config], workspace.path()).await;
    assert_eq!(manager.statuses()[0].state, ServerState::Ready, "{:?}", manager.statuses());
    manager.shutdown().await;
    server.abort();

    let log = log.lock().unwrap().clone();
    let answered = log.iter().position(|e| e == "standalone answered").expect("a standalone GET");
    let first_request = log
        .iter()
        .position(|e| {
            e.starts_with("post ") && e != "post initialize" && !e.contains("notifications/")
        })
        .expect("a request after initialize");
    assert!(answered < first_request, "a request went out before the standalone stream: {log:?}");
}
