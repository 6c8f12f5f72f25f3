//! `axon mcp serve` keeps secrets from another host's model too (issue 36
//! §1): a result's secrets are masked before the host gets it, and the
//! host is told where by a warning log message; masking off leaves them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use axon_mcp::server::{ToolServer, serve_lines};
use axon_tools::{Profile, ToolContext, Workspace};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A GitLab token made at run time, so no source file holds one.
fn token() -> String {
    format!("{}{}", ["gl", "pat-"].concat(), "Xy7Pq2Lm9Vn4Bc8Rt1Kd")
}

/// The result of `read_file(.env)` and the log messages sent before it.
async fn read_env(mask_secrets: bool) -> (Value, Vec<Value>) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join(".env"), format!("# ci\nGITLAB_TOKEN={}\n", token()))
        .unwrap();
    let context = ToolContext::new(Workspace::new(workspace.path()).unwrap());
    let server =
        ToolServer::new(Arc::new(Profile::Code.registry()), context, "test".into(), mask_secrets);
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(serve_lines(server, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut send = async |message: Value| {
        client_write.write_all(message.to_string().as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "secrets-test", "version": "1"}}}))
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": ".env"}}}))
    .await;
    let mut logs = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("a reply within a minute")
            .unwrap()
            .expect("the server is still there");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "notifications/message" {
            logs.push(message["params"].clone());
        } else if message["id"] == 1 {
            serving.abort();
            return (message["result"].clone(), logs);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_result_is_masked_and_the_host_told_where() {
    let (result, logs) = read_env(true).await;
    let text = result.to_string();
    assert!(!text.contains(&token()), "{text}");
    assert!(text.contains("GITLAB_TOKEN=[SECRET:gitlab-pat:glpa…]"), "{text}");
    let warned = logs
        .iter()
        .any(|log| log["level"] == "warning" && log.to_string().contains(".env:2 (gitlab-pat)"));
    assert!(warned, "{logs:?}");
    assert!(!logs.iter().any(|log| log.to_string().contains(&token())), "{logs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_masking_off_the_result_is_as_the_tool_gave_it() {
    let (result, _) = read_env(false).await;
    assert!(result.to_string().contains(&token()), "{result}");
}
