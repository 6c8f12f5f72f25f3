//! Seed 004's Correctness Properties, one proptest each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use nova::client::{ClientKind, HttpClient, MemoryClient, ReplyFuture, TaskManager, from_env};
use nova::mcp::NovaServer;
use nova::model::{Reply, StepCreate, StepPatch};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn memory_server() -> (Arc<MemoryClient>, NovaServer) {
    let client = Arc::new(MemoryClient::default());
    (client.clone(), NovaServer::new(client, None))
}

fn status_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("running".to_string()),
        Just("completed".to_string()),
        Just("failed".to_string()),
        Just("skipped".to_string()),
        "[A-Za-z_]{0,12}",
    ]
}

fn any_args() -> impl Strategy<Value = Value> {
    (
        prop::option::of("[a-z0-9-]{0,8}"),
        prop::option::of("[a-z0-9-]{0,8}"),
        prop::option::of(status_text()),
        prop::option::of("[ -~]{0,20}"),
        any::<bool>(),
    )
        .prop_map(|(execution, step, status, message, junk)| {
            let mut args = json!({});
            if let Some(e) = execution {
                args["execution_id"] = json!(e);
            }
            if let Some(s) = step {
                args["step_id"] = json!(s);
                args["step_name"] = json!(s);
                args["session_id"] = json!(s);
            }
            if let Some(s) = status {
                args["status"] = json!(s);
            }
            if let Some(m) = message {
                args["message"] = json!(m);
            }
            if junk {
                args["step_id"] = json!(42);
            }
            args
        })
}

/// Records what the tools pass on, and answers success.
#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl TaskManager for Recorder {
    fn kind(&self) -> ClientKind {
        ClientKind::Memory
    }
    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        session_id: &'a str,
    ) -> ReplyFuture<'a> {
        self.0
            .lock()
            .unwrap()
            .push(json!({"execution_id": execution_id, "session_id": session_id}));
        Box::pin(std::future::ready(Reply::ok("ok", json!({}))))
    }
    fn create_step<'a>(&'a self, execution_id: &'a str, create: StepCreate) -> ReplyFuture<'a> {
        self.0.lock().unwrap().push(json!({"execution_id": execution_id, "create": create}));
        Box::pin(std::future::ready(Reply::ok("ok", json!({}))))
    }
    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> ReplyFuture<'a> {
        self.0
            .lock()
            .unwrap()
            .push(json!({"execution_id": execution_id, "step_id": step_id, "patch": patch}));
        Box::pin(std::future::ready(Reply::ok("ok", json!({}))))
    }
    fn health(&self) -> ReplyFuture<'_> {
        Box::pin(std::future::ready(Reply::ok("ok", json!({}))))
    }
}

proptest! {
    #![proptest_config(config())]

    /// Seed 004, property 1 (response format consistency): "For any MCP
    /// tool call, when the operation succeeds the response contains
    /// success=True and a data field; when it fails, success=False and an
    /// error field."
    #[test]
    fn seed004_prop1_every_reply_has_the_uniform_shape(
        tool in prop::sample::select(vec!["update_execution_session", "create_step", "update_step", "health_check", "bogus"]),
        args in any_args(),
    ) {
        let (_, server) = memory_server();
        let reply = runtime().block_on(server.call(tool, args));
        if reply.0["success"] == true {
            prop_assert!(reply.0.get("data").is_some(), "{}", reply.0);
        } else {
            prop_assert_eq!(&reply.0["success"], &json!(false));
            prop_assert!(reply.0["error"].as_str().is_some_and(|e| !e.is_empty()), "{}", reply.0);
        }
    }

    /// Seed 004, property 2 (status validation): "For any status passed to
    /// update_step, if it is not in {running, completed, failed, skipped},
    /// the tool returns an error response with success=False."
    #[test]
    fn seed004_prop2_invalid_statuses_are_refused(status in status_text()) {
        let (_, server) = memory_server();
        runtime().block_on(async {
            let created = server.call("create_step", json!({"execution_id": "e", "step_name": "s"})).await;
            let step_id = created.0["data"]["step_id"].as_str().unwrap().to_string();
            let reply = server.call("update_step", json!({"execution_id": "e", "step_id": step_id, "status": status})).await;
            let valid = ["running", "completed", "failed", "skipped"].contains(&status.as_str());
            prop_assert_eq!(reply.is_success(), valid, "{}", reply.0);
            if !valid {
                let expected = format!("Invalid status '{status}'. Must be one of: running, completed, failed, skipped");
                prop_assert_eq!(reply.0["error"].as_str(), Some(expected.as_str()));
            }
            Ok(())
        })?;
    }

    /// Seed 004, property 3 (mock client state consistency): "For any step
    /// created through the Mock_Client, later updates to it are reflected in
    /// its state; for a step id that does not exist, an update returns an
    /// error."
    #[test]
    fn seed004_prop3_the_memory_client_keeps_state(
        updates in prop::collection::vec((prop::sample::select(vec!["running", "completed", "failed", "skipped"]), "[a-z ]{1,10}"), 1..6),
        unknown in "[a-z]{3,8}",
    ) {
        let (client, server) = memory_server();
        runtime().block_on(async {
            let created = server.call("create_step", json!({"execution_id": "e", "step_name": "s"})).await;
            let step_id = created.0["data"]["step_id"].as_str().unwrap().to_string();
            for (status, message) in &updates {
                let reply = server.call("update_step", json!({"execution_id": "e", "step_id": step_id, "status": status, "message": message})).await;
                prop_assert!(reply.is_success());
                let step = client.step(&step_id).unwrap();
                prop_assert_eq!(step.status.as_str(), *status);
                prop_assert_eq!(step.message.as_deref(), Some(message.as_str()));
            }
            let reply = server.call("update_step", json!({"execution_id": "e", "step_id": unknown, "status": "failed"})).await;
            let expected = format!("Step {unknown} not found");
            prop_assert_eq!(reply.0["error"].as_str(), Some(expected.as_str()));
            Ok(())
        })?;
    }

    /// Seed 004, property 4 (factory selection): "For any USE_MOCK_CLIENT
    /// value, when it is "true" (case-insensitive) the factory returns a
    /// MockTaskManagerClient; otherwise an HttpTaskManagerClient."
    #[test]
    fn seed004_prop4_the_factory_picks_by_use_mock_client(
        value in prop::option::of(prop_oneof![
            "[tT][rR][uU][eE]",
            "[A-Za-z0-9 ]{0,6}",
        ]),
    ) {
        let client = from_env(value.as_deref(), Some("http://127.0.0.1:9"));
        let mock = value.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("true"));
        prop_assert_eq!(client.kind(), if mock { ClientKind::Memory } else { ClientKind::Http });
    }

    /// Seed 004, property 5 (HTTP error handling): "For any HTTP response
    /// status code >= 400, HTTP_Client returns a response containing
    /// success=False, error and status_code."
    #[test]
    fn seed004_prop5_http_errors_become_error_replies(code in 400u16..600, with_body in any::<bool>()) {
        runtime().block_on(async {
            let app = axum::Router::new().route(
                "/api/health",
                axum::routing::get(move || async move {
                    let status = axum::http::StatusCode::from_u16(code).unwrap();
                    if with_body {
                        (status, axum::Json(json!({"error": "nope", "error_code": "TEST"}))).into_response()
                    } else {
                        (status, "plain text").into_response()
                    }
                }),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            let server = tokio::spawn(async move { axum::serve(listener, app).await });
            let reply = HttpClient::new(&url, std::time::Duration::from_secs(5)).health().await;
            server.abort();
            prop_assert_eq!(&reply.0["success"], &json!(false));
            prop_assert!(reply.0["error"].as_str().is_some_and(|e| !e.is_empty()));
            prop_assert_eq!(reply.0["status_code"].as_u64(), Some(u64::from(code)));
            if with_body {
                prop_assert_eq!(reply.0["error_code"].as_str(), Some("TEST"));
            }
            Ok(())
        })?;
    }

    /// Seed 004, property 6 (initial step status): "For any step created by
    /// create_step, if no status is given its initial status is "running";
    /// if one is given, that status is used."
    #[test]
    fn seed004_prop6_a_new_step_starts_running_unless_told(
        status in prop::option::of(prop::sample::select(vec!["running", "completed", "failed", "skipped"])),
    ) {
        let (client, server) = memory_server();
        let mut args = json!({"execution_id": "e", "step_name": "s"});
        if let Some(status) = status {
            args["status"] = json!(status);
        }
        let reply = runtime().block_on(server.call("create_step", args));
        let step = client.step(reply.0["data"]["step_id"].as_str().unwrap()).unwrap();
        prop_assert_eq!(step.status.as_str(), status.unwrap_or("running"));
    }

    /// Seed 004, property 7 (parameter passing integrity): "For any
    /// parameters passed to an MCP tool, the client method receives the
    /// same values (nothing lost, nothing altered)."
    #[test]
    fn seed004_prop7_parameters_reach_the_client_unchanged(
        execution in "[ -~]{1,20}",
        id in "[ -~]{1,20}",
        message in prop::option::of("[ -~]{0,30}"),
        status in prop::sample::select(vec!["running", "completed", "failed", "skipped"]),
    ) {
        prop_assume!(!execution.trim().is_empty() && !id.trim().is_empty());
        let recorder = Arc::new(Recorder::default());
        let server = NovaServer::new(recorder.clone(), None);
        runtime().block_on(async {
            server.call("update_execution_session", json!({"execution_id": execution, "session_id": id})).await;
            server.call("create_step", json!({"execution_id": execution, "step_name": id, "message": message, "status": status})).await;
            server.call("update_step", json!({"execution_id": execution, "step_id": id, "message": message, "status": status})).await;
        });
        let seen = recorder.0.lock().unwrap().clone();
        prop_assert_eq!(&seen[0], &json!({"execution_id": execution, "session_id": id}));
        let mut create = json!({"step_name": id, "status": status});
        let mut patch = json!({"status": status});
        if let Some(m) = &message {
            create["message"] = json!(m);
            patch["message"] = json!(m);
        }
        prop_assert_eq!(&seen[1], &json!({"execution_id": execution, "create": create}));
        prop_assert_eq!(&seen[2], &json!({"execution_id": execution, "step_id": id, "patch": patch}));
    }
}

#[test]
fn nova_execution_id_fills_in_a_missing_execution_id() {
    let client = Arc::new(MemoryClient::default());
    let server = NovaServer::new(client.clone(), Some("exec-env".into()));
    let rt = runtime();
    let reply = rt.block_on(server.call("update_execution_session", json!({"session_id": "s1"})));
    assert!(reply.is_success(), "{}", reply.0);
    assert_eq!(client.execution("exec-env").unwrap().session_id.as_deref(), Some("s1"));
    let (_, bare) = memory_server();
    let reply = rt.block_on(bare.call("create_step", json!({"step_name": "x"})));
    assert!(reply.0["error"].as_str().unwrap().contains("NOVA_EXECUTION_ID"));
    let reply = rt.block_on(bare.call("update_step", json!({"execution_id": "e", "step_id": "s"})));
    assert_eq!(reply.0["error"], "Provide at least status or message to update");
}

use axum::response::IntoResponse;
