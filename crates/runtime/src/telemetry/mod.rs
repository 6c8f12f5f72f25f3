//! Usage and cost as OpenTelemetry metrics and traces over OTLP/HTTP
//! (protobuf), when the standard variables name an endpoint
//! (`config.rs`). The session's events are recorded by a watch on its
//! emitter (`record.rs`), so the TUI, `axon run`, ACP and the web panel
//! export the same way; the exporter sends through the workspace's reqwest
//! client (`http.rs`).
//!
//! Guarantees: with no endpoint nothing is built and nothing is sent; a
//! collector that is down, slow or failing never slows a turn (the SDK
//! exports from its own threads); its first failed export is one warning
//! event naming the endpoint, the error and the fix, and the rest are
//! dropped silently (the SDK's internal logs are compiled out);
//! [`Telemetry::shutdown`] exports what is left and returns within
//! [`SHUTDOWN_BOUND`] whatever the collector does.

mod config;
mod http;
mod probe;
mod record;

use std::sync::Arc;
use std::time::Duration;

use axon_llm::Prices;
use axon_protocol::AgentEvent;
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use config::{Destination, HEADER_VARIABLES, TelemetryConfig, TelemetryFile};
pub use probe::{PROBE_TIMEOUT, probe};

use record::{Instruments, Recorder};

/// The longest a session's end waits for the last export.
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

/// The longest one export may take (connection included).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(4);

/// A session's exporters and what records into them.
pub(crate) struct Telemetry {
    meters: Option<SdkMeterProvider>,
    tracers: Option<SdkTracerProvider>,
    recorder: Recorder,
}

impl Telemetry {
    /// The exporters `config` asks for, on the current tokio runtime;
    /// `Ok(None)` when it asks for none (nothing is built).
    /// `warn` hears the session's first failed export.
    pub(crate) fn start(
        config: &TelemetryConfig,
        prices: Prices,
        warn: http::Tell,
    ) -> Result<Option<Arc<Self>>, String> {
        if !config.exports() {
            return Ok(None);
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| "telemetry needs the session's tokio runtime".to_string())?;
        let client =
            http::TokioReqwest::new(runtime, EXPORT_TIMEOUT, http::FirstFailure::new(warn))?;
        let resource = resource(config);
        let meters = match &config.metrics {
            Some(to) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(to.url.clone())
                    .with_timeout(EXPORT_TIMEOUT)
                    .with_headers(to.headers.iter().cloned().collect())
                    .with_http_client(client.clone())
                    .build()
                    .map_err(|e| format!("metrics are not exported: {e}"))?;
                let reader =
                    PeriodicReader::builder(exporter).with_interval(config.metric_interval).build();
                Some(
                    SdkMeterProvider::builder()
                        .with_reader(reader)
                        .with_resource(resource.clone())
                        .build(),
                )
            }
            None => None,
        };
        let tracers = match &config.traces {
            Some(to) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(to.url.clone())
                    .with_timeout(EXPORT_TIMEOUT)
                    .with_headers(to.headers.iter().cloned().collect())
                    .with_http_client(client)
                    .build()
                    .map_err(|e| format!("traces are not exported: {e}"))?;
                Some(
                    SdkTracerProvider::builder()
                        .with_batch_exporter(exporter)
                        .with_resource(resource)
                        .build(),
                )
            }
            None => None,
        };
        let scope = env!("CARGO_PKG_VERSION");
        let instruments = meters.as_ref().map(|provider| {
            Instruments::new(&provider.meter_with_scope(
                opentelemetry::InstrumentationScope::builder("axon").with_version(scope).build(),
            ))
        });
        let tracer = tracers.as_ref().map(|provider| {
            provider.tracer_with_scope(
                opentelemetry::InstrumentationScope::builder("axon").with_version(scope).build(),
            )
        });
        Ok(Some(Arc::new(Telemetry {
            meters,
            tracers,
            recorder: Recorder::new(prices, instruments, tracer),
        })))
    }

    /// Records one of the session's events.
    pub(crate) fn on_event(&self, event: &AgentEvent) {
        self.recorder.on_event(event);
    }

    /// Ends what is open, exports what is left and stops the exporters,
    /// waiting at most [`SHUTDOWN_BOUND`]. The SDK's shutdown blocks its
    /// caller until the export threads are done, so each provider shuts
    /// down on a thread of its own, side by side (a slow trace export
    /// does not eat the metrics' time); a collector that never answers
    /// leaves the thread behind (the process's exit ends it) rather than
    /// holding the session's end.
    pub(crate) async fn shutdown(&self) {
        self.recorder.close();
        // Errors are dropped here: a failed export was told once, as a
        // warning, by the HTTP client itself.
        let mut waits = Vec::new();
        if let Some(tracers) = self.tracers.clone() {
            waits.extend(on_a_thread(move || {
                let _ = tracers.shutdown_with_timeout(SHUTDOWN_BOUND);
            }));
        }
        if let Some(meters) = self.meters.clone() {
            waits.extend(on_a_thread(move || {
                let _ = meters.shutdown_with_timeout(SHUTDOWN_BOUND);
            }));
        }
        let _ = tokio::time::timeout(SHUTDOWN_BOUND, futures_util::future::join_all(waits)).await;
    }
}

/// Runs `work` on a thread of its own; the receiver hears when it is
/// done. `None` when no thread could be started (nothing is waited for).
fn on_a_thread(work: impl FnOnce() + Send + 'static) -> Option<tokio::sync::oneshot::Receiver<()>> {
    let (done, finished) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("axon-telemetry-shutdown".into())
        .spawn(move || {
            work();
            let _ = done.send(());
        })
        .ok()
        .map(|_| finished)
}

/// `service.name`, axon's version, and `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(config: &TelemetryConfig) -> Resource {
    let mut attributes: Vec<KeyValue> = config
        .resource
        .iter()
        .filter(|(key, _)| key != "service.name")
        .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
        .collect();
    attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    Resource::builder_empty()
        .with_service_name(config.service_name.clone())
        .with_attributes(attributes)
        .build()
}
