//! The reference MCP servers `server-filesystem` and `server-memory` (npm,
//! pinned in tests/peers/), started together, used for real.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use serde_json::json;

fn peer_js(package: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(path.exists(), "{} is missing: run scripts/peers", path.display());
    path.display().to_string()
}

fn node_server(name: &str, args: Vec<String>, env: BTreeMap<String, String>) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio { command: "node".into(), args, env, cwd: None },
        enabled: true,
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Some(Duration::from_secs(30)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_and_memory_servers_work_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "axon was here\n").unwrap();
    let memory_file = root.join("memory.jsonl");
    let manager = McpManager::start(
        vec![
            node_server(
                "files",
                vec![peer_js("server-filesystem"), root.display().to_string()],
                BTreeMap::new(),
            ),
            node_server(
                "memory",
                vec![peer_js("server-memory")],
                BTreeMap::from([(
                    "MEMORY_FILE_PATH".to_string(),
                    memory_file.display().to_string(),
                )]),
            ),
        ],
        &root,
    )
    .await;
    for status in manager.statuses() {
        assert_eq!(status.state, ServerState::Ready, "{status:?}");
    }

    let listing =
        manager.call("files", "list_directory", json!({"path": root.display().to_string()})).await;
    assert!(listing.text_content().contains("notes.txt"), "{listing:?}");
    let read = manager
        .call(
            "files",
            "read_text_file",
            json!({"path": root.join("notes.txt").display().to_string()}),
        )
        .await;
    assert_eq!(read.text_content().trim(), "axon was here");
    let outside = manager.call("files", "read_text_file", json!({"path": "/etc/hostname"})).await;
    assert!(
        outside.is_error,
        "the filesystem server let a read outside its root through: {outside:?}"
    );

    let entities = json!({"entities": [{"name": "axon", "entityType": "project", "observations": ["written in Rust"]}]});
    let created = manager.call("memory", "create_entities", entities).await;
    assert!(!created.is_error, "{created:?}");
    let graph = manager.call("memory", "read_graph", json!({})).await;
    assert!(graph.text_content().contains("written in Rust"), "{graph:?}");
    assert!(memory_file.exists(), "the memory server did not keep its graph where it was told");

    manager.shutdown().await;
    assert_eq!(manager.active(), 0);
}
