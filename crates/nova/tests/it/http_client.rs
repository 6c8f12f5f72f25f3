//! The HTTP client against the real `nova-sync api` (its router on loopback,
//! over an in-memory SQLite database and over a real PostgreSQL server), a
//! stopped server, and a server that never answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::postgres;

use std::time::Duration;

use nova::api::{Db, router};
use nova::client::{HttpClient, TaskManager};
use nova::model::{StepCreate, StepPatch, StepStatus};
use serde_json::{Value, json};

/// Which store the API runs on.
#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

async fn start_api(backend: Backend) -> (String, tokio::task::JoinHandle<()>) {
    let db = match backend {
        Backend::Sqlite => Db::open(std::path::Path::new(":memory:")).unwrap(),
        Backend::Postgres => {
            let url = tokio::task::spawn_blocking(postgres::database).await.unwrap();
            Db::postgres(&url).await.unwrap()
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router(db)).await;
    });
    (url, task)
}

#[tokio::test]
async fn the_client_drives_the_real_api() {
    for backend in BACKENDS {
        drives_the_real_api(backend).await;
    }
}

async fn drives_the_real_api(backend: Backend) {
    let (url, server) = start_api(backend).await;
    let client = HttpClient::new(&url, Duration::from_secs(5));
    assert_eq!(client.health().await.0["data"], json!({"status": "ok"}));

    let reply = client.patch_execution("exec 1/ä", "session-9").await;
    assert!(reply.is_success(), "{}", reply.0);
    assert_eq!(reply.0["data"]["session_id"], "session-9");
    assert_eq!(reply.0["data"]["execution_id"], "exec 1/ä");

    let create = StepCreate {
        step_name: "analyzing".into(),
        message: Some("reading code".into()),
        status: None,
    };
    let created = client.create_step("exec 1/ä", create).await;
    assert!(created.is_success(), "{}", created.0);
    assert_eq!(created.0["data"]["status"], "running");
    let step_id = created.0["data"]["step_id"].as_str().unwrap().to_string();

    let patch = StepPatch { status: Some(StepStatus::Completed), message: None };
    let updated = client.patch_step("exec 1/ä", &step_id, patch).await;
    assert_eq!(updated.0["data"]["status"], "completed");
    assert_eq!(updated.0["data"]["message"], "reading code", "an absent message is kept");

    // Read back through the API itself.
    let http = crate::support::http();
    let steps: Value = http
        .get(format!("{url}/api/executions/exec%201%2F%C3%A4/steps"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(steps[0]["step_id"], step_id.as_str());
    assert_eq!(steps[0]["status"], "completed");
    let page = http.get(format!("{url}/")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("analyzing") && page.contains("class=\"completed\""), "{page}");

    let missing = client
        .patch_step(
            "exec 1/ä",
            "step-nope",
            StepPatch { status: Some(StepStatus::Failed), message: None },
        )
        .await;
    assert_eq!(missing.0["success"], false);
    assert_eq!(missing.0["status_code"], 404);
    assert_eq!(missing.0["error_code"], "NOT_FOUND");
    assert_eq!(missing.0["error"], "Step step-nope not found");

    let bad = http
        .post(format!("{url}/api/executions/e/steps"))
        .header("content-type", "application/json")
        .body(r#"{"step_name": "x", "status": "dancing"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error_code"], "INVALID_REQUEST");
    server.abort();
}

#[tokio::test]
async fn a_stopped_server_is_a_connection_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let reply = HttpClient::new(&url, Duration::from_secs(5)).health().await;
    assert_eq!(reply.0, json!({"success": false, "error": format!("Connection failed to {url}")}));
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accepts connections and reads, but never answers.
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let reply = HttpClient::new(&url, Duration::from_millis(300)).health().await;
    assert_eq!(reply.0, json!({"success": false, "error": "Request timeout"}));
    server.abort();
}

/// Ids and names with a NUL byte are refused with 400 naming the field (the
/// database would cut them there), and a body over the limit gets 413 with
/// the API's error body; the MCP tools refuse NUL bytes the same way.
#[tokio::test]
async fn nul_bytes_and_oversized_bodies_are_refused() {
    for backend in BACKENDS {
        refuses_nul_bytes_and_oversized_bodies(backend).await;
    }
}

async fn refuses_nul_bytes_and_oversized_bodies(backend: Backend) {
    let (url, server) = start_api(backend).await;
    let http = crate::support::http();
    let send = async |method: reqwest::Method, path: &str, body: String| {
        let response = http
            .request(method, format!("{url}{path}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json::<Value>().await.unwrap())
    };
    let cases = [
        (
            reqwest::Method::POST,
            "/api/executions/e/steps",
            json!({"step_name": "a\u{0}b"}),
            "step_name",
        ),
        (
            reqwest::Method::POST,
            "/api/executions/e%00x/steps",
            json!({"step_name": "a"}),
            "execution_id",
        ),
        (
            reqwest::Method::PATCH,
            "/api/executions/e%00",
            json!({"session_id": "s"}),
            "execution_id",
        ),
        (
            reqwest::Method::PATCH,
            "/api/executions/e",
            json!({"session_id": "s\u{0}"}),
            "session_id",
        ),
        (
            reqwest::Method::PATCH,
            "/api/executions/e/steps/s%00",
            json!({"message": "m"}),
            "step_id",
        ),
        (reqwest::Method::GET, "/api/executions/e%00", json!({}), "execution_id"),
    ];
    for (method, path, body, field) in cases {
        let (status, reply) = send(method.clone(), path, body.to_string()).await;
        assert_eq!(status, 400, "{method} {path}: {reply}");
        assert_eq!(reply["error_code"], "INVALID_REQUEST", "{reply}");
        assert_eq!(reply["error"], format!("{field} must not contain a NUL byte"), "{reply}");
    }
    let huge = json!({"step_name": "big", "message": "x".repeat(nova::api::BODY_LIMIT)});
    let (status, reply) =
        send(reqwest::Method::POST, "/api/executions/e/steps", huge.to_string()).await;
    assert_eq!(status, 413, "{reply}");
    assert_eq!(reply["error_code"], "PAYLOAD_TOO_LARGE", "{reply}");
    assert!(reply["error"].as_str().unwrap().contains("larger than"), "{reply}");
    let (status, _) = send(reqwest::Method::GET, "/api/executions/e/steps", String::new()).await;
    assert_eq!(status, 404, "nothing was stored by the refused requests");

    let mcp = nova::mcp::NovaServer::new(
        std::sync::Arc::new(nova::client::MemoryClient::default()),
        Some("e".into()),
    );
    let reply = mcp.call("create_step", json!({"step_name": "a\u{0}"})).await;
    assert_eq!(reply.0["success"], false);
    assert_eq!(reply.0["error"], "step_name must not contain a NUL byte");
    server.abort();
}

/// A documented error status whose body is not the API's error body still
/// gives its status (the generated client cannot parse it; the wrapper
/// knows the status), and an undocumented one does too.
#[tokio::test]
async fn error_statuses_without_the_error_body_keep_their_status() {
    let app = axum::Router::new()
        .route(
            "/api/executions/{id}/steps/{step}",
            axum::routing::patch(|| async { (axum::http::StatusCode::NOT_FOUND, "no such thing") }),
        )
        .route(
            "/api/executions/{id}/steps",
            axum::routing::post(|| async {
                (
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    axum::Json(json!({"error": "busy", "error_code": "BUSY"})),
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = HttpClient::new(&url, Duration::from_secs(5));
    let reply = client
        .patch_step("e", "s", StepPatch { status: Some(StepStatus::Failed), message: None })
        .await;
    assert_eq!(
        reply.0,
        json!({"success": false, "status_code": 404,
               "error": format!("HTTP 404 from {url}/api/executions/e/steps/s: no such thing")})
    );
    let reply = client
        .create_step("e", StepCreate { step_name: "n".into(), message: None, status: None })
        .await;
    assert_eq!(
        reply.0,
        json!({"success": false, "status_code": 503, "error": "busy", "error_code": "BUSY"})
    );
    server.abort();
}

/// Ids with characters URL parsing would reinterpret (`\`, `?`, `#`, `%`)
/// reach the API intact, and optional fields the server sent as null read
/// back as null in the reply's data.
#[tokio::test]
async fn awkward_ids_round_trip_and_nulls_stay() {
    for backend in BACKENDS {
        let (url, server) = start_api(backend).await;
        let client = HttpClient::new(&url, Duration::from_secs(5));
        let id = "a\\b?c#d%2F/..";
        let created = client
            .create_step(id, StepCreate { step_name: "s".into(), message: None, status: None })
            .await;
        assert!(created.is_success(), "{backend:?}: {}", created.0);
        assert_eq!(created.0["data"]["execution_id"], id);
        assert!(created.0["data"].as_object().unwrap().contains_key("message"));
        assert_eq!(created.0["data"]["message"], Value::Null);
        let step_id = created.0["data"]["step_id"].as_str().unwrap().to_string();
        let updated = client
            .patch_step(
                id,
                &step_id,
                StepPatch { status: Some(StepStatus::Skipped), message: None },
            )
            .await;
        assert_eq!(updated.0["data"]["status"], "skipped", "{backend:?}: {}", updated.0);
        let execution = client.patch_execution(id, "s").await;
        assert_eq!(execution.0["data"]["worktree_path"], Value::Null);
        assert!(execution.0["data"].as_object().unwrap().contains_key("worktree_path"));
        server.abort();
    }
}
