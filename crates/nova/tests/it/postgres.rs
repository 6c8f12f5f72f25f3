//! `nova-sync api` on PostgreSQL, as separate processes on one real server:
//! a step created through one API process is updated through another and
//! read back through the first; processes starting together on a new
//! database create its schema once; `DATABASE_URL` picks the store; data
//! outlives the processes; the SQLite store records its schema version too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::postgres;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `nova-sync api` on a free loopback port with `--db db` (or, with `db`
/// `None`, `DATABASE_URL=env_url`), its base URL and first line.
fn start_api(db: Option<&str>, env_url: Option<&str>) -> (Reaped, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nova-sync"));
    command.args(["api", "--listen", "127.0.0.1:0"]);
    if let Some(db) = db {
        command.args(["--db", db]);
    }
    command.env_remove("DATABASE_URL");
    if let Some(url) = env_url {
        command.env("DATABASE_URL", url);
    }
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = Reaped(command.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(child.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let Some(rest) = line.split("API at ").nth(1) else {
        panic!("nova-sync api did not start: {line}")
    };
    let base = rest.split("/api").next().unwrap().to_string();
    (child, base, line)
}

fn runtime() -> tokio::runtime::Runtime {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn call(method: reqwest::Method, url: String, body: Option<Value>) -> (u16, Value) {
    let mut request = crate::support::http().request(method, url);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[test]
fn two_api_processes_serve_one_database() {
    let url = postgres::database();
    let (_a, a, line) = start_api(Some(&url), None);
    assert!(line.contains("on postgres"), "{line}");
    let (_b, b, _) = start_api(Some(&url), None);
    runtime().block_on(async {
        let (status, step) = call(
            reqwest::Method::POST,
            format!("{a}/api/executions/shared/steps"),
            Some(json!({"step_name": "plan", "message": "through a"})),
        )
        .await;
        assert_eq!(status, 201, "{step}");
        let step_id = step["step_id"].as_str().unwrap();
        let (status, updated) = call(
            reqwest::Method::PATCH,
            format!("{b}/api/executions/shared/steps/{step_id}"),
            Some(json!({"status": "completed"})),
        )
        .await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["message"], "through a");
        let (status, steps) =
            call(reqwest::Method::GET, format!("{a}/api/executions/shared/steps"), None).await;
        assert_eq!(status, 200);
        assert_eq!(steps.as_array().unwrap().len(), 1, "{steps}");
        assert_eq!(steps[0]["status"], "completed");
        let (status, missing) = call(
            reqwest::Method::PATCH,
            format!("{b}/api/executions/shared/steps/step-nope"),
            Some(json!({"status": "failed"})),
        )
        .await;
        assert_eq!(status, 404);
        assert_eq!(
            missing,
            json!({"error": "Step step-nope not found", "error_code": "NOT_FOUND"})
        );
    });
}

/// Processes started together on an empty database create its schema once
/// (an advisory lock orders them), and a restart keeps the data.
#[test]
fn processes_starting_together_create_the_schema_once_and_data_outlives_them() {
    let server = postgres::server();
    let url = server.create_database();
    let started: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| start_api(None, Some(&url)))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let name = url.rsplit('/').next().unwrap();
    assert_eq!(server.psql(name, "SELECT version FROM nova_schema"), "1");
    let first = &started[0].1;
    runtime().block_on(async {
        let (status, _) = call(
            reqwest::Method::PATCH,
            format!("{first}/api/executions/kept"),
            Some(json!({"session_id": "s1"})),
        )
        .await;
        assert_eq!(status, 200);
    });
    drop(started);
    let (_again, base, _) = start_api(Some(&url), None);
    runtime().block_on(async {
        let (status, execution) =
            call(reqwest::Method::GET, format!("{base}/api/executions/kept"), None).await;
        assert_eq!(status, 200);
        assert_eq!(execution["session_id"], "s1");
    });
}

#[test]
fn an_unreachable_database_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = Command::new(env!("CARGO_BIN_EXE_nova-sync"))
        .args(["api", "--listen", "127.0.0.1:0", "--db"])
        .arg(format!("postgres://nova:secret@127.0.0.1:{port}/none"))
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("cannot open the database postgres://nova:***@127.0.0.1:"), "{text}");
    assert!(!text.contains("secret"), "the password is not shown: {text}");
}

/// SQLite records its schema version, and adopts a database made before
/// versioning (same tables, version 0) with its rows.
#[test]
fn sqlite_records_its_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE executions (execution_id TEXT PRIMARY KEY, session_id TEXT, worktree_path TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             INSERT INTO executions VALUES ('old', 's', NULL, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');",
        )
        .unwrap();
    }
    let db = nova::store::Db::open(&path).unwrap();
    let execution = runtime().block_on(db.store().execution("old")).unwrap().unwrap();
    assert_eq!(execution.session_id.as_deref(), Some("s"));
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 1);
}
