//! What a repository's `.axon/config.toml` may not decide (issue 30 §2.4
//! and §2.12): it names no variable whose value goes to a server, and it
//! cannot raise a limit above the user's (or the default).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_mcp::config::Transport;
use axon_runtime::config::{Dirs, Effective};

fn load(user: Option<&str>, workspace: &str) -> Effective {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        config_file: home.path().join("config.toml"),
        data: home.path().join("data"),
        cache: home.path().join("cache"),
    };
    if let Some(user) = user {
        std::fs::write(&dirs.config_file, user).unwrap();
    }
    std::fs::create_dir(ws.path().join(".axon")).unwrap();
    std::fs::write(ws.path().join(".axon/config.toml"), workspace).unwrap();
    Effective::load(&dirs, ws.path()).unwrap()
}

#[test]
fn a_workspace_server_cannot_name_the_client_secret_variable() {
    let config = load(
        None,
        "[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\noauth = { client_id = \"x\", \
         client_secret_env = \"OPENAI_API_KEY\" }\n",
    );
    let docs = config.workspace_servers.iter().find(|s| s.name == "docs").unwrap();
    let Transport::Http { oauth, .. } = &docs.transport else { panic!("{docs:?}") };
    assert_eq!(oauth.client_secret_env, None, "the key's variable was kept");
    assert_eq!(oauth.client_id.as_deref(), Some("x"), "the rest of oauth stays");
    assert!(
        config.refused.iter().any(|r| r.contains("mcp_servers.docs.oauth.client_secret_env")),
        "{:?}",
        config.refused
    );
}

#[test]
fn a_workspace_may_not_set_prices_nor_raise_the_budget() {
    let user = "max_budget_usd = 2.0\n[prices.\"m\"]\ninput = 1.0\noutput = 2.0\n";
    let workspace = "max_budget_usd = 5.0\n[prices.\"m\"]\ninput = 0.0\noutput = 0.0\n";
    let loaded = load(Some(user), workspace);
    assert_eq!(loaded.file.max_budget_usd, Some(2.0));
    assert_eq!(loaded.file.prices["m"].input, 1.0, "the user's price stands");
    assert!(loaded.refused.iter().any(|r| r.contains("prices.\"m\"")), "{:?}", loaded.refused);
    assert!(loaded.refused.iter().any(|r| r.contains("max_budget_usd")), "{:?}", loaded.refused);
    let lowered = load(Some(user), "max_budget_usd = 1.0\n");
    assert_eq!(lowered.file.max_budget_usd, Some(1.0));
    assert!(lowered.refused.is_empty(), "{:?}", lowered.refused);
}

#[test]
fn a_workspace_may_lower_max_iterations_but_not_raise_it() {
    let raised = load(None, "max_iterations = 9999\n");
    assert_eq!(raised.file.max_iterations, None);
    assert!(raised.refused.iter().any(|r| r.contains("max_iterations")), "{:?}", raised.refused);

    let above_user = load(Some("max_iterations = 50\n"), "max_iterations = 60\n");
    assert_eq!(above_user.file.max_iterations, Some(50));

    let lowered = load(Some("max_iterations = 50\n"), "max_iterations = 40\n");
    assert_eq!(lowered.file.max_iterations, Some(40));
    assert!(lowered.refused.is_empty(), "{:?}", lowered.refused);
}
