//! The client manager against the reference MCP server
//! `@modelcontextprotocol/server-everything` (npm, pinned in tests/peers/),
//! next to servers that fail in every way a server can fail to start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use axon_tools::{Profile, ToolContext, Workspace};
use serde_json::json;

fn everything_js() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(path.exists(), "{} is missing: run scripts/peers", path.display());
    path.display().to_string()
}

fn stdio(name: &str, command: &str, args: &[&str], startup: Duration) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command: command.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: startup,
        tool_timeout: Some(Duration::from_secs(30)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".to_string(),
        sandbox: Default::default(),
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.split_whitespace().nth(2).is_some_and(|state| state != "Z"))
}

/// Processes whose command line mentions `marker`.
fn processes_mentioning(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
                && alive(*pid)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_works_while_broken_servers_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let js = everything_js();
    let marker = format!("axon-test-{}", std::process::id());
    // Two servers that each wait, while starting, for the other to have
    // started: both see their peer only if start-ups run together.
    let peer = |me: &str, other: &str| {
        let (me, other) = (dir.path().join(me), dir.path().join(other));
        format!(
            "touch '{}'; i=0; while [ ! -e '{}' ]; do i=$((i+1)); \
             if [ $i -gt 1200 ]; then echo 'peer never started' >&2; exit 1; fi; sleep 0.05; done; \
             echo 'saw peer' >&2; exit 1",
            me.display(),
            other.display()
        )
    };
    let (peer_a, peer_b) = (peer("a.started", "b.started"), peer("b.started", "a.started"));
    let configs = vec![
        stdio("peer-a", "sh", &["-c", &peer_a], Duration::from_secs(120)),
        stdio("peer-b", "sh", &["-c", &peer_b], Duration::from_secs(120)),
        stdio("everything", "node", &[&js, "stdio"], Duration::from_secs(30)),
        stdio(
            "crashes",
            "sh",
            // Bytes that are not UTF-8 must not stop the stderr reader.
            &["-c", r"printf '\377\376 garbled\n' >&2; echo 'boom: missing config' >&2; exit 3"],
            Duration::from_secs(10),
        ),
        stdio(
            "silent",
            "sh",
            &["-c", &format!("exec sleep 60 # {marker}")],
            Duration::from_millis(800),
        ),
        stdio(
            "garbage",
            "sh",
            &["-c", &format!("echo 'not json'; echo '{{broken'; exec sleep 60 # {marker}")],
            Duration::from_millis(800),
        ),
    ];
    let manager = McpManager::start(configs, dir.path()).await;
    let statuses = manager.statuses();
    let state = |name: &str| statuses.iter().find(|s| s.name == name).unwrap().state.clone();

    // The good server is ready despite the others, with its tools.
    assert_eq!(state("everything"), ServerState::Ready, "{statuses:?}");
    let everything = statuses.iter().find(|s| s.name == "everything").unwrap();
    assert_eq!(everything.protocol_version.as_deref(), Some("2025-11-25"));
    let tools: Vec<String> = manager.tools_of("everything").into_iter().map(|t| t.0).collect();
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");

    // Each broken one says what went wrong.
    let ServerState::Error(crash) = state("crashes") else { panic!("{statuses:?}") };
    assert!(crash.contains("boom: missing config"), "the stderr tail is missing: {crash}");
    let ServerState::Error(silent) = state("silent") else { panic!("{statuses:?}") };
    assert!(silent.contains("did not finish starting within 0.8s"), "{silent}");
    assert!(matches!(state("garbage"), ServerState::Error(_)), "{statuses:?}");
    // Started together: each peer saw the other while it was starting.
    for name in ["peer-a", "peer-b"] {
        let ServerState::Error(message) = state(name) else { panic!("{statuses:?}") };
        assert!(message.contains("saw peer"), "{name} started alone: {message}");
    }

    // A real call.
    let output = manager.call("everything", "echo", json!({"message": "hello"})).await;
    assert!(!output.is_error, "{output:?}");
    assert!(output.text_content().contains("hello"), "{output:?}");
    let bad = manager.call("everything", "no-such-tool", json!({})).await;
    assert!(bad.is_error, "{bad:?}");

    // Through the agent's registry, under the model-facing name.
    let mut registry = Profile::Code.registry();
    let builtin = registry.len();
    let warnings = manager.register_tools(&mut registry);
    assert!(warnings.is_empty(), "{warnings:?}");
    // Every offered tool, plus the one that reads resources.
    assert_eq!(registry.len(), builtin + tools.len() + 1);
    assert!(registry.contains(axon_mcp::READ_RESOURCE));
    let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
    let via_registry =
        registry.call(&ctx, "mcp_everything_echo", json!({"message": "via registry"})).await;
    assert!(via_registry.text_content().contains("via registry"), "{via_registry:?}");
    // An approval shows the server and the tool's own name.
    let preview = registry.preview(&ctx, "mcp_everything_echo", &json!({"message": "hi"}));
    assert_eq!(
        preview,
        axon_protocol::Preview::Mcp {
            server: "everything".into(),
            tool: "echo".into(),
            arguments: json!({"message": "hi"}),
        }
    );

    // Shutdown closes everything and leaves no process behind.
    manager.shutdown().await;
    assert!(
        manager
            .statuses()
            .iter()
            .all(|s| matches!(s.state, ServerState::Closed | ServerState::Error(_)))
    );
    assert_eq!(manager.active(), 0);
    let after = manager.call("everything", "echo", json!({"message": "x"})).await;
    assert_eq!(after.text_content(), "MCP server everything disconnected");
    // Killed processes take a moment to go, longer on a busy machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(processes_mentioning(&marker).is_empty() && processes_mentioning(&js).is_empty())
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        processes_mentioning(&marker).is_empty(),
        "stray processes: {:?}",
        processes_mentioning(&marker)
    );
    assert!(processes_mentioning(&js).is_empty(), "server-everything survived shutdown");
}
