//! `axon run` exporting to an OTLP/HTTP collector named by the standard
//! variables (issue 35 §7): the binary reads them from its environment,
//! exports metrics and spans, and flushes them before it exits; a
//! protocol it does not speak is a warning naming the fix; a collector
//! that is down does not hold the exit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::common::{eventually, setup};
use axon_testkit::Reply;
use serde_json::json;

/// What a loopback collector received: each request's path, its
/// `authorization` header and body.
type Received = Arc<Mutex<Vec<(String, Option<String>, Vec<u8>)>>>;

/// A loopback OTLP/HTTP collector on a free port, on `runtime`, answering
/// every POST with `status` and `body`: its base URL and what it received.
/// The doctor's tests use it too.
pub(crate) fn collector(
    runtime: &tokio::runtime::Runtime,
    status: u16,
    body: &'static str,
) -> (String, Received) {
    let received: Received = Arc::default();
    let seen = Arc::clone(&received);
    let status = axum::http::StatusCode::from_u16(status).unwrap();
    let handler = move |uri: axum::http::Uri,
                        headers: axum::http::HeaderMap,
                        request: axum::body::Bytes| {
        let seen = Arc::clone(&seen);
        async move {
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(String::from);
            seen.lock().unwrap().push((uri.path().to_string(), auth, request.to_vec()));
            (status, body)
        }
    };
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(axum::routing::post(handler));
    runtime.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, received)
}

fn contains(body: &[u8], text: &str) -> bool {
    body.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn axon_run_exports_usage_and_spans_and_flushes_them_before_it_exits() {
    let s = setup(vec![Reply::tool("glob", json!({"pattern": "*"})), Reply::text("nothing here")]);
    let (url, received) = collector(&s.runtime, 200, "");
    let output = s
        .axon()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
        .env("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20otel-cli-token")
        .env("OTEL_SERVICE_NAME", "axon-cli-test")
        .args(["run", "list files"])
        .assert()
        .success()
        .get_output()
        .clone();
    let shown = String::from_utf8_lossy(&output.stderr).to_string()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(!shown.contains("otel-cli-token") && !shown.contains("telemetry"), "{shown}");
    // The metric interval is a minute: what arrived was flushed at exit.
    assert!(eventually(|| {
        let seen = received.lock().unwrap();
        let metrics = seen.iter().any(|(path, _, body)| {
            path == "/v1/metrics"
                && contains(body, "axon.token.usage")
                && contains(body, "axon-cli-test")
        });
        let spans = seen.iter().any(|(path, _, body)| {
            path == "/v1/traces"
                && contains(body, "execute_tool glob")
                && contains(body, "invoke_agent axon")
        });
        metrics && spans
    }));
    let seen = received.lock().unwrap();
    assert!(seen.iter().all(|(_, auth, _)| auth.as_deref() == Some("Bearer otel-cli-token")));
    drop(seen);
    drop(s.runtime);
}

#[test]
fn grpc_is_a_warning_with_the_fix_and_a_dead_collector_does_not_hold_the_exit() {
    let s = setup(vec![Reply::text("hi")]);
    let closed = s.runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let output = s
        .axon()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &down)
        .env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
        .args(["run", "say hi"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("traces are not exported: OTLP protocol `grpc` is not supported")
            && stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");
    // The metrics' export at exit failed: said once, with where and why.
    let failed: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("axon: warning: telemetry: exporting to"))
        .collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(failed[0].contains(&format!("{down}/v1/metrics")), "{stderr}");
    assert!(failed[0].contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{stderr}");
    drop(s.runtime);
}

#[test]
fn a_collector_answering_500_is_one_warning_naming_it() {
    let s = setup(vec![Reply::text("hi")]);
    let (url, _) = collector(&s.runtime, 500, "collector is broken");
    let output = s
        .axon()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
        .args(["run", "say hi"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Metrics and traces both failed at exit; the user hears of it once.
    let failed: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("axon: warning: telemetry:")).collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(failed[0].contains(&format!("{url}/v1/")), "{stderr}");
    assert!(failed[0].contains("500") && failed[0].contains("collector is broken"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");
    drop(s.runtime);
}
