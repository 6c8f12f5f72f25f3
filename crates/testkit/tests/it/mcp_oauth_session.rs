//! A signed-in MCP server whose token is revoked while the session runs:
//! the next call tries one refresh, which the authorization server refuses,
//! and the server is then marked "needs login" with the command to run,
//! through the library calls `axon mcp login` and a session make.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use axon_mcp::config::{OAuthSettings, ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use serde_json::json;

fn config(url: String, tokens: &std::path::Path) -> ServerConfig {
    let oauth = OAuthSettings { token_dir: Some(tokens.to_path_buf()), ..Default::default() };
    ServerConfig {
        name: "remote".into(),
        transport: Transport::Http { url, headers: BTreeMap::new(), bearer_token_env: None, oauth },
        enabled: true,
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Some(Duration::from_secs(30)),
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".into(),
        sandbox: Default::default(),
    }
}

/// Plays the browser: the authorization URL, then where it redirects.
async fn browse(url: String) {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let answer = browser.get(&url).send().await.unwrap();
    let location = answer.headers()[reqwest::header::LOCATION].to_str().unwrap().to_string();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let back = browser.get(&location).send().await.unwrap();
    assert!(back.status().is_success(), "{}", back.status());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_mid_session_marks_the_server_as_needing_login() {
    let server = tokio::task::spawn_blocking(axon_testkit::oauth::start).await.unwrap();
    let tokens = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let config = config(format!("{}/mcp", server.base), tokens.path());

    let before = McpManager::start(vec![config.clone()], workspace.path()).await;
    let state = before.statuses()[0].state.clone();
    assert!(
        matches!(&state, ServerState::NeedsLogin(m) if m.contains("run `axon mcp login remote`")),
        "{state:?}"
    );
    before.shutdown().await;

    let done = axon_mcp::auth::login(&config, Duration::from_secs(60), browse).await.unwrap();
    assert!(done.token_file.starts_with(tokens.path()));
    assert!(axon_mcp::auth::has_tokens(&config));
    let secrets = axon_mcp::auth::stored_secrets(&config);
    assert_eq!(secrets.len(), 2, "the access and refresh tokens are known to the redactor");
    assert!(secrets.iter().all(|s| s.starts_with("secret-")));

    let manager = McpManager::start(vec![config.clone()], workspace.path()).await;
    assert_eq!(manager.statuses()[0].state, ServerState::Ready, "{:?}", manager.statuses());
    let output = manager.call("remote", "whoami", json!({})).await;
    assert!(!output.is_error, "{}", output.text_content());

    server.revoke_all();
    let output = manager.call("remote", "whoami", json!({})).await;
    assert!(output.is_error);
    assert!(
        output.text_content().contains("run `axon mcp login remote`"),
        "{}",
        output.text_content()
    );
    assert!(
        matches!(manager.statuses()[0].state, ServerState::NeedsLogin(_)),
        "{:?}",
        manager.statuses()
    );
    // Later calls say the same at once.
    let again = manager.call("remote", "whoami", json!({})).await;
    assert!(again.text_content().contains("axon mcp login remote"), "{}", again.text_content());
    manager.shutdown().await;
    assert!(matches!(manager.statuses()[0].state, ServerState::NeedsLogin(_)));

    assert!(axon_mcp::auth::logout(&config).unwrap());
    assert!(!axon_mcp::auth::has_tokens(&config));
    assert!(!axon_mcp::auth::logout(&config).unwrap());
    server.stop();
}
