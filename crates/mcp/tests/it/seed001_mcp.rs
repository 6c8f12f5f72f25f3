//! Seed 001 properties 4 and 5 of the MCP client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::naming::ToolNames;
use axon_mcp::{McpManager, ServerState};
use axon_tools::Profile;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

/// A scripted MCP server on stdio: answers initialize and tools/list with
/// `tools` tools, ignores notifications, exits when stdin closes.
fn scripted_server(name: &str, tools: usize) -> ServerConfig {
    let list: Vec<String> = (0..tools)
        .map(|i| {
            format!(r#"{{"name":"tool{i}","description":"t","inputSchema":{{"type":"object"}}}}"#)
        })
        .collect();
    let script = format!(
        r#"while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"scripted","version":"1"}}}}}}\n' "$id" ;;
    *'"tools/list"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"tools":[{list}]}}}}\n' "$id" ;;
  esac
done"#,
        list = list.join(",")
    );
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script],
            env: BTreeMap::new(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(10),
        tool_timeout: None,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    }
}

proptest! {
    #![proptest_config(config())]

    /// Property 4 (seed 001): MCP 工具合并完整性. *For any* set of built-in
    /// ToolDefinitions and MCP-discovered tool definitions, the merged tool
    /// list has length (built-in count + MCP count), and every MCP tool name
    /// carries the `mcp_{serverName}_` prefix.
    #[test]
    fn seed001_prop04_mcp_tools_merge_completely_with_prefixes(
        servers in prop::collection::btree_map("[a-zA-Z0-9_-]{1,20}", prop::collection::btree_set("[^\u{0}]{1,80}", 0..8), 0..5),
    ) {
        let builtin: Vec<String> = Profile::Code.registry().names().map(String::from).collect();
        let builtin_set: HashSet<&str> = builtin.iter().map(String::as_str).collect();
        let mut names = ToolNames::new();
        let mut merged = builtin.clone();
        let mut mcp_count = 0;
        for (server, tools) in &servers {
            for tool in tools {
                let taken: HashSet<String> = merged.iter().cloned().collect();
                let name = names.assign(server, tool, &|n| builtin_set.contains(n) || taken.contains(n));
                prop_assert!(name.starts_with(&format!("mcp_{server}_")), "{} lacks the prefix of {}", name, server);
                prop_assert!(name.len() <= 64);
                prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
                prop_assert_eq!(names.resolve(&name), Some((server.as_str(), tool.as_str())));
                merged.push(name);
                mcp_count += 1;
            }
        }
        prop_assert_eq!(merged.len(), builtin.len() + mcp_count);
        let unique: HashSet<&String> = merged.iter().collect();
        prop_assert_eq!(unique.len(), merged.len(), "names collide");
    }

    /// Property 5 (seed 001): MCP 连接生命周期. *For any* set of established
    /// MCPServerConnections, after `shutdown()` every connection's status is
    /// 'closed' and the number of active connections is 0.
    #[test]
    fn seed001_prop05_shutdown_closes_every_connection(tools in prop::collection::vec(0usize..4, 1..4)) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let configs: Vec<ServerConfig> =
                tools.iter().enumerate().map(|(i, n)| scripted_server(&format!("s{i}"), *n)).collect();
            let manager = McpManager::start(configs, dir.path()).await;
            let statuses = manager.statuses();
            prop_assert!(statuses.iter().all(|s| s.state == ServerState::Ready), "{:?}", statuses);
            prop_assert_eq!(manager.active(), tools.len());
            for (status, n) in statuses.iter().zip(&tools) {
                prop_assert_eq!(status.tools, *n);
            }
            manager.shutdown().await;
            prop_assert!(manager.statuses().iter().all(|s| s.state == ServerState::Closed));
            prop_assert_eq!(manager.active(), 0);
            Ok(())
        })?;
    }
}
