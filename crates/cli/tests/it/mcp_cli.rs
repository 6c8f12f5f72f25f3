//! MCP end to end through the binary: `axon mcp` and `axon run` with the
//! reference server `server-everything` (npm, pinned in tests/peers/).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use axon_testkit::{Reply, ScriptedServer};
use predicates::prelude::PredicateBooleanExt;
use serde_json::json;

fn everything_js() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(path.exists(), "{} is missing: run scripts/peers", path.display());
    path.display().to_string()
}

fn workspace_with_everything() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"everything": {"command": "node", "args": [everything_js(), "stdio"], "startup_timeout_ms": 60000}}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    dir
}

fn axon(dir: &std::path::Path, home: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home)
        .current_dir(dir)
        .timeout(Duration::from_secs(90));
    cmd
}

#[test]
fn mcp_list_tools_and_call() {
    let dir = workspace_with_everything();
    let home = tempfile::tempdir().unwrap();
    // Not named, not asked: a workspace's server does not start.
    axon(dir.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stderr(predicates::str::contains("\"everything\" from"))
        .stderr(predicates::str::contains("was not started"));
    // The user's own servers are trusted.
    // A generous start-up bound: node starting the server on a busy machine
    // must not turn "ready" into a timeout.
    let user_config = format!(
        "[mcp_servers.mine]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\
         startup_timeout_ms = 60000\n",
        everything_js()
    );
    std::fs::write(home.path().join("config.toml"), user_config).unwrap();
    axon(dir.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("✓ mine  ready"))
        .stdout(predicates::str::contains("(protocol 2025-11-25)"));
    // Naming a workspace server is consent to start it.
    axon(dir.path(), home.path())
        .args(["mcp", "tools", "everything"])
        .assert()
        .success()
        .stdout(predicates::str::contains("everything  echo  "));
    axon(dir.path(), home.path())
        .args(["mcp", "call", "everything", "echo", r#"{"message": "over MCP"}"#])
        .assert()
        .success()
        .stdout("Echo: over MCP\n");
    axon(dir.path(), home.path()).args(["mcp", "call", "nobody", "echo", "{}"]).assert().code(2);
}

fn run_env(cmd: &mut assert_cmd::Command, server: &ScriptedServer) {
    cmd.env("AXON_PROVIDER", "openai")
        .env("AXON_BASE_URL", server.openai_base())
        .env("OPENAI_API_KEY", "sk-test-0000000000");
}

#[test]
fn the_agent_uses_mcp_tools_when_allowed() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(vec![
            Reply::tool("mcp_everything_echo", json!({"message": "from the model"})),
            Reply::text("The server echoed it."),
        ]))
        .unwrap();
    let dir = workspace_with_everything();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = axon(dir.path(), home.path());
    run_env(&mut cmd, &server);
    // Naming the server makes the turn wait for it (servers start in the
    // background).
    cmd.args(["run", "--yes", "ask everything to echo something"])
        .assert()
        .success()
        .stdout("The server echoed it.\n")
        .stderr(predicates::str::contains(
            "✓ mcp_everything_echo message=from the model — Echo: from the model",
        ));
    let first = server.requests()[0].to_string();
    assert!(first.contains("\"mcp_everything_echo\""), "the MCP tool was not offered");
    assert!(first.contains("[MCP server everything]"));
}

#[test]
fn workspace_servers_need_consent() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(ScriptedServer::start(vec![Reply::text("ok")])).unwrap();
    let dir = workspace_with_everything();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = axon(dir.path(), home.path());
    run_env(&mut cmd, &server);
    cmd.args(["run", "hello"])
        .assert()
        .success()
        .stderr(predicates::str::contains("MCP server everything from"))
        .stderr(predicates::str::contains("was not started"));
    let first = server.requests()[0].to_string();
    assert!(!first.contains("mcp_everything"), "an unapproved workspace server was started");
}

#[test]
fn mcp_add_and_remove_edit_mcp_json_keeping_other_hosts_keys() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"zed": 1, "mcpServers": {"keep": {"command": "x", "alwaysAllow": []}}}"#,
    )
    .unwrap();
    axon(dir.path(), home.path())
        .args(["mcp", "add", "files", "--env", "A=1", "--", "npx", "-y", "server-filesystem", "."])
        .assert()
        .success();
    axon(dir.path(), home.path())
        .args([
            "mcp",
            "add",
            "remote",
            "--url",
            "https://example.com/mcp",
            "--header",
            "X-Team=core",
        ])
        .assert()
        .success();
    axon(dir.path(), home.path()).args(["mcp", "add", "files", "--", "x"]).assert().code(2);
    axon(dir.path(), home.path()).args(["mcp", "add", "bad", "--url", "ftp://x"]).assert().code(2);
    axon(dir.path(), home.path()).args(["mcp", "remove", "keep"]).assert().success();
    axon(dir.path(), home.path()).args(["mcp", "remove", "keep"]).assert().code(2);
    let text = std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(document["zed"], 1);
    let servers: Vec<&String> = document["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(servers, ["files", "remote"]);
    assert_eq!(document["mcpServers"]["files"]["args"], json!(["-y", "server-filesystem", "."]));
    assert_eq!(document["mcpServers"]["remote"]["headers"]["X-Team"], "core");
    assert!(
        text.find("\"zed\"").unwrap() < text.find("\"mcpServers\"").unwrap(),
        "key order changed"
    );
}

#[test]
fn server_statuses_are_events_in_json_mode() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(ScriptedServer::start(vec![Reply::text("ok")])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything_js(), "stdio"], "startup_timeout_ms": 60000},
        "broken": {"command": "sh", "args": ["-c", "echo 'cannot open the database' >&2; exit 1"]},
    }});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = axon(dir.path(), home.path());
    run_env(&mut cmd, &server);
    // Naming both makes the turn wait until each is ready or has failed.
    let prompt = "hi everything and broken";
    let output =
        cmd.args(["run", "--yes", "--json", prompt]).assert().success().get_output().clone();
    let events: Vec<serde_json::Value> = common::events(&output.stdout);
    let statuses = |name: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["type"] == "mcp_status" && e["server"] == name)
            .map(|e| e["state"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(statuses("everything"), ["connecting", "ready", "closed"]);
    assert_eq!(statuses("broken"), ["connecting", "error"]);
    let error = events.iter().find(|e| e["type"] == "mcp_status" && e["state"] == "error").unwrap();
    assert!(error["message"].as_str().unwrap().contains("cannot open the database"), "{error}");
}

#[test]
fn a_trusted_workspace_server_starts_until_what_it_runs_changes() {
    let dir = workspace_with_everything();
    let home = tempfile::tempdir().unwrap();
    axon(dir.path(), home.path())
        .args(["mcp", "trust", "nothing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no MCP server named 'nothing'"));
    axon(dir.path(), home.path())
        .args(["mcp", "trust", "everything"])
        .assert()
        .success()
        .stdout(predicates::str::contains("trusted everything"));
    // Remembered under the data folder, not in the repository.
    assert!(home.path().join("data").join("trust").is_dir());
    assert!(!dir.path().join(".axon").exists());
    // Trusted: it starts without a question and without being named.
    axon(dir.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("everything"))
        .stderr(predicates::str::contains("was not started").not());
    // The repository changes what it runs: not trusted any more.
    let changed = json!({"mcpServers": {"everything": {"command": "node", "args": [everything_js(), "stdio", "--evil"], "startup_timeout_ms": 60000}}});
    std::fs::write(dir.path().join(".mcp.json"), changed.to_string()).unwrap();
    axon(dir.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stderr(predicates::str::contains("was not started"));
}

#[test]
fn mcp_add_trusts_a_project_server_and_writes_a_user_server_into_the_users_config() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // axon's own MCP server is the server added: nothing to install.
    let me = cargo_bin("axon").display().to_string();
    axon(dir.path(), home.path())
        .args(["mcp", "add", "--scope", "project", "itself", "--", &me, "mcp", "serve"])
        .assert()
        .success()
        .stdout(predicates::str::contains("trusted for this workspace"));
    // Added by the user's hand: the next start does not ask.
    axon(dir.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("itself"))
        .stderr(predicates::str::contains("was not started").not());

    let config = home.path().join("config.toml");
    std::fs::write(&config, "# my settings\nmax_iterations = 30\n").unwrap();
    axon(dir.path(), home.path())
        .args(["mcp", "add", "--scope", "user", "mine", "--env", "A=1", "--", &me, "mcp", "serve"])
        .assert()
        .success()
        .stdout(predicates::str::contains("no trust needed"));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# my settings\nmax_iterations = 30\n"), "{text}");
    assert!(text.contains("[mcp_servers.mine]"), "{text}");
    let other = tempfile::tempdir().unwrap();
    axon(other.path(), home.path())
        .args(["mcp", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("mine"));
    axon(dir.path(), home.path())
        .args(["mcp", "add", "--scope", "user", "mine", "--", "x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("already has [mcp_servers.mine]"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text, "a refused add writes nothing");
    assert!(!other.path().join(".mcp.json").exists() && !other.path().join(".axon").exists());
}
