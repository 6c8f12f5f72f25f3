//! The client side of the official MCP conformance suite
//! (`conformance client --command mcp-conformance-client --scenario NAME`):
//! axon's MCP client manager, connected over streamable HTTP to the URL the
//! suite passes last, doing what the scenario in `MCP_CONFORMANCE_SCENARIO`
//! asks. Exits 0 when the server was reached and the scenario's call made.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use serde_json::json;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(url) = std::env::args().next_back().filter(|u| u.starts_with("http")) else {
        eprintln!(
            "usage: mcp-conformance-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let config = ServerConfig {
        name: "conformance".into(),
        transport: Transport::Http {
            url,
            headers: BTreeMap::new(),
            bearer_token_env: None,
            oauth: Default::default(),
        },
        enabled: true,
        startup_timeout: Duration::from_secs(10),
        tool_timeout: Some(Duration::from_secs(10)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "conformance".into(),
        sandbox: Default::default(),
    };
    let dir = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let manager = McpManager::start(vec![config], &dir).await;
    let status = &manager.statuses()[0];
    if status.state != ServerState::Ready {
        eprintln!("mcp-conformance-client: not connected: {status:?}");
        manager.shutdown().await;
        std::process::exit(1);
    }
    let call = match scenario.as_str() {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    };
    let mut code = 0;
    if let Some((tool, arguments)) = call {
        let output = manager.call("conformance", tool, arguments).await;
        println!("{tool}: {}", output.text_content());
        if output.is_error {
            code = 1;
        }
    }
    manager.shutdown().await;
    std::process::exit(code);
}
