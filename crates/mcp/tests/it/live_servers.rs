//! Servers that start in the background and change while they run, against
//! real servers: a stdio server on the official MCP Python SDK
//! (`tests/python/changing_server.py`, held back by a gate file rather than
//! a clock) and the reference `server-everything`.
//!
//! - `spawn` returns with every server still starting; each joins when it
//!   is ready, a slow one without holding up the others.
//! - `notifications/tools/list_changed` lists the tools again, and a
//!   registry built afterwards offers the new tool, which runs.
//! - A server that fails once is started again; one that keeps failing is
//!   reported after its second try with its stderr; shutdown ends a server
//!   still starting.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState, ServerStatus, StatusObserver};
use axon_tools::ToolRegistry;
use serde_json::json;

/// Far beyond any wait here: only a verdict ends a wait, never this.
const PATIENCE: Duration = Duration::from_secs(90);

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

fn python() -> String {
    let python = peers().join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/peers", python.display());
    python.display().to_string()
}

fn server_script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python/changing_server.py")
        .display()
        .to_string()
}

fn stdio(name: &str, command: String, args: Vec<String>, env: &[(&str, &Path)]) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command,
            args,
            env: env.iter().map(|(k, v)| (k.to_string(), v.display().to_string())).collect(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: PATIENCE,
        tool_timeout: Some(PATIENCE),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".to_string(),
        sandbox: Default::default(),
    }
}

fn changing(name: &str, env: &[(&str, &Path)]) -> ServerConfig {
    stdio(name, python(), vec![server_script()], env)
}

fn state_of(manager: &McpManager, name: &str) -> ServerState {
    manager.statuses().into_iter().find(|s| s.name == name).unwrap().state
}

fn registry_of(manager: &McpManager) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let warnings = manager.register_tools(&mut registry);
    assert!(warnings.is_empty(), "{warnings:?}");
    registry
}

async fn bounded<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future).await.unwrap_or_else(|_| panic!("{what}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_start_in_the_background_and_a_slow_one_joins_when_ready() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("open");
    let seen: Arc<Mutex<Vec<ServerStatus>>> = Arc::default();
    let told = Arc::clone(&seen);
    let observer: StatusObserver =
        Arc::new(move |s: &ServerStatus| told.lock().unwrap().push(s.clone()));
    let configs = vec![changing("quick", &[]), changing("slow", &[("GATE", &gate)])];
    let manager = McpManager::spawn(configs, dir.path(), Some(observer));
    // Nothing has started yet, and nothing was waited for.
    assert!(manager.statuses().iter().all(|s| s.state == ServerState::Connecting));
    let before = manager.generation();

    bounded("quick never started", manager.wait_for(&["quick".to_string()])).await;
    assert_eq!(state_of(&manager, "quick"), ServerState::Ready);
    assert_eq!(state_of(&manager, "slow"), ServerState::Connecting);
    assert_eq!(manager.starting(), ["slow"]);
    let registry = registry_of(&manager);
    assert!(registry.contains("mcp_quick_ping") && !registry.contains("mcp_slow_ping"));
    let call = manager.call("slow", "ping", json!({})).await;
    assert!(call.is_error && call.text_content().contains("still starting"), "{call:?}");

    let joined = manager.generation();
    assert!(joined > before);
    std::fs::write(&gate, "").unwrap();
    bounded("slow never started", manager.wait_for(&["slow".to_string()])).await;
    assert_eq!(state_of(&manager, "slow"), ServerState::Ready);
    assert!(manager.generation() > joined);
    assert!(registry_of(&manager).contains("mcp_slow_ping"));
    assert_eq!(manager.call("slow", "ping", json!({})).await.text_content(), "pong");

    let ready: Vec<ServerStatus> =
        seen.lock().unwrap().iter().filter(|s| s.state == ServerState::Ready).cloned().collect();
    assert_eq!(ready.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["quick", "slow"]);
    assert!(ready.iter().all(|s| s.startup.is_some() && s.tools == 2), "{ready:?}");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_list_is_listed_again() {
    let dir = tempfile::tempdir().unwrap();
    let manager = McpManager::start(vec![changing("live", &[])], dir.path()).await;
    assert_eq!(state_of(&manager, "live"), ServerState::Ready);
    assert!(!registry_of(&manager).contains("mcp_live_fresh"));
    let added = manager.call("live", "add_tool", json!({"name": "fresh"})).await;
    assert_eq!(added.text_content(), "added fresh", "{added:?}");
    // The notification arrives on its own; wait for the listing it causes.
    bounded("the new tool never appeared", async {
        while !manager.tools_of("live").iter().any(|(name, _)| name == "fresh") {
            assert_eq!(state_of(&manager, "live"), ServerState::Ready);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let registry = registry_of(&manager);
    assert!(registry.contains("mcp_live_fresh"), "{registry:?}");
    assert_eq!(manager.call("live", "fresh", json!({})).await.text_content(), "fresh works");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_servers_list_changed_is_answered_with_a_new_listing() {
    // server-everything registers the tools that need a client capability
    // (roots, elicitation) once initialized, and announces the change. The
    // wire is recorded on both sides of the server to see what was said.
    let everything = peers()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let (sent, heard) = (dir.path().join("sent"), dir.path().join("heard"));
    let script =
        format!("tee '{}' | node '{everything}' | tee '{}'", sent.display(), heard.display());
    let config = stdio("everything", "sh".to_string(), vec!["-c".to_string(), script], &[]);
    let manager = McpManager::start(vec![config], dir.path()).await;
    assert_eq!(state_of(&manager, "everything"), ServerState::Ready);
    let listings = || {
        let sent = std::fs::read_to_string(&sent).unwrap_or_default();
        sent.lines().filter(|l| l.contains("\"tools/list\"")).count()
    };
    bounded("the announced change was never listed", async {
        while listings() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let heard = std::fs::read_to_string(&heard).unwrap();
    assert!(heard.contains("notifications/tools/list_changed"), "{heard}");
    assert!(manager.tools_of("everything").iter().any(|(name, _)| name == "get-roots-list"));
    let roots = manager.call("everything", "get-roots-list", json!({})).await;
    assert!(!roots.is_error, "{roots:?}");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_fails_once_is_started_again() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let config = changing("flaky", &[("STARTS", &starts), ("FAIL_FIRST", Path::new("1"))]);
    let manager = McpManager::start(vec![config], dir.path()).await;
    assert_eq!(state_of(&manager, "flaky"), ServerState::Ready);
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 2);
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_keeps_failing_is_reported_after_its_second_try() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let script = format!("echo start >> '{}'; echo 'boom: no token' >&2; exit 1", starts.display());
    let config = stdio("broken", "sh".to_string(), vec!["-c".to_string(), script], &[]);
    let manager = McpManager::start(vec![config], dir.path()).await;
    let ServerState::Error(message) = state_of(&manager, "broken") else {
        panic!("{:?}", manager.statuses());
    };
    assert!(message.contains("boom: no token"), "{message}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 2);
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_ends_a_server_still_starting() {
    let dir = tempfile::tempdir().unwrap();
    let (gate, starts) = (dir.path().join("never"), dir.path().join("starts"));
    let marker = format!("held-{}", std::process::id());
    let mut config = changing("held", &[("GATE", &gate), ("STARTS", &starts)]);
    if let Transport::Stdio { args, .. } = &mut config.transport {
        args.push(marker.clone());
    }
    let manager = McpManager::spawn(vec![config], dir.path(), None);
    bounded("the server never started", async {
        while !starts.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(!processes_mentioning(&marker).is_empty());
    manager.shutdown().await;
    bounded("the server outlived shutdown", async {
        while !processes_mentioning(&marker).is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_ne!(state_of(&manager, "held"), ServerState::Ready);
}

/// Live processes whose command line mentions `marker`.
fn processes_mentioning(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.split_whitespace().nth(2).is_some_and(|s| s != "Z"));
            alive
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}
