//! Usage and cost as OpenTelemetry metrics and traces (issue 35 §7),
//! received by an OTLP/HTTP collector the test runs on loopback: the
//! exporter's protobuf bodies decoded with `opentelemetry-proto`'s types.
//! Each session is given its telemetry config directly (tests in this
//! binary run side by side and never touch the process's environment).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{Rig, next_event, opened, runtime, user};
use axon_protocol::{AgentEvent, StopReason};
use axon_runtime::telemetry::{Destination, TelemetryConfig, TelemetryFile};
use axon_testkit::Reply;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;

/// One request the collector received.
#[derive(Clone)]
struct Received {
    path: String,
    authorization: Option<String>,
    body: Vec<u8>,
}

/// A loopback OTLP/HTTP collector answering every export with `status`.
struct Collector {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    async fn start(status: u16) -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&received);
        let status = axum::http::StatusCode::from_u16(status).unwrap();
        let handler =
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().push(Received {
                        path: uri.path().to_string(),
                        authorization: headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string),
                        body: body.to_vec(),
                    });
                    status
                }
            };
        let app = axum::Router::new().fallback(axum::routing::post(handler));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Collector { url, received, task }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// What was received once `done` accepts it; fails after a minute.
    async fn wait_for(&self, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let seen = self.received();
            if done(&seen) {
                return seen;
            }
            assert!(Instant::now() < deadline, "the collector received {} requests", seen.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Metrics and traces to `base`, metrics only at the session's end.
fn telemetry_to(base: &str) -> TelemetryConfig {
    let headers = vec![("Authorization".to_string(), "Bearer otel-test-token".to_string())];
    TelemetryConfig {
        metrics: Some(Destination { url: format!("{base}/v1/metrics"), headers: headers.clone() }),
        traces: Some(Destination { url: format!("{base}/v1/traces"), headers }),
        service_name: "axon-test".to_string(),
        metric_interval: Duration::from_secs(3600),
        ..TelemetryConfig::default()
    }
}

/// The scripted model's price, so each call (12 in, 7 out) has a cost.
fn price_the_scripted_model(rig: &Rig) {
    let path = rig.home.path().join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    let priced = config + "\n[prices.scripted]\ninput = 1.0\ncached_input = 0.5\noutput = 2.0\n";
    std::fs::write(&path, priced).unwrap();
}

fn text(value: &Option<AnyValue>) -> Option<String> {
    match value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::DoubleValue(d) => Some(d.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        _ => None,
    }
}

fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| text(&kv.value))
}

/// Every data point of the counter `name` across the exports: its
/// attributes and value.
fn points(metrics: &[ExportMetricsServiceRequest], name: &str) -> Vec<(Vec<KeyValue>, f64)> {
    let mut found = Vec::new();
    for request in metrics {
        for resource in &request.resource_metrics {
            for scope in &resource.scope_metrics {
                for metric in scope.metrics.iter().filter(|m| m.name == name) {
                    let Some(metric::Data::Sum(sum)) = &metric.data else {
                        panic!("{name} is not a sum: {metric:?}")
                    };
                    for point in &sum.data_points {
                        let value = match point.value {
                            Some(number_data_point::Value::AsInt(i)) => i as f64,
                            Some(number_data_point::Value::AsDouble(d)) => d,
                            None => continue,
                        };
                        found.push((point.attributes.clone(), value));
                    }
                }
            }
        }
    }
    found
}

fn decoded(received: &[Received]) -> (Vec<ExportMetricsServiceRequest>, Vec<Span>) {
    let metrics = received
        .iter()
        .filter(|r| r.path == "/v1/metrics")
        .map(|r| ExportMetricsServiceRequest::decode(r.body.as_slice()).unwrap())
        .collect();
    let spans = received
        .iter()
        .filter(|r| r.path == "/v1/traces")
        .map(|r| ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap())
        .flat_map(|request| request.resource_spans)
        .flat_map(|resource| resource.scope_spans)
        .flat_map(|scope| scope.spans)
        .collect();
    (metrics, spans)
}

/// Runs one turn (a `read_file` call, then an answer) and ends the session.
async fn one_turn_with_a_tool(rig: &Rig, telemetry: TelemetryConfig) -> StopReason {
    std::fs::write(rig.workspace.path().join("notes.txt"), "secret plans\n").unwrap();
    let mut config = rig.config();
    config.telemetry = telemetry;
    let (session, mut events) = rig.open(config).await;
    opened(&mut events);
    session.submit(user("read notes.txt"));
    let stop = loop {
        if let AgentEvent::TurnCompleted { stop_reason, .. } = next_event(&mut events).await {
            break stop_reason;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), session.shutdown())
        .await
        .expect("the session ends whatever the collector does");
    stop
}

fn script() -> Vec<Reply> {
    vec![Reply::tool("read_file", json!({"path": "notes.txt"})), Reply::text("read it")]
}

#[test]
fn usage_cost_and_the_session_go_out_as_metrics_and_the_turn_as_spans() {
    runtime().block_on(async {
        let collector = Collector::start(200).await;
        let rig = Rig::new(script()).await;
        price_the_scripted_model(&rig);
        let stop = one_turn_with_a_tool(&rig, telemetry_to(&collector.url)).await;
        assert_eq!(stop, StopReason::EndTurn);
        let received = collector
            .wait_for(|seen| {
                let (metrics, spans) = decoded(seen);
                !points(&metrics, "axon.cost.usage").is_empty() && spans.len() >= 4
            })
            .await;
        assert!(
            received.iter().all(|r| r.authorization.as_deref() == Some("Bearer otel-test-token")),
            "every export carries the configured header"
        );
        let (metrics, spans) = decoded(&received);

        // Tokens by model and type: two calls of 12 in and 7 out.
        let tokens = points(&metrics, "axon.token.usage");
        let of_type = |kind: &str| -> f64 {
            tokens
                .iter()
                .filter(|(attrs, _)| {
                    attribute(attrs, "type").as_deref() == Some(kind)
                        && attribute(attrs, "model").as_deref() == Some("scripted")
                })
                .map(|(_, value)| value)
                .sum()
        };
        assert_eq!(of_type("input"), 24.0, "{tokens:?}");
        assert_eq!(of_type("output"), 14.0, "{tokens:?}");
        assert_eq!(of_type("cacheRead"), 0.0, "{tokens:?}");
        // Each call: 12 × $1 + 7 × $2 per million tokens.
        let cost: f64 = points(&metrics, "axon.cost.usage").iter().map(|(_, v)| v).sum();
        assert!((cost - 2.0 * 26e-6).abs() < 1e-12, "cost {cost}");
        let sessions = points(&metrics, "axon.session.count");
        assert_eq!(sessions.iter().map(|(_, v)| v).sum::<f64>(), 1.0, "{sessions:?}");
        let resource = &metrics[0].resource_metrics[0].resource.as_ref().unwrap().attributes;
        assert_eq!(attribute(resource, "service.name").as_deref(), Some("axon-test"));

        // The turn's span, and below it two requests and the tool call.
        let turn = spans.iter().find(|s| s.name == "invoke_agent axon").expect("a turn span");
        assert!(turn.parent_span_id.is_empty());
        assert_eq!(attribute(&turn.attributes, "axon.stop_reason").as_deref(), Some("end_turn"));
        assert_eq!(attribute(&turn.attributes, "gen_ai.usage.input_tokens").as_deref(), Some("24"));
        let children: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id == turn.span_id && s.trace_id == turn.trace_id)
            .collect();
        let requests: Vec<&&Span> = children.iter().filter(|s| s.name == "chat scripted").collect();
        assert_eq!(requests.len(), 2, "{children:?}");
        for request in &requests {
            let attrs = &request.attributes;
            assert_eq!(attribute(attrs, "gen_ai.operation.name").as_deref(), Some("chat"));
            assert_eq!(attribute(attrs, "gen_ai.request.model").as_deref(), Some("scripted"));
            assert_eq!(attribute(attrs, "gen_ai.provider.name").as_deref(), Some("scripted"));
            assert_eq!(attribute(attrs, "gen_ai.usage.input_tokens").as_deref(), Some("12"));
            assert_eq!(attribute(attrs, "gen_ai.usage.output_tokens").as_deref(), Some("7"));
            assert!(attribute(attrs, "axon.cost_usd").is_some());
            assert!(request.end_time_unix_nano >= request.start_time_unix_nano);
        }
        let tool = children
            .iter()
            .find(|s| s.name == "execute_tool read_file")
            .expect("a tool span below the turn");
        assert_eq!(attribute(&tool.attributes, "gen_ai.tool.name").as_deref(), Some("read_file"));
        assert_eq!(attribute(&tool.attributes, "axon.tool.outcome").as_deref(), Some("ok"));
        // Names, counts and outcomes only: not the arguments, not the file.
        let everything = format!("{spans:?}");
        assert!(!everything.contains("notes.txt") && !everything.contains("secret plans"));
    });
}

/// The telemetry warnings among `events`.
fn telemetry_warnings(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } if message.starts_with("telemetry:") => {
                Some(message.clone())
            }
            _ => None,
        })
        .collect()
}

/// One turn while metrics are exported every 50 ms, then the events until
/// the first telemetry warning, and what else came up to the session's end.
async fn a_turn_exporting_to(rig: &Rig, base: &str, more: impl AsyncFnOnce()) -> Vec<AgentEvent> {
    let mut config = rig.config();
    config.telemetry =
        TelemetryConfig { metric_interval: Duration::from_millis(50), ..telemetry_to(base) };
    let (session, mut events) = rig.open(config).await;
    let mut seen = opened(&mut events);
    session.submit(user("read notes.txt"));
    loop {
        let event = next_event(&mut events).await;
        let done =
            matches!(event, AgentEvent::TurnCompleted { stop_reason: StopReason::EndTurn, .. });
        seen.push(event);
        if done {
            break;
        }
    }
    while telemetry_warnings(&seen).is_empty() {
        seen.push(next_event(&mut events).await);
    }
    more().await;
    tokio::time::timeout(Duration::from_secs(60), session.shutdown())
        .await
        .expect("the session ends whatever the collector does");
    seen.extend(opened(&mut events));
    seen
}

#[test]
fn a_collector_that_fails_or_is_down_is_one_warning_and_holds_nothing() {
    runtime().block_on(async {
        let failing = Collector::start(500).await;
        let rig = Rig::new(script()).await;
        std::fs::write(rig.workspace.path().join("notes.txt"), "plans\n").unwrap();
        let seen = a_turn_exporting_to(&rig, &failing.url, async || {
            // Many exports fail after the first; none is told again.
            failing.wait_for(|seen| seen.len() >= 4).await;
        })
        .await;
        let warnings = telemetry_warnings(&seen);
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        let warning = &warnings[0];
        assert!(warning.contains(&format!("{}/v1/", failing.url)), "{warning}");
        assert!(warning.contains("500"), "{warning}");
        assert!(warning.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{warning}");

        // Nothing listens at this address any more.
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let down = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let rig = Rig::new(script()).await;
        std::fs::write(rig.workspace.path().join("notes.txt"), "plans\n").unwrap();
        let seen = a_turn_exporting_to(&rig, &down, async || {}).await;
        // Metrics and traces both failed (at least at the end): one warning.
        let warnings = telemetry_warnings(&seen);
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        let warning = &warnings[0];
        assert!(warning.contains(&format!("{down}/v1/")), "{warning}");
        assert!(warning.to_lowercase().contains("connect"), "{warning}");
    });
}

#[test]
fn nothing_is_sent_when_no_endpoint_is_set_or_the_user_turned_it_off() {
    runtime().block_on(async {
        let collector = Collector::start(200).await;
        let endpoint = collector.url.clone();
        let vars = |with_endpoint: bool| {
            let endpoint = endpoint.clone();
            move |name: &str| match name {
                "OTEL_EXPORTER_OTLP_ENDPOINT" if with_endpoint => Some(endpoint.clone()),
                "OTEL_EXPORTER_OTLP_HEADERS" => Some("Authorization=Bearer x".to_string()),
                "OTEL_METRIC_EXPORT_INTERVAL" => Some("1000".to_string()),
                _ => None,
            }
        };
        let unset = TelemetryConfig::from_vars(&TelemetryFile::default(), vars(false));
        assert!(!unset.exports());
        let rig = Rig::new(script()).await;
        assert_eq!(one_turn_with_a_tool(&rig, unset).await, StopReason::EndTurn);

        // The user's `enabled = false` stands against a workspace's `true`.
        let rig = Rig::new(script()).await;
        let path = rig.home.path().join("config.toml");
        let user_config = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, user_config + "\n[telemetry]\nenabled = false\n").unwrap();
        std::fs::create_dir_all(rig.workspace.path().join(".axon")).unwrap();
        std::fs::write(
            rig.workspace.path().join(".axon/config.toml"),
            "[telemetry]\nenabled = true\n",
        )
        .unwrap();
        let config = rig.config();
        assert!(config.config.refused.iter().any(|r| r.contains("telemetry.enabled")));
        let off = TelemetryConfig::from_vars(&config.config.file.telemetry, vars(true));
        assert!(!off.exports());
        assert_eq!(one_turn_with_a_tool(&rig, off).await, StopReason::EndTurn);
        // Both sessions have ended (and with them any exporter that could
        // have been built, after its last export): nothing came.
        assert_eq!(collector.received().len(), 0);

        // The same variables with the endpoint reach this collector: the
        // silence above is not a collector that hears nothing.
        let rig = Rig::new(script()).await;
        let on = TelemetryConfig::from_vars(&TelemetryFile::default(), vars(true));
        assert!(on.exports());
        assert_eq!(one_turn_with_a_tool(&rig, on).await, StopReason::EndTurn);
        let seen = collector.wait_for(|seen| seen.iter().any(|r| r.path == "/v1/traces")).await;
        assert!(seen.iter().any(|r| r.authorization.as_deref() == Some("Bearer x")));
    });
}
