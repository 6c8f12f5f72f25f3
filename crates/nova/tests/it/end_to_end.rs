//! The whole chain on one machine: the official Python MCP SDK drives
//! `nova-sync` over stdio, which reports to a real `nova-sync api` on
//! loopback (on SQLite and on PostgreSQL); the steps are then read back
//! from the API. schemathesis checks the API against its OpenAPI file on
//! both stores.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::postgres;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// `nova-sync ARGS…` started, and the first line it says on stderr.
fn start(args: &[&str], env: &[(&str, &str)]) -> (Reaped, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nova-sync"));
    command.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = Reaped(command.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(child.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    (child, line)
}

/// `nova-sync api` on a free loopback port with the database at `db`, and
/// its base URL.
fn start_api(db: &str) -> (Reaped, String) {
    let (child, line) = start(&["api", "--listen", "127.0.0.1:0", "--db", db], &[]);
    let base = line.split("API at ").nth(1).unwrap().split("/api").next().unwrap().to_string();
    (child, base)
}

/// Waits for `child` at most `limit`.
fn wait_bounded(child: &mut Reaped, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "{what} did not finish within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_agent_reports_steps_through_nova_sync_to_the_api() {
    let dir = tempfile::tempdir().unwrap();
    reports_steps(dir.path().join("nova.db").to_str().unwrap());
}

#[test]
fn an_agent_reports_steps_through_nova_sync_to_the_api_on_postgres() {
    reports_steps(&postgres::database());
}

fn reports_steps(db: &str) {
    let (_api, base) = start_api(db);

    let python = peers().join(".venv/bin/python");
    assert!(python.exists(), "run scripts/peers");
    let mut client = Reaped(
        Command::new(python)
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_e2e.py"))
            .arg(env!("CARGO_BIN_EXE_nova-sync"))
            .env("TASK_MANAGER_URL", &base)
            .env("NOVA_EXECUTION_ID", "exec-e2e")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let status = wait_bounded(&mut client, Duration::from_secs(60), "the SDK client");
    let mut out = String::new();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut client.0.stdout.take().unwrap(), &mut out).unwrap();
    std::io::Read::read_to_string(&mut client.0.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{out}\n{err}");
    let step_id = out.lines().last().unwrap().trim().to_string();

    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (execution, steps): (Value, Value) = runtime.block_on(async {
        let http = reqwest::Client::new();
        let execution = http
            .get(format!("{base}/api/executions/exec-e2e"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let steps = http
            .get(format!("{base}/api/executions/exec-e2e/steps"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (execution, steps)
    });
    assert_eq!(execution["session_id"], "sdk-session");
    assert_eq!(steps.as_array().unwrap().len(), 1);
    assert_eq!(steps[0]["step_id"], step_id.as_str());
    assert_eq!(steps[0]["status"], "completed");
    assert_eq!(steps[0]["message"], "done");
}

/// schemathesis (pinned in tests/peers/) generates requests from
/// docs/openapi.yaml, valid and invalid, and checks every answer: no server
/// errors, responses that conform, invalid requests refused.
#[test]
fn schemathesis_finds_no_issue_in_the_api() {
    schemathesis(":memory:");
}

#[test]
fn schemathesis_finds_no_issue_in_the_api_on_postgres() {
    schemathesis(&postgres::database());
}

fn schemathesis(db: &str) {
    let (_api, base) = start_api(db);
    let schemathesis = peers().join(".venv/bin/schemathesis");
    assert!(schemathesis.exists(), "run scripts/peers");
    // schemathesis keeps a cache folder where it runs: a throwaway one.
    let work = tempfile::tempdir().unwrap();
    let log = tempfile::NamedTempFile::new_in(work.path()).unwrap();
    let mut run = Reaped(
        Command::new(schemathesis)
            .arg("run")
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.yaml"))
            .args(["--url", &base, "--checks", "all", "--max-examples", "50", "--no-color"])
            .env("SCHEMATHESIS_HOOKS", "")
            .current_dir(work.path())
            .stdin(Stdio::null())
            .stdout(log.reopen().unwrap())
            .stderr(log.reopen().unwrap())
            .spawn()
            .unwrap(),
    );
    let status = wait_bounded(&mut run, Duration::from_secs(240), "schemathesis");
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(status.success() && text.contains("No issues found"), "{text}");
    assert!(text.contains("Tested: 6"), "every operation was tested:\n{text}");
}

/// `nova-sync --http` answers MCP over streamable HTTP.
#[test]
fn the_mcp_server_also_speaks_streamable_http() {
    let (_server, line) = start(&["--http", "127.0.0.1:0"], &[("USE_MOCK_CLIENT", "TRUE")]);
    let url = line.split("MCP at ").nth(1).unwrap().trim().to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let body = runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.text().await.unwrap()
    });
    assert!(body.contains("\"name\":\"nova-sync\""), "{body}");
}
