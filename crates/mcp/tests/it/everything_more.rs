//! server-everything over streamable HTTP, and a stdio server that dies in
//! the middle of a call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use axon_protocol::ContentPart;
use serde_json::json;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

fn everything_js() -> String {
    let path = peers().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "{} is missing: run scripts/peers", path.display());
    path.display().to_string()
}

fn server(name: &str, transport: Transport) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport,
        enabled: true,
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Some(Duration::from_secs(60)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    }
}

/// server-everything in streamable HTTP mode on a loopback port; killed on drop.
struct HttpPeer(std::process::Child, u16);

impl HttpPeer {
    fn start() -> HttpPeer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new("node")
            .arg("-r")
            .arg(peers().join("loopback-only.cjs"))
            .args([everything_js().as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("listening on port") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(30)).expect("server-everything did not start");
        HttpPeer(child, port)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The bearer token's variable: set (to a fixed test value) on the child
/// process the test below runs its calls in, never in this process, whose
/// environment every test beside it reads.
const TOKEN_ENV: &str = "AXON_TEST_MCP_TOKEN_EVERYTHING";
/// What the child says once its assertions held.
const CHECKED: &str = "streamable HTTP held";

#[test]
fn streamable_http_with_headers_token_elicitation_roots_and_images() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "everything_more::streamable_http_with_the_token_set",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(TOKEN_ENV, "test-token")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    // The child ran the calls (a filter that matches nothing passes too).
    assert!(text.contains(CHECKED), "{text}");
}

/// The calls themselves, in the child the test above starts with the
/// token's variable set; on its own (without it) it has nothing to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by streamable_http_with_headers_token_elicitation_roots_and_images \
            in a child process with the token's variable set"]
async fn streamable_http_with_the_token_set() {
    if std::env::var_os(TOKEN_ENV).is_none() {
        eprintln!("skipped: only streamable_http_with_headers_... runs this, in a child");
        return;
    }
    let peer = HttpPeer::start();
    let token_env = TOKEN_ENV;
    let dir = tempfile::tempdir().unwrap();
    let transport = Transport::Http {
        url: format!("http://127.0.0.1:{}/mcp", peer.1),
        headers: BTreeMap::from([("X-Axon-Test".to_string(), "1".to_string())]),
        bearer_token_env: Some(token_env.into()),
        oauth: Default::default(),
    };
    let manager = McpManager::start(vec![server("everything", transport)], dir.path()).await;
    let status = &manager.statuses()[0];
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert_eq!(status.protocol_version.as_deref(), Some("2025-11-25"));

    let echo = manager.call("everything", "echo", json!({"message": "over http"})).await;
    assert_eq!(echo.text_content(), "Echo: over http");

    let roots = manager.call("everything", "get-roots-list", json!({})).await;
    let root = format!("file://{}", dir.path().display());
    assert!(roots.text_content().contains(&root), "roots: {}", roots.text_content());

    let image = manager.call("everything", "get-tiny-image", json!({})).await;
    assert!(
        image.content.iter().any(
            |p| matches!(p, ContentPart::Image { media_type, .. } if media_type == "image/png")
        ),
        "{image:?}"
    );

    // Nobody can answer a form here: it is accepted with its defaults.
    let elicited = manager.call("everything", "trigger-elicitation-request", json!({})).await;
    assert!(!elicited.is_error, "{elicited:?}");
    let text = elicited.text_content().to_lowercase();
    assert!(text.contains("accept"), "{text}");

    manager.shutdown().await;
    assert_eq!(manager.active(), 0);
    println!("{CHECKED}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_that_call_and_stays_closed() {
    let marker = format!("axon-dies-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let transport = Transport::Stdio {
        command: "node".into(),
        args: vec![everything_js(), "stdio".into()],
        env: BTreeMap::from([("AXON_TEST_MARK".to_string(), marker.clone())]),
        cwd: None,
    };
    let manager = McpManager::start(vec![server("everything", transport)], dir.path()).await;
    assert_eq!(manager.statuses()[0].state, ServerState::Ready);
    let node = find_process_with_env(&marker).expect("the server's process");

    let call = manager.call(
        "everything",
        "trigger-long-running-operation",
        json!({"duration": 120, "steps": 60}),
    );
    let killer = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let _ = Command::new("kill").args(["-KILL", &node.to_string()]).status();
    };
    let started = Instant::now();
    let (output, ()) = tokio::join!(call, killer);
    // The operation runs two minutes and the tool timeout is one: ending
    // well before either, the call noticed the death itself.
    assert!(started.elapsed() < Duration::from_secs(45), "the call waited for a dead server");
    assert_eq!(output.text_content(), "MCP server everything disconnected", "{output:?}");
    assert_eq!(manager.statuses()[0].state, ServerState::Closed);
    let again = Instant::now();
    let later = manager.call("everything", "echo", json!({"message": "x"})).await;
    assert_eq!(later.text_content(), "MCP server everything disconnected");
    // At once, not after another start-up attempt (30 s): the bound leaves a
    // busy machine room.
    assert!(again.elapsed() < Duration::from_secs(10), "{:?}", again.elapsed());
    manager.shutdown().await;
}

fn find_process_with_env(marker: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| String::from_utf8_lossy(&env).contains(marker))
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("node"))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_are_listed_read_and_offered_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let transport = Transport::Stdio {
        command: "node".into(),
        args: vec![everything_js(), "stdio".into()],
        env: BTreeMap::new(),
        cwd: None,
    };
    let manager = McpManager::start(vec![server("everything", transport)], dir.path()).await;
    let resources = manager.list_resources("everything").await.unwrap();
    let (uri, _, _) =
        resources.iter().find(|r| r.0.ends_with("architecture.md")).expect("a static document");
    let read = manager.read_resource("everything", uri).await;
    assert!(read.text_content().starts_with(&format!("[resource {uri}]\n")), "{read:?}");
    let missing = manager.read_resource("everything", "demo://nope").await;
    assert!(
        missing.is_error && missing.text_content().starts_with("[resource not found]"),
        "{missing:?}"
    );

    let prompts = manager.list_prompts("everything").await.unwrap();
    assert!(
        prompts
            .iter()
            .any(|(name, _, args)| name == "args-prompt" && args.contains(&"city".to_string()))
    );
    let filled = manager
        .get_prompt(
            "everything",
            "args-prompt",
            serde_json::Map::from_iter([("city".to_string(), json!("Lyon"))]),
        )
        .await
        .unwrap();
    assert!(filled.contains("Lyon"), "{filled}");
    let unknown = manager.get_prompt("everything", "nope", Default::default()).await.unwrap_err();
    assert!(unknown.starts_with("[prompt not found]"), "{unknown}");

    // The model reads resources through one tool.
    let mut registry = axon_tools::Profile::Code.registry();
    manager.register_tools(&mut registry);
    let ctx = axon_tools::ToolContext::new(axon_tools::Workspace::new(dir.path()).unwrap());
    let via_tool = registry
        .call(&ctx, axon_mcp::READ_RESOURCE, json!({"server": "everything", "uri": uri}))
        .await;
    assert_eq!(via_tool.text_content(), read.text_content());
    manager.shutdown().await;
}
