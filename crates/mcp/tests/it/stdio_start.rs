//! How a stdio server is started: a server whose stdout is not JSON-RPC (or
//! only blank lines) is named at once (not at its startup timeout), and a
//! server sees only its configured `env`, the core of axon's environment and
//! the proxy settings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};

/// Returns from the calling test with the reason printed, or panics when
/// `CI` or `AXON_REQUIRE_SANDBOX` is set: there a skipped sandbox test would
/// pass without having tried anything.
macro_rules! skip_unless_required {
    ($($reason:tt)+) => {{
        let reason = format!($($reason)+);
        if ["CI", "AXON_REQUIRE_SANDBOX"].iter().any(|name| std::env::var_os(name).is_some()) {
            panic!("CI or AXON_REQUIRE_SANDBOX is set, so this test may not skip: {reason}");
        }
        eprintln!("skipped: {reason}");
        return;
    }};
}

fn sh(name: &str, script: &str, env: BTreeMap<String, String>) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command: "sh".to_string(),
            args: vec!["-c".to_string(), script.to_string()],
            env,
            cwd: None,
        },
        enabled: true,
        // Far beyond the test's own limit: only a prompt verdict passes.
        startup_timeout: Duration::from_secs(600),
        tool_timeout: None,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".to_string(),
        sandbox: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_writing_garbage_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let configs = vec![
        sh("banner", "echo 'Listening on http://0.0.0.0:3000'; sleep 600", BTreeMap::new()),
        sh("broken", "printf '{\"jsonrpc\": oops}\\n'; sleep 600", BTreeMap::new()),
        sh("binary", "printf '\\001\\002\\377 binary'; sleep 600", BTreeMap::new()),
    ];
    let manager =
        tokio::time::timeout(Duration::from_secs(60), McpManager::start(configs, dir.path()))
            .await
            .expect("a garbage-writing server must fail at once, not at its startup timeout");
    let statuses = manager.statuses();
    let message = |name: &str| match &statuses.iter().find(|s| s.name == name).unwrap().state {
        ServerState::Error(message) => message.clone(),
        other => panic!("{name}: {other:?}"),
    };
    assert!(
        message("banner").starts_with(
            r#"MCP server banner is not speaking MCP: first bytes "Listening on http://0.0.0.0:3000""#
        ),
        "{}",
        message("banner")
    );
    assert!(
        message("broken").contains(r#"first bytes "{\"jsonrpc\": oops}""#),
        "{}",
        message("broken")
    );
    assert!(
        message("binary").contains(r#"first bytes "\u{1}\u{2}� binary""#),
        "{}",
        message("binary")
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_writing_only_blank_lines_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // Endless newlines: the first line is never anything but blank.
    let configs = vec![sh("blank", "yes ''", BTreeMap::new())];
    let manager =
        tokio::time::timeout(Duration::from_secs(60), McpManager::start(configs, dir.path()))
            .await
            .expect("a server writing only blank lines must fail once past the judged bytes");
    let statuses = manager.statuses();
    let state = &statuses.iter().find(|s| s.name == "blank").unwrap().state;
    let ServerState::Error(message) = state else { panic!("blank: {state:?}") };
    assert!(
        message.starts_with(r#"MCP server blank is not speaking MCP: first bytes "\n"#)
            && message.contains("only blank lines"),
        "{message}"
    );
    manager.shutdown().await;
}

/// A server that answers `initialize` with its environment as its name.
const ENV_SERVER: &str = r#"read -r _
env | sort | tr '\n' ' ' > "$OUT"
printf '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"env","version":"1"}}}\n'
sleep 600"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_server_gets_its_env_and_the_core_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env.txt");
    let env = BTreeMap::from([
        ("OUT".to_string(), out.display().to_string()),
        ("FROM_CONFIG".to_string(), "yes".to_string()),
    ]);
    let manager = tokio::time::timeout(
        Duration::from_secs(60),
        McpManager::start(vec![sh("env", ENV_SERVER, env)], dir.path()),
    )
    .await
    .unwrap();
    let seen = std::fs::read_to_string(&out).unwrap();
    assert!(seen.contains("FROM_CONFIG=yes") && seen.contains("PATH="), "{seen}");
    // Whatever else the test runner has (CARGO_*, RUST_*, CI secrets) stays.
    for line in seen.split(' ').filter(|l| !l.is_empty()) {
        let name = line.split('=').next().unwrap();
        let core = [
            "HOME",
            "LOGNAME",
            "PATH",
            "SHELL",
            "USER",
            "USERNAME",
            "TMPDIR",
            "TEMP",
            "TMP",
            "LANG",
            "LANGUAGE",
            "TERM",
            "TZ",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "NO_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "all_proxy",
            "XDG_RUNTIME_DIR",
            "OUT",
            "FROM_CONFIG",
            "PWD",
            "SHLVL",
            "_",
        ];
        assert!(
            core.contains(&name) || name.starts_with("LC_"),
            "{name} reached the server: {seen}"
        );
    }
    manager.shutdown().await;
}

/// The first line a server prints is named in the "not speaking MCP" error:
/// here, whether a write outside its workspace worked.
fn first_line(statuses: &[axon_mcp::ServerStatus], name: &str) -> String {
    match &statuses.iter().find(|s| s.name == name).unwrap().state {
        ServerState::Error(message) => message.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_asks_for_the_sandbox_runs_in_it_or_not_at_all() {
    use axon_mcp::config::ServerSandbox;
    use std::sync::Arc;
    let support = axon_sandbox::probe();
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    let script = format!(
        "if echo x > '{}' 2>/dev/null; then echo wrote; else echo refused; fi; sleep 600",
        target.display()
    );
    let policy = axon_sandbox::Policy::new(
        axon_sandbox::Mode::WorkspaceWrite,
        std::fs::canonicalize(workspace.path()).unwrap(),
        std::env::temp_dir(),
    );
    if let Err(why) = support.can_enforce(&policy) {
        skip_unless_required!("this machine cannot enforce the sandbox: {why}");
    }
    let sandbox = Arc::new(axon_tools::CommandSandbox::new(policy, tempfile::tempdir().unwrap()));
    let mut confined = sh("confined", &script, BTreeMap::new());
    confined.sandbox = ServerSandbox::In(sandbox);
    let mut refused = sh("refused", &script, BTreeMap::new());
    refused.sandbox = ServerSandbox::Unavailable("this machine cannot enforce it".into());
    let mut unresolved = sh("unresolved", &script, BTreeMap::new());
    unresolved.sandbox = ServerSandbox::Wanted;
    let manager = tokio::time::timeout(
        Duration::from_secs(60),
        McpManager::start(vec![confined, refused, unresolved], workspace.path()),
    )
    .await
    .unwrap();
    let statuses = manager.statuses();
    assert!(first_line(&statuses, "confined").contains(r#"first bytes "refused""#), "{statuses:?}");
    assert!(!target.exists(), "the confined server wrote outside its workspace");
    // Neither runs unconfined: they do not start at all.
    for name in ["refused", "unresolved"] {
        let message = first_line(&statuses, name);
        assert!(message.contains("not started: it asks for the OS sandbox"), "{message}");
    }
    assert!(!target.exists());
    manager.shutdown().await;
    // The control: the same script without the sandbox does write there.
    let free = sh("free", &script, BTreeMap::new());
    let manager = McpManager::start(vec![free], workspace.path()).await;
    assert!(first_line(&manager.statuses(), "free").contains(r#"first bytes "wrote""#));
    manager.shutdown().await;
}
