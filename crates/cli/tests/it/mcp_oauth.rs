//! `axon mcp login` end to end, through the real `axon` binary, against a
//! small OAuth 2.1 authorization server and a protected MCP resource served
//! by axon_testkit::oauth on a free loopback port: discovery from the 401's
//! `WWW-Authenticate`, dynamic client registration, PKCE (S256 checked),
//! the loopback redirect (this test plays the browser), a tool call with the
//! token, a refresh of an expired token before use, and a revoked token
//! leaving the server "needs login" with the command to run. The token file
//! is 0600 and no token appears in the workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use serde_json::{Value, json};

fn axon(home: &Path, workspace: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home)
        .current_dir(workspace);
    cmd
}

/// Runs `cmd` to the end, bounded; (status ok, stdout, stderr).
fn run(mut cmd: std::process::Command) -> (bool, String, String) {
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A plain HTTP/1.1 GET, no redirects followed: (status line, Location).
fn http_get(url: &str) -> (String, Option<String>) {
    let parsed = url::Url::parse(url).unwrap();
    let address = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap());
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let path = match parsed.query() {
        Some(q) => format!("{}?{q}", parsed.path()),
        None => parsed.path().to_string(),
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        parsed.authority()
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.lines().next().unwrap_or("").to_string();
    let location = text
        .lines()
        .find_map(|l| l.strip_prefix("location: ").or_else(|| l.strip_prefix("Location: ")))
        .map(|l| l.trim().to_string());
    (status, location)
}

/// `axon mcp login remote`, this test playing the browser: it reads the
/// printed URL, GETs it and follows its redirect to the loopback port.
fn login(home: &Path, workspace: &Path) -> String {
    let mut cmd = axon(home, workspace);
    cmd.args(["mcp", "login", "remote", "--no-browser"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(read > 0, "axon mcp login ended before printing a URL:\n{seen}");
        seen.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http") {
            break format!("http{url}");
        }
    };
    let (status, location) = http_get(&url);
    assert!(status.contains("302"), "{status}");
    let location = location.unwrap();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let (status, _) = http_get(&location);
    assert!(status.contains("200"), "{status}");
    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{seen}{rest}{stdout}");
    stdout
}

fn token_files(home: &Path) -> Vec<PathBuf> {
    let dir = home.join("data").join("mcp-tokens");
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

fn all_text_under(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&all_text_under(&path));
        } else if let Ok(content) = std::fs::read(&path) {
            text.push_str(&String::from_utf8_lossy(&content));
        }
    }
    text
}

#[test]
fn login_call_refresh_revoke_and_logout() {
    let server = axon_testkit::oauth::start();
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[mcp_servers.remote]\nurl = \"{}/mcp\"\n", server.base),
    )
    .unwrap();

    // Before any login: the server refuses, and says what to run.
    let mut list = axon(home.path(), workspace.path());
    list.args(["mcp", "list"]);
    let (_, stdout, stderr) = run(list);
    assert!(stdout.contains("needs login: run `axon mcp login remote`"), "{stdout}{stderr}");

    let said = login(home.path(), workspace.path());
    assert!(said.contains("Signed in to remote"), "{said}");
    assert_eq!(server.registered(), 1, "dynamic registration");
    let files = token_files(home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(stored.contains("secret-access-"));
    assert!(!said.contains("secret-"), "{said}");

    // A tool call with the token.
    let call = |name: &str| {
        let mut cmd = axon(home.path(), workspace.path());
        cmd.args(["mcp", "call", "remote", name, "{}"]);
        run(cmd)
    };
    let (ok, stdout, stderr) = call("whoami");
    assert!(ok && stdout.contains("signed in"), "{stdout}{stderr}");
    assert!(!stderr.contains("secret-") && !stdout.contains("secret-"));

    // An expired token is refreshed before it is used.
    let mut credentials: Value = serde_json::from_str(&stored).unwrap();
    credentials["token_received_at"] = json!(1);
    std::fs::write(&files[0], credentials.to_string()).unwrap();
    let (ok, stdout, stderr) = call("whoami");
    assert!(ok && stdout.contains("signed in"), "{stdout}{stderr}");
    assert_eq!(server.refreshed(), 1, "one refresh");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "still private after the refresh wrote it");

    // Revoked: the refresh is refused too, and the server needs login.
    server.revoke_all();
    let (ok, stdout, stderr) = call("whoami");
    assert!(!ok, "{stdout}{stderr}");
    assert!(format!("{stdout}{stderr}").contains("axon mcp login remote"), "{stdout}{stderr}");
    let mut list = axon(home.path(), workspace.path());
    list.args(["mcp", "list"]);
    let (_, stdout, stderr) = run(list);
    assert!(stdout.contains("needs login: run `axon mcp login remote`"), "{stdout}{stderr}");

    // Nothing of the tokens is in the workspace.
    assert!(!all_text_under(workspace.path()).contains("secret-"));

    let mut logout = axon(home.path(), workspace.path());
    logout.args(["mcp", "logout", "remote"]);
    let (ok, stdout, _) = run(logout);
    assert!(ok && stdout.contains("Signed out of remote"), "{stdout}");
    assert!(token_files(home.path()).is_empty());
    let mut again = axon(home.path(), workspace.path());
    again.args(["mcp", "logout", "remote"]);
    let (ok, stdout, _) = run(again);
    assert!(ok && stdout.contains("No tokens were kept"), "{stdout}");
    server.stop();
}

#[test]
fn a_workspace_server_needs_consent_to_log_in_and_never_gets_a_secret_variable() {
    // Issue 30 §2.4: a workspace `oauth = {client_secret_env = ...}` put the
    // user's key into the token request of `axon mcp login`.
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".axon")).unwrap();
    // Nothing listens on port 1: were the login to go ahead, it would fail
    // on the connection, not on consent.
    std::fs::write(
        workspace.path().join(".axon/config.toml"),
        "[mcp_servers.docs]\nurl = \"http://127.0.0.1:1/mcp\"\noauth = { client_id = \"x\", \
         client_secret_env = \"OPENAI_API_KEY\" }\n",
    )
    .unwrap();
    let mut login = axon(home.path(), workspace.path());
    login.env("OPENAI_API_KEY", "sk-user-key-0000").args(["mcp", "login", "docs", "--no-browser"]);
    let (ok, stdout, stderr) = run(login);
    assert!(!ok, "{stdout}{stderr}");
    assert!(
        stderr.contains("you have not allowed it") && stderr.contains("axon mcp trust docs"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-user-key"), "{stderr}");
}
