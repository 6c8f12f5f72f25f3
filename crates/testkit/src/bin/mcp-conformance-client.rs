//! The client side of the official MCP conformance suite
//! (`conformance client --command mcp-conformance-client --scenario NAME`):
//! axon's MCP client manager, connected over streamable HTTP to the URL the
//! suite passes last, doing what the scenario in `MCP_CONFORMANCE_SCENARIO`
//! asks. Exits 0 when the server was reached and the scenario's call made.
//!
//! A server that needs login is signed in to with the same library call
//! `axon mcp login` makes (`axon_mcp::auth::login`), its tokens kept in a
//! folder of this run; the "browser" is played here: the authorization URL
//! is fetched without following redirects (the suite's authorization
//! endpoint redirects at once) and the `Location` it answers with, the
//! loopback redirect, is fetched in turn. The pre-registered client of a
//! scenario comes from `MCP_CONFORMANCE_CONTEXT` (`client_id`,
//! `client_secret`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::Duration;

use axon_mcp::config::{OAuthSettings, ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use serde_json::{Value, json};

/// The client ID metadata document URL the suite's CIMD scenario expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Sign-ins tried before giving up (a step-up asks for a second one).
const SIGN_INS: usize = 3;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(url) = std::env::args().next_back().filter(|u| u.starts_with("http")) else {
        eprintln!(
            "usage: mcp-conformance-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let tokens =
        std::env::temp_dir().join(format!("axon-conformance-tokens-{}", std::process::id()));
    let text = |key: &str| context[key].as_str().map(String::from);
    let oauth = OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
        token_dir: Some(tokens.clone()),
        ..OAuthSettings::default()
    };
    let config = ServerConfig {
        name: "conformance".into(),
        transport: Transport::Http { url, headers: BTreeMap::new(), bearer_token_env: None, oauth },
        enabled: true,
        startup_timeout: Duration::from_secs(10),
        tool_timeout: Some(Duration::from_secs(10)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "conformance".into(),
        sandbox: Default::default(),
    };
    let code = run(&config, &scenario).await;
    let _ = std::fs::remove_dir_all(&tokens);
    std::process::exit(code);
}

async fn run(config: &ServerConfig, scenario: &str) -> i32 {
    let dir = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let call = match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        auth if auth.starts_with("auth/") => Some(("test-tool", json!({}))),
        _ => None,
    };
    let mut sign_ins = 0;
    loop {
        let manager = McpManager::start(vec![config.clone()], &dir).await;
        let status = manager.statuses()[0].clone();
        let needs_login = match status.state {
            ServerState::Ready => {
                let Some((tool, arguments)) = call.clone() else {
                    manager.shutdown().await;
                    return 0;
                };
                let output = manager.call("conformance", tool, arguments).await;
                println!("{tool}: {}", output.text_content());
                let state = manager.statuses()[0].state.clone();
                manager.shutdown().await;
                if !output.is_error {
                    return 0;
                }
                // A step-up: the server wants more scope for this call.
                matches!(state, ServerState::NeedsLogin(_))
            }
            ServerState::NeedsLogin(_) => {
                manager.shutdown().await;
                true
            }
            _ => {
                eprintln!("mcp-conformance-client: not connected: {status:?}");
                manager.shutdown().await;
                false
            }
        };
        if !needs_login || sign_ins == SIGN_INS {
            return 1;
        }
        sign_ins += 1;
        if let Err(message) = sign_in(config).await {
            eprintln!("mcp-conformance-client: sign-in failed: {message}");
            return 1;
        }
    }
}

/// `axon mcp login`'s flow, with this program as the browser.
async fn sign_in(config: &ServerConfig) -> Result<(), String> {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let follow = async |url: String| {
        if let Err(message) = play_browser(&browser, &url).await {
            eprintln!("mcp-conformance-client: the browser step failed: {message}");
        }
    };
    axon_mcp::auth::login(config, Duration::from_secs(20), follow).await.map(|_| ())
}

/// Fetches the authorization URL and then where it redirects to.
async fn play_browser(browser: &reqwest::Client, url: &str) -> Result<(), String> {
    let answer = browser.get(url).send().await.map_err(|e| e.to_string())?;
    let location = answer
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            format!("the authorization endpoint answered {} without a redirect", answer.status())
        })?
        .to_string();
    browser.get(&location).send().await.map_err(|e| e.to_string())?;
    Ok(())
}
