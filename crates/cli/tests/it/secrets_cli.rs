//! Issue 13, secrets and process lifetime, through the real binary: what a
//! `shell` command and a stdio MCP server see of axon's environment, a
//! server that does not speak MCP, and that nothing a command started
//! outlives axon (killed with `kill -9`, or leaving normally).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use axon_testkit::Reply;
use serde_json::json;

const AXON_KEY: &str = "sk-axon-0123456789abcdefghij";
const OPENAI_KEY: &str = "sk-openai-0123456789abcdefghij";
const CONFIGURED_KEY: &str = "configured-llm-credential-value";

/// `axon` in `dir` with a clean environment holding API keys, as a user's
/// shell would.
fn axon(dir: &Path, home: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AXON_HOME", home)
        .env("LC_ALL", "C")
        .env("AXON_API_KEY", AXON_KEY)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env("GITHUB_TOKEN", "ghp-not-for-commands")
        .env("MY_LLM", CONFIGURED_KEY)
        .env("HARMLESS", "visible")
        .current_dir(dir)
        .timeout(Duration::from_secs(90));
    cmd
}

/// `env` run by the `shell` tool, as `NAME=value` lines.
fn shell_env(dir: &Path, home: &Path) -> String {
    let out = axon(dir, home)
        .args(["tool", "call", "shell", r#"{"command": "env"}"#])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn has_var(env: &str, name: &str) -> bool {
    env.lines().any(|line| line.starts_with(&format!("{name}=")))
}

#[test]
fn shell_commands_never_see_api_keys() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // A provider whose key variable does not look like one.
    std::fs::write(
        home.path().join("config.toml"),
        "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MY_LLM\"\n",
    )
    .unwrap();
    let env = shell_env(dir.path(), home.path());
    for name in ["AXON_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "MY_LLM"] {
        assert!(!has_var(&env, name), "{name} reached the command:\n{env}");
    }
    for value in [AXON_KEY, OPENAI_KEY, CONFIGURED_KEY] {
        assert!(!env.contains(value), "a key's value reached the command:\n{env}");
    }
    assert!(has_var(&env, "HARMLESS") && has_var(&env, "PATH") && has_var(&env, "LC_ALL"), "{env}");
}

#[test]
fn the_shell_environment_policy_can_narrow_and_widen() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        home.path().join("config.toml"),
        "[shell_environment_policy]\ninherit = \"core\"\ninclude = [\"github_*\", \"*KEY\"]\n\
         exclude = [\"LC_*\"]\nset = { FROM_POLICY = \"1\" }\n",
    )
    .unwrap();
    // A repository cannot widen it.
    std::fs::create_dir(dir.path().join(".axon")).unwrap();
    std::fs::write(
        dir.path().join(".axon/config.toml"),
        "[shell_environment_policy]\ninherit = \"all\"\ninclude = [\"*\"]\nexclude = [\"HOME\"]\n",
    )
    .unwrap();
    let env = shell_env(dir.path(), home.path());
    assert!(has_var(&env, "PATH"), "core is kept:\n{env}");
    assert!(!has_var(&env, "HARMLESS"), "inherit = core drops the rest:\n{env}");
    assert!(has_var(&env, "GITHUB_TOKEN"), "include lets a named secret through:\n{env}");
    assert!(!has_var(&env, "LC_ALL"), "exclude wins:\n{env}");
    assert!(env.contains("FROM_POLICY=1"), "{env}");
    assert!(!has_var(&env, "HOME"), "a repository may exclude more:\n{env}");
    // `*KEY` is a wildcard: the keys axon knows about never pass by one.
    assert!(!has_var(&env, "AXON_API_KEY") && !has_var(&env, "OPENAI_API_KEY"), "{env}");

    std::fs::write(
        home.path().join("config.toml"),
        "[shell_environment_policy]\ninherit = \"none\"\nset = { ONLY = \"this\" }\n",
    )
    .unwrap();
    std::fs::remove_file(dir.path().join(".axon/config.toml")).unwrap();
    let out = axon(dir.path(), home.path())
        .args(["tool", "call", "shell", r#"{"command": "/usr/bin/env"}"#])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let env = String::from_utf8(out).unwrap();
    assert!(has_var(&env, "ONLY") && !has_var(&env, "HARMLESS") && !has_var(&env, "HOME"), "{env}");
}

fn everything_js() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(path.exists(), "{} is missing: run scripts/peers", path.display());
    path.display().to_string()
}

#[test]
fn a_stdio_mcp_server_gets_its_env_and_the_core_only() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = json!({"mcpServers": {"everything": {
        "command": "node", "args": [everything_js(), "stdio"], "env": {"FROM_CONFIG": "yes"},
        "startup_timeout_ms": 60000}}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    let out = axon(dir.path(), home.path())
        .args(["mcp", "call", "everything", "get-env", "{}"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let start = text.find('{').unwrap();
    let env: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
    assert_eq!(env["FROM_CONFIG"], "yes", "{env}");
    assert!(env["PATH"].is_string() && env["LC_ALL"] == "C", "the core is kept: {env}");
    for name in ["AXON_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "MY_LLM", "HARMLESS"] {
        assert!(env.get(name).is_none(), "{name} reached the server: {env}");
    }
}

#[test]
fn a_server_writing_garbage_is_reported_at_once() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Its startup timeout is far beyond the command's own limit: only a
    // prompt verdict lets the command finish.
    std::fs::write(
        home.path().join("config.toml"),
        "[mcp_servers.chatty]\ncommand = \"sh\"\nargs = [\"-c\", \"printf 'Server listening\\\\033[0m on 8080\\\\n'; sleep 600\"]\nstartup_timeout_ms = 600000\n",
    )
    .unwrap();
    let out = axon(dir.path(), home.path()).args(["mcp", "list"]).assert().get_output().clone();
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains(r#"MCP server chatty is not speaking MCP: first bytes "Server listening\u{1b}[0m on 8080""#),
        "{text}"
    );
}

/// Processes whose working folder is `dir`: what a command started there
/// and anything they started in turn.
fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = std::fs::canonicalize(dir).unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|pid: &u32| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir))
        .filter(|pid| {
            // A zombie waiting for its parent to reap it runs nothing.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z" | "X") | None)
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn kill_9_of_axon_takes_the_running_command_with_it() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = std::process::Command::new(cargo_bin("axon"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home.path())
        .current_dir(dir.path())
        .args(["tool", "call", "shell", r#"{"command": "touch started; sleep 60; touch marker"}"#])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut axon = command.spawn().unwrap();
    wait_until("the command started", Duration::from_secs(60), || {
        dir.path().join("started").exists()
    });
    axon.kill().unwrap();
    axon.wait().unwrap();
    // `sleep 60` would outlive this deadline by far if it were left running.
    wait_until("every process of the command ended", Duration::from_secs(40), || {
        processes_in(dir.path()).is_empty()
    });
    assert!(!dir.path().join("marker").exists());
}

#[test]
fn a_detached_grandchild_is_killed_when_axon_leaves() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The command returns once the daemon runs, so axon leaves while it does.
    let detach = r#"{"command": "setsid sh -c 'touch started; sleep 60; touch marker' </dev/null >/dev/null 2>&1 & while [ ! -e started ]; do sleep 0.05; done"}"#;
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home.path())
        .current_dir(dir.path())
        .timeout(Duration::from_secs(90))
        .args(["tool", "call", "shell", detach])
        .assert()
        .success();
    wait_until("the daemon was killed", Duration::from_secs(40), || {
        processes_in(dir.path()).is_empty()
    });
    assert!(!dir.path().join("marker").exists());
}

#[test]
fn a_key_in_the_first_prompt_stays_out_of_the_session_and_the_list() {
    let s = common::setup(vec![Reply::text("done")]);
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    s.axon().args(["run", &format!("call the API with {key} please")]).assert().success();
    let dir = s.home.path().join("data/sessions");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("sk-proj-abcdefgh"), "{text}");
    }
    let listed = s.axon().args(["sessions", "list"]).assert().success().get_output().clone();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.contains("call the API with [redacted]"), "{listed}");
    assert!(!listed.contains("sk-proj-abcdefgh"), "{listed}");
}

#[test]
fn sigterm_ends_axon_as_leaving_does_and_takes_detached_daemons_along() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The daemon detaches and the command keeps running: axon is mid-call
    // when the signal comes.
    let detach = r#"{"command": "setsid sh -c 'touch started; sleep 60; touch marker' </dev/null >/dev/null 2>&1 & sleep 60"}"#;
    let mut axon = std::process::Command::new(cargo_bin("axon"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home.path())
        .current_dir(dir.path())
        .args(["tool", "call", "shell", detach])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the daemon started", Duration::from_secs(60), || {
        dir.path().join("started").exists()
    });
    let pid = i32::try_from(axon.id()).unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = axon.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    wait_until("every process of the command ended", Duration::from_secs(40), || {
        processes_in(dir.path()).is_empty()
    });
    assert!(!dir.path().join("marker").exists());
}

#[test]
fn a_command_cannot_read_the_keys_out_of_axons_own_environment() {
    // Root may read any process's environment; the promise is for the
    // user's own account, so as root axon runs as `nobody` here.
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if as_root {
        for path in [dir.path(), home.path()] {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
        }
    }
    let script = r#"{"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo done"}"#;
    let mut cmd = if as_root {
        let mut cmd = assert_cmd::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(cargo_bin("axon"));
        cmd
    } else {
        assert_cmd::Command::new(cargo_bin("axon"))
    };
    let out = cmd
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("AXON_HOME", home.path())
        .env("AXON_API_KEY", AXON_KEY)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .current_dir(dir.path())
        .timeout(Duration::from_secs(90))
        .args(["tool", "call", "shell", script])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done"), "the command did not run: {text}");
    assert!(!text.contains(AXON_KEY) && !text.contains(OPENAI_KEY), "{text}");
    assert!(text.contains("Permission denied"), "{text}");
}

#[test]
fn a_background_command_is_redacted_in_the_session_and_ends_with_axon() {
    let s = common::setup(vec![
        Reply::tool(
            "shell",
            json!({"command": "echo Authorization: Bearer abcdefghijklmnopqrstu; touch started; sleep 60; touch marker",
                   "background": true}),
        ),
        Reply::tool("shell_output", json!({"id": "bg1", "wait_ms": 30000})),
        Reply::text("done"),
    ]);
    s.axon().args(["run", "--yes", "start the server"]).assert().success();
    // The command ran (its output was read) and did not outlive axon.
    assert!(s.workspace.path().join("started").exists());
    wait_until("the background command ended with axon", Duration::from_secs(40), || {
        processes_in(s.workspace.path()).is_empty()
    });
    assert!(!s.workspace.path().join("marker").exists());
    let sessions = s.home.path().join("data/sessions");
    let file = std::fs::read_dir(sessions).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("[bg1] running for"), "shell_output's result is saved: {text}");
    // The output read, masked before the model saw it (issue 36 §1) and so
    // in the session as the model saw it.
    assert!(text.contains(r"touch marker`\nAuthorization: [SECRET:"), "{text}");
    assert!(!text.contains("abcdefghijklmnopqrstu"), "the token is redacted: {text}");
}
